//! `shardctl exporter` (issue 31) on a real fleet: Debian's Prometheus scrapes it during a
//! move and sees the copy's progress rise, the fence stand, then the operation counted as
//! done; the shipped alert rules pass `promtool` and the owner-died rule fires when a
//! move's process is killed; a scrape answers within its budget, nodes and directory
//! reported down, when a node or the directory server is stopped or hangs; the directory is
//! read with the application account and the nodes with the grants docs/METRICS.md
//! documents. And the refusals of the command line.
//!
//! Prometheus runs as the tests start it (never the system's service): its own
//! configuration and storage in a temp dir, a free loopback port, a 1 s scrape and rule
//! evaluation interval, and `monitoring/alerts.yml` loaded as the repository ships it.

mod common;

use common::{app_items_two_shards, serial, shardctl, spawn_shardctl, write_file};
use shardctl::config::Inventory;
use shardctl::directory::Directory;
use shardctl::sandbox::{Sandbox, SandboxBuilder};
use std::io::{BufRead, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

const USAGE: i32 = 2;
const REFUSED: i32 = 5;

/// Rows of shard 1's `items`: the native copy writes them in ten batches, one a second
/// under `pause=1@copy`.
const ROWS: i64 = 99_999;

/// The account the grants test reads the nodes with, and its password.
const MONITOR: &str = "shardctl_monitor";
const MONITOR_PASSWORD: &str = "m0nitor-only";

/// A 3-node fleet of its own, behind a mutex so a test can kill and restart its servers:
/// function `f` over `app.items`, shard 1 on node1 with ROWS rows, shard 2 on node2.
struct Fleet {
    sandbox: Mutex<Sandbox>,
    inventory: PathBuf,
}

fn fleet() -> &'static Fleet {
    static F: OnceLock<Fleet> = OnceLock::new();
    F.get_or_init(|| {
        let sb = SandboxBuilder::for_tests(3)
            .and_then(|b| b.start())
            .unwrap_or_else(|e| panic!("cannot start the test sandbox: {e}"));
        app_items_two_shards(ROWS).build(&sb);
        Fleet {
            inventory: sb.inventory_path(),
            sandbox: Mutex::new(sb),
        }
    })
}

fn sandbox() -> std::sync::MutexGuard<'static, Sandbox> {
    fleet().sandbox.lock().unwrap_or_else(|p| p.into_inner())
}

fn inventory() -> Inventory {
    Inventory::load(&fleet().inventory).unwrap()
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

fn newest_op_id() -> u64 {
    common::newest_op(&inventory()).map_or(0, |o| o.id)
}

/// Polls `f` every 250 ms until it gives a value, failing after `within`.
fn until<T>(within: Duration, what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + within;
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(Instant::now() < deadline, "never: {what}");
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// A child killed by the kernel when the test's thread ends, however it ends (a panic
/// included), so no Prometheus or exporter outlives its test.
fn die_with_test(cmd: &mut Command) -> &mut Command {
    use std::os::unix::process::CommandExt;
    // SAFETY: prctl is async-signal-safe; it only sets this child's parent-death signal.
    unsafe {
        cmd.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        })
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// One HTTP/1.0 request (no chunked answer to decode): status, headers and body, and how
/// long it took.
fn http(addr: &str, method: &str, path: &str) -> (u16, String, String, Duration) {
    let started = Instant::now();
    let mut s = TcpStream::connect(addr).unwrap_or_else(|e| panic!("{addr}: {e}"));
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    write!(s, "{method} {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n").unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    let text = String::from_utf8_lossy(&raw).to_string();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no status line: {text}"));
    (
        status,
        head.to_string(),
        body.to_string(),
        started.elapsed(),
    )
}

/// The value of the sample `series` (name and labels as the exporter writes them) in a
/// scrape's text.
fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' '))
        .map(|v| v.parse().unwrap())
}

/// `shardctl exporter` running in the background on a free loopback port.
struct ExporterProcess {
    child: Child,
    addr: String,
    err: PathBuf,
}

impl ExporterProcess {
    fn start(inventory: &Path, budget: &str, dir: &Path) -> ExporterProcess {
        let err = dir.join("exporter.err");
        let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("shardctl"));
        cmd.env_remove("SHARDCTL_CONFIG")
            .env_remove("SHARDCTL_FAULT")
            .arg("--config")
            .arg(inventory)
            .args(["exporter", "--listen", "127.0.0.1:0", "--budget", budget])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&err).unwrap());
        let mut child = die_with_test(&mut cmd).spawn().unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let addr = line
            .split("http://")
            .nth(1)
            .and_then(|rest| rest.split("/metrics").next())
            .unwrap_or_else(|| {
                panic!(
                    "no address announced: {line:?} {}",
                    std::fs::read_to_string(&err).unwrap_or_default()
                )
            })
            .to_string();
        ExporterProcess { child, addr, err }
    }

    /// One scrape: its text and how long it took.
    fn scrape(&self) -> (String, Duration) {
        let (status, _, body, took) = http(&self.addr, "GET", "/metrics");
        assert_eq!(status, 200, "{body}");
        (body, took)
    }
}

impl Drop for ExporterProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if std::thread::panicking() {
            eprintln!(
                "exporter's stderr:\n{}",
                std::fs::read_to_string(&self.err).unwrap_or_default()
            );
        }
    }
}

/// Prometheus from Debian's package, run by hand: scraping `target` every second,
/// evaluating the repository's `monitoring/alerts.yml` every second.
struct Prometheus {
    child: Child,
    addr: String,
    _dir: tempfile::TempDir,
}

impl Prometheus {
    fn start(target: &str) -> Prometheus {
        let dir = tempfile::tempdir().unwrap();
        let rules = Path::new(env!("CARGO_MANIFEST_DIR")).join("monitoring/alerts.yml");
        let config = format!(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\n\
             rule_files:\n  - {}\n\
             scrape_configs:\n  - job_name: shardctl\n    static_configs:\n      - targets: ['{target}']\n",
            rules.display()
        );
        let config_file = dir.path().join("prometheus.yml");
        std::fs::write(&config_file, config).unwrap();
        let addr = format!("127.0.0.1:{}", free_port());
        let mut cmd = Command::new("prometheus");
        cmd.arg(format!("--config.file={}", config_file.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.path().join("data").display()
            ))
            .arg(format!("--web.listen-address={addr}"))
            .arg("--log.level=warn")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.path().join("prometheus.err")).unwrap());
        let child = die_with_test(&mut cmd).spawn().unwrap_or_else(|e| {
            panic!("cannot run prometheus (Debian's package `prometheus`; scripts/setup installs it): {e}")
        });
        let p = Prometheus {
            child,
            addr,
            _dir: dir,
        };
        until(Duration::from_secs(60), "prometheus is ready", || {
            TcpStream::connect(&p.addr)
                .ok()
                .and_then(|_| (http(&p.addr, "GET", "/-/ready").0 == 200).then_some(()))
        });
        p
    }

    /// `GET /api/v1/...` answered with status success: its `data`.
    fn api(&self, path: &str) -> serde_json::Value {
        let (status, _, body, _) = http(&self.addr, "GET", path);
        let v: serde_json::Value =
            serde_json::from_str(&body).unwrap_or_else(|e| panic!("{path}: {e}: {body}"));
        assert!(status == 200 && v["status"] == "success", "{path}: {body}");
        v["data"].clone()
    }

    /// The result of a PromQL query, evaluated now.
    fn query(&self, promql: &str) -> Vec<serde_json::Value> {
        let data = self.api(&format!("/api/v1/query?query={}", encode(promql)));
        data["result"].as_array().cloned().unwrap_or_default()
    }

    /// The one value of an instant vector query, None when it has no sample.
    fn value(&self, promql: &str) -> Option<f64> {
        let result = self.query(promql);
        assert!(result.len() <= 1, "{promql}: {result:?}");
        result
            .first()
            .and_then(|r| r["value"][1].as_str())
            .map(|v| v.parse().unwrap())
    }

    /// The samples of a range vector query (`metric{...}[10m]`), one series: (time, value).
    fn samples(&self, promql: &str) -> Vec<(f64, f64)> {
        let result = self.query(promql);
        assert_eq!(result.len(), 1, "{promql}: {result:?}");
        result[0]["values"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                (
                    s[0].as_f64().unwrap(),
                    s[1].as_str().unwrap().parse().unwrap(),
                )
            })
            .collect()
    }

    /// The alerts Prometheus holds now, pending or firing.
    fn alerts(&self) -> Vec<serde_json::Value> {
        self.api("/api/v1/alerts")["alerts"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Percent-encodes a query parameter.
fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The exporter and a Prometheus scraping it, once Prometheus has the fleet in full
/// (the directory up and the journal's finished operations read).
fn exporter_and_prometheus(dir: &Path) -> (ExporterProcess, Prometheus) {
    let exporter = ExporterProcess::start(&fleet().inventory, "0.9", dir);
    let prom = Prometheus::start(&exporter.addr);
    until(
        Duration::from_secs(60),
        "Prometheus scraped the exporter",
        || {
            (prom.value("shardctl_directory_up") == Some(1.0)
                && prom.value("shardctl_exporter_journal_complete") == Some(1.0))
            .then_some(())
        },
    );
    (exporter, prom)
}

/// A move of shard 1 slowed down (a batch of its copy a second, 5 s under its fence),
/// watched through Prometheus: the copy's rows rise, the fence stands, then the move is
/// counted done and its fence lands in the histogram; the stored series tell the same
/// story in that order.
#[test]
fn prometheus_sees_a_moves_progress_then_its_fence_then_its_end() {
    let _s = serial();
    fleet();
    let dir = tempfile::tempdir().unwrap();
    let (_exporter, prom) = exporter_and_prometheus(dir.path());
    let done = r#"shardctl_operations_finished_total{kind="move",outcome="done"}"#;
    let fences = r#"shardctl_fence_duration_seconds_count{kind="move",during="cutover"}"#;
    let fence_sum = r#"shardctl_fence_duration_seconds_sum{kind="move",during="cutover"}"#;
    let (done_before, fences_before, sum_before) = (
        prom.value(done).unwrap(),
        prom.value(fences).unwrap(),
        prom.value(fence_sum).unwrap(),
    );
    let before = newest_op_id();
    let to = if home_of(1) == "node3" {
        "node2"
    } else {
        "node3"
    };
    let mut mover = spawn_shardctl(
        &fleet().inventory,
        &["move", "--shard", "1", "--to", to],
        Some("pause=1@copy,pause=5@after:lock"),
        dir.path(),
        "move",
    );
    let op = until(Duration::from_secs(60), "the move is journaled", || {
        Some(newest_op_id()).filter(|id| *id > before)
    });
    let rows = format!("shardctl_operation_progress_rows{{op=\"{op}\"}}");
    let fence = format!("shardctl_operation_fence_held_seconds{{op=\"{op}\"}}");
    let mid_copy = until(
        Duration::from_secs(120),
        "Prometheus sees the copy half-way",
        || prom.value(&rows).filter(|r| *r > 0.0 && *r < ROWS as f64),
    );
    assert_eq!(
        prom.value(&format!(
            "shardctl_operation_step{{op=\"{op}\",step=\"backup\"}}"
        )),
        Some(2.0)
    );
    let held = until(
        Duration::from_secs(120),
        "Prometheus sees the fence",
        || prom.value(&fence).filter(|s| *s > 0.0),
    );
    let status = common::wait_exit(&mut mover, Duration::from_secs(240));
    assert!(
        status.success(),
        "{}",
        std::fs::read_to_string(dir.path().join("move.err")).unwrap()
    );
    until(Duration::from_secs(30), "the move counted done", || {
        (prom.value(done) == Some(done_before + 1.0)
            && prom.value(fences) == Some(fences_before + 1.0))
        .then_some(())
    });
    assert_eq!(
        prom.value(&rows),
        None,
        "a finished operation has no progress series"
    );
    // The fence stood at least the 5 s it was held up for, as the journal measured it.
    let fenced = prom.value(fence_sum).unwrap() - sum_before;
    assert!(fenced >= 4.5, "the fence lasted {fenced} s");

    // The stored series: the rows only rose, in several steps, up to every row; the fence
    // came after the last of them.
    let progress = prom.samples(&format!("{rows}[10m]"));
    assert!(
        progress.windows(2).all(|w| w[0].1 <= w[1].1),
        "{progress:?}"
    );
    let distinct: std::collections::BTreeSet<u64> = progress.iter().map(|s| s.1 as u64).collect();
    assert!(distinct.len() >= 3, "{progress:?}");
    assert_eq!(progress.last().unwrap().1, ROWS as f64, "{progress:?}");
    let copied_at = progress.iter().find(|s| s.1 == ROWS as f64).unwrap().0;
    let fenced: Vec<(f64, f64)> = prom
        .samples(&format!("{fence}[10m]"))
        .into_iter()
        .filter(|s| s.1 > 0.0)
        .collect();
    assert!(
        fenced.first().unwrap().0 >= copied_at,
        "{fenced:?} {copied_at}"
    );
    let longest = fenced.iter().map(|s| s.1).fold(0.0, f64::max);
    assert!(longest >= 3.0, "{fenced:?}");
    eprintln!("mid-copy {mid_copy} rows, fence seen at {held} s, longest {longest} s, rows seen {distinct:?}");
}

/// A move whose process is killed (SIGKILL, mid-copy) leaves its operation to nobody: the
/// shipped rule ShardctlOperationOwnerDied fires for it, and not while its owner lived.
#[test]
fn the_owner_died_rule_fires_when_a_moves_process_is_killed() {
    let _s = serial();
    fleet();
    let dir = tempfile::tempdir().unwrap();
    let (_exporter, prom) = exporter_and_prometheus(dir.path());
    let before = newest_op_id();
    let to = if home_of(1) == "node3" {
        "node2"
    } else {
        "node3"
    };
    let mut mover = spawn_shardctl(
        &fleet().inventory,
        &["move", "--shard", "1", "--to", to],
        Some("pause=2@copy"),
        dir.path(),
        "move",
    );
    let op = until(Duration::from_secs(60), "the move is journaled", || {
        Some(newest_op_id()).filter(|id| *id > before)
    });
    let alive = format!("shardctl_operation_owner{{op=\"{op}\",status=\"alive\"}}");
    until(
        Duration::from_secs(60),
        "Prometheus sees the copy under a live owner",
        || {
            (prom.value(&alive) == Some(1.0)
                && prom
                    .value(&format!("shardctl_operation_progress_rows{{op=\"{op}\"}}"))
                    .is_some_and(|r| r > 0.0))
            .then_some(())
        },
    );
    let op_label = op.to_string();
    let owner_died = |a: &serde_json::Value| {
        a["labels"]["alertname"] == "ShardctlOperationOwnerDied"
            && a["labels"]["op"].as_str() == Some(op_label.as_str())
    };
    assert!(!prom.alerts().iter().any(owner_died), "{:?}", prom.alerts());
    mover.kill().unwrap();
    mover.wait().unwrap();
    let alert = until(
        Duration::from_secs(60),
        "the owner-died alert fires",
        || {
            prom.alerts()
                .into_iter()
                .find(|a| owner_died(a) && a["state"] == "firing")
        },
    );
    assert_eq!(alert["labels"]["kind"], "move", "{alert}");
    assert_eq!(alert["labels"]["severity"], "critical", "{alert}");
    assert_eq!(
        prom.value(&format!(
            "shardctl_operation_owner{{op=\"{op}\",status=\"dead\"}}"
        )),
        Some(1.0)
    );
    // Rolled back: the shard stays where it was, and the alert goes.
    common::cli_on(&fleet().inventory, &["abort", &op.to_string()])
        .assert()
        .success();
    until(Duration::from_secs(30), "the alert resolves", || {
        (!prom.alerts().iter().any(owner_died)).then_some(())
    });
}

/// SIGSTOP or SIGCONT to a sandbox server.
fn signal_node(node: &str, signal: i32) {
    let pid = sandbox().node(node).unwrap().pid.unwrap();
    // SAFETY: a signal to a server process this test's sandbox started.
    assert_eq!(unsafe { libc::kill(pid, signal) }, 0);
}

/// Sends SIGCONT to a stopped server when dropped, however the test ends.
struct Frozen(&'static str);

impl Frozen {
    fn new(node: &'static str) -> Frozen {
        signal_node(node, libc::SIGSTOP);
        Frozen(node)
    }
}

impl Drop for Frozen {
    fn drop(&mut self) {
        signal_node(self.0, libc::SIGCONT);
    }
}

/// A node or the directory's server stopped (killed) or hung (SIGSTOP: connections are
/// accepted and never answered) is reported down, and the scrape still answers within its
/// budget; once back, up again.
#[test]
fn a_scrape_answers_within_its_budget_with_a_node_or_the_directory_down() {
    let _s = serial();
    fleet();
    let dir = tempfile::tempdir().unwrap();
    let budget = Duration::from_secs(2);
    let exporter = ExporterProcess::start(&fleet().inventory, "2", dir.path());
    // A little time above the budget for the answer to travel on a loaded machine.
    let within = budget + Duration::from_millis(1500);
    let up = |text: &str, node: &str| sample(text, &format!("shardctl_node_up{{node=\"{node}\"}}"));
    let (text, _) = exporter.scrape();
    for node in ["node1", "node2", "node3"] {
        assert_eq!(up(&text, node), Some(1.0), "{text}");
    }
    assert_eq!(sample(&text, "shardctl_directory_up"), Some(1.0), "{text}");
    assert_eq!(
        sample(&text, "shardctl_exporter_budget_exhausted"),
        Some(0.0),
        "{text}"
    );

    // node2 hangs.
    {
        let _frozen = Frozen::new("node2");
        let (text, took) = exporter.scrape();
        assert!(took < within, "the scrape took {took:?}");
        assert!(
            took >= budget - Duration::from_millis(100),
            "{took:?}: waited for node2"
        );
        assert_eq!(up(&text, "node2"), Some(0.0), "{text}");
        assert_eq!(up(&text, "node1"), Some(1.0), "{text}");
        assert_eq!(sample(&text, "shardctl_directory_up"), Some(1.0), "{text}");
        assert_eq!(
            sample(&text, "shardctl_exporter_budget_exhausted"),
            Some(1.0),
            "{text}"
        );
        assert!(text.contains("shardctl_shard_info{shard=\"2\""), "{text}");
        assert!(
            !text.contains("shardctl_node_read_only{node=\"node2\"}"),
            "{text}"
        );
    }
    // node2 stopped: refused at once.
    sandbox().kill_node("node2").unwrap();
    let (text, took) = exporter.scrape();
    assert!(took < within, "the scrape took {took:?}");
    assert_eq!(up(&text, "node2"), Some(0.0), "{text}");
    assert_eq!(up(&text, "node3"), Some(1.0), "{text}");
    assert_eq!(sample(&text, "shardctl_directory_up"), Some(1.0), "{text}");
    sandbox().restart_node("node2").unwrap();
    let (text, _) = exporter.scrape();
    assert_eq!(up(&text, "node2"), Some(1.0), "{text}");

    // The directory's server (node1) hangs, then is stopped.
    {
        let _frozen = Frozen::new("node1");
        let (text, took) = exporter.scrape();
        assert!(took < within, "the scrape took {took:?}");
        assert_eq!(sample(&text, "shardctl_directory_up"), Some(0.0), "{text}");
        assert_eq!(up(&text, "node1"), Some(0.0), "{text}");
        assert_eq!(up(&text, "node2"), Some(1.0), "{text}");
        assert!(!text.contains("shardctl_shard_info{"), "{text}");
        assert_eq!(sample(&text, "shardctl_directory_version"), None, "{text}");
    }
    sandbox().kill_node("node1").unwrap();
    let (text, took) = exporter.scrape();
    assert!(took < within, "the scrape took {took:?}");
    assert_eq!(sample(&text, "shardctl_directory_up"), Some(0.0), "{text}");
    assert_eq!(up(&text, "node1"), Some(0.0), "{text}");
    assert_eq!(up(&text, "node3"), Some(1.0), "{text}");
    sandbox().restart_node("node1").unwrap();
    until(
        Duration::from_secs(30),
        "the directory answers again",
        || {
            let (text, _) = exporter.scrape();
            (sample(&text, "shardctl_directory_up") == Some(1.0) && up(&text, "node1") == Some(1.0))
                .then_some(())
        },
    );
    // What was stopped is named in the exporter's log (the metrics carry no message).
    let log = std::fs::read_to_string(&exporter.err).unwrap();
    assert!(log.contains("exporter: node node2: "), "{log}");
    assert!(log.contains("exporter: directory: "), "{log}");
    assert!(log.contains("exporter: directory answers again"), "{log}");
}

/// Runs the `mariadb` client as root over `node`'s socket, unlogged.
fn as_root(node: &str, sql: &str) {
    let sb = sandbox();
    let socket = sb.node(node).unwrap().socket();
    let out = Command::new("mariadb")
        .arg(format!(
            "--defaults-extra-file={}",
            sb.dir().join(shardctl::sandbox::ROOT_OPTION_FILE).display()
        ))
        .arg(format!("--socket={}", socket.display()))
        .args(["-e", &format!("SET SESSION sql_log_bin = 0; {sql}")])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{node}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The fleet's inventory with every node read by `user` (password in an option file).
fn inventory_as(dir: &Path, user: &str) -> PathBuf {
    let mut file = inventory().file;
    let option_file = write_file(
        dir,
        &format!("{user}.cnf"),
        &format!("[client]\nuser={user}\npassword={MONITOR_PASSWORD}\n"),
    );
    for node in file.nodes.values_mut() {
        node.account = shardctl::config::AccountSpec {
            user: Some(user.into()),
            defaults_file: Some(option_file.clone()),
            ..Default::default()
        };
    }
    let path = dir.join(format!("{user}.yaml"));
    std::fs::write(&path, serde_yaml::to_string(&file).unwrap()).unwrap();
    path
}

/// `exporter --once`: the scrape on stdout, and the log on stderr.
fn once(inventory: &Path) -> (String, String) {
    let out = shardctl()
        .arg("--config")
        .arg(inventory)
        .args(["exporter", "--once", "--budget", "10"])
        .assert()
        .success();
    let out = out.get_output();
    (
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

/// The shard sizes of a scrape, as its lines.
fn size_lines(text: &str) -> Vec<&str> {
    text.lines()
        .filter(|l| l.starts_with("shardctl_shard_bytes{") || l.starts_with("shardctl_shard_rows{"))
        .collect()
}

/// The grants docs/METRICS.md gives a monitoring account are enough to read every node as
/// the admin account does, with the directory read through the application account (the
/// monitoring account has no privilege on it); without `SLAVE MONITOR` a node is down (the
/// log names the privilege), without `SHOW VIEW` its shards' sizes read 0.
#[test]
fn the_nodes_read_with_the_documented_grants_and_the_directory_with_the_application_account() {
    let _s = serial();
    fleet();
    let dir = tempfile::tempdir().unwrap();
    for node in ["node1", "node2", "node3"] {
        as_root(
            node,
            &format!(
                "CREATE USER IF NOT EXISTS '{MONITOR}'@'%' IDENTIFIED BY '{MONITOR_PASSWORD}'; \
                 GRANT SLAVE MONITOR, SHOW VIEW ON *.* TO '{MONITOR}'@'%'; \
                 CREATE USER IF NOT EXISTS 'shardctl_nomonitor'@'%' IDENTIFIED BY '{MONITOR_PASSWORD}'; \
                 GRANT SHOW VIEW ON *.* TO 'shardctl_nomonitor'@'%'; \
                 CREATE USER IF NOT EXISTS 'shardctl_noview'@'%' IDENTIFIED BY '{MONITOR_PASSWORD}'; \
                 GRANT SLAVE MONITOR ON *.* TO 'shardctl_noview'@'%'"
            ),
        );
    }
    let (admin, _) = once(&fleet().inventory);
    let (monitored, _) = once(&inventory_as(dir.path(), MONITOR));
    for text in [&admin, &monitored] {
        for node in ["node1", "node2", "node3"] {
            assert_eq!(
                sample(text, &format!("shardctl_node_up{{node=\"{node}\"}}")),
                Some(1.0),
                "{text}"
            );
        }
        assert_eq!(sample(text, "shardctl_directory_up"), Some(1.0), "{text}");
    }
    let sizes = size_lines(&monitored);
    assert_eq!(sizes, size_lines(&admin));
    assert!(
        sizes
            .iter()
            .any(|l| l.starts_with("shardctl_shard_rows{shard=\"1\"") && !l.ends_with(" 0")),
        "{monitored}"
    );
    let (without, log) = once(&inventory_as(dir.path(), "shardctl_nomonitor"));
    assert_eq!(
        sample(&without, "shardctl_node_up{node=\"node2\"}"),
        Some(0.0),
        "{without}"
    );
    assert_eq!(
        sample(&without, "shardctl_directory_up"),
        Some(1.0),
        "{without}"
    );
    assert!(
        log.contains("exporter: node node2: ") && log.contains("SLAVE MONITOR"),
        "{log}"
    );
    let (noview, _) = once(&inventory_as(dir.path(), "shardctl_noview"));
    assert_eq!(
        sample(&noview, "shardctl_node_up{node=\"node1\"}"),
        Some(1.0),
        "{noview}"
    );
    assert_eq!(
        sample(&noview, "shardctl_shard_rows{shard=\"1\",function=\"f\"}"),
        Some(0.0),
        "{noview}"
    );
}

/// The exporter's HTTP answers as the real binary serves them, its stop on SIGTERM, and its
/// start under `--output json`.
#[test]
fn the_exporter_serves_metrics_only_and_announces_itself_in_json() {
    let _s = serial();
    fleet();
    let dir = tempfile::tempdir().unwrap();
    let exporter = ExporterProcess::start(&fleet().inventory, "5", dir.path());
    let (status, head, body, _) = http(&exporter.addr, "GET", "/metrics");
    assert_eq!(status, 200);
    assert!(
        head.contains("Content-Type: text/plain; version=0.0.4; charset=utf-8"),
        "{head}"
    );
    assert!(body.contains("# TYPE shardctl_node_up gauge\n"), "{body}");
    let (status, head, body, _) = http(&exporter.addr, "HEAD", "/metrics");
    assert_eq!((status, body.as_str()), (200, ""), "{head}");
    assert_eq!(http(&exporter.addr, "GET", "/").0, 404);
    assert_eq!(http(&exporter.addr, "DELETE", "/metrics").0, 405);
    // SIGTERM (as a service manager stops it) ends it with 0.
    let mut exporter = exporter;
    // SAFETY: a signal to the exporter this test started.
    assert_eq!(
        unsafe { libc::kill(exporter.child.id() as i32, libc::SIGTERM) },
        0
    );
    let status = common::wait_exit(&mut exporter.child, Duration::from_secs(10));
    assert_eq!(status.code(), Some(0), "{status:?}");

    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("shardctl"));
    cmd.env_remove("SHARDCTL_CONFIG")
        .arg("--config")
        .arg(&fleet().inventory)
        .args(["--output", "json", "exporter", "--listen", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = die_with_test(&mut cmd).spawn().unwrap();
    let mut reader = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut doc = String::new();
    while !doc.ends_with("}\n") {
        assert!(reader.read_line(&mut doc).unwrap() > 0, "{doc}");
    }
    let _ = child.kill();
    let _ = child.wait();
    let v: serde_json::Value = serde_json::from_str(&doc).unwrap();
    assert_eq!(v["command"], "exporter", "{v}");
    assert_eq!(v["json_version"], 1, "{v}");
    assert_eq!(v["path"], "/metrics", "{v}");
    assert_eq!(v["budget_ms"], 5000, "{v}");
    assert!(
        v["listen"].as_str().unwrap().starts_with("127.0.0.1:"),
        "{v}"
    );
}

/// The shipped rules pass `promtool check rules`, and their unit tests
/// (monitoring/alerts_test.yml) pass `promtool test rules`.
#[test]
fn the_shipped_alert_rules_pass_promtool() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("monitoring");
    for args in [
        ["check", "rules", "alerts.yml"],
        ["test", "rules", "alerts_test.yml"],
    ] {
        let out = Command::new("promtool")
            .args(args)
            .current_dir(&root)
            .output()
            .unwrap_or_else(|e| {
                panic!("cannot run promtool (Debian's package `prometheus`; scripts/setup installs it): {e}")
            });
        assert!(
            out.status.success(),
            "promtool {args:?}:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// The Grafana dashboard is JSON whose every query names a metric the exporter serves.
#[test]
fn the_dashboard_queries_only_metrics_the_exporter_serves() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dashboard: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("monitoring/grafana-dashboard.json")).unwrap(),
    )
    .unwrap();
    let source = std::fs::read_to_string(root.join("src/exporter/mod.rs")).unwrap();
    let mut exprs = Vec::new();
    fn walk(v: &serde_json::Value, out: &mut Vec<String>) {
        match v {
            serde_json::Value::Object(m) => {
                for (k, x) in m {
                    match (k.as_str(), x) {
                        ("expr", serde_json::Value::String(s)) => out.push(s.clone()),
                        _ => walk(x, out),
                    }
                }
            }
            serde_json::Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            _ => {}
        }
    }
    walk(&dashboard, &mut exprs);
    assert!(exprs.len() >= 10, "{exprs:?}");
    for e in &exprs {
        let names: Vec<&str> = e
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .filter(|w| w.starts_with("shardctl_"))
            .collect();
        assert!(!names.is_empty(), "{e}");
        for n in names {
            let base = ["_bucket", "_sum", "_count"]
                .iter()
                .find_map(|s| n.strip_suffix(s))
                .unwrap_or(n);
            assert!(
                source.contains(&format!("\"{base}\"")),
                "{e}: {n} is not served"
            );
        }
    }
}

/// Bad input: one line, a documented exit code, before the inventory is read.
#[test]
fn bad_exporter_arguments_are_refused_in_one_line() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let taken = taken.local_addr().unwrap().to_string();
    let cases: [(&[&str], i32, &str); 6] = [
        (&["exporter"], USAGE, "--listen"),
        (
            &["exporter", "--listen", "nonsense"],
            USAGE,
            "--listen \"nonsense\"",
        ),
        (&["exporter", "--listen", &taken], REFUSED, "in use"),
        (
            &["exporter", "--once", "--budget", "0"],
            USAGE,
            "0.5 to 120",
        ),
        (
            &["exporter", "--once", "--listen", "127.0.0.1:0"],
            USAGE,
            "--listen",
        ),
        (
            &["--output", "json", "exporter", "--once"],
            USAGE,
            "--output json",
        ),
    ];
    for (args, code, says) in cases {
        let out = shardctl()
            .args(["--config", "/nonexistent/shardctl.yaml"])
            .args(args)
            .timeout(Duration::from_secs(30))
            .assert()
            .code(code);
        let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
        assert!(stderr.contains(says), "{args:?}: {stderr}");
        // clap's own refusals add a hint to its line; shardctl's are one line.
        if !stderr.starts_with("error:") {
            assert_eq!(stderr.trim_end().lines().count(), 1, "{args:?}: {stderr}");
        }
    }
}
