//! The shard fence: the shard's tables renamed to hidden names inside their own schemas
//! (triggers stay with their tables), unlogged so no replica — and no channel reading this
//! binary log — repeats it, in one atomic statement that waits at most `timeout_secs` for
//! in-flight transactions. Clients get "table doesn't exist" and look the shard up again.
//!
//! The RENAME waits for every open transaction that has touched the shard's tables, and
//! while it waits every other reader and writer of those tables queues behind it. So each
//! try waits only a short `lock_wait_secs` (3 s, as gh-ost's cut-over does), a failed try
//! lets the queue through, and the next comes a second later, within `timeout_secs`.
//! Before each try the transactions that would hold it back are named ([`blockers`]) and,
//! with `kill_blockers`, ended (as Spirit does before its cut-over).
//!
//! The mapping from table to hidden name is decided (and journaled) before the rename;
//! whether the fence is up is then read from the server: which hidden names exist. The
//! statements themselves are the fence verbs of `ops::effects::FleetEffects`.

use crate::copy::SchemaPair;
use crate::error::{Error, Result};
use crate::ident::Ident;
use crate::server::{statements, Server};
use serde::Serialize;
use std::collections::HashSet;

/// A fenced table: its schema, its own name and the hidden name, validated identifiers
/// (journaled as `[schema, table, hidden name]`).
pub type Fenced = statements::HiddenTable;

use crate::server::statements::HIDDEN_PREFIX;

/// A fence mapping read back from operation `op`'s journal (a step's state, an effect's
/// detail): null reads as none; a name that is no plain identifier is refused, naming it,
/// before it can reach any statement (exit 2, as [`Ident::new`] refuses it).
pub fn journaled_mapping(op: u64, value: &serde_json::Value) -> Result<Vec<Fenced>> {
    if value.is_null() {
        return Ok(Vec::new());
    }
    serde_json::from_value(value.clone()).map_err(|e| {
        Error::Usage(format!(
            "operation {op}: the journal's fence mapping does not read: {e}"
        ))
    })
}

/// The hidden names operation `op` gives every base table of `pairs` (source side).
pub fn mapping(src: &mut Server, pairs: &[SchemaPair], op: u64) -> Result<Vec<Fenced>> {
    let mut fenced = Vec::new();
    for p in pairs {
        for t in src.tables(&p.from)?.into_iter().filter(|t| !t.is_view) {
            if t.name.as_str().starts_with(HIDDEN_PREFIX) {
                continue;
            }
            let hidden = format!("{HIDDEN_PREFIX}{op}_{}", fenced.len());
            fenced.push(Fenced {
                schema: p.from.clone(),
                table: t.name.clone(),
                hidden: Ident::new("table", &hidden)?,
            });
        }
    }
    Ok(fenced)
}

/// The tables of `schemas` that exist now, as (schema, table).
fn existing(src: &mut Server, schemas: &[&Ident]) -> Result<HashSet<(Ident, Ident)>> {
    let mut out = HashSet::new();
    for s in schemas {
        for t in src.tables(s)? {
            out.insert(((*s).clone(), t.name));
        }
    }
    Ok(out)
}

fn schemas_of(fenced: &[Fenced]) -> Vec<&Ident> {
    let mut v: Vec<&Ident> = fenced.iter().map(|f| &f.schema).collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// The entries of `fenced` whose hidden table exists now: the fence is up for them.
pub fn hidden_now(src: &mut Server, fenced: &[Fenced]) -> Result<Vec<Fenced>> {
    let now = existing(src, &schemas_of(fenced))?;
    Ok(fenced
        .iter()
        .filter(|f| now.contains(&(f.schema.clone(), f.hidden.clone())))
        .cloned()
        .collect())
}

/// How a session was found to hold the shard's tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Evidence {
    /// The server's metadata-lock view lists its lock on a table of the shard's schemas.
    MetadataLock,
    /// No metadata-lock view on this server (MariaDB without the metadata_lock_info
    /// plugin): its open transaction runs with one of the shard's schemas as its default.
    DefaultSchema,
}

/// An open transaction of another session that holds (or, without a metadata-lock view,
/// probably holds) the shard's tables: the fence's RENAME waits for it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Blocker {
    /// Session (connection) id.
    pub session: u64,
    /// Seconds its transaction has been open.
    pub open_secs: u64,
    /// Account user.
    pub user: String,
    /// Client host.
    pub host: String,
    /// Its default schema.
    pub schema: Option<String>,
    /// `Sleep` (idle inside its transaction), `Query`, ...
    pub command: String,
    /// How it was found.
    pub evidence: Evidence,
}

impl std::fmt::Display for Blocker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "session {} ({}@{}, schema {}, {}, transaction open {} s{})",
            self.session,
            self.user,
            self.host,
            self.schema.as_deref().unwrap_or("none"),
            self.command,
            self.open_secs,
            match self.evidence {
                Evidence::MetadataLock => ", holds a metadata lock on the shard's tables",
                Evidence::DefaultSchema => "",
            }
        )
    }
}

/// The sessions holding a metadata lock on a table of `schemas` on `src`, or None where
/// the server has no view of metadata locks (MariaDB without the metadata_lock_info
/// plugin, MySQL with performance_schema off).
fn metadata_lock_holders(src: &mut Server, schemas: &[Ident]) -> Option<HashSet<u64>> {
    let st = if src.flavor().is_mariadb() {
        statements::metadata_lock_holders_mariadb(schemas)
    } else {
        statements::metadata_lock_holders_mysql(schemas)
    };
    let rows = src.try_rows(&st).ok()?;
    Some(
        rows.into_iter()
            .filter_map(|r| r.get::<Option<u64>, _>(0).flatten())
            .collect(),
    )
}

/// The open transactions of other sessions on `src` that hold the tables of `schemas`:
/// precisely from the server's metadata-lock view where it has one, otherwise those whose
/// default schema is one of `schemas` (a transaction that reached the shard's tables from
/// another default schema is then missed: it only counts among the others, the second
/// value). Never this session, never a replication or system thread.
pub fn blockers(src: &mut Server, schemas: &[Ident]) -> Result<(Vec<Blocker>, usize)> {
    if schemas.is_empty() {
        return Ok((Vec::new(), 0));
    }
    let holders = metadata_lock_holders(src, schemas);
    type Row = (
        u64,
        u64,
        Option<String>,
        Option<String>,
        Option<String>,
        Option<String>,
    );
    let rows: Vec<Row> = src
        .rows(&statements::open_transactions(schemas))?
        .into_iter()
        .filter_map(|r| mysql::from_row_opt::<Row>(r).ok())
        .collect();
    let mut found = Vec::new();
    let mut elsewhere = 0;
    for (session, open_secs, user, host, schema, command) in rows {
        let evidence = match &holders {
            Some(h) if h.contains(&session) => Some(Evidence::MetadataLock),
            Some(_) => None,
            None if schema
                .as_deref()
                .is_some_and(|d| schemas.iter().any(|s| s.as_str() == d)) =>
            {
                Some(Evidence::DefaultSchema)
            }
            None => None,
        };
        match evidence {
            Some(evidence) => found.push(Blocker {
                session,
                open_secs,
                user: user.unwrap_or_default(),
                host: host.unwrap_or_default(),
                schema,
                command: command.unwrap_or_default(),
                evidence,
            }),
            None => elsewhere += 1,
        }
    }
    Ok((found, elsewhere))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The mapping as earlier versions journaled it, `[schema, table, hidden name]`, reads
    /// back as validated names and is written in the same form.
    #[test]
    fn a_journaled_mapping_reads_back_validated_and_keeps_its_form() {
        let journaled = json!([
            ["app_1", "t", "_shardctl_op7_0"],
            ["app_1", "u", "_shardctl_op7_1"]
        ]);
        let mapping = journaled_mapping(7, &journaled).unwrap();
        assert_eq!(mapping[1].schema.as_str(), "app_1");
        assert_eq!(mapping[1].table.as_str(), "u");
        assert_eq!(mapping[1].hidden.as_str(), "_shardctl_op7_1");
        assert_eq!(serde_json::to_value(&mapping).unwrap(), journaled);
        assert!(journaled_mapping(7, &serde_json::Value::Null)
            .unwrap()
            .is_empty());
    }

    #[test]
    fn a_journaled_name_that_is_no_identifier_is_refused_naming_it() {
        let tampered = json!([["app_1", "t", "x` TO `y`; DROP DATABASE app_1; --"]]);
        let e = journaled_mapping(7, &tampered).unwrap_err();
        assert_eq!(e.exit_code(), crate::ExitCode::Usage);
        let shown = e.to_string();
        assert!(shown.contains("operation 7"), "{shown}");
        assert!(shown.contains("invalid table name"), "{shown}");
        assert!(shown.contains("DROP DATABASE"), "{shown}");
        // The same inside a step's state: the whole state does not read.
        let state = json!({
            "copied_rows": 0, "verified": false, "flipped": false, "source_dropped": false,
            "target_created": false, "fenced_tables": [["app_1", "", "_shardctl_op7_0"]],
        });
        let e = serde_json::from_value::<crate::ops::mover::MoveState>(state).unwrap_err();
        assert!(e.to_string().contains("invalid table name \"\""), "{e}");
    }

    /// A step's state as earlier versions journaled it, the fence's tables as tuples.
    #[test]
    fn a_state_journaled_with_tuples_reads_back() {
        let state = json!({
            "coordinates": null, "copied_rows": 12, "fence": "shard",
            "fenced_tables": [["app_1", "t", "_shardctl_op3_0"]], "final_position": null,
            "fence_millis": null, "verified": true, "flipped": false, "source_dropped": false,
            "target_created": true,
            "revert_fenced_tables": [["app_1", "t", "_shardctl_op3_0"]],
        });
        let read: crate::ops::mover::MoveState = serde_json::from_value(state).unwrap();
        assert_eq!(read.fenced_tables.len(), 1);
        assert_eq!(read.fenced_tables[0].hidden.as_str(), "_shardctl_op3_0");
        assert_eq!(read.revert_fenced_tables, read.fenced_tables);
        assert_eq!(
            serde_json::to_value(&read).unwrap()["fenced_tables"],
            json!([["app_1", "t", "_shardctl_op3_0"]])
        );
    }
}
