//! The shard fence and the switch fence raised in short tries (the lock step): the
//! transactions that would hold them back named, and ended on request, before each try;
//! the switch fence's guards armed before it and settled after it.

use super::{Effect, Mover, OperationPlan};
use crate::error::{Error, Result};
use crate::ident::Ident;
use crate::ops::effects::Effects;
use crate::ops::switch::GuardedTable;
use crate::output::log;
use crate::playbook::{Fence, LockParams};
use crate::server::statements::{self, SwitchMode};
use std::time::{Duration, Instant};

impl<E: Effects> Mover<'_, E> {
    /// Raises the shard fence in short tries: each waits `lock_wait_secs` for the
    /// transactions holding the shard's tables (the shard's clients queue behind it that
    /// long at most), a failed one lets them through, and the next comes a second later, as
    /// long as `timeout_secs` allows. Before each try the transactions that would hold it
    /// back are named (the log, the journaled intent) and, with `kill_blockers`, ended.
    pub(super) fn raise_shard_fence_in_tries(&mut self, l: &LockParams) -> Result<()> {
        const BETWEEN_TRIES: Duration = Duration::from_secs(1);
        let source = self.source.clone();
        let op = self.fx.op();
        let mapping = crate::ops::fence::mapping(self.fx.reader(&source)?, &self.pairs, op)?;
        let schemas: Vec<Ident> = self.pairs.iter().map(|p| p.from.clone()).collect();
        let try_wait = l.lock_wait_secs.clamp(1, l.timeout_secs.max(1));
        let deadline = Instant::now() + Duration::from_secs(l.timeout_secs);
        let mut attempt = 0u32;
        loop {
            attempt += 1;
            let (blockers, others) = if self.fx.is_dry_run() {
                (Vec::new(), 0)
            } else {
                self.fx.fence_blockers(&source, &schemas)?
            };
            for b in &blockers {
                log(0, &format!("{source}: the shard fence waits for {b}"));
            }
            if l.kill_blockers && !blockers.is_empty() {
                let ids: Vec<u64> = blockers.iter().map(|b| b.session).collect();
                self.effect(
                    Effect::KillBlockers,
                    &source,
                    serde_json::json!({"blockers": blockers}),
                    |m| m.fx.kill_sessions(&source, &ids),
                )?;
                log(
                    0,
                    &format!(
                        "{source}: ended {} session(s) holding the shard's tables (kill_blockers)",
                        ids.len()
                    ),
                );
            }
            let raised = self.effect(
                Effect::RaiseFence,
                &source,
                serde_json::json!({"fence": Fence::Shard, "fenced_tables": mapping, "try": attempt, "lock_wait_secs": try_wait, "blockers": blockers, "other_open_transactions": others}),
                |m| {
                    m.state.fence = Some(Fence::Shard);
                    m.state.fenced_tables = mapping.clone();
                    m.fx.raise_shard_fence(&source, &mapping, try_wait)
                },
            );
            match raised {
                Ok(()) => return Ok(()),
                Err(e) if e.is_lock_wait_timeout() && Instant::now() + BETWEEN_TRIES < deadline => {
                    log(0, &format!("{source}: try {attempt} of the shard fence waited {try_wait} s in vain; the shard's clients go on, the next try in 1 s"));
                    let until = Instant::now() + BETWEEN_TRIES;
                    while Instant::now() < until {
                        crate::signal::check()?;
                        std::thread::sleep(Duration::from_millis(50));
                    }
                }
                Err(e) if e.is_lock_wait_timeout() => {
                    let named: Vec<String> = blockers.iter().map(|b| b.to_string()).collect();
                    return Err(Error::Refused(format!(
                        "the shard fence on {source} was not raised in {attempt} tries of {try_wait} s (timeout_secs {}): {}; end them or set the lock step's kill_blockers (`--kill-blockers`), then `shardctl resume {}`",
                        l.timeout_secs,
                        if named.is_empty() {
                            format!("{others} open transaction(s) hold it back, none known to be on the shard's tables (this server shows no metadata locks)")
                        } else {
                            format!("held back by {}", named.join("; "))
                        },
                        self.fx.op()
                    )));
                }
                Err(e) => return Err(e),
            }
        }
    }
}

impl<E: Effects> Mover<'_, E> {
    /// The id of this operation's switch on the source.
    pub(super) fn switch_id(&self) -> u64 {
        self.fx.names().switch_id(self.fx.op())
    }

    /// The mode this operation's switch fence sets: a key move fences its moving keys
    /// only, the others the whole shard.
    pub(super) fn fence_mode(&self) -> SwitchMode {
        if self.plan.is_key_move() {
            SwitchMode::Keys
        } else {
            SwitchMode::All
        }
    }

    /// Whether this operation's switch fence is up on the source now.
    pub(super) fn switch_up(&mut self) -> Result<bool> {
        let (source, id, mode) = (self.source.clone(), self.switch_id(), self.fence_mode());
        Ok(self.fx.switch_now(&source, id)? == Some(mode))
    }

    /// The tables a switch fence guards: every base table of the shard's schemas on the
    /// source. A split's sharded tables refuse, under `Keys`, the keys the old shard gives
    /// away (the same condition its guard step would write); every other table only under
    /// `All`.
    fn switch_guarded_tables(&mut self) -> Result<Vec<GuardedTable>> {
        let source = self.source.clone();
        let snap = self.fx.directory_snapshot()?;
        let old = self.shard.clone();
        let after = match &self.plan {
            OperationPlan::Split(plan) => Some(crate::ops::split::after_split(
                snap.clone(),
                old.func_id,
                plan,
            )?),
            _ => None,
        };
        let mut out = Vec::new();
        for p in self.pairs.clone() {
            for table in self.fx.visible_tables(&source, &p.from)? {
                let sharded = snap.tables.iter().find(|t| {
                    t.func_id == old.func_id
                        && crate::directory::shard_schema(&t.schema, old.id) == p.from.as_str()
                        && t.table == table.as_str()
                });
                let column = sharded
                    .map(|t| Ident::new("column", &t.column))
                    .transpose()?;
                let keys = match (&column, &after) {
                    _ if self.plan.is_key_move() => {
                        self.key_fence_condition(&snap, column.as_ref())?
                    }
                    (Some(c), Some(after)) => crate::prune::predicate::not_owned(after, &old, c)?,
                    _ => statements::Condition {
                        sql: "(FALSE)".into(),
                        params: Vec::new(),
                    },
                };
                out.push(GuardedTable {
                    schema: p.from.clone(),
                    table,
                    column,
                    keys,
                });
            }
        }
        Ok(out)
    }

    /// Installs the switched guards on the source's tables, inert, before the switch fence
    /// goes up (DDL per table, outside any fence); again (they are replaced) when the lock
    /// step runs again.
    pub(super) fn arm_switch(&mut self) -> Result<()> {
        let (source, id) = (self.source.clone(), self.switch_id());
        let tables = self.switch_guarded_tables()?;
        let names: Vec<String> = tables
            .iter()
            .map(|t| format!("{}.{}", t.schema, t.table))
            .collect();
        let message = match &self.plan {
            OperationPlan::KeyMove(p) => format!(
                "shard {} gives these keys to shard {}; re-read the directory",
                p.donor, p.receiver
            ),
            OperationPlan::Split(p) => format!(
                "shard {} is being split (its keys above its new bound go to shard {}); re-read the directory",
                self.shard.id, p.new_shard
            ),
            _ => format!(
                "shard {} is being moved; re-read the directory",
                self.shard.id
            ),
        };
        self.effect(
            Effect::ArmSwitch,
            &source,
            serde_json::json!({"switch": id, "tables": names}),
            |m| {
                let held = m.state.fence == Some(Fence::ReadOnly);
                m.with_super_read_only_lowered(&source, held, |m| {
                    crate::ops::switch::install(&mut m.fx, &source, id, &tables, &message)
                })
            },
        )
    }

    /// Raises the switch fence in short tries: one UPDATE of the switch row, which waits
    /// `lock_wait_secs` for the open transactions that wrote the shard's tables (the
    /// shard's writers queue behind it that long at most); a try that waited in vain lets
    /// them through, and the next comes a second later while `timeout_secs` allows. The
    /// transactions holding the shard's tables are named before each try and, with
    /// `kill_blockers`, ended, as for the shard fence.
    pub(super) fn raise_switch_fence_in_tries(&mut self, l: &LockParams) -> Result<()> {
        const BETWEEN_TRIES: Duration = Duration::from_secs(1);
        let (source, id) = (self.source.clone(), self.switch_id());
        let schemas: Vec<Ident> = self.pairs.iter().map(|p| p.from.clone()).collect();
        let try_wait = l.lock_wait_secs.clamp(1, l.timeout_secs.max(1));
        let deadline = Instant::now() + Duration::from_secs(l.timeout_secs);
        let mut attempt = 0u32;
        loop {
            attempt += 1;
            let (blockers, others) = if self.fx.is_dry_run() {
                (Vec::new(), 0)
            } else {
                self.fx.fence_blockers(&source, &schemas)?
            };
            if l.kill_blockers && !blockers.is_empty() {
                let ids: Vec<u64> = blockers.iter().map(|b| b.session).collect();
                self.effect(
                    Effect::KillBlockers,
                    &source,
                    serde_json::json!({"blockers": blockers}),
                    |m| m.fx.kill_sessions(&source, &ids),
                )?;
            }
            let raised = self.effect(
                Effect::RaiseFence,
                &source,
                serde_json::json!({"fence": Fence::Switch, "switch": id, "try": attempt, "lock_wait_secs": try_wait, "blockers": blockers, "other_open_transactions": others}),
                |m| {
                    m.state.fence = Some(Fence::Switch);
                    let mode = m.fence_mode();
                    crate::ops::switch::set(&mut m.fx, &source, id, mode, try_wait)
                },
            );
            match raised {
                Ok(()) => return Ok(()),
                Err(e)
                    if (e.is_lock_wait_timeout() || e.is_deadlock())
                        && Instant::now() + BETWEEN_TRIES < deadline =>
                {
                    log(0, &format!("{source}: try {attempt} of the switch fence waited {try_wait} s in vain; the shard's clients go on, the next try in 1 s"));
                    let until = Instant::now() + BETWEEN_TRIES;
                    while Instant::now() < until {
                        crate::signal::check()?;
                        std::thread::sleep(Duration::from_millis(50));
                    }
                }
                Err(e) if e.is_lock_wait_timeout() || e.is_deadlock() => {
                    let named: Vec<String> = blockers.iter().map(|b| b.to_string()).collect();
                    return Err(Error::Refused(format!(
                        "the switch fence on {source} was not raised in {attempt} tries of {try_wait} s (timeout_secs {}): {}; end them or set the lock step's kill_blockers (`--kill-blockers`), then `shardctl resume {}`",
                        l.timeout_secs,
                        if named.is_empty() {
                            format!("{others} open transaction(s) hold it back")
                        } else {
                            format!("held back by {}", named.join("; "))
                        },
                        self.fx.op()
                    )));
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Fails unless the switch fence stands in full: the switch on `All`, and every base
    /// table of the shard's schemas guarded (a table created since the guards were
    /// installed takes writes the target never sees).
    pub(super) fn switch_fence_intact(&mut self) -> Result<()> {
        let (source, id) = (self.source.clone(), self.switch_id());
        let mode = self.fx.switch_now(&source, id)?;
        if mode != Some(self.fence_mode()) {
            return Err(Error::Refused(format!(
                "the switch fence on {source} no longer stands (switch {id} is {})",
                mode.map(|m| format!("{m:?}").to_lowercase())
                    .unwrap_or_else(|| "gone".into())
            )));
        }
        let schemas: Vec<Ident> = self.pairs.iter().map(|p| p.from.clone()).collect();
        if let Some((schema, table)) = self.fx.unguarded_tables(&source, &schemas)?.first() {
            return Err(Error::Refused(format!(
                "{schema}.{table} appeared on {source} under the switch fence without its guards: its writes would not reach the target"
            )));
        }
        Ok(())
    }

    /// A split whose switch fence is lifted: literal guard triggers refusing the keys the
    /// old shard gave away replace the switched ones (installed first: the keys stay
    /// refused throughout), then the switched guards and their row go. A move's old copy
    /// took its guards with it; only the row goes.
    pub(super) fn settle_switch(&mut self) -> Result<()> {
        let (source, id) = (self.source.clone(), self.switch_id());
        if self.fx.switch_now(&source, id)?.is_none() {
            return Ok(());
        }
        let tables = if self.state.source_dropped && !self.plan.is_split() {
            Vec::new()
        } else {
            self.switch_guarded_tables()?
        };
        if self.plan.is_split() && self.state.flipped {
            let stmts = self.literal_guards()?;
            if !stmts.is_empty() {
                let names: Vec<String> = tables
                    .iter()
                    .map(|t| format!("{}.{}", t.schema, t.table))
                    .collect();
                self.effect(
                    Effect::SettleGuards,
                    &source,
                    serde_json::json!({"tables": names}),
                    |m| {
                        m.fx.run(&source, &[statements::lock_wait_timeout(10)])?;
                        m.fx.run_unlogged(&source, &stmts)
                    },
                )?;
            }
        }
        self.effect(
            Effect::DisarmSwitch,
            &source,
            serde_json::json!({"switch": id, "tables": tables.len()}),
            |m| crate::ops::switch::remove(&mut m.fx, &source, id, &tables),
        )
    }

    /// A rollback: the switched guards on the shard's current tables and their row
    /// removed, once the switch is off. Nothing when this operation never installed them;
    /// when it did, the guards go even if their row is gone (they would refuse every
    /// write without it).
    pub(super) fn disarm_switch(&mut self) -> Result<()> {
        let (source, id) = (self.source.clone(), self.switch_id());
        if self.fx.switch_now(&source, id)?.is_none()
            && self.fx.last_effect(Effect::ArmSwitch)?.is_none()
        {
            return Ok(());
        }
        let mut tables = Vec::new();
        for p in self.pairs.clone() {
            for table in self.fx.visible_tables(&source, &p.from)? {
                tables.push(GuardedTable {
                    schema: p.from.clone(),
                    table,
                    column: None,
                    keys: statements::Condition {
                        sql: "(FALSE)".into(),
                        params: Vec::new(),
                    },
                });
            }
        }
        self.effect(
            Effect::DisarmSwitch,
            &source,
            serde_json::json!({"switch": id, "tables": tables.len()}),
            |m| crate::ops::switch::remove(&mut m.fx, &source, id, &tables),
        )
    }

    /// Before a flip under the switch fence: no statement other than row changes ran in the
    /// shard's schemas on the source since the final position. Triggers guard rows, not
    /// DDL: a `TRUNCATE`, `ALTER`, `RENAME` or `DROP` run under the fence is logged after
    /// the position the target was brought to, and would be lost by a flip; it is found
    /// in the source's binary log and refuses the flip (the fence stays up).
    pub(super) fn nothing_escaped_the_switch(&mut self) -> Result<()> {
        if self.fx.is_dry_run() {
            return Ok(());
        }
        let Some(from) = self.state.final_position.clone() else {
            return Err(Error::Internal(
                "no final position under the switch fence".into(),
            ));
        };
        let source = self.source.clone();
        let schemas: Vec<Ident> = self.pairs.iter().map(|p| p.from.clone()).collect();
        let scan =
            self.fx
                .reader(&source)?
                .scan_for_gate(&from, None, &schemas, ESCAPE_SCAN_EVENTS)?;
        if let Some(b) = scan.blocked {
            return Err(Error::Refused(format!(
                "a statement ran in {} on {source} under the switch fence, after the final position ({}: {}): the target never got it, so nothing flips; the fence stays up: `shardctl abort {}` rolls back",
                b.schema,
                b.statement_at,
                b.text,
                self.fx.op()
            )));
        }
        if !scan.complete {
            return Err(Error::Refused(format!(
                "the source {source}'s binary log holds more than {ESCAPE_SCAN_EVENTS} events since the final position: what ran under the switch fence cannot be read in time; the fence stays up, `shardctl resume {}` tries again",
                self.fx.op()
            )));
        }
        Ok(())
    }
}

/// The most events of the source's binary log read, before a flip, for statements that
/// escaped the switch fence (a busy node writes this many in seconds, the cut-over lasts
/// well under one).
const ESCAPE_SCAN_EVENTS: usize = 200_000;
