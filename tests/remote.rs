//! The remote layer against a real sshd on loopback (started here, own host and user
//! keys): commands, files and streams over ssh; the chapter's restart path (`filter
//! persist: true`, the sandbox restarted through its inventory's restart_command); the
//! free-space preflight; and the refusals: a wrong host key, an unreachable host, a remote
//! command that fails, too little free space — each leaving nothing done.

mod common;
#[path = "common/sshd.rs"]
mod sshd;

use common::{cli_on, connect, count, serial, FleetSetup, Function, SharedFleet};
use shardctl::config::{Inventory, InventoryFile};
use shardctl::directory::Directory;
use shardctl::error::Error;
use shardctl::remote::{self, Host, LocalHost, SshHost};
use shardctl::sandbox::Sandbox;
use sshd::Sshd;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

const SERVER: i32 = 4;
const REFUSED: i32 = 5;
const TIMEOUT: i32 = 6;

fn sshd() -> &'static Sshd {
    static S: OnceLock<Sshd> = OnceLock::new();
    S.get_or_init(Sshd::start)
}

/// 3 nodes whose inventory restarts them through `shardctl sandbox restart`; employees in
/// three shards (node1 holds the directory), rows written through the router.
static FLEET: SharedFleet = SharedFleet::configured(
    3,
    |b| b.shardctl_bin(env!("CARGO_BIN_EXE_shardctl")),
    set_up,
);

/// Sets up the fleet once, on first use (see [`FLEET`]).
fn set_up(sb: &Sandbox) {
    FleetSetup::new()
        .fixture("company.sql")
        .function(
            Function::range("f")
                .tables(&[
                    ("employees.employees", "emp_no"),
                    ("employees.salaries", "emp_no"),
                    ("employees.titles", "emp_no"),
                ])
                .shards(&[("node1", "0"), ("node2", "10000"), ("node3", "20000")]),
        )
        .global_after_shards("employees.departments")
        .sample(&["--count", "900", "--start", "1", "--step", "37"])
        .build(sb);
}

/// The sandbox's inventory with `edit` applied, written to a file of its own.
fn inventory_with(name: &str, edit: impl FnOnce(&mut InventoryFile)) -> PathBuf {
    let sb = FLEET.sandbox();
    let mut inv = Inventory::load(&sb.inventory_path()).unwrap().file;
    edit(&mut inv);
    let path = sb.dir().join(format!("{name}.yaml"));
    std::fs::write(&path, serde_yaml::to_string(&inv).unwrap()).unwrap();
    path
}

fn ssh_spec(known_hosts: &Path) -> shardctl::config::SshSpec {
    let s = sshd();
    shardctl::config::SshSpec {
        host: Some("127.0.0.1".into()),
        port: s.port,
        user: "root".into(),
        identity_file: Some(s.identity.clone()),
        agent: false,
        known_hosts_file: known_hosts.to_path_buf(),
        connect_timeout_secs: 5,
        command_timeout_secs: 120,
    }
}

/// node2 and node3 reached over the test's sshd with the real host key.
fn ssh_inventory() -> PathBuf {
    inventory_with("ssh", |inv| {
        for n in ["node2", "node3"] {
            inv.nodes.get_mut(n).unwrap().ssh = Some(ssh_spec(&sshd().known_hosts));
        }
    })
}

fn restart_playbook() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("playbooks/move-restart.yaml")
}

fn option_file(node: &str) -> PathBuf {
    FLEET.sandbox().node(node).unwrap().config_file()
}

fn directory() -> Directory {
    Directory::open(&common::inventory(FLEET.sandbox())).unwrap()
}

fn shard_node(shard: u32) -> String {
    directory()
        .load()
        .unwrap()
        .shards
        .iter()
        .find(|s| s.id == shard)
        .unwrap()
        .node
        .clone()
}

fn operation_count() -> usize {
    directory().operations(None).unwrap().len()
}

fn schema_exists(node: &str, schema: &str) -> bool {
    connect(FLEET.sandbox(), node)
        .schema_exists(&shardctl::ident::Ident::new("schema", schema).unwrap())
        .unwrap()
}

fn rows(node: &str, schema: &str) -> i64 {
    let mut s = connect(FLEET.sandbox(), node);
    ["employees", "salaries", "titles"]
        .iter()
        .map(|t| count(&mut s, &format!("SELECT COUNT(*) FROM `{schema}`.`{t}`")))
        .sum()
}

fn uptime(node: &str) -> u64 {
    count(
        &mut connect(FLEET.sandbox(), node),
        "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'UPTIME'",
    ) as u64
}

/// A refused or failed move changed nothing: no operation journaled, the shard where it
/// was, no copy on the target, the option file as it was.
fn assert_nothing_done(ops_before: usize, shard: u32, from: &str, to: &str, cnf: &[u8]) {
    assert_eq!(operation_count(), ops_before, "an operation was journaled");
    assert_eq!(shard_node(shard), from);
    assert!(!schema_exists(to, &format!("employees_{shard}")));
    assert_eq!(std::fs::read(option_file(to)).unwrap(), cnf);
}

fn stderr_of(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

// ---- the remote layer itself, over the real sshd ----

#[test]
fn ssh_runs_commands_with_streams_files_and_timeouts() {
    let host = SshHost::new("node9", "127.0.0.1", &ssh_spec(&sshd().known_hosts));
    let t = Duration::from_secs(30);
    let mut input: &[u8] = b"one\ntwo\n";
    let mut out = Vec::new();
    let exit = host
        .run("tr a-z A-Z", Some(&mut input), &mut out, t)
        .unwrap();
    assert!(exit.success());
    assert_eq!(out, b"ONE\nTWO\n");
    // A word no shell may reinterpret reaches the command as it is.
    let tricky = "it's $(echo pwned) `x` ; & | *";
    let echoed = host
        .text(
            "echo",
            &remote::command_line(&["printf", "%s", tricky]).unwrap(),
            t,
        )
        .unwrap();
    assert_eq!(echoed, tricky);
    // Files written whole, with their mode, and read back; binary content survives.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a file's name");
    let data: Vec<u8> = (0..=255u8).cycle().take(300_000).collect();
    host.write_file(&file, &data, 0o640, t).unwrap();
    assert_eq!(host.read_file(&file, t).unwrap(), data);
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&file).unwrap().permissions().mode() & 0o777,
        0o640
    );
    // A stream from the ssh host to another host, through memory only; its source is
    // given a line on its input first (as the backup its password).
    let copy = dir.path().join("copy");
    let local = LocalHost::new("here");
    let src = format!(
        "IFS= read -r line && printf '%s' \"$line\" && cat {}",
        remote::path_word(&file).unwrap()
    );
    let dst = format!("cat > {}", remote::path_word(&copy).unwrap());
    let n = remote::pipe(&host, &src, b"sent\n", &local, &dst, "a stream", t).unwrap();
    assert_eq!(n, 300_004);
    let mut want = b"sent".to_vec();
    want.extend_from_slice(&data);
    assert_eq!(std::fs::read(&copy).unwrap(), want);
    // A command past its timeout is stopped, and says so.
    let started = Instant::now();
    let err = host
        .output("sleeping", "sleep 60", Duration::from_secs(2))
        .unwrap_err();
    assert!(matches!(err, Error::Timeout(_)), "{err}");
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
    // A command's own error output is unchanged by the line that names its group.
    let exit = host
        .run("echo first >&2; exit 3", None, &mut Vec::new(), t)
        .unwrap();
    assert_eq!(exit.stderr, "first\n");
    // So is one whose operation is asked to stop (Ctrl-C, `shardctl stop`).
    let flag = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let later = std::sync::Arc::clone(&flag);
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(500));
        later.store(true, std::sync::atomic::Ordering::SeqCst);
    });
    let started = Instant::now();
    let err = shardctl::signal::with_scope(Some(flag), || {
        host.output("sleeping", "sleep 61.5", Duration::from_secs(60))
    })
    .unwrap_err();
    assert!(matches!(err, Error::Interrupted), "{err}");
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
    // Killed on the host, not only left behind by its channel (the sshd is on loopback).
    let alive = |pattern: &str| {
        std::process::Command::new("pgrep")
            .args(["-f", pattern])
            .output()
            .unwrap()
            .status
            .success()
    };
    let deadline = Instant::now() + Duration::from_secs(5);
    while alive("sleep 61.5") {
        assert!(
            Instant::now() < deadline,
            "the stopped command still runs on the host"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_failing_remote_command_names_the_host_status_and_its_error() {
    let host = SshHost::new("node9", "127.0.0.1", &ssh_spec(&sshd().known_hosts));
    let err = host
        .output(
            "the restart command",
            "echo 'mariadb.service: unit not found' >&2; exit 5",
            Duration::from_secs(30),
        )
        .unwrap_err();
    assert_eq!(err.exit_code() as i32, SERVER);
    let msg = err.to_string();
    assert!(
        msg.contains("node9 (ssh root@127.0.0.1:")
            && msg.contains(
                "the restart command failed (exit status 5): mariadb.service: unit not found"
            ),
        "{msg}"
    );
    // A failed source never reaches the target as a whole stream.
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("finished");
    let dst = format!(
        "cat > /dev/null && touch {}",
        remote::path_word(&marker).unwrap()
    );
    let err = remote::pipe(
        &host,
        "head -c 100000 /dev/zero; exit 3",
        b"",
        &LocalHost::new("here"),
        &dst,
        "a stream",
        Duration::from_secs(30),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("source side") && err.contains("exit status 3"),
        "{err}"
    );
    assert!(!marker.exists());
}

#[test]
fn a_wrong_or_unknown_host_key_is_refused_before_anything_is_sent() {
    let marker = std::env::temp_dir().join(format!("shardctl-hostkey-{}", std::process::id()));
    let cmd = format!("touch {}", remote::path_word(&marker).unwrap());
    let empty = tempfile::NamedTempFile::new().unwrap();
    for (kh, want) in [
        (sshd().wrong_known_hosts.clone(), "differs from the one in"),
        (empty.path().to_path_buf(), "is not in"),
    ] {
        let host = SshHost::new("node9", "127.0.0.1", &ssh_spec(&kh));
        let err = host
            .output("touch", &cmd, Duration::from_secs(30))
            .unwrap_err();
        assert_eq!(err.exit_code() as i32, REFUSED, "{err}");
        assert!(err.to_string().contains(want), "{err}");
        assert!(
            !marker.exists(),
            "a command ran on a host with the wrong key"
        );
    }
}

#[test]
fn an_unreachable_host_times_out_with_a_clear_error() {
    // A port that takes connections and never speaks ssh: the handshake waits in vain.
    let silent = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
    let mut spec = ssh_spec(&sshd().known_hosts);
    spec.port = silent.local_addr().unwrap().port();
    spec.connect_timeout_secs = 1;
    let host = SshHost::new("node9", "127.0.0.1", &spec);
    let started = Instant::now();
    let err = host
        .output("true", "true", Duration::from_secs(30))
        .unwrap_err();
    assert!(matches!(err, Error::Timeout(_)), "{err}");
    assert!(err.to_string().contains("no answer within 1s"), "{err}");
    assert!(started.elapsed() < Duration::from_secs(10));
}

// ---- the chapter's restart path, and the preflight over the host ----

#[test]
fn a_move_on_the_restart_path_persists_the_filter_restarts_and_leaves_the_option_file_as_it_was() {
    let _g = serial();
    let inv = ssh_inventory();
    let (shard, from, to) = (2u32, "node2", "node3");
    let schema = format!("employees_{shard}");
    let cnf_before = std::fs::read(option_file(to)).unwrap();
    let rows_before = rows(from, &schema);
    assert!(rows_before > 0);
    let started = Instant::now();
    let out = cli_on(
        &inv,
        &[
            "move",
            "--shard",
            "2",
            "--to",
            to,
            "--playbook",
            restart_playbook().to_str().unwrap(),
            "--output",
            "json",
        ],
    )
    .timeout(Duration::from_secs(300))
    .output()
    .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert_eq!(shard_node(shard), to);
    assert_eq!(rows(to, &schema), rows_before);
    assert!(!schema_exists(from, &schema));
    // The target restarted during the move, through its restart command, over ssh.
    assert!(
        uptime(to) <= started.elapsed().as_secs() + 1,
        "{to} was not restarted"
    );
    // The option file is exactly as it was; its backup is kept.
    assert_eq!(std::fs::read(option_file(to)).unwrap(), cnf_before);
    let op = directory().operations(None).unwrap()[0].clone();
    let channel = shardctl::directory::names::NameScope::from_params(&op.params)
        .unwrap()
        .channel(op.id);
    let backup = PathBuf::from(format!(
        "{}.shardctl-{channel}.bak",
        option_file(to).display(),
    ));
    assert_eq!(std::fs::read(&backup).unwrap(), cnf_before);
    // Each effect journaled and done, in the chapter's order.
    let effects: Vec<(String, String)> = op
        .effects
        .iter()
        .map(|e| (e.effect.name().to_string(), format!("{:?}", e.state)))
        .collect();
    let pos = |name: &str| {
        effects
            .iter()
            .position(|(e, s)| e == name && s == "Done")
            .unwrap_or_else(|| panic!("{name} not done: {effects:?}"))
    };
    assert!(pos("set-filters") < pos("persist-filters"));
    assert!(pos("persist-filters") < pos("restart-server"));
    assert!(pos("restart-server") < pos("start-channel"));
    assert!(pos("flip") < pos("unpersist-filters"));
    assert!(pos("reset-channel") < pos("unpersist-filters"));
    // Nothing of the channel is left on the target.
    let st = connect(FLEET.sandbox(), to)
        .channel_status(&channel)
        .unwrap();
    assert!(st.is_none(), "{st:?}");
    // Back where it was, by the default path (no restart).
    cli_on(&inv, &["move", "--shard", "2", "--to", from])
        .timeout(Duration::from_secs(300))
        .assert()
        .success();
}

#[test]
fn the_restart_path_writes_the_per_channel_option_the_server_reads_back() {
    let _g = serial();
    let inv_path = ssh_inventory();
    let inv = Inventory::load(&inv_path).unwrap();
    let node = "node3";
    let before = std::fs::read(option_file(node)).unwrap();
    let ch = shardctl::ident::Channel::new("shardctl_persist_probe").unwrap();
    let mut s = connect(FLEET.sandbox(), node);
    common::exec(
        &mut s,
        &["CHANGE MASTER 'shardctl_persist_probe' TO MASTER_HOST = '127.0.0.1', MASTER_PORT = 1, MASTER_USER = 'nobody'"],
    );
    let filters = shardctl::server::Filters {
        wild_do_schemas: vec![shardctl::ident::Ident::new("schema", "employees_77").unwrap()],
        ..Default::default()
    };
    use shardctl::ops::steps::{filter, Persist};
    filter(&inv, node, &ch, &filters, Persist::Write).unwrap();
    let text = String::from_utf8(std::fs::read(option_file(node)).unwrap()).unwrap();
    assert!(
        text.contains("shardctl_persist_probe.replicate_wild_do_table=\"employees\\\\_77.%\""),
        "{text}"
    );
    // The server came back with the channel filtered from the option file alone.
    let st = connect(FLEET.sandbox(), node)
        .channel_status(&ch)
        .unwrap()
        .unwrap();
    assert_eq!(st.wild_do_table, "employees\\_77.%");
    filter(&inv, node, &ch, &filters, Persist::Remove).unwrap();
    assert_eq!(std::fs::read(option_file(node)).unwrap(), before);
    common::exec(
        &mut connect(FLEET.sandbox(), node),
        &[
            "STOP SLAVE 'shardctl_persist_probe'",
            "RESET SLAVE 'shardctl_persist_probe' ALL",
        ],
    );
}

#[test]
fn a_move_over_a_host_with_the_wrong_key_is_refused_and_nothing_is_done() {
    let _g = serial();
    let inv = inventory_with("wrong-key", |inv| {
        inv.nodes.get_mut("node3").unwrap().ssh = Some(ssh_spec(&sshd().wrong_known_hosts));
    });
    let cnf = std::fs::read(option_file("node3")).unwrap();
    let ops = operation_count();
    let out = cli_on(
        &inv,
        &[
            "move",
            "--shard",
            "2",
            "--to",
            "node3",
            "--playbook",
            restart_playbook().to_str().unwrap(),
        ],
    )
    .output()
    .unwrap();
    assert_eq!(out.status.code(), Some(REFUSED), "{}", stderr_of(&out));
    let err = stderr_of(&out);
    assert!(
        err.contains("node3 (ssh root@127.0.0.1:") && err.contains("differs"),
        "{err}"
    );
    assert_nothing_done(ops, 2, "node2", "node3", &cnf);
}

#[test]
fn a_move_onto_an_unreachable_host_times_out_and_nothing_is_done() {
    let _g = serial();
    let silent = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
    let port = silent.local_addr().unwrap().port();
    let inv = inventory_with("unreachable", |inv| {
        let mut spec = ssh_spec(&sshd().known_hosts);
        spec.port = port;
        spec.connect_timeout_secs = 1;
        inv.nodes.get_mut("node3").unwrap().ssh = Some(spec);
    });
    let cnf = std::fs::read(option_file("node3")).unwrap();
    let ops = operation_count();
    let out = cli_on(
        &inv,
        &[
            "move",
            "--shard",
            "2",
            "--to",
            "node3",
            "--playbook",
            restart_playbook().to_str().unwrap(),
        ],
    )
    .output()
    .unwrap();
    assert_eq!(out.status.code(), Some(TIMEOUT), "{}", stderr_of(&out));
    assert!(
        stderr_of(&out).contains("no answer within 1s"),
        "{}",
        stderr_of(&out)
    );
    assert_nothing_done(ops, 2, "node2", "node3", &cnf);
}

#[test]
fn a_restart_command_that_fails_stops_the_move_and_abort_leaves_nothing_behind() {
    let _g = serial();
    let inv = inventory_with("failing-restart", |inv| {
        let n = inv.nodes.get_mut("node3").unwrap();
        n.ssh = Some(ssh_spec(&sshd().known_hosts));
        n.restart_command = Some("echo 'restart refused by the test' >&2; exit 3".into());
    });
    let cnf = std::fs::read(option_file("node3")).unwrap();
    let version = directory().version().unwrap();
    let out = cli_on(
        &inv,
        &[
            "move",
            "--shard",
            "2",
            "--to",
            "node3",
            "--playbook",
            restart_playbook().to_str().unwrap(),
        ],
    )
    .timeout(Duration::from_secs(300))
    .output()
    .unwrap();
    assert_eq!(out.status.code(), Some(SERVER), "{}", stderr_of(&out));
    let err = stderr_of(&out);
    assert!(
        err.contains("node3 (ssh root@127.0.0.1:")
            && err.contains(
                "the restart command failed (exit status 3): restart refused by the test"
            ),
        "{err}"
    );
    // The shard never left its node: no fence, no flip.
    assert_eq!(shard_node(2), "node2");
    let op = directory().operations(None).unwrap()[0].id;
    cli_on(&inv, &["abort", &op.to_string()])
        .timeout(Duration::from_secs(120))
        .assert()
        .success();
    assert_eq!(std::fs::read(option_file("node3")).unwrap(), cnf);
    assert!(!schema_exists("node3", "employees_2"));
    let channel = common::op_names(&common::inventory(FLEET.sandbox()), op).channel(op);
    let st = connect(FLEET.sandbox(), "node3")
        .channel_status(&channel)
        .unwrap();
    assert!(st.is_none(), "{st:?}");
    assert_eq!(shard_node(2), "node2");
    assert!(directory().version().unwrap() >= version);
}

#[test]
fn too_little_free_space_in_the_target_datadir_is_refused() {
    let _g = serial();
    // An honest knob: the inventory's reserve on top of the shard's size, set far above
    // any disk (a petabyte).
    let inv = inventory_with("no-space", |inv| {
        inv.nodes.get_mut("node3").unwrap().ssh = Some(ssh_spec(&sshd().known_hosts));
        inv.defaults.free_space_reserve_mib = 1 << 30;
    });
    let cnf = std::fs::read(option_file("node3")).unwrap();
    let ops = operation_count();
    let out = cli_on(&inv, &["move", "--shard", "2", "--to", "node3"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(REFUSED), "{}", stderr_of(&out));
    let err = stderr_of(&out);
    assert!(
        err.contains("node node3:")
            && err.contains("free; the shard needs")
            && err.contains("1073741824 MiB reserve"),
        "{err}"
    );
    assert_nothing_done(ops, 2, "node2", "node3", &cnf);
}

#[test]
fn the_restart_path_refuses_a_target_that_holds_the_directory_or_lacks_a_restart_command() {
    let _g = serial();
    let ops = operation_count();
    let inv = inventory_with("no-restart", |inv| {
        inv.nodes.get_mut("node3").unwrap().restart_command = None;
    });
    let cnf = std::fs::read(option_file("node3")).unwrap();
    let out = cli_on(
        &inv,
        &[
            "move",
            "--shard",
            "2",
            "--to",
            "node3",
            "--playbook",
            restart_playbook().to_str().unwrap(),
        ],
    )
    .output()
    .unwrap();
    assert_eq!(out.status.code(), Some(REFUSED), "{}", stderr_of(&out));
    assert!(
        stderr_of(&out).contains("node3 has no restart_command"),
        "{}",
        stderr_of(&out)
    );
    assert_nothing_done(ops, 2, "node2", "node3", &cnf);
    let out = cli_on(
        &ssh_inventory(),
        &[
            "move",
            "--shard",
            "2",
            "--to",
            "node1",
            "--playbook",
            restart_playbook().to_str().unwrap(),
        ],
    )
    .output()
    .unwrap();
    assert_eq!(out.status.code(), Some(REFUSED), "{}", stderr_of(&out));
    assert!(
        stderr_of(&out).contains("holds the sharding directory"),
        "{}",
        stderr_of(&out)
    );
    assert_eq!(operation_count(), ops);
}

#[test]
fn a_remote_node_without_ssh_is_refused_by_name() {
    let inv = Inventory::parse(
        Path::new("inv.yaml"),
        "directory:\n  node: a\nnodes:\n  a:\n    host: 10.1.2.3\n    user: x\n    datadir: /var/lib/mysql\n",
    )
    .unwrap();
    let err = match remote::host_for(&inv, "a") {
        Err(e) => e.to_string(),
        Ok(_) => panic!("a host was made"),
    };
    assert!(
        err.contains("node a runs on 10.1.2.3 and has no ssh: section"),
        "{err}"
    );
}

// ---- the physical method ----

/// `mariadb-dump ARGS` on `node` (the sandbox's admin account).
fn mariadb_dump(node: &str, args: &[&str]) -> Vec<u8> {
    let sb = FLEET.sandbox();
    let port = sb.node(node).unwrap().port.to_string();
    let out = std::process::Command::new("mariadb-dump")
        .arg(format!(
            "--defaults-extra-file={}",
            sb.dir().join("client.cnf").display()
        ))
        .args(["-h", "127.0.0.1", "-P", &port])
        .args(args)
        .output()
        .expect("run mariadb-dump");
    assert!(
        out.status.success(),
        "mariadb-dump {args:?}: {}",
        stderr_of(&out)
    );
    out.stdout
}

/// Every view, routine, trigger and event of `schema` with its creation context, and the
/// schema's own defaults and tables, as mariadb-dump prints them.
fn dump_objects(node: &str, schema: &str) -> String {
    String::from_utf8(mariadb_dump(
        node,
        &[
            "--no-data",
            "--routines",
            "--triggers",
            "--events",
            "--skip-dump-date",
            "--databases",
            schema,
        ],
    ))
    .unwrap()
}

/// Every row of `schema`, one INSERT per row in primary-key order.
fn dump_rows(node: &str, schema: &str) -> Vec<u8> {
    mariadb_dump(
        node,
        &[
            "--no-create-info",
            "--skip-triggers",
            "--skip-extended-insert",
            "--order-by-primary",
            "--skip-dump-date",
            schema,
        ],
    )
}

/// A shard of function `obj` on node1 holding tests/fixtures/every_object.sql (loaded by
/// the `mariadb` client under the shard's name, so every object keeps its context).
fn every_object_shard(lower_bound: &str) -> (String, String) {
    let sb = FLEET.sandbox();
    let inv = sb.inventory_path();
    static FUNCTION: OnceLock<()> = OnceLock::new();
    FUNCTION.get_or_init(|| {
        common::exec(
            &mut connect(sb, "node1"),
            &[
                "CREATE DATABASE objects",
                "CREATE TABLE objects.customer (id INT NOT NULL PRIMARY KEY)",
            ],
        );
        cli_on(
            &inv,
            &["function", "add", "obj", "--type", "range", "--key", "int"],
        )
        .assert()
        .success();
        cli_on(
            &inv,
            &[
                "table",
                "add",
                "objects.customer",
                "--function",
                "obj",
                "--column",
                "id",
            ],
        )
        .assert()
        .success();
    });
    let out = cli_on(
        &inv,
        &[
            "--output",
            "json",
            "shard",
            "add",
            "--function",
            "obj",
            "--node",
            "node1",
            "--lower-bound",
            lower_bound,
            "--template-node",
            "node1",
        ],
    )
    .output()
    .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let id = v["shard"].as_u64().unwrap().to_string();
    let schema = format!("objects_{id}");
    common::exec(
        &mut connect(sb, "node1"),
        &[&format!("DROP DATABASE {schema}")],
    );
    common::load_fixture_as(sb, "node1", "every_object.sql", "objects", &schema);
    (id, schema)
}

/// A shard of the every-object fixture for the physical method: all of it, its FULLTEXT
/// table (`customer`, referenced by foreign keys and referencing one) imported and rebuilt
/// on the target.
fn physical_fixture_shard(lower_bound: &str) -> (String, String) {
    every_object_shard(lower_bound)
}

/// `move --shard SHARD --to TO` with the physical playbook, over the ssh inventory.
fn physical_move(shard: &str, to: &str) -> assert_cmd::Command {
    physical_move_with(&ssh_inventory(), shard, to)
}

/// `move --shard SHARD --to TO` with the physical playbook, over the inventory `inv`.
fn physical_move_with(inv: &Path, shard: &str, to: &str) -> assert_cmd::Command {
    cli_on(
        inv,
        &[
            "move",
            "--shard",
            shard,
            "--to",
            to,
            "--playbook",
            physical_playbook().to_str().unwrap(),
        ],
    )
}

/// The default move playbook with the physical method.
fn physical_playbook() -> PathBuf {
    let text = shardctl::playbook::MOVE_PLAYBOOK.replace("method: native", "method: physical");
    assert!(text.contains("method: physical"));
    let path = FLEET.sandbox().dir().join("move-physical.yaml");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn every_object_moves_by_the_physical_method_with_identical_rows_and_objects() {
    let _g = serial();
    let (id, schema) = physical_fixture_shard("0");
    // Tables in the engines carried as files from the same backup, with a trigger and a
    // view on them (created after the files are in place).
    common::exec(
        &mut connect(FLEET.sandbox(), "node1"),
        &[
            &format!("CREATE TABLE {schema}.notes_myisam (id INT PRIMARY KEY, body TEXT, KEY b (body(10))) ENGINE=MyISAM"),
            &format!("CREATE TABLE {schema}.audit_aria (id INT AUTO_INCREMENT PRIMARY KEY, what VARCHAR(40)) ENGINE=Aria"),
            &format!("INSERT INTO {schema}.notes_myisam VALUES (1, 'first'), (2, 'zweite ü'), (3, NULL)"),
            &format!("INSERT INTO {schema}.audit_aria (what) VALUES ('a'), ('b')"),
            &format!("CREATE TRIGGER {schema}.notes_audit AFTER INSERT ON {schema}.notes_myisam FOR EACH ROW INSERT INTO {schema}.audit_aria (what) VALUES (NEW.body)"),
            &format!("CREATE VIEW {schema}.notes_view AS SELECT n.id, a.what FROM {schema}.notes_myisam n JOIN {schema}.audit_aria a ON a.id = n.id"),
        ],
    );
    let objects_before = dump_objects("node1", &schema);
    let rows_before = dump_rows("node1", &schema);
    let search = format!(
        "SELECT COUNT(*) FROM {schema}.place FORCE INDEX (location) WHERE MBRIntersects(location, ST_GeomFromText('POLYGON((-1 -1, 1 -1, 1 1, -1 1, -1 -1))'))"
    );
    let found_on_source = count(&mut connect(FLEET.sandbox(), "node1"), &search);
    assert!(found_on_source > 0, "the search finds nothing on node1");
    let text_search = format!(
        "SELECT COUNT(*) FROM {schema}.customer WHERE MATCH(name, bio) AGAINST ('compilers')"
    );
    let text_found_on_source = count(&mut connect(FLEET.sandbox(), "node1"), &text_search);
    assert!(
        text_found_on_source > 0,
        "the full-text search finds nothing on node1"
    );
    // node1 (the source) is on this machine, node3 (the target) behind the test's sshd: the
    // files stream from one host to the other. The source's work directory goes to a
    // temporary directory of this test's own, to be seen gone afterwards.
    let source_tmp = tempfile::tempdir().unwrap();
    let out = physical_move(&id, "node3")
        .env("TMPDIR", source_tmp.path())
        .timeout(Duration::from_secs(600))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert_eq!(shard_node(id.parse().unwrap()), "node3");
    let after = dump_objects("node3", &schema);
    assert_eq!(objects_before, after);
    assert_eq!(rows_before, dump_rows("node3", &schema), "rows differ");
    assert!(objects_before.contains("ENGINE=MyISAM") && objects_before.contains("ENGINE=Aria"));
    // The tables carried as files work on the target: the trigger fires into the Aria table.
    let mut n3 = connect(FLEET.sandbox(), "node3");
    // The imported SPATIAL index answers on the target as on the source.
    assert_eq!(
        count(&mut n3, &search),
        found_on_source,
        "spatial search on node3"
    );
    // So does the FULLTEXT index, rebuilt on the target.
    assert_eq!(
        count(&mut n3, &text_search),
        text_found_on_source,
        "full-text search on node3"
    );
    common::exec(
        &mut n3,
        &[&format!(
            "INSERT INTO {schema}.notes_myisam VALUES (4, 'after')"
        )],
    );
    assert_eq!(
        count(
            &mut n3,
            &format!("SELECT COUNT(*) FROM {schema}.audit_aria WHERE what = 'after'")
        ),
        1
    );
    // No staging directory or backup is left behind.
    let node_dir = FLEET.sandbox().node("node3").unwrap().dir.clone();
    let staged: Vec<_> = std::fs::read_dir(&node_dir)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().contains("shardctl-import"))
        .collect();
    assert!(staged.is_empty(), "{staged:?}");
    let leftovers: Vec<_> = std::fs::read_dir(source_tmp.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    // The imported copy is an ordinary schema there: moved on, its drop-source drops it.
    cli_on(&ssh_inventory(), &["move", "--shard", &id, "--to", "node1"])
        .timeout(Duration::from_secs(600))
        .assert()
        .success();
    assert!(!schema_exists("node3", &schema));
    // Between two servers of one machine and login (node1 and node2 in the sandbox's own
    // inventory, both on this machine) mariadb-backup writes the backup straight into the
    // target's staging directory, without a stream.
    let (rows_now, objects_now) = (dump_rows("node1", &schema), dump_objects("node1", &schema));
    let moved = physical_move_with(&FLEET.inventory_path(), &id, "node2")
        .arg("-vv")
        .timeout(Duration::from_secs(600))
        .assert()
        .success();
    // The MyISAM and Aria files, carried as they are, and the directory they were renamed
    // into are flushed once the tablespaces are imported.
    let log = String::from_utf8_lossy(&moved.get_output().stderr).into_owned();
    assert!(
        log.lines().any(|l| l.contains("notes_myisam.MYD")
            && l.contains("audit_aria.MAD")
            && l.contains("sync -- \"$x\"")
            && l.ends_with("&& sync -- .")),
        "the carried files were not flushed: {log}"
    );
    assert!(
        rows_now == dump_rows("node2", &schema),
        "rows differ on node2"
    );
    assert_eq!(objects_now, dump_objects("node2", &schema));
    assert!(staged_on("node2").is_empty(), "{:?}", staged_on("node2"));
}

/// The staging directories beside a node's datadir.
fn staged_on(node: &str) -> Vec<String> {
    let node_dir = FLEET.sandbox().node(node).unwrap().dir.clone();
    std::fs::read_dir(&node_dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("shardctl-import"))
        .collect()
}

/// Moves shard `id` (schema `schema`) physically onto `to` over `inv`, `args` added, with
/// the process killed at the copy's end: the operation, the staging directories beside
/// `to`'s datadir (exactly the killed copy's) and the standard error.
fn crash_in_the_copy(
    inv: &Path,
    id: &str,
    schema: &str,
    to: &str,
    args: &[&str],
) -> (String, Vec<String>, String) {
    let out = physical_move_with(inv, id, to)
        .args(args)
        .env("SHARDCTL_FAULT", "crash@copy")
        .timeout(Duration::from_secs(600))
        .output()
        .unwrap();
    assert!(!out.status.success(), "the fault did not fire");
    let err = stderr_of(&out);
    assert!(err.contains("fault point copy"), "{err}");
    let staged = staged_on(to);
    assert!(
        staged.len() == 1 && staged[0].starts_with(&format!("data.shardctl-import.{schema}.")),
        "the killed copy's backup is staged beside {to}'s datadir: {staged:?}"
    );
    (
        directory().operations(None).unwrap()[0].id.to_string(),
        staged,
        err,
    )
}

/// `abort OP` over `inv` leaves nothing of the copy onto `to`: no staging directory, no
/// schema, the shard still on node1.
fn abort_leaves_nothing(inv: &Path, op: &str, id: &str, schema: &str, to: &str) {
    cli_on(inv, &["abort", op])
        .timeout(Duration::from_secs(300))
        .assert()
        .success();
    assert!(staged_on(to).is_empty(), "{:?}", staged_on(to));
    assert!(!schema_exists(to, schema));
    assert_eq!(shard_node(id.parse().unwrap()), "node1");
}

#[test]
fn a_physical_copy_killed_or_interrupted_with_its_backup_staged_leaves_nothing_behind() {
    let _g = serial();
    let (id, schema) = physical_fixture_shard("1000000");
    let rows_before = dump_rows("node1", &schema);
    // On one machine and login (the sandbox's own inventory: node1 and node2 both here) the
    // backup is written into the staging directory directly: a crash leaves it there,
    // abort removes it.
    let local = FLEET.inventory_path();
    let (op, _, err) = crash_in_the_copy(&local, &id, &schema, "node2", &["-vv"]);
    assert!(
        err.contains("mariadb-backup --no-defaults")
            && err.contains(" --backup --parallel=")
            && !err.contains("--stream=xbstream"),
        "the backup was not written directly: {err}"
    );
    // The prepare skips the fsyncs of its scratch files (scripts/setup installs eatmydata).
    assert!(
        err.contains("eatmydata mariadb-backup --prepare --export --target-dir="),
        "the prepare did not run under eatmydata: {err}"
    );
    // Its password went to it on its input: not in the log of every command line.
    let sandbox = Inventory::load(&local).unwrap();
    let login =
        shardctl::server::ConnectSpec::for_node(&sandbox, sandbox.node("node1").unwrap()).unwrap();
    let password = login.credentials.password.expose();
    assert!(
        password.len() >= 8 && !err.contains(password),
        "the password is in the log"
    );
    abort_leaves_nothing(&local, &op, &id, &schema, "node2");
    let work = tempfile::tempdir().unwrap();
    let inv = ssh_inventory();
    // Abort rolls the copy back, staging included.
    let (op, _, _) = crash_in_the_copy(&inv, &id, &schema, "node3", &[]);
    abort_leaves_nothing(&inv, &op, &id, &schema, "node3");
    // Resume copies again in a directory of its own, once the killed copy's is gone. A
    // Ctrl-C while it is paused with the backup staged takes effect at the imports (the
    // tables created, their tablespaces discarded, the files moved in: the hardest state
    // to roll back); the staging directory and the .cfg files go, and the next resume
    // drops that state and copies again.
    let (op, killed, _) = crash_in_the_copy(&inv, &id, &schema, "node3", &[]);
    let mut resumed = common::spawn_shardctl(
        &inv,
        &["resume", &op],
        Some("pause=120@copy"),
        work.path(),
        "resume",
    );
    let deadline = Instant::now() + Duration::from_secs(300);
    while !std::fs::read_to_string(work.path().join("resume.err"))
        .unwrap()
        .contains("fault point copy: pausing")
    {
        assert!(
            Instant::now() < deadline,
            "resume never reached the copy's end"
        );
        assert!(resumed.try_wait().unwrap().is_none(), "resume ended early");
        std::thread::sleep(Duration::from_millis(100));
    }
    let staged = staged_on("node3");
    assert!(
        staged.len() == 1 && staged != killed,
        "the killed copy's staging {killed:?} is gone, the new one's is there: {staged:?}"
    );
    // SAFETY: signalling a child of this test.
    unsafe {
        libc::kill(resumed.id() as i32, libc::SIGINT);
    }
    let status = common::wait_exit(&mut resumed, Duration::from_secs(60));
    assert_eq!(
        status.code(),
        Some(130),
        "{}",
        std::fs::read_to_string(work.path().join("resume.err")).unwrap()
    );
    assert!(staged_on("node3").is_empty(), "{:?}", staged_on("node3"));
    cli_on(&inv, &["resume", &op])
        .timeout(Duration::from_secs(600))
        .assert()
        .success();
    assert!(staged_on("node3").is_empty(), "{:?}", staged_on("node3"));
    assert_eq!(shard_node(id.parse().unwrap()), "node3");
    assert_eq!(rows_before, dump_rows("node3", &schema), "rows differ");
}

#[test]
fn the_physical_preflight_refuses_what_cannot_work_and_names_the_method_that_would() {
    let _g = serial();
    use shardctl::copy::physical::{self, PhysicalChecks};
    use shardctl::copy::SchemaPair;
    use shardctl::server::{Flavor, Vendor};
    let sb = FLEET.sandbox();
    let ops = operation_count();
    let cnf = std::fs::read(option_file("node3")).unwrap();
    // Each case: what node2's shard gets, what the refusal says, the table dropped after.
    let cases: [(&[&str], &[&str]); 2] = [
        // A table in another engine.
        (
            &["CREATE TABLE employees_2.notes_extra (id INT PRIMARY KEY) ENGINE=MEMORY"],
            &["table employees_2.notes_extra on node2 uses the MEMORY engine"],
        ),
        // A FULLTEXT index dropped without a rebuild leaves the table's hidden FTS_DOC_ID
        // column and full-text tables behind: its tablespace cannot be imported either.
        (
            &[
                "CREATE TABLE employees_2.notes_extra (id INT PRIMARY KEY, body TEXT, FULLTEXT KEY body (body)) ENGINE=InnoDB",
                "ALTER TABLE employees_2.notes_extra DROP INDEX body",
            ],
            &[
                "schema employees_2 on node2 holds the full-text table employees_2/FTS_",
                "ALTER TABLE ... FORCE",
            ],
        ),
    ];
    for (setup, says) in cases {
        common::exec(&mut connect(sb, "node2"), setup);
        let out = physical_move("2", "node3").output().unwrap();
        common::exec(
            &mut connect(sb, "node2"),
            &["DROP TABLE employees_2.notes_extra"],
        );
        assert_eq!(out.status.code(), Some(REFUSED), "{}", stderr_of(&out));
        let err = stderr_of(&out);
        assert!(
            says.iter().all(|s| err.contains(s)) && err.contains("use method native or dump"),
            "{err}"
        );
        assert_nothing_done(ops, 2, "node2", "node3", &cnf);
    }

    let inv = Inventory::load(&ssh_inventory()).unwrap();
    let pairs = vec![SchemaPair {
        from: shardctl::ident::Ident::new("schema", "employees_2").unwrap(),
        to: shardctl::ident::Ident::new("schema", "employees_2").unwrap(),
    }];
    let mut src = connect(sb, "node2");
    let here = src.flavor();
    // Servers of different major versions.
    let other = Flavor::new(Vendor::MariaDb, 11, 4, 2);
    let err = physical::preflight(&inv, "node2", "node3", &pairs, (here, other), &mut src)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("one major version") && err.contains("use method native or dump"),
        "{err}"
    );
    // A copy under new names (a split).
    let renamed = vec![SchemaPair {
        from: pairs[0].from.clone(),
        to: shardctl::ident::Ident::new("schema", "employees_9").unwrap(),
    }];
    let err = physical::preflight(&inv, "node2", "node3", &renamed, (here, here), &mut src)
        .unwrap_err()
        .to_string();
    assert!(err.contains("needs method native"), "{err}");
    // What the hosts hold: the tool with its version, over ssh.
    let checks =
        physical::preflight(&inv, "node2", "node3", &pairs, (here, here), &mut src).unwrap();
    assert!(checks.tool_version.contains("10.11"), "{checks:?}");
    assert_eq!(checks.page_size, 16384);
    // The backup also carries the system tablespace (at least its 12 MiB) and the redo
    // log into the target's staging directory; the free-space check counts them.
    let redo = count(&mut src, "SELECT @@innodb_log_file_size") as u64;
    assert!(
        checks.backup_overhead_bytes >= redo + (12 << 20),
        "{checks:?}, redo log {redo}"
    );
    // Another page size on the target.
    let err = physical::preflight_target(
        "node3",
        &mut connect(sb, "node3"),
        &PhysicalChecks {
            page_size: 4096,
            ..checks
        },
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("innodb_page_size 16384, the source 4096"),
        "{err}"
    );
    // A tool that is not there is named with its package.
    let host = SshHost::new("node3", "127.0.0.1", &ssh_spec(&sshd().known_hosts));
    let err = shardctl::remote::node::tool_version(
        &host,
        "mariadb-backup-not-installed",
        "mariadb-backup",
    )
    .unwrap_err();
    assert_eq!(err.exit_code() as i32, REFUSED);
    assert!(
        err.to_string().contains(
            "mariadb-backup-not-installed is not installed (install the package mariadb-backup)"
        ),
        "{err}"
    );
    // A node the inventory gives no datadir.
    let no_datadir = inventory_with("no-datadir", |inv| {
        inv.nodes.get_mut("node3").unwrap().datadir = None;
    });
    let err = physical::preflight(
        &Inventory::load(&no_datadir).unwrap(),
        "node2",
        "node3",
        &pairs,
        (here, here),
        &mut src,
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("node3 has no datadir in the inventory"),
        "{err}"
    );
}

#[test]
fn the_backup_step_by_hand_copies_physically_with_its_position() {
    let _g = serial();
    let out = cli_on(
        &ssh_inventory(),
        &[
            "--output", "json", "backup", "--shard", "3", "--method", "physical", "--into", "node2",
        ],
    )
    .timeout(Duration::from_secs(300))
    .output()
    .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let text = report.to_string();
    assert!(text.contains("mysql-bin."), "no position in {text}");
    assert_eq!(rows("node2", "employees_3"), rows("node3", "employees_3"));
    common::exec(
        &mut connect(FLEET.sandbox(), "node2"),
        &["DROP DATABASE employees_3"],
    );
}

#[test]
fn the_dry_run_shows_the_option_block_the_restart_and_the_physical_copy_and_changes_nothing() {
    let _g = serial();
    let cnf = std::fs::read(option_file("node3")).unwrap();
    let ops = operation_count();
    let version = directory().version().unwrap();
    let up = uptime("node3");
    let out = cli_on(
        &ssh_inventory(),
        &[
            "move",
            "--shard",
            "2",
            "--to",
            "node3",
            "--dry-run",
            "--playbook",
            restart_playbook().to_str().unwrap(),
        ],
    )
    .output()
    .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    let text = common::mask_directory_id(&String::from_utf8_lossy(&out.stdout), "");
    for want in [
        "append to ",
        "shardctl_op<op>.replicate_wild_do_table=\"employees\\\\_2.%\"",
        "# shardctl begin shardctl_op<op>",
        "restart the server on node3 (ssh root@127.0.0.1:",
        "remove shardctl's block for shardctl_op<op>",
    ] {
        assert!(text.contains(want), "{want:?} not in:\n{text}");
    }
    let out = cli_on(
        &ssh_inventory(),
        &[
            "move",
            "--shard",
            "2",
            "--to",
            "node3",
            "--dry-run",
            "--method",
            "physical",
        ],
    )
    .output()
    .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .contains("physical: mariadb-backup --backup --databases"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(std::fs::read(option_file("node3")).unwrap(), cnf);
    assert_eq!(operation_count(), ops);
    assert_eq!(directory().version().unwrap(), version);
    assert!(uptime("node3") >= up, "the dry run restarted node3");
}

#[test]
fn a_crash_on_the_restart_path_is_resumed_and_the_option_file_still_comes_back_as_it_was() {
    let _g = serial();
    let inv = ssh_inventory();
    let cnf = std::fs::read(option_file("node3")).unwrap();
    for point in [
        "done:persist-filters",
        "journaled:restart-server",
        "before:unpersist-filters",
    ] {
        let out = cli_on(
            &inv,
            &[
                "move",
                "--shard",
                "2",
                "--to",
                "node3",
                "--playbook",
                restart_playbook().to_str().unwrap(),
            ],
        )
        .env("SHARDCTL_FAULT", format!("crash@{point}"))
        .timeout(Duration::from_secs(300))
        .output()
        .unwrap();
        assert!(!out.status.success(), "{point}: the fault did not fire");
        assert!(
            stderr_of(&out).contains(&format!("fault point {point}")),
            "{point}: {}",
            stderr_of(&out)
        );
        let op = directory().operations(None).unwrap()[0].id.to_string();
        cli_on(&inv, &["resume", &op])
            .timeout(Duration::from_secs(300))
            .assert()
            .success();
        assert_eq!(shard_node(2), "node3", "{point}");
        assert_eq!(std::fs::read(option_file("node3")).unwrap(), cnf, "{point}");
        cli_on(&inv, &["move", "--shard", "2", "--to", "node2"])
            .timeout(Duration::from_secs(300))
            .assert()
            .success();
    }
}

#[test]
fn config_check_reaches_each_host_over_ssh_and_names_a_wrong_key() {
    // Not while another test restarts a node.
    let _g = serial();
    let out = cli_on(&ssh_inventory(), &["config", "check"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("host node3 (ssh root@127.0.0.1:"), "{text}");
    let inv = inventory_with("check-wrong-key", |inv| {
        inv.nodes.get_mut("node3").unwrap().ssh = Some(ssh_spec(&sshd().wrong_known_hosts));
    });
    let out = cli_on(&inv, &["--output", "json", "config", "check"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(REFUSED), "{}", stderr_of(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let bad: Vec<&serde_json::Value> = v["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["ok"] == false)
        .collect();
    assert_eq!(bad.len(), 1, "{v}");
    assert_eq!(bad[0]["node"], "node3");
    assert!(bad[0]["error"].as_str().unwrap().contains("differs"), "{v}");
}

#[test]
fn a_file_written_where_it_cannot_be_is_an_error_with_the_hosts_own_words() {
    let host = SshHost::new("node9", "127.0.0.1", &ssh_spec(&sshd().known_hosts));
    let data = vec![7u8; 2_000_000];
    let err = host
        .write_file(
            Path::new("/nonexistent-dir/for-sure/file"),
            &data,
            0o600,
            Duration::from_secs(30),
        )
        .unwrap_err();
    let msg = err.to_string();
    assert_eq!(err.exit_code() as i32, SERVER, "{msg}");
    assert!(
        msg.contains("writing /nonexistent-dir/for-sure/file failed (exit status")
            && msg.contains("cannot create /nonexistent-dir/for-sure/file.shardctl-tmp"),
        "{msg}"
    );
}

#[test]
fn login_through_the_ssh_agent_works_and_without_it_is_refused() {
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    let sock = dir.path().join("agent.sock");
    let mut agent = std::process::Command::new("ssh-agent")
        .arg("-D")
        .arg("-a")
        .arg(&sock)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start ssh-agent");
    let deadline = Instant::now() + Duration::from_secs(10);
    while !sock.exists() {
        assert!(Instant::now() < deadline, "ssh-agent made no socket");
        std::thread::sleep(Duration::from_millis(50));
    }
    let added = std::process::Command::new("ssh-add")
        .arg(&sshd().identity)
        .env("SSH_AUTH_SOCK", &sock)
        .output()
        .unwrap();
    assert!(added.status.success(), "{}", stderr_of(&added));
    let inv = inventory_with("agent", |inv| {
        let mut spec = ssh_spec(&sshd().known_hosts);
        spec.identity_file = None;
        spec.agent = true;
        inv.nodes.get_mut("node3").unwrap().ssh = Some(spec);
    });
    let with_agent = cli_on(&inv, &["config", "check"])
        .env("SSH_AUTH_SOCK", &sock)
        .output()
        .unwrap();
    let without = cli_on(&inv, &["config", "check"])
        .env_remove("SSH_AUTH_SOCK")
        .output()
        .unwrap();
    let _ = agent.kill();
    let _ = agent.wait();
    assert!(with_agent.status.success(), "{}", stderr_of(&with_agent));
    assert!(
        String::from_utf8_lossy(&with_agent.stdout).contains("host node3 (ssh root@127.0.0.1:"),
        "{}",
        String::from_utf8_lossy(&with_agent.stdout)
    );
    assert_eq!(
        without.status.code(),
        Some(SERVER),
        "{}",
        stderr_of(&without)
    );
    assert!(
        stderr_of(&without).contains("login through the ssh agent"),
        "{}",
        stderr_of(&without)
    );
}
