//! Router refresh per single-shard change (issue 30, item 2), on a real sandbox server:
//! what a router re-reads when one shard of a directory with thousands of shards changes,
//! following the change log (`Router::refresh`) against reading the whole directory again
//! (`Router::reload`, what every refresh did before schema 12). Rows come from the router
//! (`Router::last_reload`), bytes from the directory server's own count of what it sent
//! (`Bytes_sent`, nothing else connected to it), times are the router's.
//!
//! Run: `cargo bench --bench refresh` (prints a Markdown block for docs/BENCHMARKS.md;
//! `BENCH_SHARDS` and `BENCH_RUNS` change the size).

mod smoke;

use shardctl::config::Inventory;
use shardctl::directory::{Changed, Directory, KeyType, Reload, Router, ShardState, ShardingType};
use shardctl::ident::Ident;
use shardctl::sandbox::SandboxBuilder;
use shardctl::server::{Server, Stmt};
use std::time::Instant;

const SHARDS: u32 = 4000;
const RUNS: usize = 9;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

/// What the directory server has sent since it started, over all connections.
fn bytes_sent(admin: &mut Server) -> u64 {
    let row: Option<(String, String)> = admin
        .first(&Stmt::text("SHOW GLOBAL STATUS LIKE 'Bytes_sent'"))
        .unwrap();
    row.unwrap().1.parse().unwrap()
}

/// Bytes the server sends for `f`, less what one status query costs.
fn measured(admin: &mut Server, overhead: u64, f: impl FnOnce()) -> u64 {
    let before = bytes_sent(admin);
    f();
    bytes_sent(admin) - before - overhead
}

fn main() {
    let shards: u32 = std::env::var("BENCH_SHARDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(smoke::or(50, SHARDS));
    let runs: usize = std::env::var("BENCH_RUNS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(smoke::or(1, RUNS));
    let sb = SandboxBuilder::for_tests(1).unwrap().start().unwrap();
    let inv = Inventory::load(&sb.inventory_path()).unwrap();
    Directory::connect(&inv).unwrap().init().unwrap();
    let mut dir = Directory::open(&inv).unwrap();
    let node = inv.node("node1").unwrap();
    // Three directory nodes at the one server: shards only need a location here.
    for n in ["node1", "node2", "node3"] {
        dir.add_node(n, node.host(), node.port()).unwrap();
    }
    let f = Ident::new("function", "acct").unwrap();
    let func_id = dir
        .add_function(&f, ShardingType::Range, KeyType::Int)
        .unwrap();
    for t in ["accounts", "events"] {
        dir.add_table(
            &Ident::new("schema", "app").unwrap(),
            &Ident::new("table", t).unwrap(),
            &shardctl::directory::TablePlacement::Sharded {
                function: "acct".into(),
                column: Ident::new("column", "id").unwrap(),
            },
        )
        .unwrap();
    }
    // The shards in one change (every shard's location and range), as `shard add` would
    // leave them one by one.
    let t0 = Instant::now();
    let d = dir.schema().quoted();
    dir.change(|d_, version| {
        let s = d_.server();
        s.exec(&Stmt::with(
            format!(
                "INSERT INTO {d}.locations (shard_id, func_id, node, host, port, state, version)
                 SELECT seq, ?, ELT(1 + seq % 3, 'node1', 'node2', 'node3'), ?, ?, 'online', ?
                 FROM {d}.seq_1_to_{shards}"
            ),
            vec![
                func_id.into(),
                node.host().into(),
                node.port().into(),
                version.into(),
            ],
        ))?;
        s.exec(&Stmt::with(
            format!(
                "INSERT INTO {d}.ranges (func_id, lower_bound, shard_id)
                 SELECT ?, (seq - 1) * 1000, seq FROM {d}.seq_1_to_{shards}"
            ),
            vec![func_id.into()],
        ))?;
        Ok(((), Changed::Everything))
    })
    .unwrap();
    eprintln!(
        "directory of {shards} shards written in {:.1}s",
        t0.elapsed().as_secs_f64()
    );

    let mut admin = Server::connect_node(&inv, "node1").unwrap();
    let overhead = {
        let a = bytes_sent(&mut admin);
        let b = bytes_sent(&mut admin);
        b - a
    };
    let mut incremental = Router::connect(&inv).unwrap();
    let mut full = Router::connect(&inv).unwrap();
    assert_eq!(incremental.snapshot().shards.len(), shards as usize);
    let (mut inc_rows, mut inc_bytes, mut inc_ms) = (Vec::new(), Vec::new(), Vec::new());
    let (mut full_rows, mut full_bytes, mut full_ms) = (Vec::new(), Vec::new(), Vec::new());
    for run in 0..runs {
        // One shard's state changes, as a move's fence or flip does.
        let shard = 1 + (run as u32 * 7919) % shards;
        let state = if run % 2 == 0 {
            ShardState::Moving
        } else {
            ShardState::Online
        };
        dir.set_shard_state(shard, state).unwrap();

        let mut elapsed = 0.0;
        let bytes = measured(&mut admin, overhead, || {
            let t = Instant::now();
            assert!(incremental.refresh().unwrap());
            elapsed = t.elapsed().as_secs_f64() * 1000.0;
        });
        match incremental.last_reload().unwrap() {
            Reload::Incremental {
                shards: s, rows, ..
            } => {
                assert_eq!(s, &[shard]);
                inc_rows.push(*rows as f64);
            }
            other => panic!("not incremental: {other:?}"),
        }
        inc_bytes.push(bytes as f64);
        inc_ms.push(elapsed);

        let bytes = measured(&mut admin, overhead, || {
            let t = Instant::now();
            full.reload().unwrap();
            elapsed = t.elapsed().as_secs_f64() * 1000.0;
        });
        full_rows.push(full.last_reload().unwrap().rows() as f64);
        full_bytes.push(bytes as f64);
        full_ms.push(elapsed);
        assert_eq!(incremental.snapshot(), full.snapshot(), "run {run}");
    }
    let (ir, fr) = (median(inc_rows), median(full_rows));
    let (ib, fb) = (median(inc_bytes), median(full_bytes));
    let (it, ft) = (median(inc_ms), median(full_ms));
    println!("| measure ({shards} shards, one shard's state changed; median of {runs}) | change log (`refresh`) | whole directory (`reload`) | ratio |");
    println!("|---|---|---|---|");
    println!(
        "| rows read from the directory | {ir:.0} | {fr:.0} | {:.0}x fewer |",
        fr / ir
    );
    println!(
        "| bytes the directory server sent | {ib:.0} | {fb:.0} | {:.0}x fewer |",
        fb / ib
    );
    println!(
        "| time to bring the cache up to date | {it:.2} ms | {ft:.2} ms | {:.0}x faster |",
        ft / it
    );
}
