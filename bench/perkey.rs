//! A per-key directory (issue 30, item 1) on a real sandbox server: the import of N keys
//! (`Directory::import_keys`, what `shardctl keys import` runs), lookups through the
//! Router cold (the key's one row read) and warm (from its cache), beside the chapter's SQL
//! lookup (the contract's `key` statement, one round trip a key), the Router's memory with a
//! full cache of keys, and what each router re-reads when one key moves (rows from the
//! router, bytes from the directory server's own count, nothing else connected to it).
//!
//! Run: `cargo bench --bench perkey` (prints a Markdown block for docs/BENCHMARKS.md).
//! `BENCH_KEYS`, `BENCH_SHARDS` and `BENCH_LOOKUPS` change the size. `BENCH_RUNS` (default
//! one) repeats the whole measure, each run on a fresh server, and reports medians.
//! `BENCH_BUFFER_POOL` (default: the sandbox's 64M) sizes the server's InnoDB buffer pool.
//! `BENCH_SMOKE=1` runs it at a tiny size.

mod smoke;

use shardctl::config::Inventory;
use shardctl::directory::{
    Directory, Key, KeyType, NewMapping, Reload, Router, ShardingType, TablePlacement,
    DEFAULT_KEY_CACHE_CAPACITY,
};
use shardctl::ident::Ident;
use shardctl::sandbox::SandboxBuilder;
use shardctl::server::{Server, Stmt};
use std::time::Instant;

fn env(name: &str, smoke: u64, real: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(smoke::or(smoke, real))
}

/// The p-th percentile (0..=100) of `v`, in the unit given.
fn pct(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let i = ((v.len() as f64 - 1.0) * p / 100.0).round() as usize;
    v[i]
}

fn bytes_sent(admin: &mut Server) -> u64 {
    let row: Option<(String, String)> = admin
        .first(&Stmt::text("SHOW GLOBAL STATUS LIKE 'Bytes_sent'"))
        .unwrap();
    row.unwrap().1.parse().unwrap()
}

/// The resident memory of this process, in bytes.
fn rss() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    let pages: u64 = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    pages * 4096
}

/// A pseudo-random key of 0..n (a multiplicative step through the keys).
fn key_at(i: u64, n: u64) -> i64 {
    ((i.wrapping_mul(2_654_435_761)) % n) as i64
}

/// One run's figures.
struct Figures {
    import_s: f64,
    file_bytes: u64,
    sql: (f64, f64),
    cold: (f64, f64),
    warm: (f64, f64),
    held: u64,
    memory: u64,
    refresh_rows: u64,
    refresh_bytes: u64,
    reread_bytes: u64,
}

fn main() {
    let keys = env("BENCH_KEYS", 20_000, 10_000_000);
    let shards = env("BENCH_SHARDS", 8, 100) as u32;
    let lookups = env("BENCH_LOOKUPS", 2_000, 20_000);
    let runs = env("BENCH_RUNS", 1, 1).max(1);
    let pool = std::env::var("BENCH_BUFFER_POOL").ok();
    let all: Vec<Figures> = (0..runs)
        .map(|run| {
            let f = measure(keys, shards, lookups, pool.as_deref());
            eprintln!(
                "run {}: import {:.1} s, SQL p50/p99 {:.3}/{:.3} ms, cold {:.3}/{:.3} ms, warm {:.4}/{:.4} ms, memory {:.1} MB ({} keys held), refresh {} rows {} bytes, re-read {} bytes",
                run + 1,
                f.import_s,
                f.sql.0,
                f.sql.1,
                f.cold.0,
                f.cold.1,
                f.warm.0,
                f.warm.1,
                f.memory as f64 / 1e6,
                f.held,
                f.refresh_rows,
                f.refresh_bytes,
                f.reread_bytes
            );
            f
        })
        .collect();
    report(&all, keys, shards, lookups, pool.as_deref());
}

/// The median of `v` and, for more than one run, each value: `m (a, b, c)`.
fn median_of(all: &[Figures], digits: usize, get: impl Fn(&Figures) -> f64) -> String {
    let mut v: Vec<f64> = all.iter().map(get).collect();
    let each: Vec<String> = v.iter().map(|x| format!("{x:.digits$}")).collect();
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let m = format!("{:.digits$}", v[v.len() / 2]);
    if all.len() < 2 {
        m
    } else {
        format!("{m} ({})", each.join(", "))
    }
}

fn report(all: &[Figures], keys: u64, shards: u32, lookups: u64, pool: Option<&str>) {
    let first = &all[0];
    println!(
        "{} run(s), each on a fresh server (InnoDB buffer pool {}); medians, each run in brackets.",
        all.len(),
        pool.unwrap_or("64M, the sandbox's")
    );
    println!();
    println!("| measure ({keys} keys over {shards} shards, one server; {lookups} lookups of distinct keys) | figure |");
    println!("|---|---|");
    println!(
        "| import (`keys import`: staged, checked, added in changes of 100,000 keys; a {:.0} MB file), seconds | {} |",
        first.file_bytes as f64 / 1e6,
        median_of(all, 1, |f| f.import_s)
    );
    println!(
        "| import, keys/s | {} |",
        median_of(all, 0, |f| keys as f64 / f.import_s)
    );
    println!(
        "| the chapter's SQL lookup (contract block `key`, one round trip) p50 / p99, ms | {} / {} |",
        median_of(all, 3, |f| f.sql.0),
        median_of(all, 3, |f| f.sql.1)
    );
    println!(
        "| Router lookup, cold (the key's row read by primary key) p50 / p99, ms | {} / {} |",
        median_of(all, 3, |f| f.cold.0),
        median_of(all, 3, |f| f.cold.1)
    );
    println!(
        "| Router lookup, warm (from its cache) p50 / p99, ms | {} / {} |",
        median_of(all, 4, |f| f.warm.0),
        median_of(all, 4, |f| f.warm.1)
    );
    println!(
        "| Router memory with its cache filled ({} keys held; capacity {DEFAULT_KEY_CACHE_CAPACITY}; the keys are never loaded whole), MB | {} |",
        median_of(all, 0, |f| f.held as f64),
        median_of(all, 1, |f| f.memory as f64 / 1e6)
    );
    println!(
        "| one key moved: rows a router re-reads at its refresh (version twice, the log's row) | {} |",
        median_of(all, 0, |f| f.refresh_rows as f64)
    );
    println!(
        "| one key moved: bytes the directory sent for that refresh | {} |",
        median_of(all, 0, |f| f.refresh_bytes as f64)
    );
    println!(
        "| one key moved: bytes for the moved key's next lookup (its one row) | {} |",
        median_of(all, 0, |f| f.reread_bytes as f64)
    );
}

/// One run on a fresh one-node sandbox.
fn measure(keys: u64, shards: u32, lookups: u64, pool: Option<&str>) -> Figures {
    let mut builder = SandboxBuilder::for_tests(1).unwrap();
    if let Some(size) = pool {
        builder = builder.extra_config(format!("innodb-buffer-pool-size={size}"));
    }
    let sb = builder.start().unwrap();
    let inv = Inventory::load(&sb.inventory_path()).unwrap();
    Directory::connect(&inv).unwrap().init().unwrap();
    let mut dir = Directory::open(&inv).unwrap();
    let node = inv.node("node1").unwrap();
    dir.add_node("node1", node.host(), node.port()).unwrap();
    let f = Ident::new("function", "users").unwrap();
    dir.add_function(&f, ShardingType::Key, KeyType::Int)
        .unwrap();
    dir.add_table(
        &Ident::new("schema", "app").unwrap(),
        &Ident::new("table", "accounts").unwrap(),
        &TablePlacement::Sharded {
            function: "users".into(),
            column: Ident::new("column", "uid").unwrap(),
        },
    )
    .unwrap();
    let snap = dir.load().unwrap();
    let func = snap.function("users").unwrap().clone();
    let dnode = snap.nodes[0].clone();
    for _ in 0..shards {
        let id = dir.insert_shard(&func, &dnode, &NewMapping::Keys).unwrap();
        dir.set_shard_state(id, shardctl::directory::ShardState::Online)
            .unwrap();
    }

    // The import: the file written first (not timed), then imported as `keys import` does.
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("keys.csv");
    {
        use std::io::Write;
        let mut w = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
        for k in 0..keys {
            writeln!(w, "{k},{}", 1 + (k % u64::from(shards))).unwrap();
        }
    }
    let file_bytes = std::fs::metadata(&path).unwrap().len();
    let t = Instant::now();
    let rows = {
        use std::io::BufRead;
        let r = std::io::BufReader::new(std::fs::File::open(&path).unwrap());
        r.lines().enumerate().map(|(i, l)| {
            let l = l.unwrap();
            let (k, s) = l.split_once(',').unwrap();
            Ok((
                i as u64 + 1,
                Key::Int(k.parse().unwrap()),
                s.parse::<u32>().unwrap(),
            ))
        })
    };
    let done = dir.import_keys(&func, rows, 5000, 100_000).unwrap();
    let import_s = t.elapsed().as_secs_f64();
    assert_eq!(done.added, keys);
    eprintln!("imported {keys} keys in {import_s:.1} s");

    // Lookups: the chapter's SQL (the contract's `key` statement) on an application
    // connection, then a fresh Router cold (each key's first lookup) and warm (again).
    let contract = "SELECT l.shard_id, l.node, l.host, l.port, l.state, l.availability \
        FROM partition_functions f JOIN key_shards k ON k.func_id = f.func_id \
        JOIN locations l ON l.shard_id = k.shard_id \
        WHERE f.name = ? AND k.key_value = CAST(? AS BINARY)";
    let d = dir.schema().quoted();
    let contract = contract
        .replace(
            "FROM partition_functions",
            &format!("FROM {d}.partition_functions"),
        )
        .replace("JOIN key_shards", &format!("JOIN {d}.key_shards"))
        .replace("JOIN locations", &format!("JOIN {d}.locations"));
    let mut app = Directory::open_for_application(&inv).unwrap();
    let mut sql_ms = Vec::new();
    type Answer = (u32, String, String, u16, String, String);
    for i in 0..lookups {
        let k = key_at(i, keys).to_string();
        let t = Instant::now();
        let r: Option<Answer> = app
            .server()
            .first(&Stmt::with(
                contract.clone(),
                vec!["users".into(), k.clone().into()],
            ))
            .unwrap();
        sql_ms.push(t.elapsed().as_secs_f64() * 1000.0);
        assert!(r.is_some(), "{k}");
    }
    let before = rss();
    let router = Router::connect(&inv).unwrap();
    let (mut cold, mut warm) = (Vec::new(), Vec::new());
    for i in 0..lookups {
        let k = Key::Int(key_at(i, keys));
        let t = Instant::now();
        router.shard_for_function("users", &k).unwrap();
        cold.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    for i in 0..lookups {
        let k = Key::Int(key_at(i, keys));
        let t = Instant::now();
        router.shard_for_function("users", &k).unwrap();
        warm.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    let stats = router.key_cache();
    assert_eq!(stats.misses, lookups);
    // Memory: the router with its cache filled to capacity (or with every key, when fewer).
    let fill = (DEFAULT_KEY_CACHE_CAPACITY as u64).min(keys);
    for i in 0..fill {
        router
            .shard_for_function("users", &Key::Int(i as i64))
            .unwrap();
    }
    let held = router.key_cache().entries;
    let memory = rss().saturating_sub(before);
    drop(router);

    // One key moves: what a router re-reads.
    let mut admin = Server::connect_node(&inv, "node1").unwrap();
    let overhead = {
        let a = bytes_sent(&mut admin);
        b_minus(bytes_sent(&mut admin), a)
    };
    let mut router = Router::connect(&inv).unwrap();
    let moved = Key::Int(key_at(1, keys));
    let from = router.shard_for_function("users", &moved).unwrap().id;
    let to = if from == 1 { 2 } else { 1 };
    dir.reassign_keys(&func, std::slice::from_ref(&moved), to)
        .unwrap();
    let b0 = bytes_sent(&mut admin);
    assert!(router.refresh().unwrap());
    let refresh_bytes = b_minus(bytes_sent(&mut admin), b0 + overhead);
    let refresh_rows = match router.last_reload().unwrap() {
        Reload::Incremental {
            rows, keys_dropped, ..
        } => {
            assert_eq!(*keys_dropped, 1);
            *rows
        }
        other => panic!("not incremental: {other:?}"),
    };
    let b0 = bytes_sent(&mut admin);
    assert_eq!(router.shard_for_function("users", &moved).unwrap().id, to);
    let reread_bytes = b_minus(bytes_sent(&mut admin), b0 + overhead);

    let (c50, c99) = (pct(&mut cold, 50.0), pct(&mut cold, 99.0));
    let (w50, w99) = (pct(&mut warm, 50.0), pct(&mut warm, 99.0));
    let (s50, s99) = (pct(&mut sql_ms, 50.0), pct(&mut sql_ms, 99.0));
    Figures {
        import_s,
        file_bytes,
        sql: (s50, s99),
        cold: (c50, c99),
        warm: (w50, w99),
        held: held as u64,
        memory,
        refresh_rows: refresh_rows as u64,
        refresh_bytes,
        reread_bytes,
    }
}

fn b_minus(a: u64, b: u64) -> u64 {
    a.saturating_sub(b)
}
