//! The chapter's second reporting approach: a reporting server, a node of the inventory
//! holding no shard, that replicates every shard's schemas, one filtered channel per
//! source node (`shardctl_report_<node>`), kept exact across moves, splits and merges.
//!
//! **Adding schemas to a channel** ([`join`]) is the one technique everything uses: a
//! consistent copy of the schemas from the source node (the native copy, which gives the
//! binary-log position `P` it matches), then the channel and the copy brought to one
//! position: the channel is stopped at `Q`; when `Q < P` it runs on (its filter does not
//! carry the new schemas yet) until `P`; when `Q > P` it is re-pointed at `P` with a filter
//! of the new schemas only and runs until `Q` (MariaDB refuses a second channel to the same
//! source, so no separate catch-up channel). Then its filter carries both and it starts.
//! After a move the new node's position at the flip (`T`, read by the mover under the
//! fence) replaces the copy: the reporting server's copy is already exact at the flip, so
//! only the new node's events from `T` are missing.
//!
//! **Removing schemas from a channel** ([`narrow`]): the channel first applies everything
//! its source has logged so far (after a flip that includes the final position under the
//! fence), then its filter loses the schemas. Removals run before additions, so the old
//! node's channel has applied its last events of a moved shard before the new node's first
//! reach the reporting server.
//!
//! Filters are explicit lists (`employees\_3.%`, one pattern per shard schema), not
//! wildcards over a logical schema: a moved shard's old copy is dropped unlogged, but a
//! wildcard would keep a channel open to any later event of that name on the old node, and
//! a shard moved back would arrive twice. A same-node split creates the new schema with
//! logged statements, which a channel whose list does not name it skips: the split's new
//! schema is then copied and joined like any other addition.
//!
//! **Journal**: the directory's `reporting_sources` holds, per (reporting node, source
//! node), the schemas the channel carries and the change under way (`copying` a list of
//! schemas, then `joining` them from a recorded position), each written before its effect.
//! Running `attach`, `sync` or [`follow`] again finishes what a crash left: a copy is
//! dropped and made again, a join reads the channel's real filter and position first.

use crate::config::Inventory;
use crate::copy::{self, SchemaPair};
use crate::directory::{Directory, ShardState, Snapshot};
use crate::error::{Error, Result};
use crate::ident::{Channel, Ident};
use crate::output::log;
use crate::server::replication::ChannelStatus;
use crate::server::reporting as st;
use crate::server::{
    statements, BinlogPosition, ConnectSpec, Filters, Server, SourceSpec, StartAt,
};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

/// The channel's name prefix on a reporting server.
pub const CHANNEL_PREFIX: &str = "shardctl_report_";

/// The reporting server's fault points (`SHARDCTL_FAULT=crash@reporting:<point>`): after a
/// copy is journaled `joining`, after the channel's stop position is journaled, after the
/// channel is re-pointed at the copy's position with the new schemas' filter, after its
/// filter is widened (before it starts).
pub const FAULT_POINTS: [&str; 4] = ["copied", "stopped", "repointed", "widened"];

/// How long a channel may take to reach a position (a narrowing, a catch-up).
pub const WAIT_TIMEOUT: Duration = Duration::from_secs(600);

/// The regular channel from `source` on a reporting server: `shardctl_report_<node>`,
/// characters a channel name cannot hold replaced by `_`.
pub fn channel_for(source: &str) -> Result<Channel> {
    let name: String = format!("{CHANNEL_PREFIX}{source}")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    Channel::new(&name)
}

/// The state of one source's change under way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Pending {
    /// Nothing.
    None,
    /// The pending schemas are being copied onto the reporting node.
    Copying,
    /// They are copied (consistent at the recorded position) and being joined into the
    /// channel.
    Joining,
}

impl Pending {
    fn as_sql(self) -> &'static str {
        match self {
            Pending::None => "none",
            Pending::Copying => "copying",
            Pending::Joining => "joining",
        }
    }

    fn parse(s: &str) -> Result<Pending> {
        match s {
            "none" => Ok(Pending::None),
            "copying" => Ok(Pending::Copying),
            "joining" => Ok(Pending::Joining),
            other => Err(Error::Internal(format!(
                "reporting_sources holds an unknown state {other:?}"
            ))),
        }
    }
}

/// One source node of a reporting server, as the directory records it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Source {
    /// The source node.
    pub node: String,
    /// Its channel on the reporting server.
    pub channel: Channel,
    /// The schemas the channel carries.
    pub schemas: BTreeSet<String>,
    /// Schemas being added.
    pub pending: BTreeSet<String>,
    /// How far their addition got.
    pub pending_state: Pending,
    /// The position the pending copy is consistent with.
    pub pending_at: Option<BinlogPosition>,
    /// Where the channel stood when the join stopped it: the position the new schemas
    /// are brought to before the channel carries them.
    pub until: Option<BinlogPosition>,
}

/// Every shard schema per node, as the directory places them now (offline shards, which
/// are not serving yet, left out).
pub fn placement(snap: &Snapshot) -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for shard in snap
        .shards
        .iter()
        .filter(|s| s.state != ShardState::Offline)
    {
        out.entry(shard.node.clone())
            .or_default()
            .extend(snap.shard_schemas(shard));
    }
    out
}

fn list_json(set: &BTreeSet<String>) -> String {
    serde_json::to_string(set).unwrap_or_else(|_| "[]".into())
}

fn parse_list(text: &str) -> Result<BTreeSet<String>> {
    serde_json::from_str(text)
        .map_err(|e| Error::Internal(format!("reporting_sources holds a bad list {text:?}: {e}")))
}

fn idents(set: &BTreeSet<String>) -> Result<Vec<Ident>> {
    set.iter().map(|s| Ident::new("schema", s)).collect()
}

/// The reporting nodes the directory records.
pub fn attached(dir: &mut Directory) -> Result<Vec<String>> {
    let d = dir.schema().clone();
    let rows: Vec<String> = dir
        .server()
        .rows(&st::reporting_nodes(&d))?
        .into_iter()
        .filter_map(|r| r.get::<String, _>(0))
        .collect();
    Ok(rows)
}

/// A reporting node's sources as recorded.
pub fn sources(dir: &mut Directory, node: &str) -> Result<Vec<Source>> {
    let d = dir.schema().clone();
    type Row = (
        String,
        String,
        String,
        String,
        String,
        Option<String>,
        Option<u64>,
        Option<String>,
        Option<u64>,
    );
    let rows = dir.server().rows(&st::reporting_sources(&d, node))?;
    rows.into_iter()
        .map(|r| {
            let (source, channel, schemas, pending, state, file, pos, ufile, upos): Row =
                mysql::from_row_opt(r).map_err(|e| crate::server::row_error(node, e))?;
            Ok(Source {
                node: source,
                channel: Channel::new(&channel)?,
                schemas: parse_list(&schemas)?,
                pending: parse_list(&pending)?,
                pending_state: Pending::parse(&state)?,
                pending_at: file
                    .zip(pos)
                    .map(|(file, pos)| BinlogPosition { file, pos }),
                until: ufile
                    .zip(upos)
                    .map(|(file, pos)| BinlogPosition { file, pos }),
            })
        })
        .collect()
}

fn record(dir: &mut Directory, reporting: &str, s: &Source) -> Result<()> {
    let d = dir.schema().clone();
    dir.server().exec(&st::upsert_reporting_source(
        &d,
        reporting,
        &s.node,
        &s.channel,
        &list_json(&s.schemas),
        &list_json(&s.pending),
        s.pending_state.as_sql(),
        s.pending_at.as_ref(),
        s.until.as_ref(),
    ))
}

/// Why a flavor cannot be a reporting server, if it cannot: it needs several named
/// channels, each with its own filters changed without a restart.
pub fn flavor_refusal(flavor: crate::server::Flavor) -> Option<String> {
    (!flavor.has_channel_filters()).then(|| {
        format!("{flavor} cannot filter each replication channel on its own (MariaDB 10.0+ or MySQL 8.0+ can): it cannot be a reporting server")
    })
}

/// What `attach` would do.
#[derive(Debug, Clone, Serialize)]
pub struct AttachPlan {
    /// The reporting node.
    pub node: String,
    /// Per source node: its channel and the schemas copied and replicated.
    pub sources: Vec<SourcePlan>,
}

/// One source of an [`AttachPlan`].
#[derive(Debug, Clone, Serialize)]
pub struct SourcePlan {
    /// The source node.
    #[serde(rename = "source")]
    pub node: String,
    /// The channel.
    pub channel: Channel,
    /// The schemas.
    pub schemas: Vec<String>,
}

fn connect(inv: &Inventory, node: &str) -> Result<Server> {
    Server::connect_node(inv, node)
}

/// Checks everything `attach` needs before anything changes; every refusal is one line
/// naming the culprit.
pub fn check_attach(inv: &Inventory, dir: &mut Directory, node: &str) -> Result<AttachPlan> {
    inv.node(node)?;
    let snap = dir.load()?;
    let held: Vec<String> = snap
        .shards
        .iter()
        .filter(|s| s.node == node)
        .map(|s| s.id.to_string())
        .collect();
    if !held.is_empty() {
        return Err(Error::Refused(format!(
            "node {node} holds shard(s) {}: a reporting server holds none",
            held.join(", ")
        )));
    }
    if attached(dir)?.iter().any(|n| n == node) {
        return Err(Error::Refused(format!(
            "node {node} is already attached as a reporting server (`shardctl reporting status`)"
        )));
    }
    let mut r = connect(inv, node)?;
    if let Some(why) = flavor_refusal(r.flavor()) {
        return Err(Error::Refused(format!("node {node}: {why}")));
    }
    let rs = r.settings()?;
    let place = placement(&snap);
    if place.is_empty() {
        return Err(Error::Refused(
            "the directory places no shard on any node: nothing to report on".into(),
        ));
    }
    let mut plan = AttachPlan {
        node: node.to_string(),
        sources: Vec::new(),
    };
    let mut names = BTreeSet::new();
    for (source, schemas) in &place {
        let mut s = connect(inv, source)?;
        let ss = s.settings()?;
        if !ss.log_bin {
            return Err(Error::Refused(format!(
                "source node {source} has no binary log (log_bin is off): a reporting channel cannot read it"
            )));
        }
        if !ss.binlog_format.eq_ignore_ascii_case("ROW") {
            return Err(Error::Refused(format!(
                "source node {source} has binlog_format {}: the reporting channels' schema filters need ROW (a statement's rows could be filtered by its default schema)",
                ss.binlog_format
            )));
        }
        if ss.server_id == rs.server_id {
            return Err(Error::Refused(format!(
                "source node {source} and {node} share server_id {}: a channel would skip every event",
                rs.server_id
            )));
        }
        if let (Some(src), Some(tgt)) = (ss.gtid, rs.gtid) {
            if let Some(why) = tgt.conflict_with_source(&src) {
                return Err(Error::Refused(format!("{source} and {node}: {why}")));
            }
        }
        for schema in schemas {
            if r.schema_exists(&Ident::new("schema", schema)?)? {
                return Err(Error::Refused(format!(
                    "node {node} already has a schema {schema}: drop it, or attach another node"
                )));
            }
        }
        let channel = channel_for(source)?;
        if !names.insert(channel.clone()) {
            return Err(Error::Usage(format!(
                "two source nodes map to the channel name {channel}: rename one of them"
            )));
        }
        plan.sources.push(SourcePlan {
            node: source.clone(),
            channel,
            schemas: schemas.iter().cloned().collect(),
        });
    }
    Ok(plan)
}

/// Runs `f` holding the reporting lock, a row of the directory's `directory_locks` (so it
/// holds on a Galera cluster, whose members do not share `GET_LOCK`, and through a
/// reconnection); waits for another holder at most [`WAIT_TIMEOUT`].
fn locked<T>(
    inv: &Inventory,
    dir: &mut Directory,
    f: impl FnOnce(&mut Directory) -> Result<T>,
) -> Result<T> {
    let _lock = crate::directory::owner::NamedLock::take(inv, REPORTING_LOCK, WAIT_TIMEOUT)?;
    f(dir)
}

/// The name of the lock that serialises changes to reporting servers: one process at a
/// time changes reporting channels (concurrent moves of `rebalance apply` each end in a
/// sync).
pub const REPORTING_LOCK: &str = "reporting";

/// `reporting attach`: records the node and its sources (each `copying` every schema of
/// its source node), then copies and joins them. Run again after a crash, it finishes.
pub fn attach(inv: &Inventory, node: &str) -> Result<Vec<Source>> {
    let mut dir = Directory::open(inv)?;
    locked(inv, &mut dir, |dir| attach_locked(inv, dir, node))
}

fn attach_locked(inv: &Inventory, dir: &mut Directory, node: &str) -> Result<Vec<Source>> {
    let plan = check_attach(inv, dir, node)?;
    let d = dir.schema().clone();
    dir.server().exec(&st::insert_reporting_node(&d, node))?;
    for p in &plan.sources {
        record(
            dir,
            node,
            &Source {
                node: p.node.clone(),
                channel: p.channel.clone(),
                schemas: BTreeSet::new(),
                pending: p.schemas.iter().cloned().collect(),
                pending_state: Pending::Copying,
                pending_at: None,
                until: None,
            },
        )?;
    }
    sync_node(inv, dir, node, None)
}

/// The source of a replication channel on the reporting server.
fn source_spec(inv: &Inventory, source: &str, start: &BinlogPosition) -> Result<SourceSpec> {
    let creds = inv.replication_credentials()?;
    let src = inv.node(source)?;
    Ok(SourceSpec {
        host: src.host().to_string(),
        port: src.port(),
        user: creds.user,
        password: creds.password.expose().to_string(),
        start: StartAt::Position(start.clone()),
        connect_retry_secs: 1,
        tls: src.channel_tls()?,
    })
}

fn filters_for(schemas: &BTreeSet<String>) -> Result<Filters> {
    Ok(Filters {
        wild_do_schemas: idents(schemas)?,
        ..Default::default()
    })
}

/// Waits until `channel` has executed the source's events up to `pos`, reading its status
/// (the applier may stop there by itself: an UNTIL condition). Fails on a channel error.
fn wait_executed(
    r: &mut Server,
    channel: &Channel,
    pos: &BinlogPosition,
    timeout: Duration,
) -> Result<()> {
    let deadline = Instant::now() + timeout;
    loop {
        crate::signal::check()?;
        let s = status(r, channel)?;
        if let Some(e) = s.last_error() {
            return Err(Error::server(r.name(), format!("channel {channel}: {e}")));
        }
        if s.executed.as_ref().is_some_and(|e| e >= pos) {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(Error::Timeout(format!(
                "waited {}s for channel {channel} on {} to reach {pos} (it stands at {})",
                timeout.as_secs(),
                r.name(),
                s.executed
                    .map(|p| p.to_string())
                    .unwrap_or_else(|| "nothing".into())
            )));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn status(r: &mut Server, channel: &Channel) -> Result<ChannelStatus> {
    r.channel_status(channel)?
        .ok_or_else(|| Error::server(r.name(), format!("channel {channel} does not exist")))
}

/// The schemas a channel's filter carries now, read from the server.
fn filter_now(s: &ChannelStatus) -> BTreeSet<String> {
    s.wild_do_table
        .split(',')
        .filter_map(|p| p.trim().strip_suffix(".%"))
        .map(|p| p.replace("\\_", "_"))
        .filter(|p| !p.is_empty())
        .collect()
}

/// Waits until both threads of `channel` run (the receiver connected), failing at once
/// on a channel error: a started channel is confirmed, not assumed.
fn wait_running(r: &mut Server, channel: &Channel) -> Result<()> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let s = status(r, channel)?;
        if let Some(e) = s.last_error() {
            return Err(Error::server(r.name(), format!("channel {channel}: {e}")));
        }
        if s.healthy() {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(Error::Timeout(format!(
                "channel {channel} on {} did not connect to its source within 30s (receiver: {})",
                r.name(),
                s.io_running
            )));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Adds `source.pending` (consistent on the reporting server at the source's `at`) to the
/// channel that carries `source.schemas`; creates the channel when there is none.
///
/// MariaDB allows one channel per source server, so the regular channel itself brings the
/// new schemas to where it stood: stopped at `Q` (journaled first), when `Q > at` it is
/// re-pointed at `at` with a filter of the new schemas only and runs until `Q`; when
/// `Q < at` it runs on with its old filter until `at`. Then its filter carries both and it
/// starts. Run again after a crash, the channel's real filter says how far it got: the
/// old list (not re-pointed yet, or still running on to `at`), the new schemas only (the
/// rewind under way: it continues from where it stopped), or both (done).
fn join(
    inv: &Inventory,
    dir: &mut Directory,
    r: &mut Server,
    reporting: &str,
    source: &mut Source,
    at: &BinlogPosition,
) -> Result<()> {
    let ch = source.channel.clone();
    let add = source.pending.clone();
    let all: BTreeSet<String> = source.schemas.union(&add).cloned().collect();
    let Some(now) = r.channel_status(&ch)? else {
        r.change_source(&ch, &source_spec(inv, &source.node, at)?)?;
        r.set_filters(&ch, &filters_for(&all)?)?;
        r.start_channel(&ch)?;
        wait_running(r, &ch)?;
        log(1, &format!("{}: channel {ch} created at {at}", r.name()));
        return Ok(());
    };
    let filter = filter_now(&now);
    if add.is_subset(&filter) && source.schemas.is_subset(&filter) {
        // A crash after the widening: only the restart may be missing.
        if !now.sql_running || now.io_running == "No" {
            r.start_channel(&ch)?;
        }
        return wait_running(r, &ch);
    }
    r.stop_channel(&ch)?;
    let q = match source.until.clone() {
        Some(q) => q,
        None => {
            let q = status(r, &ch)?
                .executed
                .ok_or_else(|| Error::server(r.name(), format!("channel {ch} has no position")))?;
            source.until = Some(q.clone());
            record(dir, reporting, source)?;
            crate::fault::point("reporting:stopped");
            q
        }
    };
    let run_until = |r: &mut Server, pos: &BinlogPosition| -> Result<()> {
        let executed = status(r, &ch)?.executed;
        if executed.as_ref().is_none_or(|e| e < pos) {
            let until = r.dialect().start_channel_until(&ch, pos)?;
            r.exec(&until)?;
            wait_executed(r, &ch, pos, WAIT_TIMEOUT)?;
            r.stop_channel(&ch)?;
        }
        Ok(())
    };
    if q < *at {
        // Behind the copy: on to its position with the old filter (the new schemas are
        // not touched).
        run_until(r, at)?;
    } else if q > *at {
        if filter.is_disjoint(&add) {
            r.change_source(&ch, &source_spec(inv, &source.node, at)?)?;
            r.set_filters(&ch, &filters_for(&add)?)?;
            crate::fault::point("reporting:repointed");
        }
        run_until(r, &q)?;
    }
    r.set_filters(&ch, &filters_for(&all)?)?;
    crate::fault::point("reporting:widened");
    r.start_channel(&ch)?;
    wait_running(r, &ch)?;
    log(
        1,
        &format!(
            "{}: channel {ch} carries {} more schema(s) from {}",
            r.name(),
            add.len(),
            q.max(at.clone())
        ),
    );
    Ok(())
}

/// Takes `remove` out of a channel once it has applied everything its source logged so
/// far; the channel goes when it carries nothing more.
fn narrow(
    inv: &Inventory,
    r: &mut Server,
    source: &Source,
    remove: &BTreeSet<String>,
) -> Result<()> {
    let ch = &source.channel;
    let Some(now) = r.channel_status(ch)? else {
        return Ok(());
    };
    let keep: BTreeSet<String> = source.schemas.difference(remove).cloned().collect();
    if filter_now(&now).is_disjoint(remove) && !keep.is_empty() {
        return Ok(());
    }
    let pos = connect(inv, &source.node)?.coordinates()?.position;
    if !now.sql_running || now.io_running == "No" {
        r.start_channel(ch)?;
    }
    wait_executed(r, ch, &pos, WAIT_TIMEOUT)?;
    if keep.is_empty() {
        r.reset_channel(ch)?;
        Ok(())
    } else {
        r.set_filters(ch, &filters_for(&keep)?)?;
        wait_running(r, ch)
    }
}

/// A hint from a finished operation: schemas to copy again whatever the placement says (a
/// move reverted in its window: the old copy took the window's writes through a reverse
/// channel, which its node's binary log may not hold). Where a moved schema joins its new
/// node's channel comes from its own record in `reporting_follows` (see [`record_flip`]),
/// never from the operation that happens to run the sync.
#[derive(Debug, Clone, Default)]
pub struct FlipHint {
    /// Schemas to copy again.
    pub recopy: BTreeSet<String>,
}

/// A move's flip that a reporting node has not followed yet: its copy of `schema`, exact
/// at the flip once `from`'s channel has applied all it logged, needs `to`'s events from
/// `at`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PendingFollow {
    /// The moved schema.
    pub schema: String,
    /// The node it left.
    pub from: String,
    /// The node it arrived on.
    pub to: String,
    /// `to`'s binary-log position at the flip.
    #[serde(rename = "position")]
    pub at: BinlogPosition,
    /// The move.
    pub operation: u64,
    /// Why the last attempt to follow failed; None when none was made yet (the move still
    /// in its revert window, or running).
    pub failure: Option<String>,
    /// When the flip recorded it (RFC 3339 UTC).
    pub recorded_at: String,
}

/// Called by a move right after its flip: every attached reporting node must join
/// `schemas` from `to`'s position `at` (see `reporting_follows` in the directory schema).
/// Recorded per schema, not per operation: whichever sync runs next (this move's own
/// follow, another operation's, `reporting sync`) joins each schema at its own position.
pub fn record_flip(
    dir: &mut Directory,
    from: &str,
    to: &str,
    schemas: &[String],
    at: &BinlogPosition,
    op: u64,
) -> Result<()> {
    let d = dir.schema().clone();
    for schema in schemas {
        dir.server()
            .exec(&st::record_follow(&d, schema, from, to, at, op))?;
    }
    Ok(())
}

/// A reporting node's pending follows, by schema.
pub fn follows(dir: &mut Directory, node: &str) -> Result<BTreeMap<String, PendingFollow>> {
    let d = dir.schema().clone();
    type Row = (
        String,
        String,
        String,
        String,
        u64,
        u64,
        Option<String>,
        i64,
    );
    dir.server()
        .rows(&st::reporting_follows(&d, node))?
        .into_iter()
        .map(|r| {
            let (schema, from, to, file, pos, operation, failure, recorded_at): Row =
                mysql::from_row_opt(r).map_err(|e| crate::server::row_error(node, e))?;
            Ok((
                schema.clone(),
                PendingFollow {
                    schema,
                    from,
                    to,
                    at: BinlogPosition { file, pos },
                    operation,
                    failure,
                    recorded_at: crate::clock::rfc3339_millis(recorded_at),
                },
            ))
        })
        .collect()
}

/// Brings every reporting node in line with the directory (see the module's comment). A
/// node whose sync fails keeps its pending follows, marked with the failure (shown by
/// `reporting status`, retried by the next sync).
pub fn sync(inv: &Inventory, hint: Option<&FlipHint>) -> Result<BTreeMap<String, Vec<Source>>> {
    let mut dir = Directory::open(inv)?;
    if attached(&mut dir)?.is_empty() {
        return Ok(BTreeMap::new());
    }
    let result = locked(inv, &mut dir, |dir| {
        let mut out = BTreeMap::new();
        for node in attached(dir)? {
            match sync_node(inv, dir, &node, hint) {
                Ok(s) => {
                    out.insert(node, s);
                }
                Err(e) => {
                    mark_failed(dir, &node, &e);
                    return Err(e);
                }
            }
        }
        Ok(out)
    });
    if let Err(e) = &result {
        // The lock not taken, or the directory lost mid-way: every node's follows wait.
        if matches!(
            e,
            Error::Timeout(_) | Error::Interrupted | Error::InterruptedAt(_)
        ) {
            for node in attached(&mut dir).unwrap_or_default() {
                mark_failed(&mut dir, &node, e);
            }
        }
    }
    result
}

/// Records why `node`'s pending follows were not done (best effort: the error itself is
/// what the caller reports).
fn mark_failed(dir: &mut Directory, node: &str, e: &Error) {
    let d = dir.schema().clone();
    let _ = dir
        .server()
        .exec(&st::fail_reporting_follows(&d, node, &e.to_string()));
}

/// Called once at the end of a successful move, split or merge (after its revert window,
/// when it has one): follows the new placement on every reporting server. It never fails
/// the operation (done by then): a failure is logged with the command that finishes the
/// work, and the moved schemas' follows stay recorded (with the failure) until a sync
/// joins them at their flip position. `reverted`: the operation was reverted in its
/// window, so the copies that took the window's writes are copied again.
pub fn follow(inv: &Inventory, _target: &str, reverted: bool, pairs: &[SchemaPair]) {
    let hint = FlipHint {
        recopy: if reverted {
            pairs.iter().map(|p| p.from.to_string()).collect()
        } else {
            BTreeSet::new()
        },
    };
    if let Err(e) = sync(inv, Some(&hint)) {
        log(
            0,
            &format!("the reporting server did not follow the operation ({e}): run `shardctl reporting sync` (`shardctl reporting status` shows what waits)"),
        );
    }
}

fn sync_node(
    inv: &Inventory,
    dir: &mut Directory,
    node: &str,
    hint: Option<&FlipHint>,
) -> Result<Vec<Source>> {
    if dir.load()?.shards.iter().any(|s| s.node == node) {
        return Err(Error::Refused(format!(
            "the directory places shards on the reporting node {node} itself: move them away, or `shardctl reporting detach {node}`"
        )));
    }
    let mut r = connect(inv, node)?;
    let place_now = placement(&dir.load()?);
    let placed_on: BTreeMap<&String, &String> = place_now
        .iter()
        .flat_map(|(n, schemas)| schemas.iter().map(move |x| (x, n)))
        .collect();
    let pending_follows = follows(dir, node)?;
    let mut recopy = hint.map(|h| h.recopy.clone()).unwrap_or_default();
    // A follow whose schema is placed elsewhere than where its flip took it: the directory
    // was pointed back without a move's flip (a revert in the window), and the copy that
    // took the window's writes may hold events its node never logged.
    for f in pending_follows.values() {
        if placed_on.get(&f.schema).is_some_and(|n| **n != f.to) {
            recopy.insert(f.schema.clone());
        }
    }
    let mut recorded = sources(dir, node)?;
    let before: BTreeSet<String> = recorded
        .iter()
        .flat_map(|s| s.schemas.iter().chain(&s.pending).cloned())
        .collect();
    // What a crash left under way is finished first.
    for s in recorded.iter_mut() {
        add_pending(inv, dir, &mut r, node, s)?;
    }
    // Which channel carried each schema before this sync changed anything: a moved
    // schema's copy is exact at its flip only once its old node's channel has applied all
    // that node logged (the removals below make sure of it).
    let carried_by: BTreeMap<String, String> = recorded
        .iter()
        .flat_map(|s| s.schemas.iter().map(|x| (x.clone(), s.node.clone())))
        .collect();
    let place = placement(&dir.load()?);
    // Removals first: an old node's channel applies its last events of a shard before the
    // new node's first arrive.
    for s in recorded.iter_mut() {
        let want = place.get(&s.node).cloned().unwrap_or_default();
        let remove: BTreeSet<String> = s
            .schemas
            .iter()
            .filter(|x| !want.contains(*x) || recopy.contains(*x))
            .cloned()
            .collect();
        if remove.is_empty() {
            continue;
        }
        narrow(inv, &mut r, s, &remove)?;
        s.schemas.retain(|x| !remove.contains(x));
        let d = dir.schema().clone();
        if s.schemas.is_empty() {
            dir.server()
                .exec(&st::delete_reporting_source(&d, node, &s.node))?;
        } else {
            record(dir, node, s)?;
        }
    }
    recorded.retain(|s| !s.schemas.is_empty());
    for (source, want) in &place {
        let i = match recorded.iter().position(|s| &s.node == source) {
            Some(i) => i,
            None => {
                recorded.push(Source {
                    node: source.clone(),
                    channel: channel_for(source)?,
                    schemas: BTreeSet::new(),
                    pending: BTreeSet::new(),
                    pending_state: Pending::None,
                    pending_at: None,
                    until: None,
                });
                recorded.len() - 1
            }
        };
        let s = &mut recorded[i];
        let add: BTreeSet<String> = want.difference(&s.schemas).cloned().collect();
        if add.is_empty() {
            continue;
        }
        // A moved schema joins at its own flip's position when the reporting server's copy
        // is exact there: its flip's old node's channel carried it until this sync. Every
        // other schema is copied afresh. One join per position, earliest first.
        let mut at_flip: BTreeMap<BinlogPosition, BTreeSet<String>> = BTreeMap::new();
        let mut fresh = BTreeSet::new();
        for schema in &add {
            let exact = match pending_follows.get(schema) {
                Some(f)
                    if &f.to == source
                        && carried_by.get(schema) == Some(&f.from)
                        && !recopy.contains(schema)
                        && r.schema_exists(&Ident::new("schema", schema)?)? =>
                {
                    Some(f)
                }
                _ => None,
            };
            match exact {
                Some(f) => {
                    log(
                        if f.failure.is_some() { 0 } else { 1 },
                        &format!(
                            "{node}: {schema} joins from operation {}'s flip onto {source} at {}{}",
                            f.operation,
                            f.at,
                            f.failure
                                .as_deref()
                                .map(|w| format!(" (its last follow failed: {w})"))
                                .unwrap_or_default()
                        ),
                    );
                    at_flip
                        .entry(f.at.clone())
                        .or_default()
                        .insert(schema.clone());
                }
                None => {
                    fresh.insert(schema.clone());
                }
            }
        }
        let batches = at_flip
            .into_iter()
            .map(|(at, b)| (Some(at), b))
            .chain((!fresh.is_empty()).then_some((None, fresh)));
        for (at, batch) in batches {
            s.pending = batch;
            s.pending_state = if at.is_some() {
                Pending::Joining
            } else {
                Pending::Copying
            };
            s.pending_at = at;
            record(dir, node, s)?;
            add_pending(inv, dir, &mut r, node, s)?;
        }
    }
    // Schemas no node holds any more (a merge retired their shard).
    let now: BTreeSet<String> = recorded
        .iter()
        .flat_map(|s| s.schemas.iter().cloned())
        .collect();
    let gone: Vec<Ident> = before
        .difference(&now)
        .map(|s| Ident::new("schema", s))
        .collect::<Result<_>>()?;
    if !gone.is_empty() {
        let drops: Vec<_> = gone.iter().map(statements::drop_schema_if_exists).collect();
        r.exec_unlogged(&drops)?;
    }
    // A follow is done once the channel of the node the directory places its schema on
    // carries it (joined at its flip, or copied afresh); a schema no node holds any more
    // has nothing left to follow.
    let d = dir.schema().clone();
    for f in pending_follows.values() {
        let placed = place.iter().find(|(_, xs)| xs.contains(&f.schema));
        let done = match placed {
            Some((n, _)) => recorded
                .iter()
                .any(|s| &s.node == n && s.schemas.contains(&f.schema)),
            None => !now.contains(&f.schema),
        };
        if done {
            dir.server()
                .exec(&st::delete_reporting_follow(&d, node, &f.schema))?;
        }
    }
    sources(dir, node)
}

/// Finishes a source's pending addition: the copy (dropped and made again if a crash cut
/// it), then the join.
fn add_pending(
    inv: &Inventory,
    dir: &mut Directory,
    r: &mut Server,
    node: &str,
    s: &mut Source,
) -> Result<()> {
    if s.pending_state == Pending::Copying {
        let schemas = idents(&s.pending)?;
        let drops: Vec<_> = schemas
            .iter()
            .map(statements::drop_schema_if_exists)
            .collect();
        r.exec_unlogged(&drops)?;
        let pairs: Vec<SchemaPair> = schemas
            .iter()
            .map(|x| SchemaPair {
                from: x.clone(),
                to: x.clone(),
            })
            .collect();
        let source = ConnectSpec::for_node(inv, inv.node(&s.node)?)?;
        let target = ConnectSpec::for_node(inv, inv.node(node)?)?;
        let report = copy::native::copy(
            &source,
            &target,
            &pairs,
            copy::native::NativeOptions::default(),
            &copy::Progress::default(),
        )?;
        let at = report
            .coordinates
            .ok_or_else(|| Error::Internal("the native copy returned no coordinates".into()))?
            .position;
        log(
            1,
            &format!(
                "{node}: {} row(s) of {} schema(s) copied from {} at {at}",
                report.rows,
                pairs.len(),
                s.node
            ),
        );
        s.pending_state = Pending::Joining;
        s.pending_at = Some(at);
        record(dir, node, s)?;
        crate::fault::point("reporting:copied");
    }
    if s.pending_state == Pending::Joining {
        let at = s.pending_at.clone().ok_or_else(|| {
            Error::Internal(format!(
                "reporting source {}: joining without a position",
                s.node
            ))
        })?;
        join(inv, dir, r, node, s, &at)?;
        let add = std::mem::take(&mut s.pending);
        s.schemas.extend(add);
        s.pending_state = Pending::None;
        s.pending_at = None;
        s.until = None;
        record(dir, node, s)?;
    }
    Ok(())
}

/// One channel of a reporting server as it runs now.
#[derive(Debug, Clone, Serialize)]
pub struct ChannelReport {
    /// The source node.
    pub source: String,
    /// The channel.
    pub channel: Channel,
    /// Both threads run without error.
    pub running: bool,
    /// Seconds behind its source, when known.
    pub seconds_behind: Option<u64>,
    /// The schemas it carries.
    pub schemas: Vec<String>,
    /// A change under way (`none` normally).
    pub pending_state: Pending,
    /// The schemas of that change.
    pub pending: Vec<String>,
    /// Its last error, if any (or why its status could not be read).
    pub error: Option<String>,
}

/// The last `reporting check` of one shard on a reporting node.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckRecord {
    /// The shard.
    pub shard: u32,
    /// The reporting copy matched the fleet.
    pub clean: bool,
    /// The tables that differed (`schema.table`), or why the shard could not be compared.
    pub differing: Vec<String>,
    /// When (RFC 3339 UTC).
    pub checked_at: String,
}

/// A reporting node in `reporting status`: its channels, the follows it has not done and
/// its last checks.
#[derive(Debug, Clone, Serialize)]
pub struct NodeReport {
    /// The channels.
    pub channels: Vec<ChannelReport>,
    /// Moves whose flip this node's copy has not followed yet (the next sync joins each
    /// at its own flip position).
    pub pending_follows: Vec<PendingFollow>,
    /// The last `reporting check` of each shard.
    pub last_checks: Vec<CheckRecord>,
    /// Whether the copy may differ from the fleet: a channel not running, a change under
    /// way, a follow not done, or a last check that found differences.
    pub drift: bool,
}

/// A reporting node's last checks.
pub fn checks(dir: &mut Directory, node: &str) -> Result<Vec<CheckRecord>> {
    let d = dir.schema().clone();
    dir.server()
        .rows(&st::reporting_checks(&d, node))?
        .into_iter()
        .map(|r| {
            let (shard, clean, differing, at): (u32, u8, String, i64) =
                mysql::from_row_opt(r).map_err(|e| crate::server::row_error(node, e))?;
            Ok(CheckRecord {
                shard,
                clean: clean != 0,
                differing: serde_json::from_str(&differing).unwrap_or_else(|_| vec![differing]),
                checked_at: crate::clock::rfc3339_millis(at),
            })
        })
        .collect()
}

/// `reporting status`: every reporting node (or `only`) with its channels.
pub fn status_report(inv: &Inventory, only: Option<&str>) -> Result<BTreeMap<String, NodeReport>> {
    let mut dir = Directory::open(inv)?;
    let nodes = attached(&mut dir)?;
    if let Some(n) = only {
        if !nodes.iter().any(|x| x == n) {
            return Err(Error::Refused(format!(
                "node {n} is not attached as a reporting server"
            )));
        }
    }
    let mut out = BTreeMap::new();
    for node in nodes.into_iter().filter(|n| only.is_none_or(|o| o == n)) {
        let recorded = sources(&mut dir, &node)?;
        let mut server = connect(inv, &node);
        let mut rows = Vec::new();
        for s in recorded {
            let (running, lag, error) = match server
                .as_mut()
                .map_err(|e| e.to_string())
                .and_then(|r| r.channel_status(&s.channel).map_err(|e| e.to_string()))
            {
                Ok(Some(c)) => (
                    c.healthy(),
                    c.seconds_behind,
                    c.last_error().map(str::to_string),
                ),
                Ok(None) => (
                    false,
                    None,
                    Some(format!("channel {} does not exist", s.channel)),
                ),
                Err(e) => (false, None, Some(e)),
            };
            rows.push(ChannelReport {
                source: s.node.clone(),
                channel: s.channel.clone(),
                running,
                seconds_behind: lag,
                schemas: s.schemas.iter().cloned().collect(),
                pending_state: s.pending_state,
                pending: s.pending.iter().cloned().collect(),
                error,
            });
        }
        let pending_follows: Vec<PendingFollow> = follows(&mut dir, &node)?.into_values().collect();
        let last_checks = checks(&mut dir, &node)?;
        let drift = !pending_follows.is_empty()
            || last_checks.iter().any(|c| !c.clean)
            || rows
                .iter()
                .any(|c| !c.running || c.pending_state != Pending::None);
        out.insert(
            node,
            NodeReport {
                channels: rows,
                pending_follows,
                last_checks,
                drift,
            },
        );
    }
    Ok(out)
}

/// What `reporting check` found for one shard on one reporting node.
#[derive(Debug, Clone, Serialize)]
pub struct ShardCheck {
    /// The reporting node.
    pub node: String,
    /// The shard.
    pub shard: u32,
    /// The node the directory places it on.
    pub source: String,
    /// Whether the reporting copy matched.
    pub clean: bool,
    /// Tables compared.
    pub tables: usize,
    /// Chunks compared.
    pub chunks: u64,
    /// Rows compared (on the shard's node).
    pub rows: u64,
    /// The reporting channel's positions the comparison was made at, one per round.
    pub points: Vec<BinlogPosition>,
    /// The tables that differ, or why the shard could not be compared (a schema the
    /// channel does not carry, a table missing on the reporting server).
    pub differing: Vec<String>,
    /// The differing chunks (at most [`crate::verify::MAX_DIFFERENCES`]).
    pub differences: Vec<crate::verify::ChunkDifference>,
}

/// `reporting check`: compares each reporting server's copy of every shard (or `only`)
/// with the shard's node, chunk by chunk with the verification's own code
/// ([`crate::verify::verify`]): each round holds the reporting channel at a consistent
/// point of the shard's node (its applier runs `UNTIL` the position read under a
/// momentary lock of the compared tables), so writes under way never show as drift.
/// Records each shard's result in the directory (`reporting status` shows it). Holds the
/// reporting lock: no sync re-points a channel meanwhile.
pub fn check(
    inv: &Inventory,
    only: Option<u32>,
    opts: &crate::verify::VerifyOptions,
) -> Result<Vec<ShardCheck>> {
    let mut dir = Directory::open(inv)?;
    let snap = dir.load()?;
    if let Some(id) = only {
        if !snap.shards.iter().any(|s| s.id == id) {
            return Err(Error::Usage(format!("shard {id} is not in the directory")));
        }
    }
    let nodes = attached(&mut dir)?;
    if nodes.is_empty() {
        return Err(Error::Refused(
            "no reporting server is attached: nothing to check".into(),
        ));
    }
    locked(inv, &mut dir, |dir| {
        let mut out = Vec::new();
        for node in &nodes {
            let recorded = sources(dir, node)?;
            for shard in snap
                .shards
                .iter()
                .filter(|s| s.state != ShardState::Offline && only.is_none_or(|id| id == s.id))
            {
                crate::signal::check()?;
                let c = check_shard(inv, node, &recorded, &snap, shard, opts)?;
                let d = dir.schema().clone();
                dir.server().exec(&st::record_reporting_check(
                    &d,
                    node,
                    c.shard,
                    c.clean,
                    &serde_json::to_string(&c.differing).unwrap_or_else(|_| "[]".into()),
                ))?;
                out.push(c);
            }
        }
        Ok(out)
    })
}

fn check_shard(
    inv: &Inventory,
    node: &str,
    recorded: &[Source],
    snap: &Snapshot,
    shard: &crate::directory::Shard,
    opts: &crate::verify::VerifyOptions,
) -> Result<ShardCheck> {
    let mut out = ShardCheck {
        node: node.to_string(),
        shard: shard.id,
        source: shard.node.clone(),
        clean: false,
        tables: 0,
        chunks: 0,
        rows: 0,
        points: Vec::new(),
        differing: Vec::new(),
        differences: Vec::new(),
    };
    let schemas = snap.shard_schemas(shard);
    let carrier = recorded.iter().find(|s| s.node == shard.node);
    for schema in &schemas {
        if !carrier.is_some_and(|s| s.schemas.contains(schema)) {
            out.differing.push(format!(
                "{schema}: not replicated from {} (run `shardctl reporting sync`)",
                shard.node
            ));
        }
    }
    if !out.differing.is_empty() {
        return Ok(out);
    }
    let channel = channel_for(&shard.node)?;
    let mut source = connect(inv, &shard.node)?;
    let mut reporting = connect(inv, node)?;
    // A stopped or failing channel cannot be held at a consistent point: the copy is not
    // compared, and not clean.
    match reporting.channel_status(&channel)? {
        Some(c) if c.healthy() => {}
        Some(c) => {
            out.differing.push(format!(
                "channel {channel} is not running{} (`shardctl reporting status`)",
                c.last_error().map(|e| format!(": {e}")).unwrap_or_default()
            ));
            return Ok(out);
        }
        None => {
            out.differing.push(format!(
                "channel {channel} does not exist (run `shardctl reporting sync`)"
            ));
            return Ok(out);
        }
    }
    let mut tables = Vec::new();
    for schema in &schemas {
        let schema = Ident::new("schema", schema)?;
        let there: BTreeSet<Ident> = if reporting.schema_exists(&schema)? {
            reporting
                .tables(&schema)?
                .into_iter()
                .filter(|t| !t.is_view)
                .map(|t| t.name)
                .collect()
        } else {
            BTreeSet::new()
        };
        for t in source.tables(&schema)? {
            if t.is_view
                || t.name
                    .as_str()
                    .starts_with(crate::server::statements::HIDDEN_PREFIX)
            {
                continue;
            }
            if !there.contains(&t.name) {
                out.differing
                    .push(format!("{schema}.{}: missing on {node}", t.name));
                continue;
            }
            tables.push(crate::verify::TablePair {
                source_schema: schema.clone(),
                source_table: t.name.clone(),
                target_schema: schema.clone(),
                target_table: t.name,
                target_filter: None,
                source_filter: None,
            });
        }
    }
    drop(source);
    let dialect = reporting.dialect();
    let report = crate::verify::verify(
        &ConnectSpec::for_node(inv, inv.node(&shard.node)?)?,
        &ConnectSpec::for_node(inv, inv.node(node)?)?,
        &tables,
        Some(&channel),
        opts,
        &mut |h| {
            for stmt in crate::verify::hold_statements(&dialect, &channel, &h)? {
                reporting.exec(&stmt)?;
            }
            Ok(())
        },
    )?;
    out.tables = report.tables;
    out.chunks = report.chunks;
    out.rows = report.rows;
    out.points = report.points;
    let differing: BTreeSet<String> = report.differences.iter().map(|d| d.table.clone()).collect();
    out.differing.extend(differing);
    out.differences = report.differences;
    out.clean = out.differing.is_empty();
    Ok(out)
}

/// What `detach` did.
#[derive(Debug, Clone, Serialize)]
pub struct Detached {
    /// The node.
    pub node: String,
    /// Channels removed.
    pub channels: Vec<Channel>,
    /// Schemas dropped (with `--drop`; else left as they were).
    pub dropped: Vec<String>,
}

/// `reporting detach`: every channel removed, the copies left (or dropped with `drop`),
/// the node forgotten.
pub fn detach(inv: &Inventory, node: &str, drop: bool) -> Result<Detached> {
    let mut dir = Directory::open(inv)?;
    locked(inv, &mut dir, |dir| detach_locked(inv, dir, node, drop))
}

fn detach_locked(inv: &Inventory, dir: &mut Directory, node: &str, drop: bool) -> Result<Detached> {
    inv.node(node)?;
    if !attached(dir)?.iter().any(|n| n == node) {
        return Err(Error::Refused(format!(
            "node {node} is not attached as a reporting server"
        )));
    }
    let recorded = sources(dir, node)?;
    let mut r = connect(inv, node)?;
    let mut out = Detached {
        node: node.to_string(),
        channels: Vec::new(),
        dropped: Vec::new(),
    };
    for s in &recorded {
        r.reset_channel(&s.channel)?;
        out.channels.push(s.channel.clone());
    }
    if drop {
        let all: BTreeSet<String> = recorded
            .iter()
            .flat_map(|s| s.schemas.iter().chain(&s.pending).cloned())
            .collect();
        let drops: Vec<_> = idents(&all)?
            .iter()
            .map(statements::drop_schema_if_exists)
            .collect();
        r.exec_unlogged(&drops)?;
        out.dropped = all.into_iter().collect();
    }
    let d = dir.schema().clone();
    for stmt in st::delete_reporting_node(&d, node) {
        dir.server().exec(&stmt)?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::{Flavor, Vendor};

    #[test]
    fn channel_names_are_valid_and_distinct_per_node() {
        assert_eq!(
            channel_for("node2").unwrap().as_str(),
            "shardctl_report_node2"
        );
        assert_eq!(
            channel_for("db-3.eu").unwrap().as_str(),
            "shardctl_report_db_3_eu"
        );
        assert!(channel_for(&"x".repeat(60)).is_err());
    }

    #[test]
    fn filters_read_back_as_schemas() {
        let s = ChannelStatus {
            name: "c".into(),
            source: String::new(),
            io_running: "Yes".into(),
            sql_running: true,
            seconds_behind: None,
            last_io_error: String::new(),
            last_sql_error: String::new(),
            executed: None,
            received: None,
            do_db: String::new(),
            wild_do_table: "employees\\_1.%,app\\_3.%".into(),
            rewrite_db: String::new(),
            until_condition: String::new(),
            until: None,
            source_server_id: None,
        };
        let got: Vec<String> = filter_now(&s).into_iter().collect();
        assert_eq!(got, vec!["app_3", "employees_1"]);
    }

    #[test]
    fn only_flavors_with_channel_filters_report() {
        assert!(flavor_refusal(Flavor::new(Vendor::MariaDb, 10, 6, 0)).is_none());
        assert!(flavor_refusal(Flavor::new(Vendor::MySql, 8, 0, 36)).is_none());
        assert!(flavor_refusal(Flavor::new(Vendor::MySql, 5, 7, 44))
            .unwrap()
            .contains("cannot be a reporting server"));
    }
}
