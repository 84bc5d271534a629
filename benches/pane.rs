//! `claimdag pane` at 1k, 10k and (without --quick) 100k nodes: how long the pane takes to
//! open (read the store and lay out the forest), to redraw a 120x40 frame, to follow one
//! write by another process (the version check and the reload), and a whole
//! `claimdag pane --dump` process, against `claimdag list` on the same store (what a user
//! would run instead). Prints a Markdown table on stdout; it never fails on a time.
//!
//!     cargo bench --bench pane -- [--quick]

mod common;

use claimdag::cli::pane::{app::App, board::Filters, draw};
use claimdag::verbs::Ctx;
use claimdag::{Actor, Store};
use common::median;
use std::process::Command;
use std::time::Instant;

/// A plan of `n` nodes: chains of ten under a parent each, every fifth chain claimed.
fn make(n: usize) -> (tempfile::TempDir, Store) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("claims");
    let mut nodes = Vec::with_capacity(n);
    for i in 0..n {
        let mut node =
            serde_json::json!({"key": format!("n{i}"), "summary": format!("step {i} of the plan")});
        if i % 10 != 0 {
            node["deps"] = serde_json::json!([format!("n{}", i - 1)]);
            node["parent"] = serde_json::json!(format!("n{}", i - i % 10));
        }
        nodes.push(node);
    }
    let plan = serde_json::to_vec(&serde_json::json!({ "nodes": nodes })).unwrap();
    let store = Store::open(Some(&dir)).expect("open");
    store
        .import("", claimdag::rules::Plan::parse(&plan).expect("plan"))
        .expect("import");
    store.set_setting("max_held", "0").expect("config");
    let me = Actor::from_name("bench").unwrap();
    for _ in 0..(n / 50).max(1) {
        store
            .claim_next("", me, None, Some(3_600_000))
            .expect("claim");
    }
    (tmp, store)
}

fn ms(f: impl FnOnce()) -> f64 {
    let t = Instant::now();
    f();
    t.elapsed().as_secs_f64() * 1e3
}

fn process_ms(bin: &str, dir: &std::path::Path, args: &[&str]) -> f64 {
    let runs: Vec<f64> = (0..5)
        .map(|_| {
            ms(|| {
                let out = Command::new(bin)
                    .arg("--dir")
                    .arg(dir)
                    .args(args)
                    .output()
                    .expect("run claimdag");
                assert!(
                    out.status.success(),
                    "{}",
                    String::from_utf8_lossy(&out.stderr)
                );
            })
        })
        .collect();
    median(runs)
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let bin = env!("CARGO_BIN_EXE_claimdag");
    let sizes: &[usize] = if quick {
        &[1_000, 10_000]
    } else {
        &[1_000, 10_000, 100_000]
    };
    println!("| nodes | open | redraw 120x40 | follow a write | `pane --dump` process | `list` process | dump / list |");
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    for &n in sizes {
        let (_tmp, store) = make(n);
        let other = Store::open(store.dir()).unwrap();
        let cx = Ctx::new(&store, "").unwrap();
        let mut open = Vec::new();
        let mut app = None;
        for _ in 0..5 {
            open.push(ms(|| {
                app = Some(App::new(cx.clone(), Filters::default()).unwrap())
            }));
        }
        let mut app = app.unwrap();
        let mut term = ratatui::Terminal::new(ratatui::backend::TestBackend::new(120, 40)).unwrap();
        let redraw: Vec<f64> = (0..20)
            .map(|_| {
                ms(|| {
                    let Ok(_) = term.draw(|f| draw::draw(f, &app));
                })
            })
            .collect();
        let follow: Vec<f64> = (0..5)
            .map(|i| {
                other
                    .upsert(claimdag::Upsert {
                        summary: format!("written elsewhere {i}"),
                        ..Default::default()
                    })
                    .unwrap();
                ms(|| assert!(app.poll(), "the write was seen"))
            })
            .collect();
        let dir = store.dir().unwrap().to_path_buf();
        let dump = process_ms(bin, &dir, &["pane", "--dump", "--height", "40"]);
        let list = process_ms(bin, &dir, &["list"]);
        println!(
            "| {n} | {:.1} ms | {:.2} ms | {:.1} ms | {dump:.1} ms | {list:.1} ms | {:.2}x |",
            median(open),
            median(redraw),
            median(follow),
            dump / list
        );
    }
}
