//! Bad input to the operations, on one real sandbox: each case is refused with its
//! documented exit code and one line naming the culprit, and changes nothing — the
//! directory's version and the journal's operations are as before, and so are the servers
//! where the case could touch them. `docs/SAFETY.md` ("Bad input") lists every case.

mod common;

use common::{
    connect, count, exec, exec_unlogged, inventory, sandbox3, serial, shardctl, write_file,
    FleetSetup, Function, SharedFleet,
};
use predicates::prelude::*;
use shardctl::directory::Directory;
use shardctl::sandbox::Sandbox;
use std::sync::OnceLock;

const USAGE: i32 = 2;
const CONFIG: i32 = 3;
const SERVER: i32 = 4;
const REFUSED: i32 = 5;

// The tests hold `serial()`: one case at a time: a case that changes the directory on
// purpose (the replan) must not run while another checks that nothing changed.

/// The fleet: `app.t` sharded by range over shards 1, 2, 3 on node1 and 4 on node3 (whose
/// schema is then dropped by hand, so its move fails the preflight).
static FLEET: SharedFleet = SharedFleet::over(sandbox3, set_up);

/// Sets up the fleet once, on first use (see [`FLEET`]).
fn set_up(sb: &Sandbox) {
    FleetSetup::new()
        .schema(&[
            "CREATE DATABASE app",
            "CREATE TABLE app.t (id INT PRIMARY KEY, v INT)",
        ])
        .function(Function::range("f").table("app.t", "id").shards(&[
            ("node1", "0"),
            ("node1", "1000"),
            ("node1", "2000"),
            ("node3", "3000"),
        ]))
        .rows(
            "node1",
            &["INSERT INTO app_1.t SELECT seq, 1 FROM app_1.seq_1_to_50"],
        )
        .build(sb);
    exec_unlogged(&mut connect(sb, "node3"), &["DROP DATABASE app_4"]);
}

/// What a refused command must leave as it was: the directory version and the number of
/// operations in the journal.
fn state() -> (u64, i64) {
    let inv = inventory(sandbox3());
    let version = Directory::open(&inv).unwrap().version().unwrap();
    let ops = count(
        &mut connect(sandbox3(), "node1"),
        "SELECT COUNT(*) FROM shardctl.operations",
    );
    (version, ops)
}

/// One bad input: a name for the failure messages, the command line and environment, and
/// what the refusal must be: exit `code`, one line on stderr holding every word of `says`.
struct Case<'a> {
    name: String,
    args: Vec<&'a str>,
    env: &'a [(&'a str, &'a str)],
    code: i32,
    says: Vec<&'a str>,
}

impl<'a> Case<'a> {
    fn new(name: &str, args: &[&'a str], code: i32, says: &[&'a str]) -> Self {
        Self {
            name: name.into(),
            args: args.to_vec(),
            env: &[],
            code,
            says: says.to_vec(),
        }
    }

    /// The same case with `SHARDCTL_FAULT` and the like set.
    fn env(self, env: &'a [(&'a str, &'a str)]) -> Self {
        Self { env, ..self }
    }

    /// The same case with `extra` appended to its command line (`--check`, `--dry-run`).
    fn with(&self, extra: &'a str) -> Self {
        let mut args = self.args.clone();
        args.push(extra);
        Self {
            name: format!("{}, {extra}", self.name),
            args,
            env: self.env,
            code: self.code,
            says: self.says.clone(),
        }
    }
}

/// Runs the case's `shardctl --config <fleet> ARGS` with its environment and checks: its
/// exit code, stderr one line holding every word it says, nothing changed. Failures name
/// the case and its command line.
fn refused_case(case: &Case) {
    let Case {
        name,
        args,
        env,
        code,
        says: words,
    } = case;
    let (code, args) = (*code, args.as_slice());
    let inv = &FLEET.inventory_path();
    let before = state();
    let mut cmd = shardctl();
    cmd.arg("--config").arg(inv).args(args);
    for (k, v) in env.iter() {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(
        out.status.code(),
        Some(code),
        "{name} {args:?}: exit code; stderr: {stderr}"
    );
    let line = stderr.trim_end();
    // clap's own errors add a usage block; ours are one line.
    let first = if code == USAGE && line.starts_with("error:") {
        line.lines().next().unwrap_or_default()
    } else {
        assert!(
            !line.contains('\n'),
            "{name} {args:?}: more than one line: {stderr}"
        );
        line
    };
    for w in words {
        assert!(first.contains(w), "{name} {args:?}: {w:?} not in {first:?}");
    }
    for bad in ["DriverError", "Some(", "MySqlError {", "IoError {"] {
        assert!(
            !first.contains(bad),
            "{name} {args:?}: debug formatting: {first}"
        );
    }
    assert_eq!(
        state(),
        before,
        "{name} {args:?} changed the directory or the journal"
    );
}

fn dir() -> &'static tempfile::TempDir {
    static D: OnceLock<tempfile::TempDir> = OnceLock::new();
    D.get_or_init(|| tempfile::tempdir().unwrap())
}

/// The default move playbook with `from` replaced by `to`, written to a file.
fn move_playbook(name: &str, from: &str, to: &str) -> String {
    let text = shardctl::playbook::MOVE_PLAYBOOK.replace(from, to);
    assert_ne!(text, shardctl::playbook::MOVE_PLAYBOOK, "{from}");
    write_file(dir().path(), name, &text)
        .to_string_lossy()
        .into_owned()
}

/// The default move playbook without the step `step` and its parameters, written to a file.
fn without(name: &str, step: &str) -> String {
    let mut skipping = false;
    let mut text = String::new();
    for l in shardctl::playbook::MOVE_PLAYBOOK.lines() {
        if l.starts_with("  - step: ") {
            skipping = l.split_whitespace().nth(2) == Some(step);
        }
        if !skipping {
            text.push_str(l);
            text.push('\n');
        }
    }
    assert_ne!(text, shardctl::playbook::MOVE_PLAYBOOK, "{step}");
    write_file(dir().path(), name, &text)
        .to_string_lossy()
        .into_owned()
}

#[test]
fn playbooks_that_drop_a_guarantee_are_refused_naming_the_step() {
    let _g = serial();
    FLEET.sandbox();
    let playbooks = [
        (
            "no drop-source",
            without("no-drop.yaml", "drop-source"),
            &["no-drop.yaml", "no drop-source step", "writable"][..],
        ),
        (
            "no verify",
            without("no-verify.yaml", "verify"),
            &["no-verify.yaml", "no verify step"],
        ),
        (
            "no confirm",
            without("no-confirm.yaml", "confirm"),
            &["no confirm step"],
        ),
        (
            "no final wait",
            move_playbook(
                "no-final.yaml",
                "    until: final\n",
                "    lag_below_secs: 1\n",
            ),
            &["no final wait"],
        ),
        (
            "a field of the wrong type",
            move_playbook("type.yaml", "timeout_secs: 10", "timeout_secs: soon"),
            &["type.yaml:", "steps[7].lock.timeout_secs: invalid type"],
        ),
        (
            "an unknown step",
            move_playbook("step.yaml", "step: verify", "step: verfy"),
            &["steps[6].step: ", "verfy"],
        ),
    ];
    for (name, playbook, says) in &playbooks {
        let case = Case::new(
            name,
            &[
                "move",
                "--shard",
                "1",
                "--to",
                "node2",
                "--playbook",
                playbook,
            ],
            CONFIG,
            says,
        );
        refused_case(&case);
        refused_case(&case.with("--check"));
    }
}

#[test]
fn a_move_or_split_refused_at_preflight_leaves_no_operation() {
    let _g = serial();
    FLEET.sandbox();
    // The shard's schema is missing on its node: --check and the real run refuse alike.
    let case = Case::new(
        "the source's schema is missing",
        &["move", "--shard", "4", "--to", "node2"],
        REFUSED,
        &["the source node3 has no schema app_4"],
    );
    refused_case(&case);
    refused_case(&case.with("--check"));
    // The target already has the shard's schema.
    let mut n2 = connect(sandbox3(), "node2");
    exec_unlogged(&mut n2, &["CREATE DATABASE app_1"]);
    let case = Case::new(
        "the target holds the shard's schema",
        &["move", "--shard", "1", "--to", "node2"],
        REFUSED,
        &["the target node2 already has a schema app_1"],
    );
    refused_case(&case);
    refused_case(&case.with("--check"));
    exec_unlogged(&mut n2, &["DROP DATABASE app_1"]);
    // A target sharing the source's GTID domain with gtid_ignore_duplicates is no risk for
    // a channel started at a file and offset (the setting applies to GTID positioning
    // only): no refusal. The refusal for a strict target that logs what it applies is a
    // unit test (replication::gtid_tests), as log_slave_updates cannot change at run time.
    let mut n1 = connect(sandbox3(), "node1");
    let domain: i64 = n1
        .first(&shardctl::server::Stmt::text(
            "SELECT @@GLOBAL.gtid_domain_id",
        ))
        .unwrap()
        .unwrap();
    let own: i64 = n2
        .first(&shardctl::server::Stmt::text(
            "SELECT @@GLOBAL.gtid_domain_id",
        ))
        .unwrap()
        .unwrap();
    exec(
        &mut n2,
        &[
            &format!("SET GLOBAL gtid_domain_id = {domain}"),
            "SET GLOBAL gtid_ignore_duplicates = ON",
            "SET GLOBAL gtid_strict_mode = ON",
        ],
    );
    let checked = shardctl()
        .arg("--config")
        .arg(FLEET.inventory_path())
        .args(["move", "--shard", "1", "--to", "node2", "--check"])
        .output();
    exec(
        &mut n2,
        &[
            "SET GLOBAL gtid_ignore_duplicates = OFF",
            "SET GLOBAL gtid_strict_mode = OFF",
            &format!("SET GLOBAL gtid_domain_id = {own}"),
        ],
    );
    let checked = checked.unwrap();
    assert!(
        checked.status.success(),
        "{}",
        String::from_utf8_lossy(&checked.stderr)
    );
    // A split whose playbook copies with the dump tools (which keep schema names).
    let pb = shardctl::playbook::SPLIT_PLAYBOOK.replace("method: native", "method: dump");
    let pb = write_file(dir().path(), "split-dump.yaml", &pb);
    let case = Case::new(
        "a split copied by the dump tools",
        &[
            "split",
            "--shard",
            "1",
            "--to",
            "node2",
            "--at",
            "20",
            "--playbook",
            pb.to_str().unwrap(),
        ],
        REFUSED,
        &["dump method cannot", "method: native"],
    );
    refused_case(&case);
    refused_case(&case.with("--check"));
    assert!(!connect(sandbox3(), "node2")
        .schema_exists(&shardctl::ident::Ident::new("schema", "app_5").unwrap())
        .unwrap());
}

#[test]
fn rebalance_plans_that_do_not_fit_the_directory_are_refused() {
    let _g = serial();
    FLEET.sandbox();
    let version = state().0;
    let plan = |name: &str, moves: &str| {
        let text = format!("directory_version: {version}\nby: count\nmoves:\n{moves}");
        write_file(dir().path(), name, &text)
            .to_string_lossy()
            .into_owned()
    };
    let m = |shard: u32, from: &str, to: &str| {
        format!("- step: move\n  shard: {shard}\n  from: {from}\n  to: {to}\n  weight: 1\n")
    };
    let (from, twice, own, shard, node) = (
        plan("from.yaml", &m(1, "node2", "node3")),
        plan(
            "twice.yaml",
            &(m(1, "node1", "node2") + &m(1, "node1", "node3")),
        ),
        plan("own.yaml", &m(2, "node1", "node1")),
        plan("shard.yaml", &m(99, "node1", "node2")),
        plan("node.yaml", &m(1, "node1", "node9")),
    );
    let plans = [
        Case::new(
            "from a node the shard is not on",
            &["rebalance", "apply", &from],
            REFUSED,
            &["moves[0]: ", "shard 1 from node2, but it lives on node1"],
        ),
        Case::new(
            "a shard moved twice",
            &["rebalance", "apply", &twice],
            REFUSED,
            &["moves[1]: ", "shard 1 more than once (also moves[0])"],
        ),
        Case::new(
            "a shard moved onto its own node",
            &["rebalance", "apply", &own],
            REFUSED,
            &["moves[0]: ", "onto its own node node1"],
        ),
        Case::new(
            "an unknown shard",
            &["rebalance", "apply", &shard],
            CONFIG,
            &["shard.yaml: moves[0].shard: unknown shard 99"],
        ),
        Case::new(
            "an unknown node",
            &["rebalance", "apply", &node],
            CONFIG,
            &["node.yaml: moves[0].to: unknown node \"node9\""],
        ),
    ];
    for case in &plans {
        refused_case(case);
        refused_case(&case.with("--dry-run"));
    }
    for case in [
        Case::new(
            "--parallel 0",
            &["rebalance", "apply", "x.yaml", "--parallel", "0"],
            USAGE,
            &["--parallel", "at least 1"],
        ),
        Case::new(
            "--max-moves 0",
            &["rebalance", "plan", "--max-moves", "0"],
            USAGE,
            &["--max-moves", "at least 1"],
        ),
    ] {
        refused_case(&case);
    }
}

#[test]
fn replan_keeps_the_plans_limits_and_prints_the_new_plan() {
    let _g = serial();
    let inv = &FLEET.inventory_path();
    let cli = |args: &[&str]| shardctl().arg("--config").arg(inv).args(args).assert();
    let file = dir().path().join("limited.yaml");
    let f = file.to_str().unwrap();
    // Every shard of node1 excluded: nothing to move under these limits ...
    cli(&[
        "rebalance",
        "plan",
        "--by",
        "count",
        "--max-moves",
        "1",
        "--exclude-shard",
        "1",
        "--exclude-shard",
        "2",
        "--exclude-shard",
        "3",
        "--out",
        f,
    ])
    .success();
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        text.contains("max_moves: 1") && text.contains("exclude_shard"),
        "{text}"
    );
    // ... while the default limits would move some.
    let out = cli(&["--output", "json", "rebalance", "plan", "--by", "count"])
        .success()
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert!(!v["plan"]["moves"].as_array().unwrap().is_empty(), "{v}");
    // The directory changes; --replan plans again under the recorded limits.
    cli(&[
        "function",
        "add",
        "replan_bump",
        "--type",
        "hash",
        "--key",
        "int",
    ])
    .success();
    let before = state();
    cli(&["rebalance", "apply", f, "--replan"])
        .success()
        .stderr(
            predicate::str::contains("max moves 1")
                .and(predicate::str::contains("excluded shards 1 2 3"))
                .and(predicate::str::contains("): 0 moves")),
        );
    assert_eq!(state(), before, "nothing was moved");
    // A plan without recorded limits cannot be planned again.
    let old = text
        .lines()
        .take_while(|l| !l.starts_with("limits:"))
        .map(|l| format!("{l}\n"))
        .collect::<String>();
    let old = write_file(dir().path(), "old.yaml", &old);
    refused_case(&Case::new(
        "a replan without recorded limits",
        &["rebalance", "apply", old.to_str().unwrap(), "--replan"],
        CONFIG,
        &["old.yaml", "records no limits"],
    ));
}

#[test]
fn limits_of_zero_and_unknown_fault_points_are_refused() {
    let _g = serial();
    FLEET.sandbox();
    for case in [
        Case::new(
            "prune --chunk-ms 0",
            &["prune", "--shard", "1", "--chunk-ms", "0"],
            USAGE,
            &["--chunk-ms"],
        ),
        Case::new(
            "prune --max-threads-running 0",
            &["prune", "--shard", "1", "--max-threads-running", "0"],
            USAGE,
            &["--max-threads-running"],
        ),
        Case::new(
            "prune --throttle-timeout 0",
            &["prune", "--shard", "1", "--throttle-timeout", "0"],
            USAGE,
            &["--throttle-timeout"],
        ),
        Case::new(
            "workload --rate 0",
            &["workload", "--function", "f", "--rate", "0"],
            USAGE,
            &["--rate"],
        ),
        Case::new(
            "rebalance plan --threshold -0.5",
            &["rebalance", "plan", "--threshold", "-0.5"],
            USAGE,
            &["must be 0 or more"],
        ),
        Case::new(
            "lock --timeout 0",
            &["lock", "--shard", "1", "--timeout", "0"],
            USAGE,
            &["--timeout"],
        ),
        Case::new(
            "sandbox up --nodes 0",
            &["sandbox", "up", "--nodes", "0", "--dir", "/nonexistent/x"],
            USAGE,
            &["1 to 64 nodes"],
        ),
        Case::new(
            "an unknown fault point",
            &["ops"],
            USAGE,
            &["SHARDCTL_FAULT", "unknown point \"before:flp\""],
        )
        .env(&[("SHARDCTL_FAULT", "crash@before:flp")]),
        Case::new(
            "an unknown fault action",
            &["ops"],
            USAGE,
            &["SHARDCTL_FAULT", "unknown action \"explode\""],
        )
        .env(&[("SHARDCTL_FAULT", "explode@after:lock")]),
    ] {
        refused_case(&case);
    }
}

#[test]
fn option_files_and_driver_errors_name_file_line_and_node() {
    let _g = serial();
    let inv = &FLEET.inventory_path();
    let text = std::fs::read_to_string(inv).unwrap();
    let admin = sandbox3().dir().join("client.cnf");
    let admin = admin.to_str().unwrap();
    assert!(text.contains(admin), "{text}");
    let with_file = |name: &str, content: &str| {
        let cnf = write_file(dir().path(), &format!("{name}.cnf"), content);
        let inv = text.replace(admin, cnf.to_str().unwrap());
        write_file(dir().path(), &format!("{name}.yaml"), &inv)
    };
    for (name, content, words) in [
        (
            "garbage",
            "this is not an option file\n",
            &["garbage.cnf:1: option outside any [group]"][..],
        ),
        (
            "unclosed",
            "[client\nuser=root\n",
            &["unclosed.cnf:1: group header \"[client\" has no closing ]"],
        ),
        (
            "noise",
            "[client]\nuser=root\npassword = x y z\nhello world\n",
            &["noise.cnf:4: not an option"],
        ),
        (
            "noclient",
            "[mysqld]\nuser=mysql\n",
            &["noclient.cnf", "no [client] group"],
        ),
    ] {
        let cfg = with_file(name, content);
        let before = state();
        let out = shardctl()
            .arg("--config")
            .arg(&cfg)
            .arg("ops")
            .assert()
            .code(CONFIG)
            .get_output()
            .clone();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.trim_end().contains('\n'), "{err}");
        for w in words {
            assert!(err.contains(w), "{w}: {err}");
        }
        assert_eq!(state(), before);
    }
    // A node nobody listens on: one line naming the node and the address, no debug text.
    let port = sandbox3().node("node1").unwrap().port;
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let free = closed.local_addr().unwrap().port();
    drop(closed);
    let cfg = write_file(
        dir().path(),
        "closed.yaml",
        &text.replacen(&format!("port: {port}"), &format!("port: {free}"), 1),
    );
    let out = shardctl()
        .arg("--config")
        .arg(&cfg)
        .arg("ops")
        .assert()
        .code(SERVER)
        .get_output()
        .clone();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("shardctl: node node1: cannot connect to 127.0.0.1:")
            && !err.contains("DriverError")
            && !err.trim_end().contains('\n'),
        "{err}"
    );
}

#[test]
fn a_refused_sandbox_up_leaves_no_directory() {
    let _g = serial();
    let taken = sandbox3().node("node1").unwrap().port.to_string();
    let target = dir().path().join("never-created");
    shardctl()
        .args([
            "sandbox",
            "up",
            "--nodes",
            "1",
            "--base-port",
            &taken,
            "--dir",
        ])
        .arg(&target)
        .assert()
        .code(REFUSED)
        .stderr(
            predicate::str::contains(format!("port {taken}"))
                .and(predicate::str::contains("is taken")),
        );
    assert!(!target.exists(), "{} was left behind", target.display());
    shardctl()
        .args(["sandbox", "up", "--base-port", "80", "--dir"])
        .arg(&target)
        .assert()
        .code(USAGE)
        .stderr(predicate::str::contains("--base-port"));
    assert!(!target.exists());
}
