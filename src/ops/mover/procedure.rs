//! The steps of a move or split. Each is idempotent: run again after a crash at any point,
//! it checks what is already in place and does only what is missing. Every change to a
//! server or to the directory goes through [`Mover::effect`].

use super::{hidden_name, Effect, Mover};
use crate::copy::{self, CopyReport, Method};
use crate::directory::ShardState;
use crate::error::{Error, Result};
use crate::ident::Ident;
use crate::output::log;
use crate::playbook::{Fence, Step};
use crate::server::catalog::TableInfo;
use crate::server::{ConnectSpec, Filters, Server, SourceSpec, StartAt, Stmt};
use std::time::{Duration, Instant};

impl Mover<'_> {
    pub(super) fn connect(&self, node: &str) -> Result<Server> {
        Server::connect_node(self.inv, node)
    }

    fn spec(&self, node: &str) -> Result<ConnectSpec> {
        ConnectSpec::for_node(self.inv, self.inv.node(node)?)
    }

    pub(super) fn run_step(&mut self, step: &Step) -> Result<serde_json::Value> {
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
            Step::Filter(_) => self.filter(),
            Step::StartReplication(_) => {
                let target = self.target.clone();
                self.effect(
                    Effect::StartChannel,
                    &target,
                    serde_json::json!({"channel": self.channel}),
                    |m| m.connect(&m.target)?.start_channel(&m.channel),
                )?;
                Ok(serde_json::Value::Null)
            }
            Step::Wait(w) => {
                let timeout = Duration::from_secs(w.timeout_secs);
                if w.until.is_some() {
                    let pos = self.state.final_position.clone().ok_or_else(|| {
                        Error::Internal("no final position: the lock step has not run".into())
                    })?;
                    let mut t = self.connect(&self.target)?;
                    // A run that crashed after stopping the channel left it stopped: start
                    // it again (the source is fenced, so nothing of the shard follows).
                    let running = t
                        .channel_status(&self.channel)?
                        .is_some_and(|s| s.sql_running);
                    if !running {
                        let target = self.target.clone();
                        self.effect(
                            Effect::StartChannel,
                            &target,
                            serde_json::json!({"channel": self.channel, "restart": true}),
                            |m| m.connect(&m.target)?.start_channel(&m.channel),
                        )?;
                    }
                    t.wait_for_position(&self.channel, &pos, timeout)?;
                    let target = self.target.clone();
                    self.effect(
                        Effect::StopChannel,
                        &target,
                        serde_json::json!({"at": pos}),
                        |m| m.connect(&m.target)?.stop_channel(&m.channel),
                    )?;
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
                self.reset_channel()?;
                Ok(serde_json::Value::Null)
            }
        }
    }

    /// Removes the channel and its filters from the target, if it is there.
    pub(super) fn reset_channel(&mut self) -> Result<()> {
        if self.same_node() {
            return Ok(());
        }
        let target = self.target.clone();
        self.effect(
            Effect::ResetChannel,
            &target,
            serde_json::json!({"channel": self.channel}),
            |m| {
                let mut t = m.connect(&m.target)?;
                if t.channel_status(&m.channel)?.is_some() {
                    t.set_filters(&m.channel, &Filters::default())?;
                    t.reset_channel(&m.channel)?;
                }
                Ok(())
            },
        )
    }

    fn filter(&mut self) -> Result<serde_json::Value> {
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
        let detail = serde_json::json!({"wild_do_table": filters.wild_do_schemas, "rewrite_db": filters.rewrite_db});
        let target = self.target.clone();
        self.effect(Effect::SetFilters, &target, detail.clone(), |m| {
            m.connect(&m.target)?.set_filters(&m.channel, &filters)
        })?;
        Ok(detail)
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
        Ok(serde_json::json!({"source_server_id": s.server_id, "target_server_id": t.server_id}))
    }

    fn backup(&mut self, method: Method, workers: usize) -> Result<serde_json::Value> {
        let target = self.target.clone();
        let schemas: Vec<String> = self.pairs.iter().map(|p| p.to.to_string()).collect();
        let report: CopyReport = self.effect(
            Effect::Copy,
            &target,
            serde_json::json!({"method": method, "schemas": schemas}),
            |m| {
                let mut tgt = m.connect(&m.target)?;
                // A channel left by an earlier attempt would write into the new copy.
                if tgt.channel_status(&m.channel)?.is_some() {
                    tgt.set_filters(&m.channel, &Filters::default())?;
                    tgt.reset_channel(&m.channel)?;
                }
                // Preflight found none of these schemas, so any present now are this
                // operation's own partial copy from an interrupted attempt.
                for p in &m.pairs {
                    if tgt.schema_exists(&p.to)? {
                        tgt.drop_schema(&p.to)?;
                    }
                }
                m.state.target_created = true;
                let source = m.spec(&m.source)?;
                let target = m.spec(&m.target)?;
                match method {
                    Method::Native => {
                        let opts = copy::native::NativeOptions {
                            workers,
                            ..Default::default()
                        };
                        copy::native::copy(&source, &target, &m.pairs, opts, &m.copy_progress)
                    }
                    Method::Dump => copy::dump::copy_with_progress(
                        &source,
                        Some(&target),
                        None,
                        &m.pairs,
                        &m.copy_progress,
                    ),
                }
            },
        )?;
        self.state.coordinates = report.coordinates.clone();
        self.state.copied_rows = report.rows;
        Ok(serde_json::to_value(&report).unwrap_or_default())
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
        };
        let target = self.target.clone();
        let detail = serde_json::json!({"channel": self.channel, "from": coords.position});
        self.effect(Effect::PointChannel, &target, detail.clone(), |m| {
            let mut t = m.connect(&m.target)?;
            t.reset_channel(&m.channel)?;
            t.change_source(&m.channel, &spec)
        })?;
        Ok(detail)
    }

    fn catch_up(&mut self, lag_below: u64, timeout: Duration) -> Result<serde_json::Value> {
        let deadline = Instant::now() + timeout;
        let mut src = self.connect(&self.source)?;
        let mut t = self.connect(&self.target)?;
        loop {
            crate::signal::check()?;
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
        self.dir
            .set_shard_state_leased(&self.lease, self.shard.id, ShardState::ReadOnly)?;
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
                        let mut src = m.connect(&m.source)?;
                        let now = src.settings()?.read_only;
                        m.dir.read_only_fence_join(&m.lease, &m.source, now)?;
                        m.state.fence = Some(Fence::ReadOnly);
                        src.exec(&Stmt::text(format!(
                            "SET SESSION lock_wait_timeout = {}",
                            timeout_secs.max(1)
                        )))?;
                        src.set_read_only(true)
                    },
                )?;
            }
            Fence::Shard => {
                let mut src = self.connect(&self.source)?;
                let up = !self.state.fenced_tables.is_empty()
                    && !crate::ops::fence::hidden_now(&mut src, &self.state.fenced_tables)?
                        .is_empty();
                if !up {
                    let mapping = crate::ops::fence::mapping(&mut src, &self.pairs, self.lease.op)?;
                    self.effect(
                        Effect::RaiseFence,
                        &source,
                        serde_json::json!({"fence": fence, "fenced_tables": mapping}),
                        |m| {
                            m.state.fence = Some(Fence::Shard);
                            m.state.fenced_tables = mapping.clone();
                            crate::ops::fence::raise(&mut src, &mapping, timeout_secs)
                        },
                    )?;
                }
                self.state.fence = Some(Fence::Shard);
            }
        }
        let fin = self.connect(&self.source)?.coordinates()?.position;
        self.state.final_position = Some(fin.clone());
        Ok(serde_json::json!({"fence": fence, "final_position": fin}))
    }

    /// Lifts the fence: the read-only hold released (the server writable again if no other
    /// operation holds it and it was writable before), or the shard's tables renamed back —
    /// unless a move flipped, in which case the old copy stays out of reach. Reads the
    /// servers, so it is safe after any partial state.
    pub(super) fn lift_fence(&mut self) -> Result<()> {
        let source = self.source.clone();
        let keep_hidden = self.state.flipped && self.split.is_none();
        let fenced = self.state.fenced_tables.clone();
        let ro_held = self.dir.read_only_fence_held(self.lease.op, &source)?;
        let shard_hidden = if fenced.is_empty() || keep_hidden {
            false
        } else {
            let mut src = self.connect(&source)?;
            !crate::ops::fence::hidden_now(&mut src, &fenced)?.is_empty()
        };
        if ro_held || shard_hidden {
            self.effect(
                Effect::LowerFence,
                &source,
                serde_json::json!({"read_only": ro_held, "fenced_tables": if shard_hidden { fenced.len() } else { 0 }}),
                |m| {
                    let mut src = m.connect(&m.source)?;
                    if shard_hidden {
                        crate::ops::fence::lower(&mut src, &fenced)?;
                    }
                    if ro_held {
                        let lease = m.lease;
                        m.dir
                            .read_only_fence_leave(&lease, &source, || src.set_read_only(false))?;
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
        if !self.state.flipped || self.split.is_some() {
            self.dir
                .set_shard_state_leased(&self.lease, self.shard.id, ShardState::Online)?;
        }
        Ok(())
    }

    /// Compares every table of the shard on both sides: the set of tables (every table on
    /// the source must be on the target, and no other), then rows and checksums.
    fn verify(&mut self) -> Result<serde_json::Value> {
        let mut src = self.connect(&self.source)?;
        let mut tgt = self.connect(&self.target)?;
        let mut checked = Vec::new();
        for p in &self.pairs {
            // (name on the target, name on the source now)
            let source_tables: Vec<(Ident, Ident)> = match self.state.fence {
                Some(Fence::Shard) => self
                    .state
                    .fenced_tables
                    .iter()
                    .filter(|(s, _, _)| s == p.from.as_str())
                    .map(|(_, t, h)| Ok((Ident::new("table", t)?, Ident::new("table", h)?)))
                    .collect::<Result<_>>()?,
                _ => src
                    .tables(&p.from)?
                    .into_iter()
                    .filter(|t| {
                        !t.is_view
                            && !t
                                .name
                                .as_str()
                                .starts_with(crate::ops::fence::HIDDEN_PREFIX)
                    })
                    .map(|t| (t.name.clone(), t.name))
                    .collect(),
            };
            let target_tables: Vec<TableInfo> = if tgt.schema_exists(&p.to)? {
                tgt.tables(&p.to)?
                    .into_iter()
                    .filter(|t| !t.is_view)
                    .collect()
            } else {
                Vec::new()
            };
            for (name, _) in &source_tables {
                if !target_tables.iter().any(|t| &t.name == name) {
                    return Err(Error::Refused(format!(
                        "verification failed: {}.{name} is on the source but not on the target {}",
                        p.to, self.target
                    )));
                }
            }
            for t in &target_tables {
                if !source_tables.iter().any(|(n, _)| n == &t.name) {
                    return Err(Error::Refused(format!(
                        "verification failed: {}.{} is on the target {} but not on the source",
                        p.to, t.name, self.target
                    )));
                }
            }
            for (name, at_source) in &source_tables {
                let a = src.count_and_checksum(&p.from, at_source)?;
                let b = tgt.count_and_checksum(&p.to, name)?;
                if a != b {
                    return Err(Error::Refused(format!(
                        "verification failed for {}.{name}: source {} rows (checksum {:?}), target {} rows (checksum {:?})",
                        p.to, a.0, a.1, b.0, b.1
                    )));
                }
                checked.push(serde_json::json!({"table": format!("{}.{name}", p.to), "rows": a.0, "checksum": a.1}));
            }
        }
        self.state.verified = true;
        Ok(serde_json::json!({"tables": checked}))
    }

    /// True when the directory already shows this operation's flip.
    pub(super) fn directory_flipped(&mut self) -> Result<bool> {
        match &self.split {
            Some(plan) => Ok(self
                .dir
                .shard_location(plan.new_shard)?
                .is_some_and(|(_, state)| state == ShardState::Online.as_sql())),
            None => Ok(self
                .dir
                .shard_location(self.shard.id)?
                .is_some_and(|(node, _)| node == self.target)),
        }
    }

    fn flip(&mut self) -> Result<serde_json::Value> {
        if !self.state.verified {
            return Err(Error::Refused(format!(
                "operation {}: the target has not been verified",
                self.lease.op
            )));
        }
        let directory_node = self.inv.file.directory.node.clone();
        let attempt = self.effect(
            Effect::Flip,
            &directory_node,
            serde_json::json!({"shard": self.shard.id, "to": self.target}),
            |m| m.flip_in_directory(),
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
                            format!("the flip's outcome is unknown ({e}; reading it back failed: {read}); the fence stays up until `shardctl resume {}` settles it", self.lease.op),
                        ));
                    }
                }
            }
        };
        self.state.flipped = true;
        if self.state.fence == Some(Fence::Shard) && self.split.is_none() {
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

    fn flip_in_directory(&mut self) -> Result<u64> {
        if let Some(plan) = self.split.clone() {
            let mapping = plan.mapping.to_new_mapping()?;
            return self.dir.split_flip(
                &self.lease,
                self.shard.func_id,
                plan.old_shard,
                plan.new_shard,
                &mapping,
            );
        }
        let snap = self.dir.load()?;
        let node = snap
            .nodes
            .iter()
            .find(|n| n.name == self.target)
            .cloned()
            .ok_or_else(|| Error::Usage(format!("node {} is not in the directory", self.target)))?;
        self.dir
            .flip_shard(&self.lease, self.shard.id, &self.source, &node)
    }

    /// Same-node split, before the fence: empty tables under the new names, and the other
    /// objects' definitions kept for after the copy.
    fn local_prepare(&mut self) -> Result<serde_json::Value> {
        let source = self.source.clone();
        let schemas: Vec<String> = self.pairs.iter().map(|p| p.to.to_string()).collect();
        self.effect(
            Effect::LocalPrepare,
            &source,
            serde_json::json!({"schemas": schemas}),
            |m| {
                let mut src = m.connect(&m.source)?;
                m.state.target_created = true;
                m.state.local_ddl.clear();
                for p in &m.pairs {
                    if src.schema_exists(&p.to)? {
                        src.drop_schema(&p.to)?;
                    }
                    let objects = copy::objects::read(&mut src, p)?;
                    copy::objects::create_tables(&mut src, p, &objects)?;
                    for (_, ddl) in &objects.after_data {
                        m.state.local_ddl.push((p.to.to_string(), ddl.clone()));
                    }
                }
                Ok(())
            },
        )?;
        Ok(
            serde_json::json!({"prepared": self.pairs.len(), "deferred_objects": self.state.local_ddl.len()}),
        )
    }

    /// Same-node split, under the fence: copies every fenced table into its new schema,
    /// then creates the deferred objects.
    fn local_copy(&mut self) -> Result<u64> {
        let source = self.source.clone();
        let rows = self.effect(
            Effect::LocalCopy,
            &source,
            serde_json::json!({"tables": self.state.fenced_tables.len()}),
            |m| {
                let mut src = m.connect(&m.source)?;
                src.exec(&Stmt::text("SET SESSION foreign_key_checks = 0"))?;
                let mut rows = 0;
                for (schema, table, hidden) in m.state.fenced_tables.clone() {
                    let pair = m
                        .pairs
                        .iter()
                        .find(|p| p.from.as_str() == schema)
                        .ok_or_else(|| Error::Internal(format!("no target schema for {schema}")))?
                        .clone();
                    let table = Ident::new("table", &table)?;
                    let hidden = Ident::new("table", &hidden)?;
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
                        "INSERT INTO {}.{} ({c}) SELECT {c} FROM {}.{}",
                        pair.to.quoted(),
                        table.quoted(),
                        pair.from.quoted(),
                        hidden.quoted(),
                        c = cols.join(", ")
                    )))?;
                }
                src.exec(&Stmt::text("SET SESSION foreign_key_checks = 1"))?;
                for p in &m.pairs {
                    let objects = copy::objects::SchemaObjects {
                        tables: Vec::new(),
                        after_data: m
                            .state
                            .local_ddl
                            .iter()
                            .filter(|(s, _)| s == p.to.as_str())
                            .map(|(_, d)| ("object".to_string(), d.clone()))
                            .collect(),
                    };
                    copy::objects::create_after_data(&mut src, p, &objects)?;
                }
                Ok(rows)
            },
        )?;
        self.state.copied_rows = rows;
        Ok(rows)
    }

    fn prune_both(&mut self) -> Result<serde_json::Value> {
        let plan = self
            .split
            .clone()
            .ok_or_else(|| Error::Usage("prune is a split step".into()))?;
        let directory_node = self.inv.file.directory.node.clone();
        let shards = [plan.old_shard, plan.new_shard];
        self.effect(
            Effect::Prune,
            &directory_node,
            serde_json::json!({"shards": shards}),
            |m| {
                let quiet = |_: &str, _: u64, _: u64, _: u64| {};
                let mut out = Vec::new();
                for shard in shards {
                    let pending = m
                        .dir
                        .active_operations()?
                        .into_iter()
                        .find(|o| {
                            o.shard_id == Some(shard)
                                && o.kind == crate::directory::journal::OpKind::Prune
                        })
                        .map(|o| o.id);
                    let reports = crate::prune::run(
                        m.inv,
                        shard,
                        pending,
                        &crate::prune::Options::default(),
                        &quiet,
                        Some(m.lease.op),
                    )?;
                    out.push(serde_json::json!({"shard": shard, "tables": reports}));
                }
                Ok(serde_json::Value::Array(out))
            },
        )
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
        let source = self.source.clone();
        self.effect(
            Effect::DropSource,
            &source,
            serde_json::json!({"keep": keep}),
            |m| {
                let mut src = m.connect(&m.source)?;
                for p in &m.pairs {
                    if !src.schema_exists(&p.from)? {
                        continue;
                    }
                    if keep {
                        let tables: Vec<TableInfo> = src
                            .tables(&p.from)?
                            .into_iter()
                            .filter(|t| {
                                !t.is_view
                                    && !t
                                        .name
                                        .as_str()
                                        .starts_with(crate::ops::fence::HIDDEN_PREFIX)
                            })
                            .collect();
                        let renames = tables
                            .iter()
                            .enumerate()
                            .map(|(i, t)| {
                                Ok(format!(
                                    "{}.{} TO {}.{}",
                                    p.from.quoted(),
                                    t.name.quoted(),
                                    p.from.quoted(),
                                    hidden_name(m.lease.op, 1000 + i)?.quoted()
                                ))
                            })
                            .collect::<Result<Vec<_>>>()?;
                        if !renames.is_empty() {
                            src.exec_unlogged(&[Stmt::text(format!(
                                "RENAME TABLE {}",
                                renames.join(", ")
                            ))])?;
                        }
                    } else {
                        src.exec_unlogged(&[Stmt::text(format!(
                            "DROP DATABASE IF EXISTS {}",
                            p.from.quoted()
                        ))])?;
                    }
                }
                Ok(())
            },
        )?;
        self.state.source_dropped = true;
        Ok(serde_json::json!({"kept": keep}))
    }
}
