-- claimdag PostgreSQL store, schema version 3: the store's clock never goes back. The lease
-- clock is the server's, read as the later of its clock and the last write's time: a server
-- whose clock stepped back (a failover to a host that is behind, an NTP step) keeps taking
-- writes, its time standing at the last write's until its clock catches up, instead of
-- refusing every write until then.

CREATE OR REPLACE FUNCTION {schema}.commit2(expected bigint, decided_at bigint, change text)
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
    server_now := greatest({schema}.now_ms(), prev_now);
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

CREATE OR REPLACE FUNCTION {schema}.since(since bigint)
RETURNS TABLE (seq bigint, now_ms bigint, version int, settings text, nodes text,
               last_now bigint)
LANGUAGE sql STABLE AS $$
    SELECT s.seq, greatest({schema}.now_ms(), s.last_now), s.version, s.settings::text,
           (SELECT coalesce(json_agg(json_build_object('archived', n.archived, 'node', n.body)
                                     ORDER BY n.pos), '[]')::text
              FROM {schema}.nodes n WHERE n.seq > since),
           s.last_now
      FROM {schema}.store s
$$;
