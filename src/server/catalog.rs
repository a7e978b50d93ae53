//! Catalog reads and schema DDL on one node: schemas, tables, their definitions, sizes and
//! foreign keys. Plain SQL common to every flavor; names arrive validated.

use super::{col_string, statements, Server, Stmt};
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
    fn keyword(&self) -> &'static str {
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
        let st = Stmt::with(
            "SELECT column_name FROM information_schema.columns WHERE table_schema = ? AND table_name = ? \
             AND extra NOT LIKE '%GENERATED%' ORDER BY ordinal_position",
            vec![Value::from(schema.as_str()), Value::from(table.as_str())],
        );
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
        let st = Stmt::with(
            "SELECT LOWER(data_type) FROM information_schema.columns WHERE table_schema = ? AND table_name = ? ORDER BY ordinal_position",
            vec![Value::from(schema.as_str()), Value::from(table.as_str())],
        );
        self.rows(&st)?
            .into_iter()
            .map(|r| mysql::from_row_opt::<String>(r).map_err(|e| Error::server(self.name(), e)))
            .collect()
    }

    /// Primary-key columns of a table, in key order (empty when it has none).
    pub fn primary_key(&mut self, schema: &Ident, table: &Ident) -> Result<Vec<Ident>> {
        let st = Stmt::with(
            "SELECT column_name FROM information_schema.statistics WHERE table_schema = ? AND table_name = ? \
             AND index_name = 'PRIMARY' ORDER BY seq_in_index",
            vec![Value::from(schema.as_str()), Value::from(table.as_str())],
        );
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
        let sql = match kind {
            ObjectKind::Trigger => "SELECT trigger_name FROM information_schema.triggers WHERE trigger_schema = ? ORDER BY trigger_name",
            ObjectKind::Procedure => "SELECT routine_name FROM information_schema.routines WHERE routine_schema = ? AND routine_type = 'PROCEDURE' ORDER BY routine_name",
            ObjectKind::Function => "SELECT routine_name FROM information_schema.routines WHERE routine_schema = ? AND routine_type = 'FUNCTION' ORDER BY routine_name",
            ObjectKind::Event => "SELECT event_name FROM information_schema.events WHERE event_schema = ? ORDER BY event_name",
        };
        self.rows(&Stmt::with(sql, vec![Value::from(schema.as_str())]))?
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
        let st = Stmt::text(format!(
            "SHOW CREATE {} {}.{}",
            kind.keyword(),
            schema.quoted(),
            name.quoted()
        ));
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
            .first(&Stmt::text("SELECT @@GLOBAL.performance_schema"))?
            .unwrap_or(0);
        if on == 0 {
            return Ok(None);
        }
        let st = Stmt::text(
            "SELECT object_schema, CAST(SUM(count_star) AS UNSIGNED) FROM performance_schema.table_io_waits_summary_by_table \
             WHERE object_schema IS NOT NULL GROUP BY object_schema",
        );
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
        let st = Stmt::text(format!(
            "CHECKSUM TABLE {}.{}",
            schema.quoted(),
            table.quoted()
        ));
        let r = self.rows(&st)?;
        let sum = r.first().and_then(|r| super::col_u64(r, &["Checksum"]));
        Ok((rows, sum))
    }

    /// True when `schema` exists on the node.
    pub fn schema_exists(&mut self, schema: &Ident) -> Result<bool> {
        let st = Stmt::with(
            "SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name = ?",
            vec![Value::from(schema.as_str())],
        );
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
        let st = Stmt::with(
            "SELECT table_name, table_type FROM information_schema.tables WHERE table_schema = ? ORDER BY table_name",
            vec![Value::from(schema.as_str())],
        );
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
        let kind = if table.is_view { "VIEW" } else { "TABLE" };
        let st = Stmt::text(format!(
            "SHOW CREATE {kind} {}.{}",
            schema.quoted(),
            table.name.quoted()
        ));
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
        let st = Stmt::text(
            "SELECT table_schema, COUNT(*), COALESCE(SUM(table_rows), 0), COALESCE(SUM(data_length + index_length), 0) \
             FROM information_schema.tables WHERE table_type = 'BASE TABLE' GROUP BY table_schema",
        );
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
        let st = Stmt::with(
            "SELECT table_name, COALESCE(table_rows, 0) FROM information_schema.tables WHERE table_schema = ? AND table_type = 'BASE TABLE'",
            vec![Value::from(schema.as_str())],
        );
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
        let st = Stmt::text(format!(
            "SELECT COUNT(*) FROM {}.{}",
            schema.quoted(),
            table.quoted()
        ));
        Ok(self.first::<u64>(&st)?.unwrap_or(0))
    }

    /// The foreign-key columns declared in `schema` that reference the same schema.
    pub fn foreign_keys(&mut self, schema: &Ident) -> Result<Vec<ForeignKeyColumn>> {
        let st = Stmt::with(
            "SELECT k.table_name, k.column_name, k.referenced_table_name, k.referenced_column_name \
             FROM information_schema.key_column_usage k \
             JOIN information_schema.table_constraints c \
               ON c.constraint_schema = k.constraint_schema AND c.table_name = k.table_name \
              AND c.constraint_name = k.constraint_name \
             WHERE c.constraint_type = 'FOREIGN KEY' AND k.table_schema = ? \
               AND k.referenced_table_schema = k.table_schema \
             ORDER BY k.table_name, k.column_name",
            vec![Value::from(schema.as_str())],
        );
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
        let st = Stmt::text(format!(
            "SELECT * FROM {}.{}",
            schema.quoted(),
            table.quoted()
        ));
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
        let cols: Vec<String> = columns
            .iter()
            .map(|c| Ident::new("column", c).map(|i| i.quoted()))
            .collect::<Result<_>>()?;
        let one = format!("({})", vec!["?"; cols.len()].join(", "));
        let per_batch = (60_000 / cols.len().max(1)).clamp(1, 1000);
        for chunk in rows.chunks(per_batch) {
            let sql = format!(
                "INSERT INTO {}.{} ({}) VALUES {}",
                schema.quoted(),
                table.quoted(),
                cols.join(", "),
                vec![one.as_str(); chunk.len()].join(", ")
            );
            let params: Vec<Value> = chunk.iter().flatten().cloned().collect();
            self.exec(&Stmt::with(sql, params))?;
        }
        Ok(())
    }
}
