//! Handlers of `reporting attach|status|sync|check|detach`: a reporting server replicating every
//! shard (`src/reporting.rs`).

use super::Context;
use crate::directory::Directory;
use crate::error::{Error, Result};
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
    /// Each reporting server's channels (running, lag, the schemas each carries), the moves
    /// whose flip it has not followed yet (the next sync joins each at its own position)
    /// and the last `reporting check` of each shard.
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
    /// Compare each reporting server's copy of every shard (or one) with the shard's node,
    /// chunk by chunk with the verification's checksums, at consistent points of the
    /// reporting channel (its applier held at the node's position for each round). Prints
    /// the differing tables and chunks; exits 5 when a copy differs or a shard's schemas
    /// are not replicated. The result shows in `reporting status`.
    #[command(
        after_help = "Example:\n  shardctl reporting check\n  shardctl reporting check --shard 3 --output json"
    )]
    Check {
        /// Only this shard.
        #[arg(long)]
        shard: Option<u32>,
        /// Rows per compared chunk.
        #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..))]
        chunk_rows: u64,
    },
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
        ReportingCommand::Check { shard, chunk_rows } => {
            let opts = crate::verify::VerifyOptions {
                chunk_rows,
                ..Default::default()
            };
            let checks = crate::reporting::check(&inv, shard, &opts)?;
            match ctx.format {
                Format::Json => output::print_document(
                    "reporting check",
                    serde_json::json!({
                        "clean": checks.iter().all(|c| c.clean),
                        "shards": checks,
                    }),
                ),
                Format::Table => {
                    let mut t = output::table(&[
                        "reporting node",
                        "shard",
                        "source",
                        "tables",
                        "rows",
                        "result",
                        "differing",
                    ]);
                    for c in &checks {
                        t.add_row(vec![
                            Cell::new(&c.node),
                            Cell::new(c.shard),
                            Cell::new(&c.source),
                            Cell::new(c.tables),
                            Cell::new(c.rows),
                            output::status_cell(if c.clean { "same" } else { "differs" }, c.clean),
                            Cell::new(c.differing.join(", ")),
                        ]);
                    }
                    crate::outln!("{t}");
                    for c in &checks {
                        for d in &c.differences {
                            crate::outln!("{}: shard {}: {d}", c.node, c.shard);
                        }
                    }
                }
            }
            let bad: Vec<String> = checks
                .iter()
                .filter(|c| !c.clean)
                .map(|c| {
                    format!(
                        "shard {} on {} ({})",
                        c.shard,
                        c.node,
                        c.differing.join(", ")
                    )
                })
                .collect();
            if bad.is_empty() {
                Ok(())
            } else {
                Err(Error::Refused(format!(
                    "the reporting copy differs from the fleet: {}",
                    bad.join("; ")
                )))
            }
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
                .map(|(n, r)| {
                    serde_json::json!({
                        "node": n,
                        "channels": r.channels,
                        "pending_follows": r.pending_follows,
                        "last_checks": r.last_checks,
                        "drift": r.drift,
                    })
                })
                .collect();
            output::print_document(command, serde_json::json!({"reporting_nodes": nodes}));
        }
        Format::Table => {
            if report.is_empty() {
                crate::outln!("no reporting server attached");
            }
            for (n, r) in &report {
                sources_table(&r.channels, n);
                for f in &r.pending_follows {
                    crate::outln!(
                        "{n}: not followed yet: {} moved {} -> {} by operation {} (joins {} at {}){}",
                        f.schema,
                        f.from,
                        f.to,
                        f.operation,
                        f.to,
                        f.at,
                        f.failure
                            .as_deref()
                            .map(|w| format!("; last attempt failed: {w}"))
                            .unwrap_or_default()
                    );
                }
                for c in &r.last_checks {
                    crate::outln!(
                        "{n}: shard {} checked {}: {}",
                        c.shard,
                        c.checked_at,
                        if c.clean {
                            "same as the fleet".to_string()
                        } else {
                            format!("DIFFERS ({})", c.differing.join(", "))
                        }
                    );
                }
                if r.drift {
                    crate::outln!("{n}: may differ from the fleet (`shardctl reporting sync`, then `shardctl reporting check`)");
                }
            }
        }
    }
    Ok(())
}
