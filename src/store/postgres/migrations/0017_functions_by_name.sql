-- claimdag PostgreSQL store, schema version 17: the functions are named for what they do,
-- and a store holds only the ones this claimdag calls.
--
-- Up to version 16 each migration made new versions of the functions it changed, under
-- numbered names, and left the ones nothing called any more. From this version the
-- migrations change the tables only; the functions (schema/*.sql: their one current body
-- each) are made again, with CREATE OR REPLACE, by every open that brings a store to a
-- newer schema version. This migration drops every function, procedure, trigger and view
-- an older version made; the functions step that follows it makes the current ones.

DROP VIEW IF EXISTS {schema}.ws_now;
DROP TRIGGER IF EXISTS announce_write ON {schema}.store;
DROP TRIGGER IF EXISTS announce_ws ON {schema}.ws;
DROP TRIGGER IF EXISTS announce_settings ON {schema}.store;
DROP TRIGGER IF EXISTS announce_write ON {schema}.ws_writes;

DROP FUNCTION IF EXISTS {schema}.since(bigint);
DROP FUNCTION IF EXISTS {schema}.commit(bigint, text);
DROP FUNCTION IF EXISTS {schema}.commit2(bigint, bigint, text);
DROP FUNCTION IF EXISTS {schema}.commit3(bigint, bigint, bigint, text);
DROP FUNCTION IF EXISTS {schema}.commit4(bigint, bigint, bigint, text);
DROP FUNCTION IF EXISTS {schema}.integrity(bigint, jsonb);
DROP FUNCTION IF EXISTS {schema}.announce_write();
DROP FUNCTION IF EXISTS {schema}.announce7();
DROP FUNCTION IF EXISTS {schema}.history7(bigint, text);
DROP FUNCTION IF EXISTS {schema}.since7(text, bigint, bigint, boolean);
DROP FUNCTION IF EXISTS {schema}.lock7(text, bigint, bigint);
DROP FUNCTION IF EXISTS {schema}.integrity7(text, bigint, jsonb);
DROP FUNCTION IF EXISTS {schema}.write7(jsonb, bigint, bigint);
DROP FUNCTION IF EXISTS {schema}.commit7(text, bigint, bigint, bigint, bigint, text);
DROP FUNCTION IF EXISTS {schema}.version7();
DROP FUNCTION IF EXISTS {schema}.ask8(text, text);
DROP FUNCTION IF EXISTS {schema}.turn8(text, bigint, bigint, int);
DROP FUNCTION IF EXISTS {schema}.unlead8(text);
DROP FUNCTION IF EXISTS {schema}.commit8(text, bigint, bigint, bigint, bigint, text, text);
DROP FUNCTION IF EXISTS {schema}.wrote10(text, bigint, bigint, bigint, bigint);
DROP FUNCTION IF EXISTS {schema}.put11(jsonb, bigint[], bigint[]);
DROP FUNCTION IF EXISTS {schema}.turn13(text, bigint, bigint, int, boolean);
DROP FUNCTION IF EXISTS {schema}.lock13(text, bigint, bigint);
DROP FUNCTION IF EXISTS {schema}.commit13(text, bigint, bigint, bigint, bigint, text);
DROP PROCEDURE IF EXISTS {schema}.ask13(text, text, bigint, bigint, int, boolean, bigint,
                                        text, text, text, bigint, bigint, bigint, int,
                                        bigint, text, text);
DROP PROCEDURE IF EXISTS {schema}.lead13(text, bigint, bigint, bigint, bigint, text, text,
                                         boolean, boolean, bigint, bigint, bigint, bigint,
                                         text);
DROP FUNCTION IF EXISTS {schema}.keep16(text);
DROP FUNCTION IF EXISTS {schema}.ended16();
DROP FUNCTION IF EXISTS {schema}.archive16(bigint);
DROP FUNCTION IF EXISTS {schema}.live_after16(bigint, int);
DROP FUNCTION IF EXISTS {schema}.history16(bigint, text, boolean);
DROP FUNCTION IF EXISTS {schema}.history_from16(bigint, int, bigint);
