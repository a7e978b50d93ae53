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
/// The embedded move playbook of the chapter's restart path (`--playbook move-restart`).
pub const MOVE_RESTART_PLAYBOOK: &str = include_str!("../../playbooks/move-restart.yaml");
/// The embedded merge playbook.
pub const MERGE_PLAYBOOK: &str = include_str!("../../playbooks/merge.yaml");
/// The embedded key-move playbook (`playbooks/move-keys.yaml`).
pub const MOVE_KEYS_PLAYBOOK: &str = include_str!("../../playbooks/move-keys.yaml");

pub use crate::directory::journal::StepKind;
pub use crate::directory::Fence;

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

/// What keeps a copy current between the backup and the cut-over.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Via {
    /// A replication channel on the target (filtered by schema, schema names rewritten).
    #[default]
    Channel,
    /// shardctl's change stream: it reads the source's binary log itself and applies the
    /// rows to the target (no channel, no filter, no server restart; what a key move and an
    /// operation on one node always use).
    Stream,
}

/// `start-replication` parameters.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StartReplicationParams {
    /// What keeps the copy current across nodes (a key move and an operation on one node
    /// always stream).
    #[serde(default)]
    pub via: Via,
}

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
    /// Longest wait for in-flight transactions on the shard, over every try.
    #[serde(default = "default_lock_timeout")]
    pub timeout_secs: u64,
    /// The shard fence's lock wait on each try (`lock_wait_timeout` of the session that
    /// renames): every reader and writer of the shard queues behind the waiting RENAME for
    /// at most this long; a failed try releases them and the next one comes a second later,
    /// as many as fit in `timeout_secs`.
    #[serde(default = "default_lock_wait")]
    pub lock_wait_secs: u64,
    /// Before each try of the shard fence, end (`KILL CONNECTION`) the sessions whose open
    /// transaction holds the shard's tables (journaled as the `kill-blockers` effect).
    /// Off, they are only reported.
    #[serde(default)]
    pub kill_blockers: bool,
}

fn default_fence() -> Fence {
    Fence::Shard
}
fn default_lock_timeout() -> u64 {
    10
}
fn default_lock_wait() -> u64 {
    3
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
    /// Keep the old copy's tables instead of dropping them: they stay in the trash schema
    /// `_shardctl_trash_op<op>_<n>` on the source (out of every client's reach: the shard's
    /// own schema is dropped either way) for the operator to drop by hand.
    #[serde(default)]
    pub keep: bool,
}

/// When `await-cutover` lets the fence go up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CutoverMode {
    /// When an operator runs `shardctl cutover OP`.
    Manual,
    /// Inside the daily window (UTC), or earlier on `shardctl cutover OP`.
    Window,
    /// At once, as soon as every `before-cutover` hook passes.
    Auto,
}

/// A daily window in UTC, `HH:MM-HH:MM`; one whose end is before its start runs past
/// midnight (`22:00-02:00`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct CutoverWindow {
    /// Minutes after midnight UTC it opens.
    pub start: u16,
    /// Minutes after midnight UTC it closes.
    pub end: u16,
}

impl CutoverWindow {
    /// True at `minute` (after midnight UTC).
    pub fn contains(&self, minute: u16) -> bool {
        if self.start <= self.end {
            (self.start..self.end).contains(&minute)
        } else {
            minute >= self.start || minute < self.end
        }
    }

    /// The current minute after midnight UTC.
    pub fn minute_now() -> u16 {
        let secs = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        ((secs % 86_400) / 60) as u16
    }
}

impl std::str::FromStr for CutoverWindow {
    type Err = String;

    fn from_str(text: &str) -> std::result::Result<Self, String> {
        let minute = |t: &str| -> Option<u16> {
            let (h, m) = t.trim().split_once(':')?;
            let (h, m): (u16, u16) = (h.parse().ok()?, m.parse().ok()?);
            (h < 24 && m < 60 && t.trim().len() == 5).then_some(h * 60 + m)
        };
        let bad = || format!("{text:?} is not a window HH:MM-HH:MM (UTC, 00:00 to 23:59)");
        let (a, b) = text.split_once('-').ok_or_else(bad)?;
        let (start, end) = (minute(a).ok_or_else(bad)?, minute(b).ok_or_else(bad)?);
        if start == end {
            return Err(format!(
                "{text:?}: the window is empty (start and end are the same)"
            ));
        }
        Ok(CutoverWindow { start, end })
    }
}

impl TryFrom<String> for CutoverWindow {
    type Error = String;

    fn try_from(text: String) -> std::result::Result<Self, String> {
        text.parse()
    }
}

impl From<CutoverWindow> for String {
    fn from(w: CutoverWindow) -> String {
        format!(
            "{:02}:{:02}-{:02}:{:02}",
            w.start / 60,
            w.start % 60,
            w.end / 60,
            w.end % 60
        )
    }
}

/// `await-cutover` parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AwaitCutoverParams {
    /// What lets the fence go up.
    pub mode: CutoverMode,
    /// With `mode: window`: when.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<CutoverWindow>,
    /// The lag the copy is held below while it waits, seconds.
    #[serde(default = "one")]
    pub lag_below_secs: u64,
    /// How often it looks for the go-ahead (and runs `before-cutover` hooks), seconds.
    #[serde(default = "one")]
    pub check_every_secs: u64,
    /// `before-cutover` hooks of this operation's own (`--hook`), besides the
    /// inventory's: journaled with the playbook, so a resumed run still asks them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hooks: Vec<crate::config::HookSpec>,
}

fn one() -> u64 {
    1
}

/// `revert-window` parameters: after a move, the old copy kept current from the new
/// location for `shardctl revert`, dropped when the window ends or on `shardctl finalize`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RevertWindowParams {
    /// How long after the flip a revert is possible, seconds.
    pub window_secs: u64,
    /// A revert fences only once the reverse channel's lag is below this, seconds.
    #[serde(default = "one")]
    pub lag_below_secs: u64,
    /// How long a revert waits for that lag, seconds.
    #[serde(default = "default_catch_up_secs")]
    pub catch_up_timeout_secs: u64,
    /// How long the revert's fence on the new location waits for in-flight transactions,
    /// seconds.
    #[serde(default = "default_fence_secs")]
    pub fence_timeout_secs: u64,
    /// How long the reverse channel may take to reach the position read under that fence,
    /// seconds.
    #[serde(default = "default_final_secs")]
    pub final_timeout_secs: u64,
}

impl RevertWindowParams {
    /// A window of `window_secs` with the default lag and timeouts.
    pub fn new(window_secs: u64) -> RevertWindowParams {
        RevertWindowParams {
            window_secs,
            lag_below_secs: 1,
            catch_up_timeout_secs: default_catch_up_secs(),
            fence_timeout_secs: default_fence_secs(),
            final_timeout_secs: default_final_secs(),
        }
    }
}

fn default_catch_up_secs() -> u64 {
    600
}
fn default_fence_secs() -> u64 {
    10
}
fn default_final_secs() -> u64 {
    60
}

/// How the journal names a hook command: `sha256:` and the command's SHA-256 in hex.
pub fn hook_digest(command: &str) -> String {
    use sha2::Digest;
    let hash = sha2::Sha256::digest(command.as_bytes());
    let hex: String = hash.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

fn is_hook_digest(text: &str) -> bool {
    text.strip_prefix("sha256:")
        .is_some_and(|h| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// Reads a duration such as `90s`, `30m`, `2h`, `1d` or `1h30m` (a bare number is seconds);
/// the seconds.
pub fn parse_duration(text: &str) -> std::result::Result<u64, String> {
    let t = text.trim();
    let bad = || format!("{text:?}: a duration is like 90s, 30m, 2h, 1d or 1h30m");
    if t.is_empty() {
        return Err(bad());
    }
    if let Ok(n) = t.parse::<u64>() {
        return Ok(n);
    }
    let mut total: u64 = 0;
    let mut digits = String::new();
    for c in t.chars() {
        if c.is_ascii_digit() {
            digits.push(c);
            continue;
        }
        let unit = match c {
            's' => 1,
            'm' => 60,
            'h' => 3600,
            'd' => 86_400,
            _ => return Err(bad()),
        };
        let n: u64 = digits.parse().map_err(|_| bad())?;
        digits.clear();
        total = n
            .checked_mul(unit)
            .and_then(|v| total.checked_add(v))
            .ok_or_else(bad)?;
    }
    if !digits.is_empty() {
        return Err(bad());
    }
    Ok(total)
}

/// `filter` parameters.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FilterParams {
    /// The chapter's restart path: also write the channel's filter into the target's
    /// option file, restart the target through its `restart_command` and wait for it
    /// (the filter must then be in force); `reset-replication` removes the option again,
    /// leaving the file as it was.
    #[serde(default)]
    pub persist: bool,
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
    Filter(FilterParams),
    /// Start the channel (or the change stream).
    StartReplication(StartReplicationParams),
    /// Wait for lag or for the final position.
    Wait(WaitParams),
    /// Raise the fence and read the final position.
    Lock(LockParams),
    /// Compare every table in chunks at a consistent point, outside the fence.
    Verify(VerifyParams),
    /// Hold the copy caught up, unfenced, until the cut-over may start (an operator's
    /// `shardctl cutover`, a window, passing `before-cutover` hooks).
    AwaitCutover(AwaitCutoverParams),
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
    /// After a move: keep the old copy current from the new location until the window
    /// ends, `shardctl finalize` or `shardctl revert`.
    RevertWindow(RevertWindowParams),
}

/// Every step's name, as written in playbooks.
pub const STEP_NAMES: &[&str] = StepKind::NAMES;

impl Step {
    /// What the step does, as the journal names it.
    pub fn kind(&self) -> StepKind {
        match self {
            Step::Preflight(_) => StepKind::Preflight,
            Step::Backup(_) => StepKind::Backup,
            Step::ChangeMaster(_) => StepKind::ChangeMaster,
            Step::Filter(_) => StepKind::Filter,
            Step::StartReplication(_) => StepKind::StartReplication,
            Step::Wait(_) => StepKind::Wait,
            Step::Lock(_) => StepKind::Lock,
            Step::Verify(_) => StepKind::Verify,
            Step::AwaitCutover(_) => StepKind::AwaitCutover,
            Step::Confirm(_) => StepKind::Confirm,
            Step::Guard(_) => StepKind::Guard,
            Step::Flip(_) => StepKind::Flip,
            Step::DropSource(_) => StepKind::DropSource,
            Step::Unlock(_) => StepKind::Unlock,
            Step::ResetReplication(_) => StepKind::ResetReplication,
            Step::Prune(_) => StepKind::Prune,
            Step::RevertWindow(_) => StepKind::RevertWindow,
        }
    }

    /// The step's name as written in playbooks (and in the journal).
    pub fn name(&self) -> &'static str {
        self.kind().as_sql()
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
    /// Makes the cut-over wait: puts (or replaces) an `await-cutover` step right before
    /// `lock`.
    pub fn await_cutover(&mut self, params: AwaitCutoverParams) {
        self.steps.retain(|s| !matches!(s, Step::AwaitCutover(_)));
        let at = self
            .position(|s| matches!(s, Step::Lock(_)))
            .unwrap_or(self.steps.len());
        self.steps.insert(at, Step::AwaitCutover(params));
    }

    /// Opens a revert window after the move: the old copy is kept (`drop-source` with
    /// `keep`) and a `revert-window` step ends the playbook (replacing one already there).
    pub fn revert_window(&mut self, params: RevertWindowParams) {
        self.steps.retain(|s| !matches!(s, Step::RevertWindow(_)));
        for s in &mut self.steps {
            if let Step::DropSource(d) = s {
                d.keep = true;
            }
        }
        self.steps.push(Step::RevertWindow(params));
    }

    /// The revert window's parameters, when the playbook opens one.
    pub fn revert_window_params(&self) -> Option<&RevertWindowParams> {
        self.steps.iter().find_map(|s| match s {
            Step::RevertWindow(p) => Some(p),
            _ => None,
        })
    }

    /// The verify step's parameters, when there is one.
    pub fn verify_params(&self) -> Option<&VerifyParams> {
        self.steps.iter().find_map(|s| match s {
            Step::Verify(p) => Some(p),
            _ => None,
        })
    }

    /// How old the verified point may be when the fence goes up (the verify step's
    /// `max_age_secs`, or its default).
    pub fn verified_max_age_secs(&self) -> u64 {
        self.verify_params()
            .map(|p| p.max_age_secs)
            .unwrap_or_else(default_max_age_secs)
    }

    /// The playbook as the journal keeps it: each `before-cutover` hook of its own has its
    /// command replaced by the command's digest ([`hook_digest`]). The journal holds data,
    /// never code: a resumed run takes the commands from the operator again (`resume
    /// --hook`) and runs only those whose digest the journal names.
    pub fn journaled(&self) -> Playbook {
        let mut pb = self.clone();
        for step in &mut pb.steps {
            if let Step::AwaitCutover(p) = step {
                for h in &mut p.hooks {
                    h.command = hook_digest(&h.command);
                }
            }
        }
        pb
    }

    /// The digests of the `before-cutover` hooks of its own, as [`Playbook::journaled`]
    /// wrote them. A command found in their place (an older shardctl journaled the text,
    /// or someone edited the journal) counts as the digest of that text: it too runs only
    /// when the operator gives that very command again.
    pub fn journaled_hook_digests(&self) -> Vec<String> {
        self.steps
            .iter()
            .filter_map(|s| match s {
                Step::AwaitCutover(p) => Some(&p.hooks),
                _ => None,
            })
            .flatten()
            .map(|h| {
                if is_hook_digest(&h.command) {
                    h.command.clone()
                } else {
                    hook_digest(&h.command)
                }
            })
            .collect()
    }

    /// Drops the `before-cutover` hooks of its own (a resumed run's come from the
    /// operator, through the inventory's hooks).
    pub fn without_own_hooks(mut self) -> Playbook {
        for step in &mut self.steps {
            if let Step::AwaitCutover(p) = step {
                p.hooks.clear();
            }
        }
        self
    }

    /// True when the playbook waits for its cut-over.
    pub fn awaits_cutover(&self) -> bool {
        self.steps
            .iter()
            .any(|s| matches!(s, Step::AwaitCutover(_)))
    }

    /// Parses and checks playbook text; `origin` names it in messages. A wrong field is
    /// named by its path and line: `pb.yaml:15:5: steps[7].lock.timeout_secs: ...`.
    pub fn parse(origin: &str, text: &str) -> Result<Playbook> {
        let located = |e: &serde_yaml::Error| {
            let msg = e.to_string();
            let msg = match msg.rfind(" at line ") {
                Some(i) => msg[..i].to_string(),
                None => msg,
            };
            match e.location() {
                Some(l) => Error::Config(format!("{origin}:{}:{}: {msg}", l.line(), l.column())),
                None => Error::Config(format!("{origin}: {msg}")),
            }
        };
        let value: serde_yaml::Value = serde_yaml::from_str(text).map_err(|e| located(&e))?;
        let pb: Playbook = match serde_yaml::from_value(value.clone()) {
            Ok(pb) => pb,
            Err(e) => {
                return Err(match locate_step_error(&value, text) {
                    Some((path, line, msg)) => match line {
                        Some(l) => Error::Config(format!("{origin}:{l}: {path}: {msg}")),
                        None => Error::Config(format!("{origin}: {path}: {msg}")),
                    },
                    None => match serde_yaml::from_str::<Playbook>(text) {
                        Err(e) => located(&e),
                        Ok(_) => Error::Config(format!("{origin}: {e}")),
                    },
                })
            }
        };
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

    /// The default merge playbook.
    pub fn default_merge() -> Playbook {
        Self::parse("playbooks/merge.yaml", MERGE_PLAYBOOK).expect("the embedded playbook is valid")
    }

    /// The default key-move playbook.
    pub fn default_move_keys() -> Playbook {
        Self::parse("playbooks/move-keys.yaml", MOVE_KEYS_PLAYBOOK)
            .expect("the embedded playbook is valid")
    }

    /// The default move playbook.
    pub fn default_move() -> Playbook {
        Self::parse("playbooks/move.yaml", MOVE_PLAYBOOK).expect("the embedded playbook is valid")
    }

    /// What its start-replication step keeps the copy current by (a channel without one).
    pub fn via(&self) -> Via {
        self.steps
            .iter()
            .find_map(|s| match s {
                Step::StartReplication(p) => Some(p.via),
                _ => None,
            })
            .unwrap_or_default()
    }

    /// Sets what its start-replication step keeps the copy current by.
    pub fn set_via(&mut self, via: Via) {
        for s in &mut self.steps {
            if let Step::StartReplication(p) = s {
                p.via = via;
            }
        }
    }

    /// The fence its lock step raises, if it has one.
    pub fn fence(&self) -> Option<Fence> {
        self.steps.iter().find_map(|s| match s {
            Step::Lock(l) => Some(l.fence),
            _ => None,
        })
    }

    /// Whether the `filter` step writes the filter into the target's option file (the
    /// restart path).
    pub fn persists_filters(&self) -> bool {
        self.steps
            .iter()
            .any(|s| matches!(s, Step::Filter(f) if f.persist))
    }

    /// Whether `drop-source` ends with the old copy dropped: present, without `keep` (which
    /// leaves its trash schema for the operator).
    pub fn drops_old_copy(&self) -> bool {
        self.steps
            .iter()
            .any(|s| matches!(s, Step::DropSource(d) if !d.keep))
    }

    fn position(&self, f: impl Fn(&Step) -> bool) -> Option<usize> {
        self.steps.iter().position(f)
    }

    /// Checks the order rules that keep a move safe.
    pub fn check(&self, origin: &str) -> Result<()> {
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
        // Each step the guarantees rest on, with what its absence would cost.
        let required = [
            (
                "preflight",
                "nothing would check the servers before the first change",
            ),
            ("backup", "there would be no copy"),
            ("change-master", "no channel would keep the copy current"),
            (
                "filter",
                "the channel would replay every schema of the source on the target",
            ),
            ("start-replication", "the channel would never run"),
            ("verify", "the copy would never be compared with the source"),
            ("lock", "no fence would stop writes to the old copy"),
            (
                "confirm",
                "nothing under the fence would check what changed since the verification",
            ),
            ("flip", "the directory would never point at the copy"),
            ("unlock", "the fence would never be lifted"),
            ("reset-replication", "the channel would stay on the target"),
        ];
        for (r, why) in required {
            if pos(r).is_none() {
                return bad(&format!("the playbook has no {r} step: {why}"));
            }
        }
        for (i, s) in self.steps.iter().enumerate() {
            if let Step::Lock(l) = s {
                if l.timeout_secs == 0 {
                    return bad(&format!("steps[{i}].lock.timeout_secs: must be above 0"));
                }
                if l.lock_wait_secs == 0 {
                    return bad(&format!("steps[{i}].lock.lock_wait_secs: must be above 0"));
                }
            }
            let once = !matches!(s, Step::Wait(_));
            if once && self.steps.iter().filter(|t| t.name() == s.name()).count() > 1 {
                return bad(&format!("steps[{i}]: {} appears more than once", s.name()));
            }
        }
        if pos("preflight") != Some(0) {
            return bad("preflight must be the first step: nothing may change before it");
        }
        if !(pos("change-master").unwrap() < pos("filter").unwrap()
            && pos("filter").unwrap() < pos("start-replication").unwrap())
        {
            return bad("filter must come between change-master and start-replication: an unfiltered channel replays every schema of the source");
        }
        if pos("reset-replication").unwrap() < pos("unlock").unwrap() {
            return bad("reset-replication must come after unlock: the channel carries the shard until the flip");
        }
        let (verify, lock, confirm, flip) = (
            pos("verify").unwrap(),
            pos("lock").unwrap(),
            pos("confirm").unwrap(),
            pos("flip").unwrap(),
        );
        let Some(final_wait) = final_wait else {
            return bad("the playbook has no final wait (`step: wait` with `until: final` after the lock): the flip would not wait for the last writes");
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
                return bad("the playbook has no drop-source step: the old copy would stay writable after the flip (a split's playbook has prune instead)")
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
        if let Some(a) = pos("await-cutover") {
            if !(pos("start-replication").unwrap() < a && a < lock) {
                return bad("await-cutover must come after start-replication and before lock: it waits with the copy current and no fence up");
            }
            if let Some(Step::AwaitCutover(p)) = self.steps.get(a) {
                if (p.mode == CutoverMode::Window) != p.window.is_some() {
                    return bad("await-cutover takes a window exactly when its mode is window");
                }
                if p.lag_below_secs == 0 || p.check_every_secs == 0 {
                    return bad(
                        "await-cutover lag_below_secs and check_every_secs must be above 0",
                    );
                }
            }
        }
        if let Some(r) = pos("revert-window") {
            if r + 1 != self.steps.len() || pos("reset-replication").is_none_or(|x| x > r) {
                return bad("revert-window must be the last step, after reset-replication: it waits with the move finished");
            }
            if !self
                .steps
                .iter()
                .any(|s| matches!(s, Step::DropSource(d) if d.keep))
            {
                return bad("revert-window needs drop-source with keep: true: the old copy is what a revert returns to");
            }
            if let Some(Step::RevertWindow(p)) = self.steps.get(r) {
                if p.window_secs == 0
                    || p.lag_below_secs == 0
                    || p.catch_up_timeout_secs == 0
                    || p.fence_timeout_secs == 0
                    || p.final_timeout_secs == 0
                {
                    return bad("revert-window window_secs and its timeouts must be above 0");
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

/// The step and field a playbook's value fails on: (path, line, why). Each step is read
/// on its own, then each of its fields alone with its `step:` tag, so the message names
/// `steps[i].<step>.<field>` rather than the step's first line.
fn locate_step_error(
    value: &serde_yaml::Value,
    text: &str,
) -> Option<(String, Option<usize>, String)> {
    let steps = value.get("steps")?.as_sequence()?;
    for (i, item) in steps.iter().enumerate() {
        let Err(e) = serde_yaml::from_value::<Step>(item.clone()) else {
            continue;
        };
        let Some(map) = item.as_mapping() else {
            return Some((
                format!("steps[{i}]"),
                item_line(text, i, None),
                e.to_string(),
            ));
        };
        let tag = map.get("step").and_then(|t| t.as_str());
        let Some(tag) = tag.filter(|t| STEP_NAMES.contains(t)) else {
            return Some((
                format!("steps[{i}].step"),
                item_line(text, i, Some("step")),
                e.to_string(),
            ));
        };
        for (k, v) in map {
            let Some(key) = k.as_str().filter(|k| *k != "step") else {
                continue;
            };
            let mut one = serde_yaml::Mapping::new();
            one.insert("step".into(), tag.into());
            one.insert(k.clone(), v.clone());
            if let Err(e) = serde_yaml::from_value::<Step>(serde_yaml::Value::Mapping(one)) {
                let path = format!("steps[{i}].{tag}.{key}");
                return Some((path, item_line(text, i, Some(key)), e.to_string()));
            }
        }
        return Some((
            format!("steps[{i}]"),
            item_line(text, i, None),
            e.to_string(),
        ));
    }
    None
}

/// The line (from 1) of the `i`th item of the block sequence under `steps:`, or of its
/// `key:` line; None for text written in another style.
fn item_line(text: &str, i: usize, key: Option<&str>) -> Option<usize> {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines.iter().position(|l| l.trim_end() == "steps:")?;
    let mut indent = None;
    let mut items = Vec::new();
    let mut end = lines.len();
    for (no, l) in lines.iter().enumerate().skip(start + 1) {
        let t = l.trim_start();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let ind = l.len() - t.len();
        match indent {
            None if t.starts_with("- ") => {
                indent = Some(ind);
                items.push(no);
            }
            Some(x) if ind == x && t.starts_with("- ") => items.push(no),
            Some(x) if ind <= x => {
                end = no;
                break;
            }
            _ => {}
        }
    }
    let from = *items.get(i)?;
    let to = items.get(i + 1).copied().unwrap_or(end);
    find_key(&lines, from, to, key)
}

fn find_key(lines: &[&str], from: usize, to: usize, key: Option<&str>) -> Option<usize> {
    let Some(key) = key else {
        return Some(from + 1);
    };
    (from..to)
        .find(|&no| {
            let t = lines[no].trim_start().trim_start_matches("- ").trim_start();
            t.strip_prefix(key)
                .is_some_and(|r| r.trim_start().starts_with(':'))
        })
        .map(|no| no + 1)
        .or(Some(from + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A step's name (its journal row's, its fault point's) is the tag it is written
    /// under in a playbook.
    #[test]
    fn every_step_is_named_as_it_is_written() {
        for (origin, text) in [
            ("move", MOVE_PLAYBOOK),
            ("split", SPLIT_PLAYBOOK),
            ("merge", MERGE_PLAYBOOK),
            ("move-keys", MOVE_KEYS_PLAYBOOK),
            ("move-restart", MOVE_RESTART_PLAYBOOK),
        ] {
            for step in Playbook::parse(origin, text).unwrap().steps {
                let tag = serde_json::to_value(&step).unwrap()["step"].clone();
                assert_eq!(tag, serde_json::json!(step.name()), "{origin}");
                assert!(STEP_NAMES.contains(&step.name()));
            }
        }
    }

    /// A merge's parameters as journaled before they were typed (`json!({"playbook":
    /// playbook.journaled(), "merge": plan})`, the directory's `names` added) read back
    /// with the playbook as a playbook.
    #[test]
    fn a_playbook_journaled_before_the_parameters_were_typed_reads_back() {
        let pb = Playbook::parse("playbooks/merge.yaml", MERGE_PLAYBOOK).unwrap();
        let params = serde_json::json!({
            "playbook": pb.journaled(),
            "merge": {"func_id": 1, "survivor": 2, "retired": 3, "mapping": {"kind": "values"}},
            "names": "12345678",
        });
        let read: crate::directory::journal::OperationParams<Playbook> =
            serde_json::from_value(params).unwrap();
        assert_eq!(read.playbook, Some(pb.journaled()));
        assert_eq!(read.merge.map(|m| m.retired), Some(3));
    }

    #[test]
    fn the_restart_playbook_is_valid_and_persists_its_filter() {
        let pb = Playbook::parse("playbooks/move-restart.yaml", MOVE_RESTART_PLAYBOOK).unwrap();
        assert!(pb.persists_filters());
        assert!(!Playbook::default_move().persists_filters());
        let err = Playbook::parse(
            "pb.yaml",
            &MOVE_RESTART_PLAYBOOK.replace("persist: true", "persist: sometimes"),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("filter.persist"), "{err}");
    }

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
        assert!(err.contains("no drop-source step"), "{err}");
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
            err.contains("before unlock")
                || err.contains("unlock must come after flip")
                || err.contains("unlock appears more than once"),
            "{err}"
        );
        let text: String = MOVE_PLAYBOOK
            .lines()
            .filter(|l| !l.starts_with("  - step: confirm"))
            .map(|l| format!("{l}\n"))
            .collect();
        let err = Playbook::parse("pb.yaml", &text).unwrap_err().to_string();
        assert!(err.contains("no confirm step"), "{err}");
        // The old order (verify under the fence) names the new one.
        let text = "name: move\nsteps:\n  - step: preflight\n  - step: backup\n  - step: change-master\n  - step: filter\n  - step: start-replication\n  - step: lock\n  - step: wait\n    until: final\n  - step: verify\n  - step: confirm\n  - step: flip\n  - step: drop-source\n  - step: unlock\n  - step: reset-replication\n";
        let err = Playbook::parse("pb.yaml", text).unwrap_err().to_string();
        assert!(err.contains("the order must be"), "{err}");
    }

    /// The default move playbook without the step `name` and its parameters.
    fn without(name: &str) -> String {
        let mut skipping = false;
        let mut text = String::new();
        for l in MOVE_PLAYBOOK.lines() {
            if l.starts_with("  - step: ") {
                skipping = l.split_whitespace().nth(2) == Some(name);
            }
            if !skipping {
                text.push_str(l);
                text.push('\n');
            }
        }
        assert_ne!(text, MOVE_PLAYBOOK, "{name}");
        text
    }

    #[test]
    fn each_missing_guarantee_is_named() {
        let cases: &[(String, &str)] = &[
            (without("verify"), "no verify step"),
            (without("preflight"), "no preflight step"),
            (without("filter"), "no filter step"),
            (without("reset-replication"), "no reset-replication step"),
            (without("drop-source"), "no drop-source step"),
            (
                MOVE_PLAYBOOK.replace("    until: final\n", "    lag_below_secs: 0\n"),
                "no final wait",
            ),
            (
                MOVE_PLAYBOOK.replace("  - step: confirm", "  - step: confirm\n  - step: confirm"),
                "confirm appears more than once",
            ),
            (
                MOVE_PLAYBOOK.replace(
                    "    fence: shard\n    timeout_secs: 10",
                    "    fence: shard\n    timeout_secs: 0",
                ),
                "steps[7].lock.timeout_secs: must be above 0",
            ),
            (
                MOVE_PLAYBOOK.replace("    lock_wait_secs: 3", "    lock_wait_secs: 0"),
                "steps[7].lock.lock_wait_secs: must be above 0",
            ),
        ];
        for (text, want) in cases {
            let err = Playbook::parse("pb.yaml", text).unwrap_err();
            let msg = err.to_string();
            assert!(
                msg.starts_with("pb.yaml:") && msg.contains(want),
                "{want}: {msg}"
            );
            assert!(!msg.contains('\n'), "{msg}");
            assert_eq!(err.exit_code(), crate::error::ExitCode::Config);
        }
    }

    #[test]
    fn field_errors_name_the_field_path_and_its_line() {
        let text = MOVE_PLAYBOOK.replace(
            "    fence: shard\n    timeout_secs: 10",
            "    fence: shard\n    timeout_secs: soon",
        );
        let err = Playbook::parse("pb.yaml", &text).unwrap_err().to_string();
        let line = text
            .lines()
            .position(|l| l.contains("timeout_secs: soon"))
            .unwrap()
            + 1;
        assert!(
            err.starts_with(&format!("pb.yaml:{line}: steps[7].lock.timeout_secs: ")),
            "{err}"
        );
        let text = MOVE_PLAYBOOK.replace("    fence: shard", "    fence: everything");
        let err = Playbook::parse("pb.yaml", &text).unwrap_err().to_string();
        assert!(err.contains("steps[7].lock.fence: "), "{err}");
        let text = MOVE_PLAYBOOK.replace("chunk_rows: 10000", "chunk_rows: -5");
        let err = Playbook::parse("pb.yaml", &text).unwrap_err().to_string();
        assert!(err.contains("steps[6].verify.chunk_rows: "), "{err}");
        let text = MOVE_PLAYBOOK.replace("step: verify", "step: verfy");
        let err = Playbook::parse("pb.yaml", &text).unwrap_err().to_string();
        assert!(
            err.contains("steps[6].step: ") && err.contains("verfy"),
            "{err}"
        );
    }

    #[test]
    fn durations_read_as_an_operator_writes_them() {
        assert_eq!(parse_duration("90"), Ok(90));
        assert_eq!(parse_duration("90s"), Ok(90));
        assert_eq!(parse_duration("30m"), Ok(1800));
        assert_eq!(parse_duration("2h"), Ok(7200));
        assert_eq!(parse_duration("1d"), Ok(86_400));
        assert_eq!(parse_duration("1h30m"), Ok(5400));
        for bad in ["", "soon", "h", "1x", "5m3", "-1h", "99999999999999999999d"] {
            assert!(parse_duration(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_revert_window_keeps_the_old_copy_and_ends_the_move() {
        let mut pb = Playbook::default_move();
        pb.revert_window(RevertWindowParams::new(600));
        assert!(!pb.drops_old_copy(), "the old copy is kept for the window");
        assert_eq!(pb.steps.last().map(|s| s.name()), Some("revert-window"));
        pb.check("pb").unwrap();
        // Twice: still one window.
        pb.revert_window(RevertWindowParams::new(60));
        assert_eq!(
            pb.steps
                .iter()
                .filter(|s| s.name() == "revert-window")
                .count(),
            1
        );
        // Not the last step, or without keep: refused.
        let mut early = pb.clone();
        let w = early.steps.pop().unwrap();
        early.steps.insert(3, w);
        assert!(early.check("pb").is_err());
        let mut dropped = pb.clone();
        for s in &mut dropped.steps {
            if let Step::DropSource(d) = s {
                d.keep = false;
            }
        }
        assert!(dropped
            .check("pb")
            .unwrap_err()
            .to_string()
            .contains("keep: true"));
        let mut zero = pb.clone();
        if let Some(Step::RevertWindow(p)) = zero.steps.last_mut() {
            p.window_secs = 0;
        }
        assert!(zero.check("pb").is_err());
    }

    #[test]
    fn keep_leaves_no_old_copy_reachable_and_the_plan_says_so() {
        let text = MOVE_PLAYBOOK.replace("keep: false", "keep: true");
        let pb = Playbook::parse("pb.yaml", &text).expect("keep: true is a valid move");
        let inv = crate::config::Inventory::parse(
            std::path::Path::new("inv.yaml"),
            "directory:\n  node: a\nnodes:\n  a:\n    port: 3307\n    user: u\n    password: p\n  b:\n    port: 3308\n    user: u\n    password: p\n",
        )
        .unwrap();
        let plan = crate::ops::plan::move_plan(&inv, 1, "b", &pb)
            .unwrap()
            .render();
        assert!(
            plan.contains("DROP DATABASE <the emptied schema>"),
            "{plan}"
        );
        assert!(plan.contains("keep: true"), "{plan}");
        assert!(!plan.contains("DROP DATABASE _shardctl_trash"), "{plan}");
        assert!(!plan.contains("read-only fence"), "{plan}");
        let plan = crate::ops::plan::move_plan(&inv, 1, "b", &Playbook::default_move())
            .unwrap()
            .render();
        assert!(plan.contains("DROP DATABASE _shardctl_trash"), "{plan}");
        // Without keep, the drop of the trash is a fault point; with it, there is none.
        let points = crate::ops::mover::fault_points(&pb, false);
        assert!(
            !points.iter().any(|p| p.contains("drop-trash")),
            "{points:?}"
        );
        assert!(
            !points.iter().any(|p| p.contains("lower-fence")),
            "{points:?}"
        );
    }
}
