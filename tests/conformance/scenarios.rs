//! The scenarios, each a function of an empty store. They use only the `Store` API and
//! read the answers every backend must give.

use claimdag::graph::Format;
use claimdag::rules::{Plan, PlanNode};
use claimdag::store::ListFilter;
use claimdag::{Actor, ClaimNextOptions, Code, Error, Id, Settings, Status, Store, Upsert};
use std::time::Duration;

pub fn actor(n: u8) -> Actor {
    let mut b = [0u8; 16];
    b[15] = n;
    Id(b)
}

pub fn node(s: &Store, summary: &str) -> Id {
    s.upsert(Upsert {
        summary: summary.into(),
        ..Upsert::default()
    })
    .expect("upsert")
}

pub fn with(s: &Store, u: Upsert) -> Id {
    s.upsert(u).expect("upsert")
}

/// Everything a refused call could have changed: the version and every node's JSON.
fn fingerprint(s: &Store) -> (u64, String) {
    let all = ListFilter {
        terminal: true,
        archived: true,
        ..ListFilter::default()
    };
    let nodes = s.list(&all).expect("list");
    (
        s.version().expect("version"),
        serde_json::to_string(&nodes).expect("json"),
    )
}

/// Asserts `r` is refused with `code`, and that the store did not change.
#[track_caller]
pub fn refused<T: std::fmt::Debug>(
    s: &Store,
    code: Code,
    r: impl FnOnce() -> claimdag::Result<T>,
) -> Error {
    let before = fingerprint(s);
    let e = r().expect_err("refused");
    assert_eq!(e.code(), code, "{e}");
    assert_eq!(
        fingerprint(s),
        before,
        "a refused call ({e}) changed the store"
    );
    e
}

fn gen_of(s: &Store, id: Id) -> u64 {
    s.get(id).expect("get").node.generation
}

fn status_of(s: &Store, id: Id) -> (Status, &'static str) {
    let v = s.get(id).expect("get");
    (v.node.status, v.display.as_str())
}

pub fn upsert_creates_once_and_merges(s: &Store) {
    let a = node(s, "parse the manifest header");
    let v = s.get(a).unwrap();
    assert_eq!((v.node.generation, v.node.attempts), (1, 0));
    assert_eq!((v.node.status, v.display.as_str()), (Status::Todo, "ready"));
    assert_eq!(a, Id::mint("", "task", None, "parse the manifest header"));
    // The same fields again: the same node; mutable fields merge.
    let again = with(
        s,
        Upsert {
            summary: "  parse the manifest header \n".into(),
            priority: Some(3),
            labels: Some(vec!["parser".into()]),
            ..Upsert::default()
        },
    );
    assert_eq!(again, a);
    let v = s.get(a).unwrap();
    assert_eq!(
        (v.node.priority, v.node.labels.clone()),
        (3, vec!["parser".to_string()])
    );
    assert_eq!(v.node.generation, 1);
    // A finished node keeps its fields.
    let g = s.claim(a, actor(1), None, None).unwrap();
    s.complete(a, Status::Done, g, None, None).unwrap();
    with(
        s,
        Upsert {
            summary: "parse the manifest header".into(),
            priority: Some(9),
            ..Upsert::default()
        },
    );
    assert_eq!(s.get(a).unwrap().node.priority, 3);
    refused(s, Code::InvalidInput, || {
        s.upsert(Upsert {
            summary: "  ".into(),
            ..Upsert::default()
        })
    });
    refused(s, Code::NotFound, || {
        s.upsert(Upsert {
            summary: "child".into(),
            parent: Some(actor(99)),
            ..Upsert::default()
        })
    });
}

pub fn links_refuse_cycles_unknown_nodes_and_claimed_or_finished_children(s: &Store) {
    let (a, b, c) = (node(s, "a"), node(s, "b"), node(s, "c"));
    s.link(a, b, false).unwrap();
    s.link(b, c, true).unwrap();
    s.link(a, b, false).unwrap(); // twice: a no-op
    refused(s, Code::Cycle, || s.link(c, a, false));
    refused(s, Code::Cycle, || s.link(a, a, false));
    refused(s, Code::NotFound, || s.link(actor(77), a, false));
    refused(s, Code::NotFound, || s.link(a, actor(77), false));
    assert_eq!(status_of(s, b).1, "todo");
    let g = s.claim(a, actor(1), None, None).unwrap();
    refused(s, Code::AlreadyClaimed, || s.link(c, a, false));
    s.complete(a, Status::Done, g, None, None).unwrap();
    refused(s, Code::Terminal, || s.link(c, a, false));
    assert_eq!(status_of(s, b).1, "ready");
    s.unlink(b, c).unwrap();
    s.unlink(b, c).unwrap(); // a link that is not there: a no-op
    assert_eq!(status_of(s, c).1, "ready");
}

pub fn claims_need_a_ready_node_at_its_generation(s: &Store) {
    let (a, b) = (node(s, "first"), node(s, "second"));
    s.link(a, b, false).unwrap();
    refused(s, Code::NotReady, || s.claim(b, actor(1), None, None));
    refused(s, Code::StaleGeneration, || {
        s.claim(a, actor(1), Some(5), None)
    });
    refused(s, Code::InvalidInput, || {
        s.claim(a, actor(1), Some(0), None)
    });
    refused(s, Code::InvalidInput, || {
        s.claim(a, actor(1), None, Some(0))
    });
    refused(s, Code::InvalidInput, || {
        s.claim(a, actor(1), None, Some(u64::MAX))
    });
    refused(s, Code::NotFound, || {
        s.claim(actor(50), actor(1), None, None)
    });
    let g = s.claim(a, actor(1), Some(1), Some(60_000)).unwrap();
    assert_eq!(g, 2);
    let v = s.get(a).unwrap();
    assert_eq!(
        (v.node.holder, v.node.attempts, v.node.ttl_ms),
        (Some(actor(1)), 1, Some(60_000))
    );
    // A hard prerequisite that failed blocks; a soft one that failed does not.
    s.complete(a, Status::Failed, g, None, None).unwrap();
    assert_eq!(status_of(s, b).1, "blocked");
    refused(s, Code::NotReady, || s.claim(b, actor(1), None, None));
    let c = node(s, "third");
    s.link(a, c, true).unwrap();
    assert_eq!(status_of(s, c).1, "ready");
}

pub fn already_claimed_names_the_holder_and_generation(s: &Store) {
    let a = node(s, "a");
    let g = s.claim(a, actor(1), None, None).unwrap();
    for who in [actor(2), actor(1)] {
        let e = refused(s, Code::AlreadyClaimed, || s.claim(a, who, None, None));
        assert_eq!(
            (e.holder(), e.generation(), e.node()),
            (Some(actor(1)), Some(g), Some(a))
        );
    }
}

pub fn max_held_limits_claims_per_actor_and_names_them(s: &Store) {
    let (a, b, c) = (node(s, "a"), node(s, "b"), node(s, "c"));
    s.claim(a, actor(1), None, None).unwrap();
    let e = refused(s, Code::AssigneeBusy, || s.claim(b, actor(1), None, None));
    assert_eq!(e.held(), Some(&[a][..]));
    refused(s, Code::AssigneeBusy, || {
        s.claim_next("", actor(1), None, None)
    });
    s.set_setting("max_held", "2").unwrap();
    s.claim(b, actor(1), None, None).unwrap();
    let e = refused(s, Code::AssigneeBusy, || s.claim(c, actor(1), None, None));
    assert_eq!(e.held().map(<[Id]>::len), Some(2));
    s.set_setting("max_held", "0").unwrap();
    s.claim(c, actor(1), None, None).unwrap();
}

pub fn overlapping_resources_exclude_each_other(s: &Store) {
    let res = |summary: &str, r: &str| {
        with(
            s,
            Upsert {
                summary: summary.into(),
                resources: Some(vec![r.into()]),
                ..Upsert::default()
            },
        )
    };
    let (dir, file, other) = (
        res("refactor", "src/"),
        res("fix", "src/x.rs"),
        res("db", "db:users"),
    );
    s.set_setting("max_held", "0").unwrap();
    let g = s.claim(dir, actor(1), None, None).unwrap();
    let e = refused(s, Code::ResourceConflict, || {
        s.claim(file, actor(2), None, None)
    });
    assert_eq!((e.holder(), e.generation()), (Some(actor(1)), Some(g)));
    s.claim(other, actor(2), None, None).unwrap();
    // claim-next skips a node whose resources are held.
    assert_eq!(s.claim_next("", actor(3), None, None).unwrap(), None);
    s.complete(dir, Status::Done, g, None, None).unwrap();
    assert_eq!(
        s.claim_next("", actor(3), None, None).unwrap().map(|c| c.0),
        Some(file)
    );
}

pub fn the_attempt_cap_survives_hand_backs(s: &Store) {
    let a = with(
        s,
        Upsert {
            summary: "flaky".into(),
            max_attempts: Some(2),
            ..Upsert::default()
        },
    );
    for _ in 0..2 {
        let g = s.claim(a, actor(1), None, None).unwrap();
        s.release(a, actor(1), g).unwrap();
    }
    let v = s.get(a).unwrap();
    assert_eq!(
        (v.node.attempts, v.display.as_str(), v.ready),
        (2, "parked", false)
    );
    refused(s, Code::AttemptsExhausted, || {
        s.claim(a, actor(1), None, None)
    });
    assert_eq!(s.claim_next("", actor(1), None, None).unwrap(), None);
}

pub fn the_fence_refuses_a_handed_back_holder(s: &Store) {
    let a = node(s, "fenced");
    let g = s.claim(a, actor(1), None, None).unwrap();
    assert_eq!(s.reclaim("", Some(0)).unwrap(), vec![(a, g + 1)]);
    for (code, r) in [
        (
            Code::StaleGeneration,
            s.complete(a, Status::Done, g, None, None),
        ),
        (
            Code::StaleGeneration,
            s.renew(a, actor(1), Some(g), None).map(|_| ()),
        ),
        (
            Code::StaleGeneration,
            s.renew(a, actor(1), None, None).map(|_| ()),
        ),
        (Code::StaleGeneration, s.release(a, actor(1), g).map(|_| ())),
    ] {
        assert_eq!(r.unwrap_err().code(), code);
    }
    let g2 = s.claim(a, actor(2), None, None).unwrap();
    assert_eq!(g2, g + 2);
    refused(s, Code::StaleGeneration, || {
        s.complete(a, Status::Done, g, Some(actor(1)), None)
    });
    refused(s, Code::NotHolder, || s.renew(a, actor(3), Some(g2), None));
    s.complete(a, Status::Done, g2, Some(actor(2)), Some("merged"))
        .unwrap();
    // Even after the node finished under someone else, the old holder is stale.
    refused(s, Code::StaleGeneration, || {
        s.complete(a, Status::Done, g, None, None)
    });
    refused(s, Code::StaleGeneration, || {
        s.renew(a, actor(1), None, None)
    });
    let v = s.get(a).unwrap();
    assert_eq!(
        (v.node.completed_by, v.node.note.as_deref()),
        (Some(actor(2)), Some("merged"))
    );
}

pub fn an_expired_claim_is_handed_back_by_the_next_write(s: &Store) {
    let a = node(s, "short lease");
    let g = s.claim(a, actor(1), None, Some(150)).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(status_of(s, a), (Status::Claimed, "expired"));
    // The next write (any) hands it back; the old holder is stale even if nobody claimed.
    node(s, "another");
    assert_eq!(status_of(s, a), (Status::Todo, "ready"));
    assert_eq!(gen_of(s, a), g + 1);
    refused(s, Code::StaleGeneration, || {
        s.renew(a, actor(1), None, None)
    });
    refused(s, Code::StaleGeneration, || {
        s.complete(a, Status::Done, g, None, None)
    });
    let (id, g2) = s.claim_next("", actor(2), None, None).unwrap().unwrap();
    assert_eq!((id, g2), (a, g + 2));
    assert_eq!(
        s.get(a).unwrap().node.attempts,
        2,
        "attempts survive the hand-back"
    );
}

pub fn reclaim_hands_back_quiet_claims(s: &Store) {
    let (a, b) = (node(s, "quiet"), node(s, "busy"));
    s.set_setting("max_held", "0").unwrap();
    let ga = s.claim(a, actor(1), None, None).unwrap();
    std::thread::sleep(Duration::from_millis(250));
    let gb = s.claim(b, actor(2), None, None).unwrap();
    assert_eq!(s.reclaim("", None).unwrap(), vec![], "nothing expired");
    assert_eq!(s.reclaim("", Some(200)).unwrap(), vec![(a, ga + 1)]);
    assert_eq!(s.reclaim("", Some(0)).unwrap(), vec![(b, gb + 1)]);
}

pub fn release_and_reopen_move_the_generation(s: &Store) {
    let a = node(s, "a");
    let g = s.claim(a, actor(1), None, None).unwrap();
    refused(s, Code::NotHolder, || s.release(a, actor(2), g));
    assert_eq!(s.release(a, actor(1), g).unwrap(), g + 1);
    assert_eq!(status_of(s, a), (Status::Todo, "ready"));
    refused(s, Code::InvalidInput, || s.reopen(a, None));
    let g = s.claim(a, actor(1), None, None).unwrap();
    s.complete(a, Status::Failed, g, None, None).unwrap();
    assert_eq!(gen_of(s, a), g, "complete keeps the generation");
    refused(s, Code::StaleGeneration, || s.reopen(a, Some(g - 1)));
    assert_eq!(s.reopen(a, Some(g)).unwrap(), g + 1);
    let v = s.get(a).unwrap();
    assert_eq!((v.node.status, v.node.attempts), (Status::Todo, 2));
}

pub fn complete_needs_a_terminal_status_and_the_holder(s: &Store) {
    let (a, b) = (node(s, "a"), node(s, "b"));
    refused(s, Code::NotClaimed, || {
        s.complete(a, Status::Done, 1, None, None)
    });
    refused(s, Code::InvalidInput, || {
        s.complete(a, Status::Todo, 1, None, None)
    });
    refused(s, Code::StaleGeneration, || {
        s.complete(a, Status::Cancelled, 2, None, None)
    });
    s.complete(a, Status::Cancelled, 1, None, None).unwrap();
    refused(s, Code::Terminal, || {
        s.complete(a, Status::Done, 1, None, None)
    });
    let g = s.claim(b, actor(1), None, None).unwrap();
    refused(s, Code::NotHolder, || {
        s.complete(b, Status::Done, g, Some(actor(2)), None)
    });
    s.complete(b, Status::Done, g, Some(actor(1)), None)
        .unwrap();
    refused(s, Code::Terminal, || s.claim(b, actor(1), None, None));
}

pub fn workspaces_never_refuse_each_other(s: &Store) {
    let in_ws = |ws: &str| {
        with(
            s,
            Upsert {
                workspace: ws.into(),
                summary: "the same summary".into(),
                ..Upsert::default()
            },
        )
    };
    let (x, y) = (in_ws("alpha"), in_ws("beta"));
    assert_ne!(x, y);
    s.claim(x, actor(1), None, None).unwrap();
    s.claim(y, actor(1), None, None).unwrap(); // one claim per actor and workspace
    assert!(s.next("alpha", None).unwrap().is_none());
    refused(s, Code::InvalidInput, || s.link(x, y, false));
    refused(s, Code::InvalidInput, || {
        s.claim_next("no spaces", actor(1), None, None)
    });
    let listed = s
        .list(&ListFilter {
            workspace: Some("beta".into()),
            ..ListFilter::default()
        })
        .unwrap();
    assert_eq!(
        listed.iter().map(|v| v.node.id).collect::<Vec<_>>(),
        vec![y]
    );
}

fn plan(nodes: &[(&str, &str, &[&str])]) -> Plan {
    Plan {
        nodes: nodes
            .iter()
            .map(|(key, summary, deps)| PlanNode {
                key: key.to_string(),
                summary: summary.to_string(),
                deps: deps.iter().map(|d| d.to_string()).collect(),
                ..PlanNode::default()
            })
            .collect(),
    }
}

pub fn import_is_atomic_and_idempotent(s: &Store) {
    let existing = node(s, "already there");
    let hex = existing.hex();
    let p = plan(&[("a", "first", &[]), ("b", "second", &["a", &hex])]);
    let ids = s.import("", p.clone()).unwrap();
    assert_eq!(
        ids.iter().map(|(_, k)| k.as_str()).collect::<Vec<_>>(),
        ["a", "b"]
    );
    let b = s.get(ids[1].0).unwrap();
    assert_eq!(b.node.deps.len(), 2);
    let v = s.version().unwrap();
    assert_eq!(
        s.import("", p).unwrap(),
        ids,
        "importing again gives the same ids"
    );
    assert_eq!(s.version().unwrap(), v, "and writes nothing");
    // A cycle anywhere refuses the whole plan.
    refused(s, Code::Cycle, || {
        s.import("", plan(&[("x", "x", &["y"]), ("y", "y", &["x"])]))
    });
    refused(s, Code::NotFound, || {
        s.import("", plan(&[("x", "x", &["nowhere"])]))
    });
    refused(s, Code::InvalidInput, || {
        s.import("", plan(&[("x", "x", &[]), ("x", "y", &[])]))
    });
}

pub fn archive_and_unarchive_keep_the_generation(s: &Store) {
    let (a, b, c) = (node(s, "done first"), node(s, "waits"), node(s, "open"));
    s.link(a, b, false).unwrap();
    let g = s.claim(a, actor(1), None, None).unwrap();
    s.complete(a, Status::Done, g, None, None).unwrap();
    refused(s, Code::InvalidInput, || s.archive("", &[c], None));
    assert_eq!(s.archive("", &[a], None).unwrap(), 1);
    assert_eq!(status_of(s, b).1, "ready", "a dependent sees how it ended");
    let shown = s.get(a).unwrap();
    assert!(shown.node.archived);
    assert_eq!(shown.node.generation, g);
    let archived = s
        .list(&ListFilter {
            only_archived: true,
            archived: true,
            ..ListFilter::default()
        })
        .unwrap();
    assert_eq!(
        archived.iter().map(|v| v.node.id).collect::<Vec<_>>(),
        vec![a]
    );
    refused(s, Code::InvalidInput, || s.unarchive(c));
    refused(s, Code::NotFound, || s.unarchive(actor(42)));
    assert_eq!(s.unarchive(a).unwrap(), Status::Done);
    let v = s.get(a).unwrap();
    assert_eq!((v.node.archived, v.node.generation), (false, g));
    assert!(s.check().unwrap().problems.is_empty());
}

pub fn claim_next_picks_by_critical_path_priority_role_and_age(s: &Store) {
    let est = |summary: &str, estimate: u64, priority: i64, role: &str| {
        with(
            s,
            Upsert {
                summary: summary.into(),
                estimate: Some(estimate),
                priority: Some(priority),
                role: Some(role.into()),
                ..Upsert::default()
            },
        )
    };
    let old = est("old", 1, 0, "");
    let long = est("long chain head", 1, 0, "");
    let tail = est("long chain tail", 5, 0, "");
    let urgent = est("urgent", 1, 9, "");
    let review = est("review", 1, 0, "reviewer");
    s.link(long, tail, false).unwrap();
    let order: Vec<Id> = s.ready("", None).unwrap().iter().map(|p| p.id).collect();
    assert_eq!(order, vec![long, urgent, old]);
    let p = &s.ready("", None).unwrap()[0];
    assert_eq!(
        (p.critical, p.path.clone(), p.summary.as_str()),
        (6, vec![long, tail], "long chain head")
    );
    let with_role: Vec<Id> = s
        .ready("", Some("reviewer"))
        .unwrap()
        .iter()
        .map(|p| p.id)
        .collect();
    assert_eq!(with_role, vec![long, urgent, review, old]);
    assert_eq!(s.next("", None).unwrap().map(|p| p.id), Some(long));
    s.set_setting("max_held", "0").unwrap();
    let picks: Vec<Id> = (0..3)
        .map(|i| s.claim_next("", actor(i), None, None).unwrap().unwrap().0)
        .collect();
    assert_eq!(picks, vec![long, urgent, old]);
    assert_eq!(s.claim_next("", actor(9), None, None).unwrap(), None);
}

pub fn claim_next_resumes_an_actors_claim(s: &Store) {
    let (a, _b) = (node(s, "a"), node(s, "b"));
    let (id, g) = s.claim_next("", actor(1), None, None).unwrap().unwrap();
    assert_eq!(id, a);
    assert_eq!(resume(s, actor(1)), Some((a, g, true)));
    assert_eq!(gen_of(s, a), g, "resuming writes nothing");
    refused(s, Code::AssigneeBusy, || {
        s.claim_next("", actor(1), None, None)
    });
    let (other, _, resumed) = resume(s, actor(2)).unwrap();
    assert!(!resumed && other != a);
}

/// A lead acting for a worker (`Store::acting_as`, the dashboard's "act as"): the rules
/// are the worker's (a release names the holder and its generation), and each event records
/// the lead beside the worker; `completed_by` stays the holder. A write by the worker itself
/// records no one beside it.
pub fn a_lead_acting_for_a_worker_is_recorded_beside_it(s: &Store) {
    let (worker, lead) = (actor(1), actor(9));
    let a = node(s, "a");
    let b = node(s, "b");
    let as_lead = s.acting_as(lead);
    let g = s.claim(a, worker, None, None).unwrap();
    let released = as_lead.release(a, worker, g).unwrap();
    let g = s.claim(a, worker, Some(released), None).unwrap();
    as_lead.complete(a, Status::Done, g, None, None).unwrap();
    let gb = s.claim(b, worker, None, None).unwrap();
    s.release(b, worker, gb).unwrap();
    // A refused call is refused as the worker's would be, and records nothing.
    let before = s.history(None).unwrap();
    let err = as_lead.release(b, worker, gb).unwrap_err();
    assert_eq!(err.code(), Code::StaleGeneration);
    assert_eq!(s.history(None).unwrap(), before);
    let seen: Vec<(String, Option<Actor>, Option<Actor>)> = s
        .history(Some(a))
        .unwrap()
        .iter()
        .map(|h| (h.event.verb.clone(), h.event.actor, h.event.by))
        .collect();
    assert_eq!(
        seen,
        [
            ("create".to_string(), None, None),
            ("claim".into(), Some(worker), None),
            ("release".into(), Some(worker), Some(lead)),
            ("claim".into(), Some(worker), None),
            ("complete".into(), Some(worker), Some(lead)),
        ]
    );
    assert_eq!(s.get(a).unwrap().node.completed_by, Some(worker));
    assert!(s
        .history(Some(b))
        .unwrap()
        .iter()
        .all(|h| h.event.by.is_none()));
    // The JSON of the history carries it as `by`.
    let line = serde_json::to_value(&s.history(Some(a)).unwrap()[2]).unwrap();
    assert_eq!(line["by"], serde_json::json!(lead.hex()));
}

pub fn every_transition_is_in_the_history(s: &Store) {
    let v0 = s.version().unwrap();
    let a = node(s, "a");
    let g = s.claim(a, actor(1), None, None).unwrap();
    s.renew(a, actor(1), Some(g), None).unwrap();
    s.complete(a, Status::Done, g, None, None).unwrap();
    s.reopen(a, None).unwrap();
    let verbs: Vec<String> = s
        .history(Some(a))
        .unwrap()
        .iter()
        .map(|h| h.event.verb.clone())
        .collect();
    assert_eq!(verbs, ["create", "claim", "renew", "complete", "reopen"]);
    let last = s.history(Some(a)).unwrap();
    assert_eq!(last[1].event.generation, Some(g));
    assert_eq!(last[1].event.actor, Some(actor(1)));
    assert!(
        s.version().unwrap() >= v0 + 5,
        "every write moves the version"
    );
    let since = last[2].seq;
    let after: Vec<String> = s
        .history_since(since, None)
        .unwrap()
        .iter()
        .map(|h| h.event.verb.clone())
        .collect();
    assert_eq!(after, ["complete", "reopen"]);
}

pub fn refused_calls_change_nothing(s: &Store) {
    let a = node(s, "a");
    let g = s.claim(a, actor(1), None, None).unwrap();
    refused(s, Code::NotHolder, || {
        s.complete(a, Status::Done, g, Some(actor(2)), None)
    });
    refused(s, Code::StaleGeneration, || s.release(a, actor(1), g + 1));
    refused(s, Code::AlreadyClaimed, || s.claim(a, actor(2), None, None));
    refused(s, Code::InvalidInput, || s.set_setting("max_held", "lots"));
    refused(s, Code::InvalidInput, || s.set_setting("colour", "red"));
    refused(s, Code::InvalidInput, || {
        s.graph("bad ws", false, Format::Dot)
    });
    assert!(s.check().unwrap().problems.is_empty());
}

pub fn settings_are_one_write_each(s: &Store) {
    assert_eq!(s.settings().unwrap(), Settings::default());
    s.set_setting("default_ttl", "10m").unwrap();
    s.set_setting("max_attempts", "3").unwrap();
    let st = s.settings().unwrap();
    assert_eq!(
        (st.default_ttl_ms, st.max_attempts, st.max_held),
        (600_000, Some(3), 1)
    );
    let a = node(s, "a");
    s.claim(a, actor(1), None, None).unwrap();
    assert_eq!(s.get(a).unwrap().node.ttl_ms, Some(600_000));
}

/// A `claim-next --resume` of `who`: the claim and whether it was resumed.
fn resume(s: &Store, who: Actor) -> Option<(Id, u64, bool)> {
    let pick = ClaimNextOptions {
        resume: true,
        ..ClaimNextOptions::default()
    };
    let got = s.claim_next_with("", who, pick).unwrap();
    got.first().map(|g| (g.id, g.generation, g.resumed))
}
