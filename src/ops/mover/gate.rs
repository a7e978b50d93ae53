//! A merge's gated applier. Its channel rewrites the retired schemas' names to the
//! survivor's, so any statement run in a retired schema during the catch-up (`USE shop_4;
//! TRUNCATE orders`, a `RENAME`, an `ALTER`, an event's statement) would be applied to the
//! survivor's own tables. The channel's receiver runs freely; its applier only ever runs
//! `START ... SQL_THREAD UNTIL` a position up to which shardctl has read the source's
//! binary log (`SHOW BINLOG EVENTS`) and found nothing but row events and transaction
//! delimiters for the retired schemas ([`crate::server::binlog`]). A statement touching
//! one stops the merge before its flip; the applier never passes it.
//!
//! Fail-safe: a channel left behind (shardctl killed, its host gone) stops by itself at
//! its last gate, which was scanned. Every decision reads the channel as it stands (where
//! it applied to, its `UNTIL`), so a resumed run keeps the gate. `UNTIL` at a group's
//! first event stops before that group; inside a transaction it stops after its commit
//! (checked on MariaDB 10.11): gates are only ever group boundaries.

use super::{Effect, Mover};
use crate::error::{Error, Result};
use crate::ident::Ident;
use crate::ops::effects::{ChannelState, Effects};
use crate::server::BinlogPosition;
use std::time::{Duration, Instant};

/// Events a gate reads at most per advance during the catch-up.
const GATE_EVENTS: usize = 50_000;

impl<E: Effects> Mover<'_, E> {
    /// A merge across nodes kept current by a channel: its channel's applier is gated.
    pub(super) fn gated(&self) -> bool {
        self.plan.is_merge() && !self.streams()
    }

    /// The retired shard's schemas (the channel's sources).
    pub(super) fn retired_schemas(&self) -> Vec<Ident> {
        self.pairs.iter().map(|p| p.from.clone()).collect()
    }

    /// `start-replication` of a merge: the receiver only, then the gate's first advance.
    pub(super) fn start_gated_channel(&mut self) -> Result<()> {
        let (target, channel) = (self.target.clone(), self.channel.clone());
        self.effect(
            Effect::StartChannel,
            &target,
            serde_json::json!({"channel": channel, "receiver_only": true}),
            |m| m.fx.start_receiver(&target, &channel),
        )?;
        self.advance_gate(None)?;
        Ok(())
    }

    /// Reads the source's binary log from where the applier stands towards `up_to` (the
    /// log's end when None), at most [`GATE_EVENTS`] events, and lets the applier run up
    /// to the furthest group boundary found harmless. An applier still on its way to its
    /// gate is left to get there first. Refuses (exit 5, the survivor untouched) on a
    /// statement touching a retired schema. Returns where the applier may now go.
    pub(super) fn advance_gate(
        &mut self,
        up_to: Option<&BinlogPosition>,
    ) -> Result<BinlogPosition> {
        let (source, target, channel) = (
            self.source.clone(),
            self.target.clone(),
            self.channel.clone(),
        );
        if self.fx.is_dry_run() {
            let until = match up_to {
                Some(p) => p.clone(),
                None => self.fx.coordinates(&source)?.position,
            };
            let running = self.fx.channel_state(&target, &channel)? == ChannelState::Running;
            self.open_gate(running, &until, None)?;
            return Ok(until);
        }
        let status = self
            .fx
            .reader(&target)?
            .channel_status(&channel)?
            .ok_or_else(|| Error::server(&target, format!("channel {channel} does not exist")))?;
        if let Some(e) = status.last_error() {
            return Err(Error::server(&target, format!("channel {channel}: {e}")));
        }
        let applied = status.executed.clone().ok_or_else(|| {
            Error::server(
                &target,
                format!("channel {channel} has no applied position"),
            )
        })?;
        let mut running = status.sql_running;
        if running {
            match &status.until {
                Some(gate) if applied < *gate => return Ok(gate.clone()),
                // At its gate: it stops there once the next event arrives.
                Some(_) => {}
                None => {
                    // Started without a gate (by hand, or by the target's restart, which
                    // also drops the runtime filters): what it applied was not read, and a
                    // statement of the retired schema among it would have reached the
                    // survivor's tables. Held, and the merge stops before its flip.
                    self.effect(
                        Effect::GateApplier,
                        &target,
                        serde_json::json!({"channel": channel, "hold": true}),
                        |m| {
                            let d = m.fx.dialect(&target)?;
                            m.fx.channel_statements(
                                &target,
                                &channel,
                                &[d.stop_applier(&channel)],
                                ChannelState::Stopped,
                            )
                        },
                    )?;
                    return Err(Error::Refused(format!(
                        "channel {channel} on {target} was applying without a gate (started by hand or by a restart of {target}), up to {applied}: events it applied were not read for statements in the retired schema, so the merge stops before its flip; check the survivor's tables, then `shardctl abort {}`",
                        self.fx.op()
                    )));
                }
            }
        }
        let schemas = self.retired_schemas();
        let scan =
            self.fx
                .reader(&source)?
                .scan_for_gate(&applied, up_to, &schemas, GATE_EVENTS)?;
        if let Some(b) = scan.blocked {
            return Err(crate::ops::effects::gate_refusal(&source, &b, self.fx.op()));
        }
        if scan.safe_to <= applied {
            // Nothing further read: the applier stays where it is.
            return Ok(applied);
        }
        if running {
            // At its gate with events after it: it stops there by itself, at once.
            running = !self.applier_stops(Duration::from_secs(1))?;
        }
        self.open_gate(running, &scan.safe_to, Some(&applied))?;
        Ok(scan.safe_to)
    }

    /// Journaled: the applier let run up to `until` (stopped first if it runs).
    fn open_gate(
        &mut self,
        running: bool,
        until: &BinlogPosition,
        from: Option<&BinlogPosition>,
    ) -> Result<()> {
        let (target, channel) = (self.target.clone(), self.channel.clone());
        self.effect(
            Effect::GateApplier,
            &target,
            match from {
                Some(from) => serde_json::json!({"channel": channel, "from": from, "until": until}),
                None => serde_json::json!({"channel": channel, "until": until}),
            },
            |m| {
                let d = m.fx.dialect(&target)?;
                let mut stmts = Vec::new();
                if running {
                    stmts.push(d.stop_applier(&channel));
                }
                stmts.push(d.start_applier_until(&channel, until)?);
                // It stops at the gate by itself.
                m.fx.channel_statements(&target, &channel, &stmts, ChannelState::Stopped)
            },
        )
    }

    /// Waits up to `timeout` for the applier, at its gate, to stop; whether it did.
    fn applier_stops(&mut self, timeout: Duration) -> Result<bool> {
        let (target, channel) = (self.target.clone(), self.channel.clone());
        let deadline = Instant::now() + timeout;
        loop {
            let running = self
                .fx
                .reader(&target)?
                .channel_status(&channel)?
                .is_some_and(|s| s.sql_running);
            if !running {
                return Ok(true);
            }
            if Instant::now() >= deadline {
                return Ok(false);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits up to `timeout` until the gated applier has applied up to `pos`: true once
    /// there, false when it stopped short of it or the time is up. Fails on a channel
    /// error.
    fn applied_up_to(&mut self, pos: &BinlogPosition, timeout: Duration) -> Result<bool> {
        let (target, channel) = (self.target.clone(), self.channel.clone());
        let deadline = Instant::now() + timeout;
        loop {
            crate::signal::check()?;
            let status = self
                .fx
                .reader(&target)?
                .channel_status(&channel)?
                .ok_or_else(|| Error::server(&target, format!("channel {channel} disappeared")))?;
            if let Some(e) = status.last_error() {
                return Err(Error::server(&target, format!("channel {channel}: {e}")));
            }
            if status.executed.as_ref().is_some_and(|at| at >= pos) {
                return Ok(true);
            }
            if !status.sql_running || Instant::now() >= deadline {
                return Ok(false);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The catch-up of a gated channel: each round reads the source's position, lets the
    /// gate go up to it and waits for the applier; caught up once a round reached the
    /// position within `lag_below` seconds. A round is a safe point to pause at.
    pub(super) fn gated_catch_up(
        &mut self,
        lag_below: u64,
        timeout: Duration,
    ) -> Result<serde_json::Value> {
        let (source, target, channel) = (
            self.source.clone(),
            self.target.clone(),
            self.channel.clone(),
        );
        if self.fx.is_dry_run() {
            self.advance_gate(None)?;
            return self
                .fx
                .catch_up(&source, &target, &channel, lag_below, timeout);
        }
        let mut deadline = Instant::now() + timeout;
        let round = Duration::from_secs(lag_below.max(1) + 1);
        loop {
            crate::signal::check()?;
            deadline += crate::control::pause_point()?;
            self.fx.check_lease()?;
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(Error::Timeout(format!(
                    "the target {target} did not catch up within {}s",
                    timeout.as_secs()
                )));
            }
            let started = Instant::now();
            let now = self.fx.coordinates(&source)?.position;
            let gate = self.advance_gate(Some(&now))?;
            let reached = self.applied_up_to(&gate, left.min(round))?;
            if reached && gate >= now && started.elapsed() <= Duration::from_secs(lag_below.max(1))
            {
                return Ok(serde_json::json!({"position": now, "gated": true}));
            }
            // Not there within a round that counts: wait out the round, then read again.
            if let Some(rest) = round.checked_sub(started.elapsed()) {
                std::thread::sleep(rest.min(Duration::from_millis(200)));
            }
        }
    }

    /// Under the fence: the gate reads the source's log up to the final position `pos`
    /// and lets the applier run exactly there; returns once it has applied up to it.
    pub(super) fn gate_to(&mut self, pos: &BinlogPosition, timeout: Duration) -> Result<()> {
        let (target, channel) = (self.target.clone(), self.channel.clone());
        if self.fx.is_dry_run() {
            self.advance_gate(Some(pos))?;
            return self.fx.wait_for_position(&target, &channel, pos, timeout);
        }
        let deadline = Instant::now() + timeout;
        loop {
            let gate = self.advance_gate(Some(pos))?;
            let left = deadline.saturating_duration_since(Instant::now());
            if gate >= *pos && self.applied_up_to(pos, left)? {
                return Ok(());
            }
            if gate < *pos {
                // More to read than one advance takes: apply what is read, read on.
                self.applied_up_to(&gate, left.min(Duration::from_secs(1)))?;
            }
            if Instant::now() >= deadline {
                return Err(Error::Timeout(format!(
                    "channel {channel} on {target} did not reach {pos} within {}s",
                    timeout.as_secs()
                )));
            }
        }
    }
}
