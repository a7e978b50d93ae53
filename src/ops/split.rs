//! `shardctl split`: where the new shard's part of the key space begins, checked against
//! the old shard's coverage. The copy, replication, fence, verification and flip are the
//! move's (see [`super::mover`]); the flip inserts the new shard's mapping.

use crate::config::Inventory;
use crate::directory::{coverage, Coverage, Key, RingPoint, Shard, ShardingType, Snapshot};
use crate::error::{Error, Result};
use crate::ident::Ident;
use crate::server::{statements, Server};

/// Where the split goes, as asked.
#[derive(Debug, Clone, PartialEq)]
pub enum SplitAt {
    /// Range: at this key.
    Key(String),
    /// Range: at the median of the sharding column.
    Median,
    /// Hash: the middle of the arc, or this point.
    Point(Option<String>),
    /// List: these values go to the new shard.
    Values(Vec<String>),
}

pub use crate::directory::{SplitMapping, SplitPlan};

/// A key as the sharding column compares it (strings as bytes).
pub fn key_value(k: &Key) -> mysql::Value {
    match k {
        Key::Int(i) => (*i).into(),
        Key::Str(s) => s.as_bytes().into(),
    }
}

/// The shard's sharded table with the most rows by the statistics (the one whose key
/// distribution stands for the shard's), as schema, table and sharding column.
pub fn largest_sharded_table(
    server: &mut Server,
    snap: &Snapshot,
    shard: &Shard,
) -> Result<(Ident, Ident, Ident)> {
    let mut best: Option<(u64, Ident, Ident, Ident)> = None;
    for t in snap.tables.iter().filter(|t| t.func_id == shard.func_id) {
        let schema = Ident::new(
            "schema",
            &crate::directory::shard_schema(&t.schema, shard.id),
        )?;
        let table = Ident::new("table", &t.table)?;
        let rows = server
            .table_rows(&schema)?
            .get(&t.table)
            .copied()
            .unwrap_or(0);
        if best.as_ref().is_none_or(|b| rows > b.0) {
            best = Some((rows, schema, table, Ident::new("column", &t.column)?));
        }
    }
    let (_, schema, table, column) =
        best.ok_or_else(|| Error::Usage(format!("shard {} has no sharded table", shard.id)))?;
    Ok((schema, table, column))
}

/// The median of the sharding column within the shard's range, through the column's index
/// where one exists (the row count and an offset into the ordered column).
fn median(
    inv: &Inventory,
    snap: &Snapshot,
    shard: &Shard,
    lower: &Key,
    upper: &Option<Key>,
) -> Result<Key> {
    let mut server = Server::connect_node(inv, &shard.node)?;
    let func = snap
        .function_by_id(shard.func_id)
        .ok_or_else(|| Error::Usage("no function".into()))?;
    let (schema, table, column) = largest_sharded_table(&mut server, snap, shard)?;
    let cond = statements::key_range(&column, key_value(lower), upper.as_ref().map(key_value));
    let n: u64 = server
        .first(&statements::count_where(&schema, &table, &cond))?
        .unwrap_or(0);
    if n < 2 {
        return Err(Error::Refused(format!(
            "shard {} holds {n} row(s) in {schema}.{table}: nothing to split",
            shard.id
        )));
    }
    let st = statements::key_at_offset(&schema, &table, &column, &cond, n / 2);
    let text: String = server.first(&st)?.unwrap_or_default();
    func.key_type.parse(&text)
}

/// Checks and resolves where a split goes (connecting to the shard's node only for the
/// median). `new_shard` is filled in by the caller once the location exists.
pub fn plan(inv: &Inventory, snap: &Snapshot, shard: &Shard, at: &SplitAt) -> Result<SplitMapping> {
    let func = snap
        .function_by_id(shard.func_id)
        .ok_or_else(|| Error::Usage("no function".into()))?;
    match (func.sharding_type, coverage(snap, func, shard.id), at) {
        (
            ShardingType::Range,
            Coverage::Range { lower, upper },
            SplitAt::Key(_) | SplitAt::Median,
        ) => {
            let key = match at {
                SplitAt::Key(k) => func.key_type.parse(k)?,
                _ => median(inv, snap, shard, &lower, &upper)?,
            };
            let range = match &upper {
                Some(u) => format!("[{lower}, {u})"),
                None => format!("[{lower}, ∞)"),
            };
            if key == lower {
                return Err(Error::Refused(match at {
                    SplitAt::Median => format!("the sharding column of shard {} holds a single value from {lower} on: it cannot be split", shard.id),
                    _ => format!("--at {key} equals the lower bound of shard {}: the old shard would keep nothing", shard.id),
                }));
            }
            if key < lower || upper.as_ref().is_some_and(|u| key >= *u) {
                return Err(Error::Usage(format!(
                    "--at {key} is outside shard {}'s range {range}",
                    shard.id
                )));
            }
            Ok(SplitMapping::LowerBound { key })
        }
        (
            ShardingType::Hash,
            Coverage::Arc { point, next, .. },
            SplitAt::Point(_) | SplitAt::Median,
        ) => {
            let width = next.0.wrapping_sub(point.0);
            let full_ring = point == next;
            let inside = |x: u128| {
                full_ring || (x.wrapping_sub(point.0) > 0 && x.wrapping_sub(point.0) < width)
            };
            let new = match at {
                SplitAt::Point(Some(hex)) => RingPoint::from_hex(hex)?,
                _ => {
                    if !full_ring && width < 2 {
                        return Err(Error::Refused(format!(
                            "the arc of shard {} is too small to split",
                            shard.id
                        )));
                    }
                    let half = if full_ring { 1u128 << 127 } else { width / 2 };
                    RingPoint(point.0.wrapping_add(half))
                }
            };
            if !inside(new.0) || new == point {
                return Err(Error::Usage(format!(
                    "ring point {new} is not inside shard {}'s arc",
                    shard.id
                )));
            }
            Ok(SplitMapping::Point { hex: new.to_hex() })
        }
        (ShardingType::List, Coverage::Values { values }, SplitAt::Values(wanted)) => {
            let keys: Vec<Key> = wanted
                .iter()
                .map(|v| func.key_type.parse(v))
                .collect::<Result<_>>()?;
            if keys.is_empty() {
                return Err(Error::Usage("--values needs at least one value".into()));
            }
            for k in &keys {
                if !values.contains(k) {
                    return Err(Error::Usage(format!(
                        "value {k} is not mapped to shard {}",
                        shard.id
                    )));
                }
            }
            if keys.len() >= values.len() {
                return Err(Error::Usage(format!(
                    "--values would leave shard {} without values: move it instead",
                    shard.id
                )));
            }
            Ok(SplitMapping::Values { values: keys })
        }
        (ShardingType::Range, _, _) => Err(Error::Usage(
            "a range shard splits with --at KEY or --at median".into(),
        )),
        (ShardingType::Hash, _, _) => Err(Error::Usage(
            "a hash shard splits with --at median or --point HEX".into(),
        )),
        (ShardingType::List, _, _) => Err(Error::Usage(
            "a list shard splits with --values a,b,...".into(),
        )),
        (ShardingType::Key, _, _) => Err(Error::Usage(
            "a shard of a per-key function does not split: add a shard (`shard add`) and move keys to it (`move-keys --keys`)".into(),
        )),
    }
}

/// `snap` as it reads once `plan` has flipped: the new shard's range, ring point or values
/// in place (a snapshot that already holds them is returned as is). The guard step builds
/// the old shard's new ownership from it, identically in a live run (after the flip) and a
/// dry run (which flips nothing).
pub fn after_split(mut snap: Snapshot, func_id: u32, plan: &SplitPlan) -> Result<Snapshot> {
    use crate::directory::{HashRow, ListRow, RangeRow};
    let new = plan.new_shard;
    let mapped = snap.ranges.iter().any(|r| r.shard_id == new)
        || snap.points.iter().any(|p| p.shard_id == new)
        || snap.lists.iter().any(|l| l.shard_id == new);
    if mapped {
        return Ok(snap);
    }
    match &plan.mapping {
        SplitMapping::LowerBound { key } => snap.ranges.push(RangeRow {
            func_id,
            lower_bound: key.clone(),
            shard_id: new,
        }),
        SplitMapping::Point { hex } => snap.points.push(HashRow {
            func_id,
            point: RingPoint::from_hex(hex)?,
            shard_id: new,
        }),
        SplitMapping::Values { values } => {
            for l in snap.lists.iter_mut() {
                if l.func_id == func_id && l.shard_id == plan.old_shard && values.contains(&l.value)
                {
                    l.shard_id = new;
                }
            }
            if !snap.lists.iter().any(|l| l.shard_id == new) {
                for v in values {
                    snap.lists.push(ListRow {
                        func_id,
                        value: v.clone(),
                        shard_id: new,
                    });
                }
            }
        }
    }
    Ok(snap)
}
