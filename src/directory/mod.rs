//! The sharding directory: its schema, its content, the operations journal, id sequences,
//! lookups, and the router applications use.

pub mod analyze;
pub mod journal;
pub mod lookup;
pub mod model;
pub mod names;
pub mod owner;
pub mod phase;
pub mod router;
pub mod schema;
pub mod sequences;
pub mod store;

pub use lookup::{coverage, Coverage, Index};
pub use model::*;
pub use router::{is_refresh_error, Reload, Route, Router};
pub use store::{Delta, Directory, FullReason, NewMapping, Reread, TablePlacement};
