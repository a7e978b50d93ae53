//! The change stream (issue 28, item 1) on real MariaDB servers: node1 is the source,
//! node2 the target. Each test makes its own schemas, takes the source's coordinates (the
//! copy's consistent point, the tables empty on both sides there), writes on the source,
//! streams, and compares the target with the source's rows that the moving keys select,
//! every column read through the binary protocol (a FLOAT or DOUBLE bit for bit).
//! The tests run one at a time: some change the source's global settings or purge its
//! binary log.

mod common;

use common::{connect, exec, inventory, serial, SharedFleet};
use mysql::Value;
use proptest::prelude::*;
use shardctl::directory::{Coverage, Key, KeyType, RingPoint};
use shardctl::error::Error;
use shardctl::ident::Ident;
use shardctl::sandbox::Sandbox;
use shardctl::server::replication::Coordinates;
use shardctl::server::statements::{KeyKind, NotOwned};
use shardctl::server::{ConnectSpec, Server, Stmt};
use shardctl::stream::{
    ChangeStream, Checkpoint, Ended, Flush, KeyFilter, MovingTable, NoObserver, Observer, Start,
    StreamOptions, StreamProgress, StreamSpec, Until,
};
use std::time::Duration;

static FLEET: SharedFleet = SharedFleet::new(2, |_| {});

fn sb() -> &'static Sandbox {
    FLEET.sandbox()
}

fn id(name: &str) -> Ident {
    Ident::new("name", name).unwrap()
}

/// Every column type the stream maps, a virtual and a stored generated column among them.
const EVERY_TYPE: &str = "(id BIGINT NOT NULL, \
    ti TINYINT NULL, tu TINYINT UNSIGNED NULL, su SMALLINT UNSIGNED NULL, mu MEDIUMINT UNSIGNED NULL, \
    iu INT UNSIGNED NULL, bu BIGINT UNSIGNED NULL, \
    f FLOAT NULL, d DOUBLE NULL, dc DECIMAL(30,8) NULL, \
    dt DATETIME(6) NULL, ts TIMESTAMP(6) NULL, da DATE NULL, tm TIME(3) NULL, y YEAR NULL, \
    c CHAR(10) NULL, vc VARCHAR(100) CHARACTER SET utf8mb4 NULL, l1 VARCHAR(20) CHARACTER SET latin1 NULL, \
    vb VARBINARY(50) NULL, bl BLOB NULL, tx TEXT NULL, js JSON NULL, \
    b BIT(13) NULL, e ENUM('a','b','c') NULL, s SET('x','y','z') NULL, \
    g BIGINT AS (id * 2) VIRTUAL, gs BIGINT AS (id + 1) PERSISTENT, \
    PRIMARY KEY (id)) ENGINE=InnoDB";

/// A row of every type for key `k` (varied by `v`), as an INSERT's VALUES list.
fn every_type_values(k: i64, v: i64) -> String {
    let f = format!("{}.{}e-3", v, v % 7);
    let d = format!("{}.0000001", -v);
    let dc = format!("-{v}.12345678");
    format!(
        "({k}, {ti}, {tu}, 65535, 16777215, 4294967295, 18446744073709551615, \
         {f}, {d}, {dc}, '2024-02-29 13:05:09.{us:06}', '2030-06-15 12:00:00.{us:06}', '1000-01-01', '-838:59:58.{ms:03}', {y}, \
         'c{v}', 'é✓{v}', _latin1 x'E9{l:02x}', x'00FF{v:04x}', REPEAT(x'00AB', {rep}), REPEAT('t', {rep}), '{{\"k\": {k}, \"v\": [1.5, \"x\"]}}', \
         b'1010101010101', '{e}', '{s}')",
        l = v % 256,
        ti = -(v % 128),
        tu = 200 + v % 50,
        us = v % 1_000_000,
        ms = v % 1000,
        y = if v % 3 == 0 { 0 } else { 1901 + v % 200 },
        rep = 1 + v % 300,
        e = ["a", "b", "c"][(v % 3) as usize],
        s = ["", "x", "x,z", "x,y,z"][(v % 4) as usize],
    )
}

const EVERY_TYPE_COLUMNS: &str =
    "id, ti, tu, su, mu, iu, bu, f, d, dc, dt, ts, da, tm, y, c, vc, l1, vb, bl, tx, js, b, e, s";

fn coordinates(server: &mut Server) -> Coordinates {
    server.coordinates().unwrap()
}

/// The source with the admin account and with the replication account, and the target.
fn specs() -> (ConnectSpec, ConnectSpec, ConnectSpec) {
    let inv = inventory(sb());
    let source = ConnectSpec::for_node(&inv, inv.node("node1").unwrap()).unwrap();
    let mut dump = source.clone();
    dump.credentials = inv.replication_credentials().unwrap();
    let target = ConnectSpec::for_node(&inv, inv.node("node2").unwrap()).unwrap();
    (source, dump, target)
}

fn spec(stream_id: &str, tables: Vec<MovingTable>, start: &Coordinates) -> StreamSpec {
    let (source, source_dump, target) = specs();
    StreamSpec {
        id: stream_id.into(),
        source,
        source_dump,
        target,
        tables,
        start: Start::from(start),
        checkpoint_schema: id("_shardctl"),
        options: StreamOptions::default(),
    }
}

fn moving(schema_from: &str, schema_to: &str, table: &str, keys: Option<KeyFilter>) -> MovingTable {
    MovingTable {
        source_schema: id(schema_from),
        target_schema: id(schema_to),
        table: id(table),
        source_table_now: None,
        keys: keys.map(|f| (id("id"), f)),
    }
}

/// Both sides get `schema` (named `to` on the target) with `table` defined by `definition`.
fn create_both(from: &str, to: &str, table: &str, definition: &str) {
    let mut s = connect(sb(), "node1");
    let mut t = connect(sb(), "node2");
    exec(
        &mut s,
        &[
            &format!("DROP DATABASE IF EXISTS {from}"),
            &format!("CREATE DATABASE {from}"),
            &format!("CREATE TABLE {from}.{table} {definition}"),
        ],
    );
    exec(
        &mut t,
        &[
            &format!("DROP DATABASE IF EXISTS {to}"),
            &format!("CREATE DATABASE {to}"),
            &format!("CREATE TABLE {to}.{table} {definition}"),
        ],
    );
}

/// Every row of `schema.table` matching `cond` (a WHERE clause, with its values), ordered
/// by `id`, each column as the binary protocol gives it.
fn rows(
    server: &mut Server,
    schema: &str,
    table: &str,
    columns: &str,
    cond: Option<&shardctl::server::statements::Condition>,
) -> Vec<Vec<Value>> {
    let (sql_where, params) = match cond {
        Some(c) => (format!(" WHERE {}", c.sql), c.params.clone()),
        None => (String::new(), Vec::new()),
    };
    let st = Stmt::with(
        format!("SELECT {columns} FROM `{schema}`.`{table}`{sql_where} ORDER BY id"),
        params,
    );
    let mut out = Vec::new();
    server
        .stream(&st, |r| {
            out.push(r.unwrap());
            Ok(())
        })
        .unwrap();
    out
}

/// The target equals the source's rows that `filter` keeps (over column `id`).
fn assert_converged(from: &str, to: &str, table: &str, columns: &str, filter: &KeyFilter) -> usize {
    let mut s = connect(sb(), "node1");
    let mut t = connect(sb(), "node2");
    let cond = filter.condition(&id("id"));
    let want = rows(&mut s, from, table, columns, Some(&cond));
    let got = rows(&mut t, to, table, columns, None);
    assert_eq!(got.len(), want.len(), "{to}.{table}: row count");
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(g, w, "{to}.{table}: a row differs");
    }
    got.len()
}

fn range_filter(lower: i64, upper: i64) -> KeyFilter {
    KeyFilter::of_coverage(
        &Coverage::Range {
            lower: Key::Int(lower),
            upper: Some(Key::Int(upper)),
        },
        KeyType::Int,
    )
    .unwrap()
}

/// The workload of the convergence tests: inserts of keys 0..300, updates (some moving a
/// key into or out of the moving keys), deletes, in several transactions.
fn every_type_workload(schema: &str) {
    let mut s = connect(sb(), "node1");
    let t = format!("{schema}.t");
    for chunk in (0..300).collect::<Vec<i64>>().chunks(50) {
        let values: Vec<String> = chunk
            .iter()
            .map(|&k| every_type_values(k, k * 7 + 3))
            .collect();
        exec(
            &mut s,
            &[&format!(
                "INSERT INTO {t} ({EVERY_TYPE_COLUMNS}) VALUES {}",
                values.join(", ")
            )],
        );
    }
    exec(
        &mut s,
        &[
            "BEGIN",
            &format!("UPDATE {t} SET vc = CONCAT(vc, '+'), f = f * 2, ts = NULL WHERE id % 5 = 0"),
            &format!("DELETE FROM {t} WHERE id % 7 = 1"),
            &format!("INSERT INTO {t} ({EVERY_TYPE_COLUMNS}) VALUES {}", every_type_values(1000, 11)),
            "COMMIT",
            // Keys leave and enter the moving keys.
            &format!("UPDATE {t} SET id = id + 5000 WHERE id IN (10, 20, 30)"),
            &format!("UPDATE {t} SET id = id - 200 WHERE id IN (250, 260)"),
            &format!("UPDATE {t} SET y = 0, e = 'c', s = 'y', b = b'1', js = NULL WHERE id BETWEEN 40 AND 45"),
            // A row whose columns are all NULL but the key.
            &format!("DELETE FROM {t} WHERE id = 7"),
            &format!("INSERT INTO {t} (id) VALUES (99999), (7)"),
        ],
    );
}

/// The target's checkpoint rows of `stream_id` (none while the table does not exist).
fn checkpoint_rows(stream_id: &str) -> i64 {
    let mut t = connect(sb(), "node2");
    t.first::<i64>(&Stmt::with(
        "SELECT COUNT(*) FROM _shardctl.stream_checkpoints WHERE stream_id = ?",
        vec![Value::from(stream_id)],
    ))
    .map(|n| n.unwrap_or(0))
    .or_else(|e| match e {
        Error::Server { message, .. } if message.starts_with("error 1146 (") => Ok(0),
        e => Err(e),
    })
    .unwrap()
}

fn run_caught_up(stream: &mut ChangeStream) -> shardctl::stream::RunReport {
    stream.run(Until::CaughtUp, &mut NoObserver).unwrap()
}

#[test]
fn a_range_of_keys_of_every_column_type_streams_exactly() {
    let _g = serial();
    create_both("st_range", "st_range_t", "t", EVERY_TYPE);
    let start = coordinates(&mut connect(sb(), "node1"));
    every_type_workload("st_range");
    let filter = range_filter(0, 100);
    let mut stream = ChangeStream::prepare(spec(
        "range",
        vec![moving("st_range", "st_range_t", "t", Some(filter.clone()))],
        &start,
    ))
    .unwrap();
    let report = run_caught_up(&mut stream);
    assert_eq!(report.ended, Ended::Reached);
    let n = assert_converged(
        "st_range",
        "st_range_t",
        "t",
        &format!("{EVERY_TYPE_COLUMNS}, g, gs"),
        &filter,
    );
    assert!(n > 50, "{n} rows only");
    let mut t = connect(sb(), "node2");
    // Out of range on the target: 10, 20, 30 left (id + 5000), 50 and 60 arrived.
    let ids: Vec<i64> = rows(&mut t, "st_range_t", "t", "id", None)
        .iter()
        .map(|r| mysql::from_value(r[0].clone()))
        .collect();
    assert!(!ids.contains(&10) && !ids.contains(&5010), "{ids:?}");
    assert!(
        ids.contains(&50) && ids.contains(&60) && ids.contains(&7),
        "{ids:?}"
    );
    // The checkpoint is where the source stands, and the lag is nil.
    let now = coordinates(&mut connect(sb(), "node1"));
    assert_eq!(report.checkpoint.position, now.position);
    assert_eq!(report.progress.bytes_behind, Some(0));
    assert_eq!(report.progress.seconds_behind, Some(0));
    assert!(report.progress.rows_filtered > 0);
    // The GTID state followed the source's.
    assert_eq!(report.checkpoint.gtid_state, now.gtid);
    // A second run from the checkpoint has nothing to do.
    let again = run_caught_up(
        &mut ChangeStream::prepare(spec(
            "range",
            vec![moving("st_range", "st_range_t", "t", Some(filter.clone()))],
            &start,
        ))
        .unwrap(),
    );
    assert_eq!(again.checkpoint.position, now.position);
    assert_eq!(again.progress.transactions, 0);
}

#[test]
fn a_hash_arc_and_a_list_of_keys_stream_exactly() {
    let _g = serial();
    let arc = KeyFilter::of_coverage(
        &Coverage::Arc {
            point: RingPoint(u128::MAX / 4),
            next: RingPoint(u128::MAX / 4 * 3),
            share: 0.5,
        },
        KeyType::Int,
    )
    .unwrap();
    let wrapped = KeyFilter::of_coverage(
        &Coverage::Arc {
            point: RingPoint(u128::MAX / 4 * 3),
            next: RingPoint(u128::MAX / 4),
            share: 0.5,
        },
        KeyType::Int,
    )
    .unwrap();
    let list = KeyFilter::of_coverage(
        &Coverage::Values {
            values: [3, 5, 40, 41, 50, 250, 1000, 5010].map(Key::Int).to_vec(),
        },
        KeyType::Int,
    )
    .unwrap();
    let cases = [("st_hash", arc), ("st_wrap", wrapped), ("st_list", list)];
    for (schema, _) in &cases {
        create_both(schema, &format!("{schema}_t"), "t", EVERY_TYPE);
    }
    let start = coordinates(&mut connect(sb(), "node1"));
    for (schema, _) in &cases {
        every_type_workload(schema);
    }
    for (schema, filter) in &cases {
        let mut stream = ChangeStream::prepare(spec(
            schema,
            vec![moving(
                schema,
                &format!("{schema}_t"),
                "t",
                Some(filter.clone()),
            )],
            &start,
        ))
        .unwrap();
        // The journal's follower sees every commit, in order, up to the last.
        struct Follower(Vec<Checkpoint>);
        impl Observer for Follower {
            fn committed(&mut self, cp: &Checkpoint) -> shardctl::Result<()> {
                self.0.push(cp.clone());
                Ok(())
            }
        }
        let mut follower = Follower(Vec::new());
        let report = stream.run(Until::CaughtUp, &mut follower).unwrap();
        let seen = follower.0;
        assert!(
            seen.windows(2)
                .all(|w| w[0].position < w[1].position && w[0].transactions <= w[1].transactions),
            "{seen:?}"
        );
        assert_eq!(seen.last(), Some(&report.checkpoint));
        // A fresh stream: the checkpoint's counters are this run's.
        assert_eq!(report.checkpoint.transactions, report.progress.transactions);
        assert_eq!(report.checkpoint.row_changes, report.progress.row_changes);
        let n = assert_converged(
            schema,
            &format!("{schema}_t"),
            "t",
            EVERY_TYPE_COLUMNS,
            filter,
        );
        assert!(n > 0, "{schema}: nothing moved");
    }
}

#[test]
fn a_start_by_mariadb_gtid_streams_the_same() {
    let _g = serial();
    create_both("st_gtid", "st_gtid_t", "t", EVERY_TYPE);
    let start = coordinates(&mut connect(sb(), "node1"));
    every_type_workload("st_gtid");
    let filter = range_filter(100, 1_000_000);
    let mut s = spec(
        "gtid",
        vec![moving("st_gtid", "st_gtid_t", "t", Some(filter.clone()))],
        &start,
    );
    s.start.position = None;
    let mut stream = ChangeStream::prepare(s).unwrap();
    let report = run_caught_up(&mut stream);
    assert_converged("st_gtid", "st_gtid_t", "t", EVERY_TYPE_COLUMNS, &filter);
    let now = coordinates(&mut connect(sb(), "node1"));
    assert_eq!(
        report.checkpoint.position, now.position,
        "the position was learnt"
    );
}

/// Ends a session on `node` from another one.
fn kill(node: &str, connection: u64) {
    let mut admin = connect(sb(), node);
    exec(&mut admin, &[&format!("KILL CONNECTION {connection}")]);
}

/// Kills the target's session once a transaction has applied `after` changes (inside it),
/// or, with `at_commit`, once the checkpoint is written and the commit about to go.
struct Crasher {
    after: u64,
    at_commit: bool,
    connection: Option<u64>,
    crashed: bool,
}

impl Observer for Crasher {
    fn flushed(&mut self, f: &Flush) -> shardctl::Result<()> {
        self.connection = Some(f.target_connection);
        if !self.at_commit && !self.crashed && f.in_transaction >= self.after {
            self.crashed = true;
            kill("node2", f.target_connection);
        }
        Ok(())
    }

    fn before_commit(&mut self, cp: &Checkpoint) -> shardctl::Result<()> {
        if self.at_commit && !self.crashed && cp.row_changes >= self.after {
            self.crashed = true;
            kill("node2", self.connection.expect("a flush came first"));
        }
        Ok(())
    }
}

fn big_transaction(schema: &str) {
    let mut s = connect(sb(), "node1");
    let t = format!("{schema}.t");
    exec(
        &mut s,
        &[
            &format!("INSERT INTO {t} (id, vc) VALUES (1, 'before'), (2, 'before')"),
            "BEGIN",
            &format!("INSERT INTO {t} (id, vc) SELECT seq, 'big' FROM {schema}.seq_10_to_3009"),
            &format!("UPDATE {t} SET vc = 'changed' WHERE id % 3 = 0"),
            &format!("DELETE FROM {t} WHERE id % 10 = 5"),
            &format!("UPDATE {t} SET id = id + 100000 WHERE id BETWEEN 2000 AND 2099"),
            "COMMIT",
            &format!("INSERT INTO {t} (id, vc) VALUES (3, 'after')"),
        ],
    );
}

fn crash_and_resume(schema: &str, at_commit: bool) {
    create_both(schema, &format!("{schema}_t"), "t", EVERY_TYPE);
    let start = coordinates(&mut connect(sb(), "node1"));
    big_transaction(schema);
    let filter = range_filter(0, 50_000);
    let make = || {
        let mut s = spec(
            schema,
            vec![moving(
                schema,
                &format!("{schema}_t"),
                "t",
                Some(filter.clone()),
            )],
            &start,
        );
        s.options.max_buffered_rows = 100;
        s.options.reconnects = 0;
        ChangeStream::prepare(s).unwrap()
    };
    let mut crasher = Crasher {
        after: 1000,
        at_commit,
        connection: None,
        crashed: false,
    };
    let err = make().run(Until::CaughtUp, &mut crasher).unwrap_err();
    assert!(crasher.crashed, "the crash point was reached");
    assert!(matches!(err, Error::Server { .. }), "{err}");
    // The target holds the transaction before the big one and nothing of the big one.
    let mut t = connect(sb(), "node2");
    let target = format!("{schema}_t");
    assert_eq!(
        rows(&mut t, &target, "t", "id", None).len(),
        2,
        "the big transaction was rolled back whole"
    );
    // A new stream (a new process) resumes from the target's checkpoint.
    let report = make().run(Until::CaughtUp, &mut NoObserver).unwrap();
    assert_eq!(
        report.progress.transactions, 2,
        "the big one and the one after"
    );
    let n = assert_converged(schema, &target, "t", "id, vc", &filter);
    assert!(n > 2500, "{n}");
}

#[test]
fn a_stream_killed_inside_a_large_transaction_resumes_exactly() {
    let _g = serial();
    crash_and_resume("st_crash", false);
}

/// The checkpoint and the rows commit together: a crash between writing the checkpoint and
/// the commit loses both, and the resumed stream applies the transaction once. With the
/// checkpoint in a transaction of its own, the resumed stream would skip the rows (the
/// checkpoint committed first) or apply them twice (it committed after: the INSERT then
/// meets its own rows and the stream stops), and this test fails.
#[test]
fn the_checkpoint_commits_with_the_rows() {
    let _g = serial();
    crash_and_resume("st_atomic", true);
}

#[test]
fn a_dump_connection_dropped_mid_transaction_is_opened_again() {
    let _g = serial();
    let schema = "st_drop";
    create_both(schema, "st_drop_t", "t", EVERY_TYPE);
    let start = coordinates(&mut connect(sb(), "node1"));
    // Some 24 MB of binary log in one transaction: more than the sockets hold, so the
    // reader meets the closed connection before the transaction's end.
    exec(
        &mut connect(sb(), "node1"),
        &[
            "BEGIN",
            "INSERT INTO st_drop.t (id, bl) SELECT seq, REPEAT(CHAR(65 + seq % 26), 8000) FROM st_drop.seq_1_to_3000",
            "COMMIT",
        ],
    );
    let filter = range_filter(0, 50_000);
    let mut s = spec(
        schema,
        vec![moving(schema, "st_drop_t", "t", Some(filter.clone()))],
        &start,
    );
    s.options.max_buffered_rows = 100;
    struct DropDump(bool);
    impl Observer for DropDump {
        fn flushed(&mut self, f: &Flush) -> shardctl::Result<()> {
            if !self.0 && f.in_transaction >= 200 {
                self.0 = true;
                let mut admin = connect(sb(), "node1");
                let ids: Vec<u64> = admin
                    .rows(&Stmt::text(
                        "SELECT id FROM information_schema.processlist WHERE command LIKE 'Binlog Dump%'",
                    ))
                    .unwrap()
                    .iter()
                    .map(|r| r.get(0).unwrap())
                    .collect();
                assert!(!ids.is_empty(), "a dump thread runs");
                for i in ids {
                    exec(&mut admin, &[&format!("KILL CONNECTION {i}")]);
                }
            }
            Ok(())
        }
    }
    let mut stream = ChangeStream::prepare(s).unwrap();
    let report = stream.run(Until::CaughtUp, &mut DropDump(false)).unwrap();
    assert!(report.progress.reconnects >= 1, "{:?}", report.progress);
    assert_converged(schema, "st_drop_t", "t", "id, bl", &filter);
}

#[test]
fn a_long_transaction_is_applied_with_bounded_memory() {
    let _g = serial();
    let schema = "st_long";
    create_both(
        schema,
        "st_long_t",
        "t",
        "(id BIGINT NOT NULL PRIMARY KEY, v INT NOT NULL) ENGINE=InnoDB",
    );
    let start = coordinates(&mut connect(sb(), "node1"));
    let mut s = connect(sb(), "node1");
    exec(
        &mut s,
        &["INSERT INTO st_long.t (id, v) SELECT seq, seq % 1000 FROM st_long.seq_1_to_200000"],
    );
    let filter = range_filter(0, i64::MAX);
    let mut sp = spec(
        schema,
        vec![moving(schema, "st_long_t", "t", Some(filter.clone()))],
        &start,
    );
    sp.options.max_buffered_rows = 1000;
    let mut stream = ChangeStream::prepare(sp).unwrap();
    let began = std::time::Instant::now();
    let report = run_caught_up(&mut stream);
    let secs = began.elapsed().as_secs_f64();
    eprintln!(
        "200000 rows in one transaction: {secs:.1} s, {:.0} rows/s, at most {} rows buffered",
        200_000.0 / secs,
        report.progress.buffered_peak
    );
    assert_eq!(report.progress.transactions, 1);
    assert_eq!(report.progress.row_changes, 200_000);
    assert!(
        report.progress.buffered_peak <= 1000,
        "{:?}",
        report.progress
    );
    assert!(report.progress.buffered_peak >= 500, "the buffer was used");
    let mut t = connect(sb(), "node2");
    assert_eq!(
        common::count(&mut t, "SELECT COUNT(*) FROM st_long_t.t"),
        200_000
    );
    assert_eq!(
        common::count(&mut t, "SELECT SUM(v) FROM st_long_t.t"),
        common::count(&mut s, "SELECT SUM(v) FROM st_long.t")
    );
}

#[test]
fn a_source_whose_row_image_is_minimal_is_refused() {
    let _g = serial();
    create_both("st_min", "st_min_t", "t", EVERY_TYPE);
    let start = coordinates(&mut connect(sb(), "node1"));
    let mut s = connect(sb(), "node1");
    /// Puts FULL back whatever happens.
    struct Full;
    impl Drop for Full {
        fn drop(&mut self) {
            exec(
                &mut connect(sb(), "node1"),
                &["SET GLOBAL binlog_row_image = 'FULL'"],
            );
        }
    }
    let _full = Full;
    exec(&mut s, &["SET GLOBAL binlog_row_image = 'MINIMAL'"]);
    let refused = ChangeStream::prepare(spec(
        "min",
        vec![moving("st_min", "st_min_t", "t", None)],
        &start,
    ));
    exec(&mut s, &["SET GLOBAL binlog_row_image = 'FULL'"]);
    let e = refused.unwrap_err();
    assert!(matches!(e, Error::Refused(_)), "{e}");
    assert!(e.to_string().contains("binlog_row_image is MINIMAL"), "{e}");
    assert_eq!(checkpoint_rows("min"), 0, "nothing written on the target");
    // A session that logs minimal rows while the stream runs stops it at that event.
    let mut stream = ChangeStream::prepare(spec(
        "min",
        vec![moving("st_min", "st_min_t", "t", None)],
        &start,
    ))
    .unwrap();
    exec(
        &mut s,
        &[
            "INSERT INTO st_min.t (id, vc) VALUES (1, 'a'), (2, 'b')",
            "SET SESSION binlog_row_image = 'MINIMAL'",
            "UPDATE st_min.t SET vc = 'c' WHERE id = 1",
        ],
    );
    let e = stream.run(Until::CaughtUp, &mut NoObserver).unwrap_err();
    assert!(e.to_string().contains("without all its columns"), "{e}");
    // The insert before it went through.
    let mut t = connect(sb(), "node2");
    assert_eq!(common::count(&mut t, "SELECT COUNT(*) FROM st_min_t.t"), 2);
}

#[test]
fn a_purged_start_position_is_refused_before_anything_changes() {
    let _g = serial();
    create_both("st_purge", "st_purge_t", "t", EVERY_TYPE);
    let mut s = connect(sb(), "node1");
    let start = coordinates(&mut s);
    exec(
        &mut s,
        &[
            "INSERT INTO st_purge.t (id) VALUES (1)",
            "FLUSH BINARY LOGS",
        ],
    );
    let now = coordinates(&mut s);
    // The server keeps a file a dump thread still reads or crash recovery still needs:
    // purge until it is gone (its binlog checkpoint event is then written, so no event of
    // the server's own comes later to move another test's source position; this is the
    // binary's only rotation).
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        exec(
            &mut s,
            &[&format!("PURGE BINARY LOGS TO '{}'", now.position.file)],
        );
        let logs: Vec<String> = s
            .rows(&Stmt::text("SHOW BINARY LOGS"))
            .unwrap()
            .iter()
            .map(|r| r.get(0).unwrap())
            .collect();
        if !logs.contains(&start.position.file) {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{logs:?} still held");
        std::thread::sleep(Duration::from_millis(200));
    }

    let e = ChangeStream::prepare(spec(
        "purged",
        vec![moving("st_purge", "st_purge_t", "t", None)],
        &start,
    ))
    .unwrap_err();
    assert!(matches!(e, Error::Refused(_)), "{e}");
    assert!(
        e.to_string()
            .contains("no longer holds the stream's position"),
        "{e}"
    );
    assert_eq!(checkpoint_rows("purged"), 0, "no checkpoint was written");
}

#[test]
fn a_moving_table_without_a_key_or_with_triggers_is_refused() {
    let _g = serial();
    create_both(
        "st_nopk",
        "st_nopk_t",
        "t",
        "(id BIGINT NOT NULL, v INT) ENGINE=InnoDB",
    );
    let start = coordinates(&mut connect(sb(), "node1"));
    let e = ChangeStream::prepare(spec(
        "nopk",
        vec![moving(
            "st_nopk",
            "st_nopk_t",
            "t",
            Some(range_filter(0, 10)),
        )],
        &start,
    ))
    .unwrap_err();
    assert!(e.to_string().contains("has no primary key"), "{e}");
    // A unique key over NOT NULL columns will do.
    create_both(
        "st_uk",
        "st_uk_t",
        "t",
        "(id BIGINT NOT NULL, v INT, UNIQUE KEY (id)) ENGINE=InnoDB",
    );
    ChangeStream::prepare(spec(
        "uk",
        vec![moving("st_uk", "st_uk_t", "t", Some(range_filter(0, 10)))],
        &start,
    ))
    .unwrap();
    let mut t = connect(sb(), "node2");
    exec(
        &mut t,
        &["CREATE TRIGGER st_uk_t.bump BEFORE INSERT ON st_uk_t.t FOR EACH ROW SET NEW.v = 1"],
    );
    let e = ChangeStream::prepare(spec(
        "uk",
        vec![moving("st_uk", "st_uk_t", "t", Some(range_filter(0, 10)))],
        &start,
    ))
    .unwrap_err();
    assert!(e.to_string().contains("has trigger bump"), "{e}");
}

#[test]
fn ddl_on_a_moving_table_stops_the_stream_before_it() {
    let _g = serial();
    create_both("st_ddl", "st_ddl_t", "t", EVERY_TYPE);
    create_both("st_other", "st_other_t", "t", EVERY_TYPE);
    let start = coordinates(&mut connect(sb(), "node1"));
    let mut s = connect(sb(), "node1");
    exec(
        &mut s,
        &[
            "INSERT INTO st_ddl.t (id) VALUES (1), (2)",
            // DDL elsewhere passes.
            "ALTER TABLE st_other.t ADD COLUMN extra INT NULL",
            "INSERT INTO st_ddl.t (id) VALUES (3)",
        ],
    );
    let before_ddl = coordinates(&mut s);
    let mut stream = ChangeStream::prepare(spec(
        "ddl",
        vec![moving("st_ddl", "st_ddl_t", "t", None)],
        &start,
    ))
    .unwrap();
    exec(
        &mut s,
        &[
            "ALTER TABLE st_ddl.t ADD COLUMN extra INT NULL",
            "INSERT INTO st_ddl.t (id, extra) VALUES (4, 4)",
        ],
    );
    let e = stream.run(Until::CaughtUp, &mut NoObserver).unwrap_err();
    assert!(matches!(e, Error::Refused(_)), "{e}");
    let text = e.to_string();
    assert!(
        text.contains("ALTER TABLE st_ddl.t ADD COLUMN extra"),
        "{text}"
    );
    assert!(text.contains(&before_ddl.position.to_string()), "{text}");
    let mut t = connect(sb(), "node2");
    assert_eq!(common::count(&mut t, "SELECT COUNT(*) FROM st_ddl_t.t"), 3);
    let cp = stream.stats().progress().checkpoint.unwrap();
    assert_eq!(cp.position, before_ddl.position, "stopped before the DDL");
}

/// Pause (the operator's control) and a throttle hold the stream between transactions;
/// the lag it reports meanwhile is the source's bytes not yet applied.
#[test]
fn pause_and_throttle_hold_the_stream_and_the_lag_shows() {
    let _g = serial();
    create_both("st_lag", "st_lag_t", "t", EVERY_TYPE);
    let start = coordinates(&mut connect(sb(), "node1"));
    every_type_workload("st_lag");
    let mut sp = spec("lag", vec![moving("st_lag", "st_lag_t", "t", None)], &start);
    sp.options.lag_every = Duration::ZERO;
    let mut stream = ChangeStream::prepare(sp).unwrap();
    let control = std::sync::Arc::new(shardctl::control::Control::default());
    control.set_requested(true, Default::default());
    stream.set_control(Some(control.clone()));
    let stats = stream.stats();
    struct Throttle(Vec<Option<u64>>);
    impl Observer for Throttle {
        fn throttle(&mut self, p: &StreamProgress) -> Duration {
            self.0.push(p.bytes_behind);
            Duration::from_millis(5)
        }
    }
    let runner = std::thread::spawn(move || {
        let mut throttle = Throttle(Vec::new());
        let report = stream.run(Until::CaughtUp, &mut throttle).unwrap();
        (report, throttle.0)
    });
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while !control.paused() {
        assert!(
            std::time::Instant::now() < deadline,
            "the stream never parked"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(500));
    assert!(control.paused(), "the stream stays parked");
    assert_eq!(
        stats.progress().transactions,
        0,
        "nothing applied while paused"
    );
    control.set_requested(false, Default::default());
    let (report, lags) = runner.join().unwrap();
    assert!(report.progress.transactions > 5);
    assert!(lags.iter().flatten().any(|&b| b > 0), "{lags:?}");
    assert_eq!(report.progress.bytes_behind, Some(0));
}

/// The key filter agrees with the SQL the copy, the prune and the guards run: random
/// mappings over random keys, evaluated by the server and in Rust.
#[test]
fn the_key_filter_agrees_with_the_servers_sql() {
    let _g = serial();
    let mut s = connect(sb(), "node1");
    exec(
        &mut s,
        &[
            "DROP DATABASE IF EXISTS st_pred",
            "CREATE DATABASE st_pred",
            "CREATE TABLE st_pred.i (id BIGINT NOT NULL PRIMARY KEY)",
            "CREATE TABLE st_pred.u (id BIGINT UNSIGNED NOT NULL PRIMARY KEY)",
            "CREATE TABLE st_pred.b (id VARBINARY(16) NOT NULL PRIMARY KEY)",
        ],
    );
    let mut rng_keys: Vec<i64> = vec![i64::MIN, -1, 0, 1, 42, i64::MAX];
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for _ in 0..400 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        rng_keys.push(match x % 3 {
            0 => (x % 2000) as i64 - 1000,
            1 => x as i64,
            _ => (x % 100_000) as i64,
        });
    }
    rng_keys.sort();
    rng_keys.dedup();
    let ints: Vec<String> = rng_keys.iter().map(|k| format!("({k})")).collect();
    let uints: Vec<String> = rng_keys
        .iter()
        .map(|k| format!("({})", *k as u64))
        .collect();
    let strs: Vec<String> = rng_keys
        .iter()
        .map(|k| {
            format!(
                "(x'{}')",
                hex(&k.to_le_bytes()[..(k.unsigned_abs() % 9) as usize])
            )
        })
        .collect();
    let mut strs = strs;
    strs.sort();
    strs.dedup();
    exec(
        &mut s,
        &[
            &format!("INSERT INTO st_pred.i VALUES {}", ints.join(", ")),
            &format!("INSERT INTO st_pred.u VALUES {}", uints.join(", ")),
            &format!("INSERT IGNORE INTO st_pred.b VALUES {}", strs.join(", ")),
        ],
    );
    let tables: Vec<(&str, Vec<Value>)> = ["i", "u", "b"]
        .iter()
        .map(|t| {
            let vals = rows(&mut s, "st_pred", t, "id", None)
                .into_iter()
                .map(|mut r| r.remove(0))
                .collect();
            (*t, vals)
        })
        .collect();
    let pick = |v: &[Value], i: usize| v[i % v.len()].clone();
    let strategy = (
        any::<u8>(),
        any::<usize>(),
        any::<usize>(),
        any::<u128>(),
        any::<u128>(),
        0usize..6,
    );
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
        cases: 64,
        ..ProptestConfig::default()
    });
    runner
        .run(&strategy, |(shape, a, b, p, q, n)| {
            for (table, keys) in &tables {
                let kind = if *table == "b" {
                    KeyKind::Bytes
                } else {
                    KeyKind::Int
                };
                let bound = |i: usize| match kind {
                    KeyKind::Int => match pick(keys, i) {
                        Value::UInt(u) => Value::Int(u as i64),
                        v => v,
                    },
                    KeyKind::Bytes => pick(keys, i),
                };
                let hex_point = |x: u128| Value::from(format!("{x:032x}"));
                let outside = match shape % 5 {
                    0 => NotOwned::OutsideRange {
                        lower: bound(a),
                        upper: Some(bound(b)),
                    },
                    1 => NotOwned::OutsideRange {
                        lower: bound(a),
                        upper: None,
                    },
                    2 => NotOwned::NotIn(
                        (0..n + 1)
                            .map(|k| bound(a.wrapping_add(k * 7919)))
                            .collect(),
                    ),
                    3 => NotOwned::OutsideArc {
                        after: hex_point(p.min(q)),
                        up_to: hex_point(p.max(q)),
                    },
                    _ => NotOwned::OutsideWrappedArc {
                        after: hex_point(p.max(q)),
                        up_to: hex_point(p.min(q)),
                    },
                };
                let filter = KeyFilter::new(kind, outside);
                let cond = filter.condition(&id("id"));
                let mut server = connect(sb(), "node1");
                let sql: Vec<Value> = rows(&mut server, "st_pred", table, "id", Some(&cond))
                    .into_iter()
                    .map(|mut r| r.remove(0))
                    .collect();
                let rust: Vec<Value> = keys
                    .iter()
                    .filter(|k| filter.keeps(k).unwrap())
                    .cloned()
                    .collect();
                prop_assert_eq!(&sql, &rust, "table {} filter {:?}", table, filter);
            }
            Ok(())
        })
        .unwrap();
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// An idle source still answers (its heartbeat), so a stream waiting for events notices
/// its stop flag within about a heartbeat, far below the read timeout; it stops at its
/// checkpoint with the position it read.
#[test]
fn an_idle_stream_stops_within_a_heartbeat() {
    let _g = serial();
    create_both("st_idle", "st_idle_t", "t", EVERY_TYPE);
    let start = coordinates(&mut connect(sb(), "node1"));
    exec(
        &mut connect(sb(), "node1"),
        &["INSERT INTO st_idle.t (id) VALUES (1)"],
    );
    let sp = spec(
        "idle",
        vec![moving("st_idle", "st_idle_t", "t", None)],
        &start,
    );
    assert!(
        sp.source_dump.read_timeout >= Duration::from_secs(10),
        "a read timeout this short proves nothing"
    );
    let mut stream = ChangeStream::prepare(sp).unwrap();
    let stop = stream.stop_flag();
    let stats = stream.stats();
    let runner = std::thread::spawn(move || stream.run(Until::Stopped, &mut NoObserver));
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while stats.progress().transactions < 1 {
        assert!(
            std::time::Instant::now() < deadline,
            "the insert never came"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // Idle now: a heartbeat every 100 ms comes.
    let before = stats.progress().events;
    std::thread::sleep(Duration::from_secs(3));
    let heartbeats = stats.progress().events - before;
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    let asked = std::time::Instant::now();
    let report = runner.join().unwrap().unwrap();
    assert!(
        asked.elapsed() < Duration::from_secs(1),
        "stopped after {:?}",
        asked.elapsed()
    );
    assert_eq!(report.ended, Ended::Stopped);
    assert!(heartbeats >= 10, "{heartbeats} events in 3 idle seconds");
    let now = coordinates(&mut connect(sb(), "node1"));
    assert_eq!(report.checkpoint.position, now.position);
}

/// The owner epoch fences a stream: once a newer owner has prepared the same stream (it
/// claims the checkpoint), the older one's next transaction is refused and rolled back,
/// and once the checkpoint is gone (another owner ended the stream) the older one does not
/// start over from its start position.
#[test]
fn an_owner_taken_over_applies_nothing_more() {
    let _g = serial();
    let schema = "st_epoch";
    create_both(
        schema,
        "st_epoch_t",
        "t",
        "(id BIGINT NOT NULL PRIMARY KEY, v INT)",
    );
    let start = coordinates(&mut connect(sb(), "node1"));
    let filter = range_filter(0, 1000);
    let tables = || vec![moving(schema, "st_epoch_t", "t", Some(filter.clone()))];
    let mut old = spec("epoch-test", tables(), &start);
    old.options.epoch = 1;
    let mut a = ChangeStream::prepare(old).unwrap();
    exec(
        &mut connect(sb(), "node1"),
        &["INSERT INTO st_epoch.t VALUES (1, 1)"],
    );
    run_caught_up(&mut a);
    let count = |sql: &str| -> i64 {
        connect(sb(), "node2")
            .first::<i64>(&Stmt::text(sql))
            .unwrap()
            .unwrap_or(0)
    };
    assert_eq!(count("SELECT COUNT(*) FROM st_epoch_t.t"), 1);
    // A new owner (epoch 2) prepares the stream again: it claims the checkpoint.
    let mut new = spec("epoch-test", tables(), &start);
    new.options.epoch = 2;
    let mut b = ChangeStream::prepare(new).unwrap();
    exec(
        &mut connect(sb(), "node1"),
        &["INSERT INTO st_epoch.t VALUES (2, 2)"],
    );
    let e = a
        .run(Until::CaughtUp, &mut NoObserver)
        .expect_err("the old owner is fenced");
    assert!(matches!(e, Error::LeaseLost(_)), "{e}");
    assert_eq!(
        count("SELECT COUNT(*) FROM st_epoch_t.t"),
        1,
        "nothing applied by the old owner"
    );
    run_caught_up(&mut b);
    assert_eq!(count("SELECT COUNT(*) FROM st_epoch_t.t"), 2);
    // The new owner ends the stream (its checkpoint removed); the old one, run again, does
    // not start over from the copy's position.
    exec(
        &mut connect(sb(), "node2"),
        &["DELETE FROM _shardctl.stream_checkpoints WHERE stream_id = 'epoch-test'"],
    );
    exec(
        &mut connect(sb(), "node1"),
        &["INSERT INTO st_epoch.t VALUES (3, 3)"],
    );
    let e = a
        .run(Until::CaughtUp, &mut NoObserver)
        .expect_err("the checkpoint is gone");
    assert!(matches!(e, Error::LeaseLost(_)), "{e}");
    assert_eq!(count("SELECT COUNT(*) FROM st_epoch_t.t"), 2);
    assert_eq!(checkpoint_rows("epoch-test"), 0);
}
