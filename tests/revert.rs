//! The revert window after a move (issue 14): `move --revert-window` keeps the old copy,
//! renamed out of every client's reach, current from the new node through a reverse
//! channel; `shardctl revert` flips back with the same fence and verification,
//! `shardctl finalize` (or the window's end) drops the old copy. Under fresh and stale
//! routers no acknowledged write is lost either way, none lands on a shard not owning its
//! key; the process may die while it waits and `resume` waits again; and the refusals.

mod common;

use common::{connect, count, exec, serial, wait_exit, FleetSetup, Function, SharedFleet};
use shardctl::config::Inventory;
use shardctl::directory::Directory;
use shardctl::sandbox::Sandbox;
use shardctl::workload;
use std::process::Child;
use std::time::{Duration, Instant};

const USAGE: i32 = 2;
const REFUSED: i32 = 5;
const ROWS: i64 = 20_000;

static FLEET: SharedFleet = SharedFleet::new(3, set_up);

/// Sets up the fleet once, on first use (see [`FLEET`]).
fn set_up(sb: &Sandbox) {
    FleetSetup::new()
        .schema(&[
            "CREATE DATABASE app",
            "CREATE TABLE app.items (k BIGINT NOT NULL, n INT NOT NULL, note VARCHAR(40) NULL, PRIMARY KEY (k, n))",
            "CREATE TABLE app.shardctl_workload (k BIGINT NOT NULL, seq BIGINT UNSIGNED NOT NULL, at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6), PRIMARY KEY (k, seq))",
            "CREATE TABLE app.audit (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, k BIGINT NOT NULL)",
            "CREATE TRIGGER app.items_audit AFTER INSERT ON app.items FOR EACH ROW INSERT INTO app.audit (k) VALUES (NEW.k)",
            "CREATE VIEW app.items_per_key AS SELECT k, COUNT(*) AS n FROM app.items GROUP BY k",
            // Enabled: the move's enable-events on the new node is a logged ALTER EVENT
            // the reverse channel must step over.
            "CREATE EVENT app.tidy ON SCHEDULE EVERY 1 DAY DO DELETE FROM app.audit WHERE k < 0",
        ])
        .function(
            Function::range("f")
                .items("app")
                .table("app.audit", "k")
                .shards(&[("node1", "0"), ("node2", "100000")]),
        )
        .rows(
            "node1",
            &["INSERT INTO app_1.items (k, n) SELECT seq, 1 FROM app_1.seq_1_to_20000"],
        )
        .build(sb);
}

fn inventory() -> Inventory {
    common::inventory(FLEET.sandbox())
}

/// shardctl in the background, its output in files.
fn spawn(args: &[&str], dir: &std::path::Path, name: &str) -> Child {
    common::spawn_shardctl(&FLEET.inventory_path(), args, None, dir, name)
}

fn newest_op() -> Option<shardctl::directory::journal::OperationRecord> {
    common::newest_op(&inventory())
}

/// Waits until the newest operation runs its revert-window step (the background runs'
/// stderr in `dir` shown if it never does).
fn until_window(within: Duration, dir: &std::path::Path) -> u64 {
    let deadline = Instant::now() + within;
    loop {
        let op = newest_op();
        if let Some(op) = &op {
            let next = op.steps.iter().find(|s| s.state.as_sql() != "done");
            if op.state.as_sql() == "running"
                && next.is_some_and(|s| s.name == "revert-window" && s.state.as_sql() == "running")
            {
                return op.id;
            }
        }
        if Instant::now() > deadline {
            let mut errs = String::new();
            for e in std::fs::read_dir(dir).unwrap().flatten() {
                if e.path().extension().is_some_and(|x| x == "err") {
                    errs.push_str(&std::fs::read_to_string(e.path()).unwrap_or_default());
                }
            }
            panic!(
                "never reached the window: op {:?} {:?}; stderr: {errs}",
                op.as_ref().map(|o| o.id),
                op.as_ref().map(|o| (o.state, o.error.clone()))
            );
        }
        std::thread::sleep(Duration::from_millis(200));
    }
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

fn schemas(node: &str, like: &str) -> Vec<String> {
    let mut s = connect(FLEET.sandbox(), node);
    s.rows(&shardctl::server::Stmt::with(
        "SELECT schema_name FROM information_schema.schemata WHERE schema_name LIKE ? ORDER BY 1",
        vec![like.into()],
    ))
    .unwrap()
    .iter()
    .map(|r| r.get::<String, _>(0).unwrap_or_default())
    .collect()
}

fn channels(node: &str) -> Vec<String> {
    let mut s = connect(FLEET.sandbox(), node);
    let rows = s
        .rows(&shardctl::server::Stmt::text("SHOW ALL SLAVES STATUS"))
        .unwrap();
    rows.iter()
        .map(|r| r.get::<String, _>("Connection_name").unwrap_or_default())
        .collect()
}

struct Workloads {
    fresh: workload::Running,
    stale: workload::Running,
}

fn start_workloads(function: &str) -> Workloads {
    let w = Workloads {
        fresh: workload::spawn(
            inventory(),
            workload::Options {
                rate: 150,
                ..workload::Options::new(function)
            },
        )
        .unwrap(),
        stale: workload::spawn(
            inventory(),
            workload::Options {
                rate: 100,
                stale_router: true,
                ..workload::Options::new(function)
            },
        )
        .unwrap(),
    };
    std::thread::sleep(Duration::from_millis(500));
    w
}

fn nothing_lost(w: Workloads, function: &str) {
    std::thread::sleep(Duration::from_millis(700));
    for (running, name) in [(w.fresh, "fresh"), (w.stale, "stale")] {
        let mut report = running.stop().unwrap();
        let check = report.check(&inventory(), function).unwrap();
        assert!(check.missing.is_empty(), "{name}: lost {:?}", check.missing);
        assert_eq!(
            report.wrong_shard_writes, 0,
            "{name}: {:?}",
            check.wrong_shard
        );
        assert!(report.acked > 100, "{name}: the workload ran");
    }
}

fn other_node(from: &str) -> &'static str {
    if from == "node3" {
        "node2"
    } else {
        "node3"
    }
}

/// The move flips; writes go to the new node during the window and come back through the
/// reverse channel; the owner dies in the window and `resume` waits again; `revert` then
/// fences the new node, flips back and puts the old copy — tables, trigger and view —
/// back under the shard's name: every acknowledged write of both routers is there, the new
/// node's copy, the trash and the reverse channel are gone.
#[test]
fn a_revert_within_the_window_brings_back_every_write() {
    let _s = serial();
    FLEET.sandbox();
    let dir = tempfile::tempdir().unwrap();
    let from = home_of(1);
    let to = other_node(&from);
    let w = start_workloads("f");
    let mut first = spawn(
        &["move", "--shard", "1", "--to", to, "--revert-window", "10m"],
        dir.path(),
        "first",
    );
    let op = until_window(Duration::from_secs(120), dir.path());
    assert_eq!(home_of(1), to, "the move flipped before its window");
    let trash = format!("\\_shardctl\\_trash\\_%\\_op{op}\\_%");
    assert_eq!(
        schemas(&from, "app\\_1").len(),
        0,
        "no client reaches the old copy"
    );
    assert_eq!(schemas(&from, &trash).len(), 1, "the old copy is kept");
    let back = common::op_names(&inventory(), op)
        .reverse_channel(op)
        .to_string();
    assert!(channels(&from).contains(&back), "{:?}", channels(&from));
    // Writes on the new node during the window, some of them by the trigger.
    let mut t = connect(FLEET.sandbox(), to);
    exec(
        &mut t,
        &[
            "INSERT INTO app_1.items (k, n, note) VALUES (50007, 2, 'during the window')",
            // DDL on the new node during the window: the reverse channel carries it into the
            // trash, where it must not keep the old copy from coming back.
            "USE app_1",
            "CREATE TRIGGER items_note BEFORE UPDATE ON items FOR EACH ROW SET NEW.note = UPPER(NEW.note)",
        ],
    );
    std::thread::sleep(Duration::from_secs(2));

    // The box dies while the window is open; resume waits again.
    first.kill().unwrap();
    first.wait().unwrap();
    let hooks = dir.path().join("hooks.jsonl");
    let mut resumed = spawn(
        &[
            "resume",
            &op.to_string(),
            "--hook",
            &format!("reverted=cat >> {}", hooks.display()),
        ],
        dir.path(),
        "resume",
    );
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(until_window(Duration::from_secs(60), dir.path()), op);
    assert!(
        resumed.try_wait().unwrap().is_none(),
        "the resumed run waits"
    );
    assert_eq!(home_of(1), to);

    // The owner held still (SIGSTOP) so the request stays pending: a finalize given
    // meanwhile is refused and the revert stands; the same revert again is accepted.
    let held = Held::stop(resumed.id() as i32);
    let out = FLEET
        .cli(&[])
        .args(["revert", &op.to_string()])
        .assert()
        .success();
    assert!(
        String::from_utf8_lossy(&out.get_output().stdout).contains("revert requested"),
        "{out:?}"
    );
    let refused = FLEET
        .cli(&[])
        .args(["finalize", &op.to_string()])
        .assert()
        .code(REFUSED);
    let said = String::from_utf8_lossy(&refused.get_output().stderr).into_owned();
    assert!(
        said.contains(&format!(
            "operation {op}: a revert is already requested and not yet taken up by its owner; it stands (no finalize requested)"
        )) && said.trim().lines().count() == 1,
        "{said}"
    );
    FLEET
        .cli(&[])
        .args(["revert", &op.to_string()])
        .assert()
        .success();
    drop(held);
    let status = wait_exit(&mut resumed, Duration::from_secs(180));
    assert!(
        status.success(),
        "{}",
        std::fs::read_to_string(dir.path().join("resume.err")).unwrap()
    );
    assert_eq!(home_of(1), from, "the shard is back");
    nothing_lost(w, "f");
    // The `reverted` hook ran once, with the operation's document.
    let seen: Vec<serde_json::Value> = std::fs::read_to_string(&hooks)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen[0]["stage"], "reverted");
    assert_eq!(seen[0]["op"], op);
    assert_eq!(seen[0]["shard"], 1);

    let mut s = connect(FLEET.sandbox(), &from);
    assert_eq!(
        count(&mut s, "SELECT COUNT(*) FROM app_1.items"),
        ROWS + 1,
        "the old copy has the window's row"
    );
    assert_eq!(
        count(&mut s, "SELECT COUNT(*) FROM app_1.audit WHERE k = 50007"),
        1,
        "the trigger's row of the window came back too"
    );
    assert_eq!(
        count(&mut s, "SELECT n FROM app_1.items_per_key WHERE k = 50007"),
        1,
        "the view is back"
    );
    // The trigger is back on the old copy.
    exec(
        &mut s,
        &["INSERT INTO app_1.items (k, n) VALUES (50008, 2)"],
    );
    assert_eq!(
        count(&mut s, "SELECT COUNT(*) FROM app_1.audit WHERE k = 50008"),
        1
    );
    exec(
        &mut s,
        &["UPDATE app_1.items SET note = 'loud' WHERE k = 50007"],
    );
    assert_eq!(
        count(
            &mut s,
            "SELECT COUNT(*) FROM app_1.items WHERE k = 50007 AND note = 'LOUD'"
        ),
        1,
        "the trigger created on the new node during the window came back"
    );
    assert_eq!(
        count(
            &mut s,
            "SELECT COUNT(*) FROM information_schema.events WHERE event_schema = 'app_1' AND event_name = 'tidy' AND status = 'ENABLED'"
        ),
        1,
        "the event is back, enabled"
    );
    assert_eq!(schemas(&from, &trash).len(), 0, "no trash left on {from}");
    assert_eq!(
        schemas(to, "app\\_1").len(),
        0,
        "the new node's copy is gone"
    );
    assert_eq!(schemas(to, "\\_shardctl\\_trash%").len(), 0);
    assert!(!channels(&from).contains(&back), "{:?}", channels(&from));
    let rec = newest_op().unwrap();
    assert_eq!(rec.state.as_sql(), "done");
    // After the window: nothing to revert or finalize any more.
    FLEET
        .cli(&[])
        .args(["revert", &op.to_string()])
        .assert()
        .code(USAGE)
        .stderr(predicates::str::contains("its revert window is closed"));
}

/// `finalize` ends the window at once: the reverse channel and the old copy go, the move
/// stands with every write; a window that runs out does the same by itself.
/// A process held still with SIGSTOP, let go (SIGCONT) when dropped: also when an
/// assertion fails while it is held.
struct Held(i32);

impl Held {
    fn stop(pid: i32) -> Held {
        unsafe { libc::kill(pid, libc::SIGSTOP) };
        Held(pid)
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        unsafe { libc::kill(self.0, libc::SIGCONT) };
    }
}

#[test]
fn a_revert_asked_for_while_no_owner_ran_is_carried_out_after_the_window_ended() {
    let _s = serial();
    FLEET.sandbox();
    let dir = tempfile::tempdir().unwrap();
    let from = home_of(1);
    let to = other_node(&from);
    let w = start_workloads("f");
    let mut first = spawn(
        &["move", "--shard", "1", "--to", to, "--revert-window", "8s"],
        dir.path(),
        "first",
    );
    let op = until_window(Duration::from_secs(120), dir.path());
    // The box dies in the window; the operator asks for the revert, which the CLI keeps
    // for `resume`; the window ends before anyone resumes.
    first.kill().unwrap();
    first.wait().unwrap();
    let out = FLEET
        .cli(&[])
        .args(["revert", &op.to_string()])
        .assert()
        .success();
    assert!(
        String::from_utf8_lossy(&out.get_output().stdout).contains("revert requested"),
        "{out:?}"
    );
    std::thread::sleep(Duration::from_secs(9));
    let mut resumed = spawn(&["resume", &op.to_string()], dir.path(), "resume");
    let status = wait_exit(&mut resumed, Duration::from_secs(180));
    assert!(
        status.success(),
        "{}",
        std::fs::read_to_string(dir.path().join("resume.err")).unwrap()
    );
    assert_eq!(
        home_of(1),
        from,
        "the revert asked for in time was carried out: {}",
        std::fs::read_to_string(dir.path().join("resume.err")).unwrap()
    );
    nothing_lost(w, "f");
}

#[test]
fn finalize_or_the_windows_end_drops_the_old_copy_and_keeps_the_move() {
    let _s = serial();
    FLEET.sandbox();
    let dir = tempfile::tempdir().unwrap();
    let from = home_of(1);
    let to = other_node(&from);
    let w = start_workloads("f");
    let mut run = spawn(
        &["move", "--shard", "1", "--to", to, "--revert-window", "1h"],
        dir.path(),
        "finalize",
    );
    let op = until_window(Duration::from_secs(120), dir.path());
    // While the window is open the old node replicates from the new one: MariaDB takes
    // one connection per source, so a move from the new node to the old one is refused up
    // front, naming the channel, instead of failing at change-master.
    if Directory::open(&inventory())
        .unwrap()
        .load()
        .unwrap()
        .shard(3)
        .is_err()
    {
        FLEET
            .cli(&[])
            .args([
                "shard",
                "add",
                "--function",
                "f",
                "--node",
                to,
                "--lower-bound",
                "200000",
            ])
            .assert()
            .success();
    }
    let out = FLEET
        .cli(&[])
        .args(["move", "--shard", "3", "--to", &from, "--check"])
        .assert()
        .failure();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.get_output().stdout),
        String::from_utf8_lossy(&out.get_output().stderr)
    );
    assert!(
        said.contains(&format!(
            "already replicates from {to} through channel \"{}\"",
            common::op_names(&inventory(), op).reverse_channel(op)
        )),
        "{said}"
    );
    FLEET
        .cli(&[])
        .args(["finalize", &op.to_string()])
        .assert()
        .success();
    let status = wait_exit(&mut run, Duration::from_secs(60));
    assert!(
        status.success(),
        "{}",
        std::fs::read_to_string(dir.path().join("finalize.err")).unwrap()
    );
    assert_eq!(home_of(1), to);
    assert_eq!(schemas(&from, "\\_shardctl\\_trash%").len(), 0);
    assert!(channels(&from).iter().all(|c| !c.ends_with("_back")));
    nothing_lost(w, "f");

    // Back again, with a window that runs out by itself.
    let started = Instant::now();
    let mut run = spawn(
        &[
            "move",
            "--shard",
            "1",
            "--to",
            &from,
            "--revert-window",
            "3s",
        ],
        dir.path(),
        "expires",
    );
    let status = wait_exit(&mut run, Duration::from_secs(120));
    assert!(
        status.success(),
        "{}",
        std::fs::read_to_string(dir.path().join("expires.err")).unwrap()
    );
    assert!(started.elapsed() >= Duration::from_secs(3));
    assert_eq!(home_of(1), from);
    assert_eq!(schemas(to, "\\_shardctl\\_trash%").len(), 0);
    let rec = newest_op().unwrap();
    let window = rec
        .steps
        .iter()
        .find(|s| s.name == "revert-window")
        .expect("the step is journaled");
    assert_eq!(window.state.as_sql(), "done");
}

/// The refusals: one line each, exit 2, nothing changed.
#[test]
fn bad_revert_and_finalize_requests_are_refused() {
    let _s = serial();
    FLEET.sandbox();
    let from = home_of(1);
    let to = other_node(&from);
    for (name, args, says) in [
        (
            "a revert of an unknown operation",
            vec!["revert", "999999"],
            "999999",
        ),
        (
            "a finalize of an unknown operation",
            vec!["finalize", "999999"],
            "999999",
        ),
        (
            "a revert window of 0",
            vec!["move", "--shard", "1", "--to", to, "--revert-window", "0"],
            "must last more than 0 s",
        ),
        (
            "a revert window that is no duration",
            vec![
                "move",
                "--shard",
                "1",
                "--to",
                to,
                "--revert-window",
                "soon",
            ],
            "a duration is like",
        ),
    ] {
        let out = FLEET.cli(&[]).args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        assert_eq!(out.status.code(), Some(USAGE), "{name} {args:?}: {err}");
        assert!(err.contains(says), "{name} {args:?}: {err}");
    }
    assert_eq!(home_of(1), from, "nothing moved");
    // An operation that is not in a revert window (a finished one without one).
    let dir = tempfile::tempdir().unwrap();
    let mut run = spawn(
        &["move", "--shard", "2", "--to", "node1"],
        dir.path(),
        "plain",
    );
    assert!(wait_exit(&mut run, Duration::from_secs(120)).success());
    let op = newest_op().unwrap().id;
    for verb in ["revert", "finalize"] {
        FLEET
            .cli(&[])
            .args([verb, &op.to_string()])
            .assert()
            .code(USAGE)
            .stderr(predicates::str::contains("is done"));
    }
    // A merge's playbook with a revert window: refused before anything is journaled.
    let ops_before = newest_op().unwrap().id;
    let text = format!(
        "{}  - step: revert-window\n    window_secs: 600\n",
        shardctl::playbook::MERGE_PLAYBOOK.replace("keep: false", "keep: true")
    );
    let pb = common::write_file(dir.path(), "merge-revert.yaml", &text);
    FLEET
        .cli(&[])
        .args(["merge", "--shards", "1,2", "--to", &from, "--playbook"])
        .arg(&pb)
        .assert()
        .code(USAGE)
        .stderr(predicates::str::contains(
            "a revert window belongs to a move: a merge has no old copy to return to",
        ));
    // A split's: its playbook has no drop-source to keep the old copy with.
    let text = format!(
        "{}  - step: revert-window\n    window_secs: 600\n",
        shardctl::playbook::SPLIT_PLAYBOOK
    );
    let pb = common::write_file(dir.path(), "split-revert.yaml", &text);
    FLEET
        .cli(&[])
        .args([
            "split",
            "--shard",
            "1",
            "--at",
            "50",
            "--to",
            to,
            "--playbook",
        ])
        .arg(&pb)
        .assert()
        .code(3)
        .stderr(predicates::str::contains(
            "revert-window needs drop-source with keep: true",
        ));
    assert_eq!(newest_op().unwrap().id, ops_before, "nothing journaled");
    assert_eq!(home_of(1), from);
    // The dry run shows the window's channel and its end.
    let out = FLEET
        .cli(&[])
        .args([
            "move",
            "--shard",
            "2",
            "--to",
            "node2",
            "--revert-window",
            "2h",
            "--dry-run",
        ])
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(text.contains("revert-window"), "{text}");
    assert!(text.contains("_back"), "{text}");
    assert!(
        common::mask_directory_id(&text, "").contains("_shardctl_trash_op"),
        "{text}"
    );
}

/// The revert's fault points the default matrix crashes at; `REVERT_FULL_MATRIX=1` adds
/// the rest (every `before:`, `done:` and `journaled:` of the revert's effects).
fn revert_points() -> Vec<String> {
    let effects = [
        "revert-fence",
        "revert-stop-channel",
        "revert-flip",
        "reset-reverse-channel",
        "revert-install",
        "revert-drop-target",
        "revert-drop-trash",
        "revert-enable-events",
    ];
    if std::env::var("REVERT_FULL_MATRIX").is_ok_and(|v| v == "1") {
        effects
            .iter()
            .flat_map(|e| ["before", "done", "journaled"].map(|at| format!("{at}:{e}")))
            .collect()
    } else {
        [
            "before:revert-fence",
            "done:revert-fence",
            "done:revert-stop-channel",
            "done:revert-install",
            "before:revert-flip",
            "done:revert-flip",
            "done:reset-reverse-channel",
            "done:revert-drop-target",
        ]
        .map(String::from)
        .to_vec()
    }
}

/// shardctl in the background with a fault point armed.
fn spawn_faulty(args: &[&str], dir: &std::path::Path, name: &str, fault: &str) -> Child {
    common::spawn_shardctl(&FLEET.inventory_path(), args, Some(fault), dir, name)
}

/// A crash at each point of a revert, under both routers, then `resume` (again and again
/// `revert` when the crash came before the flip back and the window reopened): the shard
/// ends on its old node with every acknowledged write, nothing left behind on either node.
#[test]
fn a_crash_anywhere_in_a_revert_resumes_to_a_clean_end() {
    let _s = serial();
    FLEET.sandbox();
    for point in revert_points() {
        let dir = tempfile::tempdir().unwrap();
        let from = home_of(1);
        let to = other_node(&from);
        let w = start_workloads("f");
        let mut run = spawn_faulty(
            &["move", "--shard", "1", "--to", to, "--revert-window", "10m"],
            dir.path(),
            "move",
            &format!("crash@{point}"),
        );
        let op = until_window(Duration::from_secs(120), dir.path());
        FLEET
            .cli(&[])
            .args(["revert", &op.to_string()])
            .assert()
            .success();
        let status = wait_exit(&mut run, Duration::from_secs(120));
        assert!(!status.success(), "{point}: the armed run crashed");
        // A revert begun and stopped: finalize is refused until resume settles it.
        let refused = FLEET
            .cli(&[])
            .args(["finalize", &op.to_string()])
            .assert()
            .code(REFUSED);
        let said = String::from_utf8_lossy(&refused.get_output().stderr).into_owned();
        assert!(
            said.contains(&format!("operation {op}: a revert is under way"))
                && said.trim().lines().count() == 1,
            "{point}: {said}"
        );
        let mut resumed = spawn(&["resume", &op.to_string()], dir.path(), "resume");
        let deadline = Instant::now() + Duration::from_secs(180);
        let mut asked_again = false;
        let status = loop {
            if let Some(s) = resumed.try_wait().unwrap() {
                break s;
            }
            let rec = newest_op().unwrap();
            let waiting = rec
                .steps
                .iter()
                .find(|s| s.state.as_sql() != "done")
                .is_some_and(|s| s.name == "revert-window" && s.state.as_sql() == "running");
            if waiting && !asked_again && home_of(1) == to {
                // Rolled back before its flip: the window is open again; ask once more.
                FLEET
                    .cli(&[])
                    .args(["revert", &op.to_string()])
                    .assert()
                    .success();
                asked_again = true;
            }
            assert!(Instant::now() < deadline, "{point}: resume never ended");
            std::thread::sleep(Duration::from_millis(300));
        };
        assert!(
            status.success(),
            "{point}: {}",
            std::fs::read_to_string(dir.path().join("resume.err")).unwrap()
        );
        assert_eq!(home_of(1), from, "{point}: the shard is back");
        nothing_lost(w, "f");
        assert_eq!(
            schemas(&from, "\\_shardctl\\_trash%").len(),
            0,
            "{point}: trash on {from}"
        );
        assert_eq!(
            schemas(to, "\\_shardctl\\_trash%").len(),
            0,
            "{point}: trash on {to}"
        );
        assert_eq!(
            schemas(to, "app\\_1").len(),
            0,
            "{point}: copy left on {to}"
        );
        assert!(
            channels(&from).iter().all(|c| !c.ends_with("_back")),
            "{point}: {:?}",
            channels(&from)
        );
        let mut s = connect(FLEET.sandbox(), &from);
        assert!(
            count(&mut s, "SELECT COUNT(*) FROM app_1.items") >= ROWS,
            "{point}"
        );
        assert_eq!(
            newest_op().unwrap().state.as_sql(),
            "done",
            "{point}: the operation ended"
        );
    }
}

/// The owner takes a `revert` up and is held inside its catch-up (`shardctl pause`: the
/// catch-up parks at its safe point, acknowledged once it does): a `finalize` asked then
/// is refused, exit 5, one line — the owner journals the revert as begun in the transaction
/// that takes the request up, and the finalize's UPDATE is guarded by that phase. Let go,
/// the revert completes with every acknowledged write. Before, the refusal was read in the
/// CLI from a flag journaled only after the catch-up and the verification, and the
/// finalize was accepted during them.
#[test]
fn a_finalize_asked_during_a_reverts_catch_up_is_refused() {
    let _s = serial();
    FLEET.sandbox();
    let dir = tempfile::tempdir().unwrap();
    let from = home_of(1);
    let to = other_node(&from);
    let w = start_workloads("f");
    let mut run = spawn(
        &["move", "--shard", "1", "--to", to, "--revert-window", "10m"],
        dir.path(),
        "move",
    );
    let op = until_window(Duration::from_secs(120), dir.path());
    let op_arg = op.to_string();
    // The window's loop takes requests up while paused; the revert's catch-up parks. The
    // owner's heartbeat reads the pause within a second.
    FLEET.cli(&[]).args(["pause", &op_arg]).assert().success();
    std::thread::sleep(Duration::from_secs(3));
    FLEET.cli(&[]).args(["revert", &op_arg]).assert().success();
    let deadline = Instant::now() + Duration::from_secs(60);
    while newest_op().unwrap().paused_at_millis.is_none() {
        assert!(
            Instant::now() < deadline,
            "the revert never parked in its catch-up"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    assert_eq!(home_of(1), to, "the revert waits in its catch-up");
    let refused = FLEET
        .cli(&[])
        .args(["finalize", &op_arg])
        .assert()
        .code(REFUSED);
    let said = String::from_utf8_lossy(&refused.get_output().stderr).into_owned();
    assert!(
        said.contains(&format!("operation {op}: a revert is under way"))
            && said.trim().lines().count() == 1,
        "{said}"
    );
    FLEET
        .cli(&[])
        .args(["continue", &op_arg])
        .assert()
        .success();
    let status = wait_exit(&mut run, Duration::from_secs(180));
    assert!(
        status.success(),
        "{}",
        std::fs::read_to_string(dir.path().join("move.err")).unwrap()
    );
    assert_eq!(home_of(1), from, "the revert completed");
    nothing_lost(w, "f");
    assert_eq!(
        schemas(to, "app\\_1").len(),
        0,
        "the new node's copy is gone"
    );
    let rec = newest_op().unwrap();
    assert_eq!(rec.state.as_sql(), "done");
    assert_eq!(rec.phase.map(|p| p.as_sql()), Some("done"));
}

/// An operation journaled by a shardctl before the directory stored phases (its row has
/// none) resumes: the phase is derived from its steps on first load and journaled from
/// there on. The run crashes after its fence; the row is made as the old code wrote it.
#[test]
fn an_operation_without_a_journaled_phase_resumes() {
    let _s = serial();
    FLEET.sandbox();
    let dir = tempfile::tempdir().unwrap();
    let from = home_of(1);
    let to = other_node(&from);
    let mut run = spawn_faulty(
        &["move", "--shard", "1", "--to", to],
        dir.path(),
        "move",
        "crash@after:lock",
    );
    let status = wait_exit(&mut run, Duration::from_secs(120));
    assert!(!status.success(), "the armed run crashed");
    let rec = newest_op().unwrap();
    assert_eq!(rec.phase.map(|p| p.as_sql()), Some("fenced"));
    let inv = inventory();
    let mut d = connect(FLEET.sandbox(), inv.directory_home());
    exec(
        &mut d,
        &[&format!(
            "UPDATE `{}`.operations SET phase = NULL WHERE op_id = {}",
            inv.file.directory.schema, rec.id
        )],
    );
    assert_eq!(newest_op().unwrap().phase, None);
    let mut resumed = spawn(&["resume", &rec.id.to_string()], dir.path(), "resume");
    let status = wait_exit(&mut resumed, Duration::from_secs(180));
    assert!(
        status.success(),
        "{}",
        std::fs::read_to_string(dir.path().join("resume.err")).unwrap()
    );
    assert_eq!(home_of(1), to, "the move went on from where it stopped");
    let rec = newest_op().unwrap();
    assert_eq!(rec.state.as_sql(), "done");
    assert_eq!(rec.phase.map(|p| p.as_sql()), Some("done"));
}

/// Mid-upgrade, an owner of an earlier release journals no phase and records a revert as
/// begun only at its fence: a `finalize` (or `extend`) while such an owner lives is
/// refused, since its revert may be under way unseen. The owner here is of this release,
/// its row made phase-less as the earlier one's is; once the row has its phase again the
/// same `finalize` is taken.
#[test]
fn a_finalize_is_refused_while_a_phase_less_owner_lives() {
    let _s = serial();
    FLEET.sandbox();
    let dir = tempfile::tempdir().unwrap();
    let from = home_of(1);
    let to = other_node(&from);
    let mut run = spawn(
        &["move", "--shard", "1", "--to", to, "--revert-window", "10m"],
        dir.path(),
        "move",
    );
    let op = until_window(Duration::from_secs(120), dir.path());
    let op_arg = op.to_string();
    let mut d = connect(FLEET.sandbox(), "node1");
    exec(
        &mut d,
        &[&format!(
            "UPDATE shardctl.operations SET phase = NULL WHERE op_id = {op}"
        )],
    );
    let refused = FLEET
        .cli(&[])
        .args(["finalize", &op_arg])
        .assert()
        .code(REFUSED);
    let said = String::from_utf8_lossy(&refused.get_output().stderr).into_owned();
    assert!(
        said.contains(&format!(
            "operation {op} is driven by a shardctl of an earlier release"
        )) && said.trim().lines().count() == 1,
        "{said}"
    );
    assert_eq!(
        count(
            &mut d,
            &format!("SELECT COUNT(*) FROM shardctl.operations WHERE op_id = {op} AND window_request IS NULL")
        ),
        1,
        "nothing recorded"
    );
    exec(
        &mut d,
        &[&format!(
            "UPDATE shardctl.operations SET phase = 'window-open' WHERE op_id = {op}"
        )],
    );
    FLEET
        .cli(&[])
        .args(["finalize", &op_arg])
        .assert()
        .success();
    let status = wait_exit(&mut run, Duration::from_secs(180));
    assert!(
        status.success(),
        "{}",
        std::fs::read_to_string(dir.path().join("move.err")).unwrap()
    );
    assert_eq!(home_of(1), to, "the move stands");
}

/// A revert asked for in time that then fails before its flip (here the old copy differs
/// from the new node's behind the reverse channel, so the revert's verification refuses)
/// does not let a window that ended meanwhile drop the old copy in the same breath: the
/// window opens again for its whole length, and ends by itself after that.
#[test]
fn a_revert_that_fails_after_the_window_ended_keeps_the_old_copy_a_window_longer() {
    let _s = serial();
    FLEET.sandbox();
    let dir = tempfile::tempdir().unwrap();
    let from = home_of(1);
    let to = other_node(&from);
    let mut first = spawn(
        &["move", "--shard", "1", "--to", to, "--revert-window", "8s"],
        dir.path(),
        "first",
    );
    let op = until_window(Duration::from_secs(120), dir.path());
    first.kill().unwrap();
    first.wait().unwrap();
    let trash = schemas(&from, &format!("\\_shardctl\\_trash\\_%\\_op{op}\\_%"));
    assert_eq!(trash.len(), 1, "the old copy is kept: {trash:?}");
    let mut old = connect(FLEET.sandbox(), &from);
    common::exec_unlogged(
        &mut old,
        &[&format!(
            "UPDATE `{}`.items SET note = 'differs' ORDER BY k, n LIMIT 1",
            trash[0]
        )],
    );
    FLEET
        .cli(&[])
        .args(["revert", &op.to_string()])
        .assert()
        .success();
    std::thread::sleep(Duration::from_secs(9));
    let mut resumed = spawn(&["resume", &op.to_string()], dir.path(), "resume");
    let err = dir.path().join("resume.err");
    let deadline = Instant::now() + Duration::from_secs(120);
    while !std::fs::read_to_string(&err)
        .unwrap_or_default()
        .contains("the revert failed before its flip")
    {
        assert!(
            resumed.try_wait().unwrap().is_none() && Instant::now() < deadline,
            "the revert did not fail as set up: {}",
            std::fs::read_to_string(&err).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_secs(2));
    assert!(
        resumed.try_wait().unwrap().is_none(),
        "the window ended with the failed revert: {}",
        std::fs::read_to_string(&err).unwrap_or_default()
    );
    assert_eq!(schemas(&from, &trash[0].replace('_', "\\_")).len(), 1);
    assert_eq!(home_of(1), to, "the move stands");
    let status = wait_exit(&mut resumed, Duration::from_secs(120));
    assert!(
        status.success(),
        "{}",
        std::fs::read_to_string(&err).unwrap_or_default()
    );
    assert!(
        schemas(&from, &trash[0].replace('_', "\\_")).is_empty(),
        "the window's end dropped the old copy"
    );
    assert_eq!(home_of(1), to);
}
