//! The preflight's checks of what a shard needs on its target besides its rows, on real
//! sandbox servers: a definer missing on the target, an application account without
//! grants on the target's schema names (a move's, a split's new one), a nullable sharding
//! column and a foreign key to a schema outside the shard are each refused with one line
//! naming the culprit (exit 5) before anything changes — no schema on the target, no
//! channel, no operation journaled, the directory's version as before.

mod common;

use common::{
    connect, count, exec, inventory, sandbox3, serial, shardctl, write_file, FleetSetup, Function,
    SharedFleet,
};
use shardctl::directory::Directory;
use shardctl::sandbox::Sandbox;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

const REFUSED: i32 = 5;

// The tests hold `serial()`: one case at a time: each checks that nothing changed while it
// ran.

/// Runs `shardctl --config INV ARGS`, which must succeed.
fn ok(inv: &Path, args: &[&str]) {
    shardctl()
        .arg("--config")
        .arg(inv)
        .args(args)
        .assert()
        .success();
}

/// The directory, with the three nodes registered; each case adds its own function.
static FLEET: SharedFleet = SharedFleet::over(sandbox3, set_up);

/// Sets up the fleet once, on first use (see [`FLEET`]).
fn set_up(sb: &Sandbox) {
    FleetSetup::new().build(sb);
}

/// A root session on `node` over its socket (the admin account cannot create accounts).
fn root(node: &str) -> mysql::Conn {
    use mysql::prelude::Queryable;
    let sb = sandbox3();
    let file = sb.dir().join(shardctl::sandbox::ROOT_OPTION_FILE);
    let password = shardctl::config::read_option_file(&file)
        .unwrap()
        .password
        .unwrap();
    let socket = sb.node(node).unwrap().socket();
    let mut conn = mysql::Conn::new(
        mysql::OptsBuilder::new()
            .socket(Some(socket.display().to_string()))
            .user(Some("root"))
            .pass(Some(password)),
    )
    .unwrap();
    conn.query_drop("SET SESSION sql_log_bin = 0").unwrap();
    conn
}

fn as_root(node: &str, sqls: &[&str]) {
    use mysql::prelude::Queryable;
    let mut conn = root(node);
    for sql in sqls {
        conn.query_drop(*sql)
            .unwrap_or_else(|e| panic!("{node}: {sql}: {e}"));
    }
}

/// A range function `name` over `schema.table` by `column` (the table created on node1 by
/// `ddl` first) and one shard of it on `node`; the shard's id.
fn sharded(name: &str, ddl: &[&str], table: &str, column: &str, node: &str) -> u32 {
    FleetSetup::new()
        .schema(ddl)
        .in_existing_directory()
        .function(Function::range(name).table(table, column).shard(node, "0"))
        .build(FLEET.sandbox());
    let snap = Directory::open(&inventory(sandbox3()))
        .unwrap()
        .load()
        .unwrap();
    let f = snap.function(name).unwrap().id;
    let id = snap.shards_of(f).map(|s| s.id).max().unwrap();
    id
}

/// What a refused request must leave as it was: the directory's version, the journal's
/// operations, the channels on every node and `schema`'s existence on every node.
fn state(schemas: &[&str]) -> (u64, i64, Vec<i64>, Vec<i64>) {
    let sb = sandbox3();
    let version = Directory::open(&inventory(sb)).unwrap().version().unwrap();
    let ops = count(
        &mut connect(sb, "node1"),
        "SELECT COUNT(*) FROM shardctl.operations",
    );
    let mut channels = Vec::new();
    let mut present = Vec::new();
    for node in ["node1", "node2", "node3"] {
        let mut s = connect(sb, node);
        channels.push(
            s.rows(&shardctl::server::Stmt::text("SHOW ALL SLAVES STATUS"))
                .unwrap()
                .len() as i64,
        );
        for schema in schemas {
            present.push(count(
                &mut s,
                &format!(
                    "SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name = '{schema}'"
                ),
            ));
        }
    }
    (version, ops, channels, present)
}

/// Runs `shardctl --config INV ARGS`: exit 5, one line on stderr holding every `words`,
/// and `state(schemas)` as before.
fn refused(inv: &Path, args: &[&str], schemas: &[&str], words: &[&str]) {
    let before = state(schemas);
    let out = shardctl()
        .arg("--config")
        .arg(inv)
        .args(args)
        .assert()
        .code(REFUSED)
        .get_output()
        .clone();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    let line = stderr.trim_end();
    assert!(
        !line.contains('\n'),
        "{args:?}: more than one line: {stderr}"
    );
    for w in words {
        assert!(line.contains(w), "{args:?}: {w:?} not in {line:?}");
    }
    assert_eq!(state(schemas), before, "{args:?} changed something");
    assert!(
        shardctl::directory::Directory::open(&inventory(sandbox3()))
            .unwrap()
            .active_operations()
            .unwrap()
            .is_empty(),
        "{args:?} left an operation running"
    );
}

/// The sandbox's inventory with `app_ps` as the application account, logging in with
/// `password`, written under `name`.
fn inventory_with_application(name: &str, password: &str) -> PathBuf {
    let text = std::fs::read_to_string(FLEET.inventory_path()).unwrap();
    let mut doc: serde_yaml::Value = serde_yaml::from_str(&text).unwrap();
    doc["application"] =
        serde_yaml::from_str(&format!("{{user: app_ps, password: {password}}}")).unwrap();
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    let dir = DIR.get_or_init(|| tempfile::tempdir().unwrap());
    write_file(dir.path(), name, &serde_yaml::to_string(&doc).unwrap())
}

#[test]
fn a_definer_missing_on_the_target_is_refused_before_any_change() {
    let _g = serial();
    let id = sharded(
        "fdef",
        &[
            "CREATE DATABASE pdef",
            "CREATE TABLE pdef.t (id INT PRIMARY KEY, v INT)",
        ],
        "pdef.t",
        "id",
        "node1",
    );
    let schema = format!("pdef_{id}");
    as_root(
        "node1",
        &[
            "CREATE USER 'ghost'@'10.0.%'",
            &format!("CREATE DEFINER = 'ghost'@'10.0.%' SQL SECURITY DEFINER VIEW {schema}.v AS SELECT id FROM {schema}.t"),
        ],
    );
    let shard = id.to_string();
    refused(
        &FLEET.inventory_path(),
        &["move", "--shard", &shard, "--to", "node2"],
        &[&schema],
        &[
            "the definer ghost@10.0.% of view",
            &format!("{schema}.v"),
            "does not exist on the target node2",
        ],
    );
    // An admin account that cannot read the target's account names cannot tell: refused.
    as_root(
        "node2",
        &["REVOKE SELECT (User, Host) ON mysql.user FROM 'shardctl'@'%'"],
    );
    refused(
        &FLEET.inventory_path(),
        &["move", "--shard", &shard, "--to", "node2"],
        &[&schema],
        &[
            "cannot read the accounts on the target node2 to check the definer ghost@10.0.%",
            "SELECT (User, Host) ON mysql.user",
        ],
    );
    as_root(
        "node2",
        &["GRANT SELECT (User, Host) ON mysql.user TO 'shardctl'@'%'"],
    );
    // With the account on the target the same move goes through, the view with it.
    as_root("node2", &["CREATE USER 'ghost'@'10.0.%'"]);
    ok(
        &FLEET.inventory_path(),
        &["move", "--shard", &shard, "--to", "node2"],
    );
    assert_eq!(
        count(
            &mut connect(sandbox3(), "node2"),
            &format!("SELECT COUNT(*) FROM information_schema.views WHERE table_schema = '{schema}' AND definer = 'ghost@10.0.%'")
        ),
        1
    );
}

#[test]
fn an_application_without_grants_on_the_target_schema_is_refused() {
    let _g = serial();
    let id = sharded(
        "fapp",
        &[
            "CREATE DATABASE papp",
            "CREATE TABLE papp.t (id INT PRIMARY KEY, v INT)",
        ],
        "papp.t",
        "id",
        "node1",
    );
    let schema = format!("papp_{id}");
    for node in ["node1", "node2", "node3"] {
        as_root(
            node,
            &[
                "CREATE USER IF NOT EXISTS 'app_ps'@'%' IDENTIFIED BY 'app-ps-pw'",
                "GRANT SELECT, INSERT, UPDATE, DELETE ON `other\\_schema`.* TO 'app_ps'@'%'",
            ],
        );
    }
    as_root(
        "node1",
        &[&format!(
            "GRANT SELECT, INSERT, UPDATE, DELETE ON `{}`.* TO 'app_ps'@'%'",
            schema.replace('_', "\\_")
        )],
    );
    // Reading alone is not enough.
    as_root(
        "node3",
        &[&format!("GRANT SELECT ON `{schema}`.* TO 'app_ps'@'%'")],
    );
    let inv = inventory_with_application("app.yaml", "app-ps-pw");
    let shard = id.to_string();
    // An application that cannot even log in to the target.
    refused(
        &inventory_with_application("wrong.yaml", "not-its-password"),
        &["move", "--shard", &shard, "--to", "node3"],
        &[&schema],
        &["the application account app_ps cannot log in to the target node3"],
    );
    refused(
        &inv,
        &["move", "--shard", &shard, "--to", "node3"],
        &[&schema],
        &[
            "the application account app_ps@%",
            "lacks INSERT, UPDATE, DELETE",
            &format!("on {schema}.t on the target node3"),
        ],
    );
    // Granted on exactly that schema name, the move passes its preflight; a split onto
    // node3 would make a new schema name the grant does not cover.
    as_root(
        "node3",
        &[&format!(
            "GRANT INSERT, UPDATE, DELETE ON `{}`.* TO 'app_ps'@'%'",
            schema.replace('_', "\\_")
        )],
    );
    ok(
        &inv,
        &["move", "--shard", &shard, "--to", "node3", "--check"],
    );
    refused(
        &inv,
        &["split", "--shard", &shard, "--to", "node3", "--at", "500"],
        &[&schema],
        &[
            "the application account app_ps@%",
            "lacks SELECT, INSERT, UPDATE, DELETE",
            "on papp_<new>.t on the target node3",
        ],
    );
    // Without an application account in the inventory the check is skipped (the sandbox's
    // own application account has wildcard grants anyway).
    ok(
        &FLEET.inventory_path(),
        &["move", "--shard", &shard, "--to", "node3", "--check"],
    );
}

#[test]
fn a_nullable_sharding_column_is_refused_at_table_add_and_by_the_preflight() {
    let _g = serial();
    let id = sharded(
        "fnull",
        &[
            "CREATE DATABASE pnull",
            "CREATE TABLE pnull.t (pk INT PRIMARY KEY, id INT NOT NULL, KEY (id))",
            "CREATE TABLE pnull.u (pk INT PRIMARY KEY, id INT NULL, KEY (id))",
        ],
        "pnull.t",
        "id",
        "node1",
    );
    let schema = format!("pnull_{id}");
    refused(
        &FLEET.inventory_path(),
        &[
            "table",
            "add",
            "pnull.u",
            "--function",
            "fnull",
            "--column",
            "id",
        ],
        &[],
        &[&format!(
            "the sharding column {schema}.u.id on node1 is nullable"
        )],
    );
    // A mapped column made nullable since: `--check`, the operations and prune refuse it.
    exec(
        &mut connect(sandbox3(), "node1"),
        &[&format!("ALTER TABLE {schema}.t MODIFY id INT NULL")],
    );
    let shard = id.to_string();
    let words = [&*format!(
        "the sharding column {schema}.t.id on node1 is nullable"
    )];
    refused(
        &FLEET.inventory_path(),
        &["move", "--shard", &shard, "--to", "node2", "--check"],
        &[&schema],
        &words,
    );
    refused(
        &FLEET.inventory_path(),
        &["move", "--shard", &shard, "--to", "node2"],
        &[&schema],
        &words,
    );
    refused(
        &FLEET.inventory_path(),
        &["split", "--shard", &shard, "--to", "node2", "--at", "500"],
        &[&schema],
        &words,
    );
    refused(
        &FLEET.inventory_path(),
        &["prune", "--shard", &shard],
        &[&schema],
        &words,
    );
}

#[test]
fn a_foreign_key_to_a_schema_outside_the_shard_is_refused() {
    let _g = serial();
    let id = sharded(
        "ffk",
        &[
            "CREATE DATABASE pfk",
            "CREATE TABLE pfk.t (id INT PRIMARY KEY, p INT, KEY (p))",
            "CREATE DATABASE pfk_parent",
            "CREATE TABLE pfk_parent.parent (id INT PRIMARY KEY)",
        ],
        "pfk.t",
        "id",
        "node1",
    );
    let schema = format!("pfk_{id}");
    exec(
        &mut connect(sandbox3(), "node1"),
        &[&format!(
            "ALTER TABLE {schema}.t ADD CONSTRAINT fk_outside FOREIGN KEY (p) REFERENCES pfk_parent.parent (id) ON DELETE CASCADE"
        )],
    );
    let shard = id.to_string();
    refused(
        &FLEET.inventory_path(),
        &["move", "--shard", &shard, "--to", "node2"],
        &[&schema],
        &[&format!(
            "foreign key fk_outside of {schema}.t references pfk_parent.parent, outside shard {id}'s schemas"
        )],
    );
}
