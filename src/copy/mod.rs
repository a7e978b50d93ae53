//! Copying a shard's schemas from one node to another, with the binary-log coordinates the
//! copy corresponds to. `native` runs in-process with parallel workers; `dump` pipes the
//! distribution's dump tool into its client; `physical` carries the InnoDB files through
//! the servers' hosts.

pub mod dump;
pub mod native;
pub mod objects;
pub mod physical;

use crate::ident::Ident;
use crate::server::replication::Coordinates;
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Which copy method.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    /// In-process: one consistent snapshot, parallel readers and writers.
    Native,
    /// mariadb-dump / mysqldump piped into the client.
    Dump,
    /// mariadb-backup of the shard's schemas on the source's host into a staging directory
    /// on the target's host, prepared there and imported (`ALTER TABLE ... IMPORT
    /// TABLESPACE`).
    Physical,
}

/// A schema to copy and the name it gets on the target.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SchemaPair {
    /// Name on the source.
    pub from: Ident,
    /// Name on the target.
    pub to: Ident,
}

/// What a copy did.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct CopyReport {
    /// Coordinates on the source the copy is consistent with.
    pub coordinates: Option<Coordinates>,
    /// Tables copied.
    pub tables: usize,
    /// Rows copied.
    pub rows: u64,
    /// Wall time, milliseconds.
    pub millis: u64,
}

/// Counters of a copy in progress, for progress displays. A copy calls [`Progress::begin`]
/// with its estimate of the rows (information_schema's TABLE_ROWS), corrects the estimate
/// with each table's real count as that table finishes, and [`Progress::finish`] makes the
/// total exact, so `rows` reaches `total_estimate` at the end.
#[derive(Debug, Default)]
pub struct Progress {
    /// Rows written on the target.
    pub rows: AtomicU64,
    /// Rows in all: an estimate until the copy finishes.
    pub total_estimate: AtomicU64,
    /// Bytes of row data written on the target.
    pub bytes: AtomicU64,
    clock: Mutex<Clock>,
}

#[derive(Debug, Default, Clone, Copy)]
struct Clock {
    started: Option<Instant>,
    finished: Option<Duration>,
}

impl Progress {
    fn clock(&self) -> std::sync::MutexGuard<'_, Clock> {
        self.clock.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A copy starts: counters to zero, the estimate, the clock started.
    pub fn begin(&self, estimated_rows: u64) {
        self.rows.store(0, Ordering::Relaxed);
        self.bytes.store(0, Ordering::Relaxed);
        self.total_estimate.store(estimated_rows, Ordering::Relaxed);
        *self.clock() = Clock {
            started: Some(Instant::now()),
            finished: None,
        };
    }

    /// Rows and bytes written.
    pub fn add(&self, rows: u64, bytes: u64) {
        self.rows.fetch_add(rows, Ordering::Relaxed);
        self.bytes.fetch_add(bytes, Ordering::Relaxed);
    }

    /// A table finished: its real row count replaces its estimate in the total.
    pub fn correct_estimate(&self, estimated: u64, actual: u64) {
        let _ = self
            .total_estimate
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |t| {
                Some(t.saturating_sub(estimated).saturating_add(actual))
            });
    }

    /// The copy is complete: the total is what was written, the clock stops.
    pub fn finish(&self) {
        let rows = self.rows.load(Ordering::Relaxed);
        self.total_estimate.store(rows, Ordering::Relaxed);
        let mut c = self.clock();
        c.finished = Some(c.started.map(|s| s.elapsed()).unwrap_or_default());
    }

    /// The counters now, with the time since the copy began.
    pub fn snapshot(&self) -> ProgressSnapshot {
        let c = *self.clock();
        ProgressSnapshot {
            rows: self.rows.load(Ordering::Relaxed),
            total: self.total_estimate.load(Ordering::Relaxed),
            bytes: self.bytes.load(Ordering::Relaxed),
            elapsed: c
                .finished
                .or_else(|| c.started.map(|s| s.elapsed()))
                .unwrap_or_default(),
            started: c.started.is_some(),
            finished: c.finished.is_some(),
        }
    }
}

/// A reading of [`Progress`], with the rate and ETA arithmetic.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ProgressSnapshot {
    /// Rows written.
    pub rows: u64,
    /// Rows in all (estimate until finished).
    pub total: u64,
    /// Bytes written.
    pub bytes: u64,
    /// Time since the copy began (until it finished, once finished).
    pub elapsed: Duration,
    /// A copy has begun.
    pub started: bool,
    /// The copy has finished.
    pub finished: bool,
}

impl ProgressSnapshot {
    /// The total to show: never below what is already written (estimates run low).
    pub fn total_shown(&self) -> u64 {
        self.total.max(self.rows)
    }

    /// Average rows per second since the copy began (0 in its first millisecond).
    pub fn rows_per_sec(&self) -> f64 {
        per_sec(self.rows, self.elapsed)
    }

    /// Average bytes per second since the copy began.
    pub fn bytes_per_sec(&self) -> f64 {
        per_sec(self.bytes, self.elapsed)
    }

    /// Time left at the average rate: zero once finished; unknown before the first rows
    /// or once the estimate is used up while rows still arrive.
    pub fn eta(&self) -> Option<Duration> {
        if self.finished {
            return Some(Duration::ZERO);
        }
        let rate = self.rows_per_sec();
        let left = self.total.saturating_sub(self.rows);
        if rate <= 0.0 || left == 0 {
            return None;
        }
        Some(Duration::from_secs_f64(left as f64 / rate))
    }

    /// One line for a progress bar: rows done/total, bytes, rates, ETA.
    pub fn render(&self) -> String {
        use indicatif::{HumanBytes, HumanCount, HumanDuration};
        if !self.started {
            return String::new();
        }
        let eta = match self.eta() {
            _ if self.finished => "done".to_string(),
            Some(d) => format!("eta {}", HumanDuration(d)),
            None => "eta ?".to_string(),
        };
        format!(
            "{}/{} rows {} {}/s {}/s {eta}",
            HumanCount(self.rows),
            HumanCount(self.total_shown()),
            HumanBytes(self.bytes),
            HumanCount(self.rows_per_sec().round() as u64),
            HumanBytes(self.bytes_per_sec().round() as u64),
        )
    }
}

fn per_sec(n: u64, elapsed: Duration) -> f64 {
    let secs = elapsed.as_secs_f64();
    if secs < 0.001 {
        0.0
    } else {
        n as f64 / secs
    }
}

/// A connection for the copy's own sessions, tagged as such in the statement capture.
pub(crate) fn connect_for_copy(
    spec: &crate::server::ConnectSpec,
) -> crate::error::Result<crate::server::Server> {
    let mut s = crate::server::Server::connect(spec)?;
    s.set_purpose(crate::server::Purpose::Copy);
    Ok(s)
}

/// Longest one statement of a copy that works through a whole table in the server may
/// take: an index build after the load, an `IMPORT TABLESPACE`. The inventory's read
/// timeout (a minute by default) would cut them off on a large table while the server
/// goes on.
pub(crate) const LONG_STATEMENT_TIMEOUT: std::time::Duration =
    std::time::Duration::from_secs(6 * 3600);

/// A copy connection for statements that run as long as a table is large (see
/// [`LONG_STATEMENT_TIMEOUT`]).
pub(crate) fn connect_for_long_statements(
    spec: &crate::server::ConnectSpec,
) -> crate::error::Result<crate::server::Server> {
    let mut long = spec.clone();
    long.read_timeout = long.read_timeout.max(LONG_STATEMENT_TIMEOUT);
    connect_for_copy(&long)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snap(rows: u64, total: u64, bytes: u64, millis: u64) -> ProgressSnapshot {
        ProgressSnapshot {
            rows,
            total,
            bytes,
            elapsed: Duration::from_millis(millis),
            started: true,
            finished: false,
        }
    }

    #[test]
    fn rate_and_eta_follow_the_average_rate() {
        // 25,000 of 100,000 rows in 5 s: 5,000 rows/s, 75,000 left -> 15 s.
        let s = snap(25_000, 100_000, 10 << 20, 5_000);
        assert_eq!(s.rows_per_sec(), 5_000.0);
        assert_eq!(s.bytes_per_sec(), (2 << 20) as f64);
        assert_eq!(s.eta(), Some(Duration::from_secs(15)));
        assert_eq!(s.total_shown(), 100_000);
        // Nothing yet: no rate, no ETA (not "0 s").
        let s = snap(0, 100_000, 0, 2_000);
        assert_eq!(s.rows_per_sec(), 0.0);
        assert_eq!(s.eta(), None);
        // No time yet: no division by zero.
        assert_eq!(snap(10, 100, 10, 0).rows_per_sec(), 0.0);
        // The estimate ran low: the total shown follows the rows, the ETA is unknown.
        let s = snap(120, 100, 0, 1_000);
        assert_eq!(s.total_shown(), 120);
        assert_eq!(s.eta(), None);
        // Finished: ETA zero.
        let s = ProgressSnapshot {
            finished: true,
            ..snap(100, 100, 0, 1_000)
        };
        assert_eq!(s.eta(), Some(Duration::ZERO));
        assert!(s.render().starts_with("100/100 rows "), "{}", s.render());
        assert!(s.render().ends_with("done"), "{}", s.render());
    }

    #[test]
    fn counters_begin_correct_and_finish_exactly() {
        let p = Progress::default();
        assert!(!p.snapshot().started);
        assert_eq!(p.snapshot().render(), "");
        p.begin(1_000);
        p.add(400, 4_000);
        let s = p.snapshot();
        assert_eq!((s.rows, s.total, s.bytes), (400, 1_000, 4_000));
        // The table estimated at 1,000 had 1,200 rows.
        p.correct_estimate(1_000, 1_200);
        assert_eq!(p.snapshot().total, 1_200);
        p.add(800, 8_000);
        p.finish();
        let s = p.snapshot();
        assert!(s.finished);
        assert_eq!((s.rows, s.total), (1_200, 1_200));
        let frozen = s.elapsed;
        std::thread::sleep(Duration::from_millis(5));
        assert_eq!(
            p.snapshot().elapsed,
            frozen,
            "the clock stops at the finish"
        );
        // A new copy starts from zero.
        p.begin(50);
        let s = p.snapshot();
        assert_eq!((s.rows, s.total, s.bytes, s.finished), (0, 50, 0, false));
    }
}
