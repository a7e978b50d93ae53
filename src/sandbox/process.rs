//! Starting, finding and stopping sandbox server processes.

use super::{Binaries, Engine};
use crate::error::{Error, Result};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Prefix of test sandbox directories in the system temp dir, followed by the test pid.
pub(super) const TEST_DIR_PREFIX: &str = "shardctl-test-";

const INIT_TIMEOUT: Duration = Duration::from_secs(180);

/// How long sandbox servers live.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lifetime {
    /// Until `sandbox down` (the CLI sandbox).
    Detached,
    /// Until the process that started them exits, however it exits (test sandboxes).
    TiedToProcess,
}

fn running_as_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Runs `cmd` to completion within `timeout`, failing with its last output lines.
pub(super) fn run_with_timeout(mut cmd: Command, what: &str, timeout: Duration) -> Result<()> {
    let out =
        tempfile::NamedTempFile::new().map_err(|e| Error::io("cannot create a temp file", e))?;
    let err_file = out
        .reopen()
        .map_err(|e| Error::io("cannot reopen a temp file", e))?;
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::from(
            err_file.try_clone().map_err(|e| Error::io(what, e))?,
        ))
        .stderr(Stdio::from(err_file))
        .spawn()
        .map_err(|e| Error::io(format!("cannot run {what}"), e))?;
    let deadline = Instant::now() + timeout;
    loop {
        match child.try_wait().map_err(|e| Error::io(what, e))? {
            Some(status) if status.success() => return Ok(()),
            Some(status) => {
                let text = std::fs::read_to_string(out.path()).unwrap_or_default();
                // The server's own errors (and a crash's signal line) say why; the tail
                // often only says where to report it.
                let mut lines: Vec<&str> = text
                    .lines()
                    .filter(|l| {
                        l.contains("[ERROR]") || l.contains("got signal") || l.contains("Assertion")
                    })
                    .take(4)
                    .collect();
                lines.extend(
                    text.lines()
                        .rev()
                        .take(2)
                        .collect::<Vec<_>>()
                        .into_iter()
                        .rev(),
                );
                return Err(Error::Config(format!(
                    "{what} failed ({status}): {}",
                    lines.join(" | ")
                )));
            }
            None if Instant::now() > deadline => {
                let _ = child.kill();
                return Err(Error::Timeout(format!(
                    "{what} did not finish within {}s",
                    timeout.as_secs()
                )));
            }
            None => std::thread::sleep(Duration::from_millis(50)),
        }
    }
}

/// Creates a fresh data directory at `target` (through a temporary sibling, so a failed
/// run leaves nothing half-made).
pub(super) fn initialise_datadir(bin: &Binaries, target: &Path) -> Result<()> {
    let staging = target.with_extension("partial");
    let _ = std::fs::remove_dir_all(&staging);
    let cmd = initialise_command(bin, &staging);
    if let Err(first) = run_with_timeout(cmd, "initialising a data directory", INIT_TIMEOUT) {
        // Seen a few times on a loaded machine: the bootstrap server crashes. A second
        // try from scratch has always worked; its failure is the one reported.
        crate::output::log(0, &format!("sandbox: {first}; trying once more"));
        let _ = std::fs::remove_dir_all(&staging);
        std::thread::sleep(Duration::from_secs(1));
        run_with_timeout(
            initialise_command(bin, &staging),
            "initialising a data directory",
            INIT_TIMEOUT,
        )?;
    }
    std::fs::rename(&staging, target).map_err(|e| Error::io("cannot place the data directory", e))
}

/// A temporary directory of the bootstrap's own beside `staging` (created): servers delete
/// every `#sql*` file of their tmpdir at start-up, so two bootstraps sharing /tmp break each
/// other's temporary tables.
fn private_tmp(staging: &Path) -> std::path::PathBuf {
    let dir = staging.with_extension("tmp");
    let _ = std::fs::create_dir_all(&dir);
    dir
}

/// The command that creates an empty data directory at `staging`.
fn initialise_command(bin: &Binaries, staging: &Path) -> Command {
    let mut cmd = match bin.engine {
        Engine::MariaDb => {
            let mut c = Command::new(bin.install_db.as_ref().expect("MariaDB has install_db"));
            c.arg("--no-defaults")
                .arg(format!("--datadir={}", staging.display()))
                .arg(format!("--tmpdir={}", private_tmp(staging).display()))
                .arg("--auth-root-authentication-method=normal")
                .arg("--skip-test-db");
            c
        }
        Engine::MySql => {
            let mut c = Command::new(&bin.server);
            c.arg("--no-defaults")
                .arg("--initialize-insecure")
                .arg(format!("--datadir={}", staging.display()))
                .arg(format!("--tmpdir={}", private_tmp(staging).display()));
            c
        }
    };
    if running_as_root() {
        cmd.arg("--user=root");
    }
    cmd
}

/// Copies a directory tree, preserving modes.
pub(super) fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    let mut cmd = Command::new("cp");
    cmd.arg("-a").arg(from).arg(to);
    run_with_timeout(cmd, "copying the data directory template", INIT_TIMEOUT)
}

type SpawnRequest = (Command, mpsc::Sender<std::io::Result<u32>>);

/// A thread that lives as long as the process and spawns tied servers. Linux sends the
/// parent-death signal when the spawning *thread* exits, so the spawner must outlive tests.
fn spawner() -> &'static Mutex<mpsc::Sender<SpawnRequest>> {
    static SPAWNER: OnceLock<Mutex<mpsc::Sender<SpawnRequest>>> = OnceLock::new();
    SPAWNER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<SpawnRequest>();
        std::thread::Builder::new()
            .name("sandbox-spawner".into())
            .spawn(move || {
                let mut children = Vec::new();
                for (mut cmd, reply) in rx {
                    let r = cmd.spawn().map(|child| {
                        let id = child.id();
                        children.push(child);
                        id
                    });
                    let _ = reply.send(r);
                }
                // The senders live in a static, so this thread never ends before the process.
                std::thread::park();
            })
            .expect("spawn the sandbox spawner thread");
        Mutex::new(tx)
    })
}

/// Starts a server on `config`; returns its pid.
pub(super) fn start_server(
    bin: &Binaries,
    config: &Path,
    lifetime: Lifetime,
    extra_args: &[String],
) -> Result<i32> {
    let mut cmd = Command::new(&bin.server);
    cmd.arg(format!("--defaults-file={}", config.display()));
    cmd.args(extra_args);
    if running_as_root() {
        cmd.arg("--user=root");
    }
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let pid = match lifetime {
        Lifetime::Detached => {
            cmd.process_group(0);
            cmd.spawn()
                .map_err(|e| Error::io(format!("cannot start {}", bin.server.display()), e))?
                .id()
        }
        Lifetime::TiedToProcess => {
            // SAFETY: prctl is async-signal-safe and only changes this child's own settings.
            unsafe {
                cmd.pre_exec(|| {
                    if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
            let (tx, rx) = mpsc::channel();
            spawner()
                .lock()
                .expect("spawner lock")
                .send((cmd, tx))
                .map_err(|_| Error::Config("the sandbox spawner thread is gone".into()))?;
            rx.recv()
                .map_err(|_| Error::Config("the sandbox spawner thread is gone".into()))?
                .map_err(|e| Error::io(format!("cannot start {}", bin.server.display()), e))?
        }
    };
    Ok(pid as i32)
}

fn reap(pid: i32) {
    let mut status = 0;
    // SAFETY: WNOHANG never blocks; a pid that is not our child just returns an error.
    unsafe {
        libc::waitpid(pid, &mut status, libc::WNOHANG);
    }
}

fn cmdline(pid: i32) -> String {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|b| String::from_utf8_lossy(&b).replace('\0', " "))
        .unwrap_or_default()
}

/// True while `pid` exists and is not a zombie.
pub(super) fn alive(pid: i32) -> bool {
    reap(pid);
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state is the first field after the parenthesised command name.
        Ok(stat) => stat
            .rsplit_once(')')
            .map(|(_, rest)| !rest.trim_start().starts_with('Z'))
            .unwrap_or(false),
        Err(_) => false,
    }
}

/// True when `pid` is alive and was started with `config` (a recycled pid never matches).
/// A process that has just been started may briefly show an empty command line.
pub(super) fn is_our_server(pid: i32, config: &Path) -> bool {
    let wanted = format!("--defaults-file={}", config.display());
    for _ in 0..40 {
        if !alive(pid) {
            return false;
        }
        let line = cmdline(pid);
        if !line.is_empty() {
            return line.contains(&wanted);
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    false
}

/// Ties server `pid` to process `owner` when it cannot be its child (a test sandbox's
/// server restarted by `sandbox restart`): a detached watcher kills the server once the
/// owner is gone.
pub(super) fn stop_with(owner: u32, pid: i32) -> Result<()> {
    Command::new("sh")
        .arg("-c")
        .arg(format!(
            "while kill -0 {owner} 2>/dev/null; do sleep 1; done; kill -KILL {pid} 2>/dev/null; exit 0"
        ))
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map(|_| ())
        .map_err(|e| Error::io("cannot start the sandbox server's watcher", e))
}

/// SIGTERM, wait up to `timeout` for a clean shutdown, then SIGKILL.
pub(super) fn stop(pid: i32, timeout: Duration) {
    let alive = || alive(pid);
    // SAFETY: kill only sends a signal.
    unsafe {
        libc::kill(pid, libc::SIGTERM);
    }
    let deadline = Instant::now() + timeout;
    while alive() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    if alive() {
        // SAFETY: as above.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
        }
        while alive() {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// The last `[ERROR]` line of a server error log, or its last line.
pub(super) fn last_error_line(log: &Path) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    text.lines()
        .rev()
        .find(|l| l.contains("[ERROR]"))
        .or_else(|| text.lines().last())
        .unwrap_or("no error log")
        .trim()
        .to_string()
}

/// Removes test sandbox directories left by test processes that no longer exist.
pub(super) fn remove_stale_test_dirs() {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        let Some(rest) = name.strip_prefix(TEST_DIR_PREFIX) else {
            continue;
        };
        let pid = rest.split('-').next().unwrap_or("");
        if pid.parse::<u32>().is_ok() && !PathBuf::from(format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}
