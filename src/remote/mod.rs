//! Commands and files on the hosts the servers run on: over ssh ([`SshHost`], the `ssh2`
//! crate) or on this machine ([`LocalHost`], for nodes on the operator's host such as the
//! sandbox), behind one trait, [`Host`].
//!
//! Every call has a deadline. Command lines are built from words with [`quote`], so a
//! path or a schema name never changes what a command does. Nothing secret is put on a
//! command line: a password travels on a command's standard input (mariadb-backup's, read
//! into its environment). [`pipe`] streams one host's command output into another
//! host's command input through this process's memory, never through a file here.

mod local;
pub mod node;
mod quote;
mod ssh;

pub use local::LocalHost;
pub use quote::{command_line, quote};
pub use ssh::SshHost;

use crate::config::{Inventory, NodeRef};
use crate::error::{Error, Result};
use std::io::{Read, Write};
use std::path::Path;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How a command ended (its standard output went to the caller's writer).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exit {
    /// The exit status (None: killed by a signal, or the host did not say).
    pub status: Option<i32>,
    /// The end of its standard error (at most 4 KiB), for messages.
    pub stderr: String,
}

impl Exit {
    /// Exit status 0.
    pub fn success(&self) -> bool {
        self.status == Some(0)
    }
}

/// A machine commands run on.
pub trait Host: Send + Sync {
    /// For messages: `node3 (ssh root@db3:22)` or `node3 (this machine)`.
    fn describe(&self) -> &str;

    /// Which machine and login this is (`ssh://root@db3:22`, `this machine`): two hosts
    /// with the same answer run their commands in the same place.
    fn machine(&self) -> String;

    /// Runs `command` (a shell command line, see [`command_line`]) with `stdin` on its
    /// standard input (nothing when None) and its standard output written to `stdout`.
    /// The command is stopped when `timeout` passes (an error then).
    fn run(
        &self,
        command: &str,
        stdin: Option<&mut (dyn Read + Send)>,
        stdout: &mut (dyn Write + Send),
        timeout: Duration,
    ) -> Result<Exit>;

    /// Runs `command` and returns its standard output; a non-zero exit is an error naming
    /// the host, `what` and the end of its standard error.
    fn output(&self, what: &str, command: &str, timeout: Duration) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        let exit = self.run(command, None, &mut out, timeout)?;
        self.check_exit(what, &exit)?;
        Ok(out)
    }

    /// Like [`Host::output`], as text.
    fn text(&self, what: &str, command: &str, timeout: Duration) -> Result<String> {
        Ok(String::from_utf8_lossy(&self.output(what, command, timeout)?).into_owned())
    }

    /// An error for a command that did not exit 0.
    fn check_exit(&self, what: &str, exit: &Exit) -> Result<()> {
        if exit.success() {
            return Ok(());
        }
        let status = match exit.status {
            Some(124) => "timed out on the host (exit 124)".to_string(),
            Some(s) => format!("exit status {s}"),
            None => "killed".to_string(),
        };
        let tail = last_lines(&exit.stderr, 3);
        Err(Error::Remote(format!(
            "{}: {what} failed ({status}){}{tail}",
            self.describe(),
            if tail.is_empty() { "" } else { ": " }
        )))
    }

    /// The content of a file.
    fn read_file(&self, path: &Path, timeout: Duration) -> Result<Vec<u8>> {
        let p = path_word(path)?;
        self.output(
            &format!("reading {}", path.display()),
            &format!("cat -- {p}"),
            timeout,
        )
    }

    /// Whether a file (or directory) exists.
    fn exists(&self, path: &Path, timeout: Duration) -> Result<bool> {
        let p = path_word(path)?;
        let out = self.text(
            &format!("checking {}", path.display()),
            &format!("if test -e {p}; then echo yes; else echo no; fi"),
            timeout,
        )?;
        Ok(out.trim() == "yes")
    }

    /// Replaces a file's content atomically: written beside it (mode `mode`), then
    /// renamed over it, so a reader never sees half a file.
    fn write_file(&self, path: &Path, data: &[u8], mode: u32, timeout: Duration) -> Result<()> {
        let p = path_word(path)?;
        let tmp = path_word(&path.with_extension("shardctl-tmp"))?;
        // The owner stays the file's (when this user may give it away: root, as the
        // restart path usually runs), not the ssh user's.
        let cmd = format!(
            "umask 077 && cat > {tmp} && chmod {mode:o} {tmp} && {{ ! test -e {p} || chown --reference={p} {tmp} 2>/dev/null || true; }} && mv -f -- {tmp} {p}"
        );
        let mut input: &[u8] = data;
        let mut sink = Vec::new();
        let exit = self.run(&cmd, Some(&mut input), &mut sink, timeout)?;
        self.check_exit(&format!("writing {}", path.display()), &exit)
    }
}

/// A path as one quoted shell word (UTF-8 only).
pub fn path_word(path: &Path) -> Result<String> {
    let text = path
        .to_str()
        .ok_or_else(|| Error::Usage(format!("{}: not a UTF-8 path", path.display())))?;
    quote(text)
}

/// The last `n` non-empty lines of `text`, joined by ` | `.
pub fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(n)..].join(" | ")
}

/// The host a node's server runs on: over ssh when the inventory gives `ssh:`, else this
/// machine when the node's address is here (loopback or a socket). Otherwise refused,
/// naming the node and what to add.
pub fn host_for(inv: &Inventory, node: &str) -> Result<Box<dyn Host>> {
    let n = inv.node(node)?;
    if let Some(spec) = &n.spec.ssh {
        return Ok(Box::new(SshHost::new(n.name, n.host(), spec)));
    }
    if is_this_machine(&n) {
        return Ok(Box::new(LocalHost::new(n.name)));
    }
    Err(Error::Refused(format!(
        "node {node} runs on {} and has no ssh: section in the inventory; add one (host, user, identity_file or agent, known_hosts_file) so shardctl can reach its host",
        n.host()
    )))
}

/// The host one of `primary`'s replicas (listed by address) runs on: over ssh when its
/// entry gives `ssh:`, else this machine when its address is here (loopback or a socket).
/// Otherwise refused, naming the replica and what to add.
pub fn host_for_replica(
    primary: &str,
    replica: &crate::config::ReplicaServer,
) -> Result<Box<dyn Host>> {
    let label = format!("{primary} replica {}", replica.address());
    let host = replica.host.as_deref().unwrap_or("127.0.0.1");
    if let Some(spec) = &replica.ssh {
        return Ok(Box::new(SshHost::new(&label, host, spec)));
    }
    if replica.socket.is_some() || matches!(host, "127.0.0.1" | "localhost" | "::1") {
        return Ok(Box::new(LocalHost::new(&label)));
    }
    Err(Error::Refused(format!(
        "{label} runs on {host} and its entry in replicas: has no ssh: section; add one (host, user, identity_file or agent, known_hosts_file) so shardctl can reach its host"
    )))
}

/// Whether a node's server is on this machine (its address is loopback or a socket).
pub fn is_this_machine(n: &NodeRef<'_>) -> bool {
    n.spec.socket.is_some() || matches!(n.host(), "127.0.0.1" | "localhost" | "::1")
}

/// Streams the standard output of `src_cmd` on `src` (given `src_input` on its standard
/// input) into the standard input of `dst_cmd` on `dst`, through this process's memory
/// (never a file here). Both run within `timeout`; a failure of either is an error, and a
/// source that fails makes the target's input fail rather than end, so a stream the source
/// did not finish is never taken for a whole one. Returns the bytes carried.
pub fn pipe(
    src: &dyn Host,
    src_cmd: &str,
    src_input: &[u8],
    dst: &dyn Host,
    dst_cmd: &str,
    what: &str,
    timeout: Duration,
) -> Result<u64> {
    let deadline = Instant::now() + timeout;
    let (tx, rx) = mpsc::sync_channel::<std::result::Result<Vec<u8>, String>>(32);
    let mut writer = ChanWriter {
        tx: Some(tx),
        sent: 0,
    };
    let mut reader = ChanReader {
        rx,
        buf: Vec::new(),
        pos: 0,
        deadline,
        stop: crate::signal::scope(),
    };
    let stop = crate::signal::scope();
    let (src_result, dst_result) = std::thread::scope(|s| {
        let src_thread = s.spawn(move || {
            crate::signal::enter_scope(stop);
            let mut input = src_input;
            let r = src.run(src_cmd, Some(&mut input), &mut writer, timeout);
            let r = match r {
                Ok(exit) => src.check_exit(&format!("{what} (source side)"), &exit),
                Err(e) => Err(e),
            };
            if let Err(e) = &r {
                writer.fail(e.to_string());
            }
            writer.finish();
            r.map(|_| writer.sent)
        });
        let mut sink = Vec::new();
        let r = dst.run(dst_cmd, Some(&mut reader), &mut sink, timeout);
        // Whatever happened, the source must not wait for a reader that is gone.
        drop(reader);
        let r = match r {
            Ok(exit) => dst.check_exit(&format!("{what} (target side)"), &exit),
            Err(e) => Err(e),
        };
        let src_r = src_thread.join().unwrap_or_else(|_| {
            Err(Error::Internal(
                "the stream's source thread panicked".into(),
            ))
        });
        (src_r, r)
    });
    match (src_result, dst_result) {
        (Ok(sent), Ok(())) => Ok(sent),
        // Stopped by Ctrl-C, `shardctl stop` or a lost lease: both sides were killed.
        (Err(_), _) | (_, Err(_)) if crate::signal::interrupted() => Err(Error::Interrupted),
        // A source that could not write because the target stopped reading (its disk full,
        // say) failed because of the target: the target's error says why.
        (Err(src), Err(dst)) if is_broken_pipe(&src) => Err(dst),
        (Err(src), _) => Err(src),
        (Ok(_), Err(dst)) => Err(dst),
    }
}

/// Whether an error only says that the reader of a stream went away.
fn is_broken_pipe(e: &Error) -> bool {
    e.to_string().to_ascii_lowercase().contains("broken pipe")
}

/// The writing half of [`pipe`]'s in-memory stream.
struct ChanWriter {
    tx: Option<mpsc::SyncSender<std::result::Result<Vec<u8>, String>>>,
    sent: u64,
}

impl ChanWriter {
    fn fail(&mut self, why: String) {
        if let Some(tx) = &self.tx {
            let _ = tx.send(Err(why));
        }
    }
    fn finish(&mut self) {
        self.tx = None;
    }
}

impl Write for ChanWriter {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        let Some(tx) = &self.tx else {
            return Err(std::io::ErrorKind::BrokenPipe.into());
        };
        tx.send(Ok(data.to_vec()))
            .map_err(|_| std::io::Error::from(std::io::ErrorKind::BrokenPipe))?;
        self.sent += data.len() as u64;
        Ok(data.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// How often a stream that carries nothing looks at the stop flag.
const STOP_POLL: Duration = Duration::from_millis(200);

/// The reading half of [`pipe`]'s in-memory stream: an error when the source failed, the
/// deadline passed or the operation was asked to stop (the target's command is then
/// killed, and so is the source's once it writes again); end of input only when the
/// source ended well.
struct ChanReader {
    rx: mpsc::Receiver<std::result::Result<Vec<u8>, String>>,
    buf: Vec<u8>,
    pos: usize,
    deadline: Instant,
    /// The stop flag of the operation that started the stream (read from another thread).
    stop: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
}

impl Read for ChanReader {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        while self.pos >= self.buf.len() {
            if crate::signal::with_scope(self.stop.clone(), crate::signal::interrupted) {
                return Err(std::io::Error::other("the operation was asked to stop"));
            }
            let left = self.deadline.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(left.min(STOP_POLL)) {
                Ok(Ok(chunk)) => {
                    self.buf = chunk;
                    self.pos = 0;
                }
                Ok(Err(why)) => {
                    return Err(std::io::Error::other(format!("the source failed: {why}")))
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => return Ok(0),
                Err(mpsc::RecvTimeoutError::Timeout) if Instant::now() < self.deadline => {}
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        "the source sent nothing before the deadline",
                    ))
                }
            }
        }
        let n = out.len().min(self.buf.len() - self.pos);
        out[..n].copy_from_slice(&self.buf[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

/// Keeps the last `cap` bytes written, for a command's standard error.
#[derive(Default)]
pub(crate) struct Tail {
    bytes: Vec<u8>,
}

impl Tail {
    const CAP: usize = 4096;

    pub(crate) fn push(&mut self, data: &[u8]) {
        self.bytes.extend_from_slice(data);
        if self.bytes.len() > Self::CAP {
            let cut = self.bytes.len() - Self::CAP;
            self.bytes.drain(..cut);
        }
    }

    pub(crate) fn text(&self) -> String {
        String::from_utf8_lossy(&self.bytes).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: Duration = Duration::from_secs(20);

    /// An operation's stop flag that is set 300 ms from now.
    fn stop_soon() -> Option<std::sync::Arc<std::sync::atomic::AtomicBool>> {
        let flag = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let later = std::sync::Arc::clone(&flag);
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            later.store(true, std::sync::atomic::Ordering::SeqCst);
        });
        Some(flag)
    }

    #[test]
    fn local_commands_stream_and_report() {
        let h = LocalHost::new("n");
        let mut input: &[u8] = b"hello\nworld\n";
        let mut out = Vec::new();
        let exit = h.run("tr a-z A-Z", Some(&mut input), &mut out, T).unwrap();
        assert!(exit.success());
        assert_eq!(out, b"HELLO\nWORLD\n");
        let err = h
            .output("listing", "echo oops >&2; exit 3", T)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("listing failed (exit status 3): oops"),
            "{err}"
        );
    }

    #[test]
    fn local_commands_time_out() {
        let h = LocalHost::new("n");
        let t = Instant::now();
        let err = h
            .output("sleeping", "sleep 30", Duration::from_millis(300))
            .unwrap_err();
        assert!(matches!(err, Error::Timeout(_)), "{err}");
        assert!(t.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn files_are_written_whole_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let h = LocalHost::new("n");
        let path = dir.path().join("it's a file");
        h.write_file(&path, b"a\0b'c", 0o600, T).unwrap();
        assert_eq!(h.read_file(&path, T).unwrap(), b"a\0b'c");
        assert!(h.exists(&path, T).unwrap());
        assert!(!h.exists(&dir.path().join("nope"), T).unwrap());
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }

    #[test]
    fn a_pipe_carries_bytes_and_a_failed_source_fails_the_target() {
        let h = LocalHost::new("n");
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let dst = format!("cat > {}", path_word(&out).unwrap());
        // The source is given its input (as the backup its password), then streams.
        let src = "IFS= read -r word && printf '%s' \"$word\" && head -c 300000 /dev/zero";
        let n = pipe(&h, src, b" given \n", &h, &dst, "stream", T).unwrap();
        assert_eq!(n, 300_007);
        let got = std::fs::read(&out).unwrap();
        assert_eq!(&got[..7], b" given ");
        assert_eq!(got.len(), 300_007);
        let marker = dir.path().join("finished");
        let dst = format!("cat > /dev/null && touch {}", path_word(&marker).unwrap());
        let err = pipe(&h, "echo partial; exit 7", b"", &h, &dst, "stream", T)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("source side") && err.contains("exit status 7"),
            "{err}"
        );
        assert!(
            !marker.exists(),
            "the target took a failed stream for a whole one"
        );
    }

    #[test]
    fn a_stop_request_kills_a_command_and_a_stream_but_not_a_cleanup() {
        use std::sync::atomic::AtomicBool;
        use std::sync::Arc;
        let h = LocalHost::new("n");
        let started = Instant::now();
        let r = crate::signal::with_scope(stop_soon(), || h.output("sleeping", "sleep 30", T));
        assert!(matches!(r, Err(Error::Interrupted)), "{r:?}");
        // A stream whose source sends nothing, and one whose target reads nothing.
        let r = crate::signal::with_scope(stop_soon(), || {
            pipe(&h, "sleep 30", b"", &h, "cat > /dev/null", "stream", T)
        });
        assert!(matches!(r, Err(Error::Interrupted)), "{r:?}");
        let r = crate::signal::with_scope(stop_soon(), || {
            pipe(&h, "cat /dev/zero", b"", &h, "sleep 30", "stream", T)
        });
        assert!(matches!(r, Err(Error::Interrupted)), "{r:?}");
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the commands ran to their end: {:?}",
            started.elapsed()
        );
        // A cleanup runs to its end even once the stop is asked.
        let flag = Some(Arc::new(AtomicBool::new(true)));
        let r = crate::signal::with_scope(flag, || {
            crate::signal::shielded(|| h.text("cleaning up", "sleep 0.5; echo done", T))
        });
        assert_eq!(r.unwrap().trim(), "done");
    }

    #[test]
    fn a_target_that_stops_reading_is_named_as_the_cause() {
        let h = LocalHost::new("n");
        // The source writes far more than the pipes hold; the target fails at once, as
        // an extraction onto a full disk would.
        let err = pipe(
            &h,
            "head -c 100000000 /dev/zero",
            b"",
            &h,
            "echo 'No space left on device' >&2; exit 3",
            "stream",
            T,
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("exit status 3") && err.contains("No space left on device"),
            "{err}"
        );
        assert!(err.contains("target side"), "{err}");
    }
}
