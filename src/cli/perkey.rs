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
    /// `KEY<TAB>SHARD`) a line, blank lines skipped. Everything is checked first (a bad
    /// line, an unknown shard, a key given twice or mapped elsewhere already refuses the
    /// whole import, naming the line); keys mapped already to the same shard are skipped,
    /// so an import can run again.
    #[command(after_help = "Example:\n  shardctl keys import --function users --file users.csv")]
    Import {
        /// The per-key partition function.
        #[arg(long)]
        function: String,
        /// The file (`-`: standard input).
        #[arg(long)]
        file: PathBuf,
        /// Rows a multi-row INSERT stages at once.
        #[arg(long, default_value_t = 5000)]
        batch: usize,
        /// Keys one directory change adds at most.
        #[arg(long, default_value_t = 100_000)]
        chunk: u64,
    },
}

pub fn run(ctx: &Context, cmd: KeysCommand) -> Result<()> {
    let inv = ctx.inventory()?;
    match cmd {
        KeysCommand::Import {
            function,
            file,
            batch,
            chunk,
        } => {
            let mut dir = Directory::open(&inv)?;
            let func = per_key(&mut dir, &function)?;
            let reader: Box<dyn BufRead> = if file.as_os_str() == "-" {
                Box::new(std::io::stdin().lock())
            } else {
                Box::new(std::io::BufReader::new(
                    std::fs::File::open(&file).map_err(|e| {
                        Error::Usage(format!("cannot read {}: {e}", file.display()))
                    })?,
                ))
            };
            let started = std::time::Instant::now();
            let rows = reader.lines().enumerate().filter_map(|(i, l)| {
                let line = i as u64 + 1;
                match l {
                    Err(e) => Some(Err(Error::Usage(format!(
                        "line {line}: cannot read {}: {e}; nothing imported",
                        file.display()
                    )))),
                    Ok(text) => import_line(&func, line, &text).transpose(),
                }
            });
            let done = dir.import_keys(&func, rows, batch, chunk)?;
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
