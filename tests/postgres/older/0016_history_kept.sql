-- claimdag PostgreSQL store, schema version 16: the history kept live is what the setting
-- `history_keep` says, and every read of the history costs the lines it returns.
--
--   * `history_archive` holds the lines moved out of `history` (same columns, same keys).
--     `log` and `log NODE` read `history`; `log --all`, a reader that starts before the
--     live history (`watch --since 0`, serve's streams), `check` and `copy` read both.
--   * A write made while `history_keep` is set ends (after its COMMIT, in the same round
--     trip) with `archive16`, which does nothing unless a pass is due: 1,024 writes or
--     10 seconds of the store's clock since the last pass, or the settings changed. A pass
--     moves at most 4,096 of the oldest lines, in one transaction (DELETE ... RETURNING into
--     INSERT): a crash leaves each line in one table or the other, never both, never none.
--     It holds no lock a writer or a reader takes; one pass runs at a time.
--   * A pass moves only lines it has counted, and counts only lines of writes that have
--     ended (`ended16`), so the count it keeps of the live lines is exact: with a count of
--     events, at least that many last lines stay live.
--   * The reads (`history16`, `history_from16`) have a statement for each case, each
--     planned for its index: one node's lines by `history_node`, the lines after a place
--     by the primary key, up to a limit, in the archive and the live table together; a
--     read of the live lines starts past the last line moved.

CREATE TABLE {schema}.history_archive (
    seq         bigint  NOT NULL,
    i           int     NOT NULL,
    at          bigint  NOT NULL,
    verb        text    NOT NULL,
    node        text,
    actor       text,
    generation  bigint,
    detail      text,
    output      text,
    by_actor    text,
    PRIMARY KEY (seq, i)
);
CREATE INDEX history_archive_node ON {schema}.history_archive (node, seq);
-- Both tables are vacuumed as their lines come and go: the archive gains lines only, and
-- `history` loses its oldest ones, whose index entries a scan from the start would
-- otherwise step over until the next vacuum.
ALTER TABLE {schema}.history_archive SET (autovacuum_vacuum_insert_scale_factor = 0.01,
                                          autovacuum_vacuum_insert_threshold = 10000);
ALTER TABLE {schema}.history SET (autovacuum_vacuum_scale_factor = 0.01,
                                  autovacuum_vacuum_threshold = 10000);

-- Where the retention stands (one row): the last pass (its time by the store's clock, the
-- write number and the settings' version then), the lines counted so far (those up to
-- (`counted_seq`, `counted_i`) that are still live: `live`), and the last line moved.
CREATE TABLE {schema}.history_kept (
    id                int     PRIMARY KEY CHECK (id = 1),
    passed_at         bigint  NOT NULL,
    passed_seq        bigint  NOT NULL,
    settings_version  bigint  NOT NULL,
    counted_seq       bigint  NOT NULL,
    counted_i         int     NOT NULL,
    live              bigint  NOT NULL,
    moved_seq         bigint  NOT NULL,
    moved_i           int     NOT NULL
);
INSERT INTO {schema}.history_kept VALUES (1, 0, 0, -1, 0, -1, 0, 0, -1);

-- `history_keep` as the settings hold it (`all`, `7d`, `1000000`): milliseconds, or a
-- number of events; both NULL for `all`.
CREATE FUNCTION {schema}.keep16(keep text, OUT ms numeric, OUT events numeric)
LANGUAGE sql IMMUTABLE AS $$
    SELECT m[1]::numeric * CASE m[2] WHEN 'ms' THEN 1 WHEN 's' THEN 1000 WHEN 'm' THEN 60000
                                     WHEN 'h' THEN 3600000 WHEN 'd' THEN 86400000 END,
           CASE WHEN keep ~ '^[0-9]+$' THEN keep::numeric END
      FROM (SELECT regexp_match(keep, '^([0-9]+)(ms|s|m|h|d)$') AS m) x
$$;

-- The number below which every write has ended, as `history_head` answers it, without
-- keeping its locks: they are taken in a block that is then rolled back, so that the wait
-- for the writes under way is all they cost (held to the end of a pass, they would keep
-- every writer waiting for it).
CREATE FUNCTION {schema}.ended16() RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    hi bigint;
BEGIN
    BEGIN
        hi := {schema}.history_head();
        RAISE SQLSTATE 'CD016';
    EXCEPTION WHEN SQLSTATE 'CD016' THEN
        NULL;
    END;
    RETURN hi;
END
$$;

-- One pass of the retention, after a write decided at `decided` (the store's clock): nothing
-- unless one is due and `history_keep` is not `all`. Counts the live lines of ended writes
-- not counted yet (at most 65,536), then moves the oldest counted lines past the setting
-- (at most 4,096): with a number of events, all but that many; with a duration, those
-- before the first line at or after `decided` minus it. Answers how many it moved. It never
-- fails the write it follows: an error leaves everything as it was (and is reported as a
-- warning).
CREATE FUNCTION {schema}.archive16(decided bigint) RETURNS bigint
LANGUAGE plpgsql SET jit = off AS $$
DECLARE
    keep text;
    sv bigint;
    head bigint;
    k {schema}.history_kept%ROWTYPE;
    keep_ms numeric;
    keep_events numeric;
    hi bigint;
    n bigint;
    top bigint[];
    m bigint := 0;
    upto record;
BEGIN
    SELECT s.settings->>'history_keep', s.settings_version INTO keep, sv
      FROM {schema}.store s WHERE s.id = 1;
    IF keep IS NULL OR keep = 'all' THEN
        RETURN 0;
    END IF;
    SELECT CASE WHEN q.is_called THEN q.last_value ELSE q.last_value - 1 END INTO head
      FROM {schema}.writes q;
    SELECT * INTO k FROM {schema}.history_kept x WHERE x.id = 1;
    IF NOT FOUND OR (k.settings_version = sv AND head - k.passed_seq < 1024
                     AND decided - k.passed_at < 10000) THEN
        RETURN 0;
    END IF;
    -- Due. One pass at a time: another one under way is as good as this one.
    SELECT * INTO k FROM {schema}.history_kept x WHERE x.id = 1 FOR UPDATE SKIP LOCKED;
    IF NOT FOUND THEN
        RETURN 0;
    END IF;
    BEGIN
        SELECT x.ms, x.events INTO keep_ms, keep_events FROM {schema}.keep16(keep) x;
        hi := {schema}.ended16();
        SELECT count(*), max(ARRAY[c.seq, c.i]) INTO n, top
          FROM (SELECT h.seq, h.i FROM {schema}.history h
                 WHERE (h.seq, h.i) > (k.counted_seq, k.counted_i) AND h.seq <= hi
                 ORDER BY h.seq, h.i LIMIT 65536) c;
        IF n > 0 THEN
            k.live := k.live + n;
            k.counted_seq := top[1];
            k.counted_i := top[2];
        END IF;
        IF keep_events IS NOT NULL THEN
            m := least(4096, k.live - least(keep_events, k.live));
        ELSIF keep_ms IS NOT NULL THEN
            SELECT coalesce(min(o.rn) FILTER (WHERE o.at >= decided - keep_ms) - 1, count(*))
              INTO m
              FROM (SELECT h.at, row_number() OVER (ORDER BY h.seq, h.i) AS rn
                      FROM {schema}.history h
                     WHERE (h.seq, h.i) > (k.moved_seq, k.moved_i)
                       AND (h.seq, h.i) <= (k.counted_seq, k.counted_i)
                     ORDER BY h.seq, h.i LIMIT 4096) o;
        END IF;
        IF m > 0 THEN
            SELECT h.seq, h.i INTO upto FROM {schema}.history h
             WHERE (h.seq, h.i) > (k.moved_seq, k.moved_i)
             ORDER BY h.seq, h.i OFFSET m - 1 LIMIT 1;
            WITH gone AS (
                DELETE FROM {schema}.history h
                 WHERE (h.seq, h.i) > (k.moved_seq, k.moved_i)
                   AND (h.seq, h.i) <= (upto.seq, upto.i)
                RETURNING h.seq, h.i, h.at, h.verb, h.node, h.actor, h.generation, h.detail,
                          h.output, h.by_actor)
            INSERT INTO {schema}.history_archive (seq, i, at, verb, node, actor, generation,
                                                 detail, output, by_actor)
            SELECT * FROM gone;
            GET DIAGNOSTICS m = ROW_COUNT;
            k.live := k.live - m;
            k.moved_seq := upto.seq;
            k.moved_i := upto.i;
        END IF;
        UPDATE {schema}.history_kept x
           SET passed_at = greatest(k.passed_at, decided), passed_seq = head,
               settings_version = sv, counted_seq = k.counted_seq, counted_i = k.counted_i,
               live = k.live, moved_seq = k.moved_seq, moved_i = k.moved_i
         WHERE x.id = 1;
        RETURN m;
    EXCEPTION WHEN OTHERS THEN
        RAISE WARNING 'claimdag: the history''s retention pass failed: %', SQLERRM;
        RETURN 0;
    END;
END
$$;

-- As version 13's, with the retention's pass after the commit (before the flush, which
-- then covers it too).
CREATE OR REPLACE PROCEDURE {schema}.lead13(w text, expected bigint, sv bigint,
                                            decided_at bigint, valid_until bigint,
                                            changes text, answers text, flush boolean,
                                            INOUT committed boolean, INOUT wseq bigint,
                                            INOUT now_ms bigint, INOUT last_now bigint,
                                            INOUT settings_version bigint,
                                            INOUT problem text)
LANGUAGE plpgsql AS $$
BEGIN
    SELECT c.committed, c.wseq, c.now_ms, c.last_now, c.settings_version, c.problem
      INTO committed, wseq, now_ms, last_now, settings_version, problem
      FROM {schema}.commit8(w, expected, sv, decided_at, valid_until, changes, answers) c;
    COMMIT;
    PERFORM pg_advisory_unlock({schema}.lead_key(w));
    IF committed THEN
        PERFORM {schema}.archive16(decided_at);
    END IF;
    IF flush THEN
        PERFORM {schema}.flush_write();
    END IF;
END
$$;

-- As version 11's, with the archive looked at too: its last write number, and a node whose
-- whole history was moved there.
CREATE OR REPLACE FUNCTION {schema}.integrity7(w text, expected bigint, c jsonb) RETURNS text
LANGUAGE plpgsql STABLE SET jit = off AS $$
DECLARE
    top bigint;
    head bigint;
    bad text;
BEGIN
    SELECT greatest((SELECT max(h.seq) FROM {schema}.history h),
                    (SELECT max(a.seq) FROM {schema}.history_archive a)) INTO top;
    SELECT CASE WHEN q.is_called THEN q.last_value ELSE q.last_value - 1 END INTO head
      FROM {schema}.writes q;
    IF top > head THEN
        RETURN format('the history holds write %s, past the last write number %s: the '
                      'write counter was changed by hand', top, head);
    END IF;
    SELECT max(n.wseq) INTO top FROM {schema}.nodes n WHERE n.workspace = w;
    IF top > expected THEN
        RETURN format('a node row of workspace %L was changed by its write %s, past its '
                      'last write %s: the workspace''s row was changed by hand',
                      w, top, expected);
    END IF;
    SELECT x.id INTO bad
      FROM (SELECT e.n->>'id' AS id
              FROM jsonb_array_elements(coalesce(c->'nodes', '[]')
                                        || coalesce(c->'archived', '[]')) AS e(n)) x
     WHERE (SELECT t.status IS DISTINCT FROM t.body->>'status'
                   OR t.generation IS DISTINCT FROM (t.body->>'generation')::bigint
                   OR t.holder IS DISTINCT FROM t.body->>'holder'
              FROM {schema}.nodes t WHERE t.id = x.id ORDER BY t.seq DESC LIMIT 1)
     LIMIT 1;
    IF bad IS NOT NULL THEN
        RETURN format('node %s: its status, generation or holder column disagrees with its '
                      'body: the row was changed by hand', bad);
    END IF;
    SELECT x.id INTO bad
      FROM (SELECT e.n->>'id' AS id
              FROM jsonb_array_elements(coalesce(c->'nodes', '[]')) AS e(n)) x
     WHERE (SELECT true FROM {schema}.nodes t WHERE t.id = x.id ORDER BY t.seq DESC LIMIT 1)
           IS NULL
       AND ((SELECT true FROM {schema}.history h WHERE h.node = x.id LIMIT 1)
            OR (SELECT true FROM {schema}.history_archive a WHERE a.node = x.id LIMIT 1))
     LIMIT 1;
    IF bad IS NOT NULL THEN
        RETURN format('node %s has a history but no row: its row was deleted by hand, and '
                      'making it anew would grant its generations a second time', bad);
    END IF;
    RETURN NULL;
END
$$;

-- Where a read of the live lines after the line (`s`, `i`) starts: past the last line moved
-- to the archive when that is later (no live line comes before it, and the moved lines'
-- entries stay in the primary key until a vacuum, where a scan from before would step over
-- them).
CREATE FUNCTION {schema}.live_after16(after_seq bigint, after_i int, OUT seq bigint,
                                      OUT i int)
LANGUAGE plpgsql STABLE AS $$
BEGIN
    SELECT k.moved_seq, k.moved_i INTO seq, i FROM {schema}.history_kept k
     WHERE k.id = 1 AND (k.moved_seq, k.moved_i) > (after_seq, after_i);
    IF NOT FOUND THEN
        seq := after_seq;
        i := after_i;
    END IF;
END
$$;

-- The history after write `since`, up to the head (as `history7`): one node's when `one`
-- is given, the archive's lines too with `archived`. A statement for each case, so that
-- each keeps a plan that fits it (one plan for all would read every line past `since` to
-- find one node's).
DROP FUNCTION {schema}.history7(bigint, text);
CREATE FUNCTION {schema}.history16(since bigint, one text, archived boolean)
RETURNS TABLE (seq bigint, i int, at bigint, verb text, node text, actor text,
               generation bigint, detail text, output text, by_actor text)
LANGUAGE plpgsql AS $$
DECLARE
    hi bigint := {schema}.history_head();
    lo record;
BEGIN
    PERFORM {schema}.flushed();
    SELECT * INTO lo FROM {schema}.live_after16(since, 2147483647);
    IF one IS NOT NULL AND NOT archived THEN
        RETURN QUERY
        SELECT h.seq, h.i, h.at, h.verb, h.node, h.actor, h.generation, h.detail, h.output,
               h.by_actor
          FROM {schema}.history h
         WHERE h.node = one AND h.seq > since AND h.seq <= hi
         ORDER BY h.seq, h.i;
    ELSIF NOT archived THEN
        RETURN QUERY
        SELECT h.seq, h.i, h.at, h.verb, h.node, h.actor, h.generation, h.detail, h.output,
               h.by_actor
          FROM {schema}.history h
         WHERE (h.seq, h.i) > (lo.seq, lo.i) AND h.seq <= hi
         ORDER BY h.seq, h.i;
    ELSIF one IS NOT NULL THEN
        RETURN QUERY
        SELECT u.* FROM (
            SELECT a.seq, a.i, a.at, a.verb, a.node, a.actor, a.generation, a.detail,
                   a.output, a.by_actor
              FROM {schema}.history_archive a
             WHERE a.node = one AND a.seq > since AND a.seq <= hi
            UNION ALL
            SELECT h.seq, h.i, h.at, h.verb, h.node, h.actor, h.generation, h.detail,
                   h.output, h.by_actor
              FROM {schema}.history h
             WHERE h.node = one AND h.seq > since AND h.seq <= hi) u
         ORDER BY u.seq, u.i;
    ELSE
        RETURN QUERY
        SELECT u.* FROM (
            SELECT a.seq, a.i, a.at, a.verb, a.node, a.actor, a.generation, a.detail,
                   a.output, a.by_actor
              FROM {schema}.history_archive a
             WHERE a.seq > since AND a.seq <= hi
            UNION ALL
            SELECT h.seq, h.i, h.at, h.verb, h.node, h.actor, h.generation, h.detail,
                   h.output, h.by_actor
              FROM {schema}.history h
             WHERE (h.seq, h.i) > (lo.seq, lo.i) AND h.seq <= hi) u
         ORDER BY u.seq, u.i;
    END IF;
END
$$;

-- At most `most` lines after the line (`after_seq`, `after_i`), up to the head, the
-- archive's and the live ones in one order: a follower's next read (`HistoryCursor`).
CREATE FUNCTION {schema}.history_from16(after_seq bigint, after_i int, most bigint)
RETURNS TABLE (seq bigint, i int, at bigint, verb text, node text, actor text,
               generation bigint, detail text, output text, by_actor text)
LANGUAGE plpgsql AS $$
DECLARE
    hi bigint := {schema}.history_head();
    lo record;
BEGIN
    PERFORM {schema}.flushed();
    SELECT * INTO lo FROM {schema}.live_after16(after_seq, after_i);
    RETURN QUERY
    SELECT u.* FROM (
        (SELECT a.seq, a.i, a.at, a.verb, a.node, a.actor, a.generation, a.detail, a.output,
                a.by_actor
           FROM {schema}.history_archive a
          WHERE (a.seq, a.i) > (after_seq, after_i) AND a.seq <= hi
          ORDER BY a.seq, a.i LIMIT most)
        UNION ALL
        (SELECT h.seq, h.i, h.at, h.verb, h.node, h.actor, h.generation, h.detail, h.output,
                h.by_actor
           FROM {schema}.history h
          WHERE (h.seq, h.i) > (lo.seq, lo.i) AND h.seq <= hi
          ORDER BY h.seq, h.i LIMIT most)) u
     ORDER BY u.seq, u.i LIMIT most;
END
$$;
