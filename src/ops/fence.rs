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
use crate::error::Result;
use crate::ident::Ident;
use crate::server::{statements, Server};
use serde::Serialize;
use std::collections::HashSet;

/// A fenced table: (schema, table, hidden name).
pub type Fenced = (String, String, String);

use crate::server::statements::HIDDEN_PREFIX;

/// The hidden names operation `op` gives every base table of `pairs` (source side).
pub fn mapping(src: &mut Server, pairs: &[SchemaPair], op: u64) -> Result<Vec<Fenced>> {
    let mut fenced = Vec::new();
    for p in pairs {
        for t in src.tables(&p.from)?.into_iter().filter(|t| !t.is_view) {
            if t.name.as_str().starts_with(HIDDEN_PREFIX) {
                continue;
            }
            let hidden = format!("{HIDDEN_PREFIX}{op}_{}", fenced.len());
            fenced.push((p.from.to_string(), t.name.to_string(), hidden));
        }
    }
    Ok(fenced)
}

/// The tables of `schemas` that exist now, as (schema, table).
fn existing(src: &mut Server, schemas: &[&str]) -> Result<HashSet<(String, String)>> {
    let mut out = HashSet::new();
    for s in schemas {
        let id = Ident::new("schema", s)?;
        for t in src.tables(&id)? {
            out.insert((s.to_string(), t.name.to_string()));
        }
    }
    Ok(out)
}

fn schemas_of(fenced: &[Fenced]) -> Vec<&str> {
    let mut v: Vec<&str> = fenced.iter().map(|(s, _, _)| s.as_str()).collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// The entries of `fenced` whose hidden table exists now: the fence is up for them.
pub fn hidden_now(src: &mut Server, fenced: &[Fenced]) -> Result<Vec<Fenced>> {
    let now = existing(src, &schemas_of(fenced))?;
    Ok(fenced
        .iter()
        .filter(|(s, _, h)| now.contains(&(s.clone(), h.clone())))
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
