//! How fast a copy catches up across nodes, kept current by a replication channel or by
//! shardctl's change stream (`move --via channel|stream`), on the same moves of the same
//! shard (issue 28 item 3): the stream's apply rate against the channel's, in row changes
//! per second, for two shapes of writes.
//!
//! Each run moves the shard (node1 → node2, then back, alternating) with the process
//! crashed right after its copy (`SHARDCTL_FAULT=crash@after:backup`), so nothing applies
//! what comes next: the source then takes CHANGES row changes, and `resume` starts the
//! channel or the stream at the copy's position and waits until it is within a second of
//! the source. The catch-up is the `resume`'s steps from change-master to the first wait,
//! from its JSON step events (the journal's own figures); the rate is the changes over it.
//! Then the move goes on (verify, fence, flip) and the next run starts from the target.
//!
//! Shapes: `batched`, UPDATEs of 100 rows each in autocommit transactions; `single`,
//! single-row UPDATEs, each its own transaction (the stream pays one target commit with its
//! checkpoint per source transaction; a channel does too, with its relay log).
//!
//! Run: `cargo bench --bench catch_up` (prints Markdown for docs/BENCHMARKS.md).
//! - `CATCHUP_ROWS` (default 200000): rows of the shard (sysbench-like, ~200 bytes);
//! - `CATCHUP_BATCHED` (default 300000): row changes of the batched shape;
//! - `CATCHUP_SINGLE` (default 30000): row changes of the single-row shape;
//! - `CATCHUP_RUNS` (default 3): runs per shape and way.

mod smoke;
mod sysbench;

use shardctl::config::Inventory;
use shardctl::directory::{Directory, Key, Router};
use shardctl::server::Server;
use std::process::Command;
use std::time::Instant;
use sysbench::{exec, FUNCTION};

fn env_or(name: &str, smoke: u64, real: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(smoke::or(smoke, real))
}

/// `shardctl ARGS` with the inventory and a fault point: its standard output (the process
/// is expected to stop at the fault).
fn crashed(inv_path: &std::path::Path, args: &[&str], fault: &str) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_shardctl"))
        .env("SHARDCTL_YES", "1")
        .env("SHARDCTL_FAULT", fault)
        .arg("--config")
        .arg(inv_path)
        .args(args)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[derive(Clone, Copy, PartialEq)]
enum Shape {
    Batched,
    Single,
}

impl Shape {
    fn name(self) -> &'static str {
        match self {
            Shape::Batched => "batched (100 rows a transaction)",
            Shape::Single => "single (1 row a transaction)",
        }
    }
}

/// `changes` row changes on the shard's table on `node`, in the shape's transactions.
fn write_changes(inv: &Inventory, node: &str, schema: &str, rows: u64, changes: u64, shape: Shape) {
    let mut s = Server::connect_node(inv, node).unwrap();
    let per = if shape == Shape::Batched { 100 } else { 1 };
    let mut done = 0;
    let mut at = 0;
    while done < changes {
        let lo = at % rows;
        let hi = (lo + per - 1).min(rows - 1);
        exec(
            &mut s,
            &format!("UPDATE {schema}.sbtest SET k = k + 1 WHERE id BETWEEN {lo} AND {hi}"),
        );
        done += hi - lo + 1;
        at = hi + 1;
    }
}

/// The milliseconds of the resumed move's steps from change-master through the first
/// `wait` (the catch-up), from its JSON step events.
fn catch_up_millis(stdout: &str) -> u64 {
    let mut total = 0;
    let mut counting = false;
    for line in stdout.lines() {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if v["event"] != "step_done" {
            continue;
        }
        let name = v["name"].as_str().unwrap_or("");
        if name == "change-master" || name == "start-replication" {
            counting = true;
        }
        if counting {
            total += v["elapsed_ms"].as_u64().unwrap_or(0);
        }
        if counting && name == "wait" {
            return total;
        }
    }
    panic!("no catch-up in the resumed move's events:\n{stdout}");
}

/// One shape and way's runs.
struct Measured {
    shape: Shape,
    via: &'static str,
    changes: u64,
    millis: Vec<f64>,
    rates: Vec<f64>,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn main() {
    let rows = env_or("CATCHUP_ROWS", 2_000, 200_000);
    let batched = env_or("CATCHUP_BATCHED", 2_000, 300_000);
    let single = env_or("CATCHUP_SINGLE", 200, 30_000);
    let runs = env_or("CATCHUP_RUNS", 1, 3) as usize;
    let (_sandbox, inv_path, inv) = sysbench::start("512M", 0);
    sysbench::add_shard(&inv_path, "node1", 0);
    let shard = Router::connect(&inv)
        .unwrap()
        .shard_for_function(FUNCTION, &Key::Int(0))
        .unwrap()
        .id;
    let schema = format!("sb_{shard}");
    sysbench::load_rows(&inv, "node1", shard, 0, rows);
    let shard_s = shard.to_string();
    let mut results: Vec<Measured> = Vec::new();
    for (shape, changes) in [(Shape::Batched, batched), (Shape::Single, single)] {
        for via in ["channel", "stream"] {
            let (mut millis, mut rates) = (Vec::new(), Vec::new());
            for _ in 0..runs {
                let snap = Directory::open(&inv).unwrap().load().unwrap();
                let from = snap.shard(shard).unwrap().node.clone();
                let to = if from == "node1" { "node2" } else { "node1" };
                crashed(
                    &inv_path,
                    &["move", "--shard", &shard_s, "--to", to, "--via", via],
                    "crash@after:backup",
                );
                let op = Directory::open(&inv)
                    .unwrap()
                    .operations(None)
                    .unwrap()
                    .into_iter()
                    .map(|o| o.id)
                    .max()
                    .unwrap();
                write_changes(&inv, &from, &schema, rows, changes, shape);
                let t = Instant::now();
                let out =
                    sysbench::shardctl(&inv_path, &["--output", "json", "resume", &op.to_string()]);
                let ms = catch_up_millis(&out).max(1);
                eprintln!(
                    "{} via {via}: {changes} changes caught up in {ms} ms (resume {:.1} s)",
                    shape.name(),
                    t.elapsed().as_secs_f64()
                );
                millis.push(ms as f64);
                rates.push(changes as f64 * 1000.0 / ms as f64);
            }
            results.push(Measured {
                shape,
                via,
                changes,
                millis,
                rates,
            });
        }
    }
    println!(
        "Machine: {} cores, {} GB memory, kernel {}, {}; {}",
        sysbench::sh("nproc"),
        sysbench::sh("free -g | awk '/Mem:/ {print $2}'"),
        sysbench::sh("uname -r"),
        sysbench::sh("mariadbd --version 2>/dev/null || /usr/sbin/mariadbd --version"),
        sysbench::sh("date -u +%Y-%m-%d"),
    );
    println!(
        "Shard of {rows} rows; {runs} run(s) per shape and way; InnoDB buffer pool 512M, redo log {}.\n",
        sysbench::redo_log()
    );
    println!("| writes | kept current by | row changes | catch-up ms (median of {runs}) | rows/s (median) | runs (ms) |");
    println!("|---|---|---:|---:|---:|---|");
    for m in &results {
        println!(
            "| {} | {} | {} | {:.0} | {:.0} | {} |",
            m.shape.name(),
            m.via,
            m.changes,
            median(m.millis.clone()),
            median(m.rates.clone()),
            m.millis
                .iter()
                .map(|m| format!("{m:.0}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    for shape in [Shape::Batched, Shape::Single] {
        let rate = |via: &str| {
            results
                .iter()
                .find(|r| r.shape == shape && r.via == via)
                .map(|r| median(r.rates.clone()))
                .unwrap_or(0.0)
        };
        println!(
            "\n{}: stream / channel rate = {:.2}",
            shape.name(),
            rate("stream") / rate("channel").max(1.0)
        );
    }
}
