//! Directory benchmarks on a real 3-node sandbox:
//! - `shardctl status` with 1,000 shards (the binary, median of runs), against the same
//!   figures gathered naively with one round trip per shard;
//! - Router lookups per second in memory, against the chapter's SQL lookup (one query to
//!   the directory per key).
//!
//! Run: `cargo bench --bench directory` (prints a Markdown block for docs/BENCHMARKS.md;
//! `BENCH_SHARDS` changes the shard count).

mod smoke;

use shardctl::config::Inventory;
use shardctl::directory::{Directory, Key, Router};
use shardctl::ops::add_shard::{add_shard, AddShard, Placement};
use shardctl::sandbox::SandboxBuilder;
use shardctl::server::{Server, Stmt};
use std::time::Instant;

const SHARDS: u32 = 1000;
const RUNS: usize = 5;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn main() {
    let shards: u32 = std::env::var("BENCH_SHARDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(smoke::or(10, SHARDS));
    let runs = smoke::or(1, RUNS);
    let sb = SandboxBuilder::for_tests(3).unwrap().start().unwrap();
    let inv = Inventory::load(&sb.inventory_path()).unwrap();
    let mut n1 = Server::connect_node(&inv, "node1").unwrap();
    for sql in [
        "CREATE DATABASE app",
        "CREATE TABLE app.accounts (id BIGINT PRIMARY KEY, balance INT, note VARCHAR(40))",
        "CREATE TABLE app.events (id BIGINT, seq INT, body VARCHAR(80), PRIMARY KEY (id, seq))",
    ] {
        n1.exec(&Stmt::text(sql)).unwrap();
    }
    let mut dir = Directory::connect(&inv).unwrap();
    dir.init().unwrap();
    let mut dir = Directory::open(&inv).unwrap();
    for n in ["node1", "node2", "node3"] {
        let node = inv.node(n).unwrap();
        dir.add_node(n, node.host(), node.port()).unwrap();
    }
    let f = shardctl::ident::Ident::new("function", "acct").unwrap();
    dir.add_function(
        &f,
        shardctl::directory::ShardingType::Range,
        shardctl::directory::KeyType::Int,
    )
    .unwrap();
    for t in ["accounts", "events"] {
        dir.add_table(
            &shardctl::ident::Ident::new("schema", "app").unwrap(),
            &shardctl::ident::Ident::new("table", t).unwrap(),
            &shardctl::directory::TablePlacement::Sharded {
                function: "acct".into(),
                column: shardctl::ident::Ident::new("column", "id").unwrap(),
            },
        )
        .unwrap();
    }
    let t0 = Instant::now();
    for i in 0..shards {
        let node = ["node1", "node2", "node3"][i as usize % 3];
        add_shard(
            &inv,
            &AddShard {
                function: "acct".into(),
                node: node.into(),
                placement: Placement::LowerBound((i64::from(i) * 1000).to_string()),
                template_node: Some("node1".into()),
            },
        )
        .unwrap();
    }
    let setup = t0.elapsed();
    eprintln!("created {shards} shards in {:.1}s", setup.as_secs_f64());

    // shardctl status, the binary, as an operator runs it.
    let bin = env!("CARGO_BIN_EXE_shardctl");
    let mut status_times = Vec::new();
    for _ in 0..runs {
        let t = Instant::now();
        let out = std::process::Command::new(bin)
            .arg("--config")
            .arg(sb.inventory_path())
            .args(["--output", "json", "status"])
            .output()
            .expect("run shardctl");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        status_times.push(t.elapsed().as_secs_f64());
    }
    // The naive way: one information_schema round trip per shard.
    let snap = dir.load().unwrap();
    let mut naive_times = Vec::new();
    for _ in 0..runs {
        let t = Instant::now();
        let mut conns: std::collections::HashMap<String, Server> = std::collections::HashMap::new();
        for s in &snap.shards {
            let c = conns
                .entry(s.node.clone())
                .or_insert_with(|| Server::connect_node(&inv, &s.node).unwrap());
            let _: Option<(u64, u64)> = c
                .first(&Stmt::with(
                    "SELECT COALESCE(SUM(table_rows),0), COALESCE(SUM(data_length+index_length),0) FROM information_schema.tables WHERE table_schema = ?",
                    vec![format!("app_{}", s.id).into()],
                ))
                .unwrap();
        }
        naive_times.push(t.elapsed().as_secs_f64());
    }

    // Router lookups in memory.
    let router = Router::connect(&inv).unwrap();
    let max_key = i64::from(shards) * 1000;
    let n_lookups: u64 = smoke::or(10_000, 2_000_000);
    let mut lookup_rates = Vec::new();
    for _ in 0..runs {
        let t = Instant::now();
        let mut sum = 0u64;
        let mut k: i64 = 12345;
        for _ in 0..n_lookups {
            k = (k * 1103515245 + 12345).rem_euclid(max_key);
            sum += u64::from(router.shard_for_function("acct", &Key::Int(k)).unwrap().id);
        }
        std::hint::black_box(sum);
        lookup_rates.push(n_lookups as f64 / t.elapsed().as_secs_f64());
    }
    // The chapter's SQL lookup: one query to the directory per key.
    let mut dirdb = Server::connect_node(&inv, "node1").unwrap();
    let n_sql: u32 = smoke::or(100, 3000);
    let mut sql_rates = Vec::new();
    for _ in 0..runs {
        let t = Instant::now();
        let mut k: i64 = 12345;
        for _ in 0..n_sql {
            k = (k * 1103515245 + 12345).rem_euclid(max_key);
            let _: Option<(u32, String, u16)> = dirdb
                .first(&Stmt::with(
                    "SELECT shard_id, host, port FROM shardctl.ranges JOIN shardctl.locations USING (shard_id) WHERE ranges.func_id = 1 AND ? >= ranges.lower_bound ORDER BY ranges.lower_bound DESC LIMIT 1",
                    vec![k.into()],
                ))
                .unwrap();
        }
        sql_rates.push(f64::from(n_sql) / t.elapsed().as_secs_f64());
    }
    let (status, naive) = (median(status_times), median(naive_times));
    let (router_rate, sql_rate) = (median(lookup_rates), median(sql_rates));
    println!("| measure | shardctl | reference | ratio |");
    println!("|---|---|---|---|");
    println!(
        "| `status --output json`, {shards} shards, 3 nodes (median of {runs}, whole process) | {:.3} s | one query per shard: {:.3} s | {:.1}x faster |",
        status, naive, naive / status
    );
    println!(
        "| lookups per second, range function with {shards} shards (median of {runs}) | Router: {:.2} M/s | chapter SQL per key: {:.0}/s | {:.0}x |",
        router_rate / 1e6, sql_rate, router_rate / sql_rate
    );
}
