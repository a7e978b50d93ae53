//! Tables the directory does not map (neither sharded nor global), on real servers: a
//! merge is refused before any change while the retired shard's copy of one holds rows
//! the survivor's does not hold the same (it carries only the sharded tables' rows and
//! drops the retired schemas), and goes ahead once that copy is empty; a row written into
//! it during the merge stops the merge under the fence, before its flip; a move carries
//! such a table whole; a split copies it whole to both sides.

mod common;

use common::{
    connect, count, exec, inventory, newest_op, serial, FleetSetup, Function, SharedFleet,
};
use shardctl::directory::Directory;
use shardctl::sandbox::Sandbox;

/// Two nodes; `shop.orders` sharded by `k`; `shop.notes` (added by the application,
/// never registered) and `shop.kinds` (a reference table every shard holds the same,
/// never registered) unmapped. Shards: 1 node1 [0, 100), 2 node1 [100, 200), 3 node2
/// [200, 300), 4 node2 [300, 400), 5 node1 [400, ∞).
static FLEET: SharedFleet = SharedFleet::new(2, set_up);

/// Sets up the fleet once, on first use (see [`FLEET`]).
fn set_up(sb: &Sandbox) {
    let mut setup = FleetSetup::new()
        .nodes(&["node1", "node2"])
        .schema(&[
            "CREATE DATABASE shop",
            "CREATE TABLE shop.orders (k BIGINT NOT NULL PRIMARY KEY, v INT NOT NULL)",
            "CREATE TABLE shop.notes (id INT PRIMARY KEY, body VARCHAR(64) NOT NULL)",
            "CREATE TABLE shop.kinds (id INT PRIMARY KEY)",
            "INSERT INTO shop.kinds VALUES (1), (2)",
        ])
        .function(Function::range("f").table("shop.orders", "k").shards(&[
            ("node1", "0"),
            ("node1", "100"),
            ("node2", "200"),
            ("node2", "300"),
            ("node1", "400"),
        ]));
    for (node, shard, k) in [
        ("node1", 1, 50),
        ("node1", 2, 150),
        ("node2", 3, 250),
        ("node2", 4, 350),
        ("node1", 5, 450),
    ] {
        setup = setup.rows(
            node,
            &[format!("INSERT INTO shop_{shard}.orders VALUES ({k}, 1)")],
        );
    }
    setup.build(sb);
}

/// The shards as (id, node), in the directory's order.
fn shards() -> Vec<(u32, String)> {
    let snap = Directory::open(&inventory(FLEET.sandbox()))
        .unwrap()
        .load()
        .unwrap();
    snap.shards.iter().map(|s| (s.id, s.node.clone())).collect()
}

fn newest_op_id() -> Option<u64> {
    newest_op(&inventory(FLEET.sandbox())).map(|o| o.id)
}

/// `merge` refused with exit 5, one line naming `culprit`, nothing changed: the directory,
/// the journal and the rows of `shop_<retired>`.
fn refused(args: &[&str], culprit: &str, retired: u32, node: &str) -> String {
    let (before, op) = (shards(), newest_op_id());
    let mut n = connect(FLEET.sandbox(), node);
    let rows = |n: &mut shardctl::server::Server| {
        (
            count(n, &format!("SELECT COUNT(*) FROM shop_{retired}.orders")),
            count(n, &format!("SELECT COUNT(*) FROM shop_{retired}.notes")),
            count(n, &format!("SELECT COUNT(*) FROM shop_{retired}.kinds")),
        )
    };
    let held = rows(&mut n);
    let out = FLEET.cli(args).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(5), "{out:?}");
    assert!(err.contains(culprit), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert_eq!(shards(), before, "the directory changed");
    assert_eq!(newest_op_id(), op, "an operation was journaled");
    assert_eq!(rows(&mut n), held, "the retired shard's rows changed");
    err
}

#[test]
fn a_merge_on_one_node_is_refused_while_an_unmapped_table_holds_rows_then_goes_ahead_once_empty() {
    let _s = serial();
    let mut n1 = connect(FLEET.sandbox(), "node1");
    exec(
        &mut n1,
        &["INSERT INTO shop_2.notes VALUES (7, 'written by the application')"],
    );
    let args = ["merge", "--shards", "1,2", "--to", "node1"];
    let err = refused(&args, "shop_2.notes", 2, "node1");
    assert!(err.contains("neither as sharded nor as global"), "{err}");
    // The check and the dry run refuse it too.
    for extra in ["--check", "--dry-run"] {
        let mut with = args.to_vec();
        with.push(extra);
        refused(&with, "shop_2.notes", 2, "node1");
    }
    // Emptied, it is dropped with the retired schema: no row lost. `kinds`, unmapped too,
    // holds the same rows on both shards (shard add filled it from the template).
    exec(&mut n1, &["DELETE FROM shop_2.notes"]);
    FLEET.cli(&args).assert().success();
    // Other tests on this fleet add shards (the split makes shard 6), in no fixed order.
    let left = shards().iter().map(|s| s.0).collect::<Vec<_>>();
    assert!(left.contains(&1) && !left.contains(&2), "{left:?}");
    assert_eq!(
        count(
            &mut n1,
            "SELECT COUNT(*) FROM shop_1.orders WHERE k IN (50, 150)"
        ),
        2
    );
    assert_eq!(count(&mut n1, "SELECT COUNT(*) FROM shop_1.kinds"), 2);
    assert_eq!(
        count(
            &mut n1,
            "SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = 'shop_2'"
        ),
        0
    );
}

#[test]
fn a_merge_across_nodes_is_refused_while_an_unmapped_table_differs_from_the_survivors() {
    let _s = serial();
    let mut n2 = connect(FLEET.sandbox(), "node2");
    let args = ["merge", "--shards", "5,4", "--to", "node1"];
    exec(
        &mut n2,
        &["INSERT INTO shop_4.notes VALUES (1, 'only here')"],
    );
    refused(&args, "shop_4.notes", 4, "node2");
    exec(&mut n2, &["DELETE FROM shop_4.notes"]);
    // A table every shard holds the same is no loss; one row more on the retired side is.
    exec(&mut n2, &["INSERT INTO shop_4.kinds VALUES (3)"]);
    let err = refused(&args, "shop_4.kinds", 4, "node2");
    assert!(err.contains("does not hold the same rows"), "{err}");
    exec(&mut n2, &["DELETE FROM shop_4.kinds WHERE id = 3"]);
}

#[test]
fn a_move_carries_an_unmapped_table_whole_and_a_split_copies_it_to_both_sides() {
    let _s = serial();
    let mut n2 = connect(FLEET.sandbox(), "node2");
    exec(
        &mut n2,
        &["INSERT INTO shop_3.notes VALUES (1, 'a'), (2, 'b')"],
    );
    FLEET
        .cli(&["move", "--shard", "3", "--to", "node1"])
        .assert()
        .success();
    let mut n1 = connect(FLEET.sandbox(), "node1");
    assert_eq!(count(&mut n1, "SELECT COUNT(*) FROM shop_3.notes"), 2);
    // The verification compared it like every other table, and the channel carried the
    // whole schema.
    let op = newest_op(&inventory(FLEET.sandbox())).unwrap();
    let verified = op
        .steps
        .iter()
        .find(|s| s.name == "verify")
        .map(|s| s.outputs["verified_point"]["tables"].clone())
        .unwrap_or_default();
    assert_eq!(
        verified,
        serde_json::json!(["shop_3.kinds", "shop_3.notes", "shop_3.orders"])
    );
    let filter = op
        .last_effect("set-filters")
        .map(|e| e.detail["wild_do_table"].clone());
    assert_eq!(filter, Some(serde_json::json!(["shop_3"])));
    // A split copies it whole to the new shard; neither side prunes it.
    FLEET
        .cli(&["split", "--shard", "3", "--to", "node2", "--at", "260"])
        .assert()
        .success();
    let new = shards().into_iter().map(|s| s.0).max().unwrap();
    assert_eq!(count(&mut n1, "SELECT COUNT(*) FROM shop_3.notes"), 2);
    assert_eq!(
        count(&mut n2, &format!("SELECT COUNT(*) FROM shop_{new}.notes")),
        2
    );
}

/// Waits until the newest operation runs its await-cutover step; its id.
fn until_waiting_for_cutover() -> u64 {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    loop {
        let op = newest_op(&inventory(FLEET.sandbox()));
        if let Some(op) = &op {
            let next = op.steps.iter().find(|s| s.state.as_sql() != "done");
            if op.state.as_sql() == "running"
                && next.is_some_and(|s| s.name == "await-cutover" && s.state.as_sql() == "running")
            {
                return op.id;
            }
        }
        assert!(std::time::Instant::now() < deadline, "never waited: {op:?}");
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}

#[test]
fn a_row_written_into_an_empty_unmapped_table_during_a_merge_stops_it_before_the_flip() {
    let _s = serial();
    let dir = tempfile::tempdir().unwrap();
    // The merge playbook with a manual cut-over: copied, verified, then waiting unfenced.
    let playbook = include_str!("../playbooks/merge.yaml").replace(
        "  - step: lock ",
        "  - step: await-cutover\n    mode: manual\n  - step: lock ",
    );
    assert!(playbook.contains("await-cutover"), "{playbook}");
    let path = common::write_file(dir.path(), "merge.yaml", &playbook);
    let mut merge = common::spawn_shardctl(
        &FLEET.inventory_path(),
        &[
            "merge",
            "--shards",
            "5,4",
            "--to",
            "node1",
            "--playbook",
            path.to_str().unwrap(),
        ],
        None,
        dir.path(),
        "merge",
    );
    let op = until_waiting_for_cutover();
    // The application writes into the retired shard's empty, unmapped table.
    let mut n2 = connect(FLEET.sandbox(), "node2");
    exec(&mut n2, &["INSERT INTO shop_4.notes VALUES (9, 'late')"]);
    FLEET.cli(&["cutover", &op.to_string()]).assert().success();
    let status = common::wait_exit(&mut merge, std::time::Duration::from_secs(120));
    let err = std::fs::read_to_string(dir.path().join("merge.err")).unwrap();
    assert_eq!(status.code(), Some(5), "{err}");
    assert!(err.contains("shop_4.notes"), "{err}");
    // Stopped before its flip: shard 4 keeps its location, its schema and the row.
    assert!(shards().iter().any(|s| s.0 == 4), "shard 4 was merged away");
    assert_eq!(
        count(&mut n2, "SELECT COUNT(*) FROM shop_4.notes WHERE id = 9"),
        1
    );
    FLEET.cli(&["abort", &op.to_string()]).assert().success();
    exec(&mut n2, &["DELETE FROM shop_4.notes"]);
}
