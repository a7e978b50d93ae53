//! `shard add`: a new shard in a function's mapping, with its schemas created on a node
//! from a template (an existing shard of the function, or the logical schema on a template
//! node) and its global tables filled.

use crate::config::Inventory;
use crate::directory::{
    shard_schema, DirNode, Directory, Function, Key, NewMapping, RingPoint, ShardState,
    ShardingType, Snapshot,
};
use crate::error::{Error, Result};
use crate::ident::Ident;
use crate::server::catalog::TableInfo;
use crate::server::{Server, Stmt};
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
}

/// What to add.
#[derive(Debug, Clone)]
pub struct AddShard {
    /// Function name.
    pub function: String,
    /// Node name.
    pub node: String,
    /// Mapping.
    pub placement: Placement,
    /// Node holding the logical schemas used as template when the function has no shard yet.
    pub template_node: Option<String>,
}

/// What was added.
#[derive(Debug, Clone, Serialize)]
pub struct Added {
    /// New shard id.
    pub shard_id: u32,
    /// Node.
    pub node: String,
    /// Schemas created.
    pub schemas: Vec<String>,
    /// Tables created.
    pub tables: usize,
    /// Rows copied into global tables.
    pub global_rows: usize,
}

/// The DDL of one logical schema, read from the template.
struct SchemaTemplate {
    source_schema: Ident,
    tables: Vec<(TableInfo, String)>,
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
            for v in values {
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
    }
}

/// Rewrites a view definition read from `from` so it refers to the view's own schema, and
/// drops its DEFINER (the view is created by the shardctl account).
fn retarget_view(ddl: &str, from: &Ident) -> String {
    let without_schema = ddl.replace(&format!("{}.", from.quoted()), "");
    match (
        without_schema.find(" DEFINER="),
        without_schema.find(" SQL SECURITY"),
    ) {
        (Some(a), Some(b)) if a < b => format!("{}{}", &without_schema[..a], &without_schema[b..]),
        _ => without_schema,
    }
}

fn read_template(
    server: &mut Server,
    logical: &str,
    source_schema: Ident,
    snap: &Snapshot,
) -> Result<SchemaTemplate> {
    if !server.schema_exists(&source_schema)? {
        return Err(Error::Usage(format!(
            "template schema {source_schema} not found on node {}: create it there, or pass --template-node",
            server.name()
        )));
    }
    let mut tables = Vec::new();
    let mut global_rows = Vec::new();
    let mut infos = server.tables(&source_schema)?;
    infos.sort_by_key(|t| t.is_view);
    for info in infos {
        let ddl = server.show_create(&source_schema, &info)?;
        let ddl = if info.is_view {
            retarget_view(&ddl, &source_schema)
        } else {
            ddl
        };
        if !info.is_view && snap.sharded_table(logical, info.name.as_str()).is_none() {
            let (cols, rows) = server.read_all(&source_schema, &info.name)?;
            global_rows.push((info.name.clone(), cols, rows));
        }
        tables.push((info, ddl));
    }
    if tables.is_empty() {
        return Err(Error::Usage(format!(
            "template schema {source_schema} on node {} has no tables",
            server.name()
        )));
    }
    Ok(SchemaTemplate {
        source_schema,
        tables,
        global_rows,
    })
}

fn create_from_template(server: &mut Server, target: &Ident, t: &SchemaTemplate) -> Result<usize> {
    server.create_schema(target)?;
    server.exec(&Stmt::text(format!("USE {}", target.quoted())))?;
    server.exec(&Stmt::text("SET SESSION foreign_key_checks = 0"))?;
    let result = (|| {
        for (_, ddl) in t.tables.iter().filter(|(i, _)| !i.is_view) {
            server.exec(&Stmt::text(ddl.clone()))?;
        }
        // Views may use other views: create what can be created, and retry the rest
        // until a pass makes no progress.
        let mut pending: Vec<&String> = t
            .tables
            .iter()
            .filter(|(i, _)| i.is_view)
            .map(|(_, d)| d)
            .collect();
        while !pending.is_empty() {
            let mut failed = Vec::new();
            let mut last_error = None;
            for ddl in &pending {
                if let Err(e) = server.exec(&Stmt::text((*ddl).clone())) {
                    last_error = Some(e);
                    failed.push(*ddl);
                }
            }
            if failed.len() == pending.len() {
                return Err(last_error.expect("a failure was recorded"));
            }
            pending = failed;
        }
        let mut rows = 0;
        for (table, cols, data) in &t.global_rows {
            server.insert_rows(target, table, cols, data)?;
            rows += data.len();
        }
        Ok(rows)
    })();
    server.exec(&Stmt::text("SET SESSION foreign_key_checks = 1"))?;
    result
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
        .find(|n| n.name == req.node)
        .cloned()
        .ok_or_else(|| {
            Error::Usage(format!(
                "node {:?} is not in the directory: add it with `shardctl node add {}`",
                req.node, req.node
            ))
        })?;
    inv.node(&req.node)?;
    let mapping = resolve_mapping(&snap, &func, &req.placement)?;
    let logical = snap.function_schemas(func.id);
    if logical.is_empty() {
        return Err(Error::Usage(format!(
            "function {} has no sharded tables yet: map them with `shardctl table add SCHEMA.TABLE --function {} --column COL`",
            func.name, func.name
        )));
    }

    // Read every template before changing anything.
    let model_shard = snap
        .shards_of(func.id)
        .find(|s| s.state != ShardState::Offline)
        .cloned();
    let template_node = match (&model_shard, &req.template_node) {
        (Some(s), None) => s.node.clone(),
        (_, Some(n)) => n.clone(),
        (None, None) => inv.file.directory.node.clone(),
    };
    let mut source = Server::connect_node(inv, &template_node)?;
    let mut templates = Vec::new();
    for l in &logical {
        let source_schema = match (&model_shard, &req.template_node) {
            (Some(s), None) => Ident::new("schema", &shard_schema(l, s.id))?,
            _ => Ident::new("schema", l)?,
        };
        templates.push(read_template(&mut source, l, source_schema, &snap)?);
    }
    drop(source);

    let mut target = Server::connect_node(inv, &req.node)?;
    let shard_id = dir.insert_shard(&func, &node, &mapping)?;
    let targets: Vec<Ident> = logical
        .iter()
        .map(|l| Ident::new("schema", &shard_schema(l, shard_id)))
        .collect::<Result<_>>()?;
    let mut created = Vec::new();
    let outcome = (|| {
        for t in &targets {
            if target.schema_exists(t)? {
                return Err(Error::Refused(format!(
                    "schema {t} already exists on node {}; it is not shardctl's to overwrite",
                    req.node
                )));
            }
        }
        let mut global_rows = 0;
        let mut tables = 0;
        for (t, tmpl) in targets.iter().zip(&templates) {
            created.push(t.clone());
            global_rows += create_from_template(&mut target, t, tmpl)?;
            tables += tmpl.tables.len();
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
            Ok(Added {
                shard_id,
                node: req.node.clone(),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn views_are_retargeted_and_lose_their_definer() {
        let from = Ident::new("schema", "employees").unwrap();
        let ddl = "CREATE ALGORITHM=UNDEFINED DEFINER=`root`@`localhost` SQL SECURITY DEFINER VIEW `v` AS select `employees`.`t`.`a` AS `a` from `employees`.`t`";
        assert_eq!(
            retarget_view(ddl, &from),
            "CREATE ALGORITHM=UNDEFINED SQL SECURITY DEFINER VIEW `v` AS select `t`.`a` AS `a` from `t`"
        );
    }
}
