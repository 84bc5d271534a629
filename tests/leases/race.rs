//! Many workers on one store at once: eight concurrent worker loops of `claim-next` and
//! `complete` over 300 nodes. Every node is granted exactly once and ends done by the worker
//! it was granted to.

use crate::common::{actor, parse_gen, Store};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

const NODES: usize = 300;
const WORKERS: u64 = 8;

/// One worker: claim the next node, complete it with the generation granted, until nothing
/// is left. Returns the grants in order.
fn worker(s: &Store, me: &str) -> Vec<(String, u64)> {
    let mut grants = Vec::new();
    loop {
        let r = s.run(&["claim-next", "--assignee", me]);
        match r.code {
            Some(1) if r.stdout.is_empty() => return grants,
            Some(0) => {}
            _ => panic!("claim-next for {me}: {:?} {}", r.code, r.stderr),
        }
        let id = r.stdout.split_whitespace().next().expect("id").to_string();
        let g = parse_gen(&r.stdout);
        grants.push((id.clone(), g));
        let done = s.run(&[
            "complete",
            &id,
            "--status",
            "done",
            "--gen",
            &g.to_string(),
            "--actor",
            me,
        ]);
        assert_eq!(
            done.code,
            Some(0),
            "{me} could not complete {id} at gen {g}: {}",
            done.stderr
        );
    }
}

#[test]
fn concurrent_workers_never_get_the_same_node() {
    let s = Arc::new(Store::new());
    let ids = create_from_four_threads(&s);
    let created: BTreeSet<&String> = ids.iter().collect();
    assert_eq!(created.len(), NODES);
    assert_eq!(s.all().len(), NODES);

    let per_worker: Vec<(String, Vec<(String, u64)>)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (1..=WORKERS)
            .map(|w| {
                let s = &s;
                scope.spawn(move || {
                    let me = actor(0x100 + w);
                    let grants = worker(s, &me);
                    (me, grants)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("worker"))
            .collect()
    });

    let mut granted_to: BTreeMap<String, String> = BTreeMap::new();
    for (me, grants) in &per_worker {
        for (id, g) in grants {
            assert_eq!(*g, 2, "{id} was granted at gen {g}: it was claimed before");
            if let Some(other) = granted_to.insert(id.clone(), me.clone()) {
                panic!("{id} was granted twice: to {other} and to {me}");
            }
        }
    }
    let counts: Vec<usize> = per_worker.iter().map(|(_, g)| g.len()).collect();
    eprintln!("grants per worker: {counts:?}");
    assert_eq!(granted_to.len(), NODES, "every node granted once");

    let all = s.all();
    assert_eq!(all.len(), NODES);
    for (id, n) in &all {
        assert_eq!(n["status"], "done", "{id}: {n}");
        assert_eq!(n["generation"], 2, "{id}: {n}");
        assert_eq!(n["attempts"], 1, "{id}: {n}");
        assert_eq!(
            n["completed_by"].as_str(),
            granted_to.get(id).map(String::as_str),
            "{id} was completed by someone other than its grantee"
        );
    }
    one_claim_and_one_complete_per_node(&s);
    assert!(s.ok(&["check"]).starts_with("ok"));
    let r = s.run(&["claim-next", "--assignee", &actor(1)]);
    assert_eq!(r.code, Some(1));
}

/// Creates the nodes from four threads at once (upserts race on the lock too); returns
/// their ids.
fn create_from_four_threads(s: &Store) -> Vec<String> {
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..4)
            .map(|t| {
                scope.spawn(move || {
                    (0..NODES / 4)
                        .map(|i| s.upsert(&format!("node {t}-{i}"), &[]))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("creator"))
            .collect()
    })
}

/// The history has one claim and one complete per node.
fn one_claim_and_one_complete_per_node(s: &Store) {
    let log = s.json(&["log"]);
    let log = log.as_array().expect("log array");
    for verb in ["claim", "complete"] {
        let mut per_node: BTreeMap<&str, usize> = BTreeMap::new();
        for e in log.iter().filter(|e| e["verb"] == verb) {
            *per_node
                .entry(e["node"].as_str().unwrap_or(""))
                .or_default() += 1;
        }
        assert_eq!(per_node.len(), NODES, "{verb} events");
        assert!(
            per_node.values().all(|&c| c == 1),
            "{verb} twice for a node"
        );
    }
}
