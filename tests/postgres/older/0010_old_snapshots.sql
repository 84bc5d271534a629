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
DROP TRIGGER announce_ws ON {schema}.ws;
ALTER TABLE {schema}.ws DROP COLUMN wseq, DROP COLUMN last_now;
CREATE TRIGGER announce_write AFTER INSERT ON {schema}.ws_writes
    FOR EACH ROW EXECUTE FUNCTION {schema}.announce7();

-- Workspace `w`'s newest write. (A workspace whose rows were all deleted by hand reads at
-- write 0, which its node rows are then past: the tampering is reported, never built on.)
CREATE FUNCTION {schema}.ws_head(w text, OUT wseq bigint, OUT last_now bigint,
                                 OUT asks_from bigint)
LANGUAGE plpgsql STABLE AS $$
BEGIN
    SELECT y.wseq, y.last_now, y.asks_from INTO wseq, last_now, asks_from
      FROM {schema}.ws_writes y WHERE y.name = w ORDER BY y.wseq DESC LIMIT 1;
    IF NOT FOUND THEN
        wseq := 0;
        last_now := 0;
        asks_from := 0;
    END IF;
END
$$;

-- Each workspace's write count, clock and first request a leader looks at.
CREATE VIEW {schema}.ws_now AS
SELECT x.name, h.wseq, h.last_now, h.asks_from
  FROM {schema}.ws x CROSS JOIN LATERAL {schema}.ws_head(x.name) h;

-- Records write `after` of workspace `w` (its count was `before`), decided at `at`, with
-- the first request the next leader looks at, `mark`. When the count passes a multiple of
-- 4,096, deletes the rows of the 4,096 writes before the last 4,096, and the requests below
-- the mark whose sessions ended (no leader looks there; only their own session would).
CREATE FUNCTION {schema}.wrote10(w text, before bigint, after bigint, at bigint, mark bigint)
RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    k bigint := after / 4096;
BEGIN
    INSERT INTO {schema}.ws_writes (name, wseq, last_now, asks_from)
    VALUES (w, after, at, mark);
    IF k > before / 4096 AND k >= 2 THEN
        DELETE FROM {schema}.ws_writes y
         WHERE y.name = w AND y.wseq >= (k - 2) * 4096 AND y.wseq < (k - 1) * 4096;
        DELETE FROM {schema}.asks x
         WHERE x.ws = w AND x.answer IS NULL AND x.id < mark
           AND x.at < clock_timestamp() - interval '1 second'
           AND NOT EXISTS (SELECT 1 FROM pg_stat_activity p WHERE p.pid = x.pid);
    END IF;
END
$$;

-- A workspace's rows, made (and committed) before the first write to it.
CREATE OR REPLACE FUNCTION {schema}.ensure_ws(w text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO {schema}.ws (name) VALUES (w) ON CONFLICT (name) DO NOTHING;
    IF FOUND THEN
        -- (A row of `ws` deleted by hand is made again; the counts stay as they are.)
        INSERT INTO {schema}.ws_writes (name, wseq, last_now) VALUES (w, 0, 0)
        ON CONFLICT (name, wseq) DO NOTHING;
    END IF;
END
$$;

CREATE OR REPLACE FUNCTION {schema}.since7(w text, since bigint, sv bigint, flush boolean)
RETURNS TABLE (wseq bigint, now_ms bigint, last_now bigint, version int,
               settings_version bigint, settings text, nodes text)
LANGUAGE plpgsql AS $$
BEGIN
    IF flush THEN
        PERFORM {schema}.flushed();
    END IF;
    RETURN QUERY
    SELECT h.wseq, greatest({schema}.now_ms(), h.last_now), h.last_now, s.version,
           s.settings_version,
           CASE WHEN s.settings_version <> sv THEN s.settings::text END,
           {schema}.ws_rows(w, since)
      FROM {schema}.store s CROSS JOIN {schema}.ws_head(w) h
     WHERE s.id = 1;
END
$$;

CREATE OR REPLACE FUNCTION {schema}.since_all(known jsonb, sv bigint, flush boolean)
RETURNS TABLE (now_ms bigint, version int, settings_version bigint, settings text,
               spaces text, nodes text)
LANGUAGE plpgsql AS $$
BEGIN
    IF flush THEN
        PERFORM {schema}.flushed();
    END IF;
    RETURN QUERY
    SELECT greatest({schema}.now_ms(),
                    (SELECT coalesce(max(x.last_now), 0) FROM {schema}.ws_now x)),
           s.version, s.settings_version,
           CASE WHEN s.settings_version <> sv THEN s.settings::text END,
           (SELECT coalesce(json_object_agg(x.name, json_build_array(x.wseq, x.last_now)),
                            '{}')::text FROM {schema}.ws_now x),
           (SELECT coalesce(json_agg(json_build_object('archived', n.archived, 'node', n.body)
                                     ORDER BY n.pos), '[]')::text
              FROM {schema}.ws x
              JOIN {schema}.nodes n ON n.workspace = x.name
               AND n.wseq > coalesce((known->>x.name)::bigint, 0))
      FROM {schema}.store s
     WHERE s.id = 1;
END
$$;

CREATE OR REPLACE FUNCTION {schema}.version7() RETURNS bigint
LANGUAGE sql STABLE AS $$
    SELECT (SELECT coalesce(sum(x.wseq), 0) FROM {schema}.ws_now x)::bigint
           + s.settings_version
      FROM {schema}.store s WHERE s.id = 1
$$;

CREATE OR REPLACE FUNCTION {schema}.commit7(w text, expected bigint, sv bigint,
                                            decided_at bigint, valid_until bigint,
                                            change text)
RETURNS TABLE (committed boolean, wseq bigint, seq bigint, now_ms bigint, last_now bigint,
               version int, settings_version bigint, settings text, nodes text,
               problem text)
LANGUAGE plpgsql AS $$
DECLARE
    cur bigint := 0;
    prev_now bigint := 0;
    mark bigint := 0;
    server_now bigint;
    s {schema}.store%ROWTYPE;
    c jsonb := change::jsonb;
    why text;
    hseq bigint;
BEGIN
    PERFORM set_config('synchronous_commit', 'off', true);
    IF w IS NULL THEN
        IF jsonb_array_length(coalesce(c->'nodes', '[]')) > 0
           OR jsonb_array_length(coalesce(c->'archived', '[]')) > 0 THEN
            RAISE EXCEPTION 'claimdag: a store-wide write carries nodes';
        END IF;
        PERFORM 1 FROM {schema}.store x WHERE x.id = 1 FOR UPDATE;
        PERFORM 1 FROM {schema}.ws x ORDER BY x.name FOR UPDATE;
    ELSE
        IF EXISTS (SELECT 1 FROM jsonb_array_elements(coalesce(c->'nodes', '[]')
                                                      || coalesce(c->'archived', '[]')) e(n)
                    WHERE coalesce(e.n->>'workspace', '') <> w) THEN
            RAISE EXCEPTION 'claimdag: a write to workspace % carries another''s nodes', w;
        END IF;
        PERFORM 1 FROM {schema}.ws x WHERE x.name = w FOR NO KEY UPDATE;
        IF NOT FOUND THEN
            -- The client makes the rows first (ensure_ws): `wseq` -1 asks it to.
            RETURN QUERY SELECT false, -1::bigint, NULL::bigint, {schema}.now_ms(), 0::bigint,
                                st.version, st.settings_version, NULL::text, '[]'::text,
                                NULL::text
              FROM {schema}.store st WHERE st.id = 1;
            RETURN;
        END IF;
        -- A statement of its own, after the lock: it sees the last holder's write.
        SELECT h.wseq, h.last_now, h.asks_from INTO cur, prev_now, mark
          FROM {schema}.ws_head(w) h;
    END IF;
    -- Also after the lock: it sees every settings change committed before it was granted.
    SELECT * INTO s FROM {schema}.store st WHERE st.id = 1;
    server_now := greatest({schema}.now_ms(), prev_now);
    IF cur <> expected OR s.settings_version <> sv
       OR (w IS NOT NULL AND (decided_at < prev_now OR decided_at > server_now
                              OR valid_until <= server_now)) THEN
        RETURN QUERY SELECT false, cur, NULL::bigint, server_now, prev_now, s.version,
                            s.settings_version,
                            CASE WHEN s.settings_version <> sv THEN s.settings::text END,
                            CASE WHEN w IS NULL OR cur = expected THEN '[]'::text
                                 ELSE {schema}.ws_rows(w, expected) END,
                            NULL::text;
        RETURN;
    END IF;
    IF w IS NOT NULL THEN
        why := {schema}.integrity7(w, expected, c);
        IF why IS NOT NULL THEN
            RETURN QUERY SELECT false, cur, NULL::bigint, server_now, prev_now, s.version,
                                s.settings_version, NULL::text, '[]'::text, why;
            RETURN;
        END IF;
    END IF;
    hseq := nextval('{schema}.writes');
    PERFORM {schema}.write7(c, cur + 1, hseq);
    PERFORM set_config('claimdag.wrote', 'yes', false);
    IF w IS NOT NULL THEN
        PERFORM {schema}.wrote10(w, cur, cur + 1, decided_at, mark);
    END IF;
    IF c ? 'settings' THEN
        UPDATE {schema}.store x SET settings = c->'settings', settings_version = sv + 1
         WHERE x.id = 1;
        s.settings_version := sv + 1;
    END IF;
    RETURN QUERY SELECT true, cur + 1, hseq, server_now,
                        CASE WHEN w IS NULL THEN prev_now ELSE decided_at END, s.version,
                        s.settings_version, NULL::text, NULL::text, NULL::text;
END
$$;

-- As version 8's, with the waiting requests looked for from the workspace's `asks_from`
-- up, and the session's own request taken first.
CREATE OR REPLACE FUNCTION {schema}.turn8(w text, since bigint, sv bigint, most int)
RETURNS TABLE (outcome text, answer text, asks text, wseq bigint, now_ms bigint,
               last_now bigint, version int, settings_version bigint, settings text,
               nodes text)
LANGUAGE plpgsql AS $$
DECLARE
    a bigint := current_setting('claimdag.ask')::bigint;
    answered text;
    mark bigint;
BEGIN
    PERFORM set_config('synchronous_commit', 'off', true);
    FOR k IN 1 .. 2 LOOP
        DELETE FROM {schema}.asks x WHERE x.id = a AND x.answer IS NOT NULL
        RETURNING x.answer INTO answered;
        IF answered IS NOT NULL THEN
            IF k = 2 THEN
                PERFORM pg_advisory_unlock({schema}.lead_key(w));
            END IF;
            PERFORM set_config('claimdag.wrote', 'yes', false);
            RETURN QUERY SELECT 'answered'::text, answered, NULL::text, NULL::bigint,
                                NULL::bigint, NULL::bigint, NULL::int, NULL::bigint,
                                NULL::text, NULL::text;
            RETURN;
        END IF;
        IF k = 1 THEN
            PERFORM pg_advisory_lock({schema}.lead_key(w));
        END IF;
    END LOOP;
    PERFORM 1 FROM {schema}.ws x WHERE x.name = w FOR NO KEY UPDATE;
    SELECT h.asks_from INTO mark FROM {schema}.ws_head(w) h;
    -- Asks of sessions that ended while they waited (looked for only among asks that have
    -- waited a while: a session's ask is answered, or dropped by its next one, long before).
    DELETE FROM {schema}.asks x
     WHERE x.ws = w AND x.answer IS NULL AND x.id >= mark
       AND x.at < clock_timestamp() - interval '1 second'
       AND NOT EXISTS (SELECT 1 FROM pg_stat_activity p WHERE p.pid = x.pid);
    RETURN QUERY
    SELECT 'lead'::text, NULL::text,
           (SELECT coalesce(json_agg(json_build_array(k.id, k.body) ORDER BY k.id), '[]')::text
              FROM (SELECT q.id, q.body
                      FROM ((SELECT x.id, x.body FROM {schema}.asks x
                              WHERE x.ws = w AND x.answer IS NULL AND x.id >= mark
                                AND x.id <> a
                              ORDER BY x.id LIMIT most)
                            UNION ALL
                            SELECT x.id, x.body FROM {schema}.asks x
                             WHERE x.id = a AND x.answer IS NULL) q
                     ORDER BY q.id = a DESC, q.id LIMIT most) k),
           c.wseq, c.now_ms, c.last_now, c.version, c.settings_version, c.settings, c.nodes
      FROM {schema}.since7(w, since, sv, false) c;
END
$$;

-- As version 8's, recording the writes in `ws_writes` with the first request the next
-- leader looks at: past every request this one answered.
CREATE OR REPLACE FUNCTION {schema}.commit8(w text, expected bigint, sv bigint,
                                            decided_at bigint, valid_until bigint,
                                            changes text, answers text)
RETURNS TABLE (committed boolean, wseq bigint, now_ms bigint, last_now bigint,
               settings_version bigint, problem text)
LANGUAGE plpgsql AS $$
DECLARE
    cs jsonb := changes::jsonb;
    n int := jsonb_array_length(cs);
    cur bigint;
    prev_now bigint;
    mark bigint;
    server_now bigint;
    s {schema}.store%ROWTYPE;
    why text;
    hseqs bigint[] := '{}';
    k int;
    own bigint := current_setting('claimdag.ask')::bigint;
BEGIN
    PERFORM set_config('synchronous_commit', 'off', true);
    IF EXISTS (SELECT 1 FROM jsonb_array_elements(cs) e(c)
                WHERE e.c ? 'settings' OR jsonb_array_length(coalesce(e.c->'archived', '[]')) > 0
                   OR EXISTS (SELECT 1 FROM jsonb_array_elements(coalesce(e.c->'nodes', '[]')) x(n)
                               WHERE coalesce(x.n->>'workspace', '') <> w)) THEN
        RAISE EXCEPTION 'claimdag: a combined write to workspace % carries more than its nodes', w;
    END IF;
    PERFORM 1 FROM {schema}.ws x WHERE x.name = w FOR NO KEY UPDATE;
    SELECT h.wseq, h.last_now, h.asks_from INTO cur, prev_now, mark FROM {schema}.ws_head(w) h;
    SELECT * INTO s FROM {schema}.store st WHERE st.id = 1;
    server_now := greatest({schema}.now_ms(), prev_now);
    IF cur IS DISTINCT FROM expected OR s.settings_version <> sv OR decided_at < prev_now
       OR decided_at > server_now OR valid_until <= server_now THEN
        RETURN QUERY SELECT false, cur, server_now, prev_now, s.settings_version, NULL::text;
        RETURN;
    END IF;
    IF n > 0 THEN
        why := {schema}.integrity7(w, expected, jsonb_build_object('nodes',
                   (SELECT coalesce(jsonb_agg(x.n), '[]')
                      FROM jsonb_array_elements(cs) e(c),
                           jsonb_array_elements(coalesce(e.c->'nodes', '[]')) x(n))));
        IF why IS NOT NULL THEN
            RETURN QUERY SELECT false, cur, server_now, prev_now, s.settings_version, why;
            RETURN;
        END IF;
        FOR k IN 1 .. n LOOP
            hseqs := hseqs || nextval('{schema}.writes');
        END LOOP;
        INSERT INTO {schema}.nodes AS t (id, pos, seq, wseq, workspace, kind, summary, status,
                                        generation, holder, renewed_at, ttl_ms, archived,
                                        archived_seq, created_at, updated_at, body)
        SELECT DISTINCT ON (x.n->>'id')
               x.n->>'id', nextval('{schema}.node_pos'), hseqs[e.k], expected + e.k,
               coalesce(x.n->>'workspace', ''), coalesce(x.n->>'kind', 'task'),
               x.n->>'summary', x.n->>'status', (x.n->>'generation')::bigint, x.n->>'holder',
               (x.n->>'renewed_at')::bigint, (x.n->>'ttl_ms')::bigint, false, NULL,
               (x.n->>'created_at')::bigint, (x.n->>'updated_at')::bigint, x.n
          FROM jsonb_array_elements(cs) WITH ORDINALITY AS e(c, k),
               jsonb_array_elements(coalesce(e.c->'nodes', '[]')) AS x(n)
         ORDER BY x.n->>'id', e.k DESC
        ON CONFLICT (id) DO UPDATE SET
            seq = EXCLUDED.seq, wseq = EXCLUDED.wseq, status = EXCLUDED.status,
            generation = EXCLUDED.generation, holder = EXCLUDED.holder,
            renewed_at = EXCLUDED.renewed_at, ttl_ms = EXCLUDED.ttl_ms, archived = false,
            archived_seq = NULL, updated_at = EXCLUDED.updated_at, body = EXCLUDED.body;
        INSERT INTO {schema}.history (seq, i, at, verb, node, actor, generation, detail,
                                      output)
        SELECT hseqs[e.k], (h.i - 1)::int, (h.v->>'at')::bigint, h.v->>'verb', h.v->>'node',
               h.v->>'actor', (h.v->>'generation')::bigint, h.v->>'detail', h.v->>'output'
          FROM jsonb_array_elements(cs) WITH ORDINALITY AS e(c, k),
               jsonb_array_elements(coalesce(e.c->'events', '[]')) WITH ORDINALITY AS h(v, i);
    END IF;
    DELETE FROM {schema}.asks x WHERE x.id = own;
    -- By the primary key, one request at a time: a join with the answers could be planned
    -- as a scan of every version the table still keeps.
    UPDATE {schema}.asks x SET answer = answers::jsonb->>(x.id::text)
     WHERE x.id = ANY (ARRAY(SELECT j::bigint FROM jsonb_object_keys(answers::jsonb) j));
    IF n > 0 THEN
        -- The next leader looks from the first request still waiting, or past every
        -- request this one took (its own and those it answered, which are the first
        -- waiting from the mark up).
        mark := coalesce((SELECT min(x.id) FROM {schema}.asks x
                           WHERE x.ws = w AND x.answer IS NULL AND x.id >= mark),
                         greatest(mark, own + 1,
                                  (SELECT max(j.key::bigint) + 1
                                     FROM jsonb_each_text(answers::jsonb) j)));
        PERFORM {schema}.wrote10(w, expected, expected + n, decided_at, mark);
        prev_now := decided_at;
    END IF;
    PERFORM set_config('claimdag.wrote', 'yes', false);
    RETURN QUERY SELECT true, expected + n, server_now, prev_now, s.settings_version,
                        NULL::text;
END
$$;
