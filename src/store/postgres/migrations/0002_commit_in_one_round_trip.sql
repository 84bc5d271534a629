-- claimdag PostgreSQL store, schema version 2: a write is one round trip. The client decides
-- on its cached state at a time it reads off the server's clock (its offset to it, measured
-- at the last round trip), and `commit` accepts the write only when no other write came in
-- between and that time lies between the last write's and the server's clock now, so the
-- order of writes and the times they were decided at agree. When it refuses, it answers
-- what the client needs to decide again (the rows written since, the server's time), in the
-- same round trip.

ALTER TABLE {schema}.store ADD COLUMN last_now bigint NOT NULL DEFAULT 0;

