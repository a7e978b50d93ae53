//! Commands about shardctl itself: shell completions, the man page, and `config check`.

use super::{Cli, Context};
use crate::error::{Error, Result};
use crate::output::{self, Format};
use crate::server::Server;
use clap::CommandFactory;
use comfy_table::Cell;

/// `config` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum ConfigCommand {
    /// Parse the inventory and connect to every node (read-only; nothing else is done).
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

/// `config check`: the inventory parses and every node answers; one row per node.
pub fn config(ctx: &Context, cmd: ConfigCommand) -> Result<()> {
    match cmd {
        ConfigCommand::Check => {
            let inv = ctx.inventory()?;
            let mut rows = Vec::new();
            let mut first_failure: Option<Error> = None;
            for name in inv.node_names() {
                let node = inv.node(name)?;
                let address = format!("{}:{}", node.host(), node.port());
                match Server::connect_node(&inv, name) {
                    Ok(s) => rows.push(serde_json::json!({
                        "node": name, "address": address, "ok": true,
                        "server": s.flavor().to_string(), "error": null,
                    })),
                    Err(e) => {
                        rows.push(serde_json::json!({
                            "node": name, "address": address, "ok": false,
                            "server": null, "error": e.to_string(),
                        }));
                        first_failure.get_or_insert(e);
                    }
                }
            }
            match ctx.format {
                Format::Json => output::print_document(
                    "config check",
                    serde_json::json!({
                        "config": ctx.config.display().to_string(),
                        "directory": {"node": inv.file.directory.node, "schema": inv.file.directory.schema},
                        "nodes": rows,
                    }),
                ),
                Format::Table => {
                    let mut t = output::table(&["node", "address", "server"]);
                    for r in &rows {
                        t.add_row(vec![
                            Cell::new(r["node"].as_str().unwrap_or_default()),
                            Cell::new(r["address"].as_str().unwrap_or_default()),
                            Cell::new(
                                r["server"]
                                    .as_str()
                                    .or(r["error"].as_str())
                                    .unwrap_or_default(),
                            ),
                        ]);
                    }
                    crate::outln!("{t}");
                    crate::outln!(
                        "{}: {} node(s), directory {} on {}",
                        ctx.config.display(),
                        rows.len(),
                        inv.file.directory.schema,
                        inv.file.directory.node
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
