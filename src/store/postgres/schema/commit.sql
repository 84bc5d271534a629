-- Committing a write: the tamper checks, the rows a change writes, and the commit of one
-- write decided on a handle's cache. Applied at every open that finds an older schema.

-- What a write must not build on, or (`w` NULL) every such change the store holds, for a
-- load and `check`: tables changed by hand in a way that would break the fence. The only
-- place these are looked for; each message says what was changed.
--   * the history (live or archived) holds a write past the write counter;
--   * a node row was changed by a write of its workspace past the workspace's count;
--   * a row's status, generation or holder column disagrees with its body;
--   * (a write) a node the write makes anew has a history but no row;
--   * (the store) a node has two rows.
-- A write's looks are index look-ups, or read only the rows the write touches (each is a
-- subquery of its own: joined with the change, planned for 100 rows, they read a share of
-- every node's index entries).
CREATE OR REPLACE FUNCTION {schema}.tampering(w text, expected bigint, c jsonb)
RETURNS SETOF text
LANGUAGE plpgsql STABLE SET jit = off AS $$
DECLARE
    counter CONSTANT text := 'the history holds write %s, past the last write number %s: '
        'the write counter was changed by hand';
    past CONSTANT text := 'a node row of workspace %L was changed by its write %s, past '
        'its last write %s: the workspace''s row was changed by hand';
    columns CONSTANT text := 'node %s: its status, generation or holder column disagrees '
        'with its body: the row was changed by hand';
    deleted CONSTANT text := 'node %s has a history but no row: its row was deleted by '
        'hand, and making it anew would grant its generations a second time';
    twice CONSTANT text := 'node %s has two rows: one was added by hand';
    top bigint;
    head bigint;
    r record;
BEGIN
    SELECT greatest((SELECT max(h.seq) FROM {schema}.history h),
                    (SELECT max(a.seq) FROM {schema}.history_archive a)) INTO top;
    SELECT CASE WHEN q.is_called THEN q.last_value ELSE q.last_value - 1 END INTO head
      FROM {schema}.writes q;
    IF top > head THEN
        RETURN NEXT format(counter, top, head);
    END IF;
    IF w IS NULL THEN
        -- The whole store, in one scan of the node rows, in creation order.
        FOR r IN SELECT x.* FROM (
                   SELECT n.id, n.pos, n.workspace, n.wseq, coalesce(h.wseq, 0) AS count,
                          n.status IS DISTINCT FROM n.body->>'status'
                          OR n.generation IS DISTINCT FROM (n.body->>'generation')::bigint
                          OR n.holder IS DISTINCT FROM n.body->>'holder' AS disagrees,
                          row_number() OVER (PARTITION BY n.id ORDER BY n.pos) AS nth
                     FROM {schema}.nodes n LEFT JOIN {schema}.ws_now h ON h.name = n.workspace) x
                  WHERE x.wseq > x.count OR x.disagrees OR x.nth = 2
                  ORDER BY x.pos LOOP
            IF r.disagrees THEN
                RETURN NEXT format(columns, r.id);
            END IF;
            IF r.wseq > r.count THEN
                RETURN NEXT format(past, r.workspace, r.wseq, r.count);
            END IF;
            IF r.nth = 2 THEN
                RETURN NEXT format(twice, r.id);
            END IF;
        END LOOP;
        RETURN;
    END IF;
    SELECT max(n.wseq) INTO top FROM {schema}.nodes n WHERE n.workspace = w;
    IF top > expected THEN
        RETURN NEXT format(past, w, top, expected);
    END IF;
    FOR r IN SELECT x.id
               FROM (SELECT e.n->>'id' AS id
                       FROM jsonb_array_elements(coalesce(c->'nodes', '[]')
                                                 || coalesce(c->'archived', '[]')) AS e(n)) x
              WHERE (SELECT t.status IS DISTINCT FROM t.body->>'status'
                            OR t.generation IS DISTINCT FROM (t.body->>'generation')::bigint
                            OR t.holder IS DISTINCT FROM t.body->>'holder'
                       FROM {schema}.nodes t WHERE t.id = x.id ORDER BY t.seq DESC LIMIT 1)
              LIMIT 1 LOOP
        RETURN NEXT format(columns, r.id);
    END LOOP;
    FOR r IN SELECT x.id
               FROM (SELECT e.n->>'id' AS id
                       FROM jsonb_array_elements(coalesce(c->'nodes', '[]')) AS e(n)) x
              WHERE (SELECT true FROM {schema}.nodes t WHERE t.id = x.id
                      ORDER BY t.seq DESC LIMIT 1) IS NULL
                AND ((SELECT true FROM {schema}.history h WHERE h.node = x.id LIMIT 1)
                     OR (SELECT true FROM {schema}.history_archive a
                          WHERE a.node = x.id LIMIT 1))
              LIMIT 1 LOOP
        RETURN NEXT format(deleted, r.id);
    END LOOP;
END
$$;

-- Writes node bodies `ns` as the rows of their nodes, the k-th (from 1) with write number
-- `seqs[k]` and workspace write number `wseqs[k]`. A node's row is the newest of its id,
-- looked up from the end of `nodes_id`, and updated where it is (its new version has the
-- highest `seq` of its id: the next look-up finds it first, whatever versions an open
-- snapshot keeps before it); a new node's row is inserted, with the next creation number in
-- the order of `ns`. (`ns` holds a node once.)
CREATE OR REPLACE FUNCTION {schema}.put_nodes(ns jsonb, seqs bigint[], wseqs bigint[])
RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    e record;
    olds tid[];
    news bigint[] := '{}';
    changed bigint := 0;
    added bigint := 0;
BEGIN
    IF jsonb_array_length(ns) <= 2 THEN
        -- One or two nodes (most writes of a single writer): a statement a node, planned
        -- once a session (the set's statements below are planned at every call).
        FOR e IN SELECT x.k, x.n FROM jsonb_array_elements(ns) WITH ORDINALITY AS x(n, k) LOOP
            UPDATE {schema}.nodes t
               SET seq = seqs[e.k], wseq = wseqs[e.k], status = e.n->>'status',
                   generation = (e.n->>'generation')::bigint, holder = e.n->>'holder',
                   renewed_at = (e.n->>'renewed_at')::bigint,
                   ttl_ms = (e.n->>'ttl_ms')::bigint, archived = false, archived_seq = NULL,
                   updated_at = (e.n->>'updated_at')::bigint, body = e.n
             WHERE t.ctid = (SELECT r.ctid FROM {schema}.nodes r WHERE r.id = e.n->>'id'
                              ORDER BY r.seq DESC LIMIT 1);
            IF FOUND THEN
                changed := changed + 1;
            ELSE
                news := news || e.k;
            END IF;
        END LOOP;
    ELSE
        SELECT array_agg((SELECT r.ctid FROM {schema}.nodes r WHERE r.id = x.n->>'id'
                           ORDER BY r.seq DESC LIMIT 1) ORDER BY x.k)
          INTO olds FROM jsonb_array_elements(ns) WITH ORDINALITY AS x(n, k);
        -- By the rows' positions (`ctid = ANY`): whatever the server's statistics say,
        -- the update never scans the table for them.
        UPDATE {schema}.nodes t
           SET seq = seqs[v.k], wseq = wseqs[v.k], status = v.n->>'status',
               generation = (v.n->>'generation')::bigint, holder = v.n->>'holder',
               renewed_at = (v.n->>'renewed_at')::bigint, ttl_ms = (v.n->>'ttl_ms')::bigint,
               archived = false, archived_seq = NULL,
               updated_at = (v.n->>'updated_at')::bigint, body = v.n
          FROM (SELECT x.k, x.n, olds[x.k] AS old
                  FROM jsonb_array_elements(ns) WITH ORDINALITY AS x(n, k)) v
         WHERE t.ctid = ANY (olds) AND t.ctid = v.old;
        GET DIAGNOSTICS changed = ROW_COUNT;
        news := ARRAY(SELECT k FROM generate_subscripts(olds, 1) k WHERE olds[k] IS NULL);
    END IF;
    IF cardinality(news) > 0 THEN
        INSERT INTO {schema}.nodes (id, pos, seq, wseq, workspace, kind, summary, status,
                                    generation, holder, renewed_at, ttl_ms, archived,
                                    archived_seq, created_at, updated_at, body)
        SELECT x.n->>'id', nextval('{schema}.node_pos'), seqs[x.k], wseqs[x.k],
               coalesce(x.n->>'workspace', ''), coalesce(x.n->>'kind', 'task'),
               x.n->>'summary', x.n->>'status', (x.n->>'generation')::bigint, x.n->>'holder',
               (x.n->>'renewed_at')::bigint, (x.n->>'ttl_ms')::bigint, false, NULL,
               (x.n->>'created_at')::bigint, (x.n->>'updated_at')::bigint, x.n
          FROM (SELECT y.k, y.n FROM jsonb_array_elements(ns) WITH ORDINALITY AS y(n, k)
                 WHERE y.k = ANY (news) ORDER BY y.k) x;
        GET DIAGNOSTICS added = ROW_COUNT;
    END IF;
    IF changed + added <> jsonb_array_length(ns) THEN
        -- Only a row changed outside the workspace's lock gets here: nothing is written.
        RAISE EXCEPTION 'claimdag: a node''s row changed while a write replaced it';
    END IF;
END
$$;

-- Writes the rows of a change accepted as the workspace's write `wnext`, numbered `hseq`:
-- its nodes, the nodes it archives (each its newest row), and its history lines.
CREATE OR REPLACE FUNCTION {schema}.write_change(c jsonb, wnext bigint, hseq bigint)
RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    n int := jsonb_array_length(coalesce(c->'nodes', '[]'));
    a record;
BEGIN
    PERFORM {schema}.put_nodes(coalesce(c->'nodes', '[]'), array_fill(hseq, ARRAY[n]),
                               array_fill(wnext, ARRAY[n]));
    FOR a IN SELECT e.n FROM jsonb_array_elements(coalesce(c->'archived', '[]')) AS e(n) LOOP
        UPDATE {schema}.nodes t
           SET seq = hseq, wseq = wnext, archived = true, archived_seq = hseq,
               status = a.n->>'status', generation = (a.n->>'generation')::bigint,
               holder = a.n->>'holder', updated_at = (a.n->>'updated_at')::bigint, body = a.n
         WHERE t.ctid = (SELECT r.ctid FROM {schema}.nodes r
                          WHERE r.id = a.n->>'id' ORDER BY r.seq DESC LIMIT 1);
    END LOOP;
    INSERT INTO {schema}.history (seq, i, at, verb, node, actor, generation, detail, output,
                                  by_actor, door)
    SELECT hseq, (k - 1)::int, (e->>'at')::bigint, e->>'verb', e->>'node', e->>'actor',
           (e->>'generation')::bigint, e->>'detail', e->>'output', e->>'by', e->>'door'
      FROM jsonb_array_elements(coalesce(c->'events', '[]')) WITH ORDINALITY AS h(e, k);
END
$$;

-- Records write `after` of workspace `w` (its count was `before`), decided at `at`, with
-- the first request the next leader looks at, `mark`. When the count passes a multiple of
-- 4,096, deletes the rows of the 4,096 writes before the last 4,096, and the requests of
-- ended sessions from where leaders looked at the oldest of those writes up to the mark.
CREATE OR REPLACE FUNCTION {schema}.record_write(w text, before bigint, after bigint,
                                                 at bigint, mark bigint)
RETURNS void
LANGUAGE plpgsql SET enable_seqscan = off AS $$
DECLARE
    k bigint := after / 4096;
    since bigint;
BEGIN
    INSERT INTO {schema}.ws_writes (name, wseq, last_now, asks_from)
    VALUES (w, after, at, mark);
    IF k > before / 4096 AND k >= 2 THEN
        WITH gone AS (
            DELETE FROM {schema}.ws_writes y
             WHERE y.name = w AND y.wseq >= (k - 2) * 4096 AND y.wseq < (k - 1) * 4096
            RETURNING y.asks_from)
        SELECT min(g.asks_from) INTO since FROM gone g;
        DELETE FROM {schema}.asks x
         WHERE x.ws = w AND x.answer IS NULL AND x.id >= coalesce(since, 0) AND x.id < mark
           AND x.at < clock_timestamp() - interval '1 second'
           AND NOT EXISTS (SELECT 1 FROM pg_stat_activity p WHERE p.pid = x.pid);
    END IF;
END
$$;

-- Commits one write to workspace `w` decided on its state as of its write `expected` and
-- settings version `sv`, at server time `decided_at`, holding until `valid_until` (or
-- NULL). `w` NULL is a settings change: it locks the store row and every workspace's. A
-- write to a workspace first waits for the workspace's leader's lock, held to its commit.
-- Refused when the workspace or the settings moved on (answering what changed, in the same
-- round trip), when the time is out of order, or (`problem`) on tampering. The commit is
-- asynchronous: the client's `flush_write` follows it in the same round trip.
CREATE OR REPLACE FUNCTION {schema}.commit(w text, expected bigint, sv bigint,
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
        PERFORM pg_advisory_xact_lock({schema}.lead_key(w));
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
        SELECT t INTO why FROM {schema}.tampering(w, expected, c) t LIMIT 1;
        IF why IS NOT NULL THEN
            RETURN QUERY SELECT false, cur, NULL::bigint, server_now, prev_now, s.version,
                                s.settings_version, NULL::text, '[]'::text, why;
            RETURN;
        END IF;
    END IF;
    hseq := nextval('{schema}.writes');
    PERFORM {schema}.write_change(c, cur + 1, hseq);
    PERFORM set_config('claimdag.wrote', 'yes', false);
    IF w IS NOT NULL THEN
        PERFORM {schema}.record_write(w, cur, cur + 1, decided_at, mark);
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
