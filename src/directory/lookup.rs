//! Key → shard, in memory: range (greatest lower bound ≤ key), hash (largest ring point
//! strictly below the key's MD5, wrapping to the largest point) and list (exact value).
//! Pure: built from a [`Snapshot`], no I/O.

use super::model::{Function, Key, RingPoint, ShardingType, Snapshot};
use crate::error::{Error, Result};
use serde::Serialize;
use std::collections::HashMap;

/// The lookup structure of one function.
#[derive(Debug, Clone, Default)]
pub struct FunctionIndex {
    /// Sorted lower bounds.
    ranges: Vec<(Key, u32)>,
    /// Sorted ring points.
    points: Vec<(RingPoint, u32)>,
    /// Values.
    lists: HashMap<Key, u32>,
}

impl FunctionIndex {
    /// The shard for `key`, given the function's kind.
    pub fn lookup(&self, kind: ShardingType, key: &Key) -> Option<u32> {
        match kind {
            ShardingType::Range => {
                let i = self.ranges.partition_point(|(b, _)| b <= key);
                (i > 0).then(|| self.ranges[i - 1].1)
            }
            ShardingType::Hash => {
                if self.points.is_empty() {
                    return None;
                }
                let h = RingPoint::of_key(key);
                let i = self.points.partition_point(|(p, _)| *p < h);
                let idx = if i == 0 { self.points.len() - 1 } else { i - 1 };
                Some(self.points[idx].1)
            }
            ShardingType::List => self.lists.get(key).copied(),
            // Read key by key from the directory, never held here (the Router's cache).
            ShardingType::Key => None,
        }
    }

    /// True when no mapping row exists.
    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty() && self.points.is_empty() && self.lists.is_empty()
    }
}

/// What a shard covers, for display.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Coverage {
    /// `[lower, upper)`; `upper` None means unbounded.
    Range {
        /// Inclusive lower bound.
        lower: Key,
        /// Exclusive upper bound.
        upper: Option<Key>,
    },
    /// Hashes in `(point, next]`, wrapping around the ring.
    Arc {
        /// The shard's ring point (exclusive).
        point: RingPoint,
        /// The next point (inclusive end).
        next: RingPoint,
        /// Share of the ring, 0..=1.
        share: f64,
    },
    /// Explicit values.
    Values {
        /// The values.
        values: Vec<Key>,
    },
    /// No mapping row yet.
    None,
}

impl std::fmt::Display for Coverage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Coverage::Range {
                lower,
                upper: Some(u),
            } => write!(f, "[{lower}, {u})"),
            Coverage::Range { lower, upper: None } => write!(f, "[{lower}, ∞)"),
            Coverage::Arc { point, next, share } => write!(
                f,
                "({}…, {}…] {:.1}%",
                &point.to_hex()[..8],
                &next.to_hex()[..8],
                share * 100.0
            ),
            Coverage::Values { values } => {
                let v: Vec<String> = values.iter().map(|k| k.to_string()).collect();
                write!(f, "{{{}}}", v.join(", "))
            }
            Coverage::None => f.write_str("-"),
        }
    }
}

/// Lookup structures for every function, and the table → function map.
#[derive(Debug, Clone, Default)]
pub struct Index {
    functions: HashMap<u32, (ShardingType, FunctionIndex)>,
    by_name: HashMap<String, u32>,
    tables: HashMap<(String, String), u32>,
}

impl Index {
    /// Builds the index of a snapshot.
    pub fn new(snap: &Snapshot) -> Self {
        let mut functions: HashMap<u32, (ShardingType, FunctionIndex)> = snap
            .functions
            .iter()
            .map(|f| (f.id, (f.sharding_type, FunctionIndex::default())))
            .collect();
        for r in &snap.ranges {
            if let Some((_, fi)) = functions.get_mut(&r.func_id) {
                fi.ranges.push((r.lower_bound.clone(), r.shard_id));
            }
        }
        for p in &snap.points {
            if let Some((_, fi)) = functions.get_mut(&p.func_id) {
                fi.points.push((p.point, p.shard_id));
            }
        }
        for l in &snap.lists {
            if let Some((_, fi)) = functions.get_mut(&l.func_id) {
                fi.lists.insert(l.value.clone(), l.shard_id);
            }
        }
        for (_, fi) in functions.values_mut() {
            fi.ranges.sort();
            fi.points.sort();
        }
        Index {
            functions,
            by_name: snap
                .functions
                .iter()
                .map(|f| (f.name.clone(), f.id))
                .collect(),
            tables: snap
                .tables
                .iter()
                .map(|t| ((t.schema.clone(), t.table.clone()), t.func_id))
                .collect(),
        }
    }

    /// The mapping kind of function `func_id`.
    pub fn kind(&self, func_id: u32) -> Option<ShardingType> {
        self.functions.get(&func_id).map(|(k, _)| *k)
    }

    /// The function id for a name.
    pub fn function_id(&self, name: &str) -> Option<u32> {
        self.by_name.get(name).copied()
    }

    /// The function id a sharded table maps to.
    pub fn table_function(&self, schema: &str, table: &str) -> Option<u32> {
        self.tables
            .get(&(schema.to_string(), table.to_string()))
            .copied()
    }

    /// The shard for `key` under function `func_id`.
    pub fn lookup(&self, func_id: u32, key: &Key) -> Result<u32> {
        let (kind, fi) = self
            .functions
            .get(&func_id)
            .ok_or_else(|| Error::Usage(format!("unknown partition function id {func_id}")))?;
        if fi.is_empty() {
            return Err(Error::Usage(
                "the function has no shards yet (shardctl shard add)".to_string(),
            ));
        }
        fi.lookup(*kind, key).ok_or_else(|| match kind {
            ShardingType::Range => Error::Usage(format!(
                "key {key} is below the lowest lower bound; no shard holds it"
            )),
            _ => Error::Usage(format!("no shard holds key {key}")),
        })
    }
}

/// What each shard of `func` covers.
pub fn coverage(snap: &Snapshot, func: &Function, shard_id: u32) -> Coverage {
    match func.sharding_type {
        ShardingType::Range => {
            let mut bounds: Vec<&super::model::RangeRow> = snap
                .ranges
                .iter()
                .filter(|r| r.func_id == func.id)
                .collect();
            bounds.sort_by(|a, b| a.lower_bound.cmp(&b.lower_bound));
            match bounds.iter().position(|r| r.shard_id == shard_id) {
                Some(i) => Coverage::Range {
                    lower: bounds[i].lower_bound.clone(),
                    upper: bounds.get(i + 1).map(|r| r.lower_bound.clone()),
                },
                None => Coverage::None,
            }
        }
        ShardingType::Hash => {
            let mut points: Vec<&super::model::HashRow> = snap
                .points
                .iter()
                .filter(|p| p.func_id == func.id)
                .collect();
            points.sort_by_key(|p| p.point);
            match points.iter().position(|p| p.shard_id == shard_id) {
                Some(i) => {
                    let point = points[i].point;
                    let next = points[(i + 1) % points.len()].point;
                    let width = next.0.wrapping_sub(point.0);
                    let share = if points.len() == 1 {
                        1.0
                    } else {
                        width as f64 / 2f64.powi(128)
                    };
                    Coverage::Arc { point, next, share }
                }
                None => Coverage::None,
            }
        }
        ShardingType::Key => Coverage::None,
        ShardingType::List => {
            let mut values: Vec<Key> = snap
                .lists
                .iter()
                .filter(|l| l.func_id == func.id && l.shard_id == shard_id)
                .map(|l| l.value.clone())
                .collect();
            values.sort();
            if values.is_empty() {
                Coverage::None
            } else {
                Coverage::Values { values }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::directory::model::*;

    fn snap() -> Snapshot {
        let f = |id, name: &str, t| Function {
            id,
            name: name.into(),
            sharding_type: t,
            key_type: KeyType::Int,
        };
        Snapshot {
            functions: vec![
                f(1, "r", ShardingType::Range),
                f(2, "h", ShardingType::Hash),
                f(3, "l", ShardingType::List),
            ],
            ranges: vec![
                RangeRow {
                    func_id: 1,
                    lower_bound: Key::Int(1000),
                    shard_id: 2,
                },
                RangeRow {
                    func_id: 1,
                    lower_bound: Key::Int(0),
                    shard_id: 1,
                },
            ],
            points: vec![
                HashRow {
                    func_id: 2,
                    point: RingPoint(100),
                    shard_id: 10,
                },
                HashRow {
                    func_id: 2,
                    point: RingPoint(u128::MAX / 2),
                    shard_id: 11,
                },
            ],
            lists: vec![ListRow {
                func_id: 3,
                value: Key::Int(7),
                shard_id: 20,
            }],
            ..Snapshot::default()
        }
    }

    #[test]
    fn ranges_take_the_greatest_lower_bound() {
        let idx = Index::new(&snap());
        assert_eq!(idx.lookup(1, &Key::Int(0)).unwrap(), 1);
        assert_eq!(idx.lookup(1, &Key::Int(999)).unwrap(), 1);
        assert_eq!(idx.lookup(1, &Key::Int(1000)).unwrap(), 2);
        assert_eq!(idx.lookup(1, &Key::Int(i64::MAX)).unwrap(), 2);
        assert!(idx
            .lookup(1, &Key::Int(-1))
            .unwrap_err()
            .to_string()
            .contains("below"));
    }

    #[test]
    fn hashes_take_the_largest_point_below_and_wrap() {
        let idx = Index::new(&snap());
        for k in 0..200 {
            let key = Key::Int(k);
            let h = RingPoint::of_key(&key).0;
            let expected = if h > u128::MAX / 2 {
                11
            } else if h > 100 {
                10
            } else {
                11
            };
            assert_eq!(idx.lookup(2, &key).unwrap(), expected, "key {k}");
        }
    }

    #[test]
    fn lists_match_exactly() {
        let idx = Index::new(&snap());
        assert_eq!(idx.lookup(3, &Key::Int(7)).unwrap(), 20);
        assert!(idx.lookup(3, &Key::Int(8)).is_err());
    }

    #[test]
    fn md5_matches_the_servers() {
        // MD5('') and MD5('1') as MySQL computes them.
        assert_eq!(
            RingPoint::md5("").to_hex(),
            "d41d8cd98f00b204e9800998ecf8427e"
        );
        assert_eq!(
            RingPoint::md5("1").to_hex(),
            "c4ca4238a0b923820dcc509a6f75849b"
        );
        let p = RingPoint::from_hex("C4CA4238A0B923820DCC509A6F75849B").unwrap();
        assert_eq!(p, RingPoint::md5("1"));
        assert!(RingPoint::from_hex("xyz").is_err());
    }

    #[test]
    fn coverage_describes_each_kind() {
        let s = snap();
        let r = s.function("r").unwrap();
        assert_eq!(coverage(&s, r, 1).to_string(), "[0, 1000)");
        assert_eq!(coverage(&s, r, 2).to_string(), "[1000, ∞)");
        let l = s.function("l").unwrap();
        assert_eq!(coverage(&s, l, 20).to_string(), "{7}");
        let h = s.function("h").unwrap();
        match coverage(&s, h, 11) {
            Coverage::Arc { share, .. } => assert!((share - 0.5).abs() < 1e-6),
            other => panic!("{other:?}"),
        }
    }

    proptest::proptest! {
        #[test]
        fn index_agrees_with_a_linear_scan(
            bounds in proptest::collection::btree_set(-1000i64..1000, 1..20),
            points in proptest::collection::btree_set(proptest::num::u128::ANY, 1..20),
            keys in proptest::collection::vec(-1200i64..1200, 1..50),
        ) {
            let mut s = Snapshot {
                functions: vec![
                    Function { id: 1, name: "r".into(), sharding_type: ShardingType::Range, key_type: KeyType::Int },
                    Function { id: 2, name: "h".into(), sharding_type: ShardingType::Hash, key_type: KeyType::Int },
                ],
                ..Snapshot::default()
            };
            for (i, b) in bounds.iter().enumerate() {
                s.ranges.push(RangeRow { func_id: 1, lower_bound: Key::Int(*b), shard_id: i as u32 });
            }
            for (i, p) in points.iter().enumerate() {
                s.points.push(HashRow { func_id: 2, point: RingPoint(*p), shard_id: 100 + i as u32 });
            }
            let idx = Index::new(&s);
            for k in keys {
                let naive_range = s.ranges.iter()
                    .filter(|r| r.lower_bound <= Key::Int(k))
                    .max_by(|a, b| a.lower_bound.cmp(&b.lower_bound))
                    .map(|r| r.shard_id);
                proptest::prop_assert_eq!(idx.lookup(1, &Key::Int(k)).ok(), naive_range);
                let h = RingPoint::of_key(&Key::Int(k));
                let naive_hash = s.points.iter().filter(|p| p.point < h).max_by_key(|p| p.point)
                    .or_else(|| s.points.iter().max_by_key(|p| p.point))
                    .map(|p| p.shard_id);
                proptest::prop_assert_eq!(idx.lookup(2, &Key::Int(k)).ok(), naive_hash);
            }
        }
    }
}
