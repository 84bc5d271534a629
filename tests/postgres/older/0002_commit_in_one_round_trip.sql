-- claimdag PostgreSQL store, schema version 2: a write is one round trip. The client decides
-- on its cached state at a time it reads off the server's clock (its offset to it, measured
-- at the last round trip), and `commit` accepts the write only when no other write came in
-- between and that time lies between the last write's and the server's clock now, so the
-- order of writes and the times they were decided at agree. When it refuses, it answers
-- what the client needs to decide again (the rows written since, the server's time), in the
-- same round trip.

ALTER TABLE {schema}.store ADD COLUMN last_now bigint NOT NULL DEFAULT 0;

CREATE FUNCTION {schema}.commit2(expected bigint, decided_at bigint, change text)
RETURNS TABLE (committed boolean, seq bigint, now_ms bigint, last_now bigint, version int,
               settings text, nodes text)
LANGUAGE plpgsql AS $$
DECLARE
    cur bigint;
    prev_now bigint;
    server_now bigint;
    ver int;
BEGIN
    SELECT s.seq, s.last_now, s.version INTO cur, prev_now, ver
      FROM {schema}.store s WHERE s.id = 1 FOR UPDATE;
    server_now := {schema}.now_ms();
    IF cur <> expected OR decided_at < prev_now OR decided_at > server_now THEN
        RETURN QUERY SELECT false, s.seq, server_now, s.last_now, s.version, s.settings::text,
            (SELECT coalesce(json_agg(json_build_object('archived', n.archived, 'node', n.body)
                                      ORDER BY n.pos), '[]')::text
               FROM {schema}.nodes n WHERE n.seq > expected)
          FROM {schema}.store s WHERE s.id = 1;
        RETURN;
    END IF;
    PERFORM {schema}.commit(expected, change);
    UPDATE {schema}.store s SET last_now = decided_at WHERE s.id = 1;
    RETURN QUERY SELECT true, cur + 1, server_now, decided_at, ver, NULL::text, NULL::text;
END
$$;

-- since() also answers the last write's time.
DROP FUNCTION {schema}.since(bigint);
CREATE FUNCTION {schema}.since(since bigint)
RETURNS TABLE (seq bigint, now_ms bigint, version int, settings text, nodes text,
               last_now bigint)
LANGUAGE sql STABLE AS $$
    SELECT s.seq, {schema}.now_ms(), s.version, s.settings::text,
           (SELECT coalesce(json_agg(json_build_object('archived', n.archived, 'node', n.body)
                                     ORDER BY n.pos), '[]')::text
              FROM {schema}.nodes n WHERE n.seq > since),
           s.last_now
      FROM {schema}.store s
$$;
