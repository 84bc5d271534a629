//! A plan node that names one prerequisite both in `deps` and in `soft_deps`: the plan is
//! either refused whole (naming the key) or imported once and then idempotent. Importing it
//! again must not write, as for every plan.

mod common;
mod plan_common;

use plan_common::{id_of, T};
use serde_json::json;

#[test]
fn a_prerequisite_named_hard_and_soft_is_refused_or_idempotent() {
    let s = T::new();
    let plan = json!({"nodes": [
        {"key": "base", "summary": "the prerequisite"},
        {"key": "both", "summary": "names it twice", "deps": ["base"], "soft_deps": ["base"]}
    ]});
    let first = s.import(&plan);
    if first.code == Some(2) {
        assert!(first.stderr.contains("both"), "{}", first.stderr);
        assert!(!s.dir().exists(), "a refused plan created the store");
        return;
    }
    let out = plan_common::parse_import(first.ok());
    let both = id_of(&out, "both").to_string();
    let base = id_of(&out, "base").to_string();
    let node = s.node(&both);
    let hard = node["deps"].as_array().expect("deps").len();
    let soft = node["soft_deps"].as_array().expect("soft deps").len();
    assert_eq!(hard + soft, 1, "one link to {base}: {node}");
    for round in 1..=3 {
        let before = s.files();
        let again = s.import(&plan);
        assert_eq!(plan_common::parse_import(again.ok()), out);
        common::assert_files_eq(&before, &s.files(), &format!("re-import {round}"));
    }
}

/// The same prerequisite named once by key and once by id prefix is still one prerequisite
/// named as both kinds: refused whole, naming the key (found by the plan fuzzer).
#[test]
fn a_prerequisite_named_by_key_and_by_prefix_as_both_kinds_is_refused() {
    let s = T::new();
    let first = s.import_ok(&json!({"nodes": [{"key": "p", "summary": "parent node"}]}));
    let p = id_of(&first, "p").to_string();
    let plan = json!({"nodes": [
        {"key": "p", "summary": "parent node"},
        {"key": "c", "summary": "child", "deps": ["p"], "soft_deps": [&p[..8]]}
    ]});
    let before = s.files();
    let r = s.import(&plan);
    assert_eq!(r.code, Some(2), "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("\"c\""), "{}", r.stderr);
    common::assert_files_eq(&before, &s.files(), "refused plan");
}
