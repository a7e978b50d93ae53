//! One connection to one node, and everything flavor-specific about talking to it.
//!
//! shardctl holds plain connections, never a pool: a pool resets connections between uses,
//! which would silently drop session state the steps depend on (LOCK TABLES, sql_log_bin).

pub mod accounts;
pub mod binlog;
pub mod catalog;
pub mod definitions;
pub mod dialect;
pub mod flavor;
pub mod galera;
pub mod replication;
pub mod reporting;
pub mod reports;
pub mod statements;
pub mod stream;

pub use dialect::{BinlogPosition, Dialect, Filters, SourceSpec, StartAt, Stmt};
pub use flavor::{Flavor, Vendor, Version};

use crate::config::{Credentials, Inventory, NodeRef, TlsSpec};
use crate::error::{Error, Result};
use crate::output::log;
use mysql::prelude::{FromRow, Queryable};
use mysql::{Conn, OptsBuilder, Row, SslOpts};
use std::path::PathBuf;
use std::time::Duration;

/// Everything needed to open a connection.
#[derive(Debug, Clone)]
pub struct ConnectSpec {
    /// The name used in messages (the inventory's node name).
    pub name: String,
    /// Host (ignored when `socket` is set).
    pub host: String,
    /// TCP port (ignored when `socket` is set).
    pub port: u16,
    /// Unix socket.
    pub socket: Option<PathBuf>,
    /// The account and where its password comes from.
    pub credentials: Credentials,
    /// TLS.
    pub tls: Option<TlsSpec>,
    /// TCP connect timeout.
    pub connect_timeout: Duration,
    /// Read timeout for every packet.
    pub read_timeout: Duration,
    /// Write timeout for every packet.
    pub write_timeout: Duration,
}

impl ConnectSpec {
    /// The spec for an inventory node, timeouts from the inventory's defaults.
    pub fn for_node(inv: &Inventory, node: NodeRef<'_>) -> Result<Self> {
        let (connect_timeout, read_timeout, write_timeout) =
            crate::config::timeouts(inv.defaults());
        Ok(ConnectSpec {
            name: node.name.to_string(),
            host: node.host().to_string(),
            port: node.port(),
            socket: node.spec.socket.clone(),
            credentials: node.credentials()?,
            tls: node.spec.tls.clone(),
            connect_timeout,
            read_timeout,
            write_timeout,
        })
    }

    /// The spec for a replica of node `primary`: a node's own spec, or the replica's
    /// address with the primary's account and TLS.
    pub fn for_replica(
        inv: &Inventory,
        primary: NodeRef<'_>,
        replica: &crate::config::ReplicaSpec,
    ) -> Result<Self> {
        match replica {
            crate::config::ReplicaSpec::Node(name) => Self::for_node(inv, inv.node(name)?),
            crate::config::ReplicaSpec::Server(s) => {
                let mut spec = Self::for_node(inv, primary)?;
                spec.name = format!("{} replica {}", primary.name, s.address());
                spec.host = s.host.clone().unwrap_or_else(|| "127.0.0.1".into());
                spec.port = s.port.unwrap_or(3306);
                spec.socket = s.socket.clone();
                Ok(spec)
            }
        }
    }

    /// `host:port` or the socket path.
    pub fn address(&self) -> String {
        match &self.socket {
            Some(s) => s.display().to_string(),
            None => format!("{}:{}", self.host, self.port),
        }
    }
}

/// An open connection to one node, with its flavor.
pub struct Server {
    name: String,
    address: String,
    conn: Conn,
    dialect: Dialect,
    /// Set when a call failed outside the server (socket closed, timeout): the connection
    /// cannot be trusted any more and its owner should open a new one.
    broken: bool,
    /// What the connection is for, in the statement capture.
    purpose: Purpose,
}

/// What a connection is used for: the statement capture (`SHARDCTL_CAPTURE`) tags every
/// statement with it, so a test can compare a procedure's own statements with its dry run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Purpose {
    /// A procedure's reads and effects on a fleet node.
    Ops,
    /// The sharding directory and the journal.
    Directory,
    /// The bulk copy's own sessions (snapshot readers, loaders, dump tools).
    Copy,
    /// Pruning's chunked reads and deletes.
    Prune,
    /// Verification's snapshot readers and its momentary lock.
    Verify,
    /// The change stream's own sessions: its reads of the source, its applier and
    /// checkpoint on the target.
    Stream,
}

impl Purpose {
    /// Its name in logs.
    pub fn name(self) -> &'static str {
        match self {
            Purpose::Ops => "ops",
            Purpose::Directory => "directory",
            Purpose::Copy => "copy",
            Purpose::Prune => "prune",
            Purpose::Verify => "verify",
            Purpose::Stream => "stream",
        }
    }
}

/// One statement as the capture records it: the node, the connection's purpose and the
/// statement's text (secrets masked; bound values are not recorded).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Captured {
    /// Node name.
    pub node: String,
    /// The connection's purpose.
    pub purpose: Purpose,
    /// The statement's text.
    pub sql: String,
}

/// Appends every statement this process sends to the file named by `SHARDCTL_CAPTURE`, as
/// JSON lines. For tests; unset, nothing is recorded.
fn capture(node: &str, purpose: Purpose, st: &Stmt) {
    static SINK: std::sync::OnceLock<Option<std::sync::Mutex<std::fs::File>>> =
        std::sync::OnceLock::new();
    let sink = SINK.get_or_init(|| {
        let path = std::env::var_os("SHARDCTL_CAPTURE")?;
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .ok()
            .map(std::sync::Mutex::new)
    });
    if let Some(file) = sink {
        let line = Captured {
            node: node.to_string(),
            purpose,
            sql: st.redacted.clone().unwrap_or_else(|| st.sql.clone()),
        };
        if let (Ok(mut f), Ok(text)) = (file.lock(), serde_json::to_string(&line)) {
            use std::io::Write;
            let _ = writeln!(f, "{text}");
        }
    }
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("name", &self.name)
            .field("address", &self.address)
            .field("flavor", &self.dialect.flavor())
            .finish()
    }
}

/// The MySQL error number of a server-side error, if it is one.
pub fn server_error_code(e: &mysql::Error) -> Option<u16> {
    match e {
        mysql::Error::MySqlError(me) => Some(me.code),
        _ => None,
    }
}

/// True when an error was caused by a socket timeout, wherever in the chain it sits.
fn is_timeout(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = cur {
        if let Some(io) = err.downcast_ref::<std::io::Error>() {
            if matches!(
                io.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            ) {
                return true;
            }
        }
        cur = err.source();
    }
    // Some wrappers keep the I/O error only as text.
    let text = e.to_string();
    text.contains("os error 11)") || text.contains("os error 110)")
}

/// A row of the server's answer that does not have the expected shape: the message names
/// the node, never the row's values.
pub fn row_error(node: &str, e: mysql::FromRowError) -> Error {
    Error::server(
        node,
        format!(
            "an answer row of {} columns had an unexpected type",
            e.0.len()
        ),
    )
}

/// One readable line for a driver or server error: the server's code, state and message,
/// or the driver's own words without the crate's `DriverError { ... }` wrapping.
pub fn describe(e: &mysql::Error) -> String {
    let text = match e {
        mysql::Error::MySqlError(me) => format!("error {} ({}): {}", me.code, me.state, me.message),
        other if is_timeout(other) => "timed out waiting for the server".to_string(),
        mysql::Error::IoError(io) => io.to_string(),
        mysql::Error::DriverError(d) => d.to_string(),
        mysql::Error::CodecError(c) => c.to_string(),
        mysql::Error::UrlError(u) => u.to_string(),
        mysql::Error::TlsError(t) => format!("TLS: {t}"),
        mysql::Error::FromValueError(_) | mysql::Error::FromRowError(_) => {
            "a value of unexpected type in the server's answer".to_string()
        }
    };
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// TCP keepalive of every connection: first probe after this much silence, ...
const KEEPALIVE_IDLE_MS: u32 = 30_000;
/// ... then one probe this often ...
const KEEPALIVE_INTERVAL_SECS: u32 = 10;
/// ... and the connection is dead after this many unanswered.
const KEEPALIVE_PROBES: u32 = 3;

impl Server {
    /// Opens a connection, detects the flavor, and refuses servers shardctl cannot drive.
    pub fn connect(spec: &ConnectSpec) -> Result<Server> {
        let mut opts = OptsBuilder::new()
            .user(Some(spec.credentials.user.clone()))
            .pass(Some(spec.credentials.password.expose().to_string()))
            .tcp_connect_timeout(Some(spec.connect_timeout))
            .read_timeout(Some(spec.read_timeout))
            .write_timeout(Some(spec.write_timeout))
            // A server that vanished is noticed within about a minute also while a long
            // statement runs (an index build, an import: see copy's long-statement read
            // timeout), not only when the read timeout passes.
            .tcp_keepalive_time_ms(Some(KEEPALIVE_IDLE_MS))
            .tcp_keepalive_probe_interval_secs(Some(KEEPALIVE_INTERVAL_SECS))
            .tcp_keepalive_probe_count(Some(KEEPALIVE_PROBES))
            .prefer_socket(false)
            .init(vec![statements::allow_backslash_escapes().sql]);
        opts = match &spec.socket {
            Some(sock) => opts.socket(Some(sock.display().to_string())),
            None => opts
                .ip_or_hostname(Some(spec.host.clone()))
                .tcp_port(spec.port),
        };
        if let Some(tls) = spec.tls.as_ref().filter(|t| t.enabled) {
            let mut ssl = SslOpts::default()
                .with_danger_accept_invalid_certs(tls.insecure)
                .with_danger_skip_domain_validation(tls.insecure);
            if let Some(ca) = &tls.ca_file {
                ssl = ssl.with_root_cert_path(Some(ca.clone()));
            }
            opts = opts.ssl_opts(Some(ssl));
        }
        let address = spec.address();
        log(2, &format!("{}: connecting to {address}", spec.name));
        let mut conn = Conn::new(opts).map_err(|e| {
            Error::server(
                &spec.name,
                format!("cannot connect to {address}: {}", describe(&e)),
            )
        })?;
        let version: String = conn
            .query_first(statements::server_version().sql)
            .map_err(|e| Error::server(&spec.name, describe(&e)))?
            .unwrap_or_default();
        let flavor = Flavor::parse(&version).map_err(|why| Error::Unsupported {
            node: spec.name.clone(),
            version: version.clone(),
            why,
        })?;
        log(2, &format!("{}: {flavor}", spec.name));
        Ok(Server {
            name: spec.name.clone(),
            address,
            conn,
            dialect: Dialect::new(flavor),
            broken: false,
            purpose: Purpose::Ops,
        })
    }

    /// Connects to the inventory node `name`.
    pub fn connect_node(inv: &Inventory, name: &str) -> Result<Server> {
        let node = inv.node(name)?;
        Self::connect(&ConnectSpec::for_node(inv, node)?)
    }

    /// Connects to one of `primary`'s replicas (see [`ConnectSpec::for_replica`]).
    pub fn connect_replica(
        inv: &Inventory,
        primary: &str,
        replica: &crate::config::ReplicaSpec,
    ) -> Result<Server> {
        Self::connect(&ConnectSpec::for_replica(inv, inv.node(primary)?, replica)?)
    }

    /// Waits until this server's channel from `source_address` (`host:port`) has applied
    /// the source's events up to `pos`, polling its status (any channel, the unnamed
    /// default one too). Fails at once when that channel is missing or stopped, and with
    /// [`Error::Timeout`] after `timeout`.
    pub fn wait_applied_from(
        &mut self,
        source_address: &str,
        pos: &BinlogPosition,
        timeout: Duration,
    ) -> Result<()> {
        self.wait_applied_from_server(source_address, None, pos, timeout)
    }

    /// [`Server::wait_applied_from`], the channel found by the source's address or, when
    /// `source_server_id` is given, by the server_id it reports (a replica may reach its
    /// source by another name or port than the inventory's).
    pub fn wait_applied_from_server(
        &mut self,
        source_address: &str,
        source_server_id: Option<u64>,
        pos: &BinlogPosition,
        timeout: Duration,
    ) -> Result<()> {
        let deadline = std::time::Instant::now() + timeout;
        loop {
            let channel = self
                .channels()?
                .into_iter()
                .find(|c| {
                    c.source == source_address
                        || (source_server_id.is_some() && c.source_server_id == source_server_id)
                })
                .ok_or_else(|| {
                    Error::server(&self.name, format!("no channel from {source_address}"))
                })?;
            if !channel.sql_running {
                return Err(Error::server(
                    &self.name,
                    format!(
                        "its channel from {source_address} is stopped: {}",
                        channel.last_sql_error
                    ),
                ));
            }
            if channel.executed.as_ref().is_some_and(|e| e >= pos) {
                return Ok(());
            }
            if std::time::Instant::now() > deadline {
                return Err(Error::Timeout(format!(
                    "{} did not apply {source_address} up to {pos} within {}s",
                    self.name,
                    timeout.as_secs()
                )));
            }
            crate::signal::check()?;
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The node's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// `host:port` or socket.
    pub fn address(&self) -> &str {
        &self.address
    }

    /// The detected flavor.
    pub fn flavor(&self) -> Flavor {
        self.dialect.flavor()
    }

    /// The SQL dialect of this node.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// A server error for this node.
    ///
    /// Marks the connection broken when the failure did not come from the server itself
    /// (a reset, a timeout): every caller that turns a failed call into an error also
    /// tells [`Server::is_broken`], which is what the directory's failover and reconnects
    /// go by.
    pub fn error(&mut self, e: &mysql::Error) -> Error {
        if server_error_code(e).is_none() {
            self.broken = true;
        }
        Error::server(&self.name, describe(e))
    }

    /// The session's id on the server (what `KILL` takes).
    pub fn connection_id(&self) -> u64 {
        self.conn.connection_id().into()
    }

    /// Marks the connection as not to be used again (its server left the cluster, say):
    /// its owner opens another.
    pub fn mark_broken(&mut self) {
        self.broken = true;
    }

    /// True once a call failed on the connection itself (closed socket, timeout).
    pub fn is_broken(&self) -> bool {
        self.broken
    }

    /// Tags the connection for the statement capture.
    pub fn set_purpose(&mut self, purpose: Purpose) {
        self.purpose = purpose;
    }

    /// Makes every later transaction of this session read-only (`SET SESSION TRANSACTION
    /// READ ONLY`): the dry run's connections can read but not write rows.
    pub fn make_read_only(&mut self) -> Result<()> {
        self.exec(&statements::session_read_only())
    }

    /// Logs a statement about to be sent (`-v`, `--log-file`) and records it in the
    /// statement capture: every statement to a node passes here, from whatever thread.
    fn log_sent(&self, st: &Stmt) {
        if crate::output::log_enabled(1) {
            crate::output::log_statement(
                &self.name,
                &format!("{} #{}", self.purpose.name(), self.conn.connection_id()),
                &log_text(st),
            );
        }
        capture(&self.name, self.purpose, st);
    }

    /// Runs a statement, discarding results.
    pub fn exec(&mut self, st: &Stmt) -> Result<()> {
        self.log_sent(st);
        let r = if st.params.is_empty() {
            self.conn.query_drop(&st.sql)
        } else {
            self.conn.exec_drop(&st.sql, st.params.clone())
        };
        r.map_err(|e| self.error(&e))
    }

    /// Runs a statement and returns the number of rows it changed.
    pub fn exec_affected(&mut self, st: &Stmt) -> Result<u64> {
        self.exec(st)?;
        Ok(self.conn.affected_rows())
    }

    /// Runs a `LOAD DATA LOCAL INFILE` statement (it takes no parameters), feeding it
    /// `data` from memory.
    pub fn load_data(&mut self, st: &Stmt, data: Vec<u8>) -> Result<()> {
        debug_assert!(st.params.is_empty(), "LOAD DATA takes no parameters");
        use std::io::Write;
        let slot = std::sync::Arc::new(std::sync::Mutex::new(Some(data)));
        let feed = std::sync::Arc::clone(&slot);
        self.conn
            .set_local_infile_handler(Some(mysql::LocalInfileHandler::new(move |_, w| {
                if let Some(d) = feed
                    .lock()
                    .map_err(|_| std::io::Error::other("poisoned"))?
                    .take()
                {
                    w.write_all(&d)?;
                }
                Ok(())
            })));
        self.log_sent(st);
        let r = self.conn.query_drop(&st.sql);
        self.conn.set_local_infile_handler(None);
        r.map_err(|e| self.error(&e))
    }

    /// Runs a statement, returning the raw server error so callers can react to its code.
    pub fn try_rows(&mut self, st: &Stmt) -> std::result::Result<Vec<Row>, mysql::Error> {
        self.log_sent(st);
        if st.params.is_empty() {
            self.conn.query(&st.sql)
        } else {
            self.conn.exec(&st.sql, st.params.clone())
        }
    }

    /// Runs a statement and returns all rows.
    pub fn rows(&mut self, st: &Stmt) -> Result<Vec<Row>> {
        self.try_rows(st).map_err(|e| self.error(&e))
    }

    /// Runs `stmts` in order and returns each one's rows. Those without parameters go
    /// [`STATEMENTS_PER_TRIP`] to a round trip, as one text query of many statements: the
    /// definitions of a shard of hundreds of tables are read under a fence, where a round
    /// trip per table would add up. A statement with parameters goes alone. The first
    /// statement that fails ends the run with its error.
    pub fn rows_of_each(&mut self, stmts: &[Stmt]) -> Result<Vec<Vec<Row>>> {
        let mut out = Vec::with_capacity(stmts.len());
        let mut i = 0;
        while i < stmts.len() {
            if !stmts[i].params.is_empty() {
                out.push(self.rows(&stmts[i])?);
                i += 1;
                continue;
            }
            let mut j = i;
            while j < stmts.len() && j - i < STATEMENTS_PER_TRIP && stmts[j].params.is_empty() {
                self.log_sent(&stmts[j]);
                j += 1;
            }
            let text = stmts[i..j]
                .iter()
                .map(|s| s.sql.as_str())
                .collect::<Vec<_>>()
                .join(";\n");
            let sets = result_sets(&mut self.conn, &text).map_err(|e| self.error(&e))?;
            if sets.len() != j - i {
                return Err(Error::server(
                    &self.name,
                    format!(
                        "{} statements sent in one round trip gave {} results",
                        j - i,
                        sets.len()
                    ),
                ));
            }
            out.extend(sets);
            i = j;
        }
        Ok(out)
    }

    /// Runs a statement and returns the first row, converted.
    pub fn first<T: FromRow>(&mut self, st: &Stmt) -> Result<Option<T>> {
        self.log_sent(st);
        let r = if st.params.is_empty() {
            self.conn.query_first(&st.sql)
        } else {
            self.conn.exec_first(&st.sql, st.params.clone())
        };
        r.map_err(|e| self.error(&e))
    }
}

impl Server {
    /// [`Server::rows_of_each`], each statement's first row converted (None: no row).
    pub fn first_of_each<T: FromRow>(&mut self, stmts: &[Stmt]) -> Result<Vec<Option<T>>> {
        let name = self.name.clone();
        self.rows_of_each(stmts)?
            .into_iter()
            .map(|rows| {
                rows.into_iter()
                    .next()
                    .map(mysql::from_row_opt::<T>)
                    .transpose()
                    .map_err(|e| row_error(&name, e))
            })
            .collect()
    }
}

/// Most statements [`Server::rows_of_each`] sends in one round trip.
pub const STATEMENTS_PER_TRIP: usize = 200;

/// The rows of each result of a text query of many statements, in order.
fn result_sets(conn: &mut Conn, text: &str) -> std::result::Result<Vec<Vec<Row>>, mysql::Error> {
    let mut result = conn.query_iter(text)?;
    let mut sets = Vec::new();
    while let Some(set) = result.iter() {
        sets.push(set.collect::<std::result::Result<Vec<Row>, _>>()?);
    }
    Ok(sets)
}

impl Server {
    /// Streams the rows of a query (binary protocol, so values keep their types) into `f`
    /// without holding the whole result in memory.
    pub fn stream(&mut self, st: &Stmt, mut f: impl FnMut(Row) -> Result<()>) -> Result<()> {
        self.log_sent(st);
        let name = self.name.clone();
        let result = self
            .conn
            .exec_iter(&st.sql, st.params.clone())
            .map_err(|e| Error::server(&name, describe(&e)))?;
        for row in result {
            f(row.map_err(|e| Error::server(&name, describe(&e)))?)?;
        }
        Ok(())
    }
}

/// A statement as logs show it (`-v`, `--log-file`): its redacted text when it has one,
/// any other password literal masked all the same, bound values never shown (they may be
/// row data or secrets) but counted, and the text cut to a readable length.
pub fn log_text(st: &Stmt) -> String {
    let text = match &st.redacted {
        Some(r) => r.clone(),
        None => mask_secrets(&st.sql),
    };
    // One line per statement: a multi-line definition is joined, its indentation dropped.
    let text = if text.contains('\n') {
        text.lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join(" ")
    } else {
        text
    };
    let mut text = shorten(&text);
    match st.params.len() {
        0 => {}
        1 => text.push_str("  -- 1 value bound (not shown)"),
        n => text.push_str(&format!("  -- {n} values bound (not shown)")),
    }
    text
}

/// Masks the string literal after `IDENTIFIED BY`, `PASSWORD =` (CHANGE MASTER's
/// `MASTER_PASSWORD`, `SOURCE_PASSWORD`) and `PASSWORD(`: a safety net under
/// [`Stmt::redacted`], for a statement whose builder forgot to redact.
pub fn mask_secrets(sql: &str) -> String {
    let upper = sql.to_ascii_uppercase();
    let bytes = sql.as_bytes();
    let mut out = String::with_capacity(sql.len());
    let mut i = 0;
    while i < sql.len() {
        let rest = &upper[i..];
        let key = ["IDENTIFIED BY", "PASSWORD"]
            .into_iter()
            .find(|k| rest.starts_with(k));
        let Some(key) = key else {
            let ch = sql[i..].chars().next().expect("in bounds");
            out.push(ch);
            i += ch.len_utf8();
            continue;
        };
        out.push_str(&sql[i..i + key.len()]);
        i += key.len();
        // Skip blanks, `=` and `(` up to a quote.
        let mut j = i;
        while j < bytes.len() && matches!(bytes[j], b' ' | b'\t' | b'\n' | b'=' | b'(') {
            j += 1;
        }
        if j < bytes.len() && matches!(bytes[j], b'\'' | b'"') {
            let quote = bytes[j];
            let mut k = j + 1;
            while k < bytes.len() {
                if bytes[k] == b'\\' {
                    k += 2;
                    continue;
                }
                if bytes[k] == quote {
                    if k + 1 < bytes.len() && bytes[k + 1] == quote {
                        k += 2;
                        continue;
                    }
                    break;
                }
                k += 1;
            }
            out.push_str(&sql[i..j]);
            out.push_str("'***'");
            i = (k + 1).min(sql.len());
        }
    }
    out
}

/// A statement's display form cut to a readable length for logs.
fn shorten(text: &str) -> String {
    const MAX: usize = 1000;
    match text.char_indices().nth(MAX) {
        Some((i, _)) => format!("{}... ({} bytes)", &text[..i], text.len()),
        None => text.to_string(),
    }
}

/// Reads a column by any of its names (MySQL renamed many SHOW columns) as a string.
pub fn col_string(row: &Row, names: &[&str]) -> Option<String> {
    for name in names {
        if let Some(Some(v)) = row.get_opt::<Option<String>, _>(*name).and_then(|r| r.ok()) {
            return Some(v);
        }
    }
    None
}

/// Reads a numeric column by any of its names.
pub fn col_u64(row: &Row, names: &[&str]) -> Option<u64> {
    col_string(row, names).and_then(|s| s.trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;
    use mysql::Value;

    #[test]
    fn logs_never_show_bound_values_or_passwords() {
        let st = Stmt::with(
            "INSERT INTO `s`.`t` (`a`, `b`) VALUES (?, ?)",
            vec![Value::from("row secret"), Value::from(42)],
        );
        let text = log_text(&st);
        assert_eq!(
            text,
            "INSERT INTO `s`.`t` (`a`, `b`) VALUES (?, ?)  -- 2 values bound (not shown)"
        );
        let one = Stmt::with("SELECT ?", vec![Value::from("x")]);
        assert!(log_text(&one).ends_with("-- 1 value bound (not shown)"));
        let redacted = Stmt {
            sql: "CHANGE MASTER TO MASTER_PASSWORD = 'pw'".into(),
            params: Vec::new(),
            redacted: Some("CHANGE MASTER TO MASTER_PASSWORD = '***'".into()),
        };
        assert_eq!(
            log_text(&redacted),
            "CHANGE MASTER TO MASTER_PASSWORD = '***'"
        );
        // Not redacted by its builder: masked all the same.
        for (sql, shown) in [
            (
                "CREATE USER 'u'@'%' IDENTIFIED BY 's3cr\\'et'",
                "CREATE USER 'u'@'%' IDENTIFIED BY '***'",
            ),
            (
                "CHANGE MASTER 'c' TO MASTER_USER = 'r', MASTER_PASSWORD = 'x''y', MASTER_PORT = 3",
                "CHANGE MASTER 'c' TO MASTER_USER = 'r', MASTER_PASSWORD = '***', MASTER_PORT = 3",
            ),
            (
                "change replication source to source_password=\"pw\"",
                "change replication source to source_password='***'",
            ),
            (
                "SET PASSWORD FOR 'u'@'%' = PASSWORD('pw')",
                "SET PASSWORD FOR 'u'@'%' = PASSWORD('***')",
            ),
            (
                "SELECT password_lifetime FROM t",
                "SELECT password_lifetime FROM t",
            ),
            ("SELECT 'é' AS password", "SELECT 'é' AS password"),
        ] {
            assert_eq!(mask_secrets(sql), shown, "{sql}");
        }
    }

    #[test]
    fn a_statement_is_one_line() {
        let st =
            Stmt::text("CREATE TABLE `t` (\n  `id` int(11) NOT NULL,\n  PRIMARY KEY (`id`)\n)");
        assert_eq!(
            log_text(&st),
            "CREATE TABLE `t` ( `id` int(11) NOT NULL, PRIMARY KEY (`id`) )"
        );
    }

    #[test]
    fn long_statements_are_cut_with_their_length() {
        let long = format!("SELECT {}", "1, ".repeat(1000));
        let text = log_text(&Stmt::text(long.clone()));
        assert!(
            text.ends_with(&format!("... ({} bytes)", long.len())),
            "{text}"
        );
    }
}
