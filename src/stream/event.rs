//! The binary log's events as the stream reads them. The `mysql` crate (its `mysql_common`
//! binlog module) reads every event's header and parses the events MySQL defines, row
//! events of both versions among them (MariaDB writes version 1: types 23, 24, 25). It knows
//! none of MariaDB's own types, which a replica announcing capability 4 receives as they are
//! written: 160 `ANNOTATE_ROWS` (a row event's statement, informational), 161
//! `BINLOG_CHECKPOINT`, 162 `GTID` (the start of a transaction group), 163 `GTID_LIST`,
//! 164 `START_ENCRYPTION`, and 165–171, the compressed query and row events of
//! `log_bin_compress`. For those the crate hands over the raw event; this module reads the
//! GTID event itself (layout of MariaDB's `Gtid_log_event`: sequence number u64, domain id
//! u32, flags u8, then fields the stream does not need; the server id is the header's).
//!
//! Every event becomes an [`Item`]: what the stream does with it, never a silent skip of
//! something that can change a moving table — an event type not known here is
//! [`Item::Unsupported`], and the stream stops on it.

use crate::error::{Error, Result};
use mysql::binlog::events::{Event, EventData, RowsEventData, TableMapEvent};

/// MariaDB's event types, which the `mysql` crate does not define.
pub mod mariadb {
    /// The statement behind the row events that follow (sent only on request).
    pub const ANNOTATE_ROWS: u8 = 160;
    /// The oldest binary log a crash recovery needs.
    pub const BINLOG_CHECKPOINT: u8 = 161;
    /// The start of a transaction group, with its GTID.
    pub const GTID: u8 = 162;
    /// The GTID state at the start of a binary-log file.
    pub const GTID_LIST: u8 = 163;
    /// The start of encrypted events (the source decrypts what it sends).
    pub const START_ENCRYPTION: u8 = 164;
    /// `QUERY_COMPRESSED_EVENT`, the first of the compressed events (to 171).
    pub const FIRST_COMPRESSED: u8 = 165;
    /// `DELETE_ROWS_COMPRESSED_EVENT_V1`, the last compressed event.
    pub const LAST_COMPRESSED: u8 = 171;

    /// `FL_STANDALONE`: the group is one statement, with no COMMIT or XID after it.
    pub const FL_STANDALONE: u8 = 1;
    /// `FL_PREPARED_XA`: the group is an XA transaction's prepared part.
    pub const FL_PREPARED_XA: u8 = 64;
    /// `FL_COMPLETED_XA`: the group is an `XA COMMIT` or `XA ROLLBACK`.
    pub const FL_COMPLETED_XA: u8 = 128;
}

/// MySQL's `HEARTBEAT_LOG_EVENT_V2` (a heartbeat past 4 GiB), which the crate does not
/// define.
const MYSQL_HEARTBEAT_V2: u8 = 41;

/// The `LOG_EVENT_ARTIFICIAL_F` header flag: an event the source made up for this dump (the
/// first rotation, a GTID list at a GTID start), not one at a position of its binary log.
const ARTIFICIAL: u16 = 0x20;

/// A MariaDB GTID: `domain-server-sequence`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MariaGtid {
    /// The replication domain.
    pub domain: u32,
    /// The server that wrote the transaction first.
    pub server: u32,
    /// Its number in the domain.
    pub seq: u64,
}

impl std::fmt::Display for MariaGtid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}-{}-{}", self.domain, self.server, self.seq)
    }
}

/// The group an event opens, by its GTID event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupStart {
    /// The GTID as text (`0-1-5`, `uuid:7`), empty for MySQL's anonymous transactions.
    pub gtid: String,
    /// MariaDB's GTID, to carry its state along.
    pub mariadb: Option<MariaGtid>,
    /// One statement with no commit of its own (MariaDB `FL_STANDALONE`; a MySQL DDL is
    /// recognised by its statement instead).
    pub standalone: bool,
    /// An XA transaction's part.
    pub xa: bool,
}

/// What an event means to the stream.
pub enum Item<'a> {
    /// The format description of a binary-log file.
    FormatDescription,
    /// The source goes on in another file (the first one of a dump is artificial).
    Rotate {
        /// The next file's name, as sent (the first rotation of a dump comes before the
        /// format description, so its checksum is still on it).
        file: Vec<u8>,
        /// Where in it.
        pos: u64,
    },
    /// A transaction group starts.
    Group(GroupStart),
    /// A statement: `BEGIN`, `COMMIT`, DDL, a statement-logged change...
    Query {
        /// The default schema it ran in.
        schema: String,
        /// Its text.
        text: String,
    },
    /// A transaction's commit (`XID_EVENT`).
    Xid,
    /// An XA transaction's prepared part ends (`XA_PREPARE_LOG_EVENT`).
    XaPrepare,
    /// A table's id and columns for the row events that follow.
    TableMap(TableMapEvent<'a>),
    /// Rows written, updated or deleted.
    Rows(RowsEventData<'a>),
    /// An idle source's heartbeat: it has sent everything up to its position.
    Heartbeat,
    /// Bookkeeping that changes no table (annotations, GTID lists, checkpoints,
    /// statement-based context such as INTVAR, which a row-based log only writes beside
    /// statements the stream refuses anyway).
    Ignored,
    /// The source lost events (`INCIDENT_EVENT`): a replica stops, so does the stream.
    Incident,
    /// An event the stream cannot read and must not skip: its type name.
    Unsupported(String),
}

/// The event header's fields the stream uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// Seconds since the epoch at which the source wrote the event (its transaction's
    /// commit time for the events of a transaction; 0 for artificial ones).
    pub timestamp: u32,
    /// The raw event type.
    pub type_code: u8,
    /// The server that wrote it first.
    pub server_id: u32,
    /// Its size in bytes.
    pub size: u32,
    /// The offset of the next event in the file (0: not at a position of the log).
    pub log_pos: u32,
    /// Made up for this dump.
    pub artificial: bool,
}

impl Header {
    /// The header of `ev`.
    pub fn of(ev: &Event) -> Header {
        let h = ev.header();
        Header {
            timestamp: h.timestamp(),
            type_code: h.event_type_raw(),
            server_id: h.server_id(),
            size: h.event_size(),
            log_pos: h.log_pos(),
            artificial: h.flags_raw() & ARTIFICIAL != 0,
        }
    }
}

/// Reads MariaDB's GTID event body (checksum removed): the GTID and its flags.
pub fn mariadb_gtid(data: &[u8], server_id: u32) -> Result<(MariaGtid, u8)> {
    if data.len() < 13 {
        return Err(Error::Internal(format!(
            "a MariaDB GTID event of {} bytes (13 at least)",
            data.len()
        )));
    }
    let seq = u64::from_le_bytes(data[0..8].try_into().expect("8 bytes"));
    let domain = u32::from_le_bytes(data[8..12].try_into().expect("4 bytes"));
    Ok((
        MariaGtid {
            domain,
            server: server_id,
            seq,
        },
        data[12],
    ))
}

/// What `ev` means to the stream. The rows and table maps borrow from `ev`.
pub fn classify(ev: &Event) -> Result<Item<'_>> {
    let header = Header::of(ev);
    let code = header.type_code;
    let name = || format!("event type {code}");
    match code {
        mariadb::GTID => {
            let (gtid, flags) = mariadb_gtid(ev.data(), header.server_id)?;
            return Ok(Item::Group(GroupStart {
                gtid: gtid.to_string(),
                mariadb: Some(gtid),
                standalone: flags & mariadb::FL_STANDALONE != 0,
                xa: flags & (mariadb::FL_PREPARED_XA | mariadb::FL_COMPLETED_XA) != 0,
            }));
        }
        mariadb::ANNOTATE_ROWS
        | mariadb::BINLOG_CHECKPOINT
        | mariadb::GTID_LIST
        | mariadb::START_ENCRYPTION => return Ok(Item::Ignored),
        mariadb::FIRST_COMPRESSED..=mariadb::LAST_COMPRESSED => {
            return Ok(Item::Unsupported(format!(
                "MariaDB compressed event (type {code}: log_bin_compress is on)"
            )))
        }
        MYSQL_HEARTBEAT_V2 => return Ok(Item::Heartbeat),
        _ => {}
    }
    let data = ev
        .read_data()
        .map_err(|e| Error::Internal(format!("cannot read binary-log {}: {e}", name())))?;
    let Some(data) = data else {
        return Ok(Item::Unsupported(name()));
    };
    Ok(match data {
        EventData::FormatDescriptionEvent(_) => Item::FormatDescription,
        EventData::RotateEvent(r) => Item::Rotate {
            file: r.name_raw().to_vec(),
            pos: r.position(),
        },
        EventData::GtidEvent(g) => Item::Group(GroupStart {
            gtid: format!("{}:{}", uuid_text(&g.sid()), g.gno()),
            mariadb: None,
            standalone: false,
            xa: false,
        }),
        EventData::AnonymousGtidEvent(_) => Item::Group(GroupStart {
            gtid: String::new(),
            mariadb: None,
            standalone: false,
            xa: false,
        }),
        EventData::QueryEvent(q) => Item::Query {
            schema: q.schema().into_owned(),
            text: q.query().into_owned(),
        },
        EventData::XidEvent(_) => Item::Xid,
        EventData::XaPrepareLogEvent(_) => Item::XaPrepare,
        EventData::TableMapEvent(t) => Item::TableMap(t),
        EventData::RowsEvent(RowsEventData::PartialUpdateRowsEvent(_)) => Item::Unsupported(
            "a partial JSON update (binlog_row_value_options = PARTIAL_JSON)".into(),
        ),
        EventData::RowsEvent(r) => Item::Rows(r),
        EventData::HeartbeatEvent => Item::Heartbeat,
        EventData::IncidentEvent(_) => Item::Incident,
        EventData::StopEvent
        | EventData::IntvarEvent(_)
        | EventData::RandEvent(_)
        | EventData::UserVarEvent(_)
        | EventData::RowsQueryEvent(_)
        | EventData::PreviousGtidsEvent(_)
        | EventData::IgnorableEvent(_)
        | EventData::TransactionContextEvent(_)
        | EventData::ViewChangeEvent(_)
        | EventData::UnknownEvent => Item::Ignored,
        EventData::TransactionPayloadEvent(_) => Item::Unsupported(
            "a compressed transaction (binlog_transaction_compression is on)".into(),
        ),
        _ => Item::Unsupported(name()),
    })
}

/// A MySQL server UUID as text.
fn uuid_text(sid: &[u8; 16]) -> String {
    let hex: String = sid.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mariadb_gtid_event_gives_domain_server_and_sequence() {
        // seq 0x0e, domain 7, flags standalone | ddl; then a commit id would follow.
        let mut body = vec![0x0e, 0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0, 0x21];
        body.extend_from_slice(&[0; 6]);
        let (gtid, flags) = mariadb_gtid(&body, 10124).unwrap();
        assert_eq!(gtid.to_string(), "7-10124-14");
        assert_eq!(flags & mariadb::FL_STANDALONE, 1);
        assert!(mariadb_gtid(&body[..12], 1).is_err());
    }

    #[test]
    fn uuids_read_as_mysql_writes_them() {
        let sid = [
            0x3e, 0x11, 0xfa, 0x47, 0x71, 0xca, 0x11, 0xe1, 0x9e, 0x33, 0xc8, 0x0a, 0xa9, 0x42,
            0x95, 0x62,
        ];
        assert_eq!(uuid_text(&sid), "3e11fa47-71ca-11e1-9e33-c80aa9429562");
    }
}
