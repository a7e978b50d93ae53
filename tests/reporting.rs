//! A reporting server on real servers: node4 of a four-node sandbox replicates the shards
//! of node1..node3. Attached under a write workload, it then holds exactly the fleet's rows
//! (every table of every shard schema compared by checksum); it stays exact through a move,
//! a same-node split and a split onto another node run under the workload, a same-node
//! merge, moves whose revert window is finalized or reverted, and crashes in the middle of
//! following; bad input is refused with nothing changed.

mod common;

use common::{connect, exec, inventory, serial, shardctl, FleetSetup, Function, SharedFleet};
use serde_json::Value as Json;
use shardctl::directory::Directory;
use shardctl::sandbox::Sandbox;
use shardctl::server::Stmt;
use std::time::{Duration, Instant};

const USAGE: i32 = 2;
const REFUSED: i32 = 5;

/// Four nodes; function `f` (range, int) shards `app.t` and `app.u` in shards 1 (node1,
/// from 0), 2 (node2, from 1000), 3 (node3, from 2000); 300 rows per table; the
/// workload's table in every shard, sharded by `k`. node4 holds nothing.
static FLEET: SharedFleet = SharedFleet::new(4, set_up);

/// Sets up the fleet once, on first use (see [`FLEET`]).
fn set_up(sb: &Sandbox) {
    let mut rows = FleetSetup::new()
        .schema(&[
            "CREATE DATABASE app",
            "CREATE TABLE app.t (id INT PRIMARY KEY, v INT, note VARCHAR(20), KEY (v))",
            "CREATE TABLE app.u (id INT, k INT, PRIMARY KEY (id, k))",
        ])
        .function(
            Function::range("f")
                .tables(&[("app.t", "id"), ("app.u", "id")])
                .shards(&[("node1", "0"), ("node2", "1000"), ("node3", "2000")]),
        );
    for (node, shard, base) in [("node1", 1, 0), ("node2", 2, 1000), ("node3", 3, 2000)] {
        let sqls: Vec<String> = (0..300)
            .flat_map(|i| {
                let id = base + i * 3;
                [
                    format!("INSERT INTO app_{shard}.t VALUES ({id}, {i}, 'row {i}')"),
                    format!("INSERT INTO app_{shard}.u VALUES ({id}, 1), ({id}, 2)"),
                ]
            })
            .collect();
        rows = rows.rows(node, &sqls);
    }
    // Registered, as the application's tables must be: a split then prunes it and a
    // merge carries its rows (an unmapped one holding rows refuses the merge).
    rows.registered_workload("f", "app").build(sb);
}

fn json(args: &[&str]) -> Json {
    FLEET.json(args)
}

/// Every schema node4 holds besides the server's own.
fn node4_schemas() -> Vec<String> {
    let mut s = connect(FLEET.sandbox(), "node4");
    s.rows(&Stmt::text(
        "SELECT schema_name FROM information_schema.schemata WHERE schema_name NOT IN ('mysql', 'information_schema', 'performance_schema', 'sys', 'test') ORDER BY 1",
    ))
    .unwrap()
    .into_iter()
    .map(|r| r.get::<String, _>(0).unwrap())
    .collect()
}

/// A refused command: its exit code, one line naming the culprit, and nothing changed on
/// node4 (no schema, no channel) nor in the directory's reporting tables.
fn refused(args: &[&str], code: i32, needle: &str) {
    let schemas = node4_schemas();
    let channels = channels_on_node4();
    let out = FLEET.cli(args).assert().code(code).get_output().clone();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(needle), "{args:?}: {err}");
    let lines = err
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with("For more information"))
        .count();
    assert_eq!(lines, 1, "{args:?}: {err}");
    assert_eq!(node4_schemas(), schemas, "{args:?} changed node4's schemas");
    assert_eq!(
        channels_on_node4(),
        channels,
        "{args:?} changed node4's channels"
    );
}

fn channels_on_node4() -> Vec<String> {
    let mut s = connect(FLEET.sandbox(), "node4");
    let mut names: Vec<String> = s.channels().unwrap().into_iter().map(|c| c.name).collect();
    names.sort();
    names
}

/// `CHECKSUM TABLE` of one table (None when it does not exist).
fn checksum(server: &mut shardctl::server::Server, schema: &str, table: &str) -> Option<i64> {
    let rows = server
        .rows(&Stmt::text(format!("CHECKSUM TABLE `{schema}`.`{table}`")))
        .unwrap();
    rows.first()
        .and_then(|r| r.get::<Option<i64>, _>(1))
        .flatten()
}

/// Every base table of every shard schema, as (node, schema, table), from the directory.
fn fleet_tables() -> Vec<(String, String, String)> {
    let inv = inventory(FLEET.sandbox());
    let snap = Directory::open(&inv).unwrap().load().unwrap();
    let mut out = Vec::new();
    for shard in &snap.shards {
        let mut s = connect(FLEET.sandbox(), &shard.node);
        for schema in snap.shard_schemas(shard) {
            for r in s
                .rows(&Stmt::with(
                    "SELECT table_name FROM information_schema.tables WHERE table_schema = ? AND table_type = 'BASE TABLE' ORDER BY 1",
                    vec![schema.as_str().into()],
                ))
                .unwrap()
            {
                out.push((shard.node.clone(), schema.clone(), r.get::<String, _>(0).unwrap()));
            }
        }
    }
    out
}

/// Waits (at most two minutes, for the channels to apply what the fleet logged) until
/// every shard table on node4 has its fleet copy's checksum; panics naming the tables
/// that still differ. Returns the number of tables compared.
fn assert_node4_equals_fleet(when: &str) -> usize {
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut r = connect(FLEET.sandbox(), "node4");
    loop {
        let tables = fleet_tables();
        let mut differ = Vec::new();
        for (node, schema, table) in &tables {
            let mut s = connect(FLEET.sandbox(), node);
            let (a, b) = (
                checksum(&mut s, schema, table),
                checksum(&mut r, schema, table),
            );
            if a != b || a.is_none() {
                differ.push(format!("{schema}.{table} ({node}: {a:?}, node4: {b:?})"));
            }
        }
        if differ.is_empty() {
            // Nothing else: node4 holds no shard schema the fleet does not.
            let mut want: Vec<String> = tables.iter().map(|t| t.1.clone()).collect();
            want.sort();
            want.dedup();
            assert_eq!(node4_schemas(), want, "{when}: node4's schemas");
            return tables.len();
        }
        if Instant::now() > deadline {
            panic!(
                "{when}: node4 differs from the fleet: {}",
                differ.join("; ")
            );
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// Every reporting channel runs without error; returns (source, schemas) per channel.
fn healthy_channels() -> Vec<(String, Vec<String>)> {
    let st = json(&["reporting", "status"]);
    let nodes = st["reporting_nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 1, "{st}");
    assert_eq!(nodes[0]["node"], "node4");
    nodes[0]["channels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            assert_eq!(c["running"], true, "{c}");
            assert!(c["error"].is_null(), "{c}");
            assert_eq!(c["pending_state"], "none", "{c}");
            (
                c["source"].as_str().unwrap().to_string(),
                c["schemas"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|s| s.as_str().unwrap().to_string())
                    .collect(),
            )
        })
        .collect()
}

/// Waits until the newest operation runs its revert-window step; returns its id.
fn until_window(within: Duration) -> u64 {
    let deadline = Instant::now() + within;
    loop {
        let ops = Directory::open(&inventory(FLEET.sandbox()))
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

fn workload() -> shardctl::workload::Running {
    shardctl::workload::spawn(
        inventory(FLEET.sandbox()),
        shardctl::workload::Options {
            rate: 150,
            ..shardctl::workload::Options::new("f")
        },
    )
    .unwrap()
}

fn stop_and_check(running: shardctl::workload::Running) {
    let mut report = running.stop().unwrap();
    assert!(report.acked > 0);
    let check = report.check(&inventory(FLEET.sandbox()), "f").unwrap();
    assert!(check.missing.is_empty(), "lost writes {:?}", check.missing);
}

#[test]
fn a_reporting_server_follows_attach_move_and_split_under_writes() {
    let _g = serial();
    FLEET.sandbox();
    // The plan, and nothing done.
    let plan = json(&["reporting", "attach", "node4", "--dry-run"]);
    assert_eq!(plan["sources"].as_array().unwrap().len(), 3, "{plan}");
    assert_eq!(plan["sources"][1]["channel"], "shardctl_report_node2");
    assert_eq!(plan["sources"][1]["schemas"], serde_json::json!(["app_2"]));
    assert!(node4_schemas().is_empty());

    // Attach while the workload writes every shard.
    let running = workload();
    std::thread::sleep(Duration::from_millis(800));
    FLEET
        .cli(&["reporting", "attach", "node4"])
        .assert()
        .success();
    std::thread::sleep(Duration::from_millis(800));
    stop_and_check(running);
    assert_eq!(
        healthy_channels(),
        vec![
            ("node1".into(), vec!["app_1".into()]),
            ("node2".into(), vec!["app_2".into()]),
            ("node3".into(), vec!["app_3".into()]),
        ]
    );
    assert_eq!(assert_node4_equals_fleet("after attach"), 9);
    refused(
        &["reporting", "attach", "node4"],
        REFUSED,
        "node node4 is already attached as a reporting server",
    );

    // Move shard 2 to node3 under writes: its rows on node4 come from node2 up to the
    // flip, from node3 after, none twice; node4's copy is not made again.
    let running = workload();
    std::thread::sleep(Duration::from_millis(800));
    let out = FLEET
        .cli(&["-v", "move", "--shard", "2", "--to", "node3"])
        .assert()
        .success()
        .get_output()
        .clone();
    std::thread::sleep(Duration::from_millis(800));
    stop_and_check(running);
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(
        log.contains("node4: channel shardctl_report_node3 carries 1 more schema(s)"),
        "{log}"
    );
    assert!(!log.contains("copied from node3"), "{log}");
    assert_eq!(
        healthy_channels(),
        vec![
            ("node1".into(), vec!["app_1".into()]),
            ("node3".into(), vec!["app_2".into(), "app_3".into()]),
        ]
    );
    assert!(!channels_on_node4().contains(&"shardctl_report_node2".to_string()));
    assert_node4_equals_fleet("after the move");

    // A same-node split on node1 under writes: the new schema is copied onto node4 and
    // joins node1's channel; the pruned rows go on node4 too.
    let running = workload();
    std::thread::sleep(Duration::from_millis(800));
    FLEET
        .cli(&["split", "--shard", "1", "--to", "node1", "--at", "500"])
        .assert()
        .success();
    std::thread::sleep(Duration::from_millis(800));
    stop_and_check(running);
    let channels = healthy_channels();
    assert_eq!(channels[0].0, "node1");
    assert_eq!(channels[0].1.len(), 2, "{channels:?}");
    assert_eq!(assert_node4_equals_fleet("after the split"), 4 * 3);

    // A split onto another node, which no channel reads from any more: a new channel
    // from node2 carries the new shard.
    let running = workload();
    std::thread::sleep(Duration::from_millis(800));
    FLEET
        .cli(&["split", "--shard", "3", "--to", "node2", "--at", "2500"])
        .assert()
        .success();
    std::thread::sleep(Duration::from_millis(800));
    stop_and_check(running);
    let channels = healthy_channels();
    assert_eq!(
        channels.iter().map(|c| c.0.as_str()).collect::<Vec<_>>(),
        ["node1", "node2", "node3"]
    );
    assert_eq!(channels[1].1, vec!["app_5".to_string()]);
    assert_eq!(assert_node4_equals_fleet("after the split to node2"), 5 * 3);

    // A same-node merge: the retired shard's rows join the survivor through node1's
    // channel, its schema leaves node4.
    FLEET
        .cli(&["merge", "--shards", "1,4", "--to", "node1"])
        .assert()
        .success();
    let channels = healthy_channels();
    assert_eq!(
        channels[0],
        ("node1".to_string(), vec!["app_1".to_string()])
    );
    assert_eq!(assert_node4_equals_fleet("after the merge"), 4 * 3);

    // The process dies while the reporting server follows a move (the channel from node2
    // re-pointed at node2's position at the flip, carrying only the moved schema), then
    // while it follows a same-node split (the new schema copied, not joined yet):
    // `reporting sync` finishes each from the journal and the channels' real state.
    for (fault, args, pending) in [
        (
            "crash@reporting:repointed",
            vec!["move", "--shard", "2", "--to", "node2"],
            "app_2",
        ),
        (
            "crash@reporting:copied",
            vec!["split", "--shard", "5", "--to", "node2", "--at", "2800"],
            "app_6",
        ),
    ] {
        let running = workload();
        std::thread::sleep(Duration::from_millis(800));
        shardctl()
            .env("SHARDCTL_FAULT", fault)
            .arg("--config")
            .arg(FLEET.inventory_path())
            .args(&args)
            .assert()
            .failure()
            .stderr(predicates::str::contains(format!(
                "fault point {}: crashing",
                fault.trim_start_matches("crash@")
            )));
        let st = json(&["reporting", "status"]);
        let node2 = st["reporting_nodes"][0]["channels"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["source"] == "node2")
            .unwrap()
            .clone();
        assert_eq!(node2["pending_state"], "joining", "{fault}: {node2}");
        assert_eq!(
            node2["pending"],
            serde_json::json!([pending]),
            "{fault}: {node2}"
        );
        std::thread::sleep(Duration::from_millis(500));
        json(&["reporting", "sync"]);
        std::thread::sleep(Duration::from_millis(500));
        stop_and_check(running);
        healthy_channels();
        assert_node4_equals_fleet(fault);
    }

    // Moves with a revert window: the reporting server follows when the window closes.
    // Finalized, the shard's rows come from the new node from its position at the flip;
    // reverted, the old copy took the window's writes through the reverse channel (which
    // its node does not log), so the shard is copied again from it.
    for (verb, to, home) in [("finalize", "node1", "node1"), ("revert", "node3", "node1")] {
        let running = workload();
        let mv = std::process::Command::new(assert_cmd::cargo::cargo_bin("shardctl"))
            .env("SHARDCTL_YES", "1")
            .env_remove("SHARDCTL_CONFIG")
            .env_remove("SHARDCTL_FAULT")
            .arg("--config")
            .arg(FLEET.inventory_path())
            .args(["move", "--shard", "3", "--to", to, "--revert-window", "10m"])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let op = until_window(Duration::from_secs(120));
        let mut n = connect(FLEET.sandbox(), to);
        exec(
            &mut n,
            &["UPDATE app_3.t SET note = 'in the window' WHERE id = 2003"],
        );
        std::thread::sleep(Duration::from_millis(800));
        FLEET.cli(&[verb, &op.to_string()]).assert().success();
        let out = mv.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        stop_and_check(running);
        let placed = Directory::open(&inventory(FLEET.sandbox()))
            .unwrap()
            .load()
            .unwrap()
            .shards
            .iter()
            .find(|s| s.id == 3)
            .unwrap()
            .node
            .clone();
        assert_eq!(placed, home, "{verb}");
        let channels = healthy_channels();
        assert!(
            channels
                .iter()
                .any(|(src, schemas)| src == home && schemas.contains(&"app_3".to_string())),
            "{verb}: {channels:?}"
        );
        assert_node4_equals_fleet(verb);
        let mut r = connect(FLEET.sandbox(), "node4");
        assert_eq!(
            common::count(
                &mut r,
                "SELECT COUNT(*) FROM app_3.t WHERE id = 2003 AND note = 'in the window'"
            ),
            1,
            "{verb}: the window's write"
        );
    }

    // Nothing to do: sync changes nothing and says so through status.
    let before = healthy_channels();
    json(&["reporting", "sync"]);
    assert_eq!(healthy_channels(), before);

    // A write after all that still arrives.
    let mut n2 = connect(FLEET.sandbox(), "node2");
    exec(
        &mut n2,
        &["UPDATE app_2.t SET note = 'late' WHERE id = 1003"],
    );
    assert_node4_equals_fleet("after a late write");

    // Detach: channels gone, copies left; then attach again is refused while they stay.
    let d = json(&["reporting", "detach", "node4"]);
    assert_eq!(d["dropped"], serde_json::json!([]));
    assert!(channels_on_node4().is_empty());
    assert!(!node4_schemas().is_empty());
    refused(
        &["reporting", "attach", "node4"],
        REFUSED,
        "node node4 already has a schema app_",
    );
    let mut n4 = connect(FLEET.sandbox(), "node4");
    for s in node4_schemas() {
        exec(&mut n4, &[&format!("DROP DATABASE `{s}`")]);
    }
    assert_eq!(
        json(&["reporting", "status"])["reporting_nodes"],
        serde_json::json!([])
    );
}

#[test]
fn bad_reporting_input_is_refused_and_changes_nothing() {
    let _g = serial();
    FLEET.sandbox();
    refused(
        &["reporting", "attach", "node9"],
        USAGE,
        "unknown node \"node9\"",
    );
    refused(
        &["reporting", "attach", "node1"],
        REFUSED,
        "node node1 holds shard(s)",
    );
    refused(
        &["reporting", "detach", "node4"],
        REFUSED,
        "node node4 is not attached as a reporting server",
    );
    refused(
        &["reporting", "status", "node4"],
        REFUSED,
        "node node4 is not attached as a reporting server",
    );
    refused(
        &["reporting", "check", "--shard", "99"],
        USAGE,
        "shard 99 is not in the directory",
    );
    refused(
        &["reporting", "check"],
        REFUSED,
        "no reporting server is attached: nothing to check",
    );
    refused(
        &["reporting", "check", "--chunk-rows", "0"],
        USAGE,
        "--chunk-rows",
    );
    // A source whose binary log carries statements.
    let mut n2 = connect(FLEET.sandbox(), "node2");
    exec(&mut n2, &["SET GLOBAL binlog_format = 'STATEMENT'"]);
    let r = std::panic::catch_unwind(|| {
        refused(
            &["reporting", "attach", "node4"],
            REFUSED,
            "source node node2 has binlog_format STATEMENT",
        )
    });
    exec(&mut n2, &["SET GLOBAL binlog_format = 'ROW'"]);
    r.unwrap();
    // A schema of the same name already on the reporting node.
    let mut n4 = connect(FLEET.sandbox(), "node4");
    exec(&mut n4, &["CREATE DATABASE app_1"]);
    let r = std::panic::catch_unwind(|| {
        refused(
            &["reporting", "attach", "node4"],
            REFUSED,
            "node node4 already has a schema app_1",
        )
    });
    exec(&mut n4, &["DROP DATABASE app_1"]);
    r.unwrap();
    assert_eq!(
        json(&["reporting", "status"])["reporting_nodes"],
        serde_json::json!([])
    );
}
