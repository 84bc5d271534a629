//! What epics, deadlines and budgets cost a claim, side by side in one run, on the
//! directory store (durable: one fsync a write): a claim, a renewal and a completion of
//!
//! - a node of a plain store of 100k nodes, against
//! - a child of an epic with 10,000 children, with a deadline and a budget, the renewal
//!   reporting spend, in a store of 100k nodes where those 10,000 have deadlines still to
//!   come (goal: at most 1.2x: the epic's counts and the deadlines' index cost what the
//!   write touches, never the number of children or deadlines).
//!
//! Samples of the two sides alternate, so that a noisy neighbour slows both.
//!
//!     cargo bench --bench decisions -- [--quick]
//!
//! Prints a Markdown table on stdout; it never fails on a time.

use claimdag::model::Usage;
use claimdag::rules::Plan;
use claimdag::{Actor, Id, Status, Store};
use std::time::Instant;

const NODES: usize = 100_000;
const CHILDREN: usize = 10_000;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// A store of [`NODES`] nodes; with `epic`, the first is an epic and the next [`CHILDREN`]
/// its children, each with a deadline a day away and a budget. Returns the nodes to work
/// on (the children, or as many plain nodes).
fn store(dir: &std::path::Path, epic: bool) -> (Store, Vec<Id>) {
    let s = Store::open(Some(dir)).expect("open the store");
    s.set_setting("max_held", "0").expect("config");
    let mut plan = String::from("{\"nodes\": [");
    plan.push_str(if epic {
        "{\"key\": \"e\", \"summary\": \"the epic\", \"kind\": \"epic\"}"
    } else {
        "{\"key\": \"e\", \"summary\": \"a plain node\"}"
    });
    for i in 1..NODES {
        let parent = if epic && i <= CHILDREN {
            ", \"parent\": \"e\""
        } else {
            ""
        };
        plan.push_str(&format!(
            ",{{\"key\": \"n{i}\", \"summary\": \"node {i}\"{parent}}}"
        ));
    }
    plan.push_str("]}");
    let ids = s
        .import("", Plan::parse(plan.as_bytes()).expect("the plan"))
        .expect("import");
    let work: Vec<Id> = ids[1..=CHILDREN].iter().map(|(id, _)| *id).collect();
    if epic {
        let when = s.now().expect("now") + 86_400_000;
        for i in 1..=CHILDREN {
            s.upsert(claimdag::Upsert {
                summary: format!("node {i}"),
                parent: Some(ids[0].0),
                deadline: Some(when),
                budget: Some(claimdag::model::Budget::parse("budget", "tokens=1000000").unwrap()),
                ..claimdag::Upsert::default()
            })
            .expect("a deadline and a budget");
        }
    }
    (s, work)
}

/// Median microseconds of a claim, a renewal (reporting spend on the epic's side) and a
/// completion, alternating between the two stores.
fn cycles(a: &(Store, Vec<Id>), b: &(Store, Vec<Id>), rounds: usize) -> (f64, f64) {
    let me = Actor::from_name("worker").expect("actor");
    let (mut ta, mut tb) = (Vec::new(), Vec::new());
    for i in 0..rounds * 2 {
        let ((s, work), out, spend) = if i % 2 == 0 {
            (a, &mut ta, false)
        } else {
            (b, &mut tb, true)
        };
        let id = work[i / 2];
        let t = Instant::now();
        let g = s.claim(id, me, None, None).expect("claim");
        let usage = spend.then(|| Usage::parse("usage", "tokens=500").expect("usage"));
        s.renew_spending(id, me, Some(g), None, None, usage)
            .expect("renew");
        s.complete(id, Status::Done, g, Some(me), None)
            .expect("complete");
        out.push(t.elapsed().as_secs_f64() * 1e6);
    }
    (median(ta), median(tb))
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let rounds = if quick { 100 } else { 400 };
    let tmp = tempfile::tempdir().expect("a temporary directory");
    let plain = store(&tmp.path().join("plain"), false);
    let decided = store(&tmp.path().join("decided"), true);
    let (a, b) = cycles(&plain, &decided, rounds);
    println!("| measure | plain node | child of an epic, deadline, budget | ratio | goal |");
    println!("| --- | ---: | ---: | ---: | ---: |");
    println!(
        "| claim, renew, complete at {NODES} nodes, {CHILDREN} children and deadlines (us) | {a:.0} | {b:.0} | {:.2}x | at most 1.2x |",
        b / a
    );
}
