//! Helpers shared by the integration tests: run the real `claimdag` binary on a store in a
//! temporary directory, capture what it prints and how it exits, read the store's files.

#![allow(dead_code)]

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The binary under test.
pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_claimdag")
}

/// A command for the binary with the environment variables that choose a store, a workspace
/// or a crash point removed, so that only what a test passes counts, and the compaction
/// threshold pinned at 1 MiB.
pub fn command() -> Command {
    let mut c = Command::new(bin());
    for k in [
        "CLAIMDAG_DIR",
        "CLAIMDAG_WORKSPACE",
        "CLAIMDAG_CRASH_AT",
        "XDG_STATE_HOME",
    ] {
        c.env_remove(k);
    }
    // The tests that build a journal just under the compaction threshold assume 1 MiB.
    c.env("CLAIMDAG_COMPACT_MIN_BYTES", (1u64 << 20).to_string());
    c.stdin(Stdio::null());
    c
}

/// The actor `printf '%032x' n` names.
pub fn actor(n: u64) -> String {
    format!("{n:032x}")
}

/// The first 8 characters of an id and `...`, as `list` prints it.
pub fn short(id: &str) -> String {
    format!("{}...", &id[..8])
}

/// What one run of the binary did.
#[derive(Debug, Clone)]
pub struct Run {
    pub args: Vec<String>,
    /// The exit status, `None` when a signal ended the process.
    pub code: Option<i32>,
    /// The signal that ended the process, if one did.
    pub signal: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// The arguments for messages, long ones cut short.
    pub fn shown_args(&self) -> String {
        let cut: Vec<String> = self
            .args
            .iter()
            .take(12)
            .map(|a| {
                if a.chars().count() > 60 {
                    format!("{}...", a.chars().take(60).collect::<String>())
                } else {
                    a.clone()
                }
            })
            .collect();
        let more = if self.args.len() > 12 { " ..." } else { "" };
        format!("{cut:?}{more}")
    }

    pub fn from_output(args: Vec<String>, out: Output) -> Run {
        use std::os::unix::process::ExitStatusExt;
        Run {
            args,
            code: out.status.code(),
            signal: out.status.signal(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// Asserts exit 0 and returns stdout.
    pub fn ok(&self) -> &str {
        assert_eq!(
            self.code,
            Some(0),
            "expected success from {}\nstdout: {}\nstderr: {}",
            self.shown_args(),
            self.stdout,
            self.stderr
        );
        &self.stdout
    }

    /// Asserts the exit code and that stderr contains `phrase`.
    pub fn refused(&self, exit: i32, phrase: &str) -> &Self {
        assert_eq!(
            self.code,
            Some(exit),
            "expected exit {exit} from {}\nstdout: {}\nstderr: {}",
            self.shown_args(),
            self.stdout,
            self.stderr
        );
        assert!(
            self.stderr.contains(phrase),
            "stderr of {} lacks {phrase:?}: {}",
            self.shown_args(),
            self.stderr
        );
        self
    }

    /// Stdout parsed as JSON.
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout of {} is not JSON ({e}): {:?}\nstderr: {}",
                self.shown_args(),
                self.stdout,
                self.stderr
            )
        })
    }

    /// Stderr parsed as the `{"error": {...}}` object; returns the inner object.
    pub fn error_json(&self) -> Value {
        let v: Value = serde_json::from_str(self.stderr.trim()).unwrap_or_else(|e| {
            panic!(
                "stderr of {} is not one JSON object ({e}): {:?}",
                self.shown_args(),
                self.stderr
            )
        });
        let inner = v
            .get("error")
            .unwrap_or_else(|| panic!("no \"error\" key in {v}"))
            .clone();
        assert!(inner["code"].is_string(), "no code in {v}");
        assert!(inner["message"].is_string(), "no message in {v}");
        inner
    }
}

/// A store directory inside its own temporary directory (removed on drop).
pub struct Store {
    _tmp: tempfile::TempDir,
    pub dir: PathBuf,
}

impl Default for Store {
    fn default() -> Self {
        Store::new()
    }
}

impl Store {
    /// A store that does not exist yet: the first write creates it.
    pub fn new() -> Store {
        let tmp = tempfile::tempdir().expect("temporary directory");
        let dir = tmp.path().join("store");
        Store { _tmp: tmp, dir }
    }

    /// The temporary directory that holds the store (room for copies and stray files).
    pub fn scratch(&self) -> &Path {
        self._tmp.path()
    }

    /// A command for `claimdag --dir <store> <args...>`.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut c = command();
        c.arg("--dir").arg(&self.dir).args(args);
        c
    }

    /// Runs `claimdag --dir <store> <args...>`.
    pub fn run(&self, args: &[&str]) -> Run {
        self.run_env(args, &[])
    }

    /// Runs with extra environment variables.
    pub fn run_env(&self, args: &[&str], env: &[(&str, &str)]) -> Run {
        let mut c = self.command(args);
        for (k, v) in env {
            c.env(k, v);
        }
        let out = c.output().expect("run claimdag");
        Run::from_output(args.iter().map(|s| s.to_string()).collect(), out)
    }

    /// Runs and asserts success; returns stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        self.run(args).ok().to_string()
    }

    /// Runs with `--json`, asserts success and parses stdout.
    pub fn json(&self, args: &[&str]) -> Value {
        let mut all = vec!["--json"];
        all.extend_from_slice(args);
        let r = self.run(&all);
        r.ok();
        r.json()
    }

    /// Creates (or finds) a node; returns its full id.
    pub fn upsert(&self, summary: &str, extra: &[&str]) -> String {
        let mut args = vec!["upsert", "--summary", summary];
        args.extend_from_slice(extra);
        let out = self.ok(&args);
        let id = out.trim().to_string();
        assert!(is_id(&id), "upsert printed {out:?}");
        id
    }

    /// `show --json` of one node.
    pub fn node(&self, id: &str) -> Value {
        self.json(&["show", id])
    }

    /// Every node (`list --all --json`), keyed by id.
    pub fn all(&self) -> BTreeMap<String, Value> {
        let v = self.json(&["list", "--all"]);
        v.as_array()
            .unwrap_or_else(|| panic!("list --json is not an array: {v}"))
            .iter()
            .map(|n| (n["id"].as_str().expect("id").to_string(), n.clone()))
            .collect()
    }

    /// Every file of the store directory and its bytes.
    pub fn files(&self) -> BTreeMap<String, Vec<u8>> {
        files_of(&self.dir)
    }

    /// `claim` and the generation it printed.
    pub fn claim(&self, id: &str, who: &str, extra: &[&str]) -> u64 {
        let mut args = vec!["claim", id, "--assignee", who];
        args.extend_from_slice(extra);
        parse_gen(&self.ok(&args))
    }

    /// Runs `args`, expects exit `exit` with `phrase` in the message, then the same with
    /// `--json` and the error `code`; asserts both left every store file as it was.
    /// Returns the JSON error object.
    pub fn refused(&self, args: &[&str], exit: i32, phrase: &str, code: &str) -> Value {
        let before = self.files();
        let r = self.run(args);
        r.refused(exit, phrase);
        assert!(
            r.stderr.starts_with("error: "),
            "stderr of {args:?} does not start with \"error: \": {}",
            r.stderr
        );
        assert_eq!(r.stdout, "", "a refused {args:?} printed on stdout");
        assert_files_eq(&before, &self.files(), &format!("refused {args:?}"));
        let mut all = vec!["--json"];
        all.extend_from_slice(args);
        let r = self.run(&all);
        assert_eq!(r.code, Some(exit), "--json {args:?}: {}", r.stderr);
        let e = r.error_json();
        assert_eq!(e["code"], code, "{args:?}: {e}");
        assert!(
            e["message"].as_str().unwrap_or_default().contains(phrase),
            "{args:?}: message lacks {phrase:?}: {e}"
        );
        assert_files_eq(&before, &self.files(), &format!("refused --json {args:?}"));
        e
    }
}

/// Every regular file directly in `dir` and its bytes (empty when `dir` is missing).
pub fn files_of(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries {
        let e = e.expect("dir entry");
        let name = e.file_name().to_string_lossy().into_owned();
        let bytes = std::fs::read(e.path()).expect("read store file");
        out.insert(name, bytes);
    }
    out
}

/// Asserts two file maps are equal, naming the first file that differs.
pub fn assert_files_eq(
    before: &BTreeMap<String, Vec<u8>>,
    after: &BTreeMap<String, Vec<u8>>,
    what: &str,
) {
    let names_before: Vec<_> = before.keys().collect();
    let names_after: Vec<_> = after.keys().collect();
    assert_eq!(
        names_before, names_after,
        "{what}: the store's files changed"
    );
    for (name, bytes) in before {
        assert!(
            after[name] == *bytes,
            "{what}: {name} changed ({} bytes before, {} after)",
            bytes.len(),
            after[name].len()
        );
    }
}

/// Copies the regular files of `from` into a new directory `to`.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create copy");
    for (name, bytes) in files_of(from) {
        std::fs::write(to.join(name), bytes).expect("write copy");
    }
}

/// True for 32 lowercase hex characters.
pub fn is_id(s: &str) -> bool {
    s.len() == 32
        && s.bytes()
            .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c))
}

/// Reads `gen=<g>` (with or without an id before it).
pub fn parse_gen(out: &str) -> u64 {
    let g = out
        .split_whitespace()
        .find_map(|w| w.strip_prefix("gen="))
        .unwrap_or_else(|| panic!("no gen= in {out:?}"));
    g.parse()
        .unwrap_or_else(|_| panic!("bad generation in {out:?}"))
}

/// A small deterministic generator (xorshift64*), seeded by the caller.
pub struct Rng(u64);

impl Rng {
    /// Seeded from `CLAIMDAG_TEST_SEED` when set, else from the clock; the seed is printed so
    /// a failing run can be repeated.
    pub fn from_env(what: &str) -> Rng {
        let seed = std::env::var("CLAIMDAG_TEST_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_nanos() as u64)
                    .unwrap_or(1)
            });
        eprintln!("{what}: seed {seed} (set CLAIMDAG_TEST_SEED={seed} to repeat)");
        Rng(seed | 1)
    }

    pub fn seeded(seed: u64) -> Rng {
        Rng(seed | 1)
    }

    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}
