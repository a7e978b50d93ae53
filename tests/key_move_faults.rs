//! The fault matrix of key moves (issue 28): a key move crashed at every boundary of its
//! effects (the points a plain key move passes, learned from its journal in each direction:
//! before an effect, after it, after its journal row, and after each step), then resumed or
//! aborted, converges exactly: the keys sit where the directory says (none lost, none
//! duplicated), an abort before the flip leaves the mapping as it was, one after it is
//! refused and resume goes forward, and no switch, switched guard or stream checkpoint is
//! left behind. `KEY_MOVE_FULL_MATRIX=1` runs every point; otherwise every third.

mod common;

use common::{connect, items_schema, serial, FleetSetup, Function, KeyKind, SharedFleet};
use shardctl::config::Inventory;
use shardctl::directory::{Directory, Key};
use shardctl::sandbox::Sandbox;
use shardctl::server::Stmt;
use std::time::Instant;

static FLEET: SharedFleet = SharedFleet::new(2, set_up);

/// Function `f` over `app`: shard 1 on node1 from 0 (a row every 5 keys of its first
/// 100000), shard 2 on node2 from 100000 (likewise).
fn set_up(sb: &Sandbox) {
    FleetSetup::new()
        .nodes(&["node1", "node2"])
        .schema(&items_schema("app", KeyKind::Int, false, false))
        .function(
            Function::range("f")
                .items("app")
                .shards(&[("node1", "0"), ("node2", "100000")]),
        )
        .rows(
            "node1",
            &["INSERT INTO app_1.items SELECT seq * 5, 1 FROM app_1.seq_0_to_19999"],
        )
        .rows(
            "node2",
            &["INSERT INTO app_2.items SELECT 100000 + seq * 5, 1 FROM app_2.seq_0_to_19999"],
        )
        .build(sb);
}

fn inventory() -> Inventory {
    common::inventory(FLEET.sandbox())
}

/// Shard 2's lower bound: the boundary the moves shift.
fn boundary() -> i64 {
    let snap = Directory::open(&inventory()).unwrap().load().unwrap();
    match snap
        .ranges
        .iter()
        .find(|r| r.shard_id == 2)
        .unwrap()
        .lower_bound
    {
        Key::Int(b) => b,
        Key::Str(_) => panic!("an integer function"),
    }
}

/// Which way the keys go: the top 500 of shard 1 up to shard 2, or the bottom 500 of
/// shard 2 down to shard 1.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Way {
    Up,
    Down,
}

fn args(way: Way) -> Vec<String> {
    let b = boundary();
    let (range, to) = match way {
        Way::Up => (format!("{}..{b}", b - 500), "2"),
        Way::Down => (format!("{b}..{}", b + 500), "1"),
    };
    [
        "move-keys",
        "--function",
        "f",
        "--range",
        &range,
        "--to-shard",
        to,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

fn count(node: &str, sql: &str) -> i64 {
    let mut s = connect(FLEET.sandbox(), node);
    s.first::<i64>(&Stmt::text(sql)).unwrap().unwrap_or(0)
}

/// Everything is where the directory says, nothing of a key move is left behind.
fn assert_converged(rows: usize, what: &str) {
    assert_eq!(
        common::items_are_where_lookup_says(FLEET.sandbox(), "f", "app"),
        rows,
        "{what}: a row lost or duplicated"
    );
    for node in ["node1", "node2"] {
        assert_eq!(
            count(node, "SELECT COUNT(*) FROM information_schema.TRIGGERS WHERE TRIGGER_NAME LIKE 'shardctl\\_switch\\_%'"),
            0,
            "{what}: a switched guard left on {node}"
        );
        for table in ["switches", "stream_checkpoints"] {
            let exists = count(node, &format!("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = '_shardctl' AND TABLE_NAME = '{table}'"));
            if exists > 0 {
                assert_eq!(
                    count(node, &format!("SELECT COUNT(*) FROM `_shardctl`.`{table}`")),
                    0,
                    "{what}: a row left in _shardctl.{table} on {node}"
                );
            }
        }
    }
    let active = Directory::open(&inventory())
        .unwrap()
        .active_operations()
        .unwrap();
    assert!(active.is_empty(), "{what}: {active:?} still active");
}

fn last_op() -> u64 {
    common::newest_op(&inventory()).unwrap().id
}

/// The fault points a plain key move passes going `way`, in order, from its journal.
fn points_of_a_plain_move(way: Way) -> Vec<String> {
    FLEET.cli(&strs(&args(way))).assert().success();
    let rec = Directory::open(&inventory())
        .unwrap()
        .operation(last_op())
        .unwrap();
    let mut points = Vec::new();
    let mut effects = rec.effects.iter().peekable();
    for step in &rec.steps {
        while let Some(e) = effects.next_if(|e| e.step_no == step.step_no) {
            for at in ["before", "done", "journaled"] {
                let p = format!("{at}:{}", e.effect.name());
                if !points.contains(&p) {
                    points.push(p);
                }
            }
        }
        points.push(format!("after:{}", step.name));
    }
    points
}

#[test]
fn a_key_move_crashed_anywhere_converges_by_resume_or_abort() {
    FLEET.sandbox();
    let _s = serial();
    let rows = common::items_are_where_lookup_says(FLEET.sandbox(), "f", "app");
    let full = std::env::var("KEY_MOVE_FULL_MATRIX").is_ok_and(|v| v == "1");
    let started = Instant::now();
    let mut runs = 0;
    for way in [Way::Up, Way::Down] {
        let points = points_of_a_plain_move(way);
        assert!(points.len() >= 20, "{way:?}: {points:?}");
        assert_converged(rows, &format!("a plain move {way:?}"));
        for (i, point) in points.iter().enumerate() {
            if !full && i % 3 != 0 {
                continue;
            }
            for verb in ["resume", "abort"] {
                let what = format!("{way:?}, crashed at {point}, then {verb}");
                let before = boundary();
                FLEET
                    .cli(&strs(&args(way)))
                    .env("SHARDCTL_FAULT", format!("crash@{point}"))
                    .assert()
                    .failure();
                let op = last_op().to_string();
                let flipped = boundary() != before;
                if verb == "abort" {
                    let aborted = FLEET.cli(&["abort", &op]).output().unwrap();
                    if flipped {
                        assert_eq!(aborted.status.code(), Some(5), "{what}: {aborted:?}");
                        FLEET.cli(&["resume", &op]).assert().success();
                        assert_ne!(boundary(), before, "{what}: only forward");
                    } else {
                        assert!(aborted.status.success(), "{what}: {aborted:?}");
                        assert_eq!(boundary(), before, "{what}: nothing flipped");
                    }
                } else {
                    FLEET.cli(&["resume", &op]).assert().success();
                    assert_ne!(boundary(), before, "{what}: the keys moved");
                }
                assert_converged(rows, &what);
                runs += 1;
            }
        }
    }
    println!(
        "key move fault matrix: {runs} crashes in {:.0} s",
        started.elapsed().as_secs_f64()
    );
}
