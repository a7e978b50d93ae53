//! The recording implementation: reads through read-only sessions, keeps a model of what
//! the recorded effects would have changed, and sends nothing that writes.

use super::model::FleetModel;
use super::StreamRequest;
use super::{
    channel_state_on, visible_tables_on, Change, ChannelState, CopyRequest, Effects, FleetEffects,
    Flip, VerifyRequest,
};
use crate::config::Inventory;
use crate::copy::{self, CopyReport, Method, SchemaPair};
use crate::directory::journal::Effect;
use crate::directory::journal::{EffectRecord, EffectState, OpState, WindowRequest};
use crate::directory::phase::Phase;
use crate::directory::{Directory, NewMapping, ShardState};
use crate::error::{Error, Result};
use crate::ident::{Channel, Ident};
use crate::ops::fence::Fenced;
use crate::remote::node::{self as host, OptionEdit};
use crate::server::catalog::BeforeTrigger;
use crate::server::statements::SwitchMode;
use crate::server::{statements, BinlogPosition, Server, Stmt};
use crate::verify::{Hold, VerifyReport};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::Duration;

/// The operation id a dry run uses where the real one is not known yet; rendered as
/// `<op>`.
pub const DRY_RUN_OP: u64 = 999_999_999_001;
/// The shard id a dry run gives a split's new shard; rendered as `<new>`.
pub const DRY_RUN_NEW_SHARD: u32 = 999_999_001;

/// Replaces the dry run's placeholder numbers with markers a reader recognises.
pub fn mark_runtime(text: &str) -> String {
    text.replace(&DRY_RUN_OP.to_string(), "<op>")
        .replace(&DRY_RUN_NEW_SHARD.to_string(), "<new>")
}

/// One recorded action of a dry run.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PlannedAction {
    /// The journaled effect it belongs to, if any.
    pub effect: Option<String>,
    /// The node it acts on (`directory` for the directory).
    pub node: String,
    /// What it does, in words.
    pub what: String,
    /// The statements it sends, in order (values known only at run time marked).
    pub statements: Vec<String>,
}

/// One step of a dry run.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PlannedStep {
    /// Position from 1.
    #[serde(rename = "step")]
    pub no: u32,
    /// Step name.
    #[serde(rename = "name")]
    pub step: String,
    /// Its actions.
    pub actions: Vec<PlannedAction>,
}

/// What a dry run found: the steps a live run would take on these servers now.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct DryRunPlan {
    /// move or split.
    pub kind: String,
    /// Shard.
    pub shard: u32,
    /// Source node.
    #[serde(rename = "from")]
    pub source: String,
    /// Target node.
    #[serde(rename = "to")]
    pub target: String,
    /// The server each node runs (the dialect of its statements).
    pub flavors: BTreeMap<String, String>,
    /// Steps.
    pub steps: Vec<PlannedStep>,
    /// What the run does not show or cannot know yet.
    pub notes: Vec<String>,
}

impl DryRunPlan {
    /// Text for people.
    pub fn render(&self) -> String {
        let flavors: Vec<String> = self
            .flavors
            .iter()
            .map(|(n, f)| format!("{n}: {f}"))
            .collect();
        let mut out = format!(
            "{} shard {} from {} to {} (dry run: read-only; {})\n",
            self.kind,
            self.shard,
            self.source,
            self.target,
            flavors.join(", ")
        );
        for s in &self.steps {
            out.push_str(&format!("{:>2}. {}\n", s.no, s.step));
            for a in &s.actions {
                out.push_str(&format!("      [{}] {}\n", a.node, a.what));
                for st in &a.statements {
                    let st = st.replace('\n', "\n            ");
                    out.push_str(&format!("          {st}\n"));
                }
            }
        }
        for n in &self.notes {
            out.push_str(&format!("note: {n}\n"));
        }
        out
    }

    /// Every statement for fleet nodes in order, as (node, statement).
    pub fn fleet_statements(&self) -> Vec<(String, String)> {
        self.steps
            .iter()
            .flat_map(|s| &s.actions)
            .filter(|a| a.node != "directory")
            .flat_map(|a| a.statements.iter().map(|st| (a.node.clone(), st.clone())))
            .collect()
    }
}

/// A new mapping in words.
fn describe_mapping(mapping: &NewMapping) -> String {
    match mapping {
        NewMapping::LowerBound(k) => format!("the keys from {k} up to the next range"),
        NewMapping::Point(p) => format!("the ring's arc ending at point {}", p.to_hex()),
        NewMapping::Values(v) => {
            let list: Vec<String> = v.iter().map(|k| format!("'{k}'")).collect();
            format!("the values {}", list.join(", "))
        }
        NewMapping::Keys => "no keys yet (a per-key function's keys are assigned to it)".into(),
    }
}

/// The recording implementation: reads through read-only sessions, records every effect.
pub struct DryRun<'a> {
    inv: &'a Inventory,
    dir: Directory,
    readers: HashMap<String, Server>,
    plan: DryRunPlan,
    /// What the recorded effects changed, over what the servers show.
    model: FleetModel,
    /// The nodes whose read-only fence this run joined.
    read_only: HashSet<String>,
    /// Per node: whether it was read-only before the first holder, and whether another
    /// operation holds its read-only fence (read from the registry at the join).
    read_only_join: HashMap<String, (bool, bool)>,
    names: crate::directory::names::NameScope,
}

impl<'a> DryRun<'a> {
    /// A dry run of `kind` for `shard` from `source` to `target`.
    pub fn new(
        inv: &'a Inventory,
        dir: Directory,
        kind: &str,
        shard: u32,
        source: &str,
        target: &str,
        names: crate::directory::names::NameScope,
    ) -> DryRun<'a> {
        DryRun {
            inv,
            names,
            dir,
            readers: HashMap::new(),
            plan: DryRunPlan {
                kind: kind.into(),
                shard,
                source: source.into(),
                target: target.into(),
                flavors: BTreeMap::new(),
                steps: Vec::new(),
                notes: vec![
                    "<op> is the operation's id and <new> a split's new shard id, known when the run starts".into(),
                    "binary-log positions are read now; the run uses the copy's and the fence's".into(),
                    "the copy, the catch-up, the waits and the comparison of every table run at their step; the dry run does not read the rows".into(),
                ],
            },
            model: FleetModel::default(),
            read_only: HashSet::new(),
            read_only_join: HashMap::new(),
        }
    }

    /// The plan recorded so far.
    pub fn into_plan(self) -> DryRunPlan {
        self.plan
    }

    fn action(&mut self, effect: Option<Effect>, node: &str, what: String) {
        let step = match self.plan.steps.last_mut() {
            Some(s) => s,
            None => {
                self.plan.steps.push(PlannedStep {
                    no: 0,
                    step: "start".into(),
                    actions: Vec::new(),
                });
                self.plan.steps.last_mut().expect("just pushed")
            }
        };
        step.actions.push(PlannedAction {
            effect: effect.map(|e| e.name().to_string()),
            node: node.into(),
            what: mark_runtime(&what),
            statements: Vec::new(),
        });
    }

    fn record(&mut self, node: &str, stmts: &[Stmt]) {
        let needs_new = self
            .plan
            .steps
            .last()
            .and_then(|s| s.actions.last())
            .is_none_or(|a| a.node != node);
        if needs_new {
            self.action(None, node, "statements".into());
        }
        if let Some(a) = self
            .plan
            .steps
            .last_mut()
            .and_then(|s| s.actions.last_mut())
        {
            a.statements
                .extend(stmts.iter().map(|st| mark_runtime(&st.to_string())));
        }
    }
}

impl FleetEffects for DryRun<'_> {
    fn two_readers(&mut self, a: &str, b: &str) -> Result<(&mut Server, &mut Server)> {
        self.reader(a)?;
        self.reader(b)?;
        super::two_sessions(&mut self.readers, a, b)
    }

    fn reader(&mut self, node: &str) -> Result<&mut Server> {
        if !self.readers.contains_key(node) {
            let mut s = Server::connect_node(self.inv, node)?;
            s.make_read_only()?;
            self.plan
                .flavors
                .insert(node.to_string(), s.flavor().to_string());
            self.readers.insert(node.to_string(), s);
        }
        self.readers
            .get_mut(node)
            .ok_or_else(|| Error::Internal(format!("no connection to {node}")))
    }

    fn run(&mut self, node: &str, stmts: &[Stmt]) -> Result<u64> {
        self.reader(node)?;
        self.record(node, stmts);
        Ok(0)
    }

    fn run_unlogged(&mut self, node: &str, stmts: &[Stmt]) -> Result<()> {
        let mut all = vec![statements::sql_log_bin(false)];
        all.extend(stmts.iter().cloned());
        all.push(statements::sql_log_bin(true));
        self.run(node, &all).map(|_| ())
    }

    fn simulate(&mut self, change: Change) {
        self.model.apply(change);
    }

    fn schema_exists(&mut self, node: &str, schema: &Ident) -> Result<bool> {
        if let Some(exists) = self.model.schema(node, schema.as_str()) {
            return Ok(exists);
        }
        self.reader(node)?.schema_exists(schema)
    }

    fn channel_state(&mut self, node: &str, channel: &Channel) -> Result<ChannelState> {
        if let Some(state) = self.model.channel(node, channel.as_str()) {
            return Ok(state);
        }
        channel_state_on(self.reader(node)?, channel)
    }

    fn hidden_now(&mut self, node: &str, fenced: &[Fenced]) -> Result<Vec<Fenced>> {
        match self.model.hidden(node, fenced) {
            Some(hidden) => Ok(hidden),
            None => crate::ops::fence::hidden_now(self.reader(node)?, fenced),
        }
    }

    fn read_only_now(&mut self, node: &str) -> Result<bool> {
        match self.model.read_only(node) {
            Some(on) => Ok(on),
            None => Ok(self.reader(node)?.settings()?.read_only),
        }
    }

    fn visible_tables(&mut self, node: &str, schema: &Ident) -> Result<Vec<Ident>> {
        if let Some(false) = self.model.schema(node, schema.as_str()) {
            return Ok(Vec::new());
        }
        let visible = visible_tables_on(self.reader(node)?, schema)?;
        Ok(visible
            .into_iter()
            .filter(|t| !self.model.is_hidden(node, schema.as_str(), t.as_str()))
            .collect())
    }

    fn switch_now(&mut self, node: &str, id: u64) -> Result<Option<SwitchMode>> {
        match self.model.switch(node, id) {
            Some(mode) => Ok(mode),
            None => super::switch_on(self.reader(node)?, id),
        }
    }

    fn unguarded_tables(&mut self, node: &str, schemas: &[Ident]) -> Result<Vec<(Ident, Ident)>> {
        let read = super::unguarded_on(self.reader(node)?, schemas)?;
        Ok(read
            .into_iter()
            .filter(|(s, t)| self.model.switch_guarded(node, s.as_str(), t.as_str()) != Some(true))
            .collect())
    }

    /// Read from the server: the model keeps no triggers but the switched guards, and
    /// those are passed over where this is used.
    fn before_triggers(
        &mut self,
        node: &str,
        schemas: &[Ident],
    ) -> Result<Vec<(Ident, BeforeTrigger)>> {
        super::before_triggers_on(self.reader(node)?, schemas)
    }

    fn persist_options(&mut self, node: &str, edit: &OptionEdit) -> Result<()> {
        let path = host::option_file(self.inv, node)?;
        crate::remote::host_for(self.inv, node)?;
        let what = format!(
            "append to {} (a backup kept as {}):\n{}",
            path.display(),
            host::backup_path(&path, &edit.tag).display(),
            edit.block().trim_end()
        );
        self.action(None, node, what);
        Ok(())
    }

    fn clear_copy_staging(&mut self, node: &str, pairs: &[SchemaPair]) -> Result<()> {
        let staging = copy::physical::staging_glob(self.inv, node, pairs)?;
        self.action(
            None,
            node,
            format!("remove what killed physical copies left in {staging}, if anything"),
        );
        Ok(())
    }

    fn import_on_replica(
        &mut self,
        node: &str,
        replica: &crate::config::ReplicaSpec,
        pairs: &[SchemaPair],
    ) -> Result<copy::physical::ReplicaImport> {
        let label = format!("{node} replica {}", replica.label());
        let schemas: Vec<String> = pairs.iter().map(|p| p.to.to_string()).collect();
        self.action(
            None,
            &label,
            format!(
                "once it has applied {node} so far: with sql_log_bin = 0 there, {} created as on {node}, their tablespaces discarded, the prepared backup's files staged beside its datadir by the copy moved in and imported, then views, routines, triggers, events and foreign keys; the staging directory removed",
                schemas.join(", ")
            ),
        );
        Ok(copy::physical::ReplicaImport {
            replica: replica.label(),
            tables: 0,
            millis: 0,
        })
    }

    fn unpersist_options(&mut self, node: &str, edit: &OptionEdit) -> Result<()> {
        let path = host::option_file(self.inv, node)?;
        let what = format!(
            "remove shardctl's block for {} from {}, leaving the file as its backup {}",
            edit.tag,
            path.display(),
            host::backup_path(&path, &edit.tag).display()
        );
        self.action(None, node, what);
        Ok(())
    }

    fn restart_server(&mut self, node: &str) -> Result<()> {
        let cmd = host::restart_command(self.inv, node)?;
        let h = crate::remote::host_for(self.inv, node)?;
        let what = format!(
            "restart the server on {}: {cmd}; wait up to {}s for it to answer",
            h.describe(),
            self.inv.defaults().restart_timeout_secs
        );
        self.action(None, node, what);
        Ok(())
    }

    fn drop_schemas_on_replica(
        &mut self,
        node: &str,
        replica: &crate::config::ReplicaSpec,
        schemas: &[Ident],
        after: &crate::server::BinlogPosition,
        _live_server_ids: &[u64],
    ) -> Result<usize> {
        let label = format!("{node} replica {}", replica.label());
        self.action(
            None,
            &label,
            format!("once it has applied {node} up to {after}"),
        );
        let mut all = vec![statements::sql_log_bin(false)];
        all.extend(schemas.iter().map(statements::drop_schema_if_exists));
        all.push(statements::sql_log_bin(true));
        self.record(&label, &all);
        Ok(0)
    }
}

impl Effects for DryRun<'_> {
    fn op(&self) -> u64 {
        DRY_RUN_OP
    }

    fn names(&self) -> crate::directory::names::NameScope {
        self.names
    }

    fn is_dry_run(&self) -> bool {
        true
    }

    fn check_lease(&self) -> Result<()> {
        Ok(())
    }

    fn steps_pending(&mut self, _from_step: u32, _phase: Phase) -> Result<()> {
        Ok(())
    }

    fn copy(&mut self, req: CopyRequest<'_>) -> Result<CopyReport> {
        let coordinates = self.reader(req.source)?.coordinates()?;
        let mut tables = 0;
        let mut rows = 0;
        for p in req.pairs {
            let estimates = self.reader(req.source)?.table_rows(&p.from)?;
            tables += estimates.len();
            rows += estimates.values().sum::<u64>();
        }
        self.reader(req.target)?;
        let schemas: Vec<String> = req
            .pairs
            .iter()
            .map(|p| {
                if p.from == p.to {
                    p.from.to_string()
                } else {
                    format!("{} as {}", p.from, p.to)
                }
            })
            .collect();
        let how = match req.method {
            Method::Native => format!(
                "native: a consistent snapshot under a momentary LOCK TABLES ... READ on the shard's tables, {} parallel readers and LOAD DATA writers",
                req.workers
            ),
            Method::Dump => "dump: mariadb-dump --single-transaction piped into the client".into(),
            Method::Physical => format!(
                "physical: mariadb-backup --backup --databases of the shard's schemas on the source's host, into a staging directory on the target's host (streamed there between machines; {}, after removing what killed copies of the shard left there) and prepared there with --export, the tables created, their tablespaces discarded, the files moved in and imported, then views, routines, triggers and events{}",
                copy::physical::staging_glob(self.inv, req.target, req.pairs)?,
                if self.inv.node(req.target)?.spec.replicas.is_empty() {
                    ""
                } else {
                    "; the target has replicas: the prepared backup is first copied beside each replica's datadir, and every statement of the import runs with sql_log_bin = 0 (each replica imports its own copy next)"
                }
            ),
        };
        let what = match req.into_tables {
            Some(only) => format!(
                "copy the rows of {} of {} from {} into the existing tables (about {rows} rows in all of the schemas), {how}; position {} (read now)",
                only.iter().map(|t| t.to_string()).collect::<Vec<_>>().join(", "),
                schemas.join(", "),
                req.source,
                coordinates.position
            ),
            None => format!(
                "copy {} from {} ({tables} tables, about {rows} rows), {how}{}; position {} (read now)",
                schemas.join(", "),
                req.source,
                if req.without_triggers {
                    ", without its triggers (created once the change stream stopped)"
                } else {
                    ""
                },
                coordinates.position
            ),
        };
        let target = req.target.to_string();
        self.action(None, &target, what);
        self.simulate(Change::Schemas(
            target,
            req.pairs.iter().map(|p| p.to.to_string()).collect(),
            true,
        ));
        Ok(CopyReport {
            coordinates: Some(coordinates),
            tables,
            rows,
            ..Default::default()
        })
    }

    fn wait_for_position(
        &mut self,
        node: &str,
        channel: &Channel,
        pos: &BinlogPosition,
        timeout: Duration,
    ) -> Result<()> {
        let st = self.dialect(node)?.wait_for_position(channel, pos, 2)?;
        self.action(
            None,
            node,
            format!(
                "wait (at most {}s) until channel {channel} has applied the position read after the fence, polling:",
                timeout.as_secs()
            ),
        );
        if let Some(a) = self
            .plan
            .steps
            .last_mut()
            .and_then(|s| s.actions.last_mut())
        {
            a.statements
                .push(format!("{} -- read-only", mark_runtime(&st.to_string())));
        }
        Ok(())
    }

    fn catch_up(
        &mut self,
        source: &str,
        target: &str,
        channel: &Channel,
        lag_below: u64,
        timeout: Duration,
    ) -> Result<serde_json::Value> {
        self.reader(source)?;
        self.reader(target)?;
        self.action(
            None,
            target,
            format!(
                "wait (at most {}s) until channel {channel} is within {lag_below}s of {source}",
                timeout.as_secs()
            ),
        );
        Ok(serde_json::Value::Null)
    }

    fn count_and_checksum(
        &mut self,
        node: &str,
        schema: &Ident,
        table: &Ident,
    ) -> Result<Option<(u64, Option<u64>)>> {
        let stmts = [
            statements::count_rows(schema, table),
            statements::checksum_table(schema, table),
        ];
        self.action(None, node, format!("compare {schema}.{table} (read-only):"));
        if let Some(a) = self
            .plan
            .steps
            .last_mut()
            .and_then(|s| s.actions.last_mut())
        {
            a.statements.extend(
                stmts
                    .iter()
                    .map(|st| format!("{} -- read-only", mark_runtime(&st.to_string()))),
            );
        }
        Ok(None)
    }

    fn verify(&mut self, req: VerifyRequest<'_>) -> Result<VerifyReport> {
        let what = format!(
            "compare {} table(s) in primary-key chunks of {} rows, {} worker(s) with a snapshot on each side (read-only){}",
            req.tables.len(),
            req.opts.chunk_rows,
            req.opts.workers,
            if req.channel.is_some() {
                format!(
                    "; each round: LOCK TABLES ... READ on the source's {} table(s) while the snapshots open and the position is read, snapshots at most {}s old",
                    req.tables.len(),
                    req.opts.max_snapshot_secs
                )
            } else {
                String::new()
            }
        );
        self.action(None, req.source, what);
        if req.stream {
            // The live run holds its change stream (a process of its own, no statement):
            // halted, brought exactly to each round's point, let go again.
            self.action(
                None,
                "stream",
                "each round: the change stream halted and brought exactly to the point the source's snapshot was taken at, then let go on".to_string(),
            );
            return Ok(VerifyReport {
                tables: req.tables.len(),
                ..Default::default()
            });
        }
        if let Some(channel) = req.channel {
            // A round's holds, at the source's position as it reads now.
            let point = self.coordinates(req.source)?.position;
            let dialect = self.dialect(req.target)?;
            let holds = if req.gate.is_some() {
                vec![Hold::Pause, Hold::RunUntil(point)]
            } else {
                vec![Hold::Pause, Hold::RunUntil(point), Hold::Release]
            };
            for h in holds {
                let stmts = crate::verify::hold_statements(&dialect, channel, &h)?;
                self.run(req.target, &stmts)?;
            }
        }
        Ok(VerifyReport {
            tables: req.tables.len(),
            ..Default::default()
        })
    }

    fn directory_snapshot(&mut self) -> Result<crate::directory::Snapshot> {
        self.dir.load()
    }

    fn directory_unix_secs(&mut self) -> Result<i64> {
        let now: Option<i64> = self.dir.server().first(&statements::unix_now())?;
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
        let stmts = copy::objects::after_data_statements(pair, objects);
        self.run(node, &stmts).map(|_| ())
    }

    fn prune(&mut self, shards: &[u32]) -> Result<serde_json::Value> {
        let list: Vec<String> = shards.iter().map(|s| s.to_string()).collect();
        self.action(
            None,
            "directory",
            format!(
                "prune shards {}: each deletes, in keyset chunks, the rows it no longer owns (`shardctl prune --shard N --dry-run` shows them after the flip)",
                list.join(" and ")
            ),
        );
        Ok(serde_json::Value::Null)
    }

    fn cutover_requested(&mut self) -> Result<bool> {
        Ok(true)
    }

    fn consume_cutover(&mut self) -> Result<()> {
        Ok(())
    }

    fn window_request(&mut self) -> Result<Option<WindowRequest>> {
        Ok(Some(WindowRequest::Finalize))
    }

    fn consume_window_request(&mut self, _request: WindowRequest, _phase: Phase) -> Result<()> {
        Ok(())
    }

    fn step_started(&mut self, step_no: u32, name: &str, _phase: Phase) -> Result<()> {
        self.plan.steps.push(PlannedStep {
            no: step_no + 1,
            step: name.into(),
            actions: Vec::new(),
        });
        Ok(())
    }

    fn step_done(
        &mut self,
        _step_no: u32,
        _outputs: &serde_json::Value,
        _phase: Phase,
    ) -> Result<()> {
        Ok(())
    }

    fn step_failed(&mut self, _step_no: u32, _error: &str) -> Result<()> {
        Ok(())
    }

    fn set_step_outputs(
        &mut self,
        _step_no: u32,
        _outputs: &serde_json::Value,
        _phase: Phase,
    ) -> Result<()> {
        Ok(())
    }

    /// A journal record, not an effect on a server: a dry run flips nothing to follow.
    fn record_reporting_follow(
        &mut self,
        _from: &str,
        _to: &str,
        _schemas: &[String],
        _at: &BinlogPosition,
    ) -> Result<()> {
        Ok(())
    }

    fn intent(
        &mut self,
        _step_no: u32,
        effect: Effect,
        node: &str,
        detail: &serde_json::Value,
    ) -> Result<u32> {
        let what = format!("{} {}", effect.name(), detail);
        self.action(Some(effect), node, what);
        Ok(0)
    }

    fn finished(
        &mut self,
        _seq: u32,
        _state: EffectState,
        _outputs: &serde_json::Value,
    ) -> Result<()> {
        Ok(())
    }

    fn set_shard_state(&mut self, shard: u32, state: ShardState) -> Result<()> {
        self.action(
            None,
            "directory",
            format!(
                "shard {shard} state {} (directory version + 1)",
                state.as_sql()
            ),
        );
        Ok(())
    }

    fn flip(&mut self, flip: &Flip) -> Result<u64> {
        let what = match flip {
            Flip::Move { shard, from, to } => format!(
                "flip: shard {shard} moves from {from} to {to}, only if this operation verified the target and still holds its lease (one transaction, directory version + 1)"
            ),
            Flip::Split {
                old_shard,
                new_shard,
                mapping,
                ..
            } => format!(
                "flip: shard {new_shard} takes {} from shard {old_shard} and comes online (one transaction, directory version + 1)",
                describe_mapping(mapping)
            ),
            Flip::Merge(plan) => format!(
                "flip: shard {} takes the keys of shard {} ({}), whose location is deleted, only if this operation verified the copy and still holds its lease (one transaction, directory version + 1)",
                plan.survivor,
                plan.retired,
                match &plan.mapping {
                    crate::directory::MergeMapping::Range { drop } => format!("range bound {drop} removed"),
                    crate::directory::MergeMapping::Point { drop } => format!("ring point {drop} removed"),
                    crate::directory::MergeMapping::Values => "its values".to_string(),
                }
            ),
            Flip::Keys(plan) => format!(
                "flip: shard {} takes {} from shard {}, only if this operation verified them and still holds its lease (one transaction, directory version + 1)",
                plan.receiver,
                match &plan.mapping {
                    crate::directory::KeyMoveMapping::RangeBound { was, now } => format!("the keys between bounds {was} and {now} (the bound moves from {was} to {now})"),
                    crate::directory::KeyMoveMapping::RingPoint { was, now } => format!("the hashes between ring points {was} and {now} (the point moves)"),
                    crate::directory::KeyMoveMapping::Values { values } => format!("the values {}", values.iter().map(|v| format!("'{v}'")).collect::<Vec<_>>().join(", ")),
                    crate::directory::KeyMoveMapping::Keys { keys } => format!("the keys {} (their rows of key_shards; the change log names them)", keys.iter().map(|v| format!("'{v}'")).collect::<Vec<_>>().join(", ")),
                },
                plan.donor
            ),
        };
        self.action(None, "directory", what);
        Ok(0)
    }

    fn shard_location(&mut self, shard: u32) -> Result<Option<(String, String)>> {
        if shard == DRY_RUN_NEW_SHARD {
            return Ok(None);
        }
        self.dir.shard_location(shard)
    }

    fn key_owner(&mut self, func_id: u32, key: &crate::directory::Key) -> Result<Option<u32>> {
        self.dir.key_shard(func_id, key)
    }

    fn read_only_join(&mut self, node: &str) -> Result<bool> {
        let currently = self.reader(node)?.settings()?.read_only;
        let holders = self.dir.read_only_fence_holders(node)?;
        if holders.is_empty() && currently {
            return Err(crate::directory::journal::read_only_outside_this_directory(
                node,
            ));
        }
        let was = holders.first().map(|(_, w)| *w).unwrap_or(false);
        self.read_only_join
            .insert(node.to_string(), (was, !holders.is_empty()));
        self.action(
            None,
            "directory",
            format!("register this operation as a holder of {node}'s read-only fence"),
        );
        self.read_only.insert(node.to_string());
        Ok(currently)
    }

    fn read_only_held(&mut self, node: &str) -> Result<bool> {
        Ok(self.read_only.contains(node))
    }

    fn read_only_fenced_here(&mut self, node: &str) -> Result<bool> {
        Ok(!self.dir.read_only_fence_holders(node)?.is_empty())
    }

    fn read_only_leave(&mut self, node: &str, make_writable: &[Stmt]) -> Result<()> {
        let (was, others) = self
            .read_only_join
            .get(node)
            .copied()
            .unwrap_or((false, false));
        let what = if was || others {
            format!("leave {node}'s read-only fence; it stays read-only (another operation holds it, or it was read-only before)")
        } else {
            format!("leave {node}'s read-only fence, the last holder: {node} becomes writable")
        };
        self.action(None, "directory", what);
        if !(was || others) {
            self.record(node, make_writable);
        }
        self.read_only.remove(node);
        Ok(())
    }

    /// A dry run journals nothing, so it finds no earlier effect.
    fn last_effect(&mut self, _effect: Effect) -> Result<Option<EffectRecord>> {
        Ok(None)
    }

    fn delete_offline_shard(&mut self, shard: u32) -> Result<()> {
        self.action(
            None,
            "directory",
            format!("delete shard {shard}, which never came online"),
        );
        Ok(())
    }

    fn release(&mut self, _state: OpState, _error: Option<&str>, _phase: Phase) -> Result<()> {
        Ok(())
    }

    fn start_stream(&mut self, req: StreamRequest<'_>) -> Result<serde_json::Value> {
        self.reader(req.source)?;
        self.reader(req.target)?;
        let tables: Vec<String> = req
            .tables
            .iter()
            .map(|m| {
                format!(
                    "{} of {}.{} into {}",
                    if m.keys.is_some() {
                        "the rows of the moving keys"
                    } else {
                        "every row"
                    },
                    m.source_schema,
                    m.table,
                    m.target_schema
                )
            })
            .collect();
        let from = req
            .start
            .position
            .as_ref()
            .map(|p| p.to_string())
            .unwrap_or_else(|| format!("GTID state {}", req.start.gtid_state));
        self.action(
            None,
            req.target,
            format!(
                "change stream {}: read {}'s binary log as a replica from {from} (the copy's position, or the checkpoint in `{}`.stream_checkpoints), keep {}, apply them on {} one transaction per source transaction with the checkpoint in the same transaction; runs until the final position",
                req.id,
                req.source,
                statements::CONTROL_SCHEMA,
                tables.join(", "),
                req.target
            ),
        );
        Ok(serde_json::Value::Null)
    }

    /// A dry run starts its stream (records it) once: the recorded start is never undone.
    fn stream_running(&self) -> bool {
        self.plan
            .steps
            .iter()
            .flat_map(|s| &s.actions)
            .any(|a| a.effect.as_deref() == Some(Effect::StartStream.name()))
    }

    fn stream_catch_up(&mut self, lag_below: u64, timeout: Duration) -> Result<serde_json::Value> {
        self.action(
            None,
            "stream",
            format!(
                "wait (at most {}s) until the change stream is within {lag_below}s of its source",
                timeout.as_secs()
            ),
        );
        Ok(serde_json::Value::Null)
    }

    fn stream_to(&mut self, pos: &BinlogPosition, timeout: Duration) -> Result<serde_json::Value> {
        self.action(
            None,
            "stream",
            format!(
                "bring the change stream to the position read under the fence ({pos} now), at most {}s, and stop it there",
                timeout.as_secs()
            ),
        );
        Ok(serde_json::Value::Null)
    }

    fn end_stream(&mut self, target: &str, id: &str) -> Result<()> {
        let schema = super::stream_checkpoint_schema();
        self.run_unlogged(
            target,
            &[crate::server::stream::delete_checkpoint(&schema, id)],
        )
    }

    fn stream_checkpoint_exists(&mut self, _target: &str, _id: &str) -> Result<bool> {
        Ok(false)
    }
}
