//! Reading a source's binary log ahead of a channel's applier: which statements a merge's
//! channel would replay onto the survivor. The channel rewrites the retired schema's name
//! to the survivor's, so a statement run in the retired schema (`USE shop_4; TRUNCATE
//! orders`, a `RENAME`, an `ALTER`, an event's statement) would be applied to the
//! survivor's own tables. Row events carry keys and are harmless; every other event that
//! names a retired schema is not.
//!
//! A scan starts at a transaction-group boundary and returns the furthest boundary up to
//! which every event was read and found harmless — a position the applier may be let run
//! to (`START ... SQL_THREAD UNTIL` there stops before the next group) — and the first
//! statement it stopped at, if any.

use super::dialect::BinlogPosition;
use super::{col_string, col_u64, Server};
use crate::error::{Error, Result};
use crate::ident::Ident;

/// Events read per `SHOW BINLOG EVENTS`.
pub const SCAN_PAGE: u32 = 2000;

/// One event of `SHOW BINLOG EVENTS`.
#[derive(Debug, Clone, PartialEq)]
pub struct BinlogEvent {
    /// Where it starts.
    pub at: BinlogPosition,
    /// Where the next event starts (`End_log_pos`).
    pub end: u64,
    /// `Event_type`: `Gtid`, `Query`, `Xid`, `Table_map`, `Write_rows_v1`, ...
    pub kind: String,
    /// `Info`: for a query, `use `db`; ` and its text.
    pub info: String,
}

/// A statement a merge's channel must not apply: its transaction group's start (the gate
/// stops the applier there, before it) and the schema it touches.
#[derive(Debug, Clone, PartialEq)]
pub struct BlockedStatement {
    /// The start of the statement's transaction group.
    pub at: BinlogPosition,
    /// The statement's own position.
    pub statement_at: BinlogPosition,
    /// The retired schema it runs in or names.
    pub schema: String,
    /// The event's text (its first 200 characters).
    pub text: String,
}

/// What a scan found.
#[derive(Debug, Clone, PartialEq)]
pub struct GateScan {
    /// The furthest group boundary up to which every event is harmless (the start when
    /// none lies further).
    pub safe_to: BinlogPosition,
    /// The first statement touching a retired schema, if the scan met one.
    pub blocked: Option<BlockedStatement>,
    /// The scan read every event up to the position it was asked to reach (or to the end
    /// of the binary log when it was asked for none).
    pub complete: bool,
}

/// Where a scan stands between events.
#[derive(Debug, Clone)]
struct Group {
    /// The start of the group the scan is in, if any.
    start: Option<BinlogPosition>,
    /// The group is a transaction (`BEGIN GTID`, `BEGIN`, `XA START`) that ends at its
    /// commit; otherwise it is one statement.
    transactional: bool,
}

/// Event types that change no table by a statement's text: row events (keyed, filtered
/// per table), the group markers, and the log's own bookkeeping.
const HARMLESS: [&str; 14] = [
    "Table_map",
    "Annotate_rows",
    "Rows_query",
    "Format_desc",
    "Gtid_list",
    "Binlog_checkpoint",
    "Previous_gtids",
    "Start_encryption",
    "Stop",
    "Intvar",
    "Rand",
    "User var",
    "Heartbeat",
    "Incident",
];

/// Row events (`Write_rows_v1`, `Update_rows`, `Delete_rows_compressed_v1`, ...).
fn is_row_event(kind: &str) -> bool {
    [
        "Write_rows",
        "Update_rows",
        "Delete_rows",
        "Partial_update_rows",
    ]
    .iter()
    .any(|k| kind.starts_with(k))
}

/// The default schema and the text of a query event's `Info` (`use `db`; text`).
fn split_use(info: &str) -> (Option<String>, &str) {
    if let Some(rest) = info.strip_prefix("use `") {
        // The name is back-quoted with doubled back-quotes inside.
        let bytes = rest.as_bytes();
        let mut i = 0;
        let mut name = String::new();
        while i < bytes.len() {
            if bytes[i] == b'`' {
                if bytes.get(i + 1) == Some(&b'`') {
                    name.push('`');
                    i += 2;
                    continue;
                }
                let text = rest[i + 1..].trim_start_matches(';').trim_start();
                return (Some(name), text);
            }
            let ch = rest[i..].chars().next().unwrap_or('`');
            name.push(ch);
            i += ch.len_utf8();
        }
    }
    (None, info)
}

/// The first of `schemas` a statement runs in (its default schema) or names anywhere in
/// its text, compared without case: a false alarm only stops a merge, a miss empties the
/// survivor's tables.
fn touched(default: Option<&str>, text: &str, schemas: &[Ident]) -> Option<String> {
    let lower = text.to_lowercase();
    schemas
        .iter()
        .find(|s| {
            let name = s.as_str().to_lowercase();
            default.is_some_and(|d| d.to_lowercase() == name) || lower.contains(&name)
        })
        .map(|s| s.to_string())
}

/// A query that only delimits a transaction group.
fn is_delimiter(text: &str) -> bool {
    let t = text.trim().to_ascii_uppercase();
    t == "BEGIN" || t == "COMMIT" || t == "ROLLBACK" || t.starts_with("XA ")
}

/// Scans `events` (in order, the first one at a group boundary as `group` says) for a
/// statement touching `schemas`. Returns the furthest boundary found safe (or `safe`
/// unchanged) and the blocked statement, if any; `group` carries over to the next page.
fn scan_events(
    events: &[BinlogEvent],
    schemas: &[Ident],
    safe: &mut BinlogPosition,
    group: &mut Group,
) -> Option<BlockedStatement> {
    for ev in events {
        let end = BinlogPosition {
            file: ev.at.file.clone(),
            pos: ev.end,
        };
        let kind = ev.kind.as_str();
        if kind == "Gtid" || kind == "Anonymous_Gtid" || kind == "Gtid_log_event" {
            // A new group: everything before it was read and found harmless.
            if group.start.is_none() {
                *safe = ev.at.clone();
            }
            group.start = Some(ev.at.clone());
            let info = ev.info.trim_start().to_ascii_uppercase();
            group.transactional = info.starts_with("BEGIN") || info.starts_with("XA START");
            continue;
        }
        if kind == "Rotate" {
            continue;
        }
        if HARMLESS.contains(&kind) || is_row_event(kind) {
            if group.start.is_none() {
                *safe = end;
            }
            continue;
        }
        if kind == "Xid" || kind == "XA_prepare" {
            *group = Group {
                start: None,
                transactional: false,
            };
            *safe = end;
            continue;
        }
        // A query, or an event shardctl does not know: its text decides.
        let (default, text) = split_use(&ev.info);
        let query = kind == "Query" || kind == "Query_compressed";
        if query && is_delimiter(text) {
            let t = text.trim().to_ascii_uppercase();
            if t == "BEGIN" || t.starts_with("XA START") || t.starts_with("XA BEGIN") {
                if group.start.is_none() {
                    group.start = Some(ev.at.clone());
                }
                group.transactional = true;
            } else if t == "COMMIT" || t == "ROLLBACK" || !group.transactional {
                *group = Group {
                    start: None,
                    transactional: false,
                };
                *safe = end;
            }
            continue;
        }
        let schema = match touched(default.as_deref(), text, schemas) {
            Some(s) => Some(s),
            // An event of a kind not known here is refused whatever it names.
            None if !query => Some(schemas.first().map(|s| s.to_string()).unwrap_or_default()),
            None => None,
        };
        if let Some(schema) = schema {
            return Some(BlockedStatement {
                at: group.start.clone().unwrap_or_else(|| ev.at.clone()),
                statement_at: ev.at.clone(),
                schema,
                text: ev.info.chars().take(200).collect(),
            });
        }
        if !group.transactional {
            *group = Group {
                start: None,
                transactional: false,
            };
            *safe = end;
        }
    }
    None
}

impl Server {
    /// At most `limit` events of the binary log from `from` on.
    pub fn binlog_events(&mut self, from: &BinlogPosition, limit: u32) -> Result<Vec<BinlogEvent>> {
        let st = self.dialect().show_binlog_events(from, limit)?;
        let name = self.name().to_string();
        self.rows(&st)?
            .iter()
            .map(|row| {
                let (file, pos, end) = (
                    col_string(row, &["Log_name"]),
                    col_u64(row, &["Pos"]),
                    col_u64(row, &["End_log_pos"]),
                );
                match (file, pos, end) {
                    (Some(file), Some(pos), Some(end)) => Ok(BinlogEvent {
                        at: BinlogPosition { file, pos },
                        end,
                        kind: col_string(row, &["Event_type"]).unwrap_or_default(),
                        info: col_string(row, &["Info"]).unwrap_or_default(),
                    }),
                    _ => Err(Error::server(
                        &name,
                        "SHOW BINLOG EVENTS answered without a position",
                    )),
                }
            })
            .collect()
    }

    /// Reads this server's binary log from `from` (a group boundary: where a channel's
    /// applier stands) up to `up_to` (or to its end), at most `max_events` events, for a
    /// statement that touches one of `schemas` other than by row events. Read-only.
    pub fn scan_for_gate(
        &mut self,
        from: &BinlogPosition,
        up_to: Option<&BinlogPosition>,
        schemas: &[Ident],
        max_events: usize,
    ) -> Result<GateScan> {
        let mut safe = from.clone();
        let mut group = Group {
            start: None,
            transactional: false,
        };
        let mut next = from.clone();
        let mut read = 0usize;
        loop {
            if up_to.is_some_and(|u| next >= *u) {
                return Ok(GateScan {
                    safe_to: safe,
                    blocked: None,
                    complete: true,
                });
            }
            if read >= max_events {
                return Ok(GateScan {
                    safe_to: safe,
                    blocked: None,
                    complete: false,
                });
            }
            let mut events = self.binlog_events(&next, SCAN_PAGE)?;
            if let Some(u) = up_to {
                events.retain(|e| e.at < *u);
            }
            // The log's first events (a new file's header) come again when read from 4.
            let Some(last) = events.last().cloned() else {
                // Nothing more in this file. A file the server stopped or crashed in ends
                // without a rotation event, and the log goes on in the next file it opened
                // when it started: read on there while `up_to` lies beyond. Otherwise the
                // binary log ends here (a rotation is an event, read below).
                if let Some(u) = up_to {
                    let later = crate::server::replication::next_binlog_file(&next.file)
                        .filter(|_| next.file != u.file)
                        .map(|file| BinlogPosition { file, pos: 4 })
                        .filter(|n| crate::server::replication::same_binlog(n, u) && n <= u);
                    if let Some(later) = later {
                        next = later;
                        continue;
                    }
                }
                return Ok(GateScan {
                    safe_to: safe,
                    blocked: None,
                    complete: up_to.is_none(),
                });
            };
            read += events.len();
            if let Some(blocked) = scan_events(&events, schemas, &mut safe, &mut group) {
                return Ok(GateScan {
                    safe_to: safe,
                    blocked: Some(blocked),
                    complete: false,
                });
            }
            next = match last.kind.as_str() {
                // The next file, from its first event.
                "Rotate" => BinlogPosition {
                    file: last
                        .info
                        .split(';')
                        .next()
                        .unwrap_or_default()
                        .trim()
                        .to_string(),
                    pos: 4,
                },
                _ => BinlogPosition {
                    file: last.at.file.clone(),
                    pos: last.end,
                },
            };
            if next.file.is_empty() {
                return Err(Error::server(
                    self.name(),
                    format!("the binary log does not go on after {}", last.at),
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(pos: u64, end: u64, kind: &str, info: &str) -> BinlogEvent {
        BinlogEvent {
            at: BinlogPosition {
                file: "bin.000001".into(),
                pos,
            },
            end,
            kind: kind.into(),
            info: info.into(),
        }
    }

    fn at(pos: u64) -> BinlogPosition {
        BinlogPosition {
            file: "bin.000001".into(),
            pos,
        }
    }

    fn scan(events: &[BinlogEvent]) -> (BinlogPosition, Option<BlockedStatement>) {
        let mut safe = at(events[0].at.pos);
        let mut group = Group {
            start: None,
            transactional: false,
        };
        let schemas = [Ident::new("schema", "shop_4").unwrap()];
        let blocked = scan_events(events, &schemas, &mut safe, &mut group);
        (safe, blocked)
    }

    /// As MariaDB 10.11 logged `INSERT`, `INSERT`, `USE s4; TRUNCATE t`, `INSERT`.
    #[test]
    fn a_file_the_server_stopped_in_goes_on_in_the_next_numbered_file() {
        use crate::server::replication::next_binlog_file;
        assert_eq!(
            next_binlog_file("mysql-bin.000009").as_deref(),
            Some("mysql-bin.000010")
        );
        assert_eq!(
            next_binlog_file("mysql-bin.999999").as_deref(),
            Some("mysql-bin.1000000")
        );
        assert_eq!(
            next_binlog_file("a.b.000001").as_deref(),
            Some("a.b.000002")
        );
        assert_eq!(next_binlog_file("mysql-bin"), None);
        assert_eq!(next_binlog_file("mysql-bin.log"), None);
    }

    #[test]
    fn a_truncate_in_the_retired_schema_stops_the_gate_before_its_group() {
        let events = [
            ev(2199, 2241, "Gtid", "BEGIN GTID 0-1-12"),
            ev(2241, 2292, "Annotate_rows", "insert into t values (405,1)"),
            ev(2292, 2335, "Table_map", "table_id: 23 (shop_4.t)"),
            ev(
                2335,
                2377,
                "Write_rows_v1",
                "table_id: 23 flags: STMT_END_F",
            ),
            ev(2377, 2408, "Xid", "COMMIT /* xid=34 */"),
            ev(2408, 2450, "Gtid", "GTID 0-1-13"),
            ev(2450, 2525, "Query", "use `shop_4`; truncate t"),
            ev(2525, 2567, "Gtid", "BEGIN GTID 0-1-14"),
        ];
        let (safe, blocked) = scan(&events);
        assert_eq!(safe, at(2408));
        let b = blocked.unwrap();
        assert_eq!(
            (b.at, b.statement_at, b.schema.as_str()),
            (at(2408), at(2450), "shop_4")
        );
    }

    #[test]
    fn rows_commits_and_other_schemas_statements_pass_up_to_the_last_boundary() {
        let events = [
            ev(100, 142, "Gtid", "BEGIN GTID 0-1-1"),
            ev(142, 200, "Annotate_rows", "TRUNCATE shop_4.t"),
            ev(200, 240, "Table_map", "table_id: 1 (shop_4.t)"),
            ev(240, 280, "Delete_rows_v1", "table_id: 1 flags: STMT_END_F"),
            ev(280, 311, "Xid", "COMMIT /* xid=1 */"),
            ev(311, 353, "Gtid", "GTID 0-1-2"),
            ev(353, 400, "Query", "use `shop_1`; ALTER TABLE t ADD c INT"),
            ev(400, 442, "Gtid", "BEGIN GTID 0-1-3"),
            ev(442, 480, "Query", "BEGIN"),
            ev(480, 520, "Table_map", "table_id: 1 (shop_4.t)"),
        ];
        let (safe, blocked) = scan(&events);
        assert_eq!(blocked, None);
        // Up to the open group's start: its rest is not read yet.
        assert_eq!(safe, at(400));
        let (safe, _) = scan(&events[..7]);
        assert_eq!(safe, at(400), "a standalone statement ends its group");
    }

    #[test]
    fn a_statement_naming_the_schema_from_elsewhere_or_in_another_case_is_blocked() {
        for info in [
            "RENAME TABLE `shop_4`.`orders` TO `shop_4`.`old`",
            "use `other`; DROP TABLE SHOP_4.orders",
            "use `SHOP_4`; ALTER TABLE orders ENGINE=InnoDB",
        ] {
            let events = [ev(4, 46, "Gtid", "GTID 0-1-1"), ev(46, 90, "Query", info)];
            let (safe, blocked) = scan(&events);
            assert_eq!(safe, at(4), "{info}");
            assert_eq!(blocked.unwrap().at, at(4), "{info}");
        }
        // An event kind not known here is refused whatever it names.
        let events = [
            ev(4, 46, "Gtid", "GTID 0-1-1"),
            ev(46, 90, "Execute_load_query", "x"),
        ];
        assert!(scan(&events).1.is_some());
    }

    #[test]
    fn use_prefixes_are_read_with_doubled_quotes() {
        assert_eq!(
            split_use("use `a``b`; DROP TABLE t"),
            (Some("a`b".to_string()), "DROP TABLE t")
        );
        assert_eq!(split_use("DROP TABLE t"), (None, "DROP TABLE t"));
    }
}
