//! `claimdag work -- CMD ARGS...`: runs a command under a claim. Claims the next node,
//! starts CMD in a process group of its own with the node in its environment, holds the
//! claim as a [`Lease`] (renewed about every third of the ttl), and completes the node with
//! the generation it was granted when CMD exits. A lost lease stops CMD's process group
//! (TERM, then KILL after the grace) and leaves the node alone; SIGINT, SIGTERM or SIGHUP
//! to the worker are forwarded to CMD, and the claims are handed back before it exits.
//! Each command runs under a `Guard`, which ends only once nothing the command started is
//! left: a node is never finished, nor handed back, while a process of its command runs.
//!
//! Between claims it waits for the store to change ([`Store::wait_change`], on a thread of
//! its own: no CPU while nothing changes) or for the next change by time alone (a lease
//! running out, a scheduled node's `not_before` passing), never polling the store. When
//! nothing is ready but live claims or scheduled nodes may still bring work, it waits for
//! them; when nothing can, it exits (`--no-wait`: it exits as soon as nothing is ready).
//!
//! A command that exits non-zero has its node completed `failed` (`--on-failure failed`,
//! the default), or with `--on-failure release` handed back ([`Store::release`], so the
//! store's `retry_delay` backoff keeps it from being taken again at once) while attempts
//! remain under the node's `max_attempts` (else the store's), and completed `failed` on the
//! last attempt. Exit statuses: see [`exit`] and [`HELP`].
//!
//! Everything it asks the store goes through [`Store`] and the pure rules; the node's text
//! reaches CMD only through the environment, never through a shell line.

use super::guard::Guard;
use crate::error::{Code, Error, Result};
use crate::id::{Actor, Id};
use crate::model::Status;
use crate::store::lease::Lease;
use crate::store::Store;
use crate::verbs::text::one_line;
use crate::verbs::{ClaimedNode, Dur, Outcome, Reply, Worked};
use std::ffi::OsString;
use std::io::Write;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

mod files;
mod opts;
mod wake;

use files::JobFiles;
pub use opts::{exit, OnFailure, WorkArgs, HELP};

/// How often the commands running are reaped (their exit seen): a look at the child
/// processes, not at the store.
const REAP_EVERY: Duration = Duration::from_millis(20);

/// How long an idle worker sleeps at most before it looks for a signal.
const IDLE_TICK: Duration = Duration::from_millis(250);

/// The signal the worker was sent, 0 for none.
static SIGNAL: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(sig: libc::c_int) {
    SIGNAL.store(sig, Ordering::SeqCst);
}

fn catch_signals() {
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: the handler only stores into an atomic, which is async-signal-safe; the
        // sigaction struct is zeroed and then filled in before the call.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_signal as *const () as usize;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
}

/// The settled options of one run.
struct Options {
    workspace: String,
    actor: Actor,
    role: Option<String>,
    ttl_ms: u64,
    grace: Duration,
    /// `CLAIMDAG_DIR` for the command: the store as it was given, without a password.
    dir: OsString,
    json: bool,
}

/// One command running under a claim.
struct Job {
    lease: Lease,
    summary: String,
    /// The command's guard: it exits as the command did, once nothing of it is left.
    child: Child,
    /// The channel to the guard.
    guard: Guard,
    started: Instant,
    /// Why TERM was sent, once it was.
    stopping: Option<Stop>,
    /// The files the command talks through (removed with the job).
    files: JobFiles,
}

/// Why a command was stopped before it exited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    /// The lease was lost: the node is someone else's.
    Lost,
    /// A cancel was requested of the holder: the node is completed `cancelled`.
    Cancel,
}

/// What happened so far.
#[derive(Default)]
struct Tally {
    taken: u64,
    done: u64,
    failed: u64,
    released: u64,
    lost: u64,
    interrupted: u64,
    cancelled: u64,
}

/// The store for the command's `CLAIMDAG_DIR`: a database's connection string without its
/// password (the command's environment is visible to others), through the store's facade.
fn handed_on(dir: OsString) -> Result<OsString> {
    match dir.to_str() {
        Some(d) => Ok(crate::store::without_password(d)?.into()),
        None => Ok(dir),
    }
}

/// Runs the worker loop; returns the exit status.
/// `actor` is `--actor`, else `$CLAIMDAG_ACTOR`; `dir` is the store as it was given.
#[allow(clippy::too_many_arguments)]
pub fn run(
    store: &Store,
    workspace: &str,
    args: &WorkArgs,
    actor: Option<Actor>,
    dir: OsString,
    json: bool,
    started: &dyn Fn(),
) -> Result<i32> {
    let actor = actor.ok_or_else(|| {
        Error::invalid("work needs an actor: --actor name:worker-1, or set $CLAIMDAG_ACTOR")
    })?;
    let settings = store.settings()?;
    let ttl_ms = match Dur::opt_ms(&args.ttl)? {
        Some(ms) => ms,
        None => settings.default_ttl_ms,
    };
    if args.on_failure == OnFailure::Release && settings.max_attempts.is_none() {
        // Without a cap (and with no delay before a retry) a node whose command keeps
        // failing would be taken again at once, forever.
        return Err(Error::invalid(
            "--on-failure release needs an attempt cap, or a node whose command keeps failing is taken again at once, forever: run claimdag config max_attempts N (or use --on-failure failed)",
        ));
    }
    let jobs = u64::from(args.jobs);
    if settings.max_held != 0 && settings.max_held < jobs {
        return Err(Error::invalid(format!(
            "--jobs {jobs} needs {jobs} claims at once, but max_held is {}: run claimdag config max_held {jobs} (or 0 for no limit)",
            settings.max_held
        )));
    }
    // Started: the actor's name (`--actor name:NAME`) is kept.
    started();
    let opts = Options {
        workspace: workspace.to_string(),
        actor,
        role: args.role.clone(),
        ttl_ms,
        grace: Duration::from_millis(args.grace.ms()?),
        dir: handed_on(dir)?,
        json,
    };
    catch_signals();
    Worker {
        store,
        opts: &opts,
        args,
        jobs: Vec::new(),
        tally: Tally::default(),
    }
    .run()
}

struct Worker<'a> {
    store: &'a Store,
    opts: &'a Options,
    args: &'a WorkArgs,
    jobs: Vec<Job>,
    tally: Tally,
}

/// Why the loop ended.
enum End {
    NothingLeft,
    NothingReady,
    Max,
    Signal(i32),
    CannotStart(Error),
    Store(Error),
}

impl Worker<'_> {
    fn run(mut self) -> Result<i32> {
        let began = Instant::now();
        let end = self.drive();
        let end = match end {
            End::Signal(sig) => {
                self.interrupt(sig);
                End::Signal(sig)
            }
            e => {
                // Let the commands already running finish before reporting the error.
                self.finish_running();
                e
            }
        };
        self.summary(&end, began.elapsed());
        let t = &self.tally;
        Ok(match end {
            End::Signal(sig) => exit::SIGNALLED + sig,
            End::CannotStart(e) => {
                self.say(&e.to_string());
                exit::CANNOT_START
            }
            End::Store(e) => return Err(e),
            _ if t.lost > 0 => exit::LOST,
            _ if t.failed + t.released > 0 => exit::FAILED,
            _ if t.cancelled > 0 => exit::CANCELLED,
            End::NothingReady if t.taken == 0 => exit::NOTHING_READY,
            _ => exit::OK,
        })
    }

    /// Claims and runs until nothing is left, `--max` is reached, a signal or an error.
    /// It tries to claim at the start, when a command of its own ended, and when the store
    /// may have changed (a write of anyone, a lease or a schedule coming due): between
    /// those it only waits, and while commands run it reaps them every [`REAP_EVERY`].
    fn drive(&mut self) -> End {
        let wakes = match self.store.version() {
            Ok(seen) => wake::watch(self.store.clone(), seen),
            Err(e) => return End::Store(e),
        };
        let mut due = true;
        let mut said_waiting = false;
        loop {
            let sig = SIGNAL.load(Ordering::SeqCst);
            if sig != 0 {
                return End::Signal(sig);
            }
            due |= self.reap();
            self.watch_leases();
            let max_reached = self.args.max.is_some_and(|m| self.tally.taken >= m);
            let slots = self.jobs.len() < usize::from(self.args.jobs) && !max_reached;
            if slots && due {
                due = false;
                match self.claim() {
                    Ok(true) => {
                        said_waiting = false;
                        due = true;
                        continue;
                    }
                    Ok(false) => {}
                    Err(end) => return end,
                }
                if self.jobs.is_empty() {
                    if let Some(end) = self.nothing_ready(max_reached, &mut said_waiting) {
                        return end;
                    }
                }
            } else if self.jobs.is_empty() && max_reached {
                return End::Max;
            }
            due |= self.sleep(&wakes);
        }
    }

    /// Nothing was ready and no command runs: the end of the loop, or `None` to wait (and
    /// say once what for) while claims or scheduled nodes may still bring work.
    fn nothing_ready(&self, max_reached: bool, said_waiting: &mut bool) -> Option<End> {
        if max_reached {
            return Some(End::Max);
        }
        if self.args.no_wait {
            return Some(End::NothingReady);
        }
        let p = self.opts;
        match self.store.pending(&p.workspace, p.role.as_deref()) {
            Ok(pending) if pending.is_empty() => Some(End::NothingLeft),
            Ok(pending) => {
                if !*said_waiting {
                    *said_waiting = true;
                    self.say(&wake::waiting_on(self.store, &pending));
                }
                None
            }
            Err(e) => Some(End::Store(e)),
        }
    }

    /// Waits for a wake-up from the store's watcher: while commands run, only until the
    /// next reap; with none, a while (a signal is noticed within that). True when the store
    /// may have changed.
    fn sleep(&self, wakes: &Receiver<()>) -> bool {
        let tick = match self.jobs.is_empty() {
            true => IDLE_TICK,
            false => REAP_EVERY,
        };
        match wakes.recv_timeout(tick) {
            Ok(()) => true,
            Err(RecvTimeoutError::Timeout) => false,
            // The watcher never ends while the receiver lives; if it did, look again.
            Err(RecvTimeoutError::Disconnected) => {
                std::thread::sleep(tick);
                true
            }
        }
    }

    /// Claims one node and starts its command: `Ok(false)` when nothing is ready (or the
    /// store's max_held is full while commands run).
    fn claim(&mut self) -> std::result::Result<bool, End> {
        let p = self.opts;
        let resume = self.args.resume && self.tally.taken == 0;
        let pick = crate::store::ClaimNextOptions {
            role: p.role.as_deref(),
            ttl_ms: Some(p.ttl_ms),
            resume,
            ..crate::store::ClaimNextOptions::default()
        };
        let got = self.store.claim_next_with(&p.workspace, p.actor, pick);
        let grant = match got.map(|g| g.into_iter().next()) {
            Ok(Some(c)) => c,
            Ok(None) => return Ok(false),
            Err(e) if e.code() == Code::AssigneeBusy && !self.jobs.is_empty() => return Ok(false),
            Err(e) => return Err(End::Store(e)),
        };
        self.tally.taken += 1;
        let (id, generation) = (grant.id, grant.generation);
        let inputs = ClaimedNode::from(grant.clone()).inputs;
        let lease = Lease::hold_grant(self.store.clone(), grant, p.actor, p.ttl_ms);
        let summary = self
            .store
            .get(id)
            .map(|v| v.node.summary)
            .unwrap_or_default();
        let started = JobFiles::create(id, inputs, p.ttl_ms)
            .and_then(|files| self.spawn(id.hex(), generation, &summary, files));
        match started {
            Ok((child, guard, files)) => {
                self.say(&format!(
                    "{}  started     gen={generation}  {}",
                    id.short(),
                    crate::verbs::text::one_line(&summary)
                ));
                self.jobs.push(Job {
                    lease,
                    summary,
                    child,
                    guard,
                    started: Instant::now(),
                    stopping: None,
                    files,
                });
                Ok(true)
            }
            Err(e) => {
                self.tally.taken -= 1;
                let _ = lease.release();
                Err(End::CannotStart(e))
            }
        }
    }

    /// Starts CMD under its guard, in a process group of its own, the node in its
    /// environment.
    fn spawn(
        &self,
        node: String,
        generation: u64,
        summary: &str,
        files: JobFiles,
    ) -> Result<(Child, Guard, JobFiles)> {
        let p = self.opts;
        let (program, rest) = self.args.command.split_first().expect("clap requires CMD");
        let mut cmd = Command::new(program);
        cmd.args(rest)
            .env("CLAIMDAG_NODE", node)
            .env("CLAIMDAG_GEN", generation.to_string())
            .env("CLAIMDAG_SUMMARY", summary)
            .env("CLAIMDAG_ACTOR", p.actor.hex())
            .env("CLAIMDAG_DIR", &p.dir)
            .env("CLAIMDAG_WORKSPACE", &p.workspace)
            // In a group of its own the command cannot read the terminal: stdin is empty.
            .stdin(Stdio::null())
            .process_group(0);
        files.env(&mut cmd);
        if p.json {
            // stdout carries the JSON lines: the command's output goes to stderr.
            let err = std::io::stderr();
            let fd = std::os::fd::AsFd::as_fd(&err).try_clone_to_owned();
            if let Ok(fd) = fd {
                cmd.stdout(Stdio::from(fd));
            }
        }
        let cannot = |e| Error::invalid(format!("cannot run {}: {e}", program.to_string_lossy()));
        let mut guard = Guard::install(&mut cmd, p.grace).map_err(cannot)?;
        let child = cmd.spawn();
        guard.spawned();
        Ok((child.map_err(cannot)?, guard, files))
    }

    /// Reaps the commands that exited and finishes their nodes; true when a slot freed.
    fn reap(&mut self) -> bool {
        let mut freed = false;
        let mut i = 0;
        while i < self.jobs.len() {
            match self.jobs[i].child.try_wait() {
                Ok(Some(status)) => {
                    let job = self.jobs.swap_remove(i);
                    self.finish(job, status.code(), status.signal());
                    freed = true;
                }
                _ => i += 1,
            }
        }
        freed
    }

    /// A command exited: its node is completed (or released) with the granted generation,
    /// unless the lease was lost meanwhile; a command stopped on a cancel request has its
    /// node completed `cancelled`.
    fn finish(&mut self, mut job: Job, code: Option<i32>, signal: Option<i32>) {
        let (id, generation) = (job.lease.id(), job.lease.generation());
        if job.guard.left_behind() {
            self.say(&format!(
                "{}  its command left processes running: stopped them (TERM, then KILL after the grace)",
                id.short()
            ));
        }
        let ok = code == Some(0);
        let last = match (ok, self.args.on_failure) {
            (false, OnFailure::Release) => self.last_attempt(id),
            _ => None,
        };
        let lost = job.lease.is_lost() || job.stopping == Some(Stop::Lost);
        if !lost {
            // The command's last checkpoint, for whoever takes the node next.
            let text = job.files.progress(true);
            if let Some(u) = job.files.take_usage() {
                job.lease.usage(u);
            }
            if let Some(text) = text {
                let _ = job.lease.progress_now(&text);
            }
        }
        let outcome = if lost {
            drop(job.lease);
            Outcome::Lost
        } else if job.stopping == Some(Stop::Cancel) {
            self.complete_cancelled(job.lease, &job.files)
        } else if ok || self.args.on_failure == OnFailure::Failed || last.is_some() {
            self.complete(job.lease, &job.files, (code, signal), last)
        } else {
            self.release(job.lease, Outcome::Released)
        };
        self.report_job(
            id,
            generation,
            job.summary,
            job.started,
            outcome,
            (code, signal),
        );
    }

    /// Completes the node of a command that exited: `done` on exit 0, with the JSON of its
    /// output file (`failed`, the note saying why, when that file is not JSON or too long);
    /// else `failed`, the note saying how the command ended (and its output, if any).
    fn complete(
        &mut self,
        lease: Lease,
        files: &JobFiles,
        (code, signal): (Option<i32>, Option<i32>),
        last: Option<(u32, u32)>,
    ) -> Outcome {
        let id = lease.id();
        let how = match (code, signal) {
            (_, Some(s)) => format!("the command was killed by signal {s}"),
            (c, _) => format!("the command exited {}", c.unwrap_or(-1)),
        };
        let (status, how, output) = match (code == Some(0), files.output()) {
            (true, Ok(out)) => (Status::Done, None, out),
            (true, Err(why)) => {
                let how = format!("{how}, but its output file (CLAIMDAG_OUTPUT_FILE) {why}");
                self.say(&format!("{}  {how}: completed failed", id.short()));
                (Status::Failed, Some(how), None)
            }
            (false, out) => {
                let how = match last {
                    Some((n, cap)) => format!("{how} (attempt {n} of {cap}: the last)"),
                    None => how,
                };
                (Status::Failed, Some(how), out.ok().flatten())
            }
        };
        let note = how.map(|h| format!("claimdag work: {h}"));
        match complete_or_without_output(lease, status, note, output, Status::Failed) {
            Ok(Status::Done) => Outcome::Done,
            Ok(_) => Outcome::Failed,
            Err(e) => {
                self.say(&format!("{}  not completed: {e}", id.short()));
                Outcome::Lost
            }
        }
    }

    /// Completes `cancelled` the node of a command stopped on a cancel request (with what
    /// its output file holds, if that is JSON).
    fn complete_cancelled(&mut self, lease: Lease, files: &JobFiles) -> Outcome {
        let id = lease.id();
        let note = "claimdag work: the command was stopped: a cancel was requested";
        let output = files.output().ok().flatten();
        let cancelled = Status::Cancelled;
        match complete_or_without_output(lease, cancelled, Some(note.into()), output, cancelled) {
            Ok(_) => Outcome::Cancelled,
            Err(e) => {
                self.say(&format!("{}  not completed: {e}", id.short()));
                Outcome::Lost
            }
        }
    }

    /// `Some((attempts, cap))` when the claim of `id` just run was its last attempt under
    /// its attempt cap (the node's max_attempts, else the store's): a failure then ends it
    /// `failed` instead of handing it back to nobody.
    fn last_attempt(&self, id: Id) -> Option<(u32, u32)> {
        self.store.out_of_attempts(id).ok().flatten()
    }

    /// Hands `lease`'s claim back: `outcome`, or `Lost` (and said why) when refused.
    fn release(&mut self, lease: Lease, outcome: Outcome) -> Outcome {
        let id = lease.id();
        match lease.release() {
            Ok(_) => outcome,
            Err(e) => {
                self.say(&format!("{}  not released: {e}", id.short()));
                Outcome::Lost
            }
        }
    }

    /// Reports one node's end: its outcome, how its command ended, and how long it ran.
    fn report_job(
        &mut self,
        id: Id,
        generation: u64,
        summary: String,
        started: Instant,
        outcome: Outcome,
        (exit_code, signal): (Option<i32>, Option<i32>),
    ) {
        self.report(Worked {
            id,
            generation,
            summary,
            outcome,
            exit_code,
            signal,
            duration_ms: started.elapsed().as_millis() as u64,
        });
    }

    /// Stops the commands whose lease was lost, or whose holder was asked to stop (TERM,
    /// then KILL after the grace: their guards send the KILL), and hands the others'
    /// checkpoints (their progress files, when changed) to their leases.
    fn watch_leases(&mut self) {
        let mut lines = Vec::new();
        for job in self.jobs.iter_mut().filter(|j| j.stopping.is_none()) {
            let short = job.lease.id().short();
            if job.lease.is_lost() {
                let why = job
                    .lease
                    .lost_because()
                    .map(|e| e.to_string())
                    .unwrap_or_default();
                lines.push(format!(
                    "{short}  lease lost ({why}): stopping its command; the node is someone else's now"
                ));
                job.guard.signal(libc::SIGTERM);
                job.stopping = Some(Stop::Lost);
            } else if let Some(c) = job.lease.cancel_requested() {
                let by = c.by.map_or_else(|| "-".into(), |a| a.short());
                let why = c.reason.as_deref().map_or_else(|| "-".into(), one_line);
                lines.push(format!(
                    "{short}  cancel requested by {by} ({why}): stopping its command; the node will be completed cancelled"
                ));
                job.guard.signal(libc::SIGTERM);
                job.stopping = Some(Stop::Cancel);
            } else {
                let text = job.files.progress(false);
                if let Some(u) = job.files.take_usage() {
                    job.lease.usage(u);
                }
                if let Some(text) = text {
                    // The file's text is cut to the limit and stripped of NULs: it fits.
                    let _ = job.lease.progress(&text);
                }
            }
        }
        for l in lines {
            self.say(&l);
        }
    }

    /// The worker was told to stop: the signal goes to every command, which has the grace
    /// to exit (a second signal cuts it short) before KILL; then, once nothing of the
    /// commands is left, every claim is handed back.
    fn interrupt(&mut self, sig: i32) {
        if self.jobs.is_empty() {
            return;
        }
        self.say(&format!(
            "signal {sig}: stopping {} command(s), then handing their claims back",
            self.jobs.len()
        ));
        for job in &self.jobs {
            job.guard.signal(sig);
        }
        SIGNAL.store(0, Ordering::SeqCst);
        let mut cut_short = false;
        while self
            .jobs
            .iter_mut()
            .any(|j| matches!(j.child.try_wait(), Ok(None)))
        {
            if !cut_short && SIGNAL.load(Ordering::SeqCst) != 0 {
                cut_short = true;
                for job in &self.jobs {
                    job.guard.kill_now();
                }
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        for mut job in std::mem::take(&mut self.jobs) {
            let status = job.child.wait().ok();
            let (id, generation) = (job.lease.id(), job.lease.generation());
            let outcome = if job.lease.is_lost() {
                Outcome::Lost
            } else if job.stopping == Some(Stop::Cancel) {
                self.complete_cancelled(job.lease, &job.files)
            } else {
                self.release(job.lease, Outcome::Interrupted)
            };
            let how = (
                status.and_then(|s| s.code()),
                status.and_then(|s| s.signal()),
            );
            self.report_job(id, generation, job.summary, job.started, outcome, how);
        }
    }

    /// Waits for the running commands after an error stopped the claiming.
    fn finish_running(&mut self) {
        while !self.jobs.is_empty() {
            if SIGNAL.load(Ordering::SeqCst) != 0 {
                return self.interrupt(SIGNAL.load(Ordering::SeqCst));
            }
            self.reap();
            self.watch_leases();
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Counts a node's outcome and prints its line: JSON on stdout, text on stderr.
    fn report(&mut self, w: Worked) {
        let t = &mut self.tally;
        match w.outcome {
            Outcome::Done => t.done += 1,
            Outcome::Failed => t.failed += 1,
            Outcome::Released => t.released += 1,
            Outcome::Lost => t.lost += 1,
            Outcome::Interrupted => t.interrupted += 1,
            Outcome::Cancelled => t.cancelled += 1,
        }
        if self.opts.json {
            let mut out = std::io::stdout().lock();
            let _ = serde_json::to_writer(&mut out, &w);
            let _ = out.write_all(b"\n");
            let _ = out.flush();
        }
        self.say(w.text().trim_end());
    }

    /// Prints a line on stderr; a stderr nobody reads any more (a closed pipe) does not
    /// stop the work.
    fn say(&self, line: &str) {
        let _ = writeln!(std::io::stderr(), "claimdag work: {line}");
    }

    fn summary(&self, end: &End, took: Duration) {
        let t = &self.tally;
        let why = match end {
            End::NothingLeft => "nothing left that this worker could do".to_string(),
            End::NothingReady => "nothing ready (--no-wait)".to_string(),
            End::Max => format!("took --max {} node(s)", t.taken),
            End::Signal(s) => format!("stopped by signal {s}"),
            End::CannotStart(_) => "the command could not be started".to_string(),
            End::Store(e) => format!("stopped by an error: {e}"),
        };
        self.say(&format!(
            "{} node(s) in {:.1}s: {} done, {} failed, {} released, {} lost, {} interrupted, {} cancelled; {why}",
            t.taken,
            took.as_secs_f64(),
            t.done,
            t.failed,
            t.released,
            t.lost,
            t.interrupted,
            t.cancelled
        ));
    }
}

/// Completes `lease` with `status` and `output`; when the store refuses the output (too
/// large: `invalid_input`, the claim still held), completes it `instead`, without the
/// output and with the refusal in the note. Answers the status the node reached.
fn complete_or_without_output(
    mut lease: Lease,
    status: Status,
    note: Option<String>,
    output: Option<serde_json::Value>,
    instead: Status,
) -> Result<Status> {
    let had_output = output.is_some();
    match lease.try_complete(status, note.as_deref(), output) {
        Ok(()) => Ok(status),
        Err(e) if had_output && e.code() == Code::InvalidInput && !lease.is_finished() => {
            let note = format!(
                "{}; its output file (CLAIMDAG_OUTPUT_FILE) was refused: {e}",
                note.unwrap_or_else(|| "claimdag work: the command exited 0".into())
            );
            lease.try_complete(instead, Some(&note), None)?;
            Ok(instead)
        }
        Err(e) => Err(e),
    }
}
