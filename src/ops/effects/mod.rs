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
//!
//! The folder holds one implementation per file: `live.rs` ([`Live`], and the copy and
//! catch-up it drives), `dry_run.rs` ([`DryRun`]), `hand.rs` ([`Fleet`]: the
//! servers without a journal, for the step subcommands run by hand, and what [`Live`]
//! acts through), `model.rs` (the dry run's model of what recorded effects changed) and
//! `fake.rs` ([`FakeFleet`]: that model as the whole truth, with a directory and a journal
//! in memory and no server at all, on which recovery's decisions are tested in
//! milliseconds).

use crate::copy::{self, CopyReport, Method, SchemaPair};
use crate::directory::journal::Effect;
use crate::directory::journal::{EffectRecord, EffectState, OpState, WindowRequest};
use crate::directory::phase::Phase;
use crate::directory::{NewMapping, ShardState};
use crate::error::{Error, Result};
use crate::ident::{Channel, Ident};
use crate::ops::fence::Fenced;
use crate::remote::node::OptionEdit;
use crate::server::catalog::BeforeTrigger;
use crate::server::replication::{Coordinates, ServerSettings};
use crate::server::statements::SwitchMode;
use crate::server::statements::HIDDEN_PREFIX;
use crate::server::{statements, BinlogPosition, Dialect, Filters, Server, SourceSpec, Stmt};
use crate::verify::{TablePair, VerifyOptions, VerifyReport};
use std::time::Duration;

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
    /// A key move: the donor's moving keys go to the receiver.
    Keys(crate::directory::KeyMovePlan),
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
    /// A key move: of each of these tables only the rows its condition matches, into the
    /// existing tables (`into_tables` names the same tables).
    pub rows_where: Option<&'a [(Ident, statements::Condition)]>,
    /// Create no trigger on the target (native only): a change stream keeps this copy
    /// current, and the operation creates the triggers once the stream stopped.
    pub without_triggers: bool,
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
    /// The target is kept current by the operation's change stream rather than by
    /// `channel`: each round brings the stream to the round's point and holds it there.
    pub stream: bool,
}

/// A change stream an operation starts (a key move's): what it carries, from where.
pub struct StreamRequest<'a> {
    /// Its checkpoint row's key on the target.
    pub id: &'a str,
    /// The node whose binary log it reads.
    pub source: &'a str,
    /// The node it applies to.
    pub target: &'a str,
    /// The tables and keys it carries.
    pub tables: Vec<crate::stream::MovingTable>,
    /// Where it starts when the target holds no checkpoint of it (the copy's position).
    pub start: crate::stream::Start,
}

/// The schema on a target that holds the change streams' checkpoints (the node's control
/// schema).
pub fn stream_checkpoint_schema() -> Ident {
    Ident::new("schema", statements::CONTROL_SCHEMA).expect("a plain identifier")
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
    /// A switch's mode on a node (None: the switch removed).
    Switch(String, u64, Option<SwitchMode>),
    /// The switched guards of these (schema, table) installed (true) or dropped (false)
    /// on a node.
    SwitchGuards(String, Vec<(String, String)>, bool),
}

/// What acts on the fleet's servers: connections, statements, and the verbs whose
/// statements are built here once — for a live run, a dry run and the step subcommands.
pub trait FleetEffects {
    /// A connection for reads on `node` (a read-only session in a dry run).
    fn reader(&mut self, node: &str) -> Result<&mut Server>;
    /// The read sessions of two different nodes at once, to read both sides of an
    /// operation side by side (under a fence, each round trip counts).
    fn two_readers(&mut self, a: &str, b: &str) -> Result<(&mut Server, &mut Server)>;
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
    /// The mode switch `id` stands in on `node` now; None when it does not exist.
    fn switch_now(&mut self, node: &str, id: u64) -> Result<Option<SwitchMode>>;
    /// The base tables of `schemas` on `node` that lack one of their three switched guards
    /// (a table created after the guards were installed), as (schema, table).
    fn unguarded_tables(&mut self, node: &str, schemas: &[Ident]) -> Result<Vec<(Ident, Ident)>>;
    /// The BEFORE triggers of `schemas` on `node` now, as (schema, trigger), each table's
    /// and event's in the order they fire.
    fn before_triggers(
        &mut self,
        node: &str,
        schemas: &[Ident],
    ) -> Result<Vec<(Ident, BeforeTrigger)>>;
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
    ) -> Result<(Vec<crate::ops::fence::Blocker>, usize)> {
        crate::ops::fence::blockers(self.reader(node)?, schemas)
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
    /// The shard the per-key function `func_id` maps `key` to now (None: not mapped).
    fn key_owner(&mut self, func_id: u32, key: &crate::directory::Key) -> Result<Option<u32>>;

    /// Prepares the operation's change stream (its tables checked on both sides, its
    /// checkpoint table in place on the target) and runs it in the background until
    /// stopped; after a crash it goes on from the target's checkpoint. Nothing when it
    /// runs already.
    fn start_stream(&mut self, req: StreamRequest<'_>) -> Result<serde_json::Value>;
    /// Whether this process runs the operation's change stream now.
    fn stream_running(&self) -> bool;
    /// Waits until the running stream is within `lag_below` seconds of its source.
    fn stream_catch_up(&mut self, lag_below: u64, timeout: Duration) -> Result<serde_json::Value>;
    /// Brings the stream to `pos` (a transaction boundary at or past it) and leaves it
    /// stopped there: the target then holds exactly the source's writes up to it.
    fn stream_to(&mut self, pos: &BinlogPosition, timeout: Duration) -> Result<serde_json::Value>;
    /// Stops the stream if it runs, and removes its checkpoint `id` from `target`.
    fn end_stream(&mut self, target: &str, id: &str) -> Result<()>;
    /// Whether `target` holds the checkpoint `id` of a stream.
    fn stream_checkpoint_exists(&mut self, target: &str, id: &str) -> Result<bool>;
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

    /// The newest journal row of `effect` for this operation, read from the journal now
    /// (recovery trusts the journal's rows, not a state saved before them).
    fn last_effect(&mut self, effect: Effect) -> Result<Option<EffectRecord>>;
    /// Deletes a split's new shard that never came online (a rolled-back split's).
    fn delete_offline_shard(&mut self, shard: u32) -> Result<()>;
    /// Ends this process's hold on the operation: its state, the error that ended it, and
    /// the phase it stands in.
    fn release(&mut self, state: OpState, error: Option<&str>, phase: Phase) -> Result<()>;
}

/// Where `channel` stands on a server: running only when its applier runs.
fn channel_state_on(server: &mut Server, channel: &Channel) -> Result<ChannelState> {
    Ok(match server.channel_status(channel)? {
        None => ChannelState::Absent,
        Some(s) if s.sql_running => ChannelState::Running,
        Some(_) => ChannelState::Stopped,
    })
}

/// The mode of switch `id` on a server; None when it (or the control schema) is missing.
fn switch_on(server: &mut Server, id: u64) -> Result<Option<SwitchMode>> {
    if server
        .first::<u8>(&statements::switch_table_exists())?
        .is_none()
    {
        return Ok(None);
    }
    let code: Option<u8> = server.first(&statements::switch_mode(id))?;
    match code {
        None => Ok(None),
        Some(c) => SwitchMode::from_code(c)
            .map(Some)
            .ok_or_else(|| Error::Server {
                node: server.name().to_string(),
                message: format!("switch {id} holds mode {c}, which no shardctl writes"),
            }),
    }
}

/// The base tables of `schemas` on a server without all three of their switched guards.
fn unguarded_on(server: &mut Server, schemas: &[Ident]) -> Result<Vec<(Ident, Ident)>> {
    let mut out = Vec::new();
    for schema in schemas {
        let triggers: std::collections::HashSet<Ident> = if server.schema_exists(schema)? {
            server.triggers_in_order(schema)?.into_iter().collect()
        } else {
            Default::default()
        };
        for table in visible_tables_on(server, schema)? {
            let guarded = statements::GuardEvent::ALL
                .iter()
                .all(|e| triggers.contains(&statements::switched_guard_name(&table, *e)));
            if !guarded {
                out.push((schema.clone(), table));
            }
        }
    }
    Ok(out)
}

/// The sessions of nodes `a` and `b` in `sessions` (both opened already), together.
fn two_sessions<'a>(
    sessions: &'a mut std::collections::HashMap<String, Server>,
    a: &str,
    b: &str,
) -> Result<(&'a mut Server, &'a mut Server)> {
    let (mut first, mut second) = (None, None);
    for (node, session) in sessions.iter_mut() {
        if node == a {
            first = Some(session);
        } else if node == b {
            second = Some(session);
        }
    }
    match (first, second) {
        (Some(x), Some(y)) => Ok((x, y)),
        _ => Err(Error::Internal(format!(
            "no two sessions for {a} and {b} (one node twice?)"
        ))),
    }
}

/// The BEFORE triggers of `schemas` on `server`, as (schema, trigger), in firing order.
fn before_triggers_on(
    server: &mut Server,
    schemas: &[Ident],
) -> Result<Vec<(Ident, BeforeTrigger)>> {
    let mut out = Vec::new();
    for schema in schemas {
        if server.schema_exists(schema)? {
            for t in server.before_triggers_in_order(schema)? {
                out.push((schema.clone(), t));
            }
        }
    }
    Ok(out)
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

mod dry_run;
mod fake;
mod hand;
mod live;
mod model;
mod stream;

pub use dry_run::{
    mark_runtime, DryRun, DryRunPlan, PlannedAction, PlannedStep, DRY_RUN_NEW_SHARD, DRY_RUN_OP,
};
pub use fake::{FakeFleet, Release};
pub use hand::Fleet;
pub use live::{catch_up, copy_between, gate_refusal, Live};
pub use model::FleetModel;
pub use stream::StreamRunner;
