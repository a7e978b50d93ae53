//! A schema's views, triggers, routines and events with their full definitions and
//! creation contexts, read from one node, and the comparison of two such sets: what a
//! copy's verification checks beyond rows ("compare sets, not only rows").
//!
//! Each object is described by named fields: its `SHOW CREATE` text (`definition`, with
//! the schema's own name replaced by a placeholder, so `db_3` and its copy `db_7` compare
//! equal; an event's ENABLE / DISABLE masked there, its `status` being a field of its own)
//! and every column of information_schema that records how and in which session it was
//! created (definer, SQL SECURITY, sql_mode, character_set_client, collation_connection,
//! database collation, a trigger's ACTION_ORDER, an event's schedule and time zone). The
//! schema itself is one more object, with its default character set and collation.
//! Creation and alteration times and an event's originating server are not compared.
//!
//! [`read_definitions`] reads one side (any [`Server`], a dry run's read-only session
//! included); [`diff_definitions`] is pure; [`compare_objects`] does both.

use super::statements::ObjectKind;
use super::Stmt;
use super::{col_string, statements, Server};
use crate::error::{Error, Result};
use crate::ident::Ident;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt;

/// What an object is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ObjectType {
    /// The schema itself (its default character set and collation).
    Schema,
    /// A view.
    View,
    /// A stored function.
    Function,
    /// A stored procedure.
    Procedure,
    /// A trigger.
    Trigger,
    /// An event.
    Event,
}

impl fmt::Display for ObjectType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ObjectType::Schema => "schema",
            ObjectType::View => "view",
            ObjectType::Function => "function",
            ObjectType::Procedure => "procedure",
            ObjectType::Trigger => "trigger",
            ObjectType::Event => "event",
        })
    }
}

/// One object as read from a node: its fields by name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DefinedObject {
    /// What it is.
    pub kind: ObjectType,
    /// Its name (the schema object: empty).
    pub name: String,
    /// Its fields: `definition` and the catalog's columns, lower case.
    pub fields: BTreeMap<String, String>,
    /// A trigger whose table is renamed now (a shard fence's hidden name): the server
    /// rewrote its `ON table ... FOR` clause then (see [`trigger_table_clause_canonical`]).
    #[serde(skip)]
    pub table_clause_rewritten: bool,
}

/// The objects of one schema on one node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SchemaDefinitions {
    /// The schema's name there.
    pub schema: String,
    /// The schema object (absent when the schema does not exist) and every view, function,
    /// procedure, trigger and event of it.
    pub objects: Vec<DefinedObject>,
}

/// How events' status is compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EventStatusCheck {
    /// Equal on both sides (after the flip: the target's events were enabled).
    #[default]
    Equal,
    /// Before the flip: a target event DISABLED where the source's is ENABLED is expected
    /// (a copy creates its events disabled); any other difference counts.
    TargetDisabledBeforeFlip,
}

/// One difference between the source's and the target's objects.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ObjectDifference {
    /// What the object is.
    pub kind: ObjectType,
    /// Its name (empty for the schema itself).
    pub name: String,
    /// The field that differs; `exists` when the object is on one side only.
    pub field: String,
    /// The source's value (None: the object or field is not there).
    pub source: Option<String>,
    /// The target's value (None: the object or field is not there).
    pub target: Option<String>,
}

impl fmt::Display for ObjectDifference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shown = |v: &Option<String>| match v {
            Some(v) => format!("{v:?}"),
            None => "absent".to_string(),
        };
        let what = if self.name.is_empty() {
            self.kind.to_string()
        } else {
            format!("{} {}", self.kind, self.name)
        };
        if self.field == "exists" {
            let side = if self.source.is_some() {
                "on the source only"
            } else {
                "on the target only"
            };
            return write!(f, "{what}: {side}");
        }
        write!(
            f,
            "{what}: {} differs: source {}, target {}",
            self.field,
            shown(&self.source),
            shown(&self.target)
        )
    }
}

/// The name every definition's own schema is given before comparing.
const SCHEMA_PLACEHOLDER: &str = "__shardctl_schema__";

/// A definition's text made comparable: its own schema's name as a qualifier (quoted or
/// bare, read under its sql_mode's quoting) left out; every quoted
/// plain identifier written bare (the server re-quotes a trigger's table when it is
/// renamed); tables named in `renamed` (now → own name: a shard fence's hidden names) given
/// their own names; an event's status keyword masked.
pub fn normalise_definition(
    text: &str,
    schema: &Ident,
    sql_mode: Option<&str>,
    is_event: bool,
    renamed: &BTreeMap<String, String>,
) -> String {
    let placeholder = Ident::new("schema", SCHEMA_PLACEHOLDER).expect("a plain identifier");
    let retargeted = retarget_for_mode(text, schema, &placeholder, sql_mode);
    // A reference to the object's own schema means the same qualified or not (and SHOW
    // CREATE VIEW leaves the qualifier out when the session's default schema is the view's).
    let out = plain_identifiers(&retargeted, sql_mode.is_some_and(has_ansi_quotes), renamed)
        .replace(&format!("{SCHEMA_PLACEHOLDER}."), "");
    if !is_event {
        return out;
    }
    match event_status_span(&out) {
        Some(span) => format!("{}<status>{}", &out[..span.start], &out[span.end..]),
        None => out,
    }
}

/// Writes quoted identifiers that need no quotes bare and the others back-quoted, and
/// renames those in `renamed`; strings and comments are left as they are.
fn plain_identifiers(text: &str, ansi_quotes: bool, renamed: &BTreeMap<String, String>) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let is_ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'$';
    let plain = |name: &str| {
        !name.is_empty() && name.bytes().all(is_ident) && !name.bytes().all(|b| b.is_ascii_digit())
    };
    let name_of = |name: &str| {
        renamed
            .get(name)
            .cloned()
            .unwrap_or_else(|| name.to_string())
    };
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let quote_ident = b == b'`' || (b == b'"' && ansi_quotes);
        let skip_to = literal_or_comment_end(text, i, ansi_quotes);
        if let Some(j) = skip_to {
            out.push_str(&text[i..j]);
            i = j;
            continue;
        }
        if quote_ident {
            let mut j = i + 1;
            while j < bytes.len() {
                if bytes[j] == b {
                    if bytes.get(j + 1) == Some(&b) {
                        j += 2;
                        continue;
                    }
                    break;
                }
                j += 1;
            }
            let end = (j + 1).min(bytes.len());
            let q = if b == b'"' { "\"" } else { "`" };
            let inner = text[i + 1..end.saturating_sub(1).max(i + 1)].replace(&q.repeat(2), q);
            if plain(&inner) {
                out.push_str(&name_of(&inner));
            } else {
                // Any other name in back-quotes, however it was quoted.
                out.push('`');
                out.push_str(&inner.replace('`', "``"));
                out.push('`');
            }
            i = end;
            continue;
        }
        if is_ident(b) {
            let mut j = i;
            while j < bytes.len() && is_ident(bytes[j]) {
                j += 1;
            }
            out.push_str(&name_of(&text[i..j]));
            i = j;
            continue;
        }
        let ch = text[i..].chars().next().expect("inside the text");
        out.push(ch);
        i += ch.len_utf8();
    }
    out
}

/// A trigger's definition with the whitespace and comments around the table it names
/// (`ON <table> FOR EACH ROW`) written as single spaces; None when the text has no such
/// clause. MariaDB rewrites that clause as `ON `new name` FOR` whenever the trigger's
/// table is renamed, which a shard fence does: under the fence the source's text differs
/// there from the copy's (which keeps the bytes as they were written, a CRLF and tab before
/// `FOR` in the public sakila schema), and only there.
pub fn trigger_table_clause_canonical(text: &str) -> Option<String> {
    let tokens = top_level_tokens(text);
    let word = |t: &Token, w: &str| {
        t.kind == TokenKind::Word && text[t.span.clone()].eq_ignore_ascii_case(w)
    };
    let trigger = tokens.iter().position(|t| word(t, "TRIGGER"))?;
    // The ON that follows the trigger's event (a trigger may be named `on`).
    let on = (trigger..tokens.len()).find(|&i| {
        word(&tokens[i], "ON")
            && tokens[trigger..i]
                .iter()
                .rev()
                .find(|t| t.kind != TokenKind::Space)
                .is_some_and(|t| ["INSERT", "UPDATE", "DELETE"].iter().any(|e| word(t, e)))
    })?;
    let mut i = on + 1;
    let skip_space = |mut i: usize| {
        while tokens.get(i).is_some_and(|t| t.kind == TokenKind::Space) {
            i += 1;
        }
        i
    };
    i = skip_space(i);
    let name_start = tokens.get(i)?.span.start;
    let mut name_end;
    loop {
        let part = tokens.get(i)?;
        if !matches!(part.kind, TokenKind::Word | TokenKind::Quoted) {
            return None;
        }
        name_end = part.span.end;
        i += 1;
        match tokens.get(i) {
            Some(t) if t.kind == TokenKind::Other && &text[t.span.clone()] == "." => i += 1,
            _ => break,
        }
    }
    let for_kw = tokens.get(skip_space(i))?;
    if !word(for_kw, "FOR") {
        return None;
    }
    Some(format!(
        "{} {} {}",
        &text[..tokens[on].span.end],
        &text[name_start..name_end],
        &text[for_kw.span.start..]
    ))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TokenKind {
    /// Whitespace or a comment (`/* */`, `-- ` or `#` to the end of the line).
    Space,
    /// A bare word.
    Word,
    /// A back-quoted or double-quoted name (or double-quoted string).
    Quoted,
    /// A single-quoted string.
    Str,
    /// Any other character.
    Other,
}

struct Token {
    kind: TokenKind,
    span: std::ops::Range<usize>,
}

/// A definition cut into tokens, enough to find its keywords outside strings, quoted
/// names and comments.
fn top_level_tokens(text: &str) -> Vec<Token> {
    let bytes = text.as_bytes();
    let is_word = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b >= 0x80;
    let line_end = |i: usize| text[i..].find('\n').map_or(bytes.len(), |n| i + n);
    let mut out: Vec<Token> = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let (kind, end) = if b.is_ascii_whitespace() {
            let n = bytes[i..]
                .iter()
                .take_while(|c| c.is_ascii_whitespace())
                .count();
            (TokenKind::Space, i + n)
        } else if b == b'#' || text[i..].starts_with("-- ") || text[i..].starts_with("--\t") {
            (TokenKind::Space, line_end(i))
        } else if text[i..].starts_with("/*") {
            let end = text[i + 2..]
                .find("*/")
                .map_or(bytes.len(), |n| i + 2 + n + 2);
            (TokenKind::Space, end)
        } else if b == b'\'' || b == b'"' || b == b'`' {
            let mut j = i + 1;
            while j < bytes.len() {
                if bytes[j] == b'\\' && b != b'`' {
                    j += 2;
                    continue;
                }
                if bytes[j] == b {
                    if bytes.get(j + 1) == Some(&b) {
                        j += 2;
                        continue;
                    }
                    break;
                }
                j += 1;
            }
            let kind = if b == b'\'' {
                TokenKind::Str
            } else {
                TokenKind::Quoted
            };
            (kind, (j + 1).min(bytes.len()))
        } else if is_word(b) {
            let n = bytes[i..].iter().take_while(|c| is_word(**c)).count();
            (TokenKind::Word, i + n)
        } else {
            (
                TokenKind::Other,
                i + text[i..].chars().next().map_or(1, char::len_utf8),
            )
        };
        out.push(Token { kind, span: i..end });
        i = end;
    }
    out
}

/// Rows of a catalog statement as text (NULL as None), by column position.
fn text_rows(server: &mut Server, st: &super::Stmt) -> Result<Vec<Vec<Option<String>>>> {
    Ok(server
        .rows(st)?
        .into_iter()
        .map(|r| {
            r.unwrap()
                .into_iter()
                .map(|v| match v {
                    mysql::Value::NULL => None,
                    mysql::Value::Bytes(b) => Some(String::from_utf8_lossy(&b).into_owned()),
                    other => Some(other.as_sql(true).trim_matches('\'').to_string()),
                })
                .collect()
        })
        .collect())
}

/// Builds an object from a catalog row: `names` names its columns after the first (the
/// object's name), NULL shown as `NULL`.
fn described(kind: ObjectType, names: &[&str], row: &[Option<String>]) -> DefinedObject {
    let fields = names
        .iter()
        .zip(row.iter().skip(1))
        .map(|(n, v)| {
            (
                n.to_string(),
                v.clone().unwrap_or_else(|| "NULL".to_string()),
            )
        })
        .collect();
    DefinedObject {
        kind,
        name: row.first().cloned().flatten().unwrap_or_default(),
        fields,
        table_clause_rewritten: false,
    }
}

/// Reads the schema object, views, functions, procedures, triggers and events of `schema`
/// on `server`, definitions normalised (see [`normalise_definition`]). A schema that does
/// not exist reads as no object at all.
pub fn read_definitions(server: &mut Server, schema: &Ident) -> Result<SchemaDefinitions> {
    read_definitions_renamed(server, schema, &[])
}

/// [`read_definitions`] of a schema whose tables are renamed now, as (name now, own name):
/// the source under a shard fence, whose triggers follow their tables to the hidden names.
pub fn read_definitions_renamed(
    server: &mut Server,
    schema: &Ident,
    renamed: &[(String, String)],
) -> Result<SchemaDefinitions> {
    let renamed: BTreeMap<String, String> = renamed.iter().cloned().collect();
    // SHOW CREATE VIEW and an event's head quote names by the reading session's sql_mode.
    let session_mode = server.session_sql_mode()?;
    let mut objects = Vec::new();
    let Some((charset, collation)) = server.schema_charset(schema)? else {
        return Ok(SchemaDefinitions {
            schema: schema.to_string(),
            objects,
        });
    };
    objects.push(DefinedObject {
        kind: ObjectType::Schema,
        name: String::new(),
        fields: BTreeMap::from([
            ("default_character_set".to_string(), charset.to_string()),
            ("default_collation".to_string(), collation.to_string()),
        ]),
        table_clause_rewritten: false,
    });

    // (IS_UPDATABLE is left out: it follows the state of the tables, a fence's included.)
    let view_fields = [
        "definer",
        "security_type",
        "check_option",
        "algorithm",
        "character_set_client",
        "collation_connection",
    ];
    // Every object's SHOW CREATE text is read at the end, in few round trips.
    let mut pending = Vec::new();
    for row in text_rows(server, &statements::views_described(schema))? {
        let o = described(ObjectType::View, &view_fields, &row);
        let name = Ident::new("view", &o.name)?;
        pending.push(PendingDefinition {
            object: objects.len(),
            read: statements::show_create_table(schema, &name, true),
            columns: &["Create View"],
            quoting: Some(session_mode.clone()),
            event: false,
        });
        objects.push(o);
    }

    let routine_fields = [
        "routine_type",
        "definer",
        "security_type",
        "sql_data_access",
        "is_deterministic",
        "comment",
        "sql_mode",
        "character_set_client",
        "collation_connection",
        "database_collation",
    ];
    for row in text_rows(server, &statements::routines_described(schema))? {
        let mut o = described(ObjectType::Function, &routine_fields, &row);
        let kind = if o.fields.get("routine_type").map(String::as_str) == Some("PROCEDURE") {
            o.kind = ObjectType::Procedure;
            ObjectKind::Procedure
        } else {
            ObjectKind::Function
        };
        pending.push(definition_of(schema, kind, &o, objects.len(), None)?);
        objects.push(o);
    }

    let trigger_fields = [
        "table",
        "timing",
        "event",
        "action_order",
        "action_orientation",
        "definer",
        "sql_mode",
        "character_set_client",
        "collation_connection",
        "database_collation",
    ];
    let first_trigger = objects.len();
    for row in text_rows(server, &statements::triggers_described(schema))? {
        let mut o = described(ObjectType::Trigger, &trigger_fields, &row);
        // Switched guards belong to an operation's fence on this node, not to the shard:
        // they are neither copied nor compared.
        if statements::is_switched_guard(&o.name) {
            continue;
        }
        if let Some(own) = o.fields.get("table").and_then(|t| renamed.get(t)) {
            o.fields.insert("table".into(), own.clone());
            o.table_clause_rewritten = true;
        }
        pending.push(definition_of(
            schema,
            ObjectKind::Trigger,
            &o,
            objects.len(),
            None,
        )?);
        objects.push(o);
    }
    renumber_without_switched_guards(&mut objects[first_trigger..]);

    let event_fields = [
        "definer",
        "time_zone",
        "event_type",
        "execute_at",
        "interval_value",
        "interval_field",
        "starts",
        "ends",
        "status",
        "on_completion",
        "comment",
        "sql_mode",
        "character_set_client",
        "collation_connection",
        "database_collation",
    ];
    for row in text_rows(server, &statements::events_described(schema))? {
        let o = described(ObjectType::Event, &event_fields, &row);
        // Its head is quoted by the session, its body by its own sql_mode.
        let quoting = has_ansi_quotes(&session_mode).then_some("ANSI_QUOTES");
        pending.push(definition_of(
            schema,
            ObjectKind::Event,
            &o,
            objects.len(),
            quoting,
        )?);
        objects.push(o);
    }
    let texts = server.rows_of_each(&pending.iter().map(|p| p.read.clone()).collect::<Vec<_>>())?;
    for (p, rows) in pending.iter().zip(texts) {
        let o = &mut objects[p.object];
        let ddl = rows
            .first()
            .and_then(|r| col_string(r, p.columns))
            .ok_or_else(|| {
                Error::server(
                    server.name(),
                    format!("no definition for {} {schema}.{}", o.kind, o.name),
                )
            })?;
        o.fields.insert(
            "definition".into(),
            normalise_definition(&ddl, schema, p.quoting.as_deref(), p.event, &renamed),
        );
    }
    Ok(SchemaDefinitions {
        schema: schema.to_string(),
        objects,
    })
}

/// Gives each trigger its place among the triggers kept (those of the same table, timing
/// and event, switched guards left out) as its `action_order`. A switched guard goes ahead
/// of a table's triggers while an operation's fence is armed, which moves them one place
/// down on that node only; the shard's own order is the one they keep among themselves.
fn renumber_without_switched_guards(triggers: &mut [DefinedObject]) {
    let chain = |o: &DefinedObject| {
        ["table", "timing", "event"].map(|f| o.fields.get(f).cloned().unwrap_or_default())
    };
    let order = |o: &DefinedObject| {
        o.fields
            .get("action_order")
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
    };
    let mut places: Vec<usize> = (0..triggers.len()).collect();
    places.sort_by_key(|&i| (chain(&triggers[i]), order(&triggers[i])));
    let mut previous: Option<[String; 3]> = None;
    let mut rank = 0u64;
    for i in places {
        let this = chain(&triggers[i]);
        rank = if previous.as_ref() == Some(&this) {
            rank + 1
        } else {
            1
        };
        previous = Some(this);
        if triggers[i].fields.contains_key("action_order") {
            triggers[i]
                .fields
                .insert("action_order".into(), rank.to_string());
        }
    }
}

/// An object whose `SHOW CREATE` text is still to be read: where it goes in the list, the
/// statement, the columns that may hold the text, and how to normalise it.
struct PendingDefinition {
    object: usize,
    read: Stmt,
    columns: &'static [&'static str],
    /// The sql_mode that quotes it.
    quoting: Option<String>,
    /// An event (its schedule's head quoted by the session).
    event: bool,
}

/// The reading of `o`'s `SHOW CREATE` text, normalised under `quoting` (an sql_mode) when
/// given, else under the object's own sql_mode.
fn definition_of(
    schema: &Ident,
    kind: ObjectKind,
    o: &DefinedObject,
    object: usize,
    quoting: Option<&str>,
) -> Result<PendingDefinition> {
    let name = Ident::new(kind.keyword(), &o.name)?;
    Ok(PendingDefinition {
        object,
        read: statements::show_create_object(schema, kind, &name),
        columns: &[
            "SQL Original Statement",
            "Create Procedure",
            "Create Function",
            "Create Event",
        ],
        quoting: quoting
            .map(str::to_string)
            .or_else(|| o.fields.get("sql_mode").cloned()),
        event: kind == ObjectKind::Event,
    })
}

/// Every difference between two schemas' objects, in object order (kind, then name), each
/// naming the object and the field. Pure.
pub fn diff_definitions(
    source: &SchemaDefinitions,
    target: &SchemaDefinitions,
    events: EventStatusCheck,
) -> Vec<ObjectDifference> {
    let index = |d: &SchemaDefinitions| -> BTreeMap<(ObjectType, String), DefinedObject> {
        d.objects
            .iter()
            .map(|o| ((o.kind, o.name.clone()), o.clone()))
            .collect()
    };
    let (a, b) = (index(source), index(target));
    let mut keys: Vec<&(ObjectType, String)> = a.keys().chain(b.keys()).collect();
    keys.sort();
    keys.dedup();
    let mut out = Vec::new();
    for key in keys {
        let (kind, name) = key.clone();
        let (s, t) = match (a.get(key), b.get(key)) {
            (Some(s), Some(t)) => (s, t),
            (s, t) => {
                out.push(ObjectDifference {
                    kind,
                    name,
                    field: "exists".into(),
                    source: s.map(|_| "yes".to_string()),
                    target: t.map(|_| "yes".to_string()),
                });
                continue;
            }
        };
        let mut fields: Vec<&String> = s.fields.keys().chain(t.fields.keys()).collect();
        fields.sort();
        fields.dedup();
        let rewritten = s.table_clause_rewritten || t.table_clause_rewritten;
        for field in fields {
            let (sv, tv) = (s.fields.get(field), t.fields.get(field));
            if sv == tv {
                continue;
            }
            if rewritten && field == "definition" {
                let canonical = |v: Option<&String>| {
                    v.map(|v| trigger_table_clause_canonical(v).unwrap_or_else(|| v.clone()))
                };
                if canonical(sv) == canonical(tv) {
                    continue;
                }
            }
            let expected = kind == ObjectType::Event
                && field == "status"
                && events == EventStatusCheck::TargetDisabledBeforeFlip
                && sv.map(String::as_str) == Some("ENABLED")
                && tv.map(String::as_str) == Some("DISABLED");
            if expected {
                continue;
            }
            out.push(ObjectDifference {
                kind,
                name: name.clone(),
                field: field.clone(),
                source: sv.cloned(),
                target: tv.cloned(),
            });
        }
    }
    out
}

/// How [`compare_objects`] compares.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CompareOptions {
    /// Events' status (see [`EventStatusCheck`]).
    pub events: EventStatusCheck,
    /// Tables of the source schema renamed now, as (name now, own name): a shard fence's
    /// hidden names (`MoveState::fenced_tables` of that schema).
    pub source_renamed: Vec<(String, String)>,
}

/// Compares the views, functions, procedures, triggers and events of `source_schema` on
/// `source` with those of `target_schema` on `target` (and the schemas' default character
/// set and collation): every difference, naming the object and the field; empty when they
/// match. Schema names inside definitions are normalised, so a split's `db_3` compares
/// with its copy `db_7`; see [`CompareOptions`] for events' status and a fenced source.
pub fn compare_objects(
    source: &mut Server,
    source_schema: &Ident,
    target: &mut Server,
    target_schema: &Ident,
    options: &CompareOptions,
) -> Result<Vec<ObjectDifference>> {
    let a = read_definitions_renamed(source, source_schema, &options.source_renamed)?;
    let b = read_definitions(target, target_schema)?;
    Ok(diff_definitions(&a, &b, options.events))
}

/// Rewrites references to the source schema so a definition works in the target schema:
/// every `` `from`. `` and every unquoted `from.` that stands as a whole identifier (servers
/// keep a trigger's, routine's or event's text as it was written), never inside a string,
/// a comment or another identifier. (A table alias spelled like the schema and used as
/// `alias.column` would be rewritten too: the text alone cannot tell them apart.)
pub fn retarget(ddl: &str, from: &Ident, to: &Ident) -> String {
    retarget_in_mode(ddl, from, to, false)
}

/// [`retarget`] for a text written under `sql_mode`: with ANSI_QUOTES, `"name"` is an
/// identifier (rewritten like `` `name` ``), not a string.
pub fn retarget_for_mode(ddl: &str, from: &Ident, to: &Ident, sql_mode: Option<&str>) -> String {
    retarget_in_mode(ddl, from, to, sql_mode.is_some_and(has_ansi_quotes))
}

fn retarget_in_mode(ddl: &str, from: &Ident, to: &Ident, ansi_quotes: bool) -> String {
    if from == to {
        return ddl.to_string();
    }
    let (from_name, to_quoted) = (from.as_str(), to.quoted());
    let bytes = ddl.as_bytes();
    let mut out = String::with_capacity(ddl.len());
    let mut i = 0;
    let is_ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b >= 0x80;
    while i < bytes.len() {
        let b = bytes[i];
        // Strings and comments are copied as they are.
        let skip_to = literal_or_comment_end(ddl, i, ansi_quotes);
        if let Some(j) = skip_to {
            out.push_str(&ddl[i..j]);
            i = j;
            continue;
        }
        if b == b'`' || b == b'"' {
            let mut j = i + 1;
            while j < bytes.len() {
                if bytes[j] == b {
                    if bytes.get(j + 1) == Some(&b) {
                        j += 2;
                        continue;
                    }
                    break;
                }
                j += 1;
            }
            let end = (j + 1).min(bytes.len());
            let q = if b == b'"' { "\"" } else { "`" };
            let name = ddl[i + 1..end.saturating_sub(1).max(i + 1)].replace(&q.repeat(2), q);
            if name == from_name && bytes.get(end) == Some(&b'.') {
                out.push_str(&to_quoted);
            } else {
                out.push_str(&ddl[i..end]);
            }
            i = end;
            continue;
        }
        if is_ident(b) {
            let mut j = i;
            while j < bytes.len() && is_ident(bytes[j]) {
                j += 1;
            }
            let preceded_by_dot = i > 0 && bytes[i - 1] == b'.';
            if &ddl[i..j] == from_name && bytes.get(j) == Some(&b'.') && !preceded_by_dot {
                out.push_str(&to_quoted);
            } else {
                out.push_str(&ddl[i..j]);
            }
            i = j;
            continue;
        }
        let ch = ddl[i..].chars().next().expect("inside the text");
        out.push(ch);
        i += ch.len_utf8();
    }
    out
}

/// Where an event's status keyword (`ENABLE`, `DISABLE`, `DISABLE ON SLAVE`) stands in
/// its `SHOW CREATE EVENT` text: right after `ON COMPLETION [NOT] PRESERVE`, which the
/// server always prints after the schedule (a schedule holds only numbers, an interval
/// unit and quoted times).
pub fn event_status_span(ddl: &str) -> Option<std::ops::Range<usize>> {
    let at = [" ON COMPLETION NOT PRESERVE ", " ON COMPLETION PRESERVE "]
        .iter()
        .filter_map(|p| ddl.find(p).map(|i| i + p.len()))
        .min()?;
    let rest = &ddl[at..];
    ["DISABLE ON SLAVE", "ENABLE", "DISABLE"]
        .iter()
        .find(|k| {
            rest.starts_with(*k)
                && rest[k.len()..]
                    .chars()
                    .next()
                    .is_none_or(char::is_whitespace)
        })
        .map(|k| at..at + k.len())
}

/// Whether an sql_mode makes `"` quote identifiers.
pub fn has_ansi_quotes(sql_mode: &str) -> bool {
    sql_mode
        .split(',')
        .any(|f| f == "ANSI_QUOTES" || f == "ANSI")
}

/// Where the string literal or comment starting at byte `i` of `text` ends (the byte after
/// it), or None when none starts there: what the rewriting of a definition copies as it
/// is. A double quote starts an identifier, not a string, under ANSI_QUOTES.
fn literal_or_comment_end(text: &str, i: usize, ansi_quotes: bool) -> Option<usize> {
    let bytes = text.as_bytes();
    let b = bytes[i];
    match b {
        b'\'' | b'"' if !(b == b'"' && ansi_quotes) => {
            let mut j = i + 1;
            while j < bytes.len() && bytes[j] != b {
                j += if bytes[j] == b'\\' { 2 } else { 1 };
            }
            Some((j + 1).min(bytes.len()))
        }
        b'#' => Some(text[i..].find('\n').map_or(bytes.len(), |n| i + n)),
        b'-' if text[i..].starts_with("-- ") => {
            Some(text[i..].find('\n').map_or(bytes.len(), |n| i + n))
        }
        b'/' if text[i..].starts_with("/*") => Some(
            text[i + 2..]
                .find("*/")
                .map_or(bytes.len(), |n| i + 2 + n + 2),
        ),
        _ => None,
    }
}

/// A table's definition as compared between the two sides: hidden names read back as the
/// shard's (`renames`: hidden, name) and the AUTO_INCREMENT counter (which rolled-back
/// inserts advance on the source alone) left out.
pub fn comparable_definition(ddl: &str, renames: &[(String, String)]) -> String {
    let mut ddl = ddl.to_string();
    for (hidden, name) in renames {
        ddl = ddl.replace(&format!("`{hidden}`"), &format!("`{name}`"));
        // InnoDB renames generated foreign-key names along with their table.
        ddl = ddl.replace(&format!("`{hidden}_ibfk_"), &format!("`{name}_ibfk_"));
    }
    let mut out = String::with_capacity(ddl.len());
    let mut rest = ddl.as_str();
    while let Some(i) = rest.find(" AUTO_INCREMENT=") {
        out.push_str(&rest[..i]);
        let after = &rest[i + " AUTO_INCREMENT=".len()..];
        let digits = after.chars().take_while(|c| c.is_ascii_digit()).count();
        rest = &after[digits..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(s: &str) -> Ident {
        Ident::new("schema", s).unwrap()
    }

    fn obj(kind: ObjectType, name: &str, fields: &[(&str, &str)]) -> DefinedObject {
        DefinedObject {
            kind,
            name: name.into(),
            fields: fields
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            table_clause_rewritten: false,
        }
    }

    fn defs(schema: &str, objects: Vec<DefinedObject>) -> SchemaDefinitions {
        SchemaDefinitions {
            schema: schema.into(),
            objects,
        }
    }

    #[test]
    fn definitions_in_differently_named_schemas_normalise_alike() {
        let (db3, db7) = (id("db_3"), id("db_7"));
        let none = BTreeMap::new();
        let norm = |text: &str, schema: &Ident, mode: Option<&str>, event: bool| {
            normalise_definition(text, schema, mode, event, &none)
        };
        // A view as the server prints it.
        assert_eq!(
            norm(
                "CREATE VIEW `db_3`.`v` AS select `db_3`.`t`.`id` AS `id` from `db_3`.`t`",
                &db3,
                None,
                false
            ),
            norm(
                "CREATE VIEW `db_7`.`v` AS select `db_7`.`t`.`id` AS `id` from `db_7`.`t`",
                &db7,
                None,
                false
            )
        );
        // The copy writes a bare `db_3.t` as `db_7`.t; strings stay as they are.
        let a = norm("INSERT INTO db_3.t VALUES ('db_3.t')", &db3, None, false);
        assert_eq!(
            a,
            norm("INSERT INTO `db_7`.t VALUES ('db_3.t')", &db7, None, false)
        );
        assert_eq!(a, "INSERT INTO t VALUES ('db_3.t')");
        // Qualified by its own schema or not, the same.
        assert_eq!(
            a,
            norm("INSERT INTO `t` VALUES ('db_3.t')", &db7, None, false)
        );
        // Under ANSI_QUOTES a double-quoted name is a name, otherwise a string.
        assert_eq!(
            norm("SELECT * FROM \"db_3\".t", &db3, Some("ANSI_QUOTES"), false),
            norm("SELECT * FROM `db_7`.t", &db7, Some("ANSI_QUOTES"), false)
        );
        assert_ne!(
            norm("SELECT \"db_3\"", &db3, None, false),
            norm("SELECT \"db_7\"", &db7, None, false)
        );
        // Another schema's name stays what it is.
        assert_ne!(
            norm("SELECT * FROM db_4.t", &db3, None, false),
            norm("SELECT * FROM db_5.t", &db7, None, false)
        );
        // An event's status is masked in its text.
        let e = "CREATE EVENT `e` ON SCHEDULE AT '2035-12-31 23:59:00' ON COMPLETION PRESERVE ENABLE DO SELECT 1";
        assert_eq!(
            norm(e, &db3, None, true),
            norm(&e.replace("ENABLE", "DISABLE"), &db7, None, true)
        );
        assert!(norm(e, &db3, None, true).contains("PRESERVE <status> DO"));
    }

    #[test]
    fn a_fenced_source_compares_under_its_tables_own_names() {
        let db3 = id("db_3");
        let renamed = BTreeMap::from([("_shardctl_op1_10".to_string(), "scratch".to_string())]);
        let fenced = normalise_definition(
            "CREATE TRIGGER g BEFORE DELETE ON `_shardctl_op1_10` FOR EACH ROW SET @x = '_shardctl_op1_10'",
            &db3,
            None,
            false,
            &renamed,
        );
        let copied = normalise_definition(
            "CREATE TRIGGER g BEFORE DELETE ON scratch FOR EACH ROW SET @x = '_shardctl_op1_10'",
            &db3,
            None,
            false,
            &BTreeMap::new(),
        );
        assert_eq!(fenced, copied);
        // A name that needs its quotes keeps them.
        let kept = normalise_definition("SELECT `a b`, `x`", &db3, None, false, &renamed);
        assert_eq!(kept, "SELECT `a b`, x");
        let ansi = normalise_definition(
            "SELECT \"a b\", \"x\"",
            &db3,
            Some("ANSI_QUOTES"),
            false,
            &renamed,
        );
        assert_eq!(ansi, kept);
    }

    #[test]
    fn a_trigger_table_clause_rewritten_by_a_rename_compares_alike_and_nothing_else_does() {
        let written = "CREATE DEFINER=shardctl@`%` TRIGGER customer_create_date BEFORE INSERT ON customer\r\n\t/* on */ FOR EACH ROW SET NEW.note = 'ON x\r\n\tFOR'";
        let renamed = "CREATE DEFINER=shardctl@`%` TRIGGER customer_create_date BEFORE INSERT ON customer FOR EACH ROW SET NEW.note = 'ON x\r\n\tFOR'";
        assert_eq!(trigger_table_clause_canonical(written).unwrap(), renamed);
        assert_eq!(trigger_table_clause_canonical(renamed).unwrap(), renamed);
        assert_eq!(
            trigger_table_clause_canonical(
                "CREATE TRIGGER `on` AFTER DELETE ON\n`a b`.t\tFOR EACH ROW SET @x = 1"
            )
            .unwrap(),
            "CREATE TRIGGER `on` AFTER DELETE ON `a b`.t FOR EACH ROW SET @x = 1"
        );
        assert_eq!(
            trigger_table_clause_canonical(
                "CREATE TRIGGER on BEFORE INSERT ON t\r\n\tFOR EACH ROW SET @x = 1"
            )
            .unwrap(),
            "CREATE TRIGGER on BEFORE INSERT ON t FOR EACH ROW SET @x = 1"
        );
        assert!(trigger_table_clause_canonical("CREATE VIEW v AS SELECT 1").is_none());
        let trigger = |text: &str, rewritten: bool| {
            let mut o = obj(ObjectType::Trigger, "t", &[("definition", text)]);
            o.table_clause_rewritten = rewritten;
            defs("db_3", vec![o])
        };
        // Only a trigger whose table the fence renamed is compared that way ...
        assert!(diff_definitions(
            &trigger(renamed, true),
            &trigger(written, false),
            EventStatusCheck::Equal
        )
        .is_empty());
        assert_eq!(
            diff_definitions(
                &trigger(renamed, false),
                &trigger(written, false),
                EventStatusCheck::Equal
            )
            .len(),
            1
        );
        // ... and every other byte still counts.
        let body_changed = written.replace("'ON x\r\n", "'ON x\n");
        assert_eq!(
            diff_definitions(
                &trigger(renamed, true),
                &trigger(&body_changed, false),
                EventStatusCheck::Equal
            )
            .len(),
            1
        );
    }

    #[test]
    fn triggers_keep_their_places_among_themselves_when_a_switched_guard_goes_first() {
        let t = |name: &str, table: &str, event: &str, order: &str| {
            obj(
                ObjectType::Trigger,
                name,
                &[
                    ("table", table),
                    ("timing", "BEFORE"),
                    ("event", event),
                    ("action_order", order),
                ],
            )
        };
        // On the armed source the switched guards (left out) held place 1 of items' INSERT
        // and UPDATE chains; the orders read there are one place down.
        let mut armed = vec![
            t("audit_bi", "items", "INSERT", "3"),
            t("own_bi", "items", "INSERT", "2"),
            t("own_bu", "items", "UPDATE", "2"),
            t("other_bi", "other", "INSERT", "1"),
        ];
        renumber_without_switched_guards(&mut armed);
        let places: Vec<(&str, &str)> = armed
            .iter()
            .map(|o| (o.name.as_str(), o.fields["action_order"].as_str()))
            .collect();
        assert_eq!(
            places,
            vec![
                ("audit_bi", "2"),
                ("own_bi", "1"),
                ("own_bu", "1"),
                ("other_bi", "1")
            ]
        );
    }

    #[test]
    fn differences_name_the_object_and_the_field() {
        let source = defs(
            "db_3",
            vec![
                obj(
                    ObjectType::Schema,
                    "",
                    &[("default_collation", "utf8mb4_unicode_ci")],
                ),
                obj(
                    ObjectType::Trigger,
                    "t1",
                    &[("sql_mode", "ANSI_QUOTES"), ("action_order", "2")],
                ),
                obj(ObjectType::Event, "e_on", &[("status", "ENABLED")]),
                obj(ObjectType::Event, "e_off", &[("status", "DISABLED")]),
                obj(ObjectType::View, "only_here", &[]),
            ],
        );
        let target = defs(
            "db_7",
            vec![
                obj(
                    ObjectType::Schema,
                    "",
                    &[("default_collation", "latin1_swedish_ci")],
                ),
                obj(
                    ObjectType::Trigger,
                    "t1",
                    &[("sql_mode", "STRICT_TRANS_TABLES"), ("action_order", "2")],
                ),
                obj(ObjectType::Event, "e_on", &[("status", "DISABLED")]),
                obj(ObjectType::Event, "e_off", &[("status", "ENABLED")]),
                obj(ObjectType::Function, "only_there", &[]),
            ],
        );
        let before = diff_definitions(&source, &target, EventStatusCheck::TargetDisabledBeforeFlip);
        let shown: Vec<String> = before.iter().map(|d| d.to_string()).collect();
        assert_eq!(
            shown,
            vec![
                "schema: default_collation differs: source \"utf8mb4_unicode_ci\", target \"latin1_swedish_ci\"",
                "view only_here: on the source only",
                "function only_there: on the target only",
                "trigger t1: sql_mode differs: source \"ANSI_QUOTES\", target \"STRICT_TRANS_TABLES\"",
                "event e_off: status differs: source \"DISABLED\", target \"ENABLED\"",
            ]
        );
        // After the flip every status counts.
        let after = diff_definitions(&source, &target, EventStatusCheck::Equal);
        assert_eq!(after.len(), before.len() + 1);
        assert!(after
            .iter()
            .any(|d| d.kind == ObjectType::Event && d.name == "e_on" && d.field == "status"));
        // Equal sets: nothing.
        assert!(diff_definitions(&source, &source, EventStatusCheck::Equal).is_empty());
    }

    #[test]
    fn definitions_compare_without_name_and_counter() {
        let renames = vec![
            ("__shardctl_op1_0".to_string(), "t".to_string()),
            ("__shardctl_op1_1".to_string(), "p".to_string()),
        ];
        let a = "CREATE TABLE `t` (\n  `id` int NOT NULL AUTO_INCREMENT,\n  FOREIGN KEY (`id`) REFERENCES `p` (`id`)\n) ENGINE=InnoDB AUTO_INCREMENT=17 DEFAULT CHARSET=latin1";
        let b = "CREATE TABLE `__shardctl_op1_0` (\n  `id` int NOT NULL AUTO_INCREMENT,\n  FOREIGN KEY (`id`) REFERENCES `__shardctl_op1_1` (`id`)\n) ENGINE=InnoDB AUTO_INCREMENT=9 DEFAULT CHARSET=latin1";
        let fk_a = "CONSTRAINT `t_ibfk_1` FOREIGN KEY (`id`) REFERENCES `p` (`id`)";
        let fk_b = "CONSTRAINT `__shardctl_op1_0_ibfk_1` FOREIGN KEY (`id`) REFERENCES `__shardctl_op1_1` (`id`)";
        assert_eq!(
            comparable_definition(fk_a, &[]),
            comparable_definition(fk_b, &renames)
        );
        assert_eq!(
            comparable_definition(a, &[]),
            comparable_definition(b, &renames)
        );
        let c = b.replace("latin1", "utf8mb4");
        assert_ne!(
            comparable_definition(a, &[]),
            comparable_definition(&c, &renames)
        );
    }
}
