//! `shardctl merge` on real servers: range, hash and list merges under the workload (fresh
//! and stale routers), on one node and with the retired shards moved there first; every
//! acknowledged write survives, none was acknowledged by a shard not owning its key, every
//! row ends on the shard `lookup` names; bad input is refused without a change; a crash at
//! each of the merge's effects, then `resume` or `abort`, converges.
//!
//! The crash matrices run the `before:`/`done:`/`journaled:` points of every effect of a
//! merge on one node and of one across nodes, each with `resume` (and `abort` at a subset);
//! the `after:<step>` points too, and `abort` at each, with `MERGE_FULL_MATRIX=1`.

mod common;

use common::{connect, count, exec, items_schema, serial, FleetSetup, Function, SharedFleet};
use shardctl::config::Inventory;
use shardctl::directory::journal::OpKind;
use shardctl::directory::{Directory, Key, Router};
use shardctl::sandbox::Sandbox;
use shardctl::server::Stmt;
use shardctl::workload;
use std::time::Duration;

static FLEET: SharedFleet = SharedFleet::new(3, set_up);

/// Sets up the fleet once, on first use (see [`FLEET`]): one function per test, each with
/// its own database so the tests do not depend on their order, `items` filled through the
/// router.
fn set_up(sb: &Sandbox) {
    let strings = ["a", "b", "c", "d", "e", "f"].map(|s| Key::Str(s.to_string()));
    let functions = [
        (
            Function::range("r"),
            "rdb",
            &[("node2", "0"), ("node2", "100000"), ("node2", "200000")][..],
            (0..200).map(|i| Key::Int(i * 997)).collect::<Vec<_>>(),
        ),
        (
            Function::range("r3"),
            "r3db",
            &[("node1", "0"), ("node2", "100000"), ("node3", "200000")],
            (0..300).map(|i| Key::Int(i * 991)).collect(),
        ),
        (
            Function::hash("h"),
            "hdb",
            &[("node1", "auto"), ("node2", "auto"), ("node3", "auto")],
            (0..400).map(Key::Int).collect(),
        ),
        (
            Function::list("l"),
            "ldb",
            &[("node1", "a,b,c"), ("node2", "d,e"), ("node3", "f")],
            strings.to_vec(),
        ),
        (
            Function::range("b"),
            "bdb",
            &[("node1", "0"), ("node2", "1000"), ("node1", "2000")],
            (0..30).map(|i| Key::Int(i * 100)).collect(),
        ),
        (
            Function::range("c"),
            "cdb",
            &[("node2", "0")],
            (0..100).map(Key::Int).collect(),
        ),
        (
            Function::range("c2"),
            "c2db",
            &[("node2", "0")],
            (0..100).map(Key::Int).collect(),
        ),
    ];
    let mut setup = FleetSetup::new();
    for (function, db, shards, keys) in functions {
        setup = setup
            .schema(&items_schema(db, function.key(), false, true))
            .routed_items(function.name(), db, keys, 20)
            .function(function.items(db).shards(shards));
    }
    setup.build(sb);
}

fn inventory() -> Inventory {
    common::inventory(FLEET.sandbox())
}

fn dir() -> Directory {
    Directory::open(&inventory()).unwrap()
}

/// The shards of `function`, in the directory's order, with their nodes.
fn shards_of(function: &str) -> Vec<(u32, String)> {
    let snap = dir().load().unwrap();
    let f = snap.function(function).unwrap().id;
    snap.shards_of(f).map(|s| (s.id, s.node.clone())).collect()
}

/// Every row of every sharded table of `function` sits on the shard the router names;
/// the number of `items` rows.
fn rows_are_where_lookup_says(function: &str, db: &str) -> usize {
    common::items_are_where_lookup_says(FLEET.sandbox(), function, db)
}

/// No schema of a retired shard is left on any node (nor its trash).
fn gone_everywhere(db: &str, retired: &[u32]) {
    for node in ["node1", "node2", "node3"] {
        let mut s = connect(FLEET.sandbox(), node);
        for r in retired {
            let n = count(
                &mut s,
                &format!(
                    "SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name = '{db}_{r}' OR schema_name LIKE '\\_shardctl\\_trash%'"
                ),
            );
            assert_eq!(n, 0, "{db}_{r} or a trash schema left on {node}");
        }
    }
}

/// A merge under the workload: the summary names the survivor; every acknowledged write is
/// where the directory now says its key lives, none was acknowledged by a shard not owning
/// it; no row lost or duplicated. Returns the summary.
fn merge_under_workload(function: &str, db: &str, args: &[&str], stale: bool) -> serde_json::Value {
    let before = rows_are_where_lookup_says(function, db);
    let running = workload::spawn(
        inventory(),
        workload::Options {
            rate: 200,
            stale_router: stale,
            ..workload::Options::new(function)
        },
    )
    .unwrap();
    std::thread::sleep(Duration::from_millis(700));
    let out = FLEET
        .cli(&[&["--output", "json", "merge"][..], args].concat())
        .output()
        .unwrap();
    std::thread::sleep(Duration::from_millis(700));
    let mut report = running.stop().unwrap();
    assert!(
        out.status.success(),
        "merge failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let v: serde_json::Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(
        (v["event"].as_str(), v["outcome"].as_str()),
        (Some("summary"), Some("merged")),
        "{v}"
    );
    let check = report.check(&inventory(), function).unwrap();
    assert!(
        check.missing.is_empty(),
        "lost acknowledged writes: {:?}",
        check.missing
    );
    assert_eq!(report.wrong_shard_writes, 0, "{:?}", check.wrong_shard);
    assert!(report.streams.iter().all(|s| s.lost == 0), "{report:?}");
    assert!(report.acks.len() > 50, "the workload hardly wrote");
    assert_eq!(
        rows_are_where_lookup_says(function, db),
        before,
        "no row lost or duplicated"
    );
    v
}

#[test]
fn three_range_shards_on_one_node_merge_under_load_fresh_then_stale() {
    FLEET.sandbox();
    let _s = serial();
    let shards = shards_of("r");
    let (a, b, c) = (shards[0].0, shards[1].0, shards[2].0);
    // Fresh routers: the middle shard joins the lower one.
    let v = merge_under_workload(
        "r",
        "rdb",
        &["--shards", &format!("{a},{b}"), "--to", "node2"],
        false,
    );
    assert_eq!(v["shard"], a);
    let snap = dir().load().unwrap();
    let cov = shardctl::directory::coverage(&snap, snap.function("r").unwrap(), a);
    assert_eq!(cov.to_string(), "[0, 200000)");
    // Stale routers: the upper one joins it too.
    merge_under_workload(
        "r",
        "rdb",
        &["--shards", &format!("{a},{c}"), "--to", "node2"],
        true,
    );
    assert_eq!(shards_of("r"), vec![(a, "node2".to_string())]);
    let snap = dir().load().unwrap();
    let cov = shardctl::directory::coverage(&snap, snap.function("r").unwrap(), a);
    assert_eq!(cov.to_string(), "[0, ∞)");
    gone_everywhere("rdb", &[b, c]);
    // The global table stays the survivor's own.
    let mut n2 = connect(FLEET.sandbox(), "node2");
    assert_eq!(
        count(&mut n2, &format!("SELECT COUNT(*) FROM rdb_{a}.kinds")),
        2
    );
}

#[test]
fn three_range_shards_on_three_nodes_merge_onto_one_with_stale_routers() {
    FLEET.sandbox();
    let _s = serial();
    let shards = shards_of("r3");
    let ids: Vec<u32> = shards.iter().map(|s| s.0).collect();
    let list = format!("{},{},{}", ids[2], ids[0], ids[1]);
    // The dry run shows the request's first merge (the next one reads the fleet as the
    // first leaves it).
    let out = FLEET
        .cli(&["merge", "--shards", &list, "--to", "node2", "--dry-run"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    assert!(text.starts_with("merge shard "), "{text}");
    assert!(text.contains("change-master"), "{text}");
    assert_eq!(shards_of("r3"), shards, "a dry run changed the directory");
    // Listed out of order: the one on node2 survives; the others join once adjacent.
    let v = merge_under_workload(
        "r3",
        "r3db",
        &[
            "--shards",
            &format!("{},{},{}", ids[2], ids[0], ids[1]),
            "--to",
            "node2",
        ],
        true,
    );
    assert_eq!(v["shard"], ids[1]);
    let ops = v["operations"].as_array().unwrap();
    let kinds: Vec<&str> = ops.iter().map(|o| o["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["merge", "merge"], "{v}");
    assert_eq!(shards_of("r3"), vec![(ids[1], "node2".to_string())]);
    gone_everywhere("r3db", &[ids[0], ids[2]]);
    // Each merge is a finished operation of its own, its rows copied and kept current
    // through a channel from the retired shard's node (no fence during the copy).
    for o in ops {
        let rec = dir().operation(o["op"].as_u64().unwrap()).unwrap();
        assert_eq!(rec.state.as_sql(), "done");
        for effect in [
            "copy",
            "point-channel",
            "set-filters",
            "hold-channel",
            "gate-applier",
            "stop-channel",
            "reset-channel",
        ] {
            assert!(rec.last_effect(effect).is_some(), "{effect} in {rec:?}");
        }
        assert!(rec.last_effect("local-copy").is_none());
    }
    // The global table stays the survivor's own: not copied, not replicated.
    let mut n2 = connect(FLEET.sandbox(), "node2");
    assert_eq!(
        count(
            &mut n2,
            &format!("SELECT COUNT(*) FROM r3db_{}.kinds", ids[1])
        ),
        2
    );
}

#[test]
fn adjacent_hash_arcs_merge_under_load() {
    FLEET.sandbox();
    let _s = serial();
    let shards = shards_of("h");
    let on = |node: &str| shards.iter().find(|s| s.1 == node).unwrap().0;
    let (a, b, c) = (on("node1"), on("node2"), on("node3"));
    // Three points on the ring: every two arcs are neighbours. Fresh routers first, then
    // stale ones.
    merge_under_workload(
        "h",
        "hdb",
        &["--shards", &format!("{a},{b}"), "--to", "node1"],
        false,
    );
    merge_under_workload(
        "h",
        "hdb",
        &["--shards", &format!("{c},{a}"), "--to", "node1"],
        true,
    );
    assert_eq!(shards_of("h"), vec![(a, "node1".to_string())]);
    let snap = dir().load().unwrap();
    let f = snap.function("h").unwrap().id;
    assert_eq!(snap.points.iter().filter(|p| p.func_id == f).count(), 1);
}

#[test]
fn list_shards_merge_under_load() {
    FLEET.sandbox();
    let _s = serial();
    let shards = shards_of("l");
    let (a, b, c) = (shards[0].0, shards[1].0, shards[2].0);
    let hooks = tempfile::tempdir().unwrap();
    let doc = hooks.path().join("done.json");
    merge_under_workload(
        "l",
        "ldb",
        &[
            "--shards",
            &format!("{b},{a}"),
            "--to",
            "node1",
            "--hook",
            &format!("done=cat > {}", doc.display()),
        ],
        false,
    );
    // The hooks' document says what ran: a merge, of which two shards.
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&doc).expect("the done hook ran")).unwrap();
    assert_eq!(doc["kind"], "merge", "{doc}");
    let mut pair = [doc["survivor"].as_u64(), doc["retired"].as_u64()];
    pair.sort();
    let mut want = [Some(u64::from(a)), Some(u64::from(b))];
    want.sort();
    assert_eq!(pair, want, "{doc}");
    let r = Router::connect(&inventory()).unwrap();
    for v in ["a", "d", "e"] {
        assert_eq!(
            r.shard_for_function("l", &Key::Str(v.into())).unwrap().id,
            a
        );
    }
    assert_eq!(
        r.shard_for_function("l", &Key::Str("f".into())).unwrap().id,
        c
    );
    merge_under_workload(
        "l",
        "ldb",
        &["--shards", &format!("{a},{c}"), "--to", "node1"],
        true,
    );
    let r = Router::connect(&inventory()).unwrap();
    assert_eq!(
        r.shard_for_function("l", &Key::Str("f".into())).unwrap().id,
        a
    );
    assert_eq!(shards_of("l"), vec![(a, "node1".to_string())]);
}

#[test]
fn bad_merges_are_refused_without_a_change() {
    FLEET.sandbox();
    let _s = serial();
    let version = || dir().version().unwrap();
    let ops = || dir().operations(None).unwrap().len();
    let b: Vec<u32> = shards_of("b").iter().map(|s| s.0).collect();
    let l = shards_of("l")[0].0;
    let s = |ids: &[u32]| {
        ids.iter()
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(",")
    };
    let cases: Vec<(&str, [String; 2], i32, &str)> = vec![
        (
            "shards that are not adjacent",
            [s(&[b[0], b[2]]), "node1".into()],
            5,
            "are not adjacent",
        ),
        (
            "shards of different functions",
            [s(&[b[0], l]), "node1".into()],
            2,
            "different functions",
        ),
        (
            "a shard with itself",
            [s(&[b[0], b[0]]), "node1".into()],
            2,
            "cannot merge with itself",
        ),
        (
            "an unknown shard",
            [s(&[b[0], 999]), "node1".into()],
            2,
            "unknown shard 999",
        ),
        (
            "a node not in the directory",
            [s(&[b[0], b[1]]), "node9".into()],
            2,
            "node9",
        ),
        (
            "a node none of the shards lives on",
            [s(&[b[0], b[1]]), "node3".into()],
            2,
            "lives on node3",
        ),
        (
            "one shard only",
            [s(&[b[0]]), "node1".into()],
            2,
            "at least two",
        ),
    ];
    let (v0, o0) = (version(), ops());
    for (name, [shards, to], code, needle) in &cases {
        for extra in [&[][..], &["--check"][..]] {
            let mut a = vec!["merge", "--shards", shards, "--to", to];
            a.extend_from_slice(extra);
            let out = FLEET.cli(&a).output().unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            let text = format!("{err}{}", String::from_utf8_lossy(&out.stdout));
            assert_eq!(out.status.code(), Some(*code), "{name} {a:?}: {text}");
            assert!(text.contains(needle), "{name} {a:?}: {text}");
            assert_eq!(
                err.trim().lines().count(),
                1,
                "{name} {a:?}: one line: {err}"
            );
        }
    }
    assert_eq!(
        (version(), ops()),
        (v0, o0),
        "a refused merge changed something"
    );

    // A shard under another operation.
    FLEET
        .cli(&["lock", "--shard", &b[1].to_string()])
        .assert()
        .success();
    let (v0, o0) = (version(), ops());
    let out = FLEET
        .cli(&["merge", "--shards", &s(&[b[1], b[2]]), "--to", "node1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(5), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("under operation"));
    assert_eq!((version(), ops()), (v0, o0));
    FLEET
        .cli(&["unlock", "--shard", &b[1].to_string()])
        .assert()
        .success();

    let mut n1 = connect(FLEET.sandbox(), "node1");
    let mut n2 = connect(FLEET.sandbox(), "node2");
    let (v0, o0) = (version(), ops());
    let refused = |needle: &str| {
        for extra in [&[][..], &["--check"][..]] {
            let mut a = vec!["merge", "--shards"];
            let list = s(&[b[1], b[2]]);
            a.push(&list);
            a.extend_from_slice(&["--to", "node2"]);
            a.extend_from_slice(extra);
            let out = FLEET.cli(&a).output().unwrap();
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stderr),
                String::from_utf8_lossy(&out.stdout)
            );
            assert_eq!(out.status.code(), Some(5), "{needle}: {text}");
            assert!(text.contains(needle), "{needle}: {text}");
        }
    };
    // Rows the survivor's schema cannot take: a column more on the retired side.
    exec(
        &mut n1,
        &[&format!(
            "ALTER TABLE bdb_{}.items ADD COLUMN x INT NULL",
            b[2]
        )],
    );
    refused("is defined differently");
    exec(
        &mut n1,
        &[&format!("ALTER TABLE bdb_{}.items DROP COLUMN x", b[2])],
    );
    // A table on one side only.
    exec(
        &mut n1,
        &[&format!(
            "CREATE TABLE bdb_{}.extra (id INT PRIMARY KEY)",
            b[2]
        )],
    );
    refused("table sets differ");
    exec(&mut n1, &[&format!("DROP TABLE bdb_{}.extra", b[2])]);
    // A row the retired shard does not own (an unpruned split would leave these).
    exec(
        &mut n1,
        &[&format!("INSERT INTO bdb_{}.items VALUES (5, 1)", b[2])],
    );
    refused("does not own");
    exec(
        &mut n1,
        &[&format!("DELETE FROM bdb_{}.items WHERE k = 5", b[2])],
    );
    // The survivor holding keys of the retired shard.
    exec(
        &mut n2,
        &[&format!("INSERT INTO bdb_{}.items VALUES (2500, 1)", b[1])],
    );
    refused("already holds rows");
    exec(
        &mut n2,
        &[&format!("DELETE FROM bdb_{}.items WHERE k = 2500", b[1])],
    );
    assert_eq!(
        (version(), ops()),
        (v0, o0),
        "a refused merge changed something"
    );
    // After all that, the same merge goes through.
    FLEET
        .cli(&["merge", "--shards", &s(&[b[1], b[2]]), "--to", "node2"])
        .assert()
        .success();
    assert_eq!(shards_of("b").len(), 2);

    // A prune of either shard of an unfinished merge (crashed after its copy) is refused:
    // the survivor holds the retired rows it does not own yet.
    let out = FLEET
        .cli(&["merge", "--shards", &s(&[b[1], b[0]]), "--to", "node2"])
        .env("SHARDCTL_FAULT", "crash@after:backup")
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("crashing"),
        "{out:?}"
    );
    let op = dir()
        .operations(None)
        .unwrap()
        .into_iter()
        .filter(|o| o.kind == OpKind::Merge)
        .max_by_key(|o| o.id)
        .unwrap()
        .id;
    for shard in [b[1], b[0]] {
        let out = FLEET
            .cli(&["prune", "--shard", &shard.to_string()])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(5), "{err}");
        assert!(
            err.contains("a prune now would delete the rows it merges"),
            "{err}"
        );
    }
    FLEET.cli(&["abort", &op.to_string()]).assert().success();
    assert_eq!(shards_of("b").len(), 2);
    let mut n2 = connect(FLEET.sandbox(), "node2");
    assert_eq!(
        count(
            &mut n2,
            &format!("SELECT COUNT(*) FROM bdb_{}.items WHERE k < 1000", b[1])
        ),
        0,
        "the abort took the copied rows out of the survivor"
    );
}

/// Where a matrix's retired shards live: `c` splits onto its own node (node2), `c2` onto
/// node3 (the merge then copies through a channel).
fn matrix_function(cross: bool) -> (&'static str, &'static str, &'static str) {
    if cross {
        ("c2", "c2db", "node3")
    } else {
        ("c", "cdb", "node2")
    }
}

/// A fresh pair of adjacent shards, as an operator gets them: the one shard of the
/// matrix's function (on node2) gets 300 rows above every row so far and is split there
/// (so the survivor carries the split's guards, which the merge must widen). Returns
/// (survivor, retired).
fn fresh_pair(cross: bool) -> (u32, u32) {
    static CASE: std::sync::atomic::AtomicI64 = std::sync::atomic::AtomicI64::new(1);
    let case = CASE.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let (function, db, to) = matrix_function(cross);
    let shards = shards_of(function);
    assert_eq!(shards.len(), 1, "{shards:?}");
    let survivor = shards[0].0;
    let bound = case * 1_000_000;
    let mut n2 = connect(FLEET.sandbox(), "node2");
    exec(
        &mut n2,
        &[&format!(
            "INSERT INTO {db}_{survivor}.items SELECT {bound} + seq, 1 FROM {db}_{survivor}.seq_1_to_300"
        )],
    );
    FLEET
        .cli(&[
            "split",
            "--shard",
            &survivor.to_string(),
            "--to",
            to,
            "--at",
            &bound.to_string(),
        ])
        .assert()
        .success();
    let new = *shards_of(function).iter().map(|(id, _)| id).max().unwrap();
    (survivor, new)
}

fn last_merge_of(retired: u32) -> shardctl::directory::journal::OperationRecord {
    dir()
        .operations(None)
        .unwrap()
        .into_iter()
        .filter(|o| o.kind == OpKind::Merge && o.shard_id == Some(retired))
        .max_by_key(|o| o.id)
        .unwrap()
}

/// A crash at `point` during a merge, then `then` (resume or abort): the operation ends
/// done (or aborted before the flip; abort after it is refused and resume finishes), no
/// fence, channel or trash is left, every row is where lookup says and none is lost.
fn merge_crash_and_recover(cross: bool, point: &str, then: &str) {
    let (function, db, retired_node) = matrix_function(cross);
    let (survivor, retired) = fresh_pair(cross);
    let mut n2 = connect(FLEET.sandbox(), "node2");
    let mut rn = connect(FLEET.sandbox(), retired_node);
    let before = count(
        &mut n2,
        &format!("SELECT COUNT(*) FROM {db}_{survivor}.items"),
    );
    let context = format!(
        "merge of {retired} on {retired_node} into {survivor}: crash at {point}, then {then}"
    );
    let out = FLEET
        .cli(&[
            "merge",
            "--shards",
            &format!("{survivor},{retired}"),
            "--to",
            "node2",
        ])
        .env("SHARDCTL_FAULT", format!("crash@{point}"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("crashing"),
        "{context}: never reached the point (exit {:?}):\n{stderr}",
        out.status.code()
    );
    let op = last_merge_of(retired);
    let flipped = dir().load().unwrap().shard(retired).is_err();
    let r = FLEET.cli(&[then, &op.id.to_string()]).output().unwrap();
    let err = String::from_utf8_lossy(&r.stderr);
    if then == "abort" && flipped {
        assert_eq!(r.status.code(), Some(5), "{context}: {err}");
        assert!(err.contains("only forward"), "{context}: {err}");
        FLEET
            .cli(&["resume", &op.id.to_string()])
            .assert()
            .success();
    } else {
        assert!(r.status.success(), "{context}: {then} failed:\n{err}");
    }
    let aborted = then == "abort" && !flipped;
    let rec = dir().operation(op.id).unwrap();
    assert_eq!(
        rec.state.as_sql(),
        if aborted { "aborted" } else { "done" },
        "{context}"
    );
    for s in [&mut n2, &mut rn] {
        assert_eq!(
            count(
                s,
                "SELECT COUNT(*) FROM information_schema.tables WHERE table_name LIKE '\\_shardctl\\_op%' OR table_schema LIKE '\\_shardctl\\_trash%'"
            ),
            0,
            "{context}: a fence or trash left"
        );
    }
    assert_eq!(
        count(
            &mut n2,
            &format!(
                "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = '{db}_{survivor}' AND table_name = 'items'"
            )
        ),
        1
    );
    let channels = n2
        .rows(&Stmt::text("SHOW ALL SLAVES STATUS"))
        .unwrap()
        .len();
    assert_eq!(channels, 0, "{context}: a channel left on node2");
    let snap = dir().load().unwrap();
    assert_eq!(snap.shard(retired).is_ok(), aborted, "{context}");
    let total = if aborted {
        assert_eq!(
            count(
                &mut rn,
                &format!("SELECT COUNT(*) FROM {db}_{retired}.items")
            ),
            300,
            "{context}"
        );
        before
    } else {
        gone_everywhere(db, &[retired]);
        before + 300
    };
    assert_eq!(
        count(
            &mut n2,
            &format!("SELECT COUNT(*) FROM {db}_{survivor}.items")
        ),
        total,
        "{context}: the survivor's rows"
    );
    rows_are_where_lookup_says(function, db);
    if aborted {
        // Leave the pair merged so the next case starts from one shard again.
        FLEET
            .cli(&[
                "merge",
                "--shards",
                &format!("{survivor},{retired}"),
                "--to",
                "node2",
            ])
            .assert()
            .success();
    }
}

/// The crash matrix of a merge with its retired shard on node2 (`cross` false: kept
/// current by the change stream) or node3 (`cross`: kept current through a channel).
fn merge_matrix(cross: bool) {
    FLEET.sandbox();
    let _s = serial();
    let full = std::env::var("MERGE_FULL_MATRIX").is_ok_and(|v| v == "1");
    let mut points: Vec<String> =
        shardctl::ops::mover::fault_points(&shardctl::playbook::Playbook::default_merge(), !cross)
            .into_iter()
            .filter(|p| full || !p.starts_with("after:"))
            .collect();
    // The flip step widens the survivor's split guards (an effect only when it has some).
    let at = points.iter().position(|p| p == "journaled:flip").unwrap() + 1;
    for (i, p) in ["before:guard", "done:guard", "journaled:guard"]
        .iter()
        .enumerate()
    {
        points.insert(at + i, p.to_string());
    }
    // Abort: each crash before an effect, and after the copy, the flip and the drop.
    let abort_at = |p: &str| {
        full || p.starts_with("before:")
            || ["done:copy", "done:flip", "done:drop-source"].contains(&p)
    };
    let mut failures = Vec::new();
    let (started, mut runs) = (std::time::Instant::now(), 0);
    for p in &points {
        for then in ["resume", "abort"] {
            if then == "abort" && !abort_at(p) {
                continue;
            }
            runs += 1;
            let r = std::panic::catch_unwind(|| merge_crash_and_recover(cross, p, then));
            if let Err(e) = r {
                let msg = e
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                failures.push(format!("{p} then {then}: {msg}"));
            }
        }
    }
    println!(
        "merge fault matrix ({}): {} points, {runs} cases in {:.0}s",
        if cross { "across nodes" } else { "on one node" },
        points.len(),
        started.elapsed().as_secs_f64()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn a_crash_at_each_effect_of_a_merge_on_one_node_then_resume_or_abort() {
    merge_matrix(false);
}

#[test]
fn a_crash_at_each_effect_of_a_merge_across_nodes_then_resume_or_abort() {
    merge_matrix(true);
}

/// Two shards that both handed out the same primary key (a table whose key is not the
/// sharding column, ids from each shard's own AUTO_INCREMENT): the merge across nodes
/// stops at the copy with the duplicate named, before any fence or flip, the survivor's
/// own row untouched; abort leaves both shards as they were.
#[test]
fn a_primary_key_both_shards_hold_stops_the_merge_and_loses_nothing() {
    let _s = serial();
    let sb = FLEET.sandbox();
    let mut n1 = connect(sb, "node1");
    exec(
        &mut n1,
        &[
            "CREATE DATABASE pkdb",
            "CREATE TABLE pkdb.t (id INT PRIMARY KEY, k BIGINT NOT NULL, v VARCHAR(20), KEY (k))",
        ],
    );
    for args in [
        &["function", "add", "pk", "--type", "range", "--key", "int"][..],
        &[
            "table",
            "add",
            "pkdb.t",
            "--function",
            "pk",
            "--column",
            "k",
        ],
        &[
            "shard",
            "add",
            "--function",
            "pk",
            "--node",
            "node2",
            "--lower-bound",
            "0",
        ],
        &[
            "shard",
            "add",
            "--function",
            "pk",
            "--node",
            "node3",
            "--lower-bound",
            "1000",
        ],
    ] {
        FLEET.cli(args).assert().success();
    }
    let shards = shards_of("pk");
    let (survivor, retired) = (shards[0].0, shards[1].0);
    let mut n2 = connect(sb, "node2");
    let mut n3 = connect(sb, "node3");
    exec(
        &mut n2,
        &[&format!(
            "INSERT INTO pkdb_{survivor}.t VALUES (5, 1, 'survivor'), (6, 2, 'survivor')"
        )],
    );
    exec(
        &mut n3,
        &[&format!(
            "INSERT INTO pkdb_{retired}.t VALUES (5, 1001, 'retired'), (7, 1002, 'retired')"
        )],
    );
    let out = FLEET
        .cli(&[
            "merge",
            "--shards",
            &format!("{survivor},{retired}"),
            "--to",
            "node2",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "the merge went ahead: {err}");
    assert!(err.contains("Duplicate entry"), "{err}");
    let v: String = n2
        .first(&Stmt::text(format!(
            "SELECT v FROM pkdb_{survivor}.t WHERE id = 5"
        )))
        .unwrap()
        .unwrap();
    assert_eq!(v, "survivor", "the survivor's own row is untouched");
    assert_eq!(shards_of("pk").len(), 2, "no flip");
    let op = dir()
        .operations(None)
        .unwrap()
        .into_iter()
        .find(|o| o.shard_id == Some(retired) || o.shard_id == Some(survivor))
        .unwrap();
    if !op.state.is_finished() {
        FLEET.cli(&["abort", &op.id.to_string()]).assert().success();
    }
    assert_eq!(
        common::count(&mut n2, &format!("SELECT COUNT(*) FROM pkdb_{survivor}.t")),
        2,
        "abort took the copied rows out of the survivor, and only them"
    );
    assert_eq!(
        common::count(&mut n3, &format!("SELECT COUNT(*) FROM pkdb_{retired}.t")),
        2
    );
}
