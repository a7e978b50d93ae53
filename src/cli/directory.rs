//! Handlers for the directory commands: init, node, function, table, shard, lookup, analyze.

use super::{views, Context};
use crate::directory::{coverage, Directory, Key, KeyType, Router, ShardingType, TablePlacement};
use crate::error::{Error, Result};
use crate::ident::Ident;
use crate::ops::add_shard::{add_shard, AddShard, Placement};
use crate::output::{self, Format};
use crate::server::Server;
use comfy_table::Cell;

/// `node` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum NodeCommand {
    /// Register an inventory node in the directory (the address applications use).
    #[command(
        after_help = "Example:\n  shardctl node add node2\n  shardctl node add node3 --host db3.internal --port 3306"
    )]
    Add {
        /// Inventory name.
        name: String,
        /// Host applications connect to (default: the inventory's).
        #[arg(long)]
        host: Option<String>,
        /// Port applications connect to (default: the inventory's).
        #[arg(long)]
        port: Option<u16>,
    },
    /// List the directory's nodes.
    #[command(after_help = "Example:\n  shardctl node list --output json")]
    List,
    /// Remove a node that holds no shard.
    #[command(after_help = "Example:\n  shardctl node remove node3")]
    Remove {
        /// Node name.
        name: String,
    },
}

/// `function` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum FunctionCommand {
    /// Add a partition function.
    #[command(
        after_help = "Example:\n  shardctl function add emp --type range --key int\n  shardctl function add users --type hash --key string"
    )]
    Add {
        /// Function name.
        name: String,
        /// Mapping kind.
        #[arg(long = "type", value_enum)]
        sharding_type: ShardingType,
        /// Key type.
        #[arg(long = "key", value_enum)]
        key_type: KeyType,
    },
    /// List partition functions.
    #[command(after_help = "Example:\n  shardctl function list")]
    List,
    /// Remove a partition function that has no shard and maps no table.
    #[command(after_help = "Example:\n  shardctl function remove emp")]
    Remove {
        /// Function name.
        name: String,
    },
}

/// `table` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum TableCommand {
    /// Map a table: sharded by a function on a column, or global (copied into every shard).
    #[command(
        after_help = "Example:\n  shardctl table add employees.salaries --function emp --column emp_no\n  shardctl table add employees.departments --global"
    )]
    Add {
        /// SCHEMA.TABLE.
        table: String,
        /// Partition function (sharded tables).
        #[arg(long, requires = "column", conflicts_with = "global")]
        function: Option<String>,
        /// Sharding column.
        #[arg(long, requires = "function")]
        column: Option<String>,
        /// A global table.
        #[arg(long)]
        global: bool,
        /// Node whose logical schema holds the table while no shard of its schema exists
        /// (default: the directory node). Once shards exist, the table is looked for in one.
        #[arg(long)]
        template_node: Option<String>,
    },
    /// List mapped tables.
    #[command(after_help = "Example:\n  shardctl table list")]
    List,
    /// Unmap a table; refused for a sharded table while any shard's copy holds rows.
    #[command(after_help = "Example:\n  shardctl table remove employees.salaries")]
    Remove {
        /// SCHEMA.TABLE.
        table: String,
    },
}

/// `shard` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum ShardCommand {
    /// Add a shard to a function and create its schemas (`<schema>_<id>`) on a node.
    #[command(
        after_help = "Example:\n  shardctl shard add --function emp --node node2 --lower-bound 100000\n  shardctl shard add --function users --node node3 --point auto\n  shardctl shard add --function region --node node1 --values se,no,dk"
    )]
    Add {
        /// Partition function.
        #[arg(long)]
        function: String,
        /// Node to create the shard on.
        #[arg(long)]
        node: String,
        /// Range functions: the lower bound.
        #[arg(long, allow_hyphen_values = true, conflicts_with_all = ["point", "values"])]
        lower_bound: Option<String>,
        /// Hash functions: `auto` or a 32-hex-digit ring point.
        #[arg(long, conflicts_with = "values")]
        point: Option<String>,
        /// List functions: comma-separated values.
        #[arg(long, value_delimiter = ',')]
        values: Option<Vec<String>>,
        /// Node whose logical schemas serve as template when the function has no shard yet
        /// (default: the directory node). Later shards copy an existing shard.
        #[arg(long)]
        template_node: Option<String>,
    },
    /// List shards with what they cover.
    #[command(after_help = "Example:\n  shardctl shard list --output json")]
    List,
    /// Mark a shard available, closed to writes, or closed to reads and writes (host
    /// down, maintenance): routers refuse what it is closed to. Journaled; refused while
    /// an operation holds the shard.
    #[command(
        after_help = "Example:\n  shardctl shard set-availability --shard 7 no-writes --reason \"disk swap on db7\"\n  shardctl shard set-availability --shard 7 available"
    )]
    SetAvailability {
        /// Shard id.
        #[arg(long)]
        shard: u32,
        /// What routers may send to it.
        #[arg(value_enum)]
        availability: crate::directory::Availability,
        /// Why, kept in the journal (`shardctl ops OP`).
        #[arg(long)]
        reason: Option<String>,
    },
    /// Remove a shard that holds no rows (or never came online) and drop its schemas;
    /// its keys fall to the shards next to it.
    #[command(after_help = "Example:\n  shardctl shard remove --shard 7")]
    Remove {
        /// Shard id.
        #[arg(long)]
        shard: u32,
    },
}

fn split_table(text: &str) -> Result<(Ident, Ident)> {
    let (s, t) = text
        .split_once('.')
        .ok_or_else(|| Error::Usage(format!("table {text:?} must be written SCHEMA.TABLE")))?;
    Ok((Ident::new("schema", s)?, Ident::new("table", t)?))
}

pub fn init(ctx: &Context) -> Result<()> {
    let inv = ctx.inventory()?;
    let mut dir = Directory::connect(&inv)?;
    let (before, after) = dir.init()?;
    let place = dir.place();
    let msg = if before == after {
        format!(
            "directory {} on {place} is up to date (schema version {after})",
            dir.schema(),
        )
    } else if before == 0 {
        format!(
            "directory {} created on {place} (schema version {after})",
            dir.schema(),
        )
    } else {
        format!(
            "directory {} migrated from schema version {before} to {after}",
            dir.schema()
        )
    };
    ctx.show(
        "init",
        serde_json::json!({
            "node": dir.member(),
            "cluster": inv.directory_cluster().map(|c| c.name.clone()),
            "directory_schema": dir.schema().to_string(),
            "schema_version_before": before,
            "schema_version": after,
        }),
        || crate::outln!("{msg}"),
    );
    Ok(())
}

pub fn node(ctx: &Context, cmd: NodeCommand) -> Result<()> {
    let inv = ctx.inventory()?;
    match cmd {
        NodeCommand::Add { name, host, port } => {
            let n = inv.node(&name)?;
            let host = host.unwrap_or_else(|| n.host().to_string());
            let port = port.unwrap_or_else(|| n.port());
            // Check it answers before registering it.
            Server::connect_node(&inv, &name)?;
            Directory::open(&inv)?.add_node(&name, &host, port)?;
            ctx.show(
                "node add",
                serde_json::json!({"node": name, "host": host, "port": port, "address": format!("{host}:{port}")}),
                || crate::outln!("node {name} added ({host}:{port})"),
            );
        }
        NodeCommand::Remove { name } => {
            Directory::open(&inv)?.remove_node(&name)?;
            ctx.show(
                "node remove",
                serde_json::json!({"node": name, "removed": true}),
                || crate::outln!("node {name} removed"),
            );
        }
        NodeCommand::List => {
            let snap = Directory::open(&inv)?.load()?;
            let nodes: Vec<_> = snap
                .nodes
                .iter()
                .map(|n| views::node(n, Some(&snap)))
                .collect();
            match ctx.format {
                Format::Json => {
                    output::print_document("node list", serde_json::json!({"nodes": nodes}))
                }
                Format::Table => {
                    let mut t = output::table(&["node", "address", "shards"]);
                    for n in &snap.nodes {
                        let count = snap.shards.iter().filter(|s| s.node == n.name).count();
                        t.add_row(vec![
                            Cell::new(&n.name),
                            Cell::new(format!("{}:{}", n.host, n.port)),
                            Cell::new(count),
                        ]);
                    }
                    crate::outln!("{t}");
                }
            }
        }
    }
    Ok(())
}

pub fn function(ctx: &Context, cmd: FunctionCommand) -> Result<()> {
    let inv = ctx.inventory()?;
    match cmd {
        FunctionCommand::Add {
            name,
            sharding_type,
            key_type,
        } => {
            let name = Ident::new("function", &name)?;
            let id = Directory::open(&inv)?.add_function(&name, sharding_type, key_type)?;
            let added = crate::directory::Function {
                id,
                name: name.to_string(),
                sharding_type,
                key_type,
            };
            ctx.show("function add", views::function(&added, None), || {
                crate::outln!(
                    "function {name} added (id {id}, {}, {} keys)",
                    sharding_type.as_sql(),
                    key_type.as_sql()
                )
            });
        }
        FunctionCommand::Remove { name } => {
            let message = crate::ops::remove::remove_function(&inv, &name)?;
            ctx.show(
                "function remove",
                serde_json::json!({"function": name, "removed": true, "message": message}),
                || crate::outln!("{message}"),
            );
        }
        FunctionCommand::List => {
            let snap = Directory::open(&inv)?.load()?;
            let functions: Vec<_> = snap
                .functions
                .iter()
                .map(|f| views::function(f, Some(&snap)))
                .collect();
            match ctx.format {
                Format::Json => output::print_document(
                    "function list",
                    serde_json::json!({"functions": functions}),
                ),
                Format::Table => {
                    let mut t =
                        output::table(&["id", "function", "type", "key", "shards", "tables"]);
                    for f in &snap.functions {
                        let tables: Vec<String> = snap
                            .tables
                            .iter()
                            .filter(|t| t.func_id == f.id)
                            .map(|t| format!("{}.{}({})", t.schema, t.table, t.column))
                            .collect();
                        t.add_row(vec![
                            Cell::new(f.id),
                            Cell::new(&f.name),
                            Cell::new(f.sharding_type.as_sql()),
                            Cell::new(f.key_type.as_sql()),
                            Cell::new(snap.shards_of(f.id).count()),
                            Cell::new(tables.join("\n")),
                        ]);
                    }
                    crate::outln!("{t}");
                }
            }
        }
    }
    Ok(())
}

pub fn table(ctx: &Context, cmd: TableCommand) -> Result<()> {
    let inv = ctx.inventory()?;
    match cmd {
        TableCommand::Add {
            table,
            function,
            column,
            global,
            template_node,
        } => {
            let (schema, name) = split_table(&table)?;
            let placement = match (function, column, global) {
                (Some(function), Some(column), false) => TablePlacement::Sharded {
                    function,
                    column: Ident::new("column", &column)?,
                },
                (None, None, true) => TablePlacement::Global,
                _ => {
                    return Err(Error::Usage(
                        "give --function F --column C for a sharded table, or --global".into(),
                    ))
                }
            };
            crate::ops::add_table::add_table(
                &inv,
                &schema,
                &name,
                &placement,
                template_node.as_deref(),
            )?;
            let view = match &placement {
                TablePlacement::Global => views::global_table(schema.as_str(), name.as_str()),
                TablePlacement::Sharded { function, column } => {
                    views::sharded_table(schema.as_str(), name.as_str(), function, column.as_str())
                }
            };
            ctx.show("table add", view, || {
                crate::outln!(
                    "table {schema}.{name} mapped ({})",
                    match &placement {
                        TablePlacement::Global => "global".to_string(),
                        TablePlacement::Sharded { function, column } =>
                            format!("sharded by {function} on {column}"),
                    }
                )
            });
        }
        TableCommand::Remove { table } => {
            let (schema, name) = split_table(&table)?;
            let message = crate::ops::remove::remove_table(&inv, &schema, &name)?;
            ctx.show(
                "table remove",
                serde_json::json!({"table": format!("{schema}.{name}"), "removed": true, "message": message}),
                || crate::outln!("{message}"),
            );
        }
        TableCommand::List => {
            let snap = Directory::open(&inv)?.load()?;
            match ctx.format {
                Format::Json => {
                    let tables: Vec<_> = snap
                        .tables
                        .iter()
                        .map(|t| {
                            let f = snap.function_by_id(t.func_id).map(|f| f.name.as_str());
                            views::sharded_table(&t.schema, &t.table, f.unwrap_or("?"), &t.column)
                        })
                        .chain(
                            snap.globals
                                .iter()
                                .map(|g| views::global_table(&g.schema, &g.table)),
                        )
                        .collect();
                    output::print_document("table list", serde_json::json!({"tables": tables}))
                }
                Format::Table => {
                    let mut t = output::table(&["table", "placement"]);
                    for s in &snap.tables {
                        let f = snap
                            .function_by_id(s.func_id)
                            .map(|f| f.name.as_str())
                            .unwrap_or("?");
                        t.add_row(vec![
                            Cell::new(format!("{}.{}", s.schema, s.table)),
                            Cell::new(format!("sharded by {f} on {}", s.column)),
                        ]);
                    }
                    for g in &snap.globals {
                        t.add_row(vec![
                            Cell::new(format!("{}.{}", g.schema, g.table)),
                            Cell::new("global"),
                        ]);
                    }
                    crate::outln!("{t}");
                }
            }
        }
    }
    Ok(())
}

pub fn shard(ctx: &Context, cmd: ShardCommand) -> Result<()> {
    let inv = ctx.inventory()?;
    match cmd {
        ShardCommand::Add {
            function,
            node,
            lower_bound,
            point,
            values,
            template_node,
        } => {
            let placement = match (lower_bound, point, values) {
                (Some(b), None, None) => Placement::LowerBound(b),
                (None, Some(p), None) => Placement::Point(p),
                (None, None, Some(v)) => Placement::Values(v),
                // A per-key function's shard (any other function is told what it needs).
                (None, None, None) => Placement::Keys,
                _ => {
                    return Err(Error::Usage(
                        "give one of --lower-bound, --point or --values".into(),
                    ))
                }
            };
            let added = add_shard(
                &inv,
                &AddShard {
                    function,
                    node,
                    placement,
                    template_node,
                },
            )?;
            match ctx.format {
                Format::Json => output::print_document(
                    "shard add",
                    serde_json::json!({
                        "shard": added.shard_id,
                        "node": added.node,
                        "schemas": added.schemas,
                        "tables": added.tables,
                        "global_rows": added.global_rows,
                    }),
                ),
                Format::Table => crate::outln!(
                    "shard {} added on {}: {} ({} tables, {} global rows copied)",
                    added.shard_id,
                    added.node,
                    added.schemas.join(", "),
                    added.tables,
                    added.global_rows
                ),
            }
        }
        ShardCommand::Remove { shard } => {
            let message = crate::ops::remove::remove_shard(&inv, shard)?;
            ctx.show(
                "shard remove",
                serde_json::json!({"shard": shard, "removed": true, "message": message}),
                || crate::outln!("{message}"),
            );
        }
        ShardCommand::SetAvailability {
            shard,
            availability,
            reason,
        } => {
            let change =
                Directory::open(&inv)?.set_availability(shard, availability, reason.as_deref())?;
            let word = views::availability_word(change.after);
            ctx.show(
                "shard set-availability",
                serde_json::json!({
                    "shard": change.shard,
                    "availability": change.after.as_sql(),
                    "before": change.before.as_sql(),
                    "changed": change.op.is_some(),
                    "op": change.op,
                    "directory_version": change.version,
                }),
                || match change.op {
                    Some(op) => crate::outln!(
                        "shard {shard} is now {word} (was {}; operation {op}, directory version {})",
                        views::availability_word(change.before),
                        change.version
                    ),
                    None => crate::outln!("shard {shard} is already {word}: nothing changed"),
                },
            );
        }
        ShardCommand::List => {
            let mut dir = Directory::open(&inv)?;
            let snap = dir.load()?;
            let keys = dir.per_key_counts(&snap)?;
            let shards: Vec<_> = snap
                .shards
                .iter()
                .map(|s| {
                    let mut v = views::shard(s, &snap);
                    if let Some(n) = keys.get(&s.id) {
                        v["keys"] = (*n).into();
                    }
                    v
                })
                .collect();
            match ctx.format {
                Format::Json => {
                    output::print_document("shard list", serde_json::json!({"shards": shards}))
                }
                Format::Table => {
                    let mut t = output::table(&[
                        "shard",
                        "function",
                        "covers",
                        "node",
                        "schemas",
                        "state",
                        "availability",
                    ]);
                    for s in &snap.shards {
                        let f = snap.function_by_id(s.func_id);
                        t.add_row(vec![
                            Cell::new(s.id),
                            Cell::new(f.map(|f| f.name.as_str()).unwrap_or("?")),
                            Cell::new(
                                f.map(|f| {
                                    views::covers_text(
                                        &coverage(&snap, f, s.id),
                                        keys.get(&s.id).copied(),
                                    )
                                })
                                .unwrap_or_default(),
                            ),
                            Cell::new(&s.node),
                            Cell::new(snap.shard_schemas(s).join(", ")),
                            Cell::new(s.state.as_sql()),
                            output::status_cell(
                                views::availability_word(s.availability),
                                s.availability == crate::directory::Availability::Available,
                            ),
                        ]);
                    }
                    crate::outln!("{t}");
                }
            }
        }
    }
    Ok(())
}

/// Arguments of `lookup`.
#[derive(Debug, clap::Args)]
pub struct LookupArgs {
    /// Partition function.
    #[arg(long, conflicts_with = "table", required_unless_present = "table")]
    pub function: Option<String>,
    /// A sharded table, SCHEMA.TABLE.
    #[arg(long)]
    pub table: Option<String>,
    /// The sharding key.
    #[arg(allow_hyphen_values = true)]
    pub key: String,
}

pub fn lookup(ctx: &Context, args: LookupArgs) -> Result<()> {
    let inv = ctx.inventory()?;
    let router = Router::connect(&inv)?;
    let snap = router.snapshot();
    let (func, shard) = match (&args.function, &args.table) {
        (Some(f), _) => {
            let func = snap.function(f)?;
            let key = func.key_type.parse(&args.key)?;
            (func, router.shard_for_function(f, &key)?)
        }
        (None, Some(t)) => {
            let (schema, table) = split_table(t)?;
            let mapped = snap
                .sharded_table(schema.as_str(), table.as_str())
                .ok_or_else(|| {
                    Error::Usage(format!(
                        "table {schema}.{table} is not a sharded table in the directory"
                    ))
                })?;
            let func = snap
                .function_by_id(mapped.func_id)
                .ok_or_else(|| Error::Usage("table maps to a missing function".into()))?;
            let key: Key = func.key_type.parse(&args.key)?;
            (
                func,
                router.shard_for_table(schema.as_str(), table.as_str(), &key)?,
            )
        }
        (None, None) => return Err(Error::Usage("give --function or --table".into())),
    };
    let route = router.route(shard);
    match ctx.format {
        Format::Json => output::print_document(
            "lookup",
            views::route(
                &args.key,
                &route,
                serde_json::json!(coverage(snap, func, shard.id)),
            ),
        ),
        Format::Table => {
            let mut t = output::table(&[
                "key",
                "shard",
                "function",
                "node",
                "address",
                "schemas",
                "state",
                "availability",
            ]);
            t.add_row(vec![
                Cell::new(&args.key),
                Cell::new(route.shard_id),
                Cell::new(&route.function),
                Cell::new(&route.node),
                Cell::new(format!("{}:{}", route.host, route.port)),
                Cell::new(route.schemas.join(", ")),
                Cell::new(route.state.as_sql()),
                Cell::new(views::availability_word(route.availability)),
            ]);
            crate::outln!("{t}");
        }
    }
    Ok(())
}

/// Arguments of `analyze`.
#[derive(Debug, clap::Args)]
pub struct AnalyzeArgs {
    /// The (unsharded) schema to analyse.
    #[arg(long)]
    pub schema: String,
    /// Node holding it (default: the directory node).
    #[arg(long)]
    pub node: Option<String>,
}

pub fn analyze(ctx: &Context, args: AnalyzeArgs) -> Result<()> {
    let inv = ctx.inventory()?;
    let schema = Ident::new("schema", &args.schema)?;
    let node = args
        .node
        .unwrap_or_else(|| inv.directory_home().to_string());
    let candidates = crate::directory::analyze::analyze_schema(&inv, &node, &schema)?;
    match ctx.format {
        Format::Json => {
            let candidates: Vec<_> = candidates
                .iter()
                .map(|c| {
                    serde_json::json!({
                        "columns": c.columns,
                        "tables": c.tables.iter().map(|(t, rows)| serde_json::json!({"table": t, "rows": rows})).collect::<Vec<_>>(),
                        "rows": c.rows,
                        "conflicts": c.conflicts,
                    })
                })
                .collect();
            output::print_document(
                "analyze",
                serde_json::json!({"node": node, "schema": schema.to_string(), "candidates": candidates}),
            )
        }
        Format::Table => {
            if candidates.is_empty() {
                crate::outln!(
                    "schema {schema} declares no foreign keys: no candidate sharding index"
                );
                return Ok(());
            }
            let mut t =
                output::table(&["candidate", "columns", "tables (rows)", "rows", "conflicts"]);
            for (i, c) in candidates.iter().enumerate() {
                let tables: Vec<String> =
                    c.tables.iter().map(|(t, n)| format!("{t} ({n})")).collect();
                t.add_row(vec![
                    Cell::new(format!("#{}", i + 1)),
                    Cell::new(c.columns.join("\n")),
                    Cell::new(tables.join("\n")),
                    Cell::new(c.rows),
                    Cell::new(if c.conflicts.is_empty() {
                        "-".to_string()
                    } else {
                        c.conflicts.join(", ")
                    }),
                ]);
            }
            crate::outln!("{t}");
            crate::outln!("Tables listed under conflicts appear in more than one candidate: only one of those candidates can shard them.");
        }
    }
    Ok(())
}

/// Arguments of `sample employees`.
#[derive(Debug, clap::Args)]
pub struct SampleArgs {
    /// Number of employees to write.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..))]
    pub count: u32,
    /// First emp_no.
    #[arg(long, default_value_t = 10001, allow_hyphen_values = true)]
    pub start: i64,
    /// Distance between emp_nos.
    #[arg(long, default_value_t = 1)]
    pub step: i64,
}

pub fn sample(ctx: &Context, args: SampleArgs) -> Result<()> {
    if args.step <= 0 {
        return Err(Error::Usage(format!(
            "--step {}: must be positive",
            args.step
        )));
    }
    let inv = ctx.inventory()?;
    let router = Router::connect(&inv)?;
    let emp_nos: Vec<i64> = (0..i64::from(args.count))
        .map(|i| args.start + i * args.step)
        .collect();
    let loaded = crate::sample::load_employees(&inv, &router, &emp_nos)?;
    match ctx.format {
        Format::Json => output::print_document(
            "sample",
            serde_json::json!({
                "employees": loaded.employees,
                "shards": loaded.rows_per_shard.iter().map(|(s, rows)| serde_json::json!({"shard": s, "rows": rows})).collect::<Vec<_>>(),
            }),
        ),
        Format::Table => {
            let per: Vec<String> = loaded
                .rows_per_shard
                .iter()
                .map(|(s, n)| format!("shard {s}: {n} rows"))
                .collect();
            crate::outln!(
                "{} employees written through the router ({})",
                loaded.employees,
                per.join(", ")
            );
        }
    }
    Ok(())
}
