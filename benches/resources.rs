//! What resources cost a claim, side by side in one run, on the directory store (durable:
//! one fsync a write):
//!
//! - `claim_next` at 100k nodes with 1,000 live claims holding 5 path globs each, the node
//!   granted holding 5 globs of its own, against the same store shape with no resources at
//!   all (goal: at most 2x);
//! - a claim and a release of a node taking a pool slot, against a claim and a release of a
//!   node with no resources (goal: at most 1.1x).
//!
//! Samples of the two sides alternate, so that a noisy neighbour slows both.
//!
//!     cargo bench --bench resources -- [--quick]
//!
//! Prints a Markdown table on stdout; it never fails on a time.

use claimdag::rules::Plan;
use claimdag::{Actor, Status, Store};
use std::time::Instant;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// A store of `nodes` nodes (the first `held` claimed by one actor), each with five globs
/// of directories of its own when `globs`.
fn store(dir: &std::path::Path, nodes: usize, held: usize, globs: bool) -> Store {
    let s = Store::open(Some(dir)).expect("open the store");
    s.set_setting("max_held", "0").expect("config");
    let mut plan = String::from("{\"nodes\": [");
    for i in 0..nodes {
        if i > 0 {
            plan.push(',');
        }
        let resources = if globs {
            let g: Vec<String> = (0..5)
                .map(|k| format!("\"path:mod{i}/part{k}/**/*.rs\""))
                .collect();
            format!(", \"resources\": [{}]", g.join(","))
        } else {
            String::new()
        };
        // The held nodes first in pick order: a higher priority.
        let priority = if i < held { 1 } else { 0 };
        plan.push_str(&format!(
            "{{\"key\": \"n{i}\", \"summary\": \"node {i}\", \"priority\": {priority}{resources}}}"
        ));
    }
    plan.push_str("]}");
    let plan = Plan::parse(plan.as_bytes()).expect("the plan");
    s.import("", plan).expect("import");
    let holder = Actor::from_name("holder").expect("actor");
    for _ in 0..held {
        s.claim_next("", holder, None, Some(3_600_000))
            .expect("claim")
            .expect("a node to hold");
    }
    s
}

/// Median microseconds of `claim_next` on each store, alternating; each grant is completed
/// (untimed) so the next one finds the same shape.
fn claim_nexts(a: &Store, b: &Store, rounds: usize) -> (f64, f64) {
    let me = Actor::from_name("worker").expect("actor");
    let (mut ta, mut tb) = (Vec::new(), Vec::new());
    for i in 0..rounds * 2 {
        let (s, out) = if i % 2 == 0 {
            (a, &mut ta)
        } else {
            (b, &mut tb)
        };
        let t = Instant::now();
        let (id, g) = s
            .claim_next("", me, None, None)
            .expect("claim")
            .expect("a node");
        out.push(t.elapsed().as_secs_f64() * 1e6);
        s.complete(id, Status::Done, g, Some(me), None)
            .expect("complete");
    }
    (median(ta), median(tb))
}

/// Median microseconds of a claim and a release: of a node with no resources and of one
/// taking a slot of pool `build` (4 slots, 2 held by other claims), alternating.
fn pool_cycles(dir: &std::path::Path, rounds: usize) -> (f64, f64) {
    let s = Store::open(Some(dir)).expect("open the store");
    s.set_setting("max_held", "0").expect("config");
    s.set_setting("pool.build", "4").expect("pool");
    let plan = r#"{"nodes": [
        {"key": "plain", "summary": "plain"},
        {"key": "pooled", "summary": "pooled", "resources": ["pool:build"]},
        {"key": "h1", "summary": "holds one", "resources": ["pool:build"]},
        {"key": "h2", "summary": "holds another", "resources": ["pool:build"]}]}"#;
    let ids = s
        .import("", Plan::parse(plan.as_bytes()).expect("plan"))
        .expect("import");
    let other = Actor::from_name("other").expect("actor");
    for (id, _) in &ids[2..] {
        s.claim(*id, other, None, Some(3_600_000))
            .expect("hold a slot");
    }
    let me = Actor::from_name("worker").expect("actor");
    let (mut plain, mut pooled) = (Vec::new(), Vec::new());
    for i in 0..rounds * 2 {
        let (id, out) = if i % 2 == 0 {
            (ids[0].0, &mut plain)
        } else {
            (ids[1].0, &mut pooled)
        };
        let t = Instant::now();
        let g = s.claim(id, me, None, None).expect("claim");
        s.release(id, me, g).expect("release");
        out.push(t.elapsed().as_secs_f64() * 1e6);
    }
    (median(plain), median(pooled))
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let (nodes, rounds) = if quick {
        (100_000, 100)
    } else {
        (100_000, 400)
    };
    let tmp = tempfile::tempdir().expect("a temporary directory");
    let plain = store(&tmp.path().join("plain"), nodes, 1000, false);
    let globbed = store(&tmp.path().join("globbed"), nodes, 1000, true);
    let (a, b) = claim_nexts(&plain, &globbed, rounds);
    let (p, q) = pool_cycles(&tmp.path().join("pool"), rounds);
    println!("| measure | without resources | with resources | ratio | goal |");
    println!("| --- | ---: | ---: | ---: | ---: |");
    println!(
        "| claim_next, {nodes} nodes, 1,000 live claims x 5 path globs (us) | {a:.0} | {b:.0} | {:.2}x | at most 2x |",
        b / a
    );
    println!(
        "| a claim and a release, a pool slot against none (us) | {p:.0} | {q:.0} | {:.2}x | at most 1.1x |",
        q / p
    );
}
