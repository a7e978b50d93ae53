//! Handlers of the reference commands: `simulate`, `ids`, `global`, `query`.

use super::{at_least_one, Context};
use crate::directory::{Directory, Router};
use crate::error::{Error, Result};
use crate::ident::Ident;
use crate::output::{self, Format};
use crate::simulate::{self, DirChange, KeySet, Outcome, Resize, Scheme, SplitAt};
use comfy_table::Cell;
use std::path::PathBuf;

fn scheme(s: &str) -> std::result::Result<Scheme, String> {
    s.parse::<Scheme>().map_err(|e| e.to_string())
}

/// Arguments of `simulate`.
#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("keys").required(true).args(["keys_file", "column", "range"])))]
pub struct SimulateArgs {
    /// Keys, one per line (optionally `KEY<TAB>BYTES`).
    #[arg(long, value_name = "FILE")]
    pub keys_file: Option<PathBuf>,
    /// Keys from a live column: every shard's copy of a sharded table, else the table on
    /// --node (default: the directory node).
    #[arg(long, value_name = "SCHEMA.TABLE.COLUMN")]
    pub column: Option<String>,
    /// Generated integer keys START, START+STEP, ... below END.
    #[arg(long, value_name = "START..END", allow_hyphen_values = true)]
    pub range: Option<String>,
    /// Step of --range.
    #[arg(long, default_value_t = 1, requires = "range")]
    pub step: i64,
    /// Node holding an unsharded --column table.
    #[arg(long, requires = "column")]
    pub node: Option<String>,
    /// N: nodes now (default with --function: the nodes holding its shards).
    #[arg(long, value_parser = at_least_one)]
    pub nodes: Option<usize>,
    /// M: nodes after.
    #[arg(long, value_parser = at_least_one)]
    pub to_nodes: Option<usize>,
    /// Schemes (comma-separated): modulo-crc32, modulo-md5, consistent-md5,
    /// consistent-crc32, range, directory. Default: all that apply.
    #[arg(long = "scheme", value_delimiter = ',', value_parser = scheme)]
    pub schemes: Vec<Scheme>,
    /// Ring points per node for the consistent schemes.
    #[arg(long, default_value_t = simulate::DEFAULT_POINTS, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub points: u32,
    /// The directory's function (the `directory` scheme, and N by default).
    #[arg(long)]
    pub function: Option<String>,
    /// Simulate splitting this shard of --function onto --to.
    #[arg(long, value_name = "SHARD", conflicts_with = "move_shard", requires_all = ["function", "to"])]
    pub split: Option<u32>,
    /// Simulate moving this shard of --function to --to.
    #[arg(long = "move", value_name = "SHARD", requires_all = ["function", "to"])]
    pub move_shard: Option<u32>,
    /// The node a simulated split or move goes to.
    #[arg(long)]
    pub to: Option<String>,
    /// Where a simulated split cuts: a key (range) or a ring point (hash); default the
    /// median key (range) or the middle of the arc (hash).
    #[arg(long, allow_hyphen_values = true, requires = "split")]
    pub at: Option<String>,
    /// Values a simulated list split gives the new shard.
    #[arg(long, value_delimiter = ',', requires = "split")]
    pub values: Vec<String>,
}

fn parse_range(text: &str) -> Result<(i64, i64)> {
    let bad = || Error::Usage(format!("--range {text:?}: write START..END (integers)"));
    let (a, b) = text.split_once("..").ok_or_else(bad)?;
    Ok((
        a.trim().parse().map_err(|_| bad())?,
        b.trim().parse().map_err(|_| bad())?,
    ))
}

/// `SCHEMA.TABLE.COLUMN`.
fn split_column(text: &str) -> Result<(Ident, Ident, Ident)> {
    let parts: Vec<&str> = text.split('.').collect();
    if parts.len() != 3 {
        return Err(Error::Usage(format!(
            "--column {text:?} must be written SCHEMA.TABLE.COLUMN"
        )));
    }
    Ok((
        Ident::new("schema", parts[0])?,
        Ident::new("table", parts[1])?,
        Ident::new("column", parts[2])?,
    ))
}

/// The `simulate` command: everything is checked before any key is read from a server.
pub fn simulate_cmd(ctx: &Context, args: SimulateArgs) -> Result<()> {
    let change = match (args.split, args.move_shard, &args.to) {
        (Some(shard), _, Some(to)) => Some(DirChange::Split {
            shard,
            to: to.clone(),
            at: match (&args.at, args.values.is_empty()) {
                (Some(_), false) => {
                    return Err(Error::Usage("give --at or --values, not both".into()))
                }
                (Some(a), true) if a.len() == 32 && a.chars().all(|c| c.is_ascii_hexdigit()) => {
                    SplitAt::Point(a.clone())
                }
                (Some(a), true) => SplitAt::Key(a.clone()),
                (None, false) => SplitAt::Values(args.values.clone()),
                (None, true) => SplitAt::Middle,
            },
        }),
        (None, Some(shard), Some(to)) => Some(DirChange::Move {
            shard,
            to: to.clone(),
        }),
        _ => None,
    };
    let mut schemes = args.schemes.clone();
    if schemes.is_empty() {
        if args.to_nodes.is_some() {
            schemes.extend(Scheme::DEFAULTS);
        }
        if change.is_some() {
            schemes.push(Scheme::Directory);
        }
    }
    if schemes.contains(&Scheme::Directory) && change.is_none() {
        return Err(Error::Usage(
            "the directory scheme needs --function F with --split SHARD or --move SHARD, and --to NODE".into(),
        ));
    }
    let statics: Vec<Scheme> = schemes
        .iter()
        .copied()
        .filter(|s| *s != Scheme::Directory)
        .collect();
    if schemes.is_empty() {
        return Err(Error::Usage(
            "nothing to simulate: give --to-nodes M, or --function F with --split SHARD or --move SHARD and --to NODE".into(),
        ));
    }
    if !statics.is_empty() && args.to_nodes.is_none() {
        return Err(Error::Usage(format!(
            "scheme {} needs --to-nodes M",
            statics[0]
        )));
    }
    // The directory is read only when something needs it.
    let needs_dir = args.function.is_some() || args.column.is_some();
    let (inv, snap) = if needs_dir {
        let inv = ctx.inventory()?;
        let snap = Directory::open(&inv)?.load()?;
        (Some(inv), Some(snap))
    } else {
        (None, None)
    };
    if let (Some(snap), Some(f)) = (&snap, &args.function) {
        snap.function(f)?;
    }
    let from = match (args.nodes, &snap, &args.function) {
        (Some(n), _, _) => Some(n),
        (None, Some(snap), Some(f)) => {
            let func = snap.function(f)?;
            let mut nodes: Vec<&str> = snap.shards_of(func.id).map(|s| s.node.as_str()).collect();
            nodes.sort();
            nodes.dedup();
            Some(nodes.len()).filter(|n| *n > 0)
        }
        _ => None,
    };
    if !statics.is_empty() && from.is_none() {
        return Err(Error::Usage(
            "give --nodes N (or --function F whose shards are on N nodes)".into(),
        ));
    }
    let keys = match (&args.keys_file, &args.column, &args.range) {
        (Some(path), _, _) => simulate::source::keys_file(path)?,
        (_, Some(col), _) => {
            let (s, t, c) = split_column(col)?;
            let (Some(inv), Some(snap)) = (&inv, &snap) else {
                return Err(Error::Internal("no inventory for --column".into()));
            };
            simulate::source::live_column(inv, snap, &s, &t, &c, args.node.as_deref())?
        }
        (_, _, Some(r)) => {
            let (a, b) = parse_range(r)?;
            KeySet::generated(a, b, args.step)?
        }
        _ => return Err(Error::Usage("give --keys-file, --column or --range".into())),
    };
    let started = std::time::Instant::now();
    let mut outcomes: Vec<Outcome> = Vec::new();
    if let (Some(from), Some(to)) = (from, args.to_nodes) {
        outcomes.extend(simulate::simulate(
            &keys,
            &statics,
            Resize {
                from,
                to,
                points: args.points,
            },
        )?);
    }
    if let (Some(change), Some(snap), Some(f)) = (&change, &snap, &args.function) {
        outcomes.push(simulate::simulate_directory(snap, f, &keys, change)?);
    }
    let elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
    match ctx.format {
        Format::Json => output::print_json(&serde_json::json!({
            "keys": keys.len(),
            "source": keys.origin,
            "function": args.function,
            "elapsed_ms": (elapsed_ms * 10.0).round() / 10.0,
            "schemes": outcomes,
        })),
        Format::Table => {
            let mut t = output::table(&[
                "scheme",
                "nodes",
                "keys",
                "moved",
                "share",
                "expected",
                "bytes moved",
                "balance before",
                "balance after",
            ]);
            for o in &outcomes {
                t.add_row(vec![
                    Cell::new(&o.scheme),
                    Cell::new(format!("{} → {}", o.nodes_before, o.nodes_after)),
                    Cell::new(o.keys),
                    Cell::new(o.moved_keys),
                    Cell::new(format!("{:.1}%", o.moved_share * 100.0)),
                    Cell::new(
                        o.expected_moved_share
                            .map_or("-".to_string(), |e| format!("{:.1}%", e * 100.0)),
                    ),
                    Cell::new(match (o.moved_bytes, o.total_bytes) {
                        (Some(m), Some(t)) => format!("{m} of {t}"),
                        _ => "-".to_string(),
                    }),
                    Cell::new(format!("{:.3}", o.balance_before)),
                    Cell::new(format!("{:.3}", o.balance_after)),
                ]);
            }
            crate::outln!("{t}");
            crate::outln!(
                "{} keys from {}; computed in {:.0} ms. balance = max keys on a node / average.",
                keys.len(),
                keys.origin,
                elapsed_ms
            );
        }
    }
    Ok(())
}

#[allow(dead_code)]
fn router(ctx: &Context) -> Result<Router> {
    Router::connect(&ctx.inventory()?)
}
