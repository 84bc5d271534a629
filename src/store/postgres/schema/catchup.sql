-- Reading a store: the clock, a workspace's state, and catching a handle's cache up on one
-- workspace or on the whole store. Applied at every open that finds an older schema.

-- The lease clock: the server's, in milliseconds since the Unix epoch.
CREATE OR REPLACE FUNCTION {schema}.now_ms() RETURNS bigint LANGUAGE sql VOLATILE AS
$$ SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint $$;

-- Workspace `w`'s newest write. (A workspace whose rows were all deleted by hand reads at
-- write 0, which its node rows are then past: the tampering is reported, never built on.)
CREATE OR REPLACE FUNCTION {schema}.ws_head(w text, OUT wseq bigint, OUT last_now bigint,
                                            OUT asks_from bigint)
LANGUAGE plpgsql STABLE AS $$
BEGIN
    SELECT y.wseq, y.last_now, y.asks_from INTO wseq, last_now, asks_from
      FROM {schema}.ws_writes y WHERE y.name = w ORDER BY y.wseq DESC LIMIT 1;
    IF NOT FOUND THEN
        wseq := 0;
        last_now := 0;
        asks_from := 0;
    END IF;
END
$$;

-- Each workspace's write count, clock and first request a leader looks at.
CREATE OR REPLACE VIEW {schema}.ws_now AS
SELECT x.name, h.wseq, h.last_now, h.asks_from
  FROM {schema}.ws x CROSS JOIN LATERAL {schema}.ws_head(x.name) h;

-- A number that moves with every write: the workspaces' write counts and the settings'
-- version.
CREATE OR REPLACE FUNCTION {schema}.change_count() RETURNS bigint
LANGUAGE sql STABLE AS $$
    SELECT (SELECT coalesce(sum(x.wseq), 0) FROM {schema}.ws_now x)::bigint
           + s.settings_version
      FROM {schema}.store s WHERE s.id = 1
$$;

-- The number of the last write, as a reader may trust it: every write numbered up to it
-- has ended (committed or not). Read before the locks: a write that took a number by then
-- holds its workspace's lock until it ends, and its workspace's row was committed before.
CREATE OR REPLACE FUNCTION {schema}.history_head() RETURNS bigint
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
CREATE OR REPLACE FUNCTION {schema}.flushed() RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_logical_emit_message(true, 'claimdag', '');
END
$$;

-- The flush a write's client asks for in the same round trip as the write, after its
-- COMMIT: only when this session's last write committed (`commit` says so).
CREATE OR REPLACE FUNCTION {schema}.flush_write() RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('claimdag.wrote', true) = 'yes' THEN
        PERFORM set_config('claimdag.wrote', '', false);
        PERFORM pg_logical_emit_message(true, 'claimdag', '');
    END IF;
END
$$;

-- A workspace's rows, made (and committed) before the first write to it.
CREATE OR REPLACE FUNCTION {schema}.ensure_ws(w text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO {schema}.ws (name) VALUES (w) ON CONFLICT (name) DO NOTHING;
    IF FOUND THEN
        -- (A row of `ws` deleted by hand is made again; the counts stay as they are.)
        INSERT INTO {schema}.ws_writes (name, wseq, last_now) VALUES (w, 0, 0)
        ON CONFLICT (name, wseq) DO NOTHING;
    END IF;
END
$$;

-- The node rows of workspace `w` changed after its write `since`, in creation order.
-- (PL/pgSQL: a session keeps its plan.)
CREATE OR REPLACE FUNCTION {schema}.ws_rows(w text, since bigint) RETURNS text
LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN (SELECT coalesce(json_agg(json_build_object('archived', n.archived, 'node', n.body)
                                     ORDER BY n.pos), '[]')::text
              FROM {schema}.nodes n WHERE n.workspace = w AND n.wseq > since);
END
$$;

-- Catching up on one workspace: its write count, the server's time, its clock, the schema
-- version, the settings when their version is not `sv`, and the rows changed since
-- `since`; with `flush`, only once every write before it is on disk.
CREATE OR REPLACE FUNCTION {schema}.since_ws(w text, since bigint, sv bigint, flush boolean)
RETURNS TABLE (wseq bigint, now_ms bigint, last_now bigint, version int,
               settings_version bigint, settings text, nodes text)
LANGUAGE plpgsql AS $$
BEGIN
    IF flush THEN
        PERFORM {schema}.flushed();
    END IF;
    RETURN QUERY
    SELECT h.wseq, greatest({schema}.now_ms(), h.last_now), h.last_now, s.version,
           s.settings_version,
           CASE WHEN s.settings_version <> sv THEN s.settings::text END,
           {schema}.ws_rows(w, since)
      FROM {schema}.store s CROSS JOIN {schema}.ws_head(w) h
     WHERE s.id = 1;
END
$$;

-- The locked path's first step, inside the writer's transaction: takes the leader's lock of
-- workspace `w` (so that no such write lands between a leader's catch-up and its commit),
-- then the workspace's row, then (a statement of its own, seeing every write committed
-- before the lock was granted) catches up on it as `since_ws` does.
CREATE OR REPLACE FUNCTION {schema}.lock_ws(w text, since bigint, sv bigint)
RETURNS TABLE (wseq bigint, now_ms bigint, last_now bigint, version int,
               settings_version bigint, settings text, nodes text)
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock({schema}.lead_key(w));
    PERFORM 1 FROM {schema}.ws x WHERE x.name = w FOR NO KEY UPDATE;
    RETURN QUERY SELECT * FROM {schema}.since_ws(w, since, sv, false);
END
$$;

-- Catching up on the whole store: `known` maps the workspaces a handle has to the write
-- count it saw. Answers every workspace's count and clock (`{"w": [wseq, last_now]}`) and
-- the rows changed past what was known, in one snapshot.
CREATE OR REPLACE FUNCTION {schema}.since_all(known jsonb, sv bigint, flush boolean)
RETURNS TABLE (now_ms bigint, version int, settings_version bigint, settings text,
               spaces text, nodes text)
LANGUAGE plpgsql AS $$
BEGIN
    IF flush THEN
        PERFORM {schema}.flushed();
    END IF;
    RETURN QUERY
    SELECT greatest({schema}.now_ms(),
                    (SELECT coalesce(max(x.last_now), 0) FROM {schema}.ws_now x)),
           s.version, s.settings_version,
           CASE WHEN s.settings_version <> sv THEN s.settings::text END,
           (SELECT coalesce(json_object_agg(x.name, json_build_array(x.wseq, x.last_now)),
                            '{}')::text FROM {schema}.ws_now x),
           (SELECT coalesce(json_agg(json_build_object('archived', n.archived, 'node', n.body)
                                     ORDER BY n.pos), '[]')::text
              FROM {schema}.ws x
              JOIN {schema}.nodes n ON n.workspace = x.name
               AND n.wseq > coalesce((known->>x.name)::bigint, 0))
      FROM {schema}.store s
     WHERE s.id = 1;
END
$$;
