//! Handlers of the reference commands: `simulate`, `ids`, `global`, `query`.

use super::{at_least_one, Context};
use crate::directory::Directory;
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
        Format::Json => output::print_document(
            "simulate",
            serde_json::json!({
                "keys": keys.len(),
                "source": keys.origin,
                "function": args.function,
                "elapsed_ms": elapsed_ms.round() as u64,
                "schemes": outcomes,
            }),
        ),
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

/// `ids` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum IdsCommand {
    /// Ids present on more than one shard, each node's auto_increment_increment/offset, and
    /// which scheme each sharded table follows and where it breaks (exit 5 when one breaks).
    #[command(after_help = "Example:\n  shardctl ids check\n  shardctl ids check --output json")]
    Check,
    /// Sequences in the directory that hand out blocks of ids unique across shards.
    #[command(subcommand)]
    Sequence(SequenceCommand),
}

/// `ids sequence` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum SequenceCommand {
    /// Create a sequence.
    #[command(
        after_help = "Example:\n  shardctl ids sequence create orders --start 1 --block 1000"
    )]
    Create {
        /// Its name.
        name: String,
        /// First value.
        #[arg(long, default_value_t = 1, allow_hyphen_values = true)]
        start: i64,
        /// Values per block a router takes at once.
        #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..))]
        block: u32,
        /// Largest value.
        #[arg(long, default_value_t = i64::MAX - 1)]
        max: i64,
        /// A column its ids are stored in, SCHEMA.TABLE.COLUMN of a sharded table (repeat for
        /// several): `ids check` and `status` then name the sequence when its next value is
        /// at or below an id stored there, as after a directory restored from an older
        /// backup.
        #[arg(long, value_name = "SCHEMA.TABLE.COLUMN")]
        feeds: Vec<String>,
    },
    /// Set the columns a sequence's ids are stored in (replacing the ones it had).
    #[command(after_help = "Example:
  shardctl ids sequence feeds orders app.orders.id app.order_archive.id")]
    Feeds {
        /// The sequence.
        name: String,
        /// SCHEMA.TABLE.COLUMN of a sharded table, an integer column.
        #[arg(required = true, value_name = "SCHEMA.TABLE.COLUMN")]
        columns: Vec<String>,
    },
    /// Raise a sequence's next value past the highest id stored in the columns it feeds
    /// (after a directory restored from an older backup); never lowers it.
    #[command(after_help = "Example:
  shardctl ids sequence raise orders")]
    Raise {
        /// The sequence.
        name: String,
        /// Values left unused above the highest stored id, for blocks routers took before
        /// the restore and have not stored yet (default: one block; give block × routers,
        /// or restart the routers first).
        #[arg(long)]
        margin: Option<u64>,
    },
    /// Take values: a block of --count (default: the sequence's block size).
    #[command(after_help = "Example:\n  shardctl ids sequence next orders --count 10")]
    Next {
        /// The sequence.
        name: String,
        /// How many values.
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
        count: Option<u64>,
        /// Seconds to wait for the sequence's row lock.
        #[arg(long, default_value_t = crate::directory::sequences::DEFAULT_LOCK_WAIT_SECS, value_parser = clap::value_parser!(u64).range(1..))]
        lock_wait: u64,
    },
    /// Show sequences.
    #[command(
        after_help = "Example:\n  shardctl ids sequence show\n  shardctl ids sequence show orders"
    )]
    Show {
        /// One sequence (default: all).
        name: Option<String>,
    },
}

fn print_sequences(ctx: &Context, command: &str, seqs: &[crate::directory::sequences::Sequence]) {
    match ctx.format {
        Format::Json => output::print_document(command, serde_json::json!({ "sequences": seqs })),
        Format::Table => {
            let mut t = output::table(&[
                "sequence",
                "next value",
                "block",
                "max",
                "remaining",
                "feeds",
            ]);
            for s in seqs {
                t.add_row(vec![
                    Cell::new(&s.sequence),
                    Cell::new(s.next_value),
                    Cell::new(s.block_size),
                    Cell::new(s.max_value),
                    Cell::new(s.remaining),
                    Cell::new(if s.feeds.is_empty() {
                        "-".to_string()
                    } else {
                        s.feeds.join(", ")
                    }),
                ]);
            }
            crate::outln!("{t}");
        }
    }
}

/// The `ids` command.
pub fn ids(ctx: &Context, cmd: IdsCommand) -> Result<()> {
    let inv = ctx.inventory()?;
    let mut dir = Directory::open(&inv)?;
    match cmd {
        IdsCommand::Check => {
            let snap = dir.load()?;
            let seqs = crate::directory::sequences::sequences(&mut dir)?;
            let report = crate::ids::check(&inv, &snap, &seqs)?;
            match ctx.format {
                Format::Json => output::print_document("ids check", serde_json::json!(report)),
                Format::Table => {
                    let mut t = output::table(&[
                        "node",
                        "auto_increment_increment",
                        "auto_increment_offset",
                        "shards",
                    ]);
                    for n in &report.nodes {
                        t.add_row(vec![
                            Cell::new(&n.node),
                            Cell::new(n.auto_increment_increment),
                            Cell::new(n.auto_increment_offset),
                            Cell::new(
                                n.shards
                                    .iter()
                                    .map(u32::to_string)
                                    .collect::<Vec<_>>()
                                    .join(", "),
                            ),
                        ]);
                    }
                    crate::outln!("{t}");
                    let mut t = output::table(&[
                        "table",
                        "id column",
                        "function",
                        "ids",
                        "on more than one shard",
                        "scheme",
                        "breaks",
                    ]);
                    for x in &report.tables {
                        t.add_row(vec![
                            Cell::new(format!("{}.{}", x.schema, x.table)),
                            Cell::new(format!(
                                "{}{}",
                                x.column,
                                if x.auto_increment {
                                    " (AUTO_INCREMENT)"
                                } else {
                                    ""
                                }
                            )),
                            Cell::new(&x.function),
                            Cell::new(x.ids),
                            output::status_cell(&x.duplicate_ids.to_string(), x.duplicate_ids == 0),
                            Cell::new(&x.scheme),
                            output::status_cell(
                                &if x.breaks.is_empty() {
                                    "holds".to_string()
                                } else {
                                    x.breaks.join("; ")
                                },
                                x.breaks.is_empty(),
                            ),
                        ]);
                    }
                    crate::outln!("{t}");
                    for s in &report.skipped {
                        crate::outln!("skipped {}.{}: {}", s.schema, s.table, s.reason);
                    }
                    if !report.sequences.is_empty() {
                        let mut t = output::table(&[
                            "sequence",
                            "next value",
                            "feeds",
                            "highest stored id",
                            "hands out stored ids",
                        ]);
                        for x in &report.sequences {
                            t.add_row(vec![
                                Cell::new(&x.sequence),
                                Cell::new(x.next_value),
                                Cell::new(if x.feeds.is_empty() {
                                    "- (not checked)".to_string()
                                } else {
                                    x.feeds.join(", ")
                                }),
                                Cell::new(x.highest.as_ref().map_or("-".to_string(), |h| {
                                    format!("{} (shard {} {})", h.value, h.shard, h.column)
                                })),
                                output::status_cell(
                                    x.hazard.as_deref().unwrap_or("no"),
                                    x.hazard.is_none(),
                                ),
                            ]);
                        }
                        crate::outln!("{t}");
                        for x in &report.sequences {
                            for u in &x.unread {
                                crate::outln!("sequence {}: not read: {u}", x.sequence);
                            }
                        }
                    }
                }
            }
            if report.holds() {
                Ok(())
            } else {
                let mut why: Vec<String> = Vec::new();
                let bad: Vec<String> = report
                    .tables
                    .iter()
                    .filter(|t| !t.breaks.is_empty())
                    .map(|t| format!("{}.{}", t.schema, t.table))
                    .collect();
                if !bad.is_empty() {
                    why.push(format!(
                        "ids are not unique across shards in {}",
                        bad.join(", ")
                    ));
                }
                why.extend(report.sequences.iter().filter_map(|s| s.hazard.clone()));
                Err(Error::Refused(why.join("; ")))
            }
        }
        IdsCommand::Sequence(SequenceCommand::Create {
            name,
            start,
            block,
            max,
            feeds,
        }) => {
            let s = crate::ids::create_sequence_feeding(
                &inv, &mut dir, &name, start, block, max, &feeds,
            )?;
            print_sequences(ctx, "ids sequence create", &[s]);
            Ok(())
        }
        IdsCommand::Sequence(SequenceCommand::Feeds { name, columns }) => {
            let s = crate::ids::set_feeds(&inv, &mut dir, &name, &columns)?;
            print_sequences(ctx, "ids sequence feeds", &[s]);
            Ok(())
        }
        IdsCommand::Sequence(SequenceCommand::Raise { name, margin }) => {
            let r = crate::ids::raise(&inv, &mut dir, &name, margin)?;
            match ctx.format {
                Format::Json => output::print_document("ids sequence raise", serde_json::json!(r)),
                Format::Table => {
                    let stored = r
                        .highest
                        .as_ref()
                        .map_or("no id stored in the columns it feeds".to_string(), |h| {
                            format!("shard {} holds {} {}", h.shard, h.column, h.value)
                        });
                    if r.after == r.before {
                        crate::outln!(
                            "sequence {}: next value {} unchanged ({stored})",
                            r.sequence,
                            r.before
                        )
                    } else {
                        crate::outln!(
                            "sequence {}: next value raised from {} to {} ({stored}; margin {})",
                            r.sequence,
                            r.before,
                            r.after,
                            r.margin
                        )
                    }
                }
            }
            Ok(())
        }
        IdsCommand::Sequence(SequenceCommand::Next {
            name,
            count,
            lock_wait,
        }) => {
            let count = match count {
                Some(c) => c,
                None => u64::from(
                    dir.retrying(|d| crate::directory::sequences::sequence(d, &name))?
                        .block_size,
                ),
            };
            let b = crate::directory::sequences::take(&mut dir, &name, count, false, lock_wait)?;
            match ctx.format {
                Format::Json => output::print_document(
                    "ids sequence next",
                    serde_json::json!({
                        "sequence": name, "first": b.first, "last": b.last, "count": b.len(),
                    }),
                ),
                Format::Table => {
                    crate::outln!("{name}: {}..={} ({} values)", b.first, b.last, b.len())
                }
            }
            Ok(())
        }
        IdsCommand::Sequence(SequenceCommand::Show { name }) => {
            let seqs = match name {
                Some(n) => vec![crate::directory::sequences::sequence(&mut dir, &n)?],
                None => crate::directory::sequences::sequences(&mut dir)?,
            };
            print_sequences(ctx, "ids sequence show", &seqs);
            Ok(())
        }
    }
}

/// `global` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum GlobalCommand {
    /// Compare every global table (or one) on every shard with its source of truth:
    /// checksums, then the differing keys (exit 5 when a copy differs or is missing).
    #[command(
        after_help = "Example:\n  shardctl global check\n  shardctl global check employees.departments --output json"
    )]
    Check {
        /// One global table, SCHEMA.TABLE (default: all).
        table: Option<String>,
    },
    /// Record the shard holding a global table's source of truth.
    #[command(after_help = "Example:\n  shardctl global source employees.departments --shard 1")]
    Source {
        /// The global table, SCHEMA.TABLE.
        table: String,
        /// The shard.
        #[arg(long)]
        shard: u32,
    },
    /// Bring every copy back to the source of truth in chunks, then verify by checksum.
    #[command(
        after_help = "Example:\n  shardctl global sync --dry-run\n  shardctl global sync employees.departments --chunk 500"
    )]
    Sync {
        /// One global table, SCHEMA.TABLE (default: all).
        table: Option<String>,
        /// Rows per transaction.
        #[arg(long, default_value_t = 500, value_parser = at_least_one)]
        chunk: usize,
        /// Show what would change, change nothing.
        #[arg(long)]
        dry_run: bool,
    },
}

/// The `global` command.
pub fn global(ctx: &Context, cmd: GlobalCommand) -> Result<()> {
    let inv = ctx.inventory()?;
    let mut dir = Directory::open(&inv)?;
    match cmd {
        GlobalCommand::Check { table } => {
            let reports = crate::global::check(&inv, &mut dir, table.as_deref())?;
            match ctx.format {
                Format::Json => {
                    output::print_document("global check", serde_json::json!({ "tables": reports }))
                }
                Format::Table => {
                    let mut t = output::table(&[
                        "table", "shard", "node", "state", "rows", "missing", "extra", "changed",
                        "keys",
                    ]);
                    for r in &reports {
                        for s in &r.shards {
                            t.add_row(vec![
                                Cell::new(format!("{}.{}", r.schema, r.table)),
                                Cell::new(s.shard),
                                Cell::new(&s.node),
                                output::status_cell(
                                    &if s.state == crate::global::CopyState::Source
                                        && !r.source_recorded
                                    {
                                        "source (lowest shard; none recorded)".to_string()
                                    } else {
                                        s.state.to_string()
                                    },
                                    s.state.agrees(),
                                ),
                                Cell::new(s.rows),
                                Cell::new(s.missing_rows),
                                Cell::new(s.extra_rows),
                                Cell::new(s.changed_rows),
                                Cell::new(s.examples.join(" ")),
                            ]);
                        }
                    }
                    crate::outln!("{t}");
                }
            }
            let bad: Vec<String> = reports
                .iter()
                .flat_map(|r| {
                    r.shards.iter().filter(|s| !s.state.agrees()).map(move |s| {
                        format!("{}.{} {} on shard {}", r.schema, r.table, s.state, s.shard)
                    })
                })
                .collect();
            if bad.is_empty() {
                Ok(())
            } else {
                Err(Error::Refused(format!(
                    "global tables are not identical: {}",
                    bad.join(", ")
                )))
            }
        }
        GlobalCommand::Source { table, shard } => {
            crate::global::set_source(&mut dir, &table, shard)?;
            match ctx.format {
                Format::Json => output::print_document(
                    "global source",
                    serde_json::json!({"table": table, "source_shard": shard}),
                ),
                Format::Table => crate::outln!("{table}: source of truth is shard {shard}"),
            }
            Ok(())
        }
        GlobalCommand::Sync {
            table,
            chunk,
            dry_run,
        } => {
            let done = crate::global::sync(&inv, &mut dir, table.as_deref(), chunk, dry_run)?;
            match ctx.format {
                Format::Json => output::print_document(
                    "global sync",
                    serde_json::json!({ "dry_run": dry_run, "copies": done }),
                ),
                Format::Table => {
                    if done.is_empty() {
                        crate::outln!("every copy is identical to its source; nothing to do");
                    }
                    for c in &done {
                        crate::outln!(
                            "{}.{} shard {} ({}): {} {} row(s) from the source, {} {} row(s), {} chunk(s){}",
                            c.schema,
                            c.table,
                            c.shard,
                            c.node,
                            if dry_run { "would upsert" } else { "upserted" },
                            c.upserted_rows,
                            if dry_run { "would delete" } else { "deleted" },
                            c.deleted_rows,
                            c.chunks,
                            if c.verified { ", verified" } else { "" }
                        );
                        for s in &c.statements {
                            crate::outln!("  {s}");
                        }
                    }
                }
            }
            Ok(())
        }
    }
}

/// Arguments of `query`.
#[derive(Debug, clap::Args)]
pub struct QueryArgs {
    /// The partition function whose shards to query.
    #[arg(long)]
    pub function: String,
    /// Seconds each shard may take (client read timeout and the server's statement limit).
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=86400))]
    pub timeout: u64,
    /// One SELECT; `{table}` (or `{schema.table}`) stands for each shard's physical table.
    pub sql: String,
}

/// The `query` command. A plain query streams: text rows (tab-separated, the shard
/// first) or JSON Lines `row` events as each shard sends them, then a summary. A query
/// with aggregates prints once every shard has answered, its rows merged.
pub fn query(ctx: &Context, args: QueryArgs) -> Result<()> {
    // The text is checked before the inventory is even read.
    crate::query::check_read_only(&args.sql)?;
    crate::query::Template::parse(&args.sql)?;
    let plan = crate::query::Plan::of(&args.sql)?;
    let inv = ctx.inventory()?;
    let mut dir = Directory::open(&inv)?;
    let snap = dir.load()?;
    let ops = dir.active_operations()?;
    let unpruned = crate::query::Unpruned {
        shards: crate::query::unpruned_shards(&snap, &ops),
        per_key: crate::query::per_key_moves(&mut dir, &snap, &ops)?,
    };
    if let Ok(func) = snap.function(&args.function) {
        let mine: Vec<String> = snap
            .shards_of(func.id)
            .filter(|s| unpruned.shards.contains(&s.id))
            .map(|s| s.id.to_string())
            .collect();
        if !mine.is_empty() {
            output::log(
                0,
                &format!(
                    "shard(s) {}: a prune is pending (they still hold rows they no longer own): only each shard's own rows are read",
                    mine.join(", ")
                ),
            );
        }
    }
    let timeout = std::time::Duration::from_secs(args.timeout);
    if !plan.aggregate {
        return query_stream(
            ctx,
            &inv,
            &snap,
            &args.function,
            &args.sql,
            timeout,
            &unpruned,
        );
    }
    let answer =
        crate::query::run_with(&inv, &snap, &args.function, &args.sql, timeout, &unpruned)?;
    match ctx.format {
        Format::Json => {
            let mut v = serde_json::to_value(&answer)
                .map_err(|e| Error::Internal(format!("cannot encode the answer: {e}")))?;
            v["rows"] = crate::query::rows_json(&answer);
            output::print_document("query", v);
        }
        Format::Table => {
            let headers: Vec<&str> = answer.columns.iter().map(String::as_str).collect();
            let mut t = output::table(&headers);
            for r in &answer.rows {
                t.add_row(r.iter().map(|c| Cell::new(c.as_deref().unwrap_or("NULL"))));
            }
            crate::outln!("{t}");
            crate::outln!(
                "{} row(s) from {} shard(s) of {}, aggregates merged",
                answer.rows.len(),
                answer.shards.len(),
                answer.function,
            );
        }
    }
    Ok(())
}

/// A plain query's stream. Text: a header line, then each row as it comes, its cells
/// tab-separated with the shard first (NULL as `NULL`), and a closing count. JSON: a
/// `columns` event, a `row` event per row {`shard`, `row`}, a `shard_done` event per
/// shard, and the `summary` event last, also when a shard failed.
fn query_stream(
    ctx: &Context,
    inv: &crate::config::Inventory,
    snap: &crate::directory::Snapshot,
    function: &str,
    sql: &str,
    timeout: std::time::Duration,
    unpruned: &crate::query::Unpruned,
) -> Result<()> {
    use crate::query::Event;
    let json = ctx.format == Format::Json;
    let mut numeric: Vec<bool> = Vec::new();
    let mut rows = 0u64;
    let mut sink = |ev: Event<'_>| match ev {
        Event::Columns { names, numeric: n } => {
            numeric = n.to_vec();
            if json {
                output::print_event(
                    "query",
                    "columns",
                    serde_json::json!({"function": function, "columns": names}),
                );
            } else {
                crate::outln!("{}", names.join("\t"));
            }
        }
        Event::Row { shard, cells } => {
            rows += 1;
            if json {
                output::print_event(
                    "query",
                    "row",
                    serde_json::json!({"shard": shard, "row": crate::query::row_json(cells, numeric.get(1..).unwrap_or(&[]))}),
                );
            } else {
                let text: Vec<&str> = cells
                    .iter()
                    .map(|c| c.as_deref().unwrap_or("NULL"))
                    .collect();
                crate::outln!("{shard}\t{}", text.join("\t"));
            }
        }
        Event::ShardDone(part) => {
            if json {
                output::print_event(
                    "query",
                    "shard_done",
                    serde_json::to_value(part).unwrap_or_default(),
                );
            }
        }
    };
    let result = crate::query::stream_with(inv, snap, function, sql, timeout, unpruned, &mut sink);
    if json {
        let mut body = serde_json::json!({"function": function, "rows": rows, "aggregated": false});
        match &result {
            Ok(a) => {
                body["columns"] = serde_json::json!(a.columns);
                body["shards"] = serde_json::to_value(&a.shards).unwrap_or_default();
                if !a.owned_rows_only.is_empty() {
                    body["owned_rows_only"] = serde_json::json!(a.owned_rows_only);
                }
                body["outcome"] = "finished".into();
                body["error"] = serde_json::Value::Null;
            }
            Err(e) => {
                body["columns"] = serde_json::Value::Null;
                body["shards"] = serde_json::Value::Null;
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
        output::print_event("query", "summary", body);
    } else if let Ok(a) = &result {
        crate::outln!(
            "{rows} row(s) from {} shard(s) of {function}",
            a.shards.len()
        );
    }
    result.map(|_| ())
}
