//! The fleet the key-move, boundary and cut-over benches (bench/keys.rs, bench/boundary.rs,
//! bench/cutover.rs) measure on, and the helpers the benches share (bench/local_ops.rs
//! starts its own one-node fleet): a 3-node sandbox, the sysbench-like template schema `sb`
//! on node1, a directory of the three nodes whose range function `sb` shards the template's
//! tables, and shards loaded with sysbench-like rows.

use shardctl::config::Inventory;
use shardctl::sandbox::{Sandbox, SandboxBuilder};
use shardctl::server::{Server, Stmt};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The range function sharding the template's tables.
pub const FUNCTION: &str = "sb";

/// The number in environment variable `name`, else `default`. (catch_up reads its sizes
/// its own way: hence the allowance here and below.)
#[allow(dead_code)]
pub fn env_num(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// The comma-separated numbers in environment variable `name`, else in `default`.
#[allow(dead_code)]
pub fn env_list(name: &str, default: &str) -> Vec<u64> {
    std::env::var(name)
        .unwrap_or_else(|_| default.to_string())
        .split(',')
        .filter(|s| !s.trim().is_empty())
        .map(|s| s.trim().parse().unwrap_or_else(|_| panic!("{name}: {s}")))
        .collect()
}

/// Runs `sql`, panicking with it on an error.
pub fn exec(s: &mut Server, sql: &str) {
    s.exec(&Stmt::text(sql))
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
}

/// The trimmed standard output of `sh -c script` (empty if it could not run): the
/// machine's description in a bench's report.
pub fn sh(script: &str) -> String {
    Command::new("sh")
        .arg("-c")
        .arg(script)
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

/// `shardctl --config INV ARGS`, confirmations answered yes: its standard output, or a
/// panic with its standard error when it fails.
pub fn shardctl(inv_path: &Path, args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_shardctl"))
        .env("SHARDCTL_YES", "1")
        .arg("--config")
        .arg(inv_path)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Each server's redo log size as [`start`] set it, for the report.
pub fn redo_log() -> String {
    std::env::var("BENCH_REDO_LOG").unwrap_or_else(|_| "48M (the sandbox's)".into())
}

/// Starts a 3-node sandbox whose servers each have an InnoDB buffer pool of `pool`, and
/// makes on it:
/// - the template schema `sb` on node1: sysbench's `sbtest` (id, k, c CHAR(120), pad
///   CHAR(60)), the workload's `shardctl_workload`, and `extra_tables` tables `t1`..`tN`
///   keyed by `k`;
/// - the directory: the three nodes, the range function `sb` on integers, and every
///   template table sharded by it (`sbtest` by `id`, the others by `k`). No shard yet
///   ([`add_shard`]).
///
/// Returns the sandbox (its servers stop when it is dropped), its inventory's path and
/// the inventory. `BENCH_REDO_LOG` (e.g. `1G`) sets each server's `innodb_log_file_size`
/// (else the sandbox's 48M; see [`redo_log`]).
pub fn start(pool: &str, extra_tables: u64) -> (Sandbox, PathBuf, Inventory) {
    let mut builder = SandboxBuilder::for_tests(3)
        .unwrap()
        .extra_config(format!("innodb-buffer-pool-size={pool}"));
    if let Ok(size) = std::env::var("BENCH_REDO_LOG") {
        builder = builder.extra_config(format!("innodb-log-file-size={size}"));
    }
    let sb = builder.start().unwrap();
    let inv_path = sb.inventory_path();
    let inv = Inventory::load(&inv_path).unwrap();
    let mut n1 = Server::connect_node(&inv, "node1").unwrap();
    exec(&mut n1, "CREATE DATABASE sb");
    exec(&mut n1, "CREATE TABLE sb.sbtest (id BIGINT NOT NULL PRIMARY KEY, k INT NOT NULL, c CHAR(120) NOT NULL, pad CHAR(60) NOT NULL, KEY k_1 (k)) ENGINE=InnoDB");
    exec(&mut n1, "CREATE TABLE sb.shardctl_workload (k BIGINT NOT NULL, seq BIGINT UNSIGNED NOT NULL, at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6), PRIMARY KEY (k, seq)) ENGINE=InnoDB");
    let run = |args: &[&str]| {
        shardctl(&inv_path, args);
    };
    run(&["init"]);
    for n in ["node1", "node2", "node3"] {
        run(&["node", "add", n]);
    }
    run(&[
        "function", "add", FUNCTION, "--type", "range", "--key", "int",
    ]);
    for (table, column) in [("sb.sbtest", "id"), ("sb.shardctl_workload", "k")] {
        run(&[
            "table",
            "add",
            table,
            "--function",
            FUNCTION,
            "--column",
            column,
        ]);
    }
    for i in 1..=extra_tables {
        exec(&mut n1, &format!("CREATE TABLE sb.t{i} (k BIGINT NOT NULL, n INT NOT NULL, note CHAR(40) NOT NULL, PRIMARY KEY (k, n)) ENGINE=InnoDB"));
        let table = format!("sb.t{i}");
        run(&[
            "table",
            "add",
            &table,
            "--function",
            FUNCTION,
            "--column",
            "k",
        ]);
    }
    (sb, inv_path, inv)
}

/// `shard add`: a shard of [`FUNCTION`] on `node` from `lower_bound`, its schema made
/// from the template.
pub fn add_shard(inv_path: &Path, node: &str, lower_bound: i64) {
    shardctl(
        inv_path,
        &[
            "shard",
            "add",
            "--function",
            FUNCTION,
            "--node",
            node,
            "--lower-bound",
            &lower_bound.to_string(),
        ],
    );
}

/// Loads `rows` sysbench-like rows of about 200 bytes (ids `first`, `first + 1`, ...,
/// `k` scattered, `c` and `pad` of 120 and 60 characters) into `sb_<shard>.sbtest` on
/// `node`, unlogged (`sql_log_bin = 0`), in INSERTs of 250,000 rows. Returns the
/// connection, its session still unlogged.
pub fn load_rows(inv: &Inventory, node: &str, shard: u32, first: i64, rows: u64) -> Server {
    let mut s = Server::connect_node(inv, node).unwrap();
    exec(&mut s, "SET SESSION sql_log_bin = 0");
    let batch = 250_000u64;
    let mut done = 0u64;
    while done < rows {
        let n = batch.min(rows - done);
        exec(&mut s, &format!(
            "INSERT INTO sb_{shard}.sbtest SELECT {first} + {done} + seq, seq * 7919 % 1000003, CONCAT(MD5(seq), MD5(seq + 1), MD5(seq + 2), LEFT(MD5(seq + 3), 24)), CONCAT(MD5(seq * 3), LEFT(MD5(seq * 5), 28)) FROM sb_{shard}.seq_0_to_{}",
            n - 1
        ));
        done += n;
    }
    s
}
