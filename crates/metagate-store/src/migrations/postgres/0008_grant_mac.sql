-- metagate telemetry, schema version 8: each grant row carries its seal, an HMAC-SHA256 of
-- its fields made by `metagate permit grant` with a key only metagate reads. A row without a
-- valid seal is not a grant (an agent that wrote the store itself could otherwise forge one);
-- revoking clears it. Rows granted before this version have none: grant them again.

ALTER TABLE grants ADD COLUMN mac TEXT;
