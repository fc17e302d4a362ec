-- metagate evaluate, schema version 4: what a report needs to be checked and acted on.
-- Additions only; every earlier row keeps its meaning.

-- Re-asks `evaluate` detects are user corrections too, kept beside the explicit ones `record`
-- stores: the ask that corrected (`reask_ask_id`, one row per such ask), the ask it corrects,
-- the call it blames (an outcome, else a gate decision) and the run that found it. Explicit
-- corrections have `reask_ask_id` NULL, and only they are read back as explicit.
ALTER TABLE user_corrections ADD COLUMN reask_ask_id INTEGER;
ALTER TABLE user_corrections ADD COLUMN corrects_ask_id INTEGER;
ALTER TABLE user_corrections ADD COLUMN blamed_outcome_id INTEGER;
ALTER TABLE user_corrections ADD COLUMN blamed_decision_id INTEGER;
ALTER TABLE user_corrections ADD COLUMN found_by_run INTEGER;
CREATE UNIQUE INDEX user_corrections_by_reask ON user_corrections (reask_ask_id)
    WHERE reask_ask_id IS NOT NULL;
-- The explicit corrections by id: `tools health` reads those after a run's high-water mark
-- without walking the re-asks the run stored after them.
CREATE INDEX user_corrections_explicit ON user_corrections (id) WHERE reask_ask_id IS NULL;

-- The policy a run used: a run under another policy than the one before says so.
ALTER TABLE eval_runs ADD COLUMN policy_file TEXT;
ALTER TABLE eval_runs ADD COLUMN policy_hash TEXT;
ALTER TABLE eval_runs ADD COLUMN unattributed_reasks INTEGER NOT NULL DEFAULT 0;

-- How much evidence a recommendation rests on, now and when a person rejected it: a rejected
-- recommendation stays muted until its evidence grows past `rejected_count`.
ALTER TABLE eval_recommendations ADD COLUMN evidence_count REAL;
ALTER TABLE eval_recommendations ADD COLUMN rejected_count REAL;
-- One line for a prompt's <known_tools>.
ALTER TABLE eval_recommendations ADD COLUMN brief TEXT;

-- Each run's own view of its recommendations, for the next run's digest.
ALTER TABLE eval_run_recommendations ADD COLUMN confidence REAL;
ALTER TABLE eval_run_recommendations ADD COLUMN evidence_count REAL;
ALTER TABLE eval_run_recommendations ADD COLUMN muted INTEGER NOT NULL DEFAULT 0;

-- `tools health` counts the recent referrals over the hours ending now, from the rows: only the
-- referrals are in this index, so that costs what they number, never what the store holds.
-- (Spelled with OR, which the planner matches term by term, as the queries spell it.)
CREATE INDEX outcomes_referrals_by_ts ON outcomes (ts_ms, tool, method, error_type)
    WHERE error_type = 'wrong_tool_boundary' OR error_type = 'low_utility';
