//! The directory's change log and the Router's incremental refresh (issue 30, item 2):
//! every change writes its log row in its own transaction, a router re-reads only the
//! shards the log names and ends up with what a full read gives, and it falls back to a
//! full read when the log no longer reaches back to its version.

mod common;

use common::{range_hash_list_items, serial, SharedFleet};
use shardctl::config::Inventory;
use shardctl::directory::schema::CHANGE_LOG_KEPT;
use shardctl::directory::{Directory, FullReason, Reload, Router, Snapshot};
use shardctl::sandbox::Sandbox;
use shardctl::server::Stmt;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

static FLEET: SharedFleet = SharedFleet::new(3, set_up);

/// Functions r (range, shards 1 and 2), h (hash, 3 and 4) and l (list, 5 and 6) over the
/// `items` tables, each with an unsharded `kinds` table to map as global.
fn set_up(sb: &Sandbox) {
    range_hash_list_items(false, true).build(sb);
}

fn inventory() -> Inventory {
    common::inventory(FLEET.sandbox())
}

fn load() -> Snapshot {
    Directory::open(&inventory()).unwrap().load().unwrap()
}

/// The log's rows after `since`: (version, scope, shards).
fn log_after(since: u64) -> Vec<(u64, String, String)> {
    let inv = inventory();
    let mut d = Directory::open(&inv).unwrap();
    d.server()
        .rows(&Stmt::with(
            format!(
                "SELECT version, scope, shards FROM `{}`.directory_changes WHERE version > ? ORDER BY version",
                inv.file.directory.schema
            ),
            vec![since.into()],
        ))
        .unwrap()
        .into_iter()
        .map(mysql::from_row)
        .collect()
}

/// The shards whose location or mapping rows differ between two snapshots.
fn differing_shards(a: &Snapshot, b: &Snapshot) -> BTreeSet<u32> {
    let mut rows: BTreeMap<u32, (Vec<String>, Vec<String>)> = BTreeMap::new();
    for (i, s) in [a, b].into_iter().enumerate() {
        let mut put = |shard: u32, text: String| {
            let e = rows.entry(shard).or_default();
            if i == 0 { &mut e.0 } else { &mut e.1 }.push(text)
        };
        for x in &s.shards {
            put(x.id, format!("{x:?}"));
        }
        for x in &s.ranges {
            put(x.shard_id, format!("{x:?}"));
        }
        for x in &s.points {
            put(x.shard_id, format!("{x:?}"));
        }
        for x in &s.lists {
            put(x.shard_id, format!("{x:?}"));
        }
    }
    rows.into_iter()
        .filter(|(_, (a, b))| a != b)
        .map(|(id, _)| id)
        .collect()
}

/// How a router at the version before a step should follow it.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Follow {
    /// Re-reading the shards the step touched.
    Shards,
    /// Re-reading everything: the step changed nodes, functions or table mappings.
    Everything,
}

/// Every function of src/ that opens a directory change (`.change(|`), with the step of
/// [`every_change_is_logged_and_a_router_follows_it_shard_by_shard`] that runs it.
const CHANGE_SITES: &[(&str, &str, &str)] = &[
    ("src/directory/store.rs", "add_node", "node add"),
    ("src/directory/store.rs", "remove_node", "node remove"),
    ("src/directory/store.rs", "add_function", "function add"),
    ("src/directory/store.rs", "add_table", "table add"),
    ("src/directory/store.rs", "insert_shard", "shard add"),
    ("src/directory/store.rs", "set_shard_state", "shard add"),
    ("src/directory/store.rs", "remove_table", "table remove"),
    (
        "src/directory/store.rs",
        "remove_function",
        "function remove",
    ),
    ("src/directory/store.rs", "delete_shard", "shard remove"),
    (
        "src/directory/store.rs",
        "delete_offline_shard",
        "abort of a split",
    ),
    ("src/directory/journal.rs", "create_operation", "move"),
    ("src/directory/journal.rs", "flip_shard", "move"),
    (
        "src/directory/journal.rs",
        "insert_offline_location",
        "split",
    ),
    ("src/directory/journal.rs", "split_flip", "split"),
    ("src/directory/journal.rs", "merge_flip", "merge"),
    ("src/directory/journal.rs", "key_flip", "move-keys"),
    (
        "src/directory/journal.rs",
        "set_availability",
        "shard set-availability",
    ),
    ("src/directory/journal.rs", "set_shard_state_leased", "move"),
    ("src/directory/store.rs", "assign_key", "keys assign"),
    ("src/directory/store.rs", "import_staged", "keys import"),
    // The flip of a per-key key move, which no command runs yet: tests/perkey.rs runs it
    // and checks a router follows it key by key.
    (
        "src/directory/store.rs",
        "reassign_keys",
        "tests/perkey.rs a_router_drops_only_the_keys_the_log_names",
    ),
    ("src/ids.rs", "create", "ids sequence create"),
    ("src/ids.rs", "set_feeds", "ids sequence feeds"),
    ("src/global.rs", "set_source", "global source"),
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Only `Directory::change` (through `change_once`) bumps the version (so every bump
/// writes its log row), and
/// every function that opens a change is run by the CLI test below: a new one fails here
/// until that test runs it too.
#[test]
fn every_change_site_is_known_and_only_change_bumps_the_version() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    files.sort();
    let mut found = BTreeSet::new();
    // Where the code names the table directory_version.
    let mut bumps = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(&root).unwrap().to_string_lossy().to_string();
        let text = std::fs::read_to_string(f).unwrap();
        let mut current_fn = String::new();
        for line in text.lines() {
            let t = line.trim_start();
            if t.starts_with("#[cfg(test)]") {
                break;
            }
            for prefix in ["pub fn ", "fn ", "pub(crate) fn "] {
                if let Some(rest) = t.strip_prefix(prefix) {
                    current_fn = rest.split(['(', '<']).next().unwrap().to_string();
                }
            }
            if t.contains(".change(|") || t.contains(".flip_change(|") {
                found.insert((rel.clone(), current_fn.clone()));
            }
            if t.contains("(\"directory_version\")") && !t.starts_with("//") {
                bumps.push((rel.clone(), current_fn.clone()));
            }
        }
    }
    let known: BTreeSet<(String, String)> = CHANGE_SITES
        .iter()
        .map(|(f, func, _)| (f.to_string(), func.to_string()))
        .collect();
    assert_eq!(
        found, known,
        "the functions opening a directory change and the ones this test runs differ"
    );
    let touching: Vec<(&str, &str)> = bumps
        .iter()
        .map(|(f, func)| (f.as_str(), func.as_str()))
        .collect();
    assert_eq!(
        touching,
        vec![
            ("src/directory/store.rs", "name_scope"),
            ("src/directory/store.rs", "version"),
            ("src/directory/store.rs", "version_synced"),
            ("src/directory/store.rs", "change_once"),
        ],
        "the table directory_version is read by Directory::version, version_synced and \
         name_scope and written only by Directory::change (its change_once), which writes \
         the log row of every version"
    );
}

#[test]
fn every_change_is_logged_and_a_router_follows_it_shard_by_shard() {
    let _s = serial();
    let inventory_path = FLEET.inventory_path();
    let inv = inventory();
    let mut router = Router::connect(&inv).unwrap();
    let mut run = |what: &str, args: &[&str], fault: Option<&str>, follow: Follow| {
        let before = load();
        let mut cmd = common::cli_on(&inventory_path, args);
        if let Some(f) = fault {
            cmd.env("SHARDCTL_FAULT", f);
        }
        let out = cmd.output().unwrap();
        assert_eq!(
            out.status.success(),
            fault.is_none(),
            "{what}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let after = load();
        assert!(after.version > before.version, "{what}: no change");
        // One log row per version, none missing.
        let log = log_after(before.version);
        let versions: Vec<u64> = log.iter().map(|r| r.0).collect();
        let expected: Vec<u64> = (before.version + 1..=after.version).collect();
        assert_eq!(versions, expected, "{what}: the log misses a version");
        // Each location written by a change carries that change's version: its log row
        // names the shard (or says everything changed). This checks every version on its
        // own, where the router below sees only their union.
        for shard in &after.shards {
            if shard.version <= before.version {
                continue;
            }
            let row = log.iter().find(|r| r.0 == shard.version).unwrap();
            let named = row.1 == "all"
                || (row.1 == "shards" && row.2.split(',').any(|s| s == shard.id.to_string()));
            assert!(
                named,
                "{what}: version {} wrote shard {}'s location, its log row is {row:?}",
                shard.version, shard.id
            );
        }
        // The router follows: the same content as a full read, re-reading what it says.
        assert!(router.refresh().unwrap(), "{what}");
        assert_eq!(
            router.snapshot(),
            &after,
            "{what}: the router differs from a full read"
        );
        let changed = differing_shards(&before, &after);
        match (follow, router.last_reload().unwrap()) {
            (Follow::Shards, Reload::Incremental { shards, .. }) => {
                let shards: BTreeSet<u32> = shards.iter().copied().collect();
                assert!(
                    changed.is_subset(&shards),
                    "{what}: shards {changed:?} changed, {shards:?} re-read"
                );
                assert!(log.iter().all(|r| r.1 != "all"), "{what}: {log:?}");
            }
            (
                Follow::Everything,
                Reload::Full {
                    why: FullReason::Everything,
                    ..
                },
            ) => {}
            (follow, got) => panic!("{what}: expected {follow:?}, the router did {got:?}"),
        }
        eprintln!("{what}: {:?}", router.last_reload().unwrap());
        changed
    };
    use Follow::*;
    run(
        "node remove",
        &["node", "remove", "node3"],
        None,
        Everything,
    );
    run("node add", &["node", "add", "node3"], None, Everything);
    run(
        "function add",
        &["function", "add", "tmp", "--type", "range", "--key", "int"],
        None,
        Everything,
    );
    run(
        "function remove",
        &["function", "remove", "tmp"],
        None,
        Everything,
    );
    run(
        "table add",
        &["table", "add", "rdb.kinds", "--global"],
        None,
        Everything,
    );
    run(
        "global source",
        &["global", "source", "rdb.kinds", "--shard", "1"],
        None,
        Shards,
    );
    // While `kinds` is global (a key move refuses an unmapped table holding rows), a key
    // move shifts the boundary between
    // shards 1 and 2: both their ranges change.
    let shifted = run(
        "move-keys",
        &[
            "move-keys",
            "--function",
            "r",
            "--range",
            "90000..100000",
            "--to-shard",
            "2",
        ],
        None,
        Shards,
    );
    assert_eq!(shifted, BTreeSet::from([1, 2]));
    run(
        "table remove",
        &["table", "remove", "rdb.kinds"],
        None,
        Everything,
    );
    // A per-key function: its shard, a key assigned (the log names the key, no shard),
    // keys imported.
    run(
        "function add per-key",
        &["function", "add", "pk", "--type", "key", "--key", "int"],
        None,
        Everything,
    );
    common::exec(
        &mut common::connect(FLEET.sandbox(), "node1"),
        &[
            "CREATE DATABASE pkdb",
            "CREATE TABLE pkdb.items (k BIGINT NOT NULL PRIMARY KEY)",
        ],
    );
    run(
        "table add per-key",
        &[
            "table",
            "add",
            "pkdb.items",
            "--function",
            "pk",
            "--column",
            "k",
        ],
        None,
        Everything,
    );
    let pk_shard = run(
        "shard add per-key",
        &["shard", "add", "--function", "pk", "--node", "node3"],
        None,
        Shards,
    );
    assert_eq!(pk_shard.len(), 1, "{pk_shard:?}");
    let assigned = run(
        "keys assign",
        &["keys", "assign", "--function", "pk", "42"],
        None,
        Shards,
    );
    assert!(assigned.is_empty(), "{assigned:?}");
    let tmp = tempfile::tempdir().unwrap();
    let pk = pk_shard.iter().next().unwrap().to_string();
    let file = common::write_file(tmp.path(), "keys.csv", &format!("43,{pk}\n44,{pk}\n"));
    run(
        "keys import",
        &[
            "keys",
            "import",
            "--function",
            "pk",
            "--file",
            file.to_str().unwrap(),
        ],
        None,
        Shards,
    );
    let added = run(
        "shard add",
        &[
            "shard",
            "add",
            "--function",
            "r",
            "--node",
            "node3",
            "--lower-bound",
            "300000",
        ],
        None,
        Shards,
    );
    assert_eq!(added.len(), 1, "{added:?}");
    let added = added.into_iter().next().unwrap().to_string();
    let set = run(
        "shard set-availability",
        &["shard", "set-availability", "--shard", "2", "no-writes"],
        None,
        Shards,
    );
    assert_eq!(set, BTreeSet::from([2]));
    run(
        "shard set-availability back",
        &["shard", "set-availability", "--shard", "2", "available"],
        None,
        Shards,
    );
    run(
        "shard remove",
        &["shard", "remove", "--shard", &added],
        None,
        Shards,
    );
    let nothing = run(
        "ids sequence create",
        &["ids", "sequence", "create", "items_n"],
        None,
        Shards,
    );
    assert!(nothing.is_empty(), "{nothing:?}");
    run(
        "ids sequence feeds",
        &["ids", "sequence", "feeds", "items_n", "rdb.items.n"],
        None,
        Shards,
    );
    let moved = run(
        "move",
        &["move", "--shard", "3", "--to", "node3"],
        None,
        Shards,
    );
    assert_eq!(moved, BTreeSet::from([3]));
    // A split of a list shard moves values from the old shard to the new one.
    let split = run(
        "split",
        &["split", "--shard", "5", "--to", "node3", "--values", "c,d"],
        None,
        Shards,
    );
    assert_eq!(split.len(), 2, "{split:?}");
    assert!(split.contains(&5), "{split:?}");
    let new_list_shard = *split.iter().find(|s| **s != 5).unwrap();
    let merged = run(
        "merge",
        &[
            "merge",
            "--shards",
            &format!("5,{new_list_shard}"),
            "--to",
            "node1",
        ],
        None,
        Shards,
    );
    assert_eq!(merged, split, "the merge undid the split");
    // A split that died after its preflight leaves its new shard's offline location for
    // the abort to delete.
    let created = run(
        "split that dies",
        &["split", "--shard", "1", "--to", "node3", "--at", "50000"],
        Some("crash@after:preflight"),
        Shards,
    );
    // Shard 1 is moving, and the new shard's location is there, offline.
    assert_eq!(created.len(), 2, "{created:?}");
    let new_shard = *created.iter().find(|s| **s != 1).expect("a new shard");
    assert!(load().shard(new_shard).is_ok());
    let op = common::newest_op(&inv).unwrap();
    let deleted = run(
        "abort of a split",
        &["abort", &op.id.to_string()],
        None,
        Shards,
    );
    assert_eq!(
        deleted, created,
        "the abort deleted the new shard, shard 1 online again"
    );
    assert!(load().shard(new_shard).is_err());
}

#[test]
fn a_router_behind_the_log_reloads_everything_and_the_log_stays_bounded() {
    let _s = serial();
    let inv = inventory();
    let schema = inv.file.directory.schema.clone();
    let mut router = Router::connect(&inv).unwrap();
    let at = router.version();
    let mut n1 = common::connect(FLEET.sandbox(), "node1");
    // The version jumps past the log's window, as if this router had slept through
    // CHANGE_LOG_KEPT changes (their rows written, then pruned).
    common::exec(
        &mut n1,
        &[&format!(
            "UPDATE `{schema}`.directory_version SET version = version + {} WHERE id = 1",
            CHANGE_LOG_KEPT + 10
        )],
    );
    FLEET
        .cli(&["shard", "set-availability", "--shard", "1", "no-writes"])
        .assert()
        .success();
    let now = load().version;
    let kept = common::count(
        &mut n1,
        &format!("SELECT COUNT(*) FROM `{schema}`.directory_changes WHERE version <= {now} - {CHANGE_LOG_KEPT}"),
    );
    assert_eq!(
        kept, 0,
        "rows older than the window are pruned by the next change"
    );
    let oldest = common::count(
        &mut n1,
        &format!("SELECT MIN(version) FROM `{schema}`.directory_changes"),
    ) as u64;
    assert!(
        oldest > at,
        "the log no longer reaches back to {at}: {oldest}"
    );
    assert!(router.refresh().unwrap());
    assert!(
        matches!(
            router.last_reload(),
            Some(Reload::Full {
                why: FullReason::LogTooShort,
                ..
            })
        ),
        "{:?}",
        router.last_reload()
    );
    assert_eq!(router.snapshot(), &load());
    // From the new version on, the log reaches back again.
    FLEET
        .cli(&["shard", "set-availability", "--shard", "1", "available"])
        .assert()
        .success();
    assert!(router.refresh().unwrap());
    assert!(
        matches!(router.last_reload(), Some(Reload::Incremental { shards, .. }) if shards == &[1]),
        "{:?}",
        router.last_reload()
    );
    assert_eq!(router.snapshot(), &load());
    // A reload on demand reads everything, and says it was asked for.
    router.reload().unwrap();
    assert!(matches!(
        router.last_reload(),
        Some(Reload::Full {
            why: FullReason::Asked,
            ..
        })
    ));
}
