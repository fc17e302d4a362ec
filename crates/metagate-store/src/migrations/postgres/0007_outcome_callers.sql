-- metagate store on PostgreSQL, schema version 7: crates/metagate-store/src/migrations/0007_outcome_callers.sql.

ALTER TABLE outcomes ADD COLUMN caller TEXT;
ALTER TABLE eval_recommendations ADD COLUMN evidence_rate DOUBLE PRECISION;
ALTER TABLE eval_recommendations ADD COLUMN rejected_rate DOUBLE PRECISION;
-- The three new kinds (PostgreSQL named the column's CHECK `eval_recommendations_kind_check`).
ALTER TABLE eval_recommendations DROP CONSTRAINT eval_recommendations_kind_check;
ALTER TABLE eval_recommendations ADD CONSTRAINT eval_recommendations_kind_check
    CHECK (kind IN ('split_boundary', 'tighten_acceptance', 'demote', 'deprecate_alias', 'learn_alias',
                    'review_schema', 'change_point', 'fix_caller', 'sharpen_descriptions'));
