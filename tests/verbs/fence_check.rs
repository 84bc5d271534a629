//! `fence-check NODE GEN`: exit 0 with `gen=G` while G is the node's live claim; otherwise
//! 5 (`stale_generation`, with the node's generation), and the store is as it was.

use crate::common::{actor, Store};
use std::time::{Duration, Instant};

#[test]
fn the_live_claim_passes_and_its_json_names_node_and_generation() {
    let s = Store::new();
    let a = s.upsert("parse the manifest header", &[]);
    assert_eq!(s.claim(&a, &actor(1), &[]), 2);
    let before = s.files();
    assert_eq!(s.ok(&["fence-check", &a[..8], "2"]), "gen=2\n");
    let v = s.json(&["fence-check", &a, "2"]);
    assert_eq!(
        (&v["id"], &v["generation"]),
        (&a.as_str().into(), &2.into()),
        "{v}"
    );
    assert_eq!(s.files(), before, "a fence check writes nothing");
}

#[test]
fn another_generation_a_hand_back_and_a_finish_are_refused_stale() {
    let s = Store::new();
    let a = s.upsert("parse the manifest header", &[]);
    assert_eq!(s.claim(&a, &actor(1), &[]), 2);
    let e = s.refused(
        &["fence-check", &a, "1"],
        5,
        "given gen=1, current gen=2",
        "stale_generation",
    );
    assert_eq!(e["generation"], 2, "{e}");
    s.ok(&["release", &a, "--actor", &actor(1), "--gen", "2"]);
    s.refused(
        &["fence-check", &a, "2"],
        5,
        "current gen=3",
        "stale_generation",
    );
    assert_eq!(s.claim(&a, &actor(2), &[]), 4);
    s.ok(&["complete", &a, "--status", "done", "--gen", "4"]);
    s.refused(
        &["fence-check", &a, "4"],
        5,
        "stale generation",
        "stale_generation",
    );
}

#[test]
fn a_claim_whose_lease_ran_out_is_refused_before_anyone_hands_it_back() {
    let s = Store::new();
    let a = s.upsert("parse the manifest header", &[]);
    assert_eq!(s.claim(&a, &actor(1), &["--ttl", "300ms"]), 2);
    let t = Instant::now();
    while s.display(&a) != "expired" {
        assert!(t.elapsed() < Duration::from_secs(20), "{a} never expired");
        std::thread::sleep(Duration::from_millis(50));
    }
    s.refused(
        &["fence-check", &a, "2"],
        5,
        "given gen=2, current gen=2",
        "stale_generation",
    );
}

#[test]
fn bad_input_names_what_was_wrong() {
    let s = Store::new();
    let a = s.upsert("parse the manifest header", &[]);
    s.refused(
        &["fence-check", "00000000", "2"],
        3,
        "00000000",
        "not_found",
    );
    let r = s.run(&["fence-check", &a, "two"]);
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(r.stderr.contains("<GEN>"), "{}", r.stderr);
}
