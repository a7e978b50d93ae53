//! A workload generator that writes through the directory's `Router` the way the chapter's
//! application does: on a read-only (1290), table-doesn't-exist (1146), unknown-database
//! (1049) or lost-connection error it looks the shard up again and retries. It records
//! every acknowledged write and, per shard, the longest pause between acknowledged writes.

use crate::config::Inventory;
use crate::directory::{coverage, Coverage, Key, KeyType, Router, ShardingType, Snapshot};
use crate::error::{Error, Result};
use crate::ident::Ident;
use crate::server::statements::{self, KeyKind};
use crate::server::{server_error_code, Server};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The table the workload writes, in the first schema of every shard.
pub const TABLE: &str = "shardctl_workload";

/// Errors after which the chapter's application looks the shard up again.
const RETRY_CODES: [u16; 4] = [1290, 1146, 1049, 1036];

/// Workload settings.
#[derive(Debug, Clone)]
pub struct Options {
    /// The partition function whose shards are written.
    pub function: String,
    /// Writes per second, all shards together.
    pub rate: u32,
    /// How long one write may keep retrying before it counts as failed.
    pub write_timeout: Duration,
}

/// One acknowledged write.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Ack {
    /// The key written.
    pub key: Key,
    /// Its sequence number.
    pub seq: u64,
}

/// Per-key-stream figures.
#[derive(Debug, Clone, Default, Serialize)]
pub struct StreamReport {
    /// The key this stream writes (it maps to one shard).
    pub key: String,
    /// The shard it mapped to at the start.
    pub shard_at_start: u32,
    /// Acknowledged writes.
    pub acked: u64,
    /// Attempts that got an error (each was retried).
    pub failed_attempts: u64,
    /// Writes given up after the write timeout.
    pub lost: u64,
    /// The longest time between two acknowledged writes, milliseconds.
    pub max_pause_ms: u64,
}

/// What a run did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Report {
    /// Seconds it ran.
    pub seconds: f64,
    /// Acknowledged writes in all.
    pub acked: u64,
    /// Per key stream (one per shard at the start).
    pub streams: Vec<StreamReport>,
    /// Every acknowledged write.
    #[serde(skip)]
    pub acks: Vec<Ack>,
}

/// Finds a key mapping to each shard of the function: the range's lower bound, the first
/// list value, or for a hash ring the first candidate key that hashes into the shard's arc.
pub fn keys_per_shard(snap: &Snapshot, function: &str) -> Result<Vec<(u32, Key)>> {
    let func = snap.function(function)?.clone();
    let router = Router::from_snapshot(snap.clone());
    let mut out = Vec::new();
    for shard in snap.shards_of(func.id) {
        let key = match coverage(snap, &func, shard.id) {
            Coverage::Range { lower, .. } => Some(lower),
            Coverage::Values { values } => values.first().cloned(),
            Coverage::Arc { .. } => (0..200_000).find_map(|i| {
                let k = match func.key_type {
                    KeyType::Int => Key::Int(i),
                    KeyType::String => Key::Str(format!("w{i}")),
                };
                (router.shard_for_function(function, &k).ok()?.id == shard.id).then_some(k)
            }),
            Coverage::None => None,
        };
        if let Some(k) = key {
            out.push((shard.id, k));
        }
    }
    if func.sharding_type == ShardingType::Hash && out.is_empty() {
        return Err(Error::Usage(format!("function {function} has no shards")));
    }
    Ok(out)
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

/// A workload running in a background thread.
pub struct Running {
    stop: Arc<AtomicBool>,
    handle: std::thread::JoinHandle<Result<Report>>,
}

impl Running {
    /// Stops the workload and returns its report.
    pub fn stop(self) -> Result<Report> {
        self.stop.store(true, Ordering::SeqCst);
        self.handle
            .join()
            .map_err(|_| Error::Config("the workload thread panicked".into()))?
    }
}

/// Starts the workload in a background thread.
pub fn spawn(inv: Inventory, opts: Options) -> Result<Running> {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    let mut router = Router::connect(&inv)?;
    router.set_check_interval(Duration::from_millis(500));
    let streams = keys_per_shard(router.snapshot(), &opts.function)?;
    let handle = std::thread::Builder::new()
        .name("workload".into())
        .spawn(move || run(&inv, router, streams, &opts, &flag))
        .map_err(|e| Error::io("cannot start the workload thread", e))?;
    Ok(Running { stop, handle })
}

/// Runs the workload until `stop` is set (or the process is interrupted).
pub fn run(
    inv: &Inventory,
    mut router: Router,
    streams: Vec<(u32, Key)>,
    opts: &Options,
    stop: &AtomicBool,
) -> Result<Report> {
    if streams.is_empty() {
        return Err(Error::Usage(format!(
            "function {} has no shards to write to",
            opts.function
        )));
    }
    let started = Instant::now();
    let mut conns: HashMap<String, Server> = HashMap::new();
    let mut report = Report {
        streams: streams
            .iter()
            .map(|(id, k)| StreamReport {
                key: k.to_string(),
                shard_at_start: *id,
                ..Default::default()
            })
            .collect(),
        ..Report::default()
    };
    let mut last_ack: Vec<Option<Instant>> = vec![None; streams.len()];
    let interval = Duration::from_secs_f64(1.0 / f64::from(opts.rate.max(1)));
    let mut next = Instant::now();
    // Unique across runs and processes writing the same keys: the wall clock in
    // nanoseconds, so a duplicate (1062) can only be this run's own retried write.
    let mut seq: u64 = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    let mut i = 0usize;
    while !stop.load(Ordering::SeqCst) && !crate::signal::interrupted() {
        let now = Instant::now();
        if now < next {
            std::thread::sleep(next - now);
        }
        next += interval;
        let idx = i % streams.len();
        i += 1;
        seq += 1;
        let key = &streams[idx].1;
        let deadline = Instant::now() + opts.write_timeout;
        loop {
            let _ = router.maybe_refresh();
            let attempt = (|| -> std::result::Result<(), Option<u16>> {
                let shard = router
                    .shard_for_function(&opts.function, key)
                    .map_err(|_| None)?;
                let schema = router
                    .snapshot()
                    .shard_schemas(shard)
                    .into_iter()
                    .next()
                    .ok_or(None)?;
                let schema = Ident::new("schema", &schema).map_err(|_| None)?;
                let node = shard.node.clone();
                if !conns.contains_key(&node) {
                    let s = app_connection(inv, &node).map_err(|_| None)?;
                    conns.insert(node.clone(), s);
                }
                let server = conns.get_mut(&node).expect("connection just made");
                let st = statements::insert_workload_row(&schema, &table(), key_value(key), seq);
                match server.try_rows(&st) {
                    Ok(_) => Ok(()),
                    Err(e) => {
                        let code = server_error_code(&e);
                        if code.is_none() {
                            conns.remove(&node);
                        }
                        Err(code)
                    }
                }
            })();
            match attempt {
                Ok(()) | Err(Some(1062)) => {
                    let t = Instant::now();
                    let s = &mut report.streams[idx];
                    s.acked += 1;
                    if let Some(prev) = last_ack[idx] {
                        s.max_pause_ms = s.max_pause_ms.max((t - prev).as_millis() as u64);
                    }
                    last_ack[idx] = Some(t);
                    report.acks.push(Ack {
                        key: key.clone(),
                        seq,
                    });
                    break;
                }
                Err(code) => {
                    report.streams[idx].failed_attempts += 1;
                    if code.is_some_and(|c| !RETRY_CODES.contains(&c))
                        && code != Some(1213)
                        && code != Some(1205)
                    {
                        crate::output::log(1, &format!("workload: write error {code:?}"));
                    }
                    let _ = router.refresh();
                    if Instant::now() > deadline {
                        report.streams[idx].lost += 1;
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(2));
                }
            }
        }
    }
    report.seconds = started.elapsed().as_secs_f64();
    report.acked = report.acks.len() as u64;
    Ok(report)
}

/// Checks that every acknowledged write is present on the shard the directory now maps
/// its key to. Returns the writes that are missing.
pub fn missing_acks(inv: &Inventory, function: &str, acks: &[Ack]) -> Result<Vec<Ack>> {
    let router = Router::connect(inv)?;
    let mut by_key: BTreeMap<Key, Vec<u64>> = BTreeMap::new();
    for a in acks {
        by_key.entry(a.key.clone()).or_default().push(a.seq);
    }
    let mut missing = Vec::new();
    for (key, seqs) in by_key {
        let shard = router.shard_for_function(function, &key)?;
        let schema = router
            .snapshot()
            .shard_schemas(shard)
            .into_iter()
            .next()
            .unwrap_or_default();
        let schema = Ident::new("schema", &schema)?;
        let mut s = Server::connect_node(inv, &shard.node)?;
        let rows = s.rows(&statements::workload_seqs(
            &schema,
            &table(),
            key_value(&key),
        ))?;
        let present: std::collections::HashSet<u64> = rows
            .into_iter()
            .filter_map(|r| mysql::from_row_opt::<u64>(r).ok())
            .collect();
        for q in seqs {
            if !present.contains(&q) {
                missing.push(Ack {
                    key: key.clone(),
                    seq: q,
                });
            }
        }
    }
    Ok(missing)
}
