//! The fleet without a journal: the connections and statements of the step subcommands
//! an operator runs by hand (`shardctl step ...`), which [`super::Live`] wraps for a journaled
//! run.

use super::{channel_state_on, visible_tables_on, Change, ChannelState, FleetEffects};
use crate::config::Inventory;
use crate::copy::{self, SchemaPair};
use crate::error::{Error, Result};
use crate::ident::{Channel, Ident};
use crate::ops::fence::Fenced;
use crate::remote::node::{self as host, OptionEdit};
use crate::server::catalog::BeforeTrigger;
use crate::server::statements::SwitchMode;
use crate::server::{statements, Server, Stmt};
use std::collections::HashMap;
use std::time::{Duration, Instant};

pub struct Fleet<'a> {
    inv: &'a Inventory,
    conns: HashMap<String, Server>,
    /// Each connection's session id and its server's start time, journaled with every
    /// intent so a later owner can end a statement this process left running.
    pub(super) sessions: HashMap<String, (u64, i64)>,
}

impl<'a> Fleet<'a> {
    /// No connection yet; each opens on first use.
    pub fn new(inv: &'a Inventory) -> Fleet<'a> {
        Fleet {
            inv,
            conns: HashMap::new(),
            sessions: HashMap::new(),
        }
    }
}

/// The live implementation: journals through the directory under the operation's lease
impl FleetEffects for Fleet<'_> {
    fn two_readers(&mut self, a: &str, b: &str) -> Result<(&mut Server, &mut Server)> {
        self.reader(a)?;
        self.reader(b)?;
        super::two_sessions(&mut self.conns, a, b)
    }

    fn reader(&mut self, node: &str) -> Result<&mut Server> {
        let stale = self.conns.get(node).is_none_or(Server::is_broken);
        if stale {
            let mut s = Server::connect_node(self.inv, node)?;
            let id: u64 = s.first(&statements::connection_id())?.unwrap_or(0);
            let started: i64 = s.first(&statements::server_started_at())?.unwrap_or(0);
            self.sessions.insert(node.to_string(), (id, started));
            self.conns.insert(node.to_string(), s);
        }
        self.conns
            .get_mut(node)
            .ok_or_else(|| Error::Internal(format!("no connection to {node}")))
    }

    fn run(&mut self, node: &str, stmts: &[Stmt]) -> Result<u64> {
        let s = self.reader(node)?;
        let mut n = 0;
        for st in stmts {
            n += s.exec_affected(st)?;
        }
        Ok(n)
    }

    fn run_unlogged(&mut self, node: &str, stmts: &[Stmt]) -> Result<()> {
        self.reader(node)?.exec_unlogged(stmts)
    }

    fn simulate(&mut self, _change: Change) {}

    fn schema_exists(&mut self, node: &str, schema: &Ident) -> Result<bool> {
        self.reader(node)?.schema_exists(schema)
    }

    fn channel_state(&mut self, node: &str, channel: &Channel) -> Result<ChannelState> {
        channel_state_on(self.reader(node)?, channel)
    }

    fn hidden_now(&mut self, node: &str, fenced: &[Fenced]) -> Result<Vec<Fenced>> {
        crate::ops::fence::hidden_now(self.reader(node)?, fenced)
    }

    fn read_only_now(&mut self, node: &str) -> Result<bool> {
        Ok(self.reader(node)?.settings()?.read_only)
    }

    fn visible_tables(&mut self, node: &str, schema: &Ident) -> Result<Vec<Ident>> {
        visible_tables_on(self.reader(node)?, schema)
    }

    fn clear_copy_staging(&mut self, node: &str, pairs: &[SchemaPair]) -> Result<()> {
        copy::physical::clear_staging(self.inv, node, pairs).map(|_| ())
    }

    fn import_on_replica(
        &mut self,
        node: &str,
        replica: &crate::config::ReplicaSpec,
        pairs: &[SchemaPair],
    ) -> Result<copy::physical::ReplicaImport> {
        copy::physical::import_on_replica(self.inv, node, replica, pairs)
    }

    fn switch_now(&mut self, node: &str, id: u64) -> Result<Option<SwitchMode>> {
        super::switch_on(self.reader(node)?, id)
    }

    fn unguarded_tables(&mut self, node: &str, schemas: &[Ident]) -> Result<Vec<(Ident, Ident)>> {
        super::unguarded_on(self.reader(node)?, schemas)
    }

    fn before_triggers(
        &mut self,
        node: &str,
        schemas: &[Ident],
    ) -> Result<Vec<(Ident, BeforeTrigger)>> {
        super::before_triggers_on(self.reader(node)?, schemas)
    }

    fn persist_options(&mut self, node: &str, edit: &OptionEdit) -> Result<()> {
        host::persist(self.inv, node, edit).map(|_| ())
    }

    fn unpersist_options(&mut self, node: &str, edit: &OptionEdit) -> Result<()> {
        host::unpersist(self.inv, node, edit).map(|_| ())
    }

    fn restart_server(&mut self, node: &str) -> Result<()> {
        // The old session dies with the server; the next use opens a new one.
        self.conns.remove(node);
        self.sessions.remove(node);
        let started = Instant::now();
        host::run_restart_command(self.inv, node)?;
        let timeout = Duration::from_secs(self.inv.defaults().restart_timeout_secs);
        let deadline = started + timeout;
        loop {
            crate::signal::check()?;
            let last = match Server::connect_node(self.inv, node) {
                Ok(mut s) => {
                    let uptime: u64 = s.first(&statements::server_uptime())?.unwrap_or(u64::MAX);
                    if uptime <= started.elapsed().as_secs() + 1 {
                        return Ok(());
                    }
                    format!(
                        "it answers with an uptime of {uptime}s: the restart command did not restart it"
                    )
                }
                Err(e) => e.to_string(),
            };
            if Instant::now() >= deadline {
                return Err(Error::Timeout(format!(
                    "node {node} did not answer as restarted within {}s of its restart command (restart_timeout_secs): {last}",
                    timeout.as_secs()
                )));
            }
            std::thread::sleep(Duration::from_millis(250));
        }
    }

    fn drop_schemas_on_replica(
        &mut self,
        node: &str,
        replica: &crate::config::ReplicaSpec,
        schemas: &[Ident],
        after: &crate::server::BinlogPosition,
        live_server_ids: &[u64],
    ) -> Result<usize> {
        let address = self.inv.node(node)?.address();
        let source_server_id = self.reader(node)?.settings()?.server_id;
        let mut server = Server::connect_replica(self.inv, node, replica)?;
        // The last line of defence of a drop that never goes through a binary log: the
        // server answering must be a read-only replica, and none that serves the shard.
        let settings = server.settings()?;
        if live_server_ids.contains(&settings.server_id) {
            return Err(Error::Refused(format!(
                "{node}'s replica {} is the server the shard now lives on (server_id {}): nothing dropped there; fix the inventory's replicas: of {node}",
                replica.label(),
                settings.server_id
            )));
        }
        if !settings.read_only {
            return Err(Error::Refused(format!(
                "{node}'s replica {} is writable (read_only off): a server taking writes is not dropped as a replica; make it read-only or take it out of {node}'s replicas:",
                replica.label()
            )));
        }
        let timeout = Duration::from_secs(self.inv.defaults().wait_timeout_secs);
        server.wait_applied_from_server(&address, Some(source_server_id), after, timeout)?;
        let mut present = Vec::new();
        for schema in schemas {
            if server.schema_exists(schema)? {
                present.push(statements::drop_schema_if_exists(schema));
            }
        }
        if !present.is_empty() {
            server.exec_unlogged(&present)?;
        }
        Ok(present.len())
    }
}
