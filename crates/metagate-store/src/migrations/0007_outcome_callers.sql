-- metagate store, schema version 7: an outcome knows the caller whose call it answers (the
-- event's own `caller`, else its decision's, found by row id or by the call's id when it is
-- recorded), so evaluate blames a caller without joining; a recommendation keeps the rate it
-- rested on, now and when a person rejected it (a rejection mutes it until that rate worsens
-- by the policy's `mute_margin`); and three kinds join the six: change_point, fix_caller and
-- sharpen_descriptions.

ALTER TABLE outcomes ADD COLUMN caller TEXT;

-- SQLite cannot change a CHECK in place: the recommendations are copied into a table with
-- the new kinds. The runs' links to them go first and come back after, so no foreign key
-- ever points at a table being dropped (the migration runs in one transaction, foreign keys
-- on).
CREATE TABLE eval_recommendations_v7 (
    id          TEXT PRIMARY KEY,
    tool        TEXT NOT NULL,
    method      TEXT,
    kind        TEXT NOT NULL CHECK (kind = 'split_boundary' OR kind = 'tighten_acceptance' OR kind = 'demote'
                                     OR kind = 'deprecate_alias' OR kind = 'learn_alias' OR kind = 'review_schema'
                                     OR kind = 'change_point' OR kind = 'fix_caller' OR kind = 'sharpen_descriptions'),
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
INSERT INTO eval_recommendations_v7 (id, tool, method, kind, subject, confidence, summary, axes, evidence,
    status, first_seen_ms, last_seen_ms, evidence_count, rejected_count, brief)
  SELECT id, tool, method, kind, subject, confidence, summary, axes, evidence,
    status, first_seen_ms, last_seen_ms, evidence_count, rejected_count, brief
  FROM eval_recommendations;
CREATE TEMP TABLE eval_run_recommendations_v7 AS SELECT * FROM main.eval_run_recommendations;
DROP TABLE eval_run_recommendations;
DROP TABLE eval_recommendations;
ALTER TABLE eval_recommendations_v7 RENAME TO eval_recommendations;
CREATE TABLE eval_run_recommendations (
    run_id INTEGER NOT NULL REFERENCES eval_runs (id) ON DELETE CASCADE,
    rec_id TEXT NOT NULL REFERENCES eval_recommendations (id),
    confidence REAL,
    evidence_count REAL,
    muted INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (run_id, rec_id)
) WITHOUT ROWID;
INSERT INTO main.eval_run_recommendations (run_id, rec_id, confidence, evidence_count, muted)
  SELECT run_id, rec_id, confidence, evidence_count, muted FROM temp.eval_run_recommendations_v7;
DROP TABLE temp.eval_run_recommendations_v7;
