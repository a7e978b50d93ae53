//! Signals and closed pipes on real servers: Ctrl-C (SIGINT to the whole process group, as a
//! terminal sends it) and SIGTERM during the dump and native copies stop the move within
//! seconds with exit 130, leave no dump tool running and name the operation to resume or
//! abort, and `resume` then finishes the move; a second signal exits at once only after the
//! first has gone unhonoured for 10 s; a closed stdout/stderr neither panics nor stops a
//! move; the copy's progress counters advance and end exact.

mod common;

use common::{connect, count, exec, serial, FleetSetup, Function, SharedFleet};
use shardctl::copy::{native, Progress, SchemaPair};
use shardctl::directory::Directory;
use shardctl::ident::Ident;
use shardctl::ops::mover::{Mover, StepEvent};
use shardctl::playbook::Playbook;
use shardctl::sandbox::Sandbox;
use shardctl::server::ConnectSpec;
use std::io::{BufRead, BufReader};
use std::os::fd::{FromRawFd, OwnedFd};
use std::process::{Child, Command, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

const INTERRUPTED: i32 = 130;
/// Rows of the small shards.
const SMALL: u64 = 3_000;
/// Rows of the shards whose copy is interrupted mid-way (large enough to take seconds).
const LARGE: u64 = 300_000;
/// Rows of the shards whose copy progress is sampled.
const MEDIUM: u64 = 20_000;

/// The shards (ids in creation order), all on node1 at first, each used by one test.
const DUMP_SIGINT: u32 = 1;
const NATIVE_SIGINT: u32 = 2;
const DUMP_SIGTERM: u32 = 3;
const CLOSED_PIPE: u32 = 4;
const LIBRARY_PROGRESS: u32 = 5;
const MOVER_PROGRESS: u32 = 6;
const SECOND_SIGNAL: u32 = 7;
const STALLED_DUMP: u32 = 8;
const SHARD_ROWS: [u64; 8] = [SMALL, LARGE, LARGE, SMALL, MEDIUM, MEDIUM, SMALL, SMALL];

// The tests hold `serial()`: one test at a time: the timings below assume the machine is
// not busy with another move.

/// Lower bound of a shard's key range.
fn lower(shard: u32) -> u64 {
    u64::from(shard - 1) * 1_000_000
}

/// 3 nodes; `app.t` sharded by `k` over 7 range shards on node1, each filled with SQL.
static FLEET: SharedFleet = SharedFleet::new(3, set_up);

/// Sets up the fleet once, on first use (see [`FLEET`]).
fn set_up(sb: &Sandbox) {
    let shards = 1..=SHARD_ROWS.len() as u32;
    let bounds: Vec<String> = shards.clone().map(|s| lower(s).to_string()).collect();
    let placement: Vec<(&str, &str)> = bounds.iter().map(|b| ("node1", b.as_str())).collect();
    let rows: Vec<String> = shards
        .zip(SHARD_ROWS)
        .flat_map(|(shard, rows)| {
            [
                format!(
                    "INSERT INTO app_{shard}.t SELECT seq, {} + seq, REPEAT('x', 40) FROM app_{shard}.seq_1_to_{rows}",
                    lower(shard)
                ),
                format!("ANALYZE TABLE app_{shard}.t"),
            ]
        })
        .collect();
    FleetSetup::new()
        .schema(&[
            "CREATE DATABASE app",
            "CREATE TABLE app.t (id BIGINT PRIMARY KEY, k BIGINT NOT NULL, pad VARCHAR(64) NOT NULL, KEY (k))",
        ])
        .function(Function::range("f").table("app.t", "k").shards(&placement))
        .rows("node1", &rows)
        .build(sb);
}

fn inventory() -> shardctl::config::Inventory {
    common::inventory(FLEET.sandbox())
}

/// A shardctl process killed if the test fails before it exits.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl std::ops::Deref for Running {
    type Target = Child;
    fn deref(&self) -> &Child {
        &self.0
    }
}

impl std::ops::DerefMut for Running {
    fn deref_mut(&mut self) -> &mut Child {
        &mut self.0
    }
}

/// shardctl with the fleet's inventory, in a process group of its own (so a signal to the
/// group is what a terminal's Ctrl-C does), stderr piped.
fn spawn_move(shard: u32, args: &[&str], fault: Option<&str>) -> Running {
    let mut cmd = common::move_command(&FLEET.inventory_path(), shard, "node2", args, fault);
    Running(cmd.spawn().expect("start shardctl"))
}

/// Collects a child's stderr in a thread (so it never blocks on a full pipe) and signals
/// the lines that match `marker`.
struct Stderr {
    text: Arc<Mutex<String>>,
    seen: mpsc::Receiver<()>,
}

/// The step event line of the backup step starting (`op N step  2 backup   ...`).
/// The `-v` line of the backup step starting (off a terminal only finished steps print a
/// line of their own).
fn backup_started(line: &str) -> bool {
    line.contains(" step  2 backup started")
}

impl Stderr {
    fn watch(child: &mut Child, marker: impl Fn(&str) -> bool + Send + 'static) -> Stderr {
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
        Stderr { text, seen }
    }

    fn wait_for_marker(&self, limit: Duration) {
        self.seen
            .recv_timeout(limit)
            .unwrap_or_else(|_| panic!("marker not seen; stderr:\n{}", self.text()));
    }

    fn text(&self) -> String {
        self.text.lock().unwrap().clone()
    }
}

/// (pid, command name) of the live children of `pid`, from /proc.
fn children_of(pid: u32) -> Vec<(u32, String)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(child) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{child}/stat")) else {
            continue;
        };
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
            continue;
        };
        let mut rest = stat[close + 2..].split(' ');
        let (state, ppid) = (rest.next(), rest.next());
        if ppid == Some(&pid.to_string()) && state != Some("Z") {
            out.push((child, stat[open + 1..close].to_string()));
        }
    }
    out
}

/// True while `pid` exists and is not a zombie.
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| {
            s.rfind(')')
                .and_then(|i| s[i + 2..].split(' ').next().map(|st| st != "Z"))
                .unwrap_or(false)
        })
        .unwrap_or(false)
}

fn send(pid: i32, sig: libc::c_int) {
    // SAFETY: kill only sends a signal to a process (group) this test started.
    let rc = unsafe { libc::kill(pid, sig) };
    assert_eq!(rc, 0, "kill({pid}, {sig})");
}

/// Waits at most `limit` for `child` to exit; kills it and fails the test otherwise.
fn exit_within(child: &mut Child, limit: Duration, stderr: &Stderr) -> (i32, Duration) {
    let t = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return (status.code().unwrap_or(-1), t.elapsed());
        }
        if t.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "shardctl did not exit within {limit:?}; stderr:\n{}",
                stderr.text()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The operation id named in the interrupt message, which must also say how to go on.
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
    assert!(line.contains(&format!("`shardctl resume {op}`")), "{line}");
    assert!(line.contains(&format!("`shardctl abort {op}`")), "{line}");
    op
}

fn operation(op: u64) -> shardctl::directory::journal::OperationRecord {
    Directory::open(&inventory())
        .unwrap()
        .operation(op)
        .unwrap()
}

fn step_state(op: u64, name: &str) -> String {
    operation(op)
        .steps
        .iter()
        .find(|s| s.name == name)
        .map(|s| s.state.to_string())
        .unwrap_or_default()
}

fn node_of(shard: u32) -> String {
    let snap = Directory::open(&inventory()).unwrap().load().unwrap();
    snap.shard(shard).unwrap().node.clone()
}

/// The shard is on node2 with all its rows, and gone from node1.
fn assert_moved(shard: u32) {
    assert_eq!(node_of(shard), "node2");
    let mut t = connect(FLEET.sandbox(), "node2");
    let rows = count(&mut t, &format!("SELECT COUNT(*) FROM app_{shard}.t"));
    assert_eq!(rows as u64, SHARD_ROWS[shard as usize - 1]);
    let mut s = connect(FLEET.sandbox(), "node1");
    assert_eq!(
        count(
            &mut s,
            &format!(
                "SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name = 'app_{shard}'"
            )
        ),
        0
    );
}

/// A signal during a copy.
struct Interrupt {
    shard: u32,
    method: &'static str,
    /// SHARDCTL_FAULT for the run.
    fault: Option<&'static str>,
    /// The stderr line after which to wait (for the target's table when `streaming`, then
    /// `delay`) and signal.
    marker: fn(&str) -> bool,
    /// Wait until the shard's table exists on the target: the copy is then streaming rows.
    streaming: bool,
    delay: Duration,
    /// To the whole process group (a terminal's Ctrl-C) or to shardctl alone.
    to_group: bool,
    signal: libc::c_int,
    /// The dump tools must be running when the signal is sent.
    expect_tools: bool,
}

/// Signal during the copy, check the stop, then resume to the end.
fn interrupt_copy_then_resume(i: Interrupt) {
    let Interrupt {
        shard,
        method,
        fault,
        marker,
        streaming,
        delay,
        to_group,
        signal: sig,
        expect_tools,
    } = i;
    let mut child = spawn_move(shard, &["--method", method], fault);
    let stderr = Stderr::watch(&mut child, marker);
    stderr.wait_for_marker(Duration::from_secs(60));
    if streaming {
        let mut t = connect(FLEET.sandbox(), "node2");
        let exists = format!(
            "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'app_{shard}'"
        );
        let since = Instant::now();
        while count(&mut t, &exists) == 0 {
            assert!(since.elapsed() < Duration::from_secs(30), "no copy started");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    std::thread::sleep(delay);
    let tools = children_of(child.id());
    if expect_tools {
        let names: Vec<&str> = tools.iter().map(|(_, n)| n.as_str()).collect();
        assert!(
            names.contains(&"mariadb-dump") && names.contains(&"mariadb"),
            "the dump tools run during the copy: {names:?}"
        );
    }
    let pid = child.id() as i32;
    send(if to_group { -pid } else { pid }, sig);
    let (code, took) = exit_within(&mut child, Duration::from_secs(5), &stderr);
    let text = stderr.text();
    assert_eq!(code, INTERRUPTED, "stderr:\n{text}");
    assert!(!text.contains("panicked"), "{text}");
    for (pid, name) in &tools {
        assert!(
            !alive(*pid),
            "{name} ({pid}) still runs after shardctl exited"
        );
    }
    let op = named_operation(&text);
    assert_eq!(
        step_state(op, "backup"),
        "failed",
        "the signal stopped the copy itself (took {took:?}); stderr:\n{text}"
    );
    assert_eq!(node_of(shard), "node1", "nothing flipped");
    FLEET.cli(&["resume", &op.to_string()]).assert().success();
    let done = operation(op);
    assert_eq!(done.state.as_sql(), "done");
    let full_copy = done
        .steps
        .iter()
        .find(|s| s.name == "backup")
        .and_then(|s| s.millis);
    eprintln!("{method}: exited {took:?} after the signal; the full copy took {full_copy:?} ms");
    assert_moved(shard);
}

#[test]
fn ctrl_c_to_the_process_group_stops_a_dump_copy_and_resume_finishes_the_move() {
    FLEET.sandbox();
    let _s = serial();
    // The copy pauses (until interrupted) after the first INSERT reached the client, with
    // both tools alive; Ctrl-C goes to the whole group as a terminal sends it.
    interrupt_copy_then_resume(Interrupt {
        shard: DUMP_SIGINT,
        method: "dump",
        fault: Some("pause=60@copy"),
        marker: |l| l.contains("fault point copy: pausing"),
        streaming: false,
        delay: Duration::from_millis(200),
        to_group: true,
        signal: libc::SIGINT,
        expect_tools: true,
    });
}

#[test]
fn ctrl_c_to_the_process_group_stops_a_native_copy_mid_table_and_resume_finishes_the_move() {
    FLEET.sandbox();
    let _s = serial();
    // No fault point: the signal arrives while the readers stream a large table.
    interrupt_copy_then_resume(Interrupt {
        shard: NATIVE_SIGINT,
        method: "native",
        fault: None,
        marker: backup_started,
        streaming: true,
        delay: Duration::from_millis(150),
        to_group: true,
        signal: libc::SIGINT,
        expect_tools: false,
    });
}

#[test]
fn sigterm_stops_a_running_dump_copy_and_resume_finishes_the_move() {
    FLEET.sandbox();
    let _s = serial();
    // No fault point: SIGTERM to shardctl alone (as a supervisor sends it) while the dump
    // streams a large table into the client.
    interrupt_copy_then_resume(Interrupt {
        shard: DUMP_SIGTERM,
        method: "dump",
        fault: None,
        marker: backup_started,
        streaming: true,
        delay: Duration::from_millis(150),
        to_group: false,
        signal: libc::SIGTERM,
        expect_tools: true,
    });
}

#[test]
fn a_second_signal_exits_at_once_only_after_the_first_went_unhonoured_for_ten_seconds() {
    FLEET.sandbox();
    let _s = serial();
    // A step that ignores interrupts (as one stuck on a server would).
    let mut child = spawn_move(SECOND_SIGNAL, &[], Some("hang=60@after:preflight"));
    let stderr = Stderr::watch(&mut child, |l| {
        l.contains("fault point after:preflight: hanging")
    });
    stderr.wait_for_marker(Duration::from_secs(60));
    let pid = child.id() as i32;
    let first = Instant::now();
    send(-pid, libc::SIGINT);
    std::thread::sleep(Duration::from_secs(2));
    send(-pid, libc::SIGINT);
    std::thread::sleep(Duration::from_secs(1));
    assert!(
        child.try_wait().unwrap().is_none(),
        "a second Ctrl-C within 10 s keeps waiting for the safe point; stderr:\n{}",
        stderr.text()
    );
    std::thread::sleep(
        Duration::from_secs(10).saturating_sub(first.elapsed()) + Duration::from_millis(300),
    );
    send(-pid, libc::SIGINT);
    let (code, took) = exit_within(&mut child, Duration::from_secs(2), &stderr);
    assert_eq!(code, INTERRUPTED);
    assert!(took < Duration::from_secs(1), "{took:?}");
    let text = stderr.text();
    assert!(text.contains("still stopping at a safe point"), "{text}");
    assert!(text.contains("exiting now"), "{text}");
    // The journal is left as after a crash; resume (taking over) finishes the move.
    let op = Directory::open(&inventory())
        .unwrap()
        .operations(None)
        .unwrap()
        .into_iter()
        .find(|o| o.shard_id == Some(SECOND_SIGNAL))
        .unwrap()
        .id;
    FLEET.cli(&["resume", &op.to_string()]).assert().success();
    assert_moved(SECOND_SIGNAL);
}

/// A pipe whose read end is already closed (writes fail with EPIPE).
fn broken_pipe() -> Stdio {
    let mut fds = [0; 2];
    // SAFETY: pipe2(2) fills two fresh descriptors that we then own. Close-on-exec, so
    // the child holds only the write end it is given: once this side closes the read end,
    // its writes fail with EPIPE instead of filling a pipe nobody reads (`-v` logs every
    // statement, far more than a pipe holds).
    assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
    // SAFETY: both descriptors are ours and open; each is wrapped once.
    let (r, w) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    drop(r);
    Stdio::from(w)
}

#[test]
fn a_move_whose_output_pipe_closes_early_still_finishes() {
    FLEET.sandbox();
    let _s = serial();
    // `shardctl -v move ... 2>&1 | head -5`: one pipe for both, closed after 5 lines.
    let mut fds = [0; 2];
    // SAFETY: pipe2(2) fills two fresh descriptors that we then own. Close-on-exec, so
    // the child holds only the write end it is given: once this side closes the read end,
    // its writes fail with EPIPE instead of filling a pipe nobody reads (`-v` logs every
    // statement, far more than a pipe holds).
    assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
    // SAFETY: both descriptors are ours and open; each is wrapped once.
    let (r, w) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    let mut child = Running(
        Command::new(assert_cmd::cargo::cargo_bin("shardctl"))
            .env("SHARDCTL_YES", "1")
            .env_remove("SHARDCTL_CONFIG")
            .env_remove("SHARDCTL_FAULT")
            .env("NO_COLOR", "1")
            .arg("--config")
            .arg(FLEET.inventory_path())
            .args([
                "-v",
                "move",
                "--shard",
                &CLOSED_PIPE.to_string(),
                "--to",
                "node2",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::from(w.try_clone().unwrap()))
            .stderr(Stdio::from(w))
            .spawn()
            .unwrap(),
    );
    let mut head = BufReader::new(std::fs::File::from(r));
    let mut seen = String::new();
    for _ in 0..5 {
        head.read_line(&mut seen).unwrap();
    }
    drop(head);
    assert_eq!(seen.lines().count(), 5, "{seen}");
    let t = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(
            t.elapsed() < Duration::from_secs(180),
            "the move did not end"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(status.code(), Some(0), "the move exits as if printed");
    let op = Directory::open(&inventory())
        .unwrap()
        .operations(None)
        .unwrap()
        .into_iter()
        .find(|o| o.shard_id == Some(CLOSED_PIPE))
        .unwrap();
    assert_eq!(op.state.as_sql(), "done");
    assert_moved(CLOSED_PIPE);
}

#[test]
fn results_into_a_closed_pipe_neither_panic_nor_fail() {
    FLEET.sandbox();
    let _s = serial();
    let config = FLEET.inventory_path();
    let dir = FLEET.sandbox().dir().to_path_buf();
    let runs: Vec<Vec<std::ffi::OsString>> = vec![
        vec!["--config".into(), config.clone().into(), "ops".into()],
        vec![
            "--config".into(),
            config.clone().into(),
            "ops".into(),
            "--output".into(),
            "json".into(),
        ],
        vec![
            "sandbox".into(),
            "status".into(),
            "--dir".into(),
            dir.clone().into(),
            "--output".into(),
            "json".into(),
        ],
        vec![
            "sandbox".into(),
            "status".into(),
            "--dir".into(),
            dir.into(),
        ],
    ];
    for args in &runs {
        // stdout closed: the result is lost, the command still succeeds without a panic.
        let out = Command::new(assert_cmd::cargo::cargo_bin("shardctl"))
            .env("SHARDCTL_YES", "1")
            .env_remove("SHARDCTL_CONFIG")
            .env("NO_COLOR", "1")
            .args(args)
            .stdin(Stdio::null())
            .stdout(broken_pipe())
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        // stderr closed too, with logs on (-vv): still no panic (exit 101) and exit 0.
        let status = Command::new(assert_cmd::cargo::cargo_bin("shardctl"))
            .env("SHARDCTL_YES", "1")
            .env_remove("SHARDCTL_CONFIG")
            .env("NO_COLOR", "1")
            .arg("-vv")
            .args(args)
            .stdin(Stdio::null())
            .stdout(broken_pipe())
            .stderr(broken_pipe())
            .status()
            .unwrap();
        assert_eq!(status.code(), Some(0), "{args:?} with stderr closed");
    }
    // A failing command into closed pipes keeps its own exit code.
    let status = Command::new(assert_cmd::cargo::cargo_bin("shardctl"))
        .env("SHARDCTL_YES", "1")
        .env_remove("SHARDCTL_CONFIG")
        .arg("--config")
        .arg(&config)
        .args(["ops", "999999"])
        .stdout(broken_pipe())
        .stderr(broken_pipe())
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(2));
}

/// Samples `progress` every few milliseconds until `stop` is set.
fn sample(
    progress: &Progress,
    stop: &std::sync::atomic::AtomicBool,
) -> Vec<shardctl::copy::ProgressSnapshot> {
    let mut seen = Vec::new();
    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
        seen.push(progress.snapshot());
        std::thread::sleep(Duration::from_millis(2));
    }
    seen.push(progress.snapshot());
    seen
}

#[test]
fn native_copy_progress_counts_rows_and_bytes_against_the_estimate() {
    FLEET.sandbox();
    let _s = serial();
    let inv = inventory();
    let source = ConnectSpec::for_node(&inv, inv.node("node1").unwrap()).unwrap();
    let target = ConnectSpec::for_node(&inv, inv.node("node3").unwrap()).unwrap();
    let pairs = [SchemaPair {
        from: Ident::new("schema", &format!("app_{LIBRARY_PROGRESS}")).unwrap(),
        to: Ident::new("schema", "progress_copy").unwrap(),
    }];
    let progress = Progress::default();
    let stop = std::sync::atomic::AtomicBool::new(false);
    // Small batches and one worker, so the copy takes many steps.
    let opts = native::NativeOptions {
        workers: 1,
        batch_rows: 50,
        ..Default::default()
    };
    let (report, seen) = std::thread::scope(|s| {
        let sampler = s.spawn(|| sample(&progress, &stop));
        let report = native::copy(&source, &target, &pairs, opts, &progress);
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        (report.unwrap(), sampler.join().unwrap())
    });
    assert_eq!(report.rows, MEDIUM);
    let mid: Vec<_> = seen
        .iter()
        .filter(|p| p.started && p.rows > 0 && p.rows < p.total)
        .collect();
    assert!(
        !mid.is_empty(),
        "the counters advance during the copy: {:?}",
        seen.iter().map(|p| (p.rows, p.total)).collect::<Vec<_>>()
    );
    // The estimate (TABLE_ROWS after ANALYZE) is near the truth before the first row.
    let first = seen.iter().find(|p| p.started).unwrap();
    assert!(
        first.total > MEDIUM / 2 && first.total < MEDIUM * 2,
        "{first:?}"
    );
    // Rates and ETA in the middle are finite and positive.
    let m = mid[mid.len() / 2];
    assert!(m.rows_per_sec() > 0.0 && m.bytes_per_sec() > 0.0, "{m:?}");
    assert!(
        m.eta().is_some_and(|e| e < Duration::from_secs(3600)),
        "{m:?}"
    );
    // Rows only go up.
    assert!(seen.windows(2).all(|w| w[0].rows <= w[1].rows));
    // The end is exact: done == total == the table's rows; bytes counted (40-byte pads).
    let end = progress.snapshot();
    assert!(end.finished);
    assert_eq!((end.rows, end.total), (MEDIUM, MEDIUM));
    assert!(end.bytes >= MEDIUM * 40, "{end:?}");
    assert!(
        end.render().starts_with("20,000/20,000 rows"),
        "{}",
        end.render()
    );
    let mut t = connect(FLEET.sandbox(), "node3");
    assert_eq!(
        count(&mut t, "SELECT COUNT(*) FROM progress_copy.t") as u64,
        MEDIUM
    );
    exec(&mut t, &["DROP DATABASE progress_copy"]);
}

#[test]
fn a_move_feeds_its_copy_counters_to_the_progress_display() {
    FLEET.sandbox();
    let _s = serial();
    let inv = inventory();
    let quiet = |_: &StepEvent| {};
    let mut m = Mover::start(
        &inv,
        MOVER_PROGRESS,
        "node2",
        Playbook::default_move(),
        &quiet,
    )
    .unwrap();
    let progress = m.copy_progress();
    let stop = std::sync::atomic::AtomicBool::new(false);
    let (state, seen) = std::thread::scope(|s| {
        let sampler = s.spawn(|| sample(&progress, &stop));
        let state = m.run();
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        (state.unwrap(), sampler.join().unwrap())
    });
    assert!(
        seen.iter().any(|p| p.started && p.total > 0),
        "the display saw an estimate during the move"
    );
    let end = progress.snapshot();
    assert_eq!((end.rows, end.total), (MEDIUM, MEDIUM), "{end:?}");
    assert!(end.bytes > 0 && end.finished);
    assert_eq!(state.copied_rows, MEDIUM);
    assert_moved(MOVER_PROGRESS);
}

/// The dump tools are child processes with a bound: one that moves nothing (here blocked by
/// another session's write lock on the shard's table) is killed once the idle limit passes
/// (the inventory's read timeout, at least 30 s), and the move rolls itself back before any
/// fence: the shard stays where it was, the partial copy is dropped.
#[test]
fn a_dump_that_moves_nothing_is_killed_at_the_idle_limit() {
    FLEET.sandbox();
    let _s = serial();
    // The same inventory with 10 s read and write timeouts: the idle limit is its floor, 30 s.
    let text = std::fs::read_to_string(FLEET.inventory_path()).unwrap();
    let mut yaml: serde_yaml::Value = serde_yaml::from_str(&text).unwrap();
    yaml["defaults"]["read_timeout_secs"] = 10.into();
    yaml["defaults"]["write_timeout_secs"] = 10.into();
    let dir = tempfile::tempdir().unwrap();
    let inv = common::write_file(
        dir.path(),
        "inv.yaml",
        &serde_yaml::to_string(&yaml).unwrap(),
    );
    let mut locker = connect(FLEET.sandbox(), "node1");
    exec(
        &mut locker,
        &[&format!("LOCK TABLES app_{STALLED_DUMP}.t WRITE")],
    );
    let started = Instant::now();
    let shard = STALLED_DUMP.to_string();
    let out = common::shardctl()
        .arg("--config")
        .arg(&inv)
        .args([
            "move", "--shard", &shard, "--to", "node2", "--method", "dump",
        ])
        .output()
        .unwrap();
    let took = started.elapsed();
    exec(&mut locker, &["UNLOCK TABLES"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(6), "{err}");
    assert!(
        err.contains("the dump copy moved nothing for 30 s"),
        "{err}"
    );
    assert!(err.contains("rolled back"), "{err}");
    assert!(took < Duration::from_secs(60), "{took:?}");
    assert_eq!(node_of(STALLED_DUMP), "node1");
    let mut n2 = connect(FLEET.sandbox(), "node2");
    assert_eq!(
        count(
            &mut n2,
            &format!(
                "SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name = 'app_{STALLED_DUMP}'"
            )
        ),
        0,
        "the partial copy is dropped"
    );
}
