//! Operator control of running operations (issue 14, item 4): `shardctl pause` parks a
//! move's copy and a prune at a safe point — nothing more is written while paused, no
//! fence and no lock held — `shardctl continue` lets them go on with nothing lost, and
//! `shardctl throttle` changes a running prune's limits; all under the router workload.
//! And the refusals: one line, nothing changed.

mod common;

use common::{app_items_two_shards, connect, exec, serial, SharedFleet};
use shardctl::config::Inventory;
use shardctl::directory::journal::OperationRecord;
use shardctl::directory::{Directory, ShardState};
use shardctl::sandbox::Sandbox;
use shardctl::server::{Server, Stmt};
use shardctl::workload;
use std::process::Child;
use std::time::{Duration, Instant};

const USAGE: i32 = 2;

/// Rows of shard 1's `items`: the copy writes them in ten batches.
const ROWS: i64 = 99_999;
/// Rows shard 2 holds that it does not own, for the prune.
const STRAY: i64 = 30_000;

static FLEET: SharedFleet = SharedFleet::new(3, set_up);

/// Sets up the fleet once, on first use (see [`FLEET`]).
fn set_up(sb: &Sandbox) {
    app_items_two_shards(ROWS).build(sb);
}

fn inventory() -> Inventory {
    common::inventory(FLEET.sandbox())
}

/// shardctl in the background with `fault` as SHARDCTL_FAULT (slowing it down at a known
/// place), its output in files.
fn spawn(args: &[&str], fault: &str, dir: &std::path::Path, name: &str) -> Child {
    common::spawn_shardctl(&FLEET.inventory_path(), args, Some(fault), dir, name)
}

fn wait_exit(child: &mut Child, within: Duration, dir: &std::path::Path, name: &str) {
    let deadline = Instant::now() + within;
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            assert!(
                s.success(),
                "{name}: {}",
                std::fs::read_to_string(dir.join(format!("{name}.err"))).unwrap()
            );
            return;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("{name} still running after {within:?}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn operation(op: u64) -> OperationRecord {
    Directory::open(&inventory())
        .unwrap()
        .operation(op)
        .unwrap()
}

fn newest_op() -> Option<OperationRecord> {
    common::newest_op(&inventory())
}

fn version() -> u64 {
    Directory::open(&inventory()).unwrap().version().unwrap()
}

fn home_of(shard: u32) -> String {
    Directory::open(&inventory())
        .unwrap()
        .load()
        .unwrap()
        .shard(shard)
        .unwrap()
        .node
        .clone()
}

/// `ops OP` as the JSON document shows it.
fn ops_json(op: u64) -> serde_json::Value {
    let out = FLEET
        .cli(&[])
        .args(["--output", "json", "ops", &op.to_string()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()["operation"].clone()
}

/// Polls `what` every 200 ms until it holds.
fn until(within: Duration, what: &str, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + within;
    while !f() {
        assert!(Instant::now() < deadline, "never: {what}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// A count, or 0 while the table is not there yet.
fn count_or_zero(server: &mut Server, sql: &str) -> i64 {
    server
        .first::<i64>(&Stmt::text(sql))
        .ok()
        .flatten()
        .unwrap_or(0)
}

/// Fresh and stale routers writing to every shard.
fn workloads() -> Vec<(workload::Running, &'static str)> {
    let fresh = workload::spawn(
        inventory(),
        workload::Options {
            rate: 120,
            ..workload::Options::new("f")
        },
    )
    .unwrap();
    let stale = workload::spawn(
        inventory(),
        workload::Options {
            rate: 80,
            stale_router: true,
            ..workload::Options::new("f")
        },
    )
    .unwrap();
    vec![(fresh, "fresh"), (stale, "stale")]
}

fn check_workloads(running: Vec<(workload::Running, &'static str)>) {
    for (running, name) in running {
        let mut report = running.stop().unwrap();
        let check = report.check(&inventory(), "f").unwrap();
        assert!(check.missing.is_empty(), "{name}: lost {:?}", check.missing);
        assert_eq!(
            report.wrong_shard_writes, 0,
            "{name}: {:?}",
            check.wrong_shard
        );
        assert!(report.acked > 50, "{name}: the workload ran");
    }
}

/// The move's native copy, slowed to a batch a second, is paused under the workload: once
/// the journal shows it paused the target's rows stand still, the source's tables are
/// visible and writable (no fence, no read-only), `status` and `ops` say so; after
/// `continue` rows flow again, the move finishes, and no write is lost — neither the
/// workload's nor one made on the source while the copy was paused.
#[test]
fn a_paused_copy_writes_nothing_holds_no_fence_and_continues_where_it_stood() {
    let _s = serial();
    FLEET.sandbox();
    let dir = tempfile::tempdir().unwrap();
    let from = home_of(1);
    let to = if from == "node3" { "node2" } else { "node3" };
    let running = workloads();
    std::thread::sleep(Duration::from_millis(500));
    let mut mover = spawn(
        &["move", "--shard", "1", "--to", to],
        "pause=1@copy",
        dir.path(),
        "move",
    );
    let mut target = connect(FLEET.sandbox(), to);
    let mut source = connect(FLEET.sandbox(), &from);
    let copied = |t: &mut Server| count_or_zero(t, "SELECT COUNT(*) FROM app_1.items");
    until(Duration::from_secs(120), "the copy wrote a batch", || {
        copied(&mut target) > 0
    });
    let op = newest_op().unwrap().id;
    let out = FLEET
        .cli(&[])
        .args(["pause", &op.to_string()])
        .assert()
        .success();
    assert!(
        String::from_utf8_lossy(&out.get_output().stdout).contains("pause requested"),
        "{out:?}"
    );
    until(Duration::from_secs(60), "the pause acknowledged", || {
        ops_json(op)["paused"] == true
    });
    let doc = ops_json(op);
    assert_eq!(doc["pause_requested"], true, "{doc}");
    assert!(doc["paused_at"].is_string(), "{doc}");
    assert_eq!(doc["current_step"]["name"], "backup", "{doc}");
    // Nothing more is written while paused.
    let at_pause = copied(&mut target);
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(
        copied(&mut target),
        at_pause,
        "rows were written while paused"
    );
    assert!(at_pause < ROWS, "the copy was not over yet: {at_pause}");
    // No fence, no read-only: the shard is online on its source, its table visible and
    // writable.
    let snap = Directory::open(&inventory()).unwrap().load().unwrap();
    assert_ne!(snap.shard(1).unwrap().state, ShardState::ReadOnly);
    assert_eq!(snap.shard(1).unwrap().node, from);
    assert_eq!(
        common::count(&mut source, "SELECT @@global.read_only"),
        0,
        "read-only while paused"
    );
    assert!(common::count(&mut source, "SELECT COUNT(*) FROM app_1.items") >= ROWS);
    exec(&mut source, &["INSERT INTO app_1.items VALUES (99999, 2)"]);
    let status = FLEET
        .cli(&[])
        .args(["--output", "json", "status"])
        .output()
        .unwrap();
    let status: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
    let shard1 = status["shards"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["shard"] == 1)
        .unwrap()
        .clone();
    assert!(
        shard1["operation"]
            .as_str()
            .is_some_and(|o| o.ends_with("(paused)")),
        "{shard1}"
    );
    // Go on: rows flow again, the move finishes, nothing is lost.
    let out = FLEET
        .cli(&[])
        .args(["continue", &op.to_string()])
        .assert()
        .success();
    assert!(String::from_utf8_lossy(&out.get_output().stdout).contains("continuing"));
    until(Duration::from_secs(30), "rows flow again", || {
        copied(&mut target) > at_pause
    });
    assert_eq!(ops_json(op)["paused"], false);
    wait_exit(&mut mover, Duration::from_secs(240), dir.path(), "move");
    assert_eq!(home_of(1), to);
    std::thread::sleep(Duration::from_millis(700));
    let mut target = connect(FLEET.sandbox(), to);
    assert_eq!(
        common::count(
            &mut target,
            "SELECT COUNT(*) FROM app_1.items WHERE k = 99999 AND n = 2"
        ),
        1,
        "the write made on the source while paused"
    );
    assert!(common::count(&mut target, "SELECT COUNT(*) FROM app_1.items") > ROWS);
    check_workloads(running);
    let log = std::fs::read_to_string(dir.path().join("move.err")).unwrap();
    assert!(
        log.contains(&format!("operation {op}: paused at a safe point")),
        "{log}"
    );
    assert!(
        log.contains(&format!("operation {op}: continuing")),
        "{log}"
    );
}

/// The prune's walk state (rows walked, chunks) of its `items` step.
fn walked(op: u64, table: &str) -> (u64, u64) {
    let rec = operation(op);
    let step = rec
        .steps
        .iter()
        .find(|s| s.name == format!("prune {table}"))
        .unwrap_or_else(|| panic!("no step for {table}: {rec:?}"));
    (
        step.outputs["walked"].as_u64().unwrap_or(0),
        step.outputs["chunks"].as_u64().unwrap_or(0),
    )
}

/// A prune under the workload, slowed to a chunk a second and started with tiny chunks
/// (`--chunk-ms 1`): paused, its deletions and its journaled walk stand still while the
/// shard stays writable; throttled meanwhile to `--chunk-ms 2000`, and continued, it picks
/// the new target up — its chunks grow well past the largest it took before — and
/// finishes with every stray row gone and no write lost.
#[test]
fn a_paused_prune_stops_deleting_and_a_live_throttle_reaches_it() {
    let _s = serial();
    FLEET.sandbox();
    let dir = tempfile::tempdir().unwrap();
    let node = home_of(2);
    let mut server = connect(FLEET.sandbox(), &node);
    exec(
        &mut server,
        &[&format!(
            "INSERT INTO app_2.items SELECT seq, 7 FROM app_2.seq_1_to_{STRAY}"
        )],
    );
    let stray =
        |s: &mut Server| common::count(s, "SELECT COUNT(*) FROM app_2.items WHERE k < 100000");
    assert_eq!(stray(&mut server), STRAY);
    let running = workloads();
    let mut prune = spawn(
        &["prune", "--shard", "2", "--chunk-ms", "1"],
        "pause=1@prune-chunk",
        dir.path(),
        "prune",
    );
    until(Duration::from_secs(60), "the prune deleted a chunk", || {
        stray(&mut server) < STRAY
    });
    let op = newest_op().unwrap().id;
    assert_eq!(operation(op).kind.as_sql(), "prune");
    // Its own limits are journaled as it starts.
    assert_eq!(ops_json(op)["limits"]["chunk_ms"], 1);
    FLEET
        .cli(&[])
        .args(["pause", &op.to_string()])
        .assert()
        .success();
    until(Duration::from_secs(60), "the pause acknowledged", || {
        ops_json(op)["paused"] == true
    });
    let left = stray(&mut server);
    let walk = walked(op, "app_2.items");
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(stray(&mut server), left, "rows were deleted while paused");
    assert_eq!(
        walked(op, "app_2.items"),
        walk,
        "the walk went on while paused"
    );
    assert!(left > 0, "the prune was not over yet");
    // No lock: the shard's table takes writes; the node is not read-only.
    exec(&mut server, &["INSERT INTO app_2.items VALUES (150000, 3)"]);
    assert_eq!(common::count(&mut server, "SELECT @@global.read_only"), 0);
    // Throttled while paused; the owner reads the new target with its next heartbeat.
    let out = FLEET
        .cli(&[])
        .args([
            "--output",
            "json",
            "throttle",
            &op.to_string(),
            "--chunk-ms",
            "2000",
        ])
        .assert()
        .success();
    let doc: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(doc["limits"]["chunk_ms"], 2000, "{doc}");
    assert_eq!(doc["owner_alive"], true, "{doc}");
    assert_eq!(ops_json(op)["limits"]["chunk_ms"], 2000);
    FLEET
        .cli(&[])
        .args(["continue", &op.to_string()])
        .assert()
        .success();
    wait_exit(&mut prune, Duration::from_secs(240), dir.path(), "prune");
    assert_eq!(stray(&mut server), 0);
    assert_eq!(
        common::count(
            &mut server,
            "SELECT COUNT(*) FROM app_2.items WHERE k = 150000"
        ),
        1
    );
    // Before the throttle no chunk walked more than its first 1,000 rows (a 1 ms target
    // halves them); after it they grow toward 2 s each.
    let end = walked(op, "app_2.items");
    let after = (end.0 - walk.0) / (end.1 - walk.1).max(1);
    assert!(
        after > 1000,
        "chunks after the throttle walked {after} rows on average (before: {walk:?}, end: {end:?})"
    );
    check_workloads(running);
    let log = std::fs::read_to_string(dir.path().join("prune.err")).unwrap();
    assert!(
        log.contains(&format!("operation {op}: live limits now")),
        "{log}"
    );
}

/// Pause, continue and throttle of an unknown or finished operation, continue of one not
/// paused, pause of one already paused, throttle without a limit, with nonsensical values
/// or with a limit the operation does not have: each refused with one line naming the
/// culprit and exit 2, the journal and the directory unchanged.
#[test]
fn pause_continue_and_throttle_refuse_bad_input_and_change_nothing() {
    let _s = serial();
    FLEET.sandbox();
    let refused = |args: &[&str], text: &str| {
        let out = FLEET.cli(&[]).args(args).assert().code(USAGE);
        let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
        let first = err.lines().next().unwrap_or_default();
        assert!(first.contains(text), "{args:?}: {err}");
    };
    let before = version();
    refused(&["pause", "99999"], "no operation 99999");
    refused(&["continue", "99999"], "no operation 99999");
    refused(
        &["throttle", "99999", "--workers", "2"],
        "no operation 99999",
    );
    refused(&["throttle", "99999"], "throttle needs at least one of");
    assert_eq!(version(), before);
    for (flag, value, text) in [
        ("--workers", "0", "workers must be 1 to 64"),
        ("--workers", "65", "workers must be 1 to 64"),
        ("--workers", "-2", "workers must be 1 to 64"),
        ("--max-lag", "-1", "must be 0 to 86400"),
        ("--chunk-ms", "0", "must be 1 to 600000"),
        ("--chunk-ms", "fast", "\"fast\" is not a whole number"),
        ("--max-threads-running", "0", "must be 1 to 100000"),
    ] {
        refused(&["throttle", "1", flag, value], text);
    }
    assert_eq!(version(), before);

    // A prune whose process died: unfinished, not paused.
    let crashed = FLEET
        .cli(&[])
        .env("SHARDCTL_FAULT", "crash@prune-chunk")
        .args(["prune", "--shard", "1"])
        .output()
        .unwrap();
    assert!(!crashed.status.success());
    let prune = newest_op().unwrap();
    assert_eq!(prune.kind.as_sql(), "prune");
    assert!(!prune.state.is_finished());
    let p = prune.id.to_string();
    refused(&["continue", &p], &format!("operation {p} is not paused"));
    refused(
        &["throttle", &p, "--workers", "2"],
        "is a prune: --workers throttles a copy",
    );
    let unchanged = operation(prune.id);
    assert!(!unchanged.pause_requested);
    assert_eq!(unchanged.limits, prune.limits);
    // Paused without an owner: it stays paused for whoever resumes it; twice is refused.
    let out = FLEET.cli(&[]).args(["pause", &p]).assert().success();
    assert!(String::from_utf8_lossy(&out.get_output().stdout).contains("no live owner"));
    refused(&["pause", &p], &format!("operation {p} is already paused"));
    FLEET.cli(&[]).args(["continue", &p]).assert().success();
    assert!(!operation(prune.id).pause_requested);
    FLEET.cli(&[]).args(["resume", &p]).assert().success();
    refused(
        &["pause", &p],
        &format!("operation {p} is done: nothing to pause"),
    );
    refused(
        &["continue", &p],
        &format!("operation {p} is done: nothing to continue"),
    );
    refused(
        &["throttle", &p, "--chunk-ms", "5"],
        &format!("operation {p} is done: nothing to throttle"),
    );
    let finished = operation(prune.id);
    assert!(!finished.pause_requested);
    assert_eq!(finished.limits, unchanged.limits);

    // A move whose process died after its preflight: a prune's limits are refused.
    let to = if home_of(1) == "node2" {
        "node3"
    } else {
        "node2"
    };
    let crashed = FLEET
        .cli(&[])
        .env("SHARDCTL_FAULT", "crash@after:preflight")
        .args(["move", "--shard", "1", "--to", to])
        .output()
        .unwrap();
    assert!(!crashed.status.success());
    let mv = newest_op().unwrap();
    assert_eq!(mv.kind.as_sql(), "move");
    let m = mv.id.to_string();
    let at_refusal = version();
    refused(
        &["throttle", &m, "--max-lag", "2"],
        &format!("operation {m} is a move: --max-lag throttles a prune"),
    );
    assert!(operation(mv.id).limits.is_empty());
    assert_eq!(version(), at_refusal);
    FLEET.cli(&[]).args(["abort", &m]).assert().success();
}
