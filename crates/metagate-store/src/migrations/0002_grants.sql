-- metagate grants, schema version 2: time-boxed capability grants `gate` enforces, and their
-- audit trail. Times are milliseconds since the Unix epoch, UTC.

CREATE TABLE grants (
    -- 'mg_' and 32 hex digits: 128 random bits from the OS.
    id            TEXT PRIMARY KEY,
    capability    TEXT NOT NULL,
    -- JSON array of resolved absolute paths and 'host:NAME' entries; empty: the whole capability.
    scope         TEXT NOT NULL DEFAULT '[]',
    session       TEXT,
    granted_at_ms INTEGER NOT NULL,
    expires_at_ms INTEGER NOT NULL CHECK (expires_at_ms > granted_at_ms),
    revoked_at_ms INTEGER,
    granted_by    TEXT,
    reason        TEXT
);
-- What the gate asks on every call needing a grant: the unrevoked grants of one capability.
CREATE INDEX grants_live_by_capability ON grants (capability, expires_at_ms) WHERE revoked_at_ms IS NULL;
CREATE INDEX grants_by_capability ON grants (capability, granted_at_ms);

CREATE TABLE grant_events (
    id          INTEGER PRIMARY KEY,
    ts_ms       INTEGER NOT NULL,
    event       TEXT NOT NULL CHECK (event = 'granted' OR event = 'revoked' OR event = 'used' OR event = 'denied'),
    -- NULL for a denial no grant came near.
    grant_id    TEXT REFERENCES grants (id),
    capability  TEXT NOT NULL,
    tool        TEXT,
    session     TEXT,
    -- The gate decision a 'used' or 'denied' event belongs to.
    decision_id INTEGER REFERENCES decisions (id),
    actor       TEXT,
    detail      TEXT
);
-- One index only: a 'used' event is written with every call a grant covers, and each index
-- costs every such insert.
CREATE INDEX grant_events_by_ts ON grant_events (ts_ms);
