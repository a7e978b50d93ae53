//! Ctrl-C and SIGTERM: recorded in a flag that long operations check between steps, so they
//! stop at a safe point (lifting a fence they raised) instead of dying mid-step.

use crate::error::{Error, Result};
use std::sync::atomic::{AtomicBool, Ordering};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Installs the handlers for SIGINT and SIGTERM. Called once by the binary.
pub fn install() {
    let handler: extern "C" fn(libc::c_int) = on_signal;
    // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
    unsafe {
        libc::signal(libc::SIGINT, handler as libc::sighandler_t);
        libc::signal(libc::SIGTERM, handler as libc::sighandler_t);
    }
}

/// True once a signal has arrived.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// Records an interrupt from within the process (an operator's `shardctl stop`, a lost
/// lease), so every wait ends at its next check as on Ctrl-C.
pub fn interrupt() {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Fails with [`Error::Interrupted`] once a signal has arrived.
pub fn check() -> Result<()> {
    if interrupted() {
        Err(Error::Interrupted)
    } else {
        Ok(())
    }
}
