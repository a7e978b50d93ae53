//! The exact SQL shardctl sends for each supported flavor, pinned as golden files.

use mysql::Value;
use shardctl::config::ChannelTls;
use shardctl::ident::{Channel, Ident};
use shardctl::server::statements::ObjectKind;
use shardctl::server::statements::{
    self as sql, HashedAs, HashedColumn, KeyKind, Keyset, NotOwned,
};
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
        tls: None,
    };
    let tls_spec = |start, client_cert: bool| SourceSpec {
        tls: Some(tls(client_cert)),
        ..spec(start)
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
        wild_do_tables: Vec::new(),
    };
    // A merge's channel: the retired schema rewritten to the survivor's, its sharded tables
    // only (the global ones are the survivor's own).
    let merge_filters = Filters {
        rewrite_db: vec![(
            Ident::new("schema", "employees_7").unwrap(),
            Ident::new("schema", "employees_9").unwrap(),
        )],
        wild_do_tables: vec![
            (
                Ident::new("schema", "employees_9").unwrap(),
                Ident::new("table", "dept_emp").unwrap(),
            ),
            (
                Ident::new("schema", "employees_9").unwrap(),
                Ident::new("table", "salaries").unwrap(),
            ),
        ],
        ..Filters::default()
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
        format!("identity: {}", d.server_identity()),
        format!(
            "change source at position: {}",
            shown(d.change_source(&ch, &spec(StartAt::Position(pos.clone()))))
        ),
        format!(
            "change source by gtid: {}",
            shown(d.change_source(&ch, &spec(StartAt::GtidAutoPosition)))
        ),
        format!(
            "change source over TLS (CA only): {}",
            shown(d.change_source(&ch, &tls_spec(StartAt::Position(pos.clone()), false)))
        ),
        format!(
            "change source over TLS (client certificate): {}",
            shown(d.change_source(&ch, &tls_spec(StartAt::Position(pos.clone()), true)))
        ),
        format!(
            "change source by gtid over TLS: {}",
            shown(d.change_source(&ch, &tls_spec(StartAt::GtidAutoPosition, false)))
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
    match d.persisted_filter_lines(&ch, &filters) {
        Ok(lines) => out.extend(lines.iter().map(|l| format!("option file filter: {l}"))),
        Err(e) => out.push(format!("option file filter: unsupported: {e}")),
    }
    match d.set_filters(&ch, &merge_filters) {
        Ok(stmts) => out.extend(stmts.iter().map(|s| format!("merge filters: {s}"))),
        Err(e) => out.push(format!("merge filters: unsupported: {e}")),
    }
    match d.set_filters(&ch, &Filters::default()) {
        Ok(stmts) => out.extend(stmts.iter().map(|s| format!("clear filters: {s}"))),
        Err(e) => out.push(format!("clear filters: unsupported: {e}")),
    }
    out.extend(
        d.set_read_only(true, 5)
            .iter()
            .map(|s| format!("bounded fence on: {s}")),
    );
    out.extend(
        d.set_read_only(false, 5)
            .iter()
            .map(|s| format!("bounded fence off: {s}")),
    );
    let (lower, raise) = d.super_read_only_bracket(5);
    out.extend(
        lower
            .iter()
            .map(|s| format!("ddl under the fence, before: {s}")),
    );
    out.extend(
        raise
            .iter()
            .map(|s| format!("ddl under the fence, after: {s}")),
    );
    out.push(format!(
        "verify: pause the applier: {}",
        d.stop_applier(&ch)
    ));
    out.push(format!(
        "verify: apply up to the point: {}",
        shown(d.start_applier_until(&ch, &pos))
    ));
    out.push(format!(
        "merge gate: start the receiver only: {}",
        d.start_receiver(&ch)
    ));
    out.push(format!(
        "merge gate: read the source's binary log ahead of the applier: {}",
        shown(d.show_binlog_events(&pos, shardctl::server::binlog::SCAN_PAGE))
    ));
    let guard_schema = Ident::new("schema", "employees_7").unwrap();
    let guard_table = Ident::new("table", "salaries").unwrap();
    let hidden = Ident::new("table", "_shardctl_op9_0").unwrap();
    let guard_column = Ident::new("column", "emp_no").unwrap();
    let not_owned = shardctl::server::statements::not_owned(
        &guard_column,
        KeyKind::Int,
        &NotOwned::OutsideRange {
            lower: Value::Int(10000),
            upper: Some(Value::Int(20000)),
        },
    );
    for event in shardctl::server::statements::GuardEvent::ALL {
        out.extend(
            d.install_guard(
                &guard_schema,
                &guard_table,
                &hidden,
                event,
                &guard_column,
                &not_owned,
                7,
            )
            .iter()
            .map(|s| format!("split guard {event:?}: {s}")),
        );
    }
    let moving_keys = shardctl::server::statements::key_range(
        &guard_column,
        Value::Int(15000),
        Some(Value::Int(20000)),
    );
    for event in shardctl::server::statements::GuardEvent::ALL {
        out.extend(
            d.install_switched_guard(
                &guard_schema,
                &guard_table,
                event,
                Some(&guard_column),
                &moving_keys,
                9,
                "shard 7 is moving these keys; re-read the directory",
                None,
            )
            .iter()
            .map(|s| format!("switched guard {event:?}: {s}")),
        );
    }
    out.extend(
        d.install_switched_guard(
            &guard_schema,
            &guard_table,
            shardctl::server::statements::GuardEvent::Insert,
            Some(&guard_column),
            &moving_keys,
            9,
            "shard 7 is moving these keys; re-read the directory",
            Some(&Ident::new("trigger", "audit_items").unwrap()),
        )
        .iter()
        .map(|s| format!("switched guard ahead of the table's first trigger: {s}")),
    );
    out.push(format!(
        "before triggers in firing order: {}",
        shardctl::server::statements::before_triggers_in_order(&guard_schema)
    ));
    out.extend(
        shardctl::server::statements::create_switch_table()
            .iter()
            .map(|s| format!("switch table: {s}")),
    );
    for mode in [
        shardctl::server::statements::SwitchMode::Off,
        shardctl::server::statements::SwitchMode::Keys,
        shardctl::server::statements::SwitchMode::All,
    ] {
        out.push(format!(
            "switch {mode:?}: {}",
            shardctl::server::statements::set_switch(9, mode)
        ));
    }
    out.push(format!(
        "switch added: {}",
        shardctl::server::statements::add_switch(9)
    ));
    out.push(format!(
        "switch removed: {}",
        shardctl::server::statements::remove_switch(9)
    ));
    let text = out.join("\n");
    assert!(
        !text.contains("never-shown"),
        "a password leaked into display SQL"
    );
    text
}

/// The TLS settings of a source node's inventory, as the channel gets them.
fn tls(client_cert: bool) -> ChannelTls {
    ChannelTls {
        ca_file: "/etc/shardctl/tls/ca.pem".into(),
        cert_and_key: client_cert.then(|| {
            (
                "/etc/shardctl/tls/replica.pem".into(),
                "/etc/shardctl/tls/replica-key.pem".into(),
            )
        }),
    }
}

const FLAVORS: [(Vendor, u16, u16, u16); 5] = [
    (Vendor::MariaDb, 10, 11, 6),
    (Vendor::MariaDb, 11, 4, 2),
    (Vendor::MySql, 5, 7, 44),
    (Vendor::MySql, 8, 0, 36),
    (Vendor::MySql, 8, 4, 0),
];

/// No unauthenticated key exchange: no flavor asks the source for its RSA public key
/// (GET_SOURCE_PUBLIC_KEY / GET_MASTER_PUBLIC_KEY trusts any key a man in the middle
/// sends), with or without TLS; with TLS every flavor verifies the source's certificate.
#[test]
fn channels_never_fetch_the_source_key_and_verify_tls() {
    let ch = Channel::new("c").unwrap();
    for (vendor, major, minor, patch) in FLAVORS {
        let d = Dialect::new(Flavor::new(vendor, major, minor, patch));
        for tls in [None, Some(tls(false)), Some(tls(true))] {
            for start in [
                StartAt::Position("b.000001:4".parse().unwrap()),
                StartAt::GtidAutoPosition,
            ] {
                let spec = SourceSpec {
                    host: "10.0.0.5".into(),
                    port: 3306,
                    user: "repl".into(),
                    password: "p".into(),
                    start,
                    connect_retry_secs: 1,
                    tls: tls.clone(),
                };
                let Ok(st) = d.change_source(&ch, &spec) else {
                    continue;
                };
                assert!(!st.sql.contains("PUBLIC_KEY"), "{}", st.sql);
                if tls.is_some() {
                    assert!(st.sql.contains("SSL = 1"), "{}", st.sql);
                    assert!(st.sql.contains("SSL_VERIFY_SERVER_CERT = 1"), "{}", st.sql);
                    assert!(
                        st.sql.contains("SSL_CA = '/etc/shardctl/tls/ca.pem'"),
                        "{}",
                        st.sql
                    );
                } else {
                    assert!(!st.sql.contains("SSL"), "{}", st.sql);
                }
            }
        }
    }
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

fn shown_opt(st: Option<shardctl::server::Stmt>) -> String {
    st.map_or_else(|| "(none)".to_string(), |s| s.to_string())
}

fn id(name: &str) -> Ident {
    Ident::new("name", name).unwrap()
}

fn hashed(name: &str, hashed_as: HashedAs) -> HashedColumn {
    HashedColumn {
        name: id(name),
        hashed_as,
    }
}

/// The statements that read the same on every flavor.
fn render_common() -> String {
    let (schema, table, titles) = (id("employees_7"), id("salaries"), id("titles"));
    let pk = [id("emp_no"), id("from_date")];
    let key = [Value::Int(10042), Value::from("1999-01-01")];
    let upper = [Value::Int(10977), Value::from("2001-06-30")];
    let mut out = Vec::new();
    let mut line = |label: &str, text: String| out.push(format!("{label}: {text}"));

    // every connection
    line(
        "connect: session",
        sql::allow_backslash_escapes().to_string(),
    );
    line(
        "rows copied on one server: session",
        sql::keep_zero_auto_increment().to_string(),
    );
    line("connect: version", sql::server_version().to_string());
    line(
        "dry run: read-only session",
        sql::session_read_only().to_string(),
    );
    line(
        "operator's select",
        sql::operator_select("SELECT user_id, shard FROM app.owners ;").to_string(),
    );
    line("fence: server start", sql::server_started_at().to_string());
    line("restart: server uptime", sql::server_uptime().to_string());
    line(
        "physical: discard",
        sql::discard_tablespace(&id("employees_3"), &id("salaries")).to_string(),
    );
    line(
        "physical: import",
        sql::import_tablespace(&id("employees_3"), &id("salaries")).to_string(),
    );
    line("physical: page size", sql::innodb_page_size().to_string());
    line("physical: a replica's datadir", sql::datadir().to_string());
    line(
        "physical: flush method",
        sql::innodb_flush_method().to_string(),
    );
    line(
        "physical: foreign keys added back",
        sql::add_constraints(
            &id("employees_3"),
            &id("salaries"),
            &["CONSTRAINT `fk_emp` FOREIGN KEY (`emp_no`) REFERENCES `employees` (`emp_no`) ON DELETE CASCADE".to_string()],
        )
        .to_string(),
    );
    line(
        "physical: the full-text auxiliary tables",
        sql::fulltext_auxiliary_tables("employees_3").to_string(),
    );
    line(
        "physical: a table's InnoDB id",
        sql::innodb_table_id("employees_3/titles").to_string(),
    );
    line(
        "physical: a FULLTEXT table's rebuilt copy swapped in",
        sql::rename_table(&id("employees_3"), &id("_shardctl_ft0"), &id("titles")).to_string(),
    );
    line(
        "physical: tables with a FULLTEXT index",
        sql::fulltext_tables(&id("employees_3")).to_string(),
    );
    line(
        "physical: what a backup carries besides the shard",
        sql::backup_overhead_bytes().to_string(),
    );
    line(
        "physical: partitions",
        sql::table_partitions(&id("employees_3"), &id("ledger")).to_string(),
    );
    line(
        "physical: a partition's table",
        sql::create_table_like(&id("employees_3"), &id("_shardctl_p0"), &id("ledger")).to_string(),
    );
    line(
        "physical: unpartitioned",
        sql::remove_partitioning(&id("employees_3"), &id("_shardctl_p0")).to_string(),
    );
    line(
        "physical: exchange",
        sql::exchange_partition(
            &id("employees_3"),
            &id("ledger"),
            &id("p_old"),
            &id("_shardctl_p0"),
        )
        .to_string(),
    );
    line(
        "physical: drop the emptied table",
        sql::drop_table(&id("employees_3"), &id("_shardctl_p0")).to_string(),
    );
    line(
        "physical: engines",
        sql::table_engines(&id("employees_3")).to_string(),
    );
    line("owner: session id", sql::connection_id().to_string());
    line(
        "owner: session alive",
        sql::session_exists(4711).to_string(),
    );
    line(
        "owner: end a dead owner's session",
        sql::kill_connection(4711).to_string(),
    );
    line(
        "copy: end a reader's query",
        sql::kill_query(4711).to_string(),
    );

    // prune
    let column = id("emp_no");
    let hex = |c: char| Value::from(c.to_string().repeat(32));
    let cases = |lower: Value, upper: Value, values: Vec<Value>| {
        [
            (
                "range",
                NotOwned::OutsideRange {
                    lower: lower.clone(),
                    upper: Some(upper.clone()),
                },
            ),
            (
                "last range",
                NotOwned::OutsideRange {
                    lower: upper,
                    upper: None,
                },
            ),
            ("list", NotOwned::NotIn(values)),
            (
                "arc",
                NotOwned::OutsideArc {
                    after: hex('3'),
                    up_to: hex('a'),
                },
            ),
            (
                "wrapped arc",
                NotOwned::OutsideWrappedArc {
                    after: hex('e'),
                    up_to: hex('3'),
                },
            ),
            ("whole ring", NotOwned::Nothing),
        ]
    };
    let int_cases = cases(
        Value::Int(10000),
        Value::Int(20000),
        vec![Value::Int(7), Value::Int(9)],
    );
    let string_cases = cases(
        Value::from("k"),
        Value::from("p"),
        vec![Value::from("de"), Value::from("fr")],
    );
    for (kind, kind_label, cases) in [
        (KeyKind::Int, "int", &int_cases),
        (KeyKind::Bytes, "string", &string_cases),
    ] {
        for (case, what) in cases {
            line(
                &format!("not owned, {kind_label} key, {case}"),
                sql::not_owned(&column, kind, what).to_string(),
            );
        }
    }
    let not_owned = sql::not_owned(&column, KeyKind::Int, &int_cases[0].1);
    line(
        "keyset after",
        sql::keyset(&pk, &key, Keyset::After).to_string(),
    );
    line(
        "keyset up to",
        sql::keyset(&pk, &key, Keyset::UpTo).to_string(),
    );
    line(
        "prune count",
        sql::count_where(&schema, &table, &not_owned).to_string(),
    );
    line(
        "prune first chunk",
        sql::next_chunk_keys(&schema, &table, &pk, None, 1000).to_string(),
    );
    line(
        "prune next chunk",
        sql::next_chunk_keys(&schema, &table, &pk, Some(&key), 1000).to_string(),
    );
    line(
        "prune first delete",
        sql::delete_chunk(&schema, &table, &pk, None, &upper, &not_owned).to_string(),
    );
    line(
        "prune next delete",
        sql::delete_chunk(&schema, &table, &pk, Some(&key), &upper, &not_owned).to_string(),
    );
    line(
        "prune per-key first chunk's keys",
        sql::chunk_distinct_keys(&schema, &table, &pk, None, &upper, &column).to_string(),
    );
    line(
        "prune per-key next chunk's keys",
        sql::chunk_distinct_keys(&schema, &table, &pk, Some(&key), &upper, &column).to_string(),
    );
    let elsewhere = sql::owned(&sql::not_owned(
        &column,
        KeyKind::Int,
        &NotOwned::NotIn(vec![Value::Int(7), Value::Int(9)]),
    ));
    line(
        "prune per-key chunk count",
        sql::count_chunk(&schema, &table, &pk, Some(&key), &upper, &elsewhere).to_string(),
    );
    line(
        "prune per-key delete",
        sql::delete_chunk(&schema, &table, &pk, Some(&key), &upper, &elsewhere).to_string(),
    );
    line("threads running", sql::threads_running().to_string());
    line(
        "log replica updates",
        sql::log_replica_updates().to_string(),
    );

    // catalog
    let trigger = id("salaries_audit");
    line(
        "catalog: writable columns",
        sql::writable_columns(&schema, &table).to_string(),
    );
    line(
        "catalog: column types",
        sql::column_types(&schema, &table).to_string(),
    );
    line(
        "catalog: primary key",
        sql::primary_key_columns(&schema, &table).to_string(),
    );
    for kind in [
        ObjectKind::Trigger,
        ObjectKind::Procedure,
        ObjectKind::Function,
        ObjectKind::Event,
    ] {
        line(
            &format!("catalog: {kind:?} names"),
            sql::object_names(&schema, kind).to_string(),
        );
        line(
            &format!("catalog: {kind:?} definition"),
            sql::show_create_object(&schema, kind, &trigger).to_string(),
        );
    }
    line("catalog: tables", sql::list_tables(&schema).to_string());
    line(
        "catalog: table definition",
        sql::show_create_table(&schema, &table, false).to_string(),
    );
    line(
        "catalog: view definition",
        sql::show_create_table(&schema, &titles, true).to_string(),
    );
    line(
        "catalog: schema exists",
        sql::count_schemas_named(&schema).to_string(),
    );
    line("catalog: schema sizes", sql::schema_sizes().to_string());
    line(
        "catalog: table rows",
        sql::table_row_estimates(&schema).to_string(),
    );
    let other = id("employees_9");
    line(
        "catalog: tables to refresh",
        sql::analyzable_tables(&[schema.clone(), other.clone()]).to_string(),
    );
    line(
        "catalog: refresh statistics",
        sql::analyze_tables(&[
            (schema.clone(), table.clone()),
            (schema.clone(), titles.clone()),
            (other.clone(), table.clone()),
        ])
        .to_string(),
    );
    line(
        "catalog: foreign keys",
        sql::foreign_keys(&schema).to_string(),
    );
    line(
        "catalog: performance_schema",
        sql::performance_schema_enabled().to_string(),
    );
    line("catalog: table io", sql::table_io_by_schema().to_string());
    line(
        "catalog: count",
        sql::count_rows(&schema, &table).to_string(),
    );
    line(
        "catalog: checksum",
        sql::checksum_table(&schema, &table).to_string(),
    );
    line(
        "catalog: read all",
        sql::select_all(&schema, &table).to_string(),
    );

    // copy
    let to = id("employees_9");
    let cols = [id("emp_no"), id("salary"), id("from_date")];
    line(
        "copy: local infile",
        sql::local_infile_enabled().to_string(),
    );
    line("copy: lock wait", sql::lock_wait_timeout(10).to_string());
    line(
        "copy: lock wait at least 1s",
        sql::lock_wait_timeout(0).to_string(),
    );
    line(
        "copy: lock",
        shown_opt(sql::lock_tables_read(&[
            (&schema, &table),
            (&schema, &titles),
        ])),
    );
    line("copy: lock nothing", shown_opt(sql::lock_tables_read(&[])));
    line("copy: reader isolation", sql::repeatable_read().to_string());
    line(
        "copy: reader snapshot",
        sql::start_consistent_snapshot().to_string(),
    );
    line("copy: unlock", sql::unlock_tables().to_string());
    line(
        "copy: read table",
        sql::select_table(&schema, &table, &cols, &pk).to_string(),
    );
    line(
        "copy: read table without key",
        sql::select_table(&schema, &table, &cols, &[]).to_string(),
    );
    line(
        "copy: read the rows of the keys a key move gives away",
        sql::select_table_where(
            &schema,
            &table,
            &cols,
            &pk,
            Some(&sql::key_range(
                &Ident::new("column", "emp_no").unwrap(),
                Value::Int(15000),
                Some(Value::Int(20000)),
            )),
        )
        .to_string(),
    );
    line("copy: reader done", sql::commit().to_string());
    line("copy: writer session", sql::bulk_load_session().to_string());
    line(
        "copy: writer session into a merge survivor",
        sql::merge_into_session().to_string(),
    );
    line(
        "copy: load",
        sql::load_data_local(&to, &table, &cols).to_string(),
    );
    let rows = [
        vec![
            Value::Int(10001),
            Value::Int(60117),
            Value::from("1986-06-26"),
        ],
        vec![
            Value::Int(10001),
            Value::Int(62102),
            Value::from("1987-06-26"),
        ],
    ];
    line(
        "copy: insert",
        sql::insert_values(&to, &table, &cols, &rows).to_string(),
    );
    line(
        "copy: target's largest packet",
        sql::max_allowed_packet().to_string(),
    );
    line(
        "copy: drop secondary indexes before the load",
        sql::drop_indexes(&to, &table, &[id("k_1"), id("by_name")]).to_string(),
    );
    line(
        "copy: add them back after it",
        sql::add_indexes(
            &to,
            &table,
            &[
                "UNIQUE KEY `by_name` (`first_name`,`last_name`)".to_string(),
                "KEY `k_1` (`k`) COMMENT 'x'".to_string(),
            ],
        )
        .to_string(),
    );
    line("objects: use", sql::use_schema(&to).to_string());
    line(
        "objects: fk checks off",
        sql::foreign_key_checks(false).to_string(),
    );
    line(
        "objects: fk checks on",
        sql::foreign_key_checks(true).to_string(),
    );
    line(
        "objects: replay",
        sql::replay_definition("CREATE TABLE `titles` (`emp_no` int NOT NULL)").to_string(),
    );
    let value = |what: &str, v: &str| sql::ContextValue::new(what, v).unwrap();
    let (cs, coll) = (value("cs", "utf8mb4"), value("coll", "utf8mb4_unicode_ci"));
    line(
        "objects: schema with its defaults",
        sql::create_schema_with_charset(&to, &cs, &coll).to_string(),
    );
    line(
        "objects: schema collation",
        sql::alter_schema_collation(&to, &value("coll", "latin1_swedish_ci")).to_string(),
    );
    line(
        "objects: save session",
        sql::save_session_context().to_string(),
    );
    line(
        "objects: restore session",
        sql::restore_session_context().to_string(),
    );
    let event_context = sql::CreationContext {
        character_set_client: value("cs", "latin1"),
        collation_connection: value("coll", "latin1_swedish_ci"),
        sql_mode: Some(value("mode", "ANSI_QUOTES,NO_ENGINE_SUBSTITUTION")),
        time_zone: Some(value("tz", "+05:30")),
    };
    line(
        "objects: event context",
        sql::session_context(&event_context).to_string(),
    );
    line(
        "objects: view context",
        sql::session_context(&sql::CreationContext {
            sql_mode: None,
            time_zone: None,
            ..event_context.clone()
        })
        .to_string(),
    );
    line(
        "objects: enable event",
        sql::enable_event(&to, &id("purge_audit"), "app@%").to_string(),
    );
    line(
        "objects: enable event of a role",
        sql::enable_event(&to, &id("purge_audit"), "ops_role").to_string(),
    );
    line(
        "objects: refused setting",
        sql::ContextValue::new("sql_mode", "x'; DROP")
            .map(|v| v.to_string())
            .unwrap_or_else(|e| e.to_string()),
    );
    line(
        "copy: reader session",
        sql::copy_reader_session().to_string(),
    );
    line(
        "copy: pausable session",
        sql::copy_pausable_session().to_string(),
    );
    line(
        "copy: writer settings",
        sql::copy_writer_session().to_string(),
    );
    line(
        "copy: year columns",
        sql::year_columns(&schema, &table).to_string(),
    );
    line(
        "catalog: session sql_mode",
        sql::session_sql_mode().to_string(),
    );
    line(
        "catalog: schema charset",
        sql::schema_charset(&schema).to_string(),
    );
    line(
        "catalog: triggers in firing order",
        sql::triggers_in_order(&schema).to_string(),
    );
    line(
        "catalog: events status",
        sql::events_status(&schema).to_string(),
    );
    line("compare: views", sql::views_described(&schema).to_string());
    line(
        "compare: triggers",
        sql::triggers_described(&schema).to_string(),
    );
    line(
        "compare: routines",
        sql::routines_described(&schema).to_string(),
    );
    line(
        "compare: events",
        sql::events_described(&schema).to_string(),
    );

    // schemas, logging, the move's preflight
    line(
        "create schema",
        sql::create_schema_if_not_exists(&to).to_string(),
    );
    line("drop schema", sql::drop_schema(&schema).to_string());
    line(
        "drop schema if exists",
        sql::drop_schema_if_exists(&to).to_string(),
    );
    line("unlogged", sql::sql_log_bin(false).to_string());
    line("logged", sql::sql_log_bin(true).to_string());
    line("grants", sql::show_grants().to_string());

    // shard fence, drop-source keep, same-node copy
    let hidden: Vec<sql::HiddenTable> = [&table, &titles]
        .into_iter()
        .enumerate()
        .map(|(n, t)| sql::HiddenTable {
            schema: schema.clone(),
            table: t.clone(),
            hidden: sql::hidden_table_name(12, n),
        })
        .collect();
    line("fence: lock wait", sql::lock_wait_timeout(5).to_string());
    line(
        "fence: open transactions",
        sql::open_transactions(std::slice::from_ref(&schema)).to_string(),
    );
    line(
        "fence: metadata lock holders (MariaDB)",
        sql::metadata_lock_holders_mariadb(std::slice::from_ref(&schema)).to_string(),
    );
    line(
        "fence: metadata lock holders (MySQL)",
        sql::metadata_lock_holders_mysql(std::slice::from_ref(&schema)).to_string(),
    );
    line(
        "fence: end a blocker",
        sql::kill_connection(4242).to_string(),
    );
    line("directory clock", sql::unix_now().to_string());
    line("fence: raise", shown_opt(sql::rename_to_hidden(&hidden)));
    line("fence: lift", shown_opt(sql::rename_from_hidden(&hidden)));
    line(
        "fence: nothing to raise",
        shown_opt(sql::rename_to_hidden(&[])),
    );
    line(
        "drop-source keep",
        shown_opt(sql::rename_to_hidden(&hidden[..1])),
    );
    let trash = shardctl::directory::names::NameScope::of_directory(0x5eed0001).trash_schema(12, 0);
    line(
        "drop-source: old copy moved out",
        shown_opt(sql::move_tables(
            &schema,
            &[
                (table.clone(), table.clone()),
                (hidden[1].hidden.clone(), titles.clone()),
            ],
            &trash,
        )),
    );
    line(
        "drop-source: nothing to move",
        shown_opt(sql::move_tables(&schema, &[], &trash)),
    );
    line(
        "revert: old copy back under the shard's name",
        shown_opt(sql::move_tables(
            &trash,
            &[
                (table.clone(), table.clone()),
                (titles.clone(), titles.clone()),
            ],
            &schema,
        )),
    );
    for word in ["view", "trigger", "procedure", "function", "event"] {
        let kind = shardctl::server::statements::DefinedKind::from_word(word).unwrap();
        line(
            &format!("revert: {word} re-created afresh"),
            sql::drop_defined_if_exists(
                &schema,
                kind,
                &Ident::new("object", "salaries_audit").unwrap(),
            )
            .to_string(),
        );
    }
    line(
        "same-node copy: rows",
        sql::copy_rows_within_node(&to, &table, &schema, &hidden[0].hidden, &cols).to_string(),
    );

    // merge: the survivor's rows in the retired shard's key space
    let retired_keys = sql::owned(&sql::not_owned(
        &id("emp_no"),
        KeyKind::Int,
        &NotOwned::OutsideRange {
            lower: Value::Int(20000),
            upper: Some(Value::Int(30000)),
        },
    ));
    line(
        "merge: the copy's session passes the survivor's guards, then meets them again",
        sql::unmark_pruning_session().to_string(),
    );
    line(
        "merge: survivor holds retired keys?",
        sql::any_where(&to, &table, &retired_keys).to_string(),
    );
    line(
        "merge: survivor loses the retired keys (retry, rollback)",
        sql::delete_where(&to, &table, &retired_keys).to_string(),
    );
    line(
        "merge: compare the survivor's retired keys",
        sql::chunk_checksum(
            &to,
            &table,
            &[
                hashed("emp_no", HashedAs::Text),
                hashed("salary", HashedAs::Text),
            ],
            &[id("emp_no")],
            None,
            None,
            Some(&retired_keys),
        )
        .to_string(),
    );

    // split's median
    let range = sql::key_range(&column, Value::Int(10000), Some(Value::Int(20000)));
    let open_range = sql::key_range(&column, Value::Int(20000), None);
    line(
        "split: count in range",
        sql::count_where(&schema, &table, &range).to_string(),
    );
    line(
        "split: count from lower bound",
        sql::count_where(&schema, &table, &open_range).to_string(),
    );
    line(
        "split: median",
        sql::key_at_offset(&schema, &table, &column, &range, 4321).to_string(),
    );
    line(
        "rebalance: a range shard's cut from the top",
        sql::key_at_offset_from_top(&schema, &table, &column, &range, 1234).to_string(),
    );
    let values = sql::Condition {
        sql: "(`emp_no` IN (?, ?))".into(),
        params: vec![Value::from("acme"), Value::from("beta")],
    };
    line(
        "rebalance: a list shard's rows per value",
        sql::rows_per_key(&schema, &table, &column, &values).to_string(),
    );

    // directory changes checked against the servers: shard add, table add, shard remove
    let before = sql::not_owned(
        &column,
        KeyKind::Int,
        &NotOwned::OutsideRange {
            lower: Value::Int(0),
            upper: None,
        },
    );
    let after = sql::not_owned(
        &column,
        KeyKind::Int,
        &NotOwned::OutsideRange {
            lower: Value::Int(0),
            upper: Some(Value::Int(500)),
        },
    );
    line(
        "shard add: a key the new shard would take",
        sql::first_key_where(
            &schema,
            &table,
            &column,
            &sql::newly_not_owned(&before, &after),
        )
        .to_string(),
    );
    line(
        "table add: column type",
        sql::column_data_type(&schema, &table, &column).to_string(),
    );
    line("remove: any row", sql::any_row(&schema, &table).to_string());
    line(
        "shard remove: hidden name",
        sql::removed_table_name(7, 1795000000, 2).to_string(),
    );

    // verification
    line("verify: session time zone", sql::session_utc().to_string());
    line(
        "verify: columns",
        sql::hashed_columns(&schema, &table).to_string(),
    );
    line(
        "verify: first chunk bound",
        sql::chunk_upper_bound(&schema, &table, &pk, None, 10000).to_string(),
    );
    line(
        "verify: next chunk bound",
        sql::chunk_upper_bound(&schema, &table, &pk, Some(&key), 10000).to_string(),
    );
    let cols = [
        hashed("emp_no", HashedAs::Text),
        hashed("salary", HashedAs::Text),
        hashed("from_date", HashedAs::Text),
    ];
    line(
        "verify: middle chunk",
        sql::chunk_checksum(&schema, &table, &cols, &pk, Some(&key), Some(&upper), None)
            .to_string(),
    );
    line(
        "verify: last chunk",
        sql::chunk_checksum(&schema, &table, &cols, &pk, Some(&upper), None, None).to_string(),
    );
    line(
        "verify: table without primary key",
        sql::chunk_checksum(&schema, &titles, &cols, &[], None, None, None).to_string(),
    );
    // Every way a column is hashed, NULLs included: bytes with their length, a FLOAT or
    // DOUBLE by its exact value.
    let every_kind = [
        hashed("emp_no", HashedAs::Text),
        hashed("title", HashedAs::Bytes),
        hashed("latitude", HashedAs::ExactFloat),
        hashed("photo", HashedAs::Bytes),
    ];
    line(
        "verify: every kind of column",
        sql::chunk_checksum(&schema, &table, &every_kind, &pk, None, Some(&upper), None)
            .to_string(),
    );
    line(
        "dump: FLOAT columns it would round",
        sql::float_columns(&schema).to_string(),
    );
    line(
        "prune: pass the split's guards",
        sql::mark_pruning_session().to_string(),
    );
    line(
        "guard: a long table's trigger name",
        sql::guard_trigger_name(
            &id("a_table_name_long_enough_to_push_the_trigger_name_over_64_chars"),
            sql::GuardEvent::Update,
        )
        .to_string(),
    );
    line(
        "guard: hash arc, string key",
        sql::guard_trigger(
            &schema,
            &table,
            &table,
            sql::GuardEvent::Insert,
            &id("k"),
            &sql::not_owned(
                &id("k"),
                KeyKind::Bytes,
                &NotOwned::OutsideWrappedArc {
                    after: Value::from("f0000000000000000000000000000000"),
                    up_to: Value::from("10000000000000000000000000000000"),
                },
            ),
            3,
            true,
        )
        .to_string(),
    );
    line(
        "guard: list with a quote",
        sql::guard_trigger(
            &schema,
            &table,
            &table,
            sql::GuardEvent::Delete,
            &id("k"),
            &sql::not_owned(
                &id("k"),
                KeyKind::Bytes,
                &NotOwned::NotIn(vec![Value::from("o'brien"), Value::from("a\\b")]),
            ),
            3,
            true,
        )
        .to_string(),
    );

    // workload
    let workload = id("shardctl_workload");
    line(
        "workload table, int key",
        sql::create_workload_table(&schema, &workload, KeyKind::Int).to_string(),
    );
    line(
        "workload table, string key",
        sql::create_workload_table(&schema, &workload, KeyKind::Bytes).to_string(),
    );
    line(
        "workload write",
        sql::insert_workload_row(&schema, &workload, Value::Int(10042), 77).to_string(),
    );
    line(
        "workload check",
        sql::workload_seqs(&schema, &workload, Value::from("w17")).to_string(),
    );
    line(
        "workload check, one run",
        sql::workload_seqs_between(&schema, &workload, 1000, 1999).to_string(),
    );
    out.join("\n")
}

#[test]
fn statements() {
    insta::assert_snapshot!(render_common());
}

/// The statements of the reference commands (`simulate`, `ids`, `global`, `query`):
/// `src/server/reports.rs`.
fn render_reports() -> String {
    use shardctl::server::reports as r;
    let (s, t, c) = (id("app_3"), id("accounts"), id("id"));
    let d = id("shardctl");
    let cols = [id("dept_no"), id("dept_name")];
    let pk = [id("dept_no")];
    let pk2 = [id("emp_no"), id("from_date")];
    let lines = [
        (
            "simulate: a live column",
            r::select_column(&s, &t, &c).to_string(),
        ),
        (
            "simulate: row size",
            r::average_row_length(&s, &t).to_string(),
        ),
        (
            "ids: auto_increment settings",
            r::auto_increment_settings().to_string(),
        ),
        (
            "ids: typed primary key",
            r::primary_key_typed(&s, &t).to_string(),
        ),
        ("ids: ids in order", r::ids_in_order(&s, &t, &c).to_string()),
        ("ids: create sequence", r::create_sequence(&d).to_string()),
        (
            "ids: take from sequence",
            r::take_from_sequence(&d).to_string(),
        ),
        ("ids: last insert id", r::last_insert_id().to_string()),
        ("ids: lock wait", r::lock_wait_seconds(0).to_string()),
        ("ids: sequences", r::sequences(&d).to_string()),
        ("ids: sequence feeds", r::sequence_feeds(&d).to_string()),
        (
            "ids: clear sequence feeds",
            r::clear_sequence_feeds(&d).to_string(),
        ),
        (
            "ids: add sequence feed",
            r::add_sequence_feed(&d).to_string(),
        ),
        ("ids: raise sequence", r::raise_sequence(&d).to_string()),
        (
            "ids: column data type",
            r::column_data_type(&s, &t, &c).to_string(),
        ),
        (
            "ids: max of column",
            r::max_of_column(&s, &t, &c).to_string(),
        ),
        ("global: set source", r::set_global_source(&d).to_string()),
        ("global: sources", r::global_sources(&d).to_string()),
        (
            "global: table exists",
            r::base_table_exists(&s, &t).to_string(),
        ),
        (
            "global: start transaction",
            r::start_transaction().to_string(),
        ),
        (
            "global: upsert 2 rows",
            r::upsert_rows(&s, &id("departments"), &cols, 2).to_string(),
        ),
        (
            "global: delete 2 keys",
            r::delete_keys(&s, &id("departments"), &pk, &[true], 2).to_string(),
        ),
        (
            "global: delete 1 composite key",
            r::delete_keys(&s, &id("salaries"), &pk2, &[false, false], 1).to_string(),
        ),
        (
            "global: key columns and collations",
            r::key_collations(&s, &t).to_string(),
        ),
        (
            "query: time limit, MariaDB",
            r::statement_time_limit(Flavor::new(Vendor::MariaDb, 10, 11, 6), 30).to_string(),
        ),
        (
            "query: time limit, MySQL",
            r::statement_time_limit(Flavor::new(Vendor::MySql, 8, 0, 36), 30).to_string(),
        ),
        (
            "query: markers replaced",
            r::shard_query(
                &[
                    "SELECT a.id, COUNT(*) FROM ".to_string(),
                    " a JOIN ".to_string(),
                    " d USING (dept_no) WHERE note = '{x}' GROUP BY a.id".to_string(),
                ],
                &[(s.clone(), t.clone()), (s.clone(), id("departments"))],
            )
            .to_string(),
        ),
        {
            let not_owned = shardctl::server::statements::Condition {
                sql: "(`emp_no` < ? OR `emp_no` >= ?)".into(),
                params: vec![10.into(), 20.into()],
            };
            let owned = |table: &str, filtered: bool| r::MarkerTable {
                schema: s.clone(),
                table: id(table),
                not_owned: filtered.then(|| not_owned.clone()),
            };
            let (st, values) = r::shard_query_owned(
                &[
                    "SELECT ".to_string(),
                    ".emp_no, COUNT(*) FROM ".to_string(),
                    " JOIN ".to_string(),
                    " d USING (dept_no) GROUP BY ".to_string(),
                    ".emp_no".to_string(),
                ],
                &[
                    owned("employees", true),
                    owned("employees", true),
                    owned("departments", false),
                    owned("employees", true),
                ],
            );
            (
                "query: a pending prune's shard reads only its own rows",
                format!(
                    "{}\n{st}",
                    r::owned_variables(&values)
                        .map(|v| v.to_string())
                        .unwrap_or_default()
                ),
            )
        },
    ];
    lines
        .iter()
        .map(|(k, v)| format!("{k}: {v}"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn reference_statements() {
    insta::assert_snapshot!(render_reports());
}

/// The reporting server's statements: each flavor's channel start with a stop position,
/// and the directory's records of reporting nodes, their sources, the follows they owe and
/// their last checks.
#[test]
fn reporting_statements() {
    use shardctl::server::reporting as r;
    let ch = Channel::new("shardctl_report_node2").unwrap();
    let pos = BinlogPosition {
        file: "mysql-bin.000042".into(),
        pos: 1337,
    };
    let until = BinlogPosition {
        file: "mysql-bin.000043".into(),
        pos: 4,
    };
    let d = Ident::new("schema", "shardctl").unwrap();
    let mut out = Vec::new();
    for (vendor, major, minor, patch) in FLAVORS {
        let f = Flavor::new(vendor, major, minor, patch);
        out.push(format!(
            "{f}: start until: {}",
            Dialect::new(f).start_channel_until(&ch, &pos).unwrap()
        ));
    }
    out.push(format!("nodes: {}", r::reporting_nodes(&d)));
    out.push(format!(
        "add node: {}",
        r::insert_reporting_node(&d, "node4")
    ));
    for st in r::delete_reporting_node(&d, "node4") {
        out.push(format!("forget node: {st}"));
    }
    out.push(format!("sources: {}", r::reporting_sources(&d, "node4")));
    out.push(format!(
        "record source: {}",
        r::upsert_reporting_source(
            &d,
            "node4",
            "node2",
            &ch,
            r#"["app_2"]"#,
            r#"["app_5"]"#,
            "joining",
            Some(&pos),
            Some(&until),
        )
    ));
    out.push(format!(
        "forget source: {}",
        r::delete_reporting_source(&d, "node4", "node2")
    ));
    out.push(format!(
        "record follow: {}",
        r::record_follow(&d, "app_1", "node1", "node3", &pos, 7)
    ));
    out.push(format!("follows: {}", r::reporting_follows(&d, "node4")));
    out.push(format!(
        "follow done: {}",
        r::delete_reporting_follow(&d, "node4", "app_1")
    ));
    out.push(format!(
        "follows failed: {}",
        r::fail_reporting_follows(&d, "node4", "another shardctl held the reporting lock")
    ));
    out.push(format!(
        "record check: {}",
        r::record_reporting_check(&d, "node4", 2, false, r#"["app_2.t"]"#)
    ));
    out.push(format!("checks: {}", r::reporting_checks(&d, "node4")));
    assert!(Dialect::new(Flavor::new(Vendor::MariaDb, 10, 11, 6))
        .start_channel_until(
            &ch,
            &BinlogPosition {
                file: "../x".into(),
                pos: 4
            }
        )
        .is_err());
    insta::assert_snapshot!(out.join("\n"));
}

/// The preflight's reads of accounts, definers, sharding columns and foreign keys:
/// `src/server/accounts.rs`.
#[test]
fn preflight_statements() {
    use shardctl::server::accounts as a;
    let (s, t, c) = (id("shop_2"), id("orders"), id("customer_id"));
    let lines = [
        ("definers", a::definers(&s).to_string()),
        (
            "account exists",
            a::account_count("app", "10.0.%").to_string(),
        ),
        ("current account", a::current_account().to_string()),
        (
            "own global privileges",
            a::global_privileges("'app'@'%'").to_string(),
        ),
        (
            "own schema privileges",
            a::schema_privileges("'app'@'%'").to_string(),
        ),
        (
            "own table privileges",
            a::table_privileges("'app'@'%'", &s).to_string(),
        ),
        (
            "column nullable",
            a::column_nullable(&s, &t, &c).to_string(),
        ),
        (
            "foreign keys to other schemas",
            a::foreign_keys_to_other_schemas(&s).to_string(),
        ),
    ];
    insta::assert_snapshot!(lines
        .iter()
        .map(|(k, v)| format!("{k}: {v}"))
        .collect::<Vec<_>>()
        .join("\n"));
}

/// The change stream's statements: the replica session and the source's settings per
/// flavor, the catalog reads of a moving table, the applier's row statements and its
/// checkpoint: `src/server/stream.rs`.
#[test]
fn stream_statements() {
    use shardctl::server::stream as st;
    let (s, t) = (id("shop_2"), id("orders"));
    let cp = id("_shardctl");
    let mut out = Vec::new();
    for flavor in [
        Flavor::new(Vendor::MariaDb, 10, 11, 6),
        Flavor::new(Vendor::MySql, 5, 7, 44),
        Flavor::new(Vendor::MySql, 8, 0, 36),
    ] {
        let d = Dialect::new(flavor);
        out.push(format!("{flavor} settings: {}", st::source_settings(d)));
        for s in st::replica_session(d, std::time::Duration::from_millis(1500)) {
            out.push(format!("{flavor} replica session: {s}"));
        }
    }
    for s in st::mariadb_gtid_start("0-1-5,7-3-12") {
        out.push(format!("MariaDB GTID start: {s}"));
    }
    let pos = BinlogPosition {
        file: "mysql-bin.000042".into(),
        pos: 1337,
    };
    let cols = [id("id"), id("customer_id"), id("note")];
    let key = [id("id")];
    let lines = [
        ("binary logs", st::show_binary_logs()),
        ("source clock", st::unix_time()),
        ("columns", st::table_columns(&s, &t)),
        ("unique indexes", st::unique_indexes(&s, &t)),
        ("triggers", st::table_triggers(&s, &t)),
        ("applier session", st::applier_session()),
        ("begin", st::start_transaction()),
        ("rollback", st::rollback()),
        ("checkpoint schema", st::create_checkpoint_schema(&cp)),
        ("checkpoint table", st::create_checkpoint_table(&cp)),
        ("read checkpoint", st::read_checkpoint(&cp, "op7-part1")),
        (
            "write checkpoint",
            st::write_checkpoint(
                &cp,
                &st::CheckpointRow {
                    stream_id: "op7-part1",
                    position: &pos,
                    gtid_state: "0-1-5",
                    last_gtid: "0-1-5",
                    transactions: 3,
                    row_changes: 70,
                    source_time: 1_700_000_000,
                    epoch: 2,
                },
            ),
        ),
        (
            "lock the checkpoint's epoch",
            st::lock_checkpoint_epoch(&cp, "op7-part1"),
        ),
        (
            "claim the checkpoint",
            st::claim_checkpoint(&cp, "op7-part1", 3),
        ),
        (
            "the checkpoint's epoch",
            st::checkpoint_epoch(&cp, "op7-part1"),
        ),
        ("delete checkpoint", st::delete_checkpoint(&cp, "op7-part1")),
        (
            "insert two rows",
            st::insert_rows(
                &s,
                &t,
                &cols,
                2,
                vec![
                    Value::Int(1),
                    Value::Int(10),
                    Value::NULL,
                    Value::Int(2),
                    Value::Int(10),
                    Value::from("x"),
                ],
            ),
        ),
        (
            "update by key",
            st::update_by_key(
                &s,
                &t,
                &cols,
                &key,
                vec![Value::Int(1), Value::Int(11), Value::NULL, Value::Int(1)],
            ),
        ),
        (
            "delete by key",
            st::delete_by_key(&s, &t, &key, vec![Value::Int(1)]),
        ),
        (
            "count by key",
            st::count_by_key(&s, &t, &key, vec![Value::Int(1)]),
        ),
    ];
    out.extend(lines.iter().map(|(k, v)| format!("{k}: {v}")));
    insta::assert_snapshot!(out.join("\n"));
}
