//! The mover's side of the phase machine ([`crate::directory::phase`]): which step
//! reaches which phase, the one method that changes the mover's phase, and the phase of an
//! operation journaled before the directory stored phases, derived from its steps and
//! state the first time it is loaded (the next journal write records it).

use super::{MoveState, Mover};
use crate::directory::journal::{OpState, OperationRecord, StepState};
use crate::directory::phase::{Phase, Transition};
use crate::error::{Error, Result};
use crate::ops::effects::Effects;
use crate::playbook::{Playbook, Step};

/// The transition a step makes once it is done, if it reaches a milestone.
pub(super) fn reached_by(step: &Step) -> Option<Transition> {
    Some(match step {
        Step::Backup(_) => Transition::Copied,
        Step::StartReplication(_) => Transition::Replicating,
        Step::Verify(_) => Transition::Verified,
        Step::Lock(_) => Transition::Fenced,
        Step::Confirm(_) => Transition::Confirmed,
        Step::Flip(_) => Transition::Flipped,
        Step::DropSource(_) => Transition::SourceDropped,
        Step::Unlock(_) => Transition::Unfenced,
        _ => return None,
    })
}

/// The phase a step's milestone is.
fn milestone(step: &Step) -> Option<Phase> {
    Some(match reached_by(step)? {
        Transition::Copied => Phase::Copied,
        Transition::Replicating => Phase::Replicating,
        Transition::Verified => Phase::Verified,
        Transition::Fenced => Phase::Fenced,
        Transition::Confirmed => Phase::Confirmed,
        Transition::Flipped => Phase::Flipped,
        Transition::SourceDropped => Phase::SourceDropped,
        _ => Phase::Unfenced,
    })
}

/// The phase of an operation whose journal has none (written by a shardctl before the
/// directory's schema version 11): from its state, its revert window's flags, and the
/// furthest milestone among its steps done.
pub(super) fn derived(rec: &OperationRecord, playbook: &Playbook, state: &MoveState) -> Phase {
    match rec.state {
        OpState::Done => return Phase::Done,
        OpState::Aborted => return Phase::RolledBack,
        OpState::Running | OpState::Failed => {}
    }
    if state.old_copy_dropped {
        return Phase::WindowClosed;
    }
    if state.reverted {
        return Phase::Reverted;
    }
    if state.revert_began {
        return Phase::RevertBegun;
    }
    let done = |i: usize| {
        rec.steps
            .iter()
            .any(|s| s.step_no as usize == i && s.state == StepState::Done)
    };
    let window = playbook
        .steps
        .iter()
        .position(|s| matches!(s, Step::RevertWindow(_)));
    if window.is_some_and(|w| (0..w).all(done)) {
        return Phase::WindowOpen;
    }
    let mut phase = playbook
        .steps
        .iter()
        .enumerate()
        .filter(|(i, _)| done(*i))
        .filter_map(|(_, s)| milestone(s))
        .max()
        .unwrap_or(Phase::Planned);
    if state.flipped {
        phase = phase.max(Phase::Flipped);
    }
    phase
}

impl<E: Effects> Mover<'_, E> {
    /// Moves the operation's phase by `transition`: the only place it changes. The next
    /// journal write of the step or request records it.
    pub(super) fn advance(&mut self, transition: Transition) -> Result<()> {
        self.phase = self
            .phase
            .advance(transition)
            .map_err(|e| Error::Internal(format!("operation {}: {e}", self.fx.op())))?;
        Ok(())
    }

    /// The phase reached.
    pub fn phase(&self) -> Phase {
        self.phase
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::directory::journal::StepRecord;

    fn record(playbook: &Playbook, done: usize, state: OpState) -> OperationRecord {
        OperationRecord {
            id: 7,
            kind: crate::directory::journal::OpKind::Move,
            shard_id: Some(1),
            source: None,
            target: None,
            state,
            phase: None,
            owner: None,
            epoch: 1,
            heartbeat_age_secs: None,
            stop_requested: false,
            pause_requested: false,
            paused_at_millis: None,
            limits: Default::default(),
            progress: None,
            params: serde_json::Value::Null,
            error: None,
            created_at_millis: None,
            updated_at_millis: None,
            steps: playbook
                .steps
                .iter()
                .enumerate()
                .map(|(i, s)| StepRecord {
                    step_no: i as u32,
                    name: s.name().into(),
                    state: if i < done {
                        StepState::Done
                    } else {
                        StepState::Pending
                    },
                    inputs: serde_json::Value::Null,
                    outputs: serde_json::Value::Null,
                    millis: None,
                })
                .collect(),
            effects: Vec::new(),
        }
    }

    /// An operation journaled before phases gets, at each point of the default move, the
    /// phase its steps reached.
    #[test]
    fn an_old_operation_gets_the_phase_of_its_steps() {
        let pb = Playbook::default_move();
        let phases: Vec<Phase> = (0..=pb.steps.len())
            .map(|done| {
                derived(
                    &record(&pb, done, OpState::Failed),
                    &pb,
                    &MoveState::default(),
                )
            })
            .collect();
        use Phase::*;
        // preflight backup change-master filter start-replication wait verify lock wait
        // confirm flip drop-source unlock reset-replication
        assert_eq!(
            phases,
            [
                Planned,
                Planned,
                Copied,
                Copied,
                Copied,
                Replicating,
                Replicating,
                Verified,
                Fenced,
                Fenced,
                Confirmed,
                Flipped,
                SourceDropped,
                Unfenced,
                Unfenced,
            ]
        );
        let all = pb.steps.len();
        assert_eq!(
            derived(&record(&pb, all, OpState::Done), &pb, &MoveState::default()),
            Done
        );
        assert_eq!(
            derived(
                &record(&pb, 3, OpState::Aborted),
                &pb,
                &MoveState::default()
            ),
            RolledBack
        );
        // The directory flipped while the flip step was not journaled done.
        let flipped = MoveState {
            flipped: true,
            ..Default::default()
        };
        assert_eq!(
            derived(&record(&pb, 10, OpState::Failed), &pb, &flipped),
            Flipped
        );
    }

    /// In a revert window, the window's flags decide.
    #[test]
    fn an_old_operation_in_its_revert_window() {
        let mut pb = Playbook::default_move();
        pb.revert_window(crate::playbook::RevertWindowParams::new(60));
        let window = pb.steps.len() - 1;
        let rec = record(&pb, window, OpState::Running);
        let s = MoveState::default();
        assert_eq!(derived(&rec, &pb, &s), Phase::WindowOpen);
        let begun = MoveState {
            revert_began: true,
            ..Default::default()
        };
        assert_eq!(derived(&rec, &pb, &begun), Phase::RevertBegun);
        let reverted = MoveState {
            revert_began: true,
            reverted: true,
            ..Default::default()
        };
        assert_eq!(derived(&rec, &pb, &reverted), Phase::Reverted);
        let closed = MoveState {
            old_copy_dropped: true,
            ..Default::default()
        };
        assert_eq!(derived(&rec, &pb, &closed), Phase::WindowClosed);
        assert_eq!(
            derived(&record(&pb, window - 1, OpState::Failed), &pb, &s),
            Phase::Unfenced
        );
    }

    /// The journal reads the fence durations (status, ops, the exporter's histogram) under
    /// the keys this procedure's state is journaled with: renaming a field of the state
    /// fails here, not silently in monitoring.
    #[test]
    fn the_journal_reads_the_fence_durations_the_state_journals() {
        let pb = Playbook::default_move();
        let mut rec = record(&pb, pb.steps.len(), OpState::Done);
        assert_eq!(
            (rec.fence_millis(), rec.revert_fence_millis()),
            (None, None)
        );
        let state = MoveState {
            fence_millis: Some(1234),
            revert_fence_millis: Some(56),
            ..Default::default()
        };
        let last = rec.steps.len() - 2;
        rec.steps[last].outputs = serde_json::to_value(&state).unwrap();
        assert_eq!(rec.fence_millis(), Some(1234));
        assert_eq!(rec.revert_fence_millis(), Some(56));
    }
}
