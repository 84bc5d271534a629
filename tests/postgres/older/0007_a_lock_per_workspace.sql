-- claimdag PostgreSQL store, schema version 7: one serialising point per workspace, and a
-- write's lock held only until its commit record is written, not until it is on disk.
--
-- Up to version 6 every write locked the one `store` row, and announced itself with NOTIFY
-- (which PostgreSQL serialises cluster-wide until commit): writes in different workspaces
-- waited on each other, each through the other's fsync. From this version:
--
--   * `ws` holds a row per workspace; a write locks its workspace's row, is accepted only
--     when the workspace's write count `wseq` is still the one the writer decided on, and
--     bumps it. The rules never cross workspaces, so nothing else needs to be current.
--   * A node row's `wseq` is the write of its workspace that last changed it: a handle
--     catches up on one workspace with the rows past the `wseq` it saw (index `nodes_ws`).
--   * Settings carry a version; a write reads it after taking its workspace's lock and is
--     refused when it moved. A settings change locks the store row and every `ws` row.
--   * History lines are numbered from the sequence `writes` (one number a write, taken under
--     the workspace's lock), so the numbers are unique and grow within a workspace; a reader
--     of the history reads only up to a number below which every write has ended.
--   * A write commits with synchronous_commit off (its locks go as soon as its commit record
--     is written) and the client then waits for the WAL to be flushed past it (`flushed`,
--     a transaction that commits synchronously) before it answers: no write is acknowledged
--     before it is durable, and a write that builds on another is later in the WAL, so a
--     crash can only lose writes nobody was told of. Reads flush the same way first.
--   * The store's clock is kept per workspace (`ws.last_now`).
--   * A write is announced (NOTIFY) by a trigger on its workspace's row; with the commit
--     asynchronous, PostgreSQL's cluster-wide lock on notifying commits is no longer held
--     through an fsync. A waiter woken by it reads with a flush first (see `since7`).

CREATE TABLE {schema}.ws (
    name      text    PRIMARY KEY,
    wseq      bigint  NOT NULL,
    last_now  bigint  NOT NULL
);
ALTER TABLE {schema}.store ADD COLUMN settings_version bigint NOT NULL DEFAULT 0;
ALTER TABLE {schema}.nodes ADD COLUMN wseq bigint;
UPDATE {schema}.nodes SET wseq = seq;
ALTER TABLE {schema}.nodes ALTER COLUMN wseq SET NOT NULL;
INSERT INTO {schema}.ws (name, wseq, last_now)
SELECT n.workspace, max(n.seq), max(s.last_now)
  FROM {schema}.nodes n CROSS JOIN {schema}.store s
 GROUP BY n.workspace;
CREATE INDEX nodes_ws ON {schema}.nodes (workspace, wseq);
DROP INDEX {schema}.nodes_seq;

CREATE SEQUENCE {schema}.writes MINVALUE 0 START 1;
SELECT setval('{schema}.writes', s.seq, true) FROM {schema}.store s WHERE s.seq > 0;
CREATE SEQUENCE {schema}.node_pos MINVALUE 0 START 0;
SELECT setval('{schema}.node_pos', s.next_pos, false) FROM {schema}.store s;

-- The history is append-only: vacuum it for its inserts (visibility map, index-only scans)
-- without waiting for a fifth of it to be new.
ALTER TABLE {schema}.history SET (autovacuum_vacuum_insert_scale_factor = 0.01,
                                  autovacuum_vacuum_insert_threshold = 10000);
-- Node rows are rewritten by every transition: room on each page for the new version.
ALTER TABLE {schema}.nodes SET (fillfactor = 80, autovacuum_vacuum_scale_factor = 0.05);

DROP TRIGGER announce_write ON {schema}.store;
CREATE FUNCTION {schema}.announce7() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('claimdag_' || md5(TG_TABLE_SCHEMA), '');
    RETURN NULL;
END
$$;
CREATE TRIGGER announce_ws AFTER UPDATE OF wseq ON {schema}.ws
    FOR EACH ROW EXECUTE FUNCTION {schema}.announce7();
CREATE TRIGGER announce_settings AFTER UPDATE OF settings_version ON {schema}.store
    FOR EACH ROW EXECUTE FUNCTION {schema}.announce7();

-- The number of the last write, as a reader may trust it: every write numbered up to it
-- has ended (committed or not). Read before the locks: a write that took a number by then
-- holds its workspace's lock until it ends, and its workspace's row was committed before.
CREATE FUNCTION {schema}.history_head() RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    hi bigint;
BEGIN
    SELECT CASE WHEN w.is_called THEN w.last_value ELSE w.last_value - 1 END INTO hi
      FROM {schema}.writes w;
    PERFORM 1 FROM {schema}.store x WHERE x.id = 1 FOR SHARE;
    PERFORM 1 FROM {schema}.ws x ORDER BY x.name FOR SHARE;
    RETURN hi;
END
$$;

-- A transaction that commits synchronously: once it has, every commit record written
-- before it is on disk (and with the server's synchronous standbys, as configured).
CREATE FUNCTION {schema}.flushed() RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_logical_emit_message(true, 'claimdag', '');
END
$$;

-- The flush a write's client asks for in the same round trip as the write, after its
-- COMMIT: only when this session's last write committed (commit7 says so).
CREATE FUNCTION {schema}.flush_write() RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('claimdag.wrote', true) = 'yes' THEN
        PERFORM set_config('claimdag.wrote', '', false);
        PERFORM pg_logical_emit_message(true, 'claimdag', '');
    END IF;
END
$$;

-- The history after write `since` (one node's when `one` is given), up to the head above.
CREATE FUNCTION {schema}.history7(since bigint, one text)
RETURNS TABLE (seq bigint, i int, at bigint, verb text, node text, actor text,
               generation bigint, detail text, output text)
LANGUAGE plpgsql AS $$
DECLARE
    hi bigint := {schema}.history_head();
BEGIN
    PERFORM {schema}.flushed();
    RETURN QUERY SELECT h.seq, h.i, h.at, h.verb, h.node, h.actor, h.generation, h.detail,
                        h.output
                   FROM {schema}.history h
                  WHERE h.seq > since AND h.seq <= hi AND (one IS NULL OR h.node = one)
                  ORDER BY h.seq, h.i;
END
$$;

-- A workspace's row, made (and committed) before the first write to it.
CREATE FUNCTION {schema}.ensure_ws(w text) RETURNS void
LANGUAGE sql AS $$
    INSERT INTO {schema}.ws (name, wseq, last_now) VALUES (w, 0, 0)
    ON CONFLICT (name) DO NOTHING;
$$;

-- The node rows of workspace `w` changed after its write `since`, in creation order.
CREATE FUNCTION {schema}.ws_rows(w text, since bigint) RETURNS text
LANGUAGE sql STABLE AS $$
    SELECT coalesce(json_agg(json_build_object('archived', n.archived, 'node', n.body)
                             ORDER BY n.pos), '[]')::text
      FROM {schema}.nodes n WHERE n.workspace = w AND n.wseq > since
$$;

-- Catching up on one workspace: its write count, the server's time, the settings when
-- their version is not `sv`, and the rows changed since `since`; with `flush`, only once
-- every write before it is on disk.
CREATE FUNCTION {schema}.since7(w text, since bigint, sv bigint, flush boolean)
RETURNS TABLE (wseq bigint, now_ms bigint, last_now bigint, version int,
               settings_version bigint, settings text, nodes text)
LANGUAGE plpgsql AS $$
BEGIN
    IF flush THEN
        PERFORM {schema}.flushed();
    END IF;
    RETURN QUERY
    SELECT coalesce(x.wseq, 0), greatest({schema}.now_ms(), coalesce(x.last_now, 0)),
           coalesce(x.last_now, 0), s.version, s.settings_version,
           CASE WHEN s.settings_version <> sv THEN s.settings::text END,
           {schema}.ws_rows(w, since)
      FROM {schema}.store s LEFT JOIN {schema}.ws x ON x.name = w
     WHERE s.id = 1;
END
$$;

-- The pessimistic path's first step, inside the writer's transaction: takes workspace `w`'s
-- lock, then (a statement of its own, seeing every write committed before the lock was
-- granted) catches up on it as since7 does.
CREATE FUNCTION {schema}.lock7(w text, since bigint, sv bigint)
RETURNS TABLE (wseq bigint, now_ms bigint, last_now bigint, version int,
               settings_version bigint, settings text, nodes text)
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM 1 FROM {schema}.ws x WHERE x.name = w FOR NO KEY UPDATE;
    RETURN QUERY SELECT * FROM {schema}.since7(w, since, sv, false);
END
$$;

-- Catching up on the whole store: `known` maps the workspaces a handle has to the write
-- count it saw. Answers every workspace's count and clock (`{"w": [wseq, last_now]}`) and
-- the rows changed past what was known, in one snapshot.
CREATE FUNCTION {schema}.since_all(known jsonb, sv bigint, flush boolean)
RETURNS TABLE (now_ms bigint, version int, settings_version bigint, settings text,
               spaces text, nodes text)
LANGUAGE plpgsql AS $$
BEGIN
    IF flush THEN
        PERFORM {schema}.flushed();
    END IF;
    RETURN QUERY
    SELECT greatest({schema}.now_ms(), (SELECT coalesce(max(x.last_now), 0) FROM {schema}.ws x)),
           s.version, s.settings_version,
           CASE WHEN s.settings_version <> sv THEN s.settings::text END,
           (SELECT coalesce(json_object_agg(x.name, json_build_array(x.wseq, x.last_now)),
                            '{}')::text FROM {schema}.ws x),
           (SELECT coalesce(json_agg(json_build_object('archived', n.archived, 'node', n.body)
                                     ORDER BY n.pos), '[]')::text
              FROM {schema}.ws x
              JOIN {schema}.nodes n ON n.workspace = x.name
               AND n.wseq > coalesce((known->>x.name)::bigint, 0))
      FROM {schema}.store s
     WHERE s.id = 1;
END
$$;

-- What a write to workspace `w` must not build on (see version 4): a history past the
-- write counter, a node row past the workspace's count, a row whose columns disagree with
-- its body, a node made anew whose row was deleted.
CREATE FUNCTION {schema}.integrity7(w text, expected bigint, c jsonb) RETURNS text
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

-- Writes the rows of a change accepted as the workspace's write `wnext`, numbered `hseq`.
CREATE FUNCTION {schema}.write7(c jsonb, wnext bigint, hseq bigint) RETURNS void
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
    UPDATE {schema}.nodes t
       SET seq = hseq, wseq = wnext, archived = true, archived_seq = hseq,
           status = a.n->>'status', generation = (a.n->>'generation')::bigint,
           holder = a.n->>'holder', updated_at = (a.n->>'updated_at')::bigint, body = a.n
      FROM jsonb_array_elements(coalesce(c->'archived', '[]')) AS a(n)
     WHERE t.id = a.n->>'id';
    INSERT INTO {schema}.history (seq, i, at, verb, node, actor, generation, detail, output)
    SELECT hseq, (k - 1)::int, (e->>'at')::bigint, e->>'verb', e->>'node', e->>'actor',
           (e->>'generation')::bigint, e->>'detail', e->>'output'
      FROM jsonb_array_elements(coalesce(c->'events', '[]')) WITH ORDINALITY AS h(e, k);
END
$$;

-- Commits one write to workspace `w` decided on its state as of its write `expected` and
-- settings version `sv`, at server time `decided_at`, holding until `valid_until` (or
-- NULL). `w` NULL is a settings change: it locks the store row and every workspace's.
-- Refused when the workspace or the settings moved on (answering what changed, in the same
-- round trip), when the time is out of order, or (`problem`) on tampering.
CREATE FUNCTION {schema}.commit7(w text, expected bigint, sv bigint, decided_at bigint,
                                 valid_until bigint, change text)
RETURNS TABLE (committed boolean, wseq bigint, seq bigint, now_ms bigint, last_now bigint,
               version int, settings_version bigint, settings text, nodes text,
               problem text)
LANGUAGE plpgsql AS $$
DECLARE
    cur bigint := 0;
    prev_now bigint := 0;
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
        SELECT x.wseq, x.last_now INTO cur, prev_now
          FROM {schema}.ws x WHERE x.name = w FOR NO KEY UPDATE;
        IF NOT FOUND THEN
            -- The client makes the row first (ensure_ws): `wseq` -1 asks it to.
            RETURN QUERY SELECT false, -1::bigint, NULL::bigint, {schema}.now_ms(), 0::bigint,
                                st.version, st.settings_version, NULL::text, '[]'::text,
                                NULL::text
              FROM {schema}.store st WHERE st.id = 1;
            RETURN;
        END IF;
    END IF;
    -- A statement of its own, after the lock: it sees every settings change committed
    -- before the lock was granted.
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
        UPDATE {schema}.ws x SET wseq = cur + 1, last_now = decided_at WHERE x.name = w;
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

-- Whether anything was written since version 6 counts the rows, not the store row.
CREATE FUNCTION {schema}.version7() RETURNS bigint
LANGUAGE sql STABLE AS $$
    SELECT (SELECT coalesce(sum(x.wseq), 0) FROM {schema}.ws x)::bigint + s.settings_version
      FROM {schema}.store s WHERE s.id = 1
$$;
