-- claimdag PostgreSQL store, schema version 18: the names kept for actors
-- (docs/reference.md, "Actor names"), in the order first kept (`pos`). A name never changes
-- meaning (an actor's id is its name's), so a row is only ever added, or its note replaced.

CREATE TABLE {schema}.actors (
    id        text    PRIMARY KEY,
    name      text    NOT NULL,
    note      text,
    added_at  bigint  NOT NULL,
    pos       bigint  GENERATED ALWAYS AS IDENTITY
);
