//! What the preflight of a move, split or merge reads about accounts and about the
//! shard's schemas beyond their rows: the definers of their stored objects and whether
//! those accounts exist on a node, the application account's own privileges as a node
//! sees them, nullable sharding columns and foreign keys to other schemas. Statements are
//! pure functions (golden-tested in `tests/golden_sql.rs`); the readers run them on any
//! [`Server`], a dry run's read-only session included.

use super::{Server, Stmt};
use crate::error::Result;
use crate::ident::Ident;
use mysql::Value;

/// The DEFINER of every view, routine, trigger and event of `schema`, as
/// (object kind, name, definer).
pub fn definers(schema: &Ident) -> Stmt {
    let s = || Value::from(schema.as_str());
    Stmt::with(
        "SELECT 'view', table_name, definer FROM information_schema.views WHERE table_schema = ? \
         UNION ALL SELECT LOWER(routine_type), routine_name, definer FROM information_schema.routines WHERE routine_schema = ? \
         UNION ALL SELECT 'trigger', trigger_name, definer FROM information_schema.triggers WHERE trigger_schema = ? \
         UNION ALL SELECT 'event', event_name, definer FROM information_schema.events WHERE event_schema = ? \
         ORDER BY 1, 2",
        vec![s(), s(), s(), s()],
    )
}

/// How many accounts (or roles: a role is a row with an empty host) are named exactly
/// `user`@`host`. Reads only the `User` and `Host` columns of `mysql.user` (a view over
/// `mysql.global_priv` on MariaDB 10.4+), so a column-level grant of those two suffices.
pub fn account_count(user: &str, host: &str) -> Stmt {
    Stmt::with(
        "SELECT COUNT(User) FROM mysql.user WHERE User = ? AND Host = ?",
        vec![Value::from(user), Value::from(host)],
    )
}

/// The account the session was authenticated as (`user@host`, the host as granted).
pub fn current_account() -> Stmt {
    Stmt::text("SELECT CURRENT_USER()")
}

/// The global privileges of `grantee` (`'user'@'host'`), as information_schema shows an
/// account its own.
pub fn global_privileges(grantee: &str) -> Stmt {
    Stmt::with(
        "SELECT privilege_type FROM information_schema.user_privileges WHERE grantee = ?",
        vec![Value::from(grantee)],
    )
}

/// The schema-level privileges of `grantee`, as (schema pattern as granted, privilege).
pub fn schema_privileges(grantee: &str) -> Stmt {
    Stmt::with(
        "SELECT table_schema, privilege_type FROM information_schema.schema_privileges WHERE grantee = ?",
        vec![Value::from(grantee)],
    )
}

/// The table-level privileges of `grantee` in `schema`, as (table, privilege).
pub fn table_privileges(grantee: &str, schema: &Ident) -> Stmt {
    Stmt::with(
        "SELECT table_name, privilege_type FROM information_schema.table_privileges \
         WHERE grantee = ? AND table_schema = ?",
        vec![Value::from(grantee), Value::from(schema.as_str())],
    )
}

/// `IS_NULLABLE` of `schema.table.column` (`YES` or `NO`; no row when it does not exist).
pub fn column_nullable(schema: &Ident, table: &Ident, column: &Ident) -> Stmt {
    Stmt::with(
        "SELECT is_nullable FROM information_schema.columns \
         WHERE table_schema = ? AND table_name = ? AND column_name = ?",
        vec![
            Value::from(schema.as_str()),
            Value::from(table.as_str()),
            Value::from(column.as_str()),
        ],
    )
}

/// The foreign keys of `schema`'s tables whose parent table is in another schema, as
/// (constraint, child table, parent schema, parent table).
pub fn foreign_keys_to_other_schemas(schema: &Ident) -> Stmt {
    Stmt::with(
        "SELECT constraint_name, table_name, unique_constraint_schema, referenced_table_name \
         FROM information_schema.referential_constraints \
         WHERE constraint_schema = ? AND unique_constraint_schema <> constraint_schema \
         ORDER BY table_name, constraint_name",
        vec![Value::from(schema.as_str())],
    )
}

/// Every row of `st`, converted.
fn all<T: mysql::prelude::FromRow>(server: &mut Server, st: &Stmt) -> Result<Vec<T>> {
    let name = server.name().to_string();
    server
        .rows(st)?
        .into_iter()
        .map(|r| mysql::from_row_opt(r).map_err(|e| super::row_error(&name, e)))
        .collect()
}

/// An object's definer as information_schema shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Definer {
    /// What the object is (`view`, `function`, `procedure`, `trigger`, `event`).
    pub kind: String,
    /// The object's name.
    pub object: String,
    /// The definer as shown (`user@host`, or a role's name).
    pub definer: String,
}

impl Definer {
    /// The account as (user, host): split at the last `@` (a host never holds one); a
    /// MariaDB role, shown without a host, has an empty one.
    pub fn account(&self) -> (String, String) {
        match self.definer.rsplit_once('@') {
            Some((user, host)) => (user.to_string(), host.to_string()),
            None => (self.definer.clone(), String::new()),
        }
    }
}

/// The definers of `schema`'s views, routines, triggers and events.
pub fn read_definers(server: &mut Server, schema: &Ident) -> Result<Vec<Definer>> {
    let rows: Vec<(String, String, String)> = all(server, &definers(schema))?;
    Ok(rows
        .into_iter()
        .map(|(kind, object, definer)| Definer {
            kind,
            object,
            definer,
        })
        .collect())
}

/// Whether the account (or role) `user`@`host` exists on `server`.
pub fn account_exists(server: &mut Server, user: &str, host: &str) -> Result<bool> {
    Ok(server
        .first::<i64>(&account_count(user, host))?
        .unwrap_or(0)
        > 0)
}

/// The privileges an account holds over one schema name, as a node shows the account its
/// own grants (roles' privileges are not counted).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OwnPrivileges {
    /// The account as the server matched it (`user@host`).
    pub account: String,
    /// Global privileges (`SELECT`, `INSERT`, ...).
    pub global: Vec<String>,
    /// Schema-level grants as (schema pattern, privilege): `_` and `%` are wildcards, `\`
    /// escapes the next character.
    pub schemas: Vec<(String, String)>,
    /// Table-level grants in the schema asked about, as (table, privilege).
    pub tables: Vec<(String, String)>,
}

impl OwnPrivileges {
    /// Whether `privilege` on `table` of `schema` is granted globally, by a schema-level
    /// grant whose pattern matches `schema`, or on the table itself.
    pub fn allows(&self, privilege: &str, schema: &str, table: &str) -> bool {
        let is = |p: &String| p.eq_ignore_ascii_case(privilege) || p == "ALL PRIVILEGES";
        self.global.iter().any(is)
            || self
                .schemas
                .iter()
                .any(|(pattern, p)| is(p) && schema_pattern_matches(pattern, schema))
            || self
                .tables
                .iter()
                .any(|(t, p)| is(p) && t.eq_ignore_ascii_case(table))
    }
}

/// The session's own privileges that bear on `schema`.
pub fn read_own_privileges(server: &mut Server, schema: &Ident) -> Result<OwnPrivileges> {
    let account: String = server.first(&current_account())?.unwrap_or_default();
    let (user, host) = account.rsplit_once('@').unwrap_or((account.as_str(), ""));
    let grantee = format!("'{user}'@'{host}'");
    Ok(OwnPrivileges {
        global: all(server, &global_privileges(&grantee))?,
        schemas: all(server, &schema_privileges(&grantee))?,
        tables: all(server, &table_privileges(&grantee, schema))?,
        account,
    })
}

/// Whether a schema name in a GRANT (`_` any one character, `%` any run, `\` taking the
/// next character literally) matches `name`.
pub fn schema_pattern_matches(pattern: &str, name: &str) -> bool {
    fn go(p: &[char], n: &[char]) -> bool {
        match p.first() {
            None => n.is_empty(),
            Some('%') => (0..=n.len()).any(|i| go(&p[1..], &n[i..])),
            Some('\\') if p.len() > 1 => n.first() == p.get(1) && go(&p[2..], &n[1..]),
            Some('_') => !n.is_empty() && go(&p[1..], &n[1..]),
            Some(c) => n.first() == Some(c) && go(&p[1..], &n[1..]),
        }
    }
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    go(&p, &n)
}

/// Whether `schema.table.column` is nullable (None: no such column).
pub fn is_nullable(
    server: &mut Server,
    schema: &Ident,
    table: &Ident,
    column: &Ident,
) -> Result<Option<bool>> {
    Ok(server
        .first::<String>(&column_nullable(schema, table, column))?
        .map(|v| v.eq_ignore_ascii_case("YES")))
}

/// A foreign key from a table of the schema asked about to a table of another schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutsideForeignKey {
    /// The constraint's name.
    pub constraint: String,
    /// The child table (in the schema asked about).
    pub table: String,
    /// The parent's schema.
    pub parent_schema: String,
    /// The parent table.
    pub parent_table: String,
}

/// The foreign keys of `schema` whose parent is in another schema.
pub fn read_foreign_keys_to_other_schemas(
    server: &mut Server,
    schema: &Ident,
) -> Result<Vec<OutsideForeignKey>> {
    let rows: Vec<(String, String, String, String)> =
        all(server, &foreign_keys_to_other_schemas(schema))?;
    Ok(rows
        .into_iter()
        .map(
            |(constraint, table, parent_schema, parent_table)| OutsideForeignKey {
                constraint,
                table,
                parent_schema,
                parent_table,
            },
        )
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grant_patterns_match_as_the_server_does() {
        assert!(schema_pattern_matches("shop\\_%", "shop_2"));
        assert!(!schema_pattern_matches("shop\\_%", "shopx2"));
        assert!(schema_pattern_matches("shop_2", "shopx2"));
        assert!(schema_pattern_matches("%\\_1%", "app_12"));
        assert!(!schema_pattern_matches("shop\\_1", "shop_12"));
        assert!(schema_pattern_matches("shop\\_1", "shop_1"));
    }

    #[test]
    fn definers_split_at_the_last_at_sign() {
        let d = |s: &str| Definer {
            kind: "view".into(),
            object: "v".into(),
            definer: s.into(),
        };
        assert_eq!(
            d("root@localhost").account(),
            ("root".into(), "localhost".into())
        );
        assert_eq!(d("a@b@10.0.%").account(), ("a@b".into(), "10.0.%".into()));
        assert_eq!(d("ops_role").account(), ("ops_role".into(), String::new()));
    }

    #[test]
    fn privileges_come_from_any_level() {
        let p = OwnPrivileges {
            account: "app@%".into(),
            global: vec![],
            schemas: vec![("shop\\_1".into(), "SELECT".into())],
            tables: vec![("t".into(), "INSERT".into())],
        };
        assert!(p.allows("SELECT", "shop_1", "t"));
        assert!(!p.allows("SELECT", "shop_2", "t"));
        assert!(p.allows("INSERT", "shop_2", "t"));
        assert!(!p.allows("INSERT", "shop_2", "u"));
    }
}
