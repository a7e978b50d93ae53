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
pub use router::{
    is_refresh_error, KeyCacheStats, Reload, Route, Router, DEFAULT_KEY_CACHE_CAPACITY,
};
pub use store::{
    Assigned, Delta, Directory, FullReason, Imported, KeyChanges, NewMapping, Reread,
    TablePlacement,
};
