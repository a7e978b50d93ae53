//! `rebalance plan` and `rebalance apply`: even out the fleet with moves.

use super::progress::{print_summary, printer};
use super::Context;
use crate::error::{Error, Result};
use crate::ops::mover::{StepEvent, StepEventKind};
use crate::output::{self, Format};
use comfy_table::Cell;
use std::path::PathBuf;

/// `rebalance` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum RebalanceCommand {
    /// Plan the moves (whole shards, or keys given to a neighbour) that even out the fleet
    /// (nothing changes).
    #[command(
        after_help = "Example:\n  shardctl rebalance plan --by size --threshold 0.05 --out plan.yaml\n  shardctl rebalance plan --drain node3 --out drain.yaml\n  shardctl rebalance plan --no-key-moves"
    )]
    Plan {
        /// What shards weigh.
        #[arg(long, value_enum, default_value_t = crate::rebalance::Weight::Size)]
        by: crate::rebalance::Weight,
        /// Accept nodes up to (1 + F) times the average utilisation.
        #[arg(long, default_value_t = 0.05, allow_hyphen_values = true, value_parser = super::non_negative_f64)]
        threshold: f64,
        /// At most this many moves.
        #[arg(long, value_parser = super::at_least_one)]
        max_moves: Option<usize>,
        /// Move every shard off this node (repeatable).
        #[arg(long)]
        drain: Vec<String>,
        /// Never move this shard (repeatable).
        #[arg(long)]
        exclude_shard: Vec<u32>,
        /// With `--by load`: a YAML map from shard id to load (otherwise performance_schema's
        /// table I/O counters).
        #[arg(long)]
        metrics: Option<PathBuf>,
        /// Write the plan here (YAML), for `rebalance apply`.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Shard sizes: `exact` refreshes each shard table's statistics first (ANALYZE
        /// NO_WRITE_TO_BINLOG TABLE, a few sampled pages per index); `statistics` takes them
        /// as they stand, stale right after a move.
        #[arg(long, value_enum, default_value_t = crate::status::SizeSource::Exact)]
        sizes: crate::status::SizeSource,
        /// Move whole shards only. Otherwise, weighed by size or rows, the plan may give
        /// the end of a shard's range or arc (or some list values) to a neighbour on
        /// another node where that moves fewer bytes than whole shards would, or where no
        /// whole shard can move; the key distributions of the shards that could give keys
        /// are read first (a few indexed queries each).
        #[arg(long)]
        no_key_moves: bool,
    },
    /// Run a plan's moves and key moves with concurrency limits.
    #[command(
        after_help = "Example:\n  shardctl rebalance apply plan.yaml --parallel 2 --per-node 1"
    )]
    Apply {
        /// The plan file.
        plan: PathBuf,
        /// Moves at once.
        #[arg(long, default_value_t = 1, value_parser = super::at_least_one)]
        parallel: usize,
        /// Moves a node takes part in at once.
        #[arg(long, default_value_t = 1, value_parser = super::at_least_one)]
        per_node: usize,
        /// When the directory changed since the plan was made, plan again (same weight and
        /// the limits recorded in the plan: threshold, max moves, drains, exclusions), print
        /// the new moves and apply them instead of refusing.
        #[arg(long)]
        replan: bool,
        /// Print each move's dry run (read-only, every effect recorded) instead of moving.
        #[arg(long, conflicts_with = "replan")]
        dry_run: bool,
    },
}

fn bar(fraction: f64) -> String {
    let n = (fraction.clamp(0.0, 1.0) * 20.0).round() as usize;
    format!("{}{}", "#".repeat(n), ".".repeat(20 - n))
}

pub fn rebalance(ctx: &Context, cmd: RebalanceCommand) -> Result<()> {
    let inv = ctx.inventory()?;
    match cmd {
        RebalanceCommand::Plan {
            by,
            threshold,
            max_moves,
            drain,
            exclude_shard,
            metrics,
            out,
            sizes,
            no_key_moves,
        } => {
            let (plan, file) = crate::rebalance::plan_recording_limits(
                &inv,
                by,
                sizes,
                crate::rebalance::PlanLimits {
                    threshold,
                    max_moves,
                    drain,
                    exclude_shard,
                    metrics,
                    no_key_moves,
                },
            )?;
            if let Some(path) = &out {
                crate::rebalance::save_plan(&file, path)?;
            }
            match ctx.format {
                Format::Json => output::print_document(
                    "rebalance plan",
                    serde_json::json!({
                        "by": by,
                        "directory_version": file.directory_version,
                        "size_source": file.size_source,
                        "unpruned_shards": file.unpruned_shards,
                        "moves": file.moves,
                        "plan": plan,
                        "out": out,
                    }),
                ),
                Format::Table => {
                    let weight = |n: u64| match by {
                        crate::rebalance::Weight::Size => super::status::human_bytes(n),
                        crate::rebalance::Weight::Rows => format!("{n} rows"),
                        crate::rebalance::Weight::Count => {
                            format!("{n} shard{}", if n == 1 { "" } else { "s" })
                        }
                        crate::rebalance::Weight::Load => n.to_string(),
                    };
                    let peak = plan
                        .nodes
                        .iter()
                        .map(|n| n.before.max(n.after) as f64 / n.capacity)
                        .fold(0.0, f64::max)
                        .max(1e-9);
                    let mut t = output::table(&["node", "capacity", "before", "", "after", ""]);
                    for n in &plan.nodes {
                        t.add_row(vec![
                            Cell::new(&n.name),
                            Cell::new(n.capacity),
                            Cell::new(weight(n.before)),
                            Cell::new(bar(n.before as f64 / n.capacity / peak)),
                            Cell::new(weight(n.after)),
                            Cell::new(bar(n.after as f64 / n.capacity / peak)),
                        ]);
                    }
                    crate::outln!("{t}");
                    if !file.moves.is_empty() {
                        let mut headers = vec!["action", "shard", "from", "to", "keys", "size"];
                        if matches!(
                            by,
                            crate::rebalance::Weight::Rows | crate::rebalance::Weight::Load
                        ) {
                            headers.push("weight");
                        }
                        headers.push("why");
                        let mut t = output::table(&headers);
                        for m in &file.moves {
                            let keys = match (m.to_shard, &m.keys) {
                                (Some(r), Some(k)) => format!(
                                    "{} to shard {r}",
                                    k.request().map(|r| r.to_string()).unwrap_or_default()
                                ),
                                _ => "whole shard".into(),
                            };
                            let size = match m.rows {
                                Some(rows) => format!(
                                    "~{} (~{rows} rows)",
                                    super::status::human_bytes(m.bytes)
                                ),
                                None => super::status::human_bytes(m.bytes),
                            };
                            let mut row = vec![
                                Cell::new(m.action.as_str()),
                                Cell::new(m.shard),
                                Cell::new(&m.from),
                                Cell::new(&m.to),
                                Cell::new(keys),
                                Cell::new(size),
                            ];
                            if matches!(
                                by,
                                crate::rebalance::Weight::Rows | crate::rebalance::Weight::Load
                            ) {
                                row.push(Cell::new(weight(m.weight)));
                            }
                            row.push(Cell::new(
                                m.why
                                    .as_ref()
                                    .map(|w| w.describe(weight))
                                    .unwrap_or_default(),
                            ));
                            t.add_row(row);
                        }
                        crate::outln!("{t}");
                    }
                    crate::outln!(
                        "{} moves and {} key moves, {} moved (at least {} must move); peak/avg {:.3} -> {:.3} (lower bound {:.3}){}",
                        plan.moves.len(),
                        plan.key_moves.len(),
                        weight(plan.moved),
                        weight(plan.moved_lower_bound),
                        plan.peak_before / plan.average.max(1e-12),
                        plan.peak_after / plan.average.max(1e-12),
                        plan.peak_lower_bound / plan.average.max(1e-12),
                        if plan.split_suggestions.is_empty() { String::new() } else { format!("; split suggested for shards {:?}", plan.split_suggestions) }
                    );
                    crate::outln!(
                        "{}",
                        match file.size_source {
                            Some(crate::status::SizeSource::Exact) => "sizes: exact (each shard table's statistics refreshed first with ANALYZE)",
                            _ => "sizes: table statistics as they stand (they lag behind recent moves; `--sizes exact` refreshes them)",
                        }
                    );
                    if !file.unpruned_shards.is_empty() {
                        crate::outln!(
                            "prune pending on shard(s) {:?}: their sizes still count rows they no longer own (their nodes weigh more than they will)",
                            file.unpruned_shards
                        );
                    }
                    if let Some(p) = out {
                        crate::outln!(
                            "plan written to {} (directory version {})",
                            p.display(),
                            file.directory_version
                        );
                    }
                }
            }
        }
        RebalanceCommand::Apply {
            plan,
            parallel,
            per_node,
            replan,
            dry_run,
        } => {
            let mut file = crate::rebalance::load_plan(&inv, &plan)?;
            if dry_run {
                let plans = crate::rebalance::dry_run(&inv, &file)?;
                match ctx.format {
                    Format::Json => output::print_document(
                        "rebalance apply",
                        serde_json::json!({"plans": plans}),
                    ),
                    Format::Table => {
                        for p in &plans {
                            crate::out!("{}", p.render());
                        }
                        crate::outln!("{} moves; nothing was changed", plans.len());
                    }
                }
                return Ok(());
            }
            let replanned = if replan {
                crate::rebalance::replan_if_changed(&inv, &file, &plan)?
            } else {
                None
            };
            if let Some(crate::rebalance::Replanned {
                file: new,
                limits,
                old_moves,
            }) = replanned
            {
                file = new;
                crate::errln!(
                    "shardctl: the directory changed since the plan was made; planned again under its limits (threshold {}, max moves {}{}{}): {} moves (the old plan had {old_moves})",
                    limits.threshold,
                    limits.max_moves.map(|m| m.to_string()).unwrap_or_else(|| "none".into()),
                    if limits.drain.is_empty() { String::new() } else { format!(", drain {}", limits.drain.join(" ")) },
                    if limits.exclude_shard.is_empty() { String::new() } else { format!(", excluded shards {}", limits.exclude_shard.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(" ")) },
                    file.moves.len()
                );
                for m in &file.moves {
                    match (m.to_shard, &m.keys) {
                        (Some(r), Some(k)) => crate::errln!(
                            "  move-keys {} of shard {} on {} to shard {r} on {} (weight ~{})",
                            k.request().map(|r| r.to_string()).unwrap_or_default(),
                            m.shard,
                            m.from,
                            m.to,
                            m.weight
                        ),
                        _ => crate::errln!(
                            "  move shard {} from {} to {} (weight {})",
                            m.shard,
                            m.from,
                            m.to,
                            m.weight
                        ),
                    }
                }
            }
            super::confirm(
                ctx,
                &format!(
                    "run {} moves of {} ({} whole-shard: each copies a shard, fences its writes for the cut-over and drops the old copy; {} key moves: each copies the keys, fences only them for the cut-over and deletes them from the donor)",
                    file.moves.len(),
                    plan.display(),
                    file.moves.iter().filter(|m| m.action == crate::rebalance::Action::Move).count(),
                    file.moves.iter().filter(|m| m.action == crate::rebalance::Action::MoveKeys).count()
                ),
            )?;
            let print = printer("rebalance apply", ctx.format, None);
            let apply_bar = {
                use std::io::IsTerminal;
                (ctx.format == Format::Table && std::io::stderr().is_terminal()).then(|| {
                    let b = indicatif::ProgressBar::new(file.moves.len() as u64);
                    b.set_style(
                        indicatif::ProgressStyle::with_template(
                            "{spinner} {pos}/{len} moves [{bar:20}] {msg} ({elapsed})",
                        )
                        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
                    );
                    b.enable_steady_tick(std::time::Duration::from_millis(120));
                    b
                })
            };
            let quiet = |e: &StepEvent| {
                if e.event == StepEventKind::Failed {
                    print(e);
                }
                if let Some(b) = &apply_bar {
                    b.set_message(format!(
                        "op {}: step {} {} {}",
                        e.op,
                        e.step_no + 1,
                        e.step,
                        e.event.as_str()
                    ));
                }
            };
            let progress =
                |a: &crate::rebalance::Applied, done: usize, total: usize| match ctx.format {
                    Format::Json => output::print_event(
                        "rebalance apply",
                        "move_finished",
                        serde_json::json!({
                            "action": a.action,
                            "shard": a.shard,
                            "to_shard": a.to_shard,
                            "to": a.to,
                            "moves_finished": done,
                            "moves": total,
                            "elapsed_ms": ((a.ended - a.started) * 1000.0).round() as u64,
                            "error": a.error,
                        }),
                    ),
                    Format::Table => {
                        let line = format!(
                            "move {done}/{total}: {} to {} {} in {:.1}s",
                            match a.to_shard {
                                Some(r) => format!("keys of shard {} to shard {r}", a.shard),
                                None => format!("shard {}", a.shard),
                            },
                            a.to,
                            if a.error.is_some() { "failed" } else { "done" },
                            a.ended - a.started
                        );
                        match &apply_bar {
                            Some(b) => {
                                b.set_position(done as u64);
                                b.println(line);
                            }
                            None => crate::errln!("{line}"),
                        }
                    }
                };
            let applied =
                crate::rebalance::apply(&inv, &file, parallel, per_node, &quiet, &progress);
            if let Some(b) = &apply_bar {
                b.finish_and_clear();
            }
            let summary = serde_json::json!({
                "moves": applied.as_ref().map(|a| a.iter().map(|a| serde_json::json!({
                    "action": a.action,
                    "shard": a.shard,
                    "to_shard": a.to_shard,
                    "to": a.to,
                    "started_ms": (a.started * 1000.0).round() as u64,
                    "ended_ms": (a.ended * 1000.0).round() as u64,
                    "error": a.error,
                })).collect::<Vec<_>>()).unwrap_or_default(),
            });
            let failed = applied
                .as_ref()
                .map(|a| a.iter().filter(|a| a.error.is_some()).count())
                .unwrap_or(0);
            print_summary(
                "rebalance apply",
                ctx.format,
                applied
                    .as_ref()
                    .map(|_| if failed > 0 { "failed" } else { "applied" }),
                summary,
            );
            let applied = applied?;
            match ctx.format {
                Format::Json => {}
                Format::Table => {
                    let mut t = output::table(&["action", "shard", "to", "start", "end", "result"]);
                    for a in &applied {
                        t.add_row(vec![
                            Cell::new(a.action.as_str()),
                            Cell::new(a.shard),
                            Cell::new(match a.to_shard {
                                Some(r) => format!("shard {r} on {}", a.to),
                                None => a.to.clone(),
                            }),
                            Cell::new(format!("{:.1}s", a.started)),
                            Cell::new(format!("{:.1}s", a.ended)),
                            output::status_cell(
                                a.error.as_deref().unwrap_or(match a.action {
                                    crate::rebalance::Action::Move => "moved",
                                    crate::rebalance::Action::MoveKeys => "moved_keys",
                                }),
                                a.error.is_none(),
                            ),
                        ]);
                    }
                    crate::outln!("{t}");
                }
            }
            if failed > 0 {
                return Err(Error::Refused(format!(
                    "{failed} of {} moves failed; see `shardctl ops`",
                    applied.len()
                )));
            }
        }
    }
    Ok(())
}
