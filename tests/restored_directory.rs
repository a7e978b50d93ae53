//! A directory restored from an older backup (issue 26): it places a moved shard on the
//! node it left. `status` names the stale location in its table and its JSON instead of
//! showing the fleet as healthy.

mod common;

use common::{connect, exec, shardctl};
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
    exec(
        &mut connect(&sb, "node1"),
        &[
            "CREATE DATABASE app",
            "CREATE TABLE app.items (k BIGINT NOT NULL PRIMARY KEY, note VARCHAR(40) NULL)",
        ],
    );
    common::range_directory(
        &inv,
        &["node1", "node2"],
        &[("app.items", "k")],
        &[("node1", "0")],
    );
    exec(
        &mut connect(&sb, "node1"),
        &["INSERT INTO app_1.items (k, note) SELECT seq, 'x' FROM app_1.seq_1_to_100"],
    );
    assert!(shard_report(&sb, 1)["stale_location"].is_null());

    // The backup, then a move, then the backup restored over the directory.
    let dump = client(&sb, "mariadb-dump")
        .args(["--skip-dump-date", "--databases", "shardctl"])
        .output()
        .unwrap();
    assert!(
        dump.status.success(),
        "{}",
        String::from_utf8_lossy(&dump.stderr)
    );
    cli(&["move", "--shard", "1", "--to", "node2", "--yes"]).success();
    let moved = shard_report(&sb, 1);
    assert_eq!(moved["node"], "node2");
    assert!(moved["stale_location"].is_null(), "{moved}");
    let mut restore = client(&sb, "mariadb")
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(restore.stdin.as_mut().unwrap(), &dump.stdout).unwrap();
    drop(restore.stdin.take());
    let restored = restore.wait_with_output().unwrap();
    assert!(
        restored.status.success(),
        "{}",
        String::from_utf8_lossy(&restored.stderr)
    );

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
