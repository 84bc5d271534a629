//! A claim whose lease ran out shows as `expired` at its generation G until some write hands
//! it back. A reader that saw it so claims it by naming G: the write hands the claim back
//! (G + 1) and grants the new one (G + 2), in that order in the history. Every other refusal
//! stays: an older generation, one the node moved past, resources, the actor's limit and
//! the attempt cap.

use crate::common::{actor, parse_gen, Store};
use std::time::{Duration, Instant};

/// Waits (at most 20 s) until `id` shows as expired; nothing is written meanwhile.
fn wait_expired(s: &Store, id: &str) {
    let t = Instant::now();
    while s.display(id) != "expired" {
        assert!(t.elapsed() < Duration::from_secs(20), "{id} never expired");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A node claimed by actor 1 at generation 2 with a lease that has run out.
fn expired(s: &Store, summary: &str, extra: &[&str]) -> String {
    let a = s.upsert(summary, extra);
    assert_eq!(s.claim(&a, &actor(1), &["--ttl", "300ms"]), 2);
    wait_expired(s, &a);
    assert_eq!(
        s.node(&a)["generation"],
        2,
        "nothing wrote the hand-back yet"
    );
    a
}

#[test]
fn an_expired_claim_is_claimed_at_the_generation_the_reader_saw() {
    let s = Store::new();
    let a = expired(&s, "parse the manifest header", &[]);
    let me = actor(2);
    let out = s.ok(&["claim", &a, "--assignee", &me, "--gen", "2"]);
    assert_eq!(parse_gen(&out), 4, "{out}");
    let n = s.node(&a);
    assert_eq!(
        (&n["status"], &n["holder"], &n["generation"], &n["attempts"]),
        (&"claimed".into(), &me.as_str().into(), &4.into(), &2.into()),
        "{n}"
    );
    // The hand-back, then the grant, both in this one write.
    let log = s.json(&["log", &a]);
    let steps: Vec<(String, u64)> = log
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["verb"].as_str().unwrap().to_string(),
                e["generation"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        steps,
        vec![
            ("create".to_string(), 1),
            ("claim".to_string(), 2),
            ("expire".to_string(), 3),
            ("claim".to_string(), 4)
        ],
        "{log}"
    );
    // JSON says the new generation too.
    let b = expired(&s, "another one", &[]);
    let j = s.json(&["claim", &b, "--assignee", &actor(3), "--gen", "2"]);
    assert_eq!(j["generation"], 4, "{j}");
}

#[test]
fn every_other_refusal_of_a_claim_on_an_expired_node_stays() {
    let s = Store::new();
    let me = actor(2);
    let a = expired(&s, "an expired claim", &[]);
    // A generation older than the expired claim's.
    s.refused(
        &["claim", &a, "--assignee", &me, "--gen", "1"],
        5,
        "stale generation",
        "stale_generation",
    );
    // Once a write handed the claim back, the node is at 3: the reader looks again.
    s.ok(&["reclaim"]);
    assert_eq!(s.node(&a)["generation"], 3);
    s.refused(
        &["claim", &a, "--assignee", &me, "--gen", "2"],
        5,
        "stale generation",
        "stale_generation",
    );
    // The actor already holds its limit (max_held 1): refused, the hand-back not written.
    let held = s.upsert("held by me", &[]);
    s.claim(&held, &me, &[]);
    let c = expired(&s, "a third", &[]);
    let e = s.refused(
        &["claim", &c, "--assignee", &me, "--gen", "2"],
        4,
        "already holds",
        "assignee_busy",
    );
    assert!(e.to_string().contains(&held), "{e}");
    assert_eq!(s.node(&c)["generation"], 2);
    // The attempt cap counts the expired claim.
    let d = expired(&s, "one attempt only", &["--max-attempts", "1"]);
    s.refused(
        &["claim", &d, "--assignee", &actor(6), "--gen", "2"],
        4,
        "attempts exhausted",
        "attempts_exhausted",
    );
    // The expired holder's own generation still does nothing but fail.
    let f = expired(&s, "the holder wakes up", &[]);
    let old = actor(1);
    for args in [
        vec!["renew", f.as_str(), "--actor", &old, "--gen", "2"],
        vec!["release", f.as_str(), "--actor", &old, "--gen", "2"],
        vec!["complete", f.as_str(), "--status", "done", "--gen", "2"],
    ] {
        s.refused(&args, 5, "stale generation", "stale_generation");
    }
}
