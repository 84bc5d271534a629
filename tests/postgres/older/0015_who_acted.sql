-- claimdag PostgreSQL store, schema version 15: an event records who acted when that was
-- not its actor (`by`: a lead who released or completed a worker's claim for it). The two
-- functions that write the history (`write7`, and `commit8` for combined writes) write the
-- new column; `history7` reads it. Their bodies are otherwise those of version 11.

ALTER TABLE {schema}.history ADD COLUMN by_actor text;

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
    INSERT INTO {schema}.history (seq, i, at, verb, node, actor, generation, detail, output,
                                  by_actor)
    SELECT hseq, (k - 1)::int, (e->>'at')::bigint, e->>'verb', e->>'node', e->>'actor',
           (e->>'generation')::bigint, e->>'detail', e->>'output', e->>'by'
      FROM jsonb_array_elements(coalesce(c->'events', '[]')) WITH ORDINALITY AS h(e, k);
END
$$;

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
                                      output, by_actor)
        SELECT hseqs[e.k], (h.i - 1)::int, (h.v->>'at')::bigint, h.v->>'verb', h.v->>'node',
               h.v->>'actor', (h.v->>'generation')::bigint, h.v->>'detail', h.v->>'output',
               h.v->>'by'
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
-- As version 12 and 14 left it (CREATE OR REPLACE resets a function's settings).
ALTER FUNCTION {schema}.commit8(text, bigint, bigint, bigint, bigint, text, text)
    SET enable_seqscan = off;
ALTER FUNCTION {schema}.commit8(text, bigint, bigint, bigint, bigint, text, text) SET jit = off;

-- As version 7's, with the new column (a new row type: dropped and made again).
DROP FUNCTION {schema}.history7(bigint, text);
CREATE FUNCTION {schema}.history7(since bigint, one text)
RETURNS TABLE (seq bigint, i int, at bigint, verb text, node text, actor text,
               generation bigint, detail text, output text, by_actor text)
LANGUAGE plpgsql AS $$
DECLARE
    hi bigint := {schema}.history_head();
BEGIN
    PERFORM {schema}.flushed();
    RETURN QUERY SELECT h.seq, h.i, h.at, h.verb, h.node, h.actor, h.generation, h.detail,
                        h.output, h.by_actor
                   FROM {schema}.history h
                  WHERE h.seq > since AND h.seq <= hi AND (one IS NULL OR h.node = one)
                  ORDER BY h.seq, h.i;
END
$$;
