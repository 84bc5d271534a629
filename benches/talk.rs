//! What talking costs, side by side in one run: a renewal that carries a 1 KiB checkpoint
//! against a plain renewal, and ten claims finished in one `complete_many` write against
//! ten `complete` calls, on the directory store (durable: one fsync a write) and on
//! PostgreSQL. Samples of the two sides alternate, so that a noisy neighbour slows both.
//!
//!     cargo bench --bench talk -- [--quick] [--url URL]
//!
//! Without `--url` a throwaway PostgreSQL server is started with scripts/pg.sh. Prints a
//! Markdown table on stdout; it never fails on a time.

#[path = "common/pg.rs"]
mod pg;

use claimdag::rules::Finish;
use claimdag::{Actor, Id, Status, Store, Upsert};
use std::path::Path;
use std::time::Instant;

fn open(target: &str) -> Store {
    Store::open(Some(Path::new(target))).expect("open the store")
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// Median microseconds of a plain renewal and of one with a 1 KiB checkpoint, alternating.
fn renewals(store: &Store, rounds: usize) -> (f64, f64) {
    let me = Actor::from_name("bench").expect("actor");
    let id = store
        .upsert(Upsert {
            summary: "renewed".into(),
            ..Upsert::default()
        })
        .expect("upsert");
    let g = store.claim(id, me, None, None).expect("claim");
    let checkpoint: String = (0..1024)
        .map(|i| char::from(b'a' + (i % 26) as u8))
        .collect();
    let (mut plain, mut with) = (Vec::new(), Vec::new());
    for i in 0..rounds * 2 {
        let t = Instant::now();
        if i % 2 == 0 {
            store.renew(id, me, Some(g), None).expect("renew");
            plain.push(t.elapsed().as_secs_f64() * 1e6);
        } else {
            store
                .renew_with(id, me, Some(g), None, Some(&checkpoint))
                .expect("renew with progress");
            with.push(t.elapsed().as_secs_f64() * 1e6);
        }
    }
    (median(plain), median(with))
}

/// Milliseconds to finish ten claims: one at a time, and in one write; median of `rounds`.
fn batches(store: &Store, rounds: usize) -> (f64, f64) {
    store.set_setting("max_held", "0").expect("config");
    let me = Actor::from_name("bench").expect("actor");
    let mut n = 0;
    let mut ten = || -> Vec<(Id, u64)> {
        (0..10)
            .map(|_| {
                n += 1;
                let id = store
                    .upsert(Upsert {
                        summary: format!("batch node {n}"),
                        ..Upsert::default()
                    })
                    .expect("upsert");
                (id, store.claim(id, me, None, None).expect("claim"))
            })
            .collect()
    };
    let (mut single, mut many) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        let held = ten();
        let t = Instant::now();
        for (id, g) in &held {
            store
                .complete(*id, Status::Done, *g, Some(me), None)
                .expect("complete");
        }
        single.push(t.elapsed().as_secs_f64() * 1e3);
        let held = ten();
        let all = held
            .iter()
            .map(|(id, g)| Finish {
                node: *id,
                status: Status::Done,
                gen: *g,
                actor: Some(me),
                note: None,
                output: None,
                held: false,
            })
            .collect();
        let t = Instant::now();
        store.complete_many(all).expect("complete_many");
        many.push(t.elapsed().as_secs_f64() * 1e3);
    }
    (median(single), median(many))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quick = args.iter().any(|a| a == "--quick")
        || std::env::var("QUICK").is_ok_and(|v| !v.is_empty() && v != "0");
    let url = args
        .iter()
        .position(|a| a == "--url")
        .and_then(|i| args.get(i + 1).cloned());
    let rounds = if quick { 200 } else { 1000 };
    let tmp = tempfile::tempdir().expect("temporary directory");
    let server = pg::server(url, "talk");
    println!("| measure | plain | talking | ratio |");
    println!("| --- | ---: | ---: | ---: |");
    let dir = tmp.path().join("talk").to_string_lossy().into_owned();
    for (name, target) in [
        ("directory store", Some(dir)),
        (
            "PostgreSQL",
            server.as_ref().map(|s| pg::schema(&s.url, "talk")),
        ),
    ] {
        let Some(target) = target else {
            println!("| {name}: not measured (no PostgreSQL server could be started) | | | |");
            continue;
        };
        let store = open(&target);
        let (plain, with) = renewals(&store, rounds);
        println!(
            "| {name}: renew, median (plain / with a 1 KiB checkpoint) | {plain:.1} us | {with:.1} us | {:.2}x |",
            with / plain
        );
        let (single, many) = batches(&store, rounds / 20);
        println!(
            "| {name}: finish 10 claims, median (10 completes / one complete_many) | {single:.2} ms | {many:.2} ms | {:.2}x |",
            many / single
        );
    }
}
