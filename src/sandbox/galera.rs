//! The sandbox's directory cluster (`sandbox up --directory-cluster N`): N MariaDB servers
//! joined by Galera (the `galera-4` package's provider) on loopback, the first bootstrapping
//! the cluster and the others receiving their state from it with `mariabackup` (the
//! `rsync` method fails when mariadbd runs as root), each with its own group, incremental
//! and full state-transfer ports.

use super::{path_line, process, Binaries, SandboxNode};
use crate::error::{Error, Result};
use mysql::prelude::Queryable;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// The `wsrep_cluster_name` of a sandbox's directory cluster.
pub const CLUSTER_NAME: &str = "shardctl_directory";

/// How long a member may take to reach Synced (a full state transfer included).
const SYNC_TIMEOUT: Duration = Duration::from_secs(300);

/// Where Debian's `galera-4` (and other distributions) install the provider.
const PROVIDERS: [&str; 3] = [
    "/usr/lib/galera/libgalera_smm.so",
    "/usr/lib/galera4/libgalera_smm.so",
    "/usr/lib64/galera-4/libgalera_smm.so",
];

/// The Galera provider library.
pub(super) fn provider() -> Result<PathBuf> {
    PROVIDERS
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
        .ok_or_else(|| {
            Error::Config(format!(
                "--directory-cluster: no Galera provider ({}): install the Debian package galera-4",
                PROVIDERS.join(", ")
            ))
        })
}

/// A member's group-communication port (`galera_port`), then its incremental and full
/// state-transfer ports.
fn ports(member: &SandboxNode) -> Result<(u16, u16, u16)> {
    let g = member.galera_port.ok_or_else(|| {
        Error::Internal(format!("sandbox member {} has no Galera port", member.name))
    })?;
    Ok((g, g + 1, g + 2))
}

/// The option lines that make `member` a member of the cluster of `members`: with
/// `bootstrap`, the cluster is new and begins with it (an empty cluster address);
/// otherwise it joins (or rejoins) the others. Failures are noticed within seconds (a
/// member silent for 3 s is suspected, evicted after 6 s), so a test's killed member
/// stalls the others' commits for about that long. One writer at a time is the design,
/// so auto-increment steps stay 1 (`wsrep_auto_increment_control` off): shard and
/// operation ids remain dense, as on one server.
pub(super) fn config_lines(
    member: &SandboxNode,
    members: &[SandboxNode],
    root_password: &str,
    bootstrap: bool,
) -> Result<Vec<String>> {
    let (g, ist, sst) = ports(member)?;
    let address = if bootstrap {
        "gcomm://".to_string()
    } else {
        let all: Result<Vec<String>> = members
            .iter()
            .map(|m| Ok(format!("127.0.0.1:{}", ports(m)?.0)))
            .collect();
        format!("gcomm://{}", all?.join(","))
    };
    let options = [
        format!("gmcast.listen_addr=tcp://127.0.0.1:{g}"),
        format!("ist.recv_addr=127.0.0.1:{ist}"),
        "gcache.size=64M".into(),
        "evs.suspect_timeout=PT3S".into(),
        "evs.inactive_timeout=PT6S".into(),
        "evs.install_timeout=PT6S".into(),
        "evs.keepalive_period=PT0.5S".into(),
        "evs.inactive_check_period=PT0.5S".into(),
        "pc.recovery=TRUE".into(),
    ]
    .join(";");
    if root_password.contains(['\n', '\r', ' ', '#', ':']) {
        return Err(Error::Internal(
            "the sandbox's root password does not fit an option line".into(),
        ));
    }
    Ok(vec![
        "wsrep-on=ON".into(),
        path_line("wsrep-provider", &provider()?)?,
        format!("wsrep-cluster-name={CLUSTER_NAME}"),
        format!("wsrep-cluster-address={address}"),
        format!("wsrep-node-address=127.0.0.1:{g}"),
        format!("wsrep-node-name={}", member.name),
        format!("wsrep-provider-options={options}"),
        "wsrep-sst-method=mariabackup".into(),
        format!("wsrep-sst-receive-address=127.0.0.1:{sst}"),
        format!("wsrep-sst-auth=root:{root_password}"),
        "wsrep-auto-increment-control=OFF".into(),
        "innodb-autoinc-lock-mode=2".into(),
        // Routers keep one connection each: the load test runs a thousand.
        "max-connections=1500".into(),
    ])
}

/// The position a member killed mid-transaction (its `grastate.dat` says seqno -1)
/// recovers from its storage engine (`mariadbd --wsrep-recover`, as the `galera_recovery`
/// of Debian's service does), to start from with `--wsrep-start-position`; None when its
/// saved state holds a position already.
pub(super) fn recover_position(bin: &Binaries, member: &SandboxNode) -> Result<Option<String>> {
    let grastate =
        std::fs::read_to_string(member.datadir().join("grastate.dat")).unwrap_or_default();
    if !grastate
        .lines()
        .any(|l| l.trim() == "seqno:   -1" || l.trim() == "seqno: -1")
    {
        return Ok(None);
    }
    let log = member.dir.join("wsrep-recover.log");
    let _ = std::fs::remove_file(&log);
    let mut cmd = std::process::Command::new(&bin.server);
    cmd.arg(format!(
        "--defaults-file={}",
        member.config_file().display()
    ))
    .arg("--wsrep-recover")
    .arg(format!("--log-error={}", log.display()));
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        cmd.arg("--user=root");
    }
    process::run_with_timeout(cmd, "mariadbd --wsrep-recover", Duration::from_secs(120))?;
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    Ok(text
        .lines()
        .filter_map(|l| l.split_once("WSREP: Recovered position: "))
        .map(|(_, p)| p.trim().to_string())
        .next_back())
}

/// Waits until `member` answers as Synced in the Primary component (a joiner first
/// receives its state transfer).
pub(super) fn wait_synced(member: &SandboxNode, root_password: &str) -> Result<()> {
    let deadline = Instant::now() + SYNC_TIMEOUT;
    let mut last = String::from("no answer yet");
    loop {
        let opts = mysql::OptsBuilder::new()
            .socket(Some(member.socket().display().to_string()))
            .user(Some("root"))
            .pass(Some(root_password.to_string()))
            .read_timeout(Some(Duration::from_secs(10)))
            .write_timeout(Some(Duration::from_secs(10)));
        if let Ok(mut conn) = mysql::Conn::new(opts) {
            let rows: mysql::Result<Vec<(String, String)>> = conn.query(
                "SHOW GLOBAL STATUS WHERE Variable_name IN ('wsrep_local_state_comment', 'wsrep_cluster_status')",
            );
            if let Ok(rows) = rows {
                let get = |n: &str| {
                    rows.iter()
                        .find(|(k, _)| k.eq_ignore_ascii_case(n))
                        .map(|(_, v)| v.clone())
                        .unwrap_or_default()
                };
                let (state, status) = (
                    get("wsrep_local_state_comment"),
                    get("wsrep_cluster_status"),
                );
                if state == "Synced" && status == "Primary" {
                    return Ok(());
                }
                last = format!("{state}, {status}");
            }
        }
        if !member.running() {
            return Err(Error::server(
                &member.name,
                format!(
                    "the member exited before it was Synced: {}",
                    process::last_error_line(&member.error_log())
                ),
            ));
        }
        if Instant::now() > deadline {
            return Err(Error::Timeout(format!(
                "{} was not Synced within {}s ({last}; see {})",
                member.name,
                SYNC_TIMEOUT.as_secs(),
                member.error_log().display()
            )));
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// The start option that resumes a recovered position.
pub(super) fn start_position_arg(position: &str) -> String {
    format!("--wsrep-start-position={position}")
}
