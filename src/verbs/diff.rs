//! `diff-check`: the files changed in a git work tree (or between two refs) that no live
//! claim of an actor covers through its resources, by the overlap rule of SPEC section 1
//! (`src/parser/` covers `src/parser/x.rs`). A pre-commit hook or a CI step runs it to
//! refuse an agent's change outside what it claimed.

use super::replies::{ChangedFile, ClaimCover, Coverage};
use super::{Ctx, Verb};
use crate::error::{Error, Result};
use crate::rules::resources_overlap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::process::Command;

/// One changed file: what happened to it, its path, and the path it was renamed from.
type Change = (String, String, Option<String>);

/// How changes are listed: names and what happened, NUL-separated, renames found.
const DIFF: [&str; 6] = [
    "diff",
    "--name-status",
    "-z",
    "-M",
    "--no-ext-diff",
    "--no-color",
];

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
    const NAME: &'static str = "diff_check";
    type Reply = Coverage;
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
            .filter(|c| c.resources.iter().any(|r| resources_overlap(r, path)))
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
        Ok((mb, parse_name_status(&out)))
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
        let mut changes = parse_name_status(&out);
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
fn run_git(dir: &Path, args: &[&str]) -> Result<String> {
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

/// `git diff --name-status -z` output as (what, path, renamed from).
fn parse_name_status(out: &str) -> Vec<Change> {
    let mut words = out.split('\0').filter(|w| !w.is_empty());
    let mut changes = Vec::new();
    while let Some(status) = words.next() {
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
            let from = (what == "renamed").then(|| first.to_string());
            changes.push((what.to_string(), second.to_string(), from));
        } else {
            changes.push((what.to_string(), first.to_string(), None));
        }
    }
    changes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_status_with_renames_copies_and_deletes() {
        let out = "M\0src/a.rs\0R087\0old/x.rs\0new/x.rs\0D\0gone.rs\0C100\0src/a.rs\0src/b.rs\0";
        let got = parse_name_status(out);
        assert_eq!(
            got,
            vec![
                ("modified".into(), "src/a.rs".into(), None),
                ("renamed".into(), "new/x.rs".into(), Some("old/x.rs".into())),
                ("deleted".into(), "gone.rs".into(), None),
                ("copied".into(), "src/b.rs".into(), None),
            ]
        );
    }
}
