//! The dump method: the distribution's dump tool (single-transaction snapshot, coordinates
//! recorded in the dump) piped into its client, or written to a file. Credentials travel in
//! 0600 temporary option files, never on the command line.

use super::{CopyReport, SchemaPair};
use crate::error::{Error, Result};
use crate::server::dialect::BinlogPosition;
use crate::server::replication::Coordinates;
use crate::server::ConnectSpec;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

fn tool(names: &[&str]) -> Result<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    for n in names {
        for d in std::env::split_paths(&path) {
            let p = d.join(n);
            if p.is_file() {
                return Ok(p);
            }
        }
    }
    Err(Error::Config(format!(
        "{} not found: install the Debian package mariadb-client",
        names.join(" or ")
    )))
}

/// A 0600 option file with the connection's account, host and port.
fn option_file(spec: &ConnectSpec) -> Result<tempfile::NamedTempFile> {
    let f = tempfile::Builder::new()
        .prefix("shardctl-")
        .suffix(".cnf")
        .tempfile()
        .map_err(|e| Error::io("cannot create an option file", e))?;
    let mut text = format!(
        "[client]\nuser={}\npassword=\"{}\"\n",
        spec.credentials.user,
        spec.credentials
            .password
            .expose()
            .replace('\\', "\\\\")
            .replace('"', "\\\"")
    );
    match &spec.socket {
        Some(s) => text.push_str(&format!("socket={}\n", s.display())),
        None => text.push_str(&format!(
            "host={}\nport={}\nprotocol=tcp\n",
            spec.host, spec.port
        )),
    }
    crate::sandbox::write_private(f.path(), &text)?;
    Ok(f)
}

/// The dump command line (no secrets in it).
pub fn dump_command(spec_file: &Path, schemas: &[SchemaPair]) -> Result<Command> {
    let mut cmd = Command::new(tool(&["mariadb-dump", "mysqldump"])?);
    cmd.arg(format!("--defaults-extra-file={}", spec_file.display()))
        .args([
            "--single-transaction",
            "--master-data=2",
            "--routines",
            "--triggers",
            "--events",
            "--hex-blob",
            "--skip-lock-tables",
            "--databases",
        ])
        .args(schemas.iter().map(|p| p.from.as_str()));
    Ok(cmd)
}

/// Reads `-- CHANGE MASTER TO MASTER_LOG_FILE='f', MASTER_LOG_POS=n;` from a dump header.
pub fn parse_coordinates(line: &str) -> Option<BinlogPosition> {
    let rest = line.split("MASTER_LOG_FILE='").nth(1)?;
    let (file, rest) = rest.split_once('\'')?;
    let pos = rest.split("MASTER_LOG_POS=").nth(1)?;
    let pos: String = pos.chars().take_while(|c| c.is_ascii_digit()).collect();
    Some(BinlogPosition {
        file: file.to_string(),
        pos: pos.parse().ok()?,
    })
}

/// Dumps `pairs` from `source` into `target` (same schema names), or into `to_file`.
pub fn copy(
    source: &ConnectSpec,
    target: Option<&ConnectSpec>,
    to_file: Option<&Path>,
    pairs: &[SchemaPair],
) -> Result<CopyReport> {
    if pairs.iter().any(|p| p.from != p.to) {
        return Err(Error::Usage(
            "the dump method keeps schema names; use the native method to rename".into(),
        ));
    }
    let started = Instant::now();
    let src_cnf = option_file(source)?;
    let mut dump = dump_command(src_cnf.path(), pairs)?
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| Error::io("cannot start the dump tool", e))?;
    let tgt_cnf = target.map(option_file).transpose()?;
    let mut sink: Box<dyn Write> = match (target, to_file) {
        (Some(_), _) => {
            let mut client = Command::new(tool(&["mariadb", "mysql"])?);
            client
                .arg(format!(
                    "--defaults-extra-file={}",
                    tgt_cnf.as_ref().expect("option file").path().display()
                ))
                .arg(format!(
                    "--connect-timeout={}",
                    target
                        .map(|t| t.connect_timeout.as_secs().max(1))
                        .unwrap_or(5)
                ));
            let child = client
                .stdin(Stdio::piped())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .map_err(|e| Error::io("cannot start the client", e))?;
            Box::new(ClientSink { child })
        }
        (None, Some(path)) => Box::new(
            std::fs::File::create(path)
                .map_err(|e| Error::io(format!("cannot write {}", path.display()), e))?,
        ),
        (None, None) => return Err(Error::Usage("give a target node or a file".into())),
    };
    let mut coords = None;
    let mut reader = BufReader::new(dump.stdout.take().expect("piped stdout"));
    let mut line = Vec::new();
    let mut lines = 0u64;
    loop {
        line.clear();
        let n = reader
            .read_until(b'\n', &mut line)
            .map_err(|e| Error::io("reading the dump", e))?;
        if n == 0 {
            break;
        }
        lines += 1;
        if coords.is_none() && lines < 200 {
            if let Some(p) = parse_coordinates(&String::from_utf8_lossy(&line)) {
                coords = Some(p);
            }
        }
        sink.write_all(&line)
            .map_err(|e| Error::io("feeding the client", e))?;
    }
    drop(reader);
    let status = dump
        .wait()
        .map_err(|e| Error::io("waiting for the dump tool", e))?;
    let mut err = String::new();
    if let Some(mut e) = dump.stderr.take() {
        let _ = std::io::Read::read_to_string(&mut e, &mut err);
    }
    sink.flush()
        .map_err(|e| Error::io("finishing the load", e))?;
    drop(sink);
    if !status.success() {
        return Err(Error::server(
            "dump",
            format!(
                "the dump tool failed: {}",
                err.trim().lines().last().unwrap_or("")
            ),
        ));
    }
    let position = coords
        .ok_or_else(|| Error::server("dump", "the dump carries no binary-log coordinates"))?;
    Ok(CopyReport {
        coordinates: Some(Coordinates {
            position,
            gtid: String::new(),
        }),
        tables: 0,
        rows: 0,
        millis: started.elapsed().as_millis() as u64,
    })
}

/// The client process as a writer; closing it waits for the load and checks its status.
struct ClientSink {
    child: std::process::Child,
}

impl Write for ClientSink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.child.stdin.as_mut().expect("piped stdin").write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        drop(self.child.stdin.take());
        let out = self.child.wait_with_output_ref()?;
        if out.0.success() {
            Ok(())
        } else {
            Err(std::io::Error::other(format!(
                "the client failed: {}",
                out.1.trim()
            )))
        }
    }
}

trait WaitRef {
    fn wait_with_output_ref(&mut self) -> std::io::Result<(std::process::ExitStatus, String)>;
}

impl WaitRef for std::process::Child {
    fn wait_with_output_ref(&mut self) -> std::io::Result<(std::process::ExitStatus, String)> {
        let mut err = String::new();
        if let Some(mut e) = self.stderr.take() {
            std::io::Read::read_to_string(&mut e, &mut err)?;
        }
        Ok((self.wait()?, err))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coordinates_are_read_from_the_dump_header() {
        let p = parse_coordinates(
            "-- CHANGE MASTER TO MASTER_LOG_FILE='mysql-bin.000003', MASTER_LOG_POS=4711;",
        )
        .unwrap();
        assert_eq!(p.to_string(), "mysql-bin.000003:4711");
        assert!(parse_coordinates("-- nothing").is_none());
    }
}
