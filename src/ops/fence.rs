//! The shard fence: the shard's tables renamed to hidden names inside their own schemas
//! (triggers stay with their tables), unlogged so no replica — and no channel reading this
//! binary log — repeats it, in one atomic statement that waits at most `timeout_secs` for
//! in-flight transactions. Clients get "table doesn't exist" and look the shard up again.
//!
//! The mapping from table to hidden name is decided (and journaled) before the rename;
//! whether the fence is up is then read from the server: which hidden names exist. The
//! statements themselves are the fence verbs of `ops::effects::FleetEffects`.

use crate::copy::SchemaPair;
use crate::error::Result;
use crate::ident::Ident;
use crate::server::Server;
use std::collections::HashSet;

/// A fenced table: (schema, table, hidden name).
pub type Fenced = (String, String, String);

/// The prefix of every name shardctl hides a table under.
pub const HIDDEN_PREFIX: &str = "_shardctl_op";

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
