//! Security on a sandbox that serves TLS (issue 11, item 6): the replication channel and
//! the dump tools use TLS and verify the source's certificate when the inventory asks for
//! it; root has no TCP login without a password; the admin account has no GRANT OPTION
//! and no access to `mysql`; the application account reaches shard schemas only; a
//! readable password file is named in a warning. The journal as an attack surface (issue
//! 26, item 6): `resume` runs no hook command and replays no definition read back from it;
//! the application account reads the directory and cannot write it; `status` warns when
//! the directory's address of a node is not the inventory's. One 2-node TLS sandbox for
//! the binary.

mod common;

use common::{serial, shardctl, FleetSetup, Function, SharedFleet};
use mysql::prelude::Queryable;
use shardctl::config::Inventory;
use shardctl::ident::Channel;
use shardctl::sandbox::{Sandbox, ROOT_OPTION_FILE};
use shardctl::server::{server_error_code, Server, StartAt, Stmt};
use std::os::unix::fs::PermissionsExt;
use std::time::{Duration, Instant};

/// The TLS sandbox, with schema `sec` (table `t`) mapped by function `f`: shard 1 on
/// node1 holding 200 rows.
static FLEET: SharedFleet = SharedFleet::configured(2, |b| b.tls(true), set_up);

/// Sets up the fleet once, on first use (see [`FLEET`]).
fn set_up(sb: &Sandbox) {
    FleetSetup::new()
        .nodes(&["node1", "node2"])
        .schema(&[
            "CREATE DATABASE sec",
            "CREATE TABLE sec.t (id INT PRIMARY KEY, v VARCHAR(20))",
        ])
        .function(
            Function::range("f")
                .table("sec.t", "id")
                .shard("node1", "0"),
        )
        .rows(
            "node1",
            &["INSERT INTO sec_1.t SELECT seq, CONCAT('row ', seq) FROM sec.seq_1_to_200"],
        )
        .build(sb);
}

fn inventory() -> Inventory {
    Inventory::load(&FLEET.inventory_path()).unwrap()
}

fn port(node: &str) -> u16 {
    FLEET.sandbox().node(node).unwrap().port
}

/// A TCP login attempt; the server's error code when refused.
fn tcp_login(node: &str, user: &str, password: Option<&str>) -> Result<mysql::Conn, u16> {
    let opts = mysql::OptsBuilder::new()
        .ip_or_hostname(Some("127.0.0.1"))
        .tcp_port(port(node))
        .user(Some(user))
        .pass(password)
        .tcp_connect_timeout(Some(Duration::from_secs(5)));
    mysql::Conn::new(opts).map_err(|e| server_error_code(&e).unwrap_or(0))
}

/// A TLS connection with the application account.
fn app(node: &str) -> Server {
    let inv = inventory();
    let mut spec = shardctl::server::ConnectSpec::for_node(&inv, inv.node(node).unwrap()).unwrap();
    spec.credentials = inv.application_credentials(node).unwrap();
    Server::connect(&spec).unwrap()
}

fn admin(node: &str) -> Server {
    Server::connect_node(&inventory(), node).unwrap()
}

/// The error code of one statement, if it fails.
fn fails_with(server: &mut Server, sql: &str) -> Option<u16> {
    server
        .try_rows(&Stmt::text(sql))
        .err()
        .map(|e| server_error_code(&e).unwrap_or(0))
}

fn count(server: &mut Server, sql: &str) -> i64 {
    server.first::<i64>(&Stmt::text(sql)).unwrap().unwrap()
}

#[test]
fn a_channel_from_a_tls_node_uses_tls_and_verifies_the_certificate() {
    let _g = serial();
    let sb = FLEET.sandbox();
    let inv = inventory();
    let mut source = admin("node1");
    let start = source.coordinates().unwrap().position;
    let ch = Channel::new("tls_probe").unwrap();
    shardctl::ops::steps::change_master(
        &inv,
        "node2",
        &ch,
        "node1",
        StartAt::Position(start),
        true,
    )
    .unwrap();
    let mut target = admin("node2");
    let status = Stmt::text("SHOW SLAVE 'tls_probe' STATUS");
    let deadline = Instant::now() + Duration::from_secs(30);
    let row = loop {
        let row = target.rows(&status).unwrap().remove(0);
        let io: String = row.get("Slave_IO_Running").unwrap();
        if io == "Yes" || Instant::now() > deadline {
            break row;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let col = |name: &str| -> String { row.get(name).unwrap_or_default() };
    // The replication account is REQUIRE SSL on a TLS sandbox: a running receiver is a
    // TLS connection that passed the certificate check.
    assert_eq!(col("Slave_IO_Running"), "Yes", "{}", col("Last_IO_Error"));
    assert_eq!(col("Master_SSL_Allowed"), "Yes");
    assert_eq!(col("Master_SSL_Verify_Server_Cert"), "Yes");
    assert_eq!(
        col("Master_SSL_CA_File"),
        sb.dir().join("tls/ca.pem").display().to_string()
    );
    target.reset_channel(&ch).unwrap();
}

#[test]
fn shards_move_over_tls_with_both_methods() {
    let _g = serial();
    let sb = FLEET.sandbox();
    let config = sb.inventory_path();
    let run = |args: &[&str]| {
        shardctl()
            .arg("--config")
            .arg(&config)
            .args(args)
            .timeout(Duration::from_secs(300))
            .assert()
            .success();
    };
    // Native copy, channel over TLS (the replication account cannot connect otherwise).
    run(&["move", "--shard", "1", "--to", "node2"]);
    assert_eq!(
        count(&mut admin("node2"), "SELECT COUNT(*) FROM sec_1.t"),
        200
    );
    // Dump tools over TLS: the admin account is REQUIRE SSL too.
    run(&["move", "--shard", "1", "--to", "node1", "--method", "dump"]);
    assert_eq!(
        count(&mut admin("node1"), "SELECT COUNT(*) FROM sec_1.t"),
        200
    );
    // The physical copy's mariadb-backup logs in with the inventory's CA and checks the
    // server's certificate (the sandbox's inventory reaches its nodes over TCP).
    let out = shardctl()
        .arg("--config")
        .arg(&config)
        .args([
            "move", "--shard", "1", "--to", "node2", "--method", "physical",
        ])
        .arg("-vv")
        .timeout(Duration::from_secs(300))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("--protocol=TCP --ssl --ssl-ca=") && err.contains("--ssl-verify-server-cert"),
        "mariadb-backup was not given the inventory's TLS: {err}"
    );
    assert_eq!(
        count(&mut admin("node2"), "SELECT COUNT(*) FROM sec_1.t"),
        200
    );
}

#[test]
fn tls_sandbox_accounts_refuse_plain_connections() {
    let _g = serial();
    let inv = inventory();
    let creds = inv.replication_credentials().unwrap();
    // Without TLS the replication account is refused (1045: REQUIRE SSL).
    let plain = tcp_login("node1", &creds.user, Some(creds.password.expose()));
    assert_eq!(plain.err(), Some(1045));
}

#[test]
fn root_has_no_tcp_login_without_its_password() {
    let _g = serial();
    let sb = FLEET.sandbox();
    for node in ["node1", "node2"] {
        assert_eq!(tcp_login(node, "root", None).err(), Some(1045), "{node}");
        assert_eq!(
            tcp_login(node, "root", Some("")).err(),
            Some(1045),
            "{node}"
        );
    }
    let file = sb.dir().join(ROOT_OPTION_FILE);
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "{}", file.display());
    let root = shardctl::config::read_option_file(&file).unwrap();
    let password = root.password.unwrap();
    assert!(password.len() >= 16);
    // Root is localhost only, and no unlocked account has an empty password (mariadb.sys
    // is locked: no login at all).
    let socket = sb.node("node1").unwrap().socket();
    let mut conn = mysql::Conn::new(
        mysql::OptsBuilder::new()
            .socket(Some(socket.display().to_string()))
            .user(Some("root"))
            .pass(Some(password)),
    )
    .unwrap();
    let hosts: Vec<String> = conn
        .query("SELECT Host FROM mysql.user WHERE User = 'root'")
        .unwrap();
    assert_eq!(hosts, vec!["localhost".to_string()]);
    let open: Vec<(String, String)> = conn
        .query(
            "SELECT User, Host FROM mysql.global_priv \
             WHERE IFNULL(JSON_EXTRACT(Priv, '$.account_locked'), 'false') <> 'true' \
             AND (User = '' OR (IFNULL(JSON_VALUE(Priv, '$.authentication_string'), '') = '' \
             AND IFNULL(JSON_VALUE(Priv, '$.plugin'), '') IN ('', 'mysql_native_password')))",
        )
        .unwrap();
    assert!(open.is_empty(), "passwordless accounts: {open:?}");
}

#[test]
fn the_admin_account_has_no_grant_option_and_no_mysql_schema() {
    let _g = serial();
    let mut s = admin("node1");
    let grants: Vec<String> = s
        .rows(&Stmt::text("SHOW GRANTS"))
        .unwrap()
        .into_iter()
        .map(|r| r.get::<String, _>(0).unwrap())
        .collect();
    assert!(
        grants
            .iter()
            .all(|g| !g.contains("GRANT OPTION") && !g.contains("ALL PRIVILEGES")),
        "{grants:?}"
    );
    // No account management, no writes to the grant tables.
    assert_eq!(
        fails_with(&mut s, "CREATE USER 'intruder'@'%' IDENTIFIED BY 'x'"),
        Some(1227)
    );
    assert_eq!(
        fails_with(
            &mut s,
            "UPDATE mysql.global_priv SET Priv = '{}' WHERE User = 'app'"
        ),
        Some(1142)
    );
    assert_eq!(
        fails_with(&mut s, "SELECT * FROM mysql.global_priv"),
        Some(1142)
    );
    assert_eq!(
        fails_with(&mut s, "GRANT SELECT ON sec_1.* TO 'app'@'%'"),
        Some(1044)
    );
    // Account names only (the preflight looks for definers), never password hashes.
    assert_eq!(
        count(
            &mut s,
            "SELECT COUNT(User) FROM mysql.user WHERE User = 'app' AND Host = '%'"
        ),
        1
    );
    assert_eq!(
        fails_with(&mut s, "SELECT authentication_string FROM mysql.user"),
        Some(1143)
    );
}

#[test]
fn the_application_account_reaches_shard_schemas_only() {
    let _g = serial();
    let node = {
        let mut s = admin("node1");
        if count(
            &mut s,
            "SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = 'sec_1'",
        ) == 1
        {
            "node1"
        } else {
            "node2"
        }
    };
    let mut a = app(node);
    assert_eq!(count(&mut a, "SELECT COUNT(*) FROM sec_1.t"), 200);
    a.exec(&Stmt::text("UPDATE sec_1.t SET v = 'app' WHERE id = 1"))
        .unwrap();
    // The directory it may read (it is the directory's application account too), never
    // write: see the_application_account_reads_the_directory_and_cannot_write_it.
    for sql in [
        "UPDATE shardctl.locations SET version = version + 1",
        "SELECT COUNT(*) FROM mysql.db",
        "CREATE TABLE sec_1.more (id INT PRIMARY KEY)",
        "DROP TABLE sec_1.t",
    ] {
        let code = fails_with(&mut a, sql);
        assert!(matches!(code, Some(1142 | 1044)), "{sql}: {code:?}");
    }
}

#[test]
fn a_password_file_readable_by_others_is_named_in_one_warning() {
    let _g = serial();
    let sb = FLEET.sandbox();
    let dir = tempfile::tempdir().unwrap();
    let loose = dir.path().join("loose.cnf");
    std::fs::copy(sb.dir().join("client.cnf"), &loose).unwrap();
    std::fs::set_permissions(&loose, std::fs::Permissions::from_mode(0o644)).unwrap();
    let text = std::fs::read_to_string(sb.inventory_path())
        .unwrap()
        .replace(
            &sb.dir().join("client.cnf").display().to_string(),
            &loose.display().to_string(),
        );
    let config = dir.path().join("inventory.yaml");
    std::fs::write(&config, text).unwrap();
    let out = shardctl()
        .arg("--config")
        .arg(&config)
        .args(["node", "list"])
        .assert()
        .success()
        .get_output()
        .clone();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let warnings: Vec<&str> = stderr.lines().filter(|l| l.contains("warning")).collect();
    assert_eq!(warnings.len(), 1, "{stderr}");
    assert!(
        warnings[0].contains("loose.cnf") && warnings[0].contains("0644"),
        "{stderr}"
    );
}

/// The node shard 1 of `sec` lives on now (other tests move it).
fn home_of_shard_1() -> String {
    shardctl::directory::Directory::open(&inventory())
        .unwrap()
        .load()
        .unwrap()
        .shard(1)
        .unwrap()
        .node
        .clone()
}

/// The journal holds data, not code (issue 26, item 6): a move waiting for its manual
/// cut-over (its own `before-cutover` hook given with `--hook`) dies; someone who can write
/// the directory replaces the hook's entry in `operations.params` by a command of their
/// own. `resume` never runs it — not even when told to cut over — and says which hook it
/// needs given again; the operation can still be aborted.
#[test]
fn resume_never_runs_a_hook_command_read_back_from_the_journal() {
    let _g = serial();
    let sb = FLEET.sandbox();
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("planted");
    let from = home_of_shard_1();
    let to = if from == "node1" { "node2" } else { "node1" };
    let mut first = common::spawn_shardctl(
        &sb.inventory_path(),
        &[
            "move",
            "--shard",
            "1",
            "--to",
            to,
            "--cutover",
            "manual",
            "--hook",
            "before-cutover=true",
        ],
        None,
        dir.path(),
        "first",
    );
    let inv = inventory();
    let deadline = Instant::now() + Duration::from_secs(120);
    let op = loop {
        let rec = common::newest_op(&inv);
        if let Some(rec) = &rec {
            let waiting = rec
                .steps
                .iter()
                .any(|s| s.name == "await-cutover" && s.state.as_sql() == "running");
            if rec.state.as_sql() == "running" && waiting {
                break rec.id;
            }
        }
        assert!(
            first.try_wait().unwrap().is_none(),
            "the move ended: {}",
            std::fs::read_to_string(dir.path().join("first.err")).unwrap()
        );
        assert!(Instant::now() < deadline, "never waited: {rec:?}");
        std::thread::sleep(Duration::from_millis(200));
    };
    first.kill().unwrap();
    first.wait().unwrap();

    // Whoever can write the directory plants a command in the journaled playbook.
    let directory_node = inv.directory_home().to_string();
    let mut d = admin(&directory_node);
    let params: String = d
        .first(&Stmt::with(
            "SELECT params FROM shardctl.operations WHERE op_id = ?",
            vec![op.into()],
        ))
        .unwrap()
        .unwrap();
    let mut params: serde_json::Value = serde_json::from_str(&params).unwrap();
    let mut planted = 0;
    for step in params["playbook"]["steps"].as_array_mut().unwrap() {
        if step["step"] == "await-cutover" {
            for hook in step["hooks"].as_array_mut().unwrap() {
                hook["command"] = format!("touch {}", marker.display()).into();
                planted += 1;
            }
        }
    }
    assert_eq!(planted, 1, "the move's own hook is journaled: {params}");
    d.exec(&Stmt::with(
        "UPDATE shardctl.operations SET params = ? WHERE op_id = ?",
        vec![params.to_string().into(), op.into()],
    ))
    .unwrap();

    let mut resumed = common::spawn_shardctl(
        &sb.inventory_path(),
        &["resume", &op.to_string(), "--hook", "before-cutover=true"],
        None,
        dir.path(),
        "resume",
    );
    // Were it waiting again, the go-ahead would run its before-cutover hooks.
    std::thread::sleep(Duration::from_secs(5));
    if resumed.try_wait().unwrap().is_none() {
        let _ = FLEET.cli(&[]).args(["cutover", &op.to_string()]).output();
    }
    let status = common::wait_exit(&mut resumed, Duration::from_secs(180));
    let err = std::fs::read_to_string(dir.path().join("resume.err")).unwrap();
    assert!(!marker.exists(), "resume ran the planted command: {err}");
    assert_eq!(status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!(
            "operation {op} was started with a before-cutover hook of its own (sha256:"
        )) && err.contains("give the same --hook before-cutover=COMMAND"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert_eq!(home_of_shard_1(), from, "nothing moved");
    FLEET
        .cli(&[])
        .args(["abort", &op.to_string()])
        .assert()
        .success();
    assert!(!marker.exists());
    assert_eq!(home_of_shard_1(), from);
}

/// The account applications read the directory with (the inventory's
/// `directory.application`, the sandbox's application account): it reads every directory
/// table and takes ids, and every INSERT, UPDATE and DELETE on the directory's tables is
/// refused (1142; 1143 for a sequence's other columns). The router connects with it: it
/// routes and issues ids, and with that account's password wrong it cannot connect while
/// shardctl's own (admin) connections are unchanged.
#[test]
fn the_application_account_reads_the_directory_and_cannot_write_it() {
    let _g = serial();
    let sb = FLEET.sandbox();
    let inv = inventory();
    let directory_node = inv.directory_home().to_string();
    let mut admin_dir = shardctl::directory::Directory::open(&inv).unwrap();
    if shardctl::directory::sequences::sequence(&mut admin_dir, "sec_ids").is_err() {
        shardctl::ids::create_sequence(&mut admin_dir, "sec_ids", 1, 10, 1_000_000).unwrap();
    }
    let mut a = app(&directory_node);
    for table in [
        "nodes",
        "locations",
        "ranges",
        "operations",
        "operation_steps",
        "operation_effects",
        "sequences",
        "directory_version",
    ] {
        let sql = format!("SELECT COUNT(*) FROM shardctl.{table}");
        assert_eq!(fails_with(&mut a, &sql), None, "{sql}");
    }
    for sql in [
        "INSERT INTO shardctl.nodes (name, host, port) VALUES ('evil', '10.6.6.6', 3306)",
        "UPDATE shardctl.nodes SET host = '10.6.6.6'",
        "DELETE FROM shardctl.nodes",
        "UPDATE shardctl.locations SET port = 1",
        "UPDATE shardctl.locations SET version = version + 1",
        "DELETE FROM shardctl.locations",
        "UPDATE shardctl.ranges SET lower_bound = 0",
        "UPDATE shardctl.operations SET params = '{}'",
        "INSERT INTO shardctl.operations (kind, state) VALUES ('move', 'running')",
        "DELETE FROM shardctl.operations",
        "UPDATE shardctl.operation_steps SET outputs = '{}'",
        "UPDATE shardctl.directory_version SET version = version + 1",
        "INSERT INTO shardctl.sequences (name, next_value, block_size, max_value) VALUES ('x', 1, 1, 9)",
        "DELETE FROM shardctl.sequences",
        "DROP TABLE shardctl.locations",
    ] {
        let code = fails_with(&mut a, sql);
        assert_eq!(code, Some(1142), "{sql}: {code:?}");
    }
    let code = fails_with(&mut a, "UPDATE shardctl.sequences SET max_value = 1");
    assert_eq!(code, Some(1143), "a sequence's other columns: {code:?}");

    // The sandbox's inventory names that account as the directory's application account.
    let mut file: serde_yaml::Value =
        serde_yaml::from_str(&std::fs::read_to_string(sb.inventory_path()).unwrap()).unwrap();
    assert_eq!(
        file["directory"]["application"]["user"].as_str(),
        Some(shardctl::sandbox::APP_USER),
        "{file:?}"
    );

    let mut router = shardctl::directory::Router::connect(&inv).unwrap();
    let shard = router
        .shard_for_table("sec", "t", &shardctl::directory::Key::Int(5))
        .unwrap();
    assert_eq!(shard.id, 1);
    let ids: Vec<i64> = (0..25)
        .map(|_| router.next_id("sec_ids").unwrap())
        .collect();
    let mut unique = ids.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), 25, "{ids:?}");

    // The router logs in with that account, not the admin's: with its password wrong it
    // cannot connect, while shardctl's own connections are unchanged.
    file["directory"]["application"] =
        serde_yaml::from_str("{user: app, password: not-the-password}").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("wrong.yaml");
    std::fs::write(&path, serde_yaml::to_string(&file).unwrap()).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    let wrong = Inventory::load(&path).unwrap();
    let refused = shardctl::directory::Router::connect(&wrong).unwrap_err();
    assert!(refused.to_string().contains("1045"), "{refused}");
    shardctl::directory::Directory::open(&wrong)
        .unwrap()
        .load()
        .unwrap();
}

/// `status` warns, one line per node and in its JSON, when the directory's address of a
/// node (what applications connect to) differs from the inventory's.
#[test]
fn status_warns_when_the_directory_sends_applications_elsewhere() {
    let _g = serial();
    let inv = inventory();
    let mut d = admin(inv.directory_home());
    let port = port("node2");
    d.exec(&Stmt::text(
        "UPDATE shardctl.nodes SET host = '10.6.6.6' WHERE name = 'node2'",
    ))
    .unwrap();
    let restore = || {
        admin(inventory().directory_home())
            .exec(&Stmt::text(
                "UPDATE shardctl.nodes SET host = '127.0.0.1' WHERE name = 'node2'",
            ))
            .unwrap()
    };
    let table = FLEET.cli(&[]).arg("status").output().unwrap();
    let json = FLEET
        .cli(&[])
        .args(["--output", "json", "status"])
        .output()
        .unwrap();
    restore();
    let stderr = String::from_utf8_lossy(&table.stderr);
    let warnings: Vec<&str> = stderr.lines().filter(|l| l.contains("warning")).collect();
    assert_eq!(
        warnings,
        [format!(
            "shardctl: warning: node node2: the directory sends applications to 10.6.6.6:{port}, the inventory says 127.0.0.1:{port}"
        )],
        "{stderr}"
    );
    let doc: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let nodes = doc["nodes"].as_array().unwrap();
    let address = |name: &str| {
        nodes
            .iter()
            .find(|n| n["node"] == name)
            .map(|n| n["directory_address"].clone())
            .unwrap()
    };
    assert_eq!(address("node2"), format!("10.6.6.6:{port}"));
    assert_eq!(address("node1"), serde_json::Value::Null);
    // Agreeing again: no warning.
    let again = FLEET.cli(&[]).arg("status").output().unwrap();
    assert!(
        !String::from_utf8_lossy(&again.stderr).contains("warning"),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
}

/// The definitions a split on one node carries across a crash in its journal (the shard's
/// triggers, read before its copy, created under the fence once its stream stopped) are
/// replayed only as the server still holds them: a definition planted in the step outputs
/// is refused in one line and never sent; the genuine journal resumes and the new shard
/// gets the shard's view and trigger.
#[test]
fn resume_replays_no_definition_the_server_does_not_hold() {
    let _g = serial();
    let sb = FLEET.sandbox();
    let home = home_of_shard_1();
    let mut h = admin(&home);
    for sql in [
        "CREATE OR REPLACE VIEW sec_1.t_ids AS SELECT id FROM sec_1.t",
        "CREATE TRIGGER IF NOT EXISTS sec_1.t_shout BEFORE INSERT ON sec_1.t FOR EACH ROW SET NEW.v = UPPER(NEW.v)",
    ] {
        h.exec(&Stmt::text(sql)).unwrap();
    }
    let dir = tempfile::tempdir().unwrap();
    let mut split = common::spawn_shardctl(
        &sb.inventory_path(),
        &["split", "--shard", "1", "--at", "100000", "--to", &home],
        Some("crash@journaled:raise-fence"),
        dir.path(),
        "split",
    );
    let status = common::wait_exit(&mut split, Duration::from_secs(180));
    assert!(
        !status.success(),
        "{}",
        std::fs::read_to_string(dir.path().join("split.err")).unwrap()
    );
    let inv = inventory();
    let op = common::newest_op(&inv).unwrap().id;

    // Whoever can write the directory replaces the view's definition in the step outputs.
    let mut d = admin(inv.directory_home());
    let rows = d
        .rows(&Stmt::with(
            "SELECT step_no, outputs FROM shardctl.operation_steps WHERE op_id = ? AND outputs LIKE '%local_ddl%'",
            vec![op.into()],
        ))
        .unwrap();
    let original: Vec<(u32, String)> = rows
        .into_iter()
        .map(mysql::from_row::<(u32, String)>)
        .collect();
    let mut planted = 0;
    for (step_no, outputs) in &original {
        let mut value: serde_json::Value = serde_json::from_str(outputs).unwrap();
        if let Some(defs) = value["local_ddl"].as_array_mut() {
            for def in defs {
                if def[1]["label"] == "trigger t_shout" {
                    def[1]["ddl"] = "CREATE DATABASE planted_by_journal".into();
                    planted += 1;
                }
            }
        }
        d.exec(&Stmt::with(
            "UPDATE shardctl.operation_steps SET outputs = ? WHERE op_id = ? AND step_no = ?",
            vec![value.to_string().into(), op.into(), (*step_no).into()],
        ))
        .unwrap();
    }
    assert!(
        planted > 0,
        "the trigger's definition is journaled: {original:?}"
    );
    let planted_schema =
        "SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = 'planted_by_journal'";

    let out = FLEET
        .cli(&[])
        .args(["resume", &op.to_string()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(count(&mut admin(&home), planted_schema), 0, "{err}");
    assert_eq!(out.status.code(), Some(5), "{err}");
    assert!(
        err.contains("the journal's definition of trigger t_shout")
            && err.contains("is not replayed"),
        "{err}"
    );
    // One line says why (besides the log line of taking the dead run's operation over).
    let refusals = err.lines().filter(|l| l.starts_with("shardctl: ")).count();
    assert_eq!(refusals, 1, "{err}");

    // The journal as shardctl wrote it resumes; the new shard has the view and trigger.
    for (step_no, outputs) in &original {
        d.exec(&Stmt::with(
            "UPDATE shardctl.operation_steps SET outputs = ? WHERE op_id = ? AND step_no = ?",
            vec![outputs.clone().into(), op.into(), (*step_no).into()],
        ))
        .unwrap();
    }
    let out = FLEET
        .cli(&[])
        .args(["resume", &op.to_string()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let new_shard = shardctl::directory::Directory::open(&inv)
        .unwrap()
        .load()
        .unwrap()
        .shards
        .iter()
        .map(|s| s.id)
        .max()
        .unwrap();
    let mut h = admin(&home);
    assert_eq!(
        count(
            &mut h,
            &format!("SELECT COUNT(*) FROM information_schema.VIEWS WHERE TABLE_SCHEMA = 'sec_{new_shard}' AND TABLE_NAME = 't_ids'")
        ),
        1
    );
    assert_eq!(
        count(
            &mut h,
            &format!("SELECT COUNT(*) FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = 'sec_{new_shard}' AND TRIGGER_NAME = 't_shout'")
        ),
        1
    );
    assert_eq!(count(&mut h, planted_schema), 0);
}
