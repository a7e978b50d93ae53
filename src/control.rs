//! Operator control of a running operation: `shardctl pause` / `continue` and the live
//! limits of `shardctl throttle`. The owner's heartbeat reads both from the journal every
//! second into the operation's [`Control`]; the work consults it at its safe points — the
//! native copy before each batch it writes, the catch-up wait before each round, the prune
//! before each chunk, the driver between two unfenced steps — and parks there while a pause
//! is requested. A safe point is never inside a fence: a pause asked for while a fence is
//! up takes effect at the first safe point after it is lifted.
//!
//! The pause is acknowledged (journaled as `paused_at` by the heartbeat) only once every
//! piece of work registered as running ([`Control::participant`]) is parked, so a paused
//! operation has stopped writing, not merely been asked to.
//!
//! The work reaches its operation's control through [`with`] / [`current`], scoped to the
//! thread like the stop flag of [`crate::signal`], so one operation of several in a process
//! (`rebalance apply`) pauses alone.

use crate::config::Inventory;
use crate::directory::journal::{Limits, OpKind, Owner};
use crate::directory::Directory;
use crate::error::{Error, Result};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// One operation's pause request and live limits, and how much of its work is parked.
#[derive(Debug, Default)]
pub struct Control {
    pause: AtomicBool,
    /// Pieces of work running (each a [`Participant`]).
    active: AtomicUsize,
    /// Of them, those parked at a safe point.
    parked: AtomicUsize,
    limits: Mutex<Limits>,
}

/// A piece of work counted as running until dropped.
#[must_use]
pub struct Participant<'a>(&'a Control);

impl Drop for Participant<'_> {
    fn drop(&mut self) {
        self.0.active.fetch_sub(1, Ordering::SeqCst);
    }
}

/// How often a parked worker looks at the request again.
const POLL: Duration = Duration::from_millis(50);

impl Control {
    /// What the journal asks for now (the heartbeat's reading).
    pub fn set_requested(&self, pause: bool, limits: Limits) {
        self.pause.store(pause, Ordering::SeqCst);
        *self.limits.lock().unwrap_or_else(|p| p.into_inner()) = limits;
    }

    /// A pause is requested.
    pub fn pause_requested(&self) -> bool {
        self.pause.load(Ordering::SeqCst)
    }

    /// The pause has taken effect: requested, and every running piece of work is parked.
    pub fn paused(&self) -> bool {
        let active = self.active.load(Ordering::SeqCst);
        self.pause_requested() && active > 0 && self.parked.load(Ordering::SeqCst) >= active
    }

    /// The live limits (None where the operation keeps its own).
    pub fn limits(&self) -> Limits {
        *self.limits.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Counts a piece of work as running until the guard drops: a pause is acknowledged
    /// only once it is parked too.
    pub fn participant(&self) -> Participant<'_> {
        self.active.fetch_add(1, Ordering::SeqCst);
        Participant(self)
    }

    /// For a [`participant`](Self::participant): parks while `hold` is true, counted as
    /// parked; an interrupt (Ctrl-C, `shardctl stop`, a lost lease) ends the wait with
    /// [`crate::Error::Interrupted`]. Returns how long it parked.
    pub fn hold_while(&self, hold: impl Fn(&Control) -> bool) -> Result<Duration> {
        if !hold(self) {
            return Ok(Duration::ZERO);
        }
        let started = Instant::now();
        self.parked.fetch_add(1, Ordering::SeqCst);
        let result = (|| {
            while hold(self) {
                crate::signal::check()?;
                std::thread::sleep(POLL);
            }
            Ok(())
        })();
        self.parked.fetch_sub(1, Ordering::SeqCst);
        result.map(|()| started.elapsed())
    }

    /// A safe point of work that is not a participant otherwise: parks while a pause is
    /// requested. Returns how long it parked.
    pub fn pause_point(&self) -> Result<Duration> {
        let _me = self.participant();
        self.hold_while(Control::pause_requested)
    }
}

thread_local! {
    static CURRENT: std::cell::RefCell<Option<Arc<Control>>> = const { std::cell::RefCell::new(None) };
}

/// The control of the operation this thread works for, to consult or hand to the threads
/// it starts.
pub fn current() -> Option<Arc<Control>> {
    CURRENT.with(|c| c.borrow().clone())
}

/// Runs `f` with `control` as this thread's operation control.
pub fn with<T>(control: Option<Arc<Control>>, f: impl FnOnce() -> T) -> T {
    let before = CURRENT.with(|c| c.replace(control));
    let out = f();
    CURRENT.with(|c| c.replace(before));
    out
}

/// A safe point of the operation this thread works for (nothing without one, as in a dry
/// run): parks while a pause is requested. Returns how long it parked.
pub fn pause_point() -> Result<Duration> {
    match current() {
        Some(c) => c.pause_point(),
        None => Ok(Duration::ZERO),
    }
}

/// The live limits of the operation this thread works for.
pub fn limits() -> Limits {
    current().map(|c| c.limits()).unwrap_or_default()
}

/// What an operator's request found: the operation as the journal now holds it.
#[derive(Debug, Clone)]
pub struct Requested {
    /// The operation after the request.
    pub op: crate::directory::journal::OperationRecord,
    /// A live process drives it (and picks the request up within a second); otherwise it
    /// applies when `shardctl resume` continues it.
    pub owner_alive: bool,
}

/// The operation `op`, refused (usage error, one line) when it is finished or a fence
/// raised by hand; `verb` names the request in the message.
fn unfinished(
    dir: &mut Directory,
    op: u64,
    verb: &str,
) -> Result<crate::directory::journal::OperationRecord> {
    let rec = dir.operation(op)?;
    if rec.state.is_finished() {
        return Err(Error::Usage(format!(
            "operation {op} is {}: nothing to {verb}",
            rec.state
        )));
    }
    if rec.kind == OpKind::Lock {
        return Err(Error::Usage(format!(
            "operation {op} is a fence raised by hand (`shardctl lock`): nothing runs to {verb}; `shardctl unlock` lifts it"
        )));
    }
    Ok(rec)
}

fn requested(dir: &mut Directory, op: u64) -> Result<Requested> {
    let op = dir.operation(op)?;
    let owner_alive = matches!(op.owner_status(), Owner::Alive { .. });
    Ok(Requested { op, owner_alive })
}

/// `shardctl pause OP`: asks the owner to park at its next safe point outside any fence.
/// Refused for an unknown or finished operation and one already paused. An operation
/// without a live owner stays paused when resumed, until `shardctl continue`.
pub fn pause(inv: &Inventory, op: u64) -> Result<Requested> {
    let mut dir = Directory::open(inv)?;
    let rec = unfinished(&mut dir, op, "pause")?;
    if rec.pause_requested {
        return Err(Error::Usage(format!(
            "operation {op} is already paused: `shardctl continue {op}` lets it go on"
        )));
    }
    if !dir.request_pause(op, true)? {
        return Err(Error::Usage(format!("operation {op} finished meanwhile")));
    }
    requested(&mut dir, op)
}

/// `shardctl continue OP`: lifts the pause. Refused for an unknown or finished operation
/// and one that is not paused.
pub fn proceed(inv: &Inventory, op: u64) -> Result<Requested> {
    let mut dir = Directory::open(inv)?;
    let rec = unfinished(&mut dir, op, "continue")?;
    if !rec.pause_requested {
        return Err(Error::Usage(format!(
            "operation {op} is not paused: nothing to continue (`shardctl pause {op}` pauses it)"
        )));
    }
    if !dir.request_pause(op, false)? {
        return Err(Error::Usage(format!("operation {op} finished meanwhile")));
    }
    requested(&mut dir, op)
}

/// `shardctl throttle OP`: sets the live limits `limits` gives (the others stay). Refused
/// for an unknown or finished operation, without any limit, and for a limit the kind of
/// operation does not have: a prune takes `--max-lag`, `--chunk-ms` and
/// `--max-threads-running`; a move, split or merge `--workers` (its native copy).
pub fn throttle(inv: &Inventory, op: u64, limits: &Limits) -> Result<Requested> {
    if limits.is_empty() {
        return Err(Error::Usage(
            "throttle needs at least one of --max-lag, --chunk-ms, --max-threads-running (a prune) or --workers (a move, split or merge)".into(),
        ));
    }
    let mut dir = Directory::open(inv)?;
    let rec = unfinished(&mut dir, op, "throttle")?;
    let prune_only = [
        (limits.max_lag_secs.is_some(), "--max-lag"),
        (limits.chunk_ms.is_some(), "--chunk-ms"),
        (
            limits.max_threads_running.is_some(),
            "--max-threads-running",
        ),
    ];
    match rec.kind {
        OpKind::Prune if limits.workers.is_some() => {
            return Err(Error::Usage(format!(
                "operation {op} is a prune: --workers throttles a copy; a prune takes --max-lag, --chunk-ms and --max-threads-running"
            )))
        }
        OpKind::Prune => {}
        kind => {
            if let Some((_, flag)) = prune_only.iter().find(|(given, _)| *given) {
                return Err(Error::Usage(format!(
                    "operation {op} is a {kind}: {flag} throttles a prune (a split's prunes are operations of their own: `shardctl ops --kind prune`); a {kind} takes --workers"
                )));
            }
        }
    }
    if !dir.set_limits(op, limits)? {
        return Err(Error::Usage(format!("operation {op} finished meanwhile")));
    }
    requested(&mut dir, op)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pause_is_acknowledged_once_every_participant_is_parked() {
        let c = Arc::new(Control::default());
        assert!(!c.paused());
        c.set_requested(true, Limits::default());
        // Requested, but nothing parked yet (and nothing running: not paused either).
        assert!(!c.paused());
        let busy = c.participant();
        let parker = {
            let c = Arc::clone(&c);
            std::thread::spawn(move || c.pause_point())
        };
        std::thread::sleep(Duration::from_millis(200));
        // One parked, one still writing: not yet.
        assert!(!c.paused());
        drop(busy);
        assert!(c.paused());
        c.set_requested(false, Limits::default());
        let parked = parker.join().unwrap().unwrap();
        assert!(parked >= Duration::from_millis(150), "{parked:?}");
        assert!(!c.paused());
        // Without a request a safe point passes at once.
        assert_eq!(c.pause_point().unwrap(), Duration::ZERO);
    }

    #[test]
    fn an_interrupt_ends_a_pause() {
        let c = Control::default();
        c.set_requested(true, Limits::default());
        let stop = Arc::new(AtomicBool::new(true));
        let r = crate::signal::with_scope(Some(stop), || c.pause_point());
        assert!(matches!(r, Err(crate::Error::Interrupted)), "{r:?}");
    }

    #[test]
    fn live_limits_override_the_operations_own() {
        let own = Limits {
            max_lag_secs: Some(1),
            chunk_ms: Some(500),
            workers: None,
            max_threads_running: Some(25),
        };
        let live = Limits {
            chunk_ms: Some(200),
            workers: Some(2),
            ..Default::default()
        };
        let both = own.overridden_by(&live);
        assert_eq!(
            both,
            Limits {
                max_lag_secs: Some(1),
                chunk_ms: Some(200),
                workers: Some(2),
                max_threads_running: Some(25)
            }
        );
        assert_eq!(
            both.describe(),
            "max-lag 1s, chunk 200 ms, workers 2, max-threads-running 25"
        );
        assert_eq!(both.to_json()["max_lag_ms"], 1000);
        assert!(Limits::default().is_empty());
    }
}
