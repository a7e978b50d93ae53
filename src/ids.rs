//! Ids unique across shards (references 000 and 002): `check` finds ids present on more
//! than one shard and says which scheme the fleet follows (ids that are the sharding key,
//! AUTO_INCREMENT with per-node offset and increment, or ids from elsewhere) and where it
//! breaks. The sequences in the directory that hand out blocks of ids, the chapter's ticket
//! table, are read and taken from in [`crate::directory::sequences`]; this module creates
//! them, names the columns they feed and raises them past the ids stored there.

use crate::config::Inventory;
use crate::directory::sequences::{sequence, Sequence};
use crate::directory::{shard_schema, Changed, Directory, Snapshot};
use crate::error::{Error, Result};
use crate::ident::Ident;
use crate::server::{reports, row_error, server_error_code, Server};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};

/// Creates a sequence handing out `start..=max` in blocks of `block`, feeding no named
/// column.
pub fn create_sequence(
    dir: &mut Directory,
    name: &str,
    start: i64,
    block: u32,
    max: i64,
) -> Result<Sequence> {
    create(dir, name, start, block, max, &[])
}

/// [`create_sequence`], the sequence feeding the columns `feeds` (`schema.table.column`,
/// each checked as [`set_feeds`] does), recorded in the same transaction.
pub fn create_sequence_feeding(
    inv: &Inventory,
    dir: &mut Directory,
    name: &str,
    start: i64,
    block: u32,
    max: i64,
    feeds: &[String],
) -> Result<Sequence> {
    Ident::new("sequence", name)?;
    let feeds = parse_feeds(inv, dir, feeds)?;
    create(dir, name, start, block, max, &feeds)
}

fn create(
    dir: &mut Directory,
    name: &str,
    start: i64,
    block: u32,
    max: i64,
    feeds: &[Feed],
) -> Result<Sequence> {
    let ident = Ident::new("sequence", name)?;
    if start < 1 {
        return Err(Error::Usage(format!("--start {start}: must be at least 1")));
    }
    if block < 1 {
        return Err(Error::Usage("--block must be at least 1".into()));
    }
    if max < start || max == i64::MAX {
        return Err(Error::Usage(format!(
            "--max {max}: must be at least --start ({start}) and below {}",
            i64::MAX
        )));
    }
    let d = dir.schema().clone();
    dir.change(|dir, _| {
        let st = reports::create_sequence(&d);
        let st = crate::server::Stmt::with(
            st.sql,
            vec![
                ident.as_str().into(),
                start.into(),
                block.into(),
                max.into(),
            ],
        );
        let server = dir.server();
        server.try_rows(&st).map(|_| ()).map_err(|e| {
            if server_error_code(&e) == Some(1062) {
                Error::Usage(format!("sequence {name} already exists"))
            } else {
                server.error(&e)
            }
        })?;
        // Sequences are not cached by routers: they take blocks from the table itself.
        record_feeds(dir, &d, name, feeds).map(|()| ((), Changed::Nothing))
    })?;
    sequence(dir, name)
}

/// A column a sequence's ids are stored in.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Feed {
    schema: String,
    table: String,
    column: String,
}

/// Checks each `schema.table.column`: a sharded table of the directory whose first shard
/// has that column, of an integer type.
fn parse_feeds(inv: &Inventory, dir: &mut Directory, feeds: &[String]) -> Result<Vec<Feed>> {
    if feeds.is_empty() {
        return Ok(Vec::new());
    }
    let snap = dir.load()?;
    let mut conns: HashMap<String, Server> = HashMap::new();
    let mut out = Vec::new();
    for f in feeds {
        let parts: Vec<&str> = f.split('.').collect();
        let [schema, table, column] = parts.as_slice() else {
            return Err(Error::Usage(format!(
                "--feeds {f}: expected SCHEMA.TABLE.COLUMN (e.g. app.orders.id)"
            )));
        };
        let column = Ident::new("column", column)?;
        let Some(t) = snap
            .tables
            .iter()
            .find(|t| t.schema == *schema && t.table == *table)
        else {
            return Err(Error::Usage(format!(
                "--feeds {f}: {schema}.{table} is not a sharded table of the directory (shardctl table add)"
            )));
        };
        let Some(first) = snap.shards_of(t.func_id).next() else {
            return Err(Error::Usage(format!(
                "--feeds {f}: the function of {schema}.{table} has no shard"
            )));
        };
        let phys = Ident::new("schema", &shard_schema(schema, first.id))?;
        let table_ident = Ident::new("table", table)?;
        let server = conn(&mut conns, inv, &first.node)?;
        let data_type: Option<String> =
            server.first(&reports::column_data_type(&phys, &table_ident, &column))?;
        match data_type {
            None => {
                return Err(Error::Usage(format!(
                    "--feeds {f}: {phys}.{table} on {} has no column {column}",
                    first.node
                )))
            }
            Some(ty) if !INTEGER_TYPES.contains(&ty.to_ascii_lowercase().as_str()) => {
                return Err(Error::Usage(format!(
                    "--feeds {f}: column {column} is {ty}, not an integer"
                )))
            }
            Some(_) => {}
        }
        out.push(Feed {
            schema: schema.to_string(),
            table: table.to_string(),
            column: column.as_str().to_string(),
        });
    }
    Ok(out)
}

/// Replaces the columns sequence `name` feeds, inside the caller's transaction.
fn record_feeds(dir: &mut Directory, d: &Ident, name: &str, feeds: &[Feed]) -> Result<()> {
    let server = dir.server();
    server.exec(&crate::server::Stmt::with(
        reports::clear_sequence_feeds(d).sql,
        vec![name.into()],
    ))?;
    for f in feeds {
        server.exec(&crate::server::Stmt::with(
            reports::add_sequence_feed(d).sql,
            vec![
                name.into(),
                f.schema.as_str().into(),
                f.table.as_str().into(),
                f.column.as_str().into(),
            ],
        ))?;
    }
    Ok(())
}

/// Sets the columns sequence `name` feeds (`schema.table.column`, at least one), replacing
/// the ones it had: each must be a sharded table of the directory whose first shard has
/// that column, of an integer type.
pub fn set_feeds(
    inv: &Inventory,
    dir: &mut Directory,
    name: &str,
    feeds: &[String],
) -> Result<Sequence> {
    sequence(dir, name)?;
    if feeds.is_empty() {
        return Err(Error::Usage(format!(
            "sequence {name}: name at least one SCHEMA.TABLE.COLUMN it feeds"
        )));
    }
    let feeds = parse_feeds(inv, dir, feeds)?;
    let d = dir.schema().clone();
    dir.change(|dir, _| record_feeds(dir, &d, name, &feeds).map(|()| ((), Changed::Nothing)))?;
    sequence(dir, name)
}

/// A node's AUTO_INCREMENT settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NodeSettings {
    /// Node name.
    pub node: String,
    /// `auto_increment_increment`.
    pub auto_increment_increment: u64,
    /// `auto_increment_offset`.
    pub auto_increment_offset: u64,
    /// Shards of each function it holds.
    pub shards: Vec<u32>,
}

/// One id found on more than one shard.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DuplicateId {
    /// The id.
    pub id: i128,
    /// The shards holding it.
    pub shards: Vec<u32>,
}

/// One sharded table's ids.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TableIds {
    /// Logical schema.
    pub schema: String,
    /// Table.
    pub table: String,
    /// The integer primary key column.
    pub column: String,
    /// The function.
    pub function: String,
    /// Whether the column is AUTO_INCREMENT.
    pub auto_increment: bool,
    /// Ids read (all shards).
    pub ids: u64,
    /// Ids present on more than one shard.
    pub duplicate_ids: u64,
    /// Up to ten of them.
    pub examples: Vec<DuplicateId>,
    /// `sharding_key` (the id is the sharding column), `offset_increment` (AUTO_INCREMENT
    /// with per-node offsets), `none` (AUTO_INCREMENT counting alike everywhere) or
    /// `application` (ids come from elsewhere, e.g. a sequence).
    pub scheme: String,
    /// Where the scheme breaks (empty: it holds).
    pub breaks: Vec<String>,
}

/// A table `check` did not examine, and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Skipped {
    /// Logical schema.
    pub schema: String,
    /// Table.
    pub table: String,
    /// Why.
    pub reason: String,
}

/// What `ids check` found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IdsReport {
    /// Each node holding shards.
    pub nodes: Vec<NodeSettings>,
    /// Each sharded table with a one-column integer primary key.
    pub tables: Vec<TableIds>,
    /// The other sharded tables.
    pub skipped: Vec<Skipped>,
    /// Each sequence compared with the ids stored in the columns it feeds.
    pub sequences: Vec<SequenceCheck>,
}

impl IdsReport {
    /// True when no table's scheme breaks and no sequence would hand out a stored id.
    pub fn holds(&self) -> bool {
        self.tables.iter().all(|t| t.breaks.is_empty())
            && self.sequences.iter().all(|s| s.hazard.is_none())
    }
}

/// The read-only connection to `node`, opened on first use.
fn conn<'a>(
    conns: &'a mut HashMap<String, Server>,
    inv: &Inventory,
    node: &str,
) -> Result<&'a mut Server> {
    if !conns.contains_key(node) {
        let mut s = Server::connect_node(inv, node)?;
        s.make_read_only()?;
        conns.insert(node.to_string(), s);
    }
    Ok(conns.get_mut(node).expect("inserted"))
}

const INTEGER_TYPES: [&str; 5] = ["tinyint", "smallint", "mediumint", "int", "bigint"];

/// Reads every sharded table's ids from every shard (read-only), every node's
/// AUTO_INCREMENT settings, and the highest id in each column the sequences `seqs` feed.
pub fn check(inv: &Inventory, snap: &Snapshot, seqs: &[Sequence]) -> Result<IdsReport> {
    let mut conns: HashMap<String, Server> = HashMap::new();
    let mut by_node: BTreeMap<String, Vec<u32>> = BTreeMap::new();
    for s in &snap.shards {
        by_node.entry(s.node.clone()).or_default().push(s.id);
    }
    let mut nodes = Vec::new();
    for (node, shards) in &by_node {
        let server = conn(&mut conns, inv, node)?;
        let (inc, off): (u64, u64) = server
            .first(&reports::auto_increment_settings())?
            .unwrap_or((1, 1));
        nodes.push(NodeSettings {
            node: node.clone(),
            auto_increment_increment: inc,
            auto_increment_offset: off,
            shards: shards.clone(),
        });
    }
    let mut tables = Vec::new();
    let mut skipped = Vec::new();
    for t in &snap.tables {
        let Some(func) = snap.function_by_id(t.func_id) else {
            continue;
        };
        let shards: Vec<_> = snap.shards_of(t.func_id).collect();
        let Some(first) = shards.first() else {
            skipped.push(Skipped {
                schema: t.schema.clone(),
                table: t.table.clone(),
                reason: "its function has no shard".into(),
            });
            continue;
        };
        let table = Ident::new("table", &t.table)?;
        let phys = Ident::new("schema", &shard_schema(&t.schema, first.id))?;
        let server = conn(&mut conns, inv, &first.node)?;
        let node = server.name().to_string();
        let pk: Vec<(String, String, String)> = server
            .rows(&reports::primary_key_typed(&phys, &table))?
            .into_iter()
            .map(|r| mysql::from_row_opt(r).map_err(|e| row_error(&node, e)))
            .collect::<Result<_>>()?;
        let [(column, data_type, extra)] = pk.as_slice() else {
            skipped.push(Skipped {
                schema: t.schema.clone(),
                table: t.table.clone(),
                reason: if pk.is_empty() {
                    "no primary key".into()
                } else {
                    format!(
                        "primary key ({}) is not one integer column",
                        pk.iter()
                            .map(|p| p.0.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                },
            });
            continue;
        };
        if !INTEGER_TYPES.contains(&data_type.to_ascii_lowercase().as_str()) {
            skipped.push(Skipped {
                schema: t.schema.clone(),
                table: t.table.clone(),
                reason: format!("primary key {column} is {data_type}, not an integer"),
            });
            continue;
        }
        let col = Ident::new("column", column)?;
        let mut all: Vec<(i128, u32)> = Vec::new();
        for s in &shards {
            let phys = Ident::new("schema", &shard_schema(&t.schema, s.id))?;
            let server = conn(&mut conns, inv, &s.node)?;
            server.stream(&reports::ids_in_order(&phys, &table, &col), |row| {
                let id = match row.as_ref(0) {
                    Some(mysql::Value::Int(i)) => Some(i128::from(*i)),
                    Some(mysql::Value::UInt(u)) => Some(i128::from(*u)),
                    _ => None,
                };
                if let Some(id) = id {
                    all.push((id, s.id));
                }
                Ok(())
            })?;
        }
        all.sort_unstable();
        let mut duplicate_ids = 0u64;
        let mut examples = Vec::new();
        let mut i = 0;
        while i < all.len() {
            let mut j = i + 1;
            while j < all.len() && all[j].0 == all[i].0 {
                j += 1;
            }
            let mut on: Vec<u32> = all[i..j].iter().map(|x| x.1).collect();
            on.dedup();
            if on.len() > 1 {
                duplicate_ids += 1;
                if examples.len() < 10 {
                    examples.push(DuplicateId {
                        id: all[i].0,
                        shards: on,
                    });
                }
            }
            i = j;
        }
        let auto_increment = extra.to_ascii_lowercase().contains("auto_increment");
        let fn_nodes: Vec<&NodeSettings> = nodes
            .iter()
            .filter(|n| shards.iter().any(|s| s.node == n.node))
            .collect();
        let mut breaks = Vec::new();
        let scheme = if column.eq_ignore_ascii_case(&t.column) {
            "sharding_key"
        } else if !auto_increment {
            "application"
        } else if fn_nodes.iter().all(|n| n.auto_increment_increment == 1) {
            breaks.push(
                "every node counts 1, 2, 3, ... (auto_increment_increment = 1): AUTO_INCREMENT gives the same ids on every shard".to_string(),
            );
            "none"
        } else {
            let count = fn_nodes.len() as u64;
            for n in &fn_nodes {
                if n.auto_increment_increment < count {
                    breaks.push(format!(
                        "{}: auto_increment_increment {} is below the {count} nodes",
                        n.node, n.auto_increment_increment
                    ));
                }
                let on_node: Vec<u32> = shards
                    .iter()
                    .filter(|s| s.node == n.node)
                    .map(|s| s.id)
                    .collect();
                if on_node.len() > 1 {
                    breaks.push(format!(
                        "{} holds shards {} of {}: they count with the same offset",
                        n.node,
                        on_node
                            .iter()
                            .map(u32::to_string)
                            .collect::<Vec<_>>()
                            .join(", "),
                        func.name
                    ));
                }
            }
            for (i, a) in fn_nodes.iter().enumerate() {
                for b in &fn_nodes[i + 1..] {
                    if a.auto_increment_offset == b.auto_increment_offset
                        || a.auto_increment_increment != b.auto_increment_increment
                    {
                        breaks.push(format!(
                            "{} and {}: offsets {}/{} with increments {}/{} overlap",
                            a.node,
                            b.node,
                            a.auto_increment_offset,
                            b.auto_increment_offset,
                            a.auto_increment_increment,
                            b.auto_increment_increment
                        ));
                    }
                }
            }
            "offset_increment"
        };
        if duplicate_ids > 0 {
            let e = &examples[0];
            breaks.push(format!(
                "{duplicate_ids} id{} on more than one shard (e.g. {} on shards {})",
                if duplicate_ids == 1 { "" } else { "s" },
                e.id,
                e.shards
                    .iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        tables.push(TableIds {
            schema: t.schema.clone(),
            table: t.table.clone(),
            column: column.clone(),
            function: func.name.clone(),
            auto_increment,
            ids: all.len() as u64,
            duplicate_ids,
            examples,
            scheme: scheme.to_string(),
            breaks,
        });
    }
    Ok(IdsReport {
        nodes,
        tables,
        skipped,
        sequences: check_sequences(inv, snap, seqs),
    })
}

/// The highest id stored in a column a sequence feeds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StoredId {
    /// The id.
    pub value: i128,
    /// The shard holding it.
    pub shard: u32,
    /// Its column, `schema.table.column`.
    pub column: String,
}

/// One sequence compared with the ids stored in the columns it feeds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SequenceCheck {
    /// The sequence.
    pub sequence: String,
    /// The first value it hands out next.
    pub next_value: i64,
    /// The columns it feeds (empty: not checked).
    pub feeds: Vec<String>,
    /// The highest id those columns hold on any shard read (null: none stored).
    pub highest: Option<StoredId>,
    /// Columns or shards that could not be read, and why.
    pub unread: Vec<String>,
    /// Set when the next value is at or below a stored id: the sequence would hand out ids
    /// already in use, as a directory restored from an older backup does.
    pub hazard: Option<String>,
}

/// Compares each sequence's next value with MAX of every column it feeds on every shard
/// of the column's table (read-only). A node or table that cannot be read is named in
/// `unread`, never an error: `status` reports what it could read.
pub fn check_sequences(inv: &Inventory, snap: &Snapshot, seqs: &[Sequence]) -> Vec<SequenceCheck> {
    let mut conns: HashMap<String, Server> = HashMap::new();
    seqs.iter()
        .map(|seq| check_sequence(inv, snap, seq, &mut conns))
        .collect()
}

fn check_sequence(
    inv: &Inventory,
    snap: &Snapshot,
    seq: &Sequence,
    conns: &mut HashMap<String, Server>,
) -> SequenceCheck {
    let mut highest: Option<StoredId> = None;
    let mut unread = Vec::new();
    for feed in &seq.feeds {
        let mut parts = feed.splitn(3, '.');
        let (Some(schema), Some(table), Some(column)) = (parts.next(), parts.next(), parts.next())
        else {
            unread.push(format!("{feed}: not SCHEMA.TABLE.COLUMN"));
            continue;
        };
        let Some(t) = snap
            .tables
            .iter()
            .find(|t| t.schema == schema && t.table == table)
        else {
            unread.push(format!(
                "{feed}: {schema}.{table} is no longer a sharded table of the directory"
            ));
            continue;
        };
        for shard in snap.shards_of(t.func_id) {
            match max_stored(inv, conns, &shard.node, schema, shard.id, table, column) {
                Ok(Some(id)) => {
                    if highest.as_ref().is_none_or(|h| id > h.value) {
                        highest = Some(StoredId {
                            value: id,
                            shard: shard.id,
                            column: feed.clone(),
                        });
                    }
                }
                Ok(None) => {}
                Err(e) => unread.push(format!(
                    "{feed} on shard {} ({}): {e}",
                    shard.id, shard.node
                )),
            }
        }
    }
    let hazard = highest
        .as_ref()
        .filter(|h| i128::from(seq.next_value) <= h.value)
        .map(|h| {
            format!(
                "sequence {} hands out {} but shard {} holds {} {}: the directory looks restored from an older backup (shardctl ids sequence raise {})",
                seq.sequence, seq.next_value, h.shard, h.column, h.value, seq.sequence
            )
        });
    SequenceCheck {
        sequence: seq.sequence.clone(),
        next_value: seq.next_value,
        feeds: seq.feeds.clone(),
        highest,
        unread,
        hazard,
    }
}

/// MAX(`column`) of one shard's table; None when it holds no row.
fn max_stored(
    inv: &Inventory,
    conns: &mut HashMap<String, Server>,
    node: &str,
    schema: &str,
    shard: u32,
    table: &str,
    column: &str,
) -> Result<Option<i128>> {
    let phys = Ident::new("schema", &shard_schema(schema, shard))?;
    let table = Ident::new("table", table)?;
    let column = Ident::new("column", column)?;
    let server = conn(conns, inv, node)?;
    let max: Option<Option<String>> =
        server.first(&reports::max_of_column(&phys, &table, &column))?;
    match max.flatten() {
        None => Ok(None),
        Some(text) => text.parse::<i128>().map(Some).map_err(|_| {
            Error::server(node, format!("{column} holds {text:?}, not an integer id"))
        }),
    }
}

/// What `ids sequence raise` did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Raised {
    /// The sequence.
    pub sequence: String,
    /// Its next value before.
    pub before: i64,
    /// Its next value now (`before` when nothing needed raising).
    pub after: i64,
    /// The highest id stored in the columns it feeds.
    pub highest: Option<StoredId>,
    /// Values left unused above it.
    pub margin: u64,
}

/// Raises sequence `name`'s next value past the highest id stored in the columns it feeds,
/// plus `margin` values (default: one block) for blocks routers took from the directory
/// before it was restored and have not stored yet. Never lowers it: a sequence already
/// past every stored id is left as it is. Refused when a column cannot be read on some
/// shard or the raised value would pass the sequence's max.
pub fn raise(
    inv: &Inventory,
    dir: &mut Directory,
    name: &str,
    margin: Option<u64>,
) -> Result<Raised> {
    let seq = sequence(dir, name)?;
    if seq.feeds.is_empty() {
        return Err(Error::Usage(format!(
            "sequence {name} feeds no column: name them first (shardctl ids sequence feeds {name} SCHEMA.TABLE.COLUMN)"
        )));
    }
    let margin = margin.unwrap_or(u64::from(seq.block_size));
    let snap = dir.load()?;
    let check = check_sequences(inv, &snap, std::slice::from_ref(&seq))
        .pop()
        .expect("one sequence checked");
    if let Some(why) = check.unread.first() {
        return Err(Error::Refused(format!(
            "sequence {name} not raised: cannot read {why}"
        )));
    }
    let unchanged = Raised {
        sequence: name.to_string(),
        before: seq.next_value,
        after: seq.next_value,
        highest: check.highest.clone(),
        margin,
    };
    let Some(highest) = check
        .highest
        .filter(|h| i128::from(seq.next_value) <= h.value)
    else {
        return Ok(unchanged);
    };
    let target = highest.value + 1 + i128::from(margin);
    if target > i128::from(seq.max_value) {
        return Err(Error::Refused(format!(
            "sequence {name} not raised: past shard {}'s {} {} with a margin of {margin} it would hand out {target}, above its max {}",
            highest.shard, highest.column, highest.value, seq.max_value
        )));
    }
    let target = target as i64;
    let d = dir.schema().clone();
    let st = crate::server::Stmt::with(
        reports::raise_sequence(&d).sql,
        vec![target.into(), name.into(), target.into()],
    );
    dir.server().exec_affected(&st)?;
    Ok(Raised {
        after: sequence(dir, name)?.next_value,
        highest: Some(highest),
        ..unchanged
    })
}
