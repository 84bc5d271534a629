-- claimdag PostgreSQL store, schema version 1. `{schema}` is the store's schema (one store a
-- schema, so several stores share a database). Applied by the library on the first write,
-- in one transaction under an advisory lock; never by hand.

CREATE SCHEMA IF NOT EXISTS {schema};

-- The one row every write locks (FOR UPDATE): the store's lock. `seq` is the number of the
-- last committed write; it only grows. `next_pos` numbers nodes in creation order.
CREATE TABLE {schema}.store (
    id        int     PRIMARY KEY CHECK (id = 1),
    version   int     NOT NULL,
    seq       bigint  NOT NULL,
    next_pos  bigint  NOT NULL,
    settings  jsonb   NOT NULL
);
INSERT INTO {schema}.store (id, version, seq, next_pos, settings)
VALUES (1, 1, 0, 0, '{"default_ttl_ms": 900000, "max_held": 1, "max_attempts": null}');

-- A node a row, live or archived. The columns are for people and SQL; `body` holds every
-- field as claimdag writes a node, and is what the library reads back. `seq` is the write
-- that last changed the row: a client fetches only the rows past the last write it saw.
CREATE TABLE {schema}.nodes (
    id            text     PRIMARY KEY,
    pos           bigint   NOT NULL,
    seq           bigint   NOT NULL,
    workspace     text     NOT NULL,
    kind          text     NOT NULL,
    summary       text     NOT NULL,
    status        text     NOT NULL,
    generation    bigint   NOT NULL,
    holder        text,
    renewed_at    bigint,
    ttl_ms        bigint,
    archived      boolean  NOT NULL,
    archived_seq  bigint,
    created_at    bigint   NOT NULL,
    updated_at    bigint   NOT NULL,
    body          jsonb    NOT NULL
);
CREATE INDEX nodes_seq ON {schema}.nodes (seq);
CREATE INDEX nodes_live ON {schema}.nodes (pos) WHERE NOT archived;

-- An event a row: every transition, by write (`seq`) and place in it (`i`).
CREATE TABLE {schema}.history (
    seq         bigint  NOT NULL,
    i           int     NOT NULL,
    at          bigint  NOT NULL,
    verb        text    NOT NULL,
    node        text,
    actor       text,
    generation  bigint,
    detail      text,
    PRIMARY KEY (seq, i)
);
CREATE INDEX history_node ON {schema}.history (node, seq);

