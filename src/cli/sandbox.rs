use super::Context;
use crate::error::Result;
use crate::output::{self, Format};
use crate::sandbox::{Sandbox, SandboxBuilder, DEFAULT_BASE_PORT, DEFAULT_DIR};
use comfy_table::Cell;
use std::path::PathBuf;

/// `sandbox` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum SandboxCommand {
    /// Start N local servers, each with its own datadir, port, server_id and binlog, and
    /// write an inventory for them.
    #[command(
        after_help = "Example:\n  shardctl sandbox up --nodes 3 --dir sandbox\n  shardctl --config sandbox/shardctl.yaml status"
    )]
    Up {
        /// Number of servers.
        #[arg(long, default_value_t = 3, value_parser = super::sandbox_nodes)]
        nodes: usize,
        /// Where the sandbox lives.
        #[arg(long, default_value = DEFAULT_DIR)]
        dir: PathBuf,
        /// Port of the first server; the other nodes follow, then the replicas.
        #[arg(long, default_value_t = DEFAULT_BASE_PORT, value_parser = clap::value_parser!(u16).range(1024..))]
        base_port: u16,
        /// Replicas per node, each its own read-only server replicating from its node with
        /// GTID, listed under the node's `replicas:` in the inventory.
        #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..=9))]
        replicas: u8,
        /// Run every server with gtid_strict_mode (each node has its own GTID domain).
        #[arg(long)]
        gtid_strict: bool,
        /// Grant the application account DML on these schemas only (comma-separated),
        /// instead of on every shard schema name.
        #[arg(long, value_delimiter = ',')]
        app_schemas: Option<Vec<String>>,
        /// Serve TLS with a CA and certificate made in DIR/tls; the inventory asks for TLS,
        /// so replication channels and dump tools use it, verifying the certificate.
        #[arg(long)]
        tls: bool,
        /// Put the directory on a Galera cluster of this many servers of its own (dir1,
        /// ...; 2 to 9, 3 to survive the loss of one) instead of on node1; needs the
        /// galera-4 package. See docs/DIRECTORY_CLUSTER.md.
        #[arg(long, value_name = "MEMBERS", value_parser = clap::value_parser!(u8).range(2..=9))]
        directory_cluster: Option<u8>,
        /// Small servers for a fleet of dozens of nodes on one machine: an InnoDB buffer
        /// pool of this many MiB (default 64), and below 64 also small Aria, key and redo
        /// buffers (about 100 MB per server at 32). See docs/BENCHMARKS.md.
        #[arg(long, value_name = "MIB", value_parser = clap::value_parser!(u32).range(8..=65536))]
        buffer_pool: Option<u32>,
    },
    /// Show the sandbox's servers and whether they run.
    #[command(after_help = "Example:\n  shardctl sandbox status --dir sandbox")]
    Status {
        /// Where the sandbox lives.
        #[arg(long, default_value = DEFAULT_DIR)]
        dir: PathBuf,
    },
    /// Restart one server of the sandbox (a clean stop, then a start on the same data and
    /// options); the inventory's `restart_command` of each node runs this.
    #[command(after_help = "Example:\n  shardctl sandbox restart --dir sandbox --node node2")]
    Restart {
        /// Where the sandbox lives.
        #[arg(long, default_value = DEFAULT_DIR)]
        dir: PathBuf,
        /// The node to restart.
        #[arg(long)]
        node: String,
    },
    /// Stop the servers the sandbox started; `--purge` also removes its data.
    #[command(after_help = "Example:\n  shardctl sandbox down --dir sandbox --purge")]
    Down {
        /// Where the sandbox lives.
        #[arg(long, default_value = DEFAULT_DIR)]
        dir: PathBuf,
        /// Remove the sandbox directory and all data.
        #[arg(long)]
        purge: bool,
    },
}

fn print_nodes(ctx: &Context, command: &str, sb: &Sandbox) {
    match ctx.format {
        Format::Json => output::print_document(
            command,
            serde_json::json!({
                "dir": sb.dir(),
                "inventory": sb.inventory_path(),
                "nodes": sb.servers().map(|n| serde_json::json!({
                    "node": n.name,
                    "replica_of": n.primary,
                    "directory_member": n.galera_port.is_some(),
                    "address": format!("127.0.0.1:{}", n.port),
                    "server_id": n.server_id,
                    "pid": n.pid.filter(|_| n.running()),
                    "running": n.running(),
                    "dir": n.dir,
                })).collect::<Vec<_>>(),
            }),
        ),
        Format::Table => {
            let mut t = output::table(&["node", "address", "server_id", "pid", "state"]);
            for n in sb.servers() {
                let running = n.running();
                t.add_row(vec![
                    Cell::new(match (&n.primary, n.galera_port) {
                        (Some(p), _) => format!("{} (replica of {p})", n.name),
                        (None, Some(_)) => format!("{} (directory member)", n.name),
                        (None, None) => n.name.clone(),
                    }),
                    Cell::new(format!("127.0.0.1:{}", n.port)),
                    Cell::new(n.server_id),
                    Cell::new(
                        n.pid
                            .filter(|_| running)
                            .map(|p| p.to_string())
                            .unwrap_or_else(|| "-".into()),
                    ),
                    output::status_cell(if running { "running" } else { "stopped" }, running),
                ]);
            }
            crate::outln!("{t}");
        }
    }
}

pub fn run(ctx: &Context, cmd: SandboxCommand) -> Result<()> {
    match cmd {
        SandboxCommand::Up {
            nodes,
            dir,
            base_port,
            tls,
            replicas,
            gtid_strict,
            app_schemas,
            directory_cluster,
            buffer_pool,
        } => {
            let existed = dir.exists();
            let mut builder = SandboxBuilder::new(&dir)
                .nodes(nodes)
                .base_port(base_port)
                .replicas(usize::from(replicas))
                .gtid_strict(gtid_strict)
                .directory_cluster(usize::from(directory_cluster.unwrap_or(0)))
                .tls(tls);
            if let Some(mb) = buffer_pool {
                builder = builder.buffer_pool_mb(mb);
            }
            if let Some(schemas) = &app_schemas {
                let names: Vec<&str> = schemas.iter().map(String::as_str).collect();
                builder = builder.app_schemas(&names);
            }
            let sb = builder.start().inspect_err(|_| {
                // A refused start leaves no empty directory behind (remove_dir only
                // removes an empty one: nothing a partial start wrote is lost).
                if !existed {
                    let _ = std::fs::remove_dir(&dir);
                }
            })?;
            print_nodes(ctx, "sandbox up", &sb);
            if ctx.format == Format::Table {
                crate::outln!(
                    "Inventory: {inv}\nTry:  shardctl --config {inv} status\nStop: shardctl sandbox down --dir {dir}",
                    inv = sb.inventory_path().display(),
                    dir = dir.display()
                );
            }
            Ok(())
        }
        SandboxCommand::Status { dir } => {
            let sb = Sandbox::open(&dir)?;
            print_nodes(ctx, "sandbox status", &sb);
            Ok(())
        }
        SandboxCommand::Restart { dir, node } => {
            let mut sb = Sandbox::open(&dir)?;
            sb.restart_server(&node)?;
            if ctx.format == Format::Table {
                crate::outln!("restarted {node}");
            } else {
                output::print_json(&serde_json::json!({"restarted": node}));
            }
            Ok(())
        }
        SandboxCommand::Down { dir, purge } => {
            let stopped = Sandbox::open(&dir)?.down(purge)?;
            if ctx.format == Format::Table {
                crate::outln!(
                    "stopped {stopped} server(s){}",
                    if purge { ", data removed" } else { "" }
                );
            } else {
                output::print_document(
                    "sandbox down",
                    serde_json::json!({"stopped": stopped, "purged": purge}),
                );
            }
            Ok(())
        }
    }
}
