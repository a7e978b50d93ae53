//! Replication primitives against real MariaDB servers: flavor detection, coordinates,
//! filtered named channels, position waits and per-channel reset.

mod common;

use common::{connect, count, exec, exec_unlogged, inventory, sandbox3};
use shardctl::ident::{Channel, Ident};
use shardctl::server::{BinlogPosition, Filters, Server, SourceSpec, StartAt, Vendor};
use shardctl::{Error, ExitCode};
use std::time::Duration;

fn channel_from(target: &mut Server, source: &str, name: &str, schemas: &[&str]) -> Channel {
    let sb = sandbox3();
    let inv = inventory(sb);
    let creds = inv.replication_credentials().unwrap();
    let mut src = connect(sb, source);
    let start = src.coordinates().unwrap().position;
    let ch = Channel::new(name).unwrap();
    let spec = SourceSpec {
        host: "127.0.0.1".into(),
        port: sb.node(source).unwrap().port,
        user: creds.user,
        password: creds.password.expose().to_string(),
        start: StartAt::Position(start),
        connect_retry_secs: 1,
        tls: None,
    };
    target.change_source(&ch, &spec).unwrap();
    let filters = Filters {
        wild_do_schemas: schemas
            .iter()
            .map(|s| Ident::new("schema", s).unwrap())
            .collect(),
        ..Filters::default()
    };
    target.set_filters(&ch, &filters).unwrap();
    target.start_channel(&ch).unwrap();
    ch
}

#[test]
fn flavor_is_detected_from_the_running_server() {
    let out = std::process::Command::new("/usr/sbin/mariadbd")
        .arg("--version")
        .output()
        .expect("mariadbd --version");
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let version = text
        .split_whitespace()
        .skip_while(|w| *w != "Ver")
        .nth(1)
        .expect("a version word")
        .split('-')
        .next()
        .unwrap()
        .to_string();
    for node in ["node1", "node2", "node3"] {
        let server = connect(sandbox3(), node);
        assert_eq!(server.flavor().vendor, Vendor::MariaDb, "{node}");
        assert_eq!(server.flavor().version.to_string(), version, "{node}");
    }
}

#[test]
fn coordinates_advance_with_writes() {
    let mut s = connect(sandbox3(), "node3");
    let settings = s.settings().unwrap();
    assert!(settings.log_bin);
    assert_eq!(settings.binlog_format, "ROW");
    assert_eq!(settings.server_id, 3);
    let before = s.coordinates().unwrap();
    exec(
        &mut s,
        &[
            "CREATE DATABASE IF NOT EXISTS coord_db",
            "CREATE TABLE IF NOT EXISTS coord_db.t (id INT PRIMARY KEY)",
            "INSERT INTO coord_db.t VALUES (1)",
        ],
    );
    let after = s.coordinates().unwrap();
    assert!(after.position > before.position, "{before:?} -> {after:?}");
    assert!(
        after.gtid.starts_with("3-3-"),
        "GTID state of domain 3 from server 3: {}",
        after.gtid
    );
}

#[test]
fn a_filtered_channel_carries_only_its_schema_and_waits_time_out() {
    let sb = sandbox3();
    let mut a = connect(sb, "node1");
    let mut b = connect(sb, "node2");
    let ddl = [
        "CREATE DATABASE IF NOT EXISTS keep_1",
        "CREATE DATABASE IF NOT EXISTS keep21",
        "CREATE DATABASE IF NOT EXISTS skip_1",
        "CREATE TABLE IF NOT EXISTS keep_1.t (id INT PRIMARY KEY, v VARCHAR(20))",
        "CREATE TABLE IF NOT EXISTS keep21.t (id INT PRIMARY KEY, v VARCHAR(20))",
        "CREATE TABLE IF NOT EXISTS skip_1.t (id INT PRIMARY KEY, v VARCHAR(20))",
    ];
    exec_unlogged(&mut a, &ddl);
    exec_unlogged(&mut b, &ddl);
    let ch = channel_from(&mut b, "node1", "t_filter", &["keep_1"]);

    let status = b.channel_status(&ch).unwrap().expect("channel exists");
    assert_eq!(status.wild_do_table, "keep\\_1.%");

    for i in 0..10 {
        let id = i.to_string();
        for schema in ["keep_1", "keep21", "skip_1"] {
            exec(
                &mut a,
                &[&format!("INSERT INTO {schema}.t VALUES ({id}, 'x')")],
            );
        }
    }
    // A statement run from another default schema still reaches the kept schema.
    exec(
        &mut a,
        &["USE skip_1", "INSERT INTO keep_1.t VALUES (100, 'cross')"],
    );
    let end = a.coordinates().unwrap().position;
    b.wait_for_position(&ch, &end, Duration::from_secs(60))
        .unwrap();

    assert_eq!(count(&mut b, "SELECT COUNT(*) FROM keep_1.t"), 11);
    assert_eq!(count(&mut b, "SELECT COUNT(*) FROM skip_1.t"), 0);
    // `_` is escaped in the pattern, so keep21 (which `keep_1` as a LIKE pattern matches) stays out.
    assert_eq!(count(&mut b, "SELECT COUNT(*) FROM keep21.t"), 0);
    assert!(b.channel_status(&ch).unwrap().unwrap().healthy());

    let far = BinlogPosition {
        file: end.file.clone(),
        pos: end.pos + 50_000_000,
    };
    let err = b
        .wait_for_position(&ch, &far, Duration::from_secs(2))
        .unwrap_err();
    assert!(matches!(err, Error::Timeout(_)), "{err}");
    assert_eq!(err.exit_code(), ExitCode::Timeout);

    b.reset_channel(&ch).unwrap();
    assert!(b.channel_status(&ch).unwrap().is_none());
}

#[test]
fn a_wait_on_a_stopped_channel_fails_at_once() {
    let sb = sandbox3();
    let mut b = connect(sb, "node2");
    let ch = channel_from(&mut b, "node3", "t_stopped", &["stopped_db"]);
    b.stop_channel(&ch).unwrap();
    let mut c = connect(sb, "node3");
    let end = c.coordinates().unwrap().position;
    let err = b
        .wait_for_position(&ch, &end, Duration::from_secs(30))
        .unwrap_err();
    assert!(matches!(err, Error::Server { .. }), "{err}");
    assert!(err.to_string().contains("t_stopped"), "{err}");
    b.reset_channel(&ch).unwrap();
}

#[test]
fn resetting_one_channel_leaves_the_other_running() {
    let sb = sandbox3();
    let mut a = connect(sb, "node1");
    let mut b = connect(sb, "node3");
    let mut c = connect(sb, "node2");
    let ddl_a = [
        "CREATE DATABASE IF NOT EXISTS reset_a",
        "CREATE TABLE IF NOT EXISTS reset_a.t (id INT PRIMARY KEY)",
    ];
    let ddl_c = [
        "CREATE DATABASE IF NOT EXISTS reset_c",
        "CREATE TABLE IF NOT EXISTS reset_c.t (id INT PRIMARY KEY)",
    ];
    exec_unlogged(&mut a, &ddl_a);
    exec_unlogged(&mut c, &ddl_c);
    exec_unlogged(&mut b, &ddl_a);
    exec_unlogged(&mut b, &ddl_c);
    let ch_a = channel_from(&mut b, "node1", "t_reset_a", &["reset_a"]);
    let ch_c = channel_from(&mut b, "node2", "t_reset_c", &["reset_c"]);

    b.reset_channel(&ch_a).unwrap();
    b.reset_channel(&ch_a).unwrap();
    assert!(b.channel_status(&ch_a).unwrap().is_none());
    let names: Vec<String> = b.channels().unwrap().into_iter().map(|c| c.name).collect();
    assert!(!names.contains(&"t_reset_a".to_string()), "{names:?}");
    assert!(names.contains(&"t_reset_c".to_string()), "{names:?}");

    exec(&mut c, &["INSERT INTO reset_c.t VALUES (1)"]);
    exec(&mut a, &["INSERT INTO reset_a.t VALUES (1)"]);
    let end = c.coordinates().unwrap().position;
    b.wait_for_position(&ch_c, &end, Duration::from_secs(60))
        .unwrap();
    assert!(b.channel_status(&ch_c).unwrap().unwrap().healthy());
    assert_eq!(count(&mut b, "SELECT COUNT(*) FROM reset_c.t"), 1);
    assert_eq!(count(&mut b, "SELECT COUNT(*) FROM reset_a.t"), 0);
    b.reset_channel(&ch_c).unwrap();
}

#[test]
fn read_only_fence_blocks_writes_and_lifts() {
    let sb = sandbox3();
    let mut s = connect(sb, "node3");
    // A shard-like schema name: the sandbox's application account has DML on those only.
    exec(
        &mut s,
        &[
            "CREATE DATABASE IF NOT EXISTS ro_db_1",
            "CREATE TABLE IF NOT EXISTS ro_db_1.t (id INT PRIMARY KEY)",
        ],
    );
    s.set_read_only(true).unwrap();
    assert!(s.settings().unwrap().read_only);
    let port = sb.node("node3").unwrap().port;
    let app_creds = inventory(sb).application_credentials("node3").unwrap();
    let mut app = mysql::Conn::new(
        mysql::OptsBuilder::new()
            .ip_or_hostname(Some("127.0.0.1"))
            .tcp_port(port)
            .user(Some(app_creds.user.clone()))
            .pass(Some(app_creds.password.expose().to_string())),
    )
    .unwrap();
    use mysql::prelude::Queryable;
    let err = app
        .query_drop("INSERT INTO ro_db_1.t VALUES (7)")
        .unwrap_err();
    assert_eq!(shardctl::server::server_error_code(&err), Some(1290));
    s.set_read_only(false).unwrap();
    app.query_drop("INSERT INTO ro_db_1.t VALUES (7)").unwrap();
}
