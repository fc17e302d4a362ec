-- metagate store on PostgreSQL, schema version 9: crates/metagate-store/src/migrations/0009_kinds_in_rust.sql.

ALTER TABLE eval_recommendations DROP CONSTRAINT eval_recommendations_kind_check;
