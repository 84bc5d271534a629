-- claimdag PostgreSQL store, schema version 12: the statements on the table of waiting
-- requests (`asks`) reach its rows through its indexes, whatever the server's statistics
-- say of it.
--
-- Every request a handle leaves for a leader is a row made, answered and dropped within
-- milliseconds: autovacuum finds the table empty, empties its pages, and records it as
-- empty. A session that planned its statements then (or whose plans that record renewed)
-- kept plans that read the whole table, and the table grows until autovacuum comes back
-- (up to a minute later; without end while another session holds a snapshot open). In the
-- long run of `cargo bench --bench postgres` a leader's answers read 3,600 pages a write in
-- the minute after such a plan was made; a held snapshot took one from 82 to 600 pages
-- a write in 1,100 cycles (tests/postgres/cost.rs). From this version the functions that
-- read that table plan without table scans: each of their statements has an index for what
-- it looks up (the primary key, the waiting requests of a workspace), and the functions
-- they call find their rows by index too.
ALTER FUNCTION {schema}.ask8(text, text) SET enable_seqscan = off;
ALTER FUNCTION {schema}.turn8(text, bigint, bigint, integer) SET enable_seqscan = off;
ALTER FUNCTION {schema}.commit8(text, bigint, bigint, bigint, bigint, text, text)
    SET enable_seqscan = off;
ALTER FUNCTION {schema}.wrote10(text, bigint, bigint, bigint, bigint) SET enable_seqscan = off;
