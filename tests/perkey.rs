//! Per-key functions (issue 30, item 1) on real servers: one directory row per key,
//! lookups by that row, the least-loaded assignment of new keys (atomic across racing
//! processes), bulk import with bad input refused, the Router's bounded cache of keys
//! following the change log, and keys moving with their rows (`move-keys`: under the
//! workload, a stale router refused by the donor; bad requests refused; the dry run's
//! statements those of the live run) and the prune of a per-key shard.

mod common;

use common::{connect, items_schema, serial, FleetSetup, KeyKind, SharedFleet};
use shardctl::config::Inventory;
use shardctl::directory::{Directory, Key, Reload, Router};
use shardctl::sandbox::Sandbox;
use shardctl::server::Stmt;
use std::collections::BTreeMap;

static FLEET: SharedFleet = SharedFleet::new(2, set_up);

/// Function `pk` (per-key, integer keys) over `pdb.items`, shards 1 and 2 on node1 and 3
/// on node2, no key mapped; function `ps` (per-key, string keys) with shard 4 on node2;
/// function `mk` (per-key, integer keys) over `mdb.items` and `mdb.shardctl_workload`,
/// shard 5 on node1 and 6 on node2, whose keys move.
fn set_up(sb: &Sandbox) {
    let mut schema: Vec<String> = [
        "CREATE DATABASE pdb",
        "CREATE TABLE pdb.items (k BIGINT NOT NULL PRIMARY KEY, note VARCHAR(20) NULL)",
        "CREATE DATABASE psdb",
        "CREATE TABLE psdb.items (k VARBINARY(255) NOT NULL PRIMARY KEY)",
    ]
    .map(String::from)
    .to_vec();
    schema.extend(items_schema("mdb", KeyKind::Int, false, false));
    FleetSetup::new()
        .nodes(&["node1", "node2"])
        .schema(&schema)
        .build(sb);
    let inv = sb.inventory_path();
    let run = |args: &[&str]| {
        common::cli_on(&inv, args).assert().success();
    };
    run(&["function", "add", "pk", "--type", "key", "--key", "int"]);
    run(&[
        "table",
        "add",
        "pdb.items",
        "--function",
        "pk",
        "--column",
        "k",
    ]);
    for node in ["node1", "node1", "node2"] {
        run(&["shard", "add", "--function", "pk", "--node", node]);
    }
    run(&["function", "add", "ps", "--type", "key", "--key", "string"]);
    run(&[
        "table",
        "add",
        "psdb.items",
        "--function",
        "ps",
        "--column",
        "k",
    ]);
    run(&["shard", "add", "--function", "ps", "--node", "node2"]);
    run(&["function", "add", "mk", "--type", "key", "--key", "int"]);
    for table in ["mdb.items", "mdb.shardctl_workload"] {
        run(&["table", "add", table, "--function", "mk", "--column", "k"]);
    }
    for node in ["node1", "node2"] {
        run(&["shard", "add", "--function", "mk", "--node", node]);
    }
}

fn inventory() -> Inventory {
    common::inventory(FLEET.sandbox())
}

fn dir() -> Directory {
    Directory::open(&inventory()).unwrap()
}

/// Every mapped key of function `name` with its shard, read from `key_shards`.
fn key_rows(name: &str) -> BTreeMap<String, u32> {
    let inv = inventory();
    let mut d = Directory::open(&inv).unwrap();
    let func = d.load().unwrap().function(name).unwrap().id;
    d.server()
        .rows(&Stmt::with(
            format!(
                "SELECT key_value, shard_id FROM `{}`.key_shards WHERE func_id = ?",
                inv.file.directory.schema
            ),
            vec![func.into()],
        ))
        .unwrap()
        .into_iter()
        .map(|r| {
            let (k, s): (Vec<u8>, u32) = mysql::from_row(r);
            (String::from_utf8(k).unwrap(), s)
        })
        .collect()
}

/// The key counts kept with the keys equal the keys' rows, shard by shard.
fn assert_counts_match(name: &str) {
    let rows = key_rows(name);
    let mut d = dir();
    let func = d.load().unwrap().function(name).unwrap().id;
    let mut actual: BTreeMap<u32, u64> = BTreeMap::new();
    for s in rows.values() {
        *actual.entry(*s).or_default() += 1;
    }
    for (shard, kept) in d.key_counts(func).unwrap() {
        assert_eq!(
            kept,
            actual.get(&shard).copied().unwrap_or(0),
            "{name}: shard {shard}'s kept count"
        );
    }
}

fn json(args: &[&str]) -> serde_json::Value {
    FLEET.json(args)
}

#[test]
fn assigned_keys_go_to_the_least_loaded_open_shard_and_lookups_read_their_row() {
    FLEET.sandbox();
    let _s = serial();
    let counts = || -> BTreeMap<u32, u64> {
        let mut d = dir();
        let func = d.load().unwrap().function("pk").unwrap().id;
        d.key_counts(func).unwrap().into_iter().collect()
    };
    // Keys 1000..1011, each to the shard with the fewest keys then (the lowest id on a
    // tie), whatever the other tests left.
    let mut expected = counts();
    let mut keys = vec!["keys", "assign", "--function", "pk"];
    let texts: Vec<String> = (1000..1012).map(|k| k.to_string()).collect();
    keys.extend(texts.iter().map(String::as_str));
    let doc = json(&keys);
    for row in doc["keys"].as_array().unwrap() {
        let least = *expected
            .iter()
            .min_by_key(|(shard, n)| (**n, **shard))
            .unwrap()
            .0;
        assert_eq!(
            row["shard"].as_u64(),
            Some(u64::from(least)),
            "{row}: {expected:?}"
        );
        assert_eq!(row["assigned"], true, "{row}");
        *expected.get_mut(&least).unwrap() += 1;
    }
    assert_eq!(counts(), expected, "the kept counts moved by one a key");
    for row in doc["keys"].as_array().unwrap() {
        let key = row["key"].as_str().unwrap();
        let shard = row["shard"].as_u64().unwrap();
        // `lookup` reads the key's row: the same shard, its node and schemas.
        let found = json(&["lookup", "--function", "pk", key]);
        assert_eq!(found["shard"].as_u64(), Some(shard), "{key}: {found}");
        let schema = format!("pdb_{shard}");
        assert!(
            found.to_string().contains(&schema),
            "{key}: the route names {schema}: {found}"
        );
    }
    // Assigning again changes nothing: the shard it has.
    let again = json(&["keys", "assign", "--function", "pk", "1000"]);
    assert_eq!(again["keys"][0]["assigned"], false);
    assert_eq!(again["keys"][0]["shard"], doc["keys"][0]["shard"]);
    // A key never assigned has no shard: a usage error that says what to do.
    let out = FLEET
        .cli(&["lookup", "--function", "pk", "99999"])
        .assert()
        .code(2)
        .get_output()
        .stderr
        .clone();
    let err = String::from_utf8_lossy(&out);
    assert!(
        err.contains("not mapped") && err.contains("keys assign"),
        "{err}"
    );
    // A shard closed to writes takes no new key.
    let closed = doc["keys"][0]["shard"].as_u64().unwrap().to_string();
    FLEET
        .cli(&["shard", "set-availability", "--shard", &closed, "no-writes"])
        .assert()
        .success();
    let more: Vec<String> = (2000..2009).map(|k| k.to_string()).collect();
    let mut args = vec!["keys", "assign", "--function", "pk"];
    args.extend(more.iter().map(String::as_str));
    let doc = json(&args);
    for row in doc["keys"].as_array().unwrap() {
        assert_ne!(row["shard"].as_u64().unwrap().to_string(), closed, "{row}");
    }
    FLEET
        .cli(&["shard", "set-availability", "--shard", &closed, "available"])
        .assert()
        .success();
    assert_counts_match("pk");
}

/// Two processes assign the same 300 keys at once, in opposite orders: every key gets one
/// shard, both processes report that shard, exactly one of them assigned it, and the kept
/// counts equal the rows.
#[test]
fn two_racing_processes_never_assign_a_key_twice() {
    FLEET.sandbox();
    let _s = serial();
    let keys: Vec<String> = (0..300).map(|k| format!("race-{k}")).collect();
    let reversed: Vec<String> = keys.iter().rev().cloned().collect();
    let inv = FLEET.inventory_path();
    let spawn = |keys: &[String]| {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_shardctl"));
        cmd.arg("--config")
            .arg(&inv)
            .args(["--output", "json", "keys", "assign", "--function", "ps"])
            .args(keys)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        cmd.spawn().unwrap()
    };
    let (a, b) = (spawn(&keys), spawn(&reversed));
    let outs = [a.wait_with_output().unwrap(), b.wait_with_output().unwrap()];
    let mut shards: BTreeMap<String, Vec<(u64, bool)>> = BTreeMap::new();
    for out in &outs {
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        for row in doc["keys"].as_array().unwrap() {
            shards
                .entry(row["key"].as_str().unwrap().to_string())
                .or_default()
                .push((
                    row["shard"].as_u64().unwrap(),
                    row["assigned"].as_bool().unwrap(),
                ));
        }
    }
    let rows = key_rows("ps");
    assert_eq!(shards.len(), 300);
    for (key, answers) in &shards {
        assert_eq!(answers.len(), 2, "{key}");
        assert_eq!(answers[0].0, answers[1].0, "{key}: two shards {answers:?}");
        assert_eq!(
            answers.iter().filter(|a| a.1).count(),
            1,
            "{key}: assigned by exactly one process: {answers:?}"
        );
        assert_eq!(rows.get(key).map(|s| u64::from(*s)), Some(answers[0].0));
    }
    assert_counts_match("ps");
}

fn write(dir: &std::path::Path, name: &str, text: &str) -> std::path::PathBuf {
    common::write_file(dir, name, text)
}

#[test]
fn an_import_maps_every_key_once_and_bad_input_changes_nothing() {
    FLEET.sandbox();
    let _s = serial();
    let tmp = tempfile::tempdir().unwrap();
    // 5,000 keys over shards 1, 2, 3, in batches of 700 and changes of 2,000 keys.
    let mut text = String::new();
    for k in 0..5000i64 {
        let key = 1_000_000 + k;
        text.push_str(&format!("{key},{}\n", 1 + k % 3));
        if k == 10 {
            text.push('\n');
        }
    }
    let file = write(tmp.path(), "keys.csv", &text);
    let file_s = file.to_str().unwrap();
    let import = |path: &str| {
        json(&[
            "keys",
            "import",
            "--function",
            "pk",
            "--file",
            path,
            "--batch",
            "700",
            "--chunk",
            "2000",
        ])
    };
    let version = || dir().version().unwrap();
    let v0 = version();
    let doc = import(file_s);
    assert_eq!(
        (doc["read"].as_u64(), doc["added"].as_u64()),
        (Some(5000), Some(5000))
    );
    assert_eq!(version(), v0 + 3, "three changes of at most 2,000 keys");
    let rows = key_rows("pk");
    for k in 0..5000i64 {
        assert_eq!(rows[&(1_000_000 + k).to_string()], 1 + (k % 3) as u32);
    }
    assert_counts_match("pk");
    // Run again: nothing to add, no change at all.
    let doc = import(file_s);
    assert_eq!(
        (doc["added"].as_u64(), doc["present"].as_u64()),
        (Some(0), Some(5000))
    );
    assert_eq!(version(), v0 + 3);
    // The Router reads the imported keys one row each.
    let router = Router::connect(&inventory()).unwrap();
    for k in [0i64, 1, 4999] {
        let s = router
            .shard_for_function("pk", &Key::Int(1_000_000 + k))
            .unwrap();
        assert_eq!(s.id, 1 + (k % 3) as u32);
    }

    // Bad input: refused with the culprit's line, nothing changed.
    let good: String = (0..20).map(|k| format!("{},1\n", 3_000_000 + k)).collect();
    let cases: [(&str, String, &str); 5] = [
        (
            "not a number",
            format!("{good}abc,1\n"),
            "line 21: key \"abc\" is not an integer",
        ),
        ("no shard", format!("{good}3000100\n"), "line 21:"),
        (
            "a shard of another function",
            format!("{good}3000100,4\n"),
            "line 21: shard 4 is not a shard of function pk",
        ),
        (
            "a key given twice",
            format!("{good}3000005,2\n"),
            "line 21: key 3000005 is given again (first on line 6)",
        ),
        (
            "a key mapped elsewhere",
            format!("{good}1000000,2\n"),
            "line 21: key 1000000 is mapped to shard 1 already",
        ),
    ];
    let before = key_rows("pk");
    for (what, text, expected) in cases {
        let path = write(tmp.path(), "bad.csv", &text);
        let out = FLEET
            .cli(&[
                "keys",
                "import",
                "--function",
                "pk",
                "--file",
                path.to_str().unwrap(),
            ])
            .assert()
            .failure()
            .get_output()
            .stderr
            .clone();
        let err = String::from_utf8_lossy(&out);
        assert!(err.contains(expected), "{what}: {err}");
        assert!(err.contains("nothing imported"), "{what}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{what}: one line: {err}");
        assert_eq!(version(), v0 + 3, "{what}: the directory changed");
    }
    assert_eq!(key_rows("pk"), before, "no key imported from a bad file");
}

/// A router caches the keys it read; a key given to another shard stays stale until the
/// router checks the version, and then only that key is dropped and read again.
#[test]
fn a_router_drops_only_the_keys_the_log_names() {
    FLEET.sandbox();
    let _s = serial();
    let inv = inventory();
    let mut d = Directory::open(&inv).unwrap();
    let func = d.load().unwrap().function("pk").unwrap().clone();
    let keys: Vec<Key> = (5000..5010).map(Key::Int).collect();
    for k in &keys {
        d.assign_key(&func, k).unwrap();
    }
    let mut router = Router::connect(&inv).unwrap();
    let first: Vec<u32> = keys
        .iter()
        .map(|k| router.shard_for_function("pk", k).unwrap().id)
        .collect();
    let cold = router.key_cache();
    assert_eq!((cold.entries, cold.misses, cold.hits), (10, 10, 0));
    for k in &keys {
        router.shard_for_function("pk", k).unwrap();
    }
    assert_eq!(router.key_cache().hits, 10, "warm lookups read nothing");
    // Key 5000 goes to another shard (the flip of a key move: one change naming it).
    let to = if first[0] == 3 { 1 } else { 3 };
    let moved = d.reassign_keys(&func, &keys[..1], to).unwrap();
    assert_eq!(moved, vec![(keys[0].clone(), first[0])]);
    assert_eq!(
        router.shard_for_function("pk", &keys[0]).unwrap().id,
        first[0],
        "stale until the version check"
    );
    assert!(router.refresh().unwrap());
    match router.last_reload().unwrap() {
        Reload::Incremental {
            shards,
            keys_dropped,
            rows,
            ..
        } => {
            assert!(shards.is_empty(), "no shard re-read: {shards:?}");
            assert_eq!(*keys_dropped, 1);
            // The version twice and the log's one row: nothing of the map.
            assert_eq!(*rows, 3);
        }
        other => panic!("a key move re-reads the key, not the directory: {other:?}"),
    }
    let misses = router.key_cache().misses;
    assert_eq!(router.shard_for_function("pk", &keys[0]).unwrap().id, to);
    for (k, s) in keys.iter().zip(&first).skip(1) {
        assert_eq!(router.shard_for_function("pk", k).unwrap().id, *s);
    }
    assert_eq!(
        router.key_cache().misses,
        misses + 1,
        "only the moved key was read again"
    );
    assert_counts_match("pk");

    // A bounded cache: 10 keys at most, whatever was read.
    for k in 6000..6100 {
        d.assign_key(&func, &Key::Int(k)).unwrap();
    }
    router.set_key_cache_capacity(10);
    for k in 6000..6100i64 {
        router.shard_for_function("pk", &Key::Int(k)).unwrap();
        assert!(router.key_cache().entries <= 10);
    }
    // An import (more keys than a log row lists) drops every cached key of the function.
    let tmp = tempfile::tempdir().unwrap();
    let text: String = (0..1500)
        .map(|k| format!("{},2\n", 7_000_000 + k))
        .collect();
    let file = common::write_file(tmp.path(), "more.csv", &text);
    FLEET
        .cli(&[
            "keys",
            "import",
            "--function",
            "pk",
            "--file",
            file.to_str().unwrap(),
        ])
        .assert()
        .success();
    assert!(router.key_cache().entries > 0);
    assert!(router.refresh().unwrap());
    assert_eq!(router.key_cache().entries, 0, "{:?}", router.last_reload());
}

/// A per-key shard that keys still map to is not removed: one line naming it and how many
/// keys, exit 5, and the directory unchanged (it used to fail with the server's raw
/// foreign-key error).
#[test]
fn a_per_key_shard_with_keys_mapped_is_not_removed() {
    let _s = serial();
    let inv = FLEET.inventory_path();
    common::cli_on(
        &inv,
        &["keys", "assign", "--function", "ps", "kept-by-shard-4"],
    )
    .assert()
    .success();
    let before = dir().version().unwrap();
    let out = common::cli_on(&inv, &["shard", "remove", "--shard", "4"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(5), "{out:?}");
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(said.trim().lines().count(), 1, "{said}");
    assert!(
        said.contains("shard 4 still has") && said.contains("keys of its per-key function"),
        "{said}"
    );
    assert_eq!(dir().version().unwrap(), before, "nothing changed");
    assert!(dir().load().unwrap().shard(4).is_ok());
    assert_eq!(key_rows("ps").get("kept-by-shard-4"), Some(&4));
}

/// Maps keys `keys` of function `mk` to `shard` (an import) and writes `rows` rows of
/// `items` for each on that shard.
fn mk_keys_with_rows(keys: std::ops::RangeInclusive<i64>, shard: u32, rows: i64) {
    let tmp = tempfile::tempdir().unwrap();
    let text: String = keys.clone().map(|k| format!("{k},{shard}\n")).collect();
    let file = write(tmp.path(), "mk.csv", &text);
    FLEET
        .cli(&[
            "keys",
            "import",
            "--function",
            "mk",
            "--file",
            file.to_str().unwrap(),
        ])
        .assert()
        .success();
    let node = if shard == 5 { "node1" } else { "node2" };
    let mut s = connect(FLEET.sandbox(), node);
    s.exec(&Stmt::text(format!(
        "INSERT INTO mdb_{shard}.items SELECT k.seq, n.seq FROM mdb_{shard}.seq_{}_to_{} k, mdb_{shard}.seq_1_to_{rows} n",
        keys.start(),
        keys.end()
    )))
    .unwrap();
}

/// The last JSON line a command printed (its summary), the command having succeeded.
fn summary(args: &[&str]) -> serde_json::Value {
    let out = FLEET
        .cli(&[&["--output", "json"][..], args].concat())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    serde_json::from_str(text.lines().last().unwrap()).unwrap()
}

fn node_of(shard: u32) -> &'static str {
    if shard == 5 {
        "node1"
    } else {
        "node2"
    }
}

fn count_on(shard: u32, sql: &str) -> i64 {
    let mut s = connect(FLEET.sandbox(), node_of(shard));
    common::count(&mut s, &sql.replace("{s}", &format!("mdb_{shard}")))
}

/// A write of key `k` straight into shard `shard`'s `items`: Ok, or the server's error
/// code and message.
fn insert(shard: u32, k: i64, n: i64) -> Result<(), (u16, String)> {
    let mut s = connect(FLEET.sandbox(), node_of(shard));
    match s.exec(&Stmt::text(format!(
        "INSERT INTO mdb_{shard}.items (k, n) VALUES ({k}, {n})"
    ))) {
        Ok(_) => Ok(()),
        Err(shardctl::Error::Server { message, .. }) => {
            let code = message
                .strip_prefix("error ")
                .and_then(|m| m.split(' ').next())
                .and_then(|c| c.parse().ok())
                .unwrap_or_else(|| panic!("{message}"));
            Err((code, message))
        }
        Err(e) => panic!("{e}"),
    }
}

/// Keys 1 to 3 of shard 5 (100 rows each) go to shard 6 on the other node under a write
/// workload of fresh and stale routers: every acknowledged write is where the directory
/// says, the rows follow their keys, the donor's other keys stay; a router that cached
/// the keys before the move is refused by the donor's guards (error 1644, "re-read the
/// directory") and, refreshed, routes to the receiver, as a fresh router does.
#[test]
fn per_key_keys_move_with_their_rows_under_load_and_a_stale_router_is_refused() {
    FLEET.sandbox();
    let _s = serial();
    mk_keys_with_rows(1..=20, 5, 100);
    mk_keys_with_rows(101..=120, 6, 100);
    let inv = inventory();
    let mut stale = Router::connect(&inv).unwrap();
    for k in 1..=3 {
        assert_eq!(stale.shard_for_function("mk", &Key::Int(k)).unwrap().id, 5);
    }
    let keys: Vec<Key> = [1, 2, 3, 4, 5, 101].map(Key::Int).to_vec();
    let running: Vec<(shardctl::workload::Running, &str)> = [("fresh", false), ("stale", true)]
        .into_iter()
        .map(|(name, stale_router)| {
            let w = shardctl::workload::spawn(
                inventory(),
                shardctl::workload::Options {
                    rate: 150,
                    stale_router,
                    keys: Some(keys.clone()),
                    ..shardctl::workload::Options::new("mk")
                },
            )
            .unwrap();
            (w, name)
        })
        .collect();
    std::thread::sleep(std::time::Duration::from_millis(700));
    let version = dir().version().unwrap();
    let doc = summary(&[
        "move-keys",
        "--function",
        "mk",
        "--keys",
        "1,2,3",
        "--to-shard",
        "6",
    ]);
    assert_eq!(doc["outcome"].as_str(), Some("moved_keys"), "{doc}");
    println!(
        "per-key move of 3 keys under the workload: {} rows copied, key fence {} ms",
        doc["copied_rows"], doc["fence_ms"]
    );
    std::thread::sleep(std::time::Duration::from_millis(700));
    for (w, name) in running {
        let mut report = w.stop().unwrap();
        let check = report.check(&inventory(), "mk").unwrap();
        assert!(check.missing.is_empty(), "{name}: lost {:?}", check.missing);
        assert_eq!(
            report.wrong_shard_writes, 0,
            "{name}: {:?}",
            check.wrong_shard
        );
        assert!(report.acked > 50, "{name}: the workload ran");
    }
    let rows = key_rows("mk");
    for k in 1..=3 {
        assert_eq!(rows[&k.to_string()], 6, "key {k}");
    }
    assert_eq!(rows["4"], 5);
    assert_counts_match("mk");
    // The flip is one change that names the keys: routers drop only those.
    let mut d = dir();
    let flip: Vec<(u64, String, Option<String>)> = d
        .server()
        .rows(&Stmt::with(
            format!(
                "SELECT version, scope, key_list FROM `{}`.directory_changes WHERE version > ? AND scope = 'keys'",
                inv.file.directory.schema
            ),
            vec![version.into()],
        ))
        .unwrap()
        .into_iter()
        .map(mysql::from_row)
        .collect();
    assert_eq!(flip.len(), 1, "{flip:?}");
    assert_eq!(flip[0].2.as_deref(), Some(r#"["1","2","3"]"#));
    // The rows followed their keys; the donor's other keys stayed.
    assert_eq!(
        count_on(
            6,
            "SELECT COUNT(*) FROM {s}.items WHERE k <= 3 AND n <= 100"
        ),
        300
    );
    assert_eq!(
        count_on(5, "SELECT COUNT(*) FROM {s}.items WHERE k <= 3"),
        0
    );
    assert_eq!(
        count_on(5, "SELECT COUNT(*) FROM {s}.shardctl_workload WHERE k <= 3"),
        0
    );
    assert_eq!(
        count_on(
            5,
            "SELECT COUNT(*) FROM {s}.items WHERE k BETWEEN 4 AND 20 AND n <= 100"
        ),
        1700
    );
    // The stale router still sends key 1 to shard 5, whose guards refuse it.
    assert_eq!(stale.shard_for_function("mk", &Key::Int(1)).unwrap().id, 5);
    let (code, message) = insert(5, 1, 1_000_001).unwrap_err();
    assert_eq!(code, 1644, "{message}");
    assert!(message.contains("re-read the directory"), "{message}");
    // The server's own message, as a driver gives it to the application.
    let said = &message[message.find("shardctl: ").unwrap_or(0)..];
    assert!(stale.refresh_after(code, said).unwrap(), "{message}");
    assert_eq!(stale.shard_for_function("mk", &Key::Int(1)).unwrap().id, 6);
    insert(6, 1, 1_000_001).unwrap();
    // The donor's other keys write as before; a fresh router routes the moved keys to 6.
    insert(5, 4, 1_000_001).unwrap();
    let fresh = Router::connect(&inv).unwrap();
    for k in 1..=3 {
        assert_eq!(fresh.shard_for_function("mk", &Key::Int(k)).unwrap().id, 6);
    }
    assert_eq!(fresh.shard_for_function("mk", &Key::Int(4)).unwrap().id, 5);
}

/// Bad per-key moves: one line, exit 2, the directory and both shards unchanged.
#[test]
fn bad_per_key_moves_are_refused_in_one_line_and_change_nothing() {
    FLEET.sandbox();
    let _s = serial();
    mk_keys_with_rows(201..=205, 5, 1);
    mk_keys_with_rows(301..=305, 6, 1);
    let before = (dir().version().unwrap(), key_rows("mk"));
    let rows = || {
        (
            count_on(5, "SELECT COUNT(*) FROM {s}.items"),
            count_on(6, "SELECT COUNT(*) FROM {s}.items"),
        )
    };
    let rows_before = rows();
    for (args, says) in [
        (
            vec!["--keys", "201,999999"],
            "key 999999 is not mapped by function mk",
        ),
        (
            vec!["--keys", "201,301"],
            "keys 201 and 301 belong to shards 5 and 6",
        ),
        (vec!["--keys", "301"], "shard 6 already owns key 301"),
        (
            vec!["--range", "1..5"],
            "give --keys K1,K2,... or --keys-file FILE",
        ),
    ] {
        let mut all = vec!["move-keys", "--function", "mk", "--to-shard", "6"];
        all.extend(args.iter().copied());
        let out = FLEET.cli(&all).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: one line: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    let out = FLEET
        .cli(&[
            "move-keys",
            "--function",
            "mk",
            "--keys",
            "201",
            "--to-shard",
            "1",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("shard 1 belongs to function pk, not mk"),
        "{err}"
    );
    assert_eq!((dir().version().unwrap(), key_rows("mk")), before);
    assert_eq!(rows(), rows_before);
}

/// A per-key shard's prune deletes the rows of the keys the directory maps to another
/// shard, chunk by chunk, and keeps its own keys' rows and those of keys mapped to no
/// shard; its dry run counts exactly what the prune then deletes.
#[test]
fn a_per_key_prune_deletes_the_rows_of_keys_mapped_elsewhere_only() {
    FLEET.sandbox();
    let _s = serial();
    mk_keys_with_rows(401..=430, 5, 40);
    mk_keys_with_rows(501..=510, 6, 1);
    // Shard 5 also holds rows of keys 501..510 (shard 6's) and of 90001..90003 (no shard's).
    let mut s = connect(FLEET.sandbox(), "node1");
    s.exec(&Stmt::text(
        "INSERT INTO mdb_5.items SELECT k.seq, n.seq FROM mdb_5.seq_501_to_510 k, mdb_5.seq_1_to_300 n",
    ))
    .unwrap();
    s.exec(&Stmt::text(
        "INSERT INTO mdb_5.items SELECT k.seq, 1 FROM mdb_5.seq_90001_to_90003 k",
    ))
    .unwrap();
    let own = count_on(
        5,
        "SELECT COUNT(*) FROM {s}.items WHERE k BETWEEN 401 AND 430",
    );
    let total = count_on(5, "SELECT COUNT(*) FROM {s}.items");
    let dry = json(&["prune", "--shard", "5", "--dry-run"]);
    let items = dry["tables"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["table"] == "mdb_5.items")
        .unwrap_or_else(|| panic!("{dry}"));
    assert_eq!(items["rows_to_delete"].as_u64(), Some(3000), "{dry}");
    assert!(
        items["statements"][0]
            .as_str()
            .unwrap()
            .starts_with("DELETE FROM `mdb_5`.`items` WHERE"),
        "{dry}"
    );
    assert_eq!(
        count_on(5, "SELECT COUNT(*) FROM {s}.items"),
        total,
        "the dry run deletes nothing"
    );
    FLEET
        .cli(&["prune", "--shard", "5", "--chunk-ms", "1"])
        .assert()
        .success();
    assert_eq!(
        count_on(
            5,
            "SELECT COUNT(*) FROM {s}.items WHERE k BETWEEN 501 AND 510"
        ),
        0
    );
    assert_eq!(
        count_on(
            5,
            "SELECT COUNT(*) FROM {s}.items WHERE k BETWEEN 401 AND 430"
        ),
        own
    );
    assert_eq!(
        count_on(5, "SELECT COUNT(*) FROM {s}.items WHERE k > 90000"),
        3,
        "keys mapped to no shard keep their rows"
    );
    assert_eq!(count_on(5, "SELECT COUNT(*) FROM {s}.items"), total - 3000);
    assert_eq!(
        count_on(
            6,
            "SELECT COUNT(*) FROM {s}.items WHERE k BETWEEN 501 AND 510"
        ),
        10
    );
}

/// `query` on a per-key function fans out to every shard of it: a count is the sum of the
/// shards' own counts.
#[test]
fn a_query_on_a_per_key_function_reads_every_shard() {
    FLEET.sandbox();
    let _s = serial();
    mk_keys_with_rows(701..=704, 5, 7);
    mk_keys_with_rows(801..=803, 6, 11);
    let expected = count_on(5, "SELECT COUNT(*) FROM {s}.items")
        + count_on(6, "SELECT COUNT(*) FROM {s}.items");
    let q = json(&[
        "query",
        "--function",
        "mk",
        "SELECT COUNT(*) AS n FROM {items}",
    ]);
    assert_eq!(q["rows"][0][0].as_i64(), Some(expected), "{q}");
    let q = json(&[
        "query",
        "--function",
        "mk",
        "SELECT k, COUNT(*) AS n FROM {items} WHERE k BETWEEN 701 AND 803 GROUP BY k",
    ]);
    let rows: Vec<(i64, i64)> = q["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r[0].as_i64().unwrap(), r[1].as_i64().unwrap()))
        .collect();
    let mut want: Vec<(i64, i64)> = (701..=704).map(|k| (k, 7)).collect();
    want.extend((801..=803).map(|k| (k, 11)));
    assert_eq!(rows, want, "{q}");
}

/// Replaces the digits that follow every `prefix` with `mark`.
fn mark_digits(text: &str, prefix: &str, mark: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find(prefix) {
        out.push_str(&rest[..i + prefix.len()]);
        rest = &rest[i + prefix.len()..];
        let digits = rest.chars().take_while(char::is_ascii_digit).count();
        if digits > 0 {
            out.push_str(mark);
            rest = &rest[digits..];
        }
    }
    out.push_str(rest);
    out
}

/// A statement without its bound values, the operation ids (and the switch id made of
/// one) marked.
fn normalize(sql: &str) -> String {
    let s = sql.split("  -- bind:").next().unwrap_or(sql).trim();
    let s = s.replace("<op>", "");
    let s = common::mask_directory_id(&s, "");
    let s = mark_digits(&s, "shardctl_op", "");
    mark_digits(&s, "`switches` WHERE id = ", "<switch>")
}

/// A per-key move's dry run prints, in order, exactly the statements the live run then
/// sends to the fleet's nodes for its own effects (reads and the copy's, the change
/// stream's and the prune's own sessions aside, as in tests/dry_run.rs).
#[test]
fn a_per_key_move_dry_run_prints_what_the_live_run_sends() {
    FLEET.sandbox();
    let _s = serial();
    mk_keys_with_rows(601..=605, 6, 20);
    let args = [
        "move-keys",
        "--function",
        "mk",
        "--keys",
        "601,602",
        "--to-shard",
        "5",
    ];
    let before = key_rows("mk");
    let out = FLEET
        .cli(&[&["--output", "json"][..], &args, &["--dry-run"]].concat())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let plan: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(key_rows("mk"), before, "the dry run changed the directory");
    let mut dry = Vec::new();
    for step in plan["plan"]["steps"].as_array().unwrap() {
        for a in step["actions"].as_array().unwrap() {
            let node = a["node"].as_str().unwrap();
            if node == "directory" {
                continue;
            }
            for st in a["statements"].as_array().unwrap() {
                let st = st.as_str().unwrap();
                if !st.ends_with("-- read-only") {
                    dry.push((node.to_string(), normalize(st)));
                }
            }
        }
    }
    let tmp = tempfile::tempdir().unwrap();
    let capture = tmp.path().join("capture.jsonl");
    FLEET
        .cli(&args)
        .env("SHARDCTL_CAPTURE", &capture)
        .assert()
        .success();
    let live: Vec<(String, String)> = std::fs::read_to_string(&capture)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<shardctl::server::Captured>(l).unwrap())
        .filter(|c| c.purpose == shardctl::server::Purpose::Ops)
        .filter(|c| {
            let head = c.sql.trim_start().to_ascii_uppercase();
            !(head.starts_with("SELECT")
                || head.starts_with("SHOW")
                || head.starts_with("CHECKSUM")
                || head == "SET SESSION TRANSACTION READ ONLY")
        })
        .map(|c| (c.node, normalize(&c.sql)))
        .collect();
    assert!(!live.is_empty(), "nothing captured");
    let show = |v: &[(String, String)]| {
        v.iter()
            .map(|(n, s)| format!("  [{n}] {s}"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert!(
        dry == live,
        "the dry run and the live run differ\n--- dry run\n{}\n--- live run\n{}",
        show(&dry),
        show(&live)
    );
    assert_eq!(key_rows("mk")["601"], 5);
    assert!(
        live.iter().any(|(_, s)| s.contains("shardctl_guard_")),
        "{}",
        show(&live)
    );
}

/// `shard list` and `status` show how many keys each per-key shard holds (the kept
/// counts), in JSON and in the table's `covers` column; other functions' shards have none.
#[test]
fn shard_list_and_status_show_the_key_counts_of_per_key_shards() {
    FLEET.sandbox();
    let _s = serial();
    mk_keys_with_rows(901..=907, 6, 1);
    let mut d = dir();
    let snap = d.load().unwrap();
    let mut expected: BTreeMap<u64, u64> = BTreeMap::new();
    for f in ["pk", "ps", "mk"] {
        let id = snap.function(f).unwrap().id;
        for (shard, n) in d.key_counts(id).unwrap() {
            expected.insert(u64::from(shard), n);
        }
    }
    assert!(expected[&6] >= 7, "{expected:?}");
    for (command, list) in [
        (vec!["shard", "list"], "shards"),
        (vec!["status"], "shards"),
    ] {
        let doc = json(&command);
        let shown: BTreeMap<u64, u64> = doc[list]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| (s["shard"].as_u64().unwrap(), s["keys"].as_u64().unwrap()))
            .collect();
        assert_eq!(shown, expected, "{command:?}: {doc}");
    }
    let table = FLEET.cli(&["shard", "list"]).output().unwrap();
    let text = String::from_utf8_lossy(&table.stdout);
    let line = text
        .lines()
        .find(|l| l.contains("mdb_6"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(line.contains(&format!("{} keys", expected[&6])), "{line}");
}

/// `keys import --from-query` maps the (key, shard) rows of a SELECT run on a node, as a
/// file's lines; a statement that writes is refused before anything is sent (exit 5), a
/// row naming a shard of another function refuses the whole import (exit 2), and in
/// either case nothing is imported.
#[test]
fn keys_are_imported_from_a_query_on_a_node() {
    FLEET.sandbox();
    let _s = serial();
    let mut s = connect(FLEET.sandbox(), "node1");
    common::exec(
        &mut s,
        &[
            "CREATE DATABASE mapsrc",
            "CREATE TABLE mapsrc.owners (user_id BIGINT NOT NULL PRIMARY KEY, shard INT NOT NULL)",
            "INSERT INTO mapsrc.owners SELECT seq, 5 + seq % 2 FROM mapsrc.seq_2001_to_2100",
            "CREATE TABLE mapsrc.bad (user_id BIGINT NOT NULL PRIMARY KEY, shard INT NOT NULL)",
            "INSERT INTO mapsrc.bad VALUES (2201, 5), (2202, 6), (2203, 1)",
        ],
    );
    let import = |sql: &str| {
        FLEET
            .cli(&[
                "--output",
                "json",
                "keys",
                "import",
                "--function",
                "mk",
                "--node",
                "node1",
                "--from-query",
                sql,
            ])
            .output()
            .unwrap()
    };
    let out = import("SELECT user_id, shard FROM mapsrc.owners ORDER BY user_id");
    assert!(out.status.success(), "{out:?}");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (doc["read"].as_u64(), doc["added"].as_u64()),
        (Some(100), Some(100)),
        "{doc}"
    );
    let rows = key_rows("mk");
    for k in 2001..=2100u32 {
        assert_eq!(rows[&k.to_string()], 5 + k % 2, "key {k}");
    }
    assert_counts_match("mk");
    let before = (dir().version().unwrap(), key_rows("mk"));
    for (sql, code, says) in [
        (
            "DELETE FROM mapsrc.owners",
            5,
            "query runs only SELECT statements",
        ),
        (
            "SELECT user_id, shard FROM mapsrc.bad ORDER BY user_id",
            2,
            "line 3: shard 1 is not a shard of function mk",
        ),
        (
            "SELECT user_id FROM mapsrc.bad",
            2,
            "row 1: the query returned 1 columns, not two",
        ),
    ] {
        let out = import(sql);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{sql}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{sql}: one line: {err}");
        assert!(err.contains(says), "{sql}: {err}");
    }
    assert_eq!(
        count_on(5, "SELECT COUNT(*) FROM mapsrc.owners"),
        100,
        "the refused DELETE was never sent"
    );
    assert_eq!((dir().version().unwrap(), key_rows("mk")), before);
}

/// A per-key move crashed under its key fence ends by `abort` (the keys stay the donor's,
/// the receiver's copies go, the donor writes them again); crashed right after its flip
/// it ends by `resume` (the flip seen in the keys' rows, the donor's rows of the keys
/// pruned and its guards refusing them). Meanwhile `query` counts every row once.
#[test]
fn a_per_key_move_crashed_ends_by_abort_before_its_flip_or_resume_after_it() {
    FLEET.sandbox();
    let _s = serial();
    mk_keys_with_rows(1001..=1010, 5, 10);
    let crashed = |at: &str| {
        FLEET
            .cli(&[
                "move-keys",
                "--function",
                "mk",
                "--keys",
                "1001,1002",
                "--to-shard",
                "6",
            ])
            .env("SHARDCTL_FAULT", format!("crash@after:{at}"))
            .assert()
            .failure();
        common::newest_op(&inventory()).unwrap().id
    };
    let moving = "SELECT COUNT(*) FROM {s}.items WHERE k IN (1001, 1002)";
    // `query` counts each row once while the move is unfinished: the receiver's copies
    // before the flip, the donor's rows after it, are left out.
    let queried = || {
        json(&[
            "query",
            "--function",
            "mk",
            "SELECT COUNT(*) AS n FROM {items} WHERE k IN (1001, 1002)",
        ])["rows"][0][0]
            .as_i64()
    };
    let op = crashed("lock");
    assert_eq!((count_on(5, moving), count_on(6, moving)), (20, 20));
    assert_eq!(queried(), Some(20), "the receiver's copies counted once");
    assert_eq!(insert(5, 1001, 5001).map_err(|e| e.0), Err(1644));
    assert_eq!(
        insert(5, 1003, 5001),
        Ok(()),
        "the donor's other keys write"
    );
    FLEET.cli(&["abort", &op.to_string()]).assert().success();
    assert_eq!(key_rows("mk")["1001"], 5, "nothing flipped");
    assert_eq!(insert(5, 1001, 5002), Ok(()));
    assert_eq!(count_on(6, moving), 0, "the receiver's copies are gone");
    assert_eq!(count_on(5, moving), 21);

    let op = crashed("flip");
    assert_eq!(key_rows("mk")["1001"], 6, "flipped before the crash");
    assert_eq!((count_on(5, moving), count_on(6, moving)), (21, 21));
    assert_eq!(
        queried(),
        Some(21),
        "the donor's unpruned rows counted once"
    );
    FLEET.cli(&["resume", &op.to_string()]).assert().success();
    assert_eq!(
        count_on(6, moving),
        21,
        "every row, the write between the two moves too"
    );
    assert_eq!(count_on(5, moving), 0, "pruned from the donor");
    assert_eq!(insert(5, 1002, 5003).map_err(|e| e.0), Err(1644));
    assert_eq!(insert(6, 1002, 5003), Ok(()));
    assert_counts_match("mk");
}
