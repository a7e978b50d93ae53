//! One rebalance, two ways, on a real 3-node sandbox (issue 28): the top quarter of a range
//! shard of 1,000,000 rows on node1 goes to its neighbour on node2,
//!
//! - by a **boundary shift**: one `move-keys` (and, to measure it again from the other
//!   side, the same keys given back by a second one);
//! - by **split + merge**: `split --at CUT --to node2` (a new shard), then `merge` of the new
//!   shard into the neighbour on node2.
//!
//! For each operation: rows copied and the fence (`copied_rows`, `fence_ms` of its summary:
//! the journal's figures), wall time, and the longest client pause of a key that moves and
//! of a key of the donor that stays, each written by a workload stream of its own (200 and
//! 100 writes/s) with the chapter's retry rule; every acknowledged write is checked where the
//! directory says afterwards.
//!
//! Run: `cargo bench --bench boundary` (prints Markdown for docs/BENCHMARKS.md).
//! - `BOUNDARY_ROWS` (default 1000000): rows of the donor shard (sysbench-like, ~200 bytes);
//! - `BOUNDARY_BUFFER_POOL` (default `1G`): each server's InnoDB buffer pool.

mod smoke;
mod sysbench;

use shardctl::config::Inventory;
use shardctl::directory::{Directory, Key, Router};
use shardctl::server::Server;
use shardctl::workload::{self, Options, Report};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use sysbench::{add_shard, exec, load_rows, sh, FUNCTION};

/// `shardctl --output json ARGS`: its document, or its stream's last line (the summary).
fn shardctl(inv_path: &std::path::Path, args: &[&str]) -> serde_json::Value {
    let text = sysbench::shardctl(inv_path, &[&["--output", "json"], args].concat());
    // A document, or a stream whose last line is the summary.
    serde_json::from_str(&text)
        .or_else(|_| serde_json::from_str(text.lines().last().unwrap_or("null")))
        .unwrap_or_default()
}

/// A workload thread writing one key.
struct Load {
    stop: Arc<AtomicBool>,
    handle: std::thread::JoinHandle<shardctl::Result<Report>>,
}

impl Load {
    fn start(inv: &Inventory, key: i64, rate: u32) -> Load {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let inv = inv.clone();
        let handle = std::thread::spawn(move || {
            let opts = Options {
                rate,
                keys: Some(vec![Key::Int(key)]),
                ..Options::new(FUNCTION)
            };
            workload::run(&inv, &opts, &flag)
        });
        Load { stop, handle }
    }

    fn stop(self, inv: &Inventory) -> u64 {
        self.stop.store(true, Ordering::SeqCst);
        let r = self.handle.join().unwrap().unwrap();
        let missing = workload::missing_acks(inv, FUNCTION, &r.acks).unwrap();
        assert!(missing.is_empty(), "lost writes {missing:?}");
        r.streams[0].max_pause_ms
    }
}

/// One measured operation.
struct Run {
    way: &'static str,
    what: String,
    copied_rows: u64,
    fence_ms: u64,
    wall_s: f64,
    moving_pause_ms: u64,
    staying_pause_ms: u64,
}

fn measure(
    inv: &Inventory,
    inv_path: &std::path::Path,
    way: &'static str,
    what: String,
    moving: i64,
    staying: i64,
    args: &[&str],
) -> Run {
    let m = Load::start(inv, moving, 200);
    let s = Load::start(inv, staying, 100);
    std::thread::sleep(Duration::from_millis(1500));
    let t = Instant::now();
    let v = shardctl(inv_path, args);
    let wall_s = t.elapsed().as_secs_f64();
    std::thread::sleep(Duration::from_millis(1500));
    let run = Run {
        way,
        what,
        copied_rows: v["copied_rows"].as_u64().unwrap_or(0),
        fence_ms: v["fence_ms"].as_u64().unwrap_or(0),
        wall_s,
        moving_pause_ms: m.stop(inv),
        staying_pause_ms: s.stop(inv),
    };
    eprintln!(
        "{way}: {}: {} rows copied, fence {} ms, wall {:.1} s, moving key's pause {} ms, staying key's {} ms ({v})",
        run.what, run.copied_rows, run.fence_ms, run.wall_s, run.moving_pause_ms, run.staying_pause_ms
    );
    run
}

fn shard_at(inv: &Inventory, key: i64) -> u32 {
    Router::connect(inv)
        .unwrap()
        .shard_for_function(FUNCTION, &Key::Int(key))
        .unwrap()
        .id
}

fn main() {
    let rows: i64 = std::env::var("BOUNDARY_ROWS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(smoke::or(10_000, 1_000_000));
    let pool = std::env::var("BOUNDARY_BUFFER_POOL").unwrap_or_else(|_| "1G".into());
    let cut = rows - rows / 4;
    // The sandbox's servers stop when `_sb` is dropped, at the end.
    let (_sb, inv_path, inv) = sysbench::start(&pool, 0);
    for (node, lb) in [("node1", 0), ("node2", rows)] {
        add_shard(&inv_path, node, lb);
    }
    let (donor, neighbour) = (shard_at(&inv, 0), shard_at(&inv, rows));
    let t = Instant::now();
    load_rows(&inv, "node1", donor, 0, rows as u64);
    let mut s2 = Server::connect_node(&inv, "node2").unwrap();
    exec(&mut s2, &format!(
        "INSERT INTO sb_{neighbour}.sbtest SELECT {rows} + seq, seq, MD5(seq), MD5(seq) FROM sb_{neighbour}.seq_0_to_999"
    ));
    eprintln!("loaded {rows} rows in {:.1} s", t.elapsed().as_secs_f64());
    // What planning costs: whole shards only, then with the donor's key distribution read
    // (a count and fifteen cut keys through its primary key).
    let t = Instant::now();
    shardctl(&inv_path, &["rebalance", "plan", "--no-key-moves"]);
    let whole_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let planned = shardctl(&inv_path, &["rebalance", "plan"]);
    let keys_s = t.elapsed().as_secs_f64();
    eprintln!(
        "rebalance plan: {whole_s:.2} s whole shards only, {keys_s:.2} s with key moves: {}",
        planned["moves"]
    );
    // A key that moves and one of the donor's that stays.
    let (moving, staying) = (rows - rows / 8, rows / 8);
    let range = format!("{cut}..{rows}");
    let d = donor.to_string();
    let n = neighbour.to_string();
    let mut runs = Vec::new();
    runs.push(measure(
        &inv,
        &inv_path,
        "boundary shift",
        format!("move-keys --range {range} --to-shard {neighbour} (node1 → node2)"),
        moving,
        staying,
        &[
            "move-keys",
            "--function",
            FUNCTION,
            "--range",
            &range,
            "--to-shard",
            &n,
        ],
    ));
    runs.push(measure(
        &inv,
        &inv_path,
        "boundary shift",
        format!("move-keys --range {range} --to-shard {donor} (back, node2 → node1)"),
        moving,
        staying,
        &[
            "move-keys",
            "--function",
            FUNCTION,
            "--range",
            &range,
            "--to-shard",
            &d,
        ],
    ));
    let cut_s = cut.to_string();
    runs.push(measure(
        &inv,
        &inv_path,
        "split + merge",
        format!("split --shard {donor} --to node2 --at {cut}"),
        moving,
        staying,
        &["split", "--shard", &d, "--to", "node2", "--at", &cut_s],
    ));
    let new_shard = shard_at(&inv, cut);
    let shards = format!("{neighbour},{new_shard}");
    runs.push(measure(
        &inv,
        &inv_path,
        "split + merge",
        format!("merge --shards {shards} --to node2 (both on node2)"),
        moving,
        staying,
        &["merge", "--shards", &shards, "--to", "node2"],
    ));
    let snap = Directory::open(&inv).unwrap().load().unwrap();
    assert_eq!(
        snap.shards.len(),
        2,
        "the same outcome both ways: two shards, the cut between them"
    );
    assert_eq!(shard_at(&inv, cut), neighbour);
    assert_eq!(shard_at(&inv, cut - 1), donor);

    println!(
        "Machine: {} vCPU, {}, MariaDB {}; {rows} rows (~200 bytes each), the top {} moving; buffer pool {pool}, redo log {}.",
        sh("nproc"),
        sh("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2").trim(),
        sh("mariadbd --version | awk '{print $3}'"),
        rows - cut,
        sysbench::redo_log()
    );
    println!(
        "`rebalance plan` (exact sizes) took {whole_s:.2} s planning whole shards only and {keys_s:.2} s with key moves (the donor's key distribution read); it proposed: {}.",
        planned["moves"]
    );
    println!();
    println!("| way | operation | rows copied | wall time | `fence_ms` (journal) | moving key's longest client pause | staying key's longest client pause |");
    println!("|---|---|---|---|---|---|---|");
    for r in &runs {
        println!(
            "| {} | `{}` | {} | {:.1} s | {} ms | {} ms | {} ms |",
            r.way,
            r.what,
            r.copied_rows,
            r.wall_s,
            r.fence_ms,
            r.moving_pause_ms,
            r.staying_pause_ms
        );
    }
}
