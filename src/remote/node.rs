//! What procedures do on a node's host rather than through SQL: the restart path's option
//! file edits and restart, and the host checks of the preflight (free space, tools).
//!
//! The edits are pure here (text in, text out) and applied through [`crate::remote`] by
//! the live effects; the dry run shows the same block.

use crate::config::Inventory;
use crate::error::{Error, Result};
use crate::remote::{self, Host};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Longest a file read or write on a host may take.
pub const FILE_TIMEOUT: Duration = Duration::from_secs(60);

/// A block of options shardctl adds to a server's option file and later removes, exactly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OptionEdit {
    /// What the block is for (the channel's name): it names the block's markers and the
    /// backup file.
    pub tag: String,
    /// The `[mysqld]` lines.
    pub lines: Vec<String>,
}

impl OptionEdit {
    /// The block as appended: its own `[mysqld]` group between two marker comments.
    pub fn block(&self) -> String {
        let mut out = format!(
            "# shardctl begin {tag}: replication filter of channel {tag}; removed when its operation ends\n[mysqld]\n",
            tag = self.tag
        );
        for l in &self.lines {
            out.push_str(l);
            out.push('\n');
        }
        out.push_str(&format!("# shardctl end {}\n", self.tag));
        out
    }

    /// Whether `text` holds this block already.
    pub fn present_in(&self, text: &[u8]) -> bool {
        find(text, self.block().as_bytes()).is_some()
    }

    /// `original` with the block appended (after a line break if it lacks its last one).
    pub fn applied(&self, original: &[u8]) -> Vec<u8> {
        let mut out = original.to_vec();
        if !out.is_empty() && !out.ends_with(b"\n") {
            out.push(b'\n');
        }
        out.extend_from_slice(self.block().as_bytes());
        out
    }

    /// `current` without the block: exactly `backup` when the file is otherwise as it was
    /// (the line break [`Self::applied`] may have added goes too); None when the block
    /// is not there.
    pub fn removed(&self, current: &[u8], backup: Option<&[u8]>) -> Option<Vec<u8>> {
        let block = self.block();
        let at = find(current, block.as_bytes())?;
        let mut out = current[..at].to_vec();
        out.extend_from_slice(&current[at + block.len()..]);
        if let Some(b) = backup {
            let mut with_break = b.to_vec();
            with_break.push(b'\n');
            if out == b || (!b.ends_with(b"\n") && !b.is_empty() && out == with_break) {
                return Some(b.to_vec());
            }
        }
        Some(out)
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() || hay.len() < needle.len() {
        return None;
    }
    hay.windows(needle.len()).position(|w| w == needle)
}

/// The backup of an option file kept beside it while an edit is in place (and after).
pub fn backup_path(option_file: &Path, tag: &str) -> PathBuf {
    let mut name = option_file.as_os_str().to_owned();
    name.push(format!(".shardctl-{tag}.bak"));
    PathBuf::from(name)
}

/// The node's option file from the inventory, or a refusal saying what to add.
pub fn option_file(inv: &Inventory, node: &str) -> Result<PathBuf> {
    inv.node(node)?.spec.option_file.clone().ok_or_else(|| {
        Error::Refused(format!(
            "node {node} has no option_file in the inventory: the restart path writes the channel's filter there"
        ))
    })
}

/// The node's restart command from the inventory, or a refusal saying what to add.
pub fn restart_command(inv: &Inventory, node: &str) -> Result<String> {
    inv.node(node)?.spec.restart_command.clone().ok_or_else(|| {
        Error::Refused(format!(
            "node {node} has no restart_command in the inventory: the restart path restarts its server with it"
        ))
    })
}

/// The node's datadir from the inventory, or a refusal saying what to add.
pub fn datadir(inv: &Inventory, node: &str, why: &str) -> Result<PathBuf> {
    inv.node(node)?.spec.datadir.clone().ok_or_else(|| {
        Error::Refused(format!(
            "node {node} has no datadir in the inventory: {why}"
        ))
    })
}

/// Appends `edit` to the node's option file, keeping a backup of the file as it was;
/// nothing when the block is there already. Whether it wrote.
pub fn persist(inv: &Inventory, node: &str, edit: &OptionEdit) -> Result<bool> {
    // Run to its end also after a stop request: an option file is written whole or not at all.
    crate::signal::shielded(|| {
        let host = remote::host_for(inv, node)?;
        let path = resolved(host.as_ref(), &option_file(inv, node)?)?;
        let current = host.read_file(&path, FILE_TIMEOUT)?;
        if edit.present_in(&current) {
            return Ok(false);
        }
        let backup = backup_path(&path, &edit.tag);
        // A backup from an earlier attempt is the file as it was before this operation.
        if !host.exists(&backup, FILE_TIMEOUT)? {
            host.write_file(&backup, &current, 0o600, FILE_TIMEOUT)?;
        }
        let mode = file_mode(host.as_ref(), &path)?;
        host.write_file(&path, &edit.applied(&current), mode, FILE_TIMEOUT)?;
        Ok(true)
    })
}

/// Removes `edit` from the node's option file, leaving it exactly as its backup when
/// nothing else changed meanwhile (the backup stays). Whether it removed anything.
pub fn unpersist(inv: &Inventory, node: &str, edit: &OptionEdit) -> Result<bool> {
    // Run to its end also after a stop request: an option file is written whole or not at all.
    crate::signal::shielded(|| {
        let host = remote::host_for(inv, node)?;
        let path = resolved(host.as_ref(), &option_file(inv, node)?)?;
        let current = host.read_file(&path, FILE_TIMEOUT)?;
        let backup_file = backup_path(&path, &edit.tag);
        let backup = if host.exists(&backup_file, FILE_TIMEOUT)? {
            Some(host.read_file(&backup_file, FILE_TIMEOUT)?)
        } else {
            None
        };
        let Some(restored) = edit.removed(&current, backup.as_deref()) else {
            return Ok(false);
        };
        if backup.as_deref() != Some(restored.as_slice()) {
            crate::output::log(
                0,
                &format!(
                    "{node}: {} changed while the move ran; only shardctl's block was removed (the file before the move is in {})",
                    path.display(),
                    backup_file.display()
                ),
            );
        }
        let mode = file_mode(host.as_ref(), &path)?;
        host.write_file(&path, &restored, mode, FILE_TIMEOUT)?;
        Ok(true)
    })
}

/// The file a path names on its host, symbolic links followed (`/etc/mysql/my.cnf` is one
/// on Debian): the edit replaces that file, never the link, so the link and the real
/// file's mode stay as they were.
fn resolved(host: &dyn Host, path: &Path) -> Result<PathBuf> {
    let p = remote::path_word(path)?;
    let out = host.text(
        &format!("resolving {}", path.display()),
        &format!("readlink -f -- {p}"),
        FILE_TIMEOUT,
    )?;
    let real = out.trim();
    if real.is_empty() {
        return Err(Error::Remote(format!(
            "{}: {} does not resolve to a file",
            host.describe(),
            path.display()
        )));
    }
    Ok(PathBuf::from(real))
}

/// A file's permission bits on its host (kept when it is rewritten); links followed. A
/// file others may write is refused: the server ignores such an option file.
fn file_mode(host: &dyn Host, path: &Path) -> Result<u32> {
    let p = remote::path_word(path)?;
    let out = host.text(
        &format!("reading the mode of {}", path.display()),
        &format!("stat -L -c %a -- {p}"),
        FILE_TIMEOUT,
    )?;
    let mode = u32::from_str_radix(out.trim(), 8).map_err(|_| {
        Error::Remote(format!(
            "{}: stat gave {:?} for the mode of {}",
            host.describe(),
            out.trim(),
            path.display()
        ))
    })?;
    if mode & 0o002 != 0 {
        return Err(Error::Refused(format!(
            "{}: {} is writable by anyone (mode {mode:o}): the server would ignore it; fix its mode first",
            host.describe(),
            path.display()
        )));
    }
    Ok(mode)
}

/// Runs the node's restart command on its host (within the restart timeout).
pub fn run_restart_command(inv: &Inventory, node: &str) -> Result<()> {
    // Run to its end also after a stop request: a restart killed between its stop and its
    // start would leave the server down.
    crate::signal::shielded(|| {
        let cmd = restart_command(inv, node)?;
        let host = remote::host_for(inv, node)?;
        let timeout = Duration::from_secs(inv.defaults().restart_timeout_secs);
        let mut out = Vec::new();
        let exit = host.run(&cmd, None, &mut out, timeout)?;
        host.check_exit("the restart command", &exit)
    })
}

/// Bytes free for an unprivileged writer in the file system holding `dir` on the host.
pub fn free_bytes(host: &dyn Host, dir: &Path) -> Result<u64> {
    let p = remote::path_word(dir)?;
    let out = host.text(
        &format!("measuring the free space of {}", dir.display()),
        &format!("df -P -B1 -- {p} | tail -n 1"),
        FILE_TIMEOUT,
    )?;
    // Filesystem 1-blocks Used Available Capacity Mounted-on
    out.split_whitespace()
        .nth(3)
        .and_then(|v| v.parse::<u64>().ok())
        .ok_or_else(|| {
            Error::Remote(format!(
                "{}: cannot read df's answer for {}: {:?}",
                host.describe(),
                dir.display(),
                out.trim()
            ))
        })
}

/// The first line of `tool --version` on the host, or a refusal naming the tool and the
/// package that brings it.
pub fn tool_version(host: &dyn Host, tool: &str, package: &str) -> Result<String> {
    let t = remote::quote(tool)?;
    let out = host.text(
        &format!("looking for {tool}"),
        &format!("if command -v {t} >/dev/null 2>&1; then {t} --version 2>&1 | head -n 1; else echo shardctl-missing; fi"),
        FILE_TIMEOUT,
    )?;
    let line = out.lines().next().unwrap_or("").trim().to_string();
    if line == "shardctl-missing" || line.is_empty() {
        return Err(Error::Refused(format!(
            "{}: {tool} is not installed (install the package {package})",
            host.describe()
        )));
    }
    Ok(line)
}

/// Whether `tool` is on the host's `PATH`, for a tool the caller can do without.
pub fn has_tool(host: &dyn Host, tool: &str) -> Result<bool> {
    let t = remote::quote(tool)?;
    let out = host.text(
        &format!("looking for {tool}"),
        &format!("if command -v {t} >/dev/null 2>&1; then echo present; else echo missing; fi"),
        FILE_TIMEOUT,
    )?;
    match out.trim() {
        "present" => Ok(true),
        "missing" => Ok(false),
        other => Err(Error::Remote(format!(
            "{}: looking for {tool} gave {other:?}",
            host.describe()
        ))),
    }
}

/// The free-space preflight: the target's datadir must hold `needed` bytes (the shard's
/// size) plus the inventory's margin and reserve. With `staged_beside` (the physical copy,
/// which stages its backup beside the datadir before moving the files in), the datadir's
/// parent must hold them too: when the datadir is a mount point of its own, the staging
/// directory is on another file system. Returns what it measured.
pub fn check_free_space(
    inv: &Inventory,
    node: &str,
    needed: u64,
    staged_beside: bool,
) -> Result<serde_json::Value> {
    let dir = datadir(
        inv,
        node,
        "the preflight measures its free space (add datadir: to the node)",
    )?;
    let host = remote::host_for(inv, node)?;
    let d = inv.defaults();
    let want = needed
        .saturating_add(needed.saturating_mul(d.free_space_margin_percent) / 100)
        .saturating_add(d.free_space_reserve_mib.saturating_mul(1024 * 1024));
    let mut dirs = vec![dir.clone()];
    if staged_beside {
        if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
            dirs.push(parent.to_path_buf());
        }
    }
    let mut free = Vec::new();
    for (i, at) in dirs.iter().enumerate() {
        let bytes = free_bytes(host.as_ref(), at)?;
        if bytes < want {
            return Err(Error::Refused(format!(
                "node {node}: {}{} has {} free; the shard needs {} plus a {}% margin and {} MiB reserve ({} in all)",
                at.display(),
                if i == 0 { "" } else { " (where the physical copy stages its backup)" },
                human(bytes),
                human(needed),
                d.free_space_margin_percent,
                d.free_space_reserve_mib,
                human(want)
            )));
        }
        free.push(bytes);
    }
    let mut out = serde_json::json!({"datadir": dir, "free_bytes": free[0], "needed_bytes": want});
    if let (Some(at), Some(bytes)) = (dirs.get(1), free.get(1)) {
        out["staging_parent"] = serde_json::json!(at);
        out["staging_parent_free_bytes"] = serde_json::json!(bytes);
    }
    Ok(out)
}

/// Bytes for people.
pub fn human(bytes: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = bytes as f64;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{bytes} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edit() -> OptionEdit {
        OptionEdit {
            tag: "shardctl_op7".into(),
            lines: vec!["shardctl_op7.replicate_wild_do_table=\"employees\\\\_3.%\"".into()],
        }
    }

    #[test]
    fn an_edit_comes_off_leaving_the_file_as_it_was() {
        let e = edit();
        for original in [
            &b"[mysqld]\nport=3306\n"[..],
            b"[mysqld]\nport=3306",
            b"",
            b"[client]\nuser=x\n\n# trailing comment",
        ] {
            let applied = e.applied(original);
            assert!(e.present_in(&applied));
            assert!(!e.present_in(original));
            assert_eq!(
                e.removed(&applied, Some(original)).unwrap(),
                original,
                "{:?}",
                String::from_utf8_lossy(original)
            );
        }
        assert_eq!(e.removed(b"[mysqld]\n", Some(b"[mysqld]\n")), None);
    }

    #[test]
    fn a_file_changed_meanwhile_loses_only_the_block() {
        let e = edit();
        let mut changed = e.applied(b"[mysqld]\nport=1\n");
        changed.extend_from_slice(b"[mysqld]\nmax_connections=9\n");
        let out = e.removed(&changed, Some(b"[mysqld]\nport=1\n")).unwrap();
        assert_eq!(out, b"[mysqld]\nport=1\n[mysqld]\nmax_connections=9\n");
    }

    #[test]
    fn backup_sits_beside_the_file() {
        assert_eq!(
            backup_path(Path::new("/etc/mysql/my.cnf"), "shardctl_op7"),
            PathBuf::from("/etc/mysql/my.cnf.shardctl-shardctl_op7.bak")
        );
    }

    #[test]
    fn sizes_read_well() {
        assert_eq!(human(512), "512 B");
        assert_eq!(human(3 * 1024 * 1024), "3.0 MiB");
    }
}
