//! `shard add`: a new shard in a function's mapping, with its schemas created on a node
//! from a template (an existing shard of the function, or the logical schema on a template
//! node) and its global tables filled.

use crate::config::Inventory;
use crate::copy::objects::{self, SchemaObjects};
use crate::copy::SchemaPair;
use crate::directory::{
    coverage, shard_schema, Coverage, DirNode, Directory, Function, Key, NewMapping, RingPoint,
    ShardState, ShardingType, Snapshot,
};
use crate::error::{Error, Result};
use crate::ident::Ident;
use crate::server::{statements, Server};
use serde::Serialize;

/// How the caller places the new shard in the mapping.
#[derive(Debug, Clone, PartialEq)]
pub enum Placement {
    /// Range: lower bound as text.
    LowerBound(String),
    /// Hash: `auto` or 32 hex digits.
    Point(String),
    /// List: values as text.
    Values(Vec<String>),
    /// Per-key: no mapping row; keys are assigned to it later (`keys assign`, `keys import`).
    Keys,
}

/// What to add.
#[derive(Debug, Clone)]
pub struct AddShard {
    /// Function name.
    pub function: String,
    /// Node name.
    pub node: String,
    /// The keys the new shard owns (a range's lower bound, hash points or list values).
    pub placement: Placement,
    /// Node holding the logical schemas used as template when the function has no shard yet.
    pub template_node: Option<String>,
}

/// What was added.
#[derive(Debug, Clone, Serialize)]
pub struct Added {
    /// New shard id.
    pub shard_id: u32,
    /// The node the new shard lives on.
    pub node: String,
    /// Schemas created.
    pub schemas: Vec<String>,
    /// Tables created.
    pub tables: usize,
    /// Rows copied into global tables.
    pub global_rows: usize,
}

/// The definitions of one logical schema, read from the template, with the rows of its
/// global tables.
struct SchemaTemplate {
    source_schema: Ident,
    objects: SchemaObjects,
    /// Global tables and their rows.
    global_rows: Vec<(Ident, Vec<String>, Vec<Vec<mysql::Value>>)>,
}

/// Turns the caller's placement into a checked mapping for `func`.
pub fn resolve_mapping(
    snap: &Snapshot,
    func: &Function,
    placement: &Placement,
) -> Result<NewMapping> {
    let wrong = |what: &str| {
        Error::Usage(format!(
            "function {} is {}: use {what}",
            func.name,
            func.sharding_type.as_sql()
        ))
    };
    match (func.sharding_type, placement) {
        (ShardingType::Range, Placement::LowerBound(text)) => {
            let key = func.key_type.parse(text)?;
            if snap
                .ranges
                .iter()
                .any(|r| r.func_id == func.id && r.lower_bound == key)
            {
                return Err(Error::Usage(format!(
                    "function {} already has a range starting at {key}",
                    func.name
                )));
            }
            Ok(NewMapping::LowerBound(key))
        }
        (ShardingType::Hash, Placement::Point(text)) => {
            let taken = |p: &RingPoint| {
                snap.points
                    .iter()
                    .any(|h| h.func_id == func.id && h.point == *p)
            };
            let point = if text == "auto" {
                let mut n = snap.points.iter().filter(|h| h.func_id == func.id).count() + 1;
                loop {
                    let p = RingPoint::md5(&format!("{}-{n}", func.name));
                    if !taken(&p) {
                        break p;
                    }
                    n += 1;
                }
            } else {
                RingPoint::from_hex(text)?
            };
            if taken(&point) {
                return Err(Error::Usage(format!(
                    "function {} already has ring point {point}",
                    func.name
                )));
            }
            Ok(NewMapping::Point(point))
        }
        (ShardingType::List, Placement::Values(values)) => {
            if values.is_empty() {
                return Err(Error::Usage("--values needs at least one value".into()));
            }
            let mut keys: Vec<Key> = Vec::new();
            for (i, v) in values.iter().enumerate() {
                let v = v.trim();
                if v.is_empty() {
                    return Err(Error::Usage(format!(
                        "--values: value {} of {} is empty",
                        i + 1,
                        values.len()
                    )));
                }
                let k = func.key_type.parse(v)?;
                if keys.contains(&k) {
                    return Err(Error::Usage(format!("value {k} is given twice")));
                }
                if let Some(l) = snap
                    .lists
                    .iter()
                    .find(|l| l.func_id == func.id && l.value == k)
                {
                    return Err(Error::Usage(format!(
                        "value {k} is already mapped to shard {} by function {}",
                        l.shard_id, func.name
                    )));
                }
                keys.push(k);
            }
            Ok(NewMapping::Values(keys))
        }
        (ShardingType::Range, _) => Err(wrong("--lower-bound")),
        (ShardingType::Hash, _) => Err(wrong("--point auto|HEX")),
        (ShardingType::List, _) => Err(wrong("--values")),
        (ShardingType::Key, Placement::Keys) => Ok(NewMapping::Keys),
        (ShardingType::Key, _) => Err(Error::Usage(format!(
            "function {} maps keys one by one: add its shard without --lower-bound, --point or --values",
            func.name
        ))),
    }
}

/// `snap` with `mapping` given to a shard `id` of `func` (not otherwise in the snapshot).
fn with_new_mapping(
    mut snap: Snapshot,
    func: &Function,
    mapping: &NewMapping,
    id: u32,
) -> Snapshot {
    use crate::directory::{HashRow, ListRow, RangeRow};
    match mapping {
        NewMapping::LowerBound(key) => snap.ranges.push(RangeRow {
            func_id: func.id,
            lower_bound: key.clone(),
            shard_id: id,
        }),
        NewMapping::Point(point) => snap.points.push(HashRow {
            func_id: func.id,
            point: *point,
            shard_id: id,
        }),
        NewMapping::Values(values) => snap.lists.extend(values.iter().map(|v| ListRow {
            func_id: func.id,
            value: v.clone(),
            shard_id: id,
        })),
        NewMapping::Keys => {}
    }
    snap
}

/// Refuses a mapping that takes keys from a shard holding rows with them: those rows
/// would stay where they are while lookups send their keys to the new, empty shard (and a
/// prune of the old shard would delete them). Moving keys with their rows is a split.
/// Reads one row at most per sharded table of each shard that gives keys away.
fn refuse_taking_rows(
    inv: &Inventory,
    snap: &Snapshot,
    func: &Function,
    mapping: &NewMapping,
) -> Result<()> {
    let after = with_new_mapping(snap.clone(), func, mapping, u32::MAX);
    let columns: Vec<(Ident, Ident, Ident)> = snap
        .tables
        .iter()
        .filter(|t| t.func_id == func.id)
        .map(|t| {
            Ok((
                Ident::new("schema", &t.schema)?,
                Ident::new("table", &t.table)?,
                Ident::new("column", &t.column)?,
            ))
        })
        .collect::<Result<_>>()?;
    for shard in snap.shards_of(func.id) {
        if matches!(coverage(snap, func, shard.id), Coverage::None) {
            continue;
        }
        let mut server: Option<Server> = None;
        for (schema, table, column) in &columns {
            let before = crate::prune::predicate::not_owned(snap, shard, column)?;
            let now = crate::prune::predicate::not_owned(&after, shard, column)?;
            if before == now {
                continue;
            }
            let physical = Ident::new("schema", &shard_schema(schema.as_str(), shard.id))?;
            let server = match &mut server {
                Some(s) => s,
                None => server.insert(Server::connect_node(inv, &shard.node)?),
            };
            if !server.schema_exists(&physical)? {
                continue;
            }
            let cond = statements::newly_not_owned(&before, &now);
            let found = server.first::<mysql::Value>(&statements::first_key_where(
                &physical, table, column, &cond,
            ))?;
            if let Some(key) = found {
                return Err(Error::Refused(format!(
                    "shard {} holds rows the new shard would take ({physical}.{table} has {column} = {}): adding it would strand them; split the shard instead (`shardctl split --shard {}`)",
                    shard.id,
                    key_text(&key),
                    shard.id
                )));
            }
        }
    }
    Ok(())
}

/// A key read back from a server, as an operator would type it.
pub(crate) fn key_text(v: &mysql::Value) -> String {
    match v {
        mysql::Value::Int(i) => i.to_string(),
        mysql::Value::UInt(u) => u.to_string(),
        mysql::Value::Bytes(b) => format!("{:?}", String::from_utf8_lossy(b)),
        other => other.as_sql(false),
    }
}

fn read_template(
    server: &mut Server,
    logical: &str,
    source_schema: Ident,
    target_schema: &Ident,
    snap: &Snapshot,
) -> Result<SchemaTemplate> {
    if !server.schema_exists(&source_schema)? {
        return Err(Error::Usage(format!(
            "template schema {source_schema} not found on node {}: create it there, or pass --template-node",
            server.name()
        )));
    }
    let pair = SchemaPair {
        from: source_schema.clone(),
        to: target_schema.clone(),
    };
    let mut objects = objects::read(server, &pair)?;
    // A template shard's split guards name its own key range: a new shard must not
    // refuse the keys it is given.
    objects.after_data.retain(|o| {
        !o.label
            .strip_prefix("trigger ")
            .is_some_and(crate::server::statements::is_guard_trigger)
    });
    if objects.tables.is_empty() {
        return Err(Error::Usage(format!(
            "template schema {source_schema} on node {} has no tables",
            server.name()
        )));
    }
    let mut global_rows = Vec::new();
    for (table, _) in &objects.tables {
        if snap.sharded_table(logical, table.as_str()).is_none() {
            let (cols, rows) = server.read_all(&source_schema, table)?;
            global_rows.push((table.clone(), cols, rows));
        }
    }
    Ok(SchemaTemplate {
        source_schema,
        objects,
        global_rows,
    })
}

fn create_from_template(server: &mut Server, target: &Ident, t: &SchemaTemplate) -> Result<usize> {
    let pair = SchemaPair {
        from: t.source_schema.clone(),
        to: target.clone(),
    };
    objects::create_tables(server, &pair, &t.objects)?;
    server.exec(&statements::foreign_key_checks(false))?;
    let mut rows = 0;
    let filled = t.global_rows.iter().try_for_each(|(table, cols, data)| {
        rows += data.len();
        server.insert_rows(target, table, cols, data)
    });
    server.exec(&statements::foreign_key_checks(true))?;
    filled?;
    objects::create_after_data(server, &pair, &t.objects)?;
    Ok(rows)
}

/// Adds a shard: checks everything, records it offline, creates its schemas, fills its
/// global tables, then brings it online. On failure the shard and its schemas are removed.
pub fn add_shard(inv: &Inventory, req: &AddShard) -> Result<Added> {
    let mut dir = Directory::open(inv)?;
    let snap = dir.load()?;
    let func = snap.function(&req.function)?.clone();
    let node: DirNode = snap
        .nodes
        .iter()
        .find(|n| n.name.eq_ignore_ascii_case(&req.node))
        .cloned()
        .ok_or_else(|| {
            Error::Usage(format!(
                "node {:?} is not in the directory: add it with `shardctl node add {}`",
                req.node, req.node
            ))
        })?;
    inv.node(&node.name)?;
    let mapping = resolve_mapping(&snap, &func, &req.placement)?;
    refuse_taking_rows(inv, &snap, &func, &mapping)?;
    let logical = snap.function_schemas(func.id);
    if logical.is_empty() {
        return Err(Error::Usage(format!(
            "function {} has no sharded tables yet: map them with `shardctl table add SCHEMA.TABLE --function {} --column COL`",
            func.name, func.name
        )));
    }

    // The shard's id is only known once it is inserted; ids grow, so the next one has at
    // least as many digits as the largest so far plus one.
    let next_id = snap.shards.iter().map(|s| s.id).max().unwrap_or(0) + 1;
    for l in &logical {
        let name = shard_schema(l, next_id);
        if name.len() > crate::ident::MAX_IDENT_LEN {
            return Err(Error::Usage(format!(
                "the shard's schema name {name} would be longer than {} characters: schema {l} is too long to shard",
                crate::ident::MAX_IDENT_LEN
            )));
        }
    }

    // Check every template before changing anything.
    let model_shard = snap
        .shards_of(func.id)
        .find(|s| s.state != ShardState::Offline)
        .cloned();
    let template_node = match (&model_shard, &req.template_node) {
        (Some(s), None) => s.node.clone(),
        (_, Some(n)) => n.clone(),
        (None, None) => dir.member().to_string(),
    };
    let mut source = Server::connect_node(inv, &template_node)?;
    let mut templates = Vec::new();
    for l in &logical {
        let source_schema = match (&model_shard, &req.template_node) {
            (Some(s), None) => Ident::new("schema", &shard_schema(l, s.id))?,
            _ => Ident::new("schema", l)?,
        };
        // The final name is only known once the shard has an id; definitions are
        // retargeted to a placeholder schema and renamed below.
        if !source.schema_exists(&source_schema)? {
            return Err(Error::Usage(format!(
                "template schema {source_schema} not found on node {template_node}: create it there, or pass --template-node"
            )));
        }
        templates.push((l.clone(), source_schema));
    }
    let mut target = Server::connect_node(inv, &node.name)?;
    let shard_id = dir.insert_shard(&func, &node, &mapping)?;
    let targets: Vec<Ident> = match logical
        .iter()
        .map(|l| Ident::new("schema", &shard_schema(l, shard_id)))
        .collect::<Result<_>>()
    {
        Ok(t) => t,
        Err(e) => {
            let _ = dir.delete_offline_shard(shard_id);
            return Err(e);
        }
    };
    let read: Result<Vec<SchemaTemplate>> = templates
        .iter()
        .zip(&targets)
        .map(|((l, src), tgt)| read_template(&mut source, l, src.clone(), tgt, &snap))
        .collect();
    drop(source);
    let templates = match read {
        Ok(t) => t,
        Err(e) => {
            let _ = dir.delete_offline_shard(shard_id);
            return Err(e);
        }
    };
    let mut created = Vec::new();
    let outcome = (|| {
        for t in &targets {
            if target.schema_exists(t)? {
                return Err(Error::Refused(format!(
                    "schema {t} already exists on node {}; it is not shardctl's to overwrite",
                    node.name
                )));
            }
        }
        let mut global_rows = 0;
        let mut tables = 0;
        for (t, tmpl) in targets.iter().zip(&templates) {
            created.push(t.clone());
            global_rows += create_from_template(&mut target, t, tmpl)?;
            tables += tmpl.objects.tables.len();
            crate::output::log(
                1,
                &format!(
                    "shard {shard_id}: {} created from {}",
                    t, tmpl.source_schema
                ),
            );
        }
        Ok((tables, global_rows))
    })();
    match outcome {
        Ok((tables, global_rows)) => {
            dir.set_shard_state(shard_id, ShardState::Online)?;
            // The events were created disabled; those enabled in the template come alive
            // now that the shard is online.
            for tmpl in &templates {
                let stmts = objects::enable_events_statements(&tmpl.objects.enabled_events);
                for st in &stmts {
                    target.exec(st)?;
                }
            }
            Ok(Added {
                shard_id,
                node: node.name.clone(),
                schemas: targets.iter().map(|t| t.to_string()).collect(),
                tables,
                global_rows,
            })
        }
        Err(e) => {
            for t in &created {
                let _ = target.drop_schema(t);
            }
            let _ = dir.delete_offline_shard(shard_id);
            Err(e)
        }
    }
}
