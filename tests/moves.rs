//! `shardctl move` on real servers: under a workload with each fence, with both copy
//! methods on a schema holding every kind of object (tests/fixtures/every_object.sql),
//! after crashes (resume), on Ctrl-C, on abort, and refusing bad input without changing
//! anything.

mod common;

use common::{
    connect, count, exec, serial, shardctl, FleetSetup, Function, SharedFleet, EMPLOYEE_TABLES,
};
use predicates::prelude::*;
use shardctl::config::Inventory;
use shardctl::directory::{Directory, Key, Router};
use shardctl::sandbox::{Sandbox, SandboxBuilder};
use shardctl::server::{Server, Stmt};
use shardctl::workload;
use std::sync::OnceLock;
use std::time::Duration;

const USAGE: i32 = 2;
const REFUSED: i32 = 5;

/// 3 nodes; employees sharded in 4 shards (node1, node2, node3, node2), data written
/// through the router, the workload table in every shard.
static FLEET: SharedFleet = SharedFleet::new(3, set_up);

/// Sets up the fleet once, on first use (see [`FLEET`]).
fn set_up(sb: &Sandbox) {
    FleetSetup::new()
        .fixture("company.sql")
        .function(Function::range("emp").tables(EMPLOYEE_TABLES).shards(&[
            ("node1", "0"),
            ("node2", "10000"),
            ("node3", "20000"),
            ("node2", "30000"),
        ]))
        .global("employees.departments")
        .sample(&["--count", "3000", "--start", "1", "--step", "13"])
        .workload("emp")
        .build(sb);
}

fn inventory() -> Inventory {
    common::inventory(FLEET.sandbox())
}

/// The shard holding `key`, and its node.
fn shard_of(key: i64) -> (u32, String) {
    let r = Router::connect(&inventory()).unwrap();
    let s = r.shard_for_function("emp", &Key::Int(key)).unwrap();
    (s.id, s.node.clone())
}

fn schema_exists(node: &str, schema: &str) -> bool {
    let mut s = connect(FLEET.sandbox(), node);
    s.schema_exists(&shardctl::ident::Ident::new("schema", schema).unwrap())
        .unwrap()
}

fn directory_version() -> u64 {
    Directory::open(&inventory()).unwrap().version().unwrap()
}

fn last_op() -> u64 {
    Directory::open(&inventory())
        .unwrap()
        .operations(None)
        .unwrap()[0]
        .id
}

fn move_under_workload(key: i64, to: &str, extra: &[&str]) -> (workload::Report, u32, String) {
    move_under(key, to, extra, false, None)
}

/// A move under the workload, its routers fresh or stale; every acknowledged write is
/// where the directory now says its key lives, none acknowledged by a shard not owning it.
fn move_under(
    key: i64,
    to: &str,
    extra: &[&str],
    stale_router: bool,
    fault: Option<&str>,
) -> (workload::Report, u32, String) {
    let (shard, from) = shard_of(key);
    let running = workload::spawn(
        inventory(),
        workload::Options {
            rate: 300,
            stale_router,
            ..workload::Options::new("emp")
        },
    )
    .unwrap();
    std::thread::sleep(Duration::from_millis(800));
    let shard_s = shard.to_string();
    let mut args = vec!["move", "--shard", shard_s.as_str(), "--to", to];
    args.extend_from_slice(extra);
    let mut cmd = FLEET.cli(&args);
    if let Some(f) = fault {
        cmd.env("SHARDCTL_FAULT", f);
    }
    let out = cmd.output().unwrap();
    std::thread::sleep(Duration::from_millis(800));
    let report = running.stop().unwrap();
    assert!(
        out.status.success(),
        "move failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut report = report;
    let check = report.check(&inventory(), "emp").unwrap();
    let missing = check.missing;
    assert_eq!(report.wrong_shard_writes, 0, "{:?}", check.wrong_shard);
    assert!(
        missing.is_empty(),
        "{} acknowledged writes lost: {:?}",
        missing.len(),
        &missing[..missing.len().min(5)]
    );
    assert!(report.acked > 300, "the workload wrote: {}", report.acked);
    assert!(
        report.streams.iter().all(|s| s.lost == 0),
        "{:?}",
        report.streams
    );
    // The directory points at the target; the source copy is gone; the target has the data.
    assert_eq!(shard_of(key), (shard, to.to_string()));
    assert!(!schema_exists(&from, &format!("employees_{shard}")));
    let mut t = connect(FLEET.sandbox(), to);
    assert!(
        count(
            &mut t,
            &format!("SELECT COUNT(*) FROM employees_{shard}.employees")
        ) > 0
    );
    (report, shard, from)
}

#[test]
fn a_move_under_load_with_the_shard_fence_loses_nothing_and_spares_other_shards() {
    FLEET.sandbox();
    let _s = serial();
    // Shards 10000.. and 30000.. share node2; move the first, the second must not notice.
    let (other_shard, other_node) = shard_of(30000);
    let (from_shard, from_node) = shard_of(10000);
    assert_eq!(other_node, from_node);
    // The fence stays up a second longer than it needs (a pause after the lock step), so
    // the moved shard's pause is long whatever the machine's load.
    let (report, moved, _) = move_under(
        10000,
        "node3",
        &["--fence", "shard"],
        false,
        Some("pause=1@after:lock"),
    );
    assert_eq!(moved, from_shard);
    // One stream per shard, each with its own thread and connection.
    assert_eq!(report.streams.len(), 4, "{:?}", report.streams);
    let stream = |shard: u32| {
        report
            .streams
            .iter()
            .position(|s| s.shard_at_start == shard)
            .unwrap()
    };
    let (o, m) = (stream(other_shard), stream(from_shard));
    let (other, mine) = (&report.streams[o], &report.streams[m]);
    assert_eq!(
        other.failed_attempts, 0,
        "a write to another shard on the source failed"
    );
    assert!(mine.acked > 50);
    assert!(mine.failed_attempts > 0, "the fence never stopped a write");
    // The moved shard's longest pause is its own: every other shard (one of them on the
    // same node) kept writing through it, and paused less.
    let (from, to) = mine.longest_pause.unwrap();
    assert!(mine.max_pause_ms >= 1000, "{mine:?}");
    for (i, s) in report.streams.iter().enumerate().filter(|(i, _)| *i != m) {
        let during = report
            .acks
            .iter()
            .filter(|a| a.stream == i && a.at > from && a.at < to)
            .count();
        assert!(
            during > 0,
            "no write of shard {} during the {} ms pause of the moved shard",
            s.shard_at_start,
            mine.max_pause_ms
        );
        assert!(
            s.max_pause_ms < mine.max_pause_ms,
            "shard {} paused {} ms, the moved shard {} ms",
            s.shard_at_start,
            s.max_pause_ms,
            mine.max_pause_ms
        );
    }
}

#[test]
fn a_stale_router_writes_nothing_to_the_wrong_shard_across_a_move() {
    FLEET.sandbox();
    let _s = serial();
    let (shard, from) = shard_of(20000);
    let to = if from == "node1" { "node2" } else { "node1" };
    // move_under asserts wrong_shard_writes == 0 and nothing missing.
    let (report, moved, _) = move_under(20000, to, &["--fence", "shard"], true, None);
    assert_eq!(moved, shard);
    assert!(report.stale_router);
    let mine = report
        .streams
        .iter()
        .find(|s| s.shard_at_start == shard)
        .unwrap();
    // Its router re-read the directory only because a server's error told it to, and
    // then wrote to the new location.
    assert!(mine.reloads > 0, "{mine:?}");
    assert!(mine.failed_attempts > 0, "{mine:?}");
    assert!(
        report.acks.iter().any(|a| a.shard == shard && a.node == to),
        "no write reached the moved shard on {to}"
    );
    for s in report.streams.iter().filter(|s| s.shard_at_start != shard) {
        assert_eq!(s.reloads, 0, "a stale router re-read the directory: {s:?}");
    }
}

/// Changes the lower bound of `shard` from `from` to `to` in the directory by hand, as one
/// change (the version bumps), moving no data.
fn set_lower_bound(shard: u32, from: i64, to: i64) {
    let inv = inventory();
    let ranges = format!("`{}`.ranges", inv.file.directory.schema);
    let mut d = Directory::open(&inv).unwrap();
    d.change(|d, _| {
        d.server().exec(&Stmt::with(
            format!("UPDATE {ranges} SET lower_bound = ? WHERE shard_id = ? AND lower_bound = ?"),
            vec![to.into(), shard.into(), from.into()],
        ))?;
        Ok(((), shardctl::directory::Changed::shard(shard)))
    })
    .unwrap();
}

/// Puts a lower bound back when dropped, even if the test fails.
struct RestoreBound(u32, i64, i64);

impl Drop for RestoreBound {
    fn drop(&mut self) {
        set_lower_bound(self.0, self.1, self.2);
    }
}

#[test]
fn a_stale_router_that_writes_to_a_shard_no_longer_owning_the_key_is_counted() {
    FLEET.sandbox();
    let _s = serial();
    // Keys [5000, 10000) move by hand from the shard of 0 to the shard of 10000 (no data
    // moved, no fence, no guard): a stale router keeps writing them to the shard of 0,
    // which accepts them; the check must count each as a wrong-shard write.
    let (owner, owner_node) = shard_of(0);
    let (next, _) = shard_of(10000);
    let running = workload::spawn(
        inventory(),
        workload::Options {
            rate: 400,
            stale_router: true,
            ..workload::Options::new("emp")
        },
    )
    .unwrap();
    set_lower_bound(next, 10000, 5000);
    let _restore = RestoreBound(next, 5000, 10000);
    std::thread::sleep(Duration::from_millis(1500));
    let mut report = running.stop().unwrap();
    let check = report.check(&inventory(), "emp").unwrap();
    assert!(report.wrong_shard_writes > 0, "{:?}", report.streams);
    assert_eq!(report.wrong_shard_writes, check.wrong_shard.len() as u64);
    for a in &check.wrong_shard {
        assert!(
            a.key >= Key::Int(5000) && a.key < Key::Int(10000),
            "{a:?} is not a key that changed hands"
        );
        assert_eq!(
            (a.shard, a.node.as_str()),
            (owner, owner_node.as_str()),
            "{a:?}"
        );
    }
    let stream = report
        .streams
        .iter()
        .find(|s| s.shard_at_start == owner)
        .unwrap();
    assert_eq!(stream.wrong_shard_writes, report.wrong_shard_writes);
    assert_eq!(
        stream.reloads, 0,
        "no error told the stale router to re-read"
    );
    // The same writes, checked against the directory as it was, are all in place.
    drop(_restore);
    report.check(&inventory(), "emp").unwrap();
    assert_eq!(
        (report.missing, report.wrong_shard_writes),
        (0, 0),
        "{:?}",
        report.streams
    );
}

#[test]
fn a_move_under_load_with_the_read_only_fence_loses_nothing() {
    FLEET.sandbox();
    let _s = serial();
    let (_, _, from) = move_under_workload(0, "node3", &["--fence", "read-only"]);
    let mut src = connect(FLEET.sandbox(), &from);
    assert!(!src.settings().unwrap().read_only, "the fence was lifted");
    // And back again with the dump method.
    move_under_workload(0, &from, &["--fence", "read-only", "--method", "dump"]);
}

/// `--via stream`: the change stream, not a channel, keeps the copy current across nodes
/// (and back): nothing lost, no channel ever on the target, the stream's checkpoint gone.
#[test]
fn a_move_via_the_change_stream_under_load_loses_nothing() {
    FLEET.sandbox();
    let _s = serial();
    let (_, at) = shard_of(20000);
    let to = if at == "node3" { "node1" } else { "node3" };
    let (_, shard, from) = move_under_workload(20000, to, &["--via", "stream"]);
    let rec = Directory::open(&inventory())
        .unwrap()
        .operation(last_op())
        .unwrap();
    assert!(
        rec.last_effect("start-stream").is_some(),
        "{:?}",
        rec.effects
    );
    assert!(rec.last_effect("end-stream").is_some(), "{:?}", rec.effects);
    assert!(
        rec.last_effect("point-channel").is_none(),
        "{:?}",
        rec.effects
    );
    let mut t = connect(FLEET.sandbox(), to);
    let checkpoints = t
        .rows(&Stmt::text(
            "SELECT stream_id FROM information_schema.TABLES JOIN _shardctl.stream_checkpoints WHERE TABLE_SCHEMA = '_shardctl' AND TABLE_NAME = 'stream_checkpoints'",
        ))
        .map(|r| r.len())
        .unwrap_or(0);
    assert_eq!(checkpoints, 0, "the stream's checkpoint is gone");
    let channels = t.rows(&Stmt::text("SHOW ALL SLAVES STATUS")).unwrap().len();
    assert_eq!(channels, 0, "no channel on the target");
    // And back with the shard fence, still streamed.
    let (_, again, _) = move_under_workload(20000, &from, &["--via", "stream", "--fence", "shard"]);
    assert_eq!(again, shard);
}

/// The change stream's catch-up (`wait`) ends only once the backlog written after the copy
/// is applied: a stream that has read no event yet does not count as caught up. The move
/// crashes after its copy, the source takes 3,000 row changes, and the resumed run's `wait`
/// reports at least those applied.
#[test]
fn a_streamed_move_waits_for_the_changes_made_since_its_copy() {
    FLEET.sandbox();
    let _s = serial();
    let (shard, from) = shard_of(30000);
    let to = if from == "node3" { "node1" } else { "node3" };
    let shard_s = shard.to_string();
    let out = FLEET
        .cli(&["move", "--shard", &shard_s, "--to", to, "--via", "stream"])
        .env("SHARDCTL_FAULT", "crash@after:backup")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let mut src = connect(FLEET.sandbox(), &from);
    let ids: Vec<i64> = src
        .rows(&Stmt::text(format!(
            "SELECT emp_no FROM employees_{shard}.employees ORDER BY emp_no LIMIT 3000"
        )))
        .unwrap()
        .into_iter()
        .map(|r| r.get::<i64, _>(0).unwrap())
        .collect();
    assert!(ids.len() >= 100, "{}", ids.len());
    for id in &ids {
        exec(
            &mut src,
            &[&format!(
                "UPDATE employees_{shard}.employees SET hire_date = hire_date + INTERVAL 1 DAY WHERE emp_no = {id}"
            )],
        );
    }
    let out = FLEET
        .cli(&["--output", "json", "resume", &last_op().to_string()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let wait = text
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|v| v["event"] == "step_done" && v["name"] == "wait")
        .unwrap_or_else(|| panic!("no wait step: {text}"));
    let applied = wait["detail"]["row_changes"].as_u64().unwrap_or(0);
    assert!(
        applied >= ids.len() as u64,
        "the catch-up ended with {applied} of {} row changes applied: {wait}",
        ids.len()
    );
    assert_eq!(shard_of(30000), (shard, to.to_string()));
}

#[test]
fn resume_after_a_crash_during_the_copy() {
    FLEET.sandbox();
    let _s = serial();
    let (shard, from) = shard_of(20000);
    let to = if from == "node1" { "node2" } else { "node1" };
    let out = FLEET
        .cli(&["move", "--shard", &shard.to_string(), "--to", to])
        .env("SHARDCTL_FAULT", "crash@copy")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let op = last_op();
    // The journal shows the operation running; the shard has not moved.
    assert_eq!(shard_of(20000), (shard, from.clone()));
    // Another move of the same shard is refused.
    FLEET
        .cli(&["move", "--shard", &shard.to_string(), "--to", to])
        .assert()
        .code(REFUSED)
        .stderr(predicates::str::contains("under operation"));
    // The owner's process is gone although its heartbeat is fresh: resume takes over, and
    // says so.
    FLEET
        .cli(&["resume", &op.to_string()])
        .assert()
        .success()
        .stderr(predicates::str::contains("taking over"));
    assert_eq!(shard_of(20000), (shard, to.to_string()));
    assert!(!schema_exists(&from, &format!("employees_{shard}")));
}

#[test]
fn resume_after_a_crash_with_the_fence_up() {
    FLEET.sandbox();
    let _s = serial();
    let (shard, from) = shard_of(20000);
    let to = if from == "node3" { "node2" } else { "node3" };
    let out = FLEET
        .cli(&["move", "--shard", &shard.to_string(), "--to", to])
        .env("SHARDCTL_FAULT", "crash@after:lock")
        .output()
        .unwrap();
    assert!(!out.status.success());
    // The fence survives the crash: the shard's tables are out of reach on the source.
    let mut src = connect(FLEET.sandbox(), &from);
    let err = src
        .exec(&Stmt::text(format!(
            "SELECT COUNT(*) FROM employees_{shard}.employees"
        )))
        .unwrap_err();
    assert!(err.to_string().contains("1146"), "{err}");
    FLEET
        .cli(&["resume", &last_op().to_string()])
        .assert()
        .success();
    assert_eq!(shard_of(20000), (shard, to.to_string()));
    assert!(!schema_exists(&from, &format!("employees_{shard}")));
}

#[test]
fn abort_before_the_flip_returns_everything() {
    FLEET.sandbox();
    let _s = serial();
    let (shard, from) = shard_of(30000);
    let to = if from == "node1" { "node3" } else { "node1" };
    let out = FLEET
        .cli(&["move", "--shard", &shard.to_string(), "--to", to])
        .env("SHARDCTL_FAULT", "crash@after:start-replication")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let op = last_op();
    let channel = common::op_names(&inventory(), op).channel(op);
    let mut target = connect(FLEET.sandbox(), to);
    assert!(target.channel_status(&channel).unwrap().is_some());
    FLEET.cli(&["abort", &op.to_string()]).assert().success();
    assert!(target.channel_status(&channel).unwrap().is_none());
    assert!(!schema_exists(to, &format!("employees_{shard}")));
    assert_eq!(shard_of(30000), (shard, from.clone()));
    let mut src = connect(FLEET.sandbox(), &from);
    assert!(
        count(
            &mut src,
            &format!("SELECT COUNT(*) FROM employees_{shard}.employees")
        ) > 0
    );
    let ops = FLEET
        .cli(&["--output", "json", "ops", &op.to_string()])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&ops.stdout).unwrap();
    assert_eq!(v["operation"]["state"], "aborted");
    // The shard can be moved again.
    FLEET
        .cli(&["move", "--shard", &shard.to_string(), "--to", to, "--check"])
        .assert()
        .success();
    FLEET.cli(&["abort", &op.to_string()]).assert().code(USAGE);
}

#[test]
fn ctrl_c_with_the_fence_up_lifts_it() {
    FLEET.sandbox();
    let _s = serial();
    let (shard, from) = shard_of(10000);
    let to = if from == "node1" { "node2" } else { "node1" };
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("shardctl"))
        .env("SHARDCTL_YES", "1")
        .arg("--config")
        .arg(FLEET.inventory_path())
        .args(["move", "--shard", &shard.to_string(), "--to", to])
        .env("SHARDCTL_FAULT", "pause@after:lock")
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(stderr));
    for line in lines.by_ref() {
        if line.unwrap().contains("fault point after:lock") {
            break;
        }
    }
    // SAFETY: kill only sends a signal to our child.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    // The fence is lifted: the shard is writable on the source and online in the directory.
    let mut src = connect(FLEET.sandbox(), &from);
    exec(
        &mut src,
        &[&format!(
            "INSERT INTO employees_{shard}.shardctl_workload (k, seq) VALUES (10000, 1)"
        )],
    );
    assert_eq!(shard_of(10000), (shard, from));
    let snap = Directory::open(&inventory()).unwrap().load().unwrap();
    assert_eq!(snap.shard(shard).unwrap().state.as_sql(), "online");
    FLEET
        .cli(&["abort", &last_op().to_string()])
        .assert()
        .success();
}

#[test]
fn bad_moves_are_refused_without_a_change() {
    FLEET.sandbox();
    let _s = serial();
    let (shard, from) = shard_of(0);
    let to = if from == "node1" { "node2" } else { "node1" };
    let s = shard.to_string();
    let before = directory_version();
    let cases: Vec<(&str, Vec<&str>, i32, String)> = vec![
        (
            "an unknown shard",
            vec!["move", "--shard", "999", "--to", "node1"],
            USAGE,
            "unknown shard 999".into(),
        ),
        (
            "an unknown node",
            vec!["move", "--shard", &s, "--to", "node9"],
            USAGE,
            "unknown node \"node9\"".into(),
        ),
        (
            "the node the shard lives on",
            vec!["move", "--shard", &s, "--to", &from],
            USAGE,
            format!("already lives on {from}"),
        ),
    ];
    for (name, args, code, needle) in cases {
        let out = FLEET.cli(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{name} {args:?}: {err}");
        assert!(err.contains(&needle), "{name} {args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{name}: {err}");
    }
    // A target that already holds the schema.
    let mut t = connect(FLEET.sandbox(), to);
    exec(&mut t, &[&format!("CREATE DATABASE employees_{shard}")]);
    FLEET
        .cli(&["move", "--shard", &s, "--to", to])
        .assert()
        .code(REFUSED)
        .stderr(predicates::str::contains(format!(
            "already has a schema employees_{shard}"
        )));
    exec(&mut t, &[&format!("DROP DATABASE employees_{shard}")]);
    // A replication account that cannot log in.
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(FLEET.inventory_path()).unwrap();
    let broken = text.replace(
        &format!(
            "defaults_file: {}",
            FLEET.sandbox().dir().join("replication.cnf").display()
        ),
        "password: wrong-password",
    );
    assert_ne!(broken, text);
    let inv = common::write_file(dir.path(), "inv.yaml", &broken);
    let out = shardctl()
        .arg("--config")
        .arg(&inv)
        .args(["move", "--shard", &s, "--to", to])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(REFUSED));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("replication account cannot connect"), "{err}");
    assert!(!err.contains("wrong-password"));
    assert_eq!(
        directory_version(),
        before,
        "a refused move changed the directory"
    );
    // A playbook with an unknown parameter is refused before anything runs.
    let pb = common::write_file(
        dir.path(),
        "pb.yaml",
        &shardctl::playbook::MOVE_PLAYBOOK.replace("keep: false", "keep: false\n    shred: true"),
    );
    FLEET
        .cli(&[
            "move",
            "--shard",
            &s,
            "--to",
            to,
            "--playbook",
            pb.to_str().unwrap(),
        ])
        .assert()
        .code(3)
        .stderr(predicates::str::contains("pb.yaml:").and(predicates::str::contains("shred")));
    // The dry run prints every step without touching anything.
    let out = FLEET
        .cli(&["move", "--shard", &s, "--to", to, "--dry-run"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    for step in [
        "preflight",
        "backup",
        "change-master",
        "verify",
        "lock",
        "confirm",
        "flip",
        "drop-source",
        "unlock",
    ] {
        assert!(text.contains(step), "{step} missing from the plan: {text}");
    }
    assert!(text.contains("MASTER_PASSWORD = '***'"));
    assert_eq!(directory_version(), before);
}

#[test]
fn a_source_without_binary_log_is_refused() {
    let sb = SandboxBuilder::for_tests(2)
        .unwrap()
        .extra_config("skip-log-bin")
        .start()
        .unwrap();
    let inv = sb.inventory_path();
    let run = |args: &[&str]| shardctl().arg("--config").arg(&inv).args(args).assert();
    FleetSetup::new()
        .nodes(&["node1", "node2"])
        .schema(&[
            "CREATE DATABASE app",
            "CREATE TABLE app.t (id INT PRIMARY KEY)",
        ])
        .function(
            Function::range("f")
                .table("app.t", "id")
                .shard("node1", "0"),
        )
        .build(&sb);
    run(&["move", "--shard", "1", "--to", "node2"])
        .code(REFUSED)
        .stderr(predicates::str::contains(
            "binary logging is off on the source node1",
        ));
}

/// Every object of a schema: table rows and checksums, and the definitions of tables,
/// views, routines, triggers and events as `SHOW CREATE` prints them (definers and SQL
/// SECURITY included), with the schema's own name left out.
fn signature(server: &mut Server, schema: &str) -> Vec<String> {
    let id = shardctl::ident::Ident::new("schema", schema).unwrap();
    let mut out = Vec::new();
    for t in server.tables(&id).unwrap() {
        if t.is_view {
            let ddl = server.show_create(&id, &t).unwrap();
            out.push(format!(
                "view {} {}",
                t.name,
                ddl.replace(&format!("`{schema}`."), "")
            ));
        } else {
            let (rows, sum) = server.count_and_checksum(&id, &t.name).unwrap();
            out.push(format!("table {} {rows} {sum:?}", t.name));
            let ddl = server.show_create(&id, &t).unwrap();
            out.push(format!("ddl {} {}", t.name, ddl));
        }
    }
    use shardctl::server::statements::ObjectKind;
    for kind in [
        ObjectKind::Function,
        ObjectKind::Procedure,
        ObjectKind::Trigger,
        ObjectKind::Event,
    ] {
        for name in server.objects(&id, kind).unwrap() {
            let ddl = server.show_create_object(&id, kind, &name).unwrap();
            out.push(format!(
                "{kind:?} {name} {}",
                ddl.replace(&format!("`{schema}`."), "")
            ));
        }
    }
    out
}

/// One row as text, NULL as `NULL`.
fn row_text(row: mysql::Row) -> String {
    row.unwrap()
        .into_iter()
        .map(|v| match v {
            mysql::Value::NULL => "NULL".to_string(),
            mysql::Value::Bytes(b) => String::from_utf8_lossy(&b).into_owned(),
            other => format!("{other:?}"),
        })
        .collect::<Vec<_>>()
        .join(" | ")
}

/// What `SHOW CREATE` leaves out: the context each object was created in (the schema's
/// default character set; each routine's, trigger's, view's and event's definer, SQL
/// SECURITY, sql_mode, character_set_client, collation_connection and database collation;
/// triggers' order, events' time zone and schedule), and what the routines and views
/// answer in it.
fn creation_context(server: &mut Server, schema: &str) -> Vec<String> {
    let queries = [
        "SELECT 'schema', default_character_set_name, default_collation_name \
         FROM information_schema.schemata WHERE schema_name = ?",
        "SELECT 'routine', routine_type, routine_name, definer, security_type, sql_mode, \
         character_set_client, collation_connection, database_collation, sql_data_access, \
         is_deterministic, routine_comment \
         FROM information_schema.routines WHERE routine_schema = ? ORDER BY routine_name",
        "SELECT 'trigger', event_object_table, action_timing, event_manipulation, action_order, \
         trigger_name, definer, sql_mode, character_set_client, collation_connection, \
         database_collation \
         FROM information_schema.triggers WHERE trigger_schema = ? \
         ORDER BY event_object_table, action_timing, event_manipulation, action_order",
        "SELECT 'view', table_name, definer, security_type, check_option, algorithm, \
         character_set_client, collation_connection \
         FROM information_schema.views WHERE table_schema = ? ORDER BY table_name",
        "SELECT 'event', event_name, definer, time_zone, sql_mode, character_set_client, \
         collation_connection, database_collation, status, on_completion, execute_at, \
         interval_value, interval_field, starts, ends, event_comment \
         FROM information_schema.events WHERE event_schema = ? ORDER BY event_name",
    ];
    let mut out = Vec::new();
    for sql in queries {
        let rows = server
            .rows(&Stmt::with(sql, vec![schema.into()]))
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
        out.extend(rows.into_iter().map(row_text));
    }
    // Behaviour that depends on that context: `label` concatenates only under its own
    // PIPES_AS_CONCAT and takes utf8mb4 arguments only in a utf8mb4 schema; `same_letter`
    // compares under its case-sensitive collation.
    let s = format!("`{schema}`");
    for sql in [
        format!("SELECT {s}.label('a', 'b')"),
        format!("SELECT {s}.label('日本', '😀')"),
        format!("SELECT {s}.same_letter()"),
        format!("SELECT COUNT(*), GROUP_CONCAT(name ORDER BY id) FROM {s}.active_vip"),
        format!("SELECT labels FROM {s}.place_summary ORDER BY customer_id"),
    ] {
        let answer = match server.rows(&Stmt::text(sql.clone())) {
            Ok(rows) => rows
                .into_iter()
                .map(row_text)
                .collect::<Vec<_>>()
                .join(", "),
            Err(e) => format!("error: {e}"),
        };
        out.push(format!("{sql} -> {answer}"));
    }
    let call = format!("CALL {s}.order_totals(1, @orders, @total)");
    let answer = server
        .exec(&Stmt::text(call.clone()))
        .and_then(|_| {
            server.rows(&Stmt::text(
                "SELECT CONCAT_WS(' ', @orders, @total)".to_string(),
            ))
        })
        .map(|rows| {
            rows.into_iter()
                .map(row_text)
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_else(|e| format!("error: {e}"));
    out.push(format!("{call} -> {answer}"));
    out.into_iter()
        .map(|l| l.replace(&format!("`{schema}`"), "`<schema>`"))
        .collect()
}

/// A new shard of function `obj` on node1 holding tests/fixtures/every_object.sql, and its
/// schema name. The logical schema `objects` on node1 is a one-table stub that `shard add`
/// uses as its template; the shard's schema is then replaced by the fixture loaded under
/// the shard's name by the `mariadb` client, so every object keeps the creation context the
/// fixture gives it.
fn every_object_shard(lower_bound: &str) -> (String, String) {
    let sb = FLEET.sandbox();
    static FUNCTION: OnceLock<()> = OnceLock::new();
    FUNCTION.get_or_init(|| {
        let mut n1 = connect(sb, "node1");
        exec(
            &mut n1,
            &[
                "CREATE DATABASE objects",
                "CREATE TABLE objects.customer (id INT NOT NULL PRIMARY KEY)",
            ],
        );
        FLEET
            .cli(&["function", "add", "obj", "--type", "range", "--key", "int"])
            .assert()
            .success();
        FLEET
            .cli(&[
                "table",
                "add",
                "objects.customer",
                "--function",
                "obj",
                "--column",
                "id",
            ])
            .assert()
            .success();
    });
    let id = common::add_shard_on(&FLEET.inventory_path(), "obj", "node1", lower_bound).to_string();
    let schema = format!("objects_{id}");
    let mut n1 = connect(sb, "node1");
    exec(&mut n1, &[&format!("DROP DATABASE {schema}")]);
    common::load_fixture_as(sb, "node1", "every_object.sql", "objects", &schema);
    (id, schema)
}

/// The fixture really holds what the comparison is about.
fn assert_every_kind_present(signature: &[String], context: &[String]) {
    let has = |prefix: &str, needle: &str| {
        signature
            .iter()
            .any(|l| l.starts_with(prefix) && l.contains(needle))
    };
    assert!(has("ddl customer", "FULLTEXT KEY"), "{signature:?}");
    assert!(has("ddl place", "SPATIAL KEY"), "{signature:?}");
    assert!(has("ddl customer", "VIRTUAL") && has("ddl customer", "STORED"));
    assert!(has("ddl customer", "INVISIBLE"));
    assert!(has("ddl ledger", "PARTITION BY RANGE"));
    assert!(has("ddl blobs", "CHARSET=binary") && has("ddl region", "CHARSET=latin1"));
    assert!(has("view active_vip", "SQL SECURITY INVOKER"));
    assert!(has("Function label", "DEFINER=`shardctl`@`%`"));
    assert!(has("Procedure order_totals", "CURSOR"));
    assert!(has("Trigger orders_a_second", "BEFORE INSERT"));
    assert!(has("Event purge_audit", "ON COMPLETION PRESERVE DISABLE"));
    let modes: std::collections::BTreeSet<&str> = context
        .iter()
        .filter_map(|l| {
            let fields: Vec<&str> = l.split(" | ").collect();
            match fields[0] {
                "routine" => Some(fields[5]),
                "trigger" => Some(fields[7]),
                _ => None,
            }
        })
        .collect();
    assert!(modes.len() >= 5, "sql_modes {modes:?} in {context:?}");
    assert!(
        context
            .iter()
            .any(|l| l.starts_with("SELECT `<schema>`.label('a', 'b') -> a/b")),
        "{context:?}"
    );
}

/// The fixture's FLOAT column made a DOUBLE: the dump method refuses a FLOAT (its tool
/// writes 6 digits; see tests/verification.rs), and carries a DOUBLE exactly.
fn without_floats(s: &mut Server, schema: &str) {
    exec(
        s,
        &[&format!(
            "ALTER TABLE {schema}.numbers MODIFY f32 DOUBLE NULL"
        )],
    );
}

#[test]
fn every_object_moves_with_both_methods_and_keeps_every_object() {
    FLEET.sandbox();
    let _s = serial();
    let sb = FLEET.sandbox();
    let (id, schema) = every_object_shard("0");
    let mut n1 = connect(sb, "node1");
    without_floats(&mut n1, &schema);
    let before = signature(&mut n1, &schema);
    let context = creation_context(&mut n1, &schema);
    assert_every_kind_present(&before, &context);

    // mariadb-dump carries every object in its creation context.
    FLEET
        .cli(&["move", "--shard", &id, "--to", "node2", "--method", "dump"])
        .assert()
        .success();
    let mut n2 = connect(sb, "node2");
    assert_eq!(signature(&mut n2, &schema), before);
    assert_eq!(creation_context(&mut n2, &schema), context);

    // Then natively, onward: the same again.
    let before = signature(&mut n2, &schema);
    FLEET
        .cli(&[
            "move", "--shard", &id, "--to", "node3", "--method", "native",
        ])
        .assert()
        .success();
    let mut n3 = connect(sb, "node3");
    assert_eq!(signature(&mut n3, &schema), before);
    assert_eq!(creation_context(&mut n3, &schema), context);
}

/// `mariadb-dump ARGS` on `node` (the sandbox's admin account).
fn mariadb_dump(node: &str, args: &[&str]) -> Vec<u8> {
    let sb = FLEET.sandbox();
    let port = sb.node(node).expect("sandbox node").port.to_string();
    let out = std::process::Command::new("mariadb-dump")
        .arg(format!(
            "--defaults-extra-file={}",
            sb.dir().join("client.cnf").display()
        ))
        .args(["-h", "127.0.0.1", "-P", &port])
        .args(args)
        .output()
        .expect("run mariadb-dump");
    assert!(
        out.status.success(),
        "mariadb-dump {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// Every view, routine, trigger and event of `schema` with its creation context, and the
/// schema's own defaults, as mariadb-dump prints them.
fn dump_objects(node: &str, schema: &str) -> String {
    let text = mariadb_dump(
        node,
        &[
            "--no-data",
            "--routines",
            "--triggers",
            "--events",
            "--skip-dump-date",
            "--databases",
            schema,
        ],
    );
    String::from_utf8(text).expect("definitions dump as UTF-8")
}

/// Every row of `schema`, one INSERT per row in primary-key order.
fn dump_rows(node: &str, schema: &str) -> Vec<u8> {
    mariadb_dump(
        node,
        &[
            "--no-create-info",
            "--skip-triggers",
            "--skip-extended-insert",
            "--order-by-primary",
            "--skip-dump-date",
            schema,
        ],
    )
}

/// The fixture's ENABLED event.
const ENABLED_EVENT: &str = "refresh_totals";

fn event_status(node: &str, schema: &str, event: &str) -> String {
    let mut s = connect(FLEET.sandbox(), node);
    s.first::<String>(&Stmt::with(
        "SELECT status FROM information_schema.events WHERE event_schema = ? AND event_name = ?",
        vec![schema.into(), event.into()],
    ))
    .unwrap()
    .unwrap_or_else(|| panic!("no event {schema}.{event} on {node}"))
}

/// A move of the every-object shard by `method`: afterwards the target's objects are what
/// mariadb-dump printed for the source before the move (with every creation context),
/// its rows too. The move is crashed between the flip and the enabling of the events:
/// the target's copy of an ENABLED event is still DISABLED there (it never ran before the
/// flip) and the objects compare equal but for that status; `resume` enables it.
fn every_object_moves_with_its_creation_context(method: &str, lower_bound: &str, extra: &[&str]) {
    FLEET.sandbox();
    let _s = serial();
    let sb = FLEET.sandbox();
    let (id, schema) = every_object_shard(lower_bound);
    let ident = |s: &str| shardctl::ident::Ident::new("schema", s).unwrap();
    let mut n1 = connect(sb, "node1");
    if extra.contains(&"stream") {
        // The stream finds the rows it updates by a key: a table without one is refused
        // before anything changes; without it, the move goes ahead.
        let version = directory_version();
        FLEET
            .cli(&[&["move", "--shard", &id, "--to", "node2"][..], extra].concat())
            .assert()
            .code(5)
            .stderr(predicate::str::contains(format!(
                "table {schema}.scratch has no primary key"
            )));
        assert_eq!(directory_version(), version);
        assert!(!schema_exists("node2", &schema));
        exec(&mut n1, &[&format!("DROP TABLE {schema}.scratch")]);
    }
    if method == "dump" {
        without_floats(&mut n1, &schema);
    }
    let before = signature(&mut n1, &schema);
    let context = creation_context(&mut n1, &schema);
    assert_every_kind_present(&before, &context);
    let objects_before = dump_objects("node1", &schema);
    let rows_before = dump_rows("node1", &schema);
    assert!(
        objects_before.contains("ON COMPLETION PRESERVE ENABLE"),
        "{objects_before}"
    );
    assert_eq!(event_status("node1", &schema, ENABLED_EVENT), "ENABLED");

    let mut args = vec!["move", "--shard", &id, "--to", "node2", "--method", method];
    args.extend_from_slice(extra);
    let out = FLEET
        .cli(&args)
        .env("SHARDCTL_FAULT", "crash@journaled:flip")
        .output()
        .unwrap();
    let op = last_op().to_string();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    if !stderr.contains("fault point journaled:flip") {
        let _ = FLEET.cli(&["abort", &op]).output();
        panic!("the {method} move did not reach the flip: {stderr}");
    }
    // Flipped, events not enabled yet: the target's copy of the enabled event is disabled.
    assert_eq!(event_status("node2", &schema, ENABLED_EVENT), "DISABLED");
    let mut n2 = connect(sb, "node2");
    {
        use shardctl::server::definitions::{compare_objects, CompareOptions, EventStatusCheck};
        // The source is still under the shard fence: its tables (and their triggers) are
        // under the hidden names the journal recorded.
        let rec = Directory::open(&inventory())
            .unwrap()
            .operation(op.parse().unwrap())
            .unwrap();
        let fenced: Vec<(String, String, String)> = serde_json::from_value(
            rec.last_effect("raise-fence").unwrap().detail["fenced_tables"].clone(),
        )
        .unwrap();
        let mut options = CompareOptions {
            events: EventStatusCheck::TargetDisabledBeforeFlip,
            source_renamed: fenced.into_iter().map(|(_, t, h)| (h, t)).collect(),
        };
        let mut n1 = connect(sb, "node1");
        let s = ident(&schema);
        let diff = compare_objects(&mut n1, &s, &mut n2, &s, &options).unwrap();
        assert!(diff.is_empty(), "{diff:#?}");
        options.events = EventStatusCheck::Equal;
        let diff = compare_objects(&mut n1, &s, &mut n2, &s, &options).unwrap();
        let shown: Vec<String> = diff.iter().map(|d| d.to_string()).collect();
        assert_eq!(
            shown,
            vec![format!(
                "event {ENABLED_EVENT}: status differs: source \"ENABLED\", target \"DISABLED\""
            )]
        );
    }
    common::assert_same_dump(
        objects_before
            .replace(
                "ON COMPLETION PRESERVE ENABLE",
                "ON COMPLETION PRESERVE DISABLE",
            )
            .as_bytes(),
        dump_objects("node2", &schema).as_bytes(),
        "before the events are enabled, the target's objects differ only by their status",
    );
    FLEET.cli(&["resume", &op]).assert().success();

    assert_eq!(event_status("node2", &schema, ENABLED_EVENT), "ENABLED");
    common::assert_same_dump(
        objects_before.as_bytes(),
        dump_objects("node2", &schema).as_bytes(),
        "views, routines, triggers and events",
    );
    common::assert_same_dump(&rows_before, &dump_rows("node2", &schema), "rows");
    assert_eq!(signature(&mut n2, &schema), before);
    assert_eq!(creation_context(&mut n2, &schema), context);
}

#[test]
fn every_object_moves_natively_with_its_creation_context() {
    every_object_moves_with_its_creation_context("native", "1000000", &[]);
}

/// Kept current by the change stream, the copy gets its triggers only under the fence,
/// once the stream stopped: every object and its creation context arrive all the same.
#[test]
fn every_object_moves_via_the_change_stream_with_its_creation_context() {
    every_object_moves_with_its_creation_context("native", "4000000", &["--via", "stream"]);
}

#[test]
fn every_object_moves_by_dump_with_its_creation_context() {
    every_object_moves_with_its_creation_context("dump", "2000000", &[]);
}

/// `compare_objects` on real servers: the moved copy of the fixture matches the fixture
/// loaded afresh under another schema name (names inside definitions are normalised), and
/// a trigger re-created under another sql_mode is reported by name and field.
#[test]
fn compare_objects_reports_a_trigger_recreated_under_another_sql_mode() {
    use shardctl::server::definitions::{compare_objects, CompareOptions, ObjectType};
    FLEET.sandbox();
    let _s = serial();
    let sb = FLEET.sandbox();
    let (_, schema) = every_object_shard("3000000");
    let reference = format!("{schema}_ref");
    common::load_fixture_as(sb, "node3", "every_object.sql", "objects", &reference);
    let ident = |s: &str| shardctl::ident::Ident::new("schema", s).unwrap();
    let (s, r) = (ident(&schema), ident(&reference));
    let mut n1 = connect(sb, "node1");
    let mut n3 = connect(sb, "node3");
    let diff = compare_objects(&mut n1, &s, &mut n3, &r, &CompareOptions::default()).unwrap();
    assert!(diff.is_empty(), "{diff:#?}");

    // The same trigger text, in the same character sets, under ANSI_QUOTES.
    let original = n3
        .show_create_object(
            &r,
            shardctl::server::statements::ObjectKind::Trigger,
            &ident("scratch_guard"),
        )
        .unwrap();
    exec(
        &mut n3,
        &[
            &format!("USE `{reference}`"),
            "SET SESSION character_set_client = utf8mb4, collation_connection = utf8mb4_unicode_ci, sql_mode = 'ANSI_QUOTES'",
            "DROP TRIGGER scratch_guard",
            &original,
        ],
    );
    let diff = compare_objects(&mut n1, &s, &mut n3, &r, &CompareOptions::default()).unwrap();
    assert_eq!(diff.len(), 1, "{diff:#?}");
    assert_eq!(diff[0].kind, ObjectType::Trigger);
    assert_eq!(diff[0].name, "scratch_guard");
    assert_eq!(diff[0].field, "sql_mode");
    assert_eq!(
        diff[0].source.as_deref(),
        Some("STRICT_ALL_TABLES,ERROR_FOR_DIVISION_BY_ZERO")
    );
    assert_eq!(diff[0].target.as_deref(), Some("ANSI_QUOTES"));
    assert_eq!(
        diff[0].to_string(),
        "trigger scratch_guard: sql_mode differs: source \"STRICT_ALL_TABLES,ERROR_FOR_DIVISION_BY_ZERO\", target \"ANSI_QUOTES\""
    );
    exec(&mut n3, &[&format!("DROP DATABASE `{reference}`")]);
}

#[test]
fn a_catch_up_that_never_finishes_times_out_and_leaves_the_shard_untouched() {
    FLEET.sandbox();
    let _s = serial();
    let (shard, from) = shard_of(30000);
    let to = if from == "node1" { "node3" } else { "node1" };
    let dir = tempfile::tempdir().unwrap();
    let pb = shardctl::playbook::MOVE_PLAYBOOK.replace(
        "lag_below_secs: 1\n    timeout_secs: 600",
        "lag_below_secs: 1\n    timeout_secs: 2",
    );
    assert_ne!(pb, shardctl::playbook::MOVE_PLAYBOOK);
    let pb = common::write_file(dir.path(), "slow.yaml", &pb);
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("shardctl"))
        .env("SHARDCTL_YES", "1")
        .arg("--config")
        .arg(FLEET.inventory_path())
        .args([
            "move",
            "--shard",
            &shard.to_string(),
            "--to",
            to,
            "--playbook",
            pb.to_str().unwrap(),
        ])
        .env("SHARDCTL_FAULT", "pause=3@after:start-replication")
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(child.stderr.take().unwrap()));
    for line in lines.by_ref() {
        if line
            .unwrap()
            .contains("fault point after:start-replication")
        {
            break;
        }
    }
    // Block the target's applier: hold a lock on the table the next write replicates to.
    let mut target = connect(FLEET.sandbox(), to);
    exec(
        &mut target,
        &[&format!(
            "LOCK TABLES employees_{shard}.shardctl_workload WRITE"
        )],
    );
    let mut src = connect(FLEET.sandbox(), &from);
    exec(
        &mut src,
        &[&format!(
            "INSERT INTO employees_{shard}.shardctl_workload (k, seq) VALUES (30000, 42)"
        )],
    );
    for line in lines.by_ref() {
        if line.unwrap().contains("wait               failed") {
            break;
        }
    }
    exec(&mut target, &["UNLOCK TABLES"]);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(6), "a timeout exits with 6");
    // Untouched: still on the source, online, writable; no channel, no copy on the target.
    assert_eq!(shard_of(30000), (shard, from.clone()));
    exec(
        &mut src,
        &[&format!(
            "INSERT INTO employees_{shard}.shardctl_workload (k, seq) VALUES (30000, 43)"
        )],
    );
    let op = last_op();
    let channel = common::op_names(&inventory(), op).channel(op);
    assert!(target.channel_status(&channel).unwrap().is_none());
    assert!(!schema_exists(to, &format!("employees_{shard}")));
    let snap = Directory::open(&inventory()).unwrap().load().unwrap();
    assert_eq!(snap.shard(shard).unwrap().state.as_sql(), "online");
    assert_eq!(
        Directory::open(&inventory())
            .unwrap()
            .operation(op)
            .unwrap()
            .state,
        shardctl::directory::journal::OpState::Aborted
    );
}

#[test]
fn a_target_server_killed_during_the_copy_fails_cleanly_and_resumes() {
    let mut sb = SandboxBuilder::for_tests(2).unwrap().start().unwrap();
    let inv = sb.inventory_path();
    let run = |args: &[&str]| shardctl().arg("--config").arg(&inv).args(args).assert();
    FleetSetup::new()
        .nodes(&["node1", "node2"])
        .schema(&[
            "CREATE DATABASE app",
            "CREATE TABLE app.t (id INT PRIMARY KEY, v VARCHAR(40))",
        ])
        .function(
            Function::range("f")
                .table("app.t", "id")
                .shard("node1", "0"),
        )
        .rows(
            "node1",
            &["INSERT INTO app_1.t SELECT seq, MD5(seq) FROM app_1.seq_1_to_50000"],
        )
        .build(&sb);
    let mut n1 = connect(&sb, "node1");

    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("shardctl"))
        .env("SHARDCTL_YES", "1")
        .arg("--config")
        .arg(&inv)
        .args(["move", "--shard", "1", "--to", "node2"])
        .env("SHARDCTL_FAULT", "pause=4@copy")
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(child.stderr.take().unwrap()));
    for line in lines.by_ref() {
        if line.unwrap().contains("fault point copy") {
            break;
        }
    }
    sb.kill_node("node2").unwrap();
    let rest: Vec<String> = lines.map_while(|l| l.ok()).collect();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(4), "{rest:?}");
    let last = rest.last().cloned().unwrap_or_default();
    assert!(last.contains("node2") && last.contains("resume"), "{last}");
    // The shard stays on the source, online and writable.
    exec(&mut n1, &["INSERT INTO app_1.t VALUES (50001, 'x')"]);
    let op = Directory::open(&common::inventory(&sb))
        .unwrap()
        .operations(None)
        .unwrap()[0]
        .clone();
    assert_eq!(op.state, shardctl::directory::journal::OpState::Failed);
    sb.restart_node("node2").unwrap();
    run(&["resume", &op.id.to_string()]).success();
    let mut n2 = connect(&sb, "node2");
    assert_eq!(count(&mut n2, "SELECT COUNT(*) FROM app_1.t"), 50001);
    assert!(!n1
        .schema_exists(&shardctl::ident::Ident::new("schema", "app_1").unwrap())
        .unwrap());
}
