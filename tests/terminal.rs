//! The operator at a terminal: confirmations before destructive commands (asked on a
//! terminal, `--yes` for scripts, refused without either), and the progress display —
//! one bar redrawn in place and cleared when done, one line per finished step — checked
//! on the screen a pseudo-terminal shows; off a terminal, plain lines only.

mod common;

use common::{connect, count, run_in_pty, screen, serial, FleetSetup, Function, SharedFleet};
use shardctl::sandbox::Sandbox;
use std::process::Command;
use std::time::Duration;

const USAGE: i32 = 2;

static FLEET: SharedFleet = SharedFleet::over(common::sandbox3, set_up);

/// Sets up the fleet once, on first use (see [`FLEET`]).
fn set_up(sb: &Sandbox) {
    FleetSetup::new()
        .schema(&[
            "CREATE DATABASE app",
            "CREATE TABLE app.t (id INT PRIMARY KEY, v VARCHAR(40), KEY (v))",
        ])
        .function(
            Function::range("f")
                .table("app.t", "id")
                .shards(&[("node1", "0"), ("node2", "1000000")]),
        )
        .rows(
            "node1",
            &["INSERT INTO app_1.t SELECT seq, MD5(seq) FROM app_1.seq_1_to_150000"],
        )
        .build(sb);
}

/// shardctl without `SHARDCTL_YES`, as an operator's shell runs it.
fn bare() -> Command {
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("shardctl"));
    cmd.env_remove("SHARDCTL_YES")
        .env_remove("SHARDCTL_CONFIG")
        .env("NO_COLOR", "1")
        .arg("--config")
        .arg(FLEET.inventory_path());
    cmd
}

fn operations() -> usize {
    let inv = common::inventory(FLEET.sandbox());
    shardctl::directory::Directory::open(&inv)
        .unwrap()
        .operations(None)
        .unwrap()
        .len()
}

fn home_of_shard_1() -> String {
    let inv = common::inventory(FLEET.sandbox());
    let snap = shardctl::directory::Directory::open(&inv)
        .unwrap()
        .load()
        .unwrap();
    snap.shard(1).unwrap().node.clone()
}

#[test]
fn destructive_commands_refuse_without_a_terminal_or_yes_and_change_nothing() {
    FLEET.sandbox();
    let _s = serial();
    let before = operations();
    let home = home_of_shard_1();
    let to = if home == "node2" { "node3" } else { "node2" };
    let refusals: Vec<Vec<&str>> = vec![
        vec!["move", "--shard", "1", "--to", to],
        vec!["split", "--shard", "1", "--to", to, "--at", "500"],
        vec!["prune", "--shard", "1"],
        vec!["drop-source", "--shard", "1", "--node", to],
        vec!["abort", "1"],
    ];
    for args in &refusals {
        let out = bare()
            .args(args)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(USAGE), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: one line: {err}");
        assert!(
            err.contains("nothing was done") && err.contains("--yes"),
            "{args:?}: {err}"
        );
    }
    // A dry run and a check need no confirmation.
    for extra in ["--dry-run", "--check"] {
        let out = bare()
            .args(["move", "--shard", "1", "--to", to, extra])
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        assert!(out.status.success(), "{extra}: {out:?}");
    }
    assert_eq!(operations(), before, "nothing was journaled");
    assert_eq!(home_of_shard_1(), home);
    assert_eq!(
        count(
            &mut connect(FLEET.sandbox(), &home),
            "SELECT COUNT(*) FROM app_1.t"
        ),
        150_000
    );
}

#[test]
fn a_terminal_is_asked_and_no_leaves_everything_as_it_was() {
    FLEET.sandbox();
    let _s = serial();
    let before = operations();
    let home = home_of_shard_1();
    let to = if home == "node2" { "node3" } else { "node2" };
    let mut cmd = bare();
    cmd.args(["move", "--shard", "1", "--to", to]);
    let (status, bytes) = run_in_pty(cmd, Some(("[y/N] ", b"n\n")), Duration::from_secs(60));
    let shown = screen(&bytes).join("\n");
    assert_eq!(status.code(), Some(USAGE), "{shown}");
    assert!(
        shown.contains(&format!("this will move shard 1 to {to}"))
            && shown.contains("Continue? [y/N] n")
            && shown.contains("not confirmed: nothing was done"),
        "{shown}"
    );
    assert_eq!(operations(), before);
    assert_eq!(home_of_shard_1(), home);
}

#[test]
fn a_move_on_a_terminal_shows_one_bar_redrawn_in_place_and_one_line_per_step() {
    FLEET.sandbox();
    let _s = serial();
    let home = home_of_shard_1();
    let to = if home == "node2" { "node3" } else { "node2" };
    let mut cmd = bare();
    cmd.args(["move", "--shard", "1", "--to", to]);
    let (status, bytes) = run_in_pty(cmd, Some(("[y/N] ", b"y\n")), Duration::from_secs(300));
    let final_screen = screen(&bytes);
    let shown = final_screen.join("\n");
    assert!(status.success(), "{shown}");
    assert_eq!(home_of_shard_1(), to);
    // While it ran, the bar was drawn and redrawn: the copy's counters and rate appeared,
    // and the terminal was told to erase and rewrite the bar's line.
    let raw = String::from_utf8_lossy(&bytes);
    assert!(
        raw.contains(" rows ") && raw.contains("/s"),
        "no copy counters: {raw:?}"
    );
    let redraws = raw.matches("\x1b[2K").count() + raw.matches("\r\x1b[K").count();
    assert!(redraws >= 5, "the bar was not redrawn in place: {raw:?}");
    // What stays on the screen: the question, one line per finished step, the result; the
    // bar is gone.
    let steps: Vec<&String> = final_screen
        .iter()
        .filter(|l| l.starts_with("op ") && l.contains(" done in "))
        .collect();
    assert_eq!(steps.len(), 14, "one line per step: {shown}");
    for (i, line) in steps.iter().enumerate() {
        assert!(
            line.contains(&format!("step {:>2} ", i + 1)),
            "step lines in order: {shown}"
        );
    }
    let others: Vec<&String> = final_screen
        .iter()
        .filter(|l| !l.is_empty())
        .filter(|l| !(l.starts_with("op ") && l.contains(" done in ")))
        .filter(|l| !l.starts_with("shardctl: this will move") && !l.starts_with("Continue?"))
        .collect();
    assert_eq!(others.len(), 1, "a bar or a stray line was left: {shown}");
    assert!(
        others[0].starts_with(&format!("shard 1 moved to {to}")),
        "{shown}"
    );

    // Off a terminal: the same lines, no bar, no escape sequence, no carriage return.
    let back = home;
    let out = bare()
        .args(["--yes", "move", "--shard", "1", "--to", &back])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains('\x1b') && !err.contains('\r'), "{err:?}");
    assert_eq!(
        err.lines().filter(|l| l.contains(" done in ")).count(),
        14,
        "{err}"
    );
    assert_eq!(err.lines().count(), 14, "{err}");
}
