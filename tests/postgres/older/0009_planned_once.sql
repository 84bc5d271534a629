-- claimdag PostgreSQL store, schema version 9: what a write runs on the server costs the
-- same whatever the planner guesses, and is planned once a session.
--
--   * Up to version 8 a write's tamper checks joined the write's nodes (a JSON array, which
--     the planner takes for 100 rows) with the `nodes` and `history` tables, and on a small
--     store the planner chose a merge or hash join: every write read a share of every
--     node's index entry (about 600 of a 1,000-node store's, measured), so a write cost more
--     on a small store than on a large one. Each look-up is now a subquery of its own, by
--     the primary key or `history_node`.
--   * `ws_rows`, which every catch-up on a workspace calls, was a SQL function that cannot
--     be inlined: PostgreSQL planned its query again at every call (about 0.4 ms, on the
--     path every write of a busy workspace waits behind). It is now PL/pgSQL, whose plans
--     a session keeps.
--   * A write that archives nothing no longer runs the archive's UPDATE.

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
              FROM {schema}.nodes t WHERE t.id = x.id)
     LIMIT 1;
    IF bad IS NOT NULL THEN
        RETURN format('node %s: its status, generation or holder column disagrees with its '
                      'body: the row was changed by hand', bad);
    END IF;
    SELECT x.id INTO bad
      FROM (SELECT e.n->>'id' AS id
              FROM jsonb_array_elements(coalesce(c->'nodes', '[]')) AS e(n)) x
     WHERE (SELECT true FROM {schema}.nodes t WHERE t.id = x.id) IS NULL
       AND (SELECT true FROM {schema}.history h WHERE h.node = x.id LIMIT 1)
     LIMIT 1;
    IF bad IS NOT NULL THEN
        RETURN format('node %s has a history but no row: its row was deleted by hand, and '
                      'making it anew would grant its generations a second time', bad);
    END IF;
    RETURN NULL;
END
$$;

-- As version 7's, with the archive's UPDATE run only when the write archives.
CREATE OR REPLACE FUNCTION {schema}.write7(c jsonb, wnext bigint, hseq bigint) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO {schema}.nodes AS t (id, pos, seq, wseq, workspace, kind, summary, status,
                                    generation, holder, renewed_at, ttl_ms, archived,
                                    archived_seq, created_at, updated_at, body)
    SELECT n->>'id', nextval('{schema}.node_pos'), hseq, wnext,
           coalesce(n->>'workspace', ''), coalesce(n->>'kind', 'task'), n->>'summary',
           n->>'status', (n->>'generation')::bigint, n->>'holder', (n->>'renewed_at')::bigint,
           (n->>'ttl_ms')::bigint, false, NULL, (n->>'created_at')::bigint,
           (n->>'updated_at')::bigint, n
      FROM jsonb_array_elements(coalesce(c->'nodes', '[]')) WITH ORDINALITY AS e(n, k)
    ON CONFLICT (id) DO UPDATE SET
        seq = EXCLUDED.seq, wseq = EXCLUDED.wseq, status = EXCLUDED.status,
        generation = EXCLUDED.generation, holder = EXCLUDED.holder,
        renewed_at = EXCLUDED.renewed_at, ttl_ms = EXCLUDED.ttl_ms, archived = false,
        archived_seq = NULL, updated_at = EXCLUDED.updated_at, body = EXCLUDED.body;
    IF jsonb_array_length(coalesce(c->'archived', '[]')) > 0 THEN
        UPDATE {schema}.nodes t
           SET seq = hseq, wseq = wnext, archived = true, archived_seq = hseq,
               status = a.n->>'status', generation = (a.n->>'generation')::bigint,
               holder = a.n->>'holder', updated_at = (a.n->>'updated_at')::bigint, body = a.n
          FROM jsonb_array_elements(c->'archived') AS a(n)
         WHERE t.id = a.n->>'id';
    END IF;
    INSERT INTO {schema}.history (seq, i, at, verb, node, actor, generation, detail, output)
    SELECT hseq, (k - 1)::int, (e->>'at')::bigint, e->>'verb', e->>'node', e->>'actor',
           (e->>'generation')::bigint, e->>'detail', e->>'output'
      FROM jsonb_array_elements(coalesce(c->'events', '[]')) WITH ORDINALITY AS h(e, k);
END
$$;

CREATE OR REPLACE FUNCTION {schema}.ws_rows(w text, since bigint) RETURNS text
LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN (SELECT coalesce(json_agg(json_build_object('archived', n.archived, 'node', n.body)
                                     ORDER BY n.pos), '[]')::text
              FROM {schema}.nodes n WHERE n.workspace = w AND n.wseq > since);
END
$$;
