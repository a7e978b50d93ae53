//! The JSON contract (docs/JSON.md): every command's `--output json`, run on real servers,
//! checked against the contract's rules and kept as a golden file. Values that differ from
//! run to run (ports, times, positions, sizes, process ids) are replaced by `<name>`
//! placeholders that keep null as null, so the golden file still shows which fields may be
//! null and which never are.

mod common;

use common::{connect, exec, shardctl};
use serde_json::Value;
use shardctl::sandbox::SandboxBuilder;

/// Fields whose values change from run to run.
const VOLATILE: &[&str] = &[
    "address",
    "at",
    "bytes",
    "checked_at",
    "config",
    "copied_rows",
    "created_at",
    "dir",
    "directory_version",
    "elapsed_ms",
    "ended_ms",
    "ends_at",
    "fence_ms",
    "file",
    "flavor",
    "flavors",
    "gtid",
    "heartbeat_age_ms",
    "inventory",
    "listen",
    "seconds_behind",
    "out",
    "paused_at",
    "pid",
    "port",
    "pos",
    "recorded_at",
    "rows",
    "seconds",
    "server",
    "server_id",
    "shard_bytes",
    "started_ms",
    "throttled_ms",
    "updated_at",
    "version",
];

/// Step- and plan-specific reports: their fields are not part of the contract (docs/JSON.md).
const FREE_FORM: &[&str] = &[
    "detail",
    "inputs",
    "params",
    "state_after_last_step",
    "actions",
    "notes",
    "settings",
    "coordinates",
    "final_position",
    "report",
    "split",
    "effects",
    "step_list",
    "plans",
    "plan",
    "candidates",
];

/// Keys the contract replaced: a shard is `shard`, an operation `op`, a step `step`.
const RETIRED: &[&str] = &[
    "id",
    "shard_id",
    "func_id",
    "step_no",
    "sharding_type",
    "key_type",
    "millis",
    "io_running",
];

fn parse_all(stdout: &[u8]) -> Vec<Value> {
    serde_json::Deserializer::from_slice(stdout)
        .into_iter::<Value>()
        .map(|v| v.unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(stdout))))
        .collect()
}

fn is_rfc3339_utc(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 24
        && b.iter().enumerate().all(|(i, c)| match i {
            4 | 7 => *c == b'-',
            10 => *c == b'T',
            13 | 16 => *c == b':',
            19 => *c == b'.',
            23 => *c == b'Z',
            _ => c.is_ascii_digit(),
        })
}

/// The contract's rules, everywhere outside the free-form reports.
fn check_rules(path: &str, v: &Value, problems: &mut Vec<String>) {
    match v {
        Value::Object(map) => {
            for (k, x) in map {
                let here = format!("{path}.{k}");
                if FREE_FORM.contains(&k.as_str()) {
                    continue;
                }
                if RETIRED.contains(&k.as_str()) {
                    problems.push(format!("{here}: retired key"));
                }
                let snake = k.chars().next().is_some_and(|c| c.is_ascii_lowercase())
                    && k.chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
                if !snake && path != "$.flavors" {
                    problems.push(format!("{here}: not snake_case"));
                }
                if (k.ends_with("_at") || k == "at")
                    && !(x.is_null() || x.as_str().is_some_and(is_rfc3339_utc))
                {
                    problems.push(format!("{here}: {x} is not RFC 3339 UTC"));
                }
                if k.ends_with("_ms") && !(x.is_null() || x.is_u64()) {
                    problems.push(format!("{here}: {x} is not whole milliseconds"));
                }
                if matches!(k.as_str(), "shard" | "op" | "step" | "new_shard")
                    && !(x.is_null() || x.is_u64())
                {
                    problems.push(format!("{here}: {x} is not an id"));
                }
                if matches!(k.as_str(), "node" | "function" | "from" | "to")
                    && !(x.is_null() || x.is_string())
                {
                    problems.push(format!("{here}: {x} is not a name"));
                }
                if k.starts_with("is_") || k.starts_with("has_") {
                    problems.push(format!("{here}: booleans are named without is_/has_"));
                }
                check_rules(&here, x, problems);
            }
        }
        Value::Array(items) => {
            for (i, x) in items.iter().enumerate() {
                check_rules(&format!("{path}[{i}]"), x, problems);
            }
        }
        Value::String(s) if s == "Yes" || s == "No" => {
            problems.push(format!("{path}: {s:?} where a boolean belongs"));
        }
        _ => {}
    }
}

fn normalize(v: &Value) -> Value {
    match v {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, x)| {
                    let x = if x.is_null() {
                        Value::Null
                    } else if VOLATILE.contains(&k.as_str()) {
                        Value::String(format!("<{k}>"))
                    } else if FREE_FORM.contains(&k.as_str()) {
                        Value::String(format!("<{k}: {}>", kind(x)))
                    } else {
                        normalize(x)
                    };
                    (k.clone(), x)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(normalize).collect()),
        other => other.clone(),
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Object(_) => "object",
        Value::Array(_) => "array",
        Value::String(_) => "string",
        Value::Number(_) => "number",
        Value::Bool(_) => "bool",
        Value::Null => "null",
    }
}

/// The documents of every command run, checked and collected for the golden file.
struct Contract {
    config: std::path::PathBuf,
    golden: String,
    problems: Vec<String>,
    commands: std::collections::BTreeSet<String>,
    /// The next runs' lines go to the golden file sorted (events whose order depends on
    /// which shard answers first).
    unordered: bool,
}

impl Contract {
    /// Runs `shardctl --output json ARGS`, expecting `code`; checks every document on
    /// stdout (and the error object on stderr when it fails) and records them.
    fn run_code(&mut self, args: &[&str], code: i32) -> Vec<Value> {
        let out = shardctl()
            .arg("--config")
            .arg(&self.config)
            .args(["--output", "json"])
            .args(args)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(code),
            "{args:?}: {}\n{}",
            String::from_utf8_lossy(&out.stderr),
            String::from_utf8_lossy(&out.stdout)
        );
        let docs = parse_all(&out.stdout);
        assert!(code != 0 || !docs.is_empty(), "{args:?}: no JSON on stdout");
        let shown: Vec<&str> = args
            .iter()
            .enumerate()
            .map(|(i, a)| match *a {
                a if a.starts_with('/') => "<path>",
                a if a.contains("-bin.") => "<position>",
                _ if i > 0 && args[i - 1] == "--base-port" => "<port>",
                a => a,
            })
            .collect();
        self.golden
            .push_str(&format!("## shardctl {}\n", shown.join(" ")));
        let mut lines = Vec::new();
        for d in &docs {
            let command = d["command"].as_str().unwrap_or_default().to_string();
            assert_eq!(d["json_version"], 1, "{args:?}: {d}");
            assert!(
                args.join(" ").contains(&command) && !command.is_empty(),
                "{args:?}: command {command:?}"
            );
            self.commands.insert(command);
            check_rules("$", d, &mut self.problems);
            lines.push(serde_json::to_string(&normalize(d)).unwrap());
        }
        if self.unordered {
            lines.sort();
        }
        for line in lines {
            self.golden.push_str(&line);
            self.golden.push('\n');
        }
        if code != 0 {
            let err: Value = serde_json::from_slice(out.stderr.trim_ascii()).unwrap_or_else(|e| {
                panic!("{args:?}: stderr is not one JSON object ({e}): {out:?}")
            });
            assert_eq!(err["error"]["exit_code"], code, "{err}");
            self.golden
                .push_str(&format!("stderr: {}\n", normalize(&err["error"]["kind"])));
        }
        docs
    }

    fn run(&mut self, args: &[&str]) -> Vec<Value> {
        self.run_code(args, 0)
    }

    /// Starts a serving command (`exporter`) under `--output json`, reads the document it
    /// prints as it starts, stops it, and checks and records the document as [`run_code`]
    /// does.
    fn serving(&mut self, args: &[&str]) -> Value {
        use std::io::BufRead;
        let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("shardctl"))
            .env_remove("SHARDCTL_CONFIG")
            .arg("--config")
            .arg(&self.config)
            .args(["--output", "json"])
            .args(args)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let mut reader = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut text = String::new();
        let doc = loop {
            let read = reader.read_line(&mut text).unwrap();
            if let Ok(doc) = serde_json::from_str::<Value>(&text) {
                break doc;
            }
            if read == 0 {
                let _ = child.kill();
                panic!("{args:?}: no JSON document at start: {text}");
            }
        };
        let _ = child.kill();
        let _ = child.wait();
        assert_eq!(doc["json_version"], 1, "{args:?}: {doc}");
        let command = doc["command"].as_str().unwrap_or_default().to_string();
        assert!(
            args.join(" ").contains(&command) && !command.is_empty(),
            "{doc}"
        );
        self.commands.insert(command);
        check_rules("$", &doc, &mut self.problems);
        self.golden
            .push_str(&format!("## shardctl {}\n", args.join(" ")));
        self.golden
            .push_str(&serde_json::to_string(&normalize(&doc)).unwrap());
        self.golden.push('\n');
        doc
    }
}

/// Every command of the tool that prints a result, in a run from an empty fleet to moved,
/// split and pruned shards, the steps driven by hand, and the directory taken apart again.
#[test]
fn every_command_follows_the_json_contract() {
    let sb = SandboxBuilder::for_tests(4).unwrap().start().unwrap();
    let mut n1 = connect(&sb, "node1");
    exec(
        &mut n1,
        &[
            "CREATE DATABASE app",
            "CREATE TABLE app.t (id INT PRIMARY KEY, v INT, KEY (v))",
            "CREATE TABLE app.g (code CHAR(2) PRIMARY KEY, name VARCHAR(20))",
            "INSERT INTO app.g VALUES ('dk', 'Denmark'), ('no', 'Norway')",
            "CREATE TABLE app.u (k VARCHAR(20) PRIMARY KEY)",
        ],
    );
    common::load_fixture(&sb, "company.sql", None);
    let mut c = Contract {
        config: sb.inventory_path(),
        golden: String::new(),
        problems: Vec::new(),
        commands: Default::default(),
        unordered: false,
    };
    let dir = sb.dir().to_str().unwrap().to_string();
    c.run(&["sandbox", "status", "--dir", &dir]);
    c.run(&["config", "check"]);
    c.serving(&["exporter", "--listen", "127.0.0.1:0"]);
    c.run(&["init"]);
    for n in ["node1", "node2", "node3"] {
        c.run(&["node", "add", n]);
    }
    c.run(&["node", "remove", "node3"]);
    c.run(&["node", "add", "node3"]);
    c.run(&["node", "list"]);
    c.run(&["function", "add", "f", "--type", "range", "--key", "int"]);
    c.run(&["function", "add", "emp", "--type", "range", "--key", "int"]);
    c.run(&["function", "list"]);
    c.run(&["table", "add", "app.t", "--function", "f", "--column", "id"]);
    c.run(&["table", "add", "app.g", "--global"]);
    for t in [
        "employees",
        "dept_emp",
        "dept_manager",
        "titles",
        "salaries",
    ] {
        c.run(&[
            "table",
            "add",
            &format!("employees.{t}"),
            "--function",
            "emp",
            "--column",
            "emp_no",
        ]);
    }
    c.run(&["table", "list"]);
    c.run(&[
        "shard",
        "add",
        "--function",
        "f",
        "--node",
        "node1",
        "--lower-bound",
        "0",
    ]);
    c.run(&[
        "shard",
        "add",
        "--function",
        "f",
        "--node",
        "node2",
        "--lower-bound",
        "1000",
    ]);
    c.run(&[
        "shard",
        "add",
        "--function",
        "emp",
        "--node",
        "node3",
        "--lower-bound",
        "0",
    ]);
    c.run(&["shard", "list"]);
    let mut n2 = connect(&sb, "node2");
    exec(
        &mut n1,
        &["INSERT INTO app_1.t SELECT seq, seq FROM app_1.seq_1_to_300"],
    );
    exec(
        &mut n2,
        &["INSERT INTO app_2.t SELECT seq, seq FROM app_2.seq_1000_to_1300"],
    );
    c.run(&["sample", "--count", "20", "--start", "1", "--step", "3"]);
    c.run(&["lookup", "--function", "f", "5"]);
    c.run(&["lookup", "--table", "app.t", "1200"]);
    c.run(&["analyze", "--schema", "employees"]);
    c.run(&["status"]);

    // A move: its check, its dry runs, the run's events and summary, a refused check.
    c.run(&["move", "--shard", "1", "--to", "node3", "--check"]);
    c.run(&["move", "--shard", "1", "--to", "node3", "--dry-run"]);
    c.run(&[
        "move",
        "--shard",
        "1",
        "--to",
        "node3",
        "--dry-run",
        "--offline",
    ]);
    let events = c.run(&["move", "--shard", "1", "--to", "node3"]);
    let last = events.last().unwrap();
    assert_eq!(
        (last["event"].as_str(), last["outcome"].as_str()),
        (Some("summary"), Some("moved")),
        "{last}"
    );
    assert!(
        events[..events.len() - 1].iter().all(|e| e["event"]
            .as_str()
            .unwrap()
            .starts_with("step_")
            && e["op"] == 1),
        "every other line is a step event of operation 1"
    );
    c.run_code(&["move", "--shard", "1", "--to", "node3", "--check"], 2);

    // A split, then the prune it already ran, dry and real.
    c.run(&[
        "split", "--shard", "2", "--to", "node1", "--at", "1150", "--check",
    ]);
    let events = c.run(&["split", "--shard", "2", "--to", "node1", "--at", "1150"]);
    let new_shard = events.last().unwrap()["new_shard"].as_u64().unwrap();
    c.run(&["prune", "--shard", &new_shard.to_string(), "--dry-run"]);
    c.run(&["prune", "--shard", "2"]);

    // Rebalancing: a plan, its dry run and its run.
    let tmp = tempfile::tempdir().unwrap();
    let plan = tmp.path().join("plan.yaml");
    let plan = plan.to_str().unwrap();
    c.run(&[
        "rebalance",
        "plan",
        "--by",
        "count",
        "--drain",
        "node3",
        "--out",
        plan,
    ]);
    c.run(&["rebalance", "apply", plan, "--dry-run"]);
    c.run(&["rebalance", "apply", plan]);

    // The journal.
    c.run(&["ops"]);
    c.run(&["ops", "--kind", "move", "--state", "done", "--limit", "1"]);
    c.run(&["ops", "1"]);
    c.run(&["stop", "1"]);

    // A move that died after its confirm step: flipped by hand, then resumed; another
    // that died after verifying: aborted.
    let failed = shardctl()
        .arg("--config")
        .arg(&c.config)
        .env("SHARDCTL_FAULT", "crash@after:confirm")
        .args(["move", "--shard", "1", "--to", "node2"])
        .output()
        .unwrap();
    assert!(!failed.status.success());
    let op = last_op(&mut c);
    c.run(&["flip", "--shard", "1", "--to", "node2"]);
    c.run(&["resume", &op.to_string()]);
    let failed = shardctl()
        .arg("--config")
        .arg(&c.config)
        .env("SHARDCTL_FAULT", "crash@after:verify")
        .args(["move", "--shard", "1", "--to", "node3"])
        .output()
        .unwrap();
    assert!(!failed.status.success());
    let op = last_op(&mut c);
    c.run(&["abort", &op.to_string()]);

    // The chapter's steps by hand: a copy of shard 1 (now on node2) on node3, kept current
    // by a filtered channel, fenced, caught up, unfenced, and the stale copy dropped.
    let backup = c.run(&["backup", "--shard", "1", "--into", "node3"]);
    let pos = &backup[0]["coordinates"]["position"];
    let pos = format!("{}:{}", pos["file"].as_str().unwrap(), pos["pos"]);
    c.run(&[
        "change-master",
        "--node",
        "node3",
        "--channel",
        "hand",
        "--from",
        "node2",
        "--position",
        &pos,
        "--no-start",
    ]);
    c.run(&[
        "filter",
        "--node",
        "node3",
        "--channel",
        "hand",
        "--schemas",
        "app_1",
    ]);
    c.run(&[
        "change-master",
        "--node",
        "node3",
        "--channel",
        "hand",
        "--from",
        "node2",
        "--position",
        &pos,
    ]);
    c.run(&[
        "wait",
        "--node",
        "node3",
        "--channel",
        "hand",
        "--lag-below",
        "1",
        "--timeout",
        "60",
    ]);
    let lock = c.run(&["lock", "--shard", "1", "--fence", "shard"]);
    let fin = &lock[0]["final_position"];
    let fin = format!("{}:{}", fin["file"].as_str().unwrap(), fin["pos"]);
    c.run(&[
        "wait",
        "--node",
        "node3",
        "--channel",
        "hand",
        "--position",
        &fin,
        "--timeout",
        "30",
    ]);
    c.run_code(&["flip", "--shard", "1", "--to", "node3"], 5);
    c.run(&["unlock", "--shard", "1"]);
    let mut n3 = connect(&sb, "node3");
    exec(&mut n3, &["STOP SLAVE 'hand'", "RESET SLAVE 'hand' ALL"]);
    c.run(&["drop-source", "--shard", "1", "--node", "node3"]);

    c.run(&[
        "workload",
        "--function",
        "f",
        "--setup",
        "--rate",
        "50",
        "--seconds",
        "1",
    ]);

    // A move that waits for its cut-over, given the go-ahead.
    let (mut waiting, op) = move_until_step(
        &mut c,
        &["--to", "node1", "--cutover", "manual"],
        "await-cutover",
    );
    // Operator control while it waits: paused, throttled, continued.
    c.run(&["pause", &op.to_string()]);
    c.run(&["throttle", &op.to_string(), "--workers", "2"]);
    c.run(&["continue", &op.to_string()]);
    c.run(&["cutover", &op.to_string()]);
    assert!(waiting.wait().unwrap().success());

    // Moves that wait in their revert window: one reverted, one finalized.
    for verb in ["revert", "finalize"] {
        let (mut waiting, op) = move_until_step(
            &mut c,
            &["--to", "node2", "--revert-window", "10m"],
            "revert-window",
        );
        if verb == "finalize" {
            c.run(&["extend", &op.to_string(), "--by", "1h"]);
            until_window_ends_later(&c.config, op);
        }
        c.run(&[verb, &op.to_string()]);
        assert!(waiting.wait().unwrap().success());
    }

    // The reference tools: what-if, ids, global tables, a query over every shard.
    c.run(&[
        "simulate",
        "--range",
        "1..10001",
        "--nodes",
        "4",
        "--to-nodes",
        "5",
    ]);
    c.run(&["ids", "sequence", "create", "orders"]);
    c.run(&["ids", "sequence", "next", "orders", "--count", "3"]);
    c.run(&["ids", "sequence", "feeds", "orders", "app.t.id"]);
    c.run(&["ids", "sequence", "raise", "orders"]);
    c.run(&["ids", "sequence", "show"]);
    c.run(&["ids", "check"]);
    c.run(&["global", "check"]);
    c.run(&["global", "source", "app.g", "--shard", "1"]);
    c.run(&["global", "sync", "--dry-run"]);
    c.run(&["global", "sync"]);
    c.run(&["query", "--function", "f", "SELECT COUNT(*) AS n FROM {t}"]);
    // Plain rows stream; the shards' events interleave as they answer.
    c.unordered = true;
    c.run(&[
        "query",
        "--function",
        "f",
        "SELECT id FROM {t} WHERE id < 3",
    ]);
    c.unordered = false;

    // A reporting server: node4, which holds no shard.
    c.run(&["reporting", "attach", "node4", "--dry-run"]);
    c.run(&["reporting", "attach", "node4"]);
    c.run(&["reporting", "status"]);
    c.run(&["reporting", "sync"]);
    c.run(&["reporting", "check"]);
    c.run(&["reporting", "status"]);
    c.run(&["reporting", "detach", "node4", "--drop"]);

    // Taking the directory apart again.
    c.run(&[
        "function", "add", "tmp", "--type", "hash", "--key", "string",
    ]);
    c.run(&[
        "table",
        "add",
        "app.u",
        "--function",
        "tmp",
        "--column",
        "k",
    ]);
    let added = c.run(&[
        "shard",
        "add",
        "--function",
        "tmp",
        "--node",
        "node3",
        "--point",
        "auto",
    ]);
    let tmp_shard = added[0]["shard"].as_u64().unwrap().to_string();
    // A merge of two arcs on one node: its check, then its events and summary.
    let added = c.run(&[
        "shard",
        "add",
        "--function",
        "tmp",
        "--node",
        "node3",
        "--point",
        "auto",
    ]);
    let other = added[0]["shard"].as_u64().unwrap().to_string();
    let both = format!("{tmp_shard},{other}");
    c.run(&["merge", "--shards", &both, "--to", "node3", "--check"]);
    let events = c.run(&["merge", "--shards", &both, "--to", "node3"]);
    assert_eq!(
        events.last().unwrap()["outcome"].as_str(),
        Some("merged"),
        "{events:?}"
    );
    c.run(&["shard", "remove", "--shard", &tmp_shard]);
    c.run(&["table", "remove", "app.u"]);
    c.run(&["function", "remove", "tmp"]);

    // The operator's availability of a shard (last: its operations take ids).
    c.run(&[
        "shard",
        "set-availability",
        "--shard",
        "2",
        "unavailable",
        "--reason",
        "host down",
    ]);
    c.run(&["shard", "set-availability", "--shard", "2", "unavailable"]);
    c.run(&["shard", "list"]);
    c.run(&["lookup", "--function", "f", "1100"]);
    c.run_code(&["query", "--function", "f", "SELECT COUNT(*) FROM {t}"], 7);
    c.run_code(
        &["shard", "set-availability", "--shard", "99", "available"],
        2,
    );
    c.run(&["shard", "set-availability", "--shard", "2", "available"]);

    // A per-key function: a shard, keys assigned and imported, a key looked up.
    exec(
        &mut n1,
        &[
            "CREATE DATABASE kapp",
            "CREATE TABLE kapp.users (uid BIGINT NOT NULL PRIMARY KEY)",
        ],
    );
    c.run(&["function", "add", "users", "--type", "key", "--key", "int"]);
    c.run(&[
        "table",
        "add",
        "kapp.users",
        "--function",
        "users",
        "--column",
        "uid",
    ]);
    let users = c.run(&["shard", "add", "--function", "users", "--node", "node1"]);
    let users_shard = users[0]["shard"].as_u64().unwrap();
    c.run(&["keys", "assign", "--function", "users", "7", "8"]);
    let keys_file = common::write_file(
        tmp.path(),
        "users.csv",
        &format!("7,{users_shard}\n9,{users_shard}\n"),
    );
    c.run(&[
        "keys",
        "import",
        "--function",
        "users",
        "--file",
        keys_file.to_str().unwrap(),
    ]);
    c.run(&["lookup", "--function", "users", "9"]);
    // A per-key shard's key count, in `shard list` and `status`.
    c.run(&["shard", "list"]);
    c.run(&["status"]);

    // A sandbox's own life cycle.
    let sb_dir = tmp.path().join("sb");
    let port = free_port().to_string();
    let sb_dir = sb_dir.to_str().unwrap();
    c.run(&[
        "sandbox",
        "up",
        "--nodes",
        "1",
        "--dir",
        sb_dir,
        "--base-port",
        &port,
    ]);
    c.run(&["sandbox", "down", "--dir", sb_dir, "--purge"]);

    assert!(c.problems.is_empty(), "{:#?}", c.problems);
    // Every command that prints a result was run (completions and man print scripts and
    // roff, never JSON).
    let expected = [
        "abort",
        "analyze",
        "backup",
        "change-master",
        "config check",
        "continue",
        "cutover",
        "drop-source",
        "exporter",
        "extend",
        "filter",
        "finalize",
        "flip",
        "function add",
        "function list",
        "function remove",
        "global check",
        "global source",
        "global sync",
        "ids check",
        "ids sequence create",
        "ids sequence feeds",
        "ids sequence next",
        "ids sequence raise",
        "ids sequence show",
        "keys assign",
        "keys import",
        "query",
        "reporting attach",
        "reporting check",
        "reporting detach",
        "reporting status",
        "reporting sync",
        "simulate",
        "init",
        "lock",
        "lookup",
        "merge",
        "move",
        "node add",
        "node list",
        "node remove",
        "ops",
        "pause",
        "prune",
        "rebalance apply",
        "rebalance plan",
        "resume",
        "revert",
        "sample",
        "sandbox down",
        "sandbox status",
        "sandbox up",
        "shard add",
        "shard list",
        "shard remove",
        "shard set-availability",
        "split",
        "status",
        "stop",
        "table add",
        "table list",
        "table remove",
        "throttle",
        "unlock",
        "wait",
        "workload",
    ];
    let missing: Vec<&str> = expected
        .iter()
        .copied()
        .filter(|e| !c.commands.contains(*e))
        .collect();
    assert!(missing.is_empty(), "no JSON seen from {missing:?}");
    insta::assert_snapshot!("every_command", c.golden);
}

/// `move --shard 1 ARGS` in the background, once the operation runs step `step`: the
/// child and the operation.
// The child is handed to the caller, which waits for it.
#[allow(clippy::zombie_processes)]
fn move_until_step(c: &mut Contract, args: &[&str], step: &str) -> (std::process::Child, u64) {
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("shardctl"))
        .env("SHARDCTL_YES", "1")
        .arg("--config")
        .arg(&c.config)
        .args(["move", "--shard", "1"])
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    loop {
        let op = last_op(c);
        let out = shardctl()
            .arg("--config")
            .arg(&c.config)
            .args(["--output", "json", "ops", &op.to_string()])
            .output()
            .unwrap();
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        if v["operation"]["current_step"]["name"] == step && v["operation"]["state"] == "running" {
            return (child, op);
        }
        if std::time::Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the move never reached step {step}: {v}");
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}

/// Waits until the owner of `op` took up an `extend` (one window request at a time): its
/// journaled window end moves past an hour from now.
fn until_window_ends_later(config: &std::path::Path, op: u64) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let out = shardctl()
            .arg("--config")
            .arg(config)
            .args(["--output", "json", "ops", &op.to_string()])
            .output()
            .unwrap();
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        let until = v["operation"]["state_after_last_step"]["revert_until_unix"].as_i64();
        if until.is_some_and(|u| u > shardctl::clock::unix_secs() + 3000) {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "extend never taken up: {v}"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}

fn last_op(c: &mut Contract) -> u64 {
    let out = shardctl()
        .arg("--config")
        .arg(&c.config)
        .args(["--output", "json", "ops", "--limit", "1"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v["operations"][0]["op"].as_u64().unwrap()
}

/// Free ports below the ephemeral range (test binaries run side by side).
fn free_port() -> u16 {
    shardctl::sandbox::free_test_ports(3).expect("a free port")
}
