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

/// How long `config check` waits for a host's answer.
const CHECK_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// `config check`: the inventory parses and every node answers (and its host, over ssh,
/// when the inventory gives one); one row per node.
pub fn config(ctx: &Context, cmd: ConfigCommand) -> Result<()> {
    match cmd {
        ConfigCommand::Check => {
            let inv = ctx.inventory()?;
            let mut rows = Vec::new();
            let mut first_failure: Option<Error> = None;
            for name in inv.node_names() {
                let node = inv.node(name)?;
                let address = format!("{}:{}", node.host(), node.port());
                // A node with `ssh:` is also reached over ssh (host key, login, a command).
                let host = node.spec.ssh.as_ref().map(|_| {
                    crate::remote::host_for(&inv, name).and_then(|h| {
                        h.text("checking the host", "uname -n", CHECK_TIMEOUT)
                            .map(|n| format!("{} ({})", h.describe(), n.trim()))
                    })
                });
                let (host_text, host_error) = match host {
                    None => (serde_json::Value::Null, None),
                    Some(Ok(t)) => (serde_json::json!(t), None),
                    Some(Err(e)) => (serde_json::Value::Null, Some(e)),
                };
                match Server::connect_node(&inv, name) {
                    Ok(s) if host_error.is_none() => rows.push(serde_json::json!({
                        "node": name, "address": address, "ok": true,
                        "server": s.flavor().to_string(), "host": host_text, "error": null,
                    })),
                    Ok(s) => {
                        let e = host_error.expect("checked above");
                        rows.push(serde_json::json!({
                            "node": name, "address": address, "ok": false,
                            "server": s.flavor().to_string(), "host": null, "error": e.to_string(),
                        }));
                        first_failure.get_or_insert(e);
                    }
                    Err(e) => {
                        rows.push(serde_json::json!({
                            "node": name, "address": address, "ok": false,
                            "server": null, "host": host_text, "error": e.to_string(),
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
