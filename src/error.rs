//! The library's error type and the stable exit codes it maps to.

use std::fmt;

/// Process exit codes. They are part of the interface: scripts and CI depend on them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitCode {
    /// Everything went as asked.
    Ok = 0,
    /// An unexpected failure (a bug, or an I/O error outside any server).
    Internal = 1,
    /// The command line was wrong (clap also uses 2).
    Usage = 2,
    /// The inventory or another input file is unreadable or invalid.
    Config = 3,
    /// A server could not be reached, refused us, or failed a statement.
    Server = 4,
    /// shardctl refused to act because acting would be unsafe.
    Refused = 5,
    /// A wait ran out of time.
    Timeout = 6,
    /// A shard the operator made unavailable for what was asked (`shard
    /// set-availability`): nothing was sent to it.
    Unavailable = 7,
    /// Interrupted by a signal (Ctrl-C).
    Interrupted = 130,
}

impl ExitCode {
    /// Its name in JSON error reports (`usage`, `config`, `server`, ...).
    pub fn name(self) -> &'static str {
        match self {
            ExitCode::Ok => "ok",
            ExitCode::Internal => "internal",
            ExitCode::Usage => "usage",
            ExitCode::Config => "config",
            ExitCode::Server => "server",
            ExitCode::Refused => "refused",
            ExitCode::Timeout => "timeout",
            ExitCode::Unavailable => "unavailable",
            ExitCode::Interrupted => "interrupted",
        }
    }
}

/// Everything that can go wrong in the library. Messages are one line and name the culprit.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Bad arguments that clap could not catch (a node name that does not exist, ...).
    #[error("{0}")]
    Usage(String),
    /// An unreadable or invalid inventory, playbook or other input file.
    #[error("{0}")]
    Config(String),
    /// A failure talking to a node.
    #[error("node {node}: {message}")]
    Server {
        /// The inventory name (or address) of the node.
        node: String,
        /// What went wrong, secrets removed.
        message: String,
    },
    /// A server we cannot drive (flavor or version).
    #[error("node {node}: unsupported server {version}: {why}")]
    Unsupported {
        /// The inventory name of the node.
        node: String,
        /// The version string the server reported.
        version: String,
        /// Why it is not supported.
        why: String,
    },
    /// A refusal on safety grounds.
    #[error("refused: {0}")]
    Refused(String),
    /// A wait that ran out of time.
    #[error("timeout: {0}")]
    Timeout(String),
    /// The operator made a shard unavailable for what was asked (`shardctl shard
    /// set-availability`): a router refuses before sending anything. The shard's
    /// availability is in the router's snapshot; `detail` says it in words.
    #[error("shard {shard} is unavailable: {detail}")]
    Unavailable {
        /// The shard.
        shard: u32,
        /// What the operator set and what it refused (`marked no-writes by the operator,
        /// writes refused`).
        detail: String,
    },
    /// Stopped by a signal, or by an operator's `shardctl stop`.
    #[error("interrupted")]
    Interrupted,
    /// Another process took the operation over: this one must not touch anything more.
    #[error("lease lost: {0}")]
    LeaseLost(String),
    /// A broken invariant: shardctl found a state it never writes (a bug, or a journal
    /// edited by hand).
    #[error("internal error: {0}")]
    Internal(String),
    /// Stopped by a signal at a safe point, with what to do next (the operation, how to
    /// resume or roll it back).
    #[error("interrupted: {0}")]
    InterruptedAt(String),
    /// A failure on a node's host (over ssh or on this machine): a command that failed, a
    /// session that broke. The message names the node and how it was reached.
    #[error("{0}")]
    Remote(String),
    /// No member of the directory's Galera cluster could be used: none answered, or none
    /// that answered is in the Primary component and Synced (a minority partition, a
    /// majority lost, every member a donor). Nothing was written.
    #[error("directory cluster {cluster}: {message}")]
    DirectoryUnavailable {
        /// The cluster's name.
        cluster: String,
        /// Some member answered (so shardctl refuses rather than cannot reach it).
        answered: bool,
        /// Every member and why it could not be used.
        message: String,
    },
    /// A local I/O failure, with what we were doing.
    #[error("{context}: {source}")]
    Io {
        /// What we were doing.
        context: String,
        /// The underlying error.
        source: std::io::Error,
    },
}

impl Error {
    /// A server's "deadlock found" (1213): the statement was rolled back whole and may be
    /// sent again.
    pub fn is_deadlock(&self) -> bool {
        matches!(self, Error::Server { message, .. } if message.starts_with("error 1213 ("))
    }

    /// A server's "lock wait timeout exceeded" (1205): the statement gave up waiting for a
    /// lock and may be tried again.
    pub fn is_lock_wait_timeout(&self) -> bool {
        matches!(self, Error::Server { message, .. } if message.starts_with("error 1205 ("))
    }

    /// The server's error number of a failed statement (`error 1213 (40001): ...`).
    pub fn server_code(&self) -> Option<u16> {
        match self {
            Error::Server { message, .. } => message
                .strip_prefix("error ")?
                .split_once(' ')?
                .0
                .parse()
                .ok(),
            _ => None,
        }
    }

    /// The exit code this error maps to.
    pub fn exit_code(&self) -> ExitCode {
        match self {
            Error::Usage(_) => ExitCode::Usage,
            Error::Config(_) => ExitCode::Config,
            Error::Server { .. } | Error::Unsupported { .. } | Error::Remote(_) => ExitCode::Server,
            Error::Refused(_) | Error::LeaseLost(_) => ExitCode::Refused,
            Error::Internal(_) => ExitCode::Internal,
            Error::Timeout(_) => ExitCode::Timeout,
            Error::Unavailable { .. } => ExitCode::Unavailable,
            Error::Interrupted | Error::InterruptedAt(_) => ExitCode::Interrupted,
            Error::Io { .. } => ExitCode::Internal,
            Error::DirectoryUnavailable { answered: true, .. } => ExitCode::Refused,
            Error::DirectoryUnavailable {
                answered: false, ..
            } => ExitCode::Server,
        }
    }

    /// A server error for `node`.
    pub fn server(node: impl fmt::Display, message: impl fmt::Display) -> Self {
        Error::Server {
            node: node.to_string(),
            message: message.to_string(),
        }
    }

    /// A local I/O error with context.
    pub fn io(context: impl fmt::Display, source: std::io::Error) -> Self {
        Error::Io {
            context: context.to_string(),
            source,
        }
    }
}

/// The library's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
