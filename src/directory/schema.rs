//! The directory's own tables, as versioned migrations. `shardctl init` applies the ones a
//! directory lacks; a directory newer than this binary is refused.

/// The schema version this binary writes and understands.
pub const SCHEMA_VERSION: u32 = 15;

/// Migration `n` (1-based) brings a directory from version n-1 to n. `{d}` stands for the
/// back-quoted directory schema.
pub const MIGRATIONS: &[&[&str]] = &[&[
    "CREATE TABLE IF NOT EXISTS {d}.directory_version (
        id TINYINT UNSIGNED PRIMARY KEY,
        version BIGINT UNSIGNED NOT NULL
    ) ENGINE=InnoDB",
    "INSERT IGNORE INTO {d}.directory_version (id, version) VALUES (1, 0)",
    "CREATE TABLE IF NOT EXISTS {d}.nodes (
        name VARCHAR(64) NOT NULL PRIMARY KEY,
        host VARCHAR(255) NOT NULL,
        port SMALLINT UNSIGNED NOT NULL
    ) ENGINE=InnoDB",
    "CREATE TABLE IF NOT EXISTS {d}.partition_functions (
        func_id INT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
        name VARCHAR(64) NOT NULL UNIQUE,
        sharding_type ENUM('RANGE','HASH','LIST') NOT NULL,
        key_type ENUM('INT','STRING') NOT NULL
    ) ENGINE=InnoDB",
    "CREATE TABLE IF NOT EXISTS {d}.locations (
        shard_id INT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
        func_id INT UNSIGNED NOT NULL,
        node VARCHAR(64) NOT NULL,
        host VARCHAR(255) NOT NULL,
        port SMALLINT UNSIGNED NOT NULL,
        state ENUM('online','moving','read_only','offline') NOT NULL DEFAULT 'offline',
        version BIGINT UNSIGNED NOT NULL,
        updated_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
        KEY (node),
        FOREIGN KEY (func_id) REFERENCES partition_functions (func_id),
        FOREIGN KEY (node) REFERENCES nodes (name)
    ) ENGINE=InnoDB",
    "CREATE TABLE IF NOT EXISTS {d}.ranges (
        range_id INT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
        func_id INT UNSIGNED NOT NULL,
        lower_bound BIGINT NULL,
        lower_bound_str VARBINARY(255) NULL,
        shard_id INT UNSIGNED NOT NULL,
        UNIQUE KEY int_bound (func_id, lower_bound),
        UNIQUE KEY str_bound (func_id, lower_bound_str),
        FOREIGN KEY (func_id) REFERENCES partition_functions (func_id),
        FOREIGN KEY (shard_id) REFERENCES locations (shard_id)
    ) ENGINE=InnoDB",
    "CREATE TABLE IF NOT EXISTS {d}.hashes (
        func_id INT UNSIGNED NOT NULL,
        hash CHAR(32) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
        shard_id INT UNSIGNED NOT NULL,
        PRIMARY KEY (func_id, hash),
        FOREIGN KEY (func_id) REFERENCES partition_functions (func_id),
        FOREIGN KEY (shard_id) REFERENCES locations (shard_id)
    ) ENGINE=InnoDB",
    "CREATE TABLE IF NOT EXISTS {d}.lists (
        func_id INT UNSIGNED NOT NULL,
        value VARBINARY(255) NOT NULL,
        shard_id INT UNSIGNED NOT NULL,
        PRIMARY KEY (func_id, value),
        FOREIGN KEY (func_id) REFERENCES partition_functions (func_id),
        FOREIGN KEY (shard_id) REFERENCES locations (shard_id)
    ) ENGINE=InnoDB",
    "CREATE TABLE IF NOT EXISTS {d}.columns (
        schema_name VARCHAR(64) NOT NULL,
        table_name VARCHAR(64) NOT NULL,
        column_name VARCHAR(64) NOT NULL,
        func_id INT UNSIGNED NOT NULL,
        PRIMARY KEY (schema_name, table_name),
        FOREIGN KEY (func_id) REFERENCES partition_functions (func_id)
    ) ENGINE=InnoDB",
    "CREATE TABLE IF NOT EXISTS {d}.global_tables (
        schema_name VARCHAR(64) NOT NULL,
        table_name VARCHAR(64) NOT NULL,
        PRIMARY KEY (schema_name, table_name)
    ) ENGINE=InnoDB",
    "CREATE TABLE IF NOT EXISTS {d}.operations (
        op_id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
        kind VARCHAR(32) NOT NULL,
        shard_id INT UNSIGNED NULL,
        source_node VARCHAR(64) NULL,
        target_node VARCHAR(64) NULL,
        state VARCHAR(16) NOT NULL,
        owner VARCHAR(255) NULL,
        heartbeat_at TIMESTAMP(3) NULL,
        params TEXT NULL,
        error TEXT NULL,
        created_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
        updated_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
        KEY (shard_id, state)
    ) ENGINE=InnoDB",
    "CREATE TABLE IF NOT EXISTS {d}.operation_steps (
        op_id BIGINT UNSIGNED NOT NULL,
        step_no INT UNSIGNED NOT NULL,
        name VARCHAR(64) NOT NULL,
        state VARCHAR(16) NOT NULL,
        inputs TEXT NULL,
        outputs TEXT NULL,
        started_at TIMESTAMP(3) NULL,
        finished_at TIMESTAMP(3) NULL,
        PRIMARY KEY (op_id, step_no),
        FOREIGN KEY (op_id) REFERENCES operations (op_id)
    ) ENGINE=InnoDB",
], &[
    // The owner's lease: every journal write and the flip check the epoch in the same
    // transaction; `stop_requested` asks a live owner to stop at its next safe point.
    "ALTER TABLE {d}.operations
        ADD COLUMN epoch BIGINT UNSIGNED NOT NULL DEFAULT 0,
        ADD COLUMN stop_requested TINYINT UNSIGNED NOT NULL DEFAULT 0",
    // Intent before effect: one row per effect on a server or the directory, written
    // before it happens and marked done after.
    "CREATE TABLE IF NOT EXISTS {d}.operation_effects (
        op_id BIGINT UNSIGNED NOT NULL,
        seq INT UNSIGNED NOT NULL,
        step_no INT UNSIGNED NOT NULL,
        effect VARCHAR(32) NOT NULL,
        node VARCHAR(64) NOT NULL,
        state VARCHAR(16) NOT NULL,
        epoch BIGINT UNSIGNED NOT NULL,
        detail MEDIUMTEXT NULL,
        outputs MEDIUMTEXT NULL,
        intended_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
        finished_at TIMESTAMP(3) NULL,
        PRIMARY KEY (op_id, seq),
        FOREIGN KEY (op_id) REFERENCES operations (op_id)
    ) ENGINE=InnoDB",
    // Read-only fences held per node: the server goes back to writable only when the last
    // holder releases it, and only if it was writable before the first.
    "CREATE TABLE IF NOT EXISTS {d}.read_only_fences (
        node VARCHAR(64) NOT NULL,
        op_id BIGINT UNSIGNED NOT NULL,
        was_read_only TINYINT UNSIGNED NOT NULL,
        raised_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
        PRIMARY KEY (node, op_id)
    ) ENGINE=InnoDB",
], &[
    // `shardctl cutover OP`: the operator's go-ahead for an operation waiting in its
    // await-cutover step.
    "ALTER TABLE {d}.operations
        ADD COLUMN cutover_requested TINYINT UNSIGNED NOT NULL DEFAULT 0",
], &[
    // Sequences handing out blocks of ids unique across shards (`shardctl ids sequence`,
    // `Router::next_id`): values up to max_value, next_value the first not handed out.
    "CREATE TABLE IF NOT EXISTS {d}.sequences (
        name VARCHAR(64) NOT NULL PRIMARY KEY,
        next_value BIGINT NOT NULL,
        block_size INT UNSIGNED NOT NULL,
        max_value BIGINT NOT NULL,
        created_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3)
    ) ENGINE=InnoDB",
    // The shard holding each global table's source of truth (`shardctl global source`).
    "CREATE TABLE IF NOT EXISTS {d}.global_sources (
        schema_name VARCHAR(64) NOT NULL,
        table_name VARCHAR(64) NOT NULL,
        source_shard INT UNSIGNED NOT NULL,
        PRIMARY KEY (schema_name, table_name)
    ) ENGINE=InnoDB",
], &[
    // `shardctl revert OP` / `shardctl finalize OP`: what an operator asked of a move
    // waiting in its revert window.
    "ALTER TABLE {d}.operations
        ADD COLUMN window_request VARCHAR(16) NULL",
], &[
    // Operator control of a running operation (`shardctl pause`, `continue`, `throttle`):
    // the pause request, when the owner acknowledged it (every worker parked at a safe
    // point), and the live limits (NULL: the operation's own setting). The owner's
    // heartbeat reads them every second.
    "ALTER TABLE {d}.operations
        ADD COLUMN pause_requested TINYINT UNSIGNED NOT NULL DEFAULT 0,
        ADD COLUMN paused_at TIMESTAMP(3) NULL,
        ADD COLUMN max_lag_secs INT UNSIGNED NULL,
        ADD COLUMN chunk_ms INT UNSIGNED NULL,
        ADD COLUMN workers SMALLINT UNSIGNED NULL,
        ADD COLUMN max_threads_running INT UNSIGNED NULL",
], &[
    // Reporting servers (`shardctl reporting attach`): nodes holding no shard that
    // replicate every shard's schemas, one channel per source node.
    "CREATE TABLE IF NOT EXISTS {d}.reporting_nodes (
        node VARCHAR(64) NOT NULL PRIMARY KEY,
        attached_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3)
    ) ENGINE=InnoDB",
    // One row per (reporting node, source node): the channel, the schemas its filter
    // carries, and the change under way (intent before effect): `copying` the `pending`
    // schemas onto the reporting node, `joining` them into the channel from the copy's
    // coordinates (`pending_file`, `pending_pos`), `none` when nothing is under way;
    // `until_*`: where the channel stood when the join stopped it, recorded before the
    // channel is re-pointed (the position both must meet).
    "CREATE TABLE IF NOT EXISTS {d}.reporting_sources (
        reporting_node VARCHAR(64) NOT NULL,
        source_node VARCHAR(64) NOT NULL,
        channel VARCHAR(64) NOT NULL,
        carried TEXT NOT NULL,
        pending TEXT NOT NULL,
        pending_state VARCHAR(16) NOT NULL,
        pending_file VARCHAR(255) NULL,
        pending_pos BIGINT UNSIGNED NULL,
        until_file VARCHAR(255) NULL,
        until_pos BIGINT UNSIGNED NULL,
        updated_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
        PRIMARY KEY (reporting_node, source_node),
        FOREIGN KEY (reporting_node) REFERENCES reporting_nodes (node)
    ) ENGINE=InnoDB",
], &[
    // A random id of this directory: the names an operation gives what it leaves on the
    // nodes (its channel, the old copy's trash schemas) carry it, so two directories
    // sharing nodes never take each other's channel or schema. Operations journaled
    // before it keep the names they started with (their params have no `names`).
    "ALTER TABLE {d}.directory_version
        ADD COLUMN directory_id INT UNSIGNED NULL",
    "UPDATE {d}.directory_version
        SET directory_id = CONV(LEFT(SHA2(CONCAT(UUID(), RAND(), @@hostname, @@port), 256), 8), 16, 10)
        WHERE id = 1 AND directory_id IS NULL",
], &[
    // A reporting server's follows, per (reporting node, schema): a move's flip records
    // that the reporting copy of each moved schema, exact at the flip once the old node's
    // channel has applied all it logged, needs the new node's events from its position at
    // the flip (`at_file`, `at_pos`). The row goes when the schema is joined at that
    // position (or copied afresh); until then `reporting status` shows it, with why the
    // last attempt failed (`failure`), and the next sync retries it.
    "CREATE TABLE IF NOT EXISTS {d}.reporting_follows (
        reporting_node VARCHAR(64) NOT NULL,
        schema_name VARCHAR(64) NOT NULL,
        from_node VARCHAR(64) NOT NULL,
        to_node VARCHAR(64) NOT NULL,
        at_file VARCHAR(255) NOT NULL,
        at_pos BIGINT UNSIGNED NOT NULL,
        operation_id BIGINT UNSIGNED NOT NULL,
        failure TEXT NULL,
        recorded_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
        PRIMARY KEY (reporting_node, schema_name),
        FOREIGN KEY (reporting_node) REFERENCES reporting_nodes (node)
    ) ENGINE=InnoDB",
    // The last `shardctl reporting check` of each (reporting node, shard): whether the
    // copy matched the fleet, and the differing tables when not.
    "CREATE TABLE IF NOT EXISTS {d}.reporting_checks (
        reporting_node VARCHAR(64) NOT NULL,
        shard_id INT UNSIGNED NOT NULL,
        clean TINYINT UNSIGNED NOT NULL,
        differing TEXT NOT NULL,
        checked_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
        PRIMARY KEY (reporting_node, shard_id),
        FOREIGN KEY (reporting_node) REFERENCES reporting_nodes (node)
    ) ENGINE=InnoDB",
], &[
    // The columns each sequence's ids are stored in (`ids sequence feeds`): `ids check`
    // and `status` compare a sequence's next value with the highest id those columns hold
    // on every shard, which a directory restored from an older backup falls behind.
    "CREATE TABLE IF NOT EXISTS {d}.sequence_feeds (
        sequence_name VARCHAR(64) NOT NULL,
        schema_name VARCHAR(64) NOT NULL,
        table_name VARCHAR(64) NOT NULL,
        column_name VARCHAR(64) NOT NULL,
        PRIMARY KEY (sequence_name, schema_name, table_name, column_name)
    ) ENGINE=InnoDB",
], &[
    // The phase of a move, split or merge (`directory::phase::Phase`), written with the
    // step or request that changed it; the guard of the operator's requests. NULL for
    // other operations and for those journaled before this version, whose phase `resume`
    // derives from their steps.
    "ALTER TABLE {d}.operations
        ADD COLUMN phase VARCHAR(16) NULL",
], &[
    // What the owner's work has done so far, written by its heartbeat every second for
    // monitoring (`shardctl exporter`): a copy's rows and bytes written and the rows it
    // expects in all. NULL until the work reports any; nothing reads it to decide.
    "ALTER TABLE {d}.operations
        ADD COLUMN progress_rows BIGINT UNSIGNED NULL,
        ADD COLUMN progress_rows_expected BIGINT UNSIGNED NULL,
        ADD COLUMN progress_bytes BIGINT UNSIGNED NULL",
], &[
    // The operator's availability of a shard (`shardctl shard set-availability`), which
    // routers honour: reads and writes, reads only, or neither. Apart from `state`, which
    // is shardctl's account of an operation.
    "ALTER TABLE {d}.locations
        ADD COLUMN availability ENUM('available','no_writes','unavailable') NOT NULL DEFAULT 'available' AFTER state",
    // The change log: one row per directory version, written by the change that bumped
    // it in the same transaction, saying what it touched of the tables routers read
    // (`scope`: none, the locations and mappings of the `shards` listed, or all), so a
    // router at version V re-reads only what changed after V. Rows older than
    // CHANGE_LOG_KEPT versions are deleted by the change that makes them so.
    "CREATE TABLE IF NOT EXISTS {d}.directory_changes (
        version BIGINT UNSIGNED NOT NULL PRIMARY KEY,
        scope ENUM('none','shards','all') NOT NULL,
        shards TEXT NOT NULL,
        changed_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3)
    ) ENGINE=InnoDB",
], &[
    // A directory that stays right on a Galera cluster (docs/DIRECTORY_CLUSTER.md), and
    // on one server when a COMMIT's reply is lost. Every lease-checked transaction bumps
    // its operation's `lease_writes`: a row written, not only locked, is in the
    // transaction's write set, so a takeover committed through another member makes it
    // fail certification.
    "ALTER TABLE {d}.operations
        ADD COLUMN lease_writes BIGINT UNSIGNED NOT NULL DEFAULT 0",
    // Every directory transaction writes a random token here before its COMMIT; a COMMIT
    // whose reply did not come is settled by looking for its token. Kept a day.
    "CREATE TABLE IF NOT EXISTS {d}.commit_tokens (
        token BIGINT UNSIGNED NOT NULL PRIMARY KEY,
        committed_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
        KEY (committed_at)
    ) ENGINE=InnoDB",
    // Named locks kept in rows, which a cluster replicates (GET_LOCK is one server's
    // memory): the reporting servers' lock (an owner and its heartbeat), and the
    // serialisation of the read-only fences' registry of one node (`bumps`: every join
    // and leave writes the row, so two of them on two members conflict).
    "CREATE TABLE IF NOT EXISTS {d}.directory_locks (
        name VARCHAR(128) NOT NULL PRIMARY KEY,
        owner VARCHAR(255) NULL,
        heartbeat_at TIMESTAMP(3) NULL,
        bumps BIGINT UNSIGNED NOT NULL DEFAULT 0
    ) ENGINE=InnoDB",
], &[
    // Per-key functions (sharding type KEY): one row per key in `key_shards`, looked up by
    // its primary key; a key without a row is not mapped until `shardctl keys assign`
    // (`Directory::assign_key`) gives it to the least-loaded open shard. The key is its
    // text, as `lists.value` (an integer's plain decimal form).
    "ALTER TABLE {d}.partition_functions
        MODIFY sharding_type ENUM('RANGE','HASH','LIST','KEY') NOT NULL",
    "CREATE TABLE IF NOT EXISTS {d}.key_shards (
        func_id INT UNSIGNED NOT NULL,
        key_value VARBINARY(255) NOT NULL,
        shard_id INT UNSIGNED NOT NULL,
        PRIMARY KEY (func_id, key_value),
        KEY (shard_id),
        FOREIGN KEY (func_id) REFERENCES partition_functions (func_id),
        FOREIGN KEY (shard_id) REFERENCES locations (shard_id)
    ) ENGINE=InnoDB",
    // How many keys each shard of a per-key function holds, kept with every change of
    // `key_shards`: what the least-loaded assignment orders by without counting rows.
    "CREATE TABLE IF NOT EXISTS {d}.key_counts (
        shard_id INT UNSIGNED NOT NULL PRIMARY KEY,
        func_id INT UNSIGNED NOT NULL,
        key_count BIGINT UNSIGNED NOT NULL,
        KEY (func_id, key_count),
        FOREIGN KEY (shard_id) REFERENCES locations (shard_id)
    ) ENGINE=InnoDB",
    // The change log names the keys a change reassigned: scope `keys`, the function in
    // `func_id` and the keys in `key_list` (a JSON array of their texts; NULL: every key
    // of the function), so a router drops only those from its cache of keys.
    "ALTER TABLE {d}.directory_changes
        MODIFY scope ENUM('none','shards','all','keys') NOT NULL,
        ADD COLUMN func_id INT UNSIGNED NULL,
        ADD COLUMN key_list MEDIUMTEXT NULL",
]];

/// How many versions the change log (`directory_changes`) keeps: a router more versions
/// behind than this reloads the whole directory. A router checking every second falls
/// this far behind only when it could not reach the directory for a long while.
pub const CHANGE_LOG_KEPT: u64 = 10_000;

/// The most shards an incremental reload re-reads; past that a router reloads everything
/// (one read of each table costs less than a long list of ids).
pub const INCREMENTAL_MAX_SHARDS: usize = 1_000;

/// The most keys one change-log row names; a change of more (an import) names the whole
/// function, and routers drop every cached key of it.
pub const LOGGED_KEYS_MAX: usize = 1_000;
