//! The scheduler's answers (`schedule::order`, `best`, their full recomputations, the kept
//! pick order) checked on states the rules build.

mod tests {
    use crate::id::Id;
    use crate::model::Status;
    use crate::rules::{self, Output, Request, Upsert};
    use crate::schedule::*;
    use crate::state::State;

    /// A DAG with chains, priorities and roles, so every tie-break has work to do.
    fn state() -> State {
        let mut s = State::default();
        let mut ids = Vec::new();
        for i in 0..40u64 {
            let u = Upsert {
                summary: format!("node {i}"),
                priority: Some((i % 3) as i64),
                estimate: Some(1 + i % 4),
                role: Some(if i % 5 == 0 {
                    "review".into()
                } else {
                    String::new()
                }),
                ..Upsert::default()
            };
            let e = rules::apply(&s, &rules::NoArchive, &Request::Upsert(u), 1000 + i).unwrap();
            if let Output::Upserted { id, .. } = e.output {
                ids.push(id);
            }
            s.apply(&e.change);
        }
        for i in 0..40usize {
            if i % 4 != 0 {
                let req = Request::Link {
                    parent: ids[i],
                    child: ids[(i * 7 + 3) % 40],
                    soft: i % 3 == 0,
                };
                if let Ok(e) = rules::apply(&s, &rules::NoArchive, &req, 5000) {
                    s.apply(&e.change);
                }
            }
        }
        s
    }

    #[test]
    fn best_agrees_with_the_full_order() {
        let s = state();
        for role in ["", "review"] {
            let tx = rules::read_at(&s, 9000);
            let full: Vec<Id> = order(&tx, "", role).into_iter().map(|p| p.id).collect();
            assert!(full.len() > 3, "the fixture has several ready nodes");
            assert_eq!(best(&tx, "", role).map(|p| p.id), full.first().copied());
        }
    }

    #[test]
    fn longest_critical_path_then_priority_first() {
        let s = state();
        let tx = rules::read_at(&s, 9000);
        let picks = order(&tx, "", "");
        for w in picks.windows(2) {
            assert!(w[0].critical >= w[1].critical);
        }
        for p in &picks {
            let sum: u64 = p.path.iter().map(|id| s.get(id).unwrap().estimate).sum();
            assert_eq!(
                sum, p.critical,
                "the path's estimates add up to its critical length"
            );
        }
    }
    /// Applies `req` to `s` at `now`; returns what it answered.
    fn put(s: &mut State, req: Request, now: u64) -> Output {
        let e = rules::apply(s, &rules::NoArchive, &req, now).unwrap();
        s.apply(&e.change);
        e.output
    }

    fn node(s: &mut State, summary: &str, role: &str) -> Id {
        let u = Upsert {
            summary: summary.into(),
            role: Some(role.into()),
            ..Upsert::default()
        };
        match put(s, Request::Upsert(u), 1000) {
            Output::Upserted { id, .. } => id,
            o => panic!("upsert answered {o:?}"),
        }
    }

    #[test]
    fn pending_names_the_claims_that_may_still_bring_work() {
        use crate::id::Actor;
        let mut s = State::default();
        let (a, b, r) = (
            node(&mut s, "a", ""),
            node(&mut s, "b", ""),
            node(&mut s, "r", "review"),
        );
        let (c, d) = (node(&mut s, "c", "review"), node(&mut s, "d", ""));
        for (parent, child) in [(a, b), (c, d)] {
            put(
                &mut s,
                Request::Link {
                    parent,
                    child,
                    soft: false,
                },
                1000,
            );
        }
        let other = Actor::from_name("other").unwrap();
        for (i, n) in [a, r, c].into_iter().enumerate() {
            let actor = if i == 0 {
                other
            } else {
                Actor::from_name(&format!("w{i}")).unwrap()
            };
            let claim = Request::Claim {
                node: n,
                actor,
                gen: None,
                ttl_ms: Some(60_000),
            };
            put(&mut s, claim, 2000);
        }
        // a: b waits on it. c: of another role, but d (of mine) waits on it. r: nothing of
        // mine waits on it, and its role is not mine.
        let tx = rules::read_at(&s, 3000);
        assert_eq!(pending(&tx, "", ""), vec![a, c]);
        assert_eq!(pending(&tx, "", "review"), vec![a, r, c]);
        // Once the lease ran out, the claims are handed back: nothing is pending, a is ready.
        let tx = rules::read_at(&s, 2000 + 60_000);
        assert!(pending(&tx, "", "").is_empty());
        // a failed: b is blocked for good, so only c is left to wait for.
        let fail = Request::Complete(rules::Finish {
            node: a,
            status: Status::Failed,
            gen: 2,
            actor: Some(other),
            note: None,
            output: None,
            held: false,
        });
        put(&mut s, fail, 4000);
        assert_eq!(pending(&rules::read_at(&s, 5000), "", ""), vec![c]);
    }
}

mod index_tests {
    use crate::id::Id;
    use crate::rules::{self, Output, Request, Upsert};
    use crate::schedule::*;
    use crate::state::State;

    fn put(s: &mut State, req: Request) -> Output {
        let e = rules::apply(s, &rules::NoArchive, &req, 1000).unwrap();
        s.apply(&e.change);
        e.output
    }

    fn node(s: &mut State, summary: &str) -> Id {
        let u = Upsert {
            summary: summary.into(),
            ..Upsert::default()
        };
        match put(s, Request::Upsert(u)) {
            Output::Upserted { id, .. } => id,
            o => panic!("{o:?}"),
        }
    }

    #[test]
    fn a_tie_on_the_critical_path_goes_to_the_newer_waiter_as_in_the_full_computation() {
        let mut s = State::default();
        let (a, b, c) = (node(&mut s, "a"), node(&mut s, "b"), node(&mut s, "c"));
        for child in [b, c] {
            put(
                &mut s,
                Request::Link {
                    parent: a,
                    child,
                    soft: false,
                },
            );
        }
        let tx = rules::read_at(&s, 2000);
        let full = best_full(&tx, "", "").unwrap();
        assert_eq!(full.path, vec![a, c]);
        assert_eq!(best(&tx, "", "").unwrap(), full);
    }
}
