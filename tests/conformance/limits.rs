//! The scenarios of pools and rates (SPEC 13, "Resources"), on every backend: a batch of
//! `claim_next` takes no more slots than the pool has and passes over the rest, every
//! hand-back frees slots, a full window refuses with the store unchanged, and workspaces
//! count apart; globs and `read:` share or exclude as their modes say.

use crate::scenarios::{actor, refused, with};
use claimdag::{ClaimNextOptions, Code, Status, Store, Upsert};

fn needing(s: &Store, ws: &str, summary: &str, resources: &[&str]) -> claimdag::Id {
    with(
        s,
        Upsert {
            workspace: ws.into(),
            summary: summary.into(),
            resources: Some(resources.iter().map(|r| r.to_string()).collect()),
            ..Upsert::default()
        },
    )
}

pub fn a_pool_grants_its_slots_in_a_batch_and_frees_them_at_hand_back(s: &Store) {
    s.set_setting("max_held", "0").unwrap();
    s.set_setting("pool.build", "3").unwrap();
    let ids: Vec<_> = (0..5)
        .map(|i| needing(s, "", &format!("build {i}"), &["pool:build"]))
        .collect();
    let other = needing(s, "other", "elsewhere", &["pool:build*3"]);
    let pick = ClaimNextOptions {
        count: Some(5),
        ..ClaimNextOptions::default()
    };
    let got = s.claim_next_with("", actor(1), pick).unwrap();
    assert_eq!(got.len(), 3, "a batch took more slots than the pool has");
    // Another workspace has slots of its own.
    s.claim(other, actor(2), None, None).unwrap();
    let waiting = ids
        .iter()
        .find(|id| !got.iter().any(|g| g.id == **id))
        .unwrap();
    let e = refused(s, Code::ResourceConflict, || {
        s.claim(*waiting, actor(2), None, None)
    });
    assert!(
        e.to_string().contains("pool build has 3 slot(s), 3 held"),
        "{e}"
    );
    // Completed, released, reclaimed: each hand-back frees a slot.
    s.complete(
        got[0].id,
        Status::Done,
        got[0].generation,
        Some(actor(1)),
        None,
    )
    .unwrap();
    let g = s.claim(*waiting, actor(2), None, None).unwrap();
    s.release(*waiting, actor(2), g).unwrap();
    assert_eq!(s.limits("").unwrap()[0].used, 2);
}

pub fn a_full_window_refuses_and_globs_share_by_mode(s: &Store) {
    s.set_setting("max_held", "0").unwrap();
    s.set_setting("rate.llm", "2/1h").unwrap();
    let asks: Vec<_> = (0..3)
        .map(|i| needing(s, "", &format!("ask {i}"), &["rate:llm"]))
        .collect();
    for a in &asks[..2] {
        let g = s.claim(*a, actor(1), None, None).unwrap();
        s.release(*a, actor(1), g).unwrap();
    }
    // Two grants in the window, both handed back: the window still counts them.
    let e = refused(s, Code::ResourceConflict, || {
        s.claim(asks[2], actor(1), None, None)
    });
    assert!(e.to_string().contains("rate llm allows 2 per 1h"), "{e}");
    let r1 = needing(s, "", "read the tree", &["read:path:src/**"]);
    let r2 = needing(s, "", "read a file", &["read:path:src/a/*.rs"]);
    let w = needing(s, "", "write a file", &["path:src/a/x.rs"]);
    s.claim(r1, actor(2), None, None).unwrap();
    s.claim(r2, actor(3), None, None).unwrap();
    let e = refused(s, Code::ResourceConflict, || {
        s.claim(w, actor(4), None, None)
    });
    assert!(e.to_string().contains("path:src/a/x.rs"), "{e}");
}
