//! What an operation does, with its plan: the one value the mover's kind branches match on.

use crate::directory::journal::{OpKind, OperationParams};
use crate::directory::{KeyMovePlan, MergePlan, SplitPlan};
use crate::error::{Error, Result};

/// The kind of a move, split or merge and the plan that goes with it. Whether the copy goes
/// to another node or stays on the shard's own (a split or a merge on one node) is the
/// mover's source and target, not a kind of its own.
#[derive(Debug, Clone, PartialEq)]
pub enum OperationPlan {
    /// The shard's schemas copied to another node under the same names.
    Move,
    /// The shard split: the keys of `SplitPlan::mapping` go to a new shard, whose schemas
    /// are copied from the old shard's (onto another node, or onto its own).
    Split(SplitPlan),
    /// The retired shard's sharded tables copied into the survivor's on the survivor's
    /// node, the retired shard's keys joined to the survivor's.
    Merge(MergePlan),
    /// Some of the donor's keys go to the receiver, an existing shard (on another node or
    /// the same): their rows copied into its tables and kept current by a change stream.
    KeyMove(KeyMovePlan),
}

impl OperationPlan {
    /// Reads an operation's plan back from its journaled kind and parameters.
    pub(super) fn from_journal<P>(
        op: u64,
        kind: OpKind,
        params: &OperationParams<P>,
    ) -> Result<Self> {
        let missing = |what: &str| {
            Error::Internal(format!("operation {op}: the journal holds no {what} plan"))
        };
        Ok(match kind {
            OpKind::Split => {
                OperationPlan::Split(params.split.clone().ok_or_else(|| missing("split"))?)
            }
            OpKind::Merge => {
                OperationPlan::Merge(params.merge.clone().ok_or_else(|| missing("merge"))?)
            }
            OpKind::MoveKeys => {
                OperationPlan::KeyMove(params.key_move.clone().ok_or_else(|| missing("key move"))?)
            }
            _ => OperationPlan::Move,
        })
    }

    /// Its parameters in the journal: the playbook and the plan.
    pub(super) fn params<P>(&self, playbook: P) -> OperationParams<P> {
        OperationParams {
            playbook: Some(playbook),
            split: self.split().cloned(),
            merge: self.merge().cloned(),
            key_move: self.key_move().cloned(),
            ..OperationParams::default()
        }
    }

    /// The journal's kind.
    pub fn kind(&self) -> OpKind {
        match self {
            OperationPlan::Move => OpKind::Move,
            OperationPlan::Split(_) => OpKind::Split,
            OperationPlan::Merge(_) => OpKind::Merge,
            OperationPlan::KeyMove(_) => OpKind::MoveKeys,
        }
    }

    /// `move`, `split` or `merge`, as hooks and the journal name it.
    pub fn name(&self) -> &'static str {
        self.kind().as_sql()
    }

    /// The split's plan, if it is one.
    pub fn split(&self) -> Option<&SplitPlan> {
        match self {
            OperationPlan::Split(p) => Some(p),
            _ => None,
        }
    }

    /// The merge's plan, if it is one.
    pub fn merge(&self) -> Option<&MergePlan> {
        match self {
            OperationPlan::Merge(p) => Some(p),
            _ => None,
        }
    }

    /// The key move's plan, if it is one.
    pub fn key_move(&self) -> Option<&KeyMovePlan> {
        match self {
            OperationPlan::KeyMove(p) => Some(p),
            _ => None,
        }
    }

    /// A key move: its copy is kept current by a change stream, not a channel.
    pub fn is_key_move(&self) -> bool {
        matches!(self, OperationPlan::KeyMove(_))
    }

    /// A split.
    pub fn is_split(&self) -> bool {
        matches!(self, OperationPlan::Split(_))
    }

    /// A merge.
    pub fn is_merge(&self) -> bool {
        matches!(self, OperationPlan::Merge(_))
    }

    /// The copy lands under other schema names than the source's (a split's new shard, a
    /// merge's survivor): the channel rewrites the schema of every event.
    pub fn renames_schemas(&self) -> bool {
        !matches!(self, OperationPlan::Move)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::directory::{MergeMapping, SplitMapping};

    fn plans() -> [OperationPlan; 4] {
        [
            OperationPlan::Move,
            OperationPlan::Split(SplitPlan {
                old_shard: 1,
                new_shard: 9,
                mapping: SplitMapping::Point {
                    hex: "80000000000000000000000000000000".into(),
                },
            }),
            OperationPlan::Merge(MergePlan {
                func_id: 1,
                survivor: 2,
                retired: 3,
                mapping: MergeMapping::Values,
            }),
            OperationPlan::KeyMove(KeyMovePlan {
                func_id: 1,
                donor: 2,
                receiver: 3,
                mapping: crate::directory::KeyMoveMapping::RangeBound {
                    was: crate::directory::Key::Int(100),
                    now: crate::directory::Key::Int(80),
                },
            }),
        ]
    }

    /// Each plan is journaled as its kind and parameters and read back as itself; a hook
    /// and the journal name each by its own kind (a merge is no move).
    #[test]
    fn every_plan_reads_back_from_its_kind_and_parameters() {
        for (plan, name) in plans()
            .into_iter()
            .zip(["move", "split", "merge", "move-keys"])
        {
            assert_eq!(plan.name(), name);
            let params = plan.params(serde_json::json!({"name": name}));
            let back = OperationPlan::from_journal(4, plan.kind(), &params).unwrap();
            assert_eq!(back, plan);
            assert_eq!(plan.renames_schemas(), name != "move");
        }
    }

    #[test]
    fn a_split_or_merge_without_its_plan_is_refused_naming_the_operation() {
        let empty: OperationParams = OperationParams::default();
        for kind in [OpKind::Split, OpKind::Merge, OpKind::MoveKeys] {
            let e = OperationPlan::from_journal(4, kind, &empty).unwrap_err();
            assert!(e.to_string().contains("operation 4"), "{e}");
        }
    }
}
