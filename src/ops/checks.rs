//! The preflight's checks of what a shard needs on its target besides its rows, run by a
//! move, a split and a merge before anything changes (read-only; each refusal is one
//! line naming the culprit, exit 5):
//! - every DEFINER of the shard's views, routines, triggers and events exists on the
//!   target (else every statement using the object fails there with 1449 after the flip);
//! - the inventory's application account can read and write the target's schema names
//!   (a split's new ones included), else the application loses the shard at the flip;
//! - no sharding column is nullable (a NULL key belongs to no shard: guards let it
//!   through, a prune never deletes it, a split copies it to both sides);
//! - no foreign key leaves the shard's schemas (cascades from an outside parent are not
//!   in the shard's binary log, and the parent may not exist on the target);
//! - every table the directory does not map (neither one of the function's sharded tables
//!   nor a global one) is carried: a move copies and verifies it whole, a split copies it
//!   whole to both sides (neither prunes it); a merge carries only the sharded tables'
//!   rows and drops the retired schemas, so it is refused while the retired shard's copy
//!   of such a table holds a row the survivor's copy does not hold the same.
//!
//! One check, one function, registered in [`checks`].

use crate::config::Inventory;
use crate::copy::SchemaPair;
use crate::directory::{shard_schema, Shard, Snapshot};
use crate::error::{Error, Result};
use crate::ident::Ident;
use crate::ops::effects::{mark_runtime, Effects};
use crate::server::{accounts, statements, ConnectSpec, Server};
use crate::verify::{TablePair, VerifyOptions};
use serde_json::{json, Value};
use std::collections::BTreeSet;

/// What the checks look at.
#[derive(Debug, Clone)]
pub(crate) struct Scope {
    /// The shard, for messages.
    pub shard: u32,
    /// The node the rows come from.
    pub source: String,
    /// The node they go to (the source itself for a split or merge on one node).
    pub target: String,
    /// The shard's schemas: name on the source, name on the target.
    pub pairs: Vec<SchemaPair>,
    /// The shard's sharded tables as (schema on the source, table, sharding column).
    pub sharded: Vec<(Ident, Ident, Ident)>,
    /// For a merge, the survivor: the shard's rows go into its existing tables, only the
    /// sharded tables' rows are carried, and the shard's schemas are dropped.
    pub merge_into: Option<u32>,
}

/// One check: reads the servers, refuses with [`Error::Refused`], or says what it found.
type Check<E> = fn(&Inventory, &mut E, &Scope) -> Result<Value>;

/// Every check, by the name its finding is reported under, in the order they run.
fn checks<E: Effects>() -> [(&'static str, Check<E>); 5] {
    [
        ("definers", definers_exist::<E>),
        ("application_grants", application_can_write::<E>),
        ("sharding_columns", sharding_columns_not_null::<E>),
        ("foreign_keys", no_foreign_key_leaves_the_shard::<E>),
        ("unmapped_tables", unmapped_tables_carried::<E>),
    ]
}

/// Runs every check; the first refusal stops them. Their findings by name.
pub(crate) fn run<E: Effects>(inv: &Inventory, fx: &mut E, scope: &Scope) -> Result<Value> {
    let mut out = serde_json::Map::new();
    for (name, check) in checks::<E>() {
        out.insert(name.to_string(), check(inv, fx, scope)?);
    }
    Ok(Value::Object(out))
}

/// Every definer of the shard's stored objects exists on the target (as an account, or a
/// role). Reads `mysql.user` there; refuses when it cannot, since nothing else tells.
fn definers_exist<E: Effects>(_inv: &Inventory, fx: &mut E, scope: &Scope) -> Result<Value> {
    if scope.source == scope.target {
        return Ok(json!({"skipped": "same node"}));
    }
    let mut wanted: Vec<(accounts::Definer, String)> = Vec::new();
    for p in &scope.pairs {
        for d in accounts::read_definers(fx.reader(&scope.source)?, &p.from)? {
            if !d.definer.is_empty() && !wanted.iter().any(|(w, _)| w.definer == d.definer) {
                wanted.push((d, p.from.to_string()));
            }
        }
    }
    let target = scope.target.clone();
    for (d, schema) in &wanted {
        let (user, host) = d.account();
        let exists = accounts::account_exists(fx.reader(&target)?, &user, &host).map_err(|e| {
            Error::Refused(format!(
                "cannot read the accounts on the target {target} to check the definer {} of {} {schema}.{} (the admin account needs SELECT (User, Host) ON mysql.user): {e}",
                d.definer, d.kind, d.object
            ))
        })?;
        if !exists {
            return Err(Error::Refused(format!(
                "the definer {} of {} {schema}.{} does not exist on the target {target}: after the flip every use of it would fail there (1449); create that account on {target} first",
                d.definer, d.kind, d.object
            )));
        }
    }
    Ok(json!(wanted
        .iter()
        .map(|(d, _)| d.definer.clone())
        .collect::<Vec<_>>()))
}

/// The privileges the application needs on every table of the shard.
const APPLICATION_PRIVILEGES: [&str; 4] = ["SELECT", "INSERT", "UPDATE", "DELETE"];

/// The inventory's application account, logged in to the target as the application would
/// (from this machine), holds SELECT, INSERT, UPDATE and DELETE on every table of each
/// target schema name: globally, through a schema grant (wildcard patterns included) or
/// table by table. Skipped, and said so, without an `application:` account.
fn application_can_write<E: Effects>(inv: &Inventory, fx: &mut E, scope: &Scope) -> Result<Value> {
    let Some(user) = inv.file.application.as_ref().map(|a| a.user.clone()) else {
        return Ok(json!({"skipped": "the inventory has no application account"}));
    };
    let target = scope.target.clone();
    let mut spec = ConnectSpec::for_node(inv, inv.node(&target)?)?;
    spec.credentials = inv.application_credentials(&target)?;
    let who = user.unwrap_or_else(|| spec.credentials.user.clone());
    let mut app = Server::connect(&spec).map_err(|e| {
        Error::Refused(format!(
            "the application account {who} cannot log in to the target {target}: {e}"
        ))
    })?;
    let mut checked = Vec::new();
    for p in &scope.pairs {
        let tables: Vec<String> = fx
            .reader(&scope.source)?
            .tables(&p.from)?
            .into_iter()
            .filter(|t| !t.is_view)
            .map(|t| t.name.to_string())
            .collect();
        let own = accounts::read_own_privileges(&mut app, &p.to)?;
        // A schema without tables still needs a schema-level grant to be usable.
        let names = if tables.is_empty() {
            vec![String::new()]
        } else {
            tables
        };
        for table in &names {
            let missing: Vec<&str> = APPLICATION_PRIVILEGES
                .into_iter()
                .filter(|pr| !own.allows(pr, p.to.as_str(), table))
                .collect();
            if !missing.is_empty() {
                let on = if table.is_empty() {
                    format!("{}.*", p.to)
                } else {
                    format!("{}.{table}", p.to)
                };
                return Err(Error::Refused(mark_runtime(&format!(
                    "the application account {} lacks {} on {on} on the target {target}: after the flip the application would lose shard {} (1142); grant it on {target} first",
                    own.account,
                    missing.join(", "),
                    scope.shard
                ))));
            }
        }
        checked.push(mark_runtime(p.to.as_str()));
    }
    Ok(json!({"account": who, "schemas": checked}))
}

/// No sharding column of the shard's tables is nullable on the source.
fn sharding_columns_not_null<E: Effects>(
    _inv: &Inventory,
    fx: &mut E,
    scope: &Scope,
) -> Result<Value> {
    let source = scope.source.clone();
    for (schema, table, column) in &scope.sharded {
        if accounts::is_nullable(fx.reader(&source)?, schema, table, column)? == Some(true) {
            return Err(Error::Refused(crate::prune::nullable_key_refusal(
                schema, table, column, &source,
            )));
        }
    }
    Ok(json!(scope.sharded.len()))
}

/// No foreign key of the shard's tables references a table outside the shard's schemas.
fn no_foreign_key_leaves_the_shard<E: Effects>(
    _inv: &Inventory,
    fx: &mut E,
    scope: &Scope,
) -> Result<Value> {
    let own: BTreeSet<&str> = scope.pairs.iter().map(|p| p.from.as_str()).collect();
    let mut between_own_schemas = 0;
    for p in &scope.pairs {
        for fk in accounts::read_foreign_keys_to_other_schemas(fx.reader(&scope.source)?, &p.from)?
        {
            if !own.contains(fk.parent_schema.as_str()) {
                return Err(Error::Refused(format!(
                    "foreign key {} of {}.{} references {}.{}, outside shard {}'s schemas: cascades from that parent are not in the shard's binary log and the parent may not exist on the target; drop the constraint or shard the parent with it",
                    fk.constraint, p.from, fk.table, fk.parent_schema, fk.parent_table, scope.shard
                )));
            }
            between_own_schemas += 1;
        }
    }
    Ok(json!({"between_the_shards_schemas": between_own_schemas}))
}

/// Every base table of the shard's schemas the directory does not map is carried. A move
/// and a split copy the shard's schemas whole (every table, verified, the channel filtering
/// whole schemas): such tables are only listed. A merge: see [`merge_loses_no_unmapped_row`].
fn unmapped_tables_carried<E: Effects>(
    inv: &Inventory,
    fx: &mut E,
    scope: &Scope,
) -> Result<Value> {
    let snap = fx.directory_snapshot()?;
    let shard = snap.shard(scope.shard)?.clone();
    if let Some(survivor) = scope.merge_into {
        return merge_loses_no_unmapped_row(inv, &snap, &shard, survivor, &scope.target, &[]);
    }
    let mut server = Server::connect_node(inv, &scope.source)?;
    let found = unmapped_tables(&mut server, &snap, &shard, &[])?;
    Ok(json!({"copied_whole": found
        .iter()
        .map(|t| format!("{}.{}", t.schema, t.table))
        .collect::<Vec<_>>()}))
}

/// A base table of a shard's schema that the directory maps neither as one of the
/// shard's function's sharded tables nor as a global table.
#[derive(Debug, Clone)]
pub(crate) struct UnmappedTable {
    /// The logical schema.
    pub logical: String,
    /// The shard's schema.
    pub schema: Ident,
    /// The table's own name.
    pub table: Ident,
    /// Its name now (hidden under the shard fence).
    pub now: Ident,
}

/// The unmapped base tables of `shard`'s schemas on `server` (its node), names compared as
/// the directory compares them (without regard to case). `renames` are the shard fence's
/// (hidden name, own name); other hidden tables are left out.
pub(crate) fn unmapped_tables(
    server: &mut Server,
    snap: &Snapshot,
    shard: &Shard,
    renames: &[(String, String)],
) -> Result<Vec<UnmappedTable>> {
    let mut out = Vec::new();
    for logical in snap.function_schemas(shard.func_id) {
        let schema = Ident::new("schema", &shard_schema(&logical, shard.id))?;
        if !server.schema_exists(&schema)? {
            continue;
        }
        for t in server.tables(&schema)?.into_iter().filter(|t| !t.is_view) {
            let own = match renames.iter().find(|(h, _)| h == t.name.as_str()) {
                Some((_, own)) => Ident::new("table", own)?,
                None if t
                    .name
                    .as_str()
                    .starts_with(crate::server::statements::HIDDEN_PREFIX) =>
                {
                    continue
                }
                None => t.name.clone(),
            };
            let sharded = snap.tables.iter().any(|m| {
                m.func_id == shard.func_id
                    && m.schema.eq_ignore_ascii_case(&logical)
                    && m.table.eq_ignore_ascii_case(own.as_str())
            });
            let global = snap.globals.iter().any(|g| {
                g.schema.eq_ignore_ascii_case(&logical)
                    && g.table.eq_ignore_ascii_case(own.as_str())
            });
            if !sharded && !global {
                out.push(UnmappedTable {
                    logical: logical.clone(),
                    schema: schema.clone(),
                    table: own,
                    now: t.name,
                });
            }
        }
    }
    Ok(out)
}

/// A merge of `retired` (on its node) into `survivor` (on `survivor_node`) carries only
/// the sharded tables' rows, then drops the retired schemas. So every unmapped table of
/// the retired shard must be empty, or hold exactly what the survivor's copy holds
/// (compared by the verification's own chunked comparison): then dropping it loses no
/// row. Otherwise refused, naming the table. Read-only; `renames` as for
/// [`unmapped_tables`] (under the fence). The tables found, by what makes them safe.
pub(crate) fn merge_loses_no_unmapped_row(
    inv: &Inventory,
    snap: &Snapshot,
    retired: &Shard,
    survivor: u32,
    survivor_node: &str,
    renames: &[(String, String)],
) -> Result<Value> {
    let mut from = Server::connect_node(inv, &retired.node)?;
    let (mut empty, mut same) = (Vec::new(), Vec::new());
    for t in unmapped_tables(&mut from, snap, retired, renames)? {
        let name = format!("{}.{}", t.schema, t.table);
        if from
            .first::<u8>(&statements::any_row(&t.schema, &t.now))?
            .is_none()
        {
            empty.push(name);
            continue;
        }
        let into = Ident::new("schema", &shard_schema(&t.logical, survivor))?;
        let refuse = |why: String| {
            Error::Refused(format!(
                "{name} holds rows, and the directory maps it neither as sharded nor as global: a merge carries only the sharded tables' rows and drops shard {}'s schemas, so they would be lost ({why}); register it with `shardctl table add` or move its rows yourself, then merge",
                retired.id
            ))
        };
        let pair = TablePair {
            source_schema: t.schema.clone(),
            source_table: t.now.clone(),
            target_schema: into.clone(),
            target_table: t.table.clone(),
            target_filter: None,
            source_filter: None,
        };
        let report = crate::verify::verify(
            &ConnectSpec::for_node(inv, inv.node(&retired.node)?)?,
            &ConnectSpec::for_node(inv, inv.node(survivor_node)?)?,
            std::slice::from_ref(&pair),
            None,
            &VerifyOptions::default(),
            &mut |_| Ok(()),
        )
        .map_err(|e| {
            refuse(format!(
                "it cannot be compared with {into}.{}: {e}",
                t.table
            ))
        })?;
        if !report.differences.is_empty() {
            return Err(refuse(format!(
                "the survivor's {into}.{} does not hold the same rows",
                t.table
            )));
        }
        same.push(name);
    }
    Ok(json!({"dropped_empty": empty, "same_on_the_survivor": same}))
}
