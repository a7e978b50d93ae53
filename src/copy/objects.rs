//! Re-creating a schema's objects on another node: tables before the data; views,
//! routines, triggers and events after it (triggers after, so they do not fire on the
//! copied rows).

use super::SchemaPair;
use crate::error::{Error, Result};
use crate::ident::Ident;
use crate::server::catalog::{ObjectKind, TableInfo};
use crate::server::{statements, Server, Stmt};

/// The definitions read from the source, ready to replay.
#[derive(Debug, Clone, Default)]
pub struct SchemaObjects {
    /// Base tables and their CREATE TABLE.
    pub tables: Vec<(Ident, String)>,
    /// Views, routines, triggers and events, in creation order.
    pub after_data: Vec<(String, String)>,
}

/// Rewrites references to the source schema so a definition works in the target schema.
pub fn retarget(ddl: &str, from: &Ident, to: &Ident) -> String {
    if from == to {
        return ddl.to_string();
    }
    ddl.replace(&format!("{}.", from.quoted()), &format!("{}.", to.quoted()))
}

/// Reads every object of `pair.from`.
pub fn read(server: &mut Server, pair: &SchemaPair) -> Result<SchemaObjects> {
    let mut out = SchemaObjects::default();
    let mut views = Vec::new();
    for t in server.tables(&pair.from)? {
        let ddl = server.show_create(&pair.from, &t)?;
        if t.is_view {
            views.push((
                format!("view {}", t.name),
                retarget(&ddl, &pair.from, &pair.to),
            ));
        } else {
            out.tables.push((t.name.clone(), ddl));
        }
    }
    out.after_data.extend(views);
    for kind in [
        ObjectKind::Function,
        ObjectKind::Procedure,
        ObjectKind::Trigger,
        ObjectKind::Event,
    ] {
        for name in server.objects(&pair.from, kind)? {
            let ddl = server.show_create_object(&pair.from, kind, &name)?;
            out.after_data.push((
                format!("{kind:?} {name}").to_lowercase(),
                retarget(&ddl, &pair.from, &pair.to),
            ));
        }
    }
    Ok(out)
}

/// Creates the target schema and its tables. Refuses a schema that already exists.
pub fn create_tables(
    server: &mut Server,
    pair: &SchemaPair,
    objects: &SchemaObjects,
) -> Result<()> {
    if server.schema_exists(&pair.to)? {
        return Err(Error::Refused(format!(
            "schema {} already exists on node {}",
            pair.to,
            server.name()
        )));
    }
    for st in create_tables_statements(pair, objects) {
        server.exec(&st)?;
    }
    Ok(())
}

/// The statements that create `pair.to` with the tables of `objects` (empty).
pub fn create_tables_statements(pair: &SchemaPair, objects: &SchemaObjects) -> Vec<Stmt> {
    let mut out = vec![
        statements::create_schema_if_not_exists(&pair.to),
        statements::use_schema(&pair.to),
        statements::foreign_key_checks(false),
    ];
    out.extend(
        objects
            .tables
            .iter()
            .map(|(_, ddl)| statements::replay_definition(ddl)),
    );
    out.push(statements::foreign_key_checks(true));
    out
}

/// The statements that create the views, routines, triggers and events of `objects` in
/// `pair.to`, in the order of a first pass (the live run retries views that depend on
/// later ones).
pub fn after_data_statements(pair: &SchemaPair, objects: &SchemaObjects) -> Vec<Stmt> {
    let mut out = vec![statements::use_schema(&pair.to)];
    out.extend(
        objects
            .after_data
            .iter()
            .map(|(_, ddl)| statements::replay_definition(ddl)),
    );
    out
}

/// Creates views, routines, triggers and events; views that depend on other views are
/// retried until a pass makes no progress.
pub fn create_after_data(
    server: &mut Server,
    pair: &SchemaPair,
    objects: &SchemaObjects,
) -> Result<()> {
    server.exec(&statements::use_schema(&pair.to))?;
    let mut pending: Vec<&(String, String)> = objects.after_data.iter().collect();
    while !pending.is_empty() {
        let mut failed = Vec::new();
        let mut last = None;
        for item in &pending {
            if let Err(e) = server.exec(&statements::replay_definition(&item.1)) {
                last = Some(Error::server(
                    server.name(),
                    format!("creating {}: {e}", item.0),
                ));
                failed.push(*item);
            }
        }
        if failed.len() == pending.len() {
            return Err(last.expect("a failure was recorded"));
        }
        pending = failed;
    }
    Ok(())
}

/// Base tables of a schema as `TableInfo`s (views left out).
pub fn base_tables(objects: &SchemaObjects) -> Vec<TableInfo> {
    objects
        .tables
        .iter()
        .map(|(name, _)| TableInfo {
            name: name.clone(),
            is_view: false,
        })
        .collect()
}
