//! Property tests of the rules: random sequences of verbs, actors and clock steps.
//!
//! After every step: generations never decrease and move by exactly one per grant or
//! hand-back; attempts never decrease; only ready nodes are granted; a node's holder is the
//! actor of its newest grant; an expired holder never completes; `max_held` and resource
//! exclusion hold; the invariants `check` verifies hold. The store-level test also checks
//! that a refused call leaves the files byte for byte as they were, and that a fresh load
//! of the files equals the state the writer holds in memory.

use claimdag::model::{Node, Status};
use claimdag::rules::{self, Finish, Output, Plan, PlanNode, Readiness, Request, Upsert};
use claimdag::state::State;
use claimdag::store::{embedded::Tuning, Clock};
use claimdag::{Error, Id, Settings, Store};
use proptest::prelude::*;

#[path = "rules_props/globs.rs"]
mod globs;
#[path = "rules_props/talk.rs"]
mod talk;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use talk::{a_batch_stops_only_when_nothing_more_may_be_granted, talk_keeps_its_promises};

const SUMMARIES: [&str; 6] = ["a", "b", "c", "d", "e", "f"];
const RESOURCES: [&str; 3] = ["src/", "src/x.rs", "db:users"];

#[derive(Debug, Clone)]
enum Op {
    Upsert {
        s: usize,
        res: Option<usize>,
        cap: Option<u32>,
        /// A `not_before` this long after now.
        nb: Option<u64>,
    },
    Link {
        p: usize,
        c: usize,
        soft: bool,
    },
    Unlink {
        p: usize,
        c: usize,
    },
    Claim {
        n: usize,
        a: u8,
        gen: i8,
        ttl: u64,
    },
    ClaimNext {
        a: u8,
        ttl: u64,
        resume: bool,
        /// Claim up to this many in one write.
        count: u32,
    },
    Renew {
        n: usize,
        a: u8,
        gen: i8,
        /// Leave a checkpoint with the renewal.
        progress: bool,
    },
    Release {
        n: usize,
        a: u8,
        gen: i8,
        retry: Option<u64>,
    },
    Reclaim {
        lease: Option<u64>,
    },
    Complete {
        n: usize,
        a: Option<u8>,
        gen: i8,
        status: u8,
        output: bool,
    },
    /// Several completions in one write: (node, generation offset, status).
    CompleteMany {
        items: Vec<(usize, i8, u8)>,
    },
    Cancel {
        n: usize,
        a: Option<u8>,
        gen: i8,
        reason: bool,
    },
    Reopen {
        n: usize,
    },
    Config {
        max_held: u64,
        /// retry_delay, and retry_delay_max as a multiple of it.
        delay: u64,
        cap: u64,
    },
    Archive {
        n: Option<usize>,
    },
    Unarchive {
        n: usize,
    },
    /// A plan of up to three nodes: (summary, dep on the previous plan node, dep on an
    /// existing node by id).
    Import {
        nodes: Vec<(usize, bool, Option<usize>)>,
    },
}

fn op() -> impl Strategy<Value = Op> {
    let n = 0..SUMMARIES.len();
    let a = 0u8..3;
    let gen = -1i8..=1;
    let plan_node = (n.clone(), any::<bool>(), proptest::option::of(n.clone()));
    prop_oneof![
        2 => proptest::option::of(n.clone()).prop_map(|n| Op::Archive { n }),
        2 => n.clone().prop_map(|n| Op::Unarchive { n }),
        2 => proptest::collection::vec(plan_node, 1..4).prop_map(|nodes| Op::Import { nodes }),
        3 => (n.clone(), proptest::option::of(0..RESOURCES.len()), proptest::option::of(1u32..3), proptest::option::weighted(0.3, 0u64..5000))
            .prop_map(|(s, res, cap, nb)| Op::Upsert { s, res, cap, nb }),
        2 => (n.clone(), n.clone(), any::<bool>()).prop_map(|(p, c, soft)| Op::Link { p, c, soft }),
        1 => (n.clone(), n.clone()).prop_map(|(p, c)| Op::Unlink { p, c }),
        4 => (n.clone(), a.clone(), gen.clone(), 1u64..3000).prop_map(|(n, a, gen, ttl)| Op::Claim { n, a, gen, ttl }),
        3 => (a.clone(), 1u64..3000, any::<bool>(), prop_oneof![3 => Just(1u32), 1 => 2u32..5]).prop_map(|(a, ttl, resume, count)| Op::ClaimNext { a, ttl, resume, count }),
        2 => (n.clone(), a.clone(), gen.clone(), any::<bool>()).prop_map(|(n, a, gen, progress)| Op::Renew { n, a, gen, progress }),
        2 => proptest::collection::vec((n.clone(), gen.clone(), 0u8..3), 1..4).prop_map(|items| Op::CompleteMany { items }),
        2 => (n.clone(), proptest::option::of(a.clone()), gen.clone(), any::<bool>()).prop_map(|(n, a, gen, reason)| Op::Cancel { n, a, gen, reason }),
        2 => (n.clone(), a.clone(), gen.clone(), proptest::option::weighted(0.3, 0u64..5000)).prop_map(|(n, a, gen, retry)| Op::Release { n, a, gen, retry }),
        1 => proptest::option::of(0u64..3000).prop_map(|lease| Op::Reclaim { lease }),
        4 => (n.clone(), proptest::option::of(a.clone()), gen.clone(), 0u8..3, any::<bool>())
            .prop_map(|(n, a, gen, status, output)| Op::Complete { n, a, gen, status, output }),
        1 => n.clone().prop_map(|n| Op::Reopen { n }),
        1 => (0u64..3, prop_oneof![Just(0u64), 1u64..2000], 1u64..5).prop_map(|(max_held, delay, cap)| Op::Config { max_held, delay, cap }),
    ]
}

fn actor(a: u8) -> Id {
    let mut b = [0u8; 16];
    b[15] = a + 1;
    Id(b)
}

fn node_id(s: usize) -> Id {
    Id::mint("", "task", None, SUMMARIES[s])
}

fn gen_of(state: &State, id: Id, delta: i8) -> u64 {
    let g = state.get(&id).map(|n| n.generation).unwrap_or(1);
    g.saturating_add_signed(delta as i64).max(1)
}

fn request(state: &State, op: &Op, now: u64) -> Request {
    match *op {
        Op::Upsert { s, res, cap, nb } => Request::Upsert(Upsert {
            summary: SUMMARIES[s].to_string(),
            resources: res.map(|r| vec![RESOURCES[r].to_string()]),
            max_attempts: cap,
            not_before: nb.map(|d| now + d),
            ..Upsert::default()
        }),
        Op::Link { p, c, soft } => Request::Link {
            parent: node_id(p),
            child: node_id(c),
            soft,
        },
        Op::Unlink { p, c } => Request::Unlink {
            parent: node_id(p),
            child: node_id(c),
        },
        Op::Claim { n, a, gen, ttl } => Request::Claim {
            node: node_id(n),
            actor: actor(a),
            gen: (gen != -1).then(|| gen_of(state, node_id(n), gen)),
            ttl_ms: Some(ttl),
        },
        Op::ClaimNext {
            a,
            ttl,
            resume,
            count,
        } => Request::ClaimNext {
            workspace: String::new(),
            actor: actor(a),
            role: None,
            ttl_ms: Some(ttl),
            resume,
            count,
        },
        Op::Renew {
            n,
            a,
            gen,
            progress,
        } => Request::Renew {
            node: node_id(n),
            actor: actor(a),
            gen: (gen != -1).then(|| gen_of(state, node_id(n), gen)),
            ttl_ms: None,
            progress: progress.then(|| format!("step at {now}")),
            usage: None,
        },
        Op::Release { n, a, gen, retry } => Request::Release {
            node: node_id(n),
            actor: actor(a),
            gen: gen_of(state, node_id(n), gen),
            retry_in_ms: retry,
        },
        Op::Reclaim { lease } => Request::Reclaim {
            workspace: String::new(),
            lease_ms: lease,
        },
        Op::Complete {
            n,
            a,
            gen,
            status,
            output,
        } => Request::Complete(Finish {
            node: node_id(n),
            status: [Status::Done, Status::Failed, Status::Cancelled][status as usize],
            gen: gen_of(state, node_id(n), gen),
            actor: a.map(actor),
            note: None,
            output: output.then(|| serde_json::json!({"made": SUMMARIES[n], "at": now})),
            held: false,
        }),
        Op::CompleteMany { ref items } => Request::CompleteMany(
            items
                .iter()
                .map(|&(n, gen, status)| Finish {
                    node: node_id(n),
                    status: [Status::Done, Status::Failed, Status::Cancelled][status as usize],
                    gen: gen_of(state, node_id(n), gen),
                    actor: None,
                    note: None,
                    output: Some(serde_json::json!([n, now])),
                    held: false,
                })
                .collect(),
        ),
        Op::Cancel { n, a, gen, reason } => Request::Cancel {
            node: node_id(n),
            actor: a.map(actor),
            reason: reason.then(|| "wrong approach".to_string()),
            gen: (gen != -1).then(|| gen_of(state, node_id(n), gen)),
        },
        Op::Reopen { n } => Request::Reopen {
            node: node_id(n),
            gen: None,
        },
        Op::Config {
            max_held,
            delay,
            cap,
        } => Request::Configure(Settings {
            max_held,
            retry_delay_ms: delay,
            retry_delay_max_ms: delay * cap,
            ..Settings::default()
        }),
        Op::Archive { n } => Request::Archive {
            workspace: String::new(),
            nodes: n.map(node_id).into_iter().collect(),
            older_than_ms: None,
        },
        Op::Unarchive { n } => Request::Unarchive { node: node_id(n) },
        Op::Import { ref nodes } => import_request(state, nodes),
    }
}

/// An import of a plan of `nodes` (summary, waits on the one before, waits on an existing
/// node), keys `k0`, `k1`, ...
fn import_request(state: &State, nodes: &[(usize, bool, Option<usize>)]) -> Request {
    let mut plan = Plan::default();
    for (k, (s, dep_prev, dep_existing)) in nodes.iter().enumerate() {
        let mut deps = Vec::new();
        if *dep_prev && k > 0 {
            deps.push(format!("k{}", k - 1));
        }
        if let Some(e) = dep_existing {
            if state.status_of(&node_id(*e)).is_some() && *e != *s {
                deps.push(node_id(*e).hex());
            }
        }
        plan.nodes.push(PlanNode {
            key: format!("k{k}"),
            summary: SUMMARIES[*s].to_string(),
            deps,
            ..PlanNode::default()
        });
    }
    Request::Import {
        workspace: String::new(),
        plan,
    }
}

/// The archive the pure rules read: each archived node's last value.
fn archive_after(archive: &mut HashMap<Id, Node>, effect_change: &claimdag::model::Change) {
    for n in &effect_change.nodes {
        archive.remove(&n.id);
    }
    for n in &effect_change.archived {
        archive.insert(n.id, n.clone());
    }
}

/// Generations never go back and no (node, generation) is granted twice, whether the node
/// is live or archived in between.
fn check_history(
    after: &State,
    highest: &mut HashMap<Id, u64>,
    granted: &mut HashSet<(Id, u64)>,
    output: &Result<Output, Error>,
    req: &Request,
) {
    for n in after.nodes() {
        let h = highest.entry(n.id).or_insert(n.generation);
        assert!(
            n.generation >= *h,
            "generation of {} went back from {h} to {}",
            n.id,
            n.generation
        );
        *h = n.generation;
    }
    for (id, stub) in after.archived() {
        let h = highest.entry(*id).or_insert(stub.generation);
        assert!(
            stub.generation >= *h,
            "archived generation of {id} went back"
        );
        *h = stub.generation;
    }
    for (id, _, generation) in granted_by(req, output) {
        let g = (id, generation);
        assert!(
            granted.insert(g),
            "generation {} of {} granted twice",
            g.1,
            g.0
        );
    }
}

/// Checks one step: `before` --req at now--> `after` with `result`.
fn check_step(
    before: &State,
    archive: &HashMap<Id, Node>,
    after: &State,
    req: &Request,
    now: u64,
    result: &Result<Output, Error>,
    grants: &mut HashMap<Id, (Id, u64)>,
) {
    generations_and_attempts_never_go_back(before, after);
    if result.is_ok() {
        generations_move_by_grants_and_hand_backs(before, archive, after, req, now);
    }
    // Only ready nodes are granted; the grant becomes the holder.
    let granted = granted_by(req, result);
    for grant in &granted {
        only_a_ready_node_is_granted(before, now, *grant, grants);
    }
    a_batch_stops_only_when_nothing_more_may_be_granted(after, req, result, now);
    // An expired holder never completes, renews or releases.
    expired_holders_never_act(before, req, result, now);
    // Every claimed node is held by the actor of its newest grant, at that generation.
    for n in after.nodes().iter().filter(|n| n.status == Status::Claimed) {
        let (a, g) = grants.get(&n.id).copied().expect("claimed without a grant");
        assert_eq!((n.holder, n.generation), (Some(a), g));
    }
    // max_held and resources.
    a_grant_keeps_to_max_held_and_resources(after, now, &granted);
    if result.is_ok() {
        hand_backs_wait_their_backoff(before, archive, req, now);
        talk_keeps_its_promises(before, archive, after, req, result);
    }
    assert!(
        claimdag::verify::problems(after).is_empty(),
        "{:?}",
        claimdag::verify::problems(after)
    );
}

/// A node handed back (released, expired, reclaimed) is not granted again before
/// `retry_in` when the release gave one, else before the store's backoff
/// `min(retry_delay_max, retry_delay x 2^(attempts-1))`; with neither it keeps its
/// `not_before`.
fn hand_backs_wait_their_backoff(
    before: &State,
    archive: &HashMap<Id, Node>,
    req: &Request,
    now: u64,
) {
    if matches!(req, Request::Upsert(_)) {
        return; // it may set the not_before of a node it found handed back
    }
    let effect = rules::apply(before, archive, req, now).expect("deterministic");
    let settings = effect.change.settings.as_ref().unwrap_or(&before.settings);
    for e in &effect.change.events {
        if !matches!(e.verb.as_str(), "release" | "expire" | "reclaim") {
            continue;
        }
        let id = e.node.unwrap();
        let Some(n) = effect.change.nodes.iter().find(|n| n.id == id) else {
            continue;
        };
        if n.status != Status::Todo || n.generation != e.generation.unwrap() {
            continue; // claimed again in the same call (expire, then claim)
        }
        let retry_in = match (req, e.verb.as_str()) {
            (Request::Release { retry_in_ms, .. }, "release") => *retry_in_ms,
            _ => None,
        };
        // The backoff of the settings in force when the hand-back happened: a Configure
        // in the same call runs after the expiries.
        let s = if e.verb == "expire" {
            &before.settings
        } else {
            settings
        };
        let delay = retry_in.unwrap_or_else(|| s.backoff_ms(n.attempts));
        let expect = if delay > 0 {
            Some(now + delay)
        } else {
            before.get(&id).and_then(|b| b.not_before)
        };
        assert_eq!(
            n.not_before, expect,
            "{} of {id} after {} attempts",
            e.verb, n.attempts
        );
        if retry_in.is_none() && s.retry_delay_ms > 0 {
            let doubled = s.retry_delay_ms << (n.attempts.saturating_sub(1)).min(40);
            assert!(delay <= s.retry_delay_max_ms && delay <= doubled.max(s.retry_delay_ms));
        }
    }
}

/// Generations and attempts never decrease (a node unarchived keeps its generation, a new
/// node starts at 1 with no attempt).
fn generations_and_attempts_never_go_back(before: &State, after: &State) {
    for n in after.nodes() {
        if let Some(old) = before.get(&n.id) {
            assert!(
                n.generation >= old.generation,
                "generation went back on {}",
                n.id
            );
            assert!(n.attempts >= old.attempts, "attempts went back on {}", n.id);
        } else if let Some(stub) = before.archived().get(&n.id) {
            assert_eq!(
                n.generation, stub.generation,
                "unarchive changed the generation"
            );
        } else {
            assert_eq!(n.generation, 1);
            assert_eq!(n.attempts, 0);
        }
    }
}

/// After a call that succeeded, each generation has moved by exactly the number of grants and
/// hand-backs the change recorded for the node.
fn generations_move_by_grants_and_hand_backs(
    before: &State,
    archive: &HashMap<Id, Node>,
    after: &State,
    req: &Request,
    now: u64,
) {
    let effect = rules::apply(before, archive, req, now).expect("deterministic");
    let mut moves: HashMap<Id, u64> = HashMap::new();
    for e in &effect.change.events {
        if matches!(
            e.verb.as_str(),
            "claim" | "release" | "expire" | "reclaim" | "reopen"
        ) {
            *moves.entry(e.node.unwrap()).or_default() += 1;
        }
    }
    for n in after.nodes() {
        let old = before
            .get(&n.id)
            .map(|o| o.generation)
            .or_else(|| before.archived().get(&n.id).map(|a| a.generation))
            .unwrap_or(1);
        let m = moves.get(&n.id).copied().unwrap_or(0);
        assert_eq!(
            n.generation,
            old + m,
            "generation of {} moved by other than its grants and hand-backs",
            n.id
        );
        assert!(m <= 2, "more than expire + one verb on one node");
    }
}

/// The nodes a call granted, with its actor and their generations.
fn granted_by(req: &Request, result: &Result<Output, Error>) -> Vec<(Id, Id, u64)> {
    match (req, result) {
        (Request::Claim { actor, .. }, Ok(Output::Granted(g))) => {
            vec![(g.id, *actor, g.generation)]
        }
        (Request::ClaimNext { actor, .. }, Ok(Output::Claimed(all))) => all
            .iter()
            .filter(|g| !g.resumed)
            .map(|g| (g.id, *actor, g.generation))
            .collect(),
        _ => Vec::new(),
    }
}

/// The node of `grant` was ready before it; the grant is recorded in `grants`.
fn only_a_ready_node_is_granted(
    before: &State,
    now: u64,
    (id, a, g): (Id, Id, u64),
    grants: &mut HashMap<Id, (Id, u64)>,
) {
    let view = rules::read_at(before, now);
    let pre = view.get(&id).expect("granted node existed");
    assert_eq!(pre.status, Status::Todo);
    assert_eq!(
        view.readiness(pre),
        Readiness::Ready,
        "granted a node that was not ready"
    );
    assert!(
        pre.not_before.is_none_or(|t| t <= now),
        "granted {id} at {now}, before its not_before {:?}",
        pre.not_before
    );
    grants.insert(id, (a, g));
}

/// A holder whose lease ran out never completes, releases or renews.
fn expired_holders_never_act(
    before: &State,
    req: &Request,
    result: &Result<Output, Error>,
    now: u64,
) {
    let ended: Vec<(Id, u64)> = match (req, result) {
        (Request::Complete(f), Ok(_)) => vec![(f.node, f.gen)],
        (Request::CompleteMany(all), Ok(_)) => all.iter().map(|f| (f.node, f.gen)).collect(),
        (Request::Release { node, gen, .. }, Ok(_)) => vec![(*node, *gen)],
        _ => Vec::new(),
    };
    for (node, gen) in ended {
        if let Some(pre) = before.get(&node) {
            // The holder's own generation only works while its lease runs. (A node handed
            // back in this very call may still be cancelled at its new generation.)
            if pre.status == Status::Claimed && pre.generation == gen {
                assert!(
                    pre.is_live_claim(now),
                    "a holder whose lease ran out finished or released"
                );
            }
        }
    }
    if let (Request::Renew { node, .. }, Ok(_)) = (req, result) {
        assert!(
            before.get(node).unwrap().is_live_claim(now),
            "renewed an expired lease"
        );
    }
}

/// A grant never takes an actor past max_held (a lower limit set later does not revoke
/// claims already held), nor a resource that overlaps one of another live claim.
fn a_grant_keeps_to_max_held_and_resources(after: &State, now: u64, granted: &[(Id, Id, u64)]) {
    let live: Vec<&Node> = after
        .nodes()
        .iter()
        .filter(|n| n.is_live_claim(now))
        .collect();
    if after.settings.max_held > 0 {
        let mut held: HashMap<Id, u64> = HashMap::new();
        for n in &live {
            *held.entry(n.holder.unwrap()).or_default() += 1;
        }
        // A lower limit set later does not revoke claims already held; a grant never exceeds it.
        for (_, a, _) in granted {
            assert!(held[a] <= after.settings.max_held, "granted past max_held");
        }
    }
    for (i, x) in live.iter().enumerate() {
        for y in &live[i + 1..] {
            for rx in &x.resources {
                for ry in &y.resources {
                    if granted.iter().any(|(id, _, _)| *id == x.id || *id == y.id) {
                        assert!(
                            !rules::resources_conflict(rx, ry),
                            "overlapping live claims granted"
                        );
                    }
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn rules_hold_over_random_sequences(ops in proptest::collection::vec((op(), 0u64..1500), 1..60)) {
        let mut state = State::default();
        let mut now = 1_000_000u64;
        let mut grants = HashMap::new();
        let mut archive = HashMap::new();
        let mut highest = HashMap::new();
        let mut granted = HashSet::new();
        for (op, step) in &ops {
            now += step;
            let req = request(&state, op, now);
            // (A refused call cannot change the state here: the rules only borrow it. The
            // store-level property below checks the files and a reload after refusals.)
            let before = state.clone();
            let archive_before = archive.clone();
            let result = rules::apply(&state, &archive, &req, now).map(|e| {
                state.apply(&e.change);
                archive_after(&mut archive, &e.change);
                e.output
            });
            check_step(&before, &archive_before, &state, &req, now, &result, &mut grants);
            check_history(&state, &mut highest, &mut granted, &result, &req);
        }
    }
}

struct FakeClock(AtomicU64);

impl Clock for FakeClock {
    fn now_ms(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }
}

fn files(dir: &std::path::Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| {
                    (
                        e.file_name().to_string_lossy().into_owned(),
                        std::fs::read(e.path()).unwrap_or_default(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn store_refusals_change_no_file_and_reload_is_exact(ops in proptest::collection::vec((op(), 0u64..1500), 1..40), compact in any::<bool>()) {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("store");
        let clock = Arc::new(FakeClock(AtomicU64::new(1_000_000)));
        // A tiny compaction threshold makes every few writes compact.
        // Compacted at every write, the history is sealed into small segments too.
        let tuning = Tuning {
            sync: false,
            compact_min_bytes: if compact { 1 } else { 1 << 20 },
            segment_bytes: if compact { 2048 } else { 1 << 30 },
        };
        let store = Store::with(dir.clone(), tuning.clone(), clock.clone());
        let mut highest = HashMap::new();
        let mut granted = HashSet::new();
        for (op, step) in &ops {
            clock.0.fetch_add(*step, Ordering::SeqCst);
            let state = store.inspect(|s, _| s.clone()).unwrap();
            let before = files(&dir);
            let req = request(&state, op, clock.0.load(Ordering::SeqCst));
            let result = store.execute(&req);
            if result.is_err() {
                prop_assert_eq!(files(&dir), before, "a refused {:?} changed the files", req);
            }
            let after = store.inspect(|s, _| s.clone()).unwrap();
            check_history(&after, &mut highest, &mut granted, &result, &req);
            let mine = store.inspect(|s, _| s.clone()).unwrap();
            let fresh = Store::with(dir.clone(), tuning.clone(), clock.clone());
            let loaded = fresh.inspect(|s, _| s.clone()).unwrap();
            prop_assert_eq!(&loaded, &mine);
        }
        let report = store.check().unwrap();
        prop_assert!(report.problems.is_empty());
    }
}
