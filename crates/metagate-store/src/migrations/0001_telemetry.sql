-- metagate telemetry, schema version 1: gate decisions and the events `record` appends.
-- Times are milliseconds since the Unix epoch, UTC.

CREATE TABLE decisions (
    id          INTEGER PRIMARY KEY,
    ts_ms       INTEGER NOT NULL,
    session     TEXT,
    caller      TEXT,
    intent      TEXT,
    tool        TEXT,
    method      TEXT,
    shape       TEXT,
    -- Spelled out rather than `IN (…)`, which builds a temporary index on every insert.
    verdict     TEXT NOT NULL CHECK (verdict = 'pass' OR verdict = 'corrected' OR verdict = 'rejected'),
    category    TEXT,
    corrections TEXT NOT NULL DEFAULT '[]',
    warnings    TEXT NOT NULL DEFAULT '[]',
    args        TEXT,
    fingerprint INTEGER,
    latency_us  INTEGER NOT NULL DEFAULT 0
);
-- Partial indexes: a call without a session or caller costs no entry in theirs.
CREATE INDEX decisions_by_tool ON decisions (tool, ts_ms);
CREATE INDEX decisions_by_session ON decisions (session, ts_ms) WHERE session IS NOT NULL;
CREATE INDEX decisions_by_caller ON decisions (caller, ts_ms) WHERE caller IS NOT NULL;
-- No index on fingerprint here: its inserts land at random places and cost streams half their
-- speed. The loop breaker creates it when a policy turns the breaker on.

CREATE TABLE outcomes (
    id                  INTEGER PRIMARY KEY,
    ts_ms               INTEGER NOT NULL,
    session             TEXT,
    tool                TEXT NOT NULL,
    method              TEXT,
    status              TEXT NOT NULL CHECK (status = 'ok' OR status = 'error'),
    error_type          TEXT,
    error_message       TEXT,
    boundary_axes       TEXT NOT NULL DEFAULT '[]',
    boundary_axes_raw   TEXT NOT NULL DEFAULT '[]',
    observed_task_shape TEXT,
    suggested_split     TEXT,
    evidence            TEXT,
    metadata            TEXT
);
CREATE INDEX outcomes_by_tool ON outcomes (tool, ts_ms);
CREATE INDEX outcomes_by_session ON outcomes (session, ts_ms);
CREATE INDEX outcomes_by_ts ON outcomes (ts_ms);

CREATE TABLE asks (
    id           INTEGER PRIMARY KEY,
    ts_ms        INTEGER NOT NULL,
    session      TEXT,
    user         TEXT,
    text         TEXT,
    capabilities TEXT NOT NULL DEFAULT '[]'
);
CREATE INDEX asks_by_session ON asks (session, ts_ms);
CREATE INDEX asks_by_ts ON asks (ts_ms);

CREATE TABLE user_corrections (
    id      INTEGER PRIMARY KEY,
    ts_ms   INTEGER NOT NULL,
    session TEXT,
    tool    TEXT NOT NULL,
    method  TEXT,
    note    TEXT
);
CREATE INDEX user_corrections_by_tool ON user_corrections (tool, ts_ms);
CREATE INDEX user_corrections_by_session ON user_corrections (session, ts_ms);
