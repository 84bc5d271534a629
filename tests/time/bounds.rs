//! `release --retry-in 0` makes a node ready at once, even one scheduled while it was held.

use crate::both;
use crate::common::actor;
use serde_json::Value;

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
