//! Scheduled nodes and the retry backoff: `upsert --not-before`, the `scheduled` word and
//! its time, `config retry_delay`/`retry_delay_max` doubling and capping over hand-backs,
//! `release --retry-in`, old stores read with the new fields null, and bad input refused
//! with nothing changed.

use crate::common::Store;
use crate::{both, Target};
use serde_json::Value;

/// The `at` of the newest event of `verb` on node `id`.
fn last_at(t: &Target, id: &str, verb: &str) -> u64 {
    t.json(&["log", id])
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|e| e["verb"] == verb)
        .and_then(|e| e["at"].as_u64())
        .unwrap_or_else(|| panic!("no {verb} of {id}"))
}

#[test]
fn a_scheduled_node_shows_as_scheduled_with_its_time_and_is_not_granted() {
    for t in both() {
        let n = t.upsert("nightly rebuild", &["--not-before", "2999-01-02T03:04:05Z"]);
        let v = t.node(&n);
        assert_eq!(v["display"], "scheduled", "{v}");
        assert_eq!(v["ready"], false);
        assert_eq!(v["not_before"], 32_472_241_445_000u64);
        assert_eq!(
            v["why"], "scheduled: not before 2999-01-02T03:04:05.000Z",
            "{v}"
        );
        let list = t.ok(&["list"]);
        assert!(list.contains("scheduled"), "{list}");
        let only = t.json(&["list", "--status", "scheduled"]);
        assert_eq!(only.as_array().unwrap().len(), 1, "{only}");
        assert_eq!(only[0]["id"], n.as_str());
        let show = t.ok(&["show", &n]);
        assert!(
            show.lines()
                .any(|l| l.starts_with("not_before") && l.contains("2999-01-02T03:04:05.000Z")),
            "{show}"
        );
        // Not offered, not granted, not claimable by id.
        assert_eq!(t.run(&["next"]).code, Some(1));
        assert_eq!(t.ok(&["ready"]), "");
        assert_eq!(
            t.run(&["claim-next", "--assignee", "name:w1"]).code,
            Some(1)
        );
        let r = t.run(&["claim", &n, "--assignee", "name:w1"]);
        r.refused(
            4,
            "is not ready: scheduled: not before 2999-01-02T03:04:05.000Z",
        );
        // An upsert moves it (an offset from now, here already passed).
        t.ok(&[
            "upsert",
            "--summary",
            "nightly rebuild",
            "--not-before",
            "+0s",
        ]);
        assert_eq!(t.node(&n)["display"], "ready");
        assert!(t
            .ok(&["claim-next", "--assignee", "name:w1"])
            .starts_with(&n));
    }
}

#[test]
fn the_backoff_doubles_with_each_attempt_and_stops_at_its_cap() {
    for t in both() {
        t.ok(&["config", "retry_delay", "100ms"]);
        t.ok(&["config", "retry_delay_max", "350ms"]);
        let n = t.upsert("flaky upload", &[]);
        let mut delays = Vec::new();
        for _ in 0..4 {
            let out = t.run(&["claim-next", "--assignee", "name:w1", "--wait", "30s"]);
            let gen = out.ok().split("gen=").nth(1).unwrap().trim().to_string();
            t.ok(&["release", &n, "--actor", "name:w1", "--gen", &gen]);
            let v = t.node(&n);
            let at = last_at(&t, &n, "release");
            delays.push(v["not_before"].as_u64().unwrap() - at);
        }
        assert_eq!(delays, vec![100, 200, 350, 350]);
        // --retry-in instead of the backoff.
        let out = t.run(&["claim-next", "--assignee", "name:w1", "--wait", "30s"]);
        let gen = out.ok().split("gen=").nth(1).unwrap().trim().to_string();
        t.ok(&[
            "release",
            &n,
            "--actor",
            "name:w1",
            "--gen",
            &gen,
            "--retry-in",
            "1h",
        ]);
        let v = t.node(&n);
        assert_eq!(
            v["not_before"].as_u64().unwrap() - last_at(&t, &n, "release"),
            3_600_000
        );
        assert_eq!(v["display"], "scheduled");
    }
}

#[test]
fn an_expired_claim_comes_back_after_the_backoff() {
    let t = Target::embedded();
    t.ok(&["config", "retry_delay", "2s"]);
    let n = t.upsert("dies quietly", &[]);
    t.ok(&["claim-next", "--assignee", "name:w1", "--ttl", "200ms"]);
    std::thread::sleep(std::time::Duration::from_millis(400));
    // The next write hands it back (expire) with the first backoff.
    t.ok(&["reclaim"]);
    let v = t.node(&n);
    assert_eq!(v["display"], "scheduled", "{v}");
    assert_eq!(
        v["not_before"].as_u64().unwrap() - last_at(&t, &n, "expire"),
        2000
    );
}

#[test]
fn a_store_written_without_the_new_fields_reads_them_as_null_and_defaults() {
    let s = Store::new();
    let n = s.upsert("old node", &[]);
    // A node and settings as a store of the previous format holds them: no not_before, no
    // retry settings; the journal record is byte for byte what an older writer wrote.
    let journal = std::fs::read_to_string(s.dir().join("journal")).unwrap();
    assert!(!journal.contains("not_before") && !journal.contains("retry_delay"));
    s.fold_journal();
    let v = s.node(&n);
    assert_eq!(v["not_before"], Value::Null);
    assert_eq!(v["display"], "ready");
    let cfg = s.json(&["config"]);
    assert_eq!(cfg["retry_delay_ms"], 0);
    assert_eq!(cfg["retry_delay_max_ms"], 3_600_000);
}

#[test]
fn bad_times_waits_and_delays_are_invalid_input_and_change_nothing() {
    let s = Store::new();
    let n = s.upsert("a node", &[]);
    s.ok(&["claim", &n, "--assignee", &crate::common::actor(1)]);
    let who = crate::common::actor(1);
    let cases: [(&[&str], &str); 10] = [
        (
            &["upsert", "--summary", "x", "--not-before", "tomorrow"],
            "bad time \"tomorrow\"",
        ),
        (
            &[
                "upsert",
                "--summary",
                "x",
                "--not-before",
                "2026-02-30T00:00:00Z",
            ],
            "bad time",
        ),
        (
            &["upsert", "--summary", "x", "--not-before", "+5 minutes"],
            "bad duration",
        ),
        (
            &[
                "upsert",
                "--summary",
                "x",
                "--not-before",
                "10000-01-01T00:00:00Z",
            ],
            "bad time",
        ),
        (
            &[
                "upsert",
                "--summary",
                "x",
                "--not-before",
                "+99999999999999d",
            ],
            "too large",
        ),
        (
            &["claim-next", "--assignee", "name:w2", "--wait=-5s"],
            "bad duration",
        ),
        (
            &[
                "claim-next",
                "--assignee",
                "name:w2",
                "--wait",
                "99999999999999999d",
            ],
            "too large",
        ),
        (
            &[
                "release",
                &n,
                "--actor",
                &who,
                "--gen",
                "2",
                "--retry-in",
                "soon",
            ],
            "bad duration",
        ),
        (
            &["config", "retry_delay", "2h"],
            "retry_delay_max (1h) must not be below retry_delay (2h)",
        ),
        // A delay past the end of the clock.
        (
            &[
                "release",
                &n,
                "--actor",
                &who,
                "--gen",
                "2",
                "--retry-in",
                "99999999999d",
            ],
            "retry_in",
        ),
    ];
    for (args, phrase) in cases {
        s.refused(args, 2, phrase, "invalid_input");
    }
}
