//! What-if for placement schemes (references 001 and 003): given a set of keys, how many
//! change node going from N to M nodes under modulo hashing, consistent hashing
//! (ketama-style), an even range split, or the directory's own function after a split or a
//! move. Pure computation: keys and the directory arrive as data, no I/O here
//! ([`source`] reads keys from files and live tables).

pub mod source;

use crate::directory::{
    coverage, Coverage, HashRow, Index, Key, KeyType, ListRow, RangeRow, RingPoint, Shard,
    ShardState, ShardingType, Snapshot,
};
use crate::error::{Error, Result};
use serde::Serialize;
use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;

/// The keys to place, with their sizes when known.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct KeySet {
    /// Where the keys came from, for messages (`keys.txt`, `column app.accounts.id`).
    pub origin: String,
    /// True when key `i` is line `i + 1` of a file (messages then name the line).
    pub numbered_lines: bool,
    /// Each key's text.
    pub texts: Vec<String>,
    /// Each key's size in bytes, when known.
    pub bytes: Option<Vec<u64>>,
}

/// How many bad lines a keys-file error names before summing up the rest.
const BAD_LINES_SHOWN: usize = 10;

impl KeySet {
    /// Parses a keys file: one key per line, optionally followed by a tab and its size in
    /// bytes (then every line must carry one). Every bad line is named by its number: an
    /// empty line, a key longer than 255 bytes, a size that is not a whole number.
    pub fn parse(origin: &str, text: &str) -> Result<KeySet> {
        let mut texts = Vec::new();
        let mut bytes: Vec<u64> = Vec::new();
        let mut sized: Option<bool> = None;
        let mut bad: Vec<String> = Vec::new();
        let body = text.strip_suffix('\n').unwrap_or(text);
        if body.is_empty() {
            return Err(Error::Config(format!("{origin}: no keys")));
        }
        for (i, raw) in body.split('\n').enumerate() {
            let line_no = i + 1;
            let line = raw.strip_suffix('\r').unwrap_or(raw);
            let (key, size) = match line.split_once('\t') {
                Some((k, s)) => (k, Some(s)),
                None => (line, None),
            };
            let problem = if key.is_empty() {
                Some("empty key".to_string())
            } else if key.len() > 255 {
                Some("key longer than 255 bytes".to_string())
            } else if sized.is_some_and(|s| s != size.is_some()) {
                Some(if size.is_some() {
                    "a size where earlier lines have none".to_string()
                } else {
                    "no size where earlier lines have one".to_string()
                })
            } else {
                match size.map(|s| s.trim().parse::<u64>()) {
                    Some(Err(_)) => Some(format!(
                        "size {:?} is not a whole number of bytes",
                        size.unwrap_or_default()
                    )),
                    Some(Ok(n)) => {
                        bytes.push(n);
                        None
                    }
                    None => None,
                }
            };
            match problem {
                Some(p) => bad.push(format!("line {line_no}: {p}")),
                None => {
                    sized.get_or_insert(size.is_some());
                    texts.push(key.to_string());
                }
            }
        }
        if !bad.is_empty() {
            let more = bad.len().saturating_sub(BAD_LINES_SHOWN);
            let mut shown = bad[..bad.len().min(BAD_LINES_SHOWN)].join("; ");
            if more > 0 {
                shown.push_str(&format!("; and {more} more"));
            }
            return Err(Error::Config(format!(
                "{origin}: {} bad line{}: {shown}",
                bad.len(),
                if bad.len() == 1 { "" } else { "s" }
            )));
        }
        Ok(KeySet {
            origin: origin.to_string(),
            numbered_lines: true,
            bytes: (sized == Some(true)).then_some(bytes),
            texts,
        })
    }

    /// Integer keys `start, start + step, ...` below `end`.
    pub fn generated(start: i64, end: i64, step: i64) -> Result<KeySet> {
        if step < 1 {
            return Err(Error::Usage(format!("--step {step}: must be at least 1")));
        }
        if end <= start {
            return Err(Error::Usage(format!(
                "--range {start}..{end}: the end must be above the start"
            )));
        }
        let count = ((end as i128 - start as i128 - 1) / step as i128 + 1) as u64;
        if count > 100_000_000 {
            return Err(Error::Usage(format!(
                "--range {start}..{end} with step {step} makes {count} keys; at most 100000000"
            )));
        }
        let texts = (0..count)
            .map(|i| (start as i128 + i as i128 * step as i128).to_string())
            .collect();
        Ok(KeySet {
            origin: format!("range {start}..{end}"),
            numbered_lines: false,
            texts,
            bytes: None,
        })
    }

    /// How many keys.
    pub fn len(&self) -> usize {
        self.texts.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.texts.is_empty()
    }

    /// Where key `i` came from, for messages.
    fn place(&self, i: usize) -> String {
        if self.numbered_lines {
            format!("{}:{}", self.origin, i + 1)
        } else {
            format!("{}: key #{}", self.origin, i + 1)
        }
    }
}

/// A hash of the key's text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HashFn {
    /// CRC-32 (IEEE), as MySQL's `CRC32()`.
    Crc32,
    /// MD5, as MySQL's `MD5()`.
    Md5,
}

/// A placement scheme to simulate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    /// `hash(key) % nodes`.
    Modulo(HashFn),
    /// A ring with many points per node (ketama-style); a key goes to the first point at
    /// or after its hash, wrapping to the first point.
    Consistent(HashFn),
    /// The key space (from the smallest key to the largest) split into equal ranges.
    Range,
    /// The directory's own function, before and after a split or a move.
    Directory,
}

impl Scheme {
    /// The static schemes `simulate` runs when none is named.
    pub const DEFAULTS: [Scheme; 5] = [
        Scheme::Modulo(HashFn::Crc32),
        Scheme::Modulo(HashFn::Md5),
        Scheme::Consistent(HashFn::Md5),
        Scheme::Consistent(HashFn::Crc32),
        Scheme::Range,
    ];

    /// Its name on the command line and in output.
    pub fn name(&self) -> &'static str {
        match self {
            Scheme::Modulo(HashFn::Crc32) => "modulo-crc32",
            Scheme::Modulo(HashFn::Md5) => "modulo-md5",
            Scheme::Consistent(HashFn::Md5) => "consistent-md5",
            Scheme::Consistent(HashFn::Crc32) => "consistent-crc32",
            Scheme::Range => "range",
            Scheme::Directory => "directory",
        }
    }
}

impl fmt::Display for Scheme {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Scheme {
    type Err = Error;
    /// `modulo` (crc32, as reference 003), `modulo-crc32`, `modulo-md5`, `consistent`
    /// (md5, as ketama), `consistent-md5`, `consistent-crc32`, `range`, `directory`.
    fn from_str(s: &str) -> Result<Scheme> {
        Ok(match s.trim().to_ascii_lowercase().as_str() {
            "modulo" | "modulo-crc32" => Scheme::Modulo(HashFn::Crc32),
            "modulo-md5" => Scheme::Modulo(HashFn::Md5),
            "consistent" | "consistent-md5" | "ketama" => Scheme::Consistent(HashFn::Md5),
            "consistent-crc32" => Scheme::Consistent(HashFn::Crc32),
            "range" => Scheme::Range,
            "directory" => Scheme::Directory,
            _ => {
                return Err(Error::Usage(format!(
                    "unknown scheme {s:?}: use modulo-crc32, modulo-md5, consistent-md5, consistent-crc32, range or directory"
                )))
            }
        })
    }
}

/// Keys on one node.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NodeLoad {
    /// Node name.
    pub node: String,
    /// Keys it holds.
    pub keys: u64,
}

/// What one scheme does to the keys.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Outcome {
    /// The scheme's name.
    pub scheme: String,
    /// Nodes before.
    pub nodes_before: usize,
    /// Nodes after.
    pub nodes_after: usize,
    /// Keys placed.
    pub keys: u64,
    /// Keys that change node.
    pub moved_keys: u64,
    /// `moved_keys / keys`.
    pub moved_share: f64,
    /// Bytes of the keys that change node, when sizes are known.
    pub moved_bytes: Option<u64>,
    /// Bytes of all keys, when sizes are known.
    pub total_bytes: Option<u64>,
    /// What theory says for uniformly hashed keys: modulo keeps `min(N, M) / lcm(N, M)`,
    /// consistent hashing moves `|M - N| / max(N, M)`.
    pub expected_moved_share: Option<f64>,
    /// Max keys on a node over the average, before.
    pub balance_before: f64,
    /// The same after.
    pub balance_after: f64,
    /// Keys per node, before.
    pub per_node_before: Vec<NodeLoad>,
    /// Keys per node, after.
    pub per_node_after: Vec<NodeLoad>,
    /// Directory only: keys that change shard (a split onto its own node changes shards but
    /// not nodes).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shard_changes: Option<u64>,
    /// Directory only: keys no shard holds (below the lowest range bound, an unlisted value).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unmapped_keys: Option<u64>,
}

/// Where the static schemes go: from `from` nodes to `to`, `points` per node on a ring.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Resize {
    /// Nodes before.
    pub from: usize,
    /// Nodes after.
    pub to: usize,
    /// Ring points per node (consistent hashing).
    pub points: u32,
}

/// Ketama's default: 40 MD5 digests of 4 points each.
pub const DEFAULT_POINTS: u32 = 160;

/// The name of static node `i` (0-based): `node1`, `node2`, ...
pub fn node_name(i: usize) -> String {
    format!("node{}", i + 1)
}

/// CRC-32 of a text.
pub fn crc32(text: &str) -> u32 {
    crc32fast::hash(text.as_bytes())
}

/// MD5 of a text as a 128-bit number (big-endian, as `MD5()`'s hex reads).
pub fn md5(text: &str) -> u128 {
    RingPoint::md5(text).0
}

/// The 32-bit ring position ketama takes from an MD5 digest: bytes `4h..4h+4`,
/// little-endian.
fn ketama_word(digest: u128, h: usize) -> u32 {
    let b = digest.to_be_bytes();
    u32::from_le_bytes([b[4 * h], b[4 * h + 1], b[4 * h + 2], b[4 * h + 3]])
}

/// The ring of `nodes` static nodes, `points` each, sorted by (point, node): MD5 rings take
/// four points from each digest of `node<i>-<j>` as ketama does; CRC-32 rings one point
/// per `node<i>-<j>`.
pub fn ring(nodes: usize, points: u32, hash: HashFn) -> Vec<(u32, u32)> {
    let mut ring = Vec::with_capacity(nodes * points as usize);
    for n in 0..nodes {
        let name = node_name(n);
        match hash {
            HashFn::Md5 => {
                let mut made = 0;
                let mut j = 0;
                while made < points {
                    let d = md5(&format!("{name}-{j}"));
                    for h in 0..4 {
                        if made < points {
                            ring.push((ketama_word(d, h), n as u32));
                            made += 1;
                        }
                    }
                    j += 1;
                }
            }
            HashFn::Crc32 => {
                for j in 0..points {
                    ring.push((crc32(&format!("{name}-{j}")), n as u32));
                }
            }
        }
    }
    ring.sort_unstable();
    ring
}

/// The node of a key hashed to `h` on a sorted ring: the first point at or after `h`,
/// wrapping to the first.
pub fn ring_node(ring: &[(u32, u32)], h: u32) -> u32 {
    let i = ring.partition_point(|(p, _)| *p < h);
    ring[if i == ring.len() { 0 } else { i }].1
}

/// The hashes every scheme needs, computed once per key.
#[derive(Default)]
struct Hashes {
    crc: Vec<u32>,
    md5: Vec<u128>,
}

impl Hashes {
    fn of(keys: &KeySet, schemes: &[Scheme]) -> Hashes {
        let wants = |f: HashFn| {
            schemes
                .iter()
                .any(|s| matches!(s, Scheme::Modulo(h) | Scheme::Consistent(h) if *h == f))
        };
        Hashes {
            crc: if wants(HashFn::Crc32) {
                par_map(&keys.texts, crc32)
            } else {
                Vec::new()
            },
            md5: if wants(HashFn::Md5) {
                par_map(&keys.texts, md5)
            } else {
                Vec::new()
            },
        }
    }
}

/// `f` over every item, in order, on every available core (large inputs only).
fn par_map<T: Send>(items: &[String], f: impl Fn(&str) -> T + Sync) -> Vec<T> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    if threads < 2 || items.len() < 50_000 {
        return items.iter().map(|t| f(t)).collect();
    }
    let per = items.len().div_ceil(threads);
    let f = &f;
    std::thread::scope(|scope| {
        let parts: Vec<_> = items
            .chunks(per)
            .map(|chunk| scope.spawn(move || chunk.iter().map(|t| f(t)).collect::<Vec<T>>()))
            .collect();
        parts
            .into_iter()
            .flat_map(|h| h.join().expect("a hashing thread panicked"))
            .collect()
    })
}

/// The position of a key in the key space of the range scheme: its value for integer keys;
/// for text keys its first eight bytes read as a big-endian number.
pub fn range_coordinate(text: &str, all_int: bool) -> i128 {
    if all_int {
        if let Ok(i) = text.parse::<i64>() {
            return i128::from(i);
        }
    }
    let mut b = [0u8; 8];
    for (d, s) in b.iter_mut().zip(text.as_bytes()) {
        *d = *s;
    }
    i128::from(u64::from_be_bytes(b))
}

/// The node of coordinate `c` when `[lo, hi]` is split into `n` equal ranges.
pub fn range_node(c: i128, lo: i128, hi: i128, n: usize) -> u32 {
    let width = hi - lo + 1;
    ((c - lo) * n as i128 / width) as u32
}

/// Counts keys per node and those that change node, from each key's node before and after
/// (`u32::MAX`: no node).
fn tally(
    scheme: &str,
    keys: &KeySet,
    names_before: &[String],
    names_after: &[String],
    place: impl Fn(usize) -> (u32, u32),
) -> Outcome {
    let mut before = vec![0u64; names_before.len()];
    let mut after = vec![0u64; names_after.len()];
    let (mut moved, mut moved_bytes, mut total_bytes) = (0u64, 0u64, 0u64);
    for i in 0..keys.len() {
        let (b, a) = place(i);
        if let Some(c) = before.get_mut(b as usize) {
            *c += 1;
        }
        if let Some(c) = after.get_mut(a as usize) {
            *c += 1;
        }
        let size = keys.bytes.as_ref().map_or(0, |v| v[i]);
        total_bytes += size;
        let same =
            b != u32::MAX && a != u32::MAX && names_before[b as usize] == names_after[a as usize];
        if !same {
            moved += 1;
            moved_bytes += size;
        }
    }
    let loads = |names: &[String], counts: &[u64]| -> Vec<NodeLoad> {
        names
            .iter()
            .zip(counts)
            .map(|(n, k)| NodeLoad {
                node: n.clone(),
                keys: *k,
            })
            .collect()
    };
    let n = keys.len() as u64;
    Outcome {
        scheme: scheme.to_string(),
        nodes_before: names_before.len(),
        nodes_after: names_after.len(),
        keys: n,
        moved_keys: moved,
        moved_share: if n == 0 { 0.0 } else { moved as f64 / n as f64 },
        moved_bytes: keys.bytes.as_ref().map(|_| moved_bytes),
        total_bytes: keys.bytes.as_ref().map(|_| total_bytes),
        expected_moved_share: None,
        balance_before: balance(&before),
        balance_after: balance(&after),
        per_node_before: loads(names_before, &before),
        per_node_after: loads(names_after, &after),
        shard_changes: None,
        unmapped_keys: None,
    }
}

/// Max over average keys per node (1.0 is perfectly even; 0 when there are no keys).
pub fn balance(counts: &[u64]) -> f64 {
    let total: u64 = counts.iter().sum();
    if total == 0 || counts.is_empty() {
        return 0.0;
    }
    let avg = total as f64 / counts.len() as f64;
    *counts.iter().max().unwrap_or(&0) as f64 / avg
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// Modulo hashing keeps a key in place when `h % N == h % M`: for uniform hashes that is
/// `min(N, M)` residues out of `lcm(N, M)`.
pub fn expected_modulo_moved(n: usize, m: usize) -> f64 {
    let lcm = n / gcd(n, m) * m;
    1.0 - n.min(m) as f64 / lcm as f64
}

/// Consistent hashing moves only the new nodes' share (adding) or the removed nodes' keys
/// (removing): `|M - N| / max(N, M)`.
pub fn expected_consistent_moved(n: usize, m: usize) -> f64 {
    n.abs_diff(m) as f64 / n.max(m) as f64
}

/// Runs the static schemes (not [`Scheme::Directory`]) over the keys.
pub fn simulate(keys: &KeySet, schemes: &[Scheme], resize: Resize) -> Result<Vec<Outcome>> {
    if resize.from < 1 || resize.to < 1 {
        return Err(Error::Usage(format!(
            "cannot simulate {} to {} nodes: both must be at least 1",
            resize.from, resize.to
        )));
    }
    if resize.points < 1 {
        return Err(Error::Usage("--points must be at least 1".into()));
    }
    let hashes = Hashes::of(keys, schemes);
    let before: Vec<String> = (0..resize.from).map(node_name).collect();
    let after: Vec<String> = (0..resize.to).map(node_name).collect();
    let (n, m) = (resize.from, resize.to);
    let mut out = Vec::new();
    for scheme in schemes {
        let name = scheme.name();
        let mut o = match scheme {
            Scheme::Modulo(HashFn::Crc32) => tally(name, keys, &before, &after, |i| {
                let h = hashes.crc[i];
                (h % n as u32, h % m as u32)
            }),
            Scheme::Modulo(HashFn::Md5) => tally(name, keys, &before, &after, |i| {
                let h = hashes.md5[i];
                ((h % n as u128) as u32, (h % m as u128) as u32)
            }),
            Scheme::Consistent(f) => {
                let (rb, ra) = (ring(n, resize.points, *f), ring(m, resize.points, *f));
                tally(name, keys, &before, &after, |i| {
                    let h = match f {
                        HashFn::Crc32 => hashes.crc[i],
                        HashFn::Md5 => ketama_word(hashes.md5[i], 0),
                    };
                    (ring_node(&rb, h), ring_node(&ra, h))
                })
            }
            Scheme::Range => {
                let all_int = keys.texts.iter().all(|t| t.parse::<i64>().is_ok());
                let coords: Vec<i128> = keys
                    .texts
                    .iter()
                    .map(|t| range_coordinate(t, all_int))
                    .collect();
                let lo = coords.iter().copied().min().unwrap_or(0);
                let hi = coords.iter().copied().max().unwrap_or(0);
                tally(name, keys, &before, &after, |i| {
                    (
                        range_node(coords[i], lo, hi, n),
                        range_node(coords[i], lo, hi, m),
                    )
                })
            }
            Scheme::Directory => {
                return Err(Error::Usage(
                    "the directory scheme needs --function with --split or --move".into(),
                ))
            }
        };
        o.expected_moved_share = match scheme {
            Scheme::Modulo(_) => Some(expected_modulo_moved(n, m)),
            Scheme::Consistent(_) => Some(expected_consistent_moved(n, m)),
            _ => None,
        };
        out.push(o);
    }
    Ok(out)
}

/// Where a simulated split puts the new shard's boundary.
#[derive(Debug, Clone, PartialEq)]
pub enum SplitAt {
    /// Range: the median of the keys the shard holds; hash: the middle of its arc.
    Middle,
    /// Range: this key becomes the new shard's lower bound.
    Key(String),
    /// Hash: this ring point (32 hex digits) becomes the new shard's point.
    Point(String),
    /// List: these values go to the new shard.
    Values(Vec<String>),
}

/// A change to the directory to simulate.
#[derive(Debug, Clone, PartialEq)]
pub enum DirChange {
    /// The shard moves to another node.
    Move {
        /// Shard id.
        shard: u32,
        /// Target node.
        to: String,
    },
    /// A new shard on `to` takes part of the shard's keys.
    Split {
        /// Shard id.
        shard: u32,
        /// The new shard's node.
        to: String,
        /// Where the key range is cut.
        at: SplitAt,
    },
}

/// The directory scheme: each key's node under function `function` now, and after
/// `change` (applied to a copy of the snapshot, as the real split or move would).
pub fn simulate_directory(
    snap: &Snapshot,
    function: &str,
    keys: &KeySet,
    change: &DirChange,
) -> Result<Outcome> {
    let func = snap.function(function)?.clone();
    let parsed: Vec<Key> = keys
        .texts
        .iter()
        .enumerate()
        .map(|(i, t)| {
            func.key_type.parse(t).map_err(|_| {
                Error::Usage(format!(
                    "{}: {t:?} is not a key of function {} ({} keys)",
                    keys.place(i),
                    func.name,
                    match func.key_type {
                        KeyType::Int => "integer",
                        KeyType::String => "string",
                    }
                ))
            })
        })
        .collect::<Result<_>>()?;
    let before_idx = Index::new(snap);
    let shards_before: Vec<u32> = parsed
        .iter()
        .map(|k| before_idx.lookup(func.id, k).unwrap_or(u32::MAX))
        .collect();
    let mut after = snap.clone();
    let (shard_id, to) = match change {
        DirChange::Move { shard, to } | DirChange::Split { shard, to, .. } => (*shard, to),
    };
    let shard = snap.shard(shard_id)?.clone();
    if shard.func_id != func.id {
        return Err(Error::Usage(format!(
            "shard {shard_id} belongs to another function than {}",
            func.name
        )));
    }
    if !snap.nodes.iter().any(|n| &n.name == to) {
        return Err(Error::Usage(format!(
            "unknown node {to:?}: not in the directory (shardctl node add)"
        )));
    }
    match change {
        DirChange::Move { .. } => {
            if &shard.node == to {
                return Err(Error::Usage(format!(
                    "shard {shard_id} already lives on {to}"
                )));
            }
            for s in after.shards.iter_mut().filter(|s| s.id == shard_id) {
                s.node = to.clone();
            }
        }
        DirChange::Split { at, .. } => {
            let new_id = snap.shards.iter().map(|s| s.id).max().unwrap_or(0) + 1;
            after.shards.push(Shard {
                id: new_id,
                func_id: func.id,
                node: to.clone(),
                host: String::new(),
                port: 0,
                state: ShardState::Online,
                availability: crate::directory::Availability::Available,
                version: 0,
            });
            let held: Vec<&Key> = parsed
                .iter()
                .zip(&shards_before)
                .filter(|(_, s)| **s == shard_id)
                .map(|(k, _)| k)
                .collect();
            split_mapping(snap, &mut after, &func, &shard, new_id, at, held)?;
        }
    }
    let after_idx = Index::new(&after);
    let node_of = |s: &Snapshot| -> HashMap<u32, String> {
        s.shards
            .iter()
            .filter(|sh| sh.func_id == func.id)
            .map(|sh| (sh.id, sh.node.clone()))
            .collect()
    };
    let (nodes_b, nodes_a) = (node_of(snap), node_of(&after));
    let names = |m: &HashMap<u32, String>| -> Vec<String> {
        let mut v: Vec<String> = m.values().cloned().collect();
        v.sort();
        v.dedup();
        v
    };
    let (names_b, names_a) = (names(&nodes_b), names(&nodes_a));
    let pos = |names: &[String], node: Option<&String>| -> u32 {
        node.and_then(|n| names.iter().position(|x| x == n))
            .map_or(u32::MAX, |p| p as u32)
    };
    let shard_to_b: HashMap<u32, u32> = nodes_b
        .iter()
        .map(|(s, n)| (*s, pos(&names_b, Some(n))))
        .collect();
    let shard_to_a: HashMap<u32, u32> = nodes_a
        .iter()
        .map(|(s, n)| (*s, pos(&names_a, Some(n))))
        .collect();
    let shards_after: Vec<u32> = parsed
        .iter()
        .map(|k| after_idx.lookup(func.id, k).unwrap_or(u32::MAX))
        .collect();
    let mut o = tally("directory", keys, &names_b, &names_a, |i| {
        (
            shard_to_b
                .get(&shards_before[i])
                .copied()
                .unwrap_or(u32::MAX),
            shard_to_a
                .get(&shards_after[i])
                .copied()
                .unwrap_or(u32::MAX),
        )
    });
    let unmapped = shards_before.iter().filter(|s| **s == u32::MAX).count() as u64;
    // Keys no shard holds, before and after alike, are not moves.
    o.moved_keys -= shards_before
        .iter()
        .zip(&shards_after)
        .filter(|(b, a)| **b == u32::MAX && **a == u32::MAX)
        .count() as u64;
    o.moved_share = if o.keys == 0 {
        0.0
    } else {
        o.moved_keys as f64 / o.keys as f64
    };
    o.shard_changes = Some(
        shards_before
            .iter()
            .zip(&shards_after)
            .filter(|(b, a)| b != a)
            .count() as u64,
    );
    o.unmapped_keys = Some(unmapped);
    Ok(o)
}

/// Adds the new shard's mapping row to `after`, as a real split would.
fn split_mapping(
    snap: &Snapshot,
    after: &mut Snapshot,
    func: &crate::directory::Function,
    shard: &Shard,
    new_id: u32,
    at: &SplitAt,
    mut held: Vec<&Key>,
) -> Result<()> {
    let cov = coverage(snap, func, shard.id);
    match (func.sharding_type, at) {
        (ShardingType::Range, SplitAt::Middle | SplitAt::Key(_)) => {
            let Coverage::Range { lower, upper } = cov else {
                return Err(Error::Usage(format!("shard {} has no range", shard.id)));
            };
            let bound = match at {
                SplitAt::Key(k) => func.key_type.parse(k)?,
                _ => {
                    held.sort();
                    held.dedup();
                    if held.len() < 2 {
                        return Err(Error::Usage(format!(
                            "shard {} holds {} of the keys: give --at KEY",
                            shard.id,
                            held.len()
                        )));
                    }
                    held[held.len() / 2].clone()
                }
            };
            if bound <= lower || upper.as_ref().is_some_and(|u| &bound >= u) {
                return Err(Error::Usage(format!(
                    "--at {bound}: not inside shard {}'s range {}",
                    shard.id,
                    Coverage::Range { lower, upper }
                )));
            }
            after.ranges.push(RangeRow {
                func_id: func.id,
                lower_bound: bound,
                shard_id: new_id,
            });
        }
        (ShardingType::Hash, SplitAt::Middle | SplitAt::Point(_)) => {
            let Coverage::Arc { point, next, .. } = cov else {
                return Err(Error::Usage(format!(
                    "shard {} has no ring point",
                    shard.id
                )));
            };
            let p = match at {
                SplitAt::Point(hex) => RingPoint::from_hex(hex)?,
                // A lone point's arc is the whole ring.
                _ if next == point => RingPoint(point.0.wrapping_add(1u128 << 127)),
                _ => RingPoint(point.0.wrapping_add(next.0.wrapping_sub(point.0) / 2)),
            };
            if snap
                .points
                .iter()
                .any(|r| r.func_id == func.id && r.point == p)
            {
                return Err(Error::Usage(format!(
                    "ring point {p} is taken: give another --at"
                )));
            }
            after.points.push(HashRow {
                func_id: func.id,
                point: p,
                shard_id: new_id,
            });
        }
        (ShardingType::List, SplitAt::Values(values)) => {
            for v in values {
                let key = func.key_type.parse(v)?;
                let row = after
                    .lists
                    .iter_mut()
                    .find(|l: &&mut ListRow| l.func_id == func.id && l.value == key)
                    .filter(|l| l.shard_id == shard.id)
                    .ok_or_else(|| {
                        Error::Usage(format!("value {v:?} is not one of shard {}'s", shard.id))
                    })?;
                row.shard_id = new_id;
            }
        }
        (t, _) => {
            return Err(Error::Usage(format!(
                "a {} function splits {}",
                t.as_sql(),
                match t {
                    ShardingType::Range => "at a key (--at KEY) or the median",
                    ShardingType::Hash => "at a ring point (--at HEX) or the middle of the arc",
                    ShardingType::List => "by values (--values a,b)",
                    ShardingType::Key =>
                        "not at all: a per-key function's keys are reassigned one by one",
                }
            )))
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32_matches_the_reference_examples() {
        // Reference 003: crc32('1') % 3 = 2, % 4 = 3; crc32('127.0.0.1') = 3619153832.
        assert_eq!(crc32("1") % 3, 2);
        assert_eq!(crc32("1") % 4, 3);
        assert_eq!(crc32("127.0.0.1"), 3619153832);
        assert_eq!(crc32("meetphp.pl"), 3254572804);
    }

    #[test]
    fn keys_files_name_every_bad_line() {
        let k = KeySet::parse("k.txt", "1\n2\n3\n").unwrap();
        assert_eq!(k.texts, vec!["1", "2", "3"]);
        assert!(k.bytes.is_none());
        let k = KeySet::parse("k.txt", "a\t10\nb\t20\n").unwrap();
        assert_eq!(k.bytes, Some(vec![10, 20]));
        let e = KeySet::parse("k.txt", "1\n\n3\nx\tbig\n").unwrap_err();
        assert_eq!(e.exit_code(), crate::ExitCode::Config);
        let msg = e.to_string();
        assert!(
            msg.starts_with("k.txt: 2 bad lines: line 2: empty key; line 4:"),
            "{msg}"
        );
        let long = "x".repeat(300);
        let e = KeySet::parse("k.txt", &format!("1\n{long}\n")).unwrap_err();
        assert!(e.to_string().contains("line 2: key longer than 255 bytes"));
        let many = "\n".repeat(20) + "1";
        let e = KeySet::parse("k.txt", &many).unwrap_err().to_string();
        assert!(
            e.contains("20 bad lines") && e.contains("and 10 more"),
            "{e}"
        );
        assert!(KeySet::parse("k.txt", "").is_err());
    }

    #[test]
    fn unknown_schemes_and_zero_nodes_are_refused() {
        let e = "modulus".parse::<Scheme>().unwrap_err();
        assert_eq!(e.exit_code(), crate::ExitCode::Usage);
        assert!(e.to_string().contains("\"modulus\""));
        let k = KeySet::generated(0, 10, 1).unwrap();
        let r = simulate(
            &k,
            &Scheme::DEFAULTS,
            Resize {
                from: 3,
                to: 0,
                points: 160,
            },
        );
        assert_eq!(r.unwrap_err().exit_code(), crate::ExitCode::Usage);
    }

    #[test]
    fn ketama_rings_have_points_per_node() {
        let r = ring(3, 160, HashFn::Md5);
        assert_eq!(r.len(), 480);
        assert!(r.windows(2).all(|w| w[0] <= w[1]));
        for n in 0..3 {
            assert_eq!(r.iter().filter(|(_, x)| *x == n).count(), 160);
        }
    }

    #[test]
    fn expected_shares() {
        assert!((expected_modulo_moved(3, 4) - 0.75).abs() < 1e-12);
        assert!((expected_modulo_moved(4, 8) - 0.5).abs() < 1e-12);
        assert!((expected_consistent_moved(4, 5) - 0.2).abs() < 1e-12);
    }

    /// An independent reimplementation: every key hashed from its text again, rings built
    /// from the digests and searched linearly, ranges by arithmetic on the coordinates.
    fn brute_force(keys: &[String], scheme: Scheme, n: usize, m: usize, points: u32) -> u64 {
        use md5::{Digest, Md5};
        let digest = |t: &str| -> [u8; 16] { Md5::digest(t.as_bytes()).into() };
        let ring_of = |nodes: usize, f: HashFn| -> Vec<(u32, u32)> {
            let mut r = Vec::new();
            for node in 0..nodes {
                for j in 0..points {
                    let p = match f {
                        HashFn::Crc32 => {
                            crc32fast::hash(format!("node{}-{j}", node + 1).as_bytes())
                        }
                        HashFn::Md5 => {
                            let d = digest(&format!("node{}-{}", node + 1, j / 4));
                            let h = (j % 4) as usize;
                            u32::from(d[4 * h])
                                | u32::from(d[4 * h + 1]) << 8
                                | u32::from(d[4 * h + 2]) << 16
                                | u32::from(d[4 * h + 3]) << 24
                        }
                    };
                    r.push((p, node as u32));
                }
            }
            r
        };
        let ring_pick = |r: &[(u32, u32)], h: u32| -> u32 {
            let after = r.iter().filter(|(p, _)| *p >= h).min();
            after.or_else(|| r.iter().min()).unwrap().1
        };
        let all_int = keys.iter().all(|k| k.parse::<i64>().is_ok());
        let coords: Vec<i128> = keys.iter().map(|k| range_coordinate(k, all_int)).collect();
        let (lo, hi) = (*coords.iter().min().unwrap(), *coords.iter().max().unwrap());
        let (rb, ra) = match scheme {
            Scheme::Consistent(f) => (ring_of(n, f), ring_of(m, f)),
            _ => (Vec::new(), Vec::new()),
        };
        let mut moved = 0;
        for (k, c) in keys.iter().zip(&coords) {
            let (b, a) = match scheme {
                Scheme::Modulo(HashFn::Crc32) => {
                    let h = crc32fast::hash(k.as_bytes());
                    (h % n as u32, h % m as u32)
                }
                Scheme::Modulo(HashFn::Md5) => {
                    let h = u128::from_be_bytes(digest(k));
                    ((h % n as u128) as u32, (h % m as u128) as u32)
                }
                Scheme::Consistent(f) => {
                    let h = match f {
                        HashFn::Crc32 => crc32fast::hash(k.as_bytes()),
                        HashFn::Md5 => {
                            let d = digest(k);
                            u32::from_le_bytes([d[0], d[1], d[2], d[3]])
                        }
                    };
                    (ring_pick(&rb, h), ring_pick(&ra, h))
                }
                Scheme::Range => {
                    let w = hi - lo + 1;
                    let f = |parts: usize| {
                        // the largest i with lo + ceil(i * w / parts) <= c
                        (0..parts)
                            .rev()
                            .find(|i| {
                                (*i as i128 * w).div_euclid(parts as i128) <= c - lo
                                    && ((*i as i128 * w) % parts as i128 == 0
                                        || (*i as i128 * w).div_euclid(parts as i128) < c - lo)
                            })
                            .unwrap() as u32
                    };
                    (f(n), f(m))
                }
                Scheme::Directory => unreachable!(),
            };
            if b != a {
                moved += 1;
            }
        }
        moved
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(24))]
        #[test]
        fn every_scheme_agrees_with_a_brute_force_count(
            ints in proptest::collection::vec(-5000i64..5000, 1..300),
            words in proptest::collection::vec("[a-z0-9.]{1,12}", 1..200),
            n in 1usize..8,
            m in 1usize..8,
            points in 1u32..40,
            use_words in proptest::bool::ANY,
        ) {
            let texts: Vec<String> = if use_words {
                words
            } else {
                ints.iter().map(|i| i.to_string()).collect()
            };
            let keys = KeySet { texts: texts.clone(), ..KeySet::default() };
            let out = simulate(&keys, &Scheme::DEFAULTS, Resize { from: n, to: m, points }).unwrap();
            for (o, s) in out.iter().zip(Scheme::DEFAULTS) {
                proptest::prop_assert_eq!(o.moved_keys, brute_force(&texts, s, n, m, points), "{}", s);
                proptest::prop_assert_eq!(o.per_node_before.iter().map(|l| l.keys).sum::<u64>(), texts.len() as u64);
                proptest::prop_assert_eq!(o.per_node_after.len(), m);
            }
        }
    }

    #[test]
    fn shares_follow_the_closed_forms_on_many_keys() {
        let keys = KeySet::generated(1, 200_001, 1).unwrap();
        let out = simulate(
            &keys,
            &Scheme::DEFAULTS,
            Resize {
                from: 4,
                to: 5,
                points: 160,
            },
        )
        .unwrap();
        let share = |name: &str| out.iter().find(|o| o.scheme == name).unwrap().moved_share;
        // Modulo: 1 - min(N, M)/lcm(N, M) = 1 - 4/20.
        assert!((share("modulo-crc32") - 0.8).abs() < 0.01);
        assert!((share("modulo-md5") - 0.8).abs() < 0.01);
        // Consistent: about 1/M of the keys (the new node's share).
        assert!((share("consistent-md5") - 0.2).abs() < 0.04);
        assert!((share("consistent-crc32") - 0.2).abs() < 0.06);
        // Even ranges, 4 -> 5: boundaries at 1/4, 2/4, 3/4 against 1/5 .. 4/5; keys between
        // i/5 and i/4 (and the mirror) move: 1/20 + 2/20 + 3/20 + 4/20 = 1/2.
        assert!((share("range") - 0.5).abs() < 0.001);
    }

    #[test]
    fn directory_split_of_a_hash_arc_moves_only_its_upper_half() {
        use crate::directory::{DirNode, Function, HashRow};
        let shard = |id: u32, node: &str| Shard {
            id,
            func_id: 1,
            node: node.into(),
            host: String::new(),
            port: 0,
            state: ShardState::Online,
            availability: crate::directory::Availability::Available,
            version: 1,
        };
        let snap = Snapshot {
            nodes: ["a", "b"]
                .iter()
                .map(|n| DirNode {
                    name: n.to_string(),
                    host: "h".into(),
                    port: 1,
                })
                .collect(),
            functions: vec![Function {
                id: 1,
                name: "h".into(),
                sharding_type: ShardingType::Hash,
                key_type: KeyType::Int,
            }],
            shards: vec![shard(1, "a")],
            points: vec![HashRow {
                func_id: 1,
                point: RingPoint(0),
                shard_id: 1,
            }],
            ..Snapshot::default()
        };
        let keys = KeySet::generated(0, 20_000, 1).unwrap();
        let change = DirChange::Split {
            shard: 1,
            to: "b".into(),
            at: SplitAt::Middle,
        };
        let o = simulate_directory(&snap, "h", &keys, &change).unwrap();
        // The lone point's arc is the whole ring: the new point at 2^127 takes the keys whose
        // MD5 is above it (strictly, as lookups do), about half.
        let expect = keys.texts.iter().filter(|t| md5(t) > 1u128 << 127).count() as u64;
        assert_eq!(o.moved_keys, expect);
        assert_eq!(o.shard_changes, Some(expect));
        assert!((o.moved_share - 0.5).abs() < 0.02);
        assert_eq!(o.nodes_after, 2);
    }
}
