//! Fault points for tests of crash recovery. `SHARDCTL_FAULT` holds comma-separated
//! `ACTION@POINT` entries: ACTION is `crash` (the process aborts on the spot, as if killed),
//! `pause` / `pause=SECS` (it waits 30 s or SECS, or until interrupted, so a test can act
//! at a known place) or `hang` / `hang=SECS` (it waits 30 s or SECS ignoring interrupts, as
//! a step stuck on an unresponsive server would). POINTs are `after:<step>` and `copy`
//! (inside the copy: the native method after each batch written, the dump method once, after
//! the first INSERT reaches the client, the physical method once its backup is prepared in
//! the target's staging directory), `prune-chunk`, `before:`, `done:` or
//! `journaled:` followed by an effect's name, `reporting:` followed by one of
//! [`crate::reporting::FAULT_POINTS`], and `committing:` or `committed:` followed by a
//! directory transaction's name (the flip): before its COMMIT is sent and once it
//! answered, where the action `lose-reply` makes the process act as if the answer never
//! came. Unset, every point is a no-op; set, every
//! entry must name a known action and point ([`check_env`]), so a typo never silently
//! tests nothing.

use std::time::{Duration, Instant};

/// The names of the fault points that the layers above own, handed to [`check_env`] by
/// the caller (this module imports no higher layer): besides `copy` and `prune-chunk`,
/// a point is one of these after its prefix.
pub struct KnownPoints<'a> {
    /// The effects' names, after `before:`, `done:` and `journaled:`.
    pub effects: &'a [&'a str],
    /// The playbook's step names, after `after:`.
    pub steps: &'a [&'a str],
    /// The reporting server's points, after `reporting:`.
    pub reporting: &'a [&'a str],
    /// The directory transactions whose COMMIT has points, after `committing:` and
    /// `committed:`.
    pub commits: &'a [&'a str],
}

/// Checks `SHARDCTL_FAULT`: each entry is `ACTION@POINT` with a known action and point.
pub fn check_env(known: &KnownPoints) -> crate::error::Result<()> {
    let Ok(spec) = std::env::var("SHARDCTL_FAULT") else {
        return Ok(());
    };
    check_spec(&spec, known).map_err(|e| crate::error::Error::Usage(format!("SHARDCTL_FAULT: {e}")))
}

fn check_spec(spec: &str, known: &KnownPoints) -> Result<(), String> {
    for entry in spec.split(',').map(str::trim) {
        let Some((action, at)) = entry.split_once('@') else {
            return Err(format!("entry {entry:?} is not ACTION@POINT"));
        };
        let (name, secs) = match action.split_once('=') {
            Some((a, n)) => (a, Some(n)),
            None => (action, None),
        };
        match (name, secs) {
            ("crash", None) => {}
            ("lose-reply", None) if at.starts_with("committed:") => {}
            ("lose-reply", _) => {
                return Err(format!(
                    "entry {entry:?}: lose-reply only at a committed: point"
                ))
            }
            ("pause" | "hang", None) => {}
            ("pause" | "hang", Some(n)) if n.parse::<u64>().is_ok() => {}
            ("pause" | "hang", Some(n)) => {
                return Err(format!("entry {entry:?}: {n:?} is not a number of seconds"))
            }
            _ => {
                return Err(format!(
                    "entry {entry:?}: unknown action {action:?} (crash, pause[=SECS], hang[=SECS], lose-reply)"
                ))
            }
        }
        let known = match at.split_once(':') {
            Some(("before" | "done" | "journaled", e)) => known.effects.contains(&e),
            Some(("after", s)) => known.steps.contains(&s),
            Some(("reporting", s)) => known.reporting.contains(&s),
            Some(("committing" | "committed", c)) => known.commits.contains(&c),
            Some(_) => false,
            None => at == "copy" || at == "prune-chunk",
        };
        if !known {
            return Err(format!(
                "entry {entry:?}: unknown point {at:?} (before:|done:|journaled:EFFECT, after:STEP, committing:|committed:flip, copy, prune-chunk)"
            ));
        }
    }
    Ok(())
}

/// True when `SHARDCTL_FAULT` asks the reply at point `name` (a `committed:` point) to be
/// taken as lost: the process goes on as if the connection had broken before the answer.
pub fn loses_reply(name: &str) -> bool {
    let Ok(spec) = std::env::var("SHARDCTL_FAULT") else {
        return false;
    };
    spec.split(',')
        .filter_map(|e| e.trim().split_once('@'))
        .any(|(action, at)| action == "lose-reply" && at == name)
}

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

#[cfg(test)]
mod tests {
    use super::{check_spec, KnownPoints};

    fn check_spec_of_shardctl(spec: &str) -> Result<(), String> {
        let effects: Vec<&str> = crate::ops::mover::Effect::ALL
            .iter()
            .map(|e| e.name())
            .collect();
        let known = KnownPoints {
            effects: &effects,
            steps: crate::playbook::STEP_NAMES,
            reporting: &crate::reporting::FAULT_POINTS,
            commits: crate::directory::store::COMMIT_POINTS,
        };
        check_spec(spec, &known)
    }

    #[test]
    fn unknown_entries_are_named() {
        assert!(check_spec_of_shardctl("crash@before:flip, pause=3@after:lock,hang@copy").is_ok());
        assert!(
            check_spec_of_shardctl("pause=5@committing:flip,lose-reply@committed:flip").is_ok()
        );
        assert!(check_spec_of_shardctl("lose-reply@committing:flip").is_err());
        assert!(check_spec_of_shardctl("pause@committed:drop").is_err());
        for (spec, want) in [
            ("crash@before:flp", "unknown point \"before:flp\""),
            ("explode@after:lock", "unknown action \"explode\""),
            ("pause=x@copy", "\"x\" is not a number"),
            ("crash", "is not ACTION@POINT"),
            ("crash@after:nothing", "unknown point"),
        ] {
            let e = check_spec_of_shardctl(spec).unwrap_err();
            assert!(e.contains(want), "{spec}: {e}");
        }
    }
}
