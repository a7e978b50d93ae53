//! The id sequences the directory holds (the ticket table of references 000 and 002): each
//! hands out blocks of values in one autocommitted statement, so every caller of every
//! process gets its own. The router takes its blocks here; creating a sequence, naming
//! the columns it feeds and checking the fleet's ids against it are done in [`crate::ids`].

use super::store::Directory;
use crate::error::{Error, Result};
use crate::server::{reports, row_error};
use serde::Serialize;
use std::collections::BTreeMap;

/// How long `next` waits for a sequence's row lock by default, in seconds.
pub const DEFAULT_LOCK_WAIT_SECS: u64 = 5;

/// A sequence as the directory holds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Sequence {
    /// Its name.
    pub sequence: String,
    /// The first value not handed out yet.
    pub next_value: i64,
    /// Values per block handed to a router.
    pub block_size: u32,
    /// The largest value it hands out.
    pub max_value: i64,
    /// Values left.
    pub remaining: i64,
    /// The columns its ids are stored in, `schema.table.column` (`ids sequence feeds`):
    /// what `ids check` and `status` compare its next value with.
    pub feeds: Vec<String>,
}

/// Values handed out: `first..=last`, to this caller only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Block {
    /// First value.
    pub first: i64,
    /// Last value.
    pub last: i64,
}

impl Block {
    /// How many values.
    pub fn len(&self) -> u64 {
        (self.last - self.first + 1) as u64
    }

    /// Never true: a block holds at least one value.
    pub fn is_empty(&self) -> bool {
        false
    }
}

/// Every sequence, by name.
pub fn sequences(dir: &mut Directory) -> Result<Vec<Sequence>> {
    let d = dir.schema().clone();
    let server = dir.server();
    let node = server.name().to_string();
    let mut feeds: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for r in server.rows(&reports::sequence_feeds(&d))? {
        let (sequence, schema, table, column): (String, String, String, String) =
            mysql::from_row_opt(r).map_err(|e| row_error(&node, e))?;
        feeds
            .entry(sequence)
            .or_default()
            .push(format!("{schema}.{table}.{column}"));
    }
    server
        .rows(&reports::sequences(&d))?
        .into_iter()
        .map(|r| {
            let (sequence, next_value, block_size, max_value): (String, i64, u32, i64) =
                mysql::from_row_opt(r).map_err(|e| row_error(&node, e))?;
            Ok(Sequence {
                remaining: (max_value - next_value + 1).max(0),
                feeds: feeds.remove(&sequence).unwrap_or_default(),
                sequence,
                next_value,
                block_size,
                max_value,
            })
        })
        .collect()
}

/// One sequence.
pub fn sequence(dir: &mut Directory, name: &str) -> Result<Sequence> {
    sequences(dir)?
        .into_iter()
        .find(|s| s.sequence == name)
        .ok_or_else(|| {
            Error::Usage(format!(
                "unknown sequence {name:?} (shardctl ids sequence create)"
            ))
        })
}

/// Takes `count` values from a sequence: one autocommitted statement, so concurrent
/// callers (threads, processes, routers) each get their own block and a crash never hands
/// out a block twice (a block whose answer was lost is skipped, not reissued). With
/// `allow_fewer`, a sequence holding fewer than `count` values hands out what it has.
/// Exhausted: refused (exit 5); a row lock not granted within `lock_wait_secs`: timeout
/// (exit 6).
pub fn take(
    dir: &mut Directory,
    name: &str,
    count: u64,
    allow_fewer: bool,
    lock_wait_secs: u64,
) -> Result<Block> {
    if count < 1 || count > i64::MAX as u64 {
        return Err(Error::Usage(format!("--count {count}: must be at least 1")));
    }
    let d = dir.schema().clone();
    let mut count = count as i64;
    loop {
        // A connection that broke (or, on a cluster, a member that went away or a
        // certification failure) is answered by taking another block: one whose answer
        // was lost is skipped, never handed out twice.
        let taken = dir.retrying(|dir| {
            let server = dir.server();
            server.exec(&reports::lock_wait_seconds(lock_wait_secs))?;
            let st = reports::take_from_sequence(&d);
            let st =
                crate::server::Stmt::with(st.sql, vec![count.into(), name.into(), count.into()]);
            if server.exec_affected(&st)? != 1 {
                return Ok(None);
            }
            let next = server
                .first::<i64>(&reports::last_insert_id())?
                .ok_or_else(|| Error::server(server.name(), "LAST_INSERT_ID() gave no row"))?;
            Ok(Some(next))
        });
        let taken = match taken {
            Ok(t) => t,
            Err(e) if e.is_lock_wait_timeout() => {
                return Err(Error::Timeout(format!(
                    "sequence {name} is contended: its row lock was not granted within {lock_wait_secs} s; try again"
                )))
            }
            Err(e) => return Err(e),
        };
        if let Some(next) = taken {
            return Ok(Block {
                first: next - count,
                last: next - 1,
            });
        }
        let seq = dir.retrying(|dir| sequence(dir, name))?;
        if allow_fewer && seq.remaining > 0 && seq.remaining < count {
            count = seq.remaining;
            continue;
        }
        return Err(Error::Refused(format!(
            "sequence {name} is exhausted: {} value{} left up to {}, {count} asked",
            seq.remaining,
            if seq.remaining == 1 { "" } else { "s" },
            seq.max_value
        )));
    }
}
