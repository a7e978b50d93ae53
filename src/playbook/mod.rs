//! Playbooks: YAML lists of steps with their parameters. The defaults are embedded in the
//! binary; `--playbook FILE` runs a variant. A playbook is checked completely (unknown
//! steps and parameters, types, order) before anything runs.

use crate::copy::Method;
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The embedded move playbook.
pub const MOVE_PLAYBOOK: &str = include_str!("../../playbooks/move.yaml");
/// The embedded split playbook.
pub const SPLIT_PLAYBOOK: &str = include_str!("../../playbooks/split.yaml");

/// Which write fence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Fence {
    /// Only this shard: its tables are renamed out of reach; other shards keep writing.
    Shard,
    /// The whole source server goes read-only (the chapter's fence).
    ReadOnly,
}

/// What a `wait` step waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WaitUntil {
    /// The position read on the source after the fence.
    Final,
}

/// No parameters.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoParams {}

/// `backup` parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BackupParams {
    /// Copy method.
    #[serde(default = "default_method")]
    pub method: Method,
    /// Parallel workers (native).
    #[serde(default = "default_workers")]
    pub workers: usize,
}

fn default_method() -> Method {
    Method::Native
}
fn default_workers() -> usize {
    4
}

/// `wait` parameters: either a lag threshold or the final position.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WaitParams {
    /// Wait until the channel is at most this many seconds behind and has read everything.
    #[serde(default)]
    pub lag_below_secs: Option<u64>,
    /// Wait for the final position.
    #[serde(default)]
    pub until: Option<WaitUntil>,
    /// Give up after this long.
    #[serde(default = "default_wait_timeout")]
    pub timeout_secs: u64,
}

fn default_wait_timeout() -> u64 {
    300
}

/// `lock` parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockParams {
    /// The fence.
    #[serde(default = "default_fence")]
    pub fence: Fence,
    /// Longest wait for in-flight transactions on the shard.
    #[serde(default = "default_lock_timeout")]
    pub timeout_secs: u64,
}

fn default_fence() -> Fence {
    Fence::Shard
}
fn default_lock_timeout() -> u64 {
    10
}

/// `verify` parameters: the comparison at a consistent point, before the fence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VerifyParams {
    /// Parallel workers, each with a snapshot on both sides.
    #[serde(default = "default_workers")]
    pub workers: usize,
    /// Rows per compared chunk.
    #[serde(default = "default_chunk_rows")]
    pub chunk_rows: u64,
    /// A round of snapshots is used at most this long; a new consistent point continues.
    #[serde(default = "default_max_snapshot_secs")]
    pub max_snapshot_secs: u64,
    /// The verified point may be at most this old when the fence goes up; older, the
    /// lock step verifies again first.
    #[serde(default = "default_max_age_secs")]
    pub max_age_secs: u64,
}

impl Default for VerifyParams {
    fn default() -> Self {
        VerifyParams {
            workers: default_workers(),
            chunk_rows: default_chunk_rows(),
            max_snapshot_secs: default_max_snapshot_secs(),
            max_age_secs: default_max_age_secs(),
        }
    }
}

fn default_chunk_rows() -> u64 {
    10_000
}
fn default_max_snapshot_secs() -> u64 {
    300
}
fn default_max_age_secs() -> u64 {
    600
}

/// `drop-source` parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DropSourceParams {
    /// Keep the renamed copy instead of dropping it.
    #[serde(default)]
    pub keep: bool,
}

/// One step of a playbook.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "step", rename_all = "kebab-case")]
pub enum Step {
    /// Checks before the first change.
    Preflight(NoParams),
    /// Copy with coordinates.
    Backup(BackupParams),
    /// Create the channel at the backup's coordinates.
    ChangeMaster(NoParams),
    /// Limit the channel to the shard's schemas.
    Filter(NoParams),
    /// Start the channel.
    StartReplication(NoParams),
    /// Wait for lag or for the final position.
    Wait(WaitParams),
    /// Raise the fence and read the final position.
    Lock(LockParams),
    /// Compare every table in chunks at a consistent point, outside the fence.
    Verify(VerifyParams),
    /// Under the fence: the sets of tables and objects match, what changed since the
    /// verified point arrived, nothing escaped.
    Confirm(NoParams),
    /// After a split's flip: the old shard refuses the keys it gave away.
    Guard(NoParams),
    /// Point the directory at the target.
    Flip(NoParams),
    /// Move the source copy out of the way (and drop it).
    DropSource(DropSourceParams),
    /// Lift the fence.
    Unlock(NoParams),
    /// Remove the channel and its filters.
    ResetReplication(NoParams),
    /// Delete, on both shards of a split, the rows each no longer owns.
    Prune(NoParams),
}

impl Step {
    /// The step's name as written in playbooks.
    pub fn name(&self) -> &'static str {
        match self {
            Step::Preflight(_) => "preflight",
            Step::Backup(_) => "backup",
            Step::ChangeMaster(_) => "change-master",
            Step::Filter(_) => "filter",
            Step::StartReplication(_) => "start-replication",
            Step::Wait(_) => "wait",
            Step::Lock(_) => "lock",
            Step::Verify(_) => "verify",
            Step::Confirm(_) => "confirm",
            Step::Guard(_) => "guard",
            Step::Flip(_) => "flip",
            Step::DropSource(_) => "drop-source",
            Step::Unlock(_) => "unlock",
            Step::ResetReplication(_) => "reset-replication",
            Step::Prune(_) => "prune",
        }
    }
}

/// A playbook.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Playbook {
    /// Its name.
    pub name: String,
    /// The steps, in order.
    pub steps: Vec<Step>,
}

impl Playbook {
    /// Parses and checks playbook text; `origin` names it in messages.
    pub fn parse(origin: &str, text: &str) -> Result<Playbook> {
        let pb: Playbook = serde_yaml::from_str(text).map_err(|e| {
            let msg = e.to_string();
            let msg = match msg.rfind(" at line ") {
                Some(i) => msg[..i].to_string(),
                None => msg,
            };
            match e.location() {
                Some(l) => Error::Config(format!("{origin}:{}:{}: {msg}", l.line(), l.column())),
                None => Error::Config(format!("{origin}: {msg}")),
            }
        })?;
        pb.check(origin)?;
        Ok(pb)
    }

    /// Loads a playbook file.
    pub fn load(path: &Path) -> Result<Playbook> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::Config(format!("cannot read playbook {}: {e}", path.display())))?;
        Self::parse(&path.display().to_string(), &text)
    }

    /// True for a split's playbook (it prunes both shards), false for a move's.
    pub fn is_split(&self) -> bool {
        self.steps.iter().any(|s| matches!(s, Step::Prune(_)))
    }

    /// The default split playbook.
    pub fn default_split() -> Playbook {
        Self::parse("playbooks/split.yaml", SPLIT_PLAYBOOK).expect("the embedded playbook is valid")
    }

    /// The default move playbook.
    pub fn default_move() -> Playbook {
        Self::parse("playbooks/move.yaml", MOVE_PLAYBOOK).expect("the embedded playbook is valid")
    }

    fn position(&self, f: impl Fn(&Step) -> bool) -> Option<usize> {
        self.steps.iter().position(f)
    }

    /// Checks the order rules that keep a move safe.
    fn check(&self, origin: &str) -> Result<()> {
        let bad = |m: &str| Err(Error::Config(format!("{origin}: {m}")));
        for s in &self.steps {
            if let Step::Wait(w) = s {
                if w.lag_below_secs.is_some() == w.until.is_some() {
                    return bad("a wait step needs exactly one of lag_below_secs or until: final");
                }
                if w.timeout_secs == 0 {
                    return bad("a wait step needs a timeout_secs above 0");
                }
            }
            if let Step::Backup(b) = s {
                if b.workers == 0 || b.workers > 64 {
                    return bad("backup workers must be 1 to 64");
                }
            }
        }
        let pos = |name: &str| self.position(|s| s.name() == name);
        let final_wait = self.position(|s| matches!(s, Step::Wait(w) if w.until.is_some()));
        let required = [
            "backup",
            "change-master",
            "start-replication",
            "verify",
            "lock",
            "confirm",
            "flip",
            "unlock",
        ];
        for r in required {
            if pos(r).is_none() {
                return bad(&format!("a move needs a {r} step"));
            }
        }
        let (verify, lock, confirm, flip) = (
            pos("verify").unwrap(),
            pos("lock").unwrap(),
            pos("confirm").unwrap(),
            pos("flip").unwrap(),
        );
        let Some(final_wait) = final_wait else {
            return bad("a move needs a `wait` with `until: final` after the lock");
        };
        if !(pos("start-replication").unwrap() < verify
            && verify < lock
            && lock < final_wait
            && final_wait < confirm
            && confirm < flip)
        {
            return bad("the order must be start-replication, verify, lock, wait until final, confirm, flip (verify compares outside the fence; confirm checks under it)");
        }
        for s in &self.steps {
            if let Step::Verify(v) = s {
                if v.workers == 0 || v.workers > 64 {
                    return bad("verify workers must be 1 to 64");
                }
                if v.chunk_rows == 0 || v.max_snapshot_secs == 0 || v.max_age_secs == 0 {
                    return bad(
                        "verify chunk_rows, max_snapshot_secs and max_age_secs must be above 0",
                    );
                }
            }
        }
        if let Some(d) = pos("drop-source") {
            if d < flip {
                return bad("drop-source must come after flip: nothing is dropped before the flip");
            }
            if d > pos("unlock").unwrap() {
                return bad(
                    "drop-source must come before unlock: the old copy goes before the fence lifts",
                );
            }
        }
        if pos("unlock").unwrap() < flip {
            return bad("unlock must come after flip");
        }
        // The guarantees: a move's old copy never takes writes again; a split's old shard
        // refuses the keys it gave away before its fence lifts, and both halves delete
        // what they no longer own.
        match (pos("drop-source"), pos("prune")) {
            (Some(_), Some(_)) => {
                return bad("a playbook either drops the source (a move) or prunes both shards (a split), not both")
            }
            (None, None) => {
                return bad("a move needs a drop-source step (the old copy must not stay writable); a split needs a prune step")
            }
            (None, Some(_)) => match pos("guard") {
                Some(g) if flip < g && g < pos("unlock").unwrap() => {}
                _ => return bad("a split needs a guard step between flip and unlock: the old shard must refuse the keys it gave away before it takes writes again"),
            },
            (Some(_), None) => {
                if pos("guard").is_some() {
                    return bad("guard belongs to a split: a move drops the old copy instead");
                }
            }
        }
        if let Some(p) = pos("prune") {
            if p < pos("unlock").unwrap() {
                return bad("prune must come after unlock");
            }
        }
        if pos("change-master").unwrap() < pos("backup").unwrap() {
            return bad("change-master needs the backup's coordinates: put it after backup");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_playbook_is_valid() {
        let pb = Playbook::default_move();
        assert_eq!(pb.steps.first().unwrap().name(), "preflight");
        assert_eq!(pb.steps.len(), 14);
    }

    #[test]
    fn unknown_steps_and_parameters_are_located() {
        let text = MOVE_PLAYBOOK.replace("step: verify", "step: verfy");
        let err = Playbook::parse("pb.yaml", &text).unwrap_err().to_string();
        assert!(
            err.starts_with("pb.yaml:") && err.contains("verfy"),
            "{err}"
        );
        let text = MOVE_PLAYBOOK.replace("    workers: 4", "    wrokers: 4");
        let err = Playbook::parse("pb.yaml", &text).unwrap_err().to_string();
        assert!(err.contains("wrokers"), "{err}");
        assert!(err.starts_with("pb.yaml:"), "{err}");
        let text = MOVE_PLAYBOOK.replace("  - step: flip", "  - step: flip\n    force: true");
        let err = Playbook::parse("pb.yaml", &text).unwrap_err().to_string();
        assert!(err.contains("force"), "{err}");
    }

    #[test]
    fn playbooks_that_drop_a_guarantee_are_refused() {
        let no_drop: String = MOVE_PLAYBOOK
            .lines()
            .filter(|l| !l.contains("step: drop-source") && !l.contains("keep: false"))
            .map(|l| format!("{l}\n"))
            .collect();
        let err = Playbook::parse("pb.yaml", &no_drop)
            .unwrap_err()
            .to_string();
        assert!(err.contains("needs a drop-source"), "{err}");
        let no_guard: String = SPLIT_PLAYBOOK
            .lines()
            .filter(|l| !l.contains("step: guard"))
            .map(|l| format!("{l}\n"))
            .collect();
        assert_ne!(no_guard, SPLIT_PLAYBOOK);
        let err = Playbook::parse("pb.yaml", &no_guard)
            .unwrap_err()
            .to_string();
        assert!(err.contains("needs a guard step"), "{err}");
        let old_style =
            SPLIT_PLAYBOOK.replace("  - step: unlock", "  - step: unlock\n    grace_secs: 2");
        let err = Playbook::parse("pb.yaml", &old_style)
            .unwrap_err()
            .to_string();
        assert!(err.contains("grace_secs"), "{err}");
        let both = SPLIT_PLAYBOOK.replace(
            "  - step: unlock",
            "  - step: drop-source\n  - step: unlock",
        );
        let err = Playbook::parse("pb.yaml", &both).unwrap_err().to_string();
        assert!(err.contains("not both"), "{err}");
        assert!(Playbook::default_split().is_split());
        assert!(!Playbook::default_move().is_split());
    }

    #[test]
    fn unsafe_orders_are_refused() {
        let text =
            MOVE_PLAYBOOK.replace("  - step: confirm", "  - step: unlock\n  - step: confirm");
        let err = Playbook::parse("pb.yaml", &text).unwrap_err().to_string();
        assert!(
            err.contains("before unlock") || err.contains("unlock must come after flip"),
            "{err}"
        );
        let text: String = MOVE_PLAYBOOK
            .lines()
            .filter(|l| !l.starts_with("  - step: confirm"))
            .map(|l| format!("{l}\n"))
            .collect();
        let err = Playbook::parse("pb.yaml", &text).unwrap_err().to_string();
        assert!(err.contains("needs a confirm step"), "{err}");
        // The old order (verify under the fence) names the new one.
        let text = "name: move\nsteps:\n  - step: backup\n  - step: change-master\n  - step: start-replication\n  - step: lock\n  - step: wait\n    until: final\n  - step: verify\n  - step: confirm\n  - step: flip\n  - step: drop-source\n  - step: unlock\n";
        let err = Playbook::parse("pb.yaml", text).unwrap_err().to_string();
        assert!(err.contains("the order must be"), "{err}");
    }
}
