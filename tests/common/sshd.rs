//! A real OpenSSH server on loopback for the tests of the remote layer: its own host key
//! and its own user key made with ssh-keygen in a temp dir, on a free port, logging in as
//! the user running the tests (root) with that key only. It dies with the test process.
#![allow(dead_code)]

use std::net::TcpStream;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running sshd and the files a client needs.
pub struct Sshd {
    /// Its temp dir (keys, config, known_hosts files).
    pub dir: tempfile::TempDir,
    /// The port on 127.0.0.1.
    pub port: u16,
    /// The user key (private).
    pub identity: PathBuf,
    /// A known_hosts file holding the server's real key.
    pub known_hosts: PathBuf,
    /// A known_hosts file holding another key for the same `[127.0.0.1]:port`.
    pub wrong_known_hosts: PathBuf,
    child: Child,
}

/// Temp dirs are `shardctl-sshd-<test pid>-...`: the server lives in a static, which is
/// never dropped, so each start removes the dirs of test processes that are gone.
const PREFIX: &str = "shardctl-sshd-";

fn remove_stale_dirs() {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        let Some(rest) = name.strip_prefix(PREFIX) else {
            continue;
        };
        let pid = rest.split('-').next().unwrap_or("");
        if pid.parse::<u32>().is_ok() && !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

fn keygen(path: &Path) {
    let st = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(path)
        .stdin(Stdio::null())
        .status()
        .expect("run ssh-keygen");
    assert!(st.success(), "ssh-keygen {}", path.display());
}

/// Free ports below the ephemeral range (test binaries run side by side).
fn free_port() -> u16 {
    shardctl::sandbox::free_test_ports(3).expect("a free port")
}

fn known_hosts_line(port: u16, pub_key: &Path) -> String {
    let key = std::fs::read_to_string(pub_key).expect("public key");
    let mut parts = key.split_whitespace();
    let (kind, body) = (parts.next().unwrap(), parts.next().unwrap());
    format!("[127.0.0.1]:{port} {kind} {body}\n")
}

impl Sshd {
    /// Starts one; panics with sshd's own words when it cannot.
    pub fn start() -> Sshd {
        remove_stale_dirs();
        let dir = tempfile::Builder::new()
            .prefix(&format!("{PREFIX}{}-", std::process::id()))
            .tempdir()
            .expect("temp dir");
        let d = dir.path();
        let host_key = d.join("host_key");
        let identity = d.join("id_ed25519");
        let other = d.join("other_host_key");
        keygen(&host_key);
        keygen(&identity);
        keygen(&other);
        std::fs::copy(d.join("id_ed25519.pub"), d.join("authorized_keys")).unwrap();
        // sshd's privilege separation needs this directory (made by the package's service,
        // which the tests do not run).
        std::fs::create_dir_all("/run/sshd").expect("create /run/sshd");
        let port = free_port();
        let config = d.join("sshd_config");
        std::fs::write(
            &config,
            format!(
                "Port {port}\nListenAddress 127.0.0.1\nHostKey {hk}\nPidFile {pid}\nAuthorizedKeysFile {ak}\nStrictModes no\nUsePAM no\nPermitRootLogin prohibit-password\nPasswordAuthentication no\nKbdInteractiveAuthentication no\nPubkeyAuthentication yes\nLogLevel ERROR\n",
                hk = host_key.display(),
                pid = d.join("sshd.pid").display(),
                ak = d.join("authorized_keys").display(),
            ),
        )
        .unwrap();
        let known_hosts = d.join("known_hosts");
        std::fs::write(
            &known_hosts,
            known_hosts_line(port, &d.join("host_key.pub")),
        )
        .unwrap();
        let wrong_known_hosts = d.join("wrong_known_hosts");
        std::fs::write(
            &wrong_known_hosts,
            known_hosts_line(port, &d.join("other_host_key.pub")),
        )
        .unwrap();
        let mut cmd = Command::new("/usr/sbin/sshd");
        cmd.arg("-D").arg("-f").arg(&config).arg("-e");
        cmd.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::from(
                std::fs::File::create(d.join("sshd.log")).unwrap(),
            ));
        // SAFETY: prctl only changes the child's own settings.
        unsafe {
            cmd.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            });
        }
        // The parent-death signal follows the spawning *thread*: spawn from one that lives
        // as long as the test process.
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(cmd.spawn());
            loop {
                std::thread::park();
            }
        });
        let mut child = rx
            .recv()
            .expect("the sshd spawner answers")
            .expect("start /usr/sbin/sshd");
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Ok(Some(st)) = child.try_wait() {
                panic!(
                    "sshd exited ({st}): {}",
                    std::fs::read_to_string(d.join("sshd.log")).unwrap_or_default()
                );
            }
            assert!(Instant::now() < deadline, "sshd did not listen within 20s");
            std::thread::sleep(Duration::from_millis(50));
        }
        Sshd {
            dir,
            port,
            identity,
            known_hosts,
            wrong_known_hosts,
            child,
        }
    }

    /// The inventory's `ssh:` section for this server, as YAML lines indented for a node.
    pub fn yaml(&self, known_hosts: &Path, indent: &str) -> String {
        format!(
            "{indent}ssh:\n{indent}  host: 127.0.0.1\n{indent}  port: {}\n{indent}  user: root\n{indent}  identity_file: {}\n{indent}  known_hosts_file: {}\n{indent}  connect_timeout_secs: 5\n{indent}  command_timeout_secs: 120\n",
            self.port,
            self.identity.display(),
            known_hosts.display()
        )
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
