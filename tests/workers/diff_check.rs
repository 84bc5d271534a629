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

/// `repo(s)` with a submodule checked out at `vendor/lib` (its own repository beside it).
fn repo_with_submodule(s: &Store) -> std::path::PathBuf {
    let lib = s.scratch().join("lib-src");
    std::fs::create_dir_all(&lib).unwrap();
    git(&lib, &["init", "-q", "-b", "main"]);
    write(&lib, "README", "lib");
    write(&lib, "src/lib.c", "int x;");
    git(&lib, &["add", "."]);
    git(&lib, &["commit", "-q", "-m", "lib"]);
    let r = repo(s);
    git(
        &r,
        &[
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "add",
            "-q",
            lib.to_str().unwrap(),
            "vendor/lib",
        ],
    );
    git(&r, &["commit", "-q", "-m", "vendor lib"]);
    r
}

/// Claims a node with `resource` for actor `name:WHO`, in workspace WHO (claims of one
/// workspace never overlap).
fn claim_resource(s: &Store, who: &str, resource: &str) {
    let n = s.upsert_ws(who, "works on it", &["--resource", resource]);
    let actor = format!("name:{who}");
    s.ok_ws(who, &["claim", &n, "--assignee", &actor]);
}

/// [`check`] as actor `name:WHO` in workspace WHO.
fn check_as(s: &Store, repo: &Path, who: &str, args: &[&str]) -> (Option<i32>, Value) {
    let actor = format!("name:{who}");
    let mut full = vec!["--workspace", who, "--json", "diff-check"];
    full.extend_from_slice(&["--repo", repo.to_str().unwrap(), "--actor", &actor]);
    full.extend_from_slice(args);
    let r = s.run(&full);
    let v = serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}: {r:?}"));
    (r.code, v)
}

#[test]
fn a_claim_on_a_submodule_directory_covers_the_changes_inside_it() {
    let s = Store::new();
    let r = repo_with_submodule(&s);
    claim_resource(&s, "dir", "vendor/lib/");
    claim_resource(&s, "parent", "vendor/");
    claim_resource(&s, "file", "vendor/lib/README");
    // An edit inside the submodule's work tree.
    write(&r, "vendor/lib/README", "lib 2");
    let (code, v) = check_as(&s, &r, "dir", &[]);
    assert_eq!(code, Some(0), "{v}");
    let files = v["files"].as_array().unwrap();
    assert_eq!(files.len(), 1, "{v}");
    assert_eq!(
        (&files[0]["change"], &files[0]["path"], &files[0]["covered"]),
        (&"modified".into(), &"vendor/lib/".into(), &true.into()),
        "the submodule is its directory: {v}"
    );
    let (code, _) = check_as(&s, &r, "parent", &[]);
    assert_eq!(code, Some(0));
    // A claim on one file inside does not cover the whole submodule.
    let (code, v) = check_as(&s, &r, "file", &[]);
    assert_eq!((code, uncovered(&v)), (Some(1), vec!["vendor/lib/"]), "{v}");
    // A new commit inside the submodule, staged in the outer repository.
    let sub = r.join("vendor/lib");
    git(&sub, &["commit", "-q", "-a", "-m", "lib 2"]);
    git(&r, &["add", "vendor/lib"]);
    let (code, v) = check_as(&s, &r, "dir", &["--staged"]);
    assert_eq!(code, Some(0), "{v}");
    git(&r, &["commit", "-q", "-m", "bump lib"]);
    let (code, v) = check_as(&s, &r, "dir", &["--base", "HEAD~1", "--head", "HEAD"]);
    assert_eq!(code, Some(0), "{v}");
    let (code, v) = check_as(&s, &r, "file", &["--base", "HEAD~1", "--head", "HEAD"]);
    assert_eq!((code, uncovered(&v)), (Some(1), vec!["vendor/lib/"]), "{v}");
}

#[test]
fn a_claim_on_one_file_does_not_cover_an_untracked_nested_repository() {
    let s = Store::new();
    let r = repo(&s);
    let nested = r.join("tools/nested");
    std::fs::create_dir_all(&nested).unwrap();
    git(&nested, &["init", "-q"]);
    write(&nested, "README", "nested");
    write(&nested, "build.sh", "rm -rf /");
    claim_resource(&s, "file", "tools/nested/README");
    claim_resource(&s, "dir", "tools/nested/");
    claim_resource(&s, "parent", "tools/");
    claim_resource(&s, "bare", "tools/nested");
    // git lists the nested repository as one path, `tools/nested/`: only a resource that
    // covers that whole directory covers it.
    let (code, v) = check_as(&s, &r, "file", &[]);
    assert_eq!(
        (code, uncovered(&v)),
        (Some(1), vec!["tools/nested/"]),
        "{v}"
    );
    let (code, v) = check_as(&s, &r, "bare", &[]);
    assert_eq!(
        (code, uncovered(&v)),
        (Some(1), vec!["tools/nested/"]),
        "{v}"
    );
    for who in ["dir", "parent"] {
        let (code, v) = check_as(&s, &r, who, &[]);
        assert_eq!(code, Some(0), "{who}: {v}");
    }
}

#[test]
fn a_path_glob_covers_what_it_claims_and_a_read_claim_covers_nothing() {
    let s = Store::new();
    let r = repo(&s);
    let n = s.upsert(
        "rework the parser",
        &[
            "--resource",
            "path:src/**/*.rs",
            "--resource",
            "read:path:README.md",
        ],
    );
    s.claim(&n, "name:agent", &[]);
    write(&r, "src/parser/lex.rs", "lex 2"); // covered by the glob
    write(&r, "src/cli.rs", "cli 2"); // covered by the glob
    write(&r, "src/notes.txt", "notes"); // not a .rs file
    write(&r, "README.md", "readme 2"); // read only: not covered
    let (code, v) = check(&s, &r, &["--actor", "name:agent"]);
    assert_eq!(code, Some(1), "{v}");
    assert_eq!(uncovered(&v), vec!["README.md", "src/notes.txt"]);
}
