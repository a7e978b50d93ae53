//! Handlers for `move`, `resume`, `abort` and `ops`.

use super::progress::{
    print_dry_run, print_summary, printer, progress_bar, report_check, with_copy_bar,
};
use super::prune::{print_prune, PruneBars};
use super::{views, Context};
use crate::copy::Method;
use crate::directory::journal::{OpKind, OpState, StepState, WindowRequest};
use crate::directory::Directory;
use crate::error::{Error, Result};
use crate::ops::mover::requests::{self, RequestOutcome};
use crate::ops::mover::{self, Mover, StepEvent};
use crate::output::{self, Format};
use crate::playbook::{Fence, Playbook, Step, Via};
use comfy_table::Cell;
use std::path::PathBuf;

/// When and with which hooks a move or split cuts over.
#[derive(Debug, Clone, clap::Args)]
pub struct CutoverArgs {
    /// Copy and keep the copy current, then wait, unfenced, for `shardctl cutover OP`
    /// (`manual`), a daily window (`window`, with --cutover-window) or nothing (`auto`: go on
    /// once the before-cutover hooks pass). Without it the cut-over follows the copy at once.
    #[arg(long, value_enum)]
    pub cutover: Option<crate::playbook::CutoverMode>,
    /// The window for `--cutover window`, HH:MM-HH:MM in UTC (may run past midnight).
    #[arg(long, value_name = "HH:MM-HH:MM")]
    pub cutover_window: Option<crate::playbook::CutoverWindow>,
    /// Run COMMAND at STAGE (started, copied, ready, before-cutover, fenced, flipped, done,
    /// failed, reverted) with the operation as JSON on stdin; repeatable; added to the
    /// inventory's hooks. A failing before-cutover hook postpones the cut-over.
    #[arg(long, value_name = "STAGE=COMMAND")]
    pub hook: Vec<crate::config::HookSpec>,
}

impl CutoverArgs {
    /// Applies the options to the playbook and the inventory's hooks. `before-cutover`
    /// hooks given here travel in the journaled playbook (a resumed run still asks them);
    /// the others run from this process's inventory.
    pub(super) fn apply(
        &self,
        pb: &mut Playbook,
        inv: &mut crate::config::Inventory,
    ) -> Result<()> {
        let (gates, others): (Vec<_>, Vec<_>) = self
            .hook
            .iter()
            .cloned()
            .partition(|h| h.stage == crate::config::HookStage::BeforeCutover);
        inv.file.hooks.extend(others);
        let mode = match (self.cutover, self.cutover_window) {
            (None, Some(_)) | (Some(crate::playbook::CutoverMode::Window), Some(_)) => {
                Some(crate::playbook::CutoverMode::Window)
            }
            (Some(crate::playbook::CutoverMode::Window), None) => {
                return Err(Error::Usage(
                    "--cutover window needs --cutover-window HH:MM-HH:MM".into(),
                ))
            }
            (Some(_), Some(_)) => {
                return Err(Error::Usage(
                    "--cutover-window goes with --cutover window".into(),
                ))
            }
            (mode, None) => mode,
        };
        let mode = match mode {
            None if !gates.is_empty() => Some(crate::playbook::CutoverMode::Auto),
            other => other,
        };
        if let Some(mode) = mode {
            pb.await_cutover(crate::playbook::AwaitCutoverParams {
                mode,
                window: self.cutover_window,
                lag_below_secs: 1,
                check_every_secs: 1,
                hooks: gates,
            });
        }
        Ok(())
    }
}

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
    /// Before each try of the shard fence, end the sessions whose open transaction holds
    /// the shard's tables (otherwise they are only named): sets the lock step's
    /// kill_blockers.
    #[arg(long)]
    pub kill_blockers: bool,
    /// Override the backup step's method.
    #[arg(long, value_enum)]
    pub method: Option<Method>,
    /// What keeps the copy current across nodes: a replication channel on the target
    /// (the default) or shardctl's change stream read from the source's binary log (sets
    /// the start-replication step's `via`). On one node the stream always does.
    #[arg(long, value_enum)]
    pub via: Option<Via>,
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
    /// When to cut over, and hooks.
    #[command(flatten)]
    pub cutover: CutoverArgs,
    /// Keep the old copy for DURATION after the flip (90s, 30m, 2h, 1d), kept current from
    /// the new node: `shardctl revert OP` flips back within it, `shardctl finalize OP` (or
    /// its end) drops the old copy. The move's process waits that long.
    #[arg(long, value_name = "DURATION", value_parser = revert_window_secs)]
    pub revert_window: Option<u64>,
}

fn revert_window_secs(text: &str) -> std::result::Result<u64, String> {
    match crate::playbook::parse_duration(text)? {
        0 => Err(format!("{text:?}: a revert window must last more than 0 s")),
        secs => Ok(secs),
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
                l.kill_blockers |= args.kill_blockers;
            }
            Step::Backup(b) => {
                if let Some(m) = args.method {
                    b.method = m;
                }
            }
            _ => {}
        }
    }
    if let Some(via) = args.via {
        pb.set_via(via);
    }
    Ok(pb)
}

pub fn run_move(ctx: &Context, args: MoveArgs) -> Result<()> {
    let mut pb = playbook(&args)?;
    if pb.is_split() {
        return Err(Error::Usage(
            "that playbook is a split's (it prunes): use it with `shardctl split`".into(),
        ));
    }
    let mut inv = ctx.inventory()?;
    args.cutover.apply(&mut pb, &mut inv)?;
    if let Some(secs) = args.revert_window {
        pb.revert_window(crate::playbook::RevertWindowParams::new(secs));
    }
    pb.check("the playbook")?;
    if args.dry_run && args.offline {
        let plan = crate::ops::plan::move_plan(&inv, args.shard, &args.to, &pb)?;
        match ctx.format {
            Format::Json => output::print_document("move", serde_json::json!({"plan": plan})),
            Format::Table => crate::out!("{}", plan.render()),
        }
        return Ok(());
    }
    let quiet = |_: &StepEvent| {};
    if args.check {
        return report_check(
            ctx,
            "move",
            Mover::dry_run_move(&inv, args.shard, &args.to, pb, &quiet),
        );
    }
    if args.dry_run {
        let plan = Mover::dry_run_move(&inv, args.shard, &args.to, pb, &quiet)?;
        print_dry_run(ctx, "move", &plan);
        return Ok(());
    }
    super::confirm(
        ctx,
        &format!(
            "move shard {} to {}: copy it, fence its writes for the cut-over, point the directory at the copy and drop the old copy",
            args.shard, args.to
        ),
    )?;
    let bar = progress_bar(ctx.format);
    let print = printer("move", ctx.format, bar.clone());
    let mut m = Mover::start(&inv, args.shard, &args.to, pb, &print)?;
    let result = with_copy_bar(bar, &mut m, |m| m.run()).map_err(|e| m.name_interrupted(e));
    print_summary(
        "move",
        ctx.format,
        result.as_ref().map(|_| "moved"),
        summary_fields(&m),
    );
    let state = result?;
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

/// What the summary event of a move, split or resume reports besides its outcome.
pub(super) fn summary_fields(m: &Mover<'_>) -> serde_json::Value {
    let state = m.state();
    serde_json::json!({
        "op": m.op(),
        "shard": m.shard_id(),
        "from": m.source(),
        "to": m.target(),
        "new_shard": m.split().map(|p| p.new_shard),
        "merged_into": m.merge().map(|p| p.survivor),
        "copied_rows": state.copied_rows,
        "fence_ms": state.fence_millis,
        "flipped": state.flipped,
    })
}

/// Arguments of `resume`.
#[derive(Debug, clap::Args)]
pub struct ResumeArgs {
    /// Operation id (see `shardctl ops`).
    pub op: u64,
    /// Run COMMAND at STAGE, as with `move --hook` (the inventory's hooks run too). The
    /// journal keeps only a digest of the operation's own before-cutover hooks: give them
    /// again here, or a resume still to wait for its cut-over is refused.
    #[arg(long, value_name = "STAGE=COMMAND")]
    pub hook: Vec<crate::config::HookSpec>,
}

pub fn resume(ctx: &Context, args: ResumeArgs) -> Result<()> {
    let mut inv = ctx.inventory()?;
    inv.file.hooks.extend(args.hook.iter().cloned());
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
        let bars = PruneBars::new(ctx.format);
        let reports = crate::prune::run(
            &inv,
            shard,
            Some(args.op),
            &crate::prune::Options::default(),
            &|t, w, d, e| bars.update(t, w, d, e),
            None,
        );
        bars.finish();
        let reports = reports?;
        print_prune(ctx, shard, &reports);
        return Ok(());
    }
    let bar = progress_bar(ctx.format);
    let print = printer("resume", ctx.format, bar.clone());
    let mut m = Mover::claim(&inv, args.op, "resume", &print)?;
    let result = with_copy_bar(bar, &mut m, |m| m.resume()).map_err(|e| m.name_interrupted(e));
    print_summary(
        "resume",
        ctx.format,
        result.as_ref().map(|_| "finished"),
        summary_fields(&m),
    );
    let state = result?;
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
    super::confirm(
        ctx,
        &format!(
            "abort operation {}: lift its fence, remove its channel and drop the copy it made",
            args.op
        ),
    )?;
    mover::abort(&inv, args.op)?;
    ctx.show(
        "abort",
        serde_json::json!({"op": args.op, "outcome": "aborted"}),
        || {
            crate::outln!(
                "operation {} aborted: fence lifted, channel removed, target copy dropped, shard online on its source",
                args.op
            )
        },
    );
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
        Format::Json => output::print_document(
            "stop",
            serde_json::json!({"op": args.op, "outcome": outcome}),
        ),
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
    /// Show one operation with its steps and effects.
    pub op: Option<u64>,
    /// Only operations in this state (repeatable).
    #[arg(long, value_enum)]
    pub state: Vec<OpStateArg>,
    /// Only operations of this kind (repeatable).
    #[arg(long, value_enum)]
    pub kind: Vec<OpKindArg>,
    /// Only operations on this shard.
    #[arg(long)]
    pub shard: Option<u32>,
    /// At most this many operations, newest first.
    #[arg(long, default_value_t = 50, value_parser = super::at_least_one)]
    pub limit: usize,
    /// Redraw every --interval seconds until Ctrl-C, or with OP until it has finished
    /// (one JSON document per line under --output json).
    #[arg(long)]
    pub watch: bool,
    /// Seconds between --watch updates.
    #[arg(long, default_value_t = 2.0, requires = "watch", value_parser = super::watch_interval)]
    pub interval: f64,
}

/// `ops --state`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OpStateArg {
    /// Being run, or whose owner died while running it.
    Running,
    /// A step failed; resume or abort it.
    Failed,
    /// Finished.
    Done,
    /// Rolled back.
    Aborted,
}

impl OpStateArg {
    fn matches(self, state: OpState) -> bool {
        matches!(
            (self, state),
            (OpStateArg::Running, OpState::Running)
                | (OpStateArg::Failed, OpState::Failed)
                | (OpStateArg::Done, OpState::Done)
                | (OpStateArg::Aborted, OpState::Aborted)
        )
    }
}

/// `ops --kind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OpKindArg {
    /// Moves (also those of a rebalance).
    Move,
    /// Splits.
    Split,
    /// Merges.
    Merge,
    /// Prunes.
    Prune,
    /// Fences raised by hand (`shardctl lock`).
    Lock,
    /// Availability changes (`shardctl shard set-availability`).
    Availability,
}

impl OpKindArg {
    fn matches(self, kind: OpKind) -> bool {
        matches!(
            (self, kind),
            (OpKindArg::Move, OpKind::Move)
                | (OpKindArg::Split, OpKind::Split)
                | (OpKindArg::Prune, OpKind::Prune)
                | (OpKindArg::Lock, OpKind::Lock)
                | (OpKindArg::Merge, OpKind::Merge)
                | (OpKindArg::Availability, OpKind::Availability)
        )
    }
}

/// `2026-11-22T15:34:19.123Z` as `2026-11-22 15:34:19` for tables.
fn short_time(millis: Option<i64>) -> String {
    millis
        .map(|m| {
            let t = crate::clock::rfc3339_millis(m);
            t.get(..19).unwrap_or(&t).replace('T', " ")
        })
        .unwrap_or_default()
}

pub fn ops(ctx: &Context, args: OpsArgs) -> Result<()> {
    let inv = ctx.inventory()?;
    let mut dir = Directory::open(&inv)?;
    if args.watch {
        return super::watch(
            ctx,
            std::time::Duration::from_secs_f64(args.interval),
            || show_ops(ctx, &mut dir, &args),
        );
    }
    show_ops(ctx, &mut dir, &args).map(|_| ())
}

/// Shows the operations once; true when the one asked for has finished.
fn show_ops(ctx: &Context, dir: &mut Directory, args: &OpsArgs) -> Result<bool> {
    let mut ops = dir.operations(args.op)?;
    if let Some(op) = args.op {
        let Some(o) = ops.first() else {
            return Err(Error::Usage(format!("no operation {op}")));
        };
        let finished = o.state.is_finished();
        match ctx.format {
            Format::Json => output::print_document(
                "ops",
                serde_json::json!({"operation": views::operation_detail(o)}),
            ),
            Format::Table => {
                print_ops_table(std::slice::from_ref(o));
                if !o.limits.is_empty() {
                    crate::outln!("live limits: {}", o.limits.describe());
                }
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
                if let Some(w) = requests::open_window_outputs(o) {
                    print_window(w);
                }
            }
        }
        return Ok(finished);
    }
    ops.retain(|o| {
        (args.state.is_empty() || args.state.iter().any(|s| s.matches(o.state)))
            && (args.kind.is_empty() || args.kind.iter().any(|k| k.matches(o.kind)))
            && args.shard.is_none_or(|s| o.shard_id == Some(s))
    });
    ops.truncate(args.limit);
    match ctx.format {
        Format::Json => output::print_document(
            "ops",
            serde_json::json!({"operations": ops.iter().map(views::operation).collect::<Vec<_>>()}),
        ),
        Format::Table => print_ops_table(&ops),
    }
    Ok(false)
}

/// A move's open revert window: when it ends, and why its end keeps the old copy or the
/// last revert failed, as journaled by its owner.
fn print_window(outputs: &serde_json::Value) {
    if let Some(until) = outputs.get("revert_until_unix").and_then(|v| v.as_i64()) {
        crate::outln!(
            "revert window ends {}",
            crate::clock::rfc3339_millis(until * 1000)
        );
    }
    if let Some(why) = outputs.get("window_held").and_then(|v| v.as_str()) {
        crate::outln!("revert window held open, the old copy kept: {why}");
    }
    if let Some(why) = outputs.get("revert_error").and_then(|v| v.as_str()) {
        crate::outln!("last revert failed before its flip: {why}");
    }
}

/// Arguments of `cutover`.
#[derive(Debug, clap::Args)]
pub struct CutoverCmdArgs {
    /// The operation waiting in its await-cutover step (see `shardctl ops`).
    pub op: u64,
}

/// `shardctl cutover OP`: the go-ahead for an operation that waits for its cut-over.
pub fn cutover(ctx: &Context, args: CutoverCmdArgs) -> Result<()> {
    let inv = ctx.inventory()?;
    let live = match requests::cutover(&inv, args.op)? {
        RequestOutcome::Recorded(r) => r.owner_alive,
        RequestOutcome::Refused(why) => return Err(why.into()),
    };
    ctx.show(
        "cutover",
        serde_json::json!({"op": args.op, "requested": true, "owner_alive": live}),
        || {
            if live {
                crate::outln!(
                    "operation {}: cut-over requested; its owner fences and flips within seconds",
                    args.op
                )
            } else {
                crate::outln!(
                    "operation {}: cut-over requested; it has no live owner: `shardctl resume {}` continues it",
                    args.op,
                    args.op
                )
            }
        },
    );
    Ok(())
}

/// Arguments of `pause` and `continue`.
#[derive(Debug, clap::Args)]
pub struct PauseArgs {
    /// Operation id (see `shardctl ops`).
    pub op: u64,
}

/// `shardctl pause OP` (`pause` true) and `shardctl continue OP`.
pub fn pause(ctx: &Context, args: PauseArgs, pause: bool) -> Result<()> {
    let inv = ctx.inventory()?;
    let r = if pause {
        crate::control::pause(&inv, args.op)?
    } else {
        crate::control::proceed(&inv, args.op)?
    };
    let op = args.op;
    ctx.show(
        if pause { "pause" } else { "continue" },
        serde_json::json!({"op": op, "pause_requested": pause, "owner_alive": r.owner_alive}),
        || match (pause, r.owner_alive) {
            (true, true) => crate::outln!(
                "operation {op}: pause requested; it parks at its next safe point outside any fence (`shardctl ops {op}` shows when it has)"
            ),
            (true, false) => crate::outln!(
                "operation {op}: pause requested; it has no live owner: `shardctl resume {op}` waits paused until `shardctl continue {op}`"
            ),
            (false, true) => crate::outln!("operation {op}: continuing within a second"),
            (false, false) => crate::outln!(
                "operation {op}: no longer paused; it has no live owner: `shardctl resume {op}` continues it"
            ),
        },
    );
    Ok(())
}

/// Arguments of `throttle`.
#[derive(Debug, clap::Args)]
pub struct ThrottleArgs {
    /// Operation id (see `shardctl ops`).
    pub op: u64,
    /// A prune: pause while a replica of the node lags more than this (seconds, 0 to 86400).
    #[arg(long, value_name = "SECS", allow_negative_numbers = true, value_parser = super::limit_max_lag)]
    pub max_lag: Option<u64>,
    /// A prune: target time of one chunk, milliseconds (1 to 600000).
    #[arg(long, value_name = "MS", allow_negative_numbers = true, value_parser = super::limit_chunk_ms)]
    pub chunk_ms: Option<u64>,
    /// A prune: pause while the node has more running threads than this (1 to 100000).
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = super::limit_threads)]
    pub max_threads_running: Option<u64>,
    /// A move, split or merge: lanes of its native copy (1 to 64), applied as each lane
    /// finishes its table.
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = super::limit_workers)]
    pub workers: Option<u64>,
}

/// `shardctl throttle OP ...`.
pub fn throttle(ctx: &Context, args: ThrottleArgs) -> Result<()> {
    let inv = ctx.inventory()?;
    let asked = crate::directory::journal::Limits {
        max_lag_secs: args.max_lag,
        chunk_ms: args.chunk_ms,
        workers: args.workers,
        max_threads_running: args.max_threads_running,
    };
    let r = crate::control::throttle(&inv, args.op, &asked)?;
    let op = args.op;
    ctx.show(
        "throttle",
        serde_json::json!({"op": op, "limits": r.op.limits.to_json(), "owner_alive": r.owner_alive}),
        || {
            if r.owner_alive {
                crate::outln!(
                    "operation {op}: limits now {}; its owner applies them within a second",
                    r.op.limits.describe()
                )
            } else {
                crate::outln!(
                    "operation {op}: limits now {}; it has no live owner: `shardctl resume {op}` runs with them",
                    r.op.limits.describe()
                )
            }
        },
    );
    Ok(())
}

/// `shardctl revert OP` / `finalize OP`.
#[derive(Debug, clap::Args)]
pub struct WindowCmdArgs {
    /// The move waiting in its revert window (see `shardctl ops`).
    pub op: u64,
}

/// `shardctl extend OP --by DURATION | --until TIME`.
#[derive(Debug, clap::Args)]
pub struct ExtendCmdArgs {
    /// The move waiting in its revert window (see `shardctl ops`).
    pub op: u64,
    /// How much longer the window stays open (90s, 30m, 2h, 1d): its end moves by DURATION,
    /// counted from now when the end has passed already (a window its end could not close).
    #[arg(
        long,
        value_name = "DURATION",
        value_parser = extension_secs,
        required_unless_present = "until",
        conflicts_with = "until"
    )]
    pub by: Option<u64>,
    /// When the window ends instead: an RFC 3339 time (2026-11-25T18:00:00Z,
    /// 2026-11-25T19:00:00+01:00) or Unix seconds; later than its current end and than now.
    #[arg(long, value_name = "TIME", value_parser = window_end)]
    pub until: Option<i64>,
}

fn window_end(text: &str) -> std::result::Result<i64, String> {
    match text.parse::<i64>() {
        Ok(secs) => Ok(secs),
        Err(_) => crate::clock::parse_rfc3339(text).ok_or_else(|| {
            format!("{text:?}: not an RFC 3339 time (2026-11-25T18:00:00Z) nor Unix seconds")
        }),
    }
}

fn extension_secs(text: &str) -> std::result::Result<u64, String> {
    match crate::playbook::parse_duration(text)? {
        0 => Err(format!("{text:?}: an extension must last more than 0 s")),
        secs => Ok(secs),
    }
}

/// `shardctl revert OP` / `shardctl finalize OP`: what to do with a move's revert window.
pub fn window(ctx: &Context, args: WindowCmdArgs, request: WindowRequest) -> Result<()> {
    let outcome = requests::window(&ctx.inventory()?, args.op, request)?;
    show_window_request(ctx, args.op, request, outcome)
}

/// `shardctl extend OP --by DURATION | --until TIME`: the window's end moves later.
pub fn extend(ctx: &Context, args: ExtendCmdArgs) -> Result<()> {
    // Clap asks for exactly one of --by (more than 0 s) and --until.
    let by = match args.until {
        Some(until) => requests::Extension::Until(until),
        None => requests::Extension::By(args.by.unwrap_or_default()),
    };
    let (outcome, until) = requests::extend(&ctx.inventory()?, args.op, by)?;
    let request = WindowRequest::ExtendUntil(until.unwrap_or_default());
    show_window_request(ctx, args.op, request, outcome)
}

/// Shows a window request the library recorded, or returns its refusal.
fn show_window_request(
    ctx: &Context,
    op: u64,
    request: WindowRequest,
    outcome: RequestOutcome,
) -> Result<()> {
    let live = match outcome {
        RequestOutcome::Recorded(r) => r.owner_alive,
        RequestOutcome::Refused(why) => return Err(why.into()),
    };
    let verb = request.verb();
    let mut doc = serde_json::json!({"op": op, "requested": true, "owner_alive": live});
    if let WindowRequest::ExtendUntil(until) = request {
        doc["ends_at"] = crate::clock::rfc3339_millis(until * 1000).into();
    }
    ctx.show(
        verb,
        doc,
        || {
            let what = match request {
                WindowRequest::Revert => "revert requested; its owner fences the new node, flips back and lifts the fence".to_string(),
                WindowRequest::Finalize => "finalize requested; its owner removes the reverse channel and drops the old copy once the new node answers and holds the shard".to_string(),
                WindowRequest::ExtendUntil(until) => format!(
                    "extend requested; its owner moves the window's end to {}",
                    crate::clock::rfc3339_millis(until * 1000)
                ),
            };
            if live {
                crate::outln!("operation {op}: {what}")
            } else {
                crate::outln!(
                    "operation {op}: {what} once `shardctl resume {op}` runs it (it has no live owner)"
                )
            }
        },
    );
    Ok(())
}

fn print_ops_table(ops: &[crate::directory::journal::OperationRecord]) {
    let mut t = output::table(&[
        "op", "kind", "shard", "from", "to", "state", "step", "started", "updated", "owner",
        "error",
    ]);
    for o in ops {
        let current = o
            .steps
            .iter()
            .find(|s| s.state != StepState::Done)
            .map(|s| {
                format!(
                    "{}/{} {} ({})",
                    s.step_no + 1,
                    o.steps.len(),
                    s.name,
                    s.state
                )
            })
            .unwrap_or_else(|| "all done".into());
        t.add_row(vec![
            Cell::new(o.id),
            Cell::new(o.kind),
            Cell::new(o.shard_id.map(|s| s.to_string()).unwrap_or_default()),
            Cell::new(o.source.as_deref().unwrap_or("")),
            Cell::new(o.target.as_deref().unwrap_or("")),
            output::status_cell(&views::state_word(o), o.state == OpState::Done),
            Cell::new(current),
            Cell::new(short_time(o.created_at_millis)),
            Cell::new(short_time(o.updated_at_millis)),
            Cell::new(o.owner.as_deref().unwrap_or("")),
            Cell::new(o.error.as_deref().unwrap_or("")),
        ]);
    }
    crate::outln!("{t}");
}
