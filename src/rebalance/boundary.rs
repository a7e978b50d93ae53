//! Key moves in a rebalance plan: where giving the end of a shard's range (or arc, or some
//! of a list shard's values) to a neighbour on another node relieves an overloaded node
//! for fewer bytes than moving whole shards off it. Pure and deterministic like the
//! planner: the directory snapshot and the key distributions measured before planning in,
//! a plan out; no I/O.
//!
//! The whole-shard plan ([`planner::plan`]) comes first. Then each overloaded node, the
//! most utilised first, is judged on its own: its whole-shard moves are set aside, and key
//! moves off it are chosen greedily, each filling its receiver's node at most up to the
//! threshold. They replace the whole-shard moves when they move less for a peak (and a
//! node) no higher, or stand alone when no whole-shard move off the node helped at all
//! (a shard too big to move whole: the split-and-merge case). A shard takes part in at
//! most one action of a plan, so every key move's keys stay valid while the others run.
//!
//! A key move's size is an estimate: a range shard's rows between cut keys measured on its
//! largest sharded table, a list shard's rows per value likewise, a hash arc's rows as its
//! share of the arc (hashes spread keys evenly; one key with many rows does not). The
//! donor's weight times that share is what the plan counts.

use super::planner::{
    self, cmp_f, KeyMove, Limits, Move, NodeIn, NodeLoad, Plan, PlanError, Reason, ShardIn,
};
use crate::directory::{coverage, Coverage, Key, RingPoint, ShardingType, Snapshot};
use crate::ops::keys::KeyRequest;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// The measured key distribution of one shard, read by the I/O layer before planning on
/// the shard's largest sharded table (by rows).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum KeyProfile {
    /// A range shard: keys within its range, ascending, each with how many of the
    /// table's rows in the range lie below it.
    Range {
        /// The table's rows in the shard's range.
        rows: u64,
        /// Cut keys, ascending, each with the rows below it.
        cuts: Vec<(Key, u64)>,
    },
    /// A list shard: the table's rows of each of its values.
    Values {
        /// Rows per value.
        values: Vec<(Key, u64)>,
    },
}

/// What the planner needs for key moves: the directory and the measured profiles of the
/// shards that may give keys ([`donor_candidates`]). A range or list shard without a
/// profile gives none; a hash shard needs none.
#[derive(Debug, Clone, Copy)]
pub struct KeyInput<'a> {
    /// The directory the shard sizes were read against.
    pub snap: &'a Snapshot,
    /// Profiles by shard id.
    pub profiles: &'a BTreeMap<u32, KeyProfile>,
}

/// The utilisation no plan with key moves can go below: the average, or what excluded
/// shards pin on one node, whichever is higher. Unlike the whole-shard planner's bound it
/// ignores the largest shard: a key move can cut it.
fn key_floor(nodes: &[NodeIn], shards: &[ShardIn]) -> (f64, f64) {
    let total: u64 = shards.iter().map(|s| s.size).sum();
    let cap_kept: f64 = nodes.iter().filter(|n| !n.drain).map(|n| n.capacity).sum();
    let average = total as f64 / cap_kept;
    let pinned = nodes
        .iter()
        .map(|n| {
            let p: u64 = shards
                .iter()
                .filter(|s| s.excluded && s.node == n.name)
                .map(|s| s.size)
                .sum();
            p as f64 / n.capacity
        })
        .fold(0.0, f64::max);
    (average, pinned)
}

/// Utilisation a node may reach through key moves: the threshold above the average, or
/// what excluded shards pin, whichever is higher.
fn key_target_util(nodes: &[NodeIn], shards: &[ShardIn], limits: &Limits) -> f64 {
    let (average, pinned) = key_floor(nodes, shards);
    ((1.0 + limits.threshold) * average).max(pinned)
}

/// The shards whose neighbours could take keys: range and hash shards of every shard
/// beside them, list shards of every other shard of their function.
fn receivers(snap: &Snapshot, shard: u32) -> Vec<(u32, End)> {
    let Ok(s) = snap.shard(shard) else {
        return Vec::new();
    };
    let Some(func) = snap.function_by_id(s.func_id) else {
        return Vec::new();
    };
    match func.sharding_type {
        ShardingType::Range => {
            let mut bounds: Vec<(&Key, u32)> = snap
                .ranges
                .iter()
                .filter(|r| r.func_id == func.id)
                .map(|r| (&r.lower_bound, r.shard_id))
                .collect();
            bounds.sort();
            let Some(i) = bounds.iter().position(|(_, id)| *id == shard) else {
                return Vec::new();
            };
            let mut out = Vec::new();
            if i > 0 {
                out.push((bounds[i - 1].1, End::Bottom));
            }
            if let Some((_, above)) = bounds.get(i + 1) {
                out.push((*above, End::Top));
            }
            out
        }
        ShardingType::Hash => {
            let mut points: Vec<(RingPoint, u32)> = snap
                .points
                .iter()
                .filter(|p| p.func_id == func.id)
                .map(|p| (p.point, p.shard_id))
                .collect();
            points.sort();
            let n = points.len();
            let Some(i) = points.iter().position(|(_, id)| *id == shard) else {
                return Vec::new();
            };
            if n < 2 {
                return Vec::new();
            }
            let mut out = vec![(points[(i + 1) % n].1, End::Top)];
            let before = points[(i + n - 1) % n].1;
            out.push((before, End::Bottom));
            out
        }
        // A per-key function's keys move one by one, not by boundary: none planned.
        ShardingType::Key => Vec::new(),
        ShardingType::List => snap
            .shards_of(func.id)
            .filter(|o| o.id != shard)
            .map(|o| (o.id, End::Values))
            .collect(),
    }
}

/// Which of the donor's keys go.
#[derive(Debug, Clone, Copy, PartialEq)]
enum End {
    /// The top of the range or arc, to the shard above.
    Top,
    /// The bottom, to the shard below.
    Bottom,
    /// Some values of a list shard.
    Values,
}

/// The keys of `donor` (of weight `size`) at `end` whose share of its rows comes closest
/// to `wanted` of `size` without exceeding `max` (both in weight): the request and its
/// share. None when no such keys exist, or they would be all of the donor.
fn keys_for(
    input: &KeyInput,
    donor: u32,
    size: u64,
    end: End,
    wanted: f64,
    max: f64,
) -> Option<(KeyRequest, f64)> {
    if size == 0 || max < 1.0 {
        return None;
    }
    let snap = input.snap;
    let s = snap.shard(donor).ok()?;
    let func = snap.function_by_id(s.func_id)?;
    let size = size as f64;
    // Of several candidates, the one whose weight is closest to `wanted`, the smaller on a
    // tie; none above `max`.
    let pick = |cands: Vec<(KeyRequest, f64)>| {
        cands
            .into_iter()
            .filter(|(_, share)| *share > 0.0 && *share < 1.0)
            // As the plan counts it: rounded to whole units, at least one.
            .filter(|(_, share)| (1.0..=max).contains(&(share * size).round()))
            .min_by(|a, b| {
                cmp_f((a.1 * size - wanted).abs(), (b.1 * size - wanted).abs())
                    .then(cmp_f(a.1, b.1))
            })
    };
    match (coverage(snap, func, donor), end) {
        (Coverage::Range { lower, upper }, End::Top | End::Bottom) => {
            let Some(KeyProfile::Range { rows, cuts }) = input.profiles.get(&donor) else {
                return None;
            };
            if *rows == 0 {
                return None;
            }
            let rows = *rows as f64;
            let inside = |k: &Key| *k > lower && upper.as_ref().is_none_or(|u| k < u);
            let cands = cuts
                .iter()
                .filter(|(k, _)| inside(k))
                .filter_map(|(k, below)| {
                    let below = (*below as f64).min(rows);
                    match end {
                        End::Top => Some((
                            KeyRequest::Range {
                                lower: k.clone(),
                                upper: upper.clone()?,
                            },
                            (rows - below) / rows,
                        )),
                        _ => Some((
                            KeyRequest::Range {
                                lower: lower.clone(),
                                upper: k.clone(),
                            },
                            below / rows,
                        )),
                    }
                })
                .collect();
            pick(cands)
        }
        (Coverage::Arc { point, next, .. }, End::Top | End::Bottom) => {
            let len = next.0.wrapping_sub(point.0);
            if len < 2 {
                return None;
            }
            // Any share can be cut from an arc: as close to `wanted` as `max` allows, and
            // never all of it.
            let share = (wanted.min(max) / size).clamp(0.0, 15.0 / 16.0);
            let cut = ((len as f64) * share) as u128;
            let cut = cut.clamp(1, len - 1);
            let share = cut as f64 / len as f64;
            let req = match end {
                End::Top => KeyRequest::Arc {
                    after: RingPoint(next.0.wrapping_sub(cut)),
                    up_to: next,
                },
                _ => KeyRequest::Arc {
                    after: point,
                    up_to: RingPoint(point.0.wrapping_add(cut)),
                },
            };
            pick(vec![(req, share)])
        }
        (Coverage::Values { values: mapped }, End::Values) => {
            let Some(KeyProfile::Values { values }) = input.profiles.get(&donor) else {
                return None;
            };
            let total: u64 = values
                .iter()
                .filter(|(v, _)| mapped.contains(v))
                .map(|(_, r)| r)
                .sum();
            if total == 0 || mapped.len() < 2 {
                return None;
            }
            let weight = |rows: u64| rows as f64 / total as f64 * size;
            // Largest first, each taken while the sum stays within the wanted weight; if
            // none fits, the value closest to it within `max` alone.
            let mut by_rows: Vec<&(Key, u64)> = values
                .iter()
                .filter(|(v, r)| mapped.contains(v) && *r > 0)
                .collect();
            by_rows.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
            let cap = wanted.min(max);
            let mut taken: Vec<Key> = Vec::new();
            let mut rows = 0;
            for (v, r) in &by_rows {
                if weight(rows + r) <= cap && taken.len() + 1 < mapped.len() {
                    taken.push(v.clone());
                    rows += r;
                }
            }
            let mut cands = Vec::new();
            if !taken.is_empty() {
                taken.sort();
                cands.push((KeyRequest::Values(taken), rows as f64 / total as f64));
            }
            for (v, r) in &by_rows {
                cands.push((
                    KeyRequest::Values(vec![v.clone()]),
                    *r as f64 / total as f64,
                ));
            }
            pick(cands)
        }
        _ => None,
    }
}

/// The shards worth measuring before planning with key moves: those on a node above the
/// key-move target (the threshold above the average) whose neighbour (any other shard of
/// the function, for a list) lives on another kept node below it. Only range and list
/// shards need a profile; hash shards are listed too, for the caller to skip.
pub fn donor_candidates(
    nodes: &[NodeIn],
    shards: &[ShardIn],
    limits: &Limits,
    snap: &Snapshot,
) -> Vec<u32> {
    if nodes
        .iter()
        .any(|n| !(n.capacity.is_finite() && n.capacity > 0.0))
        || nodes.iter().all(|n| n.drain)
    {
        return Vec::new();
    }
    let target = key_target_util(nodes, shards, limits);
    let node = |name: &str| nodes.iter().find(|n| n.name == name);
    let util = |name: &str| {
        let n = node(name)?;
        let load: u64 = shards
            .iter()
            .filter(|s| s.node == name)
            .map(|s| s.size)
            .sum();
        Some(load as f64 / n.capacity)
    };
    let by_id: BTreeMap<u32, &ShardIn> = shards.iter().map(|s| (s.id, s)).collect();
    shards
        .iter()
        .filter(|s| !s.excluded && s.size > 0)
        .filter(|s| node(&s.node).is_some_and(|n| !n.drain))
        .filter(|s| util(&s.node).is_some_and(|u| u > target + 1e-12))
        .filter(|s| {
            receivers(snap, s.id).iter().any(|(r, _)| {
                by_id.get(r).is_some_and(|r| {
                    !r.excluded
                        && r.node != s.node
                        && node(&r.node).is_some_and(|n| !n.drain)
                        && util(&r.node).is_some_and(|u| u < target - 1e-12)
                })
            })
        })
        .map(|s| s.id)
        .collect()
}

/// What judging one node found.
#[derive(Debug, Clone, PartialEq)]
enum Judged {
    /// Not judged: within the target, drained, or key moves off.
    Not,
    /// Judged: no key move off it.
    NoKeyMove,
    /// Key moves found, but not better than its whole-shard moves.
    NoBetter(u64),
    /// Key moves took the place of its whole-shard moves (or stand alone).
    Replaced,
}

/// [`planner::plan`], then key moves where they beat it (see the module's documentation).
/// Without drains the peak is never higher than the whole-shard plan's, and each node's
/// key moves move less than the whole-shard moves off it they replace.
pub fn plan_with_keys(
    nodes: &[NodeIn],
    shards: &[ShardIn],
    limits: &Limits,
    input: &KeyInput,
) -> Result<Plan, PlanError> {
    let whole = planner::plan(nodes, shards, limits)?;
    let index: BTreeMap<&str, usize> = nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.name.as_str(), i))
        .collect();
    let by_id: BTreeMap<u32, &ShardIn> = shards.iter().map(|s| (s.id, s)).collect();
    let target_util = key_target_util(nodes, shards, limits);
    let target = |i: usize| target_util * nodes[i].capacity;
    let util = |load: &[f64], i: usize| load[i] / nodes[i].capacity;
    let peak = |load: &[f64]| (0..nodes.len()).map(|i| util(load, i)).fold(0.0, f64::max);
    let before: Vec<f64> = whole.nodes.iter().map(|n| n.before as f64).collect();
    let mut load: Vec<f64> = whole.nodes.iter().map(|n| n.after as f64).collect();
    let mut moves: Vec<Move> = whole.moves.clone();
    let mut key_moves: Vec<KeyMove> = Vec::new();
    let mut judged = vec![Judged::Not; nodes.len()];
    // The most utilised first, ties by name.
    let mut order: Vec<usize> = (0..nodes.len())
        .filter(|&i| !nodes[i].drain && before[i] > target(i) + 1e-9)
        .collect();
    order.sort_by(|&a, &b| {
        cmp_f(util(&before, b), util(&before, a)).then(nodes[a].name.cmp(&nodes[b].name))
    });
    for p in order {
        let off: Vec<Move> = moves
            .iter()
            .filter(|m| m.from == nodes[p].name)
            .cloned()
            .collect();
        let mut trial = load.clone();
        for m in &off {
            trial[index[m.from.as_str()]] += m.size as f64;
            trial[index[m.to.as_str()]] -= m.size as f64;
        }
        // Shards already in another action may not take part.
        let mut busy: BTreeSet<u32> = moves
            .iter()
            .filter(|m| m.from != nodes[p].name)
            .map(|m| m.shard)
            .collect();
        for k in &key_moves {
            busy.insert(k.donor);
            busy.insert(k.receiver);
        }
        let mut relief: Vec<KeyMove> = Vec::new();
        loop {
            let excess = trial[p] - target(p);
            if excess <= 1e-9 {
                break;
            }
            // Every (donor on p, receiver elsewhere with room) pair's best keys; the one
            // closest to the excess wins, ties by donor then receiver id.
            let mut best: Option<(f64, &ShardIn, &ShardIn, KeyRequest, f64)> = None;
            for d in shards.iter().filter(|s| {
                s.node == nodes[p].name && !s.excluded && s.size > 0 && !busy.contains(&s.id)
            }) {
                for (r, end) in receivers(input.snap, d.id) {
                    let Some(rs) = by_id.get(&r) else { continue };
                    if rs.excluded || busy.contains(&r) || rs.node == d.node {
                        continue;
                    }
                    let Some(&q) = index.get(rs.node.as_str()) else {
                        continue;
                    };
                    if nodes[q].drain {
                        continue;
                    }
                    let room = target(q) - trial[q];
                    let Some((req, share)) = keys_for(input, d.id, d.size, end, excess, room)
                    else {
                        continue;
                    };
                    let w = share * d.size as f64;
                    let better = match &best {
                        None => true,
                        Some((bw, bd, br, ..)) => cmp_f((w - excess).abs(), (bw - excess).abs())
                            .then(d.id.cmp(&bd.id))
                            .then(r.cmp(&br.id))
                            .is_lt(),
                    };
                    if better {
                        best = Some((w, d, rs, req, share));
                    }
                }
            }
            let Some((_, d, r, req, share)) = best else {
                break;
            };
            let size = ((share * d.size as f64).round() as u64).clamp(1, d.size);
            let q = index[r.node.as_str()];
            trial[p] -= size as f64;
            trial[q] += size as f64;
            busy.insert(d.id);
            busy.insert(r.id);
            relief.push(KeyMove {
                donor: d.id,
                receiver: r.id,
                from: d.node.clone(),
                to: r.node.clone(),
                keys: req,
                size,
                share,
                why: Reason::NoWholeShardMove,
            });
        }
        if relief.is_empty() {
            judged[p] = Judged::NoKeyMove;
            continue;
        }
        let key_weight: u64 = relief.iter().map(|k| k.size).sum();
        let off_weight: u64 = off.iter().map(|m| m.size).sum();
        let actions = moves.len() - off.len() + key_moves.len() + relief.len();
        let within_max = limits.max_moves.is_none_or(|m| actions <= m);
        let no_higher = peak(&trial) <= peak(&load) + 1e-9
            && util(&trial, p) <= util(&load, p).max(target_util) + 1e-9;
        let reason = if off.is_empty() {
            // Nothing left the node whole: the key moves must lower it.
            (util(&trial, p) < util(&load, p) - 1e-9).then_some(Reason::NoWholeShardMove)
        } else {
            (key_weight < off_weight).then(|| Reason::FewerThanWholeShards {
                instead_of: off.iter().map(|m| m.shard).collect(),
                whole_shard_weight: off_weight,
            })
        };
        match reason {
            Some(why) if within_max && no_higher => {
                moves.retain(|m| m.from != nodes[p].name);
                for k in &mut relief {
                    k.why = why.clone();
                }
                key_moves.extend(relief);
                load = trial;
                judged[p] = Judged::Replaced;
            }
            _ => judged[p] = Judged::NoBetter(key_weight),
        }
    }
    for m in &mut moves {
        let i = index[m.from.as_str()];
        m.why = match &judged[i] {
            _ if nodes[i].drain => Reason::Drain,
            Judged::NoBetter(w) => Reason::KeyMovesNoBetter {
                key_move_weight: *w,
            },
            _ => Reason::NoKeyMove,
        };
    }
    key_moves.sort_by(|a, b| b.size.cmp(&a.size).then(a.donor.cmp(&b.donor)));
    // The loads from the actions themselves, in whole units.
    let mut after: Vec<u64> = whole.nodes.iter().map(|n| n.before).collect();
    for m in &moves {
        after[index[m.from.as_str()]] -= m.size;
        after[index[m.to.as_str()]] += m.size;
    }
    for k in &key_moves {
        after[index[k.from.as_str()]] -= k.size;
        after[index[k.to.as_str()]] += k.size;
    }
    let peak_after = (0..nodes.len())
        .map(|i| after[i] as f64 / nodes[i].capacity)
        .fold(0.0, f64::max);
    let (average, pinned) = key_floor(nodes, shards);
    // To bring every node within the threshold, at least each node's excess over it must
    // move (all of a drained node's shards).
    let moved_lower_bound = (0..nodes.len())
        .map(|i| {
            let t = if nodes[i].drain { 0.0 } else { target(i) };
            (before[i] - t).max(0.0).ceil() as u64
        })
        .sum::<u64>()
        .min(before.iter().sum::<f64>() as u64);
    // A shard that gives keys is no longer one to split.
    let split_suggestions = whole
        .split_suggestions
        .iter()
        .copied()
        .filter(|s| !key_moves.iter().any(|k| k.donor == *s))
        .collect();
    Ok(Plan {
        split_suggestions,
        moved: moves.iter().map(|m| m.size).sum::<u64>()
            + key_moves.iter().map(|k| k.size).sum::<u64>(),
        peak_after,
        nodes: whole
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| NodeLoad {
                after: after[i],
                ..n.clone()
            })
            .collect(),
        moves,
        key_moves,
        // With key moves only the average and pinned shards bound the peak: the largest
        // shard no longer does, key moves can cut it.
        peak_lower_bound: average.max(pinned),
        moved_lower_bound,
        ..whole
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::directory::*;
    use proptest::prelude::*;

    fn node(name: &str, capacity: f64) -> NodeIn {
        NodeIn {
            name: name.into(),
            capacity,
            drain: false,
        }
    }

    fn shard_row(id: u32, func_id: u32, node: &str) -> Shard {
        Shard {
            id,
            func_id,
            node: node.into(),
            host: "h".into(),
            port: 1,
            state: ShardState::Online,
            availability: Availability::Available,
            version: 1,
        }
    }

    fn function(id: u32, kind: ShardingType, key_type: KeyType) -> Function {
        Function {
            id,
            name: format!("f{id}"),
            sharding_type: kind,
            key_type,
        }
    }

    /// A range function 1 whose shards (id, node, lower bound) are given.
    fn ranges(shards: &[(u32, &str, i64)]) -> Snapshot {
        Snapshot {
            functions: vec![function(1, ShardingType::Range, KeyType::Int)],
            shards: shards
                .iter()
                .map(|(id, n, _)| shard_row(*id, 1, n))
                .collect(),
            ranges: shards
                .iter()
                .map(|(id, _, lb)| RangeRow {
                    func_id: 1,
                    lower_bound: Key::Int(*lb),
                    shard_id: *id,
                })
                .collect(),
            ..Snapshot::default()
        }
    }

    /// Cut keys every sixteenth of `rows` rows spread evenly over `[lower, upper)`.
    fn even(lower: i64, upper: i64, rows: u64) -> KeyProfile {
        KeyProfile::Range {
            rows,
            cuts: (1..16)
                .map(|i| {
                    (
                        Key::Int(lower + (upper - lower) * i / 16),
                        rows * i as u64 / 16,
                    )
                })
                .collect(),
        }
    }

    fn shard_in(id: u32, node: &str, size: u64) -> ShardIn {
        ShardIn {
            id,
            node: node.into(),
            size,
            excluded: false,
        }
    }

    const LIMITS: Limits = Limits {
        threshold: 0.05,
        max_moves: None,
    };

    #[test]
    fn a_shard_too_big_to_move_gives_its_top_to_its_neighbour() {
        let nodes = [node("a", 1.0), node("b", 1.0), node("c", 1.0)];
        let snap = ranges(&[(1, "a", 0), (2, "b", 1000), (3, "c", 2000)]);
        let shards = [
            shard_in(1, "a", 1000),
            shard_in(2, "b", 100),
            shard_in(3, "c", 100),
        ];
        let whole = planner::plan(&nodes, &shards, &LIMITS).unwrap();
        assert!(whole.moves.is_empty(), "no whole shard helps: {whole:?}");
        assert_eq!(whole.split_suggestions, vec![1]);
        let profiles = BTreeMap::from([(1, even(0, 1000, 16_000))]);
        let input = KeyInput {
            snap: &snap,
            profiles: &profiles,
        };
        let p = plan_with_keys(&nodes, &shards, &LIMITS, &input).unwrap();
        assert!(p.moves.is_empty());
        assert_eq!(p.key_moves.len(), 1, "{p:?}");
        let k = &p.key_moves[0];
        // Node b has room for 320 (up to 1.05 x the average of 400): the largest cut
        // within it is 5/16 of shard 1, its top.
        assert_eq!((k.donor, k.receiver), (1, 2));
        assert_eq!(
            k.keys,
            KeyRequest::Range {
                lower: Key::Int(687),
                upper: Key::Int(1000)
            }
        );
        assert_eq!(k.size, 313);
        assert_eq!(k.why, Reason::NoWholeShardMove);
        assert_eq!(p.nodes[0].after, 687);
        assert_eq!(p.nodes[1].after, 413);
        assert!(p.peak_after < p.peak_before);
        assert_eq!(p.moved, 313);
        assert!(
            p.split_suggestions.is_empty(),
            "its key move replaces the split"
        );
    }

    #[test]
    fn a_key_move_replaces_a_whole_shard_move_that_moves_more() {
        let nodes = [node("a", 1.0), node("b", 1.0)];
        let snap = ranges(&[(1, "a", 0), (2, "a", 1000), (3, "b", 2000)]);
        let shards = [
            shard_in(1, "a", 500),
            shard_in(2, "a", 500),
            shard_in(3, "b", 100),
        ];
        let whole = planner::plan(&nodes, &shards, &LIMITS).unwrap();
        assert_eq!(whole.moves.len(), 1);
        assert_eq!((whole.moves[0].shard, whole.moved), (1, 500));
        // Without a profile of shard 2 no key move is found.
        let none = BTreeMap::new();
        let input = KeyInput {
            snap: &snap,
            profiles: &none,
        };
        let p = plan_with_keys(&nodes, &shards, &LIMITS, &input).unwrap();
        assert!(p.key_moves.is_empty());
        assert_eq!(p.moves[0].why, Reason::NoKeyMove);
        let profiles = BTreeMap::from([(2, even(1000, 2000, 1600))]);
        let input = KeyInput {
            snap: &snap,
            profiles: &profiles,
        };
        let p = plan_with_keys(&nodes, &shards, &LIMITS, &input).unwrap();
        assert!(p.moves.is_empty(), "{p:?}");
        let k = &p.key_moves[0];
        // a's excess over 577.5 is 422.5; 14/16 of shard 2 (437.5) comes closest.
        assert_eq!((k.donor, k.receiver, k.size), (2, 3, 438));
        assert_eq!(
            k.why,
            Reason::FewerThanWholeShards {
                instead_of: vec![1],
                whole_shard_weight: 500
            }
        );
        assert_eq!(
            k.why.describe(|w| format!("{w} B")),
            "instead of moving shard 1 whole (500 B)"
        );
        assert!(p.peak_after < whole.peak_after);
        assert!(p.moved < whole.moved);
    }

    #[test]
    fn list_values_and_hash_arcs_move_too() {
        let nodes = [node("a", 1.0), node("b", 1.0)];
        let q = u128::MAX / 4;
        let snap = Snapshot {
            functions: vec![
                function(1, ShardingType::List, KeyType::String),
                function(2, ShardingType::Hash, KeyType::Int),
            ],
            shards: vec![
                shard_row(1, 1, "a"),
                shard_row(2, 1, "b"),
                shard_row(3, 2, "a"),
                shard_row(4, 2, "b"),
            ],
            lists: [("acme", 1), ("beta", 1), ("gamma", 1), ("delta", 2)]
                .iter()
                .map(|(v, s)| ListRow {
                    func_id: 1,
                    value: Key::Str(v.to_string()),
                    shard_id: *s,
                })
                .collect(),
            points: [(q, 3), (3 * q, 4)]
                .iter()
                .map(|(p, s)| HashRow {
                    func_id: 2,
                    point: RingPoint(*p),
                    shard_id: *s,
                })
                .collect(),
            ..Snapshot::default()
        };
        let s = |v: &str| Key::Str(v.into());
        let profiles = BTreeMap::from([(
            1,
            KeyProfile::Values {
                values: vec![(s("acme"), 400), (s("beta"), 300), (s("gamma"), 300)],
            },
        )]);
        let input = KeyInput {
            snap: &snap,
            profiles: &profiles,
        };
        // The list shard alone is too big to move; its tenant acme is what b can take.
        let shards = [shard_in(1, "a", 1000), shard_in(2, "b", 100)];
        let p = plan_with_keys(&nodes, &shards, &LIMITS, &input).unwrap();
        assert_eq!(p.key_moves.len(), 1, "{p:?}");
        assert_eq!(p.key_moves[0].keys, KeyRequest::Values(vec![s("acme")]));
        assert_eq!(p.key_moves[0].size, 400);
        // A hash shard's arc end goes to its ring neighbour, sized by the share of the arc.
        let shards = [shard_in(3, "a", 1000), shard_in(4, "b", 100)];
        let p = plan_with_keys(&nodes, &shards, &LIMITS, &input).unwrap();
        assert_eq!(p.key_moves.len(), 1, "{p:?}");
        let k = &p.key_moves[0];
        assert_eq!((k.donor, k.receiver), (3, 4));
        // Room on b up to 1.05 x 550 is 477.5; the excess is 422.5: that much moves.
        assert!((k.size as i64 - 423).abs() <= 1, "{k:?}");
        let f = snap.function_by_id(2).unwrap();
        crate::ops::keys::plan(&snap, f, &k.keys, 4).unwrap();
    }

    #[test]
    fn donor_candidates_are_the_overloaded_shards_with_a_neighbour_with_room() {
        let nodes = [node("a", 1.0), node("b", 1.0), node("c", 1.0)];
        let snap = ranges(&[(1, "a", 0), (2, "a", 1000), (3, "b", 2000), (4, "c", 3000)]);
        let shards = [
            shard_in(1, "a", 500),
            shard_in(2, "a", 500),
            shard_in(3, "b", 100),
            shard_in(4, "c", 100),
        ];
        // Shard 1's only neighbour is on its own node.
        assert_eq!(donor_candidates(&nodes, &shards, &LIMITS, &snap), vec![2]);
    }

    /// A directory of a range, a hash and a list function over `n` nodes, with shard
    /// sizes, placements and profiles drawn at random.
    fn fleets() -> impl Strategy<
        Value = (
            Vec<NodeIn>,
            Vec<ShardIn>,
            Snapshot,
            BTreeMap<u32, KeyProfile>,
        ),
    > {
        let shard = (
            0usize..6,
            0u64..2000,
            proptest::bool::weighted(0.1),
            1u64..5000,
            proptest::bool::weighted(0.85),
        );
        (
            proptest::collection::vec((1u32..5, proptest::bool::weighted(0.15)), 2..6),
            proptest::collection::vec((shard.clone(), 1i64..1000), 1..7),
            proptest::collection::vec((shard.clone(), any::<u128>()), 0..6),
            proptest::collection::vec((shard, 1usize..4), 0..5),
        )
            .prop_map(|(ns, rs, hs, ls)| {
                let mut nodes: Vec<NodeIn> = ns
                    .iter()
                    .enumerate()
                    .map(|(i, (c, d))| NodeIn {
                        name: format!("n{i}"),
                        capacity: f64::from(*c) / 2.0,
                        drain: *d,
                    })
                    .collect();
                if nodes.iter().all(|n| n.drain) {
                    nodes[0].drain = false;
                }
                let name = |i: usize| format!("n{}", i % nodes.len());
                let mut snap = Snapshot {
                    functions: vec![
                        function(1, ShardingType::Range, KeyType::Int),
                        function(2, ShardingType::Hash, KeyType::Int),
                        function(3, ShardingType::List, KeyType::String),
                    ],
                    ..Snapshot::default()
                };
                let mut shards = Vec::new();
                let mut profiles = BTreeMap::new();
                let mut id = 0u32;
                let mut add =
                    |snap: &mut Snapshot,
                     f: u32,
                     (n, size, ex, _, _): &(usize, u64, bool, u64, bool)| {
                        id += 1;
                        snap.shards.push(shard_row(id, f, &name(*n)));
                        shards.push(ShardIn {
                            id,
                            node: name(*n),
                            size: *size,
                            excluded: *ex,
                        });
                        id
                    };
                let mut lower = 0i64;
                for (s, width) in &rs {
                    let id = add(&mut snap, 1, s);
                    snap.ranges.push(RangeRow {
                        func_id: 1,
                        lower_bound: Key::Int(lower),
                        shard_id: id,
                    });
                    if s.4 {
                        // Rows crowded towards one end by squaring.
                        let rows = s.3;
                        let cuts = (1..16)
                            .map(|i| {
                                let k = lower + (width * i * i / 256).max(0);
                                (Key::Int(k), rows * i as u64 / 16)
                            })
                            .collect();
                        profiles.insert(id, KeyProfile::Range { rows, cuts });
                    }
                    lower += width;
                }
                let mut seen = BTreeSet::new();
                for (s, point) in &hs {
                    if !seen.insert(*point) {
                        continue;
                    }
                    let id = add(&mut snap, 2, s);
                    snap.points.push(HashRow {
                        func_id: 2,
                        point: RingPoint(*point),
                        shard_id: id,
                    });
                }
                let mut value = 0;
                for (s, n) in &ls {
                    let id = add(&mut snap, 3, s);
                    let mut rows = Vec::new();
                    for j in 0..*n {
                        value += 1;
                        let v = Key::Str(format!("v{value}"));
                        snap.lists.push(ListRow {
                            func_id: 3,
                            value: v.clone(),
                            shard_id: id,
                        });
                        rows.push((v, s.3 * (j as u64 + 1) % 997));
                    }
                    if s.4 {
                        profiles.insert(id, KeyProfile::Values { values: rows });
                    }
                }
                (nodes, shards, snap, profiles)
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]
        #[test]
        fn key_moves_are_valid_lower_nothing_and_move_less_than_what_they_replace(
            (nodes, shards, snap, profiles) in fleets(),
            threshold in 0.0f64..0.3,
            max in proptest::option::of(1usize..6),
        ) {
            let limits = Limits { threshold, max_moves: max };
            let input = KeyInput { snap: &snap, profiles: &profiles };
            let whole = planner::plan(&nodes, &shards, &limits).unwrap();
            let p = plan_with_keys(&nodes, &shards, &limits, &input).unwrap();
            prop_assert_eq!(&p, &plan_with_keys(&nodes, &shards, &limits, &input).unwrap());
            let by_id: BTreeMap<u32, &ShardIn> = shards.iter().map(|s| (s.id, s)).collect();
            // Every key move is a request `move-keys` accepts: keys at the end of the
            // donor's span beside the receiver (any values of a list shard), never all of
            // them, between two nodes.
            for k in &p.key_moves {
                let f = snap.function_by_id(snap.shard(k.donor).unwrap().func_id).unwrap();
                let planned = crate::ops::keys::plan(&snap, f, &k.keys, k.receiver);
                prop_assert!(planned.is_ok(), "{:?}: {:?}", k, planned);
                prop_assert_eq!(planned.unwrap().donor, k.donor);
                prop_assert_eq!(&by_id[&k.donor].node, &k.from);
                prop_assert_eq!(&by_id[&k.receiver].node, &k.to);
                prop_assert!(k.from != k.to);
                prop_assert!(!by_id[&k.donor].excluded && !by_id[&k.receiver].excluded);
                prop_assert!(k.size >= 1 && k.size < by_id[&k.donor].size.max(2));
                prop_assert!(!nodes.iter().any(|n| n.drain && (n.name == k.from || n.name == k.to)));
            }
            // No shard takes part in two actions.
            let mut seen = BTreeSet::new();
            for s in p.moves.iter().map(|m| m.shard).chain(p.key_moves.iter().flat_map(|k| [k.donor, k.receiver])) {
                prop_assert!(seen.insert(s), "shard {} in two actions", s);
            }
            if let Some(max) = max {
                prop_assert!(p.moves.len() + p.key_moves.len() <= max);
            }
            // The per-node figures add up with the actions.
            for (i, n) in nodes.iter().enumerate() {
                let out: u64 = p.moves.iter().filter(|m| m.from == n.name).map(|m| m.size)
                    .chain(p.key_moves.iter().filter(|k| k.from == n.name).map(|k| k.size)).sum();
                let inn: u64 = p.moves.iter().filter(|m| m.to == n.name).map(|m| m.size)
                    .chain(p.key_moves.iter().filter(|k| k.to == n.name).map(|k| k.size)).sum();
                prop_assert_eq!(p.nodes[i].after + out, p.nodes[i].before + inn);
            }
            prop_assert_eq!(p.moved, p.moves.iter().map(|m| m.size).sum::<u64>() + p.key_moves.iter().map(|k| k.size).sum::<u64>());
            // Never a higher peak (relative to the average, which nothing changes) than
            // before, nor than the whole-shard plan's.
            if nodes.iter().all(|n| !n.drain) {
                prop_assert!(p.peak_after <= p.peak_before + 1e-6, "{} -> {}", p.peak_before, p.peak_after);
                prop_assert!(p.peak_after >= p.peak_lower_bound - 1e-6);
            }
            prop_assert!(p.peak_after <= whole.peak_after + 1e-6, "whole {} keys {}", whole.peak_after, p.peak_after);
            // Each node's key moves move less than the whole-shard moves off it they
            // replace; standing alone, where the whole-shard plan moved nothing off it.
            let mut per_node: BTreeMap<&str, (u64, &Reason)> = BTreeMap::new();
            for k in &p.key_moves {
                let e = per_node.entry(k.from.as_str()).or_insert((0, &k.why));
                e.0 += k.size;
                prop_assert_eq!(e.1, &k.why, "one reason per node");
            }
            for (from, (weight, why)) in per_node {
                let off: Vec<&Move> = whole.moves.iter().filter(|m| m.from == from).collect();
                match why {
                    Reason::FewerThanWholeShards { instead_of, whole_shard_weight } => {
                        prop_assert!(weight < *whole_shard_weight);
                        prop_assert_eq!(*whole_shard_weight, off.iter().map(|m| m.size).sum::<u64>());
                        prop_assert_eq!(instead_of, &off.iter().map(|m| m.shard).collect::<Vec<_>>());
                    }
                    Reason::NoWholeShardMove => prop_assert!(off.is_empty()),
                    other => prop_assert!(false, "a key move's reason {:?}", other),
                }
                prop_assert!(!p.moves.iter().any(|m| m.from == from), "both kinds off {}", from);
            }
        }
    }
}
