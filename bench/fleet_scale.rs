//! Fleet commands at thousands of shards (issue 30, item 3): `status`, `shard list`, `ops`,
//! `rebalance plan`, `rebalance apply` of 40 moves and a `query` over every shard, at 4,000
//! tiny shards (one schema of one small table each) of one range function on 40 nodes.
//!
//! The servers are real and separate: a sandbox of 41 small MariaDB servers (32 MiB
//! buffer pools, `SandboxBuilder::buffer_pool_mb`), the directory alone on node1 and the
//! shards on node2..node41. Each command runs as the shardctl binary does (a process of its
//! own, `--output json`), and is counted on the servers themselves: the statements each
//! server received (`Questions`, which also counts each connection's COM_QUIT) and the
//! connections it accepted (`Connections`), less what the counting itself costs. node1's count is the directory's (plus node1's own round in
//! `status`, which reports every node of the inventory).
//!
//! Run: `cargo bench --bench fleet_scale` (prints a Markdown table for docs/BENCHMARKS.md).
//! `BENCH_NODES` (shard nodes, even), `BENCH_SHARDS` (a multiple of the nodes),
//! `BENCH_MOVES`, `BENCH_RUNS`, `BENCH_PARALLEL` (apply's `--parallel`) change the size;
//! `BENCH_SMOKE=1` runs 4 nodes, 40 shards, 4 moves, one run. `BENCH_BASELINE_BIN=PATH`
//! also measures `status`, `rebalance plan --sizes exact`, `query` and `ops` with another
//! shardctl binary (the rows marked "before"), e.g. one built from the commit before the
//! fan-out changes, and checks that both report the same exact sizes and make the same
//! plan by size from them.

mod smoke;

use shardctl::config::Inventory;
use shardctl::directory::{Changed, Directory, KeyType, ShardingType, TablePlacement};
use shardctl::ident::Ident;
use shardctl::sandbox::SandboxBuilder;
use shardctl::server::{Server, Stmt};
use std::path::Path;
use std::process::Command;
use std::time::Instant;

fn env_or<T: std::str::FromStr>(name: &str, smoke: T, real: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(smoke::or(smoke, real))
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

/// A status counter of one server.
fn counter(s: &mut Server, name: &str) -> u64 {
    let row: Option<(String, String)> = s
        .first(&Stmt::text(format!("SHOW GLOBAL STATUS LIKE '{name}'")))
        .unwrap();
    row.unwrap().1.parse().unwrap()
}

/// (Questions, Connections) of every server, in order.
fn counters(admins: &mut [Server]) -> Vec<(u64, u64)> {
    admins
        .iter_mut()
        .map(|s| (counter(s, "Questions"), counter(s, "Connections")))
        .collect()
}

/// What one command cost on the servers.
#[derive(Default, Clone, Copy)]
struct Cost {
    /// Statements the directory server (node1) received.
    directory: u64,
    /// Statements all shard nodes received together, and the most one received.
    node_total: u64,
    node_max: u64,
    /// Connections the shard nodes accepted together, and the most one accepted.
    conn_total: u64,
    conn_max: u64,
}

fn cost(before: &[(u64, u64)], after: &[(u64, u64)]) -> Cost {
    // Two SHOW STATUS per server between the readings count themselves: the second
    // of `before` and the first of `after` (the first of `before` was counted before it).
    let d: Vec<(u64, u64)> = before
        .iter()
        .zip(after)
        .map(|(b, a)| (a.0 - b.0 - 2, a.1 - b.1))
        .collect();
    let nodes = &d[1..];
    Cost {
        directory: d[0].0,
        node_total: nodes.iter().map(|x| x.0).sum(),
        node_max: nodes.iter().map(|x| x.0).max().unwrap_or(0),
        conn_total: nodes.iter().map(|x| x.1).sum(),
        conn_max: nodes.iter().map(|x| x.1).max().unwrap_or(0),
    }
}

/// The binary measured: this build's, or `BENCH_BASELINE_BIN` for the rows marked
/// "before". Returns its standard output.
fn shardctl(bin: &Path, config: &Path, args: &[&str]) -> Vec<u8> {
    let out = Command::new(bin)
        .arg("--config")
        .arg(config)
        .args(["--output", "json", "--yes", "--color", "never"])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "shardctl {args:?}: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// Each shard's (id, rows, bytes, size source) as `status --exact` reports them with
/// `bin`.
fn exact_sizes(bin: &Path, config: &Path) -> Vec<serde_json::Value> {
    let v: serde_json::Value =
        serde_json::from_slice(&shardctl(bin, config, &["status", "--exact"])).unwrap();
    v["shards"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| serde_json::json!([s["shard"], s["rows"], s["bytes"], s["size_source"]]))
        .collect()
}

struct Row {
    command: String,
    runs: usize,
    ms: f64,
    cost: Cost,
}

/// Runs `args` `runs` times; the time is the median, the counts the last run's (they do
/// not vary between runs of a read-only command).
fn measure(admins: &mut [Server], config: &Path, label: &str, args: &[&str], runs: usize) -> Row {
    measure_bin(
        admins,
        Path::new(env!("CARGO_BIN_EXE_shardctl")),
        config,
        label,
        args,
        runs,
    )
}

fn measure_bin(
    admins: &mut [Server],
    bin: &Path,
    config: &Path,
    label: &str,
    args: &[&str],
    runs: usize,
) -> Row {
    let mut times = Vec::new();
    let mut last = Cost::default();
    for _ in 0..runs {
        let before = counters(admins);
        let t = Instant::now();
        shardctl(bin, config, args);
        times.push(t.elapsed().as_secs_f64() * 1000.0);
        // A closed connection's COM_QUIT counts too, and may arrive after the process
        // ended: let it.
        std::thread::sleep(std::time::Duration::from_millis(300));
        last = cost(&before, &counters(admins));
    }
    eprintln!("{label}: {:.0} ms", median(times.clone()));
    Row {
        command: label.into(),
        runs,
        ms: median(times),
        cost: last,
    }
}

fn main() {
    let nodes: usize = env_or("BENCH_NODES", 4, 40);
    let shards: usize = env_or("BENCH_SHARDS", 40, 4000);
    let moves: usize = env_or("BENCH_MOVES", 4, 40);
    let runs: usize = env_or("BENCH_RUNS", 1, 3);
    let parallel: usize = env_or("BENCH_PARALLEL", 4, 10);
    assert!(
        nodes % 2 == 0 && shards % nodes == 0,
        "even nodes dividing the shards"
    );
    let half = nodes / 2;
    assert!(moves % half == 0, "moves a multiple of half the nodes");
    // Half the nodes hold `extra` shards over the average, the other half as many fewer:
    // a plan by count with threshold 0 makes exactly `moves` moves.
    let extra = moves / half;
    let per_node = |n: usize| {
        if n < half {
            shards / nodes + extra
        } else {
            shards / nodes - extra
        }
    };

    let t0 = Instant::now();
    let sb = SandboxBuilder::for_tests(nodes + 1)
        .unwrap()
        .buffer_pool_mb(32)
        .start()
        .unwrap();
    let servers_up = t0.elapsed().as_secs_f64();
    let config = sb.inventory_path();
    let inv = Inventory::load(&config).unwrap();
    Directory::connect(&inv).unwrap().init().unwrap();
    let mut dir = Directory::open(&inv).unwrap();
    let names: Vec<String> = (2..=nodes + 1).map(|i| format!("node{i}")).collect();
    for n in &names {
        let node = inv.node(n).unwrap();
        dir.add_node(n, node.host(), node.port()).unwrap();
    }
    let f = Ident::new("function", "acct").unwrap();
    let func_id = dir
        .add_function(&f, ShardingType::Range, KeyType::Int)
        .unwrap();
    dir.add_table(
        &Ident::new("schema", "app").unwrap(),
        &Ident::new("table", "t").unwrap(),
        &TablePlacement::Sharded {
            function: "acct".into(),
            column: Ident::new("column", "id").unwrap(),
        },
    )
    .unwrap();
    // Shard k (1-based) covers [(k-1)*1000, k*1000); node i holds per_node(i) of them.
    let mut placement: Vec<(u32, usize)> = Vec::new();
    for (i, _) in names.iter().enumerate() {
        for _ in 0..per_node(i) {
            placement.push((placement.len() as u32 + 1, i));
        }
    }
    assert_eq!(placement.len(), shards);

    // The directory in one change, 500 rows a statement, as `shard add` would leave it.
    let t = Instant::now();
    let d = dir.schema().quoted();
    dir.change(|d_, version| {
        let s = d_.server();
        for chunk in placement.chunks(500) {
            let mut loc = Vec::new();
            let mut rng = Vec::new();
            for &(id, i) in chunk {
                let node = inv.node(&names[i]).unwrap();
                loc.extend([
                    id.into(),
                    func_id.into(),
                    names[i].as_str().into(),
                    node.host().into(),
                    node.port().into(),
                    version.into(),
                ]);
                rng.extend([func_id.into(), ((id as i64 - 1) * 1000).into(), id.into()]);
            }
            s.exec(&Stmt::with(
                format!(
                    "INSERT INTO {d}.locations (shard_id, func_id, node, host, port, state, version) VALUES {}",
                    vec!["(?, ?, ?, ?, ?, 'online', ?)"; chunk.len()].join(", ")
                ),
                loc,
            ))?;
            s.exec(&Stmt::with(
                format!(
                    "INSERT INTO {d}.ranges (func_id, lower_bound, shard_id) VALUES {}",
                    vec!["(?, ?, ?)"; chunk.len()].join(", ")
                ),
                rng,
            ))?;
        }
        Ok(((), Changed::Everything))
    })
    .unwrap();
    let directory_written = t.elapsed().as_secs_f64();

    // Every shard's schema on its node: one connection per node, the nodes in parallel;
    // CREATE DATABASE, CREATE TABLE and one INSERT of 10 rows per shard.
    let t = Instant::now();
    std::thread::scope(|s| {
        for (i, n) in names.iter().enumerate() {
            let placement = &placement;
            let inv = &inv;
            s.spawn(move || {
                let mut server = Server::connect_node(inv, n).unwrap();
                for &(id, _) in placement.iter().filter(|p| p.1 == i) {
                    let schema = format!("`app_{id}`");
                    server
                        .exec(&Stmt::text(format!("CREATE DATABASE {schema}")))
                        .unwrap();
                    server
                        .exec(&Stmt::text(format!(
                            "CREATE TABLE {schema}.t (id BIGINT PRIMARY KEY, v INT NOT NULL) ENGINE=InnoDB"
                        )))
                        .unwrap();
                    let base = (id as i64 - 1) * 1000;
                    let values: Vec<String> =
                        (0..10).map(|k| format!("({}, {k})", base + k)).collect();
                    server
                        .exec(&Stmt::text(format!(
                            "INSERT INTO {schema}.t VALUES {}",
                            values.join(", ")
                        )))
                        .unwrap();
                }
            });
        }
    });
    let schemas_made = t.elapsed().as_secs_f64();
    eprintln!(
        "{} servers up in {servers_up:.1}s; directory of {shards} shards in {directory_written:.1}s; \
         {shards} schemas in {schemas_made:.1}s",
        nodes + 1
    );

    let mut admins: Vec<Server> = std::iter::once("node1".to_string())
        .chain(names.iter().cloned())
        .map(|n| Server::connect_node(&inv, &n).unwrap())
        .collect();
    let plan = sb.dir().join("plan.yaml");
    let plan_s = plan.to_str().unwrap().to_string();
    let moves_s = moves.to_string();
    let par = parallel.to_string();
    let query = "SELECT COUNT(*), SUM(v) FROM {t}";
    let mut rows = vec![
        measure(&mut admins, &config, "status", &["status"], runs),
        measure(&mut admins, &config, "shard list", &["shard", "list"], runs),
        measure(&mut admins, &config, "ops (empty journal)", &["ops"], runs),
        measure(
            &mut admins,
            &config,
            &format!("rebalance plan --by count ({moves} moves)"),
            &[
                "rebalance",
                "plan",
                "--by",
                "count",
                "--threshold",
                "0",
                "--max-moves",
                &moves_s,
                "--sizes",
                "statistics",
                "--no-key-moves",
                "--out",
                &plan_s,
            ],
            runs,
        ),
        measure(
            &mut admins,
            &config,
            &format!("rebalance plan --by count --sizes exact ({moves} moves, statistics refreshed first)"),
            &[
                "rebalance",
                "plan",
                "--by",
                "count",
                "--threshold",
                "0",
                "--max-moves",
                &moves_s,
                "--sizes",
                "exact",
                "--no-key-moves",
            ],
            runs,
        ),
        measure(
            &mut admins,
            &config,
            &format!("query `{query}` over every shard"),
            &["query", "--function", "acct", query],
            runs,
        ),
    ];
    let baseline = std::env::var_os("BENCH_BASELINE_BIN").map(std::path::PathBuf::from);
    if let Some(bin) = &baseline {
        // The same exact sizes, and the same plan by size from them, with either binary.
        let this = Path::new(env!("CARGO_BIN_EXE_shardctl"));
        assert_eq!(exact_sizes(this, &config), exact_sizes(bin, &config));
        let by_size = |bin: &Path, out: &Path| {
            let out = out.to_str().unwrap();
            shardctl(
                bin,
                &config,
                &[
                    "rebalance",
                    "plan",
                    "--by",
                    "size",
                    "--threshold",
                    "0",
                    "--max-moves",
                    &moves_s,
                    "--sizes",
                    "exact",
                    "--no-key-moves",
                    "--out",
                    out,
                ],
            );
            std::fs::read_to_string(out).unwrap()
        };
        let (now, before) = (
            by_size(this, &sb.dir().join("by-size.yaml")),
            by_size(bin, &sb.dir().join("by-size-before.yaml")),
        );
        assert_eq!(now, before, "rebalance plan --by size --sizes exact");
        eprintln!(
            "status --exact and rebalance plan --by size --sizes exact ({} moves): the same with {}",
            now.matches("- action: move").count(),
            bin.display()
        );
        rows.push(measure_bin(
            &mut admins,
            bin,
            &config,
            &format!("rebalance plan --by count --sizes exact ({moves} moves, statistics refreshed first) (before)"),
            &[
                "rebalance", "plan", "--by", "count", "--threshold", "0", "--max-moves",
                &moves_s, "--sizes", "exact", "--no-key-moves",
            ],
            runs,
        ));
        for (label, args) in [
            ("status", vec!["status"]),
            (
                "query `SELECT COUNT(*), SUM(v) FROM {t}` over every shard",
                vec!["query", "--function", "acct", query],
            ),
        ] {
            rows.push(measure_bin(
                &mut admins,
                bin,
                &config,
                &format!("{label} (before)"),
                &args,
                runs,
            ));
        }
    }
    // The chapter's lookup (`ranges JOIN locations ... ORDER BY lower_bound DESC LIMIT 1`)
    // once per shard over one kept-open connection to the directory: what a command that
    // asked the directory shard by shard would cost it.
    {
        let mut times = Vec::new();
        let mut last = Cost::default();
        let d = Directory::open(&inv).unwrap().schema().quoted();
        let lookup = format!(
            "SELECT shard_id, host, port FROM {d}.ranges JOIN {d}.locations USING (shard_id) \
             WHERE ranges.func_id = ? AND ? >= ranges.lower_bound ORDER BY ranges.lower_bound DESC LIMIT 1"
        );
        let mut conn = Server::connect_node(&inv, "node1").unwrap();
        for _ in 0..runs {
            let before = counters(&mut admins);
            let t = Instant::now();
            for &(id, _) in &placement {
                let key = (id as i64 - 1) * 1000 + 5;
                let got: Option<(u32, String, u16)> = conn
                    .first(&Stmt::with(
                        lookup.clone(),
                        vec![func_id.into(), key.into()],
                    ))
                    .unwrap();
                assert_eq!(got.unwrap().0, id);
            }
            times.push(t.elapsed().as_secs_f64() * 1000.0);
            last = cost(&before, &counters(&mut admins));
        }
        rows.push(Row {
            command: format!("reference: the chapter's lookup SQL once per shard ({shards} queries, one connection)"),
            runs,
            ms: median(times),
            cost: last,
        });
    }
    // The query's fan-out against one round per node, in this process (no process start,
    // no directory read), every node at once: `query::run` (each node's shards one
    // statement each, over up to 4 read-only connections), the same statements over one
    // connection per node, and one UNION ALL per node over its shard schemas (a shard id
    // column first): the least a one-round-per-node `query` could cost.
    {
        let snap = Directory::open(&inv).unwrap().load().unwrap();
        let per_node = |union: bool| -> usize {
            std::thread::scope(|s| {
                let handles: Vec<_> = names
                    .iter()
                    .enumerate()
                    .map(|(i, n)| {
                        let (inv, placement) = (&inv, &placement);
                        s.spawn(move || {
                            let mut server = Server::connect_node(inv, n).unwrap();
                            let selects: Vec<String> = placement
                                .iter()
                                .filter(|p| p.1 == i)
                                .map(|&(id, _)| {
                                    format!(
                                        "SELECT {id} AS shard, COUNT(*), SUM(v) FROM app_{id}.t"
                                    )
                                })
                                .collect();
                            if union {
                                let all = Stmt::text(selects.join(" UNION ALL "));
                                server.rows(&all).unwrap().len()
                            } else {
                                selects
                                    .iter()
                                    .map(|q| server.rows(&Stmt::text(q.as_str())).unwrap().len())
                                    .sum()
                            }
                        })
                    })
                    .collect();
                handles.into_iter().map(|h| h.join().unwrap()).sum()
            })
        };
        let mut times: [Vec<f64>; 3] = Default::default();
        let mut costs = [Cost::default(); 3];
        for _ in 0..runs {
            for (k, times) in times.iter_mut().enumerate() {
                let before = counters(&mut admins);
                let t = Instant::now();
                let answered = match k {
                    0 => shardctl::query::run(
                        &inv,
                        &snap,
                        "acct",
                        query,
                        std::time::Duration::from_secs(60),
                        &Default::default(),
                    )
                    .unwrap()
                    .shards
                    .len(),
                    1 => per_node(false),
                    _ => per_node(true),
                };
                times.push(t.elapsed().as_secs_f64() * 1000.0);
                assert_eq!(answered, shards);
                std::thread::sleep(std::time::Duration::from_millis(300));
                costs[k] = cost(&before, &counters(&mut admins));
            }
        }
        for (k, label) in [
            "reference: query::run in this process (one statement per shard, up to 4 connections a node)",
            "reference: one statement per shard over one connection per node",
            "reference: one UNION ALL of its shards per node, one connection per node",
        ]
        .iter()
        .enumerate()
        {
            eprintln!("{label}: {:.0} ms", median(times[k].clone()));
            rows.push(Row {
                command: label.to_string(),
                runs,
                ms: median(times[k].clone()),
                cost: costs[k],
            });
        }
    }
    let planned = std::fs::read_to_string(&plan).unwrap();
    assert_eq!(
        planned.matches("- action: move").count(),
        moves,
        "the plan has {moves} moves:\n{planned}"
    );
    rows.push(measure(
        &mut admins,
        &config,
        &format!("rebalance apply ({moves} moves, --parallel {parallel} --per-node 1)"),
        &[
            "rebalance",
            "apply",
            &plan_s,
            "--parallel",
            &par,
            "--per-node",
            "1",
        ],
        1,
    ));
    rows.push(measure(
        &mut admins,
        &config,
        &format!("ops ({moves} finished operations)"),
        &["ops"],
        runs,
    ));
    if let Some(bin) = &baseline {
        rows.push(measure_bin(
            &mut admins,
            bin,
            &config,
            &format!("ops ({moves} finished operations) (before)"),
            &["ops"],
            runs,
        ));
    }
    rows.push(measure(
        &mut admins,
        &config,
        "status (after the moves)",
        &["status"],
        runs,
    ));
    // Every node now holds the average.
    let snap = Directory::open(&inv).unwrap().load().unwrap();
    for n in &names {
        let held = snap.shards.iter().filter(|s| &s.node == n).count();
        assert_eq!(held, shards / nodes, "{n} after the moves");
    }

    println!(
        "Setup: {} servers up in {servers_up:.1} s; directory of {shards} shards written in \
         {directory_written:.1} s; {shards} shard schemas (a table of 10 rows each) created in \
         {schemas_made:.1} s over one connection per node.\n",
        nodes + 1
    );
    println!(
        "| command ({shards} shards on {nodes} nodes) | runs | wall time (median) | directory statements | node statements: total / most on one node | node connections: total / most on one node |"
    );
    println!("|---|---|---|---|---|---|");
    for r in &rows {
        println!(
            "| {} | {} | {:.0} ms | {} | {} / {} | {} / {} |",
            r.command,
            r.runs,
            r.ms,
            r.cost.directory,
            r.cost.node_total,
            r.cost.node_max,
            r.cost.conn_total,
            r.cost.conn_max
        );
    }
    drop(admins);
    drop(sb);
}
