//! The in-process copy. One consistent snapshot: a coordinator takes `LOCK TABLES ... READ`
//! on the shard's tables only (other shards keep writing), opens a consistent-snapshot
//! transaction on every reader, reads the binary-log coordinates, and unlocks — the lock
//! lasts milliseconds.
//!
//! Then `workers` lanes, each a reader on the source and a writer on the target: a lane takes
//! the next table (biggest first), its reader streams it in primary-key order and its writer
//! loads it (`LOAD DATA LOCAL INFILE` from memory in batches of at most `batch_bytes` /
//! `10 × batch_rows` rows, else multi-row INSERTs of bound values). Tables load in parallel;
//! one table is written by one session, in key order, so its clustered index fills at the end
//! instead of splitting pages between interleaved ranges.
//!
//! Secondary indexes are left out during the load and added back afterwards
//! ([`deferrable_indexes`]; as myloader's optimize-keys and Spirit's deferred indexes do): a
//! table is created with its exact definition, its plain `KEY` / `UNIQUE KEY` indexes dropped
//! while it is empty, and once its rows are in, one `ALTER TABLE ... ADD` replays their
//! definitions as the source's `SHOW CREATE TABLE` shows them (a sorted build each, on an
//! index-builder connection, while other tables still load). Maintaining them row by row is
//! what collapsed past the buffer pool (issue 12): inserts into a secondary index arrive in
//! random order, and once the indexes of the tables loading at once outgrow the pool, each
//! insert reads a page from disk (a 4 M-row shard with a 64 MiB pool: 385,000 page reads on
//! the target against 760 at 1 M rows). The verify step compares every definition afterwards.
//!
//! Writer sessions run with `foreign_key_checks = 0` and `unique_checks = 0`. Both are safe
//! here because the rows come from one consistent snapshot of a source where the constraints
//! held: foreign keys are not checked because tables load in any order (a child before its
//! parent); unique checks are relaxed only for unique indexes that stay in place during the
//! load (a deferred unique index is checked in full when it is added back). On MariaDB they also
//! let the first insert into an empty table take the table-level bulk path.
//!
//! An interrupt (Ctrl-C, SIGTERM) is noticed between batches by readers and writers; a
//! watcher also kills the readers' running SELECTs and the index builds (`KILL QUERY`),
//! because abandoning a streamed result would otherwise read the rest of the table first.
//! An interrupted copy leaves a partial target schema, which `resume` drops and copies again,
//! as before.
//!
//! Operator control ([`crate::control`]): a writer parks before its next batch while the
//! operation is paused (`shardctl pause`), and so does an index builder before its next
//! build (one already running finishes first); a reader then stops at the next full channel,
//! its streamed SELECT and its snapshot held open — no table lock, but the readers'
//! transactions keep their read view and the metadata locks of the tables they have read,
//! as they do for the whole copy. Every copy session allows [`statements::COPY_PAUSE_SECS`]
//! of silence. `shardctl throttle --workers N` is applied as lanes finish a table: a lane
//! numbered N or above takes no new table while the limit stands (the lanes are opened
//! when the copy starts, so a limit above their number changes nothing for this copy).

use super::connect_for_copy;
use super::objects::{self, SchemaObjects};
use super::{CopyReport, SchemaPair};
use crate::error::{Error, Result};
use crate::ident::Ident;
use crate::output::log;
use crate::server::{statements, ConnectSpec, Server};
use mysql::Value;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

pub use super::Progress;

/// Tuning of the native copy.
#[derive(Debug, Clone, Copy)]
pub struct NativeOptions {
    /// Reader connections on the source, and writer connections on the target.
    pub workers: usize,
    /// Most rows per multi-row INSERT (spatial or BIT columns, or no LOCAL INFILE); ten
    /// times as many per LOAD DATA.
    pub batch_rows: usize,
    /// Bytes per LOAD DATA statement (and at most per multi-row INSERT, which also stays
    /// below a quarter of the target's `max_allowed_packet`).
    pub batch_bytes: usize,
    /// Longest wait for the short table lock, seconds.
    pub lock_wait_secs: u32,
    /// Load each table without its secondary indexes and add them afterwards.
    pub defer_indexes: bool,
    /// Create no trigger on the target (a change stream will apply the rows the source's
    /// triggers write: the caller creates them once it stopped).
    pub without_triggers: bool,
}

impl Default for NativeOptions {
    fn default() -> Self {
        NativeOptions {
            workers: 4,
            batch_rows: 1000,
            batch_bytes: 4 << 20,
            lock_wait_secs: 10,
            defer_indexes: true,
            without_triggers: false,
        }
    }
}

/// One table to copy.
#[derive(Debug, Clone)]
struct TableJob {
    from_schema: Ident,
    to_schema: Ident,
    table: Ident,
    columns: Arc<Vec<Ident>>,
    /// For each column: a YEAR, written with four digits.
    years: Arc<Vec<bool>>,
    order_by: Vec<Ident>,
    /// Load with LOAD DATA LOCAL INFILE (no spatial or BIT columns, and the target allows it).
    load_data: bool,
    /// information_schema's estimate of its rows.
    estimate: u64,
    /// Secondary indexes left out during the load, added back after it.
    deferred: Option<DeferredIndexes>,
    /// Only the rows this matches (a key move's).
    filter: Option<statements::Condition>,
}

/// Column types LOAD DATA cannot take as the bytes the binary protocol returns.
const NOT_LOADABLE: [&str; 9] = [
    "geometry",
    "point",
    "linestring",
    "polygon",
    "multipoint",
    "multilinestring",
    "multipolygon",
    "geometrycollection",
    "bit",
];

fn push_escaped(out: &mut Vec<u8>, bytes: &[u8]) {
    for &b in bytes {
        match b {
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\t' => out.extend_from_slice(b"\\t"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            0 => out.extend_from_slice(b"\\0"),
            _ => out.push(b),
        }
    }
}

/// One value in LOAD DATA's tab-separated form; `year` for a YEAR column (LOAD DATA reads
/// `0` as 2000, `0000` as 0000).
fn push_field(out: &mut Vec<u8>, v: &Value, year: bool) {
    use std::io::Write;
    let _ = match v {
        Value::Int(i) if year => write!(out, "{i:04}"),
        Value::UInt(u) if year => write!(out, "{u:04}"),
        Value::NULL => {
            out.extend_from_slice(b"\\N");
            Ok(())
        }
        Value::Bytes(b) => {
            push_escaped(out, b);
            Ok(())
        }
        Value::Int(i) => write!(out, "{i}"),
        Value::UInt(u) => write!(out, "{u}"),
        // The server reads a number's text as the nearest double, and a FLOAT column then
        // rounds that double to a float: the float's own shortest text would be rounded
        // twice. The double it widens to is written instead: its shortest text reads back
        // as that very double, which the float holds exactly, so nothing is rounded.
        Value::Float(f) => write!(out, "{:e}", f64::from(*f)),
        Value::Double(d) => write!(out, "{d:e}"),
        Value::Date(y, mo, d, h, mi, s, us) => {
            if (*h, *mi, *s, *us) == (0, 0, 0, 0) {
                write!(out, "{y:04}-{mo:02}-{d:02}")
            } else if *us == 0 {
                write!(out, "{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02}")
            } else {
                write!(out, "{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02}.{us:06}")
            }
        }
        Value::Time(neg, days, h, mi, s, us) => {
            let hours = u64::from(*days) * 24 + u64::from(*h);
            let sign = if *neg { "-" } else { "" };
            write!(out, "{sign}{hours:02}:{mi:02}:{s:02}.{us:06}")
        }
    };
}

/// A batch as LOAD DATA input; `years` marks the YEAR columns.
#[cfg(test)]
fn tsv(rows: &[Vec<Value>], years: &[bool]) -> Vec<u8> {
    let mut out = Vec::with_capacity(rows.len() * 64);
    for row in rows {
        push_row(&mut out, row, years);
    }
    out
}

/// What a reader hands its lane's writer.
enum Msg {
    /// LOAD DATA input for the table (`rows` rows).
    Tsv {
        job: Arc<TableJob>,
        data: Vec<u8>,
        rows: u64,
    },
    /// Rows for a multi-row INSERT.
    Rows {
        job: Arc<TableJob>,
        rows: Vec<Vec<Value>>,
    },
    /// Every row of the table has been sent.
    End(Arc<TableJob>),
}

/// Decrements a counter when dropped.
struct CountDown<'a>(&'a AtomicUsize);

impl Drop for CountDown<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Bytes of row data in a batch written with INSERT (an approximation of the wire size).
fn value_bytes(rows: &[Vec<Value>]) -> u64 {
    rows.iter().map(|r| row_bytes(r)).sum()
}

fn row_bytes(row: &[Value]) -> u64 {
    row.iter()
        .map(|v| match v {
            Value::NULL => 0,
            Value::Bytes(b) => b.len() as u64,
            Value::Float(_) => 4,
            _ => 8,
        })
        .sum()
}

/// Appends one row to LOAD DATA input.
fn push_row(out: &mut Vec<u8>, row: &[Value], years: &[bool]) {
    for (i, v) in row.iter().enumerate() {
        if i > 0 {
            out.push(b'\t');
        }
        push_field(out, v, years.get(i).copied().unwrap_or(false));
    }
    out.push(b'\n');
}

/// A table's secondary indexes that the copy loads the table without and adds back
/// afterwards, exactly as the source shows them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeferredIndexes {
    /// Their names, in the order `SHOW CREATE TABLE` lists them.
    pub names: Vec<Ident>,
    /// Their definitions as `SHOW CREATE TABLE` shows them (`KEY `k_1` (`k`)`), same order.
    pub clauses: Vec<String>,
}

/// The name in a back-quoted identifier at the start of `text` (`` `a``b` `` is a`b).
fn backquoted(text: &str) -> Option<String> {
    let rest = text.strip_prefix('`')?;
    let mut name = String::new();
    let mut chars = rest.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '`' {
            if chars.peek() == Some(&'`') {
                chars.next();
                name.push('`');
            } else {
                return Some(name);
            }
        } else {
            name.push(c);
        }
    }
    None
}

/// The secondary indexes of `table` (its `SHOW CREATE TABLE` text `ddl`) that the copy can
/// leave out during the load and add back with the very same definitions; `None` when the
/// table must be loaded with every index in place. `all_ddls` are the definitions of every
/// table the copy creates (to see foreign keys pointing at this one).
///
/// Only plain B-tree `KEY` and `UNIQUE KEY` indexes of an InnoDB table with a primary key
/// are deferred, and then all of them, so the `ALTER TABLE ... ADD` puts them back in the
/// order they had (the server orders indexes by kind, then by the order they were given).
/// Kept in place: any table with a foreign key, referenced by one, partitioned, system-versioned
/// or with application-time periods; any table with a FULLTEXT, SPATIAL or other kind of
/// index, a `USING HASH` unique key, an index name outside `[A-Za-z0-9_$]`, or an
/// AUTO_INCREMENT column that does not lead the primary key (it needs its index during the
/// load). The verify step compares the definitions afterwards whatever this decides.
pub fn deferrable_indexes(table: &Ident, ddl: &str, all_ddls: &[&str]) -> Option<DeferredIndexes> {
    if !ddl.contains(") ENGINE=InnoDB") {
        return None;
    }
    if [
        "FOREIGN KEY",
        "PARTITION BY",
        "WITH SYSTEM VERSIONING",
        "WITHOUT OVERLAPS",
        "PERIOD FOR",
    ]
    .iter()
    .any(|w| ddl.contains(w))
    {
        return None;
    }
    let me = format!("`{}`", table.as_str().to_ascii_lowercase());
    let referenced = all_ddls.iter().flat_map(|d| d.lines()).any(|l| {
        l.find(" REFERENCES ")
            .is_some_and(|i| l[i..].to_ascii_lowercase().contains(&me))
    });
    if referenced {
        return None;
    }
    let mut out = DeferredIndexes::default();
    let mut primary_first: Option<String> = None;
    let mut auto_increment: Option<String> = None;
    for line in ddl.lines() {
        let Some(body) = line.strip_prefix("  ") else {
            continue;
        };
        let clause = body.strip_suffix(',').unwrap_or(body);
        if body.starts_with('`') {
            // A column; its definition after the name.
            let name = backquoted(body)?;
            if body[name.len() + 2..].contains(" AUTO_INCREMENT") {
                auto_increment = Some(name);
            }
        } else if let Some(cols) = body.strip_prefix("PRIMARY KEY (") {
            primary_first = Some(backquoted(cols)?);
        } else if let Some(rest) = body
            .strip_prefix("KEY ")
            .or_else(|| body.strip_prefix("UNIQUE KEY "))
        {
            if clause.contains(" USING HASH") {
                return None;
            }
            let name = Ident::new("index", &backquoted(rest)?).ok()?;
            out.names.push(name);
            out.clauses.push(clause.to_string());
        } else if body.starts_with("CONSTRAINT ") && body.contains(" CHECK (") {
            // A check constraint: no index.
        } else {
            // FULLTEXT, SPATIAL, or anything not known here.
            return None;
        }
    }
    primary_first.as_ref()?;
    if auto_increment.is_some() && auto_increment != primary_first {
        return None;
    }
    (!out.names.is_empty()).then_some(out)
}

/// Copies `pairs` from `source` to `target`. Target schemas must not exist. Returns the
/// coordinates the copy is consistent with.
pub fn copy(
    source: &ConnectSpec,
    target: &ConnectSpec,
    pairs: &[SchemaPair],
    opts: NativeOptions,
    progress: &Progress,
) -> Result<CopyReport> {
    copy_inner(source, target, pairs, opts, progress, None, &[])
}

/// A merge's copy: the rows of `tables` (in every schema of `pairs`) appended to the
/// existing tables of the target schemas, which must be defined the same way; no table or
/// other object is created. The writers pass the target's split guards (as a prune does).
pub fn copy_rows_into(
    source: &ConnectSpec,
    target: &ConnectSpec,
    pairs: &[SchemaPair],
    tables: &[Ident],
    opts: NativeOptions,
    progress: &Progress,
) -> Result<CopyReport> {
    copy_inner(source, target, pairs, opts, progress, Some(tables), &[])
}

/// A key move's copy: like [`copy_rows_into`], but of each listed table only the rows its
/// condition matches (the keys that move), as (table, condition).
pub fn copy_rows_where(
    source: &ConnectSpec,
    target: &ConnectSpec,
    pairs: &[SchemaPair],
    filters: &[(Ident, statements::Condition)],
    opts: NativeOptions,
    progress: &Progress,
) -> Result<CopyReport> {
    let tables: Vec<Ident> = filters.iter().map(|(t, _)| t.clone()).collect();
    copy_inner(
        source,
        target,
        pairs,
        opts,
        progress,
        Some(&tables),
        filters,
    )
}

fn copy_inner(
    source: &ConnectSpec,
    target: &ConnectSpec,
    pairs: &[SchemaPair],
    opts: NativeOptions,
    progress: &Progress,
    into: Option<&[Ident]>,
    filters: &[(Ident, statements::Condition)],
) -> Result<CopyReport> {
    let started = Instant::now();
    let control = crate::control::current();
    let control = control.as_deref();
    // Lanes for the larger of the playbook's workers and a live limit set before the copy.
    let live_workers = control.and_then(|c| c.limits().workers).unwrap_or(0) as usize;
    let workers = opts.workers.max(live_workers).max(1);
    let mut coordinator = connect_for_copy(source)?;
    coordinator.exec(&statements::copy_pausable_session())?;
    let mut tgt = connect_for_copy(target)?;
    tgt.exec(&statements::copy_pausable_session())?;
    let local_infile = tgt
        .first::<u8>(&statements::local_infile_enabled())?
        .unwrap_or(0)
        == 1;
    // A multi-row INSERT stays well below the target's largest packet.
    let max_packet = tgt
        .first::<u64>(&statements::max_allowed_packet())?
        .unwrap_or(1 << 20);
    let insert_bytes = (max_packet / 4).clamp(64 << 10, opts.batch_bytes.max(1) as u64);
    let mut all_objects: Vec<SchemaObjects> = Vec::new();
    for pair in pairs {
        all_objects.push(objects::read(&mut coordinator, pair)?);
    }
    let all_ddls: Vec<&str> = all_objects
        .iter()
        .flat_map(|o| o.tables.iter().map(|(_, ddl)| ddl.as_str()))
        .collect();
    let mut jobs: Vec<TableJob> = Vec::new();
    let mut estimate = 0u64;
    for (pair, objs) in pairs.iter().zip(&all_objects) {
        let sizes = coordinator.table_rows(&pair.from)?;
        for t in objects::base_tables(objs) {
            if into.is_some_and(|only| !only.contains(&t.name)) {
                continue;
            }
            let columns = coordinator.writable_columns(&pair.from, &t.name)?;
            let year_columns = coordinator.year_columns(&pair.from, &t.name)?;
            let years = columns.iter().map(|c| year_columns.contains(c)).collect();
            let order_by = coordinator.primary_key(&pair.from, &t.name)?;
            let types = coordinator.column_types(&pair.from, &t.name)?;
            // Into a merge survivor's existing tables rows go by plain INSERT: a duplicate
            // key (ids the two shards both handed out) then fails the copy, where LOAD DATA
            // LOCAL would skip the row silently and the channel would later apply the
            // retired shard's changes of it to the survivor's own row.
            let load_data = local_infile
                && into.is_none()
                && !types.iter().any(|t| NOT_LOADABLE.contains(&t.as_str()));
            let rows = sizes.get(t.name.as_str()).copied().unwrap_or(0);
            // Rows copied into a merge survivor's existing tables: its indexes stay.
            let deferred = if opts.defer_indexes && into.is_none() {
                objs.tables
                    .iter()
                    .find(|(name, _)| *name == t.name)
                    .and_then(|(_, ddl)| deferrable_indexes(&t.name, ddl, &all_ddls))
            } else {
                None
            };
            estimate += rows;
            let filter = filters
                .iter()
                .find(|(name, _)| *name == t.name)
                .map(|(_, c)| c.clone());
            jobs.push(TableJob {
                from_schema: pair.from.clone(),
                to_schema: pair.to.clone(),
                table: t.name,
                columns: Arc::new(columns),
                years: Arc::new(years),
                order_by,
                load_data,
                estimate: rows,
                deferred,
                filter,
            });
        }
    }
    progress.begin(estimate);
    for (pair, objs) in pairs.iter().zip(&all_objects).filter(|_| into.is_none()) {
        objects::create_tables(&mut tgt, pair, objs)?;
    }
    for j in &jobs {
        if let Some(d) = &j.deferred {
            tgt.exec(&statements::drop_indexes(&j.to_schema, &j.table, &d.names))?;
        }
    }
    // Biggest tables first so the tail is short.
    jobs.sort_by_key(|j| std::cmp::Reverse(j.estimate));
    let lanes = workers.min(jobs.len()).max(1);
    let indexers = lanes.min(jobs.iter().filter(|j| j.deferred.is_some()).count());

    // The consistent snapshot, under a lock on this shard's tables only.
    let mut readers: Vec<Server> = (0..lanes)
        .map(|_| connect_for_copy(source))
        .collect::<Result<_>>()?;
    let reader_ids: Vec<u64> = readers
        .iter_mut()
        .map(|r| {
            // Values as stored (each string in its column's character set), timestamps
            // in UTC: the writers take them as they come.
            r.exec(&statements::copy_reader_session())?;
            r.exec(&statements::copy_pausable_session())?;
            r.first::<u64>(&statements::connection_id())
                .map(|id| id.unwrap_or(0))
        })
        .collect::<Result<_>>()?;
    coordinator.exec(&statements::lock_wait_timeout(opts.lock_wait_secs.into()))?;
    let lock_list: Vec<(&Ident, &Ident)> =
        jobs.iter().map(|j| (&j.from_schema, &j.table)).collect();
    let lock_started = Instant::now();
    if let Some(lock) = statements::lock_tables_read(&lock_list) {
        coordinator.exec(&lock)?;
    }
    let snapshot = (|| {
        for r in &mut readers {
            r.exec(&statements::repeatable_read())?;
            r.exec(&statements::start_consistent_snapshot())?;
        }
        coordinator.coordinates()
    })();
    let unlock = coordinator.exec(&statements::unlock_tables());
    let coordinates = snapshot?;
    unlock?;
    log(
        1,
        &format!(
            "snapshot at {} (tables locked {} ms)",
            coordinates.position,
            lock_started.elapsed().as_millis()
        ),
    );

    let queue = Mutex::new(jobs.into_iter().collect::<VecDeque<_>>());
    let failed = AtomicBool::new(false);
    let first_error: Mutex<Option<Error>> = Mutex::new(None);
    let fail = |e: Error| {
        failed.store(true, Ordering::SeqCst);
        let mut slot = first_error.lock().expect("error slot");
        if slot.is_none() {
            *slot = Some(e);
        }
    };
    let mut writers: Vec<Server> = (0..lanes)
        .map(|_| connect_for_copy(target))
        .collect::<Result<_>>()?;
    for w in &mut writers {
        if into.is_some() {
            w.exec(&statements::merge_into_session())?;
        } else {
            w.exec(&statements::bulk_load_session())?;
        }
        w.exec(&statements::copy_writer_session())?;
        w.exec(&statements::copy_pausable_session())?;
        if into.is_some() {
            w.exec(&statements::mark_pruning_session())?;
        }
    }
    // Index builders: sessions like the one that created the tables (the clauses are
    // replayed as that one replayed the definitions).
    let mut builders: Vec<Server> = (0..indexers)
        .map(|_| super::connect_for_long_statements(target))
        .collect::<Result<_>>()?;
    let builder_ids: Vec<u64> = builders
        .iter_mut()
        .map(|b| {
            b.exec(&statements::copy_pausable_session())?;
            b.first::<u64>(&statements::connection_id())
                .map(|id| id.unwrap_or(0))
        })
        .collect::<Result<_>>()?;
    let (index_tx, index_rx) = mpsc::channel::<Arc<TableJob>>();
    let index_rx = Mutex::new(index_rx);
    let tables_done = AtomicU64::new(0);
    // Readers and index builders still running: the watcher stops when none is.
    let running = AtomicUsize::new(readers.len() + builders.len());
    // The operation's stop flag reaches every worker (see `signal::with_scope`).
    let op_scope = crate::signal::scope();
    let op_scope = &op_scope;
    let batch_bytes = opts.batch_bytes.max(1);
    std::thread::scope(|s| {
        // The watcher: on an interrupt or a failure, stop the readers' SELECTs on the
        // source and the index builds on the target (repeatedly, in case one was between
        // tables) until all have ended.
        {
            let (failed, fail, running) = (&failed, &fail, &running);
            let (coordinator, reader_ids) = (&mut coordinator, &reader_ids);
            let (tgt, builder_ids) = (&mut tgt, &builder_ids);
            s.spawn(move || {
                crate::signal::enter_scope(op_scope.clone());
                let mut last_kill: Option<Instant> = None;
                while running.load(Ordering::SeqCst) > 0 {
                    if crate::signal::interrupted() {
                        fail(Error::Interrupted);
                    }
                    if failed.load(Ordering::SeqCst)
                        && last_kill.is_none_or(|t| t.elapsed() >= Duration::from_millis(500))
                    {
                        for id in reader_ids.iter().filter(|id| **id > 0) {
                            let _ = coordinator.exec(&statements::kill_query(*id));
                        }
                        for id in builder_ids.iter().filter(|id| **id > 0) {
                            let _ = tgt.exec(&statements::kill_query(*id));
                        }
                        last_kill = Some(Instant::now());
                    }
                    std::thread::sleep(Duration::from_millis(50));
                }
            });
        }
        // Index builders: each table's deferred indexes, once its rows are in.
        for mut b in builders {
            let (index_rx, failed, fail, running) = (&index_rx, &failed, &fail, &running);
            let tables_done = &tables_done;
            s.spawn(move || {
                crate::signal::enter_scope(op_scope.clone());
                let _left = CountDown(running);
                loop {
                    let next = index_rx.lock().expect("index queue").recv();
                    let Ok(job) = next else { break };
                    if failed.load(Ordering::SeqCst) {
                        continue;
                    }
                    let Some(d) = &job.deferred else { continue };
                    // Counted as running until the build ends; parked first while paused.
                    let _busy = control.map(|c| c.participant());
                    if let Some(c) = control {
                        if let Err(e) = c.hold_while(crate::control::Control::pause_requested) {
                            fail(e);
                            continue;
                        }
                    }
                    let t = Instant::now();
                    match b.exec(&statements::add_indexes(
                        &job.to_schema,
                        &job.table,
                        &d.clauses,
                    )) {
                        Ok(()) => {
                            log(
                                2,
                                &format!(
                                    "{}.{}: {} index(es) built in {} ms",
                                    job.to_schema,
                                    job.table,
                                    d.names.len(),
                                    t.elapsed().as_millis()
                                ),
                            );
                            tables_done.fetch_add(1, Ordering::Relaxed);
                        }
                        Err(e) => fail(e),
                    }
                }
            });
        }
        // Lanes: one reader streams a table in primary-key order to its own writer, so each
        // table is written by one session, in key order (pages fill at the end of the
        // clustered index instead of splitting), and tables load in parallel.
        for (lane, (mut r, mut w)) in readers.into_iter().zip(writers).enumerate() {
            let (tx, rx) = mpsc::sync_channel::<Msg>(4);
            let (failed, fail, queue, running) = (&failed, &fail, &queue, &running);
            let (tables_done, index_tx) = (&tables_done, index_tx.clone());
            s.spawn(move || {
                crate::signal::enter_scope(op_scope.clone());
                for msg in rx {
                    if crate::signal::interrupted() {
                        fail(Error::Interrupted);
                    }
                    if failed.load(Ordering::SeqCst) {
                        // Dropping the receiver ends the reader's sends.
                        return;
                    }
                    // A safe point: counted as running while it writes, parked while paused.
                    let _busy = control.map(|c| c.participant());
                    if let Some(c) = control {
                        if let Err(e) = c.hold_while(crate::control::Control::pause_requested) {
                            fail(e);
                            return;
                        }
                    }
                    let (rows, bytes, written) = match msg {
                        Msg::End(job) => {
                            if job.deferred.is_some() {
                                let _ = index_tx.send(job);
                            } else {
                                tables_done.fetch_add(1, Ordering::Relaxed);
                            }
                            continue;
                        }
                        Msg::Tsv { job, data, rows } => {
                            let bytes = data.len() as u64;
                            let load = statements::load_data_local(
                                &job.to_schema,
                                &job.table,
                                &job.columns,
                            );
                            (rows, bytes, w.load_data(&load, data))
                        }
                        Msg::Rows { job, rows } => {
                            let bytes = value_bytes(&rows);
                            let written = w.exec(&statements::insert_values(
                                &job.to_schema,
                                &job.table,
                                &job.columns,
                                &rows,
                            ));
                            (rows.len() as u64, bytes, written)
                        }
                    };
                    match written {
                        Ok(()) => {
                            progress.add(rows, bytes);
                            crate::fault::point("copy");
                        }
                        Err(e) => {
                            fail(e);
                            return;
                        }
                    }
                }
            });
            s.spawn(move || {
                crate::signal::enter_scope(op_scope.clone());
                // Counted down however the reader ends, so the watcher always stops.
                let _left = CountDown(running);
                loop {
                    if failed.load(Ordering::SeqCst) {
                        break;
                    }
                    if crate::signal::interrupted() {
                        fail(Error::Interrupted);
                        break;
                    }
                    // A live `--workers` below this lane's number: no new table meanwhile.
                    let over_limit = || {
                        control
                            .and_then(|c| c.limits().workers)
                            .is_some_and(|w| lane as u64 >= w.max(1))
                    };
                    if over_limit() && !queue.lock().expect("jobs").is_empty() {
                        std::thread::sleep(Duration::from_millis(50));
                        continue;
                    }
                    let Some(job) = queue.lock().expect("jobs").pop_front() else {
                        break;
                    };
                    let job = Arc::new(job);
                    let max_rows = if job.load_data {
                        opts.batch_rows.saturating_mul(10).max(1) as u64
                    } else {
                        (60_000 / job.columns.len().max(1)).clamp(1, opts.batch_rows) as u64
                    };
                    let select = statements::select_table_where(
                        &job.from_schema,
                        &job.table,
                        &job.columns,
                        &job.order_by,
                        job.filter.as_ref(),
                    );
                    let mut tsv_buf: Vec<u8> = Vec::new();
                    let mut rows: Vec<Vec<Value>> = Vec::new();
                    let mut pending = 0u64;
                    let mut pending_bytes = 0u64;
                    let mut read = 0u64;
                    let send = |tx: &mpsc::SyncSender<Msg>, msg: Msg| {
                        tx.send(msg).map_err(|_| Error::Interrupted)
                    };
                    let streamed = r.stream(&select, |row| {
                        if failed.load(Ordering::Relaxed) || crate::signal::interrupted() {
                            return Err(Error::Interrupted);
                        }
                        read += 1;
                        let row = row.unwrap();
                        if job.load_data {
                            if tsv_buf.capacity() == 0 {
                                tsv_buf.reserve(batch_bytes.min(256 << 10));
                            }
                            push_row(&mut tsv_buf, &row, &job.years);
                            pending += 1;
                            if tsv_buf.len() >= batch_bytes || pending >= max_rows {
                                let data = std::mem::take(&mut tsv_buf);
                                send(
                                    &tx,
                                    Msg::Tsv {
                                        job: Arc::clone(&job),
                                        data,
                                        rows: std::mem::take(&mut pending),
                                    },
                                )?;
                            }
                        } else {
                            pending_bytes += row_bytes(&row);
                            rows.push(row);
                            if rows.len() as u64 >= max_rows || pending_bytes >= insert_bytes {
                                pending_bytes = 0;
                                send(
                                    &tx,
                                    Msg::Rows {
                                        job: Arc::clone(&job),
                                        rows: std::mem::take(&mut rows),
                                    },
                                )?;
                            }
                        }
                        Ok(())
                    });
                    let ended = streamed.and_then(|()| {
                        if !tsv_buf.is_empty() {
                            send(
                                &tx,
                                Msg::Tsv {
                                    job: Arc::clone(&job),
                                    data: std::mem::take(&mut tsv_buf),
                                    rows: pending,
                                },
                            )?;
                        }
                        if !rows.is_empty() {
                            send(
                                &tx,
                                Msg::Rows {
                                    job: Arc::clone(&job),
                                    rows: std::mem::take(&mut rows),
                                },
                            )?;
                        }
                        send(&tx, Msg::End(Arc::clone(&job)))
                    });
                    match ended {
                        Ok(()) => progress.correct_estimate(job.estimate, read),
                        Err(e) => {
                            fail(e);
                            break;
                        }
                    }
                }
                let _ = r.exec(&statements::commit());
            });
        }
        drop(index_tx);
    });
    if let Some(e) = first_error.into_inner().expect("error slot") {
        return Err(e);
    }
    crate::signal::check()?;
    progress.finish();
    for (pair, objs) in pairs.iter().zip(&all_objects).filter(|_| into.is_none()) {
        if opts.without_triggers {
            let mut kept = objs.clone();
            kept.after_data.retain(|o| !o.trigger);
            objects::create_after_data(&mut tgt, pair, &kept)?;
        } else {
            objects::create_after_data(&mut tgt, pair, objs)?;
        }
    }
    Ok(CopyReport {
        coordinates: Some(coordinates),
        tables: tables_done.load(Ordering::Relaxed) as usize,
        rows: progress.rows.load(Ordering::Relaxed),
        millis: started.elapsed().as_millis() as u64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SBTEST: &str = "CREATE TABLE `sbtest1` (\n  `id` int(11) NOT NULL AUTO_INCREMENT,\n  `k` int(11) NOT NULL DEFAULT 0,\n  `c` char(120) NOT NULL DEFAULT '',\n  PRIMARY KEY (`id`),\n  UNIQUE KEY `by_c` (`c`),\n  KEY `k_1` (`k`) COMMENT 'a, b'\n) ENGINE=InnoDB AUTO_INCREMENT=5 DEFAULT CHARSET=latin1 COLLATE=latin1_swedish_ci";

    fn id(s: &str) -> Ident {
        Ident::new("t", s).unwrap()
    }

    #[test]
    fn plain_secondary_indexes_are_deferred_with_their_exact_definitions() {
        let d = deferrable_indexes(&id("sbtest1"), SBTEST, &[SBTEST]).unwrap();
        assert_eq!(d.names, vec![id("by_c"), id("k_1")]);
        assert_eq!(
            d.clauses,
            vec![
                "UNIQUE KEY `by_c` (`c`)".to_string(),
                "KEY `k_1` (`k`) COMMENT 'a, b'".to_string()
            ]
        );
        // Only a primary key: nothing to defer.
        let pk_only =
            "CREATE TABLE `t` (\n  `id` int NOT NULL,\n  PRIMARY KEY (`id`)\n) ENGINE=InnoDB";
        assert_eq!(deferrable_indexes(&id("t"), pk_only, &[pk_only]), None);
    }

    #[test]
    fn tables_whose_indexes_must_stay_are_loaded_with_them() {
        let t = id("sbtest1");
        let keep = |ddl: &str| deferrable_indexes(&t, ddl, &[ddl]);
        // No primary key: a unique key may be the clustered index.
        assert_eq!(keep(&SBTEST.replace("  PRIMARY KEY (`id`),\n", "")), None);
        // Another engine, a partitioned table, a FULLTEXT index, a long unique hash key.
        assert_eq!(
            keep(&SBTEST.replace("ENGINE=InnoDB", "ENGINE=MyISAM")),
            None
        );
        assert_eq!(
            keep(&format!(
                "{SBTEST}\n PARTITION BY HASH (`id`)\nPARTITIONS 2"
            )),
            None
        );
        assert_eq!(
            keep(&SBTEST.replace("  KEY `k_1`", "  FULLTEXT KEY `f` (`c`),\n  KEY `k_1`")),
            None
        );
        assert_eq!(
            keep(&SBTEST.replace(
                "UNIQUE KEY `by_c` (`c`)",
                "UNIQUE KEY `by_c` (`c`) USING HASH"
            )),
            None
        );
        // Foreign keys: its own, or another table's pointing at it.
        let child = "CREATE TABLE `child` (\n  `id` int NOT NULL,\n  `p` int NOT NULL,\n  PRIMARY KEY (`id`),\n  KEY `p` (`p`),\n  CONSTRAINT `fk` FOREIGN KEY (`p`) REFERENCES `sbtest1` (`id`)\n) ENGINE=InnoDB";
        assert_eq!(
            deferrable_indexes(&id("child"), child, &[child, SBTEST]),
            None
        );
        assert_eq!(deferrable_indexes(&t, SBTEST, &[child, SBTEST]), None);
        // The AUTO_INCREMENT column leads only a secondary index.
        let ai = "CREATE TABLE `t` (\n  `a` int NOT NULL,\n  `n` int NOT NULL AUTO_INCREMENT,\n  PRIMARY KEY (`a`),\n  KEY `n` (`n`)\n) ENGINE=InnoDB";
        assert_eq!(deferrable_indexes(&id("t"), ai, &[ai]), None);
        // An index name the copy would not quote itself.
        assert_eq!(keep(&SBTEST.replace("`k_1`", "`k-1`")), None);
        // A check constraint is no index: the table still defers.
        let checked = SBTEST.replace(
            "  KEY `k_1` (`k`) COMMENT 'a, b'\n",
            "  KEY `k_1` (`k`) COMMENT 'a, b',\n  CONSTRAINT `pos` CHECK (`k` >= 0)\n",
        );
        assert_eq!(keep(&checked).map(|d| d.names.len()), Some(2));
    }

    #[test]
    fn load_data_input_escapes_what_load_data_unescapes() {
        let rows = vec![vec![
            Value::Int(-5),
            Value::NULL,
            Value::Bytes(b"a\tb\nc\\d\0e\rf".to_vec()),
            Value::Bytes(b"\\N".to_vec()),
            Value::Date(2024, 2, 29, 0, 0, 0, 0),
            Value::Date(2024, 2, 29, 13, 5, 9, 120),
            Value::Time(true, 1, 2, 3, 4, 0),
            Value::Double(0.1),
        ]];
        assert_eq!(
            String::from_utf8(tsv(&rows, &[])).unwrap(),
            "-5\t\\N\ta\\tb\\nc\\\\d\\0e\\rf\t\\\\N\t2024-02-29\t2024-02-29 13:05:09.000120\t-26:03:04.000000\t1e-1\n"
        );
        // YEAR 0 is written 0000 (LOAD DATA reads `0` as 2000), other years as they are.
        let rows = vec![vec![Value::Int(0), Value::Int(0), Value::Int(1901)]];
        assert_eq!(
            String::from_utf8(tsv(&rows, &[true, false, true])).unwrap(),
            "0000\t0\t1901\n"
        );
    }
}
