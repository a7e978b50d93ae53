//! A moving table as the stream sees it on both sides: its columns in the binary log's
//! order (generated ones are in the row images and never written), the key that finds a
//! row on the target (the primary key, else a unique index over NOT NULL columns, else the
//! table is refused), the sharding column and its filter, and the conversion of a logged
//! value into the value bound on the target.
//!
//! What the row events hold, and what is bound instead (checked against MariaDB 10.11 by
//! `tests/stream.rs`): integers come signed at their width unless the log carries their
//! signedness (MariaDB's does not), so an UNSIGNED column's value is read again as
//! unsigned from the catalog's type; YEAR comes as `1900 + stored byte`, so `1900` is the
//! year 0000; TIMESTAMP comes as seconds since the epoch, bound as the UTC date and time
//! (the applier's session is in UTC); SET comes as its bit mask's bytes, bound as the
//! number (ENUM comes as its index, bound as is: both types take numbers); DECIMAL as its
//! exact text; FLOAT and DOUBLE as their binary values, bound as such; BIT, strings, BLOBs
//! and MariaDB's JSON (a LONGTEXT) as their bytes, bound under `SET NAMES binary`; MySQL's
//! binary JSON as its JSON text.

use super::filter::KeyFilter;
use crate::error::{Error, Result};
use crate::ident::Ident;
use crate::server::{statements::KeyKind, stream as sql, Server};
use mysql::binlog::value::BinlogValue;
use mysql::Value;

/// One column of a moving table.
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnDef {
    /// Its name.
    pub name: Ident,
    /// `information_schema.columns.data_type`, lower case (`int`, `timestamp`, `set`).
    pub data_type: String,
    /// An UNSIGNED integer.
    pub unsigned: bool,
    /// It takes NULL.
    pub nullable: bool,
    /// Generated (virtual or stored): computed by the target, never written.
    pub generated: bool,
}

impl ColumnDef {
    fn is_integer(&self) -> bool {
        matches!(
            self.data_type.as_str(),
            "tinyint" | "smallint" | "mediumint" | "int" | "integer" | "bigint"
        )
    }

    fn is_string(&self) -> bool {
        matches!(
            self.data_type.as_str(),
            "char"
                | "varchar"
                | "binary"
                | "varbinary"
                | "tinytext"
                | "text"
                | "mediumtext"
                | "longtext"
                | "tinyblob"
                | "blob"
                | "mediumblob"
                | "longblob"
        )
    }
}

/// Reads a table's columns, in order.
pub fn read_columns(server: &mut Server, schema: &Ident, table: &Ident) -> Result<Vec<ColumnDef>> {
    let rows: Vec<(String, String, String, i64, i64)> = server
        .rows(&sql::table_columns(schema, table))?
        .into_iter()
        .map(|r| mysql::from_row_opt(r).map_err(|e| crate::server::row_error(server.name(), e)))
        .collect::<Result<_>>()?;
    rows.into_iter()
        .map(|(name, data_type, column_type, nullable, generated)| {
            let name = Ident::new("column", &name).map_err(|_| {
                Error::Refused(format!(
                    "column {name:?} of {schema}.{table} on {} is not a plain identifier: the stream names every column it writes",
                    server.name()
                ))
            })?;
            Ok(ColumnDef {
                name,
                unsigned: column_type.contains("unsigned"),
                data_type,
                nullable: nullable != 0,
                generated: generated != 0,
            })
        })
        .collect()
}

/// The columns of the first unique index that identifies a row by its values: the primary
/// key, else a unique index over NOT NULL columns and no column prefix. Empty when there
/// is none.
pub fn read_row_key(
    server: &mut Server,
    schema: &Ident,
    table: &Ident,
    columns: &[ColumnDef],
) -> Result<Vec<Ident>> {
    let rows: Vec<(String, String, i64)> = server
        .rows(&sql::unique_indexes(schema, table))?
        .into_iter()
        .map(|r| mysql::from_row_opt(r).map_err(|e| crate::server::row_error(server.name(), e)))
        .collect::<Result<_>>()?;
    let mut indexes: Vec<(String, Vec<(String, bool)>)> = Vec::new();
    for (index, column, prefix) in rows {
        match indexes.last_mut() {
            Some((name, cols)) if *name == index => cols.push((column, prefix != 0)),
            _ => indexes.push((index, vec![(column, prefix != 0)])),
        }
    }
    for (_, cols) in indexes {
        let usable = cols.iter().all(|(c, prefix)| {
            !prefix
                && columns
                    .iter()
                    .any(|d| d.name.as_str() == c && !d.nullable && !d.generated)
        });
        if usable {
            return cols.iter().map(|(c, _)| Ident::new("column", c)).collect();
        }
    }
    Ok(Vec::new())
}

/// A moving table, ready for the stream.
#[derive(Debug, Clone)]
pub struct TableDef {
    /// Its schema on the source.
    pub source_schema: Ident,
    /// Its schema on the target (the rewrite of the schema name).
    pub target_schema: Ident,
    /// Its name (the same on both sides).
    pub table: Ident,
    /// Its columns in the source's order, as the row images number them.
    pub columns: Vec<ColumnDef>,
    /// The indexes of the columns written on the target (not generated).
    pub written: Vec<usize>,
    /// Their names.
    pub written_names: Vec<Ident>,
    /// The indexes of the row key's columns.
    pub key: Vec<usize>,
    /// Their names.
    pub key_names: Vec<Ident>,
    /// The sharding column's index and the moving keys; None: every row moves.
    pub shard: Option<(usize, KeyFilter)>,
}

impl TableDef {
    /// `schema.table` on the source.
    pub fn source_name(&self) -> String {
        format!("{}.{}", self.source_schema, self.table)
    }

    /// Builds the definition from both sides' catalogs, refusing with one line what the
    /// stream cannot carry: no row key, a sharding column that is missing, nullable, or of
    /// a type its function's keys cannot have, written columns that differ between source
    /// and target.
    pub fn new(
        source_schema: &Ident,
        target_schema: &Ident,
        table: &Ident,
        source_columns: Vec<ColumnDef>,
        target_columns: &[ColumnDef],
        key: Vec<Ident>,
        shard: Option<(&Ident, KeyFilter)>,
    ) -> Result<TableDef> {
        let name = format!("{source_schema}.{table}");
        if source_columns.is_empty() {
            return Err(Error::Refused(format!(
                "table {name} does not exist on the source"
            )));
        }
        if target_columns.is_empty() {
            return Err(Error::Refused(format!(
                "table {target_schema}.{table} does not exist on the target"
            )));
        }
        if key.is_empty() {
            return Err(Error::Refused(format!(
                "table {name} has no primary key nor a unique key over NOT NULL columns: the stream finds the rows it updates and deletes by such a key"
            )));
        }
        let written: Vec<usize> = (0..source_columns.len())
            .filter(|&i| !source_columns[i].generated)
            .collect();
        let written_names: Vec<Ident> = written
            .iter()
            .map(|&i| source_columns[i].name.clone())
            .collect();
        let target_written: Vec<&Ident> = target_columns
            .iter()
            .filter(|c| !c.generated)
            .map(|c| &c.name)
            .collect();
        if target_written != written_names.iter().collect::<Vec<_>>() {
            return Err(Error::Refused(format!(
                "table {name} and {target_schema}.{table} differ in their columns: the stream writes the source's rows as they are"
            )));
        }
        let position = |c: &Ident| source_columns.iter().position(|d| d.name == *c);
        let key_idx = key
            .iter()
            .map(|c| {
                position(c).ok_or_else(|| {
                    Error::Internal(format!("key column {c} of {name} is not among its columns"))
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let shard = match shard {
            None => None,
            Some((column, filter)) => {
                let i = position(column).ok_or_else(|| {
                    Error::Refused(format!(
                        "the sharding column {column} is not a column of {name}"
                    ))
                })?;
                let c = &source_columns[i];
                if c.nullable {
                    return Err(Error::Refused(format!(
                        "the sharding column {name}.{column} is nullable: a NULL key belongs to no shard; make it NOT NULL first"
                    )));
                }
                let fits = match filter.kind() {
                    KeyKind::Int => c.is_integer(),
                    KeyKind::Bytes => c.is_string(),
                };
                if !fits {
                    return Err(Error::Refused(format!(
                        "the sharding column {name}.{column} is {}, which its function's keys are not",
                        c.data_type
                    )));
                }
                Some((i, filter))
            }
        };
        Ok(TableDef {
            source_schema: source_schema.clone(),
            target_schema: target_schema.clone(),
            table: table.clone(),
            columns: source_columns,
            written,
            written_names,
            key: key_idx,
            key_names: key,
            shard,
        })
    }

    /// Whether a full row image (one value per column, converted) is kept.
    pub fn keeps(&self, row: &[Value]) -> Result<bool> {
        match &self.shard {
            None => Ok(true),
            Some((i, filter)) => filter.keeps(&row[*i]),
        }
    }
}

/// The value bound on the target for a logged value of `col`.
pub fn convert(col: &ColumnDef, value: BinlogValue<'_>) -> Result<Value> {
    let v = match value {
        BinlogValue::Value(v) => v,
        BinlogValue::Jsonb(_) => Value::try_from(value).map_err(|e| {
            Error::Internal(format!("column {}: a JSON value: {e}", col.name))
        })?,
        BinlogValue::JsonDiff(_) => {
            return Err(Error::Refused(format!(
                "column {} holds a partial JSON update (binlog_row_value_options = PARTIAL_JSON): the stream needs whole values",
                col.name
            )))
        }
    };
    Ok(match (col.data_type.as_str(), v) {
        (_, Value::NULL) => Value::NULL,
        (t, Value::Int(n)) if col.unsigned && n < 0 => Value::UInt(match t {
            "tinyint" => u64::from(n as i8 as u8),
            "smallint" => u64::from(n as i16 as u16),
            "mediumint" => (n as u64) & 0xFF_FFFF,
            "int" | "integer" => u64::from(n as i32 as u32),
            _ => n as u64,
        }),
        ("year", Value::Bytes(b)) => {
            let year: i64 = std::str::from_utf8(&b)
                .ok()
                .and_then(|t| t.parse().ok())
                .ok_or_else(|| {
                    Error::Internal(format!("column {}: a YEAR that is not a number", col.name))
                })?;
            Value::Int(if year == 1900 { 0 } else { year })
        }
        ("timestamp", Value::Bytes(b)) => {
            let text = std::str::from_utf8(&b).unwrap_or_default();
            let (secs, micros) = match text.split_once('.') {
                Some((s, f)) => (s.parse::<i64>().ok(), f.parse::<u32>().ok()),
                None => (text.parse::<i64>().ok(), Some(0)),
            };
            match (secs, micros) {
                (Some(s), Some(us)) => utc(s, us),
                _ => {
                    return Err(Error::Internal(format!(
                        "column {}: a TIMESTAMP that is not seconds since the epoch",
                        col.name
                    )))
                }
            }
        }
        ("timestamp", Value::Int(s)) => utc(s, 0),
        ("set", Value::Bytes(b)) => {
            let mut mask = 0u64;
            for (i, byte) in b.iter().enumerate().take(8) {
                mask |= u64::from(*byte) << (8 * i);
            }
            Value::UInt(mask)
        }
        (_, v) => v,
    })
}

/// Seconds (and microseconds) since the epoch as a UTC date and time; 0 is the zero
/// TIMESTAMP (`0000-00-00 00:00:00`, which no other value can be: the type starts at one
/// second past the epoch).
fn utc(secs: i64, micros: u32) -> Value {
    if secs == 0 && micros == 0 {
        return Value::Date(0, 0, 0, 0, 0, 0, 0);
    }
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Days since 1970-01-01 to a civil date (the proleptic Gregorian calendar).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    Value::Date(
        year as u16,
        month as u8,
        day as u8,
        (rem / 3600) as u8,
        (rem % 3600 / 60) as u8,
        (rem % 60) as u8,
        micros,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn col(data_type: &str, unsigned: bool) -> ColumnDef {
        ColumnDef {
            name: Ident::new("column", "c").unwrap(),
            data_type: data_type.into(),
            unsigned,
            nullable: true,
            generated: false,
        }
    }

    fn conv(data_type: &str, unsigned: bool, v: Value) -> Value {
        convert(&col(data_type, unsigned), BinlogValue::Value(v)).unwrap()
    }

    #[test]
    fn unsigned_integers_logged_as_signed_are_read_at_their_width() {
        assert_eq!(conv("tinyint", true, Value::Int(-56)), Value::UInt(200));
        assert_eq!(conv("smallint", true, Value::Int(-1)), Value::UInt(65_535));
        assert_eq!(
            conv("mediumint", true, Value::Int(-1)),
            Value::UInt(16_777_215)
        );
        assert_eq!(
            conv("int", true, Value::Int(-2)),
            Value::UInt(4_294_967_294)
        );
        assert_eq!(conv("bigint", true, Value::Int(-1)), Value::UInt(u64::MAX));
        assert_eq!(conv("tinyint", false, Value::Int(-56)), Value::Int(-56));
        assert_eq!(conv("int", true, Value::Int(7)), Value::Int(7));
    }

    #[test]
    fn years_timestamps_and_sets_are_bound_as_the_server_reads_them() {
        assert_eq!(conv("year", false, Value::from("1900")), Value::Int(0));
        assert_eq!(conv("year", false, Value::from("2155")), Value::Int(2155));
        assert_eq!(
            conv("timestamp", false, Value::from("1704164645.678000")),
            Value::Date(2024, 1, 2, 3, 4, 5, 678_000)
        );
        assert_eq!(
            conv("timestamp", false, Value::from("951782400")),
            Value::Date(2000, 2, 29, 0, 0, 0, 0)
        );
        assert_eq!(
            conv("timestamp", false, Value::from("0")),
            Value::Date(0, 0, 0, 0, 0, 0, 0)
        );
        assert_eq!(conv("set", false, Value::Bytes(vec![5])), Value::UInt(5));
        assert_eq!(
            conv("set", false, Value::Bytes(vec![0, 1])),
            Value::UInt(256)
        );
        assert_eq!(conv("enum", false, Value::Int(2)), Value::Int(2));
        assert_eq!(
            conv("decimal", false, Value::from("-12.500")),
            Value::from("-12.500")
        );
        assert_eq!(
            conv("double", false, Value::Double(0.1)),
            Value::Double(0.1)
        );
    }

    #[test]
    fn partial_json_is_refused() {
        let r = convert(&col("json", false), BinlogValue::JsonDiff(Vec::new()));
        assert!(matches!(r, Err(Error::Refused(_))));
    }
}
