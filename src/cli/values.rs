//! Command-line values of library types: each `clap::ValueEnum` here is what a derive on
//! the type would generate (the value is the variant's name in kebab-case, the help its
//! doc comment's first sentence), kept in src/cli so that the library does not know clap.

use crate::copy::Method;
use crate::directory::{Availability, KeyType, ShardingType};
use crate::output::{ColorChoice, Format};
use crate::playbook::{CutoverMode, Fence, Via};
use crate::rebalance::Weight;
use crate::status::SizeSource;
use clap::builder::PossibleValue;

/// Implements `clap::ValueEnum` for a library enum from its variants, values and helps.
macro_rules! value_enum {
    ($ty:ty { $($variant:ident => $value:literal, $help:literal;)+ }) => {
        impl clap::ValueEnum for $ty {
            fn value_variants<'a>() -> &'a [Self] {
                &[$(Self::$variant),+]
            }

            fn to_possible_value(&self) -> Option<PossibleValue> {
                Some(match self {
                    $(Self::$variant => PossibleValue::new($value).help($help),)+
                })
            }
        }
    };
}

value_enum!(Format {
    Table => "table", "Human-readable tables";
    Json => "json", "One JSON document (or one JSON object per event for streaming commands)";
});

value_enum!(ColorChoice {
    Auto => "auto", "When stdout is a terminal and NO_COLOR is unset";
    Always => "always", "Always";
    Never => "never", "Never";
});

value_enum!(Weight {
    Size => "size", "Data plus index bytes";
    Rows => "rows", "Estimated rows";
    Count => "count", "Every shard weighs the same";
    Load => "load", "Load: a metrics file's figures, or table I/O counters from performance_schema";
});

value_enum!(Fence {
    Shard => "shard", "Only this shard: its tables are renamed out of reach; other shards keep writing";
    ReadOnly => "read-only", "The whole source server goes read-only (the chapter's fence)";
    Switch => "switch", "Only this shard, by guard triggers installed ahead and switched on by one row: nothing renamed, whatever the number of tables";
});

value_enum!(Via {
    Channel => "channel", "A replication channel on the target, filtered to the shard's schemas";
    Stream => "stream", "shardctl's change stream: reads the source's binary log itself and applies the rows to the target";
});

value_enum!(CutoverMode {
    Manual => "manual", "When an operator runs `shardctl cutover OP`";
    Window => "window", "Inside the daily window (UTC), or earlier on `shardctl cutover OP`";
    Auto => "auto", "At once, as soon as every `before-cutover` hook passes";
});

value_enum!(Availability {
    Available => "available", "Reads and writes reach the shard";
    NoWrites => "no-writes", "Reads reach the shard; routers refuse writes";
    Unavailable => "unavailable", "Routers refuse reads and writes; `query` refuses the shard's function";
});

value_enum!(ShardingType {
    Range => "range", "Ranges of keys, each starting at a lower bound";
    Hash => "hash", "Consistent hashing: points on an MD5 ring";
    List => "list", "Explicit lists of values";
    Key => "key", "One directory row per key, looked up key by key; new keys assigned to the least-loaded open shard";
});

value_enum!(KeyType {
    Int => "int", "A signed 64-bit integer";
    String => "string", "A string of up to 255 bytes, compared byte by byte";
});

value_enum!(SizeSource {
    Statistics => "statistics", "information_schema as the tables' statistics last left them: free, but stale right after a copy or a large change until the server recalculates them";
    Exact => "exact", "Statistics refreshed first: `ANALYZE NO_WRITE_TO_BINLOG TABLE` on every base table of every shard, then the same information_schema figures. Bytes are then the pages the indexes hold; rows stay an estimate";
});

value_enum!(Method {
    Native => "native", "In-process: one consistent snapshot, parallel readers and writers";
    Dump => "dump", "mariadb-dump / mysqldump piped into the client";
    Physical => "physical", "mariadb-backup of the shard's schemas on the source's host into a staging directory on the target's host, prepared there and imported (`ALTER TABLE ... IMPORT TABLESPACE`)";
});
