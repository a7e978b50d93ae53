//! The fleet commands' cost does not grow with the fleet in round trips (issue 30, item 3):
//! `status` asks the directory and each node the same number of statements at 5 shards and
//! 2 running moves and at 50 shards and 20 moves, listing the journal (`ops`) the same at 2
//! operations and at 20, `rebalance plan --sizes exact` (each shard table's statistics
//! refreshed first) the same at 5 shards and at 50, and `query` opens
//! at most `CONNECTIONS_PER_NODE` connections to a node whatever its number of shards.
//! Counted by the servers themselves (`Questions`, `Connections`). `query`'s connections
//! are read-only sessions: a write slipped into a query is refused on every shard.

mod common;

use shardctl::config::Inventory;
use shardctl::directory::{Changed, Directory, KeyType, ShardingType, TablePlacement};
use shardctl::ident::Ident;
use shardctl::rebalance::planner::Limits;
use shardctl::rebalance::{SizeSource, Weight};
use shardctl::sandbox::SandboxBuilder;
use shardctl::server::{Server, Stmt};
use std::time::Duration;

fn counter(s: &mut Server, name: &str) -> u64 {
    let row: Option<(String, String)> = s
        .first(&Stmt::text(format!("SHOW GLOBAL STATUS LIKE '{name}'")))
        .unwrap();
    row.unwrap().1.parse().unwrap()
}

/// Statements (and the COM_QUITs of closed connections) each of `admins` received while
/// `f` ran, less the second reading (the first counted itself before `f`).
fn statements(admins: &mut [Server], f: impl FnOnce()) -> Vec<u64> {
    let before: Vec<u64> = admins.iter_mut().map(|s| counter(s, "Questions")).collect();
    f();
    // A connection's COM_QUIT counts too, and the server may read it after the client has
    // gone on: let it arrive.
    std::thread::sleep(std::time::Duration::from_millis(300));
    admins
        .iter_mut()
        .zip(before)
        .map(|(s, b)| counter(s, "Questions") - b - 1)
        .collect()
}

/// Shards `from..=to` of function `func_id` on node2, with their schemas (`app_<id>.t`,
/// 3 rows each), as `shard add` would leave them.
fn add_shards(inv: &Inventory, dir: &mut Directory, func_id: u32, from: u32, to: u32) {
    let node = inv.node("node2").unwrap();
    let d = dir.schema().quoted();
    dir.change(|d_, version| {
        let s = d_.server();
        for id in from..=to {
            s.exec(&Stmt::with(
                format!("INSERT INTO {d}.locations (shard_id, func_id, node, host, port, state, version) VALUES (?, ?, 'node2', ?, ?, 'online', ?)"),
                vec![id.into(), func_id.into(), node.host().into(), node.port().into(), version.into()],
            ))?;
            s.exec(&Stmt::with(
                format!("INSERT INTO {d}.ranges (func_id, lower_bound, shard_id) VALUES (?, ?, ?)"),
                vec![func_id.into(), ((id as i64 - 1) * 100).into(), id.into()],
            ))?;
        }
        Ok(((), Changed::Everything))
    })
    .unwrap();
    let mut s = Server::connect_node(inv, "node2").unwrap();
    for id in from..=to {
        let base = (id as i64 - 1) * 100;
        common::exec(
            &mut s,
            &[
                &format!("CREATE DATABASE app_{id}"),
                &format!("CREATE TABLE app_{id}.t (id BIGINT PRIMARY KEY, v INT NOT NULL)"),
                &format!(
                    "INSERT INTO app_{id}.t VALUES ({base}, 1), ({}, 2), ({}, 3)",
                    base + 1,
                    base + 2
                ),
            ],
        );
    }
}

/// Moves in the journal, each with three steps, as `rebalance apply` leaves them while it
/// runs them (without an owner: nothing drives them; status and ops only read them).
fn add_operations(dir: &mut Directory, n: u32) {
    let d = dir.schema().quoted();
    let s = dir.server();
    for _ in 0..n {
        s.exec(&Stmt::text(format!(
            "INSERT INTO {d}.operations (kind, shard_id, source_node, target_node, state) VALUES ('move', 1, 'node2', 'node1', 'running')"
        )))
        .unwrap();
        for (step, name) in ["backup", "flip", "drop-source"].iter().enumerate() {
            s.exec(&Stmt::with(
                format!("INSERT INTO {d}.operation_steps (op_id, step_no, name, state) VALUES (LAST_INSERT_ID(), ?, ?, 'done')"),
                vec![(step as u32).into(), (*name).into()],
            ))
            .unwrap();
        }
    }
}

#[test]
fn status_ops_and_query_cost_the_same_round_trips_at_ten_times_the_shards() {
    // Small servers, as the fleet benchmark runs 41 of them (`sandbox up --buffer-pool 32`).
    let sb = SandboxBuilder::for_tests(2)
        .unwrap()
        .buffer_pool_mb(32)
        .start()
        .unwrap();
    let inv = Inventory::load(&sb.inventory_path()).unwrap();
    for n in ["node1", "node2"] {
        let mut s = Server::connect_node(&inv, n).unwrap();
        let pool = common::count(&mut s, "SELECT @@innodb_buffer_pool_size");
        let aria = common::count(&mut s, "SELECT @@aria_pagecache_buffer_size");
        assert_eq!((pool, aria), (32 << 20, 8 << 20), "{n}");
    }
    Directory::connect(&inv).unwrap().init().unwrap();
    let mut dir = Directory::open(&inv).unwrap();
    for n in ["node1", "node2"] {
        let node = inv.node(n).unwrap();
        dir.add_node(n, node.host(), node.port()).unwrap();
    }
    let func_id = dir
        .add_function(
            &Ident::new("function", "acct").unwrap(),
            ShardingType::Range,
            KeyType::Int,
        )
        .unwrap();
    dir.add_table(
        &Ident::new("schema", "app").unwrap(),
        &Ident::new("table", "t").unwrap(),
        &TablePlacement::Sharded {
            function: "acct".into(),
            column: Ident::new("column", "id").unwrap(),
        },
    )
    .unwrap();
    // node1 holds the directory (and answers status as a node too), node2 the shards.
    let mut admins = vec![
        Server::connect_node(&inv, "node1").unwrap(),
        Server::connect_node(&inv, "node2").unwrap(),
    ];
    let status = |admins: &mut [Server]| {
        statements(admins, || {
            let fleet = shardctl::status::gather_fleet(&inv, &[]).unwrap();
            assert!(fleet.errors.is_empty(), "{:?}", fleet.errors);
        })
    };
    // `rebalance plan --sizes exact`: every shard table's statistics refreshed on its node
    // first, then a plan by size (at most three moves off node2, which holds every shard).
    let plan = |admins: &mut [Server], shards: usize| {
        statements(admins, || {
            let (_, file) = shardctl::rebalance::plan_fleet_with(
                &inv,
                Weight::Size,
                None,
                SizeSource::Exact,
                &Limits {
                    threshold: 0.0,
                    max_moves: Some(3),
                },
                &[],
                &[],
                false,
            )
            .unwrap();
            assert_eq!(file.size_source, Some(SizeSource::Exact));
            assert!(!file.moves.is_empty(), "{shards} shards: {file:?}");
        })
    };
    let ops = |admins: &mut [Server], expected: usize| {
        statements(admins, || {
            let mut d = Directory::open(&inv).unwrap();
            assert_eq!(d.operations(None).unwrap().len(), expected);
        })
    };
    let query = |admins: &mut [Server], shards: u64| {
        let conns = counter(&mut admins[1], "Connections");
        let snap = Directory::open(&inv).unwrap().load().unwrap();
        let answer = shardctl::query::run(
            &inv,
            &snap,
            "acct",
            "SELECT COUNT(*) FROM {t}",
            Duration::from_secs(30),
            &Default::default(),
        )
        .unwrap();
        assert_eq!(answer.shards.len() as u64, shards);
        assert_eq!(
            answer.rows[0][0].as_deref(),
            Some(&*(3 * shards).to_string())
        );
        counter(&mut admins[1], "Connections") - conns
    };

    add_shards(&inv, &mut dir, func_id, 1, 5);
    add_operations(&mut dir, 2);
    let status_5 = status(&mut admins);
    let plan_5 = plan(&mut admins, 5);
    let ops_2 = ops(&mut admins, 2);
    let conns_5 = query(&mut admins, 5);

    add_shards(&inv, &mut dir, func_id, 6, 50);
    add_operations(&mut dir, 18);
    let status_50 = status(&mut admins);
    let plan_50 = plan(&mut admins, 50);
    let ops_20 = ops(&mut admins, 20);
    let conns_50 = query(&mut admins, 50);

    // The session is read-only: a write hidden in a function the query calls is refused
    // by the server, on every shard, and nothing is written.
    let mut node2 = Server::connect_node(&inv, "node2").unwrap();
    common::exec(
        &mut node2,
        &[
            "CREATE DATABASE fx",
            "CREATE TABLE fx.log (n INT)",
            "CREATE FUNCTION fx.w() RETURNS INT DETERMINISTIC MODIFIES SQL DATA BEGIN INSERT INTO fx.log VALUES (1); RETURN 1; END",
        ],
    );
    let snap = Directory::open(&inv).unwrap().load().unwrap();
    let err = shardctl::query::run(
        &inv,
        &snap,
        "acct",
        "SELECT fx.w() FROM {t}",
        Duration::from_secs(30),
        &Default::default(),
    )
    .unwrap_err();
    assert!(err.to_string().contains("READ ONLY"), "{err}");
    assert_eq!(common::count(&mut node2, "SELECT COUNT(*) FROM fx.log"), 0);

    assert_eq!(
        status_5, status_50,
        "status: statements on [directory, node2] at 5 shards and 2 moves, and at 50 and 20"
    );
    assert_eq!(
        plan_5, plan_50,
        "rebalance plan --sizes exact: statements on [directory, node2] at 5 shards and at 50"
    );
    assert_eq!(
        ops_2, ops_20,
        "ops: statements on the directory at 2 operations and at 20"
    );
    assert!(
        conns_5.max(conns_50) as usize <= shardctl::query::CONNECTIONS_PER_NODE,
        "query: connections to node2 at 5 shards {conns_5}, at 50 {conns_50}"
    );
}
