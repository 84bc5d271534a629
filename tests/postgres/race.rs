//! Eight `claimdag` processes, each its own connection as separate hosts would have, loop
//! `claim-next` + `complete` over 300 nodes of one PostgreSQL store: every node is granted
//! once and ends done by the worker it was granted to, and `check` is clean.

use super::{cli, pg};
use crate::common::{actor, parse_gen};
use std::collections::{BTreeMap, BTreeSet};

const NODES: usize = 300;
const WORKERS: u64 = 8;

fn worker(url: &str, me: &str) -> Vec<(String, u64)> {
    let mut grants = Vec::new();
    loop {
        let r = cli(url, &["claim-next", "--assignee", me]);
        match r.code {
            Some(1) if r.stdout.is_empty() => return grants,
            Some(0) => {}
            _ => panic!("claim-next for {me}: {:?} {}", r.code, r.stderr),
        }
        let id = r.stdout.split_whitespace().next().expect("id").to_string();
        let g = parse_gen(&r.stdout);
        grants.push((id.clone(), g));
        cli(
            url,
            &[
                "complete",
                &id,
                "--status",
                "done",
                "--gen",
                &g.to_string(),
                "--actor",
                me,
            ],
        )
        .ok();
    }
}

#[test]
fn eight_processes_never_get_the_same_node() {
    let url = pg::fresh_url();
    let plan: Vec<serde_json::Value> = (0..NODES)
        .map(|i| serde_json::json!({"key": format!("n{i}"), "summary": format!("node {i}")}))
        .collect();
    let file = std::env::temp_dir().join(format!("claimdag-pg-race-{}.json", std::process::id()));
    std::fs::write(&file, serde_json::json!({ "nodes": plan }).to_string()).unwrap();
    cli(&url, &["import", &file.to_string_lossy()]).ok();
    cli(&url, &["config", "max_held", "0"]).ok();
    let _ = std::fs::remove_file(&file);
    let all: Vec<Vec<(String, u64)>> = std::thread::scope(|s| {
        let handles: Vec<_> = (1..=WORKERS)
            .map(|w| {
                let url = url.clone();
                s.spawn(move || worker(&url, &actor(w)))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut owner: BTreeMap<String, u64> = BTreeMap::new();
    for (w, grants) in all.iter().enumerate() {
        for (id, g) in grants {
            assert_eq!(*g, 2, "a first grant is generation 2");
            assert!(
                owner.insert(id.clone(), w as u64 + 1).is_none(),
                "{id} granted twice"
            );
        }
    }
    assert_eq!(owner.len(), NODES, "every node granted");
    let busy: BTreeSet<u64> = owner.values().copied().collect();
    assert!(busy.len() > 1, "more than one worker got work");
    let done = cli(&url, &["--json", "list", "--terminal"]).json();
    for n in done.as_array().unwrap() {
        let id = n["id"].as_str().unwrap();
        assert_eq!(n["status"], "done");
        assert_eq!(n["completed_by"], actor(owner[id]));
    }
    assert!(cli(&url, &["check"]).ok().starts_with("ok"));
}

#[test]
fn a_fleet_creating_a_new_store_at_once_all_get_through() {
    // Six first writes racing on a schema nobody created yet, four times over: every one is
    // written, and the store is made once.
    for round in 0..4 {
        let url = pg::fresh_url();
        let writers: Vec<_> = (0..6)
            .map(|w| {
                let url = url.clone();
                std::thread::spawn(move || {
                    cli(&url, &["upsert", "--summary", &format!("first write {w}")])
                })
            })
            .collect();
        for (w, h) in writers.into_iter().enumerate() {
            let r = h.join().unwrap();
            assert_eq!(r.code, Some(0), "round {round}, writer {w}: {}", r.stderr);
        }
        assert!(cli(&url, &["check"]).ok().starts_with("ok: 6 live nodes"));
    }
}

#[test]
fn copies_racing_into_one_new_store_leave_exactly_one() {
    let source = pg::fresh_url();
    for i in 0..5 {
        cli(&source, &["upsert", "--summary", &format!("node {i}")]).ok();
    }
    let target = pg::fresh_url();
    let copies: Vec<_> = (0..4)
        .map(|_| {
            let (s, t) = (source.clone(), target.clone());
            std::thread::spawn(move || cli(&s, &["copy", "--from", &s, "--to", &t]))
        })
        .collect();
    let runs: Vec<_> = copies.into_iter().map(|h| h.join().unwrap()).collect();
    let won = runs.iter().filter(|r| r.code == Some(0)).count();
    assert_eq!(
        won,
        1,
        "{:?}",
        runs.iter().map(|r| &r.stderr).collect::<Vec<_>>()
    );
    for r in runs.iter().filter(|r| r.code != Some(0)) {
        r.refused(2, "not an empty store");
    }
    assert!(cli(&target, &["check"])
        .ok()
        .starts_with("ok: 5 live nodes"));
}

/// A first write that finds no store and, before it looks whether one exists, sees another
/// process make it, loads that store and writes into it (the look is held back on a slow
/// link while the other process creates the store).
#[test]
fn a_store_made_while_a_first_write_looked_for_it_is_loaded_not_refused() {
    use super::proxy::Proxy;
    use std::time::Duration;
    let url = pg::fresh_url();
    // Every look into the catalog (whether the store exists) waits 3 s on its way.
    let proxy = Proxy::start(
        super::server_port(),
        &["pg_catalog.pg_class"],
        Duration::from_secs(3),
    );
    let slow = format!(
        "postgres://claimdag:claimdag-test@127.0.0.1:{}/claimdag?sslmode=disable&schema={}",
        proxy.port,
        super::schema_of(&url)
    );
    let late = std::thread::spawn(move || cli(&slow, &["upsert", "--summary", "late first write"]));
    // The second look is the one after the store's row was not found: make the store now.
    assert!(
        proxy.wait_for_hits(2, Duration::from_secs(30)),
        "the write looked twice"
    );
    cli(&url, &["upsert", "--summary", "the store's maker"]).ok();
    let r = late.join().unwrap();
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(cli(&url, &["check"]).ok().starts_with("ok: 2 live nodes"));
}
