//! One description of a test fleet's schema, directory and data, set up as an operator
//! would: the logical schema created on node1, the directory written through the command
//! line (`init`, nodes, functions, tables, shards), then a sample, rows and the workload's
//! table. Each test binary says what its fleet varies in and nothing else:
//!
//! ```ignore
//! FleetSetup::new()
//!     .schema(&["CREATE DATABASE app", "CREATE TABLE app.t (id INT PRIMARY KEY)"])
//!     .function(Function::range("f").table("app.t", "id").shards(&[("node1", "0")]))
//!     .rows("node1", &["INSERT INTO app_1.t SELECT seq FROM app_1.seq_1_to_100"])
//!     .build(sb);
//! ```

use super::{cli_on, connect, exec, load_fixture};
use shardctl::config::Inventory;
use shardctl::directory::{Key, Router};
use shardctl::sandbox::Sandbox;
use shardctl::server::Stmt;
use std::collections::BTreeMap;
use std::path::Path;

/// How a function maps keys to shards: its `--type`, and the option a shard's mapping
/// takes in `shard add`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sharding {
    /// `--lower-bound BOUND`.
    Range,
    /// `--point POINT` (`auto` places it).
    Hash,
    /// `--values A,B,...`.
    List,
}

impl Sharding {
    fn type_arg(self) -> &'static str {
        match self {
            Sharding::Range => "range",
            Sharding::Hash => "hash",
            Sharding::List => "list",
        }
    }

    fn mapping_option(self) -> &'static str {
        match self {
            Sharding::Range => "--lower-bound",
            Sharding::Hash => "--point",
            Sharding::List => "--values",
        }
    }
}

/// A function's key type (`--key`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyKind {
    Int,
    String,
}

impl KeyKind {
    fn arg(self) -> &'static str {
        match self {
            KeyKind::Int => "int",
            KeyKind::String => "string",
        }
    }

    /// The column type the fixtures give a key of this kind.
    pub fn column_type(self) -> &'static str {
        match self {
            KeyKind::Int => "BIGINT",
            KeyKind::String => "VARBINARY(16)",
        }
    }
}

/// A sharding function of the directory: its sharded tables and its shards, which get the
/// ids 1, 2, ... in the order of the fleet's functions, then of their shards.
#[derive(Clone, Debug)]
pub struct Function {
    name: String,
    sharding: Sharding,
    key: KeyKind,
    tables: Vec<(String, String)>,
    shards: Vec<(String, String)>,
}

impl Function {
    /// A function of `sharding` over keys of `key`, with no table and no shard yet.
    pub fn new(name: &str, sharding: Sharding, key: KeyKind) -> Self {
        Self {
            name: name.into(),
            sharding,
            key,
            tables: Vec::new(),
            shards: Vec::new(),
        }
    }

    /// A range function over integer keys.
    pub fn range(name: &str) -> Self {
        Self::new(name, Sharding::Range, KeyKind::Int)
    }

    /// A hash function over integer keys.
    pub fn hash(name: &str) -> Self {
        Self::new(name, Sharding::Hash, KeyKind::Int)
    }

    /// A list function over string keys.
    pub fn list(name: &str) -> Self {
        Self::new(name, Sharding::List, KeyKind::String)
    }

    /// The function's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The function's key type.
    pub fn key(&self) -> KeyKind {
        self.key
    }

    /// Shards `table` (SCHEMA.TABLE) on `column`.
    pub fn table(mut self, table: &str, column: &str) -> Self {
        self.tables.push((table.into(), column.into()));
        self
    }

    /// Shards each of `tables` as (SCHEMA.TABLE, column).
    pub fn tables(self, tables: &[(&str, &str)]) -> Self {
        tables.iter().fold(self, |f, (t, c)| f.table(t, c))
    }

    /// Shards the `items` and `shardctl_workload` tables of [`items_schema`]'s `schema`
    /// on `k`.
    pub fn items(self, schema: &str) -> Self {
        self.table(&format!("{schema}.items"), "k")
            .table(&format!("{schema}.shardctl_workload"), "k")
    }

    /// A shard on `node` with `mapping` (a lower bound, a hash point or a list of values,
    /// as the function's sharding takes), its schemas made from the logical schema.
    pub fn shard(mut self, node: &str, mapping: &str) -> Self {
        self.shards.push((node.into(), mapping.into()));
        self
    }

    /// A shard for each (node, mapping) of `shards`, in that order.
    pub fn shards(self, shards: &[(&str, &str)]) -> Self {
        shards.iter().fold(self, |f, (n, m)| f.shard(n, m))
    }
}

/// Rows of the `items` table of [`items_schema`], written where the router places their
/// keys: one row a key (`n` = 0), or `per_string_key` rows (`n` = 0, 1, ...) for each
/// string key.
#[derive(Clone, Debug)]
struct RoutedItems {
    function: String,
    schema: String,
    keys: Vec<Key>,
    per_string_key: i64,
}

/// The `items` and `shardctl_workload` tables of the logical schema `schema`, keyed by `k`
/// of `key`'s column type (the fixture of the split, merge and cut-over tests, whose
/// workload writes `shardctl_workload`); `note` adds a nullable `note VARCHAR(40)` to
/// `items`, `kinds` an unsharded `kinds` table holding 1 and 2.
pub fn items_schema(schema: &str, key: KeyKind, note: bool, kinds: bool) -> Vec<String> {
    let key = key.column_type();
    let note = if note { " note VARCHAR(40) NULL," } else { "" };
    let mut sqls = vec![
        format!("CREATE DATABASE {schema}"),
        format!("CREATE TABLE {schema}.items (k {key} NOT NULL, n INT NOT NULL,{note} PRIMARY KEY (k, n))"),
        format!("CREATE TABLE {schema}.shardctl_workload (k {key} NOT NULL, seq BIGINT UNSIGNED NOT NULL, at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6), PRIMARY KEY (k, seq))"),
    ];
    if kinds {
        sqls.push(format!("CREATE TABLE {schema}.kinds (id INT PRIMARY KEY)"));
        sqls.push(format!("INSERT INTO {schema}.kinds VALUES (1), (2)"));
    }
    sqls
}

/// The fleet of the split and cut-over tests: a range (`r`, schema `rdb`), a hash (`h`,
/// `hdb`) and a list (`l`, `ldb`, string keys) function over [`items_schema`]'s tables
/// (`note` and `kinds` as there), two shards each, on node1 and node2 (range from 0 and
/// 100000, hash at automatic points, list values a-d and e-f). No rows yet.
pub fn range_hash_list_items(note: bool, kinds: bool) -> FleetSetup {
    FleetSetup::new()
        .schema(&items_schema("rdb", KeyKind::Int, note, kinds))
        .schema(&items_schema("hdb", KeyKind::Int, note, kinds))
        .schema(&items_schema("ldb", KeyKind::String, note, kinds))
        .function(
            Function::range("r")
                .items("rdb")
                .shards(&[("node1", "0"), ("node2", "100000")]),
        )
        .function(
            Function::hash("h")
                .items("hdb")
                .shards(&[("node1", "auto"), ("node2", "auto")]),
        )
        .function(
            Function::list("l")
                .items("ldb")
                .shards(&[("node1", "a,b,c,d"), ("node2", "e,f")]),
        )
}

/// The fleet of the operator-control tests (pause, cut-over control): schema `app` of
/// [`items_schema`] (no note, no kinds), function `f` over it with shard 1 on node1 (from
/// 0) holding keys 1 to `rows` and shard 2 on node2 (from 100000), empty.
pub fn app_items_two_shards(rows: i64) -> FleetSetup {
    FleetSetup::new()
        .schema(&items_schema("app", KeyKind::Int, false, false))
        .function(
            Function::range("f")
                .items("app")
                .shards(&[("node1", "0"), ("node2", "100000")]),
        )
        .rows(
            "node1",
            &[format!(
                "INSERT INTO app_1.items SELECT seq, 1 FROM app_1.seq_1_to_{rows}"
            )],
        )
}

/// The five tables of `tests/fixtures/company.sql` sharded by `emp_no`, as (table,
/// column).
pub const EMPLOYEE_TABLES: &[(&str, &str)] = &[
    ("employees.employees", "emp_no"),
    ("employees.dept_emp", "emp_no"),
    ("employees.dept_manager", "emp_no"),
    ("employees.titles", "emp_no"),
    ("employees.salaries", "emp_no"),
];

/// Every row of the `items` and `shardctl_workload` tables of `function`'s shards (schema
/// `schema`_ID) sits on the shard the router names; returns the number of `items` rows.
pub fn items_are_where_lookup_says(sb: &Sandbox, function: &str, schema: &str) -> usize {
    let inv = super::inventory(sb);
    let router = Router::connect(&inv).unwrap();
    let snap = router.snapshot().clone();
    let func = snap.function(function).unwrap().clone();
    let mut items = 0;
    for shard in snap.shards_of(func.id) {
        let mut s = connect(sb, &shard.node);
        for table in ["items", "shardctl_workload"] {
            let rows = s
                .rows(&Stmt::text(format!(
                    "SELECT CAST(k AS CHAR) FROM {schema}_{}.{table}",
                    shard.id
                )))
                .unwrap();
            for r in rows {
                let text: String = mysql::from_row(r);
                let key = func.key_type.parse(&text).unwrap();
                let owner = router.shard_for_function(function, &key).unwrap().id;
                assert_eq!(
                    owner, shard.id,
                    "{schema}_{}.{table} holds key {text}, which lookup gives to shard {owner}",
                    shard.id
                );
                if table == "items" {
                    items += 1;
                }
            }
        }
    }
    items
}

/// Where the fleet's `shardctl_workload` tables come from after the rows are written.
#[derive(Clone, Debug)]
struct Workload {
    function: String,
    /// The table (SCHEMA.shardctl_workload) then registered as sharded on `k`.
    register: Option<String>,
}

/// What a test fleet holds, set up in this order by [`FleetSetup::build`]: the fixture
/// and the schema on node1, the directory (`init`, the nodes, each function with its
/// tables, the global tables, then each function's shards and the late global tables), the sample, the rows, the
/// workload's tables.
#[derive(Clone, Debug)]
pub struct FleetSetup {
    fixture: Option<String>,
    schema: Vec<String>,
    schema_node: String,
    init: bool,
    nodes: Vec<String>,
    functions: Vec<Function>,
    globals: Vec<String>,
    late_globals: Vec<String>,
    sample: Vec<String>,
    rows: Vec<(String, Vec<String>)>,
    routed: Vec<RoutedItems>,
    workload: Option<Workload>,
}

impl Default for FleetSetup {
    fn default() -> Self {
        Self::new()
    }
}

impl FleetSetup {
    /// A directory of node1, node2 and node3 and nothing else.
    pub fn new() -> Self {
        Self {
            fixture: None,
            schema: Vec::new(),
            schema_node: "node1".into(),
            init: true,
            nodes: ["node1", "node2", "node3"].map(String::from).to_vec(),
            functions: Vec::new(),
            globals: Vec::new(),
            late_globals: Vec::new(),
            sample: Vec::new(),
            rows: Vec::new(),
            routed: Vec::new(),
            workload: None,
        }
    }

    /// Functions, tables and shards added to the directory the fleet already has: no
    /// `init`, no nodes added.
    pub fn in_existing_directory(mut self) -> Self {
        self.init = false;
        self
    }

    /// The directory's nodes, instead of node1 to node3.
    pub fn nodes(mut self, nodes: &[&str]) -> Self {
        self.nodes = nodes.iter().map(|n| n.to_string()).collect();
        self
    }

    /// Loads the file `tests/fixtures/FILE` into node1 first.
    pub fn fixture(mut self, file: &str) -> Self {
        self.fixture = Some(file.into());
        self
    }

    /// Statements run on node1 before the directory exists: the logical schema shards
    /// are made from.
    pub fn schema<S: AsRef<str>>(mut self, sqls: &[S]) -> Self {
        self.schema
            .extend(sqls.iter().map(|s| s.as_ref().to_string()));
        self
    }

    /// The server the logical schema is created on ([`FleetSetup::schema`]), instead of
    /// node1: a member of the directory's cluster, where `shard add` reads its template.
    pub fn schema_on(mut self, node: &str) -> Self {
        self.schema_node = node.into();
        self
    }

    /// A function of the directory (see [`Function`]).
    pub fn function(mut self, function: Function) -> Self {
        self.functions.push(function);
        self
    }

    /// `table` (SCHEMA.TABLE) registered as global before the shards are added: each
    /// `shard add` copies its rows.
    pub fn global(mut self, table: &str) -> Self {
        self.globals.push(table.into());
        self
    }

    /// `table` (SCHEMA.TABLE) registered as global once the shards exist.
    pub fn global_after_shards(mut self, table: &str) -> Self {
        self.late_globals.push(table.into());
        self
    }

    /// `shardctl sample ARGS` once the shards exist.
    pub fn sample(mut self, args: &[&str]) -> Self {
        self.sample = args.iter().map(|a| a.to_string()).collect();
        self
    }

    /// Statements run on `node` once the directory exists (the shards' rows), in the
    /// order given.
    pub fn rows<S: AsRef<str>>(mut self, node: &str, sqls: &[S]) -> Self {
        self.rows.push((
            node.into(),
            sqls.iter().map(|s| s.as_ref().to_string()).collect(),
        ));
        self
    }

    /// Rows of `schema`'s `items` table (see [`items_schema`]) for `keys` of `function`,
    /// written on the shard the router gives each key: one a key, `per_string_key` for a
    /// string key.
    pub fn routed_items(
        mut self,
        function: &str,
        schema: &str,
        keys: Vec<Key>,
        per_string_key: i64,
    ) -> Self {
        self.routed.push(RoutedItems {
            function: function.into(),
            schema: schema.into(),
            keys,
            per_string_key,
        });
        self
    }

    /// The workload's `shardctl_workload` table created on every shard of `function`
    /// (`workload::setup`) after the rows.
    pub fn workload(mut self, function: &str) -> Self {
        self.workload = Some(Workload {
            function: function.into(),
            register: None,
        });
        self
    }

    /// As [`FleetSetup::workload`], the table then registered as sharded on `k` as
    /// `schema.shardctl_workload` (as the application's tables must be).
    pub fn registered_workload(mut self, function: &str, schema: &str) -> Self {
        self.workload = Some(Workload {
            function: function.into(),
            register: Some(format!("{schema}.shardctl_workload")),
        });
        self
    }

    /// Sets the fleet up on `sb`, failing the test at the first step that fails.
    pub fn build(&self, sb: &Sandbox) {
        if let Some(file) = &self.fixture {
            load_fixture(sb, file, None);
        }
        if !self.schema.is_empty() {
            let sqls: Vec<&str> = self.schema.iter().map(String::as_str).collect();
            exec(&mut connect(sb, &self.schema_node), &sqls);
        }
        let inventory = sb.inventory_path();
        self.write_directory(&inventory);
        if !self.sample.is_empty() {
            let mut args = vec!["sample"];
            args.extend(self.sample.iter().map(String::as_str));
            run(&inventory, &args);
        }
        for (node, sqls) in &self.rows {
            let sqls: Vec<&str> = sqls.iter().map(String::as_str).collect();
            exec(&mut connect(sb, node), &sqls);
        }
        for items in &self.routed {
            write_routed(sb, items);
        }
        if let Some(w) = &self.workload {
            let inv = Inventory::load(&inventory).expect("sandbox inventory loads");
            shardctl::workload::setup(&inv, &w.function).expect("the workload's tables");
            if let Some(table) = &w.register {
                run(
                    &inventory,
                    &[
                        "table",
                        "add",
                        table,
                        "--function",
                        &w.function,
                        "--column",
                        "k",
                    ],
                );
            }
        }
    }

    /// Writes the directory of the inventory `inventory` through the command line: `init`
    /// and the nodes (unless [`FleetSetup::in_existing_directory`]), each function and its tables, the global tables, the shards, then the
    /// global tables registered after them.
    pub fn write_directory(&self, inventory: &Path) {
        if self.init {
            run(inventory, &["init"]);
            for n in &self.nodes {
                run(inventory, &["node", "add", n]);
            }
        }
        for f in &self.functions {
            run(
                inventory,
                &[
                    "function",
                    "add",
                    &f.name,
                    "--type",
                    f.sharding.type_arg(),
                    "--key",
                    f.key.arg(),
                ],
            );
            for (table, column) in &f.tables {
                run(
                    inventory,
                    &[
                        "table",
                        "add",
                        table,
                        "--function",
                        &f.name,
                        "--column",
                        column,
                    ],
                );
            }
        }
        for table in &self.globals {
            run(inventory, &["table", "add", table, "--global"]);
        }
        for f in &self.functions {
            for (node, mapping) in &f.shards {
                run(
                    inventory,
                    &[
                        "shard",
                        "add",
                        "--function",
                        &f.name,
                        "--node",
                        node,
                        f.sharding.mapping_option(),
                        mapping,
                    ],
                );
            }
        }
        for table in &self.late_globals {
            run(inventory, &["table", "add", table, "--global"]);
        }
    }
}

/// `shardctl --config INVENTORY ARGS`, which must succeed.
fn run(inventory: &Path, args: &[&str]) {
    cli_on(inventory, args).assert().success();
}

/// Writes `items`' rows through one connection a node, in batches of multi-row inserts.
fn write_routed(sb: &Sandbox, items: &RoutedItems) {
    let inv = super::inventory(sb);
    let router = Router::connect(&inv).expect("router");
    let mut by_shard: BTreeMap<(String, u32), Vec<(mysql::Value, i64)>> = BTreeMap::new();
    for k in &items.keys {
        let shard = router
            .shard_for_function(&items.function, k)
            .unwrap_or_else(|e| panic!("no shard for {k:?} of {}: {e}", items.function));
        let (value, rows) = match k {
            Key::Int(i) => (mysql::Value::from(*i), 1),
            Key::Str(s) => (mysql::Value::from(s.as_str()), items.per_string_key),
        };
        let batch = by_shard.entry((shard.node.clone(), shard.id)).or_default();
        batch.extend((0..rows).map(|n| (value.clone(), n)));
    }
    let mut servers = BTreeMap::new();
    for ((node, shard), rows) in by_shard {
        let server = servers
            .entry(node.clone())
            .or_insert_with(|| connect(sb, &node));
        for chunk in rows.chunks(500) {
            let marks = vec!["(?, ?)"; chunk.len()].join(", ");
            let params = chunk
                .iter()
                .flat_map(|(k, n)| [k.clone(), (*n).into()])
                .collect();
            server
                .exec(&Stmt::with(
                    format!(
                        "INSERT INTO {}_{shard}.items (k, n) VALUES {marks}",
                        items.schema
                    ),
                    params,
                ))
                .unwrap_or_else(|e| panic!("rows of {}_{shard}.items: {e}", items.schema));
        }
    }
}
