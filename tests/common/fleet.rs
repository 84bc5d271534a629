//! A fleet of worker processes on one store, under faults, with every call recorded for the
//! history checker (`checker.rs`). Each worker is a thread that runs one `claimdag` process
//! at a time: `claim-next` (some with `--count`, some with `--wait`), `renew`, `release`,
//! `complete`, `complete-many`, stale completes, a renew after sleeping past its lease,
//! `reclaim`, `cancel` and `reopen`. A fault thread sends SIGKILL to a running process, or
//! SIGSTOP and, past the lease, SIGCONT; the caller adds the backend's own faults.

use super::checker::{Call, Event, Outcome};
use super::{command, Rng};
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::Write;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// How a fleet runs.
pub struct Plan {
    /// The store (`--dir`): a directory or a `postgres://` URL.
    pub dir: String,
    pub workers: usize,
    pub nodes: usize,
    pub run_for: Duration,
    pub ttl_ms: u64,
    /// An environment variable set on this share (percent) of the writes: a fault point.
    pub fault_env: Option<(&'static str, &'static str, u64)>,
    pub seed: u64,
}

/// What a fleet did: every call, and the faults sent.
pub struct Ran {
    pub calls: Vec<Call>,
    pub kills: usize,
    pub stops: usize,
    pub env_faults: usize,
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// The processes running now, for the fault thread.
#[derive(Default)]
struct Victims(Mutex<Vec<u32>>);

struct Worker<'a> {
    plan: &'a Plan,
    actor: String,
    rng: Rng,
    holds: Vec<(String, u64)>,
    victims: &'a Victims,
    calls: Vec<Call>,
    env_faults: usize,
    /// The last `claim-next` found nothing: reopen a node next.
    reopen_one: bool,
}

impl Worker<'_> {
    /// Runs `claimdag --dir D --json ARGS`, records the call, returns stdout on success.
    fn call(
        &mut self,
        verb: &'static str,
        args: &[String],
        nodes: Vec<(String, u64)>,
        status: Option<&str>,
        stdin: Option<Vec<u8>>,
    ) -> Option<String> {
        let mut c = command();
        c.arg("--dir").arg(&self.plan.dir).arg("--json").args(args);
        c.stdout(Stdio::piped()).stderr(Stdio::piped());
        c.stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        });
        if let Some((k, v, pct)) = self.plan.fault_env {
            if verb != "claim-next" && self.rng.below(100) < pct {
                c.env(k, v);
                self.env_faults += 1;
            }
        }
        let invoked = now_ms();
        let mut child = c.spawn().expect("spawn claimdag");
        let pid = child.id();
        self.victims.0.lock().unwrap().push(pid);
        if let Some(bytes) = stdin {
            let _ = child.stdin.take().expect("stdin").write_all(&bytes);
        }
        let out = child.wait_with_output().expect("wait");
        self.victims.0.lock().unwrap().retain(|&p| p != pid);
        let returned = now_ms();
        let outcome = match out.status.code() {
            None => Outcome::Unknown,
            Some(0) => Outcome::Ok,
            // `claim-next` found nothing ready (`--json` prints null, or [] with --count).
            Some(1) if matches!(out.stdout.trim_ascii(), b"null" | b"[]") => {
                Outcome::Refused("none".into())
            }
            Some(_) => {
                let err: Value = serde_json::from_slice(&out.stderr).unwrap_or(Value::Null);
                match err["error"]["code"].as_str() {
                    Some("io") | None => {
                        if std::env::var_os("FLEET_DEBUG").is_some() {
                            eprintln!(
                                "unknown: {verb} {args:?} {:?} {}",
                                out.status,
                                String::from_utf8_lossy(&out.stderr)
                            );
                        }
                        Outcome::Unknown
                    }
                    Some(code) => Outcome::Refused(code.to_string()),
                }
            }
        };
        let ok = outcome == Outcome::Ok;
        self.calls.push(Call {
            actor: self.actor.clone(),
            verb,
            nodes,
            status: status.map(str::to_string),
            ttl_ms: self.plan.ttl_ms,
            invoked,
            returned,
            outcome,
        });
        ok.then(|| String::from_utf8_lossy(&out.stdout).to_string())
    }

    fn ttl(&self) -> String {
        format!("{}ms", self.plan.ttl_ms)
    }

    /// `claim-next`, one node or several, waiting or not; the grants join the holds.
    fn claim(&mut self) {
        let mut args: Vec<String> = vec![
            "claim-next".into(),
            "--assignee".into(),
            self.actor.clone(),
            "--ttl".into(),
        ];
        args.push(self.ttl());
        let count = 1 + self.rng.below(3);
        if count > 1 {
            args.extend(["--count".into(), count.to_string()]);
        }
        if self.rng.below(4) == 0 {
            args.extend(["--wait".into(), "300ms".into()]);
        }
        let Some(out) = self.call("claim-next", &args, Vec::new(), None, None) else {
            // Nothing ready (or the call failed): put a finished node back to work.
            self.reopen_one = true;
            return;
        };
        let v: Value = serde_json::from_str(&out).unwrap_or(Value::Null);
        let picked: Vec<&Value> = match &v {
            Value::Array(a) => a.iter().collect(),
            Value::Object(_) => vec![&v],
            _ => Vec::new(),
        };
        let grants: Vec<(String, u64)> = picked
            .iter()
            .filter_map(|p| Some((p["id"].as_str()?.to_string(), p["generation"].as_u64()?)))
            .collect();
        if let Some(last) = self.calls.last_mut() {
            last.nodes = grants.clone();
        }
        self.holds.extend(grants);
    }

    /// One step on a held node: renew, complete, release, a stale complete, or a renew after
    /// sleeping past the lease (a stalled worker waking up).
    fn act_on_hold(&mut self) {
        let i = self.rng.below(self.holds.len() as u64) as usize;
        let (node, gen) = self.holds[i].clone();
        let gs = gen.to_string();
        let me = self.actor.clone();
        let roll = self.rng.below(100);
        let words = |w: &[&str]| -> Vec<String> { w.iter().map(|s| s.to_string()).collect() };
        if roll < 25 {
            self.renew(i);
        } else if roll < 55 {
            let status = if self.rng.below(4) == 0 {
                "failed"
            } else {
                "done"
            };
            let args = words(&["complete", &node, "--status", status, "--gen", &gs]);
            self.call("complete", &args, vec![(node, gen)], Some(status), None);
            self.holds.remove(i);
        } else if roll < 65 {
            self.complete_many();
        } else if roll < 78 {
            let args = words(&["release", &node, "--actor", &me, "--gen", &gs]);
            self.call("release", &args, vec![(node, gen)], None, None);
            self.holds.remove(i);
        } else if roll < 88 {
            let stale = (gen - 1).to_string();
            let args = words(&["complete", &node, "--status", "done", "--gen", &stale]);
            self.call("complete", &args, vec![(node, gen - 1)], Some("done"), None);
        } else {
            std::thread::sleep(Duration::from_millis(self.plan.ttl_ms + 200));
            self.renew(i);
        }
    }

    /// Renews hold `i`; a refused or unknown renewal drops it.
    fn renew(&mut self, i: usize) {
        let (node, gen) = self.holds[i].clone();
        let args: Vec<String> = ["renew", &node, "--actor", &self.actor, "--gen"]
            .iter()
            .map(|s| s.to_string())
            .chain([gen.to_string(), "--ttl".into(), self.ttl()])
            .collect();
        if self
            .call("renew", &args, vec![(node, gen)], None, None)
            .is_none()
        {
            self.holds.remove(i);
        }
    }

    /// Completes every held node in one write.
    fn complete_many(&mut self) {
        let holds = std::mem::take(&mut self.holds);
        let body: Vec<Value> = holds
            .iter()
            .map(|(n, g)| serde_json::json!({"node": n, "status": "done", "gen": g}))
            .collect();
        let bytes = serde_json::to_vec(&body).expect("json");
        let args = vec!["complete-many".to_string(), "-".to_string()];
        self.call("complete", &args, holds, Some("done"), Some(bytes));
    }

    /// Something anyone does: reclaim, cancel a node, or reopen a finished one.
    fn housekeeping(&mut self, ids: &[String]) {
        let node = ids[self.rng.below(ids.len() as u64) as usize].clone();
        let pick = if std::mem::take(&mut self.reopen_one) {
            2
        } else {
            self.rng.below(3)
        };
        let args: Vec<String> = match pick {
            0 => vec!["reclaim".into()],
            1 => vec!["cancel".into(), node],
            _ => vec!["reopen".into(), node],
        };
        let verb = match args[0].as_str() {
            "reclaim" => "reclaim",
            "cancel" => "cancel",
            _ => "reopen",
        };
        self.call(verb, &args, Vec::new(), None, None);
    }

    fn work(mut self, ids: &[String], until: Instant) -> (Vec<Call>, usize) {
        while Instant::now() < until {
            let roll = self.rng.below(100);
            if roll < 12 || self.reopen_one {
                self.housekeeping(ids);
            } else if self.holds.is_empty() || roll < 35 {
                self.claim();
            } else {
                self.act_on_hold();
            }
        }
        (self.calls, self.env_faults)
    }
}

/// Sends SIGKILL to a running process, or SIGSTOP and SIGCONT past the lease, until `stop`.
fn faults(victims: &Victims, stop: &AtomicBool, ttl_ms: u64, seed: u64) -> (usize, usize) {
    let mut rng = Rng::seeded(seed);
    let (kills, stops) = (AtomicUsize::new(0), AtomicUsize::new(0));
    std::thread::scope(|scope| {
        while !stop.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(40 + rng.below(200)));
            let pid = {
                let v = victims.0.lock().unwrap();
                if v.is_empty() {
                    continue;
                }
                v[rng.below(v.len() as u64) as usize]
            };
            if rng.below(4) != 0 {
                // SAFETY: kill(2) on a child this test spawned and still waits for.
                if unsafe { libc::kill(pid as i32, libc::SIGKILL) } == 0 {
                    kills.fetch_add(1, Ordering::SeqCst);
                }
            } else if unsafe { libc::kill(pid as i32, libc::SIGSTOP) } == 0 {
                stops.fetch_add(1, Ordering::SeqCst);
                let pause = Duration::from_millis(ttl_ms + 300);
                scope.spawn(move || {
                    std::thread::sleep(pause);
                    // SAFETY: as above; the child may have been killed since.
                    unsafe { libc::kill(pid as i32, libc::SIGCONT) };
                });
            }
        }
    });
    (kills.into_inner(), stops.into_inner())
}

/// `claimdag --dir DIR ARGS`, which must succeed; its output, trimmed.
pub fn ok(dir: &str, args: &[&str]) -> String {
    let out = command()
        .arg("--dir")
        .arg(dir)
        .args(args)
        .output()
        .expect("run claimdag");
    assert!(
        out.status.success(),
        "{args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// Runs the fleet of `plan` on its store (made with `plan.nodes` nodes first), with
/// `backend_faults` run beside it until the workers stop.
pub fn run(plan: &Plan, backend_faults: &(dyn Fn(&AtomicBool) + Sync)) -> Ran {
    ok(&plan.dir, &["config", "max_held", "0"]);
    let ids: Vec<String> = (0..plan.nodes)
        .map(|i| {
            ok(
                &plan.dir,
                &["upsert", "--summary", &format!("fleet node {i}")],
            )
        })
        .collect();
    let victims = Victims::default();
    let stop = AtomicBool::new(false);
    let until = Instant::now() + plan.run_for;
    let mut rng = Rng::seeded(plan.seed);
    let seeds: Vec<u64> = (0..=plan.workers).map(|_| rng.next()).collect();
    std::thread::scope(|scope| {
        let fault = scope.spawn(|| faults(&victims, &stop, plan.ttl_ms, seeds[0]));
        let backend = scope.spawn(|| backend_faults(&stop));
        let handles: Vec<_> = (0..plan.workers)
            .map(|w| {
                let worker = Worker {
                    plan,
                    actor: super::actor(100 + w as u64),
                    rng: Rng::seeded(seeds[w + 1]),
                    holds: Vec::new(),
                    victims: &victims,
                    calls: Vec::new(),
                    env_faults: 0,
                    reopen_one: false,
                };
                let ids = &ids;
                scope.spawn(move || worker.work(ids, until))
            })
            .collect();
        let done: Vec<(Vec<Call>, usize)> = handles
            .into_iter()
            .map(|h| h.join().expect("worker"))
            .collect();
        stop.store(true, Ordering::SeqCst);
        let (kills, stops) = fault.join().expect("faults");
        backend.join().expect("backend faults");
        let env_faults = done.iter().map(|d| d.1).sum();
        Ran {
            calls: done.into_iter().flat_map(|d| d.0).collect(),
            kills,
            stops,
            env_faults,
        }
    })
}

/// The store's history and each node's final generation, after a run; asserts `check`.
pub fn read_back(dir: &str) -> (Vec<Event>, BTreeMap<String, u64>) {
    let checked = ok(dir, &["check"]);
    assert!(checked.starts_with("ok"), "check after the run: {checked}");
    let log: Value = serde_json::from_str(&ok(dir, &["--json", "log"])).expect("log json");
    let events = log
        .as_array()
        .expect("log")
        .iter()
        .map(Event::from_json)
        .collect();
    let list: Value = serde_json::from_str(&ok(dir, &["--json", "list", "--all"])).expect("list");
    let finals = list
        .as_array()
        .expect("list")
        .iter()
        .filter_map(|n| Some((n["id"].as_str()?.to_string(), n["generation"].as_u64()?)))
        .collect();
    (events, finals)
}

/// Runs `plan` with `backend_faults`, reads the store back and checks the whole history.
pub fn run_and_check(
    plan: &Plan,
    backend_faults: &(dyn Fn(&std::sync::atomic::AtomicBool) + Sync),
    what: &str,
) {
    let ran = run(plan, backend_faults);
    let (history, finals) = read_back(&plan.dir);
    let count = |f: &dyn Fn(&Outcome) -> bool| ran.calls.iter().filter(|c| f(&c.outcome)).count();
    let ok = count(&|o| *o == Outcome::Ok);
    let refused = count(&|o| matches!(o, Outcome::Refused(_)));
    let unknown = count(&|o| *o == Outcome::Unknown);
    eprintln!(
        "{what}: {} calls ({ok} ok, {refused} refused, {unknown} unknown), {} events, \
         {} SIGKILLs, {} SIGSTOPs past the lease, {} injected faults",
        ran.calls.len(),
        history.len(),
        ran.kills,
        ran.stops,
        ran.env_faults
    );
    let mut by: BTreeMap<String, usize> = BTreeMap::new();
    for c in &ran.calls {
        let o = match &c.outcome {
            Outcome::Ok => "ok".to_string(),
            Outcome::Refused(code) => code.clone(),
            Outcome::Unknown => "unknown".to_string(),
        };
        *by.entry(format!("{} {o}", c.verb)).or_default() += 1;
    }
    eprintln!("{what}: calls by verb and outcome: {by:?}");
    let anomalies = super::checker::check(&ran.calls, &history, &finals);
    assert!(
        anomalies.is_empty(),
        "{what}: {} anomalies: {anomalies:#?}",
        anomalies.len()
    );
    assert!(
        ok > 20 && refused > 0 && unknown > 0,
        "{what}: the run exercised too little"
    );
}
