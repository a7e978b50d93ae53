//! Catalog reads and schema DDL on one node: schemas, tables, their definitions, sizes and
//! foreign keys. The statements are built in statements.rs (common to every flavor); this
//! module runs them and reads their results.

use super::{col_string, statements, Server};
use crate::error::{Error, Result};
use crate::ident::Ident;
use mysql::Value;
use serde::Serialize;
use std::collections::BTreeMap;

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

/// A stored object other than a table or view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObjectKind {
    /// A trigger.
    Trigger,
    /// A stored procedure.
    Procedure,
    /// A stored function.
    Function,
    /// A scheduled event.
    Event,
}

impl ObjectKind {
    /// The keyword naming this kind in SQL (`SHOW CREATE <keyword>`).
    pub fn keyword(&self) -> &'static str {
        match self {
            ObjectKind::Trigger => "TRIGGER",
            ObjectKind::Procedure => "PROCEDURE",
            ObjectKind::Function => "FUNCTION",
            ObjectKind::Event => "EVENT",
        }
    }
}

impl Server {
    /// Columns of a table that can be written (generated columns left out), in order.
    pub fn writable_columns(&mut self, schema: &Ident, table: &Ident) -> Result<Vec<Ident>> {
        let st = statements::writable_columns(schema, table);
        self.rows(&st)?
            .into_iter()
            .map(|r| {
                let name: String =
                    mysql::from_row_opt(r).map_err(|e| Error::server(self.name(), e))?;
                Ident::new("column", &name)
            })
            .collect()
    }

    /// Data types of a table's columns (lower case), in order.
    pub fn column_types(&mut self, schema: &Ident, table: &Ident) -> Result<Vec<String>> {
        let st = statements::column_types(schema, table);
        self.rows(&st)?
            .into_iter()
            .map(|r| mysql::from_row_opt::<String>(r).map_err(|e| Error::server(self.name(), e)))
            .collect()
    }

    /// Primary-key columns of a table, in key order (empty when it has none).
    pub fn primary_key(&mut self, schema: &Ident, table: &Ident) -> Result<Vec<Ident>> {
        let st = statements::primary_key_columns(schema, table);
        self.rows(&st)?
            .into_iter()
            .map(|r| {
                let name: String =
                    mysql::from_row_opt(r).map_err(|e| Error::server(self.name(), e))?;
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
                    mysql::from_row_opt(r).map_err(|e| Error::server(self.name(), e))?;
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
                mysql::from_row_opt(row).map_err(|e| Error::server(self.name(), e))?;
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
                mysql::from_row_opt(row).map_err(|e| Error::server(self.name(), e))?;
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

    /// Estimated row counts of the base tables of `schema`.
    pub fn table_rows(&mut self, schema: &Ident) -> Result<BTreeMap<String, u64>> {
        let st = statements::table_row_estimates(schema);
        let mut out = BTreeMap::new();
        for row in self.rows(&st)? {
            let (name, rows): (String, u64) =
                mysql::from_row_opt(row).map_err(|e| Error::server(self.name(), e))?;
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

    /// Rows of a table as values, for copying small global tables.
    pub fn read_all(
        &mut self,
        schema: &Ident,
        table: &Ident,
    ) -> Result<(Vec<String>, Vec<Vec<Value>>)> {
        let st = statements::select_all(schema, table);
        let rows = self.rows(&st)?;
        let columns = rows
            .first()
            .map(|r| {
                r.columns_ref()
                    .iter()
                    .map(|c| c.name_str().to_string())
                    .collect()
            })
            .unwrap_or_default();
        Ok((columns, rows.into_iter().map(|r| r.unwrap()).collect()))
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
