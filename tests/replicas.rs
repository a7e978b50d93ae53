//! Nodes as replication groups: sandboxes whose nodes have replicas (GTID, read-only,
//! `log_slave_updates`), the inventory's `replicas:` lists, and per-schema grants.

mod common;

use common::{connect, count, exec, inventory, shardctl};
use shardctl::config::ReplicaSpec;
use shardctl::sandbox::SandboxBuilder;
use shardctl::server::{Server, Stmt};
use std::time::{Duration, Instant};

/// Waits until `sql` answers `want` on `server` (a replica catching up), for 60 s at most.
fn wait_for_count(server: &mut Server, sql: &str, want: i64) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let got = server.first::<i64>(&Stmt::text(sql)).ok().flatten();
        if got == Some(want) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{sql} on {}: {got:?}, want {want}",
            server.name()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_sandbox_with_replicas_replicates_by_gtid_and_lists_them_in_its_inventory() {
    let sb = SandboxBuilder::for_tests(2)
        .unwrap()
        .replicas(1)
        .gtid_strict(true)
        .start()
        .unwrap();
    let inv = inventory(&sb);
    for (node, domain) in [("node1", 1), ("node2", 2)] {
        let replicas = &inv.node(node).unwrap().spec.replicas;
        let ours = sb.replicas_of(node);
        assert_eq!(ours.len(), 1, "{node}");
        let [ReplicaSpec::Server(r)] = &replicas[..] else {
            panic!("{node}: {replicas:?}")
        };
        assert_eq!(r.port, Some(ours[0].port), "{node}");
        let mut primary = connect(&sb, node);
        let mut replica = Server::connect_replica(&inv, node, &replicas[0]).unwrap();
        assert_ne!(replica.address(), primary.address());
        let schema = format!("grp_{domain}");
        exec(
            &mut primary,
            &[
                &format!("CREATE DATABASE {schema}"),
                &format!("CREATE TABLE {schema}.t (id INT PRIMARY KEY)"),
                &format!("INSERT INTO {schema}.t VALUES (1), (2), (3)"),
            ],
        );
        wait_for_count(&mut replica, &format!("SELECT COUNT(*) FROM {schema}.t"), 3);
        assert_eq!(count(&mut replica, "SELECT @@read_only"), 1);
        assert_eq!(count(&mut replica, "SELECT @@log_slave_updates"), 1);
        assert_eq!(count(&mut primary, "SELECT @@log_slave_updates"), 1);
        assert_eq!(count(&mut replica, "SELECT @@gtid_strict_mode"), 1);
        assert_eq!(count(&mut replica, "SELECT @@gtid_domain_id"), domain);
        let using_gtid: Option<String> = replica
            .rows(&Stmt::text("SHOW SLAVE STATUS"))
            .unwrap()
            .first()
            .and_then(|row| row.get("Using_Gtid"));
        assert_eq!(using_gtid.as_deref(), Some("Slave_Pos"), "{node}");
    }
}

#[test]
fn a_replica_entry_without_address_or_naming_its_own_node_is_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let inventory = |replicas: &str| {
        format!(
            "directory: {{node: node1}}\nnodes:\n  node1:\n    host: 127.0.0.1\n    port: 24001\n    user: shardctl\n    replicas:\n{replicas}  node2:\n    host: 127.0.0.1\n    port: 24002\n    user: shardctl\n"
        )
    };
    for (case, replicas, wanted) in [
        (
            "no address",
            "    - port: 24003\n",
            "node node1: replica 1 has no address",
        ),
        (
            "its own address",
            "    - host: 127.0.0.1\n      port: 24001\n",
            "node node1: replica 1 (127.0.0.1:24001) is the node itself",
        ),
        (
            "its own name",
            "    - node1\n",
            "node node1: replica \"node1\" is the node itself",
        ),
        (
            "an unknown node",
            "    - node9\n",
            "node node1: replica \"node9\" is not a node",
        ),
    ] {
        let path = common::write_file(dir.path(), "inv.yaml", &inventory(replicas));
        let out = shardctl()
            .arg("--config")
            .arg(&path)
            .args(["status"])
            .assert()
            .code(3)
            .get_output()
            .clone();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(stderr.lines().count(), 1, "{case}: {stderr}");
        assert!(stderr.contains(wanted), "{case}: {stderr}");
    }
    // A valid list loads: a node's name, and an address with an ssh host.
    let path = common::write_file(
        dir.path(),
        "inv.yaml",
        &inventory(
            "    - node2\n    - host: 10.0.0.7\n      port: 3306\n      ssh: {host: db7, user: ops, agent: true, known_hosts_file: /etc/ssh/known}\n",
        ),
    );
    let inv = shardctl::config::Inventory::load(&path).unwrap();
    let labels: Vec<String> = inv
        .node("node1")
        .unwrap()
        .spec
        .replicas
        .iter()
        .map(|r| r.label())
        .collect();
    assert_eq!(labels, ["node2", "10.0.0.7:3306"]);
}

#[test]
fn per_schema_grants_let_the_application_use_the_named_schemas_only() {
    let sb = SandboxBuilder::for_tests(1)
        .unwrap()
        .app_schemas(&["shop_1"])
        .start()
        .unwrap();
    let mut admin = connect(&sb, "node1");
    exec(
        &mut admin,
        &[
            "CREATE DATABASE shop_1",
            "CREATE DATABASE shop_2",
            "CREATE DATABASE shopx1",
            "CREATE TABLE shop_1.t (id INT PRIMARY KEY)",
            "CREATE TABLE shop_2.t (id INT PRIMARY KEY)",
            "CREATE TABLE shopx1.t (id INT PRIMARY KEY)",
        ],
    );
    let inv = inventory(&sb);
    let app = |schema: &str| {
        let node = inv.node("node1").unwrap();
        let mut spec = shardctl::server::ConnectSpec::for_node(&inv, node).unwrap();
        spec.credentials = inv.application_credentials("node1").unwrap();
        let mut s = Server::connect(&spec).unwrap();
        s.exec(&Stmt::text(format!("INSERT INTO {schema}.t VALUES (1)")))
    };
    app("shop_1").expect("the application writes its granted schema");
    for other in ["shop_2", "shopx1"] {
        let e = app(other).expect_err(other).to_string();
        assert!(e.contains("1142"), "{other}: {e}");
    }
    // The helper a test uses to grant one more schema, as a DBA would.
    common::grant_application(&sb, "node1", "shop_2");
    app("shop_2").expect("granted now");
}
