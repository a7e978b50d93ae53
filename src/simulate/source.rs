//! Where `simulate` gets its keys: a file, or a column of a live table (every shard's copy
//! of a sharded table, else the table on one node). The I/O side of [`super`].

use super::KeySet;
use crate::config::Inventory;
use crate::directory::{shard_schema, Snapshot};
use crate::error::{Error, Result};
use crate::ident::Ident;
use crate::server::{reports, Server};
use mysql::Value;

/// Reads a keys file (see [`KeySet::parse`]).
pub fn keys_file(path: &std::path::Path) -> Result<KeySet> {
    let text = std::fs::read(path)
        .map_err(|e| Error::Config(format!("{}: cannot read: {e}", path.display())))?;
    let text = String::from_utf8(text).map_err(|e| {
        let upto = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line = upto.iter().filter(|b| **b == b'\n').count() + 1;
        Error::Config(format!(
            "{}: 1 bad line: line {line}: not UTF-8 text",
            path.display()
        ))
    })?;
    KeySet::parse(&path.display().to_string(), &text)
}

/// The text of a key value as the server sent it.
fn value_text(v: &Value) -> Option<String> {
    match v {
        Value::NULL => None,
        Value::Int(i) => Some(i.to_string()),
        Value::UInt(u) => Some(u.to_string()),
        Value::Bytes(b) => Some(String::from_utf8_lossy(b).into_owned()),
        other => Some(other.as_sql(true).trim_matches('\'').to_string()),
    }
}

/// Reads every value of `schema.table.column`. A table the directory shards is read from
/// every shard (each shard's node, its physical schema); any other table from `node`
/// (default: the directory node). NULLs are skipped. Each key's size is the table's
/// average row length on the server it came from.
pub fn live_column(
    inv: &Inventory,
    snap: &Snapshot,
    schema: &Ident,
    table: &Ident,
    column: &Ident,
    node: Option<&str>,
) -> Result<KeySet> {
    let mut places: Vec<(String, Ident)> = Vec::new();
    match snap.sharded_table(schema.as_str(), table.as_str()) {
        Some(t) => {
            for s in snap.shards_of(t.func_id) {
                places.push((
                    s.node.clone(),
                    Ident::new("schema", &shard_schema(schema.as_str(), s.id))?,
                ));
            }
        }
        None => places.push((
            node.unwrap_or(inv.directory_home()).to_string(),
            schema.clone(),
        )),
    }
    let mut keys = KeySet {
        origin: format!("column {schema}.{table}.{column}"),
        numbered_lines: false,
        texts: Vec::new(),
        bytes: Some(Vec::new()),
    };
    for (node, phys) in places {
        let mut server = Server::connect_node(inv, &node)?;
        let size = server
            .first::<u64>(&reports::average_row_length(&phys, table))?
            .unwrap_or(0);
        let before = keys.texts.len();
        server.stream(&reports::select_column(&phys, table, column), |row| {
            if let Some(t) = row.as_ref(0).and_then(value_text) {
                keys.texts.push(t);
            }
            Ok(())
        })?;
        if let Some(b) = keys.bytes.as_mut() {
            b.resize(b.len() + keys.texts.len() - before, size);
        }
    }
    if keys.is_empty() {
        return Err(Error::Usage(format!("{}: no keys", keys.origin)));
    }
    Ok(keys)
}
