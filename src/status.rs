//! The fleet at a glance: what each node is and how its replication stands. Nodes are
//! asked in parallel, one connection each.

use crate::config::Inventory;
use crate::directory::{coverage, Coverage, Directory, OperationSummary, ShardState};
use crate::error::{Error, Result};
use crate::server::catalog::SchemaSize;
use crate::server::replication::{ChannelStatus, Coordinates, ServerSettings};
use crate::server::{ConnectSpec, Server};
use serde::Serialize;
use std::collections::BTreeMap;

/// What one node reported, or why it could not.
#[derive(Debug, Clone, Serialize)]
pub struct NodeReport {
    /// Inventory name.
    #[serde(rename = "node")]
    pub name: String,
    /// `host:port` or socket.
    pub address: String,
    /// `MariaDB 10.11.6`, when reachable.
    pub flavor: Option<String>,
    /// Settings, when reachable.
    pub settings: Option<ServerSettings>,
    /// Binary-log coordinates, when reachable and logging.
    pub coordinates: Option<Coordinates>,
    /// Replication channels on the node.
    pub channels: Vec<ChannelStatus>,
    /// Shards the directory places on this node.
    pub shards: usize,
    /// Data plus index bytes of those shards' schemas.
    pub shard_bytes: u64,
    /// Why the node could not be read.
    pub error: Option<String>,
    /// Sizes of every schema on the node (used to fill the shard table).
    #[serde(skip)]
    pub schema_sizes: BTreeMap<String, SchemaSize>,
}

fn report(inv: &Inventory, name: &str) -> (NodeReport, Option<Error>) {
    let mut out = NodeReport {
        name: name.to_string(),
        address: inv.node(name).map(|n| n.address()).unwrap_or_default(),
        flavor: None,
        settings: None,
        coordinates: None,
        channels: Vec::new(),
        shards: 0,
        shard_bytes: 0,
        error: None,
        schema_sizes: BTreeMap::new(),
    };
    let read = |out: &mut NodeReport| -> Result<()> {
        let node = inv.node(name)?;
        let mut server = Server::connect(&ConnectSpec::for_node(inv, node)?)?;
        out.flavor = Some(server.flavor().to_string());
        let settings = server.settings()?;
        if settings.log_bin {
            out.coordinates = Some(server.coordinates()?);
        }
        out.settings = Some(settings);
        out.channels = server.channels()?;
        out.schema_sizes = server.schema_sizes()?;
        Ok(())
    };
    match read(&mut out) {
        Ok(()) => (out, None),
        Err(e) => {
            out.error = Some(e.to_string());
            (out, Some(e))
        }
    }
}

/// Reports from every node asked, and the errors of those that could not be read.
#[derive(Debug)]
pub struct Gathered {
    /// One report per node, in the order asked.
    pub reports: Vec<NodeReport>,
    /// The errors, in the same order.
    pub errors: Vec<Error>,
}

/// The error to exit with when some nodes failed: the first, noting how many more.
pub fn first_error(mut errors: Vec<Error>) -> Option<Error> {
    if errors.is_empty() {
        return None;
    }
    let more = errors.len() - 1;
    let first = errors.swap_remove(0);
    Some(match (first, more) {
        (e, 0) => e,
        (Error::Server { node, message }, n) => Error::Server {
            node,
            message: format!("{message} (and {n} more nodes failed)"),
        },
        (e, _) => e,
    })
}

/// Reports on `names` (all nodes when empty), in parallel. Unknown names are refused before
/// any connection is made.
pub fn gather_nodes(inv: &Inventory, names: &[String]) -> Result<Gathered> {
    let names: Vec<String> = if names.is_empty() {
        inv.node_names().into_iter().map(String::from).collect()
    } else {
        for n in names {
            inv.node(n)?;
        }
        names.to_vec()
    };
    let results = std::thread::scope(|s| {
        let handles: Vec<_> = names
            .iter()
            .map(|n| s.spawn(move || report(inv, n)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("status worker panicked"))
            .collect::<Vec<_>>()
    });
    let (reports, errors): (Vec<_>, Vec<_>) = results.into_iter().unzip();
    Ok(Gathered {
        reports,
        errors: errors.into_iter().flatten().collect(),
    })
}

/// One shard as `status` shows it.
#[derive(Debug, Clone, Serialize)]
pub struct ShardReport {
    /// Shard id.
    #[serde(rename = "shard")]
    pub id: u32,
    /// Function name.
    pub function: String,
    /// What it covers.
    pub coverage: Coverage,
    /// Node.
    pub node: String,
    /// Physical schemas.
    pub schemas: Vec<String>,
    /// Estimated rows (information_schema).
    pub rows: u64,
    /// Data plus index bytes.
    pub bytes: u64,
    /// State.
    pub state: ShardState,
    /// Operation in progress (`move #12 copying`).
    pub operation: Option<String>,
}

/// The fleet: nodes and, when a directory exists, its shards.
#[derive(Debug, Serialize)]
pub struct Fleet {
    /// Directory version, when a directory exists.
    pub directory_version: Option<u64>,
    /// Nodes.
    pub nodes: Vec<NodeReport>,
    /// Shards.
    pub shards: Vec<ShardReport>,
    /// Errors of nodes that could not be read.
    #[serde(skip)]
    pub errors: Vec<Error>,
}

/// Gathers nodes (in parallel, one connection and a few queries each) and the directory
/// (one connection). A directory that does not exist yet only leaves the shard list empty.
pub fn gather_fleet(inv: &Inventory, names: &[String]) -> Result<Fleet> {
    let (dir_result, gathered) = std::thread::scope(|s| {
        let dir = s.spawn(
            || -> Result<Option<(crate::directory::Snapshot, Vec<OperationSummary>)>> {
                match Directory::open_existing(inv)? {
                    None => Ok(None),
                    Some(mut d) => {
                        let snap = d.load()?;
                        let ops = d.active_operations()?;
                        Ok(Some((snap, ops)))
                    }
                }
            },
        );
        let nodes = gather_nodes(inv, names);
        (dir.join().expect("directory reader panicked"), nodes)
    });
    let mut gathered = gathered?;
    let directory = match dir_result {
        Ok(d) => d,
        Err(e) => {
            gathered.errors.push(e);
            None
        }
    };
    let mut shards = Vec::new();
    let mut version = None;
    if let Some((snap, ops)) = directory {
        version = Some(snap.version);
        for shard in &snap.shards {
            let Some(func) = snap.function_by_id(shard.func_id) else {
                continue;
            };
            let schemas = snap.shard_schemas(shard);
            let sizes = gathered
                .reports
                .iter()
                .find(|r| r.name == shard.node)
                .map(|r| &r.schema_sizes);
            let (rows, bytes) = schemas
                .iter()
                .filter_map(|s| sizes.and_then(|m| m.get(s)))
                .fold((0, 0), |(r, b), s| (r + s.rows, b + s.bytes));
            if !names.is_empty() && !names.contains(&shard.node) {
                continue;
            }
            let operation = ops
                .iter()
                .find(|o| o.shard_id == Some(shard.id))
                .map(|o| format!("{} #{} {}", o.kind, o.id, o.state));
            shards.push(ShardReport {
                id: shard.id,
                function: func.name.clone(),
                coverage: coverage(&snap, func, shard.id),
                node: shard.node.clone(),
                schemas,
                rows,
                bytes,
                state: shard.state,
                operation,
            });
        }
        for r in &mut gathered.reports {
            let mine: Vec<&ShardReport> = shards.iter().filter(|s| s.node == r.name).collect();
            r.shards = mine.len();
            r.shard_bytes = mine.iter().map(|s| s.bytes).sum();
        }
    }
    Ok(Fleet {
        directory_version: version,
        nodes: gathered.reports,
        shards,
        errors: gathered.errors,
    })
}
