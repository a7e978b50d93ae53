//! The inventory (`shardctl.yaml`): nodes, credentials, the directory's home, defaults.

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The file read when neither `--config` nor `SHARDCTL_CONFIG` names another.
pub const DEFAULT_CONFIG: &str = "shardctl.yaml";

/// A secret that never prints.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a secret value.
    pub fn new(value: impl Into<String>) -> Self {
        Secret(value.into())
    }

    /// The value, for the one place that must send it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

/// Where a password comes from. At most one of the three may be given; `defaults_file`
/// may also supply the user.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct AccountSpec {
    /// Account name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// Name of an environment variable holding the password.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password_env: Option<String>,
    /// A MySQL option file whose `[client]` section holds user and password.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub defaults_file: Option<PathBuf>,
    /// The password itself (keep the file private if you use this).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password: Option<String>,
}

/// TLS settings for connections to a node.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TlsSpec {
    /// Use TLS.
    #[serde(default)]
    pub enabled: bool,
    /// CA certificate (PEM) to verify the server with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_file: Option<PathBuf>,
    /// Client certificate (PEM) a replication channel presents to this node as its source,
    /// with `key_file`. The path must hold on the replica's host too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cert_file: Option<PathBuf>,
    /// The client certificate's private key (PEM).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_file: Option<PathBuf>,
    /// Skip certificate verification of shardctl's own connections (test setups only);
    /// a replication channel always verifies its source's certificate.
    #[serde(default)]
    pub insecure: bool,
}

/// TLS settings of a replication channel reading from a node whose inventory enables TLS:
/// the files the replica uses (paths as the replica's host sees them).
#[derive(Debug, Clone, PartialEq)]
pub struct ChannelTls {
    /// CA certificate that verifies the source's certificate.
    pub ca_file: String,
    /// Client certificate and key, when the source asks for one.
    pub cert_and_key: Option<(String, String)>,
}

/// How to reach a node's host over ssh (the restart path, the physical copy, the disk
/// space preflight). Host keys are always checked against `known_hosts_file`: an unknown
/// or changed key refuses the connection, there is no option to accept one.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SshSpec {
    /// ssh host (defaults to the node's host).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// ssh port.
    #[serde(default = "default_ssh_port")]
    pub port: u16,
    /// ssh user.
    pub user: String,
    /// Private key file (unencrypted, or held by an agent); give this or `agent: true`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity_file: Option<PathBuf>,
    /// Authenticate through the ssh agent at `SSH_AUTH_SOCK`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub agent: bool,
    /// The OpenSSH known_hosts file that holds the host's key (`[host]:port` entries
    /// for a port other than 22).
    pub known_hosts_file: PathBuf,
    /// Longest wait for the TCP connection, the handshake and the login, seconds.
    #[serde(default = "default_ssh_connect_timeout")]
    pub connect_timeout_secs: u64,
    /// Longest run of one remote command (a copy's stream included), seconds.
    #[serde(default = "default_ssh_command_timeout")]
    pub command_timeout_secs: u64,
}

fn default_ssh_port() -> u16 {
    22
}
fn default_ssh_connect_timeout() -> u64 {
    10
}
fn default_ssh_command_timeout() -> u64 {
    3600
}

/// One node as written in the inventory.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct NodeSpec {
    /// Host name or address (default 127.0.0.1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// TCP port (default 3306).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
    /// Unix socket; when set, shardctl connects through it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub socket: Option<PathBuf>,
    /// Account and password source.
    #[serde(flatten)]
    pub account: AccountSpec,
    /// TLS.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls: Option<TlsSpec>,
    /// ssh access to the node's host. Without it, a node whose address is on this
    /// machine (loopback or a socket) is reached through local commands.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ssh: Option<SshSpec>,
    /// The server's data directory, as its host sees it (physical copies, free space).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub datadir: Option<PathBuf>,
    /// The server's option file, as its host sees it (`filter --persist` writes there).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub option_file: Option<PathBuf>,
    /// The command that restarts the server on its host (`systemctl restart mariadb`),
    /// run through the node's host with the command timeout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restart_command: Option<String>,
    /// Relative capacity weight for rebalancing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<f64>,
    /// Servers replicating from this one: the node's replication group. Moves check
    /// them before they start, the old copy's drop reaches them, prune throttles on their
    /// lag and `status` shows them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replicas: Vec<ReplicaSpec>,
}

/// One entry of a node's `replicas:` list.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(untagged)]
pub enum ReplicaSpec {
    /// Another node of this inventory, by name: reached with its own address, account,
    /// TLS and ssh.
    Node(String),
    /// A server known by its address only: reached with its primary's account and TLS.
    Server(ReplicaServer),
}

/// A replica given by its address.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ReplicaServer {
    /// Host name or address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// TCP port (default 3306).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
    /// Unix socket; when set, shardctl connects through it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub socket: Option<PathBuf>,
    /// ssh access to the replica's host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ssh: Option<SshSpec>,
}

impl ReplicaSpec {
    /// The replica in messages: its node name, or its address.
    pub fn label(&self) -> String {
        match self {
            ReplicaSpec::Node(name) => name.clone(),
            ReplicaSpec::Server(s) => s.address(),
        }
    }
}

impl ReplicaServer {
    /// `host:port`, or the socket path.
    pub fn address(&self) -> String {
        match (&self.socket, &self.host) {
            (Some(s), _) => s.display().to_string(),
            (None, h) => format!(
                "{}:{}",
                h.as_deref().unwrap_or("127.0.0.1"),
                self.port.unwrap_or(3306)
            ),
        }
    }
}

/// Where the sharding directory lives, and in which schema: on one node (`node`), or on
/// a Galera cluster of nodes (`cluster`); exactly one of the two.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DirectorySpec {
    /// The node holding it, when it lives on one server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// The Galera cluster holding it, when it lives on several.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<ClusterSpec>,
    /// Schema name (default `shardctl`).
    #[serde(default = "default_directory_schema")]
    pub schema: String,
    /// The account applications read the directory with (the library's `Router`,
    /// `shardctl lookup`, the workload generator): `SELECT` on the directory schema and
    /// `UPDATE (next_value)` on its `sequences` table for ids, nothing else, so a server
    /// holding it cannot rewrite locations or the journal. Without it they use the
    /// directory node's own (admin) account. shardctl's own connections never use it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub application: Option<AccountSpec>,
}

fn default_directory_schema() -> String {
    "shardctl".to_string()
}

/// The directory on a Galera cluster (docs/DIRECTORY_CLUSTER.md): its members are nodes of
/// this inventory (their address, account and TLS), listed in the order shardctl prefers
/// them as the one member it writes through, so that every shardctl writes through the
/// same member and transactions do not fail certification against each other.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ClusterSpec {
    /// The cluster's `wsrep_cluster_name`: a member reporting another is refused.
    pub name: String,
    /// Its members, by node name, the preferred writer first.
    pub members: Vec<String>,
    /// The members the library's `Router` (and `lookup`, the workload) reads from; every
    /// member when empty. shardctl's own reads go to the writer.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub readers: Vec<String>,
    /// How long shardctl waits for a member in the Primary component and Synced before a
    /// directory read or write fails, seconds. A running operation keeps its fence
    /// meanwhile, as it does while a single-server directory is down.
    #[serde(default = "default_cluster_wait_secs")]
    pub wait_secs: u64,
}

fn default_cluster_wait_secs() -> u64 {
    180
}

impl ClusterSpec {
    /// The members routers read from.
    pub fn reader_members(&self) -> &[String] {
        if self.readers.is_empty() {
            &self.members
        } else {
            &self.readers
        }
    }
}

/// Defaults for connections and procedures; every field may be omitted.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Defaults {
    /// TCP connect timeout, seconds.
    pub connect_timeout_secs: u64,
    /// Read timeout on every connection, seconds.
    pub read_timeout_secs: u64,
    /// Write timeout on every connection, seconds.
    pub write_timeout_secs: u64,
    /// Longest wait for a replication position, seconds.
    pub wait_timeout_secs: u64,
    /// Replication lag to reach before fencing, seconds.
    pub lag_threshold_secs: u64,
    /// The disk-space preflight of a copy asks for the shard's size plus this much, in
    /// percent of it, free in the target's datadir.
    pub free_space_margin_percent: u64,
    /// ... and at least this many MiB on top, whatever the shard's size.
    pub free_space_reserve_mib: u64,
    /// Longest wait for a restarted server to answer again, seconds.
    pub restart_timeout_secs: u64,
}

impl Default for Defaults {
    fn default() -> Self {
        Defaults {
            connect_timeout_secs: 5,
            read_timeout_secs: 60,
            write_timeout_secs: 60,
            wait_timeout_secs: 300,
            lag_threshold_secs: 2,
            free_space_margin_percent: 20,
            free_space_reserve_mib: 256,
            restart_timeout_secs: 120,
        }
    }
}

/// The stages of an operation a hook can run at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum HookStage {
    /// The operation was journaled and its first step begins.
    Started,
    /// The backup step copied the shard.
    Copied,
    /// The copy is caught up and the cut-over could start.
    Ready,
    /// Just before the fence goes up; a failure postpones the cut-over.
    BeforeCutover,
    /// The write fence is up.
    Fenced,
    /// The directory points at the new location.
    Flipped,
    /// Every step is done.
    Done,
    /// A step failed (or the run was interrupted).
    Failed,
    /// A move's revert window flipped the shard back to its old node.
    Reverted,
}

impl HookStage {
    /// The name in inventories and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            HookStage::Started => "started",
            HookStage::Copied => "copied",
            HookStage::Ready => "ready",
            HookStage::BeforeCutover => "before-cutover",
            HookStage::Fenced => "fenced",
            HookStage::Flipped => "flipped",
            HookStage::Done => "done",
            HookStage::Failed => "failed",
            HookStage::Reverted => "reverted",
        }
    }

    /// Every stage, in the order an operation reaches them.
    pub const ALL: [HookStage; 9] = [
        HookStage::Started,
        HookStage::Copied,
        HookStage::Ready,
        HookStage::BeforeCutover,
        HookStage::Fenced,
        HookStage::Flipped,
        HookStage::Done,
        HookStage::Failed,
        HookStage::Reverted,
    ];
}

/// A command run at a stage of every move, split or resume (see [`crate::ops::hooks`]).
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct HookSpec {
    /// When it runs.
    pub stage: HookStage,
    /// What runs: `sh -c COMMAND`, the operation's JSON document on stdin.
    pub command: String,
    /// Killed (with every process it started) after this long, seconds.
    #[serde(default = "default_hook_timeout")]
    pub timeout_secs: u64,
}

fn default_hook_timeout() -> u64 {
    30
}

impl std::str::FromStr for HookSpec {
    type Err = String;

    /// `STAGE=COMMAND` (`--hook`), with the default timeout.
    fn from_str(text: &str) -> std::result::Result<Self, String> {
        let (stage, command) = text
            .split_once('=')
            .ok_or_else(|| format!("{text:?} is not STAGE=COMMAND"))?;
        let stage = HookStage::ALL
            .into_iter()
            .find(|s| s.as_str() == stage.trim())
            .ok_or_else(|| {
                format!(
                    "unknown hook stage {:?} (one of {})",
                    stage.trim(),
                    HookStage::ALL.map(|s| s.as_str()).join(", ")
                )
            })?;
        if command.trim().is_empty() {
            return Err(format!("{text:?}: the command is empty"));
        }
        Ok(HookSpec {
            stage,
            command: command.to_string(),
            timeout_secs: default_hook_timeout(),
        })
    }
}

/// The inventory file as written.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct InventoryFile {
    /// Where the directory lives.
    pub directory: DirectorySpec,
    /// The replication account targets use to read from sources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replication: Option<AccountSpec>,
    /// The account applications use (the workload generator connects with it). Without it
    /// the workload uses the node's account, which a read-only fence does not stop.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub application: Option<AccountSpec>,
    /// The nodes, by name.
    pub nodes: BTreeMap<String, NodeSpec>,
    /// Commands run at the stages of every move, split and resume.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hooks: Vec<HookSpec>,
    /// Defaults.
    #[serde(default)]
    pub defaults: Defaults,
}

/// A loaded and checked inventory.
#[derive(Debug, Clone)]
pub struct Inventory {
    /// The file it came from.
    pub path: PathBuf,
    /// Its content.
    pub file: InventoryFile,
}

/// An account with its password resolved.
#[derive(Debug, Clone)]
pub struct Credentials {
    /// Account name.
    pub user: String,
    /// Password.
    pub password: Secret,
}

impl Inventory {
    /// Reads and checks `path`. Syntax errors, unknown keys and wrong types name the file,
    /// line and column.
    pub fn load(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::Config(format!("cannot read inventory {}: {e}", path.display())))?;
        Self::parse(path, &text)
    }

    /// Parses inventory text; `path` is used in messages.
    pub fn parse(path: &Path, text: &str) -> Result<Self> {
        let file: InventoryFile = serde_yaml::from_str(text).map_err(|e| {
            let msg = e.to_string();
            let msg = match msg.rfind(" at line ") {
                Some(i) => msg[..i].to_string(),
                None => msg,
            };
            match e.location() {
                Some(loc) => Error::Config(format!(
                    "{}:{}:{}: {msg}",
                    path.display(),
                    loc.line(),
                    loc.column()
                )),
                None => Error::Config(format!("{}: {msg}", path.display())),
            }
        })?;
        let inv = Inventory {
            path: path.to_path_buf(),
            file,
        };
        inv.check()?;
        Ok(inv)
    }

    fn check(&self) -> Result<()> {
        let bad = |msg: String| Error::Config(format!("{}: {msg}", self.path.display()));
        if self.file.nodes.is_empty() {
            return Err(bad("no nodes".into()));
        }
        for (name, node) in &self.file.nodes {
            crate::ident::Ident::new("node", name).map_err(|e| bad(e.to_string()))?;
            if let Some(cap) = node.capacity {
                if !(cap.is_finite() && cap > 0.0) {
                    return Err(bad(format!(
                        "node {name}: capacity must be a positive number"
                    )));
                }
            }
            for (i, r) in node.replicas.iter().enumerate() {
                self.check_replica(name, node, i + 1, r).map_err(bad)?;
            }
            check_account(&node.account).map_err(|m| bad(format!("node {name}: {m}")))?;
            if let Some(tls) = &node.tls {
                check_tls(tls).map_err(|m| bad(format!("node {name}: {m}")))?;
            }
            check_host_fields(node).map_err(|m| bad(format!("node {name}: {m}")))?;
        }
        match (&self.file.directory.node, &self.file.directory.cluster) {
            (Some(node), None) if !self.file.nodes.contains_key(node) => {
                return Err(bad(format!("directory.node {node:?} is not a node")));
            }
            (Some(_), None) => {}
            (None, Some(cluster)) => self.check_cluster(cluster).map_err(bad)?,
            (Some(_), Some(_)) => return Err(bad(
                "directory: give either node (one server) or cluster (a Galera cluster), not both"
                    .into(),
            )),
            (None, None) => {
                return Err(bad(
                    "directory: give node (the server holding it) or cluster (its Galera members)"
                        .into(),
                ))
            }
        }
        crate::ident::Ident::new("directory schema", &self.file.directory.schema)
            .map_err(|e| bad(e.to_string()))?;
        if let Some(r) = &self.file.replication {
            check_account(r).map_err(|m| bad(format!("replication: {m}")))?;
        }
        if let Some(a) = &self.file.directory.application {
            check_account(a).map_err(|m| bad(format!("directory.application: {m}")))?;
        }
        if let Some(a) = &self.file.application {
            check_account(a).map_err(|m| bad(format!("application: {m}")))?;
        }
        Ok(())
    }

    /// The directory's cluster: a name, two members or more, each a node once, readers
    /// among them, a wait of at least a second.
    fn check_cluster(&self, cluster: &ClusterSpec) -> std::result::Result<(), String> {
        if cluster.name.is_empty()
            || cluster
                .name
                .chars()
                .any(|c| c.is_control() || c.is_whitespace())
        {
            return Err("directory.cluster.name: give the cluster's wsrep_cluster_name".into());
        }
        if cluster.members.len() < 2 {
            return Err(format!(
                "directory.cluster.members: a cluster has two members or more (three to survive the loss of one), {} given",
                cluster.members.len()
            ));
        }
        let mut seen = std::collections::BTreeSet::new();
        for m in &cluster.members {
            if !self.file.nodes.contains_key(m) {
                return Err(format!("directory.cluster.members: {m:?} is not a node"));
            }
            if !seen.insert(m.as_str()) {
                return Err(format!("directory.cluster.members: {m:?} is listed twice"));
            }
        }
        if let Some(r) = cluster.readers.iter().find(|r| !seen.contains(r.as_str())) {
            return Err(format!(
                "directory.cluster.readers: {r:?} is not one of the members"
            ));
        }
        if cluster.wait_secs == 0 {
            return Err("directory.cluster.wait_secs: at least 1".into());
        }
        Ok(())
    }

    /// The node that stands for the directory where one node is needed: the node holding
    /// it, or the cluster's preferred writer. Templates of new shards are read there
    /// unless another node is named, and journal rows of directory effects name it.
    pub fn directory_home(&self) -> &str {
        match (&self.file.directory.node, &self.file.directory.cluster) {
            (Some(node), _) => node,
            (None, Some(c)) => &c.members[0],
            // `check` lets no inventory through without one.
            (None, None) => "directory",
        }
    }

    /// The name journal rows of directory effects (the flip, a split's prune) give as
    /// their node: the directory's node, or its cluster's name (which is no node: nothing
    /// connects to it to end a session of an earlier owner).
    pub fn directory_label(&self) -> &str {
        match &self.file.directory.cluster {
            Some(c) => &c.name,
            None => self.directory_home(),
        }
    }

    /// Where the directory lives, for messages: `node1`, or `cluster dirc (dir1, dir2, dir3)`.
    pub fn directory_place(&self) -> String {
        match &self.file.directory.cluster {
            Some(c) => format!("cluster {} ({})", c.name, c.members.join(", ")),
            None => self.directory_home().to_string(),
        }
    }

    /// True when node `name` holds the directory or is a member of its cluster:
    /// restarting it, or making it read-only, reaches the journal.
    pub fn holds_directory(&self, name: &str) -> bool {
        self.file.directory.node.as_deref() == Some(name)
            || self
                .file
                .directory
                .cluster
                .as_ref()
                .is_some_and(|c| c.members.iter().any(|m| m == name))
    }

    /// The directory's cluster, when it lives on one.
    pub fn directory_cluster(&self) -> Option<&ClusterSpec> {
        self.file.directory.cluster.as_ref()
    }

    /// One entry of node `name`'s `replicas:` list (`number` from 1).
    fn check_replica(
        &self,
        name: &str,
        node: &NodeSpec,
        number: usize,
        replica: &ReplicaSpec,
    ) -> std::result::Result<(), String> {
        let own_address = NodeRef { name, spec: node }.address();
        match replica {
            ReplicaSpec::Node(r) if r == name => {
                Err(format!("node {name}: replica {r:?} is the node itself"))
            }
            ReplicaSpec::Node(r) => match self.file.nodes.get(r) {
                None => Err(format!("node {name}: replica {r:?} is not a node")),
                Some(spec) if (NodeRef { name: r, spec }).address() == own_address => Err(format!(
                    "node {name}: replica {r:?} has the node's own address {own_address}"
                )),
                Some(_) => Ok(()),
            },
            ReplicaSpec::Server(s) => {
                if s.host.is_none() && s.socket.is_none() {
                    return Err(format!(
                        "node {name}: replica {number} has no address (give host and port, a socket, or the name of a node)"
                    ));
                }
                if let Some(h) = &s.host {
                    if h.is_empty() || h.chars().any(|c| c.is_control() || c.is_whitespace()) {
                        return Err(format!(
                            "node {name}: replica {number}: host: give a host name or address"
                        ));
                    }
                }
                if s.address() == own_address {
                    return Err(format!(
                        "node {name}: replica {number} ({own_address}) is the node itself"
                    ));
                }
                match &s.ssh {
                    Some(ssh) => {
                        check_ssh(ssh).map_err(|m| format!("node {name}: replica {number}: {m}"))
                    }
                    None => Ok(()),
                }
            }
        }
    }

    /// The node called `name`, or a usage error listing the known names.
    pub fn node(&self, name: &str) -> Result<NodeRef<'_>> {
        match self.file.nodes.get_key_value(name) {
            Some((name, spec)) => Ok(NodeRef { name, spec }),
            None => Err(Error::Usage(format!(
                "unknown node {name:?} (the inventory has: {})",
                self.node_names().join(", ")
            ))),
        }
    }

    /// All nodes in name order.
    pub fn nodes(&self) -> impl Iterator<Item = NodeRef<'_>> {
        self.file
            .nodes
            .iter()
            .map(|(name, spec)| NodeRef { name, spec })
    }

    /// Node names in order.
    pub fn node_names(&self) -> Vec<&str> {
        self.file.nodes.keys().map(String::as_str).collect()
    }

    /// The defaults section.
    pub fn defaults(&self) -> &Defaults {
        &self.file.defaults
    }

    /// The application account (or, without one, the node's own).
    pub fn application_credentials(&self, node: &str) -> Result<Credentials> {
        match &self.file.application {
            Some(a) => resolve_account(a, "application"),
            None => self.node(node)?.credentials(),
        }
    }

    /// The account applications read the directory with (`directory.application`), when
    /// the inventory names one.
    pub fn directory_application_credentials(&self) -> Result<Option<Credentials>> {
        self.file
            .directory
            .application
            .as_ref()
            .map(|a| resolve_account(a, "directory.application"))
            .transpose()
    }

    /// The replication account with its password resolved.
    pub fn replication_credentials(&self) -> Result<Credentials> {
        let spec = self.file.replication.as_ref().ok_or_else(|| {
            Error::Config(format!(
                "{}: no replication account (add a `replication:` section)",
                self.path.display()
            ))
        })?;
        resolve_account(spec, "replication")
    }
}

/// A node name with its spec.
#[derive(Debug, Clone, Copy)]
pub struct NodeRef<'a> {
    /// Inventory name.
    pub name: &'a str,
    /// What the inventory says of it.
    pub spec: &'a NodeSpec,
}

impl NodeRef<'_> {
    /// Host (default 127.0.0.1).
    pub fn host(&self) -> &str {
        self.spec.host.as_deref().unwrap_or("127.0.0.1")
    }

    /// Port (default 3306).
    pub fn port(&self) -> u16 {
        self.spec.port.unwrap_or(3306)
    }

    /// `host:port`, or the socket path.
    pub fn address(&self) -> String {
        match &self.spec.socket {
            Some(s) => s.display().to_string(),
            None => format!("{}:{}", self.host(), self.port()),
        }
    }

    /// The node's account with its password resolved.
    pub fn credentials(&self) -> Result<Credentials> {
        resolve_account(&self.spec.account, &format!("node {}", self.name))
    }

    /// TLS for a replication channel reading from this node: None when its inventory does
    /// not enable TLS; an error when it does without a CA file, since the channel always
    /// verifies the source's certificate (`insecure` covers shardctl's own connections only).
    pub fn channel_tls(&self) -> Result<Option<ChannelTls>> {
        let Some(tls) = self.spec.tls.as_ref().filter(|t| t.enabled) else {
            return Ok(None);
        };
        let path = |p: &Path, what: &str| -> Result<String> {
            p.to_str().map(str::to_string).ok_or_else(|| {
                Error::Config(format!("node {}: tls.{what} is not valid UTF-8", self.name))
            })
        };
        let ca = tls.ca_file.as_deref().ok_or_else(|| {
            Error::Config(format!(
                "node {}: tls.enabled needs tls.ca_file for a replication channel (the source's certificate is always verified)",
                self.name
            ))
        })?;
        let cert_and_key = match (&tls.cert_file, &tls.key_file) {
            (Some(c), Some(k)) => Some((path(c, "cert_file")?, path(k, "key_file")?)),
            _ => None,
        };
        Ok(Some(ChannelTls {
            ca_file: path(ca, "ca_file")?,
            cert_and_key,
        }))
    }
}

/// A path the remote layer puts on a command line: absolute UTF-8 without control
/// characters (quoting makes any such path safe; these rules keep messages readable).
fn check_remote_path(what: &str, p: &Path) -> std::result::Result<(), String> {
    let text = p.to_str().unwrap_or("");
    if text.is_empty() || text.chars().any(|c| c.is_control()) || !p.is_absolute() {
        return Err(format!(
            "{what}: give an absolute UTF-8 path without control characters"
        ));
    }
    Ok(())
}

fn check_host_fields(node: &NodeSpec) -> std::result::Result<(), String> {
    if let Some(ssh) = &node.ssh {
        check_ssh(ssh)?;
    }
    if let Some(d) = &node.datadir {
        check_remote_path("datadir", d)?;
    }
    if let Some(f) = &node.option_file {
        check_remote_path("option_file", f)?;
    }
    if let Some(c) = &node.restart_command {
        if c.trim().is_empty() || c.chars().any(|c| c == '\0' || c == '\n' || c == '\r') {
            return Err("restart_command: give one command line".into());
        }
    }
    Ok(())
}

fn check_ssh(ssh: &SshSpec) -> std::result::Result<(), String> {
    if ssh.identity_file.is_some() == ssh.agent {
        return Err("ssh: give exactly one of identity_file or agent: true".into());
    }
    if let Some(f) = &ssh.identity_file {
        check_remote_path("ssh.identity_file", f)?;
    }
    check_remote_path("ssh.known_hosts_file", &ssh.known_hosts_file)?;
    if ssh.user.is_empty() || ssh.user.chars().any(|c| c.is_control() || c == ' ') {
        return Err("ssh.user: give a user name without blanks or control characters".into());
    }
    if let Some(h) = &ssh.host {
        if h.is_empty() || h.chars().any(|c| c.is_control() || c.is_whitespace()) {
            return Err("ssh.host: give a host name or address".into());
        }
    }
    if ssh.port == 0 {
        return Err("ssh.port: must be above 0".into());
    }
    if ssh.connect_timeout_secs == 0 || ssh.command_timeout_secs == 0 {
        return Err("ssh.connect_timeout_secs and ssh.command_timeout_secs must be above 0".into());
    }
    Ok(())
}

fn check_tls(tls: &TlsSpec) -> std::result::Result<(), String> {
    if tls.cert_file.is_some() != tls.key_file.is_some() {
        return Err("tls: give cert_file and key_file together".into());
    }
    for (what, p) in [
        ("ca_file", &tls.ca_file),
        ("cert_file", &tls.cert_file),
        ("key_file", &tls.key_file),
    ] {
        if let Some(p) = p {
            let text = p.to_str().unwrap_or("");
            if text.is_empty() || text.chars().any(|c| c.is_control()) {
                return Err(format!(
                    "tls.{what}: give a UTF-8 path without control characters"
                ));
            }
        }
    }
    Ok(())
}

fn check_account(spec: &AccountSpec) -> std::result::Result<(), String> {
    let sources = [
        spec.password_env.is_some(),
        spec.defaults_file.is_some(),
        spec.password.is_some(),
    ];
    if sources.iter().filter(|s| **s).count() > 1 {
        return Err("give only one of password_env, defaults_file, password".into());
    }
    Ok(())
}

fn resolve_account(spec: &AccountSpec, who: &str) -> Result<Credentials> {
    let mut user = spec.user.clone();
    let password = if let Some(var) = &spec.password_env {
        Secret::new(std::env::var(var).map_err(|_| {
            Error::Config(format!(
                "{who}: environment variable {var} (password_env) is not set"
            ))
        })?)
    } else if let Some(path) = &spec.defaults_file {
        let opts = read_option_file(path)?;
        if user.is_none() {
            user = opts.user;
        }
        Secret::new(opts.password.unwrap_or_default())
    } else {
        Secret::new(spec.password.clone().unwrap_or_default())
    };
    let user = user.ok_or_else(|| Error::Config(format!("{who}: no user given")))?;
    Ok(Credentials { user, password })
}

/// What shardctl reads from a MySQL option file's `[client]` group.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClientOptions {
    /// `user=`.
    pub user: Option<String>,
    /// `password=`.
    pub password: Option<String>,
}

/// Writes a file readable by its owner only.
pub fn write_private(path: &Path, content: &str) -> Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| Error::io(format!("cannot write {}", path.display()), e))?;
    f.write_all(content.as_bytes())
        .map_err(|e| Error::io(format!("cannot write {}", path.display()), e))
}

/// Reads the `[client]` group of a MySQL option file (the format of `~/.my.cnf`), as
/// strictly as the server's own client: an option outside any group, a group header
/// without its `]`, a line that is not `name`, `name = value`, a comment or an
/// `!include` / `!includedir` directive, an unclosed quote, and a file without a
/// `[client]` group are errors naming the file and line.
pub fn read_option_file(path: &Path) -> Result<ClientOptions> {
    let mut out = ClientOptions::default();
    let mut seen_client = false;
    read_option_file_into(path, 0, &mut out, &mut seen_client)?;
    if !seen_client {
        return Err(Error::Config(format!(
            "option file {}: no [client] group (shardctl reads user and password from it)",
            path.display()
        )));
    }
    Ok(out)
}

/// The warning for a password file that group or others may read, if it is one.
pub fn permission_warning(path: &Path) -> Option<String> {
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(path).ok()?.permissions().mode() & 0o777;
    (mode & 0o077 != 0).then(|| {
        format!(
            "option file {} is readable by group or others (mode {mode:04o}); it holds a password: chmod 600 it",
            path.display()
        )
    })
}

/// Warns once per file, on stderr, when an option file is readable by group or others.
fn warn_if_readable(path: &Path) {
    if let Some(warning) = permission_warning(path) {
        static WARNED: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());
        let mut warned = WARNED.lock().unwrap_or_else(|p| p.into_inner());
        if !warned.iter().any(|p| p == path) {
            warned.push(path.to_path_buf());
            crate::output::write_err(&format!("shardctl: warning: {warning}\n"));
        }
    }
}

/// One `key="value"` line of an option file, the value quoted and escaped as the server's
/// client reads it back (`\\` and `\"`). Refused: line breaks and NUL, which no escape
/// carries through every client's parser, and empty or odd keys.
pub fn option_line(key: &str, value: &str) -> Result<String> {
    if key.is_empty()
        || !key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err(Error::Config(format!("invalid option name {key:?}")));
    }
    if value.chars().any(|c| matches!(c, '\n' | '\r' | '\0')) {
        return Err(Error::Config(format!(
            "option {key}: the value holds a line break or NUL, which an option file cannot carry"
        )));
    }
    Ok(format!(
        "{key}=\"{}\"\n",
        value.replace('\\', "\\\\").replace('"', "\\\"")
    ))
}

fn read_option_file_into(
    path: &Path,
    depth: usize,
    out: &mut ClientOptions,
    seen_client: &mut bool,
) -> Result<()> {
    if depth > 10 {
        return Err(Error::Config(format!(
            "option file {}: !include nested more than 10 deep",
            path.display()
        )));
    }
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::Config(format!("cannot read option file {}: {e}", path.display())))?;
    warn_if_readable(path);
    for item in parse_option_file(&text)
        .map_err(|(line, why)| Error::Config(format!("{}:{line}: {why}", path.display())))?
    {
        match item {
            OptionItem::Client { user, password } => {
                *seen_client = true;
                if user.is_some() {
                    out.user = user;
                }
                if password.is_some() {
                    out.password = password;
                }
            }
            OptionItem::Include(file) => {
                let file = path.parent().unwrap_or(Path::new(".")).join(file);
                read_option_file_into(&file, depth + 1, out, seen_client)?;
            }
            OptionItem::IncludeDir(dir) => {
                let dir = path.parent().unwrap_or(Path::new(".")).join(dir);
                let mut files: Vec<_> = std::fs::read_dir(&dir)
                    .map_err(|e| {
                        Error::Config(format!(
                            "cannot read option directory {}: {e}",
                            dir.display()
                        ))
                    })?
                    .filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| p.extension().is_some_and(|x| x == "cnf"))
                    .collect();
                files.sort();
                for f in files {
                    read_option_file_into(&f, depth + 1, out, seen_client)?;
                }
            }
        }
    }
    Ok(())
}

/// What one option file gives, in order.
#[derive(Debug, PartialEq)]
enum OptionItem {
    /// A `[client]` group (possibly empty).
    Client {
        user: Option<String>,
        password: Option<String>,
    },
    /// `!include FILE`.
    Include(String),
    /// `!includedir DIR`.
    IncludeDir(String),
}

/// Parses option-file text; an error is (line number, why).
fn parse_option_file(text: &str) -> std::result::Result<Vec<OptionItem>, (usize, String)> {
    let mut items = Vec::new();
    let mut group: Option<String> = None;
    for (i, raw) in text.lines().enumerate() {
        let no = i + 1;
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(rest) = line.strip_prefix('!') {
            let (directive, arg) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
            let arg = arg.trim();
            if arg.is_empty() {
                return Err((no, format!("!{directive} needs a path")));
            }
            match directive {
                "include" => items.push(OptionItem::Include(arg.to_string())),
                "includedir" => items.push(OptionItem::IncludeDir(arg.to_string())),
                _ => return Err((no, format!("unknown directive !{directive}"))),
            }
            continue;
        }
        if let Some(rest) = line.strip_prefix('[') {
            let Some((name, after)) = rest.split_once(']') else {
                return Err((no, format!("group header {line:?} has no closing ]")));
            };
            let after = after.trim();
            if !(after.is_empty() || after.starts_with('#')) {
                return Err((no, format!("text after the group header: {after:?}")));
            }
            let name = name.trim();
            if name.is_empty() {
                return Err((no, "empty group name []".into()));
            }
            if name == "client" {
                items.push(OptionItem::Client {
                    user: None,
                    password: None,
                });
            }
            group = Some(name.to_string());
            continue;
        }
        let Some(g) = &group else {
            return Err((no, "option outside any [group]".into()));
        };
        let (key, value) = match line.split_once('=') {
            Some((k, v)) => (k.trim(), Some(v.trim())),
            None => (strip_comment(line).trim(), None),
        };
        if key.is_empty()
            || !key
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err((
                no,
                format!(
                    "not an option (name or name = value): {:?}",
                    first_words(line)
                ),
            ));
        }
        let value = match value {
            Some(v) => Some(option_value(v).map_err(|why| (no, why))?),
            None => None,
        };
        if g != "client" {
            continue;
        }
        if let Some(OptionItem::Client { user, password }) = items.last_mut() {
            match key.replace('-', "_").as_str() {
                "user" => *user = value,
                "password" => *password = value,
                _ => {}
            }
        }
    }
    Ok(items)
}

/// At most the first 20 characters of a line, for messages (never a whole secret line).
fn first_words(line: &str) -> String {
    let mut s: String = line.chars().take(20).collect();
    if s.len() < line.len() {
        s.push_str("...");
    }
    s
}

/// An unquoted value ends at a `#` comment.
fn strip_comment(v: &str) -> &str {
    match v.find('#') {
        Some(i) => &v[..i],
        None => v,
    }
}

/// A value as the client reads it: quoted ('..' or "..", backslash escapes inside, only a
/// comment after it) or bare (up to a `#` comment, trailing blanks removed).
fn option_value(v: &str) -> std::result::Result<String, String> {
    let Some(q) = v.chars().next().filter(|c| *c == '"' || *c == '\'') else {
        return Ok(strip_comment(v).trim_end().to_string());
    };
    let mut out = String::new();
    let mut chars = v[1..].chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some('r') => out.push('\r'),
                Some('b') => out.push('\u{8}'),
                Some('s') => out.push(' '),
                Some(other) => out.push(other),
                None => return Err("a value ends with a lone backslash".into()),
            },
            c if c == q => {
                let rest = chars.as_str().trim();
                if !(rest.is_empty() || rest.starts_with('#')) {
                    return Err("text after a quoted value".into());
                }
                return Ok(out);
            }
            c => out.push(c),
        }
    }
    Err(format!("a value's {q} quote is never closed"))
}

/// Connection timeouts taken from the defaults.
pub fn timeouts(d: &Defaults) -> (Duration, Duration, Duration) {
    (
        Duration::from_secs(d.connect_timeout_secs),
        Duration::from_secs(d.read_timeout_secs),
        Duration::from_secs(d.write_timeout_secs),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "\
directory:
  node: a
replication:
  user: repl
  password: r
nodes:
  a:
    port: 3307
    user: shardctl
    password_env: SHARDCTL_TEST_NEVER_SET
  b:
    socket: /tmp/b.sock
    user: shardctl
";

    fn parse(text: &str) -> Result<Inventory> {
        Inventory::parse(Path::new("inv.yaml"), text)
    }

    #[test]
    fn a_good_inventory_loads_with_defaults() {
        let inv = parse(GOOD).unwrap();
        assert_eq!(inv.file.directory.schema, "shardctl");
        assert_eq!(inv.node("a").unwrap().address(), "127.0.0.1:3307");
        assert_eq!(inv.node("b").unwrap().address(), "/tmp/b.sock");
        assert_eq!(inv.defaults().connect_timeout_secs, 5);
    }

    #[test]
    fn unknown_keys_name_file_line_and_column() {
        let text = GOOD.replace("    port: 3307", "    prot: 3307");
        let err = parse(&text).unwrap_err().to_string();
        assert!(err.starts_with("inv.yaml:8:5: "), "{err}");
        assert!(err.contains("prot"), "{err}");
    }

    #[test]
    fn wrong_types_name_file_line_and_column() {
        let text = GOOD.replace("port: 3307", "port: many");
        let err = parse(&text).unwrap_err().to_string();
        assert!(err.starts_with("inv.yaml:8:11: "), "{err}");
    }

    #[test]
    fn malformed_yaml_is_a_config_error() {
        let err = parse("nodes: [a\n").unwrap_err();
        assert_eq!(err.exit_code(), crate::error::ExitCode::Config);
        assert!(err.to_string().starts_with("inv.yaml:"), "{err}");
    }

    #[test]
    fn unknown_node_names_the_known_ones() {
        let err = parse(GOOD).unwrap().node("zz").unwrap_err().to_string();
        assert_eq!(err, "unknown node \"zz\" (the inventory has: a, b)");
    }

    #[test]
    fn directory_must_name_a_node() {
        let err = parse(&GOOD.replace("node: a", "node: q"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("directory.node \"q\""), "{err}");
    }

    #[test]
    fn a_directory_cluster_is_checked() {
        let cluster = |body: &str| {
            let text = GOOD.replace(
                "directory:\n  node: a\n",
                &format!("directory:\n  cluster:\n{body}"),
            );
            parse(&text)
        };
        let inv = cluster("    name: dirc\n    members: [a, b]\n").unwrap();
        let c = inv.directory_cluster().unwrap();
        assert_eq!(c.reader_members(), ["a", "b"]);
        assert_eq!(c.wait_secs, 180);
        assert_eq!(inv.directory_home(), "a");
        assert_eq!(inv.directory_label(), "dirc");
        assert!(inv.holds_directory("b"));
        for (body, want) in [
            ("    name: dirc\n    members: [a]\n", "two members or more"),
            (
                "    name: dirc\n    members: [a, q]\n",
                "\"q\" is not a node",
            ),
            (
                "    name: dirc\n    members: [a, a]\n",
                "\"a\" is listed twice",
            ),
            (
                "    name: dirc\n    members: [a, b]\n    readers: [q]\n",
                "readers: \"q\" is not one of the members",
            ),
            (
                "    name: ''\n    members: [a, b]\n",
                "directory.cluster.name",
            ),
            (
                "    name: dirc\n    members: [a, b]\n    wait_secs: 0\n",
                "wait_secs: at least 1",
            ),
        ] {
            let e = cluster(body).unwrap_err();
            assert_eq!(e.exit_code(), crate::error::ExitCode::Config);
            assert!(e.to_string().contains(want), "{body}: {e}");
        }
        let both = GOOD.replace(
            "directory:\n  node: a\n",
            "directory:\n  node: a\n  cluster:\n    name: dirc\n    members: [a, b]\n",
        );
        assert!(parse(&both).unwrap_err().to_string().contains("not both"));
        let neither = GOOD.replace("directory:\n  node: a\n", "directory:\n  schema: s\n");
        assert!(parse(&neither)
            .unwrap_err()
            .to_string()
            .contains("give node"));
    }

    #[test]
    fn missing_password_variable_is_named() {
        let inv = parse(GOOD).unwrap();
        let err = inv
            .node("a")
            .unwrap()
            .credentials()
            .unwrap_err()
            .to_string();
        assert!(err.contains("SHARDCTL_TEST_NEVER_SET"), "{err}");
    }

    #[test]
    fn option_files_give_user_and_password() {
        let items = parse_option_file(
            "# c\n[mysqld]\nuser=mysql\nskip-networking\n[client]\nuser = app\npassword = \"p#w=d\"  # note\n[mysql]\npassword=x\n",
        )
        .unwrap();
        assert_eq!(
            items,
            vec![OptionItem::Client {
                user: Some("app".into()),
                password: Some("p#w=d".into())
            }]
        );
        let items = parse_option_file("[client]\npassword=a b # c\n!include other.cnf\n").unwrap();
        assert_eq!(
            items[0],
            OptionItem::Client {
                user: None,
                password: Some("a b".into())
            }
        );
        assert_eq!(items[1], OptionItem::Include("other.cnf".into()));
    }

    #[test]
    fn option_files_are_parsed_strictly() {
        for (text, line, want) in [
            ("garbage in a file\n", 1, "option outside any [group]"),
            ("[client\nuser=a\n", 1, "has no closing ]"),
            (
                "[client]\nuser=a\nthis is not an option\n",
                3,
                "not an option",
            ),
            ("[client]\npassword=\"abc\n", 2, "never closed"),
            ("[client]\n!inclde x\n", 2, "unknown directive"),
            ("[client] x\n", 1, "text after the group header"),
        ] {
            let (no, why) = parse_option_file(text).unwrap_err();
            assert_eq!(no, line, "{text:?}: {why}");
            assert!(why.contains(want), "{text:?}: {why}");
        }
    }

    #[test]
    fn option_lines_escape_and_read_back() {
        for value in [
            "plain",
            "q\"uote",
            "back\\slash",
            "it's",
            "trail\\",
            " spaced ",
        ] {
            let line = option_line("password", value).unwrap();
            let items = parse_option_file(&format!("[client]\n{line}")).unwrap();
            assert_eq!(
                items,
                vec![OptionItem::Client {
                    user: None,
                    password: Some(value.into())
                }],
                "{line}"
            );
        }
        for bad in ["two\nlines", "cr\r", "nul\0"] {
            let err = option_line("password", bad).unwrap_err().to_string();
            assert!(err.contains("line break or NUL"), "{err}");
            assert!(!err.contains(bad), "{err}");
        }
        assert!(option_line("pass word", "x").is_err());
    }

    #[test]
    fn readable_option_files_are_named_in_a_warning() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("my.cnf");
        std::fs::write(&path, "[client]\nuser=a\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let w = permission_warning(&path).unwrap();
        assert!(w.contains("my.cnf") && w.contains("0644"), "{w}");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(permission_warning(&path), None);
    }

    #[test]
    fn channel_tls_needs_a_ca_and_pairs_cert_with_key() {
        let text = GOOD.replace(
            "    port: 3307\n",
            "    port: 3307\n    tls:\n      enabled: true\n      insecure: true\n",
        );
        let inv = parse(&text).unwrap();
        let err = inv
            .node("a")
            .unwrap()
            .channel_tls()
            .unwrap_err()
            .to_string();
        assert!(err.contains("tls.ca_file"), "{err}");
        assert_eq!(inv.node("b").unwrap().channel_tls().unwrap(), None);
        let text = GOOD.replace(
            "    port: 3307\n",
            "    port: 3307\n    tls:\n      enabled: true\n      ca_file: /ca.pem\n      cert_file: /c.pem\n",
        );
        let err = parse(&text).unwrap_err().to_string();
        assert!(err.contains("cert_file and key_file together"), "{err}");
        let text = GOOD.replace(
            "    port: 3307\n",
            "    port: 3307\n    tls:\n      enabled: true\n      ca_file: /ca.pem\n",
        );
        let tls = parse(&text)
            .unwrap()
            .node("a")
            .unwrap()
            .channel_tls()
            .unwrap()
            .unwrap();
        assert_eq!(tls.ca_file, "/ca.pem");
        assert_eq!(tls.cert_and_key, None);
    }

    #[test]
    fn ssh_sections_are_checked() {
        let with = |ssh: &str| {
            GOOD.replace(
                "    port: 3307\n",
                &format!("    port: 3307\n    datadir: /var/lib/mysql\n    option_file: /etc/mysql/my.cnf\n    restart_command: systemctl restart mariadb\n{ssh}"),
            )
        };
        let good = "    ssh:\n      user: root\n      identity_file: /root/.ssh/id_ed25519\n      known_hosts_file: /root/.ssh/known_hosts\n";
        let inv = parse(&with(good)).unwrap();
        let ssh = inv.node("a").unwrap().spec.ssh.clone().unwrap();
        assert_eq!(
            (ssh.port, ssh.connect_timeout_secs, ssh.command_timeout_secs),
            (22, 10, 3600)
        );
        for (bad, want) in [
            (
                good.replace("      identity_file: /root/.ssh/id_ed25519\n", ""),
                "exactly one of identity_file or agent",
            ),
            (
                format!("{good}      agent: true\n"),
                "exactly one of identity_file or agent",
            ),
            (
                good.replace("/root/.ssh/known_hosts", "known_hosts"),
                "ssh.known_hosts_file: give an absolute",
            ),
            (
                format!("{good}      password: hunter2\n"),
                "unknown field `password`",
            ),
            (
                format!("{good}      strict_host_key_checking: false\n"),
                "unknown field",
            ),
            (
                format!("{good}      connect_timeout_secs: 0\n"),
                "must be above 0",
            ),
        ] {
            let err = parse(&with(&bad)).unwrap_err().to_string();
            assert!(err.contains(want), "{bad}: {err}");
            assert!(!err.contains("hunter2"), "{err}");
        }
        let err = parse(&with(good).replace("datadir: /var/lib/mysql", "datadir: relative/dir"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("datadir: give an absolute"), "{err}");
    }

    #[test]
    fn secrets_do_not_debug_print() {
        assert_eq!(format!("{:?}", Secret::new("hunter2")), "***");
    }
}
