//! Helpers shared by the integration tests: one set of real sandbox servers per test
//! binary, started on first use and killed when the test process exits.
#![allow(dead_code)]

use shardctl::config::Inventory;
use shardctl::sandbox::{Sandbox, SandboxBuilder};
use shardctl::server::{Server, Stmt};
use std::path::Path;
use std::sync::OnceLock;

/// The 3-node sandbox shared by the tests of this binary.
pub fn sandbox3() -> &'static Sandbox {
    static SB: OnceLock<Sandbox> = OnceLock::new();
    SB.get_or_init(|| {
        SandboxBuilder::for_tests(3)
            .and_then(|b| b.start())
            .unwrap_or_else(|e| panic!("cannot start the test sandbox: {e}"))
    })
}

/// The inventory a sandbox wrote.
pub fn inventory(sb: &Sandbox) -> Inventory {
    Inventory::load(&sb.inventory_path()).expect("sandbox inventory loads")
}

/// An admin connection to a sandbox node.
pub fn connect(sb: &Sandbox, node: &str) -> Server {
    Server::connect_node(&inventory(sb), node).expect("connect to sandbox node")
}

/// Runs statements on a server, panicking on failure.
pub fn exec(server: &mut Server, sqls: &[&str]) {
    for sql in sqls {
        server
            .exec(&Stmt::text(*sql))
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
}

/// Runs statements without writing them to the binary log.
pub fn exec_unlogged(server: &mut Server, sqls: &[&str]) {
    let stmts: Vec<Stmt> = sqls.iter().map(|s| Stmt::text(*s)).collect();
    server.exec_unlogged(&stmts).expect("unlogged statements");
}

/// A single number from a query.
pub fn count(server: &mut Server, sql: &str) -> i64 {
    server
        .first::<i64>(&Stmt::text(sql))
        .expect("query")
        .expect("a row")
}

/// The shardctl binary with a clean environment.
pub fn shardctl() -> assert_cmd::Command {
    let mut cmd = assert_cmd::Command::cargo_bin("shardctl").expect("binary built");
    cmd.env_remove("SHARDCTL_CONFIG")
        .env("NO_COLOR", "1")
        .timeout(std::time::Duration::from_secs(120));
    cmd
}

/// Writes `text` to `dir/name` and returns the path.
pub fn write_file(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).expect("write test file");
    p
}

/// Loads a file of `../shared/fixtures` into node1 through the server's own client, as the
/// fixtures' README asks (never edited).
pub fn load_fixture(sb: &Sandbox, file: &str, db: Option<&str>) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/fixtures")
        .join(file);
    let input = std::fs::File::open(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let port = sb.node("node1").expect("node1").port.to_string();
    let mut cmd = std::process::Command::new("mariadb");
    cmd.arg(format!(
        "--defaults-extra-file={}",
        sb.dir().join("client.cnf").display()
    ))
    .args(["-h", "127.0.0.1", "-P", &port]);
    if let Some(db) = db {
        cmd.arg(db);
    }
    let out = cmd.stdin(input).output().expect("run the mariadb client");
    assert!(
        out.status.success(),
        "{file}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A range directory built through the command line: `init`, the nodes, function `f` over
/// integer keys, the sharded tables as (SCHEMA.TABLE, column), and shards as (node, lower
/// bound), in that order (shard ids 1, 2, ...).
pub fn range_directory(
    inventory: &Path,
    nodes: &[&str],
    tables: &[(&str, &str)],
    shards: &[(&str, &str)],
) {
    let run = |args: &[&str]| {
        shardctl()
            .arg("--config")
            .arg(inventory)
            .args(args)
            .assert()
            .success();
    };
    run(&["init"]);
    for n in nodes {
        run(&["node", "add", n]);
    }
    run(&["function", "add", "f", "--type", "range", "--key", "int"]);
    for (table, column) in tables {
        run(&["table", "add", table, "--function", "f", "--column", column]);
    }
    for (node, lower) in shards {
        run(&[
            "shard",
            "add",
            "--function",
            "f",
            "--node",
            node,
            "--lower-bound",
            lower,
        ]);
    }
}
