//! Re-creating a schema's objects on another node: tables before the data; views,
//! routines, triggers and events after it (triggers after, so they do not fire on the
//! copied rows).

use super::SchemaPair;
use crate::error::{Error, Result};
use crate::ident::Ident;
use crate::server::catalog::{ObjectKind, TableInfo};
use crate::server::{statements, Server, Stmt};

/// The definitions read from the source, ready to replay.
#[derive(Debug, Clone, Default)]
pub struct SchemaObjects {
    /// Base tables and their CREATE TABLE.
    pub tables: Vec<(Ident, String)>,
    /// Views, routines, triggers and events, in creation order.
    pub after_data: Vec<(String, String)>,
}

/// Rewrites references to the source schema so a definition works in the target schema:
/// every `` `from`. `` and every unquoted `from.` that stands as a whole identifier (servers
/// keep a trigger's, routine's or event's text as it was written), never inside a string,
/// a comment or another identifier. (A table alias spelled like the schema and used as
/// `alias.column` would be rewritten too: the text alone cannot tell them apart.)
pub fn retarget(ddl: &str, from: &Ident, to: &Ident) -> String {
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
        let skip_to = match b {
            b'\'' | b'"' => {
                let mut j = i + 1;
                while j < bytes.len() && bytes[j] != b {
                    j += if bytes[j] == b'\\' { 2 } else { 1 };
                }
                Some((j + 1).min(bytes.len()))
            }
            b'#' => Some(ddl[i..].find('\n').map_or(bytes.len(), |n| i + n)),
            b'-' if ddl[i..].starts_with("-- ") => {
                Some(ddl[i..].find('\n').map_or(bytes.len(), |n| i + n))
            }
            b'/' if ddl[i..].starts_with("/*") => Some(
                ddl[i + 2..]
                    .find("*/")
                    .map_or(bytes.len(), |n| i + 2 + n + 2),
            ),
            _ => None,
        };
        if let Some(j) = skip_to {
            out.push_str(&ddl[i..j]);
            i = j;
            continue;
        }
        if b == b'`' {
            let mut j = i + 1;
            while j < bytes.len() {
                if bytes[j] == b'`' {
                    if bytes.get(j + 1) == Some(&b'`') {
                        j += 2;
                        continue;
                    }
                    break;
                }
                j += 1;
            }
            let end = (j + 1).min(bytes.len());
            let name = ddl[i + 1..end.saturating_sub(1).max(i + 1)].replace("``", "`");
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

/// Reads every object of `pair.from`.
pub fn read(server: &mut Server, pair: &SchemaPair) -> Result<SchemaObjects> {
    let mut out = SchemaObjects::default();
    let mut views = Vec::new();
    for t in server.tables(&pair.from)? {
        let ddl = server.show_create(&pair.from, &t)?;
        if t.is_view {
            views.push((
                format!("view {}", t.name),
                retarget(&ddl, &pair.from, &pair.to),
            ));
        } else {
            out.tables.push((t.name.clone(), ddl));
        }
    }
    out.after_data.extend(views);
    for kind in [
        ObjectKind::Function,
        ObjectKind::Procedure,
        ObjectKind::Trigger,
        ObjectKind::Event,
    ] {
        for name in server.objects(&pair.from, kind)? {
            let ddl = server.show_create_object(&pair.from, kind, &name)?;
            out.after_data.push((
                format!("{kind:?} {name}").to_lowercase(),
                retarget(&ddl, &pair.from, &pair.to),
            ));
        }
    }
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

/// The statements that create `pair.to` with the tables of `objects` (empty).
pub fn create_tables_statements(pair: &SchemaPair, objects: &SchemaObjects) -> Vec<Stmt> {
    let mut out = vec![
        statements::create_schema_if_not_exists(&pair.to),
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

/// The statements that create the views, routines, triggers and events of `objects` in
/// `pair.to`, in the order of a first pass (the live run retries views that depend on
/// later ones).
pub fn after_data_statements(pair: &SchemaPair, objects: &SchemaObjects) -> Vec<Stmt> {
    let mut out = vec![statements::use_schema(&pair.to)];
    out.extend(
        objects
            .after_data
            .iter()
            .map(|(_, ddl)| statements::replay_definition(ddl)),
    );
    out
}

/// Creates views, routines, triggers and events; views that depend on other views are
/// retried until a pass makes no progress.
pub fn create_after_data(
    server: &mut Server,
    pair: &SchemaPair,
    objects: &SchemaObjects,
) -> Result<()> {
    server.exec(&statements::use_schema(&pair.to))?;
    let mut pending: Vec<&(String, String)> = objects.after_data.iter().collect();
    while !pending.is_empty() {
        let mut failed = Vec::new();
        let mut last = None;
        for item in &pending {
            if let Err(e) = server.exec(&statements::replay_definition(&item.1)) {
                last = Some(Error::server(
                    server.name(),
                    format!("creating {}: {e}", item.0),
                ));
                failed.push(*item);
            }
        }
        if failed.len() == pending.len() {
            return Err(last.expect("a failure was recorded"));
        }
        pending = failed;
    }
    Ok(())
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
    fn retarget_leaves_text_alone_when_the_names_are_equal_or_absent() {
        let a = id("app_1");
        assert_eq!(retarget("SELECT 1", &a, &id("app_2")), "SELECT 1");
        assert_eq!(retarget("SELECT app_1.f()", &a, &a), "SELECT app_1.f()");
    }
}
