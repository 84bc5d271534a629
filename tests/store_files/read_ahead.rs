//! A pick reads the snapshot's stored pick order before it takes the store's lock
//! (`Backend::before_pick`), so the locked step only catches up with what was appended
//! since. Property: whatever other handles (other processes, to the files) write between
//! that read and the pick, compactions that replace the snapshot included, the pick is the
//! one a handle opened afresh makes.

use crate::common::{unsynced, unsynced_backend};
use claimdag::rules::{Plan, PlanNode};
use claimdag::store::Backend;
use claimdag::{Actor, Id, Status, Store, Upsert};
use proptest::prelude::*;

/// What another handle does meanwhile. The bool: through a handle that compacts after every
/// write (the snapshot, and its stored order, is replaced).
#[derive(Debug, Clone)]
enum Op {
    ClaimNext(bool),
    /// Complete the oldest claim still held (done or failed).
    Complete(bool, bool),
    /// A new node with this priority, waiting on the node of this creation rank if any.
    Put(bool, i64, Option<usize>),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => any::<bool>().prop_map(Op::ClaimNext),
        2 => (any::<bool>(), any::<bool>()).prop_map(|(c, d)| Op::Complete(c, d)),
        2 => (any::<bool>(), -2i64..4, proptest::option::of(0usize..40))
            .prop_map(|(c, p, d)| Op::Put(c, p, d)),
    ]
}

/// 24 nodes with priorities, estimates and links, so that critical paths decide picks.
fn plan() -> Plan {
    Plan {
        nodes: (0..24)
            .map(|i| PlanNode {
                key: format!("k{i}"),
                summary: format!("node {i}"),
                deps: if i % 3 == 2 {
                    vec![format!("k{}", i / 2)]
                } else {
                    Vec::new()
                },
                priority: Some((i % 4) as i64 - 1),
                estimate: Some(1 + (i % 5) as u64),
                ..PlanNode::default()
            })
            .collect(),
    }
}

fn actor(k: u64) -> Actor {
    let mut b = [0u8; 16];
    b[8..].copy_from_slice(&k.to_be_bytes());
    Id(b)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn a_pick_read_ahead_of_the_lock_is_the_pick_of_a_fresh_handle(
        ops in proptest::collection::vec(op(), 0..12),
        ready_first in any::<bool>(),
    ) {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("store");
        // Every write of `compacting` compacts: the import leaves a snapshot with its
        // stored pick order.
        let compacting = unsynced(&dir, 1);
        let quiet = unsynced(&dir, 1 << 30);
        let mut ids: Vec<Id> = compacting.import("", plan()).unwrap().into_iter().map(|(id, _)| id).collect();
        let ahead = unsynced_backend(&dir, 1 << 30);
        let picker = Store::from_backend(ahead.clone());
        if ready_first {
            // A handle that has picked once keeps its order built; the next read ahead only
            // has the journal to catch up with.
            picker.ready("", None).unwrap();
        }
        ahead.before_pick();
        let (mut held, mut next_actor) = (Vec::new(), 1u64);
        for (k, op) in ops.iter().enumerate() {
            let by = |c: bool| if c { &compacting } else { &quiet };
            match op {
                Op::ClaimNext(c) => {
                    let who = actor(next_actor);
                    next_actor += 1;
                    if let Some((id, g)) = by(*c).claim_next("", who, None, None).unwrap() {
                        held.push((id, g, who));
                    }
                }
                Op::Complete(c, done) => {
                    if !held.is_empty() {
                        let (id, g, who) = held.remove(0);
                        let status = if *done { Status::Done } else { Status::Failed };
                        by(*c).complete(id, status, g, Some(who), None).unwrap();
                    }
                }
                Op::Put(c, priority, dep) => {
                    let id = by(*c).upsert(Upsert {
                        summary: format!("new {k}"),
                        priority: Some(*priority),
                        estimate: Some(3),
                        ..Upsert::default()
                    }).unwrap();
                    if let Some(parent) = dep.and_then(|d| ids.get(d).copied()) {
                        by(*c).link(parent, id, false).unwrap();
                    }
                    ids.push(id);
                }
            }
        }
        let fresh = || unsynced(&dir, 1 << 30);
        let want_ready: Vec<Id> = fresh().ready("", None).unwrap().into_iter().map(|p| p.id).collect();
        let want = fresh().next("", None).unwrap().map(|p| (p.id, p.critical, p.path));
        let got = picker.next("", None).unwrap().map(|p| (p.id, p.critical, p.path));
        prop_assert_eq!(&got, &want, "next after {:?}", ops);
        ahead.before_pick();
        let got_ready: Vec<Id> = picker.ready("", None).unwrap().into_iter().map(|p| p.id).collect();
        prop_assert_eq!(&got_ready, &want_ready, "ready after {:?}", ops);
        ahead.before_pick();
        let who = actor(next_actor);
        let granted = picker.claim_next("", who, None, None).unwrap().map(|(id, _)| id);
        prop_assert_eq!(granted, want.map(|w| w.0), "claim_next after {:?}", ops);
    }
}
