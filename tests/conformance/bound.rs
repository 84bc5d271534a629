//! The scenarios of a bound door (`verbs::Bounds { bound: true, .. }`, as `claimdag mcp`
//! sets it): the verb layer holds every request to the context's workspace, so a node of
//! another workspace answers as a node that does not exist, whatever verb names it and in
//! whatever form (a full id, a prefix, `xxxxxxxx...`), and the history it reads is its
//! workspace's only.

use crate::scenarios::{actor, refused, with};
use claimdag::verbs::{self, Bounds, Ctx};
use claimdag::{Code, Id, Status, Store, Upsert};
use serde_json::{json, Value};

fn in_ws(s: &Store, ws: &str, summary: &str) -> Id {
    with(
        s,
        Upsert {
            workspace: ws.into(),
            summary: summary.into(),
            ..Upsert::default()
        },
    )
}

/// A context bound to workspace `ws` and actor 1, as the MCP server makes one.
fn bound<'a>(s: &'a Store, ws: &str) -> Ctx<'a> {
    let mut cx = Ctx::new(s, ws).unwrap();
    cx.actor = Some(actor(1));
    cx.bounds = Bounds {
        bound: true,
        ..Bounds::default()
    };
    cx
}

/// Every call that names a node, with `n` standing for it, `mine` a node of the bound
/// workspace and `gen` a generation.
fn calls(n: &str, mine: &str, gen: u64) -> Vec<(&'static str, Value)> {
    vec![
        ("show", json!({ "node": n })),
        ("log", json!({ "node": n })),
        ("claim", json!({ "node": n })),
        ("renew", json!({ "node": n, "gen": gen })),
        ("release", json!({ "node": n, "gen": gen })),
        (
            "complete",
            json!({ "node": n, "status": "done", "gen": gen }),
        ),
        (
            "complete_many",
            json!({ "completions": [{ "node": n, "status": "done", "gen": gen }] }),
        ),
        ("cancel", json!({ "node": n })),
        ("reopen", json!({ "node": n })),
        ("link", json!({ "parent": n, "child": mine })),
        ("link", json!({ "parent": mine, "child": n })),
        ("unlink", json!({ "parent": n, "child": mine })),
        ("unlink", json!({ "parent": mine, "child": n })),
        ("archive", json!({ "nodes": [n] })),
        ("unarchive", json!({ "node": n })),
        ("upsert", json!({ "summary": "a child", "parent": n })),
        (
            "import",
            json!({ "plan": { "nodes": [{ "key": "k", "summary": "waits", "deps": [n] }] } }),
        ),
        (
            "import",
            json!({ "plan": { "nodes": [{ "key": "k", "summary": "under", "parent": n }] } }),
        ),
    ]
}

/// The error body of a refused call, as every door shows it.
fn body(cx: &Ctx<'_>, verb: &str, args: Value) -> Value {
    let e = refused(cx.store, Code::NotFound, || {
        verbs::call(cx, verb, args.clone())
    });
    verbs::error_body(&e)
}

pub fn a_bound_door_finds_no_node_of_another_workspace(s: &Store) {
    let mine = in_ws(s, "w", "a node of the bound workspace");
    let todo = in_ws(s, "other", "todo elsewhere");
    let held = in_ws(s, "other", "held elsewhere by the bound actor");
    let g = s.claim(held, actor(1), None, None).unwrap();
    let done = in_ws(s, "other", "done elsewhere");
    let gd = s.claim(done, actor(2), None, None).unwrap();
    s.complete(done, Status::Done, gd, Some(actor(2)), None)
        .unwrap();
    let archived = in_ws(s, "other", "archived elsewhere");
    let ga = s.claim(archived, actor(2), None, None).unwrap();
    s.complete(archived, Status::Done, ga, Some(actor(2)), None)
        .unwrap();
    assert_eq!(s.archive("other", &[archived], None).unwrap(), 1);
    let absent = Id([0xab; 16]);
    assert_eq!(s.get(absent).unwrap_err().code(), Code::NotFound);

    let cx = bound(s, "w");
    let mine_s = mine.to_string();
    for theirs in [todo, held, done, archived] {
        let (t, a) = (theirs.to_string(), absent.to_string());
        let forms = [
            (t.clone(), a.clone()),
            (t[..8].to_string(), a[..8].to_string()),
            (format!("{}...", &t[..8]), format!("{}...", &a[..8])),
        ];
        for (their_text, absent_text) in forms {
            let theirs_calls = calls(&their_text, &mine_s, g);
            let absent_calls = calls(&absent_text, &mine_s, g);
            for ((verb, args), (_, absent_args)) in theirs_calls.into_iter().zip(absent_calls) {
                let got = body(&cx, verb, args.clone()).to_string();
                let want = body(&cx, verb, absent_args).to_string();
                assert_eq!(
                    got.replace(&t, &a).replace(&t[..8], &a[..8]),
                    want,
                    "{verb} {args}: a node of another workspace answers as an absent one"
                );
            }
        }
    }
    // Nothing of the other workspace moved.
    assert_eq!(s.get(held).unwrap().node.generation, g);
    assert_eq!(s.get(todo).unwrap().node.status, Status::Todo);

    // Its own workspace's nodes, by any form, are found; the log is its own only.
    let shown = verbs::call(&cx, "show", json!({ "node": &mine_s[..8] })).unwrap();
    assert_eq!(shown.json["id"], json!(mine_s));
    verbs::call(
        &cx,
        "claim",
        json!({ "node": format!("{}...", &mine_s[..8]) }),
    )
    .unwrap();
    let log = verbs::call(&cx, "log", json!({})).unwrap();
    let nodes: Vec<&Value> = log
        .json
        .as_array()
        .unwrap()
        .iter()
        .map(|e| &e["node"])
        .collect();
    assert!(nodes.contains(&&json!(mine_s)), "{nodes:?}");
    for theirs in [todo, held, done, archived] {
        assert!(!nodes.contains(&&json!(theirs.to_string())), "{nodes:?}");
    }

    // An unbound context in the same workspace still reads every workspace.
    let free = Ctx::new(s, "w").unwrap();
    verbs::call(&free, "show", json!({ "node": todo.to_string() })).unwrap();
    verbs::call(&free, "log", json!({ "node": archived.to_string() })).unwrap();
}
