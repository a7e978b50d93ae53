//! Which rows a shard owns, as SQL: the complement of the shard's coverage, with bound
//! values. Pure: the directory snapshot in, a predicate out.

use crate::directory::{coverage, Coverage, Key, KeyType, Shard, Snapshot};
use crate::error::{Error, Result};
use crate::ident::Ident;
use mysql::Value;

/// A predicate with its bound values.
#[derive(Debug, Clone, PartialEq)]
pub struct Predicate {
    /// SQL with `?` placeholders.
    pub sql: String,
    /// Bound values.
    pub params: Vec<Value>,
}

fn key_value(k: &Key) -> Value {
    match k {
        Key::Int(i) => Value::Int(*i),
        Key::Str(s) => Value::Bytes(s.as_bytes().to_vec()),
    }
}

/// The rows of `column` that `shard` does NOT own under its function's current mapping.
pub fn not_owned(snap: &Snapshot, shard: &Shard, column: &Ident) -> Result<Predicate> {
    let func = snap
        .function_by_id(shard.func_id)
        .ok_or_else(|| Error::Usage(format!("shard {} has no function", shard.id)))?;
    let col = match func.key_type {
        KeyType::Int => column.quoted(),
        KeyType::String => format!("CAST({} AS BINARY)", column.quoted()),
    };
    let hashed = match func.key_type {
        KeyType::Int => format!("MD5(CAST({} AS CHAR))", column.quoted()),
        KeyType::String => format!("MD5({})", column.quoted()),
    };
    Ok(match coverage(snap, func, shard.id) {
        Coverage::Range {
            lower,
            upper: Some(upper),
        } => Predicate {
            sql: format!("({col} < ? OR {col} >= ?)"),
            params: vec![key_value(&lower), key_value(&upper)],
        },
        Coverage::Range { lower, upper: None } => Predicate {
            sql: format!("({col} < ?)"),
            params: vec![key_value(&lower)],
        },
        Coverage::Values { values } => Predicate {
            sql: format!("({col} NOT IN ({}))", vec!["?"; values.len()].join(", ")),
            params: values.iter().map(key_value).collect(),
        },
        Coverage::Arc { point, next, .. } if point == next => Predicate {
            sql: "(FALSE)".into(),
            params: vec![],
        },
        Coverage::Arc { point, next, .. } if point < next => Predicate {
            sql: format!("NOT ({hashed} > ? AND {hashed} <= ?)"),
            params: vec![point.to_hex().into(), next.to_hex().into()],
        },
        Coverage::Arc { point, next, .. } => Predicate {
            sql: format!("NOT ({hashed} > ? OR {hashed} <= ?)"),
            params: vec![point.to_hex().into(), next.to_hex().into()],
        },
        Coverage::None => {
            return Err(Error::Refused(format!(
                "shard {} has no mapping: it owns no rows, refusing to prune everything",
                shard.id
            )))
        }
    })
}

/// `(a, b) > (?, ?)` written out so every server uses the primary key for it:
/// `a > ? OR (a = ? AND b > ?)`. `op` is `>` or `<=`.
pub fn keyset(pk: &[Ident], values: &[Value], op: &str) -> Predicate {
    let strict = if op == ">" { ">" } else { "<" };
    let mut terms = Vec::new();
    let mut params = Vec::new();
    for i in 0..pk.len() {
        let mut parts = Vec::new();
        for j in 0..i {
            parts.push(format!("{} = ?", pk[j].quoted()));
            params.push(values[j].clone());
        }
        let last = if i == pk.len() - 1 && op == "<=" {
            "<="
        } else {
            strict
        };
        parts.push(format!("{} {last} ?", pk[i].quoted()));
        params.push(values[i].clone());
        terms.push(format!("({})", parts.join(" AND ")));
    }
    Predicate {
        sql: format!("({})", terms.join(" OR ")),
        params,
    }
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
            "NOT (MD5(CAST(`emp_no` AS CHAR)) > ? AND MD5(CAST(`emp_no` AS CHAR)) <= ?)"
        );
        let p = not_owned(&s, &s.shards[1], &c).unwrap();
        assert!(p.sql.contains(" OR "), "the last point wraps: {}", p.sql);
    }

    #[test]
    fn keysets_expand_composite_keys() {
        let pk = vec![
            Ident::new("column", "a").unwrap(),
            Ident::new("column", "b").unwrap(),
        ];
        let v = vec![Value::Int(1), Value::Int(2)];
        let p = keyset(&pk, &v, ">");
        assert_eq!(p.sql, "((`a` > ?) OR (`a` = ? AND `b` > ?))");
        assert_eq!(p.params.len(), 3);
        let p = keyset(&pk, &v, "<=");
        assert_eq!(p.sql, "((`a` < ?) OR (`a` = ? AND `b` <= ?))");
    }
}
