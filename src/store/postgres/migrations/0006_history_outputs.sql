-- claimdag PostgreSQL store, schema version 6: the history records outputs.
--
-- A completion that stores an output (`complete --output`) records it in its history event
-- too. The output is JSON text, kept as text (not jsonb) so that it reads back byte for byte
-- as written, key order included; a node row keeps its output as a string inside `body` for
-- the same reason. Rows written before this version read as having none.

ALTER TABLE {schema}.history ADD COLUMN output text;

