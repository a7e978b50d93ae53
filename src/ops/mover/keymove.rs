//! A key move's own parts of the procedure: some of the donor's keys go to the receiver,
//! an existing shard of the same function, on another node or the same one. The rows of
//! those keys are copied into the receiver's tables (native, at a consistent point), a
//! change stream read from the donor's binary log keeps them current (no channel: a
//! channel filters by table, never by key, and a server cannot replicate from itself),
//! they are compared outside any fence, and the key fence (the donor's switched guards on
//! `keys`) refuses only the moving keys while the stream reaches the final position and
//! the directory flips them. The switch stays on as the donor's guard against routers that
//! still send it those keys; once its rows of them are pruned, literal guards take over.

use super::{Effect, Mover};
use crate::directory::{Shard, Snapshot};
use crate::error::{Error, Result};
use crate::ident::Ident;
use crate::ops::effects::{Effects, StreamRequest};
use crate::server::statements::{self, Condition};

impl<E: Effects> Mover<'_, E> {
    fn key_plan(&self) -> Result<crate::directory::KeyMovePlan> {
        self.plan
            .key_move()
            .cloned()
            .ok_or_else(|| Error::Internal("a key move's step outside a key move".into()))
    }

    /// The receiver's sharded tables, each with the condition selecting the moving keys
    /// (the same condition holds on the donor's table of that name: the same column).
    pub(super) fn moved_keys(&mut self) -> Result<Vec<(Ident, Ident, Condition)>> {
        let plan = self.key_plan()?;
        let snap = self.fx.directory_snapshot()?;
        let mut out = Vec::new();
        for t in snap.tables.iter().filter(|t| t.func_id == plan.func_id) {
            let receiver = Ident::new(
                "schema",
                &crate::directory::shard_schema(&t.schema, plan.receiver),
            )?;
            let column = Ident::new("column", &t.column)?;
            out.push((
                receiver,
                Ident::new("table", &t.table)?,
                crate::ops::keys::moving_keys(&snap, &plan, &column)?,
            ));
        }
        Ok(out)
    }

    /// The key fence's condition for one of the donor's tables: its moving keys when it is
    /// sharded, none otherwise (a global table's copy moves nothing).
    pub(super) fn key_fence_condition(
        &mut self,
        snap: &Snapshot,
        column: Option<&Ident>,
    ) -> Result<Condition> {
        let plan = self.key_plan()?;
        match column {
            Some(c) => crate::ops::keys::moving_keys(snap, &plan, c),
            None => Ok(Condition {
                sql: "(FALSE)".into(),
                params: Vec::new(),
            }),
        }
    }

    /// The id of the key move's change stream: its checkpoint row on the receiver's node.
    pub(super) fn stream_id(&self) -> String {
        format!(
            "shardctl{}",
            self.fx
                .names()
                .param()
                .map(|p| format!("_{p}"))
                .unwrap_or_default()
        ) + &format!("_op{}", self.fx.op())
    }

    /// Starts the change stream (again, after a crash: from the target's checkpoint);
    /// nothing when it runs.
    pub(super) fn ensure_stream(&mut self) -> Result<serde_json::Value> {
        let coords = self.state.coordinates.clone().ok_or_else(|| {
            Error::Internal("no copy coordinates: the backup step has not run".into())
        })?;
        if self.fx.stream_running() {
            return Ok(serde_json::json!({"stream": self.stream_id(), "running": true}));
        }
        let tables = if self.plan.is_key_move() {
            self.key_move_stream_tables()?
        } else {
            // A whole-shard operation (on one node, or via stream): every row of the
            // tables it compares (a move's or split's every base table, a merge's sharded
            // ones), under their own names.
            self.table_pairs()?
                .into_iter()
                .map(|t| crate::stream::MovingTable {
                    source_schema: t.source_schema,
                    source_table_now: (t.source_table != t.target_table).then_some(t.source_table),
                    target_schema: t.target_schema,
                    table: t.target_table,
                    keys: None,
                })
                .collect()
        };
        let id = self.stream_id();
        let (source, target) = (self.source.clone(), self.target.clone());
        let detail =
            serde_json::json!({"stream": id, "from": coords.position, "tables": tables.len()});
        self.effect(Effect::StartStream, &target, detail, |m| {
            m.fx.start_stream(StreamRequest {
                id: &id,
                source: &source,
                target: &target,
                tables,
                start: crate::stream::Start::from(&coords),
            })
        })
    }

    /// A key move's tables for the stream: the function's sharded tables, each filtered to
    /// the moving keys.
    fn key_move_stream_tables(&mut self) -> Result<Vec<crate::stream::MovingTable>> {
        let plan = self.key_plan()?;
        let snap = self.fx.directory_snapshot()?;
        let func = snap
            .function_by_id(plan.func_id)
            .ok_or_else(|| Error::Internal(format!("no function {}", plan.func_id)))?;
        let coverage = crate::ops::keys::moving_coverage(&snap, &plan)?;
        let mut tables = Vec::new();
        for t in snap.tables.iter().filter(|t| t.func_id == plan.func_id) {
            let column = Ident::new("column", &t.column)?;
            let filter = crate::stream::KeyFilter::of_coverage(&coverage, func.key_type)?;
            tables.push(crate::stream::MovingTable {
                source_schema: Ident::new(
                    "schema",
                    &crate::directory::shard_schema(&t.schema, plan.donor),
                )?,
                target_schema: Ident::new(
                    "schema",
                    &crate::directory::shard_schema(&t.schema, plan.receiver),
                )?,
                table: Ident::new("table", &t.table)?,
                source_table_now: None,
                keys: Some((column, filter)),
            });
        }
        Ok(tables)
    }

    /// Stops the change stream and removes its checkpoint from the receiver's node.
    pub(super) fn end_stream(&mut self) -> Result<()> {
        let (target, id) = (self.target.clone(), self.stream_id());
        self.effect(
            Effect::EndStream,
            &target,
            serde_json::json!({"stream": id}),
            |m| m.fx.end_stream(&target, &id),
        )
    }

    /// Before anything changes: both shards' schemas where they live, the same tables
    /// defined the same way on both, and no trigger on the receiver's moving tables other
    /// than shardctl's guards (the donor's binary log already holds the rows a trigger
    /// wrote; applied again, a trigger would write them twice).
    pub(super) fn key_move_preflight(&mut self) -> Result<serde_json::Value> {
        let plan = self.key_plan()?;
        let (source, target) = (self.source.clone(), self.target.clone());
        for p in self.pairs.clone() {
            if !self.fx.schema_exists(&source, &p.from)? {
                return Err(Error::Refused(format!(
                    "the donor's node {source} has no schema {}",
                    p.from
                )));
            }
            if !self.fx.schema_exists(&target, &p.to)? {
                return Err(Error::Refused(format!(
                    "the receiver's node {target} has no schema {}",
                    p.to
                )));
            }
        }
        self.merge_tables_match()?;
        self.key_move_carries_every_row()?;
        // The change stream reads the donor's binary log with the replication account.
        self.replication_account_reaches_source()?;
        for (schema, table, _) in self.moved_keys()? {
            if let Some(name) = self.own_trigger_on(&target, &schema, &table)? {
                return Err(Error::Refused(format!(
                    "{schema}.{table} on {target} has trigger {name}: the change stream would apply the rows it wrote on the donor and then fire it again; a key move takes tables without triggers of their own"
                )));
            }
        }
        Ok(serde_json::json!({
            "donor": plan.donor,
            "receiver": plan.receiver,
            "same_node": source == target,
            "tables": self.pairs.len(),
        }))
    }

    /// A key move carries the rows of the sharded tables' moving keys only. Refused: a
    /// table of the donor's schemas the directory maps neither as sharded nor as global
    /// that holds rows (they would stay behind their keys), a foreign key between a
    /// sharded table and a table that is not one of the function's sharded tables (a
    /// cascade fires no trigger and is not logged: it would pass the key fence and the
    /// stream), and a string key in a column whose character set is not UTF-8 (the keys are
    /// compared as UTF-8 bytes: such a column's keys would match nothing, and nothing would
    /// move while the directory says it did).
    fn key_move_carries_every_row(&mut self) -> Result<()> {
        let plan = self.key_plan()?;
        let source = self.source.clone();
        let snap = self.fx.directory_snapshot()?;
        let donor = snap.shard(plan.donor)?.clone();
        let unmapped =
            crate::ops::checks::unmapped_tables(self.fx.reader(&source)?, &snap, &donor, &[])?;
        for t in unmapped {
            let any: Option<u8> = self.fx.reader(&source)?.first(&statements::any_where(
                &t.schema,
                &t.now,
                &Condition {
                    sql: "(TRUE)".into(),
                    params: Vec::new(),
                },
            ))?;
            if any.is_some() {
                return Err(Error::Refused(format!(
                    "{}.{} on {source} is neither sharded nor global and holds rows: a key move carries the sharded tables' rows only, these would stay behind their keys; register it (`shardctl table add`) or empty it",
                    t.schema, t.table
                )));
            }
        }
        let sharded: Vec<String> = snap
            .tables
            .iter()
            .filter(|t| t.func_id == plan.func_id)
            .map(|t| t.table.to_ascii_lowercase())
            .collect();
        let string_keys = snap
            .function_by_id(plan.func_id)
            .is_some_and(|f| f.key_type == crate::directory::KeyType::String);
        for p in self.pairs.clone() {
            for fk in self.fx.reader(&source)?.foreign_keys(&p.from)? {
                let child = sharded.contains(&fk.table.to_ascii_lowercase());
                let parent = sharded.contains(&fk.referenced_table.to_ascii_lowercase());
                if child != parent {
                    return Err(Error::Refused(format!(
                        "{}.{} has a foreign key to {}, and only one of the two is a sharded table of the function: a cascade between them would pass the key fence unseen; a key move takes foreign keys between its sharded tables only",
                        p.from, fk.table, fk.referenced_table
                    )));
                }
            }
            if !string_keys {
                continue;
            }
            for t in snap.tables.iter().filter(|t| t.func_id == plan.func_id) {
                if crate::directory::shard_schema(&t.schema, plan.donor) != p.from.as_str() {
                    continue;
                }
                let (table, column) = (
                    Ident::new("table", &t.table)?,
                    Ident::new("column", &t.column)?,
                );
                let charset: Option<Option<String>> = self
                    .fx
                    .reader(&source)?
                    .first(&statements::column_charset(&p.from, &table, &column))?;
                if let Some(Some(cs)) = charset {
                    let utf8 = cs.starts_with("utf8") || cs == "ascii" || cs == "binary";
                    if !utf8 {
                        return Err(Error::Refused(format!(
                            "{}.{}.{column} holds its keys in {cs}: a key move compares keys as UTF-8 bytes and would move none of them; it takes string keys in UTF-8, ASCII or binary columns",
                            p.from, t.table
                        )));
                    }
                }
            }
        }
        Ok(())
    }

    /// The receiver's literal guards (a split made it, or an earlier key move), rewritten
    /// right after the flip to accept the keys it now owns (until then they go on refusing
    /// them: the stream's session passes them). Nothing when it has none.
    pub(super) fn widen_receiver_guards(&mut self) -> Result<()> {
        let plan = self.key_plan()?;
        let snap = self.fx.directory_snapshot()?;
        let after = crate::ops::keys::after_key_move(
            crate::ops::keys::before_key_move(snap.clone(), &plan)?,
            &plan,
        )?;
        let receiver = snap.shard(plan.receiver)?.clone();
        let target = self.target.clone();
        let stmts = if self.per_key(&snap, &plan) {
            // A per-key shard's literal guards refuse the keys of the last move that took
            // keys from it, which may be some of those it takes back now: they go.
            self.per_key_guards(&snap, &receiver, &target, None)?
        } else {
            self.literal_guards_of(&after, &receiver, &target, true)?
        };
        if stmts.is_empty() {
            return Ok(());
        }
        self.effect(
            Effect::Guard,
            &target,
            serde_json::json!({"shard": receiver.id, "widened": true}),
            |m| {
                m.fx.run(&target, &[statements::lock_wait_timeout(10)])?;
                m.fx.run_unlogged(&target, &stmts)
            },
        )
    }

    /// The literal guard triggers that make `shard`'s sharded tables on `node` refuse the
    /// keys it does not own under `snap`; with `only_where_guarded`, only on tables that
    /// carry guards already.
    pub(super) fn literal_guards_of(
        &mut self,
        snap: &Snapshot,
        shard: &Shard,
        node: &str,
        only_where_guarded: bool,
    ) -> Result<Vec<crate::server::Stmt>> {
        let dialect = self.fx.dialect(node)?;
        let mut stmts = Vec::new();
        for t in snap.tables.iter().filter(|t| t.func_id == shard.func_id) {
            let schema = Ident::new(
                "schema",
                &crate::directory::shard_schema(&t.schema, shard.id),
            )?;
            let table = Ident::new("table", &t.table)?;
            if only_where_guarded {
                let triggers = self.fx.reader(node)?.triggers_in_order(&schema)?;
                let guarded = statements::GuardEvent::ALL
                    .iter()
                    .any(|e| triggers.contains(&statements::guard_trigger_name(&table, *e)));
                if !guarded {
                    continue;
                }
            }
            let column = Ident::new("column", &t.column)?;
            let not_owned = crate::prune::predicate::not_owned(snap, shard, &column)?;
            for event in statements::GuardEvent::ALL {
                stmts.extend(dialect.install_guard(
                    &schema, &table, &table, event, &column, &not_owned, shard.id,
                ));
            }
        }
        Ok(stmts)
    }

    /// Whether the move's function maps keys one by one.
    fn per_key(&self, snap: &Snapshot, plan: &crate::directory::KeyMovePlan) -> bool {
        snap.function_by_id(plan.func_id)
            .is_some_and(|f| f.sharding_type == crate::directory::ShardingType::Key)
    }

    /// A per-key shard's literal guards: which keys it does not own is a directory row
    /// per key on another server, so no condition of its own rows says it. With `moved`,
    /// guards refusing that move's keys (replacing those of an earlier move); without,
    /// the statements removing the guards its tables carry.
    fn per_key_guards(
        &mut self,
        snap: &Snapshot,
        shard: &Shard,
        node: &str,
        moved: Option<&crate::directory::KeyMovePlan>,
    ) -> Result<Vec<crate::server::Stmt>> {
        let dialect = self.fx.dialect(node)?;
        let mut stmts = Vec::new();
        for t in snap.tables.iter().filter(|t| t.func_id == shard.func_id) {
            let schema = Ident::new(
                "schema",
                &crate::directory::shard_schema(&t.schema, shard.id),
            )?;
            let table = Ident::new("table", &t.table)?;
            let column = Ident::new("column", &t.column)?;
            match moved {
                Some(plan) => {
                    let refused = crate::ops::keys::moving_keys(snap, plan, &column)?;
                    for event in statements::GuardEvent::ALL {
                        stmts.extend(dialect.install_guard(
                            &schema, &table, &table, event, &column, &refused, shard.id,
                        ));
                    }
                }
                None => {
                    let triggers = self.fx.reader(node)?.triggers_in_order(&schema)?;
                    for event in statements::GuardEvent::ALL {
                        let name = statements::guard_trigger_name(&table, event);
                        if triggers.contains(&name) {
                            stmts.push(statements::drop_trigger_if_exists(&schema, &name));
                        }
                    }
                }
            }
        }
        Ok(stmts)
    }

    /// A key move's donor once the moved keys' rows are pruned: literal guards refusing
    /// every key it does not own take over from the switched ones (the keys stay refused
    /// throughout), which then go with their switch row.
    pub(super) fn settle_key_move_guards(&mut self) -> Result<()> {
        let plan = self.key_plan()?;
        let (source, id) = (self.source.clone(), self.switch_id());
        if self.fx.switch_now(&source, id)?.is_none() {
            return Ok(());
        }
        let snap = self.fx.directory_snapshot()?;
        let after = crate::ops::keys::after_key_move(snap, &plan)?;
        let donor = after.shard(plan.donor)?.clone();
        let stmts = if self.per_key(&after, &plan) {
            self.per_key_guards(&after, &donor, &source, Some(&plan))?
        } else {
            self.literal_guards_of(&after, &donor, &source, false)?
        };
        if !stmts.is_empty() {
            self.effect(
                Effect::SettleGuards,
                &source,
                serde_json::json!({"shard": donor.id}),
                |m| {
                    m.fx.run(&source, &[statements::lock_wait_timeout(10)])?;
                    m.fx.run_unlogged(&source, &stmts)
                },
            )?;
        }
        self.disarm_switch()
    }
}
