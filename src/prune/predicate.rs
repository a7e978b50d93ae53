//! Which rows a shard owns: the complement of the shard's coverage under its function's
//! current mapping, with bound values. Pure: the directory snapshot in, a condition out;
//! src/server/statements.rs writes it as SQL.

use crate::directory::{coverage, Coverage, Key, KeyType, Shard, Snapshot};
use crate::error::{Error, Result};
use crate::ident::Ident;
use crate::server::statements::{self, KeyKind, NotOwned};
use mysql::Value;

/// A predicate with its bound values.
pub type Predicate = statements::Condition;

fn key_value(k: &Key) -> Value {
    match k {
        Key::Int(i) => Value::Int(*i),
        Key::Str(s) => Value::Bytes(s.as_bytes().to_vec()),
    }
}

/// The keys of a function with keys of `key_type` that lie outside `coverage`, as the SQL
/// builder takes them (how the column compares, and what it matches); None when the
/// coverage is empty (no mapping row: every key lies outside it). The stream's key filter
/// (`crate::stream::KeyFilter`) evaluates the same description on row values.
pub fn outside(coverage: &Coverage, key_type: KeyType) -> Option<(KeyKind, NotOwned)> {
    let kind = match key_type {
        KeyType::Int => KeyKind::Int,
        KeyType::String => KeyKind::Bytes,
    };
    let what = match coverage {
        Coverage::Range { lower, upper } => NotOwned::OutsideRange {
            lower: key_value(lower),
            upper: upper.as_ref().map(key_value),
        },
        Coverage::Values { values } => NotOwned::NotIn(values.iter().map(key_value).collect()),
        Coverage::Arc { point, next, .. } if point == next => NotOwned::Nothing,
        Coverage::Arc { point, next, .. } if point < next => NotOwned::OutsideArc {
            after: point.to_hex().into(),
            up_to: next.to_hex().into(),
        },
        Coverage::Arc { point, next, .. } => NotOwned::OutsideWrappedArc {
            after: point.to_hex().into(),
            up_to: next.to_hex().into(),
        },
        Coverage::None => return None,
    };
    Some((kind, what))
}

/// The rows of `column` that `shard` does NOT own under its function's current mapping.
pub fn not_owned(snap: &Snapshot, shard: &Shard, column: &Ident) -> Result<Predicate> {
    let func = snap
        .function_by_id(shard.func_id)
        .ok_or_else(|| Error::Usage(format!("shard {} has no function", shard.id)))?;
    if func.sharding_type == crate::directory::ShardingType::Key {
        // Ownership is a directory row per key, on another server than the shard's rows:
        // no condition on the shard's own rows says it (the prune looks each chunk's keys
        // up instead). Refused rather than guessed.
        return Err(Error::Refused(format!(
            "shard {} belongs to the per-key function {}: which keys it owns is a directory row per key, which no condition on its rows can say",
            shard.id, func.name
        )));
    }
    let Some((kind, what)) = outside(&coverage(snap, func, shard.id), func.key_type) else {
        return Err(Error::Refused(format!(
            "shard {} has no mapping: it owns no rows, refusing to prune everything",
            shard.id
        )));
    };
    Ok(statements::not_owned(column, kind, &what))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::directory::*;

    fn snap(kind: ShardingType) -> Snapshot {
        let shard = |id| Shard {
            id,
            func_id: 1,
            node: "n".into(),
            host: "h".into(),
            port: 1,
            state: ShardState::Online,
            availability: crate::directory::Availability::Available,
            version: 1,
        };
        Snapshot {
            functions: vec![Function {
                id: 1,
                name: "f".into(),
                sharding_type: kind,
                key_type: KeyType::Int,
            }],
            shards: vec![shard(1), shard(2)],
            ranges: vec![
                RangeRow {
                    func_id: 1,
                    lower_bound: Key::Int(0),
                    shard_id: 1,
                },
                RangeRow {
                    func_id: 1,
                    lower_bound: Key::Int(100),
                    shard_id: 2,
                },
            ],
            points: vec![
                HashRow {
                    func_id: 1,
                    point: RingPoint(10),
                    shard_id: 1,
                },
                HashRow {
                    func_id: 1,
                    point: RingPoint(20),
                    shard_id: 2,
                },
            ],
            lists: vec![ListRow {
                func_id: 1,
                value: Key::Int(7),
                shard_id: 1,
            }],
            ..Snapshot::default()
        }
    }

    #[test]
    fn predicates_are_the_complement_of_the_coverage() {
        let c = Ident::new("column", "emp_no").unwrap();
        let s = snap(ShardingType::Range);
        let p = not_owned(&s, &s.shards[0], &c).unwrap();
        assert_eq!(p.sql, "(`emp_no` < ? OR `emp_no` >= ?)");
        assert_eq!(p.params, vec![Value::Int(0), Value::Int(100)]);
        let p = not_owned(&s, &s.shards[1], &c).unwrap();
        assert_eq!(p.sql, "(`emp_no` < ?)");
        let s = snap(ShardingType::List);
        assert_eq!(
            not_owned(&s, &s.shards[0], &c).unwrap().sql,
            "(`emp_no` NOT IN (?))"
        );
        assert!(
            not_owned(&s, &s.shards[1], &c).is_err(),
            "a shard without values owns nothing"
        );
        let s = snap(ShardingType::Hash);
        let p = not_owned(&s, &s.shards[0], &c).unwrap();
        assert_eq!(
            p.sql,
            "NOT (MD5(CAST(`emp_no` + 0 AS CHAR)) > ? AND MD5(CAST(`emp_no` + 0 AS CHAR)) <= ?)"
        );
        let p = not_owned(&s, &s.shards[1], &c).unwrap();
        assert!(p.sql.contains(" OR "), "the last point wraps: {}", p.sql);
    }
}
