//! What recorded effects changed on the servers, kept in memory: the dry run's overlay on
//! what it reads from the real servers (a node it has not changed is read), and the whole
//! truth of the fake fleet (a node it has not changed holds nothing).

use super::{Change, ChannelState};
use crate::ops::fence::Fenced;
use crate::server::statements::SwitchMode;
use std::collections::{HashMap, HashSet};

/// The servers as the recorded effects left them, per node.
#[derive(Debug, Clone, Default)]
pub struct FleetModel {
    /// Whether a schema exists, as the effects left it: (node, schema).
    schemas: HashMap<(String, String), bool>,
    /// Where a channel stands: (node, channel).
    channels: HashMap<(String, String), ChannelState>,
    /// The hidden names the shard fence gave tables, per node: (schema, hidden name).
    hidden: HashMap<String, HashSet<(String, String)>>,
    /// The own names of the tables hidden now, per node: (schema, table).
    hidden_originals: HashMap<String, HashSet<(String, String)>>,
    /// A node's read-only flag.
    read_only: HashMap<String, bool>,
    /// Switches: (node, id) → its mode, None once removed.
    switches: HashMap<(String, u64), Option<SwitchMode>>,
    /// Tables whose switched guards the effects installed (true) or dropped (false), per
    /// node: (schema, table).
    switch_guards: HashMap<String, HashMap<(String, String), bool>>,
}

impl FleetModel {
    /// Records what one effect changed.
    pub fn apply(&mut self, change: Change) {
        match change {
            Change::Schemas(node, schemas, exist) => {
                for s in schemas {
                    self.schemas.insert((node.clone(), s), exist);
                }
            }
            Change::Channel(node, channel, state) => {
                self.channels.insert((node, channel), state);
            }
            Change::ReadOnly(node, on) => {
                self.read_only.insert(node, on);
            }
            Change::Switch(node, id, mode) => {
                self.switches.insert((node, id), mode);
            }
            Change::SwitchGuards(node, tables, present) => {
                let guards = self.switch_guards.entry(node).or_default();
                for t in tables {
                    guards.insert(t, present);
                }
            }
            Change::Hidden(node, fenced, hidden) => {
                let set = self.hidden.entry(node.clone()).or_default();
                let originals = self.hidden_originals.entry(node).or_default();
                for f in fenced {
                    let hidden_name = (f.schema.to_string(), f.hidden.to_string());
                    let own_name = (f.schema.to_string(), f.table.to_string());
                    if hidden {
                        set.insert(hidden_name);
                        originals.insert(own_name);
                    } else {
                        set.remove(&hidden_name);
                        originals.remove(&own_name);
                    }
                }
            }
        }
    }

    /// Whether `schema` exists on `node`; None when no effect touched it.
    pub fn schema(&self, node: &str, schema: &str) -> Option<bool> {
        self.schemas
            .get(&(node.to_string(), schema.to_string()))
            .copied()
    }

    /// Where `channel` stands on `node`; None when no effect touched it.
    pub fn channel(&self, node: &str, channel: &str) -> Option<ChannelState> {
        self.channels
            .get(&(node.to_string(), channel.to_string()))
            .copied()
    }

    /// The entries of `fenced` hidden on `node`; None when no fence effect touched it.
    pub fn hidden(&self, node: &str, fenced: &[Fenced]) -> Option<Vec<Fenced>> {
        let set = self.hidden.get(node)?;
        Some(
            fenced
                .iter()
                .filter(|f| set.contains(&(f.schema.to_string(), f.hidden.to_string())))
                .cloned()
                .collect(),
        )
    }

    /// Whether `table` of `schema` is hidden on `node` now (under its hidden name).
    pub fn is_hidden(&self, node: &str, schema: &str, table: &str) -> bool {
        self.hidden_originals
            .get(node)
            .is_some_and(|s| s.contains(&(schema.to_string(), table.to_string())))
    }

    /// Switch `id` on `node`: None when no effect touched it, Some(None) once removed.
    pub fn switch(&self, node: &str, id: u64) -> Option<Option<SwitchMode>> {
        self.switches.get(&(node.to_string(), id)).copied()
    }

    /// Whether the effects installed (true) or dropped (false) the switched guards of
    /// `schema.table` on `node`; None when they did neither.
    pub fn switch_guarded(&self, node: &str, schema: &str, table: &str) -> Option<bool> {
        self.switch_guards
            .get(node)
            .and_then(|g| g.get(&(schema.to_string(), table.to_string())))
            .copied()
    }

    /// `node`'s read-only flag; None when no effect set it.
    pub fn read_only(&self, node: &str) -> Option<bool> {
        self.read_only.get(node).copied()
    }
}
