//! `hook install` in a real git repository: a commit outside the actor's live write claims
//! is refused, one inside is taken and carries the claim's trailers, a commit or a push
//! under a claim handed back since is refused (`fence-check`), and a hook that was already
//! there still runs first, never overwritten.

use crate::common::{actor, Store};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn git(repo: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(args)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .env_remove("CLAIMDAG_ACTOR")
        .env_remove("CLAIMDAG_NODE")
        .env_remove("CLAIMDAG_GEN")
        .envs(env.iter().copied())
        .output()
        .expect("run git")
}

fn ok(repo: &Path, args: &[&str], env: &[(&str, &str)]) -> String {
    let out = git(repo, args, env);
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Writes `path` and stages it.
fn change(repo: &Path, path: &str, text: &str) {
    let p = repo.join(path);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
    ok(repo, &["add", path], &[]);
}

/// A repository with one commit, a bare remote it pushes to, and a pre-commit hook of its
/// own that leaves a mark each time it runs.
fn repo(s: &Store) -> (PathBuf, PathBuf) {
    let r = s.scratch().join("repo");
    let remote = s.scratch().join("remote.git");
    std::fs::create_dir_all(&r).unwrap();
    ok(&r, &["init", "-q", "-b", "main"], &[]);
    ok(
        s.scratch(),
        &["init", "-q", "--bare", remote.to_str().unwrap()],
        &[],
    );
    change(&r, "README.md", "readme");
    ok(&r, &["commit", "-q", "-m", "init"], &[]);
    ok(
        &r,
        &["remote", "add", "origin", remote.to_str().unwrap()],
        &[],
    );
    ok(&r, &["push", "-q", "origin", "main"], &[]);
    let hook = r.join(".git/hooks/pre-commit");
    std::fs::write(
        &hook,
        "#!/bin/sh\necho ran >> \"$(git rev-parse --git-dir)/own-hook-ran\"\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    (r, remote)
}

#[test]
fn the_hooks_keep_commits_and_pushes_inside_live_write_claims() {
    let s = Store::new();
    let (r, _remote) = repo(&s);
    let own = std::fs::read_to_string(r.join(".git/hooks/pre-commit")).unwrap();
    let said = s.ok(&["hook", "install", "--repo", r.to_str().unwrap()]);
    assert!(
        said.contains("installed pre-commit") && said.contains("pre-commit.before-claimdag"),
        "{said}"
    );
    // The hook that was there is kept, unchanged, and still runs.
    let kept = r.join(".git/hooks/pre-commit.before-claimdag");
    assert_eq!(std::fs::read_to_string(&kept).unwrap(), own);
    // Installing again changes nothing it should keep.
    s.ok(&["hook", "install", "--repo", r.to_str().unwrap()]);
    assert_eq!(std::fs::read_to_string(&kept).unwrap(), own);

    let me = actor(1);
    let node = s.upsert("rework the lexer", &["--resource", "path:src/**/*.rs"]);
    let docs = s.upsert("read the docs", &["--resource", "read:path:docs/**"]);
    s.ok(&["config", "max_held", "0"]);
    let gen = s.claim(&node, &me, &[]).to_string();
    s.claim(&docs, &me, &[]);
    let under = [
        ("CLAIMDAG_ACTOR", me.as_str()),
        ("CLAIMDAG_NODE", node.as_str()),
        ("CLAIMDAG_GEN", gen.as_str()),
    ];

    // A file only a read claim covers: refused, naming it; the actor's own hook ran first.
    change(&r, "docs/guide.md", "guide");
    let out = git(&r, &["commit", "-q", "-m", "docs"], &under);
    assert!(
        !out.status.success(),
        "a commit outside the write claims was taken"
    );
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(said.contains("docs/guide.md"), "{said}");
    assert!(
        r.join(".git/own-hook-ran").exists(),
        "the hook already there did not run"
    );
    ok(&r, &["reset", "-q", "docs/guide.md"], &[]);

    // Covered by the write claim: taken, with the claim's trailers.
    change(&r, "src/lex/mod.rs", "lexer");
    ok(&r, &["commit", "-q", "-m", "lexer"], &under);
    let body = ok(&r, &["log", "-1", "--format=%B"], &[]);
    assert!(body.contains(&format!("Claimdag-Node: {node}")), "{body}");
    assert!(
        body.contains(&format!("Claimdag-Generation: {gen}")),
        "{body}"
    );

    // The claim is handed back: the same worker's next commit and its push are refused.
    s.ok(&["release", &node, "--actor", &me, "--gen", &gen]);
    change(&r, "src/lex/more.rs", "more");
    let out = git(
        &r,
        &["commit", "-q", "-m", "late"],
        &[
            ("CLAIMDAG_NODE", node.as_str()),
            ("CLAIMDAG_GEN", gen.as_str()),
        ],
    );
    assert!(
        !out.status.success(),
        "a commit under a handed-back claim was taken"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("stale generation"));
    ok(&r, &["reset", "-q", "src/lex/more.rs"], &[]);
    let out = git(&r, &["push", "-q", "origin", "main"], &[]);
    assert!(
        !out.status.success(),
        "a push of work under a handed-back claim was taken"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("no longer live"));

    // Claimed again (a new generation): the old commit's claim is still stale.
    s.claim(&node, &me, &[]);
    assert!(!git(&r, &["push", "-q", "origin", "main"], &[])
        .status
        .success());
    s.run(&["fence-check", &node, &gen])
        .refused(5, "stale generation");
}

#[test]
fn a_repository_that_is_not_one_is_refused_naming_it() {
    let s = Store::new();
    let not = s.scratch().join("plain");
    std::fs::create_dir_all(&not).unwrap();
    s.run(&["hook", "install", "--repo", not.to_str().unwrap()])
        .refused(2, "needs a git repository");
}

#[test]
fn a_commit_made_under_claimdag_work_carries_its_claims_trailers() {
    let s = Store::new();
    let (r, _remote) = repo(&s);
    s.ok(&["hook", "install", "--repo", r.to_str().unwrap()]);
    let node = s.upsert("write the worker", &["--resource", "path:src/**"]);
    std::fs::create_dir_all(r.join("src")).unwrap();
    std::fs::write(r.join("src/w.rs"), "w").unwrap();
    let me = actor(3);
    let out = s
        .command(&[
            "work",
            "--actor",
            &me,
            "--max",
            "1",
            "--no-wait",
            "--",
            "sh",
            "-c",
            "git add src/w.rs && git commit -q -m 'from work'",
        ])
        .current_dir(&r)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .env("CLAIMDAG_ACTOR", &me)
        .output()
        .expect("run work");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let body = ok(&r, &["log", "-1", "--format=%B"], &[]);
    assert!(body.starts_with("from work"), "{body}");
    assert!(body.contains(&format!("Claimdag-Node: {node}")), "{body}");
    assert!(body.contains("Claimdag-Generation: 2"), "{body}");
    assert_eq!(s.node(&node)["status"], "done");
}
