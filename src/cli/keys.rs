//! `move-keys`: some of a shard's keys, with their rows, go to another existing shard.

use super::mv::{summary_fields, CutoverArgs};
use super::progress::{
    print_dry_run, print_summary, printer, progress_bar, report_check, with_copy_bar,
};
use super::Context;
use crate::directory::{Directory, Key, RingPoint, ShardingType};
use crate::error::{Error, Result};
use crate::ops::keys::KeyRequest;
use crate::ops::mover::{Mover, StepEvent};
use crate::output::Format;
use crate::playbook::{Playbook, Step};
use std::path::PathBuf;

/// Arguments of `move-keys`.
#[derive(Debug, clap::Args)]
pub struct MoveKeysArgs {
    /// The partition function whose keys move.
    #[arg(long)]
    pub function: String,
    /// Range functions: the keys LOWER..UPPER (upper excluded), at the top or the bottom
    /// of one shard's range.
    #[arg(long, allow_hyphen_values = true, conflicts_with_all = ["arc", "keys", "keys_file"])]
    pub range: Option<String>,
    /// Hash functions: the hashes AFTER..UP_TO (ring points of 32 hex digits; AFTER
    /// excluded), at one end of one shard's arc.
    #[arg(long, conflicts_with_all = ["keys", "keys_file"])]
    pub arc: Option<String>,
    /// List and per-key functions: the values or keys that move (comma-separated), all of
    /// one shard.
    #[arg(long, value_delimiter = ',', conflicts_with = "keys_file")]
    pub keys: Option<Vec<String>>,
    /// List and per-key functions: a file of the values or keys that move, one per line.
    #[arg(long)]
    pub keys_file: Option<PathBuf>,
    /// The shard that takes them (of the same function; beside them for a range or arc).
    #[arg(long)]
    pub to_shard: u32,
    /// A playbook to run instead of the embedded playbooks/move-keys.yaml.
    #[arg(long)]
    pub playbook: Option<PathBuf>,
    /// Before each try of the key fence, end the sessions whose open transaction holds
    /// the donor's tables (otherwise they are only named): sets the lock step's
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

/// `LOWER..UPPER`, each end as `parse` reads it.
fn two_ends<T>(what: &str, text: &str, parse: impl Fn(&str) -> Result<T>) -> Result<(T, T)> {
    let (a, b) = text
        .split_once("..")
        .ok_or_else(|| Error::Usage(format!("--{what} {text:?}: give LOWER..UPPER")))?;
    Ok((parse(a.trim())?, parse(b.trim())?))
}

/// The keys the arguments name, read as the function's keys.
fn request(
    args: &MoveKeysArgs,
    kind: ShardingType,
    key: crate::directory::KeyType,
) -> Result<KeyRequest> {
    let key_of = |s: &str| key.parse(s);
    match (kind, &args.range, &args.arc, &args.keys, &args.keys_file) {
        (ShardingType::Range, Some(r), None, None, None) => {
            let (lower, upper) = two_ends("range", r, key_of)?;
            Ok(KeyRequest::Range { lower, upper })
        }
        (ShardingType::Hash, None, Some(a), None, None) => {
            let (after, up_to) = two_ends("arc", a, RingPoint::from_hex)?;
            Ok(KeyRequest::Arc { after, up_to })
        }
        (ShardingType::List | ShardingType::Key, None, None, Some(values), None) => {
            Ok(KeyRequest::Values(
                values
                    .iter()
                    .map(|v| key_of(v))
                    .collect::<Result<Vec<Key>>>()?,
            ))
        }
        (ShardingType::List | ShardingType::Key, None, None, None, Some(file)) => {
            let text = std::fs::read_to_string(file).map_err(|e| {
                Error::Usage(format!("cannot read --keys-file {}: {e}", file.display()))
            })?;
            Ok(KeyRequest::Values(
                text.lines()
                    .map(str::trim)
                    .filter(|l| !l.is_empty())
                    .map(key_of)
                    .collect::<Result<Vec<Key>>>()?,
            ))
        }
        (ShardingType::Range, ..) => Err(Error::Usage(format!(
            "function {} is a range function: give --range LOWER..UPPER",
            args.function
        ))),
        (ShardingType::Hash, ..) => Err(Error::Usage(format!(
            "function {} is a hash function: give --arc AFTER..UP_TO",
            args.function
        ))),
        (ShardingType::List, ..) => Err(Error::Usage(format!(
            "function {} is a list function: give --keys V1,V2,... or --keys-file FILE",
            args.function
        ))),
        (ShardingType::Key, ..) => Err(Error::Usage(format!(
            "function {} maps keys one by one: give --keys K1,K2,... or --keys-file FILE",
            args.function
        ))),
    }
}

pub fn move_keys(ctx: &Context, args: MoveKeysArgs) -> Result<()> {
    let mut inv = ctx.inventory()?;
    let mut pb = match &args.playbook {
        Some(p) => Playbook::load(p)?,
        None => Playbook::default_move_keys(),
    };
    for s in &mut pb.steps {
        if let Step::Lock(l) = s {
            l.kill_blockers |= args.kill_blockers;
        }
    }
    args.cutover.apply(&mut pb, &mut inv)?;
    pb.check("the playbook")?;
    let snap = Directory::open(&inv)?.load()?;
    let func = snap.function(&args.function)?;
    let req = request(&args, func.sharding_type, func.key_type)?;
    let quiet = |_: &StepEvent| {};
    if args.check {
        return report_check(
            ctx,
            "move-keys",
            Mover::dry_run_key_move(&inv, &args.function, &req, args.to_shard, pb, &quiet),
        );
    }
    if args.dry_run {
        let plan = Mover::dry_run_key_move(&inv, &args.function, &req, args.to_shard, pb, &quiet)?;
        print_dry_run(ctx, "move-keys", &plan);
        return Ok(());
    }
    super::confirm(
        ctx,
        &format!(
            "move {req} of function {} to shard {}: copy their rows, keep them current from the donor's binary log, fence those keys only for the cut-over, point the directory at shard {}, then delete them from the donor",
            args.function, args.to_shard, args.to_shard
        ),
    )?;
    let bar = progress_bar(ctx.format);
    let print = printer("move-keys", ctx.format, bar.clone());
    let mut m = Mover::start_key_move(&inv, &args.function, &req, args.to_shard, pb, &print)?;
    let result = with_copy_bar(bar, &mut m, |m| m.run()).map_err(|e| m.name_interrupted(e));
    let mut fields = summary_fields(&m);
    fields["key_move"] = serde_json::json!(m.plan().key_move());
    print_summary(
        "move-keys",
        ctx.format,
        result.as_ref().map(|_| "moved_keys"),
        fields,
    );
    let state = result?;
    match ctx.format {
        Format::Json => {}
        Format::Table => crate::outln!(
            "{req} of function {} moved from shard {} to shard {} (operation {}, {} rows copied, key fence {} ms)",
            args.function,
            m.shard_id(),
            args.to_shard,
            m.op(),
            state.copied_rows,
            state.fence_millis.unwrap_or(0)
        ),
    }
    Ok(())
}
