//! `shardctl rebalance` on real servers: a plan spreads shards piled on one node, and
//! `apply` runs two moves at once; bad plans and stale plans are refused.

mod common;

use common::{shardctl, write_file, FleetSetup, Function};
use predicates::prelude::*;
use shardctl::sandbox::SandboxBuilder;

#[test]
fn a_plan_spreads_the_shards_and_apply_runs_two_moves_at_once() {
    let sb = SandboxBuilder::for_tests(3).unwrap().start().unwrap();
    let inv = sb.inventory_path();
    let cli = |args: &[&str]| shardctl().arg("--config").arg(&inv).args(args).assert();
    let piled: Vec<(&str, &str)> = ["0", "1000", "2000", "3000", "4000", "5000"]
        .iter()
        .map(|lb| ("node1", *lb))
        .collect();
    let rows: Vec<String> = (1..=6)
        .map(|id| {
            format!(
                "INSERT INTO app_{id}.t SELECT seq, 1 FROM app_{id}.seq_{}_to_{}",
                (id - 1) * 1000,
                (id - 1) * 1000 + 499
            )
        })
        .collect();
    FleetSetup::new()
        .schema(&[
            "CREATE DATABASE app",
            "CREATE TABLE app.t (id INT PRIMARY KEY, v INT)",
        ])
        .function(Function::range("f").table("app.t", "id").shards(&piled))
        .rows("node1", &rows)
        .build(&sb);

    // Weighed by load from a metrics file: shard 1 is hot, so the others leave node1.
    let mdir = tempfile::tempdir().unwrap();
    let metrics = write_file(
        mdir.path(),
        "load.yaml",
        "1: 1000\n2: 10\n3: 10\n4: 10\n5: 10\n6: 10\n",
    );
    let out = cli(&[
        "--output",
        "json",
        "rebalance",
        "plan",
        "--by",
        "load",
        "--metrics",
        metrics.to_str().unwrap(),
    ])
    .success()
    .get_output()
    .stdout
    .clone();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let moved: Vec<u64> = v["plan"]["moves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["shard"].as_u64().unwrap())
        .collect();
    assert_eq!(moved.len(), 5, "{v}");
    assert!(
        !moved.contains(&1),
        "the hot shard stays, the rest leave: {moved:?}"
    );
    let partial = write_file(mdir.path(), "partial.yaml", "1: 5\n");
    cli(&[
        "rebalance",
        "plan",
        "--by",
        "load",
        "--metrics",
        partial.to_str().unwrap(),
    ])
    .code(3)
    .stderr(predicate::str::contains("no load for shard 2"));
    cli(&["rebalance", "plan", "--by", "load"])
        .code(2)
        .stderr(predicate::str::contains("performance_schema is off"));

    // Bad requests: nothing may change.
    cli(&["rebalance", "plan", "--threshold", "-1"])
        .code(2)
        .stderr(
            predicate::str::contains("--threshold")
                .and(predicate::str::contains("must be 0 or more")),
        );
    cli(&[
        "rebalance",
        "plan",
        "--drain",
        "node1",
        "--drain",
        "node2",
        "--drain",
        "node3",
    ])
    .code(2)
    .stderr(predicate::str::contains("no node to hold the shards"));
    cli(&["rebalance", "plan", "--drain", "node9"])
        .code(2)
        .stderr(predicate::str::contains("--drain node9"));

    let dir = tempfile::tempdir().unwrap();
    let plan = dir.path().join("plan.yaml");
    let out = cli(&[
        "rebalance",
        "plan",
        "--by",
        "count",
        "--out",
        plan.to_str().unwrap(),
    ])
    .success()
    .get_output()
    .stdout
    .clone();
    let text = String::from_utf8_lossy(&out);
    assert!(text.contains("4 moves"), "{text}");
    let yaml = std::fs::read_to_string(&plan).unwrap();
    assert!(yaml.contains("directory_version"));

    // A plan naming an unknown shard or node is refused.
    let bad = write_file(
        dir.path(),
        "bad.yaml",
        &yaml.replacen("shard: ", "shard: 99", 1),
    );
    cli(&["rebalance", "apply", bad.to_str().unwrap()])
        .code(3)
        .stderr(predicate::str::contains("unknown shard"));
    let bad = write_file(
        dir.path(),
        "bad2.yaml",
        &yaml.replacen("to: node", "to: nodeX", 1),
    );
    cli(&["rebalance", "apply", bad.to_str().unwrap()])
        .code(3)
        .stderr(predicate::str::contains("unknown node"));

    // The dry run shows each move's procedure on these servers and changes nothing.
    let out = cli(&[
        "--output",
        "json",
        "rebalance",
        "apply",
        plan.to_str().unwrap(),
        "--dry-run",
    ])
    .success()
    .get_output()
    .stdout
    .clone();
    let dry: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(dry["plans"].as_array().unwrap().len(), 4, "{dry}");
    assert!(dry["plans"][0]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .any(|s| s["name"] == "flip"));
    cli(&["rebalance", "apply", plan.to_str().unwrap(), "--dry-run"])
        .success()
        .stdout(predicate::str::contains("4 moves; nothing was changed"));
    // A move whose `from` is not where the shard lives is refused.
    let first_from = yaml
        .lines()
        .find_map(|l| l.trim().strip_prefix("from: "))
        .unwrap()
        .to_string();
    let elsewhere = ["node1", "node2", "node3"]
        .into_iter()
        .find(|n| *n != first_from)
        .unwrap();
    let wrong = write_file(
        dir.path(),
        "wrong-from.yaml",
        &yaml.replacen(
            &format!("from: {first_from}"),
            &format!("from: {elsewhere}"),
            1,
        ),
    );
    cli(&["rebalance", "apply", wrong.to_str().unwrap(), "--dry-run"])
        .code(5)
        .stderr(predicate::str::contains("but it lives on"));

    let out = cli(&[
        "--output",
        "json",
        "rebalance",
        "apply",
        plan.to_str().unwrap(),
        "--parallel",
        "2",
        "--per-node",
        "2",
    ])
    .get_output()
    .clone();
    if !out.status.success() {
        // Name the failed move's own error, not only "1 of 4 moves failed".
        let ops = cli(&["--output", "json", "ops"])
            .get_output()
            .stdout
            .clone();
        panic!(
            "rebalance apply failed: {}\n{}\nops: {}",
            String::from_utf8_lossy(&out.stderr),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&ops)
        );
    }
    let out = out.stdout;
    // JSON Lines: one `move_finished` event per move, then the summary.
    let text = String::from_utf8_lossy(&out).to_string();
    let events: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let finished = events
        .iter()
        .filter(|e| e["event"] == "move_finished")
        .count();
    assert_eq!(finished, 4, "{text}");
    let applied = events.last().unwrap().clone();
    assert_eq!(applied["event"], "summary", "{text}");
    assert_eq!(applied["outcome"], "applied", "{text}");
    let moves = applied["moves"].as_array().unwrap();
    assert_eq!(moves.len(), 4);
    assert!(moves.iter().all(|m| m["error"].is_null()), "{applied}");
    let overlap = moves.iter().any(|a| {
        moves.iter().any(|b| {
            a["shard"] != b["shard"]
                && a["started_ms"].as_u64() < b["ended_ms"].as_u64()
                && b["started_ms"].as_u64() < a["ended_ms"].as_u64()
        })
    });
    assert!(overlap, "two moves ran at once: {applied}");
    // Every node now holds two shards.
    let v: serde_json::Value = serde_json::from_slice(
        &cli(&["--output", "json", "status"])
            .success()
            .get_output()
            .stdout
            .clone(),
    )
    .unwrap();
    for n in v["nodes"].as_array().unwrap() {
        assert_eq!(n["shards"], 2, "{n}");
    }
    // The plan is now stale: refused, unless told to plan again (nothing left to move).
    cli(&["rebalance", "apply", plan.to_str().unwrap()])
        .code(5)
        .stderr(predicate::str::contains("plan again"));
    cli(&["rebalance", "apply", plan.to_str().unwrap(), "--replan"])
        .success()
        .stderr(
            predicate::str::contains("planned again under its limits (threshold 0.05")
                .and(predicate::str::contains("): 0 moves")),
        );

    // A node without a capacity in the inventory is named.
    let text = std::fs::read_to_string(&inv)
        .unwrap()
        .replacen("    capacity: 1.0\n", "", 1);
    let noc = write_file(dir.path(), "inv.yaml", &text);
    shardctl()
        .arg("--config")
        .arg(&noc)
        .args(["rebalance", "plan"])
        .assert()
        .code(3)
        .stderr(predicate::str::contains("has no capacity in the inventory"));
    let zero = write_file(
        dir.path(),
        "inv0.yaml",
        &std::fs::read_to_string(&inv)
            .unwrap()
            .replacen("capacity: 1.0", "capacity: 0", 1),
    );
    shardctl()
        .arg("--config")
        .arg(&zero)
        .args(["rebalance", "plan"])
        .assert()
        .code(3)
        .stderr(predicate::str::contains(
            "capacity must be a positive number",
        ));
}
