-- metagate telemetry on PostgreSQL, schema version 5: crates/metagate-store/src/migrations/0005_call_ids.sql.

ALTER TABLE decisions ADD COLUMN call_id TEXT;
