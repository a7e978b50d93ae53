//! `shardctl move` and `split`: the chapter's procedure as journaled, idempotent steps.
//!
//! The parts:
//! - this file, the driver: starts or loads an operation, runs its steps in order, and
//!   journals every effect on a server or the directory before and after it happens
//!   ([`Mover::effect`]);
//! - [`crate::directory::owner`]: the lease (one owner at a time, an epoch every journal write checks) and the
//!   heartbeat that keeps it and carries an operator's stop request;
//! - `procedure`: the steps themselves;
//! - `recovery`: what the servers and the directory really look like after a crash, and
//!   how to go forward (after the flip) or back (before it) from there.
//!
//! The fences:
//! - `shard`: the shard's tables are renamed inside their schemas to hidden names, unlogged
//!   (`sql_log_bin = 0`), in one atomic `RENAME TABLE` that waits for in-flight
//!   transactions. Clients of this shard get "table doesn't exist" (1146) and look the
//!   shard up again; other shards on the server keep writing.
//! - `read-only`: the chapter's `SET GLOBAL read_only = ON` on the whole source server,
//!   counted in the directory so that of two operations fencing one node, the first to
//!   finish never lifts the other's fence.
//!
//! The final position is read only after the fence is up; the directory flips only after
//! the target reached it and every table matched; the old copy is dropped before the
//! fence is lifted. A failure before the flip lifts the fence and leaves the shard on the
//! source; after the flip only forward.

mod fencing;
mod gate;
mod group;
mod keymove;
mod kind;
mod local;
pub use kind::OperationPlan;
mod merges;
mod phases;
mod procedure;
mod recovery;
#[cfg(test)]
mod recovery_tests;
pub mod requests;
mod revert;

use crate::directory::owner::Heartbeat;
pub use merges::{run_merge_request, MergeOperation, MergeRun};
pub use recovery::{abort, flip_by_hand, stop, StopOutcome};

use crate::config::Inventory;
use crate::copy::{self, SchemaPair};
pub use crate::directory::journal::Effect;
use crate::directory::journal::{
    EffectState, Lease, NewOperation, OpKind, OpState, OperationParams, OperationRecord, StepState,
};
use crate::directory::phase::{Phase, Transition};
use crate::directory::{Directory, Shard, ShardState, ShardingType, Snapshot};
use crate::error::{Error, Result};
use crate::ident::{Channel, Ident};
pub use crate::ops::effects::Live;
use crate::ops::effects::{DryRun, DryRunPlan, Effects};
use crate::playbook::{Fence, Playbook, Step};
use crate::server::replication::{Coordinates, ServerIdentity};
use crate::server::BinlogPosition;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::Instant;

/// What the steps have established so far; journaled after every step so a resumed run
/// starts from exactly this (checked against the servers first).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct MoveState {
    /// The backup's coordinates on the source.
    pub coordinates: Option<Coordinates>,
    /// Rows copied.
    pub copied_rows: u64,
    /// The fence that is up, if any.
    pub fence: Option<Fence>,
    /// Tables renamed by the shard fence.
    pub fenced_tables: Vec<crate::ops::fence::Fenced>,
    /// The source position read after the fence.
    pub final_position: Option<BinlogPosition>,
    /// The target's binary-log position read under the fence just before the flip: the
    /// first of its events that the directory's new placement can have caused (a revert
    /// window's reverse channel and a reporting server start there).
    #[serde(default)]
    pub target_position_at_flip: Option<BinlogPosition>,
    /// Milliseconds from fence up to fence lifted (or to flip for the shard fence).
    pub fence_millis: Option<u64>,
    /// Milliseconds the old copy's trash took to drop, after the fence was lifted.
    #[serde(default)]
    pub trash_drop_millis: Option<u64>,
    /// Confirmed under the fence: the flip may go ahead.
    pub verified: bool,
    /// The last verification at a consistent point, outside the fence.
    #[serde(default)]
    pub verified_point: Option<VerifiedPoint>,
    /// The directory points at the target.
    pub flipped: bool,
    /// The source copy is gone (or renamed out of reach).
    pub source_dropped: bool,
    /// Whether target schemas were created by this operation.
    pub target_created: bool,
    /// A split onto its own node: the triggers its copy left out, created under the fence
    /// once the change stream stopped at the final position, as (schema, definition with
    /// its creation context).
    #[serde(default)]
    pub local_ddl: Vec<(String, crate::copy::objects::ObjectDef)>,
    /// When the source's server had started, read as the fence went up: a restart since
    /// means a read-only fence silently went away.
    #[serde(default)]
    pub fenced_server_started_at: Option<i64>,
    /// The source's and the target's servers as read at the copy: every step before the
    /// flip checks that the same servers answer, with binary logs that only went forward.
    #[serde(default)]
    pub identity: Option<Identities>,
    /// Why the operation may not go on: a server changed under it (see `identity`). Kept
    /// until `abort`, so `resume` refuses with the same line.
    #[serde(default)]
    pub identity_refusal: Option<String>,
    /// Revert window: when it closes (Unix time).
    #[serde(default)]
    pub revert_until_unix: Option<i64>,
    /// Revert window: a revert got as far as reading the objects (and maybe fencing the
    /// target); recovery reads the servers from there.
    #[serde(default)]
    pub revert_began: bool,
    /// Revert window: the target's tables renamed by the revert's fence.
    #[serde(default)]
    pub revert_fenced_tables: Vec<crate::ops::fence::Fenced>,
    /// Revert window: the views, routines, triggers and events read from the target before
    /// the revert's fence, to create on the source, as (schema, definition).
    #[serde(default)]
    pub revert_ddl: Vec<(String, crate::copy::objects::ObjectDef)>,
    /// Revert window: the directory points at the source again.
    #[serde(default)]
    pub reverted: bool,
    /// Revert window: the old copy is back under the shard's name on the source (before the
    /// revert's flip, under its fence).
    #[serde(default)]
    pub revert_installed: bool,
    /// Revert window: milliseconds from the revert's fence to the old copy back in place.
    #[serde(default)]
    pub revert_fence_millis: Option<u64>,
    /// Revert window: the last revert that failed before its flip, and why.
    #[serde(default)]
    pub revert_error: Option<String>,
    /// Revert window: why its end (expiry or `finalize`) keeps the old copy for now — the
    /// new node does not answer or does not hold the shard (see `new_node_holds_shard`).
    /// Cleared when the old copy goes.
    #[serde(default)]
    pub window_held: Option<String>,
    /// Revert window closed: the copy left behind (the old one, or the target's after a
    /// revert) is gone.
    #[serde(default)]
    pub old_copy_dropped: bool,
}

/// The two servers of a move as read at its copy.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Identities {
    /// The source's server: the copy's data and the channel's events come from its binary log.
    pub source: ServerIdentity,
    /// The target's server: it holds the copy and the channel.
    pub target: ServerIdentity,
}

/// Where the `verify` step found the target equal to the source.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct VerifiedPoint {
    /// When it ended, as a Unix time on the directory's clock (its age is measured there,
    /// whichever host resumes).
    pub at_unix: i64,
    /// The source position of its last round.
    pub position: Option<BinlogPosition>,
    /// The tables it compared, `schema.table` on the target.
    pub tables: Vec<String>,
    /// A digest of each table's definition on the source as compared then (`confirm`
    /// compares a table whose definition changed since in full).
    #[serde(default)]
    pub definitions: Vec<(String, String)>,
}

/// What a [`StepEvent`] reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StepEventKind {
    /// The step began.
    Started,
    /// The step finished.
    Done,
    /// The step failed; the operation stops.
    Failed,
}

impl StepEventKind {
    /// The word shown in logs and in JSON (`step_<word>` as the event's name).
    pub fn as_str(self) -> &'static str {
        match self {
            StepEventKind::Started => "started",
            StepEventKind::Done => "done",
            StepEventKind::Failed => "failed",
        }
    }
}

/// An event for progress displays and `--output json`.
#[derive(Debug, Clone, Serialize)]
pub struct StepEvent {
    /// Operation id.
    pub op: u64,
    /// Step number.
    pub step_no: u32,
    /// Step name.
    pub step: String,
    /// What happened to the step.
    pub event: StepEventKind,
    /// Milliseconds, when finished.
    pub millis: Option<u64>,
    /// Detail.
    pub detail: serde_json::Value,
}

impl Effect {
    /// The effects a step has, in order, onto another node or onto the shard's own node.
    pub fn of_step(step: &Step, same_node: bool, streamed: bool) -> &'static [Effect] {
        match (step, same_node, streamed) {
            (Step::Preflight(_) | Step::Confirm(_), _, _) => &[],
            (Step::Verify(_), _, _) => &[Effect::HoldChannel],
            (Step::Guard(_), _, _) => &[Effect::Guard],
            (Step::Backup(_), _, _) => &[Effect::Copy],
            (Step::ChangeMaster(_), _, false) => &[Effect::PointChannel],
            (Step::Filter(f), _, false) if f.persist => &[
                Effect::SetFilters,
                Effect::PersistFilters,
                Effect::RestartServer,
            ],
            (Step::Filter(_), _, false) => &[Effect::SetFilters],
            (Step::StartReplication(_), _, false) => &[Effect::StartChannel],
            (Step::StartReplication(_), _, true) => &[Effect::StartStream],
            (Step::Wait(w), _, false) if w.until.is_some() => &[Effect::StopChannel],
            (Step::Lock(l), _, _) if l.fence == Fence::Switch => {
                &[Effect::ArmSwitch, Effect::RaiseFence]
            }
            (Step::Lock(_), _, _) => &[Effect::RaiseFence],
            (Step::Flip(_), _, _) => &[Effect::Flip, Effect::EnableEvents],
            (Step::DropSource(_), _, _) => &[Effect::DropSource],
            (Step::Unlock(_), false, _) => &[
                Effect::LowerFence,
                Effect::DropTrash,
                Effect::DropReplicaCopies,
            ],
            (Step::Unlock(_), true, _) => &[Effect::LowerFence, Effect::DropTrash],
            (Step::ResetReplication(_), _, false) => {
                &[Effect::ResetChannel, Effect::UnpersistFilters]
            }
            (Step::ResetReplication(_), _, true) => &[Effect::EndStream],
            (Step::Prune(_), _, _) => &[Effect::Prune],
            (Step::RevertWindow(_), false, _) => &[
                Effect::ReverseChannel,
                Effect::ResetReverseChannel,
                Effect::DropOldCopy,
            ],
            _ => &[],
        }
    }
}

/// Every fault point a playbook passes, in order: three around each effect (`before:` —
/// intent journaled, effect not done; `done:` — done, not journaled; `journaled:`) and
/// one after each step (`after:`). The fault-matrix tests run one crash at each.
pub fn fault_points(playbook: &Playbook, same_node: bool) -> Vec<String> {
    let streamed = same_node || playbook.via() == crate::playbook::Via::Stream;
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    // A move under the shard fence never lowers it: the hidden tables go with the old copy.
    // Only a playbook that drops the old copy (no `keep`) drops its trash.
    let drops_trash = playbook.drops_old_copy();
    let shard_fenced_move = playbook
        .steps
        .iter()
        .any(|s| matches!(s, Step::DropSource(_)))
        && playbook
            .steps
            .iter()
            .any(|s| matches!(s, Step::Lock(l) if l.fence == Fence::Shard));
    // Under the switch fence a move's old copy leaves with its guards (drop-source), and a
    // split's fence ends at its guard step: unlock settles and removes the switched guards.
    let switch_fenced = playbook
        .steps
        .iter()
        .any(|s| matches!(s, Step::Lock(l) if l.fence == Fence::Switch));
    for step in &playbook.steps {
        let mut effects = Effect::of_step(step, same_node, streamed).to_vec();
        // A streamed copy of whole schemas (a move's or a split's, not a merge's) creates
        // its triggers once the stream stopped at the final position.
        if streamed
            && playbook.name != "merge"
            && matches!(step, Step::Wait(w) if w.until.is_some())
        {
            effects.push(Effect::CreateTriggers);
        }
        if switch_fenced && matches!(step, Step::Unlock(_)) {
            effects.retain(|e| *e != Effect::LowerFence || playbook.is_split());
            if playbook.is_split() {
                effects.push(Effect::SettleGuards);
            }
            effects.push(Effect::DisarmSwitch);
        }
        for e in &effects {
            if (shard_fenced_move || switch_fenced && !playbook.is_split())
                && *e == Effect::LowerFence
            {
                continue;
            }
            if !drops_trash && matches!(e, Effect::DropTrash | Effect::DropReplicaCopies) {
                continue;
            }
            if !playbook.persists_filters() && *e == Effect::UnpersistFilters {
                continue;
            }
            for at in ["before", "done", "journaled"] {
                let p = format!("{at}:{}", e.name());
                if seen.insert(p.clone()) {
                    out.push(p);
                }
            }
        }
        let p = format!("after:{}", step.name());
        if seen.insert(p.clone()) {
            out.push(p);
        }
    }
    out
}

/// A move or split: the procedure, driving its effects through `E` — [`Live`] for a real
/// run (the holder of the operation's lease), [`DryRun`] to record what it would do.
pub struct Mover<'a, E: Effects = Live<'a>> {
    inv: &'a Inventory,
    fx: E,
    shard: Shard,
    source: String,
    target: String,
    pairs: Vec<SchemaPair>,
    channel: Channel,
    playbook: Playbook,
    state: MoveState,
    /// Steps already done (from the journal, corrected by recovery).
    done: Vec<bool>,
    /// The step being run, for the effect rows.
    step_no: u32,
    fence_started: Option<Instant>,
    /// Set when the flip's outcome could not be read back: the fence must stay up.
    flip_unsettled: bool,
    /// The state a failed run leaves the operation in: failed (resumable), or aborted when
    /// recovery rolled everything back.
    end_state: OpState,
    /// Where the procedure stands; changed only by [`Mover::advance`], journaled with every
    /// step write.
    phase: Phase,
    copy_progress: Arc<copy::native::Progress>,
    plan: OperationPlan,
    on_event: &'a dyn Fn(&StepEvent),
    /// Hooks of the stages that gate nothing, running in the background so that none
    /// lengthens a fence; waited for when the run ends.
    pending_hooks: Vec<std::thread::JoinHandle<()>>,
}

/// Refuses a shard that has an unfinished operation (also as a merge's survivor or a key
/// move's receiver).
fn refuse_if_busy(dir: &mut Directory, shard_id: u32) -> Result<()> {
    for op in dir.active_operations()? {
        let mut params =
            || -> Result<_> { Ok(dir.operation(op.id)?.params::<serde_json::Value>().ok()) };
        let busy = op.shard_id == Some(shard_id)
            || (op.kind == OpKind::Merge
                && params()?
                    .and_then(|p| p.merge)
                    .is_some_and(|p| p.survivor == shard_id))
            || (op.kind == OpKind::MoveKeys
                && params()?
                    .and_then(|p| p.key_move)
                    .is_some_and(|p| p.receiver == shard_id));
        if busy {
            return Err(Error::Refused(format!(
                "shard {shard_id} is under operation {} ({}, {}): resume or abort it first",
                op.id, op.kind, op.state
            )));
        }
    }
    Ok(())
}

/// Refuses any of `shards` that has an unfinished operation (also as a merge's survivor),
/// naming it: a request is checked this way before anything of it runs.
pub fn refuse_busy(inv: &Inventory, shards: &[u32]) -> Result<()> {
    let mut dir = Directory::open(inv)?;
    for s in shards {
        refuse_if_busy(&mut dir, *s)?;
    }
    Ok(())
}

/// The journal's step rows for a playbook: name and parameters.
fn journal_steps(playbook: &Playbook) -> Vec<(String, serde_json::Value)> {
    playbook
        .steps
        .iter()
        .map(|s| {
            (
                s.name().to_string(),
                serde_json::to_value(s).unwrap_or_default(),
            )
        })
        .collect()
}

/// A split's schemas: `<schema>_<old>` copied to `<schema>_<new>`.
fn split_pairs(snap: &Snapshot, shard: &Shard, new_shard: u32) -> Result<Vec<SchemaPair>> {
    snap.function_schemas(shard.func_id)
        .iter()
        .map(|l| {
            Ok(SchemaPair {
                from: Ident::new("schema", &crate::directory::shard_schema(l, shard.id))?,
                to: Ident::new("schema", &crate::directory::shard_schema(l, new_shard))?,
            })
        })
        .collect()
}

fn schemas_of(snap: &Snapshot, shard: &Shard) -> Result<Vec<SchemaPair>> {
    snap.shard_schemas(shard)
        .iter()
        .map(|s| {
            let id = Ident::new("schema", s)?;
            Ok(SchemaPair {
                from: id.clone(),
                to: id,
            })
        })
        .collect()
}

/// Checks a move request against the directory and inventory; returns the shard.
pub fn check_request(inv: &Inventory, snap: &Snapshot, shard_id: u32, to: &str) -> Result<Shard> {
    let shard = snap.shard(shard_id)?.clone();
    inv.node(to)?;
    if !snap.nodes.iter().any(|n| n.name == to) {
        return Err(Error::Usage(format!(
            "node {to:?} is not in the directory: add it with `shardctl node add {to}`"
        )));
    }
    if shard.node == to {
        return Err(Error::Usage(format!(
            "shard {shard_id} already lives on {to}"
        )));
    }
    if shard.state != ShardState::Online {
        return Err(Error::Refused(format!(
            "shard {shard_id} is {}, not online",
            shard.state.as_sql()
        )));
    }
    Ok(shard)
}

/// What a new operation is, before it is journaled.
#[derive(Clone)]
struct Planned {
    plan: OperationPlan,
    shard: Shard,
    target: String,
    pairs: Vec<SchemaPair>,
    playbook: Playbook,
    params: OperationParams<Playbook>,
}

/// Checks a move request (refusing a busy shard) and describes the operation.
fn prepare_move(
    inv: &Inventory,
    dir: &mut Directory,
    shard_id: u32,
    to: &str,
    playbook: Playbook,
) -> Result<Planned> {
    let snap = dir.load()?;
    refuse_if_busy(dir, shard_id)?;
    let shard = check_request(inv, &snap, shard_id, to)?;
    let playbook = gated(inv, playbook);
    let plan = OperationPlan::Move;
    Ok(Planned {
        params: plan.params(playbook.journaled()),
        plan,
        pairs: schemas_of(&snap, &shard)?,
        shard,
        target: to.to_string(),
        playbook,
    })
}

/// Checks one merge of a planned [`crate::ops::merge::request`] against the directory as
/// it reads now (the survivor on `node`, neither busy, still adjacent) and describes the
/// operation: the retired shard's schemas (on its own node) are copied into the survivor's
/// on `node` — through a channel from another node, under the fence on the same one.
/// A revert window returns a moved shard to its old copy; a split or a merge leaves no such
/// copy (the old shard keeps its own rows, the retired one is merged away).
fn refuse_revert_window(playbook: &Playbook, kind: &str) -> Result<()> {
    if playbook.revert_window_params().is_some() {
        return Err(Error::Usage(format!(
            "a revert window belongs to a move: a {kind} has no old copy to return to"
        )));
    }
    Ok(())
}

/// The switch fence leaves the tables under their names, where a copy made under the
/// fence on one node reads them by their hidden names: refused there, before anything.
fn refuse_switch_fence_on_one_node(playbook: &Playbook, what: &str) -> Result<()> {
    if playbook.fence() == Some(Fence::Switch) {
        return Err(Error::Usage(format!(
            "{what} copies under its fence on one node: give its lock step fence: shard (the switch fence is for moves and splits onto another node)"
        )));
    }
    Ok(())
}

/// Checks a key move request (refusing a busy donor or receiver) and describes the
/// operation: the donor's schemas paired with the receiver's.
fn prepare_key_move(
    inv: &Inventory,
    dir: &mut Directory,
    function: &str,
    request: &crate::ops::keys::KeyRequest,
    receiver: u32,
    playbook: Playbook,
) -> Result<Planned> {
    refuse_revert_window(&playbook, "key move")?;
    if playbook.fence() != Some(Fence::Switch) {
        return Err(Error::Usage(
            "a key move fences its moving keys only, with the switch fence: its lock step takes fence: switch".into(),
        ));
    }
    let snap = dir.load()?;
    let func = snap.function(function)?.clone();
    // A per-key function's owners, each read from the key's row of the directory.
    let mut owners = std::collections::HashMap::new();
    if let (ShardingType::Key, crate::ops::keys::KeyRequest::Values(keys)) =
        (func.sharding_type, request)
    {
        for k in keys {
            if !owners.contains_key(k) {
                owners.insert(k.clone(), dir.key_shard(func.id, k)?);
            }
        }
    }
    let plan = crate::ops::keys::plan_with_owners(&snap, &func, request, receiver, &|k| {
        Ok(owners.get(k).copied().flatten())
    })?;
    refuse_if_busy(dir, plan.donor)?;
    refuse_if_busy(dir, plan.receiver)?;
    let donor = snap.shard(plan.donor)?.clone();
    let receiving = snap.shard(plan.receiver)?.clone();
    for s in [&donor, &receiving] {
        inv.node(&s.node)?;
        if s.state != ShardState::Online {
            return Err(Error::Refused(format!(
                "shard {} is {}, not online",
                s.id,
                s.state.as_sql()
            )));
        }
    }
    let pairs = split_pairs(&snap, &donor, plan.receiver)?;
    let playbook = gated(inv, playbook);
    let plan = OperationPlan::KeyMove(plan);
    Ok(Planned {
        params: plan.params(playbook.journaled()),
        plan,
        shard: donor,
        target: receiving.node.clone(),
        pairs,
        playbook,
    })
}

fn prepare_merge(
    inv: &Inventory,
    dir: &mut Directory,
    survivor: u32,
    retired: u32,
    node: &str,
    playbook: Playbook,
) -> Result<Planned> {
    refuse_revert_window(&playbook, "merge")?;
    refuse_switch_fence_on_one_node(&playbook, "a merge")?;
    let snap = dir.load()?;
    inv.node(node)?;
    refuse_if_busy(dir, retired)?;
    refuse_if_busy(dir, survivor)?;
    let (s, r) = (snap.shard(survivor)?.clone(), snap.shard(retired)?.clone());
    let plan = crate::ops::merge::plan(&snap, &s, &r)?;
    if s.node != node {
        return Err(Error::Usage(format!(
            "shard {} lives on {}, not on {node}: the surviving shard must live on the merge's node",
            s.id, s.node
        )));
    }
    for sh in [&s, &r] {
        if sh.state != ShardState::Online {
            return Err(Error::Refused(format!(
                "shard {} is {}, not online",
                sh.id,
                sh.state.as_sql()
            )));
        }
    }
    let plan = OperationPlan::Merge(plan);
    Ok(Planned {
        params: plan.params(playbook.journaled()),
        plan,
        pairs: split_pairs(&snap, &r, survivor)?,
        shard: r,
        target: node.to_string(),
        playbook,
    })
}

/// The (table, hidden name) pairs of `fenced` in `schema`.
fn renamed_in(fenced: &[crate::ops::fence::Fenced], schema: &Ident) -> Vec<(String, String)> {
    fenced
        .iter()
        .filter(|f| f.schema == *schema)
        .map(|f| (f.table.to_string(), f.hidden.to_string()))
        .collect()
}

/// The playbook an operation's journal records (hook commands replaced by digests).
fn journaled_playbook(rec: &OperationRecord) -> Result<Playbook> {
    rec.params::<Playbook>()?.playbook.ok_or_else(|| {
        Error::Internal(format!(
            "operation {}: the journal holds no playbook for it",
            rec.id
        ))
    })
}

/// The journal holds no hook command, only digests ([`Playbook::journaled`]): a resumed
/// run whose `await-cutover` step is still to come needs each `before-cutover` hook of the
/// operation's own given again (`resume --hook before-cutover=COMMAND`, which lands in the
/// inventory's hooks and runs from there). Nothing read from the journal is ever run; a
/// digest without its command refuses the resume, naming it.
fn own_hooks_given_again(
    inv: &Inventory,
    rec: &OperationRecord,
    playbook: &Playbook,
) -> Result<()> {
    let waits_ahead = playbook
        .steps
        .iter()
        .position(|s| matches!(s, Step::AwaitCutover(_)))
        .is_some_and(|at| {
            !rec.steps
                .iter()
                .any(|s| s.step_no as usize == at && s.state == StepState::Done)
        });
    if waits_ahead {
        let given: Vec<String> = inv
            .file
            .hooks
            .iter()
            .filter(|h| h.stage == crate::config::HookStage::BeforeCutover)
            .map(|h| crate::playbook::hook_digest(&h.command))
            .collect();
        if let Some(missing) = playbook
            .journaled_hook_digests()
            .into_iter()
            .find(|d| !given.contains(d))
        {
            return Err(Error::Usage(format!(
                "operation {} was started with a before-cutover hook of its own ({missing}); the journal keeps no commands: give the same --hook before-cutover=COMMAND to resume it",
                rec.id
            )));
        }
    }
    Ok(())
}

/// With `before-cutover` hooks in the inventory, every move and split (also those of
/// `rebalance apply`) waits for them: an `await-cutover` step in `auto` mode before `lock`
/// when the playbook has none.
fn gated(inv: &Inventory, mut playbook: Playbook) -> Playbook {
    let gate = inv
        .file
        .hooks
        .iter()
        .any(|h| h.stage == crate::config::HookStage::BeforeCutover);
    if gate && !playbook.awaits_cutover() {
        playbook.await_cutover(crate::playbook::AwaitCutoverParams {
            mode: crate::playbook::CutoverMode::Auto,
            window: None,
            lag_below_secs: 1,
            check_every_secs: 1,
            hooks: Vec::new(),
        });
    }
    playbook
}

/// Checks a split request and describes the operation; `new_shard` gives the new shard's
/// id (the live run creates its location first).
fn prepare_split(
    inv: &Inventory,
    dir: &mut Directory,
    shard_id: u32,
    to: &str,
    at: &crate::ops::split::SplitAt,
    playbook: Playbook,
    new_shard: impl FnOnce(&mut Directory, &Shard, &crate::directory::DirNode) -> Result<u32>,
) -> Result<Planned> {
    refuse_revert_window(&playbook, "split")?;
    let snap = dir.load()?;
    refuse_if_busy(dir, shard_id)?;
    let shard = snap.shard(shard_id)?.clone();
    let shard = if shard.node == to {
        inv.node(to)?;
        refuse_switch_fence_on_one_node(&playbook, "a split onto the shard's own node")?;
        if shard.state != ShardState::Online {
            return Err(Error::Refused(format!(
                "shard {shard_id} is {}, not online",
                shard.state.as_sql()
            )));
        }
        shard
    } else {
        check_request(inv, &snap, shard_id, to)?
    };
    let mapping = crate::ops::split::plan(inv, &snap, &shard, at)?;
    let node = snap
        .nodes
        .iter()
        .find(|n| n.name == to)
        .cloned()
        .ok_or_else(|| Error::Usage(format!("node {to} is not in the directory")))?;
    let new_shard = new_shard(dir, &shard, &node)?;
    let plan = crate::ops::split::SplitPlan {
        old_shard: shard_id,
        new_shard,
        mapping,
    };
    let playbook = gated(inv, playbook);
    let plan = OperationPlan::Split(plan);
    Ok(Planned {
        params: plan.params(playbook.journaled()),
        plan,
        pairs: split_pairs(&snap, &shard, new_shard)?,
        shard,
        target: to.to_string(),
        playbook,
    })
}

impl<'a, E: Effects> Mover<'a, E> {
    fn construct(
        inv: &'a Inventory,
        fx: E,
        p: Planned,
        state: MoveState,
        done: Vec<bool>,
        on_event: &'a dyn Fn(&StepEvent),
    ) -> Mover<'a, E> {
        let op = fx.op();
        Mover {
            inv,
            pending_hooks: Vec::new(),
            source: p.shard.node.clone(),
            target: p.target,
            shard: p.shard,
            pairs: p.pairs,
            channel: fx.names().channel(op),
            done,
            fx,
            playbook: p.playbook,
            state,
            step_no: 0,
            fence_started: None,
            flip_unsettled: false,
            end_state: OpState::Failed,
            phase: Phase::Planned,
            copy_progress: Default::default(),
            plan: p.plan,
            on_event,
        }
    }
}

fn no_events(_: &StepEvent) {}

impl<'a> Mover<'a, DryRun<'a>> {
    /// The procedure's own preflight step, its effects recorded and the servers only read:
    /// the real run calls it before it journals anything, so a request the preflight
    /// refuses leaves no operation and no directory change behind — and `--check` (the
    /// whole dry run) refuses exactly what the real run refuses up front.
    fn preflight_only(inv: &'a Inventory, p: &Planned) -> Result<()> {
        let mut dir = Directory::open(inv)?;
        let kind = p.plan.name();
        let names = dir.name_scope()?;
        let fx = DryRun::new(inv, dir, kind, p.shard.id, &p.shard.node, &p.target, names);
        let done = vec![false; p.playbook.steps.len()];
        let mut m = Self::construct(inv, fx, p.clone(), MoveState::default(), done, &no_events);
        m.preflight().map(|_| ())
    }

    /// The dry run of a move: the same procedure, its effects recorded, the servers only
    /// read (read-only sessions). Nothing is journaled; nothing changes anywhere.
    pub fn dry_run_move(
        inv: &'a Inventory,
        shard_id: u32,
        to: &str,
        playbook: Playbook,
        on_event: &'a dyn Fn(&StepEvent),
    ) -> Result<DryRunPlan> {
        let mut dir = Directory::open(inv)?;
        let p = prepare_move(inv, &mut dir, shard_id, to, playbook)?;
        Self::dry_run(inv, dir, p, on_event)
    }

    /// The dry run of one merge of `retired` into `survivor`, both on `node` (see
    /// [`Mover::dry_run_move`]).
    pub fn dry_run_merge(
        inv: &'a Inventory,
        survivor: u32,
        retired: u32,
        node: &str,
        playbook: Playbook,
        on_event: &'a dyn Fn(&StepEvent),
    ) -> Result<DryRunPlan> {
        let mut dir = Directory::open(inv)?;
        let p = prepare_merge(inv, &mut dir, survivor, retired, node, playbook)?;
        Self::dry_run(inv, dir, p, on_event)
    }

    /// The dry run of a key move (see [`Mover::dry_run_move`]).
    pub fn dry_run_key_move(
        inv: &'a Inventory,
        function: &str,
        request: &crate::ops::keys::KeyRequest,
        receiver: u32,
        playbook: Playbook,
        on_event: &'a dyn Fn(&StepEvent),
    ) -> Result<DryRunPlan> {
        let mut dir = Directory::open(inv)?;
        let p = prepare_key_move(inv, &mut dir, function, request, receiver, playbook)?;
        Self::dry_run(inv, dir, p, on_event)
    }

    /// The dry run of a split (see [`Mover::dry_run_move`]); the new shard's id is shown
    /// as `<new>`.
    pub fn dry_run_split(
        inv: &'a Inventory,
        shard_id: u32,
        to: &str,
        at: &crate::ops::split::SplitAt,
        playbook: Playbook,
        on_event: &'a dyn Fn(&StepEvent),
    ) -> Result<DryRunPlan> {
        let mut dir = Directory::open(inv)?;
        let p = prepare_split(inv, &mut dir, shard_id, to, at, playbook, |_, _, _| {
            Ok(crate::ops::effects::DRY_RUN_NEW_SHARD)
        })?;
        Self::dry_run(inv, dir, p, on_event)
    }

    fn dry_run(
        inv: &'a Inventory,
        mut dir: Directory,
        p: Planned,
        on_event: &'a dyn Fn(&StepEvent),
    ) -> Result<DryRunPlan> {
        let kind = p.plan.name();
        let names = dir.name_scope()?;
        let fx = DryRun::new(inv, dir, kind, p.shard.id, &p.shard.node, &p.target, names);
        let done = vec![false; p.playbook.steps.len()];
        let mut m = Self::construct(inv, fx, p, MoveState::default(), done, on_event);
        m.run_steps()?;
        Ok(m.fx.into_plan())
    }
}

impl<'a> Mover<'a, Live<'a>> {
    /// Starts a new move: checks, journals the operation, marks the shard moving.
    pub fn start(
        inv: &'a Inventory,
        shard_id: u32,
        to: &str,
        playbook: Playbook,
        on_event: &'a dyn Fn(&StepEvent),
    ) -> Result<Mover<'a>> {
        let mut dir = Directory::open(inv)?;
        let preflight = playbook
            .steps
            .iter()
            .any(|s| matches!(s, Step::Preflight(_)));
        let p = prepare_move(inv, &mut dir, shard_id, to, playbook)?;
        if preflight {
            // Refuse bad input before the journal or the shard's state change.
            Mover::<'_, DryRun<'_>>::preflight_only(inv, &p)?;
        }
        Self::begin(inv, dir, p, on_event)
    }

    /// Starts one merge: `retired` (copied into `survivor`'s schemas on `node`, fenced,
    /// dropped); refused up front like a move.
    pub fn start_merge(
        inv: &'a Inventory,
        survivor: u32,
        retired: u32,
        node: &str,
        playbook: Playbook,
        on_event: &'a dyn Fn(&StepEvent),
    ) -> Result<Mover<'a>> {
        let mut dir = Directory::open(inv)?;
        let p = prepare_merge(inv, &mut dir, survivor, retired, node, playbook)?;
        Mover::<'_, DryRun<'_>>::preflight_only(inv, &p)?;
        Self::begin(inv, dir, p, on_event)
    }

    /// Starts a key move: the keys of `request` (of function `function`) go from the shard
    /// owning them to `receiver`; refused up front like a move.
    pub fn start_key_move(
        inv: &'a Inventory,
        function: &str,
        request: &crate::ops::keys::KeyRequest,
        receiver: u32,
        playbook: Playbook,
        on_event: &'a dyn Fn(&StepEvent),
    ) -> Result<Mover<'a>> {
        let mut dir = Directory::open(inv)?;
        let p = prepare_key_move(inv, &mut dir, function, request, receiver, playbook)?;
        Mover::<'_, DryRun<'_>>::preflight_only(inv, &p)?;
        Self::begin(inv, dir, p, on_event)
    }

    /// Starts a split of `shard_id` onto `to`: the new shard's location is created offline,
    /// the operation journaled, the old shard marked moving.
    pub fn start_split(
        inv: &'a Inventory,
        shard_id: u32,
        to: &str,
        at: &crate::ops::split::SplitAt,
        playbook: Playbook,
        on_event: &'a dyn Fn(&StepEvent),
    ) -> Result<Mover<'a>> {
        let mut dir = Directory::open(inv)?;
        // Refuse bad input before anything is written: the request and the procedure's own
        // preflight, read-only, with the new shard's id still a placeholder.
        let dry = prepare_split(
            inv,
            &mut dir,
            shard_id,
            to,
            at,
            playbook.clone(),
            |_, _, _| Ok(crate::ops::effects::DRY_RUN_NEW_SHARD),
        )?;
        Mover::<'_, DryRun<'_>>::preflight_only(inv, &dry)?;
        let inserted = std::cell::Cell::new(None);
        let started = prepare_split(
            inv,
            &mut dir,
            shard_id,
            to,
            at,
            playbook,
            |d, shard, node| {
                let id = d.insert_offline_location(shard.func_id, node)?;
                inserted.set(Some(id));
                Ok(id)
            },
        )
        .and_then(|p| Self::begin(inv, dir, p, on_event));
        let Some(new_shard) = inserted.get() else {
            return started;
        };
        started.inspect_err(|_| {
            // Only a location no operation refers to is removed: once the operation is
            // journaled, resume or abort owns it.
            if let Ok(mut d) = Directory::open(inv) {
                let referenced = d.operations(None).map(|ops| {
                    ops.iter().any(|o| {
                        o.params::<serde_json::Value>()
                            .ok()
                            .and_then(|p| p.split)
                            .is_some_and(|s| s.new_shard == new_shard)
                    })
                });
                if matches!(referenced, Ok(false)) {
                    let _ = d.delete_offline_shard(new_shard);
                }
            }
        })
    }

    fn begin(
        inv: &'a Inventory,
        mut dir: Directory,
        p: Planned,
        on_event: &'a dyn Fn(&StepEvent),
    ) -> Result<Mover<'a>> {
        let steps = journal_steps(&p.playbook);
        let lease = dir.create_operation(&NewOperation {
            kind: p.plan.kind(),
            shard_id: p.shard.id,
            source: &p.shard.node,
            target: &p.target,
            params: &p.params,
            steps: &steps,
            parent: None,
        })?;
        dir.set_shard_state_leased(&lease, p.shard.id, ShardState::Moving)?;
        let done = vec![false; p.playbook.steps.len()];
        Ok(Self::construct(
            inv,
            Live::new(inv, dir, lease),
            p,
            MoveState::default(),
            done,
            on_event,
        ))
    }

    /// Takes over operation `op_id` for `resume` or `abort` (`verb`): refused while its
    /// owner lives. The state is rebuilt from the journal; recovery then checks it
    /// against the servers.
    pub fn claim(
        inv: &'a Inventory,
        op_id: u64,
        verb: &str,
        on_event: &'a dyn Fn(&StepEvent),
    ) -> Result<Mover<'a>> {
        let mut dir = Directory::open(inv)?;
        let rec = dir.operation(op_id)?;
        if !matches!(
            rec.kind,
            OpKind::Move | OpKind::Split | OpKind::Merge | OpKind::MoveKeys
        ) {
            return Err(Error::Usage(format!(
                "operation {op_id} is a {}, not a move, split, merge or key move",
                rec.kind
            )));
        }
        // Refused before the claim: a missing hook changes nothing, not even the lease.
        if verb == "resume" {
            own_hooks_given_again(inv, &rec, &journaled_playbook(&rec)?)?;
        }
        let (lease, took_over) = dir.claim_operation(op_id, verb)?;
        if let Some(from) = took_over {
            crate::output::log(
                0,
                &format!(
                    "operation {op_id}: taking over from {from}, epoch {}",
                    lease.epoch
                ),
            );
        }
        let rec = dir.operation(op_id)?;
        let mut m = Self::from_record(inv, dir, lease, &rec, on_event)?;
        m.fx.end_orphaned_sessions(&rec.effects)?;
        if verb == "resume" {
            m.check_journaled_definitions(&rec)?;
        }
        Ok(m)
    }

    fn from_record(
        inv: &'a Inventory,
        mut dir: Directory,
        lease: Lease,
        rec: &OperationRecord,
        on_event: &'a dyn Fn(&StepEvent),
    ) -> Result<Mover<'a>> {
        let op_id = rec.id;
        let snap = dir.load()?;
        let shard_id = rec
            .shard_id
            .ok_or_else(|| Error::Internal(format!("operation {op_id} has no shard")))?;
        let params = rec.params::<Playbook>()?;
        let plan = OperationPlan::from_journal(op_id, rec.kind, &params)?;
        let shard = match (snap.shard(shard_id), &plan) {
            (Ok(s), _) => s.clone(),
            // After a merge's flip the retired shard has no location any more.
            (Err(_), OperationPlan::Merge(plan)) => Shard {
                id: shard_id,
                func_id: plan.func_id,
                node: rec.source.clone().unwrap_or_default(),
                host: String::new(),
                port: 0,
                state: ShardState::Offline,
                availability: crate::directory::Availability::Available,
                version: 0,
            },
            (Err(e), _) => return Err(e),
        };
        // Its own hooks never run from the journal: `claim` checked that a resume was
        // given them again, and they run from the inventory's.
        let playbook = journaled_playbook(rec)?.without_own_hooks();
        // Names read back from the journal are checked again before any use.
        let source = rec.source.clone().unwrap_or_default();
        let target = rec.target.clone().unwrap_or_default();
        inv.node(&source)?;
        inv.node(&target)?;
        // A state that does not read (an edited journal: a fenced table's name that is no
        // plain identifier, say) is refused, naming the culprit, rather than forgotten.
        let mut state: MoveState = match rec.steps.iter().rev().find(|s| !s.outputs.is_null()) {
            Some(s) => serde_json::from_value(s.outputs.clone()).map_err(|e| {
                Error::Usage(format!(
                    "operation {op_id}: the journal's state after step {} does not read: {e}",
                    s.step_no + 1
                ))
            })?,
            None => MoveState::default(),
        };
        state.fence_millis = None;
        let mut shard_for_schemas = shard.clone();
        shard_for_schemas.node = source.clone();
        let pairs = match &plan {
            OperationPlan::Split(p) => split_pairs(&snap, &shard, p.new_shard)?,
            OperationPlan::Merge(p) => split_pairs(&snap, &shard, p.survivor)?,
            OperationPlan::KeyMove(p) => split_pairs(&snap, &shard, p.receiver)?,
            OperationPlan::Move => schemas_of(&snap, &shard_for_schemas)?,
        };
        let done = rec
            .steps
            .iter()
            .map(|s| s.state == StepState::Done)
            .collect();
        let mut shard = shard;
        shard.node = source;
        // An operation journaled before the directory had phases gets the one its steps
        // reached; the next journal write records it. So does one whose journaled phase
        // is an end its state never reached (a failed release wrote it): the phase
        // machine takes nothing from an end, so trusting it would wedge resume and abort.
        let phase = rec
            .phase
            .filter(|p| !p.is_terminal() || rec.state.is_finished())
            .unwrap_or_else(|| phases::derived(rec, &playbook, &state));
        let p = Planned {
            plan,
            shard,
            target,
            pairs,
            playbook,
            params,
        };
        let mut m = Self::construct(inv, Live::new(inv, dir, lease), p, state, done, on_event);
        m.phase = phase;
        Ok(m)
    }
}

impl<'a, E: Effects> Mover<'a, E> {
    /// The definitions of views, routines, triggers and events the journal carries across a
    /// crash (a streamed copy's `local_ddl` until its flip, a revert's
    /// `revert_ddl` until the old copy is back) are replayed only when the server they were
    /// read from still gives the very same ([`copy::objects::check_journaled`]): text read
    /// back from the directory is never sent as it is.
    fn check_journaled_definitions(&mut self, rec: &OperationRecord) -> Result<()> {
        // Until the flip, a resumed run may create the triggers (again): from its journal.
        let replayable = rec.last_effect(Effect::Flip).is_none();
        // The fences' mappings: the state saved at a step's end may predate the newest
        // rename, whose intent journaled it first.
        let mut fenced = self.state.fenced_tables.clone();
        fenced.extend(self.state.revert_fenced_tables.iter().cloned());
        for e in &rec.effects {
            // Where a fence went up its detail holds the mapping; where one was lifted, a
            // count.
            if let Some(m) = e.detail.get("fenced_tables").filter(|m| m.is_array()) {
                fenced.extend(crate::ops::fence::journaled_mapping(rec.id, m)?);
            }
        }
        if replayable && !self.state.local_ddl.is_empty() {
            let source = self.source.clone();
            for p in self.pairs.clone() {
                let journaled: Vec<copy::objects::ObjectDef> = self
                    .state
                    .local_ddl
                    .iter()
                    .filter(|(s, _)| s == p.to.as_str())
                    .map(|(_, d)| d.clone())
                    .collect();
                let renamed = renamed_in(&fenced, &p.from);
                copy::objects::check_journaled(self.fx.reader(&source)?, &p, &journaled, &renamed)?;
            }
            if self
                .state
                .local_ddl
                .iter()
                .any(|(s, _)| !self.pairs.iter().any(|p| p.to.as_str() == s))
            {
                return Err(Error::Refused(format!(
                    "operation {}: the journal holds definitions for a schema outside the split: they are not replayed (abort the operation)",
                    rec.id
                )));
            }
        }
        if self.state.revert_began && !self.state.revert_installed {
            let target = self.target.clone();
            let mut schemas: Vec<String> = self
                .state
                .revert_ddl
                .iter()
                .map(|(s, _)| s.clone())
                .collect();
            schemas.dedup();
            for schema in schemas {
                let schema = Ident::new("schema", &schema)?;
                if !self.pairs.iter().any(|p| p.to == schema) {
                    return Err(Error::Refused(format!(
                        "operation {}: the journal holds definitions for {schema}, outside the shard: they are not replayed (abort the operation)",
                        rec.id
                    )));
                }
                let pair = SchemaPair {
                    from: schema.clone(),
                    to: schema.clone(),
                };
                let journaled: Vec<copy::objects::ObjectDef> = self
                    .state
                    .revert_ddl
                    .iter()
                    .filter(|(s, _)| s == schema.as_str())
                    .map(|(_, d)| d.clone())
                    .collect();
                let renamed = renamed_in(&fenced, &schema);
                copy::objects::check_journaled(
                    self.fx.reader(&target)?,
                    &pair,
                    &journaled,
                    &renamed,
                )?;
            }
        }
        Ok(())
    }

    /// What this operation carries out, with its plan.
    pub fn plan(&self) -> &OperationPlan {
        &self.plan
    }

    /// The split this operation carries out, if it is one.
    pub fn split(&self) -> Option<&crate::ops::split::SplitPlan> {
        self.plan.split()
    }

    /// The merge this operation carries out, if it is one.
    pub fn merge(&self) -> Option<&crate::directory::MergePlan> {
        self.plan.merge()
    }

    /// The operation id.
    pub fn op(&self) -> u64 {
        self.fx.op()
    }

    /// Counters of the copy in progress, for progress displays.
    pub fn copy_progress(&self) -> Arc<copy::native::Progress> {
        Arc::clone(&self.copy_progress)
    }

    /// The shard being moved or split.
    pub fn shard_id(&self) -> u32 {
        self.shard.id
    }

    /// The node the shard lives on before the operation.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The node the copy goes to.
    pub fn target(&self) -> &str {
        &self.target
    }

    /// The state reached.
    pub fn state(&self) -> &MoveState {
        &self.state
    }

    /// An interruption (Ctrl-C, SIGTERM, `stop`) of this operation as the error the
    /// operator reads: it names the operation and what to run next (exit code 130 kept);
    /// other errors pass unchanged.
    pub fn name_interrupted(&self, e: Error) -> Error {
        let op = self.op();
        match e {
            Error::Interrupted if self.state.flipped => Error::InterruptedAt(format!(
                "operation {op} stopped at a safe point after the flip; `shardctl resume {op}` finishes it"
            )),
            Error::Interrupted => Error::InterruptedAt(format!(
                "operation {op} stopped at a safe point; `shardctl resume {op}` continues it, `shardctl abort {op}` rolls it back"
            )),
            other => other,
        }
    }

    fn emit(
        &self,
        step_no: u32,
        step: &str,
        event: StepEventKind,
        millis: Option<u64>,
        detail: serde_json::Value,
    ) {
        // The step lines in the log (-vv, --log-file), beside the statements they sent.
        crate::output::log(
            2,
            &format!(
                "op {} step {} {step} {}{}",
                self.fx.op(),
                step_no + 1,
                event.as_str(),
                millis.map(|m| format!(" in {m} ms")).unwrap_or_default()
            ),
        );
        (self.on_event)(&StepEvent {
            op: self.fx.op(),
            step_no,
            step: step.to_string(),
            event,
            millis,
            detail,
        });
    }

    /// Journals `effect` on `node` as an intent, runs it, and journals it done (or
    /// failed). A process that lost its lease fails at the intent, before the effect.
    fn effect<T: Serialize>(
        &mut self,
        effect: Effect,
        node: &str,
        detail: serde_json::Value,
        run: impl FnOnce(&mut Self) -> Result<T>,
    ) -> Result<T> {
        let seq = self.fx.intent(self.step_no, effect, node, &detail)?;
        crate::fault::point(&format!("before:{}", effect.name()));
        match run(self) {
            Ok(v) => {
                crate::fault::point(&format!("done:{}", effect.name()));
                let out = serde_json::to_value(&v).unwrap_or_default();
                self.fx.finished(seq, EffectState::Done, &out)?;
                crate::fault::point(&format!("journaled:{}", effect.name()));
                Ok(v)
            }
            Err(e) => {
                let out = serde_json::json!({ "error": e.to_string() });
                let _ = self.fx.finished(seq, EffectState::Failed, &out);
                Err(e)
            }
        }
    }

    /// The operation as hooks see it on their stdin.
    pub(super) fn hook_document(&self) -> serde_json::Value {
        serde_json::json!({
            "command": "hook",
            "op": self.fx.op(),
            "kind": self.plan.name(),
            "shard": self.shard.id,
            "from": self.source,
            "to": self.target,
            "new_shard": self.plan.split().map(|p| p.new_shard),
            "survivor": self.plan.merge().map(|p| p.survivor),
            "retired": self.plan.merge().map(|p| p.retired),
        })
    }

    /// Runs the inventory's hooks of `stage` and waits for them (none in a dry run); true
    /// when all passed. Only for stages that gate (`before-cutover`) or end the run.
    pub(super) fn hook(&self, stage: crate::config::HookStage) -> bool {
        if self.fx.is_dry_run() || self.inv.file.hooks.is_empty() {
            return true;
        }
        crate::ops::hooks::run_stage(&self.inv.file.hooks, stage, &self.hook_document())
    }

    /// Starts the inventory's hooks of `stage` in the background (none in a dry run): a
    /// notification must not hold a fence up.
    pub(super) fn hook_in_background(&mut self, stage: crate::config::HookStage) {
        if self.fx.is_dry_run() || !self.inv.file.hooks.iter().any(|h| h.stage == stage) {
            return;
        }
        let hooks = self.inv.file.hooks.clone();
        let doc = self.hook_document();
        self.pending_hooks.push(std::thread::spawn(move || {
            crate::ops::hooks::run_stage(&hooks, stage, &doc);
        }));
    }

    /// Waits for the background hooks (each is bounded by its timeout).
    fn join_hooks(&mut self) {
        for h in self.pending_hooks.drain(..) {
            let _ = h.join();
        }
    }

    fn run_steps(&mut self) -> Result<()> {
        let steps = self.playbook.steps.clone();
        for (i, step) in steps.iter().enumerate() {
            if self.done.get(i).copied().unwrap_or(false) {
                continue;
            }
            let step_no = i as u32;
            self.step_no = step_no;
            crate::signal::check()?;
            // Between two steps outside a fence: a safe point to pause at.
            if self.state.fence.is_none() {
                crate::control::pause_point()?;
            }
            self.fx.check_lease()?;
            if matches!(step, Step::RevertWindow(_)) && self.phase == Phase::Unfenced {
                self.advance(Transition::WindowOpened)?;
            }
            self.fx.step_started(step_no, step.name(), self.phase)?;
            self.emit(
                step_no,
                step.name(),
                StepEventKind::Started,
                None,
                serde_json::Value::Null,
            );
            let t = Instant::now();
            let result = self.run_step(step).and_then(|detail| {
                if let Some(t) = phases::reached_by(step) {
                    self.advance(t)?;
                }
                Ok(detail)
            });
            let millis = t.elapsed().as_millis() as u64;
            match result {
                Ok(detail) => {
                    let outputs = serde_json::to_value(&self.state).unwrap_or_default();
                    self.fx.step_done(step_no, &outputs, self.phase)?;
                    if let Some(d) = self.done.get_mut(i) {
                        *d = true;
                    }
                    self.emit(
                        step_no,
                        step.name(),
                        StepEventKind::Done,
                        Some(millis),
                        detail,
                    );
                    let awaits = self.playbook.awaits_cutover();
                    let stage = match step {
                        Step::Backup(_) => Some(crate::config::HookStage::Copied),
                        Step::Wait(w) if w.until.is_none() && !awaits => {
                            Some(crate::config::HookStage::Ready)
                        }
                        Step::Lock(_) => Some(crate::config::HookStage::Fenced),
                        Step::Flip(_) => Some(crate::config::HookStage::Flipped),
                        _ => None,
                    };
                    if let Some(stage) = stage {
                        self.hook_in_background(stage);
                    }
                    crate::fault::point(&format!("after:{}", step.name()));
                }
                Err(e) => {
                    let _ = self.fx.step_failed(step_no, &e.to_string());
                    let outputs = serde_json::to_value(&self.state).unwrap_or_default();
                    let _ = self.fx.set_step_outputs(step_no, &outputs, self.phase);
                    self.emit(
                        step_no,
                        step.name(),
                        StepEventKind::Failed,
                        Some(millis),
                        serde_json::json!({"error": e.to_string()}),
                    );
                    return Err(e);
                }
            }
        }
        Ok(())
    }

    /// A split onto the shard's own node or a merge on one node: no channel (a server
    /// drops its own events); the change stream keeps the copy current instead.
    fn same_node(&self) -> bool {
        self.source == self.target && !self.plan.is_key_move()
    }

    /// The change stream, not a channel, keeps the copy current: a key move (a channel
    /// cannot filter by key), a split or merge on one node (a server cannot replicate from
    /// itself), and an operation whose playbook asks for it (`via: stream`).
    fn streams(&self) -> bool {
        self.plan.is_key_move()
            || self.same_node()
            || self.playbook.via() == crate::playbook::Via::Stream
    }

    /// A copy of whole schemas kept current by the stream (a move's or a split's): made
    /// without its triggers, created once the stream stopped under the fence.
    fn defers_triggers(&self) -> bool {
        self.streams() && !self.plan.is_key_move() && !self.plan.is_merge()
    }
}

impl<'a> Mover<'a, Live<'a>> {
    /// Keeps the lease's heartbeat going (and watches for a takeover or a stop request)
    /// until the returned guard is dropped.
    fn heartbeat(&self) -> Result<Heartbeat> {
        // The copy's counters, journaled with every heartbeat once it has begun.
        let copy = Arc::clone(&self.copy_progress);
        self.fx.flags.report_progress(move || {
            let now = copy.snapshot();
            now.started.then(|| crate::directory::journal::Progress {
                rows: now.rows,
                rows_expected: Some(now.total_shown()),
                bytes: now.bytes,
            })
        });
        Heartbeat::start(self.inv, self.fx.lease, Arc::clone(&self.fx.flags))
    }

    /// The operation's pause and live limits, for progress displays.
    pub fn control(&self) -> Arc<crate::control::Control> {
        self.fx.flags.control()
    }

    /// Runs the steps not yet done, holding the lease (heartbeat every second) until the
    /// operation ends. On failure before the flip the fence is lifted and the shard stays
    /// on the source (a timeout also removes the channel and the copy); the lease is then
    /// released so `resume` or `abort` can take it.
    pub fn run(&mut self) -> Result<MoveState> {
        let heartbeat = self.heartbeat()?;
        if self.done.iter().all(|d| !d) {
            self.hook_in_background(crate::config::HookStage::Started);
        }
        let control = Some(self.fx.flags.control());
        let result = crate::signal::with_scope(Some(self.fx.flags.stop_flag()), || {
            crate::control::with(control, || self.run_steps())
        });
        let result = match result.and_then(|()| self.advance(Transition::Finished)) {
            Ok(()) => self
                .fx
                .dir
                .release_operation(&self.fx.lease, OpState::Done, None, Some(self.phase))
                .map(|_| {
                    self.join_hooks();
                    self.hook(crate::config::HookStage::Done);
                    crate::reporting::follow(
                        self.inv,
                        &self.target,
                        self.state.reverted,
                        &self.pairs,
                    );
                    self.state.clone()
                }),
            Err(e) => {
                let e = self.recover(e);
                if !matches!(e, Error::LeaseLost(_)) {
                    if let Err(j) = self.fx.dir.release_operation(
                        &self.fx.lease,
                        self.end_state,
                        Some(&e.to_string()),
                        Some(self.phase),
                    ) {
                        crate::output::log(
                            0,
                            &format!(
                                "operation {}: the journal could not record the failure: {j}",
                                self.fx.lease.op
                            ),
                        );
                    }
                }
                // After recovery lowered any fence: the hooks never hold one up.
                self.join_hooks();
                self.hook(crate::config::HookStage::Failed);
                Err(e)
            }
        };
        drop(heartbeat);
        result
    }
}
