//! One interface for everything a procedure does to the fleet and to the directory.
//!
//! The procedure (`ops::mover`) decides what to do and in which order; it reaches the
//! servers only through [`Effects`]. [`Live`] acts: it journals, connects and sends.
//! [`DryRun`] records: it reads what it needs through read-only sessions (so it shows the
//! servers' real flavor, the shard's real node and the current coordinates), keeps a small
//! model of what the recorded effects would have changed (a channel created, schemas
//! copied, tables hidden), and sends nothing that writes.
//!
//! The statements of the verbs (channels, filters, fences, drops, read-only) are built once,
//! in the trait's provided methods, from the builders in `src/server`; the two
//! implementations differ only in [`Effects::run`]: send or record. That is what makes the
//! dry run print exactly what a live run sends (`tests/dry_run.rs` compares them).

use super::fence::Fenced;
use crate::config::Inventory;
use crate::copy::{self, CopyReport, Method, SchemaPair};
use crate::directory::journal::Effect;
use crate::directory::journal::{EffectState, Lease, WindowRequest};
use crate::directory::owner::OwnerFlags;
use crate::directory::phase::Phase;
use crate::directory::{Directory, NewMapping, ShardState};
use crate::error::{Error, Result};
use crate::ident::{Channel, Ident};
use crate::remote::node::{self as host, OptionEdit};
use crate::server::replication::{Coordinates, ServerSettings};
use crate::server::statements::HIDDEN_PREFIX;
use crate::server::{
    statements, BinlogPosition, ConnectSpec, Dialect, Filters, Server, SourceSpec, Stmt,
};
use crate::verify::{Hold, TablePair, VerifyOptions, VerifyReport};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Where a channel stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChannelState {
    /// It does not exist.
    Absent,
    /// It exists and its applier is stopped.
    Stopped,
    /// Its applier runs.
    Running,
}

/// A change of where the directory places keys.
#[derive(Debug, Clone)]
pub enum Flip {
    /// A shard moves to another node.
    Move {
        /// Shard.
        shard: u32,
        /// The node it leaves.
        from: String,
        /// The node it goes to.
        to: String,
    },
    /// A split's new shard gets its mapping and comes online.
    Split {
        /// The partition function.
        func_id: u32,
        /// The shard split.
        old_shard: u32,
        /// The new shard.
        new_shard: u32,
        /// Its mapping.
        mapping: NewMapping,
    },
    /// A merge: the retired shard's keys join the survivor's; its location goes.
    Merge(crate::directory::MergePlan),
}

/// A bulk copy of schemas from one node to another.
pub struct CopyRequest<'a> {
    /// Source node.
    pub source: &'a str,
    /// Target node.
    pub target: &'a str,
    /// Schemas and the names they get.
    pub pairs: &'a [SchemaPair],
    /// Method.
    pub method: Method,
    /// Parallel workers (native).
    pub workers: usize,
    /// Counters for progress displays.
    pub progress: &'a copy::Progress,
    /// A merge: only these tables' rows, into the existing tables of `pairs`' targets.
    pub into_tables: Option<&'a [Ident]>,
}

/// A comparison of tables between two nodes (see [`crate::verify`]).
pub struct VerifyRequest<'a> {
    /// Source node.
    pub source: &'a str,
    /// Target node.
    pub target: &'a str,
    /// The tables, named on each side.
    pub tables: &'a [TablePair],
    /// The channel to hold at a consistent point for each round; None when the data
    /// stands still (under a fence, or a copy on one node).
    pub channel: Option<&'a Channel>,
    /// A merge's gated channel: the retired schemas, whose statements the channel must
    /// never apply. Before each round lets the applier run up to its consistent point,
    /// the source's binary log is read up to there (a statement touching one of them
    /// refuses the round, the applier held where it stands); after the round the applier
    /// stays at that point for the gate to let it go on.
    pub gate: Option<&'a [Ident]>,
    /// Workers, chunk size, snapshot age.
    pub opts: VerifyOptions,
}

/// What a recorded effect changes in the dry run's model of the servers.
#[derive(Debug, Clone)]
pub enum Change {
    /// Schemas now exist (true) or not (false) on a node.
    Schemas(String, Vec<String>, bool),
    /// A channel's state on a node.
    Channel(String, String, ChannelState),
    /// Tables hidden (true) or shown again (false) on a node.
    Hidden(String, Vec<Fenced>, bool),
    /// A node's read-only flag.
    ReadOnly(String, bool),
}

/// What acts on the fleet's servers: connections, statements, and the verbs whose
/// statements are built here once — for a live run, a dry run and the step subcommands.
pub trait FleetEffects {
    /// A connection for reads on `node` (a read-only session in a dry run).
    fn reader(&mut self, node: &str) -> Result<&mut Server>;
    /// Sends `stmts` to `node` (live) or records them (dry run); the rows they changed.
    fn run(&mut self, node: &str, stmts: &[Stmt]) -> Result<u64>;
    /// Like [`Effects::run`], with the session's binary logging off around them.
    fn run_unlogged(&mut self, node: &str, stmts: &[Stmt]) -> Result<()>;
    /// Updates the dry run's model; the live run reads the servers instead.
    fn simulate(&mut self, change: Change);

    /// Whether `schema` exists on `node`.
    fn schema_exists(&mut self, node: &str, schema: &Ident) -> Result<bool>;
    /// Where `channel` stands on `node`.
    fn channel_state(&mut self, node: &str, channel: &Channel) -> Result<ChannelState>;
    /// The entries of `fenced` hidden on `node` now.
    fn hidden_now(&mut self, node: &str, fenced: &[Fenced]) -> Result<Vec<Fenced>>;
    /// Whether `node` is read-only now.
    fn read_only_now(&mut self, node: &str) -> Result<bool>;
    /// The base tables of `schema` on `node` that clients can reach now (not hidden by a
    /// fence), by name.
    fn visible_tables(&mut self, node: &str, schema: &Ident) -> Result<Vec<Ident>>;
    /// The restart path: appends `edit` to `node`'s option file on its host, keeping a
    /// backup of the file; nothing when it is there already.
    fn persist_options(&mut self, node: &str, edit: &OptionEdit) -> Result<()>;
    /// The restart path: removes `edit` from `node`'s option file, leaving the file as it
    /// was; nothing when it is not there.
    fn unpersist_options(&mut self, node: &str, edit: &OptionEdit) -> Result<()>;
    /// Restarts `node`'s server through its restart command and waits until it answers
    /// again, having really restarted.
    fn restart_server(&mut self, node: &str) -> Result<()>;
    /// Drops `schemas` (where they exist) on `replica`, one of `node`'s replicas, unlogged
    /// there, once it has applied `node`'s events up to `after`: the old copy of a moved
    /// shard leaves the source's replicas directly, never through the source's binary
    /// log, which other channels (a reporting server's) may still read for that name.
    /// Returns how many of the schemas it held.
    fn drop_schemas_on_replica(
        &mut self,
        node: &str,
        replica: &crate::config::ReplicaSpec,
        schemas: &[Ident],
        after: &crate::server::BinlogPosition,
        live_server_ids: &[u64],
    ) -> Result<usize>;

    /// Removes the staging directory (a whole backup) a killed physical copy of
    /// `pairs` left beside `node`'s datadir, if there is one.
    fn clear_copy_staging(&mut self, node: &str, pairs: &[SchemaPair]) -> Result<()>;

    /// A physical copy onto `node` with replicas: imports the prepared backup it staged
    /// beside `replica`'s datadir into that replica, unlogged there (see
    /// [`copy::physical::import_on_replica`]).
    fn import_on_replica(
        &mut self,
        node: &str,
        replica: &crate::config::ReplicaSpec,
        pairs: &[SchemaPair],
    ) -> Result<copy::physical::ReplicaImport>;

    // ---- The verbs: their statements are built here, once, for both implementations. ----

    /// The node's SQL dialect.
    fn dialect(&mut self, node: &str) -> Result<Dialect> {
        Ok(self.reader(node)?.dialect())
    }

    /// The node's settings (server_id, binary log, read-only).
    fn settings(&mut self, node: &str) -> Result<ServerSettings> {
        self.reader(node)?.settings()
    }

    /// The node's binary-log coordinates now.
    fn coordinates(&mut self, node: &str) -> Result<Coordinates> {
        self.reader(node)?.coordinates()
    }

    /// When the node's server started (Unix time).
    fn server_started_at(&mut self, node: &str) -> Result<i64> {
        Ok(self
            .reader(node)?
            .first::<i64>(&statements::server_started_at())?
            .unwrap_or(0))
    }

    /// Creates `channel` on `node` pointing at `spec` (removing an older one first).
    fn point_channel(&mut self, node: &str, channel: &Channel, spec: &SourceSpec) -> Result<()> {
        self.reset_channel(node, channel)?;
        self.change_source(node, channel, spec)
    }

    /// Points `channel` on `node` at `spec`, stopping it first if it runs; an existing
    /// channel keeps its filters (the step subcommand re-points a channel this way).
    fn change_source(&mut self, node: &str, channel: &Channel, spec: &SourceSpec) -> Result<()> {
        let d = self.dialect(node)?;
        let mut stmts = Vec::new();
        if self.channel_state(node, channel)? == ChannelState::Running {
            stmts.push(d.stop_channel(channel));
        }
        stmts.push(d.change_source(channel, spec)?);
        self.channel_statements(node, channel, &stmts, ChannelState::Stopped)
    }

    /// Starts `channel`.
    fn start_channel(&mut self, node: &str, channel: &Channel) -> Result<()> {
        let st = self.dialect(node)?.start_channel(channel);
        self.channel_statements(node, channel, &[st], ChannelState::Running)
    }

    /// Starts only `channel`'s receiver: its applier stays where it is.
    fn start_receiver(&mut self, node: &str, channel: &Channel) -> Result<()> {
        let st = self.dialect(node)?.start_receiver(channel);
        self.channel_statements(node, channel, &[st], ChannelState::Stopped)
    }

    /// Stops `channel`.
    fn stop_channel(&mut self, node: &str, channel: &Channel) -> Result<()> {
        let st = self.dialect(node)?.stop_channel(channel);
        self.channel_statements(node, channel, &[st], ChannelState::Stopped)
    }

    /// Sends statements that leave `channel` in `after`.
    fn channel_statements(
        &mut self,
        node: &str,
        channel: &Channel,
        stmts: &[Stmt],
        after: ChannelState,
    ) -> Result<()> {
        self.run(node, stmts)?;
        self.simulate(Change::Channel(node.into(), channel.to_string(), after));
        Ok(())
    }

    /// Replaces `channel`'s filters (stopping it around the change if it runs).
    fn set_filters(&mut self, node: &str, channel: &Channel, filters: &Filters) -> Result<()> {
        let state = self.channel_state(node, channel)?;
        if state == ChannelState::Absent {
            return Err(Error::Internal(format!(
                "node {node}: channel {channel} does not exist; it is created before its filters"
            )));
        }
        let d = self.dialect(node)?;
        let mut stmts = Vec::new();
        if state == ChannelState::Running {
            stmts.push(d.stop_channel(channel));
        }
        stmts.extend(d.set_filters(channel, filters)?);
        if state == ChannelState::Running {
            stmts.push(d.start_channel(channel));
        }
        self.run(node, &stmts)?;
        Ok(())
    }

    /// Removes `channel` and its filters, if it exists.
    fn reset_channel(&mut self, node: &str, channel: &Channel) -> Result<()> {
        if self.channel_state(node, channel)? == ChannelState::Absent {
            return Ok(());
        }
        let d = self.dialect(node)?;
        let mut stmts = vec![d.stop_channel(channel)];
        stmts.extend(d.set_filters(channel, &Filters::default())?);
        stmts.push(d.reset_channel(channel));
        self.channel_statements(node, channel, &stmts, ChannelState::Absent)
    }

    /// Drops schemas that exist on `node` (unlogged when `logged` is false).
    fn drop_schemas(&mut self, node: &str, schemas: &[Ident], logged: bool) -> Result<()> {
        let mut present = Vec::new();
        for s in schemas {
            if self.schema_exists(node, s)? {
                present.push(s.clone());
            }
        }
        if present.is_empty() {
            return Ok(());
        }
        let stmts: Vec<Stmt> = present
            .iter()
            .map(statements::drop_schema_if_exists)
            .collect();
        if logged {
            self.run(node, &stmts)?;
        } else {
            self.run_unlogged(node, &stmts)?;
        }
        self.simulate(Change::Schemas(
            node.into(),
            present.iter().map(|s| s.to_string()).collect(),
            false,
        ));
        Ok(())
    }

    /// The base tables of `schema` on `node` as (name now, own name): the visible ones,
    /// and those the entries of `fenced` hide now — what [`Self::discard_schema`] moves.
    fn tables_by_own_name(
        &mut self,
        node: &str,
        schema: &Ident,
        fenced: &[Fenced],
    ) -> Result<Vec<(Ident, Ident)>> {
        let mut tables: Vec<(Ident, Ident)> = self
            .visible_tables(node, schema)?
            .into_iter()
            .map(|t| (t.clone(), t))
            .collect();
        for f in self.hidden_now(node, fenced)? {
            if f.schema == *schema {
                tables.push((f.hidden, f.table));
            }
        }
        Ok(tables)
    }

    /// Takes `schema` out of every client's reach at once, whatever its size: its triggers
    /// dropped (a table cannot change schema with them), its base `tables` (as their name
    /// now, their name in the trash: a fenced table gets its own back) moved into `trash`
    /// in one `RENAME TABLE`, and the emptied
    /// schema (views, routines, events, any table not listed) dropped. Unlogged, like the
    /// old copy's drop it stands for; [`Self::drop_schemas`] on `trash` later does the slow
    /// part. Nothing when `schema` is gone already.
    fn discard_schema(
        &mut self,
        node: &str,
        schema: &Ident,
        tables: &[(Ident, Ident)],
        trash: &Ident,
    ) -> Result<()> {
        if !self.schema_exists(node, schema)? {
            return Ok(());
        }
        let mut stmts: Vec<Stmt> = vec![statements::lock_wait_timeout(
            statements::FENCE_LOCK_WAIT_SECS,
        )];
        stmts.extend(
            self.reader(node)?
                .triggers_in_order(schema)?
                .iter()
                .map(|t| statements::drop_trigger_if_exists(schema, t)),
        );
        if let Some(moved) = statements::move_tables(schema, tables, trash) {
            stmts.push(statements::create_schema_if_not_exists(trash));
            stmts.push(moved);
        }
        stmts.push(statements::drop_schema_if_exists(schema));
        self.run_unlogged(node, &stmts)?;
        self.simulate(Change::Schemas(
            node.into(),
            vec![schema.to_string()],
            false,
        ));
        if !tables.is_empty() {
            self.simulate(Change::Schemas(node.into(), vec![trash.to_string()], true));
        }
        Ok(())
    }

    /// Creates `pair.to` on `node` with the (empty) tables of `objects`.
    fn create_tables(
        &mut self,
        node: &str,
        pair: &SchemaPair,
        objects: &copy::objects::SchemaObjects,
    ) -> Result<()> {
        self.run(
            node,
            &copy::objects::create_tables_statements(pair, objects),
        )?;
        self.simulate(Change::Schemas(
            node.into(),
            vec![pair.to.to_string()],
            true,
        ));
        Ok(())
    }

    /// Renames every table of `fenced` to its hidden name in one unlogged statement that
    /// waits at most `timeout_secs` for in-flight transactions (one try: error 1205 when
    /// they held it longer); nothing when already up.
    fn raise_shard_fence(
        &mut self,
        node: &str,
        fenced: &[Fenced],
        timeout_secs: u64,
    ) -> Result<()> {
        if fenced.is_empty() || !self.hidden_now(node, fenced)?.is_empty() {
            return Ok(());
        }
        self.run(node, &[statements::lock_wait_timeout(timeout_secs)])?;
        if let Some(st) = statements::rename_to_hidden(fenced) {
            self.run_unlogged(node, &[st])?;
        }
        self.simulate(Change::Hidden(node.into(), fenced.to_vec(), true));
        Ok(())
    }

    /// The open transactions of other sessions on `node` that hold the tables of
    /// `schemas` (the shard fence's RENAME would wait for them), and how many other open
    /// transactions there are.
    fn fence_blockers(
        &mut self,
        node: &str,
        schemas: &[Ident],
    ) -> Result<(Vec<super::fence::Blocker>, usize)> {
        super::fence::blockers(self.reader(node)?, schemas)
    }

    /// Ends the sessions `ids` on `node` (`KILL CONNECTION`); one already gone is no error.
    fn kill_sessions(&mut self, node: &str, ids: &[u64]) -> Result<()> {
        for &id in ids {
            match self.run(node, &[statements::kill_connection(id)]) {
                Err(Error::Server { message, .. }) if message.starts_with("error 1094 (") => {}
                other => {
                    other?;
                }
            }
        }
        Ok(())
    }

    /// Renames back the tables of `fenced` that are hidden now; how many.
    fn lower_shard_fence(&mut self, node: &str, fenced: &[Fenced]) -> Result<usize> {
        let present = self.hidden_now(node, fenced)?;
        if present.is_empty() {
            return Ok(0);
        }
        if let Some(st) = statements::rename_from_hidden(&present) {
            let bound = statements::lock_wait_timeout(statements::FENCE_LOCK_WAIT_SECS);
            self.run_unlogged(node, &[bound, st])?;
        }
        self.simulate(Change::Hidden(node.into(), present.clone(), false));
        Ok(present.len())
    }

    /// Sets the node's read-only flag, waiting at most `timeout_secs` for locks.
    fn set_read_only(&mut self, node: &str, on: bool, timeout_secs: u64) -> Result<()> {
        let stmts = self.dialect(node)?.set_read_only(on, timeout_secs);
        self.run(node, &stmts)?;
        self.simulate(Change::ReadOnly(node.into(), on));
        Ok(())
    }

    /// Enables `events` on `node` (each in its own creation context); nothing when there
    /// are none. Idempotent.
    fn enable_events(&mut self, node: &str, events: &[copy::objects::EventToEnable]) -> Result<()> {
        let stmts = copy::objects::enable_events_statements(events);
        if !stmts.is_empty() {
            self.run(node, &stmts)?;
        }
        Ok(())
    }

    /// A merge, under the retired shard's fence: the survivor's table loses any row of the
    /// retired shard's keys (an earlier attempt's copy) and takes the retired table's rows
    /// from its hidden name. Logged: the survivor's writes reach its replicas.
    #[allow(clippy::too_many_arguments)]
    fn merge_rows_within(
        &mut self,
        node: &str,
        survivor: &Ident,
        table: &Ident,
        retired: &Ident,
        hidden: &Ident,
        columns: &[Ident],
        retired_keys: &statements::Condition,
    ) -> Result<u64> {
        // The survivor's split guards (if any) still refuse the retired keys until the flip
        // widens them: the copy passes as a prune does.
        let stmts = [
            statements::mark_pruning_session(),
            statements::keep_zero_auto_increment(),
            statements::foreign_key_checks(false),
            statements::delete_where(survivor, table, retired_keys),
            statements::copy_rows_within_node(survivor, table, retired, hidden, columns),
            statements::foreign_key_checks(true),
            statements::unmark_pruning_session(),
        ];
        self.run(node, &stmts)
    }

    /// A merge rolled back: the survivor's tables lose the retired shard's keys again.
    fn unmerge_rows(
        &mut self,
        node: &str,
        tables: &[(Ident, Ident)],
        retired_keys: &[statements::Condition],
    ) -> Result<u64> {
        let mut stmts = vec![
            statements::mark_pruning_session(),
            statements::foreign_key_checks(false),
        ];
        for ((schema, table), cond) in tables.iter().zip(retired_keys) {
            stmts.push(statements::delete_where(schema, table, cond));
        }
        stmts.push(statements::foreign_key_checks(true));
        stmts.push(statements::unmark_pruning_session());
        self.run(node, &stmts)
    }

    /// Same-node split: copies one table's rows from its hidden name into the new schema.
    fn copy_rows_within(
        &mut self,
        node: &str,
        pair: &SchemaPair,
        table: &Ident,
        hidden: &Ident,
        columns: &[Ident],
    ) -> Result<u64> {
        let stmts = [
            statements::keep_zero_auto_increment(),
            statements::foreign_key_checks(false),
            statements::delete_all_rows(&pair.to, table),
            statements::copy_rows_within_node(&pair.to, table, &pair.from, hidden, columns),
            statements::foreign_key_checks(true),
        ];
        self.run(node, &stmts)
    }
}

/// Everything a procedure does to the fleet and the directory. See the module's doc.
pub trait Effects: FleetEffects {
    /// The operation's id (a placeholder in a dry run).
    fn op(&self) -> u64;
    /// The scope of the names the operation gives its channels and trash schemas (the
    /// directory's for a dry run: what the run would use).
    fn names(&self) -> crate::directory::names::NameScope;
    /// True for the recording implementation.
    fn is_dry_run(&self) -> bool;
    /// Fails once this process may no longer act for the operation.
    fn check_lease(&self) -> Result<()>;

    /// Marks the steps from `from_step` on pending again: their results no longer hold;
    /// the operation is in `phase` now.
    fn steps_pending(&mut self, from_step: u32, phase: Phase) -> Result<()>;

    /// Copies schemas between nodes; the coordinates the copy matches.
    fn copy(&mut self, req: CopyRequest<'_>) -> Result<CopyReport>;
    /// Waits until `channel` on `node` has applied up to `pos`.
    fn wait_for_position(
        &mut self,
        node: &str,
        channel: &Channel,
        pos: &BinlogPosition,
        timeout: Duration,
    ) -> Result<()>;
    /// Waits until the channel on `target` is within `lag_below` seconds of `source`.
    fn catch_up(
        &mut self,
        source: &str,
        target: &str,
        channel: &Channel,
        lag_below: u64,
        timeout: Duration,
    ) -> Result<serde_json::Value>;
    /// Rows and checksum of one table (None in a dry run: not measured).
    fn count_and_checksum(
        &mut self,
        node: &str,
        schema: &Ident,
        table: &Ident,
    ) -> Result<Option<(u64, Option<u64>)>>;
    /// Compares tables chunk by chunk (holding the channel at a consistent point when
    /// one is given). A dry run records the channel holds and what it would compare.
    fn verify(&mut self, req: VerifyRequest<'_>) -> Result<VerifyReport>;
    /// The directory as it reads now.
    fn directory_snapshot(&mut self) -> Result<crate::directory::Snapshot>;
    /// The directory's clock now, as a Unix time in seconds: what ages that outlive this
    /// process (the verified point's) are measured on, like the lease.
    fn directory_unix_secs(&mut self) -> Result<i64>;
    /// Creates the views, routines, triggers and events of `objects` in `pair.to`.
    fn create_objects(
        &mut self,
        node: &str,
        pair: &SchemaPair,
        objects: &copy::objects::SchemaObjects,
    ) -> Result<()>;
    /// Deletes, on each shard, the rows it no longer owns.
    fn prune(&mut self, shards: &[u32]) -> Result<serde_json::Value>;

    /// True once an operator gave the go-ahead for the cut-over (`shardctl cutover`); a
    /// dry run never waits for it.
    fn cutover_requested(&mut self) -> Result<bool>;
    /// Uses the go-ahead up: a later wait needs a new one.
    fn consume_cutover(&mut self) -> Result<()>;
    /// What an operator asked of the revert window (`shardctl revert`/`finalize`); a dry
    /// run shows the window ending.
    fn window_request(&mut self) -> Result<Option<WindowRequest>>;
    /// Uses up `request`, the one [`Self::window_request`] returned, journaling `phase`
    /// (the phase taking it up leads to) in the same transaction.
    fn consume_window_request(&mut self, request: WindowRequest, phase: Phase) -> Result<()>;

    /// Journals a step as started, the operation in `phase`.
    fn step_started(&mut self, step_no: u32, name: &str, phase: Phase) -> Result<()>;
    /// Journals a step as done with the procedure's state and phase.
    fn step_done(&mut self, step_no: u32, outputs: &serde_json::Value, phase: Phase) -> Result<()>;
    /// Journals a step as failed.
    fn step_failed(&mut self, step_no: u32, error: &str) -> Result<()>;
    /// Journals the procedure's state and phase without finishing the step.
    fn set_step_outputs(
        &mut self,
        step_no: u32,
        outputs: &serde_json::Value,
        phase: Phase,
    ) -> Result<()>;
    /// Journals an effect about to happen; its sequence number.
    fn intent(
        &mut self,
        step_no: u32,
        effect: Effect,
        node: &str,
        detail: &serde_json::Value,
    ) -> Result<u32>;
    /// Journals how an effect ended.
    fn finished(&mut self, seq: u32, state: EffectState, outputs: &serde_json::Value)
        -> Result<()>;

    /// Sets a shard's state in the directory.
    fn set_shard_state(&mut self, shard: u32, state: ShardState) -> Result<()>;
    /// Changes the directory's placement (one transaction); the new directory version.
    fn flip(&mut self, flip: &Flip) -> Result<u64>;
    /// Records, for every reporting server, that its copies of `schemas` (moved from
    /// `from` to `to`) need `to`'s events from `at`, its position at the flip (see
    /// [`crate::reporting::record_flip`]).
    fn record_reporting_follow(
        &mut self,
        from: &str,
        to: &str,
        schemas: &[String],
        at: &BinlogPosition,
    ) -> Result<()>;
    /// Where the directory places a shard now, and its state.
    fn shard_location(&mut self, shard: u32) -> Result<Option<(String, String)>>;
    /// Joins the holders of `node`'s read-only fence; whether it was read-only before (read
    /// from the server while the registry is locked, when nobody holds it yet).
    fn read_only_join(&mut self, node: &str) -> Result<bool>;
    /// Whether this operation holds `node`'s read-only fence.
    fn read_only_held(&mut self, node: &str) -> Result<bool>;
    /// Whether any operation of this directory holds `node`'s read-only fence.
    fn read_only_fenced_here(&mut self, node: &str) -> Result<bool>;
    /// Leaves `node`'s read-only fence, sending `make_writable` when it was the last
    /// holder and the node was writable before.
    fn read_only_leave(&mut self, node: &str, make_writable: &[Stmt]) -> Result<()>;
}

/// Where `channel` stands on a server: running only when its applier runs.
fn channel_state_on(server: &mut Server, channel: &Channel) -> Result<ChannelState> {
    Ok(match server.channel_status(channel)? {
        None => ChannelState::Absent,
        Some(s) if s.sql_running => ChannelState::Running,
        Some(_) => ChannelState::Stopped,
    })
}

/// The base tables of `schema` that are not hidden under a fence's name.
fn visible_tables_on(server: &mut Server, schema: &Ident) -> Result<Vec<Ident>> {
    if !server.schema_exists(schema)? {
        return Ok(Vec::new());
    }
    Ok(server
        .tables(schema)?
        .into_iter()
        .filter(|t| !t.is_view && !t.name.as_str().starts_with(HIDDEN_PREFIX))
        .map(|t| t.name)
        .collect())
}

/// Copies schemas between two nodes by the request's method.
pub fn copy_between(inv: &Inventory, req: CopyRequest<'_>) -> Result<CopyReport> {
    let source = ConnectSpec::for_node(inv, inv.node(req.source)?)?;
    let target = ConnectSpec::for_node(inv, inv.node(req.target)?)?;
    match req.method {
        Method::Native => {
            let opts = copy::native::NativeOptions {
                workers: req.workers,
                ..Default::default()
            };
            match req.into_tables {
                Some(tables) => copy::native::copy_rows_into(
                    &source,
                    &target,
                    req.pairs,
                    tables,
                    opts,
                    req.progress,
                ),
                None => copy::native::copy(&source, &target, req.pairs, opts, req.progress),
            }
        }
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
pub struct Fleet<'a> {
    inv: &'a Inventory,
    conns: HashMap<String, Server>,
    /// Each connection's session id and its server's start time, journaled with every
    /// intent so a later owner can end a statement this process left running.
    sessions: HashMap<String, (u64, i64)>,
}

impl<'a> Fleet<'a> {
    /// No connection yet; each opens on first use.
    pub fn new(inv: &'a Inventory) -> Fleet<'a> {
        Fleet {
            inv,
            conns: HashMap::new(),
            sessions: HashMap::new(),
        }
    }
}

/// The live implementation: journals through the directory under the operation's lease
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

impl FleetEffects for Fleet<'_> {
    fn reader(&mut self, node: &str) -> Result<&mut Server> {
        let stale = self.conns.get(node).is_none_or(Server::is_broken);
        if stale {
            let mut s = Server::connect_node(self.inv, node)?;
            let id: u64 = s.first(&statements::connection_id())?.unwrap_or(0);
            let started: i64 = s.first(&statements::server_started_at())?.unwrap_or(0);
            self.sessions.insert(node.to_string(), (id, started));
            self.conns.insert(node.to_string(), s);
        }
        self.conns
            .get_mut(node)
            .ok_or_else(|| Error::Internal(format!("no connection to {node}")))
    }

    fn run(&mut self, node: &str, stmts: &[Stmt]) -> Result<u64> {
        let s = self.reader(node)?;
        let mut n = 0;
        for st in stmts {
            n += s.exec_affected(st)?;
        }
        Ok(n)
    }

    fn run_unlogged(&mut self, node: &str, stmts: &[Stmt]) -> Result<()> {
        self.reader(node)?.exec_unlogged(stmts)
    }

    fn simulate(&mut self, _change: Change) {}

    fn schema_exists(&mut self, node: &str, schema: &Ident) -> Result<bool> {
        self.reader(node)?.schema_exists(schema)
    }

    fn channel_state(&mut self, node: &str, channel: &Channel) -> Result<ChannelState> {
        channel_state_on(self.reader(node)?, channel)
    }

    fn hidden_now(&mut self, node: &str, fenced: &[Fenced]) -> Result<Vec<Fenced>> {
        super::fence::hidden_now(self.reader(node)?, fenced)
    }

    fn read_only_now(&mut self, node: &str) -> Result<bool> {
        Ok(self.reader(node)?.settings()?.read_only)
    }

    fn visible_tables(&mut self, node: &str, schema: &Ident) -> Result<Vec<Ident>> {
        visible_tables_on(self.reader(node)?, schema)
    }

    fn clear_copy_staging(&mut self, node: &str, pairs: &[SchemaPair]) -> Result<()> {
        copy::physical::clear_staging(self.inv, node, pairs).map(|_| ())
    }

    fn import_on_replica(
        &mut self,
        node: &str,
        replica: &crate::config::ReplicaSpec,
        pairs: &[SchemaPair],
    ) -> Result<copy::physical::ReplicaImport> {
        copy::physical::import_on_replica(self.inv, node, replica, pairs)
    }

    fn persist_options(&mut self, node: &str, edit: &OptionEdit) -> Result<()> {
        host::persist(self.inv, node, edit).map(|_| ())
    }

    fn unpersist_options(&mut self, node: &str, edit: &OptionEdit) -> Result<()> {
        host::unpersist(self.inv, node, edit).map(|_| ())
    }

    fn restart_server(&mut self, node: &str) -> Result<()> {
        // The old session dies with the server; the next use opens a new one.
        self.conns.remove(node);
        self.sessions.remove(node);
        let started = Instant::now();
        host::run_restart_command(self.inv, node)?;
        let timeout = Duration::from_secs(self.inv.defaults().restart_timeout_secs);
        let deadline = started + timeout;
        loop {
            crate::signal::check()?;
            let last = match Server::connect_node(self.inv, node) {
                Ok(mut s) => {
                    let uptime: u64 = s.first(&statements::server_uptime())?.unwrap_or(u64::MAX);
                    if uptime <= started.elapsed().as_secs() + 1 {
                        return Ok(());
                    }
                    format!(
                        "it answers with an uptime of {uptime}s: the restart command did not restart it"
                    )
                }
                Err(e) => e.to_string(),
            };
            if Instant::now() >= deadline {
                return Err(Error::Timeout(format!(
                    "node {node} did not answer as restarted within {}s of its restart command (restart_timeout_secs): {last}",
                    timeout.as_secs()
                )));
            }
            std::thread::sleep(Duration::from_millis(250));
        }
    }

    fn drop_schemas_on_replica(
        &mut self,
        node: &str,
        replica: &crate::config::ReplicaSpec,
        schemas: &[Ident],
        after: &crate::server::BinlogPosition,
        live_server_ids: &[u64],
    ) -> Result<usize> {
        let address = self.inv.node(node)?.address();
        let source_server_id = self.reader(node)?.settings()?.server_id;
        let mut server = Server::connect_replica(self.inv, node, replica)?;
        // The last line of defence of a drop that never goes through a binary log: the
        // server answering must be a read-only replica, and none that serves the shard.
        let settings = server.settings()?;
        if live_server_ids.contains(&settings.server_id) {
            return Err(Error::Refused(format!(
                "{node}'s replica {} is the server the shard now lives on (server_id {}): nothing dropped there; fix the inventory's replicas: of {node}",
                replica.label(),
                settings.server_id
            )));
        }
        if !settings.read_only {
            return Err(Error::Refused(format!(
                "{node}'s replica {} is writable (read_only off): a server taking writes is not dropped as a replica; make it read-only or take it out of {node}'s replicas:",
                replica.label()
            )));
        }
        let timeout = Duration::from_secs(self.inv.defaults().wait_timeout_secs);
        server.wait_applied_from_server(&address, Some(source_server_id), after, timeout)?;
        let mut present = Vec::new();
        for schema in schemas {
            if server.schema_exists(schema)? {
                present.push(statements::drop_schema_if_exists(schema));
            }
        }
        if !present.is_empty() {
            server.exec_unlogged(&present)?;
        }
        Ok(present.len())
    }
}

impl FleetEffects for Live<'_> {
    fn reader(&mut self, node: &str) -> Result<&mut Server> {
        self.fleet.reader(node)
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
        copy::objects::create_after_data(self.reader(node)?, pair, objects)
    }

    fn prune(&mut self, shards: &[u32]) -> Result<serde_json::Value> {
        let quiet = |_: &str, _: u64, _: u64, _: u64| {};
        let mut out = Vec::new();
        for &shard in shards {
            let pending = self
                .dir
                .active_operations()?
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
                let snap = self.dir.load()?;
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
        }
    }

    fn shard_location(&mut self, shard: u32) -> Result<Option<(String, String)>> {
        self.dir.shard_location(shard)
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
}

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
    }
}

/// The recording implementation: reads through read-only sessions, records every effect.
pub struct DryRun<'a> {
    inv: &'a Inventory,
    dir: Directory,
    readers: HashMap<String, Server>,
    plan: DryRunPlan,
    schemas: HashMap<(String, String), bool>,
    channels: HashMap<(String, String), ChannelState>,
    hidden: HashMap<String, HashSet<(String, String)>>,
    read_only: HashSet<String>,
    read_only_flag: HashMap<String, bool>,
    hidden_originals: HashMap<String, HashSet<(String, String)>>,
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
            schemas: HashMap::new(),
            channels: HashMap::new(),
            hidden: HashMap::new(),
            read_only: HashSet::new(),
            read_only_flag: HashMap::new(),
            hidden_originals: HashMap::new(),
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
        match change {
            Change::Schemas(node, schemas, exist) => {
                for s in schemas {
                    self.schemas.insert((node.clone(), s), exist);
                }
            }
            Change::Channel(node, channel, state) => {
                self.channels.insert((node, channel), state);
            }
            Change::ReadOnly(node, on) => {
                self.read_only_flag.insert(node, on);
            }
            Change::Hidden(node, fenced, hidden) => {
                let set = self.hidden.entry(node.clone()).or_default();
                for f in &fenced {
                    let key = (f.schema.to_string(), f.hidden.to_string());
                    if hidden {
                        set.insert(key);
                    } else {
                        set.remove(&key);
                    }
                }
                let originals = self.hidden_originals.entry(node).or_default();
                for f in fenced {
                    let key = (f.schema.to_string(), f.table.to_string());
                    if hidden {
                        originals.insert(key);
                    } else {
                        originals.remove(&key);
                    }
                }
            }
        }
    }

    fn schema_exists(&mut self, node: &str, schema: &Ident) -> Result<bool> {
        if let Some(e) = self.schemas.get(&(node.to_string(), schema.to_string())) {
            return Ok(*e);
        }
        self.reader(node)?.schema_exists(schema)
    }

    fn channel_state(&mut self, node: &str, channel: &Channel) -> Result<ChannelState> {
        if let Some(s) = self.channels.get(&(node.to_string(), channel.to_string())) {
            return Ok(*s);
        }
        channel_state_on(self.reader(node)?, channel)
    }

    fn hidden_now(&mut self, node: &str, fenced: &[Fenced]) -> Result<Vec<Fenced>> {
        match self.hidden.get(node) {
            Some(set) => Ok(fenced
                .iter()
                .filter(|f| set.contains(&(f.schema.to_string(), f.hidden.to_string())))
                .cloned()
                .collect()),
            None => super::fence::hidden_now(self.reader(node)?, fenced),
        }
    }

    fn read_only_now(&mut self, node: &str) -> Result<bool> {
        match self.read_only_flag.get(node) {
            Some(on) => Ok(*on),
            None => Ok(self.reader(node)?.settings()?.read_only),
        }
    }

    fn visible_tables(&mut self, node: &str, schema: &Ident) -> Result<Vec<Ident>> {
        if let Some(false) = self.schemas.get(&(node.to_string(), schema.to_string())) {
            return Ok(Vec::new());
        }
        let hidden = self.hidden_originals.get(node).cloned().unwrap_or_default();
        Ok(visible_tables_on(self.reader(node)?, schema)?
            .into_iter()
            .filter(|t| !hidden.contains(&(schema.to_string(), t.to_string())))
            .collect())
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
                "copy {} from {} ({tables} tables, about {rows} rows), {how}; position {} (read now)",
                schemas.join(", "),
                req.source,
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
}
