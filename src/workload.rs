//! A workload generator that writes through the directory's `Router` the way the chapter's
//! application does, one thread and one connection per key stream, so that one shard's
//! pause is its own.
//!
//! - **Streams.** By default one stream per shard of the function at the start. A stream is
//!   a key generator over that shard's key space at the start, not a binding to the shard:
//!   every write is routed through the stream's own `Router`, so after a split the keys of
//!   the new half go to the new shard. Range streams draw keys across `[lower bound, next
//!   lower bound)` (above the last bound: as wide as the range below it, or 100 000 keys),
//!   hash streams random keys whose MD5 falls in the shard's arc, list streams the shard's
//!   values. A split point inside a range is therefore crossed by every stream's keys.
//!   [`Options::keys`] replaces them by one stream per fixed key.
//! - **Tenants.** [`Options::tenants`] adds one stream per tenant key, writing only that
//!   key, a new row under it each time (the table is keyed by key and sequence number), and
//!   gives the tenants together their share of the rate: a few keys that hold many rows and
//!   take most writes, as the tenants of a multi-tenant application do, so that moving one
//!   (a list value, or a narrow range) is measured under its own load.
//! - **The retry rule.** A write that fails is retried until it is acknowledged or
//!   [`Options::write_timeout`] runs out (then it counts as lost). On an error
//!   [`crate::directory::router::is_refresh_error`] names (read-only, table or database
//!   gone, lost connection, the wrong-shard guard) the router re-reads the directory.
//! - **Fresh or stale routers.** A fresh router also re-reads the directory's version every
//!   [`Options::check_interval`]. A stale router ([`Options::stale_router`]) keeps the
//!   locations it loaded before the run and re-reads the directory only after such an
//!   error, as an application that trusts the servers to tell it does.
//! - **The check.** Every acknowledged write is recorded with the location (node, schema)
//!   it was written to; [`check`] then looks for each in the location where the directory
//!   now says its key lives. A write missing there is lost; one that was written to another
//!   location is a **wrong-shard write**: a shard that did not own the key acknowledged it
//!   (a write to the old location before the flip was copied and is found).

use crate::config::Inventory;
use crate::directory::router::is_refresh_mysql_error;
use crate::directory::{coverage, Coverage, Index, Key, KeyType, Router, Snapshot};
use crate::error::{Error, Result};
use crate::ident::Ident;
use crate::server::statements::{self, KeyKind};
use crate::server::{server_error_code, Server};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The table the workload writes, in the first schema of every shard.
pub const TABLE: &str = "shardctl_workload";

/// The width of the key space drawn above the last lower bound of a range function when
/// it has no range below to compare with.
const LAST_RANGE_SPAN: i64 = 100_000;

/// Workload settings.
#[derive(Debug, Clone)]
pub struct Options {
    /// The partition function whose shards are written.
    pub function: String,
    /// Writes per second, all streams together (each stream writes its share).
    pub rate: u32,
    /// How long one write may keep retrying before it counts as lost.
    pub write_timeout: Duration,
    /// Keep the locations loaded before the run; re-read the directory only after an
    /// error that says to ([`crate::directory::router::is_refresh_error`]).
    pub stale_router: bool,
    /// How often a fresh router asks the directory for its version (ignored when
    /// `stale_router`; a split's guards refuse what a router this late would misroute).
    pub check_interval: Duration,
    /// One stream per fixed key instead of one stream per shard over its key space.
    pub keys: Option<Vec<Key>>,
    /// Tenant streams beside the others, taking their share of the rate.
    pub tenants: Option<Tenants>,
}

/// The tenant mode: a few keys written far more often than the rest.
#[derive(Debug, Clone, PartialEq)]
pub struct Tenants {
    /// The tenants' keys, one stream each.
    pub keys: Vec<Key>,
    /// The share of all writes they take together, in (0, 1]; the other streams share the
    /// rest (at 1 only tenants are written).
    pub share: f64,
}

impl Options {
    /// 200 writes per second over the function's shards, writes retried for 60 s, a fresh
    /// router checking the directory every 500 ms.
    pub fn new(function: impl Into<String>) -> Options {
        Options {
            function: function.into(),
            rate: 200,
            write_timeout: Duration::from_secs(60),
            stale_router: false,
            check_interval: Duration::from_millis(500),
            keys: None,
            tenants: None,
        }
    }
}

/// What keys a stream writes.
#[derive(Debug, Clone, PartialEq)]
pub enum KeySpace {
    /// Integers drawn uniformly from `[lower, upper)`.
    IntRange {
        /// Inclusive.
        lower: i64,
        /// Exclusive.
        upper: i64,
    },
    /// Strings in `[lower, upper)`: the lower bound followed by a random suffix.
    StrRange {
        /// Inclusive.
        lower: String,
        /// Exclusive; None: unbounded.
        upper: Option<String>,
    },
    /// Random keys whose MD5 falls in the arc of shard `shard` at the start.
    Arc {
        /// The shard whose arc it is.
        shard: u32,
    },
    /// The listed values, drawn at random.
    Values(Vec<Key>),
    /// One key.
    Fixed(Key),
}

impl std::fmt::Display for KeySpace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KeySpace::IntRange { lower, upper } => write!(f, "[{lower}, {upper})"),
            KeySpace::StrRange {
                lower,
                upper: Some(u),
            } => write!(f, "[{lower:?}, {u:?})"),
            KeySpace::StrRange { lower, upper: None } => write!(f, "[{lower:?}, ∞)"),
            KeySpace::Arc { shard } => write!(f, "arc of shard {shard}"),
            KeySpace::Values(values) => {
                let v: Vec<String> = values.iter().map(|k| k.to_string()).collect();
                write!(f, "{{{}}}", v.join(", "))
            }
            KeySpace::Fixed(k) => write!(f, "{k}"),
        }
    }
}

/// One key stream: a key generator over the key space of one shard at the start.
#[derive(Debug, Clone, PartialEq)]
pub struct Stream {
    /// The shard its keys mapped to at the start.
    pub shard_at_start: u32,
    /// Its keys.
    pub space: KeySpace,
    /// Whether it writes a tenant ([`Options::tenants`]).
    pub tenant: bool,
}

/// One stream per shard of `function` in `snap`, each over the shard's whole key space.
pub fn streams(snap: &Snapshot, function: &str) -> Result<Vec<Stream>> {
    let func = snap.function(function)?.clone();
    let index = Index::new(snap);
    let mut out = Vec::new();
    let mut covers: Vec<(u32, Coverage)> = snap
        .shards_of(func.id)
        .map(|s| (s.id, coverage(snap, &func, s.id)))
        .collect();
    // Range shards in key order, so the last range can borrow the width of the one below.
    covers.sort_by(|a, b| match (&a.1, &b.1) {
        (Coverage::Range { lower: x, .. }, Coverage::Range { lower: y, .. }) => x.cmp(y),
        _ => a.0.cmp(&b.0),
    });
    let mut below: Option<i64> = None;
    for (shard, cov) in covers {
        let space = match cov {
            Coverage::Range {
                lower: Key::Int(lower),
                upper,
            } => {
                let upper = match upper {
                    Some(Key::Int(u)) => u,
                    _ => {
                        let span = below
                            .map(|b| (lower.saturating_sub(b)).max(1))
                            .unwrap_or(LAST_RANGE_SPAN);
                        lower.saturating_add(span)
                    }
                };
                below = Some(lower);
                KeySpace::IntRange { lower, upper }
            }
            Coverage::Range {
                lower: Key::Str(lower),
                upper,
            } => KeySpace::StrRange {
                lower,
                upper: upper.map(|u| u.to_string()),
            },
            Coverage::Arc { .. } => {
                let space = KeySpace::Arc { shard };
                if first_arc_key(&index, func.id, func.key_type, shard).is_none() {
                    crate::output::log(
                        1,
                        &format!("workload: no key found in the arc of shard {shard}; not written"),
                    );
                    continue;
                }
                space
            }
            Coverage::Values { values } => KeySpace::Values(values),
            Coverage::None => continue,
        };
        out.push(Stream {
            shard_at_start: shard,
            space,
            tenant: false,
        });
    }
    Ok(out)
}

/// One stream per key, each writing only that key, at the shard `router` routes it to (a
/// per-key function's keys are read from the directory: a router connected to it).
pub fn fixed_streams(router: &Router, function: &str, keys: &[Key]) -> Result<Vec<Stream>> {
    keys.iter()
        .map(|k| {
            Ok(Stream {
                shard_at_start: router.shard_for_function(function, k)?.id,
                space: KeySpace::Fixed(k.clone()),
                tenant: false,
            })
        })
        .collect()
}

/// The streams `opts` asks for over `snap`, each with the time between its writes: the
/// per-shard (or fixed-key) streams share the rate the tenants leave them, each tenant
/// stream writes an equal part of the tenants' share. Refuses a rate of 0, a tenant share
/// outside (0, 1], no tenant keys, and a key no shard maps.
pub fn plan_streams(router: &Router, opts: &Options) -> Result<Vec<(Stream, Duration)>> {
    if opts.rate == 0 {
        return Err(Error::Usage("the workload's rate must be above 0".into()));
    }
    let base = match &opts.keys {
        Some(keys) => fixed_streams(router, &opts.function, keys)?,
        None => streams(router.snapshot(), &opts.function)?,
    };
    let rate = f64::from(opts.rate);
    let mut out = Vec::new();
    let share = match &opts.tenants {
        None => 0.0,
        Some(t) => {
            if !(t.share > 0.0 && t.share <= 1.0) {
                return Err(Error::Usage(format!(
                    "the tenants' share of writes is {}: give a number above 0 and at most 1",
                    t.share
                )));
            }
            if t.keys.is_empty() {
                return Err(Error::Usage(
                    "the tenant mode needs at least one tenant key".into(),
                ));
            }
            let each = Duration::from_secs_f64(t.keys.len() as f64 / (rate * t.share));
            for mut s in fixed_streams(router, &opts.function, &t.keys).map_err(|e| {
                Error::Usage(format!(
                    "a tenant of function {} is not mapped: {e}",
                    opts.function
                ))
            })? {
                s.tenant = true;
                out.push((s, each));
            }
            t.share
        }
    };
    let rest = rate * (1.0 - share);
    if rest > 1e-9 && !base.is_empty() {
        let each = Duration::from_secs_f64(base.len() as f64 / rest);
        out.extend(base.into_iter().map(|s| (s, each)));
    }
    if out.is_empty() {
        return Err(Error::Usage(format!(
            "function {} has no shards to write to",
            opts.function
        )));
    }
    Ok(out)
}

/// A small deterministic generator (xorshift64*); the workload needs spread, not secrecy.
#[derive(Debug, Clone)]
struct Rng(u64);

impl Rng {
    fn seeded(salt: u64) -> Rng {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
        Rng((nanos ^ salt.wrapping_mul(0x9E37_79B9_7F4A_7C15)) | 1)
    }

    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next() % n
        }
    }
}

fn random_candidate(rng: &mut Rng, key_type: KeyType) -> Key {
    match key_type {
        KeyType::Int => Key::Int(rng.below(1_000_000_000) as i64),
        KeyType::String => Key::Str(format!("w{}", rng.below(1_000_000_000))),
    }
}

/// A key of the arc of `shard`: candidates in order (deterministic, for the check that
/// the arc has any key at all).
fn first_arc_key(index: &Index, func_id: u32, key_type: KeyType, shard: u32) -> Option<Key> {
    (0..1_000_000).find_map(|i| {
        let k = match key_type {
            KeyType::Int => Key::Int(i),
            KeyType::String => Key::Str(format!("w{i}")),
        };
        (index.lookup(func_id, &k).ok()? == shard).then_some(k)
    })
}

/// Draws a stream's keys.
struct KeyGen {
    space: KeySpace,
    index: Index,
    func_id: u32,
    key_type: KeyType,
    rng: Rng,
    /// For an arc: a key known to be in it, when random candidates keep missing.
    fallback: Option<Key>,
}

impl KeyGen {
    fn new(snap: &Snapshot, function: &str, space: KeySpace, salt: u64) -> Result<KeyGen> {
        let func = snap.function(function)?;
        let index = Index::new(snap);
        let fallback = match &space {
            KeySpace::Arc { shard } => first_arc_key(&index, func.id, func.key_type, *shard),
            _ => None,
        };
        Ok(KeyGen {
            space,
            index,
            func_id: func.id,
            key_type: func.key_type,
            rng: Rng::seeded(salt),
            fallback,
        })
    }

    fn next(&mut self) -> Key {
        match &self.space {
            KeySpace::IntRange { lower, upper } => {
                let width = (i128::from(*upper) - i128::from(*lower)).max(1) as u128;
                let off = (u128::from(self.rng.next()) << 64 | u128::from(self.rng.next())) % width;
                Key::Int((i128::from(*lower) + off as i128) as i64)
            }
            KeySpace::StrRange { lower, upper } => {
                const ALPHABET: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyz";
                for _ in 0..64 {
                    let len = 1 + self.rng.below(8) as usize;
                    let mut k = lower.clone();
                    for _ in 0..len {
                        k.push(ALPHABET[self.rng.below(ALPHABET.len() as u64) as usize] as char);
                    }
                    if k.len() <= 255 && upper.as_ref().is_none_or(|u| k.as_bytes() < u.as_bytes())
                    {
                        return Key::Str(k);
                    }
                }
                Key::Str(lower.clone())
            }
            KeySpace::Arc { shard } => {
                for _ in 0..256 {
                    let k = random_candidate(&mut self.rng, self.key_type);
                    if self.index.lookup(self.func_id, &k).ok() == Some(*shard) {
                        return k;
                    }
                }
                self.fallback
                    .clone()
                    .unwrap_or_else(|| random_candidate(&mut self.rng, self.key_type))
            }
            KeySpace::Values(values) => {
                values[self.rng.below(values.len() as u64) as usize].clone()
            }
            KeySpace::Fixed(k) => k.clone(),
        }
    }
}

/// One acknowledged write.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Ack {
    /// The key written.
    pub key: Key,
    /// Its sequence number (unique in the run).
    pub seq: u64,
    /// The stream that wrote it (index into [`Report::streams`]).
    pub stream: usize,
    /// The shard the router named for it when it was written.
    pub shard: u32,
    /// The node that acknowledged it.
    pub node: String,
    /// The schema it was written to.
    pub schema: String,
    /// When it was acknowledged.
    #[serde(skip)]
    pub at: Instant,
}

/// Per-key-stream figures.
#[derive(Debug, Clone, Default, Serialize)]
pub struct StreamReport {
    /// The keys this stream writes (its shard's key space at the start).
    pub keys: String,
    /// Whether it writes a tenant (a single key taking a share of the rate).
    pub tenant: bool,
    /// The shard its keys mapped to at the start.
    pub shard_at_start: u32,
    /// The shards that acknowledged its writes, in the order of their first write.
    pub shards_written: Vec<u32>,
    /// Acknowledged writes.
    pub acked: u64,
    /// Attempts that got an error (each was retried).
    pub failed_attempts: u64,
    /// Times its router re-read the directory and found a new version.
    pub reloads: u64,
    /// Writes given up after the write timeout.
    pub lost: u64,
    /// The longest time between two acknowledged writes of this stream, milliseconds.
    pub max_pause_ms: u64,
    /// When that longest pause began and ended.
    #[serde(skip)]
    pub longest_pause: Option<(Instant, Instant)>,
    /// After [`Report::check`]: acknowledged writes not found where the directory now
    /// says their key lives.
    pub missing: u64,
    /// After [`Report::check`]: of those, the ones a shard that does not own the key
    /// acknowledged (written to another location than the key's current one).
    pub wrong_shard_writes: u64,
}

/// What a run did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Report {
    /// Seconds it ran.
    pub seconds: f64,
    /// Whether the routers were stale ([`Options::stale_router`]).
    pub stale_router: bool,
    /// Acknowledged writes in all.
    pub acked: u64,
    /// Per key stream.
    pub streams: Vec<StreamReport>,
    /// Whether [`Report::check`] has filled `missing` and `wrong_shard_writes`.
    pub checked: bool,
    /// Acknowledged writes not found where the directory now says their key lives.
    pub missing: u64,
    /// Of those, the writes a shard that does not own the key acknowledged. Must be 0.
    pub wrong_shard_writes: u64,
    /// Every acknowledged write, in the order of acknowledgement.
    #[serde(skip)]
    pub acks: Vec<Ack>,
}

impl Report {
    /// Checks every acknowledged write ([`check`]) and fills the counters.
    pub fn check(&mut self, inv: &Inventory, function: &str) -> Result<Check> {
        let c = check(inv, function, &self.acks)?;
        for s in &mut self.streams {
            s.missing = 0;
            s.wrong_shard_writes = 0;
        }
        for a in &c.missing {
            if let Some(s) = self.streams.get_mut(a.stream) {
                s.missing += 1;
            }
        }
        for a in &c.wrong_shard {
            if let Some(s) = self.streams.get_mut(a.stream) {
                s.wrong_shard_writes += 1;
            }
        }
        self.missing = c.missing.len() as u64;
        self.wrong_shard_writes = c.wrong_shard.len() as u64;
        self.checked = true;
        Ok(c)
    }
}

fn key_value(k: &Key) -> mysql::Value {
    match k {
        Key::Int(i) => (*i).into(),
        Key::Str(s) => s.as_str().into(),
    }
}

/// The workload's table, as an identifier.
fn table() -> Ident {
    Ident::new("table", TABLE).expect("the workload table's name is a plain identifier")
}

fn app_connection(inv: &Inventory, node: &str) -> Result<Server> {
    let mut spec = crate::server::ConnectSpec::for_node(inv, inv.node(node)?)?;
    spec.credentials = inv.application_credentials(node)?;
    Server::connect(&spec)
}

/// Creates the workload table in the first schema of every shard of the function.
pub fn setup(inv: &Inventory, function: &str) -> Result<usize> {
    let router = Router::connect(inv)?;
    let snap = router.snapshot();
    let func = snap.function(function)?;
    let key = match func.key_type {
        KeyType::Int => KeyKind::Int,
        KeyType::String => KeyKind::Bytes,
    };
    let mut n = 0;
    for shard in snap.shards_of(func.id) {
        let Some(schema) = snap.shard_schemas(shard).into_iter().next() else {
            continue;
        };
        let schema = Ident::new("schema", &schema)?;
        let mut s = Server::connect_node(inv, &shard.node)?;
        s.exec(&statements::create_workload_table(&schema, &table(), key))?;
        n += 1;
    }
    Ok(n)
}

/// State the streams share.
struct Shared {
    stop: AtomicBool,
    /// The next sequence number. Starts at the wall clock in nanoseconds, so numbers are
    /// unique across runs and processes writing the same keys, and a duplicate (1062) can
    /// only be this run's own retried write.
    seq: AtomicU64,
}

type StreamResult = Result<(StreamReport, Vec<Ack>)>;

/// A workload running in background threads, one per stream.
pub struct Running {
    shared: Arc<Shared>,
    handles: Vec<std::thread::JoinHandle<StreamResult>>,
    started: Instant,
    stale_router: bool,
}

impl Running {
    /// Stops the workload (each stream finishes the write it is retrying) and returns its
    /// report.
    pub fn stop(mut self) -> Result<Report> {
        self.shared.stop.store(true, Ordering::SeqCst);
        let mut report = Report {
            stale_router: self.stale_router,
            ..Report::default()
        };
        let mut first_err = None;
        for h in self.handles.drain(..) {
            match h.join() {
                Ok(Ok((s, acks))) => {
                    report.streams.push(s);
                    report.acks.extend(acks);
                }
                Ok(Err(e)) => {
                    first_err.get_or_insert(e);
                }
                Err(_) => {
                    first_err.get_or_insert(Error::Config("a workload thread panicked".into()));
                }
            }
        }
        if let Some(e) = first_err {
            return Err(e);
        }
        report.seconds = self.started.elapsed().as_secs_f64();
        report.acks.sort_by_key(|a| a.at);
        report.acked = report.acks.len() as u64;
        Ok(report)
    }
}

impl Drop for Running {
    /// A workload dropped without [`Running::stop`] is told to stop (its threads end
    /// after the write they are on).
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
    }
}

/// Starts the workload: loads the directory, one router per stream (all loaded now,
/// before whatever the caller does next), and one thread per stream.
pub fn spawn(inv: Inventory, opts: Options) -> Result<Running> {
    if opts.rate == 0 {
        return Err(Error::Usage("the workload's rate must be above 0".into()));
    }
    let first = Router::connect(&inv)?;
    let snap = first.snapshot().clone();
    let streams = plan_streams(&first, &opts)?;
    let mut routers = Vec::with_capacity(streams.len());
    for _ in &streams {
        let mut r = Router::connect(&inv)?;
        r.set_check_interval(opts.check_interval);
        routers.push(r);
    }
    let shared = Arc::new(Shared {
        stop: AtomicBool::new(false),
        seq: AtomicU64::new(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(0),
        ),
    });
    let started = Instant::now();
    let mut handles = Vec::with_capacity(streams.len());
    for (i, ((stream, interval), router)) in streams.into_iter().zip(routers).enumerate() {
        let gen = KeyGen::new(&snap, &opts.function, stream.space.clone(), i as u64 + 1)?;
        let (inv, opts, shared) = (inv.clone(), opts.clone(), Arc::clone(&shared));
        let h = std::thread::Builder::new()
            .name(format!("workload-{i}"))
            .spawn(move || run_stream(i, &inv, router, stream, gen, &opts, &shared, interval))
            .map_err(|e| Error::io("cannot start a workload thread", e))?;
        handles.push(h);
    }
    Ok(Running {
        shared,
        handles,
        started,
        stale_router: opts.stale_router,
    })
}

/// Runs the workload until `stop` is set (or the process is interrupted) and returns its
/// report.
pub fn run(inv: &Inventory, opts: &Options, stop: &AtomicBool) -> Result<Report> {
    let running = spawn(inv.clone(), opts.clone())?;
    while !stop.load(Ordering::SeqCst) && !crate::signal::interrupted() {
        std::thread::sleep(Duration::from_millis(20));
    }
    running.stop()
}

/// Why an attempt failed.
struct Failure {
    /// The server's error number, if the server answered.
    code: Option<u16>,
    /// Whether the chapter's rule says to re-read the directory.
    refresh: bool,
    text: String,
}

/// Where an attempt wrote.
struct Written {
    shard: u32,
    node: String,
    schema: String,
}

/// One attempt to write `key` where `router` says it lives.
fn attempt(
    inv: &Inventory,
    router: &Router,
    function: &str,
    key: &Key,
    seq: u64,
    conns: &mut HashMap<String, Server>,
) -> std::result::Result<Written, (Failure, Option<Written>)> {
    let routing = |e: Error| {
        (
            Failure {
                code: None,
                // A shard the operator closed to writes: held, re-read, retried until the
                // write's deadline, as through a fence.
                refresh: matches!(e, Error::Unavailable { .. }),
                text: e.to_string(),
            },
            None,
        )
    };
    let shard = router
        .shard_to(crate::directory::Access::Write, function, key)
        .map_err(routing)?;
    let schema = router
        .snapshot()
        .shard_schemas(shard)
        .into_iter()
        .next()
        .ok_or_else(|| routing(Error::Usage(format!("shard {} has no schema", shard.id))))?;
    let written = Written {
        shard: shard.id,
        node: shard.node.clone(),
        schema: schema.clone(),
    };
    let schema = Ident::new("schema", &schema).map_err(routing)?;
    if !conns.contains_key(&written.node) {
        match app_connection(inv, &written.node) {
            Ok(s) => {
                conns.insert(written.node.clone(), s);
            }
            Err(e) => {
                // Cannot reach the node: a lost connection, as far as the rule goes.
                return Err((
                    Failure {
                        code: None,
                        refresh: true,
                        text: e.to_string(),
                    },
                    None,
                ));
            }
        }
    }
    let server = conns.get_mut(&written.node).expect("connection just made");
    let st = statements::insert_workload_row(&schema, &table(), key_value(key), seq);
    match server.try_rows(&st) {
        Ok(_) => Ok(written),
        Err(e) => {
            let code = server_error_code(&e);
            if code.is_none() {
                conns.remove(&written.node);
            }
            Err((
                Failure {
                    code,
                    refresh: is_refresh_mysql_error(&e),
                    text: e.to_string(),
                },
                Some(written),
            ))
        }
    }
}

/// One stream's loop: its own router, its own connections, its own pace.
#[allow(clippy::too_many_arguments)]
fn run_stream(
    idx: usize,
    inv: &Inventory,
    mut router: Router,
    stream: Stream,
    mut gen: KeyGen,
    opts: &Options,
    shared: &Shared,
    interval: Duration,
) -> StreamResult {
    let mut conns: HashMap<String, Server> = HashMap::new();
    let mut report = StreamReport {
        keys: stream.space.to_string(),
        tenant: stream.tenant,
        shard_at_start: stream.shard_at_start,
        ..StreamReport::default()
    };
    let mut acks = Vec::new();
    let mut last_ack: Option<Instant> = None;
    // Streams start spread over one interval rather than all at once.
    let mut next = Instant::now() + interval.mul_f64(idx as f64 / 8.0 % 1.0);
    while !shared.stop.load(Ordering::SeqCst) && !crate::signal::interrupted() {
        let now = Instant::now();
        if now < next {
            std::thread::sleep(next - now);
        } else if now - next > interval {
            // Behind (this stream was paused): go on at the rate, without a burst.
            next = now;
        }
        next += interval;
        let key = gen.next();
        let seq = shared.seq.fetch_add(1, Ordering::SeqCst);
        let deadline = Instant::now() + opts.write_timeout;
        loop {
            if !opts.stale_router {
                if let Ok(true) = router.maybe_refresh() {
                    report.reloads += 1;
                }
            }
            let result = attempt(inv, &router, &opts.function, &key, seq, &mut conns);
            let written = match result {
                Ok(w) => Some(w),
                // Our own earlier attempt that went through without its answer.
                Err((f, w)) if f.code == Some(1062) => w,
                Err((f, _)) => {
                    report.failed_attempts += 1;
                    if f.refresh {
                        if let Ok(true) = router.refresh() {
                            report.reloads += 1;
                        }
                    } else if !matches!(f.code, Some(1205) | Some(1213)) {
                        crate::output::log(
                            1,
                            &format!("workload: write of key {key} failed: {}", f.text),
                        );
                    }
                    if Instant::now() > deadline {
                        report.lost += 1;
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(2));
                    continue;
                }
            };
            let Some(w) = written else {
                break;
            };
            let t = Instant::now();
            report.acked += 1;
            if let Some(prev) = last_ack {
                let pause = (t - prev).as_millis() as u64;
                if pause > report.max_pause_ms || report.longest_pause.is_none() {
                    report.max_pause_ms = pause;
                    report.longest_pause = Some((prev, t));
                }
            }
            last_ack = Some(t);
            if !report.shards_written.contains(&w.shard) {
                report.shards_written.push(w.shard);
            }
            acks.push(Ack {
                key: key.clone(),
                seq,
                stream: idx,
                shard: w.shard,
                node: w.node,
                schema: w.schema,
                at: t,
            });
            break;
        }
    }
    Ok((report, acks))
}

/// The result of [`check`].
#[derive(Debug, Clone, Default, Serialize)]
pub struct Check {
    /// Acknowledged writes not found where the directory now says their key lives.
    pub missing: Vec<Ack>,
    /// Of those, the ones written to another location than their key's current one: a
    /// shard that did not own the key acknowledged them.
    pub wrong_shard: Vec<Ack>,
}

/// Checks that every acknowledged write is present where the directory now says its key
/// lives (node and first schema of its shard).
pub fn check(inv: &Inventory, function: &str, acks: &[Ack]) -> Result<Check> {
    let router = Router::connect(inv)?;
    // Current location -> the acknowledged writes whose key lives there.
    let mut by_location: BTreeMap<(String, String), Vec<&Ack>> = BTreeMap::new();
    for a in acks {
        let shard = router.shard_for_function(function, &a.key)?;
        let schema = router
            .snapshot()
            .shard_schemas(shard)
            .into_iter()
            .next()
            .unwrap_or_default();
        by_location
            .entry((shard.node.clone(), schema))
            .or_default()
            .push(a);
    }
    let mut out = Check::default();
    let mut conns: HashMap<String, Server> = HashMap::new();
    for ((node, schema), acks) in by_location {
        let lo = acks.iter().map(|a| a.seq).min().unwrap_or(0);
        let hi = acks.iter().map(|a| a.seq).max().unwrap_or(0);
        if !conns.contains_key(&node) {
            conns.insert(node.clone(), Server::connect_node(inv, &node)?);
        }
        let s = conns.get_mut(&node).expect("connection just made");
        let ident = Ident::new("schema", &schema)?;
        let rows = s.rows(&statements::workload_seqs_between(&ident, &table(), lo, hi))?;
        let present: HashSet<u64> = rows
            .into_iter()
            .filter_map(|r| mysql::from_row_opt::<u64>(r).ok())
            .collect();
        for a in acks {
            if !present.contains(&a.seq) {
                out.missing.push(a.clone());
                if a.node != node || a.schema != schema {
                    out.wrong_shard.push(a.clone());
                }
            }
        }
    }
    Ok(out)
}

/// The acknowledged writes missing where the directory now says their key lives
/// ([`check`]'s `missing`).
pub fn missing_acks(inv: &Inventory, function: &str, acks: &[Ack]) -> Result<Vec<Ack>> {
    Ok(check(inv, function, acks)?.missing)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::directory::model::*;

    fn snap() -> Snapshot {
        let f = |id, name: &str, t, k| Function {
            id,
            name: name.into(),
            sharding_type: t,
            key_type: k,
        };
        Snapshot {
            functions: vec![
                f(1, "r", ShardingType::Range, KeyType::Int),
                f(2, "h", ShardingType::Hash, KeyType::Int),
                f(3, "l", ShardingType::List, KeyType::String),
                f(4, "s", ShardingType::Range, KeyType::String),
            ],
            shards: [
                (1, 1),
                (2, 1),
                (10, 2),
                (11, 2),
                (20, 3),
                (21, 3),
                (30, 4),
                (31, 4),
            ]
            .into_iter()
            .map(|(id, func_id)| Shard {
                id,
                func_id,
                node: "n".into(),
                host: "h".into(),
                port: 1,
                state: ShardState::Online,
                availability: crate::directory::Availability::Available,
                version: 1,
            })
            .collect(),
            ranges: vec![
                RangeRow {
                    func_id: 1,
                    lower_bound: Key::Int(1000),
                    shard_id: 2,
                },
                RangeRow {
                    func_id: 1,
                    lower_bound: Key::Int(0),
                    shard_id: 1,
                },
                RangeRow {
                    func_id: 4,
                    lower_bound: Key::Str("a".into()),
                    shard_id: 30,
                },
                RangeRow {
                    func_id: 4,
                    lower_bound: Key::Str("m".into()),
                    shard_id: 31,
                },
            ],
            points: vec![
                HashRow {
                    func_id: 2,
                    point: RingPoint(100),
                    shard_id: 10,
                },
                HashRow {
                    func_id: 2,
                    point: RingPoint(u128::MAX / 3),
                    shard_id: 11,
                },
            ],
            lists: ["a", "b", "c"]
                .iter()
                .map(|v| ListRow {
                    func_id: 3,
                    value: Key::Str(v.to_string()),
                    shard_id: if *v == "c" { 21 } else { 20 },
                })
                .collect(),
            ..Snapshot::default()
        }
    }

    fn draw(s: &Snapshot, function: &str, n: usize) -> Vec<(u32, Vec<Key>)> {
        streams(s, function)
            .unwrap()
            .into_iter()
            .enumerate()
            .map(|(i, st)| {
                let mut g = KeyGen::new(s, function, st.space, i as u64).unwrap();
                (st.shard_at_start, (0..n).map(|_| g.next()).collect())
            })
            .collect()
    }

    #[test]
    fn every_stream_draws_keys_of_its_shard_at_the_start() {
        let s = snap();
        let r = Router::from_snapshot(s.clone());
        for f in ["r", "h", "l", "s"] {
            let drawn = draw(&s, f, 500);
            assert_eq!(drawn.len(), 2, "{f}: one stream per shard");
            for (shard, keys) in drawn {
                for k in keys {
                    assert_eq!(r.shard_for_function(f, &k).unwrap().id, shard, "{f} {k}");
                }
            }
        }
    }

    #[test]
    fn range_keys_cover_the_whole_range_and_cross_any_split_point() {
        let s = snap();
        let drawn = draw(&s, "r", 2000);
        let first = &drawn.iter().find(|(id, _)| *id == 1).unwrap().1;
        // [0, 1000): both sides of a split at 500, and near both ends.
        let ints: Vec<i64> = first
            .iter()
            .map(|k| match k {
                Key::Int(i) => *i,
                _ => unreachable!(),
            })
            .collect();
        assert!(ints.iter().any(|&i| i < 100));
        assert!(ints.iter().any(|&i| i >= 900));
        assert!(ints.iter().filter(|&&i| i < 500).count() > 500);
        assert!(ints.iter().filter(|&&i| i >= 500).count() > 500);
        // Above the last bound: as wide as the range below, [1000, 2000).
        let last = &drawn.iter().find(|(id, _)| *id == 2).unwrap().1;
        assert!(last
            .iter()
            .all(|k| matches!(k, Key::Int(i) if (1000..2000).contains(i))));
        assert!(last.iter().any(|k| matches!(k, Key::Int(i) if *i >= 1500)));
    }

    #[test]
    fn hash_keys_fall_anywhere_in_the_arc_and_lists_write_every_value() {
        let s = snap();
        let drawn = draw(&s, "h", 2000);
        // Shard 10's arc is (100, MAX/3]: keys hashing in both halves of it.
        let ten = &drawn.iter().find(|(id, _)| *id == 10).unwrap().1;
        let mid = u128::MAX / 6;
        assert!(ten.iter().any(|k| RingPoint::of_key(k).0 < mid));
        assert!(ten.iter().any(|k| RingPoint::of_key(k).0 > mid));
        let distinct: HashSet<&Key> = ten.iter().collect();
        assert!(distinct.len() > 1000, "{}", distinct.len());
        let lists = draw(&s, "l", 200);
        let twenty: HashSet<&Key> = lists
            .iter()
            .find(|(id, _)| *id == 20)
            .unwrap()
            .1
            .iter()
            .collect();
        assert_eq!(twenty.len(), 2, "every value of the shard: {twenty:?}");
    }

    #[test]
    fn tenants_take_their_share_of_the_rate_and_the_other_streams_the_rest() {
        let s = snap();
        let a = Key::Str("a".into());
        let opts = Options {
            rate: 100,
            tenants: Some(Tenants {
                keys: vec![a.clone()],
                share: 0.8,
            }),
            ..Options::new("l")
        };
        let planned = plan_streams(&Router::from_snapshot(s.clone()), &opts).unwrap();
        let tenants: Vec<&(Stream, Duration)> = planned.iter().filter(|(s, _)| s.tenant).collect();
        assert_eq!(tenants.len(), 1);
        assert_eq!(tenants[0].0.space, KeySpace::Fixed(a.clone()));
        assert_eq!(tenants[0].0.shard_at_start, 20);
        // 80 writes a second for the tenant, 20 for the two list shards' streams.
        assert_eq!(tenants[0].1, Duration::from_micros(12_500));
        assert_eq!(planned.len(), 3);
        assert!(planned
            .iter()
            .filter(|(s, _)| !s.tenant)
            .all(|(_, d)| *d == Duration::from_millis(100)));
        let per_second: f64 = planned.iter().map(|(_, d)| 1.0 / d.as_secs_f64()).sum();
        assert!((per_second - 100.0).abs() < 1e-6, "{per_second}");
        // All of the rate: the tenants alone.
        let only = Options {
            tenants: Some(Tenants {
                keys: vec![a.clone(), Key::Str("c".into())],
                share: 1.0,
            }),
            ..opts.clone()
        };
        let planned = plan_streams(&Router::from_snapshot(s.clone()), &only).unwrap();
        assert_eq!(planned.len(), 2);
        assert!(planned
            .iter()
            .all(|(s, d)| s.tenant && *d == Duration::from_millis(20)));
        for (share, keys, says) in [
            (0.0, vec![a.clone()], "give a number above 0"),
            (1.5, vec![a.clone()], "give a number above 0"),
            (f64::NAN, vec![a.clone()], "give a number above 0"),
            (0.5, vec![], "at least one tenant key"),
            (
                0.5,
                vec![Key::Str("zz".into())],
                "a tenant of function l is not mapped",
            ),
        ] {
            let bad = Options {
                tenants: Some(Tenants { keys, share }),
                ..opts.clone()
            };
            let e = plan_streams(&Router::from_snapshot(s.clone()), &bad).unwrap_err();
            assert!(matches!(e, Error::Usage(_)), "{e}");
            assert!(e.to_string().contains(says), "{e}");
        }
    }

    #[test]
    fn fixed_streams_write_their_keys() {
        let s = snap();
        let st = fixed_streams(
            &Router::from_snapshot(s.clone()),
            "r",
            &[Key::Int(5), Key::Int(5000)],
        )
        .unwrap();
        assert_eq!(
            st.iter().map(|s| s.shard_at_start).collect::<Vec<_>>(),
            vec![1, 2]
        );
        let mut g = KeyGen::new(&s, "r", st[1].space.clone(), 0).unwrap();
        assert_eq!(g.next(), Key::Int(5000));
    }
}
