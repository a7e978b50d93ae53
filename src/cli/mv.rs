//! Handlers for `move`, `resume`, `abort` and `ops`.

use super::{views, Context};
use crate::copy::Method;
use crate::directory::journal::{OpKind, OpState, StepState, WindowRequest, WindowRequestOutcome};
use crate::directory::Directory;
use crate::error::{Error, Result};
use crate::ops::mover::{self, Mover, StepEvent, StepEventKind};
use crate::output::{self, Format};
use crate::playbook::{Fence, Playbook, Step};
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
    fn apply(&self, pb: &mut Playbook, inv: &mut crate::config::Inventory) -> Result<()> {
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

/// Prints a dry run's plan.
fn print_dry_run(ctx: &Context, command: &str, plan: &crate::ops::effects::DryRunPlan) {
    match ctx.format {
        Format::Json => output::print_document(command, serde_json::json!({"plan": plan})),
        Format::Table => crate::out!("{}", plan.render()),
    }
}

/// Prints what `--check` found: the plan's outline, or under `--output json` also a
/// refusal as `{"ok": false, "refusal": {...}}` on stdout (the error goes to stderr too), so
/// a CI job reading stdout always gets an answer.
fn report_check(
    ctx: &Context,
    command: &str,
    plan: Result<crate::ops::effects::DryRunPlan>,
) -> Result<()> {
    match plan {
        Ok(plan) => {
            print_check(ctx, command, &plan);
            Ok(())
        }
        Err(e) => {
            if ctx.format == Format::Json {
                output::print_document(
                    command,
                    serde_json::json!({
                        "ok": false,
                        "refusal": {
                            "kind": e.exit_code().name(),
                            "exit_code": e.exit_code() as i32,
                            "message": e.to_string(),
                        },
                    }),
                );
            }
            Err(e)
        }
    }
}

/// Prints what `--check` found.
fn print_check(ctx: &Context, command: &str, plan: &crate::ops::effects::DryRunPlan) {
    let steps: Vec<&str> = plan.steps.iter().map(|s| s.step.as_str()).collect();
    match ctx.format {
        Format::Json => output::print_document(
            command,
            serde_json::json!({
                "ok": true,
                "kind": plan.kind,
                "shard": plan.shard,
                "from": plan.source,
                "to": plan.target,
                "flavors": plan.flavors,
                "steps": steps,
                "refusal": null,
            }),
        ),
        Format::Table => crate::outln!(
            "{}  {} of shard {} from {} to {}: preflight passed, {} steps would run ({})",
            output::paint("ok", true),
            plan.kind,
            plan.shard,
            plan.source,
            plan.target,
            steps.len(),
            steps.join(", ")
        ),
    }
}

/// What the progress bar shows besides the copy: the running step and since when, and
/// since when the write fence has been up.
#[derive(Default)]
struct StepDisplay {
    step: std::sync::Mutex<Option<(u32, String)>>,
    fence_since: std::sync::Mutex<Option<std::time::Instant>>,
}

impl StepDisplay {
    fn note(&self, e: &StepEvent) {
        if let Ok(mut step) = self.step.lock() {
            *step = (e.event == StepEventKind::Started).then(|| (e.step_no + 1, e.step.clone()));
        }
        if let Ok(mut fence) = self.fence_since.lock() {
            match (e.step.as_str(), e.event) {
                ("lock", StepEventKind::Done) => *fence = Some(std::time::Instant::now()),
                ("unlock", StepEventKind::Done) | (_, StepEventKind::Failed) => *fence = None,
                _ => {}
            }
        }
    }

    /// The bar's text: copy counters while copying, the lag while catching up, how long
    /// the fence has been up while it is.
    fn render(&self, copy: &crate::copy::ProgressSnapshot) -> String {
        let step = self.step.lock().ok().and_then(|s| s.clone());
        let mut parts = Vec::new();
        match &step {
            Some((_, name)) if name == "backup" => parts.push(copy.render()),
            Some((_, name)) if name == "wait" => parts.push(match output::last_lag() {
                Some(secs) => format!("replica lag {secs}s"),
                None => "replica lag ?".to_string(),
            }),
            _ => {}
        }
        if let Some(since) = self.fence_since.lock().ok().and_then(|f| *f) {
            parts.push(format!("fence up {} ms", since.elapsed().as_millis()));
        }
        parts.join("  ")
    }
}

/// Step events. Under `--output json`: one JSON line per event on stdout
/// (`step_started`, `step_done`, `step_failed`; docs/JSON.md). Otherwise one line per
/// finished step on stderr (printed above the bar on a terminal, so it does not tear it);
/// the running step is shown in the bar, or logged at `-v` off a terminal.
fn printer(
    command: &'static str,
    format: Format,
    bar: Option<(indicatif::ProgressBar, std::sync::Arc<StepDisplay>)>,
) -> impl Fn(&StepEvent) {
    move |e: &StepEvent| {
        if format == Format::Json {
            output::print_event(
                command,
                &format!("step_{}", e.event.as_str()),
                serde_json::json!({
                    "op": e.op,
                    "step": e.step_no + 1,
                    "name": e.step,
                    "elapsed_ms": e.millis,
                    "detail": e.detail,
                }),
            );
            return;
        }
        if let Some((_, display)) = &bar {
            display.note(e);
        }
        if e.event == StepEventKind::Started {
            match &bar {
                Some((b, _)) => {
                    b.set_message(format!("op {} step {} {}", e.op, e.step_no + 1, e.step))
                }
                None => output::log(
                    1,
                    &format!("op {} step {:>2} {} started", e.op, e.step_no + 1, e.step),
                ),
            }
            return;
        }
        let mut line = format!(
            "op {} step {:>2} {:<18} {} in {} ms",
            e.op,
            e.step_no + 1,
            e.step,
            e.event.as_str(),
            e.millis.unwrap_or(0)
        );
        if let Some(error) = e.detail.get("error").and_then(|v| v.as_str()) {
            line.push_str(": ");
            line.push_str(error);
        }
        match &bar {
            Some((b, _)) => b.println(line),
            None => crate::errln!("{line}"),
        }
    }
}

/// The last line of a streaming command under `--output json`: the `summary` event, with
/// `outcome` and, when it failed, the error (which also goes to stderr as usual).
fn print_summary(
    command: &'static str,
    format: Format,
    outcome: std::result::Result<&str, &Error>,
    fields: serde_json::Value,
) {
    if format != Format::Json {
        return;
    }
    let mut body = fields;
    match outcome {
        Ok(word) => body["outcome"] = word.into(),
        Err(e) => {
            body["outcome"] = match e {
                Error::Interrupted | Error::InterruptedAt(_) => "interrupted",
                _ => "failed",
            }
            .into();
            body["error"] = serde_json::json!({
                "kind": e.exit_code().name(),
                "exit_code": e.exit_code() as i32,
                "message": e.to_string(),
            });
        }
    }
    output::print_event(command, "summary", body);
}

/// The operation's bar on a terminal (stderr), None elsewhere: the running step, then the
/// copy's rows done/total, bytes, rates and ETA ([`crate::copy::ProgressSnapshot::render`]),
/// the replica's lag while catching up, the fence's age while it is up.
fn progress_bar(format: Format) -> Option<(indicatif::ProgressBar, std::sync::Arc<StepDisplay>)> {
    use std::io::IsTerminal;
    if format != Format::Table || !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = indicatif::ProgressBar::new(0);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} {msg:32} [{bar:30}] {prefix} ({elapsed})",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    bar.enable_steady_tick(std::time::Duration::from_millis(120));
    Some((bar, Default::default()))
}

/// Runs `work` on the mover while a thread redraws the bar from its copy counters and the
/// step display, ten times a second; the bar is cleared when the work ends.
fn with_copy_bar<T>(
    bar: Option<(indicatif::ProgressBar, std::sync::Arc<StepDisplay>)>,
    mover: &mut Mover<'_>,
    work: impl FnOnce(&mut Mover<'_>) -> T,
) -> T {
    use std::sync::atomic::{AtomicBool, Ordering};
    let progress = mover.copy_progress();
    let control = mover.control();
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            let Some((bar, display)) = bar else { return };
            while !done.load(Ordering::Relaxed) {
                let snap = progress.snapshot();
                // Before the copy begins its total is 0, which a bar would draw as full.
                bar.set_length(snap.total_shown().max(1));
                bar.set_position(snap.rows);
                let text = display.render(&snap);
                bar.set_prefix(match (control.paused(), control.pause_requested()) {
                    (true, _) => format!("paused (`shardctl continue`)  {text}"),
                    (false, true) => format!("pausing at the next safe point  {text}"),
                    _ => text,
                });
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
    let result = with_copy_bar(bar, &mut m, |m| m.run())
        .map_err(|e| name_interrupted(e, m.op(), m.state().flipped));
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
fn summary_fields(m: &Mover<'_>) -> serde_json::Value {
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
    let result = with_copy_bar(bar, &mut m, |m| m.resume())
        .map_err(|e| name_interrupted(e, args.op, m.state().flipped));
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
                if let Some(w) = o
                    .steps
                    .iter()
                    .find(|s| s.name == "revert-window" && s.state != StepState::Done)
                {
                    print_window(&w.outputs);
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
    let mut dir = Directory::open(&inv)?;
    let rec = dir.operation(args.op)?;
    if rec.state.is_finished() {
        return Err(Error::Usage(format!(
            "operation {} is {}: there is no cut-over left to start",
            args.op, rec.state
        )));
    }
    match rec.steps.iter().find(|s| s.state != StepState::Done) {
        Some(s) if s.name == "await-cutover" => {}
        Some(s) => {
            return Err(Error::Usage(format!(
                "operation {} is not waiting for its cut-over: its next step is {} {} (only an operation started with --cutover waits, once its copy is verified)",
                args.op,
                s.step_no + 1,
                s.name
            )))
        }
        None => {
            return Err(Error::Usage(format!(
                "operation {} has no step left to run",
                args.op
            )))
        }
    }
    if !dir.request_cutover(args.op)? {
        return Err(Error::Usage(format!(
            "operation {} finished meanwhile",
            args.op
        )));
    }
    let live = rec.owner.is_some() && rec.heartbeat_age_secs.is_some_and(|a| a < 20);
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
    ask_window(ctx, args.op, request.verb(), |_| Ok(request))
}

/// `shardctl extend OP --by DURATION | --until TIME`: the window's end moves later.
pub fn extend(ctx: &Context, args: ExtendCmdArgs) -> Result<()> {
    ask_window(ctx, args.op, "extend", |outputs| {
        let until = outputs
            .get("revert_until_unix")
            .and_then(|v| v.as_i64())
            .ok_or_else(|| {
                Error::Refused(format!(
                    "operation {}: its revert window is opening (no end journaled yet); try again",
                    args.op
                ))
            })?;
        let from = until.max(crate::clock::unix_secs());
        // Clap asks for exactly one of --by (more than 0 s) and --until.
        let asked = match args.until {
            Some(asked) => asked,
            None => from + args.by.unwrap_or_default() as i64,
        };
        if asked <= from {
            return Err(Error::Usage(format!(
                "--until {}: not later than {} (the window's end, or now when it has passed): extend only moves the end later",
                crate::clock::rfc3339_millis(asked.saturating_mul(1000)),
                crate::clock::rfc3339_millis(from * 1000)
            )));
        }
        Ok(WindowRequest::ExtendUntil(asked))
    })
}

/// Records `request` (built from the revert-window step's outputs) for the owner of `op`,
/// refused unless `op` waits in its revert window.
fn ask_window(
    ctx: &Context,
    op: u64,
    verb: &str,
    request: impl FnOnce(&serde_json::Value) -> Result<WindowRequest>,
) -> Result<()> {
    let args = WindowCmdArgs { op };
    let inv = ctx.inventory()?;
    let mut dir = Directory::open(&inv)?;
    let rec = dir.operation(args.op)?;
    if rec.state.is_finished() {
        return Err(Error::Usage(format!(
            "operation {} is {}: its revert window is closed (the old copy is gone), nothing to {verb}",
            args.op, rec.state
        )));
    }
    let request = match rec.steps.iter().find(|s| s.state != StepState::Done) {
        Some(s) if s.name == "revert-window" => {
            let reverting = s.outputs.get("revert_began").and_then(|v| v.as_bool()) == Some(true);
            let request = request(&s.outputs)?;
            if request != WindowRequest::Revert && reverting {
                return Err(Error::Refused(format!(
                    "operation {}: a revert is under way (or was when its owner stopped; `shardctl resume {}` settles it): no {verb} requested; if the revert stops before its flip back, the window opens again and {verb} can be asked then",
                    args.op, args.op
                )));
            }
            request
        }
        Some(s) => {
            return Err(Error::Usage(format!(
                "operation {} is not in a revert window: its next step is {} {} (only a move started with --revert-window has one, once it flipped)",
                args.op,
                s.step_no + 1,
                s.name
            )))
        }
        None => {
            return Err(Error::Usage(format!(
                "operation {} has no step left to run",
                args.op
            )))
        }
    };
    match dir.request_window(args.op, request)? {
        WindowRequestOutcome::Recorded => {}
        WindowRequestOutcome::Finished => {
            return Err(Error::Usage(format!(
                "operation {} finished meanwhile",
                args.op
            )))
        }
        WindowRequestOutcome::Conflicts(pending) => {
            return Err(Error::Refused(format!(
                "operation {}: a {} is already requested and not yet taken up by its owner; it stands (no {verb} requested)",
                args.op,
                pending.verb()
            )))
        }
    }
    let live = rec.owner.is_some() && rec.heartbeat_age_secs.is_some_and(|a| a < 20);
    let mut doc = serde_json::json!({"op": args.op, "requested": true, "owner_alive": live});
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
                crate::outln!("operation {}: {what}", args.op)
            } else {
                crate::outln!(
                    "operation {}: {what} once `shardctl resume {}` runs it (it has no live owner)",
                    args.op,
                    args.op
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
        Format::Json => output::print_document(
            "workload",
            serde_json::json!({"function": args.function, "report": report}),
        ),
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

/// The prune's bar on a terminal: one table at a time (rows walked of its estimate,
/// rows deleted, deletion rate); when the prune moves on to the next table the finished
/// one leaves a line above the bar, and [`PruneBars::finish`] clears the last one.
struct PruneBars {
    on: bool,
    current: std::sync::Mutex<Option<(String, indicatif::ProgressBar, u64, std::time::Instant)>>,
}

impl PruneBars {
    fn new(format: Format) -> PruneBars {
        use std::io::IsTerminal;
        PruneBars {
            on: format == Format::Table && std::io::stderr().is_terminal(),
            current: Default::default(),
        }
    }

    fn update(&self, table: &str, walked: u64, deleted: u64, estimate: u64) {
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
    fn finish(&self) {
        let mut current = self.current.lock().unwrap_or_else(|p| p.into_inner());
        Self::close(current.take());
    }
}

fn print_prune(ctx: &Context, shard: u32, reports: &[crate::prune::TableReport]) {
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
    /// Before each try of the shard fence, end the sessions whose open transaction holds
    /// the shard's tables (otherwise they are only named): sets the lock step's
    /// kill_blockers.
    #[arg(long)]
    pub kill_blockers: bool,
    /// Run the procedure with every effect recorded instead of sent (read-only); prints
    /// the statements a real run would send on these servers.
    #[arg(long, conflicts_with = "check")]
    pub dry_run: bool,
    /// The dry run, reporting only whether the real run would be refused.
    #[arg(long)]
    pub check: bool,
    /// When to cut over, and hooks.
    #[command(flatten)]
    pub cutover: CutoverArgs,
}

pub fn split(ctx: &Context, args: SplitArgs) -> Result<()> {
    use crate::ops::split::SplitAt;
    let mut inv = ctx.inventory()?;
    let mut pb = match &args.playbook {
        Some(p) => Playbook::load(p)?,
        None => Playbook::default_split(),
    };
    for s in &mut pb.steps {
        if let Step::Lock(l) = s {
            if let Some(f) = args.fence {
                l.fence = f;
            }
            l.kill_blockers |= args.kill_blockers;
        }
    }
    if !pb.is_split() {
        return Err(Error::Usage(
            "that playbook is a move's (it drops the source): a split's playbook prunes both shards".into(),
        ));
    }
    args.cutover.apply(&mut pb, &mut inv)?;
    pb.check("the playbook")?;
    let at = match (&args.at, &args.point, &args.values) {
        (Some(a), None, None) if a == "median" => SplitAt::Median,
        (Some(a), None, None) => SplitAt::Key(a.clone()),
        (None, p, None) => SplitAt::Point(p.clone()),
        (None, None, Some(v)) => SplitAt::Values(v.clone()),
        _ => return Err(Error::Usage("give one of --at, --point or --values".into())),
    };
    let quiet = |_: &StepEvent| {};
    if args.check {
        return report_check(
            ctx,
            "split",
            Mover::dry_run_split(&inv, args.shard, &args.to, &at, pb, &quiet),
        );
    }
    if args.dry_run {
        let plan = Mover::dry_run_split(&inv, args.shard, &args.to, &at, pb, &quiet)?;
        print_dry_run(ctx, "split", &plan);
        return Ok(());
    }
    super::confirm(
        ctx,
        &format!(
            "split shard {}: copy part of its key space to a new shard on {}, fence its writes for the cut-over, point the directory at both, then delete from each the rows it no longer owns",
            args.shard, args.to
        ),
    )?;
    let bar = progress_bar(ctx.format);
    let print = printer("split", ctx.format, bar.clone());
    let mut m = Mover::start_split(&inv, args.shard, &args.to, &at, pb, &print)?;
    let new_shard = m.split().map(|p| p.new_shard).unwrap_or(0);
    let result = with_copy_bar(bar, &mut m, |m| m.run())
        .map_err(|e| name_interrupted(e, m.op(), m.state().flipped));
    let mut fields = summary_fields(&m);
    fields["split"] = serde_json::json!(m.split());
    print_summary(
        "split",
        ctx.format,
        result.as_ref().map(|_| "split"),
        fields,
    );
    let state = result?;
    match ctx.format {
        Format::Json => {}
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

/// Arguments of `merge`.
#[derive(Debug, clap::Args)]
pub struct MergeArgs {
    /// The shards to merge (at least two, adjacent, of one function).
    #[arg(long, value_delimiter = ',', required = true)]
    pub shards: Vec<u32>,
    /// The node of the merged shard: one of the shards lives there and survives.
    #[arg(long)]
    pub to: String,
    /// A playbook to run instead of the embedded playbooks/merge.yaml.
    #[arg(long)]
    pub playbook: Option<PathBuf>,
    /// Run the first merge of the request with every effect recorded instead of sent
    /// (read-only); prints the statements a real run would send on these servers.
    #[arg(long, conflicts_with = "check")]
    pub dry_run: bool,
    /// The dry run, reporting only whether the real run would be refused.
    #[arg(long)]
    pub check: bool,
    /// Run COMMAND at STAGE of each merge, as with `move --hook` (the inventory's hooks run
    /// too); the document's `kind` is `merge`, with its `survivor` and `retired` shards.
    #[arg(long, value_name = "STAGE=COMMAND")]
    pub hook: Vec<crate::config::HookSpec>,
}

pub fn merge(ctx: &Context, args: MergeArgs) -> Result<()> {
    let mut inv = ctx.inventory()?;
    inv.file.hooks.extend(args.hook.iter().cloned());
    let pb = match &args.playbook {
        Some(p) => Playbook::load(p)?,
        None => Playbook::default_merge(),
    };
    if pb.is_split() {
        return Err(Error::Usage(
            "that playbook is a split's (it prunes): a merge's playbook drops the retired shard"
                .into(),
        ));
    }
    let snap = Directory::open(&inv)?.load()?;
    // Known shards first (named as unknown), then busy ones (named with their operation).
    for s in &args.shards {
        snap.shard(*s)?;
    }
    crate::ops::mover::refuse_busy(&inv, &args.shards)?;
    let req = crate::ops::merge::request(&snap, &args.shards, &args.to)?;
    inv.node(&args.to)?;
    let survivor = req.survivor;
    let quiet = |_: &StepEvent| {};
    // The first merge of the request, as a dry run: later ones read the fleet as the
    // earlier ones leave it.
    let first = &req.steps[0];
    let dry =
        |pb: Playbook| Mover::dry_run_merge(&inv, survivor, first.retired, &args.to, pb, &quiet);
    // Every merge's tables and rows, before anything (a move included) changes.
    let pre = crate::ops::merge::precheck(&inv, &snap, &req);
    if args.check {
        return report_check(ctx, "merge", pre.and_then(|_| dry(pb)));
    }
    pre?;
    if args.dry_run {
        let plan = dry(pb)?;
        print_dry_run(ctx, "merge", &plan);
        return Ok(());
    }
    let retired: Vec<u32> = req.steps.iter().map(|p| p.retired).collect();
    super::confirm(
        ctx,
        &format!(
            "merge shards {} into shard {survivor} on {}: copy each one's rows into shard {survivor} (kept current by a channel from another node), fence it, point its keys at shard {survivor} and drop it",
            retired.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(","),
            args.to
        ),
    )?;
    let bar = progress_bar(ctx.format);
    let print = printer("merge", ctx.format, bar.clone());
    let mut operations = Vec::new();
    let (mut copied_rows, mut fence_ms) = (0u64, 0u64);
    let mut last_op = None;
    let result = (|| -> Result<()> {
        for p in &req.steps {
            let mut m =
                Mover::start_merge(&inv, survivor, p.retired, &args.to, pb.clone(), &print)?;
            last_op = Some(m.op());
            let res = with_copy_bar(bar.clone(), &mut m, |m| m.run())
                .map_err(|e| name_interrupted(e, m.op(), m.state().flipped));
            operations.push(serde_json::json!({
                "op": m.op(), "kind": "merge", "shard": p.retired, "into": survivor,
                "fence_ms": m.state().fence_millis, "copied_rows": m.state().copied_rows,
            }));
            let st = res?;
            copied_rows += st.copied_rows;
            fence_ms = fence_ms.max(st.fence_millis.unwrap_or(0));
        }
        Ok(())
    })();
    print_summary(
        "merge",
        ctx.format,
        result.as_ref().map(|_| "merged"),
        serde_json::json!({
            "op": last_op,
            "shard": survivor,
            "node": args.to,
            "retired": retired,
            "operations": operations,
            "copied_rows": copied_rows,
            "fence_ms": fence_ms,
        }),
    );
    result?;
    if ctx.format == Format::Table {
        crate::outln!(
            "shards {} merged into shard {survivor} on {} ({} operation(s), {copied_rows} rows copied, longest write fence {fence_ms} ms)",
            retired.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(","),
            args.to,
            operations.len()
        );
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
                Format::Json => output::print_document(
                    "rebalance plan",
                    serde_json::json!({
                        "by": by,
                        "directory_version": file.directory_version,
                        "size_source": file.size_source,
                        "unpruned_shards": file.unpruned_shards,
                        "moves": file.moves.iter().map(|m| serde_json::json!({
                            "shard": m.shard,
                            "from": m.from,
                            "to": m.to,
                            "weight": m.weight,
                            "bytes": m.bytes,
                        })).collect::<Vec<_>>(),
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
            super::confirm(
                ctx,
                &format!(
                    "run {} moves of {} (each copies a shard, fences its writes for the cut-over and drops the old copy)",
                    file.moves.len(),
                    plan.display()
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
                            "shard": a.shard,
                            "to": a.to,
                            "moves_finished": done,
                            "moves": total,
                            "elapsed_ms": ((a.ended - a.started) * 1000.0).round() as u64,
                            "error": a.error,
                        }),
                    ),
                    Format::Table => {
                        let line = format!(
                            "move {done}/{total}: shard {} to {} {} in {:.1}s",
                            a.shard,
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
                    "shard": a.shard,
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
