//! Arguments refused naming what was given: `--output` that is not JSON under `--json`
//! gives the JSON error body, and a whole number of seconds too large for a duration in a
//! JSON request names its field.

use crate::common::{actor, Store};
use claimdag::verbs::{self, Ctx};
use serde_json::json;

#[test]
fn an_output_that_is_not_json_is_a_json_error_under_json() {
    let s = Store::new();
    let n = s.upsert("count the rows", &[]);
    s.claim(&n, &actor(1), &[]);
    for bad in ["nope", "{\"rows\": 3", ""] {
        let e = s.refused(
            &[
                "complete", &n, "--status", "done", "--gen", "2", "--output", bad,
            ],
            2,
            "output is not valid JSON",
            "invalid_input",
        );
        assert!(e["message"].as_str().unwrap().contains("output"), "{e}");
    }
    assert_eq!(s.node(&n)["status"], "claimed");
}

#[test]
fn a_duration_too_large_in_json_names_its_field() {
    let tmp = tempfile::tempdir().unwrap();
    let store = claimdag::Store::open(Some(&tmp.path().join("store"))).unwrap();
    let cx = Ctx::new(&store, "").unwrap();
    let made = verbs::call(&cx, "upsert", json!({"summary": "a node"})).unwrap();
    let id = made.json["id"].as_str().unwrap().to_string();
    let huge = u64::MAX;
    let cases = [
        (
            "claim",
            json!({"node": id, "assignee": "name:w1", "ttl": huge}),
            "ttl",
        ),
        (
            "claim_next",
            json!({"assignee": "name:w1", "wait": huge}),
            "wait",
        ),
        (
            "claim_next",
            json!({"assignee": "name:w1", "ttl": huge}),
            "ttl",
        ),
        ("reclaim", json!({"lease": huge}), "lease"),
    ];
    for (verb, args, field) in cases {
        let e = verbs::call(&cx, verb, args.clone()).unwrap_err();
        let m = e.to_string();
        assert_eq!(e.code().as_str(), "invalid_input", "{verb} {args}: {m}");
        assert!(
            m.contains(field) && m.contains("too large"),
            "{verb} {args}: {m}"
        );
        assert!(m.contains(&huge.to_string()), "{verb} {args}: {m}");
    }
    assert_eq!(
        store
            .get(store.resolve(&id).unwrap())
            .unwrap()
            .node
            .generation,
        1
    );
}
