-- claimdag PostgreSQL store, schema version 11: a reader that holds an old snapshot open
-- does not make writes to the same nodes slower the longer it holds it.
--
-- Up to version 10 a write updated each node's row in place, through the primary key on
-- `id`. While a session held a snapshot, every write to a node left a version of its row
-- that nothing could remove, each with its own entry in the primary key (a write changes
-- indexed columns); the next write to that node (its tamper checks, the conflict check of
-- its upsert, the uniqueness check of the key) visited every one of them. A node written
-- again and again (a lease renewed, a node claimed and handed back in a loop) made each
-- write read more pages: 89 a write at first, 2,632 after 1,000 claims and hand-backs of
-- one node (tests/postgres/cost.rs). From this version:
--
--   * `nodes` has no primary key: `nodes_id` indexes (id, seq), and a node's row is found
--     from the end of that index, its newest version first, whatever versions sit before
--     it; a write updates the row it found there (by its position: `put11`). Every write
--     to a workspace holds its `ws` row, so a node keeps one row; a second one added by
--     hand is reported as tampering by every load and by `check`.

-- Writers of an older version may still be running: none is in the middle of a write once
-- these locks are granted (a write holds its workspace's row until it commits).
LOCK TABLE {schema}.ws IN ACCESS EXCLUSIVE MODE;
LOCK TABLE {schema}.nodes IN ACCESS EXCLUSIVE MODE;

ALTER TABLE {schema}.nodes DROP CONSTRAINT nodes_pkey;
CREATE UNIQUE INDEX nodes_id ON {schema}.nodes (id, seq);

-- The tables every write changes are vacuumed without pauses, so that the versions a held
-- snapshot kept are cleaned up at once when it ends, before the tables grow further.
ALTER TABLE {schema}.nodes SET (autovacuum_vacuum_cost_delay = 0);
ALTER TABLE {schema}.asks SET (autovacuum_vacuum_cost_delay = 0);

