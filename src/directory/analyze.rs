//! Candidate sharding indexes from foreign keys, as the chapter computes them: columns
//! linked by foreign keys must be sharded together, so each connected set of columns is a
//! candidate. [`candidates`] is pure (foreign keys and row counts in, candidates out);
//! [`analyze_schema`] reads them from a node.

use crate::config::Inventory;
use crate::error::{Error, Result};
use crate::ident::Ident;
use crate::server::catalog::ForeignKeyColumn;
use crate::server::Server;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// One candidate sharding index.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Candidate {
    /// Columns as `table.column`, sorted.
    pub columns: Vec<String>,
    /// Tables involved with their row counts.
    pub tables: Vec<(String, u64)>,
    /// Total rows of the tables.
    pub rows: u64,
    /// Tables that also appear in another candidate (only one of the two can be used).
    pub conflicts: Vec<String>,
}

/// The candidates of `schema` on `node`: its foreign keys and its tables' row counts read
/// there; a schema the node does not hold is refused, naming both.
pub fn analyze_schema(inv: &Inventory, node: &str, schema: &Ident) -> Result<Vec<Candidate>> {
    let mut server = Server::connect_node(inv, node)?;
    if !server.schema_exists(schema)? {
        return Err(Error::Usage(format!(
            "schema {schema} not found on node {node}"
        )));
    }
    let fks = server.foreign_keys(schema)?;
    let rows = server.table_rows(schema)?;
    Ok(candidates(&fks, &rows))
}

/// Groups foreign-key columns into candidates (connected components), largest first.
pub fn candidates(fks: &[ForeignKeyColumn], rows: &BTreeMap<String, u64>) -> Vec<Candidate> {
    let mut parent: BTreeMap<String, String> = BTreeMap::new();
    fn find(parent: &mut BTreeMap<String, String>, x: &str) -> String {
        let p = parent.get(x).cloned().unwrap_or_else(|| x.to_string());
        if p == x {
            parent.insert(x.to_string(), p.clone());
            return p;
        }
        let root = find(parent, &p);
        parent.insert(x.to_string(), root.clone());
        root
    }
    for fk in fks {
        let a = format!("{}.{}", fk.table, fk.column);
        let b = format!("{}.{}", fk.referenced_table, fk.referenced_column);
        let (ra, rb) = (find(&mut parent, &a), find(&mut parent, &b));
        if ra != rb {
            parent.insert(ra, rb);
        }
    }
    let keys: Vec<String> = parent.keys().cloned().collect();
    let mut groups: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for k in keys {
        let root = find(&mut parent, &k);
        groups.entry(root).or_default().insert(k);
    }
    let mut out: Vec<Candidate> = groups
        .into_values()
        .map(|cols| {
            let tables: BTreeSet<String> = cols
                .iter()
                .map(|c| {
                    c.split_once('.')
                        .map(|(t, _)| t.to_string())
                        .unwrap_or_default()
                })
                .collect();
            let tables: Vec<(String, u64)> = tables
                .into_iter()
                .map(|t| {
                    let n = rows.get(&t).copied().unwrap_or(0);
                    (t, n)
                })
                .collect();
            Candidate {
                rows: tables.iter().map(|(_, n)| n).sum(),
                columns: cols.into_iter().collect(),
                tables,
                conflicts: Vec::new(),
            }
        })
        .collect();
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for c in &out {
        for (t, _) in &c.tables {
            *seen.entry(t.clone()).or_default() += 1;
        }
    }
    for c in &mut out {
        c.conflicts = c
            .tables
            .iter()
            .filter(|(t, _)| seen.get(t).copied().unwrap_or(0) > 1)
            .map(|(t, _)| t.clone())
            .collect();
    }
    out.sort_by(|a, b| b.rows.cmp(&a.rows).then(a.columns.cmp(&b.columns)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fk(t: &str, c: &str, rt: &str, rc: &str) -> ForeignKeyColumn {
        ForeignKeyColumn {
            table: t.into(),
            column: c.into(),
            referenced_table: rt.into(),
            referenced_column: rc.into(),
        }
    }

    #[test]
    fn employees_gives_the_chapters_two_candidates() {
        let fks = vec![
            fk("dept_emp", "emp_no", "employees", "emp_no"),
            fk("dept_emp", "dept_no", "departments", "dept_no"),
            fk("dept_manager", "emp_no", "employees", "emp_no"),
            fk("dept_manager", "dept_no", "departments", "dept_no"),
            fk("titles", "emp_no", "employees", "emp_no"),
            fk("salaries", "emp_no", "employees", "emp_no"),
        ];
        let rows: BTreeMap<String, u64> = [
            ("employees", 300),
            ("salaries", 2800),
            ("titles", 440),
            ("dept_emp", 330),
            ("dept_manager", 24),
            ("departments", 9),
        ]
        .into_iter()
        .map(|(t, n)| (t.to_string(), n))
        .collect();
        let c = candidates(&fks, &rows);
        assert_eq!(c.len(), 2);
        assert_eq!(
            c[0].columns,
            vec![
                "dept_emp.emp_no",
                "dept_manager.emp_no",
                "employees.emp_no",
                "salaries.emp_no",
                "titles.emp_no"
            ]
        );
        assert_eq!(c[0].rows, 300 + 2800 + 440 + 330 + 24);
        assert_eq!(c[0].conflicts, vec!["dept_emp", "dept_manager"]);
        assert_eq!(
            c[1].columns,
            vec![
                "departments.dept_no",
                "dept_emp.dept_no",
                "dept_manager.dept_no"
            ]
        );
        assert_eq!(c[1].conflicts, vec!["dept_emp", "dept_manager"]);
    }
}
