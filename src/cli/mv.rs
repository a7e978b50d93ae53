//! Handlers for `move`, `resume`, `abort` and `ops`.

use super::Context;
use crate::copy::Method;
use crate::directory::journal::{OpKind, OpState, StepState};
use crate::directory::Directory;
use crate::error::{Error, Result};
use crate::ops::mover::{self, Mover, StepEvent};
use crate::output::{self, Format};
use crate::playbook::{Fence, Playbook, Step};
use comfy_table::Cell;
use std::path::PathBuf;

/// Arguments of `move`.
#[derive(Debug, clap::Args)]
pub struct MoveArgs {
    /// The shard to move.
    #[arg(long)]
    pub shard: u32,
    /// The node to move it to.
    #[arg(long)]
    pub to: String,
    /// A playbook to run instead of the embedded playbooks/move.yaml.
    #[arg(long)]
    pub playbook: Option<PathBuf>,
    /// Override the lock step's fence.
    #[arg(long, value_enum)]
    pub fence: Option<Fence>,
    /// Override the backup step's method.
    #[arg(long, value_enum)]
    pub method: Option<Method>,
    /// Run the procedure with every effect recorded instead of sent: connects read-only,
    /// prints the steps with the statements a real run would send on these servers.
    #[arg(long, conflicts_with = "check")]
    pub dry_run: bool,
    /// With --dry-run: connect nowhere (MariaDB 10.11 dialect, placeholders for what only
    /// the servers know).
    #[arg(long, requires = "dry_run")]
    pub offline: bool,
    /// The dry run, reporting only whether the real run would be refused (preflight
    /// included); changes nothing.
    #[arg(long)]
    pub check: bool,
}

/// Prints a dry run's plan.
fn print_dry_run(ctx: &Context, plan: &crate::ops::effects::DryRunPlan) {
    match ctx.format {
        Format::Json => output::print_json(plan),
        Format::Table => crate::out!("{}", plan.render()),
    }
}

/// Prints what `--check` found.
fn print_check(ctx: &Context, plan: &crate::ops::effects::DryRunPlan) {
    let steps: Vec<&str> = plan.steps.iter().map(|s| s.step.as_str()).collect();
    match ctx.format {
        Format::Json => output::print_json(&serde_json::json!({
            "ok": true,
            "kind": plan.kind,
            "shard": plan.shard,
            "source": plan.source,
            "target": plan.target,
            "flavors": plan.flavors,
            "steps": steps,
        })),
        Format::Table => crate::outln!(
            "ok  {} of shard {} from {} to {}: preflight passed, {} steps would run ({})",
            plan.kind,
            plan.shard,
            plan.source,
            plan.target,
            steps.len(),
            steps.join(", ")
        ),
    }
}

/// Step events: one JSON object per event on stdout, or lines on stderr (through the
/// progress bar when stderr is a terminal, so they do not tear it).
fn printer(format: Format, bar: Option<indicatif::ProgressBar>) -> impl Fn(&StepEvent) {
    move |e: &StepEvent| {
        let line = match (format, e.event.as_str(), e.millis) {
            (Format::Json, _, _) => {
                crate::outln!("{}", serde_json::to_string(e).unwrap_or_default());
                return;
            }
            (_, "started", _) => {
                format!("op {} step {:>2} {:<18} ...", e.op, e.step_no + 1, e.step)
            }
            (_, ev, Some(ms)) => format!(
                "op {} step {:>2} {:<18} {ev} in {ms} ms",
                e.op,
                e.step_no + 1,
                e.step
            ),
            (_, ev, None) => format!("op {} step {:>2} {:<18} {ev}", e.op, e.step_no + 1, e.step),
        };
        if let Some(b) = &bar {
            b.set_message(format!("step {} {}", e.step_no + 1, e.step));
            b.println(line);
        } else {
            crate::errln!("{line}");
        }
    }
}

/// A bar for the copy (rows done/total, bytes, rates, ETA: see
/// [`crate::copy::ProgressSnapshot::render`]) and the current step, on a terminal only.
fn progress_bar(format: Format) -> Option<indicatif::ProgressBar> {
    use std::io::IsTerminal;
    if format != Format::Table || !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = indicatif::ProgressBar::new(0);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} {msg:28} [{bar:30}] {prefix} ({elapsed})",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    bar.enable_steady_tick(std::time::Duration::from_millis(120));
    Some(bar)
}

/// Runs `work` on the mover while a thread feeds its copy counters into the bar.
fn with_copy_bar<T>(
    bar: Option<indicatif::ProgressBar>,
    mover: &mut Mover<'_>,
    work: impl FnOnce(&mut Mover<'_>) -> T,
) -> T {
    use std::sync::atomic::{AtomicBool, Ordering};
    let progress = mover.copy_progress();
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            let Some(bar) = bar else { return };
            while !done.load(Ordering::Relaxed) {
                let snap = progress.snapshot();
                bar.set_length(snap.total_shown());
                bar.set_position(snap.rows);
                bar.set_prefix(snap.render());
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
            bar.finish_and_clear();
        });
        let out = work(mover);
        done.store(true, Ordering::Relaxed);
        out
    })
}

/// An interrupted move, split or resume: the error names the operation and what to run
/// next (exit code 130 kept).
fn name_interrupted(e: Error, op: u64, flipped: bool) -> Error {
    match e {
        Error::Interrupted if flipped => Error::InterruptedAt(format!(
            "operation {op} stopped at a safe point after the flip; `shardctl resume {op}` finishes it"
        )),
        Error::Interrupted => Error::InterruptedAt(format!(
            "operation {op} stopped at a safe point; `shardctl resume {op}` continues it, `shardctl abort {op}` rolls it back"
        )),
        other => other,
    }
}

fn playbook(args: &MoveArgs) -> Result<Playbook> {
    let mut pb = match &args.playbook {
        Some(p) => Playbook::load(p)?,
        None => Playbook::default_move(),
    };
    for s in &mut pb.steps {
        match s {
            Step::Lock(l) => {
                if let Some(f) = args.fence {
                    l.fence = f;
                }
            }
            Step::Backup(b) => {
                if let Some(m) = args.method {
                    b.method = m;
                }
            }
            _ => {}
        }
    }
    Ok(pb)
}

pub fn run_move(ctx: &Context, args: MoveArgs) -> Result<()> {
    let pb = playbook(&args)?;
    if pb.is_split() {
        return Err(Error::Usage(
            "that playbook is a split's (it prunes): use it with `shardctl split`".into(),
        ));
    }
    let inv = ctx.inventory()?;
    if args.dry_run && args.offline {
        let plan = crate::ops::plan::move_plan(&inv, args.shard, &args.to, &pb)?;
        match ctx.format {
            Format::Json => output::print_json(&plan),
            Format::Table => crate::out!("{}", plan.render()),
        }
        return Ok(());
    }
    if args.dry_run || args.check {
        let quiet = |_: &StepEvent| {};
        let plan = Mover::dry_run_move(&inv, args.shard, &args.to, pb, &quiet)?;
        if args.check {
            print_check(ctx, &plan);
        } else {
            print_dry_run(ctx, &plan);
        }
        return Ok(());
    }
    let bar = progress_bar(ctx.format);
    let print = printer(ctx.format, bar.clone());
    let mut m = Mover::start(&inv, args.shard, &args.to, pb, &print)?;
    let state = with_copy_bar(bar, &mut m, |m| m.run())
        .map_err(|e| name_interrupted(e, m.op(), m.state().flipped))?;
    if ctx.format == Format::Table {
        crate::outln!(
            "shard {} moved to {} (operation {}, {} rows copied, write fence {} ms)",
            args.shard,
            args.to,
            m.op(),
            state.copied_rows,
            state.fence_millis.unwrap_or(0)
        );
    }
    Ok(())
}

/// Arguments of `resume`.
#[derive(Debug, clap::Args)]
pub struct ResumeArgs {
    /// Operation id (see `shardctl ops`).
    pub op: u64,
}

pub fn resume(ctx: &Context, args: ResumeArgs) -> Result<()> {
    let inv = ctx.inventory()?;
    let rec = Directory::open(&inv)?.operation(args.op)?;
    if rec.kind == OpKind::Prune {
        if rec.state.is_finished() {
            return Err(Error::Usage(format!(
                "operation {} is {}: nothing to resume",
                args.op, rec.state
            )));
        }
        let shard = rec
            .shard_id
            .ok_or_else(|| Error::Internal("prune without a shard".into()))?;
        let bars = prune_bars(ctx.format);
        let reports = crate::prune::run(
            &inv,
            shard,
            Some(args.op),
            &crate::prune::Options::default(),
            &bars,
            None,
        )?;
        print_prune(ctx, &reports);
        return Ok(());
    }
    let bar = progress_bar(ctx.format);
    let print = printer(ctx.format, bar.clone());
    let mut m = Mover::claim(&inv, args.op, "resume", &print)?;
    let state = with_copy_bar(bar, &mut m, |m| m.resume())
        .map_err(|e| name_interrupted(e, args.op, m.state().flipped))?;
    if ctx.format == Format::Table {
        crate::outln!(
            "operation {} finished (flipped: {})",
            args.op,
            state.flipped
        );
    }
    Ok(())
}

/// Arguments of `abort`.
#[derive(Debug, clap::Args)]
pub struct AbortArgs {
    /// Operation id.
    pub op: u64,
}

pub fn abort(ctx: &Context, args: AbortArgs) -> Result<()> {
    let inv = ctx.inventory()?;
    mover::abort(&inv, args.op)?;
    if ctx.format == Format::Table {
        crate::outln!(
            "operation {} aborted: fence lifted, channel removed, target copy dropped, shard online on its source",
            args.op
        );
    }
    Ok(())
}

/// Arguments of `stop`.
#[derive(Debug, clap::Args)]
pub struct StopArgs {
    /// Operation id.
    pub op: u64,
    /// How long to wait for the owner to let go, seconds.
    #[arg(long, default_value_t = 30)]
    pub wait: u64,
}

pub fn stop(ctx: &Context, args: StopArgs) -> Result<()> {
    let inv = ctx.inventory()?;
    let outcome = mover::stop(&inv, args.op, std::time::Duration::from_secs(args.wait))?;
    match ctx.format {
        Format::Json => output::print_json(&serde_json::json!({"op": args.op, "outcome": outcome})),
        Format::Table => crate::outln!(
            "operation {}: {}",
            args.op,
            match outcome {
                mover::StopOutcome::Stopped => "stopped at a safe point; resume or abort it now",
                mover::StopOutcome::Asked => "asked to stop; its owner has not let go yet",
                mover::StopOutcome::NotRunning => "no live owner: nothing to stop",
            }
        ),
    }
    match outcome {
        mover::StopOutcome::Asked => Err(Error::Timeout(format!(
            "operation {} was asked to stop but its owner still holds it after {}s",
            args.op, args.wait
        ))),
        _ => Ok(()),
    }
}

/// Arguments of `ops`.
#[derive(Debug, clap::Args)]
pub struct OpsArgs {
    /// Show one operation with its steps.
    pub op: Option<u64>,
}

pub fn ops(ctx: &Context, args: OpsArgs) -> Result<()> {
    let inv = ctx.inventory()?;
    let mut dir = Directory::open(&inv)?;
    let ops = dir.operations(args.op)?;
    if args.op.is_some() && ops.is_empty() {
        return Err(Error::Usage(format!(
            "no operation {}",
            args.op.unwrap_or(0)
        )));
    }
    match ctx.format {
        Format::Json => output::print_json(&ops),
        Format::Table => {
            let mut t = output::table(&[
                "op", "kind", "shard", "from", "to", "state", "step", "owner", "error",
            ]);
            for o in &ops {
                let current = o
                    .steps
                    .iter()
                    .find(|s| s.state != StepState::Done)
                    .map(|s| format!("{} {} ({})", s.step_no + 1, s.name, s.state))
                    .unwrap_or_else(|| "all done".into());
                t.add_row(vec![
                    Cell::new(o.id),
                    Cell::new(o.kind),
                    Cell::new(o.shard_id.map(|s| s.to_string()).unwrap_or_default()),
                    Cell::new(o.source.as_deref().unwrap_or("")),
                    Cell::new(o.target.as_deref().unwrap_or("")),
                    output::status_cell(o.state.as_sql(), o.state == OpState::Done),
                    Cell::new(current),
                    Cell::new(o.owner.as_deref().unwrap_or("")),
                    Cell::new(o.error.as_deref().unwrap_or("")),
                ]);
            }
            crate::outln!("{t}");
            if let Some(o) = ops.first().filter(|_| args.op.is_some()) {
                let mut t = output::table(&["step", "name", "state", "ms"]);
                for s in &o.steps {
                    t.add_row(vec![
                        Cell::new(s.step_no + 1),
                        Cell::new(&s.name),
                        Cell::new(s.state),
                        Cell::new(s.millis.map(|m| m.to_string()).unwrap_or_default()),
                    ]);
                }
                crate::outln!("{t}");
            }
        }
    }
    Ok(())
}

/// Arguments of `workload`.
#[derive(Debug, clap::Args)]
pub struct WorkloadArgs {
    /// Partition function whose shards are written.
    #[arg(long)]
    pub function: String,
    /// Writes per second, all streams together (one stream and thread per shard, each
    /// writing its share over its shard's whole key space).
    #[arg(long, default_value_t = 500, value_parser = clap::value_parser!(u32).range(1..))]
    pub rate: u32,
    /// How long to run, seconds.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..))]
    pub seconds: u64,
    /// Create the workload table in every shard first.
    #[arg(long)]
    pub setup: bool,
    /// Keep the locations loaded at the start and re-read the directory only when a
    /// server's error says to (read-only, table gone, lost connection, the wrong-shard
    /// guard); the check then counts the writes a shard that does not own the key
    /// acknowledged.
    #[arg(long)]
    pub stale_router: bool,
}

pub fn workload(ctx: &Context, args: WorkloadArgs) -> Result<()> {
    use crate::workload;
    let inv = ctx.inventory()?;
    if args.rate == 0 {
        return Err(Error::Usage("--rate must be above 0".into()));
    }
    if args.setup {
        workload::setup(&inv, &args.function)?;
    }
    let running = workload::spawn(
        inv.clone(),
        workload::Options {
            rate: args.rate,
            stale_router: args.stale_router,
            ..workload::Options::new(args.function.clone())
        },
    )?;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(args.seconds);
    while std::time::Instant::now() < deadline && !crate::signal::interrupted() {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let mut report = running.stop()?;
    report.check(&inv, &args.function)?;
    match ctx.format {
        Format::Json => output::print_json(&serde_json::json!({
            "report": report,
            "missing": report.missing,
            "wrong_shard_writes": report.wrong_shard_writes,
        })),
        Format::Table => {
            let mut t = output::table(&[
                "keys",
                "shard at start",
                "shards written",
                "acked",
                "failed attempts",
                "reloads",
                "lost",
                "missing",
                "wrong shard",
                "longest pause",
            ]);
            for s in &report.streams {
                let shards: Vec<String> = s.shards_written.iter().map(|i| i.to_string()).collect();
                t.add_row(vec![
                    Cell::new(&s.keys),
                    Cell::new(s.shard_at_start),
                    Cell::new(shards.join(", ")),
                    Cell::new(s.acked),
                    Cell::new(s.failed_attempts),
                    Cell::new(s.reloads),
                    Cell::new(s.lost),
                    Cell::new(s.missing),
                    Cell::new(s.wrong_shard_writes),
                    Cell::new(format!("{} ms", s.max_pause_ms)),
                ]);
            }
            crate::outln!("{t}");
            crate::outln!(
                "{} acknowledged writes in {:.1}s by {} streams ({} router); {} missing; wrong_shard_writes: {}",
                report.acked,
                report.seconds,
                report.streams.len(),
                if report.stale_router { "stale" } else { "fresh" },
                report.missing,
                report.wrong_shard_writes
            );
        }
    }
    if report.missing > 0 {
        return Err(Error::Refused(format!(
            "{} acknowledged writes are missing ({} of them acknowledged by a shard that does not own the key)",
            report.missing, report.wrong_shard_writes
        )));
    }
    Ok(())
}

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

fn prune_bars(format: Format) -> impl Fn(&str, u64, u64, u64) {
    use std::io::IsTerminal;
    let on = format == Format::Table && std::io::stderr().is_terminal();
    let bars: std::sync::Mutex<std::collections::HashMap<String, indicatif::ProgressBar>> =
        Default::default();
    move |table: &str, walked: u64, deleted: u64, estimate: u64| {
        if !on {
            return;
        }
        let mut bars = bars.lock().expect("bars");
        let bar = bars.entry(table.to_string()).or_insert_with(|| {
            let b = indicatif::ProgressBar::new(estimate.max(1));
            b.set_style(
                indicatif::ProgressStyle::with_template(
                    "{msg:32} [{bar:30}] {human_pos}/{human_len} walked {per_sec} eta {eta}",
                )
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
            );
            b
        });
        bar.set_length(estimate.max(walked));
        bar.set_position(walked);
        bar.set_message(format!("{table} ({deleted} deleted)"));
    }
}

fn print_prune(ctx: &Context, reports: &[crate::prune::TableReport]) {
    match ctx.format {
        Format::Json => output::print_json(&reports),
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
            Format::Json => output::print_json(&tables),
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
    let bars = prune_bars(ctx.format);
    let reports = crate::prune::run(&inv, args.shard, None, &opts, &bars, None)?;
    print_prune(ctx, &reports);
    Ok(())
}

/// Arguments of `split`.
#[derive(Debug, clap::Args)]
pub struct SplitArgs {
    /// The shard to split.
    #[arg(long)]
    pub shard: u32,
    /// The node of the new shard.
    #[arg(long)]
    pub to: String,
    /// Range functions: the key the new shard starts at, or `median`.
    #[arg(long, allow_hyphen_values = true)]
    pub at: Option<String>,
    /// Hash functions: the new ring point (default: the middle of the shard's arc).
    #[arg(long, conflicts_with = "values")]
    pub point: Option<String>,
    /// List functions: the values that go to the new shard.
    #[arg(long, value_delimiter = ',')]
    pub values: Option<Vec<String>>,
    /// A playbook to run instead of the embedded playbooks/split.yaml.
    #[arg(long)]
    pub playbook: Option<PathBuf>,
    /// Override the lock step's fence.
    #[arg(long, value_enum)]
    pub fence: Option<Fence>,
    /// Run the procedure with every effect recorded instead of sent (read-only); prints
    /// the statements a real run would send on these servers.
    #[arg(long, conflicts_with = "check")]
    pub dry_run: bool,
    /// The dry run, reporting only whether the real run would be refused.
    #[arg(long)]
    pub check: bool,
}

pub fn split(ctx: &Context, args: SplitArgs) -> Result<()> {
    use crate::ops::split::SplitAt;
    let inv = ctx.inventory()?;
    let mut pb = match &args.playbook {
        Some(p) => Playbook::load(p)?,
        None => Playbook::default_split(),
    };
    if let Some(f) = args.fence {
        for s in &mut pb.steps {
            if let Step::Lock(l) = s {
                l.fence = f;
            }
        }
    }
    if !pb.is_split() {
        return Err(Error::Usage(
            "that playbook is a move's (it drops the source): a split's playbook prunes both shards".into(),
        ));
    }
    let at = match (&args.at, &args.point, &args.values) {
        (Some(a), None, None) if a == "median" => SplitAt::Median,
        (Some(a), None, None) => SplitAt::Key(a.clone()),
        (None, p, None) => SplitAt::Point(p.clone()),
        (None, None, Some(v)) => SplitAt::Values(v.clone()),
        _ => return Err(Error::Usage("give one of --at, --point or --values".into())),
    };
    if args.dry_run || args.check {
        let quiet = |_: &StepEvent| {};
        let plan = Mover::dry_run_split(&inv, args.shard, &args.to, &at, pb, &quiet)?;
        if args.check {
            print_check(ctx, &plan);
        } else {
            print_dry_run(ctx, &plan);
        }
        return Ok(());
    }
    let bar = progress_bar(ctx.format);
    let print = printer(ctx.format, bar.clone());
    let mut m = Mover::start_split(&inv, args.shard, &args.to, &at, pb, &print)?;
    let new_shard = m.split().map(|p| p.new_shard).unwrap_or(0);
    let state = with_copy_bar(bar, &mut m, |m| m.run())
        .map_err(|e| name_interrupted(e, m.op(), m.state().flipped))?;
    match ctx.format {
        Format::Json => output::print_json(
            &serde_json::json!({"op": m.op(), "new_shard": new_shard, "split": m.split()}),
        ),
        Format::Table => crate::outln!(
            "shard {} split: new shard {new_shard} on {} (operation {}, write fence {} ms)",
            args.shard,
            args.to,
            m.op(),
            state.fence_millis.unwrap_or(0)
        ),
    }
    Ok(())
}

/// `rebalance` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum RebalanceCommand {
    /// Plan the moves that even out the fleet (nothing changes).
    #[command(
        after_help = "Example:\n  shardctl rebalance plan --by size --threshold 0.05 --out plan.yaml\n  shardctl rebalance plan --drain node3 --out drain.yaml"
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
    },
    /// Run a plan's moves with concurrency limits.
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
        } => {
            let limits = crate::rebalance::planner::Limits {
                threshold,
                max_moves,
            };
            let metrics_path = metrics.clone();
            let metrics = metrics
                .as_deref()
                .map(crate::rebalance::read_metrics)
                .transpose()?;
            let (plan, mut file) = crate::rebalance::plan_fleet_with(
                &inv,
                by,
                metrics.as_ref(),
                sizes,
                &limits,
                &drain,
                &exclude_shard,
            )?;
            file.limits = Some(crate::rebalance::PlanLimits {
                threshold,
                max_moves,
                drain: drain.clone(),
                exclude_shard: exclude_shard.clone(),
                metrics: metrics_path,
            });
            if let Some(path) = &out {
                let text =
                    serde_yaml::to_string(&file).map_err(|e| Error::Config(e.to_string()))?;
                std::fs::write(path, text)
                    .map_err(|e| Error::io(format!("cannot write {}", path.display()), e))?;
            }
            match ctx.format {
                Format::Json => {
                    output::print_json(&serde_json::json!({"plan": plan, "file": file}))
                }
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
                        let mut headers = vec!["shard", "from", "to", "size"];
                        if matches!(
                            by,
                            crate::rebalance::Weight::Rows | crate::rebalance::Weight::Load
                        ) {
                            headers.push("weight");
                        }
                        let mut t = output::table(&headers);
                        for m in &file.moves {
                            let mut row = vec![
                                Cell::new(m.shard),
                                Cell::new(&m.from),
                                Cell::new(&m.to),
                                Cell::new(super::status::human_bytes(m.bytes)),
                            ];
                            if headers.len() > 4 {
                                row.push(Cell::new(weight(m.weight)));
                            }
                            t.add_row(row);
                        }
                        crate::outln!("{t}");
                    }
                    crate::outln!(
                        "{} moves, {} moved (at least {} must move); peak/avg {:.3} -> {:.3} (lower bound {:.3}){}",
                        plan.moves.len(),
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
                    Format::Json => output::print_json(&plans),
                    Format::Table => {
                        for p in &plans {
                            crate::out!("{}", p.render());
                        }
                        crate::outln!("{} moves; nothing was changed", plans.len());
                    }
                }
                return Ok(());
            }
            if replan && Directory::open(&inv)?.version()? != file.directory_version {
                let Some(limits) = file.limits.clone() else {
                    return Err(Error::Config(format!(
                        "{}: the plan records no limits to plan again under: make a new one with `shardctl rebalance plan`",
                        plan.display()
                    )));
                };
                let metrics = limits
                    .metrics
                    .as_deref()
                    .map(crate::rebalance::read_metrics)
                    .transpose()?;
                let old_moves = file.moves.len();
                file = crate::rebalance::plan_fleet_with(
                    &inv,
                    file.by,
                    metrics.as_ref(),
                    crate::status::SizeSource::Exact,
                    &limits.limits(),
                    &limits.drain,
                    &limits.exclude_shard,
                )?
                .1;
                file.limits = Some(limits.clone());
                crate::errln!(
                    "shardctl: the directory changed since the plan was made; planned again under its limits (threshold {}, max moves {}{}{}): {} moves (the old plan had {old_moves})",
                    limits.threshold,
                    limits.max_moves.map(|m| m.to_string()).unwrap_or_else(|| "none".into()),
                    if limits.drain.is_empty() { String::new() } else { format!(", drain {}", limits.drain.join(" ")) },
                    if limits.exclude_shard.is_empty() { String::new() } else { format!(", excluded shards {}", limits.exclude_shard.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(" ")) },
                    file.moves.len()
                );
                for m in &file.moves {
                    crate::errln!(
                        "  move shard {} from {} to {} (weight {})",
                        m.shard,
                        m.from,
                        m.to,
                        m.weight
                    );
                }
            }
            let print = printer(ctx.format, None);
            let quiet = |e: &StepEvent| {
                if e.event == "failed" {
                    print(e);
                }
            };
            let progress = |a: &crate::rebalance::Applied, done: usize, total: usize| {
                if ctx.format == Format::Table {
                    crate::errln!(
                        "move {done}/{total}: shard {} to {} {} in {:.1}s",
                        a.shard,
                        a.to,
                        if a.error.is_some() { "failed" } else { "done" },
                        a.ended - a.started
                    );
                }
            };
            let applied =
                crate::rebalance::apply(&inv, &file, parallel, per_node, &quiet, &progress)?;
            let failed = applied.iter().filter(|a| a.error.is_some()).count();
            match ctx.format {
                Format::Json => output::print_json(&applied),
                Format::Table => {
                    let mut t = output::table(&["shard", "to", "start", "end", "result"]);
                    for a in &applied {
                        t.add_row(vec![
                            Cell::new(a.shard),
                            Cell::new(&a.to),
                            Cell::new(format!("{:.1}s", a.started)),
                            Cell::new(format!("{:.1}s", a.ended)),
                            output::status_cell(
                                a.error.as_deref().unwrap_or("moved"),
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
