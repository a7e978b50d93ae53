//! The directory on a 3-member Galera cluster against the directory on one server, in the
//! same run, on the same machine (issue 29; docs/BENCHMARKS.md):
//! - a move's longest write pause on the moving shard under the workload (fresh routers,
//!   200 writes/s), the directory on one server of its own (a fourth node holding no
//!   shard), then on the cluster, moves of the two alternating;
//! - the extra pause when the writer member is SIGKILLed under the fence: moves that pause
//!   2 s with their fence up (a fault point), with and without the kill;
//! - the directory's load with 1,000 routers polling its version once a second each,
//!   simulated in this process (one connection per router, spread over the members): the
//!   polls answered per second, their latency, and the CPU the directory's servers spent.
//!
//! Run: `cargo bench --bench directory_cluster` (`BENCH_MOVES`, `BENCH_ROUTERS` and
//! `BENCH_SECONDS` change the sizes; `BENCH_SMOKE=1` runs it tiny, once).

mod smoke;

use shardctl::config::Inventory;
use shardctl::directory::{Directory, Router};
use shardctl::ops::add_shard::{add_shard, AddShard, Placement};
use shardctl::sandbox::{Sandbox, SandboxBuilder};
use shardctl::server::{Server, Stmt};
use shardctl::workload;
use std::time::{Duration, Instant};

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn percentile(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[((v.len() - 1) as f64 * p).round() as usize]
}

/// A sandbox of three fleet nodes and a directory on servers of its own (`members`
/// Galera members, or with none a fourth node, node4, holding no shard), function `f` over
/// `app.items` and the workload's table, shard 1 on node1 (from 0) with a few thousand rows
/// and shard 2 on node2 (from 100000).
fn fleet(members: usize) -> (Sandbox, Inventory) {
    let sb = SandboxBuilder::for_tests(if members == 0 { 4 } else { 3 })
        .unwrap()
        .directory_cluster(members)
        .extra_config("max-connections=1500")
        .start()
        .unwrap();
    if members == 0 {
        let mut inv = Inventory::load(&sb.inventory_path()).unwrap();
        inv.file.directory.node = Some("node4".into());
        std::fs::write(&inv.path, serde_yaml::to_string(&inv.file).unwrap()).unwrap();
    }
    let inv = Inventory::load(&sb.inventory_path()).unwrap();
    let mut template = Server::connect_node(&inv, "node1").unwrap();
    for sql in [
        "CREATE DATABASE app",
        "CREATE TABLE app.items (k BIGINT NOT NULL, n INT NOT NULL, PRIMARY KEY (k, n))",
        "CREATE TABLE app.shardctl_workload (k BIGINT NOT NULL, seq BIGINT UNSIGNED NOT NULL, at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6), PRIMARY KEY (k, seq))",
    ] {
        template.exec(&Stmt::text(sql)).unwrap();
    }
    Directory::connect(&inv).unwrap().init().unwrap();
    let mut dir = Directory::open(&inv).unwrap();
    for n in ["node1", "node2", "node3"] {
        let node = inv.node(n).unwrap();
        dir.add_node(n, node.host(), node.port()).unwrap();
    }
    let id = |kind: &str, name: &str| shardctl::ident::Ident::new(kind, name).unwrap();
    dir.add_function(
        &id("function", "f"),
        shardctl::directory::ShardingType::Range,
        shardctl::directory::KeyType::Int,
    )
    .unwrap();
    for t in ["items", "shardctl_workload"] {
        dir.add_table(
            &id("schema", "app"),
            &id("table", t),
            &shardctl::directory::TablePlacement::Sharded {
                function: "f".into(),
                column: id("column", "k"),
            },
        )
        .unwrap();
    }
    for (node, bound) in [("node1", "0"), ("node2", "100000")] {
        add_shard(
            &inv,
            &AddShard {
                function: "f".into(),
                node: node.into(),
                placement: Placement::LowerBound(bound.into()),
                template_node: Some("node1".into()),
            },
        )
        .unwrap();
    }
    template
        .exec(&Stmt::text(
            "INSERT INTO app_1.items SELECT seq, 1 FROM app_1.seq_1_to_5000",
        ))
        .unwrap();
    (sb, inv)
}

fn home_of(inv: &Inventory, shard: u32) -> String {
    Directory::open(inv)
        .unwrap()
        .load()
        .unwrap()
        .shard(shard)
        .unwrap()
        .node
        .clone()
}

/// One move of shard 1 under a fresh workload, with `fault` as SHARDCTL_FAULT and, when
/// `kill_during` names a member, that member SIGKILLed as the fault point pauses (and
/// started again after). Returns the moving shard's longest write pause, in ms.
fn one_move(
    sb: &mut Sandbox,
    inv: &Inventory,
    fault: Option<&str>,
    kill_during: Option<&str>,
) -> f64 {
    let from = home_of(inv, 1);
    let to = if from == "node3" { "node1" } else { "node3" };
    let running = workload::spawn(
        inv.clone(),
        workload::Options {
            rate: 200,
            write_timeout: Duration::from_secs(120),
            ..workload::Options::new("f")
        },
    )
    .unwrap();
    std::thread::sleep(Duration::from_secs(1));
    let tmp = tempfile::tempdir().unwrap();
    let err = tmp.path().join("move.err");
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_shardctl"));
    cmd.env("SHARDCTL_YES", "1")
        .env_remove("SHARDCTL_CONFIG")
        .arg("--config")
        .arg(&inv.path)
        .args(["move", "--shard", "1", "--to", to])
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(&err).unwrap());
    match fault {
        Some(f) => cmd.env("SHARDCTL_FAULT", f),
        None => cmd.env_remove("SHARDCTL_FAULT"),
    };
    let mut child = cmd.spawn().unwrap();
    if let Some(member) = kill_during {
        let deadline = Instant::now() + Duration::from_secs(120);
        while !std::fs::read_to_string(&err)
            .unwrap_or_default()
            .contains(": pausing")
        {
            assert!(Instant::now() < deadline, "the move never paused");
            std::thread::sleep(Duration::from_millis(20));
        }
        sb.kill_node(member).unwrap();
    }
    let status = child.wait().unwrap();
    assert!(
        status.success(),
        "{}",
        std::fs::read_to_string(&err).unwrap_or_default()
    );
    if let Some(member) = kill_during {
        sb.restart_members(&[member]).unwrap();
    }
    std::thread::sleep(Duration::from_secs(1));
    let mut report = running.stop().unwrap();
    let check = report.check(inv, "f").unwrap();
    assert!(check.missing.is_empty(), "lost {:?}", check.missing);
    assert_eq!(report.wrong_shard_writes, 0);
    report
        .streams
        .iter()
        .filter(|s| s.shard_at_start == 1)
        .map(|s| s.max_pause_ms as f64)
        .fold(0.0, f64::max)
}

/// CPU seconds (user + system) a process has used.
fn cpu_secs(pid: i32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after = stat.rsplit_once(')').map(|(_, a)| a).unwrap_or("");
    let f: Vec<u64> = after
        .split_whitespace()
        .filter_map(|x| x.parse().ok())
        .collect();
    // Fields 14 and 15 of the stat line (utime, stime) are the 12th and 13th after the
    // state, which does not parse as a number.
    let ticks = f.get(10).copied().unwrap_or(0) + f.get(11).copied().unwrap_or(0);
    ticks as f64 / 100.0
}

/// `Questions` of a server.
fn questions(inv: &Inventory, node: &str) -> u64 {
    let mut s = Server::connect_node(inv, node).unwrap();
    let row: Option<(String, u64)> = s
        .first(&Stmt::text("SHOW GLOBAL STATUS LIKE 'Questions'"))
        .unwrap();
    row.map(|r| r.1).unwrap_or(0)
}

/// `routers` routers (one connection each, the application's account) polling the
/// version once a second each for `seconds`, from this thread. Returns (polls answered
/// per second, p50 and p99 latency in ms, the directory servers' CPU in percent of one
/// core, their queries per second).
fn poll_load(
    sb: &Sandbox,
    inv: &Inventory,
    servers: &[&str],
    routers: usize,
    seconds: u64,
) -> (f64, f64, f64, f64, f64) {
    let mut all: Vec<Router> = (0..routers)
        .map(|_| {
            let mut r = Router::connect(inv).unwrap();
            // Every call below asks: the pacing is this loop's.
            r.set_check_interval(Duration::ZERO);
            r
        })
        .collect();
    let pids: Vec<i32> = sb
        .servers()
        .filter(|n| servers.contains(&n.name.as_str()))
        .filter_map(|n| n.pid)
        .collect();
    let cpu0: f64 = pids.iter().map(|p| cpu_secs(*p)).sum();
    let q0: u64 = servers.iter().map(|n| questions(inv, n)).sum();
    let start = Instant::now();
    let mut latencies = Vec::new();
    let mut polls = 0u64;
    let mut round = 0u64;
    while start.elapsed() < Duration::from_secs(seconds) {
        let round_start = start + Duration::from_secs(round);
        for (i, r) in all.iter_mut().enumerate() {
            // Each router's poll at its own moment of the second.
            let at = round_start + Duration::from_secs_f64(i as f64 / routers as f64);
            let now = Instant::now();
            if at > now {
                std::thread::sleep(at - now);
            }
            let t = Instant::now();
            r.maybe_refresh().unwrap();
            latencies.push(t.elapsed().as_secs_f64() * 1000.0);
            polls += 1;
        }
        round += 1;
    }
    let elapsed = start.elapsed().as_secs_f64();
    let cpu1: f64 = pids.iter().map(|p| cpu_secs(*p)).sum();
    let q1: u64 = servers.iter().map(|n| questions(inv, n)).sum();
    (
        polls as f64 / elapsed,
        percentile(&mut latencies, 0.5),
        percentile(&mut latencies, 0.99),
        (cpu1 - cpu0) / elapsed * 100.0,
        (q1 - q0) as f64 / elapsed,
    )
}

fn main() {
    let moves = env_or("BENCH_MOVES", smoke::or(1, 5)) as usize;
    let routers = env_or("BENCH_ROUTERS", smoke::or(20, 1000)) as usize;
    let seconds = env_or("BENCH_SECONDS", smoke::or(2, 20));

    let (single_sb, single) = fleet(0);
    let (mut cluster_sb, cluster) = fleet(3);

    let mut single_moves = Vec::new();
    let mut cluster_moves = Vec::new();
    let (mut single_sb, mut paused, mut killed) = (single_sb, Vec::new(), Vec::new());
    for _ in 0..moves {
        single_moves.push(one_move(&mut single_sb, &single, None, None));
        cluster_moves.push(one_move(&mut cluster_sb, &cluster, None, None));
    }
    for _ in 0..moves {
        paused.push(one_move(
            &mut cluster_sb,
            &cluster,
            Some("pause=2@after:lock"),
            None,
        ));
        killed.push(one_move(
            &mut cluster_sb,
            &cluster,
            Some("pause=2@after:lock"),
            Some("dir1"),
        ));
    }
    let (s_rate, s_p50, s_p99, s_cpu, s_qps) =
        poll_load(&single_sb, &single, &["node4"], routers, seconds);
    let (c_rate, c_p50, c_p99, c_cpu, c_qps) = poll_load(
        &cluster_sb,
        &cluster,
        &["dir1", "dir2", "dir3"],
        routers,
        seconds,
    );

    println!("Move write pause of the moving shard (median of {moves} moves, 200 writes/s):\n");
    println!("| directory | longest write pause | ratio |");
    println!("|---|---|---|");
    let (s, c) = (median(single_moves), median(cluster_moves));
    println!("| one server of its own (node4) | {s:.0} ms | 1.00 |");
    println!("| 3-member Galera cluster | {c:.0} ms | {:.2} |", c / s);
    let (p, k) = (median(paused), median(killed));
    println!("\nWriter member SIGKILLed under the fence (moves pausing 2 s after their lock step, median of {moves}):\n");
    println!("| case | longest write pause |");
    println!("|---|---|");
    println!("| fence held 2 s longer, no member lost | {p:.0} ms |");
    println!("| fence held 2 s longer, dir1 killed meanwhile | {k:.0} ms |");
    println!("| extra pause the member's death costs | {:.0} ms |", k - p);
    println!(
        "\n{routers} routers polling the directory version once a second each, {seconds} s:\n"
    );
    println!(
        "| directory | polls answered/s | p50 | p99 | directory servers' CPU | queries/s on them |"
    );
    println!("|---|---|---|---|---|---|");
    println!(
        "| one server | {s_rate:.0} | {s_p50:.2} ms | {s_p99:.2} ms | {s_cpu:.1}% of a core | {s_qps:.0} |"
    );
    println!(
        "| 3-member cluster (readers spread) | {c_rate:.0} | {c_p50:.2} ms | {c_p99:.2} ms | {c_cpu:.1}% of a core (3 servers) | {c_qps:.0} |"
    );
}
