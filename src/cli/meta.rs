//! Commands about shardctl itself: shell completions, the man page, and `config check`.

use super::{Cli, Context};
use crate::error::{Error, Result};
use crate::output::{self, Format};
use clap::CommandFactory;
use comfy_table::Cell;

/// `config` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum ConfigCommand {
    /// Parse the inventory and connect to every node (read-only; nothing else is done);
    /// with the directory on a cluster, ask each member its state (exit 3 for a member of
    /// another cluster or with wsrep off, 5 for one not Synced in the Primary component).
    #[command(after_help = "Example:\n  shardctl --config sandbox/shardctl.yaml config check")]
    Check,
}

/// Prints the completion script for `shell` on stdout.
pub fn completions(shell: clap_complete::Shell) -> Result<()> {
    let mut cmd = Cli::command();
    let mut out = std::io::stdout();
    clap_complete::generate(shell, &mut cmd, "shardctl", &mut out);
    Ok(())
}

/// Prints the man page (roff) on stdout: shardctl's own (its commands listed), or one
/// command's (`shardctl-move`, with every option) when `command` names it.
pub fn man(command: Option<&str>) -> Result<()> {
    let mut root = Cli::command();
    // Propagates the global options into every command, as the parser sees them.
    root.build();
    let page = match command {
        None => clap_mangen::Man::new(root),
        Some(name) => {
            let sub = root
                .get_subcommands()
                .find(|c| c.get_name() == name)
                .cloned()
                .ok_or_else(|| {
                    Error::Usage(format!("no command {name:?}: see `shardctl --help`"))
                })?;
            let sub = sub
                .bin_name(format!("shardctl {name}"))
                .display_name(format!("shardctl-{name}"));
            clap_mangen::Man::new(sub)
                .title(format!("shardctl-{name}"))
                .source(format!("shardctl {}", env!("CARGO_PKG_VERSION")))
        }
    };
    let mut out = Vec::new();
    page.render(&mut out)
        .map_err(|e| Error::io("cannot render the man page", e))?;
    use std::io::Write;
    std::io::stdout()
        .write_all(&out)
        .map_err(|e| Error::io("cannot write the man page", e))
}

/// `config check`: the inventory parses and every node answers (and its host, over ssh,
/// when the inventory gives one); one row per node.
pub fn config(ctx: &Context, cmd: ConfigCommand) -> Result<()> {
    match cmd {
        ConfigCommand::Check => {
            let inv = ctx.inventory()?;
            let checks = crate::status::check_nodes(&inv)?;
            let rows: Vec<serde_json::Value> = checks
                .iter()
                .map(|c| {
                    serde_json::json!({
                        "node": c.node, "address": c.address, "ok": c.error.is_none(),
                        "server": c.server, "host": c.host,
                        "error": c.error.as_ref().map(|e| e.to_string()),
                    })
                })
                .collect();
            let members = crate::directory::store::survey(&inv)?;
            let first_failure = checks.into_iter().find_map(|c| c.error).or_else(|| {
                // A member's own failure (another cluster, wsrep off, not Synced) once
                // every node answered.
                members
                    .as_ref()
                    .and_then(|ms| ms.iter().find_map(|m| m.error.as_ref()))
                    .map(|e| match e {
                        Error::Config(m) => Error::Config(m.clone()),
                        Error::Refused(m) => Error::Refused(m.clone()),
                        other => Error::server("directory", other.to_string()),
                    })
            });
            match ctx.format {
                Format::Json => output::print_document(
                    "config check",
                    serde_json::json!({
                        "config": ctx.config.display().to_string(),
                        "directory": {"node": inv.file.directory.node, "cluster": inv.directory_cluster().map(|c| c.name.clone()), "schema": inv.file.directory.schema},
                        "nodes": rows,
                        "directory_members": members,
                    }),
                ),
                Format::Table => {
                    let mut t = output::table(&["node", "address", "server"]);
                    for r in &rows {
                        t.add_row(vec![
                            Cell::new(r["node"].as_str().unwrap_or_default()),
                            Cell::new(r["address"].as_str().unwrap_or_default()),
                            Cell::new(match (r["server"].as_str(), r["error"].as_str()) {
                                (Some(s), None) => match r["host"].as_str() {
                                    Some(h) => format!("{s}; host {h}"),
                                    None => s.to_string(),
                                },
                                (_, Some(e)) => e.to_string(),
                                (None, None) => String::new(),
                            }),
                        ]);
                    }
                    crate::outln!("{t}");
                    if let Some(members) = &members {
                        super::status::print_members(members);
                    }
                    crate::outln!(
                        "{}: {} node(s), directory {} on {}",
                        ctx.config.display(),
                        rows.len(),
                        inv.file.directory.schema,
                        inv.directory_place()
                    );
                }
            }
            if let Some(e) = first_failure {
                // The first node that did not answer, with its own exit code.
                return Err(e);
            }
            Ok(())
        }
    }
}
