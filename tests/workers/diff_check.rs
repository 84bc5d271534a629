//! `diff-check` in real git repositories: covered, uncovered, renamed and deleted files,
//! another actor's claim, an expired claim, and a range of commits.

use crate::common::Store;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

fn git(repo: &Path, args: &[&str]) {
    let out = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(args)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .output()
        .expect("run git");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn write(repo: &Path, path: &str, text: &str) {
    let p = repo.join(path);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// A repository (beside the store) with one commit of four files.
fn repo(s: &Store) -> std::path::PathBuf {
    let r = s.scratch().join("repo");
    std::fs::create_dir_all(&r).unwrap();
    git(&r, &["init", "-q", "-b", "main"]);
    for (p, t) in [
        ("src/parser/lex.rs", "lex"),
        ("src/parser/old.rs", "old"),
        ("src/cli.rs", "cli"),
        ("README.md", "readme"),
    ] {
        write(&r, p, t);
    }
    git(&r, &["add", "."]);
    git(&r, &["commit", "-q", "-m", "init"]);
    r
}

fn check(s: &Store, repo: &Path, args: &[&str]) -> (Option<i32>, Value) {
    let mut full = vec!["--json", "diff-check", "--repo", repo.to_str().unwrap()];
    full.extend_from_slice(args);
    let r = s.run(&full);
    let v = serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}: {r:?}"));
    (r.code, v)
}

fn uncovered(v: &Value) -> Vec<&str> {
    v["uncovered"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap())
        .collect()
}

#[test]
fn changes_inside_the_claimed_resources_pass_and_others_are_listed() {
    let s = Store::new();
    let r = repo(&s);
    let n = s.upsert(
        "rework the parser",
        &["--resource", "src/parser/", "--resource", "README.md"],
    );
    s.claim(&n, "name:agent", &[]);
    // Nothing changed yet: nothing to cover.
    let (code, v) = check(&s, &r, &["--actor", "name:agent"]);
    assert_eq!((code, v["files"].as_array().unwrap().len()), (Some(0), 0));

    write(&r, "src/parser/lex.rs", "lex 2"); // modified, covered
    write(&r, "src/parser/new.rs", "new"); // untracked, covered
    write(&r, "README.md", "readme 2"); // covered by an exact resource
    std::fs::remove_file(r.join("src/parser/old.rs")).unwrap(); // deleted, covered
    let (code, v) = check(&s, &r, &["--actor", "name:agent"]);
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(v["files"].as_array().unwrap().len(), 4, "{v}");
    assert!(v["files"]
        .as_array()
        .unwrap()
        .iter()
        .all(|f| f["covered_by"][0] == n.as_str()));

    write(&r, "src/cli.rs", "cli 2"); // outside: modified
    write(&r, "src/parserx.rs", "not under src/parser/"); // outside: a prefix is not a dir
    let (code, v) = check(&s, &r, &["--actor", "name:agent"]);
    assert_eq!(code, Some(1));
    assert_eq!(uncovered(&v), vec!["src/cli.rs", "src/parserx.rs"]);
    // The text form lists them, for a hook's message.
    let text = s.run(&[
        "diff-check",
        "--repo",
        r.to_str().unwrap(),
        "--actor",
        "name:agent",
    ]);
    assert_eq!(text.code, Some(1));
    assert!(
        text.stdout.contains("modified  src/cli.rs"),
        "{}",
        text.stdout
    );
    assert!(
        text.stdout.contains("untracked src/parserx.rs"),
        "{}",
        text.stdout
    );
}

#[test]
fn a_rename_needs_both_paths_covered_and_a_deletion_its_path() {
    let s = Store::new();
    let r = repo(&s);
    let n = s.upsert("parser only", &["--resource", "src/parser/"]);
    s.claim(&n, "name:agent", &[]);
    git(&r, &["mv", "src/cli.rs", "src/parser/cli.rs"]); // out of the claim into it
    git(&r, &["rm", "-q", "README.md"]);
    let (code, v) = check(&s, &r, &["--actor", "name:agent"]);
    assert_eq!(code, Some(1), "{v}");
    assert_eq!(uncovered(&v), vec!["README.md", "src/cli.rs"]);
    let moved = v["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["change"] == "renamed")
        .expect("git saw the rename");
    assert_eq!(
        (moved["from"].as_str(), moved["path"].as_str()),
        (Some("src/cli.rs"), Some("src/parser/cli.rs"))
    );
    assert_eq!(moved["covered"], false);
}

#[test]
fn claims_of_another_actor_and_expired_claims_cover_nothing() {
    let s = Store::new();
    let r = repo(&s);
    let theirs = s.upsert("someone else's", &["--resource", "src/cli.rs"]);
    s.claim(&theirs, "name:other", &[]);
    let mine = s.upsert("mine, expiring", &["--resource", "src/parser/"]);
    s.claim(&mine, "name:agent", &["--ttl", "300ms"]);
    write(&r, "src/parser/lex.rs", "lex 2");
    let (code, v) = check(&s, &r, &["--actor", "name:agent"]);
    assert_eq!((code, uncovered(&v)), (Some(0), vec![]), "live: {v}");
    write(&r, "src/cli.rs", "cli 2");
    let (code, v) = check(&s, &r, &["--actor", "name:agent"]);
    assert_eq!(
        (code, uncovered(&v)),
        (Some(1), vec!["src/cli.rs"]),
        "not mine: {v}"
    );
    std::thread::sleep(std::time::Duration::from_millis(500));
    let (code, v) = check(&s, &r, &["--actor", "name:agent"]);
    assert_eq!(code, Some(1));
    assert_eq!(
        uncovered(&v),
        vec!["src/cli.rs", "src/parser/lex.rs"],
        "expired: {v}"
    );
    assert_eq!(v["claims"], serde_json::json!([]));
    std::fs::write(r.join("src/parser/lex.rs"), "lex").unwrap();
    // The other actor's claim covers its own changes.
    let (code, _) = check(&s, &r, &["--actor", "name:other"]);
    assert_eq!(code, Some(0));
}

#[test]
fn between_two_refs_the_commits_count_and_the_work_tree_does_not() {
    let s = Store::new();
    let r = repo(&s);
    git(&r, &["checkout", "-q", "-b", "topic"]);
    write(&r, "src/parser/lex.rs", "lex 2");
    git(&r, &["commit", "-q", "-am", "parser"]);
    write(&r, "src/cli.rs", "uncommitted, outside");
    let n = s.upsert("parser", &["--resource", "src/parser/"]);
    s.claim(&n, "name:agent", &[]);
    let (code, v) = check(
        &s,
        &r,
        &["--actor", "name:agent", "--base", "main", "--head", "topic"],
    );
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(v["files"].as_array().unwrap().len(), 1);
    assert_eq!(v["head"], "topic");
    // Against main with the work tree: the uncommitted change counts.
    let (code, v) = check(&s, &r, &["--actor", "name:agent", "--base", "main"]);
    assert_eq!((code, uncovered(&v)), (Some(1), vec!["src/cli.rs"]));
    // Bad input names what was wrong.
    let bad = s.run(&[
        "diff-check",
        "--repo",
        r.to_str().unwrap(),
        "--actor",
        "name:agent",
        "--base",
        "nope",
    ]);
    assert_eq!(bad.code, Some(2));
    assert!(
        bad.stderr.contains("\"nope\" is not a commit"),
        "{}",
        bad.stderr
    );
    let outside = s.run(&[
        "diff-check",
        "--repo",
        s.scratch().to_str().unwrap(),
        "--actor",
        "name:agent",
    ]);
    assert_eq!(outside.code, Some(2));
    assert!(
        outside.stderr.contains("needs a git work tree"),
        "{}",
        outside.stderr
    );
    let no_actor = s.run(&["diff-check", "--repo", r.to_str().unwrap()]);
    assert_eq!(no_actor.code, Some(2));
    assert!(
        no_actor.stderr.contains("actor is required"),
        "{}",
        no_actor.stderr
    );
}

#[test]
fn staged_checks_only_what_the_next_commit_holds_as_a_pre_commit_hook_does() {
    let s = Store::new();
    let r = repo(&s);
    let n = s.upsert("parser", &["--resource", "src/parser/"]);
    s.claim(&n, "name:agent", &[]);
    write(&r, "src/parser/lex.rs", "lex 2");
    write(&r, "scratch.txt", "untracked, not being committed");
    git(&r, &["add", "src/parser/lex.rs"]);
    let (code, v) = check(&s, &r, &["--actor", "name:agent", "--staged"]);
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(v["files"].as_array().unwrap().len(), 1);
    // The same tree without --staged counts the untracked file.
    let (code, v) = check(&s, &r, &["--actor", "name:agent"]);
    assert_eq!((code, uncovered(&v)), (Some(1), vec!["scratch.txt"]));

    // As a real pre-commit hook, git refuses the commit and names the file.
    let hook = r.join(".git/hooks/pre-commit");
    std::fs::write(
        &hook,
        format!(
            "#!/bin/sh\nexec '{}' --dir '{}' diff-check --staged --actor name:agent\n",
            crate::common::bin(),
            s.dir().display()
        ),
    )
    .unwrap();
    let mut perm = std::fs::metadata(&hook).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o755);
    std::fs::set_permissions(&hook, perm).unwrap();
    git(&r, &["commit", "-q", "-m", "inside the claim"]);
    write(&r, "src/cli.rs", "outside");
    git(&r, &["add", "src/cli.rs"]);
    let out = Command::new("git")
        .args([
            "-C",
            r.to_str().unwrap(),
            "commit",
            "-q",
            "-m",
            "outside the claim",
        ])
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .output()
        .unwrap();
    assert!(!out.status.success(), "the hook refused the commit");
    // git shows what the hook printed on its stderr.
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("modified  src/cli.rs"), "{out:?}");
}
