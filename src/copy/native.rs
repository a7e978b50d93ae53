//! The in-process copy. One consistent snapshot: a coordinator takes `LOCK TABLES ... READ`
//! on the shard's tables only (other shards keep writing), opens a consistent-snapshot
//! transaction on every reader, reads the binary-log coordinates, and unlocks — the lock
//! lasts milliseconds. Readers stream tables in primary-key order through a bounded queue to
//! parallel writers doing multi-row inserts of bound values on the target.
//!
//! An interrupt (Ctrl-C, SIGTERM) is noticed between batches by readers and writers; a
//! watcher also kills the readers' running SELECTs (`KILL QUERY`), because abandoning a
//! streamed result would otherwise read the rest of the table first.

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
    /// Rows per INSERT.
    pub batch_rows: usize,
    /// Longest wait for the short table lock, seconds.
    pub lock_wait_secs: u32,
}

impl Default for NativeOptions {
    fn default() -> Self {
        NativeOptions {
            workers: 4,
            batch_rows: 1000,
            lock_wait_secs: 10,
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
        Value::Float(f) => write!(out, "{f}"),
        Value::Double(d) => write!(out, "{d}"),
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
fn tsv(rows: &[Vec<Value>], years: &[bool]) -> Vec<u8> {
    let mut out = Vec::with_capacity(rows.len() * 64);
    for row in rows {
        for (i, v) in row.iter().enumerate() {
            if i > 0 {
                out.push(b'\t');
            }
            push_field(&mut out, v, years.get(i).copied().unwrap_or(false));
        }
        out.push(b'\n');
    }
    out
}

/// A batch of rows for one table.
struct Batch {
    job: Arc<TableJob>,
    rows: Vec<Vec<Value>>,
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
    rows.iter()
        .flatten()
        .map(|v| match v {
            Value::NULL => 0,
            Value::Bytes(b) => b.len() as u64,
            Value::Float(_) => 4,
            _ => 8,
        })
        .sum()
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
    copy_inner(source, target, pairs, opts, progress, None)
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
    copy_inner(source, target, pairs, opts, progress, Some(tables))
}

fn copy_inner(
    source: &ConnectSpec,
    target: &ConnectSpec,
    pairs: &[SchemaPair],
    opts: NativeOptions,
    progress: &Progress,
    into: Option<&[Ident]>,
) -> Result<CopyReport> {
    let started = Instant::now();
    let workers = opts.workers.max(1);
    let mut coordinator = connect_for_copy(source)?;
    let mut tgt = connect_for_copy(target)?;
    let local_infile = tgt
        .first::<u8>(&statements::local_infile_enabled())?
        .unwrap_or(0)
        == 1;
    let mut all_objects: Vec<SchemaObjects> = Vec::new();
    let mut jobs: Vec<TableJob> = Vec::new();
    let mut estimate = 0u64;
    for pair in pairs {
        let objs = objects::read(&mut coordinator, pair)?;
        let sizes = coordinator.table_rows(&pair.from)?;
        for t in objects::base_tables(&objs) {
            if into.is_some_and(|only| !only.contains(&t.name)) {
                continue;
            }
            let columns = coordinator.writable_columns(&pair.from, &t.name)?;
            let year_columns = coordinator.year_columns(&pair.from, &t.name)?;
            let years = columns.iter().map(|c| year_columns.contains(c)).collect();
            let order_by = coordinator.primary_key(&pair.from, &t.name)?;
            let types = coordinator.column_types(&pair.from, &t.name)?;
            let load_data =
                local_infile && !types.iter().any(|t| NOT_LOADABLE.contains(&t.as_str()));
            let rows = sizes.get(t.name.as_str()).copied().unwrap_or(0);
            estimate += rows;
            jobs.push(TableJob {
                from_schema: pair.from.clone(),
                to_schema: pair.to.clone(),
                table: t.name,
                columns: Arc::new(columns),
                years: Arc::new(years),
                order_by,
                load_data,
                estimate: rows,
            });
        }
        all_objects.push(objs);
    }
    progress.begin(estimate);
    for (pair, objs) in pairs.iter().zip(&all_objects).filter(|_| into.is_none()) {
        objects::create_tables(&mut tgt, pair, objs)?;
    }

    // The consistent snapshot, under a lock on this shard's tables only.
    let mut readers: Vec<Server> = (0..workers)
        .map(|_| connect_for_copy(source))
        .collect::<Result<_>>()?;
    let reader_ids: Vec<u64> = readers
        .iter_mut()
        .map(|r| {
            // Values as stored (each string in its column's character set), timestamps
            // in UTC: the writers take them as they come.
            r.exec(&statements::copy_reader_session())?;
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

    // Biggest tables first so the tail is short.
    let queue = Arc::new(Mutex::new(jobs.into_iter().collect::<VecDeque<_>>()));
    let failed = AtomicBool::new(false);
    let first_error: Mutex<Option<Error>> = Mutex::new(None);
    let fail = |e: Error| {
        failed.store(true, Ordering::SeqCst);
        let mut slot = first_error.lock().expect("error slot");
        if slot.is_none() {
            *slot = Some(e);
        }
    };
    let mut writers: Vec<Server> = (0..workers)
        .map(|_| connect_for_copy(target))
        .collect::<Result<_>>()?;
    for w in &mut writers {
        w.exec(&statements::bulk_load_session())?;
        w.exec(&statements::copy_writer_session())?;
        if into.is_some() {
            w.exec(&statements::mark_pruning_session())?;
        }
    }
    let (tx, rx) = mpsc::sync_channel::<Batch>(workers * 4);
    let rx = Mutex::new(rx);
    let tables_done = AtomicU64::new(0);
    let readers_left = AtomicUsize::new(readers.len());
    // The operation's stop flag reaches every worker (see `signal::with_scope`).
    let op_scope = crate::signal::scope();
    let op_scope = &op_scope;
    std::thread::scope(|s| {
        // The watcher: on an interrupt or a failure, stop the readers' SELECTs on the
        // server (repeatedly, in case a reader was between tables) until all have ended.
        {
            let (failed, fail, readers_left) = (&failed, &fail, &readers_left);
            let (coordinator, reader_ids) = (&mut coordinator, &reader_ids);
            s.spawn(move || {
                crate::signal::enter_scope(op_scope.clone());
                let mut last_kill: Option<Instant> = None;
                while readers_left.load(Ordering::SeqCst) > 0 {
                    if crate::signal::interrupted() {
                        fail(Error::Interrupted);
                    }
                    if failed.load(Ordering::SeqCst)
                        && last_kill.is_none_or(|t| t.elapsed() >= Duration::from_millis(500))
                    {
                        for id in reader_ids.iter().filter(|id| **id > 0) {
                            let _ = coordinator.exec(&statements::kill_query(*id));
                        }
                        last_kill = Some(Instant::now());
                    }
                    std::thread::sleep(Duration::from_millis(50));
                }
            });
        }
        for mut w in writers {
            let rx = &rx;
            let failed = &failed;
            let fail = &fail;
            s.spawn(move || {
                crate::signal::enter_scope(op_scope.clone());
                loop {
                    let next = rx.lock().expect("queue").recv();
                    let Ok(batch) = next else { break };
                    if crate::signal::interrupted() {
                        fail(Error::Interrupted);
                    }
                    if failed.load(Ordering::SeqCst) {
                        // Drain the queue so no reader blocks on a full one.
                        continue;
                    }
                    let j = &batch.job;
                    let write = |w: &mut Server| {
                        if j.load_data {
                            let data = tsv(&batch.rows, &j.years);
                            let bytes = data.len() as u64;
                            let load =
                                statements::load_data_local(&j.to_schema, &j.table, &j.columns);
                            (w.load_data(&load, data), bytes)
                        } else {
                            let written = w.exec(&statements::insert_values(
                                &j.to_schema,
                                &j.table,
                                &j.columns,
                                &batch.rows,
                            ));
                            (written, value_bytes(&batch.rows))
                        }
                    };
                    // Two writers loading one table can deadlock (InnoDB rolls the victim's
                    // statement back whole): the batch is simply written again.
                    let mut attempt = 0;
                    let (written, bytes) = loop {
                        let (written, bytes) = write(&mut w);
                        match written {
                            Err(e) if attempt < 5 && e.is_deadlock() => {
                                attempt += 1;
                                std::thread::sleep(Duration::from_millis(20 * attempt));
                            }
                            written => break (written, bytes),
                        }
                    };
                    match written {
                        Ok(()) => {
                            progress.add(batch.rows.len() as u64, bytes);
                            crate::fault::point("copy");
                        }
                        Err(e) => fail(e),
                    }
                }
            });
        }
        for mut r in readers {
            let tx = tx.clone();
            let queue = Arc::clone(&queue);
            let failed = &failed;
            let fail = &fail;
            let tables_done = &tables_done;
            let readers_left = &readers_left;
            s.spawn(move || {
                crate::signal::enter_scope(op_scope.clone());
                // Counted down however the reader ends, so the watcher always stops.
                let _left = CountDown(readers_left);
                loop {
                    if failed.load(Ordering::SeqCst) {
                        break;
                    }
                    if crate::signal::interrupted() {
                        fail(Error::Interrupted);
                        break;
                    }
                    let Some(job) = queue.lock().expect("jobs").pop_front() else {
                        break;
                    };
                    let job = Arc::new(job);
                    let per_batch = if job.load_data {
                        opts.batch_rows * 10
                    } else {
                        (60_000 / job.columns.len().max(1)).clamp(1, opts.batch_rows)
                    };
                    let select = statements::select_table(
                        &job.from_schema,
                        &job.table,
                        &job.columns,
                        &job.order_by,
                    );
                    let mut rows = Vec::with_capacity(per_batch);
                    let mut read = 0u64;
                    let streamed = r.stream(&select, |row| {
                        if failed.load(Ordering::Relaxed) || crate::signal::interrupted() {
                            return Err(Error::Interrupted);
                        }
                        read += 1;
                        rows.push(row.unwrap());
                        if rows.len() >= per_batch {
                            let full = std::mem::replace(&mut rows, Vec::with_capacity(per_batch));
                            tx.send(Batch {
                                job: Arc::clone(&job),
                                rows: full,
                            })
                            .map_err(|_| Error::Interrupted)?;
                        }
                        Ok(())
                    });
                    match streamed {
                        Ok(()) => {
                            if !rows.is_empty() {
                                let _ = tx.send(Batch {
                                    job: Arc::clone(&job),
                                    rows,
                                });
                            }
                            progress.correct_estimate(job.estimate, read);
                            tables_done.fetch_add(1, Ordering::Relaxed);
                        }
                        Err(e) => {
                            fail(e);
                            break;
                        }
                    }
                }
                let _ = r.exec(&statements::commit());
            });
        }
        drop(tx);
    });
    if let Some(e) = first_error.into_inner().expect("error slot") {
        return Err(e);
    }
    crate::signal::check()?;
    progress.finish();
    for (pair, objs) in pairs.iter().zip(&all_objects).filter(|_| into.is_none()) {
        objects::create_after_data(&mut tgt, pair, objs)?;
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
            "-5\t\\N\ta\\tb\\nc\\\\d\\0e\\rf\t\\\\N\t2024-02-29\t2024-02-29 13:05:09.000120\t-26:03:04.000000\t0.1\n"
        );
        // YEAR 0 is written 0000 (LOAD DATA reads `0` as 2000), other years as they are.
        let rows = vec![vec![Value::Int(0), Value::Int(0), Value::Int(1901)]];
        assert_eq!(
            String::from_utf8(tsv(&rows, &[true, false, true])).unwrap(),
            "0000\t0\t1901\n"
        );
    }
}
