//! Objects arrive byte for byte: a sakila-shaped shard (tests/fixtures/crlf_objects.sql,
//! CRLF line endings kept by loading it with `mariadb --binary-mode`) moved with each copy
//! method under the shard fence reads the same afterwards in an ordered
//! `mariadb-dump --routines --triggers --events` on the target as it did on the source
//! before the move: every CR, tab, trailing space, comment and non-ASCII byte of its
//! routines', triggers' and events' text, and every row.

mod common;

use common::{connect, exec, serial, FleetSetup, Function, SharedFleet};
use shardctl::sandbox::Sandbox;
use shardctl::server::{Server, Stmt};
use std::time::Duration;

/// 3 nodes; function `cust` sharding `crlf.customer` on customer_id (the logical schema
/// `crlf` on node1 is a one-table stub that `shard add` uses as its template).
static FLEET: SharedFleet = SharedFleet::configured(
    3,
    |b| b.shardctl_bin(env!("CARGO_BIN_EXE_shardctl")),
    set_up,
);

/// Sets up the fleet once, on first use (see [`FLEET`]).
fn set_up(sb: &Sandbox) {
    FleetSetup::new()
        .schema(&[
            "CREATE DATABASE crlf",
            "CREATE TABLE crlf.customer (customer_id INT NOT NULL PRIMARY KEY)",
        ])
        .function(Function::range("cust").table("crlf.customer", "customer_id"))
        .build(sb);
}

/// A new shard on node1 holding the fixture, loaded under the shard's schema name by
/// `mariadb --binary-mode --comments` (without them the client turns each CRLF into LF and
/// drops `#` and `-- ` comments): its id and
/// schema.
fn crlf_shard(lower_bound: &str) -> (String, String) {
    let sb = FLEET.sandbox();
    let id =
        common::add_shard_on(&FLEET.inventory_path(), "cust", "node1", lower_bound).to_string();
    let schema = format!("crlf_{id}");
    exec(
        &mut connect(sb, "node1"),
        &[&format!("DROP DATABASE {schema}")],
    );
    let text = std::fs::read(common::fixture_path("crlf_objects.sql")).unwrap();
    assert!(
        text.windows(2).filter(|w| w == b"\r\n").count() > 100,
        "crlf_objects.sql lost its CRLF line endings (see .gitattributes)"
    );
    let renamed = String::from_utf8(text)
        .unwrap()
        .replace("`crlf`", &format!("`{schema}`"));
    client(
        "node1",
        &["--binary-mode", "--comments"],
        renamed.as_bytes(),
        "crlf_objects.sql",
    );
    (id, schema)
}

/// Runs the `mariadb` client on `node` with `args`, `input` on its standard input.
fn client(node: &str, args: &[&str], input: &[u8], what: &str) {
    use std::io::Write;
    let sb = FLEET.sandbox();
    let port = sb.node(node).unwrap().port.to_string();
    let mut child = std::process::Command::new("mariadb")
        .arg(format!(
            "--defaults-extra-file={}",
            sb.dir().join("client.cnf").display()
        ))
        .args(["-h", "127.0.0.1", "-P", &port])
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run the mariadb client");
    child.stdin.take().unwrap().write_all(input).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `mariadb-dump --routines --triggers --events` of `schema` on `node`, rows in primary
/// key order, one INSERT per row: the comparison the issue names.
fn ordered_dump(node: &str, schema: &str) -> Vec<u8> {
    let sb = FLEET.sandbox();
    let port = sb.node(node).unwrap().port.to_string();
    let out = std::process::Command::new("mariadb-dump")
        .arg(format!(
            "--defaults-extra-file={}",
            sb.dir().join("client.cnf").display()
        ))
        .args(["-h", "127.0.0.1", "-P", &port])
        .args([
            "--routines",
            "--triggers",
            "--events",
            "--skip-dump-date",
            "--order-by-primary",
            "--skip-extended-insert",
            "--databases",
            schema,
        ])
        .output()
        .expect("run mariadb-dump");
    assert!(
        out.status.success(),
        "mariadb-dump: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// The text `SHOW CREATE kind` gives for `schema.name` on `server`.
fn stored_text(server: &mut Server, kind: &str, schema: &str, name: &str) -> String {
    let rows = server
        .rows(&Stmt::text(format!(
            "SHOW CREATE {kind} `{schema}`.`{name}`"
        )))
        .unwrap();
    shardctl::server::col_string(
        &rows[0],
        &[
            "SQL Original Statement",
            "Create Procedure",
            "Create Function",
            "Create Event",
        ],
    )
    .unwrap()
}

/// The hazards are really in the source's stored text, so the comparison cannot pass
/// for want of them.
fn assert_hazards_stored(schema: &str) {
    let mut n1 = connect(FLEET.sandbox(), "node1");
    let trigger = stored_text(&mut n1, "TRIGGER", schema, "customer_create_date");
    assert!(
        trigger.contains("ON customer\r\n\tFOR EACH ROW"),
        "{trigger:?}"
    );
    let lone_cr = stored_text(&mut n1, "TRIGGER", schema, "del_film");
    assert!(lone_cr.contains("lone CR:\rand"), "{lone_cr:?}");
    let proc = stored_text(&mut n1, "PROCEDURE", schema, "rewards_report");
    for needle in [
        "-- the purchases\r\n",
        "DECIMAL(10,2)  \r\n",
        "/* Some sanity checks...\r\n",
        "# the rewardees\t(",
        "über 10 €",
    ] {
        assert!(proc.contains(needle), "{needle:?} not in {proc:?}");
    }
    let event = stored_text(&mut n1, "EVENT", schema, "purge_old_payments");
    assert!(
        event.contains("DO BEGIN\r\n\t\t-- nothing older than the sample\r\n"),
        "{event:?}"
    );
}

/// Moves a fresh fixture shard from node1 to node2 by `method` under the shard fence
/// (`prepare` run on the source first) and compares the ordered dumps; the shard's schema.
fn moves_byte_for_byte(method: &str, lower_bound: &str, prepare: &[&str]) -> String {
    let _s = serial();
    let (id, schema) = crlf_shard(lower_bound);
    assert_hazards_stored(&schema);
    let prepare: Vec<String> = prepare.iter().map(|s| s.replace("{s}", &schema)).collect();
    let prepare: Vec<&str> = prepare.iter().map(String::as_str).collect();
    exec(&mut connect(FLEET.sandbox(), "node1"), &prepare);
    let before = ordered_dump("node1", &schema);
    let out = FLEET
        .cli(&[
            "move", "--shard", &id, "--to", "node2", "--method", method, "--fence", "shard",
        ])
        .timeout(Duration::from_secs(600))
        .output()
        .unwrap();
    if !out.status.success() {
        // Abort it, so that the other tests' moves are not refused for its channel (a move
        // refused by its preflight journaled nothing).
        let inv = common::inventory(FLEET.sandbox());
        let newest = shardctl::directory::Directory::open(&inv)
            .unwrap()
            .operations(None)
            .unwrap()
            .into_iter()
            .next()
            .filter(|o| !o.state.is_finished());
        if let Some(op) = newest {
            let _ = FLEET
                .cli(&["abort", &op.id.to_string()])
                .timeout(Duration::from_secs(300))
                .output();
        }
        panic!(
            "the {method} move failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    common::assert_same_dump(
        &before,
        &ordered_dump("node2", &schema),
        &format!("{method} move"),
    );
    schema
}

#[test]
fn a_crlf_schema_moves_natively_byte_for_byte() {
    moves_byte_for_byte("native", "1000", &[]);
}

#[test]
fn a_crlf_schema_moves_by_dump_byte_for_byte() {
    moves_byte_for_byte("dump", "2000", &[]);
}

/// film_text keeps its FULLTEXT index: the physical copy imports its tablespace and
/// rebuilds the table from the imported rows, and the index answers on the target.
#[test]
fn a_crlf_schema_moves_physically_byte_for_byte() {
    let schema = moves_byte_for_byte("physical", "3000", &[]);
    let search = format!(
        "SELECT COUNT(*) FROM {schema}.film_text WHERE MATCH(title, description) AGAINST ('Drama')"
    );
    let on_target = common::count(&mut connect(FLEET.sandbox(), "node2"), &search);
    assert!(on_target > 0, "the full-text search finds nothing on node2");
}

/// A FULLTEXT table whose AUTO_INCREMENT column holds 0 (stored under
/// NO_AUTO_VALUE_ON_ZERO): the physical copy's rebuild of the table (`INSERT ... SELECT`)
/// keeps the 0 instead of numbering the row anew under the server's default sql_mode.
#[test]
fn a_zero_auto_increment_value_in_a_fulltext_table_moves_physically_as_it_is() {
    moves_byte_for_byte(
        "physical",
        "4000",
        &[
            "CREATE TABLE {s}.notes_ft (id INT NOT NULL AUTO_INCREMENT PRIMARY KEY, body TEXT, FULLTEXT (body))",
            "SET SESSION sql_mode = CONCAT_WS(',', NULLIF(@@SESSION.sql_mode, ''), 'NO_AUTO_VALUE_ON_ZERO')",
            "INSERT INTO {s}.notes_ft VALUES (0, 'zero'), (5, 'five')",
        ],
    );
}
