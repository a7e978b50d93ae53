//! `shardctl prune`: deletes the rows a shard no longer owns, from every sharded table of
//! the shard, in primary-key chunks: a keyset cursor (never OFFSET, never a rescan), each
//! chunk's upper bound found with a SELECT, then `DELETE ... WHERE pk in (last, upper] AND
//! <not owned>` — no `DELETE ... LIMIT`. Chunks adapt to a target time; the work pauses
//! while the node's replicas lag or the node is busy; every chunk is checkpointed in the
//! journal, so an interrupted prune resumes where it stopped.
//!
//! A per-key shard's ownership is a directory row per key, on a server that may not be the
//! shard's: each chunk's distinct keys are read on the shard, looked up in the directory
//! in one statement, and the chunk's rows of the keys the directory maps to another shard
//! are deleted. Rows of keys the directory maps to no shard are kept (a key's rows may be
//! written before it is imported).
//!
//! The prune holds its operation's lease with a heartbeat like a move, so `shardctl stop`,
//! `pause`, `continue` and `throttle` reach it: before each chunk it parks while paused
//! (its own operation, or the split it belongs to), and takes the live `--max-lag`,
//! `--chunk-ms` and `--max-threads-running`. Its limits are journaled as it starts, so a
//! resumed prune keeps them.

pub mod predicate;

use crate::config::Inventory;
use crate::directory::journal::{Lease, NewOperation, OpKind, OpState, OperationParams};
use crate::directory::{Directory, Shard, ShardState, Snapshot};
use crate::error::{Error, Result};
use crate::ident::Ident;
use crate::output::log;
use crate::server::statements;
use crate::server::Server;
use mysql::Value;
use predicate::{not_owned, Predicate};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

/// Tuning and throttling.
#[derive(Debug, Clone)]
pub struct Options {
    /// Time one chunk should take.
    pub target_chunk: Duration,
    /// Chunk size bounds (primary-key rows walked per chunk).
    pub min_chunk: u64,
    /// Upper bound of the chunk size.
    pub max_chunk: u64,
    /// Pause while a replica is more than this many seconds behind (unknown lag counts).
    pub max_replica_lag_secs: u64,
    /// Pause while the node has more running threads than this.
    pub max_threads_running: u64,
    /// Give up (resumably) after waiting this long for the throttle to clear.
    pub throttle_timeout: Duration,
}

impl Options {
    /// The limits `shardctl throttle` can change, as these options set them.
    pub fn limits(&self) -> crate::directory::journal::Limits {
        crate::directory::journal::Limits {
            max_lag_secs: Some(self.max_replica_lag_secs),
            chunk_ms: Some(self.target_chunk.as_millis() as u64),
            workers: None,
            max_threads_running: Some(self.max_threads_running),
        }
    }

    /// These options with the live limits applied.
    pub fn with_limits(&self, l: &crate::directory::journal::Limits) -> Options {
        Options {
            target_chunk: l
                .chunk_ms
                .map(|ms| Duration::from_millis(ms.max(1)))
                .unwrap_or(self.target_chunk),
            max_replica_lag_secs: l.max_lag_secs.unwrap_or(self.max_replica_lag_secs),
            max_threads_running: l.max_threads_running.unwrap_or(self.max_threads_running),
            ..self.clone()
        }
    }
}

impl Default for Options {
    fn default() -> Self {
        Options {
            target_chunk: Duration::from_millis(500),
            min_chunk: 100,
            max_chunk: 50_000,
            max_replica_lag_secs: 1,
            max_threads_running: 25,
            throttle_timeout: Duration::from_secs(600),
        }
    }
}

/// One table to prune.
#[derive(Debug, Clone)]
pub struct TablePlan {
    /// Physical schema.
    pub schema: Ident,
    /// Table.
    pub table: Ident,
    /// Primary-key columns.
    pub pk: Vec<Ident>,
    /// The rows to delete; for a per-key shard, what each chunk's condition selects (its
    /// keys are bound chunk by chunk, see `per_key`).
    pub predicate: Predicate,
    /// Estimated rows in the table (information_schema).
    pub estimated_rows: u64,
    /// A per-key shard's table: the keys of each chunk are looked up in the directory.
    pub per_key: Option<PerKey>,
}

/// What a per-key shard's prune needs to decide a chunk's rows.
#[derive(Debug, Clone)]
pub struct PerKey {
    /// The per-key function.
    pub func_id: u32,
    /// The shard pruned: the keys the directory maps to it, or to none, stay.
    pub shard_id: u32,
    /// The sharding column.
    pub column: Ident,
    /// How its keys read.
    pub key_type: crate::directory::KeyType,
}

impl PerKey {
    fn of(snap: &Snapshot, shard: &Shard, column: &Ident) -> Option<PerKey> {
        let func = snap.function_by_id(shard.func_id)?;
        (func.sharding_type == crate::directory::ShardingType::Key).then(|| PerKey {
            func_id: func.id,
            shard_id: shard.id,
            column: column.clone(),
            key_type: func.key_type,
        })
    }

    /// The condition shown and journaled for the table: its values are each chunk's.
    fn described(&self) -> Predicate {
        Predicate {
            sql: format!(
                "({} IN (the chunk's keys the directory maps to another shard))",
                self.column.quoted()
            ),
            params: Vec::new(),
        }
    }

    /// The rows of the chunk `(last, upper]` whose key the directory maps to another
    /// shard; None when there are none. One statement on the shard (its distinct keys)
    /// and one on the directory (their shards).
    fn chunk_condition(
        &self,
        server: &mut Server,
        dir: &mut Directory,
        plan: &TablePlan,
        last: Option<&[Value]>,
        upper: &[Value],
    ) -> Result<Option<Predicate>> {
        let keys: Vec<Value> = server
            .rows(&statements::chunk_distinct_keys(
                &plan.schema,
                &plan.table,
                &plan.pk,
                last,
                upper,
                &self.column,
            ))?
            .into_iter()
            .filter_map(|r| r.unwrap().into_iter().next())
            .collect();
        let texts: Vec<String> = keys.iter().filter_map(key_text).collect();
        let elsewhere: std::collections::HashSet<String> = dir
            .retrying(|d| d.key_shards_of(self.func_id, &texts))?
            .into_iter()
            .filter(|(_, s)| *s != self.shard_id)
            .map(|(k, _)| k)
            .collect();
        if elsewhere.is_empty() {
            return Ok(None);
        }
        let mut values: Vec<Value> = Vec::new();
        for text in texts.iter().filter(|t| elsewhere.contains(*t)) {
            values.push(match self.key_type {
                crate::directory::KeyType::Int => Value::Int(text.parse().map_err(|_| {
                    Error::Internal(format!("{}: key {text} is not an integer", plan.name()))
                })?),
                crate::directory::KeyType::String => Value::Bytes(text.as_bytes().to_vec()),
            });
        }
        let kind = match self.key_type {
            crate::directory::KeyType::Int => statements::KeyKind::Int,
            crate::directory::KeyType::String => statements::KeyKind::Bytes,
        };
        Ok(Some(statements::owned(&statements::not_owned(
            &self.column,
            kind,
            &statements::NotOwned::NotIn(values),
        ))))
    }
}

/// A sharding column's value as the directory's key text (None for NULL).
fn key_text(v: &Value) -> Option<String> {
    match v {
        Value::Int(i) => Some(i.to_string()),
        Value::UInt(u) => Some(u.to_string()),
        Value::Bytes(b) => Some(String::from_utf8_lossy(b).into_owned()),
        _ => None,
    }
}

impl TablePlan {
    /// `schema.table`.
    pub fn name(&self) -> String {
        format!("{}.{}", self.schema, self.table)
    }
}

/// What pruning one table did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct TableReport {
    /// `schema.table`.
    pub table: String,
    /// Rows deleted.
    pub deleted: u64,
    /// Primary-key rows walked.
    pub walked: u64,
    /// Chunks.
    pub chunks: u64,
    /// Seconds spent waiting for the throttle.
    pub throttled_secs: f64,
}

/// Progress callback: (table, rows walked, rows deleted, estimated rows).
pub type OnChunk<'a> = &'a dyn Fn(&str, u64, u64, u64);

/// The refusal of a nullable sharding column (by `table add`, the preflight of a move,
/// split or merge, and prune): a NULL key belongs to no shard, and no ownership predicate
/// (`col < ? OR col >= ?`) is true for it.
pub fn nullable_key_refusal(schema: &Ident, table: &Ident, column: &Ident, node: &str) -> String {
    format!(
        "the sharding column {schema}.{table}.{column} on {node} is nullable: a NULL key belongs to no shard (split guards let it through, a prune never deletes it, a split copies it to both sides); make it NOT NULL first"
    )
}

/// Plans the prune of a shard: every sharded table of its function in each of its schemas,
/// children before parents. Refuses a table without a primary key, or whose sharding
/// column is nullable (its NULL keys would never be deleted).
pub fn plan(inv: &Inventory, snap: &Snapshot, shard: &Shard) -> Result<Vec<TablePlan>> {
    let mut server = prune_connection(inv, &shard.node)?;
    let mut out = Vec::new();
    for logical in snap.function_schemas(shard.func_id) {
        let schema = Ident::new(
            "schema",
            &crate::directory::shard_schema(&logical, shard.id),
        )?;
        let sizes = server.table_rows(&schema)?;
        let mut tables = Vec::new();
        for t in snap
            .tables
            .iter()
            .filter(|t| t.func_id == shard.func_id && t.schema == logical)
        {
            let table = Ident::new("table", &t.table)?;
            let column = Ident::new("column", &t.column)?;
            let pk = server.primary_key(&schema, &table)?;
            if pk.is_empty() && !server.tables(&schema)?.iter().any(|t| t.name == table) {
                return Err(Error::Refused(format!(
                    "table {schema}.{table} does not exist on {}: the directory and the node disagree",
                    shard.node
                )));
            }
            if pk.is_empty() {
                return Err(Error::Refused(format!(
                    "table {schema}.{table} has no primary key: prune walks primary keys and will not delete from it"
                )));
            }
            if crate::server::accounts::is_nullable(&mut server, &schema, &table, &column)?
                == Some(true)
            {
                return Err(Error::Refused(nullable_key_refusal(
                    &schema,
                    &table,
                    &column,
                    &shard.node,
                )));
            }
            let per_key = PerKey::of(snap, shard, &column);
            tables.push(TablePlan {
                estimated_rows: sizes.get(table.as_str()).copied().unwrap_or(0),
                predicate: match &per_key {
                    Some(k) => k.described(),
                    None => not_owned(snap, shard, &column)?,
                },
                schema: schema.clone(),
                table,
                pk,
                per_key,
            });
        }
        // Children (tables whose foreign keys point at others) before their parents.
        let fks = server.foreign_keys(&schema)?;
        let mut remaining = tables;
        while !remaining.is_empty() {
            let names: Vec<String> = remaining.iter().map(|t| t.table.to_string()).collect();
            let referenced_by_remaining = |t: &TablePlan| {
                fks.iter().any(|f| {
                    f.referenced_table == t.table.as_str()
                        && f.table != f.referenced_table
                        && names.contains(&f.table)
                })
            };
            let pos = remaining
                .iter()
                .position(|t| !referenced_by_remaining(t))
                .unwrap_or(0);
            out.push(remaining.remove(pos));
        }
    }
    Ok(out)
}

/// What `prune --dry-run` shows for one table.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct TableDryRun {
    /// `schema.table`.
    pub table: String,
    /// Rows the predicate matches now.
    pub rows_to_delete: u64,
    /// The rows a chunk deletes: those it holds that the shard no longer owns.
    pub predicate: String,
    /// The statements the prune sends for it, in order: the first chunk's DELETE and every
    /// later chunk's (each chunk's key bounds are bound at run time).
    pub statements: Vec<String>,
}

/// For `--dry-run`: each table's predicate, how many rows it matches now, and the DELETE
/// statements the prune would send, built as the live prune builds them.
pub fn dry_run(inv: &Inventory, shard: &Shard, plans: &[TablePlan]) -> Result<Vec<TableDryRun>> {
    let mut server = prune_connection(inv, &shard.node)?;
    server.make_read_only()?;
    let mut dir = match plans.iter().any(|p| p.per_key.is_some()) {
        true => Some(Directory::open(inv)?),
        false => None,
    };
    plans
        .iter()
        .map(|p| {
            if let (Some(k), Some(dir)) = (&p.per_key, dir.as_mut()) {
                return per_key_dry_run(&mut server, dir, p, k);
            }
            let st = statements::count_where(&p.schema, &p.table, &p.predicate);
            let n = server.first::<u64>(&st)?.unwrap_or(0);
            let bound = vec![Value::NULL; p.pk.len()];
            let first =
                statements::delete_chunk(&p.schema, &p.table, &p.pk, None, &bound, &p.predicate);
            let next = statements::delete_chunk(
                &p.schema,
                &p.table,
                &p.pk,
                Some(&bound),
                &bound,
                &p.predicate,
            );
            Ok(TableDryRun {
                table: p.name(),
                rows_to_delete: n,
                predicate: p.predicate.to_string(),
                statements: vec![first.sql, next.sql],
            })
        })
        .collect()
}

/// A per-key table's dry run: its chunks walked as the prune walks them (of
/// [`DRY_RUN_CHUNK`] rows), each chunk's keys looked up, the rows counted; the statements
/// are the distinct DELETEs the chunks would send.
fn per_key_dry_run(
    server: &mut Server,
    dir: &mut Directory,
    p: &TablePlan,
    k: &PerKey,
) -> Result<TableDryRun> {
    let mut last: Option<Vec<Value>> = None;
    let mut rows = 0u64;
    let mut sqls: Vec<String> = Vec::new();
    loop {
        let chunk = server.rows(&statements::next_chunk_keys(
            &p.schema,
            &p.table,
            &p.pk,
            last.as_deref(),
            DRY_RUN_CHUNK,
        ))?;
        let Some(upper) = chunk.last().cloned().map(|r| r.unwrap()) else {
            break;
        };
        if let Some(cond) = k.chunk_condition(server, dir, p, last.as_deref(), &upper)? {
            let st =
                statements::count_chunk(&p.schema, &p.table, &p.pk, last.as_deref(), &upper, &cond);
            rows += server.first::<u64>(&st)?.unwrap_or(0);
            let delete = statements::delete_chunk(
                &p.schema,
                &p.table,
                &p.pk,
                last.as_deref(),
                &upper,
                &cond,
            );
            if !sqls.contains(&delete.sql) {
                sqls.push(delete.sql);
            }
        }
        let full = chunk.len() as u64 == DRY_RUN_CHUNK;
        last = Some(upper);
        if !full {
            break;
        }
    }
    Ok(TableDryRun {
        table: p.name(),
        rows_to_delete: rows,
        predicate: p.predicate.to_string(),
        statements: sqls,
    })
}

/// The chunk a per-key table's dry run walks.
const DRY_RUN_CHUNK: u64 = 1000;

/// A primary-key value as JSON for the journal, and back.
fn value_to_json(v: &Value) -> serde_json::Value {
    use serde_json::json;
    match v {
        Value::NULL => serde_json::Value::Null,
        Value::Int(i) => json!({"i": i}),
        Value::UInt(u) => json!({"u": u}),
        Value::Float(f) => json!({"f": f}),
        Value::Double(d) => json!({"d": d}),
        Value::Bytes(b) => json!({"b": b.iter().map(|x| format!("{x:02x}")).collect::<String>()}),
        Value::Date(y, mo, d, h, mi, s, us) => json!({"date": [y, mo, d, h, mi, s, us]}),
        Value::Time(n, d, h, mi, s, us) => json!({"time": [n, d, h, mi, s, us]}),
    }
}

fn json_to_value(j: &serde_json::Value) -> Option<Value> {
    if j.is_null() {
        return Some(Value::NULL);
    }
    let o = j.as_object()?;
    if let Some(i) = o.get("i") {
        return i.as_i64().map(Value::Int);
    }
    if let Some(u) = o.get("u") {
        return u.as_u64().map(Value::UInt);
    }
    if let Some(f) = o.get("f") {
        return f.as_f64().map(|f| Value::Float(f as f32));
    }
    if let Some(d) = o.get("d") {
        return d.as_f64().map(Value::Double);
    }
    if let Some(b) = o.get("b").and_then(|b| b.as_str()) {
        let bytes: Option<Vec<u8>> = (0..b.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(b.get(i..i + 2)?, 16).ok())
            .collect();
        return bytes.map(Value::Bytes);
    }
    if let Some(d) = o.get("date").and_then(|d| d.as_array()) {
        let n: Vec<u64> = d.iter().filter_map(|x| x.as_u64()).collect();
        return (n.len() == 7).then(|| {
            Value::Date(
                n[0] as u16,
                n[1] as u8,
                n[2] as u8,
                n[3] as u8,
                n[4] as u8,
                n[5] as u8,
                n[6] as u32,
            )
        });
    }
    if let Some(t) = o.get("time").and_then(|d| d.as_array()) {
        let neg = t.first()?.as_bool()?;
        let n: Vec<u64> = t.iter().skip(1).filter_map(|x| x.as_u64()).collect();
        return (n.len() == 5).then(|| {
            Value::Time(
                neg,
                n[0] as u32,
                n[1] as u8,
                n[2] as u8,
                n[3] as u8,
                n[4] as u32,
            )
        });
    }
    None
}

/// Waits while the node is busy or its replicas lag. Returns how long it waited.
struct Throttle {
    node: String,
    address: String,
    replicas: Vec<(crate::config::ReplicaSpec, Option<Server>)>,
    opts: Options,
    max_lag_seen: u64,
    /// The node's position after the previous chunk: replicas must have applied it before
    /// the next chunk starts, which keeps them at most about one chunk behind.
    pending: Option<crate::server::BinlogPosition>,
}

impl Throttle {
    fn new(inv: &Inventory, node: &str, opts: &Options) -> Result<Throttle> {
        let n = inv.node(node)?;
        Ok(Throttle {
            node: node.to_string(),
            address: format!("{}:{}", n.host(), n.port()),
            replicas: n.spec.replicas.iter().map(|r| (r.clone(), None)).collect(),
            opts: opts.clone(),
            max_lag_seen: 0,
            pending: None,
        })
    }

    /// The worst replica lag in seconds; None when one of them cannot tell.
    fn replica_lag(&mut self, inv: &Inventory) -> Option<u64> {
        let mut worst = 0;
        for (replica, conn) in &mut self.replicas {
            if conn.is_none() {
                *conn = Server::connect_replica(inv, &self.node, replica).ok();
            }
            let channels = conn.as_mut()?.channels();
            let Ok(channels) = channels else {
                *conn = None;
                return None;
            };
            let from_us = channels.iter().find(|c| c.source == self.address)?;
            if !from_us.sql_running || from_us.io_running != "Yes" {
                return None;
            }
            worst = worst.max(from_us.seconds_behind?);
        }
        Some(worst)
    }

    /// Waits until every replica has applied the previous chunk.
    fn wait_for_replicas(&mut self, inv: &Inventory, started: Instant) -> Result<()> {
        let Some(pos) = self.pending.take() else {
            return Ok(());
        };
        for (replica, conn) in &mut self.replicas {
            if conn.is_none() {
                *conn = Some(Server::connect_replica(inv, &self.node, replica)?);
            }
            let server = conn.as_mut().expect("connected above");
            let left = self.opts.throttle_timeout.saturating_sub(started.elapsed());
            // Through the channel's status: a replica's channel from its primary is often
            // the unnamed default one, which no position wait can name.
            server
                .wait_applied_from(&self.address, &pos, left.max(Duration::from_secs(1)))
                .map_err(|e| match e {
                    Error::Server { .. } => {
                        Error::Timeout(format!("replica {} of {}: {e}", replica.label(), self.node))
                    }
                    other => other,
                })?;
        }
        Ok(())
    }

    /// Records the node's position after a chunk (only when it has replicas).
    fn chunk_done(&mut self, server: &mut Server) -> Result<()> {
        if !self.replicas.is_empty() {
            self.pending = Some(server.coordinates()?.position);
        }
        Ok(())
    }

    fn wait(&mut self, inv: &Inventory, server: &mut Server) -> Result<Duration> {
        let started = Instant::now();
        self.wait_for_replicas(inv, started)?;
        loop {
            crate::signal::check()?;
            let running: u64 = server
                .rows(&statements::threads_running())?
                .first()
                .and_then(|r| crate::server::col_u64(r, &["Value"]))
                .unwrap_or(0);
            let lag = self.replica_lag(inv);
            if let Some(l) = lag {
                self.max_lag_seen = self.max_lag_seen.max(l);
            }
            let lag_ok = lag.is_some_and(|l| l <= self.opts.max_replica_lag_secs);
            if lag_ok && running <= self.opts.max_threads_running {
                return Ok(started.elapsed());
            }
            if started.elapsed() > self.opts.throttle_timeout {
                let lag = match lag {
                    Some(l) => format!("{l}s"),
                    None => "unknown".to_string(),
                };
                return Err(Error::Timeout(format!(
                    "prune on {} waited {}s for the throttle (replica lag {lag}, threads running {running})",
                    self.node,
                    self.opts.throttle_timeout.as_secs()
                )));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// Records a table's progress: (report, last key, finished).
type Checkpoint<'a> = &'a mut dyn FnMut(&TableReport, &Option<Vec<Value>>, bool) -> Result<()>;

/// What every table's prune shares.
struct Run<'a> {
    server: &'a mut Server,
    throttle: &'a mut Throttle,
    inv: &'a Inventory,
    opts: &'a Options,
    on_chunk: OnChunk<'a>,
    /// The prune's own operation control, and that of the split it belongs to.
    controls: [Option<std::sync::Arc<crate::control::Control>>; 2],
    /// A connection to the directory for a per-key shard's lookups.
    lookups: Option<Directory>,
}

impl Run<'_> {
    /// A safe point before a chunk: parks while the prune or its split is paused, then
    /// returns the options with the live limits applied.
    fn safe_point(&mut self) -> Result<Options> {
        loop {
            let mut parked = Duration::ZERO;
            for c in self.controls.iter().flatten() {
                parked += c.pause_point()?;
            }
            if parked.is_zero() {
                break;
            }
        }
        let live = self.controls[0]
            .as_ref()
            .map(|c| c.limits())
            .unwrap_or_default();
        let opts = self.opts.with_limits(&live);
        self.throttle.opts = opts.clone();
        Ok(opts)
    }
}

/// Prunes one table from `last` on, checkpointing after every chunk.
fn prune_table(
    run: &mut Run<'_>,
    plan: &TablePlan,
    mut report: TableReport,
    mut last: Option<Vec<Value>>,
    checkpoint: Checkpoint<'_>,
) -> Result<TableReport> {
    let mut chunk = run.opts.min_chunk.max(1000).min(run.opts.max_chunk);
    loop {
        let opts = run.safe_point()?;
        let server = &mut *run.server;
        report.throttled_secs += run.throttle.wait(run.inv, server)?.as_secs_f64();
        let select = statements::next_chunk_keys(
            &plan.schema,
            &plan.table,
            &plan.pk,
            last.as_deref(),
            chunk,
        );
        let rows = server.rows(&select)?;
        let Some(upper_row) = rows.last() else {
            checkpoint(&report, &last, true)?;
            return Ok(report);
        };
        let upper: Vec<Value> = upper_row.clone().unwrap();
        let t = Instant::now();
        let predicate = match (&plan.per_key, run.lookups.as_mut()) {
            (Some(k), Some(dir)) => {
                k.chunk_condition(server, dir, plan, last.as_deref(), &upper)?
            }
            (Some(_), None) => {
                return Err(Error::Internal(format!(
                    "{}: a per-key table's prune without the directory",
                    plan.name()
                )))
            }
            (None, _) => Some(plan.predicate.clone()),
        };
        let deleted = match predicate {
            Some(predicate) => {
                let delete = statements::delete_chunk(
                    &plan.schema,
                    &plan.table,
                    &plan.pk,
                    last.as_deref(),
                    &upper,
                    &predicate,
                );
                let deleted = server.exec_affected(&delete)?;
                run.throttle.chunk_done(server)?;
                deleted
            }
            None => 0,
        };
        let took = t.elapsed() + Duration::from_micros(1);
        let walked = rows.len() as u64;
        report.deleted += deleted;
        report.walked += walked;
        report.chunks += 1;
        last = Some(upper);
        let finished = walked < chunk;
        checkpoint(&report, &last, finished)?;
        (run.on_chunk)(
            &plan.name(),
            report.walked,
            report.deleted,
            plan.estimated_rows,
        );
        crate::fault::point("prune-chunk");
        if finished {
            return Ok(report);
        }
        // Aim the next chunk at the target time, changing by at most a factor of two.
        let scale = opts.target_chunk.as_secs_f64() / took.as_secs_f64();
        let next = (chunk as f64 * scale.clamp(0.5, 2.0)) as u64;
        chunk = next.clamp(opts.min_chunk.max(1), opts.max_chunk.max(1));
    }
}

/// Step name in the journal for a table.
fn step_name(plan: &TablePlan) -> String {
    format!("prune {}", plan.name())
}

/// A table's checkpoint as its step's outputs journal it after every chunk: the counts so
/// far, whether the table is done, and the last primary key walked.
fn checkpoint_outputs(
    r: &TableReport,
    last: &Option<Vec<Value>>,
    finished: bool,
) -> serde_json::Value {
    serde_json::json!({
        "deleted": r.deleted, "walked": r.walked, "chunks": r.chunks, "finished": finished,
        "last": last.as_ref().map(|v| v.iter().map(value_to_json).collect::<Vec<_>>()),
    })
}

/// The rows a prune operation has walked so far in all its tables, read from the
/// checkpoints its steps journal after every chunk (for monitoring); None before its first
/// checkpoint.
pub fn rows_walked(steps: &[crate::directory::journal::StepRecord]) -> Option<u64> {
    let walked: Vec<u64> = steps
        .iter()
        .filter_map(|s| s.outputs.get("walked").and_then(serde_json::Value::as_u64))
        .collect();
    (!walked.is_empty()).then(|| walked.iter().sum())
}

/// Refuses a prune of a shard that an unfinished merge retires or merges into, or that
/// an unfinished key move gives keys to: before the flip the survivor or the receiver
/// holds rows it does not own yet (copied), which a prune would delete.
pub fn refuse_if_merging(inv: &Inventory, shard_id: u32) -> Result<()> {
    let mut dir = Directory::open(inv)?;
    for op in dir.active_operations()? {
        if op.kind == OpKind::MoveKeys {
            let receiver = dir
                .operation(op.id)?
                .params::<serde_json::Value>()
                .ok()
                .and_then(|p| p.key_move)
                .map(|p| p.receiver);
            if receiver == Some(shard_id) {
                return Err(Error::Refused(format!(
                    "shard {shard_id} takes keys in operation {} ({}, {}): a prune now would delete the rows copied to it; resume or abort it first",
                    op.id, op.kind, op.state
                )));
            }
            continue;
        }
        if op.kind != OpKind::Merge {
            continue;
        }
        let plan = dir
            .operation(op.id)?
            .params::<serde_json::Value>()
            .ok()
            .and_then(|p| p.merge);
        if op.shard_id == Some(shard_id) || plan.is_some_and(|p| p.survivor == shard_id) {
            return Err(Error::Refused(format!(
                "shard {shard_id} is under operation {} ({}, {}): a prune now would delete the rows it merges; resume or abort it first",
                op.id, op.kind, op.state
            )));
        }
    }
    Ok(())
}

/// Runs a prune (new, or resumed from `op`). Journaled: one step per table, checkpointed
/// after every chunk.
pub fn run(
    inv: &Inventory,
    shard_id: u32,
    resume_op: Option<u64>,
    opts: &Options,
    on_chunk: OnChunk<'_>,
    parent: Option<u64>,
) -> Result<Vec<TableReport>> {
    let mut dir = Directory::open(inv)?;
    let snap = dir.load()?;
    let shard = snap.shard(shard_id)?.clone();
    if shard.state == ShardState::Offline {
        return Err(Error::Refused(format!("shard {shard_id} is offline")));
    }
    if parent.is_none() {
        refuse_if_merging(inv, shard_id)?;
    }
    let plans = plan(inv, &snap, &shard)?;
    let (lease, previous) = match resume_op {
        Some(op) => {
            let (lease, _) = dir.claim_operation(op, "resume")?;
            let rec = dir.operation(op)?;
            let prev: HashMap<String, serde_json::Value> = rec
                .steps
                .iter()
                .map(|s| (s.name.clone(), s.outputs.clone()))
                .collect();
            (lease, prev)
        }
        None => {
            let steps: Vec<(String, serde_json::Value)> = plans
                .iter()
                .map(|p| {
                    (
                        step_name(p),
                        serde_json::json!({"predicate": p.predicate.sql}),
                    )
                })
                .collect();
            let params: OperationParams = OperationParams {
                shard: Some(shard_id),
                parent,
                ..OperationParams::default()
            };
            let lease = dir.create_operation(&NewOperation {
                kind: OpKind::Prune,
                shard_id,
                source: &shard.node,
                target: &shard.node,
                params: &params,
                steps: &steps,
                parent,
            })?;
            (lease, HashMap::new())
        }
    };
    let lease: Lease = lease;
    let op = lease.op;
    let rec = dir.operation(op)?;
    // The limits it runs with are journaled: a resumed prune keeps the ones it had (and
    // any `shardctl throttle` gave it).
    let opts = &opts.with_limits(&rec.limits);
    dir.set_limits(op, &opts.limits().overridden_by(&rec.limits))?;
    let flags = std::sync::Arc::new(crate::directory::owner::OwnerFlags::default());
    let heartbeat =
        crate::directory::owner::Heartbeat::start(inv, lease, std::sync::Arc::clone(&flags))?;
    let controls = [Some(flags.control()), crate::control::current()];
    // A split's prune stops with the split (its scope); a prune of its own by its own
    // `shardctl stop`.
    let scope = match parent {
        Some(_) => crate::signal::scope(),
        None => Some(flags.stop_flag()),
    };
    let result = crate::signal::with_scope(scope, || {
        run_plans(
            inv,
            &mut dir,
            lease,
            &shard.node,
            &rec,
            &plans,
            &previous,
            opts,
            on_chunk,
            controls,
        )
    });
    drop(heartbeat);
    match result {
        Ok(reports) => {
            dir.release_operation(&lease, OpState::Done, None, None)?;
            Ok(reports)
        }
        Err(e) => {
            let _ = dir.release_operation(&lease, OpState::Failed, Some(&e.to_string()), None);
            Err(e)
        }
    }
}

/// The prune's tables in order, each from its checkpoint.
#[allow(clippy::too_many_arguments)]
fn run_plans(
    inv: &Inventory,
    dir: &mut Directory,
    lease: Lease,
    node: &str,
    rec: &crate::directory::journal::OperationRecord,
    plans: &[TablePlan],
    previous: &HashMap<String, serde_json::Value>,
    opts: &Options,
    on_chunk: OnChunk<'_>,
    controls: [Option<std::sync::Arc<crate::control::Control>>; 2],
) -> Result<Vec<TableReport>> {
    let op = lease.op;
    let mut server = prune_connection(inv, node)?;
    let mut throttle = Throttle::new(inv, node, opts)?;
    let mut lookups = match plans.iter().any(|p| p.per_key.is_some()) {
        true => Some(Directory::open(inv)?),
        false => None,
    };
    let mut reports = Vec::new();
    let step_numbers: BTreeMap<String, u32> = rec
        .steps
        .iter()
        .map(|s| (s.name.clone(), s.step_no))
        .collect();
    let result = (|| -> Result<()> {
        for p in plans {
            let name = step_name(p);
            let step_no = *step_numbers.get(&name).ok_or_else(|| {
                Error::Refused(format!(
                    "operation {op} has no step for {}: the directory changed since it started",
                    p.name()
                ))
            })?;
            let prev = previous.get(&name).cloned().unwrap_or_default();
            if prev["finished"] == serde_json::Value::Bool(true) {
                reports.push(TableReport {
                    table: p.name(),
                    deleted: prev["deleted"].as_u64().unwrap_or(0),
                    walked: prev["walked"].as_u64().unwrap_or(0),
                    chunks: prev["chunks"].as_u64().unwrap_or(0),
                    throttled_secs: 0.0,
                });
                continue;
            }
            let last: Option<Vec<Value>> = prev["last"]
                .as_array()
                .map(|a| a.iter().filter_map(json_to_value).collect())
                .filter(|v: &Vec<Value>| v.len() == p.pk.len());
            let start = TableReport {
                table: p.name(),
                deleted: prev["deleted"].as_u64().unwrap_or(0),
                walked: prev["walked"].as_u64().unwrap_or(0),
                chunks: prev["chunks"].as_u64().unwrap_or(0),
                throttled_secs: 0.0,
            };
            dir.step_started(&lease, step_no, None)?;
            let mut checkpoint =
                |r: &TableReport, last: &Option<Vec<Value>>, finished: bool| -> Result<()> {
                    let out = checkpoint_outputs(r, last, finished);
                    if finished {
                        dir.step_done(&lease, step_no, &out, None)
                    } else {
                        dir.set_step_outputs(&lease, step_no, &out, None)
                    }
                };
            let mut run = Run {
                server: &mut server,
                throttle: &mut throttle,
                inv,
                opts,
                on_chunk,
                controls: controls.clone(),
                lookups: lookups.take(),
            };
            let r = prune_table(&mut run, p, start, last, &mut checkpoint);
            lookups = run.lookups.take();
            let r = r?;
            log(1, &format!("{}: {} rows deleted", r.table, r.deleted));
            reports.push(r);
        }
        Ok(())
    })();
    result.map(|()| reports)
}

/// A connection for pruning, tagged as such in the statement capture.
fn prune_connection(inv: &Inventory, node: &str) -> Result<Server> {
    let mut s = Server::connect_node(inv, node)?;
    s.set_purpose(crate::server::Purpose::Prune);
    // A split's guards let this session delete the rows the shard gave away.
    s.exec(&crate::server::statements::mark_pruning_session())?;
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::directory::journal::{StepRecord, StepState};

    #[test]
    fn the_rows_walked_are_read_from_the_checkpoints_the_steps_journal() {
        let step = |no: u32, outputs: serde_json::Value| StepRecord {
            step_no: no,
            name: format!("prune app_1.t{no}"),
            state: StepState::Running,
            inputs: serde_json::Value::Null,
            outputs,
            millis: None,
        };
        let report = |walked| TableReport {
            walked,
            ..TableReport::default()
        };
        assert_eq!(rows_walked(&[step(0, serde_json::Value::Null)]), None);
        let steps = [
            step(0, checkpoint_outputs(&report(1000), &None, true)),
            step(
                1,
                checkpoint_outputs(&report(250), &Some(vec![Value::Int(7)]), false),
            ),
            step(2, serde_json::Value::Null),
        ];
        assert_eq!(rows_walked(&steps), Some(1250));
    }
}
