//! shardctl: shard management for MySQL and MariaDB fleets sharded through a sharding
//! directory. The binary is a thin shell over this library.

pub mod cli;
pub mod clock;
pub mod config;
pub mod control;
pub mod copy;
pub mod directory;
pub mod error;
pub mod exporter;
pub mod fault;
pub mod ident;
pub mod ops;
pub mod output;
pub mod playbook;
pub mod prune;
pub mod rebalance;
pub mod remote;
pub mod sample;
pub mod sandbox;
pub mod server;
pub mod signal;
// The references: placement what-if, ids, global tables, cross-shard queries (issue 15).
pub mod global;
pub mod ids;
pub mod query;
pub mod reporting;
pub mod simulate;
pub mod status;
pub mod stream;
pub mod verify;
pub mod workload;

pub use error::{Error, ExitCode, Result};
