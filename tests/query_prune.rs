//! `query`, `status` and `rebalance plan` between a split's flip and its prunes, on real
//! servers: both halves then hold the whole old shard, and the query must still count
//! each row once (each shard read through its ownership), while status and the plan say a
//! prune is pending instead of silently weighing the copies twice.

mod common;

use common::{connect, FleetSetup, Function, SharedFleet};
use shardctl::sandbox::Sandbox;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

const ROWS: u64 = 1_000;

/// 3 nodes; `app.t` sharded by `k` (range), one shard on node1 with keys 1..=ROWS, and
/// the global table `app.g`.
static FLEET: SharedFleet = SharedFleet::over(common::sandbox3, set_up);

/// Sets up the fleet once, on first use (see [`FLEET`]).
fn set_up(sb: &Sandbox) {
    FleetSetup::new()
        .schema(&[
            "CREATE DATABASE app",
            "CREATE TABLE app.t (id BIGINT PRIMARY KEY, k BIGINT NOT NULL, pad VARCHAR(64) NOT NULL, KEY (k))",
        ])
        .function(Function::range("f").table("app.t", "k").shard("node1", "0"))
        .rows(
            "node1",
            &[format!(
                "INSERT INTO app_1.t SELECT seq, seq, REPEAT('x', 40) FROM app_1.seq_1_to_{ROWS}"
            )],
        )
        .build(sb);
}

fn stdout_of(args: &[&str]) -> String {
    let out = FLEET.cli(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// `query --output json` with aggregates: the merged rows.
fn merged(sql: &str) -> serde_json::Value {
    let text = stdout_of(&["--output", "json", "query", "--function", "f", sql]);
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    doc["rows"].clone()
}

/// `query --output json` without aggregates: the streamed `row` events.
fn streamed_rows(sql: &str) -> usize {
    stdout_of(&["--output", "json", "query", "--function", "f", sql])
        .lines()
        .filter(|l| l.contains("\"row\""))
        .filter(|l| {
            serde_json::from_str::<serde_json::Value>(l)
                .map(|v| v["event"] == "row")
                .unwrap_or(false)
        })
        .count()
}

#[test]
fn query_after_a_split_before_its_prunes_counts_each_row_once_and_status_says_so() {
    FLEET.sandbox();
    // The split stops (paused) after its flip, unlock and channel removal: both shards
    // hold all ROWS rows, neither has pruned.
    let mut split = Command::new(assert_cmd::cargo::cargo_bin("shardctl"))
        .env_remove("SHARDCTL_CONFIG")
        .env("SHARDCTL_YES", "1")
        .env("NO_COLOR", "1")
        .env("SHARDCTL_FAULT", "pause=300@after:reset-replication")
        .arg("--config")
        .arg(FLEET.inventory_path())
        .args(["split", "--shard", "1", "--to", "node2", "--at", "501"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, paused) = std::sync::mpsc::channel();
    let stderr = split.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if line.contains("fault point after:reset-replication: pausing") {
                let _ = tx.send(());
            }
        }
    });
    paused
        .recv_timeout(Duration::from_secs(240))
        .expect("the split reached its prune");
    let mut n2 = connect(FLEET.sandbox(), "node2");
    assert_eq!(
        common::count(&mut n2, "SELECT COUNT(*) FROM app_2.t") as u64,
        ROWS,
        "the new shard holds the whole old shard until it prunes"
    );

    let count = merged("SELECT COUNT(*) FROM {t}");
    assert_eq!(count, serde_json::json!([[ROWS]]), "each row counted once");
    let sum = merged("SELECT SUM(k) FROM {t} WHERE k <= 600");
    assert_eq!(sum, serde_json::json!([[(1..=600u64).sum::<u64>()]]));
    assert_eq!(streamed_rows("SELECT id FROM {t}") as u64, ROWS);
    assert_eq!(
        streamed_rows("SELECT x.id FROM {t} x WHERE x.k BETWEEN 495 AND 504"),
        10,
        "an aliased table"
    );
    assert_eq!(
        streamed_rows("SELECT {t}.id FROM {t} WHERE {t}.k BETWEEN 495 AND 504"),
        10,
        "a marker as a column qualifier"
    );

    let status = stdout_of(&["status"]);
    assert!(
        status.contains("prune pending on shard(s) 1, 2") && status.contains("(unpruned)"),
        "{status}"
    );
    let doc: serde_json::Value =
        serde_json::from_str(&stdout_of(&["--output", "json", "status"])).unwrap();
    let unpruned: Vec<bool> = doc["shards"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["unpruned"] == true)
        .collect();
    assert_eq!(unpruned, vec![true, true], "{doc}");
    let plan: serde_json::Value = serde_json::from_str(&stdout_of(&[
        "--output",
        "json",
        "rebalance",
        "plan",
        "--sizes",
        "exact",
    ]))
    .unwrap();
    assert_eq!(plan["unpruned_shards"], serde_json::json!([1, 2]), "{plan}");
    let text = stdout_of(&["rebalance", "plan", "--sizes", "exact"]);
    assert!(text.contains("prune pending on shard(s) [1, 2]"), "{text}");

    // The split goes on from its prunes: the filter is off again and the count holds.
    split.kill().unwrap();
    split.wait().unwrap();
    let op = {
        let inv = common::inventory(FLEET.sandbox());
        let mut d = shardctl::directory::Directory::open(&inv).unwrap();
        d.operations(None)
            .unwrap()
            .into_iter()
            .find(|o| o.kind == shardctl::directory::journal::OpKind::Split)
            .unwrap()
            .id
    };
    FLEET.cli(&["resume", &op.to_string()]).assert().success();
    assert_eq!(
        merged("SELECT COUNT(*) FROM {t}"),
        serde_json::json!([[ROWS]])
    );
    let doc: serde_json::Value =
        serde_json::from_str(&stdout_of(&["--output", "json", "status"])).unwrap();
    assert!(
        doc["shards"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["unpruned"] == false),
        "{doc}"
    );
    let text = stdout_of(&[
        "--output",
        "json",
        "query",
        "--function",
        "f",
        "SELECT COUNT(*) FROM {t}",
    ]);
    assert!(
        !text.contains("owned_rows_only"),
        "no filter once pruned: {text}"
    );
}
