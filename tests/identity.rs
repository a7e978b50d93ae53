//! Server identity mid-move, on real servers: the source's binary log reset (`RESET
//! MASTER`) or its primary replaced behind the same address after the verification and
//! before the fence. The move must stop before any flip, naming what changed; every write
//! acknowledged on the shard is then where the directory says; `resume` refuses the same
//! way until `abort`, which leaves the shard on the source; a new move carries everything.
//!
//! The inventory reaches node2 through a TCP forwarder in this process (as a virtual
//! address reaches a primary), so the test can put another server behind node2's address
//! the way a failover does: existing connections cut, new ones reaching the new primary.

mod common;

use common::{range_directory, serial, spawn_shardctl, wait_exit, write_file};
use shardctl::config::Inventory;
use shardctl::directory::{Directory, Key, Router};
use shardctl::sandbox::{Sandbox, SandboxBuilder};
use shardctl::server::{ConnectSpec, Server, Stmt};
use std::io::Read;
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const REFUSED: i32 = 5;
/// Rows of shard 1 before the move.
const ROWS: i64 = 2000;

// The tests hold `serial()`: one test at a time: each starts its own servers.

/// A TCP forwarder: every connection accepted is carried to the backend port of the
/// moment; [`Forwarder::switch`] changes it and cuts every connection carried so far.
struct Forwarder {
    port: u16,
    backend: Arc<AtomicU16>,
    streams: Arc<Mutex<Vec<TcpStream>>>,
}

impl Forwarder {
    fn start(backend: u16) -> Forwarder {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let to = Arc::new(AtomicU16::new(backend));
        let streams: Arc<Mutex<Vec<TcpStream>>> = Arc::default();
        let (to2, streams2) = (Arc::clone(&to), Arc::clone(&streams));
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { continue };
                let Ok(server) = TcpStream::connect(("127.0.0.1", to2.load(Ordering::SeqCst)))
                else {
                    let _ = client.shutdown(Shutdown::Both);
                    continue;
                };
                {
                    let mut all = streams2.lock().unwrap();
                    all.push(client.try_clone().unwrap());
                    all.push(server.try_clone().unwrap());
                }
                for (mut from, mut into) in [
                    (client.try_clone().unwrap(), server.try_clone().unwrap()),
                    (server, client),
                ] {
                    std::thread::spawn(move || {
                        let _ = std::io::copy(&mut from, &mut into);
                        let _ = into.shutdown(Shutdown::Both);
                        let _ = from.shutdown(Shutdown::Both);
                    });
                }
            }
        });
        Forwarder {
            port,
            backend: to,
            streams,
        }
    }

    /// From now on new connections reach `backend`; those open so far keep their server
    /// (a DNS name moved while the old server stays up).
    fn redirect(&self, backend: u16) {
        self.backend.store(backend, Ordering::SeqCst);
    }

    /// From now on connections reach `backend`; those open so far are cut.
    fn switch(&self, backend: u16) {
        self.backend.store(backend, Ordering::SeqCst);
        for s in self.streams.lock().unwrap().drain(..) {
            let _ = s.shutdown(Shutdown::Both);
        }
    }
}

struct Fleet {
    sandbox: Sandbox,
    forwarder: Forwarder,
    /// The inventory naming node2 by the forwarder's address.
    inventory: PathBuf,
}

impl Fleet {
    /// `nodes` sandbox nodes; node1 holds the directory, shard 1 ([0, ∞) of function `f`
    /// over `app.t`) lives on node2 with ROWS rows; node2 is reached through the forwarder.
    /// `before_shard` runs once node2 is up and before the shard's schema exists on it.
    fn start(nodes: usize, before_shard: impl FnOnce(&Sandbox)) -> Fleet {
        Self::start_with(SandboxBuilder::for_tests(nodes).unwrap(), before_shard)
    }

    /// [`Fleet::start`] on the sandbox `builder` makes.
    fn start_with(builder: SandboxBuilder, before_shard: impl FnOnce(&Sandbox)) -> Fleet {
        let sandbox = builder.start().unwrap();
        let node2_port = sandbox.node("node2").unwrap().port;
        let forwarder = Forwarder::start(node2_port);
        let mut inv = Inventory::load(&sandbox.inventory_path()).unwrap();
        inv.file.nodes.get_mut("node2").unwrap().port = Some(forwarder.port);
        let text = serde_yaml::to_string(&inv.file).unwrap();
        let inventory = write_file(sandbox.dir(), "identity.yaml", &text);
        before_shard(&sandbox);
        let fleet = Fleet {
            sandbox,
            forwarder,
            inventory,
        };
        let mut n1 = fleet.admin("node1");
        for sql in [
            "CREATE DATABASE app",
            "CREATE TABLE app.t (id BIGINT PRIMARY KEY, v VARCHAR(40) NOT NULL)",
        ] {
            n1.exec(&Stmt::text(sql)).unwrap();
        }
        range_directory(
            &fleet.inventory,
            &["node1", "node2", "node3"],
            &[("app.t", "id")],
            &[("node2", "0")],
        );
        let mut n2 = fleet.admin("node2");
        n2.exec(&Stmt::text(format!(
            "INSERT INTO app_1.t SELECT seq, MD5(seq) FROM app_1.seq_1_to_{ROWS}"
        )))
        .unwrap();
        // A few files into its binary log, as any server that has run a while.
        for _ in 0..3 {
            n2.exec(&Stmt::text("FLUSH BINARY LOGS")).unwrap();
        }
        n2.exec(&Stmt::text(
            "INSERT INTO app_1.t SELECT seq, MD5(seq) FROM app_1.seq_5000000_to_5000100",
        ))
        .unwrap();
        fleet
    }

    fn inv(&self) -> Inventory {
        Inventory::load(&self.inventory).unwrap()
    }

    /// The admin account on `node`, by the inventory's address.
    fn admin(&self, node: &str) -> Server {
        Server::connect_node(&self.inv(), node).unwrap()
    }

    /// The admin account on a sandbox node's own port (not through the forwarder).
    fn direct(&self, node: &str) -> Server {
        let inv = Inventory::load(&self.sandbox.inventory_path()).unwrap();
        Server::connect_node(&inv, node).unwrap()
    }

    /// The application account on `node`, by the inventory's address.
    fn application(&self, node: &str) -> Server {
        let inv = self.inv();
        let mut spec = ConnectSpec::for_node(&inv, inv.node(node).unwrap()).unwrap();
        spec.credentials = inv.application_credentials(node).unwrap();
        Server::connect(&spec).unwrap()
    }

    fn cli(&self, args: &[&str]) -> std::process::Output {
        common::shardctl()
            .arg("--config")
            .arg(&self.inventory)
            .args(args)
            .output()
            .unwrap()
    }

    /// `shardctl move --shard 1 --to node3` held `secs` at `after:verify`; returns once it
    /// is there, with the path of its standard error.
    fn move_paused_after_verify(&self, secs: u64) -> (std::process::Child, PathBuf) {
        let dir = self.sandbox.dir();
        let child = spawn_shardctl(
            &self.inventory,
            &["move", "--shard", "1", "--to", "node3"],
            Some(&format!("pause={secs}@after:verify")),
            dir,
            "identity-move",
        );
        let err = dir.join("identity-move.err");
        let until = Instant::now() + Duration::from_secs(180);
        while !read(&err).contains("fault point after:verify: pausing") {
            assert!(
                Instant::now() < until,
                "the move never reached after:verify:\n{}",
                read(&err)
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        (child, err)
    }

    /// The node the directory places shard 1 on.
    fn placed_on(&self) -> String {
        let r = Router::connect(&self.inv()).unwrap();
        r.shard_for_function("f", &Key::Int(1))
            .unwrap()
            .node
            .clone()
    }

    /// Operation `op`'s state in the journal.
    fn op_state(&self, op: u64) -> String {
        let mut d = Directory::open(&self.inv()).unwrap();
        d.operation(op).unwrap().state.as_sql().to_string()
    }
}

fn read(path: &Path) -> String {
    let mut text = String::new();
    if let Ok(mut f) = std::fs::File::open(path) {
        let _ = f.read_to_string(&mut text);
    }
    text
}

fn count(server: &mut Server, sql: &str) -> i64 {
    server.first::<i64>(&Stmt::text(sql)).unwrap().unwrap()
}

/// Writes rows `ids` into shard 1 as the application, each acknowledged.
fn write_rows(server: &mut Server, ids: std::ops::RangeInclusive<i64>) {
    for id in ids {
        server
            .exec(&Stmt::with(
                "INSERT INTO app_1.t (id, v) VALUES (?, 'after')",
                vec![id.into()],
            ))
            .unwrap();
    }
}

/// How many of rows `ids` of shard 1 `server` holds.
fn held(server: &mut Server, ids: &std::ops::RangeInclusive<i64>) -> i64 {
    count(
        server,
        &format!(
            "SELECT COUNT(*) FROM app_1.t WHERE id BETWEEN {} AND {}",
            ids.start(),
            ids.end()
        ),
    )
}

/// Runs the move held after verify, does `meanwhile`, and checks the outcome: refused
/// (exit 5) with a line holding `named`, no flip, the fence lifted, the acknowledged rows
/// on the node the directory names; `resume` refuses the same way; `abort` cleans up; a
/// new move carries every row. `meanwhile` returns the rows it wrote (acknowledged).
fn refused_then_aborted(
    fleet: &Fleet,
    named: &str,
    meanwhile: impl FnOnce(&Fleet) -> std::ops::RangeInclusive<i64>,
) {
    let (mut child, err) = fleet.move_paused_after_verify(8);
    let written = meanwhile(fleet);
    let status = wait_exit(&mut child, Duration::from_secs(180));
    let mut stderr = read(&err);
    let mut code = status.code();
    let op = common::newest_op(&fleet.inv()).unwrap().id;
    let op_s = op.to_string();
    if code != Some(REFUSED) && fleet.placed_on() == "node2" {
        // Failed some other way (its connections cut by a failover): an operator resumes.
        let out = fleet.cli(&["resume", &op_s]);
        code = out.status.code();
        stderr.push_str(&String::from_utf8_lossy(&out.stderr));
    }
    // Every acknowledged write is where the directory says the shard is.
    let n = written.end() - written.start() + 1;
    let placed = fleet.placed_on();
    let mut app = fleet.application(&placed);
    assert_eq!(
        held(&mut app, &written),
        n,
        "acknowledged writes lost: the shard is on {placed}; the move:\n{stderr}"
    );
    assert_eq!(code, Some(REFUSED), "the move:\n{stderr}");
    assert!(stderr.contains(named), "the move's message:\n{stderr}");
    assert!(
        stderr.contains("node2"),
        "the message names the node:\n{stderr}"
    );
    // No flip: the shard is where it was, and writable.
    assert_eq!(placed, "node2");
    write_rows(&mut app, 7_000_000..=7_000_000);

    // resume refuses with the same line, and changes nothing.
    let out = fleet.cli(&["resume", &op_s]);
    let text = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(REFUSED), "resume:\n{text}");
    assert!(text.contains(named), "resume's message:\n{text}");
    assert_eq!(fleet.placed_on(), "node2");

    // abort leaves the shard on the source and removes the target's copy and channel.
    let out = fleet.cli(&["abort", &op_s]);
    assert!(
        out.status.success(),
        "abort: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(fleet.op_state(op), "aborted");
    assert_eq!(fleet.placed_on(), "node2");
    let mut n3 = fleet.direct("node3");
    assert_eq!(
        count(
            &mut n3,
            "SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = 'app_1'"
        ),
        0
    );
    let channels = n3.channels().unwrap();
    assert!(channels.is_empty(), "{channels:?}");
    let mut app = fleet.application("node2");
    assert_eq!(held(&mut app, &written), n);

    // Moved again from scratch, everything arrives.
    let out = fleet.cli(&["move", "--shard", "1", "--to", "node3"]);
    assert!(
        out.status.success(),
        "the second move: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(fleet.placed_on(), "node3");
    let mut app = fleet.application("node3");
    assert_eq!(held(&mut app, &written), n);
    assert_eq!(held(&mut app, &(7_000_000..=7_000_000)), 1);
}

#[test]
fn a_binary_log_reset_on_the_source_after_verification_stops_the_move_before_the_flip() {
    let _s = serial();
    let fleet = Fleet::start(3, |_| {});
    refused_then_aborted(&fleet, "RESET MASTER", |fleet| {
        let mut n2 = fleet.admin("node2");
        n2.exec(&Stmt::text("RESET MASTER")).unwrap();
        let mut app = fleet.application("node2");
        let ids = 6_000_000..=6_000_049;
        write_rows(&mut app, ids.clone());
        ids
    });
}

#[test]
fn a_new_primary_behind_the_sources_address_stops_the_move_before_the_flip() {
    let _s = serial();
    // node4 replicates node2 from before the shard's schema exists: it is node2's replica,
    // promoted mid-move.
    let fleet = Fleet::start(4, |sb| {
        let inv = Inventory::load(&sb.inventory_path()).unwrap();
        let mut n2 = Server::connect_node(&inv, "node2").unwrap();
        let at = n2.coordinates().unwrap().position;
        let creds = inv.replication_credentials().unwrap();
        let mut n4 = Server::connect_node(&inv, "node4").unwrap();
        n4.exec(&Stmt::text(format!(
            "CHANGE MASTER 'failover' TO MASTER_HOST = '127.0.0.1', MASTER_PORT = {}, MASTER_USER = '{}', MASTER_PASSWORD = '{}', MASTER_LOG_FILE = '{}', MASTER_LOG_POS = {}, MASTER_CONNECT_RETRY = 1",
            sb.node("node2").unwrap().port,
            creds.user,
            creds.password.expose(),
            at.file,
            at.pos
        )))
        .unwrap();
        n4.exec(&Stmt::text("START SLAVE 'failover'")).unwrap();
    });
    refused_then_aborted(&fleet, "server_id changed from", |fleet| {
        // The replica has everything of node2 so far, then is promoted: its channel
        // stopped, node2's address now reaching it, node2's connections cut.
        let mut n2 = fleet.direct("node2");
        let at = n2.coordinates().unwrap().position;
        let mut n4 = fleet.direct("node4");
        n4.exec(&Stmt::with(
            "SELECT MASTER_POS_WAIT(?, ?, 60, 'failover')",
            vec![at.file.as_str().into(), at.pos.into()],
        ))
        .unwrap();
        n4.exec(&Stmt::text("STOP SLAVE 'failover'")).unwrap();
        n4.exec(&Stmt::text("RESET SLAVE 'failover' ALL")).unwrap();
        fleet
            .forwarder
            .switch(fleet.sandbox.node("node4").unwrap().port);
        // Writes on the new primary, by the shard's address.
        let mut app = fleet.application("node2");
        let ids = 6_000_000..=6_000_049;
        write_rows(&mut app, ids.clone());
        assert_eq!(held(&mut n4, &ids), 50, "the writes reach the new primary");
        ids
    });
}

#[test]
fn a_promoted_gtid_replica_behind_the_sources_address_stops_the_move_before_the_flip() {
    let _s = serial();
    // node2's own replica (the sandbox's: GTID, log_slave_updates, its domain), holding
    // everything node2 logged, promoted mid-move.
    let fleet = Fleet::start_with(SandboxBuilder::for_tests(3).unwrap().replicas(1), |_| {});
    refused_then_aborted(&fleet, "server_id changed from", |fleet| {
        let inv = Inventory::load(&fleet.sandbox.inventory_path()).unwrap();
        let spec = inv.node("node2").unwrap().spec.replicas[0].clone();
        let mut replica = Server::connect_replica(&inv, "node2", &spec).unwrap();
        let mut n2 = fleet.direct("node2");
        let gtid = n2.coordinates().unwrap().gtid;
        replica
            .wait_for_gtid(&gtid, Duration::from_secs(60))
            .unwrap();
        for sql in ["STOP SLAVE", "RESET SLAVE ALL", "SET GLOBAL read_only = 0"] {
            replica.exec(&Stmt::text(sql)).unwrap();
        }
        fleet
            .forwarder
            .switch(fleet.sandbox.replicas_of("node2")[0].port);
        // The operator's inventory after the failover: node2 has no replica left.
        let mut after = fleet.inv();
        after.file.nodes.get_mut("node2").unwrap().replicas.clear();
        write_file(
            fleet.sandbox.dir(),
            "identity.yaml",
            &serde_yaml::to_string(&after.file).unwrap(),
        );
        let mut app = fleet.application("node2");
        let ids = 6_000_000..=6_000_049;
        write_rows(&mut app, ids.clone());
        assert_eq!(
            held(&mut replica, &ids),
            50,
            "the writes reach the new primary"
        );
        ids
    });
}

/// A read-only-fenced move whose source address comes to reach another server while the
/// old one stays up (a DNS name moved to node2's replica, still read-only: a misrouted
/// address or a failover half done) is refused before its flip, and lifting its fence sends
/// nothing to the server now behind the address: the replica stays read-only. (Before, the
/// start time read over the old, still open connection matched and `read_only = OFF` went to
/// the replica over a new one.)
#[test]
fn a_read_only_fence_is_never_lifted_on_a_server_that_replaced_the_source() {
    let _s = serial();
    let fleet = Fleet::start_with(SandboxBuilder::for_tests(3).unwrap().replicas(1), |_| {});
    let dir = fleet.sandbox.dir();
    let mut child = spawn_shardctl(
        &fleet.inventory,
        &[
            "move",
            "--shard",
            "1",
            "--to",
            "node3",
            "--fence",
            "read-only",
        ],
        Some("pause=6@after:lock"),
        dir,
        "ro-move",
    );
    let err = dir.join("ro-move.err");
    let until = Instant::now() + Duration::from_secs(180);
    while !read(&err).contains("fault point after:lock: pausing") {
        assert!(
            Instant::now() < until,
            "the move never reached after:lock:\n{}",
            read(&err)
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(
        count(&mut fleet.direct("node2"), "SELECT @@GLOBAL.read_only"),
        1
    );
    fleet
        .forwarder
        .redirect(fleet.sandbox.replicas_of("node2")[0].port);
    let status = wait_exit(&mut child, Duration::from_secs(180));
    assert!(!status.success(), "{}", read(&err));
    let inv = Inventory::load(&fleet.sandbox.inventory_path()).unwrap();
    let spec = inv.node("node2").unwrap().spec.replicas[0].clone();
    let mut replica = Server::connect_replica(&inv, "node2", &spec).unwrap();
    assert_eq!(
        count(&mut replica, "SELECT @@GLOBAL.read_only"),
        1,
        "the replica behind the source's address was made writable: {}",
        read(&err)
    );
    assert_eq!(fleet.placed_on(), "node2", "no flip");
}
