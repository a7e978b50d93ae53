//! The switch fence (`--fence switch`) on real servers: a move and a split under the
//! workload (fresh and stale routers) lose no acknowledged write and write nothing to a
//! shard not owning its key; the move leaves no guard or switch behind, the split leaves
//! literal guards refusing the keys it gave away; a crash under the fence keeps it up, and
//! both `abort` and `resume` end it cleanly.

mod common;

use common::{app_items_two_shards, connect, serial, SharedFleet};
use shardctl::config::Inventory;
use shardctl::directory::Directory;
use shardctl::sandbox::Sandbox;
use shardctl::server::{Server, Stmt};
use shardctl::workload;
use std::time::Duration;

static FLEET: SharedFleet = SharedFleet::new(3, set_up);

fn set_up(sb: &Sandbox) {
    app_items_two_shards(20_000).build(sb);
}

fn inventory() -> Inventory {
    common::inventory(FLEET.sandbox())
}

fn home_of(shard: u32) -> String {
    Directory::open(&inventory())
        .unwrap()
        .load()
        .unwrap()
        .shard(shard)
        .unwrap()
        .node
        .clone()
}

/// A node the shard does not live on.
fn elsewhere(shard: u32) -> String {
    let home = home_of(shard);
    ["node1", "node2", "node3"]
        .into_iter()
        .find(|n| *n != home)
        .unwrap()
        .to_string()
}

fn count(server: &mut Server, sql: &str) -> i64 {
    server.first::<i64>(&Stmt::text(sql)).unwrap().unwrap_or(0)
}

/// shardctl's switched guards and switch rows on every node (a row or trigger left by
/// another test's operation counts too: each test must leave none).
fn switch_leftovers() -> (i64, i64) {
    let (mut triggers, mut rows) = (0, 0);
    for node in ["node1", "node2", "node3"] {
        let mut s = connect(FLEET.sandbox(), node);
        triggers += count(
            &mut s,
            "SELECT COUNT(*) FROM information_schema.TRIGGERS WHERE TRIGGER_NAME LIKE 'shardctl\\_switch\\_%'",
        );
        let control = count(
            &mut s,
            "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = '_shardctl' AND TABLE_NAME = 'switches'",
        );
        if control > 0 {
            rows += count(&mut s, "SELECT COUNT(*) FROM `_shardctl`.`switches`");
        }
    }
    (triggers, rows)
}

fn workloads() -> Vec<(workload::Running, &'static str)> {
    [("fresh", false), ("stale", true)]
        .into_iter()
        .map(|(name, stale_router)| {
            let running = workload::spawn(
                inventory(),
                workload::Options {
                    rate: 150,
                    stale_router,
                    ..workload::Options::new("f")
                },
            )
            .unwrap();
            (running, name)
        })
        .collect()
}

fn check_workloads(running: Vec<(workload::Running, &'static str)>) {
    for (running, name) in running {
        let mut report = running.stop().unwrap();
        let check = report.check(&inventory(), "f").unwrap();
        assert!(check.missing.is_empty(), "{name}: lost {:?}", check.missing);
        assert_eq!(
            report.wrong_shard_writes, 0,
            "{name}: {:?}",
            check.wrong_shard
        );
        assert!(report.acked > 50, "{name}: the workload ran");
    }
}

/// The summary event of a command run with `--output json`.
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

/// An insert of key `k` straight into `schema` on `node`: Ok, or the server's error code.
fn insert(node: &str, schema: &str, k: i64) -> Result<(), u16> {
    let mut s = connect(FLEET.sandbox(), node);
    match s.exec(&Stmt::text(format!(
        "INSERT INTO {schema}.items (k, n) VALUES ({k}, 424242)"
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
fn a_move_under_the_switch_fence_loses_no_write_and_leaves_no_guard() {
    FLEET.sandbox();
    let _s = serial();
    let to = elsewhere(1);
    let running = workloads();
    std::thread::sleep(Duration::from_millis(700));
    let v = summary(&["move", "--shard", "1", "--to", &to, "--fence", "switch"]);
    std::thread::sleep(Duration::from_millis(700));
    check_workloads(running);
    assert_eq!(v["outcome"].as_str(), Some("moved"), "{v}");
    assert!(v["fence_ms"].as_u64().is_some(), "{v}");
    assert_eq!(home_of(1), to);
    assert_eq!(switch_leftovers(), (0, 0));
    assert_eq!(insert(&to, "app_1", 99_000), Ok(()));
}

#[test]
fn a_split_under_the_switch_fence_guards_the_keys_it_gave_away() {
    FLEET.sandbox();
    let _s = serial();
    let home = home_of(2);
    let to = elsewhere(2);
    let running = workloads();
    std::thread::sleep(Duration::from_millis(700));
    let v = summary(&[
        "split", "--shard", "2", "--to", &to, "--at", "150000", "--fence", "switch",
    ]);
    std::thread::sleep(Duration::from_millis(700));
    check_workloads(running);
    assert_eq!(v["outcome"].as_str(), Some("split"), "{v}");
    let new = v["new_shard"].as_u64().unwrap();
    assert_eq!(switch_leftovers(), (0, 0));
    // The old shard refuses the keys it gave away through its literal guards, and takes
    // its own.
    let mut s = connect(FLEET.sandbox(), &home);
    assert_eq!(
        count(
            &mut s,
            "SELECT COUNT(*) FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = 'app_2' AND TRIGGER_NAME LIKE 'shardctl\\_guard\\_%'"
        ),
        6,
        "three guards on each of items and shardctl_workload"
    );
    assert_eq!(insert(&home, "app_2", 160_001), Err(1644));
    assert_eq!(insert(&home, "app_2", 120_001), Ok(()));
    assert_eq!(insert(&to, &format!("app_{new}"), 160_001), Ok(()));
}

/// A move crashed right after its switch fence went up: the shard's writes stay refused
/// (nothing flips on them, nothing is lost); `abort` lowers the fence and removes every
/// switched guard; a second crashed move resumes to its end, leaving none either.
#[test]
fn a_crash_under_the_switch_fence_keeps_it_up_until_abort_or_resume() {
    FLEET.sandbox();
    let _s = serial();
    let home = home_of(1);
    let to = elsewhere(1);
    let crashed = |fault: &str| {
        FLEET
            .cli(&["move", "--shard", "1", "--to", &to, "--fence", "switch"])
            .env("SHARDCTL_FAULT", fault)
            .assert()
            .failure();
        common::newest_op(&inventory()).unwrap().id
    };
    let op = crashed("crash@after:lock");
    assert_eq!(
        insert(&home, "app_1", 99_777),
        Err(1644),
        "the fence stands after the crash"
    );
    FLEET.cli(&["abort", &op.to_string()]).assert().success();
    assert_eq!(home_of(1), home);
    assert_eq!(switch_leftovers(), (0, 0));
    assert_eq!(insert(&home, "app_1", 99_778), Ok(()));

    let op = crashed("crash@journaled:raise-fence");
    assert_eq!(insert(&home, "app_1", 99_779), Err(1644));
    FLEET.cli(&["resume", &op.to_string()]).assert().success();
    assert_eq!(home_of(1), to);
    assert_eq!(switch_leftovers(), (0, 0));
    let mut target = connect(FLEET.sandbox(), &to);
    assert_eq!(
        count(
            &mut target,
            "SELECT COUNT(*) FROM app_1.items WHERE n = 424242 AND k IN (99777, 99778, 99779)"
        ),
        1,
        "the refused write is not there, the accepted one is"
    );
}

/// Triggers guard rows, not DDL: a TRUNCATE run under the switch fence (after the final
/// position) is found in the source's binary log and refuses the flip; the fence stays up,
/// and abort leaves the shard whole on its source, its rows as the TRUNCATE left them.
#[test]
fn a_statement_run_under_the_switch_fence_refuses_the_flip() {
    FLEET.sandbox();
    let _s = serial();
    let home = home_of(1);
    let to = elsewhere(1);
    let dir = tempfile::tempdir().unwrap();
    let mut child = common::spawn_shardctl(
        &FLEET.inventory_path(),
        &["move", "--shard", "1", "--to", &to, "--fence", "switch"],
        Some("pause=4@after:wait"),
        dir.path(),
        "held",
    );
    // The second wait is the final one, under the fence: wait for the fence, then run a
    // statement no trigger sees.
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    loop {
        assert!(
            std::time::Instant::now() < deadline,
            "the fence never went up"
        );
        if let Some(s) = child.try_wait().unwrap() {
            panic!(
                "the move ended ({s}) first: {}",
                std::fs::read_to_string(dir.path().join("held.err")).unwrap()
            );
        }
        if insert(&home, "app_1", 99_555) == Err(1644) {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut s = connect(FLEET.sandbox(), &home);
    s.exec(&Stmt::text("TRUNCATE TABLE app_1.shardctl_workload"))
        .unwrap();
    let status = common::wait_exit(&mut child, Duration::from_secs(120));
    assert_eq!(
        status.code(),
        Some(5),
        "{}",
        std::fs::read_to_string(dir.path().join("held.err")).unwrap()
    );
    let err = std::fs::read_to_string(dir.path().join("held.err")).unwrap();
    assert!(err.contains("under the switch fence"), "{err}");
    assert_eq!(home_of(1), home, "nothing flipped");
    let op = common::newest_op(&inventory()).unwrap().id;
    FLEET.cli(&["abort", &op.to_string()]).assert().success();
    assert_eq!(switch_leftovers(), (0, 0));
    assert_eq!(insert(&home, "app_1", 99_556), Ok(()));
}

/// The application's own BEFORE triggers on shard 1's `items`, one for each event (with an
/// event left without one, the guard created for it would make the server prepare the
/// statements again and hide what the test looks for), dropped again, with the rows the
/// test wrote, wherever the shard is when the test ends, passed or not (the fleet is
/// shared).
struct OwnTriggers;

const OWN_TRIGGERS: [&str; 3] = ["own_items_bi", "own_items_bu", "own_items_bd"];

impl OwnTriggers {
    fn create(node: &str) -> Self {
        let mut s = connect(FLEET.sandbox(), node);
        for (name, event, body) in OWN_TRIGGERS
            .into_iter()
            .zip([
                ("INSERT", "SET NEW.n = NEW.n"),
                ("UPDATE", "SET NEW.n = NEW.n"),
                ("DELETE", "SET @own_items_deleted = OLD.k"),
            ])
            .map(|(n, (e, b))| (n, e, b))
        {
            s.exec(&Stmt::text(format!(
                "CREATE TRIGGER app_1.{name} BEFORE {event} ON app_1.items FOR EACH ROW {body}"
            )))
            .unwrap();
        }
        OwnTriggers
    }
}

impl Drop for OwnTriggers {
    fn drop(&mut self) {
        let mut s = connect(FLEET.sandbox(), &home_of(1));
        for name in OWN_TRIGGERS {
            s.exec(&Stmt::text(format!("DROP TRIGGER IF EXISTS app_1.{name}")))
                .unwrap();
        }
        s.exec(&Stmt::text("DELETE FROM app_1.items WHERE n = 515151"))
            .unwrap();
    }
}

/// A shard whose table has BEFORE triggers of the application's own, and a client holding
/// statements it prepared there before the move:
/// - once the switched guards are armed (the move crashed right after arming them, before
///   any fence), the prepared statements go on running. Appended behind the table's own
///   trigger, a guard that reads the switch table makes MariaDB fail every later execution
///   of those statements with error 1146 until they are prepared again (MDEV-26048); the
///   guard goes ahead of the table's first trigger instead;
/// - resumed, the move ends: its confirmation compares the triggers' order among the
///   shard's own (the guards ahead of them moved them one place down on the source only),
///   and the target has them in the same order.
#[test]
fn statements_prepared_on_a_table_with_its_own_triggers_still_run_once_the_guards_are_armed() {
    FLEET.sandbox();
    let _s = serial();
    let home = home_of(1);
    let to = elsewhere(1);
    let _own = OwnTriggers::create(&home);
    let mut client = connect(FLEET.sandbox(), &home);
    let insert = |k: i64| {
        Stmt::with(
            "INSERT INTO app_1.items (k, n) VALUES (?, ?)",
            vec![k.into(), 515151.into()],
        )
    };
    let update = |k: i64| {
        Stmt::with(
            "UPDATE app_1.items SET n = ? WHERE k = ?",
            vec![515151.into(), k.into()],
        )
    };
    let delete = |k: i64| {
        Stmt::with(
            "DELETE FROM app_1.items WHERE k = ? AND n = ?",
            vec![k.into(), 515151.into()],
        )
    };
    client.exec(&insert(99_601)).unwrap();
    client.exec(&update(99_601)).unwrap();
    client.exec(&delete(99_600)).unwrap();
    FLEET
        .cli(&["move", "--shard", "1", "--to", &to, "--fence", "switch"])
        .env("SHARDCTL_FAULT", "crash@done:arm-switch")
        .assert()
        .failure()
        .stderr(predicates::str::contains("fault point done:arm-switch"));
    let op = common::newest_op(&inventory()).unwrap().id;
    let mut s = connect(FLEET.sandbox(), &home);
    assert_eq!(
        count(
            &mut s,
            "SELECT COUNT(*) FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = 'app_1' AND TRIGGER_NAME LIKE 'shardctl\\_switch\\_%'"
        ),
        6,
        "the guards are armed on items and shardctl_workload"
    );
    client
        .exec(&insert(99_602))
        .expect("a prepared INSERT runs with the guards armed");
    client
        .exec(&update(99_602))
        .expect("a prepared UPDATE runs with the guards armed");
    client
        .exec(&delete(99_600))
        .expect("a prepared DELETE runs with the guards armed");
    FLEET.cli(&["resume", &op.to_string()]).assert().success();
    assert_eq!(home_of(1), to);
    assert_eq!(switch_leftovers(), (0, 0));
    let mut target = connect(FLEET.sandbox(), &to);
    assert_eq!(
        count(
            &mut target,
            "SELECT COUNT(*) FROM app_1.items WHERE n = 515151 AND k IN (99601, 99602)"
        ),
        2
    );
    assert_eq!(
        count(
            &mut target,
            "SELECT COUNT(*) FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = 'app_1' AND TRIGGER_NAME LIKE 'own\\_items\\_%' AND ACTION_ORDER = 1"
        ),
        3,
        "the shard's own triggers came along, first in their chains"
    );
}
