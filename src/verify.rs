//! Verification of a copy at a consistent point, outside the write fence.
//!
//! A round:
//! 1. the target's applier stops (the receiver keeps reading);
//! 2. on the source, for the milliseconds it takes, `LOCK TABLES ... READ` on the compared
//!    tables only; every reader opens a consistent snapshot; the binary-log position `P` is
//!    read; the lock goes;
//! 3. the target's applier runs `UNTIL P` and, once it has applied exactly up to `P`, every
//!    target reader opens its snapshot; the applier is released to run freely again;
//! 4. the workers compare primary-key chunks in parallel, each on its own pair of
//!    snapshots, until every chunk is compared or the round's snapshots reach their age
//!    limit (a long-open snapshot holds back the servers' purge); a new round continues
//!    where the last one stopped.
//!
//! Chunks that matched at an earlier point still match at a later one: everything the
//! source wrote to the shard between the points went through the channel, which applies
//! it in order. What verification does not cover (writes made on the source with
//! `sql_log_bin = 0`, writes made on the target directly) is in `docs/SAFETY.md`.
//!
//! Under a fence (or on one node) there is no channel to hold: the snapshots simply open
//! on both sides, the data standing still.

use crate::error::{Error, Result};
use crate::ident::{Channel, Ident};
use crate::server::{statements, BinlogPosition, ConnectSpec, Purpose, Server, Stmt};
use mysql::Value;
use serde::Serialize;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// One table compared: its name on each side (a fenced source table has a hidden name).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TablePair {
    /// Schema on the source.
    pub source_schema: Ident,
    /// Table name on the source now.
    pub source_table: Ident,
    /// Schema on the target.
    pub target_schema: Ident,
    /// Table name on the target.
    pub target_table: Ident,
    /// Only the target's rows matching this are compared (a merge's survivor holds its
    /// own keys besides the retired shard's).
    #[serde(skip)]
    pub target_filter: Option<statements::Condition>,
    /// Only the source's rows matching this are compared (a key move compares the keys
    /// that move; the donor keeps its others). Chunk bounds still come from every row.
    #[serde(skip)]
    pub source_filter: Option<statements::Condition>,
}

impl TablePair {
    /// `schema.table` as the target names it (the shard's name for it after the move).
    pub fn name(&self) -> String {
        format!("{}.{}", self.target_schema, self.target_table)
    }
}

/// How to compare.
#[derive(Debug, Clone)]
pub struct VerifyOptions {
    /// Parallel workers, each with a snapshot on both sides.
    pub workers: usize,
    /// Rows per chunk.
    pub chunk_rows: u64,
    /// A round's snapshots are not used for longer than this; a new consistent point
    /// continues the comparison.
    pub max_snapshot_secs: u64,
    /// Longest wait for the momentary lock on the source's tables in one attempt: writers
    /// queue behind a waiting lock, so it gives up soon and tries again (up to
    /// [`LOCK_ATTEMPTS`] times) rather than stall them behind a long transaction.
    pub lock_wait_secs: u64,
    /// Longest wait for the target to reach the consistent point.
    pub reach_timeout_secs: u64,
    /// The hold's `RunUntil` returns only once the target stands at the point (a change
    /// stream brought there), so no channel is watched for it.
    pub point_reached_by_hold: bool,
}

impl Default for VerifyOptions {
    fn default() -> Self {
        VerifyOptions {
            workers: 4,
            chunk_rows: 10_000,
            max_snapshot_secs: 300,
            lock_wait_secs: 1,
            reach_timeout_secs: 300,
            point_reached_by_hold: false,
        }
    }
}

/// A step of holding the channel at a consistent point: each is a change on the target,
/// sent by the caller (so it is journaled and shown by a dry run like every other).
#[derive(Debug, Clone, PartialEq)]
pub enum Hold {
    /// Stop the applier.
    Pause,
    /// Apply up to the position and no further.
    RunUntil(BinlogPosition),
    /// Run freely again.
    Release,
}

/// What a chunk checksum reads on one side: the row count and the digest of the rows'
/// hashes (see [`statements::chunk_checksum`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct ChunkSum {
    /// Rows in the chunk.
    pub rows: u64,
    /// BIT_XOR of the rows' 64-bit hashes (a table without a primary key: their SUM
    /// modulo 2^64).
    pub digest: u64,
}

/// One chunk whose rows differ.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChunkDifference {
    /// `schema.table` on the target.
    pub table: String,
    /// The chunk's primary-key range, `(after, up_to]`, as SQL literals (`-inf` / `+inf` at
    /// an open end).
    pub after: String,
    /// See `after`.
    pub up_to: String,
    /// The chunk on the source.
    pub source: ChunkSum,
    /// The same on the target.
    pub target: ChunkSum,
}

impl std::fmt::Display for ChunkDifference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} rows with primary key in ({}, {}]: source {} rows (digest {:016x}), target {} rows (digest {:016x})",
            self.table,
            self.after,
            self.up_to,
            self.source.rows,
            self.source.digest,
            self.target.rows,
            self.target.digest
        )
    }
}

/// The columns of `schema.table` on `server` as a chunk checksum hashes them, in order.
pub fn read_hashed_columns(
    server: &mut Server,
    schema: &Ident,
    table: &Ident,
) -> Result<Vec<statements::HashedColumn>> {
    let node = server.name().to_string();
    server
        .rows(&statements::hashed_columns(schema, table))?
        .into_iter()
        .map(|r| {
            let (name, data_type): (String, String) =
                mysql::from_row_opt(r).map_err(|e| crate::server::row_error(&node, e))?;
            Ok(statements::HashedColumn {
                name: Ident::new("column", &name)?,
                hashed_as: statements::HashedAs::for_data_type(&data_type),
            })
        })
        .collect()
}

/// Runs a chunk checksum (see [`statements::chunk_checksum`]).
pub fn chunk_sum(server: &mut Server, st: &Stmt) -> Result<ChunkSum> {
    let (rows, digest) = server.first::<(u64, u64)>(st)?.unwrap_or((0, 0));
    Ok(ChunkSum { rows, digest })
}

/// What a verification compared.
#[derive(Debug, Clone, Default, Serialize)]
pub struct VerifyReport {
    /// Tables compared.
    pub tables: usize,
    /// Chunks compared.
    pub chunks: u64,
    /// Rows compared (source side).
    pub rows: u64,
    /// The consistent points, one per round (none under a fence).
    pub points: Vec<BinlogPosition>,
    /// Longest the source's tables were locked to open a round's snapshots.
    pub max_lock_millis: u64,
    /// Wall time.
    pub millis: u64,
    /// Chunks that differ (at most [`MAX_DIFFERENCES`]).
    pub differences: Vec<ChunkDifference>,
}

/// The coordinator's idle limit while it holds the momentary lock.
pub const LOCK_SESSION_IDLE_SECS: u64 = 10;

/// Attempts at the momentary lock before a round gives up.
pub const LOCK_ATTEMPTS: u32 = 10;

/// Comparison stops after this many differing chunks.
pub const MAX_DIFFERENCES: usize = 10;

/// Where one table's comparison stands.
struct Cursor {
    pair: TablePair,
    columns: Vec<statements::HashedColumn>,
    pk: Vec<Ident>,
    /// The last chunk's upper bound; None before the first.
    after: Option<Vec<Value>>,
    done: bool,
}

/// A pair of snapshots, one per side.
struct Worker {
    source: Server,
    target: Server,
}

fn connect(spec: &ConnectSpec) -> Result<Server> {
    let mut s = Server::connect(spec)?;
    s.set_purpose(Purpose::Verify);
    s.exec(&statements::session_utc())?;
    Ok(s)
}

fn open_snapshot(s: &mut Server) -> Result<()> {
    s.exec(&statements::repeatable_read())?;
    s.exec(&statements::start_consistent_snapshot())
}

/// Compares `tables` between `source` and `target`. With `channel`, each round holds it
/// at a consistent point through `hold`, which sends the change to the target (and
/// returns once done); without, the data must stand still (fenced, or one node).
pub fn verify(
    source: &ConnectSpec,
    target: &ConnectSpec,
    tables: &[TablePair],
    channel: Option<&Channel>,
    opts: &VerifyOptions,
    hold: &mut dyn FnMut(Hold) -> Result<()>,
) -> Result<VerifyReport> {
    let started = Instant::now();
    let mut report = VerifyReport {
        tables: tables.len(),
        ..Default::default()
    };
    let mut catalog = connect(source)?;
    let mut cursors = Vec::new();
    for pair in tables {
        let columns = read_hashed_columns(&mut catalog, &pair.source_schema, &pair.source_table)?;
        if columns.is_empty() {
            return Err(Error::Refused(format!(
                "verification: {}.{} has no columns on the source (was it dropped?)",
                pair.source_schema, pair.source_table
            )));
        }
        let pk = catalog.primary_key(&pair.source_schema, &pair.source_table)?;
        cursors.push(Mutex::new(Cursor {
            pair: pair.clone(),
            columns,
            pk,
            after: None,
            done: false,
        }));
    }
    drop(catalog);
    let workers = opts.workers.clamp(1, 64);
    while cursors.iter().any(|c| !c.lock().expect("cursor lock").done) {
        crate::signal::check()?;
        let (mut pool, point, lock_millis) =
            open_round(source, target, tables, channel, workers, opts, hold)?;
        report.max_lock_millis = report.max_lock_millis.max(lock_millis);
        report.points.extend(point);
        let deadline = Instant::now() + Duration::from_secs(opts.max_snapshot_secs.max(1));
        let (chunks, rows, diffs) = compare_round(&mut pool, &cursors, opts.chunk_rows, deadline)?;
        report.chunks += chunks;
        report.rows += rows;
        report.differences.extend(diffs);
        for w in &mut pool {
            // The snapshots end; a broken connection ends them too.
            let _ = w.source.exec(&statements::commit());
            let _ = w.target.exec(&statements::commit());
        }
        if report.differences.len() >= MAX_DIFFERENCES {
            break;
        }
    }
    report.differences.truncate(MAX_DIFFERENCES);
    report.millis = started.elapsed().as_millis() as u64;
    Ok(report)
}

/// Opens `workers` snapshot pairs at one consistent point; returns them, the point (when
/// a channel was held) and how long the source's tables were locked.
fn open_round(
    source: &ConnectSpec,
    target: &ConnectSpec,
    tables: &[TablePair],
    channel: Option<&Channel>,
    workers: usize,
    opts: &VerifyOptions,
    hold: &mut dyn FnMut(Hold) -> Result<()>,
) -> Result<(Vec<Worker>, Option<BinlogPosition>, u64)> {
    let mut sources: Vec<Server> = (0..workers)
        .map(|_| connect(source))
        .collect::<Result<_>>()?;
    let mut targets: Vec<Server> = (0..workers)
        .map(|_| connect(target))
        .collect::<Result<_>>()?;
    let Some(channel) = channel else {
        for s in sources.iter_mut().chain(targets.iter_mut()) {
            open_snapshot(s)?;
        }
        let pool = sources
            .into_iter()
            .zip(targets)
            .map(|(source, target)| Worker { source, target })
            .collect();
        return Ok((pool, None, 0));
    };
    hold(Hold::Pause)?;
    let opened = (|| {
        // The source's point: nothing writes to the compared tables while the snapshots
        // open and the position is read.
        let mut coordinator = connect(source)?;
        coordinator.exec(&statements::lock_wait_timeout(opts.lock_wait_secs))?;
        // Should this process stall or lose its network while it holds the lock, the
        // server ends the session (and the lock) within seconds, not hours.
        coordinator.exec(&statements::session_wait_timeout(LOCK_SESSION_IDLE_SECS))?;
        let list: Vec<(&Ident, &Ident)> = tables
            .iter()
            .map(|t| (&t.source_schema, &t.source_table))
            .collect();
        let mut attempt = 0;
        let locked = loop {
            crate::signal::check()?;
            let started = Instant::now();
            match statements::lock_tables_read(&list).map(|lock| coordinator.exec(&lock)) {
                None | Some(Ok(())) => break started,
                Some(Err(e)) if attempt + 1 < LOCK_ATTEMPTS && e.is_lock_wait_timeout() => {
                    attempt += 1;
                    std::thread::sleep(Duration::from_millis(200 * u64::from(attempt)));
                }
                Some(Err(e)) => return Err(e),
            }
        };
        let at_point = (|| {
            for s in sources.iter_mut() {
                open_snapshot(s)?;
            }
            coordinator.coordinates()
        })();
        let unlocked = coordinator.exec(&statements::unlock_tables());
        let lock_millis = locked.elapsed().as_millis() as u64;
        let point = at_point?.position;
        unlocked?;
        hold(Hold::RunUntil(point.clone()))?;
        if !opts.point_reached_by_hold {
            wait_until_at(&mut connect(target)?, channel, &point, opts)?;
        }
        for t in targets.iter_mut() {
            open_snapshot(t)?;
        }
        Ok::<_, Error>((point, lock_millis))
    })();
    // Released whatever happened: a failed round must not leave the channel stopped.
    let released = hold(Hold::Release);
    let (point, lock_millis) = opened?;
    released?;
    let pool = sources
        .into_iter()
        .zip(targets)
        .map(|(source, target)| Worker { source, target })
        .collect();
    Ok((pool, Some(point), lock_millis))
}

/// Waits until the channel's applier has applied exactly up to `point`. It cannot go past
/// it (it runs `UNTIL` there), so once it is there the target stands at the point.
fn wait_until_at(
    target: &mut Server,
    channel: &Channel,
    point: &BinlogPosition,
    opts: &VerifyOptions,
) -> Result<()> {
    let deadline = Instant::now() + Duration::from_secs(opts.reach_timeout_secs.max(1));
    loop {
        crate::signal::check()?;
        let status = target.channel_status(channel)?.ok_or_else(|| {
            Error::server(target.name(), format!("channel {channel} disappeared"))
        })?;
        if let Some(e) = status.last_error() {
            return Err(Error::server(
                target.name(),
                format!("channel {channel}: {e}"),
            ));
        }
        match &status.executed {
            Some(at) if at == point => return Ok(()),
            Some(at) if at > point => {
                return Err(Error::Internal(format!(
                    "channel {channel} applied past the consistent point {point} (at {at})"
                )))
            }
            _ => {}
        }
        if Instant::now() >= deadline {
            // Not a timeout of the operation (which would discard the copy): the copy is
            // sound, the verification is simply tried again by `resume`.
            return Err(Error::Refused(format!(
                "verification: the target did not reach the consistent point {point} within {}s (applied up to {}); `resume` verifies again",
                opts.reach_timeout_secs,
                status
                    .executed
                    .map(|p| p.to_string())
                    .unwrap_or_else(|| "nothing".into())
            )));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Runs the workers over the chunks until all are compared, a difference limit is hit or
/// `deadline` passes. Returns chunks and rows compared and the differences found.
fn compare_round(
    pool: &mut [Worker],
    cursors: &[Mutex<Cursor>],
    chunk_rows: u64,
    deadline: Instant,
) -> Result<(u64, u64, Vec<ChunkDifference>)> {
    let chunks = AtomicU64::new(0);
    let rows = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let diffs: Mutex<Vec<ChunkDifference>> = Mutex::new(Vec::new());
    let first_error: Mutex<Option<Error>> = Mutex::new(None);
    let interrupt = crate::signal::scope();
    std::thread::scope(|scope| {
        for (n, w) in pool.iter_mut().enumerate() {
            let (chunks, rows, stop, diffs, first_error) =
                (&chunks, &rows, &stop, &diffs, &first_error);
            let interrupt = interrupt.clone();
            scope.spawn(move || {
                crate::signal::with_scope(interrupt, || {
                    let mut next = n;
                    loop {
                        if stop.load(Ordering::SeqCst)
                            || Instant::now() >= deadline
                            || crate::signal::check().is_err()
                        {
                            return;
                        }
                        let Some(found) = (0..cursors.len())
                            .map(|i| (next + i) % cursors.len())
                            .find(|&i| !cursors[i].lock().expect("cursor lock").done)
                        else {
                            return;
                        };
                        next = found + 1;
                        match compare_next_chunk(w, &cursors[found], chunk_rows) {
                            Ok(None) => {}
                            Ok(Some((n_rows, diff))) => {
                                chunks.fetch_add(1, Ordering::SeqCst);
                                rows.fetch_add(n_rows, Ordering::SeqCst);
                                if let Some(d) = diff {
                                    let mut all = diffs.lock().expect("differences");
                                    all.push(d);
                                    if all.len() >= MAX_DIFFERENCES {
                                        stop.store(true, Ordering::SeqCst);
                                    }
                                }
                            }
                            Err(e) => {
                                stop.store(true, Ordering::SeqCst);
                                first_error.lock().expect("error slot").get_or_insert(e);
                                return;
                            }
                        }
                    }
                })
            });
        }
    });
    if let Some(e) = first_error.into_inner().expect("error slot") {
        return Err(e);
    }
    crate::signal::check()?;
    Ok((
        chunks.into_inner(),
        rows.into_inner(),
        diffs.into_inner().expect("differences"),
    ))
}

fn literal(values: &Option<Vec<Value>>, open: &str) -> String {
    match values {
        None => open.to_string(),
        Some(v) if v.len() == 1 => v[0].as_sql(false),
        Some(v) => format!(
            "({})",
            v.iter()
                .map(|x| x.as_sql(false))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// Claims the next chunk of a table (its bounds read on this worker's source snapshot)
/// and compares it on both sides. None when another worker took the table's last chunk.
fn compare_next_chunk(
    w: &mut Worker,
    cursor: &Mutex<Cursor>,
    chunk_rows: u64,
) -> Result<Option<(u64, Option<ChunkDifference>)>> {
    let (pair, columns, pk, after, up_to) = {
        let mut c = cursor.lock().expect("cursor lock");
        if c.done {
            return Ok(None);
        }
        let up_to: Option<Vec<Value>> = if c.pk.is_empty() {
            None
        } else {
            w.source
                .rows(&statements::chunk_upper_bound(
                    &c.pair.source_schema,
                    &c.pair.source_table,
                    &c.pk,
                    c.after.as_deref(),
                    chunk_rows,
                ))?
                .into_iter()
                .next()
                .map(|r| r.unwrap())
        };
        let after = c.after.clone();
        match &up_to {
            Some(v) => c.after = Some(v.clone()),
            None => c.done = true,
        }
        (
            c.pair.clone(),
            c.columns.clone(),
            c.pk.clone(),
            after,
            up_to,
        )
    };
    let sum = |s: &mut Server,
               schema: &Ident,
               table: &Ident,
               extra: Option<&statements::Condition>|
     -> Result<ChunkSum> {
        let st = statements::chunk_checksum(
            schema,
            table,
            &columns,
            &pk,
            after.as_deref(),
            up_to.as_deref(),
            extra,
        );
        chunk_sum(s, &st)
    };
    let a = sum(
        &mut w.source,
        &pair.source_schema,
        &pair.source_table,
        pair.source_filter.as_ref(),
    )?;
    let b = sum(
        &mut w.target,
        &pair.target_schema,
        &pair.target_table,
        pair.target_filter.as_ref(),
    )?;
    let diff = (a != b).then(|| ChunkDifference {
        table: pair.name(),
        after: literal(&after, "-inf"),
        up_to: literal(&up_to, "+inf"),
        source: a,
        target: b,
    });
    Ok(Some((a.rows, diff)))
}

/// The statements that hold a channel's applier for a round (built by the dialect).
pub fn hold_statements(
    dialect: &crate::server::Dialect,
    channel: &Channel,
    hold: &Hold,
) -> Result<Vec<Stmt>> {
    Ok(match hold {
        Hold::Pause => vec![dialect.stop_applier(channel)],
        Hold::RunUntil(pos) => vec![dialect.start_applier_until(channel, pos)?],
        // A plain START would leave the UNTIL condition of a running applier in place.
        Hold::Release => vec![
            dialect.stop_applier(channel),
            dialect.start_channel(channel),
        ],
    })
}
