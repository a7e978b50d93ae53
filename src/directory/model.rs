//! The directory's content as plain data: what the store loads and the router and
//! planners read. No I/O here.

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::fmt;

/// How a partition function maps keys to shards.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum ShardingType {
    /// Ranges of keys, each starting at a lower bound.
    Range,
    /// Consistent hashing: points on an MD5 ring.
    Hash,
    /// Explicit lists of values.
    List,
    /// One directory row per key (`key_shards`), read key by key: a key without a row is
    /// not mapped until it is assigned ([`super::Directory::assign_key`]).
    Key,
}

impl ShardingType {
    /// The name stored in the directory.
    pub fn as_sql(&self) -> &'static str {
        match self {
            ShardingType::Range => "RANGE",
            ShardingType::Hash => "HASH",
            ShardingType::List => "LIST",
            ShardingType::Key => "KEY",
        }
    }

    /// Reads the stored name.
    pub fn from_sql(s: &str) -> Result<Self> {
        match s {
            "RANGE" => Ok(ShardingType::Range),
            "HASH" => Ok(ShardingType::Hash),
            "LIST" => Ok(ShardingType::List),
            "KEY" => Ok(ShardingType::Key),
            other => Err(Error::Config(format!(
                "unknown sharding type {other:?} in the directory"
            ))),
        }
    }
}

/// The type of a function's sharding key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum KeyType {
    /// A signed 64-bit integer.
    Int,
    /// A string of up to 255 bytes, compared byte by byte.
    String,
}

impl KeyType {
    /// The name stored in the directory.
    pub fn as_sql(&self) -> &'static str {
        match self {
            KeyType::Int => "INT",
            KeyType::String => "STRING",
        }
    }

    /// Reads the stored name.
    pub fn from_sql(s: &str) -> Result<Self> {
        match s {
            "INT" => Ok(KeyType::Int),
            "STRING" => Ok(KeyType::String),
            other => Err(Error::Config(format!(
                "unknown key type {other:?} in the directory"
            ))),
        }
    }

    /// Parses a key given as text, refusing one of the wrong type.
    pub fn parse(&self, text: &str) -> Result<Key> {
        match self {
            KeyType::Int => text.trim().parse::<i64>().map(Key::Int).map_err(|_| {
                Error::Usage(format!(
                    "key {text:?} is not an integer, as this function's keys are"
                ))
            }),
            KeyType::String => {
                if text.len() > 255 {
                    Err(Error::Usage(format!(
                        "key {text:?} is longer than 255 bytes"
                    )))
                } else {
                    Ok(Key::Str(text.to_string()))
                }
            }
        }
    }
}

/// A sharding key value.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Key {
    /// An integer key.
    Int(i64),
    /// A string key.
    Str(String),
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Key::Int(i) => write!(f, "{i}"),
            Key::Str(s) => f.write_str(s),
        }
    }
}

/// A point on the hash ring: an MD5 digest, ordered as a 128-bit number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RingPoint(pub u128);

impl RingPoint {
    /// The MD5 of `text`, as MySQL's `MD5()` computes it.
    pub fn md5(text: &str) -> Self {
        use md5::{Digest, Md5};
        let d: [u8; 16] = Md5::digest(text.as_bytes()).into();
        RingPoint(u128::from_be_bytes(d))
    }

    /// The point a key hashes to: MD5 of its text form.
    pub fn of_key(key: &Key) -> Self {
        Self::md5(&key.to_string())
    }

    /// 32 lowercase hex digits, the form stored (and the form `MD5()` returns, so the
    /// chapter's SQL lookup `MD5(key) > hash` works on the stored table).
    pub fn to_hex(&self) -> String {
        format!("{:032x}", self.0)
    }

    /// Reads 32 hex digits.
    pub fn from_hex(text: &str) -> Result<Self> {
        let t = text.trim();
        if t.len() != 32 {
            return Err(Error::Usage(format!(
                "ring point {text:?} must be 32 hex digits"
            )));
        }
        u128::from_str_radix(t, 16)
            .map(RingPoint)
            .map_err(|_| Error::Usage(format!("ring point {text:?} is not hexadecimal")))
    }
}

impl fmt::Display for RingPoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

impl Serialize for RingPoint {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_hex())
    }
}

/// Lifecycle state of a shard.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ShardState {
    /// Serving.
    Online,
    /// Being moved or split; lookups still answer, writers should expect a retry.
    Moving,
    /// Fenced: writes are refused.
    ReadOnly,
    /// Not serving (being created or retired).
    Offline,
}

impl ShardState {
    /// Every state, in the order declared.
    pub const ALL: [ShardState; 4] = [
        ShardState::Online,
        ShardState::Moving,
        ShardState::ReadOnly,
        ShardState::Offline,
    ];

    /// The name stored in the directory.
    pub fn as_sql(&self) -> &'static str {
        match self {
            ShardState::Online => "online",
            ShardState::Moving => "moving",
            ShardState::ReadOnly => "read_only",
            ShardState::Offline => "offline",
        }
    }

    /// Reads the stored name.
    pub fn from_sql(s: &str) -> Result<Self> {
        match s {
            "online" => Ok(ShardState::Online),
            "moving" => Ok(ShardState::Moving),
            "read_only" => Ok(ShardState::ReadOnly),
            "offline" => Ok(ShardState::Offline),
            other => Err(Error::Config(format!(
                "unknown shard state {other:?} in the directory"
            ))),
        }
    }
}

/// Whether the operator lets applications reach a shard (`shardctl shard
/// set-availability`), for maintenance or while its host is down. Independent of
/// [`ShardState`], which is shardctl's own account of an operation: an operator's
/// availability stays as set across moves and splits until the operator sets it again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Availability {
    /// Reads and writes go to the shard.
    Available,
    /// Reads go to the shard; routers refuse writes before sending them.
    NoWrites,
    /// Neither reads nor writes: routers refuse both, `query` refuses a function with
    /// such a shard.
    Unavailable,
}

impl Availability {
    /// Every value, in the order of the directory's ENUM.
    pub const ALL: [Availability; 3] = [
        Availability::Available,
        Availability::NoWrites,
        Availability::Unavailable,
    ];

    /// The name stored in the directory (`locations.availability`).
    pub fn as_sql(&self) -> &'static str {
        match self {
            Availability::Available => "available",
            Availability::NoWrites => "no_writes",
            Availability::Unavailable => "unavailable",
        }
    }

    /// Reads the stored name.
    pub fn from_sql(s: &str) -> Result<Self> {
        Self::ALL
            .into_iter()
            .find(|a| a.as_sql() == s)
            .ok_or_else(|| {
                Error::Config(format!("unknown shard availability {s:?} in the directory"))
            })
    }

    /// Whether an access of this kind may go to a shard of this availability.
    pub fn allows(self, access: Access) -> bool {
        match (self, access) {
            (Availability::Available, _) => true,
            (Availability::NoWrites, Access::Read) => true,
            (Availability::NoWrites, Access::Write) | (Availability::Unavailable, _) => false,
        }
    }
}

impl fmt::Display for Availability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_sql())
    }
}

/// What an application means to do on the shard it routes to, as checked against the
/// shard's [`Availability`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Access {
    /// Reads only.
    Read,
    /// Writes (and reads in the same transaction).
    Write,
}

impl fmt::Display for Access {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Access::Read => "reads",
            Access::Write => "writes",
        })
    }
}

/// What one change of the directory touched of the tables routers read, written to the
/// change log (`directory_changes`) in the change's own transaction so that a router can
/// re-read only that ([`super::Directory::changes_since`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Changed {
    /// None of them: the journal, sequences, global tables' sources. The version still
    /// bumps (routers learn nothing from it).
    Nothing,
    /// The location and the mapping rows (ranges, ring points, list values) of these
    /// shards, and nothing else: a row that moved from one shard to another names both.
    Shards(Vec<u32>),
    /// Anything else (nodes, functions, table mappings): routers reload everything.
    Everything,
    /// Rows of a per-key function's `key_shards`: these keys (their texts) changed shard
    /// or were mapped, or, for None, any key of the function (an import). Routers drop
    /// them from their cache of keys; no location or other mapping changed.
    Keys {
        /// The per-key function.
        func_id: u32,
        /// The keys, as text; None: every key of the function.
        keys: Option<Vec<String>>,
    },
}

impl Changed {
    /// One shard's location or mapping.
    pub fn shard(id: u32) -> Changed {
        Changed::Shards(vec![id])
    }
}

/// A node registered in the directory (the address applications use).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DirNode {
    /// Name, as in the inventory.
    pub name: String,
    /// Host.
    pub host: String,
    /// Port.
    pub port: u16,
}

/// A partition function.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Function {
    /// Numeric id.
    pub id: u32,
    /// Unique name.
    pub name: String,
    /// Mapping kind.
    pub sharding_type: ShardingType,
    /// Key type.
    pub key_type: KeyType,
}

/// A shard and where it lives.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Shard {
    /// Shard id (the suffix of its schemas).
    pub id: u32,
    /// The function it belongs to.
    pub func_id: u32,
    /// Node name.
    pub node: String,
    /// Host applications connect to.
    pub host: String,
    /// Port.
    pub port: u16,
    /// State.
    pub state: ShardState,
    /// Whether the operator lets reads and writes reach it.
    pub availability: Availability,
    /// Directory version of its last change.
    pub version: u64,
}

impl Shard {
    /// Refuses `access` to a shard the operator made unavailable for it
    /// ([`Error::Unavailable`]).
    pub fn check_access(&self, access: Access) -> Result<()> {
        if self.availability.allows(access) {
            Ok(())
        } else {
            Err(Error::Unavailable {
                shard: self.id,
                detail: format!(
                    "marked {} by the operator, {access} refused (`shardctl shard set-availability`)",
                    self.availability.as_sql().replace('_', "-")
                ),
            })
        }
    }
}

/// A sharded table: schema.table sharded on a column by a function.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ShardedTable {
    /// Logical schema.
    pub schema: String,
    /// Table.
    pub table: String,
    /// Sharding column.
    pub column: String,
    /// Function.
    pub func_id: u32,
}

/// A global table, copied whole into every shard of its schema.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GlobalTable {
    /// Logical schema.
    pub schema: String,
    /// Table.
    pub table: String,
}

/// A range mapping row: keys from `lower_bound` up to the next bound go to `shard_id`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RangeRow {
    /// Function.
    pub func_id: u32,
    /// Lower bound (inclusive).
    pub lower_bound: Key,
    /// Shard.
    pub shard_id: u32,
}

/// A hash ring point.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HashRow {
    /// Function.
    pub func_id: u32,
    /// Point.
    pub point: RingPoint,
    /// Shard.
    pub shard_id: u32,
}

/// A list mapping row.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ListRow {
    /// Function.
    pub func_id: u32,
    /// Value.
    pub value: Key,
    /// Shard.
    pub shard_id: u32,
}

/// The whole directory at one version.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Snapshot {
    /// Directory version.
    pub version: u64,
    /// Nodes.
    pub nodes: Vec<DirNode>,
    /// Functions.
    pub functions: Vec<Function>,
    /// Shards.
    pub shards: Vec<Shard>,
    /// Sharded tables.
    pub tables: Vec<ShardedTable>,
    /// Global tables.
    pub globals: Vec<GlobalTable>,
    /// Range rows.
    pub ranges: Vec<RangeRow>,
    /// Ring points.
    pub points: Vec<HashRow>,
    /// List rows.
    pub lists: Vec<ListRow>,
}

/// The physical schema of a logical schema in a shard: `<schema>_<shard id>`.
pub fn shard_schema(schema: &str, shard_id: u32) -> String {
    format!("{schema}_{shard_id}")
}

impl Snapshot {
    /// Sorts the shards by id and the mapping rows by function then bound, point or
    /// value, so two snapshots of the same content compare equal however they were read.
    pub fn canonicalize(&mut self) {
        self.shards.sort_by_key(|s| s.id);
        self.ranges
            .sort_by(|a, b| (a.func_id, &a.lower_bound).cmp(&(b.func_id, &b.lower_bound)));
        self.points.sort_by_key(|p| (p.func_id, p.point));
        self.lists
            .sort_by(|a, b| (a.func_id, &a.value).cmp(&(b.func_id, &b.value)));
    }

    /// Replaces the locations and mapping rows of `shards` with those of `part` (read at
    /// `part.version`, holding only rows of those shards): a shard of the set that `part`
    /// lacks is gone, a mapping row that moved between two shards of the set moves here.
    /// Every other shard, and nodes, functions and tables, stay as they are.
    pub fn apply(&mut self, shards: &std::collections::BTreeSet<u32>, part: Snapshot) {
        self.version = part.version;
        self.shards.retain(|s| !shards.contains(&s.id));
        self.shards.extend(part.shards);
        self.ranges.retain(|r| !shards.contains(&r.shard_id));
        self.ranges.extend(part.ranges);
        self.points.retain(|p| !shards.contains(&p.shard_id));
        self.points.extend(part.points);
        self.lists.retain(|l| !shards.contains(&l.shard_id));
        self.lists.extend(part.lists);
        self.canonicalize();
    }

    /// The function called `name`.
    pub fn function(&self, name: &str) -> Result<&Function> {
        self.functions
            .iter()
            .find(|f| f.name == name)
            .ok_or_else(|| {
                let known: Vec<&str> = self.functions.iter().map(|f| f.name.as_str()).collect();
                Error::Usage(format!(
                    "unknown partition function {name:?} (the directory has: {})",
                    if known.is_empty() {
                        "none".to_string()
                    } else {
                        known.join(", ")
                    }
                ))
            })
    }

    /// The function with id `id`.
    pub fn function_by_id(&self, id: u32) -> Option<&Function> {
        self.functions.iter().find(|f| f.id == id)
    }

    /// The shard with id `id`.
    pub fn shard(&self, id: u32) -> Result<&Shard> {
        self.shards
            .iter()
            .find(|s| s.id == id)
            .ok_or_else(|| Error::Usage(format!("unknown shard {id}")))
    }

    /// The sharded table `schema.table`, if mapped.
    pub fn sharded_table(&self, schema: &str, table: &str) -> Option<&ShardedTable> {
        self.tables
            .iter()
            .find(|t| t.schema == schema && t.table == table)
    }

    /// The logical schemas a function's shards hold: those of its sharded tables.
    pub fn function_schemas(&self, func_id: u32) -> Vec<String> {
        let mut out: Vec<String> = self
            .tables
            .iter()
            .filter(|t| t.func_id == func_id)
            .map(|t| t.schema.clone())
            .collect();
        out.sort();
        out.dedup();
        out
    }

    /// The physical schemas of a shard.
    pub fn shard_schemas(&self, shard: &Shard) -> Vec<String> {
        self.function_schemas(shard.func_id)
            .iter()
            .map(|s| shard_schema(s, shard.id))
            .collect()
    }

    /// How `schema.table` is mapped already, if it is (`sharded` or `global`), compared as
    /// the directory's columns compare names: without regard to case.
    pub fn mapped_as(&self, schema: &str, table: &str) -> Option<&'static str> {
        let same =
            |s: &str, t: &str| s.eq_ignore_ascii_case(schema) && t.eq_ignore_ascii_case(table);
        if self.tables.iter().any(|t| same(&t.schema, &t.table)) {
            Some("sharded")
        } else if self.globals.iter().any(|g| same(&g.schema, &g.table)) {
            Some("global")
        } else {
            None
        }
    }

    /// Shards of a function.
    pub fn shards_of(&self, func_id: u32) -> impl Iterator<Item = &Shard> {
        self.shards.iter().filter(move |s| s.func_id == func_id)
    }
}

/// How the retired shard's key space joins the survivor's, journaled with the operation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum MergeMapping {
    /// Range: the two ranges become one; the upper of the two lower bounds goes.
    Range {
        /// The lower bound removed.
        drop: Key,
    },
    /// Hash: the two arcs become one; the later of the two ring points goes.
    Point {
        /// The ring point removed (32 hex digits).
        drop: String,
    },
    /// List: the retired shard's values map to the survivor.
    Values,
}

/// One planned merge of two shards, journaled in the operation's parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MergePlan {
    /// The partition function.
    pub func_id: u32,
    /// The shard that stays and takes the other's keys.
    pub survivor: u32,
    /// The shard that goes: fenced, copied into the survivor, dropped.
    pub retired: u32,
    /// How the mappings change at the flip.
    pub mapping: MergeMapping,
}

/// How a key move between two existing shards of one function changes the mapping,
/// journaled with the operation: only the keys between the two boundaries (or the values
/// listed) change owner, every other key keeps its shard.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum KeyMoveMapping {
    /// Range: the lower bound `was` between two adjacent shards becomes `now`; the keys
    /// between the two go from the shard that owned them to its neighbour.
    RangeBound {
        /// The bound before the move.
        was: Key,
        /// The bound after it.
        now: Key,
    },
    /// Hash: the ring point `was` between two ring neighbours becomes `now` (32 hex
    /// digits each); the hashes between the two change owner.
    RingPoint {
        /// The point before the move.
        was: String,
        /// The point after it.
        now: String,
    },
    /// List: these values go to the receiving shard.
    Values {
        /// The values moved.
        values: Vec<Key>,
    },
    /// Per-key: these keys' rows of `key_shards` go to the receiving shard (the
    /// snapshot holds no key rows: the flip is read back from the directory).
    Keys {
        /// The keys moved.
        keys: Vec<Key>,
    },
}

/// One planned key move, journaled in the operation's parameters: keys of `donor` given
/// to `receiver`, two existing shards of function `func_id`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KeyMovePlan {
    /// The partition function.
    pub func_id: u32,
    /// The shard that gives the keys.
    pub donor: u32,
    /// The shard that takes them.
    pub receiver: u32,
    /// How the mapping changes at the flip.
    pub mapping: KeyMoveMapping,
}

/// The new shard's mapping, journaled with the operation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SplitMapping {
    /// A range starting here.
    LowerBound {
        /// The bound.
        key: Key,
    },
    /// A ring point (32 hex digits).
    Point {
        /// The point.
        hex: String,
    },
    /// Values moved from the old shard.
    Values {
        /// The values.
        values: Vec<Key>,
    },
}

impl SplitMapping {
    /// As the directory takes it.
    pub fn to_new_mapping(&self) -> Result<super::NewMapping> {
        Ok(match self {
            SplitMapping::LowerBound { key } => super::NewMapping::LowerBound(key.clone()),
            SplitMapping::Point { hex } => super::NewMapping::Point(RingPoint::from_hex(hex)?),
            SplitMapping::Values { values } => super::NewMapping::Values(values.clone()),
        })
    }
}

/// A planned split, journaled in the operation's parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SplitPlan {
    /// The shard being split.
    pub old_shard: u32,
    /// The new shard's id (its location exists, offline, from the start).
    pub new_shard: u32,
    /// The new shard's mapping.
    pub mapping: SplitMapping,
}

/// Which write fence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Fence {
    /// Only this shard: its tables are renamed out of reach; other shards keep writing.
    Shard,
    /// The whole source server goes read-only (the chapter's fence).
    ReadOnly,
    /// Only this shard, by switched guards (`shardctl_switch_*` triggers installed ahead
    /// of the fence): one row of the node's control table refuses every write of its
    /// tables, whatever their number; nothing is renamed.
    Switch,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    fn shard(id: u32, func_id: u32, node: &str) -> Shard {
        Shard {
            id,
            func_id,
            node: node.into(),
            host: "h".into(),
            port: 1,
            state: ShardState::Online,
            availability: Availability::Available,
            version: 1,
        }
    }

    fn full() -> Snapshot {
        let mut s = Snapshot {
            version: 7,
            functions: vec![
                Function {
                    id: 1,
                    name: "r".into(),
                    sharding_type: ShardingType::Range,
                    key_type: KeyType::Int,
                },
                Function {
                    id: 2,
                    name: "l".into(),
                    sharding_type: ShardingType::List,
                    key_type: KeyType::String,
                },
            ],
            shards: vec![
                shard(1, 1, "a"),
                shard(2, 1, "b"),
                shard(3, 2, "a"),
                shard(4, 2, "b"),
            ],
            ranges: [(0, 1), (100, 2)]
                .map(|(b, shard_id)| RangeRow {
                    func_id: 1,
                    lower_bound: Key::Int(b),
                    shard_id,
                })
                .to_vec(),
            lists: [("x", 3), ("y", 3), ("z", 4)]
                .map(|(v, shard_id)| ListRow {
                    func_id: 2,
                    value: Key::Str(v.into()),
                    shard_id,
                })
                .to_vec(),
            ..Snapshot::default()
        };
        s.canonicalize();
        s
    }

    /// The rows of `shards` in `after`, as the change log's reader returns them.
    fn part(after: &Snapshot, shards: &BTreeSet<u32>) -> Snapshot {
        Snapshot {
            version: after.version,
            shards: after
                .shards
                .iter()
                .filter(|s| shards.contains(&s.id))
                .cloned()
                .collect(),
            ranges: after
                .ranges
                .iter()
                .filter(|r| shards.contains(&r.shard_id))
                .cloned()
                .collect(),
            points: Vec::new(),
            lists: after
                .lists
                .iter()
                .filter(|l| shards.contains(&l.shard_id))
                .cloned()
                .collect(),
            ..Snapshot::default()
        }
    }

    /// Each kind of shard change: the cache with only the named shards re-read equals the
    /// directory read whole.
    #[test]
    fn applying_the_changed_shards_gives_what_a_full_read_gives() {
        type Edit = fn(&mut Snapshot) -> Vec<u32>;
        let edits: [(&str, Edit); 5] = [
            ("a move", |s| {
                s.shards[1].node = "c".into();
                s.shards[1].version = 8;
                vec![2]
            }),
            ("a split of a list shard", |s| {
                s.shards.push(shard(5, 2, "c"));
                s.lists
                    .iter_mut()
                    .find(|l| l.value == Key::Str("y".into()))
                    .unwrap()
                    .shard_id = 5;
                vec![3, 5]
            }),
            ("a merge of two ranges", |s| {
                // Shard 1 retires into shard 2: its bound goes to 2, 2's own bound goes.
                s.shards.retain(|x| x.id != 1);
                s.ranges.retain(|r| r.shard_id != 2);
                s.ranges[0].shard_id = 2;
                vec![2, 1]
            }),
            ("a new range shard", |s| {
                s.shards.push(shard(6, 1, "a"));
                s.ranges.push(RangeRow {
                    func_id: 1,
                    lower_bound: Key::Int(50),
                    shard_id: 6,
                });
                vec![6]
            }),
            ("an operator's availability", |s| {
                s.shards[3].availability = Availability::NoWrites;
                vec![4]
            }),
        ];
        for (what, edit) in edits {
            let mut after = full();
            after.version = 8;
            let changed: BTreeSet<u32> = edit(&mut after).into_iter().collect();
            after.canonicalize();
            let mut cache = full();
            cache.apply(&changed, part(&after, &changed));
            assert_eq!(cache, after, "{what}");
            // Naming a shard too few leaves the cache wrong: the test can tell.
            if changed.len() > 1 {
                let fewer: BTreeSet<u32> = changed.iter().skip(1).copied().collect();
                let mut cache = full();
                cache.apply(&fewer, part(&after, &fewer));
                assert_ne!(cache, after, "{what}, one shard not re-read");
            }
        }
    }

    #[test]
    fn availability_refuses_what_the_operator_set() {
        for (a, read, write) in [
            (Availability::Available, true, true),
            (Availability::NoWrites, true, false),
            (Availability::Unavailable, false, false),
        ] {
            assert_eq!(a.allows(Access::Read), read, "{a}");
            assert_eq!(a.allows(Access::Write), write, "{a}");
            assert_eq!(Availability::from_sql(a.as_sql()).unwrap(), a);
        }
        let mut s = shard(9, 1, "a");
        s.availability = Availability::NoWrites;
        let e = s.check_access(Access::Write).unwrap_err();
        assert_eq!(e.exit_code(), crate::error::ExitCode::Unavailable);
        assert_eq!(
            e.to_string(),
            "shard 9 is unavailable: marked no-writes by the operator, writes refused (`shardctl shard set-availability`)"
        );
        assert!(s.check_access(Access::Read).is_ok());
        assert!(Availability::from_sql("down").is_err());
    }
}
