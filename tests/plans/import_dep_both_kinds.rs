//! A plan node that names one prerequisite both in `deps` and in `soft_deps` is refused
//! whole (`invalid_input`, exit 2, naming the node's key), and nothing is written: the same
//! key in both lists, or one prerequisite spelled twice, by its plan key and by its id.

use crate::common::{id_of, Store};
use serde_json::json;

#[test]
fn a_prerequisite_named_hard_and_soft_is_refused() {
    let s = Store::new();
    let plan = json!({"nodes": [
        {"key": "base", "summary": "the prerequisite"},
        {"key": "both", "summary": "names it twice", "deps": ["base"], "soft_deps": ["base"]}
    ]});
    // Refused before the store is created: `refused_full` asserts it is still absent.
    s.refused_full(
        &["import", "-"],
        &[],
        Some(plan.to_string().into_bytes()),
        2,
        "plan node \"both\": \"base\" is in both deps and soft_deps",
        "invalid_input",
    );
    assert!(!s.dir().exists(), "a refused plan created the store");
}

/// The same prerequisite named once by its plan key and once by its id (whole, or an 8
/// character prefix), in either list, is still one prerequisite named as both kinds:
/// refused whole, naming the key (found by the plan fuzzer).
#[test]
fn a_prerequisite_named_by_key_and_by_id_as_both_kinds_is_refused() {
    let s = Store::new();
    let first = s.import_ok(&json!({"nodes": [{"key": "p", "summary": "parent node"}]}));
    let p = id_of(&first, "p").to_string();
    let phrase = format!(
        "plan node \"c\": {p} is both a hard and a soft prerequisite; \
         a link is either hard or soft"
    );
    for id in [&p[..], &p[..8]] {
        for (deps, soft_deps) in [("p", id), (id, "p")] {
            let plan = json!({"nodes": [
                {"key": "p", "summary": "parent node"},
                {"key": "c", "summary": "child", "deps": [deps], "soft_deps": [soft_deps]}
            ]});
            // `refused_full` asserts every store file is left as it was, for the text and
            // the `--json` run.
            s.refused_full(
                &["import", "-"],
                &[],
                Some(plan.to_string().into_bytes()),
                2,
                &phrase,
                "invalid_input",
            );
        }
    }
    assert_eq!(
        s.json(&["list", "--all"]).as_array().map(Vec::len),
        Some(1),
        "a refused plan added a node"
    );
}
