//! `shardctl move`: the chapter's procedure as journaled, idempotent steps.
//!
//! The fences:
//! - `shard`: the shard's tables are renamed inside their schemas to hidden names, unlogged
//!   (`sql_log_bin = 0`), in one atomic `RENAME TABLE` that waits for in-flight
//!   transactions. Clients of this shard get "table doesn't exist" (1146) and look the
//!   shard up again; other shards on the server keep writing.
//! - `read-only`: the chapter's `SET GLOBAL read_only = ON` on the whole source server.
//!
//! The final position is read only after the fence is up; the directory flips only after
//! the target reached it and every table's count and checksum matched; the old copy is
//! dropped (or renamed out of reach) before the fence is lifted. A failure before the flip
//! lifts the fence and leaves the shard on the source; a timeout also removes the channel
//! and the target copy.

use crate::config::Inventory;
use crate::copy::{self, CopyReport, Method, SchemaPair};
use crate::directory::journal::{op_state, OperationRecord};
use crate::directory::{Directory, Shard, ShardState, Snapshot};
use crate::error::{Error, Result};
use crate::ident::{Channel, Ident};
use crate::output::log;
use crate::playbook::{Fence, Playbook, Step};
use crate::server::catalog::TableInfo;
use crate::server::replication::Coordinates;
use crate::server::{BinlogPosition, ConnectSpec, Filters, Server, SourceSpec, StartAt, Stmt};
use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};

/// What the steps have established so far; journaled after every step so a resumed run
/// starts from exactly this.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct MoveState {
    /// The backup's coordinates on the source.
    pub coordinates: Option<Coordinates>,
    /// Rows copied.
    pub copied_rows: u64,
    /// The fence that is up, if any.
    pub fence: Option<Fence>,
    /// Tables renamed by the shard fence: (schema, table, hidden name).
    pub fenced_tables: Vec<(String, String, String)>,
    /// Whether the source was read-only before we fenced it.
    pub was_read_only: Option<bool>,
    /// The source position read after the fence.
    pub final_position: Option<BinlogPosition>,
    /// Milliseconds from fence up to fence lifted (or to flip for the shard fence).
    pub fence_millis: Option<u64>,
    /// Every table matched.
    pub verified: bool,
    /// The directory points at the target.
    pub flipped: bool,
    /// The source copy is gone (or renamed out of reach).
    pub source_dropped: bool,
    /// Whether target schemas were created by this operation.
    pub target_created: bool,
    /// A split on one node: views, routines, triggers and events to create after the copy
    /// made under the fence, as (schema, definition).
    #[serde(default)]
    pub local_ddl: Vec<(String, String)>,
}

/// An event for progress displays and `--output json`.
#[derive(Debug, Clone, Serialize)]
pub struct StepEvent {
    /// Operation id.
    pub op: u64,
    /// Step number.
    pub step_no: u32,
    /// Step name.
    pub step: String,
    /// started, done, failed.
    pub event: String,
    /// Milliseconds, when finished.
    pub millis: Option<u64>,
    /// Detail.
    pub detail: serde_json::Value,
}

/// A move in progress.
pub struct Mover<'a> {
    inv: &'a Inventory,
    dir: Directory,
    op: u64,
    shard: Shard,
    source: String,
    target: String,
    pairs: Vec<SchemaPair>,
    channel: Channel,
    playbook: Playbook,
    state: MoveState,
    fence_started: Option<Instant>,
    copy_progress: std::sync::Arc<copy::native::Progress>,
    split: Option<crate::ops::split::SplitPlan>,
    on_event: &'a dyn Fn(&StepEvent),
}

/// The channel a move uses on the target.
pub fn channel_for(op: u64) -> Channel {
    Channel::new(&format!("shardctl_op{op}")).expect("valid channel name")
}

fn hidden_name(op: u64, i: usize) -> String {
    format!("_shardctl_op{op}_{i}")
}

/// Refuses a shard that has an unfinished operation.
fn refuse_if_busy(dir: &mut Directory, shard_id: u32) -> Result<()> {
    match dir
        .active_operations()?
        .into_iter()
        .find(|o| o.shard_id == Some(shard_id))
    {
        Some(op) => Err(Error::Refused(format!(
            "shard {shard_id} is under operation {} ({}, {}): resume or abort it first",
            op.id, op.kind, op.state
        ))),
        None => Ok(()),
    }
}

/// The journal's step rows for a playbook: name and parameters.
fn journal_steps(playbook: &Playbook) -> Vec<(String, serde_json::Value)> {
    playbook
        .steps
        .iter()
        .map(|s| {
            (
                s.name().to_string(),
                serde_json::to_value(s).unwrap_or_default(),
            )
        })
        .collect()
}

/// A split's schemas: `<schema>_<old>` copied to `<schema>_<new>`.
fn split_pairs(snap: &Snapshot, shard: &Shard, new_shard: u32) -> Result<Vec<SchemaPair>> {
    snap.function_schemas(shard.func_id)
        .iter()
        .map(|l| {
            Ok(SchemaPair {
                from: Ident::new("schema", &crate::directory::shard_schema(l, shard.id))?,
                to: Ident::new("schema", &crate::directory::shard_schema(l, new_shard))?,
            })
        })
        .collect()
}

fn schemas_of(snap: &Snapshot, shard: &Shard) -> Result<Vec<SchemaPair>> {
    snap.shard_schemas(shard)
        .iter()
        .map(|s| {
            let id = Ident::new("schema", s)?;
            Ok(SchemaPair {
                from: id.clone(),
                to: id,
            })
        })
        .collect()
}

/// Checks a move request against the directory and inventory; returns the shard.
pub fn check_request(inv: &Inventory, snap: &Snapshot, shard_id: u32, to: &str) -> Result<Shard> {
    let shard = snap.shard(shard_id)?.clone();
    inv.node(to)?;
    if !snap.nodes.iter().any(|n| n.name == to) {
        return Err(Error::Usage(format!(
            "node {to:?} is not in the directory: add it with `shardctl node add {to}`"
        )));
    }
    if shard.node == to {
        return Err(Error::Usage(format!(
            "shard {shard_id} already lives on {to}"
        )));
    }
    if shard.state != ShardState::Online {
        return Err(Error::Refused(format!(
            "shard {shard_id} is {}, not online",
            shard.state.as_sql()
        )));
    }
    Ok(shard)
}

impl<'a> Mover<'a> {
    /// Starts a new move: checks, journals the operation, marks the shard moving.
    pub fn start(
        inv: &'a Inventory,
        shard_id: u32,
        to: &str,
        playbook: Playbook,
        on_event: &'a dyn Fn(&StepEvent),
    ) -> Result<Mover<'a>> {
        let mut dir = Directory::open(inv)?;
        let snap = dir.load()?;
        refuse_if_busy(&mut dir, shard_id)?;
        let shard = check_request(inv, &snap, shard_id, to)?;
        if playbook
            .steps
            .iter()
            .any(|s| matches!(s, Step::Preflight(_)))
        {
            // Refuse bad input before the journal or the shard's state change.
            crate::ops::plan::check_move(inv, shard_id, to)?;
        }
        let steps = journal_steps(&playbook);
        let params = serde_json::json!({ "playbook": playbook });
        let op = dir.create_operation("move", shard_id, &shard.node, to, &params, &steps)?;
        dir.set_shard_state(shard_id, ShardState::Moving)?;
        Ok(Mover {
            inv,
            pairs: schemas_of(&snap, &shard)?,
            source: shard.node.clone(),
            target: to.to_string(),
            shard,
            channel: channel_for(op),
            dir,
            op,
            playbook,
            state: MoveState::default(),
            fence_started: None,
            copy_progress: Default::default(),
            split: None,
            on_event,
        })
    }

    /// Starts a split of `shard_id` onto `to`: the new shard's location is created offline,
    /// the operation journaled, the old shard marked moving.
    pub fn start_split(
        inv: &'a Inventory,
        shard_id: u32,
        to: &str,
        at: &crate::ops::split::SplitAt,
        playbook: Playbook,
        on_event: &'a dyn Fn(&StepEvent),
    ) -> Result<Mover<'a>> {
        let mut dir = Directory::open(inv)?;
        let snap = dir.load()?;
        refuse_if_busy(&mut dir, shard_id)?;
        let shard = snap.shard(shard_id)?.clone();
        let shard = if shard.node == to {
            inv.node(to)?;
            if shard.state != ShardState::Online {
                return Err(Error::Refused(format!(
                    "shard {shard_id} is {}, not online",
                    shard.state.as_sql()
                )));
            }
            shard
        } else {
            check_request(inv, &snap, shard_id, to)?
        };
        let mapping = crate::ops::split::plan(inv, &snap, &shard, at)?;
        if shard.node != to {
            crate::ops::plan::check_move(inv, shard_id, to)?;
        }
        let node = snap
            .nodes
            .iter()
            .find(|n| n.name == to)
            .cloned()
            .ok_or_else(|| Error::Usage(format!("node {to} is not in the directory")))?;
        let new_shard = dir.insert_offline_location(shard.func_id, &node)?;
        let plan = crate::ops::split::SplitPlan {
            old_shard: shard_id,
            new_shard,
            mapping,
        };
        let steps = journal_steps(&playbook);
        let params = serde_json::json!({ "playbook": playbook, "split": plan });
        let op = match dir.create_operation("split", shard_id, &shard.node, to, &params, &steps) {
            Ok(op) => op,
            Err(e) => {
                let _ = dir.delete_offline_shard(new_shard);
                return Err(e);
            }
        };
        dir.set_shard_state(shard_id, ShardState::Moving)?;
        Ok(Mover {
            inv,
            pairs: split_pairs(&snap, &shard, new_shard)?,
            source: shard.node.clone(),
            target: to.to_string(),
            shard,
            channel: channel_for(op),
            dir,
            op,
            playbook,
            state: MoveState::default(),
            fence_started: None,
            copy_progress: Default::default(),
            split: Some(plan),
            on_event,
        })
    }

    /// The split this operation carries out, if it is one.
    pub fn split(&self) -> Option<&crate::ops::split::SplitPlan> {
        self.split.as_ref()
    }

    /// Rebuilds a move from the journal (for resume and abort).
    pub fn load(
        inv: &'a Inventory,
        op_id: u64,
        on_event: &'a dyn Fn(&StepEvent),
    ) -> Result<(Mover<'a>, OperationRecord)> {
        let mut dir = Directory::open(inv)?;
        let rec = dir.operation(op_id)?;
        if rec.kind != "move" && rec.kind != "split" {
            return Err(Error::Usage(format!(
                "operation {op_id} is a {}, not a move",
                rec.kind
            )));
        }
        let snap = dir.load()?;
        let shard_id = rec
            .shard_id
            .ok_or_else(|| Error::Usage("operation without shard".into()))?;
        let shard = snap.shard(shard_id)?.clone();
        let playbook: Playbook =
            serde_json::from_value(rec.params["playbook"].clone()).map_err(|e| {
                Error::Config(format!(
                    "operation {op_id}: unreadable playbook in the journal: {e}"
                ))
            })?;
        let state = rec
            .steps
            .iter()
            .rev()
            .find(|s| !s.outputs.is_null())
            .and_then(|s| serde_json::from_value(s.outputs.clone()).ok())
            .unwrap_or_default();
        let source = rec.source.clone().unwrap_or_default();
        let target = rec.target.clone().unwrap_or_default();
        let mut shard_for_schemas = shard.clone();
        shard_for_schemas.node = source.clone();
        let split: Option<crate::ops::split::SplitPlan> = if rec.kind == "split" {
            Some(
                serde_json::from_value(rec.params["split"].clone()).map_err(|e| {
                    Error::Config(format!(
                        "operation {op_id}: unreadable split in the journal: {e}"
                    ))
                })?,
            )
        } else {
            None
        };
        let pairs = match &split {
            Some(p) => split_pairs(&snap, &shard, p.new_shard)?,
            None => schemas_of(&snap, &shard_for_schemas)?,
        };
        Ok((
            Mover {
                inv,
                pairs,
                source,
                target,
                shard,
                channel: channel_for(op_id),
                dir,
                op: op_id,
                playbook,
                state,
                fence_started: None,
                copy_progress: Default::default(),
                split,
                on_event,
            },
            rec,
        ))
    }

    /// The operation id.
    pub fn op(&self) -> u64 {
        self.op
    }

    /// Counters of the copy in progress, for progress displays.
    pub fn copy_progress(&self) -> std::sync::Arc<copy::native::Progress> {
        std::sync::Arc::clone(&self.copy_progress)
    }

    /// The state reached.
    pub fn state(&self) -> &MoveState {
        &self.state
    }

    fn connect(&self, node: &str) -> Result<Server> {
        Server::connect_node(self.inv, node)
    }

    fn spec(&self, node: &str) -> Result<ConnectSpec> {
        ConnectSpec::for_node(self.inv, self.inv.node(node)?)
    }

    fn emit(
        &self,
        step_no: u32,
        step: &str,
        event: &str,
        millis: Option<u64>,
        detail: serde_json::Value,
    ) {
        (self.on_event)(&StepEvent {
            op: self.op,
            step_no,
            step: step.to_string(),
            event: event.to_string(),
            millis,
            detail,
        });
    }

    /// Runs the steps not yet done. On failure before the flip the fence is lifted and
    /// the shard stays on the source (a timeout also removes the channel and the copy).
    pub fn run(&mut self, done: &[bool]) -> Result<MoveState> {
        let _heartbeat = Heartbeat::start(self.inv, self.op)?;
        self.run_steps(done)
    }

    fn run_steps(&mut self, done: &[bool]) -> Result<MoveState> {
        let steps = self.playbook.steps.clone();
        for (i, step) in steps.iter().enumerate() {
            if done.get(i).copied().unwrap_or(false) {
                continue;
            }
            let step_no = i as u32;
            self.dir.step_started(self.op, step_no)?;
            self.emit(
                step_no,
                step.name(),
                "started",
                None,
                serde_json::Value::Null,
            );
            let t = Instant::now();
            let result = crate::signal::check().and_then(|_| self.run_step(step));
            let millis = t.elapsed().as_millis() as u64;
            match result {
                Ok(detail) => {
                    let outputs = serde_json::to_value(&self.state).unwrap_or_default();
                    self.dir.step_done(self.op, step_no, &outputs)?;
                    self.emit(step_no, step.name(), "done", Some(millis), detail);
                    crate::fault::point(&format!("after:{}", step.name()));
                }
                Err(e) => {
                    let _ = self.dir.step_failed(self.op, step_no, &e.to_string());
                    self.emit(
                        step_no,
                        step.name(),
                        "failed",
                        Some(millis),
                        serde_json::json!({"error": e.to_string()}),
                    );
                    let e = self.recover(e);
                    let outputs = serde_json::to_value(&self.state).unwrap_or_default();
                    let _ = self.dir.set_step_outputs(self.op, step_no, &outputs);
                    return Err(e);
                }
            }
        }
        self.dir.finish_operation(self.op, op_state::DONE)?;
        Ok(self.state.clone())
    }

    /// After a failed step: before the flip, lift the fence and put the shard back online
    /// on the source; a timeout also rolls the copy back. After the flip, keep everything
    /// for `resume`.
    fn recover(&mut self, e: Error) -> Error {
        if self.state.flipped {
            return e;
        }
        let mut notes = Vec::new();
        if self.state.fence.is_some() {
            if let Err(u) = self.lift_fence() {
                notes.push(format!("lifting the fence failed too: {u}"));
            }
        }
        if matches!(e, Error::Timeout(_)) {
            match self.rollback() {
                Ok(()) => notes.push(
                    "rolled back: channel removed, target copy dropped, shard online on the source"
                        .into(),
                ),
                Err(r) => notes.push(format!("rollback failed: {r}")),
            }
        } else {
            let _ = self.dir.set_shard_state(self.shard.id, ShardState::Online);
            notes.push(format!("the shard stays on {}; `shardctl resume {}` retries, `shardctl abort {}` cleans up", self.source, self.op, self.op));
        }
        let msg = format!("{e} ({})", notes.join("; "));
        match e {
            Error::Timeout(_) => Error::Timeout(msg.trim_start_matches("timeout: ").to_string()),
            Error::Refused(_) => Error::Refused(msg.trim_start_matches("refused: ").to_string()),
            Error::Interrupted => Error::Interrupted,
            Error::Server { node, .. } => Error::Server {
                node: node.clone(),
                message: msg
                    .trim_start_matches(&format!("node {node}: "))
                    .to_string(),
            },
            other => other,
        }
    }

    /// Removes what the move built on the target and returns the shard to service on the
    /// source. Refused after the flip.
    pub fn rollback(&mut self) -> Result<()> {
        if self.state.flipped {
            return Err(Error::Refused(format!(
                "operation {} has flipped the directory to {}: resume it instead",
                self.op, self.target
            )));
        }
        if self.state.fence.is_some() {
            self.lift_fence()?;
        }
        let mut target = self.connect(&self.target)?;
        if target.channel_status(&self.channel)?.is_some() {
            let _ = target.set_filters(&self.channel, &Filters::default());
        }
        target.reset_channel(&self.channel)?;
        if self.state.target_created || self.step_started("backup") {
            for p in &self.pairs {
                target.exec_unlogged(&[Stmt::text(format!(
                    "DROP DATABASE IF EXISTS {}",
                    p.to.quoted()
                ))])?;
            }
        }
        self.dir
            .set_shard_state(self.shard.id, ShardState::Online)?;
        if let Some(plan) = &self.split {
            self.dir.delete_offline_shard(plan.new_shard)?;
        }
        self.dir.finish_operation(self.op, op_state::ABORTED)?;
        Ok(())
    }

    fn step_started(&mut self, name: &str) -> bool {
        self.dir
            .operation(self.op)
            .map(|r| {
                r.steps
                    .iter()
                    .any(|s| s.name == name && s.state != "pending")
            })
            .unwrap_or(true)
    }

    /// A split onto the shard's own node: no channel (a server drops its own events), the
    /// copy is made under the fence instead.
    fn same_node(&self) -> bool {
        self.source == self.target
    }

    fn run_step(&mut self, step: &Step) -> Result<serde_json::Value> {
        if self.same_node() {
            match step {
                Step::ChangeMaster(_)
                | Step::Filter(_)
                | Step::StartReplication(_)
                | Step::ResetReplication(_)
                | Step::Wait(_) => {
                    return Ok(
                        serde_json::json!({"skipped": "same node: the copy is made under the fence"}),
                    )
                }
                Step::Backup(_) => return self.local_prepare(),
                Step::Lock(l) => {
                    let out = self.lock(l.fence, l.timeout_secs)?;
                    let copied = self.local_copy()?;
                    return Ok(serde_json::json!({"lock": out, "copied_rows": copied}));
                }
                _ => {}
            }
        }
        match step {
            Step::Preflight(_) => self.preflight(),
            Step::Backup(p) => self.backup(p.method, p.workers),
            Step::ChangeMaster(_) => self.change_master(),
            Step::Filter(_) => {
                let mut t = self.connect(&self.target)?;
                let rewrite_db = if self.split.is_some() {
                    self.pairs
                        .iter()
                        .map(|p| (p.from.clone(), p.to.clone()))
                        .collect()
                } else {
                    Vec::new()
                };
                let filters = Filters {
                    wild_do_schemas: self.pairs.iter().map(|p| p.to.clone()).collect(),
                    rewrite_db,
                    ..Filters::default()
                };
                t.set_filters(&self.channel, &filters)?;
                Ok(
                    serde_json::json!({"wild_do_table": filters.wild_do_schemas, "rewrite_db": filters.rewrite_db}),
                )
            }
            Step::StartReplication(_) => {
                let mut t = self.connect(&self.target)?;
                t.start_channel(&self.channel)?;
                Ok(serde_json::Value::Null)
            }
            Step::Wait(w) => {
                let timeout = Duration::from_secs(w.timeout_secs);
                if w.until.is_some() {
                    let pos = self.state.final_position.clone().ok_or_else(|| {
                        Error::Usage("no final position: the lock step has not run".into())
                    })?;
                    let mut t = self.connect(&self.target)?;
                    t.wait_for_position(&self.channel, &pos, timeout)?;
                    t.stop_channel(&self.channel)?;
                    Ok(serde_json::json!({"reached": pos}))
                } else {
                    self.catch_up(w.lag_below_secs.unwrap_or(1), timeout)
                }
            }
            Step::Lock(l) => self.lock(l.fence, l.timeout_secs),
            Step::Verify(_) => self.verify(),
            Step::Flip(_) => self.flip(),
            Step::Prune(_) => self.prune_both(),
            Step::DropSource(d) => self.drop_source(d.keep),
            Step::Unlock(u) => {
                if self.split.is_some() && self.state.flipped && self.state.fence.is_some() {
                    // Clients that routed before the flip must not write keys the old shard
                    // no longer owns: they get "table doesn't exist" until they refresh.
                    let until = Instant::now() + Duration::from_secs(u.grace_secs);
                    while Instant::now() < until {
                        crate::signal::check()?;
                        std::thread::sleep(Duration::from_millis(50));
                    }
                }
                self.lift_fence()?;
                Ok(serde_json::json!({"fence_millis": self.state.fence_millis}))
            }
            Step::ResetReplication(_) => {
                let mut t = self.connect(&self.target)?;
                if t.channel_status(&self.channel)?.is_some() {
                    t.set_filters(&self.channel, &Filters::default())?;
                }
                t.reset_channel(&self.channel)?;
                Ok(serde_json::Value::Null)
            }
        }
    }

    fn preflight(&mut self) -> Result<serde_json::Value> {
        let mut src = self.connect(&self.source)?;
        let mut tgt = self.connect(&self.target)?;
        let s = src.settings()?;
        let t = tgt.settings()?;
        if !s.log_bin {
            return Err(Error::Refused(format!(
                "binary logging is off on the source {}",
                self.source
            )));
        }
        if s.binlog_format != "ROW" {
            return Err(Error::Refused(format!(
                "the source {} logs in {} format; a filtered channel is only safe with ROW",
                self.source, s.binlog_format
            )));
        }
        let same = self.same_node();
        if s.server_id == t.server_id && !same {
            return Err(Error::Refused(format!(
                "{} and {} share server_id {}; replication between them would drop events",
                self.source, self.target, s.server_id
            )));
        }
        for p in &self.pairs {
            if tgt.schema_exists(&p.to)? {
                return Err(Error::Refused(format!(
                    "the target {} already has a schema {}",
                    self.target, p.to
                )));
            }
            if !src.schema_exists(&p.from)? {
                return Err(Error::Refused(format!(
                    "the source {} has no schema {}",
                    self.source, p.from
                )));
            }
        }
        if same {
            return Ok(serde_json::json!({"server_id": s.server_id, "same_node": true}));
        }
        // The replication account must reach the source as the target will.
        let creds = self.inv.replication_credentials()?;
        let mut spec = self.spec(&self.source)?;
        spec.credentials = creds;
        Server::connect(&spec).map_err(|e| {
            Error::Refused(format!(
                "the replication account cannot connect to the source {}: {e}",
                self.source
            ))
        })?;
        let grants = src.rows(&Stmt::text("SHOW GRANTS"))?;
        Ok(
            serde_json::json!({"source_server_id": s.server_id, "target_server_id": t.server_id, "grants_checked": grants.len()}),
        )
    }

    fn backup(&mut self, method: Method, workers: usize) -> Result<serde_json::Value> {
        let mut tgt = self.connect(&self.target)?;
        // Preflight found none of these schemas, so any present now are this operation's
        // own partial copy from an interrupted attempt.
        for p in &self.pairs {
            if tgt.schema_exists(&p.to)? {
                tgt.drop_schema(&p.to)?;
            }
        }
        self.state.target_created = true;
        let source = self.spec(&self.source)?;
        let target = self.spec(&self.target)?;
        let report: CopyReport = match method {
            Method::Native => {
                let progress = std::sync::Arc::clone(&self.copy_progress);
                let opts = copy::native::NativeOptions {
                    workers,
                    ..Default::default()
                };
                copy::native::copy(&source, &target, &self.pairs, opts, &progress)?
            }
            Method::Dump => copy::dump::copy(&source, Some(&target), None, &self.pairs)?,
        };
        self.state.coordinates = report.coordinates.clone();
        self.state.copied_rows = report.rows;
        Ok(serde_json::to_value(&report).unwrap_or_default())
    }

    fn change_master(&mut self) -> Result<serde_json::Value> {
        let coords = self.state.coordinates.clone().ok_or_else(|| {
            Error::Usage("no backup coordinates: the backup step has not run".into())
        })?;
        let creds = self.inv.replication_credentials()?;
        let src = self.inv.node(&self.source)?;
        let spec = SourceSpec {
            host: src.host().to_string(),
            port: src.port(),
            user: creds.user,
            password: creds.password.expose().to_string(),
            start: StartAt::Position(coords.position.clone()),
            connect_retry_secs: 1,
        };
        let mut t = self.connect(&self.target)?;
        t.reset_channel(&self.channel)?;
        t.change_source(&self.channel, &spec)?;
        Ok(serde_json::json!({"channel": self.channel, "from": coords.position}))
    }

    fn catch_up(&mut self, lag_below: u64, timeout: Duration) -> Result<serde_json::Value> {
        let deadline = Instant::now() + timeout;
        let mut src = self.connect(&self.source)?;
        let mut t = self.connect(&self.target)?;
        loop {
            let now = src.coordinates()?.position;
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(Error::Timeout(format!(
                    "the target {} did not catch up within {}s",
                    self.target,
                    timeout.as_secs()
                )));
            }
            let started = Instant::now();
            t.wait_for_position(&self.channel, &now, left)?;
            let status = t.channel_status(&self.channel)?.ok_or_else(|| {
                Error::server(
                    &self.target,
                    format!("channel {} disappeared", self.channel),
                )
            })?;
            let lag = status.seconds_behind.unwrap_or(u64::MAX);
            // Caught up to a position read moments ago, quickly enough: the fence will be short.
            if lag <= lag_below && started.elapsed() <= Duration::from_secs(lag_below.max(1)) {
                return Ok(serde_json::json!({"position": now, "lag_secs": lag}));
            }
        }
    }

    fn lock(&mut self, fence: Fence, timeout_secs: u64) -> Result<serde_json::Value> {
        let mut src = self.connect(&self.source)?;
        self.dir
            .set_shard_state(self.shard.id, ShardState::ReadOnly)?;
        self.fence_started = Some(Instant::now());
        match fence {
            Fence::ReadOnly => {
                let before = src.settings()?.read_only;
                self.state.was_read_only = Some(before);
                self.state.fence = Some(Fence::ReadOnly);
                src.set_read_only(true)?;
            }
            Fence::Shard => {
                self.state.fence = Some(Fence::Shard);
                let prefix = format!("_shardctl_op{}_", self.op);
                match crate::ops::fence::raise(&mut src, &self.pairs, &prefix, timeout_secs) {
                    Ok(fenced) => self.state.fenced_tables = fenced,
                    Err(e) => {
                        self.state.fence = None;
                        return Err(e);
                    }
                }
            }
        }
        let fin = src.coordinates()?.position;
        self.state.final_position = Some(fin.clone());
        Ok(serde_json::json!({"fence": fence, "final_position": fin}))
    }

    /// Lifts the fence: read-only back off (if we set it), or the shard's tables renamed
    /// back — unless the flip happened, in which case the old copy stays out of reach.
    fn lift_fence(&mut self) -> Result<()> {
        let Some(fence) = self.state.fence else {
            return Ok(());
        };
        let mut src = self.connect(&self.source)?;
        match fence {
            Fence::ReadOnly => {
                if self.state.was_read_only != Some(true) {
                    src.set_read_only(false)?;
                }
            }
            Fence::Shard => {
                // After a move's flip the old copy stays out of reach; after a split's, the
                // old shard serves its half again.
                if (!self.state.flipped || self.split.is_some()) && !self.state.source_dropped {
                    crate::ops::fence::lower(&mut src, &self.state.fenced_tables)?;
                }
            }
        }
        if let Some(t) = self.fence_started.take() {
            self.state.fence_millis = Some(t.elapsed().as_millis() as u64);
        }
        self.state.fence = None;
        if !self.state.flipped || self.split.is_some() {
            self.dir
                .set_shard_state(self.shard.id, ShardState::Online)?;
        }
        Ok(())
    }

    fn verify(&mut self) -> Result<serde_json::Value> {
        let mut src = self.connect(&self.source)?;
        let mut tgt = self.connect(&self.target)?;
        let mut checked = Vec::new();
        for p in &self.pairs {
            let tables: Vec<TableInfo> = tgt
                .tables(&p.to)?
                .into_iter()
                .filter(|t| !t.is_view)
                .collect();
            for t in tables {
                let source_name = match self.state.fence {
                    Some(Fence::Shard) => self
                        .state
                        .fenced_tables
                        .iter()
                        .find(|(s, name, _)| s == p.from.as_str() && name == t.name.as_str())
                        .map(|(_, _, h)| Ident::new("table", h))
                        .transpose()?
                        .ok_or_else(|| {
                            Error::Refused(format!(
                                "verification: {}.{} is not on the source",
                                p.from, t.name
                            ))
                        })?,
                    _ => t.name.clone(),
                };
                let a = src.count_and_checksum(&p.from, &source_name)?;
                let b = tgt.count_and_checksum(&p.to, &t.name)?;
                if a != b {
                    return Err(Error::Refused(format!(
                        "verification failed for {}.{}: source {} rows (checksum {:?}), target {} rows (checksum {:?})",
                        p.to, t.name, a.0, a.1, b.0, b.1
                    )));
                }
                checked.push(serde_json::json!({"table": format!("{}.{}", p.to, t.name), "rows": a.0, "checksum": a.1}));
            }
        }
        self.state.verified = true;
        Ok(serde_json::json!({"tables": checked}))
    }

    fn flip(&mut self) -> Result<serde_json::Value> {
        if !self.state.verified {
            return Err(Error::Refused(format!(
                "operation {}: the target has not been verified",
                self.op
            )));
        }
        if let Some(plan) = self.split.clone() {
            let mapping = plan.mapping.to_new_mapping()?;
            let version = self.dir.split_flip(
                self.op,
                self.shard.func_id,
                plan.old_shard,
                plan.new_shard,
                &mapping,
            )?;
            self.state.flipped = true;
            return Ok(
                serde_json::json!({"new_shard": plan.new_shard, "mapping": plan.mapping, "version": version}),
            );
        }
        let snap = self.dir.load()?;
        let node = snap
            .nodes
            .iter()
            .find(|n| n.name == self.target)
            .cloned()
            .ok_or_else(|| Error::Usage(format!("node {} is not in the directory", self.target)))?;
        let version = self
            .dir
            .flip_shard(self.shard.id, &self.source, &node, self.op)?;
        self.state.flipped = true;
        if self.state.fence == Some(Fence::Shard) {
            if let Some(t) = self.fence_started {
                self.state.fence_millis = Some(t.elapsed().as_millis() as u64);
            }
        }
        log(
            1,
            &format!(
                "shard {} now on {} (directory version {version})",
                self.shard.id, self.target
            ),
        );
        Ok(serde_json::json!({"node": self.target, "version": version}))
    }

    /// Same-node split, before the fence: empty tables under the new names, and the other
    /// objects' definitions kept for after the copy.
    fn local_prepare(&mut self) -> Result<serde_json::Value> {
        let mut src = self.connect(&self.source)?;
        self.state.target_created = true;
        self.state.local_ddl.clear();
        for p in &self.pairs {
            if src.schema_exists(&p.to)? {
                src.drop_schema(&p.to)?;
            }
            let objects = copy::objects::read(&mut src, p)?;
            copy::objects::create_tables(&mut src, p, &objects)?;
            for (_, ddl) in &objects.after_data {
                self.state.local_ddl.push((p.to.to_string(), ddl.clone()));
            }
        }
        Ok(
            serde_json::json!({"prepared": self.pairs.len(), "deferred_objects": self.state.local_ddl.len()}),
        )
    }

    /// Same-node split, under the fence: copies every fenced table into its new schema,
    /// then creates the deferred objects.
    fn local_copy(&mut self) -> Result<u64> {
        let mut src = self.connect(&self.source)?;
        src.exec(&Stmt::text("SET SESSION foreign_key_checks = 0"))?;
        let mut rows = 0;
        for (schema, table, hidden) in self.state.fenced_tables.clone() {
            let pair = self
                .pairs
                .iter()
                .find(|p| p.from.as_str() == schema)
                .ok_or_else(|| Error::Refused(format!("no target schema for {schema}")))?
                .clone();
            let table = Ident::new("table", &table)?;
            let cols: Vec<String> = src
                .writable_columns(&pair.to, &table)?
                .iter()
                .map(Ident::quoted)
                .collect();
            // Idempotent: a retried lock step starts the copy of each table afresh.
            src.exec(&Stmt::text(format!(
                "DELETE FROM {}.{}",
                pair.to.quoted(),
                table.quoted()
            )))?;
            rows += src.exec_affected(&Stmt::text(format!(
                "INSERT INTO {}.{} ({c}) SELECT {c} FROM {}.`{hidden}`",
                pair.to.quoted(),
                table.quoted(),
                pair.from.quoted(),
                c = cols.join(", ")
            )))?;
        }
        src.exec(&Stmt::text("SET SESSION foreign_key_checks = 1"))?;
        for p in &self.pairs {
            let objects = copy::objects::SchemaObjects {
                tables: Vec::new(),
                after_data: self
                    .state
                    .local_ddl
                    .iter()
                    .filter(|(s, _)| s == p.to.as_str())
                    .map(|(_, d)| ("object".to_string(), d.clone()))
                    .collect(),
            };
            copy::objects::create_after_data(&mut src, p, &objects)?;
        }
        self.state.copied_rows = rows;
        Ok(rows)
    }

    fn prune_both(&mut self) -> Result<serde_json::Value> {
        let plan = self
            .split
            .clone()
            .ok_or_else(|| Error::Usage("prune is a split step".into()))?;
        let quiet = |_: &str, _: u64, _: u64, _: u64| {};
        let mut out = Vec::new();
        for shard in [plan.old_shard, plan.new_shard] {
            let pending = self
                .dir
                .active_operations()?
                .into_iter()
                .find(|o| o.shard_id == Some(shard) && o.kind == "prune")
                .map(|o| o.id);
            let reports = crate::prune::run(
                self.inv,
                shard,
                pending,
                &crate::prune::Options::default(),
                &quiet,
                Some(self.op),
            )?;
            out.push(serde_json::json!({"shard": shard, "tables": reports}));
        }
        Ok(serde_json::Value::Array(out))
    }

    fn drop_source(&mut self, keep: bool) -> Result<serde_json::Value> {
        if self.split.is_some() {
            return Err(Error::Refused(
                "a split keeps its source: drop-source does not belong in a split playbook".into(),
            ));
        }
        if !self.state.flipped {
            return Err(Error::Refused(
                "drop-source before the flip: nothing is dropped before the flip".into(),
            ));
        }
        let mut src = self.connect(&self.source)?;
        for p in &self.pairs {
            if keep {
                if self.state.fence != Some(Fence::Shard) {
                    let tables: Vec<TableInfo> = src
                        .tables(&p.from)?
                        .into_iter()
                        .filter(|t| !t.is_view)
                        .collect();
                    let renames: Vec<String> = tables
                        .iter()
                        .enumerate()
                        .map(|(i, t)| {
                            format!(
                                "{}.{} TO {}.`{}`",
                                p.from.quoted(),
                                t.name.quoted(),
                                p.from.quoted(),
                                hidden_name(self.op, i)
                            )
                        })
                        .collect();
                    if !renames.is_empty() {
                        src.exec_unlogged(&[Stmt::text(format!(
                            "RENAME TABLE {}",
                            renames.join(", ")
                        ))])?;
                    }
                }
            } else {
                src.exec_unlogged(&[Stmt::text(format!(
                    "DROP DATABASE IF EXISTS {}",
                    p.from.quoted()
                ))])?;
            }
        }
        self.state.source_dropped = true;
        Ok(serde_json::json!({"kept": keep}))
    }
}

/// Refreshes an operation's heartbeat every few seconds from its own connection, so a
/// long step never looks abandoned; stops when dropped.
struct Heartbeat {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    handle: Option<std::thread::JoinHandle<()>>,
}

impl Heartbeat {
    const EVERY: Duration = Duration::from_secs(5);

    fn start(inv: &Inventory, op: u64) -> Result<Heartbeat> {
        let mut dir = Directory::open(inv)?;
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = std::sync::Arc::clone(&stop);
        let handle = std::thread::spawn(move || {
            let mut last = Instant::now();
            while !flag.load(std::sync::atomic::Ordering::Relaxed) {
                if last.elapsed() >= Self::EVERY {
                    if let Err(e) = dir.heartbeat(op) {
                        log(1, &format!("heartbeat of operation {op} failed: {e}"));
                    }
                    last = Instant::now();
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        });
        Ok(Heartbeat {
            stop,
            handle: Some(handle),
        })
    }
}

impl Drop for Heartbeat {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// How long an owner may stay silent before another process may resume its operation.
pub const STALE_OWNER_SECS: u64 = 30;

/// Resumes a move from its journal after a crash or a failure.
pub fn resume(
    inv: &Inventory,
    op_id: u64,
    force: bool,
    on_event: &dyn Fn(&StepEvent),
) -> Result<MoveState> {
    let (mut mover, rec) = Mover::load(inv, op_id, on_event)?;
    resume_loaded(&mut mover, rec, force)
}

/// Resumes an operation already loaded (so callers can watch its progress).
pub fn resume_loaded(
    mover: &mut Mover<'_>,
    rec: OperationRecord,
    force: bool,
) -> Result<MoveState> {
    let op_id = mover.op;
    match rec.state.as_str() {
        op_state::DONE | op_state::ABORTED => {
            return Err(Error::Usage(format!(
                "operation {op_id} is {}: nothing to resume",
                rec.state
            )))
        }
        op_state::RUNNING => {
            let me = crate::directory::journal::owner_id();
            let fresh = rec.heartbeat_age_secs.is_some_and(|a| a < STALE_OWNER_SECS);
            if fresh && rec.owner.as_deref() != Some(me.as_str()) && !force {
                return Err(Error::Refused(format!(
                    "operation {op_id} is running (owner {}, heartbeat {}s ago); --force if that process is gone",
                    rec.owner.unwrap_or_default(),
                    rec.heartbeat_age_secs.unwrap_or(0)
                )));
            }
        }
        _ => {}
    }
    let done: Vec<bool> = rec.steps.iter().map(|s| s.state == "done").collect();
    if !mover.state.flipped && mover.state.fence.is_none() {
        mover
            .dir
            .set_shard_state(mover.shard.id, ShardState::Moving)?;
    }
    mover.run(&done)
}

/// Aborts a move that has not flipped: channel removed, fence lifted, target copy dropped.
pub fn abort(inv: &Inventory, op_id: u64) -> Result<()> {
    let quiet = |_: &StepEvent| {};
    let (mut mover, rec) = Mover::load(inv, op_id, &quiet)?;
    if rec.state == op_state::DONE || rec.state == op_state::ABORTED {
        return Err(Error::Usage(format!(
            "operation {op_id} is {}: nothing to abort",
            rec.state
        )));
    }
    mover.rollback()
}
