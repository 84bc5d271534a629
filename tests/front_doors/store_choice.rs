//! The store a command uses is never a surprise: a relative `CLAIMDAG_DIR` is refused
//! (each process would read it from its own working directory), `--dir` is made absolute
//! once, `where` says which store is in use and what chose it, and the write that makes the
//! default store says so on stderr, once.

use crate::common::bin;
use std::process::Command;

/// A case of `where`: the environment, the arguments, the store and what chose it.
type Case<'a> = (&'a [(&'a str, &'a str)], &'a [&'a str], String, &'a str);

/// `claimdag args...` in `cwd`, with `HOME` in `cwd` and only the variables given.
fn claimdag(cwd: &std::path::Path, env: &[(&str, &str)], args: &[&str]) -> std::process::Output {
    let mut c = Command::new(bin());
    c.current_dir(cwd)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", cwd.join("home"))
        .args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("run claimdag")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn a_relative_claimdag_dir_is_refused_and_makes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    for args in [&["upsert", "--summary", "x"][..], &["where"], &["list"]] {
        let out = claimdag(tmp.path(), &[("CLAIMDAG_DIR", "claims")], args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = text(&out.stderr);
        assert!(
            err.contains("CLAIMDAG_DIR must be an absolute path") && err.contains("\"claims\""),
            "{err}"
        );
    }
    assert!(!tmp.path().join("claims").exists());
}

#[test]
fn where_says_which_store_and_what_chose_it() {
    let tmp = tempfile::tempdir().unwrap();
    let abs = tmp.path().join("abs").to_string_lossy().into_owned();
    let cases: [Case; 3] = [
        (
            &[],
            &["where", "--json"],
            tmp.path()
                .join("home/.local/state/claimdag")
                .to_string_lossy()
                .into_owned(),
            "default",
        ),
        (
            &[("CLAIMDAG_DIR", &abs)],
            &["where", "--json"],
            abs.clone(),
            "CLAIMDAG_DIR",
        ),
        // A relative --dir is made absolute once: a child process or a hook finds the
        // same store from anywhere.
        (
            &[("CLAIMDAG_DIR", &abs)],
            &["--dir", "rel", "where", "--json"],
            tmp.path().join("rel").to_string_lossy().into_owned(),
            "--dir",
        ),
    ];
    for (env, args, store, by) in cases {
        let out = claimdag(tmp.path(), env, args);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(
            (j["store"].as_str(), j["chosen_by"].as_str()),
            (Some(store.as_str()), Some(by)),
            "{j}"
        );
        assert_eq!(j["exists"], false, "{j}");
    }
    let out = claimdag(tmp.path(), &[], &["where"]);
    assert!(text(&out.stdout).contains("chosen by the default: no --dir and no CLAIMDAG_DIR"));
}

#[test]
fn the_write_that_makes_the_default_store_says_where_once() {
    let tmp = tempfile::tempdir().unwrap();
    let first = claimdag(tmp.path(), &[], &["upsert", "--summary", "first"]);
    assert!(first.status.success(), "{}", text(&first.stderr));
    let err = text(&first.stderr);
    let store = tmp.path().join("home/.local/state/claimdag");
    assert!(
        err.contains(&format!("made the default store {}", store.display())),
        "{err}"
    );
    let again = claimdag(tmp.path(), &[], &["upsert", "--summary", "second"]);
    assert!(again.status.success());
    assert_eq!(text(&again.stderr), "", "said once");
    // A read of a default store that does not exist yet makes nothing and says nothing.
    let other = tempfile::tempdir().unwrap();
    let read = claimdag(other.path(), &[], &["list"]);
    assert!(read.status.success() && text(&read.stderr).is_empty());
    assert!(!other.path().join("home/.local/state/claimdag").exists());
}
