//! The names an operation gives what it leaves on the nodes: its replication channel on the
//! target, the revert window's reverse channel on the old node, and the trash schemas the
//! old copy's tables wait in before they are dropped.
//!
//! Two directories may share nodes (two applications on one fleet), and each numbers its
//! operations from 1: with names made of the operation id alone, operation 7 of one would
//! re-point operation 7's channel of the other (`CHANGE MASTER` on an existing connection)
//! or drop its trash. Every directory therefore has a random id (schema version 8), and an
//! operation journals the id it started under in its parameters (`names`), so the names
//! never change while it runs, even across `init` migrations. Operations journaled before
//! the id existed keep their original names (the legacy scope).

use crate::error::{Error, Result};
use crate::ident::{Channel, Ident};

/// The key of an operation's parameters that holds its [`NameScope`].
pub const PARAMS_KEY: &str = "names";

/// The prefix of every trash schema name (`_shardctl_trash_...`).
pub const TRASH_SCHEMA_PREFIX: &str = "_shardctl_trash_";

/// The part of an operation's names that tells its directory apart from another's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct NameScope(Option<u32>);

impl NameScope {
    /// The names of operations journaled before directories had an id.
    pub const LEGACY: NameScope = NameScope(None);

    /// The scope of new operations of the directory whose id is `directory_id`.
    pub fn of_directory(directory_id: u32) -> NameScope {
        NameScope(Some(directory_id))
    }

    /// The scope an operation journaled in its parameters; legacy when it has none. A value
    /// that is not 8 hexadecimal digits is refused: the journal is read back, and a name
    /// built from an edited value must not reach a server.
    pub fn from_params(params: &serde_json::Value) -> Result<NameScope> {
        match params.get(PARAMS_KEY) {
            None | Some(serde_json::Value::Null) => Ok(NameScope::LEGACY),
            Some(serde_json::Value::String(s))
                if s.len() == 8 && s.bytes().all(|b| b.is_ascii_hexdigit()) =>
            {
                u32::from_str_radix(s, 16)
                    .map(NameScope::of_directory)
                    .map_err(|_| Error::Usage(format!("operation names {s:?} are not valid")))
            }
            Some(other) => Err(Error::Usage(format!(
                "the journal's operation parameter `{PARAMS_KEY}` is {other}, not the directory's 8-digit id: the journal was edited"
            ))),
        }
    }

    /// The value journaled under [`PARAMS_KEY`]; None for the legacy scope.
    pub fn param(&self) -> Option<String> {
        self.0.map(|id| format!("{id:08x}"))
    }

    /// `<id>_` (or nothing for the legacy scope): what every name below carries.
    fn tag(&self) -> String {
        self.param().map(|id| format!("{id}_")).unwrap_or_default()
    }

    /// The channel a move uses on its target: `shardctl_<id>_op<op>`.
    pub fn channel(&self, op: u64) -> Channel {
        Channel::new(&format!("shardctl_{}op{op}", self.tag()))
            .expect("shardctl_<hex>_op<digits> is a valid channel name")
    }

    /// The id of the switch (see [`crate::ops::switch`]) an operation's switched guards
    /// read on a node: the directory's id in the high 32 bits and the operation's in the
    /// low ones, so two directories sharing a node never share a switch.
    pub fn switch_id(&self, op: u64) -> u64 {
        (u64::from(self.0.unwrap_or(0)) << 32) | (op & 0xffff_ffff)
    }

    /// The revert window's channel on the old node, from the new one:
    /// `shardctl_<id>_op<op>_back`.
    pub fn reverse_channel(&self, op: u64) -> Channel {
        Channel::new(&format!("shardctl_{}op{op}_back", self.tag()))
            .expect("shardctl_<hex>_op<digits>_back is a valid channel name")
    }

    /// The schema the old copy's `n`th schema is emptied into on the source:
    /// `_shardctl_trash_<id>_op<op>_<n>`. Dropping a large table takes time and stalls the
    /// server, so the drop waits until the fence is lifted.
    pub fn trash_schema(&self, op: u64, n: usize) -> Ident {
        Ident::new(
            "schema",
            &format!("{TRASH_SCHEMA_PREFIX}{}op{op}_{n}", self.tag()),
        )
        .expect("_shardctl_trash_<hex>_op<digits>_<digits> is a plain identifier of at most 64 characters")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_carry_the_directory_id_and_legacy_ones_do_not() {
        let scoped = NameScope::of_directory(0x00c0ffee);
        assert_eq!(scoped.channel(7).as_str(), "shardctl_00c0ffee_op7");
        assert_eq!(
            scoped.reverse_channel(7).as_str(),
            "shardctl_00c0ffee_op7_back"
        );
        assert_eq!(
            scoped.trash_schema(7, 1).as_str(),
            "_shardctl_trash_00c0ffee_op7_1"
        );
        assert_eq!(scoped.switch_id(7), 0x00c0_ffee_0000_0007);
        assert_eq!(NameScope::LEGACY.switch_id(7), 7);
        assert_eq!(NameScope::LEGACY.channel(7).as_str(), "shardctl_op7");
        assert_eq!(
            NameScope::LEGACY.reverse_channel(7).as_str(),
            "shardctl_op7_back"
        );
        assert_eq!(
            NameScope::LEGACY.trash_schema(7, 0).as_str(),
            "_shardctl_trash_op7_0"
        );
        let other = NameScope::of_directory(0x00c0ffef);
        assert_ne!(scoped.channel(7), other.channel(7));
        assert_ne!(scoped.trash_schema(7, 0), other.trash_schema(7, 0));
        let longest = NameScope::of_directory(u32::MAX);
        longest.trash_schema(u64::MAX, u32::MAX as usize);
        longest.reverse_channel(u64::MAX);
    }

    #[test]
    fn the_scope_round_trips_through_the_params_and_edits_are_refused() {
        let scoped = NameScope::of_directory(0xdeadbeef);
        let params = json!({ PARAMS_KEY: scoped.param() });
        assert_eq!(NameScope::from_params(&params).unwrap(), scoped);
        assert_eq!(
            NameScope::from_params(&json!({})).unwrap(),
            NameScope::LEGACY
        );
        for bad in [
            json!("x`; DROP"),
            json!(7),
            json!("deadbee"),
            json!("deadbeefa"),
        ] {
            assert!(NameScope::from_params(&json!({ PARAMS_KEY: bad })).is_err());
        }
    }
}
