//! A store the integration tests drive through the binary and the library, on either
//! backend (shared by the test crates that run on both: `#[path]` it beside `common` and
//! `pg`).
#![allow(dead_code)]

use crate::common::{self, run_limited, Run};
use crate::pg;
use serde_json::Value;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A store the tests drive through the binary: a directory or a PostgreSQL URL.
pub struct Target {
    /// What `--dir` gets.
    pub dir: String,
    /// Keeps a directory store's temporary directory alive.
    _tmp: Option<tempfile::TempDir>,
}

impl Target {
    pub fn embedded() -> Target {
        let tmp = tempfile::tempdir().expect("temporary directory");
        Target {
            dir: tmp.path().join("store").to_string_lossy().into_owned(),
            _tmp: Some(tmp),
        }
    }

    pub fn postgres() -> Target {
        Target {
            dir: pg::fresh_url(),
            _tmp: None,
        }
    }

    /// `claimdag --dir DIR args...`, not started.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut c = common::command();
        c.arg("--dir").arg(&self.dir).args(args);
        c
    }

    /// Runs `claimdag --dir DIR args...` to its end (two minutes at most).
    pub fn run(&self, args: &[&str]) -> Run {
        run_limited(self.command(args), args, None, Duration::from_secs(120))
    }

    /// Runs and asserts success; returns stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        self.run(args).ok().to_string()
    }

    /// Runs with `--json` and asserts success; the parsed output.
    pub fn json(&self, args: &[&str]) -> Value {
        let mut all = vec!["--json"];
        all.extend_from_slice(args);
        let r = self.run(&all);
        r.ok();
        r.json()
    }

    /// Starts `claimdag --dir DIR args...` with its output piped.
    pub fn spawn(&self, args: &[&str]) -> Child {
        self.command(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start claimdag")
    }

    /// A new node; its id.
    pub fn upsert(&self, summary: &str, extra: &[&str]) -> String {
        let mut args = vec!["upsert", "--summary", summary];
        args.extend_from_slice(extra);
        self.ok(&args).trim().to_string()
    }

    /// `show --json` of a node.
    pub fn node(&self, id: &str) -> Value {
        self.json(&["show", id])
    }

    /// The store, opened by the library.
    pub fn open(&self) -> claimdag::Store {
        claimdag::Store::open(Some(std::path::Path::new(&self.dir))).expect("open the store")
    }
}

/// Both backends, for the tests that run on each.
pub fn both() -> [Target; 2] {
    [Target::embedded(), Target::postgres()]
}
