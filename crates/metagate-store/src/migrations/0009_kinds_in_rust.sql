-- metagate store, schema version 9: a recommendation's kind is checked by the code that writes
-- it (`metagate_core::evolution::KINDS`), no longer by a CHECK, so a new kind needs no table
-- rebuild. The status keeps its CHECK: its three values are the store's own contract.

-- SQLite cannot drop a CHECK in place: the table is rebuilt as in version 7 (the runs' links
-- go first and come back after, so no foreign key ever points at a table being dropped).
CREATE TABLE eval_recommendations_v9 (
    id          TEXT PRIMARY KEY,
    tool        TEXT NOT NULL,
    method      TEXT,
    kind        TEXT NOT NULL,
    subject     TEXT NOT NULL DEFAULT '',
    confidence  REAL NOT NULL,
    summary     TEXT NOT NULL,
    axes        TEXT NOT NULL DEFAULT '[]',
    evidence    TEXT NOT NULL DEFAULT '[]',
    status      TEXT NOT NULL DEFAULT 'proposed' CHECK (status = 'proposed' OR status = 'accepted' OR status = 'rejected'),
    first_seen_ms INTEGER NOT NULL,
    last_seen_ms  INTEGER NOT NULL,
    evidence_count REAL,
    rejected_count REAL,
    brief       TEXT,
    evidence_rate REAL,
    rejected_rate REAL
);
INSERT INTO eval_recommendations_v9 SELECT * FROM eval_recommendations;
CREATE TEMP TABLE eval_run_recommendations_v9 AS SELECT * FROM main.eval_run_recommendations;
DROP TABLE eval_run_recommendations;
DROP TABLE eval_recommendations;
ALTER TABLE eval_recommendations_v9 RENAME TO eval_recommendations;
CREATE TABLE eval_run_recommendations (
    run_id INTEGER NOT NULL REFERENCES eval_runs (id) ON DELETE CASCADE,
    rec_id TEXT NOT NULL REFERENCES eval_recommendations (id),
    confidence REAL,
    evidence_count REAL,
    muted INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (run_id, rec_id)
) WITHOUT ROWID;
INSERT INTO main.eval_run_recommendations (run_id, rec_id, confidence, evidence_count, muted)
  SELECT run_id, rec_id, confidence, evidence_count, muted FROM temp.eval_run_recommendations_v9;
DROP TABLE temp.eval_run_recommendations_v9;
