//! The end of the clock (year 9999's last millisecond, the latest time a store keeps) bounds
//! every time a node is given: `--not-before` past it is refused naming the text given. And
//! `release --retry-in 0` makes a node ready at once, even one scheduled while it was held.

use crate::both;
use crate::common::actor;
use serde_json::Value;

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
