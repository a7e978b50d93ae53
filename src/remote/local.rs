//! Commands on this machine, for nodes whose server runs here (the sandbox).

use super::{Exit, Host, Tail};
use crate::error::{Error, Result};
use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

/// This machine, through `sh -c`; each command in its own process group, killed whole
/// when its deadline passes.
#[derive(Debug, Clone)]
pub struct LocalHost {
    describe: String,
}

impl LocalHost {
    /// The host of node `node`.
    pub fn new(node: &str) -> LocalHost {
        LocalHost {
            describe: format!("{node} (this machine)"),
        }
    }
}

fn kill_group(pid: u32) {
    // SAFETY: kill has no memory-safety preconditions; a negative pid names the group.
    unsafe {
        libc::kill(-(pid as i32), libc::SIGKILL);
    }
}

/// How often a running command looks at the operation's stop flag.
const STOP_POLL: Duration = Duration::from_millis(200);

/// What a command's standard input and output pipes hold: a stream of a gigabyte then
/// moves in a thousand reads rather than sixteen thousand (the default is 64 KiB).
const PIPE_BYTES: i32 = 1024 * 1024;

/// Grows a pipe to [`PIPE_BYTES`] where the system allows it (a smaller pipe only costs
/// more reads).
fn widen_pipe(fd: &impl std::os::fd::AsRawFd) {
    // SAFETY: fcntl on a pipe this process holds open; F_SETPIPE_SZ takes an int.
    unsafe {
        libc::fcntl(fd.as_raw_fd(), libc::F_SETPIPE_SZ, PIPE_BYTES);
    }
}

impl Host for LocalHost {
    fn describe(&self) -> &str {
        &self.describe
    }

    fn machine(&self) -> String {
        "this machine".into()
    }

    fn run(
        &self,
        command: &str,
        stdin: Option<&mut (dyn Read + Send)>,
        stdout: &mut (dyn Write + Send),
        timeout: Duration,
    ) -> Result<Exit> {
        crate::output::log(2, &format!("{}: {command}", self.describe));
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(command)
            .process_group(0)
            .stdin(if stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| Error::io(format!("{}: cannot run sh", self.describe), e))?;
        let pid = child.id();
        let timed_out = Arc::new(AtomicBool::new(false));
        let stopped = Arc::new(AtomicBool::new(false));
        let stop = crate::signal::scope();
        let shielded = crate::signal::is_shielded();
        let (done_tx, done_rx) = mpsc::channel::<()>();
        let mut child_in = child.stdin.take();
        let mut child_out = child.stdout.take().expect("piped stdout");
        widen_pipe(&child_out);
        if let Some(input) = &child_in {
            widen_pipe(input);
        }
        let mut child_err = child.stderr.take().expect("piped stderr");
        let result = std::thread::scope(|s| -> Result<Exit> {
            // Kills the command when its deadline passes or the operation is asked to stop
            // (Ctrl-C, `shardctl stop`, a lost lease), looking every STOP_POLL.
            let watchdog = {
                let (timed_out, stopped) = (Arc::clone(&timed_out), Arc::clone(&stopped));
                s.spawn(move || {
                    crate::signal::enter_scope(stop);
                    let deadline = std::time::Instant::now() + timeout;
                    loop {
                        let left = deadline.saturating_duration_since(std::time::Instant::now());
                        match done_rx.recv_timeout(left.min(STOP_POLL)) {
                            Err(mpsc::RecvTimeoutError::Timeout) if left.is_zero() => {
                                timed_out.store(true, Ordering::SeqCst);
                                kill_group(pid);
                                return;
                            }
                            Err(mpsc::RecvTimeoutError::Timeout) => {
                                if !shielded && crate::signal::interrupted() {
                                    stopped.store(true, Ordering::SeqCst);
                                    kill_group(pid);
                                    return;
                                }
                            }
                            _ => return,
                        }
                    }
                })
            };
            let feeder = stdin.map(|input| {
                let pipe = child_in.take();
                s.spawn(move || -> std::io::Result<()> {
                    let Some(mut pipe) = pipe else { return Ok(()) };
                    let mut buf = vec![0u8; PIPE_BYTES as usize];
                    loop {
                        let n = match input.read(&mut buf) {
                            Ok(0) => return Ok(()),
                            Ok(n) => n,
                            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                            Err(e) => {
                                // Never let the command see an end of input it could take
                                // for the whole stream.
                                kill_group(pid);
                                return Err(e);
                            }
                        };
                        pipe.write_all(&buf[..n])?;
                    }
                })
            });
            let errors = s.spawn(move || {
                let mut tail = Tail::default();
                let mut buf = [0u8; 8192];
                while let Ok(n) = child_err.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    tail.push(&buf[..n]);
                }
                tail.text()
            });
            let mut buf = vec![0u8; PIPE_BYTES as usize];
            let mut write_error = None;
            loop {
                match child_out.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        if let Err(e) = stdout.write_all(&buf[..n]) {
                            write_error = Some(e);
                            kill_group(pid);
                            break;
                        }
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            }
            drop(child_out);
            let status = child
                .wait()
                .map_err(|e| Error::io(format!("{}: waiting for a command", self.describe), e))?;
            let _ = done_tx.send(());
            let _ = watchdog.join();
            let stderr = errors.join().unwrap_or_default();
            let fed = feeder.map(|f| f.join());
            if stopped.load(Ordering::SeqCst) {
                return Err(Error::Interrupted);
            }
            if timed_out.load(Ordering::SeqCst) {
                return Err(Error::Timeout(format!(
                    "{}: a command did not finish within {}s",
                    self.describe,
                    timeout.as_secs_f64()
                )));
            }
            if let Some(Ok(Err(e))) = fed {
                // A broken pipe only means the command stopped reading: its status says why.
                if e.kind() != std::io::ErrorKind::BrokenPipe {
                    return Err(Error::Remote(format!(
                        "{}: feeding a command's input: {e}",
                        self.describe
                    )));
                }
            }
            if let Some(e) = write_error {
                return Err(Error::Remote(format!(
                    "{}: passing a command's output on: {e}",
                    self.describe
                )));
            }
            Ok(Exit {
                status: status.code(),
                stderr,
            })
        });
        result
    }
}
