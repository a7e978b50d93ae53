//! Copying a shard's schemas from one node to another, with the binary-log coordinates the
//! copy corresponds to. `native` runs in-process with parallel workers; `dump` pipes the
//! distribution's dump tool into its client.

pub mod dump;
pub mod native;
pub mod objects;

use crate::ident::Ident;
use crate::server::replication::Coordinates;
use serde::{Deserialize, Serialize};

/// Which copy method.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    /// In-process: one consistent snapshot, parallel readers and writers.
    Native,
    /// mariadb-dump / mysqldump piped into the client.
    Dump,
}

/// A schema to copy and the name it gets on the target.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SchemaPair {
    /// Name on the source.
    pub from: Ident,
    /// Name on the target.
    pub to: Ident,
}

/// What a copy did.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct CopyReport {
    /// Coordinates on the source the copy is consistent with.
    pub coordinates: Option<Coordinates>,
    /// Tables copied.
    pub tables: usize,
    /// Rows copied.
    pub rows: u64,
    /// Wall time, milliseconds.
    pub millis: u64,
}
