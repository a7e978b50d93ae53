//! Replication primitives on one node: coordinates, channels, filters, waits, status,
//! read-only. The SQL comes from [`Dialect`](super::Dialect); this file runs it and reads
//! the answers.

use super::dialect::{BinlogPosition, Filters, SourceSpec, Stmt};
use super::{col_string, col_u64, server_error_code, Server};
use crate::error::{Error, Result};
use crate::ident::Channel;
use serde::Serialize;
use std::time::{Duration, Instant};

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
