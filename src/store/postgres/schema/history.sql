-- The history: its reads, and the retention `history_keep` asks for (lines moved from
-- `history` to `history_archive`). Applied at every open that finds an older schema.

-- `history_keep` as the settings hold it (`all`, `7d`, `1000000`): milliseconds, or a
-- number of events; both NULL for `all`.
CREATE OR REPLACE FUNCTION {schema}.keep_setting(keep text, OUT ms numeric,
                                                 OUT events numeric)
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
CREATE OR REPLACE FUNCTION {schema}.writes_ended() RETURNS bigint
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
-- unless one is due (1,024 writes or 10 seconds since the last, or the settings changed) and
-- `history_keep` is not `all`. Counts the live lines of ended writes not counted yet (at
-- most 65,536), then moves the oldest counted lines past the setting (at most 4,096), in
-- one statement (DELETE ... RETURNING into INSERT): with a number of events, all but that
-- many; with a duration, those before the first line at or after `decided` minus it.
-- Answers how many it moved. One pass runs at a time, and it never fails the write it
-- follows: an error leaves everything as it was (and is reported as a warning).
CREATE OR REPLACE FUNCTION {schema}.archive_history(decided bigint) RETURNS bigint
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
        SELECT x.ms, x.events INTO keep_ms, keep_events FROM {schema}.keep_setting(keep) x;
        hi := {schema}.writes_ended();
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
                          h.output, h.by_actor, h.door)
            INSERT INTO {schema}.history_archive (seq, i, at, verb, node, actor, generation,
                                                 detail, output, by_actor, door)
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

-- Where a read of the live lines after the line (`after_seq`, `after_i`) starts: past the
-- last line moved to the archive when that is later (no live line comes before it, and the
-- moved lines' entries stay in the primary key until a vacuum, where a scan from before
-- would step over them).
CREATE OR REPLACE FUNCTION {schema}.live_after(after_seq bigint, after_i int, OUT seq bigint,
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

-- The history after write `since`, up to the last write below which every write has ended
-- (`history_head`): one node's when `one` is given, the archive's lines too with
-- `archived`. A statement for each case, so that each keeps a plan that fits it (one plan
-- for all would read every line past `since` to find one node's).
CREATE OR REPLACE FUNCTION {schema}.history_lines(since bigint, one text, archived boolean)
RETURNS TABLE (seq bigint, i int, at bigint, verb text, node text, actor text,
               generation bigint, detail text, output text, by_actor text, door text)
LANGUAGE plpgsql AS $$
DECLARE
    hi bigint := {schema}.history_head();
    lo record;
BEGIN
    PERFORM {schema}.flushed();
    SELECT * INTO lo FROM {schema}.live_after(since, 2147483647);
    IF one IS NOT NULL AND NOT archived THEN
        RETURN QUERY
        SELECT h.seq, h.i, h.at, h.verb, h.node, h.actor, h.generation, h.detail, h.output,
               h.by_actor, h.door
          FROM {schema}.history h
         WHERE h.node = one AND h.seq > since AND h.seq <= hi
         ORDER BY h.seq, h.i;
    ELSIF NOT archived THEN
        RETURN QUERY
        SELECT h.seq, h.i, h.at, h.verb, h.node, h.actor, h.generation, h.detail, h.output,
               h.by_actor, h.door
          FROM {schema}.history h
         WHERE (h.seq, h.i) > (lo.seq, lo.i) AND h.seq <= hi
         ORDER BY h.seq, h.i;
    ELSIF one IS NOT NULL THEN
        RETURN QUERY
        SELECT u.* FROM (
            SELECT a.seq, a.i, a.at, a.verb, a.node, a.actor, a.generation, a.detail,
                   a.output, a.by_actor, a.door
              FROM {schema}.history_archive a
             WHERE a.node = one AND a.seq > since AND a.seq <= hi
            UNION ALL
            SELECT h.seq, h.i, h.at, h.verb, h.node, h.actor, h.generation, h.detail,
                   h.output, h.by_actor, h.door
              FROM {schema}.history h
             WHERE h.node = one AND h.seq > since AND h.seq <= hi) u
         ORDER BY u.seq, u.i;
    ELSE
        RETURN QUERY
        SELECT u.* FROM (
            SELECT a.seq, a.i, a.at, a.verb, a.node, a.actor, a.generation, a.detail,
                   a.output, a.by_actor, a.door
              FROM {schema}.history_archive a
             WHERE a.seq > since AND a.seq <= hi
            UNION ALL
            SELECT h.seq, h.i, h.at, h.verb, h.node, h.actor, h.generation, h.detail,
                   h.output, h.by_actor, h.door
              FROM {schema}.history h
             WHERE (h.seq, h.i) > (lo.seq, lo.i) AND h.seq <= hi) u
         ORDER BY u.seq, u.i;
    END IF;
END
$$;

-- At most `most` lines after the line (`after_seq`, `after_i`), up to the head, the
-- archive's and the live ones in one order: a follower's next read.
CREATE OR REPLACE FUNCTION {schema}.history_from(after_seq bigint, after_i int, most bigint)
RETURNS TABLE (seq bigint, i int, at bigint, verb text, node text, actor text,
               generation bigint, detail text, output text, by_actor text, door text)
LANGUAGE plpgsql AS $$
DECLARE
    hi bigint := {schema}.history_head();
    lo record;
BEGIN
    PERFORM {schema}.flushed();
    SELECT * INTO lo FROM {schema}.live_after(after_seq, after_i);
    RETURN QUERY
    SELECT u.* FROM (
        (SELECT a.seq, a.i, a.at, a.verb, a.node, a.actor, a.generation, a.detail, a.output,
                a.by_actor, a.door
           FROM {schema}.history_archive a
          WHERE (a.seq, a.i) > (after_seq, after_i) AND a.seq <= hi
          ORDER BY a.seq, a.i LIMIT most)
        UNION ALL
        (SELECT h.seq, h.i, h.at, h.verb, h.node, h.actor, h.generation, h.detail, h.output,
                h.by_actor, h.door
           FROM {schema}.history h
          WHERE (h.seq, h.i) > (lo.seq, lo.i) AND h.seq <= hi
          ORDER BY h.seq, h.i LIMIT most)) u
     ORDER BY u.seq, u.i LIMIT most;
END
$$;
