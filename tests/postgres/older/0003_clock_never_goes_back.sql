-- claimdag PostgreSQL store, schema version 3: a write is judged at the server's time of
-- commit, and the store's clock never goes back.
--
-- commit3 takes, besides what commit2 takes, the first time after the decision at which the
-- rules would see the state differently by time alone (the next lease to run out), which the
-- client computes with the rules; a commit that reaches the server at or after that time is
-- refused and decided again, so a decision made while a lease ran never lands after it ran
-- out (a slow link, a process paused between deciding and sending).
--
-- The lease clock is the server's, read as the later of its clock and the last write's time: a server
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

CREATE FUNCTION {schema}.commit3(expected bigint, decided_at bigint, valid_until bigint,
                                 change text)
RETURNS TABLE (committed boolean, seq bigint, now_ms bigint, last_now bigint, version int,
               settings text, nodes text)
LANGUAGE plpgsql AS $$
DECLARE
    cur bigint;
    prev_now bigint;
BEGIN
    SELECT s.seq, s.last_now INTO cur, prev_now FROM {schema}.store s WHERE s.id = 1 FOR UPDATE;
    IF cur = expected AND valid_until IS NOT NULL
       AND valid_until <= greatest({schema}.now_ms(), prev_now) THEN
        -- Decided before a lease ran out, arriving after: decide again (nothing written
        -- since the decision, so no rows to answer).
        RETURN QUERY SELECT false, s.seq, greatest({schema}.now_ms(), prev_now), s.last_now,
                            s.version, s.settings::text, '[]'::text
          FROM {schema}.store s WHERE s.id = 1;
        RETURN;
    END IF;
    RETURN QUERY SELECT * FROM {schema}.commit2(expected, decided_at, change);
END
$$;
