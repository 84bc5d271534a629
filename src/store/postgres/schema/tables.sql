-- The tables of a claimdag PostgreSQL store, as a new store is made. `{schema}` is the
-- store's schema (one store a schema, so several stores share a database). Applied by the
-- library in one transaction under an advisory lock, followed by the functions
-- (catchup.sql, commit.sql, combine.sql, history.sql, notify.sql); never by hand. A store
-- made by an older claimdag reaches the same tables through the migrations.

CREATE SCHEMA IF NOT EXISTS {schema};

-- One row: the schema version, the settings and their version. A settings change locks it
-- (and every workspace's row). `seq`, `next_pos` and `last_now` are no longer written.
CREATE TABLE {schema}.store (
    id                int     PRIMARY KEY CHECK (id = 1),
    version           int     NOT NULL,
    seq               bigint  NOT NULL,
    next_pos          bigint  NOT NULL,
    settings          jsonb   NOT NULL,
    last_now          bigint  NOT NULL DEFAULT 0,
    settings_version  bigint  NOT NULL DEFAULT 0
);
INSERT INTO {schema}.store (id, version, seq, next_pos, settings)
VALUES (1, 0, 0, 0, '{"default_ttl_ms": 900000, "max_held": 1, "max_attempts": null}');

-- A node a row, live or archived. The columns are for people and SQL; `body` holds every
-- field as claimdag writes a node, and is what the library reads back. `seq` is the write
-- number that last changed the row, `wseq` the write of its workspace. A node has one row,
-- found as the newest of its id in `nodes_id`.
CREATE TABLE {schema}.nodes (
    id            text     NOT NULL,
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
    body          jsonb    NOT NULL,
    wseq          bigint   NOT NULL
) WITH (fillfactor = 80, autovacuum_vacuum_scale_factor = 0.05,
        autovacuum_vacuum_cost_delay = 0);
CREATE INDEX nodes_live ON {schema}.nodes (pos) WHERE NOT archived;
CREATE INDEX nodes_ws ON {schema}.nodes (workspace, wseq);
CREATE UNIQUE INDEX nodes_id ON {schema}.nodes (id, seq);

-- An event a row: every transition, by write number (`seq`) and place in it (`i`).
CREATE TABLE {schema}.history (
    seq         bigint  NOT NULL,
    i           int     NOT NULL,
    at          bigint  NOT NULL,
    verb        text    NOT NULL,
    node        text,
    actor       text,
    generation  bigint,
    detail      text,
    output      text,
    by_actor    text,
    door        text,
    PRIMARY KEY (seq, i)
) WITH (autovacuum_vacuum_insert_scale_factor = 0.01,
        autovacuum_vacuum_insert_threshold = 10000, autovacuum_vacuum_scale_factor = 0.01,
        autovacuum_vacuum_threshold = 10000);
CREATE INDEX history_node ON {schema}.history (node, seq);

-- A row per workspace: its lock (a write holds it, FOR NO KEY UPDATE, to its commit).
CREATE TABLE {schema}.ws (
    name  text  PRIMARY KEY
);

-- Write numbers (one a write, taken under its workspace's lock) and creation numbers.
CREATE SEQUENCE {schema}.writes MINVALUE 0 START 1;
CREATE SEQUENCE {schema}.node_pos MINVALUE 0 START 0;

-- Requests left for a workspace's leader (combined writes); unlogged: a request matters
-- only while its session waits.
CREATE UNLOGGED TABLE {schema}.asks (
    id      bigserial  PRIMARY KEY,
    ws      text       NOT NULL,
    pid     int        NOT NULL DEFAULT pg_backend_pid(),
    at      timestamptz NOT NULL DEFAULT clock_timestamp(),
    body    text       NOT NULL,
    answer  text
) WITH (autovacuum_vacuum_cost_delay = 0);
CREATE INDEX asks_waiting ON {schema}.asks (ws, id) WHERE answer IS NULL;

-- A row a write (a combined write: one for all its writes): the workspace's write count,
-- its clock, and the first request its next leader looks at. Only gains rows; the newest
-- of a workspace is its state; rows older than its last 4,096 to 8,192 writes are deleted.
CREATE TABLE {schema}.ws_writes (
    name       text    NOT NULL,
    wseq       bigint  NOT NULL,
    last_now   bigint  NOT NULL,
    asks_from  bigint  NOT NULL DEFAULT 0,
    PRIMARY KEY (name, wseq)
);

-- History lines moved out of `history` by `history_keep` (same columns, same keys).
CREATE TABLE {schema}.history_archive (
    seq         bigint  NOT NULL,
    i           int     NOT NULL,
    at          bigint  NOT NULL,
    verb        text    NOT NULL,
    node        text,
    actor       text,
    generation  bigint,
    detail      text,
    output      text,
    by_actor    text,
    door        text,
    PRIMARY KEY (seq, i)
) WITH (autovacuum_vacuum_insert_scale_factor = 0.01,
        autovacuum_vacuum_insert_threshold = 10000);
CREATE INDEX history_archive_node ON {schema}.history_archive (node, seq);

-- Where the retention stands (one row): the last pass (its time by the store's clock, the
-- write number and the settings' version then), the lines counted so far (those up to
-- (`counted_seq`, `counted_i`) that are still live: `live`), and the last line moved.
CREATE TABLE {schema}.history_kept (
    id                int     PRIMARY KEY CHECK (id = 1),
    passed_at         bigint  NOT NULL,
    passed_seq        bigint  NOT NULL,
    settings_version  bigint  NOT NULL,
    counted_seq       bigint  NOT NULL,
    counted_i         int     NOT NULL,
    live              bigint  NOT NULL,
    moved_seq         bigint  NOT NULL,
    moved_i           int     NOT NULL
);
INSERT INTO {schema}.history_kept VALUES (1, 0, 0, -1, 0, -1, 0, 0, -1);

-- The names kept for actors, in the order first kept (`pos`): a row is only ever added, or
-- its note replaced.
CREATE TABLE {schema}.actors (
    id        text    PRIMARY KEY,
    name      text    NOT NULL,
    note      text,
    added_at  bigint  NOT NULL,
    pos       bigint  GENERATED ALWAYS AS IDENTITY
);

-- The actors' tokens, in the order made (`pos`): the SHA-256 of each secret, never the
-- secret. A row is added, and later marked revoked; never removed.
CREATE TABLE {schema}.tokens (
    id          text    PRIMARY KEY,
    actor       text    NOT NULL,
    name        text    NOT NULL,
    workspace   text    NOT NULL,
    profile     text    NOT NULL,
    created_at  bigint  NOT NULL,
    expires_at  bigint,
    revoked_at  bigint,
    hash        text    NOT NULL,
    pos         bigint  GENERATED ALWAYS AS IDENTITY
);
