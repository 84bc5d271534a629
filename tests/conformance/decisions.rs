//! The scenarios of containers, deadlines and budgets (SPEC 13, "What people decide"), on
//! every backend: an epic is never offered or claimed and follows its children; a node past
//! its deadline is overdue, recorded once, and its holder asked to stop when the store says
//! so; a claim that reports spend past the node's budget learns to stop in that renewal.

use crate::scenarios::{actor, refused, with};
use claimdag::model::{Budget, Usage};
use claimdag::store::ListFilter;
use claimdag::{ClaimNextOptions, Code, DisplayWord, Status, Store, Upsert};

fn under(s: &Store, summary: &str, kind: &str, parent: Option<claimdag::Id>) -> claimdag::Id {
    with(
        s,
        Upsert {
            kind: Some(kind.into()),
            summary: summary.into(),
            parent,
            ..Upsert::default()
        },
    )
}

fn verbs(s: &Store, id: claimdag::Id, verb: &str) -> Vec<Option<String>> {
    s.history(Some(id))
        .unwrap()
        .into_iter()
        .filter(|l| l.event.verb == verb)
        .map(|l| l.event.detail)
        .collect()
}

fn finish(s: &Store, id: claimdag::Id, status: Status) {
    let g = s.claim(id, actor(1), None, None).unwrap();
    s.complete(id, status, g, Some(actor(1)), None).unwrap();
}

pub fn an_epic_is_never_claimed_and_follows_its_children(s: &Store) {
    s.set_setting("max_held", "0").unwrap();
    let release = under(s, "release 2.0", "epic", None);
    let docs = under(s, "docs", "epic", Some(release));
    let parse = under(s, "parse", "task", Some(release));
    let guide = under(s, "guide", "task", Some(docs));
    let shown = s.get(release).unwrap();
    assert_eq!(shown.display, DisplayWord::Todo);
    assert_eq!(
        shown.node.children.map(|c| (c.total, c.open())),
        Some((2, 2))
    );
    refused(s, Code::NotReady, || s.claim(release, actor(2), None, None));
    refused(s, Code::InvalidInput, || {
        s.cancel(release, None, None, None)
    });
    let offered = s
        .claim_next_with(
            "",
            actor(3),
            ClaimNextOptions {
                count: Some(10),
                ..ClaimNextOptions::default()
            },
        )
        .unwrap();
    let mut ids: Vec<_> = offered.iter().map(|g| g.id).collect();
    ids.sort();
    let mut want = vec![parse, guide];
    want.sort();
    assert_eq!(ids, want, "only the tasks are offered");
    for g in &offered {
        s.release(g.id, actor(3), g.generation).unwrap();
    }
    // The inner epic settles with its one child, the outer one with both.
    finish(s, guide, Status::Done);
    assert_eq!(s.get(docs).unwrap().node.status, Status::Done);
    assert_eq!(s.get(release).unwrap().node.status, Status::Todo);
    finish(s, parse, Status::Failed);
    let r = s.get(release).unwrap().node;
    assert_eq!((r.status, r.generation), (Status::Failed, 1));
    refused(s, Code::InvalidInput, || s.reopen(release, None));
    // A child reopened opens the epic again, at a new generation, in the same write.
    s.reopen(parse, None).unwrap();
    let r = s.get(release).unwrap().node;
    assert_eq!((r.status, r.generation), (Status::Todo, 2));
    finish(s, parse, Status::Done);
    assert_eq!(s.get(release).unwrap().node.status, Status::Done);
    // A new child opens it again.
    under(s, "changelog", "task", Some(release));
    let r = s.get(release).unwrap().node;
    assert_eq!((r.status, r.generation), (Status::Todo, 3));
    assert_eq!(
        verbs(s, release, "settle"),
        ["failed", "todo", "done", "todo"].map(|w| Some(w.to_string()))
    );
    let report = s.check().unwrap();
    assert!(report.problems.is_empty(), "{:?}", report.problems);
}

pub fn a_deadline_is_recorded_once_and_can_ask_the_holder_to_stop(s: &Store) {
    s.set_setting("deadline_action", "cancel").unwrap();
    let now = s.now().unwrap();
    let late = with(
        s,
        Upsert {
            summary: "late".into(),
            deadline: Some(now + 300),
            ..Upsert::default()
        },
    );
    let past = with(
        s,
        Upsert {
            summary: "already past".into(),
            deadline: Some(now.saturating_sub(1000)),
            ..Upsert::default()
        },
    );
    // A deadline already past is recorded by the upsert that sets it.
    assert!(s.get(past).unwrap().overdue);
    assert_eq!(verbs(s, past, "overdue").len(), 1);
    let g = s.claim(late, actor(1), None, None).unwrap();
    assert!(!s.get(late).unwrap().overdue);
    std::thread::sleep(std::time::Duration::from_millis(400));
    // Read as overdue at once; recorded by the next write of the workspace, once.
    assert!(s.get(late).unwrap().overdue);
    let asked = s.renew(late, actor(1), Some(g), None).unwrap();
    let why = asked.and_then(|c| c.reason).unwrap_or_default();
    assert!(why.starts_with("deadline passed"), "{why}");
    s.renew(late, actor(1), Some(g), None).unwrap();
    assert_eq!(verbs(s, late, "overdue").len(), 1);
    let overdue = ListFilter {
        status: Some("overdue".into()),
        ..ListFilter::default()
    };
    let mut listed: Vec<_> = s
        .list(&overdue)
        .unwrap()
        .iter()
        .map(|v| v.node.id)
        .collect();
    listed.sort();
    let mut want = vec![late, past];
    want.sort();
    assert_eq!(listed, want);
    // Moved later, the deadline may be met again; finished, a node is never overdue.
    with(
        s,
        Upsert {
            summary: "already past".into(),
            deadline: Some(now + 3_600_000),
            ..Upsert::default()
        },
    );
    let p = s.get(past).unwrap();
    assert_eq!((p.overdue, p.node.overdue_at), (false, None));
    s.complete(late, Status::Done, g, Some(actor(1)), None)
        .unwrap();
    assert!(!s.get(late).unwrap().overdue);
    // The year-9999 edge: the latest time the clock reaches is a deadline; one past it is
    // refused and changes nothing.
    let edge: u64 = 253_402_300_799_999; // 9999-12-31T23:59:59.999Z
    let far = with(
        s,
        Upsert {
            summary: "far".into(),
            deadline: Some(edge),
            ..Upsert::default()
        },
    );
    assert_eq!(s.get(far).unwrap().node.deadline, Some(edge));
    refused(s, Code::InvalidInput, || {
        s.upsert(Upsert {
            summary: "too far".into(),
            deadline: Some(edge + 1),
            ..Upsert::default()
        })
    });
}

pub fn spend_past_the_budget_asks_the_holder_to_stop_in_that_renewal(s: &Store) {
    let n = with(
        s,
        Upsert {
            summary: "summarise the logs".into(),
            budget: Some(Budget::parse("budget", "tokens=1000,cost=2").unwrap()),
            ..Upsert::default()
        },
    );
    let usage = |t: &str| Some(Usage::parse("usage", t).unwrap());
    let g = s.claim(n, actor(1), None, None).unwrap();
    let asked = s
        .renew_spending(n, actor(1), Some(g), None, None, usage("tokens=600"))
        .unwrap();
    assert_eq!(asked, None);
    // A report is the claim's total: repeated, it counts once; lower, it is refused.
    s.renew_spending(
        n,
        actor(1),
        Some(g),
        None,
        None,
        usage("tokens=600,cost=0.5"),
    )
    .unwrap();
    refused(s, Code::InvalidInput, || {
        s.renew_spending(n, actor(1), Some(g), None, None, usage("tokens=500"))
    });
    let spent = s.get(n).unwrap().node.spent;
    assert_eq!((spent.tokens, spent.cost_micros), (600, 500_000));
    let asked = s
        .renew_spending(n, actor(1), Some(g), None, None, usage("tokens=900"))
        .unwrap();
    assert_eq!(asked, None);
    // Handed back: the next claim's spend adds to the node's.
    let g = s.release(n, actor(1), g).unwrap();
    let g = s.claim(n, actor(2), Some(g), None).unwrap();
    let asked = s
        .renew_spending(n, actor(2), Some(g), None, None, usage("tokens=150"))
        .unwrap();
    let why = asked.and_then(|c| c.reason).unwrap_or_default();
    assert_eq!(why, "over budget: tokens 1050 of 1000");
    let shown = s.get(n).unwrap().node;
    assert_eq!((shown.spent.tokens, shown.claim_spent.tokens), (1050, 150));
    s.renew_spending(n, actor(2), Some(g), None, None, usage("tokens=400"))
        .unwrap();
    assert_eq!(
        verbs(s, n, "over_budget"),
        [Some("tokens 1050 of 1000".to_string())]
    );
    let report = s.check().unwrap();
    assert!(report.problems.is_empty(), "{:?}", report.problems);
}
