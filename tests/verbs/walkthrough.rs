//! The README walkthrough through the real binary, with exact outputs (modulo ids), and the
//! fence: a worker whose lease ran out and whose claim was handed back is refused.

use crate::common::{actor, assert_files_eq, short, Store};
use std::time::Duration;

#[test]
fn walkthrough_prints_what_the_readme_shows() {
    let s = Store::new();
    let a = s.upsert("parse the manifest header", &[]);
    let b = s.upsert("reject a manifest with no header", &["--parent", &a]);
    assert_ne!(a, b);
    assert_eq!(s.ok(&["link", &a, &b]), "");

    assert_eq!(
        s.ok(&["list"]),
        format!(
            "{}  ready  task  gen=1  parse the manifest header\n\
             {}  todo   task  gen=1  reject a manifest with no header\n",
            short(&a),
            short(&b)
        )
    );

    let me = actor(7);
    let you = actor(8);
    assert_eq!(s.ok(&["claim", &a, "--assignee", &me]), "gen=2\n");

    let before = s.files();
    let r = s.run(&["claim", &a, "--assignee", &you]);
    r.refused(4, "already claimed");
    // The refusal names the holder and the generation.
    assert!(r.stderr.contains(&me), "{}", r.stderr);
    assert!(r.stderr.contains("gen=2"), "{}", r.stderr);
    assert_files_eq(&before, &s.files(), "second claim");

    assert_eq!(s.ok(&["renew", &a, "--actor", &me]), "");
    assert_eq!(s.ok(&["reclaim", "--lease", "60"]), "");
    assert_eq!(
        s.ok(&["complete", &a, "--status", "done", "--gen", "2"]),
        format!("{}  done\n", short(&a))
    );
    assert_eq!(
        s.ok(&["list"]),
        format!(
            "{}  ready  task  gen=1  reject a manifest with no header\n",
            short(&b)
        )
    );
    assert!(s.ok(&["check"]).starts_with("ok"));
}

#[test]
fn a_late_worker_whose_claim_was_reclaimed_is_fenced_off() {
    let s = Store::new();
    let a = s.upsert("parse the manifest header", &[]);
    let you = actor(8);
    assert_eq!(
        s.ok(&["claim", &a, "--assignee", &you, "--ttl", "200ms"]),
        "gen=2\n"
    );
    // The worker stalls past its lease.
    std::thread::sleep(Duration::from_millis(450));
    assert_eq!(s.ok(&["reclaim"]), format!("{}  todo  gen=3\n", short(&a)));

    let shown = s.node(&a);
    let before = s.files();
    let r = s.run(&["complete", &a, "--status", "done", "--gen", "2"]);
    r.refused(5, "stale generation");
    assert_eq!(r.stdout, "");
    assert_eq!(
        s.node(&a),
        shown,
        "the node changed after a refused complete"
    );
    assert_files_eq(&before, &s.files(), "stale complete");

    assert_eq!(shown["status"], "todo");
    assert_eq!(shown["display"], "ready");
    assert_eq!(shown["generation"], 3);
    assert_eq!(shown["holder"], serde_json::Value::Null);
    assert_eq!(shown["attempts"], 1);
    assert_eq!(
        s.ok(&["list"]),
        format!(
            "{}  ready  task  gen=3  parse the manifest header\n",
            short(&a)
        )
    );
    assert!(s.ok(&["check"]).starts_with("ok"));
}

#[test]
fn a_late_worker_is_fenced_off_when_someone_else_holds_the_node_now() {
    let s = Store::new();
    let a = s.upsert("parse the manifest header", &[]);
    let late = actor(8);
    let next = actor(9);
    assert_eq!(
        s.ok(&["claim", &a, "--assignee", &late, "--ttl", "200ms"]),
        "gen=2\n"
    );
    std::thread::sleep(Duration::from_millis(450));
    // No reclaim: the next claim hands the expired claim back first (gen 3), then grants 4.
    assert_eq!(s.ok(&["claim", &a, "--assignee", &next]), "gen=4\n");

    let shown = s.node(&a);
    let before = s.files();
    for args in [
        vec!["complete", &a, "--status", "done", "--gen", "2"],
        vec![
            "complete", &a, "--status", "done", "--gen", "2", "--actor", &late,
        ],
        vec!["renew", &a, "--actor", &late, "--gen", "2"],
        vec!["release", &a, "--actor", &late, "--gen", "2"],
    ] {
        s.run(&args).refused(5, "stale generation");
    }
    assert_eq!(s.node(&a), shown);
    assert_files_eq(&before, &s.files(), "late worker");
    assert_eq!(shown["holder"], next.as_str());
    assert_eq!(shown["generation"], 4);

    // The new holder finishes with the generation it was granted.
    assert_eq!(
        s.ok(&["complete", &a, "--status", "done", "--gen", "4", "--actor", &next]),
        format!("{}  done\n", short(&a))
    );
}
