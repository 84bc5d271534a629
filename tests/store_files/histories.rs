//! The history checker (tests/common/checker.rs): first on made-up histories with one
//! anomaly planted of each kind, then over a fleet of worker processes on one embedded store
//! under SIGKILL, SIGSTOP past the lease, and failing syncs (EIO through the fault point).
//! `CLAIMDAG_SOAK=1` (make soak): minutes instead of seconds.

use crate::common::checker::{check, parked_never_granted, Anomaly, Call, Event, Outcome};
use crate::common::fleet::{self, Plan};
use crate::common::{Rng, Store};
use std::collections::BTreeMap;
use std::time::Duration;

const N: &str = "0123456789abcdef0123456789abcdef";

fn ev(seq: u64, at: u64, verb: &str, actor: Option<&str>, generation: u64) -> Event {
    Event {
        seq,
        at,
        verb: verb.into(),
        node: N.into(),
        actor: actor.map(str::to_string),
        generation,
        detail: (verb == "complete").then(|| "done".to_string()),
    }
}

fn call(verb: &'static str, gen: u64, at: (u64, u64), outcome: Outcome) -> Call {
    Call {
        actor: "a".into(),
        verb,
        nodes: vec![(N.into(), gen)],
        status: (verb == "complete").then(|| "done".to_string()),
        ttl_ms: 1000,
        invoked: at.0,
        returned: at.1,
        outcome,
    }
}

/// A clean history: create, claim at 2 (acknowledged), renew, complete.
fn clean() -> (Vec<Call>, Vec<Event>, BTreeMap<String, u64>) {
    let calls = vec![
        call("claim-next", 2, (100, 110), Outcome::Ok),
        call("renew", 2, (500, 510), Outcome::Ok),
        call("complete", 2, (900, 910), Outcome::Ok),
    ];
    let history = vec![
        ev(1, 50, "create", None, 1),
        ev(2, 105, "claim", Some("a"), 2),
        ev(3, 505, "renew", Some("a"), 2),
        ev(4, 905, "complete", Some("a"), 2),
    ];
    (calls, history, BTreeMap::from([(N.to_string(), 2)]))
}

fn kinds(found: &[Anomaly]) -> Vec<&'static str> {
    found
        .iter()
        .map(|a| match a {
            Anomaly::GrantedTwice { .. } => "granted twice",
            Anomaly::GenerationJump { .. } => "generation jump",
            Anomaly::AcknowledgedMissing { .. } => "acknowledged missing",
            Anomaly::Unexplained { refused: true, .. } => "refused left a trace",
            Anomaly::Unexplained { .. } => "unexplained",
            Anomaly::AcceptedAfterLease { .. } => "accepted after its lease",
            Anomaly::CompletedTwice { .. } => "completed twice",
            Anomaly::FinalStateBehind { .. } => "final state behind",
            Anomaly::ParkedGranted { .. } => "parked granted",
        })
        .collect()
}

#[test]
fn the_checker_finds_each_planted_anomaly() {
    let (calls, history, finals) = clean();
    assert_eq!(
        check(&calls, &history, &finals),
        vec![],
        "the clean history"
    );

    // A second claim event at generation 2 (after a hand-back that did not move it).
    let (c, mut h, f) = clean();
    h.insert(3, ev(3, 300, "expire", Some("a"), 3));
    h.insert(4, ev(4, 320, "claim", Some("a"), 2));
    let found = kinds(&check(&c, &h, &f));
    assert!(found.contains(&"granted twice"), "{found:?}");
    assert!(found.contains(&"generation jump"), "{found:?}");

    // An acknowledged renew whose event is missing.
    let (c, mut h, f) = clean();
    h.remove(2);
    assert_eq!(kinds(&check(&c, &h, &f)), ["acknowledged missing"]);

    // A refused release that left its event.
    let (mut c, mut h, f) = clean();
    c.insert(
        1,
        call(
            "release",
            2,
            (300, 310),
            Outcome::Refused("stale_generation".into()),
        ),
    );
    h.insert(2, ev(3, 305, "release", Some("a"), 3));
    let found = kinds(&check(&c, &h, &f));
    assert!(found.contains(&"refused left a trace"), "{found:?}");

    // A claim event no call explains.
    let (c, mut h, f) = clean();
    h.push(ev(5, 950, "reopen", None, 3));
    h.push(ev(6, 960, "claim", Some("a"), 4));
    assert_eq!(kinds(&check(&c, &h, &f)), ["unexplained"]);

    // A complete accepted 2 s after the lease (granted at 110 for 1 s) had run out.
    let (mut c, mut h, f) = clean();
    c.remove(1);
    h.remove(2);
    c[1].invoked = 3110;
    c[1].returned = 3120;
    h[2].at = 3115;
    assert_eq!(kinds(&check(&c, &h, &f)), ["accepted after its lease"]);

    // Completed twice with no reopen between.
    let (c, mut h, f) = clean();
    h.push(ev(5, 990, "complete", None, 2));
    assert_eq!(kinds(&check(&c, &h, &f)), ["completed twice"]);

    // An approval acknowledged at generation 1 that landed at another generation (a stale
    // page's decision): its event is not the one the call asked for.
    let approve = |history: Vec<Event>, last: u64| {
        let c = vec![call("approve", 1, (100, 110), Outcome::Ok)];
        kinds(&check(
            &c,
            &history,
            &BTreeMap::from([(N.to_string(), last)]),
        ))
    };
    let decided = vec![ev(1, 50, "create", None, 1), ev(2, 105, "approve", None, 1)];
    assert_eq!(approve(decided, 1), Vec::<&str>::new());
    let stale = vec![
        ev(1, 50, "create", None, 1),
        ev(2, 60, "reopen", None, 2),
        ev(3, 105, "approve", None, 2),
    ];
    assert_eq!(approve(stale, 2), ["acknowledged missing"]);
    // A gate decided twice with no reopen between.
    let (c, mut h, f) = clean();
    h.push(ev(5, 990, "approve", None, 2));
    assert_eq!(kinds(&check(&c, &h, &f)), ["completed twice"]);
    // A container opened again by a child moves its generation; one that does not jumps.
    let (c, mut h, f) = clean();
    let mut settle = ev(5, 995, "settle", None, 3);
    settle.detail = Some("todo".into());
    h.push(settle.clone());
    assert_eq!(kinds(&check(&c, &h, &f)), Vec::<&str>::new());
    h.last_mut().unwrap().generation = 4;
    assert_eq!(kinds(&check(&c, &h, &f)), ["generation jump"]);

    // With a cap of 1 attempt: a second grant before a retry is a parked node granted; a
    // retry gives fresh attempts.
    let h = vec![
        ev(1, 50, "create", None, 1),
        ev(2, 60, "claim", Some("a"), 2),
        ev(3, 70, "release", Some("a"), 3),
        ev(4, 80, "claim", Some("b"), 4),
    ];
    assert_eq!(kinds(&parked_never_granted(&h, 1)), ["parked granted"]);
    let mut retried = h.clone();
    retried.insert(3, ev(4, 75, "retry", None, 4));
    assert_eq!(
        kinds(&parked_never_granted(&retried, 1)),
        Vec::<&str>::new()
    );

    // The final state shows a generation below an acknowledged grant.
    let (c, h, _) = clean();
    let behind = BTreeMap::from([(N.to_string(), 1)]);
    assert_eq!(kinds(&check(&c, &h, &behind)), ["final state behind"]);
}

fn soak() -> bool {
    std::env::var_os("CLAIMDAG_SOAK").is_some()
}

#[test]
fn a_fleet_under_kills_stops_and_failing_syncs_leaves_a_clean_history() {
    let s = Store::new();
    let plan = Plan {
        dir: s.dir.to_str().expect("utf-8").to_string(),
        workers: 4,
        nodes: 16,
        run_for: Duration::from_secs(if soak() { 240 } else { 12 }),
        ttl_ms: 800,
        fault_env: Some(("CLAIMDAG_SYNC_FAIL_AFTER", "0", 5)),
        seed: Rng::from_env("fleet (embedded)").next(),
    };
    fleet::run_and_check(&plan, &|_| {}, "fleet (embedded)");
}
