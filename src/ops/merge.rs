//! `shardctl merge`: which shards may become one, in which order, and how the directory
//! reads afterwards. The data path is the mover's (see [`super::mover`]): a merge is one
//! operation per retired shard, on the survivor's node; the retired shard's tables are
//! fenced, its rows copied into the survivor's tables, compared there, the mappings flipped
//! in one transaction, and the retired schemas taken out of reach before the fence lifts.

use crate::config::Inventory;
use crate::directory::shard_schema;
use crate::directory::{
    coverage, Coverage, Function, RingPoint, Shard, ShardState, ShardingType, Snapshot,
};
use crate::directory::{MergeMapping, MergePlan};
use crate::error::{Error, Result};
use crate::ident::Ident;
use crate::server::{statements, Server};

/// Whether `a` and `b` (shards of `func`) may merge, and how the mappings change when
/// `retired` joins `survivor`.
pub fn plan(snap: &Snapshot, survivor: &Shard, retired: &Shard) -> Result<MergePlan> {
    if survivor.id == retired.id {
        return Err(Error::Usage(format!(
            "shard {} cannot merge with itself",
            survivor.id
        )));
    }
    if survivor.func_id != retired.func_id {
        let name = |s: &Shard| {
            snap.function_by_id(s.func_id)
                .map(|f| f.name.clone())
                .unwrap_or_default()
        };
        return Err(Error::Usage(format!(
            "shards {} and {} belong to different functions ({} and {}): only shards of one function merge",
            survivor.id,
            retired.id,
            name(survivor),
            name(retired)
        )));
    }
    let func = snap
        .function_by_id(survivor.func_id)
        .ok_or_else(|| Error::Usage(format!("shard {} has no function", survivor.id)))?;
    let mapping = mapping(snap, func, survivor.id, retired.id)?;
    Ok(MergePlan {
        func_id: func.id,
        survivor: survivor.id,
        retired: retired.id,
        mapping,
    })
}

fn mapping(snap: &Snapshot, func: &Function, survivor: u32, retired: u32) -> Result<MergeMapping> {
    let (s, r) = (
        coverage(snap, func, survivor),
        coverage(snap, func, retired),
    );
    let not_adjacent = || {
        Error::Refused(format!(
            "shards {survivor} ({s}) and {retired} ({r}) are not adjacent: only neighbouring {} merge",
            match func.sharding_type {
                ShardingType::Range => "ranges",
                ShardingType::Hash => "arcs (consecutive ring points)",
                ShardingType::List | ShardingType::Key => "shards",
            }
        ))
    };
    match (func.sharding_type, &s, &r) {
        (_, Coverage::None, _) | (_, _, Coverage::None) => Err(Error::Refused(format!(
            "shard {} has no mapping: nothing to merge",
            if s == Coverage::None {
                survivor
            } else {
                retired
            }
        ))),
        (
            ShardingType::Range,
            Coverage::Range {
                lower: ls,
                upper: us,
            },
            Coverage::Range {
                lower: lr,
                upper: ur,
            },
        ) => {
            if us.as_ref() == Some(lr) {
                Ok(MergeMapping::Range { drop: lr.clone() })
            } else if ur.as_ref() == Some(ls) {
                Ok(MergeMapping::Range { drop: ls.clone() })
            } else {
                Err(not_adjacent())
            }
        }
        (
            ShardingType::Hash,
            Coverage::Arc {
                point: ps,
                next: ns,
                ..
            },
            Coverage::Arc {
                point: pr,
                next: nr,
                ..
            },
        ) => {
            if ns == pr {
                Ok(MergeMapping::Point { drop: pr.to_hex() })
            } else if nr == ps {
                Ok(MergeMapping::Point { drop: ps.to_hex() })
            } else {
                Err(not_adjacent())
            }
        }
        (ShardingType::List, Coverage::Values { .. }, Coverage::Values { .. }) => {
            Ok(MergeMapping::Values)
        }
        _ => Err(not_adjacent()),
    }
}

/// `snap` as it reads once `plan` has flipped: the retired shard's keys mapped to the
/// survivor, its location gone (a snapshot that has flipped already is returned as is).
pub fn after_merge(mut snap: Snapshot, plan: &MergePlan) -> Result<Snapshot> {
    if !snap.shards.iter().any(|s| s.id == plan.retired) {
        return Ok(snap);
    }
    let (f, s, r) = (plan.func_id, plan.survivor, plan.retired);
    match &plan.mapping {
        MergeMapping::Range { drop } => {
            snap.ranges.retain(|x| {
                !(x.func_id == f && &x.lower_bound == drop && (x.shard_id == s || x.shard_id == r))
            });
            for x in snap
                .ranges
                .iter_mut()
                .filter(|x| x.func_id == f && x.shard_id == r)
            {
                x.shard_id = s;
            }
        }
        MergeMapping::Point { drop } => {
            let drop = RingPoint::from_hex(drop)?;
            snap.points.retain(|x| {
                !(x.func_id == f && x.point == drop && (x.shard_id == s || x.shard_id == r))
            });
            for x in snap
                .points
                .iter_mut()
                .filter(|x| x.func_id == f && x.shard_id == r)
            {
                x.shard_id = s;
            }
        }
        MergeMapping::Values => {
            for x in snap
                .lists
                .iter_mut()
                .filter(|x| x.func_id == f && x.shard_id == r)
            {
                x.shard_id = s;
            }
        }
    }
    snap.shards.retain(|x| x.id != r);
    Ok(snap)
}

/// A merge request, checked against the directory: the survivor (the first listed shard
/// on `node`) and the retired shards in the order they join it, each adjacent to the
/// survivor's key space as it has grown by then. Pure: no server is read.
#[derive(Debug, Clone, PartialEq)]
pub struct MergeRequest {
    /// The shard that stays.
    pub survivor: u32,
    /// The shards that join it, in order, each with its plan against the directory as the
    /// earlier merges leave it.
    pub steps: Vec<MergePlan>,
}

/// Checks `shards` (at least two, distinct, known, online, of one function, adjacent)
/// and `node` (where one of them lives) and orders the merges.
pub fn request(snap: &Snapshot, shards: &[u32], node: &str) -> Result<MergeRequest> {
    if shards.len() < 2 {
        return Err(Error::Usage(
            "--shards needs at least two shards (A,B[,C...])".into(),
        ));
    }
    for (i, a) in shards.iter().enumerate() {
        if shards[..i].contains(a) {
            return Err(Error::Usage(format!(
                "shard {a} is listed twice: a shard cannot merge with itself"
            )));
        }
    }
    let found: Vec<Shard> = shards
        .iter()
        .map(|id| snap.shard(*id).cloned())
        .collect::<Result<_>>()?;
    if !snap.nodes.iter().any(|n| n.name == node) {
        return Err(Error::Usage(format!(
            "node {node:?} is not in the directory: add it with `shardctl node add {node}`"
        )));
    }
    for s in &found[1..] {
        if s.func_id != found[0].func_id {
            return Err(plan(snap, &found[0], s).expect_err("different functions"));
        }
    }
    for s in &found {
        if s.state != ShardState::Online {
            return Err(Error::Refused(format!(
                "shard {} is {}, not online",
                s.id,
                s.state.as_sql()
            )));
        }
    }
    let survivor = found
        .iter()
        .find(|s| s.node == node)
        .ok_or_else(|| {
            Error::Usage(format!(
                "none of shards {} lives on {node}: merge onto the node of one of them (it survives)",
                shards
                    .iter()
                    .map(|s| s.to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            ))
        })?
        .clone();
    let mut rest: Vec<Shard> = found.into_iter().filter(|s| s.id != survivor.id).collect();
    let mut steps = Vec::new();
    let mut now = snap.clone();
    while !rest.is_empty() {
        let next = rest
            .iter()
            .position(|r| plan(&now, &survivor, r).is_ok())
            .ok_or_else(|| {
                // The first refusal names a shard and why.
                plan(&now, &survivor, &rest[0]).expect_err("no adjacent shard")
            })?;
        let r = rest.remove(next);
        let p = plan(&now, &survivor, &r)?;
        now = after_merge(now, &p)?;
        steps.push(p);
    }
    Ok(MergeRequest {
        survivor: survivor.id,
        steps,
    })
}

/// The base tables of `schema` as (own name, comparable definition), hidden names (the
/// shard fence's `renames`: hidden, own) read back as their own; other hidden tables left
/// out.
pub fn read_tables(
    server: &mut Server,
    schema: &Ident,
    renames: &[(String, String)],
) -> Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    for t in server.tables(schema)?.into_iter().filter(|t| !t.is_view) {
        let own = match renames.iter().find(|(h, _)| h == t.name.as_str()) {
            Some((_, own)) => own.clone(),
            None if t
                .name
                .as_str()
                .starts_with(crate::server::statements::HIDDEN_PREFIX) =>
            {
                continue
            }
            None => t.name.to_string(),
        };
        let ddl = server
            .first::<(String, String)>(&statements::show_create_table(schema, &t.name, false))?
            .map(|(_, ddl)| crate::server::definitions::comparable_definition(&ddl, renames))
            .unwrap_or_default();
        out.push((own, ddl));
    }
    Ok(out)
}

/// Refuses a retired schema whose tables the survivor's cannot take: a table on one side
/// only, or defined differently.
pub fn compare_tables(
    from_schema: &Ident,
    from: &[(String, String)],
    to_schema: &Ident,
    to: &[(String, String)],
) -> Result<()> {
    for (name, ddl) in from {
        match to.iter().find(|(n, _)| n == name) {
            None => {
                return Err(Error::Refused(format!(
                    "{from_schema}.{name} has no table {to_schema}.{name} to go into: the shards' table sets differ"
                )))
            }
            Some((_, other)) if other != ddl => {
                return Err(Error::Refused(format!(
                    "{from_schema}.{name} is defined differently from {to_schema}.{name}: the survivor cannot take its rows"
                )))
            }
            Some(_) => {}
        }
    }
    if let Some((name, _)) = to.iter().find(|(n, _)| !from.iter().any(|(m, _)| m == n)) {
        return Err(Error::Refused(format!(
            "{to_schema}.{name} has no counterpart in {from_schema}: the shards' table sets differ"
        )));
    }
    Ok(())
}

/// Before anything changes (a merge whose retired shards live elsewhere moves them first):
/// for every merge of `req`, read-only, on the shards' own nodes — the survivor's schemas
/// hold the same tables defined the same way as the retired shard's, no row of either
/// lies outside its owner's keys (the survivor's must not hold the retired shard's keys),
/// and no table the directory does not map holds rows the merge would drop.
pub fn precheck(inv: &Inventory, snap: &Snapshot, req: &MergeRequest) -> Result<()> {
    let survivor = snap.shard(req.survivor)?.clone();
    let mut s = Server::connect_node(inv, &survivor.node)?;
    for step in &req.steps {
        let retired = snap.shard(step.retired)?.clone();
        let mut r = Server::connect_node(inv, &retired.node)?;
        for t in snap.tables.iter().filter(|t| t.func_id == retired.func_id) {
            let (rs, ss) = (
                Ident::new("schema", &shard_schema(&t.schema, retired.id))?,
                Ident::new("schema", &shard_schema(&t.schema, survivor.id))?,
            );
            if !r.schema_exists(&rs)? {
                return Err(Error::Refused(format!(
                    "{} has no schema {rs}",
                    retired.node
                )));
            }
            if !s.schema_exists(&ss)? {
                return Err(Error::Refused(format!(
                    "{} has no schema {ss} for the surviving shard",
                    survivor.node
                )));
            }
            let (from, to) = (
                read_tables(&mut r, &rs, &[])?,
                read_tables(&mut s, &ss, &[])?,
            );
            compare_tables(&rs, &from, &ss, &to)?;
            let table = Ident::new("table", &t.table)?;
            let column = Ident::new("column", &t.column)?;
            let foreign = crate::prune::predicate::not_owned(snap, &retired, &column)?;
            if r.first::<u8>(&statements::any_where(&rs, &table, &foreign))?
                .is_some()
            {
                return Err(Error::Refused(format!(
                    "{rs}.{table} holds rows shard {} does not own: `shardctl prune --shard {}` first",
                    retired.id, retired.id
                )));
            }
            let theirs = statements::owned(&foreign);
            if s.first::<u8>(&statements::any_where(&ss, &table, &theirs))?
                .is_some()
            {
                return Err(Error::Refused(format!(
                    "{ss}.{table} already holds rows of shard {}'s keys (an unpruned split?): prune it first, a merge would mix them",
                    retired.id
                )));
            }
        }
        crate::ops::checks::merge_loses_no_unmapped_row(
            inv,
            snap,
            &retired,
            survivor.id,
            &survivor.node,
            &[],
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::directory::*;

    fn snap(kind: ShardingType) -> Snapshot {
        let shard = |id, node: &str| Shard {
            id,
            func_id: 1,
            node: node.into(),
            host: "h".into(),
            port: 1,
            state: ShardState::Online,
            availability: crate::directory::Availability::Available,
            version: 1,
        };
        let node = |n: &str| DirNode {
            name: n.into(),
            host: "h".into(),
            port: 1,
        };
        Snapshot {
            version: 1,
            nodes: vec![node("n1"), node("n2")],
            functions: vec![Function {
                id: 1,
                name: "f".into(),
                sharding_type: kind,
                key_type: KeyType::Int,
            }],
            shards: vec![shard(1, "n1"), shard(2, "n2"), shard(3, "n1")],
            tables: vec![],
            globals: vec![],
            ranges: [(0, 1), (100, 2), (200, 3)]
                .iter()
                .map(|(l, s)| RangeRow {
                    func_id: 1,
                    lower_bound: Key::Int(*l),
                    shard_id: *s,
                })
                .collect(),
            points: [(1u128 << 120, 1), (1u128 << 124, 2), (1u128 << 126, 3)]
                .iter()
                .map(|(p, s)| HashRow {
                    func_id: 1,
                    point: RingPoint(*p),
                    shard_id: *s,
                })
                .collect(),
            lists: [(1, 1), (2, 2), (3, 3)]
                .iter()
                .map(|(v, s)| ListRow {
                    func_id: 1,
                    value: Key::Int(*v),
                    shard_id: *s,
                })
                .collect(),
        }
    }

    #[test]
    fn range_neighbours_merge_and_others_are_refused() {
        let s = snap(ShardingType::Range);
        let r = request(&s, &[1, 2], "n1").unwrap();
        assert_eq!(r.survivor, 1);
        assert_eq!(
            r.steps[0].mapping,
            MergeMapping::Range {
                drop: Key::Int(100)
            }
        );
        let after = after_merge(s.clone(), &r.steps[0]).unwrap();
        let f = after.function("f").unwrap().clone();
        assert_eq!(coverage(&after, &f, 1).to_string(), "[0, 200)");
        // Survivor above the retired one: the survivor's bound goes, the range starts lower.
        let r = request(&s, &[2, 3], "n1").unwrap();
        assert_eq!(r.survivor, 3);
        let after = after_merge(s.clone(), &r.steps[0]).unwrap();
        assert_eq!(coverage(&after, &f, 3).to_string(), "[100, ∞)");
        let e = request(&s, &[1, 3], "n1").unwrap_err();
        assert!(e.to_string().contains("not adjacent"), "{e}");
        // Three in a row, whichever survives, each joins once adjacent.
        let r = request(&s, &[3, 1, 2], "n1").unwrap();
        assert_eq!(
            r.steps.iter().map(|p| p.retired).collect::<Vec<_>>(),
            vec![2, 1]
        );
    }

    #[test]
    fn hash_arcs_merge_when_consecutive() {
        let s = snap(ShardingType::Hash);
        let r = request(&s, &[1, 2], "n1").unwrap();
        let after = after_merge(s.clone(), &r.steps[0]).unwrap();
        assert_eq!(after.points.iter().filter(|p| p.shard_id == 1).count(), 1);
        assert!(!after.points.iter().any(|p| p.shard_id == 2));
        // 3's arc wraps round to 1's point: 3 and 1 are neighbours too.
        assert!(request(&s, &[1, 3], "n1").is_ok());
        let two = after_merge(
            s.clone(),
            &plan(&s, s.shard(1).unwrap(), s.shard(2).unwrap()).unwrap(),
        )
        .unwrap();
        // Two shards left on the ring: each arc ends at the other's point.
        assert!(request(&two, &[3, 1], "n1").is_ok());
    }

    #[test]
    fn bad_requests_name_the_culprit() {
        let s = snap(ShardingType::List);
        assert!(request(&s, &[1, 1], "n1")
            .unwrap_err()
            .to_string()
            .contains("listed twice"));
        assert!(request(&s, &[1], "n1")
            .unwrap_err()
            .to_string()
            .contains("at least two"));
        assert!(request(&s, &[1, 9], "n1")
            .unwrap_err()
            .to_string()
            .contains("unknown shard 9"));
        assert!(request(&s, &[2, 3], "n9")
            .unwrap_err()
            .to_string()
            .contains("not in the directory"));
        let e = request(&s, &[2], "n2").unwrap_err();
        assert!(e.to_string().contains("at least two"), "{e}");
        let e = request(&s, &[2, 3], "n2").unwrap();
        assert_eq!(e.survivor, 2);
        let mut other = s.clone();
        other.functions.push(Function {
            id: 2,
            name: "g".into(),
            sharding_type: ShardingType::List,
            key_type: KeyType::Int,
        });
        other.shards[2].func_id = 2;
        let e = request(&other, &[1, 3], "n1").unwrap_err();
        assert!(e.to_string().contains("different functions"), "{e}");
        let e = request(&s, &[1, 3], "n2").unwrap_err();
        assert!(
            e.to_string().contains("none of shards 1,3 lives on n2"),
            "{e}"
        );
    }
}
