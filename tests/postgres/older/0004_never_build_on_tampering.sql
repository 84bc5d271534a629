-- claimdag PostgreSQL store, schema version 4: a write never builds on tables changed by
-- hand in a way that would break the fence.
--
-- commit4 is commit3 that first looks, under the store's lock, at what the write is about
-- to build on, and refuses it (answering `problem`, which the client reports as `corrupt`,
-- exit 6) when:
--   * the history or a node row holds a write past the store row's `seq` (the store row was
--     moved back: the next write would reuse a write's number);
--   * a row the write changes has a status, generation or holder column that disagrees with
--     its body (the row was edited by hand, and which of the two is meant is unknown);
--   * a node the write creates has no row but has a history (its row was deleted: making it
--     anew at generation 1 would grant its generations a second time).
-- Each look is an index lookup, or reads only the rows the write touches.

CREATE FUNCTION {schema}.integrity(expected bigint, c jsonb) RETURNS text
LANGUAGE plpgsql STABLE AS $$
DECLARE
    top bigint;
    bad text;
BEGIN
    SELECT max(h.seq) INTO top FROM {schema}.history h;
    IF top > expected THEN
        RETURN format('the history holds write %s, past the store''s last write %s: the '
                      'store row was changed by hand', top, expected);
    END IF;
    SELECT max(n.seq) INTO top FROM {schema}.nodes n;
    IF top > expected THEN
        RETURN format('a node row was changed by write %s, past the store''s last write %s: '
                      'the store row was changed by hand', top, expected);
    END IF;
    SELECT t.id INTO bad
      FROM jsonb_array_elements(coalesce(c->'nodes', '[]') || coalesce(c->'archived', '[]'))
           AS e(n)
      JOIN {schema}.nodes t ON t.id = e.n->>'id'
     WHERE t.status IS DISTINCT FROM t.body->>'status'
        OR t.generation IS DISTINCT FROM (t.body->>'generation')::bigint
        OR t.holder IS DISTINCT FROM t.body->>'holder'
     LIMIT 1;
    IF bad IS NOT NULL THEN
        RETURN format('node %s: its status, generation or holder column disagrees with its '
                      'body: the row was changed by hand', bad);
    END IF;
    SELECT e.n->>'id' INTO bad
      FROM jsonb_array_elements(coalesce(c->'nodes', '[]')) AS e(n)
     WHERE NOT EXISTS (SELECT 1 FROM {schema}.nodes t WHERE t.id = e.n->>'id')
       AND EXISTS (SELECT 1 FROM {schema}.history h WHERE h.node = e.n->>'id')
     LIMIT 1;
    IF bad IS NOT NULL THEN
        RETURN format('node %s has a history but no row: its row was deleted by hand, and '
                      'making it anew would grant its generations a second time', bad);
    END IF;
    RETURN NULL;
END
$$;

CREATE FUNCTION {schema}.commit4(expected bigint, decided_at bigint, valid_until bigint,
                                 change text)
RETURNS TABLE (committed boolean, seq bigint, now_ms bigint, last_now bigint, version int,
               settings text, nodes text, problem text)
LANGUAGE plpgsql AS $$
DECLARE
    cur bigint;
    prev_now bigint;
    why text;
BEGIN
    SELECT s.seq, s.last_now INTO cur, prev_now FROM {schema}.store s WHERE s.id = 1 FOR UPDATE;
    IF cur = expected THEN
        why := {schema}.integrity(expected, change::jsonb);
        IF why IS NOT NULL THEN
            RETURN QUERY SELECT false, s.seq, greatest({schema}.now_ms(), prev_now), s.last_now,
                                s.version, s.settings::text, '[]'::text, why
              FROM {schema}.store s WHERE s.id = 1;
            RETURN;
        END IF;
    END IF;
    RETURN QUERY SELECT c.*, NULL::text
      FROM {schema}.commit3(expected, decided_at, valid_until, change) c;
END
$$;
