//! Cut-over at any size (issue 10, item 5) on a real 3-node sandbox, every figure in one run:
//! - the write pause of the moving shard for `move` under the shard fence and under the
//!   read-only fence, and for `split`, at several shard sizes (sysbench-like rows of about
//!   200 bytes): the operation's own `fence_millis` (journal) next to the longest pause the
//!   workload saw on that shard;
//! - a neighbour shard on the source node, written by its own workload thread: failed
//!   writes and longest pause;
//! - verification time as a share of copy time (the journal's `backup` and `verify` step
//!   durations) and the time spent under the fence in `confirm`.
//!
//! Workload: the library's `shardctl::workload::run` with the chapter's retry rule, 400
//! writes/s to the moving shard and 100 writes/s to the neighbour on the source node (each
//! its own thread, so one shard's retries do not delay the other's writes).
//!
//! Run: `cargo bench --bench cutover` (prints Markdown for docs/BENCHMARKS.md). For a quick
//! look: `CUTOVER_SIZES=10000 CUTOVER_RUNS=2 CUTOVER_SPLIT_SIZES=10000 cargo bench --bench cutover`.
//! - `CUTOVER_SIZES` (default `10000,1000000,5000000`): rows per shard;
//! - `CUTOVER_RUNS` (default 5): moves per fence and size;
//! - `CUTOVER_RUNS_LARGE` (default `CUTOVER_RUNS`): moves per fence for sizes above 1,000,000;
//! - `CUTOVER_SPLIT_SIZES` (default `10000,1000000`): shards that are split after their moves,
//!   then both halves split again (three splits per size);
//! - `CUTOVER_SPLIT_DEPTH` (default 2): 1 splits only the shard, 2 also its halves;
//! - `CUTOVER_BUFFER_POOL` (default `1G`): each server's InnoDB buffer pool;
//! - `CUTOVER_FENCES` (default `shard,read-only,switch`): the fences each size's moves run
//!   under;
//! - `CUTOVER_SPLIT_FENCES` (default `shard,switch`): the fences the splits take in turn;
//! - `CUTOVER_TABLES` (default 0): small sharded tables added beside `sbtest` and the
//!   workload's table (200 rows each per measured shard), to measure how the pause grows
//!   with the number of tables: `CUTOVER_TABLES=298` makes shards of 300 tables;
//! - `CUTOVER_TRACE=DIR` (an existing directory): each operation runs with `-v --log-file
//!   DIR/<n>-<kind>.log` (every statement with its time and node), and the bench prints
//!   when each workload's longest pause began and ended (and its failed attempts) beside
//!   each step's start and end, to find which statements a pause waited on; the workload
//!   logs its failed writes other than the guards' refusals.

mod smoke;
mod sysbench;

use shardctl::config::Inventory;
use shardctl::directory::journal::{OpKind, OperationRecord};
use shardctl::directory::{Directory, Key, Router};
use shardctl::server::Server;
use shardctl::workload::{self, Options, Report};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use sysbench::{add_shard, env_list, env_num, exec, load_rows, sh, shardctl, FUNCTION};

const MOVING_RATE: u32 = 400;
const NEIGHBOUR_RATE: u32 = 100;
/// The workload's function and the logical schema.
/// Each size's shard starts at `(index + 1) * SPACING`.
const SPACING: i64 = 100_000_000;

fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    if v.is_empty() {
        return f64::NAN;
    }
    v[v.len() / 2]
}

fn env_words(name: &str, default: &str) -> Vec<String> {
    std::env::var(name)
        .unwrap_or_else(|_| default.to_string())
        .split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

/// A workload thread over chosen key streams.
struct Load {
    stop: Arc<AtomicBool>,
    handle: std::thread::JoinHandle<shardctl::Result<Report>>,
}

impl Load {
    fn start(inv: &Inventory, keys: Vec<Key>, rate: u32) -> Load {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let inv = inv.clone();
        let handle = std::thread::spawn(move || {
            let opts = Options {
                rate,
                keys: Some(keys),
                check_interval: Duration::from_millis(500),
                ..Options::new(FUNCTION)
            };
            workload::run(&inv, &opts, &flag)
        });
        Load { stop, handle }
    }

    fn stop(self) -> Report {
        self.stop.store(true, Ordering::SeqCst);
        self.handle.join().unwrap().unwrap()
    }
}

/// One measured operation.
#[derive(Debug, Clone)]
struct Run {
    /// Rows in the shard when it moved or split.
    rows: u64,
    /// `shard`, `read-only` or `split`.
    kind: String,
    op: u64,
    fence_ms: u64,
    pause_ms: u64,
    lost: u64,
    neighbour_pause_ms: u64,
    neighbour_failed: u64,
    /// Step durations by name (the two `wait` steps as `wait` and `wait-final`).
    steps: BTreeMap<String, u64>,
    wall_s: f64,
}

impl Run {
    fn step(&self, name: &str) -> u64 {
        self.steps.get(name).copied().unwrap_or(0)
    }

    /// Milliseconds of the steps from `lock` to `unlock`, both included.
    fn in_fence_steps(&self) -> u64 {
        [
            "lock",
            "wait-final",
            "confirm",
            "flip",
            "drop-source",
            "guard",
            "unlock",
        ]
        .iter()
        .map(|s| self.step(s))
        .sum()
    }
}

/// The newest move or split in the journal (a split's prunes are operations of their own).
fn latest_op(inv: &Inventory) -> OperationRecord {
    let mut d = Directory::connect(inv).unwrap();
    d.operations(None)
        .unwrap()
        .into_iter()
        .filter(|o| matches!(o.kind, OpKind::Move | OpKind::Split))
        .max_by_key(|o| o.id)
        .unwrap()
}

struct Fleet {
    inv: Inventory,
    inv_path: std::path::PathBuf,
    /// The neighbour shard (id, key) on each node.
    neighbours: BTreeMap<String, (u32, Key)>,
}

impl Fleet {
    fn node_of(&self, shard: u32) -> String {
        let r = Router::connect(&self.inv).unwrap();
        let s = r.snapshot();
        let node = s
            .shards_of(s.function(FUNCTION).unwrap().id)
            .find(|x| x.id == shard)
            .unwrap()
            .node
            .clone();
        node
    }

    fn shard_at(&self, key: i64) -> u32 {
        Router::connect(&self.inv)
            .unwrap()
            .shard_for_function(FUNCTION, &Key::Int(key))
            .unwrap()
            .id
    }

    /// Runs `args` (a move or split of `shard`, whose workload key is `key`) under the
    /// workload and collects its figures.
    fn measure(&self, shard: u32, key: i64, rows: u64, kind: &str, args: &[&str]) -> Run {
        let source = self.node_of(shard);
        let neighbour = self.neighbours[&source].clone();
        let moving = Load::start(&self.inv, vec![Key::Int(key)], MOVING_RATE);
        let near = Load::start(&self.inv, vec![neighbour.1], NEIGHBOUR_RATE);
        std::thread::sleep(Duration::from_millis(1500));
        let trace = std::env::var_os("CUTOVER_TRACE").map(std::path::PathBuf::from);
        let log = trace.as_ref().map(|dir| {
            let n = std::fs::read_dir(dir).map_or(0, |d| d.count());
            dir.join(format!("{n}-{}.log", kind.replace(' ', "-")))
        });
        let mut traced: Vec<&str> = Vec::new();
        if let Some(log) = &log {
            traced.extend([
                "-v",
                "--log-file",
                log.to_str().unwrap(),
                "--output",
                "json",
            ]);
        }
        traced.extend(args);
        let (t, started_at) = (Instant::now(), std::time::SystemTime::now());
        let out = shardctl(&self.inv_path, &traced);
        let wall_s = t.elapsed().as_secs_f64();
        std::thread::sleep(Duration::from_millis(1500));
        let (m, n) = (moving.stop(), near.stop());
        if let Some(log) = &log {
            // Where the pauses fell among the steps, on the clock of the statement log.
            let at = |i: Instant| {
                shardctl::clock::rfc3339(match i.checked_duration_since(t) {
                    Some(d) => started_at + d,
                    None => started_at - t.duration_since(i),
                })
            };
            for (who, r) in [("moving shard's key", &m), ("neighbour's key", &n)] {
                if let Some((from, to)) = r.streams[0].longest_pause {
                    eprintln!(
                        "{kind}: longest pause of the {who}: {} to {} ({} ms); {} failed attempts, {} directory reloads",
                        at(from),
                        at(to),
                        r.streams[0].max_pause_ms,
                        r.streams[0].failed_attempts,
                        r.streams[0].reloads
                    );
                }
            }
            for line in out.lines() {
                let v: serde_json::Value = serde_json::from_str(line).unwrap_or_default();
                if matches!(v["event"].as_str(), Some("step_started" | "step_done")) {
                    eprintln!(
                        "{kind}: {} {} {} {}",
                        v["at"].as_str().unwrap_or(""),
                        v["event"].as_str().unwrap_or(""),
                        v["name"].as_str().unwrap_or(""),
                        v["elapsed_ms"]
                    );
                }
            }
            eprintln!("{kind}: every statement with its time in {}", log.display());
        }
        for r in [&m, &n] {
            let missing = workload::missing_acks(&self.inv, FUNCTION, &r.acks).unwrap();
            assert!(missing.is_empty(), "{kind}: lost writes {missing:?}");
        }
        let op = latest_op(&self.inv);
        let mut steps = BTreeMap::new();
        let mut fence_ms = None;
        let mut waits = 0;
        for s in &op.steps {
            let name = if s.name == "wait" {
                waits += 1;
                if waits == 1 {
                    "wait".to_string()
                } else {
                    "wait-final".to_string()
                }
            } else {
                s.name.clone()
            };
            let mut millis = s.millis.unwrap_or(0);
            if s.name == "unlock" {
                fence_ms = s.outputs["fence_millis"].as_u64();
                // The old copy's trash is dropped within the step, once the fence is lifted.
                let trash = s.outputs["trash_drop_millis"].as_u64().unwrap_or(0);
                millis = millis.saturating_sub(trash);
                *steps.entry("drop-trash".to_string()).or_insert(0) += trash;
            }
            *steps.entry(name).or_insert(0) += millis;
        }
        let run = Run {
            rows,
            kind: kind.to_string(),
            op: op.id,
            fence_ms: fence_ms.expect("the unlock step reports fence_millis"),
            pause_ms: m.streams[0].max_pause_ms,
            lost: m.streams[0].lost,
            neighbour_pause_ms: n.streams[0].max_pause_ms,
            neighbour_failed: n.streams[0].failed_attempts + n.streams[0].lost,
            steps,
            wall_s,
        };
        eprintln!(
            "op {} {kind} {rows} rows {source}: fence {} ms, pause {} ms, neighbour {} ms ({} failed), wall {:.1} s, steps {:?}",
            run.op,
            run.fence_ms,
            run.pause_ms,
            run.neighbour_pause_ms,
            run.neighbour_failed,
            run.wall_s,
            run.steps
        );
        run
    }
}

fn setup(sizes: &[u64], extra_tables: u64) -> (shardctl::sandbox::Sandbox, Fleet, Vec<u32>) {
    let (sb, inv_path, inv) = sysbench::start(&buffer_pool(), extra_tables);
    // Neighbours: a small shard on each node (ranges below the measured shards).
    let mut bounds: Vec<(String, i64)> = vec![("node1".into(), 0), ("node2".into(), 1_000_000)];
    for (i, _) in sizes.iter().enumerate() {
        bounds.push(("node1".into(), (i as i64 + 1) * SPACING));
    }
    for (node, lb) in &bounds {
        add_shard(&inv_path, node, *lb);
    }
    let fleet = Fleet {
        inv: inv.clone(),
        inv_path: inv_path.clone(),
        neighbours: BTreeMap::new(),
    };
    let mut neighbours = BTreeMap::new();
    for (node, lb) in &bounds[..2] {
        neighbours.insert(node.clone(), (fleet.shard_at(*lb), Key::Int(*lb)));
    }
    let fleet = Fleet {
        neighbours,
        ..fleet
    };
    // Rows: ~200 bytes each (id, k, 120 + 60 characters), loaded unlogged in batches.
    let mut ids = Vec::new();
    for (i, &rows) in sizes.iter().enumerate() {
        let lb = (i as i64 + 1) * SPACING;
        let id = fleet.shard_at(lb);
        ids.push(id);
        let t = Instant::now();
        let mut s = load_rows(&inv, "node1", id, lb, rows);
        for i in 1..=extra_tables {
            exec(&mut s, &format!(
                "INSERT INTO sb_{id}.t{i} SELECT {lb} + seq * 5, seq, MD5(seq) FROM sb_{id}.seq_1_to_200"
            ));
        }
        eprintln!(
            "loaded {rows} rows into sb_{id} in {:.1} s",
            t.elapsed().as_secs_f64()
        );
    }
    for (_, lb) in &bounds[..2] {
        let id = fleet.shard_at(*lb);
        let node = fleet.node_of(id);
        let mut s = Server::connect_node(&inv, &node).unwrap();
        exec(&mut s, &format!(
            "INSERT INTO sb_{id}.sbtest SELECT {lb} + seq, seq, MD5(seq), MD5(seq) FROM sb_{id}.seq_0_to_999"
        ));
    }
    (sb, fleet, ids)
}

fn each(v: &[u64]) -> String {
    v.iter()
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

fn med(v: &[u64]) -> f64 {
    median(&v.iter().map(|&x| x as f64).collect::<Vec<_>>())
}

/// Each server's InnoDB buffer pool (`CUTOVER_BUFFER_POOL`, default 1G): the sandbox's
/// 64M cannot hold a 5,000,000-row shard's secondary index, which makes the copy (not the
/// cut-over) disk-bound.
fn buffer_pool() -> String {
    std::env::var("CUTOVER_BUFFER_POOL").unwrap_or_else(|_| smoke::or("64M", "1G").into())
}

fn main() {
    let sizes = env_list("CUTOVER_SIZES", smoke::or("1000", "10000,1000000,5000000"));
    let runs = env_num("CUTOVER_RUNS", smoke::or(1, 5)) as usize;
    let runs_large = env_num("CUTOVER_RUNS_LARGE", runs as u64) as usize;
    let split_sizes = env_list("CUTOVER_SPLIT_SIZES", smoke::or("1000", "10000,1000000"));
    let depth = env_num("CUTOVER_SPLIT_DEPTH", smoke::or(1, 2));
    let fences = env_words("CUTOVER_FENCES", "shard,read-only,switch");
    let split_fences = env_words("CUTOVER_SPLIT_FENCES", "shard,switch");
    let extra_tables = env_num("CUTOVER_TABLES", 0);
    if std::env::var_os("CUTOVER_TRACE").is_some() {
        // The workload logs each failed write that is not a refusal sending it to the
        // directory (a lock wait, a lost connection), with its time.
        shardctl::output::init(1, shardctl::output::ColorChoice::Never);
    }
    let started = Instant::now();
    let (_sb, fleet, ids) = setup(&sizes, extra_tables);
    let mut next_split_fence = split_fences.iter().cycle();
    let mut all: Vec<Run> = Vec::new();
    for (i, &rows) in sizes.iter().enumerate() {
        let (id, lb) = (ids[i], (i as i64 + 1) * SPACING);
        let n = if rows > 1_000_000 { runs_large } else { runs };
        for fence in fences.iter().map(String::as_str) {
            for _ in 0..n {
                let to = if fleet.node_of(id) == "node1" {
                    "node2"
                } else {
                    "node1"
                };
                let sid = id.to_string();
                all.push(fleet.measure(
                    id,
                    lb,
                    rows,
                    fence,
                    &["move", "--shard", &sid, "--to", to, "--fence", fence],
                ));
            }
        }
        // Splits (after this size's moves): the shard at its middle key, then each half
        // at its own middle.
        if !split_sizes.contains(&rows) {
            continue;
        }
        let mut parts = vec![(lb, rows)];
        for _ in 0..depth {
            let mut next = Vec::new();
            for (plb, prows) in parts {
                let id = fleet.shard_at(plb);
                let at = plb + (prows / 2) as i64;
                let to = if fleet.node_of(id) == "node1" {
                    "node2"
                } else {
                    "node1"
                };
                let (sid, sat) = (id.to_string(), at.to_string());
                let fence = next_split_fence
                    .next()
                    .map(String::as_str)
                    .unwrap_or("shard");
                all.push(fleet.measure(
                    id,
                    plb,
                    prows,
                    &format!("split {fence}"),
                    &[
                        "split", "--shard", &sid, "--to", to, "--at", &sat, "--fence", fence,
                    ],
                ));
                next.push((plb, prows / 2));
                next.push((at, prows - prows / 2));
            }
            parts = next;
        }
    }
    report(
        &all,
        &sizes,
        &fences,
        extra_tables,
        started.elapsed().as_secs_f64(),
    );
}

fn report(all: &[Run], sizes: &[u64], fences: &[String], extra_tables: u64, total_s: f64) {
    println!("- Date: {}.", sh("date -u +%Y-%m-%d"));
    println!(
        "- Machine: {} CPUs ({}), {} GiB RAM, {}; {}.",
        sh("nproc"),
        sh("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs"),
        sh("free -g | awk '/Mem:/ {print $2}'"),
        sh(". /etc/os-release && echo $PRETTY_NAME"),
        sh("mariadbd --version | sed 's/^.*Ver //; s/ for .*$//'")
    );
    println!(
        "- Each server's InnoDB buffer pool: {}; redo log {}.",
        buffer_pool(),
        sysbench::redo_log()
    );
    println!(
        "- Sharded tables per shard: {} (`sbtest`, the workload's table and {extra_tables} of 200 rows).",
        extra_tables + 2
    );
    println!("- Whole run: {total_s:.0} s.\n");

    println!("Write pause of the moving shard (milliseconds; median, then each run):\n");
    println!("| rows | operation | runs | fence_millis (journal) | longest workload pause | acknowledged writes lost |");
    println!("|---|---|---|---|---|---|");
    let groups: Vec<(u64, &str)> = sizes
        .iter()
        .flat_map(|&s| fences.iter().map(move |f| (s, f.as_str())))
        .chain(
            all.iter()
                .filter(|r| r.kind.starts_with("split"))
                .map(|r| (r.rows, r.kind.as_str())),
        )
        .fold(Vec::new(), |mut acc, g| {
            if !acc.contains(&g) {
                acc.push(g);
            }
            acc
        });
    let pick = |rows: u64, kind: &str| -> Vec<&Run> {
        all.iter()
            .filter(|r| r.rows == rows && r.kind == kind)
            .collect()
    };
    let label = |kind: &str| match kind.strip_prefix("split ") {
        Some(f) => format!("`split --fence {f}`"),
        None => format!("`move --fence {kind}`"),
    };
    for &(rows, kind) in &groups {
        let rs = pick(rows, kind);
        if rs.is_empty() {
            continue;
        }
        let f: Vec<u64> = rs.iter().map(|r| r.fence_ms).collect();
        let p: Vec<u64> = rs.iter().map(|r| r.pause_ms).collect();
        println!(
            "| {rows} | {} | {} | {:.0} ({}) | {:.0} ({}) | {} |",
            label(kind),
            rs.len(),
            med(&f),
            each(&f),
            med(&p),
            each(&p),
            rs.iter().map(|r| r.lost).sum::<u64>()
        );
    }

    println!("\nNeighbour shard on the source node (its own workload thread, 100 writes/s):\n");
    println!(
        "| rows moved | operation | failed writes (all runs) | longest pause: median (each) |"
    );
    println!("|---|---|---|---|");
    for &(rows, kind) in &groups {
        let rs = pick(rows, kind);
        if rs.is_empty() {
            continue;
        }
        let p: Vec<u64> = rs.iter().map(|r| r.neighbour_pause_ms).collect();
        println!(
            "| {rows} | {} | {} | {:.0} ({}) |",
            label(kind),
            rs.iter().map(|r| r.neighbour_failed).sum::<u64>(),
            med(&p),
            each(&p)
        );
    }

    println!(
        "\nVerification against copy, from the journal's step durations (milliseconds, medians):\n"
    );
    println!("| rows | operation | runs | copy (`backup`) | `verify` (outside the fence) | verify / copy | `confirm` (in the fence) | lock → unlock steps (lock, wait final, confirm, flip, drop-source/guard, unlock) | `guard` |");
    println!("|---|---|---|---|---|---|---|---|---|");
    for &(rows, kind) in &groups {
        let rs = pick(rows, kind);
        if rs.is_empty() {
            continue;
        }
        let g = |name: &str| med(&rs.iter().map(|r| r.step(name)).collect::<Vec<_>>());
        let shares: Vec<f64> = rs
            .iter()
            .map(|r| 100.0 * r.step("verify") as f64 / r.step("backup").max(1) as f64)
            .collect();
        let fenced: Vec<u64> = rs.iter().map(|r| r.in_fence_steps()).collect();
        println!(
            "| {rows} | {} | {} | {:.0} | {:.0} | {:.0} % ({}) | {:.0} ({}) | {:.0} | {} |",
            label(kind),
            rs.len(),
            g("backup"),
            g("verify"),
            median(&shares),
            shares
                .iter()
                .map(|s| format!("{s:.0}"))
                .collect::<Vec<_>>()
                .join(", "),
            g("confirm"),
            each(&rs.iter().map(|r| r.step("confirm")).collect::<Vec<_>>()),
            med(&fenced),
            if kind.starts_with("split") {
                format!("{:.0}", g("guard"))
            } else {
                "-".into()
            }
        );
    }

    println!("\nEach operation (milliseconds):\n");
    println!("| op | rows | operation | fence_millis | pause | neighbour pause / failed | backup | verify | lock | wait final | confirm | flip | drop-source | guard | unlock | drop-trash (fence lifted) | wall s |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for r in all {
        println!(
            "| {} | {} | {} | {} | {} | {} / {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.1} |",
            r.op,
            r.rows,
            r.kind,
            r.fence_ms,
            r.pause_ms,
            r.neighbour_pause_ms,
            r.neighbour_failed,
            r.step("backup"),
            r.step("verify"),
            r.step("lock"),
            r.step("wait-final"),
            r.step("confirm"),
            r.step("flip"),
            r.step("drop-source"),
            r.step("guard"),
            r.step("unlock"),
            r.step("drop-trash"),
            r.wall_s
        );
    }
}
