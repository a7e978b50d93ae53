//! `shardctl move` on real servers: under a workload with each fence, with both copy
//! methods on the sakila schema, after crashes (resume), on Ctrl-C, on abort, and refusing
//! bad input without changing anything.

mod common;

use common::{connect, count, exec, load_fixture, shardctl};
use predicates::prelude::*;
use shardctl::config::Inventory;
use shardctl::directory::{Directory, Key, Router};
use shardctl::sandbox::{Sandbox, SandboxBuilder};
use shardctl::server::{Server, Stmt};
use shardctl::workload;
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::Duration;

const USAGE: i32 = 2;
const REFUSED: i32 = 5;

fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

/// 3 nodes; employees sharded in 4 shards (node1, node2, node3, node2), data written
/// through the router, the workload table in every shard.
fn fleet() -> &'static Sandbox {
    static SB: OnceLock<Sandbox> = OnceLock::new();
    SB.get_or_init(|| {
        let sb = SandboxBuilder::for_tests(3).unwrap().start().unwrap();
        load_fixture(&sb, "employees/employees-schema.sql", None);
        load_fixture(&sb, "employees/departments-data.sql", Some("employees"));
        let inv = sb.inventory_path();
        let run = |args: &[&str]| {
            shardctl()
                .arg("--config")
                .arg(&inv)
                .args(args)
                .assert()
                .success();
        };
        run(&["init"]);
        for n in ["node1", "node2", "node3"] {
            run(&["node", "add", n]);
        }
        run(&["function", "add", "emp", "--type", "range", "--key", "int"]);
        for t in [
            "employees",
            "dept_emp",
            "dept_manager",
            "titles",
            "salaries",
        ] {
            run(&[
                "table",
                "add",
                &format!("employees.{t}"),
                "--function",
                "emp",
                "--column",
                "emp_no",
            ]);
        }
        run(&["table", "add", "employees.departments", "--global"]);
        for (node, bound) in [
            ("node1", "0"),
            ("node2", "10000"),
            ("node3", "20000"),
            ("node2", "30000"),
        ] {
            run(&[
                "shard",
                "add",
                "--function",
                "emp",
                "--node",
                node,
                "--lower-bound",
                bound,
            ]);
        }
        run(&["sample", "--count", "3000", "--start", "1", "--step", "13"]);
        let inv = Inventory::load(&sb.inventory_path()).unwrap();
        workload::setup(&inv, "emp").unwrap();
        sb
    })
}

fn inventory() -> Inventory {
    common::inventory(fleet())
}

fn cli(args: &[&str]) -> assert_cmd::Command {
    let mut c = shardctl();
    c.arg("--config").arg(fleet().inventory_path()).args(args);
    c
}

/// The shard holding `key`, and its node.
fn shard_of(key: i64) -> (u32, String) {
    let r = Router::connect(&inventory()).unwrap();
    let s = r.shard_for_function("emp", &Key::Int(key)).unwrap();
    (s.id, s.node.clone())
}

fn schema_exists(node: &str, schema: &str) -> bool {
    let mut s = connect(fleet(), node);
    s.schema_exists(&shardctl::ident::Ident::new("schema", schema).unwrap())
        .unwrap()
}

fn directory_version() -> u64 {
    Directory::open(&inventory()).unwrap().version().unwrap()
}

fn last_op() -> u64 {
    Directory::open(&inventory())
        .unwrap()
        .operations(None)
        .unwrap()[0]
        .id
}

fn move_under_workload(key: i64, to: &str, extra: &[&str]) -> (workload::Report, u32, String) {
    let (shard, from) = shard_of(key);
    let running = workload::spawn(
        inventory(),
        workload::Options {
            function: "emp".into(),
            rate: 300,
            write_timeout: Duration::from_secs(60),
        },
    )
    .unwrap();
    std::thread::sleep(Duration::from_millis(800));
    let shard_s = shard.to_string();
    let mut args = vec!["move", "--shard", shard_s.as_str(), "--to", to];
    args.extend_from_slice(extra);
    let out = cli(&args).output().unwrap();
    std::thread::sleep(Duration::from_millis(800));
    let report = running.stop().unwrap();
    assert!(
        out.status.success(),
        "move failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let missing = workload::missing_acks(&inventory(), "emp", &report.acks).unwrap();
    assert!(
        missing.is_empty(),
        "{} acknowledged writes lost: {:?}",
        missing.len(),
        &missing[..missing.len().min(5)]
    );
    assert!(report.acked > 300, "the workload wrote: {}", report.acked);
    assert!(
        report.streams.iter().all(|s| s.lost == 0),
        "{:?}",
        report.streams
    );
    // The directory points at the target; the source copy is gone; the target has the data.
    assert_eq!(shard_of(key), (shard, to.to_string()));
    assert!(!schema_exists(&from, &format!("employees_{shard}")));
    let mut t = connect(fleet(), to);
    assert!(
        count(
            &mut t,
            &format!("SELECT COUNT(*) FROM employees_{shard}.employees")
        ) > 0
    );
    (report, shard, from)
}

#[test]
fn a_move_under_load_with_the_shard_fence_loses_nothing_and_spares_other_shards() {
    fleet();
    let _s = serial();
    // Shards 10000.. and 30000.. share node2; move the first, the second must not notice.
    let (_, other_node) = shard_of(30000);
    let (from_shard, from_node) = shard_of(10000);
    assert_eq!(other_node, from_node);
    let (report, moved, _) = move_under_workload(10000, "node3", &["--fence", "shard"]);
    assert_eq!(moved, from_shard);
    let other = report.streams.iter().find(|s| s.key == "30000").unwrap();
    assert_eq!(
        other.failed_attempts, 0,
        "a write to another shard on the source failed"
    );
    let mine = report.streams.iter().find(|s| s.key == "10000").unwrap();
    assert!(mine.acked > 50);
}

#[test]
fn a_move_under_load_with_the_read_only_fence_loses_nothing() {
    fleet();
    let _s = serial();
    let (_, _, from) = move_under_workload(0, "node3", &["--fence", "read-only"]);
    let mut src = connect(fleet(), &from);
    assert!(!src.settings().unwrap().read_only, "the fence was lifted");
    // And back again with the dump method.
    move_under_workload(0, &from, &["--fence", "read-only", "--method", "dump"]);
}

#[test]
fn resume_after_a_crash_during_the_copy() {
    fleet();
    let _s = serial();
    let (shard, from) = shard_of(20000);
    let to = if from == "node1" { "node2" } else { "node1" };
    let out = cli(&["move", "--shard", &shard.to_string(), "--to", to])
        .env("SHARDCTL_FAULT", "crash@copy")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let op = last_op();
    // The journal shows the operation running; the shard has not moved.
    assert_eq!(shard_of(20000), (shard, from.clone()));
    // Another move of the same shard is refused.
    cli(&["move", "--shard", &shard.to_string(), "--to", to])
        .assert()
        .code(REFUSED)
        .stderr(predicates::str::contains("under operation"));
    // The owner's process is gone although its heartbeat is fresh: resume takes over, and
    // says so.
    cli(&["resume", &op.to_string()])
        .assert()
        .success()
        .stderr(predicates::str::contains("taking over"));
    assert_eq!(shard_of(20000), (shard, to.to_string()));
    assert!(!schema_exists(&from, &format!("employees_{shard}")));
}

#[test]
fn resume_after_a_crash_with_the_fence_up() {
    fleet();
    let _s = serial();
    let (shard, from) = shard_of(20000);
    let to = if from == "node3" { "node2" } else { "node3" };
    let out = cli(&["move", "--shard", &shard.to_string(), "--to", to])
        .env("SHARDCTL_FAULT", "crash@after:lock")
        .output()
        .unwrap();
    assert!(!out.status.success());
    // The fence survives the crash: the shard's tables are out of reach on the source.
    let mut src = connect(fleet(), &from);
    let err = src
        .exec(&Stmt::text(format!(
            "SELECT COUNT(*) FROM employees_{shard}.employees"
        )))
        .unwrap_err();
    assert!(err.to_string().contains("1146"), "{err}");
    cli(&["resume", &last_op().to_string()]).assert().success();
    assert_eq!(shard_of(20000), (shard, to.to_string()));
    assert!(!schema_exists(&from, &format!("employees_{shard}")));
}

#[test]
fn abort_before_the_flip_returns_everything() {
    fleet();
    let _s = serial();
    let (shard, from) = shard_of(30000);
    let to = if from == "node1" { "node3" } else { "node1" };
    let out = cli(&["move", "--shard", &shard.to_string(), "--to", to])
        .env("SHARDCTL_FAULT", "crash@after:start-replication")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let op = last_op();
    let channel = shardctl::ident::Channel::new(&format!("shardctl_op{op}")).unwrap();
    let mut target = connect(fleet(), to);
    assert!(target.channel_status(&channel).unwrap().is_some());
    cli(&["abort", &op.to_string()]).assert().success();
    assert!(target.channel_status(&channel).unwrap().is_none());
    assert!(!schema_exists(to, &format!("employees_{shard}")));
    assert_eq!(shard_of(30000), (shard, from.clone()));
    let mut src = connect(fleet(), &from);
    assert!(
        count(
            &mut src,
            &format!("SELECT COUNT(*) FROM employees_{shard}.employees")
        ) > 0
    );
    let ops = cli(&["--output", "json", "ops", &op.to_string()])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&ops.stdout).unwrap();
    assert_eq!(v[0]["state"], "aborted");
    // The shard can be moved again.
    cli(&["move", "--shard", &shard.to_string(), "--to", to, "--check"])
        .assert()
        .success();
    cli(&["abort", &op.to_string()]).assert().code(USAGE);
}

#[test]
fn ctrl_c_with_the_fence_up_lifts_it() {
    fleet();
    let _s = serial();
    let (shard, from) = shard_of(10000);
    let to = if from == "node1" { "node2" } else { "node1" };
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("shardctl"))
        .arg("--config")
        .arg(fleet().inventory_path())
        .args(["move", "--shard", &shard.to_string(), "--to", to])
        .env("SHARDCTL_FAULT", "pause@after:lock")
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(stderr));
    for line in lines.by_ref() {
        if line.unwrap().contains("fault point after:lock") {
            break;
        }
    }
    // SAFETY: kill only sends a signal to our child.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    // The fence is lifted: the shard is writable on the source and online in the directory.
    let mut src = connect(fleet(), &from);
    exec(
        &mut src,
        &[&format!(
            "INSERT INTO employees_{shard}.shardctl_workload (k, seq) VALUES (10000, 1)"
        )],
    );
    assert_eq!(shard_of(10000), (shard, from));
    let snap = Directory::open(&inventory()).unwrap().load().unwrap();
    assert_eq!(snap.shard(shard).unwrap().state.as_sql(), "online");
    cli(&["abort", &last_op().to_string()]).assert().success();
}

#[test]
fn bad_moves_are_refused_without_a_change() {
    fleet();
    let _s = serial();
    let (shard, from) = shard_of(0);
    let to = if from == "node1" { "node2" } else { "node1" };
    let s = shard.to_string();
    let before = directory_version();
    let cases: Vec<(Vec<&str>, i32, String)> = vec![
        (
            vec!["move", "--shard", "999", "--to", "node1"],
            USAGE,
            "unknown shard 999".into(),
        ),
        (
            vec!["move", "--shard", &s, "--to", "node9"],
            USAGE,
            "unknown node \"node9\"".into(),
        ),
        (
            vec!["move", "--shard", &s, "--to", &from],
            USAGE,
            format!("already lives on {from}"),
        ),
    ];
    for (args, code, needle) in cases {
        let out = cli(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
        assert!(err.contains(&needle), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    }
    // A target that already holds the schema.
    let mut t = connect(fleet(), to);
    exec(&mut t, &[&format!("CREATE DATABASE employees_{shard}")]);
    cli(&["move", "--shard", &s, "--to", to])
        .assert()
        .code(REFUSED)
        .stderr(predicates::str::contains(format!(
            "already has a schema employees_{shard}"
        )));
    exec(&mut t, &[&format!("DROP DATABASE employees_{shard}")]);
    // A replication account that cannot log in.
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(fleet().inventory_path()).unwrap();
    let broken = text.replace(
        &format!(
            "defaults_file: {}",
            fleet().dir().join("replication.cnf").display()
        ),
        "password: wrong-password",
    );
    assert_ne!(broken, text);
    let inv = common::write_file(dir.path(), "inv.yaml", &broken);
    let out = shardctl()
        .arg("--config")
        .arg(&inv)
        .args(["move", "--shard", &s, "--to", to])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(REFUSED));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("replication account cannot connect"), "{err}");
    assert!(!err.contains("wrong-password"));
    assert_eq!(
        directory_version(),
        before,
        "a refused move changed the directory"
    );
    // A playbook with an unknown parameter is refused before anything runs.
    let pb = common::write_file(
        dir.path(),
        "pb.yaml",
        &shardctl::playbook::MOVE_PLAYBOOK.replace("keep: false", "keep: false\n    shred: true"),
    );
    cli(&[
        "move",
        "--shard",
        &s,
        "--to",
        to,
        "--playbook",
        pb.to_str().unwrap(),
    ])
    .assert()
    .code(3)
    .stderr(predicates::str::contains("pb.yaml:").and(predicates::str::contains("shred")));
    // The dry run prints every step without touching anything.
    let out = cli(&["move", "--shard", &s, "--to", to, "--dry-run"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    for step in [
        "preflight",
        "backup",
        "change-master",
        "lock",
        "verify",
        "flip",
        "drop-source",
        "unlock",
    ] {
        assert!(text.contains(step), "{step} missing from the plan: {text}");
    }
    assert!(text.contains("MASTER_PASSWORD = '***'"));
    assert_eq!(directory_version(), before);
}

#[test]
fn a_source_without_binary_log_is_refused() {
    let sb = SandboxBuilder::for_tests(2)
        .unwrap()
        .extra_config("skip-log-bin")
        .start()
        .unwrap();
    let inv = sb.inventory_path();
    let run = |args: &[&str]| shardctl().arg("--config").arg(&inv).args(args).assert();
    let mut n1 = connect(&sb, "node1");
    exec(
        &mut n1,
        &[
            "CREATE DATABASE app",
            "CREATE TABLE app.t (id INT PRIMARY KEY)",
        ],
    );
    common::range_directory(
        &inv,
        &["node1", "node2"],
        &[("app.t", "id")],
        &[("node1", "0")],
    );
    run(&["move", "--shard", "1", "--to", "node2"])
        .code(REFUSED)
        .stderr(predicates::str::contains("node1 must log in ROW format"));
}

/// Every object of a schema: table rows and checksums, and the definitions of views,
/// routines and triggers.
fn signature(server: &mut Server, schema: &str) -> Vec<String> {
    let id = shardctl::ident::Ident::new("schema", schema).unwrap();
    let mut out = Vec::new();
    for t in server.tables(&id).unwrap() {
        if t.is_view {
            let ddl = server.show_create(&id, &t).unwrap();
            out.push(format!(
                "view {} {}",
                t.name,
                ddl.replace(&format!("`{schema}`."), "")
            ));
        } else {
            let (rows, sum) = server.count_and_checksum(&id, &t.name).unwrap();
            out.push(format!("table {} {rows} {sum:?}", t.name));
            let ddl = server.show_create(&id, &t).unwrap();
            out.push(format!("ddl {} {}", t.name, ddl));
        }
    }
    use shardctl::server::catalog::ObjectKind;
    for kind in [
        ObjectKind::Function,
        ObjectKind::Procedure,
        ObjectKind::Trigger,
    ] {
        for name in server.objects(&id, kind).unwrap() {
            let ddl = server.show_create_object(&id, kind, &name).unwrap();
            out.push(format!(
                "{kind:?} {name} {}",
                ddl.replace(&format!("`{schema}`."), "")
            ));
        }
    }
    out
}

#[test]
fn sakila_moves_with_both_methods_and_keeps_every_object() {
    fleet();
    let _s = serial();
    let sb = fleet();
    load_fixture(sb, "sakila/sakila-schema.sql", None);
    load_fixture(sb, "sakila/sakila-data.sql", None);
    let run = |args: &[&str]| cli(args).assert().success();
    run(&[
        "function", "add", "store", "--type", "range", "--key", "int",
    ]);
    run(&[
        "table",
        "add",
        "sakila.customer",
        "--function",
        "store",
        "--column",
        "customer_id",
    ]);
    let out = cli(&[
        "--output",
        "json",
        "shard",
        "add",
        "--function",
        "store",
        "--node",
        "node1",
        "--lower-bound",
        "0",
    ])
    .output()
    .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let id = v["shard_id"].as_u64().unwrap();
    let schema = format!("sakila_{id}");
    let mut n1 = connect(sb, "node1");
    // MariaDB skips the fixture's MySQL-only `/*!50705 location GEOMETRY */` column, so the
    // spatial column and its index are added here, with points derived from each row.
    exec(
        &mut n1,
        &[
            &format!("ALTER TABLE {schema}.address ADD COLUMN location POINT NULL"),
            &format!("UPDATE {schema}.address SET location = POINT(address_id / 10, city_id / 10)"),
            &format!("ALTER TABLE {schema}.address MODIFY location POINT NOT NULL, ADD SPATIAL INDEX idx_location (location)"),
        ],
    );
    exec(
        &mut n1,
        &[
            "SET SESSION foreign_key_checks = 0",
            &format!("INSERT INTO {schema}.customer SELECT * FROM sakila.customer"),
            "SET SESSION foreign_key_checks = 1",
        ],
    );
    let before = signature(&mut n1, &schema);
    assert!(
        before.iter().any(|l| l.starts_with("Trigger ins_film")),
        "{before:?}"
    );
    assert!(
        before.iter().any(|l| l.contains("FULLTEXT")),
        "the FULLTEXT index is part of the copy"
    );
    assert!(
        before.iter().any(|l| l.contains("SPATIAL KEY")),
        "the spatial column is part of the copy"
    );
    assert!(before
        .iter()
        .any(|l| l.starts_with("table rental 16044") || l.starts_with("table rental")));
    let id_s = id.to_string();
    run(&[
        "move", "--shard", &id_s, "--to", "node2", "--method", "native",
    ]);
    let mut n2 = connect(sb, "node2");
    assert_eq!(signature(&mut n2, &schema), before);
    run(&[
        "move", "--shard", &id_s, "--to", "node3", "--method", "dump",
    ]);
    let mut n3 = connect(sb, "node3");
    assert_eq!(signature(&mut n3, &schema), before);
}

#[test]
fn a_catch_up_that_never_finishes_times_out_and_leaves_the_shard_untouched() {
    fleet();
    let _s = serial();
    let (shard, from) = shard_of(30000);
    let to = if from == "node1" { "node3" } else { "node1" };
    let dir = tempfile::tempdir().unwrap();
    let pb = shardctl::playbook::MOVE_PLAYBOOK.replace(
        "lag_below_secs: 1\n    timeout_secs: 600",
        "lag_below_secs: 1\n    timeout_secs: 2",
    );
    assert_ne!(pb, shardctl::playbook::MOVE_PLAYBOOK);
    let pb = common::write_file(dir.path(), "slow.yaml", &pb);
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("shardctl"))
        .arg("--config")
        .arg(fleet().inventory_path())
        .args([
            "move",
            "--shard",
            &shard.to_string(),
            "--to",
            to,
            "--playbook",
            pb.to_str().unwrap(),
        ])
        .env("SHARDCTL_FAULT", "pause=3@after:start-replication")
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(child.stderr.take().unwrap()));
    for line in lines.by_ref() {
        if line
            .unwrap()
            .contains("fault point after:start-replication")
        {
            break;
        }
    }
    // Block the target's applier: hold a lock on the table the next write replicates to.
    let mut target = connect(fleet(), to);
    exec(
        &mut target,
        &[&format!(
            "LOCK TABLES employees_{shard}.shardctl_workload WRITE"
        )],
    );
    let mut src = connect(fleet(), &from);
    exec(
        &mut src,
        &[&format!(
            "INSERT INTO employees_{shard}.shardctl_workload (k, seq) VALUES (30000, 42)"
        )],
    );
    for line in lines.by_ref() {
        if line.unwrap().contains("wait               failed") {
            break;
        }
    }
    exec(&mut target, &["UNLOCK TABLES"]);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(6), "a timeout exits with 6");
    // Untouched: still on the source, online, writable; no channel, no copy on the target.
    assert_eq!(shard_of(30000), (shard, from.clone()));
    exec(
        &mut src,
        &[&format!(
            "INSERT INTO employees_{shard}.shardctl_workload (k, seq) VALUES (30000, 43)"
        )],
    );
    let op = last_op();
    let channel = shardctl::ident::Channel::new(&format!("shardctl_op{op}")).unwrap();
    assert!(target.channel_status(&channel).unwrap().is_none());
    assert!(!schema_exists(to, &format!("employees_{shard}")));
    let snap = Directory::open(&inventory()).unwrap().load().unwrap();
    assert_eq!(snap.shard(shard).unwrap().state.as_sql(), "online");
    assert_eq!(
        Directory::open(&inventory())
            .unwrap()
            .operation(op)
            .unwrap()
            .state,
        shardctl::directory::journal::OpState::Aborted
    );
}

#[test]
fn a_target_server_killed_during_the_copy_fails_cleanly_and_resumes() {
    let mut sb = SandboxBuilder::for_tests(2).unwrap().start().unwrap();
    let inv = sb.inventory_path();
    let run = |args: &[&str]| shardctl().arg("--config").arg(&inv).args(args).assert();
    let mut n1 = connect(&sb, "node1");
    exec(
        &mut n1,
        &[
            "CREATE DATABASE app",
            "CREATE TABLE app.t (id INT PRIMARY KEY, v VARCHAR(40))",
        ],
    );
    common::range_directory(
        &inv,
        &["node1", "node2"],
        &[("app.t", "id")],
        &[("node1", "0")],
    );
    exec(
        &mut n1,
        &["INSERT INTO app_1.t SELECT seq, MD5(seq) FROM app_1.seq_1_to_50000"],
    );

    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("shardctl"))
        .arg("--config")
        .arg(&inv)
        .args(["move", "--shard", "1", "--to", "node2"])
        .env("SHARDCTL_FAULT", "pause=4@copy")
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(child.stderr.take().unwrap()));
    for line in lines.by_ref() {
        if line.unwrap().contains("fault point copy") {
            break;
        }
    }
    sb.kill_node("node2").unwrap();
    let rest: Vec<String> = lines.map_while(|l| l.ok()).collect();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(4), "{rest:?}");
    let last = rest.last().cloned().unwrap_or_default();
    assert!(last.contains("node2") && last.contains("resume"), "{last}");
    // The shard stays on the source, online and writable.
    exec(&mut n1, &["INSERT INTO app_1.t VALUES (50001, 'x')"]);
    let op = Directory::open(&common::inventory(&sb))
        .unwrap()
        .operations(None)
        .unwrap()[0]
        .clone();
    assert_eq!(op.state, shardctl::directory::journal::OpState::Failed);
    sb.restart_node("node2").unwrap();
    run(&["resume", &op.id.to_string()]).success();
    let mut n2 = connect(&sb, "node2");
    assert_eq!(count(&mut n2, "SELECT COUNT(*) FROM app_1.t"), 50001);
    assert!(!n1
        .schema_exists(&shardctl::ident::Ident::new("schema", "app_1").unwrap())
        .unwrap());
}
