//! The binary's behaviour on bad input: one clear line naming the culprit, a stable
//! non-zero exit code, nothing changed. Plus help texts and the status command.

mod common;

use common::{sandbox3, shardctl, write_file};
use predicates::prelude::*;
use shardctl::sandbox::SandboxBuilder;
use std::net::TcpListener;

const CONFIG: i32 = 3;
const USAGE: i32 = 2;
const SERVER: i32 = 4;
const REFUSED: i32 = 5;

fn one_line(stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr).to_string();
    assert_eq!(text.trim_end().lines().count(), 1, "not one line: {text}");
    text
}

fn inventory_for(port: u16, extra_node: &str, defaults: &str) -> String {
    format!(
        "directory:\n  node: n1\nnodes:\n  n1:\n    host: 127.0.0.1\n    port: {port}\n    user: shardctl\n{extra_node}{defaults}"
    )
}

#[test]
fn every_command_has_help_with_an_example() {
    for args in [
        vec!["--help"],
        vec!["status", "--help"],
        vec!["sandbox", "up", "--help"],
        vec!["sandbox", "status", "--help"],
        vec!["sandbox", "down", "--help"],
    ] {
        shardctl()
            .args(&args)
            .assert()
            .success()
            .stdout(predicate::str::contains("Example:"));
    }
}

#[test]
fn a_missing_inventory_is_a_config_error() {
    let out = shardctl()
        .args(["--config", "/nonexistent/shardctl.yaml", "status"])
        .assert()
        .code(CONFIG)
        .get_output()
        .clone();
    assert!(one_line(&out.stderr).contains("cannot read inventory /nonexistent/shardctl.yaml"));
}

#[test]
fn the_config_can_come_from_the_environment() {
    shardctl()
        .env("SHARDCTL_CONFIG", "/nonexistent/from-env.yaml")
        .arg("status")
        .assert()
        .code(CONFIG)
        .stderr(predicate::str::contains("/nonexistent/from-env.yaml"));
}

#[test]
fn malformed_inventories_name_file_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "syntax.yaml",
            "directory:\n  node: n1\nnodes: [unclosed\n",
            ":3:",
        ),
        (
            "unknown.yaml",
            &inventory_for(3306, "    pasword: x\n", ""),
            ":5:5: nodes.n1: unknown field `pasword`",
        ),
        (
            "type.yaml",
            &inventory_for(3306, "", "defaults:\n  connect_timeout_secs: soon\n"),
            ":9:25: defaults.connect_timeout_secs: invalid type",
        ),
    ];
    for (name, text, expected) in cases {
        let path = write_file(dir.path(), name, text);
        let out = shardctl()
            .args(["--config", path.to_str().unwrap(), "status"])
            .assert()
            .code(CONFIG)
            .get_output()
            .clone();
        let err = one_line(&out.stderr);
        assert!(err.contains(&format!("{name}{expected}")), "{name}: {err}");
    }
}

#[test]
fn an_unknown_node_is_named_before_any_connection() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_file(dir.path(), "inv.yaml", &inventory_for(1, "", ""));
    let out = shardctl()
        .args([
            "--config",
            path.to_str().unwrap(),
            "status",
            "--node",
            "nodeX",
        ])
        .assert()
        .code(USAGE)
        .get_output()
        .clone();
    assert!(one_line(&out.stderr).contains("unknown node \"nodeX\" (the inventory has: n1)"));
}

#[test]
fn a_closed_port_fails_fast_with_the_address() {
    let port = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let dir = tempfile::tempdir().unwrap();
    let path = write_file(dir.path(), "inv.yaml", &inventory_for(port, "", ""));
    let out = shardctl()
        .args(["--config", path.to_str().unwrap(), "status"])
        .assert()
        .code(SERVER)
        .get_output()
        .clone();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("node n1: cannot connect to 127.0.0.1:{port}")),
        "{err}"
    );
}

#[test]
fn a_host_that_never_answers_hits_the_timeout_instead_of_hanging() {
    // Accepts TCP connections (the kernel completes them) but never sends a greeting.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let dir = tempfile::tempdir().unwrap();
    let defaults = "defaults:\n  connect_timeout_secs: 1\n  read_timeout_secs: 1\n";
    let path = write_file(dir.path(), "inv.yaml", &inventory_for(port, "", defaults));
    let out = shardctl()
        .args(["--config", path.to_str().unwrap(), "status"])
        .timeout(std::time::Duration::from_secs(20))
        .assert()
        .code(SERVER)
        .get_output()
        .clone();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot connect to 127.0.0.1"), "{err}");
    assert!(err.contains("timed out"), "{err}");
    drop(listener);
}

#[test]
fn a_wrong_password_is_refused_and_never_echoed() {
    let sb = sandbox3();
    let port = sb.node("node1").unwrap().port;
    let dir = tempfile::tempdir().unwrap();
    let path = write_file(
        dir.path(),
        "inv.yaml",
        &inventory_for(port, "    password_env: SHARDCTL_TEST_PW\n", ""),
    );
    let out = shardctl()
        .env("SHARDCTL_TEST_PW", "Wr0ngPassw0rdXyz")
        .args(["--config", path.to_str().unwrap(), "status"])
        .assert()
        .code(SERVER)
        .get_output()
        .clone();
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(all.contains("Access denied"), "{all}");
    assert!(!all.contains("Wr0ngPassw0rdXyz"), "password echoed: {all}");
}

#[test]
fn a_missing_password_variable_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_file(
        dir.path(),
        "inv.yaml",
        &inventory_for(1, "    password_env: SHARDCTL_TEST_UNSET_VAR\n", ""),
    );
    shardctl()
        .env_remove("SHARDCTL_TEST_UNSET_VAR")
        .args(["--config", path.to_str().unwrap(), "status"])
        .assert()
        .code(CONFIG)
        .stderr(predicate::str::contains("SHARDCTL_TEST_UNSET_VAR"));
}

#[test]
fn status_shows_every_sandbox_node_as_table_and_json() {
    let sb = sandbox3();
    let inv = sb.inventory_path();
    let inv = inv.to_str().unwrap();
    shardctl()
        .args(["--config", inv, "status"])
        .assert()
        .success()
        .stdout(predicate::str::contains("node1").and(predicate::str::contains("MariaDB")))
        .stdout(predicate::str::contains("node3"));
    let out = shardctl()
        .args([
            "--config", inv, "--output", "json", "status", "--node", "node2",
        ])
        .assert()
        .success()
        .get_output()
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let nodes = v["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 1);
    assert_eq!(nodes[0]["node"], "node2");
    assert_eq!(nodes[0]["settings"]["server_id"], 2);
    assert_eq!(nodes[0]["settings"]["binlog_format"], "ROW");
    let text = String::from_utf8_lossy(&out.stdout);
    let secret = std::fs::read_to_string(sb.dir().join("client.cnf")).unwrap();
    let password = secret
        .lines()
        .find_map(|l| l.strip_prefix("password="))
        .unwrap();
    assert!(!text.contains(password));
}

#[test]
fn an_unsupported_server_version_is_refused() {
    // MariaDB can report any version string; 5.6 is older than shardctl supports.
    let sb = SandboxBuilder::for_tests(1)
        .unwrap()
        .extra_config("version=5.6.51-log")
        .start()
        .unwrap();
    let out = shardctl()
        .args(["--config", sb.inventory_path().to_str().unwrap(), "status"])
        .assert()
        .code(SERVER)
        .get_output()
        .clone();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("node node1: unsupported server 5.6.51-log: MySQL before 5.7"),
        "{err}"
    );
}

/// Runs `sandbox down --purge` on drop so a failing test leaves no server behind.
struct CliSandbox(std::path::PathBuf);

impl Drop for CliSandbox {
    fn drop(&mut self) {
        let _ = shardctl()
            .args([
                "sandbox",
                "down",
                "--purge",
                "--dir",
                self.0.to_str().unwrap(),
            ])
            .output();
    }
}

/// Free ports below the ephemeral range (test binaries run side by side).
fn free_port() -> u16 {
    shardctl::sandbox::free_test_ports(3).expect("a free port")
}

#[test]
fn sandbox_lifecycle_and_its_refusals() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("sb");
    let dir_s = dir.to_str().unwrap().to_string();
    let _guard = CliSandbox(dir.clone());

    // `down` when nothing was ever started.
    let out = shardctl()
        .args(["sandbox", "down", "--dir", &dir_s])
        .assert()
        .code(USAGE)
        .get_output()
        .clone();
    assert!(one_line(&out.stderr).contains("no sandbox in"));

    // A taken port is named and nothing starts.
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let out = shardctl()
        .args(["sandbox", "up", "--nodes", "1", "--dir", &dir_s])
        .args(["--base-port", &port.to_string()])
        .assert()
        .code(REFUSED)
        .get_output()
        .clone();
    assert!(one_line(&out.stderr).contains(&format!("port {port} (for node1) is taken")));
    assert!(!dir.join("sandbox.json").exists());
    drop(taken);

    let port = free_port().to_string();
    shardctl()
        .args([
            "sandbox",
            "up",
            "--nodes",
            "1",
            "--dir",
            &dir_s,
            "--base-port",
            &port,
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("running"));
    let inv = dir.join("shardctl.yaml");
    shardctl()
        .args(["--config", inv.to_str().unwrap(), "status"])
        .assert()
        .success();

    // A second `up` on a running sandbox is refused.
    let out = shardctl()
        .args([
            "sandbox",
            "up",
            "--nodes",
            "1",
            "--dir",
            &dir_s,
            "--base-port",
            &port,
        ])
        .assert()
        .code(REFUSED)
        .get_output()
        .clone();
    assert!(one_line(&out.stderr).contains("a sandbox already runs"));

    shardctl()
        .args(["sandbox", "status", "--dir", &dir_s])
        .assert()
        .success()
        .stdout(predicate::str::contains("running"));
    shardctl()
        .args(["sandbox", "down", "--dir", &dir_s])
        .assert()
        .success()
        .stdout(predicate::str::contains("stopped 1 server"));
    shardctl()
        .args(["sandbox", "status", "--dir", &dir_s])
        .assert()
        .success()
        .stdout(predicate::str::contains("stopped"));

    // `down` when nothing runs any more; the data is still there.
    let out = shardctl()
        .args(["sandbox", "down", "--dir", &dir_s])
        .assert()
        .code(USAGE)
        .get_output()
        .clone();
    assert!(one_line(&out.stderr).contains("no sandbox server runs in"));
    assert!(dir.join("node1/data").exists());

    // `up` again restarts on the same data; `down --purge` removes everything.
    shardctl()
        .args([
            "sandbox",
            "up",
            "--nodes",
            "1",
            "--dir",
            &dir_s,
            "--base-port",
            &port,
        ])
        .assert()
        .success();
    shardctl()
        .args(["sandbox", "down", "--purge", "--dir", &dir_s])
        .assert()
        .success();
    assert!(!dir.exists());
}

#[test]
fn completions_and_man_pages_are_generated_from_the_commands() {
    let out = shardctl().args(["completions", "bash"]).assert().success();
    let script = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    for word in ["move", "split", "prune", "rebalance", "--fence"] {
        assert!(script.contains(word), "bash completion lacks {word}");
    }
    let dir = tempfile::tempdir().unwrap();
    let path = write_file(dir.path(), "shardctl.bash", &script);
    let syntax = std::process::Command::new("bash")
        .arg("-n")
        .arg(&path)
        .output()
        .unwrap();
    assert!(syntax.status.success(), "{syntax:?}");
    for shell in ["zsh", "fish", "elvish", "powershell"] {
        shardctl()
            .args(["completions", shell])
            .assert()
            .success()
            .stdout(predicate::str::contains("shardctl"));
    }
    shardctl()
        .args(["completions", "tcsh"])
        .assert()
        .code(USAGE)
        .stderr(predicate::str::contains("tcsh"));

    let page = shardctl().arg("man").assert().success();
    let page = String::from_utf8_lossy(&page.get_output().stdout).to_string();
    assert!(page.contains(".TH shardctl 1"), "{page}");
    for sub in [
        "move",
        "split",
        "prune",
        "resume",
        "abort",
        "completions",
        "man",
    ] {
        assert!(
            page.contains(&format!("shardctl\\-{sub}(1)")),
            "the man page does not list {sub}"
        );
    }
    shardctl()
        .args(["man", "move"])
        .assert()
        .success()
        .stdout(predicate::str::contains(".TH shardctl-move 1"))
        .stdout(predicate::str::contains("shardctl move"))
        .stdout(predicate::str::contains("\\-\\-config"))
        .stdout(predicate::str::contains("\\-\\-fence"));
    let out = shardctl().args(["man", "nosuch"]).assert().code(USAGE);
    assert!(one_line(&out.get_output().stderr).contains("no command \"nosuch\""));
}

#[test]
fn config_check_connects_to_every_node_and_names_the_one_that_fails() {
    let sb = sandbox3();
    let inv = sb.inventory_path();
    let out = shardctl()
        .args(["--config", inv.to_str().unwrap(), "config", "check"])
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    for node in ["node1", "node2", "node3"] {
        assert!(text.contains(node), "{text}");
    }
    assert!(text.contains("MariaDB"), "{text}");

    // One more node, on a port nothing listens on.
    let port = free_port();
    let mut yaml: serde_yaml::Value =
        serde_yaml::from_str(&std::fs::read_to_string(&inv).unwrap()).unwrap();
    let dead: serde_yaml::Value =
        serde_yaml::from_str(&format!("host: 127.0.0.1\nport: {port}\nuser: shardctl")).unwrap();
    yaml["nodes"]
        .as_mapping_mut()
        .unwrap()
        .insert("deadnode".into(), dead);
    let dir = tempfile::tempdir().unwrap();
    let path = write_file(
        dir.path(),
        "inv.yaml",
        &serde_yaml::to_string(&yaml).unwrap(),
    );
    let out = shardctl()
        .args([
            "--config",
            path.to_str().unwrap(),
            "--output",
            "json",
            "config",
            "check",
        ])
        .assert()
        .code(SERVER)
        .get_output()
        .clone();
    let err = one_line(&out.stderr);
    assert!(
        err.contains(&format!(
            "node deadnode: cannot connect to 127.0.0.1:{port}"
        )),
        "{err}"
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let nodes = v["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 4);
    assert_eq!(nodes.iter().filter(|n| n["ok"] == true).count(), 3, "{v}");
}

#[test]
fn errors_under_json_output_are_one_json_object_on_stderr() {
    let out = shardctl()
        .args([
            "--output",
            "json",
            "--config",
            "/nonexistent/shardctl.yaml",
            "status",
        ])
        .assert()
        .code(CONFIG)
        .get_output()
        .clone();
    let line = one_line(&out.stderr);
    let v: serde_json::Value = serde_json::from_str(line.trim()).unwrap();
    assert_eq!(v["error"]["kind"], "config", "{v}");
    assert_eq!(v["error"]["exit_code"], CONFIG, "{v}");
    assert!(v["error"]["message"]
        .as_str()
        .unwrap()
        .contains("cannot read inventory /nonexistent/shardctl.yaml"));
    assert!(out.stdout.is_empty());
    // The same failure in text: one plain line.
    let out = shardctl()
        .args(["--config", "/nonexistent/shardctl.yaml", "status"])
        .assert()
        .code(CONFIG)
        .get_output()
        .clone();
    assert!(one_line(&out.stderr).starts_with("shardctl: cannot read inventory"));
}

/// The completion scripts and man pages kept in docs/generated are what the command
/// definitions generate now (`scripts/gen-docs` rewrites them), and each man page renders
/// without a warning.
#[test]
fn the_generated_completions_and_man_pages_in_the_repository_are_current() {
    use clap::CommandFactory;
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/generated");
    let update = std::env::var_os("SHARDCTL_UPDATE_GENERATED").is_some();
    let mut files: Vec<(std::path::PathBuf, Vec<u8>)> = Vec::new();
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let out = shardctl().args(["completions", shell]).assert().success();
        files.push((
            root.join(format!("completions/shardctl.{shell}")),
            out.get_output().stdout.clone(),
        ));
    }
    let out = shardctl().arg("man").assert().success();
    files.push((root.join("man/shardctl.1"), out.get_output().stdout.clone()));
    for sub in shardctl::cli::Cli::command().get_subcommands() {
        let name = sub.get_name().to_string();
        let out = shardctl().args(["man", &name]).assert().success();
        files.push((
            root.join(format!("man/shardctl-{name}.1")),
            out.get_output().stdout.clone(),
        ));
    }
    let mut stale = Vec::new();
    for (path, text) in &files {
        if update {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        } else if std::fs::read(path).ok().as_deref() != Some(text.as_slice()) {
            stale.push(path.display().to_string());
        }
    }
    assert!(
        stale.is_empty(),
        "out of date (run scripts/gen-docs): {stale:?}"
    );
    let pages = files
        .iter()
        .filter(|(p, _)| p.extension().is_some_and(|e| e == "1"));
    for (path, _) in pages {
        let render = std::process::Command::new("groff")
            .args(["-man", "-Tutf8", "-ww", "-z"])
            .arg(path)
            .output();
        match render {
            Ok(out) => assert!(
                out.status.success() && out.stderr.is_empty(),
                "{}: {}",
                path.display(),
                String::from_utf8_lossy(&out.stderr)
            ),
            Err(e) => {
                panic!("groff is needed to check the man pages (scripts/setup installs it): {e}")
            }
        }
    }
    let bash = root.join("completions/shardctl.bash");
    let syntax = std::process::Command::new("bash")
        .arg("-n")
        .arg(&bash)
        .output()
        .unwrap();
    assert!(syntax.status.success(), "{syntax:?}");
}
