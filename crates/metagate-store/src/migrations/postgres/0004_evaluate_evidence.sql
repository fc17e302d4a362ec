-- metagate evaluate on PostgreSQL, schema version 4: crates/metagate-store/src/migrations/0004_evaluate_evidence.sql
-- in PostgreSQL's dialect.

ALTER TABLE user_corrections ADD COLUMN reask_ask_id BIGINT;
ALTER TABLE user_corrections ADD COLUMN corrects_ask_id BIGINT;
ALTER TABLE user_corrections ADD COLUMN blamed_outcome_id BIGINT;
ALTER TABLE user_corrections ADD COLUMN blamed_decision_id BIGINT;
ALTER TABLE user_corrections ADD COLUMN found_by_run BIGINT;
CREATE UNIQUE INDEX user_corrections_by_reask ON user_corrections (reask_ask_id)
    WHERE reask_ask_id IS NOT NULL;
CREATE INDEX user_corrections_explicit ON user_corrections (id) WHERE reask_ask_id IS NULL;

ALTER TABLE eval_runs ADD COLUMN policy_file TEXT;
ALTER TABLE eval_runs ADD COLUMN policy_hash TEXT;
ALTER TABLE eval_runs ADD COLUMN unattributed_reasks BIGINT NOT NULL DEFAULT 0;

ALTER TABLE eval_recommendations ADD COLUMN evidence_count DOUBLE PRECISION;
ALTER TABLE eval_recommendations ADD COLUMN rejected_count DOUBLE PRECISION;
ALTER TABLE eval_recommendations ADD COLUMN brief TEXT;

ALTER TABLE eval_run_recommendations ADD COLUMN confidence DOUBLE PRECISION;
ALTER TABLE eval_run_recommendations ADD COLUMN evidence_count DOUBLE PRECISION;
ALTER TABLE eval_run_recommendations ADD COLUMN muted BIGINT NOT NULL DEFAULT 0;

CREATE INDEX outcomes_referrals_by_ts ON outcomes (ts_ms, tool, method, error_type)
    WHERE error_type = 'wrong_tool_boundary' OR error_type = 'low_utility';
