//! Handler of `exporter`: serves the fleet's metrics (`src/exporter`) until Ctrl-C, or
//! prints one scrape with `--once`.

use super::Context;
use crate::error::{Error, Result};
use crate::exporter::{self, Exporter};
use crate::output::{self, Format};
use std::time::Duration;

/// Arguments of `exporter`.
#[derive(Debug, clap::Args)]
pub struct ExporterArgs {
    /// Serve on this address, HOST:PORT (port 0: a free one, printed at start).
    #[arg(long, value_name = "HOST:PORT", required_unless_present = "once")]
    pub listen: Option<String>,
    /// The longest one scrape takes, seconds (0.5 to 120): whatever has not answered by
    /// then (a node, the directory) is reported down.
    #[arg(long, value_name = "SECS", default_value_t = 5.0, value_parser = budget_secs)]
    pub budget: f64,
    /// Print one scrape on stdout and exit instead of serving.
    #[arg(long, conflicts_with = "listen")]
    pub once: bool,
}

/// `--budget`: 0.5 to 120 seconds.
fn budget_secs(s: &str) -> std::result::Result<f64, String> {
    let (low, high) = exporter::BUDGET_RANGE;
    match s.parse::<f64>() {
        Ok(f) if f >= low.as_secs_f64() && f <= high.as_secs_f64() => Ok(f),
        _ => Err(format!(
            "{s:?}: the budget is {} to {} seconds",
            low.as_secs_f64(),
            high.as_secs_f64()
        )),
    }
}

/// `shardctl exporter`.
pub fn run(ctx: &Context, args: ExporterArgs) -> Result<()> {
    if args.once && ctx.format == Format::Json {
        return Err(Error::Usage(
            "exporter --once prints the Prometheus text format; --output json does not apply to it"
                .into(),
        ));
    }
    let budget = Duration::from_secs_f64(args.budget);
    // The address first: a bad or taken one is refused before the inventory is read.
    let listener = match (&args.listen, args.once) {
        (Some(addr), false) => Some(exporter::bind(addr)?),
        _ => None,
    };
    let exporter = Exporter::new(ctx.inventory()?, budget);
    let Some(listener) = listener else {
        output::write_out(&exporter.scrape());
        return Ok(());
    };
    let addr = listener
        .local_addr()
        .map_err(|e| Error::io("cannot read the listening address", e))?;
    ctx.show(
        "exporter",
        serde_json::json!({
            "listen": addr.to_string(),
            "path": exporter::http::METRICS_PATH,
            "budget_ms": budget.as_millis() as u64,
        }),
        || {
            crate::outln!(
                "serving the fleet's metrics on http://{addr}{} (scrape budget {} s); Ctrl-C stops",
                exporter::http::METRICS_PATH,
                args.budget
            )
        },
    );
    exporter::serve(exporter, listener, crate::signal::interrupted)
}
