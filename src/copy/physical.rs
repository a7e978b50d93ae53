//! `--method physical`: the shard's InnoDB files themselves, through the hosts.
//!
//! On the source's host, `mariadb-backup --backup --databases=<the shard's schemas>` takes
//! a consistent copy of only those schemas (and the system tablespace and redo log it
//! needs) and records the binary-log position it matches. It lands in a staging directory
//! beside the target's datadir, so the backup is written once, on the target's disk, and
//! never on the source's or here: between two machines as an xbstream stream carried
//! through this process's memory and unpacked by `mbstream` on the target's host; between
//! two servers of one machine and login, written there directly by mariadb-backup. There
//! `--prepare --export` makes each table's `.ibd` importable with a `.cfg`; the schema and
//! its tables are created from the source's definitions, each tablespace is discarded, the
//! files moved in (a rename on one file system; owner and mode of the schema's directory)
//! and imported over a few connections at once; then views, routines, triggers and events
//! follow as with the other methods. MyISAM and Aria tables, which have no transportable
//! tablespace, travel as their own files (`.frm` and data and index files) from the same
//! consistent backup, placed in the target's schema directory where the server finds them.
//!
//! A target with replicas (the inventory's `replicas:`) gets the import unlogged, and so
//! does each replica: before the target's import uses the prepared files up, they are
//! copied beside each replica's datadir, and [`import_on_replica`] (one journaled effect
//! each, before the channel starts) imports them there the same way. Every server of the
//! group then holds the shard at the backup's point, and the rows the channel applies reach
//! the replicas through the target's binary log.
//!
//! A table with a FULLTEXT index travels as its tablespace too, but the import leaves the
//! index unusable (warning 1817), and re-adding it on the imported table crashes MariaDB
//! 10.11.19 (assertion `sym_node->table != NULL` in pars0pars.cc): so a fresh table of the
//! same definition is created beside it, takes its imported rows (`INSERT ... SELECT`,
//! which builds the index) and its place. The rows are the backup's, so the whole copy
//! stays at the backup's one point, where the channel starts.
//!
//! The preflight refuses what cannot work, naming the method that would: a table whose
//! FULLTEXT index was dropped without a rebuild (its hidden `FTS_DOC_ID` column), a table
//! in another engine than InnoDB, MyISAM or Aria, servers of different major versions or
//! page sizes, a node without a host (ssh, or this machine) or datadir, a missing tool, a
//! copy under new schema names.

use super::{objects, CopyReport, Progress, SchemaPair};
use crate::config::{Inventory, ReplicaSpec};
use crate::error::{Error, Result};
use crate::ident::Ident;
use crate::remote::node::{self as hostops, FILE_TIMEOUT};
use crate::remote::{self, path_word, Host};
use crate::server::replication::Coordinates;
use crate::server::{statements, BinlogPosition, ConnectSpec, Flavor, Server};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The backup tool.
pub const TOOL: &str = "mariadb-backup";

/// Unpacks the backup's stream on the target's host.
pub const EXTRACT_TOOL: &str = "mbstream";

/// Runs the prepare with its `fsync` calls skipped (Debian package `eatmydata`), when the
/// target's host has it and the target's InnoDB flushes what it imports
/// (`prepare_may_skip_fsync`). The prepared files are scratch until imported: a copy that
/// stops before its import clears them, and `IMPORT TABLESPACE` rewrites every page of each
/// file and then `fdatasync`s it (seen with strace on MariaDB 10.11), which writes all of
/// the file's pages to disk whichever process dirtied them. Their flush in the prepare
/// wrote the whole backup to disk only for the import to write it again (at 944 MiB: the
/// prepare 1.0 s → 0.5 s, the import 0.8 s → 1.1 s, the copy 3.8 s → 3.0 s). The server
/// itself never runs under it.
pub const NO_FSYNC_TOOL: &str = "eatmydata";

/// Connections the tablespaces are imported over: each `IMPORT TABLESPACE` rewrites every
/// page of its file (new space id), a pass that runs side by side for different tables.
const IMPORT_CONNECTIONS: usize = 4;

/// How often the import's watcher looks at the operation's stop flag.
const IMPORT_STOP_POLL: Duration = Duration::from_millis(200);

/// Threads `mariadb-backup --backup` copies the tablespaces with (and `mbstream --extract`
/// unpacks them with): a large shard's backup waits on reads (the tool reads the
/// tablespaces with O_DIRECT), and a few in flight keep the disk busy (measured at 944 MiB:
/// 1.3 s with 4 against 1.7 s with 1; on 2 processors, 16 runs alternating 2 and 4
/// threads gave the same median, 2.2 s).
const BACKUP_THREADS: usize = 4;

/// How a table's rows travel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Carry {
    /// InnoDB: its `.ibd` (and `.cfg`) imported into a table created from its definition.
    Tablespace,
    /// MyISAM, Aria: its files (definition, data, index) as the same consistent backup
    /// copied them, placed in the target's schema directory, where the server finds them.
    Files(&'static [&'static str]),
}

/// How a table in `engine` is carried, or None when the physical copy cannot.
fn carry(engine: &str) -> Option<Carry> {
    match engine.to_ascii_lowercase().as_str() {
        "innodb" => Some(Carry::Tablespace),
        "myisam" => Some(Carry::Files(&["frm", "MYD", "MYI"])),
        "aria" => Some(Carry::Files(&["frm", "MAD", "MAI"])),
        _ => None,
    }
}

/// The engine of each base table of `schema`, as [`Carry`].
fn carried(
    server: &mut Server,
    schema: &Ident,
) -> Result<std::collections::HashMap<String, Carry>> {
    let mut out = std::collections::HashMap::new();
    for row in server.rows(&statements::table_engines(schema))? {
        let (table, engine, _): (String, String, i64) =
            mysql::from_row_opt(row).map_err(|e| Error::server(server.name(), e))?;
        let c = carry(&engine).ok_or_else(|| {
            Error::Refused(format!(
                "method physical: table {schema}.{table} uses the {engine} engine; use method native or dump"
            ))
        })?;
        out.insert(table, c);
    }
    Ok(out)
}

/// What the preflight found.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PhysicalChecks {
    /// `mariadb-backup --version` on the source's host.
    pub tool_version: String,
    /// The InnoDB page size both servers use.
    pub page_size: u64,
    /// Base tables to carry.
    pub tables: usize,
    /// What the backup carries into the target's staging directory besides the shard's
    /// tables (the source's system and undo tablespaces, and its redo log, counted at the
    /// log's size: a busy source can write more while the backup runs): the free-space
    /// check adds it to the shard's size.
    pub backup_overhead_bytes: u64,
}

/// Longest a backup, prepare or stream may run (the hosts' own command timeouts may be
/// shorter).
const COPY_TIMEOUT: Duration = Duration::from_secs(6 * 3600);

/// Checks on the source side and the hosts: refuses with the method that would work.
pub fn preflight(
    inv: &Inventory,
    source: &str,
    target: &str,
    pairs: &[SchemaPair],
    flavors: (Flavor, Flavor),
    src: &mut Server,
) -> Result<PhysicalChecks> {
    let refuse = |why: String| Error::Refused(format!("method physical: {why}"));
    if pairs.iter().any(|p| p.from != p.to) {
        return Err(refuse(
            "a copy under new schema names (a split) needs method native".into(),
        ));
    }
    let (sf, tf) = flavors;
    if !sf.is_mariadb() || !tf.is_mariadb() {
        return Err(refuse(format!(
            "shardctl drives mariadb-backup for MariaDB only ({source}: {sf}, {target}: {tf}); use method native or dump"
        )));
    }
    if (sf.version.major, sf.version.minor) != (tf.version.major, tf.version.minor) {
        return Err(refuse(format!(
            "{source} runs {sf} and {target} runs {tf}: tablespaces move only between servers of one major version; use method native or dump"
        )));
    }
    let mut tables = 0;
    for p in pairs {
        // A table with a FULLTEXT index is imported and then rebuilt from its rows (see
        // `rebuild_fulltext`); a full-text auxiliary table of no such table marks a
        // table whose index was dropped without a rebuild, which cannot be imported.
        let fulltext = fulltext_tables(src, &p.from)?;
        let mut owners = std::collections::HashSet::new();
        for t in &fulltext {
            let path = format!("{}/{}", file_name(&p.from), file_name(t));
            if let Some(id) = src.first::<u64>(&statements::innodb_table_id(&path))? {
                owners.insert(id);
            }
        }
        let auxiliary: Vec<String> = src
            .rows(&statements::fulltext_auxiliary_tables(&file_name(&p.from)))?
            .into_iter()
            .filter_map(|r| mysql::from_row_opt::<String>(r).ok())
            .collect();
        if let Some(aux) = auxiliary
            .iter()
            .find(|a| fulltext_owner(a).is_none_or(|id| !owners.contains(&id)))
        {
            return Err(refuse(format!(
                "schema {} on {source} holds the full-text table {aux}: one of its tables had a FULLTEXT index and keeps a hidden FTS_DOC_ID column, which a table created from its definition lacks, so its tablespace cannot be imported (rebuild it with ALTER TABLE ... FORCE to drop them); use method native or dump for this shard",
                p.from
            )));
        }
        for row in src.rows(&statements::table_engines(&p.from))? {
            let (table, engine, partitioned): (String, String, i64) =
                mysql::from_row_opt(row).map_err(|e| Error::server(source, e))?;
            if partitioned != 0 {
                let t = Ident::new("table", &table)?;
                let subpartitioned = src
                    .rows(&statements::table_partitions(&p.from, &t))?
                    .into_iter()
                    .any(|r| mysql::from_row_opt::<(String, i64)>(r).is_ok_and(|(_, s)| s != 0));
                if subpartitioned {
                    return Err(refuse(format!(
                        "table {}.{table} on {source} has subpartitions, which the physical copy does not import; use method native or dump for this shard",
                        p.from
                    )));
                }
            }
            match carry(&engine) {
                Some(Carry::Tablespace) => {}
                Some(Carry::Files(_)) if partitioned != 0 => {
                    return Err(refuse(format!(
                        "table {}.{table} on {source} is a partitioned {engine} table, whose files the physical copy does not place; use method native or dump for this shard",
                        p.from
                    )))
                }
                Some(Carry::Files(_)) => {}
                None => {
                    return Err(refuse(format!(
                        "table {}.{table} on {source} uses the {engine} engine, which neither has a transportable tablespace nor keeps its rows in files the backup carries (InnoDB, MyISAM and Aria do); use method native or dump for this shard",
                        p.from
                    )))
                }
            }
            tables += 1;
        }
    }
    for node in [source, target] {
        hostops::datadir(
            inv,
            node,
            "the physical copy reads and writes tablespace files there",
        )?;
    }
    // The login mariadb-backup is to be given: refused here rather than in the copy.
    backup_login(
        &ConnectSpec::for_node(inv, inv.node(source)?)?,
        &hostops::datadir(inv, source, "the physical copy reads its files")?,
        "",
    )?;
    let sh = remote::host_for(inv, source)?;
    let th = remote::host_for(inv, target)?;
    for file in backup_tls_files(&ConnectSpec::for_node(inv, inv.node(source)?)?) {
        if !sh.exists(&file, FILE_TIMEOUT)? {
            return Err(refuse(format!(
                "{}: the TLS file {} named in {source}'s inventory is not there; mariadb-backup runs on that host and needs it at the same path",
                sh.describe(),
                file.display()
            )));
        }
    }
    // The backup runs on the source's host, its prepare on the target's: both need the
    // tool of the servers' version.
    let server_line = format!("{}.{}", sf.version.major, sf.version.minor);
    let mut tool_version = String::new();
    for host in [sh.as_ref(), th.as_ref()] {
        let version = hostops::tool_version(host, TOOL, "mariadb-backup")?;
        if !version.contains(&format!("{server_line}.")) {
            return Err(refuse(format!(
                "{}: {version:?} does not match the server's version {server_line}; install the mariadb-backup of the server's version",
                host.describe()
            )));
        }
        if tool_version.is_empty() {
            tool_version = version;
        }
    }
    if sh.machine() != th.machine() {
        hostops::tool_version(th.as_ref(), EXTRACT_TOOL, "mariadb-backup")?;
    }
    let page_size: u64 = src.first(&statements::innodb_page_size())?.unwrap_or(0);
    let backup_overhead_bytes: u64 = src
        .first(&statements::backup_overhead_bytes())?
        .unwrap_or(0);
    Ok(PhysicalChecks {
        tool_version,
        page_size,
        tables,
        backup_overhead_bytes,
    })
}

/// The target side of the preflight: the same page size.
pub fn preflight_target(target: &str, tgt: &mut Server, checks: &PhysicalChecks) -> Result<()> {
    let page: u64 = tgt.first(&statements::innodb_page_size())?.unwrap_or(0);
    if page != checks.page_size {
        return Err(Error::Refused(format!(
            "method physical: {target} has innodb_page_size {page}, the source {}: tablespaces cannot move between them; use method native or dump",
            checks.page_size
        )));
    }
    Ok(())
}

/// A directory on a host, removed (with what it holds) when dropped.
struct RemoteDir<'a> {
    host: &'a dyn Host,
    path: PathBuf,
    /// Left in place when dropped: a later step still needs it.
    keep: bool,
}

impl Drop for RemoteDir<'_> {
    fn drop(&mut self) {
        if self.keep {
            return;
        }
        if let Ok(p) = path_word(&self.path) {
            // Also after a Ctrl-C: the directory may hold a whole backup.
            let _ = crate::signal::shielded(|| {
                self.host.output(
                    "removing the staging directory",
                    &format!("rm -rf -- {p}"),
                    FILE_TIMEOUT,
                )
            });
        }
    }
}

/// A command that removes what a step left on a host, run when dropped (on success and on
/// any error or stop after the step), to its end also after a stop request.
struct RemoteCleanup<'a> {
    host: &'a dyn Host,
    what: &'static str,
    command: String,
}

impl Drop for RemoteCleanup<'_> {
    fn drop(&mut self) {
        let _ =
            crate::signal::shielded(|| self.host.output(self.what, &self.command, FILE_TIMEOUT));
    }
}

/// The binary-log position a backup recorded: `file<TAB>position[<TAB>gtid]`.
pub fn parse_binlog_info(text: &str) -> Option<Coordinates> {
    let line = text.lines().find(|l| !l.trim().is_empty())?;
    let mut parts = line.split('\t');
    let file = parts.next()?.trim().to_string();
    let pos = parts.next()?.trim().parse::<u64>().ok()?;
    let gtid = parts.next().unwrap_or("").trim().to_string();
    if file.is_empty() {
        return None;
    }
    Some(Coordinates {
        position: BinlogPosition { file, pos },
        gtid,
    })
}

/// The shell command that runs `mariadb-backup --no-defaults <login> --datadir=<datadir>
/// <args>` logged in as `spec`, and what it must be given on its standard input: the
/// password, which the shell reads into `MYSQL_PWD`, the environment of that one process
/// (readable only by its own user, like a 0600 file), so that it is never on a command
/// line nor in a file a killed copy could leave behind. The account, address and datadir
/// are words of the command; no option file of the host is read.
fn backup_login(spec: &ConnectSpec, datadir: &Path, args: &str) -> Result<(String, Vec<u8>)> {
    let password = spec.credentials.password.expose();
    if password.contains('\n') || password.contains('\0') {
        return Err(Error::Refused(format!(
            "method physical: the password of node {} holds a line break or a NUL byte, which mariadb-backup cannot be given; use method native",
            spec.name
        )));
    }
    let utf8 = |p: &Path| {
        p.to_str()
            .map(str::to_string)
            .ok_or_else(|| Error::Usage(format!("{}: not a UTF-8 path", p.display())))
    };
    let mut login = vec![format!("--user={}", spec.credentials.user)];
    match &spec.socket {
        Some(s) => login.push(format!("--socket={}", utf8(s)?)),
        None => {
            // Over TCP even for `localhost`, which would otherwise mean the default
            // socket: perhaps another server of the host than the one whose files these are.
            login.push(format!("--host={}", spec.host));
            login.push(format!("--port={}", spec.port));
            login.push("--protocol=TCP".into());
            // mariadb-backup tries TLS by default but checks no certificate: with the
            // inventory's TLS it gets its files (paths as the source's host sees them, as
            // for a channel) and checks the server's certificate and name.
            if let Some(tls) = spec.tls.as_ref().filter(|t| t.enabled) {
                login.push("--ssl".into());
                for (option, file) in [
                    ("--ssl-ca", &tls.ca_file),
                    ("--ssl-cert", &tls.cert_file),
                    ("--ssl-key", &tls.key_file),
                ] {
                    if let Some(file) = file {
                        login.push(format!("{option}={}", utf8(file)?));
                    }
                }
                // Said either way: newer clients check by default.
                login.push(if tls.insecure {
                    "--skip-ssl-verify-server-cert".into()
                } else {
                    "--ssl-verify-server-cert".into()
                });
            }
        }
    }
    login.push(format!("--datadir={}", utf8(datadir)?));
    let login = login
        .iter()
        .map(|w| remote::quote(w))
        .collect::<Result<Vec<_>>>()?
        .join(" ");
    Ok((
        format!("IFS= read -r MYSQL_PWD && export MYSQL_PWD && exec {TOOL} --no-defaults {login} {args}"),
        format!("{password}\n").into_bytes(),
    ))
}

/// Flushes `files` (quoted words, names in `dir`; absent ones skipped) and then `dir`
/// itself, where the copy renamed every file it moved in.
fn flush_moved_command(dir: &Path, files: &[String]) -> Result<String> {
    let d = path_word(dir)?;
    let mut cmd = format!("cd {d}");
    if !files.is_empty() {
        cmd.push_str(&format!(
            " && for x in {}; do test -e \"$x\" || continue; sync -- \"$x\" || exit 1; done",
            files.join(" ")
        ));
    }
    cmd.push_str(" && sync -- .");
    Ok(cmd)
}

/// Whether the prepare may run under [`NO_FSYNC_TOOL`]: the tool is on the target's host,
/// and the target's InnoDB flushes the files it imports (its `innodb_flush_method` is not
/// one that skips the flush: `nosync`, `littlesync`, `O_DIRECT_NO_FSYNC`). Anything
/// unknown (the probe failed, the variable is gone) keeps the prepare's own flush.
fn prepare_may_skip_fsync(th: &dyn Host, target: &str, tgt: &mut Server) -> bool {
    let keep = |why: String| {
        crate::output::log(
            1,
            &format!("physical copy: the prepare flushes the backup itself ({why})"),
        );
        false
    };
    match hostops::has_tool(th, NO_FSYNC_TOOL) {
        Ok(true) => {}
        Ok(false) => return keep(format!("{} has no {NO_FSYNC_TOOL}", th.describe())),
        Err(e) => return keep(format!("looking for {NO_FSYNC_TOOL} failed: {e}")),
    }
    match tgt.first::<String>(&statements::innodb_flush_method()) {
        Ok(Some(m)) if import_is_flushed(&m) => true,
        Ok(m) => keep(format!(
            "{target} has innodb_flush_method {}",
            m.unwrap_or_default()
        )),
        Err(e) => keep(format!(
            "reading {target}'s innodb_flush_method failed: {e}"
        )),
    }
}

/// Whether a server with this `innodb_flush_method` flushes each file it imports.
fn import_is_flushed(flush_method: &str) -> bool {
    ["fsync", "O_DSYNC", "O_DIRECT"]
        .iter()
        .any(|m| m.eq_ignore_ascii_case(flush_method.trim()))
}

/// `mariadb-backup --prepare --export` of the backup in `backup_dir`, under
/// [`NO_FSYNC_TOOL`] when `without_fsync`.
fn prepare_command(backup_dir: &Path, without_fsync: bool) -> Result<String> {
    Ok(format!(
        "{}{TOOL} --prepare --export --target-dir={}",
        if without_fsync {
            format!("{NO_FSYNC_TOOL} ")
        } else {
            String::new()
        },
        path_word(backup_dir)?
    ))
}

/// The TLS files mariadb-backup is named (see [`backup_login`]): they must exist on the
/// source's host.
fn backup_tls_files(spec: &ConnectSpec) -> Vec<PathBuf> {
    match (&spec.socket, spec.tls.as_ref().filter(|t| t.enabled)) {
        (None, Some(tls)) => [&tls.ca_file, &tls.cert_file, &tls.key_file]
            .into_iter()
            .flatten()
            .cloned()
            .collect(),
        _ => Vec::new(),
    }
}

/// Copies `pairs` from `source` to `target` through their hosts; the coordinates the copy
/// matches. The target's schemas must not exist (the preflight checked).
pub fn copy(
    inv: &Inventory,
    source: &str,
    target: &str,
    pairs: &[SchemaPair],
    progress: &Progress,
) -> Result<CopyReport> {
    let started = Instant::now();
    let sspec = ConnectSpec::for_node(inv, inv.node(source)?)?;
    let tspec = ConnectSpec::for_node(inv, inv.node(target)?)?;
    let mut src = super::connect_for_copy(&sspec)?;
    // EXCHANGE PARTITION checks every row of the partition: as long as the partition is
    // large.
    let mut tgt = super::connect_for_long_statements(&tspec)?;
    let sdata = hostops::datadir(inv, source, "the physical copy reads its files")?;
    let tdata = hostops::datadir(inv, target, "the physical copy writes its files")?;
    let sh = remote::host_for(inv, source)?;
    let th = remote::host_for(inv, target)?;

    // Definitions first: the files must match them, and a later DDL makes the import fail
    // loudly rather than succeed wrongly.
    let mut all = Vec::new();
    let mut engines = Vec::new();
    let mut estimate = 0;
    for p in pairs {
        engines.push(carried(&mut src, &p.from)?);
        let objs = objects::read(&mut src, p)?;
        estimate += src.table_rows(&p.from)?.values().sum::<u64>();
        all.push(objs);
    }
    progress.begin(estimate);

    // The target: staging beside its datadir (same file system: the files are moved in,
    // not copied), a directory of this attempt's own named after the shard's first schema.
    // What earlier attempts at this shard left there (killed copies) is cleared first; a
    // copy of this shard still running elsewhere (an owner that lost its lease) then fails
    // rather than mixes its files with this one's.
    let prefix = staging_prefix(&tdata, first_schema(pairs)?)?;
    let staging = PathBuf::from(
        th.text(
            "making the staging directory",
            &format!(
                "{} && mktemp -d -- {}",
                clear_command(&prefix)?,
                path_word(&attempt_template(&prefix))?
            ),
            FILE_TIMEOUT,
        )?
        .trim(),
    );
    if staging.parent() != prefix.parent()
        || !staging
            .to_string_lossy()
            .starts_with(&format!("{}.", prefix.display()))
    {
        return Err(Error::Remote(format!(
            "{}: mktemp gave {}",
            th.describe(),
            staging.display()
        )));
    }
    let staging_guard = RemoteDir {
        host: th.as_ref(),
        path: staging.clone(),
        keep: false,
    };
    let backup_dir = staging.join("backup");

    let schemas: Vec<&str> = pairs.iter().map(|p| p.from.as_str()).collect();
    let schemas = remote::quote(&schemas.join(" "))?;
    let mut stage = Stages::new();
    let streamed = if sh.machine() == th.machine() {
        // One machine and login (server instances side by side): the backup is written
        // straight into the target's staging directory, by one process and without a
        // stream to pack and unpack.
        let (backup_cmd, password) = backup_login(
            &sspec,
            &sdata,
            &format!(
                "--backup --parallel={BACKUP_THREADS} --target-dir={} --databases={schemas}",
                path_word(&backup_dir)?
            ),
        )?;
        sh.run(
            &backup_cmd,
            Some(&mut password.as_slice()),
            &mut std::io::sink(),
            COPY_TIMEOUT,
        )
        .and_then(|exit| sh.check_exit("mariadb-backup --backup", &exit))
        .map(|_| 0)
    } else {
        let (backup_cmd, password) = backup_login(
            &sspec,
            &sdata,
            &format!(
                "--backup --stream=xbstream --parallel={BACKUP_THREADS} --databases={schemas}"
            ),
        )?;
        let extract_cmd = format!(
            "mkdir -- {b} && {EXTRACT_TOOL} --extract --parallel={BACKUP_THREADS} --directory={b}",
            b = path_word(&backup_dir)?
        );
        remote::pipe(
            sh.as_ref(),
            &backup_cmd,
            &password,
            th.as_ref(),
            &extract_cmd,
            "streaming the backup",
            COPY_TIMEOUT,
        )
    };
    let bytes = streamed?;
    progress.add(0, bytes);
    stage.done("backup in the target's staging directory");
    crate::signal::check()?;
    let without_fsync = prepare_may_skip_fsync(th.as_ref(), target, &mut tgt);
    let prepare = prepare_command(&backup_dir, without_fsync)?;
    let exit = th.run(&prepare, None, &mut std::io::sink(), COPY_TIMEOUT)?;
    th.check_exit("mariadb-backup --prepare --export", &exit)?;
    stage.done("prepare --export");
    let mut coordinates = None;
    for name in ["mariadb_backup_binlog_info", "xtrabackup_binlog_info"] {
        let f = backup_dir.join(name);
        if th.exists(&f, FILE_TIMEOUT)? {
            let text = String::from_utf8_lossy(&th.read_file(&f, FILE_TIMEOUT)?).into_owned();
            coordinates = parse_binlog_info(&text);
            break;
        }
    }
    let coordinates = coordinates.ok_or_else(|| {
        Error::Remote(format!(
            "{}: the backup taken from {source} holds no binary-log position (is the source's binary log on?)",
            th.describe()
        ))
    })?;
    crate::signal::check()?;
    // A crash here leaves the whole backup staged on the target's host.
    crate::fault::point("copy");

    // The target's replicas get the prepared backup before the target's import uses it up
    // (its files are moved into the target's datadir there and rewritten by the import):
    // each imports it unlogged later (`import_on_replica`), before the channel starts.
    let replicas = target_replicas(inv, target)?;
    let mut staged = Vec::new();
    for r in &replicas {
        staged.push(stage_on_replica(th.as_ref(), &backup_dir, pairs, r)?);
        stage.done(&format!("the prepared backup staged for {}", r.label));
    }
    let into = ImportInto {
        spec: &tspec,
        host: th.as_ref(),
        datadir: &tdata,
        backup_dir: &backup_dir,
        unlogged: !replicas.is_empty(),
    };
    let tables = import_schemas(
        &into,
        &mut tgt,
        pairs,
        &all,
        &engines,
        Some(progress),
        &mut stage,
    )?;
    for s in &mut staged {
        s.keep = true;
    }
    drop(staging_guard);
    progress.finish();
    Ok(CopyReport {
        coordinates: Some(coordinates),
        tables,
        rows: progress.snapshot().rows,
        millis: started.elapsed().as_millis() as u64,
    })
}

/// One of the target's replicas as the physical copy reaches it: its server, its host and
/// its data directory there.
struct ReplicaFiles {
    /// The replica in messages.
    label: String,
    /// Its server.
    spec: ConnectSpec,
    /// Its host.
    host: Box<dyn Host>,
    /// Its data directory (`@@datadir`), as its host sees it.
    datadir: PathBuf,
}

/// `target`'s replica `replica`, with its host and data directory: refused, naming it and
/// what is missing, when its files cannot be reached. Only a replica listed by address:
/// an abort drops the copy on those alone (an entry naming a node may serve shards).
fn replica_files(inv: &Inventory, target: &str, replica: &ReplicaSpec) -> Result<ReplicaFiles> {
    let label = replica.label();
    let ReplicaSpec::Server(server) = replica else {
        return Err(Error::Refused(format!(
            "method physical: {target}'s replica {label} is listed as a node of the inventory: the physical copy imports into replicas listed by address (host, port, ssh), as only those get an aborted copy dropped; list it so or use method native or dump"
        )));
    };
    let host = remote::host_for_replica(target, server)?;
    let spec = ConnectSpec::for_replica(inv, inv.node(target)?, replica)?;
    let datadir = Server::connect(&spec)?
        .first::<String>(&statements::datadir())?
        .filter(|d| !d.trim().is_empty())
        .ok_or_else(|| {
            Error::Refused(format!(
                "method physical: {target}'s replica {label} does not say where its data directory is"
            ))
        })?;
    Ok(ReplicaFiles {
        label,
        spec,
        host,
        datadir: PathBuf::from(datadir),
    })
}

/// The replicas of `target` the physical copy imports into: all of its `replicas:`.
fn target_replicas(inv: &Inventory, target: &str) -> Result<Vec<ReplicaFiles>> {
    inv.node(target)?
        .spec
        .replicas
        .iter()
        .map(|r| replica_files(inv, target, r))
        .collect()
}

/// The directory beside a replica's `datadir` that holds the prepared backup of `pairs`
/// from the copy until that replica's import: `<staging prefix>.staged`, removed with
/// every attempt's staging directory by [`clear_command`].
fn replica_staging(datadir: &Path, pairs: &[SchemaPair]) -> Result<PathBuf> {
    Ok(PathBuf::from(format!(
        "{}.staged",
        staging_prefix(datadir, first_schema(pairs)?)?.display()
    )))
}

/// Copies the prepared backup's schema directories (in `backup_dir` on `th`, the target's
/// host) into a staging directory beside `replica`'s datadir: on one machine and login a
/// `cp`, between machines a tar stream through this process. The directory is removed
/// when the returned guard drops, unless kept.
fn stage_on_replica<'a>(
    th: &dyn Host,
    backup_dir: &Path,
    pairs: &[SchemaPair],
    replica: &'a ReplicaFiles,
) -> Result<RemoteDir<'a>> {
    let prefix = staging_prefix(&replica.datadir, first_schema(pairs)?)?;
    let staged = replica_staging(&replica.datadir, pairs)?;
    replica.host.output(
        "making the replica's staging directory",
        &format!(
            "{} && mkdir -- {}",
            clear_command(&prefix)?,
            path_word(&staged)?
        ),
        FILE_TIMEOUT,
    )?;
    let guard = RemoteDir {
        host: replica.host.as_ref(),
        path: staged.clone(),
        keep: false,
    };
    let dirs = pairs
        .iter()
        .map(|p| remote::quote(p.from.as_str()))
        .collect::<Result<Vec<_>>>()?
        .join(" ");
    let b = path_word(backup_dir)?;
    let d = path_word(&staged)?;
    if th.machine() == replica.host.machine() {
        th.output(
            &format!("copying the prepared backup for {}", replica.label),
            &format!("cd {b} && cp -a -- {dirs} {d}/"),
            COPY_TIMEOUT,
        )?;
    } else {
        remote::pipe(
            th,
            &format!("cd {b} && tar -cf - -- {dirs}"),
            &[],
            replica.host.as_ref(),
            &format!("tar -xf - -C {d}"),
            &format!("streaming the prepared backup to {}", replica.label),
            COPY_TIMEOUT,
        )?;
    }
    Ok(guard)
}

/// What the import on one of the target's replicas did.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ReplicaImport {
    /// The replica.
    pub replica: String,
    /// Base tables imported.
    pub tables: usize,
    /// Wall time, milliseconds.
    pub millis: u64,
}

/// Imports the prepared backup a physical copy of `pairs` onto `target` staged beside
/// `replica`'s datadir into that replica, unlogged there, with the definitions the target's
/// copy has (imported from the same backup, before the channel started): the replica then
/// holds the shard at the backup's point, and the rows the channel applies on the target
/// reach it through the target's binary log. Waits first until the replica has applied
/// the target's binary log so far (an earlier attempt's logged drop of the copy), then
/// drops what an interrupted import left there. The staging directory goes at the end,
/// and on any failure (a new copy stages it again).
pub fn import_on_replica(
    inv: &Inventory,
    target: &str,
    replica: &ReplicaSpec,
    pairs: &[SchemaPair],
) -> Result<ReplicaImport> {
    let started = Instant::now();
    let r = replica_files(inv, target, replica)?;
    let staged = replica_staging(&r.datadir, pairs)?;
    let guard = RemoteDir {
        host: r.host.as_ref(),
        path: staged.clone(),
        keep: false,
    };
    if !r.host.exists(&staged, FILE_TIMEOUT)? {
        return Err(Error::Remote(format!(
            "{}: no prepared backup staged in {} for {}; resume copies again",
            r.host.describe(),
            staged.display(),
            r.label
        )));
    }
    let tspec = ConnectSpec::for_node(inv, inv.node(target)?)?;
    let mut primary = super::connect_for_copy(&tspec)?;
    let target_id = primary.settings()?.server_id;
    let logged_so_far = primary.coordinates()?.position;
    let mut server = super::connect_for_long_statements(&r.spec)?;
    let settings = server.settings()?;
    if settings.server_id == target_id {
        return Err(Error::Refused(format!(
            "{target}'s replica {} is {target} itself (server_id {target_id}): nothing imported there; fix the inventory's replicas: of {target}",
            r.label
        )));
    }
    if !settings.read_only {
        return Err(Error::Refused(format!(
            "{target}'s replica {} is writable (read_only off): a server taking writes gets no unlogged copy; make it read-only or take it out of {target}'s replicas:",
            r.label
        )));
    }
    server.wait_applied_from_server(
        &inv.node(target)?.address(),
        Some(target_id),
        &logged_so_far,
        Duration::from_secs(inv.defaults().wait_timeout_secs),
    )?;
    server.exec(&statements::sql_log_bin(false))?;
    let own: Vec<SchemaPair> = pairs
        .iter()
        .map(|p| SchemaPair {
            from: p.to.clone(),
            to: p.to.clone(),
        })
        .collect();
    let mut all = Vec::new();
    let mut engines = Vec::new();
    for p in &own {
        if server.schema_exists(&p.to)? {
            server.exec(&statements::drop_schema_if_exists(&p.to))?;
        }
        engines.push(carried(&mut primary, &p.from)?);
        all.push(objects::read(&mut primary, p)?);
    }
    let into = ImportInto {
        spec: &r.spec,
        host: r.host.as_ref(),
        datadir: &r.datadir,
        backup_dir: &staged,
        unlogged: true,
    };
    let tables = import_schemas(
        &into,
        &mut server,
        &own,
        &all,
        &engines,
        None,
        &mut Stages::new(),
    )?;
    drop(guard);
    Ok(ReplicaImport {
        replica: r.label.clone(),
        tables,
        millis: started.elapsed().as_millis() as u64,
    })
}

/// One server the prepared backup is imported into: the target, or one of its replicas
/// (there unlogged, as on the target then: each server of the group imports its own copy).
struct ImportInto<'a> {
    /// The server.
    spec: &'a ConnectSpec,
    /// Its host, where the files are.
    host: &'a dyn Host,
    /// Its data directory, as the host sees it.
    datadir: &'a Path,
    /// The prepared backup on that host: a directory per schema.
    backup_dir: &'a Path,
    /// The import's statements kept out of the server's binary log.
    unlogged: bool,
}

/// Creates each schema of `pairs` on `into`'s server with the tables of `all` (their
/// definitions) carried as `engines` says, their files moved in from the prepared backup
/// and imported, then the views, routines, triggers and events and the foreign keys; the
/// tables carried. `tgt` is a connection to that server.
fn import_schemas(
    into: &ImportInto<'_>,
    tgt: &mut Server,
    pairs: &[SchemaPair],
    all: &[objects::SchemaObjects],
    engines: &[std::collections::HashMap<String, Carry>],
    progress: Option<&Progress>,
    stage: &mut Stages,
) -> Result<usize> {
    let (th, tdata, backup_dir, tspec) = (into.host, into.datadir, into.backup_dir, into.spec);
    if into.unlogged {
        tgt.exec(&statements::sql_log_bin(false))?;
    }
    let mut tables = 0;
    // Every table's foreign keys, added once every schema's tablespaces are in (a key may
    // reference a table of another schema of the shard).
    let mut foreign_keys: Vec<(Ident, Ident, Vec<String>)> = Vec::new();
    for ((p, objs), eng) in pairs.iter().zip(all).zip(engines) {
        // Only the tables carried by tablespace are created; the others arrive as files.
        let mut created = objs.clone();
        created
            .tables
            .retain(|(t, _)| eng.get(t.as_str()) == Some(&Carry::Tablespace));
        // Created without their foreign keys, which are added once every tablespace is in:
        // a table referenced by a foreign key and left discarded (a copy stopped or failed
        // before its import) cannot be dropped again in MariaDB 10.11 (error 1205) until
        // the server restarts, so the rollback would fail.
        for (t, ddl) in created.tables.iter_mut() {
            let (without, clauses) = split_foreign_keys(ddl);
            if !clauses.is_empty() {
                *ddl = without;
                foreign_keys.push((p.to.clone(), t.clone(), clauses));
            }
        }
        let mut file_names = Vec::new();
        for (t, c) in eng {
            if let Carry::Files(exts) = c {
                let t = Ident::new("table", t)?;
                for ext in *exts {
                    file_names.push(remote::quote(&format!("{}.{ext}", file_name(&t)))?);
                }
            }
        }
        for st in objects::create_tables_statements(p, &created) {
            tgt.exec(&st)?;
        }
        // Each table with a FULLTEXT index, imported, keeps its rows but not a usable index
        // (and re-adding one on it crashes MariaDB 10.11): a fresh table of the same
        // definition takes its rows once imported and then its place (`rebuild_fulltext`).
        let mut rebuilt = Vec::new();
        for t in fulltext_tables(tgt, &p.to)? {
            let ddl = created
                .tables
                .iter()
                .find(|(name, _)| *name == t)
                .map(|(_, ddl)| ddl.clone())
                .ok_or_else(|| Error::Internal(format!("no definition read for {}.{t}", p.to)))?;
            let fresh = rebuilt_name(rebuilt.len())?;
            tgt.exec(&statements::use_schema(&p.to))?;
            tgt.exec(&statements::replay_definition(&renamed_definition(
                &ddl, &t, &fresh,
            )?))?;
            rebuilt.push((t, fresh));
        }
        // A referenced table's tablespace can be discarded only without the checks.
        tgt.exec(&statements::foreign_key_checks(false))?;
        // Each table's file (a plain table), or each partition's file imported into a plain
        // table of the partition's shape and exchanged with the partition.
        let mut plain = Vec::new();
        let mut exchanges: Vec<(Ident, Ident, Ident)> = Vec::new();
        let mut renames = Vec::new();
        for (t, _) in &created.tables {
            let parts = partitions(tgt, &p.to, t)?;
            if parts.is_empty() {
                plain.push(t.clone());
                continue;
            }
            for part in parts {
                let tmp = Ident::new("table", &format!("_shardctl_p{}", exchanges.len()))?;
                tgt.exec(&statements::create_table_like(&p.to, &tmp, t))?;
                tgt.exec(&statements::remove_partitioning(&p.to, &tmp))?;
                for ext in ["ibd", "cfg"] {
                    renames.push((
                        format!("{}#P#{}.{ext}", file_name(t), file_name(&part)),
                        format!("{}.{ext}", file_name(&tmp)),
                    ));
                }
                plain.push(tmp.clone());
                exchanges.push((t.clone(), part, tmp));
            }
        }
        for t in &plain {
            tgt.exec(&statements::discard_tablespace(&p.to, t))?;
        }
        let dir = tdata.join(p.to.as_str());
        let from = backup_dir.join(p.from.as_str());
        let d = path_word(&dir)?;
        let f = path_word(&from)?;
        let mut script = format!("cd {f}");
        for (a, b) in &renames {
            script.push_str(&format!(
                " && mv -f -- {} {}",
                remote::quote(a)?,
                remote::quote(b)?
            ));
        }
        // Only the files of the tables created here and of those carried as files: the
        // backup also holds files the target must not get (a table's full-text auxiliary
        // tablespaces, `FTS_<source's table id>_*.ibd`, which would be orphans there).
        let mut tablespace_files = Vec::new();
        for t in &plain {
            for ext in ["ibd", "cfg"] {
                tablespace_files.push(remote::quote(&format!("{}.{ext}", file_name(t)))?);
            }
        }
        script.push_str(&format!(
            " && for x in {} {}; do test -e \"$x\" || continue; mv -f -- \"$x\" {d}/ && chown --reference={d} -- {d}/\"$x\" && chmod 660 -- {d}/\"$x\" || exit 1; done",
            tablespace_files.join(" "),
            file_names.join(" ")
        ));
        // The .cfg files go once imported, and also when the copy stops before: a table
        // whose import never ran leaves its .cfg, which DROP DATABASE does not remove.
        let cfg_files = RemoteCleanup {
            host: th,
            what: "removing the imported .cfg files",
            command: format!("rm -f -- {d}/*.cfg"),
        };
        th.output(
            &format!("moving the tablespaces of {} into place", p.to),
            &script,
            FILE_TIMEOUT,
        )?;
        stage.done("tables created, tablespaces discarded and moved in");
        import_tablespaces(tspec, &p.to, &plain, into.unlogged)?;
        stage.done("IMPORT TABLESPACE");
        // The files carried as they are (MyISAM, Aria) were written without a flush and
        // the server flushes only what it writes; the renames live in the directory.
        th.output(
            &format!("flushing the files moved into {}", p.to),
            &flush_moved_command(&dir, &file_names)?,
            FILE_TIMEOUT,
        )?;
        for (t, part, tmp) in &exchanges {
            tgt.exec(&statements::exchange_partition(&p.to, t, part, tmp))?;
            tgt.exec(&statements::drop_table(&p.to, tmp))?;
        }
        rebuild_fulltext(tgt, &p.to, &rebuilt)?;
        tables += objs.tables.len();
        tgt.exec(&statements::foreign_key_checks(true))?;
        drop(cfg_files);
        objects::create_after_data(tgt, p, objs)?;
        stage.done("views, routines, triggers, events");
        if let Some(progress) = progress {
            let rows: u64 = tgt.table_rows(&p.to)?.values().sum();
            progress.add(rows, 0);
        }
    }
    if !foreign_keys.is_empty() {
        tgt.exec(&statements::foreign_key_checks(false))?;
        for (schema, t, clauses) in &foreign_keys {
            tgt.exec(&statements::add_constraints(schema, t, clauses))?;
        }
        tgt.exec(&statements::foreign_key_checks(true))?;
    }
    Ok(tables)
}

/// `IMPORT TABLESPACE` of each of `tables` (their files in place, tablespaces discarded),
/// over up to [`IMPORT_CONNECTIONS`] connections of their own, each table by one of them.
/// The first failure stops the other connections at their next table and is the error.
fn import_tablespaces(
    spec: &ConnectSpec,
    schema: &Ident,
    tables: &[Ident],
    unlogged: bool,
) -> Result<()> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;
    let next = AtomicUsize::new(0);
    let first_error: Mutex<Option<Error>> = Mutex::new(None);
    let lanes = IMPORT_CONNECTIONS.min(tables.len());
    let ids: Mutex<Vec<u64>> = Mutex::new(Vec::new());
    let stop = crate::signal::scope();
    // Each lane holds a sender: the watcher sees them all gone as soon as the last ends.
    let (lanes_alive, lanes_ended) = std::sync::mpsc::channel::<()>();
    let lane = || -> Result<()> {
        let mut tgt = super::connect_for_long_statements(spec)?;
        if let Some(id) = tgt.first::<u64>(&statements::connection_id())? {
            ids.lock().unwrap_or_else(|p| p.into_inner()).push(id);
        }
        if unlogged {
            tgt.exec(&statements::sql_log_bin(false))?;
        }
        // A referenced table's tablespace imports only without the checks.
        tgt.exec(&statements::foreign_key_checks(false))?;
        while let Some(t) = tables.get(next.fetch_add(1, Ordering::SeqCst)) {
            crate::signal::check()?;
            tgt.exec(&statements::import_tablespace(schema, t))?;
        }
        Ok(())
    };
    std::thread::scope(|s| {
        let (next, first_error, ids, stop, lane) = (&next, &first_error, &ids, &stop, &lane);
        // Asked to stop (Ctrl-C, `shardctl stop`, a lost lease): the imports running are
        // killed rather than waited for; the copy then fails and is redone or rolled back.
        s.spawn(move || {
            crate::signal::enter_scope(stop.clone());
            // Once stopped, the running imports are killed at every poll until the lanes
            // end: a kill that reached a connection between two statements is forgotten
            // by the next, and a lane may connect after the first round.
            let mut killer = None;
            loop {
                match lanes_ended.recv_timeout(IMPORT_STOP_POLL) {
                    Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return,
                    _ if crate::signal::interrupted() => {
                        next.store(tables.len(), Ordering::SeqCst);
                        if killer.is_none() {
                            killer = super::connect_for_copy(spec).ok();
                        }
                        if let Some(k) = killer.as_mut() {
                            for id in ids.lock().unwrap_or_else(|p| p.into_inner()).iter() {
                                let _ = k.exec(&statements::kill_query(*id));
                            }
                        }
                    }
                    _ => {}
                }
            }
        });
        for _ in 0..lanes {
            let alive = lanes_alive.clone();
            s.spawn(move || {
                let _alive = alive;
                crate::signal::enter_scope(stop.clone());
                let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(lane))
                    .unwrap_or_else(|_| {
                        Err(Error::Internal("an import connection panicked".into()))
                    });
                if let Err(e) = outcome {
                    next.store(tables.len(), Ordering::SeqCst);
                    first_error
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .get_or_insert(e);
                }
            });
        }
        drop(lanes_alive);
    });
    crate::signal::check()?;
    match first_error.into_inner().unwrap_or_else(|p| p.into_inner()) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Times each stage of a copy for the log (`-vv`): where a physical copy spends its time.
struct Stages(Instant);

impl Stages {
    fn new() -> Stages {
        Stages(Instant::now())
    }

    fn done(&mut self, what: &str) {
        crate::output::log(
            2,
            &format!(
                "physical copy: {what} in {} ms",
                self.0.elapsed().as_millis()
            ),
        );
        self.0 = Instant::now();
    }
}

/// A table's definition (`SHOW CREATE TABLE`) without its foreign keys, and those
/// clauses as the definition gave them (one line each, without the separating comma).
fn split_foreign_keys(ddl: &str) -> (String, Vec<String>) {
    let mut kept: Vec<&str> = Vec::new();
    let mut clauses = Vec::new();
    for line in ddl.lines() {
        let body = line.trim_start();
        if line.starts_with("  ")
            && body.starts_with("CONSTRAINT ")
            && body.contains(" FOREIGN KEY (")
        {
            clauses.push(body.trim_end_matches(',').to_string());
        } else {
            kept.push(line);
        }
    }
    if clauses.is_empty() {
        return (ddl.to_string(), clauses);
    }
    // The clause before the closing line now ends the list: no comma after it.
    let mut lines: Vec<String> = kept.iter().map(|l| l.to_string()).collect();
    if let Some(close) = lines.iter().rposition(|l| l.starts_with(')')) {
        if let Some(last) = close.checked_sub(1).and_then(|i| lines.get_mut(i)) {
            if last.starts_with("  ") && last.ends_with(',') {
                last.pop();
            }
        }
    }
    (lines.join("\n"), clauses)
}

/// Each imported FULLTEXT table of `rebuilt` (table, its fresh copy) replaced by its fresh
/// copy holding the same rows, inserted there (which builds the index): the rows are the
/// backup's, so the copy stays at the backup's point. The definition's `AUTO_INCREMENT`
/// stays the fresh table's. Foreign key checks must be off.
fn rebuild_fulltext(tgt: &mut Server, schema: &Ident, rebuilt: &[(Ident, Ident)]) -> Result<()> {
    tgt.exec(&statements::keep_zero_auto_increment())?;
    for (t, fresh) in rebuilt {
        let columns = tgt.writable_columns(schema, t)?;
        tgt.exec(&statements::copy_rows_within_node(
            schema, fresh, schema, t, &columns,
        ))?;
        tgt.exec(&statements::drop_table(schema, t))?;
        tgt.exec(&statements::rename_table(schema, fresh, t))?;
    }
    Ok(())
}

/// The tables of `schema` with a FULLTEXT index.
fn fulltext_tables(server: &mut Server, schema: &Ident) -> Result<Vec<Ident>> {
    server
        .rows(&statements::fulltext_tables(schema))?
        .into_iter()
        .map(|r| {
            let name: String =
                mysql::from_row_opt(r).map_err(|e| Error::server(server.name(), e))?;
            Ident::new("table", &name)
        })
        .collect()
}

/// The InnoDB table id a full-text auxiliary table (`<schema>/FTS_<16 hex digits>_...`)
/// belongs to.
fn fulltext_owner(aux: &str) -> Option<u64> {
    let (_, rest) = aux.split_once("/FTS_")?;
    u64::from_str_radix(rest.get(..16)?, 16).ok()
}

/// The name a FULLTEXT table's rebuilt copy has until it replaces the imported table.
fn rebuilt_name(index: usize) -> Result<Ident> {
    Ident::new("table", &format!("_shardctl_ft{index}"))
}

/// `ddl` (a `SHOW CREATE TABLE` of `table`) creating the table under the name `new`.
fn renamed_definition(ddl: &str, table: &Ident, new: &Ident) -> Result<String> {
    ddl.strip_prefix(&format!("CREATE TABLE {} ", table.quoted()))
        .map(|rest| format!("CREATE TABLE {} {rest}", new.quoted()))
        .ok_or_else(|| {
            Error::Internal(format!(
                "the definition of {table} does not start with CREATE TABLE {}",
                table.quoted()
            ))
        })
}

/// A table's partitions, in order.
fn partitions(server: &mut Server, schema: &Ident, table: &Ident) -> Result<Vec<Ident>> {
    let mut out = Vec::new();
    for row in server.rows(&statements::table_partitions(schema, table))? {
        let (name, _sub): (String, i64) =
            mysql::from_row_opt(row).map_err(|e| Error::server(server.name(), e))?;
        let id = Ident::new("partition", &name)?;
        if !out.contains(&id) {
            out.push(id);
        }
    }
    Ok(out)
}

/// A name as the server spells it in file names: letters, digits and `_` as they are,
/// any other character as `@` and four hex digits.
fn file_name(name: &Ident) -> String {
    name.as_str()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c.to_string()
            } else {
                format!("@{:04x}", c as u32)
            }
        })
        .collect()
}

/// The schema a copy's staging directory is named after.
fn first_schema(pairs: &[SchemaPair]) -> Result<&Ident> {
    pairs
        .first()
        .map(|p| &p.to)
        .ok_or_else(|| Error::Internal("a physical copy of no schema".into()))
}

/// `<datadir>.shardctl-import.<schema as a file name>`: beside the datadir, on its file
/// system; each attempt's staging directory is this and a suffix of its own.
fn staging_prefix(datadir: &Path, schema: &Ident) -> Result<PathBuf> {
    let name = datadir
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| Error::Config(format!("datadir {} has no name", datadir.display())))?;
    Ok(datadir.with_file_name(format!("{name}.shardctl-import.{}", file_name(schema))))
}

/// The `mktemp` template of one attempt's staging directory.
fn attempt_template(prefix: &Path) -> PathBuf {
    PathBuf::from(format!("{}.XXXXXXXX", prefix.display()))
}

/// Removes every attempt's staging directory under `prefix` (`<prefix>.*`).
fn clear_command(prefix: &Path) -> Result<String> {
    Ok(format!("rm -rf -- {}.*", path_word(prefix)?))
}

/// Removes what killed physical copies of `pairs` onto `target` left in their staging
/// directories (each a whole backup), under any of the pairs' names: an abort's
/// rollback calls it.
pub fn clear_staging(inv: &Inventory, target: &str, pairs: &[SchemaPair]) -> Result<()> {
    let tdata = hostops::datadir(inv, target, "the physical copy stages its files there")?;
    let mut script = Vec::new();
    for p in pairs {
        script.push(clear_command(&staging_prefix(&tdata, &p.to)?)?);
    }
    if script.is_empty() {
        return Ok(());
    }
    let on_target = remote::host_for(inv, target)?.output(
        "removing a physical copy's staging directories",
        &script.join(" && "),
        FILE_TIMEOUT,
    );
    // The prepared backup staged beside each replica's datadir for its import: every
    // replica is tried, the first failure is the answer.
    let mut first_error = on_target.err();
    for r in &inv.node(target)?.spec.replicas {
        let cleared = replica_files(inv, target, r).and_then(|r| {
            let prefix = staging_prefix(&r.datadir, first_schema(pairs)?)?;
            r.host.output(
                "removing a physical copy's staging directory beside a replica's datadir",
                &clear_command(&prefix)?,
                FILE_TIMEOUT,
            )
        });
        if let Err(e) = cleared {
            first_error.get_or_insert(e);
        }
    }
    match first_error {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// The staging directories a physical copy of `pairs` onto `target` uses (for a dry
/// run's text), as a glob.
pub fn staging_glob(inv: &Inventory, target: &str, pairs: &[SchemaPair]) -> Result<String> {
    let tdata = hostops::datadir(inv, target, "the physical copy stages its files there")?;
    Ok(format!(
        "{}.*",
        staging_prefix(&tdata, first_schema(pairs)?)?.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(socket: Option<&str>, password: &str) -> ConnectSpec {
        ConnectSpec {
            name: "node1".into(),
            host: "db1.example".into(),
            port: 3307,
            socket: socket.map(PathBuf::from),
            credentials: crate::config::Credentials {
                user: "back up".into(),
                password: crate::config::Secret::new(password),
            },
            tls: None,
            connect_timeout: Duration::from_secs(5),
            read_timeout: Duration::from_secs(5),
            write_timeout: Duration::from_secs(5),
        }
    }

    #[test]
    fn the_backup_logs_in_with_the_password_on_its_input_only() {
        let datadir = Path::new("/var/lib/my sql");
        let (cmd, input) = backup_login(
            &spec(None, "s3cr'et $x"),
            datadir,
            "--backup --databases=app",
        )
        .unwrap();
        assert_eq!(
            cmd,
            "IFS= read -r MYSQL_PWD && export MYSQL_PWD && exec mariadb-backup --no-defaults '--user=back up' --host=db1.example --port=3307 --protocol=TCP '--datadir=/var/lib/my sql' --backup --databases=app"
        );
        assert_eq!(input, b"s3cr'et $x\n");
        let (cmd, _) =
            backup_login(&spec(Some("/run/mysqld/a.sock"), "pw"), datadir, "--backup").unwrap();
        assert!(
            cmd.contains(" --socket=/run/mysqld/a.sock '--datadir"),
            "{cmd}"
        );
        assert!(
            !cmd.contains("--host") && !cmd.contains("--protocol"),
            "{cmd}"
        );
        // A password the shell's line could not carry whole is refused, not cut short.
        let err = backup_login(&spec(None, "two\nlines"), datadir, "--backup").unwrap_err();
        assert!(matches!(err, Error::Refused(_)), "{err:?}");
        assert!(
            err.to_string()
                .contains("password of node node1 holds a line break"),
            "{err}"
        );
    }

    #[test]
    fn over_tcp_the_backup_checks_the_certificate_the_inventory_names() {
        let tls = |insecure| crate::config::TlsSpec {
            enabled: true,
            ca_file: Some(PathBuf::from("/etc/mysql/ca.pem")),
            cert_file: Some(PathBuf::from("/etc/mysql/client cert.pem")),
            key_file: None,
            insecure,
        };
        let datadir = Path::new("/var/lib/mysql");
        let mut tcp = spec(None, "pw");
        tcp.tls = Some(tls(false));
        let (cmd, _) = backup_login(&tcp, datadir, "--backup").unwrap();
        assert!(
            cmd.contains(" --protocol=TCP --ssl --ssl-ca=/etc/mysql/ca.pem '--ssl-cert=/etc/mysql/client cert.pem' --ssl-verify-server-cert --datadir=/var/lib/mysql --backup"),
            "{cmd}"
        );
        tcp.tls = Some(tls(true));
        let (cmd, _) = backup_login(&tcp, datadir, "--backup").unwrap();
        assert!(
            cmd.contains(" --ssl --ssl-ca=")
                && cmd.contains(" --skip-ssl-verify-server-cert ")
                && !cmd.contains(" --ssl-verify-server-cert"),
            "{cmd}"
        );
        assert_eq!(
            backup_tls_files(&tcp),
            vec![
                PathBuf::from("/etc/mysql/ca.pem"),
                PathBuf::from("/etc/mysql/client cert.pem")
            ]
        );
        // Through the host's own socket no certificate is named or checked.
        let mut local = spec(Some("/run/mysqld/mysqld.sock"), "pw");
        local.tls = Some(tls(false));
        let (cmd, _) = backup_login(&local, datadir, "--backup").unwrap();
        assert!(!cmd.contains("--ssl"), "{cmd}");
        assert!(backup_tls_files(&local).is_empty());
    }

    #[test]
    fn only_a_target_that_flushes_its_imports_lets_the_prepare_skip_its_own() {
        for m in ["fsync", "O_DIRECT", "o_direct", "O_DSYNC"] {
            assert!(import_is_flushed(m), "{m}");
        }
        for m in ["nosync", "littlesync", "O_DIRECT_NO_FSYNC", ""] {
            assert!(!import_is_flushed(m), "{m}");
        }
    }

    #[test]
    fn the_moved_files_and_their_directory_are_flushed() {
        let dir = Path::new("/var/lib/mysql/app_1");
        assert_eq!(
            flush_moved_command(dir, &[]).unwrap(),
            "cd /var/lib/mysql/app_1 && sync -- ."
        );
        assert_eq!(
            flush_moved_command(dir, &["t.frm".into(), "t.MYD".into()]).unwrap(),
            "cd /var/lib/mysql/app_1 && for x in t.frm t.MYD; do test -e \"$x\" || continue; sync -- \"$x\" || exit 1; done && sync -- ."
        );
    }

    #[test]
    fn the_prepare_skips_its_fsyncs_only_when_asked() {
        let dir = Path::new("/var/lib/mysql.shardctl-import.app.x1/backup");
        assert_eq!(
            prepare_command(dir, true).unwrap(),
            "eatmydata mariadb-backup --prepare --export --target-dir=/var/lib/mysql.shardctl-import.app.x1/backup"
        );
        assert_eq!(
            prepare_command(dir, false).unwrap(),
            "mariadb-backup --prepare --export --target-dir=/var/lib/mysql.shardctl-import.app.x1/backup"
        );
        assert!(prepare_command(Path::new("/tmp/it's"), true)
            .unwrap()
            .ends_with("--target-dir='/tmp/it'\\''s'"));
    }

    #[test]
    fn a_fulltext_table_is_rebuilt_under_a_name_of_its_own_and_its_auxiliary_tables_name_it() {
        let id = |n: &str| Ident::new("table", n).unwrap();
        assert_eq!(
            fulltext_owner("sakila/FTS_0000000000000012_000000000000001e_INDEX_1"),
            Some(0x12)
        );
        assert_eq!(
            fulltext_owner("sakila/FTS_00000000000001a4_CONFIG"),
            Some(0x1a4)
        );
        assert_eq!(fulltext_owner("sakila/FTS_12_CONFIG"), None);
        assert_eq!(fulltext_owner("sakila/film_text"), None);
        let ddl = "CREATE TABLE `film_text` (\n  `film_id` smallint(6) NOT NULL,\n  `title` varchar(255) NOT NULL,\n  PRIMARY KEY (`film_id`),\n  FULLTEXT KEY `t` (`title`)\n) ENGINE=InnoDB AUTO_INCREMENT=1001";
        let fresh = rebuilt_name(0).unwrap();
        assert_eq!(fresh.as_str(), "_shardctl_ft0");
        assert_eq!(
            renamed_definition(ddl, &id("film_text"), &fresh).unwrap(),
            ddl.replacen("`film_text`", "`_shardctl_ft0`", 1)
        );
        // Only the leading name: a definition of another table is not taken for it.
        assert!(renamed_definition(ddl, &id("film"), &fresh).is_err());
    }

    #[test]
    fn binlog_info_reads_file_position_and_gtid() {
        let c = parse_binlog_info("mysql-bin.000003\t1234\t0-1-5\n").unwrap();
        assert_eq!(c.position.file, "mysql-bin.000003");
        assert_eq!(c.position.pos, 1234);
        assert_eq!(c.gtid, "0-1-5");
        let c = parse_binlog_info("mysql-bin.000001\t4\n").unwrap();
        assert_eq!(c.gtid, "");
        assert!(parse_binlog_info("").is_none());
        assert!(parse_binlog_info("x\tnot-a-number\n").is_none());
    }

    #[test]
    fn foreign_keys_are_split_off_a_definition_and_the_rest_stays_valid() {
        let ddl = "CREATE TABLE `customer` (\n  `id` int(11) NOT NULL,\n  `region_id` smallint(5) unsigned DEFAULT NULL,\n  PRIMARY KEY (`id`),\n  KEY `region_id` (`region_id`),\n  CONSTRAINT `customer_region` FOREIGN KEY (`region_id`) REFERENCES `region` (`id`) ON DELETE SET NULL,\n  CONSTRAINT `positive` CHECK (`id` > 0)\n) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4";
        let (without, clauses) = split_foreign_keys(ddl);
        assert_eq!(
            clauses,
            vec!["CONSTRAINT `customer_region` FOREIGN KEY (`region_id`) REFERENCES `region` (`id`) ON DELETE SET NULL"]
        );
        assert_eq!(
            without,
            "CREATE TABLE `customer` (\n  `id` int(11) NOT NULL,\n  `region_id` smallint(5) unsigned DEFAULT NULL,\n  PRIMARY KEY (`id`),\n  KEY `region_id` (`region_id`),\n  CONSTRAINT `positive` CHECK (`id` > 0)\n) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4"
        );
        // The foreign key as the last clause: the one before it loses its comma.
        let ddl = "CREATE TABLE `r` (\n  `id` int(11) NOT NULL,\n  `p` int(11) DEFAULT NULL,\n  PRIMARY KEY (`id`),\n  KEY `p` (`p`),\n  CONSTRAINT `rp` FOREIGN KEY (`p`) REFERENCES `r` (`id`)\n) ENGINE=InnoDB";
        let (without, clauses) = split_foreign_keys(ddl);
        assert_eq!(clauses.len(), 1);
        assert!(
            without.contains("  KEY `p` (`p`)\n) ENGINE=InnoDB"),
            "{without}"
        );
        // No foreign key: the definition as it was.
        let plain =
            "CREATE TABLE `t` (\n  `id` int(11) NOT NULL,\n  PRIMARY KEY (`id`)\n) ENGINE=InnoDB";
        assert_eq!(split_foreign_keys(plain), (plain.to_string(), vec![]));
    }

    #[test]
    fn staging_sits_beside_the_datadir_named_after_the_shard() {
        let id = |n: &str| Ident::new("schema", n).unwrap();
        let prefix = staging_prefix(Path::new("/var/lib/mysql"), &id("app_7")).unwrap();
        assert_eq!(
            prefix,
            PathBuf::from("/var/lib/mysql.shardctl-import.app_7")
        );
        assert_eq!(
            attempt_template(&prefix),
            PathBuf::from("/var/lib/mysql.shardctl-import.app_7.XXXXXXXX")
        );
        assert_eq!(
            clear_command(&prefix).unwrap(),
            "rm -rf -- /var/lib/mysql.shardctl-import.app_7.*"
        );
        // Only the suffix is a pattern: the prefix stays one literal word.
        let spaced = staging_prefix(Path::new("/data/my sql*"), &id("app_7")).unwrap();
        assert_eq!(
            clear_command(&spaced).unwrap(),
            "rm -rf -- '/data/my sql*.shardctl-import.app_7'.*"
        );
        // A trailing slash names the same directory.
        assert_eq!(
            staging_prefix(Path::new("/var/lib/mysql/"), &id("app_7")).unwrap(),
            prefix
        );
        assert_eq!(
            staging_prefix(Path::new("/data/my sql"), &id("app$1")).unwrap(),
            PathBuf::from("/data/my sql.shardctl-import.app@00241")
        );
        assert!(staging_prefix(Path::new("/"), &id("app_7")).is_err());
        assert!(first_schema(&[]).is_err());
    }
}
