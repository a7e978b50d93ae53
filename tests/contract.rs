//! The directory as a contract (docs/DIRECTORY.md) on real servers: the SQL the page
//! documents, taken from the page itself, answers as the Rust `Router` does on thousands of
//! random keys over range, hash and list functions of integer and string keys, read with
//! the application's read-only account; and the page describes the schema version this
//! binary writes.

mod common;

use common::{connect, exec, serial, SharedFleet};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use shardctl::directory::schema::SCHEMA_VERSION;
use shardctl::directory::{Directory, Key, KeyType, Router, ShardingType};
use shardctl::sandbox::Sandbox;
use shardctl::server::{Server, Stmt};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Two nodes; a directory with six functions, every type over both key types, their
/// shards spread over both nodes (see [`FUNCTIONS`]); `cdb.items` and the workload's
/// table sharded by `ri`,
/// `cdb.colours` global, `<function>db.items` sharded by each other function, and a list
/// function `lp` the Python router's test adds a shard to.
static FLEET: SharedFleet = SharedFleet::new(2, set_up);

/// Random keys per function.
const KEYS_PER_FUNCTION: usize = 2500;

/// Integer range bounds, in the order their shards are added.
const INT_BOUNDS: [i64; 6] = [
    -1_000_000_000_000,
    -5,
    0,
    100,
    5000,
    4_611_686_018_427_387_904,
];
/// String range bounds (byte order: `B` < `b` < `m` < `mé` < `n` < `zz`).
const STR_BOUNDS: [&str; 5] = ["b", "m", "mé", "n", "zz"];
/// Ring points given by hand (the others are `auto`): the ring's first point (no key hashes
/// below it) and one near its end (its arc reaches the ring's end, a sixteenth of the keys).
const EDGE_POINTS: [&str; 2] = [
    "00000000000000000000000000000000",
    "f0000000000000000000000000000000",
];
/// List shards' values, one shard per entry.
const INT_VALUES: [&str; 3] = ["1,2,3", "-7,100,9223372036854775807", "42"];
const STR_VALUES: [&str; 3] = ["a,b", "é,日本", "c"];

/// (function, type, key type).
const FUNCTIONS: [(&str, &str, &str); 6] = [
    ("ri", "range", "int"),
    ("rs", "range", "string"),
    ("hi", "hash", "int"),
    ("hs", "hash", "string"),
    ("li", "list", "int"),
    ("ls", "list", "string"),
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Sets up the fleet once, on first use (see [`FLEET`]).
fn set_up(sb: &Sandbox) {
    let mut n1 = connect(sb, "node1");
    exec(
        &mut n1,
        &[
            "CREATE DATABASE cdb",
            "CREATE TABLE cdb.items (k BIGINT NOT NULL, note VARCHAR(40) NULL, PRIMARY KEY (k))",
            "CREATE TABLE cdb.shardctl_workload (k BIGINT NOT NULL, seq BIGINT UNSIGNED NOT NULL, at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6), PRIMARY KEY (k, seq))",
            "CREATE TABLE cdb.colours (name VARCHAR(20) NOT NULL PRIMARY KEY)",
            "INSERT INTO cdb.colours VALUES ('red'), ('green')",
        ],
    );
    // Every other function's logical schema: one table sharded by its key.
    for (f, _, key_type) in FUNCTIONS
        .iter()
        .chain([&("lp", "list", "string"), &("pk", "key", "string")])
    {
        if *f == "ri" {
            continue;
        }
        let column = if *key_type == "int" {
            "BIGINT"
        } else {
            "VARBINARY(255)"
        };
        exec(
            &mut n1,
            &[
                &format!("CREATE DATABASE {f}db"),
                &format!("CREATE TABLE {f}db.items (k {column} NOT NULL PRIMARY KEY)"),
            ],
        );
    }
    let inv = sb.inventory_path();
    let run = |args: &[&str]| {
        common::cli_on(&inv, args).assert().success();
    };
    run(&["init"]);
    for n in ["node1", "node2"] {
        run(&["node", "add", n]);
    }
    for (f, t, k) in FUNCTIONS {
        run(&["function", "add", f, "--type", t, "--key", k]);
    }
    run(&["function", "add", "lp", "--type", "list", "--key", "string"]);
    run(&[
        "table",
        "add",
        "cdb.items",
        "--function",
        "ri",
        "--column",
        "k",
    ]);
    run(&[
        "table",
        "add",
        "cdb.shardctl_workload",
        "--function",
        "ri",
        "--column",
        "k",
    ]);
    run(&["table", "add", "cdb.colours", "--global"]);
    for (f, _, _) in FUNCTIONS.iter().chain([&("lp", "list", "string")]) {
        if *f != "ri" {
            let table = format!("{f}db.items");
            run(&["table", "add", &table, "--function", f, "--column", "k"]);
        }
    }
    let node = |i: usize| if i % 2 == 0 { "node1" } else { "node2" };
    // `--values=-7,...`: a value may start with a hyphen.
    let shard = |f: &str, i: usize, how: &str, value: &str| {
        let mapping = format!("{how}={value}");
        run(&["shard", "add", "--function", f, "--node", node(i), &mapping]);
    };
    for (i, b) in INT_BOUNDS.iter().enumerate() {
        shard("ri", i, "--lower-bound", &b.to_string());
    }
    for (i, b) in STR_BOUNDS.iter().enumerate() {
        shard("rs", i, "--lower-bound", b);
    }
    for f in ["hi", "hs"] {
        for i in 0..4 {
            shard(f, i, "--point", "auto");
        }
    }
    for (i, p) in EDGE_POINTS.iter().enumerate() {
        shard("hi", i, "--point", p);
    }
    for (i, v) in INT_VALUES.iter().enumerate() {
        shard("li", i, "--values", v);
    }
    for (i, v) in STR_VALUES.iter().enumerate() {
        shard("ls", i, "--values", v);
    }
    shard("lp", 0, "--values", "p0");
    // A per-key function over string keys, its two shards, and the keys `k0`..`k59`
    // assigned to them (the least-loaded rule alternates between the two).
    run(&["function", "add", "pk", "--type", "key", "--key", "string"]);
    run(&[
        "table",
        "add",
        "pkdb.items",
        "--function",
        "pk",
        "--column",
        "k",
    ]);
    for i in 0..2 {
        run(&["shard", "add", "--function", "pk", "--node", node(i)]);
    }
    let inv = common::inventory(sb);
    let mut dir = Directory::open(&inv).unwrap();
    let func = dir.load().unwrap().function("pk").unwrap().clone();
    for i in 0..60 {
        dir.assign_key(&func, &Key::Str(format!("k{i}"))).unwrap();
    }
}

fn inventory() -> shardctl::config::Inventory {
    common::inventory(FLEET.sandbox())
}

/// One SQL block of docs/DIRECTORY.md marked ```` ```sql contract=NAME params=A,B ````.
#[derive(Debug, Clone)]
struct ContractSql {
    sql: String,
    params: Vec<String>,
}

/// Every `contract=` block of the page, by name.
fn contract_sql(page: &str) -> BTreeMap<String, ContractSql> {
    let mut out = BTreeMap::new();
    let mut lines = page.lines();
    while let Some(line) = lines.next() {
        let Some(info) = line.strip_prefix("```sql ") else {
            continue;
        };
        let attr = |name: &str| {
            info.split_whitespace()
                .find_map(|w| w.strip_prefix(&format!("{name}=")[..]))
                .map(str::to_string)
        };
        let Some(name) = attr("contract") else {
            continue;
        };
        let params = attr("params")
            .unwrap_or_else(|| panic!("contract block {name} has no params= (params= for none)"));
        let sql: Vec<&str> = lines
            .by_ref()
            .take_while(|l| !l.starts_with("```"))
            .collect();
        let block = ContractSql {
            sql: sql.join("\n"),
            params: params
                .split(',')
                .filter(|p| !p.is_empty())
                .map(str::to_string)
                .collect(),
        };
        assert!(
            out.insert(name.clone(), block).is_none(),
            "two contract blocks named {name}"
        );
    }
    out
}

fn page() -> String {
    std::fs::read_to_string(root().join("docs/DIRECTORY.md")).expect("docs/DIRECTORY.md")
}

/// The blocks the conformance test runs; a block the page adds is run by no test, so it
/// fails here until the test runs it too.
const BLOCKS: [&str; 15] = [
    "range-int",
    "key",
    "range-string",
    "hash",
    "list",
    "function",
    "table",
    "schemas",
    "schema-version",
    "version",
    "changes",
    "changed-location",
    "changed-ranges",
    "changed-hashes",
    "changed-lists",
];

/// Runs a contract block with the named parameters bound as text, as any driver can.
fn run_block(
    server: &mut Server,
    blocks: &BTreeMap<String, ContractSql>,
    name: &str,
    values: &[(&str, &str)],
) -> Vec<mysql::Row> {
    let block = &blocks[name];
    let params: Vec<mysql::Value> = block
        .params
        .iter()
        .map(|p| {
            let v = values
                .iter()
                .find(|(n, _)| n == p)
                .unwrap_or_else(|| panic!("block {name} names parameter {p}, the test has none"))
                .1;
            mysql::Value::Bytes(v.as_bytes().to_vec())
        })
        .collect();
    server
        .try_rows(&Stmt::with(block.sql.clone(), params))
        .unwrap_or_else(|e| panic!("block {name} with {values:?}: {e}\n{}", block.sql))
}

/// A connection with the application's directory account, the directory schema as its
/// default database (as the page says to connect).
fn application_connection() -> Directory {
    let inv = inventory();
    let mut d = Directory::open_for_application(&inv).expect("the application account opens");
    let schema = d.schema().quoted();
    d.server()
        .exec(&Stmt::text(format!("USE {schema}")))
        .unwrap();
    d
}

/// `n` keys of `key_type` for function `f`, from a fixed seed: random values over the
/// whole type, values near the function's bounds, and the bounds and list values
/// themselves.
fn keys(f: &str, key_type: KeyType, n: usize) -> Vec<Key> {
    let mut seed = [7u8; 32];
    seed[..f.len()].copy_from_slice(f.as_bytes());
    let mut runner = TestRunner::new_with_rng(
        Config::default(),
        TestRng::from_seed(RngAlgorithm::ChaCha, &seed),
    );
    match key_type {
        KeyType::Int => {
            let mut edges: Vec<i64> = vec![i64::MIN, i64::MAX, -1, 0, 1];
            for b in INT_BOUNDS {
                edges.extend([b.saturating_sub(1), b, b.saturating_add(1)]);
            }
            for v in INT_VALUES.iter().flat_map(|v| v.split(',')) {
                edges.push(v.parse().unwrap());
            }
            let strategy = prop::collection::vec(
                prop_oneof![
                    any::<i64>(),
                    -2000i64..6000,
                    prop::sample::select(edges),
                    (-1_000_000_000_010i64..-999_999_999_990),
                ],
                n,
            );
            let v = strategy.new_tree(&mut runner).unwrap().current();
            v.into_iter().map(Key::Int).collect()
        }
        KeyType::String => {
            let mut known: Vec<String> = STR_BOUNDS.iter().map(|s| s.to_string()).collect();
            known.extend(
                STR_VALUES
                    .iter()
                    .flat_map(|v| v.split(','))
                    .map(str::to_string),
            );
            known.extend(["", "B", "a", "mz", "zz\u{0}", "日"].map(str::to_string));
            let strategy = prop::collection::vec(
                prop_oneof![
                    "[abcmnzB0 é日本%_]{0,10}",
                    prop::sample::select(known.clone()),
                    (prop::sample::select(known), "[a-zé日]{1,3}")
                        .prop_map(|(k, suffix)| format!("{k}{suffix}")),
                ],
                n,
            );
            let v = strategy.new_tree(&mut runner).unwrap().current();
            v.into_iter().map(Key::Str).collect()
        }
    }
}

/// The route one SQL answer names: shard, node, host, port, state, availability.
type Answer = Option<(u32, String, String, u16, String, String)>;

#[test]
fn the_documented_sql_routes_every_key_as_the_router_does() {
    FLEET.sandbox();
    let _s = serial();
    let blocks = contract_sql(&page());
    let names: Vec<&str> = blocks.keys().map(String::as_str).collect();
    let mut expected_names = BLOCKS.to_vec();
    expected_names.sort();
    assert_eq!(
        names, expected_names,
        "the contract blocks of docs/DIRECTORY.md and the ones this test runs differ"
    );
    let router = Router::connect(&inventory()).expect("the router loads");
    let mut dir = application_connection();
    let server = dir.server();

    let version: Vec<u64> = run_block(server, &blocks, "version", &[])
        .into_iter()
        .map(mysql::from_row)
        .collect();
    assert_eq!(version, vec![router.version()]);
    let schema_version: Vec<u32> = run_block(server, &blocks, "schema-version", &[])
        .into_iter()
        .map(mysql::from_row)
        .collect();
    assert_eq!(schema_version, vec![SCHEMA_VERSION]);

    let snap = router.snapshot().clone();
    let table_rows = run_block(
        server,
        &blocks,
        "table",
        &[("schema", "cdb"), ("table", "items")],
    );
    let table: Vec<(String, String)> = table_rows.into_iter().map(mysql::from_row).collect();
    let mapped = snap.sharded_table("cdb", "items").unwrap();
    assert_eq!(
        table,
        vec![(
            snap.function_by_id(mapped.func_id).unwrap().name.clone(),
            mapped.column.clone()
        )]
    );
    let none = run_block(
        server,
        &blocks,
        "table",
        &[("schema", "cdb"), ("table", "nothing")],
    );
    assert!(none.is_empty());

    let mut compared = 0;
    let mut unowned = 0;
    for (f, _, _) in FUNCTIONS {
        let func = snap.function(f).unwrap();
        let described: Vec<(u32, String, String)> =
            run_block(server, &blocks, "function", &[("function", f)])
                .into_iter()
                .map(mysql::from_row)
                .collect();
        assert_eq!(
            described,
            vec![(
                func.id,
                func.sharding_type.as_sql().to_string(),
                func.key_type.as_sql().to_string()
            )]
        );
        let schemas: Vec<String> = run_block(server, &blocks, "schemas", &[("function", f)])
            .into_iter()
            .map(mysql::from_row)
            .collect();
        assert_eq!(schemas, snap.function_schemas(func.id), "{f}");
        let block = match (func.sharding_type, func.key_type) {
            (ShardingType::Range, KeyType::Int) => "range-int",
            (ShardingType::Range, KeyType::String) => "range-string",
            (ShardingType::Hash, _) => "hash",
            (ShardingType::List, _) => "list",
            (ShardingType::Key, _) => "key",
        };
        let mut shards_seen = std::collections::BTreeSet::new();
        for key in keys(f, func.key_type, KEYS_PER_FUNCTION) {
            let text = key.to_string();
            let rows = run_block(server, &blocks, block, &[("function", f), ("key", &text)]);
            assert!(rows.len() <= 1, "{f} {key:?}: {} rows", rows.len());
            let answer: Answer = rows.into_iter().next().map(mysql::from_row);
            let expected: Answer = router.shard_for_function(f, &key).ok().map(|s| {
                (
                    s.id,
                    s.node.clone(),
                    s.host.clone(),
                    s.port,
                    s.state.as_sql().to_string(),
                    s.availability.as_sql().to_string(),
                )
            });
            assert_eq!(
                answer, expected,
                "{f} ({block}): key {key:?} — the documented SQL and the Router disagree"
            );
            match expected {
                Some((shard, ..)) => {
                    shards_seen.insert(shard);
                }
                None => unowned += 1,
            }
            compared += 1;
        }
        // The keys reach every shard, so every mapping row was on the line.
        let all: std::collections::BTreeSet<u32> = snap.shards_of(func.id).map(|s| s.id).collect();
        assert_eq!(shards_seen, all, "{f}: the random keys missed a shard");
    }
    assert_eq!(compared, FUNCTIONS.len() * KEYS_PER_FUNCTION);
    // Keys no shard holds were compared too (below the lowest bound, unlisted values).
    assert!(unowned > 100, "{unowned}");
}

/// The per-key block: a key's own row, the shard the Rust router gives (a cold lookup, then
/// from its cache); no row for a key not assigned, as the router refuses it.
#[test]
fn the_documented_per_key_sql_routes_every_key_as_the_router_does() {
    FLEET.sandbox();
    let _s = serial();
    let blocks = contract_sql(&page());
    let router = Router::connect(&inventory()).expect("the router loads");
    let mut dir = application_connection();
    let server = dir.server();
    let mut seen = std::collections::BTreeSet::new();
    for i in 0..80 {
        let key = format!("k{i}");
        let rows = run_block(server, &blocks, "key", &[("function", "pk"), ("key", &key)]);
        let answer: Answer = rows.into_iter().next().map(mysql::from_row);
        let expected: Answer = router
            .shard_for_function("pk", &Key::Str(key.clone()))
            .ok()
            .map(|s| {
                (
                    s.id,
                    s.node.clone(),
                    s.host.clone(),
                    s.port,
                    s.state.as_sql().to_string(),
                    s.availability.as_sql().to_string(),
                )
            });
        assert_eq!(answer, expected, "pk: key {key}");
        // k0..k59 are assigned, k60..k79 are not.
        assert_eq!(answer.is_some(), i < 60, "pk: key {key}");
        if let Some((shard, ..)) = answer {
            seen.insert(shard);
        }
    }
    assert_eq!(seen.len(), 2, "the keys were spread over both shards");
    let stats = router.key_cache();
    assert_eq!((stats.entries, stats.misses), (60, 80), "{stats:?}");
}

/// The change log's blocks: after one change of a shard, `changes` names it (and only it)
/// for the versions between the router's and the directory's, the Rust router re-reads
/// just that shard, and for every shard of every function the `changed-*` blocks return
/// the rows the router holds for it.
#[test]
fn the_documented_change_log_sql_reads_what_the_router_re_reads() {
    FLEET.sandbox();
    let _s = serial();
    let blocks = contract_sql(&page());
    let inv = inventory();
    let mut router = Router::connect(&inv).expect("the router loads");
    let since = router.version();
    let shard = router.shard_for_function("li", &Key::Int(42)).unwrap().id;
    let text = shard.to_string();
    let set = |to: &str| {
        common::cli_on(
            &FLEET.inventory_path(),
            &["shard", "set-availability", "--shard", &text, to],
        )
        .assert()
        .success();
    };
    set("no-writes");
    let mut dir = application_connection();
    let server = dir.server();
    let now: u64 = mysql::from_row(run_block(server, &blocks, "version", &[]).remove(0));
    assert_eq!(now, since + 1);
    let (since_text, now_text) = (since.to_string(), now.to_string());
    type LogRow = (u64, String, String, Option<u32>, Option<String>);
    let log: Vec<LogRow> = run_block(
        server,
        &blocks,
        "changes",
        &[("since", &since_text), ("now", &now_text)],
    )
    .into_iter()
    .map(mysql::from_row)
    .collect();
    assert_eq!(
        log,
        vec![(now, "shards".to_string(), text.clone(), None, None)]
    );
    assert!(router.refresh().unwrap());
    assert!(
        matches!(router.last_reload(), Some(shardctl::directory::Reload::Incremental { shards, .. }) if shards == &[shard]),
        "{:?}",
        router.last_reload()
    );
    let snap = router.snapshot().clone();
    assert_eq!(
        snap.shard(shard).unwrap().availability.as_sql(),
        "no_writes"
    );
    for s in &snap.shards {
        let id = s.id.to_string();
        let p = [("shard", id.as_str())];
        let location: Vec<(u32, u32, String, String, u16, String, String)> =
            run_block(server, &blocks, "changed-location", &p)
                .into_iter()
                .map(mysql::from_row)
                .collect();
        assert_eq!(
            location,
            vec![(
                s.id,
                s.func_id,
                s.node.clone(),
                s.host.clone(),
                s.port,
                s.state.as_sql().to_string(),
                s.availability.as_sql().to_string()
            )]
        );
        let mut ranges: Vec<(u32, Key, u32)> = run_block(server, &blocks, "changed-ranges", &p)
            .into_iter()
            .map(|r| {
                let (f, int, text, shard): (u32, Option<i64>, Option<Vec<u8>>, u32) =
                    mysql::from_row(r);
                let key = match (int, text) {
                    (Some(i), _) => Key::Int(i),
                    (None, t) => Key::Str(String::from_utf8(t.unwrap()).unwrap()),
                };
                (f, key, shard)
            })
            .collect();
        ranges.sort();
        let want: Vec<(u32, Key, u32)> = snap
            .ranges
            .iter()
            .filter(|r| r.shard_id == s.id)
            .map(|r| (r.func_id, r.lower_bound.clone(), r.shard_id))
            .collect();
        assert_eq!(ranges, want, "shard {id}");
        let mut points: Vec<(u32, String, u32)> = run_block(server, &blocks, "changed-hashes", &p)
            .into_iter()
            .map(mysql::from_row)
            .collect();
        points.sort();
        let want: Vec<(u32, String, u32)> = snap
            .points
            .iter()
            .filter(|h| h.shard_id == s.id)
            .map(|h| (h.func_id, h.point.to_hex(), h.shard_id))
            .collect();
        assert_eq!(points, want, "shard {id}");
        let mut values: Vec<(u32, Vec<u8>, u32)> = run_block(server, &blocks, "changed-lists", &p)
            .into_iter()
            .map(mysql::from_row)
            .collect();
        values.sort();
        let mut want: Vec<(u32, Vec<u8>, u32)> = snap
            .lists
            .iter()
            .filter(|l| l.shard_id == s.id)
            .map(|l| (l.func_id, l.value.to_string().into_bytes(), l.shard_id))
            .collect();
        want.sort();
        assert_eq!(values, want, "shard {id}");
    }
    set("available");
}

#[test]
fn the_page_describes_the_schema_version_this_binary_writes() {
    let page = page();
    let line = page
        .lines()
        .find_map(|l| l.strip_prefix("Directory schema version: "))
        .expect("docs/DIRECTORY.md has a 'Directory schema version: N' line");
    let described: u32 = line.trim().parse().expect("a version number");
    assert_eq!(
        described, SCHEMA_VERSION,
        "the directory schema is now version {SCHEMA_VERSION} (src/directory/schema.rs), \
         docs/DIRECTORY.md describes version {described}: read the migration against the \
         page (the tables and columns an application reads), update it, then its version line"
    );
}

#[test]
fn every_contract_block_names_its_parameters_once_per_placeholder() {
    for (name, block) in contract_sql(&page()) {
        assert_eq!(
            block.sql.matches('?').count(),
            block.params.len(),
            "block {name}: placeholders and params= differ"
        );
    }
}

/// The interpreter the Python router's tests run with: the virtual environment
/// `scripts/setup` makes (with PyMySQL), else `python3`.
fn python() -> PathBuf {
    let venv = root().join("clients/python/.venv/bin/python");
    if venv.exists() {
        venv
    } else {
        PathBuf::from("python3")
    }
}

/// What the Python router's tests compare with: the Rust Router's answers on random keys
/// of every function, and the retry rule's verdicts.
fn expected_for_python(router: &Router) -> serde_json::Value {
    let snap = router.snapshot();
    let mut functions = serde_json::Map::new();
    for (f, _, _) in FUNCTIONS.iter().chain([&("pk", "key", "string")]) {
        let func = snap.function(f).unwrap();
        // The per-key function: its 60 keys assigned and 340 not.
        let some = if *f == "pk" {
            (0..400).map(|i| Key::Str(format!("k{i}"))).collect()
        } else {
            keys(f, func.key_type, 400)
        };
        let answers: Vec<serde_json::Value> = some
            .into_iter()
            .map(|key| {
                let want = router.shard_for_function(f, &key).ok().map(|s| {
                    serde_json::json!([
                        s.id,
                        s.node,
                        s.host,
                        s.port,
                        s.state.as_sql(),
                        s.availability.as_sql(),
                        snap.shard_schemas(s)
                    ])
                });
                let key = match key {
                    Key::Int(i) => serde_json::json!(i),
                    Key::Str(s) => serde_json::json!(s),
                };
                serde_json::json!([key, want])
            })
            .collect();
        functions.insert(f.to_string(), serde_json::Value::Array(answers));
    }
    let tables: Vec<serde_json::Value> = [-5i64, 0, 99, 100, 123_456]
        .iter()
        .map(|k| {
            let s = router
                .shard_for_table("cdb", "items", &Key::Int(*k))
                .unwrap();
            serde_json::json!(["cdb", "items", k, s.id])
        })
        .collect();
    let guard = "shardctl: shard 7 does not own this key; re-read the directory";
    let mut errors = Vec::new();
    for code in [
        0u16, 1049, 1062, 1142, 1146, 1205, 1213, 1290, 1644, 1836, 2002, 2003, 2006, 2013, 2027,
        2055,
    ] {
        for message in [
            guard,
            "balance may not go negative",
            " shardctl: x",
            "Shardctl: x",
        ] {
            errors.push(serde_json::json!([
                code,
                message,
                shardctl::directory::is_refresh_error(code, message)
            ]));
        }
    }
    serde_json::json!({
        "version": router.version(),
        "functions": functions,
        "tables": tables,
        "refresh_errors": errors,
    })
}

/// `python` running a script of clients/python against the fleet, the directory and the
/// application's option file in its environment (the password in neither).
/// Its standard output and error go to `out` with the extensions `.out` and `.err`.
fn python_command(sb: &Sandbox, args: &[&str], out: &std::path::Path) -> std::process::Command {
    let inv = inventory();
    let mut cmd = std::process::Command::new(python());
    cmd.current_dir(root().join("clients/python"))
        .args(args)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env("SHARDCTL_DIRECTORY_HOST", "127.0.0.1")
        .env(
            "SHARDCTL_DIRECTORY_PORT",
            sb.node("node1").unwrap().port.to_string(),
        )
        .env("SHARDCTL_DIRECTORY_SCHEMA", &inv.file.directory.schema)
        .env("SHARDCTL_APP_OPTION_FILE", sb.dir().join("application.cnf"))
        .env("SHARDCTL_BIN", assert_cmd::cargo::cargo_bin("shardctl"))
        .env("SHARDCTL_INVENTORY", sb.inventory_path())
        .env_remove("SHARDCTL_CONFIG")
        .env_remove("SHARDCTL_FAULT")
        .stdin(std::process::Stdio::null())
        .stdout(std::fs::File::create(out.with_extension("out")).unwrap())
        .stderr(std::fs::File::create(out.with_extension("err")).unwrap());
    cmd
}

#[test]
fn the_python_router_follows_the_contract() {
    let sb = FLEET.sandbox();
    let _s = serial();
    let inv = inventory();
    let router = Router::connect(&inv).expect("the router loads");
    let dir = tempfile::tempdir().unwrap();
    let expected = dir.path().join("expected.json");
    std::fs::write(&expected, expected_for_python(&router).to_string()).unwrap();
    let out = dir.path().join("python");
    let mut child = python_command(sb, &["-m", "unittest", "-v", "test_shardctl_router"], &out)
        .env("SHARDCTL_EXPECTED", &expected)
        .spawn()
        .expect("run Python (scripts/setup --deps installs Python and PyMySQL)");
    let status = common::wait_exit(&mut child, std::time::Duration::from_secs(600));
    let stdout = std::fs::read_to_string(dir.path().join("python.out")).unwrap();
    let stderr = std::fs::read_to_string(dir.path().join("python.err")).unwrap();
    assert!(
        status.success(),
        "the Python router's tests failed ({status}):\n{stdout}\n{stderr}"
    );
    eprintln!("{stdout}{stderr}");
    // Every test ran (none skipped for a missing variable) and passed.
    assert!(stderr.contains("Ran 6 tests"), "{stderr}");
    assert!(stderr.trim_end().ends_with("OK"), "{stderr}");
    assert!(
        stdout.contains(&format!(
            "compared {} keys with the Rust router",
            (FUNCTIONS.len() + 1) * 400
        )),
        "{stdout}"
    );
    // The move the Python test made is the directory's truth now.
    let after = Router::connect(&inv).unwrap();
    let shard = after.shard_for_function("ri", &Key::Int(51)).unwrap();
    assert_eq!(shard.node, "node2");
    let mut n2 = connect(sb, "node2");
    assert_eq!(
        common::count(
            &mut n2,
            &format!(
                "SELECT COUNT(*) FROM cdb_{}.items WHERE k IN (50, 51)",
                shard.id
            )
        ),
        2
    );
}

#[test]
fn a_stale_python_router_writes_nothing_to_the_wrong_shard_across_a_move_and_a_split() {
    let sb = FLEET.sandbox();
    let _s = serial();
    let inv = inventory();
    let owner = |k: i64| {
        let r = Router::connect(&inv).unwrap();
        let s = r.shard_for_function("ri", &Key::Int(k)).unwrap();
        (s.id, s.node.clone())
    };
    let other = |node: &str| if node == "node1" { "node2" } else { "node1" };
    let dir = tempfile::tempdir().unwrap();
    let (stop, hold, acks_file) = (
        dir.path().join("stop"),
        dir.path().join("hold"),
        dir.path().join("acks.jsonl"),
    );
    let path = |p: &std::path::Path| p.to_str().unwrap().to_string();
    let (stop_s, hold_s, acks_s) = (path(&stop), path(&hold), path(&acks_file));
    // Keys [0, 5000): the shards of 0 and of 100, which the move and the split change.
    let mut writer = python_command(
        sb,
        &[
            "stale_writer.py",
            "ri",
            "0",
            "5000",
            "150",
            &stop_s,
            &hold_s,
            &acks_s,
        ],
        &dir.path().join("writer"),
    )
    .spawn()
    .expect("run the Python writer (scripts/setup --deps installs Python and PyMySQL)");
    let pause = || std::thread::sleep(std::time::Duration::from_millis(1500));
    pause();
    let (moved, from) = owner(200);
    let to = other(&from);
    common::cli_on(
        &sb.inventory_path(),
        &["move", "--shard", &moved.to_string(), "--to", to],
    )
    .assert()
    .success();
    pause();
    // The writer holds its writes through the split, so it never meets the fence: its
    // first writes after it go by the routes of before, and the split's guards refuse the
    // keys the old shard gave away.
    std::fs::write(&hold, "").unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    let split_to = other(to);
    common::cli_on(
        &sb.inventory_path(),
        &[
            "split",
            "--shard",
            &moved.to_string(),
            "--to",
            split_to,
            "--at",
            "2500",
        ],
    )
    .assert()
    .success();
    let (new_shard, _) = owner(3000);
    assert_ne!(new_shard, moved);
    std::fs::remove_file(&hold).unwrap();
    pause();
    std::fs::write(&stop, "").unwrap();
    let status = common::wait_exit(&mut writer, std::time::Duration::from_secs(120));
    let summary = std::fs::read_to_string(dir.path().join("writer.out")).unwrap();
    let errors = std::fs::read_to_string(dir.path().join("writer.err")).unwrap();
    assert!(status.success(), "the writer failed: {summary}\n{errors}");
    let summary: serde_json::Value = serde_json::from_str(summary.trim()).unwrap();
    eprintln!("the Python writer: {summary}");

    let acks: Vec<shardctl::workload::Ack> = std::fs::read_to_string(&acks_file)
        .unwrap()
        .lines()
        .map(|line| {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            shardctl::workload::Ack {
                key: Key::Int(v["key"].as_i64().unwrap()),
                seq: v["seq"].as_u64().unwrap(),
                stream: 0,
                shard: v["shard"].as_u64().unwrap() as u32,
                node: v["node"].as_str().unwrap().to_string(),
                schema: v["schema"].as_str().unwrap().to_string(),
                at: std::time::Instant::now(),
            }
        })
        .collect();
    assert_eq!(acks.len() as u64, summary["acked"].as_u64().unwrap());
    assert_eq!(summary["lost"], 0, "{summary}");
    // The workload's own check: every acknowledged write is where the directory now says
    // its key lives, and none was acknowledged by a shard that does not own its key.
    let check = shardctl::workload::check(&inv, "ri", &acks).unwrap();
    assert!(check.missing.is_empty(), "lost writes: {:?}", check.missing);
    assert!(
        check.wrong_shard.is_empty(),
        "writes acknowledged by a shard that does not own the key: {:?}",
        check.wrong_shard
    );
    // The router was stale: it re-read the directory only when a server's error said so,
    // and then wrote to the moved shard on its new node and to the split's new shard.
    // The move's fence or its dropped copy (1146, 1290, 1836, 1049), then the split's guard.
    let by_code = &summary["refresh_errors_by_code"];
    assert!(
        ["1146", "1290", "1836", "1049"]
            .iter()
            .any(|c| by_code[c].as_u64().unwrap_or(0) > 0),
        "{summary}"
    );
    assert!(by_code["1644"].as_u64().unwrap_or(0) > 0, "{summary}");
    assert!(summary["reloads"].as_u64().unwrap() >= 2, "{summary}");
    assert!(
        acks.iter().any(|a| a.shard == moved && a.node == to),
        "no write reached shard {moved} on {to}: {summary}"
    );
    assert!(
        acks.iter().any(|a| a.shard == new_shard),
        "no write reached the split's new shard {new_shard}: {summary}"
    );
    assert!(acks.len() > 100, "{} writes", acks.len());
}
