//! What the long-running commands (move, split, merge, resume) print while they run and
//! when they end: step lines or JSON events, the progress bar, the summary event, and the
//! reports of `--dry-run` and `--check`.

use super::Context;
use crate::error::{Error, Result};
use crate::ops::mover::{Mover, StepEvent, StepEventKind};
use crate::output::{self, Format};

/// Prints a dry run's plan.
pub(super) fn print_dry_run(ctx: &Context, command: &str, plan: &crate::ops::effects::DryRunPlan) {
    match ctx.format {
        Format::Json => output::print_document(command, serde_json::json!({"plan": plan})),
        Format::Table => crate::out!("{}", plan.render()),
    }
}

/// Prints what `--check` found: the plan's outline, or under `--output json` also a
/// refusal as `{"ok": false, "refusal": {...}}` on stdout (the error goes to stderr too), so
/// a CI job reading stdout always gets an answer.
pub(super) fn report_check(
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
pub(super) struct StepDisplay {
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
pub(super) fn printer(
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
pub(super) fn print_summary(
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
pub(super) fn progress_bar(
    format: Format,
) -> Option<(indicatif::ProgressBar, std::sync::Arc<StepDisplay>)> {
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
pub(super) fn with_copy_bar<T>(
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
