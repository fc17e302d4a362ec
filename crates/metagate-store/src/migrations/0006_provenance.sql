-- metagate store, schema version 6: where copied rows came from, so `db copy --merge` can add
-- one store's history to another's again and again without adding any row twice.

-- This store's own name among stores: random, made once. A row's origin is the store that
-- first wrote it and the id it had there.
CREATE TABLE store_identity (id TEXT NOT NULL);
INSERT INTO store_identity (id) VALUES (lower(hex(randomblob(16))));

-- Rows `db copy` brought in, as runs: origin ids origin_from..origin_to of the store `origin`
-- are local ids local_from.. of this one, in the same order, one apart. A copy writes a few
-- runs per batch, not a row per row.
CREATE TABLE copied_ranges (
    tbl         TEXT NOT NULL,
    origin      TEXT NOT NULL,
    origin_from INTEGER NOT NULL,
    origin_to   INTEGER NOT NULL,
    local_from  INTEGER NOT NULL,
    CHECK (origin_to >= origin_from)
);
CREATE INDEX copied_ranges_by_origin ON copied_ranges (tbl, origin, origin_from);
