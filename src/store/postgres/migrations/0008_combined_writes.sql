-- claimdag PostgreSQL store, schema version 8: under contention, one writer decides the
-- waiting writers' requests with its own, in one transaction.
--
-- With every write of a workspace serialised on its `ws` row, a fleet in one workspace gets
-- through one write per lock hand-over, and each hand-over costs the new holder a round trip
-- to catch up and one to commit. From this version a handle whose last write met another
-- writer leaves its request in `asks` and waits; whichever handle leads the workspace next
-- (an advisory lock per workspace, held across the leader's two round trips) takes every
-- waiting request, runs each through the rules in order on its caught-up state, and commits
-- them as consecutive writes of the workspace (each its own write number and history lines,
-- as one at a time) with every answer, in one transaction. A waiter reads its answer once
-- the leader has committed, and is answered once the WAL is flushed past it
-- (`flush_write`), as a write is.
--
--   * An ask is answered at most once: leaders take the advisory lock in turn, and each sees
--     the answers of the one before. A leader whose transaction fails leaves its asks for the
--     next.
--   * `asks` is unlogged: an ask and its answer matter only while its session waits, and a
--     crash ends that session. The changes themselves are written as every write is.
--   * An ask of a session that is gone is dropped, never decided; a session's new ask drops
--     its last one.

CREATE UNLOGGED TABLE {schema}.asks (
    id      bigserial  PRIMARY KEY,
    ws      text       NOT NULL,
    pid     int        NOT NULL DEFAULT pg_backend_pid(),
    at      timestamptz NOT NULL DEFAULT clock_timestamp(),
    body    text       NOT NULL,
    answer  text
);
CREATE INDEX asks_waiting ON {schema}.asks (ws, id) WHERE answer IS NULL;

