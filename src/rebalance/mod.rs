//! Rebalancing: a pure planner (this crate's `planner`), with the gathering of sizes and the
//! application of plans to come.

pub mod planner;
