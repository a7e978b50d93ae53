//! Per-key functions (issue 30, item 1) on real servers: one directory row per key,
//! lookups by that row, the least-loaded assignment of new keys (atomic across racing
//! processes), bulk import with bad input refused, and the Router's bounded cache of keys
//! following the change log.

mod common;

use common::{serial, FleetSetup, SharedFleet};
use shardctl::config::Inventory;
use shardctl::directory::{Directory, Key, Reload, Router};
use shardctl::sandbox::Sandbox;
use shardctl::server::Stmt;
use std::collections::BTreeMap;

static FLEET: SharedFleet = SharedFleet::new(2, set_up);

/// Function `pk` (per-key, integer keys) over `pdb.items`, shards 1 and 2 on node1 and 3
/// on node2, no key mapped; function `ps` (per-key, string keys) with shard 4 on node2.
fn set_up(sb: &Sandbox) {
    FleetSetup::new()
        .nodes(&["node1", "node2"])
        .schema(&[
            "CREATE DATABASE pdb",
            "CREATE TABLE pdb.items (k BIGINT NOT NULL PRIMARY KEY, note VARCHAR(20) NULL)",
            "CREATE DATABASE psdb",
            "CREATE TABLE psdb.items (k VARBINARY(255) NOT NULL PRIMARY KEY)",
        ])
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
