//! The shard fence: the shard's tables renamed to hidden names inside their own schemas
//! (triggers stay with their tables), unlogged so no replica — and no channel reading this
//! binary log — repeats it, in one atomic statement that waits at most `timeout_secs` for
//! in-flight transactions. Clients get "table doesn't exist" and look the shard up again.

use crate::copy::SchemaPair;
use crate::error::Result;
use crate::server::{Server, Stmt};

/// A fenced table: (schema, table, hidden name).
pub type Fenced = (String, String, String);

/// Renames every base table of `pairs` (source side) to `<prefix><n>`.
pub fn raise(
    src: &mut Server,
    pairs: &[SchemaPair],
    prefix: &str,
    timeout_secs: u64,
) -> Result<Vec<Fenced>> {
    let mut renames = Vec::new();
    let mut fenced = Vec::new();
    for p in pairs {
        for t in src.tables(&p.from)?.into_iter().filter(|t| !t.is_view) {
            let hidden = format!("{prefix}{}", fenced.len());
            renames.push(format!(
                "{}.{} TO {}.`{hidden}`",
                p.from.quoted(),
                t.name.quoted(),
                p.from.quoted()
            ));
            fenced.push((p.from.to_string(), t.name.to_string(), hidden));
        }
    }
    src.exec(&Stmt::text(format!(
        "SET SESSION lock_wait_timeout = {}",
        timeout_secs.max(1)
    )))?;
    if !renames.is_empty() {
        src.exec_unlogged(&[Stmt::text(format!("RENAME TABLE {}", renames.join(", ")))])?;
    }
    Ok(fenced)
}

/// Renames fenced tables back.
pub fn lower(src: &mut Server, fenced: &[Fenced]) -> Result<()> {
    if fenced.is_empty() {
        return Ok(());
    }
    let back: Vec<String> = fenced
        .iter()
        .map(|(s, t, h)| format!("`{s}`.`{h}` TO `{s}`.`{t}`"))
        .collect();
    src.exec_unlogged(&[Stmt::text(format!("RENAME TABLE {}", back.join(", ")))])
}
