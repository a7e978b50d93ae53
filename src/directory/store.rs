//! Reading and changing the directory on its node. Every change runs in one transaction
//! that also bumps the directory version and writes the change log's row for it, so
//! routers notice it and know what to re-read.

use super::model::*;
use super::schema::{
    CHANGE_LOG_KEPT, INCREMENTAL_MAX_SHARDS, LOGGED_KEYS_MAX, MIGRATIONS, SCHEMA_VERSION,
};
use crate::config::Inventory;
use crate::error::{Error, Result};
use crate::ident::Ident;
use crate::server::{server_error_code, ConnectSpec, Server, Stmt};
use mysql::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

/// MySQL's duplicate-key error number.
const ER_DUP_ENTRY: u16 = 1062;
/// "Duplicate column name", "Duplicate key name", "Table already exists": what a
/// migration statement run a second time meets.
const ER_ALREADY_THERE: [u16; 3] = [1060, 1061, 1050];
/// "Lock wait timeout exceeded".
const ER_LOCK_WAIT_TIMEOUT: u16 = 1205;
/// "Table doesn't exist" and "Unknown database".
const ER_NO_SUCH_TABLE: [u16; 2] = [1146, 1049];

/// A connection to the directory: to its node, or to one member of its Galera cluster
/// at a time, another taken when that one goes away.
#[derive(Debug)]
pub struct Directory {
    server: Server,
    schema: Ident,
    /// How to open a new connection when the current one breaks.
    spec: ConnectSpec,
    /// Whether [`Directory::retrying`] reconnects and tries again (a reader with a time
    /// budget of its own fails at once instead).
    retries: bool,
    /// The cluster's members, when the directory lives on one.
    cluster: Option<ClusterLink>,
    /// The name of the next transaction's COMMIT for its fault points, if it has one.
    commit_point: Option<&'static str>,
}

/// The directory transactions whose COMMIT has fault points, `committing:NAME` before it
/// is sent and `committed:NAME` once it answered (where `lose-reply` makes this process
/// act as if the answer never came): the flips (a move's, a split's, a merge's).
pub const COMMIT_POINTS: &[&str] = &["flip"];

/// What a directory connection is for, which decides the members it may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// shardctl's own: the journal, the flips, every read that decides. The cluster's
    /// members in the inventory's order (the preferred writer first), every statement
    /// waiting until its member has applied what the cluster committed before it, and a
    /// failed statement waiting up to the cluster's `wait_secs` for a usable member.
    Writer,
    /// An application's (the `Router`, `lookup`): the reader members, each process
    /// starting at another, no waiting beyond one pass over them.
    Reader,
}

/// The members of the directory's cluster as one connection sees them.
#[derive(Debug)]
struct ClusterLink {
    /// `wsrep_cluster_name`.
    name: String,
    /// The members' connection specs, in the order they are tried.
    members: Vec<ConnectSpec>,
    role: Role,
    /// How long a failed statement waits for a usable member.
    wait: Duration,
}

/// How long a command's first connection to a cluster waits for a usable member before
/// it refuses: a little more than the survivors of a member's death take to agree on
/// their new view (the sandbox's members suspect a silent one after 3 s and evict it
/// after 6 s).
pub const CONNECT_GRACE: Duration = Duration::from_secs(10);

/// Readers start at another member each (process and router), so their polls spread
/// over the members.
static NEXT_READER: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

impl ClusterLink {
    fn new(inv: &Inventory, role: Role, limit: Option<Duration>) -> Result<Option<ClusterLink>> {
        let Some(c) = inv.directory_cluster() else {
            return Ok(None);
        };
        let mut names: Vec<&String> = match role {
            Role::Writer => c.members.iter().collect(),
            Role::Reader => c.reader_members().iter().collect(),
        };
        if role == Role::Reader {
            let start = std::process::id() as usize
                + NEXT_READER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let n = names.len();
            names.rotate_left(start % n);
        }
        let app = match role {
            Role::Reader => inv.directory_application_credentials()?,
            Role::Writer => None,
        };
        let mut members = Vec::new();
        for name in names {
            let mut spec = ConnectSpec::for_node(inv, inv.node(name)?)?;
            if let Some(credentials) = &app {
                spec.credentials = credentials.clone();
            }
            if let Some(limit) = limit {
                spec.connect_timeout = spec.connect_timeout.min(limit);
                spec.read_timeout = spec.read_timeout.min(limit);
                spec.write_timeout = spec.write_timeout.min(limit);
            }
            members.push(spec);
        }
        Ok(Some(ClusterLink {
            name: c.name.clone(),
            members,
            role,
            wait: Duration::from_secs(c.wait_secs),
        }))
    }

    /// [`ClusterLink::connect_usable`] for a command's first connection: a writer tries
    /// again for up to [`CONNECT_GRACE`] while no member is usable, which covers the few
    /// seconds the survivors of a member's death take to settle their new view; past it
    /// (a partition, quorum lost) the command refuses. A reader makes one pass.
    fn connect_within_grace(&self, survey: bool) -> Result<(Server, ConnectSpec)> {
        let started = std::time::Instant::now();
        loop {
            match self.connect_usable(survey) {
                Err(e @ Error::DirectoryUnavailable { .. })
                    if self.role == Role::Writer && started.elapsed() < CONNECT_GRACE =>
                {
                    crate::output::log(1, &format!("{e}; trying again"));
                    crate::signal::check()?;
                    std::thread::sleep(Duration::from_millis(500));
                }
                other => return other,
            }
        }
    }

    /// A connection to the first member that may be used (wsrep on, this cluster, in the
    /// Primary component, Synced, ready), its session prepared for the role. With
    /// `survey`, every member is asked, so that one reporting another cluster (by name,
    /// or by state UUID while both are Primary) is refused even when the first would do.
    fn connect_usable(&self, survey: bool) -> Result<(Server, ConnectSpec)> {
        let mut found: Option<(Server, ConnectSpec)> = None;
        let mut why = Vec::new();
        let mut answered = false;
        let mut primaries: Vec<(String, String)> = Vec::new();
        for spec in &self.members {
            if found.is_some() && !survey {
                break;
            }
            let mut server = match Server::connect(spec) {
                Ok(s) => s,
                Err(e) => {
                    why.push(format!("{}: unreachable ({})", spec.name, unprefixed(&e)));
                    continue;
                }
            };
            let state = match server.galera_state() {
                Ok(s) => s,
                Err(e) => {
                    why.push(format!("{}: {}", spec.name, unprefixed(&e)));
                    continue;
                }
            };
            answered = true;
            if state.wsrep_on && state.cluster_name != self.name {
                return Err(crate::server::galera::wrong_cluster(
                    &spec.name,
                    &self.name,
                    &state.cluster_name,
                ));
            }
            if state.wsrep_on && state.status == crate::server::galera::ClusterStatus::Primary {
                if let Some((other, uuid)) =
                    primaries.iter().find(|(_, u)| *u != state.cluster_uuid)
                {
                    return Err(Error::Config(format!(
                        "directory.cluster: members {other} and {} are in two different clusters named {:?} (state UUIDs {uuid} and {}): list the members of one cluster",
                        spec.name, self.name, state.cluster_uuid
                    )));
                }
                primaries.push((spec.name.clone(), state.cluster_uuid.clone()));
            }
            match state.unusable() {
                Some(reason) => why.push(format!("{}: {reason}", spec.name)),
                None if found.is_none() => {
                    server.set_purpose(crate::server::Purpose::Directory);
                    let prepared = match self.role {
                        Role::Writer => server.exec(&crate::server::galera::sync_session()),
                        Role::Reader => Ok(()),
                    };
                    match prepared {
                        // The member went away between its answer and this statement.
                        Err(e) => why.push(format!("{}: {}", spec.name, unprefixed(&e))),
                        Ok(()) => found = Some((server, spec.clone())),
                    }
                }
                None => {}
            }
        }
        found.ok_or_else(|| Error::DirectoryUnavailable {
            cluster: self.name.clone(),
            answered,
            message: format!(
                "no member is in the Primary component and Synced ({})",
                why.join("; ")
            ),
        })
    }
}

/// An error's message without the `node X: ` its variant puts before it.
fn unprefixed(e: &Error) -> String {
    match e {
        Error::Server { message, .. } => message.clone(),
        other => other.to_string(),
    }
}

/// True for a failure after which a directory statement may be tried again through this
/// or another member: the connection broke (`broken`), the member left the Primary
/// component or is going away, certification failed, no member was usable.
fn transient_on_cluster(e: &Error, broken: bool) -> bool {
    if broken || matches!(e, Error::DirectoryUnavailable { .. }) {
        return true;
    }
    // A lock wait that timed out: on a cluster, a row held by a transaction that was
    // committing when quorum went (it ends, committed or not, once quorum is back; its
    // outcome is read back, never assumed).
    e.server_code().is_some_and(|c| {
        c == crate::server::galera::ER_DEADLOCK
            || c == ER_LOCK_WAIT_TIMEOUT
            || crate::server::galera::member_failed(c)
    })
}

/// How a new shard enters its function's mapping.
#[derive(Debug, Clone, PartialEq)]
pub enum NewMapping {
    /// A range starting at this lower bound.
    LowerBound(Key),
    /// A ring point.
    Point(RingPoint),
    /// List values.
    Values(Vec<Key>),
    /// A per-key function's shard: no mapping row (keys are assigned to it later).
    Keys,
}

/// How a table is placed.
#[derive(Debug, Clone, PartialEq)]
pub enum TablePlacement {
    /// Sharded by a function on a column.
    Sharded {
        /// Function name.
        function: String,
        /// Sharding column.
        column: Ident,
    },
    /// Copied whole into every shard.
    Global,
}

/// What a router at some version re-reads to be current ([`Directory::changes_since`]).
#[derive(Debug, Clone, PartialEq)]
pub enum Delta {
    /// Nothing: the directory is at that version.
    Unchanged,
    /// The whole directory, and why the change log could not say less.
    Full(Snapshot, FullReason),
    /// Only these shards changed: their locations and mapping rows as they are now (a
    /// shard of the set absent from the snapshot was removed), with the version read.
    Shards(BTreeSet<u32>, Snapshot),
}

/// Why a router reloads the whole directory rather than the shards that changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FullReason {
    /// The router asked for it ([`super::Router::reload`]), or had nothing yet.
    Asked,
    /// The change log no longer reaches back to the router's version (pruned, or the
    /// directory was migrated to the log since).
    LogTooShort,
    /// A change touched more than shards (nodes, functions, table mappings).
    Everything,
    /// More shards changed than an incremental reload re-reads.
    ManyShards,
    /// The directory's version is below the router's (restored from a backup).
    Behind,
}

/// A [`Delta`] and the rows read to learn it (the version, the log, the content).
#[derive(Debug, Clone, PartialEq)]
pub struct Reread {
    /// What changed.
    pub delta: Delta,
    /// The keys of per-key functions the log says changed since (with [`Delta::Shards`];
    /// a full reload drops every cached key anyway).
    pub keys: KeyChanges,
    /// Rows read from the directory.
    pub rows: u64,
}

/// A row of the change log: version, scope, shards, function and keys (per-key).
type LogRow = (u64, String, String, Option<u32>, Option<String>);

/// Keys of per-key functions that changed shard, by function: the keys' texts, or None
/// for every key of the function.
pub type KeyChanges = std::collections::BTreeMap<u32, Option<BTreeSet<String>>>;

/// What [`Directory::import_keys`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Imported {
    /// Rows read from the input.
    pub read: u64,
    /// Keys mapped by this import.
    pub added: u64,
    /// Keys the directory mapped to the same shard already (skipped).
    pub present: u64,
}

/// What [`Directory::assign_key`] did.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Assigned {
    /// The shard that holds the key.
    pub shard_id: u32,
    /// True when this call mapped the key; false when it was mapped already.
    pub assigned: bool,
}

/// Schemas that belong to the server: never a directory.
const SYSTEM_SCHEMAS: [&str; 4] = ["mysql", "information_schema", "performance_schema", "sys"];

fn key_value(key: &Key) -> Value {
    match key {
        Key::Int(i) => Value::from(*i),
        Key::Str(s) => Value::from(s.as_bytes()),
    }
}

fn no_directory(inv: &Inventory) -> Error {
    Error::Usage(format!(
        "no sharding directory in schema {} on {}: run `shardctl init` first",
        inv.file.directory.schema,
        inv.directory_place()
    ))
}

impl Directory {
    /// Connects to the directory (its node, or a usable member of its cluster, every
    /// member asked once so that a member of another cluster is refused), without
    /// checking the schema.
    pub fn connect(inv: &Inventory) -> Result<Directory> {
        Self::connect_as(inv, Role::Writer, None)
    }

    /// [`Directory::open`] with the account the inventory names for applications
    /// (`directory.application`: reads and the sequences' next values only), or the admin
    /// account when it names none. The router's connection; shardctl's own are
    /// [`Directory::open`]'s.
    pub fn open_for_application(inv: &Inventory) -> Result<Directory> {
        Self::checked(Self::connect_as(inv, Role::Reader, None)?)?.ok_or_else(|| no_directory(inv))
    }

    /// [`Directory::open_for_application`] for a reader on a time budget (monitoring):
    /// every timeout of the connection at most `limit`, and a failed read fails at once
    /// instead of reconnecting and trying again.
    pub fn open_for_application_within(inv: &Inventory, limit: Duration) -> Result<Directory> {
        let mut d = Self::connect_as(inv, Role::Reader, Some(limit))?;
        d.retries = false;
        Self::checked(d)?.ok_or_else(|| no_directory(inv))
    }

    /// A connection for `role`, every timeout at most `limit` when one is given.
    fn connect_as(inv: &Inventory, role: Role, limit: Option<Duration>) -> Result<Directory> {
        let schema = Ident::new("directory schema", &inv.file.directory.schema)?;
        if let Some(link) = ClusterLink::new(inv, role, limit)? {
            let (server, spec) = link.connect_within_grace(role == Role::Writer)?;
            return Ok(Directory {
                server,
                schema,
                spec,
                retries: true,
                cluster: Some(link),
                commit_point: None,
            });
        }
        let mut spec = ConnectSpec::for_node(inv, inv.node(inv.directory_home())?)?;
        if role == Role::Reader {
            if let Some(credentials) = inv.directory_application_credentials()? {
                spec.credentials = credentials;
            }
        }
        if let Some(limit) = limit {
            spec.connect_timeout = spec.connect_timeout.min(limit);
            spec.read_timeout = spec.read_timeout.min(limit);
            spec.write_timeout = spec.write_timeout.min(limit);
        }
        let mut server = Server::connect(&spec)?;
        server.set_purpose(crate::server::Purpose::Directory);
        Ok(Directory {
            server,
            schema,
            spec,
            retries: true,
            cluster: None,
            commit_point: None,
        })
    }

    /// Opens a new connection in place of the current one: to the same node, or to the
    /// first usable member of the cluster.
    pub fn reconnect(&mut self) -> Result<()> {
        match &self.cluster {
            Some(link) => {
                let (server, spec) = link.connect_usable(false)?;
                if spec.name != self.spec.name {
                    crate::output::log(
                        1,
                        &format!(
                            "directory: now through member {} (was {})",
                            spec.name, self.spec.name
                        ),
                    );
                }
                self.server = server;
                self.spec = spec;
            }
            None => {
                self.server = Server::connect(&self.spec)?;
                self.server.set_purpose(crate::server::Purpose::Directory);
            }
        }
        Ok(())
    }

    /// The node this connection reaches: the directory's node, or the cluster member in
    /// use.
    pub fn member(&self) -> &str {
        self.server.name()
    }

    /// Where the directory is, for messages: `node1`, or `cluster dirc (through dir1)`.
    pub fn place(&self) -> String {
        match &self.cluster {
            Some(link) => format!("cluster {} (through {})", link.name, self.server.name()),
            None => self.server.name().to_string(),
        }
    }

    /// The cluster's name when the directory lives on one.
    pub fn cluster_name(&self) -> Option<&str> {
        self.cluster.as_ref().map(|c| c.name.as_str())
    }

    /// Runs `f`; when it fails because the connection broke (not because the server refused
    /// the statement), reconnects and runs it again, a few times over about ten seconds.
    /// On a cluster, also when the member left the Primary component or went away (the
    /// next usable member is taken) or certification failed, for up to the cluster's
    /// `wait_secs` (a reader: one more pass over its members). Only for work that is safe
    /// to repeat.
    pub fn retrying<T>(&mut self, mut f: impl FnMut(&mut Self) -> Result<T>) -> Result<T> {
        if self.cluster.is_some() {
            return self.retrying_on_cluster(f);
        }
        const PAUSES_MS: [u64; 4] = [250, 1000, 2500, 5000];
        if !self.retries {
            return f(self);
        }
        let mut attempt = 0;
        loop {
            if self.server.is_broken() {
                if let Err(e) = self.reconnect() {
                    if attempt >= PAUSES_MS.len() {
                        return Err(e);
                    }
                    std::thread::sleep(Duration::from_millis(PAUSES_MS[attempt]));
                    attempt += 1;
                    continue;
                }
            }
            match f(self) {
                Err(e) if self.server.is_broken() && attempt < PAUSES_MS.len() => {
                    crate::output::log(
                        1,
                        &format!("directory connection lost ({e}); reconnecting"),
                    );
                    std::thread::sleep(Duration::from_millis(PAUSES_MS[attempt]));
                    attempt += 1;
                }
                other => return other,
            }
        }
    }

    fn retrying_on_cluster<T>(&mut self, mut f: impl FnMut(&mut Self) -> Result<T>) -> Result<T> {
        let (wait, role) = match &self.cluster {
            Some(link) => (link.wait, link.role),
            None => return f(self),
        };
        if !self.retries {
            return f(self);
        }
        let wait = if role == Role::Writer {
            wait
        } else {
            Duration::ZERO
        };
        let started = std::time::Instant::now();
        let mut attempt: u32 = 0;
        let mut told = false;
        loop {
            // A reader gets one more pass over its members; a writer waits its budget.
            let may_retry = |attempt: u32| attempt == 0 || started.elapsed() < wait;
            if self.server.is_broken() {
                match self.reconnect() {
                    Ok(()) => {}
                    Err(e) if transient_on_cluster(&e, false) && may_retry(attempt) => {
                        if !told && role == Role::Writer {
                            crate::output::log(
                                0,
                                &format!(
                                    "{e}; waiting up to {}s for a usable member",
                                    wait.as_secs()
                                ),
                            );
                            told = true;
                        }
                        attempt += 1;
                        crate::signal::check()?;
                        std::thread::sleep(Duration::from_millis(500));
                        continue;
                    }
                    Err(e) => return Err(e),
                }
            }
            match f(self) {
                Err(e)
                    if transient_on_cluster(&e, self.server.is_broken()) && may_retry(attempt) =>
                {
                    if e.server_code()
                        .is_some_and(crate::server::galera::member_failed)
                    {
                        self.server.mark_broken();
                    }
                    crate::output::log(
                        1,
                        &format!(
                            "directory through {}: {e}; trying again",
                            self.server.name()
                        ),
                    );
                    attempt += 1;
                    crate::signal::check()?;
                    std::thread::sleep(Duration::from_millis(
                        (50 * u64::from(attempt.min(10))).max(50),
                    ));
                }
                other => return other,
            }
        }
    }

    /// On a cluster, fails (and marks the connection so that the next try takes another
    /// member) unless the member in use is still in the Primary component and Synced:
    /// checked in every write transaction before its COMMIT, so that nothing is written
    /// through a member that became a donor or lost quorum after it was chosen.
    fn check_member(&mut self) -> Result<()> {
        let Some(cluster) = self.cluster.as_ref().map(|c| c.name.clone()) else {
            return Ok(());
        };
        let state = self.server.galera_state()?;
        if let Some(why) = state.unusable() {
            self.server.mark_broken();
            return Err(Error::DirectoryUnavailable {
                cluster,
                answered: true,
                message: format!("member {} is {why}", self.server.name()),
            });
        }
        Ok(())
    }

    /// Connects and checks that the directory exists and is not newer than this binary.
    pub fn open(inv: &Inventory) -> Result<Directory> {
        Self::open_existing(inv)?.ok_or_else(|| no_directory(inv))
    }

    /// Like [`Directory::open`], but None when no directory has been created yet.
    pub fn open_existing(inv: &Inventory) -> Result<Option<Directory>> {
        Self::checked(Self::connect(inv)?)
    }

    /// `d` when its schema version is this binary's; None when there is no directory.
    fn checked(mut d: Directory) -> Result<Option<Directory>> {
        match d.retrying(|d| d.schema_version())? {
            None => Ok(None),
            Some(v) if v > SCHEMA_VERSION => Err(d.too_new(v)),
            Some(v) if v < SCHEMA_VERSION => Err(Error::Usage(format!(
                "the directory has schema version {v}, this shardctl uses {SCHEMA_VERSION}: run `shardctl init` to migrate it"
            ))),
            Some(_) => Ok(Some(d)),
        }
    }

    fn too_new(&self, v: u32) -> Error {
        Error::Refused(format!(
            "the directory in {} has schema version {v}, newer than this shardctl understands ({SCHEMA_VERSION}); upgrade shardctl",
            self.schema
        ))
    }

    /// The directory node's connection.
    pub fn server(&mut self) -> &mut Server {
        &mut self.server
    }

    /// The directory schema.
    pub fn schema(&self) -> &Ident {
        &self.schema
    }

    fn t(&self, table: &str) -> String {
        self_t(&self.schema, table)
    }

    /// The stored schema version, or None when the directory does not exist.
    pub fn schema_version(&mut self) -> Result<Option<u32>> {
        let st = Stmt::text(format!(
            "SELECT version FROM {} WHERE id = 1",
            self.t("schema_version")
        ));
        match self.server.try_rows(&st) {
            Ok(rows) => Ok(rows
                .into_iter()
                .next()
                .and_then(|r| mysql::from_row_opt(r).ok())),
            Err(e) if server_error_code(&e).is_some_and(|c| ER_NO_SUCH_TABLE.contains(&c)) => {
                Ok(None)
            }
            Err(e) => Err(self.server.error(&e)),
        }
    }

    /// Creates or migrates the directory. Idempotent. Returns (version before, version after).
    pub fn init(&mut self) -> Result<(u32, u32)> {
        let name = self.schema.as_str().to_ascii_lowercase();
        if SYSTEM_SCHEMAS.contains(&name.as_str()) {
            return Err(Error::Usage(format!(
                "directory.schema {} is a system schema: choose a schema of its own (e.g. shardctl)",
                self.schema
            )));
        }
        let version = self.schema_version()?;
        let schema = self.schema.clone();
        if version.is_none()
            && self.server.schema_exists(&schema)?
            && !self.server.tables(&schema)?.is_empty()
        {
            return Err(Error::Refused(format!(
                "schema {schema} on {} already holds tables and is not a shardctl directory: choose another directory.schema",
                self.server.name()
            )));
        }
        let before = version.unwrap_or(0);
        if before > SCHEMA_VERSION {
            return Err(self.too_new(before));
        }
        self.server.create_schema(&self.schema.clone())?;
        self.server.exec(&Stmt::text(format!(
            "CREATE TABLE IF NOT EXISTS {} (id TINYINT UNSIGNED PRIMARY KEY, version INT UNSIGNED NOT NULL) ENGINE=InnoDB",
            self.t("schema_version")
        )))?;
        self.server.exec(&Stmt::text(format!(
            "INSERT IGNORE INTO {} (id, version) VALUES (1, 0)",
            self.t("schema_version")
        )))?;
        let d = self.schema.quoted();
        for (i, migration) in MIGRATIONS.iter().enumerate() {
            let version = i as u32 + 1;
            if version <= before {
                continue;
            }
            for sql in *migration {
                // A migration run again (its first run stopped after some statements, or
                // its reply was lost) finds what it added there already.
                match self.server.try_rows(&Stmt::text(sql.replace("{d}", &d))) {
                    Ok(_) => {}
                    Err(e)
                        if server_error_code(&e).is_some_and(|c| ER_ALREADY_THERE.contains(&c)) =>
                    {
                        crate::output::log(
                            1,
                            &format!("init: {}; kept", crate::server::describe(&e)),
                        );
                    }
                    Err(e) => return Err(self.server.error(&e)),
                }
            }
            self.server.exec(&Stmt::with(
                format!(
                    "UPDATE {} SET version = ? WHERE id = 1",
                    self.t("schema_version")
                ),
                vec![Value::from(version)],
            ))?;
        }
        Ok((before, SCHEMA_VERSION))
    }

    /// The scope of the names new operations of this directory give their channels and
    /// trash schemas: its id (see [`super::names`]).
    pub fn name_scope(&mut self) -> Result<super::names::NameScope> {
        let st = Stmt::text(format!(
            "SELECT directory_id FROM {} WHERE id = 1",
            self.t("directory_version")
        ));
        Ok(match self.server.first::<Option<u32>>(&st)?.flatten() {
            Some(id) => super::names::NameScope::of_directory(id),
            None => super::names::NameScope::LEGACY,
        })
    }

    /// The current directory version (bumped by every change).
    pub fn version(&mut self) -> Result<u64> {
        let st = Stmt::text(format!(
            "SELECT version FROM {} WHERE id = 1",
            self.t("directory_version")
        ));
        Ok(self.server.first::<u64>(&st)?.unwrap_or(0))
    }

    /// [`Directory::version`] as the cluster last committed it: on a cluster the read
    /// first waits until its member has applied everything committed before it (the one
    /// read a router makes after a refresh error, which must see the latest flip); on one
    /// server the same read.
    pub fn version_synced(&mut self) -> Result<u64> {
        if self.cluster.is_none() {
            return self.version();
        }
        let st = Stmt::text(crate::server::galera::synced_read(&format!(
            "SELECT version FROM {} WHERE id = 1",
            self.t("directory_version")
        )));
        Ok(self.server.first::<u64>(&st)?.unwrap_or(0))
    }

    /// Runs `f` in a transaction that bumps the directory version; `f` receives the new
    /// version and returns its value with what it [`Changed`] of the tables routers read,
    /// which the change log records in the same transaction (so no version exists without
    /// its log row). Rolls back on error; a COMMIT whose outcome did not come back is settled
    /// as [`Directory::transaction`] says.
    ///
    /// On a cluster the whole transaction is run again through another member when its
    /// member went away, left the Primary component or certification failed (`f` reads
    /// what it decides on inside the transaction, and a COMMIT that did happen is never
    /// run twice); on one server, once, as before.
    pub fn change<T>(
        &mut self,
        mut f: impl FnMut(&mut Self, u64) -> Result<(T, Changed)>,
    ) -> Result<T> {
        if self.cluster.is_some() {
            let point = self.commit_point.take();
            return self.retrying(|d| {
                d.commit_point = point;
                d.change_once(&mut f)
            });
        }
        self.change_once(f)
    }

    fn change_once<T>(
        &mut self,
        mut f: impl FnMut(&mut Self, u64) -> Result<(T, Changed)>,
    ) -> Result<T> {
        self.transaction(|d| {
            d.server.exec(&Stmt::text(format!(
                "UPDATE {} SET version = LAST_INSERT_ID(version + 1) WHERE id = 1",
                d.t("directory_version")
            )))?;
            let v = d
                .server
                .first::<u64>(&Stmt::text("SELECT LAST_INSERT_ID()"))?
                .unwrap_or(0);
            let (out, changed) = f(d, v)?;
            d.log_change(v, &changed)?;
            Ok(out)
        })
    }

    /// Runs `f` in one transaction and commits it, never assuming how a COMMIT ended when
    /// its reply did not come (the connection broke, the member left the cluster,
    /// certification failed): every transaction writes a random token into
    /// `commit_tokens`, and after a failed COMMIT the token is looked for through a
    /// connection that works (another member, waiting as [`Directory::retrying`] does).
    /// Found, the transaction committed and `f`'s result is returned; not found, it did
    /// not, and the COMMIT's error is returned (a caller in [`Directory::retrying`] runs
    /// it again); unreadable, the outcome is unknown and said so, and nothing retries it.
    /// On a cluster, the member is checked to be in the Primary component and Synced
    /// before the COMMIT.
    pub fn transaction<T>(&mut self, f: impl FnOnce(&mut Self) -> Result<T>) -> Result<T> {
        let token = commit_token()?;
        self.server.exec(&Stmt::text("START TRANSACTION"))?;
        let result = f(self).and_then(|v| {
            self.server.exec(&Stmt::with(
                format!("INSERT INTO {} (token) VALUES (?)", self.t("commit_tokens")),
                vec![Value::from(token)],
            ))?;
            self.check_member()?;
            Ok(v)
        });
        let v = match result {
            Ok(v) => v,
            Err(e) => {
                let _ = self.server.exec(&Stmt::text("ROLLBACK"));
                return Err(e);
            }
        };
        let point = self.commit_point.take();
        if let Some(p) = point {
            crate::fault::point(&format!("committing:{p}"));
        }
        let mut commit = self.server.exec(&Stmt::text("COMMIT"));
        if let Some(p) = point {
            let at = format!("committed:{p}");
            crate::fault::point(&at);
            if commit.is_ok() && crate::fault::loses_reply(&at) {
                // The test's stand-in for a reply lost on the wire: the server committed,
                // this process acts as if it never heard so.
                self.server.mark_broken();
                commit = Err(Error::server(
                    self.server.name(),
                    format!("the reply to the COMMIT was lost (fault point {at})"),
                ));
            }
        }
        let Err(e) = commit else {
            return Ok(v);
        };
        let broken = self.server.is_broken();
        if !broken
            && e.server_code()
                .is_some_and(|c| c == crate::server::galera::ER_DEADLOCK)
            && self.cluster.is_none()
        {
            // A single server's deadlock at COMMIT rolled the transaction back whole.
            return Err(e);
        }
        if !broken && self.cluster.is_some() {
            // The member answered with an error: whatever it was, it is read back
            // through a connection of its own from here on.
            self.server.mark_broken();
        }
        match self.retrying(|d| d.token_committed(token)) {
            Ok(true) => {
                crate::output::log(
                    0,
                    &format!(
                        "directory: a transaction committed although its COMMIT reported {e}"
                    ),
                );
                Ok(v)
            }
            Ok(false) => {
                // It did not happen: the caller may run it again.
                self.server.mark_broken();
                Err(e)
            }
            Err(read) => Err(Error::server(
                self.place(),
                format!(
                    "the outcome of a directory transaction is unknown: its COMMIT reported {e} and reading it back failed ({read}); run the command again once the directory answers (`shardctl resume` settles an operation's)"
                ),
            )),
        }
    }

    /// Whether the transaction that wrote `token` committed (read on a connection that
    /// sees everything the cluster committed before the read).
    fn token_committed(&mut self, token: u64) -> Result<bool> {
        let sql = format!(
            "SELECT COUNT(*) FROM {} WHERE token = ?",
            self.t("commit_tokens")
        );
        let sql = if self.cluster.is_some() {
            crate::server::galera::synced_read(&sql)
        } else {
            sql
        };
        Ok(self
            .server
            .first::<u64>(&Stmt::with(sql, vec![Value::from(token)]))?
            .unwrap_or(0)
            > 0)
    }

    /// Names the next transaction's COMMIT for the fault points `committing:NAME` and
    /// `committed:NAME` ([`COMMIT_POINTS`]).
    pub fn name_next_commit(&mut self, name: &'static str) {
        self.commit_point = Some(name);
    }

    /// Forgets the commit tokens older than a day: a token is only ever looked for
    /// seconds after its COMMIT.
    pub fn forget_old_commit_tokens(&mut self) -> Result<()> {
        self.server.exec(&Stmt::text(format!(
            "DELETE FROM {} WHERE committed_at < CURRENT_TIMESTAMP(3) - INTERVAL 1 DAY",
            self.t("commit_tokens")
        )))
    }

    /// Inside a change's transaction: its row of the change log, and the rows that fell
    /// out of the kept window. REPLACE: a directory restored from an older backup reuses
    /// versions, and the row of the version it writes now is the true one.
    fn log_change(&mut self, version: u64, changed: &Changed) -> Result<()> {
        let (scope, shards, func, keys) = match changed {
            Changed::Nothing => ("none", String::new(), None, None),
            Changed::Everything => ("all", String::new(), None, None),
            Changed::Shards(ids) => {
                let ids: BTreeSet<u32> = ids.iter().copied().collect();
                let text: Vec<String> = ids.iter().map(u32::to_string).collect();
                ("shards", text.join(","), None, None)
            }
            Changed::Keys { func_id, keys } => {
                let list = keys
                    .as_ref()
                    .filter(|k| k.len() <= LOGGED_KEYS_MAX)
                    .map(|k| {
                        let k: BTreeSet<&String> = k.iter().collect();
                        serde_json::to_string(&k).unwrap_or_default()
                    });
                ("keys", String::new(), Some(*func_id), list)
            }
        };
        let log = self.t("directory_changes");
        self.server.exec(&Stmt::with(
            format!("REPLACE INTO {log} (version, scope, shards, func_id, key_list) VALUES (?, ?, ?, ?, ?)"),
            vec![version.into(), scope.into(), shards.into(), func.into(), keys.into()],
        ))?;
        if version > CHANGE_LOG_KEPT {
            self.server.exec(&Stmt::with(
                format!("DELETE FROM {log} WHERE version <= ?"),
                vec![(version - CHANGE_LOG_KEPT).into()],
            ))?;
        }
        Ok(())
    }

    /// Loads the whole directory in a consistent read.
    pub fn load(&mut self) -> Result<Snapshot> {
        self.load_counted().map(|(snap, _)| snap)
    }

    /// [`Directory::load`], with the number of rows read.
    pub fn load_counted(&mut self) -> Result<(Snapshot, u64)> {
        self.in_snapshot(|d| d.load_inner().map(|(snap, rows)| (snap, rows + 1)))
    }

    /// Runs `f` in a consistent, read-only transaction.
    fn in_snapshot<T>(&mut self, f: impl FnOnce(&mut Self) -> Result<T>) -> Result<T> {
        self.server.exec(&Stmt::text(
            "START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY",
        ))?;
        let r = f(self);
        let _ = self.server.exec(&Stmt::text("COMMIT"));
        r
    }

    /// What a router at `version` re-reads to be current, in one consistent read: nothing
    /// when the version is the same; the locations and mapping rows of the shards the
    /// change log names since then; everything when the log does not reach back to
    /// `version` (it keeps [`CHANGE_LOG_KEPT`] versions; a directory migrated to the log,
    /// or restored), when a change touched more than shards, or when more than
    /// [`INCREMENTAL_MAX_SHARDS`] shards changed.
    pub fn changes_since(&mut self, version: u64) -> Result<Reread> {
        self.in_snapshot(|d| d.changes_since_inner(version))
    }

    fn changes_since_inner(&mut self, since: u64) -> Result<Reread> {
        let now = self.version()?;
        if now == since {
            return Ok(Reread {
                delta: Delta::Unchanged,
                keys: KeyChanges::new(),
                rows: 1,
            });
        }
        let full = |d: &mut Self, why: FullReason, log_rows: u64| {
            d.load_inner().map(|(snap, rows)| Reread {
                delta: Delta::Full(snap, why),
                keys: KeyChanges::new(),
                rows: 1 + log_rows + rows + 1,
            })
        };
        if now < since {
            return full(self, FullReason::Behind, 0);
        }
        let log: Vec<LogRow> = self.server.rows(&Stmt::with(
            format!(
                "SELECT version, scope, shards, func_id, key_list FROM {} WHERE version > ? AND version <= ? ORDER BY version",
                self.t("directory_changes")
            ),
            vec![since.into(), now.into()],
        ))?
        .into_iter()
        .map(mysql::from_row_opt)
        .collect::<std::result::Result<_, _>>()
        .map_err(|e| Error::server(self.server.name(), format!("unexpected change log row: {e}")))?;
        let log_rows = log.len() as u64;
        if log_rows != now - since {
            return full(self, FullReason::LogTooShort, log_rows);
        }
        let mut shards = BTreeSet::new();
        let mut keys = KeyChanges::new();
        for (version, scope, ids, func, list) in &log {
            match scope.as_str() {
                "none" => {}
                "keys" => {
                    let bad = || {
                        Error::server(
                            self.server.name(),
                            format!("change log row {version} names keys it does not list"),
                        )
                    };
                    let func = func.ok_or_else(bad)?;
                    let named: Option<BTreeSet<String>> = match list {
                        None => None,
                        Some(text) => Some(serde_json::from_str(text).map_err(|_| bad())?),
                    };
                    match (keys.get_mut(&func), named) {
                        (Some(Some(held)), Some(named)) => held.extend(named),
                        (Some(held @ Some(_)), None) => *held = None,
                        (Some(None), _) => {}
                        (None, named) => {
                            keys.insert(func, named);
                        }
                    }
                }
                "shards" => {
                    for id in ids.split(',').filter(|t| !t.is_empty()) {
                        shards.insert(id.parse::<u32>().map_err(|_| {
                            Error::server(
                                self.server.name(),
                                format!("change log row {version} names shard {id:?}"),
                            )
                        })?);
                    }
                }
                _ => return full(self, FullReason::Everything, log_rows),
            }
        }
        if shards.len() > INCREMENTAL_MAX_SHARDS {
            return full(self, FullReason::ManyShards, log_rows);
        }
        let mut part = Snapshot {
            version: now,
            ..Snapshot::default()
        };
        let rows = if shards.is_empty() {
            0
        } else {
            let ids: Vec<u32> = shards.iter().copied().collect();
            self.read_shards(&mut part, Some(&ids))?
        };
        Ok(Reread {
            delta: Delta::Shards(shards, part),
            keys,
            rows: 1 + log_rows + rows,
        })
    }

    /// The whole directory, with the number of rows read besides the version's.
    fn load_inner(&mut self) -> Result<(Snapshot, u64)> {
        let mut snap = Snapshot {
            version: self.version()?,
            ..Snapshot::default()
        };
        let mut read = 0u64;
        let q = |sql: String| Stmt::text(sql);
        let name = self.server.name().to_string();
        let bad =
            |e: mysql::FromRowError| Error::server(&name, format!("unexpected directory row: {e}"));
        for r in self.server.rows(&q(format!(
            "SELECT name, host, port FROM {} ORDER BY name",
            self_t(&self.schema, "nodes")
        )))? {
            let (name, host, port): (String, String, u16) = mysql::from_row_opt(r).map_err(bad)?;
            snap.nodes.push(DirNode { name, host, port });
            read += 1;
        }
        for r in self.server.rows(&q(format!(
            "SELECT func_id, name, sharding_type, key_type FROM {} ORDER BY func_id",
            self_t(&self.schema, "partition_functions")
        )))? {
            let (id, name, t, k): (u32, String, String, String) =
                mysql::from_row_opt(r).map_err(bad)?;
            snap.functions.push(Function {
                id,
                name,
                sharding_type: ShardingType::from_sql(&t)?,
                key_type: KeyType::from_sql(&k)?,
            });
            read += 1;
        }
        for r in self.server.rows(&q(format!(
            "SELECT schema_name, table_name, column_name, func_id FROM {} ORDER BY schema_name, table_name",
            self_t(&self.schema, "columns")
        )))? {
            let (schema, table, column, func_id): (String, String, String, u32) =
                mysql::from_row_opt(r).map_err(bad)?;
            snap.tables.push(ShardedTable { schema, table, column, func_id });
            read += 1;
        }
        for r in self.server.rows(&q(format!(
            "SELECT schema_name, table_name FROM {} ORDER BY schema_name, table_name",
            self_t(&self.schema, "global_tables")
        )))? {
            let (schema, table): (String, String) = mysql::from_row_opt(r).map_err(bad)?;
            snap.globals.push(GlobalTable { schema, table });
            read += 1;
        }
        read += self.read_shards(&mut snap, None)?;
        Ok((snap, read))
    }

    /// Reads into `snap` the locations and mapping rows of the shards `only` names (all
    /// of them for None), returning the number of rows read, and puts `snap` in canonical
    /// order. The ids are bound, never spliced.
    fn read_shards(&mut self, snap: &mut Snapshot, only: Option<&[u32]>) -> Result<u64> {
        let name = self.server.name().to_string();
        let bad =
            |e: mysql::FromRowError| Error::server(&name, format!("unexpected directory row: {e}"));
        let (filter, ids): (String, Vec<Value>) = match only {
            None => (String::new(), Vec::new()),
            Some(ids) => (
                format!(" WHERE shard_id IN ({})", vec!["?"; ids.len()].join(", ")),
                ids.iter().map(|&i| Value::from(i)).collect(),
            ),
        };
        let q = |sql: String| Stmt::with(sql, ids.clone());
        let mut read = 0u64;
        for r in self.server.rows(&q(format!(
            "SELECT shard_id, func_id, node, host, port, state, availability, version FROM {}{filter}",
            self_t(&self.schema, "locations")
        )))? {
            let (id, func_id, node, host, port, state, availability, version): (
                u32,
                u32,
                String,
                String,
                u16,
                String,
                String,
                u64,
            ) = mysql::from_row_opt(r).map_err(bad)?;
            snap.shards.push(Shard {
                id,
                func_id,
                node,
                host,
                port,
                state: ShardState::from_sql(&state)?,
                availability: Availability::from_sql(&availability)?,
                version,
            });
            read += 1;
        }
        for r in self.server.rows(&q(format!(
            "SELECT func_id, lower_bound, lower_bound_str, shard_id FROM {}{filter}",
            self_t(&self.schema, "ranges")
        )))? {
            read += 1;
            let (func_id, int, text, shard_id): (u32, Option<i64>, Option<Vec<u8>>, u32) =
                mysql::from_row_opt(r).map_err(bad)?;
            let lower_bound = match (int, text) {
                (Some(i), _) => Key::Int(i),
                (None, Some(t)) => Key::Str(String::from_utf8_lossy(&t).into_owned()),
                (None, None) => continue,
            };
            snap.ranges.push(RangeRow {
                func_id,
                lower_bound,
                shard_id,
            });
        }
        for r in self.server.rows(&q(format!(
            "SELECT func_id, hash, shard_id FROM {}{filter}",
            self_t(&self.schema, "hashes")
        )))? {
            let (func_id, hash, shard_id): (u32, String, u32) =
                mysql::from_row_opt(r).map_err(bad)?;
            snap.points.push(HashRow {
                func_id,
                point: RingPoint::from_hex(&hash)?,
                shard_id,
            });
            read += 1;
        }
        let list_filter = filter.replace("shard_id", "l.shard_id");
        for r in self.server.rows(&q(format!(
            "SELECT l.func_id, l.value, l.shard_id, f.key_type FROM {} l JOIN {} f USING (func_id){list_filter}",
            self_t(&self.schema, "lists"),
            self_t(&self.schema, "partition_functions")
        )))? {
            let (func_id, value, shard_id, key_type): (u32, Vec<u8>, u32, String) =
                mysql::from_row_opt(r).map_err(bad)?;
            let value = KeyType::from_sql(&key_type)?.parse(&String::from_utf8_lossy(&value))?;
            snap.lists.push(ListRow {
                func_id,
                value,
                shard_id,
            });
            read += 1;
        }
        snap.canonicalize();
        Ok(read)
    }

    /// Registers a node (the address applications use to reach it).
    pub fn add_node(&mut self, name: &str, host: &str, port: u16) -> Result<()> {
        crate::ident::check_host(host)?;
        if port == 0 {
            return Err(Error::Usage(format!(
                "node {name}: port 0 is not a port applications can connect to"
            )));
        }
        // The directory compares names without regard to case: say which spelling it has.
        if let Some(n) = self
            .load()?
            .nodes
            .iter()
            .find(|n| n.name.eq_ignore_ascii_case(name))
        {
            return Err(Error::Usage(format!(
                "node {name:?} is already in the directory (as {:?})",
                n.name
            )));
        }
        let table = self.t("nodes");
        self.change(|d, _| {
            d.server
                .try_rows(&Stmt::with(
                    format!("INSERT INTO {table} (name, host, port) VALUES (?, ?, ?)"),
                    vec![name.into(), host.into(), port.into()],
                ))
                .map(|_| ((), Changed::Everything))
                .map_err(|e| match server_error_code(&e) {
                    Some(ER_DUP_ENTRY) => {
                        Error::Usage(format!("node {name:?} is already in the directory"))
                    }
                    _ => d.server.error(&e),
                })
        })
    }

    /// Removes a node; refused while shards live on it.
    pub fn remove_node(&mut self, name: &str) -> Result<()> {
        let snap = self.load()?;
        if !snap.nodes.iter().any(|n| n.name == name) {
            return Err(Error::Usage(format!(
                "node {name:?} is not in the directory"
            )));
        }
        let held: Vec<String> = snap
            .shards
            .iter()
            .filter(|s| s.node == name)
            .map(|s| s.id.to_string())
            .collect();
        if !held.is_empty() {
            return Err(Error::Refused(format!(
                "node {name} still holds shards {}; move them first",
                held.join(", ")
            )));
        }
        let table = self.t("nodes");
        self.change(|d, _| {
            d.server.exec(&Stmt::with(
                format!("DELETE FROM {table} WHERE name = ?"),
                vec![name.into()],
            ))?;
            Ok(((), Changed::Everything))
        })
    }

    /// Adds a partition function.
    pub fn add_function(&mut self, name: &Ident, kind: ShardingType, key: KeyType) -> Result<u32> {
        let table = self.t("partition_functions");
        self.change(|d, _| {
            d.server
                .try_rows(&Stmt::with(
                    format!("INSERT INTO {table} (name, sharding_type, key_type) VALUES (?, ?, ?)"),
                    vec![
                        name.as_str().into(),
                        kind.as_sql().into(),
                        key.as_sql().into(),
                    ],
                ))
                .map_err(|e| match server_error_code(&e) {
                    Some(ER_DUP_ENTRY) => {
                        Error::Usage(format!("partition function {name} already exists"))
                    }
                    _ => d.server.error(&e),
                })?;
            let id = d
                .server
                .first::<u32>(&Stmt::text("SELECT LAST_INSERT_ID()"))?
                .unwrap_or(0);
            Ok((id, Changed::Everything))
        })
    }

    /// Maps a table as sharded or global. A table can be mapped once.
    pub fn add_table(
        &mut self,
        schema: &Ident,
        table: &Ident,
        placement: &TablePlacement,
    ) -> Result<()> {
        let snap = self.load()?;
        if let Some(kind) = snap.mapped_as(schema.as_str(), table.as_str()) {
            return Err(Error::Usage(format!(
                "table {schema}.{table} is already mapped ({kind})"
            )));
        }
        let (columns, globals) = (self.t("columns"), self.t("global_tables"));
        match placement {
            TablePlacement::Sharded { function, column } => {
                let func = snap.function(function)?.id;
                self.change(|d, _| {
                    d.server.exec(&Stmt::with(
                        format!("INSERT INTO {columns} (schema_name, table_name, column_name, func_id) VALUES (?, ?, ?, ?)"),
                        vec![schema.as_str().into(), table.as_str().into(), column.as_str().into(), func.into()],
                    ))?;
                    Ok(((), Changed::Everything))
                })
            }
            TablePlacement::Global => self.change(|d, _| {
                d.server.exec(&Stmt::with(
                    format!("INSERT INTO {globals} (schema_name, table_name) VALUES (?, ?)"),
                    vec![schema.as_str().into(), table.as_str().into()],
                ))?;
                Ok(((), Changed::Everything))
            }),
        }
    }

    /// Inserts a new shard (state offline) with its mapping, in one transaction. Returns
    /// its id. Duplicate bounds, points and values are refused.
    pub fn insert_shard(
        &mut self,
        func: &Function,
        node: &DirNode,
        mapping: &NewMapping,
    ) -> Result<u32> {
        let (locations, ranges, hashes, lists) = (
            self.t("locations"),
            self.t("ranges"),
            self.t("hashes"),
            self.t("lists"),
        );
        let key_counts = self.t("key_counts");
        self.change(|d, version| {
            d.server.exec(&Stmt::with(
                format!("INSERT INTO {locations} (func_id, node, host, port, state, version) VALUES (?, ?, ?, ?, 'offline', ?)"),
                vec![func.id.into(), node.name.as_str().into(), node.host.as_str().into(), node.port.into(), version.into()],
            ))?;
            let shard_id = d.server.first::<u32>(&Stmt::text("SELECT LAST_INSERT_ID()"))?.unwrap_or(0);
            let dup = |what: String| move |e: mysql::Error, server: &mut Server| match server_error_code(&e) {
                Some(ER_DUP_ENTRY) => Error::Usage(what.clone()),
                _ => server.error(&e),
            };
            match mapping {
                NewMapping::LowerBound(key) => {
                    let (int, text) = match key {
                        Key::Int(_) => ("lower_bound", key_value(key)),
                        Key::Str(_) => ("lower_bound_str", key_value(key)),
                    };
                    let st = Stmt::with(
                        format!("INSERT INTO {ranges} (func_id, {int}, shard_id) VALUES (?, ?, ?)"),
                        vec![func.id.into(), text, shard_id.into()],
                    );
                    d.server.try_rows(&st).map_err(|e| {
                        dup(format!("function {} already has a range starting at {key}", func.name))(e, &mut d.server)
                    })?;
                }
                NewMapping::Point(p) => {
                    let st = Stmt::with(
                        format!("INSERT INTO {hashes} (func_id, hash, shard_id) VALUES (?, ?, ?)"),
                        vec![func.id.into(), p.to_hex().into(), shard_id.into()],
                    );
                    d.server.try_rows(&st).map_err(|e| {
                        dup(format!("function {} already has ring point {p}", func.name))(e, &mut d.server)
                    })?;
                }
                NewMapping::Values(values) => {
                    for v in values {
                        let st = Stmt::with(
                            format!("INSERT INTO {lists} (func_id, value, shard_id) VALUES (?, ?, ?)"),
                            vec![func.id.into(), Value::from(v.to_string().as_bytes()), shard_id.into()],
                        );
                        d.server.try_rows(&st).map_err(|e| {
                            dup(format!("value {v} is already mapped by function {}", func.name))(e, &mut d.server)
                        })?;
                    }
                }
                NewMapping::Keys => {
                    d.server.exec(&Stmt::with(
                        format!("INSERT INTO {key_counts} (shard_id, func_id, key_count) VALUES (?, ?, 0)"),
                        vec![shard_id.into(), func.id.into()],
                    ))?;
                }
            }
            Ok((shard_id, Changed::shard(shard_id)))
        })
    }

    /// Sets a shard's state (bumping its version).
    pub fn set_shard_state(&mut self, shard_id: u32, state: ShardState) -> Result<()> {
        let locations = self.t("locations");
        self.change(|d, version| {
            d.server.exec(&Stmt::with(
                format!("UPDATE {locations} SET state = ?, version = ? WHERE shard_id = ?"),
                vec![state.as_sql().into(), version.into(), shard_id.into()],
            ))?;
            Ok(((), Changed::shard(shard_id)))
        })
    }

    /// Removes a table's mapping (sharded or global), as the directory spells it.
    pub fn remove_table(&mut self, schema: &str, table: &str) -> Result<()> {
        let (columns, globals) = (self.t("columns"), self.t("global_tables"));
        self.change(|d, _| {
            for t in [&columns, &globals] {
                d.server.exec(&Stmt::with(
                    format!("DELETE FROM {t} WHERE schema_name = ? AND table_name = ?"),
                    vec![schema.into(), table.into()],
                ))?;
            }
            Ok(((), Changed::Everything))
        })
    }

    /// Removes a partition function (the caller checked it has no shard and no table).
    pub fn remove_function(&mut self, func_id: u32) -> Result<()> {
        let table = self.t("partition_functions");
        self.change(|d, _| {
            d.server.exec(&Stmt::with(
                format!("DELETE FROM {table} WHERE func_id = ?"),
                vec![func_id.into()],
            ))?;
            Ok(((), Changed::Everything))
        })
    }

    /// Removes a shard, its mapping and location, whatever its state (the caller checked
    /// it holds no rows).
    /// A shard of a per-key function is refused while keys map to it (their rows would
    /// keep the location, and a lookup of such a key would have nowhere to go).
    pub fn delete_shard(&mut self, shard_id: u32) -> Result<()> {
        let tables = ["ranges", "hashes", "lists", "key_counts"].map(|t| self.t(t));
        let locations = self.t("locations");
        let keys = self.t("key_shards");
        self.change(|d, _| {
            let mapped = d
                .server
                .first::<u64>(&Stmt::with(
                    format!("SELECT COUNT(*) FROM {keys} WHERE shard_id = ?"),
                    vec![shard_id.into()],
                ))?
                .unwrap_or(0);
            if mapped > 0 {
                return Err(Error::Refused(format!(
                    "shard {shard_id} still has {mapped} keys of its per-key function mapped to it: a per-key shard is removed once no key maps to it"
                )));
            }
            for t in tables.iter().chain(std::iter::once(&locations)) {
                d.server.exec(&Stmt::with(
                    format!("DELETE FROM {t} WHERE shard_id = ?"),
                    vec![shard_id.into()],
                ))?;
            }
            Ok(((), Changed::shard(shard_id)))
        })
    }

    /// Removes a shard that never came online (its mapping and location).
    pub fn delete_offline_shard(&mut self, shard_id: u32) -> Result<()> {
        let tables = ["ranges", "hashes", "lists", "key_counts"].map(|t| self.t(t));
        let locations = self.t("locations");
        self.change(|d, _| {
            for t in &tables {
                d.server.exec(&Stmt::with(
                    format!("DELETE FROM {t} WHERE shard_id = ?"),
                    vec![shard_id.into()],
                ))?;
            }
            d.server.exec(&Stmt::with(
                format!("DELETE FROM {locations} WHERE shard_id = ? AND state = 'offline'"),
                vec![shard_id.into()],
            ))?;
            Ok(((), Changed::shard(shard_id)))
        })
    }
}

impl Directory {
    /// The shard a per-key function maps `key` to, read from its one row of
    /// `key_shards` by the primary key (None: the key is not mapped).
    pub fn key_shard(&mut self, func_id: u32, key: &Key) -> Result<Option<u32>> {
        let st = Stmt::with(
            format!(
                "SELECT shard_id FROM {} WHERE func_id = ? AND key_value = ?",
                self.t("key_shards")
            ),
            vec![func_id.into(), Value::from(key.to_string().as_bytes())],
        );
        self.server.first::<u32>(&st)
    }

    /// The shards the per-key function `func_id` maps `keys` (their texts) to, read in one
    /// statement by the primary key; a key not mapped has no row in the answer.
    pub fn key_shards_of(&mut self, func_id: u32, keys: &[String]) -> Result<Vec<(String, u32)>> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let mut params = Vec::with_capacity(keys.len() + 1);
        params.push(Value::from(func_id));
        params.extend(keys.iter().map(|k| Value::from(k.as_bytes())));
        let st = Stmt::with(
            format!(
                "SELECT key_value, shard_id FROM {} WHERE func_id = ? AND key_value IN ({})",
                self.t("key_shards"),
                vec!["?"; keys.len()].join(", ")
            ),
            params,
        );
        self.server
            .rows(&st)?
            .into_iter()
            .map(|r| {
                mysql::from_row_opt::<(Vec<u8>, u32)>(r)
                    .map(|(k, s)| (String::from_utf8_lossy(&k).into_owned(), s))
                    .map_err(|e| {
                        Error::server(self.server.name(), format!("unexpected key row: {e}"))
                    })
            })
            .collect()
    }

    /// Maps `key` of the per-key function `func` to the least-loaded open shard (state
    /// online, available to writes; the fewest keys, then the lowest id), unless it is
    /// mapped already: then its shard is returned and nothing changes. Atomic: the
    /// assignment is one directory change, serialised with every other by the version
    /// row, and re-reads the key with a locking read inside it, so two processes assigning
    /// one key at once both get the shard the first gave it.
    pub fn assign_key(&mut self, func: &Function, key: &Key) -> Result<Assigned> {
        if func.sharding_type != ShardingType::Key {
            return Err(Error::Usage(format!(
                "function {} is {}, not a per-key function: its keys are mapped by its shards",
                func.name,
                func.sharding_type.as_sql()
            )));
        }
        if let Some(shard_id) = self.key_shard(func.id, key)? {
            return Ok(Assigned {
                shard_id,
                assigned: false,
            });
        }
        let (keys, counts, locations) = (
            self.t("key_shards"),
            self.t("key_counts"),
            self.t("locations"),
        );
        let text = key.to_string();
        self.change(|d, _| {
            let held = d.server.first::<u32>(&Stmt::with(
                format!("SELECT shard_id FROM {keys} WHERE func_id = ? AND key_value = ? FOR UPDATE"),
                vec![func.id.into(), Value::from(text.as_bytes())],
            ))?;
            if let Some(shard_id) = held {
                return Ok((
                    Assigned {
                        shard_id,
                        assigned: false,
                    },
                    Changed::Nothing,
                ));
            }
            let shard_id = d
                .server
                .first::<u32>(&Stmt::with(
                    format!(
                        "SELECT c.shard_id FROM {counts} c JOIN {locations} l ON l.shard_id = c.shard_id \
                         WHERE c.func_id = ? AND l.state = 'online' AND l.availability = 'available' \
                         ORDER BY c.key_count, c.shard_id LIMIT 1 FOR UPDATE"
                    ),
                    vec![func.id.into()],
                ))?
                .ok_or_else(|| {
                    Error::Refused(format!(
                        "function {} has no open shard (online and available) to assign key {text} to",
                        func.name
                    ))
                })?;
            d.server.exec(&Stmt::with(
                format!("INSERT INTO {keys} (func_id, key_value, shard_id) VALUES (?, ?, ?)"),
                vec![func.id.into(), Value::from(text.as_bytes()), shard_id.into()],
            ))?;
            d.server.exec(&Stmt::with(
                format!("UPDATE {counts} SET key_count = key_count + 1 WHERE shard_id = ?"),
                vec![shard_id.into()],
            ))?;
            Ok((
                Assigned {
                    shard_id,
                    assigned: true,
                },
                Changed::Keys {
                    func_id: func.id,
                    keys: Some(vec![text.clone()]),
                },
            ))
        })
    }

    /// Gives `keys` of the per-key function `func` to shard `to`, in one directory change
    /// (the flip of a key move: it moves no rows). Returns each key with the shard it
    /// had; a key not mapped, or mapped to `to` already, is refused before anything
    /// changes. The change log names the keys, so a router drops only those.
    pub fn reassign_keys(
        &mut self,
        func: &Function,
        keys: &[Key],
        to: u32,
    ) -> Result<Vec<(Key, u32)>> {
        if func.sharding_type != ShardingType::Key {
            return Err(Error::Usage(format!(
                "function {} is not a per-key function",
                func.name
            )));
        }
        self.change(|d, _| {
            let out = d.reassign_in_change(func, keys, None, to)?;
            let texts = keys.iter().map(Key::to_string).collect();
            Ok((
                out,
                Changed::Keys {
                    func_id: func.id,
                    keys: Some(texts),
                },
            ))
        })
    }

    /// Inside a directory change: gives `keys` of the per-key function `func` to shard
    /// `to`, each key's row read with a locking read and the kept counts of both shards
    /// moved by one a key. Returns each key with the shard it had. Refused, the caller's
    /// transaction then rolled back: a key not mapped, a key on `to` already ([`Error::Usage`]),
    /// and, with `from`, a key another shard than `from` holds ([`Error::Refused`]).
    pub(super) fn reassign_in_change(
        &mut self,
        func: &Function,
        keys: &[Key],
        from: Option<u32>,
        to: u32,
    ) -> Result<Vec<(Key, u32)>> {
        let (table, counts, locations) = (
            self.t("key_shards"),
            self.t("key_counts"),
            self.t("locations"),
        );
        let owner = self.server.first::<u32>(&Stmt::with(
            format!("SELECT func_id FROM {locations} WHERE shard_id = ? FOR UPDATE"),
            vec![to.into()],
        ))?;
        if owner != Some(func.id) {
            return Err(Error::Usage(format!(
                "shard {to} is not a shard of function {}",
                func.name
            )));
        }
        let mut out = Vec::new();
        for key in keys {
            let text = key.to_string();
            let had = self
                .server
                .first::<u32>(&Stmt::with(
                    format!("SELECT shard_id FROM {table} WHERE func_id = ? AND key_value = ? FOR UPDATE"),
                    vec![func.id.into(), Value::from(text.as_bytes())],
                ))?
                .ok_or_else(|| {
                    Error::Usage(format!("key {key} is not mapped by function {}", func.name))
                })?;
            if had == to {
                return Err(Error::Usage(format!("key {key} is on shard {to} already")));
            }
            if let Some(from) = from.filter(|f| *f != had) {
                return Err(Error::Refused(format!(
                    "key {key} is on shard {had} now, not on shard {from}: the keys changed shard since the move was planned"
                )));
            }
            self.server.exec(&Stmt::with(
                format!("UPDATE {table} SET shard_id = ? WHERE func_id = ? AND key_value = ?"),
                vec![to.into(), func.id.into(), Value::from(text.as_bytes())],
            ))?;
            for (shard, delta) in [(had, "- 1"), (to, "+ 1")] {
                self.server.exec(&Stmt::with(
                    format!("UPDATE {counts} SET key_count = key_count {delta} WHERE shard_id = ?"),
                    vec![shard.into()],
                ))?;
            }
            out.push((key.clone(), had));
        }
        Ok(out)
    }

    /// Imports key → shard rows of the per-key function `func` (bulk: millions), each
    /// with the line it came from. Everything is checked before the directory changes:
    /// a row is staged in a temporary table of this connection by multi-row INSERTs of
    /// `batch` rows, and the import is refused, naming the first culprit's line, for a
    /// shard not of the function, a key given twice, or a key the directory maps to
    /// another shard already (moving a key is a key move). Then the keys not mapped yet
    /// are added in directory changes of at most `chunk` keys each (the key counts kept
    /// with each). Idempotent: keys mapped already to the same shard are skipped, so an
    /// import run again (after an interruption) adds only what is missing. The staging
    /// table belongs to this connection: on a directory cluster, an import whose member
    /// goes away mid-way fails (a chunk retried through another member finds no staged
    /// rows); run it again.
    pub fn import_keys(
        &mut self,
        func: &Function,
        rows: impl Iterator<Item = Result<(u64, Key, u32)>>,
        batch: usize,
        chunk: u64,
    ) -> Result<Imported> {
        if func.sharding_type != ShardingType::Key {
            return Err(Error::Usage(format!(
                "function {} is {}, not a per-key function",
                func.name,
                func.sharding_type.as_sql()
            )));
        }
        let snap = self.load()?;
        let shards: BTreeSet<u32> = snap.shards_of(func.id).map(|s| s.id).collect();
        let staging = self.t("shardctl_key_import");
        self.server.exec(&Stmt::text(format!(
            "DROP TEMPORARY TABLE IF EXISTS {staging}"
        )))?;
        self.server.exec(&Stmt::text(format!(
            "CREATE TEMPORARY TABLE {staging} (line BIGINT UNSIGNED NOT NULL PRIMARY KEY, key_value VARBINARY(255) NOT NULL, shard_id INT UNSIGNED NOT NULL, UNIQUE KEY (key_value)) ENGINE=InnoDB"
        )))?;
        let result = self.import_staged(func, &shards, &staging, rows, batch.max(1), chunk.max(1));
        let _ = self.server.exec(&Stmt::text(format!(
            "DROP TEMPORARY TABLE IF EXISTS {staging}"
        )));
        result
    }

    fn import_staged(
        &mut self,
        func: &Function,
        shards: &BTreeSet<u32>,
        staging: &str,
        rows: impl Iterator<Item = Result<(u64, Key, u32)>>,
        batch: usize,
        chunk: u64,
    ) -> Result<Imported> {
        let mut pending: Vec<(u64, String, u32)> = Vec::with_capacity(batch);
        let mut read = 0u64;
        let mut last_line = 0u64;
        for row in rows {
            let (line, key, shard) = row?;
            if !shards.contains(&shard) {
                return Err(Error::Usage(format!(
                    "line {line}: shard {shard} is not a shard of function {}; nothing imported",
                    func.name
                )));
            }
            last_line = last_line.max(line);
            pending.push((line, key.to_string(), shard));
            read += 1;
            if pending.len() >= batch {
                self.stage(staging, &mut pending)?;
            }
        }
        self.stage(staging, &mut pending)?;
        let keys = self.t("key_shards");
        let conflict = format!(
            "SELECT i.line, i.key_value, k.shard_id, i.shard_id FROM {staging} i JOIN {keys} k ON k.func_id = ? AND k.key_value = i.key_value WHERE k.shard_id <> i.shard_id ORDER BY i.line LIMIT 1"
        );
        let refuse = |row: (u64, Vec<u8>, u32, u32)| {
            Error::Refused(format!(
                "line {}: key {} is mapped to shard {} already, the file gives shard {} (a key changes shard by a key move); nothing imported",
                row.0,
                String::from_utf8_lossy(&row.1),
                row.2,
                row.3
            ))
        };
        if let Some(row) = self.server.first::<(u64, Vec<u8>, u32, u32)>(&Stmt::with(
            conflict.clone(),
            vec![func.id.into()],
        ))? {
            return Err(refuse(row));
        }
        let counts = self.t("key_counts");
        let mut added = 0u64;
        let mut from = 0u64;
        while from < last_line {
            let to = from.saturating_add(chunk);
            // A chunk whose keys are all there already (an import run again) makes no
            // change, so bumps no version.
            let missing = self
                .server
                .first::<u64>(&Stmt::with(
                    format!("SELECT COUNT(*) FROM {staging} i LEFT JOIN {keys} k ON k.func_id = ? AND k.key_value = i.key_value WHERE k.key_value IS NULL AND i.line > ? AND i.line <= ?"),
                    vec![func.id.into(), from.into(), to.into()],
                ))?
                .unwrap_or(0);
            if missing == 0 {
                from = to;
                continue;
            }
            let n = self.change(|d, _| {
                if let Some(row) = d.server.first::<(u64, Vec<u8>, u32, u32)>(&Stmt::with(
                    format!("{} ", conflict.replace(" ORDER BY", " AND i.line > ? AND i.line <= ? ORDER BY")),
                    vec![func.id.into(), from.into(), to.into()],
                ))? {
                    return Err(refuse(row));
                }
                // What the chunk adds to each shard, counted before it is added: the
                // kept counts move by exactly that (O(chunk), not a recount of the map).
                let per_shard: Vec<(u32, u64)> = d
                    .server
                    .rows(&Stmt::with(
                        format!("SELECT i.shard_id, COUNT(*) FROM {staging} i LEFT JOIN {keys} k ON k.func_id = ? AND k.key_value = i.key_value WHERE k.key_value IS NULL AND i.line > ? AND i.line <= ? GROUP BY i.shard_id"),
                        vec![func.id.into(), from.into(), to.into()],
                    ))?
                    .into_iter()
                    .map(mysql::from_row)
                    .collect();
                let n = d.server.exec_affected(&Stmt::with(
                    format!(
                        "INSERT INTO {keys} (func_id, key_value, shard_id) SELECT ?, i.key_value, i.shard_id FROM {staging} i LEFT JOIN {keys} k ON k.func_id = ? AND k.key_value = i.key_value WHERE k.key_value IS NULL AND i.line > ? AND i.line <= ? ORDER BY i.key_value"
                    ),
                    vec![func.id.into(), func.id.into(), from.into(), to.into()],
                ))?;
                if n == 0 {
                    return Ok((0, Changed::Nothing));
                }
                if n != per_shard.iter().map(|(_, c)| c).sum::<u64>() {
                    return Err(Error::Internal(format!(
                        "an import chunk added {n} keys, not the {} it counted",
                        per_shard.iter().map(|(_, c)| c).sum::<u64>()
                    )));
                }
                for (shard, added) in &per_shard {
                    d.server.exec(&Stmt::with(
                        format!("UPDATE {counts} SET key_count = key_count + ? WHERE shard_id = ?"),
                        vec![(*added).into(), (*shard).into()],
                    ))?;
                }
                let listed = if n as usize <= LOGGED_KEYS_MAX {
                    let texts: Vec<Vec<u8>> = d
                        .server
                        .rows(&Stmt::with(
                            format!("SELECT key_value FROM {staging} WHERE line > ? AND line <= ?"),
                            vec![from.into(), to.into()],
                        ))?
                        .into_iter()
                        .map(mysql::from_row)
                        .collect();
                    Some(texts.into_iter().map(|t| String::from_utf8_lossy(&t).into_owned()).collect())
                } else {
                    None
                };
                Ok((
                    n,
                    Changed::Keys {
                        func_id: func.id,
                        keys: listed,
                    },
                ))
            })?;
            added += n;
            from = to;
        }
        Ok(Imported {
            read,
            added,
            present: read - added,
        })
    }

    /// Writes the staged rows of `pending` (and empties it); a key given twice is
    /// refused with both lines.
    fn stage(&mut self, staging: &str, pending: &mut Vec<(u64, String, u32)>) -> Result<()> {
        if pending.is_empty() {
            return Ok(());
        }
        let mut params = Vec::with_capacity(pending.len() * 3);
        for (line, key, shard) in pending.iter() {
            params.push(Value::from(*line));
            params.push(Value::from(key.as_bytes()));
            params.push(Value::from(*shard));
        }
        let st = Stmt::with(
            format!(
                "INSERT INTO {staging} (line, key_value, shard_id) VALUES {}",
                vec!["(?, ?, ?)"; pending.len()].join(", ")
            ),
            params,
        );
        match self.server.try_rows(&st) {
            Ok(_) => {
                pending.clear();
                Ok(())
            }
            Err(e) if server_error_code(&e) == Some(ER_DUP_ENTRY) => {
                // Which one: each row of the batch against what is staged, and the
                // batch against itself.
                let mut seen: std::collections::HashMap<&str, u64> = Default::default();
                for (line, key, _) in pending.iter() {
                    let earlier = match seen.get(key.as_str()) {
                        Some(l) => Some(*l),
                        None => self.server.first::<u64>(&Stmt::with(
                            format!("SELECT line FROM {staging} WHERE key_value = ?"),
                            vec![Value::from(key.as_bytes())],
                        ))?,
                    };
                    if let Some(first) = earlier {
                        return Err(Error::Usage(format!(
                            "line {line}: key {key} is given again (first on line {first}); nothing imported"
                        )));
                    }
                    seen.insert(key, *line);
                }
                Err(self.server.error(&e))
            }
            Err(e) => Err(self.server.error(&e)),
        }
    }

    /// How many keys each shard of every per-key function of `snap` holds (its kept
    /// `key_counts`), by shard id: what `status` and `shard list` show.
    pub fn per_key_counts(&mut self, snap: &Snapshot) -> Result<BTreeMap<u32, u64>> {
        let mut out = BTreeMap::new();
        for f in snap
            .functions
            .iter()
            .filter(|f| f.sharding_type == ShardingType::Key)
        {
            out.extend(self.key_counts(f.id)?);
        }
        Ok(out)
    }

    /// How many keys each shard of the per-key function `func_id` holds, by shard id.
    pub fn key_counts(&mut self, func_id: u32) -> Result<Vec<(u32, u64)>> {
        let st = Stmt::with(
            format!(
                "SELECT shard_id, key_count FROM {} WHERE func_id = ? ORDER BY shard_id",
                self.t("key_counts")
            ),
            vec![func_id.into()],
        );
        self.server
            .rows(&st)?
            .into_iter()
            .map(|r| {
                mysql::from_row_opt::<(u32, u64)>(r).map_err(|e| {
                    Error::server(self.server.name(), format!("unexpected key count row: {e}"))
                })
            })
            .collect()
    }
}

/// 64 random bits from the kernel: a transaction's commit token.
fn commit_token() -> Result<u64> {
    let mut buf = [0u8; 8];
    // SAFETY: getrandom writes at most `buf.len()` bytes into the buffer it is given.
    let n = unsafe { libc::getrandom(buf.as_mut_ptr().cast(), buf.len(), 0) };
    if n != buf.len() as isize {
        return Err(Error::io(
            "cannot read random bytes for a commit token",
            std::io::Error::last_os_error(),
        ));
    }
    // The column is signed-safe: the top bit cleared.
    Ok(u64::from_ne_bytes(buf) >> 1)
}

fn self_t(schema: &Ident, table: &str) -> String {
    format!("{}.`{table}`", schema.quoted())
}

/// One member of the directory's cluster as [`survey`] found it.
#[derive(Debug, serde::Serialize)]
pub struct MemberReport {
    /// Its node name.
    pub member: String,
    /// `host:port` (or socket).
    pub address: String,
    /// What it reports of itself, when it answered.
    pub state: Option<crate::server::galera::MemberState>,
    /// The member shardctl writes through now: the first usable one in the inventory's
    /// order.
    pub writer: bool,
    /// A member routers read from.
    pub reader: bool,
    /// Why shardctl does not use it, when it does not (unreachable, another cluster,
    /// wsrep off, not in the Primary component, not Synced).
    #[serde(serialize_with = "error_text")]
    pub error: Option<Error>,
}

fn error_text<S: serde::Serializer>(
    e: &Option<Error>,
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    match e {
        Some(e) => s.serialize_some(&e.to_string()),
        None => s.serialize_none(),
    }
}

/// Every member of the directory's cluster, asked in the inventory's order (None when the
/// directory lives on one node). Each error carries its exit code: unreachable 4, wsrep
/// off or another cluster (by name, or by state UUID while both are Primary) 3, not in
/// the Primary component or not Synced 5.
pub fn survey(inv: &Inventory) -> Result<Option<Vec<MemberReport>>> {
    let Some(cluster) = inv.directory_cluster() else {
        return Ok(None);
    };
    let mut out: Vec<MemberReport> = Vec::new();
    let mut writer_found = false;
    for name in &cluster.members {
        let spec = ConnectSpec::for_node(inv, inv.node(name)?)?;
        let reader = cluster.reader_members().contains(name);
        let mut report = MemberReport {
            member: name.clone(),
            address: spec.address(),
            state: None,
            writer: false,
            reader,
            error: None,
        };
        let state = Server::connect(&spec).and_then(|mut s| s.galera_state());
        match state {
            Err(e) => report.error = Some(e),
            Ok(state) => {
                report.error = if !state.wsrep_on {
                    Some(Error::Config(format!(
                        "directory member {name}: wsrep is off: it is a server of its own, not a member of cluster {}",
                        cluster.name
                    )))
                } else if state.cluster_name != cluster.name {
                    Some(crate::server::galera::wrong_cluster(
                        name,
                        &cluster.name,
                        &state.cluster_name,
                    ))
                } else if let Some(other) = out.iter().find(|o| {
                    o.state.as_ref().is_some_and(|s| {
                        s.status == crate::server::galera::ClusterStatus::Primary
                            && state.status == crate::server::galera::ClusterStatus::Primary
                            && s.cluster_uuid != state.cluster_uuid
                    })
                }) {
                    Some(Error::Config(format!(
                        "directory.cluster: members {} and {name} are in two different clusters named {:?} (state UUIDs {} and {}): list the members of one cluster",
                        other.member,
                        cluster.name,
                        other.state.as_ref().map(|s| s.cluster_uuid.as_str()).unwrap_or(""),
                        state.cluster_uuid
                    )))
                } else {
                    state.unusable().map(|why| {
                        Error::Refused(format!(
                            "directory member {name} is {why}: shardctl neither writes nor reads through it until it is Synced in the Primary component"
                        ))
                    })
                };
                if report.error.is_none() && !writer_found {
                    report.writer = true;
                    writer_found = true;
                }
                report.state = Some(state);
            }
        }
        out.push(report);
    }
    Ok(Some(out))
}
