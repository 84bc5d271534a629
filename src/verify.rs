//! The invariants `check` verifies on a loaded state, pure: every prerequisite exists, no
//! cycle, holders only on claimed nodes, claims carry their lease, generations at least 1,
//! no two claims hold resources that conflict, and the pick order a snapshot stores is the
//! one its nodes give.

use crate::id::Id;
use crate::rules::resources_conflict;
use crate::model::Status;
use crate::state::State;
use std::collections::HashMap;

/// Every broken invariant, one sentence each; empty when the state is sound.
pub fn problems(state: &State) -> Vec<String> {
    let mut out = Vec::new();
    // The pick order a snapshot stores, brought up to date with the journal, is the one its
    // nodes give (asked for before anything decodes every node, so that it is the stored one).
    let drift = if state.has_stored_order() {
        state.pick_order().differences(state.nodes(), state)
    } else {
        Vec::new()
    };
    if !drift.is_empty() {
        let parts: Vec<&str> = drift
            .iter()
            .map(|d| d.split(':').next().unwrap_or_default())
            .collect();
        out.push(format!(
            "the pick order the snapshot stores does not match its nodes ({})",
            parts.join(", ")
        ));
    }
    out.extend(kept_sets_problems(state));
    out.extend(resource_problems(state));
    for n in state.nodes() {
        let id = n.id;
        if n.generation == 0 {
            out.push(format!("node {id} has generation 0"));
        }
        for (dep, _) in n.prerequisites() {
            if state.status_of(&dep).is_none() {
                out.push(format!("node {id} waits on {dep}, which does not exist"));
            }
        }
        if let Some(p) = n.parent {
            if state.status_of(&p).is_none() {
                out.push(format!("node {id} has parent {p}, which does not exist"));
            }
        }
        match n.status {
            Status::Claimed => {
                if n.holder.is_none() || n.renewed_at.is_none() || n.ttl_ms.is_none() {
                    out.push(format!("claimed node {id} lacks a holder or a lease"));
                }
                if n.attempts == 0 {
                    out.push(format!("claimed node {id} has 0 attempts"));
                }
            }
            _ => {
                if n.holder.is_some() {
                    out.push(format!("node {id} is {} but has a holder", n.status));
                }
                if n.cancel_requested.is_some() {
                    out.push(format!(
                        "node {id} is {} but has a cancel request (only a holder is asked to stop)",
                        n.status
                    ));
                }
            }
        }
        if n.output.is_some() && !n.status.is_terminal() {
            out.push(format!(
                "node {id} is {} but has an output (only a completion stores one)",
                n.status
            ));
        }
        if let Some(t) = n.not_before.filter(|t| *t > crate::duration::LATEST_TIME) {
            out.push(format!(
                "node {id} has not_before {t}, past the latest time a store keeps ({})",
                crate::duration::format_time(crate::duration::LATEST_TIME)
            ));
        }
        if n.created_at > n.updated_at {
            out.push(format!("node {id} was updated before it was created"));
        }
    }
    if let Some(cycle) = find_cycle(state) {
        out.push(format!(
            "the prerequisites form a cycle through node {cycle}"
        ));
    }
    out
}

/// Two claims of one workspace whose resources conflict (they overlap and one of them
/// writes): the rules never grant that (an expired claim is handed back in the write that
/// grants the next), so a store that holds it was edited or is broken.
fn resource_problems(state: &State) -> Vec<String> {
    let mut by_ws: HashMap<&str, Vec<&crate::model::Node>> = HashMap::new();
    for n in state.nodes() {
        if n.status == Status::Claimed && !n.resources.is_empty() {
            by_ws.entry(n.workspace.as_str()).or_default().push(n);
        }
    }
    let mut out = Vec::new();
    for claims in by_ws.values() {
        for (i, a) in claims.iter().enumerate() {
            for b in &claims[i + 1..] {
                let conflict = a.resources.iter().find_map(|ra| {
                    let rb = b.resources.iter().find(|rb| resources_conflict(ra, rb))?;
                    Some((ra, rb))
                });
                if let Some((ra, rb)) = conflict {
                    out.push(format!(
                        "claimed nodes {} and {} hold conflicting resources {ra:?} and {rb:?}",
                        a.id, b.id
                    ));
                }
            }
        }
    }
    out.sort();
    out
}

/// The claims and the scheduled nodes a snapshot lists are the nodes it stores as claimed,
/// and its `todo` nodes with a `not_before`.
fn kept_sets_problems(state: &State) -> Vec<String> {
    let mut out = Vec::new();
    let claimed: std::collections::BTreeSet<Id> = state
        .nodes()
        .iter()
        .filter(|n| n.status == Status::Claimed)
        .map(|n| n.id)
        .collect();
    if claimed != *state.claimed_ids() {
        out.push(format!(
            "the snapshot lists {} claimed nodes where {} nodes are claimed",
            state.claimed_ids().len(),
            claimed.len()
        ));
    }
    let scheduled: std::collections::BTreeMap<Id, u64> = state
        .nodes()
        .iter()
        .filter(|n| n.status == Status::Todo)
        .filter_map(|n| Some((n.id, n.not_before?)))
        .collect();
    if scheduled != *state.scheduled() {
        out.push(format!(
            "the snapshot lists {} scheduled nodes where {} nodes have a not_before",
            state.scheduled().len(),
            scheduled.len()
        ));
    }
    let rated: std::collections::BTreeMap<Id, u64> = (state.nodes().iter())
        .filter_map(|n| Some((n.id, *n.rate_grants.last()?)))
        .collect();
    if rated != *state.rated() {
        out.push(format!(
            "the snapshot lists {} nodes granted under a rate where {} nodes have rate grants",
            state.rated().len(),
            rated.len()
        ));
    }
    out
}

/// A node on a cycle of prerequisites, if there is one (iterative, so deep chains are fine).
fn find_cycle(state: &State) -> Option<Id> {
    // 0 = unseen, 1 = on the current path, 2 = finished.
    let mut mark: HashMap<Id, u8> = HashMap::with_capacity(state.len());
    for root in state.nodes() {
        if mark.contains_key(&root.id) {
            continue;
        }
        let mut stack: Vec<(Id, usize)> = vec![(root.id, 0)];
        mark.insert(root.id, 1);
        while let Some((id, i)) = stack.pop() {
            let deps: Vec<Id> = state
                .get(&id)
                .map(|n| n.prerequisites().map(|(d, _)| d).collect())
                .unwrap_or_default();
            if i < deps.len() {
                stack.push((id, i + 1));
                let d = deps[i];
                match mark.get(&d) {
                    Some(1) => return Some(d),
                    Some(_) => {}
                    None => {
                        mark.insert(d, 1);
                        stack.push((d, 0));
                    }
                }
            } else {
                mark.insert(id, 2);
            }
        }
    }
    None
}

/// True for an event that moves its node's generation by one: a grant, a hand-back, a
/// reopen, a retry, a container opened again.
pub fn moves_generation(e: &crate::model::Event) -> bool {
    match e.verb.as_str() {
        "claim" | "release" | "expire" | "reclaim" | "reopen" | "retry" => true,
        "settle" => e.detail.as_deref() == Some("todo"),
        _ => false,
    }
}

/// Generations against the history: every node's generation is 1 plus the grants and
/// hand-backs recorded for it, and every archived stub has its node in the archive.
pub fn history_problems(
    state: &State,
    history: &[crate::model::HistoryLine],
    archive: &HashMap<Id, crate::model::Node>,
) -> Vec<String> {
    let mut moves: HashMap<Id, u64> = HashMap::new();
    let mut seen: HashMap<Id, bool> = HashMap::new();
    // Whether a node's last ending or reopening in the history is an ending.
    let mut ended: HashMap<Id, bool> = HashMap::new();
    for h in history {
        if let Some(id) = h.event.node {
            seen.insert(id, true);
            match h.event.verb.as_str() {
                // A `cancel` ends a `todo` node (a `cancel_request` asks a holder to stop).
                // A gate ends by a person's `approve` or `reject`.
                "complete" | "cancel" | "approve" | "reject" => {
                    ended.insert(id, true);
                }
                "reopen" => {
                    ended.insert(id, false);
                }
                // A container follows its children: settled when they all finished,
                // open again (at a new generation) when one is.
                "settle" => {
                    ended.insert(id, h.event.detail.as_deref() != Some("todo"));
                }
                _ => {}
            }
            if moves_generation(&h.event) {
                *moves.entry(id).or_default() += 1;
            }
        }
    }
    let mut out = Vec::new();
    let nodes = state.nodes().iter().chain(archive.values());
    for n in nodes {
        if !seen.contains_key(&n.id) {
            out.push(format!("node {} has no history", n.id));
            continue;
        }
        if n.status.is_terminal() && ended.get(&n.id) != Some(&true) {
            out.push(format!(
                "node {} is {} but its history does not record it ending",
                n.id, n.status
            ));
        }
        let expected = 1 + moves.get(&n.id).copied().unwrap_or(0);
        if n.generation != expected {
            out.push(format!(
                "node {} is at generation {} but its history accounts for {expected}",
                n.id, n.generation
            ));
        }
    }
    let mut missing: Vec<&Id> = seen
        .keys()
        .filter(|id| state.get(id).is_none() && !archive.contains_key(id))
        .collect();
    missing.sort();
    for id in missing {
        out.push(format!(
            "the history names node {id}, which the store lacks"
        ));
    }
    for id in state.archived().keys() {
        if !archive.contains_key(id) {
            out.push(format!("archived node {id} is missing from the archive"));
        }
    }
    out
}
