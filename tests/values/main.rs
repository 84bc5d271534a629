//! Values given back as they were given, and refusals that name what was given: an output's
//! numbers kept digit for digit through the command line, the verb layer and the history on
//! both backends; `--output` that is not JSON refused as a JSON error under `--json`; a
//! duration too large in a JSON request refused naming its field.

#[path = "../common/mod.rs"]
mod common;
#[path = "../common/pg.rs"]
mod pg;

mod arguments;
mod outputs;

use common::{run_limited, Run};
use std::time::Duration;

/// A store the tests drive: a directory or a PostgreSQL URL.
pub struct Target {
    /// What `--dir` gets, and what the library opens.
    pub dir: String,
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

    /// Runs `claimdag --dir DIR args...` to its end.
    pub fn run(&self, args: &[&str]) -> Run {
        let mut c = common::command();
        c.arg("--dir").arg(&self.dir).args(args);
        run_limited(c, args, None, Duration::from_secs(120))
    }

    /// Runs and asserts success; returns stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        self.run(args).ok().to_string()
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
