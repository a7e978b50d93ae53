//! The reference commands on real servers: `simulate` (checked against counts computed
//! here, independently), `ids check` and sequences (threads racing), `global check|sync`,
//! cross-shard `query`; and each one's bad input refused with nothing changed.

mod common;

use common::{
    connect, count, exec, serial, shardctl, write_file, FleetSetup, Function, SharedFleet,
    EMPLOYEE_TABLES,
};
use serde_json::Value as Json;
use shardctl::directory::{Directory, Router};
use shardctl::sandbox::Sandbox;
use std::collections::HashSet;
use std::sync::OnceLock;

const USAGE: i32 = 2;
const CONFIG: i32 = 3;
const REFUSED: i32 = 5;
const TIMEOUT: i32 = 6;

// The tests hold `serial()`: tests that change the fleet run one at a time.

/// node1..node3 in the directory; function `f` (range, int) sharding the employees schema
/// by emp_no in shards 1 (node1, from 0), 2 (node2, from 20000), 3 (node3, from 40000);
/// `departments` global; 300 employees from 10001 every 150 written through the router.
static FLEET: SharedFleet = SharedFleet::over(common::sandbox3, set_up);

/// Sets up the fleet once, on first use (see [`FLEET`]).
fn set_up(sb: &Sandbox) {
    FleetSetup::new()
        .fixture("company.sql")
        .function(Function::range("f").tables(EMPLOYEE_TABLES).shards(&[
            ("node1", "0"),
            ("node2", "20000"),
            ("node3", "40000"),
        ]))
        .global("employees.departments")
        .sample(&["--count", "300", "--start", "10001", "--step", "150"])
        .build(sb);
}

fn json(args: &[&str]) -> Json {
    FLEET.json(args)
}

/// Runs a streaming command and reads its JSON Lines.
fn json_lines(args: &[&str]) -> Vec<Json> {
    let mut all = vec!["--output", "json"];
    all.extend_from_slice(args);
    let out = FLEET
        .cli(&all)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{args:?}: {e}: {l}")))
        .collect()
}

/// Runs a command that must fail with `code` and one line containing `needle`, and checks
/// the directory's version did not move.
fn refused(args: &[&str], code: i32, needle: &str) {
    let before = directory_version();
    let out = FLEET.cli(args).assert().code(code).get_output().clone();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(needle), "{args:?}: {err}");
    // One line (clap adds its "For more information" hint after a blank line).
    let lines = err
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with("For more information"))
        .count();
    assert_eq!(lines, 1, "{args:?}: {err}");
    assert_eq!(
        directory_version(),
        before,
        "{args:?} changed the directory"
    );
}

fn directory_version() -> u64 {
    let inv = common::inventory(FLEET.sandbox());
    Directory::open(&inv).unwrap().version().unwrap()
}

fn scheme<'a>(out: &'a Json, name: &str) -> &'a Json {
    out["schemes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["scheme"] == name)
        .unwrap_or_else(|| panic!("no scheme {name} in {out}"))
}

// ---------------------------------------------------------------------------------------
// simulate

#[test]
fn simulate_static_schemes_match_counts_computed_here() {
    let dir = tempfile::tempdir().unwrap();
    let keys: Vec<String> = (0..20_000).map(|i| format!("user{i}")).collect();
    let size = |i: usize| (i % 97 + 1) as u64;
    let text: String = keys
        .iter()
        .enumerate()
        .map(|(i, k)| format!("{k}\t{}\n", size(i)))
        .collect();
    let file = write_file(dir.path(), "keys.txt", &text);
    let out = json(&[
        "simulate",
        "--keys-file",
        file.to_str().unwrap(),
        "--nodes",
        "3",
        "--to-nodes",
        "4",
    ]);
    assert_eq!(out["keys"], 20_000);
    // Modulo, by hand: crc32 and md5 of each key's text.
    use md5::{Digest, Md5};
    let (mut crc_moved, mut crc_bytes, mut md5_moved) = (0u64, 0u64, 0u64);
    let mut crc_after = [0u64; 4];
    for (i, k) in keys.iter().enumerate() {
        let c = crc32fast::hash(k.as_bytes());
        crc_after[(c % 4) as usize] += 1;
        if c % 3 != c % 4 {
            crc_moved += 1;
            crc_bytes += size(i);
        }
        let d: [u8; 16] = Md5::digest(k.as_bytes()).into();
        let m = u128::from_be_bytes(d);
        if m % 3 != m % 4 {
            md5_moved += 1;
        }
    }
    let crc = scheme(&out, "modulo-crc32");
    assert_eq!(crc["moved_keys"], crc_moved);
    assert_eq!(crc["moved_bytes"], crc_bytes);
    let total: u64 = (0..keys.len()).map(size).sum();
    assert_eq!(crc["total_bytes"], total);
    let max = *crc_after.iter().max().unwrap() as f64;
    let bal = crc["balance_after"].as_f64().unwrap();
    assert!((bal - max / 5000.0).abs() < 1e-9, "{bal}");
    assert_eq!(scheme(&out, "modulo-md5")["moved_keys"], md5_moved);
    // Closed forms: modulo 3 -> 4 keeps 3 residues of 12 (75% move); consistent hashing
    // moves about the new node's share, 1/4.
    for s in ["modulo-crc32", "modulo-md5"] {
        let share = scheme(&out, s)["moved_share"].as_f64().unwrap();
        assert!((share - 0.75).abs() < 0.02, "{s}: {share}");
    }
    let share = scheme(&out, "consistent-md5")["moved_share"]
        .as_f64()
        .unwrap();
    assert!((share - 0.25).abs() < 0.05, "consistent-md5: {share}");
    // Consistent hashing only ever moves keys onto the new node.
    let c = scheme(&out, "consistent-md5");
    let before: Vec<u64> = c["per_node_before"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["keys"].as_u64().unwrap())
        .collect();
    let after: Vec<u64> = c["per_node_after"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["keys"].as_u64().unwrap())
        .collect();
    assert_eq!(after[3], c["moved_keys"].as_u64().unwrap());
    for i in 0..3 {
        assert!(after[i] <= before[i]);
    }
}

#[test]
fn simulate_the_directory_on_a_live_column() {
    let _g = serial();
    let sb = FLEET.sandbox();
    let mut n2 = connect(sb, "node2");
    let mut held: Vec<i64> = n2
        .rows(&shardctl::server::Stmt::text(
            "SELECT emp_no FROM employees_2.employees ORDER BY emp_no",
        ))
        .unwrap()
        .into_iter()
        .map(mysql::from_row::<i64>)
        .collect();
    held.dedup();
    let median = held[held.len() / 2];
    let moving = held.iter().filter(|k| **k >= median).count() as u64;
    let total = count(
        &mut connect(sb, "node1"),
        "SELECT COUNT(*) FROM employees_1.employees",
    ) + count(&mut n2, "SELECT COUNT(*) FROM employees_2.employees")
        + count(
            &mut connect(sb, "node3"),
            "SELECT COUNT(*) FROM employees_3.employees",
        );
    let out = json(&[
        "simulate",
        "--column",
        "employees.employees.emp_no",
        "--function",
        "f",
        "--split",
        "2",
        "--to",
        "node3",
        "--to-nodes",
        "4",
    ]);
    assert_eq!(out["keys"], total);
    let d = scheme(&out, "directory");
    assert_eq!(d["moved_keys"], moving, "{d}");
    assert_eq!(d["shard_changes"], moving);
    assert_eq!(d["unmapped_keys"], 0);
    // N defaults to the function's nodes (3).
    assert_eq!(scheme(&out, "modulo-crc32")["nodes_before"], 3);
    // Sizes of a live table come from its average row length.
    assert!(d["moved_bytes"].as_u64().is_some());
    // A move carries every key of the shard.
    let out = json(&[
        "simulate",
        "--column",
        "employees.employees.emp_no",
        "--function",
        "f",
        "--move",
        "2",
        "--to",
        "node1",
    ]);
    let d = scheme(&out, "directory");
    assert_eq!(d["moved_keys"], held.len() as u64);
    assert_eq!(d["shard_changes"], 0);
    assert_eq!(d["nodes_after"], 2);
    // A split at a given key.
    let out = json(&[
        "simulate",
        "--range",
        "0..60000",
        "--step",
        "7",
        "--function",
        "f",
        "--split",
        "1",
        "--to",
        "node2",
        "--at",
        "5000",
    ]);
    let d = scheme(&out, "directory");
    let expect = (0..60000i64)
        .step_by(7)
        .filter(|k| (5000..20000).contains(k))
        .count();
    assert_eq!(d["moved_keys"], expect as u64);
}

#[test]
fn simulate_bad_input_is_refused_naming_it() {
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    let file = write_file(dir.path(), "keys.txt", "1\n2\n\n4\n5\tmany\n");
    let f = file.to_str().unwrap();
    refused(
        &[
            "simulate",
            "--keys-file",
            f,
            "--nodes",
            "2",
            "--to-nodes",
            "3",
        ],
        CONFIG,
        "keys.txt: 2 bad lines: line 3: empty key; line 5:",
    );
    refused(
        &[
            "simulate",
            "--range",
            "1..100",
            "--nodes",
            "2",
            "--to-nodes",
            "3",
            "--scheme",
            "modulus",
        ],
        USAGE,
        "unknown scheme \"modulus\"",
    );
    refused(
        &[
            "simulate",
            "--range",
            "1..100",
            "--nodes",
            "2",
            "--to-nodes",
            "0",
        ],
        USAGE,
        "'--to-nodes <TO_NODES>': must be at least 1",
    );
    refused(
        &[
            "simulate",
            "--range",
            "1..100",
            "--function",
            "f",
            "--split",
            "99",
            "--to",
            "node2",
        ],
        USAGE,
        "unknown shard 99",
    );
    refused(
        &[
            "simulate",
            "--range",
            "1..100",
            "--function",
            "f",
            "--split",
            "1",
            "--to",
            "node2",
            "--at",
            "30000",
        ],
        USAGE,
        "--at 30000: not inside shard 1's range",
    );
    let words = write_file(dir.path(), "words.txt", "10\n11\nabc\n");
    refused(
        &[
            "simulate",
            "--keys-file",
            words.to_str().unwrap(),
            "--function",
            "f",
            "--move",
            "1",
            "--to",
            "node2",
        ],
        USAGE,
        "words.txt:3: \"abc\" is not a key of function f",
    );
}

// ---------------------------------------------------------------------------------------
// ids

#[test]
fn ids_check_finds_ids_on_more_than_one_shard() {
    let _g = serial();
    let sb = FLEET.sandbox();
    let out = json(&["ids", "check"]);
    let emp = out["tables"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["table"] == "employees")
        .unwrap()
        .clone();
    assert_eq!(emp["scheme"], "sharding_key");
    assert_eq!(emp["duplicate_ids"], 0);
    assert_eq!(emp["ids"], 300);
    assert!(out["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .any(|s| s["table"] == "salaries"));
    assert_eq!(out["nodes"][0]["auto_increment_increment"], 1);
    // An AUTO_INCREMENT table counting 1, 2, 3 on every shard.
    for (node, shard, rows) in [("node1", 1, 3), ("node2", 2, 5), ("node3", 3, 2)] {
        let mut c = connect(sb, node);
        exec(
            &mut c,
            &[&format!(
                "CREATE TABLE employees_{shard}.notes (id BIGINT AUTO_INCREMENT PRIMARY KEY, emp_no INT NOT NULL, body VARCHAR(20))"
            )],
        );
        for _ in 0..rows {
            exec(
                &mut c,
                &[&format!(
                    "INSERT INTO employees_{shard}.notes (emp_no, body) VALUES ({}, 'x')",
                    10001 + 20000 * (shard - 1)
                )],
            );
        }
    }
    FLEET
        .cli(&[
            "table",
            "add",
            "employees.notes",
            "--function",
            "f",
            "--column",
            "emp_no",
        ])
        .assert()
        .success();
    let out = FLEET
        .cli(&["--output", "json", "ids", "check"])
        .assert()
        .code(REFUSED)
        .get_output()
        .clone();
    let report: Json = serde_json::from_slice(&out.stdout).unwrap();
    let notes = report["tables"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["table"] == "notes")
        .unwrap();
    // ids 1..=5, 1..=3, 1..=2: 1 and 2 are on three shards, 3 on two; 4 and 5 on one.
    assert_eq!(notes["duplicate_ids"], 3);
    assert_eq!(notes["ids"], 10);
    assert_eq!(notes["auto_increment"], true);
    assert_eq!(notes["scheme"], "none");
    assert_eq!(notes["examples"][0]["id"], 1);
    assert_eq!(notes["examples"][0]["shards"], serde_json::json!([1, 2, 3]));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("ids are not unique across shards in employees.notes"),
        "{err}"
    );
    // Rows out of the way, so later tests see the fleet as before.
    for (node, shard) in [("node1", 1), ("node2", 2), ("node3", 3)] {
        exec(
            &mut connect(sb, node),
            &[&format!("DELETE FROM employees_{shard}.notes")],
        );
    }
    FLEET
        .cli(&["table", "remove", "employees.notes"])
        .assert()
        .success();
}

#[test]
fn sequences_hand_out_unique_ids_to_racing_threads() {
    let _g = serial();
    let sb = FLEET.sandbox();
    FLEET
        .cli(&["ids", "sequence", "create", "orders", "--block", "7"])
        .assert()
        .success();
    let inv = common::inventory(sb);
    let threads: Vec<_> = (0..8)
        .map(|_| {
            let inv = inv.clone();
            std::thread::spawn(move || {
                let mut r = Router::connect(&inv).unwrap();
                (0..60)
                    .map(|_| r.next_id("orders").unwrap())
                    .collect::<Vec<i64>>()
            })
        })
        .collect();
    let mut all: Vec<i64> = Vec::new();
    for t in threads {
        all.extend(t.join().unwrap());
    }
    // The command line races the routers too.
    let cli_blocks: Vec<Json> = (0..5)
        .map(|_| json(&["ids", "sequence", "next", "orders", "--count", "3"]))
        .collect();
    for b in &cli_blocks {
        let (f, l) = (b["first"].as_i64().unwrap(), b["last"].as_i64().unwrap());
        assert_eq!(l - f + 1, 3);
        all.extend(f..=l);
    }
    let unique: HashSet<i64> = all.iter().copied().collect();
    assert_eq!(unique.len(), all.len(), "an id was handed out twice");
    assert!(all.iter().all(|i| *i >= 1));
    let show = json(&["ids", "sequence", "show", "orders"]);
    let next = show["sequences"][0]["next_value"].as_i64().unwrap();
    assert!(all.iter().all(|i| *i < next));
    // 8 routers took whole blocks of 7 (60 ids = 9 blocks each) and the CLI 5 x 3.
    assert_eq!(next, 1 + 8 * 9 * 7 + 15);
}

#[test]
fn sequence_exhausted_or_contended_is_refused_and_unchanged() {
    let _g = serial();
    let sb = FLEET.sandbox();
    FLEET
        .cli(&["ids", "sequence", "create", "tiny", "--max", "5"])
        .assert()
        .success();
    json(&["ids", "sequence", "next", "tiny", "--count", "4"]);
    refused(
        &["ids", "sequence", "next", "tiny", "--count", "2"],
        REFUSED,
        "sequence tiny is exhausted: 1 value left up to 5, 2 asked",
    );
    let show = json(&["ids", "sequence", "show", "tiny"]);
    assert_eq!(show["sequences"][0]["next_value"], 5);
    refused(
        &["ids", "sequence", "create", "tiny"],
        USAGE,
        "sequence tiny already exists",
    );
    refused(
        &["ids", "sequence", "next", "nope"],
        USAGE,
        "unknown sequence \"nope\"",
    );
    // A caller holding the row: the next one gives up after --lock-wait.
    let mut holder = connect(sb, "node1");
    exec(
        &mut holder,
        &[
            "START TRANSACTION",
            "SELECT * FROM shardctl.sequences WHERE name = 'tiny' FOR UPDATE",
        ],
    );
    refused(
        &[
            "ids",
            "sequence",
            "next",
            "tiny",
            "--count",
            "1",
            "--lock-wait",
            "1",
        ],
        TIMEOUT,
        "sequence tiny is contended",
    );
    exec(&mut holder, &["ROLLBACK"]);
    let show = json(&["ids", "sequence", "show", "tiny"]);
    assert_eq!(show["sequences"][0]["next_value"], 5);
    let last = json(&["ids", "sequence", "next", "tiny", "--count", "1"]);
    assert_eq!(last["first"], 5);
}

// ---------------------------------------------------------------------------------------
// global tables

fn departments(sb: &Sandbox, node: &str, shard: u32) -> String {
    let mut c = connect(sb, node);
    c.first::<String>(&shardctl::server::Stmt::text(format!(
        "SELECT COALESCE(GROUP_CONCAT(dept_no, '=', dept_name ORDER BY dept_no SEPARATOR ','), '') FROM employees_{shard}.departments"
    )))
    .unwrap()
    .unwrap()
}

fn shard_state(report: &Json, shard: u64) -> Json {
    report["tables"][0]["shards"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["shard"] == shard)
        .unwrap()
        .clone()
}

#[test]
fn global_tables_are_checked_and_synced_from_the_recorded_source() {
    let _g = serial();
    let sb = FLEET.sandbox();
    // No source recorded yet (another test may have recorded one).
    exec(
        &mut connect(sb, "node1"),
        &["DELETE FROM shardctl.global_sources"],
    );
    let same = json(&["global", "check"]);
    assert_eq!(shard_state(&same, 1)["state"], "source");
    assert_eq!(same["tables"][0]["source_recorded"], false);
    for s in [2, 3] {
        assert_eq!(shard_state(&same, s)["state"], "same");
        assert_eq!(shard_state(&same, s)["rows"], 9);
    }
    let source = departments(sb, "node1", 1);
    let mut n2 = connect(sb, "node2");
    let dept_emp = count(&mut n2, "SELECT COUNT(*) FROM employees_2.dept_emp");
    exec(
        &mut n2,
        &[
            "SET SESSION foreign_key_checks = 0",
            "UPDATE employees_2.departments SET dept_name = 'Sales and Marketing' WHERE dept_no = 'd007'",
            "DELETE FROM employees_2.departments WHERE dept_no = 'd009'",
            "INSERT INTO employees_2.departments VALUES ('d010', 'Legal')",
        ],
    );
    let out = FLEET
        .cli(&["--output", "json", "global", "check"])
        .assert()
        .code(REFUSED)
        .get_output()
        .clone();
    let report: Json = serde_json::from_slice(&out.stdout).unwrap();
    let s2 = shard_state(&report, 2);
    assert_eq!(s2["state"], "differs");
    assert_eq!(s2["node"], "node2");
    assert_eq!(
        (
            s2["missing_rows"].clone(),
            s2["extra_rows"].clone(),
            s2["changed_rows"].clone()
        ),
        (1.into(), 1.into(), 1.into())
    );
    assert_eq!(shard_state(&report, 3)["state"], "same");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("employees.departments differs on shard 2"),
        "{err}"
    );
    // No source recorded: sync refuses.
    refused(
        &["global", "sync"],
        REFUSED,
        "has no recorded source of truth",
    );
    FLEET
        .cli(&["global", "source", "employees.departments", "--shard", "1"])
        .assert()
        .success();
    // A dry run shows the statements and changes nothing.
    let diverged = departments(sb, "node2", 2);
    let dry = json(&["global", "sync", "--dry-run"]);
    assert_eq!(dry["copies"][0]["shard"], 2);
    assert_eq!(dry["copies"][0]["upserted_rows"], 2);
    assert_eq!(dry["copies"][0]["deleted_rows"], 1);
    // The copy's extra key is deleted first, then the source's rows upserted.
    let statements: Vec<&str> = dry["copies"][0]["statements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    assert!(
        statements[0].starts_with("DELETE FROM `employees_2`.`departments`"),
        "{statements:?}"
    );
    assert!(
        statements[1].starts_with("INSERT INTO `employees_2`.`departments`"),
        "{statements:?}"
    );
    assert_eq!(departments(sb, "node2", 2), diverged);
    // The sync, in chunks of one row.
    let done = json(&["global", "sync", "--chunk", "1"]);
    assert_eq!(done["copies"][0]["chunks"], 3);
    assert_eq!(done["copies"][0]["verified"], true);
    assert_eq!(departments(sb, "node2", 2), source);
    json(&["global", "check"]);
    // No cascade reached the shard's own rows.
    assert_eq!(
        count(&mut n2, "SELECT COUNT(*) FROM employees_2.dept_emp"),
        dept_emp
    );
}

#[test]
fn global_sync_refuses_a_table_missing_on_a_shard() {
    let _g = serial();
    let sb = FLEET.sandbox();
    FLEET
        .cli(&["global", "source", "employees.departments", "--shard", "1"])
        .assert()
        .success();
    let mut n2 = connect(sb, "node2");
    exec(
        &mut n2,
        &["UPDATE employees_2.departments SET dept_name = 'Money' WHERE dept_no = 'd002'"],
    );
    let diverged = departments(sb, "node2", 2);
    let mut n3 = connect(sb, "node3");
    exec(
        &mut n3,
        &["RENAME TABLE employees_3.departments TO employees_3.departments_gone"],
    );
    refused(
        &["global", "sync"],
        REFUSED,
        "global table employees.departments is missing on shard 3 (node3)",
    );
    assert_eq!(
        departments(sb, "node2", 2),
        diverged,
        "the refused sync changed shard 2"
    );
    let out = FLEET
        .cli(&["--output", "json", "global", "check"])
        .assert()
        .code(REFUSED)
        .get_output()
        .clone();
    let report: Json = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(shard_state(&report, 3)["state"], "missing");
    exec(
        &mut n3,
        &["RENAME TABLE employees_3.departments_gone TO employees_3.departments"],
    );
    json(&["global", "sync"]);
    json(&["global", "check"]);
    refused(
        &["global", "source", "employees.departments", "--shard", "77"],
        USAGE,
        "unknown shard 77",
    );
    refused(
        &["global", "check", "employees.salaries"],
        USAGE,
        "employees.salaries is not a global table",
    );
}

/// `employees_N.codes` on shard N's node as `code=label` pairs with the code in hex (its
/// exact bytes), in byte order.
fn codes(sb: &Sandbox, node: &str, shard: u32) -> String {
    let mut c = connect(sb, node);
    c.first::<String>(&shardctl::server::Stmt::text(format!(
        "SELECT COALESCE(GROUP_CONCAT(HEX(code), '=', label ORDER BY HEX(code) SEPARATOR ','), '') FROM employees_{shard}.codes"
    )))
    .unwrap()
    .unwrap()
}

/// Drops the `codes` global table test's table and mapping (left over by a failed run).
fn drop_codes(sb: &Sandbox) {
    let _ = shardctl()
        .arg("--config")
        .arg(sb.inventory_path())
        .args(["table", "remove", "employees.codes"])
        .output();
    for (node, shard) in [("node1", 1), ("node2", 2), ("node3", 3)] {
        exec(
            &mut connect(sb, node),
            &[&format!("DROP TABLE IF EXISTS employees_{shard}.codes")],
        );
    }
}

#[test]
fn global_sync_keeps_rows_whose_keys_differ_only_by_collation() {
    let _g = serial();
    let sb = FLEET.sandbox();
    drop_codes(sb);
    // A case-insensitive, PAD SPACE key: `abc` = `ABC` and `x` = `x ` for the server.
    for (node, shard) in [("node1", 1), ("node2", 2), ("node3", 3)] {
        exec(
            &mut connect(sb, node),
            &[
                &format!(
                    "CREATE TABLE employees_{shard}.codes (code VARCHAR(10) CHARACTER SET utf8mb4 \
                     COLLATE utf8mb4_general_ci PRIMARY KEY, label VARCHAR(20) NOT NULL)"
                ),
                &format!(
                    "INSERT INTO employees_{shard}.codes VALUES ('abc', 'lower'), ('x', 'bare'), ('keep', 'same')"
                ),
            ],
        );
    }
    FLEET
        .cli(&["table", "add", "employees.codes", "--global"])
        .assert()
        .success();
    FLEET
        .cli(&["global", "source", "employees.codes", "--shard", "1"])
        .assert()
        .success();
    let source = codes(sb, "node1", 1);
    exec(
        &mut connect(sb, "node2"),
        &[
            "UPDATE employees_2.codes SET code = 'ABC' WHERE code = 'abc'",
            "UPDATE employees_2.codes SET code = 'x ' WHERE code = 'x'",
        ],
    );
    exec(
        &mut connect(sb, "node3"),
        &[
            "UPDATE employees_3.codes SET code = 'Abc', label = 'other' WHERE code = 'abc'",
            "INSERT INTO employees_3.codes VALUES ('extra', 'gone')",
        ],
    );
    let diverged = codes(sb, "node2", 2);
    assert_ne!(diverged, source);
    let out = FLEET
        .cli(&[
            "--output",
            "json",
            "global",
            "sync",
            "employees.codes",
            "--chunk",
            "1",
        ])
        .assert()
        .get_output()
        .clone();
    // Every shard holds exactly the source's bytes: no row lost to a key equal only under
    // the collation.
    for (node, shard) in [("node2", 2), ("node3", 3)] {
        assert_eq!(
            codes(sb, node, shard),
            source,
            "shard {shard} after the sync: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let done: Json = serde_json::from_slice(&out.stdout).unwrap();
    let copies = done["copies"].as_array().unwrap();
    assert_eq!(copies.len(), 2, "{done}");
    assert!(copies.iter().all(|c| c["verified"] == true), "{done}");
    json(&["global", "check", "employees.codes"]);
    // A key collated otherwise on a shard is refused before any change.
    let mut n3 = connect(sb, "node3");
    exec(
        &mut n3,
        &[
            "ALTER TABLE employees_3.codes MODIFY code VARCHAR(10) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin",
            "UPDATE employees_3.codes SET label = 'changed' WHERE code = 'keep'",
        ],
    );
    let before = codes(sb, "node3", 3);
    refused(
        &["global", "sync", "employees.codes"],
        REFUSED,
        "global table employees.codes has another primary key (columns or collations) on shard 3 (node3) than on its source, shard 1",
    );
    assert_eq!(
        codes(sb, "node3", 3),
        before,
        "the refused sync changed shard 3"
    );
    drop_codes(sb);
}

// ---------------------------------------------------------------------------------------
// query

/// Rows of a statement as text cells.
fn texts(sb: &Sandbox, node: &str, sql: &str) -> Vec<Vec<Option<String>>> {
    connect(sb, node)
        .rows(&shardctl::server::Stmt::text(sql))
        .unwrap()
        .into_iter()
        .map(|r| {
            r.unwrap()
                .into_iter()
                .map(|v| match v {
                    mysql::Value::NULL => None,
                    mysql::Value::Bytes(b) => Some(String::from_utf8(b).unwrap()),
                    other => Some(other.as_sql(true)),
                })
                .collect()
        })
        .collect()
}

const NODES: [(&str, u32); 3] = [("node1", 1), ("node2", 2), ("node3", 3)];

#[test]
fn query_merges_rows_and_aggregates_across_shards() {
    let _g = serial();
    let sb = FLEET.sandbox();
    // Totals computed here, shard by shard.
    let mut by_gender: std::collections::BTreeMap<String, (i64, i64, String)> = Default::default();
    let (mut n, mut total) = (0i64, 0i64);
    let mut small: Vec<i64> = Vec::new();
    for (node, shard) in NODES {
        for r in texts(sb, node, &format!("SELECT gender, COUNT(*), MIN(emp_no), MAX(hire_date) FROM employees_{shard}.employees GROUP BY gender")) {
            let e = by_gender.entry(r[0].clone().unwrap()).or_insert((0, i64::MAX, String::new()));
            e.0 += r[1].as_ref().unwrap().parse::<i64>().unwrap();
            e.1 = e.1.min(r[2].as_ref().unwrap().parse().unwrap());
            e.2 = e.2.clone().max(r[3].clone().unwrap());
        }
        let r = &texts(
            sb,
            node,
            &format!("SELECT COUNT(*), COALESCE(SUM(salary), 0) FROM employees_{shard}.salaries"),
        )[0];
        n += r[0].as_ref().unwrap().parse::<i64>().unwrap();
        total += r[1].as_ref().unwrap().parse::<i64>().unwrap();
        for r in texts(
            sb,
            node,
            &format!("SELECT emp_no FROM employees_{shard}.employees WHERE emp_no < 30000"),
        ) {
            small.push(r[0].as_ref().unwrap().parse().unwrap());
        }
    }
    let out = json(&[
        "query", "--function", "f",
        "SELECT gender, COUNT(*) AS n, MIN(emp_no), MAX(hire_date) FROM {employees} GROUP BY gender",
    ]);
    assert_eq!(out["aggregated"], true);
    assert_eq!(out["shards"].as_array().unwrap().len(), 3);
    let rows = out["rows"].as_array().unwrap();
    assert_eq!(rows.len(), by_gender.len());
    for (row, (g, (c, min, max))) in rows.iter().zip(&by_gender) {
        assert_eq!(row[0], g.as_str());
        assert_eq!(row[1], *c);
        assert_eq!(row[2], *min);
        assert_eq!(row[3], max.as_str());
    }
    let out = json(&[
        "query",
        "--function",
        "f",
        "SELECT COUNT(*), SUM(salary) FROM {salaries}",
    ]);
    assert_eq!(out["rows"][0][0], n);
    assert_eq!(out["rows"][0][1], total);
    // Plain rows stream with their shard: JSON Lines, the summary last.
    let events = json_lines(&[
        "query",
        "--function",
        "f",
        "SELECT emp_no FROM {employees} WHERE emp_no < 30000",
    ]);
    assert_eq!(events[0]["event"], "columns");
    assert_eq!(events[0]["columns"], serde_json::json!(["shard", "emp_no"]));
    let summary = events.last().unwrap();
    assert_eq!(summary["event"], "summary");
    assert_eq!(summary["outcome"], "finished");
    assert_eq!(summary["shards"].as_array().unwrap().len(), 3);
    let rows: Vec<&Json> = events.iter().filter(|e| e["event"] == "row").collect();
    assert_eq!(summary["rows"], rows.len());
    let mut got: Vec<i64> = rows.iter().map(|r| r["row"][0].as_i64().unwrap()).collect();
    got.sort();
    small.sort();
    assert_eq!(got, small);
    for r in &rows {
        let (shard, k) = (r["shard"].as_u64().unwrap(), r["row"][0].as_i64().unwrap());
        assert_eq!(shard, if k < 20000 { 1 } else { 2 });
    }
    for e in &events {
        assert!(e["at"].is_string() && e["json_version"] == 1, "{e}");
    }
    // A global table joins on each shard.
    let out = json(&[
        "query",
        "--function",
        "f",
        "SELECT COUNT(*) FROM {dept_emp} de JOIN {departments} d ON d.dept_no = de.dept_no",
    ]);
    let de: i64 = NODES
        .iter()
        .map(|(node, s)| {
            count(
                &mut connect(sb, node),
                &format!("SELECT COUNT(*) FROM employees_{s}.dept_emp"),
            )
        })
        .sum();
    assert_eq!(out["rows"][0][0], de);
}

/// Starts `shardctl ARGS` with its stdout piped; its lines arrive on the returned channel
/// as it prints them.
fn spawn_lines(args: &[&str]) -> (std::process::Child, std::sync::mpsc::Receiver<String>) {
    use std::io::BufRead;
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("shardctl"))
        .env_remove("SHARDCTL_CONFIG")
        .env("NO_COLOR", "1")
        .arg("--config")
        .arg(FLEET.inventory_path())
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            if tx.send(line.unwrap()).is_err() {
                break;
            }
        }
    });
    (child, rx)
}

/// The next line of a child's stdout; a child that prints nothing for a minute fails the
/// test (a query that buffered its rows would sit there until the lock is released).
fn next_line(rx: &std::sync::mpsc::Receiver<String>, waiting_for: &str) -> String {
    rx.recv_timeout(std::time::Duration::from_secs(60))
        .unwrap_or_else(|e| panic!("no line while waiting for {waiting_for}: {e}"))
}

#[test]
fn plain_query_rows_stream_as_each_shard_answers() {
    let _g = serial();
    let sb = FLEET.sandbox();
    let per_shard: Vec<usize> = NODES
        .iter()
        .map(|(node, s)| {
            count(
                &mut connect(sb, node),
                &format!("SELECT COUNT(*) FROM employees_{s}.employees"),
            ) as usize
        })
        .collect();
    assert!(per_shard.iter().all(|n| *n > 0), "{per_shard:?}");
    for format in ["table", "json"] {
        // Shard 2's table is locked: its query waits for the lock, the others answer.
        let mut holder = connect(sb, "node2");
        exec(&mut holder, &["LOCK TABLES employees_2.employees WRITE"]);
        let (mut child, rx) = spawn_lines(&[
            "--output",
            format,
            "query",
            "--function",
            "f",
            "--timeout",
            "300",
            "SELECT emp_no, first_name FROM {employees}",
        ]);
        let shard_of = |line: &str| -> Option<u64> {
            if format == "json" {
                let v: Json = serde_json::from_str(line).unwrap();
                (v["event"] == "row").then(|| v["shard"].as_u64().unwrap())
            } else {
                line.split('\t').next().unwrap().parse().ok()
            }
        };
        let header = next_line(&rx, "the header");
        if format == "json" {
            let v: Json = serde_json::from_str(&header).unwrap();
            assert_eq!(v["event"], "columns", "{header}");
            assert_eq!(
                v["columns"],
                serde_json::json!(["shard", "emp_no", "first_name"])
            );
        } else {
            assert_eq!(header, "shard\temp_no\tfirst_name");
        }
        // Every row of shards 1 and 3 arrives while shard 2 is still held.
        let mut seen = [0usize; 3];
        while seen[0] < per_shard[0] || seen[2] < per_shard[2] {
            let line = next_line(&rx, "the rows of shards 1 and 3");
            if let Some(shard) = shard_of(&line) {
                assert_ne!(shard, 2, "shard 2 answered under its lock: {line}");
                seen[shard as usize - 1] += 1;
            }
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "the query ended under the lock"
        );
        exec(&mut holder, &["UNLOCK TABLES"]);
        let mut rest = Vec::new();
        while let Ok(line) = rx.recv_timeout(std::time::Duration::from_secs(60)) {
            rest.push(line);
        }
        assert!(child.wait().unwrap().success());
        for line in &rest {
            if let Some(shard) = shard_of(line) {
                seen[shard as usize - 1] += 1;
            }
        }
        assert_eq!(seen.to_vec(), per_shard, "{format}");
        let last = rest.last().unwrap();
        if format == "json" {
            let v: Json = serde_json::from_str(last).unwrap();
            assert_eq!(v["event"], "summary");
            assert_eq!(v["outcome"], "finished");
            assert_eq!(v["rows"], per_shard.iter().sum::<usize>());
        } else {
            assert_eq!(
                *last,
                format!(
                    "{} row(s) from 3 shard(s) of f",
                    per_shard.iter().sum::<usize>()
                )
            );
        }
    }
}

#[test]
fn query_bad_input_is_refused_and_changes_nothing() {
    let _g = serial();
    let sb = FLEET.sandbox();
    let before = count(
        &mut connect(sb, "node1"),
        "SELECT COUNT(*) FROM employees_1.employees WHERE first_name = 'x'",
    );
    refused(
        &[
            "query",
            "--function",
            "f",
            "UPDATE {employees} SET first_name = 'x'",
        ],
        REFUSED,
        "query runs only SELECT statements",
    );
    refused(
        &[
            "query",
            "--function",
            "f",
            "SELECT * FROM {employees} FOR UPDATE",
        ],
        REFUSED,
        "the query writes or locks (UPDATE)",
    );
    assert_eq!(
        count(
            &mut connect(sb, "node1"),
            "SELECT COUNT(*) FROM employees_1.employees WHERE first_name = 'x'"
        ),
        before
    );
    refused(
        &[
            "query",
            "--function",
            "f",
            "SELECT COUNT(*) FROM employees_1.employees",
        ],
        USAGE,
        "the query names no {table} marker",
    );
    refused(
        &[
            "query",
            "--function",
            "f",
            "SELECT AVG(salary) FROM {salaries}",
        ],
        USAGE,
        "AVG cannot be merged across shards",
    );
    // A table of another function.
    static OTHER: OnceLock<()> = OnceLock::new();
    OTHER.get_or_init(|| {
        exec(
            &mut connect(sb, "node1"),
            &[
                "CREATE DATABASE IF NOT EXISTS other",
                "CREATE TABLE IF NOT EXISTS other.things (id INT PRIMARY KEY)",
            ],
        );
        FLEET
            .cli(&["function", "add", "g", "--type", "range", "--key", "int"])
            .assert()
            .success();
        FLEET
            .cli(&[
                "table",
                "add",
                "other.things",
                "--function",
                "g",
                "--column",
                "id",
            ])
            .assert()
            .success();
    });
    refused(
        &["query", "--function", "f", "SELECT * FROM {things}"],
        USAGE,
        "{things} is a table of function g, not of f",
    );
    refused(
        &["query", "--function", "f", "SELECT * FROM {nothing}"],
        USAGE,
        "{nothing}: function f has no such sharded or global table",
    );
    // A shard slower than --timeout.
    refused(
        &[
            "query",
            "--function",
            "f",
            "--timeout",
            "1",
            "SELECT SLEEP(5), COUNT(*) FROM {employees}",
        ],
        TIMEOUT,
        "no answer within 1 s",
    );
}

// ---------------------------------------------------------------------------------------
// the directory's migration

#[test]
fn init_migrates_a_version_2_directory_to_sequences_and_sources() {
    let _g = serial();
    let sb = FLEET.sandbox();
    let mut n1 = connect(sb, "node1");
    exec(
        &mut n1,
        &[
            "DROP TABLE shardctl.sequences",
            "DROP TABLE shardctl.sequence_feeds",
            "DROP TABLE shardctl.global_sources",
            "ALTER TABLE shardctl.operations DROP COLUMN window_request, DROP COLUMN pause_requested, DROP COLUMN paused_at, DROP COLUMN max_lag_secs, DROP COLUMN chunk_ms, DROP COLUMN workers, DROP COLUMN max_threads_running, DROP COLUMN phase, DROP COLUMN progress_rows, DROP COLUMN progress_rows_expected, DROP COLUMN progress_bytes",
            "ALTER TABLE shardctl.directory_version DROP COLUMN directory_id",
            "DROP TABLE shardctl.directory_changes",
            "ALTER TABLE shardctl.locations DROP COLUMN availability",
            "UPDATE shardctl.schema_version SET version = 3",
        ],
    );
    let current = shardctl::directory::schema::SCHEMA_VERSION;
    FLEET
        .cli(&["ids", "sequence", "show"])
        .assert()
        .code(USAGE)
        .stderr(predicates::str::contains(format!(
            "the directory has schema version 3, this shardctl uses {current}: run `shardctl init`"
        )));
    let out = json(&["init"]);
    assert_eq!(out["schema_version_before"], 3);
    assert_eq!(out["schema_version"], current);
    assert_eq!(
        json(&["ids", "sequence", "show"])["sequences"],
        serde_json::json!([])
    );
    assert_eq!(
        count(&mut n1, "SELECT COUNT(*) FROM shardctl.global_sources"),
        0
    );
    // The directory got its id (schema version 8), which new operations' names carry.
    assert_eq!(
        count(
            &mut n1,
            "SELECT COUNT(*) FROM shardctl.directory_version WHERE directory_id IS NOT NULL"
        ),
        1
    );
    // Everything else survived: the fleet still answers.
    assert_eq!(
        json(&[
            "query",
            "--function",
            "f",
            "SELECT COUNT(*) FROM {employees}"
        ])["rows"][0][0],
        300
    );
}
