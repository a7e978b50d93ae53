//! Faults through the command line, on a 3-node sandbox whose directory node (node1, the
//! sandbox always puts the directory on its first node) holds no shard; shards live on
//! node2 and node3, so a move or split between them never touches the directory's server.
//!
//! - The split fault matrix: a crash at every fault point of the split playbook, onto
//!   another node and onto the shard's own node, under a workload, then `resume` — and
//!   again then `abort` (refused with exit 5 once the directory flipped, then `resume`).
//! - Ctrl-C at every step of a move (native and dump copies) and of a split: exit 130
//!   within 5 s naming the operation, then `resume` finishes.
//! - The directory's server killed mid-move: the move fails (exit 4) with the fence up,
//!   `resume` finishes once the directory is back.
//! - The target killed during catch-up and the source killed with the fence up: `resume`
//!   or `abort` converge once the server is back.
//! - Racing: `resume` and `abort` against a live owner are refused and change nothing;
//!   after the owner crashed, concurrent takeovers let one process drive at a time.
//!
//! After every run: the operation (and every prune it started) is finished, no hidden
//! `_shardctl_op` table, channel or `read_only` is left, every shard's schemas are on the
//! node the directory names and nowhere else, every row sits in the shard the Router
//! gives its key, and every write the workload saw acknowledged is there.
//!
//! `FAULTS_ONLY='"done:flip", "abort"'` runs only the matching cases of a test (see
//! `run_all`).

mod common;

use common::{cli_on, serial, FleetSetup, Function};
use shardctl::config::Inventory;
use shardctl::directory::journal::{OpKind, OperationRecord};
use shardctl::directory::{Directory, Key, Router};
use shardctl::ops::mover::fault_points;
use shardctl::playbook::Playbook;
use shardctl::sandbox::{Sandbox, SandboxBuilder};
use shardctl::server::{Server, Stmt};
use shardctl::workload;
use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{mpsc, Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

const SERVER: i32 = 4;
const REFUSED: i32 = 5;
const INTERRUPTED: i32 = 130;
/// Rows of every shard's `t` when it is created.
const ROWS: i64 = 2000;
/// The shard moved back and forth between node2 and node3 (range [0, 10 000 000)).
const MOVED: u32 = 1;
/// Lower bounds of the shards created for splits: 10 000 000, 11 000 000, ...
const SPLIT_BASE: i64 = 10_000_000;
const SPLIT_STEP: i64 = 1_000_000;

// The tests hold `serial()`: one test at a time: they share the fleet and kill its servers.

struct Fleet {
    /// Behind a mutex only for `kill_node` / `restart_node`.
    sandbox: Mutex<Sandbox>,
    inventory: PathBuf,
}

/// 3 nodes; the directory on node1 with function `f` (range over BIGINT) mapping `app.t`
/// and the workload's table; shard 1 on node2 with ROWS rows.
fn fleet() -> &'static Fleet {
    static F: OnceLock<Fleet> = OnceLock::new();
    F.get_or_init(|| {
        // The servers' temporary files in a directory of their own rather than the shared
        // /tmp (named so the sandbox's stale-directory sweep removes it after this process).
        let tmp = std::env::temp_dir().join(format!(
            "shardctl-test-{}-faults-tmpdir",
            std::process::id()
        ));
        std::fs::create_dir_all(&tmp).unwrap();
        let sb = SandboxBuilder::for_tests(3)
            .unwrap()
            .extra_config(format!("tmpdir={}", tmp.display()))
            .start()
            .unwrap();
        let inv = sb.inventory_path();
        // The logical schema on the directory node is the first shard's template.
        FleetSetup::new()
            .schema(&[
                "CREATE DATABASE app",
                "CREATE TABLE app.t (id BIGINT PRIMARY KEY, v VARCHAR(40) NOT NULL)",
                "CREATE TABLE app.shardctl_workload (k BIGINT NOT NULL, seq BIGINT UNSIGNED NOT NULL, at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6), PRIMARY KEY (k, seq))",
            ])
            .function(
                Function::range("f")
                    .tables(&[("app.t", "id"), ("app.shardctl_workload", "k")])
                    .shard("node2", "0"),
            )
            .build(&sb);
        let f = Fleet {
            sandbox: Mutex::new(sb),
            inventory: inv,
        };
        fill_with(&f.inventory, MOVED, "node2", 0);
        f
    })
}

fn fill_with(inv: &std::path::Path, shard: u32, node: &str, lower: i64) {
    let mut s = Server::connect_node(&Inventory::load(inv).unwrap(), node).unwrap();
    s.exec(&Stmt::text(format!(
        "INSERT INTO app_{shard}.t SELECT {lower} + seq, MD5(seq) FROM app_{shard}.seq_0_to_{}",
        ROWS - 1
    )))
    .unwrap();
}

fn inventory() -> Inventory {
    Inventory::load(&fleet().inventory).unwrap()
}

fn server(node: &str) -> Server {
    Server::connect_node(&inventory(), node).unwrap_or_else(|e| panic!("connect {node}: {e}"))
}

fn count(s: &mut Server, sql: &str) -> i64 {
    s.first::<i64>(&Stmt::text(sql))
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .unwrap_or(0)
}

fn dir() -> Directory {
    Directory::open(&inventory()).unwrap()
}

fn node_of(shard: u32) -> String {
    dir().load().unwrap().shard(shard).unwrap().node.clone()
}

/// The shard nodes: node2 and node3.
fn other(node: &str) -> &'static str {
    match node {
        "node2" => "node3",
        "node3" => "node2",
        n => panic!("{n} holds no shard in this fleet"),
    }
}

fn kill_node(node: &str) {
    let mut sb = fleet().sandbox.lock().unwrap_or_else(|p| p.into_inner());
    sb.kill_node(node).unwrap();
}

fn restart_node(node: &str) {
    let mut sb = fleet().sandbox.lock().unwrap_or_else(|p| p.into_inner());
    sb.restart_node(node).unwrap();
}

/// A new shard of `f` on `node` with ROWS rows from its lower bound: (id, lower bound).
fn fresh_shard(node: &str) -> (u32, i64) {
    static NEXT: AtomicI64 = AtomicI64::new(0);
    let lower = SPLIT_BASE + NEXT.fetch_add(1, Ordering::SeqCst) * SPLIT_STEP;
    cli_on(
        &fleet().inventory,
        &[
            "shard",
            "add",
            "--function",
            "f",
            "--node",
            node,
            "--lower-bound",
            &lower.to_string(),
        ],
    )
    .assert()
    .success();
    let id = Router::connect(&inventory())
        .unwrap()
        .shard_for_function("f", &Key::Int(lower))
        .unwrap()
        .id;
    fill_with(&fleet().inventory, id, node, lower);
    (id, lower)
}

/// Fresh workload keys inside the moved shard's range (each run its own, so an
/// acknowledgement can never be satisfied by a row an earlier run wrote).
fn moved_shard_keys() -> Vec<i64> {
    static NEXT: AtomicI64 = AtomicI64::new(0);
    let base = 100_000 + NEXT.fetch_add(1, Ordering::SeqCst) * 10;
    (0..4).map(|i| base + i).collect()
}

// ---------------------------------------------------------------------------------------
// The workload

/// The library's workload over chosen keys (spread over both halves of a split), one
/// stream per key, each Router re-reading the directory every 500 ms.
struct Load {
    running: Option<workload::Running>,
}

impl Load {
    fn start(keys: &[i64]) -> Load {
        let running = workload::spawn(
            inventory(),
            workload::Options {
                rate: 100,
                write_timeout: Duration::from_secs(120),
                check_interval: Duration::from_millis(500),
                keys: Some(keys.iter().map(|k| Key::Int(*k)).collect()),
                ..workload::Options::new("f")
            },
        )
        .unwrap();
        std::thread::sleep(Duration::from_millis(300));
        Load {
            running: Some(running),
        }
    }

    /// Stops the workload; every acknowledged write must be where the directory now maps
    /// its key, and no write may have been given up (each retries for 120 s).
    fn finish(self, context: &str) -> workload::Report {
        let report = self.finish_safe(context);
        assert_none_given_up(&report, context);
        report
    }

    /// Like [`Load::finish`], without the check that no write was given up.
    fn finish_safe(mut self, context: &str) -> workload::Report {
        std::thread::sleep(Duration::from_millis(300));
        let mut report = self
            .running
            .take()
            .unwrap()
            .stop()
            .unwrap_or_else(|e| panic!("{context}: workload: {e}"));
        assert!(report.acked > 0, "{context}: the workload wrote nothing");
        let check = report.check(&inventory(), "f").unwrap();
        assert!(
            check.missing.is_empty(),
            "{context}: {} acknowledged writes lost: {:?}",
            check.missing.len(),
            check.missing
        );
        report
    }
}

fn assert_none_given_up(report: &workload::Report, context: &str) {
    let given_up: u64 = report.streams.iter().map(|s| s.lost).sum();
    assert_eq!(
        given_up, 0,
        "{context}: writes given up after 120 s of retries: {:?}",
        report.streams
    );
}

// ---------------------------------------------------------------------------------------
// shardctl processes

/// A shardctl process in its own process group (a signal to the group is a terminal's
/// Ctrl-C), stderr collected by a thread; killed if the test fails before it exits.
struct Proc {
    child: Child,
    text: Arc<Mutex<String>>,
    seen: mpsc::Receiver<()>,
    reader: Option<std::thread::JoinHandle<()>>,
}

fn spawn(args: &[&str], fault: Option<&str>, marker: Option<String>) -> Proc {
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("shardctl"));
    cmd.env_remove("SHARDCTL_CONFIG")
        .env("SHARDCTL_YES", "1")
        .env_remove("SHARDCTL_FAULT")
        .env("NO_COLOR", "1")
        .arg("--config")
        .arg(&fleet().inventory)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .process_group(0);
    if let Some(f) = fault {
        cmd.env("SHARDCTL_FAULT", f);
    }
    let mut child = cmd.spawn().expect("start shardctl");
    let pipe = child.stderr.take().unwrap();
    let text = Arc::new(Mutex::new(String::new()));
    let (tx, seen) = mpsc::channel();
    let t = Arc::clone(&text);
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(pipe).lines() {
            let Ok(line) = line else { break };
            if marker.as_deref().is_some_and(|m| line.contains(m)) {
                let _ = tx.send(());
            }
            let mut t = t.lock().unwrap();
            t.push_str(&line);
            t.push('\n');
        }
    });
    Proc {
        child,
        text,
        seen,
        reader: Some(reader),
    }
}

/// `shardctl ARGS` paused at `point` (`pause=SECS`), returned once it is there.
fn paused_at(args: &[&str], point: &str, secs: u64) -> Proc {
    let p = spawn(
        args,
        Some(&format!("pause={secs}@{point}")),
        Some(format!("fault point {point}: pausing")),
    );
    p.wait_marker(Duration::from_secs(120));
    p
}

impl Proc {
    fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    fn wait_marker(&self, limit: Duration) {
        if self.seen.recv_timeout(limit).is_err() {
            panic!("fault point not reached; stderr:\n{}", self.stderr());
        }
    }

    fn stderr(&self) -> String {
        self.text.lock().unwrap().clone()
    }

    /// Waits at most `limit` for the exit; (exit code, time taken). Panics (killing the
    /// process) when it does not exit in time.
    fn exit_within(&mut self, limit: Duration) -> (i32, Duration) {
        let t = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                if let Some(r) = self.reader.take() {
                    let _ = r.join();
                }
                return (status.code().unwrap_or(-1), t.elapsed());
            }
            if t.elapsed() > limit {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!(
                    "shardctl did not exit within {limit:?}; stderr:\n{}",
                    self.stderr()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn send(pid: i32, sig: libc::c_int) {
    // SAFETY: kill(2) only sends a signal to a process (group) this test started.
    let rc = unsafe { libc::kill(pid, sig) };
    assert_eq!(rc, 0, "kill({pid}, {sig})");
}

/// Runs `shardctl ARGS` processes all at once; (args, exit code, stderr) of each.
fn concurrently(runs: &[Vec<String>]) -> Vec<(String, i32, String)> {
    let children: Vec<(String, Child)> = runs
        .iter()
        .map(|args| {
            let c = Command::new(assert_cmd::cargo::cargo_bin("shardctl"))
                .env("SHARDCTL_YES", "1")
                .env_remove("SHARDCTL_CONFIG")
                .env_remove("SHARDCTL_FAULT")
                .env("NO_COLOR", "1")
                .arg("--config")
                .arg(&fleet().inventory)
                .args(args)
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            (args.join(" "), c)
        })
        .collect();
    children
        .into_iter()
        .map(|(args, c)| {
            let out = c.wait_with_output().unwrap();
            (
                args,
                out.status.code().unwrap_or(-1),
                String::from_utf8_lossy(&out.stderr).into_owned(),
            )
        })
        .collect()
}

// ---------------------------------------------------------------------------------------
// The journal

fn operation(op: u64) -> OperationRecord {
    dir().operation(op).unwrap()
}

/// The newest move or split of `shard`.
fn last_op_of(shard: u32, kind: OpKind) -> OperationRecord {
    dir()
        .operations(None)
        .unwrap()
        .into_iter()
        .find(|o| o.shard_id == Some(shard) && o.kind == kind)
        .unwrap_or_else(|| panic!("no {kind} of shard {shard} in the journal"))
}

/// The new shard of a split operation.
fn new_shard_of(op: &OperationRecord) -> u32 {
    op.params["split"]["new_shard"].as_u64().unwrap() as u32
}

/// True when the directory shows the operation's flip.
fn flipped(op: &OperationRecord) -> bool {
    let snap = dir().load().unwrap();
    match op.kind {
        OpKind::Split => snap
            .shard(new_shard_of(op))
            .is_ok_and(|s| s.state.as_sql() == "online"),
        _ => snap.shard(op.shard_id.unwrap()).unwrap().node == op.target.clone().unwrap(),
    }
}

/// The operation id named in an interrupt message, which must say how to resume it.
fn named_operation(stderr: &str) -> u64 {
    let line = stderr
        .lines()
        .find(|l| l.contains("stopped at a safe point"))
        .unwrap_or_else(|| panic!("no interrupt message in:\n{stderr}"));
    let op: u64 = line
        .split("operation ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no operation id in {line:?}"));
    assert!(
        line.contains(&format!("`shardctl resume {op}`")),
        "the message names `shardctl resume {op}`: {line}"
    );
    op
}

// ---------------------------------------------------------------------------------------
// What every run must leave

fn hidden_tables(s: &mut Server, schema: Option<&str>) -> i64 {
    let filter = schema
        .map(|x| format!(" AND table_schema = '{x}'"))
        .unwrap_or_default();
    count(
        s,
        &format!("SELECT COUNT(*) FROM information_schema.tables WHERE table_name LIKE '\\_shardctl\\_op%'{filter}"),
    )
}

fn shard_schemas_on(s: &mut Server) -> BTreeSet<String> {
    s.rows(&Stmt::text(
        "SELECT schema_name FROM information_schema.schemata WHERE schema_name LIKE 'app\\_%'",
    ))
    .unwrap()
    .into_iter()
    .map(mysql::from_row::<String>)
    .collect()
}

/// Every row of the shard's tables routes to it; returns the rows of `t`.
fn rows_routed_to(router: &Router, shard: u32, node: &str, context: &str) -> i64 {
    let mut s = server(node);
    let mut n = 0;
    for (table, col) in [("t", "id"), ("shardctl_workload", "k")] {
        let keys: Vec<i64> = s
            .rows(&Stmt::text(format!(
                "SELECT DISTINCT {col} FROM app_{shard}.{table}"
            )))
            .unwrap()
            .into_iter()
            .map(mysql::from_row::<i64>)
            .collect();
        for k in &keys {
            let owner = router.shard_for_function("f", &Key::Int(*k)).unwrap().id;
            assert_eq!(
                owner, shard,
                "{context}: app_{shard}.{table} on {node} holds key {k}, which the Router gives to shard {owner}"
            );
        }
        if table == "t" {
            n = count(&mut s, &format!("SELECT COUNT(*) FROM app_{shard}.t"));
        }
    }
    n
}

/// `shardctl lookup` of the shard's smallest key of `t` names the shard and its node.
fn lookup_agrees(shard: u32, node: &str, context: &str) {
    let key = count(
        &mut server(node),
        &format!("SELECT MIN(id) FROM app_{shard}.t"),
    );
    let out = cli_on(
        &fleet().inventory,
        &[
            "--output",
            "json",
            "lookup",
            "--function",
            "f",
            &key.to_string(),
        ],
    )
    .output()
    .unwrap();
    assert!(out.status.success(), "{context}: lookup {key}: {out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (v["shard"].as_u64(), v["node"].as_str()),
        (Some(u64::from(shard)), Some(node)),
        "{context}: shardctl lookup {key}"
    );
}

/// What one run must leave: `op` and every operation it started finished, no hidden
/// table in the shards' schemas, no channel of `op`, no read_only; each of `shards` (an
/// aborted split's new shard is gone from the directory) has its schemas on its node
/// only, online, every row routed to it, and `rows` rows of `t` between them.
fn assert_settled(context: &str, op: u64, shards: &[u32], rows: i64) {
    for o in dir().operations(None).unwrap() {
        let ours = o.id == op || o.params["parent"].as_u64() == Some(op);
        assert!(
            !ours || o.state.is_finished(),
            "{context}: operation {} ({}) left {} ({:?})",
            o.id,
            o.kind,
            o.state,
            o.error
        );
    }
    let snap = dir().load().unwrap();
    let router = Router::connect(&inventory()).unwrap();
    let channel = common::op_names(&inventory(), op).channel(op);
    let mut total = 0;
    for node in ["node1", "node2", "node3"] {
        let mut s = server(node);
        assert!(
            s.channel_status(&channel).unwrap().is_none(),
            "{context}: channel {channel} left on {node}"
        );
        assert_eq!(
            count(&mut s, "SELECT @@GLOBAL.read_only"),
            0,
            "{context}: {node} left read-only"
        );
        let present = shard_schemas_on(&mut s);
        for &id in shards {
            let schema = format!("app_{id}");
            assert_eq!(
                hidden_tables(&mut s, Some(&schema)),
                0,
                "{context}: hidden tables left in {schema} on {node}"
            );
            let home = snap.shard(id).ok().map(|x| x.node.clone());
            assert_eq!(
                present.contains(&schema),
                home.as_deref() == Some(node),
                "{context}: {schema} on {node}; the directory places shard {id} on {home:?}"
            );
            if home.as_deref() == Some(node) {
                total += rows_routed_to(&router, id, node, context);
                lookup_agrees(id, node, context);
            }
        }
    }
    for &id in shards {
        if let Ok(s) = snap.shard(id) {
            assert_eq!(s.state.as_sql(), "online", "{context}: shard {id}");
        }
    }
    assert_eq!(total, rows, "{context}: rows of t in shards {shards:?}");
}

/// The whole fleet: every operation finished, no hidden table, channel or read_only
/// anywhere, the `app_N` schemas exactly where the directory places shards, every shard
/// online and every row routed to the shard that holds it.
fn assert_fleet_clean(context: &str) {
    for o in dir().operations(None).unwrap() {
        assert!(
            o.state.is_finished(),
            "{context}: operation {} ({}) left {}",
            o.id,
            o.kind,
            o.state
        );
    }
    let snap = dir().load().unwrap();
    let router = Router::connect(&inventory()).unwrap();
    for node in ["node1", "node2", "node3"] {
        let mut s = server(node);
        assert_eq!(hidden_tables(&mut s, None), 0, "{context}: {node}");
        assert_eq!(
            count(
                &mut s,
                "SELECT COUNT(*) FROM information_schema.schemata \
                 WHERE schema_name LIKE '\\_shardctl\\_trash%'"
            ),
            0,
            "{context}: the old copy's trash left on {node}"
        );
        let channels = s.rows(&Stmt::text("SHOW ALL SLAVES STATUS")).unwrap().len();
        assert_eq!(channels, 0, "{context}: channels left on {node}");
        assert_eq!(count(&mut s, "SELECT @@GLOBAL.read_only"), 0, "{context}");
        let expected: BTreeSet<String> = snap
            .shards
            .iter()
            .filter(|x| x.node == node)
            .map(|x| format!("app_{}", x.id))
            .collect();
        assert_eq!(
            shard_schemas_on(&mut s),
            expected,
            "{context}: shard schemas on {node}"
        );
    }
    for shard in &snap.shards {
        assert_eq!(
            shard.state.as_sql(),
            "online",
            "{context}: shard {}",
            shard.id
        );
        rows_routed_to(&router, shard.id, &shard.node, context);
    }
}

/// Runs `case` for every item, collecting failures instead of stopping at the first, so
/// one report shows every point that breaks. `FAULTS_ONLY='a|b'` runs only the items whose
/// description contains one of the strings (to reproduce one point).
fn run_all<T: std::fmt::Debug>(items: &[T], mut case: impl FnMut(&T)) -> Vec<String> {
    let only: Vec<String> = std::env::var("FAULTS_ONLY")
        .map(|v| v.split('|').map(str::to_string).collect())
        .unwrap_or_default();
    let mut failures = Vec::new();
    for item in items {
        let name = format!("{item:?}");
        if !only.is_empty() && !only.iter().any(|o| name.contains(o.as_str())) {
            continue;
        }
        let r = std::panic::catch_unwind(AssertUnwindSafe(|| case(item)));
        if let Err(p) = r {
            let msg = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            failures.push(format!("{item:?}: {msg}"));
        }
    }
    failures
}

fn report_failures(what: &str, failures: &[String]) {
    assert!(
        failures.is_empty(),
        "{what}: {} failures:\n{}",
        failures.len(),
        failures.join("\n---\n")
    );
}

// ---------------------------------------------------------------------------------------
// 1. The split fault matrix

/// A fresh shard on node2 split at its middle (onto node3, or onto node2 itself) under the
/// workload, crashing at `point`; then `then`. After an abort before the flip the old
/// shard holds every row; otherwise the split is done.
fn split_crash_and_recover(point: &str, same_node: bool, then: &str) {
    let (shard, lower) = fresh_shard("node2");
    let to = if same_node { "node2" } else { "node3" };
    let at = lower + ROWS / 2;
    let context = format!("split of shard {shard} onto {to}: crash at {point}, then {then}");
    // Keys on both sides of the split point, one far above the rows.
    let load = Load::start(&[lower, lower + 300, at - 1, at, at + 700, lower + 500_000]);
    let out = cli_on(
        &fleet().inventory,
        &[
            "split",
            "--shard",
            &shard.to_string(),
            "--to",
            to,
            "--at",
            &at.to_string(),
        ],
    )
    .env("SHARDCTL_FAULT", format!("crash@{point}"))
    .output()
    .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("crashing"),
        "{context}: the split never reached the point (exit {:?}):\n{stderr}",
        out.status.code()
    );
    let op = last_op_of(shard, OpKind::Split);
    let new = new_shard_of(&op);
    let was_flipped = flipped(&op);
    let r = cli_on(&fleet().inventory, &[then, &op.id.to_string()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&r.stderr);
    if then == "abort" && was_flipped {
        assert_eq!(
            r.status.code(),
            Some(REFUSED),
            "{context}: abort after the flip must be refused:\n{err}"
        );
        assert!(err.contains("only forward"), "{context}: {err}");
        cli_on(&fleet().inventory, &["resume", &op.id.to_string()])
            .assert()
            .success();
    } else {
        assert!(r.status.success(), "{context}: {then} failed:\n{err}");
    }
    load.finish(&context);
    let aborted = then == "abort" && !was_flipped;
    let snap = dir().load().unwrap();
    assert_eq!(
        snap.shard(new).is_ok(),
        !aborted,
        "{context}: new shard {new} in the directory"
    );
    assert_eq!(
        operation(op.id).state.as_sql(),
        if aborted { "aborted" } else { "done" },
        "{context}"
    );
    assert_settled(&context, op.id, &[shard, new], ROWS);
    if !aborted {
        assert_eq!(snap.shard(new).unwrap().node, to, "{context}");
        let mut s = server(to);
        assert_eq!(
            count(&mut s, &format!("SELECT COUNT(*) FROM app_{new}.t")),
            ROWS / 2,
            "{context}: the new shard's half"
        );
    }
}

fn split_matrix(same_node: bool) {
    fleet();
    let _s = serial();
    let points = fault_points(&Playbook::default_split(), same_node);
    let cases: Vec<(String, &str)> = points
        .iter()
        .flat_map(|p| [(p.clone(), "resume"), (p.clone(), "abort")])
        .collect();
    let started = Instant::now();
    let mut runs = 0;
    let failures = run_all(&cases, |(point, then)| {
        runs += 1;
        split_crash_and_recover(point, same_node, then)
    });
    println!(
        "split fault matrix ({}): {} points x [resume, abort] = {} cases, {runs} run, in {:.0}s",
        if same_node {
            "onto its own node"
        } else {
            "onto another node"
        },
        points.len(),
        cases.len(),
        started.elapsed().as_secs_f64()
    );
    report_failures("split fault matrix", &failures);
    assert_fleet_clean("after the split fault matrix");
}

#[test]
fn split_fault_matrix_onto_another_node() {
    split_matrix(false);
}

#[test]
fn split_fault_matrix_onto_its_own_node() {
    split_matrix(true);
}

// ---------------------------------------------------------------------------------------
// 2. Ctrl-C in every step

#[derive(Debug, Clone, Copy)]
enum Run {
    /// `move --method M` of the moved shard to the other shard node.
    Move(&'static str),
    /// `split` of a fresh shard on node2 onto node3, at its middle.
    Split,
}

/// The command line of `run`, the shard it works on and workload keys in that shard.
fn command(run: Run) -> (Vec<String>, u32, Vec<i64>) {
    match run {
        Run::Move(method) => {
            let to = other(&node_of(MOVED));
            let args = ["move", "--shard", "1", "--to", to, "--method", method];
            (
                args.iter().map(|s| s.to_string()).collect(),
                MOVED,
                moved_shard_keys(),
            )
        }
        Run::Split => {
            let (shard, lower) = fresh_shard("node2");
            let at = lower + ROWS / 2;
            let args = vec![
                "split".to_string(),
                "--shard".into(),
                shard.to_string(),
                "--to".into(),
                "node3".into(),
                "--at".into(),
                at.to_string(),
            ];
            (args, shard, vec![lower, at - 1, at, lower + 500_000])
        }
    }
}

/// The steps of a playbook in order, once each (`after:wait` is the first wait).
fn step_names(pb: &Playbook) -> Vec<String> {
    let mut seen = BTreeSet::new();
    pb.steps
        .iter()
        .map(|s| s.name().to_string())
        .filter(|n| seen.insert(n.clone()))
        .collect()
}

/// Paused after `step`, Ctrl-C to the process group: exit 130 within 5 s with a message
/// naming the operation and `shardctl resume N`; `resume N` then finishes it (or has
/// nothing left to do). Returns how long the exit took.
fn ctrl_c_after(run: Run, step: &str) -> Duration {
    let point = format!("after:{step}");
    let context = format!("{run:?}: Ctrl-C at {point}");
    let (args, shard, keys) = command(run);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let load = Load::start(&keys);
    let mut p = paused_at(&args, &point, 60);
    send(-p.pid(), libc::SIGINT);
    let (code, took) = p.exit_within(Duration::from_secs(5));
    let text = p.stderr();
    let last_step = match run {
        Run::Move(_) => step_names(&Playbook::default_move()).pop(),
        Run::Split => step_names(&Playbook::default_split()).pop(),
    };
    if last_step.as_deref() == Some(step) {
        // Past the last safe point there is nothing left to stop: the operation finishes.
        assert_eq!(
            code, 0,
            "{context}: exit code after {took:?}; stderr:\n{text}"
        );
        load.finish(&context);
        let kind = match run {
            Run::Move(_) => OpKind::Move,
            Run::Split => OpKind::Split,
        };
        let rec = last_op_of(shard, kind);
        assert_eq!(rec.state.as_sql(), "done", "{context}");
        return took;
    }
    assert_eq!(
        code, INTERRUPTED,
        "{context}: exit code after {took:?}; stderr:\n{text}"
    );
    let op = named_operation(&text);
    let r = cli_on(&fleet().inventory, &["resume", &op.to_string()])
        .output()
        .unwrap();
    if !r.status.success() {
        let err = String::from_utf8_lossy(&r.stderr);
        assert_eq!(r.status.code(), Some(2), "{context}: resume {op}:\n{err}");
        assert!(err.contains("nothing to resume"), "{context}: {err}");
    }
    load.finish(&context);
    let rec = operation(op);
    assert_eq!(rec.state.as_sql(), "done", "{context}");
    let shards = match run {
        Run::Move(_) => vec![shard],
        Run::Split => vec![shard, new_shard_of(&rec)],
    };
    assert_settled(&context, op, &shards, ROWS);
    took
}

/// Ctrl-C after every step but the last (see the test below for that one).
fn ctrl_c_in_every_step(run: Run, pb: &Playbook) {
    fleet();
    let _s = serial();
    let mut steps = step_names(pb);
    steps.pop();
    let started = Instant::now();
    let mut slowest = Duration::ZERO;
    let failures = run_all(&steps, |step| {
        slowest = slowest.max(ctrl_c_after(run, step));
    });
    println!(
        "Ctrl-C after each of {} steps of {run:?} in {:.0}s; the slowest exit took {slowest:?}",
        steps.len(),
        started.elapsed().as_secs_f64()
    );
    report_failures(&format!("Ctrl-C during {run:?}"), &failures);
    assert_fleet_clean(&format!("after Ctrl-C in every step of {run:?}"));
}

#[test]
fn ctrl_c_in_every_step_of_a_native_move() {
    ctrl_c_in_every_step(Run::Move("native"), &Playbook::default_move());
}

/// The copy method changes only the backup step: by default a dump move is interrupted
/// after the steps up to its copy (the native move above covers every later one);
/// `FAULTS_FULL_MATRIX=1` interrupts it after every step too.
#[test]
fn ctrl_c_in_every_step_of_a_dump_move() {
    let mut pb = Playbook::default_move();
    if !std::env::var("FAULTS_FULL_MATRIX").is_ok_and(|v| v == "1") {
        let after_copy = pb
            .steps
            .iter()
            .position(|s| s.name() == "backup")
            .expect("the move playbook has a backup step")
            + 2;
        pb.steps.truncate(after_copy);
    }
    ctrl_c_in_every_step(Run::Move("dump"), &pb);
}

#[test]
fn ctrl_c_in_every_step_of_a_split() {
    ctrl_c_in_every_step(Run::Split, &Playbook::default_split());
}

/// A Ctrl-C after the last step's safe point (`after:reset-replication` of a move,
/// `after:prune` of a split) has nothing left to stop: the operation finishes, exit 0.
#[test]
fn ctrl_c_after_the_last_step_lets_the_operation_finish() {
    fleet();
    let _s = serial();
    let last = |pb: Playbook| step_names(&pb).pop().unwrap();
    let cases = [
        (Run::Move("native"), last(Playbook::default_move())),
        (Run::Move("dump"), last(Playbook::default_move())),
        (Run::Split, last(Playbook::default_split())),
    ];
    let failures = run_all(&cases, |(run, step)| {
        ctrl_c_after(*run, step);
    });
    report_failures("Ctrl-C after the last step", &failures);
    assert_fleet_clean("after Ctrl-C after the last step");
}

// ---------------------------------------------------------------------------------------
// 3. The directory's server stopped mid-move

/// An application connection (data privileges only, as the workload uses).
fn app_server(node: &str) -> Server {
    let inv = inventory();
    let mut spec = shardctl::server::ConnectSpec::for_node(&inv, inv.node(node).unwrap()).unwrap();
    spec.credentials = inv.application_credentials(node).unwrap();
    Server::connect(&spec).unwrap()
}

/// The error code of a write of the moved shard's workload table on `node`, if it fails.
fn app_write_error(node: &str, key: i64) -> Option<u16> {
    let mut s = app_server(node);
    s.try_rows(&Stmt::with(
        "INSERT INTO app_1.shardctl_workload (k, seq) VALUES (?, 1)",
        vec![key.into()],
    ))
    .err()
    .map(|e| shardctl::server::server_error_code(&e).unwrap_or(0))
}

/// The move paused at `point` (fence up, flip not done), the directory's mysqld (node1)
/// killed, the pause left to end: the move fails with exit 4 and leaves the shard fenced
/// on its source (the directory still points there); with the directory back, `resume`
/// finishes the move.
fn directory_killed_at(point: &str) {
    let from = node_of(MOVED);
    let to = other(&from);
    let context = format!("move {from} -> {to}, directory killed at {point}");
    let load = Load::start(&moved_shard_keys());
    let mut p = paused_at(&["move", "--shard", "1", "--to", to], point, 4);
    let op = last_op_of(MOVED, OpKind::Move).id;
    kill_node("node1");
    let (code, took) = p.exit_within(Duration::from_secs(180));
    let text = p.stderr();
    let last = text.lines().last().unwrap_or_default().to_string();
    eprintln!("{context}: exit {code} after {took:?}: {last}");
    // Whatever happens, bring the directory back before asserting.
    let fenced = hidden_tables(&mut server(&from), Some("app_1"));
    let direct = app_write_error(&from, 7);
    restart_node("node1");
    assert_eq!(code, SERVER, "{context}: stderr:\n{text}");
    assert!(
        last.contains("node1") && last.contains(&format!("shardctl resume {op}")),
        "{context}: the error names the directory's node and the way on: {last}"
    );
    assert!(
        fenced > 0,
        "{context}: the fence came down without the directory"
    );
    assert_eq!(
        direct,
        Some(1146),
        "{context}: an application write on the source's copy while the directory was down"
    );
    assert_eq!(node_of(MOVED), from, "{context}: no flip");
    cli_on(&fleet().inventory, &["resume", &op.to_string()])
        .assert()
        .success();
    let report = load.finish_safe(&context);
    assert_eq!(node_of(MOVED), to, "{context}");
    assert_settled(&context, op, &[MOVED], ROWS);
    // The Router reopens its directory connection after the outage and sees the flip.
    assert_none_given_up(&report, &context);
}

/// Safety holds (exit 4, fence up, nothing acknowledged lost, resume finishes), and the
/// workload's Router finds the directory again.
#[test]
fn the_directory_node_killed_mid_move_keeps_the_fence_up_and_resume_finishes() {
    fleet();
    let _s = serial();
    let points = ["after:lock", "before:flip"];
    let failures = run_all(&points, |p| directory_killed_at(p));
    report_failures("directory killed", &failures);
    assert_fleet_clean("after the directory was killed");
}

// ---------------------------------------------------------------------------------------
// 4. The source and the target killed

/// The move paused at `point`, the `victim`'s mysqld killed in the pause, the pause left
/// to end: the move fails (exit 4); with the server back, `then` converges.
fn node_killed_at(point: &str, victim: &str, then: &str) {
    let from = node_of(MOVED);
    let to = other(&from);
    let killed = if victim == "source" {
        from.clone()
    } else {
        to.to_string()
    };
    let context =
        format!("move {from} -> {to}, {victim} ({killed}) killed at {point}, then {then}");
    let load = Load::start(&moved_shard_keys());
    let mut p = paused_at(&["move", "--shard", "1", "--to", to], point, 4);
    let op = last_op_of(MOVED, OpKind::Move).id;
    kill_node(&killed);
    let (code, took) = p.exit_within(Duration::from_secs(180));
    let text = p.stderr();
    eprintln!(
        "{context}: exit {code} after {took:?}: {}",
        text.lines().last().unwrap_or_default()
    );
    restart_node(&killed);
    assert_eq!(code, SERVER, "{context}: stderr:\n{text}");
    assert_eq!(node_of(MOVED), from, "{context}: no flip");
    let r = cli_on(&fleet().inventory, &[then, &op.to_string()])
        .output()
        .unwrap();
    assert!(
        r.status.success(),
        "{context}: {then}:\n{}",
        String::from_utf8_lossy(&r.stderr)
    );
    load.finish(&context);
    let want = if then == "resume" { to } else { from.as_str() };
    assert_eq!(node_of(MOVED), want, "{context}");
    assert_settled(&context, op, &[MOVED], ROWS);
}

#[test]
fn the_target_killed_during_catch_up_and_the_source_killed_under_the_fence_converge() {
    fleet();
    let _s = serial();
    let cases = [
        ("after:start-replication", "target", "resume"),
        ("after:start-replication", "target", "abort"),
        ("after:lock", "source", "resume"),
        ("after:lock", "source", "abort"),
    ];
    let failures = run_all(&cases, |(point, victim, then)| {
        node_killed_at(point, victim, then)
    });
    report_failures("source and target killed", &failures);
    assert_fleet_clean("after the source and the target were killed");
}

// ---------------------------------------------------------------------------------------
// 5. Racing

fn verbs(resumes: usize, aborts: usize, op: u64) -> Vec<Vec<String>> {
    let mut runs = Vec::new();
    for i in 0..resumes.max(aborts) {
        if i < resumes {
            runs.push(vec!["resume".to_string(), op.to_string()]);
        }
        if i < aborts {
            runs.push(vec!["abort".to_string(), op.to_string()]);
        }
    }
    runs
}

/// What a refused resume or abort must not change.
#[derive(Debug, PartialEq)]
struct Seen {
    epoch: u64,
    owner: Option<String>,
    state: String,
    steps: Vec<(String, String)>,
    effects: usize,
    version: u64,
    hidden: i64,
    read_only: Vec<i64>,
}

fn seen(op: u64, source: &str) -> Seen {
    let rec = operation(op);
    Seen {
        epoch: rec.epoch,
        owner: rec.owner.clone(),
        state: rec.state.as_sql().to_string(),
        steps: rec
            .steps
            .iter()
            .map(|s| (s.name.clone(), s.state.to_string()))
            .collect(),
        effects: rec.effects.len(),
        version: dir().version().unwrap(),
        hidden: hidden_tables(&mut server(source), Some("app_1")),
        read_only: ["node1", "node2", "node3"]
            .iter()
            .map(|n| count(&mut server(n), "SELECT @@GLOBAL.read_only"))
            .collect(),
    }
}

/// Paused at `point`: 5 aborts and 5 resumes at once are all refused (exit 5, naming the
/// owner) and change nothing; then `stop` and `resume` finish the move.
fn race_a_live_owner(point: &str) {
    let from = node_of(MOVED);
    let to = other(&from);
    let context = format!("move {from} -> {to} paused at {point}");
    let load = Load::start(&moved_shard_keys());
    let mut p = paused_at(&["move", "--shard", "1", "--to", to], point, 60);
    let op = last_op_of(MOVED, OpKind::Move).id;
    let before = seen(op, &from);
    for (args, code, err) in concurrently(&verbs(5, 5, op)) {
        assert_eq!(code, REFUSED, "{context}: {args}: {err}");
        assert!(
            err.contains("is driven by") && err.contains(&format!(":{}", p.pid())),
            "{context}: {args}: {err}"
        );
    }
    assert_eq!(
        seen(op, &from),
        before,
        "{context}: a refused command changed something"
    );
    cli_on(&fleet().inventory, &["stop", &op.to_string()])
        .assert()
        .success();
    let (code, _) = p.exit_within(Duration::from_secs(30));
    assert_eq!(code, INTERRUPTED, "{context}: {}", p.stderr());
    cli_on(&fleet().inventory, &["resume", &op.to_string()])
        .assert()
        .success();
    load.finish(&context);
    assert_eq!(node_of(MOVED), to, "{context}");
    assert_settled(&context, op, &[MOVED], ROWS);
}

#[test]
fn resume_and_abort_racing_a_live_owner_are_all_refused_and_change_nothing() {
    fleet();
    let _s = serial();
    let points = ["after:backup", "after:lock", "before:flip", "after:flip"];
    let failures = run_all(&points, |p| race_a_live_owner(p));
    report_failures("racing a live owner", &failures);
    assert_fleet_clean("after racing a live owner");
}

/// The owner crashes at `point`; 3 resumes and 3 aborts start at once. Exactly one takes
/// the dead owner's lease over; the others are refused while it drives, or find nothing
/// left to do, or take the lease it released; the journal's effects come from one epoch
/// after another, never interleaved; the move ends done on the target or aborted on the
/// source, with every acknowledged write.
fn race_after_a_crash(point: &str) {
    let from = node_of(MOVED);
    let to = other(&from);
    let context = format!("move {from} -> {to} crashed at {point}");
    let load = Load::start(&moved_shard_keys());
    let out = cli_on(&fleet().inventory, &["move", "--shard", "1", "--to", to])
        .env("SHARDCTL_FAULT", format!("crash@{point}"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("crashing"), "{context}: {err}");
    let op = last_op_of(MOVED, OpKind::Move).id;
    let results = concurrently(&verbs(3, 3, op));
    let mut takeovers = 0;
    let mut claims = 0;
    for (args, code, err) in &results {
        let took_over = err.contains("taking over from");
        takeovers += usize::from(took_over);
        let claimed = took_over || *code == 0 || err.contains("only forward");
        claims += usize::from(claimed);
        if !claimed {
            let refused = *code == REFUSED
                && (err.contains("is driven by") || err.contains("just taken over"));
            let finished = *code == 2 && err.contains("nothing to");
            assert!(refused || finished, "{context}: {args}: exit {code}: {err}");
        }
    }
    let summary: Vec<String> = results
        .iter()
        .map(|(a, c, e)| format!("{a} -> {c}: {}", e.lines().last().unwrap_or_default()))
        .collect();
    eprintln!("{context}:\n  {}", summary.join("\n  "));
    assert_eq!(takeovers, 1, "{context}: {summary:#?}");
    let mut extra = 0;
    if !operation(op).state.is_finished() {
        // Every racer lost or gave up (an abort after the flip): going forward works.
        cli_on(&fleet().inventory, &["resume", &op.to_string()])
            .assert()
            .success();
        extra = 1;
    }
    let rec = operation(op);
    assert_eq!(
        rec.epoch as usize,
        1 + claims + extra,
        "{context}: one epoch per process that drove the operation: {summary:#?}"
    );
    assert!(
        rec.effects.windows(2).all(|w| w[0].epoch <= w[1].epoch),
        "{context}: effects of two owners interleave: {:?}",
        rec.effects
            .iter()
            .map(|e| (e.seq, e.epoch, e.effect.name()))
            .collect::<Vec<_>>()
    );
    load.finish(&context);
    let home = node_of(MOVED);
    match rec.state.as_sql() {
        "done" => assert_eq!(home, to, "{context}"),
        "aborted" => assert_eq!(home, from, "{context}"),
        other => panic!("{context}: operation left {other}"),
    }
    assert_settled(&context, op, &[MOVED], ROWS);
}

#[test]
fn racing_takeovers_after_the_owner_crashed_let_one_process_drive_at_a_time() {
    fleet();
    let _s = serial();
    let points = [
        "after:backup",
        "after:lock",
        "before:flip",
        "done:flip",
        "journaled:drop-source",
    ];
    let failures = run_all(&points, |p| race_after_a_crash(p));
    report_failures("racing takeovers", &failures);
    assert_fleet_clean("after racing takeovers");
}
