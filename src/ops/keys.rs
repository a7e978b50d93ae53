//! Key moves between existing shards: which keys a request names, which shard gives them,
//! and how the mapping reads once they have moved. Pure: a directory snapshot in, a plan
//! out; no I/O (the mover carries the plan out).
//!
//! A range or hash function keeps one contiguous span per shard, so keys move between
//! neighbours: the top of a range shard to the shard above it, the bottom to the shard
//! below (and likewise along the hash ring), by moving the boundary between the two. The
//! middle of a shard's span cannot move without a new shard (`split`). A list function's
//! values move to any shard of the function, and so do a per-key function's keys (whose
//! owners the caller reads from the directory: the snapshot holds no key rows).

use crate::directory::{
    coverage, Coverage, Function, Index, Key, KeyMoveMapping, KeyMovePlan, RingPoint, ShardingType,
    Snapshot,
};
use crate::error::{Error, Result};
use crate::ident::Ident;
use crate::server::statements::{self, Condition};

/// The keys an operator asks to move.
#[derive(Debug, Clone, PartialEq)]
pub enum KeyRequest {
    /// A range function's keys in `[lower, upper)`.
    Range {
        /// Inclusive.
        lower: Key,
        /// Exclusive.
        upper: Key,
    },
    /// A hash function's hashes in `(after, up_to]`.
    Arc {
        /// Exclusive.
        after: RingPoint,
        /// Inclusive.
        up_to: RingPoint,
    },
    /// A list function's values, or a per-key function's keys.
    Values(Vec<Key>),
}

impl std::fmt::Display for KeyRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KeyRequest::Range { lower, upper } => write!(f, "keys [{lower}, {upper})"),
            KeyRequest::Arc { after, up_to } => write!(f, "hashes ({after}, {up_to}]"),
            KeyRequest::Values(v) => {
                let list: Vec<String> = v.iter().map(|k| k.to_string()).collect();
                write!(f, "values {}", list.join(", "))
            }
        }
    }
}

/// Plans moving the keys of `request` (of function `func`) to shard `receiver`: finds the
/// shard that owns them and checks that the move keeps every shard's span contiguous.
/// Refuses, naming the culprit, keys of more than one shard, keys the receiver owns
/// already, an empty request, a receiver of another function or not beside the keys, and
/// a move that would leave the giving shard without keys (that is a merge).
pub fn plan(
    snap: &Snapshot,
    func: &Function,
    request: &KeyRequest,
    receiver: u32,
) -> Result<KeyMovePlan> {
    plan_with_owners(snap, func, request, receiver, &|_| {
        Err(Error::Usage(format!(
            "function {} maps keys one by one: their owners are read from the directory",
            func.name
        )))
    })
}

/// [`plan`], a per-key function's keys looked up with `owner` (the shard the directory
/// maps a key to, None when it maps it to none). A per-key move may take every key of
/// its donor: the donor stays a shard of the function, open to new keys.
pub fn plan_with_owners(
    snap: &Snapshot,
    func: &Function,
    request: &KeyRequest,
    receiver: u32,
    owner: &dyn Fn(&Key) -> Result<Option<u32>>,
) -> Result<KeyMovePlan> {
    let receiving = snap.shard(receiver)?;
    if receiving.func_id != func.id {
        let other = snap
            .function_by_id(receiving.func_id)
            .map(|f| f.name.clone())
            .unwrap_or_else(|| receiving.func_id.to_string());
        return Err(Error::Usage(format!(
            "shard {receiver} belongs to function {other}, not {}",
            func.name
        )));
    }
    let index = Index::new(snap);
    let mapping = match (func.sharding_type, request) {
        (ShardingType::Range, KeyRequest::Range { lower, upper }) => {
            plan_range(snap, func, &index, lower, upper, receiver)?
        }
        (ShardingType::Hash, KeyRequest::Arc { after, up_to }) => {
            plan_arc(snap, func, *after, *up_to, receiver)?
        }
        (ShardingType::List, KeyRequest::Values(values)) => plan_values(
            func,
            &|v| Ok(index.lookup(func.id, v).ok()),
            values,
            receiver,
        )
        .map(|(values, donor)| (KeyMoveMapping::Values { values }, donor))?,
        (ShardingType::Key, KeyRequest::Values(keys)) => plan_values(func, owner, keys, receiver)
            .map(|(keys, donor)| (KeyMoveMapping::Keys { keys }, donor))?,
        (ShardingType::Range, _) => {
            return Err(Error::Usage(format!(
                "function {} is a range function: give --range LOWER..UPPER",
                func.name
            )))
        }
        (ShardingType::Hash, _) => {
            return Err(Error::Usage(format!(
                "function {} is a hash function: give --arc AFTER..UP_TO (ring points, 32 hex digits each)",
                func.name
            )))
        }
        (ShardingType::List, _) => {
            return Err(Error::Usage(format!(
                "function {} is a list function: give --keys V1,V2,... or --keys-file FILE",
                func.name
            )))
        }
        (ShardingType::Key, _) => {
            return Err(Error::Usage(format!(
                "function {} maps keys one by one: give --keys K1,K2,... or --keys-file FILE",
                func.name
            )))
        }
    };
    let (mapping, donor) = mapping;
    Ok(KeyMovePlan {
        func_id: func.id,
        donor,
        receiver,
        mapping,
    })
}

/// The shard owning hash `h`: the largest ring point strictly below it, wrapping.
fn ring_owner(snap: &Snapshot, func: &Function, h: RingPoint) -> Result<u32> {
    let mut points: Vec<(RingPoint, u32)> = snap
        .points
        .iter()
        .filter(|p| p.func_id == func.id)
        .map(|p| (p.point, p.shard_id))
        .collect();
    points.sort();
    let i = points.partition_point(|(p, _)| *p < h);
    let idx = if i == 0 {
        points.len().checked_sub(1)
    } else {
        Some(i - 1)
    };
    idx.map(|i| points[i].1)
        .ok_or_else(|| Error::Usage(format!("function {} has no ring points yet", func.name)))
}

fn plan_range(
    snap: &Snapshot,
    func: &Function,
    index: &Index,
    lower: &Key,
    upper: &Key,
    receiver: u32,
) -> Result<(KeyMoveMapping, u32)> {
    if lower >= upper {
        return Err(Error::Usage(format!(
            "keys [{lower}, {upper}) are empty: nothing to move"
        )));
    }
    let donor = index.lookup(func.id, lower)?;
    let Coverage::Range {
        lower: d_lo,
        upper: d_hi,
    } = coverage(snap, func, donor)
    else {
        return Err(Error::Internal(format!("shard {donor} has no range")));
    };
    if let Some(hi) = &d_hi {
        if upper > hi {
            let next = index.lookup(func.id, hi)?;
            return Err(Error::Usage(format!(
                "keys [{lower}, {upper}) span shards {donor} and {next} (shard {donor} ends at {hi}): a key move takes keys of one shard"
            )));
        }
    }
    if donor == receiver {
        return Err(Error::Usage(format!(
            "shard {receiver} already owns keys [{lower}, {upper}): nothing to move"
        )));
    }
    let recv = coverage(snap, func, receiver);
    let whole = *lower == d_lo && d_hi.as_ref() == Some(upper);
    if whole {
        return Err(Error::Usage(format!(
            "keys [{lower}, {upper}) are all of shard {donor}: moving them leaves it no keys; merge shards {donor} and {receiver} instead"
        )));
    }
    let top = d_hi.as_ref() == Some(upper);
    let bottom = *lower == d_lo;
    match recv {
        Coverage::Range { lower: r_lo, .. } if top && Some(&r_lo) == d_hi.as_ref() => {
            Ok((
                KeyMoveMapping::RangeBound {
                    was: r_lo,
                    now: lower.clone(),
                },
                donor,
            ))
        }
        Coverage::Range { upper: r_hi, .. } if bottom && r_hi.as_ref() == Some(&d_lo) => {
            Ok((
                KeyMoveMapping::RangeBound {
                    was: d_lo,
                    now: upper.clone(),
                },
                donor,
            ))
        }
        _ if !top && !bottom => Err(Error::Usage(format!(
            "keys [{lower}, {upper}) lie inside shard {donor}'s range [{d_lo}, {}): only keys at either end of a range can go to the shard beside them; split the shard for the middle",
            d_hi.map(|k| k.to_string()).unwrap_or_else(|| "∞".into())
        ))),
        _ => Err(Error::Usage(format!(
            "shard {receiver} is not beside keys [{lower}, {upper}) of shard {donor}: the top of a range goes to the shard above it, the bottom to the shard below"
        ))),
    }
}

fn plan_arc(
    snap: &Snapshot,
    func: &Function,
    after: RingPoint,
    up_to: RingPoint,
    receiver: u32,
) -> Result<(KeyMoveMapping, u32)> {
    if after == up_to {
        return Err(Error::Usage(format!(
            "hashes ({after}, {up_to}] are empty: nothing to move"
        )));
    }
    let donor = ring_owner(snap, func, up_to)?;
    let Coverage::Arc { point, next, .. } = coverage(snap, func, donor) else {
        return Err(Error::Internal(format!("shard {donor} has no arc")));
    };
    if donor == receiver {
        return Err(Error::Usage(format!(
            "shard {receiver} already owns hashes ({after}, {up_to}]: nothing to move"
        )));
    }
    // Positions along the donor's arc (point, next], measured from its point.
    let offset = |x: RingPoint| x.0.wrapping_sub(point.0);
    let length = offset(next);
    let (a, b) = (offset(after), offset(up_to));
    // A ring of one point owns everything: the length reads 0 there.
    let inside = |o: u128| length == 0 || o <= length;
    if !(a < b && inside(b)) {
        return Err(Error::Usage(format!(
            "hashes ({after}, {up_to}] span more than shard {donor}'s arc ({point}, {next}]: a key move takes keys of one shard"
        )));
    }
    if a == 0 && b == length {
        return Err(Error::Usage(format!(
            "hashes ({after}, {up_to}] are all of shard {donor}: moving them leaves it no keys; merge shards {donor} and {receiver} instead"
        )));
    }
    let recv = coverage(snap, func, receiver);
    match recv {
        // The receiver's arc starts where the donor's ends: its point comes down.
        Coverage::Arc { point: r_point, .. } if b == length && r_point == next => {
            Ok((
                KeyMoveMapping::RingPoint {
                    was: r_point.to_hex(),
                    now: after.to_hex(),
                },
                donor,
            ))
        }
        // The receiver's arc ends where the donor's starts: the donor's point goes up.
        Coverage::Arc { next: r_next, .. } if a == 0 && r_next == point => {
            Ok((
                KeyMoveMapping::RingPoint {
                    was: point.to_hex(),
                    now: up_to.to_hex(),
                },
                donor,
            ))
        }
        _ if a != 0 && b != length => Err(Error::Usage(format!(
            "hashes ({after}, {up_to}] lie inside shard {donor}'s arc ({point}, {next}]: only hashes at either end of an arc can go to the shard beside them; split the shard for the middle"
        ))),
        _ => Err(Error::Usage(format!(
            "shard {receiver} is not beside hashes ({after}, {up_to}] of shard {donor} on the ring"
        ))),
    }
}

/// The distinct `values` (in the order given) and the one shard that owns them all.
fn plan_values(
    func: &Function,
    owner: &dyn Fn(&Key) -> Result<Option<u32>>,
    values: &[Key],
    receiver: u32,
) -> Result<(Vec<Key>, u32)> {
    let (what, add) = if func.sharding_type == ShardingType::Key {
        ("key", "assign it first (`shardctl keys assign`)")
    } else {
        ("value", "add it to a shard first")
    };
    let mut unique: Vec<Key> = Vec::new();
    for v in values {
        if !unique.contains(v) {
            unique.push(v.clone());
        }
    }
    let Some(first) = unique.first() else {
        return Err(Error::Usage("no keys given: nothing to move".into()));
    };
    let owned_by = |v: &Key| -> Result<u32> {
        owner(v)?.ok_or_else(|| {
            Error::Usage(format!(
                "{what} {v} is not mapped by function {}: {add}",
                func.name
            ))
        })
    };
    let donor = owned_by(first)?;
    for v in &unique {
        let owner = owned_by(v)?;
        if owner != donor {
            return Err(Error::Usage(format!(
                "{what}s {first} and {v} belong to shards {donor} and {owner}: a key move takes keys of one shard"
            )));
        }
        if owner == receiver {
            return Err(Error::Usage(format!(
                "shard {receiver} already owns {what} {v}: nothing to move"
            )));
        }
    }
    Ok((unique, donor))
}

/// `snap` as it reads once `plan` has flipped (a snapshot that shows it already is
/// returned as is): the same in a live run after the flip and in a dry run.
pub fn after_key_move(mut snap: Snapshot, plan: &KeyMovePlan) -> Result<Snapshot> {
    let f = plan.func_id;
    match &plan.mapping {
        KeyMoveMapping::RangeBound { was, now } => {
            if let Some(r) = snap
                .ranges
                .iter_mut()
                .find(|r| r.func_id == f && &r.lower_bound == was)
            {
                r.lower_bound = now.clone();
            } else if !snap
                .ranges
                .iter()
                .any(|r| r.func_id == f && &r.lower_bound == now)
            {
                return Err(Error::Internal(format!(
                    "the directory has neither lower bound {was} nor {now} of the key move"
                )));
            }
        }
        KeyMoveMapping::RingPoint { was, now } => {
            let (was, now) = (RingPoint::from_hex(was)?, RingPoint::from_hex(now)?);
            if let Some(p) = snap
                .points
                .iter_mut()
                .find(|p| p.func_id == f && p.point == was)
            {
                p.point = now;
            } else if !snap.points.iter().any(|p| p.func_id == f && p.point == now) {
                return Err(Error::Internal(format!(
                    "the directory has neither ring point {was} nor {now} of the key move"
                )));
            }
        }
        KeyMoveMapping::Values { values } => {
            for l in snap.lists.iter_mut() {
                if l.func_id == f && values.contains(&l.value) {
                    l.shard_id = plan.receiver;
                }
            }
        }
        // The snapshot holds no key rows: it reads the same before and after.
        KeyMoveMapping::Keys { .. } => {}
    }
    Ok(snap)
}

/// `snap` as it read before `plan` flipped (a snapshot that does not show the flip is
/// returned as is).
pub fn before_key_move(mut snap: Snapshot, plan: &KeyMovePlan) -> Result<Snapshot> {
    let f = plan.func_id;
    match &plan.mapping {
        KeyMoveMapping::RangeBound { was, now } => {
            let flipped = !snap
                .ranges
                .iter()
                .any(|r| r.func_id == f && &r.lower_bound == was);
            if flipped {
                if let Some(r) = snap
                    .ranges
                    .iter_mut()
                    .find(|r| r.func_id == f && &r.lower_bound == now)
                {
                    r.lower_bound = was.clone();
                }
            }
        }
        KeyMoveMapping::RingPoint { was, now } => {
            let (was, now) = (RingPoint::from_hex(was)?, RingPoint::from_hex(now)?);
            if !snap.points.iter().any(|p| p.func_id == f && p.point == was) {
                if let Some(p) = snap
                    .points
                    .iter_mut()
                    .find(|p| p.func_id == f && p.point == now)
                {
                    p.point = was;
                }
            }
        }
        KeyMoveMapping::Values { values } => {
            for l in snap.lists.iter_mut() {
                if l.func_id == f && values.contains(&l.value) {
                    l.shard_id = plan.donor;
                }
            }
        }
        KeyMoveMapping::Keys { .. } => {}
    }
    Ok(snap)
}

/// Whether `snap` shows the move's flip: the bound or point at its new place, the values
/// with the receiver. A per-key move's keys are not in a snapshot: `key_owner` reads the
/// shard the directory maps one of them to (all move in one transaction).
pub fn shows_flip(
    snap: &Snapshot,
    plan: &KeyMovePlan,
    key_owner: &mut dyn FnMut(u32, &Key) -> Result<Option<u32>>,
) -> Result<bool> {
    let f = plan.func_id;
    match &plan.mapping {
        KeyMoveMapping::RangeBound { now, .. } => Ok(snap
            .ranges
            .iter()
            .any(|r| r.func_id == f && &r.lower_bound == now)),
        KeyMoveMapping::RingPoint { now, .. } => Ok(RingPoint::from_hex(now)
            .map(|now| snap.points.iter().any(|p| p.func_id == f && p.point == now))
            .unwrap_or(false)),
        KeyMoveMapping::Values { values } => Ok(values.iter().all(|v| {
            snap.lists
                .iter()
                .any(|l| l.func_id == f && &l.value == v && l.shard_id == plan.receiver)
        })),
        KeyMoveMapping::Keys { keys } => match keys.first() {
            Some(k) => Ok(key_owner(f, k)? == Some(plan.receiver)),
            None => Ok(false),
        },
    }
}

/// The keys the move gives away, as a coverage (a range, an arc of the ring, values):
/// what the copy, the stream, the key fence and the verification select, read from a
/// snapshot before or after the flip.
pub fn moving_coverage(snap: &Snapshot, plan: &KeyMovePlan) -> Result<Coverage> {
    let before = before_key_move(snap.clone(), plan)?;
    Ok(match &plan.mapping {
        KeyMoveMapping::RangeBound { was, now } => Coverage::Range {
            lower: was.min(now).clone(),
            upper: Some(was.max(now).clone()),
        },
        KeyMoveMapping::RingPoint { was, now } => {
            let (was, now) = (RingPoint::from_hex(was)?, RingPoint::from_hex(now)?);
            // The donor's own point moves on: it gives (was, now]. The receiver's point
            // comes back: the donor gives (now, was].
            let donors_point = before
                .points
                .iter()
                .any(|p| p.func_id == plan.func_id && p.point == was && p.shard_id == plan.donor);
            let (point, next) = if donors_point { (was, now) } else { (now, was) };
            Coverage::Arc {
                point,
                next,
                share: 0.0,
            }
        }
        KeyMoveMapping::Values { values: keys } | KeyMoveMapping::Keys { keys } => {
            let mut values = keys.clone();
            values.sort();
            Coverage::Values { values }
        }
    })
}

/// The rows of `column` whose keys the move gives away (the key fence's, the copy's and
/// the verification's condition), from a snapshot read before or after the flip.
pub fn moving_keys(snap: &Snapshot, plan: &KeyMovePlan, column: &Ident) -> Result<Condition> {
    let func = snap.function_by_id(plan.func_id).ok_or_else(|| {
        Error::Usage(format!("function {} is not in the directory", plan.func_id))
    })?;
    let (kind, outside) =
        crate::prune::predicate::outside(&moving_coverage(snap, plan)?, func.key_type)
            .ok_or_else(|| Error::Usage("the moving keys are empty: nothing to move".into()))?;
    Ok(statements::owned(&statements::not_owned(
        column, kind, &outside,
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::directory::*;

    fn shard(id: u32, func_id: u32) -> Shard {
        Shard {
            id,
            func_id,
            node: format!("n{id}"),
            host: "h".into(),
            port: 1,
            state: ShardState::Online,
            availability: Availability::Available,
            version: 1,
        }
    }

    fn function(id: u32, name: &str, kind: ShardingType) -> Function {
        Function {
            id,
            name: name.into(),
            sharding_type: kind,
            key_type: KeyType::Int,
        }
    }

    /// Range function 1 with shards 1 [0, 100), 2 [100, 200), 3 [200, ∞); list function 2
    /// with shard 4 {a, b, c} and 5 {d}; hash function 3 with shards 6, 7, 8 at the
    /// quarter points of the ring.
    fn directory() -> Snapshot {
        let q = u128::MAX / 4;
        Snapshot {
            functions: vec![
                function(1, "r", ShardingType::Range),
                function(2, "l", ShardingType::List),
                function(3, "h", ShardingType::Hash),
            ],
            shards: vec![
                shard(1, 1),
                shard(2, 1),
                shard(3, 1),
                shard(4, 2),
                shard(5, 2),
                shard(6, 3),
                shard(7, 3),
                shard(8, 3),
            ],
            ranges: [(0, 1), (100, 2), (200, 3)]
                .iter()
                .map(|(b, s)| RangeRow {
                    func_id: 1,
                    lower_bound: Key::Int(*b),
                    shard_id: *s,
                })
                .collect(),
            lists: [("a", 4), ("b", 4), ("c", 4), ("d", 5)]
                .iter()
                .map(|(v, s)| ListRow {
                    func_id: 2,
                    value: Key::Str(v.to_string()),
                    shard_id: *s,
                })
                .collect(),
            points: [(q, 6), (2 * q, 7), (3 * q, 8)]
                .iter()
                .map(|(p, s)| HashRow {
                    func_id: 3,
                    point: RingPoint(*p),
                    shard_id: *s,
                })
                .collect(),
            ..Snapshot::default()
        }
    }

    fn range(lower: i64, upper: i64) -> KeyRequest {
        KeyRequest::Range {
            lower: Key::Int(lower),
            upper: Key::Int(upper),
        }
    }

    fn planned(snap: &Snapshot, func: &str, req: &KeyRequest, to: u32) -> Result<KeyMovePlan> {
        let f = snap.function(func).unwrap().clone();
        plan(snap, &f, req, to)
    }

    /// Every key of `keys` routes to the receiver after the move if `moved` says so, and
    /// to its shard before otherwise.
    fn routes_exactly(
        snap: &Snapshot,
        p: &KeyMovePlan,
        keys: &[Key],
        moved: impl Fn(&Key) -> bool,
    ) {
        let before = Index::new(snap);
        let after = Index::new(&after_key_move(snap.clone(), p).unwrap());
        for k in keys {
            let was = before.lookup(p.func_id, k).unwrap();
            let now = after.lookup(p.func_id, k).unwrap();
            if moved(k) {
                assert_eq!((was, now), (p.donor, p.receiver), "{k}");
            } else {
                assert_eq!(was, now, "{k}");
            }
        }
    }

    #[test]
    fn the_top_of_a_range_goes_to_the_shard_above_and_the_bottom_below() {
        let snap = directory();
        let keys: Vec<Key> = (0..300).map(Key::Int).collect();
        let up = planned(&snap, "r", &range(180, 200), 3).unwrap();
        assert_eq!((up.donor, up.receiver), (2, 3));
        routes_exactly(&snap, &up, &keys, |k| {
            (Key::Int(180)..Key::Int(200)).contains(k)
        });
        let down = planned(&snap, "r", &range(100, 130), 1).unwrap();
        assert_eq!((down.donor, down.receiver), (2, 1));
        routes_exactly(&snap, &down, &keys, |k| {
            (Key::Int(100)..Key::Int(130)).contains(k)
        });
        // The last shard's range has no end: its bottom goes below.
        let last = planned(&snap, "r", &range(200, 250), 2).unwrap();
        routes_exactly(&snap, &last, &keys, |k| {
            (Key::Int(200)..Key::Int(250)).contains(k)
        });
    }

    #[test]
    fn range_requests_that_cannot_be_a_key_move_are_refused_naming_why() {
        let snap = directory();
        let cases = [
            (range(150, 250), 3, "span shards 2 and 3"),
            (range(120, 180), 3, "lie inside shard 2's range"),
            (range(100, 200), 3, "are all of shard 2"),
            (range(180, 200), 1, "shard 1 is not beside keys"),
            (range(180, 200), 2, "shard 2 already owns"),
            (range(150, 150), 3, "are empty"),
            (range(180, 200), 5, "belongs to function l"),
        ];
        for (req, to, says) in cases {
            let e = planned(&snap, "r", &req, to).unwrap_err().to_string();
            assert!(e.contains(says), "{req} to {to}: {e}");
        }
        let e = planned(&snap, "r", &range(-5, 10), 2)
            .unwrap_err()
            .to_string();
        assert!(e.contains("below the lowest lower bound"), "{e}");
        let e = planned(&snap, "r", &KeyRequest::Values(vec![Key::Int(1)]), 2).unwrap_err();
        assert!(e.to_string().contains("--range"), "{e}");
    }

    #[test]
    fn list_values_go_to_any_shard_of_the_function() {
        let snap = directory();
        let s = |v: &str| Key::Str(v.into());
        let p = planned(
            &snap,
            "l",
            &KeyRequest::Values(vec![s("b"), s("c"), s("b")]),
            5,
        )
        .unwrap();
        assert_eq!(
            p.mapping,
            KeyMoveMapping::Values {
                values: vec![s("b"), s("c")]
            }
        );
        assert_eq!(p.donor, 4);
        routes_exactly(&snap, &p, &[s("a"), s("b"), s("c"), s("d")], |k| {
            *k == s("b") || *k == s("c")
        });
        for (values, says) in [
            (vec![s("a"), s("d")], "belong to shards 4 and 5"),
            (vec![s("d")], "already owns value d"),
            (vec![s("zz")], "is not mapped"),
            (vec![], "nothing to move"),
        ] {
            let e = planned(&snap, "l", &KeyRequest::Values(values), 5).unwrap_err();
            assert!(e.to_string().contains(says), "{e}");
        }
    }

    /// Per-key function 4 with shards 9 and 10: keys 1 and 2 on shard 9, 3 on shard 10, 4
    /// not mapped.
    #[test]
    fn per_key_keys_of_one_shard_go_to_any_other_and_bad_requests_are_refused() {
        let mut snap = directory();
        snap.functions.push(function(4, "pk", ShardingType::Key));
        snap.shards.extend([shard(9, 4), shard(10, 4)]);
        let f = snap.function("pk").unwrap().clone();
        let owners = |k: &Key| -> Result<Option<u32>> {
            Ok(match k {
                Key::Int(1) | Key::Int(2) => Some(9),
                Key::Int(3) => Some(10),
                _ => None,
            })
        };
        let keys = |v: &[i64]| KeyRequest::Values(v.iter().map(|i| Key::Int(*i)).collect());
        // All of shard 9's keys: the donor stays a shard, open to new keys.
        let p = plan_with_owners(&snap, &f, &keys(&[2, 1, 2]), 10, &owners).unwrap();
        assert_eq!((p.donor, p.receiver), (9, 10));
        assert_eq!(
            p.mapping,
            KeyMoveMapping::Keys {
                keys: vec![Key::Int(2), Key::Int(1)]
            }
        );
        assert_eq!(
            moving_coverage(&snap, &p).unwrap(),
            Coverage::Values {
                values: vec![Key::Int(1), Key::Int(2)]
            }
        );
        let c = moving_keys(&snap, &p, &Ident::new("column", "k").unwrap()).unwrap();
        assert_eq!(c.sql, "(NOT (`k` NOT IN (?, ?)))");
        let mut owner_now = |_: u32, _: &Key| -> Result<Option<u32>> { Ok(Some(10)) };
        assert!(shows_flip(&snap, &p, &mut owner_now).unwrap());
        for (req, to, says) in [
            (keys(&[1, 3]), 10, "keys 1 and 3 belong to shards 9 and 10"),
            (keys(&[3]), 10, "shard 10 already owns key 3"),
            (keys(&[1, 4]), 10, "key 4 is not mapped by function pk"),
            (keys(&[]), 10, "nothing to move"),
            (keys(&[1]), 5, "belongs to function l"),
        ] {
            let e = plan_with_owners(&snap, &f, &req, to, &owners).unwrap_err();
            assert!(matches!(e, Error::Usage(_)), "{e}");
            assert!(e.to_string().contains(says), "{e}");
        }
        let e = plan(&snap, &f, &keys(&[1]), 10).unwrap_err();
        assert!(e.to_string().contains("read from the directory"), "{e}");
    }

    #[test]
    fn an_end_of_an_arc_goes_to_its_ring_neighbour() {
        let snap = directory();
        let q = u128::MAX / 4;
        let keys: Vec<Key> = (0..2000).map(Key::Int).collect();
        // Shard 6 owns (q, 2q]: its top quarter goes to shard 7 (whose point comes down).
        let top = KeyRequest::Arc {
            after: RingPoint(q + 3 * q / 4),
            up_to: RingPoint(2 * q),
        };
        let p = planned(&snap, "h", &top, 7).unwrap();
        assert_eq!((p.donor, p.receiver), (6, 7));
        let h = |k: &Key| RingPoint::of_key(k).0;
        routes_exactly(&snap, &p, &keys, |k| h(k) > q + 3 * q / 4 && h(k) <= 2 * q);
        // Its bottom quarter goes to shard 8, whose arc wraps round to q.
        let bottom = KeyRequest::Arc {
            after: RingPoint(q),
            up_to: RingPoint(q + q / 4),
        };
        let p = planned(&snap, "h", &bottom, 8).unwrap();
        assert_eq!((p.donor, p.receiver), (6, 8));
        routes_exactly(&snap, &p, &keys, |k| h(k) > q && h(k) <= q + q / 4);
        // Shard 8's arc wraps past the top of the ring: its top part goes to shard 6.
        let wrapped = KeyRequest::Arc {
            after: RingPoint(q / 2),
            up_to: RingPoint(q),
        };
        let p = planned(&snap, "h", &wrapped, 6).unwrap();
        assert_eq!((p.donor, p.receiver), (8, 6));
        routes_exactly(&snap, &p, &keys, |k| h(k) > q / 2 && h(k) <= q);
        let middle = KeyRequest::Arc {
            after: RingPoint(q + q / 4),
            up_to: RingPoint(q + q / 2),
        };
        let e = planned(&snap, "h", &middle, 7).unwrap_err().to_string();
        assert!(e.contains("lie inside shard 6's arc"), "{e}");
        let across = KeyRequest::Arc {
            after: RingPoint(q + q / 2),
            up_to: RingPoint(2 * q + q / 2),
        };
        let e = planned(&snap, "h", &across, 8).unwrap_err().to_string();
        assert!(e.contains("span more than shard 7's arc"), "{e}");
    }

    #[test]
    fn the_moving_keys_condition_selects_the_keys_between_the_two_bounds() {
        let snap = directory();
        let p = planned(&snap, "r", &range(180, 200), 3).unwrap();
        let c = moving_keys(&snap, &p, &Ident::new("column", "k").unwrap()).unwrap();
        assert_eq!(c.sql, "(NOT (`k` < ? OR `k` >= ?))", "{c}");
        assert_eq!(
            c.params,
            vec![mysql::Value::Int(180), mysql::Value::Int(200)]
        );
        // An arc given away by the donor's own point (its bottom) and one given back by
        // the receiver's (the donor's top), and values.
        let q = u128::MAX / 4;
        let bottom = KeyRequest::Arc {
            after: RingPoint(q),
            up_to: RingPoint(q + q / 4),
        };
        let p = planned(&snap, "h", &bottom, 8).unwrap();
        assert_eq!(
            moving_coverage(&snap, &p).unwrap(),
            Coverage::Arc {
                point: RingPoint(q),
                next: RingPoint(q + q / 4),
                share: 0.0
            }
        );
        let top = KeyRequest::Arc {
            after: RingPoint(q + 3 * q / 4),
            up_to: RingPoint(2 * q),
        };
        let p = planned(&snap, "h", &top, 7).unwrap();
        assert_eq!(
            moving_coverage(&snap, &p).unwrap(),
            Coverage::Arc {
                point: RingPoint(q + 3 * q / 4),
                next: RingPoint(2 * q),
                share: 0.0
            }
        );
        let p = planned(&snap, "r", &range(180, 200), 3).unwrap();
        // Flipped already: the plan applies to a snapshot that shows it as is, and the
        // condition read after the flip is the one read before.
        let after = after_key_move(snap.clone(), &p).unwrap();
        assert_eq!(after_key_move(after.clone(), &p).unwrap(), after);
        assert_eq!(before_key_move(after.clone(), &p).unwrap(), snap);
        let again = moving_keys(&after, &p, &Ident::new("column", "k").unwrap()).unwrap();
        assert_eq!((again.sql, again.params), (c.sql, c.params));
    }
}
