//! Local sandboxes of real MariaDB (or MySQL) servers, for the demo and for every test.
//!
//! Each node is its own mysqld process with its own data directory, port, socket, server_id
//! and ROW-format binary log. The sandbox writes an inventory for itself, with credentials
//! in 0600 option files, and records the pids it started so `down` stops exactly those.

mod process;

use crate::config::{AccountSpec, Defaults, DirectorySpec, InventoryFile, NodeSpec};
use crate::error::{Error, Result};
use crate::output::log;
use mysql::prelude::Queryable;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::net::TcpListener;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub use process::Lifetime;

/// The directory used when `--dir` is not given.
pub const DEFAULT_DIR: &str = "sandbox";
/// The first node's port when `--base-port` is not given.
pub const DEFAULT_BASE_PORT: u16 = 23306;
/// The account shardctl uses on sandbox nodes.
pub const ADMIN_USER: &str = "shardctl";
/// The replication account on sandbox nodes.
pub const REPL_USER: &str = "repl";
/// The application account on sandbox nodes: data privileges only, so read_only stops it.
pub const APP_USER: &str = "app";

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
}

/// Builds and starts a sandbox.
#[derive(Debug, Clone)]
pub struct SandboxBuilder {
    dir: PathBuf,
    nodes: usize,
    base_port: u16,
    extra_config: Vec<String>,
    lifetime: Lifetime,
    remove_on_drop: bool,
}

impl SandboxBuilder {
    /// A builder for a sandbox in `dir` (3 nodes from port 23306, detached).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        SandboxBuilder {
            dir: dir.into(),
            nodes: 3,
            base_port: DEFAULT_BASE_PORT,
            extra_config: Vec::new(),
            lifetime: Lifetime::Detached,
            remove_on_drop: false,
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
            base_port: free_port_run(nodes)?,
            extra_config: Vec::new(),
            lifetime: Lifetime::TiedToProcess,
            remove_on_drop: true,
        })
    }

    /// Number of nodes.
    pub fn nodes(mut self, n: usize) -> Self {
        self.nodes = n;
        self
    }

    /// Port of the first node; the others follow.
    pub fn base_port(mut self, port: u16) -> Self {
        self.base_port = port;
        self
    }

    /// An extra `[mysqld]` option line for every node (e.g. `version=5.6.51`).
    pub fn extra_config(mut self, line: impl Into<String>) -> Self {
        self.extra_config.push(line.into());
        self
    }

    /// Starts the servers (initialising data directories on first use) and writes the
    /// inventory. Refuses when the sandbox already runs or a port is taken.
    pub fn start(self) -> Result<Sandbox> {
        if self.nodes == 0 || self.nodes > 9 {
            return Err(Error::Usage(format!(
                "--nodes {}: a sandbox has 1 to 9 nodes",
                self.nodes
            )));
        }
        if usize::from(self.base_port) + self.nodes > 65535 || self.base_port < 1024 {
            return Err(Error::Usage(format!(
                "--base-port {}: choose a port from 1024 that leaves room for {} nodes",
                self.base_port, self.nodes
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
                port: self.base_port + (i as u16 - 1),
                server_id: i as u32,
                dir: dir.join(format!("node{i}")),
                pid: None,
            })
            .collect();
        for n in &nodes {
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
            state: SandboxState { binaries, nodes },
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

/// Finds `n` consecutive free ports for a test sandbox, never the same twice in a process.
fn free_port_run(n: usize) -> Result<u16> {
    let mut reserved = reserved_ports().lock().unwrap_or_else(|p| p.into_inner());
    for _ in 0..200 {
        let probe = TcpListener::bind(("127.0.0.1", 0))
            .and_then(|l| l.local_addr())
            .map_err(|e| Error::io("cannot find a free port", e))?;
        let base = probe.port();
        if usize::from(base) + n >= 65000 {
            continue;
        }
        let all_free = (0..n as u16).all(|i| {
            !reserved.contains(&(base + i)) && TcpListener::bind(("127.0.0.1", base + i)).is_ok()
        });
        if all_free {
            reserved.extend((0..n as u16).map(|i| base + i));
            return Ok(base);
        }
    }
    Err(Error::Refused("no run of free ports found".into()))
}

/// Passwords of the sandbox's two accounts, kept in 0600 option files in its directory.
struct Secrets {
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
                &format!("[client]\nuser={user}\npassword={password}\n"),
            )?;
            Ok(password)
        };
        Ok(Secrets {
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

/// Writes a file readable by its owner only.
pub fn write_private(path: &Path, content: &str) -> Result<()> {
    let mut f = fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| Error::io(format!("cannot write {}", path.display()), e))?;
    f.write_all(content.as_bytes())
        .map_err(|e| Error::io(format!("cannot write {}", path.display()), e))
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

    fn boot(&mut self, builder: &SandboxBuilder, secrets: &Secrets) -> Result<()> {
        let template = self.dir.join(".template");
        if self.state.nodes.iter().any(|n| !n.datadir().exists()) && !template.exists() {
            log(1, "initialising a data directory template");
            process::initialise_datadir(&self.state.binaries, &template)?;
        }
        for node in &self.state.nodes {
            fs::create_dir_all(node.tmp_dir())
                .map_err(|e| Error::io(format!("cannot create {}", node.dir.display()), e))?;
            if !node.datadir().exists() {
                process::copy_tree(&template, &node.datadir())?;
            }
            fs::write(
                node.config_file(),
                server_config(&self.state.binaries, node, &builder.extra_config),
            )
            .map_err(|e| Error::io("cannot write my.cnf", e))?;
        }
        for i in 0..self.state.nodes.len() {
            let pid = process::start_server(
                &self.state.binaries,
                &self.state.nodes[i].config_file(),
                builder.lifetime,
            )?;
            self.state.nodes[i].pid = Some(pid);
        }
        self.save_state()?;
        for node in &self.state.nodes {
            wait_until_ready(node)?;
            bootstrap_accounts(node, secrets)?;
        }
        self.write_inventory(secrets)?;
        Ok(())
    }

    fn save_state(&self) -> Result<()> {
        let text = serde_json::to_string_pretty(&self.state).expect("state serialises");
        fs::write(self.dir.join(STATE_FILE), text)
            .map_err(|e| Error::io("cannot write the sandbox state", e))
    }

    fn write_inventory(&self, secrets: &Secrets) -> Result<()> {
        let nodes: BTreeMap<String, NodeSpec> = self
            .state
            .nodes
            .iter()
            .map(|n| {
                (
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
                        tls: None,
                        ssh: None,
                        capacity: Some(1.0),
                        replicas: Vec::new(),
                    },
                )
            })
            .collect();
        let inv = InventoryFile {
            directory: DirectorySpec {
                node: self.state.nodes[0].name.clone(),
                schema: "shardctl".into(),
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
        let node = self
            .state
            .nodes
            .iter_mut()
            .find(|n| n.name == name)
            .ok_or_else(|| Error::Usage(format!("no sandbox node {name}")))?;
        if let Some(pid) = node.pid.filter(|_| node.running()) {
            process::stop(pid, Duration::ZERO);
        }
        node.pid = None;
        self.save_state()
    }

    /// Starts one node's server again on its existing data and waits until it answers.
    pub fn restart_node(&mut self, name: &str) -> Result<()> {
        let lifetime = if self.stop_on_drop {
            Lifetime::TiedToProcess
        } else {
            Lifetime::Detached
        };
        let i = self
            .state
            .nodes
            .iter()
            .position(|n| n.name == name)
            .ok_or_else(|| Error::Usage(format!("no sandbox node {name}")))?;
        if self.state.nodes[i].running() {
            return Ok(());
        }
        // A server killed a moment ago may still hold its files or port: try a few times.
        let mut last = None;
        for _ in 0..3 {
            let pid = process::start_server(
                &self.state.binaries,
                &self.state.nodes[i].config_file(),
                lifetime,
            )?;
            self.state.nodes[i].pid = Some(pid);
            self.save_state()?;
            match wait_until_ready(&self.state.nodes[i]) {
                Ok(()) => return Ok(()),
                Err(e) => last = Some(e),
            }
            std::thread::sleep(Duration::from_millis(500));
        }
        Err(last.expect("three attempts were made"))
    }

    /// Stops every server this sandbox started. Returns how many were running.
    pub fn stop_all(&mut self) -> usize {
        let mut stopped = 0;
        for node in &mut self.state.nodes {
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

fn server_config(bin: &Binaries, node: &SandboxNode, extra: &[String]) -> String {
    let mut lines = vec![
        "[mysqld]".to_string(),
        format!("datadir={}", node.datadir().display()),
        format!("port={}", node.port),
        "bind-address=127.0.0.1".into(),
        format!("socket={}", node.socket().display()),
        format!("pid-file={}", node.dir.join("mysqld.pid").display()),
        // Its own temporary directory: at start-up a server deletes every `#sql*` file in
        // its tmpdir, which in a shared /tmp are other servers' temporary tables.
        format!("tmpdir={}", node.tmp_dir().display()),
        format!("log-error={}", node.error_log().display()),
        format!("server-id={}", node.server_id),
        "log-bin=mysql-bin".into(),
        "binlog-format=ROW".into(),
        format!("relay-log=relay-{}", node.name),
        "skip-name-resolve".into(),
        "local-infile=1".into(),
        "max-connections=400".into(),
        "innodb-buffer-pool-size=64M".into(),
        "innodb-log-file-size=48M".into(),
        "innodb-flush-log-at-trx-commit=2".into(),
        "sync-binlog=0".into(),
        "performance-schema=OFF".into(),
    ];
    if bin.engine == Engine::MariaDb {
        lines.push(format!("gtid-domain-id={}", node.server_id));
    } else {
        lines.push("mysqlx=OFF".into());
    }
    lines.extend(extra.iter().cloned());
    lines.push(String::new());
    lines.join("\n")
}

fn wait_until_ready(node: &SandboxNode) -> Result<()> {
    let deadline = Instant::now() + START_TIMEOUT;
    loop {
        let opts = mysql::OptsBuilder::new()
            .socket(Some(node.socket().display().to_string()))
            .user(Some("root"))
            .read_timeout(Some(Duration::from_secs(10)))
            .write_timeout(Some(Duration::from_secs(10)));
        if mysql::Conn::new(opts).is_ok() {
            return Ok(());
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

/// Creates the sandbox accounts over the root socket, unlogged so no channel ever replays them.
fn bootstrap_accounts(node: &SandboxNode, secrets: &Secrets) -> Result<()> {
    let opts = mysql::OptsBuilder::new()
        .socket(Some(node.socket().display().to_string()))
        .user(Some("root"))
        .read_timeout(Some(Duration::from_secs(30)))
        .write_timeout(Some(Duration::from_secs(30)));
    let mut conn = mysql::Conn::new(opts)
        .map_err(|e| Error::server(&node.name, crate::server::describe(&e)))?;
    let admin = crate::ident::string_literal(&secrets.admin);
    let repl = crate::ident::string_literal(&secrets.repl);
    let app = crate::ident::string_literal(&secrets.app);
    // CREATE USER takes no placeholders; the passwords come from a fixed safe alphabet and
    // are escaped all the same.
    let statements = [
        "SET SESSION sql_log_bin = 0".to_string(),
        format!("CREATE USER IF NOT EXISTS '{ADMIN_USER}'@'%' IDENTIFIED BY {admin}"),
        format!("CREATE USER IF NOT EXISTS '{ADMIN_USER}'@'localhost' IDENTIFIED BY {admin}"),
        format!("GRANT ALL ON *.* TO '{ADMIN_USER}'@'%' WITH GRANT OPTION"),
        format!("GRANT ALL ON *.* TO '{ADMIN_USER}'@'localhost' WITH GRANT OPTION"),
        format!("CREATE USER IF NOT EXISTS '{REPL_USER}'@'%' IDENTIFIED BY {repl}"),
        format!("GRANT REPLICATION SLAVE ON *.* TO '{REPL_USER}'@'%'"),
        format!("CREATE USER IF NOT EXISTS '{APP_USER}'@'%' IDENTIFIED BY {app}"),
        format!("GRANT SELECT, INSERT, UPDATE, DELETE ON *.* TO '{APP_USER}'@'%'"),
        "SET SESSION sql_log_bin = 1".to_string(),
    ];
    for sql in statements {
        conn.query_drop(&sql).map_err(|e| {
            Error::server(
                &node.name,
                format!(
                    "bootstrap: {}",
                    e.to_string()
                        .replace(&secrets.admin, "***")
                        .replace(&secrets.repl, "***")
                        .replace(&secrets.app, "***")
                ),
            )
        })?;
    }
    Ok(())
}
