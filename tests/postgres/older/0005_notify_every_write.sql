-- claimdag PostgreSQL store, schema version 5: every write is announced to listeners.
--
-- A trigger on the store row sends `NOTIFY claimdag_<md5 of the schema>` with the new write
-- number whenever `seq` moves (a commit, a load). PostgreSQL delivers a notification only
-- when the writing transaction commits, so a listener never hears of a write it cannot yet
-- read. A handle waiting for ready work (`claim-next --wait`, `watch`) listens on one
-- connection of its own and looks again when told; the channel name stays within the 63
-- bytes PostgreSQL allows whatever the schema's name.

CREATE FUNCTION {schema}.announce_write() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('claimdag_' || md5(TG_TABLE_SCHEMA), NEW.seq::text);
    RETURN NULL;
END
$$;

CREATE TRIGGER announce_write AFTER UPDATE OF seq ON {schema}.store
    FOR EACH ROW EXECUTE FUNCTION {schema}.announce_write();
