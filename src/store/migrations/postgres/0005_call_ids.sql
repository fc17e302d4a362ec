-- metagate telemetry on PostgreSQL, schema version 5: src/store/migrations/0005_call_ids.sql.

ALTER TABLE decisions ADD COLUMN call_id TEXT;
