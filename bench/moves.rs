//! Move benchmarks on a real 3-node sandbox, each figure side by side with its peer in the
//! same run:
//! - copying a 1-million-row shard: shardctl's native copy vs `mariadb-dump | mariadb` vs
//!   `mydumper` + `myloader` (wall time, rows/s; median of runs);
//! - the longest write pause of the moving shard under ~500 writes/s, per fence mode
//!   (median of several moves), next to the longest pause of a shard that did not move.
//!
//! Run: `cargo bench --bench moves` (prints Markdown for docs/BENCHMARKS.md). Environment:
//! `BENCH_ROWS` (default 1000000) rows copied, `BENCH_RUNS` (default 3) copies per method,
//! `BENCH_MOVES` (default 5) moves per fence mode.

mod smoke;

use shardctl::config::Inventory;
use shardctl::copy::{native, SchemaPair};
use shardctl::ident::Ident;
use shardctl::sandbox::{Sandbox, SandboxBuilder};
use shardctl::server::{ConnectSpec, Server, Stmt};
use std::process::Command;
use std::time::{Duration, Instant};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn env_num(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

fn sh(script: &str) {
    let out = Command::new("sh").arg("-c").arg(script).output().unwrap();
    assert!(
        out.status.success(),
        "{script}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn exec(s: &mut Server, sql: &str) {
    s.exec(&Stmt::text(sql))
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
}

fn copy_bench(sb: &Sandbox, inv: &Inventory, rows: u64, runs: usize) -> Vec<String> {
    let mut n1 = Server::connect_node(inv, "node1").unwrap();
    exec(&mut n1, "CREATE DATABASE big_1");
    exec(&mut n1, "CREATE TABLE big_1.sbtest (id INT NOT NULL PRIMARY KEY, k INT NOT NULL, c CHAR(120) NOT NULL, pad CHAR(60) NOT NULL, KEY k_1 (k)) ENGINE=InnoDB");
    exec(&mut n1, &format!(
        "INSERT INTO big_1.sbtest SELECT seq, seq * 7919 % 1000003, CONCAT(MD5(seq), MD5(seq + 1), MD5(seq + 2), LEFT(MD5(seq + 3), 24)), CONCAT(MD5(seq * 3), LEFT(MD5(seq * 5), 28)) FROM big_1.seq_1_to_{rows}"
    ));
    let src = ConnectSpec::for_node(inv, inv.node("node1").unwrap()).unwrap();
    let dst = ConnectSpec::for_node(inv, inv.node("node2").unwrap()).unwrap();
    let mut n2 = Server::connect_node(inv, "node2").unwrap();
    let schema = Ident::new("schema", "big_1").unwrap();
    let pairs = [SchemaPair {
        from: schema.clone(),
        to: schema.clone(),
    }];
    let cnf = sb.dir().join("client.cnf");
    let (p1, p2) = (
        sb.node("node1").unwrap().port,
        sb.node("node2").unwrap().port,
    );
    let mut native_t = Vec::new();
    let mut dump_t = Vec::new();
    let mut myd_t = Vec::new();
    for _ in 0..runs {
        n2.drop_schema(&schema).unwrap();
        let t = Instant::now();
        let r = native::copy(
            &src,
            &dst,
            &pairs,
            native::NativeOptions::default(),
            &native::Progress::default(),
        )
        .unwrap();
        native_t.push(t.elapsed().as_secs_f64());
        assert_eq!(r.rows, rows);

        n2.drop_schema(&schema).unwrap();
        let t = Instant::now();
        sh(&format!(
            "mariadb-dump --defaults-extra-file={c} -h 127.0.0.1 -P {p1} --single-transaction --master-data=2 --routines --triggers --events --databases big_1 | mariadb --defaults-extra-file={c} -h 127.0.0.1 -P {p2}",
            c = cnf.display()
        ));
        dump_t.push(t.elapsed().as_secs_f64());

        n2.drop_schema(&schema).unwrap();
        let out = tempfile::tempdir().unwrap();
        let t = Instant::now();
        sh(&format!(
            "mydumper --defaults-file={c} -h 127.0.0.1 -P {p1} -B big_1 -o {o} -t 4 -r 100000 && myloader --defaults-file={c} -h 127.0.0.1 -P {p2} -d {o} -t 4 -o",
            c = cnf.display(),
            o = out.path().display()
        ));
        myd_t.push(t.elapsed().as_secs_f64());
    }
    let n: i64 = n2
        .first(&Stmt::text("SELECT COUNT(*) FROM big_1.sbtest"))
        .unwrap()
        .unwrap();
    assert_eq!(n as u64, rows);
    let (a, b, c) = (median(native_t), median(dump_t), median(myd_t));
    let rate = |s: f64| format!("{:.0}", rows as f64 / s);
    vec![
        format!("| shardctl native copy (4 readers, 4 writers) | {a:.2} s | {} | 1.00 |", rate(a)),
        format!("| `mariadb-dump --single-transaction \\| mariadb` | {b:.2} s | {} | native is {:.2}x faster |", rate(b), b / a),
        format!("| `mydumper -t 4` + `myloader -t 4` | {c:.2} s | {} | native is {:.2}x faster |", rate(c), c / a),
    ]
}

fn shardctl(sb: &Sandbox, args: &[&str]) {
    let out = Command::new(env!("CARGO_BIN_EXE_shardctl"))
        .env("SHARDCTL_YES", "1")
        .arg("--config")
        .arg(sb.inventory_path())
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn pause_bench(sb: &Sandbox, inv: &Inventory, moves: usize) -> Vec<String> {
    let mut n1 = Server::connect_node(inv, "node1").unwrap();
    exec(&mut n1, "CREATE DATABASE app");
    exec(
        &mut n1,
        "CREATE TABLE app.accounts (id BIGINT PRIMARY KEY, balance INT)",
    );
    shardctl(sb, &["init"]);
    for n in ["node1", "node2", "node3"] {
        shardctl(sb, &["node", "add", n]);
    }
    shardctl(
        sb,
        &["function", "add", "acct", "--type", "range", "--key", "int"],
    );
    shardctl(
        sb,
        &[
            "table",
            "add",
            "app.accounts",
            "--function",
            "acct",
            "--column",
            "id",
        ],
    );
    for (node, lb) in [
        ("node1", "0"),
        ("node2", "1000"),
        ("node3", "2000"),
        ("node2", "3000"),
    ] {
        shardctl(
            sb,
            &[
                "shard",
                "add",
                "--function",
                "acct",
                "--node",
                node,
                "--lower-bound",
                lb,
            ],
        );
    }
    shardctl(
        sb,
        &[
            "workload",
            "--function",
            "acct",
            "--setup",
            "--rate",
            "10",
            "--seconds",
            "1",
        ],
    );
    let mut out = Vec::new();
    let mut at = "node1";
    for fence in ["shard", "read-only"] {
        let mut moving = Vec::new();
        let mut still = Vec::new();
        for _ in 0..moves {
            let to = if at == "node1" { "node3" } else { "node1" };
            at = to;
            let running = shardctl::workload::spawn(
                inv.clone(),
                shardctl::workload::Options {
                    rate: 500,
                    ..shardctl::workload::Options::new("acct")
                },
            )
            .unwrap();
            std::thread::sleep(Duration::from_millis(1500));
            shardctl(sb, &["move", "--shard", "1", "--to", to, "--fence", fence]);
            std::thread::sleep(Duration::from_millis(1500));
            let report = running.stop().unwrap();
            let missing = shardctl::workload::missing_acks(inv, "acct", &report.acks).unwrap();
            assert!(missing.is_empty(), "lost writes");
            let m = report
                .streams
                .iter()
                .find(|s| s.shard_at_start == 1)
                .unwrap();
            let other = report
                .streams
                .iter()
                .filter(|s| s.shard_at_start != 1)
                .map(|s| s.max_pause_ms)
                .max()
                .unwrap();
            moving.push(m.max_pause_ms as f64);
            still.push(other as f64);
        }
        let (m, s) = (median(moving.clone()), median(still));
        out.push(format!(
            "| `{fence}` fence, {moves} moves, 500 writes/s over 4 shards | {m:.0} ms (each: {}) | {s:.0} ms |",
            moving.iter().map(|v| format!("{v:.0}")).collect::<Vec<_>>().join(", ")
        ));
    }
    out
}

fn main() {
    let rows = env_num("BENCH_ROWS", smoke::or(1_000, 1_000_000));
    let runs = env_num("BENCH_RUNS", smoke::or(1, 3)) as usize;
    let moves = env_num("BENCH_MOVES", smoke::or(1, 5)) as usize;
    let sb = SandboxBuilder::for_tests(3).unwrap().start().unwrap();
    let inv = Inventory::load(&sb.inventory_path()).unwrap();
    let copy = copy_bench(&sb, &inv, rows, runs);
    println!("Copy of a {rows}-row shard (one table, sysbench-like rows of ~190 bytes), median of {runs}:\n");
    println!("| method | wall time | rows/s | ratio |");
    println!("|---|---|---|---|");
    for l in copy {
        println!("{l}");
    }
    println!("\nLongest write pause of the moving shard (median over moves), and of the shards that did not move:\n");
    println!("| fence | moving shard | other shards |");
    println!("|---|---|---|");
    for l in pause_bench(&sb, &inv, moves) {
        println!("{l}");
    }
}
