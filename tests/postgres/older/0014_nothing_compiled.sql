-- claimdag PostgreSQL store, schema version 14: the server never compiles the store's
-- statements (JIT).
--
-- A session plans each statement of a function once, at its first call, with the settings
-- of that moment. The leader's commit (`commit8`) and the waits (`ask8`, `turn8`, `turn13`)
-- plan with sequential scans off (version 12), and the tamper checks (`integrity7`) read the
-- write counter, a sequence, which only a scan can read: planned first inside a leader's
-- commit, that read was costed past `jit_above_cost`, and the server compiled it again at
-- every later write of the session (about 9 ms each, on a 1 ms write). The statements of
-- these functions are small and run once a write: compiling them never pays, so they run
-- with JIT off, whoever calls them first.

ALTER FUNCTION {schema}.integrity7(text, bigint, jsonb) SET jit = off;
ALTER FUNCTION {schema}.ask8(text, text) SET jit = off;
ALTER FUNCTION {schema}.turn8(text, bigint, bigint, int) SET jit = off;
ALTER FUNCTION {schema}.turn13(text, bigint, bigint, int, boolean) SET jit = off;
ALTER FUNCTION {schema}.commit8(text, bigint, bigint, bigint, bigint, text, text) SET jit = off;
