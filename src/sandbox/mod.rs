//! Local sandboxes of real MariaDB (or MySQL) servers, for the demo and for every test.
//!
//! Each node is its own mysqld process with its own data directory, port, socket, server_id
//! and ROW-format binary log. A node may have replicas, each its own server too (read-only,
//! `log_slave_updates`, replicating from the node by GTID), as production primaries do.
//! The sandbox writes an inventory for itself, with credentials in 0600 option files, and
//! records the pids it started so `down` stops exactly those.

mod galera;
mod process;
mod tls;

use crate::config::{
    option_line, write_private, AccountSpec, Defaults, DirectorySpec, InventoryFile, NodeSpec,
    ReplicaServer, ReplicaSpec, TlsSpec,
};
use crate::error::{Error, Result};
use crate::output::log;
use mysql::prelude::Queryable;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub use galera::CLUSTER_NAME as DIRECTORY_CLUSTER_NAME;
pub use process::Lifetime;

/// The directory used when `--dir` is not given.
pub const DEFAULT_DIR: &str = "sandbox";
/// The first node's port when `--base-port` is not given.
pub const DEFAULT_BASE_PORT: u16 = 23306;
/// The most nodes a sandbox starts (`--nodes`): enough for the fleet benchmarks (issue 30:
/// 40 nodes), with room in the server ids (a replica's is `node * 100 + r`, a directory
/// member's `9900 + i`).
pub const MAX_NODES: usize = 64;
/// The account shardctl uses on sandbox nodes.
pub const ADMIN_USER: &str = "shardctl";
/// The replication account on sandbox nodes.
pub const REPL_USER: &str = "repl";
/// The application account on sandbox nodes: data privileges only, so read_only stops it.
/// It is the inventory's `directory.application` too: it reads the directory and takes
/// ids from its sequences, and can change nothing else there.
pub const APP_USER: &str = "app";
/// The sandbox inventory's directory schema.
pub const DIRECTORY_SCHEMA: &str = "shardctl";

/// The option file (0600) with the root account's password, in the sandbox directory. Root
/// has a random password and exists only as `root@localhost`: no passwordless account is
/// reachable over TCP.
pub const ROOT_OPTION_FILE: &str = "root.cnf";

const STATE_FILE: &str = "sandbox.json";
const INVENTORY_FILE: &str = "shardctl.yaml";
const START_TIMEOUT: Duration = Duration::from_secs(90);
const STOP_TIMEOUT: Duration = Duration::from_secs(60);

/// Which server software the sandbox runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Engine {
    /// MariaDB's mariadbd.
    MariaDb,
    /// Oracle MySQL's mysqld.
    MySql,
}

/// The binaries a sandbox needs.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Binaries {
    /// Which software.
    pub engine: Engine,
    /// The server binary.
    pub server: PathBuf,
    /// The data-directory initialiser (MariaDB only; MySQL initialises with the server).
    pub install_db: Option<PathBuf>,
}

fn find_binary(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/usr/local/sbin", "/usr/local/mysql/bin"].map(PathBuf::from))
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

impl Binaries {
    /// Finds MariaDB first, then MySQL; names the package to install when neither is there.
    pub fn locate() -> Result<Binaries> {
        if let (Some(server), Some(install)) =
            (find_binary("mariadbd"), find_binary("mariadb-install-db"))
        {
            return Ok(Binaries {
                engine: Engine::MariaDb,
                server,
                install_db: Some(install),
            });
        }
        if let Some(server) = find_binary("mysqld") {
            let is_mariadb = std::process::Command::new(&server)
                .arg("--version")
                .output()
                .map(|o| String::from_utf8_lossy(&o.stdout).contains("MariaDB"))
                .unwrap_or(false);
            if !is_mariadb {
                return Ok(Binaries {
                    engine: Engine::MySql,
                    server,
                    install_db: None,
                });
            }
        }
        Err(Error::Config(
            "no database server found (mariadbd and mariadb-install-db, or mysqld): install the Debian packages mariadb-server and mariadb-client (scripts/setup does)".into(),
        ))
    }
}

/// One sandbox node as recorded in the state file.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SandboxNode {
    /// Inventory name (node1, node2, ...).
    pub name: String,
    /// TCP port on 127.0.0.1.
    pub port: u16,
    /// server_id.
    pub server_id: u32,
    /// The node's own directory (config, socket, logs, data).
    pub dir: PathBuf,
    /// pid of the server process, once started.
    pub pid: Option<i32>,
    /// For a replica: the node it replicates from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub primary: Option<String>,
    /// For a member of the directory's cluster: its Galera group port (the incremental
    /// and full state-transfer ports follow it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub galera_port: Option<u16>,
}

impl SandboxNode {
    /// The data directory.
    pub fn datadir(&self) -> PathBuf {
        self.dir.join("data")
    }
    /// The option file the server runs with.
    pub fn config_file(&self) -> PathBuf {
        self.dir.join("my.cnf")
    }
    /// The unix socket.
    pub fn socket(&self) -> PathBuf {
        self.dir.join("mysqld.sock")
    }
    /// The server's error log.
    pub fn error_log(&self) -> PathBuf {
        self.dir.join("error.log")
    }
    /// The server's own temporary directory.
    pub fn tmp_dir(&self) -> PathBuf {
        self.dir.join("tmp")
    }
    /// True when the recorded pid is alive and is this node's server.
    pub fn running(&self) -> bool {
        self.pid
            .is_some_and(|pid| process::is_our_server(pid, &self.config_file()))
    }
}

/// What `sandbox.json` records.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SandboxState {
    /// Binaries in use.
    pub binaries: Binaries,
    /// The nodes.
    pub nodes: Vec<SandboxNode>,
    /// The nodes' replicas (each names its node in `primary`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replicas: Vec<SandboxNode>,
    /// The members of the directory's Galera cluster (`dir1`, ...), when the directory
    /// lives on one instead of on node1.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub directory: Vec<SandboxNode>,
    /// The shardctl binary the inventory's `restart_command`s run (`sandbox restart`).
    #[serde(default)]
    pub shardctl_bin: Option<PathBuf>,
    /// A test sandbox: the process whose life its servers share. A server restarted by
    /// another process (`sandbox restart`) is watched and stopped when it ends.
    #[serde(default)]
    pub owner_pid: Option<u32>,
}

/// Builds and starts a sandbox.
#[derive(Debug, Clone)]
pub struct SandboxBuilder {
    dir: PathBuf,
    nodes: usize,
    replicas: usize,
    /// None: free ports in [`TEST_PORTS`], taken at start.
    base_port: Option<u16>,
    extra_config: Vec<String>,
    node_config: Vec<(String, String)>,
    gtid_strict: bool,
    app_schemas: Option<Vec<String>>,
    lifetime: Lifetime,
    remove_on_drop: bool,
    tls: bool,
    shardctl_bin: Option<PathBuf>,
    directory_cluster: usize,
    buffer_pool_mb: Option<u32>,
}

/// The running binary when it is shardctl itself (not a test binary), for the restart
/// commands a sandbox writes into its inventory.
fn this_shardctl() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    (exe.file_name()? == "shardctl").then_some(exe)
}

impl SandboxBuilder {
    /// A builder for a sandbox in `dir` (3 nodes from port 23306, detached).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        SandboxBuilder {
            dir: dir.into(),
            nodes: 3,
            replicas: 0,
            base_port: Some(DEFAULT_BASE_PORT),
            extra_config: Vec::new(),
            node_config: Vec::new(),
            gtid_strict: false,
            app_schemas: None,
            lifetime: Lifetime::Detached,
            remove_on_drop: false,
            tls: false,
            shardctl_bin: this_shardctl(),
            directory_cluster: 0,
            buffer_pool_mb: None,
        }
    }

    /// A sandbox for a test: a fresh directory under the system temp dir, free ports, servers
    /// that die with the test process, everything removed when the [`Sandbox`] drops.
    pub fn for_tests(nodes: usize) -> Result<Self> {
        process::remove_stale_test_dirs();
        let dir = tempfile::Builder::new()
            .prefix(&format!(
                "{}{}-",
                process::TEST_DIR_PREFIX,
                std::process::id()
            ))
            .tempdir()
            .map_err(|e| Error::io("cannot create a temp dir", e))?
            .keep();
        Ok(SandboxBuilder {
            dir,
            nodes,
            replicas: 0,
            base_port: None,
            extra_config: Vec::new(),
            node_config: Vec::new(),
            gtid_strict: false,
            app_schemas: None,
            lifetime: Lifetime::TiedToProcess,
            remove_on_drop: true,
            tls: false,
            shardctl_bin: this_shardctl(),
            directory_cluster: 0,
            buffer_pool_mb: None,
        })
    }

    /// Number of nodes.
    pub fn nodes(mut self, n: usize) -> Self {
        self.nodes = n;
        self
    }

    /// Port of the first node; the other nodes follow, then the replicas (node1's first).
    pub fn base_port(mut self, port: u16) -> Self {
        self.base_port = Some(port);
        self
    }

    /// Replicas per node (0 to 9): each its own server (`node1r1`, ...), read-only, with
    /// its binary log and `log_slave_updates`, replicating from its node with GTID
    /// (`MASTER_USE_GTID = slave_pos`), listed under the node's `replicas:` in the
    /// inventory. Nodes with replicas log their replicated updates too.
    pub fn replicas(mut self, per_node: usize) -> Self {
        self.replicas = per_node;
        self
    }

    /// An extra `[mysqld]` option line for one server (a node or a replica), after every
    /// other line, so it overrides them (e.g. `log-slave-updates=OFF`).
    pub fn node_config(mut self, server: impl Into<String>, line: impl Into<String>) -> Self {
        self.node_config.push((server.into(), line.into()));
        self
    }

    /// `gtid_strict_mode` on every server. Each node has its own GTID domain (its number);
    /// its replicas share it.
    pub fn gtid_strict(mut self, on: bool) -> Self {
        self.gtid_strict = on;
        self
    }

    /// Per-schema grants: the application account gets DML on these schemas only
    /// (`GRANT ... ON schema.*` each), instead of the wildcard grants on every shard
    /// schema name.
    pub fn app_schemas(mut self, schemas: &[&str]) -> Self {
        self.app_schemas = Some(schemas.iter().map(|s| s.to_string()).collect());
        self
    }

    /// An extra `[mysqld]` option line for every node (e.g. `version=5.6.51`).
    pub fn extra_config(mut self, line: impl Into<String>) -> Self {
        self.extra_config.push(line.into());
        self
    }

    /// The shardctl binary whose `sandbox restart` the inventory's `restart_command`s run
    /// (default: the running binary when it is shardctl; tests name theirs).
    pub fn shardctl_bin(mut self, bin: impl Into<PathBuf>) -> Self {
        self.shardctl_bin = Some(bin.into());
        self
    }

    /// Servers with TLS: a CA and a server certificate (for 127.0.0.1 and localhost) made
    /// with `openssl` in `DIR/tls`, the servers configured with them, the inventory's nodes
    /// asking for TLS with that CA, and the replication account `REQUIRE SSL`, so a channel
    /// that did not use TLS could not even connect.
    pub fn tls(mut self, on: bool) -> Self {
        self.tls = on;
        self
    }

    /// The directory on a Galera cluster of `members` servers of its own (`dir1`, ...; 0:
    /// the directory lives on node1): the first bootstraps the cluster, the others join it
    /// by a `mariabackup` state transfer, and the inventory names them as
    /// `directory.cluster`. Needs the `galera-4` package.
    pub fn directory_cluster(mut self, members: usize) -> Self {
        self.directory_cluster = members;
        self
    }

    /// Small servers, for fleets of dozens of nodes on one machine: an InnoDB buffer pool
    /// of `mb` MiB (the default is 64 MiB), and below 64 MiB also an 8 MiB Aria page cache
    /// and key buffer and a 16 MiB redo log (each mariadbd then takes about 100 MB).
    pub fn buffer_pool_mb(mut self, mb: u32) -> Self {
        self.buffer_pool_mb = Some(mb);
        self
    }

    /// Starts the servers (initialising data directories on first use) and writes the
    /// inventory. Refuses when the sandbox already runs or a port is taken.
    pub fn start(self) -> Result<Sandbox> {
        if self.nodes == 0 || self.nodes > MAX_NODES {
            return Err(Error::Usage(format!(
                "--nodes {}: a sandbox has 1 to {MAX_NODES} nodes",
                self.nodes
            )));
        }
        if let Some(mb) = self.buffer_pool_mb.filter(|mb| !(8..=65536).contains(mb)) {
            return Err(Error::Usage(format!(
                "--buffer-pool {mb}: an InnoDB buffer pool of 8 to 65536 MiB"
            )));
        }
        if self.replicas > 9 {
            return Err(Error::Usage(format!(
                "--replicas {}: a node has 0 to 9 replicas",
                self.replicas
            )));
        }
        if let Some(schema) = self.app_schemas.iter().flatten().find(|s| {
            s.is_empty()
                || !s
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
        }) {
            return Err(Error::Usage(format!(
                "--app-schemas: {schema:?} is not a schema name (ASCII letters, digits, _ and $)"
            )));
        }
        if self.directory_cluster == 1 || self.directory_cluster > 9 {
            return Err(Error::Usage(format!(
                "--directory-cluster {}: a directory cluster has 2 to 9 members (3 to survive the loss of one)",
                self.directory_cluster
            )));
        }
        if self.directory_cluster > 0 {
            galera::provider()?;
        }
        let members = self.directory_cluster;
        // Each member takes a server port, then three for Galera after every server's.
        let servers = self.nodes * (1 + self.replicas) + members;
        let ports_needed = servers + 3 * members;
        let base_port = match self.base_port {
            Some(p) => p,
            None => free_test_ports(ports_needed)?,
        };
        if usize::from(base_port) + ports_needed > 65535 || base_port < 1024 {
            return Err(Error::Usage(format!(
                "--base-port {base_port}: choose a port from 1024 that leaves room for {servers} servers"
            )));
        }
        fs::create_dir_all(&self.dir)
            .map_err(|e| Error::io(format!("cannot create {}", self.dir.display()), e))?;
        let dir = self
            .dir
            .canonicalize()
            .map_err(|e| Error::io(format!("cannot resolve {}", self.dir.display()), e))?;
        if let Some(old) = read_state(&dir)? {
            let running: Vec<&str> = old
                .nodes
                .iter()
                .filter(|n| n.running())
                .map(|n| n.name.as_str())
                .collect();
            if !running.is_empty() {
                return Err(Error::Refused(format!(
                    "a sandbox already runs in {} ({}); stop it with `shardctl sandbox down --dir {}`",
                    dir.display(),
                    running.join(", "),
                    self.dir.display()
                )));
            }
        }
        let binaries = Binaries::locate()?;
        let nodes: Vec<SandboxNode> = (1..=self.nodes)
            .map(|i| SandboxNode {
                name: format!("node{i}"),
                port: base_port + (i as u16 - 1),
                server_id: i as u32,
                dir: dir.join(format!("node{i}")),
                pid: None,
                primary: None,
                galera_port: None,
            })
            .collect();
        let replicas: Vec<SandboxNode> = (1..=self.nodes)
            .flat_map(|i| (1..=self.replicas).map(move |r| (i, r)))
            .enumerate()
            .map(|(k, (i, r))| SandboxNode {
                name: format!("node{i}r{r}"),
                port: base_port + (self.nodes + k) as u16,
                server_id: (i * 100 + r) as u32,
                dir: dir.join(format!("node{i}r{r}")),
                pid: None,
                primary: Some(format!("node{i}")),
                galera_port: None,
            })
            .collect();
        let first_member_port = base_port + (self.nodes * (1 + self.replicas)) as u16;
        let first_galera_port = base_port + servers as u16;
        let directory: Vec<SandboxNode> = (1..=members)
            .map(|i| SandboxNode {
                name: format!("dir{i}"),
                port: first_member_port + (i as u16 - 1),
                server_id: 9900 + i as u32,
                dir: dir.join(format!("dir{i}")),
                pid: None,
                primary: None,
                galera_port: Some(first_galera_port + 3 * (i as u16 - 1)),
            })
            .collect();
        for n in nodes.iter().chain(&replicas).chain(&directory) {
            for port in std::iter::once(n.port)
                .chain(n.galera_port.into_iter().flat_map(|g| [g, g + 1, g + 2]))
            {
                if TcpListener::bind(("127.0.0.1", port)).is_err() {
                    return Err(Error::Refused(format!(
                        "port {port} (for {}) is taken on 127.0.0.1; choose another --base-port",
                        n.name
                    )));
                }
            }
        }
        for n in nodes.iter().chain(&replicas) {
            if TcpListener::bind(("127.0.0.1", n.port)).is_err() {
                return Err(Error::Refused(format!(
                    "port {} (for {}) is taken on 127.0.0.1; choose another --base-port",
                    n.port, n.name
                )));
            }
        }
        let secrets = Secrets::load_or_create(&dir)?;
        let mut sandbox = Sandbox {
            dir: dir.clone(),
            state: SandboxState {
                binaries,
                nodes,
                replicas,
                directory,
                shardctl_bin: self.shardctl_bin.clone(),
                owner_pid: (self.lifetime == Lifetime::TiedToProcess).then(std::process::id),
            },
            stop_on_drop: self.lifetime == Lifetime::TiedToProcess,
            remove_on_drop: self.remove_on_drop,
        };
        let result = sandbox.boot(&self, &secrets);
        if let Err(e) = result {
            sandbox.stop_all();
            return Err(e);
        }
        Ok(sandbox)
    }
}

/// Ports handed to test sandboxes by this process, so two sandboxes started at the same
/// time never get the same ports.
fn reserved_ports() -> &'static std::sync::Mutex<std::collections::HashSet<u16>> {
    static RESERVED: std::sync::OnceLock<std::sync::Mutex<std::collections::HashSet<u16>>> =
        std::sync::OnceLock::new();
    RESERVED.get_or_init(Default::default)
}

/// Where test sandboxes take their ports: below Linux's ephemeral range (32768 and up by
/// default), so that no outgoing connection of a test running beside them takes a port
/// between the check and the server's start, and above the walkthrough's 23306-23308.
pub const TEST_PORTS: std::ops::Range<u16> = 24000..32700;

/// Finds `n` consecutive free ports for a test sandbox (or a test's sshd), at random in
/// [`TEST_PORTS`] (test binaries run side by side), never the same twice in a process nor
/// in two live processes: a port is free only when nothing listens on it and no other
/// live process claimed it ([`claim_port`]), since a sandbox's servers bind their ports
/// seconds after they were chosen.
pub fn free_test_ports(n: usize) -> Result<u16> {
    use std::hash::{BuildHasher, Hasher};
    let mut reserved = reserved_ports().lock().unwrap_or_else(|p| p.into_inner());
    let span = u64::from(TEST_PORTS.end - TEST_PORTS.start) - n as u64;
    for attempt in 0..500u32 {
        let mut random = std::collections::hash_map::RandomState::new().build_hasher();
        random.write_u32(attempt);
        random.write_u32(std::process::id());
        let base = TEST_PORTS.start + (random.finish() % span) as u16;
        let ports: Vec<u16> = (0..n as u16).map(|i| base + i).collect();
        let all_free = ports
            .iter()
            .all(|p| !reserved.contains(p) && TcpListener::bind(("127.0.0.1", *p)).is_ok());
        if !all_free {
            continue;
        }
        // The ports claimed of a run that is not whole stay claimed by this process: a few
        // ports out of thousands, given back when it ends.
        if ports.iter().all(|p| claim_port(*p)) {
            reserved.extend(ports);
            return Ok(base);
        }
    }
    Err(Error::Refused("no run of free ports found".into()))
}

/// Where the claims of test ports are kept, one lock file per port.
fn port_claim(port: u16) -> PathBuf {
    std::env::temp_dir()
        .join("shardctl-test-ports")
        .join(port.to_string())
}

/// Claims `port` for this process: an exclusive `flock` on its claim file, held (the file
/// left open) for as long as the process lives and released by the kernel when it ends,
/// however it ends. False when another live process holds it.
fn claim_port(port: u16) -> bool {
    use std::os::fd::AsRawFd;
    static HELD: std::sync::Mutex<Vec<fs::File>> = std::sync::Mutex::new(Vec::new());
    let path = port_claim(port);
    if let Some(parent) = path.parent() {
        let _ = fs::create_dir_all(parent);
    }
    let Ok(file) = fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
    else {
        return false;
    };
    // SAFETY: flock on a descriptor this function owns; no memory is shared.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        return false;
    }
    HELD.lock().unwrap_or_else(|p| p.into_inner()).push(file);
    true
}

/// Passwords of the sandbox's accounts, kept in 0600 option files in its directory.
struct Secrets {
    root: String,
    admin_file: PathBuf,
    admin: String,
    repl_file: PathBuf,
    repl: String,
    app_file: PathBuf,
    app: String,
}

impl Secrets {
    fn load_or_create(dir: &Path) -> Result<Secrets> {
        let admin_file = dir.join("client.cnf");
        let repl_file = dir.join("replication.cnf");
        let app_file = dir.join("application.cnf");
        let get = |path: &Path, user: &str| -> Result<String> {
            if path.exists() {
                return Ok(crate::config::read_option_file(path)?
                    .password
                    .unwrap_or_default());
            }
            let password = random_password()?;
            write_private(
                path,
                &format!(
                    "[client]\n{}{}",
                    option_line("user", user)?,
                    option_line("password", &password)?
                ),
            )?;
            Ok(password)
        };
        Ok(Secrets {
            root: get(&dir.join(ROOT_OPTION_FILE), "root")?,
            admin: get(&admin_file, ADMIN_USER)?,
            repl: get(&repl_file, REPL_USER)?,
            app: get(&app_file, APP_USER)?,
            admin_file,
            repl_file,
            app_file,
        })
    }
}

fn random_password() -> Result<String> {
    let mut bytes = [0u8; 18];
    let mut f =
        fs::File::open("/dev/urandom").map_err(|e| Error::io("cannot open /dev/urandom", e))?;
    std::io::Read::read_exact(&mut f, &mut bytes)
        .map_err(|e| Error::io("cannot read /dev/urandom", e))?;
    const ALPHABET: &[u8] = b"ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789";
    Ok(bytes
        .iter()
        .map(|b| ALPHABET[usize::from(*b) % ALPHABET.len()] as char)
        .collect())
}

fn read_state(dir: &Path) -> Result<Option<SandboxState>> {
    let path = dir.join(STATE_FILE);
    match fs::read_to_string(&path) {
        Ok(text) => serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| Error::Config(format!("{}: {e}", path.display()))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io(format!("cannot read {}", path.display()), e)),
    }
}

/// A running (or stopped) sandbox.
#[derive(Debug)]
pub struct Sandbox {
    dir: PathBuf,
    state: SandboxState,
    stop_on_drop: bool,
    remove_on_drop: bool,
}

impl Sandbox {
    /// Opens the sandbox recorded in `dir`.
    pub fn open(dir: &Path) -> Result<Sandbox> {
        let dir = dir
            .canonicalize()
            .map_err(|_| Error::Usage(format!("no sandbox in {}", dir.display())))?;
        let state = read_state(&dir)?
            .ok_or_else(|| Error::Usage(format!("no sandbox in {}", dir.display())))?;
        Ok(Sandbox {
            dir,
            state,
            stop_on_drop: false,
            remove_on_drop: false,
        })
    }

    /// The sandbox directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The inventory the sandbox wrote.
    pub fn inventory_path(&self) -> PathBuf {
        self.dir.join(INVENTORY_FILE)
    }

    /// The nodes.
    pub fn nodes(&self) -> &[SandboxNode] {
        &self.state.nodes
    }

    /// The node called `name`.
    pub fn node(&self, name: &str) -> Option<&SandboxNode> {
        self.state.nodes.iter().find(|n| n.name == name)
    }

    /// The nodes' replicas (`node1r1`, `node1r2`, ..., `node2r1`, ...).
    pub fn replicas(&self) -> &[SandboxNode] {
        &self.state.replicas
    }

    /// The members of the directory's cluster (`dir1`, ...), empty when the directory
    /// lives on node1.
    pub fn directory_members(&self) -> &[SandboxNode] {
        &self.state.directory
    }

    /// Every server: the nodes, their replicas, the directory's members.
    pub fn servers(&self) -> impl Iterator<Item = &SandboxNode> {
        self.state
            .nodes
            .iter()
            .chain(&self.state.replicas)
            .chain(&self.state.directory)
    }

    /// The replicas of node `primary`, in order.
    pub fn replicas_of(&self, primary: &str) -> Vec<&SandboxNode> {
        self.state
            .replicas
            .iter()
            .filter(|r| r.primary.as_deref() == Some(primary))
            .collect()
    }

    fn boot(&mut self, builder: &SandboxBuilder, secrets: &Secrets) -> Result<()> {
        let template = self.dir.join(".template");
        if self.state.nodes.iter().any(|n| !n.datadir().exists()) && !template.exists() {
            log(1, "initialising a data directory template");
            process::initialise_datadir(&self.state.binaries, &template)?;
        }
        let tls = if builder.tls {
            Some(tls::ensure_certificates(&self.dir)?)
        } else {
            None
        };
        // A cluster begins with its first member; the others receive its state.
        let bootstrapping = self
            .state
            .directory
            .first()
            .is_some_and(|m| !m.datadir().exists());
        for node in self.servers() {
            fs::create_dir_all(node.tmp_dir())
                .map_err(|e| Error::io(format!("cannot create {}", node.dir.display()), e))?;
            let member = node.galera_port.is_some();
            let first_member = self
                .state
                .directory
                .first()
                .is_some_and(|m| m.name == node.name);
            if !node.datadir().exists() {
                if !member || first_member {
                    process::copy_tree(&template, &node.datadir())?;
                } else {
                    fs::create_dir_all(node.datadir()).map_err(|e| {
                        Error::io(format!("cannot create {}", node.datadir().display()), e)
                    })?;
                }
            }
            let config = self.config_of(
                builder,
                node,
                tls.as_ref(),
                secrets,
                bootstrapping && first_member,
            )?;
            // A member's options hold the state transfer's password: its owner's only.
            write_private(&node.config_file(), &config)?;
        }
        let fleet = self.state.nodes.len() + self.state.replicas.len();
        // The fleet, and the cluster's first member; the others once it is ready.
        let first_wave = fleet + usize::from(!self.state.directory.is_empty());
        for i in 0..first_wave {
            let config = self.server_mut(i).config_file();
            let pid = process::start_server(&self.state.binaries, &config, builder.lifetime, &[])?;
            self.server_mut(i).pid = Some(pid);
        }
        self.save_state()?;
        let app_grants = match &builder.app_schemas {
            Some(schemas) => AppGrants::Schemas(schemas),
            None => AppGrants::ShardPatterns,
        };
        for node in self.servers().take(first_wave) {
            wait_until_ready(node)?;
            if node.galera_port.is_some() && !bootstrapping {
                // A cluster that exists already: its accounts too.
                continue;
            }
            bootstrap_accounts(
                &self.state.binaries,
                node,
                secrets,
                tls.is_some(),
                &app_grants,
            )?;
        }
        if let Some(first) = self.state.directory.first() {
            galera::wait_synced(first, &secrets.root)?;
            // From now on the first member rejoins the others when it restarts.
            let config = self.config_of(builder, first, tls.as_ref(), secrets, false)?;
            write_private(&first.config_file(), &config)?;
        }
        for i in first_wave..fleet + self.state.directory.len() {
            let config = self.server_mut(i).config_file();
            let pid = process::start_server(&self.state.binaries, &config, builder.lifetime, &[])?;
            self.server_mut(i).pid = Some(pid);
            self.save_state()?;
        }
        for member in &self.state.directory {
            galera::wait_synced(member, &secrets.root)?;
        }
        for replica in &self.state.replicas {
            let primary = replica
                .primary
                .as_deref()
                .and_then(|p| self.node(p))
                .expect("a sandbox replica's primary is one of its nodes");
            start_replication(replica, primary, secrets, tls.as_ref())?;
        }
        self.write_inventory(secrets, tls.as_ref())?;
        Ok(())
    }

    /// The option file of server `node`: a member's with its cluster's options (`bootstrap`:
    /// it begins the cluster).
    fn config_of(
        &self,
        builder: &SandboxBuilder,
        node: &SandboxNode,
        tls: Option<&tls::Files>,
        secrets: &Secrets,
        bootstrap: bool,
    ) -> Result<String> {
        let mut extra = Vec::new();
        if let Some(mb) = builder.buffer_pool_mb {
            extra.push(format!("innodb-buffer-pool-size={mb}M"));
            if mb < 64 {
                extra.push("innodb-log-file-size=16M".into());
                extra.push("aria-pagecache-buffer-size=8M".into());
                extra.push("key-buffer-size=8M".into());
            }
        }
        extra.extend(builder.extra_config.iter().cloned());
        if builder.gtid_strict {
            extra.push("gtid-strict-mode=ON".into());
        }
        let has_replicas = self
            .state
            .replicas
            .iter()
            .any(|r| r.primary.as_deref() == Some(node.name.as_str()));
        if has_replicas || node.primary.is_some() {
            // A primary's replicas receive what its channels apply only so; a replica
            // logs them too, to be promotable.
            extra.push("log-slave-updates=ON".into());
        }
        if node.primary.is_some() {
            extra.push("read-only=ON".into());
        }
        if node.galera_port.is_some() {
            extra.extend(galera::config_lines(
                node,
                &self.state.directory,
                &secrets.root,
                bootstrap,
            )?);
        }
        extra.extend(
            builder
                .node_config
                .iter()
                .filter(|(server, _)| *server == node.name)
                .map(|(_, line)| line.clone()),
        );
        server_config(&self.state.binaries, node, &extra, tls)
    }

    /// Server `i` of the nodes followed by the replicas, then the directory's members.
    fn server_mut(&mut self, i: usize) -> &mut SandboxNode {
        let nodes = self.state.nodes.len();
        let replicas = self.state.replicas.len();
        if i < nodes {
            &mut self.state.nodes[i]
        } else if i < nodes + replicas {
            &mut self.state.replicas[i - nodes]
        } else {
            &mut self.state.directory[i - nodes - replicas]
        }
    }

    /// The node, replica or directory member called `name`.
    fn server_position(&self, name: &str) -> Result<usize> {
        self.servers().position(|n| n.name == name).ok_or_else(|| {
            Error::Usage(format!(
                "no sandbox node, replica or directory member {name}"
            ))
        })
    }

    fn save_state(&self) -> Result<()> {
        let text = serde_json::to_string_pretty(&self.state).expect("state serialises");
        fs::write(self.dir.join(STATE_FILE), text)
            .map_err(|e| Error::io("cannot write the sandbox state", e))
    }

    fn write_inventory(&self, secrets: &Secrets, tls: Option<&tls::Files>) -> Result<()> {
        let dir_text = self
            .dir
            .to_str()
            .ok_or_else(|| {
                Error::Usage(format!(
                    "{}: use a UTF-8 sandbox directory",
                    self.dir.display()
                ))
            })?
            .to_string();
        let restart_command: Option<String> = match &self.state.shardctl_bin {
            Some(bin) => Some(
                bin.to_str()
                    .ok_or_else(|| Error::Usage(format!("{}: not a UTF-8 path", bin.display())))?
                    .to_string(),
            ),
            None => None,
        };
        let nodes: BTreeMap<String, NodeSpec> = self
            .state
            .nodes
            .iter()
            .map(|n| -> Result<(String, NodeSpec)> {
                Ok((
                    n.name.clone(),
                    NodeSpec {
                        host: Some("127.0.0.1".into()),
                        port: Some(n.port),
                        socket: None,
                        account: AccountSpec {
                            user: Some(ADMIN_USER.into()),
                            defaults_file: Some(secrets.admin_file.clone()),
                            ..AccountSpec::default()
                        },
                        tls: tls.map(|t| TlsSpec {
                            enabled: true,
                            ca_file: Some(t.ca.clone()),
                            ..TlsSpec::default()
                        }),
                        ssh: None,
                        datadir: Some(n.datadir()),
                        option_file: Some(n.config_file()),
                        restart_command: restart_command
                            .as_ref()
                            .map(|bin| {
                                crate::remote::command_line(&[
                                    bin.as_str(),
                                    "sandbox",
                                    "restart",
                                    "--dir",
                                    dir_text.as_str(),
                                    "--node",
                                    n.name.as_str(),
                                ])
                            })
                            .transpose()?,
                        capacity: Some(1.0),
                        replicas: self
                            .replicas_of(&n.name)
                            .into_iter()
                            .map(|r| {
                                ReplicaSpec::Server(ReplicaServer {
                                    host: Some("127.0.0.1".into()),
                                    port: Some(r.port),
                                    socket: None,
                                    ssh: None,
                                })
                            })
                            .collect(),
                    },
                ))
            })
            .collect::<Result<_>>()?;
        let mut nodes = nodes;
        for m in &self.state.directory {
            nodes.insert(
                m.name.clone(),
                NodeSpec {
                    host: Some("127.0.0.1".into()),
                    port: Some(m.port),
                    socket: None,
                    account: AccountSpec {
                        user: Some(ADMIN_USER.into()),
                        defaults_file: Some(secrets.admin_file.clone()),
                        ..AccountSpec::default()
                    },
                    tls: tls.map(|t| TlsSpec {
                        enabled: true,
                        ca_file: Some(t.ca.clone()),
                        ..TlsSpec::default()
                    }),
                    ssh: None,
                    datadir: Some(m.datadir()),
                    option_file: Some(m.config_file()),
                    restart_command: None,
                    capacity: None,
                    replicas: Vec::new(),
                },
            );
        }
        let (directory_node, cluster) = if self.state.directory.is_empty() {
            (Some(self.state.nodes[0].name.clone()), None)
        } else {
            (
                None,
                Some(crate::config::ClusterSpec {
                    name: galera::CLUSTER_NAME.into(),
                    members: self
                        .state
                        .directory
                        .iter()
                        .map(|m| m.name.clone())
                        .collect(),
                    readers: Vec::new(),
                    wait_secs: 180,
                }),
            )
        };
        let inv = InventoryFile {
            hooks: Vec::new(),
            directory: DirectorySpec {
                node: directory_node,
                cluster,
                schema: DIRECTORY_SCHEMA.into(),
                application: Some(AccountSpec {
                    user: Some(APP_USER.into()),
                    defaults_file: Some(secrets.app_file.clone()),
                    ..AccountSpec::default()
                }),
            },
            replication: Some(AccountSpec {
                user: Some(REPL_USER.into()),
                defaults_file: Some(secrets.repl_file.clone()),
                ..AccountSpec::default()
            }),
            application: Some(AccountSpec {
                user: Some(APP_USER.into()),
                defaults_file: Some(secrets.app_file.clone()),
                ..AccountSpec::default()
            }),
            nodes,
            defaults: Defaults::default(),
        };
        let yaml = serde_yaml::to_string(&inv).map_err(|e| Error::Config(e.to_string()))?;
        let text = format!(
            "# Written by `shardctl sandbox up`; passwords live in the 0600 option files it names.\n{yaml}"
        );
        fs::write(self.inventory_path(), text)
            .map_err(|e| Error::io("cannot write the sandbox inventory", e))
    }

    /// Kills one node's server at once (SIGKILL), as a crash would. For fault tests.
    pub fn kill_node(&mut self, name: &str) -> Result<()> {
        let i = self.server_position(name)?;
        let node = self.server_mut(i);
        if let Some(pid) = node.pid.filter(|_| node.running()) {
            process::stop(pid, Duration::ZERO);
        }
        node.pid = None;
        self.save_state()
    }

    /// Starts one node's server again on its existing data and waits until it answers (a
    /// member of the directory's cluster: until it is Synced again, see
    /// [`Sandbox::restart_members`]).
    pub fn restart_node(&mut self, name: &str) -> Result<()> {
        let i = self.server_position(name)?;
        if self.server_mut(i).galera_port.is_some() {
            return self.restart_members(&[name]);
        }
        let lifetime = self.lifetime();
        if self.server_mut(i).running() {
            return Ok(());
        }
        // A server killed a moment ago may still hold its files or port: try a few times.
        let mut last = None;
        for _ in 0..3 {
            let config = self.server_mut(i).config_file();
            let pid = process::start_server(&self.state.binaries, &config, lifetime, &[])?;
            self.server_mut(i).pid = Some(pid);
            self.save_state()?;
            if let Some(owner) = self.state.owner_pid.filter(|o| *o != std::process::id()) {
                process::stop_with(owner, pid)?;
            }
            match wait_until_ready(self.server_mut(i)) {
                Ok(()) => return Ok(()),
                Err(e) => last = Some(e),
            }
            std::thread::sleep(Duration::from_millis(500));
        }
        Err(last.expect("three attempts were made"))
    }

    fn lifetime(&self) -> Lifetime {
        if self.stop_on_drop {
            Lifetime::TiedToProcess
        } else {
            Lifetime::Detached
        }
    }

    /// Starts members of the directory's cluster again, all at once, and waits until each
    /// is Synced: a member killed mid-transaction first recovers its position from its
    /// storage (`--wsrep-recover`) and starts from it, so it rejoins by an incremental
    /// transfer, and members that all went down together re-form their Primary component
    /// from their saved view once they are all back (`pc.recovery`).
    pub fn restart_members(&mut self, names: &[&str]) -> Result<()> {
        let root = Secrets::load_or_create(&self.dir)?.root;
        let lifetime = self.lifetime();
        let mut started = Vec::new();
        for name in names {
            let i = self.server_position(name)?;
            let member = self.server_mut(i).clone();
            if member.galera_port.is_none() {
                return Err(Error::Usage(format!(
                    "{name} is not a member of the directory's cluster"
                )));
            }
            if member.running() {
                continue;
            }
            let mut args = Vec::new();
            if let Some(position) = galera::recover_position(&self.state.binaries, &member)? {
                args.push(galera::start_position_arg(&position));
            }
            let pid = process::start_server(
                &self.state.binaries,
                &member.config_file(),
                lifetime,
                &args,
            )?;
            self.server_mut(i).pid = Some(pid);
            self.save_state()?;
            if let Some(owner) = self.state.owner_pid.filter(|o| *o != std::process::id()) {
                process::stop_with(owner, pid)?;
            }
            started.push(i);
        }
        for i in started {
            let member = self.server_mut(i).clone();
            galera::wait_synced(&member, &root)?;
        }
        Ok(())
    }

    /// Stops one node's server cleanly (SIGTERM, as a service manager does) and starts it
    /// again on the same data and options, detached from the caller: what the
    /// `restart_command` a sandbox writes into its inventory runs (`sandbox restart`).
    pub fn restart_server(&mut self, name: &str) -> Result<()> {
        let i = self.server_position(name)?;
        let node = self.server_mut(i);
        if let Some(pid) = node.pid.filter(|_| node.running()) {
            process::stop(pid, STOP_TIMEOUT);
        }
        self.server_mut(i).pid = None;
        self.save_state()?;
        self.restart_node(name)
    }

    /// Stops every server this sandbox started. Returns how many were running.
    pub fn stop_all(&mut self) -> usize {
        // A server restarted by another process (`sandbox restart`, run by a restart
        // command) has a pid recorded only on disk.
        if let Ok(Some(disk)) = read_state(&self.dir) {
            let ours = self
                .state
                .nodes
                .iter_mut()
                .chain(&mut self.state.replicas)
                .chain(&mut self.state.directory);
            let theirs = disk
                .nodes
                .into_iter()
                .chain(disk.replicas)
                .chain(disk.directory);
            for (n, d) in ours.zip(theirs) {
                if n.name == d.name && d.pid != n.pid && d.running() {
                    n.pid = d.pid;
                }
            }
        }
        let mut stopped = 0;
        // Replicas first: a replica whose primary went first logs reconnection errors.
        for node in self
            .state
            .replicas
            .iter_mut()
            .chain(&mut self.state.nodes)
            .chain(&mut self.state.directory)
        {
            if node.running() {
                if let Some(pid) = node.pid {
                    process::stop(pid, STOP_TIMEOUT);
                    stopped += 1;
                }
            }
            node.pid = None;
        }
        stopped
    }

    /// `sandbox down`: stops the servers; with `purge`, removes the directory too.
    /// Refuses when nothing runs and nothing is to be purged.
    pub fn down(mut self, purge: bool) -> Result<usize> {
        let stopped = self.stop_all();
        if stopped == 0 && !purge {
            return Err(Error::Usage(format!(
                "no sandbox server runs in {}",
                self.dir.display()
            )));
        }
        if purge {
            fs::remove_dir_all(&self.dir)
                .map_err(|e| Error::io(format!("cannot remove {}", self.dir.display()), e))?;
        } else {
            self.save_state()?;
        }
        Ok(stopped)
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        if self.stop_on_drop {
            self.stop_all();
        }
        if self.remove_on_drop {
            let _ = fs::remove_dir_all(&self.dir);
        }
    }
}

/// An option-file line naming a path: quoted and escaped, refused when it holds a line
/// break (a sandbox directory named so would otherwise inject options into the server's
/// configuration).
fn path_line(key: &str, path: &Path) -> Result<String> {
    let text = path.to_str().ok_or_else(|| {
        Error::Usage(format!("{}: use a UTF-8 sandbox directory", path.display()))
    })?;
    Ok(option_line(key, text)?.trim_end().to_string())
}

fn server_config(
    bin: &Binaries,
    node: &SandboxNode,
    extra: &[String],
    tls: Option<&tls::Files>,
) -> Result<String> {
    let mut lines = vec![
        "[mysqld]".to_string(),
        path_line("datadir", &node.datadir())?,
        format!("port={}", node.port),
        "bind-address=127.0.0.1".into(),
        path_line("socket", &node.socket())?,
        path_line("pid-file", &node.dir.join("mysqld.pid"))?,
        // Its own temporary directory: at start-up a server deletes every `#sql*` file in
        // its tmpdir, which in a shared /tmp are other servers' temporary tables.
        path_line("tmpdir", &node.tmp_dir())?,
        path_line("log-error", &node.error_log())?,
        format!("server-id={}", node.server_id),
        "log-bin=mysql-bin".into(),
        "binlog-format=ROW".into(),
        format!("relay-log=relay-{}", node.name),
        // As a DBA runs replicas: a server killed while a channel's receiver wrote an event
        // group leaves a torn relay log, which the applier then refuses ("incomplete event
        // group"); with recovery on, the server drops its relay logs at start and fetches
        // again from the applier's position.
        "relay-log-recovery=ON".into(),
        "skip-name-resolve".into(),
        "local-infile=1".into(),
        "max-connections=400".into(),
        "innodb-buffer-pool-size=64M".into(),
        "innodb-log-file-size=48M".into(),
        "innodb-flush-log-at-trx-commit=2".into(),
        "sync-binlog=0".into(),
        "performance-schema=OFF".into(),
    ];
    // A replica reports its address, so its primary's SHOW SLAVE HOSTS lists it.
    lines.push("report-host=127.0.0.1".into());
    lines.push(format!("report-port={}", node.port));
    if bin.engine == Engine::MariaDb {
        // One GTID domain per node, shared by its replicas (a promoted replica continues
        // its primary's domain).
        let domain = if node.primary.is_some() {
            node.server_id / 100
        } else {
            node.server_id
        };
        lines.push(format!("gtid-domain-id={domain}"));
    } else {
        lines.push("mysqlx=OFF".into());
    }
    if let Some(t) = tls {
        lines.push(path_line("ssl-ca", &t.ca)?);
        lines.push(path_line("ssl-cert", &t.cert)?);
        lines.push(path_line("ssl-key", &t.key)?);
    }
    for line in extra {
        if line.contains(['\n', '\r']) {
            return Err(Error::Usage(format!(
                "extra server option {line:?}: one option per line"
            )));
        }
        lines.push(line.clone());
    }
    lines.push(String::new());
    Ok(lines.join("\n"))
}

fn wait_until_ready(node: &SandboxNode) -> Result<()> {
    let deadline = Instant::now() + START_TIMEOUT;
    loop {
        let opts = mysql::OptsBuilder::new()
            .socket(Some(node.socket().display().to_string()))
            .user(Some("root"))
            .read_timeout(Some(Duration::from_secs(10)))
            .write_timeout(Some(Duration::from_secs(10)));
        match mysql::Conn::new(opts) {
            Ok(_) => return Ok(()),
            // Root has a password once the sandbox has set it: the server answers.
            Err(mysql::Error::MySqlError(e)) if e.code == 1045 => return Ok(()),
            Err(_) => {}
        }
        if !node.running() {
            return Err(Error::server(
                &node.name,
                format!(
                    "the server exited during startup: {}",
                    process::last_error_line(&node.error_log())
                ),
            ));
        }
        if Instant::now() > deadline {
            return Err(Error::Timeout(format!(
                "{} did not accept connections within {}s (see {})",
                node.name,
                START_TIMEOUT.as_secs(),
                node.error_log().display()
            )));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A root session over the node's socket: with the sandbox's root password, or none on a
/// data directory fresh from the template (whose root has none until the bootstrap).
fn root_connection(node: &SandboxNode, secrets: &Secrets) -> Result<mysql::Conn> {
    let opts = |password: Option<String>| {
        mysql::OptsBuilder::new()
            .socket(Some(node.socket().display().to_string()))
            .user(Some("root"))
            .pass(password)
            .read_timeout(Some(Duration::from_secs(30)))
            .write_timeout(Some(Duration::from_secs(30)))
    };
    match mysql::Conn::new(opts(Some(secrets.root.clone()))) {
        Ok(c) => Ok(c),
        Err(mysql::Error::MySqlError(e)) if e.code == 1045 => {
            mysql::Conn::new(opts(None)).map_err(|e| {
                Error::server(
                    &node.name,
                    format!("root login: {}", crate::server::describe(&e)),
                )
            })
        }
        Err(e) => Err(Error::server(
            &node.name,
            format!("root login: {}", crate::server::describe(&e)),
        )),
    }
}

/// Schema-level privileges of the admin account: what moves, splits, copies, prunes and
/// the directory need on the shard schemas, their templates, the trash schemas and the
/// directory.
const ADMIN_SCHEMA_PRIVILEGES: &str =
    "SELECT, INSERT, UPDATE, DELETE, CREATE, DROP, ALTER, INDEX, \
    REFERENCES, CREATE TEMPORARY TABLES, LOCK TABLES, CREATE VIEW, SHOW VIEW, CREATE ROUTINE, \
    ALTER ROUTINE, EXECUTE, EVENT, TRIGGER";

/// Server-wide privileges of the admin account on MariaDB 10.5.8 and later: replication
/// (channels, filters, status, coordinates), the read-only fence (READ_ONLY ADMIN), unlogged
/// sessions (BINLOG ADMIN), the dump's global read lock (RELOAD), ending a dead owner's
/// session (PROCESS, CONNECTION ADMIN), objects re-created with their own definers (SET
/// USER), trigger and routine DDL with the binary log on (SUPER), listing schemas.
const ADMIN_GLOBAL_PRIVILEGES_MARIADB: &str = "RELOAD, PROCESS, SHOW DATABASES, SUPER, \
    REPLICATION SLAVE ADMIN, SLAVE MONITOR, BINLOG MONITOR, BINLOG ADMIN, READ_ONLY ADMIN, \
    CONNECTION ADMIN, SET USER";

/// The same for older MariaDB, before those privileges were split out of SUPER.
const ADMIN_GLOBAL_PRIVILEGES_OLD: &str =
    "RELOAD, PROCESS, SHOW DATABASES, SUPER, REPLICATION CLIENT";

/// Database-name patterns (as GRANT reads them: `_` and `%` wildcards, `\_` a literal
/// underscore) that match every name over shardctl's identifier alphabet (ASCII letters,
/// digits, `_`, `$`) except the names in `excluded`. Wildcard grants cannot say "all but";
/// a cover of prefixes can: for each excluded name, every other character at each of its
/// positions, every proper prefix, and every extension.
pub fn schema_patterns_except(excluded: &[&str]) -> Vec<String> {
    const ALPHABET: &str = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$";
    let esc = |s: &str| s.replace('_', "\\_");
    // The prefixes of excluded names: only there does the cover go one character deeper.
    let mut prefixes: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
    for name in excluded {
        for i in 0..name.len() {
            prefixes.insert(name[..i].to_string());
        }
    }
    let mut out = Vec::new();
    for p in &prefixes {
        if !p.is_empty() && !excluded.contains(&p.as_str()) {
            out.push(esc(p));
        }
        for c in ALPHABET.chars() {
            let next = format!("{p}{c}");
            if prefixes.contains(&next) || excluded.contains(&next.as_str()) {
                continue;
            }
            out.push(format!("{}%", esc(&next)));
        }
    }
    for name in excluded {
        if !prefixes.contains(*name) {
            out.push(format!("{}\\_%", esc(name)));
            for c in ALPHABET.chars().filter(|c| *c != '_') {
                out.push(format!("{}{c}%", esc(name)));
            }
        }
    }
    out
}

/// Shard schemas are `<schema>_<id>` with ids from 1: a name holding `_` followed by a
/// digit from 1 to 9. The application account gets DML on these only.
pub const APP_SCHEMA_PATTERNS: [&str; 9] = [
    "%\\_1%", "%\\_2%", "%\\_3%", "%\\_4%", "%\\_5%", "%\\_6%", "%\\_7%", "%\\_8%", "%\\_9%",
];

/// The application account's privileges on the schemas it may use.
pub const APP_PRIVILEGES: &str = "SELECT, INSERT, UPDATE, DELETE";

/// Which schemas the application account may use.
enum AppGrants<'a> {
    /// Every shard schema name ([`APP_SCHEMA_PATTERNS`]).
    ShardPatterns,
    /// These schemas only.
    Schemas(&'a [String]),
}

/// Points `replica` at `primary` with GTID (`MASTER_USE_GTID = slave_pos`), starts it, and
/// waits until both threads run. Over the root socket; the replica's settings persist, so
/// a restart resumes replication.
fn start_replication(
    replica: &SandboxNode,
    primary: &SandboxNode,
    secrets: &Secrets,
    tls: Option<&tls::Files>,
) -> Result<()> {
    use crate::ident::string_literal as lit;
    let mut conn = root_connection(replica, secrets)?;
    let fail = |e: mysql::Error| {
        Error::server(
            &replica.name,
            format!(
                "starting replication: {}",
                e.to_string().replace(secrets.repl.as_str(), "***")
            ),
        )
    };
    let mut options = format!(
        "MASTER_HOST = '127.0.0.1', MASTER_PORT = {}, MASTER_USER = '{REPL_USER}', \
         MASTER_PASSWORD = {}, MASTER_USE_GTID = slave_pos, MASTER_CONNECT_RETRY = 1",
        primary.port,
        lit(&secrets.repl)
    );
    if let Some(t) = tls {
        let ca = t.ca.to_str().ok_or_else(|| {
            Error::Usage(format!("{}: use a UTF-8 sandbox directory", t.ca.display()))
        })?;
        options.push_str(&format!(
            ", MASTER_SSL = 1, MASTER_SSL_CA = {}, MASTER_SSL_VERIFY_SERVER_CERT = 1",
            lit(ca)
        ));
    }
    for sql in [
        "STOP SLAVE".to_string(),
        format!("CHANGE MASTER TO {options}"),
        "START SLAVE".to_string(),
    ] {
        conn.query_drop(&sql).map_err(fail)?;
    }
    let deadline = Instant::now() + START_TIMEOUT;
    loop {
        let row: Option<mysql::Row> = conn.query_first("SHOW SLAVE STATUS").map_err(fail)?;
        let field = |row: &mysql::Row, name: &str| -> String {
            row.get_opt::<String, _>(name)
                .and_then(|v| v.ok())
                .unwrap_or_default()
        };
        if let Some(row) = &row {
            if field(row, "Slave_IO_Running") == "Yes" && field(row, "Slave_SQL_Running") == "Yes" {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(Error::Timeout(format!(
                    "{} does not replicate from {} after {}s: {} {}",
                    replica.name,
                    primary.name,
                    START_TIMEOUT.as_secs(),
                    field(row, "Last_IO_Error"),
                    field(row, "Last_SQL_Error")
                )));
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Creates the sandbox accounts over the root socket, unlogged so no channel ever replays
/// them. Root gets a random password (in `root.cnf`) and loses every host but localhost;
/// anonymous accounts go. The admin account gets what shardctl needs and no GRANT OPTION,
/// its schema privileges on every schema but `mysql` (plus reading `mysql.proc`, which
/// shows other definers' routine bodies, and the names in `mysql.user`, which the
/// preflight reads to find the definers of a shard's objects); the application account DML on shard schemas
/// only; the replication account REPLICATION SLAVE (`REQUIRE SSL` with TLS).
fn bootstrap_accounts(
    bin: &Binaries,
    node: &SandboxNode,
    secrets: &Secrets,
    tls: bool,
    app_grants: &AppGrants<'_>,
) -> Result<()> {
    use crate::ident::string_literal as lit;
    let mut conn = root_connection(node, secrets)?;
    let fail = |e: mysql::Error| {
        let mut text = e.to_string();
        for secret in [&secrets.root, &secrets.admin, &secrets.repl, &secrets.app] {
            text = text.replace(secret.as_str(), "***");
        }
        Error::server(&node.name, format!("bootstrap: {text}"))
    };
    let version: String = conn
        .query_first("SELECT VERSION()")
        .map_err(fail)?
        .unwrap_or_default();
    let strays: Vec<(String, String)> = conn
        .query("SELECT User, Host FROM mysql.user WHERE (User = 'root' AND Host <> 'localhost') OR User = ''")
        .map_err(fail)?;
    let mut statements = vec!["SET SESSION sql_log_bin = 0".to_string()];
    for (user, host) in &strays {
        statements.push(format!("DROP USER {}@{}", lit(user), lit(host)));
    }
    statements.push(format!(
        "ALTER USER 'root'@'localhost' IDENTIFIED BY {}",
        lit(&secrets.root)
    ));
    let admin = lit(&secrets.admin);
    // One admin account for TCP and socket alike (no anonymous account shadows it); a
    // sandbox made by an older shardctl also had one at localhost.
    statements.push(format!("DROP USER IF EXISTS '{ADMIN_USER}'@'localhost'"));
    {
        let account = format!("'{ADMIN_USER}'@'%'");
        statements.push(format!(
            "CREATE USER IF NOT EXISTS {account} IDENTIFIED BY {admin}"
        ));
        // A sandbox made by an older shardctl gave ALL WITH GRANT OPTION: start over.
        statements.push(format!(
            "REVOKE ALL PRIVILEGES, GRANT OPTION FROM {account}"
        ));
        if bin.engine == Engine::MySql {
            // Not measured here (no MySQL server on the test machines): all, but no
            // GRANT OPTION.
            statements.push(format!("GRANT ALL ON *.* TO {account}"));
        } else {
            let global = if mariadb_at_least(&version, (10, 5, 8)) {
                ADMIN_GLOBAL_PRIVILEGES_MARIADB
            } else {
                ADMIN_GLOBAL_PRIVILEGES_OLD
            };
            statements.push(format!("GRANT {global} ON *.* TO {account}"));
            for pattern in schema_patterns_except(&["mysql"]) {
                statements.push(format!(
                    "GRANT {ADMIN_SCHEMA_PRIVILEGES} ON `{pattern}`.* TO {account}"
                ));
            }
            statements.push(format!("GRANT SELECT ON mysql.proc TO {account}"));
            // The preflight reads which accounts exist (the definers of a shard's objects):
            // their names only, never their password hashes.
            statements.push(format!(
                "GRANT SELECT (User, Host) ON mysql.user TO {account}"
            ));
        }
    }
    let require = if tls { " REQUIRE SSL" } else { "" };
    statements.extend([
        format!(
            "CREATE USER IF NOT EXISTS '{REPL_USER}'@'%' IDENTIFIED BY {}",
            lit(&secrets.repl)
        ),
        format!(
            "ALTER USER '{REPL_USER}'@'%'{}",
            if tls { require } else { " REQUIRE NONE" }
        ),
        format!("GRANT REPLICATION SLAVE ON *.* TO '{REPL_USER}'@'%'"),
        format!(
            "CREATE USER IF NOT EXISTS '{APP_USER}'@'%' IDENTIFIED BY {}",
            lit(&secrets.app)
        ),
        format!("REVOKE ALL PRIVILEGES, GRANT OPTION FROM '{APP_USER}'@'%'"),
    ]);
    match app_grants {
        AppGrants::ShardPatterns => {
            for pattern in APP_SCHEMA_PATTERNS {
                statements.push(format!(
                    "GRANT {APP_PRIVILEGES} ON `{pattern}`.* TO '{APP_USER}'@'%'"
                ));
            }
        }
        AppGrants::Schemas(schemas) => {
            for schema in schemas.iter() {
                // Names are checked by the builder: letters, digits, `_` and `$`; in a
                // grant `_` is a wildcard unless escaped.
                statements.push(format!(
                    "GRANT {APP_PRIVILEGES} ON `{}`.* TO '{APP_USER}'@'%'",
                    schema.replace('_', "\\_")
                ));
            }
        }
    }
    statements.extend(directory_application_grants(&mut conn).map_err(fail)?);
    statements.push("SET SESSION sql_log_bin = 1".to_string());
    for sql in statements {
        conn.query_drop(&sql).map_err(fail)?;
    }
    Ok(())
}

/// The application account as the directory's reader (`directory.application`): SELECT on
/// the directory schema, and UPDATE of one column, `sequences.next_value`, for the ids a
/// router takes — no INSERT, DELETE or other UPDATE anywhere in the directory. A column
/// grant needs its table, and the sandbox starts before `shardctl init`: when the table is
/// not there yet, a stand-in with that column is created (with its schema) just for the
/// grant and dropped after it; the grant stays and applies to the table `init` creates.
/// Sent unlogged, like every bootstrap statement.
fn directory_application_grants(conn: &mut mysql::Conn) -> mysql::Result<Vec<String>> {
    let exists = |conn: &mut mysql::Conn, sql: &str| -> mysql::Result<bool> {
        Ok(conn
            .exec_first::<i64, _, _>(sql, (DIRECTORY_SCHEMA,))?
            .unwrap_or(0)
            > 0)
    };
    let has_schema = exists(
        conn,
        "SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?",
    )?;
    let has_sequences = exists(
        conn,
        "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = 'sequences'",
    )?;
    let account = format!("'{APP_USER}'@'%'");
    let mut out = vec![format!(
        "GRANT SELECT ON `{DIRECTORY_SCHEMA}`.* TO {account}"
    )];
    if !has_schema {
        out.push(format!("CREATE DATABASE `{DIRECTORY_SCHEMA}`"));
    }
    if !has_sequences {
        out.push(format!(
            "CREATE TABLE `{DIRECTORY_SCHEMA}`.`sequences` (next_value BIGINT)"
        ));
    }
    out.push(format!(
        "GRANT UPDATE (next_value) ON `{DIRECTORY_SCHEMA}`.`sequences` TO {account}"
    ));
    if !has_sequences {
        out.push(format!("DROP TABLE `{DIRECTORY_SCHEMA}`.`sequences`"));
    }
    if !has_schema {
        out.push(format!("DROP DATABASE `{DIRECTORY_SCHEMA}`"));
    }
    Ok(out)
}

/// True when `version` (`@@version`) is MariaDB at `min` or later.
fn mariadb_at_least(version: &str, min: (u32, u32, u32)) -> bool {
    let mut parts = version
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|p| p.parse::<u32>().ok());
    let v = (
        parts.next().unwrap_or(0),
        parts.next().unwrap_or(0),
        parts.next().unwrap_or(0),
    );
    version.contains("MariaDB") && v >= min
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ports a test process picks are claimed against every other process (here
    /// util-linux's `flock` stands for another test binary) until this one ends.
    #[test]
    fn test_ports_are_claimed_against_other_processes() {
        let base = free_test_ports(2).unwrap();
        for port in [base, base + 1] {
            let other = std::process::Command::new("flock")
                .args(["--nonblock", "--conflict-exit-code", "7"])
                .arg(port_claim(port))
                .arg("true")
                .status()
                .unwrap();
            assert_eq!(other.code(), Some(7), "port {port} was not claimed");
        }
    }

    /// A LIKE-style match as GRANT applies database patterns.
    fn matches(pattern: &str, name: &str) -> bool {
        fn go(p: &[char], n: &[char]) -> bool {
            match p.first() {
                None => n.is_empty(),
                Some('%') => (0..=n.len()).any(|i| go(&p[1..], &n[i..])),
                Some('\\') => n.first() == p.get(1) && go(&p[2..], &n[1..]),
                Some('_') => !n.is_empty() && go(&p[1..], &n[1..]),
                Some(c) => n.first() == Some(c) && go(&p[1..], &n[1..]),
            }
        }
        let p: Vec<char> = pattern.chars().collect();
        let n: Vec<char> = name.chars().collect();
        go(&p, &n)
    }

    #[test]
    fn schema_patterns_cover_everything_but_the_excluded() {
        let patterns = schema_patterns_except(&["mysql", "shardctl"]);
        let hit = |name: &str| patterns.iter().any(|p| matches(p, name));
        for name in ["mysql", "shardctl"] {
            assert!(!hit(name), "{name} is granted");
        }
        for name in [
            "m",
            "my",
            "mys",
            "mysq",
            "mysqlx",
            "mysql_1",
            "Mysql",
            "mysqL",
            "employees",
            "employees_1",
            "shard",
            "shardctl_1",
            "shardctlx",
            "s",
            "sys",
            "_shardctl_trash_op1_0",
            "$x",
            "9lives",
            "app_12",
        ] {
            assert!(hit(name), "{name} is not granted");
        }
        assert!(patterns.len() < 1000, "{}", patterns.len());
    }

    #[test]
    fn app_patterns_match_shard_schemas_only() {
        let hit = |name: &str| APP_SCHEMA_PATTERNS.iter().any(|p| matches(p, name));
        for name in ["employees_1", "app_12", "sales_7", "company_9"] {
            assert!(hit(name), "{name}");
        }
        for name in [
            "mysql",
            "shardctl",
            "employees",
            "performance_schema",
            "sys",
            "x_0",
        ] {
            assert!(!hit(name), "{name}");
        }
    }

    #[test]
    fn mariadb_versions_compare() {
        assert!(mariadb_at_least(
            "10.11.6-MariaDB-0+deb12u1-log",
            (10, 5, 8)
        ));
        assert!(!mariadb_at_least("10.4.30-MariaDB", (10, 5, 8)));
        assert!(!mariadb_at_least("8.0.36", (10, 5, 8)));
    }
}
