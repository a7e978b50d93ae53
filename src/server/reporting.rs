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
            Some(e) => Err(self.fail(&e)),
            None => Ok(()),
        }
    }
}
