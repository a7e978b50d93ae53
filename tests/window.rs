//! The revert window's end when the new node is gone (issue 26): neither the window's
//! expiry nor `finalize` drops the old copy — then the only one — unless the new node
//! answers and holds the shard; the window stays open and the journal says why, and once
//! the node is back the window ends as usual. `shardctl extend` moves a window's end.

mod common;

use common::{cli_on, connect, count, wait_exit, FleetSetup, Function};
use shardctl::config::Inventory;
use shardctl::directory::journal::OperationRecord;
use shardctl::directory::Directory;
use shardctl::sandbox::{Sandbox, SandboxBuilder};
use std::process::Child;
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

const USAGE: i32 = 2;
const ROWS: i64 = 5_000;

/// The fleet: the directory and the template schema `app` on node1, shard 1 on node2 (so node3, its new node, can die
/// without taking the directory along).
fn fleet() -> MutexGuard<'static, Sandbox> {
    static SB: OnceLock<Mutex<Sandbox>> = OnceLock::new();
    SB.get_or_init(|| {
        let sb = SandboxBuilder::for_tests(3).unwrap().start().unwrap();
        FleetSetup::new()
            .schema(&[
                "CREATE DATABASE app",
                "CREATE TABLE app.items (k BIGINT NOT NULL PRIMARY KEY, note VARCHAR(40) NULL)",
            ])
            .function(
                Function::range("f")
                    .table("app.items", "k")
                    .shards(&[("node2", "0"), ("node1", "100000")]),
            )
            .rows(
                "node2",
                &[format!(
                    "INSERT INTO app_1.items (k, note) SELECT seq, 'x' FROM app_1.seq_1_to_{ROWS}"
                )],
            )
            .build(&sb);
        Mutex::new(sb)
    })
    .lock()
    .unwrap_or_else(|p| p.into_inner())
}

/// Shard `id` in a `status` document.
fn shard_report(status: &serde_json::Value, id: u32) -> serde_json::Value {
    status["shards"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["shard"] == id)
        .cloned()
        .unwrap_or_else(|| panic!("no shard {id}: {status}"))
}

fn inventory(sb: &Sandbox) -> Inventory {
    common::inventory(sb)
}

fn home_of(sb: &Sandbox, shard: u32) -> String {
    Directory::open(&inventory(sb))
        .unwrap()
        .load()
        .unwrap()
        .shard(shard)
        .unwrap()
        .node
        .clone()
}

fn op_record(sb: &Sandbox, op: u64) -> OperationRecord {
    Directory::open(&inventory(sb))
        .unwrap()
        .operation(op)
        .unwrap()
}

/// The revert-window step's outputs (the move's state) as journaled now.
fn window_state(sb: &Sandbox, op: u64) -> serde_json::Value {
    op_record(sb, op)
        .steps
        .into_iter()
        .find(|s| s.name == "revert-window")
        .map(|s| s.outputs)
        .unwrap_or_default()
}

/// Waits until the newest operation runs its revert-window step.
fn until_window(sb: &Sandbox, within: Duration, dir: &std::path::Path) -> u64 {
    let deadline = Instant::now() + within;
    loop {
        if let Some(op) = common::newest_op(&inventory(sb)) {
            let next = op.steps.iter().find(|s| s.state.as_sql() != "done");
            if op.state.as_sql() == "running"
                && next.is_some_and(|s| s.name == "revert-window" && s.state.as_sql() == "running")
            {
                return op.id;
            }
        }
        assert!(
            Instant::now() < deadline,
            "never reached the window: {}",
            stderr_of(dir)
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn stderr_of(dir: &std::path::Path) -> String {
    let mut errs = String::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        if e.path().extension().is_some_and(|x| x == "err") {
            errs.push_str(&std::fs::read_to_string(e.path()).unwrap_or_default());
        }
    }
    errs
}

fn spawn(sb: &Sandbox, args: &[&str], dir: &std::path::Path, name: &str) -> Child {
    common::spawn_shardctl(&sb.inventory_path(), args, None, dir, name)
}

/// Rows of `schema.items` on `node`.
fn rows(sb: &Sandbox, node: &str, schema: &str) -> i64 {
    count(
        &mut connect(sb, node),
        &format!("SELECT COUNT(*) FROM `{schema}`.items"),
    )
}

/// True when node2 runs the reverse channel of a window.
fn reverse_channel_runs(sb: &Sandbox) -> bool {
    let mut s = connect(sb, "node2");
    s.rows(&shardctl::server::Stmt::text("SHOW ALL SLAVES STATUS"))
        .unwrap()
        .iter()
        .any(|r| {
            r.get::<String, _>("Connection_name")
                .is_some_and(|c| c.ends_with("_back"))
                && r.get::<String, _>("Slave_SQL_Running").as_deref() == Some("Yes")
        })
}

/// `move --shard 1 --to node3 --revert-window WINDOW` in the background, once it runs its
/// revert-window step: the child and the operation's id.
fn move_into_window(sb: &Sandbox, window: &str, dir: &std::path::Path) -> (Child, u64) {
    let args = [
        "move",
        "--shard",
        "1",
        "--to",
        "node3",
        "--revert-window",
        window,
    ];
    let child = spawn(sb, &args, dir, "move");
    (child, until_window(sb, Duration::from_secs(120), dir))
}

/// Waits (60 s at most) until the window's reverse channel runs on the old node.
fn until_reverse_channel_runs(sb: &Sandbox, dir: &std::path::Path) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !reverse_channel_runs(sb) {
        assert!(Instant::now() < deadline, "{}", stderr_of(dir));
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The new node dies during the window; the window's end (and a `finalize` asked for
/// meanwhile) passes; the old copy stays on the old node with every row and the journal
/// says why; the node comes back and the window ends by itself, the move standing. On the
/// old code the expiry dropped the old copy while the new node was down.
#[test]
fn the_windows_end_keeps_the_old_copy_while_the_new_node_is_down() {
    let mut sb = fleet();
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(home_of(&sb, 1), "node2");
    let (mut run, op) = move_into_window(&sb, "8s", dir.path());
    let trash = common::op_names(&inventory(&sb), op)
        .trash_schema(op, 0)
        .to_string();
    assert_eq!(
        rows(&sb, "node2", &trash),
        ROWS,
        "the old copy is kept current"
    );
    // The reverse channel runs (the window read node3's settings to open it) before
    // node3 dies.
    until_reverse_channel_runs(&sb, dir.path());
    sb.kill_node("node3").unwrap();

    // The window's end passes while node3 is down: the owner keeps waiting.
    let deadline = Instant::now() + Duration::from_secs(60);
    let held = loop {
        if let Some(why) = window_state(&sb, op)["window_held"].as_str() {
            break why.to_string();
        }
        assert!(
            run.try_wait().unwrap().is_none(),
            "the owner ended with node3 down: {}",
            stderr_of(dir.path())
        );
        assert!(
            Instant::now() < deadline,
            "never held: {}",
            stderr_of(dir.path())
        );
        std::thread::sleep(Duration::from_millis(300));
    };
    assert!(held.contains("node3"), "{held}");
    // `status` shows the hold and why, in its JSON and its table (it also reports node3
    // down, so it fails; its document comes first).
    let out = cli_on(&sb.inventory_path(), &[])
        .args(["--output", "json", "status"])
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
    let window = &shard_report(&doc, 1)["revert_window"];
    assert_eq!(window["op"], op, "{doc}");
    assert!(window["ends_at"].is_string(), "{doc}");
    assert!(
        window["held"]
            .as_str()
            .is_some_and(|why| why.contains("node3 does not answer")),
        "{doc}"
    );
    let out = cli_on(&sb.inventory_path(), &[])
        .arg("status")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.lines().any(|l| l.starts_with(&format!(
            "shard 1: move #{op} revert window HELD past its end"
        )) && l.contains("node3 does not answer")),
        "{text}"
    );
    cli_on(&sb.inventory_path(), &[])
        .args(["finalize", &op.to_string()])
        .assert()
        .success();
    std::thread::sleep(Duration::from_secs(6));
    assert!(
        run.try_wait().unwrap().is_none(),
        "{}",
        stderr_of(dir.path())
    );
    assert_eq!(rows(&sb, "node2", &trash), ROWS, "the old copy survives");
    assert_eq!(home_of(&sb, 1), "node3");
    let out = cli_on(&sb.inventory_path(), &[])
        .args(["--output", "json", "ops", &op.to_string()])
        .assert()
        .success();
    let doc: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let said = doc.to_string();
    assert!(said.contains("window_held"), "{said}");
    assert!(said.contains("does not answer"), "{said}");
    assert!(
        stderr_of(dir.path()).contains("keeps the old copy"),
        "{}",
        stderr_of(dir.path())
    );

    // node3 is back: the window, past its end, closes by itself and the move stands.
    sb.restart_node("node3").unwrap();
    let status = wait_exit(&mut run, Duration::from_secs(120));
    assert!(status.success(), "{}", stderr_of(dir.path()));
    assert_eq!(home_of(&sb, 1), "node3");
    assert_eq!(rows(&sb, "node3", "app_1"), ROWS);
    let mut n2 = connect(&sb, "node2");
    assert_eq!(
        count(
            &mut n2,
            &format!(
                "SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name = '{trash}'"
            )
        ),
        0,
        "the old copy went once node3 held the shard"
    );
    assert!(window_state(&sb, op)["window_held"].is_null());

    // Back to node2 for the next test.
    cli_on(&sb.inventory_path(), &[])
        .args(["move", "--shard", "1", "--to", "node2", "--yes"])
        .assert()
        .success();
}

/// `extend` moves the window's end (the owner journals the new one); refused with one
/// line outside a window and with a zero length. On the old code there is no `extend`.
#[test]
fn extend_moves_the_windows_end() {
    let sb = fleet();
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(home_of(&sb, 1), "node2");
    let (mut run, op) = move_into_window(&sb, "20s", dir.path());
    let deadline = Instant::now() + Duration::from_secs(30);
    let until = loop {
        if let Some(u) = window_state(&sb, op)["revert_until_unix"].as_i64() {
            break u;
        }
        assert!(Instant::now() < deadline);
        std::thread::sleep(Duration::from_millis(200));
    };
    let out = cli_on(&sb.inventory_path(), &[])
        .args(["extend", &op.to_string(), "--by", "1h"])
        .assert()
        .success();
    assert!(
        String::from_utf8_lossy(&out.get_output().stdout).contains("extend requested"),
        "{out:?}"
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    while window_state(&sb, op)["revert_until_unix"].as_i64() != Some(until + 3600) {
        assert!(
            Instant::now() < deadline,
            "the end never moved: {}",
            window_state(&sb, op)
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    // `--until` sets the end itself (RFC 3339 or Unix seconds), later only.
    let later = until + 7200;
    cli_on(&sb.inventory_path(), &[])
        .args([
            "extend",
            &op.to_string(),
            "--until",
            &shardctl::clock::rfc3339_millis(later * 1000),
        ])
        .assert()
        .success();
    let deadline = Instant::now() + Duration::from_secs(30);
    while window_state(&sb, op)["revert_until_unix"].as_i64() != Some(later) {
        assert!(
            Instant::now() < deadline,
            "--until never moved the end: {}",
            window_state(&sb, op)
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let status = cli_on(&sb.inventory_path(), &[])
        .args(["--output", "json", "status"])
        .assert()
        .success();
    let doc: serde_json::Value = serde_json::from_slice(&status.get_output().stdout).unwrap();
    let window = &shard_report(&doc, 1)["revert_window"];
    assert_eq!(window["op"], op, "{doc}");
    assert_eq!(
        window["ends_at"],
        shardctl::clock::rfc3339_millis(later * 1000),
        "{doc}"
    );
    assert!(window["held"].is_null(), "{doc}");
    for (earlier, needle) in [
        ((later - 60).to_string(), "not later than"),
        ("2026-13-01T00:00:00Z".to_string(), "not an RFC 3339 time"),
    ] {
        let out = cli_on(&sb.inventory_path(), &[])
            .args(["extend", &op.to_string(), "--until", &earlier])
            .assert()
            .code(USAGE);
        let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
        assert!(err.contains(needle), "{earlier}: {err}");
        assert_eq!(
            err.lines()
                .filter(|l| !l.is_empty() && !l.starts_with("For more information"))
                .count(),
            1,
            "{err}"
        );
    }
    assert_eq!(
        window_state(&sb, op)["revert_until_unix"].as_i64(),
        Some(later),
        "a refused extend changed nothing"
    );

    // Past the window's first end, the move still waits.
    std::thread::sleep(Duration::from_secs(
        (until - shardctl::clock::unix_secs() + 3).max(0) as u64,
    ));
    assert!(
        run.try_wait().unwrap().is_none(),
        "{}",
        stderr_of(dir.path())
    );

    let out = cli_on(&sb.inventory_path(), &[])
        .args(["extend", &op.to_string(), "--by", "0s"])
        .assert()
        .code(USAGE);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        err.contains("an extension must last more than 0 s"),
        "{err}"
    );

    cli_on(&sb.inventory_path(), &[])
        .args(["finalize", &op.to_string()])
        .assert()
        .success();
    let status = wait_exit(&mut run, Duration::from_secs(60));
    assert!(status.success(), "{}", stderr_of(dir.path()));
    // Finished: nothing to extend, one line.
    let out = cli_on(&sb.inventory_path(), &[])
        .args(["extend", &op.to_string(), "--by", "1h"])
        .assert()
        .code(USAGE);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("revert window is closed"), "{err}");

    cli_on(&sb.inventory_path(), &[])
        .args(["move", "--shard", "1", "--to", "node2", "--yes"])
        .assert()
        .success();
}

/// The owner dies in the window and its new node too; `resume` after the window's end
/// keeps the old copy and waits (it dropped it at once on the old code); `extend` while it
/// is held, the node back, and `revert` returns the shard to its old node with every row.
#[test]
fn resume_after_the_windows_end_keeps_the_old_copy_and_can_revert() {
    let mut sb = fleet();
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(home_of(&sb, 1), "node2");
    let (mut first, op) = move_into_window(&sb, "8s", dir.path());
    let trash = common::op_names(&inventory(&sb), op)
        .trash_schema(op, 0)
        .to_string();
    until_reverse_channel_runs(&sb, dir.path());
    first.kill().unwrap();
    first.wait().unwrap();
    sb.kill_node("node3").unwrap();
    std::thread::sleep(Duration::from_secs(9));

    let mut resumed = spawn(&sb, &["resume", &op.to_string()], dir.path(), "resume");
    let deadline = Instant::now() + Duration::from_secs(90);
    while window_state(&sb, op)["window_held"].is_null() {
        assert!(
            resumed.try_wait().unwrap().is_none(),
            "resume ended with node3 down: {}",
            stderr_of(dir.path())
        );
        assert!(
            Instant::now() < deadline,
            "never held: {}",
            stderr_of(dir.path())
        );
        std::thread::sleep(Duration::from_millis(300));
    }
    assert_eq!(rows(&sb, "node2", &trash), ROWS, "the old copy survives");

    cli_on(&sb.inventory_path(), &[])
        .args(["extend", &op.to_string(), "--by", "1h"])
        .assert()
        .success();
    let deadline = Instant::now() + Duration::from_secs(30);
    while window_state(&sb, op)["revert_until_unix"]
        .as_i64()
        .is_none_or(|u| u < shardctl::clock::unix_secs() + 3000)
    {
        assert!(Instant::now() < deadline, "{}", stderr_of(dir.path()));
        std::thread::sleep(Duration::from_millis(200));
    }
    sb.restart_node("node3").unwrap();
    std::thread::sleep(Duration::from_secs(4));
    assert!(
        resumed.try_wait().unwrap().is_none(),
        "the extended window stays open: {}",
        stderr_of(dir.path())
    );
    cli_on(&sb.inventory_path(), &[])
        .args(["revert", &op.to_string()])
        .assert()
        .success();
    let status = wait_exit(&mut resumed, Duration::from_secs(180));
    assert!(status.success(), "{}", stderr_of(dir.path()));
    assert_eq!(home_of(&sb, 1), "node2");
    assert_eq!(rows(&sb, "node2", "app_1"), ROWS);
    assert!(window_state(&sb, op)["window_held"].is_null());
}
