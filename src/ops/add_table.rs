//! `table add`: a table mapped in the directory only once the servers show it can be —
//! the schema and table exist where shards are made from, the sharding column exists,
//! holds the function's kind of key and is NOT NULL.

use crate::config::Inventory;
use crate::directory::{shard_schema, Directory, KeyType, ShardState, Snapshot, TablePlacement};
use crate::error::{Error, Result};
use crate::ident::Ident;
use crate::server::{statements, Server};

/// Where the table is looked for: a shard already holding the schema (its node and
/// physical schema), else the logical schema on the template node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableHome {
    /// Node.
    pub node: String,
    /// Schema on that node.
    pub schema: String,
    /// What it is, for messages: `shard 3` or `the template`.
    pub what: String,
}

/// The column types that hold each kind of key (`information_schema.columns.data_type`).
fn holds(key: KeyType, data_type: &str) -> bool {
    let t = data_type.to_ascii_lowercase();
    match key {
        KeyType::Int => matches!(
            t.as_str(),
            "tinyint" | "smallint" | "mediumint" | "int" | "integer" | "bigint"
        ),
        KeyType::String => matches!(t.as_str(), "char" | "varchar" | "binary" | "varbinary"),
    }
}

/// Where a table of logical schema `schema` lives now: the first shard (not offline) of
/// any function that maps a table of the schema — of `func_id` first — else the template.
pub fn table_home(
    snap: &Snapshot,
    schema: &str,
    func_id: Option<u32>,
    template_node: &str,
) -> TableHome {
    let functions: Vec<u32> = func_id
        .into_iter()
        .chain(
            snap.tables
                .iter()
                .filter(|t| t.schema.eq_ignore_ascii_case(schema))
                .map(|t| t.func_id),
        )
        .collect();
    for f in functions {
        if let Some(s) = snap.shards_of(f).find(|s| s.state != ShardState::Offline) {
            return TableHome {
                node: s.node.clone(),
                schema: shard_schema(schema, s.id),
                what: format!("shard {}", s.id),
            };
        }
    }
    TableHome {
        node: template_node.to_string(),
        schema: schema.to_string(),
        what: "the template".into(),
    }
}

/// Checks `schema.table` (and its sharding column) on the server where shards are made
/// from, then maps it. Nothing is written when a check fails.
pub fn add_table(
    inv: &Inventory,
    schema: &Ident,
    table: &Ident,
    placement: &TablePlacement,
    template_node: Option<&str>,
) -> Result<()> {
    let mut dir = Directory::open(inv)?;
    let snap = dir.load()?;
    if let Some(kind) = snap.mapped_as(schema.as_str(), table.as_str()) {
        return Err(Error::Usage(format!(
            "table {schema}.{table} is already mapped ({kind})"
        )));
    }
    let function = match placement {
        TablePlacement::Sharded { function, .. } => Some(snap.function(function)?.clone()),
        TablePlacement::Global => None,
    };
    // The directory's node, or the member of its cluster the directory is read from.
    let member = dir.member().to_string();
    let template = template_node.unwrap_or(&member);
    inv.node(template)?;
    let home = table_home(
        &snap,
        schema.as_str(),
        function.as_ref().map(|f| f.id),
        template,
    );
    let mut server = Server::connect_node(inv, &home.node)?;
    let physical = Ident::new("schema", &home.schema)?;
    let place = format!("node {} ({})", home.node, home.what);
    if !server.schema_exists(&physical)? {
        return Err(Error::Usage(format!(
            "schema {physical} not found on {place}: create the table there first, or pass --template-node"
        )));
    }
    let found = server
        .tables(&physical)?
        .into_iter()
        .find(|t| t.name == *table);
    match found {
        None => {
            return Err(Error::Usage(format!(
                "table {physical}.{table} not found on {place}"
            )))
        }
        Some(t) if t.is_view => {
            return Err(Error::Usage(format!(
                "{physical}.{table} on {place} is a view: only base tables are mapped"
            )))
        }
        Some(_) => {}
    }
    if let (Some(func), TablePlacement::Sharded { column, .. }) = (&function, placement) {
        let row = server
            .first::<(String, String)>(&statements::column_data_type(&physical, table, column))?;
        match row {
            None => {
                return Err(Error::Usage(format!(
                    "column {column} not found in {physical}.{table} on {place}"
                )))
            }
            Some((data_type, _)) if !holds(func.key_type, &data_type) => {
                return Err(Error::Usage(format!(
                    "column {physical}.{table}.{column} is {data_type}: function {} takes {} keys (use {})",
                    func.name,
                    func.key_type.as_sql(),
                    match func.key_type {
                        KeyType::Int => "an integer column",
                        KeyType::String => "a CHAR, VARCHAR, BINARY or VARBINARY column",
                    }
                )))
            }
            Some(_) => {}
        }
        if crate::server::accounts::is_nullable(&mut server, &physical, table, column)?
            == Some(true)
        {
            return Err(Error::Refused(crate::prune::nullable_key_refusal(
                &physical, table, column, &home.node,
            )));
        }
    }
    drop(server);
    if let (Some(func), TablePlacement::Sharded { column, .. }) = (&function, placement) {
        refuse_rows_elsewhere(inv, &snap, func, schema, table, column)?;
    }
    dir.add_table(schema, table, placement)
}

/// Refuses a sharded table whose existing copy on some shard holds a key that shard does
/// not own (a former global table, rows placed by another key): a later prune would delete
/// those rows, which may be their only copy. Reads one row at most per shard.
fn refuse_rows_elsewhere(
    inv: &Inventory,
    snap: &Snapshot,
    func: &crate::directory::Function,
    schema: &Ident,
    table: &Ident,
    column: &Ident,
) -> Result<()> {
    for shard in snap.shards_of(func.id) {
        if matches!(
            crate::directory::coverage(snap, func, shard.id),
            crate::directory::Coverage::None
        ) {
            continue;
        }
        let physical = Ident::new("schema", &shard_schema(schema.as_str(), shard.id))?;
        let mut server = Server::connect_node(inv, &shard.node)?;
        if !server.tables(&physical)?.iter().any(|t| t.name == *table) {
            continue;
        }
        let cond = crate::prune::predicate::not_owned(snap, shard, column)?;
        if let Some(key) = server.first::<mysql::Value>(&statements::first_key_where(
            &physical, table, column, &cond,
        ))? {
            return Err(Error::Refused(format!(
                "{physical}.{table} on {} holds {column} = {} which shard {} does not own: mapped, that row would be pruned; move such rows to their shard first",
                shard.node,
                crate::ops::add_shard::key_text(&key),
                shard.id
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_kinds_accept_only_their_columns() {
        assert!(holds(KeyType::Int, "bigint"));
        assert!(holds(KeyType::Int, "INT"));
        assert!(!holds(KeyType::Int, "varchar"));
        assert!(!holds(KeyType::Int, "decimal"));
        assert!(holds(KeyType::String, "varchar"));
        assert!(!holds(KeyType::String, "int"));
        assert!(!holds(KeyType::String, "text"));
    }
}
