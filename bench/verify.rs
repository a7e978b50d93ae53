//! What the verification costs (issue 25, item 1), measured against the copy it checks, on a
//! real 2-node sandbox (node1 → node2): a sysbench-shaped shard (4 tables `sbtest1..4`, `id`
//! primary key, a secondary index on `k`, rows of about 190 bytes), copied by shardctl's
//! native copy, then compared. Each run, side by side on the same data:
//! - `copy`: the native copy (the library call the `backup` step makes), target dropped first;
//! - `verify`: shardctl's verification of the copy (the library call the `verify` step and
//!   `confirm` make, 4 workers, 10,000-row chunks; the data stands still, so no channel is
//!   held), which hashes each row with 64 bits of SHA1;
//! - `chunks sha1`, `chunks md5` and `chunks crc32`: the same chunks compared by the same
//!   number of workers with the same loop (source then target, one chunk at a time each),
//!   with shardctl's checksum statement, with it hashing by MD5 instead of SHA1, and with
//!   the CRC32 statement it replaced (`BIT_XOR(CRC32(CONCAT_WS('#', CAST(col AS
//!   BINARY)..., CONCAT(ISNULL(col)...))))`), so the hash's own cost shows apart from the
//!   rest.
//!
//! Run: `cargo bench --bench verify` (prints Markdown for docs/BENCHMARKS.md). Environment:
//! - `VERIFY_ROWS` (default 1000000): rows in the shard (over its 4 tables);
//! - `VERIFY_RUNS` (default 3): runs (medians shown);
//! - `VERIFY_BUFFER_POOL` (default `64M`): each server's InnoDB buffer pool.

mod smoke;

use shardctl::config::Inventory;
use shardctl::copy::{native, SchemaPair};
use shardctl::ident::Ident;
use shardctl::sandbox::SandboxBuilder;
use shardctl::server::statements::{self, HashedAs, HashedColumn};
use shardctl::server::{ConnectSpec, Server, Stmt};
use shardctl::verify::{self, TablePair, VerifyOptions};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

const TABLES: u64 = 4;
const WORKERS: usize = 4;
const CHUNK: u64 = 10_000;

fn env_num(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn exec(s: &mut Server, sql: &str) {
    s.exec(&Stmt::text(sql))
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
}

/// The source shard on node1: 4 sysbench tables, ids 1..rows/4 each.
fn generate(n1: &mut Server, schema: &str, rows: u64) {
    let per = rows / TABLES;
    let t = Instant::now();
    exec(n1, &format!("CREATE DATABASE `{schema}`"));
    for i in 1..=TABLES {
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

fn ident(name: &str) -> Ident {
    Ident::new("name", name).unwrap()
}

/// The sysbench columns as the checksum hashes them.
fn columns() -> Vec<HashedColumn> {
    [
        ("id", HashedAs::Text),
        ("k", HashedAs::Text),
        ("c", HashedAs::Bytes),
        ("pad", HashedAs::Bytes),
    ]
    .into_iter()
    .map(|(name, hashed_as)| HashedColumn {
        name: ident(name),
        hashed_as,
    })
    .collect()
}

/// The chunk checksum verification used before issue 25, for comparison.
fn crc32_checksum(schema: &str, table: &str, after: i64, up_to: i64) -> Stmt {
    let cols = ["id", "k", "c", "pad"];
    let values = cols
        .iter()
        .map(|c| format!("CAST(`{c}` AS BINARY)"))
        .collect::<Vec<_>>()
        .join(", ");
    let nulls = cols
        .iter()
        .map(|c| format!("ISNULL(`{c}`)"))
        .collect::<Vec<_>>()
        .join(", ");
    Stmt::with(
        format!(
            "SELECT COUNT(*), CAST(COALESCE(BIT_XOR(CRC32(CONCAT_WS('#', {values}, CONCAT({nulls})))), 0) AS UNSIGNED) \
             FROM `{schema}`.`{table}` WHERE (`id` > ?) AND (`id` <= ?)"
        ),
        vec![after.into(), up_to.into()],
    )
}

#[derive(Clone, Copy, PartialEq)]
enum Hash {
    Sha1,
    /// shardctl's statement with MD5 in place of SHA1.
    Md5,
    Crc32,
}

/// Every chunk of every table compared by `WORKERS` workers, each with a connection on
/// both sides: the chunk's checksum on the source, then on the target. Panics on a
/// difference.
fn compare_chunks(src: &ConnectSpec, dst: &ConnectSpec, schema: &str, rows: u64, hash: Hash) {
    let per = (rows / TABLES) as i64;
    let chunks: Vec<(u64, i64)> = (1..=TABLES)
        .flat_map(|t| (0..per).step_by(CHUNK as usize).map(move |lo| (t, lo)))
        .collect();
    let next = AtomicUsize::new(0);
    let schema_id = ident(schema);
    let cols = columns();
    let pk = [ident("id")];
    std::thread::scope(|s| {
        for _ in 0..WORKERS {
            let (next, chunks, schema_id, cols, pk) = (&next, &chunks, &schema_id, &cols, &pk);
            s.spawn(move || {
                let mut a = Server::connect(src).unwrap();
                let mut b = Server::connect(dst).unwrap();
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(&(t, lo)) = chunks.get(i) else {
                        return;
                    };
                    let table = format!("sbtest{t}");
                    let hi = lo + CHUNK as i64;
                    let sha1 = || {
                        statements::chunk_checksum(
                            schema_id,
                            &ident(&table),
                            cols,
                            pk,
                            Some(&[lo.into()]),
                            Some(&[hi.into()]),
                            None,
                        )
                    };
                    let st = match hash {
                        Hash::Sha1 => sha1(),
                        Hash::Md5 => {
                            let st = sha1();
                            Stmt::with(st.sql.replace("SHA1(", "MD5("), st.params)
                        }
                        Hash::Crc32 => crc32_checksum(schema, &table, lo, hi),
                    };
                    let x = verify::chunk_sum(&mut a, &st).unwrap();
                    let y = verify::chunk_sum(&mut b, &st).unwrap();
                    assert_eq!(x, y, "{table} ({lo}, {hi}]");
                }
            });
        }
    });
}

fn main() {
    let rows = env_num("VERIFY_ROWS", smoke::or(1_000, 1_000_000));
    let runs = env_num("VERIFY_RUNS", smoke::or(1, 3)).max(1) as usize;
    let pool = std::env::var("VERIFY_BUFFER_POOL").unwrap_or_else(|_| "64M".into());
    let sb = SandboxBuilder::for_tests(2)
        .unwrap()
        .extra_config(format!("innodb-buffer-pool-size={pool}"))
        .start()
        .unwrap();
    let inv = Inventory::load(&sb.inventory_path()).unwrap();
    let src = ConnectSpec::for_node(&inv, inv.node("node1").unwrap()).unwrap();
    let dst = ConnectSpec::for_node(&inv, inv.node("node2").unwrap()).unwrap();
    let mut n1 = Server::connect(&src).unwrap();
    let mut n2 = Server::connect(&dst).unwrap();
    let version: Option<String> = n1.first(&Stmt::text("SELECT VERSION()")).unwrap();
    let schema = format!("sb_{rows}");
    generate(&mut n1, &schema, rows);
    let id = ident(&schema);
    let pairs = [SchemaPair {
        from: id.clone(),
        to: id.clone(),
    }];
    let tables: Vec<TablePair> = (1..=TABLES)
        .map(|i| TablePair {
            source_schema: id.clone(),
            source_table: ident(&format!("sbtest{i}")),
            target_schema: id.clone(),
            target_table: ident(&format!("sbtest{i}")),
            target_filter: None,
            source_filter: None,
        })
        .collect();
    let opts = VerifyOptions {
        workers: WORKERS,
        chunk_rows: CHUNK,
        ..VerifyOptions::default()
    };
    let (mut copy, mut full) = (vec![], vec![]);
    let (mut sha1, mut md5, mut crc32) = (vec![], vec![], vec![]);
    for run in 0..runs {
        exec(&mut n2, &format!("DROP DATABASE IF EXISTS `{schema}`"));
        let t = Instant::now();
        native::copy(
            &src,
            &dst,
            &pairs,
            native::NativeOptions::default(),
            &native::Progress::default(),
        )
        .unwrap();
        copy.push(t.elapsed().as_secs_f64());
        let t = Instant::now();
        let report = verify::verify(&src, &dst, &tables, None, &opts, &mut |_| {
            unreachable!("no channel is held")
        })
        .unwrap();
        full.push(t.elapsed().as_secs_f64());
        assert!(report.differences.is_empty(), "{:?}", report.differences);
        assert_eq!(report.rows, rows / TABLES * TABLES);
        // Rotate which goes first, so none always finds the pages another read.
        let mut order = [Hash::Sha1, Hash::Crc32, Hash::Md5];
        order.rotate_left(run % 3);
        for hash in order {
            let t = Instant::now();
            compare_chunks(&src, &dst, &schema, rows, hash);
            let took = t.elapsed().as_secs_f64();
            match hash {
                Hash::Sha1 => sha1.push(took),
                Hash::Md5 => md5.push(took),
                Hash::Crc32 => crc32.push(took),
            }
        }
        eprintln!(
            "run {}: copy {:.2} s, verify {:.2} s, chunks sha1 {:.2} s, md5 {:.2} s, crc32 {:.2} s",
            run + 1,
            copy[run],
            full[run],
            sha1[run],
            md5[run],
            crc32[run]
        );
    }
    let (c, v, s, m, r) = (
        median(&copy),
        median(&full),
        median(&sha1),
        median(&md5),
        median(&crc32),
    );
    println!(
        "Verification of a {rows}-row shard (4 sysbench tables) against its native copy, node1 → node2, {} ({pool} buffer pool), {WORKERS} workers, {CHUNK}-row chunks, median of {runs}:\n",
        version.unwrap_or_default()
    );
    println!("| measure | wall time | ratio |");
    println!("|---|---|---|");
    println!("| native copy | {c:.2} s | 1.00 |");
    println!(
        "| shardctl verification (SHA1 row hash) | {v:.2} s | {:.1} % of the copy |",
        100.0 * v / c
    );
    println!(
        "| chunks compared, SHA1 row hash (shardctl's statement) | {s:.2} s | {:.1} % of the copy |",
        100.0 * s / c
    );
    println!(
        "| chunks compared, MD5 in place of SHA1 | {m:.2} s | {:.1} % of the copy |",
        100.0 * m / c
    );
    println!(
        "| chunks compared, CRC32 row hash (the statement before issue 25) | {r:.2} s | {:.1} % of the copy; SHA1 / CRC32 = {:.2} |",
        100.0 * r / c,
        s / r
    );
}
