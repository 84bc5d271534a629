//! Clocks that jump. A store opened with a clock the test controls (`Store::with`) runs
//! random claims, claim-nexts, renews, releases, completes, reclaims and reopens by several
//! actors while the clock jumps forwards and backwards, by less and by more than a lease.
//!
//! - After every step, of the actors that were ever granted a node, at most one could use
//!   its grant now (a renew at its generation would succeed): two holders never hold live
//!   claims on one node at once, whatever the clock did.
//! - A generation is granted once and never moves backwards.
//! - With leases longer than any jump, nothing depends on time: the same calls give the same
//!   answers and the same generations under a steady clock and under one that jumps about.

use claimdag::model::Status;
use claimdag::rules::{self, Output, Request, Upsert};
use claimdag::state::State;
use claimdag::store::{embedded::Tuning, Clock};
use claimdag::{Id, Settings, Store};
use proptest::prelude::*;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

const NODES: [&str; 4] = ["alpha", "beta", "gamma", "delta"];
const ACTORS: u8 = 3;
const START: u64 = 1_800_000_000_000;

/// A clock the test sets.
struct TestClock(AtomicU64);

impl Clock for TestClock {
    fn now_ms(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }
}

#[derive(Debug, Clone)]
enum Op {
    /// Moves the clock by this many milliseconds, backwards when negative.
    Jump(i64),
    Upsert(usize),
    Claim {
        n: usize,
        a: u8,
        gen: Option<i8>,
        ttl: u64,
    },
    ClaimNext {
        a: u8,
        ttl: u64,
    },
    Renew {
        n: usize,
        a: u8,
        gen: Option<i8>,
    },
    Release {
        n: usize,
        a: u8,
        gen: i8,
    },
    Complete {
        n: usize,
        a: Option<u8>,
        gen: i8,
        status: u8,
    },
    Reclaim(Option<u64>),
    Reopen(usize),
}

/// Ops with clock jumps of every size in both directions; leases of 1 to 5 seconds.
fn op() -> impl Strategy<Value = Op> {
    let n = 0..NODES.len();
    let a = 0..ACTORS;
    let gen = proptest::option::of(-1i8..=1);
    let jump = prop_oneof![
        -100i64..100,
        -8_000i64..8_000,
        -3_600_000i64..3_600_000,
        Just(-86_400_000i64),
    ];
    prop_oneof![
        4 => jump.prop_map(Op::Jump),
        2 => n.clone().prop_map(Op::Upsert),
        4 => (n.clone(), a.clone(), gen.clone(), 1_000u64..5_000)
            .prop_map(|(n, a, gen, ttl)| Op::Claim { n, a, gen, ttl }),
        3 => (a.clone(), 1_000u64..5_000).prop_map(|(a, ttl)| Op::ClaimNext { a, ttl }),
        4 => (n.clone(), a.clone(), gen.clone()).prop_map(|(n, a, gen)| Op::Renew { n, a, gen }),
        2 => (n.clone(), a.clone(), -1i8..=1).prop_map(|(n, a, gen)| Op::Release { n, a, gen }),
        3 => (n.clone(), proptest::option::of(a), -1i8..=1, 0u8..3)
            .prop_map(|(n, a, gen, status)| Op::Complete { n, a, gen, status }),
        1 => proptest::option::of(0u64..6_000).prop_map(Op::Reclaim),
        1 => n.prop_map(Op::Reopen),
    ]
}

fn actor(a: u8) -> Id {
    Id([0x50 + a; 16])
}

fn node(n: usize) -> Id {
    Id::mint("", "task", None, NODES[n])
}

/// The node's generation now, moved by `delta` (at least 1).
fn gen_near(state: &State, n: usize, delta: i8) -> u64 {
    let g = state.get(&node(n)).map(|x| x.generation).unwrap_or(1);
    g.saturating_add_signed(delta as i64).max(1)
}

/// The request an op makes against the current state; `ttl` is replaced when given.
fn request(state: &State, op: &Op, ttl: Option<u64>) -> Option<Request> {
    let status = |s: u8| [Status::Done, Status::Failed, Status::Cancelled][s as usize];
    Some(match *op {
        Op::Jump(_) => return None,
        Op::Upsert(n) => Request::Upsert(Upsert {
            summary: NODES[n].to_string(),
            ..Upsert::default()
        }),
        Op::Claim { n, a, gen, ttl: t } => Request::Claim {
            node: node(n),
            actor: actor(a),
            gen: gen.map(|d| gen_near(state, n, d)),
            ttl_ms: Some(ttl.unwrap_or(t)),
        },
        Op::ClaimNext { a, ttl: t } => Request::ClaimNext {
            workspace: String::new(),
            actor: actor(a),
            role: None,
            ttl_ms: Some(ttl.unwrap_or(t)),
            resume: false,
            count: 1,
        },
        Op::Renew { n, a, gen } => Request::Renew {
            node: node(n),
            actor: actor(a),
            gen: gen.map(|d| gen_near(state, n, d)),
            ttl_ms: None,
            progress: None,
            usage: None,
        },
        Op::Release { n, a, gen } => Request::Release {
            node: node(n),
            actor: actor(a),
            gen: gen_near(state, n, gen),
            retry_in_ms: None,
        },
        Op::Complete {
            n,
            a,
            gen,
            status: s,
        } => Request::Complete(claimdag::rules::Finish {
            node: node(n),
            status: status(s),
            gen: gen_near(state, n, gen),
            actor: a.map(actor),
            note: None,
            output: None,
            held: false,
        }),
        // With leases that never run out, only `--lease 0` keeps reclaim free of time.
        Op::Reclaim(lease) => Request::Reclaim {
            workspace: String::new(),
            lease_ms: if ttl.is_some() {
                lease.map(|_| 0)
            } else {
                lease
            },
        },
        Op::Reopen(n) => Request::Reopen {
            node: node(n),
            gen: None,
        },
    })
}

fn open(clock: Arc<TestClock>, compact: bool) -> (tempfile::TempDir, Store) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let tuning = Tuning {
        sync: false,
        compact_min_bytes: if compact { 1 } else { 1 << 20 },
        ..Tuning::default()
    };
    let store = Store::with(tmp.path().join("store"), tuning, clock);
    (tmp, store)
}

/// What a granted claim is: node, generation, actor.
type Grant = (Id, u64, Id);

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn jumping_clocks_never_give_one_node_two_live_holders(
        ops in proptest::collection::vec(op(), 1..80),
        max_held in 0u64..3,
        compact in any::<bool>(),
    ) {
        let clock = Arc::new(TestClock(AtomicU64::new(START)));
        let (_tmp, store) = open(clock.clone(), compact);
        store.configure(Settings { max_held, ..Settings::default() }).expect("configure");
        for summary in NODES {
            store.upsert(Upsert { summary: summary.into(), ..Upsert::default() }).expect("upsert");
        }
        let mut grants: BTreeSet<Grant> = BTreeSet::new();
        let mut gens: BTreeMap<Id, u64> = BTreeMap::new();
        for (step, op) in ops.iter().enumerate() {
            if let Op::Jump(d) = op {
                let now = clock.0.load(Ordering::SeqCst);
                clock.0.store(now.saturating_add_signed(*d), Ordering::SeqCst);
                continue;
            }
            let state = store.inspect(|s, _| s.clone()).expect("read");
            let req = request(&state, op, None).expect("a request");
            let granted = match store.execute(&req) {
                Ok(Output::Granted(g)) => match &req {
                    Request::Claim { node, actor, .. } => Some((*node, g.generation, *actor)),
                    _ => None,
                },
                Ok(Output::Claimed(all)) => match (&req, all.first()) {
                    (Request::ClaimNext { actor, .. }, Some(g)) if !g.resumed => {
                        Some((g.id, g.generation, *actor))
                    }
                    _ => None,
                },
                _ => None,
            };
            if let Some(grant) = granted {
                let twice = grants.iter().any(|(n, g, _)| (*n, *g) == (grant.0, grant.1));
                prop_assert!(!twice, "step {}: {:?} at generation {} granted twice", step, grant.0, grant.1);
                grants.insert(grant);
            }
            let (state, now) = store.inspect(|s, now| (s.clone(), now)).expect("read");
            // Generations never move backwards.
            for n in state.nodes() {
                let before = gens.insert(n.id, n.generation).unwrap_or(0);
                prop_assert!(
                    n.generation >= before,
                    "step {}: {} went from generation {} back to {}", step, n.id, before, n.generation
                );
            }
            // Of every grant ever made, at most one per node could be used now.
            let mut live: BTreeMap<Id, Vec<Grant>> = BTreeMap::new();
            for &(id, g, a) in &grants {
                let renew = Request::Renew { node: id, actor: a, gen: Some(g), ttl_ms: None, progress: None, usage: None };
                if rules::apply(&state, &rules::NoArchive, &renew, now).is_ok() {
                    live.entry(id).or_default().push((id, g, a));
                }
            }
            for (id, holders) in &live {
                prop_assert!(
                    holders.len() == 1,
                    "step {} (clock {}): {} has live holders {:?}", step, now, id, holders
                );
            }
        }
        // Every other invariant check verifies holds. (Time stamps follow the clock, which
        // went backwards here: their order is not asserted.)
        let problems: Vec<String> = store
            .check()
            .expect("check")
            .problems
            .into_iter()
            .filter(|p| !p.contains("updated before it was created"))
            .collect();
        prop_assert!(problems.is_empty(), "{:?}", problems);
    }
}

/// The answer a call gave, without times: its output or its error code.
fn answer(r: claimdag::Result<Output>) -> String {
    match r {
        Ok(o) => format!("{o:?}"),
        Err(e) => format!("error {}", e.code().as_str()),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn with_leases_longer_than_any_jump_nothing_depends_on_the_clock(
        ops in proptest::collection::vec(op(), 1..60),
    ) {
        // A lease of 100 days: no jump below runs one out, backwards or forwards.
        const LONG: u64 = 100 * 86_400_000;
        let steady_clock = Arc::new(TestClock(AtomicU64::new(START)));
        let jumpy_clock = Arc::new(TestClock(AtomicU64::new(START)));
        let (_a, steady) = open(steady_clock.clone(), false);
        let (_b, jumpy) = open(jumpy_clock.clone(), true);
        for s in [&steady, &jumpy] {
            s.configure(Settings { max_held: 0, default_ttl_ms: LONG, ..Settings::default() })
                .expect("configure");
        }
        for (step, op) in ops.iter().enumerate() {
            steady_clock.0.fetch_add(1, Ordering::SeqCst);
            if let Op::Jump(d) = op {
                let now = jumpy_clock.0.load(Ordering::SeqCst);
                jumpy_clock.0.store(now.saturating_add_signed(*d), Ordering::SeqCst);
                continue;
            }
            let state = steady.inspect(|s, _| s.clone()).expect("read");
            let req = request(&state, op, Some(LONG)).expect("a request");
            let a = answer(steady.execute(&req));
            let b = answer(jumpy.execute(&req));
            prop_assert_eq!(&a, &b, "step {}: {:?} answered differently", step, req);
            let gens = |s: &Store| {
                s.inspect(|st, _| st.nodes().iter().map(|n| (n.id, n.generation, n.status)).collect::<Vec<_>>())
                    .expect("read")
            };
            prop_assert_eq!(gens(&steady), gens(&jumpy), "step {}: generations differ", step);
        }
    }
}
