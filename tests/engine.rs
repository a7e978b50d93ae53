//! The operation engine on real servers: one owner at a time (abort and resume refused
//! against a live owner, a taken-over owner stops without touching anything), `stop`,
//! abort refused after the flip, and the fault matrix: a crash at every fault point of the
//! move playbook, then `resume` (or `abort`), under a workload — the operation converges,
//! the directory matches where the rows are, no acknowledged write is lost and no fence,
//! hidden table, channel or read_only is left behind.

mod common;

use common::{connect, count, exec, serial, FleetSetup, Function, SharedFleet};
use shardctl::config::Inventory;
use shardctl::directory::journal::OpState;
use shardctl::directory::Directory;
use shardctl::playbook::Playbook;
use shardctl::sandbox::Sandbox;
use shardctl::server::Stmt;
use shardctl::workload;
use std::io::BufRead;
use std::time::{Duration, Instant};

const REFUSED: i32 = 5;
const ROWS: i64 = 2000;

/// 2 nodes; `app.t` sharded by range over one shard (id 1) with ROWS rows, the workload
/// table in it.
static FLEET: SharedFleet = SharedFleet::new(2, set_up);

/// Sets up the fleet once, on first use (see [`FLEET`]).
fn set_up(sb: &Sandbox) {
    FleetSetup::new()
        .nodes(&["node1", "node2"])
        .schema(&[
            "CREATE DATABASE app",
            "CREATE TABLE app.t (id INT PRIMARY KEY, v VARCHAR(40), KEY (v))",
        ])
        .function(
            Function::range("f")
                .table("app.t", "id")
                .shard("node1", "0"),
        )
        .rows(
            "node1",
            &[format!(
                "INSERT INTO app_1.t SELECT seq, MD5(seq) FROM app_1.seq_1_to_{ROWS}"
            )],
        )
        .workload("f")
        .build(sb);
}

fn inventory_of(sb: &Sandbox) -> Inventory {
    Inventory::load(&sb.inventory_path()).unwrap()
}

fn dir() -> Directory {
    Directory::open(&inventory_of(FLEET.sandbox())).unwrap()
}

fn node_of_shard() -> String {
    dir().load().unwrap().shard(1).unwrap().node.clone()
}

fn other(node: &str) -> &'static str {
    if node == "node1" {
        "node2"
    } else {
        "node1"
    }
}

fn last_op() -> u64 {
    dir().operations(None).unwrap()[0].id
}

/// Everything an operation may leave behind, on both nodes: hidden tables, channels,
/// read_only, and where the shard's rows are against where the directory points.
fn assert_clean_and_consistent(context: &str) {
    let home = node_of_shard();
    for node in ["node1", "node2"] {
        let mut s = connect(FLEET.sandbox(), node);
        let hidden = count(
            &mut s,
            "SELECT COUNT(*) FROM information_schema.tables WHERE table_name LIKE '\\_shardctl\\_op%'",
        );
        assert_eq!(hidden, 0, "{context}: hidden tables left on {node}");
        let trash = count(
            &mut s,
            "SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name LIKE '\\_shardctl\\_trash%'",
        );
        assert_eq!(trash, 0, "{context}: the old copy's trash left on {node}");
        let channels = s.rows(&Stmt::text("SHOW ALL SLAVES STATUS")).unwrap().len();
        assert_eq!(channels, 0, "{context}: a channel left on {node}");
        let ro = count(&mut s, "SELECT @@GLOBAL.read_only");
        assert_eq!(ro, 0, "{context}: {node} left read-only");
        let has = count(
            &mut s,
            "SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name = 'app_1'",
        );
        assert_eq!(
            has == 1,
            node == home,
            "{context}: app_1 on {node}, directory says {home}"
        );
    }
    let mut s = connect(FLEET.sandbox(), &home);
    assert_eq!(
        count(&mut s, "SELECT COUNT(*) FROM app_1.t"),
        ROWS,
        "{context}"
    );
    let snap = dir().load().unwrap();
    assert_eq!(snap.shard(1).unwrap().state.as_sql(), "online", "{context}");
    for op in dir().operations(None).unwrap() {
        assert!(
            op.state.is_finished(),
            "{context}: operation {} left {}",
            op.id,
            op.state
        );
    }
}

/// Starts `shardctl move` in the background with a fault, and returns once the fault
/// point has been reached (its line on stderr).
fn move_paused_at(point: &str, fence: &str) -> std::process::Child {
    move_paused_for(point, fence, 60)
}

/// Like [`move_paused_at`], the pause ending by itself after `secs`.
fn move_paused_for(point: &str, fence: &str, secs: u64) -> std::process::Child {
    let to = other(&node_of_shard());
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("shardctl"))
        .env("SHARDCTL_YES", "1")
        .arg("--config")
        .arg(FLEET.inventory_path())
        .args(["move", "--shard", "1", "--to", to, "--fence", fence])
        .env("SHARDCTL_FAULT", format!("pause={secs}@{point}"))
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let want = format!("fault point {point}");
    std::thread::spawn(move || {
        let mut told = false;
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(|l| l.ok())
        {
            if !told && line.contains(&want) {
                told = true;
                let _ = tx.send(());
            }
        }
    });
    rx.recv_timeout(Duration::from_secs(60))
        .expect("the move reaches the fault point");
    child
}

fn hidden_tables(node: &str) -> i64 {
    let mut s = connect(FLEET.sandbox(), node);
    count(
        &mut s,
        "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'app_1' AND table_name LIKE '\\_shardctl\\_op%'",
    )
}

#[test]
fn abort_and_resume_against_a_live_owner_change_nothing_and_stop_asks_it_to_stop() {
    FLEET.sandbox();
    let _s = serial();
    let source = node_of_shard();
    let mut child = move_paused_at("after:lock", "shard");
    let op = last_op();
    let before = dir().operation(op).unwrap();
    let version = dir().version().unwrap();
    assert!(hidden_tables(&source) > 0, "the fence is up");
    for verb in ["abort", "resume"] {
        FLEET
            .cli(&[verb, &op.to_string()])
            .assert()
            .code(REFUSED)
            .stderr(predicates::str::contains("is driven by"))
            .stderr(predicates::str::contains(format!(":{}", child.id())));
    }
    // The check of another move of the shard reports the operation that blocks it.
    FLEET
        .cli(&["move", "--shard", "1", "--to", other(&source), "--check"])
        .assert()
        .code(REFUSED)
        .stderr(predicates::str::contains(format!("under operation {op}")));
    let after = dir().operation(op).unwrap();
    assert_eq!(after.epoch, before.epoch, "no takeover");
    assert_eq!(after.steps, before.steps, "no step changed");
    assert_eq!(
        dir().version().unwrap(),
        version,
        "the directory is unchanged"
    );
    assert!(hidden_tables(&source) > 0, "the fence is still up");

    // `stop` asks the owner to stop at its next safe point: the fence comes down and the
    // operation is left resumable; then abort works.
    FLEET
        .cli(&["stop", &op.to_string()])
        .assert()
        .success()
        .stdout(predicates::str::contains("stopped at a safe point"));
    let status = child.wait().unwrap();
    assert_eq!(
        status.code(),
        Some(130),
        "a stopped owner exits as on Ctrl-C"
    );
    assert_eq!(hidden_tables(&source), 0, "the owner lifted its fence");
    FLEET.cli(&["abort", &op.to_string()]).assert().success();
    assert_clean_and_consistent("after stop and abort");
}

#[test]
fn an_owner_whose_lease_was_taken_stops_without_touching_anything() {
    FLEET.sandbox();
    let _s = serial();
    let source = node_of_shard();
    let mut child = move_paused_at("after:lock", "shard");
    let op = last_op();
    // Another process takes the lease (as a takeover would): the epoch goes up.
    let mut d = dir();
    d.server()
        .exec(&Stmt::with(
            "UPDATE shardctl.operations SET epoch = epoch + 1 WHERE op_id = ?",
            vec![op.into()],
        ))
        .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(REFUSED), "a lost lease exits refused");
    // It left the fence exactly as it was: the new owner decides.
    assert!(hidden_tables(&source) > 0, "the fence was not touched");
    assert_eq!(node_of_shard(), source, "no flip");
    // The old owner's process is gone: resume takes over and finishes.
    FLEET.cli(&["resume", &op.to_string()]).assert().success();
    assert_eq!(node_of_shard(), other(&source));
    assert_clean_and_consistent("after takeover");
}

#[test]
fn abort_after_the_flip_is_refused_and_resume_finishes() {
    FLEET.sandbox();
    let _s = serial();
    let source = node_of_shard();
    let out = FLEET
        .cli(&["move", "--shard", "1", "--to", other(&source)])
        .env("SHARDCTL_FAULT", "crash@done:flip")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let op = last_op();
    // The flip committed but its journal row was never written.
    assert_eq!(node_of_shard(), other(&source));
    FLEET
        .cli(&["abort", &op.to_string()])
        .assert()
        .code(REFUSED)
        .stderr(predicates::str::contains("only forward"));
    assert!(connect(FLEET.sandbox(), other(&source))
        .schema_exists(&shardctl::ident::Ident::new("schema", "app_1").unwrap())
        .unwrap());
    FLEET.cli(&["resume", &op.to_string()]).assert().success();
    FLEET.cli(&["resume", &op.to_string()]).assert().code(2);
    assert_clean_and_consistent("after a crash between the flip and its journal row");
}

#[test]
fn two_read_only_fences_on_one_node_are_counted() {
    FLEET.sandbox();
    let _s = serial();
    let source = node_of_shard();
    // A second shard on the same node, fenced read-only by hand (another operation)...
    let inv = inventory_of(FLEET.sandbox());
    let second = dir()
        .load()
        .unwrap()
        .shards
        .iter()
        .find(|s| s.id != 1)
        .map(|s| s.id);
    let second = match second {
        Some(id) => id,
        None => {
            FLEET
                .cli(&[
                    "shard",
                    "add",
                    "--function",
                    "f",
                    "--node",
                    &source,
                    "--lower-bound",
                    "1000000",
                ])
                .assert()
                .success();
            workload::setup(&inv, "f").unwrap();
            2
        }
    };
    assert_eq!(dir().load().unwrap().shard(second).unwrap().node, source);
    shardctl::ops::steps::lock(&inv, second, shardctl::playbook::Fence::ReadOnly, 5).unwrap();
    // ...and a move's read-only fence raised and lifted again by its rollback.
    let mut child = move_paused_at("after:lock", "read-only");
    let op = last_op();
    FLEET.cli(&["stop", &op.to_string()]).assert().success();
    child.wait().unwrap();
    let mut s = connect(FLEET.sandbox(), &source);
    assert_eq!(
        count(&mut s, "SELECT @@GLOBAL.read_only"),
        1,
        "the move's rollback must not lift the other operation's fence"
    );
    FLEET.cli(&["abort", &op.to_string()]).assert().success();
    assert_eq!(count(&mut s, "SELECT @@GLOBAL.read_only"), 1);
    FLEET
        .cli(&["unlock", "--shard", &second.to_string()])
        .assert()
        .success();
    assert_clean_and_consistent("after two read-only fences");
}

/// One crash at `point` during a move under the workload, then `then` (resume or abort),
/// then resume again if abort was refused; every acknowledged write must be found.
fn crash_and_recover(point: &str, fence: &str, then: &str) -> bool {
    let inv = inventory_of(FLEET.sandbox());
    let source = node_of_shard();
    let running = workload::spawn(
        inv.clone(),
        workload::Options {
            rate: 100,
            ..workload::Options::new("f")
        },
    )
    .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let out = FLEET
        .cli(&[
            "move",
            "--shard",
            "1",
            "--to",
            other(&source),
            "--fence",
            fence,
        ])
        .env("SHARDCTL_FAULT", format!("crash@{point}"))
        .output()
        .unwrap();
    let context = format!("crash at {point} ({fence} fence), then {then}");
    let ops = dir().operations(None).unwrap();
    let crashed = String::from_utf8_lossy(&out.stderr).contains("crashing");
    if crashed {
        let op = ops[0].id;
        let r = FLEET.cli(&[then, &op.to_string()]).output().unwrap();
        if !r.status.success() {
            // An abort after the flip is refused; going forward must still work.
            assert_eq!(r.status.code(), Some(REFUSED), "{context}: {r:?}");
            assert_eq!(then, "abort", "{context}: {r:?}");
            FLEET.cli(&["resume", &op.to_string()]).assert().success();
        }
    } else {
        assert!(out.status.success(), "{context}: {out:?}");
    }
    std::thread::sleep(Duration::from_millis(300));
    let report = running.stop().unwrap();
    let missing = workload::missing_acks(&inv, "f", &report.acks).unwrap();
    assert!(missing.is_empty(), "{context}: lost {missing:?}");
    assert_clean_and_consistent(&context);
    crashed
}

fn matrix(fence: &str, verbs: &[&str]) {
    FLEET.sandbox();
    let _s = serial();
    let mut playbook = Playbook::default_move();
    for step in &mut playbook.steps {
        if let shardctl::playbook::Step::Lock(l) = step {
            l.fence = if fence == "shard" {
                shardctl::playbook::Fence::Shard
            } else {
                shardctl::playbook::Fence::ReadOnly
            };
        }
    }
    let points = shardctl::ops::mover::fault_points(&playbook, false);
    let started = Instant::now();
    let mut runs = 0;
    for point in &points {
        for then in verbs {
            // A plain move passes every point of its playbook, so each run must crash.
            assert!(
                crash_and_recover(point, fence, then),
                "the move never reached {point}"
            );
            runs += 1;
        }
    }
    println!(
        "fault matrix ({fence} fence): {} points x {:?} = {runs} crashes in {:.0}s",
        points.len(),
        verbs,
        started.elapsed().as_secs_f64()
    );
    assert!(points.len() >= 35, "{points:?}");
}

#[test]
fn fault_matrix_shard_fence() {
    matrix("shard", &["resume", "abort"]);
}

#[test]
fn fault_matrix_read_only_fence() {
    matrix("read-only", &["resume", "abort"]);
}

#[test]
fn the_lease_is_in_the_journal() {
    FLEET.sandbox();
    let _s = serial();
    let source = node_of_shard();
    FLEET
        .cli(&["move", "--shard", "1", "--to", other(&source)])
        .assert()
        .success();
    let rec = dir().operation(last_op()).unwrap();
    assert_eq!(rec.state, OpState::Done);
    assert_eq!(rec.epoch, 1);
    assert!(rec.owner.is_none(), "released");
    // Every effect was journaled as done, in order, each after its intent.
    let names: Vec<&str> = rec.effects.iter().map(|e| e.effect.name()).collect();
    assert_eq!(
        names,
        [
            "copy",
            "point-channel",
            "set-filters",
            "start-channel",
            "hold-channel",
            "raise-fence",
            "stop-channel",
            "flip",
            "enable-events",
            "drop-source",
            "drop-trash",
            "drop-replica-copies",
            "reset-channel"
        ]
    );
    assert!(rec
        .effects
        .iter()
        .all(|e| e.state == shardctl::directory::journal::EffectState::Done));
    assert_clean_and_consistent("after a plain move");
}

/// Waits until `pred` holds, at most `secs` seconds.
fn wait_for(secs: u64, what: &str, mut pred: impl FnMut() -> bool) {
    let until = Instant::now() + Duration::from_secs(secs);
    while !pred() {
        assert!(Instant::now() < until, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_read_only_fence_that_went_away_is_never_flipped_on() {
    FLEET.sandbox();
    let _s = serial();
    let source = node_of_shard();
    let to = other(&source);
    let child = move_paused_for("after:lock", "read-only", 3);
    let op = last_op();
    // The fence goes away behind shardctl's back (a restart resets read_only the same way),
    // and a client writes to the source.
    let mut s = connect(FLEET.sandbox(), &source);
    exec(&mut s, &["SET GLOBAL read_only = OFF"]);
    exec(
        &mut s,
        &["INSERT INTO app_1.t VALUES (999001, 'written while the fence was down')"],
    );
    // The owner goes on when its pause ends: verification or the flip's fence check
    // refuses.
    let out = child.wait_with_output().unwrap();
    assert_ne!(out.status.code(), Some(0));
    assert_eq!(node_of_shard(), source, "no flip on a fence that went away");
    // Resume catches up (carrying the write), fences again, verifies and flips.
    FLEET.cli(&["resume", &op.to_string()]).assert().success();
    assert_eq!(node_of_shard(), to);
    let mut t = connect(FLEET.sandbox(), to);
    assert_eq!(
        count(&mut t, "SELECT COUNT(*) FROM app_1.t WHERE id = 999001"),
        1,
        "the write made while the fence was down reached the target"
    );
    exec(&mut t, &["DELETE FROM app_1.t WHERE id = 999001"]);
    assert_clean_and_consistent("after a fence that went away");
}

#[test]
fn the_flip_is_refused_when_the_fence_no_longer_stands() {
    FLEET.sandbox();
    let _s = serial();
    let source = node_of_shard();
    let child = move_paused_for("after:confirm", "read-only", 3);
    let op = last_op();
    let mut s = connect(FLEET.sandbox(), &source);
    exec(&mut s, &["SET GLOBAL read_only = OFF"]);
    exec(
        &mut s,
        &["INSERT INTO app_1.t VALUES (999002, 'after the verification')"],
    );
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(REFUSED), "{out:?}");
    let error = dir().operation(op).unwrap().error.unwrap_or_default();
    assert!(error.contains("no longer read-only"), "{error}");
    assert_eq!(node_of_shard(), source);
    // What was verified no longer holds: the hand flip is refused too.
    FLEET
        .cli(&["flip", "--shard", "1", "--to", other(&source)])
        .assert()
        .code(REFUSED);
    assert_eq!(node_of_shard(), source);
    FLEET.cli(&["abort", &op.to_string()]).assert().success();
    exec(&mut s, &["DELETE FROM app_1.t WHERE id = 999002"]);
    assert_clean_and_consistent("after a refused flip");
}

#[test]
fn a_fence_statement_left_running_by_a_dead_owner_is_ended_by_the_next_one() {
    FLEET.sandbox();
    let _s = serial();
    let source = node_of_shard();
    let to = other(&source);
    // A long transaction holds the shard's table: the fence's RENAME waits for it.
    let mut blocker = connect(FLEET.sandbox(), &source);
    exec(
        &mut blocker,
        &["START TRANSACTION", "SELECT COUNT(*) FROM app_1.t"],
    );
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("shardctl"))
        .env("SHARDCTL_YES", "1")
        .arg("--config")
        .arg(FLEET.inventory_path())
        .args(["move", "--shard", "1", "--to", to])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut watch = connect(FLEET.sandbox(), &source);
    wait_for(60, "the fence's RENAME to wait", || {
        count(
            &mut watch,
            "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE 'RENAME TABLE%'",
        ) > 0
    });
    // The owner dies while its RENAME waits on the server.
    child.kill().unwrap();
    child.wait().unwrap();
    let op = last_op();
    FLEET
        .cli(&["abort", &op.to_string()])
        .assert()
        .success()
        .stderr(predicates::str::contains(
            "left running by an earlier owner",
        ));
    assert_eq!(
        count(
            &mut watch,
            "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE 'RENAME TABLE%'",
        ),
        0,
        "the dead owner's RENAME was ended before the rollback went on"
    );
    // The application's transaction ends: the orphaned RENAME must not run now.
    exec(&mut blocker, &["COMMIT"]);
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(
        hidden_tables(&source),
        0,
        "the dead owner's RENAME ran after the abort"
    );
    assert_clean_and_consistent("after a dead owner's statement");
}

/// A name read back from the journal reaches SQL only as a validated identifier: a journal
/// row edited to smuggle SQL into a hidden table name stops `resume` with one line and
/// changes nothing; put back, the operation finishes.
#[test]
fn a_tampered_journal_name_is_refused_before_any_statement() {
    FLEET.sandbox();
    let _s = serial();
    let source = node_of_shard();
    let mut child = move_paused_for("after:lock", "shard", 3);
    let op = last_op();
    child.kill().unwrap();
    child.wait().unwrap();
    let mut d = connect(FLEET.sandbox(), "node1");
    let step_of = |d: &mut shardctl::server::Server| -> (u32, String) {
        d.first::<(u32, String)>(&Stmt::with(
            "SELECT step_no, outputs FROM shardctl.operation_steps WHERE op_id = ? AND outputs IS NOT NULL ORDER BY step_no DESC LIMIT 1",
            vec![op.into()],
        ))
        .unwrap()
        .unwrap()
    };
    let (step, original) = step_of(&mut d);
    let mut state: serde_json::Value = serde_json::from_str(&original).unwrap();
    assert!(
        state["fenced_tables"][0][2].is_string(),
        "the journal names the hidden tables: {state}"
    );
    state["fenced_tables"][0][2] = "x` TO `y`; DROP DATABASE app_1; --".into();
    let set = |d: &mut shardctl::server::Server, text: &str| {
        d.exec(&Stmt::with(
            "UPDATE shardctl.operation_steps SET outputs = ? WHERE op_id = ? AND step_no = ?",
            vec![text.into(), op.into(), step.into()],
        ))
        .unwrap();
    };
    set(&mut d, &state.to_string());
    let out = FLEET.cli(&["resume", &op.to_string()]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("invalid table name"), "{err}");
    let mut s = connect(FLEET.sandbox(), &source);
    assert_eq!(
        count(
            &mut s,
            "SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name = 'app_1'"
        ),
        1,
        "the shard's schema is still there"
    );
    set(&mut d, &original);
    FLEET.cli(&["resume", &op.to_string()]).assert().success();
    assert_clean_and_consistent("after a tampered journal was put back");
}
