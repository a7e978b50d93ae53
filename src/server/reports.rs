//! The statements of the reference commands (`simulate`, `ids`, `global`, `query`), as
//! pure functions returning [`Stmt`]: names arrive as validated [`Ident`]s and are
//! back-quoted here, values are bound. Golden-tested in `tests/golden_sql.rs`
//! (`reference_statements`).

use super::{Flavor, Stmt, Vendor};
use crate::ident::Ident;
use mysql::Value;

/// `schema`.`table`.
fn qualified(schema: &Ident, table: &Ident) -> String {
    format!("{}.{}", schema.quoted(), table.quoted())
}

fn column_list(columns: &[Ident]) -> String {
    columns
        .iter()
        .map(Ident::quoted)
        .collect::<Vec<_>>()
        .join(", ")
}

/// `(?, ?, ...)` with `n` placeholders.
fn placeholders(n: usize) -> String {
    format!("({})", vec!["?"; n].join(", "))
}

// ---------------------------------------------------------------------------------------
// simulate

/// Every value of one column (the keys `simulate --column` places).
pub fn select_column(schema: &Ident, table: &Ident, column: &Ident) -> Stmt {
    Stmt::text(format!(
        "SELECT {} FROM {}",
        column.quoted(),
        qualified(schema, table)
    ))
}

/// A table's average row length in bytes (the size `simulate` gives each key of a live
/// table), from the server's statistics.
pub fn average_row_length(schema: &Ident, table: &Ident) -> Stmt {
    Stmt::with(
        "SELECT COALESCE(AVG_ROW_LENGTH, 0) FROM information_schema.TABLES \
         WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?",
        vec![Value::from(schema.as_str()), Value::from(table.as_str())],
    )
}

// ---------------------------------------------------------------------------------------
// ids

/// The node's `auto_increment_increment` and `auto_increment_offset`.
pub fn auto_increment_settings() -> Stmt {
    Stmt::text("SELECT @@GLOBAL.auto_increment_increment, @@GLOBAL.auto_increment_offset")
}

/// The primary key's columns with their data type and EXTRA (`auto_increment`), in
/// key order.
pub fn primary_key_typed(schema: &Ident, table: &Ident) -> Stmt {
    Stmt::with(
        "SELECT c.COLUMN_NAME, c.DATA_TYPE, c.EXTRA FROM information_schema.STATISTICS s \
         JOIN information_schema.COLUMNS c ON c.TABLE_SCHEMA = s.TABLE_SCHEMA \
         AND c.TABLE_NAME = s.TABLE_NAME AND c.COLUMN_NAME = s.COLUMN_NAME \
         WHERE s.TABLE_SCHEMA = ? AND s.TABLE_NAME = ? AND s.INDEX_NAME = 'PRIMARY' \
         ORDER BY s.SEQ_IN_INDEX",
        vec![Value::from(schema.as_str()), Value::from(table.as_str())],
    )
}

/// Every id of a table, in order (an index scan of the primary key).
pub fn ids_in_order(schema: &Ident, table: &Ident, column: &Ident) -> Stmt {
    Stmt::text(format!(
        "SELECT {c} FROM {} ORDER BY {c}",
        qualified(schema, table),
        c = column.quoted()
    ))
}

/// Creates a sequence in the directory schema `d`: (name, first value, block size,
/// largest value).
pub fn create_sequence(d: &Ident) -> Stmt {
    Stmt::text(format!(
        "INSERT INTO {}.`sequences` (name, next_value, block_size, max_value) VALUES (?, ?, ?, ?)",
        d.quoted()
    ))
}

/// Takes `count` values from a sequence in one autocommitted statement (the ticket
/// table's idiom): the row lock serialises concurrent callers, `LAST_INSERT_ID(expr)`
/// hands the new next value back to this session only, and a sequence without `count`
/// values left is not changed (0 rows). Binds (count, name, count).
pub fn take_from_sequence(d: &Ident) -> Stmt {
    Stmt::text(format!(
        "UPDATE {}.`sequences` SET next_value = LAST_INSERT_ID(next_value + ?) \
         WHERE name = ? AND max_value - next_value >= ? - 1",
        d.quoted()
    ))
}

/// This session's `LAST_INSERT_ID()`.
pub fn last_insert_id() -> Stmt {
    Stmt::text("SELECT LAST_INSERT_ID()")
}

/// How long this session waits for a row lock (seconds, at least 1).
pub fn lock_wait_seconds(secs: u64) -> Stmt {
    Stmt::text(format!(
        "SET SESSION innodb_lock_wait_timeout = {}",
        secs.max(1)
    ))
}

/// The sequences of directory schema `d`: name, next value, block size, largest value.
pub fn sequences(d: &Ident) -> Stmt {
    Stmt::text(format!(
        "SELECT name, next_value, block_size, max_value FROM {}.`sequences` ORDER BY name",
        d.quoted()
    ))
}

// ---------------------------------------------------------------------------------------
// global tables

/// Records the shard holding a global table's source of truth. Binds (schema, table,
/// shard).
pub fn set_global_source(d: &Ident) -> Stmt {
    Stmt::text(format!(
        "INSERT INTO {}.`global_sources` (schema_name, table_name, source_shard) VALUES (?, ?, ?) \
         ON DUPLICATE KEY UPDATE source_shard = VALUES(source_shard)",
        d.quoted()
    ))
}

/// The recorded sources of truth: schema, table, shard.
pub fn global_sources(d: &Ident) -> Stmt {
    Stmt::text(format!(
        "SELECT schema_name, table_name, source_shard FROM {}.`global_sources`",
        d.quoted()
    ))
}

/// Whether `schema.table` exists as a base table (0 or 1).
pub fn base_table_exists(schema: &Ident, table: &Ident) -> Stmt {
    Stmt::with(
        "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? \
         AND TABLE_TYPE = 'BASE TABLE'",
        vec![Value::from(schema.as_str()), Value::from(table.as_str())],
    )
}

/// `START TRANSACTION`.
pub fn start_transaction() -> Stmt {
    Stmt::text("START TRANSACTION")
}

/// Inserts `rows` rows, replacing the columns of a row whose key exists (`ON DUPLICATE KEY
/// UPDATE`, no delete, so no foreign-key cascade fires). Binds the rows' values in order.
pub fn upsert_rows(schema: &Ident, table: &Ident, columns: &[Ident], rows: usize) -> Stmt {
    let one = placeholders(columns.len());
    let values = vec![one; rows.max(1)].join(", ");
    let updates = columns
        .iter()
        .map(|c| format!("{q} = VALUES({q})", q = c.quoted()))
        .collect::<Vec<_>>()
        .join(", ");
    Stmt::text(format!(
        "INSERT INTO {} ({}) VALUES {values} ON DUPLICATE KEY UPDATE {updates}",
        qualified(schema, table),
        column_list(columns)
    ))
}

/// Deletes `rows` rows by primary key. Binds the keys' values in order.
pub fn delete_keys(schema: &Ident, table: &Ident, pk: &[Ident], rows: usize) -> Stmt {
    let one = placeholders(pk.len());
    let keys = vec![one; rows.max(1)].join(", ");
    Stmt::text(format!(
        "DELETE FROM {} WHERE ({}) IN ({keys})",
        qualified(schema, table),
        column_list(pk)
    ))
}

// ---------------------------------------------------------------------------------------
// query

/// Opens the read-only transaction a cross-shard query runs in: the server refuses any
/// write in it.
pub fn start_read_only() -> Stmt {
    Stmt::text("START TRANSACTION READ ONLY")
}

/// The server-side limit on each statement of the session, so a query given up by the
/// client does not run on: MariaDB's `max_statement_time` (seconds), MySQL's
/// `max_execution_time` (milliseconds, SELECT only).
pub fn statement_time_limit(flavor: Flavor, secs: u64) -> Stmt {
    match flavor.vendor {
        Vendor::MariaDb => Stmt::text(format!("SET SESSION max_statement_time = {secs}")),
        Vendor::MySql => Stmt::text(format!(
            "SET SESSION max_execution_time = {}",
            secs.saturating_mul(1000)
        )),
    }
}

/// An operator's query with each `{table}` marker replaced by the shard's physical,
/// back-quoted name. `parts` is the query cut at its markers: text, table, text, ...,
/// text; `tables` has one (schema, table) per marker.
pub fn shard_query(parts: &[String], tables: &[(Ident, Ident)]) -> Stmt {
    let mut sql = String::new();
    for (i, text) in parts.iter().enumerate() {
        sql.push_str(text);
        if let Some((s, t)) = tables.get(i) {
            sql.push_str(&qualified(s, t));
        }
    }
    Stmt::text(sql)
}
