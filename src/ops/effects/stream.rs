//! A change stream run in the background for a live operation: started once its copy is
//! made, it keeps the target current until the procedure stops it, and it is brought to an
//! exact source position whenever a step needs the target to stand still there (a
//! verification round's consistent point, the final position under the fence).
//!
//! The stream's own guarantees (one target transaction per source transaction, its
//! checkpoint committed with the rows) make every stop safe: a stream stopped anywhere
//! resumes from the target's checkpoint, in this process or the next owner's.

use crate::error::{Error, Result};
use crate::server::BinlogPosition;
use crate::stream::{ChangeStream, NoObserver, RunReport, StreamStats, Until};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// What a background run hands back when it ends: the stream (to run again) and how the run
/// went.
type Finished = (ChangeStream, Result<RunReport>);

/// A prepared stream and, while it runs, its thread.
pub struct StreamRunner {
    state: State,
    stats: Arc<StreamStats>,
    stop: Arc<AtomicBool>,
}

enum State {
    /// Prepared, not running.
    Idle(Box<ChangeStream>),
    /// Running in the background.
    Running(JoinHandle<Finished>),
    /// Lost to a thread that panicked.
    Gone,
}

impl StreamRunner {
    /// Wraps a prepared stream; it does not run yet.
    pub fn new(stream: ChangeStream) -> StreamRunner {
        StreamRunner {
            stats: stream.stats(),
            stop: stream.stop_flag(),
            state: State::Idle(Box::new(stream)),
        }
    }

    /// The stream's counters (lag, changes applied).
    pub fn stats(&self) -> Arc<StreamStats> {
        Arc::clone(&self.stats)
    }

    /// Whether it runs in the background now.
    pub fn running(&self) -> bool {
        matches!(self.state, State::Running(_))
    }

    /// Runs it in the background until [`Self::halt`]. Nothing when it runs already.
    pub fn start(&mut self) -> Result<()> {
        let stream = match std::mem::replace(&mut self.state, State::Gone) {
            State::Idle(s) => s,
            running @ State::Running(_) => {
                self.state = running;
                return Ok(());
            }
            State::Gone => return Err(gone()),
        };
        self.stop.store(false, Ordering::SeqCst);
        let handle = std::thread::Builder::new()
            .name("shardctl-stream".into())
            .spawn(move || {
                let mut stream = *stream;
                let result = stream.run(Until::Stopped, &mut NoObserver);
                (stream, result)
            })
            .map_err(|e| Error::Internal(format!("cannot start the stream's thread: {e}")))?;
        self.state = State::Running(handle);
        Ok(())
    }

    /// Stops the background run at its next event (a transaction being applied is rolled
    /// back, to be read again) and waits for it. A run that had failed returns its error:
    /// the stream is then idle again, to be started once the cause is gone.
    pub fn halt(&mut self) -> Result<()> {
        let handle = match std::mem::replace(&mut self.state, State::Gone) {
            State::Running(h) => h,
            idle @ State::Idle(_) => {
                self.state = idle;
                return Ok(());
            }
            State::Gone => return Err(gone()),
        };
        self.stop.store(true, Ordering::SeqCst);
        let (stream, result) = handle
            .join()
            .map_err(|_| Error::Internal("the change stream's thread panicked".into()))?;
        self.state = State::Idle(Box::new(stream));
        self.stop.store(false, Ordering::SeqCst);
        result.map(|_| ())
    }

    /// Halts the background run, then brings the target to `pos` (a transaction boundary at
    /// or past it) and leaves the stream idle there. Fails after `timeout`, the stream
    /// stopped where it stood (its checkpoint consistent).
    pub fn run_to(&mut self, pos: &BinlogPosition, timeout: Duration) -> Result<RunReport> {
        self.halt()?;
        let stream = match std::mem::replace(&mut self.state, State::Gone) {
            State::Idle(s) => s,
            other => {
                self.state = other;
                return Err(gone());
            }
        };
        let stop = Arc::clone(&self.stop);
        let until = Until::Position(pos.clone());
        let handle = std::thread::Builder::new()
            .name("shardctl-stream".into())
            .spawn(move || {
                let mut stream = *stream;
                let result = stream.run(until, &mut NoObserver);
                (stream, result)
            })
            .map_err(|e| Error::Internal(format!("cannot start the stream's thread: {e}")))?;
        let deadline = Instant::now() + timeout;
        let mut timed_out = false;
        while !handle.is_finished() {
            if Instant::now() >= deadline || crate::signal::interrupted() {
                timed_out = Instant::now() >= deadline;
                stop.store(true, Ordering::SeqCst);
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        let (stream, result) = handle
            .join()
            .map_err(|_| Error::Internal("the change stream's thread panicked".into()))?;
        self.state = State::Idle(Box::new(stream));
        self.stop.store(false, Ordering::SeqCst);
        crate::signal::check()?;
        let report = result?;
        if timed_out || report.ended != crate::stream::Ended::Reached {
            return Err(Error::Timeout(format!(
                "the change stream did not reach {pos} within {}s",
                timeout.as_secs()
            )));
        }
        Ok(report)
    }
}

impl Drop for StreamRunner {
    /// A runner dropped while its stream runs stops it (the process is ending the
    /// operation's run; the next owner starts it again from the target's checkpoint).
    fn drop(&mut self) {
        let _ = self.halt();
    }
}

fn gone() -> Error {
    Error::Internal("the change stream was lost to a failed thread".into())
}
