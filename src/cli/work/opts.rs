//! The options of `claimdag work`, its `--help` text and its exit statuses.

use crate::verbs::Dur;
use std::ffi::OsString;

/// The text after `claimdag work --help`'s options.
pub const HELP: &str = "\
Examples:
  claimdag work --actor name:builder-1 -- make -C \"$PWD\" node
  claimdag work --jobs 4 --ttl 2m --role review -- ./review.sh
  claimdag work --no-wait --json -- sh -c 'exec ./run-task \"$CLAIMDAG_NODE\"'
  claimdag config retry_delay 30s && claimdag config max_attempts 5
  claimdag work --on-failure release -- ./flaky-job.sh

The command runs without a shell, in a process group of its own, with stdin empty,
and finds the node in its environment: CLAIMDAG_NODE (the id), CLAIMDAG_GEN (the
generation it was granted), CLAIMDAG_SUMMARY, CLAIMDAG_ACTOR, CLAIMDAG_DIR and
CLAIMDAG_WORKSPACE. Read the summary from the environment (\"$CLAIMDAG_SUMMARY\"),
never paste it into a shell line. Four files talk with the store, in a directory
only this user may enter, removed once the node is finished: CLAIMDAG_INPUTS holds
a JSON object, the output of each prerequisite that is done, by id; what the
command writes to CLAIMDAG_PROGRESS_FILE is its checkpoint (its first 64 KiB, sent
with the next renewal when it changed; the node's next holder receives it); JSON
it writes to CLAIMDAG_OUTPUT_FILE is stored as the node's output when it is
completed (the dependents receive it as an input); tokens=N[,cost=X] it writes to
CLAIMDAG_USAGE_FILE is what it has spent so far (its total), reported with the next
renewal (past the node's budget the command is stopped as for a cancel request).
An output file that is not
JSON, or longer than 64 KiB as compact JSON, completes the node failed, its note
saying why.

Exit 0: the command exited 0 and the node is completed done. Otherwise the node is
completed failed; with --on-failure release it is handed back for another attempt
(after the store's retry_delay backoff) while attempts remain under the node's
max_attempts, else the store's (which it needs), and completed failed on the last
attempt. What a command leaves running when it
exits gets TERM, then KILL after --grace: a node is finished or handed back only once
nothing of its command runs (on Linux, even what left its process group).
The lease is renewed about every third of the ttl; when a renew is refused (the
claim was handed to someone else) or none succeeded for a whole ttl, the lease is
lost: the command's group gets TERM, then KILL after --grace, and the node is left
alone. When a renewal learns that a cancel was requested (claimdag cancel), the
command's group gets TERM, then KILL after --grace, and the node is completed
cancelled (a command that exited before is finished as it exited). SIGINT, SIGTERM or SIGHUP to the worker go to the commands; after the grace
they get KILL and the claims are handed back. When nothing is ready but nodes others
hold may still unlock work, or scheduled nodes will become ready, the worker waits
for them (--no-wait: it exits). Waiting costs no CPU: it wakes when the store
changes or the next lease or schedule comes due.

Progress goes to stderr, a line per node; --json prints one JSON object per node on
stdout (and the commands' output goes to stderr).

Exit status: 0 everything taken is done and nothing is left (or --max was reached),
1 nothing was ready (--no-wait, no node taken), 8 a command failed (its node
completed failed, or handed back with --on-failure release), 9 a lease was
lost, 10 a command was stopped on a cancel request (its node completed
cancelled), 127 the command could not be started, 128+N stopped by signal N (130 SIGINT,
143 SIGTERM), 2-7 a store error as for every command.";

/// Exit statuses of `claimdag work` besides the store's error codes (2-7).
pub mod exit {
    /// Every node it took ended `done`, and nothing is left that it could do.
    pub const OK: i32 = 0;
    /// `--no-wait`: nothing was ready, and it took no node.
    pub const NOTHING_READY: i32 = 1;
    /// A command failed (the node was completed `failed`, or released to be tried again).
    pub const FAILED: i32 = 8;
    /// A lease was lost while its command ran (it was stopped; the node is someone else's).
    pub const LOST: i32 = 9;
    /// A command was stopped because a cancel was requested: its node was completed
    /// `cancelled`.
    pub const CANCELLED: i32 = 10;
    /// CMD could not be started (not found, not executable): the claim was handed back.
    pub const CANNOT_START: i32 = 127;
    /// Stopped by a signal: 128 + the signal's number (130 for SIGINT, 143 for SIGTERM).
    pub const SIGNALLED: i32 = 128;
}

/// What to do with a node whose command failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OnFailure {
    /// Complete it `failed`.
    #[value(alias = "fail")]
    Failed,
    /// Hand the claim back for another attempt (after the store's retry_delay backoff),
    /// and complete it `failed` on its last attempt (max_attempts).
    Release,
}

/// `claimdag work` options.
#[derive(clap::Args, Debug)]
pub struct WorkArgs {
    /// The worker's actor (32 hex or name:NAME) [default: $CLAIMDAG_ACTOR]
    #[arg(long, value_name = "ACTOR")]
    pub actor: Option<String>,
    /// Take nodes of this role (and of none)
    #[arg(long, value_name = "R")]
    pub role: Option<String>,
    /// The lease each claim is held with, renewed about every third of it [default: the
    /// store's default_ttl]
    #[arg(long, value_name = "DUR")]
    pub ttl: Option<Dur>,
    /// Stop after taking this many nodes
    #[arg(long, value_name = "N")]
    pub max: Option<u64>,
    /// Run this many commands at once (each holds a claim: max_held must allow it)
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u16).range(1..=256))]
    pub jobs: u16,
    /// When a command exits non-zero: complete the node failed (failed, or fail), or hand it
    /// back for another attempt after the store's backoff (config retry_delay), completing
    /// it failed on its last attempt (release: needs the store's max_attempts)
    #[arg(long, value_enum, default_value = "failed", value_name = "WHAT")]
    pub on_failure: OnFailure,
    /// How long a command has to exit after TERM before it gets KILL
    #[arg(long, value_name = "DUR", default_value = "10s")]
    pub grace: Dur,
    /// Exit as soon as nothing is ready, instead of waiting for nodes others hold
    #[arg(long)]
    pub no_wait: bool,
    /// If the actor already holds a live claim (a worker that crashed), run CMD for that
    /// claim first instead of refusing as assignee_busy
    #[arg(long)]
    pub resume: bool,
    /// The command and its arguments, run without a shell
    #[arg(required = true, last = true, value_name = "CMD")]
    pub command: Vec<OsString>,
}
