//! Certificates for a TLS sandbox: a CA of its own and one server certificate for
//! 127.0.0.1 and localhost, made with `openssl` once and kept in `DIR/tls`.

use super::process::run_with_timeout;
use crate::error::{Error, Result};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const OPENSSL_TIMEOUT: Duration = Duration::from_secs(60);

/// The files a TLS sandbox uses.
#[derive(Debug, Clone)]
pub(super) struct Files {
    /// The CA certificate clients verify servers with.
    pub ca: PathBuf,
    /// The servers' certificate.
    pub cert: PathBuf,
    /// Its private key.
    pub key: PathBuf,
}

/// Makes the CA and the server certificate in `dir/tls` unless they are there already.
pub(super) fn ensure_certificates(dir: &Path) -> Result<Files> {
    let tls = dir.join("tls");
    let files = Files {
        ca: tls.join("ca.pem"),
        cert: tls.join("server.pem"),
        key: tls.join("server-key.pem"),
    };
    if files.ca.is_file() && files.cert.is_file() && files.key.is_file() {
        return Ok(files);
    }
    std::fs::create_dir_all(&tls)
        .map_err(|e| Error::io(format!("cannot create {}", tls.display()), e))?;
    let ca_key = tls.join("ca-key.pem");
    let csr = tls.join("server.csr");
    let ext = tls.join("server.ext");
    std::fs::write(
        &ext,
        "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n",
    )
    .map_err(|e| Error::io(format!("cannot write {}", ext.display()), e))?;
    let openssl = |args: &[&str], what: &str| {
        let mut cmd = Command::new("openssl");
        cmd.args(args).current_dir(&tls);
        run_with_timeout(cmd, what, OPENSSL_TIMEOUT).map_err(|e| match e {
            Error::Io { .. } => Error::Config(format!(
                "{what}: cannot run openssl (install the Debian package openssl)"
            )),
            other => other,
        })
    };
    openssl(
        &[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "3650",
            "-subj",
            "/CN=shardctl sandbox CA",
            "-addext",
            "basicConstraints=critical,CA:TRUE",
            "-addext",
            "keyUsage=critical,keyCertSign,cRLSign",
            "-keyout",
            "ca-key.pem",
            "-out",
            "ca.pem",
        ],
        "making the sandbox CA",
    )?;
    openssl(
        &[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-subj",
            "/CN=127.0.0.1",
            "-keyout",
            "server-key.pem",
            "-out",
            "server.csr",
        ],
        "making the sandbox server key",
    )?;
    openssl(
        &[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca-key.pem",
            "-set_serial",
            "2",
            "-days",
            "3650",
            "-extfile",
            "server.ext",
            "-out",
            "server.pem",
        ],
        "signing the sandbox server certificate",
    )?;
    // The CA's key signs nothing else: it goes.
    let _ = std::fs::remove_file(&ca_key);
    let _ = std::fs::remove_file(&csr);
    let _ = std::fs::remove_file(&ext);
    Ok(files)
}
