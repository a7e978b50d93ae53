//! Switched guards on a real server (src/ops/switch.rs): installed inert, switched to
//! refuse the keys of a range or every write, draining the open transactions that wrote
//! a guarded table the way the RENAME fence does, failing closed when their row is gone,
//! letting pruning sessions through, and removed without a trace.

mod common;

use common::{connect, exec, inventory, sandbox3};
use mysql::Value;
use shardctl::config::Inventory;
use shardctl::ident::Ident;
use shardctl::ops::effects::Fleet;
use shardctl::ops::switch::{self, GuardedTable};
use shardctl::server::statements::{key_range, SwitchMode};
use shardctl::server::{Server, Stmt};
use std::time::{Duration, Instant};

const NODE: &str = "node1";
const SCHEMA: &str = "switched_1";

fn id(what: &str, name: &str) -> Ident {
    Ident::new(what, name).unwrap()
}

/// Two tables sharded by `k` (one with an application trigger of its own), the keys
/// 100..200 guarded.
fn guarded_tables() -> Vec<GuardedTable> {
    ["single", "items"]
        .iter()
        .map(|t| GuardedTable {
            schema: id("schema", SCHEMA),
            table: id("table", t),
            column: Some(id("column", "k")),
            keys: key_range(&id("column", "k"), Value::Int(100), Some(Value::Int(200))),
        })
        .collect()
}

fn set_up(server: &mut Server) {
    exec(
        server,
        &[
            "SET SESSION sql_log_bin = 0",
            &format!("DROP DATABASE IF EXISTS {SCHEMA}"),
            &format!("CREATE DATABASE {SCHEMA}"),
            &format!("CREATE TABLE {SCHEMA}.single (k INT NOT NULL PRIMARY KEY, v INT) ENGINE=InnoDB"),
            &format!("CREATE TABLE {SCHEMA}.items (id INT NOT NULL AUTO_INCREMENT PRIMARY KEY, k INT NOT NULL, v INT) ENGINE=InnoDB"),
            &format!("CREATE TABLE {SCHEMA}.audit (n INT NOT NULL) ENGINE=InnoDB"),
            &format!("CREATE TRIGGER {SCHEMA}.app_audit BEFORE INSERT ON {SCHEMA}.single FOR EACH ROW INSERT INTO {SCHEMA}.audit VALUES (NEW.k)"),
            &format!("INSERT INTO {SCHEMA}.single VALUES (50, 0), (150, 0), (250, 0)"),
            &format!("INSERT INTO {SCHEMA}.items (k, v) VALUES (50, 0), (150, 0), (250, 0)"),
        ],
    );
}

/// The outcome of one statement: Ok, or the server's error code.
fn write(server: &mut Server, sql: &str) -> Result<(), u16> {
    match server.exec(&Stmt::text(sql)) {
        Ok(_) => Ok(()),
        Err(shardctl::Error::Server { message, .. }) => {
            let code = message
                .strip_prefix("error ")
                .and_then(|m| m.split(' ').next())
                .and_then(|c| c.parse().ok())
                .unwrap_or_else(|| panic!("{sql}: {message}"));
            if code == 1644 {
                assert!(message.contains("shardctl: "), "{message}");
            }
            Err(code)
        }
        Err(e) => panic!("{sql}: {e}"),
    }
}

fn installed(inv: &Inventory, switch_id: u64) {
    switch::install(
        &mut Fleet::new(inv),
        NODE,
        switch_id,
        &guarded_tables(),
        "these keys are moving; re-read the directory",
    )
    .expect("install");
}

#[test]
fn keys_mode_refuses_only_the_guarded_keys_and_all_refuses_every_write() {
    let _serial = common::serial();
    let sb = sandbox3();
    let inv = inventory(sb);
    let mut admin = connect(sb, NODE);
    set_up(&mut admin);
    installed(&inv, 11);
    let mut app = connect(sb, NODE);
    let s = SCHEMA;

    // Off: every write passes, the application's own trigger included.
    assert_eq!(
        write(&mut app, &format!("INSERT INTO {s}.single VALUES (160, 1)")),
        Ok(())
    );
    assert_eq!(
        write(
            &mut app,
            &format!("UPDATE {s}.items SET v = 1 WHERE k = 150")
        ),
        Ok(())
    );
    assert_eq!(
        common::count(
            &mut admin,
            &format!("SELECT COUNT(*) FROM {s}.audit WHERE n = 160")
        ),
        1
    );

    switch::set(&mut Fleet::new(&inv), NODE, 11, SwitchMode::Keys, 5).unwrap();
    assert_eq!(
        switch::mode(&mut Fleet::new(&inv), NODE, 11).unwrap(),
        Some(SwitchMode::Keys)
    );
    let refused = [
        format!("INSERT INTO {s}.single VALUES (170, 1)"),
        format!("INSERT INTO {s}.items (k, v) VALUES (199, 1)"),
        format!("UPDATE {s}.single SET v = 2 WHERE k = 150"),
        // A key leaving the guarded range, and one entering it.
        format!("UPDATE {s}.items SET k = 300 WHERE k = 150"),
        format!("UPDATE {s}.items SET k = 120 WHERE k = 50"),
        format!("DELETE FROM {s}.single WHERE k = 160"),
        format!("REPLACE INTO {s}.single VALUES (150, 9)"),
    ];
    for sql in &refused {
        assert_eq!(write(&mut app, sql), Err(1644), "{sql}");
    }
    let passed = [
        format!("INSERT INTO {s}.single VALUES (99, 1)"),
        format!("INSERT INTO {s}.items (k, v) VALUES (200, 1)"),
        format!("UPDATE {s}.single SET v = 2 WHERE k = 250"),
        format!("UPDATE {s}.items SET k = 51 WHERE k = 50"),
        format!("DELETE FROM {s}.single WHERE k = 99"),
    ];
    for sql in &passed {
        assert_eq!(write(&mut app, sql), Ok(()), "{sql}");
    }
    // The refused statements changed nothing, the application trigger's row included.
    assert_eq!(
        common::count(
            &mut admin,
            &format!("SELECT COUNT(*) FROM {s}.audit WHERE n = 170")
        ),
        0
    );
    assert_eq!(
        common::count(
            &mut admin,
            &format!("SELECT COUNT(*) FROM {s}.single WHERE k BETWEEN 100 AND 199")
        ),
        2
    );
    assert_eq!(
        common::count(
            &mut admin,
            &format!("SELECT COUNT(*) FROM {s}.items WHERE k = 150")
        ),
        1
    );

    // A pruning session passes: it deletes exactly the keys a shard gave away.
    exec(&mut app, &["SET @shardctl_pruning = 1"]);
    assert_eq!(
        write(&mut app, &format!("DELETE FROM {s}.single WHERE k = 160")),
        Ok(())
    );
    exec(&mut app, &["SET @shardctl_pruning = NULL"]);

    switch::set(&mut Fleet::new(&inv), NODE, 11, SwitchMode::All, 5).unwrap();
    for sql in [
        format!("INSERT INTO {s}.single VALUES (1, 1)"),
        format!("UPDATE {s}.items SET v = 3 WHERE k = 250"),
        format!("DELETE FROM {s}.single WHERE k = 250"),
    ] {
        assert_eq!(write(&mut app, &sql), Err(1644), "{sql}");
    }
    // Reads are never refused.
    assert_eq!(
        common::count(&mut app, &format!("SELECT COUNT(*) FROM {s}.single")),
        3
    );

    switch::set(&mut Fleet::new(&inv), NODE, 11, SwitchMode::Off, 5).unwrap();
    assert_eq!(
        write(&mut app, &format!("INSERT INTO {s}.single VALUES (180, 1)")),
        Ok(())
    );

    switch::remove(&mut Fleet::new(&inv), NODE, 11, &guarded_tables()).unwrap();
    assert_eq!(
        common::count(&mut admin, &format!("SELECT COUNT(*) FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = '{s}' AND TRIGGER_NAME LIKE 'shardctl%'")),
        0
    );
    assert_eq!(switch::mode(&mut Fleet::new(&inv), NODE, 11).unwrap(), None);
    assert_eq!(
        write(&mut app, &format!("INSERT INTO {s}.single VALUES (190, 1)")),
        Ok(())
    );
}

#[test]
fn switching_on_waits_for_open_writers_and_holds_new_ones_until_it_is_on() {
    let _serial = common::serial();
    let sb = sandbox3();
    let inv = inventory(sb);
    let mut admin = connect(sb, NODE);
    set_up(&mut admin);
    installed(&inv, 12);
    let s = SCHEMA;

    // A transaction wrote a key that is about to be fenced and stays open for 2 s.
    let mut open = connect(sb, NODE);
    exec(
        &mut open,
        &[
            "BEGIN",
            &format!("INSERT INTO {s}.items (k, v) VALUES (110, 7)"),
        ],
    );
    let fence_inv = inv.clone();
    let fence = std::thread::spawn(move || {
        let started = Instant::now();
        switch::set(&mut Fleet::new(&fence_inv), NODE, 12, SwitchMode::Keys, 10).unwrap();
        started.elapsed()
    });
    std::thread::sleep(Duration::from_millis(300));
    // A writer arriving while the switch waits queues behind it, then meets it.
    let late_inv = inv.clone();
    let late = std::thread::spawn(move || {
        let mut app = Server::connect_node(&late_inv, NODE).unwrap();
        write(
            &mut app,
            &format!("INSERT INTO {SCHEMA}.items (k, v) VALUES (120, 8)"),
        )
    });
    std::thread::sleep(Duration::from_millis(1700));
    assert!(
        !fence.is_finished(),
        "the switch waits for the open transaction"
    );
    exec(&mut open, &["COMMIT"]);
    let waited = fence.join().unwrap();
    assert!(waited >= Duration::from_millis(1900), "{waited:?}");
    assert_eq!(late.join().unwrap(), Err(1644));
    // The write that committed before the switch is kept; the late one is not there.
    assert_eq!(
        common::count(
            &mut admin,
            &format!("SELECT COUNT(*) FROM {s}.items WHERE k = 110")
        ),
        1
    );
    assert_eq!(
        common::count(
            &mut admin,
            &format!("SELECT COUNT(*) FROM {s}.items WHERE k = 120")
        ),
        0
    );

    // Switching off again: an open writer of another key does not hold it (an unguarded
    // key's write takes the same shared lock: the switch waits for it too, bounded).
    switch::set(&mut Fleet::new(&inv), NODE, 12, SwitchMode::Off, 5).unwrap();
    let mut open = connect(sb, NODE);
    exec(
        &mut open,
        &[
            "BEGIN",
            &format!("INSERT INTO {s}.items (k, v) VALUES (20, 7)"),
        ],
    );
    let tried = switch::set(&mut Fleet::new(&inv), NODE, 12, SwitchMode::All, 1);
    let e = tried
        .expect_err("a writer holding the switch past the wait")
        .to_string();
    assert!(e.contains("1205"), "{e}");
    assert_eq!(
        switch::mode(&mut Fleet::new(&inv), NODE, 12).unwrap(),
        Some(SwitchMode::Off),
        "unchanged after the timeout"
    );
    exec(&mut open, &["COMMIT"]);
    switch::remove(&mut Fleet::new(&inv), NODE, 12, &guarded_tables()).unwrap();
}

#[test]
fn a_guard_whose_switch_row_is_gone_refuses_every_write() {
    let _serial = common::serial();
    let sb = sandbox3();
    let inv = inventory(sb);
    let mut admin = connect(sb, NODE);
    set_up(&mut admin);
    installed(&inv, 13);
    let mut app = connect(sb, NODE);
    let s = SCHEMA;
    assert_eq!(
        write(&mut app, &format!("INSERT INTO {s}.single VALUES (1, 1)")),
        Ok(())
    );
    exec(
        &mut admin,
        &[
            "SET SESSION sql_log_bin = 0",
            "DELETE FROM `_shardctl`.`switches` WHERE id = 13",
        ],
    );
    assert_eq!(
        write(&mut app, &format!("INSERT INTO {s}.single VALUES (2, 1)")),
        Err(1644)
    );
    assert_eq!(
        write(&mut app, &format!("DELETE FROM {s}.items WHERE k = 250")),
        Err(1644)
    );
    // Installing again brings the row back, off.
    installed(&inv, 13);
    assert_eq!(
        write(&mut app, &format!("INSERT INTO {s}.single VALUES (2, 1)")),
        Ok(())
    );
    switch::remove(&mut Fleet::new(&inv), NODE, 13, &guarded_tables()).unwrap();
}
