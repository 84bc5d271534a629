-- claimdag PostgreSQL store, schema version 1. `{schema}` is the store's schema (one store a
-- schema, so several stores share a database). Applied by the library on the first write,
-- in one transaction under an advisory lock; never by hand.

CREATE SCHEMA IF NOT EXISTS {schema};

-- The one row every write locks (FOR UPDATE): the store's lock. `seq` is the number of the
-- last committed write; it only grows. `next_pos` numbers nodes in creation order.
CREATE TABLE {schema}.store (
    id        int     PRIMARY KEY CHECK (id = 1),
    version   int     NOT NULL,
    seq       bigint  NOT NULL,
    next_pos  bigint  NOT NULL,
    settings  jsonb   NOT NULL
);
INSERT INTO {schema}.store (id, version, seq, next_pos, settings)
VALUES (1, 1, 0, 0, '{"default_ttl_ms": 900000, "max_held": 1, "max_attempts": null}');

-- A node a row, live or archived. The columns are for people and SQL; `body` holds every
-- field as claimdag writes a node, and is what the library reads back. `seq` is the write
-- that last changed the row: a client fetches only the rows past the last write it saw.
CREATE TABLE {schema}.nodes (
    id            text     PRIMARY KEY,
    pos           bigint   NOT NULL,
    seq           bigint   NOT NULL,
    workspace     text     NOT NULL,
    kind          text     NOT NULL,
    summary       text     NOT NULL,
    status        text     NOT NULL,
    generation    bigint   NOT NULL,
    holder        text,
    renewed_at    bigint,
    ttl_ms        bigint,
    archived      boolean  NOT NULL,
    archived_seq  bigint,
    created_at    bigint   NOT NULL,
    updated_at    bigint   NOT NULL,
    body          jsonb    NOT NULL
);
CREATE INDEX nodes_seq ON {schema}.nodes (seq);
CREATE INDEX nodes_live ON {schema}.nodes (pos) WHERE NOT archived;

-- An event a row: every transition, by write (`seq`) and place in it (`i`).
CREATE TABLE {schema}.history (
    seq         bigint  NOT NULL,
    i           int     NOT NULL,
    at          bigint  NOT NULL,
    verb        text    NOT NULL,
    node        text,
    actor       text,
    generation  bigint,
    detail      text,
    PRIMARY KEY (seq, i)
);
CREATE INDEX history_node ON {schema}.history (node, seq);

-- The lease clock: the server's, in milliseconds since the Unix epoch.
CREATE FUNCTION {schema}.now_ms() RETURNS bigint LANGUAGE sql VOLATILE AS
$$ SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint $$;

-- What changed since write `since`: the store row, the server's time, and every node row
-- written after `since`, in creation order (one statement, so one snapshot).
CREATE FUNCTION {schema}.since(since bigint)
RETURNS TABLE (seq bigint, now_ms bigint, version int, settings text, nodes text)
LANGUAGE sql STABLE AS $$
    SELECT s.seq, {schema}.now_ms(), s.version, s.settings::text,
           (SELECT coalesce(json_agg(json_build_object('archived', n.archived, 'node', n.body)
                                     ORDER BY n.pos), '[]')::text
              FROM {schema}.nodes n WHERE n.seq > since)
      FROM {schema}.store s
$$;

-- Commits one write the rules decided on the state as of write `expected`: it locks the
-- store row and, when no other write came in between, applies the change as write
-- `expected + 1`; otherwise it changes nothing and answers the current seq. The change is
-- claimdag's journal record: {"nodes": [...], "archived": [...], "settings": {...}?,
-- "events": [...]}. The rules are not here: this only writes down what they decided.
CREATE FUNCTION {schema}.commit(expected bigint, change text)
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
    INSERT INTO {schema}.history (seq, i, at, verb, node, actor, generation, detail)
    SELECT cur + 1, (k - 1)::int, (e->>'at')::bigint, e->>'verb', e->>'node', e->>'actor',
           (e->>'generation')::bigint, e->>'detail'
      FROM jsonb_array_elements(coalesce(c->'events', '[]')) WITH ORDINALITY AS h(e, k);
    UPDATE {schema}.store s
       SET seq = cur + 1,
           next_pos = pos0 + jsonb_array_length(coalesce(c->'nodes', '[]')),
           settings = coalesce(c->'settings', s.settings)
     WHERE s.id = 1;
    RETURN QUERY SELECT true, cur + 1;
END
$$;
