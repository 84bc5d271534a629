//! A write is judged at the server's time of commit (SPEC sections 3 and 8): a `complete` or
//! a `renew` decided while the lease ran but reaching the server after it ran out is refused
//! as an expired holder's, even when nobody claimed meanwhile. And a server clock that steps
//! back (a failover to a host that is behind, an NTP step) does not stop the store's writes.

use super::proxy::Proxy;
use super::{cli, pg, psql, schema_of, server_port};
use crate::common::actor;
use std::time::Duration;

/// The texts of the statement that commits a write (any version of the schema).
const COMMIT_STATEMENT: &[&str] = &[
    ".commit2(",
    ".commit3(",
    ".commit4(",
    ".commit7(",
    ".commit13(",
    ".commit(",
];

/// The lease runs 3 s; the write's statement is held back 6 s on its way to the server.
fn late_write(verb: &[&str]) {
    let url = pg::fresh_url();
    let a = cli(&url, &["upsert", "--summary", "decided in time, sent late"])
        .ok()
        .trim()
        .to_string();
    let me = actor(1);
    assert_eq!(
        cli(&url, &["claim", &a, "--assignee", &me, "--ttl", "3s"]).ok(),
        "gen=2\n"
    );
    let proxy = Proxy::start(server_port(), COMMIT_STATEMENT, Duration::from_secs(6));
    let slow = proxy.store_url(&url);
    let mut args: Vec<&str> = verb.to_vec();
    args[1] = &a;
    args.extend(["--actor", &me]);
    let r = cli(&slow, &args);
    assert!(
        proxy.hits() >= 1,
        "the write's statement went through the proxy"
    );
    r.refused(5, "stale generation");
    // Refused: the node was not finished or renewed; it reads expired, at generation 2.
    let node = cli(&url, &["--json", "show", &a]).json();
    assert_eq!(node["status"], "claimed", "{node}");
    assert_eq!(node["display"], "expired", "{node}");
    assert_eq!(node["generation"], 2, "{node}");
    let log = cli(&url, &["--json", "log", &a]).json();
    let verbs: Vec<&str> = log
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["verb"].as_str().unwrap())
        .collect();
    assert_eq!(verbs, ["create", "claim"], "{log}");
}

#[test]
fn a_complete_that_reaches_the_server_after_the_lease_ran_out_is_refused() {
    late_write(&["complete", "ID", "--status", "done", "--gen", "2"]);
}

#[test]
fn a_renew_that_reaches_the_server_after_the_lease_ran_out_is_refused() {
    late_write(&["renew", "ID", "--gen", "2", "--ttl", "1h"]);
}

#[test]
fn a_write_that_arrives_late_while_the_lease_still_runs_is_accepted() {
    // The same delay within the lease is only slow: the write holds.
    let url = pg::fresh_url();
    let a = cli(&url, &["upsert", "--summary", "slow but in time"])
        .ok()
        .trim()
        .to_string();
    let me = actor(2);
    cli(&url, &["claim", &a, "--assignee", &me, "--ttl", "10m"]).ok();
    let proxy = Proxy::start(server_port(), COMMIT_STATEMENT, Duration::from_secs(2));
    let slow = proxy.store_url(&url);
    cli(
        &slow,
        &[
            "complete", &a, "--status", "done", "--gen", "2", "--actor", &me,
        ],
    )
    .ok();
    assert!(proxy.hits() >= 1);
    assert_eq!(cli(&url, &["--json", "show", &a]).json()["status"], "done");
}

#[test]
fn a_server_clock_behind_the_last_write_does_not_stop_writes() {
    let url = pg::fresh_url();
    let a = cli(&url, &["upsert", "--summary", "before the step"])
        .ok()
        .trim()
        .to_string();
    let me = actor(3);
    cli(&url, &["claim", &a, "--assignee", &me, "--ttl", "10m"]).ok();
    // The last write's time two minutes ahead of the server's clock: what a restart on a
    // host whose clock is two minutes behind leaves.
    let schema = schema_of(&url);
    psql(&format!(
        "UPDATE {schema}.ws_writes y SET last_now = last_now + 120000 \
         WHERE (y.name, y.wseq) IN (SELECT name, wseq FROM {schema}.ws_now)"
    ));
    let stepped: i64 = psql(&format!("SELECT max(last_now) FROM {schema}.ws_now"))
        .parse()
        .unwrap();
    cli(&url, &["upsert", "--summary", "after the step"]).ok();
    cli(&url, &["renew", &a, "--actor", &me, "--gen", "2"]).ok();
    cli(&url, &["config", "max_held", "3"]).ok();
    cli(
        &url,
        &[
            "complete", &a, "--status", "done", "--gen", "2", "--actor", &me,
        ],
    )
    .ok();
    // Times never go back: every write after the step is stamped at or after it.
    let log = cli(&url, &["--json", "log"]).json();
    let times: Vec<i64> = log
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["at"].as_i64().unwrap())
        .collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "{times:?}");
    assert!(*times.last().unwrap() >= stepped, "{times:?} vs {stepped}");
    assert!(cli(&url, &["check"]).ok().starts_with("ok:"));
}
