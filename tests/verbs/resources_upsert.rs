//! A held claim's resources: growing them into another live claim's is refused, so live
//! claims never overlap (the runner kills a command that hangs, so a hang fails the test).

use crate::common::Store;

#[test]
fn a_held_claim_cannot_grow_into_another_claims_resources() {
    let s = Store::new();
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
