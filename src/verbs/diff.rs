//! `diff-check`: the files changed in a git work tree (or between two refs) that no live
//! claim of an actor covers through its resources: a resource covers a path equal to it, or
//! under it when it ends in `/` (`src/parser/` covers `src/parser/x.rs`), the overlap rule
//! of docs/reference.md ("Nodes") read one way. A directory git reports as one entry (a submodule, an
//! untracked nested repository) is a path ending in `/`, covered only by a resource that
//! covers the whole directory. A pre-commit hook or a CI step runs it to refuse an agent's
//! change outside what it claimed.

use super::replies::{ChangedFile, ClaimCover, Coverage};
use super::{About, Ctx, Door, Verb};
use crate::error::{Error, Result};
use crate::rules::resource_covers;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::process::Command;

/// One changed file: what happened to it, its path, and the path it was renamed from.
type Change = (String, String, Option<String>);

/// How changes are listed: modes, what happened and names, NUL-separated, renames found.
const DIFF: [&str; 6] = ["diff", "--raw", "-z", "-M", "--no-ext-diff", "--no-color"];

/// Git's empty tree: what a repository with no commit yet is compared with.
const EMPTY_TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

/// List the files changed in git that no live claim of the actor covers through its
/// resources; exit 1 with the list when some are not covered.
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DiffCheck {
    /// The actor whose claims must cover the changes (default: the caller's actor, e.g.
    /// `$CLAIMDAG_ACTOR`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "cli", arg(long, value_name = "ACTOR"))]
    pub actor: Option<String>,
    /// Compare from where HEAD (or `head`) left this ref: their merge base. Default: HEAD.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "cli", arg(long, value_name = "REF"))]
    pub base: Option<String>,
    /// Compare up to this ref instead of the work tree (staged, unstaged and untracked
    /// files). Needs `base`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "cli", arg(long, value_name = "REF", requires = "base"))]
    pub head: Option<String>,
    /// Only the changes staged for the next commit (for a pre-commit hook): the index
    /// against HEAD (or the merge base with `base`), untracked files left out.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long, conflicts_with = "head"))]
    pub staged: bool,
    /// The git work tree to look at (default: the current directory).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "cli", arg(long, value_name = "DIR"))]
    pub repo: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "cli", arg(skip))]
    pub workspace: Option<String>,
}

impl Verb for DiffCheck {
    const ABOUT: About = About {
        verb: "diff_check",
        command: "diff-check",
        about: "Before you commit: list the files changed in git (the server's work tree, or repo) that none of your live claims covers through its resources.",
        read_only: true,
        destructive: false,
        idempotent: true,
        doors: &[Door::Worker],
        summary: "List files changed in git that no live claim of the actor covers (exit 1 when some)",
        help: "Examples:\n  claimdag diff-check --actor name:codex-1                 # the work tree against HEAD\n  claimdag diff-check --base origin/main --head HEAD --json  # a branch, in CI\n\nA claim covers a path through its resources: a resource equal to the path, or\nending in / and a prefix of it (src/parser/ covers src/parser/x.rs). A submodule\nor an untracked nested repository is its directory (vendor/lib/), covered only\nby a resource covering all of it. A renamed file needs its old and new paths\ncovered; an expired claim covers nothing. Without --head the work tree counts:\nstaged, unstaged and untracked (not ignored) files. The actor defaults to\n$CLAIMDAG_ACTOR. Exit 0 when every change is covered, 1 with the uncovered paths\nlisted.",
        aliases: &[],
    };
    type Reply = Coverage;
    fn takes_env_actor(&self) -> bool {
        self.actor.is_none()
    }
    fn run(&self, cx: &Ctx<'_>) -> Result<Coverage> {
        let ws = cx.workspace(self.workspace.as_deref())?;
        let actor = cx.actor(self.actor.as_deref(), "actor")?;
        if self.head.is_some() && self.base.is_none() {
            return Err(Error::invalid(
                "diff-check: head needs base (--base REF --head REF)",
            ));
        }
        let git = Git::at(&cx.repo(self.repo.as_deref())?)?;
        let (base, changes) = match &self.head {
            Some(h) => git.range(self.base.as_deref().unwrap_or("HEAD"), h)?,
            None => git.work_tree(self.base.as_deref(), self.staged)?,
        };
        let claims: Vec<ClaimCover> = cx
            .store
            .held_by(&ws, actor)?
            .into_iter()
            .map(|v| ClaimCover {
                id: v.node.id,
                resources: v.node.resources,
            })
            .collect();
        Ok(cover(actor, base, self.head.clone(), changes, claims))
    }
}

/// Which claims cover each changed file; a rename is covered when both its paths are.
fn cover(
    actor: crate::Actor,
    base: String,
    head: Option<String>,
    changes: Vec<Change>,
    claims: Vec<ClaimCover>,
) -> Coverage {
    let covering = |path: &str| -> Vec<crate::Id> {
        claims
            .iter()
            .filter(|c| c.resources.iter().any(|r| resource_covers(r, path)))
            .map(|c| c.id)
            .collect()
    };
    let mut uncovered = Vec::new();
    let files = changes
        .into_iter()
        .map(|(change, path, from)| {
            let covered_by = covering(&path);
            let mut missing = Vec::new();
            if covered_by.is_empty() {
                missing.push(path.clone());
            }
            if let Some(f) = from.as_ref().filter(|f| covering(f).is_empty()) {
                missing.push(f.clone());
            }
            let covered = missing.is_empty();
            uncovered.extend(missing);
            ChangedFile {
                change,
                path,
                from,
                covered_by,
                covered,
            }
        })
        .collect();
    uncovered.sort();
    uncovered.dedup();
    Coverage {
        actor,
        base,
        head,
        files,
        uncovered,
        claims,
    }
}

/// A git work tree, run with paths relative to its top.
struct Git {
    top: String,
}

impl Git {
    fn at(dir: &Path) -> Result<Git> {
        let top = run_git(dir, &["rev-parse", "--show-toplevel"]).map_err(|e| match e {
            Error::InvalidInput(m) => Error::invalid(format!(
                "diff-check needs a git work tree: {} is not in one ({m})",
                dir.display()
            )),
            e => e,
        })?;
        Ok(Git {
            top: top.trim_end_matches('\n').to_string(),
        })
    }

    fn git(&self, args: &[&str]) -> Result<String> {
        run_git(Path::new(&self.top), args)
    }

    /// The changes from the merge base of `base` and `head` to `head`.
    fn range(&self, base: &str, head: &str) -> Result<(String, Vec<Change>)> {
        let from = self.commit(base)?;
        let to = self.commit(head)?;
        let mb = self.git(&["merge-base", &from, &to])?.trim().to_string();
        let out = self.git(&[&DIFF[..], &[mb.as_str(), to.as_str()]].concat())?;
        Ok((mb, parse_raw(&out)))
    }

    /// The changes of the work tree (or, `staged`, of the index) since HEAD, or since where
    /// HEAD left `base`; untracked files count unless `staged`.
    fn work_tree(&self, base: Option<&str>, staged: bool) -> Result<(String, Vec<Change>)> {
        let head = self
            .git(&["rev-parse", "--verify", "-q", "HEAD^{commit}"])
            .ok();
        let head = head.map(|h| h.trim().to_string());
        let from = match (base, &head) {
            (Some(b), Some(h)) => {
                let b = self.commit(b)?;
                self.git(&["merge-base", &b, h])?.trim().to_string()
            }
            (Some(b), None) => self.commit(b)?,
            (None, Some(h)) => h.clone(),
            (None, None) => EMPTY_TREE.to_string(),
        };
        let cached: &[&str] = if staged { &["--cached"] } else { &[] };
        let out = self.git(&[&DIFF[..], cached, &[from.as_str()]].concat())?;
        let mut changes = parse_raw(&out);
        if !staged {
            let others = self.git(&["ls-files", "-z", "--others", "--exclude-standard"])?;
            let untracked = others.split('\0').filter(|p| !p.is_empty());
            changes.extend(untracked.map(|p| ("untracked".to_string(), p.to_string(), None)));
        }
        Ok((from, changes))
    }

    /// A ref resolved to its commit; an unknown one is `invalid_input` naming it.
    fn commit(&self, given: &str) -> Result<String> {
        let spec = format!("{given}^{{commit}}");
        match self.git(&["rev-parse", "--verify", "-q", "--end-of-options", &spec]) {
            Ok(c) => Ok(c.trim().to_string()),
            Err(_) => Err(Error::invalid(format!(
                "diff-check: {given:?} is not a commit in {}",
                self.top
            ))),
        }
    }
}

/// `git ARGS` in `dir`: its stdout, or `invalid_input` with what git said.
pub(super) fn run_git(dir: &Path, args: &[&str]) -> Result<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_OPTIONAL_LOCKS", "0")
        .output()
        .map_err(|e| Error::io(Path::new("git"), &e))?;
    if !out.status.success() {
        let said = String::from_utf8_lossy(&out.stderr).trim().to_string();
        return Err(Error::invalid(format!("git {}: {said}", args.join(" "))));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// `git diff --raw -z` output as (what, path, renamed from). A record is `:<old mode>
/// <new mode> <old sha> <new sha> <status>`, then its path (two for a rename or a copy). A
/// submodule (mode 160000 on either side) is its directory: its path with a `/` after it.
fn parse_raw(out: &str) -> Vec<Change> {
    let mut words = out.split('\0').filter(|w| !w.is_empty());
    let mut changes = Vec::new();
    while let Some(head) = words.next() {
        let fields: Vec<&str> = head.trim_start_matches(':').split(' ').collect();
        let status = fields.last().copied().unwrap_or("");
        let submodule = fields.iter().take(2).any(|m| *m == "160000");
        let path = |p: &str| {
            if submodule {
                format!("{}/", p.trim_end_matches('/'))
            } else {
                p.to_string()
            }
        };
        let what = match status.as_bytes().first() {
            Some(b'A') => "added",
            Some(b'D') => "deleted",
            Some(b'R') => "renamed",
            Some(b'C') => "copied",
            Some(b'T') => "type_changed",
            Some(b'U') => "unmerged",
            _ => "modified",
        };
        let Some(first) = words.next() else { break };
        if matches!(what, "renamed" | "copied") {
            let Some(second) = words.next() else { break };
            // A copy leaves its source alone: only the new path changed.
            let from = (what == "renamed").then(|| path(first));
            changes.push((what.to_string(), path(second), from));
        } else {
            changes.push((what.to_string(), path(first), None));
        }
    }
    changes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_records_with_renames_copies_deletes_and_submodules() {
        let out = ":100644 100644 1111111 2222222 M\0src/a.rs\0\
                   :100644 100644 3333333 3333333 R087\0old/x.rs\0new/x.rs\0\
                   :100644 000000 4444444 0000000 D\0gone.rs\0\
                   :100644 100644 5555555 5555555 C100\0src/a.rs\0src/b.rs\0\
                   :160000 160000 6666666 7777777 M\0vendor/lib\0\
                   :000000 160000 0000000 8888888 A\0vendor/new\0";
        let got = parse_raw(out);
        assert_eq!(
            got,
            vec![
                ("modified".into(), "src/a.rs".into(), None),
                ("renamed".into(), "new/x.rs".into(), Some("old/x.rs".into())),
                ("deleted".into(), "gone.rs".into(), None),
                ("copied".into(), "src/b.rs".into(), None),
                ("modified".into(), "vendor/lib/".into(), None),
                ("added".into(), "vendor/new/".into(), None),
            ]
        );
    }
}
