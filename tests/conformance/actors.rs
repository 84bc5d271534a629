//! Actor names (reference.md, "Actor names"), on every backend: kept once, notes replaced,
//! shown beside ids through the verbs, never kept by a refused call.

use claimdag::verbs::{self, Ctx};
use claimdag::{Actor, Store};
use serde_json::json;

pub fn names_are_kept_once_with_the_last_note_given(s: &Store) {
    assert_eq!(s.actor_names().unwrap(), vec![]);
    let codex = s.named_actor("codex-1").unwrap();
    assert_eq!(codex, Actor::from_name("codex-1").unwrap());
    let lead = s.add_actor("name:lead-ana", Some("the lead")).unwrap();
    assert_eq!(
        (lead.name.as_str(), lead.note.as_deref()),
        ("lead-ana", Some("the lead"))
    );
    s.add_actor("lead-ana", None).unwrap();
    s.add_actor("codex-1", Some("pane 3")).unwrap();
    s.named_actor("codex-1").unwrap();
    let kept: Vec<_> = s
        .actor_names()
        .unwrap()
        .into_iter()
        .map(|a| (a.id, a.name, a.note))
        .collect();
    assert_eq!(
        kept,
        vec![
            (codex, "codex-1".to_string(), Some("pane 3".to_string())),
            (
                lead.id,
                "lead-ana".to_string(),
                Some("the lead".to_string())
            ),
        ]
    );
    assert!(s.add_actor("two words", None).is_err());
    assert_eq!(s.actor_names().unwrap().len(), 2);
}

pub fn names_reach_every_view_and_refusal_through_the_verbs(s: &Store) {
    let cx = Ctx::new(s, "").unwrap();
    let id = verbs::call(&cx, "upsert", json!({"summary": "parse"}))
        .unwrap()
        .json["id"]
        .as_str()
        .unwrap()
        .to_string();
    verbs::call(
        &cx,
        "claim",
        json!({"node": id, "assignee": "name:codex-1"}),
    )
    .unwrap();
    let shown = verbs::call(&cx, "show", json!({"node": id})).unwrap();
    assert_eq!(shown.json["holder_name"], "codex-1", "{}", shown.json);
    let listed = verbs::call(&cx, "list", json!({})).unwrap();
    assert!(
        listed.text.contains("holder=name:codex-1"),
        "{}",
        listed.text
    );
    let log = verbs::call(&cx, "log", json!({"node": id})).unwrap();
    assert_eq!(log.json[1]["actor_name"], "codex-1", "{}", log.json);
    let e = verbs::call(&cx, "claim", json!({"node": id, "assignee": "name:late"})).unwrap_err();
    assert_eq!(e.holder_name(), Some("codex-1"), "{e}");
    assert!(e.to_string().contains("(name:codex-1)"), "{e}");
    assert_eq!(verbs::error_body(&e)["holder_name"], "codex-1");
}

pub fn a_refused_call_keeps_no_name(s: &Store) {
    let cx = Ctx::new(s, "").unwrap();
    let e = verbs::call(
        &cx,
        "claim",
        json!({"node": "00000000", "assignee": "name:ghost"}),
    );
    assert!(e.is_err());
    assert_eq!(s.actor_names().unwrap(), vec![]);
}
