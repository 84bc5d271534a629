//! Helpers shared by the integration tests: run the real `claimdag` binary on a store in a
//! temporary directory, capture what it prints and how it exits, read the store's files.
//! Every run of the binary has a time limit (a hung verb fails its test instead of hanging
//! the suite), plans go in on stdin or from a file, and a store's journal can be folded into
//! its snapshot so that a test can hand-edit the whole state in one file.
//!
//! Each test target declares this module once in its `main.rs`
//! (`#[path = "../common/mod.rs"] mod common;`); its files `use crate::common::...`.

#![allow(dead_code)]

use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// How long one run may take before it counts as hung.
pub const LIMIT: Duration = Duration::from_secs(120);

/// A longer limit for runs over very large stores (debug builds are slow).
pub const LONG_LIMIT: Duration = Duration::from_secs(900);

/// The journal's header line: a journal of only this holds no record.
pub const JOURNAL_HEADER: &[u8] = b"claimdag-journal 1\n";

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

/// Runs `cmd` with `stdin` fed in, killing it after `limit`; panics naming the arguments when
/// it hangs. Its output is read by two threads while it runs, so that a large output never
/// blocks it.
pub fn run_limited(
    mut cmd: Command,
    args: &[&str],
    stdin: Option<Vec<u8>>,
    limit: Duration,
) -> Run {
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    cmd.stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    });
    let mut child = cmd.spawn().expect("spawn claimdag");
    let feeder = stdin.map(|bytes| {
        let mut pipe = child.stdin.take().expect("stdin pipe");
        std::thread::spawn(move || {
            // The binary may refuse before reading it all; a broken pipe is fine then.
            let _ = pipe.write_all(&bytes);
        })
    });
    let mut out_pipe = child.stdout.take().expect("stdout pipe");
    let mut err_pipe = child.stderr.take().expect("stderr pipe");
    let out_reader = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = out_pipe.read_to_end(&mut b);
        b
    });
    let err_reader = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = err_pipe.read_to_end(&mut b);
        b
    });
    let start = Instant::now();
    // Short naps first: most runs end within a few milliseconds.
    let mut nap = Duration::from_micros(100);
    let status = loop {
        if let Some(st) = child.try_wait().expect("wait for claimdag") {
            break st;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "claimdag {args:?} did not finish within {}s (hung); killed",
                limit.as_secs()
            );
        }
        std::thread::sleep(nap);
        nap = (nap * 2).min(Duration::from_millis(5));
    };
    if let Some(f) = feeder {
        let _ = f.join();
    }
    let stdout = out_reader.join().expect("stdout reader");
    let stderr = err_reader.join().expect("stderr reader");
    Run::from_output(
        args.iter().map(|s| s.to_string()).collect(),
        Output {
            status,
            stdout,
            stderr,
        },
    )
}

/// Runs a prepared command, killing it (and failing) if it has not ended within a minute;
/// `what` names it in messages.
pub fn run_bounded(cmd: Command, what: &str) -> Run {
    run_limited(cmd, &[what], None, Duration::from_secs(60))
}

/// A store directory inside its own temporary directory (removed on drop), driven through
/// the binary with a time limit on every run.
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

    /// The store directory.
    pub fn dir(&self) -> &Path {
        &self.dir
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

    /// Runs `claimdag --dir <store> <args...>` with extra environment variables, stdin and a
    /// time limit.
    pub fn run_full(
        &self,
        args: &[&str],
        env: &[(&str, &str)],
        stdin: Option<Vec<u8>>,
        limit: Duration,
    ) -> Run {
        let mut c = self.command(args);
        for (k, v) in env {
            c.env(k, v);
        }
        run_limited(c, args, stdin, limit)
    }

    /// Runs `claimdag --dir <store> <args...>`.
    pub fn run(&self, args: &[&str]) -> Run {
        self.run_full(args, &[], None, LIMIT)
    }

    /// Runs with extra environment variables.
    pub fn run_env(&self, args: &[&str], env: &[(&str, &str)]) -> Run {
        self.run_full(args, env, None, LIMIT)
    }

    /// Runs in workspace `ws` (`--workspace ws` before the verb).
    pub fn run_ws(&self, ws: &str, args: &[&str]) -> Run {
        let mut all = vec!["--workspace", ws];
        all.extend_from_slice(args);
        self.run(&all)
    }

    /// Runs and asserts success; returns stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        self.run(args).ok().to_string()
    }

    /// [`Store::ok`] in workspace `ws`.
    pub fn ok_ws(&self, ws: &str, args: &[&str]) -> String {
        self.run_ws(ws, args).ok().to_string()
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

    /// Creates a node in workspace `ws`.
    pub fn upsert_ws(&self, ws: &str, summary: &str, extra: &[&str]) -> String {
        let mut args = vec!["upsert", "--summary", summary];
        args.extend_from_slice(extra);
        let out = self.ok_ws(ws, &args);
        let id = out.trim().to_string();
        assert!(is_id(&id), "upsert printed {out:?}");
        id
    }

    /// `show --json` of one node.
    pub fn node(&self, id: &str) -> Value {
        self.json(&["show", id])
    }

    /// The display word of a node.
    pub fn display(&self, id: &str) -> String {
        self.node(id)["display"]
            .as_str()
            .expect("display word")
            .to_string()
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

    /// Claims and completes a node with `status`; returns the generation it finished at.
    pub fn finish(&self, id: &str, status: &str) -> u64 {
        let who = actor(0xf1f1);
        let g = self.claim(id, &who, &[]);
        let gs = g.to_string();
        let out = self.ok(&["complete", id, "--status", status, "--gen", &gs]);
        assert_eq!(out, format!("{}  {status}\n", short(id)));
        g
    }

    /// [`Store::finish`] in workspace `ws`, with `done`.
    pub fn finish_ws(&self, ws: &str, id: &str) -> u64 {
        let who = actor(0xf1f1);
        let g = parse_gen(&self.ok_ws(ws, &["claim", id, "--assignee", &who]));
        let gs = g.to_string();
        self.ok_ws(ws, &["complete", id, "--status", "done", "--gen", &gs]);
        g
    }

    /// Runs `args`, expects exit `exit` with `phrase` in the message, then the same with
    /// `--json` and the error `code`; asserts both left every store file as it was (or the
    /// store absent). Returns the JSON error object.
    pub fn refused(&self, args: &[&str], exit: i32, phrase: &str, code: &str) -> Value {
        self.refusal(args, &[], None, exit, phrase, code).1
    }

    /// As [`Store::refused`]; returns the text message (stderr) instead.
    pub fn refused_text(&self, args: &[&str], exit: i32, phrase: &str, code: &str) -> String {
        self.refusal(args, &[], None, exit, phrase, code).0
    }

    /// As [`Store::refused_text`], with environment variables and stdin.
    pub fn refused_full(
        &self,
        args: &[&str],
        env: &[(&str, &str)],
        stdin: Option<Vec<u8>>,
        exit: i32,
        phrase: &str,
        code: &str,
    ) -> String {
        self.refusal(args, env, stdin, exit, phrase, code).0
    }

    /// The checks of [`Store::refused`]; returns the text message and the JSON error object.
    fn refusal(
        &self,
        args: &[&str],
        env: &[(&str, &str)],
        stdin: Option<Vec<u8>>,
        exit: i32,
        phrase: &str,
        code: &str,
    ) -> (String, Value) {
        let existed = self.dir.exists();
        let before = self.files();
        let r = self.run_full(args, env, stdin.clone(), LIMIT);
        r.refused(exit, phrase);
        assert!(
            r.stderr.starts_with("error: "),
            "stderr of {args:?} does not start with \"error: \": {}",
            r.stderr
        );
        assert_eq!(r.stdout, "", "a refused {args:?} printed on stdout");
        assert_eq!(
            self.dir.exists(),
            existed,
            "refused {args:?} created or removed the store directory"
        );
        assert_files_eq(&before, &self.files(), &format!("refused {args:?}"));
        let mut all = vec!["--json"];
        all.extend_from_slice(args);
        let j = self.run_full(&all, env, stdin, LIMIT);
        assert_eq!(j.code, Some(exit), "--json {args:?}: {}", j.stderr);
        let e = j.error_json();
        assert_eq!(e["code"], code, "{args:?}: {e}");
        assert!(
            e["message"].as_str().unwrap_or_default().contains(phrase),
            "{args:?}: JSON message lacks {phrase:?}: {e}"
        );
        assert_eq!(
            self.dir.exists(),
            existed,
            "refused --json {args:?} created or removed the store directory"
        );
        assert_files_eq(&before, &self.files(), &format!("refused --json {args:?}"));
        (r.stderr, e)
    }

    /// `import -` with the plan on stdin.
    pub fn import(&self, plan: &Value) -> Run {
        self.import_bytes(plan.to_string().into_bytes(), LIMIT)
    }

    pub fn import_bytes(&self, plan: Vec<u8>, limit: Duration) -> Run {
        self.run_full(&["import", "-"], &[], Some(plan), limit)
    }

    /// Imports a plan and returns the `(id, key)` pairs it printed, checked for shape.
    pub fn import_ok(&self, plan: &Value) -> Vec<(String, String)> {
        let r = self.import(plan);
        parse_import(r.ok())
    }

    /// The journal's records, oldest first.
    pub fn journal_records(&self) -> Vec<Value> {
        journal_records(&std::fs::read(self.dir.join("journal")).expect("read journal"))
    }

    /// Folds every journal record into `snapshot.json` (nodes, settings, archive stubs), moves
    /// their events to `history.jsonl` and their archived nodes to `archive.jsonl`, and cuts
    /// the journal back to its header: what a compaction does. The store then reads the same,
    /// and every node is in the one file a test may hand-edit.
    pub fn fold_journal(&self) {
        fold_journal(&self.dir);
    }

    /// The snapshot as JSON.
    pub fn snapshot(&self) -> Value {
        let bytes = std::fs::read(self.dir.join("snapshot.json")).expect("read snapshot");
        serde_json::from_slice(&bytes).expect("snapshot is JSON")
    }

    /// Replaces the snapshot.
    pub fn write_snapshot(&self, v: &Value) {
        let mut bytes = serde_json::to_vec(v).expect("serialize snapshot");
        bytes.push(b'\n');
        std::fs::write(self.dir.join("snapshot.json"), bytes).expect("write snapshot");
    }

    /// Edits the snapshot's node `id` in place.
    pub fn edit_snapshot_node(
        &self,
        id: &str,
        edit: impl FnOnce(&mut serde_json::Map<String, Value>),
    ) {
        let mut snap = self.snapshot();
        let nodes = snap["nodes"].as_array_mut().expect("snapshot nodes");
        let node = nodes
            .iter_mut()
            .find(|n| n["id"] == id)
            .unwrap_or_else(|| panic!("node {id} is not in the snapshot"));
        edit(node.as_object_mut().expect("node object"));
        self.write_snapshot(&snap);
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

/// Parses `import` output: `<32 hex>  <key>` lines.
pub fn parse_import(out: &str) -> Vec<(String, String)> {
    out.lines()
        .map(|l| {
            let (id, key) = l
                .split_once("  ")
                .unwrap_or_else(|| panic!("import line {l:?} is not \"<id>  <key>\""));
            assert!(is_id(id), "import line {l:?} does not start with an id");
            (id.to_string(), key.to_string())
        })
        .collect()
}

/// The id printed for `key` in parsed import output.
pub fn id_of<'a>(pairs: &'a [(String, String)], key: &str) -> &'a str {
    pairs
        .iter()
        .find(|(_, k)| k == key)
        .map(|(id, _)| id.as_str())
        .unwrap_or_else(|| panic!("no key {key:?} in import output {pairs:?}"))
}

/// The JSON of every record of a journal file (after its header).
pub fn journal_records(bytes: &[u8]) -> Vec<Value> {
    assert!(
        bytes.starts_with(JOURNAL_HEADER),
        "journal does not start with its header"
    );
    let mut out = Vec::new();
    for line in bytes[JOURNAL_HEADER.len()..].split(|&c| c == b'\n') {
        if line.is_empty() {
            continue;
        }
        // "#<len:8> <crc:8> <json>"
        assert!(
            line.len() > 19 && line[0] == b'#',
            "malformed journal record: {:?}",
            String::from_utf8_lossy(&line[..line.len().min(40)])
        );
        out.push(serde_json::from_slice(&line[19..]).expect("journal record JSON"));
    }
    out
}

/// See [`Store::fold_journal`].
pub fn fold_journal(dir: &Path) {
    let snap_path = dir.join("snapshot.json");
    let snap: Value =
        serde_json::from_slice(&std::fs::read(&snap_path).expect("read snapshot")).expect("JSON");
    let mut order: Vec<String> = Vec::new();
    let mut nodes: HashMap<String, Value> = HashMap::new();
    for n in snap["nodes"].as_array().expect("nodes").iter() {
        let id = n["id"].as_str().expect("id").to_string();
        order.push(id.clone());
        nodes.insert(id, n.clone());
    }
    let mut settings = snap["settings"].clone();
    let mut archived: serde_json::Map<String, Value> =
        snap["archived"].as_object().cloned().unwrap_or_default();
    let mut seq = snap["seq"].as_u64().expect("seq");
    let mut history = Vec::new();
    let mut archive = Vec::new();
    let journal = std::fs::read(dir.join("journal")).expect("read journal");
    for rec in journal_records(&journal) {
        let s = rec["seq"].as_u64().expect("record seq");
        assert_eq!(s, seq + 1, "journal records do not follow the snapshot");
        seq = s;
        for n in rec["nodes"].as_array().into_iter().flatten() {
            let id = n["id"].as_str().expect("id").to_string();
            if !nodes.contains_key(&id) {
                order.push(id.clone());
            }
            archived.remove(&id);
            nodes.insert(id, n.clone());
        }
        for n in rec["archived"].as_array().into_iter().flatten() {
            let id = n["id"].as_str().expect("id").to_string();
            nodes.remove(&id);
            order.retain(|x| *x != id);
            archived.insert(id, json!({"status": n["status"].clone()}));
            archive.push(json!({"seq": seq, "node": n}));
        }
        if !rec["settings"].is_null() {
            settings = rec["settings"].clone();
        }
        for (i, e) in rec["events"].as_array().into_iter().flatten().enumerate() {
            let mut line = serde_json::Map::new();
            line.insert("seq".into(), json!(seq));
            line.insert("i".into(), json!(i));
            for (k, v) in e.as_object().expect("event object") {
                line.insert(k.clone(), v.clone());
            }
            history.push(Value::Object(line));
        }
    }
    let new = json!({
        "format": 1,
        "seq": seq,
        "settings": settings,
        "archived": archived,
        "nodes": order.iter().map(|id| nodes[id].clone()).collect::<Vec<_>>(),
    });
    let append = |name: &str, lines: &[Value]| {
        if lines.is_empty() {
            return;
        }
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.join(name))
            .expect("open side file");
        for l in lines {
            writeln!(f, "{l}").expect("append side file");
        }
    };
    append("history.jsonl", &history);
    append("archive.jsonl", &archive);
    let mut bytes = serde_json::to_vec(&new).expect("serialize");
    bytes.push(b'\n');
    std::fs::write(&snap_path, bytes).expect("write snapshot");
    std::fs::write(dir.join("journal"), JOURNAL_HEADER).expect("cut journal");
}

/// True when the tests run as root (permission bits do not stop root; only root mounts).
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// Asserts a clean `io` refusal: exit 7, `error: ` with `phrase` and the path in it.
pub fn refused_io(r: &Run, path: &Path, phrase: &str, what: &str) {
    assert_eq!(
        r.code,
        Some(7),
        "{what}: expected exit 7\nstdout: {}\nstderr: {}",
        r.stdout,
        r.stderr
    );
    assert!(r.stderr.starts_with("error: "), "{what}: {}", r.stderr);
    let shown = path.to_string_lossy();
    assert!(
        r.stderr.contains(shown.as_ref()),
        "{what}: the message does not name {shown}: {}",
        r.stderr
    );
    assert!(
        r.stderr.contains(phrase),
        "{what}: the message lacks {phrase:?}: {}",
        r.stderr
    );
    assert_eq!(r.stdout, "", "{what}: printed on stdout");
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

/// A library handle on the store at `dir` (for tests that drive the store in process).
pub fn handle(dir: &Path) -> claimdag::Store {
    claimdag::Store::open(Some(dir)).expect("open")
}

/// The actor whose id is zero but for its last byte, `n`.
pub fn actor_id(n: u8) -> claimdag::Id {
    let mut b = [0u8; 16];
    b[15] = n;
    claimdag::Id(b)
}

/// A handle on `dir` without fsync, compacting past `compact_min_bytes` (and a quarter of the
/// snapshot), on the system clock.
pub fn unsynced(dir: &Path, compact_min_bytes: u64) -> claimdag::Store {
    claimdag::Store::from_backend(unsynced_backend(dir, compact_min_bytes))
}

/// The embedded backend of [`unsynced`], for a test that calls it directly too.
pub fn unsynced_backend(
    dir: &Path,
    compact_min_bytes: u64,
) -> std::sync::Arc<claimdag::store::EmbeddedStore> {
    let tuning = claimdag::store::Tuning {
        sync: false,
        compact_min_bytes,
    };
    std::sync::Arc::new(claimdag::store::EmbeddedStore::new(
        dir.to_path_buf(),
        tuning,
        std::sync::Arc::new(claimdag::store::SystemClock),
    ))
}

/// A plan of `n` independent nodes, keys `k0`, `k1`, ..., summaries from `summary`.
pub fn flat_plan(n: usize, summary: impl Fn(usize) -> String) -> claimdag::rules::Plan {
    claimdag::rules::Plan {
        nodes: (0..n)
            .map(|i| claimdag::rules::PlanNode {
                key: format!("k{i}"),
                summary: summary(i),
                ..claimdag::rules::PlanNode::default()
            })
            .collect(),
    }
}
