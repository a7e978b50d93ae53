//! Helpers shared by the integration tests: one set of real sandbox servers per test
//! binary, started on first use and killed when the test process exits.
#![allow(dead_code)]

use shardctl::config::Inventory;
use shardctl::sandbox::{Sandbox, SandboxBuilder};
use shardctl::server::{Server, Stmt};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, OnceLock};

mod fleet;
#[allow(unused_imports)]
pub use fleet::{
    app_items_two_shards, items_are_where_lookup_says, items_schema, range_hash_list_items,
    FleetSetup, Function, KeyKind, Sharding, EMPLOYEE_TABLES,
};

/// The 3-node sandbox shared by the tests of this binary.
pub fn sandbox3() -> &'static Sandbox {
    static SB: OnceLock<Sandbox> = OnceLock::new();
    SB.get_or_init(|| {
        SandboxBuilder::for_tests(3)
            .and_then(|b| b.start())
            .unwrap_or_else(|e| panic!("cannot start the test sandbox: {e}"))
    })
}

/// Holds the tests of this binary that change a shared fleet one at a time. A test that
/// panicked while holding it poisons the mutex; the next test takes the guard anyway (the
/// fleet is what each test checks, not the lock).
pub fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

/// Where a [`SharedFleet`]'s servers come from.
enum FleetBase {
    /// A sandbox of its own: `nodes` servers as `SandboxBuilder::for_tests` makes them,
    /// the builder then passed through `configure`.
    Own {
        nodes: usize,
        configure: fn(SandboxBuilder) -> SandboxBuilder,
    },
    /// A sandbox the binary also uses directly (such as [`sandbox3`]).
    Existing(fn() -> &'static Sandbox),
}

/// The fleet the tests of one binary share: its sandbox started (or taken) on first use,
/// then `set_up` run on it once, as a `static`:
///
/// ```ignore
/// static FLEET: SharedFleet = SharedFleet::new(3, set_up);
/// ```
pub struct SharedFleet {
    base: FleetBase,
    set_up: fn(&Sandbox),
    own: OnceLock<Sandbox>,
    ready: OnceLock<()>,
}

impl SharedFleet {
    /// `nodes` servers as `SandboxBuilder::for_tests` makes them, then `set_up`.
    pub const fn new(nodes: usize, set_up: fn(&Sandbox)) -> Self {
        Self::configured(nodes, |b| b, set_up)
    }

    /// `nodes` servers built by `configure(SandboxBuilder::for_tests(nodes))` (TLS,
    /// replicas, the shardctl binary...), then `set_up`.
    pub const fn configured(
        nodes: usize,
        configure: fn(SandboxBuilder) -> SandboxBuilder,
        set_up: fn(&Sandbox),
    ) -> Self {
        Self {
            base: FleetBase::Own { nodes, configure },
            set_up,
            own: OnceLock::new(),
            ready: OnceLock::new(),
        }
    }

    /// The sandbox `base` returns (one the binary also uses directly, such as
    /// [`sandbox3`]), `set_up` run on it once.
    pub const fn over(base: fn() -> &'static Sandbox, set_up: fn(&Sandbox)) -> Self {
        Self {
            base: FleetBase::Existing(base),
            set_up,
            own: OnceLock::new(),
            ready: OnceLock::new(),
        }
    }

    /// The fleet's sandbox, started and set up on the first call.
    pub fn sandbox(&'static self) -> &'static Sandbox {
        match self.base {
            FleetBase::Own { nodes, configure } => self.own.get_or_init(|| {
                let sb = SandboxBuilder::for_tests(nodes)
                    .and_then(|b| configure(b).start())
                    .unwrap_or_else(|e| panic!("cannot start the test sandbox: {e}"));
                (self.set_up)(&sb);
                sb
            }),
            FleetBase::Existing(base) => {
                let sb = base();
                self.ready.get_or_init(|| (self.set_up)(sb));
                sb
            }
        }
    }

    /// The inventory of the fleet's sandbox.
    pub fn inventory_path(&'static self) -> PathBuf {
        self.sandbox().inventory_path()
    }

    /// [`cli_on`] the fleet's inventory.
    pub fn cli(&'static self, args: &[&str]) -> assert_cmd::Command {
        cli_on(&self.inventory_path(), args)
    }

    /// The JSON document `shardctl --output json ARGS` prints on the fleet's inventory; the
    /// command must succeed.
    pub fn json(&'static self, args: &[&str]) -> serde_json::Value {
        let mut all = vec!["--output", "json"];
        all.extend_from_slice(args);
        let out = self
            .cli(&all)
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        serde_json::from_slice(&out)
            .unwrap_or_else(|e| panic!("{args:?}: {e}: {}", String::from_utf8_lossy(&out)))
    }
}

/// The inventory a sandbox wrote.
pub fn inventory(sb: &Sandbox) -> Inventory {
    Inventory::load(&sb.inventory_path()).expect("sandbox inventory loads")
}

/// An admin connection to a sandbox node.
pub fn connect(sb: &Sandbox, node: &str) -> Server {
    Server::connect_node(&inventory(sb), node).expect("connect to sandbox node")
}

/// Runs statements on a server, panicking on failure.
pub fn exec(server: &mut Server, sqls: &[&str]) {
    for sql in sqls {
        server
            .exec(&Stmt::text(*sql))
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
}

/// Runs statements without writing them to the binary log.
pub fn exec_unlogged(server: &mut Server, sqls: &[&str]) {
    let stmts: Vec<Stmt> = sqls.iter().map(|s| Stmt::text(*s)).collect();
    server.exec_unlogged(&stmts).expect("unlogged statements");
}

/// A single number from a query.
pub fn count(server: &mut Server, sql: &str) -> i64 {
    server
        .first::<i64>(&Stmt::text(sql))
        .expect("query")
        .expect("a row")
}

/// The shardctl binary with a clean environment, confirmations answered (`SHARDCTL_YES`).
pub fn shardctl() -> assert_cmd::Command {
    let mut cmd = assert_cmd::Command::cargo_bin("shardctl").expect("binary built");
    cmd.env_remove("SHARDCTL_CONFIG")
        .env("NO_COLOR", "1")
        .env("SHARDCTL_YES", "1")
        .timeout(std::time::Duration::from_secs(120));
    cmd
}

/// `shardctl --config INVENTORY ARGS`: the binary as [`shardctl`] prepares it (clean
/// environment, confirmations answered, 120 s timeout), with no fault injected
/// (`SHARDCTL_FAULT` removed; a test sets it after this call to inject one).
pub fn cli_on(inventory: &Path, args: &[&str]) -> assert_cmd::Command {
    let mut cmd = shardctl();
    cmd.env_remove("SHARDCTL_FAULT")
        .arg("--config")
        .arg(inventory)
        .args(args);
    cmd
}

/// Writes `text` to `dir/name`, readable by its owner only (0600, as option files holding
/// passwords should be: shardctl warns about any other mode), and returns the path.
pub fn write_file(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let p = dir.join(name);
    std::fs::write(&p, text).expect("write test file");
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).expect("chmod 600");
    p
}

/// The project's own fixtures (`tests/fixtures`).
pub fn fixture_path(file: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(file)
}

/// Loads a file of `tests/fixtures` into node1 through the server's own client.
pub fn load_fixture(sb: &Sandbox, file: &str, db: Option<&str>) {
    let path = fixture_path(file);
    let text = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    run_client(sb, "node1", file, &text, db);
}

/// Loads a file of `tests/fixtures` into `node` under another schema name: every
/// `` `from` `` in the file (the fixture names its schema only that way) becomes `` `to` ``.
pub fn load_fixture_as(sb: &Sandbox, node: &str, file: &str, from: &str, to: &str) {
    let path = fixture_path(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let renamed = text.replace(&format!("`{from}`"), &format!("`{to}`"));
    assert_ne!(renamed, text, "{file} never names `{from}`");
    run_client(sb, node, file, renamed.as_bytes(), None);
}

/// Grants the sandbox's application account DML on `schema` on `server` (a node or a
/// replica), unlogged, as root over the server's socket: what a DBA running per-schema
/// grants does for each new schema (see `SandboxBuilder::app_schemas`).
pub fn grant_application(sb: &Sandbox, server: &str, schema: &str) {
    let s = sb
        .nodes()
        .iter()
        .chain(sb.replicas())
        .find(|n| n.name == server)
        .expect("sandbox server");
    let sql = format!(
        "SET SESSION sql_log_bin = 0; GRANT {} ON `{}`.* TO '{}'@'%';",
        shardctl::sandbox::APP_PRIVILEGES,
        schema.replace('_', "\\_"),
        shardctl::sandbox::APP_USER
    );
    let out = std::process::Command::new("mariadb")
        .arg(format!(
            "--defaults-extra-file={}",
            sb.dir().join(shardctl::sandbox::ROOT_OPTION_FILE).display()
        ))
        .arg(format!("--socket={}", s.socket().display()))
        .args(["-e", &sql])
        .output()
        .expect("run the mariadb client");
    assert!(
        out.status.success(),
        "grant on {server}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Runs the `mariadb` client on `node` with the sandbox's admin option file, `input` on
/// its standard input.
fn run_client(sb: &Sandbox, node: &str, what: &str, input: &[u8], db: Option<&str>) {
    use std::io::Write;
    let port = sb.node(node).expect("sandbox node").port.to_string();
    let mut cmd = std::process::Command::new("mariadb");
    cmd.arg(format!(
        "--defaults-extra-file={}",
        sb.dir().join("client.cnf").display()
    ))
    .args(["-h", "127.0.0.1", "-P", &port]);
    if let Some(db) = db {
        cmd.arg(db);
    }
    let mut child = cmd
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run the mariadb client");
    let mut stdin = child.stdin.take().expect("client stdin");
    let input = input.to_vec();
    let feeder = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().expect("the mariadb client ends");
    let fed = feeder.join().expect("stdin feeder");
    assert!(
        out.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    fed.unwrap_or_else(|e| panic!("{what}: writing to the client: {e}"));
}

/// A range directory built through the command line: `init`, the nodes, function `f` over
/// integer keys, the sharded tables as (SCHEMA.TABLE, column), and shards as (node, lower
/// bound), in that order (shard ids 1, 2, ...). [`FleetSetup`] says more (other
/// functions, global tables, rows, the workload).
pub fn range_directory(
    inventory: &Path,
    nodes: &[&str],
    tables: &[(&str, &str)],
    shards: &[(&str, &str)],
) {
    FleetSetup::new()
        .nodes(nodes)
        .function(Function::range("f").tables(tables).shards(shards))
        .write_directory(inventory);
}

/// Runs `cmd` with stdin, stdout and stderr on a fresh pseudo-terminal (160 columns), as
/// an operator's shell would; with `answer` = (prompt, input), types `input` once the
/// terminal has shown `prompt`. Returns the exit status and every byte the terminal
/// showed (the program's output and the echoed input).
pub fn run_in_pty(
    mut cmd: std::process::Command,
    answer: Option<(&str, &[u8])>,
    timeout: std::time::Duration,
) -> (std::process::ExitStatus, Vec<u8>) {
    use std::io::{Read, Write};
    use std::os::fd::{FromRawFd, OwnedFd};
    let (mut master, mut slave) = (0, 0);
    let size = libc::winsize {
        ws_row: 50,
        ws_col: 160,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: openpty writes two fresh descriptors, which are owned from here on.
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            &size,
        )
    };
    assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
    let (master, slave) = unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
    cmd.stdin(slave.try_clone().unwrap())
        .stdout(slave.try_clone().unwrap())
        .stderr(slave);
    let mut child = cmd.spawn().expect("spawn under a pty");
    // The parent's copies of the terminal's slave side go with `cmd`, so the master sees
    // end-of-file (EIO) once the child is gone.
    drop(cmd);
    let mut writer = std::fs::File::from(master.try_clone().unwrap());
    let mut answer = answer.map(|(prompt, input)| (prompt.as_bytes().to_vec(), input.to_vec()));
    let reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        let mut f = std::fs::File::from(master);
        let mut buf = [0u8; 8192];
        loop {
            match f.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => out.extend_from_slice(&buf[..n]),
            }
            if let Some((prompt, input)) = &answer {
                if out.windows(prompt.len()).any(|w| w == prompt.as_slice()) {
                    writer.write_all(input).unwrap();
                    answer = None;
                }
            }
        }
        out
    });
    let status = wait_exit(&mut child, timeout);
    (status, reader.join().unwrap())
}

/// The screen a 160-column terminal shows after `bytes`: printable text placed at the
/// cursor (wrapping at the right margin), carriage return, line feed, and the cursor and erase sequences progress bars use
/// (`ESC[nA`/`B`/`C`/`D`, `ESC[K`, `ESC[2K`, `ESC[J`); other escape sequences (colours,
/// cursor visibility) are skipped.
pub fn screen(bytes: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(bytes);
    let mut lines: Vec<Vec<char>> = vec![Vec::new()];
    let (mut row, mut col) = (0usize, 0usize);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' => col = 0,
            '\n' => {
                row += 1;
                col = 0;
                if lines.len() <= row {
                    lines.resize(row + 1, Vec::new());
                }
            }
            '\x1b' => {
                if chars.peek() != Some(&'[') {
                    chars.next();
                    continue;
                }
                chars.next();
                let mut params = String::new();
                let mut command = ' ';
                for p in chars.by_ref() {
                    if p.is_ascii_alphabetic() {
                        command = p;
                        break;
                    }
                    params.push(p);
                }
                let n: usize = params.trim_start_matches('?').parse().unwrap_or(0);
                let line = &mut lines[row];
                match command {
                    'A' => row = row.saturating_sub(n.max(1)),
                    'B' => {
                        row += n.max(1);
                        if lines.len() <= row {
                            lines.resize(row + 1, Vec::new());
                        }
                    }
                    'C' => col += n.max(1),
                    'D' => col = col.saturating_sub(n.max(1)),
                    'K' if n == 2 => line.clear(),
                    'K' => line.truncate(col),
                    'J' => {
                        line.truncate(col);
                        lines.truncate(row + 1);
                    }
                    _ => {}
                }
            }
            c if c.is_control() => {}
            c => {
                // The terminal wraps a line that reaches its width (160 columns, as
                // `run_in_pty` sets it) before the next character.
                if col >= 160 {
                    row += 1;
                    col = 0;
                    if lines.len() <= row {
                        lines.resize(row + 1, Vec::new());
                    }
                }
                let line = &mut lines[row];
                if line.len() < col {
                    line.resize(col, ' ');
                }
                if col < line.len() {
                    line[col] = c;
                } else {
                    line.push(c);
                }
                col += 1;
            }
        }
    }
    lines
        .into_iter()
        .map(|l| l.into_iter().collect::<String>().trim_end().to_string())
        .collect()
}

/// shardctl in the background against the inventory `config`, confirmations answered,
/// `SHARDCTL_FAULT` set to `fault` (or removed), stdout and stderr in `dir`/`name`.out
/// and .err.
pub fn spawn_shardctl(
    config: &Path,
    args: &[&str],
    fault: Option<&str>,
    dir: &Path,
    name: &str,
) -> std::process::Child {
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("shardctl"));
    cmd.env("SHARDCTL_YES", "1").env_remove("SHARDCTL_CONFIG");
    match fault {
        Some(f) => cmd.env("SHARDCTL_FAULT", f),
        None => cmd.env_remove("SHARDCTL_FAULT"),
    };
    cmd.arg("--config")
        .arg(config)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::fs::File::create(dir.join(format!("{name}.out"))).unwrap())
        .stderr(std::fs::File::create(dir.join(format!("{name}.err"))).unwrap())
        .spawn()
        .unwrap()
}

/// Waits at most `within` for `child` to end; kills it and fails the test after that.
pub fn wait_exit(
    child: &mut std::process::Child,
    within: std::time::Duration,
) -> std::process::ExitStatus {
    let deadline = std::time::Instant::now() + within;
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("still running after {within:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

/// The newest operation in the journal of `inv`'s directory.
pub fn newest_op(inv: &Inventory) -> Option<shardctl::directory::journal::OperationRecord> {
    shardctl::directory::Directory::open(inv)
        .unwrap()
        .operations(None)
        .unwrap()
        .into_iter()
        .next()
}

/// The names operation `op` gives its channel and trash schemas: the directory id it
/// journaled when it started.
pub fn op_names(inv: &Inventory, op: u64) -> shardctl::directory::names::NameScope {
    let rec = shardctl::directory::Directory::open(inv)
        .expect("directory opens")
        .operation(op)
        .expect("operation journaled");
    shardctl::directory::names::NameScope::from_params(&rec.params).expect("valid names")
}

/// `text` with the directory id in every shardctl name (`shardctl_<8 hex digits>_op...`,
/// `_shardctl_trash_<8 hex digits>_op...`) replaced by `with`: `""` gives the names an
/// operation without a directory id would use, `"<dir>_"` a stable mark for snapshots.
pub fn mask_directory_id(text: &str, with: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find("shardctl_") {
        let (head, mut tail) = rest.split_at(i + "shardctl_".len());
        out.push_str(head);
        if let Some(after) = tail.strip_prefix("trash_") {
            out.push_str("trash_");
            tail = after;
        }
        let tagged = tail.len() >= 12
            && tail.as_bytes()[..8].iter().all(|b| b.is_ascii_hexdigit())
            && tail[8..].starts_with("_op");
        if tagged {
            out.push_str(with);
            rest = &tail[9..];
        } else {
            rest = tail;
        }
    }
    out.push_str(rest);
    out
}

/// `shardctl shard add` of a shard of `function` on `node` from `lower_bound`, its schemas
/// made from the logical schema on `node`; returns the new shard's id.
pub fn add_shard_on(config: &Path, function: &str, node: &str, lower_bound: &str) -> u32 {
    let out = shardctl()
        .arg("--config")
        .arg(config)
        .args([
            "--output",
            "json",
            "shard",
            "add",
            "--function",
            function,
            "--node",
            node,
            "--lower-bound",
            lower_bound,
            "--template-node",
            node,
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v["shard"].as_u64().expect("the new shard's id") as u32
}

/// `shardctl -v move --shard SHARD --to TO ARGS` with the inventory `config`, ready to
/// spawn in a process group of its own (a signal to the group is what a terminal's Ctrl-C
/// does), stdin and stdout closed, stderr piped, `fault` as `SHARDCTL_FAULT` if given.
pub fn move_command(
    config: &Path,
    shard: u32,
    to: &str,
    args: &[&str],
    fault: Option<&str>,
) -> std::process::Command {
    use std::os::unix::process::CommandExt;
    use std::process::Stdio;
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("shardctl"));
    cmd.env_remove("SHARDCTL_CONFIG")
        .env("SHARDCTL_YES", "1")
        .env_remove("SHARDCTL_FAULT")
        .env("NO_COLOR", "1")
        .arg("--config")
        .arg(config)
        .args(["-v", "move", "--shard", &shard.to_string(), "--to", to])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .process_group(0);
    if let Some(f) = fault {
        cmd.env("SHARDCTL_FAULT", f);
    }
    cmd
}

/// Fails naming the first line where two dumps differ, shown with its control characters
/// (a CR) escaped and cut at 400 characters (a rows' dump holds binary data and megabytes of
/// text: neither is printed whole).
pub fn assert_same_dump(before: &[u8], after: &[u8], what: &str) {
    if before == after {
        return;
    }
    let (l, r): (Vec<&[u8]>, Vec<&[u8]>) = (
        before.split(|b| *b == b'\n').collect(),
        after.split(|b| *b == b'\n').collect(),
    );
    let at = l
        .iter()
        .zip(&r)
        .position(|(a, b)| a != b)
        .unwrap_or(l.len().min(r.len()));
    let show = |v: &Vec<&[u8]>| {
        v.get(at)
            .map(|line| {
                let text: String = String::from_utf8_lossy(line).chars().take(400).collect();
                format!("{text:?}")
            })
            .unwrap_or_else(|| "<end>".into())
    };
    panic!(
        "{what}: the dumps differ first at line {}:\n  before: {}\n  after:  {}",
        at + 1,
        show(&l),
        show(&r)
    );
}
