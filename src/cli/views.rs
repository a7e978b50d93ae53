//! The JSON shapes of the things commands report, one function per thing, so a shard, a
//! node or an operation reads the same in every command (docs/JSON.md): `shard` is a
//! shard's id, `node` a node's name, `function` a function's name, `op` an operation's
//! id, `step` a 1-based step number; enums are lower-case words; sizes are `bytes`, times
//! `*_at` (RFC 3339 UTC) and durations `*_ms`.

use crate::directory::journal::{OperationRecord, StepRecord};
use crate::directory::{coverage, DirNode, Function, Route, Shard, Snapshot};
use serde_json::{json, Value};

/// A registered node.
pub fn node(n: &DirNode, snap: Option<&Snapshot>) -> Value {
    let mut v = json!({
        "node": n.name,
        "host": n.host,
        "port": n.port,
        "address": format!("{}:{}", n.host, n.port),
    });
    if let Some(snap) = snap {
        v["shards"] = snap
            .shards
            .iter()
            .filter(|s| s.node == n.name)
            .count()
            .into();
    }
    v
}

/// A partition function.
pub fn function(f: &Function, snap: Option<&Snapshot>) -> Value {
    let mut v = json!({
        "function": f.name,
        "function_id": f.id,
        "type": f.sharding_type.as_sql().to_ascii_lowercase(),
        "key": f.key_type.as_sql().to_ascii_lowercase(),
    });
    if let Some(snap) = snap {
        v["shards"] = snap.shards_of(f.id).count().into();
        v["tables"] = snap
            .tables
            .iter()
            .filter(|t| t.func_id == f.id)
            .map(|t| format!("{}.{}", t.schema, t.table))
            .collect::<Vec<_>>()
            .into();
    }
    v
}

/// A sharded table.
pub fn sharded_table(schema: &str, table: &str, function: &str, column: &str) -> Value {
    json!({
        "table": format!("{schema}.{table}"),
        "schema": schema,
        "name": table,
        "placement": "sharded",
        "function": function,
        "column": column,
    })
}

/// A global table.
pub fn global_table(schema: &str, table: &str) -> Value {
    json!({
        "table": format!("{schema}.{table}"),
        "schema": schema,
        "name": table,
        "placement": "global",
        "function": null,
        "column": null,
    })
}

/// A shard with what it covers.
pub fn shard(s: &Shard, snap: &Snapshot) -> Value {
    let f = snap.function_by_id(s.func_id);
    json!({
        "shard": s.id,
        "function": f.map(|f| f.name.clone()),
        "node": s.node,
        "address": format!("{}:{}", s.host, s.port),
        "coverage": f.map(|f| coverage(snap, f, s.id)),
        "state": s.state.as_sql(),
        "availability": s.availability.as_sql(),
        "schemas": snap.shard_schemas(s),
        "version": s.version,
    })
}

/// What a shard covers as tables show it: a per-key shard (which covers no span) by how
/// many keys the directory maps to it.
pub fn covers_text(coverage: &crate::directory::Coverage, keys: Option<u64>) -> String {
    match keys {
        Some(n) => format!("{n} keys"),
        None => coverage.to_string(),
    }
}

/// An availability as tables show it: the command line's word (`no-writes`).
pub fn availability_word(a: crate::directory::Availability) -> &'static str {
    match a {
        crate::directory::Availability::Available => "available",
        crate::directory::Availability::NoWrites => "no-writes",
        crate::directory::Availability::Unavailable => "unavailable",
    }
}

/// Where a key lives.
pub fn route(key: &str, r: &Route, coverage: Value) -> Value {
    json!({
        "key": key,
        "shard": r.shard_id,
        "function": r.function,
        "node": r.node,
        "address": format!("{}:{}", r.host, r.port),
        "schemas": r.schemas,
        "state": r.state.as_sql(),
        "availability": r.availability.as_sql(),
        "coverage": coverage,
    })
}

/// The step an operation stands at: the first one not done, 1-based.
fn current_step(o: &OperationRecord) -> Value {
    o.steps
        .iter()
        .find(|s| s.state != crate::directory::journal::StepState::Done)
        .map(|s| json!({"step": s.step_no + 1, "name": s.name, "state": s.state}))
        .unwrap_or(Value::Null)
}

/// An operation's state for tables: `running`, with `(paused)` or `(pausing)` while a
/// pause is asked for.
pub fn state_word(o: &OperationRecord) -> String {
    let mut word = o.state.as_sql().to_string();
    if o.pause_requested && !o.state.is_finished() {
        word.push_str(if o.paused() {
            " (paused)"
        } else {
            " (pausing)"
        });
    }
    word
}

/// An operation in a list: what, where, how far, who holds it; no parameters or outputs
/// (those are in [`operation_detail`]).
pub fn operation(o: &OperationRecord) -> Value {
    json!({
        "op": o.id,
        "kind": o.kind,
        "shard": o.shard_id,
        "from": o.source,
        "to": o.target,
        "state": o.state,
        "steps": o.steps.len(),
        "steps_done": o.steps.iter().filter(|s| s.state == crate::directory::journal::StepState::Done).count(),
        "current_step": current_step(o),
        "owner": o.owner,
        "stop_requested": o.stop_requested,
        "pause_requested": o.pause_requested,
        "paused": o.paused(),
        "paused_at": o.paused_at_millis.filter(|_| o.paused()).map(crate::clock::rfc3339_millis),
        "limits": o.limits.to_json(),
        "error": o.error,
        "created_at": o.created_at_millis.map(crate::clock::rfc3339_millis),
        "updated_at": o.updated_at_millis.map(crate::clock::rfc3339_millis),
    })
}

/// One step of an operation (its outputs are the operation's whole state after it, so
/// they are shown once, as the detail's `state_after_last_step`).
pub fn step(s: &StepRecord) -> Value {
    json!({
        "step": s.step_no + 1,
        "name": s.name,
        "state": s.state,
        "elapsed_ms": s.millis,
        "inputs": s.inputs,
    })
}

/// An operation with its parameters, steps and effects.
pub fn operation_detail(o: &OperationRecord) -> Value {
    let mut v = operation(o);
    v["epoch"] = o.epoch.into();
    // Whole seconds, as the journal measures them, in the contract's unit.
    v["heartbeat_age_ms"] = o.heartbeat_age_secs.map(|s| s * 1000).into();
    v["params"] = o.params.clone();
    v["step_list"] = o.steps.iter().map(step).collect::<Vec<_>>().into();
    v["state_after_last_step"] = o.state_after_last_step().cloned().unwrap_or(Value::Null);
    v["effects"] = o
        .effects
        .iter()
        .map(|e| {
            json!({
                "seq": e.seq,
                "step": e.step_no + 1,
                "effect": e.effect,
                "node": e.node,
                "state": e.state,
            })
        })
        .collect::<Vec<_>>()
        .into();
    v
}
