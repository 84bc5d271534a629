-- Combined writes: under contention a handle leaves its request in `asks` and waits, and
-- whichever handle leads the workspace next (an advisory lock per workspace) decides every
-- waiting request with the rules and commits them as consecutive writes of the workspace,
-- with every answer, in one transaction. Applied at every open that finds an older schema.
--
-- The functions that read `asks` plan without table scans (`enable_seqscan = off`): the
-- table is emptied within milliseconds of each request, and a plan made while autovacuum
-- recorded it empty would read it whole. The statements of these functions are small and
-- run once a write: they never pay for compiling (`jit = off`).

-- The advisory lock that makes one handle at a time the leader of workspace `w`.
CREATE OR REPLACE FUNCTION {schema}.lead_key(w text) RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$
    SELECT hashtextextended('claimdag lead ' || '{schema}' || ' ' || w, 0)
$$;

-- Leaves a request for the next leader of workspace `w`; the session remembers it (and
-- drops its last one, if a failure left it behind).
CREATE OR REPLACE FUNCTION {schema}.add_ask(w text, body text) RETURNS bigint
LANGUAGE plpgsql SET enable_seqscan = off SET jit = off AS $$
DECLARE
    a bigint;
BEGIN
    PERFORM set_config('synchronous_commit', 'off', true);
    DELETE FROM {schema}.asks x
     WHERE x.id = nullif(current_setting('claimdag.ask', true), '')::bigint;
    INSERT INTO {schema}.asks (ws, body) VALUES (w, body) RETURNING id INTO a;
    PERFORM set_config('claimdag.ask', a::text, false);
    RETURN a;
END
$$;

-- Once the session has asked (`add_ask`), as a statement of its own: answers the session's
-- request once a leader has (`answered`, and the answer; committed, and on disk when
-- `flush`, once the statement returns), else makes the session the leader of workspace `w`
-- (`lead`, with at most `most` waiting requests, its own first, as `[[id, body], ...]`,
-- and the workspace's rows since `since`). Sessions wait in line for the leader's lock (a
-- session lock, given back right after the leader's commit); one a leader answered
-- meanwhile passes it on at once.
CREATE OR REPLACE FUNCTION {schema}.turn(w text, since bigint, sv bigint, most int,
                                         flush boolean)
RETURNS TABLE (outcome text, answer text, asks text, wseq bigint, now_ms bigint,
               last_now bigint, version int, settings_version bigint, settings text,
               nodes text)
LANGUAGE plpgsql SET enable_seqscan = off SET jit = off AS $$
DECLARE
    a bigint := current_setting('claimdag.ask')::bigint;
    answered text;
    mark bigint;
BEGIN
    FOR k IN 1 .. 2 LOOP
        DELETE FROM {schema}.asks x WHERE x.id = a AND x.answer IS NOT NULL
        RETURNING x.answer INTO answered;
        IF answered IS NOT NULL THEN
            IF k = 2 THEN
                PERFORM pg_advisory_unlock({schema}.lead_key(w));
            END IF;
            IF flush THEN
                -- A record in the log makes this statement's commit wait for the log to be
                -- on disk up to it, past the commit of the leader that answered.
                PERFORM pg_logical_emit_message(true, 'claimdag', '');
            END IF;
            RETURN QUERY SELECT 'answered'::text, answered, NULL::text, NULL::bigint,
                                NULL::bigint, NULL::bigint, NULL::int, NULL::bigint,
                                NULL::text, NULL::text;
            RETURN;
        END IF;
        IF k = 1 THEN
            PERFORM pg_advisory_lock({schema}.lead_key(w));
        END IF;
    END LOOP;
    PERFORM set_config('synchronous_commit', 'off', true);
    SELECT h.asks_from INTO mark FROM {schema}.ws_head(w) h;
    -- Requests of sessions that ended while they waited (looked for only among those that
    -- have waited a while: a session's request is answered, or dropped by its next one,
    -- long before).
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
                             WHERE x.ws = w AND x.id = a AND x.answer IS NULL) q
                     ORDER BY q.id = a DESC, q.id LIMIT most) k),
           c.wseq, c.now_ms, c.last_now, c.version, c.settings_version, c.settings, c.nodes
      FROM {schema}.since_ws(w, since, sv, false) c;
END
$$;

-- Gives back the leader's lock of workspace `w`, if this session holds it (after a failure).
CREATE OR REPLACE FUNCTION {schema}.unlead(w text) RETURNS void
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

-- The leader's commit: the changes (a JSON array, in order) as the workspace's writes
-- `expected` + 1, + 2, ..., each with a write number of its own and its history lines, as
-- `commit` would commit them one by one (each node row is written once, as the last change
-- that touches it leaves it), and the answers (`{"id": answer}`). Refused as `commit`
-- refuses a write (the workspace moved on, the settings changed, the time is out of
-- order); `problem` on tampering.
CREATE OR REPLACE FUNCTION {schema}.commit_combined(w text, expected bigint, sv bigint,
                                                    decided_at bigint, valid_until bigint,
                                                    changes text, answers text)
RETURNS TABLE (committed boolean, wseq bigint, now_ms bigint, last_now bigint,
               settings_version bigint, problem text)
LANGUAGE plpgsql SET enable_seqscan = off SET jit = off AS $$
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
    ns jsonb;
    ks bigint[];
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
        -- Each node the requests changed, once, as the last of them left it, with the
        -- number of that request: what the tamper checks look at and what is written.
        SELECT coalesce(jsonb_agg(d.n ORDER BY d.id), '[]'), array_agg(d.k ORDER BY d.id)
          INTO ns, ks
          FROM (SELECT DISTINCT ON (x.n->>'id') x.n->>'id' AS id, x.n, e.k
                  FROM jsonb_array_elements(cs) WITH ORDINALITY AS e(c, k),
                       jsonb_array_elements(coalesce(e.c->'nodes', '[]')) AS x(n)
                 ORDER BY x.n->>'id', e.k DESC) d;
        SELECT t INTO why
          FROM {schema}.tampering(w, expected, jsonb_build_object('nodes', ns)) t LIMIT 1;
        IF why IS NOT NULL THEN
            RETURN QUERY SELECT false, cur, server_now, prev_now, s.settings_version, why;
            RETURN;
        END IF;
        FOR k IN 1 .. n LOOP
            hseqs := hseqs || nextval('{schema}.writes');
        END LOOP;
        PERFORM {schema}.put_nodes(
            ns, ARRAY(SELECT hseqs[u.k] FROM unnest(ks) WITH ORDINALITY AS u(k, o) ORDER BY u.o),
            ARRAY(SELECT expected + u.k FROM unnest(ks) WITH ORDINALITY AS u(k, o)
                   ORDER BY u.o));
        INSERT INTO {schema}.history (seq, i, at, verb, node, actor, generation, detail,
                                      output, by_actor, door)
        SELECT hseqs[e.k], (h.i - 1)::int, (h.v->>'at')::bigint, h.v->>'verb', h.v->>'node',
               h.v->>'actor', (h.v->>'generation')::bigint, h.v->>'detail', h.v->>'output',
               h.v->>'by', h.v->>'door'
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
        PERFORM {schema}.record_write(w, expected, expected + n, decided_at, mark);
        prev_now := decided_at;
    END IF;
    PERFORM set_config('claimdag.wrote', 'yes', false);
    RETURN QUERY SELECT true, expected + n, server_now, prev_now, s.settings_version,
                        NULL::text;
END
$$;

-- Leaves a request for the next leader of workspace `w` (`add_ask`), commits it, and waits
-- for its answer or the lead (`turn`): one call, which a session prepares once (its answer:
-- the request's number and `turn`'s row).
CREATE OR REPLACE PROCEDURE {schema}.ask(w text, body text, since bigint, sv bigint,
                                         most int, flush boolean, INOUT ask bigint,
                                         INOUT outcome text, INOUT answer text,
                                         INOUT asks text, INOUT wseq bigint,
                                         INOUT now_ms bigint, INOUT last_now bigint,
                                         INOUT version int, INOUT settings_version bigint,
                                         INOUT settings text, INOUT nodes text)
LANGUAGE plpgsql AS $$
BEGIN
    ask := {schema}.add_ask(w, body);
    COMMIT;
    SELECT t.outcome, t.answer, t.asks, t.wseq, t.now_ms, t.last_now, t.version,
           t.settings_version, t.settings, t.nodes
      INTO outcome, answer, asks, wseq, now_ms, last_now, version, settings_version,
           settings, nodes
      FROM {schema}.turn(w, since, sv, most, flush) t;
END
$$;

-- A leader's commit (`commit_combined`, asynchronous), then the lead given back, then the
-- retention's pass (`archive_history`), then (`flush`) the wait for the log to reach the
-- disk past them (`flush_write`): one call, which a session prepares once; the lock is
-- never held through the flush.
CREATE OR REPLACE PROCEDURE {schema}.lead(w text, expected bigint, sv bigint,
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
      FROM {schema}.commit_combined(w, expected, sv, decided_at, valid_until, changes,
                                    answers) c;
    COMMIT;
    PERFORM pg_advisory_unlock({schema}.lead_key(w));
    IF committed THEN
        PERFORM {schema}.archive_history(decided_at);
    END IF;
    IF flush THEN
        PERFORM {schema}.flush_write();
    END IF;
END
$$;
