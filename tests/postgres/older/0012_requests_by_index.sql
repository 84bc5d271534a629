-- claimdag PostgreSQL store, schema version 12: the statements on the table of waiting
-- requests (`asks`) reach its rows through its indexes, whatever the server's statistics
-- say of it.
--
-- Every request a handle leaves for a leader is a row made, answered and dropped within
-- milliseconds: autovacuum finds the table empty, empties its pages, and records it as
-- empty. A session that planned its statements then (or whose plans that record renewed)
-- kept plans that read the whole table, and the table grows until autovacuum comes back
-- (up to a minute later; without end while another session holds a snapshot open). In the
-- last minute of the 10-minute run of `cargo bench --bench postgres` a leader's answers
-- read 3,600 pages a write; a held snapshot took one from 82 to 600 pages a write in 1,100
-- cycles (tests/postgres/cost.rs). From this version the functions that read that table
-- plan without table scans: each of its statements there has an index for what it looks
-- up (the primary key, the waiting requests of a workspace). The functions they call
-- (catch-up, tamper checks, node writes) plan so too while called from them; each of their
-- statements has an index that fits it.
ALTER FUNCTION {schema}.ask8(text, text) SET enable_seqscan = off;
ALTER FUNCTION {schema}.commit8(text, bigint, bigint, bigint, bigint, text, text)
    SET enable_seqscan = off;

-- As version 10's, the session's own request looked up by its workspace and number (by
-- its number alone the index of waiting requests, which leads with the workspace, was read
-- whole: every request made while a snapshot is held is still in it).
CREATE OR REPLACE FUNCTION {schema}.turn8(w text, since bigint, sv bigint, most int)
RETURNS TABLE (outcome text, answer text, asks text, wseq bigint, now_ms bigint,
               last_now bigint, version int, settings_version bigint, settings text,
               nodes text)
LANGUAGE plpgsql SET enable_seqscan = off AS $$
DECLARE
    a bigint := current_setting('claimdag.ask')::bigint;
    answered text;
    mark bigint;
BEGIN
    PERFORM set_config('synchronous_commit', 'off', true);
    FOR k IN 1 .. 2 LOOP
        DELETE FROM {schema}.asks x WHERE x.id = a AND x.answer IS NOT NULL
        RETURNING x.answer INTO answered;
        IF answered IS NOT NULL THEN
            IF k = 2 THEN
                PERFORM pg_advisory_unlock({schema}.lead_key(w));
            END IF;
            PERFORM set_config('claimdag.wrote', 'yes', false);
            RETURN QUERY SELECT 'answered'::text, answered, NULL::text, NULL::bigint,
                                NULL::bigint, NULL::bigint, NULL::int, NULL::bigint,
                                NULL::text, NULL::text;
            RETURN;
        END IF;
        IF k = 1 THEN
            PERFORM pg_advisory_lock({schema}.lead_key(w));
        END IF;
    END LOOP;
    PERFORM 1 FROM {schema}.ws x WHERE x.name = w FOR NO KEY UPDATE;
    SELECT h.asks_from INTO mark FROM {schema}.ws_head(w) h;
    -- Asks of sessions that ended while they waited (looked for only among asks that have
    -- waited a while: a session's ask is answered, or dropped by its next one, long before).
    DELETE FROM {schema}.asks x
     WHERE x.ws = w AND x.answer IS NULL AND x.id >= mark
       AND x.at < clock_timestamp() - interval '1 second'
       AND NOT EXISTS (SELECT 1 FROM pg_stat_activity p WHERE p.pid = x.pid);
    RETURN QUERY
    SELECT 'lead'::text, NULL::text,
           (SELECT coalesce(json_agg(json_build_array(k.id, k.body) ORDER BY k.id), '[]')::text
              FROM (SELECT q.id, q.body
                      FROM ((SELECT x.id, x.body FROM {schema}.asks x
                              WHERE x.ws = w AND x.answer IS NULL AND x.id >= mark
                                AND x.id <> a
                              ORDER BY x.id LIMIT most)
                            UNION ALL
                            SELECT x.id, x.body FROM {schema}.asks x
                             WHERE x.ws = w AND x.id = a AND x.answer IS NULL) q
                     ORDER BY q.id = a DESC, q.id LIMIT most) k),
           c.wseq, c.now_ms, c.last_now, c.version, c.settings_version, c.settings, c.nodes
      FROM {schema}.since7(w, since, sv, false) c;
END
$$;

-- As version 10's, the requests of ended sessions looked for only from where leaders
-- looked at the oldest of the writes deleted with them (the trim before this one looked
-- below that), not among every request ever made below the mark.
CREATE OR REPLACE FUNCTION {schema}.wrote10(w text, before bigint, after bigint, at bigint,
                                             mark bigint)
RETURNS void
LANGUAGE plpgsql SET enable_seqscan = off AS $$
DECLARE
    k bigint := after / 4096;
    since bigint;
BEGIN
    INSERT INTO {schema}.ws_writes (name, wseq, last_now, asks_from)
    VALUES (w, after, at, mark);
    IF k > before / 4096 AND k >= 2 THEN
        WITH gone AS (
            DELETE FROM {schema}.ws_writes y
             WHERE y.name = w AND y.wseq >= (k - 2) * 4096 AND y.wseq < (k - 1) * 4096
            RETURNING y.asks_from)
        SELECT min(g.asks_from) INTO since FROM gone g;
        DELETE FROM {schema}.asks x
         WHERE x.ws = w AND x.answer IS NULL AND x.id >= coalesce(since, 0) AND x.id < mark
           AND x.at < clock_timestamp() - interval '1 second'
           AND NOT EXISTS (SELECT 1 FROM pg_stat_activity p WHERE p.pid = x.pid);
    END IF;
END
$$;
