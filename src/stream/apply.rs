//! The target side: one target transaction per source transaction, the row changes of the
//! moving tables applied in the source's order, the checkpoint written last in the same
//! transaction.
//!
//! Bounded memory: the changes of a source transaction are buffered up to a number of rows
//! and of bytes; when either bound is reached, the buffer is applied inside the target
//! transaction, which stays open until the source transaction's commit is read. A source
//! transaction of any size is therefore still one target transaction (atomic: a crash
//! anywhere in it rolls all of it back, checkpoint included), and the stream holds at most
//! one buffer of rows (plus the row event being read) at any time.

use super::table::TableDef;
use super::Checkpoint;
use crate::error::{Error, Result};
use crate::ident::Ident;
use crate::server::stream::{self as sql, CheckpointRow};
use crate::server::{statements, ConnectSpec, Server};
use mysql::Value;

/// One row change to apply, its values converted.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// A row to insert: the written columns' values.
    Insert {
        /// The moving table (its index).
        table: usize,
        /// The written columns' values.
        values: Vec<Value>,
    },
    /// A row to update, found by its key's before image.
    Update {
        /// The moving table.
        table: usize,
        /// The key's before image.
        key: Vec<Value>,
        /// The written columns' after image.
        values: Vec<Value>,
    },
    /// A row to delete, found by its key's before image.
    Delete {
        /// The moving table.
        table: usize,
        /// The key's before image.
        key: Vec<Value>,
    },
}

impl Change {
    /// Roughly the bytes it holds, for the buffer's bound.
    pub fn size(&self) -> usize {
        let of = |v: &[Value]| {
            v.iter()
                .map(|x| match x {
                    Value::Bytes(b) => b.len() + 8,
                    _ => 16,
                })
                .sum::<usize>()
        };
        match self {
            Change::Insert { values, .. } => of(values),
            Change::Update { key, values, .. } => of(key) + of(values),
            Change::Delete { key, .. } => of(key),
        }
    }
}

/// A duplicate key (1062): the target already holds the row.
fn is_duplicate(e: &Error) -> bool {
    matches!(e, Error::Server { message, .. } if message.starts_with("error 1062 ("))
}

/// The target's session and its open transaction.
pub struct Applier {
    server: Server,
    checkpoint_schema: Ident,
    stream_id: String,
    /// The owner epoch it writes with: a checkpoint claimed by a newer one stops it.
    epoch: u64,
    /// The target held the stream's checkpoint when it was prepared: gone since, another
    /// owner ended the stream, and this one must not start it afresh.
    expect_checkpoint: bool,
    /// A target transaction is open.
    open: bool,
    /// Most rows of one multi-row INSERT.
    insert_rows: usize,
}

impl Applier {
    /// Connects to the target and prepares the applier's session.
    pub fn connect(
        target: &ConnectSpec,
        checkpoint_schema: &Ident,
        stream_id: &str,
        insert_rows: usize,
        epoch: u64,
        expect_checkpoint: bool,
    ) -> Result<Applier> {
        let mut server = super::connect(target)?;
        server.exec(&sql::applier_session())?;
        Ok(Applier {
            server,
            checkpoint_schema: checkpoint_schema.clone(),
            stream_id: stream_id.to_string(),
            epoch,
            expect_checkpoint,
            open: false,
            insert_rows: insert_rows.max(1),
        })
    }

    /// The target's session (its connection id for a test that ends it).
    pub fn server(&mut self) -> &mut Server {
        &mut self.server
    }

    /// A target transaction is open.
    pub fn is_open(&self) -> bool {
        self.open
    }

    fn begin(&mut self) -> Result<()> {
        if !self.open {
            self.server.exec(&sql::start_transaction())?;
            self.open = true;
        }
        Ok(())
    }

    /// Applies `changes` in order inside the target transaction (opened if need be).
    /// Consecutive inserts into one table go as multi-row INSERTs.
    pub fn apply(&mut self, tables: &[TableDef], changes: &mut Vec<Change>) -> Result<()> {
        if changes.is_empty() {
            return Ok(());
        }
        self.begin()?;
        let mut i = 0;
        while i < changes.len() {
            match &changes[i] {
                Change::Insert { table, .. } => {
                    let t = *table;
                    let mut j = i;
                    let mut values = Vec::new();
                    while j < changes.len() && j - i < self.insert_rows {
                        match &mut changes[j] {
                            Change::Insert { table, values: v } if *table == t => {
                                values.append(v);
                                j += 1;
                            }
                            _ => break,
                        }
                    }
                    let def = &tables[t];
                    let st = sql::insert_rows(
                        &def.target_schema,
                        &def.table,
                        &def.written_names,
                        j - i,
                        values,
                    );
                    self.server.exec(&st).map_err(|e| {
                        if is_duplicate(&e) {
                            Error::Refused(format!(
                                "the target's {}.{} already holds a row the source inserted ({e}): the target diverged from the source; the stream stops",
                                def.target_schema, def.table
                            ))
                        } else {
                            e
                        }
                    })?;
                    i = j;
                }
                Change::Update { table, key, values } => {
                    let def = &tables[*table];
                    let mut params = values.clone();
                    params.extend(key.iter().cloned());
                    let st = sql::update_by_key(
                        &def.target_schema,
                        &def.table,
                        &def.written_names,
                        &def.key_names,
                        params,
                    );
                    if self.server.exec_affected(&st)? == 0 {
                        // Nothing changed: the row was as the after image has it, or it
                        // is missing.
                        let count = sql::count_by_key(
                            &def.target_schema,
                            &def.table,
                            &def.key_names,
                            key.clone(),
                        );
                        if self.server.first::<u64>(&count)?.unwrap_or(0) == 0 {
                            return Err(missing(def, "update"));
                        }
                    }
                    i += 1;
                }
                Change::Delete { table, key } => {
                    let def = &tables[*table];
                    let st = sql::delete_by_key(
                        &def.target_schema,
                        &def.table,
                        &def.key_names,
                        key.clone(),
                    );
                    if self.server.exec_affected(&st)? == 0 {
                        return Err(missing(def, "delete"));
                    }
                    i += 1;
                }
            }
        }
        changes.clear();
        Ok(())
    }

    /// Writes `cp` in the open transaction (opening one if need be): the last statement
    /// before the commit.
    pub fn write_checkpoint(&mut self, cp: &Checkpoint) -> Result<()> {
        self.begin()?;
        // The fencing token: the checkpoint's row locked, its epoch read. A newer owner's
        // claim, or its end of the stream, rolls this transaction back instead.
        let claimed: Option<u64> = self.server.first(&sql::lock_checkpoint_epoch(
            &self.checkpoint_schema,
            &self.stream_id,
        ))?;
        match claimed {
            Some(e) if e > self.epoch => {
                return Err(Error::LeaseLost(format!(
                    "stream {}: its checkpoint was claimed by a newer owner (epoch {e}, this one {}): nothing more is applied",
                    self.stream_id, self.epoch
                )))
            }
            None if self.expect_checkpoint => {
                return Err(Error::LeaseLost(format!(
                    "stream {}: its checkpoint is gone from the target (another owner ended the stream): nothing more is applied",
                    self.stream_id
                )))
            }
            _ => {}
        }
        self.server.exec(&sql::write_checkpoint(
            &self.checkpoint_schema,
            &CheckpointRow {
                stream_id: &self.stream_id,
                position: &cp.position,
                gtid_state: &cp.gtid_state,
                last_gtid: &cp.last_gtid,
                transactions: cp.transactions,
                row_changes: cp.row_changes,
                source_time: cp.source_time,
                epoch: self.epoch,
            },
        ))
    }

    /// Commits the open transaction.
    /// Whether the session's next transactions reach the target's binary log (`sql_log_bin`;
    /// outside a transaction only).
    pub fn log_to_binlog(&mut self, on: bool) -> Result<()> {
        self.server.exec(&statements::sql_log_bin(on))
    }

    pub fn commit(&mut self) -> Result<()> {
        if self.open {
            self.open = false;
            self.server.exec(&statements::commit())?;
        }
        Ok(())
    }

    /// Rolls the open transaction back (what a lost connection does on the server too).
    pub fn rollback(&mut self) -> Result<()> {
        if self.open {
            self.open = false;
            self.server.exec(&sql::rollback())?;
        }
        Ok(())
    }

    /// The connection failed outside the server (closed, timed out): a new one is needed.
    pub fn is_broken(&self) -> bool {
        self.server.is_broken()
    }
}

fn missing(def: &TableDef, what: &str) -> Error {
    Error::Refused(format!(
        "the target's {}.{} lacks a row the source's {what} found: the target diverged from the source; the stream stops",
        def.target_schema, def.table
    ))
}

/// Reads a stream's checkpoint from the target; None when it has none (or no checkpoint
/// table yet).
pub fn read_checkpoint(
    server: &mut Server,
    schema: &Ident,
    stream_id: &str,
) -> Result<Option<Checkpoint>> {
    type Row = (String, u64, String, String, u64, u64, u64);
    match server.first::<Row>(&sql::read_checkpoint(schema, stream_id)) {
        Ok(row) => Ok(row.map(
            |(file, pos, gtid_state, last_gtid, transactions, row_changes, source_time)| {
                Checkpoint {
                    position: crate::server::BinlogPosition { file, pos },
                    gtid_state,
                    last_gtid,
                    transactions,
                    row_changes,
                    source_time,
                }
            },
        )),
        // No such schema or table: no checkpoint yet.
        Err(Error::Server { message, .. })
            if message.starts_with("error 1146 (") || message.starts_with("error 1049 (") =>
        {
            Ok(None)
        }
        Err(e) => Err(e),
    }
}
