//! Replication primitives on one node: coordinates, channels, filters, waits, status,
//! read-only. The SQL comes from [`Dialect`](super::Dialect); this file runs it and reads
//! the answers.

use super::dialect::{BinlogPosition, Filters, SourceSpec, Stmt};
use super::{col_string, col_u64, server_error_code, Server};
use crate::error::{Error, Result};
use crate::ident::Channel;
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::fmt;
use std::time::{Duration, Instant};

/// A binary log file name split into its base and numeric extension: `mysql-bin.000042`
/// is (`mysql-bin`, 42). A name without a numeric extension has none.
fn binlog_file_index(file: &str) -> (&str, Option<u64>) {
    match file.rsplit_once('.') {
        Some((base, ext)) if !ext.is_empty() && ext.bytes().all(|b| b.is_ascii_digit()) => {
            (base, ext.parse().ok())
        }
        _ => (file, None),
    }
}

/// The file the server opens after `file` (`mysql-bin.000009` → `mysql-bin.000010`,
/// keeping at least the digits' width, as servers count past six digits): where a binary
/// log goes on after a file that ends without a rotation event (the server stopped or
/// crashed and opened a new file when it started). None for a name without a numbered
/// extension.
pub fn next_binlog_file(file: &str) -> Option<String> {
    let (base, index) = binlog_file_index(file);
    let width = file.len().saturating_sub(base.len() + 1);
    index
        .and_then(|i| i.checked_add(1))
        .map(|n| format!("{base}.{n:0width$}"))
}

/// Whether two positions are in the same series of binary log files (same base name), so
/// that their order means something.
pub fn same_binlog(a: &BinlogPosition, b: &BinlogPosition) -> bool {
    binlog_file_index(&a.file).0 == binlog_file_index(&b.file).0
}

impl Ord for BinlogPosition {
    /// By base name, then the file's extension as a number (the server counts past six
    /// digits: `mysql-bin.999999` is followed by `mysql-bin.1000000`, which sorts before it
    /// as text), then the offset; the name as text last, so that only equal positions
    /// compare equal.
    fn cmp(&self, other: &Self) -> Ordering {
        let (a_base, a_index) = binlog_file_index(&self.file);
        let (b_base, b_index) = binlog_file_index(&other.file);
        a_base
            .cmp(b_base)
            .then(a_index.cmp(&b_index))
            .then(self.pos.cmp(&other.pos))
            .then_with(|| self.file.cmp(&other.file))
    }
}

impl PartialOrd for BinlogPosition {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// The highest sequence number of each GTID stream in a GTID state: per domain and server
/// for MariaDB's `domain-server-seq` lists (`gtid_binlog_state`), per source UUID for
/// MySQL's `uuid:1-5:7-9` sets. Unreadable entries are left out.
pub fn gtid_maxima(state: &str) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for entry in state.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        let (stream, seq) = if let Some((uuid, intervals)) = entry.split_once(':') {
            let top = intervals
                .split(':')
                .filter_map(|i| i.rsplit('-').next()?.trim().parse::<u64>().ok())
                .max();
            (uuid.trim().to_ascii_lowercase(), top)
        } else {
            match entry.rsplit_once('-') {
                Some((stream, seq)) => (stream.to_string(), seq.parse::<u64>().ok()),
                None => (entry.to_string(), None),
            }
        };
        if let Some(seq) = seq {
            let e = out.entry(stream).or_insert(seq);
            *e = (*e).max(seq);
        }
    }
    out
}

/// What tells one server from another behind the same address, with where its binary log
/// stood when this was read: journaled at a move's copy and compared with the server as it
/// is at every later step before the flip.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerIdentity {
    /// `@@server_id`: a primary and its replicas differ in it (replication drops a
    /// server's own events), so a replica promoted behind the address shows another one.
    pub server_id: u64,
    /// `@@server_uuid` (MySQL; MariaDB has none).
    #[serde(default)]
    pub server_uuid: Option<String>,
    /// The binary log's coordinates and GTID state when read.
    pub binlog: Coordinates,
    /// The GTIDs the binary log holds, per stream: MariaDB's `gtid_binlog_state` (per
    /// domain and server, so a domain that two servers write never seems to go back),
    /// MySQL's `gtid_executed`. Empty when GTIDs are off.
    #[serde(default)]
    pub gtid_streams: String,
}

/// How a server differs from the one journaled: anything here means the binary log that a
/// channel follows (or a copy was taken from) is not the one it was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IdentityChange {
    /// Another `@@server_id`.
    ServerId { then: u64, now: u64 },
    /// Another `@@server_uuid`.
    ServerUuid { then: String, now: String },
    /// The binary log's files have another base name.
    BinlogRenamed { then: String, now: String },
    /// The binary log is at a lower position than it was (RESET MASTER, or another server).
    BinlogBackwards {
        then: BinlogPosition,
        now: BinlogPosition,
    },
    /// The binary log is at a lower position than a channel has already read from it.
    BehindChannel {
        read: BinlogPosition,
        now: BinlogPosition,
    },
    /// A GTID stream is missing or numbered lower than it was.
    GtidBackwards { then: String, now: String },
}

impl fmt::Display for IdentityChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IdentityChange::ServerId { then, now } => write!(
                f,
                "server_id changed from {then} to {now} (another server answers at its address: a failover?)"
            ),
            IdentityChange::ServerUuid { then, now } => write!(
                f,
                "server_uuid changed from {then} to {now} (another server answers at its address: a failover?)"
            ),
            IdentityChange::BinlogRenamed { then, now } => write!(
                f,
                "its binary log is now {now}, was {then} (another server, or log_bin renamed)"
            ),
            IdentityChange::BinlogBackwards { then, now } => write!(
                f,
                "its binary log went back from {then} to {now} (RESET MASTER, or another server)"
            ),
            IdentityChange::BehindChannel { read, now } => write!(
                f,
                "its binary log is at {now}, behind {read} that the channel already read (RESET MASTER, or another server)"
            ),
            IdentityChange::GtidBackwards { then, now } => write!(
                f,
                "its GTID position {now:?} does not include {then:?} (RESET MASTER, or another server)"
            ),
        }
    }
}

impl ServerIdentity {
    /// How `now` (this server as read again) differs from `self` (as journaled), given the
    /// furthest position a channel has read from it, if any; None when it is the same
    /// server with a binary log that only went forward.
    pub fn change_to(
        &self,
        now: &ServerIdentity,
        channel_read: Option<&BinlogPosition>,
    ) -> Option<IdentityChange> {
        if self.server_id != now.server_id {
            return Some(IdentityChange::ServerId {
                then: self.server_id,
                now: now.server_id,
            });
        }
        if let (Some(then), Some(n)) = (&self.server_uuid, &now.server_uuid) {
            if !then.eq_ignore_ascii_case(n) {
                return Some(IdentityChange::ServerUuid {
                    then: then.clone(),
                    now: n.clone(),
                });
            }
        }
        let (then_pos, now_pos) = (&self.binlog.position, &now.binlog.position);
        if !same_binlog(then_pos, now_pos) {
            return Some(IdentityChange::BinlogRenamed {
                then: then_pos.file.clone(),
                now: now_pos.file.clone(),
            });
        }
        if now_pos < then_pos {
            return Some(IdentityChange::BinlogBackwards {
                then: then_pos.clone(),
                now: now_pos.clone(),
            });
        }
        if let Some(read) = channel_read {
            if !same_binlog(read, now_pos) {
                return Some(IdentityChange::BinlogRenamed {
                    then: read.file.clone(),
                    now: now_pos.file.clone(),
                });
            }
            if now_pos < read {
                return Some(IdentityChange::BehindChannel {
                    read: read.clone(),
                    now: now_pos.clone(),
                });
            }
        }
        let (then_gtid, now_gtid) = (
            gtid_maxima(&self.gtid_streams),
            gtid_maxima(&now.gtid_streams),
        );
        let behind = then_gtid
            .iter()
            .any(|(stream, seq)| now_gtid.get(stream).is_none_or(|n| n < seq));
        if behind {
            return Some(IdentityChange::GtidBackwards {
                then: self.gtid_streams.clone(),
                now: now.gtid_streams.clone(),
            });
        }
        None
    }
}

/// Server identity and binary-log settings.
#[derive(Debug, Clone, Serialize)]
pub struct ServerSettings {
    /// `@@version`.
    pub version: String,
    /// `@@server_id`.
    pub server_id: u64,
    /// Binary log enabled.
    pub log_bin: bool,
    /// ROW, STATEMENT or MIXED.
    pub binlog_format: String,
    /// `@@read_only`.
    pub read_only: bool,
    /// `@@super_read_only` (always false on MariaDB).
    pub super_read_only: bool,
    /// MariaDB's GTID domain settings (None on MySQL, whose GTIDs have no domains).
    pub gtid: Option<GtidDomain>,
}

/// What decides how a MariaDB server applies events of a GTID domain it also writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct GtidDomain {
    /// `@@gtid_domain_id`: the domain of the server's own transactions.
    pub domain_id: u32,
    /// `@@gtid_strict_mode`: out-of-order sequence numbers in a domain stop replication.
    pub strict_mode: bool,
    /// `@@log_slave_updates`: events applied by a channel are written to the server's own
    /// binary log (where strict mode checks their sequence numbers).
    pub log_slave_updates: bool,
}

impl GtidDomain {
    /// Why a channel from a server with `source`'s settings into one with these could not
    /// carry the shard, if it could not: with strict mode and `log_slave_updates`, the
    /// target logs the source's events under their own GTIDs and stops at the first whose
    /// sequence number, in a domain it also writes, is not above its own. (Channels start
    /// at a file and offset, so `gtid_ignore_duplicates` does not apply to them.)
    pub fn conflict_with_source(&self, source: &GtidDomain) -> Option<String> {
        (self.strict_mode && self.log_slave_updates && self.domain_id == source.domain_id).then(
            || {
                format!(
                    "both write gtid_domain_id {} and the target has gtid_strict_mode and log_slave_updates: the channel would stop at the first of the source's events numbered below the target's own",
                    self.domain_id
                )
            },
        )
    }
}

/// Binary-log coordinates with the GTID state at that point.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct Coordinates {
    /// File and offset.
    pub position: BinlogPosition,
    /// GTID state (empty when GTIDs are off).
    pub gtid: String,
}

/// The state of one replication channel.
#[derive(Debug, Clone, Serialize)]
pub struct ChannelStatus {
    /// Channel / connection name.
    #[serde(rename = "channel")]
    pub name: String,
    /// Source host and port.
    pub source: String,
    /// The receiver (I/O) thread: Yes, No or Connecting (in JSON `io_state`: `yes`, `no`
    /// or `connecting`, since it has three values where the applier has two).
    #[serde(rename = "io_state", serialize_with = "lower_case")]
    pub io_running: String,
    /// The applier (SQL) thread runs.
    pub sql_running: bool,
    /// Seconds behind the source, when known.
    pub seconds_behind: Option<u64>,
    /// Last receiver error.
    pub last_io_error: String,
    /// Last applier error.
    pub last_sql_error: String,
    /// Source position applied so far.
    pub executed: Option<BinlogPosition>,
    /// Source position received so far.
    pub received: Option<BinlogPosition>,
    /// replicate-do-db in force.
    pub do_db: String,
    /// replicate-wild-do-table in force.
    pub wild_do_table: String,
    /// replicate-rewrite-db in force.
    pub rewrite_db: String,
    /// The applier's stop condition (`None` when it has none; MySQL calls it
    /// Until_Condition too).
    pub until_condition: String,
    /// The source position the applier stops at (`UNTIL MASTER_LOG_FILE/POS`), when its
    /// stop condition is one.
    #[serde(skip)]
    pub until: Option<BinlogPosition>,
    /// The source's server_id as the channel last saw it (`Master_Server_Id`): tells the
    /// source apart when the replica reaches it by another address than the inventory's.
    #[serde(skip)]
    pub source_server_id: Option<u64>,
}

fn lower_case<S: serde::Serializer>(text: &str, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_str(&text.to_ascii_lowercase())
}

impl ChannelStatus {
    /// Both threads run and no error is recorded.
    pub fn healthy(&self) -> bool {
        self.io_running == "Yes"
            && self.sql_running
            && self.last_io_error.is_empty()
            && self.last_sql_error.is_empty()
    }

    /// The applier is stopped, or runs only up to a position: a verification held it
    /// there and has not released it (a crash in between leaves it so).
    pub fn applier_held(&self) -> bool {
        !self.sql_running || !matches!(self.until_condition.as_str(), "" | "None")
    }

    /// The furthest source position the channel has read or applied.
    pub fn furthest_read(&self) -> Option<&BinlogPosition> {
        match (&self.received, &self.executed) {
            (Some(r), Some(e)) => Some(if same_binlog(r, e) && e > r { e } else { r }),
            (r, e) => r.as_ref().or(e.as_ref()),
        }
    }

    /// The last error, receiver or applier, if any.
    pub fn last_error(&self) -> Option<&str> {
        [&self.last_sql_error, &self.last_io_error]
            .into_iter()
            .find(|e| !e.is_empty())
            .map(String::as_str)
    }

    fn from_row(row: &mysql::Row, fallback_name: &str) -> ChannelStatus {
        let s = |names: &[&str]| col_string(row, names).unwrap_or_default();
        let position = |file: &[&str], pos: &[&str]| {
            let file = col_string(row, file)?;
            let pos = col_u64(row, pos)?;
            (!file.is_empty()).then_some(BinlogPosition { file, pos })
        };
        let name = col_string(row, &["Connection_name", "Channel_Name", "Channel_name"])
            .unwrap_or_else(|| fallback_name.to_string());
        ChannelStatus {
            name,
            source: format!(
                "{}:{}",
                s(&["Master_Host", "Source_Host"]),
                s(&["Master_Port", "Source_Port"])
            ),
            io_running: s(&["Slave_IO_Running", "Replica_IO_Running"]),
            sql_running: s(&["Slave_SQL_Running", "Replica_SQL_Running"]) == "Yes",
            seconds_behind: col_u64(row, &["Seconds_Behind_Master", "Seconds_Behind_Source"]),
            last_io_error: s(&["Last_IO_Error"]),
            last_sql_error: s(&["Last_SQL_Error"]),
            executed: position(
                &["Relay_Master_Log_File", "Relay_Source_Log_File"],
                &["Exec_Master_Log_Pos", "Exec_Source_Log_Pos"],
            ),
            received: position(
                &["Master_Log_File", "Source_Log_File"],
                &["Read_Master_Log_Pos", "Read_Source_Log_Pos"],
            ),
            do_db: s(&["Replicate_Do_DB"]),
            wild_do_table: s(&["Replicate_Wild_Do_Table"]),
            rewrite_db: s(&["Replicate_Rewrite_DB"]),
            until_condition: s(&["Until_Condition"]),
            until: matches!(s(&["Until_Condition"]).as_str(), "Master" | "Source")
                .then(|| position(&["Until_Log_File"], &["Until_Log_Pos"]))
                .flatten(),
            source_server_id: col_u64(row, &["Master_Server_Id", "Source_Server_Id"])
                .filter(|id| *id != 0),
        }
    }
}

/// How often a long wait returns to check the clock and the interrupt flag.
const WAIT_SLICE_SECS: u64 = 2;

/// Server error numbers that mean "no such channel".
const NO_SUCH_CHANNEL: [u16; 2] = [1617, 3074];

impl Server {
    /// Identity and binary-log settings.
    pub fn settings(&mut self) -> Result<ServerSettings> {
        let st = self.dialect().server_settings();
        type Row = (String, u64, u8, String, u8, u8, Option<u32>, u8, u8);
        let row: Option<Row> = self.first(&st)?;
        let (version, server_id, log_bin, binlog_format, read_only, super_ro, domain, strict, lsu) =
            row.ok_or_else(|| Error::server(self.name(), "no answer to the settings query"))?;
        Ok(ServerSettings {
            version,
            server_id,
            log_bin: log_bin != 0,
            binlog_format,
            read_only: read_only != 0,
            super_read_only: super_ro != 0,
            gtid: domain.map(|domain_id| GtidDomain {
                domain_id,
                strict_mode: strict != 0,
                log_slave_updates: lsu != 0,
            }),
        })
    }

    /// Which server this is, and where its binary log stands.
    pub fn identity(&mut self) -> Result<ServerIdentity> {
        let st = self.dialect().server_identity();
        let row: Option<(u64, Option<String>, Option<String>)> = self.first(&st)?;
        let (server_id, server_uuid, gtid_streams) =
            row.ok_or_else(|| Error::server(self.name(), "no answer to the identity query"))?;
        Ok(ServerIdentity {
            server_id,
            server_uuid: server_uuid.filter(|u| !u.is_empty()),
            binlog: self.coordinates()?,
            gtid_streams: gtid_streams.unwrap_or_default(),
        })
    }

    /// The current binary-log coordinates and GTID state.
    pub fn coordinates(&mut self) -> Result<Coordinates> {
        let rows = self.rows(&self.dialect().binlog_coordinates())?;
        let row = rows.first().ok_or_else(|| {
            Error::server(
                self.name(),
                "binary logging is off (log_bin), no coordinates",
            )
        })?;
        let file = col_string(row, &["File"]).unwrap_or_default();
        let pos = col_u64(row, &["Position"]).unwrap_or_default();
        let gtid: Option<String> = self.first(&self.dialect().gtid_state())?;
        Ok(Coordinates {
            position: BinlogPosition { file, pos },
            gtid: gtid.unwrap_or_default(),
        })
    }

    /// Points `channel` at a source (creating the channel), without starting it.
    pub fn change_source(&mut self, channel: &Channel, spec: &SourceSpec) -> Result<()> {
        let st = self.dialect().change_source(channel, spec)?;
        self.exec(&st)
    }

    /// Starts `channel`.
    pub fn start_channel(&mut self, channel: &Channel) -> Result<()> {
        self.exec(&self.dialect().start_channel(channel))
    }

    /// Stops `channel`.
    pub fn stop_channel(&mut self, channel: &Channel) -> Result<()> {
        self.exec(&self.dialect().stop_channel(channel))
    }

    /// Stops and removes `channel` only; other channels keep running. Idempotent: a
    /// channel that does not exist is already reset.
    pub fn reset_channel(&mut self, channel: &Channel) -> Result<()> {
        if self.channel_status(channel)?.is_none() {
            return Ok(());
        }
        self.stop_channel(channel)?;
        self.exec(&self.dialect().reset_channel(channel))
    }

    /// Replaces `channel`'s filters. Stops the channel if it runs and restarts it after.
    pub fn set_filters(&mut self, channel: &Channel, filters: &Filters) -> Result<()> {
        let stmts = self.dialect().set_filters(channel, filters)?;
        let status = self.channel_status(channel)?.ok_or_else(|| {
            Error::Usage(format!(
                "node {}: channel {channel} does not exist; create it (change-master) before setting filters",
                self.name()
            ))
        })?;
        let was_running = status.sql_running || status.io_running != "No";
        if was_running {
            self.stop_channel(channel)?;
        }
        for st in &stmts {
            self.exec(st)?;
        }
        if was_running {
            self.start_channel(channel)?;
        }
        Ok(())
    }

    /// The status of `channel`, or None if it does not exist.
    pub fn channel_status(&mut self, channel: &Channel) -> Result<Option<ChannelStatus>> {
        let st = self.dialect().channel_status(channel);
        match self.try_rows(&st) {
            Ok(rows) => Ok(rows
                .first()
                .map(|r| ChannelStatus::from_row(r, channel.as_str()))),
            Err(e) if server_error_code(&e).is_some_and(|c| NO_SUCH_CHANNEL.contains(&c)) => {
                Ok(None)
            }
            Err(e) => Err(self.error(&e)),
        }
    }

    /// The status of every channel.
    pub fn channels(&mut self) -> Result<Vec<ChannelStatus>> {
        let rows = self.rows(&self.dialect().all_channels_status())?;
        Ok(rows
            .iter()
            .map(|r| ChannelStatus::from_row(r, ""))
            .collect())
    }

    /// Waits until `channel` has applied the source's events up to `pos`. Fails with
    /// [`Error::Timeout`] after `timeout`, and at once if the channel stops or breaks.
    pub fn wait_for_position(
        &mut self,
        channel: &Channel,
        pos: &BinlogPosition,
        timeout: Duration,
    ) -> Result<()> {
        let what = format!("channel {channel} on {} to reach {pos}", self.name());
        self.wait_in_slices(timeout, &what, |server, slice| {
            let st = server.dialect().wait_for_position(channel, pos, slice)?;
            let r: Option<Option<i64>> = server.first(&st)?;
            match r.flatten() {
                Some(n) if n >= 0 => Ok(true),
                Some(_) => Ok(false),
                None => {
                    let why = server
                        .channel_status(channel)?
                        .and_then(|s| s.last_error().map(str::to_string))
                        .unwrap_or_else(|| "its applier is not running".to_string());
                    Err(Error::server(
                        server.name(),
                        format!("channel {channel} cannot reach {pos}: {why}"),
                    ))
                }
            }
        })
    }

    /// Waits until the node has executed `gtids`.
    pub fn wait_for_gtid(&mut self, gtids: &str, timeout: Duration) -> Result<()> {
        let what = format!("{} to execute GTID set {gtids}", self.name());
        let mariadb = self.flavor().is_mariadb();
        self.wait_in_slices(timeout, &what, |server, slice| {
            let st = server.dialect().wait_for_gtid(gtids, slice)?;
            let r: Option<Option<i64>> = server.first(&st)?;
            match r.flatten() {
                Some(0) => Ok(true),
                Some(-1) if mariadb => Ok(false),
                Some(1) if !mariadb => Ok(false),
                other => Err(Error::server(
                    server.name(),
                    format!(
                        "the GTID wait returned {}",
                        other
                            .map(|n| n.to_string())
                            .unwrap_or_else(|| "NULL".into())
                    ),
                )),
            }
        })
    }

    /// Runs `attempt` with slices of at most [`WAIT_SLICE_SECS`] until it reports done,
    /// the deadline passes, or the process is interrupted.
    fn wait_in_slices(
        &mut self,
        timeout: Duration,
        what: &str,
        mut attempt: impl FnMut(&mut Server, u32) -> Result<bool>,
    ) -> Result<()> {
        let deadline = Instant::now() + timeout;
        loop {
            crate::signal::check()?;
            let left = deadline.saturating_duration_since(Instant::now());
            let slice = left.as_secs().clamp(1, WAIT_SLICE_SECS) as u32;
            if attempt(self, slice)? {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(Error::Timeout(format!(
                    "waited {}s for {what}",
                    timeout.as_secs()
                )));
            }
        }
    }

    /// Sets or clears the server-wide read-only fence, waiting at most
    /// [`FENCE_LOCK_WAIT_SECS`](super::statements::FENCE_LOCK_WAIT_SECS) for locks.
    pub fn set_read_only(&mut self, on: bool) -> Result<()> {
        let bound = super::statements::FENCE_LOCK_WAIT_SECS;
        for st in self.dialect().set_read_only(on, bound) {
            self.exec(&st)?;
        }
        Ok(())
    }

    /// Runs statements without replicating them (sql_log_bin = 0 for this session).
    pub fn exec_unlogged(&mut self, stmts: &[Stmt]) -> Result<()> {
        self.exec(&super::statements::sql_log_bin(false))?;
        let r = stmts.iter().try_for_each(|st| self.exec(st));
        self.exec(&super::statements::sql_log_bin(true))?;
        r
    }
}

#[cfg(test)]
mod gtid_tests {
    use super::GtidDomain;

    fn domain(domain_id: u32, strict_mode: bool, log_slave_updates: bool) -> GtidDomain {
        GtidDomain {
            domain_id,
            strict_mode,
            log_slave_updates,
        }
    }

    #[test]
    fn only_a_strict_logging_target_in_the_sources_domain_conflicts() {
        let source = domain(0, false, false);
        assert!(domain(0, true, true)
            .conflict_with_source(&source)
            .unwrap()
            .contains("gtid_domain_id 0"));
        assert!(domain(1, true, true)
            .conflict_with_source(&source)
            .is_none());
        assert!(domain(0, true, false)
            .conflict_with_source(&source)
            .is_none());
        assert!(domain(0, false, true)
            .conflict_with_source(&source)
            .is_none());
    }
}

#[cfg(test)]
mod identity_tests {
    use super::{gtid_maxima, same_binlog, Coordinates, IdentityChange, ServerIdentity};
    use crate::server::BinlogPosition;

    fn at(text: &str) -> BinlogPosition {
        text.parse().unwrap()
    }

    fn server(id: u64, pos: &str, gtid_streams: &str) -> ServerIdentity {
        ServerIdentity {
            server_id: id,
            server_uuid: None,
            binlog: Coordinates {
                position: at(pos),
                gtid: String::new(),
            },
            gtid_streams: gtid_streams.into(),
        }
    }

    #[test]
    fn binlog_files_compare_by_their_number_not_their_text() {
        assert!(at("mysql-bin.999999:9000") < at("mysql-bin.1000000:4"));
        assert!(at("mysql-bin.000009:100") < at("mysql-bin.000010:4"));
        assert!(at("mysql-bin.000010:4") < at("mysql-bin.000010:5"));
        assert!(at("mysql-bin.000010:5") > at("mysql-bin.000009:99999"));
        assert_eq!(
            at("mysql-bin.000010:5").cmp(&at("mysql-bin.000010:5")),
            std::cmp::Ordering::Equal
        );
        // Equal numbers written differently are still different positions.
        assert_ne!(
            at("mysql-bin.01:5").cmp(&at("mysql-bin.1:5")),
            std::cmp::Ordering::Equal
        );
        assert!(same_binlog(
            &at("mysql-bin.000001:4"),
            &at("mysql-bin.1000000:4")
        ));
        assert!(!same_binlog(
            &at("mysql-bin.000001:4"),
            &at("node2-bin.000001:4")
        ));
    }

    #[test]
    fn gtid_streams_are_read_per_domain_and_server_or_per_uuid() {
        let m = gtid_maxima("0-1-100,0-2-7, 5-5-3");
        assert_eq!(m.get("0-1"), Some(&100));
        assert_eq!(m.get("0-2"), Some(&7));
        assert_eq!(m.get("5-5"), Some(&3));
        let m = gtid_maxima("3E11FA47-71CA-11E1-9E33-C80AA9429562:1-5:11-18,\n4f1d0000-0000-0000-0000-000000000001:7");
        assert_eq!(m.get("3e11fa47-71ca-11e1-9e33-c80aa9429562"), Some(&18));
        assert_eq!(m.get("4f1d0000-0000-0000-0000-000000000001"), Some(&7));
        assert!(gtid_maxima("").is_empty());
    }

    #[test]
    fn the_same_server_going_forward_is_no_change() {
        let then = server(2, "mysql-bin.000003:500", "0-2-40");
        let now = server(2, "mysql-bin.000004:100", "0-2-41,0-3-9");
        assert_eq!(
            then.change_to(&now, Some(&at("mysql-bin.000004:100"))),
            None
        );
        assert_eq!(then.change_to(&then.clone(), None), None);
        let past_a_million = server(2, "mysql-bin.1000000:4", "0-2-41");
        let before = server(2, "mysql-bin.999999:90000", "0-2-40");
        assert_eq!(
            before.change_to(&past_a_million, Some(&at("mysql-bin.999999:91000"))),
            None
        );
    }

    #[test]
    fn another_server_id_or_uuid_is_a_change() {
        let then = server(2, "mysql-bin.000003:500", "");
        let now = server(12, "mysql-bin.000009:500", "");
        assert!(matches!(
            then.change_to(&now, None),
            Some(IdentityChange::ServerId { then: 2, now: 12 })
        ));
        let mut a = then.clone();
        a.server_uuid = Some("aaaa".into());
        let mut b = then.clone();
        b.server_uuid = Some("AAAA".into());
        assert_eq!(a.change_to(&b, None), None);
        b.server_uuid = Some("bbbb".into());
        let change = a.change_to(&b, None).unwrap();
        assert!(change
            .to_string()
            .contains("server_uuid changed from aaaa to bbbb"));
    }

    #[test]
    fn a_binary_log_that_went_back_is_a_change() {
        let then = server(2, "mysql-bin.000003:500", "");
        // RESET MASTER: back to the first file.
        let reset = server(2, "mysql-bin.000001:900", "");
        let change = then.change_to(&reset, None).unwrap();
        assert!(matches!(change, IdentityChange::BinlogBackwards { .. }));
        assert!(change.to_string().contains("RESET MASTER"), "{change}");
        // Same file, lower offset.
        let lower = server(2, "mysql-bin.000003:499", "");
        assert!(then.change_to(&lower, None).is_some());
        // Above the journaled point but below what the channel already read.
        let now = server(2, "mysql-bin.000003:800", "");
        assert!(matches!(
            then.change_to(&now, Some(&at("mysql-bin.000003:5000"))),
            Some(IdentityChange::BehindChannel { .. })
        ));
        // Another series of files.
        let renamed = server(2, "other-bin.000007:800", "");
        assert!(matches!(
            then.change_to(&renamed, None),
            Some(IdentityChange::BinlogRenamed { .. })
        ));
    }

    #[test]
    fn gtids_missing_or_numbered_lower_are_a_change() {
        let then = server(2, "mysql-bin.000003:500", "0-2-40,1-1-7");
        // RESET MASTER empties the state.
        let reset = server(2, "mysql-bin.000003:900", "");
        assert!(matches!(
            then.change_to(&reset, None),
            Some(IdentityChange::GtidBackwards { .. })
        ));
        let lower = server(2, "mysql-bin.000003:900", "0-2-39,1-1-7");
        assert!(then.change_to(&lower, None).is_some());
        // A stream of the same domain by another server beside it is no change.
        let beside = server(2, "mysql-bin.000003:900", "0-2-40,0-9-1,1-1-7");
        assert_eq!(then.change_to(&beside, None), None);
    }
}
