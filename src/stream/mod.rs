//! A row-level change stream: the source's binary log read over the replication protocol
//! from the copy's consistent position, the row events of the moving tables filtered by
//! their sharding key's predicate, their schema names rewritten, and applied to the target
//! in source commit order, one target transaction per source transaction, with the
//! stream's checkpoint written in that same transaction. A crash anywhere resumes exactly:
//! the target holds a source transaction's rows if and only if it holds the checkpoint
//! past it. `docs/STREAM.md` describes the design; `tests/stream.rs` runs it on MariaDB.
//!
//! What it refuses before anything changes, each with one line: a source whose binary log
//! is off, not row-based, not `binlog_row_image = FULL`, compressed, or no longer holding
//! the start position; a moving table without a primary key (or a unique key over NOT NULL
//! columns), whose columns differ between source and target, whose sharding column is
//! nullable or of the wrong type, or that has triggers on the target. What stops it while
//! it runs, before the event in question and with its position: a statement (DDL) naming a
//! moving schema, a row image that is not full, an XA transaction or an event type it
//! cannot apply, a target that lacks a row the source updated or deleted or holds one it
//! inserted.

pub mod apply;
pub mod event;
pub mod filter;
pub mod table;

pub use filter::KeyFilter;

use crate::control::Control;
use crate::error::{Error, Result};
use crate::ident::Ident;
use crate::output::log;
use crate::server::replication::Coordinates;
use crate::server::stream::{self as sql, BinlogDump, DumpRequest, DumpStart};
use crate::server::{col_string, col_u64, BinlogPosition, ConnectSpec, Server};
use apply::{Applier, Change};
use event::{GroupStart, Header, Item, MariaGtid};
use mysql::binlog::events::{RowsEventData, TableMapEvent};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use table::TableDef;

/// One table whose rows (or some of them) move.
#[derive(Debug, Clone)]
pub struct MovingTable {
    /// Its schema on the source.
    pub source_schema: Ident,
    /// Its schema on the target: the stream rewrites the name.
    pub target_schema: Ident,
    /// The table (the same name on both sides, and in the source's binary log).
    pub table: Ident,
    /// The name the source's table has now, when a fence renamed it since (its columns and
    /// key are read there); None: `table`.
    pub source_table_now: Option<Ident>,
    /// The sharding column and the keys that move; None: every row moves.
    pub keys: Option<(Ident, KeyFilter)>,
}

/// Where the stream starts when the target holds no checkpoint of it yet.
#[derive(Debug, Clone, PartialEq)]
pub struct Start {
    /// The binary-log position (an event boundary: the copy's consistent point). None:
    /// from the GTID state (MariaDB only).
    pub position: Option<BinlogPosition>,
    /// The GTID state there (`@@gtid_binlog_pos` on MariaDB, `gtid_executed` on MySQL;
    /// may be empty), carried along in the checkpoint.
    pub gtid_state: String,
}

impl From<&Coordinates> for Start {
    /// The copy's coordinates.
    fn from(c: &Coordinates) -> Start {
        Start {
            position: Some(c.position.clone()),
            gtid_state: c.gtid.clone(),
        }
    }
}

/// A throttle wait longer than this parks the stream as a pause does (its dump closed, to
/// be opened again from the checkpoint): a dump not read from for long would be cut off by
/// the source's `net_write_timeout`.
const PARK_AFTER: Duration = Duration::from_secs(1);

/// Tuning.
#[derive(Debug, Clone)]
pub struct StreamOptions {
    /// The server_id the stream registers with on the source; None: derived from the
    /// stream's id ([`server_id_for`]).
    pub server_id: Option<u32>,
    /// How often an idle source sends a heartbeat (below the read timeout). A stream
    /// stopped while its source is idle notices the stop at the next heartbeat, so this
    /// bounds how long bringing it to a position waits on a quiet source (a key move's
    /// fence, a verification round).
    pub heartbeat: Duration,
    /// Most row changes held in memory: past it, they are applied inside the open target
    /// transaction.
    pub max_buffered_rows: usize,
    /// Most bytes of row changes held in memory, likewise.
    pub max_buffered_bytes: usize,
    /// Most rows of one multi-row INSERT on the target.
    pub insert_rows: usize,
    /// How often the position moves in the checkpoint while the source writes only
    /// transactions the stream skips (each applied transaction moves it anyway).
    pub checkpoint_every: Duration,
    /// How often the lag is measured on the source.
    pub lag_every: Duration,
    /// How many times a lost connection (source or target) is opened again from the
    /// target's checkpoint before the stream gives up.
    pub reconnects: u32,
    /// The owner's lease epoch, written with every checkpoint: once a newer owner has
    /// claimed the checkpoint (or ended the stream), this one's next commit is refused
    /// and rolled back, so an owner that was frozen and taken over applies nothing more.
    pub epoch: u64,
}

impl Default for StreamOptions {
    fn default() -> Self {
        StreamOptions {
            server_id: None,
            heartbeat: Duration::from_millis(100),
            max_buffered_rows: 1000,
            max_buffered_bytes: 8 << 20,
            insert_rows: 500,
            checkpoint_every: Duration::from_secs(1),
            lag_every: Duration::from_secs(1),
            reconnects: 3,
            epoch: 0,
        }
    }
}

/// Everything a stream needs.
#[derive(Debug, Clone)]
pub struct StreamSpec {
    /// The stream's id: its checkpoint row's key (letters, digits, `_`, `-`, at most 64).
    pub id: String,
    /// The source with the administrative account (settings, catalog, lag).
    pub source: ConnectSpec,
    /// The source with the replication account (REPLICATION SLAVE): the binary-log dump.
    pub source_dump: ConnectSpec,
    /// The target.
    pub target: ConnectSpec,
    /// The moving tables.
    pub tables: Vec<MovingTable>,
    /// Where to start without a checkpoint.
    pub start: Start,
    /// The target's schema holding the checkpoint table.
    pub checkpoint_schema: Ident,
    /// Tuning.
    pub options: StreamOptions,
}

/// The server_id a stream registers with, derived from its id: in 3_000_000_000 up to
/// 3_999_999_999, far above the ids fleets number their servers with (the sandbox's are
/// below 1000), and the same for every run of one stream, so that a restarted stream
/// displaces its own dead dump thread on the source rather than a replica's.
pub fn server_id_for(stream_id: &str) -> u32 {
    3_000_000_000 + crc32fast::hash(stream_id.as_bytes()) % 1_000_000_000
}

/// The source position up to which the target holds the stream's changes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Checkpoint {
    /// File and offset: a transaction boundary.
    pub position: BinlogPosition,
    /// The GTID state there (MariaDB: one `domain-server-seq` per domain, kept up to date
    /// from the GTID events; MySQL: the start's state, not advanced).
    pub gtid_state: String,
    /// The GTID of the last transaction read (empty when none).
    pub last_gtid: String,
    /// Source transactions applied (those with changes of the moving rows).
    pub transactions: u64,
    /// Row changes applied.
    pub row_changes: u64,
    /// When the source committed the last transaction read, seconds since the epoch.
    pub source_time: u64,
}

/// The counters of a running stream, shared with whoever watches it.
#[derive(Debug, Default)]
pub struct StreamStats {
    /// Events read.
    pub events: AtomicU64,
    /// Bytes of events read.
    pub bytes: AtomicU64,
    /// Source transactions applied.
    pub transactions: AtomicU64,
    /// Source transactions read and skipped (no moving row).
    pub skipped: AtomicU64,
    /// Row changes applied.
    pub row_changes: AtomicU64,
    /// Rows read and filtered out.
    pub rows_filtered: AtomicU64,
    /// Row changes held in memory now.
    pub buffered: AtomicU64,
    /// The most row changes ever held in memory at once.
    pub buffered_peak: AtomicU64,
    /// Connections opened again after a loss.
    pub reconnects: AtomicU64,
    /// Seconds behind the source (-1: unknown).
    pub seconds_behind: AtomicI64,
    /// Bytes of binary log behind the source (-1: unknown).
    pub bytes_behind: AtomicI64,
    /// The last checkpoint written.
    checkpoint: Mutex<Option<Checkpoint>>,
}

/// A reading of [`StreamStats`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StreamProgress {
    /// Events read.
    pub events: u64,
    /// Source transactions applied.
    pub transactions: u64,
    /// Source transactions skipped.
    pub skipped: u64,
    /// Row changes applied.
    pub row_changes: u64,
    /// Rows filtered out.
    pub rows_filtered: u64,
    /// The most row changes held in memory at once.
    pub buffered_peak: u64,
    /// Connections opened again.
    pub reconnects: u64,
    /// Seconds behind the source, when known.
    pub seconds_behind: Option<u64>,
    /// Bytes behind the source, when known.
    pub bytes_behind: Option<u64>,
    /// The last checkpoint written.
    pub checkpoint: Option<Checkpoint>,
}

impl StreamStats {
    /// The counters now.
    pub fn progress(&self) -> StreamProgress {
        let known = |v: i64| u64::try_from(v).ok();
        StreamProgress {
            events: self.events.load(Ordering::Relaxed),
            transactions: self.transactions.load(Ordering::Relaxed),
            skipped: self.skipped.load(Ordering::Relaxed),
            row_changes: self.row_changes.load(Ordering::Relaxed),
            rows_filtered: self.rows_filtered.load(Ordering::Relaxed),
            buffered_peak: self.buffered_peak.load(Ordering::Relaxed),
            reconnects: self.reconnects.load(Ordering::Relaxed),
            seconds_behind: known(self.seconds_behind.load(Ordering::Relaxed)),
            bytes_behind: known(self.bytes_behind.load(Ordering::Relaxed)),
            checkpoint: self
                .checkpoint
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clone(),
        }
    }

    fn set_checkpoint(&self, cp: &Checkpoint) {
        *self.checkpoint.lock().unwrap_or_else(|p| p.into_inner()) = Some(cp.clone());
    }
}

/// A flush of buffered changes into the open target transaction.
#[derive(Debug, Clone, PartialEq)]
pub struct Flush {
    /// Changes applied by this flush.
    pub changes: usize,
    /// Changes applied so far in this transaction.
    pub in_transaction: u64,
    /// The target session's connection id.
    pub target_connection: u64,
}

/// Hooks into a running stream, all optional: the caller's journal follower, throttle, and
/// the tests' crash points.
pub trait Observer {
    /// Buffered changes went into the open target transaction.
    fn flushed(&mut self, _flush: &Flush) -> Result<()> {
        Ok(())
    }

    /// The checkpoint is written and the target transaction about to commit.
    fn before_commit(&mut self, _cp: &Checkpoint) -> Result<()> {
        Ok(())
    }

    /// A target transaction committed: the target holds everything up to `cp`. The place
    /// to record the position in the directory's journal, as a follower of the target's
    /// checkpoint.
    fn committed(&mut self, _cp: &Checkpoint) -> Result<()> {
        Ok(())
    }

    /// At a transaction boundary: how long to wait before reading on (a throttle).
    fn throttle(&mut self, _progress: &StreamProgress) -> Duration {
        Duration::ZERO
    }
}

/// An observer that does nothing.
pub struct NoObserver;

impl Observer for NoObserver {}

/// How far a run goes.
#[derive(Debug, Clone, PartialEq)]
pub enum Until {
    /// Until stopped (the stop flag, a signal) or failed.
    Stopped,
    /// Until it has applied everything the source had written when the run began.
    CaughtUp,
    /// Until it reaches this position (a transaction boundary at or past it).
    Position(BinlogPosition),
}

/// Why a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Ended {
    /// It reached the position asked for.
    Reached,
    /// Its stop flag was set; it stopped at its last checkpoint (a transaction that was
    /// being applied was rolled back, to be read again).
    Stopped,
}

/// What a run did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunReport {
    /// Why it ended.
    pub ended: Ended,
    /// Where the target stands.
    pub checkpoint: Checkpoint,
    /// The counters.
    pub progress: StreamProgress,
}

/// A prepared stream: checked, its checkpoint table in place, ready to run (and run again).
pub struct ChangeStream {
    spec: StreamSpec,
    tables: Vec<TableDef>,
    server_id: u32,
    /// The source writes event checksums (CRC32): the first, artificial rotation's name
    /// still carries one (the driver strips checksums only after a format description).
    checksums: bool,
    /// The source's clock minus this machine's, seconds.
    clock_offset: i64,
    stats: Arc<StreamStats>,
    stop: Arc<AtomicBool>,
    control: Option<Arc<Control>>,
    /// The target held (or got) the stream's checkpoint when it was prepared.
    has_checkpoint: bool,
}

impl std::fmt::Debug for ChangeStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChangeStream")
            .field("id", &self.spec.id)
            .field("server_id", &self.server_id)
            .finish()
    }
}

/// The source's settings, as [`sql::source_settings`] reads them.
type Settings = (
    Option<i64>,
    Option<String>,
    Option<String>,
    Option<u64>,
    Option<i64>,
    Option<String>,
    Option<String>,
);

fn check_stream_id(id: &str) -> Result<()> {
    if id.is_empty()
        || id.len() > 64
        || !id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        return Err(Error::Usage(format!(
            "invalid stream id {id:?}: use 1 to 64 ASCII letters, digits, '_' or '-'"
        )));
    }
    Ok(())
}

/// The files the source holds and their sizes, in order.
fn binary_logs(server: &mut Server) -> Result<Vec<(String, u64)>> {
    let rows = server.rows(&sql::show_binary_logs())?;
    Ok(rows
        .iter()
        .filter_map(|r| {
            Some((
                col_string(r, &["Log_name"])?,
                col_u64(r, &["File_size"]).unwrap_or(0),
            ))
        })
        .collect())
}

/// Refuses, with one line, a source whose binary log the stream cannot read: off, not
/// row-based, not `binlog_row_image = FULL`, compressed, or with partial JSON values.
/// An operation checks this before it changes anything.
pub fn check_source(source: &mut Server) -> Result<SourceLog> {
    let node = source.name().to_string();
    let settings = source
        .first::<Settings>(&sql::source_settings(source.dialect()))?
        .ok_or_else(|| Error::server(&node, "no answer to the settings' query"))?;
    let (log_bin, format, image, source_id, compressed, value_options, checksum) = settings;
    let refuse = |what: String| Err(Error::Refused(format!("node {node}: {what}")));
    if log_bin != Some(1) {
        return refuse("its binary log is off (log_bin): there is nothing to stream".into());
    }
    if !format
        .as_deref()
        .is_some_and(|f| f.eq_ignore_ascii_case("ROW"))
    {
        return refuse(format!(
            "binlog_format is {}, not ROW: the stream reads row events only",
            format.unwrap_or_default()
        ));
    }
    if !image
        .as_deref()
        .is_some_and(|f| f.eq_ignore_ascii_case("FULL"))
    {
        return refuse(format!(
            "binlog_row_image is {}, not FULL: the stream needs every column of every row image",
            image.unwrap_or_default()
        ));
    }
    if compressed.unwrap_or(0) != 0 {
        return refuse(
            "its binary log compresses events (log_bin_compress / binlog_transaction_compression): the stream reads plain events only".into(),
        );
    }
    if value_options.as_deref().is_some_and(|v| !v.is_empty()) {
        return refuse(
            "binlog_row_value_options is PARTIAL_JSON: the stream needs whole JSON values".into(),
        );
    }
    Ok(SourceLog {
        server_id: source_id,
        checksums: checksum
            .as_deref()
            .is_some_and(|c| c.eq_ignore_ascii_case("CRC32")),
    })
}

/// A session of the stream's own (its purpose shown in logs and captures).
pub(crate) fn connect(spec: &ConnectSpec) -> Result<Server> {
    let mut server = Server::connect(spec)?;
    server.set_purpose(crate::server::Purpose::Stream);
    Ok(server)
}

/// What [`check_source`] read of a source the stream can read.
#[derive(Debug, Clone, Copy)]
pub struct SourceLog {
    /// Its `server_id`.
    pub server_id: Option<u64>,
    /// Its events carry CRC32 checksums.
    pub checksums: bool,
}

impl ChangeStream {
    /// Checks the source, the moving tables and the start position, refusing with one
    /// line what the stream cannot carry; nothing changes on any server until every check
    /// passed. Then creates the checkpoint schema and table on the target if need be. A
    /// stream whose checkpoint the target holds resumes from it; otherwise it starts at
    /// `spec.start`.
    pub fn prepare(spec: StreamSpec) -> Result<ChangeStream> {
        check_stream_id(&spec.id)?;
        if spec.tables.is_empty() {
            return Err(Error::Usage("a stream of no table".into()));
        }
        let mut source = connect(&spec.source)?;
        let node = source.name().to_string();
        let refuse = |what: String| Err(Error::Refused(format!("node {node}: {what}")));
        let source_log = check_source(&mut source)?;
        let source_id = source_log.server_id;
        let server_id = spec
            .options
            .server_id
            .unwrap_or_else(|| server_id_for(&spec.id));
        if source_id == Some(u64::from(server_id)) {
            return refuse(format!(
                "its server_id is the stream's ({server_id}): give the stream another"
            ));
        }
        let source_now: Option<i64> = source.first(&sql::unix_time())?;
        let clock_offset = source_now.map(|t| t - now_secs()).unwrap_or(0);

        // The moving tables, on both sides.
        let mut target = connect(&spec.target)?;
        let mut tables = Vec::new();
        for m in &spec.tables {
            let now = m.source_table_now.as_ref().unwrap_or(&m.table);
            let src_cols = table::read_columns(&mut source, &m.source_schema, now)?;
            let tgt_cols = table::read_columns(&mut target, &m.target_schema, &m.table)?;
            let key = table::read_row_key(&mut source, &m.source_schema, now, &src_cols)?;
            let def = TableDef::new(
                &m.source_schema,
                &m.target_schema,
                &m.table,
                src_cols,
                &tgt_cols,
                key,
                m.keys.as_ref().map(|(c, f)| (c, f.clone())),
            )?;
            let triggers: Vec<String> = target
                .rows(&sql::table_triggers(&m.target_schema, &m.table))?
                .iter()
                .filter_map(|r| r.get::<String, _>(0))
                // shardctl's guards write nothing: the applier's session passes them.
                .filter(|t| !crate::server::statements::is_shardctl_trigger(t))
                .collect();
            if let Some(t) = triggers.first() {
                return Err(Error::Refused(format!(
                    "table {}.{} has trigger {t} on the target: the source's binary log already holds the rows its triggers wrote, so the trigger would write them twice; create triggers after the stream",
                    m.target_schema, m.table
                )));
            }
            tables.push(def);
        }
        let mut names: Vec<(&Ident, &Ident)> = tables
            .iter()
            .map(|t| (&t.source_schema, &t.table))
            .collect();
        names.sort();
        if names.windows(2).any(|w| w[0] == w[1]) {
            return Err(Error::Usage("a moving table is listed twice".into()));
        }

        // Where it starts, and whether the source still holds that position.
        let resume = apply::read_checkpoint(&mut target, &spec.checkpoint_schema, &spec.id)?;
        let position = match &resume {
            Some(cp) => Some(cp.position.clone()),
            None => spec.start.position.clone(),
        };
        match &position {
            Some(p) => {
                let logs = binary_logs(&mut source)?;
                let held = logs.iter().find(|(f, _)| *f == p.file);
                match held {
                    Some((_, size)) if p.pos <= *size => {}
                    Some((_, size)) => {
                        return refuse(format!(
                            "its binary log {} is {size} bytes long, short of the stream's position {p}",
                            p.file
                        ))
                    }
                    None => {
                        return refuse(format!(
                            "its binary log no longer holds the stream's position {p} (oldest file: {}): the rows changed since cannot be streamed; copy again",
                            logs.first().map(|(f, _)| f.as_str()).unwrap_or("none")
                        ))
                    }
                }
            }
            None if !source.flavor().is_mariadb() => {
                return Err(Error::Usage(
                    "a stream without a start position: a start by GTID alone is MariaDB's".into(),
                ))
            }
            None => {}
        }

        // Every check passed: the checkpoint table, then (first run) the start.
        target.exec(&sql::create_checkpoint_schema(&spec.checkpoint_schema))?;
        target.exec(&sql::create_checkpoint_table(&spec.checkpoint_schema))?;
        let stats = Arc::new(StreamStats::default());
        stats.seconds_behind.store(-1, Ordering::Relaxed);
        stats.bytes_behind.store(-1, Ordering::Relaxed);
        if let Some(cp) = &resume {
            // A new owner takes the stream over: an older one (frozen, taken over) writes
            // nothing more from here on.
            let epoch = spec.options.epoch;
            target.exec(&sql::claim_checkpoint(
                &spec.checkpoint_schema,
                &spec.id,
                epoch,
            ))?;
            // Read back (an UPDATE that sets the same epoch changes no row either).
            let held: Option<u64> =
                target.first(&sql::checkpoint_epoch(&spec.checkpoint_schema, &spec.id))?;
            if held.is_some_and(|e| e > epoch) {
                return Err(Error::LeaseLost(format!(
                    "stream {}: a newer owner than epoch {epoch} holds its checkpoint",
                    spec.id
                )));
            }
            log(
                1,
                &format!("stream {}: resuming at {}", spec.id, cp.position),
            );
            stats.set_checkpoint(cp);
        } else if let Some(p) = &spec.start.position {
            let cp = Checkpoint {
                position: p.clone(),
                gtid_state: spec.start.gtid_state.clone(),
                last_gtid: String::new(),
                transactions: 0,
                row_changes: 0,
                source_time: 0,
            };
            target.exec(&sql::write_checkpoint(
                &spec.checkpoint_schema,
                &sql::CheckpointRow {
                    stream_id: &spec.id,
                    position: &cp.position,
                    gtid_state: &cp.gtid_state,
                    last_gtid: "",
                    transactions: 0,
                    row_changes: 0,
                    source_time: 0,
                    epoch: spec.options.epoch,
                },
            ))?;
            stats.set_checkpoint(&cp);
        }
        let has_checkpoint = resume.is_some() || spec.start.position.is_some();
        Ok(ChangeStream {
            checksums: source_log.checksums,
            spec,
            tables,
            server_id,
            clock_offset,
            stats,
            stop: Arc::new(AtomicBool::new(false)),
            control: crate::control::current(),
            has_checkpoint,
        })
    }

    /// The counters, to watch from another thread.
    pub fn stats(&self) -> Arc<StreamStats> {
        Arc::clone(&self.stats)
    }

    /// The stop flag: once set, the run ends at its next event (rolling back a transaction
    /// it was applying) with [`Ended::Stopped`].
    pub fn stop_flag(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.stop)
    }

    /// The operator control the stream parks on between transactions (`shardctl pause`);
    /// by default the one of the thread that prepared it.
    pub fn set_control(&mut self, control: Option<Arc<Control>>) {
        self.control = control;
    }

    /// The server_id the stream registers with.
    pub fn server_id(&self) -> u32 {
        self.server_id
    }

    /// The moving tables as the stream carries them.
    pub fn tables(&self) -> &[TableDef] {
        &self.tables
    }

    /// Runs the stream until `until`; a lost connection is opened again from the target's
    /// checkpoint up to [`StreamOptions::reconnects`] times.
    pub fn run(&mut self, until: Until, observer: &mut dyn Observer) -> Result<RunReport> {
        let target_pos = match &until {
            Until::Stopped => None,
            Until::Position(p) => Some(p.clone()),
            Until::CaughtUp => {
                let mut s = connect(&self.spec.source)?;
                Some(s.coordinates()?.position)
            }
        };
        let mut attempts = 0;
        loop {
            let mut run = Run::open(self, target_pos.clone())?;
            match run.pump(observer) {
                Ok(ended) => {
                    let progress = self.stats.progress();
                    return Ok(RunReport {
                        ended,
                        checkpoint: run.checkpoint.clone(),
                        progress,
                    });
                }
                Err(e) => {
                    let _ = run.applier.rollback();
                    let lost = match &e {
                        Error::Server { .. } | Error::Timeout(_) => {
                            run.applier.is_broken() || run.dump_failed
                        }
                        _ => false,
                    };
                    if !lost || attempts >= self.spec.options.reconnects {
                        return Err(e);
                    }
                    attempts += 1;
                    self.stats.reconnects.fetch_add(1, Ordering::Relaxed);
                    log(
                        1,
                        &format!(
                            "stream {}: {e}; reading again from the target's checkpoint",
                            self.spec.id
                        ),
                    );
                }
            }
        }
    }
}

fn now_secs() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

/// The transaction group being read.
#[derive(Debug, Default)]
struct Group {
    /// Inside a group (between its start and its commit).
    open: bool,
    /// Its GTID event.
    start: Option<GroupStart>,
    /// Row changes kept so far (buffered or applied).
    kept: u64,
    /// Where it starts in the binary log: where the stream stands while it is read.
    from: Option<BinlogPosition>,
}

/// The GTID state of a MariaDB source, per domain.
fn parse_gtid_state(state: &str) -> BTreeMap<u32, MariaGtid> {
    let mut out = BTreeMap::new();
    for entry in state.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        let parts: Vec<&str> = entry.split('-').collect();
        if let [d, s, n] = parts.as_slice() {
            if let (Ok(domain), Ok(server), Ok(seq)) = (d.parse(), s.parse(), n.parse()) {
                out.insert(
                    domain,
                    MariaGtid {
                        domain,
                        server,
                        seq,
                    },
                );
            }
        }
    }
    out
}

fn gtid_state_text(state: &BTreeMap<u32, MariaGtid>) -> String {
    state
        .values()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// Whether a statement names `schema` as an identifier: its default schema, or the name
/// in its text with no identifier character on either side (so `shop_1` is not found in
/// `shop_10`), compared without case.
fn names_schema(default: &str, text: &str, schema: &str) -> bool {
    if default.eq_ignore_ascii_case(schema) {
        return true;
    }
    let hay = code_of(text).to_ascii_lowercase();
    let needle = schema.to_ascii_lowercase();
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'$';
    let bytes = hay.as_bytes();
    let mut from = 0;
    while let Some(i) = hay[from..].find(&needle) {
        let start = from + i;
        let end = start + needle.len();
        let before = start == 0 || !ident(bytes[start - 1]);
        let after = end == bytes.len() || !ident(bytes[end]);
        if before && after {
            return true;
        }
        from = start + 1;
    }
    false
}

/// A statement's text with its single-quoted string literals and plain comments (`/* */`
/// that is not executable, `-- `, `#`) blanked out: a schema's name there is data or a
/// remark (a view comparing `table_schema` with `'shop_3'`), not an identifier. Backquoted
/// and double-quoted names (identifiers under ANSI_QUOTES) and executable comments (`/*!`,
/// `/*M!`, which hold SQL) are kept.
fn code_of(text: &str) -> String {
    #[derive(Clone, Copy, PartialEq)]
    enum In {
        Code,
        Single,
        Double,
        Back,
        Block,
        Line,
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut state = In::Code;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let next = bytes.get(i + 1).copied();
        match state {
            In::Code => match b {
                b'\'' => {
                    state = In::Single;
                    out.push(b' ');
                }
                b'"' => {
                    state = In::Double;
                    out.push(b);
                }
                b'`' => {
                    state = In::Back;
                    out.push(b);
                }
                b'/' if next == Some(b'*')
                    && !matches!(bytes.get(i + 2), Some(b'!'))
                    && !(bytes.get(i + 2) == Some(&b'M') && bytes.get(i + 3) == Some(&b'!')) =>
                {
                    state = In::Block;
                    out.push(b' ');
                    i += 1;
                }
                b'#' => {
                    state = In::Line;
                    out.push(b' ');
                }
                b'-' if next == Some(b'-')
                    && bytes.get(i + 2).is_none_or(|c| c.is_ascii_whitespace()) =>
                {
                    state = In::Line;
                    out.push(b' ');
                }
                _ => out.push(b),
            },
            In::Single => {
                // A backslash escapes the next character, and a doubled quote is one.
                if b == b'\\' || (b == b'\'' && next == Some(b'\'')) {
                    i += 1;
                } else if b == b'\'' {
                    state = In::Code;
                }
                out.push(b' ');
            }
            In::Double | In::Back => {
                let quote = if state == In::Double { b'"' } else { b'`' };
                out.push(b);
                if b == quote && next == Some(quote) {
                    out.push(quote);
                    i += 1;
                } else if b == quote {
                    state = In::Code;
                }
            }
            In::Block => {
                if b == b'*' && next == Some(b'/') {
                    state = In::Code;
                    i += 1;
                }
                out.push(b' ');
            }
            In::Line => {
                if b == b'\n' {
                    state = In::Code;
                    out.push(b);
                } else {
                    out.push(b' ');
                }
            }
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A statement that changes no row and no definition of a table (statistics, privileges,
/// caches): logged with a moving schema as its default or in its text, it is passed over
/// rather than stopping the stream.
fn changes_no_table(text: &str) -> bool {
    let code = code_of(text).to_ascii_uppercase();
    let words: Vec<&str> = code.split_whitespace().take(3).collect();
    matches!(
        words.as_slice(),
        ["ANALYZE", ..]
            | ["FLUSH", ..]
            | ["GRANT", ..]
            | ["REVOKE", ..]
            | ["CREATE" | "DROP" | "ALTER" | "RENAME", "USER" | "ROLE", ..]
            | ["SET", "PASSWORD" | "DEFAULT", ..]
    )
}

/// What a statement of the binary log is to a transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Statement {
    Begin,
    Commit,
    Rollback,
    XaStart,
    XaEnd,
    XaFinish,
    Savepoint,
    RollbackToSavepoint,
    Other,
}

fn statement_kind(text: &str) -> Statement {
    let t = text.trim().to_ascii_uppercase();
    let words: Vec<&str> = t.split_whitespace().collect();
    match words.as_slice() {
        ["BEGIN"] | ["START", "TRANSACTION", ..] => Statement::Begin,
        ["COMMIT", ..] => Statement::Commit,
        ["ROLLBACK", "TO", ..] => Statement::RollbackToSavepoint,
        ["ROLLBACK", ..] => Statement::Rollback,
        ["XA", "START" | "BEGIN", ..] => Statement::XaStart,
        ["XA", "END", ..] => Statement::XaEnd,
        ["XA", "COMMIT" | "ROLLBACK" | "PREPARE", ..] => Statement::XaFinish,
        ["SAVEPOINT", ..] | ["RELEASE", "SAVEPOINT", ..] => Statement::Savepoint,
        _ => Statement::Other,
    }
}

/// One run: the dump, the applier, and where they stand.
struct Run<'s> {
    stream: &'s ChangeStream,
    until: Option<BinlogPosition>,
    dump: Option<BinlogDump>,
    /// The last dump failed (a read, not a refusal): the run may be opened again.
    dump_failed: bool,
    applier: Applier,
    monitor: Option<Server>,
    /// The target's truth: what it holds.
    checkpoint: Checkpoint,
    /// Where the reading stands (after the last event read).
    read: BinlogPosition,
    /// The reading's position is a position of the log (false at a GTID start until the
    /// source says where it starts).
    position_known: bool,
    /// The first artificial rotation is still to come.
    first_rotate: bool,
    gtid_state: BTreeMap<u32, MariaGtid>,
    last_gtid: String,
    last_event_time: u32,
    group: Group,
    /// Table id → the moving table it maps (None: a table the stream skips), with the map.
    table_ids: HashMap<u64, (Option<usize>, TableMapEvent<'static>)>,
    buffer: Vec<Change>,
    buffer_bytes: usize,
    /// Changes applied in the open target transaction.
    applied_in_txn: u64,
    /// The position moved past the checkpoint without a write.
    dirty: bool,
    last_write: Instant,
    last_lag: Option<Instant>,
}

impl<'s> Run<'s> {
    fn open(stream: &'s ChangeStream, until: Option<BinlogPosition>) -> Result<Run<'s>> {
        let spec = &stream.spec;
        let mut applier = Applier::connect(
            &spec.target,
            &spec.checkpoint_schema,
            &spec.id,
            spec.options.insert_rows,
            spec.options.epoch,
            stream.has_checkpoint,
        )?;
        let checkpoint =
            apply::read_checkpoint(applier.server(), &spec.checkpoint_schema, &spec.id)?;
        if checkpoint.is_none() && stream.has_checkpoint {
            // Ended by another owner since this one prepared it: starting over from the
            // start position would replay what the target holds already.
            return Err(Error::LeaseLost(format!(
                "stream {}: its checkpoint is gone from the target (another owner ended the stream): nothing more is applied",
                spec.id
            )));
        }
        let (checkpoint, position_known) = match checkpoint {
            Some(cp) => (cp, true),
            None => (
                Checkpoint {
                    position: BinlogPosition {
                        file: String::new(),
                        pos: 4,
                    },
                    gtid_state: spec.start.gtid_state.clone(),
                    last_gtid: String::new(),
                    transactions: 0,
                    row_changes: 0,
                    source_time: 0,
                },
                false,
            ),
        };
        stream.stats.set_checkpoint(&checkpoint);
        Ok(Run {
            stream,
            until,
            dump: None,
            dump_failed: false,
            applier,
            monitor: None,
            read: checkpoint.position.clone(),
            position_known,
            first_rotate: true,
            gtid_state: parse_gtid_state(&checkpoint.gtid_state),
            last_gtid: checkpoint.last_gtid.clone(),
            last_event_time: checkpoint.source_time as u32,
            checkpoint,
            group: Group::default(),
            table_ids: HashMap::new(),
            buffer: Vec::new(),
            buffer_bytes: 0,
            applied_in_txn: 0,
            dirty: false,
            last_write: Instant::now(),
            last_lag: None,
        })
    }

    fn spec(&self) -> &StreamSpec {
        &self.stream.spec
    }

    /// Opens the dump from the checkpoint (at a boundary, where the reading stands).
    fn open_dump(&mut self) -> Result<()> {
        let spec = &self.stream.spec;
        let start = if self.position_known {
            DumpStart::Position(self.checkpoint.position.clone())
        } else {
            DumpStart::MariaDbGtid(self.checkpoint.gtid_state.clone())
        };
        let heartbeat = spec
            .options
            .heartbeat
            .min(spec.source_dump.read_timeout / 2)
            .max(Duration::from_millis(100));
        let server = connect(&spec.source_dump)?;
        self.dump = Some(server.into_binlog_dump(&DumpRequest {
            server_id: self.stream.server_id,
            start,
            heartbeat,
            read_timeout: spec.source_dump.read_timeout,
        })?);
        self.first_rotate = true;
        self.table_ids.clear();
        Ok(())
    }

    fn at_boundary(&self) -> bool {
        !self.group.open && !self.applier.is_open()
    }

    fn reached(&self) -> bool {
        self.position_known
            && self.at_boundary()
            && self.until.as_ref().is_some_and(|u| self.read >= *u)
    }

    /// Reads and applies until `until`, the stop flag, or an error.
    fn pump(&mut self, observer: &mut dyn Observer) -> Result<Ended> {
        loop {
            if self.reached() {
                self.write_position_if_moved(observer)?;
                self.measure_lag();
                return Ok(Ended::Reached);
            }
            if self.stream.stop.load(Ordering::SeqCst) {
                self.abandon_group()?;
                self.write_position_if_moved(observer)?;
                self.measure_lag();
                return Ok(Ended::Stopped);
            }
            if crate::signal::interrupted() {
                self.abandon_group()?;
                self.write_position_if_moved(observer)?;
                return Err(Error::Interrupted);
            }
            if self.at_boundary() {
                self.boundary_duties(observer)?;
            }
            if self.dump.is_none() {
                self.open_dump()?;
            }
            let ev = match self.dump.as_mut().expect("opened above").next_event() {
                Ok(ev) => ev,
                Err(e) => {
                    self.dump = None;
                    self.dump_failed = !matches!(e, Error::Refused(_));
                    return Err(e);
                }
            };
            self.stream.stats.events.fetch_add(1, Ordering::Relaxed);
            let header = Header::of(&ev);
            self.stream
                .stats
                .bytes
                .fetch_add(u64::from(header.size), Ordering::Relaxed);
            self.handle(&ev, header, observer)?;
        }
    }

    /// A transaction being read is given up (stop): its target transaction rolls back and
    /// it will be read again from the checkpoint.
    fn abandon_group(&mut self) -> Result<()> {
        if self.group.open || self.applier.is_open() {
            self.buffer.clear();
            self.buffer_bytes = 0;
            self.stream.stats.buffered.store(0, Ordering::Relaxed);
            self.applier.rollback()?;
            self.group = Group::default();
            self.applied_in_txn = 0;
            // Read again from the checkpoint.
            self.read = self.checkpoint.position.clone();
            self.dirty = false;
        }
        Ok(())
    }

    /// Between transactions: the periodic checkpoint, the lag, pause and throttle.
    fn boundary_duties(&mut self, observer: &mut dyn Observer) -> Result<()> {
        if self.dirty && self.last_write.elapsed() >= self.spec().options.checkpoint_every {
            self.write_position_if_moved(observer)?;
        }
        let lag_due = self
            .last_lag
            .is_none_or(|t| t.elapsed() >= self.spec().options.lag_every);
        if lag_due {
            self.measure_lag();
        }
        let control = self.stream.control.clone();
        let pause = control.as_ref().is_some_and(|c| c.pause_requested());
        let wait = observer.throttle(&self.stream.stats.progress());
        if pause || wait > PARK_AFTER {
            // Parked: the position goes to the checkpoint and the dump is closed (a dump
            // not read from would be cut off by the source's net_write_timeout), to be
            // opened again from there.
            self.write_position_if_moved(observer)?;
            self.dump = None;
            if let Some(c) = &control {
                let _me = c.participant();
                c.hold_while(Control::pause_requested)?;
            }
        }
        let until = Instant::now() + wait;
        while Instant::now() < until && !self.stream.stop.load(Ordering::SeqCst) {
            crate::signal::check()?;
            std::thread::sleep((until - Instant::now()).min(Duration::from_millis(50)));
        }
        Ok(())
    }

    /// Seconds and bytes behind the source, read on a connection of its own; a failure
    /// leaves them unknown.
    fn measure_lag(&mut self) {
        self.last_lag = Some(Instant::now());
        let stats = &self.stream.stats;
        let measured = (|| -> Result<(i64, i64)> {
            if self.monitor.is_none() {
                self.monitor = Some(connect(&self.stream.spec.source)?);
            }
            let m = self.monitor.as_mut().expect("connected above");
            let now = m.coordinates()?.position;
            let logs = binary_logs(m)?;
            let read = &self.read;
            let bytes = if now.file == read.file {
                now.pos.saturating_sub(read.pos)
            } else {
                let mut total = 0u64;
                let mut counting = false;
                for (f, size) in &logs {
                    if *f == read.file {
                        counting = true;
                        total += size.saturating_sub(read.pos);
                    } else if *f == now.file {
                        total += now.pos;
                        break;
                    } else if counting {
                        total += size;
                    }
                }
                total
            };
            // Behind by some bytes before any event with a time was read (a run that just
            // started): how far behind in seconds is not known yet, not zero.
            let secs = if bytes == 0 {
                0
            } else if self.last_event_time == 0 {
                -1
            } else {
                (now_secs() + self.stream.clock_offset - i64::from(self.last_event_time)).max(0)
            };
            Ok((secs, bytes as i64))
        })();
        match measured {
            Ok((secs, bytes)) => {
                stats.seconds_behind.store(secs, Ordering::Relaxed);
                stats.bytes_behind.store(bytes, Ordering::Relaxed);
            }
            Err(e) => {
                self.monitor = None;
                stats.seconds_behind.store(-1, Ordering::Relaxed);
                stats.bytes_behind.store(-1, Ordering::Relaxed);
                log(1, &format!("stream {}: lag unknown: {e}", self.spec().id));
            }
        }
    }

    /// The position moved past the checkpoint through skipped transactions: record it (a
    /// transaction of its own, holding the checkpoint alone).
    fn write_position_if_moved(&mut self, observer: &mut dyn Observer) -> Result<()> {
        if !self.dirty || !self.position_known || !self.at_boundary() {
            return Ok(());
        }
        let cp = self.next_checkpoint();
        // A checkpoint alone is kept out of the target's binary log: on one node the stream
        // reads that log, and would read its own write back, skip it, and write the moved
        // position again, once a second for as long as it runs.
        self.applier.log_to_binlog(false)?;
        let written = (|| {
            self.applier.write_checkpoint(&cp)?;
            observer.before_commit(&cp)?;
            self.applier.commit()
        })();
        if written.is_err() {
            let _ = self.applier.rollback();
        }
        let relogged = self.applier.log_to_binlog(true);
        written?;
        relogged?;
        self.committed(cp, observer)
    }

    fn next_checkpoint(&self) -> Checkpoint {
        let gtid_state = if self.gtid_state.is_empty() {
            self.checkpoint.gtid_state.clone()
        } else {
            gtid_state_text(&self.gtid_state)
        };
        Checkpoint {
            position: self.read.clone(),
            gtid_state,
            last_gtid: self.last_gtid.clone(),
            transactions: self.checkpoint.transactions,
            row_changes: self.checkpoint.row_changes,
            source_time: u64::from(self.last_event_time),
        }
    }

    fn committed(&mut self, cp: Checkpoint, observer: &mut dyn Observer) -> Result<()> {
        self.stream.stats.set_checkpoint(&cp);
        self.checkpoint = cp;
        self.dirty = false;
        self.last_write = Instant::now();
        observer.committed(&self.checkpoint)
    }

    /// Moves the reading position past an event.
    fn advance(&mut self, header: Header) {
        // A position of the log only moves forward within a file: a format description
        // sent ahead of a mid-file start says 0, and at a GTID start the events from the
        // file's head come before the source's (artificial) GTID list that says where the
        // stream really starts.
        if header.log_pos != 0 && u64::from(header.log_pos) > self.read.pos {
            self.read.pos = u64::from(header.log_pos);
        }
        if !self.group.open && self.position_known && self.read != self.checkpoint.position {
            self.dirty = true;
        }
    }

    fn handle(
        &mut self,
        ev: &mysql::binlog::events::Event,
        header: Header,
        observer: &mut dyn Observer,
    ) -> Result<()> {
        if header.timestamp != 0 {
            self.last_event_time = header.timestamp;
        }
        let at = format!("{}:{}", self.read.file, self.read.pos);
        match event::classify(ev)? {
            Item::Rotate { mut file, pos } => {
                if header.artificial && self.first_rotate && self.stream.checksums && file.len() > 4
                {
                    // The checksum the driver could not strip yet.
                    file.truncate(file.len() - 4);
                }
                let file = String::from_utf8_lossy(&file).into_owned();
                self.first_rotate = false;
                if header.artificial && self.position_known {
                    // The dump's own first event: where it starts, which is the
                    // checkpoint's position (or, after a real rotation, the new file's
                    // head, which the real rotation already said).
                    if file != self.read.file {
                        self.read = BinlogPosition { file, pos };
                    }
                } else {
                    self.read = BinlogPosition { file, pos };
                }
                if !self.group.open && self.position_known && self.read != self.checkpoint.position
                {
                    self.dirty = true;
                }
                return Ok(());
            }
            Item::Group(g) => {
                if self.group.open {
                    return Err(Error::Internal(format!(
                        "a transaction group starts at {at} inside another"
                    )));
                }
                self.last_gtid = g.gtid.clone();
                // MariaDB's GTID event opens the group; MySQL's precedes a BEGIN or a
                // statement of its own.
                let opens = g.mariadb.is_some();
                self.group = Group {
                    open: opens,
                    start: Some(g),
                    kept: 0,
                    from: Some(self.read.clone()),
                };
            }
            Item::Query { schema, text } => {
                self.statement(&schema, &text, &at, header, observer)?;
                return Ok(());
            }
            Item::Xid => {
                self.advance(header);
                return self.end_group(true, observer);
            }
            Item::XaPrepare => {
                self.advance(header);
                return self.end_group(false, observer);
            }
            Item::TableMap(t) => {
                let idx = self.stream.tables.iter().position(|d| {
                    d.source_schema.as_str().as_bytes() == t.database_name_raw()
                        && d.table.as_str().as_bytes() == t.table_name_raw()
                });
                if let Some(i) = idx {
                    let def = &self.stream.tables[i];
                    if t.columns_count() as usize != def.columns.len() {
                        return Err(Error::Refused(format!(
                            "at {at} the source logs {} columns for {}, whose definition had {}: the table changed under the stream; it stops",
                            t.columns_count(),
                            def.source_name(),
                            def.columns.len()
                        )));
                    }
                }
                self.table_ids.insert(t.table_id(), (idx, t.into_owned()));
            }
            Item::Rows(r) => {
                if self.group.from.is_none() {
                    self.group.from = Some(self.read.clone());
                }
                if !self.group.open {
                    // A row event outside BEGIN ... COMMIT (MySQL's CREATE ... SELECT):
                    // its group runs to the commit that follows.
                    self.group.open = true;
                }
                self.rows(&r, &at, observer)?;
            }
            Item::Heartbeat => {
                return Ok(());
            }
            Item::FormatDescription | Item::Ignored => {
                if header.artificial && header.type_code == event::mariadb::GTID_LIST {
                    // At a GTID start: the source's word for where it starts.
                    self.position_known = true;
                    self.read.pos = u64::from(header.log_pos);
                    return Ok(());
                }
            }
            Item::Incident => {
                return Err(Error::Refused(format!(
                    "the source logged an incident at {at} (events it lost): the stream stops; copy again"
                )))
            }
            Item::Unsupported(what) => {
                return Err(Error::Refused(format!(
                    "the source's binary log holds {what} at {at}, which the stream cannot apply: it stops there"
                )))
            }
        }
        self.advance(header);
        Ok(())
    }

    fn statement(
        &mut self,
        schema: &str,
        text: &str,
        at: &str,
        header: Header,
        observer: &mut dyn Observer,
    ) -> Result<()> {
        let kind = statement_kind(text);
        if self.group.from.is_none() {
            self.group.from = Some(self.read.clone());
        }
        match kind {
            Statement::Begin | Statement::XaStart => {
                self.group.open = true;
                if kind == Statement::XaStart {
                    if let Some(g) = self.group.start.as_mut() {
                        g.xa = true;
                    } else {
                        self.group.start = Some(GroupStart {
                            gtid: String::new(),
                            mariadb: None,
                            standalone: false,
                            xa: true,
                        });
                    }
                }
                self.advance(header);
                Ok(())
            }
            Statement::Commit => {
                self.advance(header);
                self.end_group(true, observer)
            }
            Statement::Rollback => {
                self.advance(header);
                self.end_group(false, observer)
            }
            Statement::XaEnd | Statement::Savepoint => {
                self.advance(header);
                Ok(())
            }
            Statement::XaFinish => {
                self.advance(header);
                if self.group.kept > 0 {
                    return Err(Error::Refused(format!(
                        "an XA transaction changes moving rows at {at}: the stream does not carry XA transactions; it stops"
                    )));
                }
                // `XA COMMIT` and `XA ROLLBACK` are groups of their own; an `XA PREPARE`
                // ends the prepared part's group.
                self.end_group(false, observer)
            }
            Statement::RollbackToSavepoint => {
                if self.group.kept > 0 {
                    return Err(Error::Refused(format!(
                        "a transaction that changes moving rows rolls back to a savepoint at {at}: the stream cannot tell which of its rows stay; it stops"
                    )));
                }
                self.advance(header);
                Ok(())
            }
            Statement::Other => {
                if let Some(t) = self.stream.tables.iter().find(|t| {
                    !changes_no_table(text) && names_schema(schema, text, t.source_schema.as_str())
                }) {
                    let shown: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
                    let shown: String = shown.chars().take(200).collect();
                    let from = self.group.from.as_ref().map(ToString::to_string);
                    return Err(Error::Refused(format!(
                        "at {at} the source logs a statement on the moving schema {}, which the stream does not carry: `{shown}`; the stream stopped before its transaction group at {} (carry the change to the target by hand and start the stream past it, or copy again)",
                        t.source_schema,
                        from.as_deref().unwrap_or(at)
                    )));
                }
                self.advance(header);
                if !self.group.open || self.standalone() {
                    // A statement of its own (DDL): its group ends with it.
                    return self.end_group(false, observer);
                }
                Ok(())
            }
        }
    }

    fn standalone(&self) -> bool {
        self.group.start.as_ref().is_some_and(|g| g.standalone)
    }

    fn rows(&mut self, r: &RowsEventData<'_>, at: &str, observer: &mut dyn Observer) -> Result<()> {
        let stream = self.stream;
        let Some((moving, tme)) = self.table_ids.remove(&r.table_id()) else {
            return Err(Error::Internal(format!(
                "a row event at {at} for table id {} with no table map before it",
                r.table_id()
            )));
        };
        let result = match moving {
            Some(idx) => self.moving_rows(r, &tme, &stream.tables[idx], idx, at, observer),
            None => Ok(()),
        };
        self.table_ids.insert(r.table_id(), (moving, tme));
        result
    }

    fn moving_rows(
        &mut self,
        r: &RowsEventData<'_>,
        tme: &TableMapEvent<'static>,
        def: &TableDef,
        idx: usize,
        at: &str,
        observer: &mut dyn Observer,
    ) -> Result<()> {
        if self.group.start.as_ref().is_some_and(|g| g.xa) {
            return Err(Error::Refused(format!(
                "an XA transaction changes {} at {at}: the stream does not carry XA transactions; it stops",
                def.source_name()
            )));
        }
        // Every written and key column must be in every image (binlog_row_image = FULL in
        // the session that wrote it).
        let before_cols: Option<Vec<bool>> = r
            .columns_before_image()
            .map(|b| b.iter().map(|x| *x).collect());
        let after_cols: Option<Vec<bool>> = r
            .columns_after_image()
            .map(|b| b.iter().map(|x| *x).collect());
        for image in [&before_cols, &after_cols].into_iter().flatten() {
            let lacks = def
                .written
                .iter()
                .chain(def.key.iter())
                .any(|&i| !image.get(i).copied().unwrap_or(false));
            if lacks {
                return Err(Error::Refused(format!(
                    "at {at} the source logs a row of {} without all its columns (binlog_row_image was not FULL in the session that wrote it): the stream cannot apply it; it stops",
                    def.source_name()
                )));
            }
        }
        for row in r.rows(tme) {
            let (before, after) = row.map_err(|e| {
                Error::Internal(format!(
                    "cannot read a row of {} at {at}: {e}",
                    def.source_name()
                ))
            })?;
            let before = match (before, &before_cols) {
                (Some(b), Some(cols)) => Some(full_row(def, b, cols)?),
                _ => None,
            };
            let after = match (after, &after_cols) {
                (Some(a), Some(cols)) => Some(full_row(def, a, cols)?),
                _ => None,
            };
            let keep_before = before.as_ref().map(|b| def.keeps(b)).transpose()?;
            let keep_after = after.as_ref().map(|a| def.keeps(a)).transpose()?;
            let pick = |row: &[mysql::Value], cols: &[usize]| -> Vec<mysql::Value> {
                cols.iter().map(|&i| row[i].clone()).collect()
            };
            let change = match (&before, &after, keep_before, keep_after) {
                (None, Some(a), _, Some(true)) => Some(Change::Insert {
                    table: idx,
                    values: pick(a, &def.written),
                }),
                (Some(b), None, Some(true), _) => Some(Change::Delete {
                    table: idx,
                    key: pick(b, &def.key),
                }),
                (Some(b), Some(a), Some(true), Some(true)) => Some(Change::Update {
                    table: idx,
                    key: pick(b, &def.key),
                    values: pick(a, &def.written),
                }),
                // The key leaves the moving keys: the row leaves the target.
                (Some(b), Some(_), Some(true), Some(false)) => Some(Change::Delete {
                    table: idx,
                    key: pick(b, &def.key),
                }),
                // The key enters them: the row arrives.
                (Some(_), Some(a), Some(false), Some(true)) => Some(Change::Insert {
                    table: idx,
                    values: pick(a, &def.written),
                }),
                _ => None,
            };
            match change {
                Some(c) => self.push(c, observer)?,
                None => {
                    self.stream
                        .stats
                        .rows_filtered
                        .fetch_add(1, Ordering::Relaxed);
                }
            }
        }
        Ok(())
    }

    /// Buffers a change; a full buffer goes into the open target transaction.
    fn push(&mut self, change: Change, observer: &mut dyn Observer) -> Result<()> {
        self.buffer_bytes += change.size();
        self.buffer.push(change);
        self.group.kept += 1;
        let n = self.buffer.len() as u64;
        let stats = &self.stream.stats;
        stats.buffered.store(n, Ordering::Relaxed);
        stats.buffered_peak.fetch_max(n, Ordering::Relaxed);
        let opts = &self.spec().options;
        if self.buffer.len() >= opts.max_buffered_rows.max(1)
            || self.buffer_bytes >= opts.max_buffered_bytes
        {
            self.flush(observer)?;
        }
        Ok(())
    }

    fn flush(&mut self, observer: &mut dyn Observer) -> Result<()> {
        if self.buffer.is_empty() {
            return Ok(());
        }
        let n = self.buffer.len();
        self.applier.apply(&self.stream.tables, &mut self.buffer)?;
        self.buffer_bytes = 0;
        self.applied_in_txn += n as u64;
        self.stream.stats.buffered.store(0, Ordering::Relaxed);
        let target_connection = self.applier.server().connection_id();
        observer.flushed(&Flush {
            changes: n,
            in_transaction: self.applied_in_txn,
            target_connection,
        })
    }

    /// A group ends at the event just read (the reading position is past it). `commit`:
    /// a commit (else a rollback or a group with nothing to commit).
    fn end_group(&mut self, commit: bool, observer: &mut dyn Observer) -> Result<()> {
        let group = std::mem::take(&mut self.group);
        if let Some(g) = group.start.as_ref().and_then(|g| g.mariadb) {
            self.gtid_state.insert(g.domain, g);
        }
        if group.start.is_some() || group.open {
            self.position_known = true;
        }
        if commit && group.kept > 0 {
            self.flush(observer)?;
            let mut cp = self.next_checkpoint();
            cp.transactions += 1;
            cp.row_changes += self.applied_in_txn;
            self.applier.write_checkpoint(&cp)?;
            observer.before_commit(&cp)?;
            self.applier.commit()?;
            let stats = &self.stream.stats;
            stats.transactions.fetch_add(1, Ordering::Relaxed);
            stats
                .row_changes
                .fetch_add(self.applied_in_txn, Ordering::Relaxed);
            self.applied_in_txn = 0;
            return self.committed(cp, observer);
        }
        // Nothing to apply (or a rollback): drop whatever was buffered or applied.
        self.buffer.clear();
        self.buffer_bytes = 0;
        self.stream.stats.buffered.store(0, Ordering::Relaxed);
        self.applier.rollback()?;
        self.applied_in_txn = 0;
        self.stream.stats.skipped.fetch_add(1, Ordering::Relaxed);
        if self.read != self.checkpoint.position {
            self.dirty = true;
        }
        Ok(())
    }
}

/// A row image as one converted value per column. `present` says which columns the image
/// holds (the caller checked that every written and key column is among them); a
/// generated column it lacks is NULL here, never written.
fn full_row(
    def: &TableDef,
    mut row: mysql::binlog::row::BinlogRow,
    present: &[bool],
) -> Result<Vec<mysql::Value>> {
    let mut out = Vec::with_capacity(def.columns.len());
    let mut k = 0;
    for (i, col) in def.columns.iter().enumerate() {
        if present.get(i).copied().unwrap_or(false) {
            let v = row.take(k).ok_or_else(|| {
                Error::Internal(format!("a row of {} lacks column {i}", def.source_name()))
            })?;
            k += 1;
            out.push(table::convert(col, v)?);
        } else {
            out.push(mysql::Value::NULL);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_name_a_schema_only_as_a_whole_identifier() {
        assert!(names_schema("shop_1", "ALTER TABLE t ADD c INT", "shop_1"));
        assert!(names_schema(
            "",
            "ALTER TABLE `shop_1`.t ADD c INT",
            "shop_1"
        ));
        assert!(names_schema("", "drop database SHOP_1", "shop_1"));
        assert!(!names_schema(
            "",
            "ALTER TABLE shop_10.t ADD c INT",
            "shop_1"
        ));
        assert!(!names_schema(
            "other",
            "ALTER TABLE xshop_1.t ADD c INT",
            "shop_1"
        ));
        assert!(names_schema("", "RENAME TABLE a.t TO shop_1.t", "shop_1"));
        // In a string literal or a plain comment the name is data or a remark.
        assert!(!names_schema(
            "shop_2",
            "CREATE VIEW v AS SELECT * FROM information_schema.TABLES WHERE table_schema = 'shop_1' /* not shop_1 */ -- shop_1",
            "shop_1"
        ));
        assert!(!names_schema(
            "",
            "SELECT 'it''s shop_1', 'a\\'shop_1'",
            "shop_1"
        ));
        // As an identifier, quoted either way, or in an executable comment, it counts.
        assert!(names_schema(
            "",
            "ALTER TABLE \"shop_1\".t ADD c INT",
            "shop_1"
        ));
        assert!(names_schema(
            "",
            "/*!50001 CREATE VIEW shop_1.v AS SELECT 1 */",
            "shop_1"
        ));
        assert!(names_schema(
            "",
            "/*M!100100 DROP TABLE shop_1.t */",
            "shop_1"
        ));
        assert!(names_schema(
            "",
            "ALTER TABLE `x'y`.t RENAME TO shop_1.t",
            "shop_1"
        ));
        assert!(names_schema(
            "",
            "UPDATE t SET a = 1 # note\n, b = 2 WHERE shop_1.t.id = 1",
            "shop_1"
        ));
    }

    #[test]
    fn statements_that_change_no_table_are_passed_over() {
        assert!(changes_no_table("ANALYZE TABLE shop_1.t"));
        assert!(changes_no_table("GRANT SELECT ON shop_1.* TO 'app'@'%'"));
        assert!(changes_no_table("flush privileges"));
        assert!(changes_no_table("CREATE USER 'x'@'%'"));
        assert!(!changes_no_table("ALTER TABLE shop_1.t ADD c INT"));
        assert!(!changes_no_table("CREATE TABLE shop_1.t (id INT)"));
        assert!(!changes_no_table("OPTIMIZE TABLE shop_1.t"));
    }

    #[test]
    fn transaction_control_is_told_from_other_statements() {
        assert_eq!(statement_kind("BEGIN"), Statement::Begin);
        assert_eq!(statement_kind("COMMIT"), Statement::Commit);
        assert_eq!(statement_kind("ROLLBACK"), Statement::Rollback);
        assert_eq!(
            statement_kind("ROLLBACK TO `s1`"),
            Statement::RollbackToSavepoint
        );
        assert_eq!(statement_kind("SAVEPOINT `s1`"), Statement::Savepoint);
        assert_eq!(statement_kind("XA START X'01',X'',1"), Statement::XaStart);
        assert_eq!(statement_kind("XA COMMIT X'01'"), Statement::XaFinish);
        assert_eq!(
            statement_kind("BEGIN NOT ATOMIC SELECT 1; END"),
            Statement::Other
        );
        assert_eq!(statement_kind("ALTER TABLE t ADD c INT"), Statement::Other);
    }

    #[test]
    fn gtid_states_round_trip_per_domain() {
        let s = parse_gtid_state("0-1-5, 7-3-12");
        assert_eq!(gtid_state_text(&s), "0-1-5,7-3-12");
        assert!(parse_gtid_state("").is_empty());
        assert!(parse_gtid_state("3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5").is_empty());
    }

    #[test]
    fn server_ids_are_stable_and_above_a_fleets_own() {
        let a = server_id_for("op7");
        assert_eq!(a, server_id_for("op7"));
        assert_ne!(a, server_id_for("op8"));
        assert!(a >= 3_000_000_000);
    }
}
