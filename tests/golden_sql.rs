//! The exact SQL shardctl sends for each supported flavor, pinned as golden files.

use shardctl::ident::{Channel, Ident};
use shardctl::server::{BinlogPosition, Dialect, Filters, Flavor, SourceSpec, StartAt, Vendor};

fn render(flavor: Flavor) -> String {
    let d = Dialect::new(flavor);
    let ch = Channel::new("shardctl_move_7").unwrap();
    let pos = BinlogPosition {
        file: "mysql-bin.000042".into(),
        pos: 1337,
    };
    let spec = |start| SourceSpec {
        host: "10.0.0.5".into(),
        port: 3306,
        user: "repl".into(),
        password: "never-shown".into(),
        start,
        connect_retry_secs: 5,
    };
    let filters = Filters {
        do_db: vec![Ident::new("schema", "employees_7").unwrap()],
        wild_do_schemas: vec![
            Ident::new("schema", "employees_7").unwrap(),
            Ident::new("schema", "sales_7").unwrap(),
        ],
        rewrite_db: vec![(
            Ident::new("schema", "employees_7").unwrap(),
            Ident::new("schema", "employees_9").unwrap(),
        )],
    };
    let shown = |r: shardctl::Result<shardctl::server::Stmt>| match r {
        Ok(st) => st.to_string(),
        Err(e) => format!("unsupported: {e}"),
    };
    let mut out = vec![
        format!("flavor: {flavor}"),
        format!("settings: {}", d.server_settings()),
        format!("coordinates: {}", d.binlog_coordinates()),
        format!("gtid state: {}", d.gtid_state()),
        format!(
            "change source at position: {}",
            shown(d.change_source(&ch, &spec(StartAt::Position(pos.clone()))))
        ),
        format!(
            "change source by gtid: {}",
            shown(d.change_source(&ch, &spec(StartAt::GtidAutoPosition)))
        ),
        format!("start: {}", d.start_channel(&ch)),
        format!("stop: {}", d.stop_channel(&ch)),
        format!("reset: {}", d.reset_channel(&ch)),
        format!("channel status: {}", d.channel_status(&ch)),
        format!("all channels: {}", d.all_channels_status()),
        format!(
            "wait for position: {}",
            shown(d.wait_for_position(&ch, &pos, 30))
        ),
        format!(
            "wait for gtid: {}",
            shown(d.wait_for_gtid("0-1-100,7-7-2000", 30))
        ),
    ];
    match d.set_filters(&ch, &filters) {
        Ok(stmts) => out.extend(stmts.iter().map(|s| format!("filters: {s}"))),
        Err(e) => out.push(format!("filters: unsupported: {e}")),
    }
    match d.set_filters(&ch, &Filters::default()) {
        Ok(stmts) => out.extend(stmts.iter().map(|s| format!("clear filters: {s}"))),
        Err(e) => out.push(format!("clear filters: unsupported: {e}")),
    }
    out.extend(
        d.set_read_only(true)
            .iter()
            .map(|s| format!("fence on: {s}")),
    );
    out.extend(
        d.set_read_only(false)
            .iter()
            .map(|s| format!("fence off: {s}")),
    );
    let text = out.join("\n");
    assert!(
        !text.contains("never-shown"),
        "a password leaked into display SQL"
    );
    text
}

#[test]
fn mariadb_10_11() {
    insta::assert_snapshot!(render(Flavor::new(Vendor::MariaDb, 10, 11, 6)));
}

#[test]
fn mariadb_11_4() {
    insta::assert_snapshot!(render(Flavor::new(Vendor::MariaDb, 11, 4, 2)));
}

#[test]
fn mysql_5_7() {
    insta::assert_snapshot!(render(Flavor::new(Vendor::MySql, 5, 7, 44)));
}

#[test]
fn mysql_8_0() {
    insta::assert_snapshot!(render(Flavor::new(Vendor::MySql, 8, 0, 36)));
}

#[test]
fn mysql_8_4() {
    insta::assert_snapshot!(render(Flavor::new(Vendor::MySql, 8, 4, 0)));
}
