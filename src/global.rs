//! Global tables kept identical on every shard (the chapter: "available on all shards").
//! `check` compares each copy with the source of truth the directory records (checksums
//! first, then rows by primary key where a checksum differs); `sync` brings the copies back
//! to the source in chunks, then checks again.

use crate::config::Inventory;
use crate::directory::{shard_schema, Changed, Directory, Snapshot};
use crate::error::{Error, Result};
use crate::ident::Ident;
use crate::server::{reports, row_error, statements, Server, Stmt};
use mysql::Value;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};

/// How many differing keys a report names per shard.
const EXAMPLES: usize = 10;

/// How one shard's copy of a global table compares with the source of truth.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CopyState {
    /// This copy is the source of truth.
    Source,
    /// Row for row the same as the source.
    Same,
    /// The shard's schema has no such table.
    Missing,
    /// Rows missing, extra or changed.
    Differs,
}

impl CopyState {
    /// The word shown in tables and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            CopyState::Source => "source",
            CopyState::Same => "same",
            CopyState::Missing => "missing",
            CopyState::Differs => "differs",
        }
    }

    /// The copy agrees with the source (or is it).
    pub fn agrees(self) -> bool {
        matches!(self, CopyState::Source | CopyState::Same)
    }
}

impl std::fmt::Display for CopyState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One shard's copy of a global table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ShardCopy {
    /// Shard id.
    pub shard: u32,
    /// The node holding the shard.
    pub node: String,
    /// How it compares with the source.
    pub state: CopyState,
    /// Rows in the copy.
    pub rows: u64,
    /// Keys the source has and the copy lacks.
    pub missing_rows: u64,
    /// Keys the copy has and the source lacks.
    pub extra_rows: u64,
    /// Keys whose row differs.
    pub changed_rows: u64,
    /// Up to ten differing keys, as SQL literals.
    pub examples: Vec<String>,
}

/// One global table across its shards.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TableReport {
    /// Logical schema.
    pub schema: String,
    /// The table's name within the logical schema.
    pub table: String,
    /// The shard holding the source of truth.
    pub source_shard: u32,
    /// Whether the directory records it (else the lowest shard id is used).
    pub source_recorded: bool,
    /// Every shard's copy, the source first.
    pub shards: Vec<ShardCopy>,
}

impl TableReport {
    /// True when every copy is the same as the source.
    pub fn identical(&self) -> bool {
        self.shards.iter().all(|s| s.state.agrees())
    }
}

/// The recorded sources of truth: (schema, table) -> shard.
pub fn recorded_sources(dir: &mut Directory) -> Result<HashMap<(String, String), u32>> {
    let d = dir.schema().clone();
    let server = dir.server();
    let node = server.name().to_string();
    server
        .rows(&reports::global_sources(&d))?
        .into_iter()
        .map(|r| {
            let (s, t, shard): (String, String, u32) =
                mysql::from_row_opt(r).map_err(|e| row_error(&node, e))?;
            Ok(((s, t), shard))
        })
        .collect()
}

/// The shards holding schema `schema` (those of functions sharding a table in it), by id.
fn shards_with_schema(snap: &Snapshot, schema: &str) -> Vec<(u32, String)> {
    let mut out: Vec<(u32, String)> = snap
        .shards
        .iter()
        .filter(|s| snap.function_schemas(s.func_id).iter().any(|x| x == schema))
        .map(|s| (s.id, s.node.clone()))
        .collect();
    out.sort();
    out
}

/// The global table named `SCHEMA.TABLE`, as the directory spells it.
fn find_global<'a>(snap: &'a Snapshot, name: &str) -> Result<&'a crate::directory::GlobalTable> {
    let (s, t) = name
        .split_once('.')
        .ok_or_else(|| Error::Usage(format!("table {name:?} must be written SCHEMA.TABLE")))?;
    snap.globals
        .iter()
        .find(|g| g.schema.eq_ignore_ascii_case(s) && g.table.eq_ignore_ascii_case(t))
        .ok_or_else(|| Error::Usage(format!("{name} is not a global table in the directory")))
}

/// Records `shard` as the source of truth of global table `name`.
pub fn set_source(dir: &mut Directory, name: &str, shard: u32) -> Result<()> {
    let snap = dir.load()?;
    let g = find_global(&snap, name)?.clone();
    snap.shard(shard)?;
    if !shards_with_schema(&snap, &g.schema)
        .iter()
        .any(|(id, _)| *id == shard)
    {
        return Err(Error::Usage(format!(
            "shard {shard} does not hold schema {}",
            g.schema
        )));
    }
    let d = dir.schema().clone();
    dir.change(|dir, _| {
        dir.server().exec(&Stmt::with(
            reports::set_global_source(&d).sql,
            vec![
                g.schema.as_str().into(),
                g.table.as_str().into(),
                shard.into(),
            ],
        ))?;
        // A global table's source of truth is shardctl's own: routers do not read it.
        Ok(((), Changed::Nothing))
    })
}

/// Connections by node, opened on first use.
struct Conns<'a> {
    inv: &'a Inventory,
    read_only: bool,
    open: HashMap<String, Server>,
}

impl Conns<'_> {
    fn get(&mut self, node: &str) -> Result<&mut Server> {
        if !self.open.contains_key(node) {
            let mut s = Server::connect_node(self.inv, node)?;
            if self.read_only {
                s.make_read_only()?;
            }
            s.exec(&statements::session_utc())?;
            self.open.insert(node.to_string(), s);
        }
        Ok(self.open.get_mut(node).expect("inserted"))
    }
}

/// A table's shape, read from the source copy.
struct Shape {
    columns: Vec<Ident>,
    /// The same columns as the checksum hashes them.
    hashed: Vec<crate::server::statements::HashedColumn>,
    pk: Vec<Ident>,
    /// Each key column's collation (None for numbers, times, binary strings).
    pk_collations: Vec<Option<String>>,
}

impl Shape {
    /// Which key columns the server compares by a collation (where `abc` may equal `ABC`).
    fn collated(&self) -> Vec<bool> {
        self.pk_collations.iter().map(Option::is_some).collect()
    }
}

/// A table's primary-key columns with their collations, in key order.
fn key_columns(
    server: &mut Server,
    schema: &Ident,
    table: &Ident,
) -> Result<Vec<(Ident, Option<String>)>> {
    let node = server.name().to_string();
    server
        .rows(&reports::key_collations(schema, table))?
        .into_iter()
        .map(|r| {
            let (n, collation): (String, Option<String>) =
                mysql::from_row_opt(r).map_err(|e| row_error(&node, e))?;
            Ok((Ident::new("column", &n)?, collation))
        })
        .collect()
}

type Rows = BTreeMap<String, Vec<Value>>;

/// Every row of a copy, by its primary key's SQL text: keys are told apart by their exact
/// bytes (`abc` and `ABC` are two keys here even where the column's collation makes them
/// equal), as the sync must leave every copy with the source's exact bytes.
fn read_rows(server: &mut Server, schema: &Ident, table: &Ident, shape: &Shape) -> Result<Rows> {
    let mut rows = Rows::new();
    let pk_at: Vec<usize> = shape
        .pk
        .iter()
        .filter_map(|k| shape.columns.iter().position(|c| c == k))
        .collect();
    server.stream(
        &statements::select_table(schema, table, &shape.columns, &shape.pk),
        |row| {
            let values = row.unwrap();
            let key = pk_at
                .iter()
                .map(|i| values[*i].as_sql(false))
                .collect::<Vec<_>>()
                .join(", ");
            rows.insert(key, values);
            Ok(())
        },
    )?;
    Ok(rows)
}

/// What differs between a copy and the source.
#[derive(Default)]
struct Diff {
    upserts: Vec<Vec<Value>>,
    deletes: Vec<Vec<Value>>,
    missing: u64,
    extra: u64,
    changed: u64,
    examples: Vec<String>,
}

fn diff(source: &Rows, copy: &Rows, shape: &Shape) -> Diff {
    let mut d = Diff::default();
    let pk_at: Vec<usize> = shape
        .pk
        .iter()
        .filter_map(|k| shape.columns.iter().position(|c| c == k))
        .collect();
    let note = |d: &mut Diff, key: &str| {
        if d.examples.len() < EXAMPLES {
            d.examples.push(format!("({key})"));
        }
    };
    for (k, row) in source {
        match copy.get(k) {
            None => {
                d.missing += 1;
                note(&mut d, k);
                d.upserts.push(row.clone());
            }
            Some(other) if other != row => {
                d.changed += 1;
                note(&mut d, k);
                d.upserts.push(row.clone());
            }
            Some(_) => {}
        }
    }
    for (k, row) in copy {
        if !source.contains_key(k) {
            d.extra += 1;
            note(&mut d, k);
            d.deletes
                .push(pk_at.iter().map(|i| row[*i].clone()).collect());
        }
    }
    d
}

/// The whole table's row count and digest of row hashes, as verification compares a chunk.
fn checksum(
    server: &mut Server,
    schema: &Ident,
    table: &Ident,
    shape: &Shape,
) -> Result<crate::verify::ChunkSum> {
    crate::verify::chunk_sum(
        server,
        &statements::chunk_checksum(schema, table, &shape.hashed, &shape.pk, None, None, None),
    )
}

/// A table's report, what would bring each differing shard (id, node) back, and its shape
/// (None when no shard holds it).
type Compared = (TableReport, Vec<(u32, String, Diff)>, Option<Shape>);

/// Compares one global table across its shards; returns the report and, per differing
/// shard, what would bring it back to the source.
fn compare(
    conns: &mut Conns<'_>,
    snap: &Snapshot,
    sources: &HashMap<(String, String), u32>,
    g: &crate::directory::GlobalTable,
) -> Result<Compared> {
    let shards = shards_with_schema(snap, &g.schema);
    let recorded = sources.get(&(g.schema.clone(), g.table.clone())).copied();
    let source_id = recorded.or_else(|| shards.first().map(|s| s.0));
    let mut report = TableReport {
        schema: g.schema.clone(),
        table: g.table.clone(),
        source_shard: source_id.unwrap_or(0),
        source_recorded: recorded.is_some(),
        shards: Vec::new(),
    };
    let Some(source_id) = source_id else {
        return Ok((report, Vec::new(), None));
    };
    let table = Ident::new("table", &g.table)?;
    let phys = |id: u32| Ident::new("schema", &shard_schema(&g.schema, id));
    let source_node = snap.shard(source_id)?.node.clone();
    let src_schema = phys(source_id)?;
    let server = conns.get(&source_node)?;
    if server
        .first::<u64>(&reports::base_table_exists(&src_schema, &table))?
        .unwrap_or(0)
        == 0
    {
        return Err(Error::Refused(format!(
            "global table {}.{} is missing on its source, shard {source_id} ({source_node})",
            g.schema, g.table
        )));
    }
    let hashed = crate::verify::read_hashed_columns(server, &src_schema, &table)?;
    let source_keys = key_columns(server, &src_schema, &table)?;
    let shape = Shape {
        columns: hashed.iter().map(|c| c.name.clone()).collect(),
        hashed,
        pk: source_keys.iter().map(|k| k.0.clone()).collect(),
        pk_collations: source_keys.iter().map(|k| k.1.clone()).collect(),
    };
    let src_sum = checksum(server, &src_schema, &table, &shape)?;
    report.shards.push(ShardCopy {
        shard: source_id,
        node: source_node.clone(),
        state: CopyState::Source,
        rows: src_sum.rows,
        missing_rows: 0,
        extra_rows: 0,
        changed_rows: 0,
        examples: Vec::new(),
    });
    let mut source_rows: Option<Rows> = None;
    let mut diffs = Vec::new();
    for (id, node) in shards.iter().filter(|s| s.0 != source_id) {
        let schema = phys(*id)?;
        let server = conns.get(node)?;
        let exists = server
            .first::<u64>(&reports::base_table_exists(&schema, &table))?
            .unwrap_or(0)
            > 0;
        let mut copy = ShardCopy {
            shard: *id,
            node: node.clone(),
            state: CopyState::Same,
            rows: 0,
            missing_rows: 0,
            extra_rows: 0,
            changed_rows: 0,
            examples: Vec::new(),
        };
        if !exists {
            copy.state = CopyState::Missing;
            report.shards.push(copy);
            continue;
        }
        if key_columns(server, &schema, &table)? != source_keys {
            return Err(Error::Refused(format!(
                "global table {}.{} has another primary key (columns or collations) on shard {id} ({node}) than on its source, shard {source_id}: make the definitions the same first",
                g.schema, g.table
            )));
        }
        let sum = checksum(server, &schema, &table, &shape)?;
        copy.rows = sum.rows;
        if sum != src_sum {
            copy.state = CopyState::Differs;
            if !shape.pk.is_empty() {
                let rows = read_rows(server, &schema, &table, &shape)?;
                if source_rows.is_none() {
                    let s = conns.get(&source_node)?;
                    source_rows = Some(read_rows(s, &src_schema, &table, &shape)?);
                }
                let d = diff(source_rows.as_ref().expect("read"), &rows, &shape);
                copy.missing_rows = d.missing;
                copy.extra_rows = d.extra;
                copy.changed_rows = d.changed;
                copy.examples = d.examples.clone();
                diffs.push((*id, node.clone(), d));
            }
        }
        report.shards.push(copy);
    }
    Ok((report, diffs, Some(shape)))
}

/// The global tables to work on: all, or the one named.
fn selected<'a>(
    snap: &'a Snapshot,
    only: Option<&str>,
) -> Result<Vec<&'a crate::directory::GlobalTable>> {
    match only {
        Some(name) => Ok(vec![find_global(snap, name)?]),
        None => Ok(snap.globals.iter().collect()),
    }
}

/// `global check`: every global table (or the one named) on every shard, read-only.
pub fn check(inv: &Inventory, dir: &mut Directory, only: Option<&str>) -> Result<Vec<TableReport>> {
    let snap = dir.load()?;
    let sources = recorded_sources(dir)?;
    let mut conns = Conns {
        inv,
        read_only: true,
        open: HashMap::new(),
    };
    selected(&snap, only)?
        .into_iter()
        .map(|g| compare(&mut conns, &snap, &sources, g).map(|r| r.0))
        .collect()
}

/// What `sync` did (or, in a dry run, would do) to one shard's copy.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SyncedCopy {
    /// Logical schema.
    pub schema: String,
    /// The table's name within the logical schema.
    pub table: String,
    /// The shard whose copy was synced.
    pub shard: u32,
    /// The node holding the shard.
    pub node: String,
    /// Rows inserted or replaced from the source.
    pub upserted_rows: u64,
    /// Rows deleted (keys the source lacks).
    pub deleted_rows: u64,
    /// Transactions sent.
    pub chunks: u64,
    /// The statements, without their values (dry run).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub statements: Vec<String>,
    /// True once the copy's checksum equals the source's again (false in a dry run).
    pub verified: bool,
}

/// `global sync`: brings every differing copy back to the recorded source of truth, in
/// transactions of at most `chunk` rows, with foreign-key checks off for the session (so no
/// cascade fires on the shard's own tables), then compares checksums again. Rows are told
/// apart by their keys' exact bytes; the copy's extra keys are deleted first, each only where
/// its bytes match exactly, then the source's rows upserted: so a key equal to a source key
/// only under the column's collation (case, PAD SPACE trailing spaces) is replaced by the
/// source's bytes and never takes the source's row with it. The checksum afterwards hashes
/// every value's bytes; a copy still differing fails the sync loudly. Refused before
/// any change when a table has no recorded source, no primary key, is missing on a shard,
/// or has another primary key (columns or collations) on a shard than on its source.
pub fn sync(
    inv: &Inventory,
    dir: &mut Directory,
    only: Option<&str>,
    chunk: usize,
    dry_run: bool,
) -> Result<Vec<SyncedCopy>> {
    let snap = dir.load()?;
    let sources = recorded_sources(dir)?;
    let mut reader = Conns {
        inv,
        read_only: true,
        open: HashMap::new(),
    };
    // Everything is checked before the first change.
    let mut plans = Vec::new();
    for g in selected(&snap, only)? {
        if !sources.contains_key(&(g.schema.clone(), g.table.clone())) {
            return Err(Error::Refused(format!(
                "global table {}.{} has no recorded source of truth: shardctl global source {}.{} --shard N",
                g.schema, g.table, g.schema, g.table
            )));
        }
        let (report, diffs, shape) = compare(&mut reader, &snap, &sources, g)?;
        if let Some(m) = report.shards.iter().find(|s| s.state == CopyState::Missing) {
            return Err(Error::Refused(format!(
                "global table {}.{} is missing on shard {} ({}): re-create it there first",
                g.schema, g.table, m.shard, m.node
            )));
        }
        let Some(shape) = shape else { continue };
        if shape.pk.is_empty() && !report.identical() {
            return Err(Error::Refused(format!(
                "global table {}.{} has no primary key: shardctl cannot tell its rows apart",
                g.schema, g.table
            )));
        }
        plans.push((g.clone(), report, diffs, shape));
    }
    let mut writer = Conns {
        inv,
        read_only: false,
        open: HashMap::new(),
    };
    let mut out = Vec::new();
    let chunk = chunk.max(1);
    for (g, report, diffs, shape) in plans {
        let table = Ident::new("table", &g.table)?;
        for (shard, node, d) in diffs {
            let schema = Ident::new("schema", &shard_schema(&g.schema, shard))?;
            let mut done = SyncedCopy {
                schema: g.schema.clone(),
                table: g.table.clone(),
                shard,
                node: node.clone(),
                upserted_rows: d.upserts.len() as u64,
                deleted_rows: d.deletes.len() as u64,
                chunks: 0,
                statements: Vec::new(),
                verified: false,
            };
            // Deletes first, each by its key's exact bytes: a key the source lacks may equal
            // one it has under the column's collation (`ABC` and `abc`, `x ` and `x` under
            // PAD SPACE), and deleting it after the upsert would take the upserted row too.
            let collated = shape.collated();
            let mut batches: Vec<Stmt> = Vec::new();
            for keys in d.deletes.chunks(chunk) {
                let values: Vec<Value> = keys.iter().flatten().cloned().collect();
                batches.push(Stmt::with(
                    reports::delete_keys(&schema, &table, &shape.pk, &collated, keys.len()).sql,
                    values.iter().chain(&values).cloned().collect(),
                ));
            }
            for rows in d.upserts.chunks(chunk) {
                batches.push(Stmt::with(
                    reports::upsert_rows(&schema, &table, &shape.columns, rows.len()).sql,
                    rows.iter().flatten().cloned().collect(),
                ));
            }
            done.chunks = batches.len() as u64;
            if dry_run {
                done.statements = batches.iter().map(|b| b.sql.clone()).collect();
                out.push(done);
                continue;
            }
            let server = writer.get(&node)?;
            server.exec(&statements::foreign_key_checks(false))?;
            for b in &batches {
                server.exec(&reports::start_transaction())?;
                if let Err(e) = server.exec(b) {
                    let _ = server.exec(&Stmt::text("ROLLBACK"));
                    return Err(e);
                }
                server.exec(&statements::commit())?;
            }
            server.exec(&statements::foreign_key_checks(true))?;
            let after = checksum(server, &schema, &table, &shape)?;
            let source = &report.shards[0];
            let src_schema = Ident::new("schema", &shard_schema(&g.schema, source.shard))?;
            let src_node = source.node.clone();
            let src = checksum(reader.get(&src_node)?, &src_schema, &table, &shape)?;
            if after != src {
                return Err(Error::Refused(format!(
                    "global table {}.{} on shard {shard} ({node}) still differs from shard {} after the sync (its rows' bytes were compared): was it written meanwhile? Run global check",
                    g.schema, g.table, source.shard
                )));
            }
            done.verified = true;
            out.push(done);
        }
    }
    Ok(out)
}
