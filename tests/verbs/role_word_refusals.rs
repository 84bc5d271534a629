//! A role that is not a role word (`[a-z0-9_-]`, at most 32 characters) is refused the same
//! way by every verb that takes `--role`: `upsert` and `claim-next` refuse it, so `next` and
//! `ready` must too, instead of answering for a role no node can have.

use crate::common::{actor, Store};

#[test]
fn every_verb_refuses_a_bad_role_word() {
    let s = Store::new();
    s.upsert("role-less work", &[]);
    s.refused(
        &["upsert", "--summary", "x", "--role", "Bad Role"],
        2,
        "role",
        "invalid_input",
    );
    s.refused(
        &["claim-next", "--assignee", &actor(1), "--role", "Bad Role"],
        2,
        "role",
        "invalid_input",
    );
    s.refused(&["next", "--role", "Bad Role"], 2, "role", "invalid_input");
    s.refused(&["ready", "--role", "Bad Role"], 2, "role", "invalid_input");
}
