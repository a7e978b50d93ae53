//! The router: loads the directory once, answers lookups in memory, and when the
//! directory version changes re-reads what the change log says changed (everything when
//! it cannot say). Applications (and shardctl's workload generator) use it,
//! following the chapter's rule: on a read-only, table-doesn't-exist, lost-connection or
//! wrong-shard error ([`is_refresh_error`]), call [`Router::refresh`] (or
//! [`Router::refresh_after`]) and look the shard up again.

use super::lookup::Index;
use super::model::{Access, Availability, Key, Shard, ShardState, ShardingType, Snapshot};
use super::store::{Delta, Directory, FullReason, KeyChanges};
use crate::config::Inventory;
use crate::error::{Error, Result};
use serde::Serialize;
use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// How many keys of per-key functions a router keeps by default
/// ([`Router::set_key_cache_capacity`]): about 100 bytes each with a short key, so some
/// 10 MB at most, whatever the number of keys in the directory.
pub const DEFAULT_KEY_CACHE_CAPACITY: usize = 100_000;

/// The keys of per-key functions a router has read, bounded: two generations of at most
/// half the capacity each. A key found in the old generation moves to the new one; when
/// the new one is full the old one is dropped and the new one becomes old. So a key used
/// since the last turnover stays, and the cache never holds more than its capacity
/// (an approximation of least-recently-used at O(1) a lookup).
#[derive(Debug, Default)]
struct KeyCache {
    capacity: usize,
    young: HashMap<(u32, String), u32>,
    old: HashMap<(u32, String), u32>,
    hits: u64,
    misses: u64,
}

impl KeyCache {
    fn new(capacity: usize) -> Self {
        KeyCache {
            capacity,
            ..KeyCache::default()
        }
    }

    fn half(&self) -> usize {
        (self.capacity / 2).max(1)
    }

    fn get(&mut self, func_id: u32, key: &str) -> Option<u32> {
        let k = (func_id, key.to_string());
        if let Some(&s) = self.young.get(&k) {
            self.hits += 1;
            return Some(s);
        }
        if let Some(s) = self.old.remove(&k) {
            self.hits += 1;
            self.put_young(k, s);
            return Some(s);
        }
        self.misses += 1;
        None
    }

    fn put(&mut self, func_id: u32, key: String, shard: u32) {
        if self.capacity == 0 {
            return;
        }
        let k = (func_id, key);
        self.old.remove(&k);
        self.put_young(k, shard);
    }

    fn put_young(&mut self, k: (u32, String), shard: u32) {
        if self.young.len() >= self.half() && !self.young.contains_key(&k) {
            self.old = std::mem::take(&mut self.young);
        }
        self.young.insert(k, shard);
    }

    fn len(&self) -> usize {
        self.young.len() + self.old.len()
    }

    fn clear(&mut self) {
        self.young.clear();
        self.old.clear();
    }

    /// Drops what the change log says changed; returns how many entries went.
    fn forget(&mut self, changes: &KeyChanges) -> usize {
        let before = self.len();
        for (func, keys) in changes {
            match keys {
                None => {
                    self.young.retain(|(f, _), _| f != func);
                    self.old.retain(|(f, _), _| f != func);
                }
                Some(keys) => {
                    for k in keys {
                        let k = (*func, k.clone());
                        self.young.remove(&k);
                        self.old.remove(&k);
                    }
                }
            }
        }
        before - self.len()
    }
}

/// What a router's cache of per-key keys holds and how it did ([`Router::key_cache`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct KeyCacheStats {
    /// Keys held now.
    pub entries: usize,
    /// The most it holds.
    pub capacity: usize,
    /// Lookups answered from the cache.
    pub hits: u64,
    /// Lookups that read the key's row from the directory (cold lookups).
    pub misses: u64,
}

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
        /// Cached keys of per-key functions dropped because the log named them (they
        /// are read again, one row each, when next looked up).
        keys_dropped: usize,
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
    /// In a mutex so that a lookup (`&self`) of a per-key function's key not cached can
    /// read its row.
    directory: Mutex<Option<Directory>>,
    keys: Mutex<KeyCache>,
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
            directory: Mutex::new(None),
            keys: Mutex::new(KeyCache::new(DEFAULT_KEY_CACHE_CAPACITY)),
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
        let r = Router::from_snapshot(snapshot);
        *lock(&r.directory) = Some(dir);
        Ok(r)
    }

    /// How many keys of per-key functions this router keeps at most (default
    /// [`DEFAULT_KEY_CACHE_CAPACITY`]); the cache is emptied. 0: none, every lookup of a
    /// per-key function reads its row.
    pub fn set_key_cache_capacity(&mut self, capacity: usize) {
        *lock(&self.keys) = KeyCache::new(capacity);
    }

    /// What the cache of per-key keys holds, and its hits and cold lookups so far.
    pub fn key_cache(&self) -> KeyCacheStats {
        let c = lock(&self.keys);
        KeyCacheStats {
            entries: c.len(),
            capacity: c.capacity,
            hits: c.hits,
            misses: c.misses,
        }
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
        let Some(dir) = self
            .directory
            .get_mut()
            .unwrap_or_else(|p| p.into_inner())
            .as_mut()
        else {
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
                lock(&self.keys).clear();
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
                let keys_dropped = lock(&self.keys).forget(&reread.keys);
                self.last_reload = Some(Reload::Incremental {
                    from,
                    to,
                    shards: shards.into_iter().collect(),
                    rows,
                    keys_dropped,
                });
            }
        }
        Ok(true)
    }

    /// Re-reads the whole directory now, whatever its version.
    pub fn reload(&mut self) -> Result<()> {
        let Some(dir) = self
            .directory
            .get_mut()
            .unwrap_or_else(|p| p.into_inner())
            .as_mut()
        else {
            return Ok(());
        };
        let from = self.snapshot.version;
        let (snapshot, rows) = dir.retrying(|d| d.load_counted())?;
        self.checked = Instant::now();
        let to = snapshot.version;
        self.install(snapshot);
        lock(&self.keys).clear();
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
        self.shard_by_id(self.resolve(func_id, key)?)
    }

    /// The shard id `key` maps to under function `func_id`: from memory for range, hash
    /// and list functions; for a per-key function from the cache of keys, or else from
    /// the key's one row in the directory (a cold lookup: one read by primary key), which
    /// the cache then keeps until the change log names the key or the cache drops it.
    fn resolve(&self, func_id: u32, key: &Key) -> Result<u32> {
        if self.index.kind(func_id) != Some(ShardingType::Key) {
            return self.index.lookup(func_id, key);
        }
        let text = key.to_string();
        if let Some(shard) = lock(&self.keys).get(func_id, &text) {
            return Ok(shard);
        }
        let name = self
            .snapshot
            .function_by_id(func_id)
            .map(|f| f.name.clone())
            .unwrap_or_default();
        let found = {
            let mut dir = lock(&self.directory);
            let dir = dir.as_mut().ok_or_else(|| {
                Error::Usage(format!(
                    "function {name} maps keys one by one and this router over a fixed snapshot has no directory to read them from"
                ))
            })?;
            dir.retrying(|d| d.key_shard(func_id, key))?
        };
        match found {
            Some(shard) => {
                lock(&self.keys).put(func_id, text, shard);
                Ok(shard)
            }
            None => Err(Error::Usage(format!(
                "key {key} is not mapped by the per-key function {name}: assign it first (`shardctl keys assign --function {name} KEY`, `Directory::assign_key`)"
            ))),
        }
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
        self.shard_by_id(self.resolve(func_id, key)?)
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
        let dir = self
            .directory
            .get_mut()
            .unwrap_or_else(|p| p.into_inner())
            .as_mut()
            .ok_or_else(|| {
                Error::Usage(
                    "a router over a fixed snapshot has no directory to take ids from".into(),
                )
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

/// A mutex's guard, whether or not a thread panicked holding it (the data stays usable:
/// a cache and a connection, each left whole between statements).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_cache_stays_within_its_capacity_and_keeps_recent_keys() {
        let mut c = KeyCache::new(10);
        for i in 0..100u32 {
            c.put(1, i.to_string(), i);
            assert!(c.len() <= 10, "{} entries", c.len());
            // A key used all along stays.
            c.put(1, "hot".into(), 7);
            assert_eq!(c.get(1, "hot"), Some(7));
        }
        assert_eq!(c.get(1, "0"), None);
        assert_eq!(c.get(1, "99"), Some(99));
        let mut changes = KeyChanges::new();
        changes.insert(1, Some(["99".to_string()].into_iter().collect()));
        assert_eq!(c.forget(&changes), 1);
        assert_eq!(c.get(1, "99"), None);
        assert_eq!(c.get(1, "hot"), Some(7));
        c.put(2, "x".into(), 3);
        changes.clear();
        changes.insert(1, None);
        c.forget(&changes);
        assert_eq!(c.get(1, "hot"), None);
        assert_eq!(c.get(2, "x"), Some(3));
        let mut none = KeyCache::new(0);
        none.put(1, "a".into(), 1);
        assert_eq!(none.get(1, "a"), None);
    }

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
