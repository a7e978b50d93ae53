//! What the reporting server and the streamed cross-shard query need from a connection:
//! rows streamed as the server sends them (text protocol, so values read as the server
//! prints them), and the statements of `shardctl reporting` (channel names, the catch-up
//! channel's stop condition), pure and golden-tested beside the others.

use super::{Server, Stmt};
use crate::error::Result;
use mysql::prelude::Queryable;
use mysql::{Column, Row};

impl Server {
    /// Runs `st` (no bound values: the text protocol) and hands its columns to `columns`
    /// once, then each row to `f` as it arrives, never holding the result in memory.
    /// `columns` is called also when no row comes.
    pub fn stream_text(
        &mut self,
        st: &Stmt,
        columns: impl FnOnce(&[Column]),
        mut f: impl FnMut(Row) -> Result<()>,
    ) -> Result<()> {
        self.log_sent(st);
        let failure = match self.conn.query_iter(&st.sql) {
            Ok(mut result) => {
                columns(result.columns().as_ref());
                let mut failure = None;
                for row in result.by_ref() {
                    match row {
                        Ok(row) => f(row)?,
                        Err(e) => {
                            failure = Some(e);
                            break;
                        }
                    }
                }
                failure
            }
            Err(e) => Some(e),
        };
        match failure {
            Some(e) => Err(self.error(&e)),
            None => Ok(()),
        }
    }
}

use super::{BinlogPosition, Dialect};
use crate::ident::{check_binlog_file, string_literal, Channel, Ident};
use mysql::Value;

impl Dialect {
    /// Starts both threads of a channel with the applier stopping at `pos` of the source's
    /// binary log: a reporting server's catch-up channel (or its regular one, when that is
    /// behind a new copy) applies exactly up to where the other stands.
    pub fn start_channel_until(
        &self,
        channel: &Channel,
        pos: &BinlogPosition,
    ) -> crate::Result<Stmt> {
        check_binlog_file(&pos.file)?;
        let ch = string_literal(channel.as_str());
        let prefix = if self.flavor().uses_change_replication_source() {
            "SOURCE"
        } else {
            "MASTER"
        };
        let until = format!(
            "UNTIL {prefix}_LOG_FILE = {}, {prefix}_LOG_POS = {}",
            string_literal(&pos.file),
            pos.pos
        );
        Ok(Stmt::text(if self.flavor().is_mariadb() {
            format!("START SLAVE {ch} {until}")
        } else if self.flavor().uses_replica_keyword() {
            format!("START REPLICA {until} FOR CHANNEL {ch}")
        } else {
            format!("START SLAVE {until} FOR CHANNEL {ch}")
        }))
    }
}

/// The directory's reporting nodes.
pub fn reporting_nodes(d: &Ident) -> Stmt {
    Stmt::text(format!(
        "SELECT node FROM {}.reporting_nodes ORDER BY node",
        d.quoted()
    ))
}

/// Records a reporting node.
pub fn insert_reporting_node(d: &Ident, node: &str) -> Stmt {
    Stmt::with(
        format!(
            "INSERT INTO {}.reporting_nodes (node) VALUES (?)",
            d.quoted()
        ),
        vec![Value::from(node)],
    )
}

/// Forgets a reporting node (its follows, checks and sources first).
pub fn delete_reporting_node(d: &Ident, node: &str) -> Vec<Stmt> {
    vec![
        Stmt::with(
            format!(
                "DELETE FROM {}.reporting_follows WHERE reporting_node = ?",
                d.quoted()
            ),
            vec![Value::from(node)],
        ),
        Stmt::with(
            format!(
                "DELETE FROM {}.reporting_checks WHERE reporting_node = ?",
                d.quoted()
            ),
            vec![Value::from(node)],
        ),
        Stmt::with(
            format!(
                "DELETE FROM {}.reporting_sources WHERE reporting_node = ?",
                d.quoted()
            ),
            vec![Value::from(node)],
        ),
        Stmt::with(
            format!("DELETE FROM {}.reporting_nodes WHERE node = ?", d.quoted()),
            vec![Value::from(node)],
        ),
    ]
}

/// A reporting node's sources: source node, channel, schemas (JSON list), pending (JSON
/// list), pending state, pending file and position, until file and position.
pub fn reporting_sources(d: &Ident, node: &str) -> Stmt {
    Stmt::with(
        format!(
            "SELECT source_node, channel, carried, pending, pending_state, pending_file, pending_pos, until_file, until_pos FROM {}.reporting_sources WHERE reporting_node = ? ORDER BY source_node",
            d.quoted()
        ),
        vec![Value::from(node)],
    )
}

/// Writes one source's row as it stands now (insert or replace).
#[allow(clippy::too_many_arguments)]
pub fn upsert_reporting_source(
    d: &Ident,
    node: &str,
    source: &str,
    channel: &Channel,
    schemas: &str,
    pending: &str,
    pending_state: &str,
    pending_at: Option<&BinlogPosition>,
    until: Option<&BinlogPosition>,
) -> Stmt {
    Stmt::with(
        format!(
            "REPLACE INTO {}.reporting_sources (reporting_node, source_node, channel, carried, pending, pending_state, pending_file, pending_pos, until_file, until_pos) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            d.quoted()
        ),
        vec![
            Value::from(node),
            Value::from(source),
            Value::from(channel.as_str()),
            Value::from(schemas),
            Value::from(pending),
            Value::from(pending_state),
            pending_at.map_or(Value::NULL, |p| Value::from(p.file.as_str())),
            pending_at.map_or(Value::NULL, |p| Value::from(p.pos)),
            until.map_or(Value::NULL, |p| Value::from(p.file.as_str())),
            until.map_or(Value::NULL, |p| Value::from(p.pos)),
        ],
    )
}

/// Forgets one source of a reporting node (its channel carries nothing any more).
pub fn delete_reporting_source(d: &Ident, node: &str, source: &str) -> Stmt {
    Stmt::with(
        format!(
            "DELETE FROM {}.reporting_sources WHERE reporting_node = ? AND source_node = ?",
            d.quoted()
        ),
        vec![Value::from(node), Value::from(source)],
    )
}

/// Records, for every attached reporting node, that its copy of `schema` (moved by
/// operation `op` from `from` to `to`) needs `to`'s events from `at`: written by the move
/// right after its flip, replacing an older follow of the same schema.
pub fn record_follow(
    d: &Ident,
    schema: &str,
    from: &str,
    to: &str,
    at: &BinlogPosition,
    op: u64,
) -> Stmt {
    Stmt::with(
        format!(
            "REPLACE INTO {d}.reporting_follows (reporting_node, schema_name, from_node, to_node, at_file, at_pos, operation_id) SELECT node, ?, ?, ?, ?, ?, ? FROM {d}.reporting_nodes",
            d = d.quoted()
        ),
        vec![
            Value::from(schema),
            Value::from(from),
            Value::from(to),
            Value::from(at.file.as_str()),
            Value::from(at.pos),
            Value::from(op),
        ],
    )
}

/// A reporting node's pending follows: schema, from node, to node, file, position,
/// operation, why the last attempt failed (NULL: not attempted yet), when recorded (Unix
/// milliseconds).
pub fn reporting_follows(d: &Ident, node: &str) -> Stmt {
    Stmt::with(
        format!(
            "SELECT schema_name, from_node, to_node, at_file, at_pos, operation_id, failure, CAST(UNIX_TIMESTAMP(recorded_at) * 1000 AS UNSIGNED) FROM {}.reporting_follows WHERE reporting_node = ? ORDER BY schema_name",
            d.quoted()
        ),
        vec![Value::from(node)],
    )
}

/// A follow done: the schema is joined at its position (or copied afresh).
pub fn delete_reporting_follow(d: &Ident, node: &str, schema: &str) -> Stmt {
    Stmt::with(
        format!(
            "DELETE FROM {}.reporting_follows WHERE reporting_node = ? AND schema_name = ?",
            d.quoted()
        ),
        vec![Value::from(node), Value::from(schema)],
    )
}

/// Why a reporting node's pending follows were not done this time (every one of them).
pub fn fail_reporting_follows(d: &Ident, node: &str, failure: &str) -> Stmt {
    Stmt::with(
        format!(
            "UPDATE {}.reporting_follows SET failure = ? WHERE reporting_node = ?",
            d.quoted()
        ),
        vec![Value::from(failure), Value::from(node)],
    )
}

/// Records the result of `reporting check` for one shard on one reporting node.
pub fn record_reporting_check(
    d: &Ident,
    node: &str,
    shard: u32,
    clean: bool,
    differing: &str,
) -> Stmt {
    Stmt::with(
        format!(
            "REPLACE INTO {}.reporting_checks (reporting_node, shard_id, clean, differing) VALUES (?, ?, ?, ?)",
            d.quoted()
        ),
        vec![
            Value::from(node),
            Value::from(shard),
            Value::from(clean),
            Value::from(differing),
        ],
    )
}

/// A reporting node's last checks: shard, clean (0/1), the differing tables (JSON list),
/// when (Unix milliseconds).
pub fn reporting_checks(d: &Ident, node: &str) -> Stmt {
    Stmt::with(
        format!(
            "SELECT shard_id, clean, differing, CAST(UNIX_TIMESTAMP(checked_at) * 1000 AS UNSIGNED) FROM {}.reporting_checks WHERE reporting_node = ? ORDER BY shard_id",
            d.quoted()
        ),
        vec![Value::from(node)],
    )
}
