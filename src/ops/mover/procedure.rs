//! The steps of a move or split. Each is idempotent: run again after a crash at any point,
//! it checks what is already in place and does only what is missing. Every change goes
//! through [`Effects`] inside [`Mover::effect`], so a dry run follows exactly this code.

use super::VerifiedPoint;
use super::{Effect, Identities, Mover, OperationPlan};
use crate::copy::{self, Method};
use crate::directory::ShardState;
use crate::error::{Error, Result};
use crate::ident::Ident;
use crate::ops::effects::{ChannelState, CopyRequest, Effects, Flip, VerifyRequest};
use crate::output::log;
use crate::playbook::{Fence, Step, VerifyParams};
use crate::server::replication::{same_binlog, Coordinates};
use crate::server::statements::SwitchMode;
use crate::server::{
    definitions, statements, ConnectSpec, Filters, Server, SourceSpec, StartAt, Stmt,
};
use crate::verify::{Hold, TablePair, VerifyOptions, VerifyReport};
use std::time::{Duration, Instant};

impl<E: Effects> Mover<'_, E> {
    /// `await-cutover`: keeps the copy within `lag_below_secs` of the source, unfenced,
    /// until the cut-over may start — `shardctl cutover OP` (manual, or before a window),
    /// the window (UTC), or at once (auto) — and every `before-cutover` hook passes; a
    /// failing hook postpones it to the next check. Resumed, it waits again (the go-ahead
    /// stays journaled). A dry run does not wait.
    fn await_cutover(
        &mut self,
        p: &crate::playbook::AwaitCutoverParams,
    ) -> Result<serde_json::Value> {
        use crate::config::HookStage;
        use crate::playbook::{CutoverMode, CutoverWindow};
        let started = Instant::now();
        let (source, target, channel) = (
            self.source.clone(),
            self.target.clone(),
            self.channel.clone(),
        );
        let mut announced = false;
        let mut postponed = 0u32;
        let max_age = self.playbook.verified_max_age_secs();
        let allowed = |p: &crate::playbook::AwaitCutoverParams, requested: bool| match p.mode {
            CutoverMode::Auto => true,
            CutoverMode::Manual => requested,
            CutoverMode::Window => {
                requested
                    || p.window
                        .is_some_and(|w| w.contains(CutoverWindow::minute_now()))
            }
        };
        loop {
            crate::signal::check()?;
            self.fx.check_lease()?;
            self.check_identity()?;
            // A lag spike while waiting (a batch job, a long ALTER on the source) is not a
            // failure: the copy is not ready yet, and the wait goes on.
            let lag = {
                let caught_up = if self.streams() {
                    self.ensure_stream()?;
                    self.fx
                        .stream_catch_up(p.lag_below_secs, Duration::from_secs(30))
                } else if self.gated() {
                    self.gated_catch_up(p.lag_below_secs, Duration::from_secs(30))
                } else {
                    self.fx.catch_up(
                        &source,
                        &target,
                        &channel,
                        p.lag_below_secs,
                        Duration::from_secs(30),
                    )
                };
                match caught_up {
                    Ok(lag) => lag,
                    Err(Error::Timeout(why)) => {
                        crate::output::log(1, &format!("not ready for the cut-over yet: {why}"));
                        continue;
                    }
                    Err(e) => return Err(e),
                }
            };
            if !announced {
                announced = true;
                self.hook_in_background(HookStage::Ready);
                crate::output::log(
                    1,
                    &format!(
                        "operation {}: ready for its cut-over ({})",
                        self.fx.op(),
                        match (p.mode, p.window) {
                            (CutoverMode::Manual, _) =>
                                "waiting for `shardctl cutover`".to_string(),
                            (CutoverMode::Window, Some(w)) =>
                                format!("waiting for the window {} UTC", String::from(w)),
                            _ => "now".to_string(),
                        }
                    ),
                );
            }
            let requested = self.fx.cutover_requested()?;
            if allowed(p, requested) {
                // The verified point must stay young enough for lock, the final wait and
                // confirm: verify again (outside the fence) past half its allowed age, then
                // look at the go-ahead again (a window may have closed meanwhile) and ask the
                // hooks last.
                self.reverify_if_older_than(Some(max_age / 2))?;
                let requested = self.fx.cutover_requested()?;
                if allowed(p, requested) && self.before_cutover_hooks(p) {
                    // The go-ahead is used up: a later wait (a run that lifted its fence,
                    // a re-copy) waits for a new one.
                    self.fx.consume_cutover()?;
                    return Ok(serde_json::json!({
                        "waited_ms": started.elapsed().as_millis() as u64,
                        "postponed_by_hooks": postponed,
                        "lag": lag,
                    }));
                }
                postponed += 1;
            }
            let until = Instant::now() + Duration::from_secs(p.check_every_secs);
            while Instant::now() < until {
                crate::signal::check()?;
                std::thread::sleep(Duration::from_millis(100));
            }
        }
    }

    /// The inventory's `before-cutover` hooks and the step's own; true when all passed
    /// (always in a dry run).
    fn before_cutover_hooks(&self, p: &crate::playbook::AwaitCutoverParams) -> bool {
        let inventory = self.hook(crate::config::HookStage::BeforeCutover);
        let own = self.fx.is_dry_run()
            || crate::ops::hooks::run_stage(
                &p.hooks,
                crate::config::HookStage::BeforeCutover,
                &self.hook_document(),
            );
        inventory && own
    }

    pub(super) fn run_step(&mut self, step: &Step) -> Result<serde_json::Value> {
        if !matches!(step, Step::Preflight(_)) {
            self.check_identity()?;
        }
        if self.streams() {
            // No channel: the change stream reads the source's binary log itself, keeps the
            // moving rows (a key move's keys; a split's or merge's on one node, every row
            // of its tables) and applies them to the target.
            match step {
                Step::ChangeMaster(_) | Step::Filter(_) => {
                    return Ok(
                        serde_json::json!({"skipped": "the change stream reads the source's binary log itself: no channel"}),
                    )
                }
                Step::StartReplication(_) => return self.ensure_stream(),
                Step::Wait(w) if w.until.is_none() => {
                    self.ensure_stream()?;
                    return self.fx.stream_catch_up(
                        w.lag_below_secs.unwrap_or(1),
                        Duration::from_secs(w.timeout_secs),
                    );
                }
                Step::Guard(_) if self.plan.is_key_move() => {
                    return Ok(
                        serde_json::json!({"skipped": "the donor's switched guards refuse the moved keys from the fence on"}),
                    )
                }
                Step::Prune(_) if self.plan.is_key_move() => return self.prune_donor(),
                Step::ResetReplication(_) => {
                    self.end_stream()?;
                    return Ok(serde_json::json!({"stream": self.stream_id(), "ended": true}));
                }
                _ => {}
            }
        }
        match step {
            Step::Preflight(_) => self.preflight(),
            Step::Backup(p) => self.backup(p.method, p.workers),
            Step::ChangeMaster(_) => self.change_master(),
            Step::Filter(_) => self.filter(),
            Step::StartReplication(_) if self.gated() => {
                self.start_gated_channel()?;
                Ok(serde_json::Value::Null)
            }
            Step::StartReplication(_) => {
                let (target, channel) = (self.target.clone(), self.channel.clone());
                self.effect(
                    Effect::StartChannel,
                    &target,
                    serde_json::json!({"channel": channel}),
                    |m| m.fx.start_channel(&target, &channel),
                )?;
                Ok(serde_json::Value::Null)
            }
            Step::Wait(w) => {
                let timeout = Duration::from_secs(w.timeout_secs);
                if w.until.is_some() {
                    self.wait_final(timeout)
                } else if self.gated() {
                    self.gated_catch_up(w.lag_below_secs.unwrap_or(1), timeout)
                } else {
                    let (source, target, channel) = (
                        self.source.clone(),
                        self.target.clone(),
                        self.channel.clone(),
                    );
                    self.fx.catch_up(
                        &source,
                        &target,
                        &channel,
                        w.lag_below_secs.unwrap_or(1),
                        timeout,
                    )
                }
            }
            Step::Lock(l) => self.lock(l),
            Step::Verify(p) => self.verify(p),
            Step::AwaitCutover(p) => self.await_cutover(p),
            Step::Confirm(_) => self.confirm(),
            Step::Guard(_) => self.guard(),
            Step::Flip(_) => self.flip(),
            Step::Prune(_) => self.prune_both(),
            Step::DropSource(d) => self.drop_source(d.keep),
            Step::Unlock(_) => {
                self.lift_fence()?;
                if self.plan.is_key_move() {
                    self.settle_key_move_guards()?;
                } else if self.playbook.fence() == Some(Fence::Switch) {
                    self.settle_switch()?;
                }
                // `keep: true`: the old copy's tables stay in the trash schemas (out of
                // every client's reach, the shard's schema gone) for the operator to drop.
                let started = std::time::Instant::now();
                let dropped = if self.playbook.drops_old_copy() {
                    self.drop_trash()?
                } else {
                    0
                };
                if dropped > 0 {
                    self.state.trash_drop_millis = Some(started.elapsed().as_millis() as u64);
                }
                let replica_copies = if self.playbook.drops_old_copy() {
                    self.drop_replica_copies()?
                } else {
                    0
                };
                Ok(serde_json::json!({
                    "fence_millis": self.state.fence_millis,
                    "trash_dropped": dropped,
                    "trash_drop_millis": self.state.trash_drop_millis,
                    "replica_copies_dropped": replica_copies,
                }))
            }
            Step::ResetReplication(_) => {
                self.reset_channel()?;
                Ok(serde_json::Value::Null)
            }
            Step::RevertWindow(p) => self.revert_window(p),
        }
    }

    /// Removes the channel and its filters from the target, if it is there.
    pub(super) fn reset_channel(&mut self) -> Result<()> {
        if self.streams() {
            return Ok(());
        }
        let (target, channel) = (self.target.clone(), self.channel.clone());
        if self.fx.channel_state(&target, &channel)? != ChannelState::Absent {
            self.effect(
                Effect::ResetChannel,
                &target,
                serde_json::json!({"channel": channel}),
                |m| m.fx.reset_channel(&target, &channel),
            )?;
        }
        // The channel is gone: the option that filtered it goes too (no restart needed).
        self.unpersist_filters()
    }

    fn filter(&mut self) -> Result<serde_json::Value> {
        let rewrite_db = if self.plan.renames_schemas() {
            self.pairs
                .iter()
                .map(|p| (p.from.clone(), p.to.clone()))
                .collect()
        } else {
            Vec::new()
        };
        // A merge's channel carries the sharded tables only: the global tables are the
        // survivor's own (the retired shard's copy of them would collide).
        let (wild_do_schemas, wild_do_tables) = match self.plan {
            OperationPlan::Merge(_) => (
                Vec::new(),
                self.retired_keys()?
                    .into_iter()
                    .map(|(s, t, _)| (s, t))
                    .collect(),
            ),
            OperationPlan::Move | OperationPlan::Split(_) | OperationPlan::KeyMove(_) => (
                self.pairs.iter().map(|p| p.to.clone()).collect(),
                Vec::new(),
            ),
        };
        let filters = Filters {
            wild_do_schemas,
            wild_do_tables,
            rewrite_db,
            ..Filters::default()
        };
        let detail = if self.plan.is_merge() {
            serde_json::json!({"wild_do_table": filters.wild_do_tables.iter().map(|(s, t)| format!("{s}.{t}")).collect::<Vec<_>>(), "rewrite_db": filters.rewrite_db})
        } else {
            serde_json::json!({"wild_do_table": filters.wild_do_schemas, "rewrite_db": filters.rewrite_db})
        };
        let (target, channel) = (self.target.clone(), self.channel.clone());
        self.effect(Effect::SetFilters, &target, detail.clone(), |m| {
            m.fx.set_filters(&target, &channel, &filters)
        })?;
        if !self.playbook.persists_filters() {
            return Ok(detail);
        }
        // The chapter's restart path: the filter in the option file, the server restarted,
        // and the filter in force afterwards read back from the channel itself.
        let edit = self.option_edit()?;
        let path = crate::remote::node::option_file(self.inv, &target)?;
        self.effect(
            Effect::PersistFilters,
            &target,
            serde_json::json!({"option_file": path, "lines": edit.lines}),
            |m| m.fx.persist_options(&target, &edit),
        )?;
        let command = crate::remote::node::restart_command(self.inv, &target)?;
        self.effect(
            Effect::RestartServer,
            &target,
            serde_json::json!({"command": command}),
            |m| m.fx.restart_server(&target),
        )?;
        if !self.fx.is_dry_run() {
            let status = self
                .fx
                .reader(&target)?
                .channel_status(&channel)?
                .ok_or_else(|| {
                    Error::server(
                        &target,
                        format!("channel {channel} is gone after the restart"),
                    )
                })?;
            let want: Vec<String> = filters
                .wild_do_schemas
                .iter()
                .map(crate::server::dialect::wild_pattern)
                .collect();
            let mut have: Vec<String> = status
                .wild_do_table
                .split(',')
                .map(|p| p.trim().to_string())
                .filter(|p| !p.is_empty())
                .collect();
            have.sort();
            let mut sorted = want.clone();
            sorted.sort();
            if have != sorted {
                return Err(Error::Refused(format!(
                    "after the restart, channel {channel} on {target} filters {:?}, not {:?}: the option file did not give the filter",
                    status.wild_do_table,
                    want.join(",")
                )));
            }
        }
        Ok(serde_json::json!({"filters": detail, "option_file": path, "restarted": true}))
    }

    /// The restart path's block in the target's option file, in the target's dialect.
    fn option_edit(&mut self) -> Result<crate::remote::node::OptionEdit> {
        let filters = Filters {
            wild_do_schemas: self.pairs.iter().map(|p| p.to.clone()).collect(),
            ..Filters::default()
        };
        let target = self.target.clone();
        let lines = self
            .fx
            .dialect(&target)?
            .persisted_filter_lines(&self.channel, &filters)?;
        Ok(crate::remote::node::OptionEdit {
            tag: self.channel.to_string(),
            lines,
        })
    }

    /// The restart path's option removed from the target's option file again (the chapter's
    /// last step), the file left as it was.
    pub(super) fn unpersist_filters(&mut self) -> Result<()> {
        if self.streams() || !self.playbook.persists_filters() {
            return Ok(());
        }
        let target = self.target.clone();
        let edit = self.option_edit()?;
        let path = crate::remote::node::option_file(self.inv, &target)?;
        self.effect(
            Effect::UnpersistFilters,
            &target,
            serde_json::json!({"option_file": path}),
            |m| m.fx.unpersist_options(&target, &edit),
        )
    }

    pub(super) fn preflight(&mut self) -> Result<serde_json::Value> {
        let (source, target) = (self.source.clone(), self.target.clone());
        let s = self.fx.settings(&source)?;
        let t = self.fx.settings(&target)?;
        if !s.log_bin {
            return Err(Error::Refused(format!(
                "binary logging is off on the source {source}"
            )));
        }
        if s.binlog_format != "ROW" {
            return Err(Error::Refused(format!(
                "the source {source} logs in {} format; a filtered channel is only safe with ROW",
                s.binlog_format
            )));
        }
        if self.plan.is_key_move() {
            return self.key_move_preflight();
        }
        let same = self.same_node();
        let read_only_fence = self
            .playbook
            .steps
            .iter()
            .any(|st| matches!(st, Step::Lock(l) if l.fence == Fence::ReadOnly));
        if read_only_fence && same {
            return Err(Error::Refused(
                "a split or merge on the shard's own node writes its copy on that node, which the read-only fence would stop: use the shard fence"
                    .into(),
            ));
        }
        if self.streams() {
            self.stream_preflight()?;
        }
        if read_only_fence && s.read_only && !self.fx.read_only_fenced_here(&source)? {
            return Err(crate::directory::journal::read_only_outside_this_directory(
                &source,
            ));
        }
        if read_only_fence
            && self.inv.holds_directory(&source)
            && self.fx.dialect(&source)?.flavor().has_super_read_only()
        {
            return Err(Error::Refused(format!(
                "{source} holds the sharding directory: its read-only fence (super_read_only) would stop the journal too; use the shard fence"
            )));
        }
        // A copy under new names (a split) needs the native method: the dump tools keep
        // the source's schema names.
        let renames = self.pairs.iter().any(|p| p.from != p.to);
        let dump = self
            .playbook
            .steps
            .iter()
            .any(|st| matches!(st, Step::Backup(b) if b.method == Method::Dump));
        if renames && dump && !same {
            return Err(Error::Refused(
                "a split copies under new schema names, which the dump method cannot: use method: native in the backup step".into(),
            ));
        }
        if dump && !same && !self.plan.is_merge() {
            let pairs = self.pairs.clone();
            copy::dump::preflight(self.fx.reader(&source)?, &source, &pairs)?;
        }
        if s.server_id == t.server_id && !same {
            return Err(Error::Refused(format!(
                "{source} and {target} share server_id {}; replication between them would drop events",
                s.server_id
            )));
        }
        if let (Some(sg), Some(tg), false) = (s.gtid, t.gtid, same) {
            if let Some(why) = tg.conflict_with_source(&sg) {
                return Err(Error::Refused(format!("{source} and {target}: {why}")));
            }
        }
        if self.plan.is_merge() {
            let checked = self.merge_preflight()?;
            if same {
                let checks = self.shard_checks()?;
                return Ok(
                    serde_json::json!({"server_id": s.server_id, "same_node": true, "tables": checked, "checks": checks}),
                );
            }
        }
        for p in self
            .pairs
            .clone()
            .into_iter()
            .filter(|_| !self.plan.is_merge())
        {
            if self.fx.schema_exists(&target, &p.to)? {
                return Err(Error::Refused(format!(
                    "the target {target} already has a schema {}",
                    p.to
                )));
            }
            if !self.fx.schema_exists(&source, &p.from)? {
                return Err(Error::Refused(format!(
                    "the source {source} has no schema {}",
                    p.from
                )));
            }
        }
        let checks = self.shard_checks()?;
        if same {
            return Ok(
                serde_json::json!({"server_id": s.server_id, "same_node": true, "checks": checks}),
            );
        }
        // MariaDB takes one connection per source on a replica: a channel the target
        // already has from the source (an open revert window's, a reporting server's)
        // would make change-master fail; so would the revert window's own channel later,
        // on the source from the target.
        if !self.streams() {
            self.refuse_second_connection(&target, &source, Some(&self.channel.clone()))?;
        }
        if self.playbook.revert_window_params().is_some() {
            self.refuse_second_connection(&source, &target, None)?;
        }
        self.source_group_preflight()?;
        let target_replicas = self.replica_group_preflight(&t)?;
        self.source_replicas_preflight()?;
        let hosts = self.host_preflight()?;
        // The replication account must reach the source as the target's channel will (a
        // stream's preflight checks it for its binary-log reader).
        if !self.streams() {
            self.replication_account_reaches_source()?;
        }
        Ok(
            serde_json::json!({"source_server_id": s.server_id, "target_server_id": t.server_id, "hosts": hosts, "checks": checks, "target_replicas": target_replicas}),
        )
    }

    /// The replication account connects to the source: the target's channel, and the
    /// change stream's binary-log reader, read the source's binary log with it.
    pub(super) fn replication_account_reaches_source(&mut self) -> Result<()> {
        let source = self.source.clone();
        let creds = self.inv.replication_credentials()?;
        let mut spec = ConnectSpec::for_node(self.inv, self.inv.node(&source)?)?;
        spec.credentials = creds;
        Server::connect(&spec).map_err(|e| {
            Error::Refused(format!(
                "the replication account cannot connect to the source {source}: {e}"
            ))
        })?;
        Ok(())
    }

    /// The preflight's checks of what the shard needs on the target besides its rows
    /// (definers, the application's grants, sharding columns, foreign keys): see
    /// `crate::ops::checks`.
    fn shard_checks(&mut self) -> Result<serde_json::Value> {
        let snap = self.fx.directory_snapshot()?;
        let sharded = snap
            .tables
            .iter()
            .filter(|t| t.func_id == self.shard.func_id)
            .map(|t| {
                Ok((
                    Ident::new(
                        "schema",
                        &crate::directory::shard_schema(&t.schema, self.shard.id),
                    )?,
                    Ident::new("table", &t.table)?,
                    Ident::new("column", &t.column)?,
                ))
            })
            .collect::<Result<Vec<_>>>()?;
        let scope = crate::ops::checks::Scope {
            shard: self.shard.id,
            source: self.source.clone(),
            target: self.target.clone(),
            pairs: self.pairs.clone(),
            sharded,
            merge_into: self.plan.merge().map(|p| p.survivor),
        };
        crate::ops::checks::run(self.inv, &mut self.fx, &scope)
    }

    /// Refuses when MariaDB `replica` already has a channel (other than `own`) from
    /// `from`'s server.
    fn refuse_second_connection(
        &mut self,
        replica: &str,
        from: &str,
        own: Option<&crate::ident::Channel>,
    ) -> Result<()> {
        if !self.fx.dialect(replica)?.flavor().is_mariadb() {
            return Ok(());
        }
        let node = self.inv.node(from)?;
        let address = format!("{}:{}", node.host(), node.port());
        for ch in self.fx.reader(replica)?.channels()? {
            if ch.source == address && own.is_none_or(|c| c.as_str() != ch.name) {
                return Err(Error::Refused(format!(
                    "{replica} already replicates from {from} through channel {:?} (an open revert window's reverse channel, or another operation's): MariaDB takes one connection per source; finish or finalize that first",
                    ch.name
                )));
            }
        }
        Ok(())
    }

    /// Whether the playbook's copy is the physical method (files through the hosts).
    pub(super) fn copies_physically(&self) -> bool {
        self.playbook
            .steps
            .iter()
            .any(|st| matches!(st, Step::Backup(b) if b.method == Method::Physical))
    }

    /// The preflight's checks on the hosts, read-only: the restart path's needs (the
    /// target's option file read over its host, its restart command named, not the
    /// directory's node), and free space in the target's datadir for the shard's size with
    /// the inventory's margin (with the physical method, plus what its backup carries
    /// besides), measured whenever the target's datadir and host are known.
    fn host_preflight(&mut self) -> Result<serde_json::Value> {
        use crate::remote::node as host;
        let (source, target) = (self.source.clone(), self.target.clone());
        let mut out = serde_json::Map::new();
        let mut backup_overhead = 0;
        let physical = self.copies_physically();
        if physical {
            let flavors = (
                self.fx.dialect(&source)?.flavor(),
                self.fx.dialect(&target)?.flavor(),
            );
            let pairs = self.pairs.clone();
            let checks = copy::physical::preflight(
                self.inv,
                &source,
                &target,
                &pairs,
                flavors,
                self.fx.reader(&source)?,
            )?;
            copy::physical::preflight_target(&target, self.fx.reader(&target)?, &checks)?;
            backup_overhead = checks.backup_overhead_bytes;
            out.insert(
                "physical".into(),
                serde_json::to_value(&checks).unwrap_or_default(),
            );
        }
        if self.playbook.persists_filters() {
            if self.inv.holds_directory(&target) {
                return Err(Error::Refused(format!(
                    "the restart path restarts the target {target}, which holds the sharding directory (the journal would stop with it): use the default playbook for this move"
                )));
            }
            let path = host::option_file(self.inv, &target)?;
            host::restart_command(self.inv, &target)?;
            let h = crate::remote::host_for(self.inv, &target)?;
            h.read_file(&path, host::FILE_TIMEOUT)?;
            out.insert("option_file".into(), serde_json::json!(path));
        }
        let t = self.inv.node(&target)?;
        let reachable = t.spec.ssh.is_some() || crate::remote::is_this_machine(&t);
        if physical || (t.spec.datadir.is_some() && reachable) {
            let sizes = self.fx.reader(&source)?.schema_sizes()?;
            let needed: u64 = self
                .pairs
                .iter()
                .filter_map(|p| sizes.get(p.from.as_str()))
                .map(|s| s.bytes)
                .sum::<u64>()
                + backup_overhead;
            out.insert(
                "free_space".into(),
                host::check_free_space(self.inv, &target, needed, physical)?,
            );
        } else {
            out.insert(
                "free_space".into(),
                serde_json::json!("not measured: the inventory gives the target no datadir, or no ssh: for its host"),
            );
        }
        Ok(serde_json::Value::Object(out))
    }

    fn backup(&mut self, method: Method, workers: usize) -> Result<serde_json::Value> {
        let (source, target, channel) = (
            self.source.clone(),
            self.target.clone(),
            self.channel.clone(),
        );
        let schemas: Vec<Ident> = self.pairs.iter().map(|p| p.to.clone()).collect();
        // A merge copies the retired shard's sharded tables into the survivor's.
        let merge_keys = match self.plan {
            OperationPlan::Merge(_) => Some(self.retired_keys()?),
            // A key move copies the moving keys' rows into the receiver's tables.
            OperationPlan::KeyMove(_) => Some(self.moved_keys()?),
            OperationPlan::Move | OperationPlan::Split(_) => None,
        };
        let row_filters: Option<Vec<(Ident, statements::Condition)>> = match &merge_keys {
            Some(keys) if self.plan.is_key_move() => Some(
                keys.iter()
                    .map(|(_, t, c)| (t.clone(), c.clone()))
                    .collect(),
            ),
            _ => None,
        };
        let into: Option<Vec<Ident>> = merge_keys.as_ref().map(|keys| {
            let mut t: Vec<Ident> = keys.iter().map(|(_, t, _)| t.clone()).collect();
            t.sort();
            t.dedup();
            t
        });
        let stream_id = self.streams().then(|| self.stream_id());
        // A copy of whole schemas kept current by the stream (a split onto its own node, a
        // move or split via stream): the stream applies the rows the source's triggers
        // write, so the copy's triggers come once it stopped (wait final).
        let without_triggers = self.defers_triggers();
        if without_triggers {
            self.state.local_ddl = self.source_triggers()?;
        }
        // Which servers the copy comes from and goes to, read before it: a copy made while
        // either changed is not journaled as theirs.
        let before = self.read_identities()?;
        let report = self.effect(
            Effect::Copy,
            &target,
            match &into {
                Some(tables) => {
                    serde_json::json!({"method": method, "schemas": schemas, "into_tables": tables})
                }
                None => serde_json::json!({"method": method, "schemas": schemas}),
            },
            |m| {
                // A channel left by an earlier attempt would write into the new copy, and a
                // stream's checkpoint would bring it forward from the old copy's position.
                m.fx.reset_channel(&target, &channel)?;
                if let Some(id) = stream_id.as_deref() {
                    if m.fx.stream_checkpoint_exists(&target, id)? {
                        m.fx.end_stream(&target, id)?;
                    }
                }
                match &merge_keys {
                    // The survivor stays: an earlier attempt's rows of the retired keys go.
                    Some(keys) => {
                        let tables: Vec<(Ident, Ident)> = keys
                            .iter()
                            .map(|(s, t, _)| (s.clone(), t.clone()))
                            .collect();
                        let conds: Vec<_> = keys.iter().map(|(_, _, c)| c.clone()).collect();
                        m.fx.unmerge_rows(&target, &tables, &conds)?;
                    }
                    // Preflight found none of these schemas, so any present now are this
                    // operation's own partial copy from an interrupted attempt.
                    None => m.fx.drop_schemas(&target, &schemas, true)?,
                }
                m.state.target_created = true;
                let progress = std::sync::Arc::clone(&m.copy_progress);
                m.fx.copy(CopyRequest {
                    source: &source,
                    target: &target,
                    pairs: &m.pairs,
                    method,
                    workers,
                    progress: &progress,
                    into_tables: into.as_deref(),
                    rows_where: row_filters.as_deref(),
                    without_triggers,
                })
            },
        )?;
        // Each of the target's replicas imports the same prepared backup, before the channel
        // starts: the target's import was unlogged, so nothing of the copy reaches them
        // through its binary log, and the channel's rows will.
        let mut replica_imports = Vec::new();
        if method == Method::Physical && into.is_none() {
            let replicas = self.inv.node(&target)?.spec.replicas.clone();
            for r in replicas {
                let done = self.effect(
                    Effect::ImportOnReplica,
                    &target,
                    serde_json::json!({"replica": r.label(), "schemas": schemas}),
                    |m| m.fx.import_on_replica(&target, &r, &m.pairs),
                )?;
                replica_imports.push(done);
            }
        }
        self.state.coordinates = report.coordinates.clone();
        self.state.copied_rows = report.rows;
        if let Some(before) = before {
            self.journal_identities(&before, report.coordinates.as_ref())?;
        }
        let mut out = serde_json::to_value(&report).unwrap_or_default();
        if let (Some(ids), Some(map)) = (&self.state.identity, out.as_object_mut()) {
            map.insert(
                "identity".into(),
                serde_json::to_value(ids).unwrap_or_default(),
            );
        }
        if let (false, Some(map)) = (replica_imports.is_empty(), out.as_object_mut()) {
            map.insert(
                "replica_imports".into(),
                serde_json::to_value(&replica_imports).unwrap_or_default(),
            );
        }
        Ok(out)
    }

    fn change_master(&mut self) -> Result<serde_json::Value> {
        let coords = self.state.coordinates.clone().ok_or_else(|| {
            Error::Internal("no backup coordinates: the backup step has not run".into())
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
            tls: src.channel_tls()?,
        };
        let (target, channel) = (self.target.clone(), self.channel.clone());
        let detail = serde_json::json!({"channel": channel, "from": coords.position});
        self.effect(Effect::PointChannel, &target, detail.clone(), |m| {
            m.fx.point_channel(&target, &channel, &spec)
        })?;
        Ok(detail)
    }

    /// The target reaches the position read after the fence; the channel is then stopped.
    fn wait_final(&mut self, timeout: Duration) -> Result<serde_json::Value> {
        let pos = self.state.final_position.clone().ok_or_else(|| {
            Error::Internal("no final position: the lock step has not run".into())
        })?;
        if self.streams() {
            let defers_triggers = self.defers_triggers();
            // The moving rows are fenced: the stream applies what remains up to the final
            // position and stops there (it did, under this fence, if the copy's triggers
            // went in after it).
            let reached = if defers_triggers && self.triggers_begun()? {
                serde_json::json!({"reached_before": true})
            } else {
                self.ensure_stream()?;
                self.fx.stream_to(&pos, timeout)?
            };
            self.check_identity()?;
            let triggers = if defers_triggers {
                self.create_deferred_triggers()?
            } else {
                0
            };
            return Ok(
                serde_json::json!({"reached": pos, "stream": reached, "triggers_created": triggers}),
            );
        }
        let (target, channel) = (self.target.clone(), self.channel.clone());
        if self.gated() {
            // The source is fenced: the gate reads its log up to the final position
            // (what remains since the catch-up) and lets the applier run exactly there.
            self.gate_to(&pos, timeout)?;
        } else if self.fx.channel_state(&target, &channel)? != ChannelState::Running {
            // A run that crashed after stopping the channel left it stopped: start it
            // again (the source is fenced, so nothing of the shard follows).
            self.effect(
                Effect::StartChannel,
                &target,
                serde_json::json!({"channel": channel, "restart": true}),
                |m| m.fx.start_channel(&target, &channel),
            )?;
        }
        if !self.gated() {
            self.fx
                .wait_for_position(&target, &channel, &pos, timeout)?;
        }
        // Reached means something only in the binary log the position was read from.
        self.check_identity()?;
        self.effect(
            Effect::StopChannel,
            &target,
            serde_json::json!({"at": pos}),
            |m| m.fx.stop_channel(&target, &channel),
        )?;
        Ok(serde_json::json!({"reached": pos}))
    }

    fn lock(&mut self, l: &crate::playbook::LockParams) -> Result<serde_json::Value> {
        let (fence, timeout_secs) = (l.fence, l.timeout_secs);
        if self.state.fence.is_none() {
            self.reverify_if_stale()?;
        }
        if fence == Fence::Switch && !self.switch_up()? {
            // Its guards first, table by table, before the fence and its clock.
            self.arm_switch()?;
        }
        if !self.plan.is_key_move() {
            // A key move fences only its moving keys: the donor's others go on.
            self.fx
                .set_shard_state(self.shard.id, ShardState::ReadOnly)?;
        }
        if self.fence_started.is_none() {
            self.fence_started = Some(Instant::now());
        }
        let source = self.source.clone();
        match fence {
            Fence::ReadOnly => {
                self.effect(
                    Effect::RaiseFence,
                    &source,
                    serde_json::json!({"fence": fence}),
                    |m| {
                        m.fx.read_only_join(&source)?;
                        m.state.fence = Some(Fence::ReadOnly);
                        m.fx.set_read_only(&source, true, timeout_secs)
                    },
                )?;
            }
            Fence::Shard => {
                let up = !self.state.fenced_tables.is_empty()
                    && !self
                        .fx
                        .hidden_now(&source, &self.state.fenced_tables)?
                        .is_empty();
                if !up {
                    self.raise_shard_fence_in_tries(l)?;
                }
                self.state.fence = Some(Fence::Shard);
            }
            Fence::Switch => {
                if !self.switch_up()? {
                    self.raise_switch_fence_in_tries(l)?;
                }
                self.state.fence = Some(Fence::Switch);
            }
        }
        if self.state.fenced_server_started_at.is_none() {
            self.state.fenced_server_started_at = Some(self.fx.server_started_at(&source)?);
        }
        let fin = self.fx.coordinates(&source)?.position;
        self.state.final_position = Some(fin.clone());
        // The final position must come from the server the channel follows, past all it
        // read: one below it (a binary log reset, another server) is reached at once.
        self.check_identity()?;
        Ok(serde_json::json!({"fence": fence, "final_position": fin}))
    }

    /// Fails unless the fence raised by the lock step still stands in full: every hidden
    /// table there (shard fence), or the source read-only and not restarted since (a
    /// restart silently drops `SET GLOBAL read_only`).
    pub(super) fn fence_intact(&mut self) -> Result<()> {
        let source = self.source.clone();
        match self.state.fence {
            Some(Fence::Shard) => {
                let fenced = self.state.fenced_tables.clone();
                let hidden = self.fx.hidden_now(&source, &fenced)?;
                if fenced.is_empty() || hidden.len() != fenced.len() {
                    return Err(Error::Refused(format!(
                        "the shard fence on {source} no longer stands ({} of {} tables hidden)",
                        hidden.len(),
                        fenced.len()
                    )));
                }
                // A table created (or re-created by a client) in the shard's schemas since
                // the fence went up takes writes the target never sees.
                for p in self.pairs.clone() {
                    if let Some(t) = self.fx.visible_tables(&source, &p.from)?.first() {
                        return Err(Error::Refused(format!(
                            "{}.{t} appeared on {source} under the shard fence: its writes would not reach the target",
                            p.from
                        )));
                    }
                }
            }
            Some(Fence::Switch) => self.switch_fence_intact()?,
            Some(Fence::ReadOnly) => {
                if !self.fx.read_only_now(&source)? {
                    return Err(Error::Refused(format!(
                        "{source} is no longer read-only: the fence went down"
                    )));
                }
                let now = self.fx.server_started_at(&source)?;
                if let Some(then) = self.state.fenced_server_started_at {
                    if (now - then).abs() > 2 {
                        return Err(Error::Refused(format!(
                            "{source} restarted since the fence went up"
                        )));
                    }
                }
            }
            None => {
                return Err(Error::Refused(format!(
                    "no fence stands on {source}: nothing may flip"
                )))
            }
        }
        Ok(())
    }

    /// The source's and the target's identities now (None in a dry run and on one node,
    /// where no channel follows a binary log).
    fn read_identities(&mut self) -> Result<Option<Identities>> {
        if self.fx.is_dry_run() || self.same_node() {
            return Ok(None);
        }
        let (source, target) = (self.source.clone(), self.target.clone());
        Ok(Some(Identities {
            source: self.fresh_connection(&source)?.identity()?,
            target: self.fresh_connection(&target)?.identity()?,
        }))
    }

    /// A new connection to `node`: it reaches whatever server answers at the node's address
    /// now, as the application's next connection does (one opened earlier may still reach
    /// a server that was replaced behind the address).
    fn fresh_connection(&self, node: &str) -> Result<Server> {
        Server::connect_node(self.inv, node)
    }

    /// After the copy: journals the servers as they are now, once they are found to be the
    /// ones read before it with binary logs that only went forward, the copy's coordinates
    /// between the two readings.
    fn journal_identities(
        &mut self,
        before: &Identities,
        copied_at: Option<&Coordinates>,
    ) -> Result<()> {
        let Some(after) = self.read_identities()? else {
            return Ok(());
        };
        let (source, target) = (self.source.clone(), self.target.clone());
        if let Some(change) = before.source.change_to(&after.source, None) {
            return Err(self.refuse_identity(&source, "the source", &change.to_string())?);
        }
        if let Some(change) = before.target.change_to(&after.target, None) {
            return Err(self.refuse_identity(&target, "the target", &change.to_string())?);
        }
        if let Some(at) = copied_at.map(|c| &c.position) {
            let (low, high) = (
                &before.source.binlog.position,
                &after.source.binlog.position,
            );
            if !same_binlog(at, high) || at < low || at > high {
                let why = format!(
                    "the copy's coordinates {at} are not between {low} and {high}, where its binary log stood before and after it"
                );
                return Err(self.refuse_identity(&source, "the source", &why)?);
            }
        }
        self.state.identity = Some(after);
        Ok(())
    }

    /// Refuses to go on unless the source and the target are still the servers journaled
    /// at the copy, their binary logs having only gone forward — the source's also past
    /// everything the channel has read from it. Otherwise the channel's position means
    /// nothing (a `RESET MASTER`, a replica promoted behind the address): a final position
    /// below what the channel applied would be "reached" at once and the flip would drop
    /// the writes it never carried. A refusal is journaled and repeated by every later
    /// run until `abort`. Nothing is checked after the flip, in a dry run, on one node, or
    /// for an operation journaled before identities were.
    pub(super) fn check_identity(&mut self) -> Result<()> {
        if self.state.flipped {
            return Ok(());
        }
        if let Some(why) = self.state.identity_refusal.clone() {
            return Err(Error::Refused(why));
        }
        if self.fx.is_dry_run() || self.same_node() {
            return Ok(());
        }
        let Some(then) = self.state.identity.clone() else {
            return Ok(());
        };
        let (source, target, channel) = (
            self.source.clone(),
            self.target.clone(),
            self.channel.clone(),
        );
        let mut target_server = self.fresh_connection(&target)?;
        let target_now = target_server.identity()?;
        if let Some(change) = then.target.change_to(&target_now, None) {
            return Err(self.refuse_identity(&target, "the target", &change.to_string())?);
        }
        let read = target_server
            .channel_status(&channel)?
            .and_then(|s| s.furthest_read().cloned());
        let source_now = self.fresh_connection(&source)?.identity()?;
        if let Some(change) = then.source.change_to(&source_now, read.as_ref()) {
            return Err(self.refuse_identity(&source, "the source", &change.to_string())?);
        }
        Ok(())
    }

    /// The revert window's version of [`Mover::check_identity`], its roles swapped: the
    /// reverse channel on the source replays the target's binary log onto the old copy, so
    /// a revert may flip back only while the target is the server the shard moved to, its
    /// binary log past everything that channel read, and the source the server holding
    /// the old copy. A refusal stops the revert before its flip; the shard stays on the
    /// target, which holds every write.
    pub(super) fn check_revert_identity(&mut self) -> Result<()> {
        if self.fx.is_dry_run() || self.same_node() {
            return Ok(());
        }
        let Some(then) = self.state.identity.clone() else {
            return Ok(());
        };
        let (source, target) = (self.source.clone(), self.target.clone());
        let channel = self.fx.names().reverse_channel(self.fx.op());
        let mut source_server = self.fresh_connection(&source)?;
        let source_now = source_server.identity()?;
        let read = source_server
            .channel_status(&channel)?
            .and_then(|s| s.furthest_read().cloned());
        let changed = match then.source.change_to(&source_now, None) {
            Some(change) => Some(("the source", source.clone(), change)),
            None => {
                let target_now = self.fresh_connection(&target)?.identity()?;
                then.target
                    .change_to(&target_now, read.as_ref())
                    .map(|change| ("the target", target.clone(), change))
            }
        };
        match changed {
            Some((role, node, change)) => Err(Error::Refused(format!(
                "{role} {node} is not the server the shard was moved with: {change}; the revert does not flip back over writes the reverse channel may not have carried, and the shard stays on {target}"
            ))),
            None => Ok(()),
        }
    }

    /// Journals why the operation stops (in the outputs of every step that has some, so
    /// that lowering the fence, which clears the later ones, keeps it) and returns the
    /// refusal: one line naming the node and what changed.
    fn refuse_identity(&mut self, node: &str, role: &str, change: &str) -> Result<Error> {
        let op = self.fx.op();
        let why = format!(
            "{role} {node} is not the server the copy was made with: {change}; nothing flips over writes the channel may not have carried: `shardctl abort {op}` leaves the shard on {} and drops the target's copy, then move it again",
            self.source
        );
        self.state.identity_refusal = Some(why.clone());
        let outputs = serde_json::to_value(&self.state).unwrap_or_default();
        for i in 0..self.done.len() as u32 {
            if i == self.step_no || self.done.get(i as usize).copied().unwrap_or(false) {
                self.fx.set_step_outputs(i, &outputs, self.phase)?;
            }
        }
        Ok(Error::Refused(why))
    }

    /// Lifts the fence: the read-only hold released (the server writable again if no other
    /// operation holds it and it was writable before), or the shard's tables renamed back —
    /// unless a move flipped, in which case the old copy stays out of reach. Reads the
    /// servers, so it is safe after any partial state.
    pub(super) fn lift_fence(&mut self) -> Result<()> {
        let source = self.source.clone();
        let keep_hidden = self.state.flipped && !self.plan.is_split();
        let fenced = self.state.fenced_tables.clone();
        let ro_held = self.fx.read_only_held(&source)?;
        let shard_hidden =
            !fenced.is_empty() && !keep_hidden && !self.fx.hidden_now(&source, &fenced)?.is_empty();
        // A moved shard's old copy keeps its switch on until drop-source takes it out of
        // reach; a split's old shard goes on refusing the keys it gave away.
        let switch_on = !keep_hidden && self.switch_up()?;
        let switch_to = if self.state.flipped {
            SwitchMode::Keys
        } else {
            SwitchMode::Off
        };
        if ro_held || shard_hidden || switch_on {
            self.effect(
                Effect::LowerFence,
                &source,
                {
                    let mut detail = serde_json::json!({"read_only": ro_held, "fenced_tables": if shard_hidden { fenced.len() } else { 0 }});
                    if switch_on {
                        detail["switch"] = serde_json::json!(switch_to);
                    }
                    detail
                },
                |m| {
                    // The intent's journal write waited behind any flip still in flight:
                    // read the directory again before the old copy takes writes.
                    if !m.state.flipped && m.directory_flipped()? {
                        m.state.flipped = true;
                        return Err(Error::Refused(
                            "the flip committed after all: the fence stays up; resume goes forward"
                                .into(),
                        ));
                    }
                    if !m.state.flipped {
                        // Before the fence comes down: nothing verified under it may be
                        // flipped on afterwards, whatever happens next.
                        m.forget_fenced_steps()?;
                    }
                    if shard_hidden {
                        m.fx.lower_shard_fence(&source, &fenced)?;
                    }
                    if switch_on {
                        let id = m.switch_id();
                        crate::ops::switch::set(
                            &mut m.fx,
                            &source,
                            id,
                            switch_to,
                            statements::FENCE_LOCK_WAIT_SECS,
                        )?;
                    }
                    if ro_held {
                        // A server restarted since the fence went up came back read-only or
                        // not by its own configuration: leave it as it is.
                        let restarted = match m.state.fenced_server_started_at {
                            Some(then) => (m.fx.server_started_at(&source)? - then).abs() > 2,
                            None => false,
                        };
                        // Nor is another server now behind the source's address (a
                        // replica promoted there) made writable: it never took the fence.
                        let replaced = m.source_replaced_since_copy()?;
                        let writable = if restarted || replaced {
                            Vec::new()
                        } else {
                            m.fx
                                .dialect(&source)?
                                .set_read_only(false, statements::FENCE_LOCK_WAIT_SECS)
                        };
                        m.fx.read_only_leave(&source, &writable)?;
                    }
                    Ok(())
                },
            )?;
        }
        if let Some(t) = self.fence_started.take() {
            if self.state.fence_millis.is_none() {
                self.state.fence_millis = Some(t.elapsed().as_millis() as u64);
            }
        }
        self.state.fence = None;
        self.state.fenced_server_started_at = None;
        if !self.state.flipped {
            self.forget_fenced_steps()?;
        }
        if !self.state.flipped || self.plan.is_split() || self.plan.is_key_move() {
            self.fx.set_shard_state(self.shard.id, ShardState::Online)?;
        }
        Ok(())
    }

    /// True when the server answering at the source's address now (read over a new
    /// connection) is not the one the copy was journaled from: the read-only fence must
    /// not be lifted there. False in a dry run or before the copy journaled identities.
    fn source_replaced_since_copy(&mut self) -> Result<bool> {
        if self.fx.is_dry_run() {
            return Ok(false);
        }
        let Some(then) = self.state.identity.as_ref().map(|i| i.source.server_id) else {
            return Ok(false);
        };
        let now = self
            .fresh_connection(&self.source.clone())?
            .identity()?
            .server_id;
        if now != then {
            crate::output::log(
                0,
                &format!(
                    "{}: the address reaches server_id {now}, not {then} the copy came from: it is not made writable (the fenced server may still be read-only)",
                    self.source
                ),
            );
        }
        Ok(now != then)
    }

    /// Marks the steps from the lock on pending (in the journal and here): whatever was
    /// established under the fence no longer holds once it comes down, so a later run
    /// catches up, fences and verifies again, and nothing can flip on the old verification.
    fn forget_fenced_steps(&mut self) -> Result<()> {
        // From the cut-over gate when there is one: a run that lifted its fence waits for a
        // new go-ahead (window, hooks) before fencing again.
        let gate = self
            .playbook
            .steps
            .iter()
            .position(|s| matches!(s, Step::AwaitCutover(_)));
        let lock = self
            .playbook
            .steps
            .iter()
            .position(|s| matches!(s, Step::Lock(_)));
        self.advance(crate::directory::phase::Transition::FenceLifted)?;
        if let Some(i) = gate.or(lock) {
            self.fx.steps_pending(i as u32, self.phase)?;
            for d in self.done.iter_mut().skip(i) {
                *d = false;
            }
        }
        self.state.verified = false;
        self.state.final_position = None;
        self.state.target_position_at_flip = None;
        Ok(())
    }

    /// The shard's base tables as compared now: on the source under their current names
    /// (hidden ones under the shard fence), on the target under the shard's names.
    pub(super) fn table_pairs(&mut self) -> Result<Vec<TablePair>> {
        let source = self.source.clone();
        let mut out = Vec::new();
        for p in self.pairs.clone() {
            let names: Vec<(Ident, Ident)> = match self.state.fence {
                Some(Fence::Shard) => self
                    .state
                    .fenced_tables
                    .iter()
                    .filter(|f| f.schema == p.from)
                    .map(|f| (f.table.clone(), f.hidden.clone()))
                    .collect(),
                _ => self
                    .fx
                    .reader(&source)?
                    .tables(&p.from)?
                    .into_iter()
                    .filter(|t| {
                        !t.is_view
                            && !t
                                .name
                                .as_str()
                                .starts_with(crate::server::statements::HIDDEN_PREFIX)
                    })
                    .map(|t| (t.name.clone(), t.name))
                    .collect(),
            };
            for (name, at_source) in names {
                out.push(TablePair {
                    source_schema: p.from.clone(),
                    source_table: at_source,
                    target_schema: p.to.clone(),
                    target_table: name,
                    target_filter: None,
                    source_filter: None,
                });
            }
        }
        if self.plan.is_key_move() {
            // A key move compares the sharded tables only, and on both sides only the
            // rows of the moving keys.
            let keys = self.moved_keys()?;
            out = out
                .into_iter()
                .filter_map(|mut t| {
                    let cond = keys
                        .iter()
                        .find(|(s, n, _)| *s == t.target_schema && *n == t.target_table)?;
                    t.target_filter = Some(cond.2.clone());
                    t.source_filter = Some(cond.2.clone());
                    Some(t)
                })
                .collect();
        }
        if self.plan.is_merge() {
            // A merge compares the sharded tables only, and in the survivor only the rows
            // of the retired shard's keys (the global tables are the survivor's own).
            let keys = self.retired_keys()?;
            out = out
                .into_iter()
                .filter_map(|mut t| {
                    let cond = keys
                        .iter()
                        .find(|(s, n, _)| *s == t.target_schema && *n == t.target_table)?;
                    t.target_filter = Some(cond.2.clone());
                    Some(t)
                })
                .collect();
        }
        Ok(out)
    }

    /// The shard fence's renames in `schema`, as (hidden name, own name).
    fn hidden_names(&self, schema: &Ident) -> Vec<(String, String)> {
        self.state
            .fenced_tables
            .iter()
            .filter(|f| f.schema == *schema)
            .map(|f| (f.hidden.to_string(), f.table.to_string()))
            .collect()
    }

    /// `on_source` run on the source's read session and `on_target` on the target's, side
    /// by side when they are two nodes (one after the other on one node).
    fn read_both<A: Send, B: Send>(
        &mut self,
        source: &str,
        target: &str,
        on_source: impl FnOnce(&mut Server) -> Result<A> + Send,
        on_target: impl FnOnce(&mut Server) -> Result<B>,
    ) -> Result<(A, B)> {
        if source == target {
            let a = on_source(self.fx.reader(source)?)?;
            let b = on_target(self.fx.reader(target)?)?;
            return Ok((a, b));
        }
        let (s, t) = self.fx.two_readers(source, target)?;
        // The thread answers the operation's stop and control as this one does.
        let (interrupt, control) = (crate::signal::scope(), crate::control::current());
        let (a, b) = std::thread::scope(|scope| {
            let a = scope.spawn(move || {
                crate::signal::with_scope(interrupt, || {
                    crate::control::with(control, || on_source(s))
                })
            });
            let b = on_target(t);
            (a.join(), b)
        });
        let a = a.map_err(|_| Error::Internal(format!("reading {source} panicked")))?;
        Ok((a?, b?))
    }

    /// Every table of `tables` is on the target, and the target has no other (a table
    /// created or dropped on the source must have reached the target through the channel).
    /// With `structure`, each table's definition must read the same on both sides too.
    fn check_table_sets(
        &mut self,
        tables: &[TablePair],
        structure: bool,
    ) -> Result<Vec<(String, String)>> {
        // The dry run's target copy exists only in its model.
        if self.fx.is_dry_run() {
            return Ok(Vec::new());
        }
        if self.plan.is_merge() {
            self.merge_tables_match()?;
            self.merge_loses_no_unmapped_row()?;
            return Ok(Vec::new());
        }
        let mut definitions = Vec::new();
        let (source, target) = (self.source.clone(), self.target.clone());
        for p in self.pairs.clone() {
            let on_target: Vec<Ident> = if self.fx.schema_exists(&target, &p.to)? {
                self.fx
                    .reader(&target)?
                    .tables(&p.to)?
                    .into_iter()
                    .filter(|t| !t.is_view)
                    .map(|t| t.name)
                    .collect()
            } else {
                Vec::new()
            };
            let expected: Vec<&TablePair> =
                tables.iter().filter(|t| t.target_schema == p.to).collect();
            if let Some(t) = expected
                .iter()
                .find(|t| !on_target.contains(&t.target_table))
            {
                return Err(Error::Refused(format!(
                    "verification failed: {} is on the source {source} but not on the target {target}",
                    t.name()
                )));
            }
            // A key move's receiver keeps its own global and unmapped tables: only the
            // sharded tables are compared, and only they must be on both sides.
            if let Some(t) = on_target
                .iter()
                .filter(|_| !self.plan.is_key_move())
                .find(|t| !expected.iter().any(|e| &e.target_table == *t))
            {
                return Err(Error::Refused(format!(
                    "verification failed: {}.{t} is on the target {target} but not on the source {source}",
                    p.to
                )));
            }
        }
        if structure {
            // Many tables to a round trip, both sides at once (this runs under the fence
            // too).
            let source_reads: Vec<Stmt> = tables
                .iter()
                .map(|t| statements::show_create_table(&t.source_schema, &t.source_table, false))
                .collect();
            let target_reads: Vec<Stmt> = tables
                .iter()
                .map(|t| statements::show_create_table(&t.target_schema, &t.target_table, false))
                .collect();
            let (on_source, on_target) = self.read_both(
                &source,
                &target,
                |s| s.first_of_each::<(String, String)>(&source_reads),
                |s| s.first_of_each::<(String, String)>(&target_reads),
            )?;
            for ((t, a), b) in tables.iter().zip(on_source).zip(on_target) {
                // Under the shard fence the source's tables (and the foreign keys between
                // them) carry hidden names: read them back as the shard's names.
                let renames = self.hidden_names(&t.source_schema);
                let a = a.map(|(_, ddl)| {
                    crate::server::definitions::comparable_definition(&ddl, &renames)
                });
                let b =
                    b.map(|(_, ddl)| crate::server::definitions::comparable_definition(&ddl, &[]));
                // A digest: the journal keeps it (definitions may hold any text).
                definitions.push((t.name(), definition_digest(a.as_deref().unwrap_or(""))));
                if a != b {
                    return Err(Error::Refused(format!(
                        "verification failed: {} is defined differently on the source {source} and the target {target} (DDL that did not reach the target?)",
                        t.name()
                    )));
                }
            }
        }
        Ok(definitions)
    }

    /// The `verify` step: every table compared in primary-key chunks at a consistent point,
    /// outside the fence (see [`crate::verify`]). Records the verified point; any
    /// difference stops the operation before the fence, the shard online on the source.
    pub(super) fn verify(&mut self, p: &VerifyParams) -> Result<serde_json::Value> {
        if self.streams() {
            self.ensure_stream()?;
        } else {
            self.release_channel_if_held()?;
        }
        let tables = self.table_pairs()?;
        let (source, target, channel) = (
            self.source.clone(),
            self.target.clone(),
            self.channel.clone(),
        );
        let opts = verify_options(p);
        let streamed = self.streams();
        let definitions = self.check_table_sets(&tables, true)?;
        let gate = self.gated().then(|| self.retired_schemas());
        let report = self.effect(
            Effect::HoldChannel,
            &target,
            match gate {
                Some(_) => {
                    serde_json::json!({"channel": channel, "tables": tables.len(), "gated": true})
                }
                None => serde_json::json!({"channel": channel, "tables": tables.len()}),
            },
            |m| {
                m.fx.verify(VerifyRequest {
                    source: &source,
                    target: &target,
                    tables: &tables,
                    channel: Some(&channel),
                    gate: gate.as_deref(),
                    opts,
                    stream: streamed,
                })
            },
        )?;
        refuse_differences(&report)?;
        // Equal tables prove nothing about a source that is no longer the channel's.
        self.check_identity()?;
        // Its age counts from the end: each round's snapshots were at most
        // max_snapshot_secs old, and the channel has applied everything since.
        let at_unix = self.fx.directory_unix_secs()?;
        self.state.verified_point = Some(VerifiedPoint {
            at_unix,
            position: report.points.last().cloned(),
            tables: tables.iter().map(TablePair::name).collect(),
            definitions,
        });
        Ok(serde_json::json!({
            "tables": report.tables,
            "chunks": report.chunks,
            "rows": report.rows,
            "rounds": report.points.len(),
            "max_lock_millis": report.max_lock_millis,
            "millis": report.millis,
        }))
    }

    /// A verification run before a crash may have left the channel's applier stopped or
    /// running only up to its point: let it run freely again.
    fn release_channel_if_held(&mut self) -> Result<()> {
        // A gated applier is held by design: only the gate lets it go on.
        if self.fx.is_dry_run() || self.gated() {
            return Ok(());
        }
        let (target, channel) = (self.target.clone(), self.channel.clone());
        let held = self
            .fx
            .reader(&target)?
            .channel_status(&channel)?
            .is_some_and(|s| s.applier_held());
        if held {
            self.effect(
                Effect::StartChannel,
                &target,
                serde_json::json!({"channel": channel, "release": true}),
                |m| {
                    let dialect = m.fx.dialect(&target)?;
                    let stmts = crate::verify::hold_statements(&dialect, &channel, &Hold::Release)?;
                    m.fx.run(&target, &stmts).map(|_| ())
                },
            )?;
        }
        Ok(())
    }

    /// Before the fence goes up: verifies again when the verified point is older than
    /// the playbook allows (or missing).
    pub(super) fn reverify_if_stale(&mut self) -> Result<()> {
        self.reverify_if_older_than(None)
    }

    /// Verifies again when the verified point is older than `limit` seconds (default the
    /// verify step's max_age_secs) or missing.
    fn reverify_if_older_than(&mut self, limit: Option<u64>) -> Result<()> {
        let Some(p) = self.playbook.verify_params().cloned() else {
            return Ok(());
        };
        let limit = limit.unwrap_or(p.max_age_secs);
        let stale = match &self.state.verified_point {
            Some(v) => {
                let clock = crate::clock::DirectoryClock::read(self.fx.directory_unix_secs()?);
                clock.age_secs(v.at_unix) > limit as i64
            }
            None => true,
        };
        if stale {
            log(
                1,
                "the verified point is too old: verifying again before the fence",
            );
            self.verify(&p)?;
        }
        Ok(())
    }

    /// The `confirm` step, under the fence: the target holds exactly the source's tables
    /// with the same definitions; tables the verification did not cover (created since
    /// its point) are compared in full now (their rows are what changed since); the
    /// verified point is recent. Then the flip may go ahead.
    pub(super) fn confirm(&mut self) -> Result<serde_json::Value> {
        let max_age = self.playbook.verified_max_age_secs();
        if !self.fx.is_dry_run() {
            let clock = crate::clock::DirectoryClock::read(self.fx.directory_unix_secs()?);
            match &self.state.verified_point {
                Some(v) if clock.age_secs(v.at_unix) <= max_age as i64 => {}
                Some(v) => {
                    return Err(Error::Refused(format!(
                        "the verified point is {}s old on the directory's clock (max_age_secs {max_age}): the fence goes down and the next run verifies again",
                        clock.age_secs(v.at_unix)
                    )))
                }
                None => {
                    return Err(Error::Refused(
                        "nothing was verified before the fence: the verify step must run first".into(),
                    ))
                }
            }
        }
        let tables = self.table_pairs()?;
        let now = self.check_table_sets(&tables, true)?;
        let (verified, then): (Vec<String>, Vec<(String, String)>) = self
            .state
            .verified_point
            .as_ref()
            .map(|v| (v.tables.clone(), v.definitions.clone()))
            .unwrap_or_default();
        // A table altered since the verified point (even to the same definition on both
        // sides: a column added with a non-deterministic default fills differently) is
        // compared again in full, as is one created since.
        let altered = |name: &str| {
            let before = then.iter().find(|(n, _)| n == name).map(|(_, d)| d);
            let after = now.iter().find(|(n, _)| n == name).map(|(_, d)| d);
            before.is_some() && before != after
        };
        let unverified: Vec<TablePair> = tables
            .iter()
            .filter(|t| !verified.contains(&t.name()) || altered(&t.name()))
            .cloned()
            .collect();
        let mut compared = serde_json::Value::Null;
        if !unverified.is_empty() {
            let (source, target) = (self.source.clone(), self.target.clone());
            let opts = self
                .playbook
                .steps
                .iter()
                .find_map(|s| match s {
                    Step::Verify(p) => Some(verify_options(p)),
                    _ => None,
                })
                .unwrap_or_default();
            let report = self.fx.verify(VerifyRequest {
                source: &source,
                target: &target,
                tables: &unverified,
                channel: None,
                gate: None,
                opts,
                stream: false,
            })?;
            refuse_differences(&report)?;
            compared = serde_json::json!({"tables": unverified.iter().map(TablePair::name).collect::<Vec<_>>(), "rows": report.rows});
        }
        // A merge's survivor keeps its own views, routines, triggers and events.
        let objects = if self.plan.is_merge() || self.plan.is_key_move() {
            0
        } else {
            self.compare_definitions()?
        };
        self.state.verified = true;
        Ok(
            serde_json::json!({"tables": tables.len(), "objects": objects, "compared_under_fence": compared}),
        )
    }

    /// Under the fence: the views, routines, triggers and events of every schema read the
    /// same on both sides, creation context included (a target event is DISABLE until the
    /// flip). The channel carries views and triggers; a routine or event changed on the
    /// source during the move is refused here rather than lost. Returns the objects compared.
    fn compare_definitions(&mut self) -> Result<usize> {
        if self.fx.is_dry_run() {
            return Ok(0);
        }
        let (source, target) = (self.source.clone(), self.target.clone());
        let mut compared = 0;
        for p in self.pairs.clone() {
            let renamed = self.hidden_names(&p.from);
            let (a, b) = self.read_both(
                &source,
                &target,
                |s| definitions::read_definitions_renamed(s, &p.from, &renamed),
                |s| definitions::read_definitions(s, &p.to),
            )?;
            let diffs = definitions::diff_definitions(
                &a,
                &b,
                definitions::EventStatusCheck::TargetDisabledBeforeFlip,
            );
            if !diffs.is_empty() {
                return Err(Error::Refused(format!(
                    "verification failed: {} differs on the target {target}: {}",
                    p.to,
                    diffs
                        .iter()
                        .map(|d| d.to_string())
                        .collect::<Vec<_>>()
                        .join("; ")
                )));
            }
            compared += a.objects.len();
        }
        Ok(compared)
    }

    /// The `guard` step of a split, after the flip and before the fence lifts: every
    /// sharded table of the old shard refuses (error 1644, SQLSTATE 45000) an insert,
    /// update or delete of a row whose key the shard no longer owns, so a client routing
    /// on a stale directory gets an error instead of a write that the prune would remove.
    /// Unlogged, like the fences. Pruning sessions pass (`@shardctl_pruning`).
    pub(super) fn guard(&mut self) -> Result<serde_json::Value> {
        if self.plan.split().is_none() {
            return Ok(serde_json::json!({"skipped": "a move drops the old copy instead"}));
        }
        if self.state.fence == Some(Fence::Switch) || self.switch_up()? {
            // The switched guards refuse the given-away keys as soon as the switch says
            // `keys`: that one row ends the fence too.
            self.lift_fence()?;
            return Ok(serde_json::json!({"switch": self.switch_id(), "mode": "keys"}));
        }
        let stmts = self.literal_guards()?;
        let guarded = self.guarded_table_names()?;
        let source = self.source.clone();
        if !stmts.is_empty() {
            self.effect(
                Effect::Guard,
                &source,
                serde_json::json!({"tables": guarded}),
                |m| {
                    // CREATE TRIGGER waits for the table's readers: bounded like the
                    // fence. Under MySQL's super_read_only it is refused even to this
                    // account: plain read_only holds the fence meanwhile.
                    m.fx.run(&source, &[statements::lock_wait_timeout(10)])?;
                    let held = m.state.fence == Some(Fence::ReadOnly);
                    m.with_super_read_only_lowered(&source, held, |m| {
                        m.fx.run_unlogged(&source, &stmts)
                    })
                },
            )?;
        }
        Ok(serde_json::json!({"guarded": guarded}))
    }

    /// The old shard's sharded tables a split guards, as `schema.table`.
    fn guarded_table_names(&mut self) -> Result<Vec<String>> {
        let Some(plan) = self.plan.split().cloned() else {
            return Ok(Vec::new());
        };
        let snap = self.fx.directory_snapshot()?;
        snap.tables
            .iter()
            .filter(|t| t.func_id == self.shard.func_id)
            .map(|t| {
                Ok(format!(
                    "{}.{}",
                    crate::directory::shard_schema(&t.schema, plan.old_shard),
                    t.table
                ))
            })
            .collect()
    }

    /// A split's literal guard triggers: on every sharded table of the old shard, the
    /// statements that make it refuse the keys it no longer owns once the split has
    /// flipped (the tables named as they are now: a fence may have hidden them).
    pub(super) fn literal_guards(&mut self) -> Result<Vec<Stmt>> {
        let Some(plan) = self.plan.split().cloned() else {
            return Ok(Vec::new());
        };
        let snap = crate::ops::split::after_split(
            self.fx.directory_snapshot()?,
            self.shard.func_id,
            &plan,
        )?;
        let old = crate::directory::Shard {
            id: plan.old_shard,
            ..self.shard.clone()
        };
        let source = self.source.clone();
        let dialect = self.fx.dialect(&source)?;
        let mut stmts = Vec::new();
        for t in snap.tables.iter().filter(|t| t.func_id == old.func_id) {
            let schema = Ident::new("schema", &crate::directory::shard_schema(&t.schema, old.id))?;
            let table = Ident::new("table", &t.table)?;
            // Under the shard fence the table has its hidden name; the trigger follows it
            // back when the fence lifts.
            let current = self
                .state
                .fenced_tables
                .iter()
                .find(|f| f.schema == schema && f.table == table)
                .map(|f| f.hidden.clone())
                .unwrap_or_else(|| table.clone());
            let column = Ident::new("column", &t.column)?;
            let not_owned = crate::prune::predicate::not_owned(&snap, &old, &column)?;
            for event in statements::GuardEvent::ALL {
                stmts.extend(dialect.install_guard(
                    &schema, &table, &current, event, &column, &not_owned, old.id,
                ));
            }
        }
        Ok(stmts)
    }

    /// True when the directory already shows this operation's flip.
    pub(super) fn directory_flipped(&mut self) -> Result<bool> {
        match self.plan.clone() {
            OperationPlan::Merge(plan) => Ok(self.fx.shard_location(plan.retired)?.is_none()),
            OperationPlan::Split(plan) => Ok(self
                .fx
                .shard_location(plan.new_shard)?
                .is_some_and(|(_, state)| state == ShardState::Online.as_sql())),
            // A move whose revert window opened flipped before (the window starts only
            // after the flip and drop-source); a revert may have pointed the directory back
            // at the source since, which is not the move's flip undone.
            OperationPlan::KeyMove(plan) => {
                let snap = self.fx.directory_snapshot()?;
                let fx = &mut self.fx;
                crate::ops::keys::shows_flip(&snap, &plan, &mut |f, k| fx.key_owner(f, k))
            }
            OperationPlan::Move if self.state.revert_until_unix.is_some() => Ok(true),
            OperationPlan::Move => {
                let target = self.target.clone();
                Ok(self
                    .fx
                    .shard_location(self.shard.id)?
                    .is_some_and(|(node, _)| node == target))
            }
        }
    }

    /// The flip step: the directory flipped (unless it already is: a run resumed after a
    /// crash between the flip and the events), then the events enabled on the target.
    pub(super) fn flip(&mut self) -> Result<serde_json::Value> {
        let mut out = if self.state.flipped {
            serde_json::json!({"node": self.target, "flipped_before": true})
        } else {
            self.flip_directory()?
        };
        if self.plan.is_merge() {
            out["guarded"] = self.widen_survivor_guards()?.into();
        }
        if self.plan.is_key_move() {
            // Only now: before the flip the receiver's guards must go on refusing the
            // keys it does not own yet (a router that old could otherwise write them).
            self.widen_receiver_guards()?;
        }
        out["events_enabled"] = self.enable_events()?.into();
        Ok(out)
    }

    /// After the flip: enables on the target the events enabled on the source (the copy
    /// created them disabled, so no copy runs an event before it owns the shard). Always
    /// journaled, idempotent. Returns how many.
    fn enable_events(&mut self) -> Result<usize> {
        let (source, target) = (self.source.clone(), self.target.clone());
        let mut events = Vec::new();
        // A merge's survivor and a key move's receiver have their own events, enabled as
        // they were.
        for p in self
            .pairs
            .clone()
            .into_iter()
            .filter(|_| !self.plan.is_merge() && !self.plan.is_key_move())
        {
            events.extend(copy::objects::enabled_events(self.fx.reader(&source)?, &p)?);
        }
        let names: Vec<String> = events
            .iter()
            .map(|e| format!("{}.{}", e.schema, e.name))
            .collect();
        self.effect(
            Effect::EnableEvents,
            &target,
            serde_json::json!({"events": names}),
            |m| m.fx.enable_events(&target, &events),
        )?;
        Ok(events.len())
    }

    fn flip_directory(&mut self) -> Result<serde_json::Value> {
        if !self.state.verified || !self.phase.may_flip() {
            return Err(Error::Refused(format!(
                "operation {}: the target has not been verified",
                self.fx.op()
            )));
        }
        let flip = match self.plan.clone() {
            OperationPlan::Merge(plan) => Flip::Merge(plan),
            OperationPlan::Split(plan) => Flip::Split {
                func_id: self.shard.func_id,
                old_shard: plan.old_shard,
                new_shard: plan.new_shard,
                mapping: plan.mapping.to_new_mapping()?,
            },
            OperationPlan::KeyMove(plan) => Flip::Keys(plan),
            OperationPlan::Move => Flip::Move {
                shard: self.shard.id,
                from: self.source.clone(),
                to: self.target.clone(),
            },
        };
        if self.state.target_position_at_flip.is_none() {
            // Under the fence and before the flip: no event of the new placement precedes
            // it. Journaled before the flip so that a crash right after still knows it.
            let target = self.target.clone();
            self.state.target_position_at_flip = Some(self.fx.coordinates(&target)?.position);
            let outputs = serde_json::to_value(&self.state).unwrap_or_default();
            self.fx
                .set_step_outputs(self.step_no, &outputs, self.phase)?;
        }
        let directory_node = self.inv.directory_label().to_string();
        let attempt = self.effect(
            Effect::Flip,
            &directory_node,
            serde_json::json!({"shard": self.shard.id, "to": self.target}),
            |m| {
                // Every write the target lacks would be lost: the fence must still stand,
                // on the servers the copy was made between.
                m.fence_intact()?;
                if m.state.fence == Some(Fence::Switch) {
                    m.nothing_escaped_the_switch()?;
                }
                m.check_identity()?;
                m.fx.flip(&flip)
            },
        );
        let version = match attempt {
            Ok(v) => v,
            Err(e @ (Error::LeaseLost(_) | Error::Refused(_))) => return Err(e),
            Err(e) => {
                // The reply may have been lost after the commit: read the directory back.
                match self.directory_flipped() {
                    Ok(true) => {
                        log(
                            0,
                            &format!("the flip committed although its reply was lost ({e})"),
                        );
                        0
                    }
                    Ok(false) => return Err(e),
                    Err(read) => {
                        self.flip_unsettled = true;
                        return Err(Error::server(
                            &directory_node,
                            format!("the flip's outcome is unknown ({e}; reading it back failed: {read}); the fence stays up until `shardctl resume {}` settles it", self.fx.op()),
                        ));
                    }
                }
            }
        };
        self.state.flipped = true;
        if let (Flip::Move { from, to, .. }, Some(at)) =
            (&flip, self.state.target_position_at_flip.clone())
        {
            // Whoever syncs a reporting server next joins these schemas from the flip,
            // however this operation ends. Without the record a sync copies them afresh:
            // slower, never wrong, so its failure does not fail the flip.
            let schemas: Vec<String> = self.pairs.iter().map(|p| p.to.to_string()).collect();
            if let Err(e) = self.fx.record_reporting_follow(from, to, &schemas, &at) {
                log(
                    0,
                    &format!("the reporting servers' follow of the flip was not recorded ({e}): their next sync copies {} afresh", schemas.join(", ")),
                );
            }
        }
        if matches!(self.state.fence, Some(Fence::Shard | Fence::Switch)) && !self.plan.is_split() {
            if let Some(t) = self.fence_started {
                self.state.fence_millis = Some(t.elapsed().as_millis() as u64);
            }
        }
        log(
            1,
            &format!(
                "shard {} flipped (directory version {version})",
                self.shard.id
            ),
        );
        Ok(serde_json::json!({"node": self.target, "version": version}))
    }

    /// A key move's prune: the donor deletes the moved keys' rows (its guards let the
    /// prune's session through).
    fn prune_donor(&mut self) -> Result<serde_json::Value> {
        let donor = self.shard.id;
        let directory_node = self.inv.directory_label().to_string();
        self.effect(
            Effect::Prune,
            &directory_node,
            serde_json::json!({"shards": [donor]}),
            |m| m.fx.prune(&[donor]),
        )
    }

    fn prune_both(&mut self) -> Result<serde_json::Value> {
        let plan = self.plan.split().cloned().ok_or_else(|| {
            Error::Internal("a prune step in a move: the playbook check lets none through".into())
        })?;
        let directory_node = self.inv.directory_label().to_string();
        let shards = [plan.old_shard, plan.new_shard];
        self.effect(
            Effect::Prune,
            &directory_node,
            serde_json::json!({"shards": shards}),
            |m| m.fx.prune(&shards),
        )
    }

    fn drop_source(&mut self, keep: bool) -> Result<serde_json::Value> {
        if self.plan.is_split() {
            return Err(Error::Refused(
                "a split keeps its source: drop-source does not belong in a split playbook".into(),
            ));
        }
        if !self.state.flipped {
            return Err(Error::Refused(
                "drop-source before the flip: nothing is dropped before the flip".into(),
            ));
        }
        let source = self.source.clone();
        self.effect(
            Effect::DropSource,
            &source,
            serde_json::json!({"keep": keep}),
            |m| {
                let op = m.fx.op();
                for (i, p) in m.pairs.clone().into_iter().enumerate() {
                    if !m.fx.schema_exists(&source, &p.from)? {
                        continue;
                    }
                    // Under the fence only what takes no time whatever the size: the
                    // tables renamed into a trash schema, the emptied schema dropped.
                    // Clients that still hold this location get "unknown database" (with
                    // `keep` too: the trash is then left for the operator, not dropped).
                    let trash = m.fx.names().trash_schema(op, i);
                    let mut fenced = m.state.fenced_tables.clone();
                    if m.state.fence == Some(Fence::Switch) {
                        // Discarding drops the schema's triggers before its tables leave,
                        // table by table, and a DROP TRIGGER may wait: the switched
                        // guards would go first. The tables leave every client's reach
                        // first instead, in one RENAME to hidden names that carries their
                        // guards along, as under the shard fence.
                        let hide = crate::ops::fence::mapping(
                            m.fx.reader(&source)?,
                            std::slice::from_ref(&p),
                            op,
                        )?;
                        m.fx.raise_shard_fence(&source, &hide, statements::FENCE_LOCK_WAIT_SECS)?;
                        m.state.fenced_tables.extend(hide.iter().cloned());
                        fenced.extend(hide);
                    }
                    let tables = m.fx.tables_by_own_name(&source, &p.from, &fenced)?;
                    let held = m.state.fence == Some(Fence::ReadOnly);
                    m.with_super_read_only_lowered(&source, held, |m| {
                        m.fx.discard_schema(&source, &p.from, &tables, &trash)
                    })?;
                }
                Ok(())
            },
        )?;
        self.state.source_dropped = true;
        Ok(serde_json::json!({"kept": keep}))
    }

    /// Drops the old copy on each of the source's replicas (the inventory's `replicas:`),
    /// after the flip and drop-source: drop-source is unlogged, so the replicas would keep
    /// serving the old schemas, and a later move of the shard back would stop them (1050).
    /// Each replica first applies the source's binary log up to now (everything logged
    /// into the old copy before the fence), then loses the schemas, unlogged there. Never
    /// through the source's binary log: another channel reading it (a reporting server's,
    /// until it follows the move) would carry a logged drop into a live copy of that name.
    /// Idempotent (reads each replica); the number of schemas dropped.
    fn drop_replica_copies(&mut self) -> Result<usize> {
        if self.same_node() {
            return Ok(0);
        }
        let source = self.source.clone();
        let replicas = self.inv.node(&source)?.spec.replicas.clone();
        let schemas: Vec<Ident> = self.pairs.iter().map(|p| p.from.clone()).collect();
        // A replica entry naming a node of the inventory (the target, a node holding other
        // shards, a reporting node) is never a place to drop a shard's schemas unlogged:
        // such entries are skipped, and said so.
        let (replicas, by_name): (Vec<_>, Vec<_>) = replicas
            .into_iter()
            .partition(|r| matches!(r, crate::config::ReplicaSpec::Server(_)));
        for r in &by_name {
            crate::output::log(
                0,
                &format!(
                    "{source}'s replicas: names the node {}, which may serve shards: the old copy is not dropped there (list a replica by its address to have it dropped)",
                    r.label()
                ),
            );
        }
        // Only once the shard is served from the target and the old copy has left the
        // source, whatever order a playbook gives its steps: read from the servers.
        if !self.state.flipped {
            return Err(Error::Refused(
                "the old copy leaves the source's replicas only after the flip".into(),
            ));
        }
        for schema in &schemas {
            if self.fx.schema_exists(&source, schema)? {
                return Err(Error::Refused(format!(
                    "the source {source} still has {schema}: its replicas keep their copy until drop-source has run"
                )));
            }
        }
        let detail = serde_json::json!({
            "replicas": replicas.iter().map(|r| r.label()).collect::<Vec<_>>(),
            "schemas": schemas.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
        });
        let target = self.target.clone();
        let done = self.effect(Effect::DropReplicaCopies, &source, detail, |m| {
            // Read inside the effect: a resume waits for the source's position then.
            let after = m.fx.coordinates(&source)?.position;
            let live = [m.fx.settings(&target)?.server_id];
            let mut dropped = 0;
            for r in &replicas {
                dropped +=
                    m.fx.drop_schemas_on_replica(&source, r, &schemas, &after, &live)?;
            }
            Ok(serde_json::json!({"dropped": dropped, "after": after.to_string()}))
        })?;
        Ok(done["dropped"].as_u64().unwrap_or(0) as usize)
    }

    /// Drops the trash schemas drop-source left on the source (the slow part of dropping
    /// the old copy), once the fence is lifted. Reads the server, so it is safe to run
    /// again; the number dropped.
    fn drop_trash(&mut self) -> Result<usize> {
        let source = self.source.clone();
        let op = self.fx.op();
        let mut present = Vec::new();
        for i in 0..self.pairs.len() {
            let trash = self.fx.names().trash_schema(op, i);
            if self.fx.schema_exists(&source, &trash)? {
                present.push(trash);
            }
        }
        if present.is_empty() {
            return Ok(0);
        }
        // Another operation's read-only fence may hold the server under MySQL's
        // super_read_only, which refuses the drop even to this account. Lowering it here
        // could race with that fence being lifted and leave the server read-only for good:
        // leave the trash (out of every client's reach) for a later resume instead.
        if self.fx.settings(&source)?.super_read_only {
            return Err(Error::Refused(format!(
                "{source} is super_read_only (another operation's read-only fence): the old copy's trash ({}) is left; `shardctl resume` drops it once the fence is lifted",
                present.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(", ")
            )));
        }
        let names: Vec<String> = present.iter().map(|s| s.to_string()).collect();
        self.effect(
            Effect::DropTrash,
            &source,
            serde_json::json!({"schemas": names}),
            |m| m.fx.drop_schemas(&source, &present, false),
        )?;
        Ok(present.len())
    }

    /// Runs `f` with MySQL's super_read_only lowered around it when `held` (this operation's
    /// read-only fence stands) and the server is super_read_only now: DDL is refused under
    /// it even to this account, while plain read_only keeps clients out meanwhile. Only a
    /// value that was on is put back (a server restarted since the fence came back
    /// writable, and stays so). MariaDB has no super_read_only: `f` alone.
    pub(super) fn with_super_read_only_lowered(
        &mut self,
        node: &str,
        held: bool,
        f: impl FnOnce(&mut Self) -> Result<()>,
    ) -> Result<()> {
        let on = held
            && self.fx.dialect(node)?.flavor().has_super_read_only()
            && self.fx.settings(node)?.super_read_only;
        let (lower, raise) = if on {
            self.fx
                .dialect(node)?
                .super_read_only_bracket(statements::FENCE_LOCK_WAIT_SECS)
        } else {
            (Vec::new(), Vec::new())
        };
        if !lower.is_empty() {
            self.fx.run(node, &lower)?;
        }
        let out = f(self);
        if !raise.is_empty() {
            self.fx.run(node, &raise)?;
        }
        out
    }
}

/// A merge's own parts of the procedure (the rest is a move's, or on one node a split's).
impl<E: Effects> Mover<'_, E> {
    /// The survivor's sharded tables with the condition selecting the retired shard's
    /// keys in them, from the directory as it reads before the flip.
    pub(super) fn retired_keys(&mut self) -> Result<Vec<(Ident, Ident, statements::Condition)>> {
        let plan = self
            .plan
            .merge()
            .cloned()
            .ok_or_else(|| Error::Internal("retired keys outside a merge".into()))?;
        let snap = self.fx.directory_snapshot()?;
        let retired = self.shard.clone();
        let mut out = Vec::new();
        for t in snap.tables.iter().filter(|t| t.func_id == retired.func_id) {
            let survivor = Ident::new(
                "schema",
                &crate::directory::shard_schema(&t.schema, plan.survivor),
            )?;
            let column = Ident::new("column", &t.column)?;
            let not_owned = crate::prune::predicate::not_owned(&snap, &retired, &column)?;
            out.push((
                survivor,
                Ident::new("table", &t.table)?,
                statements::owned(&not_owned),
            ));
        }
        Ok(out)
    }

    /// Before anything changes: both shards' schemas on the node, the same tables defined
    /// the same way (the survivor must be able to take every row of the retired shard), and
    /// no row outside its owner's key space (an unpruned split's leftovers would mix).
    fn merge_preflight(&mut self) -> Result<usize> {
        let (node, into) = (self.source.clone(), self.target.clone());
        let retired = self.shard.id;
        for p in self.pairs.clone() {
            if !self.fx.schema_exists(&node, &p.from)? {
                return Err(Error::Refused(format!(
                    "the source {node} has no schema {}",
                    p.from
                )));
            }
            if !self.fx.schema_exists(&into, &p.to)? {
                return Err(Error::Refused(format!(
                    "{into} has no schema {} for the surviving shard",
                    p.to
                )));
            }
        }
        self.merge_tables_match()?;
        let keys = self.retired_keys()?;
        let snap = self.fx.directory_snapshot()?;
        for (survivor, table, retired_keys) in &keys {
            if self
                .fx
                .reader(&into)?
                .first::<u8>(&statements::any_where(survivor, table, retired_keys))?
                .is_some()
            {
                return Err(Error::Refused(format!(
                    "{survivor}.{table} already holds rows of shard {retired}'s keys (an unpruned split?): prune it first, a merge would mix them"
                )));
            }
            let pair = self
                .pairs
                .iter()
                .find(|p| &p.to == survivor)
                .cloned()
                .ok_or_else(|| Error::Internal(format!("no retired schema for {survivor}")))?;
            let column = snap
                .tables
                .iter()
                .find(|t| t.func_id == self.shard.func_id && t.table == table.as_str())
                .map(|t| Ident::new("column", &t.column))
                .transpose()?
                .ok_or_else(|| Error::Internal(format!("no sharding column for {table}")))?;
            let foreign = crate::prune::predicate::not_owned(&snap, &self.shard, &column)?;
            if self
                .fx
                .reader(&node)?
                .first::<u8>(&statements::any_where(&pair.from, table, &foreign))?
                .is_some()
            {
                return Err(Error::Refused(format!(
                    "{}.{table} holds rows shard {retired} does not own: `shardctl prune --shard {retired}` first",
                    pair.from
                )));
            }
        }
        Ok(keys.len())
    }

    /// Every base table of each retired schema is in the survivor's, and none more, each
    /// defined the same way (under the shard fence the retired tables' hidden names read
    /// back as their own).
    pub(super) fn merge_tables_match(&mut self) -> Result<()> {
        let (node, into) = (self.source.clone(), self.target.clone());
        for p in self.pairs.clone() {
            let renames = self.hidden_names(&p.from);
            let from = crate::ops::merge::read_tables(self.fx.reader(&node)?, &p.from, &renames)?;
            let to = crate::ops::merge::read_tables(self.fx.reader(&into)?, &p.to, &[])?;
            crate::ops::merge::compare_tables(&p.from, &from, &p.to, &to)?;
        }
        Ok(())
    }

    /// The retired shard's unmapped tables are empty or the same as the survivor's (see
    /// `crate::ops::checks::merge_loses_no_unmapped_row`): checked again when the
    /// verification runs and under the fence, once no write reaches the retired schemas
    /// until they are dropped (the shard fence hides every table of them).
    fn merge_loses_no_unmapped_row(&mut self) -> Result<serde_json::Value> {
        let plan = self
            .plan
            .merge()
            .cloned()
            .ok_or_else(|| Error::Internal("unmapped tables outside a merge".into()))?;
        let snap = self.fx.directory_snapshot()?;
        let renames: Vec<(String, String)> = self
            .state
            .fenced_tables
            .iter()
            .map(|f| (f.hidden.to_string(), f.table.to_string()))
            .collect();
        crate::ops::checks::merge_loses_no_unmapped_row(
            self.inv,
            &snap,
            &self.shard,
            plan.survivor,
            &self.target,
            &renames,
        )
    }

    /// After a merge's flip: the survivor's split guards (from a split it once made) are
    /// replaced by ones that accept every key it owns now, the retired keys included
    /// (until then a write of those keys gets the guard's error and is retried after the
    /// client re-reads the directory — never accepted by the wrong shard). Only tables
    /// that have guards; idempotent. The tables guarded.
    fn widen_survivor_guards(&mut self) -> Result<Vec<String>> {
        let plan = self
            .plan
            .merge()
            .cloned()
            .ok_or_else(|| Error::Internal("survivor guards outside a merge".into()))?;
        let snap = crate::ops::merge::after_merge(self.fx.directory_snapshot()?, &plan)?;
        let survivor = snap.shard(plan.survivor)?.clone();
        let node = self.target.clone();
        let dialect = self.fx.dialect(&node)?;
        let (mut stmts, mut guarded) = (Vec::new(), Vec::new());
        for t in snap.tables.iter().filter(|t| t.func_id == plan.func_id) {
            let schema = Ident::new(
                "schema",
                &crate::directory::shard_schema(&t.schema, plan.survivor),
            )?;
            let table = Ident::new("table", &t.table)?;
            let triggers = self.fx.reader(&node)?.triggers_in_order(&schema)?;
            let has_guard = statements::GuardEvent::ALL
                .iter()
                .any(|e| triggers.contains(&statements::guard_trigger_name(&table, *e)));
            if !has_guard {
                continue;
            }
            let column = Ident::new("column", &t.column)?;
            let not_owned = crate::prune::predicate::not_owned(&snap, &survivor, &column)?;
            for event in statements::GuardEvent::ALL {
                stmts.extend(dialect.install_guard(
                    &schema,
                    &table,
                    &table,
                    event,
                    &column,
                    &not_owned,
                    survivor.id,
                ));
            }
            guarded.push(format!("{schema}.{table}"));
        }
        if !stmts.is_empty() {
            self.effect(
                Effect::Guard,
                &node,
                serde_json::json!({"tables": guarded}),
                |m| {
                    m.fx.run(&node, &[statements::lock_wait_timeout(10)])?;
                    m.fx.run_unlogged(&node, &stmts)
                },
            )?;
        }
        Ok(guarded)
    }
}

/// A stable 64-bit digest (FNV-1a) of a table's comparable definition, as hex.
fn definition_digest(text: &str) -> String {
    let hash = text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("{hash:016x}")
}

pub(super) fn verify_options(p: &VerifyParams) -> VerifyOptions {
    VerifyOptions {
        workers: p.workers,
        chunk_rows: p.chunk_rows,
        max_snapshot_secs: p.max_snapshot_secs,
        ..VerifyOptions::default()
    }
}

/// Fails naming every differing chunk (table and primary-key range).
pub(super) fn refuse_differences(report: &VerifyReport) -> Result<()> {
    if report.differences.is_empty() {
        return Ok(());
    }
    Err(Error::Refused(format!(
        "verification failed: {}",
        report
            .differences
            .iter()
            .map(|d| d.to_string())
            .collect::<Vec<_>>()
            .join("; ")
    )))
}
