//! The checks of the module comment, on the store after the workers stopped, one function
//! each.

use super::history::{events, replay, take, Ev, Replayed};
use super::{Killed, Outcome, Span, Success};
use crate::common::Store;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// Every node the store shows, keyed by id (`list --all --json`).
type Nodes = BTreeMap<String, Value>;

/// Every grant that returned success, by `(id, generation)`: its actor and its span.
type Grants = HashMap<(String, u64), (String, Span)>;

/// The checks of the module comment, on the store after the workers stopped.
pub(super) fn verify(s: &Store, outcomes: &[Outcome]) {
    let r = s.run(&["check"]);
    assert_eq!(r.code, Some(0), "check: {}{}", r.stdout, r.stderr);
    assert!(r.stdout.starts_with("ok"), "check: {}", r.stdout);
    let log = events(s);
    let all = s.all();
    report_sizes(s, &log, &all);
    history_ends_in_the_shown_state(&log, &all);
    let grants = grants_are_unique(outcomes);
    no_fenced_call_after_a_newer_grant(outcomes, &grants);
    let used = every_success_is_there(&log, &all, outcomes);
    nothing_that_failed_is_there(&log, &used, outcomes);
    no_link_refused_as_a_cycle_is_there(&all, outcomes);
}

/// Prints the size of the history, the store and its journal, and whether a compaction ran.
fn report_sizes(s: &Store, log: &[Ev], all: &Nodes) {
    let compactions = std::fs::metadata(s.dir.join("history.jsonl")).is_ok();
    let journal = crate::common::journal_used_len(&s.dir);
    eprintln!(
        "  {} events, {} nodes, journal {journal} bytes, history.jsonl {}",
        log.len(),
        all.len(),
        if compactions {
            "written (compaction ran)"
        } else {
            "not written"
        }
    );
}

/// The history is a legal sequence that ends in the state the store shows.
fn history_ends_in_the_shown_state(log: &[Ev], all: &Nodes) {
    let replayed = replay(log);
    for (id, n) in all {
        let r = replayed
            .get(id)
            .unwrap_or_else(|| panic!("{id} is in the store but has no history"));
        let shown = Replayed {
            status: n["status"].as_str().expect("status").to_string(),
            gen: n["generation"].as_u64().expect("generation"),
            holder: n["holder"].as_str().map(str::to_string),
            archived: n["archived"].as_bool().expect("archived"),
        };
        assert_eq!(&shown, r, "{id}: the store and its replayed history differ");
    }
    assert_eq!(
        replayed.len(),
        all.len(),
        "nodes in the history but not the store"
    );
}

/// Every grant is unique, and each is in the history under its actor.
fn grants_are_unique(outcomes: &[Outcome]) -> Grants {
    let mut grants: Grants = HashMap::new();
    for o in outcomes {
        for (x, span) in &o.successes {
            if let Success::Grant { id, gen } = x {
                if let Some((other, _)) = grants.insert((id.clone(), *gen), (o.me.clone(), *span)) {
                    panic!(
                        "{id} at generation {gen} was granted to {other} and to {}",
                        o.me
                    );
                }
            }
        }
    }
    grants
}

/// A fenced call at generation g that returned success started before any grant of a
/// later generation of that node had returned to its worker.
fn no_fenced_call_after_a_newer_grant(outcomes: &[Outcome], grants: &Grants) {
    for o in outcomes {
        for (x, span) in &o.successes {
            let (id, g) = match x {
                Success::Grant { id, gen }
                | Success::Renew { id, gen: Some(gen) }
                | Success::Complete { id, gen, .. } => (id, *gen),
                Success::Release { id, gen } => (id, gen - 1),
                _ => continue,
            };
            for ((gid, gg), (who, gspan)) in grants {
                if gid == id && *gg > g {
                    assert!(
                        span.start < gspan.end,
                        "{} used {id} at generation {g} after {who} had been granted \
                         generation {gg}: {x:?}",
                        o.me
                    );
                }
            }
        }
    }
}

/// Every success is there: match each to an event of its own. Returns which events were
/// matched.
fn every_success_is_there(log: &[Ev], all: &Nodes, outcomes: &[Outcome]) -> Vec<bool> {
    let mut used = vec![false; log.len()];
    for o in outcomes {
        for (x, _) in &o.successes {
            let found = event_of(x, &o.me, log, &mut used, all);
            assert!(
                found.is_some(),
                "{}: a successful write is missing: {x:?}",
                o.me
            );
        }
    }
    used
}

/// The event of `log` that success `x` of actor `me` wrote, taken from those not `used`
/// yet; `Some(0)` for a success whose effect is checked in the store (or counted later).
fn event_of(x: &Success, me: &str, log: &[Ev], used: &mut [bool], all: &Nodes) -> Option<usize> {
    let me = Some(me);
    let is = |e: &Ev, verb: &str, id: &str| e.verb == verb && e.node.as_deref() == Some(id);
    match x {
        Success::Upsert(id) => all.contains_key(id).then_some(0),
        Success::Link { p, c } => {
            // A link that was there already wrote no event: take one if there is.
            take(log, used, |e| {
                is(e, "link", c) && e.detail.as_deref().is_some_and(|d| d.ends_with(p.as_str()))
            });
            let n = &all[c];
            let has = |k: &str| {
                n[k].as_array()
                    .is_some_and(|v| v.iter().any(|d| d.as_str() == Some(p.as_str())))
            };
            (has("deps") || has("soft_deps")).then_some(0)
        }
        Success::Grant { id, gen } => take(log, used, |e| {
            is(e, "claim", id) && e.gen == Some(*gen) && e.actor.as_deref() == me
        }),
        Success::Renew { id, gen: Some(g) } => take(log, used, |e| {
            is(e, "renew", id) && e.gen == Some(*g) && e.actor.as_deref() == me
        }),
        Success::Renew { .. } => Some(0), // counted in renews_are_counted
        Success::Release { id, gen } => take(log, used, |e| {
            is(e, "release", id) && e.gen == Some(*gen) && e.actor.as_deref() == me
        }),
        Success::Complete { id, gen, status } => take(log, used, |e| {
            is(e, "complete", id)
                && e.gen == Some(*gen)
                && e.actor.as_deref() == me
                && e.detail.as_deref() == Some(status.as_str())
        }),
        // Without --actor a cancel also ends a live claim at that generation; the
        // event then names the holder it ended.
        Success::Cancel { id, gen } => take(log, used, |e| {
            is(e, "complete", id) && e.gen == Some(*gen) && e.detail.as_deref() == Some("cancelled")
        }),
        Success::HandedBack { id, gen } => take(log, used, |e| {
            (is(e, "reclaim", id) || is(e, "expire", id)) && e.gen == Some(*gen)
        }),
        Success::Reopen { id, gen } => {
            take(log, used, |e| is(e, "reopen", id) && e.gen == Some(*gen))
        }
        // Archiving an archived node writes nothing: its earlier event stays.
        Success::Archive(id) => take(log, used, |e| is(e, "archive", id))
            .or_else(|| log.iter().position(|e| is(e, "archive", id))),
        Success::Unarchive(id) => take(log, used, |e| is(e, "unarchive", id)),
    }
}

/// Nothing that failed is: every event a worker's command could have written and no
/// success explains (no event `used`) is explained by a killed command of that worker, each
/// used once.
fn nothing_that_failed_is_there(log: &[Ev], used: &[bool], outcomes: &[Outcome]) {
    let mut killings = Killings::new(outcomes);
    // Exact matches first (pass 0), then killed commands that name less (pass 1, 2). A
    // reclaim writes all its hand-backs in one record: the events of one record count once.
    let mut reclaims: BTreeSet<u64> = (0..log.len())
        .filter(|&i| used[i] && log[i].verb == "reclaim")
        .map(|i| log[i].seq)
        .collect();
    let mut unexplained: Vec<usize> = (0..log.len()).filter(|&i| !used[i]).collect();
    renews_are_counted(log, &mut unexplained, outcomes);
    for pass in 0..3u8 {
        unexplained.retain(|&i| !killings.explain(&log[i], pass, &mut reclaims));
    }
    if let Some(&i) = unexplained.first() {
        report_unexplained(log, &log[i], unexplained.len(), outcomes);
    }
}

/// Renews without --gen that returned success wrote an event of some generation of the
/// node: whether the renew events left of one actor and node are explained is a count.
/// Takes every renew event out of `unexplained` and checks each actor and node's by count.
fn renews_are_counted(log: &[Ev], unexplained: &mut Vec<usize>, outcomes: &[Outcome]) {
    let mut groups: BTreeMap<(String, String), Vec<u64>> = BTreeMap::new();
    unexplained.retain(|&i| {
        let e = &log[i];
        if e.verb != "renew" {
            return true;
        }
        let key = (
            e.actor.clone().unwrap_or_default(),
            e.node.clone().unwrap_or_default(),
        );
        groups.entry(key).or_default().push(e.gen.unwrap_or(0));
        false
    });
    for o in outcomes {
        for (x, _) in &o.successes {
            if let Success::Renew { id, gen: None } = x {
                groups.entry((o.me.clone(), id.clone())).or_default();
            }
        }
    }
    for ((a, id), gens) in &groups {
        renews_of_one_node_are_explained(a, id, gens, outcomes);
    }
}

/// With n renew events of actor `a` on node `id` left (at generations `gens`), s renews
/// without --gen that returned success, f killed renews without --gen and, per generation,
/// the events left there and the killed renews at it: every success needs an event
/// (s <= n) and every event an explanation (n - sum of min(events at g, killed at g)
/// <= s + f).
fn renews_of_one_node_are_explained(a: &str, id: &str, gens: &[u64], outcomes: &[Outcome]) {
    let o = outcomes
        .iter()
        .find(|o| o.me == a)
        .expect("a renew by an actor no worker has");
    let free = o
        .successes
        .iter()
        .filter(|(x, _)| matches!(x, Success::Renew { id: i, gen: None } if i == id))
        .count();
    let killed: Vec<Option<u64>> = o
        .killed
        .iter()
        .filter(|k| k.verb == "renew" && k.node.as_deref() == Some(id))
        .map(|k| k.gen)
        .collect();
    let killed_free = killed.iter().filter(|g| g.is_none()).count();
    let mut covered = 0;
    for g in gens.iter().collect::<BTreeSet<_>>() {
        let here = gens.iter().filter(|x| *x == g).count();
        let k = killed.iter().filter(|x| **x == Some(*g)).count();
        covered += here.min(k);
    }
    assert!(
        free <= gens.len(),
        "{a}: {free} renews of {id} without --gen returned success, {} events left for them",
        gens.len()
    );
    assert!(
        gens.len() - covered <= free + killed_free,
        "{a}: renew events of {id} at generations {gens:?} that no success and no killed \
         command explains (a refused renew wrote?)"
    );
}

/// The killed commands of every worker, each of which may explain one event.
struct Killings<'a> {
    outcomes: &'a [Outcome],
    /// The worker of each actor.
    owner: HashMap<&'a str, usize>,
    /// Per worker, the killed commands that explained an event already.
    spent: Vec<Vec<bool>>,
}

impl<'a> Killings<'a> {
    fn new(outcomes: &'a [Outcome]) -> Killings<'a> {
        Killings {
            outcomes,
            owner: outcomes
                .iter()
                .enumerate()
                .map(|(i, o)| (o.me.as_str(), i))
                .collect(),
            spent: outcomes
                .iter()
                .map(|o| vec![false; o.killed.len()])
                .collect(),
        }
    }

    /// Spends the first unspent killed command of worker `w` that `ok` ranks at `pass`.
    fn spend(&mut self, w: usize, pass: u8, ok: &dyn Fn(&Killed) -> Option<u8>) -> bool {
        let killed = &self.outcomes[w].killed;
        let k = (0..killed.len()).find(|&k| !self.spent[w][k] && ok(&killed[k]) == Some(pass));
        if let Some(k) = k {
            self.spent[w][k] = true;
        }
        k.is_some()
    }

    /// Whether a killed command that `pass` accepts explains event `e` (spending it). The
    /// events of a reclaim whose record is in `reclaims` are explained already.
    fn explain(&mut self, e: &Ev, pass: u8, reclaims: &mut BTreeSet<u64>) -> bool {
        let node = e.node.as_deref();
        let on = |k: &Killed| k.node.as_deref() == node;
        let worker = e.actor.as_deref().and_then(|a| self.owner.get(a).copied());
        let n = self.outcomes.len();
        match e.verb.as_str() {
            "claim" => {
                let w = worker.expect("a grant to an actor no worker has");
                self.spend(w, pass, &|k| match (k.verb, k.gen) {
                    ("claim", Some(g)) if on(k) && e.gen == Some(g + 1) => Some(0),
                    ("claim", None) if on(k) => Some(1),
                    ("claim-next", _) => Some(2),
                    _ => None,
                })
            }
            "release" => {
                let w = worker.expect("a release by an actor no worker has");
                self.spend(w, pass, &|k| {
                    (k.verb == "release" && on(k) && e.gen == k.gen.map(|g| g + 1)).then_some(0)
                })
            }
            "complete" => {
                let by_holder = |k: &Killed| {
                    (k.verb == "complete" && on(k) && e.gen == k.gen && e.detail == k.other)
                        .then_some(0)
                };
                let cancel =
                    |k: &Killed| (k.verb == "cancel" && on(k) && e.gen == k.gen).then_some(0);
                worker.is_some_and(|w| self.spend(w, pass, &by_holder))
                    || (0..n).any(|w| self.spend(w, pass, &cancel))
            }
            "reopen" | "unarchive" | "archive" | "link" => {
                let same = |k: &Killed| {
                    let same_link = e.verb != "link"
                        || k.other.as_ref().is_some_and(|p| {
                            e.detail.as_deref().is_some_and(|d| d.ends_with(p.as_str()))
                        });
                    (k.verb == e.verb && on(k) && same_link).then_some(0)
                };
                (0..n).any(|w| self.spend(w, pass, &same))
            }
            "reclaim" => {
                reclaims.contains(&e.seq) || {
                    let any = |k: &Killed| (k.verb == "reclaim").then_some(0);
                    let found = (0..n).any(|w| self.spend(w, pass, &any));
                    if found {
                        reclaims.insert(e.seq);
                    }
                    found
                }
            }
            // Any write hands back expired claims; creates and updates come from
            // upserts of the pool, killed or not; settings from the setup.
            _ => true,
        }
    }
}

/// Fails on event `e`, the first of `count` that nothing explains, with its node's history
/// and every command on that node.
fn report_unexplained(log: &[Ev], e: &Ev, count: usize, outcomes: &[Outcome]) {
    let node = e.node.clone().unwrap_or_default();
    let mut told = String::new();
    for o in outcomes {
        for line in o
            .trail
            .iter()
            .filter(|l| !node.is_empty() && l.contains(&node))
        {
            told.push_str(&format!("{}: {line}\n", &o.me[28..]));
        }
    }
    let history: Vec<&Ev> = log.iter().filter(|f| f.node == e.node).collect();
    panic!(
        "{count} event(s) that no success and no killed command explains (a refused command \
         wrote?), the first: {e:?}\nits node's history: {history:#?}\ncommands on it:\n{told}"
    );
}

/// A link refused as a cycle is never there: links are never removed, so the path that
/// made it a cycle stays.
fn no_link_refused_as_a_cycle_is_there(all: &Nodes, outcomes: &[Outcome]) {
    for o in outcomes {
        for (p, c) in &o.cycles {
            // A self-link is refused as a cycle before the node is looked up.
            let Some(n) = all.get(c) else {
                continue;
            };
            for k in ["deps", "soft_deps"] {
                assert!(
                    !n[k]
                        .as_array()
                        .is_some_and(|v| v.iter().any(|d| d.as_str() == Some(p.as_str()))),
                    "{c} waits on {p}, a link refused as a cycle"
                );
            }
        }
    }
}
