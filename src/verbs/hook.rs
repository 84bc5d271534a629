//! `hook install`: the fence reaching git (SPEC 13, "Resources"). Three hooks go into a
//! repository, each running the hook that was there before it first (kept beside it as
//! `<hook>.before-claimdag`, never overwritten):
//!
//! - `pre-commit` refuses a commit whose staged changes no live write claim of
//!   `$CLAIMDAG_ACTOR` covers (`diff-check --staged`);
//! - `commit-msg`, under a claim (`$CLAIMDAG_NODE` and `$CLAIMDAG_GEN`, which `claimdag
//!   work` gives its command), refuses the commit when that claim is no longer live
//!   (`fence-check`) and adds the trailers `Claimdag-Node:` and `Claimdag-Generation:`;
//! - `pre-push` refuses a push carrying a commit whose trailers name a claim that is no
//!   longer live, or (with `$CLAIMDAG_ACTOR`) changes no live write claim of the actor covers.

use super::diff::run_git;
use super::{About, Ctx, Reply, Verb};
use crate::error::{Error, Result};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The line that marks a hook as ours: installing again replaces it, never chains it.
const MARK: &str = "# claimdag hook:";
/// Where the hook that was there before ours is kept, after the hook's name.
const BEFORE: &str = ".before-claimdag";
/// The hooks installed.
const HOOKS: [&str; 3] = ["pre-commit", "commit-msg", "pre-push"];

/// Install the pre-commit, commit-msg and pre-push hooks into a git repository.
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HookInstall {
    /// The repository (default: the current directory).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "cli", arg(long, value_name = "DIR"))]
    pub repo: Option<String>,
}

impl Verb for HookInstall {
    const ABOUT: About = About {
        verb: "hook_install",
        command: "hook install",
        about: "Install git hooks that refuse commits and pushes outside the actor's live write claims, or under a claim that was handed back.",
        read_only: false,
        destructive: false,
        idempotent: true,
        doors: &[],
        summary: "Install pre-commit, commit-msg and pre-push hooks that keep the fence in git",
        help: "Example:\n  claimdag hook install --repo ~/src/app\n  export CLAIMDAG_ACTOR=name:codex-1\n  git commit -m \"fix the lexer\"    # refused unless a live write claim covers it\n  claimdag work --actor name:codex-1 -- ./agent.sh   # its commits carry trailers\n\npre-commit refuses a commit whose staged changes no live write claim of\n$CLAIMDAG_ACTOR covers (diff-check --staged); without $CLAIMDAG_ACTOR it says so\nand lets the commit through. commit-msg, under a claim ($CLAIMDAG_NODE and\n$CLAIMDAG_GEN, as claimdag work sets them), refuses the commit once that claim is\nno longer live (fence-check) and adds the trailers Claimdag-Node: and\nClaimdag-Generation:. pre-push refuses a push carrying a commit whose trailers\nname a claim that is no longer live, or changes no live write claim of\n$CLAIMDAG_ACTOR covers. A hook already there runs first: it is kept as\n<hook>.before-claimdag, never overwritten. Installing again updates the hooks.\nThe hooks use this store ($CLAIMDAG_DIR wins) and this claimdag binary.",
        aliases: &[],
    };
    type Reply = HooksInstalled;
    fn run(&self, cx: &Ctx<'_>) -> Result<HooksInstalled> {
        let dir = PathBuf::from(self.repo.as_deref().unwrap_or("."));
        let hooks = hooks_dir(&dir)?;
        std::fs::create_dir_all(&hooks).map_err(|e| Error::io(&hooks, &e))?;
        let bin = std::env::current_exe().map_err(|e| Error::io(Path::new("claimdag"), &e))?;
        let store = cx.store.dir().map(|d| d.to_path_buf());
        let mut out = Vec::new();
        for name in HOOKS {
            out.push(install(
                &hooks,
                name,
                &script(name, &bin, store.as_deref()),
            )?);
        }
        Ok(HooksInstalled(out))
    }
}

/// The repository's hooks directory (`core.hooksPath` when set).
fn hooks_dir(dir: &Path) -> Result<PathBuf> {
    let said = run_git(dir, &["rev-parse", "--git-path", "hooks"]).map_err(|e| match e {
        Error::InvalidInput(m) => Error::invalid(format!(
            "hook install needs a git repository: {} is not in one ({m})",
            dir.display()
        )),
        e => e,
    })?;
    let path = PathBuf::from(said.trim_end_matches('\n'));
    Ok(if path.is_absolute() {
        path
    } else {
        dir.join(path)
    })
}

/// Writes hook `name`, keeping a hook that was there and is not ours beside it.
fn install(hooks: &Path, name: &str, text: &str) -> Result<HookInstalled> {
    let path = hooks.join(name);
    let kept = hooks.join(format!("{name}{BEFORE}"));
    match std::fs::read(&path) {
        Ok(old) if !String::from_utf8_lossy(&old).contains(MARK) => {
            if kept.exists() {
                return Err(Error::invalid(format!(
                    "hook install: {} is not claimdag's, and {} is already there: move one of \
                     them away (nothing was changed)",
                    path.display(),
                    kept.display()
                )));
            }
            std::fs::rename(&path, &kept).map_err(|e| Error::io(&path, &e))?;
        }
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(Error::io(&path, &e)),
    }
    // Written beside, then renamed over: a commit starting now sees the old hook or the new.
    let tmp = hooks.join(format!(".{name}.claimdag-tmp"));
    std::fs::write(&tmp, text).map_err(|e| Error::io(&tmp, &e))?;
    set_executable(&tmp)?;
    std::fs::rename(&tmp, &path).map_err(|e| Error::io(&path, &e))?;
    Ok(HookInstalled {
        hook: name.to_string(),
        path: path.display().to_string(),
        chained: kept.exists().then(|| kept.display().to_string()),
    })
}

#[cfg(unix)]
fn set_executable(path: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
        .map_err(|e| Error::io(path, &e))
}

#[cfg(not(unix))]
fn set_executable(_: &Path) -> Result<()> {
    Ok(())
}

/// `text` as one shell word.
fn quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// The hook `name`'s script, running `bin` on `store` (unless `$CLAIMDAG_DIR` says another).
fn script(name: &str, bin: &Path, store: Option<&Path>) -> String {
    let dir = match store {
        Some(d) => format!(
            "[ -n \"$CLAIMDAG_DIR\" ] || CLAIMDAG_DIR={}\nexport CLAIMDAG_DIR\n",
            quoted(&d.display().to_string())
        ),
        None => String::new(),
    };
    let head = format!(
        "#!/bin/sh\n{MARK} {name}, made by `claimdag hook install` (installing again replaces \
         it).\n# The hook that was here before runs first: {name}{BEFORE}.\nbin={}\n[ -x \
         \"$bin\" ] || bin=claimdag\n{dir}here=$(dirname \"$0\")\n",
        quoted(&bin.display().to_string())
    );
    let body = match name {
        "pre-commit" => PRE_COMMIT,
        "commit-msg" => COMMIT_MSG,
        _ => PRE_PUSH,
    };
    format!("{head}{}", body.replace("HOOK", name))
}

const PRE_COMMIT: &str = r#"if [ -x "$here/HOOK.before-claimdag" ]; then
    "$here/HOOK.before-claimdag" "$@" || exit $?
fi
if [ -z "$CLAIMDAG_ACTOR" ]; then
    echo "claimdag: CLAIMDAG_ACTOR is not set: this commit is not checked against any claim" >&2
    exit 0
fi
exec "$bin" diff-check --staged
"#;

const COMMIT_MSG: &str = r#"if [ -x "$here/HOOK.before-claimdag" ]; then
    "$here/HOOK.before-claimdag" "$@" || exit $?
fi
[ -n "$CLAIMDAG_NODE" ] && [ -n "$CLAIMDAG_GEN" ] || exit 0
if ! "$bin" fence-check "$CLAIMDAG_NODE" "$CLAIMDAG_GEN" >/dev/null; then
    echo "claimdag: the claim on $CLAIMDAG_NODE at gen=$CLAIMDAG_GEN is not live: commit refused" >&2
    exit 1
fi
exec git interpret-trailers --in-place --if-exists replace \
    --trailer "Claimdag-Node: $CLAIMDAG_NODE" --trailer "Claimdag-Generation: $CLAIMDAG_GEN" "$1"
"#;

const PRE_PUSH: &str = r#"input=$(cat)
if [ -x "$here/HOOK.before-claimdag" ]; then
    printf '%s\n' "$input" | "$here/HOOK.before-claimdag" "$@" || exit $?
fi
printf '%s\n' "$input" | while read -r lref lsha rref rsha; do
    case "$lsha" in ''|*[!0]*) ;; *) continue ;; esac # a ref deleted: nothing to carry
    [ -n "$lsha" ] || continue
    case "$rsha" in
        *[!0]*) commits=$(git rev-list "$rsha..$lsha") base=$rsha ;;
        *) commits=$(git rev-list "$lsha" --not --remotes)
           first=$(printf '%s\n' "$commits" | tail -n 1)
           base=$(git rev-parse -q --verify "$first^" 2>/dev/null) ;;
    esac
    for c in $commits; do
        node=$(git log -1 --format='%(trailers:key=Claimdag-Node,valueonly)' "$c" | head -n 1)
        gen=$(git log -1 --format='%(trailers:key=Claimdag-Generation,valueonly)' "$c" | head -n 1)
        [ -n "$node" ] && [ -n "$gen" ] || continue
        if ! "$bin" fence-check "$node" "$gen" >/dev/null; then
            echo "claimdag: commit $c was made under the claim on $node at gen=$gen, no longer live: push refused" >&2
            exit 1
        fi
    done
    if [ -n "$CLAIMDAG_ACTOR" ] && [ -n "$base" ]; then
        "$bin" diff-check --base "$base" --head "$lsha" || exit 1
    fi
done || exit 1
"#;

/// The hooks installed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(transparent)]
pub struct HooksInstalled(pub Vec<HookInstalled>);

/// One hook installed, and where the hook that was there before it is kept.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct HookInstalled {
    pub hook: String,
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chained: Option<String>,
}

impl Reply for HooksInstalled {
    fn text(&self) -> String {
        let mut out = String::new();
        for h in &self.0 {
            out.push_str(&format!("installed {}  {}", h.hook, h.path));
            if let Some(c) = &h.chained {
                out.push_str(&format!("  (runs {c} first)"));
            }
            out.push('\n');
        }
        out
    }
    fn object_key() -> Option<&'static str> {
        Some("hooks")
    }
}
