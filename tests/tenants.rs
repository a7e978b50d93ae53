//! The workload's tenant mode on real servers (issue 28 item 5): a few keys that hold many
//! rows take most of the writes, each write a new row under its key. A tenant moved by
//! `move-keys` while it is written (a list value; a narrow range at the top of a range
//! shard) under fresh and stale routers: every acknowledged write is found where the
//! directory says, none acknowledged by a shard not owning its key, the tenant wrote on both
//! sides of the move, and its rows are all on the receiver, as many as were acknowledged.

mod common;

use common::{connect, count, items_schema, serial, FleetSetup, Function, KeyKind, SharedFleet};
use shardctl::config::Inventory;
use shardctl::directory::Key;
use shardctl::sandbox::Sandbox;
use shardctl::workload;
use std::time::Duration;

static FLEET: SharedFleet = SharedFleet::new(3, set_up);

/// List function `t` over `ten`: shard 1 on node1 with tenants acme (100,000 rows), beta
/// and gamma, shard 2 on node2 with delta. Range function `r` over `rng`: shard 3 on node1
/// from 0, a row for each key below 999 and 20,000 for key 999 (a tenant at the top of its
/// range), shard 4 on node3 from 1000.
fn set_up(sb: &Sandbox) {
    let mut schema = items_schema("ten", KeyKind::String, false, false);
    schema.extend(items_schema("rng", KeyKind::Int, false, false));
    FleetSetup::new()
        .schema(&schema)
        .function(
            Function::list("t")
                .items("ten")
                .shards(&[("node1", "acme,beta,gamma"), ("node2", "delta")]),
        )
        .function(
            Function::range("r")
                .items("rng")
                .shards(&[("node1", "0"), ("node3", "1000")]),
        )
        .rows(
            "node1",
            &[
                "INSERT INTO ten_1.items SELECT 'acme', seq FROM ten_1.seq_1_to_100000",
                "INSERT INTO ten_1.items SELECT 'beta', seq FROM ten_1.seq_1_to_500",
                "INSERT INTO rng_3.items SELECT seq, 0 FROM rng_3.seq_0_to_998",
                "INSERT INTO rng_3.items SELECT 999, seq FROM rng_3.seq_1_to_20000",
            ],
        )
        .rows(
            "node2",
            &["INSERT INTO ten_2.items SELECT 'delta', seq FROM ten_2.seq_1_to_500"],
        )
        .build(sb);
}

fn inventory() -> Inventory {
    common::inventory(FLEET.sandbox())
}

/// Fresh and stale routers writing `function`, `tenant` taking four fifths of the writes.
fn tenant_workloads(function: &str, tenant: Key) -> Vec<(workload::Running, &'static str)> {
    [("fresh", false), ("stale", true)]
        .into_iter()
        .map(|(name, stale_router)| {
            let running = workload::spawn(
                inventory(),
                workload::Options {
                    rate: 200,
                    stale_router,
                    tenants: Some(workload::Tenants {
                        keys: vec![tenant.clone()],
                        share: 0.8,
                    }),
                    ..workload::Options::new(function)
                },
            )
            .unwrap();
            (running, name)
        })
        .collect()
}

/// Stops the workloads and checks them: nothing lost, nothing on a wrong shard, the tenant
/// written before and after its move (by shards `from` then `to`). Returns the writes of
/// the tenant's key acknowledged by all workloads together (its own stream's, and those of
/// the stream over its shard's keys that drew it).
fn check(
    function: &str,
    tenant_key: &Key,
    running: Vec<(workload::Running, &'static str)>,
    from: u32,
    to: u32,
) -> u64 {
    let mut tenant_acks = 0;
    for (running, name) in running {
        let mut report = running.stop().unwrap();
        let check = report.check(&inventory(), function).unwrap();
        assert!(check.missing.is_empty(), "{name}: lost {:?}", check.missing);
        assert_eq!(
            report.wrong_shard_writes, 0,
            "{name}: {:?}",
            check.wrong_shard
        );
        let tenant: Vec<&workload::StreamReport> =
            report.streams.iter().filter(|s| s.tenant).collect();
        assert_eq!(tenant.len(), 1, "{name}");
        let t = tenant[0];
        assert_eq!(t.lost, 0, "{name}");
        assert_eq!(
            t.shards_written,
            vec![from, to],
            "{name}: the tenant was written on both sides of its move"
        );
        let others: u64 = report
            .streams
            .iter()
            .filter(|s| !s.tenant)
            .map(|s| s.acked)
            .sum();
        assert!(
            t.acked > 2 * others,
            "{name}: the tenant took most writes ({} against {others})",
            t.acked
        );
        eprintln!(
            "{name} router: tenant {} acknowledged {} writes, longest pause {} ms; the other streams {others}",
            t.keys, t.acked, t.max_pause_ms
        );
        tenant_acks += report.acks.iter().filter(|a| &a.key == tenant_key).count() as u64;
    }
    tenant_acks
}

/// The last JSON line a command printed, the command having succeeded.
fn summary(args: &[&str]) -> serde_json::Value {
    let out = FLEET
        .cli(&[&["--output", "json"][..], args].concat())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    serde_json::from_str(text.lines().last().unwrap()).unwrap()
}

#[test]
fn a_list_tenant_moves_while_it_takes_most_writes() {
    FLEET.sandbox();
    let _s = serial();
    let before = common::items_are_where_lookup_says(FLEET.sandbox(), "t", "ten");
    let running = tenant_workloads("t", Key::Str("acme".into()));
    std::thread::sleep(Duration::from_millis(1000));
    let v = summary(&[
        "move-keys",
        "--function",
        "t",
        "--keys",
        "acme",
        "--to-shard",
        "2",
    ]);
    std::thread::sleep(Duration::from_millis(700));
    let acked = check("t", &Key::Str("acme".into()), running, 1, 2);
    assert_eq!(v["outcome"], "moved_keys", "{v}");
    eprintln!(
        "move-keys acme: key fence {} ms, {} rows copied",
        v["fence_ms"], v["copied_rows"]
    );
    assert_eq!(
        common::items_are_where_lookup_says(FLEET.sandbox(), "t", "ten"),
        before
    );
    let mut node1 = connect(FLEET.sandbox(), "node1");
    let mut node2 = connect(FLEET.sandbox(), "node2");
    for table in ["items", "shardctl_workload"] {
        assert_eq!(
            count(
                &mut node1,
                &format!("SELECT COUNT(*) FROM ten_1.{table} WHERE k = 'acme'")
            ),
            0,
            "{table}: the donor keeps none of the tenant's rows"
        );
    }
    assert_eq!(
        count(
            &mut node2,
            "SELECT COUNT(*) FROM ten_2.items WHERE k = 'acme'"
        ),
        100_000
    );
    assert_eq!(
        count(
            &mut node2,
            "SELECT COUNT(*) FROM ten_2.shardctl_workload WHERE k = 'acme'"
        ) as u64,
        acked,
        "every acknowledged tenant write is a row on the receiver, and no other"
    );
}

#[test]
fn a_narrow_range_tenant_moves_while_it_takes_most_writes() {
    FLEET.sandbox();
    let _s = serial();
    let before = common::items_are_where_lookup_says(FLEET.sandbox(), "r", "rng");
    let running = tenant_workloads("r", Key::Int(999));
    std::thread::sleep(Duration::from_millis(1000));
    let v = summary(&[
        "move-keys",
        "--function",
        "r",
        "--range",
        "990..1000",
        "--to-shard",
        "4",
    ]);
    std::thread::sleep(Duration::from_millis(700));
    let acked = check("r", &Key::Int(999), running, 3, 4);
    assert_eq!(v["outcome"], "moved_keys", "{v}");
    eprintln!(
        "move-keys 990..1000: key fence {} ms, {} rows copied",
        v["fence_ms"], v["copied_rows"]
    );
    assert_eq!(
        common::items_are_where_lookup_says(FLEET.sandbox(), "r", "rng"),
        before
    );
    let mut node3 = connect(FLEET.sandbox(), "node3");
    assert_eq!(
        count(&mut node3, "SELECT COUNT(*) FROM rng_4.items WHERE k = 999"),
        20_000
    );
    assert_eq!(
        count(
            &mut node3,
            "SELECT COUNT(*) FROM rng_4.shardctl_workload WHERE k = 999"
        ) as u64,
        acked
    );
}

/// `shardctl workload --tenants`: the report marks the tenant's stream and finds every
/// acknowledged row; bad tenant options are refused in one line before any write.
#[test]
fn the_workload_command_takes_tenants_and_refuses_bad_ones() {
    FLEET.sandbox();
    let _s = serial();
    let out = FLEET
        .cli(&[
            "--output",
            "json",
            "workload",
            "--function",
            "t",
            "--tenants",
            "beta",
            "--tenant-share",
            "0.5",
            "--rate",
            "60",
            "--seconds",
            "2",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let streams = v["report"]["streams"].as_array().unwrap();
    let tenant: Vec<&serde_json::Value> = streams.iter().filter(|s| s["tenant"] == true).collect();
    assert_eq!(tenant.len(), 1, "{v}");
    assert_eq!(tenant[0]["keys"], "beta");
    assert!(tenant[0]["acked"].as_u64().unwrap() > 20, "{v}");
    assert_eq!(v["report"]["missing"], 0);

    let rows = |node: &str, table: &str| {
        let mut s = connect(FLEET.sandbox(), node);
        count(&mut s, &format!("SELECT COUNT(*) FROM {table}"))
    };
    let before = (
        rows("node1", "ten_1.shardctl_workload"),
        rows("node2", "ten_2.shardctl_workload"),
    );
    // (arguments, what the error says, whether clap refuses them before shardctl reads
    // anything: its error then adds a usage hint).
    let cases: &[(&[&str], &str, bool)] = &[
        (
            &["--function", "t", "--tenants", "zz"],
            "a tenant of function t is not mapped",
            false,
        ),
        (
            &["--function", "r", "--tenants", "abc"],
            "is not an integer",
            false,
        ),
        (
            &[
                "--function",
                "t",
                "--tenants",
                "beta",
                "--tenant-share",
                "0",
            ],
            "must be above 0 and at most 1",
            true,
        ),
        (
            &[
                "--function",
                "t",
                "--tenants",
                "beta",
                "--tenant-share",
                "1.5",
            ],
            "must be above 0 and at most 1",
            true,
        ),
        (
            &["--function", "t", "--tenant-share", "0.5"],
            "--tenants",
            true,
        ),
    ];
    for (args, says, by_clap) in cases {
        let out = FLEET
            .cli(&[&["workload", "--seconds", "1"][..], args].concat())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        if !by_clap {
            assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        }
    }
    assert_eq!(
        (
            rows("node1", "ten_1.shardctl_workload"),
            rows("node2", "ten_2.shardctl_workload"),
        ),
        before,
        "nothing was written"
    );
}
