//! `shardctl move-keys` on real servers (issue 28): the top of a range shard given to its
//! neighbour on another node and on the same node, under the workload with fresh and
//! stale routers; every acknowledged write is where the directory says and none was
//! acknowledged by a shard not owning its key; under the key fence only the moving keys
//! are refused, every other key of both shards keeps writing; a crash under the fence ends
//! cleanly by `abort` and by `resume`; and bad requests change nothing.

mod common;

use common::{connect, items_schema, serial, FleetSetup, Function, KeyKind, SharedFleet};
use shardctl::config::Inventory;
use shardctl::directory::{Directory, Key};
use shardctl::sandbox::Sandbox;
use shardctl::server::Stmt;
use shardctl::workload;
use std::time::{Duration, Instant};

static FLEET: SharedFleet = SharedFleet::new(3, set_up);

/// Function `f` over schema `app`: shard 1 on node1 from 0, shard 2 on node2 from 100000,
/// shard 3 on node2 from 200000; every shard holds a row every 5 keys of its first 100000.
/// List function `t` over `ten`: shard 4 on node1 with tenants acme (100,000 rows), beta
/// and gamma, shard 5 on node2 with delta. Hash function `h` over `hsh`: shard 6 on node1
/// from the ring's quarter point, shard 7 on node3 from its three quarters (wrapping).
fn set_up(sb: &Sandbox) {
    let mut schema = items_schema("app", KeyKind::Int, false, false);
    schema.extend(items_schema("ten", KeyKind::String, false, false));
    schema.extend(items_schema("hsh", KeyKind::Int, false, false));
    FleetSetup::new()
        .schema(&schema)
        .function(Function::range("f").items("app").shards(&[
            ("node1", "0"),
            ("node2", "100000"),
            ("node2", "200000"),
        ]))
        .function(
            Function::list("t")
                .items("ten")
                .shards(&[("node1", "acme,beta,gamma"), ("node2", "delta")]),
        )
        .function(Function::hash("h").items("hsh").shards(&[
            ("node1", "40000000000000000000000000000000"),
            ("node3", "c0000000000000000000000000000000"),
        ]))
        .rows(
            "node1",
            &[
                "INSERT INTO ten_4.items SELECT 'acme', seq FROM ten_4.seq_1_to_100000",
                "INSERT INTO ten_4.items SELECT 'beta', seq FROM ten_4.seq_1_to_500",
            ],
        )
        .rows(
            "node2",
            &["INSERT INTO ten_5.items SELECT 'delta', seq FROM ten_5.seq_1_to_500"],
        )
        .routed_items("h", "hsh", (0..4000).map(Key::Int).collect(), 1)
        .rows(
            "node1",
            &["INSERT INTO app_1.items SELECT seq * 5, 1 FROM app_1.seq_0_to_19999"],
        )
        .rows(
            "node2",
            &[
                "INSERT INTO app_2.items SELECT 100000 + seq * 5, 1 FROM app_2.seq_0_to_19999",
                "INSERT INTO app_3.items SELECT 200000 + seq * 5, 1 FROM app_3.seq_0_to_19999",
            ],
        )
        .build(sb);
}

fn inventory() -> Inventory {
    common::inventory(FLEET.sandbox())
}

fn count(node: &str, sql: &str) -> i64 {
    let mut s = connect(FLEET.sandbox(), node);
    s.first::<i64>(&Stmt::text(sql)).unwrap().unwrap_or(0)
}

fn lower_bounds() -> Vec<(Key, u32)> {
    let snap = Directory::open(&inventory()).unwrap().load().unwrap();
    let mut b: Vec<(Key, u32)> = snap
        .ranges
        .iter()
        .map(|r| (r.lower_bound.clone(), r.shard_id))
        .collect();
    b.sort();
    b
}

/// Where `shard`'s range starts now.
fn start_of(shard: u32) -> Key {
    lower_bounds()
        .into_iter()
        .find(|(_, s)| *s == shard)
        .map(|(k, _)| k)
        .unwrap()
}

fn workloads() -> Vec<(workload::Running, &'static str)> {
    workloads_on("f")
}

/// Fresh and stale routers writing keys of `function`.
fn workloads_on(function: &'static str) -> Vec<(workload::Running, &'static str)> {
    [("fresh", false), ("stale", true)]
        .into_iter()
        .map(|(name, stale_router)| {
            let running = workload::spawn(
                inventory(),
                workload::Options {
                    rate: 150,
                    stale_router,
                    ..workload::Options::new(function)
                },
            )
            .unwrap();
            (running, name)
        })
        .collect()
}

fn check_workloads(running: Vec<(workload::Running, &'static str)>) {
    check_workloads_on("f", running)
}

fn check_workloads_on(function: &str, running: Vec<(workload::Running, &'static str)>) {
    for (running, name) in running {
        let mut report = running.stop().unwrap();
        let check = report.check(&inventory(), function).unwrap();
        assert!(check.missing.is_empty(), "{name}: lost {:?}", check.missing);
        assert_eq!(
            report.wrong_shard_writes, 0,
            "{name}: {:?}",
            check.wrong_shard
        );
        assert!(report.acked > 50, "{name}: the workload ran");
    }
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

/// Every row of `items` on the shard the directory names.
fn rows_where_lookup_says() -> usize {
    common::items_are_where_lookup_says(FLEET.sandbox(), "f", "app")
}

/// An insert of `k` straight into `schema` on `node`: Ok, or the server's error code.
fn insert(node: &str, schema: &str, k: i64, n: i64) -> Result<(), u16> {
    let mut s = connect(FLEET.sandbox(), node);
    match s.exec(&Stmt::text(format!(
        "INSERT INTO {schema}.items (k, n) VALUES ({k}, {n})"
    ))) {
        Ok(_) => Ok(()),
        Err(shardctl::Error::Server { message, .. }) => Err(message
            .strip_prefix("error ")
            .and_then(|m| m.split(' ').next())
            .and_then(|c| c.parse().ok())
            .unwrap_or_else(|| panic!("{message}"))),
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn the_top_of_a_range_shard_goes_to_its_neighbour_on_another_node_under_load() {
    FLEET.sandbox();
    let _s = serial();
    let before = rows_where_lookup_says();
    // The top 20,000 keys of shard 1 (its end: shard 2's lower bound, which another test
    // may have moved).
    let Key::Int(end) = start_of(2) else { panic!() };
    let from = end - 20_000;
    let running = workloads();
    std::thread::sleep(Duration::from_millis(700));
    let range = format!("{from}..{end}");
    let v = summary(&[
        "move-keys",
        "--function",
        "f",
        "--range",
        &range,
        "--to-shard",
        "2",
    ]);
    std::thread::sleep(Duration::from_millis(700));
    check_workloads(running);
    assert_eq!(v["outcome"].as_str(), Some("moved_keys"), "{v}");
    assert!(v["fence_ms"].as_u64().is_some(), "{v}");
    assert_eq!(start_of(2), Key::Int(from), "shard 2 starts at {from} now");
    assert_eq!(
        rows_where_lookup_says(),
        before,
        "no row lost or duplicated"
    );
    assert_eq!(
        count(
            "node1",
            &format!("SELECT COUNT(*) FROM app_1.items WHERE k >= {from}")
        ),
        0,
        "the donor pruned the moved keys"
    );
    assert_eq!(
        count(
            "node2",
            &format!("SELECT COUNT(*) FROM app_2.items WHERE k >= {from} AND k < 100000 AND n = 1")
        ),
        (100_000 - from) / 5
    );
    // A router that still sends a moved key to the donor is refused there; the donor's
    // own keys and the receiver's new ones are written.
    assert_eq!(insert("node1", "app_1", from + 7, 77), Err(1644));
    assert_eq!(insert("node1", "app_1", from - 7, 77), Ok(()));
    assert_eq!(insert("node2", "app_2", from + 7, 77), Ok(()));
    assert_eq!(
        count("node1", "SELECT COUNT(*) FROM information_schema.TRIGGERS WHERE TRIGGER_NAME LIKE 'shardctl\\_switch\\_%'"),
        0,
        "literal guards took over from the switched ones"
    );
}

#[test]
fn keys_move_between_two_shards_of_one_node_under_load() {
    FLEET.sandbox();
    let _s = serial();
    let before = rows_where_lookup_says();
    // The top 15,000 keys of shard 2 go to shard 3, both on node2.
    let Key::Int(end) = start_of(3) else { panic!() };
    let from = end - 15_000;
    let running = workloads();
    std::thread::sleep(Duration::from_millis(700));
    let range = format!("{from}..{end}");
    let v = summary(&[
        "move-keys",
        "--function",
        "f",
        "--range",
        &range,
        "--to-shard",
        "3",
    ]);
    std::thread::sleep(Duration::from_millis(700));
    check_workloads(running);
    assert_eq!(v["outcome"].as_str(), Some("moved_keys"), "{v}");
    assert_eq!(start_of(3), Key::Int(from));
    assert_eq!(rows_where_lookup_says(), before);
    assert_eq!(
        count(
            "node2",
            &format!("SELECT COUNT(*) FROM app_2.items WHERE k >= {from}")
        ),
        0
    );
}

/// Under the key fence (the move held there) only the moving keys are refused: the
/// donor's other keys and every key of the receiver take writes; the move then finishes.
#[test]
fn under_the_key_fence_only_the_moving_keys_are_refused() {
    FLEET.sandbox();
    let _s = serial();
    // The top of shard 3's range goes down to shard 2 (the shard below it on its node).
    let bounds = lower_bounds();
    let start = bounds.iter().find(|(_, s)| *s == 3).unwrap().0.clone();
    let Key::Int(start) = start else { panic!() };
    let dir = tempfile::tempdir().unwrap();
    let range = format!("{start}..{}", start + 10000);
    let mut child = common::spawn_shardctl(
        &FLEET.inventory_path(),
        &[
            "move-keys",
            "--function",
            "f",
            "--range",
            &range,
            "--to-shard",
            "2",
        ],
        Some("pause=6@after:lock"),
        dir.path(),
        "held",
    );
    let deadline = Instant::now() + Duration::from_secs(120);
    let fenced = loop {
        assert!(Instant::now() < deadline, "the key fence never went up");
        if let Some(s) = child.try_wait().unwrap() {
            panic!(
                "the key move ended ({s}) before its fence was seen: {}",
                std::fs::read_to_string(dir.path().join("held.err")).unwrap()
            );
        }
        if insert("node2", "app_3", start + 1, 9001) == Err(1644) {
            break true;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(fenced);
    assert_eq!(
        insert("node2", "app_3", start + 10_001, 9002),
        Ok(()),
        "the donor's other keys"
    );
    assert_eq!(
        insert("node2", "app_2", 150_001, 9003),
        Ok(()),
        "the receiver's keys"
    );
    let status = common::wait_exit(&mut child, Duration::from_secs(120));
    assert!(
        status.success(),
        "{}",
        std::fs::read_to_string(dir.path().join("held.err")).unwrap()
    );
    assert_eq!(
        insert("node2", "app_2", start + 2, 9004),
        Ok(()),
        "moved: the receiver's now"
    );
}

/// A key move crashed under its fence: the moving keys stay refused; `abort` ends it with
/// the donor whole (the receiver's copy of the keys deleted, no guard or switch left); a
/// second one, crashed likewise, is resumed to its end.
#[test]
fn a_key_move_crashed_under_its_fence_ends_by_abort_or_resume() {
    FLEET.sandbox();
    let _s = serial();
    let before = rows_where_lookup_says();
    let crashed = |range: &str| {
        FLEET
            .cli(&[
                "move-keys",
                "--function",
                "f",
                "--range",
                range,
                "--to-shard",
                "1",
            ])
            .env("SHARDCTL_FAULT", "crash@after:lock")
            .assert()
            .failure();
        common::newest_op(&inventory()).unwrap().id
    };
    // The bottom of shard 2's range goes down to shard 1.
    let bounds = lower_bounds();
    let Key::Int(start) = bounds.iter().find(|(_, s)| *s == 2).unwrap().0.clone() else {
        panic!()
    };
    let range = format!("{start}..{}", start + 2000);
    let op = crashed(&range);
    assert_eq!(insert("node2", "app_2", start + 3, 8001), Err(1644));
    FLEET.cli(&["abort", &op.to_string()]).assert().success();
    assert_eq!(lower_bounds(), bounds, "nothing flipped");
    assert_eq!(insert("node2", "app_2", start + 3, 8002), Ok(()));
    assert_eq!(
        count(
            "node1",
            &format!("SELECT COUNT(*) FROM app_1.items WHERE k >= {start}")
        ),
        0,
        "the receiver's copy of the keys is gone"
    );
    assert_eq!(rows_where_lookup_says(), before + 1);

    let op = crashed(&range);
    FLEET.cli(&["resume", &op.to_string()]).assert().success();
    let after = lower_bounds();
    assert!(
        after.contains(&(Key::Int(start + 2000), 2)),
        "shard 2 starts 2000 keys higher: {after:?}"
    );
    assert_eq!(rows_where_lookup_says(), before + 1);
    assert_eq!(
        count(
            "node1",
            &format!(
                "SELECT COUNT(*) FROM app_1.items WHERE n = 8002 AND k = {}",
                start + 3
            )
        ),
        1,
        "the write made between the two moves moved with its key"
    );
}

/// A tenant of 100,000 rows (one list value) goes to another list shard on another node
/// under the workload; its rows follow it, the donor's other tenants stay.
#[test]
fn a_tenant_of_a_list_function_moves_to_another_shard_under_load() {
    FLEET.sandbox();
    let _s = serial();
    let before = common::items_are_where_lookup_says(FLEET.sandbox(), "t", "ten");
    let running = workloads_on("t");
    std::thread::sleep(Duration::from_millis(700));
    let v = summary(&[
        "move-keys",
        "--function",
        "t",
        "--keys",
        "acme",
        "--to-shard",
        "5",
    ]);
    std::thread::sleep(Duration::from_millis(700));
    check_workloads_on("t", running);
    assert_eq!(v["outcome"].as_str(), Some("moved_keys"), "{v}");
    assert_eq!(
        common::items_are_where_lookup_says(FLEET.sandbox(), "t", "ten"),
        before
    );
    assert_eq!(
        count(
            "node2",
            "SELECT COUNT(*) FROM ten_5.items WHERE k = 'acme' AND n <= 100000"
        ),
        100_000
    );
    assert_eq!(
        count("node1", "SELECT COUNT(*) FROM ten_4.items WHERE k = 'acme'"),
        0
    );
    assert!(count("node1", "SELECT COUNT(*) FROM ten_4.items WHERE k = 'beta'") >= 500);
}

/// The top quarter of one hash shard's arc goes to the shard after it on the ring, under
/// the workload.
#[test]
fn the_end_of_a_hash_arc_moves_to_its_ring_neighbour_under_load() {
    FLEET.sandbox();
    let _s = serial();
    let before = common::items_are_where_lookup_says(FLEET.sandbox(), "h", "hsh");
    let running = workloads_on("h");
    std::thread::sleep(Duration::from_millis(700));
    let v = summary(&[
        "move-keys",
        "--function",
        "h",
        "--arc",
        "a0000000000000000000000000000000..c0000000000000000000000000000000",
        "--to-shard",
        "7",
    ]);
    std::thread::sleep(Duration::from_millis(700));
    check_workloads_on("h", running);
    assert_eq!(v["outcome"].as_str(), Some("moved_keys"), "{v}");
    assert_eq!(
        common::items_are_where_lookup_says(FLEET.sandbox(), "h", "hsh"),
        before
    );
    let snap = Directory::open(&inventory()).unwrap().load().unwrap();
    let seven = snap.points.iter().find(|p| p.shard_id == 7).unwrap();
    assert_eq!(seven.point.to_hex(), "a0000000000000000000000000000000");
    assert_eq!(
        count(
            "node1",
            "SELECT COUNT(*) FROM hsh_6.items WHERE MD5(CAST(k + 0 AS CHAR)) > 'a0000000000000000000000000000000'"
        ),
        0,
        "the donor pruned the moved arc"
    );
}

#[test]
fn bad_key_moves_are_refused_in_one_line_and_change_nothing() {
    FLEET.sandbox();
    let _s = serial();
    let bounds = lower_bounds();
    let version = Directory::open(&inventory()).unwrap().version().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (
            &["--range", "10..20", "--to-shard", "2"],
            "lie inside shard 1's range",
        ),
        (
            &["--range", "50000..150000", "--to-shard", "2"],
            "span shards",
        ),
        (&["--range", "10..20", "--to-shard", "1"], "already owns"),
        (&["--range", "20..10", "--to-shard", "2"], "are empty"),
        (&["--keys", "a,b", "--to-shard", "2"], "is a range function"),
        (&["--range", "x..y", "--to-shard", "2"], "x"),
        (&["--range", "10..20", "--to-shard", "99"], "99"),
    ];
    for (args, says) in cases {
        let out = FLEET
            .cli(&[&["move-keys", "--function", "f"][..], args].concat())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    assert_eq!(lower_bounds(), bounds);
    assert_eq!(
        Directory::open(&inventory()).unwrap().version().unwrap(),
        version
    );
}

/// A key move carries the sharded tables' rows only: a table the directory does not map
/// that holds rows, a foreign key between a sharded table and one that is not, or a
/// trigger of the application's own on a receiver's moving table, is refused before
/// anything changes (one line, exit 5).
#[test]
fn a_key_move_refuses_rows_it_would_leave_behind() {
    FLEET.sandbox();
    let _s = serial();
    let Key::Int(end) = start_of(2) else { panic!() };
    let range = format!("{}..{end}", end - 100);
    let bounds = lower_bounds();
    let refused = |says: &str| {
        let out = FLEET
            .cli(&[
                "move-keys",
                "--function",
                "f",
                "--range",
                &range,
                "--to-shard",
                "2",
            ])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(5), "{out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(err.contains(says), "{err}");
        assert_eq!(lower_bounds(), bounds, "nothing flipped");
    };
    // The same table on both shards (their table sets must match), unmapped.
    let on_both = |sqls: &[&str]| {
        for (node, schema) in [("node1", "app_1"), ("node2", "app_2")] {
            let mut s = connect(FLEET.sandbox(), node);
            let sqls: Vec<String> = sqls.iter().map(|q| q.replace("SCHEMA", schema)).collect();
            let sqls: Vec<&str> = sqls.iter().map(String::as_str).collect();
            common::exec(&mut s, &sqls);
        }
    };
    let clean = || {
        on_both(&[
            "DROP TABLE IF EXISTS SCHEMA.extra",
            "DROP TABLE IF EXISTS SCHEMA.notes",
        ])
    };
    clean();
    on_both(&["CREATE TABLE SCHEMA.extra (k BIGINT NOT NULL PRIMARY KEY)"]);
    common::exec(
        &mut connect(FLEET.sandbox(), "node1"),
        &["INSERT INTO app_1.extra VALUES (1)"],
    );
    let unmapped = std::panic::catch_unwind(|| {
        refused("app_1.extra on node1 is neither sharded nor global and holds rows")
    });
    clean();
    on_both(&[
        "CREATE TABLE SCHEMA.notes (id INT NOT NULL PRIMARY KEY, k BIGINT NOT NULL, FOREIGN KEY (k) REFERENCES SCHEMA.items (k))",
    ]);
    let foreign = std::panic::catch_unwind(|| refused("has a foreign key to items"));
    clean();
    // A trigger of the application's own on a receiver's moving table would fire on the
    // stream's writes of rows the donor's triggers already wrote.
    let mut n2 = connect(FLEET.sandbox(), "node2");
    common::exec(
        &mut n2,
        &["CREATE TRIGGER app_2.items_touch BEFORE INSERT ON app_2.items FOR EACH ROW SET @touched = 1"],
    );
    let triggered =
        std::panic::catch_unwind(|| refused("app_2.items on node2 has trigger items_touch"));
    common::exec(&mut n2, &["DROP TRIGGER app_2.items_touch"]);
    unmapped.unwrap();
    foreign.unwrap();
    triggered.unwrap();
    // Nothing was left behind by the refusals: no operation, no switch.
    assert!(Directory::open(&inventory())
        .unwrap()
        .active_operations()
        .unwrap()
        .is_empty());
}
