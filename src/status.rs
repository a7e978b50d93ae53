//! The fleet at a glance: what each node is and how its replication stands. Nodes are
//! asked in parallel, one connection each.

use crate::config::Inventory;
use crate::directory::journal::OperationSummary;
use crate::directory::{coverage, Coverage, Directory, ShardState};
use crate::error::{Error, Result};
use crate::ident::Ident;
use crate::server::catalog::SchemaSize;
use crate::server::replication::{ChannelStatus, Coordinates, ServerSettings};
use crate::server::{ConnectSpec, Server};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

/// Where shard sizes come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SizeSource {
    /// information_schema as the tables' statistics last left them: free, but stale right
    /// after a copy or a large change until the server recalculates them.
    #[default]
    Statistics,
    /// Statistics refreshed first: `ANALYZE NO_WRITE_TO_BINLOG TABLE` on every base table
    /// of every shard, then the same information_schema figures. Bytes are then the pages
    /// the indexes hold; rows stay an estimate.
    Exact,
}

impl SizeSource {
    /// `statistics` or `exact`.
    pub fn name(self) -> &'static str {
        match self {
            SizeSource::Statistics => "statistics",
            SizeSource::Exact => "exact",
        }
    }
}

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
    /// The node's replicas (the inventory's `replicas:`), each asked how it replicates
    /// from the node.
    pub replicas: Vec<ReplicaReport>,
    /// Shards the directory places on this node.
    pub shards: usize,
    /// Data plus index bytes of those shards' schemas.
    pub shard_bytes: u64,
    /// Why the node could not be read.
    pub error: Option<String>,
    /// The address the directory gives applications for this node (`host:port`), when it
    /// differs from the inventory's: applications reach another server than shardctl does
    /// (`status` warns). None when they agree or the node is not registered.
    pub directory_address: Option<String>,
    /// Sizes of every schema on the node (used to fill the shard table).
    #[serde(skip)]
    pub schema_sizes: BTreeMap<String, SchemaSize>,
    /// Schemas whose statistics could not be refreshed (their sizes are statistics).
    #[serde(skip)]
    pub stale_schemas: BTreeSet<String>,
}

/// One replica of a node as `status` shows it.
#[derive(Debug, Clone, Serialize)]
pub struct ReplicaReport {
    /// The inventory's entry: a node's name, or the address.
    pub replica: String,
    /// `host:port` or socket.
    pub address: String,
    /// Whether it answered.
    pub reachable: bool,
    /// Its channel from the node: the receiver (`yes`, `no`, `connecting`), when found.
    pub io_state: Option<String>,
    /// ... the applier runs.
    pub sql_running: Option<bool>,
    /// ... seconds behind the node, when known.
    pub seconds_behind: Option<u64>,
    /// Why it could not be read, it has no channel from the node, or its channel's last
    /// error.
    pub error: Option<String>,
}

impl ReplicaReport {
    /// Reachable, replicating from the node with both threads, no error.
    pub fn healthy(&self) -> bool {
        self.reachable
            && self.io_state.as_deref() == Some("yes")
            && self.sql_running == Some(true)
            && self.error.is_none()
    }
}

/// Asks each of `node`'s replicas how it replicates from it (never fails: an unreachable
/// replica is reported so).
fn replica_reports(inv: &Inventory, node: &str) -> Vec<ReplicaReport> {
    let Ok(primary) = inv.node(node) else {
        return Vec::new();
    };
    let source = primary.address();
    primary
        .spec
        .replicas
        .iter()
        .map(|r| {
            let mut out = ReplicaReport {
                replica: r.label(),
                address: ConnectSpec::for_replica(inv, primary, r)
                    .map(|s| s.address())
                    .unwrap_or_default(),
                reachable: false,
                io_state: None,
                sql_running: None,
                seconds_behind: None,
                error: None,
            };
            let channels = ConnectSpec::for_replica(inv, primary, r)
                .and_then(|spec| Server::connect(&spec))
                .and_then(|mut server| server.channels());
            match channels {
                Err(e) => out.error = Some(e.to_string()),
                Ok(channels) => {
                    out.reachable = true;
                    match channels.into_iter().find(|c| c.source == source) {
                        None => out.error = Some(format!("no channel from {node} ({source})")),
                        Some(c) => {
                            out.io_state = Some(c.io_running.to_ascii_lowercase());
                            out.sql_running = Some(c.sql_running);
                            out.seconds_behind = c.seconds_behind;
                            out.error = c.last_error().map(str::to_string);
                        }
                    }
                }
            }
            out
        })
        .collect()
}

fn report(inv: &Inventory, name: &str, analyze: &[String]) -> (NodeReport, Option<Error>) {
    let mut out = NodeReport {
        name: name.to_string(),
        address: inv.node(name).map(|n| n.address()).unwrap_or_default(),
        flavor: None,
        settings: None,
        coordinates: None,
        channels: Vec::new(),
        replicas: Vec::new(),
        shards: 0,
        shard_bytes: 0,
        error: None,
        directory_address: None,
        schema_sizes: BTreeMap::new(),
        stale_schemas: BTreeSet::new(),
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
        let mut valid = Vec::new();
        let mut failed: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for schema in analyze {
            match Ident::new("schema", schema) {
                Ok(id) => valid.push(id),
                Err(e) => {
                    failed.insert(schema.clone(), vec![e.to_string()]);
                }
            }
        }
        failed.extend(server.refresh_statistics(&valid)?);
        for (schema, messages) in failed {
            crate::output::log(
                0,
                &format!(
                    "{name}: statistics of {schema} not refreshed, its size is from statistics: {}",
                    messages.join("; ")
                ),
            );
            out.stale_schemas.insert(schema);
        }
        out.schema_sizes = server.schema_sizes()?;
        Ok(())
    };
    let result = read(&mut out);
    out.replicas = replica_reports(inv, name);
    match result {
        Ok(()) => (out, None),
        Err(e) => {
            out.error = Some(e.to_string());
            (out, Some(e))
        }
    }
}

/// The first `host:port` the directory gives for `node` — its registration, then the
/// locations of its shards, which routers connect to — that differs from the inventory's
/// host and port (a socket node is compared by the host and port the inventory gives it
/// too, which `node add` registers by default).
fn address_mismatch(
    inv: &Inventory,
    snap: &crate::directory::Snapshot,
    node: &str,
) -> Option<String> {
    let spec = inv.node(node).ok()?;
    let registered = snap
        .nodes
        .iter()
        .filter(|n| n.name == node)
        .map(|n| (&n.host, n.port));
    let located = snap
        .shards
        .iter()
        .filter(|s| s.node == node)
        .map(|s| (&s.host, s.port));
    registered
        .chain(located)
        .find(|(host, port)| host.as_str() != spec.host() || *port != spec.port())
        .map(|(host, port)| format!("{host}:{port}"))
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
    gather_nodes_with(inv, names, &BTreeMap::new())
}

/// [`gather_nodes`], refreshing first the statistics of the schemas `analyze` lists for
/// each node.
fn gather_nodes_with(
    inv: &Inventory,
    names: &[String],
    analyze: &BTreeMap<String, Vec<String>>,
) -> Result<Gathered> {
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
            .map(|n| {
                let schemas = analyze.get(n).map(Vec::as_slice).unwrap_or(&[]);
                s.spawn(move || report(inv, n, schemas))
            })
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
    /// The node the directory places the shard on.
    pub node: String,
    /// Physical schemas.
    pub schemas: Vec<String>,
    /// Estimated rows (information_schema).
    pub rows: u64,
    /// Data plus index bytes.
    pub bytes: u64,
    /// Where `rows` and `bytes` come from: `exact` when its statistics were refreshed.
    pub size_source: SizeSource,
    /// The keys the directory maps to it, for a shard of a per-key function (its kept
    /// count); absent for other functions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub keys: Option<u64>,
    /// The shard's state in the directory (online, moving, read-only, ...).
    pub state: ShardState,
    /// What the operator lets reach it (`shard set-availability`).
    pub availability: crate::directory::Availability,
    /// Operation in progress (`move #12 copying`).
    pub operation: Option<String>,
    /// A prune is pending (a split or merge under way, or its prune): the shard still holds
    /// rows it no longer owns, and `rows` and `bytes` count them too.
    pub unpruned: bool,
    /// The shard's move waits in its revert window (absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub revert_window: Option<RevertWindow>,
    /// Why the directory's location of this online shard looks stale: its node answered
    /// without one of its schemas (`node1 has no schema app_1; node2 has it`), as after the
    /// directory was restored from a backup older than a move. Absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stale_location: Option<String>,
}

/// Why the directory's location of a shard looks stale: `node` answered and lacks one of
/// `schemas` (with at least one table), and which other nodes read have it. None when the
/// node holds them all or could not be read.
fn stale_location(schemas: &[String], node: &str, reports: &[NodeReport]) -> Option<String> {
    let report = reports
        .iter()
        .find(|r| r.name == node && r.settings.is_some())?;
    let missing = schemas
        .iter()
        .find(|s| !report.schema_sizes.contains_key(*s))?;
    let elsewhere: Vec<&str> = reports
        .iter()
        .filter(|r| r.name != node && r.schema_sizes.contains_key(missing))
        .map(|r| r.name.as_str())
        .collect();
    Some(match elsewhere.as_slice() {
        [] => format!("{node} has no schema {missing}"),
        nodes => format!(
            "{node} has no schema {missing}; {} has it",
            nodes.join(", ")
        ),
    })
}

/// The rows and bytes of `schemas` together, from a node's schema sizes (a schema it does
/// not hold counts nothing).
pub fn schemas_size(schemas: &[String], sizes: &BTreeMap<String, SchemaSize>) -> (u64, u64) {
    schemas
        .iter()
        .filter_map(|s| sizes.get(s))
        .fold((0, 0), |(r, b), s| (r + s.rows, b + s.bytes))
}

/// A move's open revert window, as its owner journaled it in the step's outputs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RevertWindow {
    /// The move.
    pub op: u64,
    /// When the window ends (RFC 3339), once journaled.
    pub ends_at: Option<String>,
    /// Why its end keeps the old copy past it: the new node does not answer or does not hold
    /// the shard (`node3 does not answer (...)`). None while the window runs normally.
    pub held: Option<String>,
    /// Why the last `revert` failed before its flip, if one did.
    pub revert_error: Option<String>,
}

impl RevertWindow {
    /// The window of `op` when its next step is `revert-window`.
    fn of(op: &crate::directory::journal::OperationRecord) -> Option<RevertWindow> {
        let step = op
            .steps
            .iter()
            .find(|s| s.state != crate::directory::journal::StepState::Done)?;
        if step.name != "revert-window" {
            return None;
        }
        let text = |key: &str| {
            step.outputs
                .get(key)
                .and_then(|v| v.as_str())
                .map(str::to_string)
        };
        Some(RevertWindow {
            op: op.id,
            ends_at: step
                .outputs
                .get("revert_until_unix")
                .and_then(|v| v.as_i64())
                .map(|u| crate::clock::rfc3339_millis(u.saturating_mul(1000))),
            held: text("window_held"),
            revert_error: text("revert_error"),
        })
    }
}

/// The fleet: nodes and, when a directory exists, its shards.
#[derive(Debug, Serialize)]
pub struct Fleet {
    /// Directory version, when a directory exists.
    pub directory_version: Option<u64>,
    /// The sizes asked for (`status --exact`: `exact`); each shard says what it got.
    pub size_source: SizeSource,
    /// Every node of the inventory, as it answered (or why it did not).
    pub nodes: Vec<NodeReport>,
    /// Every shard of the directory, with its size.
    pub shards: Vec<ShardReport>,
    /// Each sequence compared with the highest id stored in the columns it feeds: a
    /// `hazard` names one that would hand out ids already in use.
    pub sequences: Vec<crate::ids::SequenceCheck>,
    /// The members of the directory's cluster and their state (None: the directory lives
    /// on one node).
    pub directory_members: Option<Vec<crate::directory::store::MemberReport>>,
    /// Errors of nodes that could not be read.
    #[serde(skip)]
    pub errors: Vec<Error>,
}

/// Gathers nodes (in parallel, one connection and a few queries each) and the directory
/// (one connection). A directory that does not exist yet only leaves the shard list empty.
/// Sizes are the statistics' ([`gather_fleet_sized`] refreshes them first).
pub fn gather_fleet(inv: &Inventory, names: &[String]) -> Result<Fleet> {
    gather_fleet_sized(inv, names, SizeSource::Statistics)
}

/// [`gather_fleet`], with shard sizes from `source`: for [`SizeSource::Exact`] the
/// directory is read first, then each node refreshes the statistics of the shard schemas
/// it holds before reporting sizes.
pub fn gather_fleet_sized(inv: &Inventory, names: &[String], source: SizeSource) -> Result<Fleet> {
    type DirRead = Result<
        Option<(
            crate::directory::Snapshot,
            Vec<OperationSummary>,
            Vec<RevertWindow>,
            Vec<crate::directory::sequences::Sequence>,
            BTreeMap<u32, u64>,
        )>,
    >;
    let read_dir = || -> DirRead {
        match Directory::open_existing(inv)? {
            None => Ok(None),
            Some(mut d) => {
                let snap = d.load()?;
                let ops = d.active_operations()?;
                // Only a move has a revert window: its record (steps and outputs) is read
                // for those alone.
                let moves: Vec<u64> = ops
                    .iter()
                    .filter(|o| o.kind == crate::directory::journal::OpKind::Move)
                    .map(|o| o.id)
                    .collect();
                let windows: Vec<RevertWindow> = d
                    .operations_in(&moves)?
                    .iter()
                    .filter_map(RevertWindow::of)
                    .collect();
                let sequences = crate::directory::sequences::sequences(&mut d)?;
                let keys = d.per_key_counts(&snap)?;
                Ok(Some((snap, ops, windows, sequences, keys)))
            }
        }
    };
    let (dir_result, gathered) = match source {
        SizeSource::Statistics => std::thread::scope(|s| {
            let dir = s.spawn(read_dir);
            let nodes = gather_nodes(inv, names);
            (dir.join().expect("directory reader panicked"), nodes)
        }),
        SizeSource::Exact => {
            let dir = read_dir();
            let mut analyze: BTreeMap<String, Vec<String>> = BTreeMap::new();
            if let Ok(Some((snap, ..))) = &dir {
                for shard in &snap.shards {
                    analyze
                        .entry(shard.node.clone())
                        .or_default()
                        .extend(snap.shard_schemas(shard));
                }
            }
            (dir, gather_nodes_with(inv, names, &analyze))
        }
    };
    let mut gathered = gathered?;
    let directory_members = crate::directory::store::survey(inv)?;
    let directory = match dir_result {
        Ok(d) => d,
        Err(e) => {
            gathered.errors.push(e);
            None
        }
    };
    let mut shards = Vec::new();
    let mut version = None;
    let mut sequences = Vec::new();
    if let Some((snap, ops, windows, seqs, keys)) = directory {
        version = Some(snap.version);
        sequences = crate::ids::check_sequences(inv, &snap, &seqs);
        let unpruned = crate::query::unpruned_shards(&snap, &ops);
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
            let (rows, bytes) = sizes.map_or((0, 0), |m| schemas_size(&schemas, m));
            let stale = gathered
                .reports
                .iter()
                .find(|r| r.name == shard.node)
                .is_none_or(|r| schemas.iter().any(|s| r.stale_schemas.contains(s)));
            let size_source = match source {
                SizeSource::Exact if !stale => SizeSource::Exact,
                _ => SizeSource::Statistics,
            };
            if !names.is_empty() && !names.contains(&shard.node) {
                continue;
            }
            let op = ops.iter().find(|o| o.shard_id == Some(shard.id));
            let operation = op.map(|o| {
                let paused = if o.paused { " (paused)" } else { "" };
                format!("{} #{} {}{paused}", o.kind, o.id, o.state)
            });
            let revert_window = op.and_then(|o| windows.iter().find(|w| w.op == o.id).cloned());
            // A shard under an operation may lack its schemas for a while (a move's copy,
            // a merge's retired shard): only an online shard left alone is judged.
            let stale_location = (shard.state == ShardState::Online && op.is_none())
                .then(|| stale_location(&schemas, &shard.node, &gathered.reports))
                .flatten();
            shards.push(ShardReport {
                id: shard.id,
                function: func.name.clone(),
                coverage: coverage(&snap, func, shard.id),
                node: shard.node.clone(),
                schemas,
                rows,
                bytes,
                size_source,
                keys: keys.get(&shard.id).copied(),
                state: shard.state,
                availability: shard.availability,
                operation,
                unpruned: unpruned.contains(&shard.id),
                revert_window,
                stale_location,
            });
        }
        for r in &mut gathered.reports {
            r.directory_address = address_mismatch(inv, &snap, &r.name);
            let mine: Vec<&ShardReport> = shards.iter().filter(|s| s.node == r.name).collect();
            r.shards = mine.len();
            r.shard_bytes = mine.iter().map(|s| s.bytes).sum();
        }
    }
    Ok(Fleet {
        directory_version: version,
        size_source: source,
        nodes: gathered.reports,
        shards,
        sequences,
        directory_members,
        errors: gathered.errors,
    })
}

/// How long `config check` waits for a host's answer over ssh.
const HOST_CHECK_TIMEOUT: Duration = Duration::from_secs(30);

/// One node as `config check` found it.
#[derive(Debug)]
pub struct NodeCheck {
    /// The node's name in the inventory.
    pub node: String,
    /// `host:port` from the inventory.
    pub address: String,
    /// The server's flavor and version, when it answered.
    pub server: Option<String>,
    /// The host as reached over ssh (`user@host (uname -n)`), for a node with `ssh:` whose
    /// host answered.
    pub host: Option<String>,
    /// Why the node or its host failed the check, if one did.
    pub error: Option<Error>,
}

/// Checks every node of the inventory in order: its server answers, and for a node with
/// `ssh:`, its host too (host key, login, one command). A node whose server answers but
/// whose host does not keeps its server and has the host's error.
pub fn check_nodes(inv: &Inventory) -> Result<Vec<NodeCheck>> {
    let mut checks = Vec::new();
    for name in inv.node_names() {
        let node = inv.node(name)?;
        let address = format!("{}:{}", node.host(), node.port());
        let host = node.spec.ssh.as_ref().map(|_| {
            crate::remote::host_for(inv, name).and_then(|h| {
                h.text("checking the host", "uname -n", HOST_CHECK_TIMEOUT)
                    .map(|n| format!("{} ({})", h.describe(), n.trim()))
            })
        });
        let (host, host_error) = match host {
            None => (None, None),
            Some(Ok(t)) => (Some(t), None),
            Some(Err(e)) => (None, Some(e)),
        };
        let check = match Server::connect_node(inv, name) {
            Ok(s) => NodeCheck {
                node: name.to_string(),
                address,
                server: Some(s.flavor().to_string()),
                host: if host_error.is_none() { host } else { None },
                error: host_error,
            },
            Err(e) => NodeCheck {
                node: name.to_string(),
                address,
                server: None,
                host,
                error: Some(e),
            },
        };
        checks.push(check);
    }
    Ok(checks)
}
