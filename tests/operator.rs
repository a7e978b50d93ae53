//! The operator's view on real servers (issue 13, items 4 and 6): `-v` and `--log-file`
//! show every statement with a timestamp and its node, secrets and row values masked, from
//! worker threads too; `status --exact` and `rebalance plan` measure sizes that are right
//! after a move, so the plan does not move a shard back; the plan table lists its moves in
//! human units; `--by count` keeps only moves that lower the peak.

mod common;

use common::{connect, shardctl, FleetSetup, Function};
use shardctl::sandbox::SandboxBuilder;
use std::path::Path;

/// Rows of each big shard: 60,000 rows of 200 bytes, about 14 MiB of pages.
const BIG_ROWS: u64 = 60_000;

/// True for `2024-02-29T13:05:09.042Z`.
fn is_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    let digits = |r: std::ops::Range<usize>| r.into_iter().all(|i| b[i].is_ascii_digit());
    b.len() == 24
        && digits(0..4)
        && b[4] == b'-'
        && digits(5..7)
        && b[7] == b'-'
        && digits(8..10)
        && b[10] == b'T'
        && digits(11..13)
        && b[13] == b':'
        && digits(14..16)
        && b[16] == b':'
        && digits(17..19)
        && b[19] == b'.'
        && digits(20..23)
        && b[23] == b'Z'
}

/// A statement line of the log: (timestamp, node, tag, statement).
fn statement_line(line: &str) -> Option<(&str, &str, &str, &str)> {
    let (ts, rest) = line.split_once(' ')?;
    let (node, rest) = rest.split_once(" [")?;
    let (tag, sql) = rest.split_once("]: ")?;
    Some((ts, node, tag, sql))
}

/// Every line of a log starts with a timestamp.
fn check_timestamps(log: &str) {
    assert!(!log.is_empty(), "an empty log");
    for line in log.lines() {
        let ts = line.split(' ').next().unwrap_or("");
        assert!(is_timestamp(ts), "a log line without a timestamp: {line}");
    }
}

/// The statements of a log sent to `node` whose text contains `what`.
fn sent<'a>(log: &'a str, node: &str, what: &str) -> Vec<&'a str> {
    log.lines()
        .filter(|l| statement_line(l).is_some_and(|(_, n, _, sql)| n == node && sql.contains(what)))
        .collect()
}

fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

fn password(file: &Path) -> String {
    std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .find_map(|l| {
            l.trim()
                .strip_prefix("password=")
                .map(|p| p.trim().to_string())
        })
        .unwrap_or_else(|| panic!("no password in {}", file.display()))
}

fn json(out: &[u8]) -> serde_json::Value {
    serde_json::from_slice(out)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(out)))
}

/// A shard of `status --output json`.
fn shard(status: &serde_json::Value, id: u64) -> serde_json::Value {
    status["shards"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["shard"] == id)
        .unwrap_or_else(|| panic!("no shard {id} in {status}"))
        .clone()
}

#[test]
fn the_log_file_is_private_appended_and_ends_with_the_outcome() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("run.log");
    for _ in 0..2 {
        shardctl()
            .args(["--config", "/nonexistent/shardctl.yaml", "--log-file"])
            .arg(&log)
            .arg("status")
            .assert()
            .code(3);
    }
    assert_eq!(mode(&log), 0o600);
    let text = std::fs::read_to_string(&log).unwrap();
    check_timestamps(&text);
    assert_eq!(text.matches(" shardctl: run ").count(), 2, "{text}");
    assert_eq!(
        text.matches(" shardctl: failed: exit 3: cannot read inventory")
            .count(),
        2,
        "{text}"
    );
    // A log file that cannot be opened is refused up front (exit 3), naming the option.
    shardctl()
        .args(["--log-file", "/nonexistent/dir/run.log", "status"])
        .assert()
        .code(3)
        .stderr(predicates::str::contains(
            "--log-file /nonexistent/dir/run.log",
        ));
}

#[test]
fn logs_and_exact_sizes_around_a_move() {
    let sb = SandboxBuilder::for_tests(3).unwrap().start().unwrap();
    let inv = sb.inventory_path();
    let cli = || {
        let mut c = shardctl();
        c.arg("--config").arg(&inv);
        c
    };
    let logs = tempfile::tempdir().unwrap();

    // Shards 1 and 2 on node1 and 3 on node2 are big; 4 (node2) and 5 (node3) hold a row.
    // Statistics never recalculate on their own (STATS_AUTO_RECALC=0, carried by the
    // copy), so a copied shard's statistics stay stale until refreshed. `b` has a BIT
    // column, which the native copy writes with bound multi-row INSERTs.
    let layout = [
        ("node1", "0"),
        ("node1", "100000"),
        ("node2", "200000"),
        ("node2", "300000"),
        ("node3", "400000"),
    ];
    let mut setup = FleetSetup::new()
        .schema(&[
            "CREATE DATABASE app",
            "CREATE TABLE app.t (id INT PRIMARY KEY, v VARCHAR(255)) STATS_AUTO_RECALC=0",
            "CREATE TABLE app.b (id INT PRIMARY KEY, flag BIT(8), note VARCHAR(64)) STATS_AUTO_RECALC=0",
        ])
        .function(
            Function::range("f")
                .tables(&[("app.t", "id"), ("app.b", "id")])
                .shards(&layout),
        );
    for (id, (node, lower)) in layout.iter().enumerate() {
        let id = id + 1;
        let lower: u64 = lower.parse().unwrap();
        let rows = if id <= 3 { BIG_ROWS } else { 1 };
        setup = setup.rows(
            node,
            &[
                format!(
                    "INSERT INTO app_{id}.t SELECT seq, REPEAT('x', 200) FROM app_{id}.seq_{lower}_to_{}",
                    lower + rows - 1
                ),
                format!(
                    "INSERT INTO app_{id}.b VALUES ({lower}, b'101', 'ROWSECRET-{id}-a'), ({}, b'1', 'ROWSECRET-{id}-b')",
                    lower + 1
                ),
            ],
        );
    }
    setup.build(&sb);

    // -v and --log-file on a parallel status: every node's statements, from its own worker
    // thread, timestamped and named; the file holds them whatever the terminal.
    let status_log = logs.path().join("status.log");
    let out = cli()
        .args(["-v", "--log-file"])
        .arg(&status_log)
        .args(["--output", "json", "status", "--exact"])
        .assert()
        .success()
        .get_output()
        .clone();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    check_timestamps(&stderr);
    assert_eq!(mode(&status_log), 0o600);
    let file = std::fs::read_to_string(&status_log).unwrap();
    check_timestamps(&file);
    for node in ["node1", "node2", "node3"] {
        for text in [&stderr, &file] {
            assert!(
                !sent(text, node, "SELECT table_schema, COUNT(*)").is_empty(),
                "{node}'s size query is not logged: {text}"
            );
            assert!(
                !sent(text, node, "ANALYZE NO_WRITE_TO_BINLOG TABLE").is_empty(),
                "{node}'s ANALYZE is not logged: {text}"
            );
        }
    }
    assert!(
        !sent(
            &file,
            "node1",
            "ANALYZE NO_WRITE_TO_BINLOG TABLE `app_1`.`b`, `app_1`.`t`"
        )
        .is_empty(),
        "{file}"
    );
    assert!(file.contains(" shardctl: done: exit 0"), "{file}");
    let before = json(&out.stdout);
    assert_eq!(before["size_source"], "exact");
    let big = shard(&before, 1);
    assert_eq!(big["size_source"], "exact");
    let big_bytes = big["bytes"].as_u64().unwrap();
    assert!(
        big_bytes >= BIG_ROWS * 200,
        "shard 1 holds {big_bytes} bytes"
    );

    // The plan table lists each move with its size in human units.
    let out = cli()
        .args(["rebalance", "plan"])
        .assert()
        .success()
        .get_output()
        .clone();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let row = text
        .lines()
        .find(|l| l.contains("node1") && l.contains("node3") && l.contains("MiB"))
        .unwrap_or_else(|| panic!("no move node1 -> node3 in MiB: {text}"));
    assert!(row.contains(" 1 ") || row.contains(" 2 "), "{row}");
    assert!(
        text.contains("1 moves") && text.contains("sizes: exact"),
        "{text}"
    );

    // A move with -v and a log file: copy workers, verify readers and the channel's
    // statements, each with its node; the replication password and the rows' values never.
    let move_log = logs.path().join("move.log");
    let out = cli()
        .args(["-v", "--log-file"])
        .arg(&move_log)
        .args(["move", "--shard", "1", "--to", "node3"])
        .assert()
        .success()
        .get_output()
        .clone();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    let file = std::fs::read_to_string(&move_log).unwrap();
    // stderr also carries the move's own step lines; its log lines are timestamped.
    let logged: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("]: ") || l.contains(" shardctl: "))
        .collect();
    assert!(logged.len() > 20, "{stderr}");
    check_timestamps(&logged.join("\n"));
    check_timestamps(&file);
    for text in [&stderr, &file] {
        let channel = sent(text, "node3", "MASTER_PASSWORD = '***'");
        assert!(
            !channel.is_empty(),
            "CHANGE MASTER not logged on node3: {text}"
        );
        assert!(
            sent(text, "node3", "LOAD DATA LOCAL INFILE")
                .iter()
                .any(|l| l.contains("[copy #")),
            "the copy workers' loads are not logged on node3: {text}"
        );
        assert!(
            sent(text, "node1", "SELECT")
                .iter()
                .any(|l| l.contains("[copy #")),
            "the copy workers' reads are not logged on node1: {text}"
        );
        assert!(
            sent(text, "node3", "INSERT INTO `app_1`.`b`")
                .iter()
                .any(|l| l.contains("values bound (not shown)")),
            "the bound INSERT of `b` is not logged: {text}"
        );
        assert!(!text.contains("ROWSECRET"), "a row value reached the log");
        assert!(!text.contains("-- bind:"), "bound values reached the log");
        let repl = password(&sb.dir().join("replication.cnf"));
        assert!(
            !text.contains(&repl),
            "the replication password reached the log"
        );
        let admin = password(&sb.dir().join("client.cnf"));
        assert!(!text.contains(&admin), "the admin password reached the log");
    }
    // The file has what -v leaves out: the step lines, and the outcome.
    assert!(file.contains(" flip done in "), "{file}");
    assert!(file.contains(" shardctl: done: exit 0"), "{file}");

    // Right after the move the target's statistics are stale: `status` says so ...
    let stale = json(
        &cli()
            .args(["--output", "json", "status"])
            .assert()
            .success()
            .get_output()
            .stdout,
    );
    assert_eq!(stale["size_source"], "statistics");
    let moved = shard(&stale, 1);
    assert_eq!(moved["node"], "node3");
    assert_eq!(moved["size_source"], "statistics");
    let stale_bytes = moved["bytes"].as_u64().unwrap();
    assert!(
        stale_bytes < big_bytes / 10,
        "statistics are not stale after the copy ({stale_bytes} of {big_bytes} bytes): the test shows nothing"
    );
    // ... and a plan from those statistics would move a big shard onto node3 again ...
    let out = cli()
        .args([
            "--output",
            "json",
            "rebalance",
            "plan",
            "--sizes",
            "statistics",
        ])
        .assert()
        .success()
        .get_output()
        .clone();
    let v = json(&out.stdout);
    assert_eq!(v["size_source"], "statistics");
    assert!(
        v["moves"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["to"] == "node3"),
        "{v}"
    );
    // ... while the default plan measures exactly and moves nothing back.
    let out = cli()
        .args(["--output", "json", "rebalance", "plan"])
        .assert()
        .success()
        .get_output()
        .clone();
    let v = json(&out.stdout);
    assert_eq!(v["size_source"], "exact");
    assert_eq!(v["moves"], serde_json::json!([]), "{v}");
    // `status --exact` reports the moved shard at its real size, and says so.
    let out = cli()
        .args(["status", "--exact"])
        .assert()
        .success()
        .get_output()
        .clone();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(text.contains("sizes: exact"), "{text}");
    let exact = json(
        &cli()
            .args(["--output", "json", "status", "--exact"])
            .assert()
            .success()
            .get_output()
            .stdout,
    );
    let moved = shard(&exact, 1);
    assert_eq!(moved["size_source"], "exact");
    let exact_bytes = moved["bytes"].as_u64().unwrap();
    assert!(
        exact_bytes >= BIG_ROWS * 200
            && exact_bytes * 4 >= big_bytes * 3
            && exact_bytes * 3 <= big_bytes * 4,
        "exact {exact_bytes} bytes on node3, {big_bytes} on node1 before the move"
    );
    // Not more than the table files hold on disk.
    let mut n3 = connect(&sb, "node3");
    let file_bytes = common::count(
        &mut n3,
        "SELECT CAST(SUM(FILE_SIZE) AS SIGNED) FROM information_schema.INNODB_SYS_TABLESPACES \
         WHERE NAME IN ('app_1/t', 'app_1/b')",
    ) as u64;
    assert!(
        exact_bytes <= file_bytes,
        "{exact_bytes} > files {file_bytes}"
    );

    // By count, 1, 2 and 2 shards: no move lowers the peak (the threshold pass alone
    // would send shard 1 back to node1), so there is no plan.
    let out = cli()
        .args(["--output", "json", "rebalance", "plan", "--by", "count"])
        .assert()
        .success()
        .get_output()
        .clone();
    let v = json(&out.stdout);
    assert_eq!(v["moves"], serde_json::json!([]), "{v}");
    cli()
        .args(["rebalance", "plan", "--by", "count"])
        .assert()
        .success()
        .stdout(predicates::str::contains("0 moves"));

    // The workload's streams (one thread and connection per shard) log with their node.
    let wl_log = logs.path().join("workload.log");
    cli()
        .args(["--log-file"])
        .arg(&wl_log)
        .args([
            "workload",
            "--function",
            "f",
            "--setup",
            "--rate",
            "50",
            "--seconds",
            "2",
        ])
        .assert()
        .success();
    let file = std::fs::read_to_string(&wl_log).unwrap();
    check_timestamps(&file);
    for (node, schema) in [("node3", "app_1"), ("node1", "app_2"), ("node2", "app_3")] {
        assert!(
            sent(&file, node, &format!("INSERT INTO `{schema}`."))
                .iter()
                .all(|l| l.contains("values bound (not shown)"))
                && !sent(&file, node, &format!("INSERT INTO `{schema}`.")).is_empty(),
            "{node}: no workload write of {schema} logged: {file}"
        );
    }
}
