//! The scenarios of a holder and the rest talking (SPEC section 11): checkpoints, cancel
//! requests, outputs handed to dependents, and several completions in one write.

use crate::scenarios::{actor, node, refused, with};
use claimdag::rules::Finish;
use claimdag::{ClaimNextOptions, Code, Status, Store, Upsert};
use serde_json::json;
use std::time::{Duration, Instant};

/// A `claim-next --count n`.
fn count(n: u32) -> ClaimNextOptions<'static> {
    ClaimNextOptions {
        count: Some(n),
        ..ClaimNextOptions::default()
    }
}

/// Waits (at most 10 s) until `f` holds.
fn eventually(what: &str, mut f: impl FnMut() -> bool) {
    let end = Instant::now() + Duration::from_secs(10);
    while !f() {
        assert!(Instant::now() < end, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The verbs of a node's history, in order.
pub fn verbs_of(s: &Store, id: claimdag::Id) -> Vec<String> {
    s.history(Some(id))
        .unwrap()
        .into_iter()
        .map(|h| h.event.verb)
        .collect()
}

pub fn a_checkpoint_survives_hand_backs_and_reaches_the_next_holder(s: &Store) {
    let a = node(s, "port the parser");
    // The first holder leaves a checkpoint, then stalls: its short lease runs out.
    let g = s.claim(a, actor(1), None, Some(300)).unwrap();
    assert_eq!(
        s.renew_with(a, actor(1), Some(g), None, Some("3 of 7 files")),
        Ok(None)
    );
    let events = verbs_of(s, a);
    assert_eq!(
        events,
        ["create", "claim", "renew"],
        "a checkpoint is no event of its own"
    );
    std::thread::sleep(Duration::from_millis(350));
    let next = s
        .claim_next_with("", actor(2), ClaimNextOptions::default())
        .unwrap()
        .pop()
        .expect("the handed-back node is ready");
    assert_eq!((next.id, next.generation), (a, g + 2));
    assert_eq!(next.progress.as_deref(), Some("3 of 7 files"));
    assert!(next.progress_at.is_some());
    // It survives a release and a reclaim too, and the next claim still hands it over.
    s.release(a, actor(2), next.generation).unwrap();
    let g = s.claim(a, actor(3), None, None).unwrap();
    s.reclaim("", Some(0)).unwrap();
    let again = s.claim_grant(a, actor(4), Some(g + 1), None).unwrap();
    assert_eq!(again.progress.as_deref(), Some("3 of 7 files"));
    // A newer checkpoint replaces it; a reopen clears it.
    s.renew_with(a, actor(4), Some(again.generation), None, Some("5 of 7"))
        .unwrap();
    assert_eq!(s.get(a).unwrap().node.progress.as_deref(), Some("5 of 7"));
    s.complete(a, Status::Done, again.generation, None, None)
        .unwrap();
    assert_eq!(s.get(a).unwrap().node.progress.as_deref(), Some("5 of 7"));
    s.reopen(a, None).unwrap();
    let v = s.get(a).unwrap();
    assert_eq!((v.node.progress, v.node.progress_at), (None, None));
}

pub fn a_cancel_request_reaches_the_holder_and_moves_no_generation(s: &Store) {
    let a = node(s, "rewrite the scheduler");
    let lead = actor(9);
    let g = s.claim(a, actor(1), None, None).unwrap();
    assert_eq!(s.renew(a, actor(1), Some(g), None), Ok(None));
    let asked = s.cancel(a, Some(lead), Some("wrong approach"), Some(g));
    assert_eq!(asked, Ok(true));
    let v = s.get(a).unwrap();
    assert_eq!((v.node.status, v.node.generation), (Status::Claimed, g));
    let c = v.node.cancel_requested.clone().expect("a cancel request");
    assert_eq!(
        (c.by, c.reason.as_deref()),
        (Some(lead), Some("wrong approach"))
    );
    // The holder learns it at its next renew, and ends the node cancelled.
    let got = s.renew(a, actor(1), Some(g), None).unwrap();
    assert_eq!(got, Some(c));
    s.complete(a, Status::Cancelled, g, Some(actor(1)), None)
        .unwrap();
    let v = s.get(a).unwrap();
    assert_eq!(
        (v.node.status, v.node.cancel_requested),
        (Status::Cancelled, None)
    );
    assert_eq!(v.node.generation, g);
    refused(s, Code::Terminal, || s.cancel(a, Some(lead), None, None));
    // A todo node is cancelled at once, at its generation.
    let b = node(s, "b");
    refused(s, Code::StaleGeneration, || {
        s.cancel(b, None, None, Some(2))
    });
    let long = "x".repeat(4097);
    refused(s, Code::InvalidInput, || {
        s.cancel(b, None, Some(&long), None)
    });
    assert_eq!(
        s.cancel(b, Some(lead), Some("not needed"), Some(1)),
        Ok(false)
    );
    let v = s.get(b).unwrap();
    assert_eq!((v.node.status, v.node.generation), (Status::Cancelled, 1));
    assert_eq!(v.node.completed_by, Some(lead));
    // A hand-back clears a request: it was made of that holder.
    let c2 = node(s, "c");
    let g = s.claim(c2, actor(1), None, None).unwrap();
    s.cancel(c2, None, None, None).unwrap();
    s.release(c2, actor(1), g).unwrap();
    assert_eq!(s.get(c2).unwrap().node.cancel_requested, None);
    // The history records the request and the cancel, with their reasons.
    let lines: Vec<(String, Option<String>)> = s
        .history(None)
        .unwrap()
        .into_iter()
        .filter(|h| h.event.verb.starts_with("cancel"))
        .map(|h| (h.event.verb, h.event.detail))
        .collect();
    assert_eq!(
        lines,
        [
            ("cancel_request".into(), Some("wrong approach".into())),
            ("cancel".into(), Some("not needed".into())),
            ("cancel_request".into(), None),
        ]
    );
    assert!(s.check().unwrap().problems.is_empty());
}

pub fn outputs_flow_to_dependents_even_archived(s: &Store) {
    s.set_setting("max_held", "0").unwrap();
    let (p1, p2, p3) = (node(s, "fetch"), node(s, "index"), node(s, "lint"));
    let c = node(s, "report");
    s.link(p1, c, false).unwrap();
    s.link(p2, c, true).unwrap();
    s.link(p3, c, true).unwrap();
    let me = actor(1);
    let out = json!({"rows": 3, "at": [2, 1], "note": "ünïcode"});
    let g1 = s.claim(p1, me, None, None).unwrap();
    s.complete_output(p1, Status::Done, g1, Some(me), out.clone())
        .unwrap();
    let g2 = s.claim(p2, me, None, None).unwrap();
    s.complete(p2, Status::Done, g2, Some(me), None).unwrap();
    let g3 = s.claim(p3, me, None, None).unwrap();
    s.complete_output(p3, Status::Failed, g3, Some(me), json!("timeout"))
        .unwrap();
    // The output reads back byte for byte, key order included, in show and in the log.
    let shown = serde_json::to_string(&s.get(p1).unwrap().to_json()["output"]).unwrap();
    assert_eq!(shown, r#"{"rows":3,"at":[2,1],"note":"ünïcode"}"#);
    let done = s.history(Some(p1)).unwrap().pop().unwrap();
    assert_eq!(done.event.verb, "complete");
    assert_eq!(done.event.output.as_deref(), Some(shown.as_str()));
    // Archived, p1 still hands its output over; failed p3 is no input.
    s.archive("", &[p1], None).unwrap();
    let grant = s.claim_grant(c, actor(2), None, None).unwrap();
    let text = out.to_string();
    assert_eq!(grant.inputs, vec![(p1, Some(text)), (p2, None)]);
    // A reopen clears the output.
    s.reopen(p3, None).unwrap();
    assert_eq!(s.get(p3).unwrap().node.output, None);
    assert!(s.check().unwrap().problems.is_empty());
}

pub fn complete_many_is_all_or_nothing(s: &Store) {
    s.set_setting("max_held", "0").unwrap();
    let me = actor(1);
    let mut held = Vec::new();
    for i in 0..10 {
        let id = node(s, &format!("n{i}"));
        held.push((id, s.claim(id, me, None, None).unwrap()));
    }
    let finish = |(id, gen): (claimdag::Id, u64), i: usize| Finish {
        node: id,
        status: if i.is_multiple_of(2) {
            Status::Done
        } else {
            Status::Failed
        },
        gen,
        actor: Some(me),
        note: None,
        output: Some(json!({ "i": i })),
        held: false,
    };
    let mut all: Vec<Finish> = held
        .iter()
        .enumerate()
        .map(|(i, h)| finish(*h, i))
        .collect();
    all[6].gen += 1; // one stale generation among ten
    let e = refused(s, Code::StaleGeneration, || s.complete_many(all.clone()));
    assert!(e.to_string().contains(&held[6].0.hex()), "{e}");
    all[6].gen -= 1;
    let done = s.complete_many(all).unwrap();
    assert_eq!(done.len(), 10);
    for (i, (id, _)) in held.iter().enumerate() {
        let n = s.get(*id).unwrap().node;
        assert_eq!(n.status, finish(held[i], i).status);
        assert_eq!(n.output, Some(format!("{{\"i\":{i}}}")));
    }
    // One write: every completion carries the same write number.
    let seqs: std::collections::HashSet<u64> = s
        .history(None)
        .unwrap()
        .into_iter()
        .filter(|h| h.event.verb == "complete")
        .map(|h| h.seq)
        .collect();
    assert_eq!(seqs.len(), 1);
    refused(s, Code::InvalidInput, || s.complete_many(Vec::new()));
}

pub fn talk_limits_refuse_and_change_nothing(s: &Store) {
    let a = node(s, "a");
    let g = s.claim(a, actor(1), None, None).unwrap();
    let big = "p".repeat(64 * 1024 + 1);
    refused(s, Code::InvalidInput, || {
        s.renew_with(a, actor(1), Some(g), None, Some(&big))
    });
    refused(s, Code::InvalidInput, || {
        s.renew_with(a, actor(1), Some(g), None, Some("a\0b"))
    });
    // Exactly 64 KiB is allowed.
    let most = "p".repeat(64 * 1024);
    s.renew_with(a, actor(1), Some(g), None, Some(&most))
        .unwrap();
    let huge = json!({ "blob": "o".repeat(64 * 1024) });
    refused(s, Code::InvalidInput, || {
        s.complete_output(a, Status::Done, g, Some(actor(1)), huge.clone())
    });
    // A refused completion among several changes nothing either.
    let b = with(
        s,
        Upsert {
            summary: "b".into(),
            ..Upsert::default()
        },
    );
    refused(s, Code::NotClaimed, || {
        s.complete_many(vec![
            Finish {
                node: a,
                status: Status::Done,
                gen: g,
                actor: None,
                note: None,
                output: None,
                held: false,
            },
            Finish {
                node: b,
                status: Status::Done,
                gen: 1,
                actor: None,
                note: None,
                output: None,
                held: false,
            },
        ])
    });
}

pub fn a_lease_carries_checkpoints_and_learns_a_cancel(s: &Store) {
    let p = node(s, "fetch");
    let a = node(s, "parse");
    s.link(p, a, false).unwrap();
    let me = actor(1);
    let g = s.claim(p, me, None, None).unwrap();
    s.complete_output(p, Status::Done, g, Some(me), json!([1, 2]))
        .unwrap();
    // A lease of 1 s, renewed about every 333 ms: short enough for the wait below to outlast
    // it, long enough that a loaded machine does not make a renewal late.
    let lease = s.lease(a, me, 1000).unwrap();
    assert_eq!(lease.inputs(), &[(p, Some("[1,2]".to_string()))]);
    // A checkpoint goes with the next renewal.
    lease.progress("half way").expect("a checkpoint that fits");
    eventually("the checkpoint to be stored", || {
        s.get(a).unwrap().node.progress.as_deref() == Some("half way")
    });
    // A checkpoint the store would refuse is refused at once and never queued: the
    // renewals go on past the lease's length, and the lease is not lost.
    let long = "q".repeat(65537);
    assert_eq!(
        lease.progress(&long).map_err(|e| e.code()),
        Err(Code::InvalidInput)
    );
    assert_eq!(
        lease.progress_now("nul\0").map_err(|e| e.code()),
        Err(Code::InvalidInput)
    );
    std::thread::sleep(Duration::from_millis(1500));
    assert!(!lease.is_lost(), "an oversized checkpoint lost the lease");
    assert_eq!(s.get(a).unwrap().node.progress.as_deref(), Some("half way"));
    let (tx, rx) = std::sync::mpsc::channel();
    lease.on_cancel(move |c| {
        let _ = tx.send(c.reason.clone());
    });
    assert_eq!(lease.progress_now("almost"), Ok(None));
    assert_eq!(s.get(a).unwrap().node.progress.as_deref(), Some("almost"));
    s.cancel(a, Some(actor(9)), Some("stop"), None).unwrap();
    let why = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("the callback ran");
    assert_eq!(why.as_deref(), Some("stop"));
    assert_eq!(lease.cancel_requested().unwrap().by, Some(actor(9)));
    lease
        .complete_with(
            Status::Cancelled,
            Some("asked to"),
            Some(json!({"kept": 1})),
        )
        .unwrap();
    let n = s.get(a).unwrap().node;
    assert_eq!(
        (n.status, n.output.as_deref()),
        (Status::Cancelled, Some(r#"{"kept":1}"#))
    );
}

pub fn claim_next_many_grants_in_pick_order_within_the_rules(s: &Store) {
    s.set_setting("max_held", "3").unwrap();
    let est = |summary: &str, estimate: u64, res: &[&str]| {
        with(
            s,
            Upsert {
                summary: summary.into(),
                estimate: Some(estimate),
                resources: Some(res.iter().map(|r| r.to_string()).collect()),
                ..Upsert::default()
            },
        )
    };
    let big = est("big", 9, &["src/a.rs"]);
    let clash = est("clash", 8, &["src/"]);
    let mid = est("mid", 5, &[]);
    let small = est("small", 2, &[]);
    let tiny = est("tiny", 1, &[]);
    let me = actor(1);
    refused(s, Code::InvalidInput, || {
        s.claim_next_with("", me, count(0))
    });
    // In pick order; `clash` overlaps `big`'s resource once big is claimed in this very
    // write, so it is passed over; max_held stops the batch at 3.
    let got = s.claim_next_with("", me, count(10)).unwrap();
    let ids: Vec<_> = got.iter().map(|g| (g.id, g.generation)).collect();
    assert_eq!(ids, [(big, 2), (mid, 2), (small, 2)]);
    assert_eq!(s.get(clash).unwrap().node.status, Status::Todo);
    // The actor holds max_held: another batch is refused as one claim would be.
    refused(s, Code::AssigneeBusy, || {
        s.claim_next_with("", me, count(2))
    });
    let other = s.claim_next_with("", actor(2), count(5)).unwrap();
    assert_eq!(other.iter().map(|g| g.id).collect::<Vec<_>>(), [tiny]);
    // One write: the grants share the write number.
    let seqs: std::collections::HashSet<u64> = s
        .history(None)
        .unwrap()
        .into_iter()
        .filter(|h| h.event.verb == "claim" && h.event.actor == Some(me))
        .map(|h| h.seq)
        .collect();
    assert_eq!(seqs.len(), 1);
    assert!(s.check().unwrap().problems.is_empty());
}
