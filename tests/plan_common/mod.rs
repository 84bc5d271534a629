//! Helpers for the tests of import, archive, roles, resources, workspaces, config, graph and
//! check: every run of the binary has a time limit (a hung verb fails its test instead of
//! hanging the suite), plans go in on stdin or from a file, and a store's journal can be
//! folded into its snapshot so that a test can hand-edit the whole state in one file.
//!
//! A test crate that uses this module declares `mod common;` too.

#![allow(dead_code)]

use crate::common::{self, assert_files_eq, Run, Store};
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long one run may take before it counts as hung.
pub const LIMIT: Duration = Duration::from_secs(120);

/// A longer limit for runs over very large stores (debug builds are slow).
pub const LONG_LIMIT: Duration = Duration::from_secs(900);

/// The journal's header line: a journal of only this holds no record.
pub const JOURNAL_HEADER: &[u8] = b"claimdag-journal 1\n";

/// Runs `cmd` with `stdin` fed in, killing it after `limit`; panics naming the arguments when
/// it hangs.
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
        std::thread::sleep(Duration::from_millis(5));
    };
    if let Some(f) = feeder {
        let _ = f.join();
    }
    let stdout = out_reader.join().expect("stdout reader");
    let stderr = err_reader.join().expect("stderr reader");
    Run::from_output(
        args.iter().map(|s| s.to_string()).collect(),
        std::process::Output {
            status,
            stdout,
            stderr,
        },
    )
}

/// A store in its own temporary directory, driven through the binary with a time limit.
pub struct T {
    pub store: Store,
}

impl Default for T {
    fn default() -> Self {
        T::new()
    }
}

impl T {
    /// A store that does not exist yet.
    pub fn new() -> T {
        T {
            store: Store::new(),
        }
    }

    pub fn dir(&self) -> &Path {
        &self.store.dir
    }

    /// A path in the temporary directory beside the store.
    pub fn scratch(&self, name: &str) -> PathBuf {
        self.store.scratch().join(name)
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
        let mut c = self.store.command(args);
        for (k, v) in env {
            c.env(k, v);
        }
        run_limited(c, args, stdin, limit)
    }

    pub fn run(&self, args: &[&str]) -> Run {
        self.run_full(args, &[], None, LIMIT)
    }

    pub fn run_env(&self, args: &[&str], env: &[(&str, &str)]) -> Run {
        self.run_full(args, env, None, LIMIT)
    }

    /// Runs in workspace `ws` (`--workspace ws` before the verb).
    pub fn run_ws(&self, ws: &str, args: &[&str]) -> Run {
        let mut all = vec!["--workspace", ws];
        all.extend_from_slice(args);
        self.run(&all)
    }

    pub fn ok(&self, args: &[&str]) -> String {
        self.run(args).ok().to_string()
    }

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
        assert!(common::is_id(&id), "upsert printed {out:?}");
        id
    }

    /// Creates a node in workspace `ws`.
    pub fn upsert_ws(&self, ws: &str, summary: &str, extra: &[&str]) -> String {
        let mut args = vec!["upsert", "--summary", summary];
        args.extend_from_slice(extra);
        let out = self.ok_ws(ws, &args);
        let id = out.trim().to_string();
        assert!(common::is_id(&id), "upsert printed {out:?}");
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

    /// `claim` and the generation it printed.
    pub fn claim(&self, id: &str, who: &str, extra: &[&str]) -> u64 {
        let mut args = vec!["claim", id, "--assignee", who];
        args.extend_from_slice(extra);
        common::parse_gen(&self.ok(&args))
    }

    /// Claims and completes a node with `status`; returns the generation it finished at.
    pub fn finish(&self, id: &str, status: &str) -> u64 {
        let who = common::actor(0xf1f1);
        let g = self.claim(id, &who, &[]);
        let gs = g.to_string();
        let out = self.ok(&["complete", id, "--status", status, "--gen", &gs]);
        assert_eq!(out, format!("{}  {status}\n", common::short(id)));
        g
    }

    /// [`T::finish`] in workspace `ws`, with `done`.
    pub fn finish_ws(&self, ws: &str, id: &str) -> u64 {
        let who = common::actor(0xf1f1);
        let g = common::parse_gen(&self.ok_ws(ws, &["claim", id, "--assignee", &who]));
        let gs = g.to_string();
        self.ok_ws(ws, &["complete", id, "--status", "done", "--gen", &gs]);
        g
    }

    /// Every file of the store directory and its bytes.
    pub fn files(&self) -> BTreeMap<String, Vec<u8>> {
        self.store.files()
    }

    /// Runs `args`, expects exit `exit` with `phrase` in the message, then the same with
    /// `--json` and the error `code`; asserts both left every store file as it was (or the
    /// store absent). Returns the text message.
    pub fn refused(&self, args: &[&str], exit: i32, phrase: &str, code: &str) -> String {
        self.refused_full(args, &[], None, exit, phrase, code)
    }

    /// As [`T::refused`], with environment variables and stdin.
    pub fn refused_full(
        &self,
        args: &[&str],
        env: &[(&str, &str)],
        stdin: Option<Vec<u8>>,
        exit: i32,
        phrase: &str,
        code: &str,
    ) -> String {
        let existed = self.dir().exists();
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
            self.dir().exists(),
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
            self.dir().exists(),
            existed,
            "refused --json {args:?} created or removed the store directory"
        );
        assert_files_eq(&before, &self.files(), &format!("refused --json {args:?}"));
        r.stderr
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
        journal_records(&std::fs::read(self.dir().join("journal")).expect("read journal"))
    }

    /// Folds every journal record into `snapshot.json` (nodes, settings, archive stubs), moves
    /// their events to `history.jsonl` and their archived nodes to `archive.jsonl`, and cuts
    /// the journal back to its header: what a compaction does. The store then reads the same,
    /// and every node is in the one file a test may hand-edit.
    pub fn fold_journal(&self) {
        fold_journal(self.dir());
    }

    /// The snapshot as JSON.
    pub fn snapshot(&self) -> Value {
        let bytes = std::fs::read(self.dir().join("snapshot.json")).expect("read snapshot");
        serde_json::from_slice(&bytes).expect("snapshot is JSON")
    }

    /// Replaces the snapshot.
    pub fn write_snapshot(&self, v: &Value) {
        let mut bytes = serde_json::to_vec(v).expect("serialize snapshot");
        bytes.push(b'\n');
        std::fs::write(self.dir().join("snapshot.json"), bytes).expect("write snapshot");
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

/// Parses `import` output: `<32 hex>  <key>` lines.
pub fn parse_import(out: &str) -> Vec<(String, String)> {
    out.lines()
        .map(|l| {
            let (id, key) = l
                .split_once("  ")
                .unwrap_or_else(|| panic!("import line {l:?} is not \"<id>  <key>\""));
            assert!(
                common::is_id(id),
                "import line {l:?} does not start with an id"
            );
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

/// See [`T::fold_journal`].
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
