//! Generated employees-shaped data (the chapter's running example), written through the
//! router so every row lands on the shard its key maps to. Used by the demo and the tests.

use crate::config::Inventory;
use crate::directory::{Key, Router};
use crate::error::{Error, Result};
use crate::ident::Ident;
use crate::server::Server;
use mysql::Value;
use serde::Serialize;
use std::collections::BTreeMap;

/// The sharded tables of the employees schema and their columns, parents first.
const TABLES: [(&str, &[&str]); 5] = [
    (
        "employees",
        &[
            "emp_no",
            "birth_date",
            "first_name",
            "last_name",
            "gender",
            "hire_date",
        ],
    ),
    ("salaries", &["emp_no", "salary", "from_date", "to_date"]),
    ("titles", &["emp_no", "title", "from_date", "to_date"]),
    ("dept_emp", &["emp_no", "dept_no", "from_date", "to_date"]),
    (
        "dept_manager",
        &["emp_no", "dept_no", "from_date", "to_date"],
    ),
];

const FIRST: [&str; 8] = [
    "Georgi",
    "Bezalel",
    "Parto",
    "Chirstian",
    "Kyoichi",
    "Anneke",
    "Tzvetan",
    "Saniya",
];
const LAST: [&str; 8] = [
    "Facello",
    "Simmel",
    "Bamford",
    "Koblick",
    "Maliniak",
    "Preusig",
    "Zielinski",
    "Kalloufi",
];
const TITLES: [&str; 4] = ["Engineer", "Senior Engineer", "Staff", "Technique Leader"];

fn date(year: u32, day: u32) -> String {
    format!("{year}-{:02}-{:02}", day % 12 + 1, day % 28 + 1)
}

/// Rows of every employees table for one employee, deterministic in `emp_no`.
pub fn employee_rows(emp_no: i64) -> Vec<(&'static str, Vec<Value>)> {
    let n = emp_no.unsigned_abs() as u32;
    let hire = 1985 + n % 15;
    let dept = format!("d{:03}", n % 9 + 1);
    let mut out = vec![(
        "employees",
        vec![
            emp_no.into(),
            date(1952 + n % 13, n).into(),
            FIRST[n as usize % 8].into(),
            LAST[(n / 8) as usize % 8].into(),
            (if n % 2 == 0 { "M" } else { "F" }).into(),
            date(hire, n + 3).into(),
        ],
    )];
    for y in 0..3 {
        out.push((
            "salaries",
            vec![
                emp_no.into(),
                (40_000 + (n % 50) * 1000 + y * 1500).into(),
                date(hire + y, n).into(),
                date(hire + y + 1, n).into(),
            ],
        ));
    }
    out.push((
        "titles",
        vec![
            emp_no.into(),
            TITLES[n as usize % 4].into(),
            date(hire, n).into(),
            "9999-01-01".into(),
        ],
    ));
    out.push((
        "dept_emp",
        vec![
            emp_no.into(),
            dept.clone().into(),
            date(hire, n).into(),
            "9999-01-01".into(),
        ],
    ));
    if n % 50 == 0 {
        out.push((
            "dept_manager",
            vec![
                emp_no.into(),
                dept.into(),
                date(hire + 1, n).into(),
                "9999-01-01".into(),
            ],
        ));
    }
    out
}

/// How many rows went where.
#[derive(Debug, Default, Serialize)]
pub struct Loaded {
    /// Employees written.
    pub employees: usize,
    /// Rows per shard id.
    pub rows_per_shard: BTreeMap<u32, usize>,
}

/// Writes the employees `emp_nos` (and their salaries, titles, department rows) through the
/// router: each row goes to `employees_<shard>` on the shard's node.
pub fn load_employees(inv: &Inventory, router: &Router, emp_nos: &[i64]) -> Result<Loaded> {
    // shard id -> table -> rows
    let mut plan: BTreeMap<u32, BTreeMap<&str, Vec<Vec<Value>>>> = BTreeMap::new();
    let mut nodes: BTreeMap<u32, String> = BTreeMap::new();
    for &e in emp_nos {
        let shard = router.shard_for_table("employees", "employees", &Key::Int(e))?;
        nodes.insert(shard.id, shard.node.clone());
        for (table, row) in employee_rows(e) {
            plan.entry(shard.id)
                .or_default()
                .entry(table)
                .or_default()
                .push(row);
        }
    }
    let mut loaded = Loaded {
        employees: emp_nos.len(),
        ..Loaded::default()
    };
    for (shard_id, tables) in plan {
        let node = &nodes[&shard_id];
        let mut server = Server::connect_node(inv, node)?;
        let schema = Ident::new("schema", &format!("employees_{shard_id}"))?;
        if !server.schema_exists(&schema)? {
            return Err(Error::Usage(format!(
                "shard {shard_id} has no schema {schema} on {node}"
            )));
        }
        for (name, columns) in TABLES {
            let Some(rows) = tables.get(name) else {
                continue;
            };
            let cols: Vec<String> = columns.iter().map(|c| c.to_string()).collect();
            server.insert_rows(&schema, &Ident::new("table", name)?, &cols, rows)?;
            *loaded.rows_per_shard.entry(shard_id).or_default() += rows.len();
        }
    }
    Ok(loaded)
}
