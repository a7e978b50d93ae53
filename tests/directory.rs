//! The sharding directory end to end on real servers: init, nodes, functions, tables,
//! shards with their schemas, lookups checked against the chapter's own SQL, status,
//! analyze, and every bad input refused without a change.

mod common;

use common::{connect, exec, serial, shardctl, FleetSetup, SharedFleet};
use predicates::prelude::*;
use shardctl::directory::{Directory, Key, Router};
use shardctl::sandbox::{Sandbox, SandboxBuilder};
use shardctl::server::{Server, Stmt};

// The tests hold `serial()`: tests that change the directory run one at a time, so "nothing
// changed" can be checked by the directory version.

const USAGE: i32 = 2;
const REFUSED: i32 = 5;

/// A 4-node sandbox with the employees schema loaded on node1, the directory initialised
/// and node1..node3 registered. node4 stays out of the directory for the node tests.
static FLEET: SharedFleet = SharedFleet::new(4, set_up);

/// Sets up the fleet once, on first use (see [`FLEET`]).
fn set_up(sb: &Sandbox) {
    FleetSetup::new().fixture("company.sql").build(sb);
}

fn ok(args: &[&str]) -> String {
    String::from_utf8(
        FLEET
            .cli(args)
            .assert()
            .success()
            .get_output()
            .stdout
            .clone(),
    )
    .unwrap()
}

fn refused(args: &[&str], code: i32, needle: &str) {
    let before = directory_version();
    let out = FLEET.cli(args).assert().code(code).get_output().clone();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "not one line: {err}");
    assert!(err.contains(needle), "{args:?}: {err}");
    assert_eq!(
        directory_version(),
        before,
        "{args:?} changed the directory"
    );
}

fn inventory() -> shardctl::config::Inventory {
    common::inventory(FLEET.sandbox())
}

fn directory_version() -> u64 {
    Directory::open(&inventory()).unwrap().version().unwrap()
}

/// The directory node, for the chapter's SQL.
fn dirdb() -> Server {
    connect(FLEET.sandbox(), "node1")
}

fn one_u32(server: &mut Server, sql: &str, params: Vec<mysql::Value>) -> Option<u32> {
    server.first::<u32>(&Stmt::with(sql, params)).unwrap()
}

/// The chapter's range lookup, run on the directory tables.
fn chapter_range(func: u32, key: i64) -> Option<u32> {
    one_u32(
        &mut dirdb(),
        "SELECT shard_id FROM shardctl.ranges WHERE func_id = ? AND ? >= lower_bound ORDER BY lower_bound DESC LIMIT 1",
        vec![func.into(), key.into()],
    )
}

/// The chapter's hash lookup: the largest point below MD5(key), else the largest point.
fn chapter_hash(func: u32, key: &str) -> u32 {
    let mut db = dirdb();
    one_u32(
        &mut db,
        "SELECT shard_id FROM shardctl.hashes WHERE func_id = ? AND MD5(?) > hash ORDER BY hash DESC LIMIT 1",
        vec![func.into(), key.into()],
    )
    .or_else(|| {
        one_u32(
            &mut db,
            "SELECT shard_id FROM shardctl.hashes WHERE func_id = ? ORDER BY hash DESC LIMIT 1",
            vec![func.into()],
        )
    })
    .unwrap()
}

fn function_id(name: &str) -> u32 {
    one_u32(
        &mut dirdb(),
        "SELECT func_id FROM shardctl.partition_functions WHERE name = ?",
        vec![name.into()],
    )
    .unwrap()
}

fn json(args: &[&str]) -> serde_json::Value {
    let mut full = vec!["--output", "json"];
    full.extend_from_slice(args);
    serde_json::from_str(&ok(&full)).unwrap()
}

/// A one-table logical schema on node1 to shard by something other than emp_no.
fn logical_schema(schema: &str, key_sql: &str) {
    let mut s = connect(FLEET.sandbox(), "node1");
    exec(
        &mut s,
        &[
            &format!("CREATE DATABASE IF NOT EXISTS {schema}"),
            &format!("CREATE TABLE IF NOT EXISTS {schema}.items (k {key_sql} NOT NULL PRIMARY KEY, v INT)"),
        ],
    );
}

#[test]
fn employees_sharded_over_three_nodes_end_to_end() {
    FLEET.sandbox();
    let _serial = serial();
    ok(&["function", "add", "emp", "--type", "range", "--key", "int"]);
    for t in [
        "employees",
        "dept_emp",
        "dept_manager",
        "titles",
        "salaries",
    ] {
        ok(&[
            "table",
            "add",
            &format!("employees.{t}"),
            "--function",
            "emp",
            "--column",
            "emp_no",
        ]);
    }
    ok(&["table", "add", "employees.departments", "--global"]);
    let placements = [
        ("node1", "0"),
        ("node2", "10000"),
        ("node3", "20000"),
        ("node2", "30000"),
    ];
    let mut shard_ids = Vec::new();
    for (node, bound) in placements {
        let v = json(&[
            "shard",
            "add",
            "--function",
            "emp",
            "--node",
            node,
            "--lower-bound",
            bound,
        ]);
        assert_eq!(v["schemas"].as_array().unwrap().len(), 1);
        shard_ids.push(v["shard"].as_u64().unwrap() as u32);
    }
    // Schemas exist where the directory says, with every table and view of the template,
    // and the global table filled.
    let inv = inventory();
    let router = Router::connect(&inv).unwrap();
    for (&id, (node, _)) in shard_ids.iter().zip(placements) {
        let mut s = connect(FLEET.sandbox(), node);
        let schema = format!("employees_{id}");
        let n: i64 = s
            .first(&Stmt::with(
                "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = ?",
                vec![schema.as_str().into()],
            ))
            .unwrap()
            .unwrap();
        assert_eq!(n, 8, "6 tables and 2 views in {schema}");
        let d: i64 = s
            .first(&Stmt::text(format!(
                "SELECT COUNT(*) FROM {schema}.departments"
            )))
            .unwrap()
            .unwrap();
        assert_eq!(d, 9);
        // Views work against the shard's own tables.
        s.exec(&Stmt::text(format!(
            "SELECT COUNT(*) FROM {schema}.current_dept_emp"
        )))
        .unwrap();
    }

    // Data distributed by lookup.
    let emp_nos: Vec<i64> = (0..1500).map(|i| i * 29).collect();
    let loaded = shardctl::sample::load_employees(&inv, &router, &emp_nos).unwrap();
    assert_eq!(loaded.rows_per_shard.len(), 4);

    // Every row lives on the shard the chapter's SQL names, and on no other.
    let func = function_id("emp");
    let mut total = 0;
    for (&id, (node, _)) in shard_ids.iter().zip(placements) {
        let mut s = connect(FLEET.sandbox(), node);
        for table in ["employees", "salaries", "titles", "dept_emp"] {
            let rows = s
                .rows(&Stmt::text(format!(
                    "SELECT DISTINCT emp_no FROM employees_{id}.{table}"
                )))
                .unwrap();
            for r in rows {
                let e: i64 = mysql::from_row(r);
                assert_eq!(
                    chapter_range(func, e),
                    Some(id),
                    "{table} emp_no {e} on shard {id}"
                );
                if table == "employees" {
                    total += 1;
                }
            }
        }
    }
    assert_eq!(total, emp_nos.len());

    // lookup: the CLI agrees with the chapter's SQL, by function and by table.
    for key in ["0", "9999", "10000", "25000", "30000", "123456"] {
        let v = json(&["lookup", "--function", "emp", key]);
        let expected = chapter_range(func, key.parse().unwrap()).unwrap();
        assert_eq!(v["shard"], expected, "key {key}");
        let v = json(&["lookup", "--table", "employees.salaries", key]);
        assert_eq!(v["shard"], expected, "key {key}");
        assert_eq!(v["schemas"][0], format!("employees_{expected}"));
    }
    let table = ok(&["lookup", "--function", "emp", "25000"]);
    assert!(
        table.contains("node3") && table.contains(&format!("employees_{}", shard_ids[2])),
        "{table}"
    );

    // status: shards with their nodes, ranges and sizes; JSON carries the same.
    let text = ok(&["status"]);
    assert!(text.contains("[10000, 20000)"), "{text}");
    assert!(text.contains("[30000, ∞)"), "{text}");
    let v = json(&["status"]);
    let shards = v["shards"].as_array().unwrap();
    let ours: Vec<&serde_json::Value> = shards
        .iter()
        .filter(|s| shard_ids.contains(&(s["shard"].as_u64().unwrap() as u32)))
        .collect();
    assert_eq!(ours.len(), 4);
    for s in &ours {
        assert_eq!(s["state"], "online");
        assert!(s["bytes"].as_u64().unwrap() > 0);
    }
    let node2 = v["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["node"] == "node2")
        .unwrap();
    assert!(node2["shards"].as_u64().unwrap() >= 2);

    // Removing a node that still holds shards is refused.
    refused(
        &["node", "remove", "node3"],
        REFUSED,
        "node3 still holds shards",
    );
    // A duplicate lower bound is refused.
    refused(
        &[
            "shard",
            "add",
            "--function",
            "emp",
            "--node",
            "node1",
            "--lower-bound",
            "10000",
        ],
        USAGE,
        "already has a range starting at 10000",
    );
    // A key of the wrong type.
    refused(
        &["lookup", "--function", "emp", "ten"],
        USAGE,
        "not an integer",
    );
    // A key below every range.
    refused(
        &["lookup", "--function", "emp", "-5"],
        USAGE,
        "below the lowest lower bound",
    );
    // A table mapped twice.
    refused(
        &[
            "table",
            "add",
            "employees.salaries",
            "--function",
            "emp",
            "--column",
            "emp_no",
        ],
        USAGE,
        "already mapped",
    );
    refused(
        &["table", "add", "employees.departments", "--global"],
        USAGE,
        "already mapped",
    );
}

#[test]
fn hash_lookups_match_the_chapters_sql_including_wrap_and_exact_points() {
    FLEET.sandbox();
    let _serial = serial();
    logical_schema("hdb", "VARCHAR(64)");
    ok(&[
        "function", "add", "ring", "--type", "hash", "--key", "string",
    ]);
    ok(&[
        "table",
        "add",
        "hdb.items",
        "--function",
        "ring",
        "--column",
        "k",
    ]);
    let exact = shardctl::directory::RingPoint::md5("exact-key").to_hex();
    let points = [
        "40000000000000000000000000000000",
        "c0000000000000000000000000000000",
        exact.as_str(),
    ];
    let nodes = ["node1", "node2", "node3"];
    for (p, n) in points.iter().zip(nodes) {
        ok(&[
            "shard",
            "add",
            "--function",
            "ring",
            "--node",
            n,
            "--point",
            p,
        ]);
    }
    ok(&[
        "shard",
        "add",
        "--function",
        "ring",
        "--node",
        "node1",
        "--point",
        "auto",
    ]);
    let func = function_id("ring");
    let router = Router::connect(&inventory()).unwrap();
    let mut wrapped = 0;
    let mut keys: Vec<String> = (0..300).map(|i| format!("user-{i}")).collect();
    keys.push("exact-key".into());
    for k in &keys {
        let expected = chapter_hash(func, k);
        let got = router
            .shard_for_function("ring", &Key::Str(k.clone()))
            .unwrap()
            .id;
        assert_eq!(got, expected, "key {k}");
        let h = shardctl::directory::RingPoint::md5(k).to_hex();
        if points.iter().all(|p| h.as_str() <= *p) {
            wrapped += 1;
        }
    }
    assert!(
        wrapped > 0,
        "some keys hash below every point and wrap around"
    );
    // A key exactly on a ring point belongs to the point below it, not to that point's shard.
    let exact_shard = one_u32(
        &mut dirdb(),
        "SELECT shard_id FROM shardctl.hashes WHERE func_id = ? AND hash = ?",
        vec![func.into(), exact.as_str().into()],
    )
    .unwrap();
    let got = router
        .shard_for_function("ring", &Key::Str("exact-key".into()))
        .unwrap()
        .id;
    assert_ne!(got, exact_shard);
    let v = json(&["lookup", "--function", "ring", "exact-key"]);
    assert_eq!(v["shard"], chapter_hash(func, "exact-key"));

    refused(
        &[
            "shard",
            "add",
            "--function",
            "ring",
            "--node",
            "node2",
            "--point",
            points[1],
        ],
        USAGE,
        "already has ring point",
    );
    refused(
        &[
            "shard",
            "add",
            "--function",
            "ring",
            "--node",
            "node2",
            "--lower-bound",
            "5",
        ],
        USAGE,
        "is HASH: use --point",
    );
}

#[test]
fn list_lookups_are_exact_and_values_do_not_overlap() {
    FLEET.sandbox();
    let _serial = serial();
    logical_schema("ldb", "VARCHAR(8)");
    ok(&[
        "function", "add", "region", "--type", "list", "--key", "string",
    ]);
    ok(&[
        "table",
        "add",
        "ldb.items",
        "--function",
        "region",
        "--column",
        "k",
    ]);
    ok(&[
        "shard",
        "add",
        "--function",
        "region",
        "--node",
        "node2",
        "--values",
        "se,no,dk",
    ]);
    ok(&[
        "shard",
        "add",
        "--function",
        "region",
        "--node",
        "node3",
        "--values",
        "fi,is",
    ]);
    let func = function_id("region");
    let router = Router::connect(&inventory()).unwrap();
    for v in ["se", "no", "dk", "fi", "is"] {
        let expected = one_u32(
            &mut dirdb(),
            "SELECT shard_id FROM shardctl.lists WHERE func_id = ? AND value = ?",
            vec![func.into(), v.into()],
        );
        assert_eq!(
            Some(
                router
                    .shard_for_function("region", &Key::Str(v.into()))
                    .unwrap()
                    .id
            ),
            expected
        );
    }
    refused(
        &["lookup", "--function", "region", "de"],
        USAGE,
        "no shard holds key de",
    );
    refused(
        &[
            "shard",
            "add",
            "--function",
            "region",
            "--node",
            "node1",
            "--values",
            "de,fi",
        ],
        USAGE,
        "value fi is already mapped",
    );
}

#[test]
fn lookup_before_any_shard_exists_is_refused() {
    FLEET.sandbox();
    let _serial = serial();
    ok(&[
        "function", "add", "empty_fn", "--type", "range", "--key", "int",
    ]);
    refused(
        &["lookup", "--function", "empty_fn", "5"],
        USAGE,
        "has no shards yet",
    );
    refused(
        &["lookup", "--function", "nosuch", "5"],
        USAGE,
        "unknown partition function \"nosuch\"",
    );
    refused(
        &[
            "shard",
            "add",
            "--function",
            "empty_fn",
            "--node",
            "node1",
            "--lower-bound",
            "0",
        ],
        USAGE,
        "has no sharded tables yet",
    );
}

#[test]
fn names_that_are_not_plain_identifiers_are_refused() {
    FLEET.sandbox();
    let _serial = serial();
    ok(&["function", "add", "idf", "--type", "range", "--key", "int"]);
    refused(
        &["function", "add", "a;b", "--type", "range", "--key", "int"],
        USAGE,
        "invalid function name",
    );
    refused(
        &["table", "add", "employees.sal aries", "--global"],
        USAGE,
        "invalid table name",
    );
    refused(
        &["table", "add", "emp`loyees.t", "--global"],
        USAGE,
        "invalid schema name",
    );
    refused(
        &[
            "table",
            "add",
            "employees.t",
            "--function",
            "idf",
            "--column",
            "x`y",
        ],
        USAGE,
        "invalid column name",
    );
    refused(
        &["table", "add", "nodot", "--global"],
        USAGE,
        "must be written SCHEMA.TABLE",
    );
    refused(
        &["analyze", "--schema", "x' OR '1"],
        USAGE,
        "invalid schema name",
    );
}

#[test]
fn nodes_are_added_listed_and_removed() {
    FLEET.sandbox();
    let _serial = serial();
    ok(&["node", "add", "node4", "--host", "127.0.0.1"]);
    assert!(ok(&["node", "list"]).contains("node4"));
    refused(&["node", "add", "node4"], USAGE, "already in the directory");
    refused(&["node", "add", "node9"], USAGE, "unknown node \"node9\"");
    ok(&["node", "remove", "node4"]);
    assert!(!ok(&["node", "list"]).contains("node4"));
    refused(&["node", "remove", "node4"], USAGE, "not in the directory");
}

#[test]
fn functions_and_tables_are_listed() {
    FLEET.sandbox();
    let _serial = serial();
    ok(&[
        "function", "add", "listed", "--type", "list", "--key", "int",
    ]);
    let v = json(&["function", "list"]);
    assert!(v["functions"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["function"] == "listed" && f["type"] == "list"));
    refused(
        &[
            "function", "add", "listed", "--type", "list", "--key", "int",
        ],
        USAGE,
        "already exists",
    );
    logical_schema("tdb", "INT");
    ok(&[
        "table",
        "add",
        "tdb.items",
        "--function",
        "listed",
        "--column",
        "k",
    ]);
    assert!(ok(&["table", "list"]).contains("tdb.items"));
    refused(
        &[
            "shard",
            "add",
            "--function",
            "listed",
            "--node",
            "node1",
            "--values",
            "x",
        ],
        USAGE,
        "not an integer",
    );
}

#[test]
fn init_is_idempotent() {
    FLEET.sandbox();
    let _serial = serial();
    let before = directory_version();
    FLEET
        .cli(&["init"])
        .assert()
        .success()
        .stdout(predicate::str::contains("up to date"));
    assert_eq!(directory_version(), before);
}

#[test]
fn analyze_finds_the_chapters_two_candidates_in_employees() {
    FLEET.sandbox();
    let _serial = serial();
    let v = json(&["analyze", "--schema", "employees"]);
    let c = v["candidates"].as_array().unwrap();
    assert_eq!(c.len(), 2, "{v}");
    let columns: Vec<Vec<String>> = c
        .iter()
        .map(|c| {
            c["columns"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_str().unwrap().to_string())
                .collect()
        })
        .collect();
    assert!(columns.contains(&vec![
        "dept_emp.emp_no".to_string(),
        "dept_manager.emp_no".into(),
        "employees.emp_no".into(),
        "salaries.emp_no".into(),
        "titles.emp_no".into()
    ]));
    assert!(columns.contains(&vec![
        "departments.dept_no".to_string(),
        "dept_emp.dept_no".into(),
        "dept_manager.dept_no".into()
    ]));
    for cand in c {
        let conflicts: Vec<&str> = cand["conflicts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_str().unwrap())
            .collect();
        assert_eq!(conflicts, vec!["dept_emp", "dept_manager"]);
    }
    assert!(ok(&["analyze", "--schema", "employees"]).contains("conflicts"));
    refused(
        &["analyze", "--schema", "nosuchschema"],
        USAGE,
        "schema nosuchschema not found",
    );
}

/// Runs last in its own sandbox so the version bump cannot disturb the other tests.
#[test]
fn a_directory_newer_than_the_binary_is_refused() {
    let sb = SandboxBuilder::for_tests(1).unwrap().start().unwrap();
    let inv = sb.inventory_path();
    let run = |args: &[&str]| shardctl().arg("--config").arg(&inv).args(args).assert();
    run(&["shard", "list"])
        .code(USAGE)
        .stderr(predicate::str::contains("run `shardctl init` first"));
    run(&["init"]).success();
    let mut s = connect(&sb, "node1");
    exec(&mut s, &["UPDATE shardctl.schema_version SET version = 99"]);
    for args in [
        &["shard", "list"][..],
        &["init"],
        &["status"],
        &["function", "add", "f", "--type", "hash", "--key", "int"],
    ] {
        let out = run(args).code(REFUSED).get_output().clone();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("schema version 99, newer than this shardctl"),
            "{args:?}: {err}"
        );
    }
    let n: i64 = s
        .first(&Stmt::text(
            "SELECT COUNT(*) FROM shardctl.partition_functions",
        ))
        .unwrap()
        .unwrap();
    assert_eq!(n, 0);
}

/// Runs `args` with another directory schema in the inventory.
fn init_into(schema: &str) -> assert_cmd::assert::Assert {
    let path = FLEET.inventory_path();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("schema: shardctl"), "{text}");
    let other = path.with_file_name(format!("inventory-{schema}.yaml"));
    std::fs::write(
        &other,
        text.replace("schema: shardctl", &format!("schema: {schema}")),
    )
    .unwrap();
    shardctl().arg("--config").arg(&other).arg("init").assert()
}

#[test]
fn init_refuses_system_schemas_and_schemas_it_did_not_create() {
    FLEET.sandbox();
    let _serial = serial();
    for (schema, code, needle) in [
        ("mysql", USAGE, "is a system schema"),
        ("performance_schema", USAGE, "is a system schema"),
        (
            "employees",
            REFUSED,
            "already holds tables and is not a shardctl directory",
        ),
    ] {
        let out = init_into(schema).code(code).get_output().clone();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim_end().lines().count(), 1, "{schema}: {err}");
        assert!(err.contains(needle), "{schema}: {err}");
    }
    let mut s = connect(FLEET.sandbox(), "node1");
    for schema in ["mysql", "employees"] {
        let n: i64 = s
            .first(&Stmt::with(
                "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = ? AND table_name = 'schema_version'",
                vec![schema.into()],
            ))
            .unwrap()
            .unwrap();
        assert_eq!(n, 0, "init wrote into {schema}");
    }
}

#[test]
fn table_add_checks_schema_table_column_and_type_on_the_servers() {
    FLEET.sandbox();
    let _serial = serial();
    logical_schema("wdb", "INT");
    logical_schema("sdb", "VARCHAR(8)");
    let mut s = connect(FLEET.sandbox(), "node1");
    exec(
        &mut s,
        &["CREATE OR REPLACE VIEW wdb.vv AS SELECT k FROM wdb.items"],
    );
    ok(&["function", "add", "wfn", "--type", "range", "--key", "int"]);
    let sharded = |t: &str, col: &str| {
        vec![
            "table".to_string(),
            "add".into(),
            t.into(),
            "--function".into(),
            "wfn".into(),
            "--column".into(),
            col.into(),
        ]
    };
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec![
                "table".into(),
                "add".into(),
                "nodb.items".into(),
                "--global".into(),
            ],
            "schema nodb not found on node node1 (the template)",
        ),
        (
            sharded("wdb.nothere", "k"),
            "table wdb.nothere not found on node node1",
        ),
        (
            vec![
                "table".into(),
                "add".into(),
                "wdb.vv".into(),
                "--global".into(),
            ],
            "wdb.vv on node node1 (the template) is a view",
        ),
        (
            sharded("wdb.items", "nope"),
            "column nope not found in wdb.items",
        ),
        (
            sharded("sdb.items", "k"),
            "column sdb.items.k is varchar: function wfn takes INT keys",
        ),
        (
            vec![
                "table".into(),
                "add".into(),
                "wdb.items".into(),
                "--global".into(),
                "--template-node".into(),
                "node9".into(),
            ],
            "node9",
        ),
    ];
    for (args, needle) in &cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        refused(&args, USAGE, needle);
    }
    ok(&[
        "table",
        "add",
        "wdb.items",
        "--function",
        "wfn",
        "--column",
        "k",
    ]);
    // The directory compares names without regard to case: a clear refusal, not error 1062.
    refused(
        &["table", "add", "WDB.Items", "--global"],
        USAGE,
        "table WDB.Items is already mapped (sharded)",
    );
}

#[test]
fn shard_add_refuses_to_take_keys_whose_rows_stay_behind() {
    FLEET.sandbox();
    let _serial = serial();
    logical_schema("vdb", "INT");
    ok(&["function", "add", "vfn", "--type", "range", "--key", "int"]);
    ok(&[
        "table",
        "add",
        "vdb.items",
        "--function",
        "vfn",
        "--column",
        "k",
    ]);
    let add = |node: &str, bound: &str| {
        json(&[
            "shard",
            "add",
            "--function",
            "vfn",
            "--node",
            node,
            "--lower-bound",
            bound,
        ])["shard"]
            .as_u64()
            .unwrap() as u32
    };
    let first = add("node2", "0");
    let mut s = connect(FLEET.sandbox(), "node2");
    exec(
        &mut s,
        &[&format!(
            "INSERT INTO vdb_{first}.items SELECT seq, seq FROM vdb_{first}.seq_0_to_999"
        )],
    );
    let schemas_before = |s: &mut Server| -> i64 {
        s.first(&Stmt::text(
            "SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name LIKE 'vdb\\_%'",
        ))
        .unwrap()
        .unwrap()
    };
    let (n2, n3) = (
        schemas_before(&mut s),
        schemas_before(&mut connect(FLEET.sandbox(), "node3")),
    );
    refused(
        &[
            "shard",
            "add",
            "--function",
            "vfn",
            "--node",
            "node3",
            "--lower-bound",
            "500",
        ],
        REFUSED,
        &format!(
            "shard {first} holds rows the new shard would take (vdb_{first}.items has k = 500)"
        ),
    );
    assert_eq!(schemas_before(&mut s), n2);
    assert_eq!(schemas_before(&mut connect(FLEET.sandbox(), "node3")), n3);
    // Above every row: nothing is taken.
    let second = add("node3", "5000");
    // A table whose copy on the first shard holds a key the first shard does not own (the
    // second owns 5000 and up) is not mapped: a prune would delete that row.
    exec(
        &mut s,
        &[
            &format!("CREATE TABLE vdb_{first}.other (k INT PRIMARY KEY)"),
            &format!("INSERT INTO vdb_{first}.other VALUES (7), (6000)"),
        ],
    );
    refused(
        &[
            "table",
            "add",
            "vdb.other",
            "--function",
            "vfn",
            "--column",
            "k",
        ],
        REFUSED,
        &format!("vdb_{first}.other on node2 holds k = 6000 which shard {first} does not own"),
    );
    exec(&mut s, &[&format!("DROP TABLE vdb_{first}.other")]);
    // While an operation runs (here a fence raised by hand), removals wait.
    ok(&["lock", "--shard", &first.to_string()]);
    refused(
        &["shard", "remove", "--shard", &second.to_string()],
        REFUSED,
        &format!("shard remove {second} waits for operation"),
    );
    refused(
        &["table", "remove", "vdb.items"],
        REFUSED,
        "table remove vdb.items waits for operation",
    );
    ok(&["unlock", "--shard", &first.to_string()]);
    // Removal: refused while rows would be orphaned, done when the shard is empty.
    refused(
        &["shard", "remove", "--shard", &first.to_string()],
        REFUSED,
        &format!("shard {first} holds rows (vdb_{first}.items on node2)"),
    );
    // Refused under its own fence, the shard's tables are back under their names.
    assert_eq!(
        s.first::<i64>(&Stmt::text(format!(
            "SELECT COUNT(*) FROM vdb_{first}.items"
        )))
        .unwrap()
        .unwrap(),
        1000
    );
    refused(
        &["table", "remove", "vdb.items"],
        REFUSED,
        &format!("vdb_{first}.items on node2 holds rows"),
    );
    refused(
        &["function", "remove", "vfn"],
        REFUSED,
        "function vfn still has shards",
    );
    let out = ok(&["shard", "remove", "--shard", &second.to_string()]);
    assert!(
        out.contains(&format!("dropped vdb_{second} on node3")),
        "{out}"
    );
    assert_eq!(schemas_before(&mut connect(FLEET.sandbox(), "node3")), n3);
    refused(
        &["shard", "remove", "--shard", &second.to_string()],
        USAGE,
        &format!("shard {second} is not in the directory"),
    );
    // A table an interrupted `shard remove` left hidden (its own name lost): its rows
    // refuse the removal, naming it; empty, the removal finishes.
    let third = add("node3", "9000");
    let leftover = format!("vdb_{third}._shardctl_rm{third}_1_0");
    let mut n3 = connect(FLEET.sandbox(), "node3");
    exec(
        &mut n3,
        &[
            &format!("CREATE TABLE {leftover} (k INT PRIMARY KEY)"),
            &format!("INSERT INTO {leftover} VALUES (9001)"),
        ],
    );
    refused(
        &["shard", "remove", "--shard", &third.to_string()],
        REFUSED,
        &format!("{leftover}, left hidden by an interrupted shard remove"),
    );
    exec(&mut n3, &[&format!("DELETE FROM {leftover}")]);
    ok(&["shard", "remove", "--shard", &third.to_string()]);
    // The removed shard's keys fall back to the first shard.
    let router = Router::connect(&inventory()).unwrap();
    assert_eq!(
        router
            .shard_for_function("vfn", &Key::Int(7000))
            .unwrap()
            .id,
        first
    );
}

#[test]
fn a_hash_point_that_takes_rows_is_refused() {
    FLEET.sandbox();
    let _serial = serial();
    logical_schema("hpdb", "VARCHAR(16)");
    ok(&[
        "function", "add", "hfn", "--type", "hash", "--key", "string",
    ]);
    ok(&[
        "table",
        "add",
        "hpdb.items",
        "--function",
        "hfn",
        "--column",
        "k",
    ]);
    let v = json(&[
        "shard",
        "add",
        "--function",
        "hfn",
        "--node",
        "node2",
        "--point",
        "auto",
    ]);
    let first = v["shard"].as_u64().unwrap();
    let mut s = connect(FLEET.sandbox(), "node2");
    exec(
        &mut s,
        &[&format!(
            "INSERT INTO hpdb_{first}.items SELECT CONCAT('key', seq), seq FROM hpdb_{first}.seq_0_to_299"
        )],
    );
    refused(
        &[
            "shard",
            "add",
            "--function",
            "hfn",
            "--node",
            "node3",
            "--point",
            "auto",
        ],
        REFUSED,
        &format!("shard {first} holds rows the new shard would take"),
    );
}

#[test]
fn list_values_are_trimmed_and_never_empty() {
    FLEET.sandbox();
    let _serial = serial();
    logical_schema("ldb2", "VARCHAR(8)");
    ok(&[
        "function", "add", "lfn2", "--type", "list", "--key", "string",
    ]);
    ok(&[
        "table",
        "add",
        "ldb2.items",
        "--function",
        "lfn2",
        "--column",
        "k",
    ]);
    refused(
        &[
            "shard",
            "add",
            "--function",
            "lfn2",
            "--node",
            "node2",
            "--values",
            "a,,b",
        ],
        USAGE,
        "--values: value 2 of 3 is empty",
    );
    refused(
        &[
            "shard",
            "add",
            "--function",
            "lfn2",
            "--node",
            "node2",
            "--values",
            " ,x",
        ],
        USAGE,
        "--values: value 1 of 2 is empty",
    );
    ok(&[
        "shard",
        "add",
        "--function",
        "lfn2",
        "--node",
        "node2",
        "--values",
        " se , no",
    ]);
    let router = Router::connect(&inventory()).unwrap();
    router
        .shard_for_function("lfn2", &Key::Str("se".into()))
        .unwrap();
    router
        .shard_for_function("lfn2", &Key::Str("no".into()))
        .unwrap();
    // Node names are compared as the directory compares them: NODE3 is node3.
    let v = json(&[
        "shard",
        "add",
        "--function",
        "lfn2",
        "--node",
        "NODE3",
        "--values",
        "fi",
    ]);
    assert_eq!(v["node"], "node3", "{v}");
    refused(
        &["node", "add", "node3"],
        USAGE,
        "node \"node3\" is already in the directory",
    );
}

#[test]
fn names_too_long_for_a_shard_and_port_zero_are_refused_before_any_change() {
    FLEET.sandbox();
    let _serial = serial();
    let long = "l".repeat(63);
    logical_schema(&long, "INT");
    ok(&[
        "function", "add", "longfn", "--type", "range", "--key", "int",
    ]);
    ok(&[
        "table",
        "add",
        &format!("{long}.items"),
        "--function",
        "longfn",
        "--column",
        "k",
    ]);
    refused(
        &[
            "shard",
            "add",
            "--function",
            "longfn",
            "--node",
            "node2",
            "--lower-bound",
            "0",
        ],
        USAGE,
        "would be longer than 64 characters",
    );
    assert!(
        !ok(&["shard", "list"]).contains("longfn"),
        "a refused shard add left a shard behind"
    );
    ok(&["table", "remove", &format!("{long}.items")]);
    ok(&["function", "remove", "longfn"]);
    refused(&["function", "remove", "longfn"], USAGE, "longfn");
    refused(
        &["node", "add", "node4", "--port", "0"],
        USAGE,
        "port 0 is not a port",
    );
}

/// A directory connection killed under a read that goes through `try_rows` (the schema
/// version check every command makes first) is known broken, so the retry opens another:
/// the read succeeds. (It used to come back as a plain server error, "Connection reset by
/// peer", which nothing retried; on a cluster that failed a command whose member died
/// instead of going on through the next one.)
#[test]
fn a_killed_directory_connection_is_reopened_for_the_schema_version_check() {
    let _s = serial();
    let inv = inventory();
    let mut d = Directory::open(&inv).unwrap();
    let id = d.server().connection_id();
    dirdb()
        .exec(&Stmt::with("KILL ?", vec![id.into()]))
        .unwrap();
    let version = d.retrying(|d| d.schema_version()).unwrap();
    assert_eq!(
        version,
        Some(shardctl::directory::schema::SCHEMA_VERSION),
        "the check read through a new connection"
    );
    assert_ne!(
        d.server().connection_id(),
        id,
        "a new connection was opened"
    );
}
