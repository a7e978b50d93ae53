//! Re-creating a schema's objects on another node: the schema (with its default character
//! set and collation) and its tables before the data; views, routines, triggers and events
//! after it (triggers after, so they do not fire on the copied rows).
//!
//! Each view, routine, trigger and event is re-created as mariadb-dump does: its text as it
//! was written (read with `character_set_results = binary`), in a session set to its own
//! creation context (character_set_client, collation_connection, sql_mode, an event's
//! time_zone), with its schema's collation as it was when it was created. Triggers are
//! created in the order they fire, so each keeps its ACTION_ORDER (FOLLOWS / PRECEDES).
//! Events are created DISABLED: a copy must never run an event before it owns the shard;
//! [`enable_events_statements`] enables after the flip those enabled on the source.

use super::SchemaPair;
use crate::error::{Error, Result};
use crate::ident::Ident;
use crate::server::catalog::TableInfo;
use crate::server::definitions::{event_status_span, has_ansi_quotes, retarget_for_mode};
use crate::server::statements::{ContextValue, CreationContext, DefinedKind, ObjectKind};
use crate::server::{statements, Server, Stmt};
use serde::{Deserialize, Serialize};

/// The definitions read from the source, ready to replay.
#[derive(Debug, Clone, Default)]
pub struct SchemaObjects {
    /// The source schema's default character set and collation.
    pub charset: Option<(ContextValue, ContextValue)>,
    /// Base tables and their CREATE TABLE.
    pub tables: Vec<(Ident, String)>,
    /// Views, routines, triggers and events, in creation order.
    pub after_data: Vec<ObjectDef>,
    /// The events enabled on the source (created disabled; enabled after the flip).
    pub enabled_events: Vec<EventToEnable>,
}

/// One view, routine, trigger or event to re-create.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ObjectDef {
    /// What it is, for messages: `trigger orders_a_second`.
    pub label: String,
    /// Its definition, retargeted to the target schema (an event's made DISABLE).
    pub ddl: String,
    /// The session it was created in.
    pub context: CreationContext,
    /// The collation of its schema when it was created (routines, triggers, events).
    #[serde(default)]
    pub database_collation: Option<ContextValue>,
    /// It is a trigger (a copy kept current by a change stream creates its triggers last).
    #[serde(default)]
    pub trigger: bool,
}

/// An event to enable on a target: its schema there, name, definer and creation context.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EventToEnable {
    /// The schema on the target.
    pub schema: Ident,
    /// Its name.
    pub name: Ident,
    /// Its definer, `user@host`.
    pub definer: String,
    /// The session it was created in (ALTER EVENT would otherwise give it the session's).
    pub context: CreationContext,
}

/// An event's `SHOW CREATE EVENT` text made to create it DISABLE.
pub fn event_created_disabled(ddl: &str) -> Option<String> {
    let span = event_status_span(ddl)?;
    Some(format!("{}DISABLE{}", &ddl[..span.start], &ddl[span.end..]))
}

/// Reads one object's definition and context from `pair.from`, retargeted to `pair.to`.
fn read_object(
    server: &mut Server,
    pair: &SchemaPair,
    kind: DefinedKind,
    name: &Ident,
    session_ansi: bool,
) -> Result<ObjectDef> {
    let raw = server.show_create_raw(&pair.from, kind, name)?;
    let label = format!("{kind} {name}");
    if !raw.as_written() {
        return Err(Error::Refused(format!(
            "{label} of {}: its text holds non-ASCII characters written in character set {}, which shardctl can only send as UTF-8; use --method dump",
            pair.from, raw.context.character_set_client
        )));
    }
    let mut text = raw.ddl.clone();
    // A view's text, and an event's head (definer and name), are printed quoted by the
    // reading session's sql_mode; with ANSI_QUOTES there, make them back-quoted, which
    // every sql_mode reads.
    if session_ansi {
        match kind {
            DefinedKind::View => text = backquote_identifiers(&text),
            DefinedKind::Object(ObjectKind::Event) => {
                let head = text.find(" ON SCHEDULE ").unwrap_or(0);
                text = format!("{}{}", backquote_identifiers(&text[..head]), &text[head..]);
            }
            _ => {}
        }
    }
    let mode = raw.context.sql_mode.as_ref().map(ContextValue::as_str);
    let mut ddl = retarget_for_mode(&text, &pair.from, &pair.to, mode);
    if kind == DefinedKind::Object(ObjectKind::Event) {
        ddl = event_created_disabled(&ddl).ok_or_else(|| {
            Error::server(
                server.name(),
                format!("{label}: no ENABLE / DISABLE clause in its definition: {ddl}"),
            )
        })?;
    }
    Ok(ObjectDef {
        label,
        ddl,
        context: raw.context,
        database_collation: raw.database_collation,
        trigger: kind == DefinedKind::Object(ObjectKind::Trigger),
    })
}

/// Checks definitions carried across a crash in the journal against the server they were
/// read from: each must be one [`read`] gives for `pair` now — same label, text, creation
/// context and schema collation. A trigger of a table the shard fence renamed names the
/// hidden table now (without its schema); `renamed` (table, hidden name) maps it back: such
/// a trigger matches when everything but its `ON` clause is the same text and the journal's
/// `ON` names that table (in `pair.to`, or unqualified). The journal holds data, not code:
/// a definition the server would not give again is never replayed, and the first one is
/// named in the refusal.
pub fn check_journaled(
    server: &mut Server,
    pair: &SchemaPair,
    journaled: &[ObjectDef],
    renamed: &[(String, String)],
) -> Result<()> {
    if journaled.is_empty() {
        return Ok(());
    }
    let fresh = read(server, pair)?.after_data;
    for def in journaled {
        let same = fresh.iter().any(|f| {
            f.label == def.label
                && f.context == def.context
                && f.database_collation == def.database_collation
                && (f.ddl == def.ddl || same_trigger_under_fence(&f.ddl, &def.ddl, pair, renamed))
        });
        if !same {
            return Err(Error::Refused(format!(
                "the journal's definition of {} for {} is not the one {} holds in {}: it is not replayed (abort the operation)",
                def.label,
                pair.to,
                server.name(),
                pair.from
            )));
        }
    }
    Ok(())
}

/// A trigger's text cut around its `ON` clause: (before, the table it names, from `FOR
/// EACH ROW` on).
fn trigger_on_clause(ddl: &str) -> Option<(&str, &str, &str)> {
    let upper = ddl.to_ascii_uppercase();
    let end = upper.find(" FOR EACH ROW")?;
    let start = upper[..end].rfind(" ON ")?;
    Some((&ddl[..start], ddl[start + 4..end].trim(), &ddl[end..]))
}

/// True when `fresh` (read under the fence) and `journaled` (read before it) are the same
/// trigger: equal but for the `ON` clause, where `fresh` names a hidden table of `renamed`
/// and `journaled` names its table.
fn same_trigger_under_fence(
    fresh: &str,
    journaled: &str,
    pair: &SchemaPair,
    renamed: &[(String, String)],
) -> bool {
    let unquote = |s: &str| s.trim_matches('`').to_string();
    let (Some((head, on, tail)), Some((j_head, j_on, j_tail))) =
        (trigger_on_clause(fresh), trigger_on_clause(journaled))
    else {
        return false;
    };
    if head != j_head || tail != j_tail {
        return false;
    }
    let Some((table, _)) = renamed.iter().find(|(_, hidden)| unquote(on) == *hidden) else {
        return false;
    };
    let (schema, named) = match j_on.rsplit_once('.') {
        Some((s, t)) => (Some(unquote(s)), unquote(t)),
        None => (None, unquote(j_on)),
    };
    named == *table && schema.is_none_or(|s| s == pair.to.as_str())
}

/// Reads the events of `pair.from` (to be created DISABLE in `pair.to`).
pub fn read_events(server: &mut Server, pair: &SchemaPair) -> Result<Vec<ObjectDef>> {
    let ansi = session_ansi(server)?;
    server
        .objects(&pair.from, ObjectKind::Event)?
        .iter()
        .map(|name| {
            read_object(
                server,
                pair,
                DefinedKind::Object(ObjectKind::Event),
                name,
                ansi,
            )
        })
        .collect()
}

/// Whether the session reads under ANSI_QUOTES.
fn session_ansi(server: &mut Server) -> Result<bool> {
    Ok(has_ansi_quotes(&server.session_sql_mode()?))
}

/// A text read under ANSI_QUOTES with its double-quoted identifiers back-quoted; strings
/// and comments untouched.
pub fn backquote_identifiers(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let skip_to = match b {
            b'\'' | b'`' => {
                let mut j = i + 1;
                while j < bytes.len() && bytes[j] != b {
                    j += if bytes[j] == b'\\' && b == b'\'' {
                        2
                    } else {
                        1
                    };
                }
                Some((j + 1).min(bytes.len()))
            }
            _ => None,
        };
        if let Some(j) = skip_to {
            out.push_str(&text[i..j]);
            i = j;
            continue;
        }
        if b == b'"' {
            let mut j = i + 1;
            while j < bytes.len() {
                if bytes[j] == b'"' {
                    if bytes.get(j + 1) == Some(&b'"') {
                        j += 2;
                        continue;
                    }
                    break;
                }
                j += 1;
            }
            let end = (j + 1).min(bytes.len());
            let inner = text[i + 1..end.saturating_sub(1).max(i + 1)].replace("\"\"", "\"");
            out.push('`');
            out.push_str(&inner.replace('`', "``"));
            out.push('`');
            i = end;
            continue;
        }
        let ch = text[i..].chars().next().expect("inside the text");
        out.push(ch);
        i += ch.len_utf8();
    }
    out
}

/// The events of `pair.from` that are ENABLED there, as they are to be enabled in `pair.to`.
pub fn enabled_events(server: &mut Server, pair: &SchemaPair) -> Result<Vec<EventToEnable>> {
    Ok(server
        .events_status(&pair.from)?
        .into_iter()
        .filter(|e| e.enabled)
        .map(|e| EventToEnable {
            schema: pair.to.clone(),
            name: e.name,
            definer: e.definer,
            context: e.context,
        })
        .collect())
}

/// Reads every object of `pair.from`: its default character set, its tables, then
/// functions, procedures, views, triggers (in firing order) and events.
pub fn read(server: &mut Server, pair: &SchemaPair) -> Result<SchemaObjects> {
    let mut out = SchemaObjects {
        charset: server.schema_charset(&pair.from)?,
        ..Default::default()
    };
    let ansi = session_ansi(server)?;
    let mut views = Vec::new();
    for t in server.tables(&pair.from)? {
        if t.is_view {
            views.push(t.name);
        } else {
            let ddl = server.show_create(&pair.from, &t)?;
            out.tables.push((t.name.clone(), ddl));
        }
    }
    for kind in [ObjectKind::Function, ObjectKind::Procedure] {
        for name in server.objects(&pair.from, kind)? {
            out.after_data.push(read_object(
                server,
                pair,
                DefinedKind::Object(kind),
                &name,
                ansi,
            )?);
        }
    }
    for name in &views {
        out.after_data
            .push(read_object(server, pair, DefinedKind::View, name, ansi)?);
    }
    for name in server.triggers_in_order(&pair.from)? {
        // An operation's switched guards read a switch row of this node only: a copy of
        // one elsewhere would refuse every write there.
        if crate::server::statements::is_switched_guard(name.as_str()) {
            continue;
        }
        out.after_data.push(read_object(
            server,
            pair,
            DefinedKind::Object(ObjectKind::Trigger),
            &name,
            ansi,
        )?);
    }
    out.after_data.extend(read_events(server, pair)?);
    out.enabled_events = enabled_events(server, pair)?;
    Ok(out)
}

/// Creates the target schema and its tables. Refuses a schema that already exists.
pub fn create_tables(
    server: &mut Server,
    pair: &SchemaPair,
    objects: &SchemaObjects,
) -> Result<()> {
    if server.schema_exists(&pair.to)? {
        return Err(Error::Refused(format!(
            "schema {} already exists on node {}",
            pair.to,
            server.name()
        )));
    }
    for st in create_tables_statements(pair, objects) {
        server.exec(&st)?;
    }
    Ok(())
}

/// The statements that create `pair.to` (with the source's default character set and
/// collation) with the tables of `objects` (empty).
pub fn create_tables_statements(pair: &SchemaPair, objects: &SchemaObjects) -> Vec<Stmt> {
    let mut out = vec![
        match &objects.charset {
            Some((cs, coll)) => statements::create_schema_with_charset(&pair.to, cs, coll),
            None => statements::create_schema_if_not_exists(&pair.to),
        },
        statements::use_schema(&pair.to),
        statements::foreign_key_checks(false),
    ];
    out.extend(
        objects
            .tables
            .iter()
            .map(|(_, ddl)| statements::replay_definition(ddl)),
    );
    out.push(statements::foreign_key_checks(true));
    out
}

/// One object's statements: what sets its context before it, its definition, and what
/// puts the schema's collation back after it.
pub struct ObjectStatements {
    /// Its schema's collation as it was then (when it differs now), its session context.
    pub before: Vec<Stmt>,
    /// Its definition.
    pub create: Stmt,
    /// The schema's collation back.
    pub after: Vec<Stmt>,
}

/// The statements that create `obj` in `schema`, whose default collation is `collation`.
pub fn object_statements(
    schema: &Ident,
    collation: Option<&ContextValue>,
    obj: &ObjectDef,
) -> ObjectStatements {
    let mut before = Vec::new();
    let mut after = Vec::new();
    if let (Some(then), Some(now)) = (&obj.database_collation, collation) {
        if then != now {
            before.push(statements::alter_schema_collation(schema, then));
            after.push(statements::alter_schema_collation(schema, now));
        }
    }
    before.push(statements::session_context(&obj.context));
    ObjectStatements {
        before,
        create: statements::replay_definition(&obj.ddl),
        after,
    }
}

fn schema_collation(objects: &SchemaObjects) -> Option<&ContextValue> {
    objects.charset.as_ref().map(|(_, coll)| coll)
}

/// The statements that create the views, routines, triggers and events of `objects` in
/// `pair.to`, each in its own context, in the order of a first pass (the live run retries
/// views that depend on later ones).
pub fn after_data_statements(pair: &SchemaPair, objects: &SchemaObjects) -> Vec<Stmt> {
    if objects.after_data.is_empty() {
        return Vec::new();
    }
    let mut out = vec![
        statements::use_schema(&pair.to),
        statements::save_session_context(),
    ];
    for obj in &objects.after_data {
        let st = object_statements(&pair.to, schema_collation(objects), obj);
        out.extend(st.before);
        out.push(st.create);
        out.extend(st.after);
    }
    out.push(statements::restore_session_context());
    out
}

/// Creates views, routines, triggers and events, each in its own context; views that
/// depend on other views are retried until a pass makes no progress. The session's own
/// settings are restored afterwards.
pub fn create_after_data(
    server: &mut Server,
    pair: &SchemaPair,
    objects: &SchemaObjects,
) -> Result<()> {
    if objects.after_data.is_empty() {
        return Ok(());
    }
    server.exec(&statements::use_schema(&pair.to))?;
    server.exec(&statements::save_session_context())?;
    let created = create_each(server, pair, objects);
    let restored = server.exec(&statements::restore_session_context());
    created?;
    restored
}

fn create_each(server: &mut Server, pair: &SchemaPair, objects: &SchemaObjects) -> Result<()> {
    let mut pending: Vec<&ObjectDef> = objects.after_data.iter().collect();
    while !pending.is_empty() {
        let mut failed = Vec::new();
        let mut last = None;
        for obj in &pending {
            let st = object_statements(&pair.to, schema_collation(objects), obj);
            for b in &st.before {
                server.exec(b)?;
            }
            let created = server.exec(&st.create);
            for a in &st.after {
                server.exec(a)?;
            }
            if let Err(e) = created {
                last = Some(Error::server(
                    server.name(),
                    format!("creating {}: {e}", obj.label),
                ));
                failed.push(*obj);
            }
        }
        if failed.len() == pending.len() {
            return Err(last.expect("a failure was recorded"));
        }
        pending = failed;
    }
    Ok(())
}

/// The statements that enable `events` on a target (none when there are none): each
/// `ALTER DEFINER=... EVENT ... ENABLE` in the event's own creation context, which ALTER
/// EVENT would otherwise replace with the session's; the session's settings restored
/// afterwards. Enabling an enabled event changes nothing, so they can be sent again.
pub fn enable_events_statements(events: &[EventToEnable]) -> Vec<Stmt> {
    if events.is_empty() {
        return Vec::new();
    }
    let mut out = vec![statements::save_session_context()];
    for e in events {
        out.push(statements::session_context(&e.context));
        out.push(statements::enable_event(&e.schema, &e.name, &e.definer));
    }
    out.push(statements::restore_session_context());
    out
}

/// Base tables of a schema as `TableInfo`s (views left out).
pub fn base_tables(objects: &SchemaObjects) -> Vec<TableInfo> {
    objects
        .tables
        .iter()
        .map(|(name, _)| TableInfo {
            name: name.clone(),
            is_view: false,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::definitions::retarget;

    fn id(s: &str) -> Ident {
        Ident::new("schema", s).unwrap()
    }

    #[test]
    fn retarget_rewrites_quoted_and_bare_schema_names_only_as_whole_identifiers() {
        let (from, to) = (id("app_1"), id("app_7"));
        let ddl = "CREATE DEFINER=`root`@`%` TRIGGER app_1.t_upper BEFORE INSERT ON app_1.t \
                   FOR EACH ROW BEGIN INSERT INTO `app_1`.`log` VALUES ('app_1.t', \"app_1.x\"); \
                   SET @x = myapp_1.f() + app_10.g(); -- app_1.t\n /* app_1.y */ END";
        let out = retarget(ddl, &from, &to);
        assert_eq!(
            out,
            "CREATE DEFINER=`root`@`%` TRIGGER `app_7`.t_upper BEFORE INSERT ON `app_7`.t \
             FOR EACH ROW BEGIN INSERT INTO `app_7`.`log` VALUES ('app_1.t', \"app_1.x\"); \
             SET @x = myapp_1.f() + app_10.g(); -- app_1.t\n /* app_1.y */ END"
        );
    }

    #[test]
    fn retarget_keeps_a_column_or_table_that_shares_the_name() {
        let (from, to) = (id("app"), id("app_2"));
        // `x.app.col` is a column path, `app` alone is not followed by a dot.
        let ddl = "SELECT t.app, app.t.id, `app`.`t`.`app` FROM app.t JOIN x.app AS app";
        assert_eq!(
            retarget(ddl, &from, &to),
            "SELECT t.app, `app_2`.t.id, `app_2`.`t`.`app` FROM `app_2`.t JOIN x.app AS app"
        );
    }

    #[test]
    fn an_event_is_created_disabled_whatever_its_status() {
        let ddl = "CREATE DEFINER=`app`@`%` EVENT `e` ON SCHEDULE EVERY 1 DAY STARTS '2030-01-01 03:00:00' \
                   ON COMPLETION PRESERVE ENABLE COMMENT 'x ENABLE' DO DELETE FROM t";
        assert_eq!(
            event_created_disabled(ddl).unwrap(),
            ddl.replacen("PRESERVE ENABLE", "PRESERVE DISABLE", 1)
        );
        let ddl = "CREATE DEFINER=\"app\"@\"%\" EVENT \"e\" ON SCHEDULE AT '2035-12-31 23:59:00' \
                   ON COMPLETION NOT PRESERVE DISABLE ON SLAVE DO SELECT 1";
        assert_eq!(
            event_created_disabled(ddl).unwrap(),
            ddl.replacen("DISABLE ON SLAVE", "DISABLE", 1)
        );
        let ddl = "CREATE EVENT `e` ON SCHEDULE AT '2035-12-31 23:59:00' ON COMPLETION PRESERVE DISABLE DO SELECT 1";
        assert_eq!(event_created_disabled(ddl).unwrap(), ddl);
        let span = event_status_span(ddl).unwrap();
        assert_eq!(&ddl[span], "DISABLE");
        assert!(
            event_created_disabled("CREATE EVENT e ON SCHEDULE AT NOW() DO SELECT 1").is_none()
        );
    }

    #[test]
    fn retarget_under_ansi_quotes_rewrites_double_quoted_schema_names() {
        let (from, to) = (id("app_1"), id("app_7"));
        let ddl = "CREATE DEFINER=\"app\"@\"%\" FUNCTION \"f\"() RETURNS int RETURN (SELECT COUNT(*) FROM \"app_1\".\"t\" WHERE 'app_1.x' <> \"app_1\")";
        assert_eq!(
            retarget_for_mode(ddl, &from, &to, Some("ANSI_QUOTES,NO_ENGINE_SUBSTITUTION")),
            "CREATE DEFINER=\"app\"@\"%\" FUNCTION \"f\"() RETURNS int RETURN (SELECT COUNT(*) FROM `app_7`.\"t\" WHERE 'app_1.x' <> \"app_1\")"
        );
        // Without ANSI_QUOTES a double-quoted text is a string.
        assert_eq!(retarget_for_mode(ddl, &from, &to, Some("TRADITIONAL")), ddl);
    }

    #[test]
    fn double_quoted_identifiers_are_back_quoted_strings_kept() {
        assert_eq!(
            backquote_identifiers(
                "CREATE DEFINER=\"app\"@\"%\" EVENT \"a\"\"b`c\" ON SCHEDULE AT 'x \\' \"y\"' DO SELECT `q\"`"
            ),
            "CREATE DEFINER=`app`@`%` EVENT `a\"b``c` ON SCHEDULE AT 'x \\' \"y\"' DO SELECT `q\"`"
        );
        assert!(has_ansi_quotes("REAL_AS_FLOAT,ANSI_QUOTES"));
        assert!(has_ansi_quotes("ANSI"));
        assert!(!has_ansi_quotes("NO_ANSI_QUOTES_HERE,TRADITIONAL"));
    }

    #[test]
    fn retarget_leaves_text_alone_when_the_names_are_equal_or_absent() {
        let a = id("app_1");
        assert_eq!(retarget("SELECT 1", &a, &id("app_2")), "SELECT 1");
        assert_eq!(retarget("SELECT app_1.f()", &a, &a), "SELECT app_1.f()");
    }
}
