//! Pools and rate limits (SPEC 13, "Resources"): a `pool:NAME*K` node is granted only while
//! K of the pool's slots are free, and holds them until its hand-back; a `rate:NAME` node
//! only while the window has room, and `claim-next --wait` wakes when it does; bad sizes and
//! windows are `invalid_input` naming them. And eight processes racing on overlapping globs,
//! readers and writers, a pool of 3 and a rate: at no instant of the history did more hold
//! than the rules allow.

use crate::common::{actor, Store};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};

#[test]
fn a_pool_grants_its_slots_and_gets_them_back_at_every_hand_back() {
    let s = Store::new();
    s.ok(&["config", "max_held", "0"]);
    assert_eq!(
        s.ok(&["pool", "set", "gpu", "3"]),
        "pool gpu  0 of 3 slots held\n"
    );
    let big = s.upsert("train the big model", &["--resource", "pool:gpu*2"]);
    let small: Vec<String> = (0..3)
        .map(|i| s.upsert(&format!("train small {i}"), &["--resource", "pool:gpu"]))
        .collect();
    let (a, b) = (actor(1), actor(2));
    let gb = s.claim(&big, &a, &[]);
    s.claim(&small[0], &a, &[]);
    // 3 of 3 slots held: the next is refused, naming the pool, and nothing changes.
    let before = s.files();
    let msg = s.refused_text(
        &["claim", &small[1], "--assignee", &b],
        4,
        "resource",
        "resource_conflict",
    );
    assert!(msg.contains("pool gpu has 3 slot(s), 3 held"), "{msg}");
    assert_eq!(s.files(), before, "a refused claim changed the store");
    // claim-next passes over the pool's nodes: nothing else is ready.
    s.run(&["claim-next", "--assignee", &b]).refused(1, "");
    let listed = s.json(&["pool", "list"]);
    assert_eq!(listed[0]["used"], 3, "{listed}");
    assert_eq!(listed[0]["size"], 3);
    // Released: two slots come back, and two small nodes can have them.
    s.ok(&["release", &big, "--actor", &a, "--gen", &gb.to_string()]);
    s.claim(&small[1], &b, &[]);
    s.claim(&small[2], &b, &[]);
    // Lowering the size takes no slot from a live claim; it only refuses the next grant.
    s.ok(&["pool", "set", "gpu", "1"]);
    assert_eq!(s.json(&["pool", "list"])[0]["used"], 3);
    s.run(&["claim", &big, "--assignee", &a])
        .refused(4, "resource");
    // `check` says so as a note (exit 0): a lowered size is no damage.
    let checked = s.ok(&["check"]);
    assert!(
        checked.contains("note: pool gpu in workspace \"\": live claims hold 3 of its 1 slots"),
        "{checked}"
    );
    // An expired claim holds nothing: its slot is free at the next write.
    s.ok(&["pool", "set", "gpu", "2"]);
    for n in &small {
        let g = s.node(n)["generation"].as_u64().unwrap();
        let holder = s.node(n)["holder"].as_str().unwrap().to_string();
        s.ok(&["release", n, "--actor", &holder, "--gen", &g.to_string()]);
    }
    s.claim(&small[0], &a, &["--ttl", "1s"]);
    std::thread::sleep(std::time::Duration::from_millis(1100));
    assert_eq!(s.claim(&big, &b, &[]), gb + 2);
}

#[test]
fn a_rate_grants_so_many_a_window_and_a_wait_wakes_when_it_has_room() {
    let s = Store::new();
    s.ok(&["config", "max_held", "0"]);
    s.ok(&["rate", "set", "llm", "2", "2s"]);
    assert_eq!(s.ok(&["config", "rate.llm"]), "2/2s\n");
    let ids: Vec<String> = (0..3)
        .map(|i| s.upsert(&format!("summarize {i}"), &["--resource", "rate:llm"]))
        .collect();
    let a = actor(1);
    let got = s.json(&["claim-next", "--assignee", &a, "--count", "3"]);
    assert_eq!(got.as_array().unwrap().len(), 2, "{got}");
    // Completing a node does not give its grant back: the window counts grants.
    for g in got.as_array().unwrap() {
        let (id, gen) = (g["id"].as_str().unwrap(), g["generation"].to_string());
        s.ok(&["complete", id, "--status", "done", "--gen", &gen]);
    }
    let left = ids
        .iter()
        .find(|id| s.node(id)["status"] == "todo")
        .unwrap();
    let msg = s.refused_text(
        &["claim", left, "--assignee", &a],
        4,
        "resource",
        "resource_conflict",
    );
    assert!(msg.contains("rate llm allows 2 per 2s"), "{msg}");
    s.run(&["claim-next", "--assignee", &a]).refused(1, "");
    let start = std::time::Instant::now();
    let woke = s.ok(&["claim-next", "--assignee", &a, "--wait", "20s"]);
    assert!(woke.starts_with(left.as_str()), "{woke}");
    let waited = start.elapsed();
    assert!(
        waited < std::time::Duration::from_secs(15),
        "the wait did not wake when the window had room: {waited:?}"
    );
    let listed = s.json(&["rate", "list"]);
    assert_eq!(listed[0]["per_ms"], 2000, "{listed}");
}

#[test]
fn next_names_the_node_claim_next_would_take_past_a_full_pool() {
    let s = Store::new();
    s.ok(&["pool", "set", "gpu", "1"]);
    let held = s.upsert("train", &["--resource", "pool:gpu", "--priority", "9"]);
    let waits = s.upsert("train more", &["--resource", "pool:gpu", "--priority", "5"]);
    let free = s.upsert("write the docs", &[]);
    assert_eq!(s.ok(&["next"]).trim(), held);
    s.claim(&held, &actor(1), &[]);
    // The pool is full: `next` passes over the waiting node, as claim-next does.
    assert_eq!(s.ok(&["next"]).trim(), free);
    let took = s.ok(&["claim-next", "--assignee", &actor(2)]);
    assert!(took.starts_with(free.as_str()), "{took}");
    s.run(&["next"]).refused(1, "");
    assert_eq!(s.node(&waits)["status"], "todo");
}

#[test]
fn bad_sizes_windows_and_names_are_refused_naming_them() {
    let s = Store::new();
    let before = s.files();
    for (args, names) in [
        (vec!["pool", "set", "gpu", "0"], "pool gpu's size"),
        (
            vec!["pool", "set", "gpu", "18446744073709551616"],
            "pool gpu's size",
        ),
        (vec!["pool", "set", "a b", "2"], "pool name \"a b\""),
        (vec!["rate", "set", "llm", "0", "0s"], "rate llm's grants"),
        (vec!["rate", "set", "llm", "5", "0s"], "rate llm's window"),
        (vec!["rate", "set", "llm", "5"], "needs its window"),
        (vec!["config", "pool.gpu", "--", "-1"], "pool gpu's size"),
    ] {
        s.run(&args).refused(2, names);
        let json: Vec<&str> = ["--json"].into_iter().chain(args.iter().copied()).collect();
        assert_eq!(
            s.run(&json).error_json()["code"],
            "invalid_input",
            "{args:?}"
        );
    }
    for bad in [
        "pool:gpu*0",
        "pool:",
        "read:pool:gpu",
        "rate:",
        "pool:gpu*x",
    ] {
        s.run(&["upsert", "--summary", "x", "--resource", bad])
            .refused(2, "resource");
    }
    assert_eq!(s.files(), before, "a refused call changed the store");
}

/// One claim's span in the history: from its `claim` event to the event that ended it.
struct Holder {
    node: String,
    resources: Vec<String>,
}

#[test]
fn eight_processes_racing_never_hold_more_than_the_rules_allow() {
    let s = Store::new();
    s.ok(&["config", "max_held", "0"]);
    s.ok(&["pool", "set", "build", "3"]);
    s.ok(&["rate", "set", "llm", "4", "1s"]);
    let kinds: [&[&str]; 8] = [
        &["path:src/**"],
        &["read:path:src/**/*.rs"],
        &["path:src/a/*.rs", "pool:build"],
        &["read:path:src/a/x.rs", "rate:llm"],
        &["path:docs/**", "pool:build*2"],
        &["read:path:docs/*.md", "rate:llm"],
        &["pool:build"],
        &["rate:llm", "path:src/b/**"],
    ];
    for i in 0..48 {
        let mut extra = Vec::new();
        for r in kinds[i % kinds.len()] {
            extra.extend(["--resource", r]);
        }
        s.upsert(&format!("task {i}"), &extra);
    }
    let workers: Vec<_> = (0..8)
        .map(|w| {
            let name = format!("name:w{w}");
            s.command(&[
                "work", "--actor", &name, "--ttl", "5s", "--", "sleep", "0.05",
            ])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("start a worker")
        })
        .collect();
    for w in workers {
        let out = w.wait_with_output().expect("a worker ends");
        assert!(
            out.status.success(),
            "a worker failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let all = s.all();
    assert!(
        all.values().all(|n| n["status"] == "done"),
        "work left undone"
    );
    let history = s.json(&["log"]);
    let anomalies = replay(history.as_array().unwrap(), &all);
    assert!(anomalies.is_empty(), "{anomalies:#?}");
}

/// Replays the history: at every grant, the claims then live (and the grant itself) must
/// hold no two conflicting resources, no more than 3 slots of `build`, and no more than 4
/// grants of `llm` in any second.
fn replay(history: &[Value], nodes: &BTreeMap<String, Value>) -> Vec<String> {
    let resources = |id: &str| -> Vec<String> {
        nodes[id]["resources"]
            .as_array()
            .map(|a| a.iter().map(|r| r.as_str().unwrap().to_string()).collect())
            .unwrap_or_default()
    };
    let mut live: HashMap<String, Holder> = HashMap::new();
    let mut llm: Vec<u64> = Vec::new();
    let mut out = Vec::new();
    let mut grants = 0;
    for e in history {
        let (verb, node) = (e["verb"].as_str().unwrap_or(""), e["node"].as_str());
        let Some(node) = node else { continue };
        match verb {
            "claim" => {
                grants += 1;
                let mine = resources(node);
                for h in live.values() {
                    for a in &mine {
                        for b in &h.resources {
                            if claimdag::rules::resources_conflict(a, b) {
                                out.push(format!("{node} ({a}) granted beside {} ({b})", h.node));
                            }
                        }
                    }
                }
                let slots = |rs: &[String]| -> usize {
                    rs.iter()
                        .map(|r| match r.as_str() {
                            "pool:build" => 1,
                            "pool:build*2" => 2,
                            _ => 0,
                        })
                        .sum()
                };
                let held: usize =
                    live.values().map(|h| slots(&h.resources)).sum::<usize>() + slots(&mine);
                if held > 3 {
                    out.push(format!("{node} granted with {held} of 3 build slots held"));
                }
                if mine.iter().any(|r| r == "rate:llm") {
                    let at = e["at"].as_u64().unwrap();
                    llm.push(at);
                    let inside = llm.iter().filter(|&&t| t + 1000 > at).count();
                    if inside > 4 {
                        out.push(format!("{node}: {inside} llm grants within 1s"));
                    }
                }
                live.insert(
                    node.to_string(),
                    Holder {
                        node: node.to_string(),
                        resources: mine,
                    },
                );
            }
            "release" | "complete" | "expire" | "reclaim" | "cancel" => {
                live.remove(node);
            }
            _ => {}
        }
    }
    assert!(
        grants >= 48,
        "the run granted {grants} claims, fewer than its nodes"
    );
    out
}

#[test]
fn slots_and_grants_survive_every_write_compacting_into_a_snapshot() {
    // Every write compacts: each command reads the snapshot's nodes as they are asked for,
    // and finds the claims holding a pool and the grants of a rate through the snapshot.
    let s = Store::new().with_env(&[("CLAIMDAG_COMPACT_MIN_BYTES", "1")]);
    s.ok(&["config", "max_held", "0"]);
    s.ok(&["pool", "set", "gpu", "1"]);
    s.ok(&["rate", "set", "llm", "1", "1h"]);
    let asked = s.upsert("ask once", &["--resource", "rate:llm"]);
    let again = s.upsert("ask again", &["--resource", "rate:llm"]);
    let held = s.upsert("train", &["--resource", "pool:gpu"]);
    let waits = s.upsert("train more", &["--resource", "pool:gpu"]);
    let a = actor(1);
    let g = s.claim(&asked, &a, &[]);
    s.ok(&[
        "complete",
        &asked,
        "--status",
        "done",
        "--gen",
        &g.to_string(),
    ]);
    s.claim(&held, &a, &[]);
    for _ in 0..3 {
        s.upsert("unrelated", &[]);
    }
    let snapshot = std::fs::read_to_string(s.dir().join("snapshot.json")).expect("a snapshot");
    assert!(
        snapshot.contains("\"rated\""),
        "the snapshot lists no rated node"
    );
    s.run(&["claim", &again, "--assignee", &a])
        .refused(4, "rate llm allows 1 per 1h");
    s.run(&["claim", &waits, "--assignee", &a])
        .refused(4, "pool gpu has 1 slot(s), 1 held");
    s.ok(&["check"]);
}
