//! Handlers of `reporting attach|status|sync|detach`: a reporting server replicating every
//! shard (`src/reporting.rs`).

use super::Context;
use crate::directory::Directory;
use crate::error::Result;
use crate::output::{self, Format};
use comfy_table::Cell;

/// `shardctl reporting ...`.
#[derive(Debug, clap::Subcommand)]
pub enum ReportingCommand {
    /// Make NODE (in the inventory, holding no shard) a reporting server: a consistent copy
    /// of every node's shard schemas, then one filtered channel per source node
    /// (`shardctl_report_<node>`), started. An interrupted attach is finished by `sync`.
    #[command(
        after_help = "Example:\n  shardctl reporting attach node4 --dry-run\n  shardctl reporting attach node4"
    )]
    Attach {
        /// The reporting node.
        node: String,
        /// Check and print the plan (sources, channels, schemas); change nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Each reporting server's channels: running, lag, the schemas each carries.
    #[command(
        after_help = "Example:\n  shardctl reporting status\n  shardctl reporting status node4 --output json"
    )]
    Status {
        /// Only this reporting node.
        node: Option<String>,
    },
    /// Bring every reporting server in line with the directory: channels narrowed to the
    /// shards their node still holds, new shards copied and joined, a crashed attach or
    /// sync finished. Moves, splits and merges run it at their end by themselves.
    #[command(after_help = "Example:\n  shardctl reporting sync")]
    Sync,
    /// Remove NODE's reporting channels and forget it; its copies stay (or go with --drop).
    #[command(after_help = "Example:\n  shardctl reporting detach node4 --drop --yes")]
    Detach {
        /// The reporting node.
        node: String,
        /// Also drop the shard schemas copied onto it.
        #[arg(long)]
        drop: bool,
    },
}

fn sources_table(rows: &[crate::reporting::ChannelReport], node: &str) {
    let mut t = output::table(&[
        "reporting node",
        "source",
        "channel",
        "running",
        "lag",
        "schemas",
        "pending",
        "error",
    ]);
    for r in rows {
        t.add_row(vec![
            Cell::new(node),
            Cell::new(&r.source),
            Cell::new(r.channel.as_str()),
            output::status_cell(if r.running { "yes" } else { "no" }, r.running),
            Cell::new(
                r.seconds_behind
                    .map(|s| format!("{s}s"))
                    .unwrap_or_else(|| "-".into()),
            ),
            Cell::new(r.schemas.join(", ")),
            Cell::new(if r.pending.is_empty() {
                String::new()
            } else {
                format!("{:?}: {}", r.pending_state, r.pending.join(", "))
            }),
            Cell::new(r.error.as_deref().unwrap_or("")),
        ]);
    }
    crate::outln!("{t}");
}

/// Runs a `reporting` subcommand.
pub fn run(ctx: &Context, cmd: ReportingCommand) -> Result<()> {
    let inv = ctx.inventory()?;
    match cmd {
        ReportingCommand::Attach { node, dry_run } => {
            if dry_run {
                let mut dir = Directory::open(&inv)?;
                let plan = crate::reporting::check_attach(&inv, &mut dir, &node)?;
                match ctx.format {
                    Format::Json => output::print_document(
                        "reporting attach",
                        serde_json::json!({"node": node, "dry_run": true, "sources": plan.sources}),
                    ),
                    Format::Table => {
                        crate::outln!("would attach {node} as a reporting server:");
                        for s in &plan.sources {
                            crate::outln!(
                                "  from {}: copy {} and replicate them through channel {}",
                                s.node,
                                s.schemas.join(", "),
                                s.channel
                            );
                        }
                    }
                }
                return Ok(());
            }
            super::confirm(
                ctx,
                &format!("copy every shard onto {node} and start its reporting channels"),
            )?;
            crate::reporting::attach(&inv, &node)?;
            print_status(ctx, "reporting attach", &inv, Some(&node))
        }
        ReportingCommand::Status { node } => {
            print_status(ctx, "reporting status", &inv, node.as_deref())
        }
        ReportingCommand::Sync => {
            crate::reporting::sync(&inv, None)?;
            print_status(ctx, "reporting sync", &inv, None)
        }
        ReportingCommand::Detach { node, drop } => {
            if drop {
                super::confirm(ctx, &format!("drop every shard copy on {node}"))?;
            }
            let d = crate::reporting::detach(&inv, &node, drop)?;
            match ctx.format {
                Format::Json => output::print_document(
                    "reporting detach",
                    serde_json::to_value(&d).unwrap_or_default(),
                ),
                Format::Table => crate::outln!(
                    "{}: {} channel(s) removed, {} schema(s) dropped",
                    d.node,
                    d.channels.len(),
                    d.dropped.len()
                ),
            }
            Ok(())
        }
    }
}

fn print_status(
    ctx: &Context,
    command: &str,
    inv: &crate::config::Inventory,
    node: Option<&str>,
) -> Result<()> {
    let report = crate::reporting::status_report(inv, node)?;
    match ctx.format {
        Format::Json => {
            let nodes: Vec<serde_json::Value> = report
                .iter()
                .map(|(n, channels)| serde_json::json!({"node": n, "channels": channels}))
                .collect();
            output::print_document(command, serde_json::json!({"reporting_nodes": nodes}));
        }
        Format::Table => {
            if report.is_empty() {
                crate::outln!("no reporting server attached");
            }
            for (n, rows) in &report {
                sources_table(rows, n);
            }
        }
    }
    Ok(())
}
