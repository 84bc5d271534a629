//! `unarchive` of a node that is not archived: a live node is `invalid_input`, an unknown
//! one `not_found`; neither may hang or change a file. Each run has a short time limit.

use crate::common::{self, actor, Store};
use std::time::Duration;

/// A store with a done node and a todo node.
fn two() -> (Store, String, String) {
    let s = Store::new();
    let done = s.upsert("finished well", &[]);
    let todo = s.upsert("still to do", &[]);
    let g = s.claim(&done, &actor(1), &[]).to_string();
    s.ok(&["complete", &done, "--status", "done", "--gen", &g]);
    (s, done, todo)
}

/// Refused unarchives, each run with a short time limit: `(node, exit, phrase, code)`.
fn refused_unarchive(s: &Store, cases: &[(&str, i32, &str, &str)]) {
    for (id, exit, phrase, code) in cases {
        let before = s.files();
        for json in [false, true] {
            let mut args = vec!["unarchive", id];
            if json {
                args.insert(0, "--json");
            }
            let r = s.run_full(&args, &[], None, Duration::from_secs(20));
            assert_eq!(r.code, Some(*exit), "{args:?}: {}{}", r.stdout, r.stderr);
            assert_eq!(r.stdout, "");
            if json {
                assert_eq!(r.error_json()["code"], *code);
            } else {
                assert!(r.stderr.contains(phrase), "{}", r.stderr);
            }
            common::assert_files_eq(&before, &s.files(), "refused unarchive");
        }
    }
}

#[test]
fn unarchive_of_a_live_node_is_refused() {
    let (s, done, todo) = two();
    refused_unarchive(
        &s,
        &[
            (&done, 2, "not archived", "invalid_input"),
            (&todo, 2, "not archived", "invalid_input"),
        ],
    );
}

#[test]
fn unarchive_of_an_unknown_node_is_not_found() {
    let (s, done, _) = two();
    s.ok(&["archive", &done]);
    refused_unarchive(
        &s,
        &[(
            "0123456789abcdef0123456789abcdef",
            3,
            "not found",
            "not_found",
        )],
    );
}
