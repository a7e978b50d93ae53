use super::Context;
use crate::error::Result;
use crate::output::{self, Format};
use crate::status::{gather_fleet_sized, NodeReport, SizeSource};
use comfy_table::Cell;

/// Arguments of `status`.
#[derive(Debug, clap::Args)]
pub struct StatusArgs {
    /// Only these nodes (repeatable).
    #[arg(long = "node")]
    pub nodes: Vec<String>,
    /// Exact shard sizes: refresh each shard table's statistics first (ANALYZE
    /// NO_WRITE_TO_BINLOG TABLE), instead of the statistics as they stand (stale right
    /// after a move).
    #[arg(long, conflicts_with = "watch")]
    pub exact: bool,
    /// Redraw every --interval seconds until Ctrl-C (one JSON document per line under
    /// --output json).
    #[arg(long)]
    pub watch: bool,
    /// Seconds between --watch updates.
    #[arg(long, default_value_t = 2.0, requires = "watch", value_parser = super::watch_interval)]
    pub interval: f64,
}

fn yes_no(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

fn channels_cell(r: &NodeReport) -> Cell {
    if r.channels.is_empty() {
        return Cell::new("-");
    }
    let text: Vec<String> = r
        .channels
        .iter()
        .map(|c| {
            let lag = c
                .seconds_behind
                .map(|s| format!("{s}s"))
                .unwrap_or_else(|| "?".into());
            match c.last_error() {
                Some(e) => format!("{} <- {} ERROR {e}", c.name, c.source),
                None => format!(
                    "{} <- {} io={} sql={} lag={lag}",
                    c.name,
                    c.source,
                    c.io_running,
                    yes_no(c.sql_running)
                ),
            }
        })
        .collect();
    output::status_cell(&text.join("\n"), r.channels.iter().all(|c| c.healthy()))
}

fn replicas_cell(r: &NodeReport) -> Cell {
    if r.replicas.is_empty() {
        return Cell::new("-");
    }
    let text: Vec<String> = r
        .replicas
        .iter()
        .map(|x| {
            let name = if x.replica == x.address {
                x.address.clone()
            } else {
                format!("{} ({})", x.replica, x.address)
            };
            match (x.reachable, &x.io_state, &x.error) {
                (false, _, e) => format!("{name} unreachable: {}", e.as_deref().unwrap_or("")),
                (true, None, e) => format!("{name} {}", e.as_deref().unwrap_or("")),
                (true, Some(io), e) => {
                    let lag = x
                        .seconds_behind
                        .map(|s| format!("{s}s"))
                        .unwrap_or_else(|| "?".into());
                    let mut line = format!(
                        "{name} io={io} sql={} lag={lag}",
                        yes_no(x.sql_running == Some(true))
                    );
                    if let Some(e) = e {
                        line.push_str(&format!(" ERROR {e}"));
                    }
                    line
                }
            }
        })
        .collect();
    output::status_cell(&text.join("\n"), r.replicas.iter().all(|x| x.healthy()))
}

pub fn run(ctx: &Context, args: StatusArgs) -> Result<()> {
    let inv = ctx.inventory()?;
    if args.watch {
        return super::watch(
            ctx,
            std::time::Duration::from_secs_f64(args.interval),
            || show(ctx, &inv, &args).map(|_| false),
        );
    }
    show(ctx, &inv, &args)
}

fn show(ctx: &Context, inv: &crate::config::Inventory, args: &StatusArgs) -> Result<()> {
    let source = if args.exact {
        SizeSource::Exact
    } else {
        SizeSource::Statistics
    };
    let fleet = gather_fleet_sized(inv, &args.nodes, source)?;
    match ctx.format {
        Format::Json => output::print_document("status", serde_json::json!(fleet)),
        Format::Table => {
            let mut t = output::table(&[
                "node",
                "address",
                "server",
                "server_id",
                "binlog",
                "position",
                "read_only",
                "shards",
                "shard data",
                "channels",
                "replicas",
            ]);
            for r in &fleet.nodes {
                match (&r.settings, &r.error) {
                    (Some(s), _) => {
                        t.add_row(vec![
                            Cell::new(&r.name),
                            Cell::new(&r.address),
                            Cell::new(r.flavor.as_deref().unwrap_or("")),
                            Cell::new(s.server_id),
                            Cell::new(if s.log_bin {
                                s.binlog_format.as_str()
                            } else {
                                "off"
                            }),
                            Cell::new(
                                r.coordinates
                                    .as_ref()
                                    .map(|c| c.position.to_string())
                                    .unwrap_or_default(),
                            ),
                            Cell::new(if s.super_read_only {
                                "super"
                            } else {
                                yes_no(s.read_only)
                            }),
                            Cell::new(r.shards),
                            Cell::new(human_bytes(r.shard_bytes)),
                            channels_cell(r),
                            replicas_cell(r),
                        ]);
                    }
                    (None, err) => {
                        t.add_row(vec![
                            Cell::new(&r.name),
                            Cell::new(&r.address),
                            output::status_cell(
                                &format!("unreachable: {}", err.as_deref().unwrap_or("")),
                                false,
                            ),
                        ]);
                    }
                }
            }
            crate::outln!("{t}");
            for r in &fleet.nodes {
                if let (Some(registered), Ok(n)) = (&r.directory_address, inv.node(&r.name)) {
                    crate::errln!(
                        "shardctl: warning: node {}: the directory sends applications to {registered}, the inventory says {}:{}",
                        r.name,
                        n.host(),
                        n.port()
                    );
                }
            }
            if let Some(members) = &fleet.directory_members {
                print_members(members);
            }
            match fleet.directory_version {
                None => crate::outln!("No sharding directory yet: `shardctl init` creates it."),
                Some(v) => {
                    let mut t = output::table(&[
                        "shard",
                        "function",
                        "covers",
                        "node",
                        "schemas",
                        "rows (est.)",
                        "size",
                        "state",
                        "availability",
                        "operation",
                    ]);
                    for s in &fleet.shards {
                        t.add_row(vec![
                            Cell::new(s.id),
                            Cell::new(&s.function),
                            Cell::new(super::views::covers_text(&s.coverage, s.keys)),
                            Cell::new(&s.node),
                            Cell::new(s.schemas.join(", ")),
                            Cell::new(s.rows),
                            Cell::new(format!(
                                "{}{}",
                                match (fleet.size_source, s.size_source) {
                                    (SizeSource::Exact, SizeSource::Statistics) => {
                                        format!("{} (statistics)", human_bytes(s.bytes))
                                    }
                                    _ => human_bytes(s.bytes),
                                },
                                if s.unpruned { " (unpruned)" } else { "" }
                            )),
                            output::status_cell(
                                s.state.as_sql(),
                                s.state == crate::directory::ShardState::Online,
                            ),
                            output::status_cell(
                                super::views::availability_word(s.availability),
                                s.availability == crate::directory::Availability::Available,
                            ),
                            Cell::new(s.operation.as_deref().unwrap_or("-")),
                        ]);
                    }
                    crate::outln!("{t}");
                    crate::outln!("directory version {v}, {} shards", fleet.shards.len());
                    let unpruned: Vec<String> = fleet
                        .shards
                        .iter()
                        .filter(|s| s.unpruned)
                        .map(|s| s.id.to_string())
                        .collect();
                    if !unpruned.is_empty() {
                        crate::outln!(
                            "prune pending on shard(s) {}: their rows and sizes still count rows they no longer own (`query` reads only each shard's own)",
                            unpruned.join(", ")
                        );
                    }
                    for s in &fleet.shards {
                        if let Some(w) = &s.revert_window {
                            print_revert_window(s.id, w);
                        }
                        if let Some(why) = &s.stale_location {
                            crate::outln!(
                                "shard {}: STALE LOCATION? the directory places it on {}, but {why}: was the directory restored from an older backup? (routers send its keys to {})",
                                s.id,
                                s.node,
                                s.node
                            );
                        }
                    }
                    for q in &fleet.sequences {
                        if let Some(why) = &q.hazard {
                            crate::outln!("SEQUENCE BEHIND? {why}");
                        }
                        for u in &q.unread {
                            crate::outln!("sequence {}: not checked: {u}", q.sequence);
                        }
                    }
                    crate::outln!(
                        "{}",
                        match fleet.size_source {
                            SizeSource::Statistics => "sizes: table statistics, which lag behind recent copies and large changes (`status --exact` refreshes them first)",
                            SizeSource::Exact => "sizes: exact (each shard table's statistics refreshed first with ANALYZE; rows stay estimates)",
                        }
                    );
                }
            }
        }
    }
    match crate::status::first_error(fleet.errors) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// The directory's cluster: each member, its state, and the one shardctl writes through.
pub(super) fn print_members(members: &[crate::directory::store::MemberReport]) {
    let mut t = output::table(&["directory member", "address", "state", "role"]);
    for m in members {
        let state = match (&m.state, &m.error) {
            (Some(s), None) => output::status_cell(&s.describe(), true),
            (Some(s), Some(e)) => output::status_cell(
                &format!(
                    "{}; not used: {}",
                    s.describe(),
                    s.unusable().unwrap_or_else(|| e.to_string())
                ),
                false,
            ),
            (None, Some(e)) => output::status_cell(&format!("unreachable: {e}"), false),
            (None, None) => Cell::new("-"),
        };
        let role = match (m.writer, m.reader) {
            (true, true) => "writer, reader",
            (true, false) => "writer",
            (false, true) => "reader",
            (false, false) => "-",
        };
        t.add_row(vec![
            Cell::new(&m.member),
            Cell::new(&m.address),
            state,
            Cell::new(role),
        ]);
    }
    crate::outln!("{t}");
}

/// Bytes in KiB/MiB/GiB.
/// A shard's open revert window: when it ends, and why a held one keeps the old copy.
fn print_revert_window(shard: u32, w: &crate::status::RevertWindow) {
    let ends = w.ends_at.as_deref().unwrap_or("(end not journaled yet)");
    match &w.held {
        Some(why) => crate::outln!(
            "shard {shard}: move #{} revert window HELD past its end {ends}, the old copy kept: {why} (`shardctl revert {}`, `shardctl extend {} --until TIME`)",
            w.op,
            w.op,
            w.op
        ),
        None => crate::outln!("shard {shard}: move #{} revert window open, ends {ends}", w.op),
    }
    if let Some(why) = &w.revert_error {
        crate::outln!(
            "shard {shard}: move #{} last revert failed before its flip: {why}",
            w.op
        );
    }
}

pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}
