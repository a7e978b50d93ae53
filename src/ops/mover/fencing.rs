//! The shard fence raised in short tries (the lock step): the transactions that would
//! hold it back named, and ended on request, before each try.

use super::{Effect, Mover};
use crate::error::{Error, Result};
use crate::ident::Ident;
use crate::ops::effects::Effects;
use crate::output::log;
use crate::playbook::{Fence, LockParams};
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
