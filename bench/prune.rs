//! Prune vs pt-archiver, side by side in one run on the same data, with a replica attached
//! to the pruned node: rows deleted per second and the replica's peak lag for each.
//!
//! Run: `cargo bench --bench prune` (`BENCH_ROWS` to resize, default 400000).

mod smoke;

use shardctl::config::Inventory;
use shardctl::sandbox::SandboxBuilder;
use shardctl::server::{Server, Stmt};
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn exec(s: &mut Server, sql: &str) {
    s.exec(&Stmt::text(sql))
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
}

fn shardctl(inv: &std::path::Path, args: &[&str]) {
    let out = Command::new(env!("CARGO_BIN_EXE_shardctl"))
        .env("SHARDCTL_YES", "1")
        .arg("--config")
        .arg(inv)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Samples the replica's lag every 50 ms until stopped; returns the peak of the known
/// samples in seconds and how many samples could not tell (receiver reconnecting).
fn watch_lag(inv: Inventory, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<(u64, u64)> {
    std::thread::spawn(move || {
        let mut r = Server::connect_node(&inv, "node2").unwrap();
        let ch = shardctl::ident::Channel::new("bench").unwrap();
        let peak = AtomicU64::new(0);
        let mut unknown = 0;
        while !stop.load(Ordering::Relaxed) {
            let st = r.channel_status(&ch).unwrap();
            if std::env::var("BENCH_DEBUG").is_ok()
                && st.as_ref().and_then(|s| s.seconds_behind).is_none()
            {
                eprintln!("lag unknown: {st:?}");
            }
            match st.and_then(|s| s.seconds_behind) {
                Some(lag) => {
                    peak.fetch_max(lag, Ordering::Relaxed);
                }
                None => unknown += 1,
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        (peak.load(Ordering::Relaxed), unknown)
    })
}

fn main() {
    let rows: u64 = std::env::var("BENCH_ROWS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(smoke::or(2_000, 400_000));
    let half = rows / 2;
    let sb = SandboxBuilder::for_tests(2).unwrap().start().unwrap();
    let base = Inventory::load(&sb.inventory_path()).unwrap();
    let mut n1 = Server::connect_node(&base, "node1").unwrap();
    exec(&mut n1, "CREATE DATABASE pr");
    exec(&mut n1, "CREATE TABLE pr.t (id INT NOT NULL PRIMARY KEY, k INT NOT NULL, pad CHAR(100) NOT NULL, KEY (k))");
    // node1 lists node2 as its replica, so prune throttles on its lag.
    let text = std::fs::read_to_string(sb.inventory_path()).unwrap();
    let text = text.replacen("    port: ", "    replicas:\n    - node2\n    port: ", 1);
    let inv_path = sb.dir().join("bench-inventory.yaml");
    std::fs::write(&inv_path, text).unwrap();
    let inv = Inventory::load(&inv_path).unwrap();
    for args in [
        vec!["init"],
        vec!["node", "add", "node1"],
        vec!["function", "add", "f", "--type", "range", "--key", "int"],
        vec!["table", "add", "pr.t", "--function", "f", "--column", "id"],
        vec![
            "shard",
            "add",
            "--function",
            "f",
            "--node",
            "node1",
            "--lower-bound",
            "0",
        ],
    ] {
        shardctl(&inv_path, &args);
    }
    let bound = half.to_string();
    shardctl(
        &inv_path,
        &[
            "shard",
            "add",
            "--function",
            "f",
            "--node",
            "node1",
            "--lower-bound",
            &bound,
        ],
    );
    // The same rows in the shard and in a plain copy for pt-archiver.
    for db in ["pr_1", "ptcopy"] {
        exec(&mut n1, &format!("CREATE DATABASE IF NOT EXISTS {db}"));
        exec(
            &mut n1,
            &format!("CREATE TABLE IF NOT EXISTS {db}.t LIKE pr.t"),
        );
        exec(&mut n1, &format!("INSERT INTO {db}.t SELECT seq, seq % 1000, RPAD(MD5(seq), 100, 'x') FROM {db}.seq_0_to_{}", rows - 1));
    }
    // node2 gets a consistent copy of both schemas and replicates them from there on.
    let pairs: Vec<shardctl::copy::SchemaPair> = ["pr_1", "ptcopy"]
        .iter()
        .map(|d| {
            let id = shardctl::ident::Ident::new("schema", d).unwrap();
            shardctl::copy::SchemaPair {
                from: id.clone(),
                to: id,
            }
        })
        .collect();
    let spec =
        |n: &str| shardctl::server::ConnectSpec::for_node(&inv, inv.node(n).unwrap()).unwrap();
    let copied = shardctl::copy::native::copy(
        &spec("node1"),
        &spec("node2"),
        &pairs,
        Default::default(),
        &Default::default(),
    )
    .unwrap();
    let pos = copied.coordinates.unwrap().position.to_string();
    shardctl(
        &inv_path,
        &[
            "change-master",
            "--node",
            "node2",
            "--channel",
            "bench",
            "--from",
            "node1",
            "--position",
            &pos,
            "--no-start",
        ],
    );
    shardctl(
        &inv_path,
        &[
            "filter",
            "--node",
            "node2",
            "--channel",
            "bench",
            "--schemas",
            "pr_1,ptcopy",
        ],
    );
    shardctl(
        &inv_path,
        &[
            "change-master",
            "--node",
            "node2",
            "--channel",
            "bench",
            "--from",
            "node1",
            "--position",
            &pos,
        ],
    );

    let now = n1.coordinates().unwrap().position.to_string();
    shardctl(
        &inv_path,
        &[
            "wait",
            "--node",
            "node2",
            "--channel",
            "bench",
            "--position",
            &now,
            "--timeout",
            "120",
        ],
    );

    // shardctl prune.
    let stop = Arc::new(AtomicBool::new(false));
    let lag = watch_lag(inv.clone(), Arc::clone(&stop));
    let t = Instant::now();
    shardctl(&inv_path, &["prune", "--shard", "1"]);
    let prune_secs = t.elapsed().as_secs_f64();
    std::thread::sleep(Duration::from_millis(300));
    stop.store(true, Ordering::Relaxed);
    let prune_lag = lag.join().unwrap();
    let left: i64 = n1
        .first(&Stmt::text("SELECT COUNT(*) FROM pr_1.t"))
        .unwrap()
        .unwrap();
    assert_eq!(left as u64, half);

    // pt-archiver, the same deletes.
    let stop = Arc::new(AtomicBool::new(false));
    let lag = watch_lag(inv.clone(), Arc::clone(&stop));
    let port = sb.node("node1").unwrap().port;
    let t = Instant::now();
    let out = Command::new("pt-archiver")
        .arg("--source")
        .arg(format!(
            "h=127.0.0.1,P={port},D=ptcopy,t=t,F={}",
            sb.dir().join("client.cnf").display()
        ))
        .args([
            "--purge",
            "--bulk-delete",
            "--limit",
            "1000",
            "--commit-each",
            "--no-check-charset",
        ])
        .arg("--where")
        .arg(format!("id >= {half}"))
        .output()
        .unwrap();
    let pt_secs = t.elapsed().as_secs_f64();
    assert!(
        out.status.success(),
        "pt-archiver: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::thread::sleep(Duration::from_millis(300));
    stop.store(true, Ordering::Relaxed);
    let pt_lag = lag.join().unwrap();
    let left: i64 = n1
        .first(&Stmt::text("SELECT COUNT(*) FROM ptcopy.t"))
        .unwrap()
        .unwrap();
    assert_eq!(left as u64, half);

    let rate = |s: f64| half as f64 / s;
    println!(
        "Deleting {half} of {rows} rows (~130-byte rows, one secondary index), replica attached:\n"
    );
    println!("| tool | wall time | rows/s | replica peak lag (unknown samples) | ratio |");
    println!("|---|---|---|---|---|");
    println!(
        "| `shardctl prune` (adaptive chunks, 0.5 s target, replica kept within a chunk) | {prune_secs:.2} s | {:.0} | {} s ({}) | {:.2}x pt-archiver |",
        rate(prune_secs), prune_lag.0, prune_lag.1, pt_secs / prune_secs
    );
    println!(
        "| `pt-archiver --purge --bulk-delete --limit 1000 --commit-each` | {pt_secs:.2} s | {:.0} | {} s ({}) | 1.00 |",
        rate(pt_secs), pt_lag.0, pt_lag.1
    );
}
