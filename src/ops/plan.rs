//! The dry run and the check of a move. The dry run connects nowhere: it validates the
//! inventory and playbook and prints every step with the statements it will send (runtime
//! values such as coordinates shown as placeholders, secrets masked). `--check` is the
//! live dry run (`Mover::dry_run_move`), not this.

use crate::config::Inventory;
use crate::error::Result;
use crate::ident::{Channel, Ident};
use crate::playbook::{Fence, Playbook, Step};
use crate::server::{BinlogPosition, Dialect, Filters, Flavor, SourceSpec, StartAt, Vendor};
use serde::Serialize;

/// One planned step.
#[derive(Debug, Clone, Serialize)]
pub struct PlannedStep {
    /// Step number from 1.
    #[serde(rename = "step")]
    pub no: usize,
    /// Step name.
    #[serde(rename = "name")]
    pub step: String,
    /// Node it acts on.
    pub node: String,
    /// What it does, and the statements it sends.
    pub actions: Vec<String>,
}

/// A whole plan.
#[derive(Debug, Clone, Serialize)]
pub struct MovePlan {
    /// Shard.
    pub shard: u32,
    /// Target.
    #[serde(rename = "to")]
    pub target: String,
    /// The SQL dialect assumed for the statements.
    pub assumed_flavor: String,
    /// Steps.
    pub steps: Vec<PlannedStep>,
}

impl MovePlan {
    /// Text for people.
    pub fn render(&self) -> String {
        let mut out = format!(
            "move shard {} to {} (dry run: nothing is contacted; statements in the {} dialect)\n",
            self.shard, self.target, self.assumed_flavor
        );
        for s in &self.steps {
            out.push_str(&format!("{:>2}. {} [{}]\n", s.no, s.step, s.node));
            for a in &s.actions {
                out.push_str(&format!("      {a}\n"));
            }
        }
        out
    }
}

const FILE_MARK: &str = "BACKUP_FILE_MARK";
const POS_MARK: u64 = 987_654_321_987;

fn placeholders(text: String) -> String {
    text.replace(FILE_MARK, "<backup binlog file>")
        .replace(&POS_MARK.to_string(), "<backup binlog pos>")
}

/// Builds the dry-run plan of a move. Connects nowhere.
pub fn move_plan(inv: &Inventory, shard: u32, to: &str, pb: &Playbook) -> Result<MovePlan> {
    inv.node(to)?;
    let flavor = Flavor::new(Vendor::MariaDb, 10, 11, 0);
    let d = Dialect::new(flavor);
    let channel = Channel::new("shardctl_opN")?;
    let source = format!("<node of shard {shard}>");
    let schemas = format!("<schemas of shard {shard}>");
    let example_schema = Ident::new("schema", "SCHEMA_of_shard")?;
    let repl = inv
        .file
        .replication
        .as_ref()
        .and_then(|r| r.user.clone())
        .unwrap_or_else(|| "<replication user>".into());
    let drops_trash = pb.drops_old_copy();
    let fence = pb
        .steps
        .iter()
        .find_map(|s| match s {
            Step::Lock(l) => Some(l.fence),
            _ => None,
        })
        .unwrap_or(Fence::Shard);
    let streamed = pb.via() == crate::playbook::Via::Stream;
    let mut steps = Vec::new();
    for (i, step) in pb.steps.iter().enumerate() {
        let (node, actions): (String, Vec<String>) = match step {
            Step::ChangeMaster(_) | Step::Filter(_) if streamed => (to.to_string(), vec![
                "nothing: the change stream reads the source's binary log itself (no channel)".into(),
            ]),
            Step::StartReplication(_) if streamed => (to.to_string(), vec![
                format!("change stream: read the source's binary log as a replica from <backup binlog file>:<backup binlog pos>, keep every row of {schemas}, apply them on {to} one transaction per source transaction with its checkpoint in `_shardctl`.stream_checkpoints in the same transaction"),
            ]),
            Step::Wait(w) if streamed => (to.to_string(), match w.until {
                None => vec![format!("until the change stream is within {}s of the source (timeout {}s)", w.lag_below_secs.unwrap_or(1), w.timeout_secs)],
                Some(_) => vec![
                    format!("the change stream brought to the final position and stopped there (timeout {}s)", w.timeout_secs),
                    format!("then the triggers of {schemas}, left out of the copy, created on {to}"),
                ],
            }),
            Step::ResetReplication(_) if streamed => (to.to_string(), vec![
                "the change stream's checkpoint row deleted (sql_log_bin = 0)".into(),
            ]),
            Step::Preflight(_) => (format!("{source}, {to}"), vec![
                "source: log_bin ON and binlog_format ROW".into(),
                "source and target: different server_id".into(),
                format!("target: none of {schemas} exists"),
                format!("replication account {repl} connects to the source"),
            ]),
            Step::Backup(b) => (format!("{source} -> {to}"), match b.method {
                crate::copy::Method::Native => vec![
                    format!("read definitions of {schemas} (tables, views, routines, triggers, events)"),
                    format!("on {to}: CREATE DATABASE and CREATE TABLE for each"),
                    format!("on the source: LOCK TABLES <every table of the shard> READ; {} x START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY; {}; UNLOCK TABLES", b.workers, d.binlog_coordinates()),
                    format!("up to {} lanes, one table each, largest first: a reader streams the table in primary-key order into a LOAD DATA writer on {to}, the table's plain secondary indexes left out and added back after its rows in one sorted build", b.workers),
                    "then views, routines, triggers and events".into(),
                ],
                crate::copy::Method::Dump => vec![format!(
                    "{} | mariadb (credentials in 0600 option files)",
                    "mariadb-dump --single-transaction --master-data=2 --routines --triggers --events --hex-blob --skip-lock-tables --databases <schemas>"
                )],
                crate::copy::Method::Physical => vec![
                    format!("on the source's host: mariadb-backup --backup --parallel=4 --databases of {schemas} (its password on its standard input, never on a command line or in a file) into a staging directory beside {to}'s datadir (of this attempt's own; what killed copies of the shard left there is removed first): as --stream=xbstream carried to mbstream --extract on {to}'s host, or written there directly when both servers share a machine and login"),
                    format!("on {to}'s host: mariadb-backup --prepare --export there; the position from the backup's binlog info"),
                    format!("on {to}: CREATE DATABASE and CREATE TABLE, ALTER TABLE ... DISCARD TABLESPACE, the files moved in (owner and mode of the schema directory), ALTER TABLE ... IMPORT TABLESPACE over 4 connections"),
                    "then views, routines, triggers and events".into(),
                ],
            }),
            Step::ChangeMaster(_) => {
                let spec = SourceSpec {
                    host: "<source host>".replace(['<', '>', ' '], "_"),
                    port: 3306,
                    user: repl.clone(),
                    password: "secret".into(),
                    start: StartAt::Position(BinlogPosition { file: FILE_MARK.into(), pos: POS_MARK }),
                    connect_retry_secs: 1,
                    tls: None,
                };
                (to.to_string(), vec![
                    d.reset_channel(&channel).to_string(),
                    placeholders(d.change_source(&channel, &spec)?.to_string()).replace("_source_host_", "<source host>").replace("3306", "<source port>"),
                ])
            }
            Step::Filter(_) => {
                let f = Filters { wild_do_schemas: vec![example_schema.clone()], ..Filters::default() };
                (to.to_string(), d.set_filters(&channel, &f)?.iter().map(|s| s.to_string()).collect())
            }
            Step::StartReplication(_) => (to.to_string(), vec![d.start_channel(&channel).to_string()]),
            Step::Wait(w) => (to.to_string(), match (w.lag_below_secs, w.until) {
                (Some(lag), _) => vec![
                    format!("repeat: read the source's position; {}; until lag <= {lag}s (timeout {}s)", d.wait_for_position(&channel, &BinlogPosition { file: "F".into(), pos: 0 }, 2)?.sql, w.timeout_secs),
                ],
                _ => vec![
                    format!("{} in slices, up to {}s, for the final position", d.wait_for_position(&channel, &BinlogPosition { file: "F".into(), pos: 0 }, 2)?.sql, w.timeout_secs),
                    d.stop_channel(&channel).to_string(),
                ],
            }),
            Step::Lock(l) => (source.clone(), match l.fence {
                Fence::Shard => vec![
                    "directory: shard state read_only".into(),
                    format!("SET SESSION lock_wait_timeout = {}", l.timeout_secs),
                    "SET SESSION sql_log_bin = 0; RENAME TABLE <each table> TO <same schema>.`_shardctl_opN_<n>`, ... (one atomic statement)".into(),
                    d.binlog_coordinates().to_string(),
                ],
                Fence::ReadOnly => {
                    let mut v = vec!["directory: shard state read_only".to_string()];
                    v.extend(d.set_read_only(true, l.timeout_secs).iter().map(|s| s.to_string()));
                    v.push(d.binlog_coordinates().to_string());
                    v
                }
                Fence::Switch => {
                    let mut v = vec![
                        "before the fence, table by table: SET SESSION sql_log_bin = 0; CREATE OR REPLACE TRIGGER <schema>.`shardctl_switch_<i|u|d>_<table>` ... (reads its switch row in `_shardctl`.`switches` with LOCK IN SHARE MODE; inert while the switch is off)".to_string(),
                        "directory: shard state read_only".to_string(),
                        crate::server::statements::row_lock_wait_timeout(l.lock_wait_secs).to_string(),
                    ];
                    v.push(crate::server::statements::set_switch(0, crate::server::statements::SwitchMode::All).to_string().replace("bind: 2, 0", "bind: 2, <switch>"));
                    v.push(d.binlog_coordinates().to_string());
                    v
                }
            }),
            Step::Verify(v) => (format!("{source}, {to}"), vec![
                format!("{to}: {}", d.stop_applier(&channel)),
                format!("{source}: LOCK TABLES <the shard's tables> READ; {} worker snapshots (START TRANSACTION WITH CONSISTENT SNAPSHOT); {}; UNLOCK TABLES", v.workers, d.binlog_coordinates()),
                format!("{to}: START ... SQL_THREAD UNTIL <that position>; {} worker snapshots once it is there; the applier released", v.workers),
                format!("both: every table compared in primary-key chunks of {} rows (COUNT and BIT_XOR of a 64-bit SHA1 slice of each row, every column exact: bytes with their length, FLOAT/DOUBLE by their stored value); any difference stops the move before the fence", v.chunk_rows),
            ]),
            Step::AwaitCutover(a) => (format!("{source}, {to}"), vec![
                format!("{to}: the channel held within {}s of {source}, no fence up", a.lag_below_secs),
                match (a.mode, a.window) {
                    (crate::playbook::CutoverMode::Manual, _) => "waits for `shardctl cutover <op>`".to_string(),
                    (crate::playbook::CutoverMode::Window, Some(w)) => format!("waits for the window {} UTC (or `shardctl cutover <op>`)", String::from(w)),
                    _ => "goes on at once".to_string(),
                },
                "runs the before-cutover hooks; a failure postpones the cut-over".into(),
            ]),
            Step::Confirm(_) => (format!("{source}, {to}"), vec![
                "under the fence: the same tables with the same definitions on both sides; tables created since the verified point compared in full; the verified point recent enough".into(),
            ]),
            Step::Guard(_) => (source.clone(), vec![
                "SET SESSION sql_log_bin = 0; on every sharded table of the old shard: BEFORE INSERT/UPDATE/DELETE triggers that refuse keys it no longer owns (SQLSTATE 45000)".into(),
            ]),
            Step::Flip(_) => ("directory".into(), vec![
                "in one transaction: refuse unless this operation's verify step is done; UPDATE locations SET node, host, port, state = 'online', version = <new version> WHERE shard_id = ? AND node = <source>".into(),
            ]),
            Step::DropSource(k) => (source.clone(), vec![
                format!("SET SESSION lock_wait_timeout = {}; SET SESSION sql_log_bin = 0; on each schema of the shard: DROP TRIGGER each trigger; RENAME TABLE <its tables> TO _shardctl_trash_op<op>_<n>.<same names>; DROP DATABASE <the emptied schema>", crate::server::statements::FENCE_LOCK_WAIT_SECS),
                if k.keep {
                    "keep: true: the old copy's tables are kept in _shardctl_trash_op<op>_<n> (no client reaches them by the shard's names); drop that schema by hand".into()
                } else {
                    "unlock drops _shardctl_trash_op<op>_<n> once the fence is lifted".into()
                },
            ]),
            Step::Unlock(_) => (source.clone(), {
                let mut v = match fence {
                    Fence::Shard => vec!["shard fence: nothing to rename back after the flip (the hidden tables went with the old copy)".to_string()],
                    Fence::ReadOnly => d.set_read_only(false, crate::server::statements::FENCE_LOCK_WAIT_SECS).iter().map(|s| format!("read-only fence: {s}")).collect(),
                    Fence::Switch => vec!["switch fence: the switched guards went with the old copy; their switch row is removed".to_string()],
                };
                if drops_trash {
                    v.push("then, the fence lifted: SET SESSION sql_log_bin = 0; DROP DATABASE _shardctl_trash_op<op>_<n> (the old copy's tables)".into());
                }
                v
            }),
            Step::Prune(_) => (format!("{source}, {to}"), vec![
                "on both shards: DELETE by primary-key chunks the rows the shard no longer owns (see `shardctl prune --dry-run`)".into(),
            ]),
            Step::ResetReplication(_) => (to.to_string(), {
                let mut v: Vec<String> = d.set_filters(&channel, &Filters::default())?.iter().map(|s| s.to_string()).collect();
                v.push(d.stop_channel(&channel).to_string());
                v.push(d.reset_channel(&channel).to_string());
                v
            }),
            Step::RevertWindow(w) => (format!("{source}, {to}"), vec![
                format!("on {source}: a reverse channel from {to} at {to}'s position read under the fence before the flip, rewriting {schemas} into the old copy's trash schemas, started"),
                format!("wait up to {} s for `shardctl revert` (fence on {to}, reverse channel caught up, directory back to {source}, old copy renamed back) or `shardctl finalize`", w.window_secs),
                format!("then on {source}: the reverse channel removed and the old copy's trash schemas dropped"),
            ]),
        };
        steps.push(PlannedStep {
            no: i + 1,
            step: step.name().to_string(),
            node,
            actions,
        });
    }
    Ok(MovePlan {
        shard,
        target: to.to_string(),
        assumed_flavor: flavor.to_string(),
        steps,
    })
}
