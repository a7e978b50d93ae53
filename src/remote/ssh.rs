//! Commands on a node's host over ssh (`ssh2`, bindings to libssh2).
//!
//! One session per command: TCP connect within the connect timeout, key exchange, the
//! host's key checked against the inventory's known_hosts file before anything is sent
//! (an unknown or changed key refuses the connection; there is no way to accept one), then
//! public-key login (a key file or the agent). The command runs under the host's
//! `timeout` as well as this side's deadline, so a command whose session is lost still
//! ends on the host.

use super::{quote, Exit, Host, Tail};
use crate::config::SshSpec;
use crate::error::{Error, Result};
use ssh2::{CheckResult, KnownHostFileKind, Session};
use std::io::{ErrorKind, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// A node's host reached over ssh.
#[derive(Debug, Clone)]
pub struct SshHost {
    describe: String,
    host: String,
    port: u16,
    user: String,
    identity_file: Option<PathBuf>,
    known_hosts_file: PathBuf,
    connect_timeout: Duration,
    /// The longest a command may run (the inventory's `command_timeout_secs`); a caller's
    /// shorter timeout wins.
    pub command_timeout: Duration,
}

impl SshHost {
    /// The host of `node` as `spec` says (`node_host` when it names none).
    pub fn new(node: &str, node_host: &str, spec: &SshSpec) -> SshHost {
        let host = spec.host.clone().unwrap_or_else(|| node_host.to_string());
        SshHost {
            describe: format!("{node} (ssh {}@{host}:{})", spec.user, spec.port),
            host,
            port: spec.port,
            user: spec.user.clone(),
            identity_file: if spec.agent {
                None
            } else {
                spec.identity_file.clone()
            },
            known_hosts_file: spec.known_hosts_file.clone(),
            connect_timeout: Duration::from_secs(spec.connect_timeout_secs),
            command_timeout: Duration::from_secs(spec.command_timeout_secs),
        }
    }

    fn fail(&self, what: &str, e: impl std::fmt::Display) -> Error {
        Error::Remote(format!("{}: {what}: {e}", self.describe))
    }

    /// An ssh2 error of the session's setup: libssh2's timeout (-9) is a timeout.
    fn setup_fail(&self, what: &str, e: ssh2::Error) -> Error {
        if e.code() == ssh2::ErrorCode::Session(-9) {
            return Error::Timeout(format!(
                "{}: {what}: no answer within {}s (connect_timeout_secs)",
                self.describe,
                self.connect_timeout.as_secs()
            ));
        }
        self.fail(what, e)
    }

    /// A logged-in session, or why not.
    fn session(&self) -> Result<Session> {
        let addrs: Vec<_> = (self.host.as_str(), self.port)
            .to_socket_addrs()
            .map_err(|e| self.fail("cannot resolve the host", e))?
            .collect();
        let addr = addrs
            .first()
            .ok_or_else(|| self.fail("cannot resolve the host", "no address"))?;
        let tcp = match TcpStream::connect_timeout(addr, self.connect_timeout) {
            Ok(t) => t,
            Err(e) if matches!(e.kind(), ErrorKind::TimedOut | ErrorKind::WouldBlock) => {
                return Err(Error::Timeout(format!(
                    "{}: no answer within {}s (connect_timeout_secs)",
                    self.describe,
                    self.connect_timeout.as_secs()
                )))
            }
            Err(e) => return Err(self.fail("cannot connect", e)),
        };
        let mut sess = Session::new().map_err(|e| self.fail("ssh session", e))?;
        sess.set_timeout(self.connect_timeout.as_millis().min(u32::MAX as u128) as u32);
        sess.set_tcp_stream(tcp);
        sess.handshake()
            .map_err(|e| self.setup_fail("ssh handshake", e))?;
        self.check_host_key(&sess)?;
        match &self.identity_file {
            Some(key) => sess
                .userauth_pubkey_file(&self.user, None, key, None)
                .map_err(|e| self.setup_fail(&format!("login with {}", key.display()), e))?,
            None => sess
                .userauth_agent(&self.user)
                .map_err(|e| self.setup_fail("login through the ssh agent", e))?,
        }
        if !sess.authenticated() {
            return Err(self.fail("login", "not authenticated"));
        }
        Ok(sess)
    }

    /// Refuses a host whose key is not in the known_hosts file, or differs from it.
    fn check_host_key(&self, sess: &Session) -> Result<()> {
        let (key, _) = sess
            .host_key()
            .ok_or_else(|| self.fail("host key", "the server sent none"))?;
        let mut known = sess
            .known_hosts()
            .map_err(|e| self.fail("known hosts", e))?;
        known
            .read_file(&self.known_hosts_file, KnownHostFileKind::OpenSSH)
            .map_err(|e| {
                Error::Config(format!(
                    "{}: cannot read known_hosts_file {}: {e}",
                    self.describe,
                    self.known_hosts_file.display()
                ))
            })?;
        match known.check_port(&self.host, self.port, key) {
            CheckResult::Match => Ok(()),
            CheckResult::Mismatch => Err(Error::Refused(format!(
                "{}: the host's key differs from the one in {} — someone may be intercepting the connection, or the host was reinstalled; nothing was sent",
                self.describe,
                self.known_hosts_file.display()
            ))),
            CheckResult::NotFound => Err(Error::Refused(format!(
                "{}: the host's key is not in {} (strict host-key checking: add it with ssh-keyscan after checking its fingerprint); nothing was sent",
                self.describe,
                self.known_hosts_file.display()
            ))),
            CheckResult::Failure => Err(self.fail("host key check", "libssh2 could not check it")),
        }
    }

    /// Kills a command's process group on the host (a stop request or the deadline), over
    /// a channel of its own, also after a stop request.
    fn kill_group(&self, group: Option<u32>) {
        let Some(g) = group.filter(|g| *g > 1) else {
            return;
        };
        let _ = crate::signal::shielded(|| {
            self.output(
                "stopping a command",
                // (dash, the usual sh, refuses `kill -KILL -- -G`; `-s 9 --` works everywhere)
                &format!("kill -s 9 -- -{g} 2>/dev/null; true"),
                Duration::from_secs(10),
            )
        });
    }
}

/// The first line of a command's standard error as [`SshHost::run`] starts it.
const PGID_MARK: &str = "shardctl-pgid:";

/// Whether an ssh2 error is "try again" in non-blocking mode.
fn would_block(e: &std::io::Error) -> bool {
    e.kind() == ErrorKind::WouldBlock
}

impl Host for SshHost {
    fn describe(&self) -> &str {
        &self.describe
    }

    fn machine(&self) -> String {
        format!("ssh://{}@{}:{}", self.user, self.host, self.port)
    }

    fn run(
        &self,
        command: &str,
        mut stdin: Option<&mut (dyn Read + Send)>,
        stdout: &mut (dyn Write + Send),
        timeout: Duration,
    ) -> Result<Exit> {
        let timeout = timeout.min(self.command_timeout);
        let deadline = Instant::now() + timeout;
        crate::output::log(2, &format!("{}: {command}", self.describe));
        let sess = self.session()?;
        // The host ends the command too, should this side lose the session.
        let secs = timeout.as_secs().max(1);
        // `timeout` runs in a process group of its own (its id is its pid): the first line
        // of standard error names it, so a stop request can kill the command and its
        // children there (closing the channel alone does not end them).
        let wrapped = format!(
            "echo {PGID_MARK}$$ >&2; exec timeout -k 5 {secs} sh -c {}",
            quote(command)?
        );
        let mut ch = sess
            .channel_session()
            .map_err(|e| self.fail("opening a channel", e))?;
        ch.exec(&wrapped)
            .map_err(|e| self.fail("starting a command", e))?;
        sess.set_blocking(false);
        let timed_out = || {
            Error::Timeout(format!(
                "{}: a command did not finish within {}s",
                self.describe,
                timeout.as_secs_f64()
            ))
        };
        let mut pending: Vec<u8> = Vec::new();
        let mut pending_at = 0;
        let mut input_done = stdin.is_none();
        let mut eof_sent = false;
        let mut buf = vec![0u8; 128 * 1024];
        let mut tail = Tail::default();
        let mut err_head: Option<Vec<u8>> = Some(Vec::new());
        let mut group: Option<u32> = None;
        loop {
            let mut progress = false;
            // Standard input: one chunk at a time, then end of input.
            if !input_done {
                if pending_at >= pending.len() {
                    let input = stdin.as_mut().expect("input present while not done");
                    pending.resize(128 * 1024, 0);
                    match input.read(&mut pending) {
                        Ok(0) => {
                            pending.clear();
                            input_done = true;
                        }
                        Ok(n) => {
                            pending.truncate(n);
                            pending_at = 0;
                            progress = true;
                        }
                        Err(e) if e.kind() == ErrorKind::Interrupted => {}
                        Err(e) => {
                            // Closing the channel ends the command before it could take
                            // the input so far for the whole of it.
                            let _ = ch.close();
                            return Err(if e.kind() == ErrorKind::TimedOut {
                                timed_out()
                            } else {
                                self.fail("feeding a command's input", e)
                            });
                        }
                    }
                }
                if pending_at < pending.len() {
                    match ch.write(&pending[pending_at..]) {
                        Ok(n) => {
                            pending_at += n;
                            progress |= n > 0;
                        }
                        Err(e) if would_block(&e) => {}
                        // The command stopped reading (it ended, or closed its input): its
                        // exit status and errors say why, as a broken pipe would locally.
                        Err(_) => {
                            input_done = true;
                            eof_sent = true;
                            pending.clear();
                            pending_at = 0;
                        }
                    }
                }
            }
            if input_done && !eof_sent {
                match ch.send_eof() {
                    Ok(()) => eof_sent = true,
                    Err(e) if e.code() == ssh2::ErrorCode::Session(-37) => {}
                    Err(e) => return Err(self.fail("ending a command's input", e)),
                }
            }
            // Standard output, then standard error.
            let mut out_open = true;
            match ch.read(&mut buf) {
                Ok(0) => out_open = false,
                Ok(n) => {
                    progress = true;
                    stdout
                        .write_all(&buf[..n])
                        .map_err(|e| self.fail("passing a command's output on", e))?;
                }
                Err(e) if would_block(&e) => {}
                Err(e) => return Err(self.fail("reading a command's output", e)),
            }
            let mut err_open = true;
            match ch.stderr().read(&mut buf) {
                Ok(0) => err_open = false,
                Ok(n) => {
                    progress = true;
                    match err_head.as_mut() {
                        Some(head) => {
                            head.extend_from_slice(&buf[..n]);
                            if let Some(nl) = head.iter().position(|b| *b == b'\n') {
                                let line = String::from_utf8_lossy(&head[..nl]).into_owned();
                                group = line
                                    .strip_prefix(PGID_MARK)
                                    .and_then(|g| g.trim().parse().ok());
                                let first = if group.is_some() { nl + 1 } else { 0 };
                                tail.push(&head[first..]);
                                err_head = None;
                            }
                        }
                        None => tail.push(&buf[..n]),
                    }
                }
                Err(e) if would_block(&e) => {}
                Err(e) => return Err(self.fail("reading a command's errors", e)),
            }
            if ch.eof() && !out_open && !err_open {
                break;
            }
            if Instant::now() >= deadline {
                let _ = ch.close();
                self.kill_group(group);
                return Err(timed_out());
            }
            // Asked to stop (Ctrl-C, `shardctl stop`, a lost lease): the command and its
            // children are killed on the host.
            if crate::signal::interrupted() {
                let _ = ch.close();
                self.kill_group(group);
                return Err(Error::Interrupted);
            }
            if !progress {
                std::thread::sleep(Duration::from_millis(2));
            }
        }
        loop {
            match ch.wait_close() {
                Ok(()) => break,
                Err(e) if e.code() == ssh2::ErrorCode::Session(-37) => {
                    if Instant::now() >= deadline {
                        return Err(timed_out());
                    }
                    std::thread::sleep(Duration::from_millis(2));
                }
                Err(e) => return Err(self.fail("closing a channel", e)),
            }
        }
        if let Some(head) = err_head {
            tail.push(&head);
        }
        let status = ch.exit_status().ok();
        let signal = ch.exit_signal().ok().and_then(|s| s.exit_signal);
        Ok(Exit {
            status: if signal.is_some() { None } else { status },
            stderr: tail.text(),
        })
    }
}
