//! Switched guards: a shard's tables get guard triggers ahead of a fence, inert until one
//! row of the node's control table switches them on (see the statements in
//! [`crate::server::statements::switched_guard_trigger`]).
//!
//! Installing them is DDL per table and runs before any fence, at the table's own pace;
//! raising the fence is then one UPDATE of the switch row, whatever the number of tables,
//! and it drains the writers the way a RENAME of the tables does: it waits for every open
//! transaction that wrote a guarded table, and the writes arriving meanwhile wait behind it
//! and then meet the switch. `Keys` refuses only the rows whose key matches the guards'
//! condition (the keys an operation moves, or the keys a shard gave away), so every other
//! key of the shard keeps writing; `All` refuses every write.
//!
//! Everything here goes through [`FleetEffects`], so a dry run records it and the fake
//! fleet can stand in for the servers. Unlogged: the node's replicas and the channels that
//! read its binary log see neither the control schema nor the triggers.

use crate::error::{Error, Result};
use crate::ident::Ident;
use crate::ops::effects::{Change, FleetEffects};
use crate::server::statements::{self, Condition, GuardEvent, SwitchMode};
use std::collections::HashMap;

/// One table a switch guards: its shard's schema, its name, its sharding column (none for
/// a global table's copy), and the condition (over the bare column) of the keys `Keys`
/// refuses (`(FALSE)` where none is).
#[derive(Debug, Clone)]
pub struct GuardedTable {
    /// The shard's physical schema.
    pub schema: Ident,
    /// The table.
    pub table: Ident,
    /// Its sharding column.
    pub column: Option<Ident>,
    /// The keys refused under [`SwitchMode::Keys`].
    pub keys: Condition,
}

/// How long installing a guard may wait for a table's open transactions (CREATE TRIGGER
/// takes the table's metadata lock), per statement.
pub const INSTALL_LOCK_WAIT_SECS: u64 = 10;

/// Installs switch `id` on `node` (off, or kept as it is when it exists) and then the
/// switched guards of `tables`, whose errors say `message` after shardctl's prefix. The
/// switch row comes first: a guard without its row refuses every write.
pub fn install<F: FleetEffects + ?Sized>(
    fx: &mut F,
    node: &str,
    id: u64,
    tables: &[GuardedTable],
    message: &str,
) -> Result<()> {
    let dialect = fx.dialect(node)?;
    let existing = fx.switch_now(node, id)?;
    let mut control = statements::create_switch_table();
    control.push(statements::add_switch(id));
    fx.run_unlogged(node, &control)?;
    fx.simulate(Change::Switch(
        node.to_string(),
        id,
        Some(existing.unwrap_or(SwitchMode::Off)),
    ));
    // The guards go ahead of the triggers the tables have; a trigger created or dropped
    // by the application meanwhile can leave a guard behind one (or name one that is gone):
    // read again and install again, a few times.
    let mut tries = 0;
    loop {
        tries += 1;
        let firing_first = firing_first(fx, node, tables)?;
        let mut triggers = vec![statements::lock_wait_timeout(INSTALL_LOCK_WAIT_SECS)];
        for t in tables {
            for event in GuardEvent::ALL {
                let first = firing_first.get(&(t.schema.clone(), t.table.clone(), event));
                triggers.extend(dialect.install_switched_guard(
                    &t.schema,
                    &t.table,
                    event,
                    t.column.as_ref(),
                    &t.keys,
                    id,
                    message,
                    first,
                ));
            }
        }
        match fx.run_unlogged(node, &triggers) {
            Err(e) if names_a_missing_trigger(&e) && tries < INSTALL_TRIES => continue,
            other => other?,
        }
        let behind = guards_behind(fx, node, tables)?;
        if behind.is_empty() {
            break;
        }
        if tries >= INSTALL_TRIES {
            return Err(Error::Refused(format!(
                "{node}: the switched guard of {} is not the first BEFORE trigger of its table after {tries} tries (triggers are being created there meanwhile); statements prepared on it would fail with error 1146 (MDEV-26048): run the operation again once they are done",
                behind.join(", ")
            )));
        }
    }
    fx.simulate(Change::SwitchGuards(node.to_string(), names(tables), true));
    Ok(())
}

/// How many times [`install`] reads the tables' triggers and installs the guards again
/// when a trigger of the application's own came or went meanwhile.
const INSTALL_TRIES: u32 = 3;

/// An error naming a trigger that is not there (the one a guard was to go ahead of).
fn names_a_missing_trigger(e: &Error) -> bool {
    e.server_code() == Some(4031) || e.to_string().contains("Referenced trigger")
}

/// The tables and events of `tables` whose switched guard is there but not the first
/// BEFORE trigger to fire, as `schema.table (Event)`. (A dry run's guards are not on the
/// server: none is behind.)
fn guards_behind<F: FleetEffects + ?Sized>(
    fx: &mut F,
    node: &str,
    tables: &[GuardedTable],
) -> Result<Vec<String>> {
    let mut schemas: Vec<Ident> = tables.iter().map(|t| t.schema.clone()).collect();
    schemas.sort();
    schemas.dedup();
    let mut chains: HashMap<(Ident, Ident, GuardEvent), Vec<Ident>> = HashMap::new();
    for (schema, trigger) in fx.before_triggers(node, &schemas)? {
        chains
            .entry((schema, trigger.table, trigger.event))
            .or_default()
            .push(trigger.name);
    }
    let mut behind = Vec::new();
    for t in tables {
        for event in GuardEvent::ALL {
            let guard = statements::switched_guard_name(&t.table, event);
            let chain = chains.get(&(t.schema.clone(), t.table.clone(), event));
            if chain.is_some_and(|c| c.contains(&guard) && c[0] != guard) {
                behind.push(format!("{}.{} ({event:?})", t.schema, t.table));
            }
        }
    }
    Ok(behind)
}

/// For each table and event of `tables` with a BEFORE trigger other than its switched
/// guard, the one of those that fires first: the guard goes ahead of it (see
/// [`statements::switched_guard_trigger`] for why it must not go behind it).
fn firing_first<F: FleetEffects + ?Sized>(
    fx: &mut F,
    node: &str,
    tables: &[GuardedTable],
) -> Result<HashMap<(Ident, Ident, GuardEvent), Ident>> {
    let mut schemas: Vec<Ident> = tables.iter().map(|t| t.schema.clone()).collect();
    schemas.sort();
    schemas.dedup();
    let mut first = HashMap::new();
    for (schema, trigger) in fx.before_triggers(node, &schemas)? {
        if trigger.name == statements::switched_guard_name(&trigger.table, trigger.event) {
            continue;
        }
        first
            .entry((schema, trigger.table, trigger.event))
            .or_insert(trigger.name);
    }
    Ok(first)
}

/// The tables as (schema, table) names, as the model keeps them.
fn names(tables: &[GuardedTable]) -> Vec<(String, String)> {
    tables
        .iter()
        .map(|t| (t.schema.to_string(), t.table.to_string()))
        .collect()
}

/// The mode switch `id` stands in on `node` now; None when it does not exist.
pub fn mode<F: FleetEffects + ?Sized>(
    fx: &mut F,
    node: &str,
    id: u64,
) -> Result<Option<SwitchMode>> {
    fx.switch_now(node, id)
}

/// Sets switch `id` on `node` to `mode`, waiting at most `wait_secs` for the open
/// transactions that wrote its guarded tables (error 1205 when one held it longer: the
/// switch is then unchanged). A switch that does not exist is not created: its guards go
/// on refusing every write, the safe side; [`install`] comes first.
pub fn set<F: FleetEffects + ?Sized>(
    fx: &mut F,
    node: &str,
    id: u64,
    mode: SwitchMode,
    wait_secs: u64,
) -> Result<()> {
    fx.run_unlogged(
        node,
        &[
            statements::row_lock_wait_timeout(wait_secs),
            statements::set_switch(id, mode),
        ],
    )?;
    fx.simulate(Change::Switch(node.to_string(), id, Some(mode)));
    Ok(())
}

/// Removes the switched guards of `tables` from `node`, then switch `id` (in that order:
/// a guard left without its row would refuse every write).
pub fn remove<F: FleetEffects + ?Sized>(
    fx: &mut F,
    node: &str,
    id: u64,
    tables: &[GuardedTable],
) -> Result<()> {
    let mut drops = vec![statements::lock_wait_timeout(INSTALL_LOCK_WAIT_SECS)];
    for t in tables {
        for event in GuardEvent::ALL {
            drops.push(statements::drop_trigger_if_exists(
                &t.schema,
                &statements::switched_guard_name(&t.table, event),
            ));
        }
    }
    fx.run_unlogged(node, &drops)?;
    fx.simulate(Change::SwitchGuards(node.to_string(), names(tables), false));
    if fx.switch_now(node, id)?.is_some() {
        fx.run_unlogged(node, &[statements::remove_switch(id)])?;
        fx.simulate(Change::Switch(node.to_string(), id, None));
    }
    Ok(())
}
