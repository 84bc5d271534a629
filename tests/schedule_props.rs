//! The pick order the state keeps up to date (`schedule::pick_order`) against the full
//! recomputation, over random DAGs and random changes: after every change the index equals a
//! fresh build, and `order`/`best` (read from it) give exactly what `order_full`/`best_full`
//! give, for every workspace and role, now and after the leases ran out.

use claimdag::model::{Node, Status};
use claimdag::rules::{self, Plan, PlanNode, Request, Upsert};
use claimdag::schedule;
use claimdag::state::State;
use claimdag::store::embedded::snapshot;
use claimdag::{Id, Settings};
use proptest::prelude::*;
use std::collections::HashMap;

const SUMMARIES: [&str; 8] = ["a", "b", "c", "d", "e", "f", "g", "h"];
const WORKSPACES: [&str; 2] = ["", "w"];
const ROLES: [&str; 2] = ["", "r"];

#[derive(Debug, Clone)]
enum Op {
    Upsert {
        s: usize,
        ws: usize,
        est: u64,
        prio: i64,
        role: usize,
        /// A `not_before` this long after now.
        nb: Option<u64>,
    },
    Link {
        p: usize,
        c: usize,
        ws: usize,
        soft: bool,
    },
    Unlink {
        p: usize,
        c: usize,
        ws: usize,
    },
    Claim {
        n: usize,
        ws: usize,
        a: u8,
        ttl: u64,
    },
    ClaimNext {
        ws: usize,
        role: usize,
        a: u8,
    },
    Complete {
        n: usize,
        ws: usize,
        status: u8,
    },
    Release {
        n: usize,
        ws: usize,
        retry: Option<u64>,
    },
    Reopen {
        n: usize,
        ws: usize,
    },
    Reclaim {
        ws: usize,
    },
    Archive {
        n: usize,
        ws: usize,
    },
    Unarchive {
        n: usize,
        ws: usize,
    },
    Cap {
        cap: Option<u32>,
        /// The store's retry_delay: hand-backs then schedule the node.
        delay: u64,
    },
    /// A plan of (summary, estimate, waits on the plan node before, waits on an existing
    /// node): more than eight nodes take the batch path of the index.
    Import {
        ws: usize,
        nodes: Vec<(usize, u64, bool, Option<usize>)>,
    },
}

fn op() -> impl Strategy<Value = Op> {
    let n = 0..SUMMARIES.len();
    let ws = 0..WORKSPACES.len();
    prop_oneof![
        5 => (n.clone(), ws.clone(), 1u64..3, -1i64..2, 0..ROLES.len(), proptest::option::weighted(0.3, 0u64..8000))
            .prop_map(|(s, ws, est, prio, role, nb)| Op::Upsert { s, ws, est, prio, role, nb }),
        5 => (n.clone(), n.clone(), ws.clone(), any::<bool>()).prop_map(|(p, c, ws, soft)| Op::Link { p, c, ws, soft }),
        1 => (n.clone(), n.clone(), ws.clone()).prop_map(|(p, c, ws)| Op::Unlink { p, c, ws }),
        3 => (n.clone(), ws.clone(), 0u8..3, 1u64..3000).prop_map(|(n, ws, a, ttl)| Op::Claim { n, ws, a, ttl }),
        3 => (ws.clone(), 0..ROLES.len(), 0u8..3).prop_map(|(ws, role, a)| Op::ClaimNext { ws, role, a }),
        4 => (n.clone(), ws.clone(), 0u8..3).prop_map(|(n, ws, status)| Op::Complete { n, ws, status }),
        1 => (n.clone(), ws.clone(), proptest::option::of(0u64..8000)).prop_map(|(n, ws, retry)| Op::Release { n, ws, retry }),
        2 => (n.clone(), ws.clone()).prop_map(|(n, ws)| Op::Reopen { n, ws }),
        1 => ws.clone().prop_map(|ws| Op::Reclaim { ws }),
        2 => (n.clone(), ws.clone()).prop_map(|(n, ws)| Op::Archive { n, ws }),
        2 => (n.clone(), ws.clone()).prop_map(|(n, ws)| Op::Unarchive { n, ws }),
        1 => (proptest::option::of(1u32..3), prop_oneof![Just(0u64), 1u64..3000]).prop_map(|(cap, delay)| Op::Cap { cap, delay }),
        2 => (ws.clone(), proptest::collection::vec((0..40usize, 1u64..3, any::<bool>(), proptest::option::of(n.clone())), 1..20))
            .prop_map(|(ws, nodes)| Op::Import { ws, nodes }),
    ]
}

fn id(s: usize, ws: usize) -> Id {
    Id::mint(WORKSPACES[ws], "task", None, SUMMARIES[s])
}

fn actor(a: u8) -> Id {
    let mut b = [0u8; 16];
    b[15] = a + 1;
    Id(b)
}

fn request(state: &State, op: &Op, now: u64) -> Request {
    let gen = |n: Id| state.get(&n).map(|n| n.generation).unwrap_or(1);
    let holder = |n: Id| state.get(&n).and_then(|n| n.holder).unwrap_or_default();
    match *op {
        Op::Upsert {
            s,
            ws,
            est,
            prio,
            role,
            nb,
        } => Request::Upsert(Upsert {
            summary: SUMMARIES[s].into(),
            workspace: WORKSPACES[ws].into(),
            estimate: Some(est),
            priority: Some(prio),
            role: Some(ROLES[role].into()),
            not_before: nb.map(|d| now + d),
            ..Upsert::default()
        }),
        Op::Link { p, c, ws, soft } => Request::Link {
            parent: id(p, ws),
            child: id(c, ws),
            soft,
        },
        Op::Unlink { p, c, ws } => Request::Unlink {
            parent: id(p, ws),
            child: id(c, ws),
        },
        Op::Claim { n, ws, a, ttl } => Request::Claim {
            node: id(n, ws),
            actor: actor(a),
            gen: None,
            ttl_ms: Some(ttl),
        },
        Op::ClaimNext { ws, role, a } => Request::ClaimNext {
            workspace: WORKSPACES[ws].into(),
            actor: actor(a),
            role: Some(ROLES[role].into()),
            ttl_ms: Some(1000),
            resume: false,
            count: 1,
        },
        Op::Complete { n, ws, status } => Request::Complete(claimdag::rules::Finish {
            node: id(n, ws),
            status: [Status::Done, Status::Failed, Status::Cancelled][status as usize],
            gen: gen(id(n, ws)),
            actor: None,
            note: None,
            output: None,
            held: false,
        }),
        Op::Release { n, ws, retry } => Request::Release {
            node: id(n, ws),
            actor: holder(id(n, ws)),
            gen: gen(id(n, ws)),
            retry_in_ms: retry,
        },
        Op::Reopen { n, ws } => Request::Reopen {
            node: id(n, ws),
            gen: None,
        },
        Op::Reclaim { ws } => Request::Reclaim {
            workspace: WORKSPACES[ws].into(),
            lease_ms: Some(0),
        },
        Op::Archive { n, ws } => Request::Archive {
            workspace: WORKSPACES[ws].into(),
            nodes: vec![id(n, ws)],
            older_than_ms: None,
        },
        Op::Unarchive { n, ws } => Request::Unarchive { node: id(n, ws) },
        Op::Cap { cap, delay } => Request::Configure(Settings {
            max_held: 0,
            max_attempts: cap,
            retry_delay_ms: delay,
            retry_delay_max_ms: delay * 4,
            ..Settings::default()
        }),
        Op::Import { ws, ref nodes } => import_request(state, ws, nodes),
    }
}

/// An import into workspace `ws` of a plan of `nodes` (summary, estimate, waits on the one
/// before, waits on an existing node), keys `k0`, `k1`, ...
fn import_request(
    state: &State,
    ws: usize,
    nodes: &[(usize, u64, bool, Option<usize>)],
) -> Request {
    let mut plan = Plan::default();
    for (k, &(s, est, prev, existing)) in nodes.iter().enumerate() {
        let mut deps = Vec::new();
        if prev && k > 0 {
            deps.push(format!("k{}", k - 1));
        }
        if let Some(e) = existing.filter(|e| state.get(&id(*e, ws)).is_some()) {
            deps.push(id(e, ws).hex());
        }
        plan.nodes.push(PlanNode {
            key: format!("k{k}"),
            summary: format!("plan {s}"),
            estimate: Some(est),
            deps,
            ..PlanNode::default()
        });
    }
    Request::Import {
        workspace: WORKSPACES[ws].into(),
        plan,
    }
}

/// The index equals a fresh build, and its picks equal the full recomputation.
fn check(state: &State, now: u64) -> Result<(), TestCaseError> {
    let diff = state.pick_order().differences(state.nodes(), state);
    prop_assert!(diff.is_empty(), "the index drifted: {:?}", diff);
    for t in [now, now + 2_500, now + 9_000] {
        let tx = rules::read_at(state, t);
        for ws in WORKSPACES {
            for role in ROLES {
                prop_assert_eq!(
                    schedule::order(&tx, ws, role),
                    schedule::order_full(&tx, ws, role)
                );
                prop_assert_eq!(
                    schedule::best(&tx, ws, role),
                    schedule::best_full(&tx, ws, role)
                );
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

    #[test]
    fn the_kept_pick_order_equals_the_full_recomputation(ops in proptest::collection::vec((op(), 0u64..1500), 1..80)) {
        let mut state = State::new(Settings { max_held: 0, ..Settings::default() });
        let mut archive: HashMap<Id, Node> = HashMap::new();
        let mut now = 1_000_000u64;
        for (op, step) in &ops {
            now += step;
            let req = request(&state, op, now);
            if let Ok(e) = rules::apply(&state, &archive, &req, now) {
                state.apply(&e.change);
                for n in &e.change.nodes {
                    archive.remove(&n.id);
                }
                for n in &e.change.archived {
                    archive.insert(n.id, n.clone());
                }
            }
            check(&state, now)?;
        }
        // A state rebuilt from its nodes (a reload) picks the same.
        let reloaded = State::from_parts(state.settings.clone(), state.nodes().to_vec(), state.archived().clone());
        for ws in WORKSPACES {
            for role in ROLES {
                let (a, b) = (rules::read_at(&state, now), rules::read_at(&reloaded, now));
                prop_assert_eq!(schedule::order(&a, ws, role), schedule::order(&b, ws, role));
            }
        }
    }
}

/// Applies `op` to `state` (and the archive beside it) as a store would; the change it made.
fn step(
    state: &State,
    archive: &mut HashMap<Id, Node>,
    op: &Op,
    now: u64,
) -> Option<claimdag::model::Change> {
    let e = rules::apply(state, archive, &request(state, op, now), now).ok()?;
    for n in &e.change.nodes {
        archive.remove(&n.id);
    }
    for n in &e.change.archived {
        archive.insert(n.id, n.clone());
    }
    Some(e.change)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    /// A snapshot stores its pick order; a process that reads the snapshot takes it from
    /// there (before or after the journal's changes, which then bring it up to date) instead
    /// of computing it from every node, and it must pick exactly as the full recomputation
    /// on the same state held whole.
    #[test]
    fn a_snapshot_s_stored_pick_order_brought_up_to_date_equals_the_full_recomputation(
        before in proptest::collection::vec((op(), 0u64..1500), 0..60),
        after in proptest::collection::vec((op(), 0u64..1500), 0..40),
        early in any::<bool>(),
        sweep in 0u8..4,
        store in proptest::bool::weighted(0.8),
    ) {
        let mut whole = State::new(Settings { max_held: 0, ..Settings::default() });
        let mut archive: HashMap<Id, Node> = HashMap::new();
        let mut now = 1_000_000u64;
        for (op, dt) in &before {
            now += dt;
            if let Some(c) = step(&whole, &mut archive, op, now) {
                whole.apply(&c);
            }
        }
        let mut bytes = Vec::new();
        // Most snapshots store the order; one that does not (a large store) computes it.
        snapshot::write_with(&mut bytes, &whole, 1, store).unwrap();
        let (mut read, _) = snapshot::read(&bytes, std::path::Path::new("snapshot.json")).unwrap();
        prop_assert!(read.is_layered());
        prop_assert_eq!(read.has_stored_order(), store);
        if early {
            // Taken from the snapshot now, then kept up to date change by change.
            let _ = read.pick_order();
        }
        let mut cap_moved = false;
        for (op, dt) in &after {
            now += dt;
            if let Some(c) = step(&whole, &mut archive, op, now) {
                cap_moved |= c.settings.is_some();
                read.apply(&c);
                whole.apply(&c);
            }
        }
        if sweep == 2 {
            // Finish every other node that can be: the nodes waiting on them become ready.
            finish_every_other_node(&mut whole, &mut read, &archive, now);
        }
        if sweep == 3 {
            // Cancel every other node still to do, ready or not: the chains above lose them.
            cancel_every_other_todo_node(&mut whole, &mut read, &archive, now);
        }
        if sweep > 0 {
            // Archive every finished node: the snapshot's among them leave the stored order.
            archive_every_finished_node(&mut whole, &mut read, &mut archive, now);
        }
        // Nothing asked for every node of the read state: its pick order comes from the
        // snapshot (unless the attempt cap moved, when it is built from the nodes).
        prop_assert!(read.is_layered() || (early && cap_moved) || !store);
        let diff = read.pick_order().differences(whole.nodes(), &whole);
        prop_assert!(diff.is_empty(), "the stored pick order drifted: {:?}", diff);
        for t in [now, now + 2_500, now + 9_000] {
            let (r, w) = (rules::read_at(&read, t), rules::read_at(&whole, t));
            for ws in WORKSPACES {
                for role in ROLES {
                    prop_assert_eq!(schedule::order(&r, ws, role), schedule::order_full(&w, ws, role));
                    prop_assert_eq!(schedule::best(&r, ws, role), schedule::best_full(&w, ws, role));
                }
            }
        }
        prop_assert!(read.damage().is_none());
        prop_assert!(read == whole);
    }
}

/// Claims and completes every other node of `whole` that can be, applying each change to
/// `read` too.
fn finish_every_other_node(
    whole: &mut State,
    read: &mut State,
    archive: &HashMap<Id, Node>,
    now: u64,
) {
    let ids: Vec<Id> = whole.nodes().iter().map(|n| n.id).step_by(2).collect();
    for id in ids {
        let claim = Request::Claim {
            node: id,
            actor: actor(0),
            gen: None,
            ttl_ms: Some(60_000),
        };
        let Ok(e) = rules::apply(whole, archive, &claim, now) else {
            continue;
        };
        read.apply(&e.change);
        whole.apply(&e.change);
        let gen = whole.get(&id).map(|n| n.generation).unwrap_or(0);
        let done = Request::Complete(claimdag::rules::Finish {
            node: id,
            status: Status::Done,
            gen,
            actor: None,
            note: None,
            output: None,
            held: false,
        });
        if let Ok(e) = rules::apply(whole, archive, &done, now) {
            read.apply(&e.change);
            whole.apply(&e.change);
        }
    }
}

/// Cancels every other node of `whole` still to do, applying each change to `read` too.
fn cancel_every_other_todo_node(
    whole: &mut State,
    read: &mut State,
    archive: &HashMap<Id, Node>,
    now: u64,
) {
    let ids: Vec<Id> = whole
        .nodes()
        .iter()
        .filter(|n| n.status == Status::Todo)
        .map(|n| n.id)
        .step_by(2)
        .collect();
    for id in ids {
        let gen = whole.get(&id).map(|n| n.generation).unwrap_or(0);
        let cancel = Request::Complete(claimdag::rules::Finish {
            node: id,
            status: Status::Cancelled,
            gen,
            actor: None,
            note: None,
            output: None,
            held: false,
        });
        if let Ok(e) = rules::apply(whole, archive, &cancel, now) {
            read.apply(&e.change);
            whole.apply(&e.change);
        }
    }
}

/// Archives every finished node of every workspace, in `archive` too, applying each change
/// to `read` too.
fn archive_every_finished_node(
    whole: &mut State,
    read: &mut State,
    archive: &mut HashMap<Id, Node>,
    now: u64,
) {
    for ws in WORKSPACES {
        let req = Request::Archive {
            workspace: ws.into(),
            nodes: vec![],
            older_than_ms: None,
        };
        if let Ok(e) = rules::apply(whole, archive, &req, now) {
            for n in &e.change.archived {
                archive.insert(n.id, n.clone());
            }
            read.apply(&e.change);
            whole.apply(&e.change);
        }
    }
}
