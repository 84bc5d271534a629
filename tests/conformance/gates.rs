//! The scenarios of gates (SPEC 13, "What people decide"), on every backend: a gate is
//! never offered or claimed, waits for its prerequisites, and is resolved once, fenced by
//! its generation; its dependents go on when it is approved and are blocked when rejected.

use crate::scenarios::{actor, refused, with};
use claimdag::{ClaimNextOptions, Code, DisplayWord, Status, Store, Upsert};

fn gate(s: &Store, summary: &str) -> claimdag::Id {
    with(
        s,
        Upsert {
            kind: Some("gate".into()),
            summary: summary.into(),
            ..Upsert::default()
        },
    )
}

fn task(s: &Store, summary: &str) -> claimdag::Id {
    with(
        s,
        Upsert {
            summary: summary.into(),
            ..Upsert::default()
        },
    )
}

pub fn a_gate_is_never_claimed_and_is_decided_once_at_its_generation(s: &Store) {
    let build = task(s, "build");
    let review = gate(s, "review");
    let deploy = task(s, "deploy");
    s.link(build, review, false).unwrap();
    s.link(review, deploy, false).unwrap();
    // Waiting on its prerequisite: not ready to decide.
    refused(s, Code::NotReady, || {
        s.decide_gate(review, 1, true, None, None)
    });
    let g = s.claim(build, actor(1), None, None).unwrap();
    s.complete(build, Status::Done, g, Some(actor(1)), None)
        .unwrap();
    assert_eq!(s.get(review).unwrap().display, DisplayWord::Ready);
    // Ready for a person, never for a worker.
    refused(s, Code::NotReady, || s.claim(review, actor(2), None, None));
    let none = s
        .claim_next_with("", actor(2), ClaimNextOptions::default())
        .unwrap();
    assert!(none.is_empty(), "a gate was offered: {none:?}");
    // A decision at another generation is stale; two at the same one: the first lands.
    refused(s, Code::StaleGeneration, || {
        s.decide_gate(review, 2, true, None, None)
    });
    assert_eq!(
        s.decide_gate(review, 1, true, Some(actor(9)), Some("fine"))
            .unwrap(),
        Status::Done
    );
    refused(s, Code::Terminal, || {
        s.decide_gate(review, 1, false, Some(actor(8)), None)
    });
    let shown = s.get(review).unwrap().node;
    assert_eq!(
        (shown.completed_by, shown.note.as_deref()),
        (Some(actor(9)), Some("fine"))
    );
    assert_eq!(s.get(deploy).unwrap().display, DisplayWord::Ready);
    // Reopened and rejected: the dependent is blocked; a page from before is stale.
    let g2 = s.reopen(review, None).unwrap();
    refused(s, Code::StaleGeneration, || {
        s.decide_gate(review, 1, true, None, None)
    });
    assert_eq!(
        s.decide_gate(review, g2, false, None, None).unwrap(),
        Status::Failed
    );
    assert_eq!(s.get(deploy).unwrap().display, DisplayWord::Blocked);
    // Only a gate is decided.
    refused(s, Code::InvalidInput, || {
        s.decide_gate(deploy, 1, true, None, None)
    });
}

pub fn racing_approvers_land_one_decision(s: &Store) {
    let review = gate(s, "review the race");
    let decided: Vec<bool> = std::thread::scope(|sc| {
        let hands: Vec<_> = (0..6u8)
            .map(|i| {
                sc.spawn(move || s.decide_gate(review, 1, i % 2 == 0, Some(actor(i + 1)), None))
            })
            .collect();
        hands
            .into_iter()
            .map(|h| h.join().unwrap().is_ok())
            .collect()
    });
    assert_eq!(decided.iter().filter(|ok| **ok).count(), 1, "{decided:?}");
    let verbs: Vec<String> = s
        .history(Some(review))
        .unwrap()
        .into_iter()
        .map(|l| l.event.verb)
        .filter(|v| v == "approve" || v == "reject")
        .collect();
    assert_eq!(verbs.len(), 1, "{verbs:?}");
}

pub fn a_parked_node_is_never_granted_until_retried(s: &Store) {
    s.set_setting("max_attempts", "1").unwrap();
    let n = task(s, "flaky");
    let g = s.claim(n, actor(1), None, None).unwrap();
    let g = s.release(n, actor(1), g).unwrap();
    assert_eq!(s.get(n).unwrap().display, DisplayWord::Parked);
    refused(s, Code::AttemptsExhausted, || {
        s.claim(n, actor(2), None, None)
    });
    let none = s
        .claim_next_with("", actor(2), ClaimNextOptions::default())
        .unwrap();
    assert!(none.is_empty(), "a parked node was offered: {none:?}");
    refused(s, Code::StaleGeneration, || s.retry(n, g - 1));
    let g2 = s.retry(n, g).unwrap();
    assert_eq!(g2, g + 1);
    assert_eq!(s.get(n).unwrap().display, DisplayWord::Ready);
    refused(s, Code::InvalidInput, || s.retry(n, g2));
    assert_eq!(s.claim(n, actor(2), None, None).unwrap(), g2 + 1);
    // `check` counts the retry's move of the generation.
    let report = s.check().unwrap();
    assert!(report.problems.is_empty(), "{:?}", report.problems);
}
