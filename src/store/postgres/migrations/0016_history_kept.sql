-- claimdag PostgreSQL store, schema version 16: the history kept live is what the setting
-- `history_keep` says, and every read of the history costs the lines it returns.
--
--   * `history_archive` holds the lines moved out of `history` (same columns, same keys).
--     `log` and `log NODE` read `history`; `log --all`, a reader that starts before the
--     live history (`watch --since 0`, serve's streams), `check` and `copy` read both.
--   * A write made while `history_keep` is set ends (after its COMMIT, in the same round
--     trip) with `archive16`, which does nothing unless a pass is due: 1,024 writes or
--     10 seconds of the store's clock since the last pass, or the settings changed. A pass
--     moves at most 4,096 of the oldest lines, in one transaction (DELETE ... RETURNING into
--     INSERT): a crash leaves each line in one table or the other, never both, never none.
--     It holds no lock a writer or a reader takes; one pass runs at a time.
--   * A pass moves only lines it has counted, and counts only lines of writes that have
--     ended (`ended16`), so the count it keeps of the live lines is exact: with a count of
--     events, at least that many last lines stay live.
--   * The reads (`history16`, `history_from16`) have a statement for each case, each
--     planned for its index: one node's lines by `history_node`, the lines after a place
--     by the primary key, up to a limit, in the archive and the live table together; a
--     read of the live lines starts past the last line moved.

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
    PRIMARY KEY (seq, i)
);
CREATE INDEX history_archive_node ON {schema}.history_archive (node, seq);
-- Both tables are vacuumed as their lines come and go: the archive gains lines only, and
-- `history` loses its oldest ones, whose index entries a scan from the start would
-- otherwise step over until the next vacuum.
ALTER TABLE {schema}.history_archive SET (autovacuum_vacuum_insert_scale_factor = 0.01,
                                          autovacuum_vacuum_insert_threshold = 10000);
ALTER TABLE {schema}.history SET (autovacuum_vacuum_scale_factor = 0.01,
                                  autovacuum_vacuum_threshold = 10000);

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

