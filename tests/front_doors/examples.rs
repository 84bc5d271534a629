//! The Rust example worker (`cargo run --example worker`) does what its doc says: two of
//! them on one store finish every seeded task once.

use crate::common::Store;
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// `target/<profile>/examples/worker`, built by `cargo test` beside the binary.
fn example() -> PathBuf {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_claimdag"));
    bin.parent()
        .expect("target dir")
        .join("examples")
        .join("worker")
}

#[test]
fn two_example_workers_finish_every_task_once() {
    let s = Store::new();
    let dir = s.dir().to_string_lossy().into_owned();
    let workers: Vec<_> = ["w1", "w2"]
        .iter()
        .map(|name| {
            Command::new(example())
                .args([&dir, *name, "20"])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("run examples/worker")
        })
        .collect();
    let mut done = Vec::new();
    for w in workers {
        let out = w.wait_with_output().expect("wait");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        for line in String::from_utf8_lossy(&out.stdout).lines() {
            done.push(
                line.split_whitespace()
                    .next()
                    .unwrap_or_default()
                    .to_string(),
            );
        }
    }
    done.sort();
    let before = done.len();
    done.dedup();
    assert_eq!((before, done.len()), (20, 20), "every task finished once");
    assert_eq!(s.ok(&["list"]), "", "nothing left");
}
