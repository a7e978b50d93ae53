//! The command line: clap definitions and one small handler per command. Handlers parse
//! and print; the library does the work.

mod sandbox;
mod status;

use crate::config::{Inventory, DEFAULT_CONFIG};
use crate::error::Result;
use crate::output::{self, ColorChoice, Format};
use clap::{Parser, Subcommand};
use std::path::PathBuf;

/// Shard management for MySQL and MariaDB fleets sharded through a sharding directory.
#[derive(Debug, Parser)]
#[command(
    name = "shardctl",
    version,
    after_help = "Example:\n  shardctl sandbox up --nodes 3 && shardctl --config sandbox/shardctl.yaml status\n\nExit codes: 0 ok, 1 internal, 2 usage, 3 config, 4 server, 5 refused (unsafe), 6 timeout, 130 interrupted."
)]
pub struct Cli {
    /// Inventory file.
    #[arg(long, global = true, env = "SHARDCTL_CONFIG", default_value = DEFAULT_CONFIG)]
    pub config: PathBuf,
    /// Output format for results.
    #[arg(long, global = true, value_enum, default_value_t = Format::Table)]
    pub output: Format,
    /// When to use colour (NO_COLOR is honoured by `auto`).
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
    /// More logs on stderr (-v statements, -vv everything).
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// The command.
    #[command(subcommand)]
    pub command: Command,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Local sandboxes of real MariaDB/MySQL servers for demos and tests.
    #[command(subcommand)]
    Sandbox(sandbox::SandboxCommand),
    /// The fleet at a glance: nodes, versions, binary logs, replication channels.
    #[command(
        after_help = "Example:\n  shardctl --config sandbox/shardctl.yaml status\n  shardctl status --node node2 --output json"
    )]
    Status(status::StatusArgs),
}

/// Shared context handed to handlers.
pub struct Context {
    /// Where the inventory is.
    pub config: PathBuf,
    /// Output format.
    pub format: Format,
}

impl Context {
    /// Loads the inventory.
    pub fn inventory(&self) -> Result<Inventory> {
        Inventory::load(&self.config)
    }
}

/// Runs a parsed command line.
pub fn run(cli: Cli) -> Result<()> {
    output::init(cli.verbose, cli.color);
    let ctx = Context {
        config: cli.config,
        format: cli.output,
    };
    match cli.command {
        Command::Sandbox(cmd) => sandbox::run(&ctx, cmd),
        Command::Status(args) => status::run(&ctx, args),
    }
}
