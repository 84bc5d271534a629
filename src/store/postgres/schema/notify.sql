-- Every write is announced to listeners: `NOTIFY claimdag_<md5 of the schema>`, sent by a
-- trigger on the row a write adds to `ws_writes` and on the settings' version. PostgreSQL
-- delivers a notification only once the writing transaction commits, so a listener never
-- hears of a write it cannot yet read.

CREATE OR REPLACE FUNCTION {schema}.announce() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('claimdag_' || md5(TG_TABLE_SCHEMA), '');
    RETURN NULL;
END
$$;

DROP TRIGGER IF EXISTS announce_write ON {schema}.ws_writes;
CREATE TRIGGER announce_write AFTER INSERT ON {schema}.ws_writes
    FOR EACH ROW EXECUTE FUNCTION {schema}.announce();
DROP TRIGGER IF EXISTS announce_settings ON {schema}.store;
CREATE TRIGGER announce_settings AFTER UPDATE OF settings_version ON {schema}.store
    FOR EACH ROW EXECUTE FUNCTION {schema}.announce();
