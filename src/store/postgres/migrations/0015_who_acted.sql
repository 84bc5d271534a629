-- claimdag PostgreSQL store, schema version 15: an event records who acted when that was
-- not its actor (`by`: a lead who released or completed a worker's claim for it). The two
-- functions that write the history (`write7`, and `commit8` for combined writes) write the
-- new column; `history7` reads it. Their bodies are otherwise those of version 11.

ALTER TABLE {schema}.history ADD COLUMN by_actor text;

