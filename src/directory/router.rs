//! The router: loads the directory once, answers lookups in memory, and when the
//! directory version changes re-reads what the change log says changed (everything when
//! it cannot say). Applications (and shardctl's workload generator) use it,
//! following the chapter's rule: on a read-only, table-doesn't-exist, lost-connection or
//! wrong-shard error ([`is_refresh_error`]), call [`Router::refresh`] (or
//! [`Router::refresh_after`]) and look the shard up again.

use super::lookup::Index;
use super::model::{Access, Availability, Key, Shard, ShardState, Snapshot};
use super::store::{Delta, Directory, FullReason};
use crate::config::Inventory;
use crate::error::{Error, Result};
use serde::Serialize;
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// Client-side error numbers of a connection that broke or could not be made (CR_*):
/// can't connect (2002, 2003), server has gone away (2006), lost connection during a query
/// (2013, 2027 malformed packet, 2055 lost connection at a system call).
pub const LOST_CONNECTION_CODES: [u16; 6] = [2002, 2003, 2006, 2013, 2027, 2055];

/// The message prefix of the wrong-shard guard: a shard's triggers reject a key the shard
/// no longer owns with `SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'shardctl: shard <id>
/// does not own this key; re-read the directory'` (error 1644, ER_SIGNAL_EXCEPTION).
pub const GUARD_MESSAGE_PREFIX: &str = "shardctl: ";

/// The chapter's retry rule: true when a server (or client) error means the location the
/// router gave may be stale, so the application should re-read the directory
/// ([`Router::refresh`]), look the key up again and retry:
/// - 1290 (read-only, ER_OPTION_PREVENTS_STATEMENT) and 1836 (ER_READ_ONLY_MODE): the
///   read-only fence;
/// - 1146 (table doesn't exist) and 1049 (unknown database): the shard fence, or a moved
///   shard's old copy dropped;
/// - lost connection ([`LOST_CONNECTION_CODES`]): the node may be gone;
/// - 1644 (a `SIGNAL`) whose message starts with `shardctl: `: the wrong-shard guard. A
///   `SIGNAL` of the application's own triggers is not a reason to re-read the directory.
pub fn is_refresh_error(code: u16, message: &str) -> bool {
    match code {
        1146 | 1049 | 1290 | 1836 => true,
        1644 => message.starts_with(GUARD_MESSAGE_PREFIX),
        c => LOST_CONNECTION_CODES.contains(&c),
    }
}

/// [`is_refresh_error`] for an error of the `mysql` driver: a server error by its number
/// and message; any other failure (I/O, a closed socket, a broken packet) is a lost
/// connection.
pub fn is_refresh_mysql_error(e: &mysql::Error) -> bool {
    match e {
        mysql::Error::MySqlError(me) => is_refresh_error(me.code, &me.message),
        mysql::Error::IoError(_) | mysql::Error::DriverError(_) | mysql::Error::CodecError(_) => {
            true
        }
        _ => false,
    }
}

/// Where a key lives.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Route {
    /// Shard id.
    pub shard_id: u32,
    /// Function name.
    pub function: String,
    /// Node name.
    pub node: String,
    /// Host.
    pub host: String,
    /// Port.
    pub port: u16,
    /// Shard state.
    pub state: ShardState,
    /// What the operator lets reach the shard.
    pub availability: Availability,
    /// Physical schemas of the shard.
    pub schemas: Vec<String>,
}

/// How a router last brought its cache up to date ([`Router::last_reload`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Reload {
    /// Only the locations and mapping rows of the shards the change log named.
    Incremental {
        /// The version before.
        from: u64,
        /// The version after.
        to: u64,
        /// The shards re-read (empty when the changes touched nothing routers read).
        shards: Vec<u32>,
        /// Rows read from the directory: the version (twice: the check, then in the
        /// consistent read), the log's rows, the shards' rows.
        rows: u64,
    },
    /// The whole directory.
    Full {
        /// The version before.
        from: u64,
        /// The version after.
        to: u64,
        /// Why not less.
        why: FullReason,
        /// Rows read from the directory.
        rows: u64,
    },
}

impl Reload {
    /// Rows read from the directory for this reload.
    pub fn rows(&self) -> u64 {
        match self {
            Reload::Incremental { rows, .. } | Reload::Full { rows, .. } => *rows,
        }
    }
}

/// In-memory lookups over one directory version.
pub struct Router {
    directory: Option<Directory>,
    snapshot: Snapshot,
    index: Index,
    shards: HashMap<u32, usize>,
    checked: Instant,
    check_every: Duration,
    /// Lookups fail once the routes have gone unconfirmed this long (None: they never do).
    max_staleness: Option<Duration>,
    /// Blocks of sequence values taken and not yet handed out (`next_id`).
    id_blocks: HashMap<String, super::sequences::Block>,
    last_reload: Option<Reload>,
}

impl std::fmt::Debug for Router {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Router")
            .field("version", &self.snapshot.version)
            .finish()
    }
}

impl Router {
    /// A router over a fixed snapshot (no connection; never refreshes).
    pub fn from_snapshot(snapshot: Snapshot) -> Router {
        let index = Index::new(&snapshot);
        let shards = snapshot
            .shards
            .iter()
            .enumerate()
            .map(|(i, s)| (s.id, i))
            .collect();
        Router {
            directory: None,
            snapshot,
            index,
            shards,
            checked: Instant::now(),
            check_every: Duration::from_secs(1),
            max_staleness: None,
            id_blocks: HashMap::new(),
            last_reload: None,
        }
    }

    /// Takes `snapshot` as the cache, its lookups rebuilt in memory; the connection, the
    /// check interval and the id blocks stay.
    fn install(&mut self, snapshot: Snapshot) {
        let fresh = Router::from_snapshot(snapshot);
        self.snapshot = fresh.snapshot;
        self.index = fresh.index;
        self.shards = fresh.shards;
    }

    /// Connects to the directory of `inv` and loads it, with the account the inventory
    /// names for applications (`directory.application`; the admin account without one):
    /// a router only reads, and takes ids from sequences.
    pub fn connect(inv: &Inventory) -> Result<Router> {
        let mut dir = Directory::open_for_application(inv)?;
        let snapshot = dir.load()?;
        let mut r = Router::from_snapshot(snapshot);
        r.directory = Some(dir);
        Ok(r)
    }

    /// How often [`Router::maybe_refresh`] asks the directory for its version.
    pub fn set_check_interval(&mut self, every: Duration) {
        self.check_every = every;
    }

    /// The snapshot in use.
    pub fn snapshot(&self) -> &Snapshot {
        &self.snapshot
    }

    /// The directory version in use.
    pub fn version(&self) -> u64 {
        self.snapshot.version
    }

    /// Lookups refuse ([`Error::Refused`]) once the routes have gone unconfirmed for longer
    /// than `bound` (see [`Router::unchecked_for`]); None (the default): the routes are
    /// served however long the directory stays out of reach. Either way a stale route
    /// never writes a row to the wrong shard: the fences and guards on the shards refuse
    /// it ([`is_refresh_error`]).
    pub fn set_max_staleness(&mut self, bound: Option<Duration>) {
        self.max_staleness = bound;
    }

    /// Asks the directory for its version now and, when it changed, brings the cache up
    /// to it: through the change log, re-reading only the locations and mapping rows of
    /// the shards changed since the cache's version, or the whole directory when the log
    /// cannot say ([`Directory::changes_since`]). Returns true when the version had
    /// changed; [`Router::last_reload`] tells how the cache followed.
    /// On a cluster the version is read as the cluster last committed it (the read waits
    /// until its member has applied every earlier commit), so a refresh after a refresh
    /// error sees the flip that caused it.
    /// A broken directory connection is reopened (on a cluster, through the next reader
    /// member); the check time only moves on success, so [`Router::unchecked_for`] tells
    /// how stale the routes may be. On failure the routes stay as they were.
    pub fn refresh(&mut self) -> Result<bool> {
        self.refresh_with(true)
    }

    fn refresh_with(&mut self, synced: bool) -> Result<bool> {
        let Some(dir) = self.directory.as_mut() else {
            return Ok(false);
        };
        let from = self.snapshot.version;
        let version = if synced {
            dir.retrying(|d| d.version_synced())?
        } else {
            dir.retrying(|d| d.version())?
        };
        if version == from {
            self.checked = Instant::now();
            return Ok(false);
        }
        let reread = dir.retrying(|d| d.changes_since(from))?;
        self.checked = Instant::now();
        // The version check above counts too.
        let rows = reread.rows + 1;
        match reread.delta {
            Delta::Unchanged => return Ok(false),
            Delta::Full(snapshot, why) => {
                let to = snapshot.version;
                self.install(snapshot);
                self.last_reload = Some(Reload::Full {
                    from,
                    to,
                    why,
                    rows,
                });
            }
            Delta::Shards(shards, part) => {
                let to = part.version;
                let mut snapshot = std::mem::take(&mut self.snapshot);
                snapshot.apply(&shards, part);
                self.install(snapshot);
                self.last_reload = Some(Reload::Incremental {
                    from,
                    to,
                    shards: shards.into_iter().collect(),
                    rows,
                });
            }
        }
        Ok(true)
    }

    /// Re-reads the whole directory now, whatever its version.
    pub fn reload(&mut self) -> Result<()> {
        let Some(dir) = self.directory.as_mut() else {
            return Ok(());
        };
        let from = self.snapshot.version;
        let (snapshot, rows) = dir.retrying(|d| d.load_counted())?;
        self.checked = Instant::now();
        let to = snapshot.version;
        self.install(snapshot);
        self.last_reload = Some(Reload::Full {
            from,
            to,
            why: FullReason::Asked,
            rows,
        });
        Ok(())
    }

    /// How the last [`Router::refresh`] or [`Router::reload`] that found a new version
    /// brought the cache up to date (None before the first).
    pub fn last_reload(&self) -> Option<&Reload> {
        self.last_reload.as_ref()
    }

    /// The chapter's retry rule after a failed statement: when [`is_refresh_error`] says
    /// the location may be stale, re-reads the directory (reloading it if its version
    /// changed) and returns whether it reloaded; any other error leaves the routes as they
    /// are (the caller retries or gives up on its own terms).
    pub fn refresh_after(&mut self, code: u16, message: &str) -> Result<bool> {
        if is_refresh_error(code, message) {
            self.refresh()
        } else {
            Ok(false)
        }
    }

    /// How long since the directory's version was last confirmed.
    pub fn unchecked_for(&self) -> Duration {
        self.checked.elapsed()
    }

    /// Refreshes when the last check is older than the check interval: the periodic poll,
    /// whose version read does not wait for its member to catch up (a member a moment
    /// behind is read again at the next poll, and the shards' fences refuse what the
    /// routes would misplace meanwhile).
    pub fn maybe_refresh(&mut self) -> Result<bool> {
        if self.checked.elapsed() >= self.check_every {
            self.refresh_with(false)
        } else {
            Ok(false)
        }
    }

    /// Fails when the routes have gone unconfirmed longer than the staleness bound.
    fn fresh_enough(&self) -> Result<()> {
        match self.max_staleness {
            Some(bound) if self.checked.elapsed() > bound => Err(Error::Refused(format!(
                "the routes were last confirmed {} ms ago, longer than this router's staleness bound of {} ms: the directory did not answer since",
                self.checked.elapsed().as_millis(),
                bound.as_millis()
            ))),
            _ => Ok(()),
        }
    }

    /// The shard holding `key` under the function called `function`, whatever its
    /// availability (where the key lives; [`Router::shard_to`] checks the operator's flag).
    pub fn shard_for_function(&self, function: &str, key: &Key) -> Result<&Shard> {
        self.fresh_enough()?;
        let func_id = self.index.function_id(function).ok_or_else(|| {
            self.snapshot
                .function(function)
                .err()
                .unwrap_or_else(|| Error::Usage(format!("unknown partition function {function:?}")))
        })?;
        self.shard_by_id(self.index.lookup(func_id, key)?)
    }

    /// The shard holding `key` of the sharded table `schema.table`, whatever its
    /// availability ([`Router::table_shard_to`] checks it).
    pub fn shard_for_table(&self, schema: &str, table: &str, key: &Key) -> Result<&Shard> {
        self.fresh_enough()?;
        let func_id = self.index.table_function(schema, table).ok_or_else(|| {
            Error::Usage(format!(
                "table {schema}.{table} is not a sharded table in the directory"
            ))
        })?;
        self.shard_by_id(self.index.lookup(func_id, key)?)
    }

    /// [`Router::shard_for_function`] for `access`: the shard, unless the operator made it
    /// unavailable for that ([`Error::Unavailable`], nothing to send). An application
    /// calls this before each statement; the location lookups alone do not check.
    pub fn shard_to(&self, access: Access, function: &str, key: &Key) -> Result<&Shard> {
        let shard = self.shard_for_function(function, key)?;
        shard.check_access(access)?;
        Ok(shard)
    }

    /// [`Router::shard_for_table`] for `access`, as [`Router::shard_to`].
    pub fn table_shard_to(
        &self,
        access: Access,
        schema: &str,
        table: &str,
        key: &Key,
    ) -> Result<&Shard> {
        let shard = self.shard_for_table(schema, table, key)?;
        shard.check_access(access)?;
        Ok(shard)
    }

    fn shard_by_id(&self, id: u32) -> Result<&Shard> {
        self.shards
            .get(&id)
            .map(|&i| &self.snapshot.shards[i])
            .ok_or_else(|| {
                Error::Usage(format!(
                    "the directory maps to shard {id}, which has no location"
                ))
            })
    }

    /// The next id of the directory sequence `sequence` (`shardctl ids sequence create`):
    /// unique across every caller of every process, because each router takes a block of
    /// the sequence's block size in one autocommitted statement and hands it out from
    /// memory. Ids are unique, not gap-free: a block a router never finishes is skipped.
    /// Exhausted: [`Error::Refused`]; row lock not granted in time: [`Error::Timeout`].
    pub fn next_id(&mut self, sequence: &str) -> Result<i64> {
        if let Some(b) = self.id_blocks.get_mut(sequence) {
            let id = b.first;
            if b.first == b.last {
                self.id_blocks.remove(sequence);
            } else {
                b.first += 1;
            }
            return Ok(id);
        }
        let dir = self.directory.as_mut().ok_or_else(|| {
            Error::Usage("a router over a fixed snapshot has no directory to take ids from".into())
        })?;
        let size = dir
            .retrying(|d| super::sequences::sequence(d, sequence))?
            .block_size;
        let block = super::sequences::take(
            dir,
            sequence,
            u64::from(size),
            true,
            super::sequences::DEFAULT_LOCK_WAIT_SECS,
        )?;
        if block.first < block.last {
            self.id_blocks.insert(
                sequence.to_string(),
                super::sequences::Block {
                    first: block.first + 1,
                    last: block.last,
                },
            );
        }
        Ok(block.first)
    }

    /// The full route of a shard: node, address, state and physical schemas.
    pub fn route(&self, shard: &Shard) -> Route {
        Route {
            shard_id: shard.id,
            function: self
                .snapshot
                .function_by_id(shard.func_id)
                .map(|f| f.name.clone())
                .unwrap_or_default(),
            node: shard.node.clone(),
            host: shard.host.clone(),
            port: shard.port,
            state: shard.state,
            availability: shard.availability,
            schemas: self.snapshot.shard_schemas(shard),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refresh_errors_are_the_chapters_and_the_guards() {
        for code in [1146, 1049, 1290, 1836, 2002, 2003, 2006, 2013, 2027, 2055] {
            assert!(is_refresh_error(code, "whatever"), "{code}");
        }
        let guard = "shardctl: shard 7 does not own this key; re-read the directory";
        assert!(is_refresh_error(1644, guard));
        // A SIGNAL of the application's own triggers is not about routing.
        assert!(!is_refresh_error(1644, "balance may not go negative"));
        assert!(!is_refresh_error(
            1644,
            "Shardctl: shard 7 does not own this key"
        ));
        assert!(!is_refresh_error(1644, " shardctl: shard 7"));
        // Errors a retry may cure without a new route, and errors no retry cures.
        for code in [1062, 1205, 1213, 1142, 1064, 0] {
            assert!(!is_refresh_error(code, guard), "{code}");
        }
    }
}
