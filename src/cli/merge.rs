//! `merge`: shards folded into one, one merge operation per retired shard.

use super::progress::{
    print_dry_run, print_summary, printer, progress_bar, report_check, with_copy_bar,
};
use super::Context;
use crate::directory::Directory;
use crate::error::{Error, Result};
use crate::ops::mover::{self, Mover, StepEvent};
use crate::output::Format;
use crate::playbook::{Playbook, Via};
use std::path::PathBuf;

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
    /// What keeps the copy current across nodes: a replication channel on the target
    /// (the default) or shardctl's change stream read from the source's binary log (sets
    /// the start-replication step's `via`). On one node the stream always does.
    #[arg(long, value_enum)]
    pub via: Option<Via>,
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
    let mut pb = match &args.playbook {
        Some(p) => Playbook::load(p)?,
        None => Playbook::default_merge(),
    };
    if let Some(via) = args.via {
        pb.set_via(via);
    }
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
    let (run, result) = mover::run_merge_request(&inv, &req, &args.to, &pb, &print, &mut |m| {
        with_copy_bar(bar.clone(), m, |m| m.run())
    });
    let operations: Vec<serde_json::Value> = run
        .operations
        .iter()
        .map(|o| {
            serde_json::json!({
                "op": o.op, "kind": "merge", "shard": o.retired, "into": o.survivor,
                "fence_ms": o.fence_millis, "copied_rows": o.copied_rows,
            })
        })
        .collect();
    let (copied_rows, fence_ms) = (run.copied_rows, run.longest_fence_millis);
    print_summary(
        "merge",
        ctx.format,
        result.as_ref().map(|_| "merged"),
        serde_json::json!({
            "op": run.last_op(),
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
