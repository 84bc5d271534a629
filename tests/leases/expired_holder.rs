//! SPEC section 3: "An expired holder is no longer the holder: its renew, release and
//! complete are refused (`stale_generation` once the claim was handed back), even if nobody
//! else claimed meanwhile." A worker that renews without naming a generation gets the same
//! answer whether or not some other write handed its claim back first.

use crate::common::{actor, Store};
use std::time::Duration;

/// A node claimed by `me` with a lease of 200 ms that has run out.
fn expired_claim(me: &str) -> (Store, String) {
    let s = Store::new();
    let a = s.upsert("parse the manifest header", &[]);
    assert_eq!(s.claim(&a, me, &["--ttl", "200ms"]), 2);
    std::thread::sleep(Duration::from_millis(450));
    (s, a)
}

#[test]
fn renew_without_a_generation_is_stale_before_the_hand_back_is_written() {
    let me = actor(7);
    let (s, a) = expired_claim(&me);
    s.refused(
        &["renew", &a, "--actor", &me],
        5,
        "stale generation",
        "stale_generation",
    );
}

#[test]
fn renew_without_a_generation_is_stale_after_a_reclaim() {
    let me = actor(7);
    let (s, a) = expired_claim(&me);
    s.ok(&["reclaim"]);
    assert_eq!(s.node(&a)["generation"], 3);
    s.refused(
        &["renew", &a, "--actor", &me],
        5,
        "stale generation",
        "stale_generation",
    );
}

#[test]
fn renew_without_a_generation_is_stale_after_an_unrelated_write() {
    let me = actor(7);
    let (s, a) = expired_claim(&me);
    // Any write hands expired claims back first.
    s.upsert("an unrelated node", &[]);
    assert_eq!(s.node(&a)["generation"], 3);
    s.refused(
        &["renew", &a, "--actor", &me],
        5,
        "stale generation",
        "stale_generation",
    );
}
