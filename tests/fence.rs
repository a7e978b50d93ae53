//! The shard fence against the application's sessions, on real servers: a long transaction
//! on a shard table holds the other clients of the shard only for the short lock wait of
//! each try (not the whole `timeout_secs`), is named before fencing, and with
//! `--kill-blockers` is ended so the move completes; SIGHUP (a dropped ssh session) under
//! the fence stops at a safe point like SIGTERM, with the fence lifted, and `resume`
//! finishes the move — also when the SIGHUP comes from the terminal itself hanging up,
//! after which every write to it fails.

mod common;

use common::{connect, count, exec, serial, FleetSetup, Function, SharedFleet};
use shardctl::directory::Directory;
use shardctl::sandbox::Sandbox;
use shardctl::server::Stmt;
use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

const REFUSED: i32 = 5;
const INTERRUPTED: i32 = 130;
const ROWS: u64 = 2_000;

/// The shards, all on node1 at first, each used by one test.
const HELD_BACK: u32 = 1;
const KILLED: u32 = 2;
const HUNG_UP: u32 = 3;
const TERMINAL_GONE: u32 = 4;
const SHARDS: u32 = 4;

fn lower(shard: u32) -> u64 {
    u64::from(shard - 1) * 1_000_000
}

/// 3 nodes; `app.t` sharded by `k` over range shards on node1, each with `ROWS` rows.
static FLEET: SharedFleet = SharedFleet::over(common::sandbox3, set_up);

/// Sets up the fleet once, on first use (see [`FLEET`]).
fn set_up(sb: &Sandbox) {
    let bounds: Vec<String> = (1..=SHARDS).map(|s| lower(s).to_string()).collect();
    let shards: Vec<(&str, &str)> = bounds.iter().map(|b| ("node1", b.as_str())).collect();
    let rows: Vec<String> = (1..=SHARDS)
        .map(|shard| {
            format!(
                "INSERT INTO app_{shard}.t SELECT seq, {} + seq, REPEAT('x', 40) FROM app_{shard}.seq_1_to_{ROWS}",
                lower(shard)
            )
        })
        .collect();
    FleetSetup::new()
        .schema(&[
            "CREATE DATABASE app",
            "CREATE TABLE app.t (id BIGINT PRIMARY KEY, k BIGINT NOT NULL, pad VARCHAR(64) NOT NULL, KEY (k))",
        ])
        .function(Function::range("f").table("app.t", "k").shards(&shards))
        .rows("node1", &rows)
        .build(sb);
}

/// A shardctl process killed if the test fails before it exits.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `shardctl -v move --shard S --to node2 ARGS`, stderr collected line by line; `marker`
/// lines are signalled.
fn spawn_move(
    shard: u32,
    args: &[&str],
    fault: Option<&str>,
    marker: impl Fn(&str) -> bool + Send + 'static,
) -> (Running, Arc<Mutex<String>>, mpsc::Receiver<()>) {
    let mut cmd = common::move_command(&FLEET.inventory_path(), shard, "node2", args, fault);
    let mut child = cmd.spawn().expect("start shardctl");
    let pipe = child.stderr.take().expect("piped stderr");
    let text = Arc::new(Mutex::new(String::new()));
    let (tx, seen) = mpsc::channel();
    let t = Arc::clone(&text);
    std::thread::spawn(move || {
        for line in BufReader::new(pipe).lines() {
            let Ok(line) = line else { break };
            if marker(&line) {
                let _ = tx.send(());
            }
            let mut t = t.lock().unwrap();
            t.push_str(&line);
            t.push('\n');
        }
    });
    (Running(child), text, seen)
}

fn exit_within(child: &mut Child, limit: Duration, stderr: &Mutex<String>) -> i32 {
    let t = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code().unwrap_or(-1);
        }
        assert!(
            t.elapsed() < limit,
            "shardctl did not exit within {limit:?}; stderr:\n{}",
            stderr.lock().unwrap()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn node_of(shard: u32) -> String {
    let inv = common::inventory(FLEET.sandbox());
    let snap = Directory::open(&inv).unwrap().load().unwrap();
    snap.shard(shard).unwrap().node.clone()
}

fn last_op() -> shardctl::directory::journal::OperationRecord {
    let inv = common::inventory(FLEET.sandbox());
    let mut d = Directory::open(&inv).unwrap();
    let id = d.operations(None).unwrap()[0].id;
    d.operation(id).unwrap()
}

/// Tables of `app_<shard>` on node1 hidden under a fence's name now.
fn hidden_tables(shard: u32) -> i64 {
    let mut s = connect(FLEET.sandbox(), "node1");
    count(
        &mut s,
        &format!(
            "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'app_{shard}' AND TABLE_NAME LIKE '\\_shardctl\\_op%'"
        ),
    )
}

fn rename_waiting(watch: &mut shardctl::server::Server) -> bool {
    count(
        watch,
        "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE 'RENAME TABLE%'",
    ) > 0
}

/// A session on node1 inside a transaction that has read the shard's table, with the
/// shard's schema as its default (as an application connects); its session id.
fn open_blocker(shard: u32) -> (shardctl::server::Server, u64) {
    let mut b = connect(FLEET.sandbox(), "node1");
    exec(
        &mut b,
        &[
            &format!("USE app_{shard}"),
            "START TRANSACTION",
            "SELECT pad FROM t WHERE id = 1",
        ],
    );
    let id: u64 = b
        .first(&Stmt::text("SELECT CONNECTION_ID()"))
        .unwrap()
        .unwrap();
    (b, id)
}

/// A long transaction holds the shard's table while the fence is tried: another client
/// reading another row waits behind the fence's RENAME at most about one short lock wait
/// (3 s), not the whole 10 s of `timeout_secs` as one long try held it; the blocking
/// session is named in the log and the journal, and the move stops (refused, nothing
/// flipped, no fence left) asking to end it.
#[test]
fn a_long_transaction_holds_other_clients_only_for_a_short_try_and_is_named() {
    let _s = serial();
    FLEET.sandbox();
    let shard = HELD_BACK;
    let (mut blocker, blocker_id) = open_blocker(shard);
    let (mut child, stderr, _) = spawn_move(shard, &[], None, |_| false);
    let mut watch = connect(FLEET.sandbox(), "node1");
    let deadline = Instant::now() + Duration::from_secs(120);
    while !rename_waiting(&mut watch) {
        assert!(
            Instant::now() < deadline,
            "the fence's RENAME never waited; stderr:\n{}",
            stderr.lock().unwrap()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // Another client of the shard, reading another row, queues behind the RENAME.
    let mut reader = connect(FLEET.sandbox(), "node1");
    let started = Instant::now();
    let n = count(
        &mut reader,
        &format!("SELECT COUNT(*) FROM app_{shard}.t WHERE id = 2"),
    );
    let held = started.elapsed();
    assert_eq!(n, 1);
    assert!(
        held < Duration::from_secs(6),
        "a reader of another row was held {held:?} behind the fence (one try waits 3 s)"
    );
    let code = exit_within(&mut child.0, Duration::from_secs(120), &stderr);
    let err = stderr.lock().unwrap().clone();
    assert_eq!(code, REFUSED, "{err}");
    let named = format!("session {blocker_id} (");
    assert!(
        err.contains("the shard fence waits for") && err.contains(&named),
        "the blocker is named in the log: {err}"
    );
    assert!(err.contains("--kill-blockers"), "{err}");
    let op = last_op();
    let intents: Vec<&serde_json::Value> = op
        .effects
        .iter()
        .filter(|e| e.effect == "raise-fence")
        .map(|e| &e.detail)
        .collect();
    assert!(intents.len() >= 2, "the fence was tried again: {intents:?}");
    assert!(
        intents
            .iter()
            .all(|d| d["blockers"][0]["session"] == serde_json::json!(blocker_id)),
        "every try journals the blocker: {intents:?}"
    );
    assert_eq!(node_of(shard), "node1");
    assert_eq!(hidden_tables(shard), 0, "no fence left up");
    // The application's transaction was left alone.
    exec(&mut blocker, &["SELECT 1", "COMMIT"]);
    FLEET.cli(&["abort", &op.id.to_string()]).assert().success();
}

/// With `--kill-blockers` the session holding the shard's table is ended before the
/// fence's try (journaled as the kill-blockers effect) and the move completes.
#[test]
fn kill_blockers_ends_the_blocking_session_and_the_move_completes() {
    let _s = serial();
    FLEET.sandbox();
    let shard = KILLED;
    let (mut blocker, blocker_id) = open_blocker(shard);
    let mut bystander = connect(FLEET.sandbox(), "node1");
    // A session on another shard of node1: shard HELD_BACK stays there whatever ran
    // before (the shards the other tests move may have left).
    exec(
        &mut bystander,
        &[
            "START TRANSACTION",
            &format!("SELECT COUNT(*) FROM app_{HELD_BACK}.t"),
        ],
    );
    let (mut child, stderr, _) = spawn_move(shard, &["--kill-blockers"], None, |_| false);
    let code = exit_within(&mut child.0, Duration::from_secs(180), &stderr);
    let err = stderr.lock().unwrap().clone();
    assert_eq!(code, 0, "{err}");
    assert_eq!(node_of(shard), "node2");
    assert!(
        blocker.exec(&Stmt::text("SELECT 1")).is_err(),
        "the blocking session was ended"
    );
    exec(&mut bystander, &["SELECT 1", "COMMIT"]);
    let op = last_op();
    let kill = op
        .effects
        .iter()
        .find(|e| e.effect == "kill-blockers")
        .unwrap_or_else(|| panic!("no kill-blockers effect journaled: {:?}", op.effects));
    assert_eq!(kill.state.as_sql(), "done");
    assert_eq!(
        kill.detail["blockers"][0]["session"],
        serde_json::json!(blocker_id)
    );
    assert_eq!(
        kill.detail["blockers"].as_array().map(Vec::len),
        Some(1),
        "only the session on the shard's tables: {}",
        kill.detail
    );
}

/// SIGHUP (the terminal or ssh session gone) while shardctl holds the shard fence: it stops
/// at the next safe point like SIGTERM — the fence lifted, nothing flipped, exit 130 naming
/// the operation — and `resume` finishes the move.
#[test]
fn sighup_under_the_fence_lifts_it_and_resume_finishes() {
    let _s = serial();
    FLEET.sandbox();
    let shard = HUNG_UP;
    let (mut child, stderr, paused) =
        spawn_move(shard, &[], Some("pause=120@after:lock"), |l: &str| {
            l.contains("fault point after:lock: pausing")
        });
    paused
        .recv_timeout(Duration::from_secs(180))
        .unwrap_or_else(|_| panic!("never fenced; stderr:\n{}", stderr.lock().unwrap()));
    assert!(hidden_tables(shard) > 0, "the fence is up");
    // SAFETY: kill only sends a signal to the process this test started.
    assert_eq!(unsafe { libc::kill(child.0.id() as i32, libc::SIGHUP) }, 0);
    let code = exit_within(&mut child.0, Duration::from_secs(60), &stderr);
    let err = stderr.lock().unwrap().clone();
    assert_eq!(code, INTERRUPTED, "{err}");
    let line = err
        .lines()
        .find(|l| l.contains("stopped at a safe point"))
        .unwrap_or_else(|| panic!("no interrupt message in:\n{err}"));
    let op = last_op().id;
    assert!(line.contains(&format!("`shardctl resume {op}`")), "{line}");
    assert_eq!(hidden_tables(shard), 0, "the fence was lifted");
    assert_eq!(node_of(shard), "node1", "nothing flipped");
    FLEET.cli(&["resume", &op.to_string()]).assert().success();
    assert_eq!(node_of(shard), "node2");
    let mut t = connect(FLEET.sandbox(), "node2");
    assert_eq!(
        count(&mut t, &format!("SELECT COUNT(*) FROM app_{shard}.t")) as u64,
        ROWS
    );
}

/// The operator's terminal goes away (its master side closed, as when an ssh session
/// drops) while shardctl, its controlling process, holds the fence: the kernel's SIGHUP
/// stops it at the safe point, every later write to the terminal fails (EIO) without
/// stopping it, it exits 130 with the fence lifted, and `resume` finishes.
#[test]
fn a_terminal_hanging_up_under_the_fence_stops_it_like_sighup() {
    use std::io::Read;
    use std::os::fd::{FromRawFd, OwnedFd};
    let _s = serial();
    FLEET.sandbox();
    let shard = TERMINAL_GONE;
    let (mut master, mut slave) = (0, 0);
    // SAFETY: openpty writes two fresh descriptors, owned from here on.
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(rc, 0);
    // SAFETY: fcntl on the descriptor just opened. shardctl must not inherit the master
    // side: a copy open in the child would keep the terminal from ever hanging up.
    assert_eq!(
        unsafe { libc::fcntl(master, libc::F_SETFD, libc::FD_CLOEXEC) },
        0
    );
    let (master, slave) = unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("shardctl"));
    cmd.env_remove("SHARDCTL_CONFIG")
        .env("SHARDCTL_YES", "1")
        .env("NO_COLOR", "1")
        .env("SHARDCTL_FAULT", "pause=120@after:lock")
        .arg("--config")
        .arg(FLEET.inventory_path())
        .args(["-v", "move", "--shard", &shard.to_string(), "--to", "node2"])
        .stdin(slave.try_clone().unwrap())
        .stdout(slave.try_clone().unwrap())
        .stderr(slave);
    // SAFETY: setsid and ioctl are async-signal-safe; the child gets a session of its own
    // with the terminal as its controlling terminal, as a login shell's job would.
    unsafe {
        cmd.pre_exec(|| {
            if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY, 0) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let child = cmd.spawn().expect("spawn under a pty");
    drop(cmd);
    let mut child = Running(child);
    let mut screen = std::fs::File::from(master);
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    let deadline = Instant::now() + Duration::from_secs(180);
    while !String::from_utf8_lossy(&seen).contains("fault point after:lock: pausing") {
        assert!(
            Instant::now() < deadline,
            "never fenced:\n{}",
            String::from_utf8_lossy(&seen)
        );
        match screen.read(&mut buf) {
            Ok(0) | Err(_) => panic!(
                "the terminal closed early:\n{}",
                String::from_utf8_lossy(&seen)
            ),
            Ok(n) => seen.extend_from_slice(&buf[..n]),
        }
    }
    assert!(hidden_tables(shard) > 0, "the fence is up");
    // The terminal hangs up.
    drop(screen);
    let nothing = Mutex::new(String::from("(the terminal is gone)"));
    let code = exit_within(&mut child.0, Duration::from_secs(60), &nothing);
    assert_eq!(code, INTERRUPTED);
    assert_eq!(hidden_tables(shard), 0, "the fence was lifted");
    assert_eq!(node_of(shard), "node1", "nothing flipped");
    let op = last_op();
    FLEET
        .cli(&["resume", &op.id.to_string()])
        .assert()
        .success();
    assert_eq!(node_of(shard), "node2");
}
