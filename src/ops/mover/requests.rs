//! An operator's requests to a running move, split or merge — `cutover`, and `revert`,
//! `finalize` and `extend` of a revert window — as library calls. Each is checked against
//! the operation's phase ([`Phase::accepts`]) to word a refusal, and recorded by an UPDATE
//! whose own guard is that phase (`... AND phase IN (...)`): a request the phase stopped
//! taking between the read and the write is refused by the write, and the refusal is read
//! back and returned typed ([`Refusal`]). A `finalize` asked while the owner has taken up a
//! revert is refused this way, whatever the revert is doing (its catch-up and verification
//! last minutes).

use super::{journaled_playbook, phases, MoveState};
use crate::config::Inventory;
use crate::directory::journal::{
    OpKind, OpState, OperationRecord, Owner, PhaseGuard, RequestRecord, StepState, WindowRequest,
};
use crate::directory::phase::{self, Phase, Request};
use crate::directory::Directory;
use crate::error::{Error, Result};
use crate::playbook::Step;

/// A request recorded for the operation's owner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Recorded {
    /// A live process drives the operation and takes the request up within a second;
    /// otherwise `shardctl resume` does.
    pub owner_alive: bool,
}

/// Why a request was not recorded (nothing changed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The operation is finished.
    Finished(OpState),
    /// It finished between the check and the write.
    FinishedMeanwhile,
    /// It has no step left to run.
    NoStepLeft,
    /// A cut-over: it does not wait for one; its next step (number from 1, name).
    NotAwaitingCutover(u32, String),
    /// A window request: it is not in a revert window; its next step.
    NotInWindow(u32, String),
    /// A revert is under way (or was when its owner stopped): no finalize or extend.
    RevertUnderWay,
    /// The other window request is pending and stands.
    Pending(WindowRequest),
    /// `extend`: the window is opening, no end journaled yet.
    WindowOpening,
    /// `extend --until`: not later than `from` (the window's end, or now when it passed).
    NotLater {
        /// The end asked for (Unix seconds).
        asked: i64,
        /// The earliest end it had to be later than.
        from: i64,
    },
    /// The phase kept changing under the request.
    KeptChanging,
    /// `finalize` or `extend` of an operation whose live owner journals no phase (a
    /// shardctl of an earlier release, mid-upgrade): its revert may be under way unseen.
    OwnerJournalsNoPhase,
}

/// A refused request: the operation, the command, why. Turns into the one-line error
/// (and exit code) the command reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    /// The operation.
    pub op: u64,
    /// The command (`cutover`, `revert`, `finalize`, `extend`).
    pub verb: &'static str,
    /// Why.
    pub why: Refusal,
}

impl From<Refused> for Error {
    fn from(r: Refused) -> Error {
        let (op, verb) = (r.op, r.verb);
        match r.why {
            Refusal::Finished(state) if verb == "cutover" => Error::Usage(format!(
                "operation {op} is {state}: there is no cut-over left to start"
            )),
            Refusal::Finished(state) => Error::Usage(format!(
                "operation {op} is {state}: its revert window is closed (the old copy is gone), nothing to {verb}"
            )),
            Refusal::FinishedMeanwhile => {
                Error::Usage(format!("operation {op} finished meanwhile"))
            }
            Refusal::NoStepLeft => Error::Usage(format!("operation {op} has no step left to run")),
            Refusal::NotAwaitingCutover(no, name) => Error::Usage(format!(
                "operation {op} is not waiting for its cut-over: its next step is {no} {name} (only an operation started with --cutover waits, once its copy is verified)"
            )),
            Refusal::NotInWindow(no, name) => Error::Usage(format!(
                "operation {op} is not in a revert window: its next step is {no} {name} (only a move started with --revert-window has one, once it flipped)"
            )),
            Refusal::OwnerJournalsNoPhase => Error::Refused(format!(
                "operation {op} is driven by a shardctl of an earlier release, which journals no phase, so a revert of its window may be under way unseen: no {verb} requested; ask again once that owner finishes, or `shardctl stop {op}` and `shardctl resume {op}` with this release"
            )),
            Refusal::RevertUnderWay => Error::Refused(format!(
                "operation {op}: a revert is under way (or was when its owner stopped; `shardctl resume {op}` settles it): no {verb} requested; if the revert stops before its flip back, the window opens again and {verb} can be asked then"
            )),
            Refusal::Pending(pending) => Error::Refused(format!(
                "operation {op}: a {} is already requested and not yet taken up by its owner; it stands (no {verb} requested)",
                pending.verb()
            )),
            Refusal::WindowOpening => Error::Refused(format!(
                "operation {op}: its revert window is opening (no end journaled yet); try again"
            )),
            Refusal::NotLater { asked, from } => Error::Usage(format!(
                "--until {}: not later than {} (the window's end, or now when it has passed): extend only moves the end later",
                crate::clock::rfc3339_millis(asked.saturating_mul(1000)),
                crate::clock::rfc3339_millis(from * 1000)
            )),
            Refusal::KeptChanging => Error::Refused(format!(
                "operation {op}: its phase kept changing under the {verb}; try again"
            )),
        }
    }
}

/// What became of a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RequestOutcome {
    /// Recorded for the owner.
    Recorded(Recorded),
    /// Refused; nothing changed.
    Refused(Refused),
}

/// How far `shardctl extend` moves a window's end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Extension {
    /// By this many seconds from its end (from now when the end has passed).
    By(u64),
    /// To this Unix time.
    Until(i64),
}

/// The phase of `rec` as its owner would see it: journaled, or derived from its steps for
/// one journaled before phases. None for an operation that has no procedure of its own
/// (a prune, a fence by hand) or an unreadable playbook.
fn effective_phase(rec: &OperationRecord) -> Option<Phase> {
    if let Some(p) = rec.phase {
        return Some(p);
    }
    if !matches!(
        rec.kind,
        OpKind::Move | OpKind::Split | OpKind::Merge | OpKind::MoveKeys
    ) {
        return None;
    }
    let playbook = journaled_playbook(rec).ok()?;
    Some(phases::derived(rec, &playbook, &state_of(rec)))
}

/// The procedure's state as its last step journaled it.
fn state_of(rec: &OperationRecord) -> MoveState {
    rec.steps
        .iter()
        .rev()
        .find(|s| !s.outputs.is_null())
        .and_then(|s| serde_json::from_value(s.outputs.clone()).ok())
        .unwrap_or_default()
}

/// The next step to run, as (number from 1, name).
fn next_step(rec: &OperationRecord) -> Option<(u32, String)> {
    rec.steps
        .iter()
        .find(|s| s.state != StepState::Done)
        .map(|s| (s.step_no + 1, s.name.clone()))
}

fn owner_alive(rec: &OperationRecord) -> bool {
    matches!(rec.owner_status(), Owner::Alive { .. })
}

/// Why `rec` does not take a window request `request` (None: it does).
fn window_refusal(rec: &OperationRecord, request: Request) -> Option<Refusal> {
    if rec.state.is_finished() {
        return Some(Refusal::Finished(rec.state));
    }
    let refusal = match effective_phase(rec) {
        Some(p) => p.accepts(request).err()?,
        None => phase::Refusal::NotInWindow,
    };
    Some(match refusal {
        phase::Refusal::Finished => Refusal::Finished(rec.state),
        phase::Refusal::RevertUnderWay => Refusal::RevertUnderWay,
        phase::Refusal::NotInWindow | phase::Refusal::NotAwaitingCutover => match next_step(rec) {
            Some((no, name)) => Refusal::NotInWindow(no, name),
            None => Refusal::NoStepLeft,
        },
    })
}

/// Why `rec` does not take a cut-over (None: it waits for one).
fn cutover_refusal(rec: &OperationRecord) -> Option<Refusal> {
    if rec.state.is_finished() {
        return Some(Refusal::Finished(rec.state));
    }
    let Some(next) = rec.steps.iter().find(|s| s.state != StepState::Done) else {
        return Some(Refusal::NoStepLeft);
    };
    let waits_here = journaled_playbook(rec).is_ok_and(|pb| {
        matches!(
            pb.steps.get(next.step_no as usize),
            Some(Step::AwaitCutover(_))
        )
    });
    let taken = effective_phase(rec).is_some_and(|p| p.accepts(Request::Cutover).is_ok());
    if waits_here && taken {
        None
    } else {
        Some(Refusal::NotAwaitingCutover(
            next.step_no + 1,
            next.name.clone(),
        ))
    }
}

/// The guard of the UPDATE recording a request: one of the phases that take it, or no
/// phase at all — reached only when the phase derived for a phase-less operation took it.
fn guard(accepting: &[Phase]) -> PhaseGuard<'_> {
    PhaseGuard {
        accepting,
        without_phase: true,
    }
}

/// `shardctl cutover OP`: the go-ahead for an operation waiting in its `await-cutover`
/// step.
pub fn cutover(inv: &Inventory, op: u64) -> Result<RequestOutcome> {
    let mut dir = Directory::open(inv)?;
    let rec = dir.operation(op)?;
    let refused = |why| -> Result<RequestOutcome> {
        Ok(RequestOutcome::Refused(Refused {
            op,
            verb: "cutover",
            why,
        }))
    };
    if let Some(why) = cutover_refusal(&rec) {
        return refused(why);
    }
    let accepting = Phase::accepting(Request::Cutover);
    match dir.request_cutover(op, &guard(&accepting))? {
        RequestRecord::Recorded => Ok(RequestOutcome::Recorded(Recorded {
            owner_alive: owner_alive(&rec),
        })),
        RequestRecord::Finished => refused(Refusal::FinishedMeanwhile),
        RequestRecord::NotAccepted(_) | RequestRecord::Conflicts(_) => {
            let now = dir.operation(op)?;
            refused(cutover_refusal(&now).unwrap_or(Refusal::KeptChanging))
        }
    }
}

/// `shardctl revert OP` or `shardctl finalize OP` (`request`): what to do with a move's
/// revert window.
pub fn window(inv: &Inventory, op: u64, request: WindowRequest) -> Result<RequestOutcome> {
    let kind = match request {
        WindowRequest::Revert => Request::Revert,
        WindowRequest::Finalize => Request::Finalize,
        WindowRequest::ExtendUntil(_) => Request::Extend,
    };
    ask_window(inv, op, kind, request.verb(), |_| Ok(request))
}

/// `shardctl extend OP`: the window ends later. Returns the end asked for with the outcome.
pub fn extend(inv: &Inventory, op: u64, by: Extension) -> Result<(RequestOutcome, Option<i64>)> {
    let mut asked_until = None;
    let outcome = ask_window(inv, op, Request::Extend, "extend", |state| {
        let until = state.revert_until_unix.ok_or(Refusal::WindowOpening)?;
        let from = until.max(crate::clock::unix_secs());
        let asked = match by {
            Extension::Until(asked) => asked,
            Extension::By(secs) => from + secs as i64,
        };
        if asked <= from {
            return Err(Refusal::NotLater { asked, from });
        }
        asked_until = Some(asked);
        Ok(WindowRequest::ExtendUntil(asked))
    })?;
    Ok((outcome, asked_until))
}

/// Records the window request `request` builds from the procedure's state, refused unless
/// the operation's phase takes it — checked first to word the refusal, and again by the
/// UPDATE that records it.
fn ask_window(
    inv: &Inventory,
    op: u64,
    kind: Request,
    verb: &'static str,
    request: impl FnOnce(&MoveState) -> std::result::Result<WindowRequest, Refusal>,
) -> Result<RequestOutcome> {
    let mut dir = Directory::open(inv)?;
    let rec = dir.operation(op)?;
    let refused =
        |why| -> Result<RequestOutcome> { Ok(RequestOutcome::Refused(Refused { op, verb, why })) };
    if let Some(why) = window_refusal(&rec, kind) {
        return refused(why);
    }
    // A live owner of this release journals its phase with its first step; one that has
    // none is of an earlier release, which journals a revert as begun only at its fence.
    if matches!(kind, Request::Finalize | Request::Extend)
        && rec.phase.is_none()
        && owner_alive(&rec)
    {
        return refused(Refusal::OwnerJournalsNoPhase);
    }
    let request = match request(&state_of(&rec)) {
        Ok(r) => r,
        Err(why) => return refused(why),
    };
    let accepting = Phase::accepting(kind);
    match dir.request_window(op, request, &guard(&accepting))? {
        RequestRecord::Recorded => Ok(RequestOutcome::Recorded(Recorded {
            owner_alive: owner_alive(&rec),
        })),
        RequestRecord::Finished => refused(Refusal::FinishedMeanwhile),
        RequestRecord::Conflicts(pending) => refused(Refusal::Pending(pending)),
        RequestRecord::NotAccepted(_) => {
            let now = dir.operation(op)?;
            refused(window_refusal(&now, kind).unwrap_or(Refusal::KeptChanging))
        }
    }
}

/// The journaled state of `rec`'s revert window while it is open (its step not done yet),
/// as `shardctl ops OP` shows it.
pub fn open_window_outputs(rec: &OperationRecord) -> Option<&serde_json::Value> {
    let playbook = journaled_playbook(rec).ok()?;
    let at = playbook
        .steps
        .iter()
        .position(|s| matches!(s, Step::RevertWindow(_)))?;
    rec.steps
        .iter()
        .find(|s| s.step_no as usize == at && s.state != StepState::Done)
        .map(|s| &s.outputs)
}
