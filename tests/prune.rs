//! `shardctl prune` on real servers: exact results, composite keys, children first,
//! resume after a crash with the same result, throttling on replica lag, refusals.

mod common;

use common::{connect, count, exec, shardctl, FleetSetup, Function};
use predicates::prelude::*;
use shardctl::sandbox::SandboxBuilder;

fn fill(server: &mut shardctl::server::Server, schema: &str, n: u32) {
    exec(
        server,
        &[
            &format!("INSERT INTO {schema}.acct SELECT seq, seq % 97 FROM {schema}.seq_0_to_{}", n - 1),
            &format!("INSERT INTO {schema}.events SELECT a.seq, b.seq, 'e' FROM {schema}.seq_0_to_{} a JOIN {schema}.seq_1_to_3 b", n - 1),
        ],
    );
}

#[test]
fn prune_deletes_exactly_the_rows_a_shard_no_longer_owns_and_resumes_after_a_crash() {
    let sb = SandboxBuilder::for_tests(2).unwrap().start().unwrap();
    let inv = sb.inventory_path();
    let cli = |args: &[&str]| shardctl().arg("--config").arg(&inv).args(args).assert();
    FleetSetup::new()
        .nodes(&["node1"])
        .schema(&[
            "CREATE DATABASE app",
            "CREATE TABLE app.acct (id BIGINT PRIMARY KEY, v INT)",
            "CREATE TABLE app.events (acct_id BIGINT NOT NULL, seq INT NOT NULL, body VARCHAR(10), PRIMARY KEY (acct_id, seq), FOREIGN KEY (acct_id) REFERENCES app.acct (id))",
            "CREATE TABLE app.settings (name VARCHAR(20) PRIMARY KEY, value INT)",
            "INSERT INTO app.settings VALUES ('a', 1)",
        ])
        .function(
            Function::range("f")
                .tables(&[("app.acct", "id"), ("app.events", "acct_id")])
                .shards(&[("node1", "0"), ("node1", "1000")]),
        )
        .build(&sb);
    let mut n1 = connect(&sb, "node1");
    // Both shards hold keys 0..3000, as both halves of a split do before pruning.
    fill(&mut n1, "app_1", 3000);
    fill(&mut n1, "app_2", 3000);

    let out = cli(&["prune", "--shard", "1", "--dry-run"])
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8_lossy(&out);
    assert!(
        text.contains("app_1.events") && text.contains("6000") && text.contains("`id` < ?"),
        "{text}"
    );
    assert_eq!(
        count(&mut n1, "SELECT COUNT(*) FROM app_1.acct"),
        3000,
        "a dry run deletes nothing"
    );

    // Uninterrupted.
    cli(&["prune", "--shard", "1"]).success();
    assert_eq!(count(&mut n1, "SELECT COUNT(*) FROM app_1.acct"), 1000);
    assert_eq!(count(&mut n1, "SELECT MAX(id) FROM app_1.acct"), 999);
    assert_eq!(count(&mut n1, "SELECT COUNT(*) FROM app_1.events"), 3000);
    assert_eq!(
        count(&mut n1, "SELECT COUNT(*) FROM app_1.settings"),
        1,
        "global tables are untouched"
    );

    // Crashed after its first chunk, then resumed: the same result.
    let crashed = shardctl()
        .arg("--config")
        .arg(&inv)
        .args(["prune", "--shard", "2", "--chunk-ms", "1"])
        .env("SHARDCTL_FAULT", "crash@prune-chunk")
        .output()
        .unwrap();
    assert!(!crashed.status.success());
    let partial = count(&mut n1, "SELECT COUNT(*) FROM app_2.events");
    assert!(
        partial < 9000 && partial > 6000,
        "the crash left work undone: {partial}"
    );
    let ops: serde_json::Value = serde_json::from_slice(
        &cli(&["--output", "json", "ops"])
            .success()
            .get_output()
            .stdout
            .clone(),
    )
    .unwrap();
    let op = ops["operations"][0]["op"].as_u64().unwrap();
    assert_eq!(ops["operations"][0]["kind"], "prune");
    cli(&["move", "--shard", "2", "--to", "node1"]).code(predicate::ne(0));
    cli(&["resume", &op.to_string()]).success();
    assert_eq!(count(&mut n1, "SELECT COUNT(*) FROM app_2.acct"), 2000);
    assert_eq!(count(&mut n1, "SELECT MIN(id) FROM app_2.acct"), 1000);
    assert_eq!(count(&mut n1, "SELECT COUNT(*) FROM app_2.events"), 6000);
    assert_eq!(
        count(
            &mut n1,
            "SELECT COUNT(*) FROM app_2.events WHERE acct_id < 1000"
        ),
        0
    );
    // Pruning again finds nothing to delete.
    cli(&["prune", "--shard", "2"]).success();
    assert_eq!(count(&mut n1, "SELECT COUNT(*) FROM app_2.acct"), 2000);
}

#[test]
fn prune_refuses_a_table_without_primary_key_and_waits_for_lagging_replicas() {
    let sb = SandboxBuilder::for_tests(2).unwrap().start().unwrap();
    let mut n1 = connect(&sb, "node1");
    exec(
        &mut n1,
        &[
            "CREATE DATABASE app",
            "CREATE TABLE app.acct (id BIGINT PRIMARY KEY, v INT)",
            "CREATE TABLE app.log (acct_id BIGINT NOT NULL, msg VARCHAR(10))",
        ],
    );
    // node2 replicates node1 and is listed as its replica.
    let text = std::fs::read_to_string(sb.inventory_path()).unwrap();
    let text = text.replacen("    port: ", "    replicas:\n    - node2\n    port: ", 1);
    let dir = tempfile::tempdir().unwrap();
    let inv = common::write_file(dir.path(), "inv.yaml", &text);
    let cli = |args: &[&str]| shardctl().arg("--config").arg(&inv).args(args).assert();
    common::range_directory(
        &inv,
        &["node1"],
        &[("app.acct", "id")],
        &[("node1", "0"), ("node1", "100")],
    );
    exec(
        &mut n1,
        &["INSERT INTO app_1.acct SELECT seq, 1 FROM app_1.seq_0_to_199"],
    );
    // A copy of shard 1 on node2, kept up to date by a channel limited to it.
    let out = cli(&[
        "--output", "json", "backup", "--shard", "1", "--into", "node2",
    ])
    .success()
    .get_output()
    .stdout
    .clone();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let pos = format!(
        "{}:{}",
        v["coordinates"]["position"]["file"].as_str().unwrap(),
        v["coordinates"]["position"]["pos"]
    );
    cli(&[
        "change-master",
        "--node",
        "node2",
        "--channel",
        "r1",
        "--from",
        "node1",
        "--position",
        &pos,
        "--no-start",
    ])
    .success();
    cli(&[
        "filter",
        "--node",
        "node2",
        "--channel",
        "r1",
        "--schemas",
        "app_1",
    ])
    .success();
    cli(&[
        "change-master",
        "--node",
        "node2",
        "--channel",
        "r1",
        "--from",
        "node1",
        "--position",
        &pos,
    ])
    .success();

    // The replica's applier is stopped: its lag is unknown, so prune waits, then gives up.
    let mut n2 = connect(&sb, "node2");
    exec(&mut n2, &["STOP SLAVE 'r1' SQL_THREAD"]);
    cli(&["prune", "--shard", "1", "--throttle-timeout", "2"])
        .code(6)
        .stderr(predicate::str::contains("waited 2s for the throttle"));
    assert_eq!(count(&mut n1, "SELECT COUNT(*) FROM app_1.acct"), 200);
    exec(&mut n2, &["START SLAVE 'r1' SQL_THREAD"]);
    let ops: serde_json::Value = serde_json::from_slice(
        &cli(&["--output", "json", "ops"])
            .success()
            .get_output()
            .stdout
            .clone(),
    )
    .unwrap();
    cli(&[
        "resume",
        &ops["operations"][0]["op"].as_u64().unwrap().to_string(),
    ])
    .success();
    assert_eq!(count(&mut n1, "SELECT COUNT(*) FROM app_1.acct"), 100);
    cli(&[
        "wait",
        "--node",
        "node2",
        "--channel",
        "r1",
        "--position",
        &n1.coordinates().unwrap().position.to_string(),
        "--timeout",
        "30",
    ])
    .success();
    assert_eq!(
        count(&mut n2, "SELECT COUNT(*) FROM app_1.acct"),
        100,
        "the replica followed the prune"
    );

    // A sharded table without a primary key is named and refused.
    cli(&[
        "table",
        "add",
        "app.log",
        "--function",
        "f",
        "--column",
        "acct_id",
    ])
    .success();
    cli(&["prune", "--shard", "1"])
        .code(5)
        .stderr(predicate::str::contains(
            "table app_1.log has no primary key",
        ));
}

/// A hash function on a ZEROFILL column: the server reads `CAST(id AS CHAR)` as `00042`,
/// the router hashes `42`. Prune must keep on each shard exactly the keys `lookup` routes
/// there (it hashes on the server), not those of the zero-padded text.
#[test]
fn prune_on_a_zerofill_hash_column_keeps_the_rows_lookup_routes_to_each_shard() {
    let sb = SandboxBuilder::for_tests(1).unwrap().start().unwrap();
    let inv = sb.inventory_path();
    let cli = |args: &[&str]| shardctl().arg("--config").arg(&inv).args(args).assert();
    FleetSetup::new()
        .nodes(&["node1"])
        .schema(&[
            "CREATE DATABASE zdb",
            "CREATE TABLE zdb.codes (id INT(6) UNSIGNED ZEROFILL PRIMARY KEY, v INT)",
        ])
        .function(Function::hash("h").table("zdb.codes", "id").shards(&[
            ("node1", "40000000000000000000000000000000"),
            ("node1", "c0000000000000000000000000000000"),
        ]))
        .build(&sb);
    let mut n1 = connect(&sb, "node1");
    // Both shards hold every key, as both halves of a split do before pruning.
    for shard in [1, 2] {
        exec(
            &mut n1,
            &[&format!(
                "INSERT INTO zdb_{shard}.codes SELECT seq, seq FROM zdb_{shard}.seq_1_to_300"
            )],
        );
    }
    cli(&["prune", "--shard", "1"]).success();
    cli(&["prune", "--shard", "2"]).success();
    let router = shardctl::directory::Router::connect(&common::inventory(&sb)).unwrap();
    let mut per_shard = [0, 0];
    for key in 1..=300i64 {
        let owner = router
            .shard_for_function("h", &shardctl::directory::Key::Int(key))
            .unwrap()
            .id;
        for shard in [1u32, 2] {
            let held = count(
                &mut n1,
                &format!("SELECT COUNT(*) FROM zdb_{shard}.codes WHERE id = {key}"),
            );
            assert_eq!(
                held,
                i64::from(owner == shard),
                "key {key}: lookup routes it to shard {owner}, shard {shard} holds {held}"
            );
        }
        per_shard[owner as usize - 1] += 1;
    }
    assert!(per_shard.iter().all(|n| *n > 0), "{per_shard:?}");
    // `lookup` on the command line agrees with the router for a zero-padded key.
    let shown = cli(&["--output", "json", "lookup", "--function", "h", "42"])
        .success()
        .get_output()
        .stdout
        .clone();
    let shown: serde_json::Value = serde_json::from_slice(&shown).unwrap();
    let owner = router
        .shard_for_function("h", &shardctl::directory::Key::Int(42))
        .unwrap()
        .id;
    assert_eq!(shown["shard"], owner, "{shown}");
}
