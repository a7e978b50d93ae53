//! `split`: one shard's key range cut in two, the upper part onto a new shard.

use super::mv::{summary_fields, CutoverArgs};
use super::progress::{
    print_dry_run, print_summary, printer, progress_bar, report_check, with_copy_bar,
};
use super::Context;
use crate::error::{Error, Result};
use crate::ops::mover::{Mover, StepEvent};
use crate::output::Format;
use crate::playbook::{Fence, Playbook, Step, Via};
use std::path::PathBuf;

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
    /// What keeps the copy current across nodes: a replication channel on the target
    /// (the default) or shardctl's change stream read from the source's binary log (sets
    /// the start-replication step's `via`). On one node the stream always does.
    #[arg(long, value_enum)]
    pub via: Option<Via>,
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
    if let Some(via) = args.via {
        pb.set_via(via);
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
    let result = with_copy_bar(bar, &mut m, |m| m.run()).map_err(|e| m.name_interrupted(e));
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
