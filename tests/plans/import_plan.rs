//! `import FILE|-`: plans whose keys refer to each other and to existing nodes, every field a
//! plan node may give, output in plan order, one atomic and idempotent write, refusals that
//! write nothing, and large and deep plans.

use crate::common::{self, id_of, parse_import, short, Store, LONG_LIMIT};
use serde_json::{json, Value};
use std::time::Instant;

fn ids(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap_or_else(|| panic!("not an array: {v}"))
        .iter()
        .map(|x| x.as_str().expect("id string").to_string())
        .collect()
}

#[test]
fn keys_refer_to_each_other_and_to_existing_nodes_and_every_field_lands() {
    let s = Store::new();
    let e1 = s.upsert("an existing node", &[]);
    let e2 = s.upsert("another existing node", &[]);
    let plan = json!({"nodes": [
        {"key": "early", "summary": "declared before what it waits on", "deps": ["late"]},
        {"key": "root", "summary": "plan root", "kind": "epic", "role": "planner",
         "priority": -3, "estimate": 5, "labels": ["x", "y z"], "resources": ["src/a/", "db:users"],
         "ref": "TICKET-12", "max_attempts": 4},
        {"key": "child", "summary": "  child of the root  ", "parent": "root",
         "deps": ["root", e1], "soft_deps": [&e2[..8]]},
        {"key": "under", "summary": "under an existing node", "parent": &e1[..8],
         "deps": ["child"], "soft_deps": ["early"]},
        {"key": "late", "summary": "declared last", "parent": "child"}
    ]});
    let out = s.import_ok(&plan);
    let keys: Vec<&str> = out.iter().map(|(_, k)| k.as_str()).collect();
    assert_eq!(
        keys,
        ["early", "root", "child", "under", "late"],
        "plan order"
    );
    let early = id_of(&out, "early");
    let root = id_of(&out, "root");
    let child = id_of(&out, "child");
    let under = id_of(&out, "under");
    let late = id_of(&out, "late");
    let mut distinct: Vec<&str> = vec![early, root, child, under, late, &e1, &e2];
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), 7, "ids must be distinct: {out:?}");

    the_root_has_every_field(&s, root);

    let c = s.node(child);
    assert_eq!(c["summary"], "child of the root", "summary stored trimmed");
    assert_eq!(c["kind"], "task");
    assert_eq!(c["parent"], root);
    let mut deps = ids(&c["deps"]);
    deps.sort();
    let mut want = vec![root.to_string(), e1.clone()];
    want.sort();
    assert_eq!(deps, want, "hard deps of child");
    assert_eq!(ids(&c["soft_deps"]), vec![e2.clone()], "soft dep by prefix");
    assert_eq!(c["estimate"], 1);
    assert_eq!(c["priority"], 0);
    assert_eq!(c["role"], "");

    let u = s.node(under);
    assert_eq!(u["parent"], e1.as_str(), "parent given as an 8-hex prefix");
    assert_eq!(ids(&u["deps"]), vec![child.to_string()]);
    assert_eq!(ids(&u["soft_deps"]), vec![early.to_string()]);

    assert_eq!(ids(&s.node(early)["deps"]), vec![late.to_string()]);
    assert_eq!(s.node(late)["parent"], child);

    // The ids are the ones upsert mints from the same fields.
    assert_eq!(s.upsert("plan root", &["--kind", "epic"]), root);
    assert_eq!(s.upsert("child of the root", &["--parent", root]), child);
    assert_eq!(s.upsert("declared last", &["--parent", child]), late);
    assert_eq!(
        s.upsert("under an existing node", &["--parent", &e1]),
        under
    );

    // Links behave as links: early waits on late; the root, an epic, follows its children
    // (a container is never ready to claim).
    assert_eq!(s.display(root), "todo");
    assert_eq!(s.display(child), "todo");
    assert_eq!(s.display(early), "todo");
    assert_eq!(s.display(late), "ready");
}

/// The plan's root node holds every field its plan node gave, and the defaults of a new
/// node for the rest.
fn the_root_has_every_field(s: &Store, root: &str) {
    let r = s.node(root);
    assert_eq!(r["summary"], "plan root");
    assert_eq!(r["kind"], "epic");
    assert_eq!(r["role"], "planner");
    assert_eq!(r["priority"], -3);
    assert_eq!(r["estimate"], 5);
    assert_eq!(r["labels"], json!(["x", "y z"]));
    assert_eq!(r["resources"], json!(["src/a/", "db:users"]));
    assert_eq!(r["ref"], "TICKET-12");
    assert_eq!(r["max_attempts"], 4);
    assert_eq!(r["parent"], Value::Null);
    assert_eq!(r["status"], "todo");
    assert_eq!(r["generation"], 1);
    assert_eq!(r["attempts"], 0);
    assert_eq!(r["workspace"], "");
    assert_eq!(r["archived"], false);
}

fn small_plan() -> Value {
    json!({"nodes": [
        {"key": "design", "summary": "design the parser", "estimate": 3},
        {"key": "lex", "summary": "write the lexer", "deps": ["design"], "resources": ["src/lex/"]},
        {"key": "docs", "summary": "document the grammar", "soft_deps": ["design"], "role": "writer"}
    ]})
}

#[test]
fn import_again_prints_the_same_ids_and_writes_nothing() {
    let s = Store::new();
    let first = s.import(&small_plan());
    let out = first.ok().to_string();
    assert_eq!(out.lines().count(), 3, "{out}");
    let pairs = parse_import(&out);
    let before = s.files();
    assert!(before.contains_key("snapshot.json") && before.contains_key("journal"));

    // Again from stdin, from a file, and with --json: same ids, not one byte written.
    let again = s.import(&small_plan());
    assert_eq!(again.ok(), out, "a second import prints the same lines");
    common::assert_files_eq(&before, &s.files(), "second import");

    let path = s.scratch().join("plan.json");
    std::fs::write(&path, small_plan().to_string()).expect("write plan");
    let from_file = s.ok(&["import", path.to_str().expect("utf-8 path")]);
    assert_eq!(from_file, out, "import FILE prints what import - printed");
    common::assert_files_eq(&before, &s.files(), "import FILE of the same plan");

    let j = s.json(&["import", path.to_str().expect("utf-8 path")]);
    let want: Vec<Value> = pairs
        .iter()
        .map(|(id, key)| json!({"id": id, "key": key}))
        .collect();
    assert_eq!(j, Value::Array(want), "--json import");
    common::assert_files_eq(&before, &s.files(), "import --json of the same plan");

    // One write: the journal gained one record for the whole plan.
    let recs = s.journal_records();
    assert_eq!(recs.len(), 1, "one atomic write for the plan: {recs:?}");
    assert_eq!(recs[0]["nodes"].as_array().map(|n| n.len()), Some(3));
    // And the nodes' generations did not move.
    for (id, _) in &pairs {
        assert_eq!(s.node(id)["generation"], 1);
    }
}

#[test]
fn an_import_that_adds_deps_to_existing_nodes_adds_them_once() {
    let s = Store::new();
    let a = s.upsert("already here", &[]);
    let plan = json!({"nodes": [
        {"key": "new", "summary": "new prerequisite"},
        {"key": "old", "summary": "already here", "deps": ["new"]}
    ]});
    let out = s.import_ok(&plan);
    assert_eq!(id_of(&out, "old"), a, "re-declared node keeps its id");
    let new = id_of(&out, "new");
    assert_eq!(ids(&s.node(&a)["deps"]), vec![new.to_string()]);
    assert_eq!(s.display(&a), "todo");
    let before = s.files();
    assert_eq!(s.import_ok(&plan), out);
    common::assert_files_eq(&before, &s.files(), "re-import of the linking plan");
}

/// A plan refused whole: the exit code, the phrase and the key in the message, and nothing
/// written, both into a store that does not exist yet and into one that does.
fn refused_whole(plan: &Value, exit: i32, phrase: &str, code: &str, key: &str) {
    let bytes = plan.to_string().into_bytes();
    // A fresh store: the directory must still be absent afterwards.
    let fresh = Store::new();
    let msg = fresh.refused_full(
        &["import", "-"],
        &[],
        Some(bytes.clone()),
        exit,
        phrase,
        code,
    );
    assert!(
        msg.contains(key),
        "the message does not name key {key:?}: {msg}"
    );
    assert!(!fresh.dir().exists(), "a refused import created the store");
    // An existing store: byte-identical files, the same nodes.
    let s = Store::new();
    let keep = s.upsert("a node that was here before", &[]);
    let listed = s.ok(&["list", "--all"]);
    let msg = s.refused_full(&["import", "-"], &[], Some(bytes), exit, phrase, code);
    assert!(
        msg.contains(key),
        "the message does not name key {key:?}: {msg}"
    );
    assert_eq!(s.ok(&["list", "--all"]), listed);
    assert_eq!(s.node(&keep)["generation"], 1);
}

#[test]
fn a_cycle_is_refused_whole_naming_a_key_on_it() {
    let plan = json!({"nodes": [
        {"key": "fine", "summary": "a fine node"},
        {"key": "loop-a", "summary": "first on the loop", "deps": ["loop-b", "fine"]},
        {"key": "loop-b", "summary": "second on the loop", "deps": ["loop-a"]}
    ]});
    let fresh = Store::new();
    let msg = fresh.refused_full(
        &["import", "-"],
        &[],
        Some(plan.to_string().into_bytes()),
        2,
        "cycle",
        "cycle",
    );
    assert!(
        msg.contains("loop-a") || msg.contains("loop-b"),
        "the message names no key of the loop: {msg}"
    );
    assert!(!msg.contains("\"fine\""), "names the wrong key: {msg}");
    assert!(!fresh.dir().exists());
    refused_whole(&plan, 2, "cycle", "cycle", "loop-");
}

#[test]
fn a_self_dep_is_refused_as_a_cycle() {
    let plan = json!({"nodes": [
        {"key": "ok", "summary": "fine"},
        {"key": "selfish", "summary": "waits on itself", "deps": ["selfish"]}
    ]});
    refused_whole(&plan, 2, "cycle", "cycle", "selfish");
}

#[test]
fn a_cycle_through_an_existing_node_is_refused_and_writes_nothing() {
    let s = Store::new();
    let x = s.upsert("existing x", &[]);
    // "again" re-declares x (same fields, same id) and makes it wait on "p"; "p" waits on x.
    let plan = json!({"nodes": [
        {"key": "p", "summary": "waits on x", "deps": [x]},
        {"key": "again", "summary": "existing x", "deps": ["p"]}
    ]});
    let before = s.ok(&["list", "--all"]);
    let msg = s.refused_full(
        &["import", "-"],
        &[],
        Some(plan.to_string().into_bytes()),
        2,
        "cycle",
        "cycle",
    );
    assert!(
        msg.contains("\"p\"") || msg.contains("\"again\""),
        "the message names no key: {msg}"
    );
    assert_eq!(s.ok(&["list", "--all"]), before);
    assert_eq!(s.node(&x)["deps"], json!([]));
}

#[test]
fn parents_that_form_a_loop_are_refused_naming_a_key() {
    let plan = json!({"nodes": [
        {"key": "fine", "summary": "fine"},
        {"key": "up", "summary": "parent is down", "parent": "down"},
        {"key": "down", "summary": "parent is up", "parent": "up"}
    ]});
    refused_whole(&plan, 2, "loop", "invalid_input", "\"");
    let fresh = Store::new();
    let msg = fresh.refused_full(
        &["import", "-"],
        &[],
        Some(plan.to_string().into_bytes()),
        2,
        "loop",
        "invalid_input",
    );
    assert!(msg.contains("\"up\"") || msg.contains("\"down\""), "{msg}");
    let own = json!({"nodes": [{"key": "me", "summary": "my own parent", "parent": "me"}]});
    refused_whole(&own, 2, "loop", "invalid_input", "\"me\"");
}

#[test]
fn an_unknown_reference_is_not_found_naming_the_key() {
    for (field, value) in [
        ("deps", json!(["nowhere"])),
        ("soft_deps", json!(["nowhere"])),
        ("parent", json!("nowhere")),
        ("deps", json!(["deadbeef"])),
        ("deps", json!(["0123456789abcdef0123456789abcdef"])),
    ] {
        let mut bad = json!({"key": "dangling", "summary": "refers to nothing"});
        bad[field] = value.clone();
        let plan = json!({"nodes": [{"key": "first", "summary": "fine"}, bad]});
        eprintln!("unknown reference in {field}: {value}");
        refused_whole(&plan, 3, "not found", "not_found", "dangling");
    }
}

#[test]
fn a_duplicate_key_is_refused_naming_it() {
    let plan = json!({"nodes": [
        {"key": "twice", "summary": "one"},
        {"key": "other", "summary": "other"},
        {"key": "twice", "summary": "two"}
    ]});
    refused_whole(&plan, 2, "twice", "invalid_input", "twice");
}

#[test]
fn an_unknown_field_is_refused_naming_the_key_and_the_field() {
    let plan = json!({"nodes": [
        {"key": "good", "summary": "fine"},
        {"key": "odd", "summary": "has a stray field", "colour": "blue"}
    ]});
    refused_whole(&plan, 2, "colour", "invalid_input", "odd");
    // An unknown field beside "nodes" is refused as well.
    let plan = json!({"nodes": [{"key": "good", "summary": "fine"}], "extra": 1});
    let s = Store::new();
    s.refused_full(
        &["import", "-"],
        &[],
        Some(plan.to_string().into_bytes()),
        2,
        "extra",
        "invalid_input",
    );
    assert!(!s.dir().exists());
}

#[test]
fn a_bad_field_value_is_refused_naming_the_key() {
    for (field, value, phrase) in [
        ("summary", json!("   "), "summary"),
        ("kind", json!("Bad Kind"), "kind"),
        ("estimate", json!(0), "estimate"),
        ("max_attempts", json!(0), "max_attempts"),
        ("priority", json!("high"), "\"high\""),
    ] {
        let mut bad = json!({"key": "bad-one", "summary": "a summary"});
        bad[field] = value.clone();
        let plan = json!({"nodes": [
            {"key": "good-one", "summary": "fine"},
            bad,
            {"key": "good-two", "summary": "also fine", "deps": ["good-one"]}
        ]});
        eprintln!("bad {field}: {value}");
        refused_whole(&plan, 2, phrase, "invalid_input", "bad-one");
    }
}

#[test]
fn a_plan_that_is_not_a_plan_is_invalid_input() {
    for text in [
        "not json",
        "[]",
        "{\"nodes\": 3}",
        "{\"nodes\": [{\"summary\": \"no key\"}]}",
    ] {
        let s = Store::new();
        let r = s.run_full(
            &["import", "-"],
            &[],
            Some(text.as_bytes().to_vec()),
            common::LIMIT,
        );
        r.refused(2, "plan");
        assert!(!s.dir().exists(), "{text}: created the store");
    }
}

/// A chain-ish plan: node i waits on node i-1, every tenth node on node i-10 instead, and
/// every hundredth node is a child of node i-100.
fn big_plan(n: usize) -> Vec<u8> {
    let mut nodes = Vec::with_capacity(n);
    for i in 0..n {
        let mut v = json!({"key": format!("k{i}"), "summary": format!("generated node {i}")});
        if i > 0 {
            let dep = if i % 10 == 0 && i >= 10 {
                i - 10
            } else {
                i - 1
            };
            v["deps"] = json!([format!("k{dep}")]);
        }
        if i % 100 == 0 && i >= 100 {
            v["parent"] = json!(format!("k{}", i - 100));
        }
        if i % 7 == 0 {
            v["estimate"] = json!(i % 5 + 1);
        }
        nodes.push(v);
    }
    json!({ "nodes": nodes }).to_string().into_bytes()
}

#[test]
fn a_hundred_thousand_node_plan_imports_and_lists() {
    const N: usize = 100_000;
    let s = Store::new();
    let plan = big_plan(N);
    let path = s.scratch().join("big.json");
    std::fs::write(&path, &plan).expect("write plan");
    let path = path.to_str().expect("utf-8 path");
    let t = Instant::now();
    let r = s.run_full(&["import", path], &[], None, LONG_LIMIT);
    let took = t.elapsed();
    let out = r.ok().to_string();
    eprintln!(
        "import of {N} nodes took {:.2}s ({} bytes of plan)",
        took.as_secs_f64(),
        plan.len()
    );
    let pairs = parse_import(&out);
    assert_eq!(pairs.len(), N);
    for (i, (_, key)) in pairs.iter().enumerate().step_by(997) {
        assert_eq!(key, &format!("k{i}"), "line {i} is out of plan order");
    }
    let t = Instant::now();
    let listed = s.run_full(&["list"], &[], None, LONG_LIMIT);
    eprintln!("list of {N} nodes took {:.2}s", t.elapsed().as_secs_f64());
    let text = listed.ok();
    assert_eq!(text.lines().count(), N, "list shows every node");
    let first = text.lines().next().expect("a line");
    assert!(
        first.starts_with(&format!("{}  ready", short(&pairs[0].0))),
        "the first node is the only ready one: {first}"
    );
    assert!(text.lines().skip(1).all(|l| l.contains("  todo ")));
    let last = text.lines().last().expect("a line");
    assert!(
        last.starts_with(&short(&pairs[N - 1].0)),
        "creation order: {last}"
    );
    assert!(last.ends_with(&format!("generated node {}", N - 1)));
    // The store is sound and the head is the next to work on.
    let next = s.run_full(&["next"], &[], None, LONG_LIMIT);
    assert_eq!(next.ok().trim(), pairs[0].0);
}

#[test]
fn a_ten_thousand_deep_chain_of_deps_and_of_parents_imports() {
    const N: usize = 10_000;
    let s = Store::new();
    let mut deps = Vec::with_capacity(N);
    let mut parents = Vec::with_capacity(N);
    for i in 0..N {
        let mut d = json!({"key": format!("d{i}"), "summary": format!("dep chain {i}")});
        let mut p = json!({"key": format!("p{i}"), "summary": format!("parent chain {i}")});
        if i > 0 {
            d["deps"] = json!([format!("d{}", i - 1)]);
            p["parent"] = json!(format!("p{}", i - 1));
        }
        deps.push(d);
        parents.push(p);
    }
    // Parents listed deepest first, so each node's parent is declared after it.
    parents.reverse();
    let mut nodes = deps;
    nodes.extend(parents);
    let plan = json!({ "nodes": nodes }).to_string().into_bytes();
    let r = s.import_bytes(plan.clone(), LONG_LIMIT);
    let pairs = parse_import(r.ok());
    assert_eq!(pairs.len(), 2 * N);
    let d0 = id_of(&pairs, "d0").to_string();
    let dn = id_of(&pairs, &format!("d{}", N - 1)).to_string();
    let p0 = id_of(&pairs, "p0").to_string();
    let p1 = id_of(&pairs, "p1").to_string();
    let pn = id_of(&pairs, &format!("p{}", N - 1)).to_string();
    let pm = id_of(&pairs, &format!("p{}", N - 2)).to_string();
    assert_eq!(s.node(&pn)["parent"], pm.as_str());
    assert_eq!(s.node(&p1)["parent"], p0.as_str());
    assert_eq!(ids(&s.node(&dn)["deps"]).len(), 1);
    assert_eq!(s.display(&dn), "todo");
    // The whole chain hangs on d0: its critical path is N long, the longest of all.
    let ready = s.json(&["ready"]);
    assert_eq!(ready[0]["id"], d0.as_str());
    assert_eq!(ready[0]["critical"], N as u64);
    assert_eq!(s.ok(&["next"]).trim(), d0);
    let check = s.run(&["check"]);
    assert_eq!(
        check.code,
        Some(0),
        "check: {}{}",
        check.stdout,
        check.stderr
    );
    // Re-import changes nothing.
    let before = s.files();
    let again = s.import_bytes(plan, LONG_LIMIT);
    assert_eq!(parse_import(again.ok()), pairs);
    common::assert_files_eq(&before, &s.files(), "re-import of the deep chains");
}

#[test]
fn re_import_after_claims_completions_and_archiving_changes_nothing() {
    let s = Store::new();
    let plan = small_plan();
    let out = s.import(&plan).ok().to_string();
    let pairs = parse_import(&out);
    let design = id_of(&pairs, "design").to_string();
    let me = common::actor(1);
    let g = s.claim(&design, &me, &[]);
    let unchanged = |what: &str| {
        let before = s.files();
        assert_eq!(s.import(&plan).ok(), out, "{what}: the same ids");
        common::assert_files_eq(&before, &s.files(), what);
    };
    unchanged("re-import with a node claimed");
    assert_eq!(s.node(&design)["holder"], me.as_str());
    s.ok(&[
        "complete",
        &design,
        "--status",
        "done",
        "--gen",
        &g.to_string(),
    ]);
    unchanged("re-import with a node done");
    assert_eq!(s.ok(&["archive", &design]), "archived 1\n");
    unchanged("re-import with a node archived");
    assert_eq!(s.node(&design)["archived"], true);
    assert_eq!(s.display(id_of(&pairs, "lex")), "ready");
}

#[test]
fn new_deps_for_a_claimed_node_are_refused_and_a_finished_node_keeps_its_own() {
    let s = Store::new();
    let one = s.upsert("one", &[]);
    let me = common::actor(1);
    let g = s.claim(&one, &me, &[]);
    let plan = json!({"nodes": [
        {"key": "new", "summary": "a new prerequisite"},
        {"key": "one", "summary": "one", "deps": ["new"]}
    ]});
    let msg = s.refused_full(
        &["import", "-"],
        &[],
        Some(plan.to_string().into_bytes()),
        4,
        "already claimed",
        "already_claimed",
    );
    assert!(msg.contains(&me), "names the holder: {msg}");
    s.ok(&[
        "complete",
        &one,
        "--status",
        "done",
        "--gen",
        &g.to_string(),
    ]);
    let out = s.import_ok(&plan);
    assert_eq!(id_of(&out, "one"), one);
    assert_eq!(
        s.node(&one)["deps"],
        json!([]),
        "a finished node gained a prerequisite"
    );
    assert_eq!(s.node(&one)["status"], "done");
}

#[test]
fn a_plan_gives_deadlines_budgets_and_not_before_and_a_bad_one_is_refused_whole() {
    let s = Store::new();
    let out = s.import_ok(&json!({"nodes": [
        {"key": "port", "summary": "port the parser", "deadline": "2030-01-02T03:04:05Z",
         "budget": "tokens=200000,cost=3.5"},
        {"key": "night", "summary": "nightly rebuild", "not_before": "+2h", "deadline": "+1d"}
    ]}));
    let port = s.node(id_of(&out, "port"));
    assert_eq!(port["deadline"], 1_893_553_445_000u64);
    assert_eq!(
        port["budget"],
        json!({"tokens": 200_000, "cost_micros": 3_500_000})
    );
    let night = s.node(id_of(&out, "night"));
    assert_eq!(night["display"], "scheduled");
    let (nb, dl) = (
        night["not_before"].as_u64().unwrap(),
        night["deadline"].as_u64().unwrap(),
    );
    assert_eq!(dl - nb, 22 * 3_600_000, "both from the import's time");
    // Imported again later: the relative times are those of the import that made the node,
    // and nothing is written.
    std::thread::sleep(std::time::Duration::from_millis(20));
    let before = s.ok(&["log"]);
    s.import_ok(&json!({"nodes": [
        {"key": "night", "summary": "nightly rebuild", "not_before": "+2h", "deadline": "+1d"}
    ]}));
    let again = s.node(id_of(&out, "night"));
    assert_eq!(
        (again["not_before"].as_u64(), again["deadline"].as_u64()),
        (Some(nb), Some(dl))
    );
    assert_eq!(s.ok(&["log"]), before, "an import again writes nothing");
    for (field, value, phrase) in [
        ("budget", "tokens=lots", "budget"),
        ("deadline", "next tuesday", "deadline"),
        ("not_before", "+forever", "not_before"),
    ] {
        let plan = json!({"nodes": [
            {"key": "fine", "summary": "a fine node"},
            {"key": "odd", "summary": "an odd one", field: value}
        ]});
        refused_whole(&plan, 2, phrase, "invalid_input", "odd");
    }
}
