-- claimdag PostgreSQL store, schema version 10: a reader that holds an old snapshot open
-- does not make writes slower the longer it holds it.
--
-- PostgreSQL keeps every version of a row that an open snapshot may still read. Up to
-- version 9 every write updated its workspace's `ws` row (its write count and clock), and
-- every combined request was inserted, answered and deleted in `asks`. While one session
-- held a snapshot (a long report, a transaction left open), each write left a version of
-- the `ws` row that nothing could remove, and the next write's look-up of the row walked
-- them all; a leader's look for waiting requests walked every request answered since.
-- Writes slowed with the time the snapshot was held (8 workers: 167 cycles a second in its
-- first minute, 37 in its fifth). From this version:
--
--   * A write no longer updates its workspace's row. `ws` keeps one row per workspace, which
--     a write locks (a row lock makes no new version) and a settings change locks; the
--     write count and the clock are in `ws_writes`, which only gains rows: one a write (one a
--     combined write), the workspace's state being its newest, found from the end of the
--     index. Rows older than the workspace's last 4,096 to 8,192 writes are deleted 4,096 at
--     a time, below anything a look-up reads.
--   * A leader looks for waiting requests from `asks_from` up, which each write keeps: a
--     number past every request its leader took. Its own request is always among those it
--     takes, so a request numbered before a leader passed it (numbers are taken before
--     commits) is taken by its own handle when it leads, as a handle nobody answers does.
--   * The writes are announced by a trigger on `ws_writes`.
--   * `ws_now` shows each workspace's write count and clock, as the columns of `ws` did.

-- Writers of an older version may still be running: none is in the middle of a write once
-- this lock is granted, and the counts are copied after it (this migration runs READ
-- COMMITTED, so each statement sees every write committed before it began).
LOCK TABLE {schema}.ws IN ACCESS EXCLUSIVE MODE;

CREATE TABLE {schema}.ws_writes (
    name       text    NOT NULL,
    wseq       bigint  NOT NULL,
    last_now   bigint  NOT NULL,
    asks_from  bigint  NOT NULL DEFAULT 0,
    PRIMARY KEY (name, wseq)
);
INSERT INTO {schema}.ws_writes (name, wseq, last_now)
SELECT x.name, x.wseq, x.last_now FROM {schema}.ws x;
DROP TRIGGER IF EXISTS announce_ws ON {schema}.ws;
ALTER TABLE {schema}.ws DROP COLUMN wseq, DROP COLUMN last_now;


