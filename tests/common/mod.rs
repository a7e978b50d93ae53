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

/// Writes `text` to `dir/name`, readable by its owner only (0600, as option files holding
/// passwords should be: shardctl warns about any other mode), and returns the path.
pub fn write_file(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let p = dir.join(name);
    std::fs::write(&p, text).expect("write test file");
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).expect("chmod 600");
    p
}

/// The project's own fixtures (`tests/fixtures`).
pub fn fixture_path(file: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(file)
}

/// Loads a file of `tests/fixtures` into node1 through the server's own client.
pub fn load_fixture(sb: &Sandbox, file: &str, db: Option<&str>) {
    let path = fixture_path(file);
    let text = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    run_client(sb, "node1", file, &text, db);
}

/// Loads a file of `tests/fixtures` into `node` under another schema name: every
/// `` `from` `` in the file (the fixture names its schema only that way) becomes `` `to` ``.
pub fn load_fixture_as(sb: &Sandbox, node: &str, file: &str, from: &str, to: &str) {
    let path = fixture_path(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let renamed = text.replace(&format!("`{from}`"), &format!("`{to}`"));
    assert_ne!(renamed, text, "{file} never names `{from}`");
    run_client(sb, node, file, renamed.as_bytes(), None);
}

/// Runs the `mariadb` client on `node` with the sandbox's admin option file, `input` on
/// its standard input.
fn run_client(sb: &Sandbox, node: &str, what: &str, input: &[u8], db: Option<&str>) {
    use std::io::Write;
    let port = sb.node(node).expect("sandbox node").port.to_string();
    let mut cmd = std::process::Command::new("mariadb");
    cmd.arg(format!(
        "--defaults-extra-file={}",
        sb.dir().join("client.cnf").display()
    ))
    .args(["-h", "127.0.0.1", "-P", &port]);
    if let Some(db) = db {
        cmd.arg(db);
    }
    let mut child = cmd
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run the mariadb client");
    let mut stdin = child.stdin.take().expect("client stdin");
    let input = input.to_vec();
    let feeder = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().expect("the mariadb client ends");
    let fed = feeder.join().expect("stdin feeder");
    assert!(
        out.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    fed.unwrap_or_else(|e| panic!("{what}: writing to the client: {e}"));
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
