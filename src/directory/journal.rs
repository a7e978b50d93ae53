//! The operations journal: every operation, its steps and the effects each step had on a
//! server, with owner, lease epoch and heartbeat, so a crashed run can be resumed or
//! rolled back from what really happened.
//!
//! Ownership: an operation is driven by one process at a time, the holder of its
//! [`Lease`]. Taking over (resume, abort) bumps the epoch; every write below checks the
//! epoch in the same transaction, so a process that lost its lease fails its next journal
//! write — which comes before its next effect — and touches nothing more.

use super::model::Changed;
use super::phase::Phase;
use super::store::Directory;
use crate::error::{Error, Result};
use crate::server::Stmt;
use serde::{Deserialize, Serialize};
use std::fmt;

macro_rules! sql_enum {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident => $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
        pub enum $name {
            $($(#[$vmeta])* #[serde(rename = $text)] $variant),+
        }

        impl $name {
            /// Every value, in the order declared (the macro lists each once: none can be
            /// missing).
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// Every value's spelling, in the same order.
            pub const NAMES: &'static [&'static str] = &[$($text),+];

            /// The journal's spelling.
            pub fn as_sql(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }

            /// Reads the journal's spelling.
            pub fn parse(text: &str) -> Result<Self> {
                match text {
                    $($text => Ok($name::$variant),)+
                    other => Err(Error::Internal(format!(
                        "the journal holds an unknown {} {other:?}", stringify!($name)
                    ))),
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_sql())
            }
        }
    };
}

sql_enum!(
    /// The states an operation goes through.
    OpState {
        /// Steps are being run (or the owner died while running them).
        Running => "running",
        /// A step failed and the owner let go; `resume` or `abort` it.
        Failed => "failed",
        /// Finished.
        Done => "done",
        /// Rolled back.
        Aborted => "aborted",
    }
);

/// What an operator asked of a move waiting in its revert window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WindowRequest {
    /// `shardctl revert`: back to the old copy.
    Revert,
    /// `shardctl finalize`: drop the old copy now (once the new node holds the shard).
    Finalize,
    /// `shardctl extend`: the window ends at this Unix time instead.
    ExtendUntil(i64),
}

impl WindowRequest {
    /// The journal's spelling: `revert`, `finalize` or `until:<unix seconds>`.
    pub fn as_sql(self) -> String {
        match self {
            WindowRequest::Revert => "revert".into(),
            WindowRequest::Finalize => "finalize".into(),
            WindowRequest::ExtendUntil(u) => format!("until:{u}"),
        }
    }

    /// Reads the journal's spelling.
    pub fn parse(text: &str) -> Result<Self> {
        match text {
            "revert" => Ok(WindowRequest::Revert),
            "finalize" => Ok(WindowRequest::Finalize),
            other => other
                .strip_prefix("until:")
                .and_then(|u| u.parse().ok())
                .map(WindowRequest::ExtendUntil)
                .ok_or_else(|| {
                    Error::Internal(format!(
                        "the journal holds an unknown WindowRequest {other:?}"
                    ))
                }),
        }
    }

    /// The command that asks it.
    pub fn verb(self) -> &'static str {
        match self {
            WindowRequest::Revert => "revert",
            WindowRequest::Finalize => "finalize",
            WindowRequest::ExtendUntil(_) => "extend",
        }
    }
}

/// What the journal's guarded UPDATE made of an operator's request (a cut-over, or a
/// request to a revert window), read back when it changed nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestRecord {
    /// Recorded (or already pending): the owner takes it up.
    Recorded,
    /// The operation finished meanwhile.
    Finished,
    /// The other window request is pending and stands.
    Conflicts(WindowRequest),
    /// The operation's phase does not take the request (None: a phase-less operation
    /// whose derived phase did not).
    NotAccepted(Option<Phase>),
}

/// The guard on the phase of a request's UPDATE: `phase IN (accepting)`, or for an
/// operation journaled before phases (NULL), whether its derived phase takes it.
pub struct PhaseGuard<'a> {
    /// The phases that take the request.
    pub accepting: &'a [Phase],
    /// Whether an operation without a journaled phase takes it.
    pub without_phase: bool,
}

impl PhaseGuard<'_> {
    /// The condition and its parameters.
    fn sql(&self) -> (String, Vec<mysql::Value>) {
        let marks = vec!["?"; self.accepting.len().max(1)].join(", ");
        let mut params: Vec<mysql::Value> =
            self.accepting.iter().map(|p| p.as_sql().into()).collect();
        if params.is_empty() {
            params.push(mysql::Value::NULL);
        }
        params.push(u8::from(self.without_phase).into());
        (
            format!("(phase IN ({marks}) OR (phase IS NULL AND ? = 1))"),
            params,
        )
    }

    fn takes(&self, phase: Option<Phase>) -> bool {
        match phase {
            Some(p) => self.accepting.contains(&p),
            None => self.without_phase,
        }
    }
}

sql_enum!(
    /// What an operation does.
    OpKind {
        /// A shard moves to another node.
        Move => "move",
        /// A shard gives part of its key space to a new shard.
        Split => "split",
        /// A shard's keys and rows join an adjacent shard's; the shard goes.
        Merge => "merge",
        /// Some of a shard's keys, with their rows, go to another existing shard.
        MoveKeys => "move-keys",
        /// Rows a shard no longer owns are deleted.
        Prune => "prune",
        /// A fence raised by hand (`shardctl lock`).
        Lock => "lock",
        /// The operator's availability of a shard (`shardctl shard set-availability`),
        /// journaled done in the transaction that sets it: the audit trail.
        Availability => "availability",
    }
);

sql_enum!(
    /// The state of one step.
    StepState {
        /// Not started.
        Pending => "pending",
        /// Started, not finished.
        Running => "running",
        /// Finished.
        Done => "done",
        /// Failed.
        Failed => "failed",
    }
);

sql_enum!(
    /// The state of one journaled effect.
    EffectState {
        /// About to happen: it may or may not have happened.
        Intent => "intent",
        /// Happened.
        Done => "done",
        /// Failed (the server refused it).
        Failed => "failed",
    }
);

sql_enum!(
    /// What a step of a playbook does: the name of its journal row (`operation_steps.name`)
    /// and of its `after:` fault point. A prune's steps, one per table, are named
    /// `prune <table>` instead.
    StepKind {
        /// Checks before the first change.
        Preflight => "preflight",
        /// The copy, with its coordinates.
        Backup => "backup",
        /// The channel created at the copy's coordinates.
        ChangeMaster => "change-master",
        /// The channel's filters.
        Filter => "filter",
        /// The channel started.
        StartReplication => "start-replication",
        /// A wait for the channel.
        Wait => "wait",
        /// The write fence.
        Lock => "lock",
        /// The target compared with the source: a flip requires it done.
        Verify => "verify",
        /// The cut-over held until it is asked for.
        AwaitCutover => "await-cutover",
        /// The comparison under the fence.
        Confirm => "confirm",
        /// A split's guard triggers.
        Guard => "guard",
        /// The directory's flip.
        Flip => "flip",
        /// The old copy dropped.
        DropSource => "drop-source",
        /// The fence lifted.
        Unlock => "unlock",
        /// The channel removed.
        ResetReplication => "reset-replication",
        /// A split's prune of the rows each shard no longer owns.
        Prune => "prune",
        /// The revert window.
        RevertWindow => "revert-window",
    }
);

sql_enum!(
    /// An effect on a server or on the directory: journaled as an intent before it happens
    /// and as done after. Its name is also the fault point's (`before:`, `done:`,
    /// `journaled:` + name).
    Effect {
        /// The shard's schemas copied to the target (created there).
        Copy => "copy",
        /// A physical copy onto a target with replicas: the prepared backup imported into one
        /// of the target's replicas, unlogged there (one effect per replica, after the copy).
        ImportOnReplica => "import-on-replica",
        /// The channel created at the copy's coordinates.
        PointChannel => "point-channel",
        /// The channel's filters.
        SetFilters => "set-filters",
        /// The channel started.
        StartChannel => "start-channel",
        /// The channel stopped at the final position.
        StopChannel => "stop-channel",
        /// A merge's gate: the channel's applier let run up to a position whose events the
        /// source's binary log showed harmless to the survivor (`START ... SQL_THREAD UNTIL`).
        GateApplier => "gate-applier",
        /// Switched guards installed on the source's tables ahead of a switch fence, inert
        /// (with their switch row in the node's control schema).
        ArmSwitch => "arm-switch",
        /// The write fence raised.
        RaiseFence => "raise-fence",
        /// The directory points at the target.
        Flip => "flip",
        /// The events enabled on the source enabled on the target (created disabled there).
        EnableEvents => "enable-events",
        /// The old copy taken out of reach: its tables moved into a trash schema and its
        /// schemas dropped.
        DropSource => "drop-source",
        /// The trash schemas of the old copy dropped, once the fence is lifted.
        DropTrash => "drop-trash",
        /// The write fence lifted.
        LowerFence => "lower-fence",
        /// A split's switched guards replaced by literal guard triggers, once its fence is
        /// lifted (the literal ones first: the given-away keys stay refused throughout).
        SettleGuards => "settle-guards",
        /// Switched guards and their switch row removed (after a move's old copy is gone,
        /// a split's guards settled, or a rollback).
        DisarmSwitch => "disarm-switch",
        /// The old copy's schemas dropped on each of the source's replicas (unlogged there),
        /// once each has applied the source up to the drop.
        DropReplicaCopies => "drop-replica-copies",
        /// The channel and its filters removed.
        ResetChannel => "reset-channel",
        /// The target's copy dropped (rollback).
        DropTarget => "drop-target",
        /// Rows the shards no longer own deleted (split).
        Prune => "prune",
        /// A split onto its own node, under the fence once its stream reached the final
        /// position: the triggers its copy left out (the stream writes the rows they wrote
        /// on the source; fired again, they would write them twice).
        CreateTriggers => "create-triggers",
        /// The channel held at a consistent point while a verification's snapshots open.
        HoldChannel => "hold-channel",
        /// A change stream started by this process (its checkpoint table in place on the
        /// target): it applies the source's changes of the moving rows until stopped.
        StartStream => "start-stream",
        /// A change stream stopped and its checkpoint removed from the target.
        EndStream => "end-stream",
        /// A split's old shard: guard triggers refusing the keys it gave away.
        Guard => "guard",
        /// The restart path: the channel's filter appended to the target's option file (a
        /// backup of the file kept beside it).
        PersistFilters => "persist-filters",
        /// The restart path: the target restarted through its restart command, and answering.
        RestartServer => "restart-server",
        /// The restart path: the filter removed from the target's option file again, the file
        /// as it was before.
        UnpersistFilters => "unpersist-filters",
        /// Revert window: the reverse channel on the source, from the target's position at the
        /// flip into the old copy, started.
        ReverseChannel => "reverse-channel",
        /// Revert window: the reverse channel removed.
        ResetReverseChannel => "reset-reverse-channel",
        /// Revert window closed: the old copy's trash schemas dropped.
        DropOldCopy => "drop-old-copy",
        /// Revert: the shard fence on the target.
        RevertFence => "revert-fence",
        /// Revert: the reverse channel stopped at the target's position under that fence.
        RevertStopChannel => "revert-stop-channel",
        /// Revert: the directory points at the source again.
        RevertFlip => "revert-flip",
        /// Revert: the old copy's tables renamed back into the shard's schemas, its objects
        /// created.
        RevertInstall => "revert-install",
        /// Revert: the target's copy moved into a trash schema, its schemas dropped.
        RevertDropTarget => "revert-drop-target",
        /// Revert: the target's trash dropped.
        RevertDropTrash => "revert-drop-trash",
        /// A revert stopped before its flip: the fence on the target lifted.
        RevertLowerFence => "revert-lower-fence",
        /// A revert stopped before its flip: the old copy's tables moved back into the trash.
        RevertUninstall => "revert-uninstall",
        /// Revert, after its flip: the events enabled on the target enabled on the source.
        RevertEnableEvents => "revert-enable-events",
        /// Sessions whose open transaction held the shard's tables ended before a try of the
        /// shard fence (only with the lock step's `kill_blockers`).
        KillBlockers => "kill-blockers",
    }
);

impl Effect {
    /// Its name in the journal and in fault points.
    pub fn name(self) -> &'static str {
        self.as_sql()
    }
}

/// An effect equals its name in the journal (`record.effect == "raise-fence"`).
impl PartialEq<&str> for Effect {
    fn eq(&self, name: &&str) -> bool {
        self.as_sql() == *name
    }
}

impl OpState {
    /// Done or aborted: nothing more will happen.
    pub fn is_finished(self) -> bool {
        matches!(self, OpState::Done | OpState::Aborted)
    }
}

/// What `shardctl shard set-availability` did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AvailabilityChange {
    /// The shard.
    pub shard: u32,
    /// Its availability before.
    pub before: super::Availability,
    /// Its availability now.
    pub after: super::Availability,
    /// The journal's record of the change; None when the shard already had it (nothing
    /// changed, the version did not move).
    pub op: Option<u64>,
    /// The directory version after.
    pub version: u64,
}

/// An unfinished operation from the journal, as status shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OperationSummary {
    /// Operation id.
    pub id: u64,
    /// What it does.
    pub kind: OpKind,
    /// The shard it works on.
    pub shard_id: Option<u32>,
    /// Its state.
    pub state: OpState,
    /// Its owner acknowledged a pause (`shardctl pause`) and has not been told to go on.
    pub paused: bool,
}

/// The limits `shardctl throttle` changes while an operation runs. None: the operation's
/// own setting (its options or playbook).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Limits {
    /// Prune: pause while a replica lags more than this many seconds.
    pub max_lag_secs: Option<u64>,
    /// Prune: the time one chunk should take, milliseconds.
    pub chunk_ms: Option<u64>,
    /// Native copy: the lanes (reader and writer pairs) copying at once.
    pub workers: Option<u64>,
    /// Prune: pause while the node has more running threads than this.
    pub max_threads_running: Option<u64>,
}

impl Limits {
    /// True when no limit is set.
    pub fn is_empty(&self) -> bool {
        *self == Limits::default()
    }

    /// These limits, each replaced by `other`'s where `other` sets it.
    pub fn overridden_by(&self, other: &Limits) -> Limits {
        Limits {
            max_lag_secs: other.max_lag_secs.or(self.max_lag_secs),
            chunk_ms: other.chunk_ms.or(self.chunk_ms),
            workers: other.workers.or(self.workers),
            max_threads_running: other.max_threads_running.or(self.max_threads_running),
        }
    }

    /// As docs/JSON.md spells them: durations in `*_ms`.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "max_lag_ms": self.max_lag_secs.map(|s| s.saturating_mul(1000)),
            "chunk_ms": self.chunk_ms,
            "workers": self.workers,
            "max_threads_running": self.max_threads_running,
        })
    }

    /// One line for tables and logs: `max-lag 2s, chunk 200 ms, workers 2`.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(v) = self.max_lag_secs {
            parts.push(format!("max-lag {v}s"));
        }
        if let Some(v) = self.chunk_ms {
            parts.push(format!("chunk {v} ms"));
        }
        if let Some(v) = self.workers {
            parts.push(format!("workers {v}"));
        }
        if let Some(v) = self.max_threads_running {
            parts.push(format!("max-threads-running {v}"));
        }
        parts.join(", ")
    }
}

/// One journaled step.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct StepRecord {
    /// Position in the playbook, from 0.
    pub step_no: u32,
    /// Step name.
    pub name: String,
    /// Where it stands.
    pub state: StepState,
    /// Parameters it ran with.
    pub inputs: serde_json::Value,
    /// What it produced (coordinates, counts, ...).
    pub outputs: serde_json::Value,
    /// Milliseconds it took, when finished.
    pub millis: Option<u64>,
}

/// One journaled effect.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct EffectRecord {
    /// Order within the operation, from 1.
    pub seq: u32,
    /// The step it belongs to.
    pub step_no: u32,
    /// What it does (`raise-fence`, `flip`, ...).
    pub effect: Effect,
    /// The node it acts on (the directory's node for directory effects).
    pub node: String,
    /// Intent, done or failed.
    pub state: EffectState,
    /// The owner's epoch when it was written.
    pub epoch: u64,
    /// What it was about to do.
    pub detail: serde_json::Value,
    /// What it did.
    pub outputs: serde_json::Value,
    /// How long ago its intent was journaled, in milliseconds on the directory's clock, as
    /// of the read that loaded it.
    pub intended_ago_millis: Option<u64>,
}

/// One journaled operation.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct OperationRecord {
    /// Id.
    pub id: u64,
    /// What it does.
    pub kind: OpKind,
    /// Shard.
    pub shard_id: Option<u32>,
    /// Source node.
    pub source: Option<String>,
    /// Target node.
    pub target: Option<String>,
    /// Where it stands.
    pub state: OpState,
    /// Where its procedure stands (a move, split or merge); None for other operations and
    /// for one journaled before the directory had phases.
    pub phase: Option<Phase>,
    /// The process holding the lease (`host:pid`), None once it let go.
    pub owner: Option<String>,
    /// The lease's epoch: bumped by every takeover.
    pub epoch: u64,
    /// Seconds since the owner's last heartbeat.
    pub heartbeat_age_secs: Option<u64>,
    /// An operator asked the owner to stop at its next safe point.
    pub stop_requested: bool,
    /// An operator asked the owner to pause at its next safe point (`shardctl pause`).
    pub pause_requested: bool,
    /// When the owner acknowledged the pause (every worker parked), milliseconds since the
    /// Unix epoch; None while it runs.
    pub paused_at_millis: Option<i64>,
    /// The live limits set by `shardctl throttle` (and a prune's own, recorded as it
    /// starts); None where the operation keeps its own setting.
    pub limits: Limits,
    /// What its work has done so far, as the owner's heartbeat last journaled it; None
    /// before its work reported any.
    pub progress: Option<Progress>,
    /// Parameters (the playbook and options).
    pub params: serde_json::Value,
    /// Last error.
    pub error: Option<String>,
    /// When it was journaled, milliseconds since the Unix epoch.
    pub created_at_millis: Option<i64>,
    /// When its row last changed (a state change, a heartbeat), milliseconds since the
    /// Unix epoch.
    pub updated_at_millis: Option<i64>,
    /// Steps.
    pub steps: Vec<StepRecord>,
    /// Effects, in order.
    pub effects: Vec<EffectRecord>,
}

/// An operation's parameters: written once, as the operation is journaled
/// ([`NewOperation::params`]), and read back through [`OperationRecord::params`] alone.
/// Only the fields of its kind are present in the journal's JSON (`{"playbook": ..,
/// "split": ..}`, `{"fence": ..}`, ...). `P` is the playbook's type: the operations layer,
/// which runs it, reads it as its playbook; the layers below never look into it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OperationParams<P = serde_json::Value> {
    /// A move's, split's or merge's playbook (hook commands replaced by their digests).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub playbook: Option<P>,
    /// A split's plan.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub split: Option<super::SplitPlan>,
    /// A merge's plan.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub merge: Option<super::MergePlan>,
    /// A key move's plan.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key_move: Option<super::KeyMovePlan>,
    /// A `lock` operation's fence.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fence: Option<super::Fence>,
    /// A prune's shard.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shard: Option<u32>,
    /// A prune run by another operation (a split's): that operation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent: Option<u64>,
}

impl<P> Default for OperationParams<P> {
    fn default() -> Self {
        OperationParams {
            playbook: None,
            split: None,
            merge: None,
            key_move: None,
            fence: None,
            shard: None,
            parent: None,
        }
    }
}

/// What the owner's heartbeat read from the journal.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HeartbeatReading {
    /// The lease is still this process's.
    pub held: bool,
    /// An operator asked it to stop (`shardctl stop`).
    pub stop_requested: bool,
    /// An operator asked it to pause (`shardctl pause`).
    pub pause_requested: bool,
    /// The live limits (`shardctl throttle`).
    pub limits: Limits,
}

/// What an owner's work has done so far (a move's, split's or merge's copy), journaled by
/// its heartbeat every second for monitoring. Nothing decides by it: a resumed run counts
/// again from its own start.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Progress {
    /// Rows written.
    pub rows: u64,
    /// Rows expected in all: an estimate until the work knows better.
    pub rows_expected: Option<u64>,
    /// Bytes of row data written.
    pub bytes: u64,
}

/// The right to drive one operation: its id and the epoch this process holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lease {
    /// Operation id.
    pub op: u64,
    /// Epoch taken.
    pub epoch: u64,
    /// The names the operation gives its channels and trash schemas.
    pub names: super::names::NameScope,
}

/// The refusal of a read-only fence on a node that is read-only already while no operation
/// of this directory holds it. Whoever set it (an operator, or an operation of another
/// directory sharing the node, whose registry this one cannot see) may set it writable
/// again at any moment, and this operation could not tell: writes would then reach the
/// source behind its fence. Joining it as "read-only before" is what the registry does for
/// its own holders only.
pub fn read_only_outside_this_directory(node: &str) -> Error {
    Error::Refused(format!(
        "{node} is read-only already and no operation of this directory holds that fence (an operator or another directory's operation set it): its owner could lift it under this operation; use the shard fence (`fence: shard`), or make {node} writable first"
    ))
}

/// How long an owner may stay silent before another process may take its operation over.
/// Owners write a heartbeat every second.
pub const STALE_OWNER_SECS: u64 = 20;

/// Whether an operation's owner is still driving it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Owner {
    /// Nobody holds the lease (finished, or the owner let go after a failure).
    Released,
    /// A live process holds it.
    Alive {
        /// `host:pid`.
        owner: String,
        /// Seconds since its heartbeat.
        heartbeat_age_secs: u64,
    },
    /// The holder is gone: its process no longer exists, or it has been silent too long.
    Dead {
        /// `host:pid`.
        owner: String,
        /// Why it is taken for dead.
        why: String,
    },
}

/// This host's name.
fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "localhost".into())
}

/// This process's PID namespace (`pid:[inode]`): two processes with the same host name
/// but different namespaces (containers) cannot see each other's pids.
fn pid_namespace() -> String {
    std::fs::read_link("/proc/self/ns/pid")
        .map(|p| p.display().to_string())
        .unwrap_or_default()
        .trim_start_matches("pid:[")
        .trim_end_matches(']')
        .to_string()
}

/// When process `pid` started, in clock ticks since boot (field 22 of its stat), so a
/// reused pid is told apart from the owner.
fn process_start(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = stat.rsplit_once(')')?.1;
    after.split_whitespace().nth(19)?.parse().ok()
}

/// This boot of the kernel: processes of another boot (or another machine with the same
/// host name) are never judged by this one's process table.
fn boot_id() -> String {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .map(|b| b.trim().replace('-', ""))
        .unwrap_or_default()
}

/// This process as an owner: `host:pid@boot.pidns.start`, where the part after `@` tells
/// another boot, another namespace or a reused pid apart.
pub fn owner_id() -> String {
    let pid = std::process::id();
    format!(
        "{}:{pid}@{}.{}.{}",
        host_name(),
        boot_id(),
        pid_namespace(),
        process_start(pid).unwrap_or(0)
    )
}

/// Whether the owner `id` is certainly gone: it ran on this host, in this PID namespace,
/// and its process no longer exists (or the pid now belongs to a later process). None
/// when this host cannot tell (another host or namespace).
fn owner_gone(id: &str) -> Option<String> {
    let (host, rest) = id.split_once(':')?;
    if host != host_name() {
        return None;
    }
    let (pid, tag) = rest.split_once('@')?;
    let mut parts = tag.split('.');
    let (boot, ns, start) = (parts.next()?, parts.next()?, parts.next()?);
    if boot.is_empty() || boot != boot_id() || ns.is_empty() || ns != pid_namespace() {
        return None;
    }
    let pid: u32 = pid.parse().ok()?;
    // SAFETY: signal 0 only asks whether the process exists and may be signalled.
    let r = unsafe { libc::kill(pid as i32, 0) };
    if r != 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH) {
        return Some(format!("process {pid} no longer exists"));
    }
    // It exists (or cannot be signalled by us): gone only if its start time is readable
    // and differs — the pid was reused.
    match process_start(pid) {
        Some(now) if start.parse::<u64>().ok() != Some(now) => {
            Some(format!("process {pid} is now another program"))
        }
        _ => None,
    }
}

/// Whether the holder `owner` (an [`owner_id`]) of a lease or lock whose heartbeat is
/// `heartbeat_age_secs` old (None: never written) still lives.
pub fn holder_status(owner: String, heartbeat_age_secs: Option<u64>) -> Owner {
    let age = heartbeat_age_secs.unwrap_or(u64::MAX);
    if let Some(why) = owner_gone(&owner) {
        return Owner::Dead { owner, why };
    }
    if age >= STALE_OWNER_SECS {
        return Owner::Dead {
            owner,
            why: format!("no heartbeat for {age}s"),
        };
    }
    Owner::Alive {
        owner,
        heartbeat_age_secs: age,
    }
}

impl OperationRecord {
    /// Who holds the lease, judged by the heartbeat and, for an owner on this host, by
    /// whether its process still exists.
    pub fn owner_status(&self) -> Owner {
        let Some(owner) = self.owner.clone() else {
            return Owner::Released;
        };
        if self.state.is_finished() {
            return Owner::Released;
        }
        holder_status(owner, self.heartbeat_age_secs)
    }

    /// Its parameters as journaled when it started; an error names the operation when they
    /// do not read (the journal was edited).
    pub fn params<P: serde::de::DeserializeOwned>(&self) -> Result<OperationParams<P>> {
        serde_json::from_value(self.params.clone()).map_err(|e| {
            Error::Internal(format!(
                "operation {}: unreadable parameters in the journal: {e}",
                self.id
            ))
        })
    }

    /// The newest effect of a kind, if any.
    pub fn last_effect<E>(&self, effect: E) -> Option<&EffectRecord>
    where
        Effect: PartialEq<E>,
    {
        self.effects.iter().rev().find(|e| e.effect == effect)
    }

    /// The pause has taken effect: asked for, and acknowledged by a live owner once every
    /// worker parked.
    pub fn paused(&self) -> bool {
        self.pause_requested
            && self.paused_at_millis.is_some()
            && matches!(self.owner_status(), Owner::Alive { .. })
    }

    /// The outputs of its last step that has some: for a move, split or merge the
    /// procedure's whole state after that step (it journals the state after every step).
    pub fn state_after_last_step(&self) -> Option<&serde_json::Value> {
        self.steps
            .iter()
            .rev()
            .map(|s| &s.outputs)
            .find(|out| !out.is_null())
    }

    /// How long the cut-over's write fence stood, in milliseconds, as the procedure
    /// journaled it in its state ([`FENCE_MILLIS_KEY`]: from the fence up to its lifting, or
    /// to the flip for the shard fence of a move or merge). None when it raised none.
    pub fn fence_millis(&self) -> Option<u64> {
        self.state_after_last_step()?
            .get(FENCE_MILLIS_KEY)?
            .as_u64()
    }

    /// How long a revert's fence on the new node stood, in milliseconds, as the procedure
    /// journaled it ([`REVERT_FENCE_MILLIS_KEY`]). None when no revert raised one.
    pub fn revert_fence_millis(&self) -> Option<u64> {
        self.state_after_last_step()?
            .get(REVERT_FENCE_MILLIS_KEY)?
            .as_u64()
    }

    /// How long the write fence it raised has stood, in milliseconds, while it stands,
    /// read from its effects: from the intent of the raise (the cut-over's `raise-fence`, a
    /// revert's `revert-fence`; a try that failed raised nothing) until the effect that ends
    /// it, `lower-fence` or `revert-lower-fence`, or, for the shard or switch fence of a
    /// move or merge (whose old copy goes with its hidden tables or its guards), the flip
    /// that sends the writes to the other copy. None when no fence stands or the operation is finished. A fence raised by
    /// hand (`shardctl lock`) journals no effect and is not seen here.
    pub fn fence_held_millis(&self) -> Option<u64> {
        if self.state.is_finished() {
            return None;
        }
        // The standing fence: how long ago it was raised, and whether it is a shard fence.
        let mut up: Option<(u64, bool)> = None;
        for e in &self.effects {
            if e.state == EffectState::Failed {
                continue;
            }
            let done = e.state == EffectState::Done;
            match e.effect {
                Effect::RaiseFence | Effect::RevertFence if up.is_none() => {
                    let shard = e.effect == Effect::RevertFence
                        || serde_json::from_value::<super::Fence>(e.detail["fence"].clone())
                            .is_ok_and(|f| matches!(f, super::Fence::Shard | super::Fence::Switch));
                    up = Some((e.intended_ago_millis.unwrap_or(0), shard));
                }
                Effect::LowerFence | Effect::RevertLowerFence if done => up = None,
                Effect::Flip | Effect::RevertFlip
                    if done && self.kind != OpKind::Split && up.is_some_and(|(_, s)| s) =>
                {
                    up = None
                }
                _ => {}
            }
        }
        up.map(|(ago, _)| ago)
    }
}

/// The key under which a move's, split's or merge's journaled state holds how long its
/// cut-over's fence stood, in milliseconds (the procedure's `MoveState::fence_millis`).
pub const FENCE_MILLIS_KEY: &str = "fence_millis";

/// The key under which that state holds how long a revert's fence stood, in milliseconds.
pub const REVERT_FENCE_MILLIS_KEY: &str = "revert_fence_millis";

/// An effect row's name read back as its [`Effect`]: one this shardctl does not know (a
/// newer one wrote it, or the journal was edited) is an error naming it and the operation.
fn journaled_effect(op: u64, name: &str) -> Result<Effect> {
    Effect::parse(name).map_err(|_| {
        Error::Internal(format!(
            "operation {op}: the journal holds an effect this shardctl does not know: {name:?}"
        ))
    })
}

fn json_text(v: &serde_json::Value) -> String {
    serde_json::to_string(v).unwrap_or_else(|_| "null".into())
}

fn parse_json(text: Option<String>) -> serde_json::Value {
    text.and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(serde_json::Value::Null)
}

/// A new operation's description.
pub struct NewOperation<'a, P: Serialize = serde_json::Value> {
    /// What it does.
    pub kind: OpKind,
    /// The shard it works on.
    pub shard_id: u32,
    /// Source node.
    pub source: &'a str,
    /// Target node.
    pub target: &'a str,
    /// Parameters.
    pub params: &'a OperationParams<P>,
    /// Steps: name and parameters.
    pub steps: &'a [(String, serde_json::Value)],
    /// The operation this one is part of (a split's prunes): it does not count as a
    /// conflicting operation.
    pub parent: Option<u64>,
}

impl Directory {
    fn jt(&self, table: &str) -> String {
        format!("{}.`{table}`", self.schema().quoted())
    }

    /// Operations not finished, oldest first.
    pub fn active_operations(&mut self) -> Result<Vec<OperationSummary>> {
        let st = Stmt::text(format!(
            "SELECT op_id, kind, shard_id, state, pause_requested <> 0 AND paused_at IS NOT NULL AND owner IS NOT NULL FROM {} WHERE state NOT IN ('done', 'aborted') ORDER BY op_id",
            self.jt("operations")
        ));
        let name = self.server().name().to_string();
        self.server()
            .rows(&st)?
            .into_iter()
            .map(|r| {
                let (id, kind, shard_id, state, paused): (u64, String, Option<u32>, String, u8) =
                    mysql::from_row_opt(r).map_err(|e| Error::server(&name, e))?;
                Ok(OperationSummary {
                    id,
                    kind: OpKind::parse(&kind)?,
                    shard_id,
                    state: OpState::parse(&state)?,
                    paused: paused != 0,
                })
            })
            .collect()
    }

    /// The finished operations (done or aborted) from id `from` on, oldest first, as (id,
    /// kind, state): one plain read of the operations table, steps and effects left out.
    pub fn finished_operations(&mut self, from: u64) -> Result<Vec<(u64, OpKind, OpState)>> {
        let st = Stmt::with(
            format!(
                "SELECT op_id, kind, state FROM {} WHERE op_id >= ? AND state IN ('done', 'aborted') ORDER BY op_id",
                self.jt("operations")
            ),
            vec![from.into()],
        );
        let name = self.server().name().to_string();
        self.server()
            .rows(&st)?
            .into_iter()
            .map(|r| {
                let (id, kind, state): (u64, String, String) =
                    mysql::from_row_opt(r).map_err(|e| Error::server(&name, e))?;
                Ok((id, OpKind::parse(&kind)?, OpState::parse(&state)?))
            })
            .collect()
    }

    /// Inside a transaction: fails unless `lease` still holds its operation, and locks the
    /// operation's row until the transaction ends. The check writes the row (its
    /// `lease_writes` count goes up): on a Galera cluster a lock alone is not replicated,
    /// while a written row is in the transaction's write set, so a takeover committed
    /// through another member meanwhile makes this transaction fail certification instead
    /// of committing behind the new owner's back.
    pub fn check_lease(&mut self, lease: &Lease) -> Result<()> {
        let ops = self.jt("operations");
        let held = self.server().exec_affected(&Stmt::with(
            format!(
                "UPDATE {ops} SET lease_writes = lease_writes + 1 WHERE op_id = ? AND epoch = ?"
            ),
            vec![lease.op.into(), lease.epoch.into()],
        ))?;
        if held == 1 {
            return Ok(());
        }
        let row: Option<(u64, Option<String>)> = self.server().first(&Stmt::with(
            format!("SELECT epoch, owner FROM {ops} WHERE op_id = ? FOR UPDATE"),
            vec![lease.op.into()],
        ))?;
        match row {
            Some((epoch, _)) if epoch == lease.epoch => Err(Error::Internal(format!(
                "operation {}: its lease row did not change although its epoch is {epoch}",
                lease.op
            ))),
            Some((epoch, owner)) => Err(Error::LeaseLost(format!(
                "operation {} was taken over (epoch {epoch}, owner {}); this process (epoch {}) stops without touching anything more",
                lease.op,
                owner.unwrap_or_else(|| "none".into()),
                lease.epoch
            ))),
            None => Err(Error::Usage(format!("no operation {} in the journal", lease.op))),
        }
    }

    /// Runs `f` in one transaction with the lease checked first; retried on a new
    /// connection when the old one broke (every caller's work is safe to repeat: a COMMIT
    /// whose reply was lost is read back, never run twice, see
    /// [`Directory::transaction`]).
    pub fn leased<T>(
        &mut self,
        lease: &Lease,
        mut f: impl FnMut(&mut Self) -> Result<T>,
    ) -> Result<T> {
        self.retrying(|d| {
            d.transaction(|d| {
                d.check_lease(lease)?;
                f(d)
            })
        })
    }

    /// Records a new operation with its steps (all pending), owned by this process with
    /// epoch 1. Refused when the shard already has an unfinished operation.
    pub fn create_operation<P: Serialize>(&mut self, new: &NewOperation<'_, P>) -> Result<Lease> {
        let (ops, st) = (self.jt("operations"), self.jt("operation_steps"));
        let locations = self.jt("locations");
        let owner = owner_id();
        self.change(|d, _| {
            // Lock the shard's row so two operations cannot start at once.
            d.server().exec(&Stmt::with(
                format!("SELECT shard_id FROM {locations} WHERE shard_id = ? FOR UPDATE"),
                vec![new.shard_id.into()],
            ))?;
            let busy: Option<(u64, String, String)> = d.server().first(&Stmt::with(
                format!("SELECT op_id, kind, state FROM {ops} WHERE shard_id = ? AND state IN ('running', 'failed') AND op_id <> ? LIMIT 1"),
                vec![new.shard_id.into(), new.parent.unwrap_or(0).into()],
            ))?;
            if let Some((id, kind, state)) = busy {
                return Err(Error::Refused(format!(
                    "shard {} is under operation {id} ({kind}, {state}): resume or abort it first",
                    new.shard_id
                )));
            }
            d.forget_old_commit_tokens()?;
            let names = d.name_scope()?;
            let mut params = serde_json::to_value(new.params)
                .map_err(|e| Error::Internal(format!("operation parameters: {e}")))?;
            if let (Some(map), Some(id)) = (params.as_object_mut(), names.param()) {
                map.insert(super::names::PARAMS_KEY.into(), id.into());
            }
            d.server().exec(&Stmt::with(
                format!("INSERT INTO {ops} (kind, shard_id, source_node, target_node, state, owner, epoch, heartbeat_at, params) VALUES (?, ?, ?, ?, 'running', ?, 1, CURRENT_TIMESTAMP(3), ?)"),
                vec![new.kind.as_sql().into(), new.shard_id.into(), new.source.into(), new.target.into(), owner.as_str().into(), json_text(&params).into()],
            ))?;
            let id = d.server().first::<u64>(&Stmt::text("SELECT LAST_INSERT_ID()"))?.unwrap_or(0);
            for (i, (name, inputs)) in new.steps.iter().enumerate() {
                d.server().exec(&Stmt::with(
                    format!("INSERT INTO {st} (op_id, step_no, name, state, inputs) VALUES (?, ?, ?, 'pending', ?)"),
                    vec![id.into(), (i as u32).into(), name.as_str().into(), json_text(inputs).into()],
                ))?;
            }
            let lease = Lease { op: id, epoch: 1, names: super::names::NameScope::from_params(&params)? };
            // The journal only: routers read none of it.
            Ok((lease, Changed::Nothing))
        })
    }

    /// Takes the lease of operation `op` for this process: refused while its owner is
    /// alive (the message names it) and for a finished operation. A dead owner's lease is
    /// taken over; the epoch goes up, so the old owner, should it wake, can write nothing.
    pub fn claim_operation(&mut self, op: u64, verb: &str) -> Result<(Lease, Option<String>)> {
        let ops = self.jt("operations");
        let rec = self.operation(op)?;
        if rec.state.is_finished() {
            return Err(Error::Usage(format!(
                "operation {op} is {}: nothing to {verb}",
                rec.state
            )));
        }
        let took_over = match rec.owner_status() {
            Owner::Alive {
                owner,
                heartbeat_age_secs,
            } => {
                return Err(Error::Refused(format!(
                    "operation {op} is driven by {owner} (heartbeat {heartbeat_age_secs}s ago): no {verb} while its owner lives; `shardctl stop {op}` asks it to stop at its next safe point"
                )))
            }
            Owner::Dead { owner, why } => Some(format!("{owner} ({why})")),
            Owner::Released => None,
        };
        let names = super::names::NameScope::from_params(&rec.params)?;
        let me = owner_id();
        let expected = rec.epoch;
        let lease = self.retrying(|d| {
            d.transaction(|d| {
                let now: Option<(u64, Option<String>)> = d.server().first(&Stmt::with(
                    format!("SELECT epoch, owner FROM {ops} WHERE op_id = ? FOR UPDATE"),
                    vec![op.into()],
                ))?;
                match now {
                    // This process's own claim, committed by an earlier try whose reply
                    // was lost and read back as not committed meanwhile: never a takeover
                    // by another.
                    Some((epoch, Some(owner))) if epoch == expected + 1 && owner == me => {
                        Ok(Lease { op, epoch, names })
                    }
                    Some((epoch, _)) if epoch != expected => Err(Error::Refused(format!(
                        "operation {op} was just taken over by another process (epoch {epoch})"
                    ))),
                    Some(_) => {
                        d.server().exec(&Stmt::with(
                            format!("UPDATE {ops} SET epoch = epoch + 1, owner = ?, state = 'running', stop_requested = 0, paused_at = NULL, heartbeat_at = CURRENT_TIMESTAMP(3) WHERE op_id = ?"),
                            vec![me.as_str().into(), op.into()],
                        ))?;
                        Ok(Lease { op, epoch: expected + 1, names })
                    }
                    None => Err(Error::Usage(format!("no operation {op} in the journal"))),
                }
            })
        })?;
        Ok((lease, took_over))
    }

    /// Ends this process's hold on an operation: its final (or failed) state and phase,
    /// the owner cleared. An end phase (done, rolled back) is recorded only beside a
    /// finished state: an `abort` whose rollback went through but whose release failed
    /// releases as failed, and must leave a phase the next `abort` or `resume` can go on
    /// from.
    pub fn release_operation(
        &mut self,
        lease: &Lease,
        state: OpState,
        error: Option<&str>,
        phase: Option<Phase>,
    ) -> Result<()> {
        let ops = self.jt("operations");
        self.leased(lease, |d| {
            d.server().exec(&Stmt::with(
                format!("UPDATE {ops} SET state = ?, owner = NULL, error = COALESCE(?, error), paused_at = NULL, heartbeat_at = CURRENT_TIMESTAMP(3) WHERE op_id = ?"),
                vec![state.as_sql().into(), error.into(), lease.op.into()],
            ))?;
            d.record_phase(
                lease,
                phase.filter(|p| !p.is_terminal() || state.is_finished()),
            )
        })
    }

    /// Inside a leased transaction: the operation's phase, when one is given.
    fn record_phase(&mut self, lease: &Lease, phase: Option<Phase>) -> Result<()> {
        let Some(phase) = phase else {
            return Ok(());
        };
        let ops = self.jt("operations");
        self.server().exec(&Stmt::with(
            format!("UPDATE {ops} SET phase = ? WHERE op_id = ?"),
            vec![phase.as_sql().into(), lease.op.into()],
        ))
    }

    /// Asks the live owner of `op` to stop at its next safe point. Returns false when the
    /// operation has no live owner.
    pub fn request_stop(&mut self, op: u64) -> Result<bool> {
        let ops = self.jt("operations");
        let n = self.retrying(|d| {
            d.server().exec_affected(&Stmt::with(
                format!("UPDATE {ops} SET stop_requested = 1 WHERE op_id = ? AND state = 'running' AND owner IS NOT NULL"),
                vec![op.into()],
            ))
        })?;
        Ok(n > 0)
    }

    /// Gives `op` the go-ahead for its cut-over (`shardctl cutover`), only while its phase
    /// takes it (the guard is in the UPDATE); what became of it is read back.
    pub fn request_cutover(&mut self, op: u64, guard: &PhaseGuard<'_>) -> Result<RequestRecord> {
        let ops = self.jt("operations");
        let (cond, mut params) = guard.sql();
        params.insert(0, op.into());
        let n = self.retrying(|d| {
            d.server().exec_affected(&Stmt::with(
                format!("UPDATE {ops} SET cutover_requested = 1 WHERE op_id = ? AND state IN ('running', 'failed') AND {cond}"),
                params.clone(),
            ))
        })?;
        if n > 0 {
            return Ok(RequestRecord::Recorded);
        }
        let row: Option<(String, Option<String>)> = self.server().first(&Stmt::with(
            format!("SELECT state, phase FROM {ops} WHERE op_id = ?"),
            vec![op.into()],
        ))?;
        let Some((state, phase)) = row else {
            return Ok(RequestRecord::Finished);
        };
        let phase = phase.as_deref().map(Phase::parse).transpose()?;
        Ok(if OpState::parse(&state)?.is_finished() {
            RequestRecord::Finished
        } else if !guard.takes(phase) {
            RequestRecord::NotAccepted(phase)
        } else {
            // Given already: the UPDATE changed nothing.
            RequestRecord::Recorded
        })
    }

    /// Uses up `op`'s go-ahead, under its owner's lease.
    pub fn consume_cutover(&mut self, lease: &Lease) -> Result<()> {
        let ops = self.jt("operations");
        self.retrying(|d| {
            d.server().exec(&Stmt::with(
                format!("UPDATE {ops} SET cutover_requested = 0 WHERE op_id = ? AND epoch = ?"),
                vec![lease.op.into(), lease.epoch.into()],
            ))
        })
    }

    /// True once an operator gave `op` the go-ahead for its cut-over.
    pub fn cutover_requested(&mut self, op: u64) -> Result<bool> {
        let ops = self.jt("operations");
        let flag: Option<u8> = self.retrying(|d| {
            d.server().first(&Stmt::with(
                format!("SELECT cutover_requested FROM {ops} WHERE op_id = ?"),
                vec![op.into()],
            ))
        })?;
        Ok(flag.unwrap_or(0) != 0)
    }

    /// Asks a move waiting in its revert window to revert, finalize or extend, only while
    /// its phase takes the request (the guard is in the UPDATE: a `finalize` can never be
    /// recorded once the owner journaled a revert as begun). A request never replaces the
    /// other one while that is pending (not yet taken up by the owner): two operators
    /// answering one window differently are told, not silently overruled.
    pub fn request_window(
        &mut self,
        op: u64,
        request: WindowRequest,
        guard: &PhaseGuard<'_>,
    ) -> Result<RequestRecord> {
        let ops = self.jt("operations");
        // The owner may take up the other request between the update and the read below;
        // then the update is tried again.
        for _ in 0..3 {
            let (cond, guard_params) = guard.sql();
            let mut params: Vec<mysql::Value> = vec![request.as_sql().into(), op.into()];
            params.extend(guard_params);
            let changed = self.server().exec_affected(&Stmt::with(
                format!("UPDATE {ops} SET window_request = ? WHERE op_id = ? AND state IN ('running', 'failed') AND window_request IS NULL AND {cond}"),
                params,
            ))?;
            if changed > 0 {
                return Ok(RequestRecord::Recorded);
            }
            let row: Option<(String, Option<String>, Option<String>)> =
                self.server().first(&Stmt::with(
                    format!("SELECT state, window_request, phase FROM {ops} WHERE op_id = ?"),
                    vec![op.into()],
                ))?;
            let Some((state, pending, phase)) = row else {
                return Ok(RequestRecord::Finished);
            };
            if OpState::parse(&state)?.is_finished() {
                return Ok(RequestRecord::Finished);
            }
            let phase = phase.as_deref().map(Phase::parse).transpose()?;
            if !guard.takes(phase) {
                return Ok(RequestRecord::NotAccepted(phase));
            }
            match pending.map(|p| WindowRequest::parse(&p)).transpose()? {
                Some(p) if p == request => return Ok(RequestRecord::Recorded),
                Some(p) => return Ok(RequestRecord::Conflicts(p)),
                None => {}
            }
        }
        Err(Error::Refused(format!(
            "operation {op}: its revert window's request kept changing; try again"
        )))
    }

    /// What an operator asked of `op`'s revert window, if anything.
    pub fn window_request(&mut self, op: u64) -> Result<Option<WindowRequest>> {
        let ops = self.jt("operations");
        let value: Option<Option<String>> = self.retrying(|d| {
            d.server().first(&Stmt::with(
                format!("SELECT window_request FROM {ops} WHERE op_id = ?"),
                vec![op.into()],
            ))
        })?;
        value
            .flatten()
            .map(|v| WindowRequest::parse(&v))
            .transpose()
    }

    /// Uses up `request`, the one the owner read, under its lease: only that one, so a
    /// retried statement whose first reply was lost never clears a request given since.
    /// With `phase`, the phase the request takes the operation to is journaled in the same
    /// transaction (a revert begun, before anything of it runs).
    pub fn consume_window_request(
        &mut self,
        lease: &Lease,
        request: WindowRequest,
        phase: Option<Phase>,
    ) -> Result<()> {
        let ops = self.jt("operations");
        self.leased(lease, |d| {
            d.server().exec(&Stmt::with(
                format!(
                    "UPDATE {ops} SET window_request = NULL WHERE op_id = ? AND window_request = ?"
                ),
                vec![lease.op.into(), request.as_sql().into()],
            ))?;
            d.record_phase(lease, phase)
        })
    }

    /// Asks (`pause` true) or no longer asks the owner of `op` to pause at its next safe
    /// point. False when the operation is finished (or not in the journal).
    pub fn request_pause(&mut self, op: u64, pause: bool) -> Result<bool> {
        let ops = self.jt("operations");
        let n = self.retrying(|d| {
            d.server().exec_affected(&Stmt::with(
                format!("UPDATE {ops} SET pause_requested = ? WHERE op_id = ? AND state IN ('running', 'failed')"),
                vec![u8::from(pause).into(), op.into()],
            ))
        })?;
        Ok(n > 0 || self.pause_unchanged(op, pause)?)
    }

    /// True when `op` is unfinished and its pause request already reads `pause` (an
    /// UPDATE that changes nothing counts no row).
    fn pause_unchanged(&mut self, op: u64, pause: bool) -> Result<bool> {
        let ops = self.jt("operations");
        let n: Option<u64> = self.retrying(|d| {
            d.server().first(&Stmt::with(
                format!("SELECT COUNT(*) FROM {ops} WHERE op_id = ? AND pause_requested = ? AND state IN ('running', 'failed')"),
                vec![op.into(), u8::from(pause).into()],
            ))
        })?;
        Ok(n.unwrap_or(0) > 0)
    }

    /// Sets the live limits of `op` that `limits` gives (the others stay). False when the
    /// operation is finished (or not in the journal).
    pub fn set_limits(&mut self, op: u64, limits: &Limits) -> Result<bool> {
        let ops = self.jt("operations");
        let n = self.retrying(|d| {
            d.server().exec_affected(&Stmt::with(
                format!("UPDATE {ops} SET max_lag_secs = COALESCE(?, max_lag_secs), chunk_ms = COALESCE(?, chunk_ms), workers = COALESCE(?, workers), max_threads_running = COALESCE(?, max_threads_running) WHERE op_id = ? AND state IN ('running', 'failed')"),
                vec![limits.max_lag_secs.into(), limits.chunk_ms.into(), limits.workers.into(), limits.max_threads_running.into(), op.into()],
            ))
        })?;
        Ok(n > 0 || {
            let cur = self.operation(op)?;
            !cur.state.is_finished() && cur.limits.overridden_by(limits) == cur.limits
        })
    }

    /// The owner's heartbeat: refreshed only while `lease` holds, with whether its pause
    /// has taken effect (`paused_at` set once, cleared when it runs again) and, when its
    /// work reports any, its progress (otherwise the last one journaled stays).
    pub fn heartbeat(
        &mut self,
        lease: &Lease,
        paused: bool,
        progress: Option<Progress>,
    ) -> Result<HeartbeatReading> {
        let ops = self.jt("operations");
        let (rows, expected, bytes) = match progress {
            Some(p) => (Some(p.rows), p.rows_expected, Some(p.bytes)),
            None => (None, None, None),
        };
        self.server().exec(&Stmt::with(
            format!("UPDATE {ops} SET heartbeat_at = CURRENT_TIMESTAMP(3), paused_at = IF(?, COALESCE(paused_at, CURRENT_TIMESTAMP(3)), NULL), progress_rows_expected = IF(? IS NULL, progress_rows_expected, ?), progress_rows = COALESCE(?, progress_rows), progress_bytes = COALESCE(?, progress_bytes) WHERE op_id = ? AND epoch = ?"),
            vec![
                u8::from(paused).into(),
                rows.into(),
                expected.into(),
                rows.into(),
                bytes.into(),
                lease.op.into(),
                lease.epoch.into(),
            ],
        ))?;
        type Row = (
            u64,
            u8,
            u8,
            Option<u64>,
            Option<u64>,
            Option<u64>,
            Option<u64>,
        );
        let row: Option<Row> = self.server().first(&Stmt::with(
            format!("SELECT epoch, stop_requested, pause_requested, max_lag_secs, chunk_ms, workers, max_threads_running FROM {ops} WHERE op_id = ?"),
            vec![lease.op.into()],
        ))?;
        Ok(match row {
            Some((epoch, stop, pause, max_lag_secs, chunk_ms, workers, max_threads_running)) => {
                HeartbeatReading {
                    held: epoch == lease.epoch,
                    stop_requested: stop != 0,
                    pause_requested: pause != 0,
                    limits: Limits {
                        max_lag_secs,
                        chunk_ms,
                        workers,
                        max_threads_running,
                    },
                }
            }
            None => HeartbeatReading::default(),
        })
    }

    /// Loads one operation with its steps and effects.
    pub fn operation(&mut self, id: u64) -> Result<OperationRecord> {
        self.operations(Some(id))?
            .into_iter()
            .next()
            .ok_or_else(|| Error::Usage(format!("no operation {id} in the journal")))
    }

    /// Loads all operations (or one), newest first, with their steps and effects.
    pub fn operations(&mut self, only: Option<u64>) -> Result<Vec<OperationRecord>> {
        let only: Vec<u64> = only.into_iter().collect();
        self.retrying(|d| d.read_operations((!only.is_empty()).then_some(&only[..])))
    }

    /// The operations `ids` (those that exist), newest first, with their steps and effects:
    /// three statements whatever their number.
    pub fn operations_in(&mut self, ids: &[u64]) -> Result<Vec<OperationRecord>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        self.retrying(|d| d.read_operations(Some(ids)))
    }

    /// Every operation, or those of `only`.
    fn read_operations(&mut self, only: Option<&[u64]>) -> Result<Vec<OperationRecord>> {
        let (ops, st, fx) = (
            self.jt("operations"),
            self.jt("operation_steps"),
            self.jt("operation_effects"),
        );
        let filter = match only {
            Some(ids) => format!("WHERE op_id IN ({})", vec!["?"; ids.len()].join(", ")),
            None => String::new(),
        };
        let params: Vec<mysql::Value> = only.into_iter().flatten().map(|&id| id.into()).collect();
        let rows = self.server().rows(&Stmt::with(
            format!("SELECT op_id, kind, shard_id, source_node, target_node, state, owner, epoch, TIMESTAMPDIFF(SECOND, heartbeat_at, CURRENT_TIMESTAMP(3)), stop_requested, params, error, CAST(UNIX_TIMESTAMP(created_at) * 1000 AS SIGNED), CAST(UNIX_TIMESTAMP(updated_at) * 1000 AS SIGNED), pause_requested, CAST(UNIX_TIMESTAMP(paused_at) * 1000 AS SIGNED), max_lag_secs, chunk_ms, workers, max_threads_running, phase, progress_rows, progress_rows_expected, progress_bytes FROM {ops} {filter} ORDER BY op_id DESC"),
            params.clone(),
        ))?;
        let mut out = Vec::new();
        for mut r in rows {
            let id: u64 = r.take(0).unwrap_or(0);
            let kind: String = r.take(1).unwrap_or_default();
            let state: String = r.take(5).unwrap_or_default();
            let age: Option<i64> = r.take(8).flatten();
            let stop: u8 = r.take(9).unwrap_or(0);
            let pause: u8 = r.take(14).unwrap_or(0);
            let phase: Option<String> = r.take(20).flatten();
            let progress_rows: Option<u64> = r.take(21).flatten();
            let progress_rows_expected: Option<u64> = r.take(22).flatten();
            let progress_bytes: Option<u64> = r.take(23).flatten();
            out.push(OperationRecord {
                id,
                kind: OpKind::parse(&kind)?,
                shard_id: r.take(2).flatten(),
                source: r.take(3).flatten(),
                target: r.take(4).flatten(),
                state: OpState::parse(&state)?,
                phase: phase.as_deref().map(Phase::parse).transpose()?,
                owner: r.take(6).flatten(),
                epoch: r.take(7).unwrap_or(0),
                heartbeat_age_secs: age.map(|a| a.max(0) as u64),
                stop_requested: stop != 0,
                params: parse_json(r.take(10).flatten()),
                error: r.take(11).flatten(),
                created_at_millis: r.take(12).flatten(),
                updated_at_millis: r.take(13).flatten(),
                pause_requested: pause != 0,
                paused_at_millis: r.take(15).flatten(),
                limits: Limits {
                    max_lag_secs: r.take(16).flatten(),
                    chunk_ms: r.take(17).flatten(),
                    workers: r.take(18).flatten(),
                    max_threads_running: r.take(19).flatten(),
                },
                progress: progress_rows.map(|rows| Progress {
                    rows,
                    rows_expected: progress_rows_expected,
                    bytes: progress_bytes.unwrap_or(0),
                }),
                steps: Vec::new(),
                effects: Vec::new(),
            });
        }
        // The steps and effects of every operation read in one statement each, whatever
        // the number of operations (the same filter as the operations'), then handed out.
        let index: std::collections::HashMap<u64, usize> =
            out.iter().enumerate().map(|(i, o)| (o.id, i)).collect();
        let rows = self.server().rows(&Stmt::with(
            format!("SELECT op_id, step_no, name, state, inputs, outputs, TIMESTAMPDIFF(MICROSECOND, started_at, finished_at) FROM {st} {filter} ORDER BY op_id, step_no"),
            params.clone(),
        ))?;
        for r in rows {
            type Row = (
                u64,
                u32,
                String,
                String,
                Option<String>,
                Option<String>,
                Option<i64>,
            );
            let (op_id, step_no, name, state, inputs, outputs, micros): Row =
                mysql::from_row_opt(r).map_err(|e| Error::server("directory", e))?;
            // A step of an operation inserted since the operations were read.
            let Some(&i) = index.get(&op_id) else {
                continue;
            };
            out[i].steps.push(StepRecord {
                step_no,
                name,
                state: StepState::parse(&state)?,
                inputs: parse_json(inputs),
                outputs: parse_json(outputs),
                millis: micros.map(|m| (m.max(0) / 1000) as u64),
            });
        }
        let rows = self.server().rows(&Stmt::with(
            format!("SELECT op_id, seq, step_no, effect, node, state, epoch, detail, outputs, TIMESTAMPDIFF(MICROSECOND, intended_at, CURRENT_TIMESTAMP(3)) FROM {fx} {filter} ORDER BY op_id, seq"),
            params,
        ))?;
        for r in rows {
            type Row = (
                u64,
                u32,
                u32,
                String,
                String,
                String,
                u64,
                Option<String>,
                Option<String>,
                Option<i64>,
            );
            let (op_id, seq, step_no, effect, node, state, epoch, detail, outputs, ago): Row =
                mysql::from_row_opt(r).map_err(|e| Error::server("directory", e))?;
            let Some(&i) = index.get(&op_id) else {
                continue;
            };
            let effect = journaled_effect(op_id, &effect)?;
            out[i].effects.push(EffectRecord {
                seq,
                step_no,
                effect,
                node,
                state: EffectState::parse(&state)?,
                epoch,
                detail: parse_json(detail),
                outputs: parse_json(outputs),
                intended_ago_millis: ago.map(|m| (m.max(0) / 1000) as u64),
            });
        }
        Ok(out)
    }

    /// Marks a step running (and the operation running, in `phase` when one is given).
    pub fn step_started(
        &mut self,
        lease: &Lease,
        step_no: u32,
        phase: Option<Phase>,
    ) -> Result<()> {
        let (ops, st) = (self.jt("operations"), self.jt("operation_steps"));
        self.leased(lease, |d| {
            d.server().exec(&Stmt::with(
                format!("UPDATE {st} SET state = 'running', started_at = CURRENT_TIMESTAMP(3), finished_at = NULL WHERE op_id = ? AND step_no = ?"),
                vec![lease.op.into(), step_no.into()],
            ))?;
            d.server().exec(&Stmt::with(
                format!("UPDATE {ops} SET state = 'running', heartbeat_at = CURRENT_TIMESTAMP(3), error = NULL WHERE op_id = ?"),
                vec![lease.op.into()],
            ))?;
            d.record_phase(lease, phase)
        })
    }

    /// Marks a step done with its outputs (and the phase it reached, when one is given).
    pub fn step_done(
        &mut self,
        lease: &Lease,
        step_no: u32,
        outputs: &serde_json::Value,
        phase: Option<Phase>,
    ) -> Result<()> {
        let st = self.jt("operation_steps");
        self.leased(lease, |d| {
            d.server().exec(&Stmt::with(
                format!("UPDATE {st} SET state = 'done', outputs = ?, finished_at = CURRENT_TIMESTAMP(3) WHERE op_id = ? AND step_no = ?"),
                vec![json_text(outputs).into(), lease.op.into(), step_no.into()],
            ))?;
            d.record_phase(lease, phase)
        })
    }

    /// Marks steps pending again (recovery found their effects undone), with the phase
    /// the operation went back to.
    pub fn steps_pending(
        &mut self,
        lease: &Lease,
        from_step: u32,
        phase: Option<Phase>,
    ) -> Result<()> {
        let st = self.jt("operation_steps");
        self.leased(lease, |d| {
            d.server().exec(&Stmt::with(
                format!("UPDATE {st} SET state = 'pending', outputs = NULL, finished_at = NULL WHERE op_id = ? AND step_no >= ?"),
                vec![lease.op.into(), from_step.into()],
            ))?;
            d.record_phase(lease, phase)
        })
    }

    /// Records a step's outputs without changing its state (and the phase, when one is
    /// given).
    pub fn set_step_outputs(
        &mut self,
        lease: &Lease,
        step_no: u32,
        outputs: &serde_json::Value,
        phase: Option<Phase>,
    ) -> Result<()> {
        let (ops, st) = (self.jt("operations"), self.jt("operation_steps"));
        self.leased(lease, |d| {
            d.server().exec(&Stmt::with(
                format!("UPDATE {st} SET outputs = ? WHERE op_id = ? AND step_no = ?"),
                vec![json_text(outputs).into(), lease.op.into(), step_no.into()],
            ))?;
            d.server().exec(&Stmt::with(
                format!("UPDATE {ops} SET heartbeat_at = CURRENT_TIMESTAMP(3) WHERE op_id = ?"),
                vec![lease.op.into()],
            ))?;
            d.record_phase(lease, phase)
        })
    }

    /// Marks a step failed and records the operation's error (the operation stays
    /// running until its owner releases it).
    pub fn step_failed(&mut self, lease: &Lease, step_no: u32, error: &str) -> Result<()> {
        let (ops, st) = (self.jt("operations"), self.jt("operation_steps"));
        self.leased(lease, |d| {
            d.server().exec(&Stmt::with(
                format!("UPDATE {st} SET state = 'failed', finished_at = CURRENT_TIMESTAMP(3) WHERE op_id = ? AND step_no = ?"),
                vec![lease.op.into(), step_no.into()],
            ))?;
            d.server().exec(&Stmt::with(
                format!("UPDATE {ops} SET error = ? WHERE op_id = ?"),
                vec![error.into(), lease.op.into()],
            ))
        })
    }

    /// Journals an effect about to happen; returns its sequence number.
    pub fn effect_intent(
        &mut self,
        lease: &Lease,
        step_no: u32,
        effect: Effect,
        node: &str,
        detail: &serde_json::Value,
    ) -> Result<u32> {
        let fx = self.jt("operation_effects");
        self.leased(lease, |d| {
            let seq: u32 = d
                .server()
                .first(&Stmt::with(
                    format!("SELECT COALESCE(MAX(seq), 0) + 1 FROM {fx} WHERE op_id = ?"),
                    vec![lease.op.into()],
                ))?
                .unwrap_or(1);
            d.server().exec(&Stmt::with(
                format!("INSERT INTO {fx} (op_id, seq, step_no, effect, node, state, epoch, detail) VALUES (?, ?, ?, ?, ?, 'intent', ?, ?)"),
                vec![lease.op.into(), seq.into(), step_no.into(), effect.as_sql().into(), node.into(), lease.epoch.into(), json_text(detail).into()],
            ))?;
            Ok(seq)
        })
    }

    /// Journals how an effect ended.
    pub fn effect_finished(
        &mut self,
        lease: &Lease,
        seq: u32,
        state: EffectState,
        outputs: &serde_json::Value,
    ) -> Result<()> {
        let fx = self.jt("operation_effects");
        self.leased(lease, |d| {
            d.server().exec(&Stmt::with(
                format!("UPDATE {fx} SET state = ?, outputs = ?, finished_at = CURRENT_TIMESTAMP(3) WHERE op_id = ? AND seq = ?"),
                vec![state.as_sql().into(), json_text(outputs).into(), lease.op.into(), seq.into()],
            ))
        })
    }

    /// Registers operation `lease.op` as a holder of the read-only fence on `node`, and
    /// returns whether the server was read-only before the first holder raised it
    /// (`currently_read_only` reads the server's setting while the node's registry rows
    /// are locked, when nobody holds it yet).
    pub fn read_only_fence_join(
        &mut self,
        lease: &Lease,
        node: &str,
        mut currently_read_only: impl FnMut() -> Result<bool>,
    ) -> Result<bool> {
        let rof = self.jt("read_only_fences");
        self.leased(lease, |d| {
            d.serialize_fence_registry(node)?;
            let holders = d.fence_holders(node, true)?;
            if let Some((_, was)) = holders.iter().find(|(op, _)| *op == lease.op) {
                return Ok(*was);
            }
            let was = match holders.first() {
                Some((_, w)) => *w,
                None if currently_read_only()? => {
                    return Err(read_only_outside_this_directory(node));
                }
                None => false,
            };
            d.server().exec(&Stmt::with(
                format!("INSERT INTO {rof} (node, op_id, was_read_only) VALUES (?, ?, ?)"),
                vec![node.into(), lease.op.into(), u8::from(was).into()],
            ))?;
            Ok(was)
        })
    }

    /// Inside a transaction: writes `node`'s row of the read-only fences' registry lock,
    /// so that two operations joining or leaving that fence at once are serialised: by
    /// the row lock on one server, and on a cluster also by certification (the holders'
    /// rows they read are only locked, which another member does not see; the lock row
    /// both write is in both write sets).
    fn serialize_fence_registry(&mut self, node: &str) -> Result<()> {
        let locks = self.jt("directory_locks");
        self.server().exec(&Stmt::with(
            format!("INSERT INTO {locks} (name, bumps) VALUES (?, 1) ON DUPLICATE KEY UPDATE bumps = bumps + 1"),
            vec![format!("read-only-fence:{node}").into()],
        ))
    }

    /// The holders of `node`'s read-only fence: (operation, whether the node was read-only
    /// before the first).
    pub fn read_only_fence_holders(&mut self, node: &str) -> Result<Vec<(u64, bool)>> {
        self.retrying(|d| d.fence_holders(node, false))
    }

    /// The holders of `node`'s read-only fence, locked until the transaction ends when
    /// `lock` is set.
    fn fence_holders(&mut self, node: &str, lock: bool) -> Result<Vec<(u64, bool)>> {
        let rof = self.jt("read_only_fences");
        let lock = if lock { " FOR UPDATE" } else { "" };
        Ok(self
            .server()
            .rows(&Stmt::with(
                format!(
                    "SELECT op_id, was_read_only FROM {rof} WHERE node = ? ORDER BY op_id{lock}"
                ),
                vec![node.into()],
            ))?
            .into_iter()
            .filter_map(|r| mysql::from_row_opt::<(u64, u8)>(r).ok())
            .map(|(op, was)| (op, was != 0))
            .collect())
    }

    /// True when operation `op` holds the read-only fence on `node`.
    pub fn read_only_fence_held(&mut self, op: u64, node: &str) -> Result<bool> {
        let rof = self.jt("read_only_fences");
        self.retrying(|d| {
            Ok(d.server()
                .first::<u64>(&Stmt::with(
                    format!("SELECT COUNT(*) FROM {rof} WHERE node = ? AND op_id = ?"),
                    vec![node.into(), op.into()],
                ))?
                .unwrap_or(0)
                > 0)
        })
    }

    /// Lets go of operation `lease.op`'s hold on the read-only fence of `node`. When it was
    /// the last holder and the server was writable before the first, `make_writable` runs
    /// while the registry is locked, so no other operation can join in between. Idempotent.
    pub fn read_only_fence_leave(
        &mut self,
        lease: &Lease,
        node: &str,
        mut make_writable: impl FnMut() -> Result<()>,
    ) -> Result<()> {
        let rof = self.jt("read_only_fences");
        self.leased(lease, |d| {
            d.serialize_fence_registry(node)?;
            let holders = d.fence_holders(node, true)?;
            let Some((_, was)) = holders.iter().find(|(op, _)| *op == lease.op) else {
                return Ok(());
            };
            if holders.len() == 1 && !*was {
                make_writable()?;
            }
            d.server().exec(&Stmt::with(
                format!("DELETE FROM {rof} WHERE node = ? AND op_id = ?"),
                vec![node.into(), lease.op.into()],
            ))
        })
    }

    /// Points a shard at `node`, in one transaction that bumps the directory version and
    /// checks the lease. Refused unless the journal shows operation `op` verified the
    /// target.
    pub fn flip_shard(
        &mut self,
        lease: &Lease,
        shard_id: u32,
        from: &str,
        node: &super::DirNode,
    ) -> Result<u64> {
        let (st, locations) = (self.jt("operation_steps"), self.jt("locations"));
        self.flip_change(|d, version| {
            d.check_lease(lease)?;
            d.require_verified(&st, lease.op, shard_id)?;
            let changed = d.server().exec_affected(&Stmt::with(
                format!("UPDATE {locations} SET node = ?, host = ?, port = ?, state = 'online', version = ? WHERE shard_id = ? AND node = ?"),
                vec![node.name.as_str().into(), node.host.as_str().into(), node.port.into(), version.into(), shard_id.into(), from.into()],
            ))?;
            if changed == 0 {
                let at: Option<String> = d.server().first(&Stmt::with(
                    format!("SELECT node FROM {locations} WHERE shard_id = ?"),
                    vec![shard_id.into()],
                ))?;
                if at.as_deref() != Some(node.name.as_str()) {
                    return Err(Error::Refused(format!(
                        "flip of shard {shard_id}: it is on {}, not on {from}",
                        at.unwrap_or_default()
                    )));
                }
            }
            Ok((version, Changed::shard(shard_id)))
        })
    }

    /// A flip's transaction ([`Directory::change`]), its COMMIT named `flip` for the fault
    /// points. On a cluster it runs again through another member when its member went
    /// away, left the Primary component or failed certification: every flip first reads
    /// where the directory stands, so a run after one that committed would change nothing
    /// (and a COMMIT whose reply was lost is read back, never run again).
    fn flip_change<T>(
        &mut self,
        mut f: impl FnMut(&mut Self, u64) -> Result<(T, Changed)>,
    ) -> Result<T> {
        self.name_next_commit("flip");
        self.change(&mut f)
    }

    fn require_verified(&mut self, st: &str, op: u64, shard_id: u32) -> Result<()> {
        let verified: u64 = self
            .server()
            .first(&Stmt::with(
                format!(
                    "SELECT COUNT(*) FROM {st} WHERE op_id = ? AND name = ? AND state = 'done'"
                ),
                vec![op.into(), StepKind::Verify.as_sql().into()],
            ))?
            .unwrap_or(0);
        if verified == 0 {
            return Err(Error::Refused(format!(
                "flip of shard {shard_id}: operation {op} has not verified the target"
            )));
        }
        Ok(())
    }

    /// Where the directory places a shard now, and its state (None when it has no
    /// location).
    pub fn shard_location(&mut self, shard_id: u32) -> Result<Option<(String, String)>> {
        let locations = self.jt("locations");
        self.retrying(|d| {
            d.server().first(&Stmt::with(
                format!("SELECT node, state FROM {locations} WHERE shard_id = ?"),
                vec![shard_id.into()],
            ))
        })
    }

    /// Adds a location for a shard being created by a split: offline, with no mapping, so
    /// no lookup reaches it until the split's flip.
    pub fn insert_offline_location(&mut self, func_id: u32, node: &super::DirNode) -> Result<u32> {
        let locations = self.jt("locations");
        self.change(|d, version| {
            d.server().exec(&Stmt::with(
                format!("INSERT INTO {locations} (func_id, node, host, port, state, version) VALUES (?, ?, ?, ?, 'offline', ?)"),
                vec![func_id.into(), node.name.as_str().into(), node.host.as_str().into(), node.port.into(), version.into()],
            ))?;
            let id = d.server().first::<u32>(&Stmt::text("SELECT LAST_INSERT_ID()"))?.unwrap_or(0);
            Ok((id, Changed::shard(id)))
        })
    }

    /// The split's flip: the new shard's mapping and its location online, in one
    /// transaction, only for the lease holder of an operation that verified the copy.
    pub fn split_flip(
        &mut self,
        lease: &Lease,
        func_id: u32,
        old_shard: u32,
        new_shard: u32,
        mapping: &super::NewMapping,
    ) -> Result<u64> {
        let (st, locations) = (self.jt("operation_steps"), self.jt("locations"));
        let (ranges, hashes, lists) = (self.jt("ranges"), self.jt("hashes"), self.jt("lists"));
        self.flip_change(|d, version| {
            d.check_lease(lease)?;
            d.require_verified(&st, lease.op, old_shard)?;
            let online: u64 = d.server().first(&Stmt::with(
                format!("SELECT COUNT(*) FROM {locations} WHERE shard_id = ? AND state = 'online'"),
                vec![new_shard.into()],
            ))?.unwrap_or(0);
            if online > 0 {
                return Ok((version, Changed::Nothing));
            }
            match mapping {
                super::NewMapping::LowerBound(k) => {
                    let (col, v): (&str, mysql::Value) = match k {
                        super::Key::Int(i) => ("lower_bound", (*i).into()),
                        super::Key::Str(s) => ("lower_bound_str", s.as_bytes().into()),
                    };
                    d.server().exec(&Stmt::with(
                        format!("INSERT INTO {ranges} (func_id, {col}, shard_id) VALUES (?, ?, ?)"),
                        vec![func_id.into(), v, new_shard.into()],
                    ))?;
                }
                super::NewMapping::Point(p) => d.server().exec(&Stmt::with(
                    format!("INSERT INTO {hashes} (func_id, hash, shard_id) VALUES (?, ?, ?)"),
                    vec![func_id.into(), p.to_hex().into(), new_shard.into()],
                ))?,
                super::NewMapping::Values(values) => {
                    for v in values {
                        d.server().exec(&Stmt::with(
                            format!("UPDATE {lists} SET shard_id = ? WHERE func_id = ? AND value = ? AND shard_id = ?"),
                            vec![new_shard.into(), func_id.into(), v.to_string().as_bytes().into(), old_shard.into()],
                        ))?;
                    }
                }
                super::NewMapping::Keys => {
                    return Err(Error::Refused(
                        "a shard of a per-key function does not split".into(),
                    ))
                }
            }
            let changed = d.server().exec_affected(&Stmt::with(
                format!("UPDATE {locations} SET state = 'online', version = ? WHERE shard_id = ? AND state = 'offline'"),
                vec![version.into(), new_shard.into()],
            ))?;
            if changed != 1 {
                // Rolled back with the mapping: keys must never map to a shard without a
                // location.
                return Err(Error::Refused(format!(
                    "split of shard {old_shard}: the new shard {new_shard} has no offline location to bring online"
                )));
            }
            // List values move from the old shard to the new one: both are named.
            Ok((version, Changed::Shards(vec![old_shard, new_shard])))
        })
    }

    /// A merge's flip, in one transaction: the retired shard's range, ring point or values
    /// join the survivor's (the bound or point between them removed) and the retired
    /// shard's location is deleted; the survivor's location version bumps so routers
    /// refresh. Only for the lease holder whose operation has verified; nothing when the
    /// retired shard has no location any more (flipped already).
    pub fn merge_flip(&mut self, lease: &Lease, plan: &super::MergePlan) -> Result<u64> {
        use super::MergeMapping;
        let (st, locations) = (self.jt("operation_steps"), self.jt("locations"));
        let (ranges, hashes, lists) = (self.jt("ranges"), self.jt("hashes"), self.jt("lists"));
        let (f, survivor, retired) = (plan.func_id, plan.survivor, plan.retired);
        self.flip_change(|d, version| {
            d.check_lease(lease)?;
            d.require_verified(&st, lease.op, retired)?;
            let present: u64 = d
                .server()
                .first(&Stmt::with(
                    format!("SELECT COUNT(*) FROM {locations} WHERE shard_id = ?"),
                    vec![retired.into()],
                ))?
                .unwrap_or(0);
            if present == 0 {
                return Ok((version, Changed::Nothing));
            }
            let (table, drop): (&str, Option<(&str, mysql::Value)>) = match &plan.mapping {
                MergeMapping::Range { drop } => (
                    &ranges,
                    Some(match drop {
                        super::Key::Int(i) => ("lower_bound", (*i).into()),
                        super::Key::Str(s) => ("lower_bound_str", s.as_bytes().into()),
                    }),
                ),
                MergeMapping::Point { drop } => (&hashes, Some(("hash", drop.as_str().into()))),
                MergeMapping::Values => (&lists, None),
            };
            d.server().exec(&Stmt::with(
                format!("UPDATE {table} SET shard_id = ? WHERE func_id = ? AND shard_id = ?"),
                vec![survivor.into(), f.into(), retired.into()],
            ))?;
            if let Some((col, v)) = drop {
                let gone = d.server().exec_affected(&Stmt::with(
                    format!("DELETE FROM {table} WHERE func_id = ? AND shard_id = ? AND {col} = ?"),
                    vec![f.into(), survivor.into(), v],
                ))?;
                if gone != 1 {
                    // Rolled back with the rest: the two key spaces no longer meet there.
                    return Err(Error::Refused(format!(
                        "merge of shard {retired} into {survivor}: the mapping between them changed since the merge was planned"
                    )));
                }
            }
            d.server().exec(&Stmt::with(
                format!("DELETE FROM {locations} WHERE shard_id = ?"),
                vec![retired.into()],
            ))?;
            d.server().exec(&Stmt::with(
                format!("UPDATE {locations} SET version = ? WHERE shard_id = ?"),
                vec![version.into(), survivor.into()],
            ))?;
            Ok((version, Changed::Shards(vec![survivor, retired])))
        })
    }

    /// A key move's flip, in one transaction: the bound or ring point between donor and
    /// receiver moves, or the values change owner, and both shards' location versions
    /// bump so routers refresh. Only for the lease holder whose operation has verified;
    /// nothing when the directory shows the flip already. Refused when the mapping no
    /// longer reads as the plan saw it (another change moved the bound or the values).
    pub fn key_flip(&mut self, lease: &Lease, plan: &super::KeyMovePlan) -> Result<u64> {
        use super::KeyMoveMapping;
        let (st, locations) = (self.jt("operation_steps"), self.jt("locations"));
        let (ranges, hashes, lists) = (self.jt("ranges"), self.jt("hashes"), self.jt("lists"));
        let (f, donor, receiver) = (plan.func_id, plan.donor, plan.receiver);
        let per_key = match &plan.mapping {
            KeyMoveMapping::Keys { .. } => Some(
                self.load()?
                    .function_by_id(f)
                    .cloned()
                    .ok_or_else(|| Error::Usage(format!("function {f} is not in the directory")))?,
            ),
            _ => None,
        };
        self.flip_change(|d, version| {
            d.check_lease(lease)?;
            d.require_verified(&st, lease.op, donor)?;
            let moved = match &plan.mapping {
                KeyMoveMapping::RangeBound { was, now } => {
                    let (col, was_v, now_v): (&str, mysql::Value, mysql::Value) = match (was, now) {
                        (super::Key::Int(a), super::Key::Int(b)) => {
                            ("lower_bound", (*a).into(), (*b).into())
                        }
                        (super::Key::Str(a), super::Key::Str(b)) => {
                            ("lower_bound_str", a.as_bytes().into(), b.as_bytes().into())
                        }
                        _ => {
                            return Err(Error::Usage(format!(
                                "key move of function {f}: bounds {was} and {now} are of two key types"
                            )))
                        }
                    };
                    let flipped: u64 = d.server().first(&Stmt::with(
                        format!("SELECT COUNT(*) FROM {ranges} WHERE func_id = ? AND {col} = ?"),
                        vec![f.into(), now_v.clone()],
                    ))?.unwrap_or(0);
                    if flipped > 0 {
                        return Ok((version, Changed::Nothing));
                    }
                    d.server().exec_affected(&Stmt::with(
                        format!("UPDATE {ranges} SET {col} = ? WHERE func_id = ? AND {col} = ? AND shard_id IN (?, ?)"),
                        vec![now_v, f.into(), was_v, donor.into(), receiver.into()],
                    ))?
                }
                KeyMoveMapping::RingPoint { was, now } => {
                    let flipped: u64 = d.server().first(&Stmt::with(
                        format!("SELECT COUNT(*) FROM {hashes} WHERE func_id = ? AND hash = ?"),
                        vec![f.into(), now.as_str().into()],
                    ))?.unwrap_or(0);
                    if flipped > 0 {
                        return Ok((version, Changed::Nothing));
                    }
                    d.server().exec_affected(&Stmt::with(
                        format!("UPDATE {hashes} SET hash = ? WHERE func_id = ? AND hash = ? AND shard_id IN (?, ?)"),
                        vec![now.as_str().into(), f.into(), was.as_str().into(), donor.into(), receiver.into()],
                    ))?
                }
                KeyMoveMapping::Values { values } => {
                    let mut changed = 0;
                    for v in values {
                        changed += d.server().exec_affected(&Stmt::with(
                            format!("UPDATE {lists} SET shard_id = ? WHERE func_id = ? AND value = ? AND shard_id = ?"),
                            vec![receiver.into(), f.into(), v.to_string().as_bytes().into(), donor.into()],
                        ))?;
                    }
                    if changed == 0 {
                        let at_receiver: u64 = d.server().first(&Stmt::with(
                            format!("SELECT COUNT(*) FROM {lists} WHERE func_id = ? AND shard_id = ? AND value = ?"),
                            vec![f.into(), receiver.into(), values.first().map(|v| v.to_string()).unwrap_or_default().as_bytes().into()],
                        ))?.unwrap_or(0);
                        if at_receiver > 0 {
                            return Ok((version, Changed::Nothing));
                        }
                    }
                    if changed != values.len() as u64 {
                        // Rolled back with the rest: part of the values belong elsewhere now.
                        return Err(Error::Refused(format!(
                            "key move of shard {donor} to {receiver}: {} of its {} values are no longer the donor's",
                            values.len() as u64 - changed,
                            values.len()
                        )));
                    }
                    changed
                }
                KeyMoveMapping::Keys { keys } => {
                    let func = per_key.as_ref().ok_or_else(|| {
                        Error::Internal("a per-key move without its function".into())
                    })?;
                    // All the keys move in one transaction: the first on the receiver
                    // means the flip happened.
                    if let Some(first) = keys.first() {
                        if d.key_shard(f, first)? == Some(receiver) {
                            return Ok((version, Changed::Nothing));
                        }
                    }
                    d.reassign_in_change(func, keys, Some(donor), receiver)?;
                    // No location changed: routers drop these keys from their cache and
                    // read them again.
                    return Ok((
                        version,
                        Changed::Keys {
                            func_id: f,
                            keys: Some(keys.iter().map(ToString::to_string).collect()),
                        },
                    ));
                }
            };
            if moved != 1 && !matches!(plan.mapping, KeyMoveMapping::Values { .. }) {
                return Err(Error::Refused(format!(
                    "key move of shard {donor} to {receiver}: the boundary between them changed since the move was planned"
                )));
            }
            d.server().exec(&Stmt::with(
                format!("UPDATE {locations} SET version = ? WHERE shard_id IN (?, ?)"),
                vec![version.into(), donor.into(), receiver.into()],
            ))?;
            Ok((version, Changed::Shards(vec![donor, receiver])))
        })
    }

    /// The unfinished operation holding `shard_id`, if any: the operation on it, or a
    /// split creating it or a merge keeping it (the shards its parameters name).
    fn operation_holding(&mut self, shard_id: u32) -> Result<Option<(u64, OpKind, OpState)>> {
        let ops = self.jt("operations");
        /// op_id, kind, state, shard_id, params.
        type Row = (u64, String, String, Option<u32>, Option<String>);
        let rows: Vec<Row> = self
            .server()
            .rows(&Stmt::text(format!(
                "SELECT op_id, kind, state, shard_id, params FROM {ops} WHERE state NOT IN ('done', 'aborted') ORDER BY op_id"
            )))?
            .into_iter()
            .map(mysql::from_row)
            .collect();
        for (id, kind, state, shard, params) in rows {
            let params: serde_json::Value = params
                .as_deref()
                .and_then(|p| serde_json::from_str(p).ok())
                .unwrap_or_default();
            let named =
                |path: [&str; 2]| params[path[0]][path[1]].as_u64() == Some(shard_id.into());
            if shard == Some(shard_id)
                || named(["split", "new_shard"])
                || named(["merge", "survivor"])
                || named(["merge", "retired"])
                || named(["key_move", "receiver"])
            {
                return Ok(Some((id, OpKind::parse(&kind)?, OpState::parse(&state)?)));
            }
        }
        Ok(None)
    }

    /// `shardctl shard set-availability`: sets the operator's availability of a shard, in
    /// one transaction that bumps the directory version, logs the change for routers and
    /// journals it as a finished operation of kind `availability` (before, after, reason).
    /// Unknown shard: [`Error::Usage`]; a shard an unfinished operation holds:
    /// [`Error::Refused`]; nothing changes then. The same availability again changes
    /// nothing (`op` None).
    pub fn set_availability(
        &mut self,
        shard_id: u32,
        to: super::Availability,
        reason: Option<&str>,
    ) -> Result<AvailabilityChange> {
        let (ops, locations) = (self.jt("operations"), self.jt("locations"));
        // Unknown, held, or as asked already: said before any transaction, and checked
        // again under the location's row lock.
        let before = self.availability_to_set(&locations, shard_id, "")?;
        if before == to {
            let version = self.version()?;
            return Ok(AvailabilityChange {
                shard: shard_id,
                before,
                after: to,
                op: None,
                version,
            });
        }
        self.change(|d, version| {
            let before = d.availability_to_set(&locations, shard_id, " FOR UPDATE")?;
            d.server().exec(&Stmt::with(
                format!("UPDATE {locations} SET availability = ?, version = ? WHERE shard_id = ?"),
                vec![to.as_sql().into(), version.into(), shard_id.into()],
            ))?;
            let params = serde_json::json!({
                "before": before,
                "availability": to,
                "reason": reason,
                "directory_version": version,
            });
            d.server().exec(&Stmt::with(
                format!(
                    "INSERT INTO {ops} (kind, shard_id, state, params) VALUES (?, ?, 'done', ?)"
                ),
                vec![
                    OpKind::Availability.as_sql().into(),
                    shard_id.into(),
                    json_text(&params).into(),
                ],
            ))?;
            let op = d
                .server()
                .first::<u64>(&Stmt::text("SELECT LAST_INSERT_ID()"))?
                .unwrap_or(0);
            let change = AvailabilityChange {
                shard: shard_id,
                before,
                after: to,
                op: Some(op),
                version,
            };
            Ok((change, Changed::shard(shard_id)))
        })
    }

    /// A shard's availability, for a change of it: refused for an unknown shard and for
    /// one an unfinished operation holds. `lock` is appended to the read (` FOR UPDATE`).
    fn availability_to_set(
        &mut self,
        locations: &str,
        shard_id: u32,
        lock: &str,
    ) -> Result<super::Availability> {
        let before: Option<String> = self.server().first(&Stmt::with(
            format!("SELECT availability FROM {locations} WHERE shard_id = ?{lock}"),
            vec![shard_id.into()],
        ))?;
        let Some(before) = before else {
            return Err(Error::Usage(format!("unknown shard {shard_id}")));
        };
        if let Some((op, kind, state)) = self.operation_holding(shard_id)? {
            return Err(Error::Refused(format!(
                "shard {shard_id} is held by operation {op} ({kind}, {state}): its availability can change once that is finished (resume or abort it)"
            )));
        }
        super::Availability::from_sql(&before)
    }

    /// Sets a shard's state (bumping the directory version) for the lease holder.
    pub fn set_shard_state_leased(
        &mut self,
        lease: &Lease,
        shard_id: u32,
        state: super::ShardState,
    ) -> Result<()> {
        let locations = self.jt("locations");
        self.retrying(|d| {
            d.change(|d, version| {
                d.check_lease(lease)?;
                d.server().exec(&Stmt::with(
                    format!("UPDATE {locations} SET state = ?, version = ? WHERE shard_id = ?"),
                    vec![state.as_sql().into(), version.into(), shard_id.into()],
                ))?;
                Ok(((), Changed::shard(shard_id)))
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::directory::{Fence, MergeMapping, SplitMapping};
    use serde_json::json;

    fn record(params: serde_json::Value) -> OperationRecord {
        OperationRecord {
            id: 7,
            kind: OpKind::Move,
            shard_id: Some(1),
            source: None,
            target: None,
            state: OpState::Running,
            phase: None,
            owner: None,
            epoch: 1,
            heartbeat_age_secs: None,
            stop_requested: false,
            pause_requested: false,
            paused_at_millis: None,
            limits: Default::default(),
            progress: None,
            params,
            error: None,
            created_at_millis: None,
            updated_at_millis: None,
            steps: Vec::new(),
            effects: Vec::new(),
        }
    }

    /// The parameters as each kind of operation journaled them before they were typed
    /// (`json!({"playbook": .., "split": plan})` and the like, the directory's `names`
    /// added), literally: they read back, and the typed form writes the same shape.
    #[test]
    fn parameters_journaled_before_they_were_typed_read_back_and_keep_their_shape() {
        let playbook = json!({"name": "split", "steps": [{"step": "preflight"}]});
        let split = json!({
            "playbook": playbook,
            "split": {"old_shard": 1, "new_shard": 9, "mapping": {"kind": "lower_bound", "key": 500}},
            "names": "12345678",
        });
        let p = record(split.clone()).params::<serde_json::Value>().unwrap();
        assert_eq!(p.playbook, Some(playbook.clone()));
        let plan = p.split.clone().unwrap();
        assert_eq!((plan.old_shard, plan.new_shard), (1, 9));
        assert_eq!(
            plan.mapping,
            SplitMapping::LowerBound {
                key: crate::directory::Key::Int(500)
            }
        );
        assert_eq!((p.merge.as_ref(), p.fence), (None, None));
        let mut written = serde_json::to_value(&p).unwrap();
        written["names"] = json!("12345678");
        assert_eq!(written, split);

        let merge = json!({
            "playbook": playbook,
            "merge": {"func_id": 2, "survivor": 3, "retired": 4, "mapping": {"kind": "point", "drop": "80000000000000000000000000000000"}},
        });
        let p = record(merge.clone()).params::<serde_json::Value>().unwrap();
        let plan = p.merge.clone().unwrap();
        assert_eq!((plan.func_id, plan.survivor, plan.retired), (2, 3, 4));
        assert!(matches!(plan.mapping, MergeMapping::Point { .. }));
        assert_eq!(serde_json::to_value(&p).unwrap(), merge);

        let lock = json!({"fence": "read-only"});
        let p = record(lock.clone()).params::<serde_json::Value>().unwrap();
        assert_eq!(p.fence, Some(Fence::ReadOnly));
        assert_eq!(serde_json::to_value(&p).unwrap(), lock);

        // A prune wrote its parent even when it had none.
        let p = record(json!({"shard": 5, "parent": null}))
            .params::<serde_json::Value>()
            .unwrap();
        assert_eq!((p.shard, p.parent), (Some(5), None));
        let p = record(json!({"shard": 5, "parent": 11}))
            .params::<serde_json::Value>()
            .unwrap();
        assert_eq!(p.parent, Some(11));
    }

    /// The effects' and steps' names are the journal's: each reads back as itself, none
    /// twice, and the few a reader could mistype keep their spelling (old journals, fault
    /// points and docs/JSON.md name them).
    #[test]
    fn effect_and_step_names_read_back_as_themselves() {
        assert_eq!(Effect::ALL.len(), Effect::NAMES.len());
        for (e, name) in Effect::ALL.iter().zip(Effect::NAMES) {
            assert_eq!(e.name(), *name);
            assert_eq!(journaled_effect(1, name).unwrap(), *e);
            assert_eq!(serde_json::to_value(e).unwrap(), json!(name));
        }
        let mut names = Effect::NAMES.to_vec();
        names.sort_unstable();
        names.dedup();
        assert_eq!(
            names.len(),
            Effect::ALL.len(),
            "an effect name is used twice"
        );
        assert_eq!(Effect::ALL.len(), 41);
        for (e, name) in [
            (Effect::RaiseFence, "raise-fence"),
            (Effect::ImportOnReplica, "import-on-replica"),
            (Effect::KillBlockers, "kill-blockers"),
            (Effect::RevertEnableEvents, "revert-enable-events"),
        ] {
            assert_eq!(e.name(), name);
        }
        for (s, name) in StepKind::ALL.iter().zip(StepKind::NAMES) {
            assert_eq!(StepKind::parse(name).unwrap(), *s);
        }
        assert_eq!(StepKind::Verify.as_sql(), "verify");
    }

    fn effect(
        seq: u32,
        effect: Effect,
        state: EffectState,
        detail: serde_json::Value,
        ago: u64,
    ) -> EffectRecord {
        EffectRecord {
            seq,
            step_no: 0,
            effect,
            node: "node1".into(),
            state,
            epoch: 1,
            detail,
            outputs: serde_json::Value::Null,
            intended_ago_millis: Some(ago),
        }
    }

    /// The fence stands from the intent of its raise until what ends it: a failed try
    /// raised nothing, a lift ends it, and a move's (not a split's) shard fence ends at
    /// its flip while its read-only fence stands until lifted.
    #[test]
    fn the_fence_stands_from_its_raise_until_what_ends_it() {
        let shard = json!({"fence": "shard"});
        let ro = json!({"fence": "read-only"});
        let mut rec = record(json!({}));
        assert_eq!(rec.fence_held_millis(), None);
        rec.effects = vec![
            effect(1, Effect::Copy, EffectState::Done, json!({}), 90_000),
            effect(
                2,
                Effect::RaiseFence,
                EffectState::Failed,
                shard.clone(),
                9_000,
            ),
            effect(
                3,
                Effect::RaiseFence,
                EffectState::Intent,
                shard.clone(),
                4_000,
            ),
        ];
        assert_eq!(rec.fence_held_millis(), Some(4_000));
        rec.effects[2].state = EffectState::Done;
        assert_eq!(rec.fence_held_millis(), Some(4_000));
        rec.effects
            .push(effect(4, Effect::Flip, EffectState::Intent, json!({}), 100));
        assert_eq!(rec.fence_held_millis(), Some(4_000), "a flip in flight");
        rec.effects[3].state = EffectState::Done;
        assert_eq!(
            rec.fence_held_millis(),
            None,
            "the move's shard fence ends at the flip"
        );
        rec.kind = OpKind::Split;
        assert_eq!(
            rec.fence_held_millis(),
            Some(4_000),
            "a split's stands until lifted"
        );
        rec.effects.push(effect(
            5,
            Effect::LowerFence,
            EffectState::Done,
            json!({}),
            10,
        ));
        assert_eq!(rec.fence_held_millis(), None);
        rec.kind = OpKind::Move;
        rec.effects[2].detail = ro;
        rec.effects.truncate(4);
        assert_eq!(
            rec.fence_held_millis(),
            Some(4_000),
            "read-only stands past the flip"
        );
        rec.state = OpState::Done;
        assert_eq!(rec.fence_held_millis(), None);
        // A revert's fence on the new node, and its lifting.
        let mut rec = record(json!({}));
        rec.effects = vec![effect(
            1,
            Effect::RevertFence,
            EffectState::Done,
            json!({}),
            2_500,
        )];
        assert_eq!(rec.fence_held_millis(), Some(2_500));
        rec.effects.push(effect(
            2,
            Effect::RevertLowerFence,
            EffectState::Done,
            json!({}),
            5,
        ));
        assert_eq!(rec.fence_held_millis(), None);
    }

    #[test]
    fn an_unknown_effect_in_the_journal_is_named() {
        let e = journaled_effect(7, "teleport").unwrap_err();
        let shown = e.to_string();
        assert!(shown.contains("operation 7"), "{shown}");
        assert!(shown.contains("\"teleport\""), "{shown}");
    }

    #[test]
    fn unreadable_parameters_name_the_operation() {
        let e = record(json!({"split": {"old_shard": "x"}}))
            .params::<serde_json::Value>()
            .unwrap_err();
        assert!(e.to_string().contains("operation 7"), "{e}");
    }
}
