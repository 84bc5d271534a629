//! Every verb and `list` option of SPEC section 5 is there: `--help` exits 0 and shows an
//! example. The verbs' own behaviour is tested elsewhere; this pins the list.

use crate::common;

const SPEC_VERBS: [&str; 21] = [
    "upsert",
    "link",
    "unlink",
    "list",
    "show",
    "get",
    "claim",
    "renew",
    "release",
    "reclaim",
    "complete",
    "reopen",
    "next",
    "ready",
    "claim-next",
    "archive",
    "unarchive",
    "log",
    "import",
    "graph",
    "config",
];

#[test]
fn every_verb_of_spec_section_5_has_help_with_an_example() {
    let mut bad = Vec::new();
    for v in SPEC_VERBS.iter().chain(["check"].iter()) {
        let out = common::command().args([v, "--help"]).output().expect("run");
        let text = String::from_utf8_lossy(&out.stdout);
        if out.status.code() != Some(0) {
            let err = String::from_utf8_lossy(&out.stderr);
            bad.push(format!(
                "{v}: exit {:?}: {}",
                out.status.code(),
                err.lines().next().unwrap_or_default()
            ));
        } else if !text.contains("Example") {
            bad.push(format!("{v}: no example"));
        }
    }
    assert!(bad.is_empty(), "{bad:#?}");
}

#[test]
fn list_takes_every_option_of_spec_section_5() {
    let s = common::Store::new();
    s.upsert("a node", &[]);
    let mut bad = Vec::new();
    for opt in [
        vec!["--status", "ready"],
        vec!["--holder", "00000000000000000000000000000007"],
        vec!["--terminal"],
        vec!["--archived"],
        vec!["--all"],
    ] {
        let mut args = vec!["list"];
        args.extend_from_slice(&opt);
        let r = s.run(&args);
        if r.code != Some(0) {
            bad.push(format!(
                "list {}: exit {:?}: {}",
                opt.join(" "),
                r.code,
                r.stderr.lines().next().unwrap_or_default()
            ));
        }
    }
    assert!(bad.is_empty(), "{bad:#?}");
}
