//! The store's history as `log --json` prints it, replayed node by node.

use crate::common::Store;
use serde_json::Value;
use std::collections::BTreeMap;

/// One history event, as `log --json` prints it.
#[derive(Debug, Clone)]
pub(super) struct Ev {
    pub(super) seq: u64,
    pub(super) verb: String,
    pub(super) node: Option<String>,
    pub(super) actor: Option<String>,
    pub(super) gen: Option<u64>,
    pub(super) detail: Option<String>,
}

pub(super) fn events(s: &Store) -> Vec<Ev> {
    let log = s.json(&["log"]);
    let str_of = |v: &Value| v.as_str().map(str::to_string);
    log.as_array()
        .expect("log array")
        .iter()
        .map(|e| Ev {
            seq: e["seq"].as_u64().expect("seq"),
            verb: e["verb"].as_str().expect("verb").to_string(),
            node: str_of(&e["node"]),
            actor: str_of(&e["actor"]),
            gen: e["generation"].as_u64(),
            detail: str_of(&e["detail"]),
        })
        .collect()
}

/// What the history says of one node, replayed.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Replayed {
    pub(super) status: String,
    pub(super) gen: u64,
    pub(super) holder: Option<String>,
    pub(super) archived: bool,
}

/// Replays the history node by node, asserting every transition is legal (SPEC section 3):
/// a grant only of an unclaimed node, at the next generation; renew, release and complete
/// only by the holder at its generation; hand-backs and reopens move the generation by one.
pub(super) fn replay(log: &[Ev]) -> BTreeMap<String, Replayed> {
    let mut nodes: BTreeMap<String, Replayed> = BTreeMap::new();
    for (k, e) in log.iter().enumerate() {
        let Some(id) = &e.node else {
            continue;
        };
        let g = e
            .gen
            .unwrap_or_else(|| panic!("event {k} has no generation: {e:?}"));
        let at = |what: &str| format!("event {k} ({e:?}): {what}");
        if e.verb == "create" {
            assert!(!nodes.contains_key(id), "{}", at("created twice"));
            assert_eq!(g, 1, "{}", at("created at generation 1"));
            nodes.insert(
                id.clone(),
                Replayed {
                    status: "todo".into(),
                    gen: 1,
                    holder: None,
                    archived: false,
                },
            );
            continue;
        }
        let n = nodes
            .get_mut(id)
            .unwrap_or_else(|| panic!("{}", at("a node with no create event")));
        assert!(
            !n.archived || e.verb == "unarchive",
            "{}",
            at("an event of an archived node")
        );
        match e.verb.as_str() {
            "update" | "link" | "unlink" => {
                assert_eq!(g, n.gen, "{}", at("generation unchanged"));
            }
            "claim" | "renew" | "release" | "expire" | "reclaim" => lease_move(n, e, g, &at),
            "complete" | "reopen" | "archive" | "unarchive" => ending_move(n, e, g, &at),
            other => panic!("{}", at(&format!("unknown verb {other}"))),
        }
    }
    nodes
}

/// A grant, a renew or a hand-back (release, expiry, reclaim) of node `n` at generation `g`;
/// `at` words a message about event `e`.
fn lease_move(n: &mut Replayed, e: &Ev, g: u64, at: &dyn Fn(&str) -> String) {
    match e.verb.as_str() {
        "claim" => {
            assert_eq!(n.status, "todo", "{}", at("granted while not todo"));
            assert_eq!(
                g,
                n.gen + 1,
                "{}",
                at("a grant moves the generation by one")
            );
            assert!(e.actor.is_some(), "{}", at("a grant without an actor"));
            n.status = "claimed".into();
            n.holder = e.actor.clone();
            n.gen = g;
        }
        "renew" => {
            assert_eq!(n.status, "claimed", "{}", at("renew of an unclaimed node"));
            assert_eq!(g, n.gen, "{}", at("renew at another generation"));
            assert_eq!(e.actor, n.holder, "{}", at("renew by another actor"));
        }
        "release" | "expire" | "reclaim" => {
            assert_eq!(
                n.status,
                "claimed",
                "{}",
                at("hand-back of an unclaimed node")
            );
            assert_eq!(
                g,
                n.gen + 1,
                "{}",
                at("a hand-back moves the generation by one")
            );
            assert_eq!(e.actor, n.holder, "{}", at("hand-back names the holder"));
            n.status = "todo".into();
            n.holder = None;
            n.gen = g;
        }
        _ => unreachable!("{} is not a lease move", e.verb),
    }
}

/// A completion, a reopen, an archive or an unarchive of node `n` at generation `g`; `at`
/// words a message about event `e`.
fn ending_move(n: &mut Replayed, e: &Ev, g: u64, at: &dyn Fn(&str) -> String) {
    let terminal = matches!(n.status.as_str(), "done" | "failed" | "cancelled");
    match e.verb.as_str() {
        "complete" => {
            let st = e.detail.clone().expect("complete detail");
            assert_eq!(g, n.gen, "{}", at("complete at another generation"));
            match n.status.as_str() {
                "claimed" => assert_eq!(e.actor, n.holder, "{}", at("complete by the holder")),
                "todo" => assert_eq!(st, "cancelled", "{}", at("only a cancel of a todo node")),
                _ => panic!("{}", at("complete of a finished node")),
            }
            n.status = st;
            n.holder = None;
        }
        "reopen" => {
            assert!(terminal, "{}", at("reopen of an unfinished node"));
            assert_eq!(g, n.gen + 1, "{}", at("reopen moves the generation by one"));
            n.status = "todo".into();
            n.gen = g;
        }
        "archive" => {
            assert!(terminal, "{}", at("archive of an unfinished node"));
            assert_eq!(g, n.gen, "{}", at("archive keeps the generation"));
            n.archived = true;
        }
        "unarchive" => {
            assert!(n.archived, "{}", at("unarchive of a live node"));
            assert_eq!(g, n.gen, "{}", at("unarchive keeps the generation"));
            n.archived = false;
        }
        _ => unreachable!("{} is not an ending move", e.verb),
    }
}

/// Removes and returns the index of the first unused event that `want` accepts.
pub(super) fn take(log: &[Ev], used: &mut [bool], want: impl Fn(&Ev) -> bool) -> Option<usize> {
    let i = (0..log.len()).find(|&i| !used[i] && want(&log[i]))?;
    used[i] = true;
    Some(i)
}
