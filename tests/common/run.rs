//! Running the binary under test: a command with the store-choosing environment removed, a
//! time limit on every run, and what a run did (exit, signal, stdout, stderr).

use serde_json::Value;
use std::io::{Read, Write};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// How long one run may take before it counts as hung.
pub const LIMIT: Duration = Duration::from_secs(120);

/// A longer limit for runs over very large stores (debug builds are slow).
pub const LONG_LIMIT: Duration = Duration::from_secs(900);

/// The binary under test.
pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_claimdag")
}

/// The environment variables that choose a store, a workspace or a crash point: a test's
/// command runs without them, so that only what the test passes counts.
pub const STORE_ENV: [&str; 4] = [
    "CLAIMDAG_DIR",
    "CLAIMDAG_WORKSPACE",
    "CLAIMDAG_CRASH_AT",
    "XDG_STATE_HOME",
];

/// A command for the binary with the environment variables that choose a store, a workspace
/// or a crash point removed ([`STORE_ENV`]), so that only what a test passes counts, and the compaction
/// threshold pinned at 1 MiB.
pub fn command() -> Command {
    let mut c = Command::new(bin());
    for k in STORE_ENV {
        c.env_remove(k);
    }
    // The tests that build a journal just under the compaction threshold assume 1 MiB.
    c.env("CLAIMDAG_COMPACT_MIN_BYTES", (1u64 << 20).to_string());
    c.stdin(Stdio::null());
    c
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
