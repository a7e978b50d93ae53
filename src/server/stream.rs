//! What the change stream (`src/stream`) says to its nodes: the replica session it opens on
//! the source to read the binary log over the replication protocol, the source's settings
//! it checks first, the catalog reads that describe a moving table, and the statements that
//! apply row changes and the stream's checkpoint on the target. Golden-tested in
//! `tests/golden_sql.rs` (`stream_statements`).
//!
//! The replica session, as a MariaDB replica opens it: `@mariadb_slave_capability = 4` makes
//! a MariaDB primary send its own GTID, GTID-list and binlog-checkpoint events as they are
//! (a replica announcing less gets them rewritten into the events a MySQL replica knows, or
//! left out), `@master_heartbeat_period` (nanoseconds) makes an idle primary send a
//! heartbeat so that every read of the stream ends within its timeout, and for a start by
//! GTID `@slave_connect_state` holds the GTID position the primary looks up. The driver
//! itself sets `@master_binlog_checksum` (so events come with the checksum the primary
//! writes, which the event reader takes off) and sends `COM_REGISTER_SLAVE` and
//! `COM_BINLOG_DUMP`. Nothing here changes anything on the source.

use super::{describe, server_error_code, BinlogPosition, Dialect, Server, Stmt};
use crate::error::{Error, Result};
use crate::ident::Ident;
use mysql::binlog::events::Event;
use mysql::{BinlogRequest, BinlogStream, Value};
use std::time::Duration;

/// The value of `@mariadb_slave_capability` the stream announces: MariaDB's
/// `MARIA_SLAVE_CAPABILITY_GTID`, the highest, so that GTID events come as they are.
pub const MARIADB_CAPABILITY_GTID: u8 = 4;

/// The table of the target's checkpoint schema that holds one row per stream.
pub const CHECKPOINT_TABLE: &str = "stream_checkpoints";

/// `schema`.`table`.
fn qualified(schema: &Ident, table: &Ident) -> String {
    format!("{}.{}", schema.quoted(), table.quoted())
}

fn checkpoint_table(schema: &Ident) -> String {
    format!("{}.`{CHECKPOINT_TABLE}`", schema.quoted())
}

// ---------------------------------------------------------------------------------------
// The source.

/// The source's settings the stream depends on, one row: `log_bin`, `binlog_format`,
/// `binlog_row_image`, `server_id`, whether its binary log compresses events (MariaDB's
/// `log_bin_compress`, MySQL 8.0.20's `binlog_transaction_compression`; 0 where the
/// server has neither), MySQL's `binlog_row_value_options` (partial JSON updates; ''
/// where there is none) and `binlog_checksum` (the first event of a dump comes with its
/// checksum still on).
pub fn source_settings(d: Dialect) -> Stmt {
    let f = d.flavor();
    let compression = if f.is_mariadb() {
        "@@GLOBAL.log_bin_compress"
    } else if f.has_binlog_transaction_compression() {
        "@@GLOBAL.binlog_transaction_compression"
    } else {
        "0"
    };
    let value_options = if f.has_binlog_row_value_options() {
        "@@GLOBAL.binlog_row_value_options"
    } else {
        "''"
    };
    Stmt::text(format!(
        "SELECT @@GLOBAL.log_bin, @@GLOBAL.binlog_format, @@GLOBAL.binlog_row_image, \
         @@GLOBAL.server_id, {compression}, {value_options}, @@GLOBAL.binlog_checksum"
    ))
}

/// `SHOW BINARY LOGS`: the files the source still holds, with their sizes.
pub fn show_binary_logs() -> Stmt {
    Stmt::text("SHOW BINARY LOGS")
}

/// The source's clock, in whole seconds since the epoch: the lag in seconds is the
/// source's now minus the time of the last event applied, so the stream reads the
/// offset between the source's clock and its own once.
pub fn unix_time() -> Stmt {
    Stmt::text("SELECT UNIX_TIMESTAMP()")
}

/// The replica session's variables, before `COM_REGISTER_SLAVE`: the heartbeat period
/// (nanoseconds; MySQL 8.0.26 reads `@source_heartbeat_period` first) and, on MariaDB,
/// the capability that brings its own event types.
pub fn replica_session(d: Dialect, heartbeat: Duration) -> Vec<Stmt> {
    let ns = heartbeat.as_nanos().max(1_000_000);
    let mut out = vec![Stmt::text(format!("SET @master_heartbeat_period = {ns}"))];
    if d.flavor().is_mariadb() {
        out.push(Stmt::text(format!(
            "SET @mariadb_slave_capability = {MARIADB_CAPABILITY_GTID}"
        )));
    } else if d.flavor().uses_source_pos_wait() {
        out.push(Stmt::text(format!("SET @source_heartbeat_period = {ns}")));
    }
    out
}

/// A MariaDB replica's GTID start: the GTID position to send from (`domain-server-seq`,
/// comma-separated), neither strict nor skipping duplicates.
pub fn mariadb_gtid_start(state: &str) -> Vec<Stmt> {
    vec![
        Stmt::with("SET @slave_connect_state = ?", vec![Value::from(state)]),
        Stmt::text("SET @slave_gtid_strict_mode = 0"),
        Stmt::text("SET @slave_gtid_ignore_duplicates = 0"),
    ]
}

// ---------------------------------------------------------------------------------------
// A moving table, on either side.

/// The columns of a table in order, as the binary log numbers them: name, data type,
/// full column type (`int(10) unsigned`), whether it is nullable, and whether it is
/// generated (a generated column is in the row images but never written).
pub fn table_columns(schema: &Ident, table: &Ident) -> Stmt {
    Stmt::with(
        "SELECT column_name, LOWER(data_type), LOWER(column_type), is_nullable = 'YES', \
         (extra LIKE '%VIRTUAL GENERATED%' OR extra LIKE '%STORED GENERATED%' \
          OR extra LIKE '%PERSISTENT GENERATED%') \
         FROM information_schema.columns WHERE table_schema = ? AND table_name = ? \
         ORDER BY ordinal_position",
        vec![Value::from(schema.as_str()), Value::from(table.as_str())],
    )
}

/// The unique indexes of a table with their columns in key order, the primary key first:
/// index name, column name and whether only a prefix of the column is indexed (such an
/// index does not identify a row by its values).
pub fn unique_indexes(schema: &Ident, table: &Ident) -> Stmt {
    Stmt::with(
        "SELECT index_name, column_name, sub_part IS NOT NULL \
         FROM information_schema.statistics \
         WHERE table_schema = ? AND table_name = ? AND non_unique = 0 \
         ORDER BY index_name <> 'PRIMARY', index_name, seq_in_index",
        vec![Value::from(schema.as_str()), Value::from(table.as_str())],
    )
}

/// The triggers defined on a table.
pub fn table_triggers(schema: &Ident, table: &Ident) -> Stmt {
    Stmt::with(
        "SELECT trigger_name FROM information_schema.triggers \
         WHERE event_object_schema = ? AND event_object_table = ? ORDER BY trigger_name",
        vec![Value::from(schema.as_str()), Value::from(table.as_str())],
    )
}

// ---------------------------------------------------------------------------------------
// The target.

/// The applier's session: values arrive as the bytes the source logged (`SET NAMES
/// binary`: no conversion on the way in), timestamps in UTC (the stream turns the logged
/// seconds since the epoch into UTC date and time), a 0 in an AUTO_INCREMENT column stays
/// 0, no value is silently changed (strict), and a paused stream's idle session is not
/// ended for a day. Foreign-key checks stay on: the source logs no row of an `ON DELETE
/// CASCADE`, which the target's own constraint then applies, as on a replica. The
/// session passes shardctl's guards (`@shardctl_pruning`): the keys it carries are not
/// the target shard's yet (a key move's receiver goes on refusing them to clients until
/// its flip).
pub fn applier_session() -> Stmt {
    Stmt::text(
        "SET NAMES binary, SESSION time_zone = '+00:00', \
         sql_mode = 'NO_AUTO_VALUE_ON_ZERO,STRICT_ALL_TABLES,NO_ENGINE_SUBSTITUTION', \
         wait_timeout = 86400, @shardctl_pruning = 1",
    )
}

/// `START TRANSACTION`: one target transaction per source transaction.
pub fn start_transaction() -> Stmt {
    Stmt::text("START TRANSACTION")
}

/// `ROLLBACK`.
pub fn rollback() -> Stmt {
    Stmt::text("ROLLBACK")
}

/// `CREATE DATABASE IF NOT EXISTS` for the checkpoint schema.
pub fn create_checkpoint_schema(schema: &Ident) -> Stmt {
    Stmt::text(format!("CREATE DATABASE IF NOT EXISTS {}", schema.quoted()))
}

/// The checkpoint table: one row per stream, the source position (file and offset, the
/// GTID state and the last GTID) up to which the stream's changes are in the target,
/// written in the same transaction as those changes.
pub fn create_checkpoint_table(schema: &Ident) -> Stmt {
    Stmt::text(format!(
        "CREATE TABLE IF NOT EXISTS {} (\
         stream_id VARCHAR(64) CHARACTER SET ascii NOT NULL, \
         binlog_file VARCHAR(255) CHARACTER SET utf8mb4 NOT NULL, \
         binlog_pos BIGINT UNSIGNED NOT NULL, \
         gtid_state TEXT CHARACTER SET ascii NOT NULL, \
         last_gtid VARCHAR(255) CHARACTER SET ascii NOT NULL, \
         transactions BIGINT UNSIGNED NOT NULL, \
         row_changes BIGINT UNSIGNED NOT NULL, \
         source_time BIGINT UNSIGNED NOT NULL, \
         epoch BIGINT UNSIGNED NOT NULL DEFAULT 0, \
         updated_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6), \
         PRIMARY KEY (stream_id)) ENGINE=InnoDB",
        checkpoint_table(schema)
    ))
}

/// A stream's checkpoint row: file, offset, GTID state, last GTID, transactions and row
/// changes applied, and the source time of the last transaction applied.
pub fn read_checkpoint(schema: &Ident, stream_id: &str) -> Stmt {
    Stmt::with(
        format!(
            "SELECT binlog_file, binlog_pos, gtid_state, last_gtid, transactions, row_changes, source_time \
             FROM {} WHERE stream_id = ?",
            checkpoint_table(schema)
        ),
        vec![Value::from(stream_id)],
    )
}

/// The values of a checkpoint row, as [`write_checkpoint`] writes them.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckpointRow<'a> {
    /// The stream.
    pub stream_id: &'a str,
    /// The source position up to which the target holds the stream's changes.
    pub position: &'a BinlogPosition,
    /// The GTID state there (empty when unknown).
    pub gtid_state: &'a str,
    /// The GTID of the last transaction applied (empty when none).
    pub last_gtid: &'a str,
    /// Source transactions applied so far (those with changes to apply).
    pub transactions: u64,
    /// Row changes applied so far.
    pub row_changes: u64,
    /// Seconds since the epoch at which the source committed the last transaction applied.
    pub source_time: u64,
    /// The owner epoch writing it (see [`lock_checkpoint_epoch`]).
    pub epoch: u64,
}

/// Writes a stream's checkpoint row, creating it the first time: in the applier's
/// transaction, after the rows of the source transaction it ends.
pub fn write_checkpoint(schema: &Ident, row: &CheckpointRow<'_>) -> Stmt {
    let values = [
        Value::from(row.position.file.as_str()),
        Value::from(row.position.pos),
        Value::from(row.gtid_state),
        Value::from(row.last_gtid),
        Value::from(row.transactions),
        Value::from(row.row_changes),
        Value::from(row.source_time),
        Value::from(row.epoch),
    ];
    let mut params = vec![Value::from(row.stream_id)];
    params.extend(values.iter().cloned());
    params.extend(values.iter().cloned());
    Stmt::with(
        format!(
            "INSERT INTO {} (stream_id, binlog_file, binlog_pos, gtid_state, last_gtid, transactions, row_changes, source_time, epoch) \
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON DUPLICATE KEY UPDATE binlog_file = ?, binlog_pos = ?, \
             gtid_state = ?, last_gtid = ?, transactions = ?, row_changes = ?, source_time = ?, epoch = ?",
            checkpoint_table(schema)
        ),
        params,
    )
}

/// The owner epoch of a stream's checkpoint, its row locked until the applier's
/// transaction ends: a stream whose epoch is below it (an owner that was taken over) must
/// write nothing more.
pub fn lock_checkpoint_epoch(schema: &Ident, stream_id: &str) -> Stmt {
    Stmt::with(
        format!(
            "SELECT epoch FROM {} WHERE stream_id = ? FOR UPDATE",
            checkpoint_table(schema)
        ),
        vec![Value::from(stream_id)],
    )
}

/// The owner epoch of a stream's checkpoint, read without a lock.
pub fn checkpoint_epoch(schema: &Ident, stream_id: &str) -> Stmt {
    Stmt::with(
        format!(
            "SELECT epoch FROM {} WHERE stream_id = ?",
            checkpoint_table(schema)
        ),
        vec![Value::from(stream_id)],
    )
}

/// Claims a stream's checkpoint for the owner of `epoch` (a new owner starting the stream
/// again): changes no row when a newer owner claimed it already.
pub fn claim_checkpoint(schema: &Ident, stream_id: &str, epoch: u64) -> Stmt {
    Stmt::with(
        format!(
            "UPDATE {} SET epoch = ? WHERE stream_id = ? AND epoch <= ?",
            checkpoint_table(schema)
        ),
        vec![
            Value::from(epoch),
            Value::from(stream_id),
            Value::from(epoch),
        ],
    )
}

/// Removes a stream's checkpoint (a stream that is done, or started over).
pub fn delete_checkpoint(schema: &Ident, stream_id: &str) -> Stmt {
    Stmt::with(
        format!(
            "DELETE FROM {} WHERE stream_id = ?",
            checkpoint_table(schema)
        ),
        vec![Value::from(stream_id)],
    )
}

/// `col1 = ? AND col2 = ?` over a row's key.
fn key_match(key: &[Ident]) -> String {
    key.iter()
        .map(|c| format!("{} = ?", c.quoted()))
        .collect::<Vec<_>>()
        .join(" AND ")
}

/// `INSERT INTO s.t (cols) VALUES (?, ...), ...`: `rows` rows of `columns.len()` values
/// each, `values` row after row. A plain INSERT, never REPLACE: a row the target already
/// holds means it diverged from the source, which must stop the stream, not be overwritten.
pub fn insert_rows(
    schema: &Ident,
    table: &Ident,
    columns: &[Ident],
    rows: usize,
    values: Vec<Value>,
) -> Stmt {
    let cols = columns
        .iter()
        .map(Ident::quoted)
        .collect::<Vec<_>>()
        .join(", ");
    let one = format!("({})", vec!["?"; columns.len()].join(", "));
    Stmt::with(
        format!(
            "INSERT INTO {} ({cols}) VALUES {}",
            qualified(schema, table),
            vec![one; rows].join(", ")
        ),
        values,
    )
}

/// `UPDATE s.t SET col = ?, ... WHERE key = ? AND ...`: every written column set to its
/// after image, the row found by its key's before image. `values` holds the after image,
/// then the key's before image.
pub fn update_by_key(
    schema: &Ident,
    table: &Ident,
    columns: &[Ident],
    key: &[Ident],
    values: Vec<Value>,
) -> Stmt {
    let sets = columns
        .iter()
        .map(|c| format!("{} = ?", c.quoted()))
        .collect::<Vec<_>>()
        .join(", ");
    Stmt::with(
        format!(
            "UPDATE {} SET {sets} WHERE {}",
            qualified(schema, table),
            key_match(key)
        ),
        values,
    )
}

/// `DELETE FROM s.t WHERE key = ? AND ...`, the row found by its key's before image.
pub fn delete_by_key(schema: &Ident, table: &Ident, key: &[Ident], values: Vec<Value>) -> Stmt {
    Stmt::with(
        format!(
            "DELETE FROM {} WHERE {}",
            qualified(schema, table),
            key_match(key)
        ),
        values,
    )
}

/// `SELECT COUNT(*) FROM s.t WHERE key = ? AND ...`: whether the target holds a row (an
/// UPDATE that changed nothing either found the row unchanged or did not find it).
pub fn count_by_key(schema: &Ident, table: &Ident, key: &[Ident], values: Vec<Value>) -> Stmt {
    Stmt::with(
        format!(
            "SELECT COUNT(*) FROM {} WHERE {}",
            qualified(schema, table),
            key_match(key)
        ),
        values,
    )
}

// ---------------------------------------------------------------------------------------
// The replica connection.

/// Where a binary-log dump starts.
#[derive(Debug, Clone, PartialEq)]
pub enum DumpStart {
    /// A file and offset (an event boundary).
    Position(BinlogPosition),
    /// MariaDB only: after the transactions of a GTID position (`domain-server-seq`,
    /// comma-separated), which the primary looks up in its binary log.
    MariaDbGtid(String),
}

/// How to ask for the binary log.
#[derive(Debug, Clone, PartialEq)]
pub struct DumpRequest {
    /// The server_id the stream registers with: unique among the source's replicas (a
    /// primary ends an older dump of the same server_id when a new one registers).
    pub server_id: u32,
    /// Where to start.
    pub start: DumpStart,
    /// How often an idle source sends a heartbeat; below the connection's read timeout.
    pub heartbeat: Duration,
    /// The connection's read timeout, for the message when it passes.
    pub read_timeout: Duration,
}

/// A source's binary log as it sends it to a replica: one event per read, each read ending
/// within the connection's read timeout (the heartbeat keeps an idle source talking).
pub struct BinlogDump {
    node: String,
    read_timeout: Duration,
    stream: BinlogStream,
}

impl std::fmt::Debug for BinlogDump {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BinlogDump")
            .field("node", &self.node)
            .finish()
    }
}

/// MySQL's and MariaDB's `ER_MASTER_FATAL_ERROR_READING_BINLOG`: the primary cannot send
/// from the position asked (purged, past the end, a GTID it does not hold).
pub const ER_SOURCE_FATAL_READING_BINLOG: u16 = 1236;

impl Server {
    /// Turns this connection into a replica's: sets the replica session, registers as a
    /// replica with `req.server_id` and asks for the binary log from `req.start`. The
    /// statements are logged and captured as every other; the commands that follow are
    /// the driver's.
    pub fn into_binlog_dump(mut self, req: &DumpRequest) -> Result<BinlogDump> {
        let d = self.dialect();
        for st in replica_session(d, req.heartbeat) {
            self.exec(&st)?;
        }
        let request = match &req.start {
            DumpStart::Position(p) => BinlogRequest::new(req.server_id)
                .with_filename(p.file.as_bytes().to_vec())
                .with_pos(p.pos),
            DumpStart::MariaDbGtid(state) => {
                if !d.flavor().is_mariadb() {
                    return Err(Error::Usage(format!(
                        "node {}: a start by MariaDB GTID on a MySQL server",
                        self.name
                    )));
                }
                for st in mariadb_gtid_start(state) {
                    self.exec(&st)?;
                }
                BinlogRequest::new(req.server_id).with_pos(4u64)
            }
        };
        let node = self.name.clone();
        crate::output::log(
            2,
            &format!(
                "{node}: binary-log dump as replica {} from {:?}",
                req.server_id, req.start
            ),
        );
        let stream = self
            .conn
            .get_binlog_stream(request)
            .map_err(|e| dump_error(&node, req.read_timeout, &e))?;
        Ok(BinlogDump {
            node,
            read_timeout: req.read_timeout,
            stream,
        })
    }
}

/// One line for a failure of the dump: a refusal when the source cannot send from the
/// position asked, a timeout when nothing came in time, else the server's or driver's
/// words.
fn dump_error(node: &str, read_timeout: Duration, e: &mysql::Error) -> Error {
    if server_error_code(e) == Some(ER_SOURCE_FATAL_READING_BINLOG) {
        return Error::Refused(format!(
            "node {node} cannot send its binary log from the stream's position: {}",
            describe(e)
        ));
    }
    if super::is_timeout(e) {
        return Error::Timeout(format!(
            "node {node} sent no binary-log event nor heartbeat within {} s",
            read_timeout.as_secs()
        ));
    }
    Error::server(node, format!("binary-log dump: {}", describe(e)))
}

impl BinlogDump {
    /// The next event, waiting at most the read timeout for it.
    pub fn next_event(&mut self) -> Result<Event> {
        match self.stream.next() {
            Some(Ok(ev)) => Ok(ev),
            Some(Err(e)) => Err(dump_error(&self.node, self.read_timeout, &e)),
            None => Err(Error::server(
                &self.node,
                "the source ended the binary-log dump",
            )),
        }
    }

    /// The source node's name.
    pub fn node(&self) -> &str {
        &self.node
    }
}
