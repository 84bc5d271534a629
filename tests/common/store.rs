//! [`Store`]: a store directory in a temporary directory, driven through the binary.

use super::{
    actor, command, files_of, fold_journal, is_id, journal_records, parse_gen, parse_import,
    run_limited, short, Run, LIMIT,
};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// A store directory inside its own temporary directory (removed on drop), driven through
/// the binary with a time limit on every run.
pub struct Store {
    _tmp: tempfile::TempDir,
    pub dir: PathBuf,
    /// Set in the environment of every run.
    env: Vec<(String, String)>,
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
        Store {
            _tmp: tmp,
            dir,
            env: Vec::new(),
        }
    }

    /// This store, with `env` set for every run of the binary on it.
    pub fn with_env(mut self, env: &[(&str, &str)]) -> Store {
        self.env
            .extend(env.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        self
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
        c.envs(self.env.iter().map(|(k, v)| (k, v)));
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
}

impl Store {
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
