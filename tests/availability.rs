//! The operator's availability of a shard (issue 30, item 5): `shard set-availability`
//! closes a shard to writes, or to reads and writes, journaled as an operation and logged
//! for routers; the library's Router refuses what the shard is closed to once it has
//! re-read the directory, `query` refuses a function with an unavailable shard, `status`,
//! `shard list` and `lookup` show it. Refused while an operation holds the shard, and for
//! bad input: one line, its exit code, nothing changed.

mod common;

use common::{app_items_two_shards, serial, SharedFleet};
use shardctl::config::Inventory;
use shardctl::directory::journal::OpKind;
use shardctl::directory::{Access, Availability, Directory, Key, Reload, Router};
use shardctl::error::{Error, ExitCode};
use shardctl::sandbox::Sandbox;

const USAGE: i32 = 2;
const REFUSED: i32 = 5;
const UNAVAILABLE: i32 = 7;

static FLEET: SharedFleet = SharedFleet::new(3, set_up);

/// Function `f` over `app.items`: shard 1 on node1 (keys from 0) holding keys 1 to 200,
/// shard 2 on node2 (from 100000).
fn set_up(sb: &Sandbox) {
    app_items_two_shards(200).build(sb);
}

fn inventory() -> Inventory {
    common::inventory(FLEET.sandbox())
}

fn version() -> u64 {
    Directory::open(&inventory()).unwrap().version().unwrap()
}

fn availability(shard: u32) -> Availability {
    Directory::open(&inventory())
        .unwrap()
        .load()
        .unwrap()
        .shard(shard)
        .unwrap()
        .availability
}

fn operations() -> u64 {
    let inv = inventory();
    let mut n1 = common::connect(FLEET.sandbox(), "node1");
    common::count(
        &mut n1,
        &format!(
            "SELECT COUNT(*) FROM `{}`.operations",
            inv.file.directory.schema
        ),
    ) as u64
}

/// `shard set-availability --shard SHARD TO`, which must succeed; its JSON document.
fn set(shard: u32, to: &str, reason: Option<&str>) -> serde_json::Value {
    let shard = shard.to_string();
    let mut args = vec!["shard", "set-availability", "--shard", &shard, to];
    if let Some(r) = reason {
        args.extend(["--reason", r]);
    }
    FLEET.json(&args)
}

/// Runs `args`, expecting `code`; returns stderr, which must be one line.
fn fails(args: &[&str], code: i32) -> String {
    let out = FLEET.cli(args).assert().code(code);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    err
}

fn unavailable(e: Error) -> u32 {
    assert_eq!(e.exit_code(), ExitCode::Unavailable, "{e}");
    match e {
        Error::Unavailable { shard, .. } => shard,
        other => panic!("not Unavailable: {other}"),
    }
}

const KEY1: Key = Key::Int(5);
const KEY2: Key = Key::Int(100_005);

#[test]
fn each_availability_is_journaled_and_routers_refuse_what_it_closes() {
    let _s = serial();
    FLEET.sandbox();
    let mut router = Router::connect(&inventory()).unwrap();
    assert!(router.shard_to(Access::Write, "f", &KEY1).is_ok());

    let before = version();
    let doc = set(1, "no-writes", Some("disk swap on node1"));
    assert_eq!(doc["availability"], "no_writes", "{doc}");
    assert_eq!(doc["before"], "available", "{doc}");
    assert_eq!(doc["changed"], true, "{doc}");
    let op = doc["op"].as_u64().expect("an operation id");
    assert_eq!(version(), before + 1, "one change, one version");

    // The router's cache is as it was until it re-reads the directory.
    assert!(router.shard_to(Access::Write, "f", &KEY1).is_ok());
    assert!(router.refresh().unwrap());
    assert_eq!(
        router.last_reload(),
        Some(&Reload::Incremental {
            from: before,
            to: before + 1,
            shards: vec![1],
            rows: router.last_reload().unwrap().rows(),
            keys_dropped: 0,
        }),
        "one shard re-read"
    );
    let e = router.shard_to(Access::Write, "f", &KEY1).unwrap_err();
    assert!(
        e.to_string().contains("marked no-writes by the operator"),
        "{e}"
    );
    assert_eq!(unavailable(e), 1);
    assert_eq!(
        router.shard_to(Access::Read, "f", &KEY1).unwrap().id,
        1,
        "reads still go"
    );
    assert_eq!(
        unavailable(
            router
                .table_shard_to(Access::Write, "app", "items", &KEY1)
                .unwrap_err()
        ),
        1
    );
    // Where the key lives is still answered, and the other shard takes writes.
    assert_eq!(router.shard_for_function("f", &KEY1).unwrap().id, 1);
    assert_eq!(router.shard_to(Access::Write, "f", &KEY2).unwrap().id, 2);

    // The journal keeps who asked what, and why.
    let rec = Directory::open(&inventory())
        .unwrap()
        .operation(op)
        .unwrap();
    assert_eq!(rec.kind, OpKind::Availability);
    assert_eq!(rec.shard_id, Some(1));
    assert!(rec.state.is_finished());
    assert_eq!(rec.params["before"], "available");
    assert_eq!(rec.params["availability"], "no_writes");
    assert_eq!(rec.params["reason"], "disk swap on node1");
    let listed = FLEET.json(&["ops", "--kind", "availability"]);
    assert!(
        listed.to_string().contains(&format!("\"op\":{op}")),
        "{listed}"
    );

    // shard list, status and lookup show it, in text and JSON.
    let list = FLEET.json(&["shard", "list"]);
    let of = |doc: &serde_json::Value, shard: u64| {
        doc["shards"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["shard"] == shard)
            .unwrap()["availability"]
            .clone()
    };
    assert_eq!(of(&list, 1), "no_writes");
    assert_eq!(of(&list, 2), "available");
    assert_eq!(of(&FLEET.json(&["status"]), 1), "no_writes");
    assert_eq!(
        FLEET.json(&["lookup", "--function", "f", "5"])["availability"],
        "no_writes"
    );
    let text = FLEET.cli(&["shard", "list"]).assert().success();
    let text = String::from_utf8_lossy(&text.get_output().stdout).to_string();
    assert!(
        text.lines()
            .any(|l| l.contains("app_1") && l.contains("no-writes")),
        "{text}"
    );
    let text = FLEET.cli(&["status"]).assert().success();
    let text = String::from_utf8_lossy(&text.get_output().stdout).to_string();
    assert!(
        text.lines()
            .any(|l| l.contains("app_1") && l.contains("no-writes")),
        "{text}"
    );

    // A shard closed to writes is still read by query.
    let q = FLEET.json(&[
        "query",
        "--function",
        "f",
        "SELECT COUNT(*) AS n FROM {items}",
    ]);
    assert_eq!(q["rows"][0][0], 200, "{q}");

    // Unavailable: reads refused too, and query refuses the function, sending nothing.
    set(1, "unavailable", None);
    assert!(router.refresh().unwrap());
    assert_eq!(
        unavailable(router.shard_to(Access::Read, "f", &KEY1).unwrap_err()),
        1
    );
    assert_eq!(
        unavailable(router.shard_to(Access::Write, "f", &KEY1).unwrap_err()),
        1
    );
    let err = fails(
        &[
            "query",
            "--function",
            "f",
            "SELECT COUNT(*) AS n FROM {items}",
        ],
        UNAVAILABLE,
    );
    assert!(
        err.starts_with("shardctl: shard 1 is unavailable:") && err.contains("(unavailable: 1)"),
        "{err}"
    );

    // The same availability again changes nothing.
    let at = version();
    let again = set(1, "unavailable", None);
    assert_eq!(
        (again["changed"].as_bool(), again["op"].as_u64()),
        (Some(false), None)
    );
    assert_eq!(version(), at);

    // Available again: the router takes writes once it re-reads.
    let doc = set(1, "available", Some("disk swapped"));
    assert_eq!(doc["before"], "unavailable");
    assert!(router.refresh().unwrap());
    assert_eq!(router.shard_to(Access::Write, "f", &KEY1).unwrap().id, 1);
    assert_eq!(availability(1), Availability::Available);
}

#[test]
fn an_operation_holding_the_shard_refuses_it_and_nothing_changes() {
    let _s = serial();
    FLEET.sandbox();
    // A move whose process died after its preflight holds shard 1 until resumed or
    // aborted.
    let crashed = FLEET
        .cli(&["move", "--shard", "1", "--to", "node3"])
        .env("SHARDCTL_FAULT", "crash@after:preflight")
        .output()
        .unwrap();
    assert!(!crashed.status.success(), "{crashed:?}");
    let mv = common::newest_op(&inventory()).unwrap();
    assert_eq!((mv.kind, mv.shard_id), (OpKind::Move, Some(1)));
    assert!(!mv.state.is_finished());

    let (at, ops) = (version(), operations());
    for to in ["no-writes", "unavailable", "available"] {
        let err = fails(&["shard", "set-availability", "--shard", "1", to], REFUSED);
        assert!(
            err.starts_with(&format!(
                "shardctl: refused: shard 1 is held by operation {} (move, ",
                mv.id
            )),
            "{err}"
        );
    }
    assert_eq!(version(), at, "the version did not move");
    assert_eq!(operations(), ops, "nothing journaled");
    assert_eq!(availability(1), Availability::Available);
    // The other shard is not held.
    set(2, "no-writes", None);
    set(2, "available", None);

    FLEET.cli(&["abort", &mv.id.to_string()]).assert().success();
    set(1, "no-writes", None);
    assert_eq!(availability(1), Availability::NoWrites);
    set(1, "available", None);

    // A live operation: a fence raised by hand holds shard 2 until it is lifted.
    FLEET.cli(&["lock", "--shard", "2"]).assert().success();
    let lock = common::newest_op(&inventory()).unwrap();
    assert_eq!((lock.kind, lock.shard_id), (OpKind::Lock, Some(2)));
    let at = version();
    let err = fails(
        &["shard", "set-availability", "--shard", "2", "unavailable"],
        REFUSED,
    );
    assert!(
        err.contains(&format!("held by operation {} (lock, running)", lock.id)),
        "{err}"
    );
    assert_eq!(version(), at);
    FLEET.cli(&["unlock", "--shard", "2"]).assert().success();

    // A split that died after its preflight holds the shard it is creating too, though
    // its operation is journaled on the old shard.
    let crashed = FLEET
        .cli(&["split", "--shard", "2", "--to", "node3", "--at", "150000"])
        .env("SHARDCTL_FAULT", "crash@after:preflight")
        .output()
        .unwrap();
    assert!(!crashed.status.success(), "{crashed:?}");
    let split = common::newest_op(&inventory()).unwrap();
    assert_eq!((split.kind, split.shard_id), (OpKind::Split, Some(2)));
    let new_shard = Directory::open(&inventory())
        .unwrap()
        .load()
        .unwrap()
        .shards
        .iter()
        .map(|s| s.id)
        .max()
        .unwrap();
    assert!(new_shard > 2, "the split's new shard has a location");
    let at = version();
    let err = fails(
        &[
            "shard",
            "set-availability",
            "--shard",
            &new_shard.to_string(),
            "no-writes",
        ],
        REFUSED,
    );
    assert!(
        err.contains(&format!(
            "shard {new_shard} is held by operation {} (split, ",
            split.id
        )),
        "{err}"
    );
    assert_eq!(version(), at);
    FLEET
        .cli(&["abort", &split.id.to_string()])
        .assert()
        .success();
    assert_eq!(availability(2), Availability::Available);
}

#[test]
fn bad_input_is_one_line_naming_it_and_changes_nothing() {
    let _s = serial();
    FLEET.sandbox();
    let (at, ops) = (version(), operations());
    let err = fails(
        &["shard", "set-availability", "--shard", "999", "no-writes"],
        USAGE,
    );
    assert_eq!(err.trim_end(), "shardctl: unknown shard 999");
    let out = FLEET
        .cli(&["shard", "set-availability", "--shard", "1", "down"])
        .assert()
        .code(USAGE);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        err.lines().next().unwrap().contains("invalid value 'down'"),
        "{err}"
    );
    assert!(err.contains("available, no-writes, unavailable"), "{err}");
    let out = FLEET
        .cli(&["shard", "set-availability", "--shard", "x1", "available"])
        .assert()
        .code(USAGE);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(err.lines().next().unwrap().contains("'x1'"), "{err}");
    assert_eq!(version(), at);
    assert_eq!(operations(), ops);
    assert_eq!(availability(1), Availability::Available);
}
