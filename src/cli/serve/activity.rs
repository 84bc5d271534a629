//! What the dashboard's charts show: for each workspace and each minute of the last hour,
//! the claims granted, the completions (by status; a lead's `cancel` counts as cancelled)
//! and the hand-backs (by cause), and how
//! long the claimed nodes waited: from their creation, or from their last hand-back the
//! server saw, to the claim. Counted from the history as the server's follower (`hub.rs`)
//! reads it, by any process, since the server started; kept in memory, 60 minutes a
//! workspace, so the charts cost what the last hour wrote, never the store's age.
//!
//! `GET /activity?workspace=W` answers `{"minute_ms": 60000, "now", "since", "minutes":
//! [{"at", "claims", "done", "failed", "cancelled", "expired", "reclaimed", "released",
//! "waited": {"n", "mean_ms", "max_ms"}}]}`, oldest minute first, one entry for each of the
//! last 60 minutes (zeros where nothing happened).

use crate::id::Id;
use crate::model::{HistoryLine, Millis};
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::Mutex;

pub const MINUTE: Millis = 60_000;
/// The minutes kept for each workspace.
pub const KEPT: usize = 60;
/// How far past the store's time an event may be dated and still be counted.
pub const AHEAD: Millis = 5 * MINUTE;

#[derive(Debug, Default, Clone, PartialEq)]
struct Minute {
    /// The minute's start (a multiple of [`MINUTE`]).
    at: Millis,
    claims: u64,
    done: u64,
    failed: u64,
    cancelled: u64,
    expired: u64,
    reclaimed: u64,
    released: u64,
    waited_n: u64,
    waited_sum: u64,
    waited_max: u64,
}

impl Minute {
    fn to_json(&self) -> Value {
        let mean = self.waited_sum.checked_div(self.waited_n);
        json!({
            "at": self.at, "claims": self.claims, "done": self.done, "failed": self.failed,
            "cancelled": self.cancelled, "expired": self.expired,
            "reclaimed": self.reclaimed, "released": self.released,
            "waited": {"n": self.waited_n, "mean_ms": mean, "max_ms": (self.waited_n > 0).then_some(self.waited_max)},
        })
    }
}

#[derive(Default)]
struct Counts {
    /// Each workspace's minutes, oldest first, at most [`KEPT`].
    minutes: HashMap<String, VecDeque<Minute>>,
    /// Nodes handed back and neither claimed nor finished since: when.
    offered: HashMap<Id, Millis>,
}

/// The per-minute counts the server keeps.
#[derive(Default)]
pub struct Activity {
    counts: Mutex<Counts>,
    /// When the server started counting.
    since: Mutex<Millis>,
}

/// The events the charts count: those that move a claim.
pub fn counted(l: &HistoryLine) -> bool {
    matches!(
        l.event.verb.as_str(),
        "claim" | "complete" | "cancel" | "expire" | "reclaim" | "release" | "reopen" | "retry"
    ) && l.event.node.is_some()
}

impl Activity {
    pub fn start(&self, now: Millis) {
        *self.since.lock().unwrap_or_else(|p| p.into_inner()) = now;
    }

    /// Counts `lines` (those [`counted`]) at the store's time `now`; `origin` gives the
    /// workspace and creation time of each line's node (`None`: no longer live, not
    /// counted). An event dated more than [`AHEAD`] past `now` (a host whose clock runs
    /// ahead) is not counted: it would push every real minute out of the hour kept. A
    /// workspace with nothing in the last hour is dropped.
    pub fn count(&self, lines: &[&HistoryLine], origin: &[Option<(String, Millis)>], now: Millis) {
        let mut c = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        for (l, o) in lines.iter().zip(origin) {
            let Some(node) = l.event.node else {
                continue;
            };
            let (at, verb) = (l.event.at, l.event.verb.as_str());
            let since = match verb {
                "expire" | "reclaim" | "release" | "reopen" | "retry" => {
                    c.offered.insert(node, at);
                    None
                }
                // Finished, or claimed: no longer waiting to be taken.
                "complete" | "cancel" | "claim" => c.offered.remove(&node),
                _ => None,
            };
            let Some((ws, created)) = o else {
                continue;
            };
            if at > now.saturating_add(AHEAD) {
                continue;
            }
            let Some(m) = minute(c.minutes.entry(ws.clone()).or_default(), at) else {
                continue;
            };
            match (verb, l.event.detail.as_deref()) {
                ("claim", _) => {
                    let w = at.saturating_sub(since.unwrap_or(*created));
                    m.claims += 1;
                    m.waited_n += 1;
                    m.waited_sum = m.waited_sum.saturating_add(w);
                    m.waited_max = m.waited_max.max(w);
                }
                ("complete", Some("failed")) => m.failed += 1,
                ("complete", Some("cancelled")) | ("cancel", _) => m.cancelled += 1,
                ("complete", _) => m.done += 1,
                ("expire", _) => m.expired += 1,
                ("reclaim", _) => m.reclaimed += 1,
                ("release", _) => m.released += 1,
                _ => {}
            }
        }
        let span = KEPT as u64 * MINUTE;
        c.minutes
            .retain(|_, kept| kept.back().is_some_and(|b| b.at + span > now));
    }

    /// The last [`KEPT`] minutes of `workspace` up to `now`'s, as JSON.
    pub fn render(&self, workspace: &str, now: Millis) -> Value {
        let c = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        let last = now - now % MINUTE;
        let kept: BTreeMap<Millis, &Minute> = c
            .minutes
            .get(workspace)
            .into_iter()
            .flatten()
            .map(|m| (m.at, m))
            .collect();
        let minutes: Vec<Value> = (0..KEPT as u64)
            .rev()
            .map(|k| last.saturating_sub(k * MINUTE))
            .map(|at| {
                kept.get(&at).map_or_else(
                    || {
                        Minute {
                            at,
                            ..Minute::default()
                        }
                        .to_json()
                    },
                    |m| m.to_json(),
                )
            })
            .collect();
        let since = *self.since.lock().unwrap_or_else(|p| p.into_inner());
        json!({"minute_ms": MINUTE, "now": now, "since": since, "minutes": minutes})
    }
}

/// The minute of `at` in `kept` (made when new; older ones past [`KEPT`] dropped), or
/// `None` when `at` is older than every minute kept.
fn minute(kept: &mut VecDeque<Minute>, at: Millis) -> Option<&mut Minute> {
    let start = at - at % MINUTE;
    let span = KEPT as u64 * MINUTE;
    if kept.back().is_none_or(|b| start > b.at) {
        kept.push_back(Minute {
            at: start,
            ..Minute::default()
        });
        while kept.back().is_some_and(|b| b.at - kept[0].at >= span) {
            kept.pop_front();
        }
    }
    let newest = kept.back().map_or(start, |b| b.at);
    if newest - start >= span {
        return None;
    }
    let i = kept.iter().position(|m| m.at >= start)?;
    if kept[i].at != start {
        kept.insert(
            i,
            Minute {
                at: start,
                ..Minute::default()
            },
        );
    }
    kept.get_mut(i)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Event;

    fn line(seq: u64, at: Millis, verb: &str, node: u8, detail: Option<&str>) -> HistoryLine {
        let mut id = [0u8; 16];
        id[15] = node;
        HistoryLine::new(
            seq,
            0,
            Event {
                at,
                verb: verb.into(),
                node: Some(Id(id)),
                actor: None,
                generation: Some(1),
                detail: detail.map(str::to_string),
                output: None,
                by: None,
                door: None,
            },
        )
    }

    #[test]
    fn counts_by_minute_and_waits_from_creation_or_the_last_hand_back() {
        let a = Activity::default();
        let t0 = 100 * MINUTE;
        let lines = [
            line(1, t0 + 5_000, "claim", 1, None),
            line(2, t0 + 20_000, "release", 1, None),
            line(3, t0 + MINUTE + 1_000, "claim", 1, None),
            line(4, t0 + MINUTE + 2_000, "complete", 1, Some("failed")),
            line(5, t0 + MINUTE + 3_000, "expire", 2, None),
            line(6, t0 + MINUTE + 4_000, "claim", 3, None),
            line(7, t0 + MINUTE + 5_000, "cancel", 2, None),
        ];
        let refs: Vec<&HistoryLine> = lines.iter().collect();
        let origins = vec![
            Some(("w".to_string(), t0)),
            Some(("w".to_string(), t0)),
            Some(("w".to_string(), t0)),
            Some(("w".to_string(), t0)),
            Some(("w".to_string(), t0)),
            None,
            Some(("w".to_string(), t0)),
        ];
        a.count(&refs, &origins, t0 + MINUTE + 30_000);
        let v = a.render("w", t0 + MINUTE + 30_000);
        let m = v["minutes"].as_array().unwrap();
        assert_eq!(m.len(), KEPT);
        let (first, second) = (&m[KEPT - 2], &m[KEPT - 1]);
        assert_eq!(first["at"], t0);
        assert_eq!(
            (first["claims"].as_u64(), first["released"].as_u64()),
            (Some(1), Some(1))
        );
        assert_eq!(first["waited"]["mean_ms"], 5_000);
        // The second claim waited from the release, not from the creation.
        assert_eq!(second["claims"], 1);
        assert_eq!(second["waited"]["max_ms"], MINUTE + 1_000 - 20_000);
        assert_eq!(
            (second["failed"].as_u64(), second["expired"].as_u64()),
            (Some(1), Some(1))
        );
        assert_eq!(m[0]["claims"], 0);
        assert!(m[0]["waited"]["mean_ms"].is_null());
        assert_eq!(a.render("other", t0)["minutes"][KEPT - 1]["claims"], 0);
    }

    #[test]
    fn keeps_an_hour_and_places_a_late_event_in_its_minute() {
        let a = Activity::default();
        let w = || Some(("w".to_string(), 0));
        let t0 = 1_000 * MINUTE;
        let late = line(2, t0 + 5 * MINUTE, "claim", 1, None);
        let early = line(3, t0 + 2 * MINUTE, "claim", 2, None);
        let stale = line(4, t0 - 70 * MINUTE, "claim", 3, None);
        let ahead = line(6, t0 + 30 * MINUTE, "claim", 5, None);
        a.count(
            &[&late, &early, &stale, &ahead],
            &[w(), w(), w(), w()],
            t0 + 5 * MINUTE,
        );
        let v = a.render("w", t0 + 5 * MINUTE);
        let claims: u64 = v["minutes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["claims"].as_u64().unwrap())
            .sum();
        assert_eq!(
            claims, 2,
            "neither the event older than an hour nor one far ahead"
        );
        assert_eq!(v["minutes"][KEPT - 4]["claims"], 1);
        // An hour on, the old minutes are gone.
        let next = line(5, t0 + 90 * MINUTE, "claim", 4, None);
        a.count(&[&next], &[w()], t0 + 90 * MINUTE);
        assert_eq!(a.counts.lock().unwrap().minutes["w"].len(), 1);
        // A workspace quiet for an hour is dropped; a finished node that is no longer live
        // leaves the hand-back table all the same.
        let gone = line(7, t0 + 91 * MINUTE, "release", 9, None);
        let done = line(8, t0 + 92 * MINUTE, "complete", 9, Some("done"));
        a.count(&[&gone, &done], &[w(), None], t0 + 151 * MINUTE);
        let c = a.counts.lock().unwrap();
        assert!(c.minutes.is_empty() && c.offered.is_empty());
    }
}
