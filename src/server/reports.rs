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

/// The columns the sequences of directory schema `d` feed: sequence, schema, table,
/// column.
pub fn sequence_feeds(d: &Ident) -> Stmt {
    Stmt::text(format!(
        "SELECT sequence_name, schema_name, table_name, column_name FROM {}.`sequence_feeds` \
         ORDER BY sequence_name, schema_name, table_name, column_name",
        d.quoted()
    ))
}

/// Forgets every column a sequence feeds. Binds (sequence).
pub fn clear_sequence_feeds(d: &Ident) -> Stmt {
    Stmt::text(format!(
        "DELETE FROM {}.`sequence_feeds` WHERE sequence_name = ?",
        d.quoted()
    ))
}

/// Records a column a sequence feeds. Binds (sequence, schema, table, column).
pub fn add_sequence_feed(d: &Ident) -> Stmt {
    Stmt::text(format!(
        "INSERT IGNORE INTO {}.`sequence_feeds` (sequence_name, schema_name, table_name, column_name) \
         VALUES (?, ?, ?, ?)",
        d.quoted()
    ))
}

/// Raises a sequence's next value, never lowering it: a concurrent `next` that went past
/// the new value already leaves the row unchanged (0 rows). Binds (value, name, value).
pub fn raise_sequence(d: &Ident) -> Stmt {
    Stmt::text(format!(
        "UPDATE {}.`sequences` SET next_value = ? WHERE name = ? AND next_value < ?",
        d.quoted()
    ))
}

/// The type of one column (information_schema's `DATA_TYPE`); no row when the table has
/// no such column.
pub fn column_data_type(schema: &Ident, table: &Ident, column: &Ident) -> Stmt {
    Stmt::with(
        "SELECT DATA_TYPE FROM information_schema.COLUMNS \
         WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? AND COLUMN_NAME = ?",
        vec![
            Value::from(schema.as_str()),
            Value::from(table.as_str()),
            Value::from(column.as_str()),
        ],
    )
}

/// The highest value of one column, as text (NULL for an empty table): the largest id a
/// sequence handed out that this shard stores.
pub fn max_of_column(schema: &Ident, table: &Ident, column: &Ident) -> Stmt {
    Stmt::text(format!(
        "SELECT CAST(MAX({}) AS CHAR) FROM {}",
        column.quoted(),
        qualified(schema, table)
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

/// Deletes `rows` rows by primary key, each only if its key has exactly the bytes given.
/// `collated` says which key columns compare by a collation: under a case-insensitive or
/// PAD SPACE one `k = 'ABC'` also matches the row `abc` (and `k = 'x '` the row `x`), so
/// those columns are compared again as bytes (`CAST(... AS BINARY)`); the others (numbers,
/// times, binary strings) compare exactly already. The first list lets the server find the
/// rows through the primary key; the second keeps only the exact ones. Binds the keys'
/// values in order, twice (once per list).
pub fn delete_keys(
    schema: &Ident,
    table: &Ident,
    pk: &[Ident],
    collated: &[bool],
    rows: usize,
) -> Stmt {
    debug_assert_eq!(pk.len(), collated.len());
    let one = placeholders(pk.len());
    let keys = vec![one; rows.max(1)].join(", ");
    let (exact_columns, exact_marks): (Vec<String>, Vec<&str>) = pk
        .iter()
        .zip(collated)
        .map(|(c, by_bytes)| match by_bytes {
            true => (
                format!("CAST({} AS BINARY)", c.quoted()),
                "CAST(? AS BINARY)",
            ),
            false => (c.quoted(), "?"),
        })
        .unzip();
    let exact_columns = exact_columns.join(", ");
    let exact_keys = vec![format!("({})", exact_marks.join(", ")); rows.max(1)].join(", ");
    Stmt::text(format!(
        "DELETE FROM {} WHERE ({}) IN ({keys}) AND ({exact_columns}) IN ({exact_keys})",
        qualified(schema, table),
        column_list(pk)
    ))
}

/// A table's primary-key columns in key order, each with its collation (NULL for a column
/// that has none: numbers, times, binary strings).
pub fn key_collations(schema: &Ident, table: &Ident) -> Stmt {
    Stmt::with(
        "SELECT s.COLUMN_NAME, c.COLLATION_NAME FROM information_schema.STATISTICS s \
         JOIN information_schema.COLUMNS c ON c.TABLE_SCHEMA = s.TABLE_SCHEMA \
         AND c.TABLE_NAME = s.TABLE_NAME AND c.COLUMN_NAME = s.COLUMN_NAME \
         WHERE s.TABLE_SCHEMA = ? AND s.TABLE_NAME = ? AND s.INDEX_NAME = 'PRIMARY' \
         ORDER BY s.SEQ_IN_INDEX",
        vec![Value::from(schema.as_str()), Value::from(table.as_str())],
    )
}

// ---------------------------------------------------------------------------------------
// query

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

/// The user variable holding the `n`th value an ownership filter compares with.
fn owned_variable(n: usize) -> String {
    format!("@_shardctl_owned_{n}")
}

/// `SET @_shardctl_owned_0 = ?, ...`: the values of the ownership filters of a shard's
/// query, bound, for [`shard_query_owned`] to compare with (the query itself is sent as
/// text). None when there are none.
pub fn owned_variables(values: &[Value]) -> Option<Stmt> {
    (!values.is_empty()).then(|| {
        let list: Vec<String> = (0..values.len())
            .map(|n| format!("{} = ?", owned_variable(n)))
            .collect();
        Stmt::with(format!("SET {}", list.join(", ")), values.to_vec())
    })
}

/// The words after a table reference that do not start an alias.
const NOT_ALIASES: [&str; 27] = [
    "WHERE",
    "JOIN",
    "INNER",
    "LEFT",
    "RIGHT",
    "CROSS",
    "NATURAL",
    "STRAIGHT_JOIN",
    "ON",
    "USING",
    "GROUP",
    "ORDER",
    "LIMIT",
    "HAVING",
    "UNION",
    "EXCEPT",
    "INTERSECT",
    "WINDOW",
    "FOR",
    "LOCK",
    "PARTITION",
    "USE",
    "IGNORE",
    "FORCE",
    "INTO",
    "FULL",
    "OUTER",
];

/// Whether the text after a table reference starts with its alias (`AS a`, `a`, `` `a` ``).
fn starts_with_alias(after: &str) -> bool {
    let rest = after.trim_start();
    if rest.starts_with('`') {
        return true;
    }
    let word: String = rest
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '$'))
        .collect();
    !word.is_empty()
        && !word.chars().all(|c| c.is_ascii_digit())
        && !NOT_ALIASES.iter().any(|w| w.eq_ignore_ascii_case(&word))
}

/// One marker of a shard's query: its physical table and, while the shard holds rows it
/// no longer owns (a prune pending), the condition matching those rows (`?` placeholders,
/// as `prune::predicate::not_owned` gives it).
#[derive(Debug, Clone)]
pub struct MarkerTable {
    /// Physical schema.
    pub schema: Ident,
    /// Table.
    pub table: Ident,
    /// The rows to leave out, if any.
    pub not_owned: Option<super::statements::Condition>,
}

/// [`shard_query`] where a marker with a `not_owned` condition stands for the shard's own
/// rows only: as a table reference, `(SELECT * FROM s.t WHERE NOT COALESCE(cond, FALSE))`
/// aliased by the table's name unless the query gives an alias; as a column qualifier
/// (`{t}.col`), that alias. The condition's values are the user variables
/// [`owned_variables`] sets (the statement and the values it needs, in order). A row whose
/// key is NULL is kept, as the prune keeps it.
pub fn shard_query_owned(parts: &[String], tables: &[MarkerTable]) -> (Stmt, Vec<Value>) {
    let mut sql = String::new();
    let mut values = Vec::new();
    for (i, text) in parts.iter().enumerate() {
        sql.push_str(text);
        let Some(m) = tables.get(i) else { continue };
        let after = parts.get(i + 1).map(String::as_str).unwrap_or("");
        match &m.not_owned {
            None => sql.push_str(&qualified(&m.schema, &m.table)),
            Some(_) if after.starts_with('.') => sql.push_str(&m.table.quoted()),
            Some(cond) => {
                let mut filter = String::new();
                for (k, piece) in cond.sql.split('?').enumerate() {
                    if k > 0 {
                        filter.push_str(&owned_variable(values.len()));
                        values.push(cond.params.get(k - 1).cloned().unwrap_or(Value::NULL));
                    }
                    filter.push_str(piece);
                }
                sql.push_str(&format!(
                    "(SELECT * FROM {} WHERE NOT COALESCE({filter}, FALSE))",
                    qualified(&m.schema, &m.table)
                ));
                if !starts_with_alias(after) {
                    sql.push_str(&format!(" AS {}", m.table.quoted()));
                }
            }
        }
    }
    (Stmt::text(sql), values)
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
