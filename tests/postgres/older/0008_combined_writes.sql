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

-- The advisory lock that makes one handle at a time the leader of workspace `w`.
CREATE FUNCTION {schema}.lead_key(w text) RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$
    SELECT hashtextextended('claimdag lead ' || '{schema}' || ' ' || w, 0)
$$;

-- Leaves a request for the next leader of workspace `w`; the session remembers it.
CREATE FUNCTION {schema}.ask8(w text, body text) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    a bigint;
BEGIN
    PERFORM set_config('synchronous_commit', 'off', true);
    -- The session's last ask, if a failure left it behind.
    DELETE FROM {schema}.asks x
     WHERE x.id = nullif(current_setting('claimdag.ask', true), '')::bigint;
    INSERT INTO {schema}.asks (ws, body) VALUES (w, body) RETURNING id INTO a;
    PERFORM set_config('claimdag.ask', a::text, false);
    RETURN a;
END
$$;

-- Inside the caller's transaction, once the session has asked (`ask8`): answers the
-- session's ask once a leader has (`answered`, and the answer), else makes the session the
-- leader of workspace `w` (`lead`). Sessions wait in line for the leader's lock (a session
-- lock, which the client gives back right after its COMMIT, so that the next in line sees
-- every answer); one a leader answered meanwhile passes it on at once. A leader holds the
-- lock and the `ws` row until it commits, and gets the waiting asks (at most `most`,
-- oldest first, as `[[id, body], ...]`, its own among them) and the workspace's rows since
-- `since`.
CREATE FUNCTION {schema}.turn8(w text, since bigint, sv bigint, most int)
RETURNS TABLE (outcome text, answer text, asks text, wseq bigint, now_ms bigint,
               last_now bigint, version int, settings_version bigint, settings text,
               nodes text)
LANGUAGE plpgsql AS $$
DECLARE
    a bigint := current_setting('claimdag.ask')::bigint;
    answered text;
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
    -- Asks of sessions that ended while they waited (looked for only among asks that have
    -- waited a while: a session's ask is answered, or dropped by its next one, long before).
    DELETE FROM {schema}.asks x
     WHERE x.ws = w AND x.answer IS NULL AND x.at < clock_timestamp() - interval '1 second'
       AND NOT EXISTS (SELECT 1 FROM pg_stat_activity p WHERE p.pid = x.pid);
    RETURN QUERY
    SELECT 'lead'::text, NULL::text,
           (SELECT coalesce(json_agg(json_build_array(k.id, k.body) ORDER BY k.id), '[]')::text
              FROM (SELECT x.id, x.body FROM {schema}.asks x
                     WHERE x.ws = w AND x.answer IS NULL ORDER BY x.id LIMIT most) k),
           c.wseq, c.now_ms, c.last_now, c.version, c.settings_version, c.settings, c.nodes
      FROM {schema}.since7(w, since, sv, false) c;
END
$$;

-- Gives back the leader's lock of workspace `w`, if this session holds it (after a failure).
CREATE FUNCTION {schema}.unlead8(w text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_locks l
                WHERE l.locktype = 'advisory' AND l.pid = pg_backend_pid()
                  AND l.mode = 'ExclusiveLock' AND l.objsubid = 1
                  AND ((l.classid::bigint << 32) | l.objid::bigint) = {schema}.lead_key(w)) THEN
        PERFORM pg_advisory_unlock({schema}.lead_key(w));
    END IF;
END
$$;

-- The leader's commit: the changes (a JSON array, in
-- order) as the workspace's writes
-- `expected` + 1, + 2, ..., each with a write number of its own and its history lines, as
-- `commit7` would commit them one by one (each node row is written once, as the last change
-- that touches it leaves it), and the answers (`{"id": answer}`). Refused as commit7 refuses
-- a write (the workspace moved on, the settings changed, the time is out of order);
-- `problem` on tampering.
CREATE FUNCTION {schema}.commit8(w text, expected bigint, sv bigint, decided_at bigint,
                                 valid_until bigint, changes text, answers text)
RETURNS TABLE (committed boolean, wseq bigint, now_ms bigint, last_now bigint,
               settings_version bigint, problem text)
LANGUAGE plpgsql AS $$
DECLARE
    cs jsonb := changes::jsonb;
    n int := jsonb_array_length(cs);
    cur bigint;
    prev_now bigint;
    server_now bigint;
    s {schema}.store%ROWTYPE;
    why text;
    hseqs bigint[] := '{}';
    k int;
BEGIN
    PERFORM set_config('synchronous_commit', 'off', true);
    IF EXISTS (SELECT 1 FROM jsonb_array_elements(cs) e(c)
                WHERE e.c ? 'settings' OR jsonb_array_length(coalesce(e.c->'archived', '[]')) > 0
                   OR EXISTS (SELECT 1 FROM jsonb_array_elements(coalesce(e.c->'nodes', '[]')) x(n)
                               WHERE coalesce(x.n->>'workspace', '') <> w)) THEN
        RAISE EXCEPTION 'claimdag: a combined write to workspace % carries more than its nodes', w;
    END IF;
    SELECT x.wseq, x.last_now INTO cur, prev_now
      FROM {schema}.ws x WHERE x.name = w FOR NO KEY UPDATE;
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
        UPDATE {schema}.ws x SET wseq = expected + n, last_now = decided_at WHERE x.name = w;
        prev_now := decided_at;
    END IF;
    DELETE FROM {schema}.asks x WHERE x.id = current_setting('claimdag.ask')::bigint;
    UPDATE {schema}.asks x SET answer = j.value
      FROM jsonb_each_text(answers::jsonb) j WHERE x.id = j.key::bigint;
    PERFORM set_config('claimdag.wrote', 'yes', false);
    RETURN QUERY SELECT true, expected + n, server_now, prev_now, s.settings_version,
                        NULL::text;
END
$$;
