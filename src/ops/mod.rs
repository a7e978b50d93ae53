//! Procedures that change the fleet, built from steps. Each checks everything it can
//! before its first change, and undoes its own partial work when a later step fails.

pub mod add_shard;
pub mod add_table;
pub(crate) mod checks;
pub mod effects;
pub mod fence;
pub mod hooks;
pub mod keys;
pub mod merge;
pub mod mover;
pub mod plan;
pub mod remove;
pub mod split;
pub mod steps;
pub mod switch;
