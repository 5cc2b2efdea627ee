/// The database schema as an ordered list of migrations. `PRAGMA user_version` holds how
/// many have run; start-up runs the rest, each in its own transaction. Never edit a
/// shipped migration: append a new one.
enum Schema {
    static let migrations: [String] = [
        // 1: campaigns, their deliveries, dead tokens, idempotency keys, webhook outbox.
        """
        CREATE TABLE campaigns (
            seq INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            created_at REAL NOT NULL,
            dry_run INTEGER NOT NULL,
            headers TEXT NOT NULL,          -- constant APNs headers, "name: value" lines (until 7)
            body BLOB NOT NULL,             -- the body every device shares unless its row has its own
            apns_id_prefix TEXT NOT NULL,   -- 24 characters; a device's apns-id adds its index
            devices INTEGER NOT NULL,
            remaining INTEGER NOT NULL,     -- devices not yet in a final state
            finished_at REAL
        );
        CREATE INDEX campaigns_unfinished ON campaigns(seq) WHERE finished_at IS NULL;
        CREATE TABLE deliveries (
            campaign INTEGER NOT NULL REFERENCES campaigns(seq),
            idx INTEGER NOT NULL,
            token TEXT NOT NULL,
            body BLOB,                      -- NULL: the campaign's body
            state INTEGER NOT NULL,         -- DeliveryState raw values
            attempts INTEGER NOT NULL DEFAULT 0,
            next_at REAL NOT NULL DEFAULT 0,
            status INTEGER,
            reason TEXT,
            apns_id TEXT,
            timestamp_ms INTEGER,
            finished_at REAL,
            PRIMARY KEY (campaign, idx)
        ) WITHOUT ROWID;
        -- What the dispatcher claims next: pending or retrying rows that are due.
        CREATE INDEX deliveries_due ON deliveries(next_at, campaign, idx) WHERE state IN (0, 2);
        CREATE INDEX deliveries_in_flight ON deliveries(campaign, idx) WHERE state = 1;
        -- Devices per campaign and state, kept in step with deliveries in the same
        -- transactions, so status pages never count a million rows.
        CREATE TABLE campaign_counts (
            campaign INTEGER NOT NULL,
            state INTEGER NOT NULL,
            n INTEGER NOT NULL,
            PRIMARY KEY (campaign, state)
        ) WITHOUT ROWID;
        CREATE TABLE tokens (
            token TEXT PRIMARY KEY,
            dead_at_ms INTEGER,             -- Apple's timestamp from the 410
            dead_reason TEXT,
            recorded_at REAL,
            registered_at_ms INTEGER        -- last POST /v1/tokens/{token}/register
        ) WITHOUT ROWID;
        CREATE INDEX tokens_dead ON tokens(dead_at_ms, token) WHERE dead_at_ms IS NOT NULL;
        CREATE TABLE idempotency_keys (
            key TEXT PRIMARY KEY,
            request_sha256 TEXT NOT NULL,
            campaign_id TEXT NOT NULL,
            created_at REAL NOT NULL
        ) WITHOUT ROWID;
        CREATE INDEX idempotency_age ON idempotency_keys(created_at);
        CREATE TABLE feedback_outbox (
            seq INTEGER PRIMARY KEY,
            token TEXT NOT NULL,
            timestamp_ms INTEGER NOT NULL,
            reason TEXT NOT NULL
        );
        CREATE TABLE heartbeat (id INTEGER PRIMARY KEY CHECK (id = 1), at REAL NOT NULL);
        """,
        // 2: the provider token each signing key shares across processes, and APNs' pause.
        """
        CREATE TABLE provider_tokens (
            team_id TEXT NOT NULL,
            key_id TEXT NOT NULL,
            key_sha256 TEXT NOT NULL,       -- SHA-256 of the public key: a new key is a new token
            token TEXT,                     -- the compact JWT (a credential: the file is mode 0600)
            issued_at INTEGER,              -- its iat
            paused_until INTEGER,           -- TooManyProviderTokenUpdates: no sends before this
            PRIMARY KEY (team_id, key_id, key_sha256)
        ) WITHOUT ROWID;
        """,
        // 3: leases. A claim names its owner and an expiry, and bumps the fencing number:
        // only the current lease records a result; an expired lease can be taken over.
        """
        ALTER TABLE deliveries ADD COLUMN lease_owner TEXT;
        ALTER TABLE deliveries ADD COLUMN lease_until REAL;
        ALTER TABLE deliveries ADD COLUMN lease INTEGER NOT NULL DEFAULT 0;
        CREATE INDEX deliveries_lease_expiry ON deliveries(lease_until) WHERE state = 1;
        """,
        // 4: webhook batches fixed once formed, so a retry sends the same id and body.
        """
        ALTER TABLE feedback_outbox ADD COLUMN batch INTEGER;
        """,
        // 5: several apps. A campaign names its app, the environment it is sent in and the
        // API key that created it (''  before: the rows belong to the one configured app,
        // which adopts them at start-up, and to no key). A dead token belongs to the app
        // whose campaign learnt it. Idempotency keys are namespaced per API key: stored as
        // "<key name> <Idempotency-Key>" (neither contains a space); existing ones belong
        // to no key.
        """
        ALTER TABLE campaigns ADD COLUMN app TEXT NOT NULL DEFAULT '';
        ALTER TABLE campaigns ADD COLUMN environment TEXT NOT NULL DEFAULT '';
        ALTER TABLE campaigns ADD COLUMN owner TEXT NOT NULL DEFAULT '';
        CREATE INDEX campaigns_owner ON campaigns(owner, seq);
        ALTER TABLE tokens ADD COLUMN app TEXT NOT NULL DEFAULT '';
        UPDATE idempotency_keys SET key = ' ' || key;
        """,
        // 6: the campaign lifecycle (schedule, expiry, pause, cancel), campaign.finished
        // events for the webhook, and what retention needs. The due index leads with the
        // campaign, so claims skip a paused, scheduled or cancelled campaign without walking
        // its rows. (Migrator also turns on incremental auto-vacuum with this version.)
        """
        ALTER TABLE campaigns ADD COLUMN send_at REAL;          -- nothing sent before; NULL: at once
        ALTER TABLE campaigns ADD COLUMN expires_at REAL;       -- devices not sent by then end expired
        ALTER TABLE campaigns ADD COLUMN control INTEGER NOT NULL DEFAULT 0;  -- CampaignControl: 0 running, 1 paused, 2 cancelled
        ALTER TABLE campaigns ADD COLUMN controlled_at REAL;    -- last pause, resume or cancel
        DROP INDEX deliveries_due;
        CREATE INDEX deliveries_due ON deliveries(campaign, next_at, idx) WHERE state IN (0, 2);
        CREATE INDEX campaigns_finished ON campaigns(finished_at) WHERE finished_at IS NOT NULL;
        CREATE INDEX idempotency_campaign ON idempotency_keys(campaign_id);
        CREATE TABLE campaign_events (
            seq INTEGER PRIMARY KEY,
            campaign INTEGER NOT NULL,      -- campaigns.seq of the campaign that finished
            batch INTEGER                   -- fixed when the webhook first forms the batch
        );
        CREATE INDEX campaign_events_campaign ON campaign_events(campaign);
        """,
        // 7: the request's constant part typed, one column each, instead of header text.
        """
        ALTER TABLE campaigns ADD COLUMN push_type TEXT NOT NULL DEFAULT 'alert';
        ALTER TABLE campaigns ADD COLUMN topic TEXT NOT NULL DEFAULT '';
        ALTER TABLE campaigns ADD COLUMN priority INTEGER NOT NULL DEFAULT 10;
        ALTER TABLE campaigns ADD COLUMN expiration INTEGER;
        ALTER TABLE campaigns ADD COLUMN collapse_id TEXT;
        UPDATE campaigns SET
            push_type = coalesce(\(storedHeader("apns-push-type")), 'alert'),
            topic = coalesce(\(storedHeader("apns-topic")), ''),
            priority = coalesce(CAST(\(storedHeader("apns-priority")) AS INTEGER), 10),
            expiration = CAST(\(storedHeader("apns-expiration")) AS INTEGER),
            collapse_id = \(storedHeader("apns-collapse-id"));
        ALTER TABLE campaigns DROP COLUMN headers;
        """,
        // 8: fair lanes. Claims go lane by lane, round-robin by campaign (the campaign
        // served longest ago first: `served_turn`), with an optional rate cap kept as a
        // bucket in the row (`rate_paid_until`: sends are paid for up to then). Due retries
        // have their own index, so they are claimed when due, not after every pending row.
        """
        ALTER TABLE campaigns ADD COLUMN lane INTEGER NOT NULL DEFAULT 0;   -- Lane: 0 transactional, 1 bulk
        ALTER TABLE campaigns ADD COLUMN rate_per_second REAL;              -- NULL: no cap
        ALTER TABLE campaigns ADD COLUMN rate_paid_until REAL;
        ALTER TABLE campaigns ADD COLUMN served_turn INTEGER NOT NULL DEFAULT 0;
        UPDATE campaigns SET lane = 1 WHERE devices > 100;
        CREATE INDEX deliveries_retry ON deliveries(campaign, next_at, idx) WHERE state = 2;
        """,
        // 9: the sandbox's `apns-unique-id` of a delivered notification (what the Push
        // Notifications Console looks up).
        """
        ALTER TABLE deliveries ADD COLUMN apns_unique_id TEXT;
        """,
        // 10: a channel campaign's broadcast channel id (NULL: the campaign goes to devices);
        // its one delivery row holds the channel id as its token.
        """
        ALTER TABLE campaigns ADD COLUMN channel TEXT;
        """,
        // 11: Live Activity tokens the apps report: push-to-start (kind 0) and each
        // activity's update tokens (kind 1). Whether one is dead is the `tokens` table's
        // rule, as for device tokens.
        """
        CREATE TABLE live_activity_tokens (
            app TEXT NOT NULL,
            token TEXT NOT NULL,
            kind INTEGER NOT NULL,               -- LiveActivityToken.Kind: 0 push-to-start, 1 update
            activity TEXT NOT NULL DEFAULT '',   -- the activity's id (update tokens)
            registered_at_ms INTEGER NOT NULL,
            PRIMARY KEY (app, token)
        ) WITHOUT ROWID;
        CREATE INDEX live_activity_tokens_activity ON live_activity_tokens(app, activity, kind);
        """,
        // 12: segments. A campaign's devices are stored in segments (`SegmentLayout`): one
        // immutable row of packed tokens per segment and one small mutable row (lease,
        // fencing number, progress, an outcome code per device); only a device whose result
        // is not a plain success keeps a `deliveries` row. `segment_size` 0: a campaign
        // written before, a row per device, handled as before. `filling`: created without
        // its devices, which come in parts (`campaign_parts`); not sent until started.
        // `failure`: why the campaign failed (a segment that does not decode).
        """
        ALTER TABLE campaigns ADD COLUMN segment_size INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE campaigns ADD COLUMN filling INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE campaigns ADD COLUMN failure TEXT;
        CREATE TABLE segments (
            campaign INTEGER NOT NULL,
            seg INTEGER NOT NULL,              -- devices seg * segment_size onwards
            first_idx INTEGER NOT NULL,
            count INTEGER NOT NULL,
            format INTEGER NOT NULL,           -- PackedSegment.Format
            tokens BLOB NOT NULL,
            bodies BLOB,                       -- NULL: every device has the campaign's body
            checksum INTEGER NOT NULL,
            PRIMARY KEY (campaign, seg)
        );
        CREATE TABLE segment_state (
            campaign INTEGER NOT NULL,
            seg INTEGER NOT NULL,
            count INTEGER NOT NULL,
            lease_owner TEXT,
            lease_until REAL,
            lease INTEGER NOT NULL DEFAULT 0,  -- the fencing number
            handed INTEGER NOT NULL DEFAULT 0, -- positions handed out under the current lease
            reached INTEGER NOT NULL DEFAULT 0,-- the most ever handed: open positions below are in flight
            codes BLOB NOT NULL,               -- one SegmentCode per device
            open INTEGER NOT NULL DEFAULT 1,   -- some code is still 0
            updated_at REAL,
            PRIMARY KEY (campaign, seg)
        );
        -- Settled segments leave both indexes: a claim's cost does not grow with the campaign.
        CREATE INDEX segment_state_open ON segment_state(campaign, seg) WHERE open = 1;
        CREATE INDEX segment_state_leased ON segment_state(campaign, seg) WHERE open = 1 AND lease_owner IS NOT NULL;
        CREATE TABLE campaign_parts (
            campaign INTEGER NOT NULL,
            part INTEGER NOT NULL,
            sha256 TEXT NOT NULL,
            first_idx INTEGER NOT NULL,
            devices INTEGER NOT NULL,
            skipped INTEGER NOT NULL,
            PRIMARY KEY (campaign, part)
        ) WITHOUT ROWID;
        """,
    ]

    /// The first version whose file uses incremental auto-vacuum (retention frees pages
    /// and gives them back in small steps).
    static let incrementalVacuumVersion = 6

    /// For migration 7: the value of header `name` in the old `headers` column ("name:
    /// value" lines), or NULL. Found as "\nname: " in the text wrapped in newlines.
    static func storedHeader(_ name: String) -> String {
        let text = "(char(10) || headers || char(10))"
        let start = "instr(\(text), char(10) || '\(name): ')"
        let rest = "substr(\(text), \(start) + \(name.utf8.count + 3))"
        return "CASE WHEN \(start) > 0 THEN substr(\(rest), 1, instr(\(rest), char(10)) - 1) END"
    }

    static var currentVersion: Int { migrations.count }
}
