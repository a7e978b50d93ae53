//! Undoing a directory mistake: `table remove`, `function remove`, `shard remove`. Each is
//! refused while it would leave rows the directory no longer routes to.

use crate::config::Inventory;
use crate::directory::{shard_schema, Directory, Snapshot};
use crate::error::{Error, Result};
use crate::ident::Ident;
use crate::server::{statements, Server, Stmt};

/// The first table among `tables` (in `schema` on `server`) that holds a row.
fn first_non_empty(server: &mut Server, schema: &Ident, tables: &[Ident]) -> Result<Option<Ident>> {
    if !server.schema_exists(schema)? {
        return Ok(None);
    }
    let present: Vec<Ident> = server.tables(schema)?.into_iter().map(|t| t.name).collect();
    for t in tables.iter().filter(|t| present.contains(t)) {
        if server
            .first::<i64>(&statements::any_row(schema, t))?
            .is_some()
        {
            return Ok(Some(t.clone()));
        }
    }
    Ok(None)
}

/// Refused while any operation is unfinished: a move's fence hides a shard's tables (they
/// would read as empty), and a split's new shard is offline and named by no operation's
/// shard id until its flip.
fn refuse_while_operations_run(dir: &mut Directory, what: &str) -> Result<()> {
    if let Some(op) = dir.active_operations()?.into_iter().next() {
        return Err(Error::Refused(format!(
            "{what} waits for operation {} ({}, {}) to finish or be aborted",
            op.id, op.kind, op.state
        )));
    }
    Ok(())
}

/// Removes `schema.table`'s mapping. A sharded table is refused while any shard's copy of
/// it holds a row (those rows would no longer be routed); a global table's copies are
/// left in the shards.
pub fn remove_table(inv: &Inventory, schema: &Ident, table: &Ident) -> Result<String> {
    let mut dir = Directory::open(inv)?;
    let snap = dir.load()?;
    let same = |s: &str, t: &str| {
        s.eq_ignore_ascii_case(schema.as_str()) && t.eq_ignore_ascii_case(table.as_str())
    };
    if let Some(t) = snap
        .tables
        .iter()
        .find(|t| same(&t.schema, &t.table))
        .cloned()
    {
        refuse_while_operations_run(&mut dir, &format!("table remove {schema}.{table}"))?;
        let name = Ident::new("table", &t.table)?;
        for shard in snap.shards_of(t.func_id) {
            let physical = Ident::new("schema", &shard_schema(&t.schema, shard.id))?;
            let mut server = Server::connect_node(inv, &shard.node)?;
            if first_non_empty(&mut server, &physical, std::slice::from_ref(&name))?.is_some() {
                return Err(Error::Refused(format!(
                    "{physical}.{name} on {} holds rows: removing the mapping would leave them unrouted (empty it, or leave the table mapped)",
                    shard.node
                )));
            }
        }
        dir.remove_table(&t.schema, &t.table)?;
        return Ok(format!(
            "table {}.{} unmapped (was sharded)",
            t.schema, t.table
        ));
    }
    if let Some(g) = snap
        .globals
        .iter()
        .find(|g| same(&g.schema, &g.table))
        .cloned()
    {
        dir.remove_table(&g.schema, &g.table)?;
        return Ok(format!(
            "table {}.{} unmapped (was global; the shards keep their copies)",
            g.schema, g.table
        ));
    }
    Err(Error::Usage(format!(
        "table {schema}.{table} is not mapped in the directory"
    )))
}

/// Removes a function that has no shard and no mapped table.
pub fn remove_function(inv: &Inventory, name: &str) -> Result<String> {
    let mut dir = Directory::open(inv)?;
    let snap = dir.load()?;
    let func = snap.function(name)?.clone();
    let shards: Vec<String> = snap.shards_of(func.id).map(|s| s.id.to_string()).collect();
    if !shards.is_empty() {
        return Err(Error::Refused(format!(
            "function {} still has shards {}: remove them first",
            func.name,
            shards.join(", ")
        )));
    }
    let tables: Vec<String> = snap
        .tables
        .iter()
        .filter(|t| t.func_id == func.id)
        .map(|t| format!("{}.{}", t.schema, t.table))
        .collect();
    if !tables.is_empty() {
        return Err(Error::Refused(format!(
            "function {} still maps {}: `shardctl table remove` them first",
            func.name,
            tables.join(", ")
        )));
    }
    dir.remove_function(func.id)?;
    Ok(format!("function {} removed", func.name))
}

/// Removes a shard whose sharded tables hold no row (or that never came online) from the
/// directory, then drops its schemas on its node. Its keys fall to the shards next to it.
pub fn remove_shard(inv: &Inventory, shard_id: u32) -> Result<String> {
    let mut dir = Directory::open(inv)?;
    let snap: Snapshot = dir.load()?;
    let shard = snap
        .shards
        .iter()
        .find(|s| s.id == shard_id)
        .cloned()
        .ok_or_else(|| Error::Usage(format!("shard {shard_id} is not in the directory")))?;
    refuse_while_operations_run(&mut dir, &format!("shard remove {shard_id}"))?;
    let mut server = Server::connect_node(inv, &shard.node)?;
    let mut schemas = Vec::new();
    let mut hidden: Vec<statements::HiddenTable> = Vec::new();
    // Tables an interrupted `shard remove` left hidden: their own names are lost, so any
    // row in them refuses the removal.
    let mut leftover: Vec<(Ident, Ident)> = Vec::new();
    let run = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    for l in snap.function_schemas(shard.func_id) {
        let physical = Ident::new("schema", &shard_schema(&l, shard.id))?;
        if !server.schema_exists(&physical)? {
            continue;
        }
        for t in server.tables(&physical)?.into_iter().filter(|t| !t.is_view) {
            if statements::is_removed_table_name(t.name.as_str()) {
                leftover.push((physical.clone(), t.name));
                continue;
            }
            let n = hidden.len();
            hidden.push(statements::HiddenTable {
                schema: physical.clone(),
                table: t.name,
                hidden: statements::removed_table_name(shard.id, run, n),
            });
        }
        schemas.push(physical);
    }
    // The shard fence first: from here on a write to the shard fails (clients re-read the
    // directory and retry) instead of landing in a table about to be dropped. The rows are
    // counted under it; then the mapping goes, then the schemas.
    let bounded = |st: Stmt| {
        vec![
            statements::lock_wait_timeout(statements::FENCE_LOCK_WAIT_SECS),
            st,
        ]
    };
    if let Some(st) = statements::rename_to_hidden(&hidden) {
        server.exec_unlogged(&bounded(st))?;
    }
    let sharded = |h: &statements::HiddenTable| {
        snap.tables.iter().any(|t| {
            t.func_id == shard.func_id
                && shard_schema(&t.schema, shard.id) == h.schema.as_str()
                && t.table == h.table.as_str()
        })
    };
    let mut holding = None;
    for h in hidden.iter().filter(|h| sharded(h)) {
        if server
            .first::<i64>(&statements::any_row(&h.schema, &h.hidden))?
            .is_some()
        {
            holding = Some(format!("{}.{}", h.schema, h.table));
            break;
        }
    }
    for (schema, table) in &leftover {
        if holding.is_some() {
            break;
        }
        if server
            .first::<i64>(&statements::any_row(schema, table))?
            .is_some()
        {
            holding = Some(format!(
                "{schema}.{table}, left hidden by an interrupted shard remove: rename it back"
            ));
        }
    }
    if let Some(t) = holding {
        if let Some(st) = statements::rename_from_hidden(&hidden) {
            server.exec_unlogged(&bounded(st))?;
        }
        return Err(Error::Refused(format!(
            "shard {shard_id} holds rows ({t} on {}): move its rows first (split or merge), or keep it",
            shard.node
        )));
    }
    // Directory next: once no route leads to the schemas, dropping them loses nothing.
    dir.delete_shard(shard_id)?;
    for s in &schemas {
        server.exec(&statements::drop_schema_if_exists(s))?;
    }
    Ok(format!(
        "shard {shard_id} removed{}",
        if schemas.is_empty() {
            String::new()
        } else {
            format!(
                "; dropped {} on {}",
                schemas
                    .iter()
                    .map(|s| s.to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
                shard.node
            )
        }
    ))
}
