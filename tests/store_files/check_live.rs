//! `check` on a store that workers are writing to: every run sees one consistent store and
//! passes, whatever the writers commit meanwhile.

use crate::common::{actor, parse_gen, Store};
use std::sync::atomic::{AtomicBool, Ordering};

const NODES: usize = 60;

#[test]
fn check_passes_while_workers_write() {
    let s = Store::new();
    for i in 0..NODES {
        s.upsert(&format!("node {i}"), &[]);
    }
    let writing = AtomicBool::new(true);
    let (checks, failures) = std::thread::scope(|scope| {
        let workers: Vec<_> = (1..=2u64)
            .map(|w| {
                let s = &s;
                scope.spawn(move || {
                    let me = actor(0x300 + w);
                    loop {
                        let r = s.run(&["claim-next", "--assignee", &me]);
                        if r.code == Some(1) {
                            return;
                        }
                        let out = r.ok().to_string();
                        let id = out.split_whitespace().next().expect("id").to_string();
                        let g = parse_gen(&out).to_string();
                        s.ok(&["complete", &id, "--status", "done", "--gen", &g]);
                    }
                })
            })
            .collect();
        let checker = scope.spawn(|| {
            let mut checks = 0;
            let mut failures = Vec::new();
            loop {
                let still_writing = writing.load(Ordering::SeqCst);
                let r = s.run(&["check"]);
                checks += 1;
                if r.code != Some(0) {
                    failures.push(format!("exit {:?}: {}{}", r.code, r.stdout, r.stderr));
                }
                if !still_writing {
                    break;
                }
            }
            (checks, failures)
        });
        for w in workers {
            w.join().expect("worker");
        }
        writing.store(false, Ordering::SeqCst);
        checker.join().expect("checker")
    });
    eprintln!("{checks} checks ran while the workers wrote");
    assert!(checks > 0);
    assert!(
        failures.is_empty(),
        "{} of {checks} checks failed on a sound store, first: {}",
        failures.len(),
        failures[0]
    );
    assert!(s.ok(&["check"]).starts_with("ok"));
}
