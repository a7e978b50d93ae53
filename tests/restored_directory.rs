//! A directory restored from an older backup (issue 26): it places a moved shard on the
//! node it left, and its sequences hand out ids again that are already stored. `status`
//! names the stale location, `ids check` and `status` the sequence behind the ids stored
//! in the columns it feeds, and `ids sequence raise` moves it past them.

mod common;

use common::{connect, exec, shardctl, FleetSetup, Function};
use shardctl::sandbox::{Sandbox, SandboxBuilder};

/// `mariadb-dump` of the directory schema on node1, or its restore (`mariadb < dump`).
fn client(sb: &Sandbox, program: &str) -> std::process::Command {
    let port = sb.node("node1").unwrap().port.to_string();
    let mut c = std::process::Command::new(program);
    c.arg(format!(
        "--defaults-extra-file={}",
        sb.dir().join("client.cnf").display()
    ))
    .args(["-h", "127.0.0.1", "-P", &port]);
    c
}

/// The directory schema dumped with `mariadb-dump`.
fn dump_directory(sb: &Sandbox) -> Vec<u8> {
    let dump = client(sb, "mariadb-dump")
        .args(["--skip-dump-date", "--databases", "shardctl"])
        .output()
        .unwrap();
    assert!(
        dump.status.success(),
        "{}",
        String::from_utf8_lossy(&dump.stderr)
    );
    dump.stdout
}

/// `dump` restored over the directory (`mariadb < dump`).
fn restore_directory(sb: &Sandbox, dump: &[u8]) {
    let mut restore = client(sb, "mariadb")
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(restore.stdin.as_mut().unwrap(), dump).unwrap();
    drop(restore.stdin.take());
    let restored = restore.wait_with_output().unwrap();
    assert!(
        restored.status.success(),
        "{}",
        String::from_utf8_lossy(&restored.stderr)
    );
}

/// `shardctl --output json ARGS`, expecting exit `code`: its document.
fn json_doc(sb: &Sandbox, args: &[&str], code: i32) -> serde_json::Value {
    let out = shardctl()
        .arg("--config")
        .arg(sb.inventory_path())
        .args(["--output", "json"])
        .args(args)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(code),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{args:?}: {e}: {}", String::from_utf8_lossy(&out.stdout)))
}

/// Shard `id` of a `status` document.
fn shard_report(sb: &Sandbox, id: u64) -> serde_json::Value {
    let out = shardctl()
        .arg("--config")
        .arg(sb.inventory_path())
        .args(["--output", "json", "status"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    doc["shards"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["shard"] == id)
        .cloned()
        .unwrap_or_else(|| panic!("no shard {id}: {doc}"))
}

#[test]
fn status_names_a_location_a_restored_directory_got_wrong() {
    let sb = SandboxBuilder::for_tests(2).unwrap().start().unwrap();
    let inv = sb.inventory_path();
    let cli = |args: &[&str]| shardctl().arg("--config").arg(&inv).args(args).assert();
    FleetSetup::new()
        .nodes(&["node1", "node2"])
        .schema(&[
            "CREATE DATABASE app",
            "CREATE TABLE app.items (k BIGINT NOT NULL PRIMARY KEY, note VARCHAR(40) NULL)",
        ])
        .function(
            Function::range("f")
                .table("app.items", "k")
                .shard("node1", "0"),
        )
        .rows(
            "node1",
            &["INSERT INTO app_1.items (k, note) SELECT seq, 'x' FROM app_1.seq_1_to_100"],
        )
        .build(&sb);
    assert!(shard_report(&sb, 1)["stale_location"].is_null());

    // The backup, then a move, then the backup restored over the directory.
    let dump = dump_directory(&sb);
    cli(&["move", "--shard", "1", "--to", "node2", "--yes"]).success();
    let moved = shard_report(&sb, 1);
    assert_eq!(moved["node"], "node2");
    assert!(moved["stale_location"].is_null(), "{moved}");
    restore_directory(&sb, &dump);

    // The restored directory places shard 1 on node1 again, where app_1 is gone.
    let stale = shard_report(&sb, 1);
    assert_eq!(stale["node"], "node1");
    assert_eq!(
        stale["stale_location"], "node1 has no schema app_1; node2 has it",
        "{stale}"
    );
    let out = cli(&["status"]).success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(
        text.lines().any(|l| l.starts_with(
            "shard 1: STALE LOCATION? the directory places it on node1, but node1 has no schema app_1; node2 has it"
        )),
        "{text}"
    );
}

/// Stores ids `first..=last` of a block in app.orders, on shard 1 (k below 1000) or 2.
fn store_ids(sb: &Sandbox, shard: u32, first: i64, last: i64) {
    let (node, k) = if shard == 1 {
        ("node1", "seq")
    } else {
        ("node2", "1000 + seq")
    };
    exec(
        &mut connect(sb, node),
        &[&format!(
            "INSERT INTO app_{shard}.orders (id, k, note) SELECT seq, {k}, 'o' FROM app_{shard}.seq_{first}_to_{last}"
        )],
    );
}

#[test]
fn ids_check_and_status_name_a_sequence_a_restored_directory_rewound() {
    let sb = SandboxBuilder::for_tests(2).unwrap().start().unwrap();
    let inv = sb.inventory_path();
    let cli = |args: &[&str]| shardctl().arg("--config").arg(&inv).args(args).assert();
    for node in ["node1", "node2"] {
        exec(
            &mut connect(&sb, node),
            &[
                "CREATE DATABASE app",
                "CREATE TABLE app.orders (id BIGINT NOT NULL PRIMARY KEY, k BIGINT NOT NULL, note VARCHAR(40) NULL, KEY (k))",
            ],
        );
    }
    common::range_directory(
        &inv,
        &["node1", "node2"],
        &[("app.orders", "k")],
        &[("node1", "0"), ("node2", "1000")],
    );

    // Bad input: one line naming it, exit 2, no sequence created or changed.
    for (feeds, why) in [
        (
            "app.orders",
            "--feeds app.orders: expected SCHEMA.TABLE.COLUMN",
        ),
        (
            "app.nope.id",
            "--feeds app.nope.id: app.nope is not a sharded table of the directory",
        ),
        (
            "app.orders.nope",
            "--feeds app.orders.nope: app_1.orders on node1 has no column nope",
        ),
        (
            "app.orders.note",
            "--feeds app.orders.note: column note is varchar, not an integer",
        ),
    ] {
        let out = cli(&["ids", "sequence", "create", "orders_id", "--feeds", feeds])
            .code(2)
            .get_output()
            .clone();
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(why), "{err}");
    }
    assert_eq!(
        json_doc(&sb, &["ids", "sequence", "show"], 0)["sequences"],
        serde_json::json!([])
    );
    cli(&["ids", "sequence", "feeds", "nosuch", "app.orders.id"])
        .code(2)
        .stderr(predicates::str::contains("unknown sequence \"nosuch\""));
    cli(&["ids", "sequence", "create", "unfed"]).success();
    cli(&["ids", "sequence", "raise", "unfed"])
        .code(2)
        .stderr(predicates::str::contains(
            "sequence unfed feeds no column: name them first (shardctl ids sequence feeds unfed SCHEMA.TABLE.COLUMN)",
        ));

    cli(&[
        "ids",
        "sequence",
        "create",
        "orders_id",
        "--block",
        "100",
        "--feeds",
        "app.orders.id",
    ])
    .success();
    let shown = json_doc(&sb, &["ids", "sequence", "show", "orders_id"], 0);
    assert_eq!(
        shown["sequences"][0]["feeds"],
        serde_json::json!(["app.orders.id"])
    );

    // A block handed out and stored on both shards, the backup, then a block stored after it.
    let block = json_doc(&sb, &["ids", "sequence", "next", "orders_id"], 0);
    assert_eq!(
        (block["first"].as_i64(), block["last"].as_i64()),
        (Some(1), Some(100))
    );
    store_ids(&sb, 1, 1, 50);
    store_ids(&sb, 2, 51, 100);
    let dump = dump_directory(&sb);
    let block = json_doc(&sb, &["ids", "sequence", "next", "orders_id"], 0);
    assert_eq!(
        (block["first"].as_i64(), block["last"].as_i64()),
        (Some(101), Some(200))
    );
    store_ids(&sb, 2, 101, 200);
    let check = json_doc(&sb, &["ids", "check"], 0);
    let orders = &check["sequences"].as_array().unwrap()[0];
    assert_eq!(orders["sequence"], "orders_id");
    assert!(orders["hazard"].is_null(), "{orders}");
    assert_eq!(orders["highest"]["value"], 200);
    assert_eq!(orders["highest"]["shard"], 2);

    // The backup restored: the sequence would hand out 101..200 again.
    restore_directory(&sb, &dump);
    let hazard = "sequence orders_id hands out 101 but shard 2 holds app.orders.id 200: the directory looks restored from an older backup (shardctl ids sequence raise orders_id)";
    let out = cli(&["ids", "check"]).code(5).get_output().clone();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(err.contains(hazard), "{err}");
    let check = json_doc(&sb, &["ids", "check"], 5);
    assert_eq!(check["sequences"][0]["hazard"], hazard, "{check}");
    let status = json_doc(&sb, &["status"], 0);
    let seqs = status["sequences"].as_array().unwrap();
    assert_eq!(seqs.len(), 2, "{status}");
    assert_eq!(seqs[0]["sequence"], "orders_id");
    assert_eq!(seqs[0]["hazard"], hazard);
    assert_eq!(seqs[0]["next_value"], 101);
    assert_eq!(seqs[1]["sequence"], "unfed");
    assert!(seqs[1]["hazard"].is_null(), "{status}");
    let out = cli(&["status"]).success().get_output().clone();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        text.lines()
            .any(|l| l == format!("SEQUENCE BEHIND? {hazard}")),
        "{text}"
    );

    // Raising past the max is refused, nothing changed: a sequence fed by the same column
    // whose max the stored ids passed.
    cli(&["ids", "sequence", "create", "tiny", "--max", "250"]).success();
    cli(&["ids", "sequence", "feeds", "tiny", "app.orders.id"]).success();
    cli(&["ids", "sequence", "raise", "tiny"])
        .code(5)
        .stderr(predicates::str::contains(
            "refused: sequence tiny not raised: past shard 2's app.orders.id 200 with a margin of 1000 it would hand out 1201, above its max 250",
        ));
    assert_eq!(
        json_doc(&sb, &["ids", "sequence", "show", "tiny"], 0)["sequences"][0]["next_value"],
        1
    );

    // A fed column unreadable on a shard: status says so, the raise is refused.
    exec(
        &mut connect(&sb, "node1"),
        &["RENAME TABLE app_1.orders TO app_1.orders_away"],
    );
    cli(&["ids", "sequence", "raise", "orders_id"])
        .code(5)
        .stderr(predicates::str::contains(
        "refused: sequence orders_id not raised: cannot read app.orders.id on shard 1 (node1): ",
    ));
    let status = json_doc(&sb, &["status"], 0);
    let unread = status["sequences"][0]["unread"].as_array().unwrap();
    assert_eq!(unread.len(), 1, "{status}");
    assert!(
        unread[0]
            .as_str()
            .unwrap()
            .starts_with("app.orders.id on shard 1 (node1): "),
        "{status}"
    );
    exec(
        &mut connect(&sb, "node1"),
        &["RENAME TABLE app_1.orders_away TO app_1.orders"],
    );
    assert_eq!(
        json_doc(&sb, &["ids", "sequence", "show", "orders_id"], 0)["sequences"][0]["next_value"],
        101
    );

    // The repair: past the highest stored id by one block; the next block does not collide.
    cli(&["ids", "sequence", "raise", "orders_id"])
        .success()
        .stdout(predicates::str::contains(
            "sequence orders_id: next value raised from 101 to 301 (shard 2 holds app.orders.id 200; margin 100)",
        ));
    let block = json_doc(&sb, &["ids", "sequence", "next", "orders_id"], 0);
    assert_eq!(
        (block["first"].as_i64(), block["last"].as_i64()),
        (Some(301), Some(400))
    );
    store_ids(&sb, 2, 301, 400);
    let status = json_doc(&sb, &["status"], 0);
    assert!(status["sequences"][0]["hazard"].is_null(), "{status}");
    // A second raise never lowers it.
    cli(&["ids", "sequence", "raise", "orders_id"])
        .success()
        .stdout(predicates::str::contains(
            "sequence orders_id: next value 401 unchanged (shard 2 holds app.orders.id 400)",
        ));
    // tiny still hands out stored ids: ids check exits 5 for it alone.
    let check = json_doc(&sb, &["ids", "check"], 5);
    assert!(check["sequences"][0]["hazard"].is_null(), "{check}");
    assert!(check["sequences"][1]["hazard"]
        .as_str()
        .unwrap()
        .starts_with("sequence tiny hands out 1 but shard 2 holds app.orders.id 400"));
}

#[test]
fn init_migrates_a_version_9_directory_keeping_its_sequences() {
    let sb = SandboxBuilder::for_tests(1).unwrap().start().unwrap();
    let inv = sb.inventory_path();
    let cli = |args: &[&str]| shardctl().arg("--config").arg(&inv).args(args).assert();
    FleetSetup::new()
        .nodes(&["node1"])
        .schema(&[
            "CREATE DATABASE app",
            "CREATE TABLE app.items (k BIGINT NOT NULL PRIMARY KEY)",
        ])
        .function(
            Function::range("f")
                .table("app.items", "k")
                .shard("node1", "0"),
        )
        .build(&sb);
    cli(&["ids", "sequence", "create", "items_k"]).success();
    cli(&["ids", "sequence", "next", "items_k", "--count", "7"]).success();
    // The directory as version 9 left it: no sequence_feeds, no operations.phase nor
    // progress, no change log and no locations.availability.
    exec(
        &mut connect(&sb, "node1"),
        &[
            "DROP TABLE shardctl.sequence_feeds",
            "ALTER TABLE shardctl.operations DROP COLUMN phase, DROP COLUMN progress_rows, DROP COLUMN progress_rows_expected, DROP COLUMN progress_bytes",
            "DROP TABLE shardctl.directory_changes",
            "ALTER TABLE shardctl.locations DROP COLUMN availability",
            "UPDATE shardctl.schema_version SET version = 9",
        ],
    );
    let current = shardctl::directory::schema::SCHEMA_VERSION;
    cli(&["ids", "sequence", "show"])
        .code(2)
        .stderr(predicates::str::contains(format!(
            "the directory has schema version 9, this shardctl uses {current}: run `shardctl init`"
        )));
    let init = json_doc(&sb, &["init"], 0);
    assert_eq!(init["schema_version_before"], 9);
    assert_eq!(init["schema_version"], current);
    let shown = json_doc(&sb, &["ids", "sequence", "show"], 0);
    assert_eq!(shown["sequences"][0]["sequence"], "items_k");
    assert_eq!(shown["sequences"][0]["next_value"], 8);
    assert_eq!(shown["sequences"][0]["feeds"], serde_json::json!([]));
    cli(&["ids", "sequence", "feeds", "items_k", "app.items.k"]).success();
    let shown = json_doc(&sb, &["ids", "sequence", "show", "items_k"], 0);
    assert_eq!(
        shown["sequences"][0]["feeds"],
        serde_json::json!(["app.items.k"])
    );
}
