//! Claims, leases and generations through the real binary: the fence, the attempt cap,
//! lease expiry and one live claim per actor.

use crate::common::{actor, assert_files_eq, short, Store};
use serde_json::Value;
use std::time::Duration;

/// Long enough for a 200 ms lease to have run out.
fn outlive_a_short_lease() {
    std::thread::sleep(Duration::from_millis(450));
}

#[test]
fn every_grant_and_hand_back_moves_the_generation_by_one() {
    let s = Store::new();
    let a = s.upsert("parse the manifest header", &[]);
    let me = actor(7);
    assert_eq!(s.claim(&a, &me, &[]), 2);
    assert_eq!(
        s.ok(&["release", &a, "--actor", &me, "--gen", "2"]),
        "gen=3\n"
    );
    assert_eq!(s.claim(&a, &me, &["--gen", "3"]), 4);
    assert_eq!(
        s.ok(&["reclaim", "--lease", "0"]),
        format!("{}  todo  gen=5\n", short(&a))
    );
    assert_eq!(s.claim(&a, &me, &[]), 6);
    // complete keeps the generation; reopen moves it.
    s.ok(&["complete", &a, "--status", "failed", "--gen", "6"]);
    let n = s.node(&a);
    assert_eq!(n["status"], "failed");
    assert_eq!(n["generation"], 6);
    assert_eq!(n["completed_by"], me.as_str());
    assert_eq!(n["holder"], Value::Null);
    assert_eq!(s.ok(&["reopen", &a]), "gen=7\n");
    let n = s.node(&a);
    assert_eq!(n["status"], "todo");
    assert_eq!(n["attempts"], 3, "attempts survive every hand-back");
}

/// `list --status claimed` and `--status expired` walk only the claims: they list the same
/// nodes as the whole list filtered by status or display word, in creation order, whatever
/// order the claims were made in.
#[test]
fn listing_claims_gives_the_claimed_and_expired_nodes_in_creation_order() {
    let s = Store::new();
    let ids: Vec<String> = (0..8)
        .map(|i| s.upsert(&format!("node {i}"), &[]))
        .collect();
    s.finish(&ids[2], "done");
    for (k, i) in [5, 0, 3].into_iter().enumerate() {
        s.claim(&ids[i], &actor(20 + k as u64), &["--ttl", "1h"]);
    }
    // Any write hands an expired claim back: these come last.
    for (k, i) in [6, 1, 4].into_iter().enumerate() {
        s.claim(&ids[i], &actor(10 + k as u64), &["--ttl", "1500ms"]);
    }
    std::thread::sleep(Duration::from_millis(1700));
    let listed = |word: &str| -> Vec<String> {
        let v = s.json(&["list", "--status", word]);
        let ids = v.as_array().expect("a list").iter();
        ids.map(|n| n["id"].as_str().expect("id").to_string())
            .collect()
    };
    let all = s.json(&["list", "--all"]);
    let by_word = |word: &str| -> Vec<String> {
        let nodes = all.as_array().expect("a list").iter();
        nodes
            .filter(|n| n["status"] == word || n["display"] == word)
            .map(|n| n["id"].as_str().expect("id").to_string())
            .collect()
    };
    let pick = |at: &[usize]| -> Vec<String> { at.iter().map(|&i| ids[i].clone()).collect() };
    // `claimed` is the stored status (expired claims included), `expired` the display word.
    assert_eq!(listed("claimed"), pick(&[0, 1, 3, 4, 5, 6]));
    assert_eq!(listed("expired"), pick(&[1, 4, 6]));
    assert_eq!(listed("claimed"), by_word("claimed"));
    assert_eq!(listed("expired"), by_word("expired"));
}

#[test]
fn a_renew_keeps_the_generation_and_restarts_the_lease() {
    let s = Store::new();
    let a = s.upsert("parse the manifest header", &[]);
    let me = actor(7);
    s.claim(&a, &me, &["--ttl", "1h"]);
    let before = s.node(&a);
    std::thread::sleep(Duration::from_millis(20));
    assert_eq!(s.ok(&["renew", &a, "--actor", &me, "--gen", "2"]), "");
    let after = s.node(&a);
    assert_eq!(after["generation"], 2);
    assert_eq!(after["holder"], me.as_str());
    assert_eq!(after["claimed_at"], before["claimed_at"]);
    assert!(after["renewed_at"].as_u64() > before["renewed_at"].as_u64());
    assert_eq!(after["ttl_ms"], 3_600_000);
    s.ok(&["renew", &a, "--actor", &me, "--ttl", "10m"]);
    assert_eq!(s.node(&a)["ttl_ms"], 600_000);
}

#[test]
fn an_expired_lease_shows_expired_until_the_next_write_hands_it_back() {
    let s = Store::new();
    let a = s.upsert("parse the manifest header", &[]);
    let b = s.upsert("reject a manifest with no header", &[]);
    let me = actor(7);
    assert_eq!(s.claim(&a, &me, &["--ttl", "200ms"]), 2);
    assert_eq!(s.node(&a)["display"], "claimed");
    outlive_a_short_lease();

    // Reads show the derived word and change nothing.
    let files = s.files();
    assert_eq!(
        s.ok(&["list"]),
        format!(
            "{}  expired  task  gen=2  holder={me}  parse the manifest header\n\
             {}  ready    task  gen=1  reject a manifest with no header\n",
            short(&a),
            short(&b)
        )
    );
    let n = s.node(&a);
    assert_eq!(n["status"], "claimed");
    assert_eq!(n["display"], "expired");
    assert_eq!(n["ready"], false);
    assert_eq!(n["generation"], 2);
    let listed = s.json(&["list", "--status", "expired"]);
    assert_eq!(listed.as_array().map(Vec::len), Some(1), "{listed}");
    assert_eq!(listed[0]["id"], a.as_str());
    assert_files_eq(&files, &s.files(), "reads of an expired claim");

    // Any write hands it back first: here an upsert of an unrelated node.
    s.upsert("a third node", &[]);
    let n = s.node(&a);
    assert_eq!(n["status"], "todo");
    assert_eq!(n["display"], "ready");
    assert_eq!(n["generation"], 3);
    assert_eq!(n["holder"], Value::Null);
    assert_eq!(n["attempts"], 1);
    let log = s.ok(&["log", &a]);
    assert!(log.contains("expire"), "{log}");
}

#[test]
fn an_expired_holder_is_refused_even_when_nobody_claimed_meanwhile() {
    let s = Store::new();
    let a = s.upsert("parse the manifest header", &[]);
    let me = actor(7);
    s.claim(&a, &me, &["--ttl", "200ms"]);
    outlive_a_short_lease();
    let files = s.files();
    for args in [
        vec!["complete", &a, "--status", "done", "--gen", "2"],
        vec![
            "complete", &a, "--status", "done", "--gen", "2", "--actor", &me,
        ],
        vec!["renew", &a, "--actor", &me, "--gen", "2"],
        vec!["renew", &a, "--actor", &me],
        vec!["release", &a, "--actor", &me, "--gen", "2"],
    ] {
        s.run(&args).refused(5, "stale generation");
    }
    // Refused writes did not even commit the hand-back: the files are as they were.
    assert_files_eq(&files, &s.files(), "refused writes of an expired holder");
    assert_eq!(s.node(&a)["display"], "expired");
}

#[test]
fn reclaim_with_a_lease_hands_back_quiet_claims_only() {
    let s = Store::new();
    let a = s.upsert("quiet worker", &[]);
    let b = s.upsert("busy worker", &[]);
    let quiet = actor(7);
    let busy = actor(8);
    s.claim(&a, &quiet, &[]);
    s.claim(&b, &busy, &[]);
    std::thread::sleep(Duration::from_millis(450));
    s.ok(&["renew", &b, "--actor", &busy]);
    // `a` has been quiet for at least 450 ms, `b` was renewed just now.
    assert_eq!(
        s.ok(&["reclaim", "--lease", "400ms"]),
        format!("{}  todo  gen=3\n", short(&a))
    );
    assert_eq!(s.node(&b)["status"], "claimed");
    assert_eq!(s.ok(&["reclaim", "--lease", "1h"]), "");
    let j = s.json(&["reclaim", "--lease", "0"]);
    assert_eq!(j, serde_json::json!([{"id": b, "generation": 3}]));
}

#[test]
fn the_attempt_cap_survives_hand_backs() {
    let s = Store::new();
    let a = s.upsert("flaky step", &["--max-attempts", "2"]);
    let me = actor(7);
    assert_eq!(s.claim(&a, &me, &["--ttl", "200ms"]), 2);
    outlive_a_short_lease();
    assert_eq!(s.ok(&["reclaim"]), format!("{}  todo  gen=3\n", short(&a)));
    assert_eq!(s.claim(&a, &me, &[]), 4);
    assert_eq!(
        s.ok(&["release", &a, "--actor", &me, "--gen", "4"]),
        "gen=5\n"
    );
    let n = s.node(&a);
    assert_eq!(n["attempts"], 2);
    assert_eq!(n["display"], "parked");
    assert!(
        n["why"].as_str().unwrap_or_default().contains("attempts"),
        "show says why: {n}"
    );
    assert!(s.ok(&["list", "--status", "ready"]).is_empty());
    let r = s.run(&["next"]);
    assert_eq!((r.code, r.stdout.as_str()), (Some(1), ""));
    s.refused(
        &["claim", &a, "--assignee", &me],
        4,
        "attempts exhausted",
        "attempts_exhausted",
    );
    let r = s.run(&["claim-next", "--assignee", &me]);
    assert_eq!((r.code, r.stdout.as_str()), (Some(1), ""), "{}", r.stderr);

    // The store-wide cap applies to nodes without their own.
    let b = s.upsert("another step", &[]);
    s.ok(&["config", "max_attempts", "1"]);
    assert_eq!(s.claim(&b, &me, &[]), 2);
    s.ok(&["release", &b, "--actor", &me, "--gen", "2"]);
    s.refused(
        &["claim", &b, "--assignee", &me],
        4,
        "attempts exhausted",
        "attempts_exhausted",
    );
    // Raising the node's own cap makes it ready again.
    s.upsert("another step", &["--max-attempts", "3"]);
    assert_eq!(s.claim(&b, &me, &[]), 4);
}

#[test]
fn one_live_claim_per_actor_and_workspace_by_default() {
    let s = Store::new();
    let a = s.upsert("first", &[]);
    let b = s.upsert("second", &[]);
    let me = actor(7);
    let you = actor(8);
    assert_eq!(config_value(&s, "max_held"), "1");
    assert_eq!(s.claim(&a, &me, &[]), 2);
    s.refused(
        &["claim", &b, "--assignee", &me],
        4,
        "already holds",
        "assignee_busy",
    );
    // Somebody else may claim it.
    assert_eq!(s.claim(&b, &you, &[]), 2);
    s.ok(&["complete", &b, "--status", "done", "--gen", "2"]);
    let c = s.upsert("third", &[]);
    s.refused(
        &["claim", &c, "--assignee", &me],
        4,
        "already holds",
        "assignee_busy",
    );
    // Once the first claim ends, the actor may claim again.
    s.ok(&["complete", &a, "--status", "done", "--gen", "2"]);
    assert_eq!(s.claim(&c, &me, &[]), 2);

    // Another workspace counts on its own.
    let w = s
        .ok(&["--workspace", "other", "upsert", "--summary", "elsewhere"])
        .trim()
        .to_string();
    assert_eq!(
        s.ok(&["--workspace", "other", "claim", &w, "--assignee", &me]),
        "gen=2\n"
    );

    // An expired claim does not count.
    let d = s.upsert("fourth", &[]);
    let e = s.upsert("fifth", &[]);
    let third = actor(9);
    s.claim(&d, &third, &["--ttl", "200ms"]);
    outlive_a_short_lease();
    assert_eq!(s.claim(&e, &third, &[]), 2);

    // max_held 0 lifts the limit.
    s.ok(&["config", "max_held", "0"]);
    let f = s.upsert("sixth", &[]);
    assert_eq!(s.claim(&f, &me, &[]), 2);
}

#[test]
fn claim_next_picks_claims_and_prints_id_and_generation() {
    let s = Store::new();
    let a = s.upsert("small", &[]);
    let b = s.upsert("long chain head", &[]);
    let c = s.upsert("long chain tail", &[]);
    s.ok(&["link", &b, &c]);
    assert_eq!(s.ok(&["next"]), format!("{b}\n"));
    let me = actor(7);
    assert_eq!(
        s.ok(&["claim-next", "--assignee", &me]),
        format!("{b}  gen=2\n")
    );
    let you = actor(8);
    assert_eq!(
        s.ok(&["claim-next", "--assignee", &you]),
        format!("{a}  gen=2\n")
    );
    let r = s.run(&["claim-next", "--assignee", &actor(9)]);
    assert_eq!((r.code, r.stdout.as_str()), (Some(1), ""), "{}", r.stderr);
}

fn config_value(s: &Store, key: &str) -> String {
    s.ok(&["config", key]).trim().to_string()
}

#[test]
fn a_handed_back_holder_is_stale_even_after_the_node_finished_under_someone_else() {
    let s = Store::new();
    let a = s.upsert("parse the manifest header", &[]);
    let (me, you) = (actor(7), actor(8));
    assert_eq!(s.claim(&a, &me, &[]), 2);
    s.ok(&["reclaim", "--lease", "0"]);
    assert_eq!(s.claim(&a, &you, &[]), 4);
    s.ok(&["complete", &a, "--status", "done", "--gen", "4"]);
    let before = s.files();
    // The stalled worker wakes up: every one of its calls is a stale generation (exit 5),
    // not "terminal", so a loop that catches only stale generations does the right thing.
    for args in [
        vec!["complete", &a, "--status", "done", "--gen", "2"],
        vec![
            "complete", &a, "--status", "failed", "--gen", "2", "--actor", &me,
        ],
        vec!["release", &a, "--actor", &me, "--gen", "2"],
        vec!["renew", &a, "--actor", &me, "--gen", "2"],
        vec!["renew", &a, "--actor", &me],
        vec!["claim", &a, "--assignee", &me, "--gen", "2"],
        vec!["reopen", &a, "--gen", "2"],
    ] {
        let e = s.refused(&args, 5, "stale generation", "stale_generation");
        assert_eq!(e["generation"], 4, "{args:?}");
    }
    assert_files_eq(&before, &s.files(), "stale calls");
    // Without a generation, anyone else is told how the node stands.
    s.refused(
        &["renew", &a, "--actor", &actor(9)],
        4,
        "terminal",
        "terminal",
    );
}
