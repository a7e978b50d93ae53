//! Nodes as replication groups: sandboxes whose nodes have replicas (GTID, read-only,
//! `log_slave_updates`), the inventory's `replicas:` lists, and per-schema grants.

mod common;

use common::{connect, count, exec, exec_unlogged, inventory, shardctl, FleetSetup, Function};
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
    // `status` shows each node's replicas and how they replicate, in JSON and text.
    let out = shardctl()
        .arg("--config")
        .arg(sb.inventory_path())
        .args(["--output", "json", "status"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let doc: serde_json::Value = serde_json::from_slice(&out).unwrap();
    for (i, node) in ["node1", "node2"].iter().enumerate() {
        let replicas = &doc["nodes"][i]["replicas"];
        let port = sb.replicas_of(node)[0].port;
        assert_eq!(replicas[0]["address"], format!("127.0.0.1:{port}"), "{doc}");
        assert_eq!(replicas[0]["reachable"], true, "{doc}");
        assert_eq!(replicas[0]["io_state"], "yes", "{doc}");
        assert_eq!(replicas[0]["sql_running"], true, "{doc}");
        assert!(replicas[0]["seconds_behind"].is_u64(), "{doc}");
    }
    let mut stopped =
        Server::connect_replica(&inv, "node2", &inv.node("node2").unwrap().spec.replicas[0])
            .unwrap();
    stopped.exec(&Stmt::text("STOP SLAVE SQL_THREAD")).unwrap();
    let out = shardctl()
        .arg("--config")
        .arg(sb.inventory_path())
        .args(["status"])
        .env("COLUMNS", "300")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8_lossy(&out);
    let port = |node: &str| sb.replicas_of(node)[0].port;
    assert!(
        text.contains(&format!("127.0.0.1:{} io=yes sql=yes", port("node1"))),
        "{text}"
    );
    assert!(
        text.contains(&format!("127.0.0.1:{} io=yes sql=no", port("node2"))),
        "{text}"
    );
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

/// A sandbox of two nodes with one replica each (`node_config` lines as (server, line)),
/// a range directory over `app.acct` with shard 1 on node1 ([0, 1000)) and shard 2 on
/// node2, and the workload's tables.
fn grouped_fleet(node_config: &[(&str, &str)]) -> shardctl::sandbox::Sandbox {
    let mut builder = SandboxBuilder::for_tests(2).unwrap().replicas(1);
    for (server, line) in node_config {
        builder = builder.node_config(*server, *line);
    }
    let sb = builder.start().unwrap();
    FleetSetup::new()
        .nodes(&["node1", "node2"])
        .schema(&[
            "CREATE DATABASE app",
            "CREATE TABLE app.acct (id BIGINT PRIMARY KEY, v INT)",
        ])
        .function(
            Function::range("f")
                .table("app.acct", "id")
                .shards(&[("node1", "0"), ("node2", "1000")]),
        )
        .rows(
            "node1",
            &["INSERT INTO app_1.acct SELECT seq, 1 FROM app_1.seq_0_to_499"],
        )
        .workload("f")
        .build(&sb);
    sb
}

/// The replica of `node` in the sandbox's inventory, connected.
fn replica_of(sb: &shardctl::sandbox::Sandbox, node: &str) -> Server {
    let inv = inventory(sb);
    let spec = inv.node(node).unwrap().spec.replicas[0].clone();
    Server::connect_replica(&inv, node, &spec).unwrap()
}

/// Waits until node2's replica has applied what node2 logged so far, then checks that it
/// holds every write the workload had acknowledged to shard 1 (moved to node2) and as many
/// `acct` rows as node2: node2 and its replica, connected.
fn targets_replica_holds_shard_1(
    sb: &shardctl::sandbox::Sandbox,
    inv: &shardctl::config::Inventory,
    report: &shardctl::workload::Report,
) -> (Server, Server) {
    let mut target = connect(sb, "node2");
    let pos = target.coordinates().unwrap().position;
    let address = inv.node("node2").unwrap().address();
    let mut target_replica = replica_of(sb, "node2");
    target_replica
        .wait_applied_from(&address, &pos, Duration::from_secs(120))
        .unwrap();
    let on_replica: std::collections::HashSet<u64> = target_replica
        .rows(&Stmt::text(format!(
            "SELECT seq FROM app_1.{}",
            shardctl::workload::TABLE
        )))
        .unwrap()
        .into_iter()
        .map(mysql::from_row::<u64>)
        .collect();
    let moved: Vec<_> = report.acks.iter().filter(|a| a.shard == 1).collect();
    assert!(
        moved.len() > 100,
        "the workload wrote {} to shard 1",
        moved.len()
    );
    let lost: Vec<u64> = moved
        .iter()
        .filter(|a| !on_replica.contains(&a.seq))
        .map(|a| a.seq)
        .collect();
    assert!(
        lost.is_empty(),
        "{} acknowledged writes missing on node2's replica: {:?}",
        lost.len(),
        &lost[..lost.len().min(5)]
    );
    assert_eq!(
        count(&mut target_replica, "SELECT COUNT(*) FROM app_1.acct"),
        count(&mut target, "SELECT COUNT(*) FROM app_1.acct")
    );
    (target, target_replica)
}

fn has_schema(server: &mut Server, schema: &str) -> bool {
    server
        .schema_exists(&shardctl::ident::Ident::new("schema", schema).unwrap())
        .unwrap()
}

#[test]
fn a_target_whose_replicas_would_miss_the_channels_rows_is_refused_before_any_change() {
    let sb = grouped_fleet(&[("node2", "log-slave-updates=OFF")]);
    let inv = inventory(&sb);
    let replica = sb.replicas_of("node2")[0].port;
    for (method, wanted) in [
        (
            "native",
            "log_slave_updates (log_replica_updates) is off there",
        ),
        (
            "physical",
            "log_slave_updates (log_replica_updates) is off there",
        ),
    ] {
        let out = shardctl()
            .arg("--config")
            .arg(sb.inventory_path())
            .args(["move", "--shard", "1", "--to", "node2", "--method", method])
            .assert()
            .code(5)
            .get_output()
            .clone();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(stderr.lines().count(), 1, "{method}: {stderr}");
        assert!(
            stderr.contains(&format!(
                "the target node2 has replicas (127.0.0.1:{replica}): {wanted}"
            )),
            "{method}: {stderr}"
        );
    }
    // Nothing changed: no operation journaled, no copy, no channel on the target.
    // A revert window from a source with replicas (the other way, node2's log_slave_updates
    // off does not matter there: node1 is the target).
    let out = shardctl()
        .arg("--config")
        .arg(sb.inventory_path())
        .args([
            "move",
            "--shard",
            "2",
            "--to",
            "node1",
            "--revert-window",
            "1m",
        ])
        .assert()
        .code(5)
        .get_output()
        .clone();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "the source node2 has replicas (127.0.0.1:{replica}): a revert window keeps the old copy current"
        )),
        "{stderr}"
    );
    assert!(common::newest_op(&inv).is_none());
    let mut n2 = connect(&sb, "node2");
    assert!(!has_schema(&mut n2, "app_1"));
    assert!(n2.channels().unwrap().is_empty());
    // A replica that does not replicate is refused too (node1's, once stopped), with the
    // same move the other way.
    let mut r1 = replica_of(&sb, "node1");
    r1.exec(&Stmt::text("STOP SLAVE")).unwrap();
    let out = shardctl()
        .arg("--config")
        .arg(sb.inventory_path())
        .args(["move", "--shard", "2", "--to", "node1"])
        .assert()
        .code(5)
        .get_output()
        .clone();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("the target node1 has replicas")
            && stderr.contains("does not replicate from it now (receiver No, applier stopped)"),
        "{stderr}"
    );
    assert!(common::newest_op(&inv).is_none());
}

#[test]
fn a_move_reaches_the_targets_replica_whole_and_leaves_the_sources_replica_after_the_flip() {
    // The source's replica applies DDL as written (MariaDB's default, IDEMPOTENT, would
    // turn the copy's CREATE TABLE into CREATE OR REPLACE and hide a stale old copy).
    let sb = grouped_fleet(&[("node1r1", "slave-ddl-exec-mode=STRICT")]);
    let inv = inventory(&sb);
    let dir = tempfile::tempdir().unwrap();
    // The dry run shows the drop on the source's replica, unlogged there.
    let out = shardctl()
        .arg("--config")
        .arg(sb.inventory_path())
        .args(["move", "--shard", "1", "--to", "node2", "--dry-run"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let plan = String::from_utf8_lossy(&out);
    let source_replica_port = sb.replicas_of("node1")[0].port;
    assert!(
        plan.contains("drop-replica-copies")
            && plan.contains(&format!("node1 replica 127.0.0.1:{source_replica_port}"))
            && plan.contains("DROP DATABASE IF EXISTS `app_1`"),
        "{plan}"
    );
    let running = shardctl::workload::spawn(
        inv.clone(),
        shardctl::workload::Options {
            rate: 300,
            ..shardctl::workload::Options::new("f")
        },
    )
    .unwrap();
    std::thread::sleep(Duration::from_millis(800));
    let mut child = common::spawn_shardctl(
        &sb.inventory_path(),
        &["move", "--shard", "1", "--to", "node2"],
        Some("pause=3@before:flip"),
        dir.path(),
        "move",
    );
    // Until the flip the source's replica keeps serving the old copy.
    let deadline = Instant::now() + Duration::from_secs(300);
    while !std::fs::read_to_string(dir.path().join("move.err"))
        .unwrap_or_default()
        .contains("fault point before:flip")
    {
        assert!(Instant::now() < deadline, "the move never reached the flip");
        assert!(child.try_wait().unwrap().is_none(), "the move ended early");
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut source_replica = replica_of(&sb, "node1");
    assert!(has_schema(&mut source_replica, "app_1"));
    let status = common::wait_exit(&mut child, Duration::from_secs(300));
    std::thread::sleep(Duration::from_millis(800));
    let mut report = running.stop().unwrap();
    assert!(
        status.success(),
        "{}",
        std::fs::read_to_string(dir.path().join("move.err")).unwrap()
    );
    let check = report.check(&inv, "f").unwrap();
    assert!(check.missing.is_empty(), "{} lost", check.missing.len());
    // After it, the old copy is gone from the source's replica too.
    assert!(!has_schema(&mut source_replica, "app_1"));
    // The target's replica holds every acknowledged write of the moved shard.
    targets_replica_holds_shard_1(&sb, &inv, &report);
    // The shard moved back: the source's replica takes the new copy (with the old one
    // left behind, it stopped at the copy's CREATE with 1050).
    shardctl()
        .arg("--config")
        .arg(sb.inventory_path())
        .args(["move", "--shard", "1", "--to", "node1"])
        .assert()
        .success();
    let mut n1 = connect(&sb, "node1");
    let pos = n1.coordinates().unwrap().position;
    source_replica
        .wait_applied_from(
            &inv.node("node1").unwrap().address(),
            &pos,
            Duration::from_secs(120),
        )
        .unwrap();
    assert_eq!(
        count(&mut source_replica, "SELECT COUNT(*) FROM app_1.acct"),
        count(&mut n1, "SELECT COUNT(*) FROM app_1.acct")
    );
}

#[test]
fn prune_deletes_reach_the_nodes_replicas() {
    let sb = grouped_fleet(&[]);
    let mut n1 = connect(&sb, "node1");
    // Rows of shard 2's range left in shard 1's copy (as a split leaves them).
    exec(
        &mut n1,
        &["INSERT INTO app_1.acct SELECT seq, 2 FROM app_1.seq_1000_to_1999"],
    );
    let address = inventory(&sb).node("node1").unwrap().address();
    let mut replica = replica_of(&sb, "node1");
    let pos = n1.coordinates().unwrap().position;
    replica
        .wait_applied_from(&address, &pos, Duration::from_secs(60))
        .unwrap();
    assert_eq!(count(&mut replica, "SELECT COUNT(*) FROM app_1.acct"), 1500);
    shardctl()
        .arg("--config")
        .arg(sb.inventory_path())
        .args(["prune", "--shard", "1", "--chunk-ms", "20"])
        .assert()
        .success();
    let pos = n1.coordinates().unwrap().position;
    replica
        .wait_applied_from(&address, &pos, Duration::from_secs(60))
        .unwrap();
    assert_eq!(count(&mut n1, "SELECT COUNT(*) FROM app_1.acct"), 500);
    assert_eq!(count(&mut replica, "SELECT COUNT(*) FROM app_1.acct"), 500);
}

/// The drop of the old copy on the source's replicas goes through no binary log, so a
/// replica entry that is in fact the target (a copy-paste slip in the inventory: a
/// writable server) is refused before anything changes; the drop itself checks the server
/// it reaches again (the target's server_id, read_only) in case the entry changes later.
#[test]
fn a_source_replica_entry_that_is_the_target_never_loses_the_shard() {
    let sb = grouped_fleet(&[]);
    let mut file = inventory(&sb).file;
    let (host, port) = {
        let n2 = inventory(&sb);
        let n2 = n2.node("node2").unwrap();
        (n2.host().to_string(), n2.port())
    };
    file.nodes
        .get_mut("node1")
        .unwrap()
        .replicas
        .push(ReplicaSpec::Server(shardctl::config::ReplicaServer {
            host: Some(host),
            port: Some(port),
            ..Default::default()
        }));
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("target_as_replica.yaml");
    std::fs::write(&config, serde_yaml::to_string(&file).unwrap()).unwrap();
    move_refused_before_any_change(&sb, &config, "is writable");
    assert_eq!(
        count(
            &mut connect(&sb, "node1"),
            "SELECT COUNT(*) FROM app_1.acct"
        ),
        500
    );
}

/// `move --shard 1 --to node2` with the inventory `config` is refused (exit 5, naming
/// `want`) before anything is journaled, and node2 gets no copy.
fn move_refused_before_any_change(
    sb: &shardctl::sandbox::Sandbox,
    config: &std::path::Path,
    want: &str,
) {
    let out = shardctl()
        .arg("--config")
        .arg(config)
        .args(["move", "--shard", "1", "--to", "node2"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(5), "{said}");
    assert!(said.contains(want), "{said}");
    assert!(
        common::newest_op(&inventory(sb)).is_none(),
        "nothing journaled"
    );
    assert!(!has_schema(&mut connect(sb, "node2"), "app_1"));
}

/// A copy dropped on the target alone (an abort drops it unlogged) stays on the target's
/// replicas; the next copy's logged CREATEs would stop them. The preflight refuses it,
/// naming the replica and the schema, before anything changes.
#[test]
fn a_stale_copy_on_a_targets_replica_is_refused_before_any_change() {
    let sb = grouped_fleet(&[]);
    let mut replica = replica_of(&sb, "node2");
    exec_unlogged(&mut replica, &["CREATE DATABASE app_1"]);
    move_refused_before_any_change(&sb, &sb.inventory_path(), "already has app_1");
}

/// A source replica that could not lose the old copy after the flip (here: it stopped
/// replicating from the source) is refused before anything changes, not after the flip.
#[test]
fn a_source_replica_that_cannot_lose_the_old_copy_is_refused_before_any_change() {
    let sb = grouped_fleet(&[]);
    let mut replica = replica_of(&sb, "node1");
    exec(&mut replica, &["STOP SLAVE", "RESET SLAVE ALL"]);
    move_refused_before_any_change(&sb, &sb.inventory_path(), "could not lose the old copy");
}

/// The physical copy imports the same prepared backup into the target and into its
/// replica, unlogged on each, so the replica holds the shard at the backup's point and
/// the channel's rows reach it through the target's binary log: every acknowledged write
/// of a move under the workload is on the target's replica afterwards, and the replica
/// replicates on without an error (a logged import stopped it; before, it was refused).
#[test]
fn the_targets_replica_holds_every_acknowledged_write_of_a_physical_move_under_the_workload() {
    let sb = grouped_fleet(&[]);
    let inv = inventory(&sb);
    // A table with a FULLTEXT index goes along (imported, then rebuilt on each server).
    exec(
        &mut connect(&sb, "node1"),
        &[
            "CREATE TABLE app_1.notes (id INT PRIMARY KEY, body TEXT, FULLTEXT KEY body (body))",
            "INSERT INTO app_1.notes VALUES (1, 'an epic drama'), (2, 'a quiet comedy')",
        ],
    );
    // The dry run shows the import on the target's replica, unlogged there.
    let out = shardctl()
        .arg("--config")
        .arg(sb.inventory_path())
        .args([
            "move",
            "--shard",
            "1",
            "--to",
            "node2",
            "--method",
            "physical",
            "--dry-run",
        ])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let plan = String::from_utf8_lossy(&out);
    let target_replica_port = sb.replicas_of("node2")[0].port;
    assert!(
        plan.contains("import-on-replica")
            && plan.contains(&format!("node2 replica 127.0.0.1:{target_replica_port}"))
            && plan.contains("with sql_log_bin = 0 there")
            && plan.contains("every statement of the import runs with sql_log_bin = 0"),
        "{plan}"
    );
    let running = shardctl::workload::spawn(
        inv.clone(),
        shardctl::workload::Options {
            rate: 300,
            ..shardctl::workload::Options::new("f")
        },
    )
    .unwrap();
    std::thread::sleep(Duration::from_millis(800));
    let out = shardctl()
        .arg("--config")
        .arg(sb.inventory_path())
        .args([
            "move", "--shard", "1", "--to", "node2", "--method", "physical",
        ])
        .timeout(Duration::from_secs(600))
        .output()
        .unwrap();
    std::thread::sleep(Duration::from_millis(800));
    let mut report = running.stop().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let check = report.check(&inv, "f").unwrap();
    assert!(check.missing.is_empty(), "{} lost", check.missing.len());
    // The replica's import is journaled, intent and done, after the copy.
    let op = common::newest_op(&inv).unwrap();
    let import = op
        .last_effect("import-on-replica")
        .unwrap_or_else(|| panic!("no import-on-replica in {op:?}"));
    let replica_port = sb.replicas_of("node2")[0].port;
    assert_eq!(
        import.detail["replica"],
        format!("127.0.0.1:{replica_port}"),
        "{import:?}"
    );
    assert_eq!(import.state.as_sql(), "done", "{import:?}");
    assert!(import.seq > op.last_effect("copy").unwrap().seq);
    let (mut target, mut target_replica) = targets_replica_holds_shard_1(&sb, &inv, &report);
    let address = inv.node("node2").unwrap().address();
    let search = "SELECT id FROM app_1.notes WHERE MATCH(body) AGAINST ('drama')";
    assert_eq!(count(&mut target, search), 1);
    assert_eq!(count(&mut target_replica, search), 1);
    // The replica replicates on from the target, both threads running, no error.
    let channel = target_replica
        .channels()
        .unwrap()
        .into_iter()
        .find(|c| c.source == address)
        .expect("node2's replica replicates from node2");
    assert_eq!(channel.io_running, "Yes", "{channel:?}");
    assert!(channel.sql_running, "{channel:?}");
    assert!(
        channel.last_io_error.is_empty() && channel.last_sql_error.is_empty(),
        "{channel:?}"
    );
    // A write after the move reaches it too: its applier did not stop at anything.
    exec(&mut target, &["INSERT INTO app_1.acct VALUES (999, 7)"]);
    let pos = target.coordinates().unwrap().position;
    target_replica
        .wait_applied_from(&address, &pos, Duration::from_secs(60))
        .unwrap();
    assert_eq!(
        count(
            &mut target_replica,
            "SELECT v FROM app_1.acct WHERE id = 999"
        ),
        7
    );
    // No staging directory is left beside either datadir.
    assert_eq!(
        staging_left(&mut target, &mut target_replica),
        Vec::<String>::new()
    );
}

/// The staging directories a physical copy onto node2 left beside node2's and its
/// replica's datadirs.
fn staging_left(target: &mut Server, replica: &mut Server) -> Vec<String> {
    let mut left = Vec::new();
    for server in [target, replica] {
        let datadir = server
            .first::<String>(&Stmt::text("SELECT @@datadir"))
            .unwrap()
            .unwrap();
        let dir = std::path::Path::new(&datadir);
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        left.extend(
            std::fs::read_dir(dir.parent().unwrap())
                .unwrap()
                .filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().to_string())
                .filter(|n| n.starts_with(&format!("{name}.shardctl-import"))),
        );
    }
    left
}

/// A physical move that dies around the import on the target's replica (before it: the
/// prepared backup staged beside the replica's datadir; after it, not yet journaled: the
/// replica holds its unlogged copy) is rolled back whole by `abort`: the copy gone from the
/// target and its replica, nothing staged left, the replica replicating; the move then
/// goes through.
#[test]
fn an_aborted_physical_move_leaves_nothing_on_the_targets_replica() {
    let sb = grouped_fleet(&[]);
    let inv = inventory(&sb);
    let dir = tempfile::tempdir().unwrap();
    let address = inv.node("node2").unwrap().address();
    for point in ["before:import-on-replica", "done:import-on-replica"] {
        let mut child = common::spawn_shardctl(
            &sb.inventory_path(),
            &[
                "move", "--shard", "1", "--to", "node2", "--method", "physical",
            ],
            Some(&format!("crash@{point}")),
            dir.path(),
            "move",
        );
        let status = common::wait_exit(&mut child, Duration::from_secs(300));
        assert!(!status.success(), "{point}: the move did not crash");
        let mut target = connect(&sb, "node2");
        let mut replica = replica_of(&sb, "node2");
        if point.starts_with("done") {
            assert!(has_schema(&mut replica, "app_1"), "{point}");
        } else {
            assert!(
                !staging_left(&mut target, &mut replica).is_empty(),
                "{point}"
            );
        }
        let op = common::newest_op(&inv).unwrap().id.to_string();
        let out = shardctl()
            .arg("--config")
            .arg(sb.inventory_path())
            .args(["abort", &op])
            .timeout(Duration::from_secs(300))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{point}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!has_schema(&mut target, "app_1"), "{point}");
        assert!(!has_schema(&mut replica, "app_1"), "{point}");
        assert_eq!(
            staging_left(&mut target, &mut replica),
            Vec::<String>::new(),
            "{point}"
        );
        let channel = replica
            .channels()
            .unwrap()
            .into_iter()
            .find(|c| c.source == address)
            .unwrap();
        assert!(
            channel.io_running == "Yes" && channel.sql_running && channel.last_sql_error.is_empty(),
            "{point}: {channel:?}"
        );
    }
    shardctl()
        .arg("--config")
        .arg(sb.inventory_path())
        .args([
            "move", "--shard", "1", "--to", "node2", "--method", "physical",
        ])
        .timeout(Duration::from_secs(600))
        .assert()
        .success();
    let mut target = connect(&sb, "node2");
    let pos = target.coordinates().unwrap().position;
    let mut replica = replica_of(&sb, "node2");
    replica
        .wait_applied_from(&address, &pos, Duration::from_secs(120))
        .unwrap();
    assert_eq!(count(&mut replica, "SELECT COUNT(*) FROM app_1.acct"), 500);
}

/// The physical copy imports into each of the target's replicas itself; a replica whose
/// files it would place without an abort being able to clean them (an entry naming
/// another node of the inventory: an abort drops the copy only on replicas listed by
/// address) is refused by name before anything changes.
#[test]
fn a_physical_move_onto_a_replica_listed_as_a_node_is_refused_before_any_change() {
    let sb = grouped_fleet(&[]);
    let mut file = inventory(&sb).file;
    let replica_port = sb.replicas_of("node2")[0].port;
    let mut as_node = file.nodes["node2"].clone();
    as_node.port = Some(replica_port);
    as_node.replicas.clear();
    file.nodes.insert("node2r1".into(), as_node);
    file.nodes.get_mut("node2").unwrap().replicas = vec![ReplicaSpec::Node("node2r1".into())];
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("replica_as_node.yaml");
    std::fs::write(&config, serde_yaml::to_string(&file).unwrap()).unwrap();
    let out = shardctl()
        .arg("--config")
        .arg(&config)
        .args([
            "move", "--shard", "1", "--to", "node2", "--method", "physical",
        ])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(5), "{said}");
    assert_eq!(said.lines().count(), 1, "{said}");
    assert!(
        said.contains("the target node2 has replicas (node2r1)")
            && said.contains("replica node2r1 is listed as a node of the inventory"),
        "{said}"
    );
    assert!(
        common::newest_op(&inventory(&sb)).is_none(),
        "nothing journaled"
    );
    assert!(!has_schema(&mut connect(&sb, "node2"), "app_1"));
    assert!(!has_schema(&mut replica_of(&sb, "node2"), "app_1"));
}
