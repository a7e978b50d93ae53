//! A verification no linear change can cancel and no text rendering can blur (issue 25), on
//! real servers:
//! - the chunk checksum sees what CRC32/XOR over the rows' text could not: the same change
//!   made to two rows, a FLOAT differing past its sixth digit, a `#` moved from one column
//!   into the next; a move whose source was changed that way behind the channel's back
//!   stops before any fence;
//! - the text the checksum hashes for a FLOAT or DOUBLE is exact: it reads back as the
//!   stored value, bit for bit;
//! - FLOAT and DOUBLE values arrive bit-exact with the native and the physical method, and
//!   the dump method (whose tool writes a FLOAT with 6 digits) refuses a shard holding a
//!   FLOAT at preflight, naming the column.

mod common;

use common::{connect, exec, exec_unlogged, serial, FleetSetup, Function, SharedFleet};
use mysql::Value;
use predicates::prelude::*;
use shardctl::directory::Directory;
use shardctl::ident::Ident;
use shardctl::sandbox::Sandbox;
use shardctl::server::statements::{self, HashedAs, HashedColumn};
use shardctl::server::{ConnectSpec, Server, Stmt};
use shardctl::verify::{self, TablePair, VerifyOptions};
use std::time::Duration;

const REFUSED: i32 = 5;

/// The places table of logical schema `geo`, sharded by `id`.
const PLACES: &str = "CREATE TABLE geo.places (id BIGINT NOT NULL, qty INT NOT NULL, \
     amount DECIMAL(10,2) NOT NULL, lat FLOAT NULL, lon DOUBLE NULL, note VARCHAR(40) NULL, \
     PRIMARY KEY (id)) ENGINE=InnoDB";

/// The timeout of this file's commands, longer than the 120 s of [`common::cli_on`]: their
/// moves verify every copied row.
const VERIFYING_RUN: Duration = Duration::from_secs(600);

/// Three nodes; function `f` (range) over `geo.places`, its first shard on node1 from 0.
/// Each test adds a shard of its own (see [`new_shard`]).
static FLEET: SharedFleet = SharedFleet::configured(
    3,
    |b| b.shardctl_bin(env!("CARGO_BIN_EXE_shardctl")),
    set_up,
);

/// Sets up the fleet once, on first use (see [`FLEET`]).
fn set_up(sb: &Sandbox) {
    FleetSetup::new()
        .schema(&["CREATE DATABASE geo", PLACES])
        .function(
            Function::range("f")
                .table("geo.places", "id")
                .shard("node1", "0"),
        )
        .build(sb);
}

/// A new shard of `f` on node1 from `lower_bound`: its id and schema.
fn new_shard(lower_bound: &str) -> (String, String) {
    let out = FLEET
        .cli(&[
            "--output",
            "json",
            "shard",
            "add",
            "--function",
            "f",
            "--node",
            "node1",
            "--lower-bound",
            lower_bound,
        ])
        .timeout(VERIFYING_RUN)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let id = v["shard"].as_u64().unwrap().to_string();
    (id.clone(), format!("geo_{id}"))
}

fn shard_node(id: &str) -> String {
    let id: u32 = id.parse().unwrap();
    Directory::open(&common::inventory(FLEET.sandbox()))
        .unwrap()
        .load()
        .unwrap()
        .shards
        .iter()
        .find(|s| s.id == id)
        .unwrap()
        .node
        .clone()
}

fn last_op() -> u64 {
    let out = FLEET
        .cli(&["--output", "json", "ops"])
        .timeout(VERIFYING_RUN)
        .output()
        .unwrap();
    let ops: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    ops["operations"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|o| o["op"].as_u64())
        .max()
        .unwrap()
}

/// A small deterministic generator (xorshift64*), so a failure can be replayed.
struct Bits(u64);

impl Bits {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Any finite float (NaN and infinities cannot be stored).
    fn float(&mut self) -> f32 {
        loop {
            let f = f32::from_bits(self.next() as u32);
            if f.is_finite() {
                return f;
            }
        }
    }

    /// Any finite double.
    fn double(&mut self) -> f64 {
        loop {
            let d = f64::from_bits(self.next());
            if d.is_finite() {
                return d;
            }
        }
    }
}

/// FLOATs and DOUBLEs at the edges: the extremes, the smallest normal and subnormal
/// values, numbers of 8 and 17 significant digits.
#[allow(
    clippy::excessive_precision,
    reason = "the issue's 8-digit value, as an application writes it"
)]
fn edge_values() -> Vec<(f32, f64)> {
    vec![
        (51.507_445_6, 0.1 + 0.2),
        (-51.507_445_6, 1.234_567_890_123_456_7e-300),
        (f32::MAX, f64::MAX),
        (f32::MIN, f64::MIN),
        (f32::MIN_POSITIVE, f64::MIN_POSITIVE),
        (f32::from_bits(1), f64::from_bits(1)),
        (-f32::from_bits(1), -f64::from_bits(1)),
        (
            f32::from_bits(0x007f_ffff),
            f64::from_bits(0x000f_ffff_ffff_ffff),
        ),
        (16_777_217.0, 9_007_199_254_740_993.0),
        (1.0e-38, 1.0e308),
        (0.0, 0.0),
    ]
}

/// `count` rows (id from `first`): the edge values first, then random bit patterns.
fn float_rows(first: i64, count: usize) -> Vec<(i64, f32, f64)> {
    let mut bits = Bits(0x9e37_79b9_7f4a_7c15);
    let mut edges = edge_values().into_iter();
    (0..count)
        .map(|i| {
            let (f, d) = edges
                .next()
                .unwrap_or_else(|| (bits.float(), bits.double()));
            (first + i as i64, f, d)
        })
        .collect()
}

/// Inserts `rows` into `schema.places` with bound values (the binary protocol carries a
/// FLOAT and a DOUBLE exactly).
fn insert_floats(s: &mut Server, schema: &str, rows: &[(i64, f32, f64)]) {
    for batch in rows.chunks(200) {
        let params: Vec<Value> = batch
            .iter()
            .flat_map(|(id, f, d)| [Value::Int(*id), Value::Float(*f), Value::Double(*d)])
            .collect();
        s.exec(&Stmt::with(
            format!(
                "INSERT INTO `{schema}`.places (id, qty, amount, lat, lon) VALUES {}",
                vec!["(?, 1, 6.00, ?, ?)"; batch.len()].join(", ")
            ),
            params,
        ))
        .unwrap();
    }
}

/// Every row's (id, FLOAT bits, DOUBLE bits), read through the binary protocol.
fn float_bits(s: &mut Server, schema: &str) -> Vec<(i64, u32, u64)> {
    s.rows(&Stmt::with(
        format!("SELECT id, lat, lon FROM `{schema}`.places WHERE id >= ? ORDER BY id"),
        vec![Value::Int(i64::MIN)],
    ))
    .unwrap()
    .into_iter()
    .map(|r| {
        let (id, f, d): (i64, Value, Value) = mysql::from_row(r);
        let f = match f {
            Value::Float(f) => f.to_bits(),
            other => panic!("FLOAT read as {other:?}"),
        };
        let d = match d {
            Value::Double(d) => d.to_bits(),
            other => panic!("DOUBLE read as {other:?}"),
        };
        (id, f, d)
    })
    .collect()
}

fn spec(node: &str) -> ConnectSpec {
    let inv = common::inventory(FLEET.sandbox());
    ConnectSpec::for_node(&inv, inv.node(node).unwrap()).unwrap()
}

fn ident(name: &str) -> Ident {
    Ident::new("name", name).unwrap()
}

#[test]
fn the_checksum_text_of_a_float_or_double_reads_back_as_the_stored_value() {
    let _g = serial();
    let mut n1 = connect(FLEET.sandbox(), "node1");
    exec(
        &mut n1,
        &[
            "CREATE DATABASE exact_text",
            "CREATE TABLE exact_text.places LIKE geo.places",
        ],
    );
    let rows = float_rows(1, 20_000);
    insert_floats(&mut n1, "exact_text", &rows);
    let stored = float_bits(&mut n1, "exact_text");
    assert_eq!(stored.len(), rows.len());
    // The server keeps every bit it was given, but a zero's sign: -0.0 is stored as 0.0,
    // so the text `0` is exact for it too.
    insert_floats(&mut n1, "exact_text", &[(0, -0.0, -0.0)]);
    let zero = float_bits(&mut n1, "exact_text")[0];
    assert_eq!(
        zero,
        (0, 0, 0),
        "a negative zero is stored as a positive one"
    );
    for ((id, f, d), (sid, sf, sd)) in rows.iter().zip(&stored) {
        assert_eq!(
            (id, f.to_bits(), d.to_bits()),
            (sid, *sf, *sd),
            "stored as sent"
        );
    }
    // The checksum's own encoding of each column alone: `<text>#0`.
    let encoding = |column: &str| {
        statements::row_encoding(&[HashedColumn {
            name: ident(column),
            hashed_as: HashedAs::ExactFloat,
        }])
    };
    let texts: Vec<(i64, String, String)> = n1
        .rows(&Stmt::with(
            format!(
                "SELECT id, CAST({} AS CHAR), CAST({} AS CHAR) FROM exact_text.places WHERE id > ? ORDER BY id",
                encoding("lat"),
                encoding("lon")
            ),
            vec![Value::Int(0)],
        ))
        .unwrap()
        .into_iter()
        .map(mysql::from_row)
        .collect();
    assert_eq!(texts.len(), rows.len());
    for ((id, f, d), (tid, ft, dt)) in rows.iter().zip(&texts) {
        assert_eq!(id, tid);
        let value = |text: &str| -> f64 {
            let v = text.strip_suffix("#0").unwrap_or_else(|| panic!("{text}"));
            v.parse()
                .unwrap_or_else(|e| panic!("row {id}: {v:?} is no number: {e}"))
        };
        assert_eq!(
            value(ft).to_bits(),
            f64::from(*f).to_bits(),
            "row {id}: FLOAT {f:e} hashed as {ft}"
        );
        assert_eq!(
            value(dt).to_bits(),
            d.to_bits(),
            "row {id}: DOUBLE {d:e} hashed as {dt}"
        );
    }
    exec(&mut n1, &["DROP DATABASE exact_text"]);
}

/// Two tables on node1, `left.name` and `right.name`, created by `ddl` (with `{}` for
/// the schema) and filled by `left_rows` / `right_rows` (INSERT ... VALUES lists).
fn pair_of_tables(s: &mut Server, name: &str, ddl: &str, left_rows: &str, right_rows: &str) {
    for (schema, rows) in [("vleft", left_rows), ("vright", right_rows)] {
        exec(
            s,
            &[
                &ddl.replace("{}", &format!("{schema}.{name}")),
                &format!("INSERT INTO {schema}.{name} VALUES {rows}"),
            ],
        );
    }
}

#[test]
fn differences_crc32_and_six_digit_text_missed_are_found() {
    let _g = serial();
    let mut n1 = connect(FLEET.sandbox(), "node1");
    exec(
        &mut n1,
        &["CREATE DATABASE vleft", "CREATE DATABASE vright"],
    );
    // The rows: the same change to two rows of equal length cancels in a XOR of
    // CRC32s.
    pair_of_tables(
        &mut n1,
        "linear",
        "CREATE TABLE {} (id BIGINT PRIMARY KEY, qty INT NOT NULL, amount DECIMAL(10,2) NOT NULL, code CHAR(3) NOT NULL)",
        "(50001, 1, 6.00, '000'), (50002, 1, 6.00, '000'), (50003, 2, 7.50, '001')",
        "(50001, 1, 5.00, '000'), (50002, 1, 5.00, '000'), (50003, 2, 7.50, '001')",
    );
    // A FLOAT differing past its sixth significant digit (51.5074 is what a dump carries).
    pair_of_tables(
        &mut n1,
        "floats",
        "CREATE TABLE {} (id INT PRIMARY KEY, lat FLOAT)",
        "(1, 51.5074456), (2, 1.5)",
        "(1, 51.5074), (2, 1.5)",
    );
    // A DOUBLE differing in its seventeenth digit.
    pair_of_tables(
        &mut n1,
        "doubles",
        "CREATE TABLE {} (id INT PRIMARY KEY, d DOUBLE)",
        "(1, 0.30000000000000004)",
        "(1, 0.3)",
    );
    // The column separator inside a value.
    pair_of_tables(
        &mut n1,
        "separators",
        "CREATE TABLE {} (id INT PRIMARY KEY, a VARCHAR(10), b VARCHAR(10))",
        "(1, 'a#b', 'c')",
        "(1, 'a', 'b#c')",
    );
    // NULL against the empty string, and against the text 'NULL'.
    pair_of_tables(
        &mut n1,
        "nulls",
        "CREATE TABLE {} (id INT PRIMARY KEY, a VARCHAR(10), b VARCHAR(10))",
        "(1, NULL, ''), (2, 'NULL', NULL)",
        "(1, '', NULL), (2, NULL, 'NULL')",
    );
    // No primary key: pairs of equal rows (a XOR of anything cancels them).
    pair_of_tables(
        &mut n1,
        "duplicates",
        "CREATE TABLE {} (a INT, b VARCHAR(10))",
        "(1, 'x'), (1, 'x'), (2, 'y'), (2, 'y')",
        "(3, 'z'), (3, 'z'), (4, 'w'), (4, 'w')",
    );
    // Identical on both sides, every kind of column, NULLs, edge values: no difference.
    pair_of_tables(
        &mut n1,
        "same",
        "CREATE TABLE {} (id INT PRIMARY KEY, f FLOAT, d DOUBLE, m DECIMAL(65,30), s VARCHAR(20) CHARSET utf8mb4, \
         bin VARBINARY(8), bits BIT(7), e ENUM('a','bé'), j JSON, u UUID, g POINT, t DATETIME(6), y YEAR)",
        "(1, -3.40282e38, 1.7976931348623157e308, 0.000000000000000000000000000001, 'héllo#', 0x00ff23, b'1010101', 'bé', '{\"k\": 1}', \
          '123e4567-e89b-12d3-a456-426614174000', POINT(1, 2), '2024-02-29 13:05:09.000120', 1901), \
         (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL), \
         (3, 1.4e-45, 4.9e-324, -1, '', '', b'0', 'a', '[]', '00000000-0000-0000-0000-000000000000', POINT(0, 0), '0000-00-00 00:00:00', 0)",
        "(1, -3.40282e38, 1.7976931348623157e308, 0.000000000000000000000000000001, 'héllo#', 0x00ff23, b'1010101', 'bé', '{\"k\": 1}', \
          '123e4567-e89b-12d3-a456-426614174000', POINT(1, 2), '2024-02-29 13:05:09.000120', 1901), \
         (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL), \
         (3, 1.4e-45, 4.9e-324, -1, '', '', b'0', 'a', '[]', '00000000-0000-0000-0000-000000000000', POINT(0, 0), '0000-00-00 00:00:00', 0)",
    );
    let names = [
        "linear",
        "floats",
        "doubles",
        "separators",
        "nulls",
        "duplicates",
        "same",
    ];
    let pairs: Vec<TablePair> = names
        .iter()
        .map(|t| TablePair {
            source_schema: ident("vleft"),
            source_table: ident(t),
            target_schema: ident("vright"),
            target_table: ident(t),
            target_filter: None,
            source_filter: None,
        })
        .collect();
    let node1 = spec("node1");
    let report = verify::verify(
        &node1,
        &node1,
        &pairs,
        None,
        &VerifyOptions::default(),
        &mut |_| unreachable!("no channel is held"),
    )
    .unwrap();
    let mut differing: Vec<&str> = report
        .differences
        .iter()
        .map(|d| d.table.strip_prefix("vright.").unwrap())
        .collect();
    differing.sort();
    let mut expected = names[..6].to_vec();
    expected.sort();
    assert_eq!(differing, expected, "{:#?}", report.differences);
    // Same row counts: only the digests tell the tables apart.
    for d in &report.differences {
        assert_eq!(d.source.rows, d.target.rows, "{d}");
        assert_ne!(d.source.digest, d.target.digest, "{d}");
    }
    exec(&mut n1, &["DROP DATABASE vleft", "DROP DATABASE vright"]);
}

#[test]
fn two_rows_changed_alike_behind_the_channel_block_the_flip() {
    let _g = serial();
    let (id, schema) = new_shard("50000");
    let mut n1 = connect(FLEET.sandbox(), "node1");
    exec(
        &mut n1,
        &[&format!(
            "INSERT INTO {schema}.places (id, qty, amount, note) VALUES \
             (50001, 1, 6.00, NULL), (50002, 1, 6.00, NULL), (50003, 2, 7.50, 'x')"
        )],
    );
    FLEET
        .cli(&["move", "--shard", &id, "--to", "node2"])
        .timeout(VERIFYING_RUN)
        .env("SHARDCTL_FAULT", "crash@after:start-replication")
        .assert()
        .failure();
    let op = last_op();
    // On the source, unlogged: the channel never carries it. Both rows change alike (so
    // CRC32s XOR-ed cancel), and the row count stays.
    exec_unlogged(
        &mut n1,
        &[&format!(
            "UPDATE {schema}.places SET amount = 5.00 WHERE id IN (50001, 50002)"
        )],
    );
    FLEET
        .cli(&["resume", &op.to_string()])
        .timeout(VERIFYING_RUN)
        .assert()
        .code(REFUSED)
        .stderr(
            predicate::str::contains("verification failed")
                .and(predicate::str::contains(format!("{schema}.places")))
                .and(predicate::str::contains("primary key in")),
        );
    assert_eq!(shard_node(&id), "node1", "nothing flipped");
    assert_eq!(
        common::count(
            &mut n1,
            &format!("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = '{schema}' AND TABLE_NAME LIKE '\\_\\_shardctl%'")
        ),
        0,
        "the fence never went up"
    );
    FLEET
        .cli(&["abort", &op.to_string()])
        .timeout(VERIFYING_RUN)
        .assert()
        .success();
}

#[test]
#[allow(
    clippy::excessive_precision,
    reason = "the issue's 8-digit value, as an application writes it"
)]
fn floats_and_doubles_arrive_bit_exact_natively_and_physically() {
    let _g = serial();
    let (id, schema) = new_shard("100000");
    let mut n1 = connect(FLEET.sandbox(), "node1");
    insert_floats(&mut n1, &schema, &float_rows(100_000, 5_000));
    let before = float_bits(&mut n1, &schema);
    assert_eq!(before.len(), 5_000);
    // 51.5074456 as its float: 51.50744628906250, more than the 6 digits a FLOAT prints.
    assert_eq!(before[0].1, 51.507_445_6f32.to_bits());

    FLEET
        .cli(&[
            "move", "--shard", &id, "--to", "node2", "--method", "native",
        ])
        .timeout(VERIFYING_RUN)
        .assert()
        .success();
    assert_eq!(shard_node(&id), "node2");
    assert_eq!(
        float_bits(&mut connect(FLEET.sandbox(), "node2"), &schema),
        before,
        "native"
    );

    let playbook = FLEET.sandbox().dir().join("move-physical.yaml");
    std::fs::write(
        &playbook,
        shardctl::playbook::MOVE_PLAYBOOK.replace("method: native", "method: physical"),
    )
    .unwrap();
    FLEET
        .cli(&[
            "move",
            "--shard",
            &id,
            "--to",
            "node3",
            "--playbook",
            playbook.to_str().unwrap(),
        ])
        .timeout(VERIFYING_RUN)
        .assert()
        .success();
    assert_eq!(shard_node(&id), "node3");
    assert_eq!(
        float_bits(&mut connect(FLEET.sandbox(), "node3"), &schema),
        before,
        "physical"
    );
}

#[test]
fn the_dump_method_refuses_a_float_and_carries_doubles_exactly() {
    let _g = serial();
    let (id, schema) = new_shard("200000");
    let mut n1 = connect(FLEET.sandbox(), "node1");
    insert_floats(&mut n1, &schema, &float_rows(200_000, 2_000));
    let ops_before = FLEET
        .cli(&["--output", "json", "ops"])
        .timeout(VERIFYING_RUN)
        .output()
        .unwrap()
        .stdout;
    let out = FLEET
        .cli(&["move", "--shard", &id, "--to", "node2", "--method", "dump"])
        .timeout(VERIFYING_RUN)
        .assert()
        .code(REFUSED)
        .get_output()
        .clone();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let line = stderr.trim_end();
    assert!(!line.contains('\n'), "one line: {stderr}");
    for words in [
        format!("column {schema}.places.lat on node1 is a FLOAT"),
        "6 significant digits".to_string(),
        "--method native".to_string(),
    ] {
        assert!(line.contains(&words), "{words:?} not in {line}");
    }
    assert_eq!(shard_node(&id), "node1");
    assert_eq!(
        FLEET
            .cli(&["--output", "json", "ops"])
            .timeout(VERIFYING_RUN)
            .output()
            .unwrap()
            .stdout,
        ops_before,
        "no operation was journaled"
    );
    assert!(!connect(FLEET.sandbox(), "node2")
        .schema_exists(&ident(&schema))
        .unwrap());

    // Without the FLOAT column, the dump carries every DOUBLE exactly (its tool writes the
    // shortest digits that read back as the same double) and the move verifies.
    exec(
        &mut n1,
        &[&format!("ALTER TABLE {schema}.places DROP COLUMN lat")],
    );
    let doubles = |s: &mut Server| -> Vec<(i64, u64)> {
        s.rows(&Stmt::with(
            format!("SELECT id, lon FROM `{schema}`.places WHERE id >= ? ORDER BY id"),
            vec![Value::Int(0)],
        ))
        .unwrap()
        .into_iter()
        .map(|r| {
            let (id, d): (i64, Value) = mysql::from_row(r);
            match d {
                Value::Double(d) => (id, d.to_bits()),
                other => panic!("DOUBLE read as {other:?}"),
            }
        })
        .collect()
    };
    let before = doubles(&mut n1);
    assert_eq!(before.len(), 2_000);
    FLEET
        .cli(&["move", "--shard", &id, "--to", "node2", "--method", "dump"])
        .timeout(VERIFYING_RUN)
        .assert()
        .success();
    assert_eq!(doubles(&mut connect(FLEET.sandbox(), "node2")), before);
}

/// Statements read many to a round trip (the definitions compared under a fence) come back
/// each with its own rows, in order, across several round trips and with parameterised
/// statements among them; a failing statement ends the run with its own error.
#[test]
fn statements_read_many_to_a_round_trip_keep_their_order_and_their_errors() {
    let mut s = connect(FLEET.sandbox(), "node1");
    let n = shardctl::server::STATEMENTS_PER_TRIP * 2 + 7;
    let mut stmts: Vec<Stmt> = (0..n)
        .map(|i| Stmt::text(format!("SELECT {i} AS n UNION ALL SELECT {i} + 1000000")))
        .collect();
    stmts.insert(5, Stmt::with("SELECT ? AS n", vec![Value::Int(-5)]));
    let rows = s.rows_of_each(&stmts).unwrap();
    assert_eq!(rows.len(), n + 1);
    let firsts: Vec<i64> = rows
        .iter()
        .map(|r| r[0].get::<i64, _>(0).unwrap())
        .collect();
    let mut expected: Vec<i64> = (0..n as i64).collect();
    expected.insert(5, -5);
    assert_eq!(firsts, expected);
    assert!(rows
        .iter()
        .enumerate()
        .all(|(i, r)| r.len() == if i == 5 { 1 } else { 2 }));
    let err = s
        .rows_of_each(&[
            Stmt::text("SELECT 1"),
            Stmt::text("SHOW CREATE TABLE `no_such_schema`.`t`"),
            Stmt::text("SELECT 2"),
        ])
        .unwrap_err()
        .to_string();
    assert!(err.contains("1146") || err.contains("1049"), "{err}");
    assert_eq!(
        s.first::<i64>(&Stmt::text("SELECT 3")).unwrap(),
        Some(3),
        "the session goes on"
    );
}
