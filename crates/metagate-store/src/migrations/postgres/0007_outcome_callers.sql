-- metagate store on PostgreSQL, schema version 7: crates/metagate-store/src/migrations/0007_outcome_callers.sql.

ALTER TABLE outcomes ADD COLUMN caller TEXT;
ALTER TABLE eval_recommendations ADD COLUMN evidence_rate DOUBLE PRECISION;
ALTER TABLE eval_recommendations ADD COLUMN rejected_rate DOUBLE PRECISION;
