//! Catalog reads and schema DDL on one node: schemas, tables, their definitions, sizes and
//! foreign keys. The statements are built in statements.rs (common to every flavor); this
//! module runs them and reads their results.

use super::statements::{ContextValue, CreationContext, DefinedKind, ObjectKind};
use super::{col_string, statements, Server};
use crate::error::{Error, Result};
use crate::ident::Ident;
use mysql::Value;
use serde::Serialize;
use std::collections::BTreeMap;

/// Schemas whose tables one catalog read of [`Server::refresh_statistics`] lists: their
/// names travel as bound values, far below the 65,535 a statement may bind.
pub const REFRESH_SCHEMAS_PER_READ: usize = 1000;

/// Tables one `ANALYZE` of [`Server::refresh_statistics`] names: about 100 KB of
/// statement text, far below the server's `max_allowed_packet`, and a bound on how long
/// one statement runs. A node of 100 shards of 300 tables refreshes them in 30 statements.
pub const REFRESH_TABLES_PER_ANALYZE: usize = 1000;

/// One table or view of a schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableInfo {
    /// Its name.
    pub name: Ident,
    /// True for a view.
    pub is_view: bool,
}

/// Size figures of one schema, from information_schema (row counts are estimates).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SchemaSize {
    /// Base tables.
    pub tables: u64,
    /// Estimated rows.
    pub rows: u64,
    /// Data plus index bytes.
    pub bytes: u64,
}

/// One column of a foreign key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForeignKeyColumn {
    /// Referencing table.
    pub table: String,
    /// Referencing column.
    pub column: String,
    /// Referenced table.
    pub referenced_table: String,
    /// Referenced column.
    pub referenced_column: String,
}

/// A definition as `SHOW CREATE` gives it, with its creation context.
#[derive(Debug, Clone, PartialEq)]
pub struct RawDefinition {
    /// Its text, in UTF-8.
    pub ddl: String,
    /// The session it was created in.
    pub context: CreationContext,
    /// The collation its schema had then (routines, triggers, events).
    pub database_collation: Option<ContextValue>,
}

impl RawDefinition {
    /// True when the UTF-8 text is byte for byte what was written: its
    /// `character_set_client` is UTF-8 (utf8mb3, utf8mb4), or the text is ASCII (every
    /// character set a client can use reads ASCII alike). Otherwise re-creating it from
    /// this text in its own `character_set_client` would change its non-ASCII characters.
    pub fn as_written(&self) -> bool {
        let cs = self.context.character_set_client.as_str();
        self.ddl.is_ascii() || cs.starts_with("utf8")
    }
}

/// A BEFORE trigger of a table, for one event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BeforeTrigger {
    /// The table it is on.
    pub table: Ident,
    /// The event it fires for.
    pub event: statements::GuardEvent,
    /// Its name.
    pub name: Ident,
}

/// An event's status and what enabling it needs.
#[derive(Debug, Clone, PartialEq)]
pub struct EventStatus {
    /// Its name.
    pub name: Ident,
    /// ENABLED (not DISABLED, nor SLAVESIDE_DISABLED).
    pub enabled: bool,
    /// Its definer, `user@host`.
    pub definer: String,
    /// The session it was created in.
    pub context: CreationContext,
}

impl Server {
    /// Columns of a table that can be written (generated columns left out), in order.
    pub fn writable_columns(&mut self, schema: &Ident, table: &Ident) -> Result<Vec<Ident>> {
        let st = statements::writable_columns(schema, table);
        self.rows(&st)?
            .into_iter()
            .map(|r| {
                let name: String =
                    mysql::from_row_opt(r).map_err(|e| super::row_error(self.name(), e))?;
                Ident::new("column", &name)
            })
            .collect()
    }

    /// Data types of a table's columns (lower case), in order.
    pub fn column_types(&mut self, schema: &Ident, table: &Ident) -> Result<Vec<String>> {
        let st = statements::column_types(schema, table);
        self.rows(&st)?
            .into_iter()
            .map(|r| mysql::from_row_opt::<String>(r).map_err(|e| super::row_error(self.name(), e)))
            .collect()
    }

    /// The YEAR columns of a table.
    pub fn year_columns(&mut self, schema: &Ident, table: &Ident) -> Result<Vec<Ident>> {
        let st = statements::year_columns(schema, table);
        self.rows(&st)?
            .into_iter()
            .map(|r| {
                let name: String =
                    mysql::from_row_opt(r).map_err(|e| super::row_error(self.name(), e))?;
                Ident::new("column", &name)
            })
            .collect()
    }

    /// Primary-key columns of a table, in key order (empty when it has none).
    pub fn primary_key(&mut self, schema: &Ident, table: &Ident) -> Result<Vec<Ident>> {
        let st = statements::primary_key_columns(schema, table);
        self.rows(&st)?
            .into_iter()
            .map(|r| {
                let name: String =
                    mysql::from_row_opt(r).map_err(|e| super::row_error(self.name(), e))?;
                Ident::new("column", &name)
            })
            .collect()
    }

    /// Names of the triggers, routines or events of a schema.
    pub fn objects(&mut self, schema: &Ident, kind: ObjectKind) -> Result<Vec<Ident>> {
        self.rows(&statements::object_names(schema, kind))?
            .into_iter()
            .map(|r| {
                let name: String =
                    mysql::from_row_opt(r).map_err(|e| super::row_error(self.name(), e))?;
                Ident::new(kind.keyword(), &name)
            })
            .collect()
    }

    /// `SHOW CREATE TRIGGER|PROCEDURE|FUNCTION|EVENT` text.
    pub fn show_create_object(
        &mut self,
        schema: &Ident,
        kind: ObjectKind,
        name: &Ident,
    ) -> Result<String> {
        let st = statements::show_create_object(schema, kind, name);
        let rows = self.rows(&st)?;
        rows.first()
            .and_then(|r| {
                col_string(
                    r,
                    &[
                        "SQL Original Statement",
                        "Create Procedure",
                        "Create Function",
                        "Create Event",
                    ],
                )
            })
            .ok_or_else(|| {
                Error::server(
                    self.name(),
                    format!("no definition for {kind:?} {schema}.{name}"),
                )
            })
    }

    /// A schema's default character set and collation (None when it does not exist).
    pub fn schema_charset(
        &mut self,
        schema: &Ident,
    ) -> Result<Option<(ContextValue, ContextValue)>> {
        let st = statements::schema_charset(schema);
        let Some(row) = self.rows(&st)?.into_iter().next() else {
            return Ok(None);
        };
        let (cs, coll): (String, String) =
            mysql::from_row_opt(row).map_err(|e| super::row_error(self.name(), e))?;
        Ok(Some((
            ContextValue::new("character set", &cs)?,
            ContextValue::new("collation", &coll)?,
        )))
    }

    /// The names of a schema's triggers in the order they fire (table, timing, event,
    /// ACTION_ORDER).
    pub fn triggers_in_order(&mut self, schema: &Ident) -> Result<Vec<Ident>> {
        self.rows(&statements::triggers_in_order(schema))?
            .into_iter()
            .map(|r| {
                let name: String =
                    mysql::from_row_opt(r).map_err(|e| super::row_error(self.name(), e))?;
                Ident::new("trigger", &name)
            })
            .collect()
    }

    /// A schema's BEFORE triggers, each table's and event's in the order they fire.
    pub fn before_triggers_in_order(&mut self, schema: &Ident) -> Result<Vec<BeforeTrigger>> {
        let mut out = Vec::new();
        for row in self.rows(&statements::before_triggers_in_order(schema))? {
            let (table, event, name): (String, String, String) =
                mysql::from_row_opt(row).map_err(|e| super::row_error(self.name(), e))?;
            let event = statements::GuardEvent::from_keyword(&event).ok_or_else(|| {
                Error::server(
                    self.name(),
                    format!(
                        "trigger {name} on {schema}.{table} fires for an unknown event {event}"
                    ),
                )
            })?;
            out.push(BeforeTrigger {
                table: Ident::new("table", &table)?,
                event,
                name: Ident::new("trigger", &name)?,
            });
        }
        Ok(out)
    }

    /// A schema's events: name, whether enabled, definer and creation context.
    pub fn events_status(&mut self, schema: &Ident) -> Result<Vec<EventStatus>> {
        let st = statements::events_status(schema);
        let mut out = Vec::new();
        for row in self.rows(&st)? {
            let (name, status, definer, client, connection, mode, tz): (
                String,
                String,
                String,
                String,
                String,
                String,
                String,
            ) = mysql::from_row_opt(row).map_err(|e| super::row_error(self.name(), e))?;
            out.push(EventStatus {
                name: Ident::new("event", &name)?,
                enabled: status == "ENABLED",
                definer,
                context: CreationContext {
                    character_set_client: ContextValue::new("character_set_client", &client)?,
                    collation_connection: ContextValue::new("collation_connection", &connection)?,
                    sql_mode: Some(ContextValue::new("sql_mode", &mode)?),
                    time_zone: Some(ContextValue::new("time_zone", &tz)?),
                },
            });
        }
        Ok(out)
    }

    /// The session's sql_mode (`SHOW CREATE VIEW` and `SHOW CREATE EVENT` quote names by
    /// it: with ANSI_QUOTES, in double quotes).
    pub fn session_sql_mode(&mut self) -> Result<String> {
        Ok(self
            .first::<String>(&statements::session_sql_mode())?
            .unwrap_or_default())
    }

    /// A view's, routine's, trigger's or event's definition (`SHOW CREATE`) with its
    /// creation context. The text arrives in UTF-8, converted from its own
    /// `character_set_client`: the same bytes as written when that is a UTF-8 character set
    /// or the text is ASCII ([`RawDefinition::as_written`]).
    pub fn show_create_raw(
        &mut self,
        schema: &Ident,
        kind: DefinedKind,
        name: &Ident,
    ) -> Result<RawDefinition> {
        let st = match kind {
            DefinedKind::View => statements::show_create_table(schema, name, true),
            DefinedKind::Object(k) => statements::show_create_object(schema, k, name),
        };
        let rows = self.rows(&st)?;
        let row = rows.into_iter().next().ok_or_else(|| {
            Error::server(
                self.name(),
                format!("no definition for {kind} {schema}.{name}"),
            )
        })?;
        let text = |names: &[&str]| col_string(&row, names);
        let ddl = text(&[
            "Create View",
            "Create Procedure",
            "Create Function",
            "SQL Original Statement",
            "Create Event",
        ])
        .ok_or_else(|| {
            Error::server(
                self.name(),
                format!("{kind} {schema}.{name}: its definition is hidden (the account lacks the privilege to read it)"),
            )
        })?;
        let value = |what: &str, v: Option<String>| -> Result<Option<ContextValue>> {
            v.map(|v| ContextValue::new(what, &v)).transpose()
        };
        let client = value("character_set_client", text(&["character_set_client"]))?;
        let connection = value("collation_connection", text(&["collation_connection"]))?;
        let (Some(character_set_client), Some(collation_connection)) = (client, connection) else {
            return Err(Error::server(
                self.name(),
                format!("{kind} {schema}.{name}: SHOW CREATE gave no creation context"),
            ));
        };
        Ok(RawDefinition {
            ddl,
            context: CreationContext {
                character_set_client,
                collation_connection,
                sql_mode: value("sql_mode", text(&["sql_mode"]))?,
                time_zone: value("time_zone", text(&["time_zone"]))?,
            },
            database_collation: value("Database Collation", text(&["Database Collation"]))?,
        })
    }

    /// Table I/O per schema from performance_schema (None when it is off on the node).
    pub fn table_io_by_schema(&mut self) -> Result<Option<BTreeMap<String, u64>>> {
        let on: u64 = self
            .first(&statements::performance_schema_enabled())?
            .unwrap_or(0);
        if on == 0 {
            return Ok(None);
        }
        let st = statements::table_io_by_schema();
        let mut out = BTreeMap::new();
        for row in self.rows(&st)? {
            let (schema, n): (String, u64) =
                mysql::from_row_opt(row).map_err(|e| super::row_error(self.name(), e))?;
            out.insert(schema, n);
        }
        Ok(Some(out))
    }

    /// Exact row count and `CHECKSUM TABLE` of one table.
    pub fn count_and_checksum(
        &mut self,
        schema: &Ident,
        table: &Ident,
    ) -> Result<(u64, Option<u64>)> {
        let rows = self.count_rows(schema, table)?;
        let st = statements::checksum_table(schema, table);
        let r = self.rows(&st)?;
        let sum = r.first().and_then(|r| super::col_u64(r, &["Checksum"]));
        Ok((rows, sum))
    }

    /// True when `schema` exists on the node.
    pub fn schema_exists(&mut self, schema: &Ident) -> Result<bool> {
        let st = statements::count_schemas_named(schema);
        Ok(self.first::<u64>(&st)?.unwrap_or(0) > 0)
    }

    /// Creates `schema` if it does not exist.
    pub fn create_schema(&mut self, schema: &Ident) -> Result<()> {
        self.exec(&statements::create_schema_if_not_exists(schema))
    }

    /// Drops `schema` if it exists.
    pub fn drop_schema(&mut self, schema: &Ident) -> Result<()> {
        self.exec(&statements::drop_schema_if_exists(schema))
    }

    /// Tables and views of `schema`, in name order.
    pub fn tables(&mut self, schema: &Ident) -> Result<Vec<TableInfo>> {
        let st = statements::list_tables(schema);
        let rows: Vec<(String, String)> = self
            .rows(&st)?
            .into_iter()
            .filter_map(|r| mysql::from_row_opt(r).ok())
            .collect();
        rows.into_iter()
            .map(|(name, kind)| {
                Ok(TableInfo {
                    name: Ident::new("table", &name)?,
                    is_view: kind == "VIEW",
                })
            })
            .collect()
    }

    /// `SHOW CREATE TABLE` (or VIEW) text.
    pub fn show_create(&mut self, schema: &Ident, table: &TableInfo) -> Result<String> {
        let st = statements::show_create_table(schema, &table.name, table.is_view);
        let rows = self.rows(&st)?;
        rows.first()
            .and_then(|r| col_string(r, &["Create Table", "Create View"]))
            .ok_or_else(|| {
                Error::server(
                    self.name(),
                    format!("no definition for {schema}.{}", table.name),
                )
            })
    }

    /// Size figures of every schema on the node, in one query.
    pub fn schema_sizes(&mut self) -> Result<BTreeMap<String, SchemaSize>> {
        let st = statements::schema_sizes();
        let mut out = BTreeMap::new();
        for row in self.rows(&st)? {
            let (schema, tables, rows, bytes): (String, u64, u64, u64) =
                mysql::from_row_opt(row).map_err(|e| super::row_error(self.name(), e))?;
            out.insert(
                schema,
                SchemaSize {
                    tables,
                    rows,
                    bytes,
                },
            );
        }
        Ok(out)
    }

    /// Refreshes the statistics of every table but the views of `schemas`, so
    /// information_schema's sizes are current: one catalog read per
    /// [`REFRESH_SCHEMAS_PER_READ`] schemas, then one `ANALYZE NO_WRITE_TO_BINLOG TABLE` per
    /// [`REFRESH_TABLES_PER_ANALYZE`] tables, whatever schema they are in. Returns, per
    /// schema, the server's messages for the tables it could not analyze (no entry when all
    /// went well); a failed statement is an error.
    pub fn refresh_statistics(
        &mut self,
        schemas: &[Ident],
    ) -> Result<BTreeMap<String, Vec<String>>> {
        let mut tables: Vec<(Ident, Ident)> = Vec::new();
        for chunk in schemas.chunks(REFRESH_SCHEMAS_PER_READ) {
            let st = statements::analyzable_tables(chunk);
            for row in self.rows(&st)? {
                let (schema, table): (String, String) =
                    mysql::from_row_opt(row).map_err(|e| super::row_error(self.name(), e))?;
                tables.push((Ident::new("schema", &schema)?, Ident::new("table", &table)?));
            }
        }
        // The server names each table `schema.table` in its answer; neither name holds a dot.
        let mut failed: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for chunk in tables.chunks(REFRESH_TABLES_PER_ANALYZE) {
            let st = statements::analyze_tables(chunk);
            for row in self.rows(&st)? {
                let kind = col_string(&row, &["Msg_type"]).unwrap_or_default();
                if kind.eq_ignore_ascii_case("error") {
                    let table = col_string(&row, &["Table"]).unwrap_or_default();
                    let text = col_string(&row, &["Msg_text"]).unwrap_or_default();
                    let schema = table.split_once('.').map_or(&*table, |(s, _)| s);
                    failed
                        .entry(schema.to_string())
                        .or_default()
                        .push(format!("{table}: {text}"));
                }
            }
        }
        Ok(failed)
    }

    /// Estimated row counts of the base tables of `schema`.
    pub fn table_rows(&mut self, schema: &Ident) -> Result<BTreeMap<String, u64>> {
        let st = statements::table_row_estimates(schema);
        let mut out = BTreeMap::new();
        for row in self.rows(&st)? {
            let (name, rows): (String, u64) =
                mysql::from_row_opt(row).map_err(|e| super::row_error(self.name(), e))?;
            out.insert(name, rows);
        }
        Ok(out)
    }

    /// Exact row count of one table.
    pub fn count_rows(&mut self, schema: &Ident, table: &Ident) -> Result<u64> {
        let st = statements::count_rows(schema, table);
        Ok(self.first::<u64>(&st)?.unwrap_or(0))
    }

    /// The foreign-key columns declared in `schema` that reference the same schema.
    pub fn foreign_keys(&mut self, schema: &Ident) -> Result<Vec<ForeignKeyColumn>> {
        let st = statements::foreign_keys(schema);
        self.rows(&st)?
            .into_iter()
            .map(|r| {
                Ok(ForeignKeyColumn {
                    table: col_string(&r, &["table_name", "TABLE_NAME"]).unwrap_or_default(),
                    column: col_string(&r, &["column_name", "COLUMN_NAME"]).unwrap_or_default(),
                    referenced_table: col_string(
                        &r,
                        &["referenced_table_name", "REFERENCED_TABLE_NAME"],
                    )
                    .unwrap_or_default(),
                    referenced_column: col_string(
                        &r,
                        &["referenced_column_name", "REFERENCED_COLUMN_NAME"],
                    )
                    .unwrap_or_default(),
                })
            })
            .collect()
    }

    /// The writable columns of a table and its rows as values, for copying small global
    /// tables.
    pub fn read_all(
        &mut self,
        schema: &Ident,
        table: &Ident,
    ) -> Result<(Vec<String>, Vec<Vec<Value>>)> {
        // Named columns: INVISIBLE ones included (`SELECT *` skips them), generated ones
        // left out (they cannot be written).
        let columns = self.writable_columns(schema, table)?;
        let st = statements::select_table(schema, table, &columns, &[]);
        let rows = self.rows(&st)?;
        Ok((
            columns.iter().map(|c| c.to_string()).collect(),
            rows.into_iter().map(|r| r.unwrap()).collect(),
        ))
    }

    /// Inserts rows with multi-row INSERTs of bound values.
    pub fn insert_rows(
        &mut self,
        schema: &Ident,
        table: &Ident,
        columns: &[String],
        rows: &[Vec<Value>],
    ) -> Result<()> {
        if rows.is_empty() {
            return Ok(());
        }
        let cols: Vec<Ident> = columns
            .iter()
            .map(|c| Ident::new("column", c))
            .collect::<Result<_>>()?;
        let per_batch = (60_000 / cols.len().max(1)).clamp(1, 1000);
        for chunk in rows.chunks(per_batch) {
            self.exec(&statements::insert_values(schema, table, &cols, chunk))?;
        }
        Ok(())
    }
}
