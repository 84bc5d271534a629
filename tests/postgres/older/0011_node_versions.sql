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

-- Writes node bodies `ns` as the rows of their nodes, the k-th (from 1) with write number
-- `seqs[k]` and workspace write number `wseqs[k]`. A node's row is the newest of its id,
-- looked up from the end of `nodes_id`, and updated where it is (its new version has the
-- highest `seq` of its id: the next look-up finds it first); a new node's row is inserted,
-- with the next creation number in the order of `ns`. (`ns` holds a node once.)
CREATE FUNCTION {schema}.put11(ns jsonb, seqs bigint[], wseqs bigint[]) RETURNS void
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

-- As version 9's, with each node looked up as its newest row.
CREATE OR REPLACE FUNCTION {schema}.integrity7(w text, expected bigint, c jsonb) RETURNS text
LANGUAGE plpgsql STABLE AS $$
DECLARE
    top bigint;
    head bigint;
    bad text;
BEGIN
    SELECT max(h.seq) INTO top FROM {schema}.history h;
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
       AND (SELECT true FROM {schema}.history h WHERE h.node = x.id LIMIT 1)
     LIMIT 1;
    IF bad IS NOT NULL THEN
        RETURN format('node %s has a history but no row: its row was deleted by hand, and '
                      'making it anew would grant its generations a second time', bad);
    END IF;
    RETURN NULL;
END
$$;

-- As version 9's, with the nodes written by `put11` and the archived ones looked up as
-- their newest rows.
CREATE OR REPLACE FUNCTION {schema}.write7(c jsonb, wnext bigint, hseq bigint) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    n int := jsonb_array_length(coalesce(c->'nodes', '[]'));
    a record;
BEGIN
    PERFORM {schema}.put11(coalesce(c->'nodes', '[]'), array_fill(hseq, ARRAY[n]),
                           array_fill(wnext, ARRAY[n]));
    FOR a IN SELECT e.n FROM jsonb_array_elements(coalesce(c->'archived', '[]')) AS e(n) LOOP
        UPDATE {schema}.nodes t
           SET seq = hseq, wseq = wnext, archived = true, archived_seq = hseq,
               status = a.n->>'status', generation = (a.n->>'generation')::bigint,
               holder = a.n->>'holder', updated_at = (a.n->>'updated_at')::bigint, body = a.n
         WHERE t.ctid = (SELECT r.ctid FROM {schema}.nodes r
                          WHERE r.id = a.n->>'id' ORDER BY r.seq DESC LIMIT 1);
    END LOOP;
    INSERT INTO {schema}.history (seq, i, at, verb, node, actor, generation, detail, output)
    SELECT hseq, (k - 1)::int, (e->>'at')::bigint, e->>'verb', e->>'node', e->>'actor',
           (e->>'generation')::bigint, e->>'detail', e->>'output'
      FROM jsonb_array_elements(coalesce(c->'events', '[]')) WITH ORDINALITY AS h(e, k);
END
$$;

-- As version 10's, with the nodes written by `put11` (a node changed by several of the
-- requests, once: as the last of them left it).
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
        why := {schema}.integrity7(w, expected, jsonb_build_object('nodes', ns));
        IF why IS NOT NULL THEN
            RETURN QUERY SELECT false, cur, server_now, prev_now, s.settings_version, why;
            RETURN;
        END IF;
        FOR k IN 1 .. n LOOP
            hseqs := hseqs || nextval('{schema}.writes');
        END LOOP;
        PERFORM {schema}.put11(
            ns, ARRAY(SELECT hseqs[u.k] FROM unnest(ks) WITH ORDINALITY AS u(k, o) ORDER BY u.o),
            ARRAY(SELECT expected + u.k FROM unnest(ks) WITH ORDINALITY AS u(k, o)
                   ORDER BY u.o));
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
