//! A checker over a whole run: what each call asked and how it ended (ok, refused with its
//! code, or unknown: killed, or an I/O error whose write may have landed), and the store's
//! history afterwards. It knows nothing of how the run was made; `fleet.rs` makes runs on
//! either backend under faults, and the checker's own tests plant one anomaly of each kind
//! in a made-up history.

use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::fmt;

/// How a call ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Ok,
    Refused(String),
    /// Killed, or an `io` error: the write may have landed or not.
    Unknown,
}

/// One call of a run. Times are the wall clock's milliseconds, as the history's `at`.
#[derive(Debug, Clone)]
pub struct Call {
    pub actor: String,
    /// `claim-next`, `renew`, `release`, `complete`, `reclaim`, `cancel`, `reopen`.
    pub verb: &'static str,
    /// The (node, generation) pairs the call named, or for `claim-next` those it was granted.
    pub nodes: Vec<(String, u64)>,
    /// The status a `complete` asked for.
    pub status: Option<String>,
    pub ttl_ms: u64,
    pub invoked: u64,
    pub returned: u64,
    pub outcome: Outcome,
}

/// One event of the store's history (`log --json`).
#[derive(Debug, Clone)]
pub struct Event {
    pub seq: u64,
    pub at: u64,
    pub verb: String,
    pub node: String,
    pub actor: Option<String>,
    pub generation: u64,
    pub detail: Option<String>,
}

impl Event {
    pub fn from_json(e: &Value) -> Event {
        Event {
            seq: e["seq"].as_u64().unwrap_or(0),
            at: e["at"].as_u64().unwrap_or(0),
            verb: e["verb"].as_str().unwrap_or_default().to_string(),
            node: e["node"].as_str().unwrap_or_default().to_string(),
            actor: e["actor"].as_str().map(str::to_string),
            generation: e["generation"].as_u64().unwrap_or(0),
            detail: e["detail"].as_str().map(str::to_string),
        }
    }
}

/// What the checker found wrong.
#[derive(Debug, Clone, PartialEq)]
pub enum Anomaly {
    /// A (node, generation) granted twice.
    GrantedTwice { node: String, generation: u64 },
    /// A generation that did not move by one at a grant or hand-back (or moved elsewhere).
    GenerationJump {
        node: String,
        from: u64,
        to: u64,
        verb: String,
    },
    /// An acknowledged write whose event is not in the history.
    AcknowledgedMissing {
        verb: String,
        node: String,
        generation: u64,
    },
    /// An event no acknowledged or unknown call explains (`refused` when a refused call
    /// asked for exactly it).
    Unexplained {
        verb: String,
        node: String,
        generation: u64,
        refused: bool,
    },
    /// A fenced write accepted although its lease had certainly run out when it was made.
    AcceptedAfterLease {
        verb: String,
        node: String,
        generation: u64,
        late_ms: u64,
    },
    /// A node completed twice with no reopen between.
    CompletedTwice { node: String },
    /// A node granted more claims since its last `retry` than the attempt cap allows: a
    /// parked node was granted.
    ParkedGranted { node: String, generation: u64 },
    /// A node the run claimed whose final generation is below the one granted.
    FinalStateBehind {
        node: String,
        granted: u64,
        shown: u64,
    },
}

impl fmt::Display for Anomaly {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self:?}")
    }
}

/// The clocks of the calls and of the store are one machine's; this much slack covers the
/// time between a process's start and its write.
pub const SLACK_MS: u64 = 100;

/// Everything wrong with a run: its calls, the store's history, and each node's final
/// generation (`list --all`).
pub fn check(calls: &[Call], history: &[Event], finals: &BTreeMap<String, u64>) -> Vec<Anomaly> {
    let mut out = Vec::new();
    granted_once(calls, history, &mut out);
    generations_step(history, &mut out);
    acknowledged_are_there(calls, history, finals, &mut out);
    nothing_unexplained(calls, history, &mut out);
    no_write_after_its_lease(calls, &mut out);
    completed_once(history, &mut out);
    out
}

/// With an attempt cap of `cap` claims, every grant past the cap since the node's last
/// `retry` (which gives fresh attempts; a reopen does not) is a parked node granted.
pub fn parked_never_granted(history: &[Event], cap: u64) -> Vec<Anomaly> {
    let mut claims: HashMap<&str, u64> = HashMap::new();
    let mut out = Vec::new();
    for e in history {
        match e.verb.as_str() {
            "claim" => {
                let k = claims.entry(&e.node).or_default();
                *k += 1;
                if *k > cap {
                    out.push(Anomaly::ParkedGranted {
                        node: e.node.clone(),
                        generation: e.generation,
                    });
                }
            }
            "retry" => {
                claims.insert(&e.node, 0);
            }
            _ => {}
        }
    }
    out
}

/// The grants of acknowledged `claim-next` calls.
fn grants(calls: &[Call]) -> impl Iterator<Item = (&Call, &(String, u64))> {
    calls
        .iter()
        .filter(|c| c.verb == "claim-next" && c.outcome == Outcome::Ok)
        .flat_map(|c| c.nodes.iter().map(move |n| (c, n)))
}

fn granted_once(calls: &[Call], history: &[Event], out: &mut Vec<Anomaly>) {
    let mut seen: HashMap<(String, u64), usize> = HashMap::new();
    for e in history.iter().filter(|e| e.verb == "claim") {
        *seen.entry((e.node.clone(), e.generation)).or_default() += 1;
    }
    let mut acked: HashMap<(String, u64), usize> = HashMap::new();
    for (_, n) in grants(calls) {
        *acked.entry(n.clone()).or_default() += 1;
    }
    let mut twice: Vec<&(String, u64)> = seen
        .iter()
        .chain(acked.iter())
        .filter(|(_, &k)| k > 1)
        .map(|(n, _)| n)
        .collect();
    twice.sort();
    twice.dedup();
    for (node, generation) in twice {
        out.push(Anomaly::GrantedTwice {
            node: node.clone(),
            generation: *generation,
        });
    }
}

fn generations_step(history: &[Event], out: &mut Vec<Anomaly>) {
    let mut at: HashMap<&str, u64> = HashMap::new();
    for e in history {
        let moves = matches!(
            e.verb.as_str(),
            "claim" | "release" | "expire" | "reclaim" | "reopen" | "retry"
        ) || (e.verb == "settle" && e.detail.as_deref() == Some("todo"));
        let want = match (e.verb.as_str(), at.get(e.node.as_str())) {
            ("create", None) => 1,
            (_, None) => e.generation, // created before the run's history began (archived)
            (_, Some(&g)) if moves => g + 1,
            (_, Some(&g)) => g,
        };
        if e.generation != want {
            out.push(Anomaly::GenerationJump {
                node: e.node.clone(),
                from: at.get(e.node.as_str()).copied().unwrap_or(0),
                to: e.generation,
                verb: e.verb.clone(),
            });
        }
        at.insert(&e.node, e.generation);
    }
}

/// The event an acknowledged or unknown call leaves: (verb, node, generation, actor).
fn expected(c: &Call) -> Vec<(&'static str, String, u64, Option<String>)> {
    let a = Some(c.actor.clone());
    c.nodes
        .iter()
        .filter_map(|(n, g)| match c.verb {
            "claim-next" => Some(("claim", n.clone(), *g, a.clone())),
            "renew" => Some(("renew", n.clone(), *g, a.clone())),
            "release" => Some(("release", n.clone(), g + 1, a.clone())),
            "complete" => Some(("complete", n.clone(), *g, None)),
            // A person's decision lands at the generation the page showed, or not at all.
            "approve" => Some(("approve", n.clone(), *g, None)),
            "reject" => Some(("reject", n.clone(), *g, None)),
            _ => None,
        })
        .collect()
}

fn key(e: &Event) -> (String, String, u64) {
    (e.verb.clone(), e.node.clone(), e.generation)
}

fn acknowledged_are_there(
    calls: &[Call],
    history: &[Event],
    finals: &BTreeMap<String, u64>,
    out: &mut Vec<Anomaly>,
) {
    let mut events: HashMap<(String, String, u64), Vec<&Event>> = HashMap::new();
    for e in history {
        events.entry(key(e)).or_default().push(e);
    }
    for c in calls.iter().filter(|c| c.outcome == Outcome::Ok) {
        for (verb, node, generation, actor) in expected(c) {
            let k = (verb.to_string(), node.clone(), generation);
            let found = events.get(&k).is_some_and(|es| {
                es.iter().any(|e| actor.is_none() || e.actor == actor)
                    && (verb != "complete" || es.iter().any(|e| e.detail == c.status))
            });
            if !found {
                out.push(Anomaly::AcknowledgedMissing {
                    verb: verb.into(),
                    node,
                    generation,
                });
            }
        }
    }
    for (_, (node, granted)) in grants(calls) {
        let shown = finals.get(node).copied().unwrap_or(0);
        if shown < *granted {
            out.push(Anomaly::FinalStateBehind {
                node: node.clone(),
                granted: *granted,
                shown,
            });
        }
    }
}

fn nothing_unexplained(calls: &[Call], history: &[Event], out: &mut Vec<Anomaly>) {
    let actors: Vec<&str> = calls.iter().map(|c| c.actor.as_str()).collect();
    let mut may: HashMap<(String, String, u64), usize> = HashMap::new();
    let mut refused: HashMap<(String, String, u64), usize> = HashMap::new();
    for c in calls {
        let into = if matches!(c.outcome, Outcome::Refused(_)) {
            &mut refused
        } else {
            &mut may
        };
        for (verb, node, g, _) in expected(c) {
            *into.entry((verb.to_string(), node, g)).or_default() += 1;
        }
    }
    for e in history {
        let ours = e.actor.as_deref().is_some_and(|a| actors.contains(&a));
        if !matches!(e.verb.as_str(), "claim" | "renew" | "release") || !ours {
            continue;
        }
        let k = key(e);
        match may.get_mut(&k) {
            Some(n) if *n > 0 => *n -= 1,
            _ if e.verb == "claim" && unknown_claim_by(calls, e) => {}
            _ => out.push(Anomaly::Unexplained {
                verb: e.verb.clone(),
                node: e.node.clone(),
                generation: e.generation,
                refused: refused.contains_key(&k),
            }),
        }
    }
}

/// A `claim-next` of this actor whose outcome is unknown (its grants are not known) and
/// that was running when the event was written.
fn unknown_claim_by(calls: &[Call], e: &Event) -> bool {
    calls.iter().any(|c| {
        c.verb == "claim-next"
            && c.outcome == Outcome::Unknown
            && e.actor.as_deref() == Some(c.actor.as_str())
            && c.invoked <= e.at + SLACK_MS
            && e.at <= c.returned + SLACK_MS
    })
}

fn no_write_after_its_lease(calls: &[Call], out: &mut Vec<Anomaly>) {
    for c in calls.iter().filter(|c| c.outcome == Outcome::Ok) {
        if !matches!(c.verb, "renew" | "release" | "complete") {
            continue;
        }
        for (node, g) in &c.nodes {
            // The latest the lease at (node, g) can have run until, from the calls that
            // granted or renewed it before this one began (None: no call is known to have).
            let until = calls
                .iter()
                .filter(|e| e.invoked < c.invoked && !matches!(e.outcome, Outcome::Refused(_)))
                .filter(|e| matches!(e.verb, "claim-next" | "renew"))
                .filter(|e| e.nodes.iter().any(|(n, eg)| n == node && eg == g))
                .map(|e| e.returned + e.ttl_ms)
                .max();
            let Some(until) = until else { continue };
            if c.invoked > until + SLACK_MS {
                out.push(Anomaly::AcceptedAfterLease {
                    verb: c.verb.into(),
                    node: node.clone(),
                    generation: *g,
                    late_ms: c.invoked - until,
                });
            }
        }
    }
}

fn completed_once(history: &[Event], out: &mut Vec<Anomaly>) {
    let mut done: HashMap<&str, bool> = HashMap::new();
    for e in history {
        match e.verb.as_str() {
            "complete" | "cancel" | "approve" | "reject"
                if done.insert(&e.node, true) == Some(true) =>
            {
                out.push(Anomaly::CompletedTwice {
                    node: e.node.clone(),
                });
            }
            "reopen" => {
                done.insert(&e.node, false);
            }
            "settle" => {
                done.insert(&e.node, e.detail.as_deref() != Some("todo"));
            }
            _ => {}
        }
    }
}
