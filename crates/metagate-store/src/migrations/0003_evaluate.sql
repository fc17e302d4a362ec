-- metagate evaluate: runs of the out-of-band pass, their health rollups, recommendations (with
-- stable ids and a status a person sets) and the argument alias pairs they learned.
-- Independent of every other migration but 0001's telemetry.

CREATE TABLE eval_runs (
    id             INTEGER PRIMARY KEY,
    window_from_ms INTEGER NOT NULL,
    window_to_ms   INTEGER NOT NULL,
    ran_at_ms      INTEGER NOT NULL,
    events         INTEGER NOT NULL,
    -- JSON array of the store files read.
    shards         TEXT NOT NULL DEFAULT '[]',
    -- The largest row ids of this store's telemetry tables when the run was made: `tools
    -- health` adds live counts of the rows after them.
    decisions_hw   INTEGER NOT NULL DEFAULT 0,
    outcomes_hw    INTEGER NOT NULL DEFAULT 0,
    corrections_hw INTEGER NOT NULL DEFAULT 0,
    unlinked_corrections INTEGER NOT NULL DEFAULT 0,
    -- One run per window: running again replaces it.
    UNIQUE (window_from_ms, window_to_ms)
);
CREATE INDEX eval_runs_by_time ON eval_runs (ran_at_ms);

-- One row per tool and method (method '' for none); `tally` holds the whole count as JSON.
CREATE TABLE eval_health (
    run_id  INTEGER NOT NULL REFERENCES eval_runs (id) ON DELETE CASCADE,
    tool    TEXT NOT NULL,
    method  TEXT NOT NULL,
    calls   INTEGER NOT NULL,
    utility REAL,
    cohesion_warning INTEGER NOT NULL,
    degraded INTEGER NOT NULL,
    tally   TEXT NOT NULL,
    PRIMARY KEY (run_id, tool, method)
) WITHOUT ROWID;

CREATE TABLE eval_recommendations (
    id          TEXT PRIMARY KEY,
    tool        TEXT NOT NULL,
    method      TEXT,
    kind        TEXT NOT NULL CHECK (kind = 'split_boundary' OR kind = 'tighten_acceptance' OR kind = 'demote'
                                     OR kind = 'deprecate_alias' OR kind = 'learn_alias' OR kind = 'review_schema'),
    subject     TEXT NOT NULL DEFAULT '',
    confidence  REAL NOT NULL,
    summary     TEXT NOT NULL,
    axes        TEXT NOT NULL DEFAULT '[]',
    evidence    TEXT NOT NULL DEFAULT '[]',
    status      TEXT NOT NULL DEFAULT 'proposed' CHECK (status = 'proposed' OR status = 'accepted' OR status = 'rejected'),
    first_seen_ms INTEGER NOT NULL,
    last_seen_ms  INTEGER NOT NULL
);

CREATE TABLE eval_run_recommendations (
    run_id INTEGER NOT NULL REFERENCES eval_runs (id) ON DELETE CASCADE,
    rec_id TEXT NOT NULL REFERENCES eval_recommendations (id),
    PRIMARY KEY (run_id, rec_id)
) WITHOUT ROWID;

CREATE TABLE eval_alias_pairs (
    run_id   INTEGER NOT NULL REFERENCES eval_runs (id) ON DELETE CASCADE,
    tool     TEXT NOT NULL,
    from_arg TEXT NOT NULL,
    to_arg   TEXT NOT NULL,
    count    INTEGER NOT NULL,
    PRIMARY KEY (run_id, tool, from_arg, to_arg)
) WITHOUT ROWID;
