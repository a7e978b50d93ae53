//! Key moves at size (issue 28) on a real 3-node sandbox, every figure in one run:
//! - the write pause of the moving keys (`move-keys`: the top 20 % of a range shard to its
//!   neighbour on another node), as the journal's `fence_millis` and as the longest pause a
//!   workload thread writing one moving key saw;
//! - the pause of keys that do not move: one of the donor's own keys and one of the
//!   receiver's, each written by its own thread through the whole operation;
//! - the copy and the verification of the moving keys, and the steps under the fence.
//!
//! Workload: the library's `shardctl::workload::run` with the chapter's retry rule, 200
//! writes/s on each of the three keys.
//!
//! Run: `cargo bench --bench keys` (prints Markdown for docs/BENCHMARKS.md).
//! - `KEYS_SIZES` (default `1000000,5000000`): rows of the donor shard;
//! - `KEYS_RUNS` (default 3): key moves per size (each moves the bound back and forth);
//! - `KEYS_BUFFER_POOL` (default `1G`): each server's InnoDB buffer pool;
//! - `BENCH_REDO_LOG` (default: the sandbox's 48M): each server's `innodb_log_file_size`;
//! - `KEYS_VERBOSE=1`: the workload logs each failed write (its error) on stderr.

mod smoke;
mod sysbench;

use shardctl::config::Inventory;
use shardctl::directory::journal::{OpKind, OperationRecord};
use shardctl::directory::{Directory, Key, Router};
use shardctl::server::Server;
use shardctl::workload::{self, Options, Report};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use sysbench::{add_shard, env_list, env_num, exec, load_rows, sh, shardctl, FUNCTION};

const RATE: u32 = 200;
/// Each size's donor starts at `(index + 1) * SPACING`, its receiver at the donor's end.
const SPACING: i64 = 100_000_000;

fn median(v: &[u64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_unstable();
    if v.is_empty() {
        return f64::NAN;
    }
    v[v.len() / 2] as f64
}

fn each(v: &[u64]) -> String {
    v.iter()
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// A workload thread on one key.
struct Load {
    stop: Arc<AtomicBool>,
    handle: std::thread::JoinHandle<shardctl::Result<Report>>,
}

impl Load {
    fn start(inv: &Inventory, key: i64) -> Load {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let inv = inv.clone();
        let handle = std::thread::spawn(move || {
            let opts = Options {
                rate: RATE,
                keys: Some(vec![Key::Int(key)]),
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

/// One measured key move.
struct Run {
    rows: u64,
    moved_rows: u64,
    fence_ms: u64,
    moving_pause_ms: u64,
    donor_pause_ms: u64,
    receiver_pause_ms: u64,
    failed_other: u64,
    backup_ms: u64,
    verify_ms: u64,
    in_fence_ms: u64,
    wall_s: f64,
}

fn latest_key_move(inv: &Inventory) -> OperationRecord {
    let mut d = Directory::connect(inv).unwrap();
    let id = d
        .operations(None)
        .unwrap()
        .into_iter()
        .filter(|o| o.kind == OpKind::MoveKeys)
        .map(|o| o.id)
        .max()
        .unwrap();
    d.operation(id).unwrap()
}

fn bound_of(inv: &Inventory, shard: u32) -> i64 {
    let snap = Router::connect(inv).unwrap().snapshot().clone();
    match &snap
        .ranges
        .iter()
        .find(|r| r.shard_id == shard)
        .unwrap()
        .lower_bound
    {
        Key::Int(b) => *b,
        Key::Str(_) => unreachable!("an integer function"),
    }
}

fn main() {
    let sizes = env_list("KEYS_SIZES", smoke::or("2000", "1000000,5000000"));
    let runs = env_num("KEYS_RUNS", smoke::or(1, 3)) as usize;
    let pool = std::env::var("KEYS_BUFFER_POOL").unwrap_or_else(|_| smoke::or("64M", "1G").into());
    if std::env::var("KEYS_VERBOSE").is_ok_and(|v| v == "1") {
        shardctl::output::init(1, shardctl::output::ColorChoice::Never);
    }
    let started = Instant::now();
    // The sandbox's servers stop when `_sb` is dropped, at the end.
    let (_sb, inv_path, inv) = sysbench::start(&pool, 0);
    add_shard(&inv_path, "node3", 0);
    let mut pairs = Vec::new();
    for (i, &rows) in sizes.iter().enumerate() {
        let lb = (i as i64 + 1) * SPACING;
        add_shard(&inv_path, "node1", lb);
        let end = lb + rows as i64;
        add_shard(&inv_path, "node2", end);
        let router = Router::connect(&inv).unwrap();
        let donor = router
            .shard_for_function(FUNCTION, &Key::Int(lb))
            .unwrap()
            .id;
        let receiver = router
            .shard_for_function(FUNCTION, &Key::Int(end))
            .unwrap()
            .id;
        let t = Instant::now();
        load_rows(&inv, "node1", donor, lb, rows);
        let mut r = Server::connect_node(&inv, "node2").unwrap();
        exec(&mut r, &format!(
            "INSERT INTO sb_{receiver}.sbtest SELECT {end} + seq, seq, MD5(seq), MD5(seq) FROM sb_{receiver}.seq_0_to_9999"
        ));
        eprintln!(
            "loaded {rows} rows into sb_{donor} in {:.1} s",
            t.elapsed().as_secs_f64()
        );
        pairs.push((rows, lb, end, donor, receiver));
    }
    let mut all = Vec::new();
    for &(rows, lb, end, donor, receiver) in &pairs {
        for i in 0..runs {
            // Even runs give the donor's top fifth to the receiver, odd ones give it back.
            let bound = bound_of(&inv, receiver);
            let fifth = (rows / 5) as i64;
            let (range, to, moved_key) = if i % 2 == 0 {
                (
                    format!("{}..{bound}", bound - fifth),
                    receiver,
                    bound - fifth / 2,
                )
            } else {
                (
                    format!("{bound}..{}", bound + fifth),
                    donor,
                    bound + fifth / 2,
                )
            };
            let moving = Load::start(&inv, moved_key);
            let donor_key = Load::start(&inv, lb + 10);
            let receiver_key = Load::start(&inv, end + 10);
            std::thread::sleep(Duration::from_millis(1500));
            let t = Instant::now();
            let to_s = to.to_string();
            shardctl(
                &inv_path,
                &[
                    "move-keys",
                    "--function",
                    FUNCTION,
                    "--range",
                    &range,
                    "--to-shard",
                    &to_s,
                ],
            );
            let wall_s = t.elapsed().as_secs_f64();
            std::thread::sleep(Duration::from_millis(1500));
            let (m, d, r) = (moving.stop(), donor_key.stop(), receiver_key.stop());
            for rep in [&m, &d, &r] {
                let missing = workload::missing_acks(&inv, FUNCTION, &rep.acks).unwrap();
                assert!(missing.is_empty(), "lost writes {missing:?}");
            }
            let op = latest_key_move(&inv);
            let step = |name: &str| -> u64 {
                op.steps
                    .iter()
                    .filter(|s| s.name == name)
                    .filter_map(|s| s.millis)
                    .sum()
            };
            let mut waits = op.steps.iter().filter(|s| s.name == "wait");
            let _first = waits.next();
            let final_wait = waits.next().and_then(|s| s.millis).unwrap_or(0);
            let run = Run {
                rows,
                moved_rows: fifth as u64,
                fence_ms: op
                    .steps
                    .iter()
                    .rev()
                    .find_map(|s| s.outputs["fence_millis"].as_u64())
                    .unwrap_or(0),
                moving_pause_ms: m.streams[0].max_pause_ms,
                donor_pause_ms: d.streams[0].max_pause_ms,
                receiver_pause_ms: r.streams[0].max_pause_ms,
                failed_other: d.streams[0].failed_attempts + r.streams[0].failed_attempts,
                backup_ms: step("backup"),
                verify_ms: step("verify"),
                in_fence_ms: step("lock") + final_wait + step("confirm") + step("flip"),
                wall_s,
            };
            let steps: Vec<String> = op
                .steps
                .iter()
                .map(|s| format!("{} {}", s.name, s.millis.unwrap_or(0)))
                .collect();
            eprintln!(
                "op {} {rows} rows: fence {} ms, moving pause {} ms, donor {} ms, receiver {} ms, wall {:.1} s; steps (ms) {}",
                op.id,
                run.fence_ms,
                run.moving_pause_ms,
                run.donor_pause_ms,
                run.receiver_pause_ms,
                run.wall_s,
                steps.join(", ")
            );
            all.push(run);
        }
    }
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
        "- Each server's InnoDB buffer pool: {pool}, redo log {}; {RATE} writes/s on each measured key.",
        sysbench::redo_log()
    );
    println!("- Whole run: {:.0} s.\n", started.elapsed().as_secs_f64());
    println!("| donor rows | keys moved (rows) | runs | fence_millis (journal): median (each) | moving key's longest pause | donor's other key: longest pause | receiver's key: longest pause | failed writes of keys that do not move | copy | verify | lock → flip steps | wall s (median) |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    for &(rows, ..) in &pairs {
        let rs: Vec<&Run> = all.iter().filter(|r| r.rows == rows).collect();
        let col = |f: fn(&Run) -> u64| -> Vec<u64> { rs.iter().map(|r| f(r)).collect() };
        let (f, mp, dp, rp) = (
            col(|r| r.fence_ms),
            col(|r| r.moving_pause_ms),
            col(|r| r.donor_pause_ms),
            col(|r| r.receiver_pause_ms),
        );
        let mut walls: Vec<u64> = rs.iter().map(|r| (r.wall_s * 10.0) as u64).collect();
        walls.sort_unstable();
        println!(
            "| {rows} | {} | {} | {:.0} ({}) | {:.0} ({}) | {:.0} ({}) | {:.0} ({}) | {} | {:.0} ms | {:.0} ms | {:.0} ms | {:.1} |",
            rs.first().map(|r| r.moved_rows).unwrap_or(0),
            rs.len(),
            median(&f),
            each(&f),
            median(&mp),
            each(&mp),
            median(&dp),
            each(&dp),
            median(&rp),
            each(&rp),
            rs.iter().map(|r| r.failed_other).sum::<u64>(),
            median(&col(|r| r.backup_ms)),
            median(&col(|r| r.verify_ms)),
            median(&col(|r| r.in_fence_ms)),
            median(&walls) / 10.0
        );
    }
}
