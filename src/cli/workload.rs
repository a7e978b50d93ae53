//! `workload`: a router-driven load against the sandbox fleet, for demos and tests.

use super::Context;
use crate::error::{Error, Result};
use crate::output::{self, Format};
use comfy_table::Cell;

/// Arguments of `workload`.
#[derive(Debug, clap::Args)]
pub struct WorkloadArgs {
    /// Partition function whose shards are written.
    #[arg(long)]
    pub function: String,
    /// Writes per second, all streams together (one stream and thread per shard, each
    /// writing its share over its shard's whole key space).
    #[arg(long, default_value_t = 500, value_parser = clap::value_parser!(u32).range(1..))]
    pub rate: u32,
    /// How long to run, seconds.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..))]
    pub seconds: u64,
    /// Create the workload table in every shard first.
    #[arg(long)]
    pub setup: bool,
    /// Keep the locations loaded at the start and re-read the directory only when a
    /// server's error says to (read-only, table gone, lost connection, the wrong-shard
    /// guard); the check then counts the writes a shard that does not own the key
    /// acknowledged.
    #[arg(long)]
    pub stale_router: bool,
    /// Tenant mode: these keys (comma-separated) get a stream each, writing a new row
    /// under the key every time, and together take --tenant-share of the rate.
    #[arg(long, value_delimiter = ',')]
    pub tenants: Option<Vec<String>>,
    /// With --tenants: the share of all writes the tenants take together (above 0, at
    /// most 1); the streams over every shard's keys share the rest.
    #[arg(long, requires = "tenants", default_value_t = 0.8, value_parser = share)]
    pub tenant_share: f64,
}

/// A share of all writes: above 0, at most 1.
fn share(s: &str) -> std::result::Result<f64, String> {
    match s.parse::<f64>() {
        Ok(f) if f > 0.0 && f <= 1.0 => Ok(f),
        Ok(_) => Err(format!("{s} must be above 0 and at most 1")),
        Err(_) => Err(format!("{s:?} is not a number")),
    }
}

pub fn workload(ctx: &Context, args: WorkloadArgs) -> Result<()> {
    use crate::workload;
    let inv = ctx.inventory()?;
    if args.rate == 0 {
        return Err(Error::Usage("--rate must be above 0".into()));
    }
    let tenants = match &args.tenants {
        Some(keys) => {
            let snap = crate::directory::Directory::open(&inv)?.load()?;
            let key_type = snap.function(&args.function)?.key_type;
            Some(workload::Tenants {
                keys: keys
                    .iter()
                    .map(|k| key_type.parse(k))
                    .collect::<Result<_>>()?,
                share: args.tenant_share,
            })
        }
        None => None,
    };
    if args.setup {
        workload::setup(&inv, &args.function)?;
    }
    let running = workload::spawn(
        inv.clone(),
        workload::Options {
            rate: args.rate,
            stale_router: args.stale_router,
            tenants,
            ..workload::Options::new(args.function.clone())
        },
    )?;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(args.seconds);
    while std::time::Instant::now() < deadline && !crate::signal::interrupted() {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let mut report = running.stop()?;
    report.check(&inv, &args.function)?;
    match ctx.format {
        Format::Json => output::print_document(
            "workload",
            serde_json::json!({"function": args.function, "report": report}),
        ),
        Format::Table => {
            let mut t = output::table(&[
                "keys",
                "shard at start",
                "shards written",
                "acked",
                "failed attempts",
                "reloads",
                "lost",
                "missing",
                "wrong shard",
                "longest pause",
            ]);
            for s in &report.streams {
                let shards: Vec<String> = s.shards_written.iter().map(|i| i.to_string()).collect();
                t.add_row(vec![
                    Cell::new(if s.tenant {
                        format!("tenant {}", s.keys)
                    } else {
                        s.keys.clone()
                    }),
                    Cell::new(s.shard_at_start),
                    Cell::new(shards.join(", ")),
                    Cell::new(s.acked),
                    Cell::new(s.failed_attempts),
                    Cell::new(s.reloads),
                    Cell::new(s.lost),
                    Cell::new(s.missing),
                    Cell::new(s.wrong_shard_writes),
                    Cell::new(format!("{} ms", s.max_pause_ms)),
                ]);
            }
            crate::outln!("{t}");
            crate::outln!(
                "{} acknowledged writes in {:.1}s by {} streams ({} router); {} missing; wrong_shard_writes: {}",
                report.acked,
                report.seconds,
                report.streams.len(),
                if report.stale_router { "stale" } else { "fresh" },
                report.missing,
                report.wrong_shard_writes
            );
        }
    }
    if report.missing > 0 {
        return Err(Error::Refused(format!(
            "{} acknowledged writes are missing ({} of them acknowledged by a shard that does not own the key)",
            report.missing, report.wrong_shard_writes
        )));
    }
    Ok(())
}
