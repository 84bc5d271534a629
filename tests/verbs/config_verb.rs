//! `config [KEY [VALUE]]`: the defaults, setting each key, values that persist, and what each
//! setting does to claims: `max_held` (0 = no limit), `max_attempts`, `default_ttl`. Bad keys
//! and values are `invalid_input` and change nothing.

use crate::common::{self, actor, Store};
use std::time::Duration;

const DEFAULTS: &str =
    "default_ttl 15m\nmax_held 1\nmax_attempts none\nretry_delay 0\nretry_delay_max 1h\nhistory_keep all\n\
     deadline_action none\n";

#[test]
fn a_new_store_shows_the_defaults_without_creating_itself() {
    let s = Store::new();
    assert_eq!(s.ok(&["config"]), DEFAULTS);
    assert_eq!(s.ok(&["config", "default_ttl"]), "15m\n");
    assert_eq!(s.ok(&["config", "max_held"]), "1\n");
    assert_eq!(s.ok(&["config", "max_attempts"]), "none\n");
    assert_eq!(
        s.json(&["config"]),
        serde_json::json!({"default_ttl_ms": 900_000, "max_held": 1, "max_attempts": null,
                           "retry_delay_ms": 0, "retry_delay_max_ms": 3_600_000,
                           "history_keep": "all", "deadline_action": "none"})
    );
    assert!(!s.dir().exists(), "reading the settings created the store");
}

#[test]
fn each_setting_can_be_set_and_persists() {
    let s = Store::new();
    assert_eq!(s.ok(&["config", "default_ttl", "30m"]), "30m\n");
    assert!(s.dir().exists(), "the first setting creates the store");
    assert_eq!(s.ok(&["config", "max_held", "3"]), "3\n");
    assert_eq!(s.ok(&["config", "max_attempts", "5"]), "5\n");
    assert_eq!(s.ok(&["config", "retry_delay", "30s"]), "30s\n");
    assert_eq!(s.ok(&["config", "retry_delay_max", "10m"]), "10m\n");
    assert_eq!(s.ok(&["config", "history_keep", "7d"]), "7d\n");
    assert_eq!(s.ok(&["config", "deadline_action", "cancel"]), "cancel\n");
    assert_eq!(
        s.ok(&["config"]),
        "default_ttl 30m\nmax_held 3\nmax_attempts 5\nretry_delay 30s\nretry_delay_max 10m\n\
         history_keep 7d\ndeadline_action cancel\n"
    );
    assert_eq!(
        s.json(&["config"]),
        serde_json::json!({"default_ttl_ms": 1_800_000, "max_held": 3, "max_attempts": 5,
                           "retry_delay_ms": 30_000, "retry_delay_max_ms": 600_000,
                           "history_keep": "7d", "deadline_action": "cancel"})
    );
    // A count of events, everything, and a duration again.
    assert_eq!(s.ok(&["config", "history_keep", "1000000"]), "1000000\n");
    assert_eq!(s.ok(&["config", "history_keep", "all"]), "all\n");
    assert_eq!(s.ok(&["config", "history_keep", "12h"]), "12h\n");
    // Other units are read and shown in the largest exact unit.
    assert_eq!(s.ok(&["config", "default_ttl", "90s"]), "90s\n");
    assert_eq!(s.ok(&["config", "default_ttl", "7200"]), "2h\n");
    assert_eq!(s.ok(&["config", "default_ttl"]), "2h\n");
    // A claim without --ttl gets the default ttl; the store's cap shows on the node's claim.
    let n = s.upsert("a node", &[]);
    s.claim(&n, &actor(1), &[]);
    assert_eq!(s.node(&n)["ttl_ms"], 7_200_000);
    // Settings survive the journal being folded into the snapshot.
    s.fold_journal();
    assert_eq!(
        s.ok(&["config"]),
        "default_ttl 2h\nmax_held 3\nmax_attempts 5\nretry_delay 30s\nretry_delay_max 10m\n\
         history_keep 12h\ndeadline_action cancel\n"
    );
    assert_eq!(s.ok(&["config", "retry_delay", "0"]), "0\n");
    assert_eq!(s.ok(&["config", "retry_delay_max", "1h"]), "1h\n");
    assert_eq!(s.ok(&["config", "max_attempts", "none"]), "none\n");
    assert_eq!(s.ok(&["config", "max_held", "1"]), "1\n");
    assert_eq!(s.ok(&["config", "default_ttl", "15m"]), "15m\n");
    assert_eq!(s.ok(&["config", "history_keep", "all"]), "all\n");
    assert_eq!(s.ok(&["config", "deadline_action", "none"]), "none\n");
    assert_eq!(s.ok(&["config"]), DEFAULTS);
    let log = s.ok(&["log"]);
    assert!(
        log.lines().filter(|l| l.contains("config")).count() >= 6,
        "every change is in the history: {log}"
    );
    // Setting a value it already has writes nothing.
    let before = s.files();
    assert_eq!(s.ok(&["config", "max_held", "1"]), "1\n");
    common::assert_files_eq(&before, &s.files(), "config to the same value");
}

#[test]
fn max_held_zero_means_no_limit() {
    let s = Store::new();
    s.ok(&["config", "max_held", "0"]);
    let me = actor(1);
    for i in 0..4 {
        let n = s.upsert(&format!("task {i}"), &[]);
        assert_eq!(s.claim(&n, &me, &[]), 2, "claim {i} of one actor");
    }
    let held = s.json(&["list", "--holder", &me]);
    assert_eq!(held.as_array().map(|a| a.len()), Some(4));
}

#[test]
fn max_held_two_allows_exactly_two() {
    let s = Store::new();
    let me = actor(1);
    let ids: Vec<String> = (0..3)
        .map(|i| s.upsert(&format!("task {i}"), &[]))
        .collect();
    // The default: one.
    s.claim(&ids[0], &me, &[]);
    s.refused(
        &["claim", &ids[1], "--assignee", &me],
        4,
        "already holds",
        "assignee_busy",
    );
    s.ok(&["config", "max_held", "2"]);
    s.claim(&ids[1], &me, &[]);
    s.refused(
        &["claim", &ids[2], "--assignee", &me],
        4,
        "already holds",
        "assignee_busy",
    );
    let r = s.run(&["claim-next", "--assignee", &me]);
    r.refused(4, "already holds");
    // Another actor is not limited by my claims.
    assert_eq!(s.claim(&ids[2], &actor(2), &[]), 2);
}

#[test]
fn max_attempts_caps_the_claims_of_a_node() {
    let s = Store::new();
    s.ok(&["config", "max_attempts", "2"]);
    let n = s.upsert("flaky work", &[]);
    let own = s.upsert("its own cap", &["--max-attempts", "3"]);
    let me = actor(1);
    for id in [&n, &own] {
        for _ in 0..2 {
            let g = s.claim(id, &me, &[]);
            s.ok(&["release", id, "--actor", &me, "--gen", &g.to_string()]);
        }
    }
    s.refused(
        &["claim", &n, "--assignee", &me],
        4,
        "attempts exhausted",
        "attempts_exhausted",
    );
    let node = s.node(&n);
    assert_eq!(node["attempts"], 2);
    assert_eq!(node["display"], "parked");
    assert_eq!(node["ready"], false);
    assert!(
        node["why"]
            .as_str()
            .unwrap_or_default()
            .contains("attempts"),
        "{node}"
    );
    // The node's own cap wins over the store's.
    assert_eq!(s.claim(&own, &me, &[]), 6);
    // Lifting the store's cap makes the first node ready again.
    s.ok(&["config", "max_attempts", "none"]);
    assert_eq!(s.display(&n), "ready");
}

#[test]
fn default_ttl_sets_the_lease_of_a_claim_without_ttl() {
    let s = Store::new();
    s.ok(&["config", "default_ttl", "1s"]);
    let short_lease = s.upsert("default lease", &[]);
    let long_lease = s.upsert("explicit lease", &[]);
    s.claim(&short_lease, &actor(1), &[]);
    s.claim(&long_lease, &actor(2), &["--ttl", "1h"]);
    assert_eq!(s.node(&short_lease)["ttl_ms"], 1000);
    std::thread::sleep(Duration::from_millis(1200));
    let list = s.ok(&["list"]);
    let line = |id: &str| {
        list.lines()
            .find(|l| l.starts_with(&id[..8]))
            .unwrap_or_else(|| panic!("{id} not listed: {list}"))
            .to_string()
    };
    assert!(line(&short_lease).contains("  expired  "), "{list}");
    assert!(line(&long_lease).contains("  claimed  "), "{list}");
}

/// Every bad setting, refused the same way in a store that does not exist yet and in one that
/// does, leaving it as it was.
#[test]
fn bad_keys_and_values_are_invalid_input_and_change_nothing() {
    let cases: [(&[&str], &str); 18] = [
        (
            &["config", "retry_delay", "2h"],
            "retry_delay_max (1h) must not be below",
        ),
        (&["config", "retry_delay", "--", "-5s"], "duration"),
        (
            &["config", "retry_delay_max", "99999999999999999d"],
            "99999999999999999d",
        ),
        (&["config", "retry_delay_max", "soon"], "duration"),
        (&["config", "default_ttl", "abc"], "duration"),
        (&["config", "default_ttl", "0"], "default_ttl"),
        (&["config", "default_ttl", "1.5s"], "duration"),
        (
            &["config", "default_ttl", "999999999999999999d"],
            "999999999999999999d",
        ),
        (&["config", "max_held", "--", "-1"], "max_held"),
        (&["config", "max_held", "many"], "max_held"),
        (&["config", "max_attempts", "0"], "max_attempts"),
        (&["config", "max_attempts", "--", "-2"], "max_attempts"),
        (&["config", "history_keep", "30s"], "at least 1m"),
        (&["config", "history_keep", "0"], "at least 1 event"),
        (
            &["config", "history_keep", "forever"],
            "history_keep must be all",
        ),
        (&["config", "bogus", "1"], "bogus"),
        (&["config", "deadline_action", "stop"], "none or cancel"),
        (&["config", "bogus"], "bogus"),
    ];
    let fresh = Store::new();
    let s = Store::new();
    s.ok(&["config", "max_held", "2"]);
    s.upsert("a node", &[]);
    for (args, phrase) in cases {
        fresh.refused(args, 2, phrase, "invalid_input");
        assert!(!fresh.dir().exists(), "{args:?} created the store");
        s.refused(args, 2, phrase, "invalid_input");
        assert_eq!(
            s.ok(&["config"]),
            "default_ttl 15m\nmax_held 2\nmax_attempts none\nretry_delay 0\nretry_delay_max 1h\n\
             history_keep all\ndeadline_action none\n"
        );
    }
    // A negative number without `--` is a usage error: exit 2, nothing written.
    let before = s.files();
    let r = s.run(&["config", "max_held", "-1"]);
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    common::assert_files_eq(&before, &s.files(), "config max_held -1");
}
