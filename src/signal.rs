//! Ctrl-C, SIGTERM and SIGHUP: recorded in a flag that long operations check between steps (and the
//! copies between batches), so they stop at a safe point (lifting a fence they raised)
//! instead of dying mid-step. SIGHUP is what a dropped ssh session (or a closed terminal
//! window) sends: it is a request to stop like the others, never a crash under a fence.
//! Output written to the hung-up terminal afterwards fails with EIO (or EPIPE), which
//! [`crate::output`] drops, so the stop still reaches its safe point.
//!
//! A second signal is not ignored forever: when the first has not been honoured within
//! [`FORCE_AFTER`] (the process is still running, e.g. stuck on an unresponsive server), a
//! further SIGINT or SIGTERM kills the child process groups registered here (the dump
//! tools) and exits at once with 130, leaving the journal as a crash would (`shardctl
//! resume N` / `shardctl abort N` then continue or clean up). A second signal sooner than
//! that only prints a reminder, so an impatient double Ctrl-C still stops at a safe point.

use crate::error::{Error, Result};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// How long the first signal has to be honoured before a further one exits at once.
pub const FORCE_AFTER: Duration = Duration::from_secs(10);

static INTERRUPTED: AtomicBool = AtomicBool::new(false);
/// Monotonic clock in milliseconds (plus one, so 0 means unset) when the first signal came.
static FIRST_AT_MS: AtomicU64 = AtomicU64::new(0);

/// Process groups of children to kill on a forced exit (0 = free slot).
static CHILD_GROUPS: [AtomicI32; 16] = [const { AtomicI32::new(0) }; 16];

/// The monotonic clock in milliseconds; `clock_gettime` is async-signal-safe.
fn monotonic_ms() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the timespec we own.
    unsafe {
        libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts);
    }
    (ts.tv_sec as u64) * 1000 + (ts.tv_nsec as u64) / 1_000_000
}

/// Writes a fixed message to stderr with write(2), the only output allowed in a handler.
fn say(msg: &[u8]) {
    // SAFETY: write(2) on fd 2 with a valid buffer; the result is deliberately ignored.
    unsafe {
        libc::write(2, msg.as_ptr().cast(), msg.len());
    }
}

extern "C" fn on_signal(_: libc::c_int) {
    let now = monotonic_ms() + 1;
    if !INTERRUPTED.swap(true, Ordering::SeqCst) {
        FIRST_AT_MS.store(now, Ordering::SeqCst);
        say(b"shardctl: interrupted: stopping at the next safe point\n");
        return;
    }
    let first = FIRST_AT_MS.load(Ordering::SeqCst);
    if now.saturating_sub(first) >= FORCE_AFTER.as_millis() as u64 {
        for slot in &CHILD_GROUPS {
            let pgid = slot.load(Ordering::SeqCst);
            if pgid > 0 {
                // SAFETY: kill(2) is async-signal-safe; the group is one we started.
                unsafe {
                    libc::kill(-pgid, libc::SIGKILL);
                }
            }
        }
        say(b"shardctl: interrupted again: exiting now without reaching a safe point; see `shardctl ops`\n");
        // SAFETY: _exit(2) is async-signal-safe and ends the process on the spot.
        unsafe { libc::_exit(130) }
    }
    say(b"shardctl: still stopping at a safe point (interrupt again after 10 s to exit at once)\n");
}

/// The signals that ask for a stop at the next safe point.
pub const STOP_SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// Installs the handlers for [`STOP_SIGNALS`] and ignores SIGPIPE (a write to a closed
/// pipe then fails with EPIPE, which the output layer drops, instead of killing the
/// process; Rust's runtime does the same, this makes it independent of how the process was
/// started). Called once by the binary.
pub fn install() {
    let handler: extern "C" fn(libc::c_int) = on_signal;
    // SAFETY: the handler only touches atomics and calls async-signal-safe functions
    // (clock_gettime, write, kill, _exit).
    unsafe {
        for sig in STOP_SIGNALS {
            libc::signal(sig, handler as libc::sighandler_t);
        }
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
}

thread_local! {
    /// The stop flag of the operation this thread works for, if any.
    static SCOPE: std::cell::RefCell<Option<Arc<AtomicBool>>> = const { std::cell::RefCell::new(None) };
    /// Set while this thread cleans up what must not be left half done.
    static SHIELDED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f`, a cleanup that must finish (removing a work directory), as if no stop had
/// been asked: [`interrupted`] is false on this thread meanwhile, so the commands it runs
/// are not killed for a Ctrl-C that came before. Their own timeouts still hold.
pub fn shielded<T>(f: impl FnOnce() -> T) -> T {
    let before = SHIELDED.with(|s| s.replace(true));
    let out = f();
    SHIELDED.with(|s| s.set(before));
    out
}

/// Whether this thread runs inside [`shielded`] (for the helper threads it starts).
pub fn is_shielded() -> bool {
    SHIELDED.with(|s| s.get())
}

/// True once a signal has arrived, or the operation this thread works for was asked to
/// stop (`shardctl stop`, a lost lease).
pub fn interrupted() -> bool {
    if is_shielded() {
        return false;
    }
    INTERRUPTED.load(Ordering::SeqCst)
        || SCOPE.with(|s| {
            s.borrow()
                .as_ref()
                .is_some_and(|f| f.load(Ordering::SeqCst))
        })
}

/// The stop flag of the operation this thread works for, to hand to the threads it starts.
pub fn scope() -> Option<Arc<AtomicBool>> {
    SCOPE.with(|s| s.borrow().clone())
}

/// Makes `flag` this thread's operation stop flag for the rest of its life (a worker
/// thread started for one operation).
pub fn enter_scope(flag: Option<Arc<AtomicBool>>) {
    SCOPE.with(|s| s.replace(flag));
}

/// Runs `f` with `flag` as this thread's operation stop flag: setting it interrupts this
/// thread's waits (and those of the threads it hands the flag to), not the whole process,
/// so one operation of several in a process (`rebalance apply`) stops alone.
pub fn with_scope<T>(flag: Option<Arc<AtomicBool>>, f: impl FnOnce() -> T) -> T {
    let before = SCOPE.with(|s| s.replace(flag));
    let out = f();
    SCOPE.with(|s| s.replace(before));
    out
}

/// Fails with [`Error::Interrupted`] once a signal has arrived.
pub fn check() -> Result<()> {
    if interrupted() {
        Err(Error::Interrupted)
    } else {
        Ok(())
    }
}

/// A child process group registered for a forced exit; unregistered when dropped (drop it
/// only once the children are reaped, so the group id cannot have been reused).
#[derive(Debug)]
pub struct ChildGroup {
    slot: Option<usize>,
}

/// Registers the process group `pgid` so a forced exit kills it too. With more children
/// than slots the group is simply not registered (the normal interrupt path still kills
/// it).
pub fn register_child_group(pgid: i32) -> ChildGroup {
    let slot = CHILD_GROUPS.iter().position(|s| {
        s.compare_exchange(0, pgid, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
    });
    ChildGroup { slot }
}

impl Drop for ChildGroup {
    fn drop(&mut self) {
        if let Some(i) = self.slot {
            CHILD_GROUPS[i].store(0, Ordering::SeqCst);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scope_interrupts_only_its_own_threads() {
        let flag = Arc::new(AtomicBool::new(false));
        let (inside, other) = with_scope(Some(Arc::clone(&flag)), || {
            flag.store(true, Ordering::SeqCst);
            let handed = scope();
            let child = std::thread::spawn(move || with_scope(handed, interrupted));
            (interrupted(), child.join().unwrap())
        });
        assert!(inside && other, "the scope's threads see the stop");
        let bystander = std::thread::spawn(interrupted).join().unwrap();
        assert!(!bystander, "another operation's thread does not");
        assert!(!interrupted(), "nor does this thread outside the scope");
    }

    #[test]
    fn child_groups_take_and_free_slots() {
        let a = register_child_group(999_999);
        let b = register_child_group(999_998);
        assert!(a.slot.is_some() && b.slot.is_some() && a.slot != b.slot);
        let i = a.slot.unwrap();
        assert_eq!(CHILD_GROUPS[i].load(Ordering::SeqCst), 999_999);
        drop(a);
        assert_eq!(CHILD_GROUPS[i].load(Ordering::SeqCst), 0);
    }
}
