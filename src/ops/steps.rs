//! The move's steps as standalone commands, for operators who drive the procedure by hand.
//! Each checks its preconditions and is idempotent; `lock` is journaled so `unlock` (and any
//! other operation) knows a fence is up.

use crate::config::Inventory;
use crate::copy::{self, CopyReport, Method, SchemaPair};
use crate::directory::journal::{NewOperation, OpKind, OpState, OperationParams};
use crate::directory::{Directory, ShardState};
use crate::error::{Error, Result};
use crate::ident::{Channel, Ident};
use crate::ops::effects::{catch_up, copy_between, ChannelState, CopyRequest, Fleet, FleetEffects};
use crate::playbook::Fence;
use crate::server::{BinlogPosition, ConnectSpec, Filters, Server, SourceSpec, StartAt};
use std::path::Path;
use std::time::Duration;

fn shard_pairs(
    inv: &Inventory,
    shard_id: u32,
) -> Result<(crate::directory::Shard, Vec<SchemaPair>)> {
    let snap = Directory::open(inv)?.load()?;
    let shard = snap.shard(shard_id)?.clone();
    let pairs = snap
        .shard_schemas(&shard)
        .iter()
        .map(|s| {
            let id = Ident::new("schema", s)?;
            Ok(SchemaPair {
                from: id.clone(),
                to: id,
            })
        })
        .collect::<Result<_>>()?;
    Ok((shard, pairs))
}

/// `backup`: copies the shard's schemas into a node (native, dump or physical), or dumps them to a
/// directory, and returns the coordinates the copy matches.
pub fn backup(
    inv: &Inventory,
    shard_id: u32,
    method: Method,
    into: Option<&str>,
    to_dir: Option<&Path>,
    workers: usize,
) -> Result<CopyReport> {
    let (shard, pairs) = shard_pairs(inv, shard_id)?;
    let source = ConnectSpec::for_node(inv, inv.node(&shard.node)?)?;
    match (into, to_dir) {
        (Some(node), None) => {
            if node == shard.node {
                return Err(Error::Usage(format!(
                    "shard {shard_id} already lives on {node}"
                )));
            }
            let target = ConnectSpec::for_node(inv, inv.node(node)?)?;
            let mut t = Server::connect(&target)?;
            for p in &pairs {
                if t.schema_exists(&p.to)? {
                    return Err(Error::Refused(format!(
                        "the target {node} already has a schema {}",
                        p.to
                    )));
                }
            }
            if method == Method::Physical {
                // Its staging directory is the shard's: not while an operation copies it.
                crate::ops::mover::refuse_busy(inv, &[shard_id])?;
                // The same refusals as a move's preflight, before any file is written.
                let mut s = Server::connect(&source)?;
                let flavors = (s.flavor(), t.flavor());
                let checks =
                    copy::physical::preflight(inv, &shard.node, node, &pairs, flavors, &mut s)?;
                copy::physical::preflight_target(node, &mut t, &checks)?;
                let sizes = s.schema_sizes()?;
                let needed = pairs
                    .iter()
                    .filter_map(|p| sizes.get(p.from.as_str()))
                    .map(|z| z.bytes)
                    .sum::<u64>()
                    + checks.backup_overhead_bytes;
                crate::remote::node::check_free_space(inv, node, needed, true)?;
            }
            copy_between(
                inv,
                CopyRequest {
                    source: &shard.node,
                    target: node,
                    pairs: &pairs,
                    method,
                    workers,
                    progress: &copy::native::Progress::default(),
                    into_tables: None,
                    rows_where: None,
                    without_triggers: false,
                },
            )
        }
        (None, Some(dir)) => {
            if method != Method::Dump {
                return Err(Error::Usage(
                    "--to DIR writes a dump file: use --method dump".into(),
                ));
            }
            std::fs::create_dir_all(dir)
                .map_err(|e| Error::io(format!("cannot create {}", dir.display()), e))?;
            let file = dir.join(format!("shard_{shard_id}.sql"));
            copy::dump::copy(&source, None, Some(&file), &pairs)
        }
        _ => Err(Error::Usage("give --into NODE or --to DIR".into())),
    }
}

/// Parses `FILE:POS` or a GTID set.
pub fn parse_start(text: &str) -> Result<StartAt> {
    match text.parse::<BinlogPosition>() {
        Ok(p) => Ok(StartAt::Position(p)),
        Err(_) => {
            crate::ident::check_gtid_set(text)?;
            Ok(StartAt::GtidAutoPosition)
        }
    }
}

/// `change-master`: creates (or re-points) a channel on `node` reading from `from`.
pub fn change_master(
    inv: &Inventory,
    node: &str,
    channel: &Channel,
    from: &str,
    start: StartAt,
    and_start: bool,
) -> Result<()> {
    if node == from {
        return Err(Error::Usage(format!(
            "a node cannot replicate from itself ({node})"
        )));
    }
    let src = inv.node(from)?;
    let creds = inv.replication_credentials()?;
    let spec = SourceSpec {
        host: src.host().to_string(),
        port: src.port(),
        user: creds.user,
        password: creds.password.expose().to_string(),
        start,
        connect_retry_secs: 1,
        tls: src.channel_tls()?,
    };
    let mut fleet = Fleet::new(inv);
    fleet.change_source(node, channel, &spec)?;
    if and_start {
        fleet.start_channel(node, channel)?;
    }
    Ok(())
}

/// Where a `filter` by hand puts the filter besides the running channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Persist {
    /// Only the running channel (lost at the server's next restart).
    No,
    /// Also the node's option file, then the server is restarted through its restart
    /// command and waited for (the chapter's restart path).
    Write,
    /// Remove shardctl's block for this channel from the option file again, leaving the
    /// file as it was (the chapter's last step; no restart).
    Remove,
}

/// `filter`: sets a channel's filters; returns a warning when its source logs statements.
pub fn filter(
    inv: &Inventory,
    node: &str,
    channel: &Channel,
    filters: &Filters,
    persist: Persist,
) -> Result<Option<String>> {
    let mut fleet = Fleet::new(inv);
    if persist == Persist::Remove {
        let lines = fleet
            .dialect(node)?
            .persisted_filter_lines(channel, filters)?;
        let edit = crate::remote::node::OptionEdit {
            tag: channel.to_string(),
            lines,
        };
        fleet.unpersist_options(node, &edit)?;
        return Ok(None);
    }
    if fleet.channel_state(node, channel)? == ChannelState::Absent {
        return Err(Error::Usage(format!(
            "node {node}: channel {channel} does not exist; create it (change-master) before setting filters"
        )));
    }
    fleet.set_filters(node, channel, filters)?;
    if persist == Persist::Write {
        if inv.holds_directory(node) {
            return Err(Error::Refused(format!(
                "{node} holds the sharding directory: restarting it would stop every operation's journal; the filter was set on the running channel only"
            )));
        }
        let lines = fleet
            .dialect(node)?
            .persisted_filter_lines(channel, filters)?;
        let edit = crate::remote::node::OptionEdit {
            tag: channel.to_string(),
            lines,
        };
        fleet.persist_options(node, &edit)?;
        fleet.restart_server(node)?;
    }
    let status = fleet.reader(node)?.channel_status(channel)?;
    let mut warning = None;
    if let Some(st) = status {
        let source = inv
            .nodes()
            .find(|n| format!("{}:{}", n.host(), n.port()) == st.source);
        if let Some(n) = source {
            let fmt = Server::connect_node(inv, n.name)?.settings()?.binlog_format;
            if fmt != "ROW" {
                warning = Some(format!(
                    "the source {} logs in {fmt} format: statements that name tables through another default schema can slip past or around these filters; use ROW",
                    n.name
                ));
            }
        }
    }
    Ok(warning)
}

/// `wait`: until the channel applied `position`, or its lag is below `lag_below` seconds.
pub fn wait(
    inv: &Inventory,
    node: &str,
    channel: &Channel,
    position: Option<&BinlogPosition>,
    lag_below: Option<u64>,
    timeout: Duration,
) -> Result<()> {
    let mut fleet = Fleet::new(inv);
    match (position, lag_below) {
        (Some(p), None) => fleet.reader(node)?.wait_for_position(channel, p, timeout),
        (None, Some(lag)) => {
            // The same catch-up as a move's: the channel's source is found by address.
            let st = fleet
                .reader(node)?
                .channel_status(channel)?
                .ok_or_else(|| Error::Usage(format!("node {node} has no channel {channel}")))?;
            let source = inv
                .nodes()
                .find(|n| format!("{}:{}", n.host(), n.port()) == st.source)
                .map(|n| n.name.to_string())
                .ok_or_else(|| {
                    Error::Usage(format!(
                        "channel {channel} on {node} reads from {}, which is no node of the inventory",
                        st.source
                    ))
                })?;
            catch_up(&mut fleet, &source, node, channel, lag, timeout).map(|_| ())
        }
        _ => Err(Error::Usage("give --position or --lag-below".into())),
    }
}

/// `lock`: raises a fence on the shard's node, journaled as a `lock` operation that stays
/// open (without an owner) until `unlock`. Returns the operation and the source position
/// read after the fence.
pub fn lock(
    inv: &Inventory,
    shard_id: u32,
    fence: Fence,
    timeout_secs: u64,
) -> Result<(u64, BinlogPosition)> {
    if fence == Fence::Switch {
        return Err(Error::Usage(
            "the hand lock takes --fence shard or read-only: a switch fence's guards are installed by the move or split that raises it".into(),
        ));
    }
    let (shard, pairs) = shard_pairs(inv, shard_id)?;
    let mut dir = Directory::open(inv)?;
    let params: OperationParams = OperationParams {
        fence: Some(fence),
        ..OperationParams::default()
    };
    let lease = dir.create_operation(&NewOperation {
        kind: OpKind::Lock,
        shard_id,
        source: &shard.node,
        target: &shard.node,
        params: &params,
        steps: &[("lock".into(), serde_json::json!({"fence": fence}))],
        parent: None,
    })?;
    dir.step_started(&lease, 0, None)?;
    let mut fleet = Fleet::new(inv);
    let node = shard.node.clone();
    // What is about to be raised is journaled first, so `unlock` finds it whatever
    // happens next.
    dir.step_done(&lease, 0, &serde_json::json!({"fence": fence}), None)?;
    let raised = (|| -> Result<serde_json::Value> {
        match fence {
            Fence::ReadOnly => {
                let mut probe = Server::connect_node(inv, &shard.node)?;
                let was = dir.read_only_fence_join(&lease, &shard.node, || {
                    Ok(probe.settings()?.read_only)
                })?;
                fleet.set_read_only(&node, true, timeout_secs)?;
                Ok(serde_json::json!({"fence": fence, "was_read_only": was}))
            }
            Fence::Switch => Err(Error::Internal(
                "a hand lock never raises a switch fence".into(),
            )),
            Fence::Shard => {
                let mapping = crate::ops::fence::mapping(fleet.reader(&node)?, &pairs, lease.op)?;
                dir.step_done(
                    &lease,
                    0,
                    &serde_json::json!({"fence": fence, "fenced_tables": mapping}),
                    None,
                )?;
                fleet.raise_shard_fence(&node, &mapping, timeout_secs)?;
                Ok(serde_json::json!({"fence": fence, "fenced_tables": mapping}))
            }
        }
    })();
    let mut outputs = match raised {
        Ok(o) => o,
        Err(e) => {
            if fence == Fence::ReadOnly {
                let _ = fleet.dialect(&node).and_then(|d| {
                    let writable =
                        d.set_read_only(false, crate::server::statements::FENCE_LOCK_WAIT_SECS);
                    dir.read_only_fence_leave(&lease, &node, || {
                        fleet.run(&node, &writable).map(|_| ())
                    })
                });
            } else if let Ok(rec) = dir.operation(lease.op) {
                // The RENAME may have happened although its reply was lost: put the tables
                // back, or nobody could (the operation ends aborted).
                let fenced: Vec<crate::ops::fence::Fenced> = rec
                    .steps
                    .first()
                    .and_then(|s| serde_json::from_value(s.outputs["fenced_tables"].clone()).ok())
                    .unwrap_or_default();
                let _ = fleet.lower_shard_fence(&node, &fenced);
            }
            let _ = dir.step_failed(&lease, 0, &e.to_string());
            let _ = dir.release_operation(&lease, OpState::Aborted, Some(&e.to_string()), None);
            return Err(e);
        }
    };
    let position = fleet.coordinates(&node)?.position;
    outputs["final_position"] = serde_json::to_value(&position).unwrap_or_default();
    dir.step_done(&lease, 0, &outputs, None)?;
    dir.set_shard_state_leased(&lease, shard_id, ShardState::ReadOnly)?;
    dir.release_operation(&lease, OpState::Running, None, None)?;
    Ok((lease.op, position))
}

/// `unlock`: lifts the fence a `lock` operation raised on the shard.
pub fn unlock(inv: &Inventory, shard_id: u32) -> Result<u64> {
    let mut dir = Directory::open(inv)?;
    let op = dir
        .active_operations()?
        .into_iter()
        .find(|o| o.shard_id == Some(shard_id) && o.kind == OpKind::Lock)
        .ok_or_else(|| {
            Error::Usage(format!(
                "shard {shard_id} has no fence raised by `shardctl lock`"
            ))
        })?;
    let (lease, _) = dir.claim_operation(op.id, "unlock")?;
    let rec = dir.operation(op.id)?;
    let outputs = rec
        .steps
        .first()
        .map(|s| s.outputs.clone())
        .unwrap_or_default();
    let node = rec.source.clone().unwrap_or_default();
    inv.node(&node)?;
    let mut fleet = Fleet::new(inv);
    let fence = rec.params::<serde_json::Value>()?.fence.ok_or_else(|| {
        Error::Internal(format!(
            "operation {}: the journal holds no fence for it",
            op.id
        ))
    })?;
    match fence {
        Fence::ReadOnly => {
            let writable = fleet
                .dialect(&node)?
                .set_read_only(false, crate::server::statements::FENCE_LOCK_WAIT_SECS);
            dir.read_only_fence_leave(&lease, &node, || fleet.run(&node, &writable).map(|_| ()))?;
        }
        Fence::Shard => {
            let fenced = crate::ops::fence::journaled_mapping(op.id, &outputs["fenced_tables"])?;
            fleet.lower_shard_fence(&node, &fenced)?;
        }
        Fence::Switch => {
            return Err(Error::Usage(format!(
                "operation {}: a hand lock never raises a switch fence; the journal was edited",
                op.id
            )))
        }
    }
    dir.set_shard_state_leased(&lease, shard_id, ShardState::Online)?;
    dir.release_operation(&lease, OpState::Done, None, None)?;
    Ok(op.id)
}

/// `flip`: points the shard at `to` — only for a move that verified `to`, taken over from
/// its (dead or finished) owner for the flip and released again for `resume`.
pub fn flip(inv: &Inventory, shard_id: u32, to: &str) -> Result<u64> {
    let mut dir = Directory::open(inv)?;
    let op = dir
        .active_operations()?
        .into_iter()
        .find(|o| o.shard_id == Some(shard_id) && o.kind == OpKind::Move)
        .ok_or_else(|| {
            Error::Refused(format!(
                "shard {shard_id} has no move in progress that verified {to}"
            ))
        })?;
    let rec = dir.operation(op.id)?;
    if rec.target.as_deref() != Some(to) {
        return Err(Error::Refused(format!(
            "operation {} moves shard {shard_id} to {}, not {to}",
            op.id,
            rec.target.unwrap_or_default()
        )));
    }
    crate::ops::mover::flip_by_hand(inv, op.id)
}

/// `drop-source`: removes the shard's old copy from `node` — refused while the directory
/// still places the shard there.
pub fn drop_source(inv: &Inventory, shard_id: u32, node: &str) -> Result<Vec<String>> {
    let (shard, pairs) = shard_pairs(inv, shard_id)?;
    if shard.node == node {
        return Err(Error::Refused(format!(
            "shard {shard_id} lives on {node}: drop-source only removes a copy the directory no longer points at"
        )));
    }
    let mut fleet = Fleet::new(inv);
    let mut present = Vec::new();
    for p in &pairs {
        if fleet.schema_exists(node, &p.from)? {
            present.push(p.from.clone());
        }
    }
    fleet.drop_schemas(node, &present, false)?;
    Ok(present.iter().map(|s| s.to_string()).collect())
}
