//! An in-process fleet and journal with no server behind them: the dry run's model of the
//! servers ([`FleetModel`]) as the whole truth, plus a directory (shard placement, the
//! read-only fence registry) and one operation's journal in memory.
//!
//! Recovery reads the servers and the directory through [`Effects`] and acts through it,
//! so the decisions of `resume` and `abort` run here exactly as they run live, in
//! microseconds: a test sets the fleet and the journal as a crash at some phase left them,
//! runs recovery, and reads back what it did (the statements, the journal, the model).
//!
//! What the fake cannot answer it refuses, loudly: it has no connection ([`Self::reader`]
//! fails), copies, waits and comparisons fail, and a node in [`FakeFleet::unreachable`]
//! fails every call that would reach it. A test that strays into a step the fake does not
//! model therefore fails instead of passing on an invented answer.

use super::model::FleetModel;
use super::{
    Change, ChannelState, CopyRequest, Effects, FleetEffects, Flip, StreamRequest, VerifyRequest,
};
use crate::copy::{self, CopyReport, SchemaPair};
use crate::directory::journal::{Effect, EffectRecord, EffectState, OpState, WindowRequest};
use crate::directory::names::NameScope;
use crate::directory::phase::Phase;
use crate::directory::ShardState;
use crate::error::{Error, Result};
use crate::ident::{Channel, Ident};
use crate::ops::fence::Fenced;
use crate::remote::node::OptionEdit;
use crate::server::catalog::BeforeTrigger;
use crate::server::statements::SwitchMode;
use crate::server::{BinlogPosition, Dialect, Flavor, Server, Stmt, Vendor};
use crate::verify::VerifyReport;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::Duration;

/// How the fake journal ended the operation's hold.
#[derive(Debug, Clone, PartialEq)]
pub struct Release {
    /// The state it left the operation in.
    pub state: OpState,
    /// The error it journaled, if any.
    pub error: Option<String>,
    /// The phase it journaled.
    pub phase: Phase,
}

/// A fleet and a directory in memory. Every field is the truth a test sets up and reads
/// back; see the module's documentation for what it refuses.
#[derive(Debug, Clone)]
pub struct FakeFleet {
    /// The operation it acts for.
    pub op: u64,
    /// The servers: schemas, channels, hidden tables, read-only flags.
    pub model: FleetModel,
    /// When each node's server started (Unix time); 0 when not set.
    pub started_at: HashMap<String, i64>,
    /// The base tables of each (node, schema), by their own names; a schema the model
    /// says exists but that is not listed has none.
    pub tables: BTreeMap<(String, String), Vec<String>>,
    /// Nodes that answer nothing: every call that would reach them fails.
    pub unreachable: HashSet<String>,
    /// Every statement sent, in order, as (node, statement).
    pub sent: Vec<(String, String)>,
    /// The directory's placement: shard → (node, state).
    pub locations: BTreeMap<u32, (String, ShardState)>,
    /// Shards deleted from the directory.
    pub deleted_shards: Vec<u32>,
    /// The read-only fence registry: the nodes whose fence this operation holds, each
    /// with whether the node was read-only before its first holder.
    pub read_only_holds: HashMap<String, bool>,
    /// The journal's effect rows.
    pub effects: Vec<EffectRecord>,
    /// The journal's step states, by step number.
    pub steps: Vec<crate::directory::journal::StepState>,
    /// Each phase the journal was given, in order.
    pub phases: Vec<Phase>,
    /// How the hold on the operation ended, once it did.
    pub released: Option<Release>,
    /// Change streams' checkpoints on targets, as (node, stream id).
    pub stream_checkpoints: std::collections::BTreeSet<(String, String)>,
}

impl FakeFleet {
    /// An empty fleet acting for operation `op` whose playbook has `steps` steps.
    pub fn new(op: u64, steps: usize) -> FakeFleet {
        FakeFleet {
            op,
            model: FleetModel::default(),
            started_at: HashMap::new(),
            tables: BTreeMap::new(),
            unreachable: HashSet::new(),
            sent: Vec::new(),
            locations: BTreeMap::new(),
            deleted_shards: Vec::new(),
            read_only_holds: HashMap::new(),
            effects: Vec::new(),
            steps: vec![crate::directory::journal::StepState::Pending; steps],
            phases: Vec::new(),
            released: None,
            stream_checkpoints: Default::default(),
        }
    }

    /// The dialect every node of the fake speaks.
    pub fn dialect_of_every_node() -> Dialect {
        Dialect::new(Flavor::new(Vendor::MariaDb, 10, 11, 6))
    }

    /// Journals an effect as a crash may have left it.
    pub fn journal_effect(
        &mut self,
        step_no: u32,
        effect: Effect,
        node: &str,
        state: EffectState,
        detail: serde_json::Value,
    ) {
        let seq = self.effects.len() as u32 + 1;
        self.effects.push(EffectRecord {
            seq,
            step_no,
            effect,
            node: node.to_string(),
            state,
            epoch: 1,
            detail,
            outputs: serde_json::Value::Null,
            intended_ago_millis: Some(0),
        });
    }

    /// The statements sent to `node`, in order.
    pub fn sent_to(&self, node: &str) -> Vec<&str> {
        self.sent
            .iter()
            .filter(|(n, _)| n == node)
            .map(|(_, s)| s.as_str())
            .collect()
    }

    /// The effects journaled by recovery (rows after the first `before` ones), by name.
    pub fn effects_after(&self, before: usize) -> Vec<(Effect, EffectState)> {
        self.effects
            .iter()
            .skip(before)
            .map(|e| (e.effect, e.state))
            .collect()
    }

    fn reach(&self, node: &str) -> Result<()> {
        if self.unreachable.contains(node) {
            return Err(Error::Server {
                node: node.to_string(),
                message: "error 2003 (HY000): the fake fleet's node does not answer".into(),
            });
        }
        Ok(())
    }

    fn not_modeled(what: &str) -> Error {
        Error::Internal(format!("the fake fleet does not model {what}"))
    }
}

impl FleetEffects for FakeFleet {
    fn two_readers(&mut self, a: &str, b: &str) -> Result<(&mut Server, &mut Server)> {
        self.reach(a)?;
        self.reach(b)?;
        Err(Self::not_modeled(&format!("connections to {a} and {b}")))
    }

    fn reader(&mut self, node: &str) -> Result<&mut Server> {
        self.reach(node)?;
        Err(Self::not_modeled(&format!("a connection to {node}")))
    }

    fn run(&mut self, node: &str, stmts: &[Stmt]) -> Result<u64> {
        self.reach(node)?;
        self.sent
            .extend(stmts.iter().map(|s| (node.to_string(), s.to_string())));
        Ok(0)
    }

    fn run_unlogged(&mut self, node: &str, stmts: &[Stmt]) -> Result<()> {
        self.run(node, stmts).map(|_| ())
    }

    fn simulate(&mut self, change: Change) {
        self.model.apply(change);
    }

    fn schema_exists(&mut self, node: &str, schema: &Ident) -> Result<bool> {
        self.reach(node)?;
        Ok(self.model.schema(node, schema.as_str()).unwrap_or(false))
    }

    fn channel_state(&mut self, node: &str, channel: &Channel) -> Result<ChannelState> {
        self.reach(node)?;
        Ok(self
            .model
            .channel(node, channel.as_str())
            .unwrap_or(ChannelState::Absent))
    }

    fn hidden_now(&mut self, node: &str, fenced: &[Fenced]) -> Result<Vec<Fenced>> {
        self.reach(node)?;
        Ok(self.model.hidden(node, fenced).unwrap_or_default())
    }

    fn read_only_now(&mut self, node: &str) -> Result<bool> {
        self.reach(node)?;
        Ok(self.model.read_only(node).unwrap_or(false))
    }

    fn visible_tables(&mut self, node: &str, schema: &Ident) -> Result<Vec<Ident>> {
        self.reach(node)?;
        if self.model.schema(node, schema.as_str()) != Some(true) {
            return Ok(Vec::new());
        }
        self.tables
            .get(&(node.to_string(), schema.to_string()))
            .into_iter()
            .flatten()
            .filter(|t| !self.model.is_hidden(node, schema.as_str(), t))
            .map(|t| Ident::new("table", t))
            .collect()
    }

    fn switch_now(&mut self, node: &str, id: u64) -> Result<Option<SwitchMode>> {
        self.reach(node)?;
        Ok(self.model.switch(node, id).flatten())
    }

    /// The listed tables whose switched guards no effect installed (or one dropped).
    fn unguarded_tables(&mut self, node: &str, schemas: &[Ident]) -> Result<Vec<(Ident, Ident)>> {
        let mut out = Vec::new();
        for schema in schemas {
            for table in self.visible_tables(node, schema)? {
                let guarded = self
                    .model
                    .switch_guarded(node, schema.as_str(), table.as_str());
                if guarded != Some(true) {
                    out.push((schema.clone(), table));
                }
            }
        }
        Ok(out)
    }

    /// The fake fleet's tables have no triggers of their own.
    fn before_triggers(
        &mut self,
        node: &str,
        _schemas: &[Ident],
    ) -> Result<Vec<(Ident, BeforeTrigger)>> {
        self.reach(node)?;
        Ok(Vec::new())
    }

    fn persist_options(&mut self, node: &str, _edit: &OptionEdit) -> Result<()> {
        self.reach(node)?;
        Err(Self::not_modeled("option files"))
    }

    fn unpersist_options(&mut self, node: &str, _edit: &OptionEdit) -> Result<()> {
        self.reach(node)?;
        Err(Self::not_modeled("option files"))
    }

    fn restart_server(&mut self, node: &str) -> Result<()> {
        self.reach(node)?;
        Err(Self::not_modeled("a server restart"))
    }

    fn drop_schemas_on_replica(
        &mut self,
        node: &str,
        _replica: &crate::config::ReplicaSpec,
        _schemas: &[Ident],
        _after: &BinlogPosition,
        _live_server_ids: &[u64],
    ) -> Result<usize> {
        self.reach(node)?;
        Err(Self::not_modeled("replicas"))
    }

    fn clear_copy_staging(&mut self, node: &str, _pairs: &[SchemaPair]) -> Result<()> {
        self.reach(node)?;
        Err(Self::not_modeled("a physical copy's staging directory"))
    }

    fn import_on_replica(
        &mut self,
        node: &str,
        _replica: &crate::config::ReplicaSpec,
        _pairs: &[SchemaPair],
    ) -> Result<copy::physical::ReplicaImport> {
        self.reach(node)?;
        Err(Self::not_modeled("replicas"))
    }

    fn dialect(&mut self, node: &str) -> Result<Dialect> {
        self.reach(node)?;
        Ok(Self::dialect_of_every_node())
    }

    fn server_started_at(&mut self, node: &str) -> Result<i64> {
        self.reach(node)?;
        Ok(self.started_at.get(node).copied().unwrap_or(0))
    }
}

impl Effects for FakeFleet {
    fn op(&self) -> u64 {
        self.op
    }

    fn names(&self) -> NameScope {
        NameScope::of_directory(0x5eed)
    }

    /// Not a dry run: recovery acts on the fake as it would on servers.
    fn is_dry_run(&self) -> bool {
        false
    }

    fn check_lease(&self) -> Result<()> {
        Ok(())
    }

    fn steps_pending(&mut self, from_step: u32, phase: Phase) -> Result<()> {
        for s in self.steps.iter_mut().skip(from_step as usize) {
            *s = crate::directory::journal::StepState::Pending;
        }
        self.phases.push(phase);
        Ok(())
    }

    fn copy(&mut self, _req: CopyRequest<'_>) -> Result<CopyReport> {
        Err(Self::not_modeled("a copy"))
    }

    fn wait_for_position(
        &mut self,
        _node: &str,
        _channel: &Channel,
        _pos: &BinlogPosition,
        _timeout: Duration,
    ) -> Result<()> {
        Err(Self::not_modeled("a channel's progress"))
    }

    fn catch_up(
        &mut self,
        _source: &str,
        _target: &str,
        _channel: &Channel,
        _lag_below: u64,
        _timeout: Duration,
    ) -> Result<serde_json::Value> {
        Err(Self::not_modeled("a channel's progress"))
    }

    fn count_and_checksum(
        &mut self,
        _node: &str,
        _schema: &Ident,
        _table: &Ident,
    ) -> Result<Option<(u64, Option<u64>)>> {
        Err(Self::not_modeled("rows"))
    }

    fn verify(&mut self, _req: VerifyRequest<'_>) -> Result<VerifyReport> {
        Err(Self::not_modeled("rows"))
    }

    fn directory_snapshot(&mut self) -> Result<crate::directory::Snapshot> {
        Err(Self::not_modeled("the directory's functions and tables"))
    }

    fn directory_unix_secs(&mut self) -> Result<i64> {
        Ok(crate::clock::unix_secs())
    }

    fn create_objects(
        &mut self,
        _node: &str,
        _pair: &SchemaPair,
        _objects: &copy::objects::SchemaObjects,
    ) -> Result<()> {
        Err(Self::not_modeled("views, routines, triggers and events"))
    }

    fn prune(&mut self, _shards: &[u32]) -> Result<serde_json::Value> {
        Err(Self::not_modeled("rows"))
    }

    fn cutover_requested(&mut self) -> Result<bool> {
        Ok(false)
    }

    fn consume_cutover(&mut self) -> Result<()> {
        Ok(())
    }

    fn window_request(&mut self) -> Result<Option<WindowRequest>> {
        Ok(None)
    }

    fn consume_window_request(&mut self, _request: WindowRequest, phase: Phase) -> Result<()> {
        self.phases.push(phase);
        Ok(())
    }

    fn step_started(&mut self, step_no: u32, _name: &str, phase: Phase) -> Result<()> {
        self.set_step(
            step_no,
            crate::directory::journal::StepState::Running,
            phase,
        )
    }

    fn step_done(
        &mut self,
        step_no: u32,
        _outputs: &serde_json::Value,
        phase: Phase,
    ) -> Result<()> {
        self.set_step(step_no, crate::directory::journal::StepState::Done, phase)
    }

    fn step_failed(&mut self, step_no: u32, _error: &str) -> Result<()> {
        if let Some(s) = self.steps.get_mut(step_no as usize) {
            *s = crate::directory::journal::StepState::Failed;
        }
        Ok(())
    }

    fn set_step_outputs(
        &mut self,
        _step_no: u32,
        _outputs: &serde_json::Value,
        phase: Phase,
    ) -> Result<()> {
        self.phases.push(phase);
        Ok(())
    }

    fn intent(
        &mut self,
        step_no: u32,
        effect: Effect,
        node: &str,
        detail: &serde_json::Value,
    ) -> Result<u32> {
        self.journal_effect(step_no, effect, node, EffectState::Intent, detail.clone());
        Ok(self.effects.len() as u32)
    }

    fn finished(
        &mut self,
        seq: u32,
        state: EffectState,
        outputs: &serde_json::Value,
    ) -> Result<()> {
        let row = self
            .effects
            .iter_mut()
            .find(|e| e.seq == seq)
            .ok_or_else(|| Error::Internal(format!("the fake journal has no effect {seq}")))?;
        row.state = state;
        row.outputs = outputs.clone();
        Ok(())
    }

    fn set_shard_state(&mut self, shard: u32, state: ShardState) -> Result<()> {
        let at = self
            .locations
            .get_mut(&shard)
            .ok_or_else(|| Error::Usage(format!("shard {shard} is not in the directory")))?;
        at.1 = state;
        Ok(())
    }

    fn flip(&mut self, flip: &Flip) -> Result<u64> {
        match flip {
            Flip::Move { shard, to, .. } => {
                self.locations
                    .insert(*shard, (to.clone(), ShardState::ReadOnly));
                Ok(1)
            }
            Flip::Split { new_shard, .. } => {
                let at = self.locations.get_mut(new_shard).ok_or_else(|| {
                    Error::Usage(format!("shard {new_shard} is not in the directory"))
                })?;
                at.1 = ShardState::Online;
                Ok(1)
            }
            Flip::Merge(plan) => {
                self.locations.remove(&plan.retired);
                Ok(1)
            }
            Flip::Keys(_) => Err(Self::not_modeled("the mapping of keys")),
        }
    }

    fn record_reporting_follow(
        &mut self,
        _from: &str,
        _to: &str,
        _schemas: &[String],
        _at: &BinlogPosition,
    ) -> Result<()> {
        Ok(())
    }

    fn shard_location(&mut self, shard: u32) -> Result<Option<(String, String)>> {
        Ok(self
            .locations
            .get(&shard)
            .map(|(node, state)| (node.clone(), state.as_sql().to_string())))
    }

    fn key_owner(&mut self, _func_id: u32, _key: &crate::directory::Key) -> Result<Option<u32>> {
        Err(Self::not_modeled("the mapping of keys"))
    }

    fn read_only_join(&mut self, node: &str) -> Result<bool> {
        self.reach(node)?;
        let was = self.model.read_only(node).unwrap_or(false);
        self.read_only_holds.entry(node.to_string()).or_insert(was);
        Ok(was)
    }

    fn read_only_held(&mut self, node: &str) -> Result<bool> {
        Ok(self.read_only_holds.contains_key(node))
    }

    fn read_only_fenced_here(&mut self, node: &str) -> Result<bool> {
        Ok(self.read_only_holds.contains_key(node))
    }

    fn read_only_leave(&mut self, node: &str, make_writable: &[Stmt]) -> Result<()> {
        if !make_writable.is_empty() {
            self.run(node, make_writable)?;
            self.model.apply(Change::ReadOnly(node.to_string(), false));
        }
        self.read_only_holds.remove(node);
        Ok(())
    }

    fn last_effect(&mut self, effect: Effect) -> Result<Option<EffectRecord>> {
        Ok(self
            .effects
            .iter()
            .rev()
            .find(|e| e.effect == effect)
            .cloned())
    }

    fn delete_offline_shard(&mut self, shard: u32) -> Result<()> {
        match self.locations.get(&shard) {
            Some((_, ShardState::Offline)) => {
                self.locations.remove(&shard);
                self.deleted_shards.push(shard);
                Ok(())
            }
            Some((_, state)) => Err(Error::Refused(format!(
                "shard {shard} is {}, not offline: it is not deleted",
                state.as_sql()
            ))),
            None => Ok(()),
        }
    }

    fn release(&mut self, state: OpState, error: Option<&str>, phase: Phase) -> Result<()> {
        self.phases.push(phase);
        self.released = Some(Release {
            state,
            error: error.map(str::to_string),
            phase,
        });
        Ok(())
    }

    fn start_stream(&mut self, req: StreamRequest<'_>) -> Result<serde_json::Value> {
        self.reach(req.source)?;
        self.reach(req.target)?;
        self.stream_checkpoints
            .insert((req.target.to_string(), req.id.to_string()));
        Ok(serde_json::Value::Null)
    }

    fn stream_running(&self) -> bool {
        false
    }

    fn stream_catch_up(
        &mut self,
        _lag_below: u64,
        _timeout: Duration,
    ) -> Result<serde_json::Value> {
        Err(Self::not_modeled("a stream's progress"))
    }

    fn stream_to(
        &mut self,
        _pos: &BinlogPosition,
        _timeout: Duration,
    ) -> Result<serde_json::Value> {
        Err(Self::not_modeled("a stream's progress"))
    }

    fn end_stream(&mut self, target: &str, id: &str) -> Result<()> {
        self.reach(target)?;
        self.stream_checkpoints
            .remove(&(target.to_string(), id.to_string()));
        Ok(())
    }

    fn stream_checkpoint_exists(&mut self, target: &str, id: &str) -> Result<bool> {
        self.reach(target)?;
        Ok(self
            .stream_checkpoints
            .contains(&(target.to_string(), id.to_string())))
    }
}

impl FakeFleet {
    fn set_step(
        &mut self,
        step_no: u32,
        state: crate::directory::journal::StepState,
        phase: Phase,
    ) -> Result<()> {
        let row = self
            .steps
            .get_mut(step_no as usize)
            .ok_or_else(|| Error::Internal(format!("the fake journal has no step {step_no}")))?;
        *row = state;
        self.phases.push(phase);
        Ok(())
    }
}
