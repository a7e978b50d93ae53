//! The dump method: the distribution's dump tool (single-transaction snapshot, coordinates
//! recorded in the dump) piped into its client, or written to a file. Credentials travel in
//! 0600 temporary option files, never on the command line.
//!
//! The tools run in process groups of their own, so a terminal's Ctrl-C reaches shardctl
//! alone and shardctl decides when they stop. Their stderr is drained by threads as it comes
//! (the last few KB kept for messages), so a chatty child never blocks on a full pipe. A
//! thread pumps the dump into the client; the calling thread watches for an interrupt and
//! for a stall (nothing moved for the idle timeout), and then kills both process groups and
//! reaps them with a bounded wait.

use super::connect_for_copy;
use super::objects;
use super::{CopyReport, Progress, SchemaPair};
use crate::error::{Error, Result};
use crate::server::dialect::BinlogPosition;
use crate::server::replication::Coordinates;
use crate::server::{statements, ConnectSpec, Server};
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

/// How much of a tool's stderr is kept for error messages.
const STDERR_KEEP: usize = 4096;
/// How often the watching thread looks at the interrupt flag and the counters.
const TICK: Duration = Duration::from_millis(100);
/// The longest wait for a killed tool to be reaped.
const REAP_WAIT: Duration = Duration::from_secs(5);
/// The shortest idle timeout, whatever the inventory's read timeout.
const MIN_IDLE: Duration = Duration::from_secs(30);

fn tool(names: &[&str]) -> Result<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    for n in names {
        for d in std::env::split_paths(&path) {
            let p = d.join(n);
            if p.is_file() {
                return Ok(p);
            }
        }
    }
    Err(Error::Config(format!(
        "{} not found: install the Debian package mariadb-client",
        names.join(" or ")
    )))
}

/// A 0600 option file with the connection's account, host and port, and its TLS settings
/// when the node's inventory enables TLS. Every value is quoted and escaped; a value no
/// option file can carry (a line break) is refused.
fn option_file(spec: &ConnectSpec) -> Result<tempfile::NamedTempFile> {
    let f = tempfile::Builder::new()
        .prefix("shardctl-")
        .suffix(".cnf")
        .tempfile()
        .map_err(|e| Error::io("cannot create an option file", e))?;
    crate::config::write_private(f.path(), &option_file_text(spec)?)?;
    Ok(f)
}

/// The text of [`option_file`].
pub fn option_file_text(spec: &ConnectSpec) -> Result<String> {
    use crate::config::option_line;
    let path = |p: &Path| {
        p.to_str().map(str::to_string).ok_or_else(|| {
            Error::Config(format!(
                "node {}: the path {} is not valid UTF-8",
                spec.name,
                p.display()
            ))
        })
    };
    let mut text = String::from("[client]\n");
    text.push_str(&option_line("user", &spec.credentials.user)?);
    text.push_str(&option_line(
        "password",
        spec.credentials.password.expose(),
    )?);
    match &spec.socket {
        Some(s) => text.push_str(&option_line("socket", &path(s)?)?),
        None => {
            text.push_str(&option_line("host", &spec.host)?);
            text.push_str(&option_line("port", &spec.port.to_string())?);
            text.push_str(&option_line("protocol", "tcp")?);
        }
    }
    if let Some(tls) = spec.tls.as_ref().filter(|t| t.enabled) {
        text.push_str("ssl=1\n");
        for (key, file) in [
            ("ssl-ca", &tls.ca_file),
            ("ssl-cert", &tls.cert_file),
            ("ssl-key", &tls.key_file),
        ] {
            if let Some(file) = file {
                text.push_str(&option_line(key, &path(file)?)?);
            }
        }
        if !tls.insecure {
            text.push_str("ssl-verify-server-cert=1\n");
        }
    }
    Ok(text)
}

/// The dump command line (no secrets in it). Events are left out when `events` is false:
/// a copy into a target creates them itself, DISABLED (see [`copy_with_progress`]).
pub fn dump_command(spec_file: &Path, schemas: &[SchemaPair], events: bool) -> Result<Command> {
    let mut cmd = Command::new(tool(&["mariadb-dump", "mysqldump"])?);
    cmd.arg(format!("--defaults-extra-file={}", spec_file.display()))
        .args([
            "--single-transaction",
            "--master-data=2",
            "--routines",
            "--triggers",
            if events { "--events" } else { "--skip-events" },
            "--hex-blob",
            "--skip-lock-tables",
            "--databases",
        ])
        .args(schemas.iter().map(|p| p.from.as_str()));
    Ok(cmd)
}

/// Creates the events of `pairs` on `target` as the source has them, but DISABLED, each in
/// its own creation context (the dump carried everything else): a copy must never run an
/// event before it owns the shard. The move enables them after its flip.
fn create_events_disabled(
    source: &ConnectSpec,
    target: &ConnectSpec,
    pairs: &[SchemaPair],
) -> Result<()> {
    let mut src = connect_for_copy(source)?;
    let mut tgt = connect_for_copy(target)?;
    for p in pairs {
        let events = objects::read_events(&mut src, p)?;
        if events.is_empty() {
            continue;
        }
        let objs = objects::SchemaObjects {
            charset: src.schema_charset(&p.from)?,
            after_data: events,
            ..Default::default()
        };
        objects::create_after_data(&mut tgt, p, &objs)?;
    }
    Ok(())
}

/// Reads `-- CHANGE MASTER TO MASTER_LOG_FILE='f', MASTER_LOG_POS=n;` from a dump header.
pub fn parse_coordinates(line: &str) -> Option<BinlogPosition> {
    let rest = line.split("MASTER_LOG_FILE='").nth(1)?;
    let (file, rest) = rest.split_once('\'')?;
    let pos = rest.split("MASTER_LOG_POS=").nth(1)?;
    let pos: String = pos.chars().take_while(|c| c.is_ascii_digit()).collect();
    Some(BinlogPosition {
        file: file.to_string(),
        pos: pos.parse().ok()?,
    })
}

/// Refuses a shard the dump cannot carry exactly, naming the first culprit: a FLOAT
/// column. The dump tool writes each FLOAT with 6 significant digits (51.5074456 is written
/// `51.5074` and arrives as 51.5074005), so the copy would differ from the source; the
/// native and physical methods carry the stored value bit for bit. DOUBLE is written with
/// the shortest digits that read back as the same double, and arrives exactly.
pub fn preflight(src: &mut Server, source: &str, pairs: &[SchemaPair]) -> Result<()> {
    for p in pairs {
        let first = src
            .rows(&statements::float_columns(&p.from))?
            .into_iter()
            .next()
            .map(mysql::from_row_opt::<(String, String)>)
            .transpose()
            .map_err(|e| crate::server::row_error(source, e))?;
        if let Some((table, column)) = first {
            return Err(Error::Refused(format!(
                "method dump: column {}.{table}.{column} on {source} is a FLOAT, which mariadb-dump writes with 6 significant digits (51.5074456 would arrive as 51.5074); use --method native (or physical) for this shard",
                p.from
            )));
        }
    }
    Ok(())
}

/// Dumps `pairs` from `source` into `target` (same schema names), or into `to_file`.
pub fn copy(
    source: &ConnectSpec,
    target: Option<&ConnectSpec>,
    to_file: Option<&Path>,
    pairs: &[SchemaPair],
) -> Result<CopyReport> {
    copy_with_progress(source, target, to_file, pairs, &Progress::default())
}

/// [`copy`], counting rows (from the dump's INSERT statements) and bytes into `progress`.
/// Stops with [`Error::Interrupted`] on Ctrl-C / SIGTERM, and with [`Error::Timeout`] when
/// nothing moves through the pipe for the inventory's read timeout (at least 30 s); both
/// tools are then killed and reaped before it returns.
pub fn copy_with_progress(
    source: &ConnectSpec,
    target: Option<&ConnectSpec>,
    to_file: Option<&Path>,
    pairs: &[SchemaPair],
    progress: &Progress,
) -> Result<CopyReport> {
    if pairs.iter().any(|p| p.from != p.to) {
        return Err(Error::Usage(
            "the dump method keeps schema names; use the native method to rename".into(),
        ));
    }
    if target.is_none() && to_file.is_none() {
        return Err(Error::Usage("give a target node or a file".into()));
    }
    // Into a node the copy must be exact; a file is the dump tool's own format, FLOATs and
    // all (a backup made by hand).
    if target.is_some() {
        preflight(&mut connect_for_copy(source)?, &source.name, pairs)?;
    }
    let started = Instant::now();
    progress.begin(estimate_rows(source, pairs));
    let idle_limit = target
        .map(|t| t.read_timeout.max(t.write_timeout))
        .unwrap_or_default()
        .max(source.read_timeout)
        .max(MIN_IDLE);
    let src_cnf = option_file(source)?;
    let tgt_cnf = target.map(option_file).transpose()?;
    // Into a target: events are created afterwards, disabled. Into a file (a backup made
    // by hand): the file carries them as they are.
    let mut dump_cmd = dump_command(src_cnf.path(), pairs, target.is_none())?;
    dump_cmd.stdin(Stdio::null()).stdout(Stdio::piped());
    let mut dump = Tool::spawn("the dump tool", dump_cmd)?;
    let mut client = None;
    let sink: Box<dyn Write + Send> = match (target, &tgt_cnf, to_file) {
        (Some(t), Some(cnf), _) => {
            let mut cmd = Command::new(tool(&["mariadb", "mysql"])?);
            // The client otherwise turns every CRLF of its input into LF (--binary-mode)
            // and drops `#` and `-- ` comments (--comments): a routine's, trigger's or
            // event's text would not arrive as the source stores it.
            cmd.arg(format!("--defaults-extra-file={}", cnf.path().display()))
                .args(["--binary-mode", "--comments"])
                .arg(format!(
                    "--connect-timeout={}",
                    t.connect_timeout.as_secs().max(1)
                ))
                .stdin(Stdio::piped())
                .stdout(Stdio::null());
            let mut c = Tool::spawn("the client", cmd)?;
            let stdin = c.child.stdin.take().expect("piped stdin");
            client = Some(c);
            Box::new(stdin)
        }
        (_, _, Some(path)) => Box::new(
            std::fs::File::create(path)
                .map_err(|e| Error::io(format!("cannot write {}", path.display()), e))?,
        ),
        _ => return Err(Error::Usage("give a target node or a file".into())),
    };
    let counters = Arc::new(Counters::new());
    let (done_tx, done_rx) = mpsc::channel();
    {
        let counters = Arc::clone(&counters);
        let stdout = dump.child.stdout.take().expect("piped stdout");
        std::thread::Builder::new()
            .name("dump-pump".into())
            .spawn(move || {
                let _ = done_tx.send(pump(stdout, sink, &counters));
            })
            .map_err(|e| Error::io("cannot start the dump pump", e))?;
    }
    let mut watch = Watch {
        counters: &counters,
        progress,
        idle_limit,
    };
    // Until the pump has moved everything.
    let pumped = loop {
        match done_rx.recv_timeout(TICK) {
            Ok(r) => break r,
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                break Err(Error::io(
                    "pumping the dump",
                    std::io::Error::other("the pump thread ended without a result"),
                ))
            }
        }
        if let Some(e) = watch.stop_reason() {
            return Err(abandon(e, &mut dump, client.as_mut(), Some(&done_rx)));
        }
    };
    counters.touch();
    watch.publish();
    // Until both tools have exited (the client may still be running the last statements).
    let dump_status = watch.wait_exit(&mut dump, client.as_mut())?;
    let client_status = match client.as_mut() {
        Some(c) => Some(watch.wait_exit(c, Some(&mut dump))?),
        None => None,
    };
    if let (Some(c), Some(status)) = (client.as_mut(), client_status) {
        if !status.success() {
            return Err(Error::server(
                target.map(|t| t.name.as_str()).unwrap_or("target"),
                format!(
                    "the client failed ({status}): {}",
                    last_line(&c.stderr_tail())
                ),
            ));
        }
    }
    // A failed write (a full disk) comes before the dump tool's own failure, which is then
    // only the SIGPIPE it got when the pump stopped reading.
    let coords = pumped?;
    if !dump_status.success() {
        return Err(Error::server(
            &source.name,
            format!(
                "the dump tool failed ({dump_status}): {}",
                last_line(&dump.stderr_tail())
            ),
        ));
    }
    let position = coords
        .ok_or_else(|| Error::server(&source.name, "the dump carries no binary-log coordinates"))?;
    if let Some(t) = target {
        crate::signal::check()?;
        create_events_disabled(source, t, pairs)?;
    }
    progress.finish();
    Ok(CopyReport {
        coordinates: Some(Coordinates {
            position,
            gtid: String::new(),
        }),
        tables: 0,
        rows: progress.rows.load(Ordering::Relaxed),
        millis: started.elapsed().as_millis() as u64,
    })
}

/// information_schema's estimate of the rows to copy; 0 when it cannot be read (the
/// progress display then shows the rows alone).
fn estimate_rows(source: &ConnectSpec, pairs: &[SchemaPair]) -> u64 {
    let Ok(mut s) = connect_for_copy(source) else {
        return 0;
    };
    pairs
        .iter()
        .filter_map(|p| s.table_rows(&p.from).ok())
        .flat_map(|m| m.into_values())
        .sum()
}

/// The last non-empty line of a tool's stderr.
fn last_line(text: &str) -> &str {
    text.lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("no message")
}

/// Counts the rows of a dump's INSERT statements, fed line by line: the tuples of
/// `INSERT INTO ... VALUES (...),(...);` (parentheses inside quoted strings skipped),
/// whether the tool writes a statement on one line or one row per line.
#[derive(Debug, Default)]
pub struct RowCounter {
    in_insert: bool,
    depth: u32,
    quote: Option<u8>,
    escaped: bool,
}

impl RowCounter {
    /// The rows that begin on `line`.
    pub fn line(&mut self, line: &[u8]) -> u64 {
        let mut rest = line;
        if !self.in_insert {
            if !line.starts_with(b"INSERT INTO ") {
                return 0;
            }
            let Some(at) = line
                .windows(8)
                .position(|w| w.starts_with(b" VALUES") && matches!(w[7], b' ' | b'\n' | b'('))
            else {
                return 0;
            };
            *self = RowCounter {
                in_insert: true,
                ..Default::default()
            };
            rest = &line[at + 7..];
        }
        let mut rows = 0;
        for &b in rest {
            if let Some(q) = self.quote {
                if self.escaped {
                    self.escaped = false;
                } else if b == b'\\' {
                    self.escaped = true;
                } else if b == q {
                    self.quote = None;
                }
                continue;
            }
            match b {
                b'\'' | b'"' => self.quote = Some(b),
                b'(' => {
                    if self.depth == 0 {
                        rows += 1;
                    }
                    self.depth += 1;
                }
                b')' => self.depth = self.depth.saturating_sub(1),
                b';' if self.depth == 0 => {
                    self.in_insert = false;
                    break;
                }
                _ => {}
            }
        }
        rows
    }
}

/// What the pump has moved, and when it last moved anything.
struct Counters {
    started: Instant,
    rows: AtomicU64,
    bytes: AtomicU64,
    /// Milliseconds since `started` of the last read or write.
    active_ms: AtomicU64,
}

impl Counters {
    fn new() -> Self {
        Counters {
            started: Instant::now(),
            rows: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
            active_ms: AtomicU64::new(0),
        }
    }

    fn touch(&self) {
        self.active_ms
            .store(self.started.elapsed().as_millis() as u64, Ordering::Relaxed);
    }

    fn idle(&self) -> Duration {
        let now = self.started.elapsed().as_millis() as u64;
        Duration::from_millis(now.saturating_sub(self.active_ms.load(Ordering::Relaxed)))
    }
}

/// Moves the dump into the sink line by line, reading the coordinates from its header;
/// closes the sink (the client's stdin) at the end. The copy fault point is passed once,
/// after the first INSERT has been handed to the client.
fn pump(
    from: ChildStdout,
    mut to: Box<dyn Write + Send>,
    counters: &Counters,
) -> Result<Option<BinlogPosition>> {
    let mut reader = BufReader::with_capacity(1 << 16, from);
    let mut line = Vec::new();
    let mut lines = 0u64;
    let mut coords = None;
    let mut passed_fault_point = false;
    let mut counter = RowCounter::default();
    loop {
        line.clear();
        let n = reader
            .read_until(b'\n', &mut line)
            .map_err(|e| Error::io("reading the dump", e))?;
        if n == 0 {
            break;
        }
        counters.touch();
        lines += 1;
        if coords.is_none() && lines < 200 {
            if let Some(p) = parse_coordinates(&String::from_utf8_lossy(&line)) {
                coords = Some(p);
            }
        }
        let rows = counter.line(&line);
        to.write_all(&line)
            .map_err(|e| Error::io("feeding the client", e))?;
        counters.touch();
        counters.rows.fetch_add(rows, Ordering::Relaxed);
        counters.bytes.fetch_add(n as u64, Ordering::Relaxed);
        if rows > 0 && !passed_fault_point {
            passed_fault_point = true;
            crate::fault::point("copy");
        }
    }
    to.flush().map_err(|e| Error::io("feeding the client", e))?;
    Ok(coords)
}

/// The watching side: publishes the counters, decides when to stop.
struct Watch<'a> {
    counters: &'a Counters,
    progress: &'a Progress,
    idle_limit: Duration,
}

impl Watch<'_> {
    fn publish(&self) {
        let rows = self.counters.rows.load(Ordering::Relaxed);
        let bytes = self.counters.bytes.load(Ordering::Relaxed);
        let (old_rows, old_bytes) = (
            self.progress.rows.load(Ordering::Relaxed),
            self.progress.bytes.load(Ordering::Relaxed),
        );
        self.progress.add(
            rows.saturating_sub(old_rows),
            bytes.saturating_sub(old_bytes),
        );
    }

    /// Interrupted, or stalled for longer than the idle limit.
    fn stop_reason(&mut self) -> Option<Error> {
        self.publish();
        if crate::signal::interrupted() {
            return Some(Error::Interrupted);
        }
        let idle = self.counters.idle();
        if idle >= self.idle_limit {
            return Some(Error::Timeout(format!(
                "the dump copy moved nothing for {} s ({} bytes copied); the dump tool or the client is stuck",
                idle.as_secs(),
                self.counters.bytes.load(Ordering::Relaxed)
            )));
        }
        None
    }

    /// Waits for `tool` to exit, watching for an interrupt or a stall; on either, kills
    /// `tool` and `other` and returns the reason.
    fn wait_exit(&mut self, tool: &mut Tool, other: Option<&mut Tool>) -> Result<ExitStatus> {
        loop {
            if let Some(status) = tool.try_wait()? {
                self.counters.touch();
                return Ok(status);
            }
            if let Some(e) = self.stop_reason() {
                return Err(abandon(e, tool, other, None));
            }
            std::thread::sleep(TICK / 2);
        }
    }
}

/// Stops the copy: kills both tools' process groups, reaps them (bounded), gives the pump
/// a moment to end (it does once the tools' pipe ends close), and returns `reason`.
fn abandon(
    reason: Error,
    a: &mut Tool,
    b: Option<&mut Tool>,
    pump: Option<&mpsc::Receiver<Result<Option<BinlogPosition>>>>,
) -> Error {
    a.kill();
    let mut b = b;
    if let Some(b) = b.as_deref_mut() {
        b.kill();
    }
    a.reap(REAP_WAIT);
    if let Some(b) = b {
        b.reap(REAP_WAIT);
    }
    if let Some(rx) = pump {
        let _ = rx.recv_timeout(Duration::from_secs(2));
    }
    crate::output::log(1, &format!("copy stopped, dump tools killed: {reason}"));
    reason
}

/// A child in a process group of its own (registered for a forced exit), its stderr drained
/// by a thread that keeps the last [`STDERR_KEEP`] bytes. Dropped unreaped, it is killed
/// and reaped.
struct Tool {
    what: &'static str,
    child: Child,
    status: Option<ExitStatus>,
    stderr: Option<mpsc::Receiver<String>>,
    _group: crate::signal::ChildGroup,
}

impl Tool {
    fn spawn(what: &'static str, mut cmd: Command) -> Result<Tool> {
        cmd.process_group(0).stderr(Stdio::piped());
        let mut child = cmd
            .spawn()
            .map_err(|e| Error::io(format!("cannot start {what}"), e))?;
        let group = crate::signal::register_child_group(child.id() as i32);
        let stderr = child.stderr.take().map(drain);
        Ok(Tool {
            what,
            child,
            status: None,
            stderr,
            _group: group,
        })
    }

    fn try_wait(&mut self) -> Result<Option<ExitStatus>> {
        if self.status.is_none() {
            self.status = self
                .child
                .try_wait()
                .map_err(|e| Error::io(format!("waiting for {}", self.what), e))?;
        }
        Ok(self.status)
    }

    /// SIGKILL to the whole process group (the tool and anything it started).
    fn kill(&mut self) {
        if self.status.is_none() {
            // SAFETY: kill(2) on the process group of a child we started and have not
            // reaped, so its id cannot have been reused.
            unsafe {
                libc::kill(-(self.child.id() as i32), libc::SIGKILL);
            }
        }
    }

    /// Waits at most `limit` for the tool to be reaped.
    fn reap(&mut self, limit: Duration) -> bool {
        let until = Instant::now() + limit;
        loop {
            match self.try_wait() {
                Ok(Some(_)) => return true,
                Ok(None) if Instant::now() < until => std::thread::sleep(Duration::from_millis(20)),
                _ => return false,
            }
        }
    }

    /// The end of its stderr (waits at most a second for the drain to finish).
    fn stderr_tail(&mut self) -> String {
        self.stderr
            .take()
            .and_then(|rx| rx.recv_timeout(Duration::from_secs(1)).ok())
            .unwrap_or_default()
    }
}

impl Drop for Tool {
    fn drop(&mut self) {
        if self.status.is_none() {
            self.kill();
            self.reap(REAP_WAIT);
        }
    }
}

/// Reads a child's stderr as it comes, keeping the last [`STDERR_KEEP`] bytes; sends them
/// at end of file.
fn drain(mut from: impl Read + Send + 'static) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    let _ = std::thread::Builder::new()
        .name("tool-stderr".into())
        .spawn(move || {
            let mut kept: Vec<u8> = Vec::new();
            let mut buf = [0u8; 8192];
            loop {
                match from.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        kept.extend_from_slice(&buf[..n]);
                        if kept.len() > STDERR_KEEP {
                            kept.drain(..kept.len() - STDERR_KEEP);
                        }
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            }
            let _ = tx.send(String::from_utf8_lossy(&kept).into_owned());
        });
    rx
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coordinates_are_read_from_the_dump_header() {
        let p = parse_coordinates(
            "-- CHANGE MASTER TO MASTER_LOG_FILE='mysql-bin.000003', MASTER_LOG_POS=4711;",
        )
        .unwrap();
        assert_eq!(p.to_string(), "mysql-bin.000003:4711");
        assert!(parse_coordinates("-- nothing").is_none());
    }

    #[test]
    fn rows_are_counted_in_insert_statements() {
        let count = |text: &str| {
            let mut c = RowCounter::default();
            text.split_inclusive('\n')
                .map(|l| c.line(l.as_bytes()))
                .sum::<u64>()
        };
        // One statement per line.
        assert_eq!(
            count("INSERT INTO `t` VALUES (1,'a'),(2,'b(),(c'),(3,'it\\'s (x);'),(4,NULL);\n"),
            4
        );
        assert_eq!(count("INSERT INTO `t` VALUES (1,0x2829);\n"), 1);
        // One row per line (mariadb-dump 10.11 and later), then other statements.
        assert_eq!(
            count("INSERT INTO `t` VALUES\n(1,'a;'),\n(2,'(b)'),\n(3,'c');\n/*!40000 ALTER TABLE `t` ENABLE KEYS */;\nUNLOCK TABLES;\n"),
            3
        );
        // Not data.
        assert_eq!(
            count("CREATE TABLE `t` (\n  `id` int(11) NOT NULL\n);\n"),
            0
        );
        assert_eq!(count("-- INSERT INTO x VALUES (1)\n"), 0);
        assert_eq!(count("INSERT INTO `VALUES` VALUES (1),(2);\n"), 2);
    }
}
