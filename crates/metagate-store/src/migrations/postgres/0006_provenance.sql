-- metagate store on PostgreSQL, schema version 6: crates/metagate-store/src/migrations/0006_provenance.sql.

CREATE TABLE store_identity (id TEXT NOT NULL);
INSERT INTO store_identity (id) VALUES (replace(gen_random_uuid()::text, '-', ''));

CREATE TABLE copied_ranges (
    tbl         TEXT NOT NULL,
    origin      TEXT NOT NULL,
    origin_from BIGINT NOT NULL,
    origin_to   BIGINT NOT NULL,
    local_from  BIGINT NOT NULL,
    CHECK (origin_to >= origin_from)
);
CREATE INDEX copied_ranges_by_origin ON copied_ranges (tbl, origin, origin_from);
