//! A merge across nodes runs a channel from the retired shard's node into the survivor's
//! with the retired schema's name rewritten to the survivor's: a statement run in the
//! retired schema during the catch-up (`USE shop_2; TRUNCATE orders`, a `RENAME`) would be
//! applied to the survivor's own table. On real servers: the channel's applier is gated
//! (it only runs up to where shardctl has read the source's binary log), so such a
//! statement stops the merge before its flip with the survivor's rows intact — also when
//! shardctl was killed mid-merge and the channel ran unattended meanwhile.

mod common;

use common::{
    connect, count, exec, inventory, newest_op, serial, FleetSetup, Function, SharedFleet,
};
use shardctl::directory::Directory;
use shardctl::sandbox::Sandbox;
use std::time::{Duration, Instant};

/// The survivor's own rows per shard.
const OWN_ROWS: i64 = 40;

/// Two nodes; `shop.orders` sharded by `k`. Shards: 1 node1 [0, 100), 2 node2 [100, 200),
/// 3 node1 [200, 300), 4 node2 [300, 400), 5 node1 [400, 500), 6 node2 [500, 10000),
/// 7 node1 [10000, 20000), 8 node2 [20000, ∞); `OWN_ROWS` rows in each, from its lower
/// bound.
static FLEET: SharedFleet = SharedFleet::new(2, set_up);

/// Sets up the fleet once, on first use (see [`FLEET`]).
fn set_up(sb: &Sandbox) {
    let shards = [
        ("node1", 1, 0),
        ("node2", 2, 100),
        ("node1", 3, 200),
        ("node2", 4, 300),
        ("node1", 5, 400),
        ("node2", 6, 500),
        ("node1", 7, 10000),
        ("node2", 8, 20000),
    ];
    let bounds: Vec<(&str, String)> = shards
        .iter()
        .map(|(node, _, low)| (*node, low.to_string()))
        .collect();
    let mut setup = FleetSetup::new().nodes(&["node1", "node2"]).schema(&[
        "CREATE DATABASE shop",
        "CREATE TABLE shop.orders (k BIGINT NOT NULL PRIMARY KEY, v INT NOT NULL)",
    ]);
    let mut function = Function::range("f").table("shop.orders", "k");
    for (node, low) in &bounds {
        function = function.shard(node, low);
    }
    setup = setup.function(function);
    for (node, shard, low) in shards {
        let values: Vec<String> = (low..low + OWN_ROWS)
            .map(|k| format!("({k}, {k})"))
            .collect();
        setup = setup.rows(
            node,
            &[format!(
                "INSERT INTO shop_{shard}.orders VALUES {}",
                values.join(", ")
            )],
        );
    }
    setup.build(sb);
}

fn shard_ids() -> Vec<u32> {
    let snap = Directory::open(&inventory(FLEET.sandbox()))
        .unwrap()
        .load()
        .unwrap();
    snap.shards.iter().map(|s| s.id).collect()
}

/// The survivor's rows of its own keys on node1 (during the merge its table also holds
/// the retired shard's): how many, and their sum of `v`.
fn survivor_rows(shard: u32) -> (i64, i64) {
    let mut n1 = connect(FLEET.sandbox(), "node1");
    let low = lower_bound(shard);
    let own = format!(
        "FROM shop_{shard}.orders WHERE k >= {low} AND k < {}",
        low + 100
    );
    (
        count(&mut n1, &format!("SELECT COUNT(*) {own}")),
        count(
            &mut n1,
            &format!("SELECT CAST(COALESCE(SUM(v), 0) AS SIGNED) {own}"),
        ),
    )
}

fn lower_bound(shard: u32) -> i64 {
    match shard {
        7 => 10000,
        8 => 20000,
        s => (s as i64 - 1) * 100,
    }
}

fn own_rows(shard: u32) -> (i64, i64) {
    let low = lower_bound(shard);
    (OWN_ROWS, (low..low + OWN_ROWS).sum())
}

/// `merge --shards SURVIVOR,RETIRED --to node1` with a manual cut-over, in the background.
fn spawn_merge(dir: &std::path::Path, survivor: u32, retired: u32) -> std::process::Child {
    spawn_merge_with_fault(dir, survivor, retired, None)
}

/// [`spawn_merge`] with `SHARDCTL_FAULT` set to `fault`.
fn spawn_merge_with_fault(
    dir: &std::path::Path,
    survivor: u32,
    retired: u32,
    fault: Option<&str>,
) -> std::process::Child {
    let playbook = include_str!("../playbooks/merge.yaml").replace(
        "  - step: lock ",
        "  - step: await-cutover\n    mode: manual\n    check_every_secs: 1\n  - step: lock ",
    );
    assert!(playbook.contains("await-cutover"), "{playbook}");
    let path = common::write_file(dir, "merge.yaml", &playbook);
    common::spawn_shardctl(
        &FLEET.inventory_path(),
        &[
            "merge",
            "--shards",
            &format!("{survivor},{retired}"),
            "--to",
            "node1",
            "--playbook",
            path.to_str().unwrap(),
        ],
        fault,
        dir,
        "merge",
    )
}

/// Waits until the newest operation runs its await-cutover step; its id.
fn until_waiting_for_cutover() -> u64 {
    let deadline = Instant::now() + Duration::from_secs(120);
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
        assert!(Instant::now() < deadline, "never waited: {op:?}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Stopped before the flip: exit 5, one line naming the retired schema and the
/// statement, the retired shard still in the directory, the survivor's rows intact.
fn stopped_before_the_flip(code: Option<i32>, err: &str, survivor: u32, retired: u32, what: &str) {
    assert_eq!(survivor_rows(survivor), own_rows(survivor), "{err}");
    assert_eq!(code, Some(5), "{err}");
    let line = err
        .lines()
        .find(|l| l.contains("retired schema"))
        .unwrap_or_else(|| panic!("no line names the retired schema: {err}"));
    assert!(line.contains(&format!("shop_{retired}")), "{line}");
    assert!(line.to_lowercase().contains(what), "{line}");
    assert!(line.contains("mysql-bin."), "the position: {line}");
    assert!(
        shard_ids().contains(&retired),
        "shard {retired} was merged away"
    );
}

#[test]
fn a_truncate_in_the_retired_schema_during_the_catch_up_stops_the_merge_with_the_survivor_intact() {
    let _s = serial();
    let dir = tempfile::tempdir().unwrap();
    let mut merge = spawn_merge(dir.path(), 1, 2);
    let op = until_waiting_for_cutover();
    // The application empties the retired shard's table, as it may any table of its own.
    let mut n2 = connect(FLEET.sandbox(), "node2");
    exec(&mut n2, &["USE shop_2", "TRUNCATE orders"]);
    exec(&mut n2, &["INSERT INTO shop_2.orders VALUES (150, 1)"]);
    std::thread::sleep(Duration::from_secs(3));
    // The go-ahead: a merge that did not see the statement flips now.
    let _ = FLEET.cli(&["cutover", &op.to_string()]).output();
    let status = common::wait_exit(&mut merge, Duration::from_secs(120));
    let err = std::fs::read_to_string(dir.path().join("merge.err")).unwrap();
    stopped_before_the_flip(status.code(), &err, 1, 2, "truncate");
    // Stopped, not lost: `resume` stops on it again, `abort` leaves both shards as they were.
    let out = FLEET.cli(&["resume", &op.to_string()]).output().unwrap();
    assert_eq!(out.status.code(), Some(5), "{out:?}");
    FLEET.cli(&["abort", &op.to_string()]).assert().success();
    assert_eq!(survivor_rows(1), own_rows(1));
    assert_eq!(
        count(&mut n2, "SELECT COUNT(*) FROM shop_2.orders"),
        1,
        "the retired shard keeps its rows"
    );
}

#[test]
fn a_rename_in_the_retired_schema_while_shardctl_is_killed_mid_merge_never_reaches_the_survivor() {
    let _s = serial();
    let dir = tempfile::tempdir().unwrap();
    let mut merge = spawn_merge(dir.path(), 3, 4);
    let op = until_waiting_for_cutover();
    // The box running shardctl dies; the channel it set up is left to itself.
    merge.kill().unwrap();
    merge.wait().unwrap();
    let mut n2 = connect(FLEET.sandbox(), "node2");
    exec(
        &mut n2,
        &[
            "INSERT INTO shop_4.orders VALUES (390, 1)",
            "USE shop_4",
            "RENAME TABLE orders TO orders_old",
            "CREATE TABLE orders LIKE orders_old",
            "INSERT INTO orders SELECT * FROM orders_old",
        ],
    );
    std::thread::sleep(Duration::from_secs(3));
    // Unattended, the channel did not rename the survivor's table.
    assert_eq!(survivor_rows(3), own_rows(3));
    // The resumed run reads the channel as it stands and stops on the statement.
    let resumed = FLEET.cli(&["resume", &op.to_string()]).output().unwrap();
    let err = String::from_utf8_lossy(&resumed.stderr).to_string();
    stopped_before_the_flip(resumed.status.code(), &err, 3, 4, "rename table");
    FLEET.cli(&["abort", &op.to_string()]).assert().success();
    assert_eq!(survivor_rows(3), own_rows(3));
}

#[test]
fn a_crash_right_after_the_gate_opens_then_resume_carries_every_row() {
    let _s = serial();
    let dir = tempfile::tempdir().unwrap();
    let mut merge = spawn_merge_with_fault(dir.path(), 5, 6, Some("crash@done:gate-applier"));
    let mut n2 = connect(FLEET.sandbox(), "node2");
    // Writes after the copy: the gate opens for them during the catch-up, and shardctl
    // dies with the applier let go but the effect not journaled.
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut k = 550;
    while merge.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "the gate never opened");
        exec(
            &mut n2,
            &[&format!("INSERT INTO shop_6.orders VALUES ({k}, {k})")],
        );
        k += 1;
        std::thread::sleep(Duration::from_millis(200));
    }
    let crashed = std::fs::read_to_string(dir.path().join("merge.err")).unwrap();
    let op = newest_op(&inventory(FLEET.sandbox()))
        .unwrap_or_else(|| panic!("no operation journaled: {crashed}"))
        .id;
    exec(
        &mut n2,
        &[&format!("INSERT INTO shop_6.orders VALUES ({k}, {k})")],
    );
    let mut resumed = common::spawn_shardctl(
        &FLEET.inventory_path(),
        &["resume", &op.to_string()],
        None,
        dir.path(),
        "resume",
    );
    assert_eq!(until_waiting_for_cutover(), op);
    FLEET.cli(&["cutover", &op.to_string()]).assert().success();
    let status = common::wait_exit(&mut resumed, Duration::from_secs(120));
    let err = std::fs::read_to_string(dir.path().join("resume.err")).unwrap();
    assert!(status.success(), "{err}");
    assert!(!shard_ids().contains(&6), "shard 6 merged");
    assert_eq!(survivor_rows(5), own_rows(5));
    let mut n1 = connect(FLEET.sandbox(), "node1");
    let carried = count(&mut n1, "SELECT COUNT(*) FROM shop_5.orders WHERE k >= 500");
    assert_eq!(carried, OWN_ROWS + (k - 550 + 1), "every row of shard 6");
}

#[test]
fn a_truncate_in_the_retired_schema_just_before_the_fence_stops_the_merge_under_it() {
    let _s = serial();
    let dir = tempfile::tempdir().unwrap();
    // The run stops for a moment once its fence's intent is journaled, before the fence.
    let mut merge = spawn_merge_with_fault(dir.path(), 7, 8, Some("pause=6@before:raise-fence"));
    let op = until_waiting_for_cutover();
    FLEET.cli(&["cutover", &op.to_string()]).assert().success();
    let deadline = Instant::now() + Duration::from_secs(60);
    while newest_op(&inventory(FLEET.sandbox()))
        .unwrap()
        .last_effect("raise-fence")
        .is_none()
    {
        assert!(Instant::now() < deadline, "the fence never came");
        std::thread::sleep(Duration::from_millis(100));
    }
    // Logged after the catch-up's last gate, before the final position: only the final
    // wait, under the fence, reads it.
    let mut n2 = connect(FLEET.sandbox(), "node2");
    exec(&mut n2, &["USE shop_8", "TRUNCATE orders"]);
    let status = common::wait_exit(&mut merge, Duration::from_secs(120));
    let err = std::fs::read_to_string(dir.path().join("merge.err")).unwrap();
    stopped_before_the_flip(status.code(), &err, 7, 8, "truncate");
    // It stopped in the final wait, under the fence, which it then lifted.
    let rec = newest_op(&inventory(FLEET.sandbox())).unwrap();
    for effect in ["raise-fence", "lower-fence"] {
        assert!(rec.last_effect(effect).is_some(), "{effect}: {rec:?}");
    }
    assert!(rec.last_effect("flip").is_none(), "{rec:?}");
    FLEET.cli(&["abort", &op.to_string()]).assert().success();
    assert_eq!(survivor_rows(7), own_rows(7));
}

#[test]
fn an_applier_started_without_a_gate_stops_the_merge_before_its_flip() {
    let _s = serial();
    let dir = tempfile::tempdir().unwrap();
    let mut merge = spawn_merge(dir.path(), 1, 2);
    let op = until_waiting_for_cutover();
    // Someone starts the channel's applier by hand (as a restart of the target does): it
    // applies whatever the retired side logs, unread.
    let channel = common::op_names(&inventory(FLEET.sandbox()), op).channel(op);
    let mut n1 = connect(FLEET.sandbox(), "node1");
    exec(&mut n1, &[&format!("START SLAVE '{channel}' SQL_THREAD")]);
    let _ = FLEET.cli(&["cutover", &op.to_string()]).output();
    let status = common::wait_exit(&mut merge, Duration::from_secs(120));
    let err = std::fs::read_to_string(dir.path().join("merge.err")).unwrap();
    assert_eq!(status.code(), Some(5), "{err}");
    assert!(err.contains("without a gate"), "{err}");
    assert!(shard_ids().contains(&2), "shard 2 was merged away");
    assert!(
        newest_op(&inventory(FLEET.sandbox()))
            .unwrap()
            .last_effect("flip")
            .is_none(),
        "it flipped"
    );
    FLEET.cli(&["abort", &op.to_string()]).assert().success();
    assert_eq!(survivor_rows(1), own_rows(1));
}
