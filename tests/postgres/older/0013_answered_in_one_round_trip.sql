-- claimdag PostgreSQL store, schema version 13: a request a leader answered costs its handle
-- one round trip, not two.
--
-- Up to version 12 a handle waited for its answer inside a transaction it had begun (the
-- transaction a leader needs to hold its workspace's row), and once answered it sent a second
-- message to commit it and to wait for the write-ahead log to reach the disk past the
-- leader's commit. From this version the wait runs as a statement of its own (`turn13`): once
-- answered, the statement drops the request and, when the handle's writes are durable, writes
-- a log record of its own, so that its commit, at the end of that same message, waits for the
-- log to be flushed past the leader's commit. A handle that leads instead holds only the
-- leader's lock (a session lock) while it decides; its commit (`commit8`) takes the
-- workspace's row and refuses the write if another writer moved the workspace meanwhile, as
-- it always did, and the leader catches up and decides again.

-- As `turn8`, once the session has asked (`ask8`), as a statement of its own (no transaction
-- of the caller's around it): answers the session's ask once a leader has (`answered`, and
-- the answer; committed, and on disk when `flush`, once the statement returns), else makes
-- the session the leader of workspace `w` (`lead`, with the waiting asks and the
-- workspace's rows since `since`). The leader holds the leader's lock (a session lock), not
-- the workspace's row, until its commit.
CREATE FUNCTION {schema}.turn13(w text, since bigint, sv bigint, most int, flush boolean)
RETURNS TABLE (outcome text, answer text, asks text, wseq bigint, now_ms bigint,
               last_now bigint, version int, settings_version bigint, settings text,
               nodes text)
LANGUAGE plpgsql SET enable_seqscan = off AS $$
DECLARE
    a bigint := current_setting('claimdag.ask')::bigint;
    answered text;
    mark bigint;
BEGIN
    FOR k IN 1 .. 2 LOOP
        DELETE FROM {schema}.asks x WHERE x.id = a AND x.answer IS NOT NULL
        RETURNING x.answer INTO answered;
        IF answered IS NOT NULL THEN
            IF k = 2 THEN
                PERFORM pg_advisory_unlock({schema}.lead_key(w));
            END IF;
            IF flush THEN
                -- A record in the log makes this statement's commit wait for the log to be
                -- on disk up to it, past the commit of the leader that answered.
                PERFORM pg_logical_emit_message(true, 'claimdag', '');
            END IF;
            RETURN QUERY SELECT 'answered'::text, answered, NULL::text, NULL::bigint,
                                NULL::bigint, NULL::bigint, NULL::int, NULL::bigint,
                                NULL::text, NULL::text;
            RETURN;
        END IF;
        IF k = 1 THEN
            PERFORM pg_advisory_lock({schema}.lead_key(w));
        END IF;
    END LOOP;
    PERFORM set_config('synchronous_commit', 'off', true);
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

-- A write made the usual way (under the workspace's row, `lock7`, or decided on the cache and
-- committed at once, `commit7`) first waits for the leader's lock of its workspace, which it
-- holds to its commit: no such write lands between a leader's catch-up and its commit (which
-- would be refused, and the leader's whole cache read afresh).
CREATE FUNCTION {schema}.lock13(w text, since bigint, sv bigint)
RETURNS TABLE (wseq bigint, now_ms bigint, last_now bigint, version int,
               settings_version bigint, settings text, nodes text)
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock({schema}.lead_key(w));
    RETURN QUERY SELECT * FROM {schema}.lock7(w, since, sv);
END
$$;

CREATE FUNCTION {schema}.commit13(w text, expected bigint, sv bigint, decided_at bigint,
                                  valid_until bigint, change text)
RETURNS TABLE (committed boolean, wseq bigint, seq bigint, now_ms bigint, last_now bigint,
               version int, settings_version bigint, settings text, nodes text,
               problem text)
LANGUAGE plpgsql AS $$
BEGIN
    IF w IS NOT NULL THEN
        PERFORM pg_advisory_xact_lock({schema}.lead_key(w));
    END IF;
    RETURN QUERY SELECT * FROM {schema}.commit7(w, expected, sv, decided_at, valid_until,
                                                change);
END
$$;

-- Leaves a request for the next leader of workspace `w` (`ask8`), commits it, and waits for
-- its answer or the lead (`turn13`): one call, which a session prepares once (its answer:
-- the request's number and `turn13`'s row).
CREATE PROCEDURE {schema}.ask13(w text, body text, since bigint, sv bigint, most int,
                                flush boolean, INOUT ask bigint, INOUT outcome text,
                                INOUT answer text, INOUT asks text, INOUT wseq bigint,
                                INOUT now_ms bigint, INOUT last_now bigint,
                                INOUT version int, INOUT settings_version bigint,
                                INOUT settings text, INOUT nodes text)
LANGUAGE plpgsql AS $$
BEGIN
    ask := {schema}.ask8(w, body);
    COMMIT;
    SELECT t.outcome, t.answer, t.asks, t.wseq, t.now_ms, t.last_now, t.version,
           t.settings_version, t.settings, t.nodes
      INTO outcome, answer, asks, wseq, now_ms, last_now, version, settings_version,
           settings, nodes
      FROM {schema}.turn13(w, since, sv, most, flush) t;
END
$$;

-- A leader's commit (`commit8`, asynchronous), then the lead given back, then (`flush`) the
-- wait for the log to reach the disk past it (`flush_write`): one call, which a session
-- prepares once; the lock is never held through the flush.
CREATE PROCEDURE {schema}.lead13(w text, expected bigint, sv bigint, decided_at bigint,
                                 valid_until bigint, changes text, answers text,
                                 flush boolean, INOUT committed boolean,
                                 INOUT wseq bigint, INOUT now_ms bigint,
                                 INOUT last_now bigint, INOUT settings_version bigint,
                                 INOUT problem text)
LANGUAGE plpgsql AS $$
BEGIN
    SELECT c.committed, c.wseq, c.now_ms, c.last_now, c.settings_version, c.problem
      INTO committed, wseq, now_ms, last_now, settings_version, problem
      FROM {schema}.commit8(w, expected, sv, decided_at, valid_until, changes, answers) c;
    COMMIT;
    PERFORM pg_advisory_unlock({schema}.lead_key(w));
    IF flush THEN
        PERFORM {schema}.flush_write();
    END IF;
END
$$;
