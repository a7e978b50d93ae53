//! Recovery: what the servers and the directory really look like, and the way forward or
//! back from there.
//!
//! - The flip is read from the directory (where the shard points, whether a split's new
//!   shard is online), never from the journal alone: after it, only forward.
//! - The shard fence is up when the hidden names journaled in the `raise-fence` intent
//!   exist on the source; the read-only fence when this operation holds it in the
//!   directory's registry and the server is read-only.
//! - The copy is usable when the target has every schema and its channel exists.
//! - Before the flip, the source and the target must still be the servers journaled at the
//!   copy (server_id, server_uuid, binary logs gone only forward, the source's past what
//!   the channel read): otherwise `resume` refuses, now and every time after, and only
//!   `abort` (which never checks it) goes on.
//!
//! Every action is idempotent, so `resume` and `abort` reach a clean end from any partial
//! state. When the directory cannot be reached, nothing is lowered: the fence stays up
//! (no write can be lost) until `resume` or `abort` runs against a reachable directory.

use super::{MoveState, Mover, StepEvent};
use crate::config::Inventory;
use crate::directory::journal::{OpState, Owner};
use crate::directory::phase::Transition;
use crate::directory::{Directory, ShardState};
use crate::error::{Error, Result};
use crate::ident::Ident;
use crate::ops::effects::{ChannelState, Effects, Live};
use crate::playbook::{Fence, Step};
use std::time::{Duration, Instant};

impl<'a> Mover<'a, Live<'a>> {
    /// After a failed step, in the process that ran it: before the flip, lift the fence and
    /// put the shard back online on the source (a timeout also rolls the copy back); after
    /// the flip, or when its outcome is unknown, keep everything for `resume`.
    pub(super) fn recover(&mut self, e: Error) -> Error {
        if matches!(e, Error::LeaseLost(_)) || self.fx.flags.lost() {
            return match e {
                Error::LeaseLost(_) => e,
                _ => Error::LeaseLost(format!(
                    "operation {} was taken over by another process while this one failed ({e}); nothing was rolled back here",
                    self.fx.lease.op
                )),
            };
        }
        if self.state.flipped || self.flip_unsettled {
            return e;
        }
        match self.directory_flipped() {
            Ok(true) => {
                self.state.flipped = true;
                return e;
            }
            Ok(false) => {}
            Err(read) => {
                return annotate(
                    e,
                    &format!("the directory cannot be read ({read}), so the fence stays up; `shardctl resume {}` or `shardctl abort {}` once it is back", self.fx.lease.op, self.fx.lease.op),
                )
            }
        }
        let mut notes = Vec::new();
        let fence_lifted = match self.lift_fence() {
            Ok(()) => true,
            Err(u) => {
                notes.push(format!("lifting the fence failed too: {u}"));
                false
            }
        };
        if self.state.flipped {
            // The flip committed after all (found while lowering): only forward from here.
            return annotate(
                e,
                "the flip committed after all; `shardctl resume` goes forward",
            );
        }
        if !fence_lifted {
            // Rolling back would end the operation (aborted) with the fence still up, and
            // nothing would lower it any more: it stays failed for `abort` to finish.
            notes.push(format!(
                "nothing is rolled back while the fence may stand: `shardctl abort {}` lifts it and rolls back once {} answers, `shardctl resume {}` retries",
                self.fx.lease.op, self.source, self.fx.lease.op
            ));
        } else if matches!(e, Error::Timeout(_)) {
            match self.roll_back_copy() {
                Ok(()) => notes.push(
                    "rolled back: channel removed, target copy dropped, shard online on the source"
                        .into(),
                ),
                Err(r) => notes.push(format!("rollback failed: {r}")),
            }
        } else if self.state.identity_refusal.is_some() {
            notes.push(format!(
                "the fence is down and the shard stays on {}",
                self.source
            ));
        } else {
            notes.push(format!(
                "the shard stays on {}; `shardctl resume {}` retries, `shardctl abort {}` cleans up",
                self.source, self.fx.lease.op, self.fx.lease.op
            ));
        }
        annotate(e, &notes.join("; "))
    }
}

impl<E: Effects> Mover<'_, E> {
    /// Reads the fence mapping the newest `raise-fence` intent journaled (the state saved
    /// at the end of a step may predate it).
    fn fence_mapping_from_journal(&mut self) -> Result<()> {
        if let Some(fx) = self.fx.last_effect(super::Effect::RaiseFence)? {
            if let Some(m) = fx.detail.get("fenced_tables") {
                self.state.fenced_tables = crate::ops::fence::journaled_mapping(self.fx.op(), m)?;
            }
        }
        Ok(())
    }

    /// Which fence is up on the source now.
    fn fence_now(&mut self) -> Result<Option<Fence>> {
        let source = self.source.clone();
        if !self.state.fenced_tables.is_empty()
            && !self
                .fx
                .hidden_now(&source, &self.state.fenced_tables)?
                .is_empty()
        {
            return Ok(Some(Fence::Shard));
        }
        if self.switch_up()? {
            return Ok(Some(Fence::Switch));
        }
        if self.fx.read_only_held(&source)? {
            // Held in the registry is not enough: the server must be read-only still and
            // not restarted since (a restart drops the setting).
            let started = self.fx.server_started_at(&source)?;
            let same_boot = self
                .state
                .fenced_server_started_at
                .is_none_or(|then| (started - then).abs() <= 2);
            if (self.fx.read_only_now(&source)? && same_boot) || self.state.flipped {
                // After the flip the hold stays until the old copy is gone (unlock).
                return Ok(Some(Fence::ReadOnly));
            }
            // Down in fact: leave the registry so the rest of recovery starts from a clean
            // state — making the server writable only if it is the same boot (a restarted
            // server's setting is its own: it may have come back read-only on purpose).
            let writable = if same_boot {
                self.fx
                    .dialect(&source)?
                    .set_read_only(false, crate::server::statements::FENCE_LOCK_WAIT_SECS)
            } else {
                Vec::new()
            };
            self.fx.read_only_leave(&source, &writable)?;
        }
        Ok(None)
    }

    fn step_index(&self, pred: impl Fn(&Step) -> bool) -> Option<usize> {
        self.playbook.steps.iter().position(pred)
    }

    /// Brings the state and the list of done steps in line with the servers and the
    /// directory before a resumed run.
    pub(super) fn reconcile(&mut self) -> Result<()> {
        self.fence_mapping_from_journal()?;
        self.state.flipped = self.directory_flipped()?;
        self.state.fence = self.fence_now()?;
        if !self.state.flipped {
            // Before anything goes forward: the servers are still the ones of the copy (a
            // failover or a binary log reset while no one ran), or an earlier run's refusal
            // stands until `abort`.
            self.check_identity()?;
        }
        if self.state.flipped {
            // Forward only: everything before the flip stands; the flip step itself, unless
            // journaled done, runs again to enable the events (it does not flip twice).
            if let Some(i) = self.step_index(|s| matches!(s, Step::Flip(_))) {
                for d in self.done.iter_mut().take(i) {
                    *d = true;
                }
            }
            self.state.verified = true;
            return Ok(());
        }
        let done = |m: &Self, pred: fn(&Step) -> bool| {
            m.step_index(pred)
                .is_some_and(|i| m.done.get(i).copied().unwrap_or(false))
        };
        let backup = self.step_index(|s| matches!(s, Step::Backup(_)));
        let mut restart: Option<usize> = None;
        if done(self, |s| matches!(s, Step::Backup(_))) {
            let (target, channel) = (self.target.clone(), self.channel.clone());
            let mut complete = true;
            for p in self.pairs.clone() {
                complete &= self.fx.schema_exists(&target, &p.to)?;
            }
            let channel_missing = if self.streams() {
                // A stream keeps its checkpoint on the target's node: without it the copy
                // cannot be brought forward.
                let id = self.stream_id();
                done(self, |s| matches!(s, Step::StartReplication(_)))
                    && !self.fx.stream_checkpoint_exists(&target, &id)?
            } else {
                done(self, |s| matches!(s, Step::ChangeMaster(_)))
                    && self.fx.channel_state(&target, &channel)? == ChannelState::Absent
            };
            if !complete || channel_missing {
                // The copy cannot be trusted to be current: copy again.
                restart = backup;
            }
        }
        if restart.is_none()
            && self.state.fence.is_none()
            && done(self, |s| matches!(s, Step::Lock(_)))
        {
            // Everything after the fence was only valid while it stood: catch up again
            // (the channel may have been stopped at the old final position) and fence again.
            restart = self
                .step_index(|s| matches!(s, Step::StartReplication(_)))
                .or_else(|| self.step_index(|s| matches!(s, Step::Lock(_))));
        }
        if restart.is_some() && self.defers_triggers() && self.triggers_begun()? {
            // The new schema's triggers may be in place: a stream applying into it would
            // fire them. Only a fresh copy can be brought forward again.
            restart = backup;
        }
        if let Some(i) = restart {
            if self.state.fence.is_some() {
                self.lift_fence()?;
            }
            for d in self.done.iter_mut().skip(i) {
                *d = false;
            }
            self.state.verified = false;
            self.state.final_position = None;
            self.advance(if Some(i) == backup {
                Transition::CopyAgain
            } else {
                Transition::CatchUpAgain
            })?;
            self.fx.steps_pending(i as u32, self.phase)?;
        }
        let state = if self.state.fence.is_some() && !self.plan.is_key_move() {
            ShardState::ReadOnly
        } else {
            ShardState::Moving
        };
        self.fx.set_shard_state(self.shard.id, state)?;
        Ok(())
    }

    /// Removes the channel and the target's copy; the shard online on the source.
    fn roll_back_copy(&mut self) -> Result<()> {
        self.reset_channel()?;
        // A rollback after a timeout comes here without `roll_back`: the switched guards
        // must not stay behind (off, they still take a lock on every write).
        self.disarm_switch()?;
        if self.streams() {
            self.end_stream()?;
        }
        let copied =
            self.state.target_created || self.fx.last_effect(super::Effect::Copy)?.is_some();
        if copied && (self.plan.is_merge() || self.plan.is_key_move()) {
            // The survivor (the receiver) stays: only the rows of the retired shard's keys
            // (the moving keys) go from it.
            let target = self.target.clone();
            let keys = if self.plan.is_key_move() {
                self.moved_keys()?
            } else {
                self.retired_keys()?
            };
            let names: Vec<String> = keys.iter().map(|(s, t, _)| format!("{s}.{t}")).collect();
            let tables: Vec<(Ident, Ident)> = keys
                .iter()
                .map(|(s, t, _)| (s.clone(), t.clone()))
                .collect();
            let conds: Vec<_> = keys.into_iter().map(|(_, _, c)| c).collect();
            self.effect(
                super::Effect::DropTarget,
                &target,
                serde_json::json!({"survivor_tables": names}),
                |m| m.fx.unmerge_rows(&target, &tables, &conds).map(|_| ()),
            )?;
        } else if copied {
            let target = self.target.clone();
            let schemas: Vec<String> = self.pairs.iter().map(|p| p.to.to_string()).collect();
            self.effect(
                super::Effect::DropTarget,
                &target,
                serde_json::json!({"schemas": schemas}),
                |m| {
                    // A move's copy keeps the source's names on another node; a split's
                    // copy has new names, also on the shard's own node.
                    let drop: Vec<Ident> = m
                        .pairs
                        .iter()
                        .filter(|p| !(m.same_node() && p.from == p.to))
                        .map(|p| p.to.clone())
                        .collect();
                    m.fx.drop_schemas(&target, &drop, false)?;
                    m.drop_on_target_replicas(&target, &drop);
                    if m.copies_physically() {
                        // A temporary directory: the rollback goes on without it.
                        if let Err(e) = m.fx.clear_copy_staging(&target, &m.pairs) {
                            crate::output::log(
                                0,
                                &format!("warning: {e}; remove the physical copy's staging directory beside the datadir by hand"),
                            );
                        }
                    }
                    Ok(())
                },
            )?;
        }
        self.fx.set_shard_state(self.shard.id, ShardState::Online)?;
        if let super::OperationPlan::Split(plan) = &self.plan {
            let new_shard = plan.new_shard;
            self.fx.delete_offline_shard(new_shard)?;
        }
        self.advance(Transition::RolledBack)?;
        self.end_state = OpState::Aborted;
        Ok(())
    }

    /// Rolls back a claimed operation that has not flipped: fence lifted, channel removed,
    /// target copy dropped, shard online on the source. Refused after the flip.
    pub(super) fn roll_back(&mut self) -> Result<()> {
        self.fence_mapping_from_journal()?;
        if self.directory_flipped()? {
            return Err(Error::Refused(format!(
                "operation {} has flipped the directory to {}: only forward from here, `shardctl resume {}`",
                self.fx.op(), self.target, self.fx.op()
            )));
        }
        self.state.flipped = false;
        self.state.fence = self.fence_now()?;
        self.lift_fence()?;
        self.disarm_switch()?;
        self.roll_back_copy()?;
        let phase = self.phase;
        self.fx.release(OpState::Aborted, None, phase)
    }
}

impl<'a> Mover<'a, Live<'a>> {
    /// Continues a claimed operation from what the servers and the directory show.
    pub fn resume(&mut self) -> Result<MoveState> {
        let heartbeat = self.heartbeat()?;
        let reconciled =
            crate::signal::with_scope(Some(self.fx.flags.stop_flag()), || self.reconcile());
        if let Err(e) = reconciled {
            // The heartbeat goes on while recovery lowers what it must.
            let e = self.recover(e);
            if !matches!(e, Error::LeaseLost(_)) {
                let _ = self.fx.dir.release_operation(
                    &self.fx.lease,
                    self.end_state,
                    Some(&e.to_string()),
                    Some(self.phase),
                );
            }
            drop(heartbeat);
            return Err(e);
        }
        drop(heartbeat);
        self.run()
    }
}

/// Adds a note to an error's message, keeping its kind (and exit code).
fn annotate(e: Error, note: &str) -> Error {
    match e {
        Error::Timeout(m) => Error::Timeout(format!("{m} ({note})")),
        Error::Refused(m) => Error::Refused(format!("{m} ({note})")),
        Error::Interrupted => Error::Interrupted,
        Error::Server { node, message } => Error::Server {
            node,
            message: format!("{message} ({note})"),
        },
        Error::Usage(m) => Error::Usage(format!("{m} ({note})")),
        Error::Config(m) => Error::Config(format!("{m} ({note})")),
        Error::Internal(m) => Error::Internal(format!("{m} ({note})")),
        other => other,
    }
}

/// `shardctl abort`: takes the operation over (refused while its owner lives) and rolls it
/// back. Refused after the flip; the lease is then released again for `resume`.
pub fn abort(inv: &Inventory, op_id: u64) -> Result<()> {
    let quiet = |_: &StepEvent| {};
    let mut mover = Mover::claim(inv, op_id, "abort", &quiet)?;
    let heartbeat = mover.heartbeat()?;
    let rolled_back = mover.roll_back();
    drop(heartbeat);
    match rolled_back {
        Ok(()) => Ok(()),
        Err(e) => {
            let _ = mover.fx.dir.release_operation(
                &mover.fx.lease,
                OpState::Failed,
                Some(&format!("abort failed: {e}")),
                Some(mover.phase),
            );
            Err(e)
        }
    }
}

/// `shardctl flip`: the flip step of a move, by hand, on the same terms as the move's own —
/// taken over from a dead owner (never a live one), only after its verification and only
/// while the fence it verified under still stands in full. Returns the directory version.
pub fn flip_by_hand(inv: &Inventory, op_id: u64) -> Result<u64> {
    let quiet = |_: &StepEvent| {};
    let mut m = Mover::claim(inv, op_id, "flip", &quiet)?;
    let heartbeat = m.heartbeat()?;
    let result = (|| -> Result<u64> {
        m.fence_mapping_from_journal()?;
        if m.directory_flipped()? {
            return Err(Error::Usage(format!(
                "operation {op_id} has flipped already: `shardctl resume {op_id}` finishes it"
            )));
        }
        m.state.fence = m.fence_now()?;
        let verify = m.step_index(|s| matches!(s, Step::Verify(_)));
        m.state.verified = verify.is_some_and(|i| m.done.get(i).copied().unwrap_or(false));
        m.step_no = m
            .step_index(|s| matches!(s, Step::Flip(_)))
            .unwrap_or_default() as u32;
        let out = m.flip()?;
        m.advance(Transition::Flipped)?;
        Ok(out["version"].as_u64().unwrap_or(0))
    })();
    let _ = m.fx.dir.release_operation(
        &m.fx.lease,
        OpState::Failed,
        result.as_ref().err().map(|e| e.to_string()).as_deref(),
        Some(m.phase),
    );
    drop(heartbeat);
    result
}

/// What `shardctl stop` found.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StopOutcome {
    /// The owner stopped at a safe point and let go within the wait.
    Stopped,
    /// The owner was asked but still holds the operation.
    Asked,
    /// Nobody drives the operation: there is nothing to stop.
    NotRunning,
}

/// `shardctl stop`: asks the live owner of an operation to stop at its next safe point (as
/// Ctrl-C does there) and waits up to `wait` for it to let go.
pub fn stop(inv: &Inventory, op_id: u64, wait: Duration) -> Result<StopOutcome> {
    let mut dir = Directory::open(inv)?;
    let rec = dir.operation(op_id)?;
    if !matches!(rec.owner_status(), Owner::Alive { .. }) || !dir.request_stop(op_id)? {
        return Ok(StopOutcome::NotRunning);
    }
    let until = Instant::now() + wait;
    while Instant::now() < until {
        crate::signal::check()?;
        std::thread::sleep(Duration::from_millis(200));
        let rec = dir.operation(op_id)?;
        if !matches!(rec.owner_status(), Owner::Alive { .. }) {
            return Ok(StopOutcome::Stopped);
        }
    }
    Ok(StopOutcome::Asked)
}
