//! `keys`: the keys of per-key functions (one directory row per key).

use super::Context;
use crate::directory::{Directory, Function, Key, ShardingType};
use crate::error::{Error, Result};
use std::io::BufRead;
use std::path::PathBuf;

/// The per-key function called `name`.
fn per_key(dir: &mut Directory, name: &str) -> Result<Function> {
    let snap = dir.load()?;
    let func = snap.function(name)?.clone();
    if func.sharding_type != ShardingType::Key {
        return Err(Error::Usage(format!(
            "function {name} is {}, not a per-key function (`function add --type key`)",
            func.sharding_type.as_sql()
        )));
    }
    Ok(func)
}

/// One line of an import file: `KEY,SHARD` or `KEY<TAB>SHARD` (split at the last comma or
/// tab, so a string key may hold commas), None for a blank line.
pub(crate) fn import_line(
    func: &Function,
    line: u64,
    text: &str,
) -> Result<Option<(u64, Key, u32)>> {
    let text = text.strip_suffix('\r').unwrap_or(text);
    if text.trim().is_empty() {
        return Ok(None);
    }
    let (key, shard) = text.rsplit_once([',', '\t']).ok_or_else(|| {
        Error::Usage(format!(
            "line {line}: {text:?} is not KEY,SHARD; nothing imported"
        ))
    })?;
    let key = func
        .key_type
        .parse(key)
        .map_err(|e| Error::Usage(format!("line {line}: {e}; nothing imported")))?;
    let shard = shard.trim().parse::<u32>().map_err(|_| {
        Error::Usage(format!(
            "line {line}: shard {shard:?} is not a shard id; nothing imported"
        ))
    })?;
    Ok(Some((line, key, shard)))
}

/// `keys` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum KeysCommand {
    /// Map new keys of a per-key function, each to the least-loaded open shard (online,
    /// available, fewest keys); a key mapped already keeps its shard. Atomic: two callers
    /// assigning one key at once get the same shard.
    #[command(
        after_help = "Example:\n  shardctl keys assign --function users 100042\n  shardctl keys assign --function users 100043 100044"
    )]
    Assign {
        /// The per-key partition function.
        #[arg(long)]
        function: String,
        /// The keys, each assigned in a directory change of its own.
        #[arg(allow_hyphen_values = true, required = true)]
        keys: Vec<String>,
    },
    /// Import the key-to-shard rows of a per-key function from a file: one `KEY,SHARD` (or
    /// `KEY<TAB>SHARD`) a line, blank lines skipped; or from the rows (key, shard) of a
    /// SELECT run on a node. Everything is checked first (a bad line or row, an unknown
    /// shard, a key given twice or mapped elsewhere already refuses the whole import,
    /// naming the line or row); keys mapped already to the same shard are skipped, so an
    /// import can run again.
    #[command(
        after_help = "Examples:\n  shardctl keys import --function users --file users.csv\n  shardctl keys import --function users --node node1 --from-query 'SELECT user_id, shard FROM app.owners'"
    )]
    Import {
        /// The per-key partition function.
        #[arg(long)]
        function: String,
        /// The file (`-`: standard input).
        #[arg(
            long,
            required_unless_present = "from_query",
            conflicts_with = "from_query"
        )]
        file: Option<PathBuf>,
        /// One SELECT whose rows are (key, shard), run on `--node` in a read-only session;
        /// its rows are numbered from 1 as a file's lines are.
        #[arg(long, requires = "node")]
        from_query: Option<String>,
        /// The inventory's node `--from-query` runs on.
        #[arg(long, requires = "from_query")]
        node: Option<String>,
        /// Rows a multi-row INSERT stages at once.
        #[arg(long, default_value_t = 5000)]
        batch: usize,
        /// Keys one directory change adds at most.
        #[arg(long, default_value_t = 100_000)]
        chunk: u64,
    },
}

/// The key-to-shard lines of `file` (`-`: standard input) imported.
fn import_file(
    dir: &mut Directory,
    func: &Function,
    file: &std::path::Path,
    batch: usize,
    chunk: u64,
) -> Result<crate::directory::Imported> {
    let reader: Box<dyn BufRead> = if file.as_os_str() == "-" {
        Box::new(std::io::stdin().lock())
    } else {
        Box::new(std::io::BufReader::new(std::fs::File::open(file).map_err(
            |e| Error::Usage(format!("cannot read {}: {e}", file.display())),
        )?))
    };
    let rows = reader.lines().enumerate().filter_map(|(i, l)| {
        let line = i as u64 + 1;
        match l {
            Err(e) => Some(Err(Error::Usage(format!(
                "line {line}: cannot read {}: {e}; nothing imported",
                file.display()
            )))),
            Ok(text) => import_line(func, line, &text).transpose(),
        }
    });
    dir.import_keys(func, rows, batch, chunk)
}

/// The (key, shard) rows of the operator's SELECT `sql`, run on `node` in a read-only
/// session, each numbered from 1 (refused before anything is sent: anything but one
/// SELECT, exit 5; then a row of other than two columns, a key that does not read as
/// the function's, a shard that is not an id: exit 2, naming the row).
fn query_rows(
    inv: &crate::config::Inventory,
    func: &Function,
    node: &str,
    sql: &str,
) -> Result<Vec<(u64, Key, u32)>> {
    crate::query::check_read_only(sql)?;
    let mut server = crate::server::Server::connect_node(inv, node)?;
    server.make_read_only()?;
    let text = |v: &mysql::Value| -> Option<String> {
        match v {
            mysql::Value::Int(i) => Some(i.to_string()),
            mysql::Value::UInt(u) => Some(u.to_string()),
            mysql::Value::Bytes(b) => Some(String::from_utf8_lossy(b).into_owned()),
            _ => None,
        }
    };
    let mut out = Vec::new();
    for (i, row) in server
        .rows(&crate::server::statements::operator_select(sql))?
        .into_iter()
        .enumerate()
    {
        let line = i as u64 + 1;
        let values = row.unwrap();
        let [key, shard] = values.as_slice() else {
            return Err(Error::Usage(format!(
                "row {line}: the query returned {} columns, not two (key, shard); nothing imported",
                values.len()
            )));
        };
        let key = text(key)
            .ok_or_else(|| Error::Usage(format!("row {line}: the key is NULL; nothing imported")))
            .and_then(|k| func.key_type.parse(&k))
            .map_err(|e| Error::Usage(format!("row {line}: {e}; nothing imported")))?;
        let shard = text(shard)
            .and_then(|s| s.trim().parse::<u32>().ok())
            .ok_or_else(|| {
                Error::Usage(format!(
                    "row {line}: shard {shard:?} is not a shard id; nothing imported"
                ))
            })?;
        out.push((line, key, shard));
    }
    Ok(out)
}

pub fn run(ctx: &Context, cmd: KeysCommand) -> Result<()> {
    let inv = ctx.inventory()?;
    match cmd {
        KeysCommand::Import {
            function,
            file,
            from_query,
            node,
            batch,
            chunk,
        } => {
            let mut dir = Directory::open(&inv)?;
            let func = per_key(&mut dir, &function)?;
            let started = std::time::Instant::now();
            let done = match (file, from_query, node) {
                (_, Some(sql), Some(node)) => {
                    let rows = query_rows(&inv, &func, &node, &sql)?;
                    dir.import_keys(&func, rows.into_iter().map(Ok), batch, chunk)?
                }
                (Some(file), _, _) => import_file(&mut dir, &func, &file, batch, chunk)?,
                _ => {
                    return Err(Error::Usage(
                        "give --file PATH, or --from-query SQL with --node NODE".into(),
                    ))
                }
            };
            let secs = started.elapsed().as_secs_f64();
            ctx.show(
                "keys import",
                serde_json::json!({
                    "function": function,
                    "read": done.read,
                    "added": done.added,
                    "present": done.present,
                    "elapsed_ms": started.elapsed().as_millis() as u64,
                }),
                || {
                    crate::outln!(
                        "{} keys read, {} added, {} mapped already ({secs:.1} s)",
                        done.read,
                        done.added,
                        done.present
                    )
                },
            );
        }
        KeysCommand::Assign { function, keys } => {
            let mut dir = Directory::open(&inv)?;
            let func = per_key(&mut dir, &function)?;
            let parsed = keys
                .iter()
                .map(|k| func.key_type.parse(k))
                .collect::<Result<Vec<Key>>>()?;
            let mut done = Vec::with_capacity(parsed.len());
            for k in &parsed {
                done.push((k.to_string(), dir.assign_key(&func, k)?));
            }
            let rows: Vec<serde_json::Value> = done
                .iter()
                .map(|(k, a)| serde_json::json!({"key": k, "shard": a.shard_id, "assigned": a.assigned}))
                .collect();
            ctx.show(
                "keys assign",
                serde_json::json!({"function": function, "keys": rows}),
                || {
                    for (key, a) in &done {
                        if a.assigned {
                            crate::outln!("key {key} assigned to shard {}", a.shard_id);
                        } else {
                            crate::outln!("key {key} was mapped already, to shard {}", a.shard_id);
                        }
                    }
                },
            );
        }
    }
    Ok(())
}
