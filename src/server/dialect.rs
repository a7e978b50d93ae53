//! The SQL each flavor needs, as statements with bound parameters. Pure: no I/O, so dry
//! runs print exactly what a real run sends, and golden tests pin it per flavor.

use super::flavor::Flavor;
use super::statements;
use crate::config::ChannelTls;
use crate::error::{Error, Result};
use crate::ident::{check_binlog_file, check_gtid_set, check_host, string_literal, Channel, Ident};
use mysql::Value;
use std::fmt;

/// One statement: text with `?` placeholders, its bound values, and a redacted text for
/// display when the text itself carries a secret.
#[derive(Debug, Clone, PartialEq)]
pub struct Stmt {
    /// The text sent to the server.
    pub sql: String,
    /// Values bound to the placeholders, in order.
    pub params: Vec<Value>,
    /// The text shown to people and logs when `sql` holds a secret literal.
    pub redacted: Option<String>,
}

impl Stmt {
    /// A statement without parameters.
    pub fn text(sql: impl Into<String>) -> Self {
        Stmt {
            sql: sql.into(),
            params: Vec::new(),
            redacted: None,
        }
    }

    /// A statement with bound parameters.
    pub fn with(sql: impl Into<String>, params: Vec<Value>) -> Self {
        Stmt {
            sql: sql.into(),
            params,
            redacted: None,
        }
    }
}

impl fmt::Display for Stmt {
    /// The form safe to show: secrets masked, bound values listed after the text.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.redacted.as_deref().unwrap_or(&self.sql))?;
        if !self.params.is_empty() {
            let shown: Vec<String> = self.params.iter().map(|v| v.as_sql(false)).collect();
            write!(f, "  -- bind: {}", shown.join(", "))?;
        }
        Ok(())
    }
}

/// A position in a binary log. Ordered by the file's numeric extension, then the offset
/// (`mysql-bin.999999` comes before `mysql-bin.1000000`): see `server::replication`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct BinlogPosition {
    /// The binary log file name.
    pub file: String,
    /// The byte offset in it.
    pub pos: u64,
}

impl fmt::Display for BinlogPosition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file, self.pos)
    }
}

impl std::str::FromStr for BinlogPosition {
    type Err = Error;
    /// Reads `FILE:POS`.
    fn from_str(s: &str) -> Result<Self> {
        let (file, pos) = s
            .rsplit_once(':')
            .ok_or_else(|| Error::Usage(format!("invalid position {s:?}: expected FILE:POS")))?;
        check_binlog_file(file)?;
        let pos = pos
            .parse()
            .map_err(|_| Error::Usage(format!("invalid position {s:?}: POS is not a number")))?;
        Ok(BinlogPosition {
            file: file.to_string(),
            pos,
        })
    }
}

/// Where a new channel starts reading.
#[derive(Debug, Clone, PartialEq)]
pub enum StartAt {
    /// A binary log file and offset.
    Position(BinlogPosition),
    /// GTID auto-positioning (MySQL): the replica's gtid_executed must already hold the set
    /// the copy corresponds to.
    GtidAutoPosition,
}

/// Everything CHANGE MASTER / CHANGE REPLICATION SOURCE needs.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceSpec {
    /// Host the replica connects to.
    pub host: String,
    /// Its port.
    pub port: u16,
    /// The replication account.
    pub user: String,
    /// Its password.
    pub password: String,
    /// Where to start.
    pub start: StartAt,
    /// Seconds between reconnection attempts.
    pub connect_retry_secs: u32,
    /// TLS, when the source's inventory enables it: the channel then encrypts and verifies
    /// the source's certificate.
    pub tls: Option<ChannelTls>,
}

/// Per-channel replication filters.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Filters {
    /// replicate-do-db.
    pub do_db: Vec<Ident>,
    /// replicate-wild-do-table, one `schema.%` pattern per schema (the safe form for
    /// cross-database statements).
    pub wild_do_schemas: Vec<Ident>,
    /// replicate-rewrite-db pairs (from, to).
    pub rewrite_db: Vec<(Ident, Ident)>,
    /// replicate-wild-do-table, one `schema.table` pattern per table (a merge's channel:
    /// the survivor's sharded tables, not its global ones).
    pub wild_do_tables: Vec<(Ident, Ident)>,
}

impl Filters {
    /// True when no filter is set.
    pub fn is_empty(&self) -> bool {
        self.do_db.is_empty()
            && self.wild_do_schemas.is_empty()
            && self.rewrite_db.is_empty()
            && self.wild_do_tables.is_empty()
    }
}

/// A replication wild pattern matching every table of `schema`, with `_` escaped (it is a
/// one-character wildcard in these patterns).
pub fn wild_pattern(schema: &Ident) -> String {
    format!("{}.%", schema.as_str().replace('_', "\\_"))
}

/// A replication wild pattern matching exactly `schema.table` (`_` and `%` escaped).
pub fn wild_table_pattern(schema: &Ident, table: &Ident) -> String {
    let esc = |s: &str| s.replace('_', "\\_").replace('%', "\\%");
    format!("{}.{}", esc(schema.as_str()), esc(table.as_str()))
}

/// The SQL dialect of one flavor.
#[derive(Debug, Clone, Copy)]
pub struct Dialect {
    flavor: Flavor,
}

impl Dialect {
    /// The dialect for `flavor`.
    pub fn new(flavor: Flavor) -> Self {
        Dialect { flavor }
    }

    /// The flavor this dialect speaks.
    pub fn flavor(&self) -> Flavor {
        self.flavor
    }

    fn unsupported(&self, what: &str) -> Error {
        Error::Usage(format!("{} does not support {what}", self.flavor))
    }

    /// Server identity and binary-log settings: version, server_id, log_bin, binlog_format,
    /// read_only and super_read_only (0 where the flavor has none).
    pub fn server_settings(&self) -> Stmt {
        let super_ro = if self.flavor.has_super_read_only() {
            "@@GLOBAL.super_read_only"
        } else {
            "0"
        };
        let gtid = if self.flavor.is_mariadb() {
            "@@GLOBAL.gtid_domain_id, @@GLOBAL.gtid_strict_mode, @@GLOBAL.log_slave_updates"
        } else {
            "NULL, 0, 0"
        };
        Stmt::text(format!(
            "SELECT @@GLOBAL.version, @@GLOBAL.server_id, @@GLOBAL.log_bin, @@GLOBAL.binlog_format, @@GLOBAL.read_only, {super_ro}, {gtid}"
        ))
    }

    /// What tells this server from another one behind the same address: `@@server_id`
    /// (a primary and its replicas must differ in it), on MySQL `@@server_uuid` (MariaDB
    /// has none: NULL), and the GTIDs its binary log holds per stream (MariaDB's
    /// `gtid_binlog_state`, the last GTID of each domain and server; MySQL's
    /// `gtid_executed`).
    pub fn server_identity(&self) -> Stmt {
        if self.flavor.is_mariadb() {
            Stmt::text("SELECT @@GLOBAL.server_id, NULL, @@GLOBAL.gtid_binlog_state")
        } else {
            Stmt::text("SELECT @@GLOBAL.server_id, @@GLOBAL.server_uuid, @@GLOBAL.gtid_executed")
        }
    }

    /// The current binary-log coordinates (File, Position columns).
    pub fn binlog_coordinates(&self) -> Stmt {
        if self.flavor.uses_binary_log_status() {
            Stmt::text("SHOW BINARY LOG STATUS")
        } else {
            Stmt::text("SHOW MASTER STATUS")
        }
    }

    /// The GTID state of the binary log (MariaDB gtid_binlog_pos, MySQL gtid_executed).
    pub fn gtid_state(&self) -> Stmt {
        if self.flavor.is_mariadb() {
            Stmt::text("SELECT @@GLOBAL.gtid_binlog_pos")
        } else {
            Stmt::text("SELECT @@GLOBAL.gtid_executed")
        }
    }

    /// CHANGE MASTER / CHANGE REPLICATION SOURCE for a named channel. Its grammar takes no
    /// placeholders, so values are checked and escaped; the password is masked for display.
    pub fn change_source(&self, channel: &Channel, spec: &SourceSpec) -> Result<Stmt> {
        check_host(&spec.host)?;
        let new_names = self.flavor.uses_change_replication_source();
        let k = |name: &str| {
            if new_names {
                format!("SOURCE_{name}")
            } else {
                format!("MASTER_{name}")
            }
        };
        let mut opts = vec![
            format!("{} = {}", k("HOST"), string_literal(&spec.host)),
            format!("{} = {}", k("PORT"), spec.port),
            format!("{} = {}", k("USER"), string_literal(&spec.user)),
            format!("{} = {}", k("PASSWORD"), "\u{0}PASSWORD\u{0}"),
            format!("{} = {}", k("CONNECT_RETRY"), spec.connect_retry_secs),
        ];
        match &spec.start {
            StartAt::Position(p) => {
                check_binlog_file(&p.file)?;
                opts.push(format!("{} = {}", k("LOG_FILE"), string_literal(&p.file)));
                opts.push(format!("{} = {}", k("LOG_POS"), p.pos));
                if self.flavor.is_mariadb() {
                    opts.push("MASTER_USE_GTID = no".to_string());
                } else {
                    opts.push(format!("{} = 0", k("AUTO_POSITION")));
                }
            }
            StartAt::GtidAutoPosition => {
                if self.flavor.is_mariadb() {
                    return Err(Error::Usage(
                        "on MariaDB start a channel at FILE:POS: a GTID start would change the server-wide gtid_slave_pos"
                            .to_string(),
                    ));
                }
                opts.push(format!("{} = 1", k("AUTO_POSITION")));
            }
        }
        if let Some(tls) = &spec.tls {
            opts.push(format!("{} = 1", k("SSL")));
            opts.push(format!(
                "{} = {}",
                k("SSL_CA"),
                string_literal(&tls.ca_file)
            ));
            if let Some((cert, key)) = &tls.cert_and_key {
                opts.push(format!("{} = {}", k("SSL_CERT"), string_literal(cert)));
                opts.push(format!("{} = {}", k("SSL_KEY"), string_literal(key)));
            }
            opts.push(format!("{} = 1", k("SSL_VERIFY_SERVER_CERT")));
        }
        // Never GET_SOURCE_PUBLIC_KEY / GET_MASTER_PUBLIC_KEY: over a plain connection it
        // trusts whatever RSA key the other end sends (a man in the middle learns the
        // password); over TLS it is not needed. MySQL 8 sources whose replication account
        // uses caching_sha2_password therefore need TLS in the inventory.
        let body = opts.join(", ");
        let template = if self.flavor.is_mariadb() {
            format!(
                "CHANGE MASTER {} TO {body}",
                string_literal(channel.as_str())
            )
        } else if new_names {
            format!(
                "CHANGE REPLICATION SOURCE TO {body} FOR CHANNEL {}",
                string_literal(channel.as_str())
            )
        } else {
            format!(
                "CHANGE MASTER TO {body} FOR CHANNEL {}",
                string_literal(channel.as_str())
            )
        };
        Ok(Stmt {
            sql: template.replace("\u{0}PASSWORD\u{0}", &string_literal(&spec.password)),
            params: Vec::new(),
            redacted: Some(template.replace("\u{0}PASSWORD\u{0}", "'***'")),
        })
    }

    fn channel_verb(&self, verb: &str, channel: &Channel, suffix: &str) -> Stmt {
        let ch = string_literal(channel.as_str());
        let sql = if self.flavor.is_mariadb() {
            format!("{verb} SLAVE {ch}{suffix}")
        } else if self.flavor.uses_replica_keyword() {
            format!("{verb} REPLICA{suffix} FOR CHANNEL {ch}")
        } else {
            format!("{verb} SLAVE{suffix} FOR CHANNEL {ch}")
        };
        Stmt::text(sql)
    }

    /// Starts both threads of one channel.
    pub fn start_channel(&self, channel: &Channel) -> Stmt {
        self.channel_verb("START", channel, "")
    }

    /// Stops both threads of one channel.
    pub fn stop_channel(&self, channel: &Channel) -> Stmt {
        self.channel_verb("STOP", channel, "")
    }

    /// Stops only the applier (SQL thread) of one channel; the receiver keeps reading.
    pub fn stop_applier(&self, channel: &Channel) -> Stmt {
        self.channel_verb("STOP", channel, " SQL_THREAD")
    }

    /// Starts only the receiver (IO thread) of one channel: it reads the source's binary
    /// log into the relay log and applies nothing.
    pub fn start_receiver(&self, channel: &Channel) -> Stmt {
        self.channel_verb("START", channel, " IO_THREAD")
    }

    /// At most `limit` events of the source's binary log `from.file`, from the event at
    /// `from.pos` on (`Log_name`, `Pos`, `Event_type`, `Server_id`, `End_log_pos`,
    /// `Info`): what a merge's gate reads before its channel's applier may go there.
    pub fn show_binlog_events(&self, from: &BinlogPosition, limit: u32) -> Result<Stmt> {
        check_binlog_file(&from.file)?;
        Ok(Stmt::text(format!(
            "SHOW BINLOG EVENTS IN {} FROM {} LIMIT {limit}",
            string_literal(&from.file),
            from.pos
        )))
    }

    /// Starts the applier of one channel so that it applies the source's events up to
    /// `pos` and no further: it stops before the first event past it (and, when nothing
    /// follows, stays exactly there).
    pub fn start_applier_until(&self, channel: &Channel, pos: &BinlogPosition) -> Result<Stmt> {
        check_binlog_file(&pos.file)?;
        let prefix = if self.flavor.uses_change_replication_source() {
            "SOURCE"
        } else {
            "MASTER"
        };
        Ok(self.channel_verb(
            "START",
            channel,
            &format!(
                " SQL_THREAD UNTIL {prefix}_LOG_FILE = {}, {prefix}_LOG_POS = {}",
                string_literal(&pos.file),
                pos.pos
            ),
        ))
    }

    /// Installs (or replaces) the guard trigger of `table` for `event`: see
    /// [`statements::guard_trigger`]. MySQL has no `CREATE OR REPLACE TRIGGER`: the old
    /// one is dropped first.
    #[allow(clippy::too_many_arguments)]
    pub fn install_guard(
        &self,
        schema: &Ident,
        table: &Ident,
        current: &Ident,
        event: statements::GuardEvent,
        column: &Ident,
        not_owned: &statements::Condition,
        shard: u32,
    ) -> Vec<Stmt> {
        let create = |replace| {
            statements::guard_trigger(
                schema, table, current, event, column, not_owned, shard, replace,
            )
        };
        if self.flavor.is_mariadb() {
            vec![create(true)]
        } else {
            vec![
                statements::drop_trigger_if_exists(
                    schema,
                    &statements::guard_trigger_name(table, event),
                ),
                create(false),
            ]
        }
    }

    /// Installs (or replaces) the switched guard of `table` for `event`, ahead of
    /// `precedes` (the trigger that fires first for them now, if any): see
    /// [`statements::switched_guard_trigger`]; on MySQL the old one is dropped first.
    #[allow(clippy::too_many_arguments)]
    pub fn install_switched_guard(
        &self,
        schema: &Ident,
        table: &Ident,
        event: statements::GuardEvent,
        column: Option<&Ident>,
        keys: &statements::Condition,
        switch: u64,
        message: &str,
        precedes: Option<&Ident>,
    ) -> Vec<Stmt> {
        let create = |replace| {
            statements::switched_guard_trigger(
                schema, table, event, column, keys, switch, message, replace, precedes,
            )
        };
        if self.flavor.is_mariadb() {
            vec![create(true)]
        } else {
            vec![
                statements::drop_trigger_if_exists(
                    schema,
                    &statements::switched_guard_name(table, event),
                ),
                create(false),
            ]
        }
    }

    /// Removes one channel entirely (RESET ... ALL), leaving the others alone.
    pub fn reset_channel(&self, channel: &Channel) -> Stmt {
        self.channel_verb("RESET", channel, " ALL")
    }

    /// The replica status of one channel.
    pub fn channel_status(&self, channel: &Channel) -> Stmt {
        let ch = string_literal(channel.as_str());
        if self.flavor.is_mariadb() {
            Stmt::text(format!("SHOW SLAVE {ch} STATUS"))
        } else if self.flavor.uses_replica_keyword() {
            Stmt::text(format!("SHOW REPLICA STATUS FOR CHANNEL {ch}"))
        } else {
            Stmt::text(format!("SHOW SLAVE STATUS FOR CHANNEL {ch}"))
        }
    }

    /// The replica status of every channel on the node.
    pub fn all_channels_status(&self) -> Stmt {
        if self.flavor.is_mariadb() {
            Stmt::text("SHOW ALL SLAVES STATUS")
        } else if self.flavor.uses_replica_keyword() {
            Stmt::text("SHOW REPLICA STATUS")
        } else {
            Stmt::text("SHOW SLAVE STATUS")
        }
    }

    /// Waits up to `timeout_secs` for the channel to apply up to `pos`. Returns NULL when the
    /// channel's SQL thread is not running, -1 on timeout, else the events waited for.
    pub fn wait_for_position(
        &self,
        channel: &Channel,
        pos: &BinlogPosition,
        timeout_secs: u32,
    ) -> Result<Stmt> {
        check_binlog_file(&pos.file)?;
        let func = if self.flavor.uses_source_pos_wait() {
            "SOURCE_POS_WAIT"
        } else {
            "MASTER_POS_WAIT"
        };
        Ok(Stmt::with(
            format!("SELECT {func}(?, ?, ?, ?)"),
            vec![
                Value::from(pos.file.as_str()),
                Value::from(pos.pos),
                Value::from(timeout_secs),
                Value::from(channel.as_str()),
            ],
        ))
    }

    /// Waits up to `timeout_secs` for a GTID set to be applied. Returns 0 when done;
    /// MariaDB returns -1 and MySQL 1 on timeout.
    pub fn wait_for_gtid(&self, gtids: &str, timeout_secs: u32) -> Result<Stmt> {
        check_gtid_set(gtids)?;
        let func = if self.flavor.is_mariadb() {
            "MASTER_GTID_WAIT"
        } else {
            "WAIT_FOR_EXECUTED_GTID_SET"
        };
        Ok(Stmt::with(
            format!("SELECT {func}(?, ?)"),
            vec![Value::from(gtids), Value::from(timeout_secs)],
        ))
    }

    /// Sets the channel's filters, replacing what it had. The channel must be stopped.
    /// Empty lists clear that filter.
    pub fn set_filters(&self, channel: &Channel, filters: &Filters) -> Result<Vec<Stmt>> {
        if !self.flavor.has_channel_filters() {
            return Err(self.unsupported("per-channel replication filters"));
        }
        if !filters.rewrite_db.is_empty() && !self.flavor.has_dynamic_rewrite_db() {
            return Err(self.unsupported("replicate_rewrite_db without a restart"));
        }
        let do_db: Vec<&str> = filters.do_db.iter().map(Ident::as_str).collect();
        let wild: Vec<String> = filters
            .wild_do_schemas
            .iter()
            .map(wild_pattern)
            .chain(
                filters
                    .wild_do_tables
                    .iter()
                    .map(|(s, t)| wild_table_pattern(s, t)),
            )
            .collect();
        let rewrite: Vec<String> = filters
            .rewrite_db
            .iter()
            .map(|(from, to)| format!("{from}->{to}"))
            .collect();
        if self.flavor.is_mariadb() {
            let ch = format!("`{}`", channel.as_str());
            let mut out = vec![
                Stmt::with(
                    format!("SET GLOBAL {ch}.replicate_do_db = ?"),
                    vec![Value::from(do_db.join(","))],
                ),
                Stmt::with(
                    format!("SET GLOBAL {ch}.replicate_wild_do_table = ?"),
                    vec![Value::from(wild.join(","))],
                ),
            ];
            if self.flavor.has_dynamic_rewrite_db() {
                out.push(Stmt::with(
                    format!("SET GLOBAL {ch}.replicate_rewrite_db = ?"),
                    vec![Value::from(rewrite.join(","))],
                ));
            }
            Ok(out)
        } else {
            let do_db: Vec<String> = filters.do_db.iter().map(Ident::quoted).collect();
            let wild: Vec<String> = wild.iter().map(|p| string_literal(p)).collect();
            let rewrite: Vec<String> = filters
                .rewrite_db
                .iter()
                .map(|(from, to)| format!("({}, {})", from.quoted(), to.quoted()))
                .collect();
            Ok(vec![Stmt::text(format!(
                "CHANGE REPLICATION FILTER REPLICATE_DO_DB = ({}), REPLICATE_WILD_DO_TABLE = ({}), REPLICATE_REWRITE_DB = ({}) FOR CHANNEL {}",
                do_db.join(", "),
                wild.join(", "),
                rewrite.join(", "),
                string_literal(channel.as_str())
            ))])
        }
    }

    /// The option-file lines that give `channel` the same `filters` across a restart (the
    /// chapter's restart path), for the server's `[mysqld]` group: MariaDB's per-connection
    /// form `<connection>.replicate_wild_do_table = ...` (one pattern a line, as the
    /// server accumulates them), MySQL's `replicate-wild-do-table = <channel>:<pattern>`.
    /// Values are quoted and their backslashes doubled, as the server's option reader
    /// takes them back.
    pub fn persisted_filter_lines(
        &self,
        channel: &Channel,
        filters: &Filters,
    ) -> Result<Vec<String>> {
        if !self.flavor.has_channel_filters() {
            return Err(self.unsupported("per-channel replication filters"));
        }
        let value = |v: &str| format!("\"{}\"", v.replace('\\', "\\\\").replace('"', "\\\""));
        let mut lines = Vec::new();
        let ch = channel.as_str();
        let mut push = |option: &str, v: String| {
            if self.flavor.is_mariadb() {
                lines.push(format!("{ch}.{option}={}", value(&v)));
            } else {
                lines.push(format!(
                    "{}={}",
                    option.replace('_', "-"),
                    value(&format!("{ch}:{v}"))
                ));
            }
        };
        for d in &filters.do_db {
            push("replicate_do_db", d.as_str().to_string());
        }
        for w in &filters.wild_do_schemas {
            push("replicate_wild_do_table", wild_pattern(w));
        }
        for (from, to) in &filters.rewrite_db {
            push("replicate_rewrite_db", format!("{from}->{to}"));
        }
        Ok(lines)
    }

    /// Makes the whole server read-only (or writable again), with a bounded wait: first
    /// `SET SESSION lock_wait_timeout = N` (at least 1). Turning read_only on takes the
    /// global read lock, which waits for running write transactions and table locks; with
    /// the bound a long transaction makes it fail (error 1205) after N seconds instead of
    /// waiting for as long as the server's default (a year). On MySQL super_read_only also
    /// stops accounts with SUPER.
    pub fn set_read_only(&self, on: bool, lock_wait_secs: u64) -> Vec<Stmt> {
        let mut out = vec![statements::lock_wait_timeout(lock_wait_secs)];
        let v = if on { "ON" } else { "OFF" };
        if self.flavor.has_super_read_only() {
            if on {
                out.push(Stmt::text("SET GLOBAL super_read_only = ON"));
            } else {
                out.push(Stmt::text("SET GLOBAL super_read_only = OFF"));
                out.push(Stmt::text("SET GLOBAL read_only = OFF"));
            }
        } else {
            out.push(Stmt::text(format!("SET GLOBAL read_only = {v}")));
        }
        out
    }

    /// Around DDL the fence's own account must run while the read-only fence stands (the
    /// old copy's drop after the flip): MySQL's `super_read_only` refuses even that account,
    /// so it is lowered to plain `read_only` (which still stops ordinary accounts) and raised
    /// again after, each side bounded by `lock_wait_timeout` like the fence itself. Empty
    /// where the flavor has no `super_read_only`.
    pub fn super_read_only_bracket(&self, lock_wait_secs: u64) -> (Vec<Stmt>, Vec<Stmt>) {
        if self.flavor.has_super_read_only() {
            (
                vec![
                    statements::lock_wait_timeout(lock_wait_secs),
                    Stmt::text("SET GLOBAL super_read_only = OFF"),
                ],
                vec![
                    statements::lock_wait_timeout(lock_wait_secs),
                    Stmt::text("SET GLOBAL super_read_only = ON"),
                ],
            )
        } else {
            (Vec::new(), Vec::new())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::flavor::Vendor;

    #[test]
    fn positions_parse_and_print() {
        let p: BinlogPosition = "mysql-bin.000003:1234".parse().unwrap();
        assert_eq!(p.file, "mysql-bin.000003");
        assert_eq!(p.pos, 1234);
        assert_eq!(p.to_string(), "mysql-bin.000003:1234");
        assert!("nocolon".parse::<BinlogPosition>().is_err());
        assert!("f:x".parse::<BinlogPosition>().is_err());
        assert!("../x:4".parse::<BinlogPosition>().is_err());
    }

    #[test]
    fn underscores_are_escaped_in_wild_patterns() {
        let s = Ident::new("schema", "employees_1").unwrap();
        assert_eq!(wild_pattern(&s), "employees\\_1.%");
    }

    #[test]
    fn passwords_never_show() {
        let d = Dialect::new(Flavor::new(Vendor::MariaDb, 10, 11, 6));
        let spec = SourceSpec {
            host: "127.0.0.1".into(),
            port: 3306,
            user: "repl".into(),
            password: "s3cr'et".into(),
            start: StartAt::Position("b.000001:4".parse().unwrap()),
            connect_retry_secs: 5,
            tls: None,
        };
        let st = d.change_source(&Channel::new("c").unwrap(), &spec).unwrap();
        assert!(st.sql.contains("'s3cr''et'"));
        assert!(!st.to_string().contains("s3cr"));
        assert!(st.to_string().contains("'***'"));
    }

    #[test]
    fn hostile_hosts_are_refused() {
        let d = Dialect::new(Flavor::new(Vendor::MySql, 8, 0, 36));
        let spec = SourceSpec {
            host: "h', SOURCE_USER='root".into(),
            port: 3306,
            user: "repl".into(),
            password: "x".into(),
            start: StartAt::GtidAutoPosition,
            connect_retry_secs: 5,
            tls: None,
        };
        assert!(d.change_source(&Channel::new("c").unwrap(), &spec).is_err());
    }
}
