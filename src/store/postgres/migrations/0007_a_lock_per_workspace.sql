-- claimdag PostgreSQL store, schema version 7: one serialising point per workspace, and a
-- write's lock held only until its commit record is written, not until it is on disk.
--
-- Up to version 6 every write locked the one `store` row, and announced itself with NOTIFY
-- (which PostgreSQL serialises cluster-wide until commit): writes in different workspaces
-- waited on each other, each through the other's fsync. From this version:
--
--   * `ws` holds a row per workspace; a write locks its workspace's row, is accepted only
--     when the workspace's write count `wseq` is still the one the writer decided on, and
--     bumps it. The rules never cross workspaces, so nothing else needs to be current.
--   * A node row's `wseq` is the write of its workspace that last changed it: a handle
--     catches up on one workspace with the rows past the `wseq` it saw (index `nodes_ws`).
--   * Settings carry a version; a write reads it after taking its workspace's lock and is
--     refused when it moved. A settings change locks the store row and every `ws` row.
--   * History lines are numbered from the sequence `writes` (one number a write, taken under
--     the workspace's lock), so the numbers are unique and grow within a workspace; a reader
--     of the history reads only up to a number below which every write has ended.
--   * A write commits with synchronous_commit off (its locks go as soon as its commit record
--     is written) and the client then waits for the WAL to be flushed past it (`flushed`,
--     a transaction that commits synchronously) before it answers: no write is acknowledged
--     before it is durable, and a write that builds on another is later in the WAL, so a
--     crash can only lose writes nobody was told of. Reads flush the same way first.
--   * The store's clock is kept per workspace (`ws.last_now`).
--   * A write is announced (NOTIFY) by a trigger on its workspace's row; with the commit
--     asynchronous, PostgreSQL's cluster-wide lock on notifying commits is no longer held
--     through an fsync. A waiter woken by it reads with a flush first (see `since7`).

CREATE TABLE {schema}.ws (
    name      text    PRIMARY KEY,
    wseq      bigint  NOT NULL,
    last_now  bigint  NOT NULL
);
ALTER TABLE {schema}.store ADD COLUMN settings_version bigint NOT NULL DEFAULT 0;
ALTER TABLE {schema}.nodes ADD COLUMN wseq bigint;
UPDATE {schema}.nodes SET wseq = seq;
ALTER TABLE {schema}.nodes ALTER COLUMN wseq SET NOT NULL;
INSERT INTO {schema}.ws (name, wseq, last_now)
SELECT n.workspace, max(n.seq), max(s.last_now)
  FROM {schema}.nodes n CROSS JOIN {schema}.store s
 GROUP BY n.workspace;
CREATE INDEX nodes_ws ON {schema}.nodes (workspace, wseq);
DROP INDEX {schema}.nodes_seq;

CREATE SEQUENCE {schema}.writes MINVALUE 0 START 1;
SELECT setval('{schema}.writes', s.seq, true) FROM {schema}.store s WHERE s.seq > 0;
CREATE SEQUENCE {schema}.node_pos MINVALUE 0 START 0;
SELECT setval('{schema}.node_pos', s.next_pos, false) FROM {schema}.store s;

-- The history is append-only: vacuum it for its inserts (visibility map, index-only scans)
-- without waiting for a fifth of it to be new.
ALTER TABLE {schema}.history SET (autovacuum_vacuum_insert_scale_factor = 0.01,
                                  autovacuum_vacuum_insert_threshold = 10000);
-- Node rows are rewritten by every transition: room on each page for the new version.
ALTER TABLE {schema}.nodes SET (fillfactor = 80, autovacuum_vacuum_scale_factor = 0.05);

DROP TRIGGER IF EXISTS announce_write ON {schema}.store;

