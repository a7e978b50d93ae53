//! Security on a sandbox that serves TLS (issue 11, item 6): the replication channel and
//! the dump tools use TLS and verify the source's certificate when the inventory asks for
//! it; root has no TCP login without a password; the admin account has no GRANT OPTION
//! and no access to `mysql`; the application account reaches shard schemas only; a
//! readable password file is named in a warning. One 2-node TLS sandbox for the binary.

mod common;

use common::{range_directory, shardctl};
use mysql::prelude::Queryable;
use shardctl::config::Inventory;
use shardctl::ident::Channel;
use shardctl::sandbox::{Sandbox, SandboxBuilder, ROOT_OPTION_FILE};
use shardctl::server::{server_error_code, Server, StartAt, Stmt};
use std::os::unix::fs::PermissionsExt;
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

/// The TLS sandbox, with schema `sec` (table `t`) mapped by function `f`: shard 1 on
/// node1 holding 200 rows.
fn fleet() -> &'static Sandbox {
    static SB: OnceLock<Sandbox> = OnceLock::new();
    SB.get_or_init(|| {
        let sb = SandboxBuilder::for_tests(2)
            .and_then(|b| b.tls(true).start())
            .unwrap_or_else(|e| panic!("cannot start the TLS sandbox: {e}"));
        let inv = Inventory::load(&sb.inventory_path()).unwrap();
        let mut s = Server::connect_node(&inv, "node1").unwrap();
        for sql in [
            "CREATE DATABASE sec",
            "CREATE TABLE sec.t (id INT PRIMARY KEY, v VARCHAR(20))",
        ] {
            s.exec(&Stmt::text(sql)).unwrap();
        }
        range_directory(
            &sb.inventory_path(),
            &["node1", "node2"],
            &[("sec.t", "id")],
            &[("node1", "0")],
        );
        s.exec(&Stmt::text(
            "INSERT INTO sec_1.t SELECT seq, CONCAT('row ', seq) FROM sec.seq_1_to_200",
        ))
        .unwrap();
        sb
    })
}

fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

fn inventory() -> Inventory {
    Inventory::load(&fleet().inventory_path()).unwrap()
}

fn port(node: &str) -> u16 {
    fleet().node(node).unwrap().port
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
    let sb = fleet();
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
    let sb = fleet();
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
    let sb = fleet();
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
    for sql in [
        "SELECT COUNT(*) FROM shardctl.locations",
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
    let sb = fleet();
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
