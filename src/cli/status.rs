use super::Context;
use crate::error::Result;
use crate::output::{self, Format};
use crate::status::{gather_nodes, NodeReport};
use comfy_table::Cell;

/// Arguments of `status`.
#[derive(Debug, clap::Args)]
pub struct StatusArgs {
    /// Only these nodes (repeatable).
    #[arg(long = "node")]
    pub nodes: Vec<String>,
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

pub fn run(ctx: &Context, args: StatusArgs) -> Result<()> {
    let inv = ctx.inventory()?;
    let gathered = gather_nodes(&inv, &args.nodes)?;
    match ctx.format {
        Format::Json => output::print_json(&serde_json::json!({ "nodes": gathered.reports })),
        Format::Table => {
            let mut t = output::table(&[
                "node",
                "address",
                "server",
                "server_id",
                "binlog",
                "position",
                "read_only",
                "channels",
            ]);
            for r in &gathered.reports {
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
                            channels_cell(r),
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
            println!("{t}");
        }
    }
    match gathered.into_error() {
        Some(e) => Err(e),
        None => Ok(()),
    }
}
