//! Copy speed at real sizes (issue 12, items 7 and 8), every figure side by side in one run on
//! a real 2-node sandbox (node1 → node2): sysbench-shaped shards (4 tables `sbtest1..4`, `id`
//! primary key, a secondary index on `k` with random values, rows of about 190 bytes), the
//! shard's rows split evenly over the tables, servers with a small buffer pool so the larger
//! shards outgrow it. For each size it times, target schema dropped before each method:
//! - shardctl's native copy (the library call the `backup` step makes);
//! - shardctl's dump method (`mariadb-dump` piped into the client, as the `backup` step runs it);
//! - `mariadb-dump --single-transaction | mariadb` by hand;
//! - `mydumper -t 4` + `myloader -t 4`;
//! - shardctl's physical method (`mariadb-backup` of the shard's schemas, prepared with
//!   `--export`, the tablespaces imported on the target; the library call the `backup` step
//!   makes with `method: physical`, through the sandbox's local host);
//! - the reference: `SELECT ... INTO OUTFILE` of each table on the source, then `LOAD DATA
//!   INFILE` of that file into the target's table created from the same DDL, in the server's
//!   default session, `COPY_REF_PARALLEL` tables at a time (default 2; no consistent
//!   snapshot, no objects).
//!
//! It prints wall time, MB/s (MiB of the source's `.ibd` files per second) and each time as a
//! ratio to the native copy, plus the pages the target's buffer pool had to read from disk
//! (`Innodb_buffer_pool_reads`), which is what collapses when an index outgrows the pool.
//!
//! Run: `cargo bench --bench copy` (prints Markdown for docs/BENCHMARKS.md). Environment:
//! - `COPY_ROWS` (default `1000000,4000000`): rows per shard (over its 4 tables);
//! - `COPY_BUFFER_POOL` (default `64M`): each server's InnoDB buffer pool;
//! - `COPY_RUNS` (default 1): runs per method and size (median shown);
//! - `COPY_METHODS` (default all): a comma list of `native`, `native-nodefer`, `physical`,
//!   `dump`, `dump-pipe`, `mydumper`, `reference` (`native-nodefer` loads with the secondary indexes
//!   in place, as the native copy did before issue 12, for comparison in the same run);
//! - `COPY_REF_PARALLEL` (default 2): tables the reference copies at a time;
//! - `COPY_VERBOSE` (default 0): shardctl's log level (2 shows each table's index build);
//! - `COPY_SANDBOX` (optional): a sandbox directory kept between runs (the generated shards
//!   are reused; stop it with `shardctl sandbox down --dir DIR --purge`), started at
//!   `COPY_BASE_PORT` (default 22306, outside the ports test sandboxes take) when it is not running.

mod smoke;

use shardctl::config::Inventory;
use shardctl::copy::{dump, native, physical, SchemaPair};
use shardctl::ident::Ident;
use shardctl::sandbox::{Sandbox, SandboxBuilder};
use shardctl::server::{ConnectSpec, Server, Stmt};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const TABLES: u64 = 4;
const METHODS: [&str; 7] = [
    "native",
    "native-nodefer",
    "physical",
    "dump",
    "dump-pipe",
    "mydumper",
    "reference",
];

fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn env_num(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

fn env_list(name: &str, default: &str) -> Vec<String> {
    std::env::var(name)
        .unwrap_or_else(|_| default.to_string())
        .split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

/// Runs a shell pipeline, at most `limit`; panics with its stderr when it fails.
fn sh(script: &str, limit: Duration) {
    if let Err(e) = try_sh(script, limit) {
        panic!("{e}");
    }
}

/// Runs a shell pipeline, at most `limit`; its stderr when it fails (panics past `limit`).
fn try_sh(script: &str, limit: Duration) -> Result<(), String> {
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(script)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            if let Some(mut e) = child.stderr.take() {
                let _ = std::io::Read::read_to_string(&mut e, &mut err);
            }
            if status.success() {
                return Ok(());
            }
            return Err(format!("{script}: {err}"));
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{script}: still running after {} s", limit.as_secs());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn exec(s: &mut Server, sql: &str) {
    s.exec(&Stmt::text(sql))
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
}

fn status(s: &mut Server, name: &str) -> u64 {
    let row: Option<(String, String)> = s
        .first(&Stmt::text(format!("SHOW GLOBAL STATUS LIKE '{name}'")))
        .unwrap();
    row.and_then(|(_, v)| v.parse().ok()).unwrap_or(0)
}

/// The sandbox: a fresh one for this run, or the one kept in `COPY_SANDBOX`.
fn sandbox(files: &Path) -> Sandbox {
    let pool = std::env::var("COPY_BUFFER_POOL").unwrap_or_else(|_| "64M".into());
    let extra = |b: SandboxBuilder| {
        b.extra_config(format!("innodb-buffer-pool-size={pool}"))
            .extra_config(format!("secure-file-priv={}", files.display()))
    };
    match std::env::var("COPY_SANDBOX") {
        Ok(dir) => {
            let dir = PathBuf::from(dir);
            if let Ok(sb) = Sandbox::open(&dir) {
                if sb.nodes().iter().all(|n| n.running()) {
                    return sb;
                }
            }
            let port = env_num("COPY_BASE_PORT", 22306) as u16;
            extra(SandboxBuilder::new(dir).nodes(2).base_port(port))
                .start()
                .unwrap()
        }
        Err(_) => extra(SandboxBuilder::for_tests(2).unwrap())
            .start()
            .unwrap(),
    }
}

/// The source shard `sb_<rows>` on node1, generated unless it is already there: 4
/// sysbench tables, rows split evenly, `k` uniformly random in [1, rows per table].
fn generate(n1: &mut Server, schema: &str, rows: u64) {
    let per = rows / TABLES;
    let have: Option<i64> = n1
        .first(&Stmt::text(format!(
            "SELECT SUM(table_rows) IS NOT NULL FROM information_schema.tables WHERE table_schema = '{schema}'"
        )))
        .unwrap();
    if have == Some(1) {
        let n: i64 = n1
            .first(&Stmt::text(format!(
                "SELECT COUNT(*) FROM `{schema}`.sbtest{TABLES}"
            )))
            .unwrap()
            .unwrap_or(0);
        if n as u64 == per {
            eprintln!("{schema}: reusing the generated shard");
            return;
        }
        exec(n1, &format!("DROP DATABASE `{schema}`"));
    }
    let t = Instant::now();
    exec(n1, &format!("CREATE DATABASE `{schema}`"));
    for i in 1..=TABLES {
        // The secondary index is added after the rows (a sorted build): the source's own
        // pool need not hold it while generating.
        exec(n1, &format!(
            "CREATE TABLE `{schema}`.sbtest{i} (id INT NOT NULL AUTO_INCREMENT, k INT NOT NULL DEFAULT 0, \
             c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '', PRIMARY KEY (id)) ENGINE=InnoDB"
        ));
        exec(n1, &format!(
            "INSERT INTO `{schema}`.sbtest{i} (id, k, c, pad) SELECT seq, \
             CONV(LEFT(MD5(CONCAT(seq, '/', {i})), 8), 16, 10) % {per} + 1, \
             CONCAT_WS('-', LEFT(MD5(seq), 11), LEFT(MD5(seq + 1), 11), LEFT(MD5(seq + 2), 11), LEFT(MD5(seq + 3), 11), \
               LEFT(MD5(seq + 4), 11), LEFT(MD5(seq + 5), 11), LEFT(MD5(seq + 6), 11), LEFT(MD5(seq + 7), 11), \
               LEFT(MD5(seq + 8), 11), LEFT(MD5(seq + 9), 11)), \
             CONCAT_WS('-', LEFT(MD5(seq * 3), 11), LEFT(MD5(seq * 5), 11), LEFT(MD5(seq * 7), 11), \
               LEFT(MD5(seq * 11), 11), LEFT(MD5(seq * 13), 11)) \
             FROM `{schema}`.seq_1_to_{per}"
        ));
        exec(
            n1,
            &format!("ALTER TABLE `{schema}`.sbtest{i} ADD KEY k_{i} (k)"),
        );
    }
    eprintln!(
        "{schema}: generated {rows} rows in {:.0} s",
        t.elapsed().as_secs_f64()
    );
}

/// MiB of the shard's `.ibd` files on the source.
fn shard_mib(sb: &Sandbox, schema: &str) -> f64 {
    let dir = sb.node("node1").unwrap().datadir().join(schema);
    let bytes: u64 = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().extension().is_some_and(|x| x == "ibd"))
        .map(|e| e.metadata().map(|m| m.len()).unwrap_or(0))
        .sum();
    bytes as f64 / (1024.0 * 1024.0)
}

struct Ctx<'a> {
    sb: &'a Sandbox,
    inv: &'a Inventory,
    src: ConnectSpec,
    dst: ConnectSpec,
    files: &'a Path,
    limit: Duration,
    parallel: u64,
}

impl Ctx<'_> {
    fn cnf(&self) -> PathBuf {
        self.sb.dir().join("client.cnf")
    }

    fn root(&self, node: &str) -> String {
        format!(
            "--defaults-extra-file={} --socket={}",
            self.sb.dir().join("root.cnf").display(),
            self.sb.node(node).unwrap().socket().display()
        )
    }

    fn port(&self, node: &str) -> u16 {
        self.sb.node(node).unwrap().port
    }

    /// One method's copy of `schema`; returns once the target holds it, or the peer
    /// tool's error when a peer (mydumper/myloader) failed.
    fn run(&self, method: &str, schema: &str) -> Result<(), String> {
        let id = Ident::new("schema", schema).unwrap();
        let pairs = [SchemaPair {
            from: id.clone(),
            to: id,
        }];
        let progress = native::Progress::default();
        match method {
            "native" | "native-nodefer" => {
                let opts = native::NativeOptions {
                    defer_indexes: method == "native",
                    ..Default::default()
                };
                native::copy(&self.src, &self.dst, &pairs, opts, &progress).unwrap();
            }
            "physical" => {
                physical::copy(self.inv, "node1", "node2", &pairs, &progress).unwrap();
            }
            "dump" => {
                dump::copy_with_progress(&self.src, Some(&self.dst), None, &pairs, &progress)
                    .unwrap();
            }
            "dump-pipe" => sh(
                &format!(
                    "mariadb-dump --defaults-extra-file={c} -h 127.0.0.1 -P {p1} --single-transaction --master-data=2 \
                     --routines --triggers --databases {schema} | mariadb --defaults-extra-file={c} -h 127.0.0.1 -P {p2}",
                    c = self.cnf().display(),
                    p1 = self.port("node1"),
                    p2 = self.port("node2"),
                ),
                self.limit,
            ),
            "mydumper" => {
                let out = tempfile::tempdir().unwrap();
                return try_sh(
                    &format!(
                        "mydumper --defaults-file={c} -h 127.0.0.1 -P {p1} -B {schema} -o {o} -t 4 -r 100000 && \
                         myloader --defaults-file={c} -h 127.0.0.1 -P {p2} -d {o} -t 4 -o",
                        c = self.cnf().display(),
                        p1 = self.port("node1"),
                        p2 = self.port("node2"),
                        o = out.path().display()
                    ),
                    self.limit,
                );
            }
            "reference" => self.reference(schema),
            other => panic!("COPY_METHODS: unknown method {other}"),
        }
        Ok(())
    }

    /// SELECT INTO OUTFILE on the source, LOAD DATA INFILE on the target, `parallel` tables
    /// at a time.
    fn reference(&self, schema: &str) {
        let mut n1 = Server::connect(&self.src).unwrap();
        let mut n2 = Server::connect(&self.dst).unwrap();
        exec(&mut n2, &format!("CREATE DATABASE `{schema}`"));
        for i in 1..=TABLES {
            let (_, ddl): (String, String) = n1
                .first(&Stmt::text(format!(
                    "SHOW CREATE TABLE `{schema}`.sbtest{i}"
                )))
                .unwrap()
                .unwrap();
            exec(&mut n2, &format!("USE `{schema}`"));
            exec(&mut n2, &ddl);
        }
        let next = std::sync::atomic::AtomicU64::new(1);
        std::thread::scope(|s| {
            for _ in 0..self.parallel {
                let next = &next;
                s.spawn(move || loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    if i > TABLES {
                        break;
                    }
                    let file = self.files.join(format!("{schema}.sbtest{i}.tsv"));
                    let _ = std::fs::remove_file(&file);
                    sh(
                        &format!(
                            "mariadb {r1} -e \"SELECT * INTO OUTFILE '{f}' FROM \\`{schema}\\`.sbtest{i}\" && \
                             mariadb {r2} -e \"LOAD DATA INFILE '{f}' INTO TABLE \\`{schema}\\`.sbtest{i}\"",
                            r1 = self.root("node1"),
                            r2 = self.root("node2"),
                            f = file.display()
                        ),
                        self.limit,
                    );
                    let _ = std::fs::remove_file(&file);
                });
            }
        });
    }
}

fn main() {
    shardctl::output::init(
        env_num("COPY_VERBOSE", 0) as u8,
        shardctl::output::ColorChoice::Never,
    );
    let sizes: Vec<u64> = env_list("COPY_ROWS", smoke::or("1000", "1000000,4000000"))
        .iter()
        .map(|s| s.parse().unwrap_or_else(|_| panic!("COPY_ROWS: {s}")))
        .collect();
    let runs = env_num("COPY_RUNS", 1).max(1) as usize;
    let methods = env_list("COPY_METHODS", &METHODS.join(","));
    let files = std::env::var("COPY_SANDBOX")
        .map(|d| PathBuf::from(d).join("outfiles"))
        .unwrap_or_else(|_| tempfile::tempdir().unwrap().keep());
    std::fs::create_dir_all(&files).unwrap();
    let files = files.canonicalize().unwrap();
    let sb = sandbox(&files);
    let inv = Inventory::load(&sb.inventory_path()).unwrap();
    let ctx = Ctx {
        sb: &sb,
        inv: &inv,
        src: ConnectSpec::for_node(&inv, inv.node("node1").unwrap()).unwrap(),
        dst: ConnectSpec::for_node(&inv, inv.node("node2").unwrap()).unwrap(),
        files: &files,
        limit: Duration::from_secs(3600),
        parallel: env_num("COPY_REF_PARALLEL", 2).max(1),
    };
    let mut n1 = Server::connect_node(&inv, "node1").unwrap();
    let mut n2 = Server::connect_node(&inv, "node2").unwrap();
    let version: Option<String> = n2.first(&Stmt::text("SELECT VERSION()")).unwrap();
    let pool: Option<u64> = n2
        .first(&Stmt::text("SELECT @@innodb_buffer_pool_size"))
        .unwrap();
    let mut tables = Vec::new();
    for &rows in &sizes {
        let schema = format!("sb_{rows}");
        generate(&mut n1, &schema, rows);
        let mib = shard_mib(&sb, &schema);
        let id = Ident::new("schema", &schema).unwrap();
        let mut times: Vec<(String, Vec<f64>, u64)> = Vec::new();
        for _ in 0..runs {
            for m in &methods {
                // A peer tool that fails (myloader has hit InnoDB deadlocks between its own
                // threads) is timed again from the start, once; the failure is reported.
                let mut attempt = 0;
                let (secs, reads) = loop {
                    n2.drop_schema(&id).unwrap();
                    // Start each method from a cold target pool as far as the pool allows:
                    // the previous method's pages are of a dropped schema.
                    let reads = status(&mut n2, "Innodb_buffer_pool_reads");
                    let t = Instant::now();
                    let outcome = ctx.run(m, &schema);
                    let secs = t.elapsed().as_secs_f64();
                    match outcome {
                        Ok(()) => {
                            break (
                                secs,
                                status(&mut n2, "Innodb_buffer_pool_reads").saturating_sub(reads),
                            )
                        }
                        Err(e) if attempt == 0 => {
                            attempt += 1;
                            eprintln!("{schema} {m}: failed, timed again: {e}");
                        }
                        Err(e) => panic!("{e}"),
                    }
                };
                let n: i64 = n2
                    .first(&Stmt::text(format!(
                        "SELECT COUNT(*) FROM `{schema}`.sbtest{TABLES}"
                    )))
                    .unwrap()
                    .unwrap_or(0);
                assert_eq!(n as u64, rows / TABLES, "{m}: rows on the target");
                eprintln!("{schema} {m}: {secs:.2} s, {reads} pool reads on the target");
                match times.iter_mut().find(|(name, _, _)| name == m) {
                    Some((_, v, r)) => {
                        v.push(secs);
                        *r = (*r).max(reads);
                    }
                    None => times.push((m.clone(), vec![secs], reads)),
                }
            }
        }
        n2.drop_schema(&id).unwrap();
        tables.push((rows, mib, times));
    }
    println!(
        "- Server: {}; each server's buffer pool {} MiB; {} run(s) per method, median.\n",
        version.unwrap_or_default(),
        pool.unwrap_or(0) >> 20,
        runs
    );
    let parallel = ctx.parallel;
    for (rows, mib, times) in tables {
        let native_s = times
            .iter()
            .find(|(m, _, _)| m == "native")
            .map(|(_, v, _)| median(v));
        println!("Shard of {rows} rows (4 tables), {mib:.0} MiB of .ibd files:\n");
        println!("| method | wall time | MB/s | time / native | target pool reads |");
        println!("|---|---|---|---|---|");
        for (m, v, reads) in &times {
            let s = median(v);
            let reference = format!(
                "SELECT INTO OUTFILE + LOAD DATA, {parallel} table(s) at a time (reference)"
            );
            let label = match m.as_str() {
                "native" => "shardctl native",
                "native-nodefer" => "shardctl native, indexes kept during the load (before)",
                "physical" => "shardctl physical method (mariadb-backup + IMPORT TABLESPACE)",
                "dump" => "shardctl dump method",
                "dump-pipe" => "`mariadb-dump \\| mariadb`",
                "mydumper" => "mydumper + myloader (-t 4)",
                "reference" => reference.as_str(),
                other => other,
            };
            let ratio = native_s
                .map(|n| format!("{:.2}", s / n))
                .unwrap_or_else(|| "-".into());
            println!(
                "| {label} | {s:.2} s | {:.1} | {ratio} | {reads} |",
                mib / s
            );
        }
        println!();
    }
}
