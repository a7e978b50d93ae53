//! The statements shardctl sends to fleet nodes that read the same on every flavor, as pure
//! functions returning [`Stmt`]. Names arrive as validated [`Ident`]s and are back-quoted
//! here; values are bound parameters. Statements whose text depends on the flavor are
//! methods of [`super::Dialect`] instead. Golden-tested in `tests/golden_sql.rs`.

use super::Stmt;
use crate::ident::Ident;
use mysql::Value;
use serde::Serialize;
use std::fmt;

/// A condition with `?` placeholders and its bound values, to be AND-ed into a WHERE
/// clause by the builders below.
#[derive(Debug, Clone, PartialEq)]
pub struct Condition {
    /// SQL with `?` placeholders, parenthesised so it can be combined as is.
    pub sql: String,
    /// Values bound to the placeholders, in order.
    pub params: Vec<Value>,
}

impl fmt::Display for Condition {
    /// The text, then the bound values, as [`Stmt`] shows them.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        Stmt::with(self.sql.clone(), self.params.clone()).fmt(f)
    }
}

/// `schema`.`table`.
fn qualified(schema: &Ident, table: &Ident) -> String {
    format!("{}.{}", schema.quoted(), table.quoted())
}

/// Back-quoted names joined with `, `.
fn column_list(columns: &[Ident]) -> String {
    columns
        .iter()
        .map(Ident::quoted)
        .collect::<Vec<_>>()
        .join(", ")
}

// ---------------------------------------------------------------------------------------
// Sessions, transactions, locks.

/// Run on every new connection: clears NO_BACKSLASH_ESCAPES from the session's sql_mode,
/// so the escaped literals of `crate::ident::string_literal` read as intended.
pub fn allow_backslash_escapes() -> Stmt {
    Stmt::text("SET SESSION sql_mode = REPLACE(@@SESSION.sql_mode, 'NO_BACKSLASH_ESCAPES', '')")
}

/// Adds NO_AUTO_VALUE_ON_ZERO to the session's sql_mode before rows are copied with
/// `INSERT ... SELECT` on one server: without it a row whose AUTO_INCREMENT column holds 0
/// gets the next value instead (under the server's default sql_mode), so the copy would
/// differ from its source, and on a replica, which nothing verifies, stay different.
pub fn keep_zero_auto_increment() -> Stmt {
    Stmt::text(
        "SET SESSION sql_mode = CONCAT_WS(',', NULLIF(@@SESSION.sql_mode, ''), 'NO_AUTO_VALUE_ON_ZERO')",
    )
}

/// How long a fence statement that comes without a timeout of its own (lifting a fence,
/// the old copy's rename under it) waits for metadata locks, in seconds.
pub const FENCE_LOCK_WAIT_SECS: u64 = 10;

/// `SET SESSION lock_wait_timeout = N` (at least one second): bounds how long the session's
/// next DDL, `LOCK TABLES` or `RENAME TABLE` waits for metadata locks held by others.
pub fn lock_wait_timeout(secs: u64) -> Stmt {
    Stmt::text(format!("SET SESSION lock_wait_timeout = {}", secs.max(1)))
}

/// `SET SESSION foreign_key_checks = 0|1`.
pub fn foreign_key_checks(on: bool) -> Stmt {
    Stmt::text(format!("SET SESSION foreign_key_checks = {}", u8::from(on)))
}

/// Both unique and foreign-key checks off for the session, for bulk writers filling tables
/// from a consistent copy.
pub fn bulk_load_session() -> Stmt {
    Stmt::text("SET SESSION foreign_key_checks = 0, unique_checks = 0")
}

/// A session copying rows into a merge survivor's existing tables: foreign keys off as
/// for any copy, but unique checks on — the survivor's unique indexes already hold its own
/// rows, and a duplicate must fail the copy, never be skipped or merged silently.
pub fn merge_into_session() -> Stmt {
    Stmt::text("SET SESSION foreign_key_checks = 0, unique_checks = 1")
}

/// `USE schema`.
pub fn use_schema(schema: &Ident) -> Stmt {
    Stmt::text(format!("USE {}", schema.quoted()))
}

/// `LOCK TABLES s.t READ, ...` on the given (schema, table) pairs; None when there are none.
pub fn lock_tables_read(tables: &[(&Ident, &Ident)]) -> Option<Stmt> {
    if tables.is_empty() {
        return None;
    }
    let list: Vec<String> = tables
        .iter()
        .map(|(s, t)| format!("{} READ", qualified(s, t)))
        .collect();
    Some(Stmt::text(format!("LOCK TABLES {}", list.join(", "))))
}

/// `UNLOCK TABLES`.
pub fn unlock_tables() -> Stmt {
    Stmt::text("UNLOCK TABLES")
}

/// REPEATABLE READ for the session's next transactions (a consistent snapshot needs it).
pub fn repeatable_read() -> Stmt {
    Stmt::text("SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ")
}

/// Opens a read-only transaction on a consistent snapshot.
pub fn start_consistent_snapshot() -> Stmt {
    Stmt::text("START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY")
}

/// `SET SESSION TRANSACTION READ ONLY`: every later transaction of the session is
/// read-only (the dry run's connections).
pub fn session_read_only() -> Stmt {
    Stmt::text("SET SESSION TRANSACTION READ ONLY")
}

/// An operator's own SELECT, sent as written over a read-only session (`keys import
/// --from-query`); `query::check_read_only` has refused anything else before.
pub fn operator_select(sql: &str) -> Stmt {
    Stmt::text(sql.trim().trim_end_matches(';').trim_end())
}

/// When the server started, as a Unix time: a fence set with `SET GLOBAL` does not survive
/// a restart, so the fence's checks compare this before and after.
pub fn server_started_at() -> Stmt {
    Stmt::text(
        "SELECT CAST(UNIX_TIMESTAMP() - VARIABLE_VALUE AS SIGNED) FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'UPTIME'",
    )
}

/// `ALTER TABLE ... DISCARD TABLESPACE`: the physical copy empties a new table's
/// tablespace before its file arrives from the source's backup.
pub fn discard_tablespace(schema: &Ident, table: &Ident) -> Stmt {
    Stmt::text(format!(
        "ALTER TABLE {}.{} DISCARD TABLESPACE",
        schema.quoted(),
        table.quoted()
    ))
}

/// `ALTER TABLE ... IMPORT TABLESPACE`: the table takes the `.ibd` (and `.cfg`) placed in
/// its schema's directory.
pub fn import_tablespace(schema: &Ident, table: &Ident) -> Stmt {
    Stmt::text(format!(
        "ALTER TABLE {}.{} IMPORT TABLESPACE",
        schema.quoted(),
        table.quoted()
    ))
}

/// The partitions of a table in their order, with whether any has subpartitions (no rows
/// for a table that is not partitioned).
pub fn table_partitions(schema: &Ident, table: &Ident) -> Stmt {
    Stmt::with(
        "SELECT PARTITION_NAME, SUBPARTITION_NAME IS NOT NULL FROM information_schema.PARTITIONS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? AND PARTITION_NAME IS NOT NULL ORDER BY PARTITION_ORDINAL_POSITION, SUBPARTITION_ORDINAL_POSITION",
        vec![Value::from(schema.as_str()), Value::from(table.as_str())],
    )
}

/// `CREATE TABLE schema.new LIKE schema.table`.
pub fn create_table_like(schema: &Ident, new: &Ident, table: &Ident) -> Stmt {
    Stmt::text(format!(
        "CREATE TABLE {s}.{} LIKE {s}.{}",
        new.quoted(),
        table.quoted(),
        s = schema.quoted()
    ))
}

/// `ALTER TABLE ... REMOVE PARTITIONING`: a partition's file is imported into a plain
/// table of the same shape, then exchanged with the partition.
pub fn remove_partitioning(schema: &Ident, table: &Ident) -> Stmt {
    Stmt::text(format!(
        "ALTER TABLE {}.{} REMOVE PARTITIONING",
        schema.quoted(),
        table.quoted()
    ))
}

/// `ALTER TABLE ... EXCHANGE PARTITION p WITH TABLE other`.
pub fn exchange_partition(schema: &Ident, table: &Ident, partition: &Ident, other: &Ident) -> Stmt {
    Stmt::text(format!(
        "ALTER TABLE {s}.{} EXCHANGE PARTITION {} WITH TABLE {s}.{}",
        table.quoted(),
        partition.quoted(),
        other.quoted(),
        s = schema.quoted()
    ))
}

/// `DROP TABLE schema.table`.
pub fn drop_table(schema: &Ident, table: &Ident) -> Stmt {
    Stmt::text(format!("DROP TABLE {}.{}", schema.quoted(), table.quoted()))
}

/// The InnoDB page size: tablespaces move only between servers with the same one.
pub fn innodb_page_size() -> Stmt {
    Stmt::text("SELECT @@GLOBAL.innodb_page_size")
}

/// The server's data directory as its host sees it: where the physical copy places a
/// replica's files.
pub fn datadir() -> Stmt {
    Stmt::text("SELECT @@GLOBAL.datadir")
}

/// How InnoDB writes and flushes its data files (`fsync`, `O_DIRECT`, `nosync`, ...).
pub fn innodb_flush_method() -> Stmt {
    Stmt::text("SELECT @@GLOBAL.innodb_flush_method")
}

/// What a physical backup carries besides the shard's own tables: the system and undo
/// tablespaces and the redo log, counted at its configured size (bytes; a busy source can
/// write more redo while the backup runs).
pub fn backup_overhead_bytes() -> Stmt {
    Stmt::text(
        "SELECT CAST(COALESCE(SUM(FILE_SIZE), 0) + @@GLOBAL.innodb_log_file_size AS UNSIGNED) FROM information_schema.INNODB_SYS_TABLESPACES WHERE SPACE = 0 OR NAME LIKE 'innodb\\_undo%'",
    )
}

/// Every full-text auxiliary table of a schema (`<schema>/FTS_<id>_...`, the id in 16 hex
/// digits being the InnoDB table id of the table it belongs to): one left by a FULLTEXT
/// index dropped without a rebuild marks a table whose hidden `FTS_DOC_ID` column a table
/// created from its definition lacks, so its tablespace cannot be imported. Needs PROCESS.
pub fn fulltext_auxiliary_tables(schema_file_name: &str) -> Stmt {
    Stmt::with(
        "SELECT NAME FROM information_schema.INNODB_SYS_TABLES WHERE LEFT(NAME, CHAR_LENGTH(?) + 5) = CONCAT(?, '/FTS_') ORDER BY NAME",
        vec![Value::from(schema_file_name), Value::from(schema_file_name)],
    )
}

/// The InnoDB table id of `<schema>/<table>` (names as file names).
pub fn innodb_table_id(file_path: &str) -> Stmt {
    Stmt::with(
        "SELECT TABLE_ID FROM information_schema.INNODB_SYS_TABLES WHERE NAME = ?",
        vec![Value::from(file_path)],
    )
}

/// `RENAME TABLE schema.from TO schema.to`.
pub fn rename_table(schema: &Ident, from: &Ident, to: &Ident) -> Stmt {
    Stmt::text(format!(
        "RENAME TABLE {} TO {}",
        qualified(schema, from),
        qualified(schema, to)
    ))
}

/// The tables of a schema with a FULLTEXT index, which a tablespace import leaves
/// unusable: the physical copy rebuilds them from their imported rows.
pub fn fulltext_tables(schema: &Ident) -> Stmt {
    Stmt::with(
        "SELECT DISTINCT TABLE_NAME FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = ? AND INDEX_TYPE = 'FULLTEXT' ORDER BY TABLE_NAME",
        vec![Value::from(schema.as_str())],
    )
}

/// Each base table of a schema with its storage engine and whether it is partitioned.
pub fn table_engines(schema: &Ident) -> Stmt {
    Stmt::with(
        "SELECT TABLE_NAME, COALESCE(ENGINE, ''), CREATE_OPTIONS LIKE '%partitioned%' FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_TYPE = 'BASE TABLE' ORDER BY TABLE_NAME",
        vec![Value::from(schema.as_str())],
    )
}

/// The FLOAT columns of a schema's base tables, as (table, column), generated columns
/// left out (the target computes them itself): the dump tool writes a FLOAT with 6
/// significant digits, which does not give back the float it stored.
pub fn float_columns(schema: &Ident) -> Stmt {
    Stmt::with(
        "SELECT c.TABLE_NAME, c.COLUMN_NAME FROM information_schema.COLUMNS c \
         JOIN information_schema.TABLES t ON t.TABLE_SCHEMA = c.TABLE_SCHEMA AND t.TABLE_NAME = c.TABLE_NAME \
         WHERE c.TABLE_SCHEMA = ? AND t.TABLE_TYPE = 'BASE TABLE' AND c.DATA_TYPE = 'float' \
         AND c.EXTRA NOT LIKE '%GENERATED%' ORDER BY c.TABLE_NAME, c.ORDINAL_POSITION",
        vec![Value::from(schema.as_str())],
    )
}

/// Seconds since the server started: after a restart command, an uptime shorter than the
/// time since the command began shows the server really restarted.
pub fn server_uptime() -> Stmt {
    Stmt::text(
        "SELECT CAST(VARIABLE_VALUE AS UNSIGNED) FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'UPTIME'",
    )
}

/// The server's clock as a Unix time in whole seconds (`UNIX_TIMESTAMP()`): the directory's
/// clock, which leases and the verified point's age are measured on.
pub fn unix_now() -> Stmt {
    Stmt::text("SELECT CAST(UNIX_TIMESTAMP() AS SIGNED)")
}

/// This session's id.
pub fn connection_id() -> Stmt {
    Stmt::text("SELECT CONNECTION_ID()")
}

/// Whether session `id` is still connected.
pub fn session_exists(id: u64) -> Stmt {
    Stmt::with(
        "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = ?",
        vec![Value::from(id)],
    )
}

/// Ends the statement session `id` is running (a copy's reader on Ctrl-C).
pub fn kill_query(id: u64) -> Stmt {
    Stmt::text(format!("KILL QUERY {id}"))
}

/// Ends session `id` (a statement of a dead owner still running on the server).
pub fn kill_connection(id: u64) -> Stmt {
    Stmt::text(format!("KILL CONNECTION {id}"))
}

/// `COMMIT`.
pub fn commit() -> Stmt {
    Stmt::text("COMMIT")
}

/// `SET SESSION sql_log_bin = 0|1`: whether the session's statements reach the binary log.
/// Fences and the removal of a moved shard's old copy run with it off, so no replica and no
/// channel reading this binary log repeats them.
pub fn sql_log_bin(on: bool) -> Stmt {
    Stmt::text(format!("SET SESSION sql_log_bin = {}", u8::from(on)))
}

// ---------------------------------------------------------------------------------------
// Server state.

/// `@@GLOBAL.version`, read on connect to detect the flavor.
pub fn server_version() -> Stmt {
    Stmt::text("SELECT @@GLOBAL.version")
}

/// `@@GLOBAL.local_infile` (1 when the server accepts `LOAD DATA LOCAL INFILE`).
pub fn local_infile_enabled() -> Stmt {
    Stmt::text("SELECT @@GLOBAL.local_infile")
}

/// The number of threads running now (`Variable_name`, `Value` columns).
pub fn threads_running() -> Stmt {
    Stmt::text("SHOW GLOBAL STATUS LIKE 'Threads_running'")
}

/// Whether the server writes the events its channels apply to its own binary log (what
/// its replicas need to receive them): `log_slave_updates`, a name MariaDB and MySQL
/// before 8.4 both answer to.
pub fn log_replica_updates() -> Stmt {
    Stmt::text("SELECT @@GLOBAL.log_slave_updates")
}

/// The privileges of the session's account (the move's preflight reads them).
pub fn show_grants() -> Stmt {
    Stmt::text("SHOW GRANTS")
}

// ---------------------------------------------------------------------------------------
// Schemas and definitions.

/// `CREATE DATABASE IF NOT EXISTS schema`.
pub fn create_schema_if_not_exists(schema: &Ident) -> Stmt {
    Stmt::text(format!("CREATE DATABASE IF NOT EXISTS {}", schema.quoted()))
}

/// `DROP DATABASE schema`: fails when it does not exist (the drop-source step run by hand
/// checks first).
pub fn drop_schema(schema: &Ident) -> Stmt {
    Stmt::text(format!("DROP DATABASE {}", schema.quoted()))
}

/// `DROP DATABASE IF EXISTS schema`: the target copy removed by an abort, the source copy
/// by the drop-source step. Send it unlogged when the schema must not be dropped on
/// replicas or carried by a channel.
pub fn drop_schema_if_exists(schema: &Ident) -> Stmt {
    Stmt::text(format!("DROP DATABASE IF EXISTS {}", schema.quoted()))
}

/// A definition read with `SHOW CREATE ...` on another node (or schema), replayed as is.
/// Its text comes from a server, not from input; the caller retargets schema names first.
pub fn replay_definition(ddl: &str) -> Stmt {
    Stmt::text(ddl)
}

/// `CREATE DATABASE IF NOT EXISTS schema CHARACTER SET cs COLLATE collation`: a copy's
/// schema with the source schema's defaults (tables, routines and events created in it
/// without their own character set take it).
pub fn create_schema_with_charset(
    schema: &Ident,
    charset: &ContextValue,
    collation: &ContextValue,
) -> Stmt {
    Stmt::text(format!(
        "CREATE DATABASE IF NOT EXISTS {} CHARACTER SET {} COLLATE {}",
        schema.quoted(),
        charset.as_str(),
        collation.as_str()
    ))
}

/// `ALTER DATABASE schema COLLATE collation`: a routine, trigger or event keeps the
/// collation its schema had when it was created (`Database Collation`), so one created
/// under another default is re-created between two of these, as mariadb-dump does.
pub fn alter_schema_collation(schema: &Ident, collation: &ContextValue) -> Stmt {
    Stmt::text(format!(
        "ALTER DATABASE {} COLLATE {}",
        schema.quoted(),
        collation.as_str()
    ))
}

// ---------------------------------------------------------------------------------------
// Stored objects: the kinds of definition a schema holds besides its tables.

/// A stored object other than a table or view.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
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

/// A view or one of the [`ObjectKind`]s: what carries a creation context.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DefinedKind {
    /// A view.
    View,
    /// A trigger, routine or event.
    Object(ObjectKind),
}

impl DefinedKind {
    /// Reads the word [`Self`]'s `Display` writes (`view`, `trigger`, `procedure`, ...).
    pub fn from_word(word: &str) -> Option<DefinedKind> {
        Some(match word {
            "view" => DefinedKind::View,
            "trigger" => DefinedKind::Object(ObjectKind::Trigger),
            "procedure" => DefinedKind::Object(ObjectKind::Procedure),
            "function" => DefinedKind::Object(ObjectKind::Function),
            "event" => DefinedKind::Object(ObjectKind::Event),
            _ => return None,
        })
    }
}

impl std::fmt::Display for DefinedKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = match self {
            DefinedKind::View => "view",
            DefinedKind::Object(ObjectKind::Trigger) => "trigger",
            DefinedKind::Object(ObjectKind::Procedure) => "procedure",
            DefinedKind::Object(ObjectKind::Function) => "function",
            DefinedKind::Object(ObjectKind::Event) => "event",
        };
        f.write_str(s)
    }
}

// ---------------------------------------------------------------------------------------
// Creation context: the session settings a view, routine, trigger or event keeps from the
// session that created it.

/// A session setting read from a server's catalog (a character set, a collation, an
/// sql_mode, a time zone), checked to need no quoting: ASCII letters, digits and
/// `_ , + - : / .`, at most 1024 characters. Such a value reads the same under every
/// sql_mode (ANSI_QUOTES, NO_BACKSLASH_ESCAPES) and in every ASCII-based client
/// character set.
#[derive(
    Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(try_from = "String", into = "String")]
pub struct ContextValue(String);

impl ContextValue {
    /// Validates `value`; `what` names the setting in the error.
    pub fn new(what: &str, value: &str) -> crate::error::Result<Self> {
        let ok = value.len() <= 1024
            && value
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_,+-:/.".contains(c));
        if !ok {
            return Err(crate::error::Error::Usage(format!(
                "unexpected {what} {value:?}: only ASCII letters, digits and _ , + - : / . are accepted"
            )));
        }
        Ok(ContextValue(value.to_string()))
    }

    /// The value.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// As a quoted string literal (no character in it needs escaping).
    fn literal(&self) -> String {
        format!("'{}'", self.0)
    }
}

impl TryFrom<String> for ContextValue {
    type Error = crate::error::Error;
    fn try_from(s: String) -> crate::error::Result<Self> {
        ContextValue::new("session setting", &s)
    }
}

impl From<ContextValue> for String {
    fn from(v: ContextValue) -> String {
        v.0
    }
}

impl fmt::Display for ContextValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The session an object was created in, as its catalog rows record it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CreationContext {
    /// `character_set_client`: the character set its text was written in.
    pub character_set_client: ContextValue,
    /// `collation_connection`: how its string literals compare.
    pub collation_connection: ContextValue,
    /// `sql_mode` (routines, triggers and events; views keep none).
    pub sql_mode: Option<ContextValue>,
    /// `time_zone` (events: their schedule is read in it).
    pub time_zone: Option<ContextValue>,
}

/// Saves the session's sql_mode, client character set, connection collation and time zone
/// in user variables, for [`restore_session_context`] after objects were created in their
/// own contexts.
pub fn save_session_context() -> Stmt {
    Stmt::text(
        "SET @shardctl_sql_mode = @@SESSION.sql_mode, @shardctl_cs_client = @@SESSION.character_set_client, \
         @shardctl_collation_connection = @@SESSION.collation_connection, @shardctl_time_zone = @@SESSION.time_zone",
    )
}

/// Restores what [`save_session_context`] saved.
pub fn restore_session_context() -> Stmt {
    Stmt::text(
        "SET SESSION character_set_client = @shardctl_cs_client, collation_connection = @shardctl_collation_connection, \
         time_zone = @shardctl_time_zone, sql_mode = @shardctl_sql_mode",
    )
}

/// Sets the session to an object's creation context (sql_mode last, so the statement
/// itself is read under the session's previous mode; its values need no quoting under any).
pub fn session_context(ctx: &CreationContext) -> Stmt {
    let mut sets = vec![
        format!(
            "character_set_client = {}",
            ctx.character_set_client.literal()
        ),
        format!(
            "collation_connection = {}",
            ctx.collation_connection.literal()
        ),
    ];
    if let Some(tz) = &ctx.time_zone {
        sets.push(format!("time_zone = {}", tz.literal()));
    }
    if let Some(mode) = &ctx.sql_mode {
        sets.push(format!("sql_mode = {}", mode.literal()));
    }
    Stmt::text(format!("SET SESSION {}", sets.join(", ")))
}

/// The session's sql_mode.
pub fn session_sql_mode() -> Stmt {
    Stmt::text("SELECT @@SESSION.sql_mode")
}

/// `user@host` (as information_schema writes a definer) as `` `user`@`host` ``; a role
/// (no `@`) as `` `role` ``.
pub fn definer_clause(definer: &str) -> String {
    let quote = |s: &str| format!("`{}`", s.replace('`', "``"));
    match definer.rsplit_once('@') {
        Some((user, host)) => format!("{}@{}", quote(user), quote(host)),
        None => quote(definer),
    }
}

/// `ALTER DEFINER=... EVENT s.e ENABLE`: an event created disabled on a target comes alive
/// after the flip. The definer is named (ALTER EVENT would otherwise make the session's
/// account the definer); send it in the event's [`session_context`] (it would otherwise
/// take the session's client character set and collation too).
pub fn enable_event(schema: &Ident, event: &Ident, definer: &str) -> Stmt {
    Stmt::text(format!(
        "ALTER DEFINER={} EVENT {} ENABLE",
        definer_clause(definer),
        qualified(schema, event)
    ))
}

/// The copy's writer sessions: values arrive as the bytes the readers got (`SET NAMES
/// binary`: no conversion on the way in), timestamps in UTC as the readers read them, a 0
/// in an AUTO_INCREMENT column stays 0, and no value is silently changed (strict).
pub fn copy_writer_session() -> Stmt {
    Stmt::text(
        "SET NAMES binary, SESSION time_zone = '+00:00', \
         sql_mode = 'NO_AUTO_VALUE_ON_ZERO,STRICT_ALL_TABLES,NO_ENGINE_SUBSTITUTION'",
    )
}

/// How long a paused copy's sessions may sit still before their server ends them, seconds.
pub const COPY_PAUSE_SECS: u64 = 86_400;

/// Every session of the native copy: a reader parked in the middle of its streamed SELECT
/// while the copy is paused (`shardctl pause`) is not cut off after the default 60 s of
/// `net_write_timeout`, nor an idle writer after `wait_timeout`, for up to
/// [`COPY_PAUSE_SECS`].
pub fn copy_pausable_session() -> Stmt {
    Stmt::text(format!(
        "SET SESSION net_write_timeout = {COPY_PAUSE_SECS}, wait_timeout = {COPY_PAUSE_SECS}"
    ))
}

/// The copy's reader sessions: string values as stored, in their column's own character
/// set (no conversion on the way out), timestamps in UTC.
pub fn copy_reader_session() -> Stmt {
    Stmt::text("SET SESSION character_set_results = binary, time_zone = '+00:00'")
}

// ---------------------------------------------------------------------------------------
// Catalog reads: names are bound values here, compared with information_schema's columns.

/// The columns of a table that can be written, in order: INVISIBLE columns included,
/// generated (VIRTUAL / STORED) columns left out (MySQL's DEFAULT_GENERATED marks a plain
/// column with an expression default, which is written).
pub fn writable_columns(schema: &Ident, table: &Ident) -> Stmt {
    Stmt::with(
        "SELECT column_name FROM information_schema.columns WHERE table_schema = ? AND table_name = ? \
         AND extra NOT LIKE '%VIRTUAL GENERATED%' AND extra NOT LIKE '%STORED GENERATED%' \
         ORDER BY ordinal_position",
        vec![Value::from(schema.as_str()), Value::from(table.as_str())],
    )
}

/// The data types of a table's columns, lower case, in order.
pub fn column_types(schema: &Ident, table: &Ident) -> Stmt {
    Stmt::with(
        "SELECT LOWER(data_type) FROM information_schema.columns WHERE table_schema = ? AND table_name = ? \
         ORDER BY ordinal_position",
        vec![Value::from(schema.as_str()), Value::from(table.as_str())],
    )
}

/// The YEAR columns of a table: LOAD DATA reads a field `0` as the year 2000, so the copy
/// writes their values with four digits (`0000`).
pub fn year_columns(schema: &Ident, table: &Ident) -> Stmt {
    Stmt::with(
        "SELECT column_name FROM information_schema.columns WHERE table_schema = ? AND table_name = ? \
         AND LOWER(data_type) = 'year' ORDER BY ordinal_position",
        vec![Value::from(schema.as_str()), Value::from(table.as_str())],
    )
}

/// The primary-key columns of a table, in key order.
pub fn primary_key_columns(schema: &Ident, table: &Ident) -> Stmt {
    Stmt::with(
        "SELECT column_name FROM information_schema.statistics WHERE table_schema = ? AND table_name = ? \
         AND index_name = 'PRIMARY' ORDER BY seq_in_index",
        vec![Value::from(schema.as_str()), Value::from(table.as_str())],
    )
}

/// The names of a schema's triggers, procedures, functions or events, in name order.
pub fn object_names(schema: &Ident, kind: ObjectKind) -> Stmt {
    let sql = match kind {
        ObjectKind::Trigger => {
            "SELECT trigger_name FROM information_schema.triggers WHERE trigger_schema = ? \
             ORDER BY trigger_name"
        }
        ObjectKind::Procedure => {
            "SELECT routine_name FROM information_schema.routines WHERE routine_schema = ? \
             AND routine_type = 'PROCEDURE' ORDER BY routine_name"
        }
        ObjectKind::Function => {
            "SELECT routine_name FROM information_schema.routines WHERE routine_schema = ? \
             AND routine_type = 'FUNCTION' ORDER BY routine_name"
        }
        ObjectKind::Event => {
            "SELECT event_name FROM information_schema.events WHERE event_schema = ? \
             ORDER BY event_name"
        }
    };
    Stmt::with(sql, vec![Value::from(schema.as_str())])
}

/// `SHOW CREATE TRIGGER|PROCEDURE|FUNCTION|EVENT s.name`.
pub fn show_create_object(schema: &Ident, kind: ObjectKind, name: &Ident) -> Stmt {
    Stmt::text(format!(
        "SHOW CREATE {} {}",
        kind.keyword(),
        qualified(schema, name)
    ))
}

/// A schema's default character set and collation.
pub fn schema_charset(schema: &Ident) -> Stmt {
    Stmt::with(
        "SELECT default_character_set_name, default_collation_name FROM information_schema.schemata \
         WHERE schema_name = ?",
        vec![Value::from(schema.as_str())],
    )
}

/// A schema's triggers in the order they fire: by table, timing, event and ACTION_ORDER
/// (re-created in this order, each one after those before it, they keep their order).
pub fn triggers_in_order(schema: &Ident) -> Stmt {
    Stmt::with(
        "SELECT trigger_name FROM information_schema.triggers WHERE trigger_schema = ? \
         ORDER BY event_object_table, action_timing, event_manipulation, action_order",
        vec![Value::from(schema.as_str())],
    )
}

/// A schema's BEFORE triggers in the order they fire for each table and event: table,
/// event (INSERT, UPDATE, DELETE) and name. A switched guard goes first in its chain (see
/// [`switched_guard_trigger`]), so it is installed PRECEDES the first of these.
pub fn before_triggers_in_order(schema: &Ident) -> Stmt {
    Stmt::with(
        "SELECT event_object_table, event_manipulation, trigger_name FROM information_schema.triggers \
         WHERE trigger_schema = ? AND action_timing = 'BEFORE' \
         ORDER BY event_object_table, event_manipulation, action_order",
        vec![Value::from(schema.as_str())],
    )
}

/// A schema's events with what enabling one needs: name, status, definer and creation
/// context, in name order.
pub fn events_status(schema: &Ident) -> Stmt {
    Stmt::with(
        "SELECT event_name, status, definer, character_set_client, collation_connection, sql_mode, time_zone \
         FROM information_schema.events WHERE event_schema = ? ORDER BY event_name",
        vec![Value::from(schema.as_str())],
    )
}

/// A schema's views as information_schema describes them (compared field by field).
pub fn views_described(schema: &Ident) -> Stmt {
    Stmt::with(
        "SELECT table_name, definer, security_type, check_option, algorithm, \
         character_set_client, collation_connection \
         FROM information_schema.views WHERE table_schema = ? ORDER BY table_name",
        vec![Value::from(schema.as_str())],
    )
}

/// A schema's triggers as information_schema describes them.
pub fn triggers_described(schema: &Ident) -> Stmt {
    Stmt::with(
        "SELECT trigger_name, event_object_table, action_timing, event_manipulation, \
         CAST(action_order AS CHAR), action_orientation, definer, sql_mode, character_set_client, \
         collation_connection, database_collation \
         FROM information_schema.triggers WHERE trigger_schema = ? ORDER BY trigger_name",
        vec![Value::from(schema.as_str())],
    )
}

/// A schema's procedures and functions as information_schema describes them.
pub fn routines_described(schema: &Ident) -> Stmt {
    Stmt::with(
        "SELECT routine_name, routine_type, definer, security_type, sql_data_access, is_deterministic, \
         routine_comment, sql_mode, character_set_client, collation_connection, database_collation \
         FROM information_schema.routines WHERE routine_schema = ? ORDER BY routine_type, routine_name",
        vec![Value::from(schema.as_str())],
    )
}

/// A schema's events as information_schema describes them (times as text, in the event's
/// own time zone).
pub fn events_described(schema: &Ident) -> Stmt {
    Stmt::with(
        "SELECT event_name, definer, time_zone, event_type, CAST(execute_at AS CHAR), \
         CAST(interval_value AS CHAR), interval_field, CAST(starts AS CHAR), CAST(ends AS CHAR), status, \
         on_completion, event_comment, sql_mode, character_set_client, collation_connection, database_collation \
         FROM information_schema.events WHERE event_schema = ? ORDER BY event_name",
        vec![Value::from(schema.as_str())],
    )
}

/// The tables and views of a schema with their types, in name order.
pub fn list_tables(schema: &Ident) -> Stmt {
    Stmt::with(
        "SELECT table_name, table_type FROM information_schema.tables WHERE table_schema = ? \
         ORDER BY table_name",
        vec![Value::from(schema.as_str())],
    )
}

/// `SHOW CREATE TABLE s.t`, or `SHOW CREATE VIEW` for a view.
pub fn show_create_table(schema: &Ident, table: &Ident, is_view: bool) -> Stmt {
    let kind = if is_view { "VIEW" } else { "TABLE" };
    Stmt::text(format!("SHOW CREATE {kind} {}", qualified(schema, table)))
}

/// How many schemas are named `schema` (0 or 1).
pub fn count_schemas_named(schema: &Ident) -> Stmt {
    Stmt::with(
        "SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name = ?",
        vec![Value::from(schema.as_str())],
    )
}

/// Base tables, estimated rows and data plus index bytes of every schema on the node.
pub fn schema_sizes() -> Stmt {
    Stmt::text(
        "SELECT table_schema, COUNT(*), COALESCE(SUM(table_rows), 0), COALESCE(SUM(data_length + index_length), 0) \
         FROM information_schema.tables WHERE table_type = 'BASE TABLE' GROUP BY table_schema",
    )
}

/// The tables of `schemas` that are not views (base, system-versioned, sequences), as
/// (schema, table) in name order: what [`analyze_tables`] refreshes, for all of a node's
/// shard schemas in one read.
pub fn analyzable_tables(schemas: &[Ident]) -> Stmt {
    Stmt::with(
        format!(
            "SELECT table_schema, table_name FROM information_schema.tables \
             WHERE table_schema IN ({}) AND table_type <> 'VIEW' ORDER BY table_schema, table_name",
            vec!["?"; schemas.len()].join(", ")
        ),
        schemas.iter().map(|s| Value::from(s.as_str())).collect(),
    )
}

/// `ANALYZE NO_WRITE_TO_BINLOG TABLE s1.t1, s1.t2, s2.t1, ...`: refreshes the tables'
/// statistics (`status --exact`, `rebalance plan`) so information_schema's sizes are
/// current; the tables may be of several schemas. Not written to the binary log, so no
/// replica or channel carries it.
pub fn analyze_tables(tables: &[(Ident, Ident)]) -> Stmt {
    let list: Vec<String> = tables.iter().map(|(s, t)| qualified(s, t)).collect();
    Stmt::text(format!(
        "ANALYZE NO_WRITE_TO_BINLOG TABLE {}",
        list.join(", ")
    ))
}

/// The estimated row count of each base table of a schema.
pub fn table_row_estimates(schema: &Ident) -> Stmt {
    Stmt::with(
        "SELECT table_name, COALESCE(table_rows, 0) FROM information_schema.tables WHERE table_schema = ? \
         AND table_type = 'BASE TABLE'",
        vec![Value::from(schema.as_str())],
    )
}

/// The foreign-key columns declared in a schema that reference the same schema.
pub fn foreign_keys(schema: &Ident) -> Stmt {
    Stmt::with(
        "SELECT k.table_name, k.column_name, k.referenced_table_name, k.referenced_column_name \
         FROM information_schema.key_column_usage k \
         JOIN information_schema.table_constraints c \
           ON c.constraint_schema = k.constraint_schema AND c.table_name = k.table_name \
          AND c.constraint_name = k.constraint_name \
         WHERE c.constraint_type = 'FOREIGN KEY' AND k.table_schema = ? \
           AND k.referenced_table_schema = k.table_schema \
         ORDER BY k.table_name, k.column_name",
        vec![Value::from(schema.as_str())],
    )
}

/// `@@GLOBAL.performance_schema` (1 when it is on).
pub fn performance_schema_enabled() -> Stmt {
    Stmt::text("SELECT @@GLOBAL.performance_schema")
}

/// Table I/O operations per schema since the server started, from performance_schema.
pub fn table_io_by_schema() -> Stmt {
    Stmt::text(
        "SELECT object_schema, CAST(SUM(count_star) AS UNSIGNED) FROM performance_schema.table_io_waits_summary_by_table \
         WHERE object_schema IS NOT NULL GROUP BY object_schema",
    )
}

/// The exact row count of a table.
pub fn count_rows(schema: &Ident, table: &Ident) -> Stmt {
    Stmt::text(format!("SELECT COUNT(*) FROM {}", qualified(schema, table)))
}

/// `CHECKSUM TABLE s.t`.
pub fn checksum_table(schema: &Ident, table: &Ident) -> Stmt {
    Stmt::text(format!("CHECKSUM TABLE {}", qualified(schema, table)))
}

/// Every row and column of a table (small global tables).
pub fn select_all(schema: &Ident, table: &Ident) -> Stmt {
    Stmt::text(format!("SELECT * FROM {}", qualified(schema, table)))
}

// ---------------------------------------------------------------------------------------
// Copying rows.

/// A multi-row `INSERT INTO s.t (cols) VALUES (?, ...), ...` of `rows`, every value bound.
/// Each row must have one value per column.
pub fn insert_values(
    schema: &Ident,
    table: &Ident,
    columns: &[Ident],
    rows: &[Vec<Value>],
) -> Stmt {
    let one = format!("({})", vec!["?"; columns.len()].join(", "));
    Stmt::with(
        format!(
            "INSERT INTO {} ({}) VALUES {}",
            qualified(schema, table),
            column_list(columns),
            vec![one.as_str(); rows.len()].join(", ")
        ),
        rows.iter().flatten().cloned().collect(),
    )
}

/// `LOAD DATA LOCAL INFILE` into `s.t (cols)`, taking the client's data byte for byte
/// (`CHARACTER SET binary`) as tab-separated fields, `\` escapes, `\N` for NULL and one
/// row per line. The file name is a placeholder: the connection feeds the data from memory.
pub fn load_data_local(schema: &Ident, table: &Ident, columns: &[Ident]) -> Stmt {
    Stmt::text(format!(
        "LOAD DATA LOCAL INFILE 'shardctl' INTO TABLE {} CHARACTER SET binary \
         FIELDS TERMINATED BY '\\t' ESCAPED BY '\\\\' LINES TERMINATED BY '\\n' ({})",
        qualified(schema, table),
        column_list(columns)
    ))
}

/// The largest packet the server takes (the native copy keeps each multi-row INSERT below it).
pub fn max_allowed_packet() -> Stmt {
    Stmt::text("SELECT @@max_allowed_packet")
}

/// `ALTER TABLE s.t DROP INDEX a, DROP INDEX b`: the native copy drops a fresh (empty)
/// table's secondary indexes before loading it, and adds them back with [`add_indexes`].
pub fn drop_indexes(schema: &Ident, table: &Ident, indexes: &[Ident]) -> Stmt {
    let drops: Vec<String> = indexes
        .iter()
        .map(|i| format!("DROP INDEX {}", i.quoted()))
        .collect();
    Stmt::text(format!(
        "ALTER TABLE {} {}",
        qualified(schema, table),
        drops.join(", ")
    ))
}

/// `ALTER TABLE s.t ADD <clause>, ADD <clause>`: the secondary indexes dropped by
/// [`drop_indexes`], added back once the rows are in (one sorted build each). Each clause is
/// an index line of the source's `SHOW CREATE TABLE` (`KEY `k_1` (`k`)`), replayed as is in
/// the order it was shown, so the definition comes out the same.
pub fn add_indexes(schema: &Ident, table: &Ident, clauses: &[String]) -> Stmt {
    let adds: Vec<String> = clauses.iter().map(|c| format!("ADD {c}")).collect();
    Stmt::text(format!(
        "ALTER TABLE {} {}",
        qualified(schema, table),
        adds.join(", ")
    ))
}

/// `ALTER TABLE s.t ADD <clause>, ...`: foreign keys left out of a table while its
/// tablespace was imported, added back as the source's `SHOW CREATE TABLE` gave them (with
/// `foreign_key_checks` off, in place, no rebuild).
pub fn add_constraints(schema: &Ident, table: &Ident, clauses: &[String]) -> Stmt {
    add_indexes(schema, table, clauses)
}

/// Reads `columns` of a whole table, in `order_by` order when it is not empty (the copy's
/// readers stream it inside their snapshot).
pub fn select_table(schema: &Ident, table: &Ident, columns: &[Ident], order_by: &[Ident]) -> Stmt {
    select_table_where(schema, table, columns, order_by, None)
}

/// [`select_table`] restricted to the rows `filter` matches (a key move's copy reads only
/// the keys that move).
pub fn select_table_where(
    schema: &Ident,
    table: &Ident,
    columns: &[Ident],
    order_by: &[Ident],
    filter: Option<&Condition>,
) -> Stmt {
    let order = if order_by.is_empty() {
        String::new()
    } else {
        format!(" ORDER BY {}", column_list(order_by))
    };
    let (filter, params) = match filter {
        Some(c) => (format!(" WHERE {}", c.sql), c.params.clone()),
        None => (String::new(), Vec::new()),
    };
    Stmt::with(
        format!(
            "SELECT {} FROM {}{filter}{order}",
            column_list(columns),
            qualified(schema, table)
        ),
        params,
    )
}

/// One table's rows copied into another on the same server (a physical copy's FULLTEXT
/// table into its fresh copy): `INSERT INTO to.table (cols) SELECT cols FROM
/// from.from_table`, `columns` the writable ones. Send [`foreign_key_checks`]`(false)`
/// first.
pub fn copy_rows_within_node(
    to: &Ident,
    table: &Ident,
    from: &Ident,
    from_table: &Ident,
    columns: &[Ident],
) -> Stmt {
    let cols = column_list(columns);
    Stmt::text(format!(
        "INSERT INTO {} ({cols}) SELECT {cols} FROM {}",
        qualified(to, table),
        qualified(from, from_table)
    ))
}

/// The rows a condition from [`not_owned`] leaves out: the keys a shard owns (a merge's
/// retired shard, in the survivor's tables).
pub fn owned(not_owned: &Condition) -> Condition {
    Condition {
        sql: format!("(NOT {})", not_owned.sql),
        params: not_owned.params.clone(),
    }
}

/// `DELETE FROM schema.table WHERE cond`: a merge's survivor loses the retired shard's keys
/// (before a copy is made again, or when a merge is rolled back).
pub fn delete_where(schema: &Ident, table: &Ident, cond: &Condition) -> Stmt {
    Stmt::with(
        format!(
            "DELETE FROM {} WHERE {}",
            qualified(schema, table),
            cond.sql
        ),
        cond.params.clone(),
    )
}

/// Whether any row of `schema.table` matches `cond` (`SELECT 1 ... LIMIT 1`).
pub fn any_where(schema: &Ident, table: &Ident, cond: &Condition) -> Stmt {
    Stmt::with(
        format!(
            "SELECT 1 FROM {} WHERE {} LIMIT 1",
            qualified(schema, table),
            cond.sql
        ),
        cond.params.clone(),
    )
}

// ---------------------------------------------------------------------------------------
// The shard fence and the old copy kept after a move.

/// A table renamed to a hidden name inside its own schema. Journaled (the shard fence's
/// `fenced_tables`) as `[schema, table, hidden name]`, and validated as it is read back: a
/// name that is no plain identifier does not deserialize.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(
    into = "(String, String, String)",
    try_from = "(String, String, String)"
)]
pub struct HiddenTable {
    /// The schema (the same before and after).
    pub schema: Ident,
    /// The table's own name.
    pub table: Ident,
    /// The name it is hidden under.
    pub hidden: Ident,
}

impl TryFrom<(String, String, String)> for HiddenTable {
    type Error = crate::error::Error;

    fn try_from((schema, table, hidden): (String, String, String)) -> crate::Result<Self> {
        Ok(HiddenTable {
            schema: Ident::new("schema", &schema)?,
            table: Ident::new("table", &table)?,
            hidden: Ident::new("table", &hidden)?,
        })
    }
}

impl From<HiddenTable> for (String, String, String) {
    fn from(t: HiddenTable) -> Self {
        (
            t.schema.to_string(),
            t.table.to_string(),
            t.hidden.to_string(),
        )
    }
}

/// The prefix of every name shardctl hides a table under.
pub const HIDDEN_PREFIX: &str = "_shardctl_op";

/// The hidden name of the `n`th table an operation renames: `_shardctl_op<op>_<n>`. Always
/// a valid identifier (at most 53 characters).
pub fn hidden_table_name(op: u64, n: usize) -> Ident {
    Ident::new("table", &format!("_shardctl_op{op}_{n}"))
        .expect("_shardctl_op<digits>_<digits> is a plain identifier of at most 53 characters")
}

/// The name `shard remove` hides the `n`th table of shard `shard` under while it counts its
/// rows, in the run started at Unix time `run`: `_shardctl_rm<shard>_<run>_<n>` (at most 46
/// characters; a later run never reuses a name an interrupted one left).
pub fn removed_table_name(shard: u32, run: u64, n: usize) -> Ident {
    Ident::new("table", &format!("{REMOVED_PREFIX}{shard}_{run}_{n}")).expect(
        "_shardctl_rm<digits>_<digits>_<digits> is a plain identifier of at most 46 characters",
    )
}

/// Whether `name` is one [`removed_table_name`] gives.
pub fn is_removed_table_name(name: &str) -> bool {
    name.starts_with(REMOVED_PREFIX)
}

const REMOVED_PREFIX: &str = "_shardctl_rm";

/// One atomic `RENAME TABLE s.t TO s.hidden, ...` of every table listed. Two uses:
/// raising the shard fence (clients of the shard get error 1146 and look it up again; send
/// [`lock_wait_timeout`] first so it waits a bounded time for in-flight transactions), and
/// the drop-source step's `keep`, which takes the old copy out of reach. Send it unlogged
/// (`Server::exec_unlogged`). None when there is nothing to rename.
pub fn rename_to_hidden(tables: &[HiddenTable]) -> Option<Stmt> {
    rename(tables.iter().map(|h| (&h.schema, &h.table, &h.hidden)))
}

/// One atomic `RENAME TABLE s.hidden TO s.t, ...`: lifts the shard fence raised with
/// [`rename_to_hidden`] on the same list. Send it unlogged. None when there is nothing to
/// rename.
pub fn rename_from_hidden(tables: &[HiddenTable]) -> Option<Stmt> {
    rename(tables.iter().map(|h| (&h.schema, &h.hidden, &h.table)))
}

/// `DROP <kind> IF EXISTS schema.name` for a view, trigger, procedure, function or event:
/// the objects a revert re-creates on the old copy, removed first so that a retried
/// attempt creates them afresh.
pub fn drop_defined_if_exists(schema: &Ident, kind: DefinedKind, name: &Ident) -> Stmt {
    Stmt::text(format!(
        "DROP {} IF EXISTS {}",
        kind.to_string().to_uppercase(),
        qualified(schema, name)
    ))
}

/// One atomic `RENAME TABLE from.now TO to.then, ...` of every table listed as (its name
/// now, its name in `to`): the old copy's base tables moved out of the shard's schema (which
/// is then dropped, emptied, under the fence), a fenced table given its own name back. A
/// table with triggers cannot change schema: drop them first. Send it unlogged. None when
/// there is nothing to move.
pub fn move_tables(from: &Ident, tables: &[(Ident, Ident)], to: &Ident) -> Option<Stmt> {
    let list: Vec<String> = tables
        .iter()
        .map(|(now, then)| format!("{} TO {}", qualified(from, now), qualified(to, then)))
        .collect();
    (!list.is_empty()).then(|| Stmt::text(format!("RENAME TABLE {}", list.join(", "))))
}

/// `?, ?, ...`: one placeholder per schema, with the schemas as their values.
fn schema_placeholders(schemas: &[Ident]) -> (String, Vec<Value>) {
    (
        vec!["?"; schemas.len()].join(", "),
        schemas
            .iter()
            .map(|s| Value::from(s.as_str().as_bytes().to_vec()))
            .collect(),
    )
}

/// The open InnoDB transactions of other sessions (never this one, never a replication
/// or system thread), as (session id, seconds open, user, host, default schema, command):
/// the candidates that could hold the shard fence's RENAME back. Never the statement text,
/// which may hold row data or a password. Sessions whose
/// default schema is one of `schemas` come first.
pub fn open_transactions(schemas: &[Ident]) -> Stmt {
    let (marks, params) = schema_placeholders(schemas);
    let in_schemas = if schemas.is_empty() {
        "0".to_string()
    } else {
        format!("p.DB IN ({marks})")
    };
    Stmt::with(
        format!(
            "SELECT CAST(t.trx_mysql_thread_id AS UNSIGNED), \
             CAST(GREATEST(TIMESTAMPDIFF(SECOND, t.trx_started, NOW()), 0) AS UNSIGNED), \
             p.USER, p.HOST, p.DB, p.COMMAND \
             FROM information_schema.INNODB_TRX t \
             JOIN information_schema.PROCESSLIST p ON p.ID = t.trx_mysql_thread_id \
             WHERE t.trx_mysql_thread_id <> CONNECTION_ID() AND p.USER <> 'system user' \
             AND p.COMMAND NOT IN ('Binlog Dump', 'Binlog Dump GTID', 'Slave_IO', 'Slave_SQL', 'Slave_worker', 'Daemon') \
             ORDER BY {in_schemas} DESC, t.trx_started"
        ),
        params,
    )
}

/// The sessions (other than this one) holding a metadata lock on a table of `schemas`,
/// from MariaDB's `information_schema.METADATA_LOCK_INFO` (the metadata_lock_info plugin;
/// error 1109 where it is not loaded): one row per session id.
pub fn metadata_lock_holders_mariadb(schemas: &[Ident]) -> Stmt {
    let (marks, params) = schema_placeholders(schemas);
    Stmt::with(
        format!(
            "SELECT DISTINCT CAST(THREAD_ID AS UNSIGNED) FROM information_schema.METADATA_LOCK_INFO \
             WHERE TABLE_SCHEMA IN ({marks}) AND THREAD_ID <> CONNECTION_ID()"
        ),
        params,
    )
}

/// [`metadata_lock_holders_mariadb`] on MySQL: granted locks of
/// `performance_schema.metadata_locks` (empty or an error where performance_schema is off).
pub fn metadata_lock_holders_mysql(schemas: &[Ident]) -> Stmt {
    let (marks, params) = schema_placeholders(schemas);
    Stmt::with(
        format!(
            "SELECT DISTINCT CAST(t.PROCESSLIST_ID AS UNSIGNED) FROM performance_schema.metadata_locks m \
             JOIN performance_schema.threads t ON t.THREAD_ID = m.OWNER_THREAD_ID \
             WHERE m.OBJECT_TYPE = 'TABLE' AND m.LOCK_STATUS = 'GRANTED' AND m.OBJECT_SCHEMA IN ({marks}) \
             AND t.PROCESSLIST_ID <> CONNECTION_ID()"
        ),
        params,
    )
}

fn rename<'a>(pairs: impl Iterator<Item = (&'a Ident, &'a Ident, &'a Ident)>) -> Option<Stmt> {
    let list: Vec<String> = pairs
        .map(|(schema, from, to)| {
            format!("{} TO {}", qualified(schema, from), qualified(schema, to))
        })
        .collect();
    (!list.is_empty()).then(|| Stmt::text(format!("RENAME TABLE {}", list.join(", "))))
}

// ---------------------------------------------------------------------------------------
// Prune: the rows a shard does not own, walked in primary-key chunks.

/// How a sharding column's values are compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyKind {
    /// A signed 64-bit integer, compared as a number; hashed as its decimal text (without a
    /// ZEROFILL column's leading zeros).
    Int,
    /// A string compared byte by byte (`CAST(col AS BINARY)`); hashed as its bytes.
    Bytes,
}

/// The keys of a shard's sharding column that it does NOT own, as decided by the ownership
/// logic (src/prune/predicate.rs). Values are bound as they are given.
#[derive(Debug, Clone, PartialEq)]
pub enum NotOwned {
    /// Keys below `lower` or, when there is one, at or above `upper`.
    OutsideRange {
        /// The shard's lower bound (inclusive).
        lower: Value,
        /// The next shard's lower bound (exclusive), if any.
        upper: Option<Value>,
    },
    /// Keys other than these.
    NotIn(Vec<Value>),
    /// Keys whose MD5 (hex) is not in `(after, up_to]`, an arc that does not wrap
    /// (`after < up_to`).
    OutsideArc {
        /// The shard's ring point.
        after: Value,
        /// The next ring point.
        up_to: Value,
    },
    /// Keys whose MD5 (hex) is not in the arc from `after` past the top of the ring round
    /// to `up_to` (`after > up_to`).
    OutsideWrappedArc {
        /// The shard's ring point.
        after: Value,
        /// The next ring point.
        up_to: Value,
    },
    /// No key: the shard owns them all (a ring of one point).
    Nothing,
}

/// The condition matching the rows whose `column` holds a key the shard does not own.
pub fn not_owned(column: &Ident, kind: KeyKind, what: &NotOwned) -> Condition {
    let col = match kind {
        KeyKind::Int => column.quoted(),
        KeyKind::Bytes => format!("CAST({} AS BINARY)", column.quoted()),
    };
    let hashed = match kind {
        // `+ 0`: the number's own decimal text, as the router hashes it; a ZEROFILL
        // column's CAST alone reads `00042` where the router hashes `42`.
        KeyKind::Int => format!("MD5(CAST({} + 0 AS CHAR))", column.quoted()),
        KeyKind::Bytes => format!("MD5({})", column.quoted()),
    };
    let (sql, params) = match what {
        NotOwned::OutsideRange {
            lower,
            upper: Some(upper),
        } => (
            format!("({col} < ? OR {col} >= ?)"),
            vec![lower.clone(), upper.clone()],
        ),
        NotOwned::OutsideRange { lower, upper: None } => {
            (format!("({col} < ?)"), vec![lower.clone()])
        }
        NotOwned::NotIn(values) => (
            format!("({col} NOT IN ({}))", vec!["?"; values.len()].join(", ")),
            values.clone(),
        ),
        NotOwned::OutsideArc { after, up_to } => (
            format!("NOT ({hashed} > ? AND {hashed} <= ?)"),
            vec![after.clone(), up_to.clone()],
        ),
        NotOwned::OutsideWrappedArc { after, up_to } => (
            format!("NOT ({hashed} > ? OR {hashed} <= ?)"),
            vec![after.clone(), up_to.clone()],
        ),
        NotOwned::Nothing => ("(FALSE)".to_string(), Vec::new()),
    };
    Condition { sql, params }
}

/// Which side of a primary-key value a keyset condition takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keyset {
    /// Rows strictly after the value.
    After,
    /// Rows up to and including the value.
    UpTo,
}

/// `(a, b) > (?, ?)` (or `<=`) written out so every server uses the primary key for it:
/// `(a > ?) OR (a = ? AND b > ?)`. `values` holds one value per key column.
pub fn keyset(pk: &[Ident], values: &[Value], side: Keyset) -> Condition {
    let strict = match side {
        Keyset::After => ">",
        Keyset::UpTo => "<",
    };
    let mut terms = Vec::new();
    let mut params = Vec::new();
    for i in 0..pk.len() {
        let mut parts = Vec::new();
        for j in 0..i {
            parts.push(format!("{} = ?", pk[j].quoted()));
            params.push(values[j].clone());
        }
        let last = if i == pk.len() - 1 && side == Keyset::UpTo {
            "<="
        } else {
            strict
        };
        parts.push(format!("{} {last} ?", pk[i].quoted()));
        params.push(values[i].clone());
        terms.push(format!("({})", parts.join(" AND ")));
    }
    Condition {
        sql: format!("({})", terms.join(" OR ")),
        params,
    }
}

/// ` WHERE <keyset after>` and its values, or nothing when `after` is None (from the start).
fn where_after(pk: &[Ident], after: Option<&[Value]>) -> (String, Vec<Value>) {
    match after {
        Some(v) => {
            let c = keyset(pk, v, Keyset::After);
            (format!(" WHERE {}", c.sql), c.params)
        }
        None => (String::new(), Vec::new()),
    }
}

/// The rows `before` does not match and `after` does: rows a shard owns now and would no
/// longer own after a mapping change (both are [`not_owned`] conditions over the same
/// column, under the mapping before and after).
pub fn newly_not_owned(before: &Condition, after: &Condition) -> Condition {
    let mut params = before.params.clone();
    params.extend(after.params.iter().cloned());
    Condition {
        sql: format!("(NOT {} AND {})", before.sql, after.sql),
        params,
    }
}

/// `SELECT column FROM s.t WHERE cond LIMIT 1`: one key matching `cond`, if any (a
/// refusal names it).
pub fn first_key_where(schema: &Ident, table: &Ident, column: &Ident, cond: &Condition) -> Stmt {
    Stmt::with(
        format!(
            "SELECT {} FROM {} WHERE {} LIMIT 1",
            column.quoted(),
            qualified(schema, table),
            cond.sql
        ),
        cond.params.clone(),
    )
}

/// `SELECT 1 FROM s.t LIMIT 1`: a row when the table holds any.
pub fn any_row(schema: &Ident, table: &Ident) -> Stmt {
    Stmt::text(format!(
        "SELECT 1 FROM {} LIMIT 1",
        qualified(schema, table)
    ))
}

/// The type of one column (`information_schema.columns.data_type`, e.g. `int`,
/// `varchar`), with whether its table is a base table; no row when the column (or table)
/// does not exist.
pub fn column_data_type(schema: &Ident, table: &Ident, column: &Ident) -> Stmt {
    Stmt::with(
        "SELECT c.data_type, t.table_type FROM information_schema.columns c \
         JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name \
         WHERE c.table_schema = ? AND c.table_name = ? AND c.column_name = ?",
        vec![
            Value::from(schema.as_str()),
            Value::from(table.as_str()),
            Value::from(column.as_str()),
        ],
    )
}

/// `SELECT COUNT(*) FROM s.t WHERE cond`.
pub fn count_where(schema: &Ident, table: &Ident, cond: &Condition) -> Stmt {
    Stmt::with(
        format!(
            "SELECT COUNT(*) FROM {} WHERE {}",
            qualified(schema, table),
            cond.sql
        ),
        cond.params.clone(),
    )
}

/// The primary keys of the next chunk of at most `limit` rows, in key order, after the key
/// `after` (from the start when None): the last one is the chunk's upper bound.
pub fn next_chunk_keys(
    schema: &Ident,
    table: &Ident,
    pk: &[Ident],
    after: Option<&[Value]>,
    limit: u64,
) -> Stmt {
    let pk_list = column_list(pk);
    let (cond, params) = where_after(pk, after);
    Stmt::with(
        format!(
            "SELECT {pk_list} FROM {}{cond} ORDER BY {pk_list} LIMIT {limit}",
            qualified(schema, table)
        ),
        params,
    )
}

/// The conditions of one chunk, `(after, up_to]` by primary key, and `cond`.
fn chunk_conditions(
    pk: &[Ident],
    after: Option<&[Value]>,
    up_to: &[Value],
    cond: Option<&Condition>,
) -> Condition {
    let conds: Vec<Condition> = after
        .map(|v| keyset(pk, v, Keyset::After))
        .into_iter()
        .chain([keyset(pk, up_to, Keyset::UpTo)])
        .chain(cond.cloned())
        .collect();
    Condition {
        sql: conds
            .iter()
            .map(|c| c.sql.as_str())
            .collect::<Vec<_>>()
            .join(" AND "),
        params: conds.into_iter().flat_map(|c| c.params).collect(),
    }
}

/// The distinct keys of `column` in one chunk, `(after, up_to]` by primary key: a per-key
/// shard's prune looks them up in the directory.
pub fn chunk_distinct_keys(
    schema: &Ident,
    table: &Ident,
    pk: &[Ident],
    after: Option<&[Value]>,
    up_to: &[Value],
    column: &Ident,
) -> Stmt {
    let c = chunk_conditions(pk, after, up_to, None);
    Stmt::with(
        format!(
            "SELECT DISTINCT {} FROM {} WHERE {}",
            column.quoted(),
            qualified(schema, table),
            c.sql
        ),
        c.params,
    )
}

/// The rows of one chunk, `(after, up_to]` by primary key, that match `cond`, counted (a
/// per-key shard's prune dry run).
pub fn count_chunk(
    schema: &Ident,
    table: &Ident,
    pk: &[Ident],
    after: Option<&[Value]>,
    up_to: &[Value],
    cond: &Condition,
) -> Stmt {
    let c = chunk_conditions(pk, after, up_to, Some(cond));
    Stmt::with(
        format!(
            "SELECT COUNT(*) FROM {} WHERE {}",
            qualified(schema, table),
            c.sql
        ),
        c.params,
    )
}

/// Deletes the rows of one chunk, `(after, up_to]` by primary key (from the start when
/// `after` is None), that match `not_owned`. No `LIMIT`: the key range bounds it.
pub fn delete_chunk(
    schema: &Ident,
    table: &Ident,
    pk: &[Ident],
    after: Option<&[Value]>,
    up_to: &[Value],
    not_owned: &Condition,
) -> Stmt {
    let conds: Vec<Condition> = after
        .map(|v| keyset(pk, v, Keyset::After))
        .into_iter()
        .chain([keyset(pk, up_to, Keyset::UpTo), not_owned.clone()])
        .collect();
    Stmt::with(
        format!(
            "DELETE FROM {} WHERE {}",
            qualified(schema, table),
            conds
                .iter()
                .map(|c| c.sql.as_str())
                .collect::<Vec<_>>()
                .join(" AND ")
        ),
        conds.into_iter().flat_map(|c| c.params).collect(),
    )
}

// ---------------------------------------------------------------------------------------
// Verification: chunked comparison of two snapshots.

/// `SET SESSION wait_timeout = N`: the server ends the session after N idle seconds.
pub fn session_wait_timeout(secs: u64) -> Stmt {
    Stmt::text(format!("SET SESSION wait_timeout = {secs}"))
}

/// `SET SESSION time_zone = '+00:00'`: TIMESTAMP values read the same on every node.
pub fn session_utc() -> Stmt {
    Stmt::text("SET SESSION time_zone = '+00:00'")
}

/// The primary key `rows` rows past `after` (from the start when None), in key order: the
/// inclusive upper bound of the next chunk. No row means fewer remain: the chunk then runs
/// to the end of the table. An index range scan of at most `rows` entries.
pub fn chunk_upper_bound(
    schema: &Ident,
    table: &Ident,
    pk: &[Ident],
    after: Option<&[Value]>,
    rows: u64,
) -> Stmt {
    let pk_list = column_list(pk);
    let (cond, params) = where_after(pk, after);
    Stmt::with(
        format!(
            "SELECT {pk_list} FROM {}{cond} ORDER BY {pk_list} LIMIT 1 OFFSET {}",
            qualified(schema, table),
            rows.max(1) - 1
        ),
        params,
    )
}

/// How one column enters a row's hash: its bytes must say exactly what the column holds,
/// and the row's encoding must split back into its columns unambiguously.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HashedAs {
    /// Numbers and times as the server writes them: the text is exact (DECIMAL, integers,
    /// dates and times) and never holds the `#` that separates columns.
    Text,
    /// FLOAT and DOUBLE by their exact stored value: widened to a double (exact for a FLOAT)
    /// and written as the shortest text that reads back as that double. The column's own
    /// text would not do: a FLOAT prints 6 significant digits, so 51.5074456 and
    /// 51.5074005 both read `51.5074`.
    ExactFloat,
    /// Anything else (strings, blobs, BIT, ENUM, SET, spatial, JSON, UUID, INET6, and any
    /// type this list does not know) as its bytes, preceded by their count, so a `#` inside
    /// a value cannot shift it into the next column.
    Bytes,
}

impl HashedAs {
    /// How a column of `data_type` (information_schema's `DATA_TYPE`) is hashed.
    pub fn for_data_type(data_type: &str) -> HashedAs {
        match data_type.to_ascii_lowercase().as_str() {
            "tinyint" | "smallint" | "mediumint" | "int" | "integer" | "bigint" | "decimal"
            | "numeric" | "year" | "date" | "time" | "datetime" | "timestamp" => HashedAs::Text,
            "float" | "double" | "real" | "double precision" => HashedAs::ExactFloat,
            _ => HashedAs::Bytes,
        }
    }
}

/// A column as a chunk checksum reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HashedColumn {
    /// Its name.
    pub name: Ident,
    /// How its value enters the row's hash.
    pub hashed_as: HashedAs,
}

/// Every column of a table (generated and invisible ones included) with its data type, in
/// table order: what [`chunk_checksum`] hashes.
pub fn hashed_columns(schema: &Ident, table: &Ident) -> Stmt {
    Stmt::with(
        "SELECT COLUMN_NAME, DATA_TYPE FROM information_schema.COLUMNS \
         WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION",
        vec![Value::from(schema.as_str()), Value::from(table.as_str())],
    )
}

/// The bytes a row is hashed over, as one SQL expression: every non-NULL column in order,
/// joined by `#` (a [`HashedAs::Bytes`] column as its byte count, `#`, its bytes), then one
/// `0`/`1` per column saying which are NULL. It reads back unambiguously: the NULL marks
/// (fixed length, last) say which columns are present, a [`HashedAs::Text`] or
/// [`HashedAs::ExactFloat`] value ends at the next `#` (its text has none), a
/// [`HashedAs::Bytes`] value is exactly as long as its count says. So two rows that differ
/// anywhere (NULL against the empty string, `a#b`,`c` against `a`,`b#c`, FLOATs past their
/// sixth digit) are hashed over different bytes. Every value is read as bytes (`CAST(... AS
/// BINARY)`): no collation or character-set conversion hides a difference.
pub fn row_encoding(columns: &[HashedColumn]) -> String {
    let mut parts = Vec::with_capacity(columns.len() * 2 + 1);
    for c in columns {
        let col = c.name.quoted();
        match c.hashed_as {
            HashedAs::Text => parts.push(format!("CAST({col} AS BINARY)")),
            // `+ 0e0` is double arithmetic on every flavor (CAST ... AS DOUBLE is not on
            // MySQL 5.7): exact, as adding zero is, and written with the shortest
            // round-trip digits of a double.
            HashedAs::ExactFloat => parts.push(format!("CAST({col} + 0e0 AS BINARY)")),
            HashedAs::Bytes => {
                parts.push(format!("LENGTH(CAST({col} AS BINARY))"));
                parts.push(format!("CAST({col} AS BINARY)"));
            }
        }
    }
    let nulls = columns
        .iter()
        .map(|c| format!("ISNULL({})", c.name.quoted()))
        .collect::<Vec<_>>()
        .join(", ");
    parts.push(format!("CONCAT({nulls})"));
    format!("CONCAT_WS('#', {})", parts.join(", "))
}

/// A row's hash as an unsigned 64-bit integer: the first 64 bits of the SHA1 of
/// [`row_encoding`]. SHA1 is not linear over XOR, as CRC32 is (with CRC32 the same change
/// made to two rows of the same length cancels in the XOR of their hashes, always): here a
/// set of changed rows goes unseen only if their hashes happen to XOR (or add) to the same
/// 64 bits, about one chance in 2^64 per differing chunk. SHA1 rather than MD5: the
/// comparison took 1.45–1.55 times as long with MD5 (`cargo bench --bench verify`,
/// docs/BENCHMARKS.md); neither is asked to resist a forger, only chance. One 64-bit slice rather than two: the second
/// would mean hashing each row twice (or a user variable whose order of evaluation the
/// server does not promise) for odds already far below a disk's.
pub fn row_hash(columns: &[HashedColumn]) -> String {
    format!(
        "CAST(CONV(LEFT(SHA1({}), 16), 16, 10) AS UNSIGNED)",
        row_encoding(columns)
    )
}

/// The rows of one chunk, `(after, up_to]` by primary key (open ends when None), as two
/// numbers: the row count and a digest of the rows' [`row_hash`]es that does not depend on
/// their order. With a primary key the digest is their BIT_XOR: the rows are distinct, so
/// only a chance collision of hashes cancels. Without one a table can hold the same row
/// twice, and XOR cancels pairs (rows `x, x` and `y, y` both XOR to 0): the digest is then
/// their SUM, modulo 2^64, which counts every copy. Keyed tables keep the XOR, the cheaper
/// aggregate. `extra` narrows the rows further (a merge's survivor: only the retired
/// shard's keys).
pub fn chunk_checksum(
    schema: &Ident,
    table: &Ident,
    columns: &[HashedColumn],
    pk: &[Ident],
    after: Option<&[Value]>,
    up_to: Option<&[Value]>,
    extra: Option<&Condition>,
) -> Stmt {
    let row = row_hash(columns);
    let digest = if pk.is_empty() {
        format!("CAST(COALESCE(SUM({row}), 0) MOD 18446744073709551616 AS UNSIGNED)")
    } else {
        format!("CAST(COALESCE(BIT_XOR({row}), 0) AS UNSIGNED)")
    };
    let conds: Vec<Condition> = after
        .map(|v| keyset(pk, v, Keyset::After))
        .into_iter()
        .chain(up_to.map(|v| keyset(pk, v, Keyset::UpTo)))
        .chain(extra.cloned())
        .collect();
    let filter = if conds.is_empty() {
        String::new()
    } else {
        format!(
            " WHERE {}",
            conds
                .iter()
                .map(|c| c.sql.as_str())
                .collect::<Vec<_>>()
                .join(" AND ")
        )
    };
    Stmt::with(
        format!(
            "SELECT COUNT(*), {digest} FROM {}{filter}",
            qualified(schema, table)
        ),
        conds.into_iter().flat_map(|c| c.params).collect(),
    )
}

// ---------------------------------------------------------------------------------------
// Guards: after a split, the old shard refuses keys it gave away.

/// The write a guard trigger checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GuardEvent {
    /// New rows: `NEW` must hold an owned key.
    Insert,
    /// Changed rows: both `OLD` and `NEW` must.
    Update,
    /// Deleted rows: `OLD` must (pruning sessions excepted).
    Delete,
}

impl GuardEvent {
    /// Every event, in the order guards are created.
    pub const ALL: [GuardEvent; 3] = [GuardEvent::Insert, GuardEvent::Update, GuardEvent::Delete];

    /// The event a trigger's `event_manipulation` names; None for any other word.
    pub fn from_keyword(word: &str) -> Option<GuardEvent> {
        GuardEvent::ALL
            .into_iter()
            .find(|e| e.keyword().eq_ignore_ascii_case(word))
    }

    fn keyword(self) -> &'static str {
        match self {
            GuardEvent::Insert => "INSERT",
            GuardEvent::Update => "UPDATE",
            GuardEvent::Delete => "DELETE",
        }
    }

    fn letter(self) -> char {
        match self {
            GuardEvent::Insert => 'i',
            GuardEvent::Update => 'u',
            GuardEvent::Delete => 'd',
        }
    }
}

/// What a guard's error says; routers take a message with this prefix (error 1644,
/// SQLSTATE 45000) as the cue to re-read the directory.
pub const GUARD_MESSAGE_PREFIX: &str = "shardctl: ";

/// The session variable a prune sets: the guards let its deletes through (they remove
/// exactly the rows the shard no longer owns).
pub fn mark_pruning_session() -> Stmt {
    Stmt::text("SET @shardctl_pruning = 1")
}

/// Ends [`mark_pruning_session`]: the session's writes meet the guards again.
pub fn unmark_pruning_session() -> Stmt {
    Stmt::text("SET @shardctl_pruning = NULL")
}

/// Whether a trigger is one of the split guards (their names are shardctl's).
pub fn is_guard_trigger(name: &str) -> bool {
    name.starts_with("shardctl_guard_")
}

/// The guard trigger's name for `table` and `event`: `shardctl_guard_<i|u|d>_<table>`,
/// the table's part shortened with a hash of the whole name when it would not fit.
pub fn guard_trigger_name(table: &Ident, event: GuardEvent) -> Ident {
    trigger_name(&format!("shardctl_guard_{}_", event.letter()), table)
}

/// `prefix` and `table`'s name, the table's part shortened with a hash of the whole name
/// when it would not fit an identifier.
fn trigger_name(prefix: &str, table: &Ident) -> Ident {
    let mut name = format!("{prefix}{table}");
    if name.len() > crate::ident::MAX_IDENT_LEN {
        // FNV-1a: stable across versions and platforms.
        let hash = table
            .as_str()
            .bytes()
            .fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
                (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
            });
        let keep = crate::ident::MAX_IDENT_LEN - prefix.len() - 9;
        name = format!("{prefix}{}_{:08x}", &table.as_str()[..keep], hash as u32);
    }
    Ident::new("trigger", &name).expect("built from a valid identifier")
}

/// A bound value written as a literal, for the trigger bodies whose grammar takes no
/// placeholders. Keys are integers or text.
fn key_literal(v: &Value) -> String {
    match v {
        Value::Int(i) => i.to_string(),
        Value::UInt(u) => u.to_string(),
        Value::Bytes(b) => crate::ident::string_literal(&String::from_utf8_lossy(b)),
        Value::NULL => "NULL".into(),
        other => crate::ident::string_literal(&other.as_sql(false)),
    }
}

/// `cond` (built by [`not_owned`] over `column`) about the row image `row` (`NEW`/`OLD`),
/// its placeholders replaced by literals.
fn guard_condition(cond: &Condition, column: &Ident, row: &str) -> String {
    let sql = cond
        .sql
        .replace(&column.quoted(), &format!("{row}.{}", column.quoted()));
    let mut out = String::with_capacity(sql.len());
    let mut params = cond.params.iter();
    for c in sql.chars() {
        if c == '?' {
            out.push_str(
                &params
                    .next()
                    .map(key_literal)
                    .unwrap_or_else(|| "NULL".into()),
            );
        } else {
            out.push(c);
        }
    }
    out
}

/// The guard trigger that makes `schema.table` (named `current` now: a fence may have
/// hidden it; the trigger follows it back) refuse a write of a row whose `column` holds
/// a key `not_owned` matches (a [`not_owned`] condition over the bare column): SQLSTATE
/// 45000, "shardctl: shard N does not own this key; re-read the directory". `replace`
/// writes `CREATE OR REPLACE` (MariaDB; MySQL drops the old one first, see the dialect).
#[allow(clippy::too_many_arguments)]
pub fn guard_trigger(
    schema: &Ident,
    table: &Ident,
    current: &Ident,
    event: GuardEvent,
    column: &Ident,
    not_owned: &Condition,
    shard: u32,
    replace: bool,
) -> Stmt {
    let refused = match event {
        GuardEvent::Insert => guard_condition(not_owned, column, "NEW"),
        GuardEvent::Update => format!(
            "({} OR {})",
            guard_condition(not_owned, column, "OLD"),
            guard_condition(not_owned, column, "NEW")
        ),
        GuardEvent::Delete => guard_condition(not_owned, column, "OLD"),
    };
    Stmt::text(format!(
        "CREATE {}TRIGGER {}.{} BEFORE {} ON {} FOR EACH ROW \
         IF @shardctl_pruning IS NULL AND {refused} THEN \
         SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = '{GUARD_MESSAGE_PREFIX}shard {shard} does not own this key; re-read the directory'; \
         END IF",
        if replace { "OR REPLACE " } else { "" },
        schema.quoted(),
        guard_trigger_name(table, event).quoted(),
        event.keyword(),
        qualified(schema, current),
    ))
}

// ---------------------------------------------------------------------------------------
// Switched guards: triggers installed ahead of a fence, inert until one row switches them.
//
// Every write to a guarded table reads its switch row in the node's control table with a
// shared lock (`LOCK IN SHARE MODE`) and keeps it until its transaction ends. Setting the
// switch is one UPDATE of that row: it waits for every open transaction that wrote a
// guarded table to end (the shared locks it conflicts with), and the writes that arrive
// meanwhile queue behind it and then read the new mode. So switching on drains the
// writers as a RENAME of the tables does, whatever the number of tables, and with the
// switch on no write of a guarded key can commit any more. Unlogged like the fences: the
// node's replicas and the channels reading its binary log never see the control schema.

/// The node's control schema, where shardctl keeps its switch rows.
pub const CONTROL_SCHEMA: &str = "_shardctl";

/// The control schema, back-quoted with its table `switches`.
fn switch_table() -> String {
    format!("`{CONTROL_SCHEMA}`.`switches`")
}

/// What a switch makes its guards refuse.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SwitchMode {
    /// Nothing: the guards let every write through.
    Off,
    /// The writes of rows whose key matches the guards' condition (a key fence, or the
    /// keys a shard gave away).
    Keys,
    /// Every write of the guarded tables (a shard fence).
    All,
}

impl SwitchMode {
    /// The value stored in the switch row (and compared in the trigger bodies).
    pub fn code(self) -> u8 {
        match self {
            SwitchMode::Off => 0,
            SwitchMode::Keys => 1,
            SwitchMode::All => 2,
        }
    }

    /// The mode a stored value stands for; None for a value no shardctl writes.
    pub fn from_code(code: u8) -> Option<SwitchMode> {
        [SwitchMode::Off, SwitchMode::Keys, SwitchMode::All]
            .into_iter()
            .find(|m| m.code() == code)
    }
}

/// `CREATE DATABASE IF NOT EXISTS` the control schema, and its switch table.
pub fn create_switch_table() -> Vec<Stmt> {
    vec![
        Stmt::text(format!("CREATE DATABASE IF NOT EXISTS `{CONTROL_SCHEMA}`")),
        Stmt::text(format!(
            "CREATE TABLE IF NOT EXISTS {} (id BIGINT UNSIGNED NOT NULL PRIMARY KEY, \
             mode TINYINT UNSIGNED NOT NULL) ENGINE=InnoDB",
            switch_table()
        )),
    ]
}

/// The character set of `schema.table.column` (NULL for a column without one: numbers,
/// binary strings).
pub fn column_charset(schema: &Ident, table: &Ident, column: &Ident) -> Stmt {
    Stmt::with(
        "SELECT CHARACTER_SET_NAME FROM information_schema.COLUMNS \
         WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? AND COLUMN_NAME = ?",
        vec![
            schema.as_str().into(),
            table.as_str().into(),
            column.as_str().into(),
        ],
    )
}

/// Whether the node has the switch table (1 row) or not (none): its control schema may
/// hold other tables of shardctl's (a change stream's checkpoints) without it.
pub fn switch_table_exists() -> Stmt {
    Stmt::with(
        "SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = 'switches'",
        vec![CONTROL_SCHEMA.into()],
    )
}

/// Adds switch `id`, off; one that exists keeps its mode.
pub fn add_switch(id: u64) -> Stmt {
    Stmt::with(
        format!(
            "INSERT INTO {} (id, mode) VALUES (?, ?) ON DUPLICATE KEY UPDATE id = id",
            switch_table()
        ),
        vec![id.into(), SwitchMode::Off.code().into()],
    )
}

/// Sets switch `id` to `mode` (it waits for the writers its guards hold, see above).
pub fn set_switch(id: u64, mode: SwitchMode) -> Stmt {
    Stmt::with(
        format!("UPDATE {} SET mode = ? WHERE id = ?", switch_table()),
        vec![mode.code().into(), id.into()],
    )
}

/// The mode of switch `id`, read without a lock (no row when it is gone).
pub fn switch_mode(id: u64) -> Stmt {
    Stmt::with(
        format!("SELECT mode FROM {} WHERE id = ?", switch_table()),
        vec![id.into()],
    )
}

/// Removes switch `id` (after its guards are gone: a guard whose row is missing refuses
/// every write).
pub fn remove_switch(id: u64) -> Stmt {
    Stmt::with(
        format!("DELETE FROM {} WHERE id = ?", switch_table()),
        vec![id.into()],
    )
}

/// `SET SESSION innodb_lock_wait_timeout = secs`: how long setting a switch waits for the
/// open transactions of its guarded tables.
pub fn row_lock_wait_timeout(secs: u64) -> Stmt {
    Stmt::text(format!(
        "SET SESSION innodb_lock_wait_timeout = {}",
        secs.max(1)
    ))
}

/// Whether a trigger is shardctl's: a split's guard or a switched guard.
pub fn is_shardctl_trigger(name: &str) -> bool {
    is_guard_trigger(name) || is_switched_guard(name)
}

/// Whether a trigger is a switched guard (an operation's, tied to a switch row of its
/// node: never copied to another node, never compared).
pub fn is_switched_guard(name: &str) -> bool {
    name.starts_with("shardctl_switch_")
}

/// The switched guard's name for `table` and `event`: `shardctl_switch_<i|u|d>_<table>`,
/// shortened as guard names are.
pub fn switched_guard_name(table: &Ident, event: GuardEvent) -> Ident {
    trigger_name(&format!("shardctl_switch_{}_", event.letter()), table)
}

/// The switched guard of `schema.table` for `event`: with switch `switch` on `All` it
/// refuses every write, on `Keys` a write whose row (either image, for an update) has a
/// `column` matching `keys` (a condition over the bare column), with SQLSTATE 45000 and
/// `message` (after shardctl's prefix). Sessions that set `@shardctl_pruning` pass (a
/// prune, a copy or a stream applying the keys to their new shard). A switch row that is
/// missing refuses every write: a guard is never silently off.
///
/// `precedes` names the trigger that fires first for this table and event, if there is
/// one: the guard is created ahead of it. Appended behind it instead, the guard would break
/// every statement clients prepared on the table before it came: MariaDB (MDEV-26048) does
/// not prepare them again, and their executions fail with error 1146 naming the switch
/// table, until they are prepared again or the guard is gone. A new first trigger makes
/// the server prepare them again.
#[allow(clippy::too_many_arguments)]
pub fn switched_guard_trigger(
    schema: &Ident,
    table: &Ident,
    event: GuardEvent,
    column: Option<&Ident>,
    keys: &Condition,
    switch: u64,
    message: &str,
    replace: bool,
    precedes: Option<&Ident>,
) -> Stmt {
    // A table without a sharding column (a global table's copy) has a condition naming no
    // column: it is refused only by `All`.
    let about = |row: &str| match column {
        Some(c) => guard_condition(keys, c, row),
        None => guard_condition(keys, &Ident::new("column", "unused").expect("plain"), row),
    };
    let matches = match event {
        GuardEvent::Insert => about("NEW"),
        GuardEvent::Update => format!("({} OR {})", about("OLD"), about("NEW")),
        GuardEvent::Delete => about("OLD"),
    };
    let (keys_code, all_code) = (SwitchMode::Keys.code(), SwitchMode::All.code());
    Stmt::text(format!(
        "CREATE {}TRIGGER {}.{} BEFORE {} ON {} FOR EACH ROW {}\
         BEGIN DECLARE shardctl_mode TINYINT UNSIGNED DEFAULT {all_code}; \
         SELECT mode INTO shardctl_mode FROM {} WHERE id = {switch} LOCK IN SHARE MODE; \
         IF @shardctl_pruning IS NULL AND (shardctl_mode = {all_code} OR (shardctl_mode = {keys_code} AND {matches})) THEN \
         SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = {}; \
         END IF; END",
        if replace { "OR REPLACE " } else { "" },
        schema.quoted(),
        switched_guard_name(table, event).quoted(),
        event.keyword(),
        qualified(schema, table),
        precedes
            .map(|t| format!("PRECEDES {} ", t.quoted()))
            .unwrap_or_default(),
        switch_table(),
        crate::ident::string_literal(&format!("{GUARD_MESSAGE_PREFIX}{message}")),
    ))
}

/// `DROP TRIGGER IF EXISTS s.name`.
pub fn drop_trigger_if_exists(schema: &Ident, name: &Ident) -> Stmt {
    Stmt::text(format!(
        "DROP TRIGGER IF EXISTS {}.{}",
        schema.quoted(),
        name.quoted()
    ))
}

// ---------------------------------------------------------------------------------------
// Split: the median of a shard's range.

/// The rows whose `column` lies in `[lower, upper)`, or from `lower` on when `upper` is
/// None, compared as the column compares.
pub fn key_range(column: &Ident, lower: Value, upper: Option<Value>) -> Condition {
    let col = column.quoted();
    match upper {
        Some(upper) => Condition {
            sql: format!("({col} >= ? AND {col} < ?)"),
            params: vec![lower, upper],
        },
        None => Condition {
            sql: format!("({col} >= ?)"),
            params: vec![lower],
        },
    }
}

/// The value of `column`, as text, at `offset` in `column` order among the rows matching
/// `cond` (with the row count from [`count_where`], the median through the column's
/// index).
pub fn key_at_offset(
    schema: &Ident,
    table: &Ident,
    column: &Ident,
    cond: &Condition,
    offset: u64,
) -> Stmt {
    Stmt::with(
        format!(
            "SELECT CAST({c} AS CHAR) FROM {} WHERE {} ORDER BY {c} LIMIT 1 OFFSET {offset}",
            qualified(schema, table),
            cond.sql,
            c = column.quoted()
        ),
        cond.params.clone(),
    )
}

/// The value of `column`, as text, at `offset` from the top (in descending `column` order)
/// among the rows matching `cond`: a key-move profile's cut near a shard's upper end,
/// reached through the column's index from that end.
pub fn key_at_offset_from_top(
    schema: &Ident,
    table: &Ident,
    column: &Ident,
    cond: &Condition,
    offset: u64,
) -> Stmt {
    Stmt::with(
        format!(
            "SELECT CAST({c} AS CHAR) FROM {} WHERE {} ORDER BY {c} DESC LIMIT 1 OFFSET {offset}",
            qualified(schema, table),
            cond.sql,
            c = column.quoted()
        ),
        cond.params.clone(),
    )
}

/// How many rows each value of `column` has among the rows matching `cond` (a list
/// shard's rows per value, for the rebalance planner's key moves).
pub fn rows_per_key(schema: &Ident, table: &Ident, column: &Ident, cond: &Condition) -> Stmt {
    Stmt::with(
        format!(
            "SELECT CAST({c} AS CHAR), COUNT(*) FROM {} WHERE {} GROUP BY {c}",
            qualified(schema, table),
            cond.sql,
            c = column.quoted()
        ),
        cond.params.clone(),
    )
}

// ---------------------------------------------------------------------------------------
// The workload table.

/// Creates the workload's table `s.t (k, seq, at)` if it does not exist, keyed by
/// (k, seq); `k` holds the sharding key.
pub fn create_workload_table(schema: &Ident, table: &Ident, key: KeyKind) -> Stmt {
    let key_type = match key {
        KeyKind::Int => "BIGINT",
        KeyKind::Bytes => "VARBINARY(255)",
    };
    Stmt::text(format!(
        "CREATE TABLE IF NOT EXISTS {} (k {key_type} NOT NULL, seq BIGINT UNSIGNED NOT NULL, \
         at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6), PRIMARY KEY (k, seq)) ENGINE=InnoDB",
        qualified(schema, table)
    ))
}

/// One workload write: key `k`, sequence number `seq`.
pub fn insert_workload_row(schema: &Ident, table: &Ident, key: Value, seq: u64) -> Stmt {
    Stmt::with(
        format!(
            "INSERT INTO {} (k, seq) VALUES (?, ?)",
            qualified(schema, table)
        ),
        vec![key, Value::from(seq)],
    )
}

/// The sequence numbers written for key `k`.
pub fn workload_seqs(schema: &Ident, table: &Ident, key: Value) -> Stmt {
    Stmt::with(
        format!("SELECT seq FROM {} WHERE k = ?", qualified(schema, table)),
        vec![key],
    )
}

/// The sequence numbers in `[from, to]` present in the workload's table (one run's
/// writes: each run draws its sequence numbers from one counter).
pub fn workload_seqs_between(schema: &Ident, table: &Ident, from: u64, to: u64) -> Stmt {
    Stmt::with(
        format!(
            "SELECT seq FROM {} WHERE seq BETWEEN ? AND ?",
            qualified(schema, table)
        ),
        vec![Value::from(from), Value::from(to)],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(name: &str) -> Ident {
        Ident::new("column", name).unwrap()
    }

    #[test]
    fn only_types_whose_text_is_exact_and_free_of_the_separator_are_hashed_as_text() {
        for t in [
            "INT",
            "bigint",
            "decimal",
            "datetime",
            "timestamp",
            "year",
            "time",
        ] {
            assert_eq!(HashedAs::for_data_type(t), HashedAs::Text, "{t}");
        }
        for t in ["float", "DOUBLE"] {
            assert_eq!(HashedAs::for_data_type(t), HashedAs::ExactFloat, "{t}");
        }
        // Bytes that may hold a `#`, text that is not the stored value (UUID, INET6 read
        // as bytes differ from their text), and any type not listed.
        for t in [
            "varchar", "blob", "bit", "enum", "set", "json", "uuid", "inet6", "point", "vector",
        ] {
            assert_eq!(HashedAs::for_data_type(t), HashedAs::Bytes, "{t}");
        }
    }

    #[test]
    fn hidden_names_are_identifiers_even_at_the_limits() {
        assert_eq!(hidden_table_name(12, 3).as_str(), "_shardctl_op12_3");
        assert!(hidden_table_name(u64::MAX, usize::MAX).as_str().len() <= 64);
    }

    #[test]
    fn nothing_to_lock_or_rename_is_no_statement() {
        assert!(lock_tables_read(&[]).is_none());
        assert!(rename_to_hidden(&[]).is_none());
        assert!(rename_from_hidden(&[]).is_none());
    }

    #[test]
    fn keysets_expand_composite_keys() {
        let pk = vec![id("a"), id("b")];
        let v = vec![Value::Int(1), Value::Int(2)];
        let p = keyset(&pk, &v, Keyset::After);
        assert_eq!(p.sql, "((`a` > ?) OR (`a` = ? AND `b` > ?))");
        assert_eq!(p.params, vec![Value::Int(1), Value::Int(1), Value::Int(2)]);
        let p = keyset(&pk, &v, Keyset::UpTo);
        assert_eq!(p.sql, "((`a` < ?) OR (`a` = ? AND `b` <= ?))");
    }

    #[test]
    fn a_chunk_delete_binds_its_conditions_in_order() {
        let (s, t) = (id("s"), id("t"));
        let pk = vec![id("a")];
        let owned = Condition {
            sql: "(`k` < ?)".into(),
            params: vec![Value::Int(9)],
        };
        let st = delete_chunk(
            &s,
            &t,
            &pk,
            Some(&[Value::Int(1)]),
            &[Value::Int(5)],
            &owned,
        );
        assert_eq!(
            st.sql,
            "DELETE FROM `s`.`t` WHERE ((`a` > ?)) AND ((`a` <= ?)) AND (`k` < ?)"
        );
        assert_eq!(st.params, vec![Value::Int(1), Value::Int(5), Value::Int(9)]);
        let st = delete_chunk(&s, &t, &pk, None, &[Value::Int(5)], &owned);
        assert_eq!(st.params, vec![Value::Int(5), Value::Int(9)]);
    }
}
