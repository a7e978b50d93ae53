//! The owner's side of the lease: a heartbeat every second from its own directory
//! connection, which also notices when the lease was taken over (the process then stops
//! before its next effect and touches nothing more) and when an operator asked the
//! operation to stop (handled like Ctrl-C: the next safe point rolls back to a resumable
//! state), to pause or to continue, and the live limits ([`crate::control`]).

use crate::config::Inventory;
use crate::directory::journal::{Lease, Progress};
use crate::directory::Directory;
use crate::error::{Error, Result};
use crate::output::log;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What the heartbeat learned, shared with the driver.
#[derive(Debug, Default)]
pub struct OwnerFlags {
    lost: AtomicBool,
    /// Set on a stop request or a lost lease: this operation's interrupt scope.
    stop: Arc<AtomicBool>,
    /// Pause and live limits, as the journal last asked.
    control: Arc<crate::control::Control>,
    /// Where the heartbeat reads the work's progress from, once the work said.
    progress: std::sync::Mutex<Option<ProgressSource>>,
}

/// A reading of the work's own counters, None until it has begun.
type ProgressReader = Box<dyn Fn() -> Option<Progress> + Send + Sync>;

/// The work's progress as the heartbeat reads it every second.
struct ProgressSource(ProgressReader);

impl std::fmt::Debug for ProgressSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ProgressSource")
    }
}

impl OwnerFlags {
    /// Fails once the heartbeat saw the lease taken over.
    pub fn check_lease(&self) -> Result<()> {
        if self.lost.load(Ordering::SeqCst) {
            Err(Error::LeaseLost(
                "another process took this operation over; stopping without touching anything more"
                    .into(),
            ))
        } else {
            Ok(())
        }
    }

    /// True once the heartbeat saw the lease taken over.
    pub fn lost(&self) -> bool {
        self.lost.load(Ordering::SeqCst)
    }

    /// The operation's stop flag, to run its work in (`signal::with_scope`).
    pub fn stop_flag(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.stop)
    }

    /// The operation's pause and live limits, to run its work in (`control::with`).
    pub fn control(&self) -> Arc<crate::control::Control> {
        Arc::clone(&self.control)
    }

    /// From now on the heartbeat journals what `read` says the work has done (for
    /// monitoring: `shardctl exporter`).
    pub fn report_progress(&self, read: impl Fn() -> Option<Progress> + Send + Sync + 'static) {
        *self.progress.lock().unwrap_or_else(|p| p.into_inner()) =
            Some(ProgressSource(Box::new(read)));
    }

    /// The work's progress now, if it reports any.
    fn progress(&self) -> Option<Progress> {
        self.progress
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .and_then(|source| (source.0)())
    }
}

/// Keeps the lease's heartbeat fresh until dropped.
pub(crate) struct Heartbeat {
    stop: Arc<AtomicBool>,
    handle: Option<std::thread::JoinHandle<()>>,
}

impl Heartbeat {
    const EVERY: Duration = Duration::from_secs(1);

    pub(crate) fn start(
        inv: &Inventory,
        lease: Lease,
        flags: Arc<OwnerFlags>,
    ) -> Result<Heartbeat> {
        let mut dir = Directory::open(inv)?;
        let stop = Arc::new(AtomicBool::new(false));
        let quit = Arc::clone(&stop);
        let handle = std::thread::spawn(move || {
            let mut last = Instant::now() - Self::EVERY;
            let mut was_paused = false;
            let mut was_limits: Option<super::journal::Limits> = None;
            while !quit.load(Ordering::Relaxed) {
                if last.elapsed() >= Self::EVERY {
                    last = Instant::now();
                    let paused = flags.control.paused();
                    let progress = flags.progress();
                    match dir.retrying(|d| d.heartbeat(&lease, paused, progress)) {
                        Ok(r) if r.held => {
                            if r.stop_requested && !flags.stop.swap(true, Ordering::SeqCst) {
                                log(
                                    0,
                                    &format!(
                                        "operation {}: stop requested; stopping at the next safe point",
                                        lease.op
                                    ),
                                );
                            }
                            if was_limits.is_some_and(|was| was != r.limits) {
                                log(
                                    0,
                                    &format!(
                                        "operation {}: live limits now {}",
                                        lease.op,
                                        match r.limits.describe() {
                                            d if d.is_empty() => "its own".to_string(),
                                            d => d,
                                        }
                                    ),
                                );
                            }
                            was_limits = Some(r.limits);
                            flags.control.set_requested(r.pause_requested, r.limits);
                            if paused != was_paused {
                                log(
                                    0,
                                    &if paused {
                                        format!(
                                            "operation {}: paused at a safe point; `shardctl continue {}` goes on",
                                            lease.op, lease.op
                                        )
                                    } else {
                                        format!("operation {}: continuing", lease.op)
                                    },
                                );
                                was_paused = paused;
                            }
                        }
                        Ok(_) => {
                            log(
                                0,
                                &format!(
                                    "operation {}: the lease was taken over; stopping",
                                    lease.op
                                ),
                            );
                            flags.lost.store(true, Ordering::SeqCst);
                            // Ends this operation's waits early; the driver sees the lost
                            // lease first.
                            flags.stop.store(true, Ordering::SeqCst);
                            return;
                        }
                        Err(e) => log(
                            1,
                            &format!("heartbeat of operation {} failed: {e}", lease.op),
                        ),
                    }
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        });
        Ok(Heartbeat {
            stop,
            handle: Some(handle),
        })
    }
}

impl Drop for Heartbeat {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// A lock named in the directory's `directory_locks` table, held by this process (its
/// [`owner_id`](crate::directory::journal::owner_id)) with a heartbeat every second from a
/// connection of its own, and let go when dropped. Unlike `GET_LOCK`, which lives in one
/// server's memory (another member of a cluster does not see it) and goes with the
/// connection that took it (silently, when that connection is re-opened), the row is
/// replicated and survives reconnections. A holder that died (its process gone on this
/// host, or silent for [`STALE_OWNER_SECS`](crate::directory::journal::STALE_OWNER_SECS))
/// loses it to the next taker.
pub struct NamedLock {
    name: String,
    stop: Arc<AtomicBool>,
    handle: Option<std::thread::JoinHandle<()>>,
    dir: Option<Directory>,
}

impl NamedLock {
    /// Takes lock `name`, waiting at most `wait` while a live holder has it (then
    /// [`Error::Timeout`], naming it).
    pub fn take(inv: &Inventory, name: &str, wait: Duration) -> Result<NamedLock> {
        use crate::directory::journal::{holder_status, owner_id, Owner};
        let me = owner_id();
        let mut dir = Directory::open(inv)?;
        let locks = format!("{}.`directory_locks`", dir.schema().quoted());
        let deadline = Instant::now() + wait;
        loop {
            let holder = dir.retrying(|d| {
                d.transaction(|d| {
                    let row: Option<(Option<String>, Option<i64>)> = d.server().first(&crate::server::Stmt::with(
                        format!("SELECT owner, TIMESTAMPDIFF(SECOND, heartbeat_at, CURRENT_TIMESTAMP(3)) FROM {locks} WHERE name = ? FOR UPDATE"),
                        vec![name.into()],
                    ))?;
                    let holder = match row {
                        Some((Some(owner), age)) if owner != me => {
                            match holder_status(owner, age.map(|a| a.max(0) as u64)) {
                                Owner::Alive { owner, heartbeat_age_secs } => {
                                    Some(format!("{owner} (heartbeat {heartbeat_age_secs}s ago)"))
                                }
                                _ => None,
                            }
                        }
                        _ => None,
                    };
                    if holder.is_none() {
                        d.server().exec(&crate::server::Stmt::with(
                            format!("INSERT INTO {locks} (name, owner, heartbeat_at) VALUES (?, ?, CURRENT_TIMESTAMP(3)) ON DUPLICATE KEY UPDATE owner = VALUES(owner), heartbeat_at = VALUES(heartbeat_at)"),
                            vec![name.into(), me.as_str().into()],
                        ))?;
                    }
                    Ok(holder)
                })
            })?;
            let Some(holder) = holder else {
                break;
            };
            if Instant::now() > deadline {
                return Err(Error::Timeout(format!(
                    "the directory lock {name} is held by {holder}, still after {}s",
                    wait.as_secs()
                )));
            }
            crate::signal::check()?;
            std::thread::sleep(Duration::from_millis(500));
        }
        let mut beat = Directory::open(inv)?;
        let stop = Arc::new(AtomicBool::new(false));
        let quit = Arc::clone(&stop);
        let (lock_name, owner) = (name.to_string(), me.clone());
        let handle = std::thread::spawn(move || {
            let mut last = Instant::now();
            while !quit.load(Ordering::Relaxed) {
                if last.elapsed() >= Heartbeat::EVERY {
                    last = Instant::now();
                    let table = format!("{}.`directory_locks`", beat.schema().quoted());
                    if let Err(e) = beat.retrying(|d| {
                        d.server().exec(&crate::server::Stmt::with(
                            format!("UPDATE {table} SET heartbeat_at = CURRENT_TIMESTAMP(3) WHERE name = ? AND owner = ?"),
                            vec![lock_name.as_str().into(), owner.as_str().into()],
                        ))
                    }) {
                        log(1, &format!("heartbeat of the directory lock {lock_name} failed: {e}"));
                    }
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        });
        Ok(NamedLock {
            name: name.to_string(),
            stop,
            handle: Some(handle),
            dir: Some(dir),
        })
    }
}

impl Drop for NamedLock {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
        if let Some(mut dir) = self.dir.take() {
            let table = format!("{}.`directory_locks`", dir.schema().quoted());
            let me = crate::directory::journal::owner_id();
            let name = self.name.clone();
            // A release that fails leaves a row whose holder is gone: the next taker sees
            // it so (this process, or its silence) and takes it.
            let _ = dir.retrying(|d| {
                d.server().exec(&crate::server::Stmt::with(
                    format!("UPDATE {table} SET owner = NULL WHERE name = ? AND owner = ?"),
                    vec![name.as_str().into(), me.as_str().into()],
                ))
            });
        }
    }
}
