-- claimdag PostgreSQL store, schema version 20: an event records the front door its call
-- came through (`door`: cli, python, c, mcp, http, dashboard), beside who acted. The
-- functions that return history lines return the new column too: their old forms go
-- (CREATE OR REPLACE cannot change what a function returns).

ALTER TABLE {schema}.history ADD COLUMN door text;
ALTER TABLE {schema}.history_archive ADD COLUMN door text;
DROP FUNCTION IF EXISTS {schema}.history_lines(bigint, text, boolean);
DROP FUNCTION IF EXISTS {schema}.history_from(bigint, int, bigint);
