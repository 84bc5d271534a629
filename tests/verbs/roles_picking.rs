//! Roles and picking work: `upsert --role`, `next`/`ready`/`claim-next --role` consider nodes
//! of the role or of no role (no `--role`: only role-less ones); the order is the longest
//! critical path, then higher priority, then the exact role match, then the older node.

use crate::common::{self, actor, parse_gen, short, Store};
use serde_json::Value;

/// The ids `ready --json [--role R]` offers, in order.
fn ready(s: &Store, role: Option<&str>) -> Vec<String> {
    let mut args = vec!["ready"];
    if let Some(r) = role {
        args.extend(["--role", r]);
    }
    s.json(&args)
        .as_array()
        .unwrap_or_else(|| panic!("ready --json is not an array"))
        .iter()
        .map(|p| p["id"].as_str().expect("id").to_string())
        .collect()
}

/// `next [--role R]`: the id, or None after checking exit 1 and an empty stdout.
fn next(s: &Store, role: Option<&str>) -> Option<String> {
    let mut args = vec!["next"];
    if let Some(r) = role {
        args.extend(["--role", r]);
    }
    let r = s.run(&args);
    match r.code {
        Some(0) => Some(r.stdout.trim().to_string()),
        Some(1) => {
            assert_eq!(r.stdout, "", "next with nothing ready printed something");
            None
        }
        other => panic!("next exited {other:?}: {}", r.stderr),
    }
}

/// `claim-next --assignee A [--role R]`: `(id, gen)`, or None after checking exit 1.
fn claim_next(s: &Store, who: &str, role: Option<&str>) -> Option<(String, u64)> {
    let mut args = vec!["claim-next", "--assignee", who];
    if let Some(r) = role {
        args.extend(["--role", r]);
    }
    let r = s.run(&args);
    match r.code {
        Some(0) => {
            let (id, gen) = r
                .stdout
                .trim()
                .split_once("  ")
                .unwrap_or_else(|| panic!("claim-next printed {:?}", r.stdout));
            assert!(common::is_id(id), "claim-next printed {:?}", r.stdout);
            Some((id.to_string(), parse_gen(gen)))
        }
        Some(1) => {
            assert_eq!(
                r.stdout, "",
                "claim-next with nothing ready printed something"
            );
            None
        }
        other => panic!("claim-next exited {other:?}: {}", r.stderr),
    }
}

#[test]
fn a_role_is_stored_and_filters_next_ready_and_claim_next() {
    let s = Store::new();
    let plain = s.upsert("anyone may do this", &[]);
    let writer = s.upsert("writing work", &["--role", "writer"]);
    let reviewer = s.upsert("reviewing work", &["--role", "reviewer"]);
    assert_eq!(s.node(&writer)["role"], "writer");
    assert_eq!(s.node(&plain)["role"], "");
    let shown = s.ok(&["show", &reviewer]);
    assert!(
        shown
            .lines()
            .any(|l| l.starts_with("role") && l.trim_end().ends_with("reviewer")),
        "{shown}"
    );

    // Without --role: role-less nodes only.
    assert_eq!(ready(&s, None), vec![plain.clone()]);
    assert_eq!(next(&s, None).as_deref(), Some(plain.as_str()));
    // With --role: that role and role-less ones, the exact match first.
    assert_eq!(
        ready(&s, Some("writer")),
        vec![writer.clone(), plain.clone()]
    );
    assert_eq!(next(&s, Some("writer")).as_deref(), Some(writer.as_str()));
    assert_eq!(
        ready(&s, Some("reviewer")),
        vec![reviewer.clone(), plain.clone()]
    );
    assert_eq!(ready(&s, Some("nobody")), vec![plain.clone()]);

    // claim-next follows the same rules.
    assert_eq!(
        claim_next(&s, &actor(1), Some("writer")),
        Some((writer.clone(), 2))
    );
    assert_eq!(
        claim_next(&s, &actor(2), Some("writer")),
        Some((plain.clone(), 2))
    );
    assert_eq!(claim_next(&s, &actor(3), Some("writer")), None);
    assert_eq!(claim_next(&s, &actor(3), None), None);
    assert_eq!(next(&s, None), None);
    assert_eq!(
        claim_next(&s, &actor(3), Some("reviewer")),
        Some((reviewer.clone(), 2))
    );
    assert_eq!(s.node(&reviewer)["holder"], actor(3));
    // A bad role word is invalid_input.
    s.refused(
        &["claim-next", "--assignee", &actor(4), "--role", "Bad Role"],
        2,
        "role",
        "invalid_input",
    );
    s.refused(
        &["upsert", "--summary", "x", "--role", "Bad Role"],
        2,
        "role",
        "invalid_input",
    );
}

#[test]
fn on_ties_the_exact_role_match_comes_first_then_the_older_node() {
    let s = Store::new();
    let old_plain = s.upsert("old role-less", &[]);
    let old_role = s.upsert("old tester", &["--role", "tester"]);
    let new_plain = s.upsert("new role-less", &[]);
    let new_role = s.upsert("new tester", &["--role", "tester"]);
    let other = s.upsert("someone else's", &["--role", "other"]);
    assert_eq!(
        ready(&s, Some("tester")),
        vec![
            old_role.clone(),
            new_role.clone(),
            old_plain.clone(),
            new_plain.clone()
        ]
    );
    assert_eq!(ready(&s, None), vec![old_plain.clone(), new_plain.clone()]);
    assert_eq!(
        ready(&s, Some("other")),
        vec![other.clone(), old_plain.clone(), new_plain.clone()]
    );
    // Priority outranks the role match: a role-less node of higher priority comes first.
    s.upsert("new role-less", &["--priority", "1"]);
    assert_eq!(
        ready(&s, Some("tester")),
        vec![new_plain.clone(), old_role, new_role, old_plain]
    );
}

#[test]
fn the_longest_critical_path_comes_first_then_the_higher_priority() {
    let s = Store::new();
    let a = s.upsert("head of a long chain", &[]); // 1 + 5 = 6
    let b = s.upsert("heavy follow-up", &["--estimate", "5"]);
    s.ok(&["link", &a, &b]);
    let c = s.upsert("alone, urgent", &["--estimate", "4", "--priority", "10"]); // 4
    let d = s.upsert("alone, not urgent", &["--estimate", "4"]); // 4
    let e = s.upsert("head of a middling chain", &["--estimate", "2"]); // 2 + 3 = 5
    let f = s.upsert("middling follow-up", &["--estimate", "3"]);
    s.ok(&["link", &e, &f]);
    let order = s.json(&["ready"]);
    let got: Vec<(String, u64)> = order
        .as_array()
        .expect("array")
        .iter()
        .map(|p| {
            (
                p["id"].as_str().expect("id").to_string(),
                p["critical"].as_u64().expect("critical"),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            (a.clone(), 6),
            (e.clone(), 5),
            (c.clone(), 4),
            (d.clone(), 4)
        ],
        "{order}"
    );
    assert_eq!(order[0]["path"], serde_json::json!([a, b]));
    assert_eq!(order[1]["path"], serde_json::json!([e, f]));
    let text = s.ok(&["ready"]);
    let first = text.lines().next().expect("a line");
    assert_eq!(
        first,
        format!(
            "{}  critical=6  head of a long chain  (path: {} > {})",
            short(&a),
            short(&a),
            short(&b)
        )
    );
    assert_eq!(next(&s, None).as_deref(), Some(a.as_str()));

    // Raising d's priority puts it ahead of c (equal critical paths), not ahead of e.
    s.upsert("alone, not urgent", &["--priority", "11"]);
    assert_eq!(ready(&s, None), vec![a.clone(), e.clone(), d.clone(), c]);

    // With a done, b (5) and e (5) tie on path and priority: the older node, b, first.
    let (got, g) = claim_next(&s, &actor(1), None).expect("a claim");
    assert_eq!(got, a);
    s.ok(&["complete", &a, "--status", "done", "--gen", &g.to_string()]);
    let order = s.json(&["ready"]);
    assert_eq!(order[0]["id"], b.as_str());
    assert_eq!(order[0]["critical"], 5);
    assert_eq!(order[1]["id"], e.as_str());
    assert_eq!(order[1]["critical"], 5);
    assert_eq!(claim_next(&s, &actor(2), None), Some((b, 2)));
}

#[test]
fn a_longer_path_of_role_less_work_beats_an_exact_role_match() {
    let s = Store::new();
    let mine = s.upsert("my role's work", &["--role", "builder"]);
    let long = s.upsert("role-less, long path", &["--estimate", "3"]);
    let ids = ready(&s, Some("builder"));
    assert_eq!(ids, vec![long.clone(), mine.clone()]);
    // Another role's long chain is invisible to a builder.
    let theirs = s.upsert(
        "someone else's long work",
        &["--role", "x", "--estimate", "9"],
    );
    assert_eq!(ready(&s, Some("builder")), vec![long, mine]);
    assert_eq!(next(&s, Some("x")).as_deref(), Some(theirs.as_str()));
    let v: Value = s.json(&["ready", "--role", "x"]);
    assert_eq!(v[0]["critical"], 9);
}
