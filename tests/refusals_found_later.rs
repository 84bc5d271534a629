//! Refusals found after the verbs landed: each is answered at once with its code and
//! changes nothing (the runner kills a command that hangs, so a hang fails the test).

mod common;
mod plan_common;

use plan_common::T;

#[test]
fn unarchive_of_a_live_or_unknown_node_is_refused_at_once() {
    let s = T::new();
    let live = s.upsert("still live", &[]);
    s.refused(&["unarchive", &live], 2, "not archived", "invalid_input");
    let unknown = format!("{:032x}", 5);
    s.refused(&["unarchive", &unknown], 3, "not found", "not_found");
}

#[test]
fn next_and_ready_refuse_a_bad_role_like_claim_next() {
    let s = T::new();
    s.upsert("role-less work", &[]);
    for verb in ["next", "ready"] {
        s.refused(&[verb, "--role", "Bad Role"], 2, "role", "invalid_input");
    }
    let me = format!("{:032x}", 7);
    s.refused(
        &["claim-next", "--assignee", &me, "--role", "Bad Role"],
        2,
        "role",
        "invalid_input",
    );
}

#[test]
fn a_held_claim_cannot_grow_into_another_claims_resources() {
    let s = T::new();
    let a = s.upsert("refactor src", &["--resource", "src/"]);
    let b = s.upsert("write docs", &["--resource", "docs/"]);
    s.claim(&a, &format!("{:032x}", 1), &[]);
    s.claim(&b, &format!("{:032x}", 2), &[]);
    s.refused(
        &[
            "upsert",
            "--summary",
            "write docs",
            "--resource",
            "src/x.rs",
        ],
        4,
        "resource",
        "resource_conflict",
    );
    // Growing within what no other claim holds is an ordinary merge.
    s.ok(&[
        "upsert",
        "--summary",
        "write docs",
        "--resource",
        "docs/api/",
    ]);
    assert_eq!(s.node(&b)["resources"][0], "docs/api/");
}
