//! A plan may name an existing node by full id or by a unique prefix of at least 8 hex
//! characters; an archived node exists (show, log and `upsert --parent` find it by prefix), so
//! a plan must find it by prefix too, as it does by full id.

use crate::common::{self, id_of, Store};
use serde_json::json;

#[test]
fn a_plan_names_an_archived_node_by_prefix_as_by_full_id() {
    let s = Store::new();
    let old = s.upsert("finished and archived", &[]);
    s.finish(&old, "done");
    assert_eq!(s.ok(&["archive", &old]), "archived 1\n");
    // Other node arguments find it by prefix.
    assert_eq!(s.node(&old[..8])["id"], old.as_str());
    // By full id the plan is accepted.
    let full = s.import_ok(&json!({"nodes": [
        {"key": "by-id", "summary": "after the archived node", "deps": [old]}
    ]}));
    assert_eq!(s.display(id_of(&full, "by-id")), "ready");
    // By prefix it must be accepted the same way.
    let r = s.import(&json!({"nodes": [
        {"key": "by-prefix", "summary": "also after the archived node", "deps": [&old[..8]]},
        {"key": "child", "summary": "under the archived node", "parent": &old[..8]}
    ]}));
    let out = common::parse_import(r.ok());
    let child = id_of(&out, "child");
    assert_eq!(s.node(child)["parent"], old.as_str());
    assert_eq!(s.display(id_of(&out, "by-prefix")), "ready");
}
