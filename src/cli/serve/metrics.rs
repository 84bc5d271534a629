//! `GET /metrics`: the Prometheus text format (version 0.0.4). Three sources:
//! - the store's state at the scrape: nodes by workspace and display word, the age of every
//!   live lease and how long its node waited to be claimed, the store's size on disk;
//! - the history since the server started (every process's writes, not only this server's),
//!   counted as the server's history follower (`hub.rs`) reads it: claims granted and
//!   hand-backs by cause;
//! - this server's requests: by verb and outcome, stale refusals by verb, their latency, and
//!   bearer tokens refused.

use crate::error::Code;
use crate::model::Millis;
use crate::store::{ListFilter, Store};
use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::Mutex;
use std::time::Duration;

/// Buckets of the latency histogram (seconds).
const LATENCY: &[f64] = &[
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0,
];
/// Buckets of the lease-age and time-to-claim histograms (seconds).
const AGES: &[f64] = &[
    1.0,
    5.0,
    15.0,
    60.0,
    300.0,
    900.0,
    3600.0,
    4.0 * 3600.0,
    86400.0,
];

#[derive(Default)]
struct Histogram {
    counts: Vec<u64>,
    sum: f64,
    n: u64,
}

impl Histogram {
    fn observe(&mut self, bounds: &[f64], v: f64) {
        if self.counts.is_empty() {
            self.counts = vec![0; bounds.len()];
        }
        for (c, b) in self.counts.iter_mut().zip(bounds) {
            if v <= *b {
                *c += 1;
            }
        }
        self.sum += v;
        self.n += 1;
    }

    fn write(&self, out: &mut String, name: &str, labels: &str, bounds: &[f64]) {
        let sep = if labels.is_empty() { "" } else { "," };
        for (i, b) in bounds.iter().enumerate() {
            let c = self.counts.get(i).copied().unwrap_or(0);
            let _ = writeln!(out, "{name}_bucket{{{labels}{sep}le=\"{b}\"}} {c}");
        }
        let _ = writeln!(out, "{name}_bucket{{{labels}{sep}le=\"+Inf\"}} {}", self.n);
        let braces = |l: &str| {
            if l.is_empty() {
                String::new()
            } else {
                format!("{{{l}}}")
            }
        };
        let _ = writeln!(out, "{name}_sum{} {}", braces(labels), self.sum);
        let _ = writeln!(out, "{name}_count{} {}", braces(labels), self.n);
    }
}

#[derive(Default)]
struct Counts {
    /// (verb, outcome: "ok" or an error code) -> requests.
    requests: BTreeMap<(String, &'static str), u64>,
    latency: BTreeMap<String, Histogram>,
    stale: BTreeMap<String, u64>,
    /// Bearer tokens refused, by why (unknown, revoked, expired).
    auth_failed: BTreeMap<&'static str, u64>,
    /// History events since the server started, by verb.
    events: BTreeMap<String, u64>,
    /// The last write whose events are counted.
    seen: u64,
}

/// What the server counts between scrapes.
#[derive(Default)]
pub struct Metrics {
    counts: Mutex<Counts>,
    /// The dashboard's charts: the last hour, minute by minute.
    pub activity: super::activity::Activity,
}

impl Metrics {
    /// One API call answered.
    pub fn request(&self, verb: &str, outcome: Result<(), Code>, took: Duration) {
        let mut c = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        let word = outcome.err().map_or("ok", Code::as_str);
        *c.requests.entry((verb.to_string(), word)).or_default() += 1;
        if outcome == Err(Code::StaleGeneration) {
            *c.stale.entry(verb.to_string()).or_default() += 1;
        }
        c.latency
            .entry(verb.to_string())
            .or_default()
            .observe(LATENCY, took.as_secs_f64());
    }

    /// A bearer token refused, for `why` (unknown, revoked, expired).
    pub fn auth_failed(&self, why: &'static str) {
        let mut c = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        *c.auth_failed.entry(why).or_default() += 1;
    }

    /// Counts the history from write `seen` on (the server starts).
    pub fn start(&self, seen: u64) {
        let mut c = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        c.seen = seen;
    }

    /// Counts the lines of writes not counted yet (the history follower calls it with every
    /// write, by anyone).
    pub fn count(&self, lines: &[crate::model::HistoryLine]) {
        let mut c = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        let from = c.seen;
        for l in lines.iter().filter(|l| l.seq > from) {
            *c.events.entry(l.event.verb.clone()).or_default() += 1;
        }
        c.seen = c.seen.max(lines.last().map_or(from, |l| l.seq));
    }

    /// The whole text of one scrape (the store read now).
    pub fn render(&self, store: &Store) -> String {
        let mut out = String::new();
        self.state(store, &mut out);
        let c = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        let ev = |v: &str| c.events.get(v).copied().unwrap_or(0);
        head(
            &mut out,
            "claimdag_claims_granted_total",
            "counter",
            "Claims granted since the server started, by any process.",
        );
        let _ = writeln!(out, "claimdag_claims_granted_total {}", ev("claim"));
        decisions(&ev, &mut out);
        head(&mut out, "claimdag_handbacks_total", "counter",
             "Claims handed back since the server started, by cause: a lease that ran out (expiry), a reclaim, a release.");
        for (cause, verb) in [
            ("expiry", "expire"),
            ("reclaim", "reclaim"),
            ("release", "release"),
        ] {
            let _ = writeln!(
                out,
                "claimdag_handbacks_total{{cause=\"{cause}\"}} {}",
                ev(verb)
            );
        }
        head(
            &mut out,
            "claimdag_stale_refusals_total",
            "counter",
            "Requests to this server refused for a stale generation, by verb.",
        );
        for (verb, n) in &c.stale {
            let _ = writeln!(out, "claimdag_stale_refusals_total{{verb=\"{verb}\"}} {n}");
        }
        head(
            &mut out,
            "claimdag_auth_failures_total",
            "counter",
            "Requests to this server refused for their bearer token, by why.",
        );
        for why in ["unknown", "revoked", "expired"] {
            let n = c.auth_failed.get(why).copied().unwrap_or(0);
            let _ = writeln!(out, "claimdag_auth_failures_total{{reason=\"{why}\"}} {n}");
        }
        head(
            &mut out,
            "claimdag_http_requests_total",
            "counter",
            "API requests answered by this server, by verb and outcome (ok or the error code).",
        );
        for ((verb, outcome), n) in &c.requests {
            let _ = writeln!(
                out,
                "claimdag_http_requests_total{{verb=\"{verb}\",outcome=\"{outcome}\"}} {n}"
            );
        }
        head(&mut out, "claimdag_request_duration_seconds", "histogram",
             "How long this server took to answer an API request, store write and sync included, by verb.");
        for (verb, h) in &c.latency {
            h.write(
                &mut out,
                "claimdag_request_duration_seconds",
                &format!("verb=\"{verb}\""),
                LATENCY,
            );
        }
        out
    }

    /// The state at the scrape: nodes, live leases, the store's size.
    fn state(&self, store: &Store, out: &mut String) {
        let filter = ListFilter {
            terminal: true,
            ..ListFilter::default()
        };
        let (Ok(nodes), Ok(now)) = (store.list(&filter), store.now()) else {
            head(
                out,
                "claimdag_up",
                "gauge",
                "1 when the store could be read at this scrape.",
            );
            let _ = writeln!(out, "claimdag_up 0");
            return;
        };
        head(
            out,
            "claimdag_up",
            "gauge",
            "1 when the store could be read at this scrape.",
        );
        let _ = writeln!(out, "claimdag_up 1");
        let mut by: BTreeMap<(String, &'static str), u64> = BTreeMap::new();
        let mut money: BTreeMap<String, Money> = BTreeMap::new();
        let (mut age, mut wait) = (Histogram::default(), Histogram::default());
        for v in &nodes {
            *by.entry((v.node.workspace.clone(), v.display.as_str()))
                .or_default() += 1;
            if v.overdue || v.node.budget.is_some() || !v.node.spent.is_zero() {
                money.entry(v.node.workspace.clone()).or_default().add(v);
            }
            if let Some(at) = v.node.claimed_at.filter(|_| v.node.holder.is_some()) {
                age.observe(AGES, seconds(now, at));
                wait.observe(AGES, seconds(at, v.node.created_at));
            }
        }
        head(
            out,
            "claimdag_nodes",
            "gauge",
            "Live nodes (archived ones left out) by workspace and display word.",
        );
        for ((ws, word), n) in &by {
            let _ = writeln!(
                out,
                "claimdag_nodes{{workspace=\"{}\",display=\"{word}\"}} {n}",
                label(ws)
            );
        }
        holders(store, &nodes, out);
        Money::write(&money, out);
        head(
            out,
            "claimdag_lease_age_seconds",
            "histogram",
            "How long each live claim has been held, at the scrape.",
        );
        age.write(out, "claimdag_lease_age_seconds", "", AGES);
        head(
            out,
            "claimdag_time_to_claim_seconds",
            "histogram",
            "For each live claim, how long its node waited from its creation to the claim.",
        );
        wait.write(out, "claimdag_time_to_claim_seconds", "", AGES);
        store_bytes(store, out);
    }
}

/// `claimdag_decisions_total`: what people and limits decided, from the history's verbs.
fn decisions(ev: &dyn Fn(&str) -> u64, out: &mut String) {
    head(
        out,
        "claimdag_decisions_total",
        "counter",
        "What people and limits decided since the server started: gates approved and \
         rejected, parked nodes retried, deadlines passed, budgets spent.",
    );
    for verb in ["approve", "reject", "retry", "overdue", "over_budget"] {
        let _ = writeln!(
            out,
            "claimdag_decisions_total{{verb=\"{verb}\"}} {}",
            ev(verb)
        );
    }
}

/// `claimdag_store_bytes`, for a store in a directory.
fn store_bytes(store: &Store, out: &mut String) {
    let Some(dir) = store.dir() else { return };
    let bytes: u64 = std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .filter_map(|e| e.metadata().ok())
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0);
    head(
        out,
        "claimdag_store_bytes",
        "gauge",
        "The store directory's files, in bytes.",
    );
    let _ = writeln!(out, "claimdag_store_bytes {bytes}");
}

fn seconds(later: Millis, earlier: Millis) -> f64 {
    later.saturating_sub(earlier) as f64 / 1000.0
}

fn head(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
}

/// A label value escaped as the text format wants (backslash, quote, newline).
fn label(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// `claimdag_claims_held`: the live claims of each actor, by workspace, with the name the
/// store keeps for it (empty when none): who holds what, at a glance.
fn holders(store: &Store, nodes: &[crate::view::NodeView], out: &mut String) {
    let names = store.names().unwrap_or_default();
    let mut held: BTreeMap<(String, crate::id::Actor), u64> = BTreeMap::new();
    for v in nodes.iter().filter(|v| v.display.as_str() == "claimed") {
        if let Some(h) = v.node.holder {
            *held.entry((v.node.workspace.clone(), h)).or_default() += 1;
        }
    }
    head(
        out,
        "claimdag_claims_held",
        "gauge",
        "Live claims by workspace and holder, with the name kept for the holder.",
    );
    for ((ws, actor), n) in &held {
        let _ = writeln!(
            out,
            "claimdag_claims_held{{workspace=\"{}\",actor=\"{}\",name=\"{}\"}} {n}",
            label(ws),
            actor.hex(),
            label(names.get(actor).unwrap_or_default())
        );
    }
}

/// A gauge of [`Money`]: its name, its help, its value in one workspace.
type Row<'a> = (&'a str, &'a str, &'a dyn Fn(&Money) -> String);

/// One workspace's deadlines and spend: overdue nodes, and the tokens and cost its nodes
/// spent against their budgets.
#[derive(Default)]
struct Money {
    overdue: u64,
    spent_tokens: u64,
    spent_cost: u64,
    budget_tokens: u64,
    budget_cost: u64,
    over: u64,
}

impl Money {
    fn add(&mut self, v: &crate::view::NodeView) {
        let n = &v.node;
        self.overdue += u64::from(v.overdue);
        self.spent_tokens = self.spent_tokens.saturating_add(n.spent.tokens);
        self.spent_cost = self.spent_cost.saturating_add(n.spent.cost_micros);
        if let Some(b) = n.budget {
            self.budget_tokens = self.budget_tokens.saturating_add(b.tokens.unwrap_or(0));
            self.budget_cost = self.budget_cost.saturating_add(b.cost_micros.unwrap_or(0));
        }
        self.over += u64::from(n.is_over_budget());
    }

    fn write(all: &BTreeMap<String, Money>, out: &mut String) {
        let cost = |micros: u64| crate::model::decisions::format_cost(micros);
        let rows: [Row; 6] = [
            (
                "claimdag_nodes_overdue",
                "Unfinished live nodes past their deadline.",
                &|m| m.overdue.to_string(),
            ),
            (
                "claimdag_nodes_over_budget",
                "Live nodes that spent past their budget.",
                &|m| m.over.to_string(),
            ),
            (
                "claimdag_spent_tokens",
                "Tokens the live nodes' claims reported spending.",
                &|m| m.spent_tokens.to_string(),
            ),
            (
                "claimdag_budget_tokens",
                "Tokens the live nodes' budgets allow (nodes with a token budget).",
                &|m| m.budget_tokens.to_string(),
            ),
            (
                "claimdag_spent_cost",
                "Cost the live nodes' claims reported spending.",
                &|m| cost(m.spent_cost),
            ),
            (
                "claimdag_budget_cost",
                "Cost the live nodes' budgets allow (nodes with a cost budget).",
                &|m| cost(m.budget_cost),
            ),
        ];
        for (name, help, value) in rows {
            head(out, name, "gauge", help);
            for (ws, m) in all {
                let _ = writeln!(out, "{name}{{workspace=\"{}\"}} {}", label(ws), value(m));
            }
        }
    }
}
