//! The end of the clock (year 9999's last millisecond, the latest time a store keeps) bounds
//! every time a node is given: `--not-before`, the retry backoff and its settings, and
//! `check` says so of a store that holds a later one. And `release --retry-in 0` makes a
//! node ready at once, even one scheduled while it was held.

use crate::common::actor;
use crate::{both, pg, Target};
use claimdag::store::{embedded::Tuning, Clock};
use claimdag::verbs::{self, Ctx};
use serde_json::{json, Value};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// 9999-12-31T23:59:59.999Z.
const LATEST: u64 = 253_402_300_799_999;
/// 3000000 days, in milliseconds: from any time since 1970, past the end of the clock.
const PAST_THE_END: u64 = 3_000_000 * 86_400_000;

#[test]
fn release_retry_in_0_is_ready_at_once_even_when_scheduled_while_held() {
    for t in both() {
        let n = t.upsert("retry the upload", &[]);
        t.ok(&["claim", &n, "--assignee", &actor(1)]);
        t.upsert("retry the upload", &["--not-before", "+1h"]);
        assert!(t.node(&n)["not_before"].is_u64(), "{}", t.node(&n));
        t.ok(&[
            "release",
            &n,
            "--actor",
            &actor(1),
            "--gen",
            "2",
            "--retry-in",
            "0",
        ]);
        let v = t.node(&n);
        assert_eq!(v["display"], "ready", "{v}");
        assert_eq!(v["not_before"], Value::Null, "{v}");
        assert_eq!(t.ok(&["next"]).trim(), n);
    }
}

#[test]
fn a_time_past_the_end_of_the_clock_is_refused_naming_the_text() {
    for t in both() {
        let r = t.run(&["upsert", "--summary", "x", "--not-before", "+3000000d"]);
        r.refused(2, "+3000000d");
        let ms = (PAST_THE_END / 1_000_000).to_string();
        assert!(!r.stderr.contains(&ms), "{}", r.stderr);
        assert_eq!(t.ok(&["list", "--all"]), "");
    }
}

#[test]
fn a_retry_delay_the_clock_cannot_reach_is_refused_naming_the_setting_and_text() {
    for t in both() {
        t.upsert("a node", &[]);
        let cases = [
            ("retry_delay_max", "3000000d"),
            ("retry_delay_max", "99999999999999999999d"),
            ("retry_delay", "99999999999999999999d"),
            ("retry_delay", "99999999999999999999"),
        ];
        for (key, value) in cases {
            t.run(&["config", key, value])
                .refused(2, key)
                .refused(2, &format!("{value:?}"));
        }
        assert_eq!(t.ok(&["config", "retry_delay_max"]), "1h\n");
        assert_eq!(t.ok(&["config", "retry_delay"]), "0\n");
    }
}

/// A psql command on the test server's database.
fn psql(sql: &str) {
    let out = std::process::Command::new("psql")
        .arg(pg::url())
        .args(["-X", "-q", "-v", "ON_ERROR_STOP=1", "-c", sql])
        .output()
        .expect("run psql");
    assert!(
        out.status.success(),
        "psql {sql}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Edits a store behind its back, as a store written by an older claimdag may be: `edit`
/// gets the settings and the nodes (by id) as JSON.
fn edit_store(t: &Target, mut edit: impl FnMut(&mut Value, &mut Vec<Value>)) {
    if t.dir.starts_with("postgres") {
        let schema = t.dir.rsplit("schema=").next().unwrap().to_string();
        let mut settings = json!({"default_ttl_ms": 900_000, "max_held": 1, "max_attempts": null,
                                 "retry_delay_max_ms": 3_600_000});
        let mut nodes: Vec<Value> = Vec::new();
        edit(&mut settings, &mut nodes);
        psql(&format!(
            "UPDATE \"{schema}\".store SET settings = '{settings}'::jsonb, \
             settings_version = settings_version + 1 WHERE id = 1"
        ));
        for n in nodes {
            psql(&format!(
                "UPDATE \"{schema}\".nodes SET body = '{n}'::jsonb WHERE id = '{}'",
                n["id"].as_str().unwrap()
            ));
        }
        return;
    }
    let dir = Path::new(&t.dir);
    crate::common::fold_journal(dir);
    let path = dir.join("snapshot.json");
    let mut snap: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    if snap["settings"].is_null() {
        snap["settings"] = serde_json::to_value(claimdag::Settings::default()).unwrap();
    }
    let mut settings = snap["settings"].clone();
    let mut nodes = snap["nodes"].as_array().unwrap().clone();
    edit(&mut settings, &mut nodes);
    snap["settings"] = settings;
    snap["nodes"] = Value::Array(nodes);
    std::fs::write(&path, serde_json::to_vec(&snap).unwrap()).unwrap();
}

/// The node `id` as the store keeps it (for `edit_store`).
fn stored(t: &Target, id: &str) -> Value {
    if t.dir.starts_with("postgres") {
        let schema = t.dir.rsplit("schema=").next().unwrap().to_string();
        let out = std::process::Command::new("psql")
            .arg(pg::url())
            .args(["-X", "-q", "-t", "-A", "-c"])
            .arg(format!(
                "SELECT body FROM \"{schema}\".nodes WHERE id = '{id}'"
            ))
            .output()
            .expect("run psql");
        return serde_json::from_slice(&out.stdout).expect("a node's body");
    }
    Value::Null
}

#[test]
fn the_backoff_of_an_old_store_stops_at_the_end_of_the_clock() {
    for t in both() {
        let n = t.upsert("retry the upload", &[]);
        edit_store(&t, |s, _| {
            s["retry_delay_ms"] = json!(PAST_THE_END);
            s["retry_delay_max_ms"] = json!(PAST_THE_END);
        });
        t.ok(&["claim", &n, "--assignee", &actor(1)]);
        t.ok(&["release", &n, "--actor", &actor(1), "--gen", "2"]);
        let v = t.node(&n);
        assert_eq!(v["not_before"], LATEST, "{v}");
        assert_eq!(v["display"], "scheduled", "{v}");
        let shown = t.ok(&["show", &n]);
        assert!(shown.contains("9999-12-31T23:59:59.999Z"), "{shown}");
        t.ok(&["check"]);
    }
}

#[test]
fn check_reports_a_not_before_past_the_end_of_the_clock() {
    for t in both() {
        let n = t.upsert("scheduled too late", &[]);
        let mut body = stored(&t, &n);
        edit_store(&t, |_, nodes| {
            if body.is_null() {
                body = nodes
                    .iter()
                    .find(|x| x["id"] == n.as_str())
                    .unwrap()
                    .clone();
            }
            body["not_before"] = json!(LATEST + 1);
            nodes.retain(|x| x["id"] != n.as_str());
            nodes.push(body.clone());
        });
        let r = t.run(&["check"]);
        r.refused(6, "");
        assert!(
            r.stdout.contains("not_before") && r.stdout.contains(&n),
            "{}",
            r.stdout
        );
        assert!(
            r.stdout.contains("9999-12-31T23:59:59.999Z"),
            "{}",
            r.stdout
        );
    }
}

/// A clock the test sets.
struct TestClock(AtomicU64);

impl Clock for TestClock {
    fn now_ms(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }
}

#[test]
fn a_hand_back_near_the_end_of_the_clock_is_scheduled_no_later_than_it() {
    let tmp = tempfile::tempdir().unwrap();
    let clock = Arc::new(TestClock(AtomicU64::new(1_800_000_000_000)));
    let tuning = Tuning {
        sync: false,
        compact_min_bytes: 1 << 20,
        ..Tuning::default()
    };
    let store = claimdag::Store::with(tmp.path().join("store"), tuning, clock.clone());
    let cx = Ctx::new(&store, "").unwrap();
    let call = |verb: &str, args: Value| verbs::call(&cx, verb, args).unwrap();
    call("config", json!({"key": "retry_delay_max", "value": "2h"}));
    call("config", json!({"key": "retry_delay", "value": "1h"}));
    let id = call("upsert", json!({"summary": "retry the upload"})).json["id"].clone();
    // Half an hour before the end: the backoff of an hour would end in year 10000.
    clock.0.store(LATEST - 1_800_000, Ordering::SeqCst);
    call("claim", json!({"node": id, "assignee": "name:w1"}));
    call("release", json!({"node": id, "actor": "name:w1", "gen": 2}));
    let shown = call("show", json!({"node": id}));
    assert_eq!(shown.json["not_before"], LATEST, "{}", shown.json);
    assert!(
        shown.text.contains("9999-12-31T23:59:59.999Z"),
        "{}",
        shown.text
    );
    assert_eq!(call("check", json!({})).exit, 0);
}
