//! The scenarios of workspaces as the unit of a write (SPEC section 3, "workspace"): the
//! rules never cross workspaces, so a write hands back only its own workspace's expired
//! claims, and a batch or an archive of named nodes stays in one workspace.

use crate::scenarios::{actor, refused, with};
use crate::talk::verbs_of;
use claimdag::rules::Finish;
use claimdag::{Code, Status, Store, Upsert};
use std::time::Duration;

fn in_ws(s: &Store, ws: &str, summary: &str) -> claimdag::Id {
    with(
        s,
        Upsert {
            workspace: ws.into(),
            summary: summary.into(),
            ..Upsert::default()
        },
    )
}

pub fn a_write_hands_back_only_its_own_workspaces_expired_claims(s: &Store) {
    let x = in_ws(s, "alpha", "quiet holder");
    let g = s.claim(x, actor(1), None, Some(300)).unwrap();
    std::thread::sleep(Duration::from_millis(500));
    // A write in another workspace leaves the expired claim where it is: it reads expired,
    // and its history has no hand-back yet.
    in_ws(s, "beta", "elsewhere");
    assert_eq!(verbs_of(s, x), ["create", "claim"]);
    let shown = s.get(x).unwrap();
    assert_eq!(shown.node.generation, g);
    assert_eq!(shown.display, claimdag::DisplayWord::Expired);
    // The next write in its own workspace hands it back.
    in_ws(s, "alpha", "next door");
    assert_eq!(verbs_of(s, x), ["create", "claim", "expire"]);
    assert_eq!(s.get(x).unwrap().node.generation, g + 1);
}

pub fn batches_and_named_archives_stay_in_one_workspace(s: &Store) {
    let (a, b) = (in_ws(s, "alpha", "one"), in_ws(s, "beta", "two"));
    let ga = s.claim(a, actor(1), None, None).unwrap();
    let gb = s.claim(b, actor(1), None, None).unwrap();
    let finish = |id, gen| Finish {
        node: id,
        status: Status::Done,
        gen,
        actor: Some(actor(1)),
        note: None,
        output: None,
        held: true,
    };
    let e = refused(s, Code::InvalidInput, || {
        s.complete_many(vec![finish(a, ga), finish(b, gb)])
    });
    assert!(e.to_string().contains("one workspace"), "{e}");
    s.complete_many(vec![finish(a, ga)]).unwrap();
    s.complete_many(vec![finish(b, gb)]).unwrap();
    let e = refused(s, Code::InvalidInput, || s.archive("alpha", &[a, b], None));
    assert!(e.to_string().contains("one workspace"), "{e}");
    refused(s, Code::InvalidInput, || s.archive("alpha", &[b], Some(0)));
    // A named node is archived in its own workspace, whichever the caller is in.
    assert_eq!(s.archive("alpha", &[b], None).unwrap(), 1);
    assert_eq!(s.get(b).unwrap().node.status, Status::Done);
    assert!(s.get(b).unwrap().node.archived);
}
