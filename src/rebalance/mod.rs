//! Rebalancing: a pure planner (`planner` for whole shards, `boundary` for key moves), the
//! reading of sizes and key distributions it plans from (`profile`), plan files, and
//! `apply`, which runs a plan's moves and key moves with concurrency limits.

pub mod boundary;
pub mod planner;
pub mod profile;

use crate::config::Inventory;
use crate::directory::Directory;
use crate::error::{Error, Result};
use crate::ops::mover::{Mover, StepEvent};
use crate::playbook::Playbook;
pub use crate::status::SizeSource;
use planner::{Limits, NodeIn, Plan, PlannedKeys, Reason, ShardIn};
use serde::{Deserialize, Serialize};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Instant;

/// What a shard weighs for balancing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Weight {
    /// Data plus index bytes.
    Size,
    /// Estimated rows.
    Rows,
    /// Every shard weighs the same.
    Count,
    /// Load: a metrics file's figures, or table I/O counters from performance_schema.
    Load,
}

/// A plan file: the moves, stamped with the directory version they were planned from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanFile {
    /// Directory version the plan was made from.
    pub directory_version: u64,
    /// What shards were weighed by.
    pub by: Weight,
    /// The actions: whole-shard moves and key moves.
    pub moves: Vec<PlannedMove>,
    /// The limits the plan was made under; `apply --replan` plans again under the same.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<PlanLimits>,
    /// Where the shard sizes came from: `exact` (statistics refreshed first) or
    /// `statistics`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_source: Option<SizeSource>,
    /// Shards with a prune pending when planned: their sizes (and their nodes' totals)
    /// still count the rows they no longer own, so the plan weighs those twice.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unpruned_shards: Vec<u32>,
}

/// The limits of `rebalance plan`, recorded in the plan file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanLimits {
    /// `--threshold`.
    pub threshold: f64,
    /// `--max-moves`.
    #[serde(default)]
    pub max_moves: Option<usize>,
    /// `--drain`.
    #[serde(default)]
    pub drain: Vec<String>,
    /// `--exclude-shard`.
    #[serde(default)]
    pub exclude_shard: Vec<u32>,
    /// `--metrics`.
    #[serde(default)]
    pub metrics: Option<std::path::PathBuf>,
    /// `--no-key-moves`: whole-shard moves only.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_key_moves: bool,
}

impl PlanLimits {
    /// The planner's limits.
    pub fn limits(&self) -> Limits {
        Limits {
            threshold: self.threshold,
            max_moves: self.max_moves,
        }
    }
}

/// What one action of a plan runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Action {
    /// `shardctl move`: a whole shard to another node.
    #[serde(rename = "move")]
    Move,
    /// `shardctl move-keys`: some of a shard's keys to a neighbour on another node.
    #[serde(rename = "move-keys")]
    MoveKeys,
}

impl Action {
    /// The command's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Move => "move",
            Action::MoveKeys => "move-keys",
        }
    }
}

/// One planned action: a whole-shard move, or a key move.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlannedMove {
    /// `move` or `move-keys` (plan files made before key moves call it `step`).
    #[serde(alias = "step")]
    pub action: Action,
    /// The shard to move; for a key move, the shard that gives the keys.
    pub shard: u32,
    /// The node it is on when planned (apply refuses a plan whose shard moved since).
    pub from: String,
    /// The node it (or the keys) go to.
    pub to: String,
    /// A key move: the shard on `to` that takes the keys.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to_shard: Option<u32>,
    /// A key move: the keys, as `move-keys` takes them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keys: Option<PlannedKeys>,
    /// Its weight (for a key move, estimated).
    pub weight: u64,
    /// The shard's data plus index bytes when planned; for a key move, the estimated
    /// bytes of its keys (the donor's bytes times their share of its rows).
    #[serde(default)]
    pub bytes: u64,
    /// A key move: the estimated rows of its keys, all the donor's tables together.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows: Option<u64>,
    /// Why the planner chose this action (plans made before key moves have none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<Reason>,
}

impl PlannedMove {
    /// The shards the action involves: the moved shard, or the donor and the receiver.
    pub fn shards(&self) -> Vec<u32> {
        let mut v = vec![self.shard];
        v.extend(self.to_shard);
        v
    }
}

/// Plans from the live fleet: exact sizes from every node (statistics refreshed first, a
/// few queries each), capacities from the inventory.
pub fn plan_fleet(
    inv: &Inventory,
    by: Weight,
    limits: &Limits,
    drain: &[String],
    exclude: &[u32],
) -> Result<(Plan, PlanFile)> {
    plan_fleet_with(
        inv,
        by,
        None,
        SizeSource::Exact,
        limits,
        drain,
        exclude,
        true,
    )
}

/// Reads a metrics file: a YAML map from shard id to its load.
pub fn read_metrics(path: &std::path::Path) -> Result<std::collections::BTreeMap<u32, u64>> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::Config(format!("cannot read metrics {}: {e}", path.display())))?;
    serde_yaml::from_str(&text).map_err(|e| {
        let loc = e
            .location()
            .map(|l| format!(":{}:{}", l.line(), l.column()))
            .unwrap_or_default();
        Error::Config(format!(
            "{}{loc}: {e} (expected shard id: load)",
            path.display()
        ))
    })
}

/// [`plan_fleet`], with each shard's load from `metrics` when weighing by load, and sizes
/// from `sizes`. Weighed by count, only moves that lower the peak are kept
/// ([`planner::keep_peak_lowering`]). Weighed by size or rows with `key_moves`, the
/// candidate donors' key distributions are read ([`profile`]) and key moves are proposed
/// where they beat whole-shard moves ([`boundary::plan_with_keys`]); by count or load a
/// key move's share of the weight is unknown, and only whole shards move.
#[allow(clippy::too_many_arguments)]
pub fn plan_fleet_with(
    inv: &Inventory,
    by: Weight,
    metrics: Option<&std::collections::BTreeMap<u32, u64>>,
    sizes: SizeSource,
    limits: &Limits,
    drain: &[String],
    exclude: &[u32],
    key_moves: bool,
) -> Result<(Plan, PlanFile)> {
    let fleet = crate::status::gather_fleet_sized(inv, &[], sizes)?;
    if let Some(e) = crate::status::first_error(fleet.errors) {
        return Err(e);
    }
    let version = fleet
        .directory_version
        .ok_or_else(|| Error::Usage("no sharding directory: run `shardctl init` first".into()))?;
    let snap = Directory::open(inv)?.load()?;
    for d in drain {
        if !snap.nodes.iter().any(|n| &n.name == d) {
            return Err(Error::Usage(format!(
                "--drain {d}: not a node of the directory"
            )));
        }
    }
    for x in exclude {
        snap.shard(*x)?;
    }
    let mut nodes = Vec::new();
    for n in &snap.nodes {
        let spec = inv.node(&n.name)?;
        let capacity = spec.spec.capacity.ok_or_else(|| {
            Error::Config(format!(
                "node {} has no capacity in the inventory (capacity: 1.0, ...)",
                n.name
            ))
        })?;
        nodes.push(NodeIn {
            name: n.name.clone(),
            capacity,
            drain: drain.contains(&n.name),
        });
    }
    let load = match (by, metrics) {
        (Weight::Load, Some(m)) => {
            for s in &fleet.shards {
                if !m.contains_key(&s.id) {
                    return Err(Error::Config(format!(
                        "the metrics file has no load for shard {}",
                        s.id
                    )));
                }
            }
            m.clone()
        }
        (Weight::Load, None) => {
            let mut per_node = std::collections::BTreeMap::new();
            for n in &snap.nodes {
                let io = crate::server::Server::connect_node(inv, &n.name)?
                    .table_io_by_schema()?
                    .ok_or_else(|| {
                        Error::Usage(format!(
                            "performance_schema is off on {}: give the load with --metrics FILE",
                            n.name
                        ))
                    })?;
                per_node.insert(n.name.clone(), io);
            }
            fleet
                .shards
                .iter()
                .map(|s| {
                    let io = per_node.get(&s.node);
                    (
                        s.id,
                        s.schemas
                            .iter()
                            .map(|sc| io.and_then(|m| m.get(sc)).copied().unwrap_or(0))
                            .sum(),
                    )
                })
                .collect()
        }
        _ => std::collections::BTreeMap::new(),
    };
    let shards: Vec<ShardIn> = fleet
        .shards
        .iter()
        .map(|s| ShardIn {
            id: s.id,
            node: s.node.clone(),
            size: match by {
                Weight::Size => s.bytes,
                Weight::Rows => s.rows,
                Weight::Count => 1,
                Weight::Load => load.get(&s.id).copied().unwrap_or(0),
            },
            excluded: exclude.contains(&s.id) || s.operation.is_some(),
        })
        .collect();
    let with_keys = key_moves && matches!(by, Weight::Size | Weight::Rows);
    let mut plan = if with_keys {
        let mut profiles = std::collections::BTreeMap::new();
        for id in boundary::donor_candidates(&nodes, &shards, limits, &snap) {
            // A shard whose keys cannot be read gives none in this plan; the plan stands.
            match profile::profile(inv, &snap, id) {
                Ok(Some(p)) => {
                    profiles.insert(id, p);
                }
                Ok(None) => {}
                Err(e) => crate::output::log(
                    0,
                    &format!(
                        "rebalance: cannot read the key distribution of shard {id} ({e}); it gives no keys in this plan"
                    ),
                ),
            }
        }
        let input = boundary::KeyInput {
            snap: &snap,
            profiles: &profiles,
        };
        boundary::plan_with_keys(&nodes, &shards, limits, &input)
    } else {
        planner::plan(&nodes, &shards, limits)
    }
    .map_err(|e| Error::Usage(e.to_string()))?;
    if by == Weight::Count {
        plan = planner::keep_peak_lowering(&nodes, plan);
    }
    let size_of = |shard: u32| {
        fleet
            .shards
            .iter()
            .find(|s| s.id == shard)
            .map_or((0, 0), |s| (s.bytes, s.rows))
    };
    let mut actions: Vec<PlannedMove> = plan
        .moves
        .iter()
        .map(|m| PlannedMove {
            action: Action::Move,
            shard: m.shard,
            from: m.from.clone(),
            to: m.to.clone(),
            to_shard: None,
            keys: None,
            weight: m.size,
            bytes: size_of(m.shard).0,
            rows: None,
            why: Some(m.why.clone()),
        })
        .collect();
    actions.extend(plan.key_moves.iter().map(|k| {
        let (bytes, rows) = size_of(k.donor);
        PlannedMove {
            action: Action::MoveKeys,
            shard: k.donor,
            from: k.from.clone(),
            to: k.to.clone(),
            to_shard: Some(k.receiver),
            keys: Some(PlannedKeys::from(&k.keys)),
            weight: k.size,
            bytes: (bytes as f64 * k.share).round() as u64,
            rows: Some((rows as f64 * k.share).round() as u64),
            why: Some(k.why.clone()),
        }
    }));
    actions.sort_by(|a, b| b.weight.cmp(&a.weight).then(a.shard.cmp(&b.shard)));
    let file = PlanFile {
        directory_version: version,
        by,
        moves: actions,
        limits: None,
        unpruned_shards: fleet
            .shards
            .iter()
            .filter(|s| s.unpruned)
            .map(|s| s.id)
            .collect(),
        // What the sizes really came from: a shard whose statistics could not be
        // refreshed makes the whole plan's `statistics`.
        size_source: Some(
            if fleet
                .shards
                .iter()
                .all(|s| s.size_source == SizeSource::Exact)
            {
                sizes
            } else {
                SizeSource::Statistics
            },
        ),
    };
    Ok((plan, file))
}

/// Plans from the live fleet under `limits` (see [`plan_fleet_with`]) and records the
/// limits in the plan file, so `rebalance apply --replan` can plan again under them.
pub fn plan_recording_limits(
    inv: &Inventory,
    by: Weight,
    sizes: crate::status::SizeSource,
    limits: PlanLimits,
) -> Result<(planner::Plan, PlanFile)> {
    let metrics = limits.metrics.as_deref().map(read_metrics).transpose()?;
    let (plan, mut file) = plan_fleet_with(
        inv,
        by,
        metrics.as_ref(),
        sizes,
        &limits.limits(),
        &limits.drain,
        &limits.exclude_shard,
        !limits.no_key_moves,
    )?;
    file.limits = Some(limits);
    Ok((plan, file))
}

/// Writes a plan file (YAML) for `rebalance apply`.
pub fn save_plan(file: &PlanFile, path: &std::path::Path) -> Result<()> {
    let text = serde_yaml::to_string(file).map_err(|e| Error::Config(e.to_string()))?;
    std::fs::write(path, text).map_err(|e| Error::io(format!("cannot write {}", path.display()), e))
}

/// A plan made again by `rebalance apply --replan`.
#[derive(Debug, Clone)]
pub struct Replanned {
    /// The new plan.
    pub file: PlanFile,
    /// The limits it was made under (the old plan's).
    pub limits: PlanLimits,
    /// How many moves the old plan had.
    pub old_moves: usize,
}

/// `rebalance apply --replan`: when the directory moved on since `file` was planned, plans
/// again with exact sizes under the limits the file records; `None` when the directory is
/// still at the plan's version. A plan that records no limits is refused, naming `path`.
pub fn replan_if_changed(
    inv: &Inventory,
    file: &PlanFile,
    path: &std::path::Path,
) -> Result<Option<Replanned>> {
    if Directory::open(inv)?.version()? == file.directory_version {
        return Ok(None);
    }
    let Some(limits) = file.limits.clone() else {
        return Err(Error::Config(format!(
            "{}: the plan records no limits to plan again under: make a new one with `shardctl rebalance plan`",
            path.display()
        )));
    };
    let (_, new) = plan_recording_limits(
        inv,
        file.by,
        crate::status::SizeSource::Exact,
        limits.clone(),
    )?;
    Ok(Some(Replanned {
        file: new,
        limits,
        old_moves: file.moves.len(),
    }))
}

/// Reads and checks a plan file (unknown keys, actions, shards or nodes, wrong source, a
/// key move's keys of the wrong type or missing).
pub fn load_plan(inv: &Inventory, path: &std::path::Path) -> Result<PlanFile> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::Config(format!("cannot read plan {}: {e}", path.display())))?;
    let mut file: PlanFile = serde_yaml::from_str(&text).map_err(|e| {
        let loc = e
            .location()
            .map(|l| format!(":{}:{}", l.line(), l.column()))
            .unwrap_or_default();
        Error::Config(format!("{}{loc}: {e}", path.display()))
    })?;
    let snap = Directory::open(inv)?.load()?;
    let at = |i: usize, field: &str| format!("{}: moves[{i}].{field}", path.display());
    for (i, m) in file.moves.iter_mut().enumerate() {
        snap.shard(m.shard)
            .map_err(|_| Error::Config(format!("{}: unknown shard {}", at(i, "shard"), m.shard)))?;
        for (field, n) in [("from", &m.from), ("to", &m.to)] {
            if !snap.nodes.iter().any(|d| &d.name == n) {
                return Err(Error::Config(format!(
                    "{}: unknown node {n:?}",
                    at(i, field)
                )));
            }
        }
        match (m.action, m.to_shard, &mut m.keys) {
            (Action::Move, None, None) => {}
            (Action::Move, ..) => {
                return Err(Error::Config(format!(
                    "{}: a whole-shard move takes no to_shard or keys (action move-keys does)",
                    at(i, "action")
                )))
            }
            (Action::MoveKeys, Some(r), Some(keys)) => {
                snap.shard(r).map_err(|_| {
                    Error::Config(format!("{}: unknown shard {r}", at(i, "to_shard")))
                })?;
                let func = snap
                    .function_by_id(snap.shard(m.shard)?.func_id)
                    .ok_or_else(|| Error::Internal(format!("shard {} has no function", m.shard)))?;
                *keys = typed(keys, func.key_type)
                    .map_err(|e| Error::Config(format!("{}: {e}", at(i, "keys"))))?;
            }
            (Action::MoveKeys, ..) => {
                return Err(Error::Config(format!(
                    "{}: a key move needs to_shard and keys",
                    at(i, "action")
                )))
            }
        }
    }
    Ok(file)
}

/// A plan file's keys read as the function's: YAML reads an unquoted number as an integer,
/// a quoted one as a string, whatever the function's key type.
fn typed(keys: &PlannedKeys, kt: crate::directory::KeyType) -> Result<PlannedKeys> {
    let key = |k: &crate::directory::Key| kt.parse(&k.to_string());
    Ok(match keys {
        PlannedKeys::Range { lower, upper } => PlannedKeys::Range {
            lower: key(lower)?,
            upper: key(upper)?,
        },
        PlannedKeys::Arc { after, up_to } => {
            crate::directory::RingPoint::from_hex(after)?;
            crate::directory::RingPoint::from_hex(up_to)?;
            keys.clone()
        }
        PlannedKeys::Values { values } => PlannedKeys::Values {
            values: values.iter().map(key).collect::<Result<_>>()?,
        },
    })
}

/// One action as `apply` ran it.
#[derive(Debug, Clone, Serialize)]
pub struct Applied {
    /// `move` or `move-keys`.
    pub action: Action,
    /// The shard moved (a key move: the donor).
    pub shard: u32,
    /// A key move: the shard that took the keys.
    pub to_shard: Option<u32>,
    /// The node it went to (or was to).
    pub to: String,
    /// Seconds from the start of `apply` when it began.
    pub started: f64,
    /// Seconds from the start of `apply` when it ended.
    pub ended: f64,
    /// Error, if it failed.
    pub error: Option<String>,
}

/// The actions of an `apply` in flight, and which may start next.
#[derive(Debug, Default)]
struct InFlight {
    running: usize,
    per_node: std::collections::HashMap<String, usize>,
    pairs: std::collections::HashSet<(String, String)>,
}

impl InFlight {
    /// Whether `m` may start: fewer than `parallel` actions running, fewer than `per_node`
    /// involving either of its nodes, and for a whole-shard move none from its source to
    /// its target (a replica takes one replication connection per source: MariaDB and
    /// MySQL refuse a second channel to the same server). A key move's change stream is no
    /// channel: it counts only against the two limits.
    fn admits(&self, m: &PlannedMove, parallel: usize, per_node: usize) -> bool {
        let busy = |n: &str| self.per_node.get(n).copied().unwrap_or(0);
        self.running < parallel
            && busy(&m.from) < per_node
            && busy(&m.to) < per_node
            && (m.action == Action::MoveKeys
                || !self.pairs.contains(&(m.from.clone(), m.to.clone())))
    }

    fn start(&mut self, m: &PlannedMove) {
        self.running += 1;
        *self.per_node.entry(m.from.clone()).or_default() += 1;
        *self.per_node.entry(m.to.clone()).or_default() += 1;
        if m.action == Action::Move {
            self.pairs.insert((m.from.clone(), m.to.clone()));
        }
    }

    fn end(&mut self, m: &PlannedMove) {
        self.running -= 1;
        *self.per_node.entry(m.from.clone()).or_default() -= 1;
        *self.per_node.entry(m.to.clone()).or_default() -= 1;
        if m.action == Action::Move {
            self.pairs.remove(&(m.from.clone(), m.to.clone()));
        }
    }
}

/// A key move's function name and request, as the mover takes them.
fn key_request(
    snap: &crate::directory::Snapshot,
    m: &PlannedMove,
) -> Result<(String, crate::ops::keys::KeyRequest, u32)> {
    let (Some(receiver), Some(keys)) = (m.to_shard, &m.keys) else {
        return Err(Error::Internal(format!(
            "the key move of shard {} has no receiver or keys",
            m.shard
        )));
    };
    let func = snap
        .function_by_id(snap.shard(m.shard)?.func_id)
        .ok_or_else(|| Error::Internal(format!("shard {} has no function", m.shard)))?;
    Ok((func.name.clone(), keys.request()?, receiver))
}

/// Refuses a plan that does not fit the directory: an action whose `from` (or a key move's
/// `to`) is not where its shard lives, a shard in two actions, a move onto the shard's own
/// node, a key move `move-keys` would refuse (named as `ops::keys::plan` names it).
fn check_against(snap: &crate::directory::Snapshot, file: &PlanFile) -> Result<()> {
    let mut seen = std::collections::HashMap::new();
    for (i, m) in file.moves.iter().enumerate() {
        for shard in m.shards() {
            if let Some(first) = seen.insert(shard, i) {
                return Err(Error::Refused(format!(
                    "moves[{i}]: the plan moves shard {shard} more than once (also moves[{first}])"
                )));
            }
        }
        let at = &snap.shard(m.shard)?.node;
        if at != &m.from {
            return Err(Error::Refused(format!(
                "moves[{i}]: the plan moves shard {} from {}, but it lives on {at}",
                m.shard, m.from
            )));
        }
        if m.from == m.to {
            return Err(Error::Refused(format!(
                "moves[{i}]: the plan moves shard {} onto its own node {}",
                m.shard, m.to
            )));
        }
        if m.action == Action::MoveKeys {
            let (function, request, receiver) = key_request(snap, m)?;
            let there = &snap.shard(receiver)?.node;
            if there != &m.to {
                return Err(Error::Refused(format!(
                    "moves[{i}]: the plan gives keys to shard {receiver} on {}, but it lives on {there}",
                    m.to
                )));
            }
            let func = snap.function(&function)?;
            let planned = crate::ops::keys::plan(snap, func, &request, receiver)
                .map_err(|e| Error::Refused(format!("moves[{i}]: {e}")))?;
            if planned.donor != m.shard {
                return Err(Error::Refused(format!(
                    "moves[{i}]: {request} belong to shard {}, not {}",
                    planned.donor, m.shard
                )));
            }
        }
    }
    Ok(())
}

/// The dry run of a plan: each action's own dry run (the real procedure, read-only, every
/// effect recorded), in the plan's order. Refused as `apply` would refuse: a plan made
/// from another directory version, an action that does not fit the directory.
pub fn dry_run(inv: &Inventory, file: &PlanFile) -> Result<Vec<crate::ops::effects::DryRunPlan>> {
    let mut dir = Directory::open(inv)?;
    let now = dir.version()?;
    if now != file.directory_version {
        return Err(Error::Refused(format!(
            "the plan was made from directory version {}, the directory is at {now}: plan again",
            file.directory_version
        )));
    }
    let snap = dir.load()?;
    check_against(&snap, file)?;
    let quiet = |_: &StepEvent| {};
    let mut out = Vec::new();
    for m in &file.moves {
        out.push(match m.action {
            Action::Move => {
                Mover::dry_run_move(inv, m.shard, &m.to, Playbook::default_move(), &quiet)?
            }
            Action::MoveKeys => {
                let (function, request, receiver) = key_request(&snap, m)?;
                Mover::dry_run_key_move(
                    inv,
                    &function,
                    &request,
                    receiver,
                    Playbook::default_move_keys(),
                    &quiet,
                )?
            }
        });
    }
    Ok(out)
}

/// Runs a plan's actions in its order, at most `parallel` at once, at most `per_node`
/// involving any one node, and never two whole-shard moves from one node to the same other
/// node at once. Whole shards go through `move`, key moves through `move-keys` (each a
/// journaled, resumable operation of its own). Refuses a plan made from an older directory
/// version.
pub fn apply(
    inv: &Inventory,
    file: &PlanFile,
    parallel: usize,
    per_node: usize,
    on_event: &(dyn Fn(&StepEvent) + Sync),
    on_done: &(dyn Fn(&Applied, usize, usize) + Sync),
) -> Result<Vec<Applied>> {
    if parallel == 0 || per_node == 0 {
        return Err(Error::Usage(
            "--parallel and --per-node must be at least 1".into(),
        ));
    }
    let mut dir = Directory::open(inv)?;
    let now = dir.version()?;
    if now != file.directory_version {
        return Err(Error::Refused(format!(
            "the plan was made from directory version {}, the directory is at {now}: plan again",
            file.directory_version
        )));
    }
    let snap = dir.load()?;
    check_against(&snap, file)?;
    let started = Instant::now();
    let state = Arc::new((Mutex::new(InFlight::default()), Condvar::new()));
    let results = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for m in &file.moves {
            // Wait for a slot that keeps both limits.
            {
                let (lock, cv) = &*state;
                let mut g = lock.lock().expect("scheduler");
                while !g.admits(m, parallel, per_node) {
                    g = cv.wait(g).expect("scheduler");
                }
                g.start(m);
            }
            let state = Arc::clone(&state);
            let results = &results;
            let snap = &snap;
            s.spawn(move || {
                let t0 = started.elapsed().as_secs_f64();
                let r = (|| -> Result<()> {
                    let mut mover = match m.action {
                        Action::Move => {
                            Mover::start(inv, m.shard, &m.to, Playbook::default_move(), on_event)?
                        }
                        Action::MoveKeys => {
                            let (function, request, receiver) = key_request(snap, m)?;
                            Mover::start_key_move(
                                inv,
                                &function,
                                &request,
                                receiver,
                                Playbook::default_move_keys(),
                                on_event,
                            )?
                        }
                    };
                    mover.run().map(|_| ())
                })();
                let applied = Applied {
                    action: m.action,
                    shard: m.shard,
                    to_shard: m.to_shard,
                    to: m.to.clone(),
                    started: t0,
                    ended: started.elapsed().as_secs_f64(),
                    error: r.err().map(|e| e.to_string()),
                };
                let done = {
                    let mut all = results.lock().expect("results");
                    all.push(applied.clone());
                    all.len()
                };
                on_done(&applied, done, file.moves.len());
                let (lock, cv) = &*state;
                lock.lock().expect("scheduler").end(m);
                cv.notify_all();
            });
        }
    });
    let mut out = results.into_inner().expect("results");
    out.sort_by(|a, b| {
        a.started
            .partial_cmp(&b.started)
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mv(shard: u32, from: &str, to: &str) -> PlannedMove {
        PlannedMove {
            action: Action::Move,
            shard,
            from: from.into(),
            to: to.into(),
            to_shard: None,
            keys: None,
            weight: 1,
            bytes: 0,
            rows: None,
            why: None,
        }
    }

    #[test]
    fn two_moves_between_the_same_two_nodes_never_run_at_once() {
        let mut f = InFlight::default();
        let first = mv(1, "node1", "node2");
        assert!(f.admits(&first, 2, 2));
        f.start(&first);
        // Within both limits, but the replica would need a second channel from node1.
        assert!(!f.admits(&mv(3, "node1", "node2"), 2, 2));
        // The other direction and another target are other channels.
        assert!(f.admits(&mv(4, "node2", "node1"), 2, 2));
        let other = mv(2, "node1", "node3");
        assert!(f.admits(&other, 2, 2));
        f.start(&other);
        // The limits still hold.
        assert!(!f.admits(&mv(5, "node3", "node4"), 2, 2));
        assert!(!f.admits(&mv(5, "node1", "node4"), 3, 2));
        f.end(&first);
        assert!(f.admits(&mv(3, "node1", "node2"), 2, 2));
        f.end(&other);
        assert_eq!(f.running, 0);
        assert!(f.pairs.is_empty());
    }

    #[test]
    fn a_key_move_needs_no_channel_but_keeps_the_limits() {
        let mut f = InFlight::default();
        f.start(&mv(1, "node1", "node2"));
        let keys = PlannedMove {
            action: Action::MoveKeys,
            to_shard: Some(4),
            ..mv(3, "node1", "node2")
        };
        assert!(
            f.admits(&keys, 2, 2),
            "a change stream, not a second channel"
        );
        assert!(!f.admits(&keys, 1, 2), "--parallel");
        assert!(!f.admits(&keys, 2, 1), "--per-node");
        f.start(&keys);
        f.end(&keys);
        assert_eq!(
            f.pairs.len(),
            1,
            "the whole-shard move's channel is still held"
        );
    }
}
