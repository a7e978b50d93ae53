//! Fault points for tests of crash recovery. `SHARDCTL_FAULT` holds comma-separated
//! `ACTION@POINT` entries: ACTION is `crash` (the process aborts on the spot, as if killed),
//! `pause` / `pause=SECS` (it waits 30 s or SECS, or until interrupted, so a test can act
//! at a known place) or `hang` / `hang=SECS` (it waits 30 s or SECS ignoring interrupts, as
//! a step stuck on an unresponsive server would). POINTs are `after:<step>` and `copy`
//! (inside the copy: the native method after each batch written, the dump method once, after
//! the first INSERT reaches the client). Unset, every point is a no-op.

use std::time::{Duration, Instant};

/// Passes a fault point.
pub fn point(name: &str) {
    let Ok(spec) = std::env::var("SHARDCTL_FAULT") else {
        return;
    };
    for entry in spec.split(',') {
        let Some((action, at)) = entry.trim().split_once('@') else {
            continue;
        };
        if at != name {
            continue;
        }
        let (action, secs) = match action.split_once('=') {
            Some((a, n)) => (a, n.parse().unwrap_or(30)),
            None => (action, 30),
        };
        match action {
            "crash" => {
                crate::errln!("shardctl: fault point {name}: crashing");
                std::process::abort();
            }
            "pause" => {
                crate::errln!("shardctl: fault point {name}: pausing");
                let until = Instant::now() + Duration::from_secs(secs);
                while Instant::now() < until && !crate::signal::interrupted() {
                    std::thread::sleep(Duration::from_millis(20));
                }
            }
            "hang" => {
                crate::errln!("shardctl: fault point {name}: hanging");
                std::thread::sleep(Duration::from_secs(secs));
            }
            _ => {}
        }
    }
}
