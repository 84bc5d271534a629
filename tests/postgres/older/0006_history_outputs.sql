-- claimdag PostgreSQL store, schema version 6: the history records outputs.
--
-- A completion that stores an output (`complete --output`) records it in its history event
-- too. The output is JSON text, kept as text (not jsonb) so that it reads back byte for byte
-- as written, key order included; a node row keeps its output as a string inside `body` for
-- the same reason. Rows written before this version read as having none.

ALTER TABLE {schema}.history ADD COLUMN output text;

CREATE OR REPLACE FUNCTION {schema}.commit(expected bigint, change text)
RETURNS TABLE (committed boolean, seq bigint)
LANGUAGE plpgsql AS $$
DECLARE
    cur bigint;
    pos0 bigint;
    c jsonb := change::jsonb;
BEGIN
    SELECT s.seq, s.next_pos INTO cur, pos0 FROM {schema}.store s WHERE s.id = 1 FOR UPDATE;
    IF cur <> expected THEN
        RETURN QUERY SELECT false, cur;
        RETURN;
    END IF;
    INSERT INTO {schema}.nodes AS t (id, pos, seq, workspace, kind, summary, status, generation,
                                    holder, renewed_at, ttl_ms, archived, archived_seq,
                                    created_at, updated_at, body)
    SELECT n->>'id', pos0 + k, cur + 1, coalesce(n->>'workspace', ''), coalesce(n->>'kind', 'task'),
           n->>'summary', n->>'status', (n->>'generation')::bigint, n->>'holder',
           (n->>'renewed_at')::bigint, (n->>'ttl_ms')::bigint, false, NULL,
           (n->>'created_at')::bigint, (n->>'updated_at')::bigint, n
      FROM jsonb_array_elements(coalesce(c->'nodes', '[]')) WITH ORDINALITY AS e(n, k)
    ON CONFLICT (id) DO UPDATE SET
        seq = EXCLUDED.seq, status = EXCLUDED.status, generation = EXCLUDED.generation,
        holder = EXCLUDED.holder, renewed_at = EXCLUDED.renewed_at, ttl_ms = EXCLUDED.ttl_ms,
        archived = false, archived_seq = NULL, updated_at = EXCLUDED.updated_at,
        body = EXCLUDED.body;
    UPDATE {schema}.nodes t
       SET seq = cur + 1, archived = true, archived_seq = cur + 1, status = a.n->>'status',
           generation = (a.n->>'generation')::bigint, holder = a.n->>'holder',
           updated_at = (a.n->>'updated_at')::bigint, body = a.n
      FROM jsonb_array_elements(coalesce(c->'archived', '[]')) AS a(n)
     WHERE t.id = a.n->>'id';
    INSERT INTO {schema}.history (seq, i, at, verb, node, actor, generation, detail, output)
    SELECT cur + 1, (k - 1)::int, (e->>'at')::bigint, e->>'verb', e->>'node', e->>'actor',
           (e->>'generation')::bigint, e->>'detail', e->>'output'
      FROM jsonb_array_elements(coalesce(c->'events', '[]')) WITH ORDINALITY AS h(e, k);
    UPDATE {schema}.store s
       SET seq = cur + 1,
           next_pos = pos0 + jsonb_array_length(coalesce(c->'nodes', '[]')),
           settings = coalesce(c->'settings', s.settings)
     WHERE s.id = 1;
    RETURN QUERY SELECT true, cur + 1;
END
$$;
