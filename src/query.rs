//! Cross-shard reports, the chapter's map-reduce: one read-only statement run on every
//! shard of a function in parallel, `{table}` markers replaced by each shard's physical
//! table, rows merged; COUNT, SUM, MIN and MAX (with GROUP BY) merged across shards.
//! The text checks ([`Template`], [`Plan`]) are pure.

use crate::config::Inventory;
use crate::directory::journal::OpKind;
use crate::directory::journal::OperationSummary;
use crate::directory::{shard_schema, Snapshot};
use crate::error::{Error, Result};
use crate::ident::Ident;
use crate::server::{reports, ConnectSpec, Server};
use mysql::Value;
use serde::Serialize;
use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

/// Words that make a SELECT (or WITH) statement write or lock (`WITH ... UPDATE`,
/// `INTO OUTFILE`, `FOR UPDATE`, `FOR SHARE`, `LOCK IN SHARE MODE`), or that have no place
/// in one: refused anywhere outside quotes and comments. One statement only, starting with
/// SELECT or WITH, and the read-only session refuses whatever slips through.
const WRITE_WORDS: [&str; 16] = [
    "INSERT", "UPDATE", "DELETE", "REPLACE", "INTO", "LOCK", "SHARE", "CREATE", "DROP", "ALTER",
    "TRUNCATE", "RENAME", "GRANT", "REVOKE", "CALL", "HANDLER",
];

/// Aggregates that cannot be merged from per-shard results.
const UNMERGEABLE: [&str; 10] = [
    "AVG",
    "GROUP_CONCAT",
    "STD",
    "STDDEV",
    "STDDEV_POP",
    "STDDEV_SAMP",
    "VARIANCE",
    "VAR_POP",
    "VAR_SAMP",
    "JSON_ARRAYAGG",
];

/// A piece of query text: code (where words count) or a literal, quoted name or comment.
#[derive(Debug, Clone, PartialEq)]
enum Piece {
    Code(String),
    Other(String),
}

/// Cuts SQL text into code and the rest ('...', "...", `...`, comments).
fn pieces(sql: &str) -> Result<Vec<Piece>> {
    let b = sql.as_bytes();
    let mut out = Vec::new();
    let mut code = String::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let two = if i + 1 < b.len() { &sql[i..i + 2] } else { "" };
        let end = if c == b'\'' || c == b'"' || c == b'`' {
            let mut j = i + 1;
            loop {
                if j >= b.len() {
                    return Err(Error::Usage(format!(
                        "the query has an unclosed {} at byte {i}",
                        c as char
                    )));
                }
                if b[j] == b'\\' && c != b'`' {
                    j += 2;
                    continue;
                }
                if b[j] == c {
                    if j + 1 < b.len() && b[j + 1] == c {
                        j += 2;
                        continue;
                    }
                    break j + 1;
                }
                j += 1;
            }
        } else if two == "/*" {
            sql[i + 2..]
                .find("*/")
                .map(|p| i + 2 + p + 2)
                .ok_or_else(|| Error::Usage("the query has an unclosed /* comment".into()))?
        } else if two == "--" || c == b'#' {
            sql[i..].find('\n').map_or(b.len(), |p| i + p + 1)
        } else {
            let ch = sql[i..].chars().next().expect("in bounds");
            code.push(ch);
            i += ch.len_utf8();
            continue;
        };
        if !code.is_empty() {
            out.push(Piece::Code(std::mem::take(&mut code)));
        }
        out.push(Piece::Other(sql[i..end].to_string()));
        i = end;
    }
    if !code.is_empty() {
        out.push(Piece::Code(code));
    }
    Ok(out)
}

/// The code of a query with every literal, quoted name and comment blanked to one space.
fn code_only(sql: &str) -> Result<String> {
    Ok(pieces(sql)?
        .into_iter()
        .map(|p| match p {
            Piece::Code(c) => c,
            Piece::Other(_) => " ".to_string(),
        })
        .collect())
}

fn words(code: &str) -> impl Iterator<Item = &str> {
    code.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '$'))
        .filter(|w| !w.is_empty())
}

/// Refuses anything but one SELECT (or WITH ... SELECT): exit 5, naming the word.
pub fn check_read_only(sql: &str) -> Result<()> {
    let code = code_only(sql)?;
    let trimmed = code.trim().trim_end_matches(';').trim_end();
    if trimmed.contains(';') {
        return Err(Error::Refused(
            "the query holds more than one statement; query runs one SELECT".into(),
        ));
    }
    let first = words(trimmed).next().unwrap_or("").to_ascii_uppercase();
    if first != "SELECT" && first != "WITH" {
        return Err(Error::Refused(format!(
            "the query starts with {first:?}: query runs only SELECT statements"
        )));
    }
    if let Some(w) = words(trimmed).find(|w| WRITE_WORDS.contains(&w.to_ascii_uppercase().as_str()))
    {
        return Err(Error::Refused(format!(
            "the query writes or locks ({}): query runs only SELECT statements",
            w.to_ascii_uppercase()
        )));
    }
    Ok(())
}

/// A query cut at its `{table}` markers.
#[derive(Debug, Clone, PartialEq)]
pub struct Template {
    /// Text between markers (one more than markers).
    pub parts: Vec<String>,
    /// The markers' names (`accounts` or `schema.accounts`).
    pub markers: Vec<String>,
}

impl Template {
    /// Finds `{name}` markers in the query's code (never inside quotes or comments).
    pub fn parse(sql: &str) -> Result<Template> {
        let mut parts = vec![String::new()];
        let mut markers = Vec::new();
        for p in pieces(sql)? {
            match p {
                Piece::Other(t) => parts.last_mut().expect("one").push_str(&t),
                Piece::Code(c) => {
                    let mut rest = c.as_str();
                    while let Some(open) = rest.find('{') {
                        let close = rest[open..].find('}').map(|x| open + x).ok_or_else(|| {
                            Error::Usage("the query has a { without its }".into())
                        })?;
                        let name = rest[open + 1..close].trim();
                        if name.is_empty()
                            || !name
                                .chars()
                                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '.'))
                        {
                            return Err(Error::Usage(format!(
                                "{{{name}}} is not a table marker: write {{table}} or {{schema.table}}"
                            )));
                        }
                        parts.last_mut().expect("one").push_str(&rest[..open]);
                        markers.push(name.to_string());
                        parts.push(String::new());
                        rest = &rest[close + 1..];
                    }
                    parts.last_mut().expect("one").push_str(rest);
                }
            }
        }
        if markers.is_empty() {
            return Err(Error::Usage(
                "the query names no {table} marker: write {accounts} where each shard's table goes"
                    .into(),
            ));
        }
        Ok(Template { parts, markers })
    }

    /// Resolves each marker to a (logical schema, table) of function `function`: one of its
    /// sharded tables, or a global table in its schemas.
    pub fn resolve(&self, snap: &Snapshot, function: &str) -> Result<Vec<(Ident, Ident)>> {
        let func = snap.function(function)?;
        let schemas = snap.function_schemas(func.id);
        self.markers
            .iter()
            .map(|m| {
                let (schema, table) = match m.split_once('.') {
                    Some((s, t)) => (Some(s), t),
                    None => (None, m.as_str()),
                };
                let matches = |s: &str, t: &str| {
                    t.eq_ignore_ascii_case(table)
                        && schema.is_none_or(|x| x.eq_ignore_ascii_case(s))
                };
                let mut found: Vec<(String, String)> = snap
                    .tables
                    .iter()
                    .filter(|t| t.func_id == func.id && matches(&t.schema, &t.table))
                    .map(|t| (t.schema.clone(), t.table.clone()))
                    .chain(
                        snap.globals
                            .iter()
                            .filter(|g| schemas.contains(&g.schema) && matches(&g.schema, &g.table))
                            .map(|g| (g.schema.clone(), g.table.clone())),
                    )
                    .collect();
                found.dedup();
                match found.len() {
                    1 => Ok((
                        Ident::new("schema", &found[0].0)?,
                        Ident::new("table", &found[0].1)?,
                    )),
                    0 => {
                        if let Some(other) = snap
                            .tables
                            .iter()
                            .find(|t| matches(&t.schema, &t.table))
                            .and_then(|t| snap.function_by_id(t.func_id))
                        {
                            Err(Error::Usage(format!(
                                "{{{m}}} is a table of function {}, not of {function}",
                                other.name
                            )))
                        } else {
                            Err(Error::Usage(format!(
                                "{{{m}}}: function {function} has no such sharded or global table"
                            )))
                        }
                    }
                    _ => Err(Error::Usage(format!(
                        "{{{m}}} names a table in several schemas: write {{schema.{table}}}"
                    ))),
                }
            })
            .collect()
    }
}

/// How a result column merges across shards.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Merge {
    /// A GROUP BY key (or, without aggregates, a plain column).
    Key,
    /// The shards' counts are added.
    Count,
    /// The shards' sums are added.
    Sum,
    /// The least.
    Min,
    /// The greatest.
    Max,
}

/// How the result merges: one entry per select-list item; `aggregate` when any item is an
/// aggregate (rows then merge by the key columns).
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// Per column.
    pub columns: Vec<Merge>,
    /// True when rows merge by key.
    pub aggregate: bool,
}

/// The select list's top-level items.
fn select_items(code: &str) -> Vec<String> {
    let upper = code.to_ascii_uppercase();
    let Some(start) = words_at(&upper)
        .find(|(_, w)| *w == "SELECT")
        .map(|(i, _)| i + 6)
    else {
        return Vec::new();
    };
    let mut depth = 0i32;
    let mut items = Vec::new();
    let mut cur = String::new();
    let bytes = code.as_bytes();
    let mut i = start;
    while i < bytes.len() {
        let c = bytes[i] as char;
        if depth == 0 && is_word_at(&upper, i, "FROM") {
            break;
        }
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                items.push(std::mem::take(&mut cur));
                i += 1;
                continue;
            }
            _ => {}
        }
        cur.push(c);
        i += 1;
    }
    items.push(cur);
    items.into_iter().map(|s| s.trim().to_string()).collect()
}

fn words_at(code: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut out = Vec::new();
    let b = code.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'$' {
            let s = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'$') {
                i += 1;
            }
            out.push((s, &code[s..i]));
        } else {
            i += 1;
        }
    }
    out.into_iter()
}

fn is_word_at(upper: &str, i: usize, w: &str) -> bool {
    let b = upper.as_bytes();
    let boundary =
        |j: usize| j >= b.len() || !(b[j].is_ascii_alphanumeric() || b[j] == b'_' || b[j] == b'$');
    upper[i..].starts_with(w) && (i == 0 || boundary(i - 1)) && boundary(i + w.len())
}

impl Plan {
    /// Reads the select list: bare COUNT(...), SUM(...), MIN(...), MAX(...) (with an
    /// optional alias) merge; AVG, COUNT(DISTINCT ...) and aggregates inside expressions
    /// cannot be merged from per-shard results and are refused, as are HAVING and LIMIT
    /// alongside aggregates (they would apply per shard).
    pub fn of(sql: &str) -> Result<Plan> {
        let code = code_only(sql)?;
        let items = select_items(&code);
        let mut columns = Vec::new();
        for (n, item) in items.iter().enumerate() {
            let upper = item.to_ascii_uppercase();
            let calls: Vec<&str> = words_at(&upper)
                .filter(|(i, w)| upper[i + w.len()..].trim_start().starts_with('('))
                .map(|(_, w)| w)
                .collect();
            if let Some(bad) = calls.iter().find(|w| UNMERGEABLE.contains(w)) {
                return Err(Error::Usage(format!(
                    "select item {} ({item}): {bad} cannot be merged across shards; select SUM and COUNT and divide",
                    n + 1
                )));
            }
            let aggs: Vec<&&str> = calls
                .iter()
                .filter(|w| matches!(**w, "COUNT" | "SUM" | "MIN" | "MAX"))
                .collect();
            let merge = match aggs.as_slice() {
                [] => Merge::Key,
                [one] if upper.starts_with(**one) => {
                    let open = upper.find('(').expect("a call");
                    let close = matching_paren(&upper, open).ok_or_else(|| {
                        Error::Usage(format!("select item {}: unbalanced parentheses", n + 1))
                    })?;
                    let rest = upper[close + 1..].trim();
                    let alias_ok = rest.is_empty()
                        || words(rest).count() <= 2
                            && words(rest).next().is_some_and(|w| w == "AS" || words(rest).count() == 1);
                    if !alias_ok || upper[open + 1..close].trim_start().starts_with("DISTINCT") {
                        return Err(Error::Usage(format!(
                            "select item {} ({item}): only a bare COUNT, SUM, MIN or MAX (no DISTINCT, no arithmetic) can be merged across shards",
                            n + 1
                        )));
                    }
                    match **one {
                        "COUNT" => Merge::Count,
                        "SUM" => Merge::Sum,
                        "MIN" => Merge::Min,
                        _ => Merge::Max,
                    }
                }
                _ => {
                    return Err(Error::Usage(format!(
                        "select item {} ({item}): only a bare COUNT, SUM, MIN or MAX can be merged across shards",
                        n + 1
                    )))
                }
            };
            columns.push(merge);
        }
        let aggregate = columns.iter().any(|c| *c != Merge::Key);
        if aggregate {
            let upper = code.to_ascii_uppercase();
            for w in ["HAVING", "LIMIT"] {
                if words(&upper).any(|x| x == w) {
                    return Err(Error::Usage(format!(
                        "{w} with aggregates would apply on each shard before the merge: leave it out"
                    )));
                }
            }
        }
        Ok(Plan { columns, aggregate })
    }
}

fn matching_paren(s: &str, open: usize) -> Option<usize> {
    let mut depth = 0;
    for (i, c) in s[open..].char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(open + i);
                }
            }
            _ => {}
        }
    }
    None
}

/// A number read from a server's text: integer or decimal, exactly.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Decimal {
    mantissa: i128,
    scale: u32,
}

impl Decimal {
    fn parse(text: &str) -> Option<Decimal> {
        let t = text.trim();
        let (int, frac) = t.split_once('.').unwrap_or((t, ""));
        if frac.len() > 30 || !frac.chars().all(|c| c.is_ascii_digit()) {
            return None;
        }
        let digits = format!("{int}{frac}");
        let mantissa = digits.parse::<i128>().ok()?;
        Some(Decimal {
            mantissa,
            scale: frac.len() as u32,
        })
    }

    fn rescale(self, scale: u32) -> Option<i128> {
        self.mantissa
            .checked_mul(10i128.checked_pow(scale - self.scale)?)
    }

    fn add(self, o: Decimal) -> Option<Decimal> {
        let scale = self.scale.max(o.scale);
        Some(Decimal {
            mantissa: self.rescale(scale)?.checked_add(o.rescale(scale)?)?,
            scale,
        })
    }

    fn cmp(self, o: Decimal) -> Option<Ordering> {
        let scale = self.scale.max(o.scale);
        Some(self.rescale(scale)?.cmp(&o.rescale(scale)?))
    }

    fn text(self) -> String {
        if self.scale == 0 {
            return self.mantissa.to_string();
        }
        let neg = self.mantissa < 0;
        let digits = format!(
            "{:0>width$}",
            self.mantissa.unsigned_abs(),
            width = self.scale as usize + 1
        );
        let (i, f) = digits.split_at(digits.len() - self.scale as usize);
        format!("{}{i}.{f}", if neg { "-" } else { "" })
    }
}

/// A result cell: NULL or the server's text.
pub type Cell = Option<String>;

fn cell(v: &Value) -> Cell {
    match v {
        Value::NULL => None,
        Value::Bytes(b) => Some(String::from_utf8_lossy(b).into_owned()),
        Value::Int(i) => Some(i.to_string()),
        Value::UInt(u) => Some(u.to_string()),
        Value::Float(f) => Some(f.to_string()),
        Value::Double(d) => Some(d.to_string()),
        other => Some(other.as_sql(true).trim_matches('\'').to_string()),
    }
}

fn compare_cells(a: &Cell, b: &Cell) -> Ordering {
    match (a, b) {
        (None, None) => Ordering::Equal,
        (None, _) => Ordering::Less,
        (_, None) => Ordering::Greater,
        (Some(x), Some(y)) => match (Decimal::parse(x), Decimal::parse(y)) {
            (Some(p), Some(q)) => p.cmp(q).unwrap_or(Ordering::Equal),
            _ => match (x.parse::<f64>(), y.parse::<f64>()) {
                (Ok(p), Ok(q)) => p.partial_cmp(&q).unwrap_or(Ordering::Equal),
                _ => x.as_bytes().cmp(y.as_bytes()),
            },
        },
    }
}

fn merge_cell(kind: Merge, acc: &mut Cell, v: &Cell) -> Result<()> {
    let Some(new) = v else { return Ok(()) };
    let Some(cur) = acc.as_ref() else {
        *acc = Some(new.clone());
        return Ok(());
    };
    *acc = Some(match kind {
        Merge::Count | Merge::Sum => match (Decimal::parse(cur), Decimal::parse(new)) {
            (Some(a), Some(b)) => a
                .add(b)
                .ok_or_else(|| Error::Usage("a merged SUM overflows".into()))?
                .text(),
            _ => match (cur.parse::<f64>(), new.parse::<f64>()) {
                (Ok(a), Ok(b)) => (a + b).to_string(),
                _ => return Err(Error::Usage(format!("cannot add {cur:?} and {new:?}"))),
            },
        },
        Merge::Min if compare_cells(v, acc) == Ordering::Less => new.clone(),
        Merge::Max if compare_cells(v, acc) == Ordering::Greater => new.clone(),
        _ => cur.clone(),
    });
    Ok(())
}

/// Merges the rows of every shard by their key columns (all rows of the same keys are one
/// group); groups in key order.
pub fn merge_rows(plan: &Plan, rows: Vec<Vec<Cell>>) -> Result<Vec<Vec<Cell>>> {
    let keys: Vec<usize> = (0..plan.columns.len())
        .filter(|i| plan.columns[*i] == Merge::Key)
        .collect();
    let mut groups: Vec<Vec<Cell>> = Vec::new();
    let mut index: std::collections::HashMap<Vec<Cell>, usize> = std::collections::HashMap::new();
    for row in rows {
        let key: Vec<Cell> = keys.iter().map(|i| row[*i].clone()).collect();
        match index.get(&key) {
            Some(&g) => {
                for (i, kind) in plan.columns.iter().enumerate() {
                    if *kind != Merge::Key {
                        merge_cell(*kind, &mut groups[g][i], &row[i])?;
                    }
                }
            }
            None => {
                index.insert(key, groups.len());
                groups.push(row);
            }
        }
    }
    groups.sort_by(|a, b| {
        keys.iter()
            .map(|i| compare_cells(&a[*i], &b[*i]))
            .find(|o| *o != Ordering::Equal)
            .unwrap_or(Ordering::Equal)
    });
    // COUNT over no row at all is 0 on every shard: an empty group keeps its zero.
    Ok(groups)
}

/// One shard's part of the answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ShardPart {
    /// Shard id.
    pub shard: u32,
    /// The node that answered for the shard.
    pub node: String,
    /// Rows it returned.
    pub rows: u64,
    /// How long it took.
    pub elapsed_ms: u64,
}

/// The merged answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Answer {
    /// The function.
    pub function: String,
    /// Column names.
    pub columns: Vec<String>,
    /// Whether each column is numeric (JSON prints those as numbers).
    #[serde(skip)]
    pub numeric: Vec<bool>,
    /// How each column merged.
    pub merge: Vec<Merge>,
    /// True when aggregates were merged by key.
    pub aggregated: bool,
    /// Rows (with the shard id first when not aggregated).
    #[serde(skip)]
    pub rows: Vec<Vec<Cell>>,
    /// Each shard's part.
    pub shards: Vec<ShardPart>,
    /// The shards whose rows were filtered by their ownership (a prune pending: each still
    /// holds rows it no longer owns, which would otherwise count twice). Absent when none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub owned_rows_only: Vec<u32>,
}

fn is_numeric(t: mysql::consts::ColumnType) -> bool {
    use mysql::consts::ColumnType::*;
    matches!(
        t,
        MYSQL_TYPE_TINY
            | MYSQL_TYPE_SHORT
            | MYSQL_TYPE_LONG
            | MYSQL_TYPE_INT24
            | MYSQL_TYPE_LONGLONG
            | MYSQL_TYPE_DECIMAL
            | MYSQL_TYPE_NEWDECIMAL
            | MYSQL_TYPE_FLOAT
            | MYSQL_TYPE_DOUBLE
            | MYSQL_TYPE_YEAR
    )
}

/// What a shard's query thread reports, in the order it happens.
enum Msg {
    Columns {
        names: Vec<String>,
        numeric: Vec<bool>,
    },
    Row {
        shard: u32,
        cells: Vec<Cell>,
    },
    Done {
        shard: u32,
        rows: u64,
        elapsed_ms: u64,
    },
    Failed(Error),
}

/// What a streamed query hands its caller as the shards answer.
#[derive(Debug)]
pub enum Event<'a> {
    /// The result's columns (`shard` first), once, before the first row.
    Columns {
        /// The column names, `shard` first.
        names: &'a [String],
        /// Whether each is numeric.
        numeric: &'a [bool],
    },
    /// One row of one shard, as soon as that shard sent it.
    Row {
        /// The shard it came from.
        shard: u32,
        /// Its cells (without the shard).
        cells: &'a [Cell],
    },
    /// A shard has sent all its rows.
    ShardDone(&'a ShardPart),
}

/// The shards that may hold rows they no longer own, from the operations not finished
/// yet: every shard of the function of a split, merge or key move under way (after a split's flip
/// both halves hold the whole key space until both prunes finish, which may take hours;
/// a merge copies the retired shard's rows into the survivor before its flip), and a
/// shard whose prune is under way. The journal records every one of them: `shard add`
/// refuses to give away keys that hold rows, and a split after its flip can only go
/// forward to its prunes.
pub fn unpruned_shards(snap: &Snapshot, ops: &[OperationSummary]) -> BTreeSet<u32> {
    let mut out = BTreeSet::new();
    for op in ops {
        let Some(shard) = op.shard_id.and_then(|id| snap.shard(id).ok()) else {
            continue;
        };
        match op.kind {
            // A key move copies the moving keys' rows into the receiver before its flip, and
            // the donor keeps them after it until its prune.
            OpKind::Split | OpKind::Merge | OpKind::MoveKeys => {
                out.extend(snap.shards_of(shard.func_id).map(|s| s.id));
            }
            OpKind::Prune => {
                out.insert(shard.id);
            }
            OpKind::Move | OpKind::Lock | OpKind::Availability => {}
        }
    }
    out
}

/// What a per-key function's unfinished key moves say of its shards' rows, by shard: the
/// keys whose rows a shard holds without owning them (the receiver's copies before the
/// flip, the donor's rows after it until its prune), empty for a shard that owns every
/// row it holds. Read from the journal's plans and, for the flip, the keys' rows.
pub fn per_key_moves(
    dir: &mut crate::directory::Directory,
    snap: &Snapshot,
    ops: &[OperationSummary],
) -> Result<BTreeMap<u32, Vec<crate::directory::Key>>> {
    let mut out: BTreeMap<u32, Vec<crate::directory::Key>> = BTreeMap::new();
    for op in ops.iter().filter(|o| o.kind == OpKind::MoveKeys) {
        let Some(plan) = dir
            .operation(op.id)?
            .params::<serde_json::Value>()?
            .key_move
        else {
            continue;
        };
        let crate::directory::KeyMoveMapping::Keys { keys } = &plan.mapping else {
            continue;
        };
        let flipped = match keys.first() {
            Some(k) => dir.key_shard(plan.func_id, k)? == Some(plan.receiver),
            None => continue,
        };
        for s in snap.shards_of(plan.func_id) {
            out.entry(s.id).or_default();
        }
        let holder = if flipped { plan.donor } else { plan.receiver };
        out.entry(holder).or_default().extend(keys.iter().cloned());
    }
    Ok(out)
}

/// The shards whose rows a query reads through their ownership.
#[derive(Debug, Clone, Default)]
pub struct Unpruned {
    /// Shards that may hold rows they no longer own ([`unpruned_shards`]).
    pub shards: BTreeSet<u32>,
    /// Per-key shards under an unfinished key move ([`per_key_moves`]); a per-key shard
    /// among `shards` but not here is refused (no condition on its rows says which it
    /// owns).
    pub per_key: BTreeMap<u32, Vec<crate::directory::Key>>,
}

impl From<&BTreeSet<u32>> for Unpruned {
    fn from(shards: &BTreeSet<u32>) -> Unpruned {
        Unpruned {
            shards: shards.clone(),
            per_key: BTreeMap::new(),
        }
    }
}

/// The rows of a per-key shard's `column` among `keys` (none when empty: the condition a
/// query leaves out of the shard's rows).
fn per_key_not_owned(
    column: &Ident,
    key_type: crate::directory::KeyType,
    keys: &[crate::directory::Key],
) -> crate::server::statements::Condition {
    use crate::server::statements::{self, KeyKind, NotOwned};
    if keys.is_empty() {
        return statements::not_owned(column, KeyKind::Int, &NotOwned::Nothing);
    }
    let kind = match key_type {
        crate::directory::KeyType::Int => KeyKind::Int,
        crate::directory::KeyType::String => KeyKind::Bytes,
    };
    let values: Vec<Value> = keys
        .iter()
        .map(|k| match k {
            crate::directory::Key::Int(i) => Value::Int(*i),
            crate::directory::Key::Str(s) => Value::Bytes(s.as_bytes().to_vec()),
        })
        .collect();
    statements::owned(&statements::not_owned(
        column,
        kind,
        &NotOwned::NotIn(values),
    ))
}

/// A query that passed every check, resolved against the directory.
struct Prepared {
    template: Template,
    logical: Vec<(Ident, Ident)>,
    plan: Plan,
    shards: Vec<crate::directory::Shard>,
    /// For each shard that may hold rows it no longer owns: per marker, the condition
    /// matching them (None for a global table).
    not_owned: BTreeMap<u32, Vec<Option<crate::server::statements::Condition>>>,
}

fn prepare(snap: &Snapshot, function: &str, sql: &str, unpruned: &Unpruned) -> Result<Prepared> {
    check_read_only(sql)?;
    let template = Template::parse(sql)?;
    let logical = template.resolve(snap, function)?;
    let plan = Plan::of(sql)?;
    let func = snap.function(function)?;
    let shards: Vec<_> = snap
        .shards_of(func.id)
        .filter(|s| s.state != crate::directory::ShardState::Offline)
        .cloned()
        .collect();
    if shards.is_empty() {
        return Err(Error::Usage(format!(
            "function {function} has no serving shard"
        )));
    }
    // An answer without a shard's rows would be wrong without a sign: refused, not
    // skipped. Shards closed to writes only are read as any other.
    let closed: Vec<u32> = shards
        .iter()
        .filter(|s| !s.availability.allows(crate::directory::Access::Read))
        .map(|s| s.id)
        .collect();
    if let Some(&first) = closed.first() {
        let ids: Vec<String> = closed.iter().map(u32::to_string).collect();
        return Err(Error::Unavailable {
            shard: first,
            detail: format!(
                "marked unavailable by the operator, and query reads every shard of {function} (unavailable: {}); nothing was sent",
                ids.join(", ")
            ),
        });
    }
    let columns: Vec<Option<Ident>> = logical
        .iter()
        .map(|(schema, table)| {
            snap.tables
                .iter()
                .find(|t| {
                    t.func_id == func.id
                        && t.schema.eq_ignore_ascii_case(schema.as_str())
                        && t.table.eq_ignore_ascii_case(table.as_str())
                })
                .map(|t| Ident::new("column", &t.column))
                .transpose()
        })
        .collect::<Result<_>>()?;
    let mut not_owned = BTreeMap::new();
    if columns.iter().any(Option::is_some) {
        for shard in shards.iter().filter(|s| unpruned.shards.contains(&s.id)) {
            let per_key = unpruned
                .per_key
                .get(&shard.id)
                .filter(|_| func.sharding_type == crate::directory::ShardingType::Key);
            let conditions = columns
                .iter()
                .map(|c| {
                    c.as_ref()
                        .map(|c| match per_key {
                            Some(keys) => Ok(per_key_not_owned(c, func.key_type, keys)),
                            None => crate::prune::predicate::not_owned(snap, shard, c),
                        })
                        .transpose()
                })
                .collect::<Result<Vec<_>>>()?;
            not_owned.insert(shard.id, conditions);
        }
    }
    Ok(Prepared {
        template,
        logical,
        plan,
        shards,
        not_owned,
    })
}

/// How many connections `query` opens to one node at most: a node's shards are queried
/// over these, one after another on each, so thousands of shards on dozens of nodes cost
/// each node a few connections rather than one per shard.
pub const CONNECTIONS_PER_NODE: usize = 4;

/// One connection to `node` for its shards' queries: the statement time limit set, the
/// session read-only.
fn connect_for_query(inv: &Inventory, node: &str, secs: u64) -> Result<Server> {
    let mut spec = ConnectSpec::for_node(inv, inv.node(node)?)?;
    spec.read_timeout = Duration::from_secs(secs + 2);
    spec.connect_timeout = spec.connect_timeout.min(Duration::from_secs(secs + 2));
    let mut server = Server::connect(&spec)?;
    server.exec(&reports::statement_time_limit(server.flavor(), secs))?;
    // Every statement of the session read-only: the server refuses any write, each
    // shard's SELECT in a read-only transaction of its own (autocommit) at no extra round.
    server.exec(&crate::server::statements::session_read_only())?;
    Ok(server)
}

/// One shard's query over `server` (a connection to its node, read-only): one statement,
/// its own transaction, rows sent as they come.
fn query_shard(
    server: &mut Server,
    p: &Prepared,
    shard: &crate::directory::Shard,
    secs: u64,
    tx: &std::sync::mpsc::Sender<Msg>,
) -> Result<()> {
    let started = Instant::now();
    let filters = p.not_owned.get(&shard.id);
    let tables: Vec<reports::MarkerTable> = p
        .logical
        .iter()
        .enumerate()
        .map(|(i, (s, t))| {
            Ok(reports::MarkerTable {
                schema: Ident::new("schema", &shard_schema(s.as_str(), shard.id))?,
                table: t.clone(),
                not_owned: filters.and_then(|f| f.get(i).cloned().flatten()),
            })
        })
        .collect::<Result<_>>()?;
    let (st, values) = reports::shard_query_owned(&p.template.parts, &tables);
    if let Some(set) = reports::owned_variables(&values) {
        server.exec(&set)?;
    }
    let mut rows = 0u64;
    server
        .stream_text(
            &st,
            |cols| {
                let _ = tx.send(Msg::Columns {
                    names: cols.iter().map(|c| c.name_str().into_owned()).collect(),
                    numeric: cols.iter().map(|c| is_numeric(c.column_type())).collect(),
                });
            },
            |row| {
                rows += 1;
                let cells = row.unwrap().iter().map(cell).collect();
                // A receiver gone (the caller stopped) ends the stream.
                tx.send(Msg::Row {
                    shard: shard.id,
                    cells,
                })
                .map_err(|_| Error::Interrupted)
            },
        )
        .map_err(|e| {
            let text = e.to_string();
            if text.contains("timed out")
                || text.contains("error 1969")
                || text.contains("error 3024")
            {
                Error::Timeout(format!(
                    "shard {} on {}: no answer within {secs} s",
                    shard.id, shard.node
                ))
            } else if matches!(e, Error::Interrupted) {
                e
            } else {
                Error::server(&shard.node, format!("shard {}: {text}", shard.id))
            }
        })?;
    let _ = tx.send(Msg::Done {
        shard: shard.id,
        rows,
        elapsed_ms: started.elapsed().as_millis() as u64,
    });
    Ok(())
}

/// One of a node's workers: one connection, the node's shards taken from `queue` one at
/// a time until it is empty or `stop` is set (a failure anywhere: the answer is
/// incomplete, so no more shard is asked).
fn node_worker(
    inv: &Inventory,
    p: &Prepared,
    node: &str,
    queue: &std::sync::Mutex<Vec<&crate::directory::Shard>>,
    stop: &std::sync::atomic::AtomicBool,
    secs: u64,
    tx: &std::sync::mpsc::Sender<Msg>,
) -> Result<()> {
    let mut server = None;
    loop {
        if stop.load(std::sync::atomic::Ordering::Relaxed) {
            return Ok(());
        }
        let Some(shard) = queue.lock().expect("query queue poisoned").pop() else {
            return Ok(());
        };
        let server = match &mut server {
            Some(s) => s,
            None => server.insert(connect_for_query(inv, node, secs)?),
        };
        query_shard(server, p, shard, secs, tx)?;
    }
}

/// Runs the query on every shard and hands each message to `on` as it arrives: every node
/// at once, each over at most [`CONNECTIONS_PER_NODE`] connections. The first failure is
/// returned once every worker has ended (each query is bounded by the timeout).
fn fan_out(
    inv: &Inventory,
    p: &Prepared,
    timeout: Duration,
    mut on: impl FnMut(Msg) -> Result<()>,
) -> Result<()> {
    let secs = timeout.as_secs().max(1);
    let mut by_node: BTreeMap<&str, Vec<&crate::directory::Shard>> = BTreeMap::new();
    for shard in &p.shards {
        by_node.entry(shard.node.as_str()).or_default().push(shard);
    }
    let queues: Vec<(&str, usize, std::sync::Mutex<Vec<_>>)> = by_node
        .into_iter()
        .map(|(node, mut shards)| {
            // Popped from the end: the lowest shard first.
            shards.reverse();
            let workers = shards.len().min(CONNECTIONS_PER_NODE);
            (node, workers, std::sync::Mutex::new(shards))
        })
        .collect();
    let stop = std::sync::atomic::AtomicBool::new(false);
    let (tx, rx) = std::sync::mpsc::channel::<Msg>();
    std::thread::scope(|scope| {
        for (node, workers, queue) in &queues {
            for _ in 0..*workers {
                let tx = tx.clone();
                let stop = &stop;
                scope.spawn(move || {
                    if let Err(e) = node_worker(inv, p, node, queue, stop, secs, &tx) {
                        stop.store(true, std::sync::atomic::Ordering::Relaxed);
                        let _ = tx.send(Msg::Failed(e));
                    }
                });
            }
        }
        drop(tx);
        let mut first_error = None;
        for msg in rx {
            match msg {
                Msg::Failed(e) => {
                    stop.store(true, std::sync::atomic::Ordering::Relaxed);
                    first_error.get_or_insert(e);
                }
                // After a failure the rest is drained, not shown: the answer is incomplete.
                _ if first_error.is_some() => {}
                other => {
                    if let Err(e) = on(other) {
                        stop.store(true, std::sync::atomic::Ordering::Relaxed);
                        first_error.get_or_insert(e);
                    }
                }
            }
        }
        first_error.map_or(Ok(()), Err)
    })
}

fn empty_answer(function: &str, p: &Prepared) -> Answer {
    Answer {
        function: function.to_string(),
        columns: Vec::new(),
        numeric: Vec::new(),
        merge: p.plan.columns.clone(),
        aggregated: p.plan.aggregate,
        rows: Vec::new(),
        shards: Vec::new(),
        owned_rows_only: p.not_owned.keys().copied().collect(),
    }
}

fn shard_node(p: &Prepared, shard: u32) -> String {
    p.shards
        .iter()
        .find(|s| s.id == shard)
        .map(|s| s.node.clone())
        .unwrap_or_default()
}

/// Runs `sql` on every serving shard of `function` at once, each in a read-only
/// transaction with a server-side statement limit and a client read timeout of
/// `timeout`, and merges the rows. Nothing is sent before the query passed every check.
pub fn run(
    inv: &Inventory,
    snap: &Snapshot,
    function: &str,
    sql: &str,
    timeout: Duration,
    unpruned: &BTreeSet<u32>,
) -> Result<Answer> {
    run_with(inv, snap, function, sql, timeout, &Unpruned::from(unpruned))
}

/// [`run`], a per-key function's shards under a key move read through what
/// [`per_key_moves`] says of them.
pub fn run_with(
    inv: &Inventory,
    snap: &Snapshot,
    function: &str,
    sql: &str,
    timeout: Duration,
    unpruned: &Unpruned,
) -> Result<Answer> {
    let p = prepare(snap, function, sql, unpruned)?;
    let mut answer = empty_answer(function, &p);
    let mut all = Vec::new();
    fan_out(inv, &p, timeout, |msg| {
        match msg {
            Msg::Columns { names, numeric } => {
                if answer.columns.is_empty() && !names.is_empty() {
                    answer.columns = names;
                    answer.numeric = numeric;
                }
            }
            Msg::Row { shard, cells } => {
                if p.plan.aggregate {
                    all.push(cells);
                } else {
                    let mut r = vec![Some(shard.to_string())];
                    r.extend(cells);
                    all.push(r);
                }
            }
            Msg::Done {
                shard,
                rows,
                elapsed_ms,
            } => answer.shards.push(ShardPart {
                shard,
                node: shard_node(&p, shard),
                rows,
                elapsed_ms,
            }),
            Msg::Failed(e) => return Err(e),
        }
        Ok(())
    })?;
    answer.shards.sort_by_key(|s| s.shard);
    if p.plan.aggregate {
        if !answer.columns.is_empty() && answer.columns.len() != p.plan.columns.len() {
            return Err(Error::Usage(format!(
                "the query returns {} columns, its select list reads as {}: write each aggregate as its own item",
                answer.columns.len(),
                p.plan.columns.len()
            )));
        }
        answer.rows = merge_rows(&p.plan, all)?;
    } else {
        // Rows grouped by shard, in shard order, as before the stream existed.
        all.sort_by_key(|r| r[0].as_deref().and_then(|s| s.parse::<u32>().ok()));
        answer.columns.insert(0, "shard".into());
        answer.numeric.insert(0, true);
        answer.rows = all;
    }
    Ok(answer)
}

/// Runs a plain (non-aggregate) query on every serving shard at once and hands `sink`
/// each row as soon as its shard sends it, each shard's rows in the order that shard
/// returns them, the shards interleaved as they answer. Returns the answer without rows
/// (columns and each shard's part). A query with aggregates is refused here: its rows
/// can only be merged once every shard has answered ([`run`]).
pub fn stream(
    inv: &Inventory,
    snap: &Snapshot,
    function: &str,
    sql: &str,
    timeout: Duration,
    unpruned: &BTreeSet<u32>,
    sink: &mut dyn FnMut(Event<'_>),
) -> Result<Answer> {
    stream_with(
        inv,
        snap,
        function,
        sql,
        timeout,
        &Unpruned::from(unpruned),
        sink,
    )
}

/// [`stream`], a per-key function's shards under a key move read through what
/// [`per_key_moves`] says of them.
pub fn stream_with(
    inv: &Inventory,
    snap: &Snapshot,
    function: &str,
    sql: &str,
    timeout: Duration,
    unpruned: &Unpruned,
    sink: &mut dyn FnMut(Event<'_>),
) -> Result<Answer> {
    let p = prepare(snap, function, sql, unpruned)?;
    if p.plan.aggregate {
        return Err(Error::Internal(
            "a query with aggregates cannot stream: its rows merge at the end".into(),
        ));
    }
    let mut answer = empty_answer(function, &p);
    let mut announced = false;
    fan_out(inv, &p, timeout, |msg| {
        match msg {
            Msg::Columns { names, numeric } => {
                if !announced {
                    announced = true;
                    answer.columns = std::iter::once("shard".to_string()).chain(names).collect();
                    answer.numeric = std::iter::once(true).chain(numeric).collect();
                    sink(Event::Columns {
                        names: &answer.columns,
                        numeric: &answer.numeric,
                    });
                }
            }
            Msg::Row { shard, cells } => sink(Event::Row {
                shard,
                cells: &cells,
            }),
            Msg::Done {
                shard,
                rows,
                elapsed_ms,
            } => {
                let part = ShardPart {
                    shard,
                    node: shard_node(&p, shard),
                    rows,
                    elapsed_ms,
                };
                sink(Event::ShardDone(&part));
                answer.shards.push(part);
            }
            Msg::Failed(e) => return Err(e),
        }
        Ok(())
    })?;
    answer.shards.sort_by_key(|s| s.shard);
    if answer.columns.is_empty() {
        answer.columns.push("shard".into());
        answer.numeric.push(true);
    }
    Ok(answer)
}

/// One row as JSON: numbers as numbers (where `numeric` says so), NULL as null.
pub fn row_json(cells: &[Cell], numeric: &[bool]) -> serde_json::Value {
    serde_json::Value::Array(
        cells
            .iter()
            .enumerate()
            .map(|(i, c)| match c {
                None => serde_json::Value::Null,
                Some(t) if numeric.get(i).copied().unwrap_or(false) => {
                    serde_json::from_str::<serde_json::Number>(t)
                        .map(serde_json::Value::Number)
                        .unwrap_or_else(|_| serde_json::Value::String(t.clone()))
                }
                Some(t) => serde_json::Value::String(t.clone()),
            })
            .collect(),
    )
}

/// An answer's rows as JSON: numbers as numbers, NULL as null.
pub fn rows_json(a: &Answer) -> serde_json::Value {
    serde_json::Value::Array(a.rows.iter().map(|r| row_json(r, &a.numeric)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_are_refused_and_selects_pass() {
        check_read_only("SELECT * FROM {a} WHERE note = 'update; drop'").unwrap();
        check_read_only("  select `delete` from {a} -- insert\n").unwrap();
        check_read_only("WITH x AS (SELECT 1) SELECT * FROM x, {a};").unwrap();
        check_read_only("SELECT `load`, CAST(n AS CHAR CHARACTER SET utf8mb4) FROM {a}").unwrap();
        for (sql, word) in [
            ("UPDATE {a} SET x = 1", "\"UPDATE\""),
            ("DELETE FROM {a}", "\"DELETE\""),
            ("SELECT * FROM {a} FOR UPDATE", "(UPDATE)"),
            ("SELECT * INTO OUTFILE '/tmp/x' FROM {a}", "(INTO)"),
            ("SELECT 1; DROP TABLE {a}", "more than one statement"),
            ("WITH x AS (SELECT 1) DELETE FROM {a}", "(DELETE)"),
            ("SELECT * FROM {a} LOCK IN SHARE MODE", "(LOCK)"),
            ("/* hi */ INSERT INTO {a} VALUES (1)", "\"INSERT\""),
        ] {
            let e = check_read_only(sql).unwrap_err();
            assert_eq!(e.exit_code(), crate::ExitCode::Refused);
            assert!(e.to_string().contains(word), "{sql}: {e}");
        }
    }

    #[test]
    fn markers_outside_quotes_only() {
        let t = Template::parse("SELECT '{x}' FROM {accounts} a JOIN {app.b} USING (id)").unwrap();
        assert_eq!(t.markers, vec!["accounts", "app.b"]);
        assert_eq!(
            t.parts,
            vec!["SELECT '{x}' FROM ", " a JOIN ", " USING (id)"]
        );
        assert!(Template::parse("SELECT 1 FROM accounts")
            .unwrap_err()
            .to_string()
            .contains("no {table} marker"));
        assert!(Template::parse("SELECT 1 FROM {a b}").is_err());
    }

    #[test]
    fn plans_merge_bare_aggregates_only() {
        let p = Plan::of("SELECT gender, COUNT(*) AS n, SUM(salary) total, MIN(x), MAX(`y`) FROM {t} GROUP BY gender").unwrap();
        assert_eq!(
            p.columns,
            vec![Merge::Key, Merge::Count, Merge::Sum, Merge::Min, Merge::Max]
        );
        assert!(p.aggregate);
        assert!(!Plan::of("SELECT a, b FROM {t} LIMIT 3").unwrap().aggregate);
        for (sql, why) in [
            ("SELECT AVG(x) FROM {t}", "AVG cannot be merged"),
            ("SELECT COUNT(DISTINCT x) FROM {t}", "no DISTINCT"),
            ("SELECT SUM(x) / COUNT(*) FROM {t}", "only a bare"),
            (
                "SELECT g, COUNT(*) FROM {t} GROUP BY g HAVING COUNT(*) > 1",
                "HAVING",
            ),
        ] {
            let e = Plan::of(sql).unwrap_err().to_string();
            assert!(e.contains(why), "{sql}: {e}");
        }
    }

    #[test]
    fn merging_adds_counts_and_sums_and_keeps_extremes() {
        let p = Plan {
            columns: vec![Merge::Key, Merge::Count, Merge::Sum, Merge::Min, Merge::Max],
            aggregate: true,
        };
        let s = |x: &str| Some(x.to_string());
        let rows = vec![
            vec![s("M"), s("2"), s("10.50"), s("3"), s("9")],
            vec![s("F"), s("1"), s("1.5"), s("-2"), s("4")],
            vec![s("M"), s("5"), s("0.25"), s("10"), s("100")],
            vec![s("F"), s("0"), None, None, None],
        ];
        let m = merge_rows(&p, rows).unwrap();
        assert_eq!(
            m,
            vec![
                vec![s("F"), s("1"), s("1.5"), s("-2"), s("4")],
                vec![s("M"), s("7"), s("10.75"), s("3"), s("100")],
            ]
        );
        assert_eq!(
            Decimal::parse("-0.05")
                .unwrap()
                .add(Decimal::parse("0.01").unwrap())
                .unwrap()
                .text(),
            "-0.04"
        );
    }
}
