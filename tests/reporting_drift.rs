//! A reporting server never drifts silently, on real servers: node4 of a four-node sandbox
//! replicates shards 1..3 (node1..node3). A move of shard 1 to node3 waits in its revert
//! window (its follow not done yet) while rows are written to shard 1 on node3; a second
//! move, of shard 2 onto the same node3, then ends and syncs the reporting server. Shard 1
//! must join node3's channel at its own flip's position, not the second move's: node4
//! holds every row written between the flips. `reporting status` shows the follow waiting
//! meanwhile; `reporting check` reports the copy clean, then reports (exit 5) a row changed
//! by hand on node4. Then a follow that fails (node4's channel from the old node stopped on
//! an error) is retried, at its own flip's position, by the next move onto the same node;
//! and a revert whose follow failed is copied again by the next sync.

mod common;

use common::{cli_on, connect, exec, inventory, FleetSetup, Function};
use serde_json::Value as Json;
use shardctl::directory::Directory;
use shardctl::sandbox::{Sandbox, SandboxBuilder};
use shardctl::server::Stmt;
use std::time::{Duration, Instant};

const REFUSED: i32 = 5;

/// Four nodes; function `f` (range, int) shards `app.t` in shards 1 (node1, from 0),
/// 2 (node2, from 1000), 3 (node3, from 2000), 200 rows each. node4 holds nothing.
fn fleet() -> Sandbox {
    let sb = SandboxBuilder::for_tests(4)
        .and_then(|b| b.start())
        .unwrap_or_else(|e| panic!("cannot start the test sandbox: {e}"));
    let mut setup = FleetSetup::new()
        .schema(&[
            "CREATE DATABASE app",
            "CREATE TABLE app.t (id INT PRIMARY KEY, v INT, note VARCHAR(40))",
        ])
        .function(Function::range("f").table("app.t", "id").shards(&[
            ("node1", "0"),
            ("node2", "1000"),
            ("node3", "2000"),
        ]));
    for (node, shard, base) in [("node1", 1, 0), ("node2", 2, 1000), ("node3", 3, 2000)] {
        let rows: Vec<String> = (0..200)
            .map(|i| {
                format!(
                    "INSERT INTO app_{shard}.t VALUES ({}, {i}, 'row {i}')",
                    base + i
                )
            })
            .collect();
        setup = setup.rows(node, &rows);
    }
    setup.build(&sb);
    sb
}

fn json_out(out: &std::process::Output, args: &[&str]) -> Json {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{args:?}: {e}: {} / {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn json(sb: &Sandbox, args: &[&str]) -> Json {
    let mut all = vec!["--output", "json"];
    all.extend_from_slice(args);
    let out = cli_on(&sb.inventory_path(), &all)
        .assert()
        .success()
        .get_output()
        .clone();
    json_out(&out, args)
}

/// `CHECKSUM TABLE` of one table (None when it does not exist).
fn checksum(server: &mut shardctl::server::Server, table: &str) -> Option<i64> {
    let rows = server
        .rows(&Stmt::text(format!("CHECKSUM TABLE {table}")))
        .unwrap();
    rows.first()
        .and_then(|r| r.get::<Option<i64>, _>(1))
        .flatten()
}

/// Waits (at most a minute, for the channels to apply what the fleet logged) until
/// node4's copy of `app_<shard>.t` has the checksum of the shard's node's; panics with
/// both row counts otherwise.
fn assert_node4_holds(sb: &Sandbox, shard: u32, node: &str, when: &str) {
    let table = format!("app_{shard}.t");
    let deadline = Instant::now() + Duration::from_secs(60);
    let (mut s, mut r) = (connect(sb, node), connect(sb, "node4"));
    loop {
        let (a, b) = (checksum(&mut s, &table), checksum(&mut r, &table));
        if a.is_some() && a == b {
            return;
        }
        if Instant::now() > deadline {
            let sql = format!("SELECT COUNT(*) FROM {table}");
            panic!(
                "{when}: node4's {table} differs from {node}'s: {} rows there, {} on node4",
                common::count(&mut s, &sql),
                common::count(&mut r, &sql)
            );
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// `move --shard 1 --to TO --revert-window 10m` in the background (stderr piped, without
/// -v, so the pipe does not fill while the window waits).
fn move_shard_1_with_a_window(sb: &Sandbox, to: &str) -> std::process::Child {
    std::process::Command::new(assert_cmd::cargo::cargo_bin("shardctl"))
        .env("SHARDCTL_YES", "1")
        .env_remove("SHARDCTL_CONFIG")
        .env_remove("SHARDCTL_FAULT")
        .arg("--config")
        .arg(sb.inventory_path())
        .args(["move", "--shard", "1", "--to", to, "--revert-window", "10m"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits until the newest operation runs its revert-window step; returns its id.
fn until_window(sb: &Sandbox) -> u64 {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let ops = Directory::open(&inventory(sb))
            .unwrap()
            .operations(None)
            .unwrap();
        if let Some(op) = ops.first() {
            let next = op.steps.iter().find(|s| s.state.as_sql() != "done");
            if op.state.as_sql() == "running"
                && next.is_some_and(|s| s.name == "revert-window" && s.state.as_sql() == "running")
            {
                return op.id;
            }
        }
        assert!(
            Instant::now() < deadline,
            "the move never reached its window"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn a_follow_skipped_by_an_open_window_joins_at_its_own_flip_and_check_finds_drift() {
    let sb = fleet();
    cli_on(&sb.inventory_path(), &["reporting", "attach", "node4"])
        .assert()
        .success();
    assert_node4_holds(&sb, 1, "node1", "after attach");

    // Shard 1 to node3 with a revert window: the move flips, then waits; the reporting
    // server's follow waits with it.
    let mv = move_shard_1_with_a_window(&sb, "node3");
    let op = until_window(&sb);

    // Written on shard 1's new node after its flip, before anything follows it.
    let mut n3 = connect(&sb, "node3");
    exec(
        &mut n3,
        &[
            "UPDATE app_1.t SET note = 'between the flips' WHERE id < 50",
            "INSERT INTO app_1.t VALUES (900, 900, 'between the flips')",
        ],
    );
    let st = json(&sb, &["reporting", "status"]);
    let node4 = &st["reporting_nodes"][0];
    let waiting = node4["pending_follows"].as_array().unwrap();
    assert_eq!(waiting.len(), 1, "{st}");
    assert_eq!(waiting[0]["schema"], "app_1", "{st}");
    assert_eq!(waiting[0]["to"], "node3", "{st}");
    assert_eq!(node4["drift"], true, "{st}");

    // A second move onto node3 ends first: its follow syncs the reporting server.
    cli_on(
        &sb.inventory_path(),
        &["move", "--shard", "2", "--to", "node3"],
    )
    .assert()
    .success();
    exec(
        &mut n3,
        &["UPDATE app_1.t SET note = 'after the second move' WHERE id = 900"],
    );
    assert_node4_holds(&sb, 1, "node3", "after the second move onto node3");
    assert_node4_holds(&sb, 2, "node3", "after the second move onto node3");

    cli_on(&sb.inventory_path(), &["finalize", &op.to_string()])
        .assert()
        .success();
    let out = mv.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_node4_holds(&sb, 1, "node3", "after the window");
    let st = json(&sb, &["reporting", "status"]);
    assert_eq!(
        st["reporting_nodes"][0]["pending_follows"],
        serde_json::json!([]),
        "{st}"
    );

    // The check compares every shard at the channels' positions: clean while exact.
    let c = json(&sb, &["reporting", "check"]);
    assert_eq!(c["clean"], true, "{c}");
    let shards: Vec<u64> = c["shards"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["shard"].as_u64().unwrap())
        .collect();
    assert_eq!(shards, [1, 2, 3], "{c}");
    assert!(c["shards"][0]["rows"].as_u64().unwrap() >= 201, "{c}");

    // A row changed by hand on the reporting server: the check says where, exits 5, and
    // status keeps the result.
    let mut n4 = connect(&sb, "node4");
    exec(&mut n4, &["UPDATE app_2.t SET v = -1 WHERE id = 1100"]);
    let args = ["--output", "json", "reporting", "check", "--shard", "2"];
    let out = cli_on(&sb.inventory_path(), &args)
        .assert()
        .code(REFUSED)
        .get_output()
        .clone();
    let c = json_out(&out, &args);
    assert_eq!(c["clean"], false, "{c}");
    assert_eq!(c["shards"][0]["shard"], 2, "{c}");
    assert_eq!(
        c["shards"][0]["differing"],
        serde_json::json!(["app_2.t"]),
        "{c}"
    );
    assert_eq!(
        c["shards"][0]["differences"].as_array().unwrap().len(),
        1,
        "{c}"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("the reporting copy differs from the fleet: shard 2 on node4 (app_2.t)"),
        "{err}"
    );
    let st = json(&sb, &["reporting", "status"]);
    let checks = st["reporting_nodes"][0]["last_checks"].as_array().unwrap();
    let two = checks.iter().find(|c| c["shard"] == 2).unwrap();
    assert_eq!(two["clean"], false, "{st}");
    assert_eq!(st["reporting_nodes"][0]["drift"], true, "{st}");

    // Put back: clean again.
    exec(&mut n4, &["UPDATE app_2.t SET v = 100 WHERE id = 1100"]);
    let c = json(&sb, &["reporting", "check", "--shard", "2"]);
    assert_eq!(c["clean"], true, "{c}");
    let st = json(&sb, &["reporting", "status"]);
    assert_eq!(st["reporting_nodes"][0]["drift"], false, "{st}");

    // A follow that fails: node4's channel from node3 stops on an error (a row it must
    // update is gone there), so the move of shard 3 to node1 cannot drain it. The move
    // stands; the follow stays recorded with the failure.
    exec(&mut n4, &["DELETE FROM app_3.t WHERE id = 2005"]);
    exec(&mut n3, &["UPDATE app_3.t SET v = v + 1 WHERE id = 2005"]);
    let out = cli_on(
        &sb.inventory_path(),
        &["move", "--shard", "3", "--to", "node1"],
    )
    .assert()
    .success()
    .get_output()
    .clone();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("the reporting server did not follow the operation"),
        "{err}"
    );
    let mut n1 = connect(&sb, "node1");
    exec(
        &mut n1,
        &["UPDATE app_3.t SET note = 'after a failed follow' WHERE id BETWEEN 2100 AND 2150"],
    );
    let st = json(&sb, &["reporting", "status"]);
    let waiting = st["reporting_nodes"][0]["pending_follows"]
        .as_array()
        .unwrap();
    assert_eq!(waiting.len(), 1, "{st}");
    assert_eq!(waiting[0]["schema"], "app_3", "{st}");
    assert!(waiting[0]["failure"].is_string(), "{st}");
    assert_eq!(st["reporting_nodes"][0]["drift"], true, "{st}");
    // Shard 1's channel (from node3) cannot be held at a consistent point: not compared,
    // and not clean.
    let args = ["--output", "json", "reporting", "check", "--shard", "1"];
    let out = cli_on(&sb.inventory_path(), &args)
        .assert()
        .code(REFUSED)
        .get_output()
        .clone();
    let c = json_out(&out, &args);
    let why = c["shards"][0]["differing"][0].as_str().unwrap();
    assert!(
        why.starts_with("channel shardctl_report_node3 is not running"),
        "{c}"
    );

    // The operator repairs the channel; the next move onto node1 ends with a sync that
    // joins shard 3 at its own flip, not at this move's.
    exec(
        &mut n4,
        &[
            "INSERT INTO app_3.t VALUES (2005, 5, 'row 5')",
            "START SLAVE 'shardctl_report_node3'",
        ],
    );
    cli_on(
        &sb.inventory_path(),
        &["move", "--shard", "2", "--to", "node1"],
    )
    .assert()
    .success();
    assert_node4_holds(&sb, 3, "node1", "after a failed follow and another move");
    assert_node4_holds(&sb, 2, "node1", "after a failed follow and another move");
    let st = json(&sb, &["reporting", "status"]);
    assert_eq!(
        st["reporting_nodes"][0]["pending_follows"],
        serde_json::json!([]),
        "{st}"
    );
    let c = json(&sb, &["reporting", "check"]);
    assert_eq!(c["clean"], true, "{c}");

    // A revert whose follow fails: shard 1 goes from node3 to node2 with a window, takes a
    // write there, and is reverted; node4's channel from node3 is broken, so the revert's
    // follow (copy shard 1 again from node3, whose old copy took the window's write
    // through the reverse channel) fails. Once the channel is repaired, a plain sync sees
    // the recorded follow whose schema the directory places elsewhere and copies it again.
    exec(&mut n4, &["DELETE FROM app_1.t WHERE id = 7"]);
    exec(&mut n3, &["UPDATE app_1.t SET v = v + 1 WHERE id = 7"]);
    let mv = move_shard_1_with_a_window(&sb, "node2");
    let op = until_window(&sb);
    let mut n2 = connect(&sb, "node2");
    exec(
        &mut n2,
        &["UPDATE app_1.t SET note = 'in the window' WHERE id BETWEEN 100 AND 120"],
    );
    std::thread::sleep(Duration::from_millis(800));
    cli_on(&sb.inventory_path(), &["revert", &op.to_string()])
        .assert()
        .success();
    let out = mv.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("the reporting server did not follow the operation"),
        "{err}"
    );
    exec(
        &mut n4,
        &[
            "INSERT INTO app_1.t VALUES (7, 7, 'between the flips')",
            "START SLAVE 'shardctl_report_node3'",
        ],
    );
    cli_on(&sb.inventory_path(), &["reporting", "sync"])
        .assert()
        .success();
    assert_node4_holds(&sb, 1, "node3", "after a revert whose follow failed");
    let st = json(&sb, &["reporting", "status"]);
    assert_eq!(st["reporting_nodes"][0]["drift"], false, "{st}");

    // A follow that fails, then the shard moves back before any sync: shard 2 goes from
    // node1 to node2 while node4's channel from node1 is broken, takes writes on node2,
    // and moves back to node1 once the channel is repaired. node1's channel still carries
    // app_2, but its copy lacks node2's writes: the move back's follow must not take the
    // schema as followed because it is placed where that channel reads.
    exec(&mut n4, &["DELETE FROM app_2.t WHERE id = 1005"]);
    exec(&mut n1, &["UPDATE app_2.t SET v = v + 1 WHERE id = 1005"]);
    let out = cli_on(
        &sb.inventory_path(),
        &["move", "--shard", "2", "--to", "node2"],
    )
    .assert()
    .success()
    .get_output()
    .clone();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("the reporting server did not follow the operation"),
        "{err}"
    );
    exec(
        &mut n2,
        &["UPDATE app_2.t SET note = 'while on node2' WHERE id BETWEEN 1100 AND 1150"],
    );
    exec(
        &mut n4,
        &[
            "INSERT INTO app_2.t VALUES (1005, 5, 'row 5')",
            "START SLAVE 'shardctl_report_node1'",
        ],
    );
    cli_on(
        &sb.inventory_path(),
        &["move", "--shard", "2", "--to", "node1"],
    )
    .assert()
    .success();
    assert_node4_holds(&sb, 2, "node1", "after a failed follow and a move back");
    let c = json(&sb, &["reporting", "check"]);
    assert_eq!(c["clean"], true, "{c}");
}
