//! The phase of a move, split or merge: where its procedure stands, in one ordered value
//! that the journal stores beside its steps (`operations.phase`), written in the same
//! lease-checked transaction as the step or request that changed it.
//!
//! The phases summarise the playbook's steps (whose list varies): a step reaching its
//! milestone moves the phase on (`backup` → copied, `start-replication` → replicating,
//! `verify` → verified, `lock` → fenced, `confirm` → confirmed, `flip` → flipped,
//! `drop-source` → source dropped, `unlock` → unfenced), the revert window adds its own,
//! and the operation's end makes it done. [`Phase::advance`] is the only way from one
//! phase to another, so the rule the procedure rests on is written once: before the flip
//! the operation may go back (its fence lifted, its copy made again) or be rolled back;
//! from the flip on, only forward.
//!
//! It lives with the journal (the directory layer) because the operator's requests are
//! guarded by it in the journal's own UPDATE (`... AND phase IN (...)`): a request the
//! phase does not accept is refused by the statement that would record it, never by a
//! read that may be stale by the time it is written.

use crate::error::{Error, Result};
use std::fmt;

/// Where a move, split or merge stands. The order is the procedure's: comparisons such as
/// `phase >= Phase::Flipped` rely on it (see the order test below).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Phase {
    /// Journaled; nothing copied yet (the preflight and the copy run here).
    Planned,
    /// The target holds a copy with the source's coordinates.
    Copied,
    /// The channel carries the source's writes to the copy.
    Replicating,
    /// The copy compared equal to the source at a consistent point, outside any fence.
    Verified,
    /// The write fence is up on the source.
    Fenced,
    /// Under the fence: the target reached the final position and matches.
    Confirmed,
    /// The directory points at the target: only forward from here.
    Flipped,
    /// The old copy is out of every client's reach.
    SourceDropped,
    /// The fence is lifted.
    Unfenced,
    /// A move's revert window: the old copy kept current by the reverse channel.
    WindowOpen,
    /// Its owner took up a `revert` (journaled before the revert's catch-up): the window
    /// takes no `finalize` or `extend` until the revert flips back or stops before it.
    RevertBegun,
    /// The directory points at the old node again.
    Reverted,
    /// The window is over: the copy left behind (the old one, or the new node's after a
    /// revert) is dropped.
    WindowClosed,
    /// Finished.
    Done,
    /// Rolled back before its flip (aborted): the shard stays where it was.
    RolledBack,
}

/// What moves an operation from one phase to another.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Transition {
    /// The copy step finished.
    Copied,
    /// The channel started.
    Replicating,
    /// The verification finished.
    Verified,
    /// The fence went up.
    Fenced,
    /// Confirmed under the fence.
    Confirmed,
    /// The directory points at the target (by the flip step, or found so by recovery after
    /// a flip by hand or a lost reply).
    Flipped,
    /// The old copy is out of reach.
    SourceDropped,
    /// The fence was lifted after the flip.
    Unfenced,
    /// Before the flip: the fence came down, so whatever was established under it no
    /// longer holds (at most verified again).
    FenceLifted,
    /// Before the flip: the copy can no longer be trusted to be current and the channel
    /// catches up again (from the copy).
    CatchUpAgain,
    /// Before the flip: the copy is made again.
    CopyAgain,
    /// The revert window opened.
    WindowOpened,
    /// The owner took up a `revert` request.
    RevertBegun,
    /// A revert stopped before its flip back: its fence lifted, the window open again.
    RevertStopped,
    /// The revert's flip back.
    FlippedBack,
    /// The window's end: the copy left behind dropped.
    WindowClosed,
    /// The operation finished.
    Finished,
    /// Rolled back before the flip.
    RolledBack,
}

/// A transition the phase machine does not allow from a phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IllegalTransition {
    /// The phase it was tried from.
    pub from: Phase,
    /// The transition tried.
    pub transition: Transition,
}

impl fmt::Display for IllegalTransition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "an operation {} cannot go by {:?}",
            self.from.as_sql(),
            self.transition
        )
    }
}

impl From<IllegalTransition> for Error {
    fn from(e: IllegalTransition) -> Error {
        Error::Internal(e.to_string())
    }
}

/// What an operator may ask of a running operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Request {
    /// `shardctl cutover`: the go-ahead of an operation waiting for its cut-over.
    Cutover,
    /// `shardctl stop`: stop at the next safe point.
    Stop,
    /// `shardctl pause`.
    Pause,
    /// `shardctl continue`.
    Resume,
    /// `shardctl throttle`.
    Throttle,
    /// `shardctl revert`: back to the old copy within the revert window.
    Revert,
    /// `shardctl finalize`: drop the old copy now.
    Finalize,
    /// `shardctl extend`: the window ends later.
    Extend,
}

/// Why a phase does not accept a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The operation is over (or its window is).
    Finished,
    /// It does not wait for its cut-over now (a cut-over is asked between its channel
    /// starting and its fence).
    NotAwaitingCutover,
    /// It is not in a revert window.
    NotInWindow,
    /// A revert is under way: neither `finalize` nor `extend` until it flips back or stops.
    RevertUnderWay,
}

impl Phase {
    /// Every phase, in order.
    pub const ALL: [Phase; 15] = [
        Phase::Planned,
        Phase::Copied,
        Phase::Replicating,
        Phase::Verified,
        Phase::Fenced,
        Phase::Confirmed,
        Phase::Flipped,
        Phase::SourceDropped,
        Phase::Unfenced,
        Phase::WindowOpen,
        Phase::RevertBegun,
        Phase::Reverted,
        Phase::WindowClosed,
        Phase::Done,
        Phase::RolledBack,
    ];

    /// The journal's spelling.
    pub fn as_sql(self) -> &'static str {
        match self {
            Phase::Planned => "planned",
            Phase::Copied => "copied",
            Phase::Replicating => "replicating",
            Phase::Verified => "verified",
            Phase::Fenced => "fenced",
            Phase::Confirmed => "confirmed",
            Phase::Flipped => "flipped",
            Phase::SourceDropped => "source-dropped",
            Phase::Unfenced => "unfenced",
            Phase::WindowOpen => "window-open",
            Phase::RevertBegun => "revert-begun",
            Phase::Reverted => "reverted",
            Phase::WindowClosed => "window-closed",
            Phase::Done => "done",
            Phase::RolledBack => "rolled-back",
        }
    }

    /// Reads the journal's spelling.
    pub fn parse(text: &str) -> Result<Phase> {
        Phase::ALL
            .into_iter()
            .find(|p| p.as_sql() == text)
            .ok_or_else(|| Error::Internal(format!("the journal holds an unknown phase {text:?}")))
    }

    /// Before the flip: the operation may still go back or be rolled back.
    pub fn before_flip(self) -> bool {
        self < Phase::Flipped
    }

    /// Nothing more will happen.
    pub fn is_terminal(self) -> bool {
        matches!(self, Phase::Done | Phase::RolledBack)
    }

    /// The flip may go ahead: the copy was verified and the fence stands (confirmed by the
    /// procedure, or fenced for a flip by hand, which checks the fence itself).
    pub fn may_flip(self) -> bool {
        matches!(self, Phase::Verified | Phase::Fenced | Phase::Confirmed)
    }

    /// The phase `transition` leads to from this one, or why it may not be taken.
    pub fn advance(self, transition: Transition) -> std::result::Result<Phase, IllegalTransition> {
        use Phase as P;
        use Transition as T;
        let to = match (transition, self) {
            (T::Copied, P::Planned | P::Copied) => P::Copied,
            (T::Replicating, P::Copied | P::Replicating) => P::Replicating,
            (T::Verified, P::Replicating | P::Verified) => P::Verified,
            (T::Fenced, P::Verified | P::Fenced) => P::Fenced,
            (T::Confirmed, P::Fenced | P::Confirmed) => P::Confirmed,
            (T::Flipped, P::Verified | P::Fenced | P::Confirmed | P::Flipped) => P::Flipped,
            (T::SourceDropped, P::Flipped | P::SourceDropped) => P::SourceDropped,
            (T::Unfenced, P::Flipped | P::SourceDropped | P::Unfenced) => P::Unfenced,
            (T::FenceLifted, p) if p.before_flip() => p.min(P::Verified),
            (T::CatchUpAgain, p) if p.before_flip() && p >= P::Copied => P::Copied,
            (T::CopyAgain, p) if p.before_flip() => P::Planned,
            (T::WindowOpened, P::Unfenced | P::WindowOpen) => P::WindowOpen,
            (T::RevertBegun, P::WindowOpen) => P::RevertBegun,
            (T::RevertStopped, P::RevertBegun) => P::WindowOpen,
            (T::FlippedBack, P::RevertBegun | P::Reverted) => P::Reverted,
            (T::WindowClosed, P::WindowOpen | P::Reverted | P::WindowClosed) => P::WindowClosed,
            (T::Finished, P::Unfenced | P::WindowClosed | P::Done) => P::Done,
            (T::RolledBack, p) if p.before_flip() || p == P::RolledBack => P::RolledBack,
            (transition, from) => return Err(IllegalTransition { from, transition }),
        };
        Ok(to)
    }

    /// Whether an operator's `request` is taken in this phase. Stop, pause, continue and
    /// throttle are taken until the end; a cut-over while the copy is current and no fence
    /// is up; revert, finalize and extend in the revert window only — revert also while
    /// one is under way (it is taken up again if that one stops before its flip back),
    /// finalize and extend not then.
    pub fn accepts(self, request: Request) -> std::result::Result<(), Refusal> {
        use Phase as P;
        use Request as R;
        if self.is_terminal() {
            return Err(Refusal::Finished);
        }
        match (request, self) {
            (R::Stop | R::Pause | R::Resume | R::Throttle, _) => Ok(()),
            (R::Cutover, P::Replicating | P::Verified) => Ok(()),
            (R::Cutover, _) => Err(Refusal::NotAwaitingCutover),
            (R::Revert, P::WindowOpen | P::RevertBegun) => Ok(()),
            (R::Finalize | R::Extend, P::WindowOpen) => Ok(()),
            (R::Finalize | R::Extend, P::RevertBegun | P::Reverted) => Err(Refusal::RevertUnderWay),
            (R::Revert | R::Finalize | R::Extend, _) => Err(Refusal::NotInWindow),
        }
    }

    /// The phases that accept `request`, for the guard of the UPDATE that records it.
    pub fn accepting(request: Request) -> Vec<Phase> {
        Phase::ALL
            .into_iter()
            .filter(|p| p.accepts(request).is_ok())
            .collect()
    }
}

impl Transition {
    /// Every transition.
    pub const ALL: [Transition; 18] = [
        Transition::Copied,
        Transition::Replicating,
        Transition::Verified,
        Transition::Fenced,
        Transition::Confirmed,
        Transition::Flipped,
        Transition::SourceDropped,
        Transition::Unfenced,
        Transition::FenceLifted,
        Transition::CatchUpAgain,
        Transition::CopyAgain,
        Transition::WindowOpened,
        Transition::RevertBegun,
        Transition::RevertStopped,
        Transition::FlippedBack,
        Transition::WindowClosed,
        Transition::Finished,
        Transition::RolledBack,
    ];
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_sql())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The phases `from` can reach by one transition, as one letter per phase of
    /// [`Phase::ALL`] (`x` reachable, `.` not).
    fn reachable_row(from: Phase) -> String {
        Phase::ALL
            .iter()
            .map(|to| {
                let legal = Transition::ALL.iter().any(|t| from.advance(*t) == Ok(*to));
                if legal {
                    'x'
                } else {
                    '.'
                }
            })
            .collect()
    }

    /// Every (from, to) pair of phases, legal or not, as a table: a change to the machine
    /// changes this table, on purpose or it fails. Columns in the order of the rows.
    #[test]
    fn the_transition_table() {
        let expected = [
            // PCRVFcfSUWBrwDX   (to)
            ("planned", "xx............x"),
            ("copied", "xxx...........x"),
            ("replicating", "xxxx..........x"),
            ("verified", "xx.xx.x.......x"),
            ("fenced", "xx.xxxx.......x"),
            ("confirmed", "xx.x.xx.......x"),
            ("flipped", "......xxx......"),
            ("source-dropped", ".......xx......"),
            ("unfenced", "........xx...x."),
            ("window-open", ".........xx.x.."),
            ("revert-begun", ".........x.x..."),
            ("reverted", "...........xx.."),
            ("window-closed", "............xx."),
            ("done", ".............x."),
            ("rolled-back", "..............x"),
        ];
        for (from, row) in expected {
            let from = Phase::parse(from).unwrap();
            assert_eq!(reachable_row(from), row, "from {from}");
        }
        assert_eq!(expected.len(), Phase::ALL.len());
    }

    /// The tripwire of the order: code compares phases (`before_flip`, `FenceLifted`'s
    /// "at most verified"), so reordering the enum changes behaviour. If this fails, the
    /// order changed: check every comparison before fixing the list.
    #[test]
    fn the_phases_keep_their_order() {
        let spelled: Vec<&str> = Phase::ALL.iter().map(|p| p.as_sql()).collect();
        assert_eq!(
            spelled,
            [
                "planned",
                "copied",
                "replicating",
                "verified",
                "fenced",
                "confirmed",
                "flipped",
                "source-dropped",
                "unfenced",
                "window-open",
                "revert-begun",
                "reverted",
                "window-closed",
                "done",
                "rolled-back",
            ]
        );
        let mut sorted = Phase::ALL;
        sorted.sort();
        assert_eq!(sorted, Phase::ALL, "ALL is in the enum's order");
        assert!(Phase::Confirmed < Phase::Flipped);
        assert!(Phase::Verified < Phase::Fenced);
        assert!(Phase::Unfenced < Phase::WindowOpen);
        assert!(Phase::WindowClosed < Phase::Done);
        let before: Vec<Phase> = Phase::ALL.into_iter().filter(|p| p.before_flip()).collect();
        assert_eq!(
            before,
            [
                Phase::Planned,
                Phase::Copied,
                Phase::Replicating,
                Phase::Verified,
                Phase::Fenced,
                Phase::Confirmed
            ]
        );
        for p in Phase::ALL {
            assert_eq!(Phase::parse(p.as_sql()).unwrap(), p);
            assert_eq!(serde_json::to_value(p).unwrap(), p.as_sql());
        }
    }

    /// After the flip there is no way back to a phase before it, and nothing rolls back.
    #[test]
    fn after_the_flip_only_forward() {
        let after = Phase::ALL
            .into_iter()
            .filter(|p| !p.before_flip() && *p != Phase::RolledBack);
        for from in after {
            for t in Transition::ALL {
                if let Ok(to) = from.advance(t) {
                    assert!(!to.before_flip(), "{from} by {t:?} to {to}");
                    assert_ne!(to, Phase::RolledBack, "{from} by {t:?}");
                }
            }
        }
    }

    #[test]
    fn the_flip_needs_a_verified_copy() {
        let may: Vec<Phase> = Phase::ALL.into_iter().filter(|p| p.may_flip()).collect();
        assert_eq!(may, [Phase::Verified, Phase::Fenced, Phase::Confirmed]);
        assert!(Phase::Replicating.advance(Transition::Flipped).is_err());
    }

    /// Which phase takes which request, as a table (`y` taken; otherwise the refusal:
    /// `F` finished, `C` not awaiting its cut-over, `N` not in a window, `R` revert under
    /// way). Columns: cutover, stop, pause, continue, throttle, revert, finalize, extend.
    #[test]
    fn the_requests_each_phase_takes() {
        let requests = [
            Request::Cutover,
            Request::Stop,
            Request::Pause,
            Request::Resume,
            Request::Throttle,
            Request::Revert,
            Request::Finalize,
            Request::Extend,
        ];
        let expected = [
            ("planned", "CyyyyNNN"),
            ("copied", "CyyyyNNN"),
            ("replicating", "yyyyyNNN"),
            ("verified", "yyyyyNNN"),
            ("fenced", "CyyyyNNN"),
            ("confirmed", "CyyyyNNN"),
            ("flipped", "CyyyyNNN"),
            ("source-dropped", "CyyyyNNN"),
            ("unfenced", "CyyyyNNN"),
            ("window-open", "Cyyyyyyy"),
            ("revert-begun", "CyyyyyRR"),
            ("reverted", "CyyyyNRR"),
            ("window-closed", "CyyyyNNN"),
            ("done", "FFFFFFFF"),
            ("rolled-back", "FFFFFFFF"),
        ];
        for (phase, row) in expected {
            let p = Phase::parse(phase).unwrap();
            let got: String = requests
                .iter()
                .map(|r| match p.accepts(*r) {
                    Ok(()) => 'y',
                    Err(Refusal::Finished) => 'F',
                    Err(Refusal::NotAwaitingCutover) => 'C',
                    Err(Refusal::NotInWindow) => 'N',
                    Err(Refusal::RevertUnderWay) => 'R',
                })
                .collect();
            assert_eq!(got, row, "{phase}");
        }
        assert_eq!(Phase::accepting(Request::Finalize), [Phase::WindowOpen]);
    }
}
