//! The plan importer on arbitrary bytes: `Plan::parse`, then the import rule on a small
//! state (a todo node, a claimed one, a done one, linked). Never panics; an accepted import
//! leaves a state with no broken invariant, and importing the same plan again changes
//! nothing.
#![no_main]

use claimdag::model::Status;
use claimdag::state::State;
use claimdag::rules::{self, Plan, Request, Upsert};
use claimdag::Id;
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

const NOW: u64 = 1_700_000_000_000;

fn small_state() -> &'static State {
    static STATE: OnceLock<State> = OnceLock::new();
    STATE.get_or_init(|| {
        let mut s = State::default();
        let run = |s: &mut State, req: Request| {
            let e = rules::apply(s, &rules::NoArchive, &req, NOW).expect("setup");
            s.apply(&e.change);
        };
        let mut ids = Vec::new();
        for summary in ["parse the header", "reject bad input", "write the docs"] {
            let id = Id::mint("", "task", None, summary);
            run(
                &mut s,
                Request::Upsert(Upsert {
                    summary: summary.into(),
                    ..Upsert::default()
                }),
            );
            ids.push(id);
        }
        run(
            &mut s,
            Request::Link {
                parent: ids[0],
                child: ids[1],
                soft: false,
            },
        );
        for (k, id) in [ids[0], ids[2]].into_iter().enumerate() {
            run(
                &mut s,
                Request::Claim {
                    node: id,
                    actor: Id([7 + k as u8; 16]),
                    gen: None,
                    ttl_ms: Some(3_600_000),
                },
            );
        }
        run(
            &mut s,
            Request::Complete(claimdag::rules::Finish {
                node: ids[2],
                status: Status::Done,
                gen: 2,
                actor: None,
                note: None,
                output: None,
                held: false,
            }),
        );
        s
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(plan) = Plan::parse(data) else {
        return;
    };
    let state = small_state();
    let req = Request::Import {
        workspace: String::new(),
        plan,
    };
    let Ok(effect) = rules::apply(state, &rules::NoArchive, &req, NOW) else {
        return;
    };
    let mut after = state.clone();
    after.apply(&effect.change);
    let problems = claimdag::verify::problems(&after);
    assert!(
        problems.is_empty(),
        "an accepted import broke the state: {problems:?}"
    );
    let again = rules::apply(&after, &rules::NoArchive, &req, NOW).expect("the same import again");
    assert!(
        again.change.is_empty(),
        "importing the same plan again changed the state: {:?}",
        again.change
    );
    assert_eq!(
        again.output, effect.output,
        "a second import answered otherwise"
    );
});
