//! Identifiers and literals: the only way a name reaches SQL text.
//!
//! Names of schemas, tables, columns and channels are validated against a plain-identifier
//! grammar and back-quoted. Values travel as bound parameters; the few statements whose
//! grammar takes no placeholders (CHANGE MASTER, channel names in MariaDB) get escaped
//! literals built here, from values that were validated first.

use crate::error::{Error, Result};
use std::fmt;

/// The longest identifier MySQL and MariaDB accept for schemas, tables and columns.
pub const MAX_IDENT_LEN: usize = 64;

/// A validated plain identifier: ASCII letters, digits, `_` and `$`, 1 to 64 characters,
/// not made of digits only.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(transparent)]
pub struct Ident(String);

impl Ident {
    /// Validates `name`; `what` names the kind of thing in the error ("schema", "column", ...).
    pub fn new(what: &str, name: &str) -> Result<Self> {
        let ok_chars = name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$');
        if name.is_empty()
            || name.len() > MAX_IDENT_LEN
            || !ok_chars
            || name.chars().all(|c| c.is_ascii_digit())
        {
            return Err(Error::Usage(format!(
                "invalid {what} name {name:?}: use 1 to {MAX_IDENT_LEN} ASCII letters, digits, '_' or '$'"
            )));
        }
        Ok(Ident(name.to_string()))
    }

    /// The bare name.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The back-quoted form for SQL text.
    pub fn quoted(&self) -> String {
        format!("`{}`", self.0)
    }
}

impl fmt::Display for Ident {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A replication channel (MySQL) or named connection (MariaDB): ASCII letters, digits and
/// `_`, 1 to 64 characters.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(transparent)]
pub struct Channel(String);

impl Channel {
    /// Validates a channel name.
    pub fn new(name: &str) -> Result<Self> {
        let ok = !name.is_empty()
            && name.len() <= 64
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !ok {
            return Err(Error::Usage(format!(
                "invalid channel name {name:?}: use 1 to 64 ASCII letters, digits or '_'"
            )));
        }
        Ok(Channel(name.to_string()))
    }

    /// The bare name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Channel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Quotes `value` as an SQL string literal. Only for statements whose grammar takes no
/// placeholder; the session must not run with NO_BACKSLASH_ESCAPES (the server layer
/// clears it on connect).
pub fn string_literal(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    out.push('\'');
    for c in value.chars() {
        match c {
            '\'' => out.push_str("''"),
            '\\' => out.push_str("\\\\"),
            '\0' => out.push_str("\\0"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\u{1a}' => out.push_str("\\Z"),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// Checks a host name or address for use in CHANGE MASTER: letters, digits, `.`, `-`, `_`, `:`.
pub fn check_host(host: &str) -> Result<()> {
    let ok = !host.is_empty()
        && host.len() <= 255
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | ':'));
    if ok {
        Ok(())
    } else {
        Err(Error::Usage(format!("invalid host name {host:?}")))
    }
}

/// Checks a binary log file name: letters, digits, `.`, `-`, `_`, no path.
pub fn check_binlog_file(file: &str) -> Result<()> {
    let ok = !file.is_empty()
        && file.len() <= 255
        && file
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'));
    if ok {
        Ok(())
    } else {
        Err(Error::Usage(format!(
            "invalid binary log file name {file:?}"
        )))
    }
}

/// Checks a GTID set (MySQL `uuid:1-5,...` or MariaDB `0-1-100,...`).
pub fn check_gtid_set(gtids: &str) -> Result<()> {
    let ok = gtids
        .chars()
        .all(|c| c.is_ascii_hexdigit() || matches!(c, '-' | ':' | ',' | ' ' | '\n'));
    if ok {
        Ok(())
    } else {
        Err(Error::Usage(format!("invalid GTID set {gtids:?}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_identifiers_pass_and_are_quoted() {
        assert_eq!(
            Ident::new("schema", "employees_1").unwrap().quoted(),
            "`employees_1`"
        );
        assert_eq!(Ident::new("table", "t$1").unwrap().as_str(), "t$1");
    }

    #[test]
    fn anything_else_is_refused() {
        for bad in [
            "",
            "a`b",
            "a b",
            "a;drop",
            "123",
            "é",
            &"x".repeat(65),
            "a.b",
            "a-b",
        ] {
            let err = Ident::new("schema", bad).unwrap_err().to_string();
            assert!(err.contains("invalid schema name"), "{bad}: {err}");
        }
    }

    #[test]
    fn channels_are_plain() {
        assert!(Channel::new("shardctl_move_7").is_ok());
        assert!(Channel::new("a'b").is_err());
        assert!(Channel::new("").is_err());
    }

    #[test]
    fn literals_escape_quotes_and_backslashes() {
        assert_eq!(string_literal("it's"), "'it''s'");
        assert_eq!(string_literal("a\\b"), "'a\\\\b'");
        assert_eq!(string_literal("a\0b\n"), "'a\\0b\\n'");
    }

    #[test]
    fn hosts_files_and_gtids_are_checked() {
        assert!(check_host("127.0.0.1").is_ok());
        assert!(check_host("db-1.example.org").is_ok());
        assert!(check_host("h' OR 1").is_err());
        assert!(check_binlog_file("mysql-bin.000003").is_ok());
        assert!(check_binlog_file("../etc/passwd").is_err());
        assert!(check_gtid_set("0-1-100,1-2-5").is_ok());
        assert!(check_gtid_set("3E11FA47-71CA-11E1-9E33-C80AA9429562:1-5").is_ok());
        assert!(check_gtid_set("1'; DROP").is_err());
    }
}
