//! Resources: live claims in one workspace whose resources overlap (equal, or one ends in `/`
//! and the other starts with it) exclude each other with `resource_conflict` (exit 4); a
//! released, completed or expired claim frees them; workspaces never conflict; `claim-next`
//! skips a candidate that conflicts and takes the next.

use crate::common::{actor, parse_gen, Store};

fn gen_of(s: &Store, id: &str) -> String {
    s.node(id)["generation"].to_string()
}

/// Claims `id` for `who` expecting a resource conflict with `holder` over `mine`/`held`.
fn conflict(s: &Store, id: &str, who: &str, holder: &str, held_node: &str, mine: &str, held: &str) {
    let before = s.node(id);
    let msg = s.refused_text(
        &["claim", id, "--assignee", who],
        4,
        "resource",
        "resource_conflict",
    );
    for part in [holder, held_node, mine, held] {
        assert!(msg.contains(part), "the message lacks {part:?}: {msg}");
    }
    assert_eq!(s.node(id), before, "a refused claim changed the node");
    assert_eq!(before["status"], "todo");
}

#[test]
fn a_directory_and_a_file_under_it_exclude_each_other_until_released() {
    let s = Store::new();
    let tree = s.upsert("rework the source tree", &["--resource", "src/"]);
    let file = s.upsert("fix the parser", &["--resource", "src/parser.rs"]);
    assert_eq!(s.node(&tree)["resources"], serde_json::json!(["src/"]));
    let (a, b) = (actor(1), actor(2));
    let g = s.claim(&tree, &a, &[]);
    conflict(&s, &file, &b, &a, &tree, "src/parser.rs", "src/");
    // The JSON error names the holder and the node holding it.
    let r = s.run(&["--json", "claim", &file, "--assignee", &b]);
    let e = r.error_json();
    assert_eq!(e["code"], "resource_conflict");
    assert_eq!(e["holder"], a.as_str(), "{e}");
    // Released: the file is free to claim.
    s.ok(&["release", &tree, "--actor", &a, "--gen", &g.to_string()]);
    let gf = s.claim(&file, &b, &[]);
    assert_eq!(gf, 2);
    // The other way round: the file's claim keeps the tree out.
    conflict(&s, &tree, &a, &b, &file, "src/", "src/parser.rs");
    // Completed: free again.
    s.ok(&[
        "complete",
        &file,
        "--status",
        "done",
        "--gen",
        &gf.to_string(),
    ]);
    assert_eq!(s.claim(&tree, &a, &[]), 4);
}

#[test]
fn equal_strings_overlap_and_near_prefixes_do_not() {
    let s = Store::new();
    let u1 = s.upsert("migrate users", &["--resource", "db:users"]);
    let u2 = s.upsert("index users", &["--resource", "db:users"]);
    let a = s.upsert("touch src/a", &["--resource", "src/a"]);
    let ab = s.upsert("touch src/ab", &["--resource", "src/ab"]);
    let a_sub = s.upsert("touch src/a/b", &["--resource", "src/a/b"]);
    let multi = s.upsert(
        "two resources",
        &["--resource", "docs/", "--resource", "db:orders"],
    );
    let orders = s.upsert("orders only", &["--resource", "db:orders"]);
    s.claim(&u1, &actor(1), &[]);
    conflict(&s, &u2, &actor(2), &actor(1), &u1, "db:users", "db:users");
    // "src/a" does not end in "/": it covers neither "src/ab" nor "src/a/b".
    assert_eq!(s.claim(&a, &actor(3), &[]), 2);
    assert_eq!(s.claim(&ab, &actor(4), &[]), 2);
    assert_eq!(s.claim(&a_sub, &actor(5), &[]), 2);
    // Any one overlapping resource of several is enough.
    s.claim(&multi, &actor(6), &[]);
    conflict(
        &s,
        &orders,
        &actor(7),
        &actor(6),
        &multi,
        "db:orders",
        "db:orders",
    );
}

#[test]
fn an_expired_claim_frees_its_resources() {
    let s = Store::new();
    let one = s.upsert("first user of the lock", &["--resource", "lock:deploy"]);
    let two = s.upsert("second user of the lock", &["--resource", "lock:deploy"]);
    s.claim(&one, &actor(1), &["--ttl", "1s"]);
    conflict(
        &s,
        &two,
        &actor(2),
        &actor(1),
        &one,
        "lock:deploy",
        "lock:deploy",
    );
    std::thread::sleep(std::time::Duration::from_millis(1200));
    assert_eq!(s.display(&one), "expired");
    assert_eq!(s.claim(&two, &actor(2), &[]), 2);
}

#[test]
fn different_workspaces_never_conflict_over_a_resource() {
    let s = Store::new();
    let a = s.upsert_ws("alpha", "deploy alpha", &["--resource", "infra/"]);
    let b = s.upsert_ws("beta", "deploy beta", &["--resource", "infra/"]);
    let b2 = s.upsert_ws("beta", "also deploy beta", &["--resource", "infra/dns"]);
    let out = s.ok_ws("alpha", &["claim", &a, "--assignee", &actor(1)]);
    assert_eq!(parse_gen(&out), 2);
    let out = s.ok_ws("beta", &["claim", &b, "--assignee", &actor(2)]);
    assert_eq!(parse_gen(&out), 2);
    // Inside beta the overlap still counts.
    let r = s.run_ws("beta", &["claim", &b2, "--assignee", &actor(3)]);
    r.refused(4, "resource");
}

#[test]
fn claim_next_skips_a_candidate_whose_resources_conflict() {
    let s = Store::new();
    let held = s.upsert("holds the library", &["--resource", "src/lib/"]);
    let best = s.upsert(
        "best candidate, same library",
        &["--resource", "src/lib/mod.rs", "--estimate", "5"],
    );
    let second = s.upsert(
        "second candidate, docs",
        &["--resource", "docs/", "--estimate", "3"],
    );
    let g = s.claim(&held, &actor(1), &[]);
    // Without the conflict the best candidate would go first.
    let order = s.json(&["ready"]);
    assert_eq!(order[0]["id"], best.as_str());
    let out = s.ok(&["claim-next", "--assignee", &actor(2)]);
    assert_eq!(out, format!("{second}  gen=2\n"));
    assert_eq!(s.node(&best)["status"], "todo");
    // Only conflicting candidates left: nothing to claim, exit 1, nothing printed.
    let r = s.run(&["claim-next", "--assignee", &actor(3)]);
    assert_eq!(r.code, Some(1), "{}{}", r.stdout, r.stderr);
    assert_eq!(r.stdout, "");
    assert_eq!(s.node(&best)["status"], "todo");
    // Completing the holder frees the library for claim-next.
    s.ok(&[
        "complete",
        &held,
        "--status",
        "done",
        "--gen",
        &g.to_string(),
    ]);
    let out = s.ok(&["claim-next", "--assignee", &actor(3)]);
    assert_eq!(out, format!("{best}  gen=2\n"));
    assert_eq!(gen_of(&s, &best), "2");
}

#[test]
fn path_globs_exclude_each_other_where_some_path_matches_both() {
    let s = Store::new();
    let rust = s.upsert("rework the sources", &["--resource", "path:src/**/*.rs"]);
    let main = s.upsert("fix main", &["--resource", "path:src/main.*"]);
    let docs = s.upsert("write the docs", &["--resource", "path:docs/**"]);
    let (a, b) = (actor(1), actor(2));
    s.claim(&rust, &a, &[]);
    // src/main.rs is claimed by both globs.
    conflict(
        &s,
        &main,
        &b,
        &a,
        &rust,
        "path:src/main.*",
        "path:src/**/*.rs",
    );
    // No path is claimed by both.
    s.claim(&docs, &b, &[]);
    // A plain resource and a glob never overlap: plain names keep their meaning.
    let plain = s.upsert("a plain name", &["--resource", "src/main.rs"]);
    s.claim(&plain, &actor(3), &[]);
}

#[test]
fn readers_hold_together_and_a_writer_holds_alone() {
    let s = Store::new();
    s.ok(&["config", "max_held", "0"]);
    let r1 = s.upsert("read the schema", &["--resource", "read:path:schema/**"]);
    let r2 = s.upsert("read it too", &["--resource", "read:path:schema/v1.sql"]);
    let w = s.upsert("change the schema", &["--resource", "path:schema/v2.sql"]);
    let (a, b, c) = (actor(1), actor(2), actor(3));
    s.claim(&r1, &a, &[]);
    s.claim(&r2, &b, &[]);
    conflict(
        &s,
        &w,
        &c,
        &a,
        &r1,
        "path:schema/v2.sql",
        "read:path:schema/**",
    );
    // With the readers gone, the writer holds it, and keeps a reader out.
    for (n, who) in [(&r1, &a), (&r2, &b)] {
        let g = gen_of(&s, n);
        s.ok(&["release", n, "--actor", who, "--gen", &g]);
    }
    s.claim(&w, &c, &[]);
    conflict(
        &s,
        &r1,
        &a,
        &c,
        &w,
        "read:path:schema/**",
        "path:schema/v2.sql",
    );
}

#[test]
fn a_bad_glob_is_refused_naming_it() {
    let s = Store::new();
    for (glob, says) in [
        ("path:", "empty"),
        ("path:/etc/passwd", "absolute"),
        ("path:src/../secrets", "`..`"),
        ("path:src//a", "empty segment"),
        ("path:[abc", "not closed"),
        ("read:", "names nothing"),
    ] {
        s.refused(
            &["upsert", "--summary", "x", "--resource", glob],
            2,
            says,
            "invalid_input",
        );
    }
}
