//! `shardctl exporter`: the fleet as Prometheus metrics, read afresh at every scrape — each
//! node (reachable, read-only, its replication channels, its shards), each shard, every
//! unfinished operation of the journal, the directory itself, and from the finished
//! operations their outcomes and fence durations. docs/METRICS.md lists every metric.
//!
//! Reading never gets in an operation's way: plain reads only (the directory in a
//! read-only consistent snapshot, with its application account when the inventory names
//! one; the nodes' settings, channels and `information_schema` sizes), no lock taken, no
//! write anywhere. And a scrape never hangs: the directory and every node are read in
//! parallel, each connection's timeouts capped at the scrape's budget, and whatever has not
//! answered when the budget is spent is reported down (`shardctl_node_up 0`,
//! `shardctl_directory_up 0`) while its reader finishes on its own.
//!
//! The finished operations are read once each and kept: a scrape reads only those that
//! finished since the last, so the counters and the histogram cost nothing on a long
//! journal after the first scrapes (which read it as far as their budget goes; both
//! families are left out until the whole journal is read, so they never count old
//! operations as new ones).

pub mod http;
pub mod text;

use crate::config::Inventory;
use crate::directory::journal::{OpKind, OpState, OperationRecord, Owner, StepKind, StepState};
use crate::directory::names::NameScope;
use crate::directory::{Directory, ShardState, Snapshot};
use crate::error::{Error, Result};
use crate::server::catalog::SchemaSize;
use crate::server::replication::ChannelStatus;
use crate::server::{statements, ConnectSpec, Server};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};
use text::{Family, Histogram, Kind, Labels};

/// How long a scrape may take unless told otherwise.
pub const DEFAULT_BUDGET: Duration = Duration::from_secs(5);

/// The shortest and longest scrape budget `--budget` takes.
pub const BUDGET_RANGE: (Duration, Duration) =
    (Duration::from_millis(500), Duration::from_secs(120));

/// The fence-duration histogram's bucket bounds, seconds: a cut-over's fence lasts from
/// well under a second (the shard fence on a quiet shard) to the step timeouts' minutes.
pub const FENCE_BUCKETS: [f64; 11] = [
    0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

/// How long a connection to the exporter may stay silent (reading its request, writing
/// the answer).
const HTTP_IO_TIMEOUT: Duration = Duration::from_secs(10);

/// Scrapes served at once; one more is answered 503.
const MAX_SCRAPES: usize = 4;

/// Binds the address to serve on (`HOST:PORT`; port 0 picks a free one). A malformed
/// address is a usage error, one in use or not ours to take a refusal.
pub fn bind(addr: &str) -> Result<std::net::TcpListener> {
    use std::net::ToSocketAddrs;
    let bad = |why: String| {
        Error::Usage(format!(
            "--listen {addr:?}: {why}; give HOST:PORT, such as 127.0.0.1:9855 or [::1]:9855"
        ))
    };
    let addrs: Vec<std::net::SocketAddr> = addr
        .to_socket_addrs()
        .map_err(|e| bad(e.to_string()))?
        .collect();
    let first = addrs
        .first()
        .ok_or_else(|| bad("it names no address".into()))?;
    std::net::TcpListener::bind(first).map_err(|e| match e.kind() {
        std::io::ErrorKind::AddrInUse => Error::Refused(format!(
            "{first} is in use by another process: choose another --listen address"
        )),
        std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::AddrNotAvailable => {
            Error::Refused(format!("cannot listen on {first}: {e}"))
        }
        _ => Error::io(format!("cannot listen on {first}"), e),
    })
}

/// Serves `exporter`'s metrics on `listener` (`GET /metrics`, one scrape per request)
/// until `stop` answers true.
pub fn serve(
    exporter: Exporter,
    listener: std::net::TcpListener,
    stop: impl Fn() -> bool,
) -> Result<()> {
    let exporter = Arc::new(exporter);
    let responder = Arc::new(http::Responder {
        metrics: move || (exporter.scrape().into_bytes(), text::CONTENT_TYPE),
        io_timeout: HTTP_IO_TIMEOUT,
        max_connections: MAX_SCRAPES,
    });
    http::serve(listener, responder, stop)
}

/// Which fence of an operation a duration is of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum FenceDuring {
    /// The cut-over's, before the flip.
    Cutover,
    /// A revert's, on the new node, before the flip back.
    Revert,
}

impl FenceDuring {
    fn label(self) -> &'static str {
        match self {
            FenceDuring::Cutover => "cutover",
            FenceDuring::Revert => "revert",
        }
    }
}

/// A replication channel's condition, as `shardctl_channel_state` reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChannelState {
    /// Receiving and applying, no error recorded.
    Running,
    /// The receiver (re)connecting to its source, no error recorded.
    Connecting,
    /// A thread stopped without an error: stopped on purpose, or held at a position (a
    /// verification, a merge's gate).
    Stopped,
    /// An error recorded by the receiver or the applier.
    Broken,
}

impl ChannelState {
    /// Every state, as the one-hot family lists them.
    pub const ALL: [ChannelState; 4] = [
        ChannelState::Running,
        ChannelState::Connecting,
        ChannelState::Stopped,
        ChannelState::Broken,
    ];

    /// A channel's state from its status.
    pub fn of(c: &ChannelStatus) -> ChannelState {
        if !c.last_io_error.is_empty() || !c.last_sql_error.is_empty() {
            ChannelState::Broken
        } else if c.io_running.eq_ignore_ascii_case("yes") && c.sql_running {
            ChannelState::Running
        } else if c.io_running.eq_ignore_ascii_case("connecting") && c.sql_running {
            ChannelState::Connecting
        } else {
            ChannelState::Stopped
        }
    }

    fn label(self) -> &'static str {
        match self {
            ChannelState::Running => "running",
            ChannelState::Connecting => "connecting",
            ChannelState::Stopped => "stopped",
            ChannelState::Broken => "broken",
        }
    }
}

/// Whether an operation's owner drives it, as `shardctl_operation_owner` reports it.
fn owner_label(o: &Owner) -> &'static str {
    match o {
        Owner::Alive { .. } => "alive",
        Owner::Dead { .. } => "dead",
        Owner::Released => "released",
    }
}

/// The owner statuses, as the one-hot family lists them.
const OWNER_LABELS: [&str; 3] = ["alive", "dead", "released"];

/// The states an unfinished operation can be in.
const ACTIVE_STATES: [OpState; 2] = [OpState::Running, OpState::Failed];

/// The states a finished operation ends in.
const OUTCOMES: [OpState; 2] = [OpState::Done, OpState::Aborted];

/// What a finished operation leaves to the counters and the histogram.
#[derive(Debug, Clone, PartialEq)]
struct Finished {
    kind: OpKind,
    outcome: OpState,
    /// Its fences' durations, seconds.
    fences: Vec<(FenceDuring, f64)>,
}

/// The fence durations a finished operation journaled, as the journal reads them.
fn fences_of(rec: &OperationRecord) -> Vec<(FenceDuring, f64)> {
    let mut out = Vec::new();
    if let Some(ms) = rec.fence_millis() {
        out.push((FenceDuring::Cutover, ms as f64 / 1000.0));
    }
    if let Some(ms) = rec.revert_fence_millis() {
        out.push((FenceDuring::Revert, ms as f64 / 1000.0));
    }
    out
}

/// The finished operations read so far.
#[derive(Debug, Default)]
struct JournalCache {
    finished: BTreeMap<u64, Finished>,
    /// Every operation below this id is finished and in `finished` (or gone from the
    /// journal): the next listing starts here.
    from: u64,
    /// The last listing was read in full: the counters and histogram cover the journal.
    complete: bool,
}

/// What one read of the directory found.
#[derive(Debug)]
struct DirectoryReading {
    schema_version: u32,
    snapshot: Snapshot,
    /// The unfinished operations, with their steps and effects.
    active: Vec<OperationRecord>,
    /// Shards that still hold rows they no longer own.
    unpruned: BTreeSet<u32>,
    /// The finished operations from the cache's `from` on, as (id, kind, state).
    listed: Vec<(u64, OpKind, OpState)>,
    /// Those of them read now (the rest were cached, or the budget ran out).
    loaded: Vec<(u64, Finished)>,
}

/// What one read of a node found.
#[derive(Debug, Clone)]
struct NodeReading {
    read_only: bool,
    channels: Vec<ChannelStatus>,
    sizes: BTreeMap<String, SchemaSize>,
}

/// One reader's answer.
enum Reading {
    Directory(Box<Result<DirectoryReading>>),
    Node(String, Result<NodeReading>),
}

/// The exporter: the inventory it reads by, the budget of a scrape, and what it keeps
/// between scrapes.
pub struct Exporter {
    inv: Arc<Inventory>,
    budget: Duration,
    journal: Mutex<JournalCache>,
    /// Each source's last error (None: it answered), so a change is logged once.
    last_errors: Mutex<BTreeMap<String, Option<String>>>,
}

/// The time left until `deadline`, at least `floor` (a connection needs some time even
/// when the budget is nearly spent; its answer is dropped if late).
fn left(deadline: Instant, floor: Duration) -> Duration {
    deadline
        .saturating_duration_since(Instant::now())
        .max(floor)
}

/// The shortest timeout a reader's connection gets, however little of the budget is left.
const FLOOR: Duration = Duration::from_millis(200);

/// Reads one node: its settings, channels and schema sizes, over a connection whose
/// timeouts end with the budget.
fn read_node(inv: &Inventory, name: &str, deadline: Instant) -> Result<NodeReading> {
    let limit = left(deadline, FLOOR);
    let mut spec = ConnectSpec::for_node(inv, inv.node(name)?)?;
    spec.connect_timeout = spec.connect_timeout.min(limit);
    spec.read_timeout = spec.read_timeout.min(limit);
    spec.write_timeout = spec.write_timeout.min(limit);
    let mut server = Server::connect(&spec)?;
    // No metadata lock is waited for longer than the budget, on the server's side too.
    server.exec(&statements::lock_wait_timeout(limit.as_secs().max(1)))?;
    let settings = server.settings()?;
    let channels = server.channels()?;
    let sizes = server.schema_sizes()?;
    Ok(NodeReading {
        read_only: settings.read_only,
        channels,
        sizes,
    })
}

/// Reads the directory: its snapshot, the unfinished operations, and the finished ones
/// from `from` on that `cached` lacks, as many as the budget allows.
fn read_directory(
    inv: &Inventory,
    deadline: Instant,
    from: u64,
    cached: &BTreeSet<u64>,
) -> Result<DirectoryReading> {
    let mut d = Directory::open_for_application_within(inv, left(deadline, FLOOR))?;
    let schema_version = d.schema_version()?.unwrap_or(0);
    let snapshot = d.load()?;
    let summaries = d.active_operations()?;
    let unpruned = crate::query::unpruned_shards(&snapshot, &summaries);
    let mut active = Vec::new();
    for s in &summaries {
        let rec = d.operation(s.id)?;
        // One that finished since the list was read is counted with the finished ones.
        if !rec.state.is_finished() {
            active.push(rec);
        }
    }
    let listed = d.finished_operations(from)?;
    let mut loaded = Vec::new();
    for &(id, kind, outcome) in &listed {
        if cached.contains(&id) {
            continue;
        }
        if Instant::now() >= deadline {
            break;
        }
        let fences = match kind {
            OpKind::Move | OpKind::Split | OpKind::Merge | OpKind::MoveKeys => {
                fences_of(&d.operation(id)?)
            }
            OpKind::Prune | OpKind::Lock | OpKind::Availability => Vec::new(),
        };
        loaded.push((
            id,
            Finished {
                kind,
                outcome,
                fences,
            },
        ));
    }
    Ok(DirectoryReading {
        schema_version,
        snapshot,
        active,
        unpruned,
        listed,
        loaded,
    })
}

impl Exporter {
    /// An exporter of `inv`'s fleet whose scrapes take at most `budget`.
    pub fn new(inv: Inventory, budget: Duration) -> Exporter {
        Exporter {
            inv: Arc::new(inv),
            budget,
            journal: Mutex::new(JournalCache::default()),
            last_errors: Mutex::new(BTreeMap::new()),
        }
    }

    /// The scrape's budget.
    pub fn budget(&self) -> Duration {
        self.budget
    }

    /// One scrape's answer in the text format: never fails, and returns within the budget
    /// (and a few milliseconds) whatever the servers do.
    pub fn scrape(&self) -> String {
        text::render(&self.families())
    }

    /// One scrape's metric families.
    pub fn families(&self) -> Vec<Family> {
        let started = Instant::now();
        let deadline = started + self.budget;
        let (from, cached) = {
            let cache = self.journal.lock().unwrap_or_else(|p| p.into_inner());
            let cached: BTreeSet<u64> = cache
                .finished
                .range(cache.from..)
                .map(|(id, _)| *id)
                .collect();
            (cache.from, cached)
        };
        let (tx, rx) = mpsc::channel();
        {
            let (inv, tx) = (Arc::clone(&self.inv), tx.clone());
            std::thread::spawn(move || {
                let r = read_directory(&inv, deadline, from, &cached);
                let _ = tx.send(Reading::Directory(Box::new(r)));
            });
        }
        let names: Vec<String> = self
            .inv
            .node_names()
            .into_iter()
            .map(String::from)
            .collect();
        for name in &names {
            let (inv, tx, name) = (Arc::clone(&self.inv), tx.clone(), name.clone());
            std::thread::spawn(move || {
                let r = read_node(&inv, &name, deadline);
                let _ = tx.send(Reading::Node(name, r));
            });
        }
        drop(tx);
        let mut directory: Option<Result<DirectoryReading>> = None;
        let mut nodes: BTreeMap<String, Result<NodeReading>> = BTreeMap::new();
        while directory.is_none() || nodes.len() < names.len() {
            let wait = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(wait) {
                Ok(Reading::Directory(r)) => directory = Some(*r),
                Ok(Reading::Node(name, r)) => {
                    nodes.insert(name, r);
                }
                Err(_) => break,
            }
        }
        let late = directory.is_none() || nodes.len() < names.len();
        let late_error = || {
            Error::Timeout(format!(
                "no answer within the scrape budget of {} s",
                self.budget.as_secs_f64()
            ))
        };
        let directory = directory.unwrap_or_else(|| Err(late_error()));
        for name in &names {
            nodes
                .entry(name.clone())
                .or_insert_with(|| Err(late_error()));
        }
        self.note("directory", directory.as_ref().err());
        for (name, r) in &nodes {
            self.note(&format!("node {name}"), r.as_ref().err());
        }
        let directory = directory.ok();
        let complete = {
            let mut cache = self.journal.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(d) = &directory {
                cache.merge(d);
            }
            cache.complete
        };
        let nodes: BTreeMap<String, Option<NodeReading>> =
            nodes.into_iter().map(|(n, r)| (n, r.ok())).collect();
        let cache = self.journal.lock().unwrap_or_else(|p| p.into_inner());
        let mut families = build(&nodes, directory.as_ref(), complete.then_some(&*cache));
        drop(cache);
        let mut scrape = Family::new(
            "shardctl_exporter_scrape_duration_seconds",
            Kind::Gauge,
            "How long this scrape took to read the directory and the nodes.",
        );
        scrape.push(Vec::new(), started.elapsed().as_secs_f64());
        let mut budget = Family::new(
            "shardctl_exporter_scrape_budget_seconds",
            Kind::Gauge,
            "The longest a scrape may take (--budget); what has not answered by then is reported down.",
        );
        budget.push(Vec::new(), self.budget.as_secs_f64());
        let mut over = Family::new(
            "shardctl_exporter_budget_exhausted",
            Kind::Gauge,
            "1 when a reader (the directory or a node) had not answered when the budget was spent.",
        );
        over.flag(Vec::new(), late);
        let mut journal = Family::new(
            "shardctl_exporter_journal_complete",
            Kind::Gauge,
            "1 once every finished operation of the journal has been read: the finished-operation counters and the fence histogram are left out until then.",
        );
        journal.flag(Vec::new(), complete);
        families.extend([scrape, budget, over, journal]);
        families
    }

    /// Logs a source's error when it changes (and its recovery), never the same one twice.
    fn note(&self, source: &str, error: Option<&Error>) {
        let now = error.map(|e| e.to_string());
        let mut last = self.last_errors.lock().unwrap_or_else(|p| p.into_inner());
        let before = last.insert(source.to_string(), now.clone());
        if before.as_ref() == Some(&now) {
            return;
        }
        match (&before, &now) {
            (_, Some(e)) => crate::output::log(0, &format!("exporter: {source}: {e}")),
            (Some(Some(_)), None) => {
                crate::output::log(0, &format!("exporter: {source} answers again"))
            }
            _ => {}
        }
    }
}

impl JournalCache {
    /// Takes in what a directory read found, and moves `from` up past every operation that
    /// is finished and cached.
    fn merge(&mut self, d: &DirectoryReading) {
        for (id, f) in &d.loaded {
            self.finished.insert(*id, f.clone());
        }
        let missing = d
            .listed
            .iter()
            .map(|(id, _, _)| *id)
            .filter(|id| !self.finished.contains_key(id));
        let oldest_active = d.active.iter().map(|o| o.id);
        let highest = d
            .listed
            .iter()
            .map(|(id, _, _)| *id + 1)
            .chain(d.active.iter().map(|o| o.id))
            .max()
            .unwrap_or(self.from);
        self.complete = d
            .listed
            .iter()
            .all(|(id, _, _)| self.finished.contains_key(id));
        self.from = missing
            .chain(oldest_active)
            .min()
            .unwrap_or(highest)
            .max(self.from);
    }
}

/// The one-hot samples of a state: 1 for `current`, 0 for every other of `all`.
fn one_hot<T: Copy + PartialEq>(
    family: &mut Family,
    base: &Labels,
    label: &'static str,
    all: &[T],
    current: T,
    name: impl Fn(T) -> &'static str,
) {
    for s in all {
        let mut labels = base.clone();
        labels.push((label, name(*s).to_string()));
        family.flag(labels, *s == current);
    }
}

/// A step's name as a label: the playbook's step names, `prune` for a prune's steps (named
/// after their tables), `other` for anything else, so the label's values stay few.
fn step_label(name: &str) -> &'static str {
    if name.starts_with("prune ") {
        return StepKind::Prune.as_sql();
    }
    StepKind::parse(name)
        .map(StepKind::as_sql)
        .unwrap_or("other")
}

/// The lag of an operation's channel: its forward channel on the target, or during a
/// revert window its reverse channel on the source.
fn operation_lag(
    rec: &OperationRecord,
    nodes: &BTreeMap<String, Option<NodeReading>>,
) -> Option<u64> {
    let names = NameScope::from_params(&rec.params).ok()?;
    let find = |node: &Option<String>, channel: &str| {
        let reading = nodes.get(node.as_deref()?)?.as_ref()?;
        reading
            .channels
            .iter()
            .find(|c| c.name.eq_ignore_ascii_case(channel))
            .and_then(|c| c.seconds_behind)
    };
    find(&rec.target, names.channel(rec.id).as_str())
        .or_else(|| find(&rec.source, names.reverse_channel(rec.id).as_str()))
}

/// The families of one scrape from what was read: `nodes` by inventory name (None: it
/// did not answer), the directory when it answered, the finished operations once all are
/// read.
fn build(
    nodes: &BTreeMap<String, Option<NodeReading>>,
    directory: Option<&DirectoryReading>,
    finished: Option<&JournalCache>,
) -> Vec<Family> {
    let mut f_node_up = Family::new(
        "shardctl_node_up",
        Kind::Gauge,
        "1 when the node answered the exporter's reads within the scrape budget, 0 when it did not (down, refusing, or too slow).",
    );
    let mut f_read_only = Family::new(
        "shardctl_node_read_only",
        Kind::Gauge,
        "1 when the node is read-only (@@global.read_only); absent while it does not answer.",
    );
    let mut f_node_shards = Family::new(
        "shardctl_node_shards",
        Kind::Gauge,
        "Shards the directory places on the node; absent while the directory does not answer.",
    );
    let mut f_node_bytes = Family::new(
        "shardctl_node_shard_bytes",
        Kind::Gauge,
        "Data and index bytes of the shards on the node (information_schema statistics).",
    );
    let mut f_channel_state = Family::new(
        "shardctl_channel_state",
        Kind::Gauge,
        "A replication channel on the node, one-hot over its state: running, connecting, stopped (a thread stopped without error), broken (an error recorded).",
    );
    let mut f_channel_lag = Family::new(
        "shardctl_channel_lag_seconds",
        Kind::Gauge,
        "Seconds the channel's applier is behind its source (Seconds_Behind_Master); absent when the server does not know.",
    );
    for (name, reading) in nodes {
        let node: Labels = vec![("node", name.clone())];
        f_node_up.flag(node.clone(), reading.is_some());
        let Some(r) = reading else { continue };
        f_read_only.flag(node.clone(), r.read_only);
        for c in &r.channels {
            let labels: Labels = vec![("node", name.clone()), ("channel", c.name.clone())];
            one_hot(
                &mut f_channel_state,
                &labels,
                "state",
                &ChannelState::ALL,
                ChannelState::of(c),
                ChannelState::label,
            );
            if let Some(lag) = c.seconds_behind {
                f_channel_lag.push(labels, lag as f64);
            }
        }
    }

    let mut f_dir_up = Family::new(
        "shardctl_directory_up",
        Kind::Gauge,
        "1 when the directory was read within the scrape budget (with the application account when the inventory names one), 0 when it was not.",
    );
    f_dir_up.flag(Vec::new(), directory.is_some());
    let mut f_dir_version = Family::new(
        "shardctl_directory_version",
        Kind::Gauge,
        "The directory's version, bumped by every change routers must see.",
    );
    let mut f_dir_schema = Family::new(
        "shardctl_directory_schema_version",
        Kind::Gauge,
        "The version of the directory's own tables (docs/DIRECTORY.md).",
    );
    let mut f_shard_info = Family::new(
        "shardctl_shard_info",
        Kind::Gauge,
        "Always 1: the shard, its function and the node the directory places it on.",
    );
    let mut f_shard_state = Family::new(
        "shardctl_shard_state",
        Kind::Gauge,
        "The shard's state in the directory, one-hot: online, moving, read_only, offline.",
    );
    let mut f_shard_rows = Family::new(
        "shardctl_shard_rows",
        Kind::Gauge,
        "Estimated rows of the shard's tables on its node (information_schema statistics); absent while the node does not answer.",
    );
    let mut f_shard_bytes = Family::new(
        "shardctl_shard_bytes",
        Kind::Gauge,
        "Data and index bytes of the shard's tables on its node (information_schema statistics); absent while the node does not answer.",
    );
    let mut f_shard_unpruned = Family::new(
        "shardctl_shard_unpruned",
        Kind::Gauge,
        "1 while the shard still holds rows it no longer owns (a split or merge under way, or its prune).",
    );
    let mut f_op_info = Family::new(
        "shardctl_operation_info",
        Kind::Gauge,
        "Always 1 for each unfinished operation: its kind, shard and nodes.",
    );
    let mut f_op_state = Family::new(
        "shardctl_operation_state",
        Kind::Gauge,
        "The operation's state, one-hot: running, or failed (waiting for resume or abort).",
    );
    let mut f_op_step = Family::new(
        "shardctl_operation_step",
        Kind::Gauge,
        "The step the operation stands at (the first not done), from 1; the label names it.",
    );
    let mut f_op_steps = Family::new(
        "shardctl_operation_steps",
        Kind::Gauge,
        "The operation's steps in all.",
    );
    let mut f_op_rows = Family::new(
        "shardctl_operation_progress_rows",
        Kind::Gauge,
        "Rows the operation's work has done: a copy's rows written (as its owner's heartbeat journals them), a prune's rows walked.",
    );
    let mut f_op_rows_expected = Family::new(
        "shardctl_operation_progress_expected_rows",
        Kind::Gauge,
        "Rows the copy expects in all (an estimate until it finishes).",
    );
    let mut f_op_bytes = Family::new(
        "shardctl_operation_progress_bytes",
        Kind::Gauge,
        "Bytes of row data the copy has written.",
    );
    let mut f_op_lag = Family::new(
        "shardctl_operation_lag_seconds",
        Kind::Gauge,
        "Seconds the operation's replication channel is behind (its channel on the target; in a revert window the reverse channel).",
    );
    let mut f_op_fence = Family::new(
        "shardctl_operation_fence_held_seconds",
        Kind::Gauge,
        "Seconds the write fence the operation raised has stood; 0 when none stands.",
    );
    let mut f_op_owner = Family::new(
        "shardctl_operation_owner",
        Kind::Gauge,
        "Whether a process drives the operation, one-hot: alive (heartbeat fresh), dead (its process is gone or silent too long: resume or abort it), released (nobody holds it).",
    );
    let mut f_op_heartbeat = Family::new(
        "shardctl_operation_heartbeat_age_seconds",
        Kind::Gauge,
        "Seconds since the owner's last heartbeat (every second while it lives).",
    );
    let mut f_op_paused = Family::new(
        "shardctl_operation_paused",
        Kind::Gauge,
        "1 when the operation is paused (shardctl pause, acknowledged by its owner).",
    );
    if let Some(d) = directory {
        let snap = &d.snapshot;
        f_dir_version.push(Vec::new(), snap.version as f64);
        f_dir_schema.push(Vec::new(), d.schema_version as f64);
        let mut per_node: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
        for name in nodes.keys() {
            per_node.insert(name, (0, 0));
        }
        for shard in &snap.shards {
            let function = snap
                .function_by_id(shard.func_id)
                .map(|f| f.name.clone())
                .unwrap_or_default();
            let labels: Labels = vec![("shard", shard.id.to_string()), ("function", function)];
            let mut info = labels.clone();
            info.push(("node", shard.node.clone()));
            f_shard_info.push(info, 1.0);
            one_hot(
                &mut f_shard_state,
                &labels,
                "state",
                &ShardState::ALL,
                shard.state,
                |s| s.as_sql(),
            );
            f_shard_unpruned.flag(labels.clone(), d.unpruned.contains(&shard.id));
            let size = nodes
                .get(&shard.node)
                .and_then(Option::as_ref)
                .map(|r| crate::status::schemas_size(&snap.shard_schemas(shard), &r.sizes));
            let counted = per_node.entry(&shard.node).or_insert((0, 0));
            counted.0 += 1;
            if let Some((rows, bytes)) = size {
                counted.1 += bytes;
                f_shard_rows.push(labels.clone(), rows as f64);
                f_shard_bytes.push(labels, bytes as f64);
            }
        }
        for (node, (count, bytes)) in per_node {
            f_node_shards.push(vec![("node", node.to_string())], count as f64);
            if nodes.get(node).is_some_and(Option::is_some) {
                f_node_bytes.push(vec![("node", node.to_string())], bytes as f64);
            }
        }
        for rec in &d.active {
            let labels: Labels = vec![
                ("op", rec.id.to_string()),
                ("kind", rec.kind.as_sql().to_string()),
            ];
            let mut info = labels.clone();
            info.push((
                "shard",
                rec.shard_id.map(|s| s.to_string()).unwrap_or_default(),
            ));
            info.push(("from", rec.source.clone().unwrap_or_default()));
            info.push(("to", rec.target.clone().unwrap_or_default()));
            f_op_info.push(info, 1.0);
            one_hot(
                &mut f_op_state,
                &labels,
                "state",
                &ACTIVE_STATES,
                rec.state,
                OpState::as_sql,
            );
            let current = rec
                .steps
                .iter()
                .find(|s| s.state != StepState::Done)
                .or(rec.steps.last());
            if let Some(step) = current {
                let mut with_step = labels.clone();
                with_step.push(("step", step_label(&step.name).to_string()));
                f_op_step.push(with_step, f64::from(step.step_no + 1));
            }
            f_op_steps.push(labels.clone(), rec.steps.len() as f64);
            match rec.kind {
                OpKind::Prune => {
                    if let Some(walked) = crate::prune::rows_walked(&rec.steps) {
                        f_op_rows.push(labels.clone(), walked as f64);
                    }
                }
                _ => {
                    if let Some(p) = rec.progress {
                        f_op_rows.push(labels.clone(), p.rows as f64);
                        f_op_bytes.push(labels.clone(), p.bytes as f64);
                        if let Some(expected) = p.rows_expected {
                            f_op_rows_expected.push(labels.clone(), expected as f64);
                        }
                    }
                }
            }
            if let Some(lag) = operation_lag(rec, nodes) {
                f_op_lag.push(labels.clone(), lag as f64);
            }
            f_op_fence.push(
                labels.clone(),
                rec.fence_held_millis().unwrap_or(0) as f64 / 1000.0,
            );
            let owner = rec.owner_status();
            let current = owner_label(&owner);
            one_hot(
                &mut f_op_owner,
                &labels,
                "status",
                &OWNER_LABELS,
                current,
                |s| s,
            );
            if let Some(age) = rec.heartbeat_age_secs.filter(|_| rec.owner.is_some()) {
                f_op_heartbeat.push(labels.clone(), age as f64);
            }
            f_op_paused.flag(labels, rec.paused());
        }
    }
    let mut families = vec![
        f_node_up,
        f_read_only,
        f_node_shards,
        f_node_bytes,
        f_channel_state,
        f_channel_lag,
        f_dir_up,
        f_dir_version,
        f_dir_schema,
        f_shard_info,
        f_shard_state,
        f_shard_rows,
        f_shard_bytes,
        f_shard_unpruned,
        f_op_info,
        f_op_state,
        f_op_step,
        f_op_steps,
        f_op_rows,
        f_op_rows_expected,
        f_op_bytes,
        f_op_lag,
        f_op_fence,
        f_op_owner,
        f_op_heartbeat,
        f_op_paused,
    ];
    if let Some(cache) = finished {
        families.extend(journal_families(cache));
    }
    families
}

/// The finished-operation counters and the fence histogram, every series present from
/// zero so a rate over it starts at the first scrape.
fn journal_families(cache: &JournalCache) -> [Family; 2] {
    let mut finished = Family::new(
        "shardctl_operations_finished_total",
        Kind::Counter,
        "Operations finished, by kind and outcome (done, aborted), as the journal holds them.",
    );
    for kind in OpKind::ALL {
        for outcome in OUTCOMES {
            let n = cache
                .finished
                .values()
                .filter(|f| f.kind == *kind && f.outcome == outcome)
                .count();
            finished.push(
                vec![
                    ("kind", kind.as_sql().to_string()),
                    ("outcome", outcome.as_sql().to_string()),
                ],
                n as f64,
            );
        }
    }
    let mut fences = Family::new(
        "shardctl_fence_duration_seconds",
        Kind::Histogram,
        "How long the write fence of each finished move, split or merge stood (during: cutover, or a revert's), as its procedure journaled it.",
    );
    let series = [
        (OpKind::Move, FenceDuring::Cutover),
        (OpKind::Split, FenceDuring::Cutover),
        (OpKind::Merge, FenceDuring::Cutover),
        (OpKind::Move, FenceDuring::Revert),
    ];
    for (kind, during) in series {
        let mut h = Histogram::new(&FENCE_BUCKETS);
        for f in cache.finished.values().filter(|f| f.kind == kind) {
            for (d, secs) in &f.fences {
                if *d == during {
                    h.observe(*secs);
                }
            }
        }
        fences.histograms.push((
            vec![
                ("kind", kind.as_sql().to_string()),
                ("during", during.label().to_string()),
            ],
            h,
        ));
    }
    [finished, fences]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::directory::journal::{Limits, Progress, StepRecord};
    use serde_json::json;

    fn record(id: u64, kind: OpKind, state: OpState) -> OperationRecord {
        OperationRecord {
            id,
            kind,
            shard_id: Some(1),
            source: Some("node1".into()),
            target: Some("node2".into()),
            state,
            phase: None,
            owner: None,
            epoch: 1,
            heartbeat_age_secs: None,
            stop_requested: false,
            pause_requested: false,
            paused_at_millis: None,
            limits: Limits::default(),
            progress: None,
            params: json!({"names": "0000abcd"}),
            error: None,
            created_at_millis: None,
            updated_at_millis: None,
            steps: Vec::new(),
            effects: Vec::new(),
        }
    }

    fn step(no: u32, name: &str, state: StepState) -> StepRecord {
        StepRecord {
            step_no: no,
            name: name.into(),
            state,
            inputs: serde_json::Value::Null,
            outputs: serde_json::Value::Null,
            millis: None,
        }
    }

    /// Every family is named by the conventions: the `shardctl_` prefix, a unit where it
    /// has one, `_total` on counters alone; no name twice; labels from a short list of
    /// bounded ones (never an error message, an address or a secret).
    #[test]
    fn names_and_labels_follow_the_conventions() {
        let mut rec = record(12, OpKind::Move, OpState::Running);
        rec.steps = vec![
            step(0, "preflight", StepState::Done),
            step(1, "backup", StepState::Running),
        ];
        rec.progress = Some(Progress {
            rows: 10,
            rows_expected: Some(100),
            bytes: 640,
        });
        let dir = DirectoryReading {
            schema_version: 12,
            snapshot: Snapshot::default(),
            active: vec![rec],
            unpruned: BTreeSet::new(),
            listed: Vec::new(),
            loaded: Vec::new(),
        };
        let mut nodes = BTreeMap::new();
        nodes.insert(
            "node1".to_string(),
            Some(NodeReading {
                read_only: false,
                channels: Vec::new(),
                sizes: BTreeMap::new(),
            }),
        );
        nodes.insert("node2".to_string(), None);
        let cache = JournalCache::default();
        let families = build(&nodes, Some(&dir), Some(&cache));
        const LABELS: &[&str] = &[
            "node", "channel", "state", "shard", "function", "op", "kind", "from", "to", "step",
            "status", "outcome", "during",
        ];
        let mut seen = BTreeSet::new();
        for f in &families {
            assert!(
                text::valid_name(f.name) && f.name.starts_with("shardctl_"),
                "{}",
                f.name
            );
            assert!(seen.insert(f.name), "{} twice", f.name);
            assert_eq!(
                f.kind == Kind::Counter,
                f.name.ends_with("_total"),
                "{}",
                f.name
            );
            assert!(!f.help.is_empty() && !f.help.contains('\n'), "{}", f.name);
            let labels = f
                .samples
                .iter()
                .map(|(l, _)| l)
                .chain(f.histograms.iter().map(|(l, _)| l));
            for l in labels {
                for (name, _) in l {
                    assert!(LABELS.contains(name), "{}: label {name}", f.name);
                }
            }
        }
        for unit in ["_seconds", "_bytes", "_rows"] {
            assert!(families.iter().any(|f| f.name.ends_with(unit)), "{unit}");
        }
        let text = text::render(&families);
        assert!(
            text.contains("shardctl_node_up{node=\"node2\"} 0\n"),
            "{text}"
        );
        assert!(
            text.contains("shardctl_operation_step{op=\"12\",kind=\"move\",step=\"backup\"} 2\n"),
            "{text}"
        );
        assert!(
            text.contains("shardctl_operation_progress_rows{op=\"12\",kind=\"move\"} 10\n"),
            "{text}"
        );
        assert!(
            text.contains(
                "shardctl_operation_owner{op=\"12\",kind=\"move\",status=\"released\"} 1\n"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "shardctl_operations_finished_total{kind=\"merge\",outcome=\"aborted\"} 0\n"
            ),
            "{text}"
        );
        assert!(
            !text.contains("shardctl_node_read_only{node=\"node2\""),
            "{text}"
        );
    }

    #[test]
    fn channel_states_and_step_labels() {
        let mut c = ChannelStatus {
            name: "shardctl_0000abcd_op3".into(),
            source: "127.0.0.1:3306".into(),
            io_running: "Yes".into(),
            sql_running: true,
            seconds_behind: Some(0),
            last_io_error: String::new(),
            last_sql_error: String::new(),
            executed: None,
            received: None,
            do_db: String::new(),
            wild_do_table: String::new(),
            rewrite_db: String::new(),
            until_condition: String::new(),
            until: None,
            source_server_id: None,
        };
        assert_eq!(ChannelState::of(&c), ChannelState::Running);
        c.io_running = "Connecting".into();
        assert_eq!(ChannelState::of(&c), ChannelState::Connecting);
        c.sql_running = false;
        assert_eq!(ChannelState::of(&c), ChannelState::Stopped);
        c.last_sql_error = "Duplicate entry".into();
        assert_eq!(ChannelState::of(&c), ChannelState::Broken);
        assert_eq!(step_label("backup"), "backup");
        assert_eq!(step_label("prune app_1.items"), "prune");
        assert_eq!(step_label("something new"), "other");
    }

    /// The cache moves its start past the finished operations it holds, never past one
    /// still running or one the budget left unread, and says when it covers the journal.
    #[test]
    fn the_journal_cache_starts_the_next_listing_where_it_must() {
        let finished = |kind| Finished {
            kind,
            outcome: OpState::Done,
            fences: Vec::new(),
        };
        let reading = |active: Vec<u64>, listed: Vec<u64>, loaded: Vec<u64>| DirectoryReading {
            schema_version: 12,
            snapshot: Snapshot::default(),
            active: active
                .into_iter()
                .map(|id| record(id, OpKind::Move, OpState::Running))
                .collect(),
            unpruned: BTreeSet::new(),
            listed: listed
                .iter()
                .map(|id| (*id, OpKind::Move, OpState::Done))
                .collect(),
            loaded: loaded
                .into_iter()
                .map(|id| (id, finished(OpKind::Move)))
                .collect(),
        };
        let mut cache = JournalCache::default();
        cache.merge(&reading(vec![4], vec![1, 2, 3, 5], vec![1, 2]));
        assert_eq!((cache.from, cache.complete), (3, false));
        cache.merge(&reading(vec![4], vec![3, 5], vec![3, 5]));
        assert_eq!((cache.from, cache.complete), (4, true));
        cache.merge(&reading(vec![], vec![4, 5, 6], vec![4, 6]));
        assert_eq!((cache.from, cache.complete), (7, true));
        cache.merge(&reading(vec![], vec![], vec![]));
        assert_eq!((cache.from, cache.complete), (7, true));
        let fams = journal_families(&cache);
        let text = text::render(&fams);
        assert!(
            text.contains("shardctl_operations_finished_total{kind=\"move\",outcome=\"done\"} 6\n"),
            "{text}"
        );
        assert!(
            text.contains(
                "shardctl_fence_duration_seconds_count{kind=\"move\",during=\"cutover\"} 0\n"
            ),
            "{text}"
        );
    }
}
