//! A split onto the shard's own node and a merge on one node, before and after the change
//! stream keeps their copy current (issue 28 item 3), on real sandboxes.
//!
//! For each size and binary, a fresh one-node sandbox holds one range shard `S` of that many
//! sysbench-like rows (keys `0..rows`, about 200 bytes a row, loaded unlogged), then:
//!
//! 1. `split --shard S --to node1 --at rows/2` (a new shard `NEW` on the same node);
//! 2. `merge --shards S,NEW --to node1` (`NEW` back into `S`, both on node1).
//!
//! Each runs under the library workload (`shardctl::workload::run`, the chapter's retry
//! rule) writing two keys of `S`, one of each half (`rows/4` stays in `S`, `3·rows/4` goes to
//! `NEW` and back), `LOCAL_RATE` writes/s in all, from 1.5 s before the operation to 1.5 s
//! after it. Figures: the operation's `fence_ms` and `copied_rows` (its JSON summary, the
//! journal's figures), its wall time, the longest gap between two acknowledged writes of
//! either key (copy and prune load included), and after it `Report::check`: acknowledged
//! writes missing where the directory says their key lives (lost) and, of those, the ones
//! a shard that does not own the key acknowledged (wrong-shard). Both must be 0; they are
//! asserted once the table is printed, so a run that breaks them still shows its figures.
//!
//! The binary measured is this build's (`cargo bench` builds it in release); with
//! `LOCAL_BASELINE_BIN=PATH` every size and run is measured again with that binary on a
//! fresh identical sandbox (each binary initialises its own directory, so neither reads the
//! other's journal), the rows marked "before", and the report adds the ratios after/before.
//! The two binaries alternate run by run, so load from other processes falls on both.
//!
//! Run: `LOCAL_BASELINE_BIN=/path/to/old/shardctl cargo bench --bench local_ops` (prints
//! Markdown for docs/BENCHMARKS.md).
//! - `LOCAL_SIZES` (default `1000000,5000000`): rows of the shard split and merged;
//! - `LOCAL_RUNS` (default 3): runs per binary at sizes up to 1,000,000 rows;
//! - `LOCAL_RUNS_LARGE` (default 1): runs per binary above 1,000,000 rows;
//! - `LOCAL_RATE` (default 200): the workload's writes/s, both keys together;
//! - `LOCAL_BUFFER_POOL` (default `2G`): the server's InnoDB buffer pool (a 5,000,000-row
//!   shard is about 1.2 GB, and a split onto its own node holds it twice);
//! - `LOCAL_REDO_LOG` (default: the sandbox's 48M): the server's `innodb_log_file_size`.
//!
//! `BENCH_SMOKE=1`: one size of 3,000 rows, one run, no baseline, a 64 MiB buffer pool.

mod smoke;
// Its one-node fleet is its own; of the shared helpers it takes the small ones.
#[allow(dead_code)]
mod sysbench;

use shardctl::config::Inventory;
use shardctl::directory::{Key, Router};
use shardctl::server::Server;
use shardctl::workload::{self, Options, Report};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use sysbench::{env_list, env_num, exec, load_rows, sh, FUNCTION};

/// `BIN --output json ARGS` against the inventory at `inv_path`: its document, or the last
/// line of its event stream (an operation's summary).
fn shardctl(bin: &Path, inv_path: &Path, args: &[&str]) -> serde_json::Value {
    let out = Command::new(bin)
        .env("SHARDCTL_YES", "1")
        .arg("--config")
        .arg(inv_path)
        .args(["--output", "json"])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{} {args:?}: {}\n{}",
        bin.display(),
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    serde_json::from_str(&text)
        .or_else(|_| serde_json::from_str(text.lines().last().unwrap_or("null")))
        .unwrap_or_default()
}

/// The binary an operation runs with.
#[derive(Clone)]
struct Binary {
    /// "after" (this build) or "before" (`LOCAL_BASELINE_BIN`).
    label: &'static str,
    path: PathBuf,
}

/// One measured operation.
struct Run {
    rows: u64,
    /// `split` or `merge`.
    op: &'static str,
    binary: &'static str,
    fence_ms: u64,
    /// The longest gap between two acknowledged writes, either key.
    pause_ms: u64,
    staying_pause_ms: u64,
    moving_pause_ms: u64,
    copied_rows: u64,
    wall_s: f64,
    /// Acknowledged writes missing where the directory says their key lives.
    lost: u64,
    wrong_shard: u64,
    /// Writes the workload gave up on after its write timeout (never acknowledged).
    given_up: u64,
}

/// One sandbox with one shard of `rows` rows on node1, set up with the binary measured.
struct Case {
    _sb: shardctl::sandbox::Sandbox,
    inv: Inventory,
    inv_path: PathBuf,
    bin: Binary,
    rows: u64,
}

impl Case {
    fn new(bin: &Binary, rows: u64, pool: &str, redo_log: Option<&str>) -> Case {
        let mut builder = shardctl::sandbox::SandboxBuilder::for_tests(1)
            .unwrap()
            .extra_config(format!("innodb-buffer-pool-size={pool}"));
        if let Some(size) = redo_log {
            builder = builder.extra_config(format!("innodb-log-file-size={size}"));
        }
        let sb = builder.start().unwrap();
        let inv_path = sb.inventory_path();
        let inv = Inventory::load(&inv_path).unwrap();
        let mut n1 = Server::connect_node(&inv, "node1").unwrap();
        exec(&mut n1, "CREATE DATABASE sb");
        exec(&mut n1, "CREATE TABLE sb.sbtest (id BIGINT NOT NULL PRIMARY KEY, k INT NOT NULL, c CHAR(120) NOT NULL, pad CHAR(60) NOT NULL, KEY k_1 (k)) ENGINE=InnoDB");
        exec(&mut n1, "CREATE TABLE sb.shardctl_workload (k BIGINT NOT NULL, seq BIGINT UNSIGNED NOT NULL, at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6), PRIMARY KEY (k, seq)) ENGINE=InnoDB");
        let case = Case {
            _sb: sb,
            inv,
            inv_path,
            bin: bin.clone(),
            rows,
        };
        case.run(&["init"]);
        case.run(&["node", "add", "node1"]);
        case.run(&[
            "function", "add", FUNCTION, "--type", "range", "--key", "int",
        ]);
        for (table, column) in [("sb.sbtest", "id"), ("sb.shardctl_workload", "k")] {
            case.run(&[
                "table",
                "add",
                table,
                "--function",
                FUNCTION,
                "--column",
                column,
            ]);
        }
        case.run(&[
            "shard",
            "add",
            "--function",
            FUNCTION,
            "--node",
            "node1",
            "--lower-bound",
            "0",
        ]);
        let id = case.shard_at(0);
        let t = Instant::now();
        load_rows(&case.inv, "node1", id, 0, rows);
        eprintln!(
            "[{}] {}: loaded {rows} rows into sb_{id} in {:.1} s",
            sh("date -u +%H:%M:%S"),
            bin.label,
            t.elapsed().as_secs_f64()
        );
        case
    }

    fn run(&self, args: &[&str]) -> serde_json::Value {
        shardctl(&self.bin.path, &self.inv_path, args)
    }

    fn shard_at(&self, key: i64) -> u32 {
        Router::connect(&self.inv)
            .unwrap()
            .shard_for_function(FUNCTION, &Key::Int(key))
            .unwrap()
            .id
    }

    /// Runs `args` under the workload on keys `staying` and `moving` and collects its
    /// figures.
    fn measure(&self, op: &'static str, staying: i64, moving: i64, args: &[&str]) -> Run {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let inv = self.inv.clone();
        let rate = env_num("LOCAL_RATE", 200) as u32;
        let load = std::thread::spawn(move || {
            let opts = Options {
                rate,
                keys: Some(vec![Key::Int(staying), Key::Int(moving)]),
                ..Options::new(FUNCTION)
            };
            workload::run(&inv, &opts, &flag)
        });
        std::thread::sleep(Duration::from_millis(1500));
        let t = Instant::now();
        let v = self.run(args);
        let wall_s = t.elapsed().as_secs_f64();
        std::thread::sleep(Duration::from_millis(1500));
        stop.store(true, Ordering::SeqCst);
        let mut report: Report = load.join().unwrap().unwrap();
        report.check(&self.inv, FUNCTION).unwrap();
        // One stream per key, in the order of `keys`.
        let pause = |i: usize| report.streams.get(i).map_or(0, |s| s.max_pause_ms);
        let run = Run {
            rows: self.rows,
            op,
            binary: self.bin.label,
            fence_ms: v["fence_ms"].as_u64().unwrap_or(0),
            pause_ms: report
                .streams
                .iter()
                .map(|s| s.max_pause_ms)
                .max()
                .unwrap_or(0),
            staying_pause_ms: pause(0),
            moving_pause_ms: pause(1),
            copied_rows: v["copied_rows"].as_u64().unwrap_or(0),
            wall_s,
            lost: report.missing,
            wrong_shard: report.wrong_shard_writes,
            given_up: report.streams.iter().map(|s| s.lost).sum(),
        };
        // The operation's steps in order with their milliseconds, to see where its time
        // and its fence went.
        let steps: Vec<String> = shardctl::directory::Directory::open(&self.inv)
            .and_then(|mut d| d.operations(None))
            .ok()
            .and_then(|ops| ops.into_iter().next())
            .map(|op| {
                op.steps
                    .iter()
                    .map(|s| format!("{} {}", s.name, s.millis.unwrap_or(0)))
                    .collect()
            })
            .unwrap_or_default();
        eprintln!(
            "[{}] {} {} {} rows: fence {} ms, pause {} ms (staying key {} ms, moving key {} ms), {} rows copied, wall {:.1} s, lost {}, wrong-shard {}, given up {}, {} acked; steps (ms) {}; summary {v}",
            sh("date -u +%H:%M:%S"),
            run.binary,
            run.op,
            run.rows,
            run.fence_ms,
            run.pause_ms,
            run.staying_pause_ms,
            run.moving_pause_ms,
            run.copied_rows,
            run.wall_s,
            run.lost,
            run.wrong_shard,
            run.given_up,
            report.acked,
            steps.join(", ")
        );
        run
    }

    /// The split onto node1 at the middle key, then the merge of both halves on node1.
    fn split_and_merge(&self) -> [Run; 2] {
        let rows = self.rows as i64;
        let (at, staying, moving) = (rows / 2, rows / 4, rows / 2 + rows / 4);
        let s = self.shard_at(0);
        let (s_id, at_s) = (s.to_string(), at.to_string());
        let split = self.measure(
            "split",
            staying,
            moving,
            &["split", "--shard", &s_id, "--to", "node1", "--at", &at_s],
        );
        let new = self.shard_at(at);
        assert_ne!(new, s, "the split made a new shard from {at}");
        let shards = format!("{s},{new}");
        let merge = self.measure(
            "merge",
            staying,
            moving,
            &["merge", "--shards", &shards, "--to", "node1"],
        );
        assert_eq!(self.shard_at(at), s, "the merge gave {at} back to {s}");
        [split, merge]
    }
}

fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

/// `median (each, …)`, or the single figure of one run.
fn med_each(v: &[f64], digits: usize) -> String {
    let m = format!("{:.*}", digits, median(v));
    if v.len() < 2 {
        return m;
    }
    let each: Vec<String> = v.iter().map(|x| format!("{x:.digits$}")).collect();
    format!("{m} ({})", each.join(", "))
}

fn main() {
    let sizes = env_list("LOCAL_SIZES", smoke::or("3000", "1000000,5000000"));
    let runs = env_num("LOCAL_RUNS", smoke::or(1, 3));
    let runs_large = env_num("LOCAL_RUNS_LARGE", 1);
    let pool =
        std::env::var("LOCAL_BUFFER_POOL").unwrap_or_else(|_| smoke::or("64M", "2G").to_string());
    let redo_log = std::env::var("LOCAL_REDO_LOG").ok();
    let after = Binary {
        label: "after",
        path: PathBuf::from(env!("CARGO_BIN_EXE_shardctl")),
    };
    let before = match std::env::var_os("LOCAL_BASELINE_BIN") {
        Some(_) if smoke::on() => {
            eprintln!("BENCH_SMOKE: LOCAL_BASELINE_BIN ignored");
            None
        }
        Some(p) => Some(Binary {
            label: "before",
            path: PathBuf::from(p),
        }),
        None => None,
    };
    let binaries: Vec<Binary> = std::iter::once(after).chain(before.clone()).collect();
    let started = Instant::now();
    let mut all: Vec<Run> = Vec::new();
    for &rows in &sizes {
        let n = if rows > 1_000_000 { runs_large } else { runs };
        for _ in 0..n {
            for bin in &binaries {
                let case = Case::new(bin, rows, &pool, redo_log.as_deref());
                all.extend(case.split_and_merge());
            }
        }
    }
    report(
        &all,
        &sizes,
        &binaries,
        &format!(
            "InnoDB buffer pool {pool}, redo log {}",
            redo_log.as_deref().unwrap_or("48M (the sandbox's)")
        ),
        started.elapsed().as_secs_f64(),
    );
    for r in &all {
        assert_eq!(
            (r.lost, r.wrong_shard),
            (0, 0),
            "{} {} of {} rows: acknowledged writes lost / written to a wrong shard",
            r.binary,
            r.op,
            r.rows
        );
    }
}

fn report(all: &[Run], sizes: &[u64], binaries: &[Binary], server: &str, total_s: f64) {
    println!(
        "- Date: {}; whole run {total_s:.0} s.",
        sh("date -u '+%Y-%m-%d %H:%M UTC'")
    );
    println!(
        "- Machine: {} CPUs ({}), {} GiB RAM, kernel {}, MariaDB {}; load average at the end: {}.",
        sh("nproc"),
        sh("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs"),
        sh("free -g | awk '/Mem:/ {print $2}'"),
        sh("uname -r"),
        sh("mariadbd --version | sed 's/^.*Ver //; s/ for .*$//'"),
        sh("cut -d' ' -f1-3 /proc/loadavg")
    );
    println!("- One single-node sandbox per size, run and binary; {server}.");
    for b in binaries {
        println!("- {}: `{}`.", b.label, b.path.display());
    }
    println!();
    println!("Milliseconds and seconds: median of the runs (each run in brackets).\n");
    println!("| rows | operation | binary | runs | `fence_ms` | longest workload pause (ms) | rows copied | wall (s) | lost | wrong-shard |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    let pick = |rows: u64, op: &str, bin: &str| -> Vec<&Run> {
        all.iter()
            .filter(|r| r.rows == rows && r.op == op && r.binary == bin)
            .collect()
    };
    let fig = |rs: &[&Run], f: fn(&Run) -> f64| -> Vec<f64> { rs.iter().map(|r| f(r)).collect() };
    for &rows in sizes {
        for op in ["split", "merge"] {
            for b in binaries {
                let rs = pick(rows, op, b.label);
                if rs.is_empty() {
                    continue;
                }
                println!(
                    "| {rows} | {op} | {} | {} | {} | {} | {} | {} | {} | {} |",
                    b.label,
                    rs.len(),
                    med_each(&fig(&rs, |r| r.fence_ms as f64), 0),
                    med_each(&fig(&rs, |r| r.pause_ms as f64), 0),
                    med_each(&fig(&rs, |r| r.copied_rows as f64), 0),
                    med_each(&fig(&rs, |r| r.wall_s), 1),
                    rs.iter().map(|r| r.lost).sum::<u64>(),
                    rs.iter().map(|r| r.wrong_shard).sum::<u64>()
                );
            }
        }
    }
    if binaries.len() > 1 {
        println!("\nAfter / before, medians:\n");
        println!("| rows | operation | `fence_ms` | longest workload pause | wall |");
        println!("|---|---|---|---|---|");
        for &rows in sizes {
            for op in ["split", "merge"] {
                let (a, b) = (pick(rows, op, "after"), pick(rows, op, "before"));
                if a.is_empty() || b.is_empty() {
                    continue;
                }
                // Three significant digits: a flat fence against one that grows with
                // the data is a ratio far below 0.01.
                let ratio = |f: fn(&Run) -> f64| {
                    let r = median(&fig(&a, f)) / median(&fig(&b, f));
                    let digits = (2 - r.abs().log10().floor() as i64).clamp(0, 6) as usize;
                    format!("{r:.digits$}")
                };
                println!(
                    "| {rows} | {op} | {} | {} | {} |",
                    ratio(|r| r.fence_ms as f64),
                    ratio(|r| r.pause_ms as f64),
                    ratio(|r| r.wall_s)
                );
            }
        }
    }
    println!("\nEach operation:\n");
    println!("| rows | operation | binary | `fence_ms` | pause, staying key / moving key (ms) | rows copied | wall (s) | lost | wrong-shard | writes given up |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for r in all {
        println!(
            "| {} | {} | {} | {} | {} / {} | {} | {:.1} | {} | {} | {} |",
            r.rows,
            r.op,
            r.binary,
            r.fence_ms,
            r.staying_pause_ms,
            r.moving_pause_ms,
            r.copied_rows,
            r.wall_s,
            r.lost,
            r.wrong_shard,
            r.given_up
        );
    }
}
