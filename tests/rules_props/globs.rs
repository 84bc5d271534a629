//! Path globs' overlap is decided exactly: whenever `overlaps` says yes it names a path both
//! globs claim, and whenever it says no, no path of a brute-force enumeration (every path of
//! up to 5 characters over the globs' letters, a letter of none of them, and `/`) is
//! claimed by both.

use claimdag::rules::Glob;
use proptest::prelude::*;

/// A segment of a glob: letters `a`, `b`, `.`, and `*`, `?`, classes.
fn segment() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("a"),
        Just("b"),
        Just("."),
        Just("*"),
        Just("?"),
        Just("[ab]"),
        Just("[!a]"),
        Just("[a-b]"),
    ];
    prop_oneof![
        4 => proptest::collection::vec(piece, 1..3).prop_map(|p| p.concat()),
        1 => Just("**".to_string()),
    ]
    .prop_filter("no `.` or `..` segment", |s| s != "." && s != "..")
}

fn glob() -> impl Strategy<Value = String> {
    proptest::collection::vec(segment(), 1..4).prop_map(|s| s.join("/"))
}

/// Every valid path of up to `n` characters over `a`, `b`, `c`, `.` and `/`.
fn paths(n: usize) -> Vec<String> {
    let mut all = vec![String::new()];
    let mut out = Vec::new();
    for _ in 0..n {
        let mut next = Vec::new();
        for p in &all {
            for c in ['a', 'b', 'c', '.', '/'] {
                next.push(format!("{p}{c}"));
            }
        }
        out.extend(next.iter().cloned());
        all = next;
    }
    out.retain(|p| {
        !p.starts_with('/')
            && !p.ends_with('/')
            && !p.contains("//")
            && p.split('/').all(|s| s != "." && s != "..")
    });
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn overlap_is_exact(a in glob(), b in glob()) {
        let (ga, gb) = (Glob::parse(&a).unwrap(), Glob::parse(&b).unwrap());
        match ga.common_path(&gb) {
            Some(p) => {
                prop_assert!(ga.covers(&p) && gb.covers(&p), "{a} and {b}: {p:?}");
                prop_assert!(gb.overlaps(&ga), "{b} and {a} overlap one way only");
            }
            None => {
                prop_assert!(!gb.overlaps(&ga), "{b} and {a} overlap one way only");
                for p in paths(5) {
                    prop_assert!(!(ga.covers(&p) && gb.covers(&p)), "{a} and {b} both cover {p:?}");
                }
            }
        }
    }
}
