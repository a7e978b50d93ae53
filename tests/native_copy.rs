//! The native copy loads a table without its plain secondary indexes and adds them back
//! afterwards (issue 12, item 7): every kind of index the server shows on a `KEY` line comes
//! back with exactly the source's definition, in the same order, the rows are identical, and
//! a move of such a shard passes the verify step (which compares both); a table that must
//! keep its indexes during the load (an AUTO_INCREMENT column leading only a secondary index)
//! is copied with them.

mod common;

use common::{connect, exec, inventory, sandbox3, shardctl, FleetSetup, Function};
use shardctl::copy::{native, Progress, SchemaPair};
use shardctl::ident::Ident;
use shardctl::server::{ConnectSpec, Server, Stmt};

/// SHOW CREATE TABLE without the AUTO_INCREMENT counter (as the verify step compares it).
fn definition(s: &mut Server, schema: &str, table: &str) -> String {
    let (_, ddl): (String, String) = s
        .first(&Stmt::text(format!(
            "SHOW CREATE TABLE `{schema}`.`{table}`"
        )))
        .unwrap()
        .unwrap();
    let mut out = String::new();
    let mut rest = ddl.as_str();
    while let Some(i) = rest.find(" AUTO_INCREMENT=") {
        out.push_str(&rest[..i]);
        let after = &rest[i + " AUTO_INCREMENT=".len()..];
        rest = after.trim_start_matches(|c: char| c.is_ascii_digit());
    }
    out.push_str(rest);
    out
}

/// Every row's every column (CHECKSUM TABLE is not stable on a table with a virtual column).
fn checksum(s: &mut Server, schema: &str, table: &str) -> (i64, i64) {
    let columns = match table {
        "sbtest" => "id, k, c, pad, COALESCE(d, 'null'), v",
        _ => "a, n",
    };
    s.first(&Stmt::text(format!(
        "SELECT COUNT(*), CAST(BIT_XOR(CRC32(CONCAT_WS('|', {columns}))) AS SIGNED) FROM `{schema}`.`{table}`"
    )))
    .unwrap()
    .unwrap()
}

const TABLES: [&str; 2] = ["sbtest", "kept"];

#[test]
fn deferred_indexes_come_back_exactly_and_a_move_verifies() {
    let sb = sandbox3();
    let inv_path = sb.inventory_path();
    FleetSetup::new()
        .schema(&[
            "CREATE DATABASE app",
            "CREATE TABLE app.sbtest (id INT NOT NULL AUTO_INCREMENT, k INT NOT NULL DEFAULT 0, \
             c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '', d DATETIME(6) NULL, \
             v INT AS (k * 2) VIRTUAL, \
             PRIMARY KEY (id), KEY k_1 (k), UNIQUE KEY c_pad (c, pad), \
             KEY pad_prefix (pad(10)) COMMENT 'prefix, with a comma', KEY d_desc (d DESC, k), \
             KEY v_key (v), KEY ignored_k (k, id) IGNORED) ENGINE=InnoDB",
            // Its AUTO_INCREMENT column leads only a secondary index: loaded with it.
            "CREATE TABLE app.kept (a INT NOT NULL, n INT NOT NULL AUTO_INCREMENT, \
             PRIMARY KEY (a), KEY n (n)) ENGINE=InnoDB",
        ])
        .function(Function::range("f").table("app.sbtest", "id").shard("node1", "0"))
        .rows(
            "node1",
            &[
                "INSERT INTO app_1.sbtest (id, k, c, pad, d) SELECT seq, CONV(LEFT(MD5(seq), 6), 16, 10) % 5000, \
                 MD5(seq), LEFT(MD5(seq * 7), 30), IF(seq % 10 = 0, NULL, '2024-02-29 13:05:09.000120' + INTERVAL seq SECOND) \
                 FROM app_1.seq_1_to_20000",
                "INSERT INTO app_1.kept (a, n) SELECT seq, seq * 3 FROM app_1.seq_1_to_3000",
            ],
        )
        .build(sb);
    let mut n1 = connect(sb, "node1");
    let source: Vec<(String, (i64, i64))> = TABLES
        .iter()
        .map(|t| {
            (
                definition(&mut n1, "app_1", t),
                checksum(&mut n1, "app_1", t),
            )
        })
        .collect();

    // The library's copy, under another name on node3.
    let inv = inventory(sb);
    let src = ConnectSpec::for_node(&inv, inv.node("node1").unwrap()).unwrap();
    let dst = ConnectSpec::for_node(&inv, inv.node("node3").unwrap()).unwrap();
    let pairs = [SchemaPair {
        from: Ident::new("schema", "app_1").unwrap(),
        to: Ident::new("schema", "app_copy").unwrap(),
    }];
    let report = native::copy(
        &src,
        &dst,
        &pairs,
        native::NativeOptions::default(),
        &Progress::default(),
    )
    .unwrap();
    assert_eq!(report.rows, 23_000);
    assert_eq!(report.tables, 2);
    let mut n3 = connect(sb, "node3");
    for (t, (ddl, sum)) in TABLES.iter().zip(&source) {
        assert_eq!(&definition(&mut n3, "app_copy", t), ddl, "{t}");
        assert_eq!(&checksum(&mut n3, "app_copy", t), sum, "{t}");
    }
    exec(&mut n3, &["DROP DATABASE app_copy"]);

    // A move: its verify step compares definitions and rows before the fence.
    shardctl()
        .arg("--config")
        .arg(&inv_path)
        .args([
            "move", "--shard", "1", "--to", "node2", "--method", "native",
        ])
        .timeout(std::time::Duration::from_secs(300))
        .assert()
        .success();
    let mut n2 = connect(sb, "node2");
    for (t, (ddl, sum)) in TABLES.iter().zip(&source) {
        assert_eq!(&definition(&mut n2, "app_1", t), ddl, "{t}");
        assert_eq!(&checksum(&mut n2, "app_1", t), sum, "{t}");
    }
    assert_eq!(source[0].1 .0, 20_000);
}
