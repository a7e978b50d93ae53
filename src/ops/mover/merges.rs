//! A `merge` request of several shards runs as one merge operation per retired shard, in
//! the order [`crate::ops::merge::request`] chose: each is planned against the directory
//! as the earlier ones leave it, and the first that fails stops the rest (the operations
//! already finished stand; the failed one is resumable like any other).

use super::{MoveState, Mover, StepEvent};
use crate::config::Inventory;
use crate::error::Result;
use crate::ops::merge::MergeRequest;
use crate::playbook::Playbook;
use serde::Serialize;

/// One merge operation of a request, as it ended (also when it failed).
#[derive(Debug, Clone, Serialize)]
pub struct MergeOperation {
    /// Its operation id.
    pub op: u64,
    /// The shard it retired (or tried to).
    pub retired: u32,
    /// The shard its keys went to.
    pub survivor: u32,
    /// Its write fence, when one went up and came down.
    pub fence_millis: Option<u64>,
    /// Rows it copied.
    pub copied_rows: u64,
}

/// What a merge request did, as far as it got.
#[derive(Debug, Clone, Default)]
pub struct MergeRun {
    /// Every operation started, in order; the last one failed when the run did.
    pub operations: Vec<MergeOperation>,
    /// Rows copied by the operations that finished.
    pub copied_rows: u64,
    /// The longest write fence among the operations that finished.
    pub longest_fence_millis: u64,
}

impl MergeRun {
    /// The last operation started, the one a failed request stopped in.
    pub fn last_op(&self) -> Option<u64> {
        self.operations.last().map(|o| o.op)
    }
}

/// Runs `request`'s merges onto `node` one after the other. `run` drives each started
/// operation (the CLI wraps [`Mover::run`] in its progress display); the first error stops
/// the request and is returned beside what ran.
pub fn run_merge_request<'a>(
    inv: &'a Inventory,
    request: &MergeRequest,
    node: &str,
    playbook: &Playbook,
    on_event: &'a dyn Fn(&StepEvent),
    run: &mut dyn FnMut(&mut Mover<'a>) -> Result<MoveState>,
) -> (MergeRun, Result<()>) {
    let mut outcome = MergeRun::default();
    for plan in &request.steps {
        let mut mover = match Mover::start_merge(
            inv,
            request.survivor,
            plan.retired,
            node,
            playbook.clone(),
            on_event,
        ) {
            Ok(m) => m,
            Err(e) => return (outcome, Err(e)),
        };
        let result = run(&mut mover).map_err(|e| mover.name_interrupted(e));
        outcome.operations.push(MergeOperation {
            op: mover.op(),
            retired: plan.retired,
            survivor: request.survivor,
            fence_millis: mover.state().fence_millis,
            copied_rows: mover.state().copied_rows,
        });
        match result {
            Ok(state) => {
                outcome.copied_rows += state.copied_rows;
                outcome.longest_fence_millis = outcome
                    .longest_fence_millis
                    .max(state.fence_millis.unwrap_or(0));
            }
            Err(e) => return (outcome, Err(e)),
        }
    }
    (outcome, Ok(()))
}
