//! Two sharding directories on the same nodes (two applications sharing one fleet). Each
//! numbers its operations from 1, so without the directory's id in the names, operation 1 of
//! one would take over operation 1's channel of the other on a shared target, and the
//! read-only fence of one could be lifted by the other.

mod common;

use common::{
    cli_on, connect, count, exec, serial, spawn_shardctl, wait_exit, FleetSetup, Function,
    SharedFleet,
};
use shardctl::config::Inventory;
use shardctl::directory::Directory;
use shardctl::sandbox::Sandbox;
use std::path::PathBuf;
use std::time::{Duration, Instant};

const REFUSED: i32 = 5;
const ROWS: i64 = 5_000;

/// Directory `a` (schema `shardctl`, the sandbox's inventory) shards `alpha`: shard 1 on
/// node1, shard 2 on node3. Directory `b` (schema `shardctl_b`, same nodes) shards `beta`:
/// shard 1 on node3, shard 2 on node1. Every shard holds `ROWS` rows.
static FLEET: SharedFleet = SharedFleet::new(3, set_up);

/// Sets up the fleet once, on first use (see [`FLEET`]).
fn set_up(sb: &Sandbox) {
    let alpha = FleetSetup::new()
        .schema(&[
            "CREATE DATABASE alpha",
            "CREATE TABLE alpha.items (k BIGINT NOT NULL PRIMARY KEY, note VARCHAR(40) NOT NULL)",
            "CREATE DATABASE beta",
            "CREATE TABLE beta.items (k BIGINT NOT NULL PRIMARY KEY, note VARCHAR(40) NOT NULL)",
        ])
        .function(
            Function::range("f")
                .table("alpha.items", "k")
                .shards(&[("node1", "0"), ("node3", "1000000")]),
        );
    let beta = FleetSetup::new().function(
        Function::range("f")
            .table("beta.items", "k")
            .shards(&[("node3", "0"), ("node1", "1000000")]),
    );
    let b = b_inventory_path(sb);
    alpha.build(sb);
    beta.write_directory(&b);
    for (node, schema, base) in [
        ("node1", "alpha_1", 0),
        ("node3", "alpha_2", 1_000_000),
        ("node3", "beta_1", 0),
        ("node1", "beta_2", 1_000_000),
    ] {
        let mut s = connect(sb, node);
        exec(
            &mut s,
            &[&format!(
                "INSERT INTO {schema}.items (k, note) SELECT {base} + seq, '{schema}' FROM {schema}.seq_1_to_{ROWS}"
            )],
        );
    }
}

/// The second directory's inventory: the sandbox's, with `directory.schema: shardctl_b`.
fn b_inventory_path(sb: &Sandbox) -> PathBuf {
    let mut file = Inventory::load(&sb.inventory_path()).unwrap().file;
    file.directory.schema = "shardctl_b".into();
    let path = sb.dir().join("directory_b.yaml");
    std::fs::write(&path, serde_yaml::to_string(&file).unwrap()).unwrap();
    path
}

fn config(dir: char) -> PathBuf {
    match dir {
        'a' => FLEET.inventory_path(),
        _ => b_inventory_path(FLEET.sandbox()),
    }
}

fn inventory(dir: char) -> Inventory {
    Inventory::load(&config(dir)).unwrap()
}

fn home_of(dir: char, shard: u32) -> String {
    Directory::open(&inventory(dir))
        .unwrap()
        .load()
        .unwrap()
        .shard(shard)
        .unwrap()
        .node
        .clone()
}

fn channels(node: &str) -> Vec<String> {
    let mut s = connect(FLEET.sandbox(), node);
    s.rows(&shardctl::server::Stmt::text("SHOW ALL SLAVES STATUS"))
        .unwrap()
        .iter()
        .map(|r| r.get::<String, _>("Connection_name").unwrap_or_default())
        .collect()
}

fn schemas(node: &str, like: &str) -> Vec<String> {
    let mut s = connect(FLEET.sandbox(), node);
    s.rows(&shardctl::server::Stmt::with(
        "SELECT schema_name FROM information_schema.schemata WHERE schema_name LIKE ? ORDER BY 1",
        vec![like.into()],
    ))
    .unwrap()
    .iter()
    .map(|r| r.get::<String, _>(0).unwrap_or_default())
    .collect()
}

/// Moves `shard` of directory `dir` back to `node` when a test left it elsewhere.
fn put_back(dir: char, shard: u32, node: &str) {
    if home_of(dir, shard) != node {
        cli_on(&config(dir), &[])
            .args(["move", "--shard", &shard.to_string(), "--to", node])
            .assert()
            .success();
    }
}

#[test]
fn two_directories_move_onto_one_node_at_once_each_with_its_own_channel() {
    let _g = serial();
    FLEET.sandbox();
    put_back('a', 1, "node1");
    put_back('b', 1, "node3");
    let tmp = tempfile::tempdir().unwrap();
    // Each directory's first move of its shard 1 onto node2, held after the channel
    // started so that both channels exist at once.
    let hold = "pause=6@after:start-replication";
    let args = ["move", "--shard", "1", "--to", "node2"];
    let mut a = spawn_shardctl(&config('a'), &args, Some(hold), tmp.path(), "a");
    let mut b = spawn_shardctl(&config('b'), &args, Some(hold), tmp.path(), "b");
    let (op_a, op_b) = (newest_op_soon('a'), newest_op_soon('b'));
    let (chan_a, chan_b) = (
        common::op_names(&inventory('a'), op_a)
            .channel(op_a)
            .to_string(),
        common::op_names(&inventory('b'), op_b)
            .channel(op_b)
            .to_string(),
    );
    assert_ne!(
        chan_a, chan_b,
        "two directories' operations share a channel name"
    );
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let now = channels("node2");
        if now.contains(&chan_a) && now.contains(&chan_b) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "both channels never ran at once on node2: {now:?} (want {chan_a}, {chan_b})"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let (sa, sb) = (
        wait_exit(&mut a, Duration::from_secs(180)),
        wait_exit(&mut b, Duration::from_secs(180)),
    );
    let err = |n: &str| std::fs::read_to_string(tmp.path().join(format!("{n}.err"))).unwrap();
    assert!(sa.success(), "directory a's move: {}", err("a"));
    assert!(sb.success(), "directory b's move: {}", err("b"));
    assert_eq!(home_of('a', 1), "node2");
    assert_eq!(home_of('b', 1), "node2");
    let mut n2 = connect(FLEET.sandbox(), "node2");
    for schema in ["alpha_1", "beta_1"] {
        assert_eq!(
            count(
                &mut n2,
                &format!("SELECT COUNT(*) FROM {schema}.items WHERE note = '{schema}'")
            ),
            ROWS,
            "{schema} on node2"
        );
    }
    let left = channels("node2");
    assert!(
        !left.contains(&chan_a) && !left.contains(&chan_b),
        "{left:?}"
    );
    assert!(schemas("node1", "alpha\\_1").is_empty());
    assert!(schemas("node3", "beta\\_1").is_empty());
    for node in ["node1", "node3"] {
        assert!(
            schemas(node, "\\_shardctl\\_trash%").is_empty(),
            "trash left on {node}"
        );
    }
    // The other shards of each directory were never touched.
    assert_eq!(home_of('a', 2), "node3");
    assert_eq!(home_of('b', 2), "node1");
}

/// The newest operation of `dir`, waiting for it to be journaled.
fn newest_op_soon(dir: char) -> u64 {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(op) = common::newest_op(&inventory(dir)) {
            if op.state.as_sql() == "running" {
                return op.id;
            }
        }
        assert!(Instant::now() < deadline, "no operation of {dir} started");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_read_only_fence_set_by_another_directory_is_never_joined() {
    let _g = serial();
    FLEET.sandbox();
    put_back('a', 1, "node1");
    put_back('b', 2, "node1");
    let tmp = tempfile::tempdir().unwrap();
    // Directory a fences node1 read-only and holds there.
    let mut a = spawn_shardctl(
        &config('a'),
        &[
            "move",
            "--shard",
            "1",
            "--to",
            "node2",
            "--fence",
            "read-only",
        ],
        Some("pause=8@after:lock"),
        tmp.path(),
        "a",
    );
    let deadline = Instant::now() + Duration::from_secs(120);
    while count(
        &mut connect(FLEET.sandbox(), "node1"),
        "SELECT @@GLOBAL.read_only",
    ) == 0
    {
        assert!(Instant::now() < deadline, "directory a never fenced node1");
        std::thread::sleep(Duration::from_millis(100));
    }
    // Directory b's read-only fence on the same node is refused before any change: had it
    // joined as "read-only before", a's unlock would make node1 writable under b's fence.
    let ops_before = common::newest_op(&inventory('b')).map(|o| o.id);
    let out = cli_on(&config('b'), &[])
        .args([
            "move",
            "--shard",
            "2",
            "--to",
            "node3",
            "--fence",
            "read-only",
        ])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(REFUSED), "{said}");
    assert!(
        said.contains("node1 is read-only already"),
        "the refusal names the node: {said}"
    );
    assert_eq!(
        common::newest_op(&inventory('b')).map(|o| o.id),
        ops_before,
        "a refused move journals nothing"
    );
    assert!(schemas("node3", "beta\\_2").is_empty(), "no copy on node3");
    assert_eq!(home_of('b', 2), "node1");
    let status = wait_exit(&mut a, Duration::from_secs(180));
    assert!(
        status.success(),
        "{}",
        std::fs::read_to_string(tmp.path().join("a.err")).unwrap()
    );
    assert_eq!(home_of('a', 1), "node2");
    assert_eq!(
        count(
            &mut connect(FLEET.sandbox(), "node1"),
            "SELECT @@GLOBAL.read_only"
        ),
        0,
        "a's unlock made node1 writable again"
    );
}
