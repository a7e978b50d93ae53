//! The move's steps as subcommands.

use super::Context;
use crate::copy::Method;
use crate::error::{Error, Result};
use crate::ident::{Channel, Ident};
use crate::ops::steps;

use crate::playbook::Fence;
use crate::server::{BinlogPosition, Filters};
use std::path::PathBuf;
use std::time::Duration;

/// The step subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum StepCommand {
    /// Copy a shard's schemas into a node (or dump them to a directory) with the binlog
    /// coordinates the copy matches.
    #[command(
        after_help = "Example:\n  shardctl backup --shard 3 --into node2\n  shardctl backup --shard 3 --method physical --into node2\n  shardctl backup --shard 3 --method dump --to /var/backups/shards"
    )]
    Backup {
        /// The shard whose schemas to copy (its node is the source).
        #[arg(long)]
        shard: u32,
        /// Copy method.
        #[arg(long, value_enum, default_value_t = Method::Native)]
        method: Method,
        /// Node to copy into.
        #[arg(long, conflicts_with = "to")]
        into: Option<String>,
        /// Directory for a dump file (dump method).
        #[arg(long)]
        to: Option<PathBuf>,
        /// Parallel workers (native).
        #[arg(long, default_value_t = 4, value_parser = super::workers)]
        workers: usize,
    },
    /// Limit a channel to some schemas (wild-do-table `schema.%`), dynamically.
    #[command(
        after_help = "Example:\n  shardctl filter --node node2 --channel shardctl_op7 --schemas employees_3\n  shardctl filter --node node2 --channel c1 --schemas employees_3 --rewrite employees_3:employees_9\n  shardctl filter --node node3 --channel shardctl_op7 --schemas employees_3 --persist\n  shardctl filter --node node3 --channel shardctl_op7 --schemas employees_3 --remove-persisted"
    )]
    Filter {
        /// Node holding the channel.
        #[arg(long)]
        node: String,
        /// The replication channel to filter (`shardctl_opN` for an operation's).
        #[arg(long)]
        channel: String,
        /// Schemas to keep (comma-separated).
        #[arg(long, value_delimiter = ',')]
        schemas: Vec<String>,
        /// replicate-do-db schemas (comma-separated), rarely needed.
        #[arg(long, value_delimiter = ',')]
        do_db: Vec<String>,
        /// Schema renames FROM:TO (comma-separated).
        #[arg(long, value_delimiter = ',')]
        rewrite: Vec<String>,
        /// Also write the filter into the node's option file (its inventory's
        /// option_file, over its host), restart the server with its restart_command and
        /// wait for it: the chapter's restart path. A backup of the file is kept.
        #[arg(long, conflicts_with = "remove_persisted")]
        persist: bool,
        /// Remove the filter that --persist wrote for this channel (give the same
        /// schemas) from the option file, leaving the file as it was; no restart.
        #[arg(long)]
        remove_persisted: bool,
    },
    /// Point a channel on a node at another node's binary log, then start it.
    #[command(
        name = "change-master",
        after_help = "Example:\n  shardctl change-master --node node2 --channel c1 --from node1 --position mysql-bin.000003:4711"
    )]
    ChangeMaster {
        /// Node that replicates.
        #[arg(long)]
        node: String,
        /// The channel to create on the node.
        #[arg(long)]
        channel: String,
        /// Source node.
        #[arg(long)]
        from: String,
        /// FILE:POS, or a GTID set (MySQL auto-positioning).
        #[arg(long)]
        position: String,
        /// Do not start the channel.
        #[arg(long)]
        no_start: bool,
    },
    /// Wait until a channel reached a position or its lag is low enough.
    #[command(
        after_help = "Example:\n  shardctl wait --node node2 --channel c1 --position mysql-bin.000003:9000 --timeout 60\n  shardctl wait --node node2 --channel c1 --lag-below 1 --timeout 600"
    )]
    Wait {
        /// Node holding the channel.
        #[arg(long)]
        node: String,
        /// The channel to wait for.
        #[arg(long)]
        channel: String,
        /// FILE:POS to reach.
        #[arg(
            long,
            conflicts_with = "lag_below",
            required_unless_present = "lag_below"
        )]
        position: Option<String>,
        /// Lag threshold in seconds.
        #[arg(long)]
        lag_below: Option<u64>,
        /// Give up after this many seconds.
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
        timeout: u64,
    },
    /// Raise the write fence on a shard's node (journaled; `unlock` lifts it).
    #[command(
        after_help = "Example:\n  shardctl lock --shard 3 --fence shard\n  shardctl lock --shard 3 --fence read-only"
    )]
    Lock {
        /// The shard to fence, on the node the directory places it on.
        #[arg(long)]
        shard: u32,
        /// `shard` hides the shard's tables; `read-only` makes its whole node read-only.
        #[arg(long, value_enum, default_value_t = Fence::Shard)]
        fence: Fence,
        /// Longest wait for in-flight transactions, seconds.
        #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..))]
        timeout: u64,
    },
    /// Lift the fence `lock` raised.
    #[command(after_help = "Example:\n  shardctl unlock --shard 3")]
    Unlock {
        /// The shard whose fence `lock` raised.
        #[arg(long)]
        shard: u32,
    },
    /// Point the directory at the target of a move that verified it.
    #[command(after_help = "Example:\n  shardctl flip --shard 3 --to node2")]
    Flip {
        /// The shard to point elsewhere.
        #[arg(long)]
        shard: u32,
        /// Target node.
        #[arg(long)]
        to: String,
    },
    /// Drop a shard's old copy from a node the directory no longer points at.
    #[command(
        name = "drop-source",
        after_help = "Example:\n  shardctl drop-source --shard 3 --node node1"
    )]
    DropSource {
        /// The shard whose old copy to drop.
        #[arg(long)]
        shard: u32,
        /// Node holding the old copy.
        #[arg(long)]
        node: String,
    },
}

fn idents(what: &str, names: &[String]) -> Result<Vec<Ident>> {
    names.iter().map(|n| Ident::new(what, n)).collect()
}

pub fn run(ctx: &Context, cmd: StepCommand) -> Result<()> {
    let inv = ctx.inventory()?;
    let say = |command: &str, text: String, json: serde_json::Value| {
        ctx.show(command, json, || crate::outln!("{text}"))
    };
    match cmd {
        StepCommand::Backup {
            shard,
            method,
            into,
            to,
            workers,
        } => {
            let r = steps::backup(&inv, shard, method, into.as_deref(), to.as_deref(), workers)?;
            let pos = r
                .coordinates
                .as_ref()
                .map(|c| c.position.to_string())
                .unwrap_or_default();
            say(
                "backup",
                format!(
                    "shard {shard} copied ({} rows in {} ms); source position {pos}",
                    r.rows, r.millis
                ),
                serde_json::json!({
                    "shard": shard,
                    "rows": r.rows,
                    "elapsed_ms": r.millis,
                    "coordinates": r.coordinates,
                }),
            );
        }
        StepCommand::Filter {
            node,
            channel,
            schemas,
            do_db,
            rewrite,
            persist,
            remove_persisted,
        } => {
            let ch = Channel::new(&channel)?;
            let rewrite_db = rewrite
                .iter()
                .map(|r| {
                    let (a, b) = r.split_once(':').ok_or_else(|| {
                        Error::Usage(format!("--rewrite {r:?}: expected FROM:TO"))
                    })?;
                    Ok((Ident::new("schema", a)?, Ident::new("schema", b)?))
                })
                .collect::<Result<_>>()?;
            let filters = Filters {
                do_db: idents("schema", &do_db)?,
                wild_do_schemas: idents("schema", &schemas)?,
                rewrite_db,
                wild_do_tables: Vec::new(),
            };
            let mode = match (persist, remove_persisted) {
                (true, _) => steps::Persist::Write,
                (false, true) => steps::Persist::Remove,
                (false, false) => steps::Persist::No,
            };
            if let Some(w) = steps::filter(&inv, &node, &ch, &filters, mode)? {
                crate::errln!("shardctl: warning: {w}");
            }
            say(
                "filter",
                format!("channel {channel} on {node} filtered"),
                serde_json::json!({"channel": channel, "node": node}),
            );
        }
        StepCommand::ChangeMaster {
            node,
            channel,
            from,
            position,
            no_start,
        } => {
            let ch = Channel::new(&channel)?;
            steps::change_master(
                &inv,
                &node,
                &ch,
                &from,
                steps::parse_start(&position)?,
                !no_start,
            )?;
            say(
                "change-master",
                format!(
                    "channel {channel} on {node} reads {from} from {position}{}",
                    if no_start { " (not started)" } else { "" }
                ),
                serde_json::json!({"channel": channel, "node": node, "from": from, "started": !no_start}),
            );
        }
        StepCommand::Wait {
            node,
            channel,
            position,
            lag_below,
            timeout,
        } => {
            let ch = Channel::new(&channel)?;
            let pos: Option<BinlogPosition> = position.as_deref().map(str::parse).transpose()?;
            steps::wait(
                &inv,
                &node,
                &ch,
                pos.as_ref(),
                lag_below,
                Duration::from_secs(timeout),
            )?;
            say(
                "wait",
                format!("channel {channel} on {node} caught up"),
                serde_json::json!({"channel": channel, "node": node, "caught_up": true}),
            );
        }
        StepCommand::Lock {
            shard,
            fence,
            timeout,
        } => {
            let (op, position) = steps::lock(&inv, shard, fence, timeout)?;
            say(
                "lock",
                format!("shard {shard} fenced ({} fence, operation {op}); source position {position}; lift with `shardctl unlock --shard {shard}`", match fence { Fence::Shard => "shard", Fence::ReadOnly => "read-only", Fence::Switch => "switch" }),
                serde_json::json!({"op": op, "shard": shard, "fence": fence, "final_position": position}),
            );
        }
        StepCommand::Unlock { shard } => {
            let op = steps::unlock(&inv, shard)?;
            say(
                "unlock",
                format!("shard {shard} unfenced (operation {op} done)"),
                serde_json::json!({"op": op, "shard": shard}),
            );
        }
        StepCommand::Flip { shard, to } => {
            let v = steps::flip(&inv, shard, &to)?;
            say(
                "flip",
                format!("shard {shard} now on {to} (directory version {v})"),
                serde_json::json!({"shard": shard, "node": to, "directory_version": v}),
            );
        }
        StepCommand::DropSource { shard, node } => {
            super::confirm(
                ctx,
                &format!("drop shard {shard}'s old copy (its schemas) from {node}"),
            )?;
            let dropped = steps::drop_source(&inv, shard, &node)?;
            say(
                "drop-source",
                format!(
                    "dropped on {node}: {}",
                    if dropped.is_empty() {
                        "nothing (already gone)".into()
                    } else {
                        dropped.join(", ")
                    }
                ),
                serde_json::json!({"shard": shard, "node": node, "dropped": dropped}),
            );
        }
    }
    Ok(())
}
