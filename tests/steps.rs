//! The move's steps driven one by one from the command line, as an operator would.

mod common;

use common::{connect, count, exec, shardctl, FleetSetup, Function};
use predicates::prelude::*;
use shardctl::sandbox::SandboxBuilder;

#[test]
fn the_chapters_procedure_step_by_step() {
    let sb = SandboxBuilder::for_tests(3).unwrap().start().unwrap();
    let inv = sb.inventory_path();
    let cli = |args: &[&str]| shardctl().arg("--config").arg(&inv).args(args).assert();
    FleetSetup::new()
        .schema(&[
            "CREATE DATABASE app",
            "CREATE TABLE app.t (id INT PRIMARY KEY, v INT)",
        ])
        .function(
            Function::range("f")
                .table("app.t", "id")
                .shard("node1", "0"),
        )
        .rows(
            "node1",
            &["INSERT INTO app_1.t VALUES (1, 1), (2, 2), (3, 3)"],
        )
        .build(&sb);
    let mut n1 = connect(&sb, "node1");

    // 1-2. Backup into node2, with the position it matches.
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
    let mut n2 = connect(&sb, "node2");
    assert_eq!(count(&mut n2, "SELECT COUNT(*) FROM app_1.t"), 3);
    cli(&["backup", "--shard", "1", "--into", "node2"])
        .code(5)
        .stderr(predicate::str::contains("already has a schema app_1"));

    // Writes after the backup, to this shard and to another schema.
    exec(
        &mut n1,
        &[
            "INSERT INTO app_1.t VALUES (4, 4)",
            "CREATE DATABASE other",
            "CREATE TABLE other.x (id INT PRIMARY KEY)",
            "INSERT INTO other.x VALUES (1)",
        ],
    );

    // 3-6. A filtered channel from that position, started.
    cli(&[
        "change-master",
        "--node",
        "node2",
        "--channel",
        "mv1",
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
        "mv1",
        "--schemas",
        "app_1",
    ])
    .success();
    cli(&[
        "change-master",
        "--node",
        "node2",
        "--channel",
        "mv1",
        "--from",
        "node1",
        "--position",
        &pos,
    ])
    .success();
    cli(&[
        "wait",
        "--node",
        "node2",
        "--channel",
        "mv1",
        "--lag-below",
        "1",
        "--timeout",
        "60",
    ])
    .success();

    // 7-9. Fence, then wait for the position read after it.
    let out = cli(&[
        "--output", "json", "lock", "--shard", "1", "--fence", "shard",
    ])
    .success()
    .get_output()
    .stdout
    .clone();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let fin = format!(
        "{}:{}",
        v["final_position"]["file"].as_str().unwrap(),
        v["final_position"]["pos"]
    );
    assert!(
        exec_fails(&mut n1, "INSERT INTO app_1.t VALUES (5, 5)"),
        "the fence stops writes"
    );
    cli(&[
        "wait",
        "--node",
        "node2",
        "--channel",
        "mv1",
        "--position",
        &fin,
        "--timeout",
        "30",
    ])
    .success();
    assert_eq!(count(&mut n2, "SELECT COUNT(*) FROM app_1.t"), 4);
    assert!(
        !n2.schema_exists(&shardctl::ident::Ident::new("schema", "other").unwrap())
            .unwrap(),
        "the filter kept other schemas out"
    );

    // The directory only flips for a move that verified the target; drop-source refuses
    // while the directory points at the node.
    cli(&["flip", "--shard", "1", "--to", "node2"])
        .code(5)
        .stderr(predicate::str::contains("no move in progress"));
    cli(&["drop-source", "--shard", "1", "--node", "node1"])
        .code(5)
        .stderr(predicate::str::contains("lives on node1"));
    // A second fence (or a move) on a shard under operation is refused.
    cli(&["lock", "--shard", "1"])
        .code(5)
        .stderr(predicate::str::contains("under operation"));
    cli(&["move", "--shard", "1", "--to", "node3"])
        .code(5)
        .stderr(predicate::str::contains("under operation"));

    cli(&["unlock", "--shard", "1"]).success();
    exec(&mut n1, &["INSERT INTO app_1.t VALUES (5, 5)"]);
    cli(&["unlock", "--shard", "1"]).code(2);
    // drop-source removes a stale copy the directory does not point at.
    cli(&["drop-source", "--shard", "1", "--node", "node2"])
        .success()
        .stdout(predicate::str::contains("app_1"));
    cli(&[
        "wait",
        "--node",
        "node2",
        "--channel",
        "nope",
        "--lag-below",
        "1",
        "--timeout",
        "1",
    ])
    .code(2);
    cli(&[
        "change-master",
        "--node",
        "node2",
        "--channel",
        "bad'name",
        "--from",
        "node1",
        "--position",
        &pos,
    ])
    .code(2);
    cli(&[
        "change-master",
        "--node",
        "node2",
        "--channel",
        "c2",
        "--from",
        "node1",
        "--position",
        "not-a-position",
    ])
    .code(2);
}

fn exec_fails(server: &mut shardctl::server::Server, sql: &str) -> bool {
    server.exec(&shardctl::server::Stmt::text(sql)).is_err()
}
