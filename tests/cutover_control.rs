//! Operator control of the cut-over (issue 14): a move that waits, unfenced and caught up,
//! for `shardctl cutover` or a window, and goes back to waiting when resumed after a crash;
//! hooks at every stage with the operation's JSON, a failing `before-cutover` hook that
//! postpones the cut-over, a hanging hook killed at its timeout; `ops --watch` and
//! `status --watch`; and the refusals.

mod common;

use common::{app_items_two_shards, serial, shardctl, wait_exit, SharedFleet};
use shardctl::config::Inventory;
use shardctl::directory::Directory;
use shardctl::sandbox::Sandbox;
use shardctl::workload;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const USAGE: i32 = 2;

static FLEET: SharedFleet = SharedFleet::new(3, set_up);

/// Sets up the fleet once, on first use (see [`FLEET`]).
fn set_up(sb: &Sandbox) {
    app_items_two_shards(20000).build(sb);
}

fn inventory() -> Inventory {
    common::inventory(FLEET.sandbox())
}

/// shardctl in the background, its output in files.
fn spawn(args: &[&str], dir: &std::path::Path, name: &str) -> Child {
    common::spawn_shardctl(&FLEET.inventory_path(), args, None, dir, name)
}

fn newest_op() -> Option<shardctl::directory::journal::OperationRecord> {
    common::newest_op(&inventory())
}

fn last_op() -> shardctl::directory::journal::OperationRecord {
    newest_op().expect("an operation")
}

/// Waits until the newest operation runs its await-cutover step.
fn until_waiting(within: Duration) -> u64 {
    let deadline = Instant::now() + within;
    loop {
        let op = newest_op();
        if let Some(op) = &op {
            let next = op.steps.iter().find(|s| s.state.as_sql() != "done");
            if op.state.as_sql() == "running"
                && next.is_some_and(|s| s.name == "await-cutover" && s.state.as_sql() == "running")
            {
                return op.id;
            }
        }
        assert!(Instant::now() < deadline, "never waited: {op:?}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn home_of(shard: u32) -> String {
    Directory::open(&inventory())
        .unwrap()
        .load()
        .unwrap()
        .shard(shard)
        .unwrap()
        .node
        .clone()
}

fn hook_log(dir: &std::path::Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(dir.join("hooks.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn hook_args(dir: &std::path::Path) -> Vec<String> {
    let log = dir.join("hooks.jsonl");
    [
        "started",
        "copied",
        "ready",
        "before-cutover",
        "fenced",
        "flipped",
        "done",
    ]
    .iter()
    .flat_map(|stage| {
        [
            "--hook".to_string(),
            format!("{stage}=cat >> {}", log.display()),
        ]
    })
    .collect()
}

/// A manual cut-over under the workload (fresh and stale routers): the move waits with the
/// copy current and nothing fenced — the directory unchanged, writes acknowledged — even
/// after its process is killed and the operation resumed; `shardctl cutover` then fences
/// and flips; no acknowledged write is lost, none lands on a shard not owning its key; the
/// hooks ran once per stage, in order, with the operation's document.
#[test]
fn a_manual_cutover_waits_survives_a_crash_and_goes_on_when_told() {
    let _s = serial();
    FLEET.sandbox();
    let dir = tempfile::tempdir().unwrap();
    let from = home_of(1);
    let to = if from == "node3" { "node2" } else { "node3" };
    let fresh = workload::spawn(
        inventory(),
        workload::Options {
            rate: 150,
            ..workload::Options::new("f")
        },
    )
    .unwrap();
    let stale = workload::spawn(
        inventory(),
        workload::Options {
            rate: 100,
            stale_router: true,
            ..workload::Options::new("f")
        },
    )
    .unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let mut args: Vec<String> = ["move", "--shard", "1", "--to", to, "--cutover", "manual"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    args.extend(hook_args(dir.path()));
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut first = spawn(&argv, dir.path(), "first");
    let op = until_waiting(Duration::from_secs(120));
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(home_of(1), from, "no flip without the go-ahead");
    assert!(first.try_wait().unwrap().is_none(), "it waits");
    // The box dies while it waits; resume goes back to waiting.
    first.kill().unwrap();
    first.wait().unwrap();
    // The journal keeps only the digest of the before-cutover hook: resume is given it
    // again, or refuses.
    let log = dir.path().join("hooks.jsonl");
    let gate = format!("before-cutover=cat >> {}", log.display());
    FLEET
        .cli(&[])
        .args(["resume", &op.to_string()])
        .assert()
        .code(USAGE)
        .stderr(predicates::str::contains(
            "give the same --hook before-cutover=COMMAND",
        ));
    let mut resumed = spawn(
        &[
            "resume",
            &op.to_string(),
            "--hook",
            &gate,
            "--hook",
            &format!("done=cat >> {}", log.display()),
        ],
        dir.path(),
        "resume",
    );
    // The killed owner's process is gone, so resume takes the operation over at once and
    // runs the await-cutover step again.
    std::thread::sleep(Duration::from_secs(4));
    assert_eq!(until_waiting(Duration::from_secs(60)), op);
    assert!(
        resumed.try_wait().unwrap().is_none(),
        "the resumed run waits"
    );
    assert_eq!(home_of(1), from, "a resumed wait does not cut over either");
    let out = FLEET
        .cli(&[])
        .args(["cutover", &op.to_string()])
        .assert()
        .success();
    assert!(String::from_utf8_lossy(&out.get_output().stdout).contains("cut-over requested"));
    let status = wait_exit(&mut resumed, Duration::from_secs(120));
    assert!(
        status.success(),
        "{}",
        std::fs::read_to_string(dir.path().join("resume.err")).unwrap()
    );
    assert_eq!(home_of(1), to);
    std::thread::sleep(Duration::from_millis(700));
    for (running, name) in [(fresh, "fresh"), (stale, "stale")] {
        let mut report = running.stop().unwrap();
        let check = report.check(&inventory(), "f").unwrap();
        assert!(check.missing.is_empty(), "{name}: lost {:?}", check.missing);
        assert_eq!(
            report.wrong_shard_writes, 0,
            "{name}: {:?}",
            check.wrong_shard
        );
        assert!(report.acked > 100, "{name}: the workload ran");
    }
    // The first run's hooks up to ready (it was killed waiting); the resumed run's
    // before-cutover hook (given to both runs, its digest journaled) and done.
    let stages: Vec<String> = hook_log(dir.path())
        .iter()
        .map(|h| {
            assert_eq!(h["op"], op, "{h}");
            assert_eq!(h["shard"], 1, "{h}");
            assert_eq!(h["json_version"], 1, "{h}");
            h["stage"].as_str().unwrap().to_string()
        })
        .collect();
    assert_eq!(
        stages,
        ["started", "copied", "ready", "before-cutover", "done"],
        "{stages:?}"
    );
    FLEET
        .cli(&[])
        .args(["cutover", &op.to_string()])
        .assert()
        .code(USAGE);
}

/// A window that is not now keeps the move waiting; hooks from the inventory run at every
/// stage in order, a before-cutover hook that fails twice postpones the cut-over twice,
/// and a hanging hook is killed at its timeout without stopping the move.
#[test]
fn windows_and_hooks_decide_when_the_fence_goes_up() {
    let _s = serial();
    FLEET.sandbox();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("hooks.jsonl");
    let tries = dir.path().join("tries");
    // An inventory with hooks: every stage logged, a before-cutover hook that fails its
    // first two runs, a ready hook that hangs past its 1 s timeout.
    let mut text = std::fs::read_to_string(FLEET.inventory_path()).unwrap();
    text.push_str("hooks:\n");
    for stage in ["started", "copied", "ready", "fenced", "flipped", "done"] {
        text.push_str(&format!(
            "  - stage: {stage}\n    command: cat >> {}\n",
            log.display()
        ));
    }
    text.push_str(&format!(
        "  - stage: before-cutover\n    command: \"cat >> {log}; echo x >> {tries}; test $(wc -l < {tries}) -ge 3\"\n",
        log = log.display(),
        tries = tries.display()
    ));
    text.push_str("  - stage: ready\n    command: sleep 60\n    timeout_secs: 1\n");
    // A slow notification while the fence is up must not lengthen the write pause.
    text.push_str("  - stage: fenced\n    command: sleep 4\n");
    let inv = common::write_file(dir.path(), "hooks.yaml", &text);

    // A window twelve hours away: the move waits.
    let now = (std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        % 86_400)
        / 60;
    let far = (now + 720) % 1440;
    let window = format!(
        "{:02}:{:02}-{:02}:{:02}",
        far / 60,
        far % 60,
        (far + 30) % 1440 / 60,
        (far + 30) % 60
    );
    let from = home_of(2);
    let to = if from == "node1" { "node3" } else { "node1" };
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("shardctl"))
        .env("SHARDCTL_YES", "1")
        .arg("--config")
        .arg(&inv)
        .args([
            "move",
            "--shard",
            "2",
            "--to",
            to,
            "--cutover-window",
            &window,
        ])
        .stdout(std::fs::File::create(dir.path().join("move.out")).unwrap())
        .stderr(std::fs::File::create(dir.path().join("move.err")).unwrap())
        .spawn()
        .unwrap();
    let op = until_waiting(Duration::from_secs(120));
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(home_of(2), from, "outside its window the move waits");
    assert!(
        !tries.exists(),
        "before-cutover hooks run only once the cut-over may start"
    );
    // The operator decides not to wait for the window.
    FLEET
        .cli(&[])
        .args(["cutover", &op.to_string()])
        .assert()
        .success();
    let status = wait_exit(&mut child, Duration::from_secs(120));
    let err = std::fs::read_to_string(dir.path().join("move.err")).unwrap();
    assert!(status.success(), "{err}");
    assert_eq!(home_of(2), to);
    let stages: Vec<String> = hook_log(dir.path())
        .iter()
        .map(|h| h["stage"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        stages,
        [
            "started",
            "copied",
            "ready",
            "before-cutover",
            "before-cutover",
            "before-cutover",
            "fenced",
            "flipped",
            "done"
        ],
        "{stages:?}"
    );
    assert!(
        err.contains("hook ready killed after 1s: sleep 60"),
        "the hanging hook is reported: {err}"
    );
    let out = std::fs::read_to_string(dir.path().join("move.out")).unwrap();
    let fence_ms: u64 = out
        .split("write fence ")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no fence time in {out:?}"));
    assert!(
        fence_ms < 3000,
        "the 4 s fenced hook ran under the fence: {fence_ms} ms"
    );
    assert!(
        err.contains("hook before-cutover failed"),
        "the postponing hook is reported: {err}"
    );
}

/// A run that lifts its fence without flipping (here `shardctl stop` under the fence) used
/// its go-ahead up: resumed, it waits for a new one instead of fencing again at once.
#[test]
fn a_run_that_lifted_its_fence_waits_for_a_new_go_ahead() {
    let _s = serial();
    FLEET.sandbox();
    let dir = tempfile::tempdir().unwrap();
    let from = home_of(1);
    let to = if from == "node3" { "node2" } else { "node3" };
    let mut first = Command::new(assert_cmd::cargo::cargo_bin("shardctl"))
        .env("SHARDCTL_YES", "1")
        .env("SHARDCTL_FAULT", "pause=60@after:lock")
        .arg("--config")
        .arg(FLEET.inventory_path())
        .args(["move", "--shard", "1", "--to", to, "--cutover", "manual"])
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(dir.path().join("first.err")).unwrap())
        .spawn()
        .unwrap();
    let op = until_waiting(Duration::from_secs(120));
    FLEET
        .cli(&[])
        .args(["cutover", &op.to_string()])
        .assert()
        .success();
    // Fenced, paused after the lock step: asked to stop, it lifts the fence.
    let deadline = Instant::now() + Duration::from_secs(60);
    while !last_op()
        .steps
        .iter()
        .any(|s| s.name == "lock" && s.state.as_sql() == "done")
    {
        assert!(Instant::now() < deadline, "the lock step never finished");
        std::thread::sleep(Duration::from_millis(200));
    }
    FLEET
        .cli(&[])
        .args(["stop", &op.to_string()])
        .assert()
        .success();
    let status = wait_exit(&mut first, Duration::from_secs(60));
    assert!(!status.success());
    assert_eq!(home_of(1), from);
    let mut resumed = spawn(&["resume", &op.to_string()], dir.path(), "resume");
    std::thread::sleep(Duration::from_secs(4));
    assert_eq!(until_waiting(Duration::from_secs(60)), op);
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(home_of(1), from, "no cut-over on an old go-ahead");
    assert!(
        resumed.try_wait().unwrap().is_none(),
        "it waits for a new one"
    );
    FLEET
        .cli(&[])
        .args(["cutover", &op.to_string()])
        .assert()
        .success();
    assert!(wait_exit(&mut resumed, Duration::from_secs(120)).success());
    assert_eq!(home_of(1), to);
}

#[test]
fn ops_and_status_watch_until_the_operation_ends_or_ctrl_c() {
    let _s = serial();
    FLEET.sandbox();
    let dir = tempfile::tempdir().unwrap();
    let from = home_of(1);
    let to = if from == "node1" { "node2" } else { "node1" };
    let mut mv = spawn(
        &["move", "--shard", "1", "--to", to, "--cutover", "manual"],
        dir.path(),
        "move",
    );
    let op = until_waiting(Duration::from_secs(120));
    let mut watch = spawn(
        &[
            "--output",
            "json",
            "ops",
            &op.to_string(),
            "--watch",
            "--interval",
            "0.5",
        ],
        dir.path(),
        "watch",
    );
    std::thread::sleep(Duration::from_secs(2));
    FLEET
        .cli(&[])
        .args(["cutover", &op.to_string()])
        .assert()
        .success();
    assert!(wait_exit(&mut mv, Duration::from_secs(120)).success());
    assert!(
        wait_exit(&mut watch, Duration::from_secs(10)).success(),
        "ops --watch ends with its operation"
    );
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(dir.path().join("watch.out"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(lines.len() >= 3, "{lines:?}");
    assert_eq!(
        lines[0]["operation"]["current_step"]["name"], "await-cutover",
        "{}",
        lines[0]
    );
    assert_eq!(lines.last().unwrap()["operation"]["state"], "done");

    let mut status = spawn(
        &["--output", "json", "status", "--watch", "--interval", "0.5"],
        dir.path(),
        "status",
    );
    std::thread::sleep(Duration::from_millis(2500));
    // SAFETY: SIGINT to our own child.
    unsafe {
        libc::kill(status.id() as i32, libc::SIGINT);
    }
    assert!(wait_exit(&mut status, Duration::from_secs(10)).success());
    let updates: Vec<serde_json::Value> = std::fs::read_to_string(dir.path().join("status.out"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(updates.len() >= 2, "{updates:?}");
    assert!(updates.iter().all(|u| u["command"] == "status"));
}

#[test]
fn cutover_controls_refuse_bad_input_and_change_nothing() {
    let _s = serial();
    FLEET.sandbox();
    let dir = tempfile::tempdir().unwrap();
    let from = home_of(1);
    let to = if from == "node2" { "node3" } else { "node2" };
    let version = || Directory::open(&inventory()).unwrap().version().unwrap();
    let before = version();
    let refused = |args: &[&str], code: i32, text: &str| {
        let out = FLEET.cli(&[]).args(args).assert().code(code);
        let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
        // One line naming the culprit (clap adds a pointer to --help below its own).
        let first = err.lines().next().unwrap_or_default();
        assert!(first.contains(text), "{args:?}: {err}");
    };
    let cases: [(&str, &[&str], &str); 7] = [
        (
            "an unknown operation",
            &["cutover", "99999"],
            "no operation 99999",
        ),
        (
            "a window cut-over without its window",
            &["move", "--shard", "1", "--to", to, "--cutover", "window"],
            "--cutover window needs --cutover-window",
        ),
        (
            "a window starting at 25:00",
            &[
                "move",
                "--shard",
                "1",
                "--to",
                to,
                "--cutover-window",
                "25:00-03:00",
            ],
            "is not a window HH:MM-HH:MM",
        ),
        (
            "an empty window",
            &[
                "move",
                "--shard",
                "1",
                "--to",
                to,
                "--cutover-window",
                "03:00-03:00",
            ],
            "the window is empty",
        ),
        (
            "an unknown hook stage",
            &["move", "--shard", "1", "--to", to, "--hook", "later=true"],
            "unknown hook stage \"later\"",
        ),
        (
            "a hook without a command",
            &["move", "--shard", "1", "--to", to, "--hook", "done"],
            "is not STAGE=COMMAND",
        ),
        (
            "a watch interval of 0",
            &["ops", "--watch", "--interval", "0"],
            "the interval is 0.2 to 3600 seconds",
        ),
    ];
    for (name, args, text) in cases {
        let out = FLEET.cli(&[]).args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        assert_eq!(out.status.code(), Some(USAGE), "{name} {args:?}: {err}");
        // One line naming the culprit (clap adds a pointer to --help below its own).
        let first = err.lines().next().unwrap_or_default();
        assert!(first.contains(text), "{name} {args:?}: {err}");
    }
    assert_eq!(version(), before);
    // An operation that is not waiting for its cut-over: a manual move that died right
    // after its backup.
    let out = Command::new(assert_cmd::cargo::cargo_bin("shardctl"))
        .env("SHARDCTL_YES", "1")
        .env("SHARDCTL_FAULT", "crash@after:backup")
        .arg("--config")
        .arg(FLEET.inventory_path())
        .args(["move", "--shard", "1", "--to", to, "--cutover", "manual"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let op = last_op().id;
    refused(
        &["cutover", &op.to_string()],
        USAGE,
        "is not waiting for its cut-over: its next step is 3 change-master",
    );
    assert!(!Directory::open(&inventory())
        .unwrap()
        .cutover_requested(op)
        .unwrap());
    FLEET
        .cli(&[])
        .args(["abort", &op.to_string()])
        .assert()
        .success();
    refused(&["cutover", &op.to_string()], USAGE, "is aborted");
    assert_eq!(home_of(1), from);
    drop(dir);
}

/// Hooks run with a clean environment: the variable the inventory's `password_env` names
/// (and anything else exported in the operator's shell) never reaches a hook's command.
#[test]
fn a_hook_never_sees_the_password_variables_of_the_inventory() {
    let _s = serial();
    FLEET.sandbox();
    let dir = tempfile::tempdir().unwrap();
    let mut file = inventory().file;
    let mut secret = String::new();
    for node in file.nodes.values_mut() {
        let options = shardctl::config::read_option_file(
            node.account
                .defaults_file
                .as_ref()
                .expect("a sandbox option file"),
        )
        .unwrap();
        secret = options.password.clone().expect("a password");
        node.account = shardctl::config::AccountSpec {
            user: options.user.clone(),
            password_env: Some("SHARDCTL_HOOK_TEST_PW".into()),
            ..Default::default()
        };
    }
    let config = dir.path().join("password_env.yaml");
    std::fs::write(&config, serde_yaml::to_string(&file).unwrap()).unwrap();
    let seen = dir.path().join("env");
    let from = home_of(1);
    let to = if from == "node3" { "node2" } else { "node3" };
    shardctl()
        .arg("--config")
        .arg(&config)
        .env("SHARDCTL_HOOK_TEST_PW", &secret)
        .env("SHARDCTL_HOOK_TEST_TOKEN", "exported-in-the-shell")
        .args(["move", "--shard", "1", "--to", to, "--hook"])
        .arg(format!("done=env > {}", seen.display()))
        .assert()
        .success();
    assert_eq!(home_of(1), to);
    let env = std::fs::read_to_string(&seen).expect("the done hook ran");
    assert!(env.lines().any(|l| l.starts_with("PATH=")), "{env}");
    for leaked in ["SHARDCTL_HOOK_TEST_PW", "SHARDCTL_HOOK_TEST_TOKEN", &secret] {
        assert!(!env.contains(leaked), "the hook saw {leaked}");
    }
}
