//! `shardctl split` on real servers: range, hash and list splits under the workload; every
//! row ends on exactly the shard `lookup` names and every acknowledged write survives; bad
//! input is refused without a change.

mod common;

use common::{connect, count, exec, range_hash_list_items, serial, SharedFleet};
use predicates::prelude::*;
use shardctl::config::Inventory;
use shardctl::directory::{Directory, Key, Router};
use shardctl::sandbox::Sandbox;
use shardctl::workload;
use std::time::{Duration, Instant};

static FLEET: SharedFleet = SharedFleet::new(3, set_up);

/// Sets up the fleet once, on first use (see [`FLEET`]): a range (`r`, `rdb`), a hash
/// (`h`, `hdb`) and a list (`l`, `ldb`) function of two shards each on node1 and node2,
/// `items` filled through the router.
fn set_up(sb: &Sandbox) {
    let strings = ["a", "b", "c", "d", "e", "f"].map(|s| Key::Str(s.to_string()));
    range_hash_list_items(false, true)
        .routed_items(
            "r",
            "rdb",
            (0..4000)
                .map(|i| Key::Int(i * 3))
                .chain((0..500).map(|i| Key::Int(100_000 + i)))
                .collect(),
            1,
        )
        .routed_items("h", "hdb", (0..3000).map(Key::Int).collect(), 1)
        .routed_items("l", "ldb", strings.to_vec(), 50)
        .build(sb);
}

fn inventory() -> Inventory {
    common::inventory(FLEET.sandbox())
}

/// Every row of every sharded table of `function` sits on the shard the router names.
/// Returns the number of `items` rows.
fn rows_are_where_lookup_says(function: &str, db: &str) -> usize {
    common::items_are_where_lookup_says(FLEET.sandbox(), function, db)
}

fn split_under_workload(function: &str, db: &str, args: &[&str]) -> u32 {
    split_under(function, db, args, false).0
}

/// A split under the workload (routers fresh or stale): every acknowledged write is where
/// the directory now says its key lives, none was acknowledged by a shard not owning it.
/// Returns the new shard, the workload's report and when the split ran.
fn split_under(
    function: &str,
    db: &str,
    args: &[&str],
    stale_router: bool,
) -> (u32, workload::Report, (Instant, Instant)) {
    let before = rows_are_where_lookup_says(function, db);
    let running = workload::spawn(
        inventory(),
        workload::Options {
            rate: 200,
            stale_router,
            ..workload::Options::new(function)
        },
    )
    .unwrap();
    std::thread::sleep(Duration::from_millis(700));
    let began = Instant::now();
    let out = FLEET
        .cli(&[&["--output", "json"][..], args].concat())
        .output()
        .unwrap();
    let ended = Instant::now();
    std::thread::sleep(Duration::from_millis(700));
    let mut report = running.stop().unwrap();
    assert!(
        out.status.success(),
        "split failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    // One JSON line per step event, then the summary event.
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let v: serde_json::Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(
        (v["event"].as_str(), v["outcome"].as_str()),
        (Some("summary"), Some("split")),
        "{v}"
    );
    let check = report.check(&inventory(), function).unwrap();
    assert!(
        check.missing.is_empty(),
        "lost acknowledged writes: {:?}",
        check.missing
    );
    assert_eq!(report.wrong_shard_writes, 0, "{:?}", check.wrong_shard);
    assert!(report.streams.iter().all(|s| s.lost == 0));
    assert_eq!(
        rows_are_where_lookup_says(function, db),
        before,
        "no row lost or duplicated"
    );
    (
        v["new_shard"].as_u64().unwrap() as u32,
        report,
        (began, ended),
    )
}

/// The keys of the stream of `shard` acknowledged between `from` and `to`.
fn keys_written(report: &workload::Report, shard: u32, (from, to): (Instant, Instant)) -> Vec<Key> {
    let stream = report
        .streams
        .iter()
        .position(|s| s.shard_at_start == shard)
        .unwrap();
    report
        .acks
        .iter()
        .filter(|a| a.stream == stream && a.at >= from && a.at <= to)
        .map(|a| a.key.clone())
        .collect()
}

#[test]
fn a_range_shard_splits_at_its_median_under_load() {
    FLEET.sandbox();
    let _s = serial();
    let (new, report, window) = split_under(
        "r",
        "rdb",
        &["split", "--shard", "1", "--to", "node3", "--at", "median"],
        false,
    );
    let snap = Directory::open(&inventory()).unwrap().load().unwrap();
    let cov = shardctl::directory::coverage(&snap, snap.function("r").unwrap(), new);
    assert_eq!(
        cov.to_string(),
        "[6000, 100000)",
        "the median of 0, 3, ..., 11997"
    );
    assert_eq!(snap.shard(new).unwrap().node, "node3");
    // The stream of shard 1 wrote keys on both sides of the split point while the split
    // ran, and its keys above it reached the new shard afterwards, through the router.
    // The keys are drawn over the shard's whole range [0, 100000) while the split point is
    // at 6000, so a short split sees few below it (none in 14 % of runs of ~30 writes):
    // both sides are counted over the whole run, the split's own window must see writes.
    let during = keys_written(&report, 1, window);
    assert!(
        !during.is_empty(),
        "no write of the stream during the split"
    );
    let whole = keys_written(
        &report,
        1,
        (window.0 - Duration::from_millis(700), Instant::now()),
    );
    let below = whole.iter().filter(|k| **k < Key::Int(6000)).count();
    let above = whole.iter().filter(|k| **k >= Key::Int(6000)).count();
    assert!(
        below > 0 && above > 0,
        "around the split: {below} keys below 6000, {above} above"
    );
    let stream = report
        .streams
        .iter()
        .find(|s| s.shard_at_start == 1)
        .unwrap();
    assert_eq!(stream.shards_written, vec![1, new], "{stream:?}");
}

#[test]
fn a_hash_shard_splits_in_the_middle_of_its_arc_under_load() {
    FLEET.sandbox();
    let _s = serial();
    let snap = Directory::open(&inventory()).unwrap().load().unwrap();
    let f = snap.function("h").unwrap().clone();
    let shard = snap.shards_of(f.id).next().unwrap().id;
    let (new, report, window) = split_under(
        "h",
        "hdb",
        &["split", "--shard", &shard.to_string(), "--to", "node3"],
        false,
    );
    let snap = Directory::open(&inventory()).unwrap().load().unwrap();
    match shardctl::directory::coverage(&snap, snap.function("h").unwrap(), new) {
        shardctl::directory::Coverage::Arc { .. } => {}
        other => panic!("{other:?}"),
    }
    // While the split ran, the shard's stream wrote keys of both halves of its arc.
    let r = Router::connect(&inventory()).unwrap();
    let halves: std::collections::BTreeSet<u32> = keys_written(&report, shard, window)
        .iter()
        .map(|k| r.shard_for_function("h", k).unwrap().id)
        .collect();
    assert_eq!(halves, [shard, new].into_iter().collect(), "{halves:?}");
}

#[test]
fn a_list_shard_gives_some_values_to_a_new_shard_under_load() {
    FLEET.sandbox();
    let _s = serial();
    let new = split_under_workload(
        "l",
        "ldb",
        &["split", "--shard", "5", "--to", "node3", "--values", "c,d"],
    );
    let r = Router::connect(&inventory()).unwrap();
    assert_eq!(
        r.shard_for_function("l", &Key::Str("c".into())).unwrap().id,
        new
    );
    assert_eq!(
        r.shard_for_function("l", &Key::Str("a".into())).unwrap().id,
        5
    );
}

#[test]
fn bad_splits_are_refused_without_a_change() {
    FLEET.sandbox();
    let _s = serial();
    let version = || Directory::open(&inventory()).unwrap().version().unwrap();
    let before = version();
    let snap = Directory::open(&inventory()).unwrap().load().unwrap();
    let all_of_5: Vec<String> = snap
        .lists
        .iter()
        .filter(|l| l.shard_id == 5)
        .map(|l| l.value.to_string())
        .collect();
    let all_of_5 = all_of_5.join(",");
    let cases: Vec<(&str, Vec<&str>, i32, &str)> = vec![
        (
            "a key outside the shard's range",
            vec!["split", "--shard", "2", "--to", "node3", "--at", "50"],
            2,
            "outside shard 2's range [100000, ",
        ),
        (
            "a key equal to the lower bound",
            vec!["split", "--shard", "2", "--to", "node3", "--at", "100000"],
            5,
            "equals the lower bound",
        ),
        (
            "a value of another shard",
            vec!["split", "--shard", "5", "--to", "node3", "--values", "e"],
            2,
            "value e is not mapped to shard 5",
        ),
        (
            "every value of the shard",
            vec![
                "split", "--shard", "5", "--to", "node3", "--values", &all_of_5,
            ],
            2,
            "without values",
        ),
        (
            "a range split without --at",
            vec!["split", "--shard", "2", "--to", "node3"],
            2,
            "--at KEY or --at median",
        ),
    ];
    for (name, args, code, needle) in cases {
        let out = FLEET.cli(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{name} {args:?}: {err}");
        assert!(err.contains(needle), "{name} {args:?}: {err}");
    }
    assert_eq!(version(), before, "a refused split changed the directory");
    // A shard whose sharding column holds a single value cannot be split at its median.
    let mut n2 = connect(FLEET.sandbox(), "node2");
    FLEET
        .cli(&[
            "shard",
            "add",
            "--function",
            "r",
            "--node",
            "node2",
            "--lower-bound",
            "900000",
        ])
        .assert()
        .success();
    let snap = Directory::open(&inventory()).unwrap().load().unwrap();
    let single = snap
        .shards_of(snap.function("r").unwrap().id)
        .map(|s| s.id)
        .max()
        .unwrap();
    exec(
        &mut n2,
        &[&format!(
            "INSERT INTO rdb_{single}.items VALUES (900000, 1), (900000, 2), (900000, 3)"
        )],
    );
    let before = version();
    FLEET
        .cli(&[
            "split",
            "--shard",
            &single.to_string(),
            "--to",
            "node3",
            "--at",
            "median",
        ])
        .assert()
        .code(5)
        .stderr(predicate::str::contains("holds a single value"));
    assert_eq!(version(), before, "a refused split changed the directory");
    // A shard under another operation.
    FLEET
        .cli(&["lock", "--shard", &single.to_string()])
        .assert()
        .success();
    FLEET
        .cli(&[
            "split",
            "--shard",
            &single.to_string(),
            "--to",
            "node3",
            "--at",
            "900001",
        ])
        .assert()
        .code(5)
        .stderr(predicate::str::contains("under operation"));
    FLEET
        .cli(&["unlock", "--shard", &single.to_string()])
        .assert()
        .success();
    // A hash arc too small to split: a point just before an existing one takes an arc of
    // one hash value from its neighbour (a point anywhere else would take rows with it,
    // which `shard add` refuses).
    let snap = Directory::open(&inventory()).unwrap().load().unwrap();
    let h = snap.function("h").unwrap().id;
    let next = snap
        .points
        .iter()
        .filter(|p| p.func_id == h)
        .map(|p| u128::from_str_radix(&p.point.to_hex(), 16).unwrap())
        .min()
        .unwrap();
    let point = format!("{:032x}", next - 1);
    FLEET
        .cli(&[
            "shard",
            "add",
            "--function",
            "h",
            "--node",
            "node1",
            "--point",
            &point,
        ])
        .assert()
        .success();
    let snap = Directory::open(&inventory()).unwrap().load().unwrap();
    let tiny = snap
        .points
        .iter()
        .find(|p| p.point.to_hex() == point)
        .unwrap()
        .shard_id;
    let v = version();
    FLEET
        .cli(&["split", "--shard", &tiny.to_string(), "--to", "node3"])
        .assert()
        .code(5)
        .stderr(predicate::str::contains("too small to split"));
    assert_eq!(version(), v);
}

#[test]
fn a_range_shard_splits_onto_its_own_node_under_load() {
    FLEET.sandbox();
    let _s = serial();
    let snap = Directory::open(&inventory()).unwrap().load().unwrap();
    let shard = snap
        .shards_of(snap.function("r").unwrap().id)
        .find(|s| s.node == "node2")
        .unwrap()
        .clone();
    let lower = match shardctl::directory::coverage(&snap, snap.function("r").unwrap(), shard.id) {
        shardctl::directory::Coverage::Range {
            lower: Key::Int(l), ..
        } => l,
        other => panic!("{other:?}"),
    };
    let at = (lower + 250).to_string();
    let new = split_under_workload(
        "r",
        "rdb",
        &[
            "split",
            "--shard",
            &shard.id.to_string(),
            "--to",
            "node2",
            "--at",
            &at,
        ],
    );
    let snap = Directory::open(&inventory()).unwrap().load().unwrap();
    assert_eq!(snap.shard(new).unwrap().node, "node2");
    let cov = shardctl::directory::coverage(&snap, snap.function("r").unwrap(), new);
    assert!(cov.to_string().starts_with(&format!("[{at}, ")), "{cov}");
}

/// A range function of integers `function` sharding the template schema `db` on node1,
/// whose `tables` are (name, sharding column, column definitions), and its one shard
/// there from 0 (empty).
fn one_shard_on_node1(function: &str, db: &str, tables: &[(&str, &str, &str)]) -> u32 {
    let mut n1 = connect(FLEET.sandbox(), "node1");
    exec(&mut n1, &[&format!("CREATE DATABASE {db}")]);
    FLEET
        .cli(&[
            "function", "add", function, "--type", "range", "--key", "int",
        ])
        .assert()
        .success();
    for (table, column, columns) in tables {
        exec(
            &mut n1,
            &[&format!("CREATE TABLE {db}.{table} ({columns})")],
        );
        FLEET
            .cli(&[
                "table",
                "add",
                &format!("{db}.{table}"),
                "--function",
                function,
                "--column",
                column,
            ])
            .assert()
            .success();
    }
    common::add_shard_on(&FLEET.inventory_path(), function, "node1", "0")
}

/// `split` of `shard` at key 100 onto node1 (its own node), the process crashed at `point`.
fn split_onto_node1_crashing_at(shard: u32, point: &str) {
    let out = FLEET
        .cli(&[
            "split",
            "--shard",
            &shard.to_string(),
            "--to",
            "node1",
            "--at",
            "100",
        ])
        .env("SHARDCTL_FAULT", format!("crash@{point}"))
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(&format!("fault point {point}")),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A split onto the shard's own node is kept current by the change stream, which applies
/// the rows the source's triggers wrote: its copy gets the triggers only once the stream
/// stopped under the fence, so each trigger's row is there once, and the trigger itself
/// is there after the split. Writes land between the copy and the cut-over (the split
/// crashes once its stream started, the rows change, and `resume` streams them).
#[test]
fn a_split_onto_its_own_node_carries_rows_its_triggers_wrote_once() {
    let sb = FLEET.sandbox();
    let _s = serial();
    let mut n1 = connect(sb, "node1");
    let shard = one_shard_on_node1(
        "tgf",
        "tg",
        &[
            ("acct", "id", "id INT NOT NULL PRIMARY KEY, bal INT NOT NULL"),
            ("acct_log", "acct_id", "id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, acct_id INT NOT NULL, delta INT NOT NULL"),
        ],
    );
    let schema = format!("tg_{shard}");
    let mut sqls = vec![format!(
        "CREATE TRIGGER {schema}.acct_logged AFTER UPDATE ON {schema}.acct FOR EACH ROW INSERT INTO {schema}.acct_log (acct_id, delta) VALUES (NEW.id, NEW.bal - OLD.bal)"
    )];
    sqls.extend((0..200).map(|i| format!("INSERT INTO {schema}.acct VALUES ({i}, 0)")));
    exec(
        &mut n1,
        &sqls.iter().map(String::as_str).collect::<Vec<_>>(),
    );

    split_onto_node1_crashing_at(shard, "after:start-replication");
    // Each update fires the trigger on the source: one log row each, streamed as rows.
    let updates: Vec<String> = (0..200)
        .step_by(7)
        .map(|i| format!("UPDATE {schema}.acct SET bal = bal + 5 WHERE id = {i}"))
        .collect();
    exec(
        &mut n1,
        &updates.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    let op = Directory::open(&inventory())
        .unwrap()
        .operations(None)
        .unwrap()
        .into_iter()
        .map(|o| o.id)
        .max()
        .unwrap();
    FLEET.cli(&["resume", &op.to_string()]).assert().success();

    let snap = Directory::open(&inventory()).unwrap().load().unwrap();
    let new = snap
        .shards_of(snap.function("tgf").unwrap().id)
        .map(|s| s.id)
        .find(|id| *id != shard)
        .unwrap();
    let new_schema = format!("tg_{new}");
    let log_rows = |s: &mut shardctl::server::Server, db: &str| {
        count(s, &format!("SELECT COUNT(*) FROM {db}.acct_log"))
    };
    // Pruned: each half keeps its own keys' log rows, one per update.
    let expected_low = (0..100).step_by(7).count() as i64;
    let expected_high = (0..200).step_by(7).filter(|i| *i >= 100).count() as i64;
    assert_eq!(
        log_rows(&mut n1, &schema),
        expected_low,
        "the old shard's log"
    );
    assert_eq!(
        log_rows(&mut n1, &new_schema),
        expected_high,
        "the new shard's log"
    );
    let triggers = count(
        &mut n1,
        &format!("SELECT COUNT(*) FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = '{new_schema}' AND TRIGGER_NAME = 'acct_logged'"),
    );
    assert_eq!(triggers, 1, "the new shard has the trigger");
    // And it fires there: a change to a key of the new shard logs once.
    exec(
        &mut n1,
        &[&format!(
            "UPDATE {new_schema}.acct SET bal = bal + 1 WHERE id = 150"
        )],
    );
    assert_eq!(log_rows(&mut n1, &new_schema), expected_high + 1);
}

/// A split onto its own node whose fence went down after its triggers' creation began is
/// copied again on `resume`; the new copy is brought forward from its own position, never
/// from the old stream's checkpoint (which would apply the writes made since the fence
/// went down a second time: the stream would stop on rows the new copy already holds).
#[test]
fn a_split_copied_again_on_its_own_node_streams_from_the_new_copy() {
    let sb = FLEET.sandbox();
    let _s = serial();
    let mut n1 = connect(sb, "node1");
    let shard = one_shard_on_node1(
        "rcf",
        "rc",
        &[("items", "id", "id INT NOT NULL PRIMARY KEY, v INT NOT NULL")],
    );
    let schema = format!("rc_{shard}");
    let rows: Vec<String> = (0..200)
        .map(|i| format!("INSERT INTO {schema}.items VALUES ({i}, 0)"))
        .collect();
    exec(
        &mut n1,
        &rows.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    split_onto_node1_crashing_at(shard, "journaled:create-triggers");
    let mut dir = Directory::open(&inventory()).unwrap();
    let rec = dir
        .operations(None)
        .unwrap()
        .into_iter()
        .max_by_key(|o| o.id)
        .unwrap();
    // The fence goes down while no one runs the split (by hand, as an operator might):
    // its tables back under their names, and written again.
    let fenced: Vec<(String, String, String)> = serde_json::from_value(
        rec.last_effect("raise-fence").unwrap().detail["fenced_tables"].clone(),
    )
    .unwrap();
    for (s, table, hidden) in &fenced {
        exec(
            &mut n1,
            &[&format!("RENAME TABLE {s}.{hidden} TO {s}.{table}")],
        );
    }
    exec(
        &mut n1,
        &[
            &format!("INSERT INTO {schema}.items VALUES (1000, 1), (1001, 1), (1002, 1)"),
            &format!("UPDATE {schema}.items SET v = 2 WHERE id = 150"),
        ],
    );
    let out = FLEET
        .cli(&["resume", &rec.id.to_string()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let snap = Directory::open(&inventory()).unwrap().load().unwrap();
    let new = snap
        .shards_of(snap.function("rcf").unwrap().id)
        .map(|s| s.id)
        .find(|id| *id != shard)
        .unwrap();
    let new_schema = format!("rc_{new}");
    assert_eq!(
        count(&mut n1, &format!("SELECT COUNT(*) FROM {new_schema}.items")),
        103,
        "the new shard's keys, the rows written since the fence went down included"
    );
    assert_eq!(
        count(
            &mut n1,
            &format!("SELECT v FROM {new_schema}.items WHERE id = 150")
        ),
        2
    );
    assert_eq!(
        count(&mut n1, &format!("SELECT COUNT(*) FROM {schema}.items")),
        100
    );
}
