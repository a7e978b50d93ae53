//! Nodes as replication groups: the preflight's checks of the target's replicas (the
//! inventory's `replicas:`), kept apart from the procedure's other checks.

use super::Mover;
use crate::error::{Error, Result};
use crate::ops::effects::Effects;
use crate::server::replication::ServerSettings;
use crate::server::{statements, Server};

impl<E: Effects> Mover<'_, E> {
    /// Refuses a target whose replicas would miss what the move writes there: the rows
    /// the channel applies reach them only through the target's binary log (on, ROW
    /// format, with `log_slave_updates`). Each replica must answer and replicate from the
    /// target with both threads running, and with the physical method have its files
    /// within reach (the copy imports into each). Read-only; the replicas checked, for the
    /// journal.
    pub(super) fn replica_group_preflight(
        &mut self,
        target_settings: &ServerSettings,
    ) -> Result<serde_json::Value> {
        let target = self.target.clone();
        let node = self.inv.node(&target)?;
        let replicas = node.spec.replicas.clone();
        if replicas.is_empty() {
            return Ok(serde_json::json!([]));
        }
        let labels = replicas
            .iter()
            .map(|r| r.label())
            .collect::<Vec<_>>()
            .join(", ");
        let refuse = |why: String| {
            Error::Refused(format!(
                "the target {target} has replicas ({labels}): {why}"
            ))
        };
        if !target_settings.log_bin {
            return Err(refuse(
                "its binary log is off, so the rows the channel applies would never reach them"
                    .into(),
            ));
        }
        if target_settings.binlog_format != "ROW" {
            return Err(refuse(format!(
                "it logs in {} format; its replicas need ROW to receive the channel's rows exactly",
                target_settings.binlog_format
            )));
        }
        let log_replica_updates = match target_settings.gtid {
            Some(g) => g.log_slave_updates,
            None => {
                self.fx
                    .reader(&target)?
                    .first::<i64>(&statements::log_replica_updates())?
                    .unwrap_or(0)
                    != 0
            }
        };
        if !log_replica_updates {
            return Err(refuse(
                "log_slave_updates (log_replica_updates) is off there, so the rows the channel applies would never reach them: turn it on (a restart) first".into(),
            ));
        }
        let address = node.address();
        let mut checked = Vec::new();
        for r in &replicas {
            let label = r.label();
            let mut server = Server::connect_replica(self.inv, &target, r)
                .map_err(|e| refuse(format!("replica {label} does not answer: {e}")))?;
            let channel = server
                .channels()?
                .into_iter()
                .find(|c| {
                    c.source == address || c.source_server_id == Some(target_settings.server_id)
                })
                .ok_or_else(|| {
                    refuse(format!("replica {label} does not replicate from {address}"))
                })?;
            if channel.io_running != "Yes" || !channel.sql_running {
                return Err(refuse(format!(
                    "replica {label} does not replicate from it now (receiver {}, applier {}){}",
                    channel.io_running,
                    if channel.sql_running {
                        "running"
                    } else {
                        "stopped"
                    },
                    [channel.last_io_error, channel.last_sql_error]
                        .iter()
                        .filter(|e| !e.is_empty())
                        .map(|e| format!(": {e}"))
                        .collect::<String>()
                )));
            }
            // A copy dropped unlogged on the target earlier (an abort, a revert) stays on
            // its replicas: the new copy's logged CREATEs would then stop them or mix
            // with stale tables.
            for p in self.pairs.clone() {
                // A merge copies into the survivor's schemas, which the target and its
                // replicas hold: only a schema the target lacks must be absent there too.
                if !self.fx.schema_exists(&target, &p.to)? && server.schema_exists(&p.to)? {
                    return Err(refuse(format!(
                        "replica {label} already has {} (left by an earlier copy dropped on {target} alone): drop it there first",
                        p.to
                    )));
                }
            }
            if self.copies_physically() {
                self.physical_replica_preflight(r, &mut server, target_settings.server_id)
                    .map_err(|e| match e {
                        Error::Refused(why) => refuse(why),
                        other => refuse(format!("replica {label}: {other}")),
                    })?;
            }
            checked.push(serde_json::json!({
                "replica": label,
                "seconds_behind": channel.seconds_behind,
            }));
        }
        Ok(serde_json::Value::Array(checked))
    }

    /// The physical copy imports the prepared backup into each of the target's replicas
    /// itself (unlogged there): refuses, with the reason, a replica whose files it cannot
    /// reach (an entry naming a node, no ssh for a host elsewhere, no datadir), one that is
    /// not read-only or is the target, or one whose server could not import the target's
    /// tablespaces (another major version or page size).
    fn physical_replica_preflight(
        &mut self,
        replica: &crate::config::ReplicaSpec,
        server: &mut Server,
        target_server_id: u64,
    ) -> Result<()> {
        let label = replica.label();
        let crate::config::ReplicaSpec::Server(entry) = replica else {
            return Err(Error::Refused(format!(
                "the physical copy imports into each replica itself, and replica {label} is listed as a node of the inventory (an abort drops the copy only on replicas listed by address); list it by address (host, port, ssh) or use method native or dump"
            )));
        };
        let settings = server.settings()?;
        if settings.server_id == target_server_id {
            return Err(Error::Refused(format!(
                "replica {label} is the target itself (server_id {target_server_id}); fix the inventory's replicas:"
            )));
        }
        if !settings.read_only {
            return Err(Error::Refused(format!(
                "replica {label} is writable (read_only off): the physical copy imports into read-only replicas only"
            )));
        }
        let target = self.target.clone();
        let want = self.fx.dialect(&target)?.flavor();
        let have = server.dialect().flavor();
        if (have.version.major, have.version.minor) != (want.version.major, want.version.minor) {
            return Err(Error::Refused(format!(
                "replica {label} runs {have} and {target} runs {want}: tablespaces move only between servers of one major version; use method native or dump"
            )));
        }
        let page: Option<u64> = server.first(&statements::innodb_page_size())?;
        let target_page: Option<u64> = self
            .fx
            .reader(&target)?
            .first(&statements::innodb_page_size())?;
        if page != target_page {
            return Err(Error::Refused(format!(
                "replica {label} has innodb_page_size {}, {target} {}: tablespaces cannot move between them; use method native or dump",
                page.unwrap_or(0),
                target_page.unwrap_or(0)
            )));
        }
        let host = crate::remote::host_for_replica(&target, entry)?;
        let datadir: Option<String> = server.first(&statements::datadir())?;
        let datadir = datadir.filter(|d| !d.trim().is_empty()).ok_or_else(|| {
            Error::Refused(format!(
                "replica {label} does not say where its data directory is"
            ))
        })?;
        if !host.exists(
            std::path::Path::new(&datadir),
            crate::remote::node::FILE_TIMEOUT,
        )? {
            return Err(Error::Refused(format!(
                "replica {label}'s data directory {datadir} is not on {}: the physical copy places its files there",
                host.describe()
            )));
        }
        Ok(())
    }

    /// Refuses a revert window when the source has replicas: the window keeps the old
    /// copy current through a reverse channel into trash schemas made unlogged, which the
    /// replicas do not have (with `log_slave_updates` their applier would stop at the first
    /// such row; without, they would miss the window's writes a revert then serves).
    pub(super) fn source_group_preflight(&mut self) -> Result<()> {
        if self.playbook.revert_window_params().is_none() {
            return Ok(());
        }
        let source = self.source.clone();
        let replicas = &self.inv.node(&source)?.spec.replicas;
        if replicas.is_empty() {
            return Ok(());
        }
        Err(Error::Refused(format!(
            "the source {source} has replicas ({}): a revert window keeps the old copy current under hidden schema names its replicas do not have; move without a revert window",
            replicas
                .iter()
                .map(|r| r.label())
                .collect::<Vec<_>>()
                .join(", ")
        )))
    }

    /// Refuses, before anything changes, a source whose listed replicas (by address)
    /// could not lose the old copy after the flip: each must answer, be read-only and
    /// replicate from the source. Checked only after the flip, a bad entry would leave the
    /// operation unable to finish until the inventory or the replica is mended.
    pub(super) fn source_replicas_preflight(&mut self) -> Result<()> {
        if self.same_node() || !self.playbook.drops_old_copy() {
            return Ok(());
        }
        let source = self.source.clone();
        let source_server_id = self.fx.settings(&source)?.server_id;
        let node = self.inv.node(&source)?;
        let address = node.address();
        for r in node.spec.replicas.clone() {
            if !matches!(r, crate::config::ReplicaSpec::Server(_)) {
                continue;
            }
            let label = r.label();
            let refuse = |why: String| {
                Error::Refused(format!(
                    "the source {source}'s replica {label} {why}: it could not lose the old copy after the flip; mend it or take it out of {source}'s replicas:"
                ))
            };
            let mut server = Server::connect_replica(self.inv, &source, &r)
                .map_err(|e| refuse(format!("does not answer ({e})")))?;
            if !server.settings()?.read_only {
                return Err(refuse("is writable (read_only off)".into()));
            }
            let replicates = server
                .channels()?
                .iter()
                .any(|c| c.source == address || c.source_server_id == Some(source_server_id));
            if !replicates {
                return Err(refuse(format!("does not replicate from {address}")));
            }
        }
        Ok(())
    }

    /// After a rollback dropped the copy on the target (unlogged, as every drop of a
    /// copy), drops it on the target's replicas listed by address too, once each has
    /// applied the target's binary log so far: the copy reached them through it, and a
    /// later copy of the shard onto that node would otherwise be refused (or stop them).
    /// Best effort: a replica that cannot be reached is named in a warning, and the next
    /// move onto the node refuses until it is mended.
    pub(super) fn drop_on_target_replicas(
        &mut self,
        target: &str,
        schemas: &[crate::ident::Ident],
    ) {
        let Ok(node) = self.inv.node(target) else {
            return;
        };
        let replicas: Vec<_> = node
            .spec
            .replicas
            .iter()
            .filter(|r| matches!(r, crate::config::ReplicaSpec::Server(_)))
            .cloned()
            .collect();
        if replicas.is_empty() || schemas.is_empty() {
            return;
        }
        let source = self.source.clone();
        let ready = self
            .fx
            .coordinates(target)
            .and_then(|c| Ok((c.position, self.fx.settings(&source)?.server_id)));
        let (after, source_id) = match ready {
            Ok(v) => v,
            Err(e) => {
                crate::output::log(
                    0,
                    &format!("warning: the copy stays on {target}'s replicas: {e}"),
                );
                return;
            }
        };
        for r in &replicas {
            if let Err(e) =
                self.fx
                    .drop_schemas_on_replica(target, r, schemas, &after, &[source_id])
            {
                crate::output::log(
                    0,
                    &format!(
                        "warning: the copy stays on {target}'s replica {}: {e}; drop it there by hand",
                        r.label()
                    ),
                );
            }
        }
    }
}
