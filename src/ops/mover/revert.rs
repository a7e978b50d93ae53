//! The revert window after a move (`--revert-window`): the old copy, moved into its trash
//! schemas on the source by `drop-source` (out of every client's reach), is kept current
//! by a reverse channel on the source that replays the target's binary log from the
//! position read under the move's fence before its flip, rewriting the shard's schemas
//! into the trash schemas. The `revert-window` step waits until the window ends or an
//! operator asks:
//! - `shardctl finalize OP` (or the window's end): the reverse channel removed, the old copy
//!   dropped — only once the new node answers and holds the shard (every schema of the
//!   shard there, with every table the old copy holds); until then the window stays open,
//!   its step's outputs say why (`window_held`) and the owner checks again every few
//!   seconds;
//! - `shardctl extend OP --by DURATION`: the window ends later;
//! - `shardctl revert OP`: the move in reverse, with the same guarantees — the reverse
//!   channel caught up and the copies compared outside any fence, the shard fence on the
//!   target, the reverse channel at the target's position read under it, the same tables
//!   on both sides, the directory flipped back, the old copy's tables renamed back into the
//!   shard's schemas (with the views, routines, triggers and events read from the target
//!   before its fence), the target's copy moved into a trash schema before its fence ends,
//!   the reverse channel removed.
//!
//! A revert that fails before its flip lifts its fence, starts the reverse channel again
//! and goes on waiting (the failure is journaled in the step's outputs); after its flip it
//! only goes forward, also when resumed after a crash. Every effect is journaled like the
//! move's own.

use super::{Effect, Mover};
use crate::copy::SchemaPair;
use crate::directory::journal::WindowRequest;
use crate::directory::phase::{Phase, Transition};
use crate::directory::ShardState;
use crate::error::{Error, Result};
use crate::ident::Ident;
use crate::ops::effects::{ChannelState, Effects, Flip, VerifyRequest};
use crate::ops::fence::Fenced;
use crate::playbook::RevertWindowParams;
use crate::server::statements::DefinedKind;
use crate::server::{statements, Filters, SourceSpec, StartAt};
use crate::verify::TablePair;
use std::time::{Duration, Instant};

/// How often the window's end checks again whether the new node holds the shard.
const HOLD_RECHECK: Duration = Duration::from_secs(3);

impl<E: Effects> Mover<'_, E> {
    /// The `revert-window` step.
    pub(super) fn revert_window(&mut self, p: &RevertWindowParams) -> Result<serde_json::Value> {
        if self.plan.renames_schemas() || self.same_node() {
            return Err(Error::Refused(
                "a revert window belongs to a move between two nodes".into(),
            ));
        }
        if !self.state.flipped || !self.state.source_dropped {
            return Err(Error::Refused(
                "revert-window before the flip and drop-source: there is nothing to revert to"
                    .into(),
            ));
        }
        if self.state.old_copy_dropped {
            return Ok(serde_json::json!({"finalized": true}));
        }
        if self.state.reverted || (self.state.revert_began && self.points_at_source()?) {
            self.state.reverted = true;
            self.advance(Transition::FlippedBack)?;
            return self.finish_revert();
        }
        self.roll_back_revert()?;
        let until = match self.state.revert_until_unix {
            Some(u) => u,
            None => {
                // Rounded up to the second: the window lasts at least its length.
                let u = crate::clock::unix_millis().div_ceil(1000) as i64 + p.window_secs as i64;
                self.state.revert_until_unix = Some(u);
                self.save_state()?;
                u
            }
        };
        let mut until = until;
        // An extension asked for while no owner ran counts before the deadline is read.
        if let Some(WindowRequest::ExtendUntil(u)) = self.fx.window_request()? {
            until = self.extend_window(until, u)?;
        }
        // A revert asked for while no owner ran (the CLI told the operator `resume` would
        // run it) is carried out even when the window ended since.
        let revert_pending = self.fx.window_request()? == Some(WindowRequest::Revert);
        if crate::clock::unix_secs() >= until && !self.fx.is_dry_run() && !revert_pending {
            // Resumed after the window ended: nothing to keep current, but the old copy
            // goes only when the new node holds the shard; otherwise the window stays open
            // below until it does (or a revert or an extension is asked for).
            match self.new_node_holds_shard() {
                None => {
                    self.finalize_window()?;
                    return Ok(serde_json::json!({"finalized": "expired"}));
                }
                Some(why) => self.hold_window(&why)?,
            }
        }
        self.open_reverse_channel()?;
        let mut last_report = Instant::now();
        let mut last_hold_check: Option<Instant> = None;
        let reason = loop {
            crate::signal::check()?;
            self.fx.check_lease()?;
            match self.fx.window_request()? {
                Some(WindowRequest::Revert) => {
                    // Journaled as begun in the transaction that takes the request up,
                    // before its catch-up: from here the journal's guard refuses a
                    // `finalize` or `extend` until the revert flips back or stops.
                    self.advance(Transition::RevertBegun)?;
                    self.fx
                        .consume_window_request(WindowRequest::Revert, self.phase)?;
                    match self.revert(p) {
                        Ok(v) => return Ok(v),
                        Err(e)
                            if self.state.reverted
                                || self.flip_unsettled
                                || matches!(e, Error::LeaseLost(_)) =>
                        {
                            return Err(e)
                        }
                        Err(e) => {
                            // Before its flip: the target's fence comes down whatever
                            // stopped the revert.
                            self.roll_back_revert()?;
                            if matches!(e, Error::Interrupted | Error::InterruptedAt(_)) {
                                return Err(e);
                            }
                            // The operator asked for the old copy back: it is not dropped
                            // in the same breath because the window ended meanwhile (or
                            // before a revert asked for while no owner ran); they get a
                            // whole window again to ask once more or finalize.
                            let again = crate::clock::unix_secs() + p.window_secs as i64;
                            until = until.max(again);
                            self.state.revert_until_unix = Some(until);
                            crate::output::log(
                                0,
                                &format!(
                                    "operation {}: the revert failed before its flip ({e}); the move stands, the window stays open until {} (`shardctl revert {}` tries again)",
                                    self.fx.op(),
                                    crate::clock::rfc3339_millis(until * 1000),
                                    self.fx.op()
                                ),
                            );
                            self.state.revert_error = Some(e.to_string());
                            self.save_state()?;
                            continue;
                        }
                    }
                }
                Some(WindowRequest::Finalize) => {
                    self.fx
                        .consume_window_request(WindowRequest::Finalize, self.phase)?;
                    match self.new_node_holds_shard() {
                        None => break "requested",
                        Some(why) => {
                            self.hold_window(&format!("finalize refused: {why}"))?;
                            last_hold_check = Some(Instant::now());
                        }
                    }
                }
                Some(WindowRequest::ExtendUntil(u)) => {
                    until = self.extend_window(until, u)?;
                }
                None => {}
            }
            if self.fx.is_dry_run() {
                break "expired";
            }
            if crate::clock::unix_secs() >= until
                && last_hold_check.is_none_or(|t| t.elapsed() >= HOLD_RECHECK)
            {
                match self.new_node_holds_shard() {
                    None => break "expired",
                    Some(why) => {
                        self.hold_window(&why)?;
                        last_hold_check = Some(Instant::now());
                    }
                }
            }
            if last_report.elapsed() >= Duration::from_secs(30) {
                last_report = Instant::now();
                if let Some(err) = self.reverse_channel_error() {
                    if self.state.revert_error.as_deref() != Some(err.as_str()) {
                        crate::output::log(
                            0,
                            &format!(
                                "operation {}: the reverse channel stopped ({err}); the old copy is no longer current: a revert will wait for it, `shardctl finalize {}` drops it",
                                self.fx.op(),
                                self.fx.op()
                            ),
                        );
                        self.state.revert_error = Some(err);
                        self.save_state()?;
                    }
                }
                let lag = self.reverse_lag();
                crate::output::log(
                    1,
                    &format!(
                        "operation {}: revert window open for {} s more; reverse channel lag {}",
                        self.fx.op(),
                        until - crate::clock::unix_secs(),
                        lag.map(|l| format!("{l} s"))
                            .unwrap_or_else(|| "unknown".into())
                    ),
                );
            }
            std::thread::sleep(Duration::from_millis(250));
        };
        self.finalize_window()?;
        Ok(serde_json::json!({"finalized": reason}))
    }

    /// Takes up an `extend` request: the window ends at `asked` instead of `until` (never
    /// earlier), journaled before the request is used up.
    fn extend_window(&mut self, until: i64, asked: i64) -> Result<i64> {
        let until = until.max(asked);
        self.state.revert_until_unix = Some(until);
        self.save_state()?;
        self.fx
            .consume_window_request(WindowRequest::ExtendUntil(asked), self.phase)?;
        crate::output::log(
            0,
            &format!(
                "operation {}: revert window extended: it ends at {} (in {} s)",
                self.fx.op(),
                crate::clock::rfc3339_millis(until * 1000),
                until - crate::clock::unix_secs()
            ),
        );
        Ok(until)
    }

    /// None when the new node holds the shard, so its copy may become the only one: it
    /// answers, and each of the shard's schemas exists there with every table the old copy
    /// holds (tables dropped there during the window left the old copy too, through the
    /// reverse channel). Otherwise why not. A dry run changes nothing and checks nothing.
    fn new_node_holds_shard(&mut self) -> Option<String> {
        if self.fx.is_dry_run() {
            return None;
        }
        let (source, target) = (self.source.clone(), self.target.clone());
        for (schema, trash) in self.old_copies() {
            let there = match self.fx.schema_exists(&target, &schema) {
                Ok(true) => self.fx.visible_tables(&target, &schema),
                Ok(false) => return Some(format!("{target} has no schema {schema}")),
                Err(e) => Err(e),
            };
            let there = match there {
                Ok(t) => t,
                Err(e) => return Some(format!("{target} does not answer ({e})")),
            };
            // The source not answering fails the drop itself; only the new node's side is
            // judged here.
            let Ok(old) = self.fx.visible_tables(&source, &trash) else {
                continue;
            };
            if let Some(missing) = old.iter().find(|t| !there.contains(t)) {
                return Some(format!("{target} has no table {schema}.{missing}"));
            }
        }
        None
    }

    /// The window's end found the new node not holding the shard: the old copy stays,
    /// and why is journaled (and logged when it changes).
    fn hold_window(&mut self, why: &str) -> Result<()> {
        if self.state.window_held.as_deref() == Some(why) {
            return Ok(());
        }
        let op = self.fx.op();
        crate::output::log(
            0,
            &format!(
                "operation {op}: the revert window's end keeps the old copy on {}: {why}; it is dropped once {} answers and holds the shard (or `shardctl revert {op}`, `shardctl extend {op} --by DURATION`)",
                self.source, self.target
            ),
        );
        self.state.window_held = Some(why.to_string());
        self.save_state()
    }

    /// Journals the procedure's state without finishing the step.
    fn save_state(&mut self) -> Result<()> {
        let outputs = serde_json::to_value(&self.state).unwrap_or_default();
        self.fx.set_step_outputs(self.step_no, &outputs, self.phase)
    }

    /// The reverse channel's last error, when it stopped on one.
    fn reverse_channel_error(&mut self) -> Option<String> {
        let source = self.source.clone();
        let channel = self.fx.names().reverse_channel(self.fx.op());
        let status = self
            .fx
            .reader(&source)
            .ok()?
            .channel_status(&channel)
            .ok()
            .flatten()?;
        [status.last_sql_error, status.last_io_error]
            .into_iter()
            .find(|e| !e.is_empty())
            .map(|e| format!("reverse channel {channel}: {e}"))
    }

    fn reverse_lag(&mut self) -> Option<u64> {
        let source = self.source.clone();
        let channel = self.fx.names().reverse_channel(self.fx.op());
        self.fx
            .reader(&source)
            .ok()?
            .channel_status(&channel)
            .ok()
            .flatten()
            .and_then(|s| s.seconds_behind)
    }

    /// The old copy's schemas on the source: (the shard's schema, its trash schema).
    fn old_copies(&self) -> Vec<(Ident, Ident)> {
        let op = self.fx.op();
        self.pairs
            .iter()
            .enumerate()
            .map(|(i, p)| (p.to.clone(), self.fx.names().trash_schema(op, i)))
            .collect()
    }

    /// True when the directory places the shard on the source again.
    fn points_at_source(&mut self) -> Result<bool> {
        let source = self.source.clone();
        Ok(self
            .fx
            .shard_location(self.shard.id)?
            .is_some_and(|(node, _)| node == source))
    }

    /// The reverse channel on the source, created at the target's position at the flip
    /// and started; started again when it exists but stands.
    fn open_reverse_channel(&mut self) -> Result<()> {
        let (source, target) = (self.source.clone(), self.target.clone());
        let channel = self.fx.names().reverse_channel(self.fx.op());
        match self.fx.channel_state(&source, &channel)? {
            ChannelState::Running => return Ok(()),
            ChannelState::Stopped => {
                return self.effect(
                    Effect::ReverseChannel,
                    &source,
                    serde_json::json!({"channel": channel, "restart": true}),
                    |m| m.fx.start_channel(&source, &channel),
                )
            }
            ChannelState::Absent => {}
        }
        let settings = self.fx.settings(&target)?;
        if !settings.log_bin || !settings.binlog_format.eq_ignore_ascii_case("ROW") {
            return Err(Error::Refused(format!(
                "{target} writes no row-based binary log (log_bin {}, binlog_format {}): a revert window replays it onto the old copy",
                settings.log_bin, settings.binlog_format
            )));
        }
        let from = self.state.target_position_at_flip.clone().ok_or_else(|| {
            Error::Internal("no target position at the flip: the flip step has not run".into())
        })?;
        let creds = self.inv.replication_credentials()?;
        let node = self.inv.node(&target)?;
        let spec = SourceSpec {
            host: node.host().to_string(),
            port: node.port(),
            user: creds.user,
            password: creds.password.expose().to_string(),
            start: StartAt::Position(from.clone()),
            connect_retry_secs: 1,
            tls: node.channel_tls()?,
        };
        let copies = self.old_copies();
        // do-db too: a statement the new node logs without the shard as its default
        // database (an event enabled, a routine changed, `db.t` qualified) is skipped
        // rather than stopping the channel on a schema the old node no longer has.
        let filters = Filters {
            do_db: copies.iter().map(|(_, trash)| trash.clone()).collect(),
            wild_do_schemas: copies.iter().map(|(_, trash)| trash.clone()).collect(),
            rewrite_db: copies.clone(),
            ..Filters::default()
        };
        let detail = serde_json::json!({
            "channel": channel,
            "from_node": target,
            "from": from,
            "rewrite_db": copies.iter().map(|(s, t)| format!("{s}->{t}")).collect::<Vec<_>>(),
        });
        self.effect(Effect::ReverseChannel, &source, detail, |m| {
            m.fx.point_channel(&source, &channel, &spec)?;
            m.fx.set_filters(&source, &channel, &filters)?;
            m.fx.start_channel(&source, &channel)
        })
    }

    /// The window's end: the reverse channel removed, the old copy dropped.
    fn finalize_window(&mut self) -> Result<()> {
        let source = self.source.clone();
        let channel = self.fx.names().reverse_channel(self.fx.op());
        self.effect(
            Effect::ResetReverseChannel,
            &source,
            serde_json::json!({"channel": channel}),
            |m| m.fx.reset_channel(&source, &channel),
        )?;
        let trash: Vec<Ident> = self.old_copies().into_iter().map(|(_, t)| t).collect();
        let names: Vec<String> = trash.iter().map(|t| t.to_string()).collect();
        self.effect(
            Effect::DropOldCopy,
            &source,
            serde_json::json!({"schemas": names}),
            |m| m.fx.drop_schemas(&source, &trash, false),
        )?;
        self.state.old_copy_dropped = true;
        self.state.window_held = None;
        self.advance(Transition::WindowClosed)
    }

    /// The shard's tables on the target against the old copy's on the source.
    fn revert_table_pairs(&mut self) -> Result<Vec<TablePair>> {
        let target = self.target.clone();
        let mut out = Vec::new();
        for (schema, trash) in self.old_copies() {
            for t in self
                .fx
                .reader(&target)?
                .tables(&schema)?
                .into_iter()
                .filter(|t| !t.is_view)
            {
                out.push(TablePair {
                    source_schema: schema.clone(),
                    source_table: t.name.clone(),
                    target_schema: trash.clone(),
                    target_table: t.name,
                    target_filter: None,
                    source_filter: None,
                });
            }
        }
        Ok(out)
    }

    /// The move in reverse, up to and including the flip back; then [`Self::finish_revert`].
    fn revert(&mut self, p: &RevertWindowParams) -> Result<serde_json::Value> {
        let (source, target) = (self.source.clone(), self.target.clone());
        let channel = self.fx.names().reverse_channel(self.fx.op());
        self.state.revert_error = None;
        crate::output::log(
            0,
            &format!(
                "operation {}: reverting shard {} to {source}",
                self.fx.op(),
                self.shard.id
            ),
        );
        self.fx.catch_up(
            &target,
            &source,
            &channel,
            p.lag_below_secs,
            Duration::from_secs(p.catch_up_timeout_secs),
        )?;
        let tables = self.revert_table_pairs()?;
        let report = self.fx.verify(VerifyRequest {
            source: &target,
            target: &source,
            tables: &tables,
            channel: Some(&channel),
            gate: None,
            opts: super::procedure::verify_options(
                &self.playbook.verify_params().cloned().unwrap_or_default(),
            ),
            stream: false,
        })?;
        super::procedure::refuse_differences(&report)?;
        self.check_revert_identity()?;

        // What a client of the shard sees besides its tables, read before the fence (the
        // fence renames the tables the triggers and views name).
        self.state.revert_ddl.clear();
        for (schema, _) in self.old_copies() {
            let pair = SchemaPair {
                from: schema.clone(),
                to: schema.clone(),
            };
            let objects = crate::copy::objects::read(self.fx.reader(&target)?, &pair)?;
            for d in objects.after_data {
                self.state.revert_ddl.push((schema.to_string(), d));
            }
        }
        self.state.revert_began = true;
        self.save_state()?;

        self.fx
            .set_shard_state(self.shard.id, ShardState::ReadOnly)?;
        let op = self.fx.op();
        let on_target: Vec<SchemaPair> = self
            .pairs
            .iter()
            .map(|p| SchemaPair {
                from: p.to.clone(),
                to: p.to.clone(),
            })
            .collect();
        let mapping = crate::ops::fence::mapping(self.fx.reader(&target)?, &on_target, op)?;
        // Journaled before the rename: a crash right after it must still find the hidden
        // names to lift.
        self.state.revert_fenced_tables = mapping.clone();
        self.save_state()?;
        let fenced_at = Instant::now();
        self.effect(
            Effect::RevertFence,
            &target,
            serde_json::json!({"fenced_tables": mapping}),
            |m| {
                m.fx.raise_shard_fence(&target, &mapping, p.fence_timeout_secs)
            },
        )?;
        let fin = self.fx.coordinates(&target)?.position;
        // Read from the target the reverse channel follows, past all it read, or reached
        // at once for nothing.
        self.check_revert_identity()?;
        self.fx.wait_for_position(
            &source,
            &channel,
            &fin,
            Duration::from_secs(p.final_timeout_secs),
        )?;
        self.check_revert_identity()?;
        self.effect(
            Effect::RevertStopChannel,
            &source,
            serde_json::json!({"at": fin}),
            |m| m.fx.stop_channel(&source, &channel),
        )?;
        self.revert_confirm(&mapping)?;
        // The old copy goes back under the shard's name, with its objects, before the flip:
        // the new node is fenced, so no write of the shard is acknowledged anywhere
        // meanwhile, and once the directory points at the source every write there finds
        // the shard's triggers in place. (A revert stopped before its flip moves the tables
        // back into the trash first.)
        self.install_once()?;

        let directory_node = self.inv.directory_label().to_string();
        let flip = Flip::Move {
            shard: self.shard.id,
            from: target.clone(),
            to: source.clone(),
        };
        let attempt = self.effect(
            Effect::RevertFlip,
            &directory_node,
            serde_json::json!({"shard": self.shard.id, "to": source}),
            |m| {
                m.revert_fence_intact(&mapping)?;
                m.check_revert_identity()?;
                m.fx.flip(&flip)
            },
        );
        if let Err(e) = attempt {
            // The reply may have been lost after the commit: read the directory back.
            match self.points_at_source() {
                Ok(true) => {}
                Ok(false) => return Err(e),
                Err(read) => {
                    self.flip_unsettled = true;
                    return Err(Error::server(
                        &directory_node,
                        format!("the revert's flip has an unknown outcome ({e}; reading it back failed: {read}); the fence on {target} stays up until `shardctl resume {op}` settles it"),
                    ));
                }
            }
        }
        self.state.reverted = true;
        self.advance(Transition::FlippedBack)?;
        let out = self.finish_revert();
        self.state.revert_fence_millis = Some(fenced_at.elapsed().as_millis() as u64);
        out
    }

    /// Under the revert's fence: the target's fenced tables are exactly the old copy's, no
    /// table appeared on the target since the fence, and each definition reads the same.
    fn revert_confirm(&mut self, mapping: &[Fenced]) -> Result<()> {
        let (source, target) = (self.source.clone(), self.target.clone());
        for (schema, trash) in self.old_copies() {
            if let Some(t) = self.fx.visible_tables(&target, &schema)?.first() {
                return Err(Error::Refused(format!(
                    "{schema}.{t} appeared on {target} under the revert's fence: its rows would not reach the old copy"
                )));
            }
            let mut fenced: Vec<String> = mapping
                .iter()
                .filter(|f| f.schema == schema)
                .map(|f| f.table.to_string())
                .collect();
            let mut old: Vec<String> = self
                .fx
                .visible_tables(&source, &trash)?
                .iter()
                .map(|t| t.to_string())
                .collect();
            fenced.sort();
            old.sort();
            if fenced != old {
                return Err(Error::Refused(format!(
                    "the old copy {trash} on {source} holds tables {old:?}, the shard's {schema} on {target} {fenced:?}: a table was created or dropped during the window"
                )));
            }
            if self.fx.is_dry_run() {
                continue;
            }
            let renames: Vec<(String, String)> = mapping
                .iter()
                .filter(|f| f.schema == schema)
                .map(|f| (f.hidden.to_string(), f.table.to_string()))
                .collect();
            for Fenced {
                schema: s,
                table: t,
                hidden,
            } in mapping.iter().filter(|f| f.schema == schema)
            {
                let here = self
                    .fx
                    .reader(&target)?
                    .first::<(String, String)>(&statements::show_create_table(s, hidden, false))?;
                let there = self
                    .fx
                    .reader(&source)?
                    .first::<(String, String)>(&statements::show_create_table(&trash, t, false))?;
                let here = here.map(|(_, ddl)| {
                    crate::server::definitions::comparable_definition(&ddl, &renames)
                });
                let there = there
                    .map(|(_, ddl)| crate::server::definitions::comparable_definition(&ddl, &[]));
                if here.is_none() || here != there {
                    return Err(Error::Refused(format!(
                        "{s}.{t} is defined differently on {target} than in the old copy on {source}: a schema change during the window does not travel back"
                    )));
                }
            }
        }
        Ok(())
    }

    fn revert_fence_intact(&mut self, mapping: &[Fenced]) -> Result<()> {
        let target = self.target.clone();
        let hidden = self.fx.hidden_now(&target, mapping)?;
        if mapping.is_empty() || hidden.len() != mapping.len() {
            return Err(Error::Refused(format!(
                "the revert's fence on {target} no longer stands ({} of {} tables hidden)",
                hidden.len(),
                mapping.len()
            )));
        }
        Ok(())
    }

    /// After the revert's flip, always forward: the old copy's tables renamed back into
    /// the shard's schemas with their objects, the target's copy out of reach, the reverse
    /// channel removed, the target's trash dropped. Each part reads the servers first.
    fn finish_revert(&mut self) -> Result<serde_json::Value> {
        let (source, target) = (self.source.clone(), self.target.clone());
        let op = self.fx.op();
        let copies = self.old_copies();
        let channel = self.fx.names().reverse_channel(op);
        let names: Vec<String> = copies.iter().map(|(s, _)| s.to_string()).collect();
        self.effect(
            Effect::ResetReverseChannel,
            &source,
            serde_json::json!({"channel": channel}),
            |m| m.fx.reset_channel(&source, &channel),
        )?;
        self.install_once()?;
        let mut events = Vec::new();
        for (schema, _) in &copies {
            if self.fx.schema_exists(&target, schema)? {
                let pair = SchemaPair {
                    from: schema.clone(),
                    to: schema.clone(),
                };
                events.extend(crate::copy::objects::enabled_events(
                    self.fx.reader(&target)?,
                    &pair,
                )?);
            }
        }
        let event_names: Vec<String> = events
            .iter()
            .map(|e| format!("{}.{}", e.schema, e.name))
            .collect();
        self.effect(
            Effect::RevertEnableEvents,
            &source,
            serde_json::json!({"events": event_names}),
            |m| m.fx.enable_events(&source, &events),
        )?;
        let mapping = self.state.revert_fenced_tables.clone();
        self.effect(
            Effect::RevertDropTarget,
            &target,
            serde_json::json!({"schemas": names}),
            |m| {
                for (i, (schema, _)) in copies.iter().enumerate() {
                    let trash = m.fx.names().trash_schema(op, i);
                    let tables = m.fx.tables_by_own_name(&target, schema, &mapping)?;
                    m.fx.discard_schema(&target, schema, &tables, &trash)?;
                }
                Ok(())
            },
        )?;
        self.fx.set_shard_state(self.shard.id, ShardState::Online)?;
        let trash: Vec<Ident> = (0..copies.len())
            .map(|i| self.fx.names().trash_schema(op, i))
            .collect();
        let trash_names: Vec<String> = trash.iter().map(|t| t.to_string()).collect();
        self.effect(
            Effect::RevertDropTrash,
            &target,
            serde_json::json!({"schemas": trash_names}),
            |m| m.fx.drop_schemas(&target, &trash, false),
        )?;
        self.state.old_copy_dropped = true;
        self.state.window_held = None;
        self.advance(Transition::WindowClosed)?;
        self.hook_in_background(crate::config::HookStage::Reverted);
        Ok(serde_json::json!({"reverted": true, "node": source}))
    }

    /// The old copy installed under the shard's name unless this revert did so already.
    fn install_once(&mut self) -> Result<()> {
        if self.state.revert_installed {
            return Ok(());
        }
        let source = self.source.clone();
        let copies = self.old_copies();
        let names: Vec<String> = copies.iter().map(|(s, _)| s.to_string()).collect();
        self.effect(
            Effect::RevertInstall,
            &source,
            serde_json::json!({"schemas": names}),
            |m| m.install_old_copy(&copies),
        )?;
        self.state.revert_installed = true;
        self.save_state()
    }

    /// Renames the old copy's tables back into the shard's schemas on the source and
    /// creates the objects read from the target. Safe to run again: a schema whose trash
    /// is gone has its tables; objects a previous attempt created are dropped first.
    fn install_old_copy(&mut self, copies: &[(Ident, Ident)]) -> Result<()> {
        let (source, target) = (self.source.clone(), self.target.clone());
        for (schema, trash) in copies {
            if self.fx.schema_exists(&source, trash)? {
                let charset = if self.fx.schema_exists(&target, schema)? {
                    self.fx.reader(&target)?.schema_charset(schema)?
                } else {
                    None
                };
                let tables = self.fx.tables_by_own_name(&source, trash, &[])?;
                // Triggers the reverse channel created in the trash (DDL on the new node
                // during the window) would keep its tables from changing schema; the
                // objects read from the new node are created below instead.
                let mut stmts = vec![statements::lock_wait_timeout(
                    statements::FENCE_LOCK_WAIT_SECS,
                )];
                stmts.extend(
                    self.fx
                        .reader(&source)?
                        .triggers_in_order(trash)?
                        .iter()
                        .map(|t| statements::drop_trigger_if_exists(trash, t)),
                );
                stmts.extend([match &charset {
                    Some((cs, coll)) => statements::create_schema_with_charset(schema, cs, coll),
                    None => statements::create_schema_if_not_exists(schema),
                }]);
                stmts.extend(statements::move_tables(trash, &tables, schema));
                stmts.push(statements::drop_schema_if_exists(trash));
                self.fx.run_unlogged(&source, &stmts)?;
            }
            let defs: Vec<crate::copy::objects::ObjectDef> = self
                .state
                .revert_ddl
                .iter()
                .filter(|(s, _)| s == schema.as_str())
                .map(|(_, d)| d.clone())
                .collect();
            let mut drops = Vec::new();
            for d in &defs {
                if let Some((kind, name)) = d.label.split_once(' ') {
                    if let Some(kind) = DefinedKind::from_word(kind) {
                        drops.push(statements::drop_defined_if_exists(
                            schema,
                            kind,
                            &Ident::new("object", name)?,
                        ));
                    }
                }
            }
            if !drops.is_empty() {
                self.fx.run_unlogged(&source, &drops)?;
            }
            let pair = SchemaPair {
                from: schema.clone(),
                to: schema.clone(),
            };
            let objects = crate::copy::objects::SchemaObjects {
                charset: self.fx.reader(&source)?.schema_charset(schema)?,
                after_data: defs,
                ..Default::default()
            };
            // Events are created disabled; the ones enabled on the new node are enabled
            // after the flip, as the move does.
            self.fx.create_objects(&source, &pair, &objects)?;
        }
        Ok(())
    }

    /// A revert stopped before its flip: the fence on the target lifted, the reverse
    /// channel running again. Reads the servers; nothing when there is nothing to undo.
    fn roll_back_revert(&mut self) -> Result<()> {
        if self.state.reverted {
            return Ok(());
        }
        if !self.state.revert_began {
            // Taken up, stopped before it read or fenced anything (its catch-up or its
            // verification): the window is open again.
            if self.phase == Phase::RevertBegun {
                self.advance(Transition::RevertStopped)?;
                self.save_state()?;
            }
            return Ok(());
        }
        let (source, target) = (self.source.clone(), self.target.clone());
        let copies = self.old_copies();
        let mut installed = Vec::new();
        for (schema, trash) in &copies {
            if self.fx.schema_exists(&source, schema)? {
                installed.push((schema.clone(), trash.clone()));
            }
        }
        if !installed.is_empty() {
            let names: Vec<String> = installed.iter().map(|(s, _)| s.to_string()).collect();
            self.effect(
                Effect::RevertUninstall,
                &source,
                serde_json::json!({"schemas": names}),
                |m| {
                    // The intent's journal write waited behind any flip still in flight:
                    // read the directory after it.
                    m.refuse_if_flipped_back()?;
                    for (schema, trash) in &installed {
                        let tables = m.fx.tables_by_own_name(&source, schema, &[])?;
                        m.fx.discard_schema(&source, schema, &tables, trash)?;
                    }
                    Ok(())
                },
            )?;
        }
        self.state.revert_installed = false;
        let mapping = self.state.revert_fenced_tables.clone();
        if !mapping.is_empty() && !self.fx.hidden_now(&target, &mapping)?.is_empty() {
            self.effect(
                Effect::RevertLowerFence,
                &target,
                serde_json::json!({"fenced_tables": mapping.len()}),
                |m| {
                    m.refuse_if_flipped_back()?;
                    m.fx.lower_shard_fence(&target, &mapping).map(|_| ())
                },
            )?;
        }
        self.fx.set_shard_state(self.shard.id, ShardState::Online)?;
        self.state.revert_began = false;
        self.state.revert_fenced_tables.clear();
        if self.phase == Phase::RevertBegun {
            self.advance(Transition::RevertStopped)?;
        }
        self.save_state()?;
        self.open_reverse_channel()
    }

    /// Fails (and marks the revert flipped) when the directory points at the source again:
    /// a flip whose reply was lost committed after all, so nothing may be rolled back.
    fn refuse_if_flipped_back(&mut self) -> Result<()> {
        if self.points_at_source()? {
            self.state.reverted = true;
            return Err(Error::Refused(
                "the revert's flip committed after all: `shardctl resume` finishes it".into(),
            ));
        }
        Ok(())
    }
}
