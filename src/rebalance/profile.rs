//! Reading the key distributions a rebalance plan's key moves are sized by, before the
//! planner runs (the planner itself reads nothing): for each candidate donor
//! ([`super::boundary::donor_candidates`]), on its largest sharded table by rows,
//!
//! - a range shard: the rows in its range (`COUNT(*)`, through the sharding column's
//!   index) and the keys at every sixteenth of them, each reached by `ORDER BY ... LIMIT 1
//!   OFFSET` from the nearer end as `split --at median` reaches its median, so the offsets
//!   scanned add up to about 4.5 times the shard's rows;
//! - a list shard: its rows per value (`GROUP BY` the sharding column);
//! - a hash shard: nothing; a key move's share of its rows is its share of the arc.
//!
//! Every query runs on one connection per shard, with the connection's own read timeout.

use super::boundary::KeyProfile;
use crate::config::Inventory;
use crate::directory::{coverage, Coverage, ShardingType, Snapshot};
use crate::error::{Error, Result};
use crate::ops::split::{key_value, largest_sharded_table};
use crate::server::{statements, Server};

/// Cut keys at every `1/CUTS` of a range shard's rows.
pub const CUTS: u64 = 16;

/// The profile of shard `id`; None for a hash shard (it needs none) or a shard with no
/// coverage.
pub fn profile(inv: &Inventory, snap: &Snapshot, id: u32) -> Result<Option<KeyProfile>> {
    let shard = snap.shard(id)?;
    let func = snap
        .function_by_id(shard.func_id)
        .ok_or_else(|| Error::Internal(format!("shard {id} has no function")))?;
    if func.sharding_type == ShardingType::Hash {
        return Ok(None);
    }
    let cov = coverage(snap, func, id);
    let mut server = Server::connect_node(inv, &shard.node)?;
    let (schema, table, column) = largest_sharded_table(&mut server, snap, shard)?;
    match cov {
        Coverage::Range { lower, upper } => {
            let cond =
                statements::key_range(&column, key_value(&lower), upper.as_ref().map(key_value));
            let rows: u64 = server
                .first(&statements::count_where(&schema, &table, &cond))?
                .unwrap_or(0);
            let mut cuts = Vec::new();
            for i in 1..CUTS {
                let below = rows * i / CUTS;
                if below == 0 || below >= rows {
                    continue;
                }
                let st = if i <= CUTS / 2 {
                    statements::key_at_offset(&schema, &table, &column, &cond, below)
                } else {
                    statements::key_at_offset_from_top(
                        &schema,
                        &table,
                        &column,
                        &cond,
                        rows - 1 - below,
                    )
                };
                // Rows deleted since the count: fewer cuts, no error.
                if let Some(text) = server.first::<String>(&st)? {
                    cuts.push((func.key_type.parse(&text)?, below));
                }
            }
            cuts.dedup_by(|b, a| a.0 == b.0);
            Ok(Some(KeyProfile::Range { rows, cuts }))
        }
        Coverage::Values { .. } => {
            let (kind, outside) = crate::prune::predicate::outside(&cov, func.key_type)
                .ok_or_else(|| Error::Internal(format!("shard {id} owns no values")))?;
            let cond = statements::owned(&statements::not_owned(&column, kind, &outside));
            let mut values = Vec::new();
            for row in server.rows(&statements::rows_per_key(&schema, &table, &column, &cond))? {
                let (text, n): (String, u64) = mysql::from_row_opt(row)
                    .map_err(|e| Error::Internal(format!("rows per value of shard {id}: {e}")))?;
                values.push((func.key_type.parse(&text)?, n));
            }
            values.sort();
            Ok(Some(KeyProfile::Values { values }))
        }
        Coverage::Arc { .. } | Coverage::None => Ok(None),
    }
}
