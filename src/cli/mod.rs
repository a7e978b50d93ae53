//! The command line: clap definitions and one small handler per command. Handlers parse
//! and print; the library does the work.

mod directory;
mod exporter;
mod fleet;
mod keys;
mod merge;
mod meta;
mod mv;
mod perkey;
mod progress;
mod prune;
mod rebalance;
mod reporting;
mod sandbox;
mod split;
mod status;
mod steps;
mod values;
mod views;
mod workload;

use crate::config::{Inventory, DEFAULT_CONFIG};
use crate::directory::journal::WindowRequest;
use crate::error::Result;
use crate::output::{self, ColorChoice, Format};
use clap::{Parser, Subcommand};
use std::path::PathBuf;

/// The heading global options are listed under, after each command's own options.
const GLOBAL: &str = "Global options";

/// Shard management for MySQL and MariaDB fleets sharded through a sharding directory.
#[derive(Debug, Parser)]
#[command(
    name = "shardctl",
    version,
    after_help = "Example:\n  shardctl sandbox up --nodes 3 && shardctl --config sandbox/shardctl.yaml status\n\nExit codes: 0 ok, 1 internal, 2 usage, 3 config, 4 server, 5 refused (unsafe), 6 timeout, 7 unavailable (a shard the operator closed), 130 interrupted."
)]
pub struct Cli {
    /// Inventory file.
    #[arg(long, global = true, env = "SHARDCTL_CONFIG", default_value = DEFAULT_CONFIG, help_heading = GLOBAL)]
    pub config: PathBuf,
    /// Output format for results: table, or json (docs/JSON.md).
    #[arg(long, global = true, value_enum, default_value_t = Format::Table, hide_possible_values = true, help_heading = GLOBAL)]
    pub output: Format,
    /// When to colour output: auto (on a terminal, unless NO_COLOR is set), always, never.
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto, hide_possible_values = true, help_heading = GLOBAL)]
    pub color: ColorChoice,
    /// More logs on stderr (-v statements, -vv everything).
    #[arg(short, long, global = true, action = clap::ArgAction::Count, help_heading = GLOBAL)]
    pub verbose: u8,
    /// Run destructive commands (move, split, prune, rebalance apply, drop-source, abort)
    /// without asking; required when stdin is not a terminal.
    #[arg(short = 'y', long, global = true, env = "SHARDCTL_YES", value_parser = clap::builder::FalseyValueParser::new(), help_heading = GLOBAL)]
    pub yes: bool,
    /// Append a full log of the run to this file (every statement sent, every message,
    /// timestamped; whatever -v and the terminal), created readable by its owner only.
    #[arg(long, global = true, value_name = "PATH", help_heading = GLOBAL)]
    pub log_file: Option<PathBuf>,
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
    /// Create or migrate the sharding directory on the directory node (idempotent).
    #[command(after_help = "Example:\n  shardctl --config sandbox/shardctl.yaml init")]
    Init,
    /// Nodes registered in the directory.
    #[command(subcommand)]
    Node(directory::NodeCommand),
    /// Partition functions (range, hash, list, per-key).
    #[command(subcommand)]
    Function(directory::FunctionCommand),
    /// Sharded and global tables.
    #[command(subcommand)]
    Table(directory::TableCommand),
    /// Shards: add one (creating its schemas), list them.
    #[command(subcommand)]
    Shard(directory::ShardCommand),
    /// Which shard, node and schemas hold a key.
    #[command(
        after_help = "Example:\n  shardctl lookup --function emp 10042\n  shardctl lookup --table employees.salaries 10042 --output json"
    )]
    Lookup(directory::LookupArgs),
    /// The keys of per-key functions: assign a new key to the least-loaded open shard, import
    /// keys in bulk.
    #[command(subcommand)]
    Keys(perkey::KeysCommand),
    /// Candidate sharding indexes of a schema, from its foreign keys.
    #[command(after_help = "Example:\n  shardctl analyze --schema employees")]
    Analyze(directory::AnalyzeArgs),
    /// Write generated employees-shaped rows (the chapter's example) through the router.
    #[command(after_help = "Example:\n  shardctl sample --count 5000 --start 1 --step 7")]
    Sample(directory::SampleArgs),
    /// Move a shard to another node (playbooks/move.yaml): copy, replicate, fence, verify,
    /// flip, drop the old copy.
    #[command(
        name = "move",
        after_help = "Example:\n  shardctl move --shard 3 --to node3\n  shardctl move --shard 3 --to node3 --fence read-only --method dump\n  shardctl move --shard 3 --to node3 --dry-run"
    )]
    Move(mv::MoveArgs),
    /// Split a shard (playbooks/split.yaml): a new shard on NODE takes part of the key space;
    /// both sides then prune what they no longer own.
    #[command(
        after_help = "Example:\n  shardctl split --shard 2 --to node3 --at median\n  shardctl split --shard 2 --to node3 --at 15000\n  shardctl split --shard 7 --to node1\n  shardctl split --shard 9 --to node2 --values dk,no"
    )]
    Split(split::SplitArgs),
    /// Move some of a shard's keys, with their rows, to another existing shard
    /// (playbooks/move-keys.yaml): copied, kept current by a change stream from the donor's
    /// binary log, only those keys fenced for the cut-over, flipped, pruned from the donor.
    #[command(
        name = "move-keys",
        after_help = "Example:\n  shardctl move-keys --function customers --range 40000..50000 --to-shard 2\n  shardctl move-keys --function tenants --keys acme --to-shard 5\n  shardctl move-keys --function customers --range 0..5000 --to-shard 1 --dry-run"
    )]
    MoveKeys(keys::MoveKeysArgs),
    /// Merge adjacent shards (playbooks/merge.yaml) into the one on NODE: each other shard
    /// is copied into it (kept current by a channel from another node), fenced, verified,
    /// flipped and dropped.
    #[command(
        after_help = "Example:\n  shardctl merge --shards 2,3 --to node1\n  shardctl merge --shards 4,5,6 --to node2 --dry-run"
    )]
    Merge(merge::MergeArgs),
    /// Plan the moves that even out the fleet, then apply them.
    #[command(subcommand)]
    Rebalance(rebalance::RebalanceCommand),
    /// Continue an operation after a crash or a failure, from what the servers show.
    #[command(
        after_help = "Example:\n  shardctl resume 12\n\nRefused while the operation's owner is alive (the message names it). An owner whose\nprocess is gone, or that has been silent for 20 s, is taken over: the lease's epoch goes\nup and the old owner, should it wake, can change nothing more."
    )]
    Resume(mv::ResumeArgs),
    /// Roll back an operation that has not flipped: fence lifted, channel removed, copy dropped.
    #[command(
        after_help = "Example:\n  shardctl abort 12\n\nRefused while the operation's owner is alive (`shardctl stop 12` first) and after the flip."
    )]
    Abort(mv::AbortArgs),
    /// Give an operation waiting in its await-cutover step (`move --cutover manual`) the
    /// go-ahead: it fences, confirms and flips.
    #[command(
        after_help = "Example:\n  shardctl move --shard 3 --to node3 --cutover manual --yes &\n  shardctl ops --watch 12      # until step await-cutover runs\n  shardctl cutover 12"
    )]
    Cutover(mv::CutoverCmdArgs),
    /// Flip a move waiting in its revert window (`move --revert-window`) back to its old
    /// node: fence on the new node, old copy caught up and compared, directory back.
    #[command(
        after_help = "Example:\n  shardctl move --shard 3 --to node3 --revert-window 2h --yes &\n  shardctl revert 12\n\nRefused unless the operation waits in its revert-window step. A revert that fails before\nits flip lifts its fence and leaves the window open (`shardctl ops 12` shows why)."
    )]
    Revert(mv::WindowCmdArgs),
    /// Close a move's revert window now: the reverse channel removed, the old copy dropped.
    #[command(
        after_help = "Example:\n  shardctl finalize 12\n\nThe old copy goes only once the new node answers and holds the shard; until then the\nwindow stays open and `shardctl ops 12` says why."
    )]
    Finalize(mv::WindowCmdArgs),
    /// Keep a move's revert window open longer: its end moves by DURATION, or to TIME.
    #[command(
        after_help = "Example:\n  shardctl extend 12 --by 2h\n  shardctl extend 12 --until 2026-11-25T18:00:00Z\n\nRefused unless the operation waits in its revert-window step. --by counts from now when the\nwindow's end has passed (a window held open because its new node did not hold the shard);\n--until must be later than the window's end and than now. `shardctl status` shows each\nopen window's end and why a held one is held."
    )]
    Extend(mv::ExtendCmdArgs),
    /// Ask the process driving an operation to stop at its next safe point, as Ctrl-C would.
    #[command(
        after_help = "Example:\n  shardctl stop 12 && shardctl abort 12\n\nBefore the flip the owner lifts the fence and leaves the operation resumable."
    )]
    Stop(mv::StopArgs),
    /// Pause a running copy, catch-up or prune at its next safe point outside any fence; it
    /// holds no fence and no lock while paused.
    #[command(
        after_help = "Example:\n  shardctl pause 12\n  shardctl ops 12        # paused: yes, once every worker has parked\n  shardctl continue 12\n\nSafe points: each batch of the native copy, each round of the catch-up wait, each chunk\nof a prune, and the boundary between two unfenced steps. A pause asked for under a fence\ntakes effect once the fence is lifted."
    )]
    Pause(mv::PauseArgs),
    /// Let a paused operation go on.
    #[command(after_help = "Example:\n  shardctl continue 12")]
    Continue(mv::PauseArgs),
    /// Change the limits of a running operation; its process picks them up within a second.
    #[command(
        after_help = "Example:\n  shardctl throttle 14 --max-lag 2 --chunk-ms 200   # a prune\n  shardctl throttle 12 --workers 2                  # a move's native copy\n\nA prune takes --max-lag, --chunk-ms and --max-threads-running; a move, split or merge\n--workers, applied as each copy lane finishes its table. The limits stay with the\noperation: a resumed run keeps them."
    )]
    Throttle(mv::ThrottleArgs),
    /// Operations in the journal, or one with its steps.
    #[command(after_help = "Example:\n  shardctl ops\n  shardctl ops 12 --output json")]
    Ops(mv::OpsArgs),
    /// Write through the router at a steady rate, one thread and connection per shard's key
    /// stream, retrying as the chapter's application does; report acknowledged writes, each
    /// stream's longest pause, any write lost and any written to a shard not owning its key.
    #[command(
        after_help = "Example:\n  shardctl workload --function emp --setup --rate 500 --seconds 30\n  shardctl workload --function emp --stale-router --seconds 30 --output json"
    )]
    Workload(workload::WorkloadArgs),
    /// Delete the rows a shard no longer owns, in throttled, checkpointed primary-key chunks.
    #[command(
        after_help = "Example:\n  shardctl prune --shard 5 --dry-run\n  shardctl prune --shard 5 --chunk-ms 500 --max-lag 1"
    )]
    Prune(prune::PruneArgs),
    /// The move's steps, one at a time.
    #[command(flatten)]
    Step(steps::StepCommand),
    /// The fleet at a glance: nodes, versions, binary logs, replication channels, shards.
    #[command(
        after_help = "Example:\n  shardctl --config sandbox/shardctl.yaml status\n  shardctl status --node node2 --output json"
    )]
    Status(status::StatusArgs),
    /// The inventory: `config check` parses it and connects to every node.
    #[command(subcommand)]
    Config(meta::ConfigCommand),
    /// What going from N to M nodes (or a split or move of the directory) would cost under
    /// each placement scheme: keys and bytes that change node, balance before and after.
    #[command(
        after_help = "Example:\n  shardctl simulate --range 1..1000001 --nodes 4 --to-nodes 5\n  shardctl simulate --keys-file keys.txt --nodes 3 --to-nodes 4 --scheme modulo-crc32,consistent-md5\n  shardctl simulate --column employees.employees.emp_no --function emp --split 2 --to node3 --output json"
    )]
    Simulate(fleet::SimulateArgs),
    /// Ids unique across shards: `ids check` finds ids on more than one shard and the scheme
    /// the fleet follows; `ids sequence` keeps sequences in the directory handing out blocks.
    #[command(subcommand)]
    Ids(fleet::IdsCommand),
    /// Global tables kept identical on every shard: check, record the source, sync.
    #[command(subcommand)]
    Global(fleet::GlobalCommand),
    /// Run one SELECT on every shard of a function in parallel (read-only, per-shard
    /// timeout), `{table}` replaced by each shard's table; rows merged, COUNT/SUM/MIN/MAX
    /// merged by GROUP BY key.
    #[command(
        after_help = "Example:\n  shardctl query --function emp 'SELECT gender, COUNT(*), MAX(hire_date) FROM {employees} GROUP BY gender'\n  shardctl query --function emp --timeout 5 'SELECT * FROM {salaries} WHERE salary > 150000' --output json"
    )]
    Query(fleet::QueryArgs),
    /// Serve the fleet's metrics to Prometheus on HTTP (`/metrics`): nodes, channels,
    /// shards, running operations, the directory, finished operations and fence durations
    /// (docs/METRICS.md). Read-only; every scrape within its budget, whatever is down.
    #[command(after_help = "Example:
  shardctl exporter --listen 127.0.0.1:9855
  shardctl exporter --once --budget 2

Ctrl-C or SIGTERM stops it (exit 0). An address in use is refused (exit 5).")]
    Exporter(exporter::ExporterArgs),
    /// A reporting server replicating every shard's schemas, kept current across moves,
    /// splits and merges: attach, status, sync, detach.
    #[command(subcommand)]
    Reporting(reporting::ReportingCommand),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    #[command(
        after_help = "Example:\n  shardctl completions bash > /etc/bash_completion.d/shardctl\n  shardctl completions zsh > ~/.zfunc/_shardctl"
    )]
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff): shardctl's, or one command's.
    #[command(
        after_help = "Example:\n  shardctl man > shardctl.1 && man ./shardctl.1\n  shardctl man move > shardctl-move.1"
    )]
    Man {
        /// A command whose page to print (e.g. `move`).
        command: Option<String>,
    },
}

/// Shared context handed to handlers.
pub struct Context {
    /// Where the inventory is.
    pub config: PathBuf,
    /// Output format.
    pub format: Format,
    /// `--yes`: destructive commands run without asking.
    pub yes: bool,
}

impl Context {
    /// Loads the inventory.
    pub fn inventory(&self) -> Result<Inventory> {
        Inventory::load(&self.config)
    }

    /// Shows a command's result: under `--output json` one document (`body` with the
    /// contract's version and the command's name, docs/JSON.md), else what `text` prints.
    pub fn show(&self, command: &str, body: serde_json::Value, text: impl FnOnce()) {
        match self.format {
            Format::Json => output::print_document(command, body),
            Format::Table => text(),
        }
    }
}

/// `--max-moves`, `--parallel`, ...: a count of at least 1.
fn at_least_one(s: &str) -> std::result::Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("{s:?} is not a whole number")),
    }
}

/// Copy and verification workers: 1 to 64.
fn workers(s: &str) -> std::result::Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if (1..=64).contains(&n) => Ok(n),
        _ => Err(format!("{s:?}: workers must be 1 to 64")),
    }
}

/// A live limit of `throttle`: a whole number from `min` to `max` (negative numbers reach
/// this parser, so they are named as such).
fn limit(s: &str, min: u64, max: u64, what: &str) -> std::result::Result<u64, String> {
    match s.parse::<i64>() {
        Ok(n) if n >= 0 && (min..=max).contains(&(n as u64)) => Ok(n as u64),
        Ok(_) => Err(format!("{what} must be {min} to {max}")),
        Err(_) => Err(format!("{s:?} is not a whole number")),
    }
}

/// `throttle --max-lag`: 0 to 86400 seconds.
fn limit_max_lag(s: &str) -> std::result::Result<u64, String> {
    limit(s, 0, 86_400, "the replica lag, seconds,")
}

/// `throttle --chunk-ms`: 1 to 600000 ms.
fn limit_chunk_ms(s: &str) -> std::result::Result<u64, String> {
    limit(s, 1, 600_000, "the chunk's target time, milliseconds,")
}

/// `throttle --workers`: 1 to 64, as a playbook's.
fn limit_workers(s: &str) -> std::result::Result<u64, String> {
    limit(s, 1, 64, "workers")
}

/// `throttle --max-threads-running`: 1 to 100000.
fn limit_threads(s: &str) -> std::result::Result<u64, String> {
    limit(s, 1, 100_000, "the running threads")
}

/// `sandbox up --nodes`: 1 to 9 servers.
fn sandbox_nodes(s: &str) -> std::result::Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if (1..=crate::sandbox::MAX_NODES).contains(&n) => Ok(n),
        _ => Err(format!(
            "{s:?}: a sandbox has 1 to {} nodes",
            crate::sandbox::MAX_NODES
        )),
    }
}

/// `--threshold`: a finite fraction, 0 or more.
fn non_negative_f64(s: &str) -> std::result::Result<f64, String> {
    match s.parse::<f64>() {
        Ok(f) if f.is_finite() && f >= 0.0 => Ok(f),
        Ok(_) => Err(format!("{s} must be 0 or more")),
        Err(_) => Err(format!("{s:?} is not a number")),
    }
}

/// Asks before a destructive command changes anything: with `--yes` it goes ahead; on a
/// terminal it shows `what` and reads the answer (only `y` or `yes` goes ahead); without a
/// terminal it refuses (exit 2), so a script that forgot `--yes` never half-expects a
/// question. `--dry-run` and `--check` never get here.
pub fn confirm(ctx: &Context, what: &str) -> Result<()> {
    use std::io::{BufRead, IsTerminal};
    if ctx.yes {
        return Ok(());
    }
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        return Err(crate::error::Error::Usage(format!(
            "this would {what}; nothing was done: pass --yes (or set SHARDCTL_YES=1) to run it without a terminal, or --dry-run to see each statement"
        )));
    }
    output::write_err(&format!("shardctl: this will {what}.\nContinue? [y/N] "));
    let mut answer = String::new();
    stdin
        .lock()
        .read_line(&mut answer)
        .map_err(|e| crate::error::Error::io("cannot read the answer", e))?;
    match answer.trim().to_ascii_lowercase().as_str() {
        "y" | "yes" => Ok(()),
        _ => Err(crate::error::Error::Usage(
            "not confirmed: nothing was done".into(),
        )),
    }
}

/// `--watch`: runs `show` every `interval` until Ctrl-C, or until it answers that what it
/// watches has finished. On a terminal (table output) each update redraws the screen in
/// place; under `--output json` each update is one line (JSON Lines); otherwise updates
/// follow one another, a blank line apart.
pub fn watch(
    ctx: &Context,
    interval: std::time::Duration,
    mut show: impl FnMut() -> Result<bool>,
) -> Result<()> {
    use std::io::IsTerminal;
    let redraw = ctx.format == Format::Table && std::io::stdout().is_terminal();
    output::set_compact(ctx.format == Format::Json);
    let mut first = true;
    loop {
        if redraw {
            output::write_out("\x1b[H\x1b[2J");
        } else if !first && ctx.format == Format::Table {
            output::write_out("\n");
        }
        first = false;
        let finished = show()?;
        if redraw {
            output::write_out(&format!(
                "\n{}  every {}s; Ctrl-C to stop\n",
                crate::clock::now(),
                interval.as_secs_f64()
            ));
        }
        if finished {
            return Ok(());
        }
        let until = std::time::Instant::now() + interval;
        while std::time::Instant::now() < until {
            if crate::signal::interrupted() {
                return Ok(());
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }
}

/// `--interval`: seconds between `--watch` updates, 0.2 to 3600.
fn watch_interval(s: &str) -> std::result::Result<f64, String> {
    match s.parse::<f64>() {
        Ok(f) if (0.2..=3600.0).contains(&f) => Ok(f),
        _ => Err(format!("{s:?}: the interval is 0.2 to 3600 seconds")),
    }
}

/// The line a failed command leaves on stderr: `shardctl: MESSAGE`, or under `--output
/// json` one JSON object, `{"error": {"kind": "refused", "exit_code": 5, "message": ...}}`,
/// so a script reading JSON never has to parse text.
pub fn error_line(format: Format, e: &crate::error::Error) -> String {
    match format {
        Format::Table => format!("{} {e}", output::paint("shardctl:", false)),
        Format::Json => {
            let code = e.exit_code();
            serde_json::json!({"error": {
                "kind": code.name(),
                "exit_code": code as i32,
                "message": e.to_string(),
            }})
            .to_string()
        }
    }
}

/// Runs a parsed command line.
pub fn run(cli: Cli) -> Result<()> {
    output::init(cli.verbose, cli.color);
    if let Some(path) = &cli.log_file {
        output::open_log_file(path)?;
        // The command line holds no secret: passwords never go on it.
        let args: Vec<String> = std::env::args().collect();
        output::record(&format!(
            "run {} (pid {})",
            args.join(" "),
            std::process::id()
        ));
    }
    let result = dispatch(cli);
    match &result {
        Ok(()) => output::record("done: exit 0"),
        Err(e) => output::record(&format!("failed: exit {}: {e}", e.exit_code() as i32)),
    }
    result
}

fn dispatch(cli: Cli) -> Result<()> {
    let effects: Vec<&str> = crate::ops::mover::Effect::ALL
        .iter()
        .map(|e| e.name())
        .collect();
    crate::fault::check_env(&crate::fault::KnownPoints {
        effects: &effects,
        steps: crate::playbook::STEP_NAMES,
        reporting: &crate::reporting::FAULT_POINTS,
        commits: crate::directory::store::COMMIT_POINTS,
    })?;
    let ctx = Context {
        config: cli.config,
        format: cli.output,
        yes: cli.yes,
    };
    match cli.command {
        Command::Sandbox(cmd) => sandbox::run(&ctx, cmd),
        Command::Status(args) => status::run(&ctx, args),
        Command::Init => directory::init(&ctx),
        Command::Move(args) => mv::run_move(&ctx, args),
        Command::Split(args) => split::split(&ctx, args),
        Command::MoveKeys(args) => keys::move_keys(&ctx, args),
        Command::Merge(args) => merge::merge(&ctx, args),
        Command::Rebalance(cmd) => rebalance::rebalance(&ctx, cmd),
        Command::Resume(args) => mv::resume(&ctx, args),
        Command::Abort(args) => mv::abort(&ctx, args),
        Command::Stop(args) => mv::stop(&ctx, args),
        Command::Cutover(args) => mv::cutover(&ctx, args),
        Command::Revert(args) => mv::window(&ctx, args, WindowRequest::Revert),
        Command::Finalize(args) => mv::window(&ctx, args, WindowRequest::Finalize),
        Command::Extend(args) => mv::extend(&ctx, args),
        Command::Pause(args) => mv::pause(&ctx, args, true),
        Command::Continue(args) => mv::pause(&ctx, args, false),
        Command::Throttle(args) => mv::throttle(&ctx, args),
        Command::Ops(args) => mv::ops(&ctx, args),
        Command::Workload(args) => workload::workload(&ctx, args),
        Command::Prune(args) => prune::prune(&ctx, args),
        Command::Step(cmd) => steps::run(&ctx, cmd),
        Command::Sample(args) => directory::sample(&ctx, args),
        Command::Node(cmd) => directory::node(&ctx, cmd),
        Command::Function(cmd) => directory::function(&ctx, cmd),
        Command::Table(cmd) => directory::table(&ctx, cmd),
        Command::Shard(cmd) => directory::shard(&ctx, cmd),
        Command::Lookup(args) => directory::lookup(&ctx, args),
        Command::Keys(cmd) => perkey::run(&ctx, cmd),
        Command::Analyze(args) => directory::analyze(&ctx, args),
        Command::Config(cmd) => meta::config(&ctx, cmd),
        Command::Simulate(args) => fleet::simulate_cmd(&ctx, args),
        Command::Ids(cmd) => fleet::ids(&ctx, cmd),
        Command::Global(cmd) => fleet::global(&ctx, cmd),
        Command::Query(args) => fleet::query(&ctx, args),
        Command::Reporting(cmd) => reporting::run(&ctx, cmd),
        Command::Exporter(args) => exporter::run(&ctx, args),
        Command::Completions { shell } => meta::completions(shell),
        Command::Man { command } => meta::man(command.as_deref()),
    }
}
