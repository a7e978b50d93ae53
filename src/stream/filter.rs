//! Which rows the stream keeps: those whose sharding key lies among the moving keys. The
//! moving keys are described as the SQL builders describe them ([`NotOwned`]: the keys
//! outside a range, a hash arc or a list of values, over an integer or a byte-string
//! column), and the same description is evaluated here on the values of a logged row, so
//! the stream keeps exactly the rows that the copy's, the prune's and the split guard's SQL
//! select (`tests/stream.rs` compares the two on a server with random keys and mappings).
//!
//! The SQL semantics followed: an integer key compares as a number (a BIGINT UNSIGNED above
//! the signed range too) and hashes as the MD5 of its decimal text (`MD5(CAST(col + 0 AS
//! CHAR))`); a string key compares byte by byte (`CAST(col AS BINARY)`) and hashes as the
//! MD5 of its bytes; an arc holds the hashes in `(after, up_to]` (or, wrapping past the top
//! of the ring, above `after` or at most `up_to`), compared as 32 lower-case hex digits. A
//! NULL key is kept by no filter: SQL's `NOT (NULL < ? OR ...)` is not true either (a
//! nullable sharding column is refused before the stream starts).

use crate::directory::{Coverage, KeyType};
use crate::error::{Error, Result};
use crate::ident::Ident;
use crate::prune::predicate::outside;
use crate::server::statements::{self, Condition, KeyKind, NotOwned};
use mysql::Value;

/// The moving keys of one sharding column.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyFilter {
    kind: KeyKind,
    outside: NotOwned,
}

impl KeyFilter {
    /// The keys not matched by `outside` (as [`statements::not_owned`] takes it), over a
    /// column compared as `kind` says.
    pub fn new(kind: KeyKind, outside: NotOwned) -> Self {
        KeyFilter { kind, outside }
    }

    /// The keys of `coverage` (a range, an arc of the hash ring, a list of values: a
    /// shard's or a part of one) of a function over `key_type` keys. An empty coverage
    /// moves nothing and is refused.
    pub fn of_coverage(coverage: &Coverage, key_type: KeyType) -> Result<Self> {
        let (kind, what) = outside(coverage, key_type).ok_or_else(|| {
            Error::Usage("the moving keys are empty (no range, arc or value)".into())
        })?;
        Ok(KeyFilter::new(kind, what))
    }

    /// Every key: a table that moves whole.
    pub fn everything(kind: KeyKind) -> Self {
        KeyFilter::new(kind, NotOwned::Nothing)
    }

    /// How the column compares.
    pub fn kind(&self) -> KeyKind {
        self.kind
    }

    /// The SQL this filter agrees with: the rows of `column` it keeps.
    pub fn condition(&self, column: &Ident) -> Condition {
        statements::owned(&statements::not_owned(column, self.kind, &self.outside))
    }

    /// Whether a row whose sharding column holds `key` is kept. Fails on a value of a
    /// type the column's kind cannot hold (a string for an integer key), which the
    /// preflight's column check rules out.
    pub fn keeps(&self, key: &Value) -> Result<bool> {
        if matches!(key, Value::NULL) {
            return Ok(false);
        }
        Ok(!self.is_outside(key)?)
    }

    fn is_outside(&self, key: &Value) -> Result<bool> {
        Ok(match &self.outside {
            NotOwned::Nothing => false,
            NotOwned::OutsideRange { lower, upper } => {
                let below = self.less(key, lower)?;
                let at_or_above = match upper {
                    Some(u) => !self.less(key, u)?,
                    None => false,
                };
                below || at_or_above
            }
            NotOwned::NotIn(values) => {
                let mut found = false;
                for v in values {
                    if self.equal(key, v)? {
                        found = true;
                        break;
                    }
                }
                !found
            }
            NotOwned::OutsideArc { after, up_to } => {
                let h = self.hash(key)?;
                !(h.as_str() > bound_text(after)? && h.as_str() <= bound_text(up_to)?)
            }
            NotOwned::OutsideWrappedArc { after, up_to } => {
                let h = self.hash(key)?;
                !(h.as_str() > bound_text(after)? || h.as_str() <= bound_text(up_to)?)
            }
        })
    }

    /// `key < bound` as the column compares.
    fn less(&self, key: &Value, bound: &Value) -> Result<bool> {
        Ok(match self.kind {
            KeyKind::Int => number(key)? < number(bound)?,
            KeyKind::Bytes => bytes(key)? < bytes(bound)?,
        })
    }

    fn equal(&self, key: &Value, bound: &Value) -> Result<bool> {
        Ok(match self.kind {
            KeyKind::Int => number(key)? == number(bound)?,
            KeyKind::Bytes => bytes(key)? == bytes(bound)?,
        })
    }

    /// The key's point on the ring, as the SQL computes it.
    fn hash(&self, key: &Value) -> Result<String> {
        use md5::{Digest, Md5};
        let digest: [u8; 16] = match self.kind {
            KeyKind::Int => Md5::digest(number(key)?.to_string().as_bytes()).into(),
            KeyKind::Bytes => Md5::digest(bytes(key)?).into(),
        };
        Ok(format!("{:032x}", u128::from_be_bytes(digest)))
    }
}

/// An integer key or bound, widened so that unsigned and signed values compare as numbers.
fn number(v: &Value) -> Result<i128> {
    match v {
        Value::Int(i) => Ok(i128::from(*i)),
        Value::UInt(u) => Ok(i128::from(*u)),
        other => Err(Error::Internal(format!(
            "an integer sharding key holds {}",
            other.as_sql(false)
        ))),
    }
}

/// A string key or bound.
fn bytes(v: &Value) -> Result<&[u8]> {
    match v {
        Value::Bytes(b) => Ok(b),
        other => Err(Error::Internal(format!(
            "a string sharding key holds {}",
            other.as_sql(false)
        ))),
    }
}

/// A ring point bound: 32 hex digits.
fn bound_text(v: &Value) -> Result<&str> {
    std::str::from_utf8(bytes(v)?)
        .map_err(|_| Error::Internal("a ring point bound is not text".into()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::directory::{Key, RingPoint};

    fn range(lower: i64, upper: Option<i64>) -> KeyFilter {
        KeyFilter::of_coverage(
            &Coverage::Range {
                lower: Key::Int(lower),
                upper: upper.map(Key::Int),
            },
            KeyType::Int,
        )
        .unwrap()
    }

    #[test]
    fn a_range_keeps_its_lower_bound_and_not_its_upper() {
        let f = range(10, Some(20));
        let keep = |v: Value| f.keeps(&v).unwrap();
        assert!(!keep(Value::Int(9)));
        assert!(keep(Value::Int(10)));
        assert!(keep(Value::UInt(19)));
        assert!(!keep(Value::Int(20)));
        assert!(!keep(Value::NULL), "a NULL key is nobody's");
        let open = range(10, None);
        assert!(open.keeps(&Value::UInt(u64::MAX)).unwrap());
        assert!(!range(i64::MIN, Some(0))
            .keeps(&Value::UInt(1 << 63))
            .unwrap());
        assert!(
            f.keeps(&Value::from("15")).is_err(),
            "no string in an integer key"
        );
    }

    #[test]
    fn string_keys_compare_as_bytes_and_lists_match_exactly() {
        let f = KeyFilter::of_coverage(
            &Coverage::Range {
                lower: Key::Str("b".into()),
                upper: Some(Key::Str("d".into())),
            },
            KeyType::String,
        )
        .unwrap();
        assert!(f.keeps(&Value::from("b")).unwrap());
        assert!(f.keeps(&Value::from("czz")).unwrap());
        assert!(
            !f.keeps(&Value::from("B")).unwrap(),
            "bytes, not a collation"
        );
        assert!(!f.keeps(&Value::from("d")).unwrap());
        let l = KeyFilter::of_coverage(
            &Coverage::Values {
                values: vec![Key::Str("x".into()), Key::Str("y".into())],
            },
            KeyType::String,
        )
        .unwrap();
        assert!(l.keeps(&Value::from("y")).unwrap());
        assert!(!l.keeps(&Value::from("y ")).unwrap());
    }

    #[test]
    fn an_arc_holds_the_hashes_after_its_point_up_to_the_next() {
        let h = |k: i64| RingPoint::md5(&k.to_string());
        // An arc ending exactly at key 7's hash keeps 7; one starting there does not.
        let (a, b) = (RingPoint(h(7).0 - 1), h(7));
        let arc = |point, next| {
            KeyFilter::of_coverage(
                &Coverage::Arc {
                    point,
                    next,
                    share: 0.0,
                },
                KeyType::Int,
            )
            .unwrap()
        };
        assert!(arc(a, b).keeps(&Value::Int(7)).unwrap());
        assert!(!arc(b, RingPoint(b.0 + 1)).keeps(&Value::Int(7)).unwrap());
        // The wrapped arc from b round to a holds everything but (a, b].
        assert!(!arc(b, a).keeps(&Value::Int(7)).unwrap());
        assert!(
            arc(b, a).keeps(&Value::Int(8)).unwrap() != arc(a, b).keeps(&Value::Int(8)).unwrap()
        );
        // A ring of one point: everything.
        assert!(arc(a, a).keeps(&Value::Int(7)).unwrap());
    }
}
