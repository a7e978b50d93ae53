//! The dry run follows the live run: for a move (shard fence with the native copy, read-only
//! fence with the dump copy) and a split (onto another node, onto its own node), every
//! statement the live run sends to a fleet node for its own effects — captured at the
//! connection layer (`SHARDCTL_CAPTURE`) — is exactly the list the dry run printed just
//! before, in order, once the values only known at run time (the operation id, the copy's
//! binary-log position, a split's new shard id) are marked the same way on both sides.
//! Reads, the bulk copy's own sessions, a change stream's and pruning's sessions are not
//! effects of the procedure's own connections and are left out on both sides. For prune, every DELETE
//! the live prune sends is one its dry run printed (each chunk binds its own keys). The
//! rendered dry runs are golden files (tests/snapshots/dry_run__*.snap).

mod common;

use common::{connect, exec, serial, shardctl, FleetSetup, Function, SharedFleet};
use shardctl::sandbox::Sandbox;
use shardctl::server::{Captured, Purpose};

static FLEET: SharedFleet = SharedFleet::new(3, set_up);

/// Sets up the fleet once, on first use (see [`FLEET`]).
fn set_up(sb: &Sandbox) {
    FleetSetup::new()
        .schema(&[
            "CREATE DATABASE app",
            "CREATE TABLE app.t (id INT PRIMARY KEY, v VARCHAR(40))",
            "CREATE TABLE app.u (id INT PRIMARY KEY, t_id INT NOT NULL, KEY (t_id), \
             FOREIGN KEY (t_id) REFERENCES app.t (id))",
            // Written with the schema's name, as servers then keep it in the text.
            "CREATE VIEW app.tv AS SELECT id, v FROM app.t",
            "CREATE TRIGGER app.t_upper BEFORE INSERT ON app.t FOR EACH ROW SET NEW.v = UPPER(NEW.v)",
            // Enabled: a copy creates it disabled, the flip's enable-events enables it
            // (its first run is years away; the sandbox's scheduler is off anyway).
            "CREATE EVENT app.tidy ON SCHEDULE EVERY 1 DAY STARTS '2031-01-01 00:00:00' \
             ON COMPLETION PRESERVE ENABLE DO DELETE FROM app.t WHERE id < 0",
        ])
        .function(
            Function::range("f")
                .tables(&[("app.t", "id"), ("app.u", "t_id")])
                .shards(&[("node1", "0"), ("node2", "1000000")]),
        )
        .rows(
            "node1",
            &[
                "INSERT INTO app_1.t SELECT seq, MD5(seq) FROM app_1.seq_1_to_3000",
                "INSERT INTO app_1.u SELECT seq, seq FROM app_1.seq_1_to_3000",
            ],
        )
        .rows(
            "node2",
            &[
                "INSERT INTO app_2.t SELECT seq, MD5(seq) FROM app_2.seq_1000000_to_1002000",
                "INSERT INTO app_2.u SELECT seq, seq FROM app_2.seq_1000000_to_1002000",
            ],
        )
        .build(sb);
}

/// Replaces the digits that follow every `prefix` with `mark`.
fn mark_digits(text: &str, prefix: &str, mark: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find(prefix) {
        out.push_str(&rest[..i + prefix.len()]);
        rest = &rest[i + prefix.len()..];
        let digits = rest.chars().take_while(char::is_ascii_digit).count();
        if digits > 0 {
            out.push_str(mark);
            rest = &rest[digits..];
        }
    }
    out.push_str(rest);
    out
}

/// Replaces what follows every `prefix` up to the next `end` with `mark`.
fn mark_until(text: &str, prefix: &str, end: char, mark: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find(prefix) {
        out.push_str(&rest[..i + prefix.len()]);
        rest = &rest[i + prefix.len()..];
        let n = rest.find(end).unwrap_or(rest.len());
        out.push_str(mark);
        rest = &rest[n..];
    }
    out.push_str(rest);
    out
}

/// The marks both sides share: operation ids and binary-log positions.
fn normalize(sql: &str) -> String {
    let s = sql
        .split("  -- bind:")
        .next()
        .unwrap_or(sql)
        .trim()
        .to_string();
    let s = s.replace("<op>", "");
    let s = common::mask_directory_id(&s, "");
    let s = mark_digits(&s, "shardctl_op", "");
    let s = mark_digits(&s, "shardctl_trash_op", "");
    let s = mark_digits(&s, "MASTER_LOG_POS = ", "<pos>");
    mark_until(&s, "MASTER_LOG_FILE = '", '\'', "<file>")
}

/// The dry run's statements for fleet nodes, without its read-only queries.
fn dry_statements(plan: &serde_json::Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for step in plan["steps"].as_array().unwrap() {
        for a in step["actions"].as_array().unwrap() {
            let node = a["node"].as_str().unwrap();
            if node == "directory" {
                continue;
            }
            for st in a["statements"].as_array().unwrap() {
                let st = st.as_str().unwrap();
                if st.ends_with("-- read-only") {
                    continue;
                }
                out.push((node.to_string(), normalize(st)));
            }
        }
    }
    out
}

/// A merge's gate lets its channel's applier go on each time the source's log has grown
/// (`START ... SQL_THREAD UNTIL`), as often as the source writes; the dry run shows one
/// per wait. Consecutive ones count as one on both sides.
fn one_gate_per_wait(statements: Vec<(String, String)>) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for s in statements {
        let gate = s.1.contains("SQL_THREAD UNTIL");
        if gate && out.last() == Some(&s) {
            continue;
        }
        out.push(s);
    }
    out
}

/// What the live run sent for its own effects, from the capture file.
fn live_statements(file: &std::path::Path, new_shard: Option<u32>) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(file).unwrap();
    text.lines()
        .map(|l| serde_json::from_str::<Captured>(l).unwrap())
        .filter(|c| c.purpose == Purpose::Ops)
        .filter(|c| {
            let head = c.sql.trim_start().to_ascii_uppercase();
            // The live run's up-front preflight reads through read-only sessions (the
            // dry run's own effects), before the operation is journaled.
            !(head.starts_with("SELECT")
                || head.starts_with("SHOW")
                || head.starts_with("CHECKSUM")
                || head == "SET SESSION TRANSACTION READ ONLY")
        })
        .map(|c| {
            let mut sql = c.sql.clone();
            if let Some(id) = new_shard {
                sql = sql
                    .replace(&format!("app_{id}`"), "app_<new>`")
                    .replace(&format!("app\\_{id}."), "app\\_<new>.")
                    .replace(&format!("app_{id}."), "app_<new>.")
                    .replace(&format!("app_{id}'"), "app_<new>'")
                    .replace(&format!("app_{id}-"), "app_<new>-");
            }
            (c.node, normalize(&sql))
        })
        .collect()
}

/// Normalises a rendered dry run for a golden file: ports, positions, versions and row
/// estimates differ between machines and runs.
fn golden(text: &str) -> String {
    let (head, rest) = text.split_once('\n').unwrap_or((text, ""));
    let head = mark_until(head, "(dry run: read-only; ", ')', "<flavors>");
    let s = common::mask_directory_id(rest, "<dir>_");
    let s = mark_digits(&s, "MASTER_PORT = ", "<port>");
    let s = mark_digits(&s, "MASTER_LOG_POS = ", "<pos>");
    let s = mark_digits(&s, "\"pos\":", "<pos>");
    let s = mark_digits(&s, "mysql-bin.000001', ", "<pos>");
    let s = mark_digits(&s, "position mysql-bin.000001:", "<pos>");
    let s = mark_digits(&s, "replica from mysql-bin.000001:", "<pos>");
    let s = mark_digits(&s, "under the fence (mysql-bin.000001:", "<pos>");
    let s = mark_digits(&s, "about ", "<n>");
    format!("{head}\n{s}")
}

fn shard_node(shard: u32) -> String {
    let inv = common::inventory(FLEET.sandbox());
    shardctl::directory::Directory::open(&inv)
        .unwrap()
        .load()
        .unwrap()
        .shard(shard)
        .unwrap()
        .node
        .clone()
}

/// Runs the dry run of `args`, then the real command with the capture on, and compares.
fn dry_equals_live(name: &str, args: &[&str], split: bool) {
    let mut dry_args = args.to_vec();
    dry_args.push("--dry-run");
    let out = FLEET.cli(&dry_args).output().unwrap();
    assert!(out.status.success(), "{name}: {out:?}");
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    insta::assert_snapshot!(name, golden(&text));
    let mut json_args = vec!["--output", "json"];
    json_args.extend_from_slice(&dry_args);
    let out = FLEET.cli(&json_args).output().unwrap();
    assert!(out.status.success(), "{name}: {out:?}");
    let plan: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let dry = dry_statements(&plan["plan"]);

    let dir = tempfile::tempdir().unwrap();
    let capture = dir.path().join("capture.jsonl");
    let out = FLEET
        .cli(args)
        .env("SHARDCTL_CAPTURE", &capture)
        .output()
        .unwrap();
    assert!(out.status.success(), "{name}: {out:?}");
    let new_shard = split.then(|| {
        let inv = common::inventory(FLEET.sandbox());
        let mut d = shardctl::directory::Directory::open(&inv).unwrap();
        let op = d
            .operations(None)
            .unwrap()
            .into_iter()
            .find(|o| o.kind == shardctl::directory::journal::OpKind::Split)
            .unwrap();
        serde_json::from_value::<shardctl::ops::split::SplitPlan>(op.params["split"].clone())
            .unwrap()
            .new_shard
    });
    let live = live_statements(&capture, new_shard);
    assert!(!live.is_empty(), "{name}: nothing captured");
    let (dry, live) = (one_gate_per_wait(dry), one_gate_per_wait(live));
    if dry != live {
        let show = |v: &[(String, String)]| {
            v.iter()
                .map(|(n, s)| format!("  [{n}] {s}"))
                .collect::<Vec<_>>()
                .join("\n")
        };
        panic!(
            "{name}: the dry run and the live run differ\n--- dry run ({})\n{}\n--- live run ({})\n{}",
            dry.len(),
            show(&dry),
            live.len(),
            show(&live)
        );
    }
    println!("{name}: {} statements, identical", live.len());
}

#[test]
fn dry_runs_print_exactly_what_the_live_runs_send() {
    FLEET.sandbox();
    let _s = serial();
    // A move with the shard fence and the native copy.
    assert_eq!(shard_node(1), "node1");
    dry_equals_live(
        "move_shard_fence_native",
        &[
            "move", "--shard", "1", "--to", "node3", "--fence", "shard", "--method", "native",
        ],
        false,
    );
    assert_eq!(shard_node(1), "node3");
    // A move with the read-only fence and the dump copy.
    dry_equals_live(
        "move_read_only_fence_dump",
        &[
            "move",
            "--shard",
            "1",
            "--to",
            "node2",
            "--fence",
            "read-only",
            "--method",
            "dump",
        ],
        false,
    );
    assert_eq!(shard_node(1), "node2");
    // A split onto another node.
    dry_equals_live(
        "split_onto_another_node",
        &["split", "--shard", "1", "--to", "node1", "--at", "1500"],
        true,
    );
    // A split onto the shard's own node.
    dry_equals_live(
        "split_onto_its_own_node",
        &["split", "--shard", "2", "--to", "node2", "--at", "1001000"],
        true,
    );
    prune_dry_run_equals_live();
    // A merge of the two halves of shard 2 back into it, on their node: the copy under the
    // fence, the flip, the survivor's split guards widened, the retired schemas dropped.
    let inv = common::inventory(FLEET.sandbox());
    let snap = shardctl::directory::Directory::open(&inv)
        .unwrap()
        .load()
        .unwrap();
    let half = snap
        .ranges
        .iter()
        .find(|r| r.lower_bound == shardctl::directory::Key::Int(1001000))
        .unwrap()
        .shard_id;
    // A merge on one node is kept current by the change stream, which applies the rows
    // the retired shard's triggers wrote: a survivor with a trigger of its own on a
    // sharded table would fire it again. Refused in one line, nothing changed; once the
    // trigger is gone, the merge goes ahead.
    let merge_args = ["merge", "--shards", &format!("2,{half}"), "--to", "node2"];
    FLEET
        .cli(&merge_args)
        .assert()
        .code(5)
        .stderr(predicates::str::contains(
            "app_2.t on node2 has trigger t_upper",
        ));
    let version = shardctl::directory::Directory::open(&inv)
        .unwrap()
        .load()
        .unwrap()
        .version;
    assert_eq!(
        version, snap.version,
        "the refused merge changed the directory"
    );
    let mut n2 = connect(FLEET.sandbox(), "node2");
    exec(&mut n2, &["DROP TRIGGER app_2.t_upper"]);
    dry_equals_live(
        "merge_on_one_node",
        &["merge", "--shards", &format!("2,{half}"), "--to", "node2"],
        false,
    );
    assert!(shardctl::directory::Directory::open(&inv)
        .unwrap()
        .load()
        .unwrap()
        .shard(half)
        .is_err());
    // A merge across nodes: shard 1 ([0, 1500) on node2, with the guards of its split)
    // takes the split's new shard ([1500, 1000000) on node1) through a channel.
    let other = shardctl::directory::Directory::open(&inv)
        .unwrap()
        .load()
        .unwrap()
        .ranges
        .iter()
        .find(|r| r.lower_bound == shardctl::directory::Key::Int(1500))
        .unwrap()
        .shard_id;
    assert_eq!(shard_node(1), "node2");
    assert_eq!(shard_node(other), "node1");
    dry_equals_live(
        "merge_across_nodes",
        &["merge", "--shards", &format!("1,{other}"), "--to", "node2"],
        false,
    );
}

/// Prune: every DELETE the live prune sends is one its dry run printed for that table
/// (each chunk binds its own keys), and each table with rows to delete starts with the
/// first one.
fn prune_dry_run_equals_live() {
    // Shard 1 (now [0, 1500) on node2) receives rows it does not own.
    let node = shard_node(1);
    let mut s = connect(FLEET.sandbox(), &node);
    exec(
        &mut s,
        &[
            // The split's guards refuse these keys; a session marked as pruning passes.
            "SET @shardctl_pruning = 1",
            "INSERT INTO app_1.t SELECT seq, MD5(seq) FROM app_1.seq_1600_to_4600",
            "INSERT INTO app_1.u SELECT seq, seq FROM app_1.seq_1600_to_4600",
        ],
    );
    let out = FLEET
        .cli(&["--output", "json", "prune", "--shard", "1", "--dry-run"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let dry: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let capture = dir.path().join("capture.jsonl");
    FLEET
        .cli(&["prune", "--shard", "1", "--chunk-ms", "1"])
        .env("SHARDCTL_CAPTURE", &capture)
        .assert()
        .success();
    let text = std::fs::read_to_string(&capture).unwrap();
    let sent: Vec<String> = text
        .lines()
        .map(|l| serde_json::from_str::<Captured>(l).unwrap())
        .filter(|c| c.purpose == Purpose::Prune && c.sql.starts_with("DELETE"))
        .map(|c| c.sql)
        .collect();
    assert!(sent.len() >= 2, "the prune sent {} deletes", sent.len());
    for table in dry["tables"].as_array().unwrap() {
        let name = table["table"].as_str().unwrap();
        let statements: Vec<&str> = table["statements"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        let mine: Vec<&String> = sent
            .iter()
            .filter(|st| {
                st.starts_with(&format!(
                    "DELETE FROM `{}`.`{}`",
                    "app_1",
                    name.rsplit('.').next().unwrap()
                ))
            })
            .collect();
        if table["rows_to_delete"].as_u64().unwrap() > 0 {
            assert_eq!(
                mine.first().map(|s| s.as_str()),
                Some(statements[0]),
                "{name}"
            );
        }
        for st in &mine {
            assert!(
                statements.contains(&st.as_str()),
                "{name}: the dry run did not print {st}"
            );
        }
    }
    let mut s = connect(FLEET.sandbox(), &node);
    assert_eq!(
        common::count(&mut s, "SELECT COUNT(*) FROM app_1.t WHERE id >= 1500"),
        0
    );
    println!("prune: {} deletes, each printed by the dry run", sent.len());
}

#[test]
fn a_dry_run_changes_nothing_and_check_refuses_what_the_run_would() {
    FLEET.sandbox();
    let _s = serial();
    let inv = common::inventory(FLEET.sandbox());
    let version = shardctl::directory::Directory::open(&inv)
        .unwrap()
        .version()
        .unwrap();
    let ops = shardctl::directory::Directory::open(&inv)
        .unwrap()
        .operations(None)
        .unwrap()
        .len();
    let to = if shard_node(2) == "node3" {
        "node1"
    } else {
        "node3"
    };
    FLEET
        .cli(&["move", "--shard", "2", "--to", to, "--dry-run"])
        .assert()
        .success()
        .stdout(predicates::str::contains("flip: shard 2"));
    FLEET
        .cli(&["move", "--shard", "2", "--to", to, "--check"])
        .assert()
        .success()
        .stdout(predicates::str::contains("preflight passed"));
    let mut d = shardctl::directory::Directory::open(&inv).unwrap();
    assert_eq!(d.version().unwrap(), version, "the directory is unchanged");
    assert_eq!(d.operations(None).unwrap().len(), ops, "nothing journaled");
    // The target already holds the shard's schema: the check refuses, as the run would.
    let mut t = connect(FLEET.sandbox(), to);
    exec(&mut t, &["CREATE DATABASE app_2"]);
    FLEET
        .cli(&["move", "--shard", "2", "--to", to, "--check"])
        .assert()
        .code(5)
        .stderr(predicates::str::contains("already has a schema app_2"));
    exec(&mut t, &["DROP DATABASE app_2"]);
    // The offline mode still connects nowhere.
    let out = shardctl()
        .args(["--config"])
        .arg(FLEET.inventory_path())
        .args(["move", "--shard", "2", "--to", to, "--dry-run", "--offline"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
}
