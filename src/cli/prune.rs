//! `prune`: deletes, on a shard, the rows it no longer owns (after a split or a merge).

use super::Context;
use crate::directory::Directory;
use crate::error::Result;
use crate::output::{self, Format};
use comfy_table::Cell;

/// Arguments of `prune`.
#[derive(Debug, clap::Args)]
pub struct PruneArgs {
    /// The shard to prune.
    #[arg(long)]
    pub shard: u32,
    /// Show each table's predicate and how many rows it matches; delete nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Target time of one chunk, milliseconds.
    #[arg(long, default_value_t = 500, value_parser = clap::value_parser!(u64).range(1..))]
    pub chunk_ms: u64,
    /// Pause while a replica of the node lags more than this (seconds).
    #[arg(long, default_value_t = 1)]
    pub max_lag: u64,
    /// Pause while the node has more running threads than this.
    #[arg(long, default_value_t = 25, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_threads_running: u64,
    /// Give up (resumably) after waiting this long for the throttle, seconds.
    #[arg(long, default_value_t = 600, value_parser = clap::value_parser!(u64).range(1..))]
    pub throttle_timeout: u64,
}

/// The prune's bar on a terminal: one table at a time (rows walked of its estimate,
/// rows deleted, deletion rate); when the prune moves on to the next table the finished
/// one leaves a line above the bar, and [`PruneBars::finish`] clears the last one.
pub(super) struct PruneBars {
    on: bool,
    current: std::sync::Mutex<Option<(String, indicatif::ProgressBar, u64, std::time::Instant)>>,
}

impl PruneBars {
    pub(super) fn new(format: Format) -> PruneBars {
        use std::io::IsTerminal;
        PruneBars {
            on: format == Format::Table && std::io::stderr().is_terminal(),
            current: Default::default(),
        }
    }

    pub(super) fn update(&self, table: &str, walked: u64, deleted: u64, estimate: u64) {
        if !self.on {
            return;
        }
        let mut current = self.current.lock().unwrap_or_else(|p| p.into_inner());
        if current.as_ref().is_some_and(|(t, ..)| t != table) {
            Self::close(current.take());
        }
        let (_, bar, last_deleted, started) = current.get_or_insert_with(|| {
            let b = indicatif::ProgressBar::new(estimate.max(1));
            b.set_style(
                indicatif::ProgressStyle::with_template(
                    "{msg:40} [{bar:30}] {human_pos}/{human_len} rows walked {prefix} ({elapsed})",
                )
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
            );
            b.enable_steady_tick(std::time::Duration::from_millis(120));
            (table.to_string(), b, 0, std::time::Instant::now())
        });
        *last_deleted = deleted;
        let rate = deleted as f64 / started.elapsed().as_secs_f64().max(0.001);
        bar.set_length(estimate.max(walked));
        bar.set_position(walked);
        bar.set_message(format!(
            "{table}: {} deleted",
            indicatif::HumanCount(deleted)
        ));
        bar.set_prefix(format!(
            "{}/s deleted",
            indicatif::HumanCount(rate.round() as u64)
        ));
    }

    fn close(done: Option<(String, indicatif::ProgressBar, u64, std::time::Instant)>) {
        if let Some((table, bar, deleted, started)) = done {
            bar.finish_and_clear();
            crate::errln!(
                "{table}: {} rows deleted in {:.1}s",
                indicatif::HumanCount(deleted),
                started.elapsed().as_secs_f64()
            );
        }
    }

    /// Clears the last table's bar (leaving its line).
    pub(super) fn finish(&self) {
        let mut current = self.current.lock().unwrap_or_else(|p| p.into_inner());
        Self::close(current.take());
    }
}

pub(super) fn print_prune(ctx: &Context, shard: u32, reports: &[crate::prune::TableReport]) {
    match ctx.format {
        Format::Json => output::print_document(
            "prune",
            serde_json::json!({
                "shard": shard,
                "deleted": reports.iter().map(|r| r.deleted).sum::<u64>(),
                "tables": reports.iter().map(|r| serde_json::json!({
                    "table": r.table,
                    "deleted": r.deleted,
                    "walked": r.walked,
                    "chunks": r.chunks,
                    "throttled_ms": (r.throttled_secs * 1000.0).round() as u64,
                })).collect::<Vec<_>>(),
            }),
        ),
        Format::Table => {
            let mut t = output::table(&["table", "deleted", "walked", "chunks", "throttled"]);
            for r in reports {
                t.add_row(vec![
                    Cell::new(&r.table),
                    Cell::new(r.deleted),
                    Cell::new(r.walked),
                    Cell::new(r.chunks),
                    Cell::new(format!("{:.1}s", r.throttled_secs)),
                ]);
            }
            crate::outln!("{t}");
        }
    }
}

pub fn prune(ctx: &Context, args: PruneArgs) -> Result<()> {
    let inv = ctx.inventory()?;
    let opts = crate::prune::Options {
        target_chunk: std::time::Duration::from_millis(args.chunk_ms.max(1)),
        max_replica_lag_secs: args.max_lag,
        max_threads_running: args.max_threads_running,
        throttle_timeout: std::time::Duration::from_secs(args.throttle_timeout),
        ..Default::default()
    };
    if args.dry_run {
        let snap = Directory::open(&inv)?.load()?;
        let shard = snap.shard(args.shard)?.clone();
        let plans = crate::prune::plan(&inv, &snap, &shard)?;
        let tables = crate::prune::dry_run(&inv, &shard, &plans)?;
        match ctx.format {
            Format::Json => output::print_document(
                "prune",
                serde_json::json!({
                    "shard": args.shard,
                    "dry_run": true,
                    "rows_to_delete": tables.iter().map(|t| t.rows_to_delete).sum::<u64>(),
                    "tables": tables,
                }),
            ),
            Format::Table => {
                let mut t = output::table(&["table", "rows to delete", "predicate"]);
                for d in &tables {
                    t.add_row(vec![
                        Cell::new(&d.table),
                        Cell::new(d.rows_to_delete),
                        Cell::new(&d.predicate),
                    ]);
                }
                crate::outln!("{t}");
                crate::outln!(
                    "statements, in keyset chunks (each chunk's key bounds bound at run time):"
                );
                for d in &tables {
                    for st in &d.statements {
                        crate::outln!("  {st}");
                    }
                }
            }
        }
        return Ok(());
    }
    super::confirm(
        ctx,
        &format!(
            "delete from shard {} every row whose key it no longer owns",
            args.shard
        ),
    )?;
    let bars = PruneBars::new(ctx.format);
    let reports = crate::prune::run(
        &inv,
        args.shard,
        None,
        &opts,
        &|t, w, d, e| bars.update(t, w, d, e),
        None,
    );
    bars.finish();
    let reports = reports?;
    print_prune(ctx, args.shard, &reports);
    Ok(())
}
