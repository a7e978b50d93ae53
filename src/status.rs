//! The fleet at a glance: what each node is and how its replication stands. Nodes are
//! asked in parallel, one connection each.

use crate::config::Inventory;
use crate::error::{Error, Result};
use crate::server::replication::{ChannelStatus, Coordinates, ServerSettings};
use crate::server::{ConnectSpec, Server};
use serde::Serialize;

/// What one node reported, or why it could not.
#[derive(Debug, Clone, Serialize)]
pub struct NodeReport {
    /// Inventory name.
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
    /// Why the node could not be read.
    pub error: Option<String>,
}

fn report(inv: &Inventory, name: &str) -> (NodeReport, Option<Error>) {
    let mut out = NodeReport {
        name: name.to_string(),
        address: inv.node(name).map(|n| n.address()).unwrap_or_default(),
        flavor: None,
        settings: None,
        coordinates: None,
        channels: Vec::new(),
        error: None,
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

impl Gathered {
    /// The error to exit with when some nodes failed: the first, noting how many more.
    pub fn into_error(mut self) -> Option<Error> {
        if self.errors.is_empty() {
            return None;
        }
        let more = self.errors.len() - 1;
        let first = self.errors.swap_remove(0);
        Some(match (first, more) {
            (e, 0) => e,
            (Error::Server { node, message }, n) => Error::Server {
                node,
                message: format!("{message} (and {n} more nodes failed)"),
            },
            (e, _) => e,
        })
    }
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
