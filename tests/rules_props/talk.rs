//! The rules' promises about talking and batches, checked after every step of the property
//! tests: checkpoints, cancel requests, outputs and inputs, several completions and claims
//! in one write.

use claimdag::model::{Node, Status};
use claimdag::rules::{self, Output, Request};
use claimdag::state::State;
use claimdag::{Error, Id};
use std::collections::{HashMap, HashSet};

/// Checkpoints survive every hand-back and only a reopen (or a newer checkpoint) replaces
/// them; a cancel request sits only on a claimed node and reaches its holder's renew; a
/// completion of several ends every one of them; a grant hands over the outputs of exactly
/// the prerequisites that are done.
pub fn talk_keeps_its_promises(
    before: &State,
    archive: &HashMap<Id, Node>,
    after: &State,
    req: &Request,
    result: &Result<Output, Error>,
) {
    let reopened: HashSet<Id> = match req {
        Request::Reopen { node, .. } => [*node].into(),
        _ => HashSet::new(),
    };
    for n in after.nodes() {
        let old = before.get(&n.id).or_else(|| archive.get(&n.id));
        let Some(old) = old else { continue };
        match req {
            Request::Renew {
                node,
                progress: Some(p),
                usage: None,
                ..
            } if *node == n.id => {
                assert_eq!(n.progress.as_ref(), Some(p), "a checkpoint was not kept");
            }
            _ if reopened.contains(&n.id) => {
                assert_eq!(n.progress, None, "a reopen kept the checkpoint");
                assert_eq!(n.output, None, "a reopen kept the output");
            }
            _ => assert_eq!(
                n.progress, old.progress,
                "the checkpoint of {} changed without a renewal or a reopen",
                n.id
            ),
        }
        if n.cancel_requested.is_some() {
            assert_eq!(
                n.status,
                Status::Claimed,
                "a cancel request on an unclaimed node"
            );
        }
    }
    match (req, result) {
        (Request::Renew { node, .. }, Ok(Output::Renewed(asked))) => {
            assert_eq!(asked, &after.get(node).unwrap().cancel_requested);
        }
        (Request::CompleteMany(all), Ok(_)) => {
            for f in all {
                assert_eq!(after.get(&f.node).unwrap().status, f.status);
            }
        }
        (Request::Cancel { node, .. }, Ok(Output::Cancelled { requested, .. })) => {
            let n = after.get(node).unwrap();
            match requested {
                true => assert!(n.cancel_requested.is_some() && n.status == Status::Claimed),
                false => assert_eq!(n.status, Status::Cancelled),
            }
        }
        (_, Ok(Output::Granted(g))) => grant_hands_over(after, archive, g),
        (_, Ok(Output::Claimed(all))) => {
            for g in all {
                grant_hands_over(after, archive, g);
            }
        }
        _ => {}
    }
}

/// A grant hands over the node's checkpoint and the outputs of exactly the prerequisites
/// that are done.
fn grant_hands_over(after: &State, archive: &HashMap<Id, Node>, g: &rules::Grant) {
    let n = after.get(&g.id).unwrap();
    let expect: Vec<(Id, Option<String>)> = n
        .prerequisites()
        .filter_map(|(d, _)| match after.get(&d) {
            Some(p) => (p.status == Status::Done).then(|| (d, p.output.clone())),
            None => {
                let stub = after.archived().get(&d)?;
                (stub.status == Status::Done).then(|| (d, archive[&d].output.clone()))
            }
        })
        .collect();
    assert_eq!(g.inputs, expect, "the inputs of a grant");
    assert_eq!(g.progress, n.progress, "a grant hands over the checkpoint");
}

/// A `claim-next` of `count` that granted fewer left nothing more the actor could have
/// claimed: no ready node whose resources no live claim holds, or the actor at `max_held`.
pub fn a_batch_stops_only_when_nothing_more_may_be_granted(
    after: &State,
    req: &Request,
    result: &Result<Output, Error>,
    now: u64,
) {
    let (Request::ClaimNext { actor, count, .. }, Ok(Output::Claimed(got))) = (req, result) else {
        return;
    };
    assert!(got.len() <= *count as usize, "granted more than asked");
    if got.len() == *count as usize || got.iter().any(|g| g.resumed) {
        return;
    }
    let view = rules::read_at(after, now);
    let held = after
        .nodes()
        .iter()
        .filter(|n| n.is_live_claim(now) && n.holder == Some(*actor))
        .count() as u64;
    if after.settings.max_held > 0 && held >= after.settings.max_held {
        return;
    }
    let live: Vec<&Node> = after
        .nodes()
        .iter()
        .filter(|n| n.is_live_claim(now))
        .collect();
    for pick in claimdag::schedule::order(&view, "", "") {
        let n = view.get(&pick.id).unwrap();
        let free = !n.resources.iter().any(|r| {
            live.iter()
                .any(|c| c.resources.iter().any(|h| rules::resources_conflict(r, h)))
        });
        assert!(
            !free,
            "a batch of {count} granted {} and left {} ready",
            got.len(),
            n.id
        );
    }
}
