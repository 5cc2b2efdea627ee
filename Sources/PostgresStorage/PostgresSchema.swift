import Storage

/// The PostgreSQL schema as an ordered list of migrations; `pushgate_schema.version` holds
/// how many have run. Never edit a shipped migration: append a new one.
///
/// It is SQLite's schema (`Storage/Schema.swift`) at its current version with two
/// differences that let several instances share it without waiting on each other:
/// `campaign_counts` has a `shard` column (each connection adds to its own rows, a status
/// page sums a campaign's few rows), and there is no `remaining` column (a campaign is
/// finished when its unsent counts sum to zero, checked after each commit).
enum PostgresSchema {
    static let migrations: [String] = [
        // 1: everything SQLite's schema holds, plus the instances and webhook leases.
        """
        CREATE TABLE campaigns (
            seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            created_at DOUBLE PRECISION NOT NULL,
            dry_run BOOLEAN NOT NULL,
            headers TEXT NOT NULL,                  -- constant APNs headers, "name: value" lines
            body BYTEA NOT NULL,                    -- the body every device shares unless its row has its own
            apns_id_prefix TEXT NOT NULL,
            devices INTEGER NOT NULL,
            finished_at DOUBLE PRECISION,
            app TEXT NOT NULL DEFAULT '',
            environment TEXT NOT NULL DEFAULT '',
            owner TEXT NOT NULL DEFAULT '',
            send_at DOUBLE PRECISION,
            expires_at DOUBLE PRECISION,
            control SMALLINT NOT NULL DEFAULT 0,    -- CampaignControl
            controlled_at DOUBLE PRECISION
        );
        CREATE INDEX campaigns_unfinished ON campaigns(seq) WHERE finished_at IS NULL;
        CREATE INDEX campaigns_owner ON campaigns(owner, seq);
        CREATE INDEX campaigns_finished ON campaigns(finished_at) WHERE finished_at IS NOT NULL;
        CREATE TABLE deliveries (
            campaign BIGINT NOT NULL,
            idx INTEGER NOT NULL,
            token TEXT NOT NULL,
            body BYTEA,
            state SMALLINT NOT NULL,                -- DeliveryState raw values
            attempts INTEGER NOT NULL DEFAULT 0,
            next_at DOUBLE PRECISION NOT NULL DEFAULT 0,
            status INTEGER,
            reason TEXT,
            apns_id TEXT,
            timestamp_ms BIGINT,
            finished_at DOUBLE PRECISION,
            lease_owner TEXT,
            lease_until DOUBLE PRECISION,
            lease BIGINT NOT NULL DEFAULT 0,        -- the fencing number
            PRIMARY KEY (campaign, idx)
        );
        CREATE INDEX deliveries_due ON deliveries(campaign, next_at, idx) WHERE state IN (0, 2);
        CREATE INDEX deliveries_in_flight ON deliveries(campaign, idx) WHERE state = 1;
        CREATE INDEX deliveries_lease_expiry ON deliveries(lease_until) WHERE state = 1;
        CREATE TABLE campaign_counts (
            campaign BIGINT NOT NULL,
            state SMALLINT NOT NULL,
            shard INTEGER NOT NULL,                 -- the connection that wrote it (see count_shards)
            n BIGINT NOT NULL,
            PRIMARY KEY (campaign, state, shard)
        );
        CREATE SEQUENCE count_shards;
        CREATE TABLE tokens (
            token TEXT PRIMARY KEY,
            dead_at_ms BIGINT,
            dead_reason TEXT,
            recorded_at DOUBLE PRECISION,
            registered_at_ms BIGINT,
            app TEXT NOT NULL DEFAULT ''
        );
        CREATE INDEX tokens_dead ON tokens(dead_at_ms, token) WHERE dead_at_ms IS NOT NULL;
        CREATE TABLE idempotency_keys (
            key TEXT PRIMARY KEY,
            request_sha256 TEXT NOT NULL,
            campaign_id TEXT NOT NULL,
            created_at DOUBLE PRECISION NOT NULL
        );
        CREATE INDEX idempotency_age ON idempotency_keys(created_at);
        CREATE INDEX idempotency_campaign ON idempotency_keys(campaign_id);
        CREATE TABLE feedback_outbox (
            seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            token TEXT NOT NULL,
            timestamp_ms BIGINT NOT NULL,
            reason TEXT NOT NULL,
            batch BIGINT
        );
        CREATE TABLE campaign_events (
            seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            campaign BIGINT NOT NULL,
            batch BIGINT
        );
        CREATE INDEX campaign_events_campaign ON campaign_events(campaign);
        -- Which instance sends a webhook outbox's open batch, until when (one sender at a time).
        CREATE TABLE webhook_leases (
            outbox TEXT PRIMARY KEY,
            owner TEXT NOT NULL,
            until DOUBLE PRECISION NOT NULL
        );
        CREATE TABLE provider_tokens (
            team_id TEXT NOT NULL,
            key_id TEXT NOT NULL,
            key_sha256 TEXT NOT NULL,
            token TEXT,
            issued_at BIGINT,
            paused_until BIGINT,
            PRIMARY KEY (team_id, key_id, key_sha256)
        );
        -- Every instance that opened the database, with its last heartbeat.
        CREATE TABLE instances (
            owner TEXT PRIMARY KEY,
            started_at DOUBLE PRECISION NOT NULL,
            heartbeat_at DOUBLE PRECISION NOT NULL
        );
        """,
        // 2: the request's constant part typed, one column each, instead of header text
        // (SQLite's 7).
        """
        ALTER TABLE campaigns ADD COLUMN push_type TEXT NOT NULL DEFAULT 'alert';
        ALTER TABLE campaigns ADD COLUMN topic TEXT NOT NULL DEFAULT '';
        ALTER TABLE campaigns ADD COLUMN priority INTEGER NOT NULL DEFAULT 10;
        ALTER TABLE campaigns ADD COLUMN expiration BIGINT;
        ALTER TABLE campaigns ADD COLUMN collapse_id TEXT;
        UPDATE campaigns SET
            push_type = coalesce(\(storedHeader("apns-push-type")), 'alert'),
            topic = coalesce(\(storedHeader("apns-topic")), ''),
            priority = coalesce(\(storedHeader("apns-priority"))::INTEGER, 10),
            expiration = \(storedHeader("apns-expiration"))::BIGINT,
            collapse_id = \(storedHeader("apns-collapse-id"));
        ALTER TABLE campaigns DROP COLUMN headers;
        """,
        // 3: fair lanes (SQLite's 8): the lane, the rate cap's bucket, the round-robin turn,
        // and an index of retrying rows so due retries are found without walking pending ones.
        """
        ALTER TABLE campaigns ADD COLUMN lane SMALLINT NOT NULL DEFAULT 0;
        ALTER TABLE campaigns ADD COLUMN rate_per_second DOUBLE PRECISION;
        ALTER TABLE campaigns ADD COLUMN rate_paid_until DOUBLE PRECISION;
        ALTER TABLE campaigns ADD COLUMN served_turn BIGINT NOT NULL DEFAULT 0;
        UPDATE campaigns SET lane = 1 WHERE devices > 100;
        CREATE INDEX deliveries_retry ON deliveries(campaign, next_at, idx) WHERE state = 2;
        """,
        // 4: the sandbox's `apns-unique-id` (SQLite's 9).
        """
        ALTER TABLE deliveries ADD COLUMN apns_unique_id TEXT;
        """,
        // 5: a channel campaign's broadcast channel id (SQLite's 10).
        """
        ALTER TABLE campaigns ADD COLUMN channel TEXT;
        """,
        // 6: Live Activity tokens (SQLite's 11).
        """
        CREATE TABLE live_activity_tokens (
            app TEXT NOT NULL,
            token TEXT NOT NULL,
            kind SMALLINT NOT NULL,
            activity TEXT NOT NULL DEFAULT '',
            registered_at_ms BIGINT NOT NULL,
            PRIMARY KEY (app, token)
        );
        CREATE INDEX live_activity_tokens_activity ON live_activity_tokens(app, activity, kind);
        """,
        // 7: segments (SQLite's 12). A campaign written before keeps `segment_size` 0 and a
        // row per device; a newer one keeps its devices in segments (tokens packed, written
        // once) with a small mutable state row each, and rows only for the exceptions.
        """
        ALTER TABLE campaigns ADD COLUMN segment_size INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE campaigns ADD COLUMN filling BOOLEAN NOT NULL DEFAULT false;
        ALTER TABLE campaigns ADD COLUMN failure TEXT;
        CREATE TABLE segments (
            campaign BIGINT NOT NULL,
            seg INTEGER NOT NULL,
            first_idx INTEGER NOT NULL,
            count INTEGER NOT NULL,
            format SMALLINT NOT NULL,               -- PackedSegment.Format
            tokens BYTEA NOT NULL,
            bodies BYTEA,
            checksum BIGINT NOT NULL,
            PRIMARY KEY (campaign, seg)
        );
        -- Packed tokens are random bytes: pglz would only spend CPU finding that out.
        ALTER TABLE segments ALTER COLUMN tokens SET STORAGE EXTERNAL, ALTER COLUMN bodies SET STORAGE EXTERNAL;
        -- Room on each page for the row's next version: lease and code updates stay HOT
        -- (no index entry written) as long as `open` does not change.
        CREATE TABLE segment_state (
            campaign BIGINT NOT NULL,
            seg INTEGER NOT NULL,
            count INTEGER NOT NULL,
            lease_owner TEXT,
            lease_until DOUBLE PRECISION,
            lease BIGINT NOT NULL DEFAULT 0,        -- the fencing number
            handed INTEGER NOT NULL DEFAULT 0,
            reached INTEGER NOT NULL DEFAULT 0,
            codes BYTEA NOT NULL,                   -- SegmentCode per device
            open BOOLEAN NOT NULL DEFAULT true,
            updated_at DOUBLE PRECISION,
            PRIMARY KEY (campaign, seg)
        ) WITH (fillfactor = 50);
        ALTER TABLE segment_state ALTER COLUMN codes SET STORAGE MAIN;
        CREATE INDEX segment_state_open ON segment_state(campaign, seg) WHERE open;
        CREATE TABLE campaign_parts (
            campaign BIGINT NOT NULL,
            part INTEGER NOT NULL,
            sha256 TEXT NOT NULL,
            first_idx INTEGER NOT NULL,
            devices INTEGER NOT NULL,
            skipped INTEGER NOT NULL,
            PRIMARY KEY (campaign, part)
        );
        """,
    ]

    /// For migration 2: the value of header `name` in the old `headers` column ("name:
    /// value" lines), or NULL.
    static func storedHeader(_ name: String) -> String {
        "substring(E'\\n' || headers || E'\\n' FROM E'\\n\(name): ([^\\n]*)\\n')"
    }

    static var currentVersion: Int { migrations.count }
}

/// Brings the database to `PostgresSchema.currentVersion` under an advisory lock, so
/// instances starting together migrate once (the others wait, then find nothing to do);
/// refuses a database from a newer pushgate.
enum PostgresMigrator {
    /// The advisory lock's key: "pushgate" in ASCII.
    static let lockKey: Int64 = 0x7075_7368_6761_7465

    static func version(_ db: PGConnection) throws(StorageError) -> Int {
        let exists = try db.execute("SELECT to_regclass('pushgate_schema') IS NOT NULL")
        guard exists.bool(0, 0) else { return 0 }
        let row = try db.execute("SELECT version FROM pushgate_schema")
        return row.rows == 0 ? 0 : Int(row.int(0, 0))
    }

    static func check(_ version: Int) throws(StorageError) {
        guard version <= PostgresSchema.currentVersion else {
            throw StorageError(.schemaTooNew, "database schema version \(version) is newer than this pushgate's \(PostgresSchema.currentVersion)")
        }
    }

    static func migrate(_ db: PGConnection) throws(StorageError) {
        // Waiting for another instance's migration, and a migration itself, may take longer
        // than the session limits allow a claim; back to them once done.
        try db.execute("SET statement_timeout = 0")
        try db.execute("SET lock_timeout = 0")
        defer {
            _ = try? db.execute("RESET statement_timeout")
            _ = try? db.execute("RESET lock_timeout")
        }
        try db.execute("SELECT pg_advisory_lock($1)", [.int(lockKey)])
        defer { _ = try? db.execute("SELECT pg_advisory_unlock($1)", [.int(lockKey)]) }
        try db.execute("CREATE TABLE IF NOT EXISTS pushgate_schema (version INTEGER NOT NULL)")
        let current = try version(db)
        try check(current)
        for (index, sql) in PostgresSchema.migrations.enumerated() where index >= current {
            do throws(StorageError) {
                try db.execute("BEGIN")
                try db.executeScript(sql)
                try db.execute("DELETE FROM pushgate_schema")
                try db.execute("INSERT INTO pushgate_schema(version) VALUES ($1)", [.integer(index + 1)])
                try db.execute("COMMIT")
            } catch {
                _ = try? db.execute("ROLLBACK")
                throw StorageError(error.code == .unavailable ? .unavailable : .migrationFailed,
                                   "migration to schema version \(index + 1) failed: \(error.message)")
            }
        }
    }
}
