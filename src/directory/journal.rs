//! The operations journal: every operation and each of its steps, with inputs, outputs,
//! timings, owner and heartbeat, so a crashed run can be resumed or rolled back without
//! guessing.

use super::store::Directory;
use crate::error::{Error, Result};
use crate::server::Stmt;
use serde::{Deserialize, Serialize};

/// States an operation goes through.
pub mod op_state {
    /// Steps are being run.
    pub const RUNNING: &str = "running";
    /// A step failed; `resume` or `abort` it.
    pub const FAILED: &str = "failed";
    /// Finished.
    pub const DONE: &str = "done";
    /// Rolled back.
    pub const ABORTED: &str = "aborted";
}

/// One journaled step.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct StepRecord {
    /// Position in the playbook, from 0.
    pub step_no: u32,
    /// Step name.
    pub name: String,
    /// pending, running, done, failed.
    pub state: String,
    /// Parameters it ran with.
    pub inputs: serde_json::Value,
    /// What it produced (coordinates, counts, ...).
    pub outputs: serde_json::Value,
    /// Milliseconds it took, when finished.
    pub millis: Option<u64>,
}

/// One journaled operation.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct OperationRecord {
    /// Id.
    pub id: u64,
    /// move, split, ...
    pub kind: String,
    /// Shard.
    pub shard_id: Option<u32>,
    /// Source node.
    pub source: Option<String>,
    /// Target node.
    pub target: Option<String>,
    /// State.
    pub state: String,
    /// Who runs it (host:pid).
    pub owner: Option<String>,
    /// Seconds since the owner's last heartbeat.
    pub heartbeat_age_secs: Option<u64>,
    /// Parameters (the playbook and options).
    pub params: serde_json::Value,
    /// Last error.
    pub error: Option<String>,
    /// Steps.
    pub steps: Vec<StepRecord>,
}

/// This process as an owner: `host:pid`.
pub fn owner_id() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "localhost".into());
    format!("{host}:{}", std::process::id())
}

fn json_text(v: &serde_json::Value) -> String {
    serde_json::to_string(v).unwrap_or_else(|_| "null".into())
}

fn parse_json(text: Option<String>) -> serde_json::Value {
    text.and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(serde_json::Value::Null)
}

impl Directory {
    fn jt(&self, table: &str) -> String {
        format!("{}.`{table}`", self.schema().quoted())
    }

    /// Records a new operation with its steps (all pending). Refused when the shard already
    /// has an unfinished operation.
    pub fn create_operation(
        &mut self,
        kind: &str,
        shard_id: u32,
        source: &str,
        target: &str,
        params: &serde_json::Value,
        steps: &[(String, serde_json::Value)],
    ) -> Result<u64> {
        self.create_operation_within(kind, shard_id, source, target, params, steps, None)
    }

    /// Like [`Directory::create_operation`], as part of operation `parent` (a split's
    /// prunes): the parent does not count as a conflicting operation.
    #[allow(clippy::too_many_arguments)]
    pub fn create_operation_within(
        &mut self,
        kind: &str,
        shard_id: u32,
        source: &str,
        target: &str,
        params: &serde_json::Value,
        steps: &[(String, serde_json::Value)],
        parent: Option<u64>,
    ) -> Result<u64> {
        let (ops, st) = (self.jt("operations"), self.jt("operation_steps"));
        let locations = self.jt("locations");
        let owner = owner_id();
        self.change(|d, _| {
            // Lock the shard's row so two operations cannot start at once.
            d.server().exec(&Stmt::with(
                format!("SELECT shard_id FROM {locations} WHERE shard_id = ? FOR UPDATE"),
                vec![shard_id.into()],
            ))?;
            let busy: Option<(u64, String, String)> = d.server().first(&Stmt::with(
                format!("SELECT op_id, kind, state FROM {ops} WHERE shard_id = ? AND state IN ('running', 'failed') AND op_id <> ? LIMIT 1"),
                vec![shard_id.into(), parent.unwrap_or(0).into()],
            ))?;
            if let Some((id, kind, state)) = busy {
                return Err(Error::Refused(format!(
                    "shard {shard_id} is under operation {id} ({kind}, {state}): resume or abort it first"
                )));
            }
            d.server().exec(&Stmt::with(
                format!("INSERT INTO {ops} (kind, shard_id, source_node, target_node, state, owner, heartbeat_at, params) VALUES (?, ?, ?, ?, 'running', ?, CURRENT_TIMESTAMP(3), ?)"),
                vec![kind.into(), shard_id.into(), source.into(), target.into(), owner.as_str().into(), json_text(params).into()],
            ))?;
            let id = d.server().first::<u64>(&Stmt::text("SELECT LAST_INSERT_ID()"))?.unwrap_or(0);
            for (i, (name, inputs)) in steps.iter().enumerate() {
                d.server().exec(&Stmt::with(
                    format!("INSERT INTO {st} (op_id, step_no, name, state, inputs) VALUES (?, ?, ?, 'pending', ?)"),
                    vec![id.into(), (i as u32).into(), name.as_str().into(), json_text(inputs).into()],
                ))?;
            }
            Ok(id)
        })
    }

    /// Loads one operation with its steps.
    pub fn operation(&mut self, id: u64) -> Result<OperationRecord> {
        self.operations(Some(id))?
            .into_iter()
            .next()
            .ok_or_else(|| Error::Usage(format!("no operation {id} in the journal")))
    }

    /// Loads all operations (or one), newest first, with their steps.
    pub fn operations(&mut self, only: Option<u64>) -> Result<Vec<OperationRecord>> {
        let (ops, st) = (self.jt("operations"), self.jt("operation_steps"));
        let filter = if only.is_some() {
            "WHERE op_id = ?"
        } else {
            ""
        };
        let params: Vec<mysql::Value> = only.into_iter().map(Into::into).collect();
        let rows = self.server().rows(&Stmt::with(
            format!("SELECT op_id, kind, shard_id, source_node, target_node, state, owner, TIMESTAMPDIFF(SECOND, heartbeat_at, CURRENT_TIMESTAMP(3)), params, error FROM {ops} {filter} ORDER BY op_id DESC"),
            params,
        ))?;
        let mut out = Vec::new();
        for mut r in rows {
            let id: u64 = r.take(0).unwrap_or(0);
            let kind: String = r.take(1).unwrap_or_default();
            let shard_id: Option<u32> = r.take(2).flatten();
            let source: Option<String> = r.take(3).flatten();
            let target: Option<String> = r.take(4).flatten();
            let state: String = r.take(5).unwrap_or_default();
            let owner: Option<String> = r.take(6).flatten();
            let age: Option<i64> = r.take(7).flatten();
            let params: Option<String> = r.take(8).flatten();
            let error: Option<String> = r.take(9).flatten();
            out.push(OperationRecord {
                id,
                kind,
                shard_id,
                source,
                target,
                state,
                owner,
                heartbeat_age_secs: age.map(|a| a.max(0) as u64),
                params: parse_json(params),
                error,
                steps: Vec::new(),
            });
        }
        for op in &mut out {
            let rows = self.server().rows(&Stmt::with(
                format!("SELECT step_no, name, state, inputs, outputs, TIMESTAMPDIFF(MICROSECOND, started_at, finished_at) FROM {st} WHERE op_id = ? ORDER BY step_no"),
                vec![op.id.into()],
            ))?;
            for r in rows {
                let (step_no, name, state, inputs, outputs, micros): (
                    u32,
                    String,
                    String,
                    Option<String>,
                    Option<String>,
                    Option<i64>,
                ) = mysql::from_row_opt(r).map_err(|e| Error::server("directory", e))?;
                op.steps.push(StepRecord {
                    step_no,
                    name,
                    state,
                    inputs: parse_json(inputs),
                    outputs: parse_json(outputs),
                    millis: micros.map(|m| (m.max(0) / 1000) as u64),
                });
            }
        }
        Ok(out)
    }

    /// Marks a step running (and the operation running, owned by this process).
    pub fn step_started(&mut self, op: u64, step_no: u32) -> Result<()> {
        let (ops, st) = (self.jt("operations"), self.jt("operation_steps"));
        self.server().exec(&Stmt::with(
            format!("UPDATE {st} SET state = 'running', started_at = CURRENT_TIMESTAMP(3), finished_at = NULL WHERE op_id = ? AND step_no = ?"),
            vec![op.into(), step_no.into()],
        ))?;
        self.server().exec(&Stmt::with(
            format!("UPDATE {ops} SET state = 'running', owner = ?, heartbeat_at = CURRENT_TIMESTAMP(3), error = NULL WHERE op_id = ?"),
            vec![owner_id().into(), op.into()],
        ))
    }

    /// Marks a step done with its outputs.
    pub fn step_done(&mut self, op: u64, step_no: u32, outputs: &serde_json::Value) -> Result<()> {
        let st = self.jt("operation_steps");
        self.server().exec(&Stmt::with(
            format!("UPDATE {st} SET state = 'done', outputs = ?, finished_at = CURRENT_TIMESTAMP(3) WHERE op_id = ? AND step_no = ?"),
            vec![json_text(outputs).into(), op.into(), step_no.into()],
        ))
    }

    /// Records a step's outputs without changing its state.
    pub fn set_step_outputs(
        &mut self,
        op: u64,
        step_no: u32,
        outputs: &serde_json::Value,
    ) -> Result<()> {
        let st = self.jt("operation_steps");
        self.server().exec(&Stmt::with(
            format!("UPDATE {st} SET outputs = ? WHERE op_id = ? AND step_no = ?"),
            vec![json_text(outputs).into(), op.into(), step_no.into()],
        ))
    }

    /// Points a shard at `node`, in one transaction that bumps the directory version.
    /// Refused unless the journal shows operation `op` verified the target.
    pub fn flip_shard(
        &mut self,
        shard_id: u32,
        from: &str,
        node: &super::DirNode,
        op: u64,
    ) -> Result<u64> {
        let (st, locations) = (self.jt("operation_steps"), self.jt("locations"));
        self.change(|d, version| {
            let verified: u64 = d
                .server()
                .first(&Stmt::with(
                    format!("SELECT COUNT(*) FROM {st} WHERE op_id = ? AND name = 'verify' AND state = 'done'"),
                    vec![op.into()],
                ))?
                .unwrap_or(0);
            if verified == 0 {
                return Err(Error::Refused(format!(
                    "flip of shard {shard_id}: operation {op} has not verified the target"
                )));
            }
            let changed = d.server().exec_affected(&Stmt::with(
                format!("UPDATE {locations} SET node = ?, host = ?, port = ?, state = 'online', version = ? WHERE shard_id = ? AND node = ?"),
                vec![node.name.as_str().into(), node.host.as_str().into(), node.port.into(), version.into(), shard_id.into(), from.into()],
            ))?;
            if changed == 0 {
                let at: Option<String> = d.server().first(&Stmt::with(
                    format!("SELECT node FROM {locations} WHERE shard_id = ?"),
                    vec![shard_id.into()],
                ))?;
                if at.as_deref() != Some(node.name.as_str()) {
                    return Err(Error::Refused(format!(
                        "flip of shard {shard_id}: it is on {}, not on {from}",
                        at.unwrap_or_default()
                    )));
                }
            }
            Ok(version)
        })
    }

    /// Adds a location for a shard being created by a split: offline, with no mapping, so
    /// no lookup reaches it until the split's flip.
    pub fn insert_offline_location(&mut self, func_id: u32, node: &super::DirNode) -> Result<u32> {
        let locations = self.jt("locations");
        self.change(|d, version| {
            d.server().exec(&Stmt::with(
                format!("INSERT INTO {locations} (func_id, node, host, port, state, version) VALUES (?, ?, ?, ?, 'offline', ?)"),
                vec![func_id.into(), node.name.as_str().into(), node.host.as_str().into(), node.port.into(), version.into()],
            ))?;
            Ok(d.server().first::<u32>(&Stmt::text("SELECT LAST_INSERT_ID()"))?.unwrap_or(0))
        })
    }

    /// The split's flip: the new shard's mapping and its location online, in one
    /// transaction, only for an operation that verified the copy.
    pub fn split_flip(
        &mut self,
        op: u64,
        func_id: u32,
        old_shard: u32,
        new_shard: u32,
        mapping: &super::NewMapping,
    ) -> Result<u64> {
        let (st, locations) = (self.jt("operation_steps"), self.jt("locations"));
        let (ranges, hashes, lists) = (self.jt("ranges"), self.jt("hashes"), self.jt("lists"));
        self.change(|d, version| {
            let verified: u64 = d
                .server()
                .first(&Stmt::with(
                    format!("SELECT COUNT(*) FROM {st} WHERE op_id = ? AND name = 'verify' AND state = 'done'"),
                    vec![op.into()],
                ))?
                .unwrap_or(0);
            if verified == 0 {
                return Err(Error::Refused(format!("split of shard {old_shard}: operation {op} has not verified the copy")));
            }
            let online: u64 = d.server().first(&Stmt::with(
                format!("SELECT COUNT(*) FROM {locations} WHERE shard_id = ? AND state = 'online'"),
                vec![new_shard.into()],
            ))?.unwrap_or(0);
            if online > 0 {
                return Ok(version);
            }
            match mapping {
                super::NewMapping::LowerBound(k) => {
                    let (col, v): (&str, mysql::Value) = match k {
                        super::Key::Int(i) => ("lower_bound", (*i).into()),
                        super::Key::Str(s) => ("lower_bound_str", s.as_bytes().into()),
                    };
                    d.server().exec(&Stmt::with(
                        format!("INSERT INTO {ranges} (func_id, {col}, shard_id) VALUES (?, ?, ?)"),
                        vec![func_id.into(), v, new_shard.into()],
                    ))?;
                }
                super::NewMapping::Point(p) => d.server().exec(&Stmt::with(
                    format!("INSERT INTO {hashes} (func_id, hash, shard_id) VALUES (?, ?, ?)"),
                    vec![func_id.into(), p.to_hex().into(), new_shard.into()],
                ))?,
                super::NewMapping::Values(values) => {
                    for v in values {
                        d.server().exec(&Stmt::with(
                            format!("UPDATE {lists} SET shard_id = ? WHERE func_id = ? AND value = ? AND shard_id = ?"),
                            vec![new_shard.into(), func_id.into(), v.to_string().as_bytes().into(), old_shard.into()],
                        ))?;
                    }
                }
            }
            d.server().exec(&Stmt::with(
                format!("UPDATE {locations} SET state = 'online', version = ? WHERE shard_id = ?"),
                vec![version.into(), new_shard.into()],
            ))?;
            Ok(version)
        })
    }

    /// Marks a step and its operation failed.
    pub fn step_failed(&mut self, op: u64, step_no: u32, error: &str) -> Result<()> {
        let (ops, st) = (self.jt("operations"), self.jt("operation_steps"));
        self.server().exec(&Stmt::with(
            format!("UPDATE {st} SET state = 'failed', finished_at = CURRENT_TIMESTAMP(3) WHERE op_id = ? AND step_no = ?"),
            vec![op.into(), step_no.into()],
        ))?;
        self.server().exec(&Stmt::with(
            format!("UPDATE {ops} SET state = 'failed', error = ? WHERE op_id = ?"),
            vec![error.into(), op.into()],
        ))
    }

    /// Marks an operation failed (resumable) with its error.
    pub fn step_failed_op(&mut self, op: u64, error: &str) -> Result<()> {
        let ops = self.jt("operations");
        self.server().exec(&Stmt::with(
            format!("UPDATE {ops} SET state = 'failed', error = ? WHERE op_id = ?"),
            vec![error.into(), op.into()],
        ))
    }

    /// Sets an operation's final state.
    pub fn finish_operation(&mut self, op: u64, state: &str) -> Result<()> {
        let ops = self.jt("operations");
        self.server().exec(&Stmt::with(
            format!(
                "UPDATE {ops} SET state = ?, heartbeat_at = CURRENT_TIMESTAMP(3) WHERE op_id = ?"
            ),
            vec![state.into(), op.into()],
        ))
    }

    /// Refreshes the owner's heartbeat.
    pub fn heartbeat(&mut self, op: u64) -> Result<()> {
        let ops = self.jt("operations");
        self.server().exec(&Stmt::with(
            format!("UPDATE {ops} SET heartbeat_at = CURRENT_TIMESTAMP(3) WHERE op_id = ?"),
            vec![op.into()],
        ))
    }
}
