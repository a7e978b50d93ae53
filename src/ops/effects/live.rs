//! The live implementation: journals through the directory under the operation's lease
//! and acts on the servers.

use super::hand::Fleet;
use super::stream::StreamRunner;
use super::StreamRequest;
use super::{Change, ChannelState, CopyRequest, Effects, FleetEffects, Flip, VerifyRequest};
use crate::config::Inventory;
use crate::copy::{self, CopyReport, Method, SchemaPair};
use crate::directory::journal::Effect;
use crate::directory::journal::{EffectRecord, EffectState, Lease, OpState, WindowRequest};
use crate::directory::owner::OwnerFlags;
use crate::directory::phase::Phase;
use crate::directory::{Directory, ShardState};
use crate::error::{Error, Result};
use crate::ident::{Channel, Ident};
use crate::ops::fence::Fenced;
use crate::remote::node::OptionEdit;
use crate::server::catalog::BeforeTrigger;
use crate::server::statements::SwitchMode;
use crate::server::{statements, BinlogPosition, ConnectSpec, Server, Stmt};
use crate::verify::{Hold, VerifyReport};
use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a verification round waits for the change stream to reach its point.
const STREAM_HOLD_TIMEOUT: Duration = Duration::from_secs(600);

/// Copies schemas between two nodes by the request's method.
pub fn copy_between(inv: &Inventory, req: CopyRequest<'_>) -> Result<CopyReport> {
    let source = ConnectSpec::for_node(inv, inv.node(req.source)?)?;
    let target = ConnectSpec::for_node(inv, inv.node(req.target)?)?;
    match req.method {
        Method::Native => {
            let opts = copy::native::NativeOptions {
                workers: req.workers,
                without_triggers: req.without_triggers,
                ..Default::default()
            };
            match (req.into_tables, req.rows_where) {
                (_, Some(filters)) => copy::native::copy_rows_where(
                    &source,
                    &target,
                    req.pairs,
                    filters,
                    opts,
                    req.progress,
                ),
                (Some(tables), None) => copy::native::copy_rows_into(
                    &source,
                    &target,
                    req.pairs,
                    tables,
                    opts,
                    req.progress,
                ),
                (None, None) => {
                    copy::native::copy(&source, &target, req.pairs, opts, req.progress)
                }
            }
        }
        Method::Dump | Method::Physical if req.without_triggers => Err(Error::Refused(
            "a copy kept current by a change stream on its own node is made natively: use method: native".into(),
        )),
        Method::Dump if req.into_tables.is_some() => Err(Error::Refused(
            "a merge copies rows into existing tables, which the dump method cannot: use method: native".into(),
        )),
        Method::Dump => {
            copy::dump::copy_with_progress(&source, Some(&target), None, req.pairs, req.progress)
        }
        Method::Physical if req.into_tables.is_some() => Err(Error::Refused(
            "a merge copies rows into existing tables, which the physical method cannot: use method: native".into(),
        )),
        Method::Physical => {
            copy::physical::copy(inv, req.source, req.target, req.pairs, req.progress)
        }
    }
}

/// Waits until `channel` on `target` has applied what `source` had written moments before,
/// within `lag_below` seconds: caught up closely enough that a fence raised now is short.
///
/// Each round is a safe point to pause at (`shardctl pause`): the channel keeps applying
/// meanwhile, and the time paused does not count against `timeout`. A round waits at most
/// a second longer than a round that counts may take, so a pause is noticed that soon.
pub fn catch_up(
    fx: &mut impl FleetEffects,
    source: &str,
    target: &str,
    channel: &Channel,
    lag_below: u64,
    timeout: Duration,
) -> Result<serde_json::Value> {
    let mut deadline = Instant::now() + timeout;
    let round = Duration::from_secs(lag_below.max(1) + 1);
    loop {
        crate::signal::check()?;
        deadline += crate::control::pause_point()?;
        let now = fx.reader(source)?.coordinates()?.position;
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(Error::Timeout(format!(
                "the target {target} did not catch up within {}s",
                timeout.as_secs()
            )));
        }
        let started = Instant::now();
        let t = fx.reader(target)?;
        match t.wait_for_position(channel, &now, left.min(round)) {
            Ok(()) => {}
            // Not there within a round that could count: read the source again.
            Err(Error::Timeout(_)) if left > round => continue,
            Err(Error::Timeout(why)) => {
                return Err(Error::Timeout(format!(
                    "the target {target} did not catch up within {}s: {why}",
                    timeout.as_secs()
                )))
            }
            Err(e) => return Err(e),
        }
        let status = t
            .channel_status(channel)?
            .ok_or_else(|| Error::server(target, format!("channel {channel} disappeared")))?;
        if let Some(e) = status.last_error() {
            return Err(Error::server(target, format!("channel {channel}: {e}")));
        }
        crate::output::note_lag(status.seconds_behind);
        let lag = status.seconds_behind.unwrap_or(u64::MAX);
        if lag <= lag_below && started.elapsed() <= Duration::from_secs(lag_below.max(1)) {
            return Ok(serde_json::json!({"position": now, "lag_secs": lag}));
        }
    }
}

/// The refusal of a merge whose retired schema logged `blocked` on `source`: one line.
pub fn gate_refusal(
    source: &str,
    blocked: &crate::server::binlog::BlockedStatement,
    op: u64,
) -> Error {
    Error::Refused(format!(
        "{source} logged a statement in the retired schema {} at {} ({}): the merge's channel would apply it to the survivor's tables, so it stops before its flip with the survivor untouched; `shardctl abort {op}` lifts the fence and removes the channel, then merge again",
        blocked.schema,
        blocked.statement_at,
        blocked.text.replace(['\n', '\r'], " ")
    ))
}

/// Before a verification round lets a merge's channel apply up to `point`: reads
/// `source`'s binary log from where the applier stands up to there, and refuses on a
/// statement touching one of the retired `schemas`.
fn gate_check(
    fleet: &mut Fleet<'_>,
    source: &str,
    target: &str,
    channel: &Channel,
    schemas: &[Ident],
    point: &BinlogPosition,
    op: u64,
) -> Result<()> {
    let applied = fleet
        .reader(target)?
        .channel_status(channel)?
        .and_then(|s| s.executed)
        .ok_or_else(|| {
            Error::server(target, format!("channel {channel} has no applied position"))
        })?;
    let scan = fleet
        .reader(source)?
        .scan_for_gate(&applied, Some(point), schemas, usize::MAX)?;
    match scan.blocked {
        Some(b) => Err(gate_refusal(source, &b, op)),
        // Not read all the way to the point: letting the applier run there would apply
        // events nobody read.
        None if !scan.complete => Err(Error::server(
            source,
            format!(
                "its binary log could not be read from {applied} up to {point} (read up to {}): the merge's channel stays at its gate",
                scan.safe_to
            ),
        )),
        None => Ok(()),
    }
}

/// Connections to the fleet's nodes that send what they are told: the acting half of a
/// live run, and all of a step subcommand run by hand.
/// and acts on the servers.
pub struct Live<'a> {
    inv: &'a Inventory,
    fleet: Fleet<'a>,
    /// The directory connection (journal and placement).
    pub dir: Directory,
    /// The lease this process holds.
    pub lease: Lease,
    /// What the heartbeat learned.
    pub flags: Arc<OwnerFlags>,
    /// The operation a split's prunes belong to.
    parent_op: u64,
    /// A key move's change stream, once started in this process.
    stream: Option<StreamRunner>,
}

impl<'a> Live<'a> {
    /// Acts for the holder of `lease`.
    pub fn new(inv: &'a Inventory, dir: Directory, lease: Lease) -> Live<'a> {
        Live {
            inv,
            fleet: Fleet::new(inv),
            dir,
            lease,
            flags: Default::default(),
            parent_op: lease.op,
            stream: None,
        }
    }

    /// Ends the sessions through which earlier owners of this operation acted: a statement
    /// of theirs still running (a RENAME waiting for a lock, a SET GLOBAL) could otherwise
    /// complete later, behind this owner's back. A session is only ended on the server
    /// that wrote it down (same start time), so a reused id is never hit.
    pub fn end_orphaned_sessions(
        &mut self,
        effects: &[crate::directory::journal::EffectRecord],
    ) -> Result<()> {
        // Every session an earlier owner acted through, whatever its effect's journal says:
        // a statement journaled as failed (its client gave up) may still run on the server.
        let mut seen = HashSet::new();
        for fx in effects {
            if fx.epoch >= self.lease.epoch {
                continue;
            }
            let Some(session) = fx.detail.get("session").and_then(|v| v.as_array()) else {
                continue;
            };
            let (Some(id), Some(started)) = (
                session.first().and_then(|v| v.as_u64()),
                session.get(1).and_then(|v| v.as_i64()),
            ) else {
                continue;
            };
            if self.inv.node(&fx.node).is_err() || !seen.insert((fx.node.clone(), id)) {
                continue;
            }
            // Best effort per node: an unreachable node cannot run anything either, and
            // must not keep recovery from the nodes that are there.
            if let Err(e) = self.end_session(&fx.node, id, started, fx.effect.name(), fx.epoch) {
                crate::output::log(
                    0,
                    &format!(
                        "{}: could not check session {id} of an earlier owner: {e}",
                        fx.node
                    ),
                );
            }
        }
        Ok(())
    }

    /// Ends session `id` on `node` if that server has not restarted since and it is there.
    fn end_session(
        &mut self,
        node: &str,
        id: u64,
        started: i64,
        effect: &str,
        epoch: u64,
    ) -> Result<()> {
        let s = self.reader(node)?;
        let now: i64 = s.first(&statements::server_started_at())?.unwrap_or(0);
        if (now - started).abs() > 2 {
            return Ok(());
        }
        let alive: u64 = s.first(&statements::session_exists(id))?.unwrap_or(0);
        if alive > 0 {
            crate::output::log(
                0,
                &format!(
                    "{node}: ending session {id}, left running by an earlier owner ({effect} at epoch {epoch})"
                ),
            );
            if let Err(e) = s.exec(&statements::kill_connection(id)) {
                crate::output::log(0, &format!("{node}: session {id}: {e}"));
            }
        }
        Ok(())
    }
}

impl FleetEffects for Live<'_> {
    fn reader(&mut self, node: &str) -> Result<&mut Server> {
        self.fleet.reader(node)
    }

    fn two_readers(&mut self, a: &str, b: &str) -> Result<(&mut Server, &mut Server)> {
        self.fleet.two_readers(a, b)
    }

    fn run(&mut self, node: &str, stmts: &[Stmt]) -> Result<u64> {
        self.fleet.run(node, stmts)
    }

    fn run_unlogged(&mut self, node: &str, stmts: &[Stmt]) -> Result<()> {
        self.fleet.run_unlogged(node, stmts)
    }

    fn simulate(&mut self, _change: Change) {}

    fn schema_exists(&mut self, node: &str, schema: &Ident) -> Result<bool> {
        self.fleet.schema_exists(node, schema)
    }

    fn channel_state(&mut self, node: &str, channel: &Channel) -> Result<ChannelState> {
        self.fleet.channel_state(node, channel)
    }

    fn hidden_now(&mut self, node: &str, fenced: &[Fenced]) -> Result<Vec<Fenced>> {
        self.fleet.hidden_now(node, fenced)
    }

    fn read_only_now(&mut self, node: &str) -> Result<bool> {
        self.fleet.read_only_now(node)
    }

    fn visible_tables(&mut self, node: &str, schema: &Ident) -> Result<Vec<Ident>> {
        self.fleet.visible_tables(node, schema)
    }

    fn switch_now(&mut self, node: &str, id: u64) -> Result<Option<SwitchMode>> {
        self.fleet.switch_now(node, id)
    }

    fn unguarded_tables(&mut self, node: &str, schemas: &[Ident]) -> Result<Vec<(Ident, Ident)>> {
        self.fleet.unguarded_tables(node, schemas)
    }

    fn before_triggers(
        &mut self,
        node: &str,
        schemas: &[Ident],
    ) -> Result<Vec<(Ident, BeforeTrigger)>> {
        self.fleet.before_triggers(node, schemas)
    }

    fn persist_options(&mut self, node: &str, edit: &OptionEdit) -> Result<()> {
        self.fleet.persist_options(node, edit)
    }

    fn unpersist_options(&mut self, node: &str, edit: &OptionEdit) -> Result<()> {
        self.fleet.unpersist_options(node, edit)
    }

    fn clear_copy_staging(&mut self, node: &str, pairs: &[SchemaPair]) -> Result<()> {
        self.fleet.clear_copy_staging(node, pairs)
    }

    fn import_on_replica(
        &mut self,
        node: &str,
        replica: &crate::config::ReplicaSpec,
        pairs: &[SchemaPair],
    ) -> Result<copy::physical::ReplicaImport> {
        self.fleet.import_on_replica(node, replica, pairs)
    }

    fn restart_server(&mut self, node: &str) -> Result<()> {
        self.fleet.restart_server(node)
    }

    fn drop_schemas_on_replica(
        &mut self,
        node: &str,
        replica: &crate::config::ReplicaSpec,
        schemas: &[Ident],
        after: &crate::server::BinlogPosition,
        live_server_ids: &[u64],
    ) -> Result<usize> {
        self.fleet
            .drop_schemas_on_replica(node, replica, schemas, after, live_server_ids)
    }
}

impl Effects for Live<'_> {
    fn op(&self) -> u64 {
        self.lease.op
    }

    fn names(&self) -> crate::directory::names::NameScope {
        self.lease.names
    }

    fn is_dry_run(&self) -> bool {
        false
    }

    fn check_lease(&self) -> Result<()> {
        self.flags.check_lease()
    }

    fn steps_pending(&mut self, from_step: u32, phase: Phase) -> Result<()> {
        self.dir.steps_pending(&self.lease, from_step, Some(phase))
    }

    fn copy(&mut self, req: CopyRequest<'_>) -> Result<CopyReport> {
        copy_between(self.inv, req)
    }

    fn wait_for_position(
        &mut self,
        node: &str,
        channel: &Channel,
        pos: &BinlogPosition,
        timeout: Duration,
    ) -> Result<()> {
        self.reader(node)?.wait_for_position(channel, pos, timeout)
    }

    fn catch_up(
        &mut self,
        source: &str,
        target: &str,
        channel: &Channel,
        lag_below: u64,
        timeout: Duration,
    ) -> Result<serde_json::Value> {
        catch_up(&mut self.fleet, source, target, channel, lag_below, timeout)
    }

    fn count_and_checksum(
        &mut self,
        node: &str,
        schema: &Ident,
        table: &Ident,
    ) -> Result<Option<(u64, Option<u64>)>> {
        self.reader(node)?
            .count_and_checksum(schema, table)
            .map(Some)
    }

    fn verify(&mut self, req: VerifyRequest<'_>) -> Result<VerifyReport> {
        let source = ConnectSpec::for_node(self.inv, self.inv.node(req.source)?)?;
        let target = ConnectSpec::for_node(self.inv, self.inv.node(req.target)?)?;
        if req.stream {
            let flags = Arc::clone(&self.flags);
            let runner = self.stream.as_mut().ok_or_else(|| {
                Error::Internal("a verification held by a stream that is not running".into())
            })?;
            // A round's point: the stream halted, brought exactly there, then let go on.
            let mut hold = |h: Hold| -> Result<()> {
                flags.check_lease()?;
                match h {
                    Hold::Pause => runner.halt(),
                    Hold::RunUntil(point) => runner.run_to(&point, STREAM_HOLD_TIMEOUT).map(|_| ()),
                    Hold::Release => runner.start(),
                }
            };
            let opts = crate::verify::VerifyOptions {
                point_reached_by_hold: true,
                ..req.opts.clone()
            };
            return crate::verify::verify(
                &source,
                &target,
                req.tables,
                req.channel,
                &opts,
                &mut hold,
            );
        }
        let fleet = &mut self.fleet;
        let flags = Arc::clone(&self.flags);
        let node = req.target;
        let channel = req.channel;
        let (from_node, gate, op) = (req.source, req.gate, self.lease.op);
        let mut hold = |h: Hold| -> Result<()> {
            let Some(channel) = channel else {
                return Ok(());
            };
            // A process whose operation was taken over touches no server: the new owner
            // releases the channel itself.
            flags.check_lease()?;
            if let Some(schemas) = gate {
                match &h {
                    // The gate lets the applier go on from the consistent point.
                    Hold::Release => return Ok(()),
                    Hold::RunUntil(point) => {
                        gate_check(fleet, from_node, node, channel, schemas, point, op)?
                    }
                    Hold::Pause => {}
                }
            }
            let dialect = fleet.reader(node)?.dialect();
            fleet.run(
                node,
                &crate::verify::hold_statements(&dialect, channel, &h)?,
            )?;
            Ok(())
        };
        crate::verify::verify(&source, &target, req.tables, channel, &req.opts, &mut hold)
    }

    fn directory_snapshot(&mut self) -> Result<crate::directory::Snapshot> {
        self.dir.retrying(|d| d.load())
    }

    fn directory_unix_secs(&mut self) -> Result<i64> {
        let now: Option<i64> = self
            .dir
            .retrying(|d| d.server().first(&statements::unix_now()))?;
        now.ok_or_else(|| {
            Error::Internal("the directory's UNIX_TIMESTAMP() returned nothing".into())
        })
    }

    fn create_objects(
        &mut self,
        node: &str,
        pair: &SchemaPair,
        objects: &copy::objects::SchemaObjects,
    ) -> Result<()> {
        copy::objects::create_after_data(self.reader(node)?, pair, objects)
    }

    fn prune(&mut self, shards: &[u32]) -> Result<serde_json::Value> {
        let quiet = |_: &str, _: u64, _: u64, _: u64| {};
        let mut out = Vec::new();
        for &shard in shards {
            let pending = self
                .dir
                .retrying(|d| d.active_operations())?
                .into_iter()
                .find(|o| {
                    o.shard_id == Some(shard) && o.kind == crate::directory::journal::OpKind::Prune
                })
                .map(|o| o.id);
            let reports = crate::prune::run(
                self.inv,
                shard,
                pending,
                &crate::prune::Options::default(),
                &quiet,
                Some(self.parent_op),
            )?;
            out.push(serde_json::json!({"shard": shard, "tables": reports}));
        }
        Ok(serde_json::Value::Array(out))
    }

    fn cutover_requested(&mut self) -> Result<bool> {
        self.dir.cutover_requested(self.lease.op)
    }

    fn consume_cutover(&mut self) -> Result<()> {
        self.dir.consume_cutover(&self.lease)
    }

    fn window_request(&mut self) -> Result<Option<WindowRequest>> {
        self.dir.window_request(self.lease.op)
    }

    fn consume_window_request(&mut self, request: WindowRequest, phase: Phase) -> Result<()> {
        self.dir
            .consume_window_request(&self.lease, request, Some(phase))
    }

    fn step_started(&mut self, step_no: u32, _name: &str, phase: Phase) -> Result<()> {
        self.dir.step_started(&self.lease, step_no, Some(phase))
    }

    fn step_done(&mut self, step_no: u32, outputs: &serde_json::Value, phase: Phase) -> Result<()> {
        self.dir
            .step_done(&self.lease, step_no, outputs, Some(phase))
    }

    fn step_failed(&mut self, step_no: u32, error: &str) -> Result<()> {
        self.dir.step_failed(&self.lease, step_no, error)
    }

    fn set_step_outputs(
        &mut self,
        step_no: u32,
        outputs: &serde_json::Value,
        phase: Phase,
    ) -> Result<()> {
        self.dir
            .set_step_outputs(&self.lease, step_no, outputs, Some(phase))
    }

    fn intent(
        &mut self,
        step_no: u32,
        effect: Effect,
        node: &str,
        detail: &serde_json::Value,
    ) -> Result<u32> {
        self.flags.check_lease()?;
        let mut detail = detail.clone();
        if self.inv.node(node).is_ok() {
            self.reader(node)?;
            if let (Some(session), Some(obj)) =
                (self.fleet.sessions.get(node), detail.as_object_mut())
            {
                obj.insert("session".into(), serde_json::json!([session.0, session.1]));
            }
        }
        self.dir
            .effect_intent(&self.lease, step_no, effect, node, &detail)
    }

    fn finished(
        &mut self,
        seq: u32,
        state: EffectState,
        outputs: &serde_json::Value,
    ) -> Result<()> {
        self.dir.effect_finished(&self.lease, seq, state, outputs)
    }

    fn set_shard_state(&mut self, shard: u32, state: ShardState) -> Result<()> {
        self.dir.set_shard_state_leased(&self.lease, shard, state)
    }

    fn record_reporting_follow(
        &mut self,
        from: &str,
        to: &str,
        schemas: &[String],
        at: &BinlogPosition,
    ) -> Result<()> {
        crate::reporting::record_flip(&mut self.dir, from, to, schemas, at, self.lease.op)
    }

    fn flip(&mut self, flip: &Flip) -> Result<u64> {
        match flip {
            Flip::Move { shard, from, to } => {
                let snap = self.dir.retrying(|d| d.load())?;
                let node = snap
                    .nodes
                    .iter()
                    .find(|n| &n.name == to)
                    .cloned()
                    .ok_or_else(|| Error::Usage(format!("node {to} is not in the directory")))?;
                self.dir.flip_shard(&self.lease, *shard, from, &node)
            }
            Flip::Split {
                func_id,
                old_shard,
                new_shard,
                mapping,
            } => self
                .dir
                .split_flip(&self.lease, *func_id, *old_shard, *new_shard, mapping),
            Flip::Merge(plan) => self.dir.merge_flip(&self.lease, plan),
            Flip::Keys(plan) => self.dir.key_flip(&self.lease, plan),
        }
    }

    fn shard_location(&mut self, shard: u32) -> Result<Option<(String, String)>> {
        self.dir.shard_location(shard)
    }

    fn key_owner(&mut self, func_id: u32, key: &crate::directory::Key) -> Result<Option<u32>> {
        self.dir.retrying(|d| d.key_shard(func_id, key))
    }

    fn read_only_join(&mut self, node: &str) -> Result<bool> {
        let lease = self.lease;
        let mut server = Server::connect_node(self.inv, node)?;
        self.dir
            .read_only_fence_join(&lease, node, || Ok(server.settings()?.read_only))
    }

    fn read_only_held(&mut self, node: &str) -> Result<bool> {
        self.dir.read_only_fence_held(self.lease.op, node)
    }

    fn read_only_fenced_here(&mut self, node: &str) -> Result<bool> {
        Ok(!self.dir.read_only_fence_holders(node)?.is_empty())
    }

    fn read_only_leave(&mut self, node: &str, make_writable: &[Stmt]) -> Result<()> {
        let lease = self.lease;
        let mut server = Server::connect_node(self.inv, node)?;
        self.dir.read_only_fence_leave(&lease, node, || {
            for st in make_writable {
                server.exec(st)?;
            }
            Ok(())
        })
    }

    fn last_effect(&mut self, effect: Effect) -> Result<Option<EffectRecord>> {
        Ok(self
            .dir
            .operation(self.lease.op)?
            .last_effect(effect)
            .cloned())
    }

    fn delete_offline_shard(&mut self, shard: u32) -> Result<()> {
        self.dir.delete_offline_shard(shard)
    }

    fn release(&mut self, state: OpState, error: Option<&str>, phase: Phase) -> Result<()> {
        self.dir
            .release_operation(&self.lease, state, error, Some(phase))
    }

    fn start_stream(&mut self, req: StreamRequest<'_>) -> Result<serde_json::Value> {
        if let Some(r) = &self.stream {
            if r.running() {
                return Ok(serde_json::json!({"stream": req.id, "running": true}));
            }
        }
        let source = ConnectSpec::for_node(self.inv, self.inv.node(req.source)?)?;
        let mut source_dump = source.clone();
        source_dump.credentials = self.inv.replication_credentials()?;
        let target = ConnectSpec::for_node(self.inv, self.inv.node(req.target)?)?;
        let tables = req.tables.len();
        let stream = crate::stream::ChangeStream::prepare(crate::stream::StreamSpec {
            id: req.id.to_string(),
            source,
            source_dump,
            target,
            tables: req.tables,
            start: req.start,
            checkpoint_schema: super::stream_checkpoint_schema(),
            options: crate::stream::StreamOptions {
                epoch: self.lease.epoch,
                ..crate::stream::StreamOptions::default()
            },
        })?;
        let server_id = stream.server_id();
        let mut runner = StreamRunner::new(stream);
        runner.start()?;
        self.stream = Some(runner);
        Ok(serde_json::json!({"stream": req.id, "server_id": server_id, "tables": tables}))
    }

    fn stream_running(&self) -> bool {
        self.stream.as_ref().is_some_and(StreamRunner::running)
    }

    fn stream_catch_up(&mut self, lag_below: u64, timeout: Duration) -> Result<serde_json::Value> {
        let runner = self
            .stream
            .as_mut()
            .ok_or_else(|| Error::Internal("no change stream runs to catch up".into()))?;
        let stats = runner.stats();
        let mut deadline = Instant::now() + timeout;
        loop {
            crate::signal::check()?;
            deadline += crate::control::pause_point()?;
            if !runner.running() {
                // Its thread ended: a failure comes back from the halt.
                runner.halt()?;
                runner.start()?;
            }
            let p = stats.progress();
            if p.seconds_behind.is_some_and(|s| s <= lag_below) && p.bytes_behind.is_some() {
                return Ok(serde_json::json!({
                    "seconds_behind": p.seconds_behind,
                    "bytes_behind": p.bytes_behind,
                    "row_changes": p.row_changes,
                }));
            }
            if Instant::now() >= deadline {
                return Err(Error::Timeout(format!(
                    "the change stream did not come within {lag_below}s of its source in {}s ({} s behind)",
                    timeout.as_secs(),
                    p.seconds_behind.map(|s| s.to_string()).unwrap_or_else(|| "unknown".into())
                )));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn stream_to(&mut self, pos: &BinlogPosition, timeout: Duration) -> Result<serde_json::Value> {
        let runner = self
            .stream
            .as_mut()
            .ok_or_else(|| Error::Internal("no change stream runs to bring forward".into()))?;
        let report = runner.run_to(pos, timeout)?;
        Ok(serde_json::json!({
            "checkpoint": report.checkpoint,
            "row_changes": report.progress.row_changes,
        }))
    }

    fn end_stream(&mut self, target: &str, id: &str) -> Result<()> {
        if let Some(mut runner) = self.stream.take() {
            // A failed run's error no longer matters: the stream is being removed.
            let _ = runner.halt();
        }
        if checkpoint_table_exists(self.fleet.reader(target)?)? {
            let schema = super::stream_checkpoint_schema();
            self.fleet.run_unlogged(
                target,
                &[crate::server::stream::delete_checkpoint(&schema, id)],
            )?;
        }
        Ok(())
    }

    fn stream_checkpoint_exists(&mut self, target: &str, id: &str) -> Result<bool> {
        let schema = super::stream_checkpoint_schema();
        let server = self.fleet.reader(target)?;
        if !checkpoint_table_exists(server)? {
            return Ok(false);
        }
        Ok(!server
            .rows(&crate::server::stream::read_checkpoint(&schema, id))?
            .is_empty())
    }
}

/// The node's control schema holds the change streams' checkpoint table (the schema may
/// exist without it: other control tables live there too).
fn checkpoint_table_exists(server: &mut Server) -> Result<bool> {
    let schema = super::stream_checkpoint_schema();
    if !server.schema_exists(&schema)? {
        return Ok(false);
    }
    Ok(server
        .tables(&schema)?
        .iter()
        .any(|t| t.name.as_str() == crate::server::stream::CHECKPOINT_TABLE))
}
