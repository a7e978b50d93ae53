//! Cut-over at any size (issue 10) on real servers: clients that still route on the
//! directory as it was before a move or split get an error for every write the old location
//! no longer owns; verification outside the fence stops a move on an injected difference,
//! carries a table created during the move, refuses one that cannot have reached the
//! target, and verifies again when its point is too old.

mod common;

use common::{
    connect, exec, exec_unlogged, range_hash_list_items, serial, write_file, SharedFleet,
};
use predicates::prelude::*;
use shardctl::directory::{Key, Router};
use shardctl::sandbox::Sandbox;
use shardctl::server::{Server, Stmt};

/// Three nodes; a range (`r`, `rdb`), a hash (`h`, `hdb`) and a list (`l`, `ldb`)
/// function of two shards each on node1 and node2, `items` filled through the router.
static FLEET: SharedFleet = SharedFleet::new(3, set_up);

/// Sets up the fleet once, on first use (see [`FLEET`]).
fn set_up(sb: &Sandbox) {
    let strings = ["a", "b", "c", "d", "e", "f"].map(|s| Key::Str(s.to_string()));
    range_hash_list_items(true, false)
        .routed_items(
            "r",
            "rdb",
            (0..2000)
                .map(|i| Key::Int(i * 7))
                .chain((0..300).map(|i| Key::Int(100_000 + i)))
                .collect(),
            1,
        )
        .routed_items("h", "hdb", (0..2000).map(Key::Int).collect(), 1)
        .routed_items("l", "ldb", strings.to_vec(), 20)
        .build(sb);
}

fn value(k: &Key) -> mysql::Value {
    match k {
        Key::Int(i) => (*i).into(),
        Key::Str(s) => s.as_str().into(),
    }
}

fn router() -> Router {
    Router::connect(&common::inventory(FLEET.sandbox())).unwrap()
}

/// The node and id of the shard holding `key` now.
fn owner(function: &str, key: &Key) -> (String, u32) {
    let r = router();
    let s = r.shard_for_function(function, key).unwrap();
    (s.node.clone(), s.id)
}

/// Runs `shardctl ARGS` with the fault `fault` injected, which must make it fail; the id
/// of the operation it left in the journal.
fn crashed(args: &[&str], fault: &str) -> u64 {
    FLEET
        .cli(args)
        .env("SHARDCTL_FAULT", fault)
        .assert()
        .failure();
    last_op()
}

fn last_op() -> u64 {
    let out = FLEET.cli(&["--output", "json", "ops"]).output().unwrap();
    let ops: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    ops["operations"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|o| o["op"].as_u64())
        .max()
        .unwrap()
}

/// An insert through a connection opened before the operation, into the schema the client
/// had cached: the error code, or None when the server took the write.
fn stale_insert(conn: &mut Server, schema: &str, key: &Key, n: i64) -> Option<u16> {
    let r = conn.try_rows(&Stmt::with(
        format!("INSERT INTO {schema}.items (k, n, note) VALUES (?, ?, 'stale')"),
        vec![value(key), n.into()],
    ));
    match r {
        Ok(_) => None,
        Err(mysql::Error::MySqlError(e)) => {
            if e.code == 1644 {
                assert!(
                    e.message.starts_with("shardctl: ")
                        && e.message.contains("re-read the directory"),
                    "a guard's message tells the client what to do: {}",
                    e.message
                );
            }
            Some(e.code)
        }
        Err(e) => panic!("unexpected error kind: {e}"),
    }
}

/// Rows written by stale clients anywhere with this `n`.
fn stale_rows(db: &str, n: i64) -> i64 {
    let snap = router().snapshot().clone();
    let mut total = 0;
    for shard in &snap.shards {
        let mut s = connect(FLEET.sandbox(), &shard.node);
        let exists = common::count(
            &mut s,
            &format!(
                "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = '{db}_{}' AND TABLE_NAME = 'items'",
                shard.id
            ),
        );
        if exists == 1 {
            total += common::count(
                &mut s,
                &format!(
                    "SELECT COUNT(*) FROM {db}_{}.items WHERE note = 'stale' AND n = {n}",
                    shard.id
                ),
            );
        }
    }
    total
}

#[test]
fn stale_clients_get_errors_after_a_move_with_either_fence() {
    let _g = serial();
    let key = Key::Int(100_010);
    for (fence, to) in [("shard", "node3"), ("read-only", "node2")] {
        let (node, shard) = owner("r", &key);
        let mut stale = connect(FLEET.sandbox(), &node);
        FLEET
            .cli(&[
                "move",
                "--shard",
                &shard.to_string(),
                "--to",
                to,
                "--fence",
                fence,
            ])
            .assert()
            .success();
        assert_eq!(owner("r", &key).0, to);
        let code = stale_insert(&mut stale, &format!("rdb_{shard}"), &key, 9_000);
        assert!(
            matches!(code, Some(1146) | Some(1049)),
            "a stale write after a move with the {fence} fence must fail with table/database unknown, got {code:?}"
        );
    }
    assert_eq!(
        stale_rows("rdb", 9_000),
        0,
        "no stale write landed anywhere"
    );
}

/// Splits shard `old` of `function` onto node3 at `at` (CLI arguments); before it, a client
/// connects to the old location; after it, that client writes one key of each half.
fn split_with_a_stale_client(function: &str, db: &str, old: u32, at: &[&str], keys: &[Key]) {
    let (node, _) = router()
        .snapshot()
        .shards
        .iter()
        .find(|s| s.id == old)
        .map(|s| (s.node.clone(), s.id))
        .unwrap();
    let mut stale = connect(FLEET.sandbox(), &node);
    let mut args = vec!["split", "--shard"];
    let old_s = old.to_string();
    args.push(&old_s);
    args.extend(["--to", "node3"]);
    args.extend(at);
    FLEET.cli(&args).assert().success();
    let (mut refused, mut taken) = (0, 0);
    for (i, key) in keys.iter().enumerate() {
        let (_, now) = owner(function, key);
        let code = stale_insert(&mut stale, &format!("{db}_{old}"), key, 50_000 + i as i64);
        if now == old {
            assert_eq!(
                code, None,
                "the old shard still owns {key:?}: the write is taken"
            );
            taken += 1;
        } else {
            assert_eq!(
                code,
                Some(1644),
                "{key:?} now belongs to shard {now}: a stale write to shard {old} must be refused"
            );
            refused += 1;
        }
    }
    assert!(
        refused > 0 && taken > 0,
        "the keys cross the split point ({refused} refused, {taken} taken)"
    );
    // Every stale write that was taken is one the old shard owns: nothing was pruned away.
    let mut s = connect(FLEET.sandbox(), &node);
    let kept = common::count(
        &mut s,
        &format!("SELECT COUNT(*) FROM {db}_{old}.items WHERE note = 'stale' AND n >= 50000"),
    );
    assert_eq!(kept, taken);
}

#[test]
fn stale_clients_get_errors_after_range_hash_and_list_splits() {
    let _g = serial();
    let (_, range_shard) = owner("r", &Key::Int(10));
    let keys: Vec<Key> = (0..40).map(|i| Key::Int(i * 350)).collect();
    split_with_a_stale_client("r", "rdb", range_shard, &["--at", "median"], &keys);
    let (_, hash_shard) = owner("h", &Key::Int(1));
    let keys: Vec<Key> = (0..40).map(Key::Int).collect();
    split_with_a_stale_client("h", "hdb", hash_shard, &[], &keys);
    let (_, list_shard) = owner("l", &Key::Str("a".into()));
    let keys: Vec<Key> = ["a", "b", "c", "d"]
        .iter()
        .map(|s| Key::Str(s.to_string()))
        .collect();
    split_with_a_stale_client("l", "ldb", list_shard, &["--values", "c,d"], &keys);
}

#[test]
fn stale_updates_and_deletes_of_given_away_rows_are_refused_until_the_prune() {
    let _g = serial();
    let (node, old) = owner("r", &Key::Int(100_050));
    let mut stale = connect(FLEET.sandbox(), &node);
    let op = crashed(
        &[
            "split",
            "--shard",
            &old.to_string(),
            "--to",
            "node1",
            "--at",
            "100150",
        ],
        "crash@after:unlock",
    );
    // The old shard still holds the given-away rows (no prune yet); its guards refuse them.
    for sql in [
        "UPDATE rdb_{old}.items SET note = 'stale' WHERE k = 100200",
        "DELETE FROM rdb_{old}.items WHERE k = 100200",
        "UPDATE rdb_{old}.items SET k = 100201 WHERE k = 100020",
    ] {
        let sql = sql.replace("{old}", &old.to_string());
        match stale.try_rows(&Stmt::text(sql.clone())) {
            Err(mysql::Error::MySqlError(e)) => assert_eq!(e.code, 1644, "{sql}: {}", e.message),
            other => panic!("{sql}: a write of a given-away key must be refused, got {other:?}"),
        }
    }
    // Its own rows take writes.
    stale
        .exec(&Stmt::text(format!(
            "UPDATE rdb_{old}.items SET note = NULL WHERE k = 100010"
        )))
        .unwrap();
    // The prune passes the guards and completes the split.
    FLEET.cli(&["resume", &op.to_string()]).assert().success();
    let mut s = connect(FLEET.sandbox(), &node);
    assert_eq!(
        common::count(
            &mut s,
            &format!("SELECT COUNT(*) FROM rdb_{old}.items WHERE k >= 100150")
        ),
        0
    );
}

#[test]
fn an_injected_difference_blocks_the_flip_and_names_the_rows() {
    let _g = serial();
    let key = Key::Int(100_020);
    let (source, shard) = owner("r", &key);
    let to = if source == "node2" { "node3" } else { "node2" };
    let op = crashed(
        &["move", "--shard", &shard.to_string(), "--to", to],
        "crash@after:start-replication",
    );
    // The copy on the target differs in one row, behind the channel's back.
    let mut t = connect(FLEET.sandbox(), to);
    exec(
        &mut t,
        &[&format!(
            "UPDATE rdb_{shard}.items SET note = 'injected' WHERE k = 100020"
        )],
    );
    FLEET
        .cli(&["resume", &op.to_string()])
        .assert()
        .code(5)
        .stderr(
            predicate::str::contains("verification failed")
                .and(predicate::str::contains(format!("rdb_{shard}.items")))
                .and(predicate::str::contains("primary key in")),
        );
    assert_eq!(owner("r", &key).0, source, "nothing flipped");
    let mut s = connect(FLEET.sandbox(), &source);
    assert_eq!(
        common::count(
            &mut s,
            &format!("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'rdb_{shard}' AND TABLE_NAME LIKE '\\_\\_shardctl%'")
        ),
        0,
        "the fence never went up"
    );
    FLEET.cli(&["abort", &op.to_string()]).assert().success();
}

#[test]
fn a_table_created_during_the_move_is_carried_and_an_unlogged_one_refused() {
    let _g = serial();
    let key = Key::Int(100_030);
    let (source, shard) = owner("r", &key);
    let to = if source == "node2" { "node3" } else { "node2" };
    // Logged: the channel carries it; confirm compares it in full under the fence.
    let op = crashed(
        &["move", "--shard", &shard.to_string(), "--to", to],
        "crash@after:verify",
    );
    let mut s = connect(FLEET.sandbox(), &source);
    exec(
        &mut s,
        &[
            &format!("CREATE TABLE rdb_{shard}.late (id INT PRIMARY KEY, v VARCHAR(10))"),
            &format!("INSERT INTO rdb_{shard}.late VALUES (1, 'x'), (2, NULL)"),
        ],
    );
    FLEET.cli(&["resume", &op.to_string()]).assert().success();
    let mut t = connect(FLEET.sandbox(), to);
    assert_eq!(
        common::count(&mut t, &format!("SELECT COUNT(*) FROM rdb_{shard}.late")),
        2
    );

    // Unlogged: it never reaches the target; the flip is refused, the shard stays.
    let source = to.to_string();
    let to = if source == "node2" { "node3" } else { "node2" };
    let op = crashed(
        &["move", "--shard", &shard.to_string(), "--to", to],
        "crash@after:verify",
    );
    let mut s = connect(FLEET.sandbox(), &source);
    exec_unlogged(
        &mut s,
        &[&format!(
            "CREATE TABLE rdb_{shard}.hidden_from_binlog (id INT PRIMARY KEY)"
        )],
    );
    FLEET
        .cli(&["resume", &op.to_string()])
        .assert()
        .code(5)
        .stderr(predicate::str::contains(format!(
            "rdb_{shard}.hidden_from_binlog is on the source"
        )));
    assert_eq!(owner("r", &key).0, source);
    FLEET.cli(&["abort", &op.to_string()]).assert().success();
    exec(
        &mut s,
        &[&format!("DROP TABLE rdb_{shard}.hidden_from_binlog")],
    );
}

#[test]
fn a_verified_point_older_than_allowed_is_verified_again_before_the_fence() {
    let _g = serial();
    let key = Key::Int(100_040);
    let (source, shard) = owner("r", &key);
    let to = if source == "node2" { "node3" } else { "node2" };
    let dir = tempfile::tempdir().unwrap();
    let playbook =
        shardctl::playbook::MOVE_PLAYBOOK.replace("max_age_secs: 600", "max_age_secs: 1");
    assert_ne!(playbook, shardctl::playbook::MOVE_PLAYBOOK);
    let path = write_file(dir.path(), "move.yaml", &playbook);
    let op = crashed(
        &[
            "move",
            "--shard",
            &shard.to_string(),
            "--to",
            to,
            "--playbook",
            path.to_str().unwrap(),
        ],
        "crash@after:verify",
    );
    std::thread::sleep(std::time::Duration::from_secs(3));
    FLEET
        .cli(&["-v", "resume", &op.to_string()])
        .assert()
        .success()
        .stderr(predicate::str::contains("verified point is too old"));
    assert_eq!(owner("r", &key).0, to);
}

#[test]
fn ddl_during_the_move_is_carried_and_a_table_created_under_the_fence_is_refused_then_carried() {
    let _g = serial();
    let key = Key::Int(100_060);
    let (source, shard) = owner("r", &key);
    let to = if source == "node2" { "node3" } else { "node2" };
    // An ALTER between the verification and the fence reaches the target through the
    // channel; confirm finds the definitions equal.
    let op = crashed(
        &["move", "--shard", &shard.to_string(), "--to", to],
        "crash@after:verify",
    );
    let mut s = connect(FLEET.sandbox(), &source);
    exec(
        &mut s,
        &[&format!(
            "ALTER TABLE rdb_{shard}.items ADD COLUMN extra INT NULL"
        )],
    );
    FLEET.cli(&["resume", &op.to_string()]).assert().success();
    let mut t = connect(FLEET.sandbox(), to);
    assert_eq!(
        common::count(
            &mut t,
            &format!("SELECT COUNT(*) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'rdb_{shard}' AND TABLE_NAME = 'items' AND COLUMN_NAME = 'extra'")
        ),
        1
    );

    // A table created while the shard fence is up takes writes the flip would lose: the
    // flip is refused; the next run fences it too and carries it.
    let source = to.to_string();
    let to = if source == "node2" { "node3" } else { "node2" };
    let op = crashed(
        &["move", "--shard", &shard.to_string(), "--to", to],
        "crash@after:lock",
    );
    let mut s = connect(FLEET.sandbox(), &source);
    exec(
        &mut s,
        &[
            &format!("CREATE TABLE rdb_{shard}.under_fence (id INT PRIMARY KEY)"),
            &format!("INSERT INTO rdb_{shard}.under_fence VALUES (7)"),
        ],
    );
    FLEET
        .cli(&["resume", &op.to_string()])
        .assert()
        .code(5)
        .stderr(predicate::str::contains("under_fence"));
    assert_eq!(owner("r", &key).0, source, "nothing flipped");
    FLEET.cli(&["resume", &op.to_string()]).assert().success();
    assert_eq!(owner("r", &key).0, to);
    let mut t = connect(FLEET.sandbox(), to);
    assert_eq!(
        common::count(
            &mut t,
            &format!("SELECT COUNT(*) FROM rdb_{shard}.under_fence WHERE id = 7")
        ),
        1
    );
}

/// A workload whose routers never re-read the directory on their own (only after an error
/// that says to) runs through a split; every acknowledged write is where the directory now
/// says its key lives.
fn stale_router_workload_through(function: &str, args: &[&str]) {
    let running = shardctl::workload::spawn(
        common::inventory(FLEET.sandbox()),
        shardctl::workload::Options {
            rate: 300,
            stale_router: true,
            ..shardctl::workload::Options::new(function)
        },
    )
    .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(700));
    FLEET.cli(args).assert().success();
    std::thread::sleep(std::time::Duration::from_millis(700));
    let mut report = running.stop().unwrap();
    let check = report
        .check(&common::inventory(FLEET.sandbox()), function)
        .unwrap();
    assert!(
        check.missing.is_empty(),
        "{function}: lost writes {:?}",
        check.missing
    );
    assert_eq!(
        report.wrong_shard_writes, 0,
        "{function}: writes acknowledged by a shard that does not own the key: {:?}",
        check.wrong_shard
    );
    assert!(report.acked > 0);
    assert!(
        report.streams.iter().any(|s| s.reloads > 0 && s.shards_written.len() > 1),
        "{function}: a stale stream was told to re-read the directory and then wrote the new shard: {:?}",
        report.streams
    );
}

#[test]
fn stale_router_workloads_through_range_hash_and_list_splits_write_nothing_to_the_wrong_shard() {
    let _g = serial();
    // Each case: the function, a key of the shard to split, how to split it.
    let cases: [(&str, Key, &[&str]); 3] = [
        ("r", Key::Int(50), &["--at", "median"]),
        ("h", Key::Int(7), &[]),
        ("l", Key::Str("e".into()), &["--values", "f"]),
    ];
    for (function, key, how) in cases {
        let (_, shard) = owner(function, &key);
        let shard = shard.to_string();
        let mut args = vec!["split", "--shard", &shard, "--to", "node3"];
        args.extend_from_slice(how);
        stale_router_workload_through(function, &args);
    }
}

#[test]
fn a_column_filled_differently_on_each_side_after_the_verified_point_blocks_the_flip() {
    let _g = serial();
    let key = Key::Int(100_070);
    let (source, shard) = owner("r", &key);
    let to = if source == "node2" { "node3" } else { "node2" };
    let op = crashed(
        &["move", "--shard", &shard.to_string(), "--to", to],
        "crash@after:verify",
    );
    // Logged as a statement: each server fills the new column with its own UUIDs. The
    // definitions then read the same on both sides; the rows do not.
    let mut s = connect(FLEET.sandbox(), &source);
    exec(
        &mut s,
        &[&format!(
            "ALTER TABLE rdb_{shard}.items ADD COLUMN tag VARCHAR(36) NULL DEFAULT (UUID())"
        )],
    );
    FLEET
        .cli(&["resume", &op.to_string()])
        .assert()
        .code(5)
        .stderr(
            predicate::str::contains("verification failed")
                .and(predicate::str::contains(format!("rdb_{shard}.items"))),
        );
    assert_eq!(owner("r", &key).0, source, "nothing flipped");
    FLEET.cli(&["abort", &op.to_string()]).assert().success();
    exec(
        &mut s,
        &[&format!("ALTER TABLE rdb_{shard}.items DROP COLUMN tag")],
    );
}

/// An `abort` whose rollback went through but whose release failed leaves the operation
/// failed, and it must stay abortable: the journal row a failed release used to write (an
/// end phase beside a non-finished state) is read as no phase at all, so the next `abort`
/// goes on from what the servers show instead of refusing every transition.
#[test]
fn an_abort_that_could_not_release_its_operation_can_be_run_again() {
    let _g = serial();
    let key = Key::Int(100_040);
    let (source, shard) = owner("r", &key);
    let to = if source == "node2" { "node3" } else { "node2" };
    let op = crashed(
        &["move", "--shard", &shard.to_string(), "--to", to],
        "crash@after:verify",
    );
    FLEET.cli(&["abort", &op.to_string()]).assert().success();
    let mut d = connect(FLEET.sandbox(), "node1");
    assert_eq!(
        common::count(
            &mut d,
            &format!("SELECT COUNT(*) FROM shardctl.operations WHERE op_id = {op} AND state = 'aborted' AND phase = 'rolled-back'")
        ),
        1,
        "a finished abort records its end phase"
    );
    // What the old release of a failed abort wrote: failed, with the end phase.
    exec(
        &mut d,
        &[&format!(
            "UPDATE shardctl.operations SET state = 'failed' WHERE op_id = {op}"
        )],
    );
    FLEET.cli(&["abort", &op.to_string()]).assert().success();
    assert_eq!(
        common::count(
            &mut d,
            &format!(
                "SELECT COUNT(*) FROM shardctl.operations WHERE op_id = {op} AND state = 'aborted'"
            )
        ),
        1
    );
    assert_eq!(owner("r", &key).0, source, "the shard stays on its source");
}
