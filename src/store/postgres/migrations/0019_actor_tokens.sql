-- claimdag PostgreSQL store, schema version 19: the actors' tokens (docs/reference.md,
-- "Credentials"): who a token acts as, in which workspace, within which profile, until
-- when; the SHA-256 of its secret, never the secret. A row is added, and later marked
-- revoked; never removed.

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
