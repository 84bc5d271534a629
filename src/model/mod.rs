//! The data: nodes, statuses, settings, history events and the in-memory state of a store.
//! Nothing here decides what is allowed; that is `rules`.

pub mod actors;
pub mod decisions;
pub mod limits;
mod settings;
pub use actors::ActorName;
pub use decisions::{is_container, Amounts, Budget, Children, Spend, Usage, EPIC};
pub use limits::{Limits, Rate};
pub use settings::{HistoryKeep, Settings, DEFAULT_RETRY_DELAY_MAX_MS};

use crate::id::{Actor, Id};
use serde::{Deserialize, Serialize};

/// Milliseconds since the Unix epoch.
pub type Millis = u64;

/// The kind of a node a person decides (`approve`, `reject`), never a worker.
pub const GATE: &str = "gate";

/// Default lease: 15 minutes.
pub const DEFAULT_TTL_MS: u64 = 15 * 60 * 1000;
/// Longest summary, in bytes, after trimming.
pub const MAX_SUMMARY_BYTES: usize = 4096;

/// The stored status of a node (docs/reference.md, "Nodes").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Todo,
    Claimed,
    Done,
    Failed,
    Cancelled,
}

impl Status {
    pub fn is_terminal(self) -> bool {
        matches!(self, Status::Done | Status::Failed | Status::Cancelled)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Status::Todo => "todo",
            Status::Claimed => "claimed",
            Status::Done => "done",
            Status::Failed => "failed",
            Status::Cancelled => "cancelled",
        }
    }

    pub fn parse(text: &str) -> Option<Status> {
        Some(match text {
            "todo" => Status::Todo,
            "claimed" => Status::Claimed,
            "done" => Status::Done,
            "failed" => Status::Failed,
            "cancelled" => Status::Cancelled,
            _ => return None,
        })
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The derived display word (docs/reference.md, "Display words").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DisplayWord {
    Ready,
    /// A `todo` node that would be ready but for its `not_before`, still to come.
    Scheduled,
    Blocked,
    /// A `todo` node that used every attempt its cap allows: never offered again until
    /// `retry` gives it fresh ones.
    Parked,
    Todo,
    Claimed,
    Expired,
    Done,
    Failed,
    Cancelled,
}

impl DisplayWord {
    pub fn as_str(self) -> &'static str {
        match self {
            DisplayWord::Ready => "ready",
            DisplayWord::Scheduled => "scheduled",
            DisplayWord::Blocked => "blocked",
            DisplayWord::Parked => "parked",
            DisplayWord::Todo => "todo",
            DisplayWord::Claimed => "claimed",
            DisplayWord::Expired => "expired",
            DisplayWord::Done => "done",
            DisplayWord::Failed => "failed",
            DisplayWord::Cancelled => "cancelled",
        }
    }
}

fn is_zero_u32(v: &u32) -> bool {
    *v == 0
}
fn is_zero_i64(v: &i64) -> bool {
    *v == 0
}
fn is_one(v: &u64) -> bool {
    *v == 1
}
fn is_false(v: &bool) -> bool {
    !*v
}
fn default_kind() -> String {
    "task".to_string()
}
fn default_estimate() -> u64 {
    1
}

/// One unit of work. Stored compactly: fields at their default value are left out on disk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Node {
    pub id: Id,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub workspace: String,
    #[serde(default = "default_kind")]
    pub kind: String,
    pub summary: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<Id>,
    /// Hard prerequisites: satisfied when `done`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deps: Vec<Id>,
    /// Soft prerequisites: satisfied when terminal in any status.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub soft_deps: Vec<Id>,
    pub status: Status,
    pub generation: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub holder: Option<Actor>,
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub attempts: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_attempts: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claimed_at: Option<Millis>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub renewed_at: Option<Millis>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub role: String,
    #[serde(default, skip_serializing_if = "is_zero_i64")]
    pub priority: i64,
    #[serde(default = "default_estimate", skip_serializing_if = "is_one")]
    pub estimate: u64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub labels: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<String>,
    /// When the node's grants that a rate (`rate:NAME`) may still count were made: those
    /// within the longest window of its rates when it was last granted, oldest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rate_grants: Vec<Millis>,
    #[serde(default, rename = "ref", skip_serializing_if = "Option::is_none")]
    pub ref_: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_by: Option<Actor>,
    /// Not granted before this time: a scheduled node, or one handed back with a backoff.
    /// A claim clears it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_before: Option<Millis>,
    /// The holder whose claim was last handed back (released, expired or reclaimed): its
    /// renew, release and complete are `stale_generation`, with or without a generation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_holder: Option<Actor>,
    /// The last checkpoint a holder left (`renew --progress`): kept across hand-backs and
    /// handed to the next holder; cleared by a reopen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress: Option<String>,
    /// When `progress` was last written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress_at: Option<Millis>,
    /// A request that the holder stop (`cancel` of a claimed node); cleared by a hand-back,
    /// a completion and a reopen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cancel_requested: Option<CancelRequest>,
    /// What the node produced (`complete --output`), as compact JSON text: the dependents
    /// that claim it after it is `done` receive it as an input. Stored as text so that every
    /// backend gives back the very bytes written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    /// A container's children (kind `epic`), counted from its creation on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub children: Option<Children>,
    /// Past this time an unfinished node is overdue (`--deadline`), whatever its lease.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline: Option<Millis>,
    /// When the node was first seen overdue (and its `overdue` event written, once).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overdue_at: Option<Millis>,
    /// The most the node may spend (`--budget`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<Budget>,
    /// What every claim of the node reported spending, summed.
    #[serde(default, skip_serializing_if = "Spend::is_zero")]
    pub spent: Spend,
    /// What the current claim reported (`renew --usage`, its total so far).
    #[serde(default, skip_serializing_if = "Spend::is_zero")]
    pub claim_spent: Spend,
    pub created_at: Millis,
    pub updated_at: Millis,
    #[serde(default, skip_serializing_if = "is_false")]
    pub archived: bool,
}

impl Node {
    /// A new node: `todo`, generation 1, no attempts, every other field at its default.
    pub fn todo(id: Id, kind: String, summary: String, now: Millis) -> Node {
        let children = is_container(&kind).then(Children::default);
        Node {
            id,
            workspace: String::new(),
            kind,
            summary,
            parent: None,
            deps: Vec::new(),
            soft_deps: Vec::new(),
            status: Status::Todo,
            generation: 1,
            holder: None,
            attempts: 0,
            max_attempts: None,
            claimed_at: None,
            renewed_at: None,
            ttl_ms: None,
            role: String::new(),
            priority: 0,
            estimate: 1,
            labels: Vec::new(),
            resources: Vec::new(),
            rate_grants: Vec::new(),
            ref_: None,
            note: None,
            completed_by: None,
            not_before: None,
            last_holder: None,
            progress: None,
            progress_at: None,
            cancel_requested: None,
            output: None,
            children,
            deadline: None,
            overdue_at: None,
            budget: None,
            spent: Spend::default(),
            claim_spent: Spend::default(),
            created_at: now,
            updated_at: now,
            archived: false,
        }
    }

    /// The end of the lease (`renewed_at + ttl`), for a claimed node.
    pub fn lease_end(&self) -> Option<Millis> {
        match (self.status, self.renewed_at, self.ttl_ms) {
            (Status::Claimed, Some(r), Some(t)) => Some(r.saturating_add(t)),
            _ => None,
        }
    }

    /// A claim is expired from `renewed_at + ttl` on.
    pub fn is_expired(&self, now: Millis) -> bool {
        self.lease_end().is_some_and(|end| now >= end)
    }

    /// Claimed with the lease still running.
    pub fn is_live_claim(&self, now: Millis) -> bool {
        self.status == Status::Claimed && !self.is_expired(now)
    }

    /// The `not_before` still to come at `now`, if any: the node is not granted before it.
    pub fn scheduled_after(&self, now: Millis) -> Option<Millis> {
        self.not_before.filter(|t| *t > now)
    }

    /// Unfinished with its deadline passed.
    pub fn is_overdue(&self, now: Millis) -> bool {
        !self.status.is_terminal() && self.deadline.is_some_and(|d| now >= d)
    }

    /// Every prerequisite, hard ones first, with `true` for soft ones.
    pub fn prerequisites(&self) -> impl Iterator<Item = (Id, bool)> + '_ {
        self.deps
            .iter()
            .map(|d| (*d, false))
            .chain(self.soft_deps.iter().map(|d| (*d, true)))
    }
}

/// A request that the holder of a claim stop: who asked, why, and when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CancelRequest {
    /// The actor that asked, when it named itself.
    #[serde(default)]
    pub by: Option<Actor>,
    /// Why, in the asker's words.
    #[serde(default)]
    pub reason: Option<String>,
    /// When (ms since the epoch).
    pub at: Millis,
}

/// The longest `progress` and `output` (serialised), in bytes.
pub const MAX_PROGRESS_BYTES: usize = 65536;

/// One transition in the persistent history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Event {
    pub at: Millis,
    pub verb: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<Id>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actor: Option<Actor>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation: Option<u64>,
    /// Extra words: the status reached, the linked node, the setting changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// The output a completion stored, as compact JSON text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    /// Who acted, when that was not `actor`: a lead who released or completed a worker's
    /// claim for it (the dashboard), or cancelled it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by: Option<Actor>,
    /// The door the call came through (`cli`, `python`, `c`, `mcp`, `http`, `dashboard`),
    /// when it said; the Rust library's own calls say none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub door: Option<String>,
}

/// One transition in the history, with the committed write it came from (`seq`, which
/// only grows) and its place among that write's events (`i`). In JSON, on disk and in every
/// front door it is one flat object: `{"seq", "i", "at", "verb", ...}` (absent fields left
/// out).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(from = "HistoryWire")]
pub struct HistoryLine {
    pub seq: u64,
    /// The event's index within its record.
    pub i: u32,
    pub event: Event,
    /// The name kept for the event's actor (`actor_name` in JSON), where a door shows it.
    pub actor_name: Option<String>,
    /// The name kept for `by` (`by_name`), where a door shows it.
    pub by_name: Option<String>,
}

impl HistoryLine {
    /// The line of `event`, the `i`th event of write `seq`, without names.
    pub fn new(seq: u64, i: u32, event: Event) -> HistoryLine {
        HistoryLine {
            seq,
            i,
            event,
            actor_name: None,
            by_name: None,
        }
    }
}

#[derive(Deserialize, schemars::JsonSchema)]
#[schemars(rename = "Event")]
struct HistoryWire {
    seq: u64,
    #[serde(default)]
    i: u32,
    at: Millis,
    verb: String,
    #[serde(default)]
    node: Option<Id>,
    #[serde(default)]
    actor: Option<Id>,
    /// The name kept for the actor, if any.
    #[serde(default)]
    actor_name: Option<String>,
    #[serde(default)]
    generation: Option<u64>,
    #[serde(default)]
    detail: Option<String>,
    /// The output a completion stored.
    #[serde(default)]
    output: Option<serde_json::Value>,
    /// Who acted, when that was not `actor`.
    #[serde(default)]
    by: Option<Id>,
    #[serde(default)]
    by_name: Option<String>,
    /// The door the call came through.
    #[serde(default)]
    door: Option<String>,
}

impl schemars::JsonSchema for HistoryLine {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        HistoryWire::schema_name()
    }

    fn json_schema(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
        HistoryWire::json_schema(g)
    }
}

impl From<HistoryWire> for HistoryLine {
    fn from(w: HistoryWire) -> HistoryLine {
        HistoryLine {
            seq: w.seq,
            i: w.i,
            actor_name: w.actor_name,
            by_name: w.by_name,
            event: Event {
                at: w.at,
                verb: w.verb,
                node: w.node,
                actor: w.actor,
                generation: w.generation,
                detail: w.detail,
                output: w.output.map(|v| v.to_string()),
                by: w.by,
                door: w.door,
            },
        }
    }
}

impl Serialize for HistoryLine {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let e = &self.event;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("seq", &self.seq)?;
        m.serialize_entry("i", &self.i)?;
        m.serialize_entry("at", &e.at)?;
        m.serialize_entry("verb", &e.verb)?;
        if let Some(n) = &e.node {
            m.serialize_entry("node", n)?;
        }
        if let Some(a) = &e.actor {
            m.serialize_entry("actor", a)?;
        }
        if let Some(n) = &self.actor_name {
            m.serialize_entry("actor_name", n)?;
        }
        if let Some(g) = &e.generation {
            m.serialize_entry("generation", g)?;
        }
        if let Some(d) = &e.detail {
            m.serialize_entry("detail", d)?;
        }
        if let Some(o) = &e.output {
            m.serialize_entry("output", &json_value(o))?;
        }
        if let Some(b) = &e.by {
            m.serialize_entry("by", b)?;
        }
        if let Some(n) = &self.by_name {
            m.serialize_entry("by_name", n)?;
        }
        if let Some(d) = &e.door {
            m.serialize_entry("door", d)?;
        }
        m.end()
    }
}

/// Stored JSON text as a value (it was checked when written; text that does not parse, which
/// only a hand edit can leave, shows as the string it is).
pub fn json_value(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or_else(|_| serde_json::Value::String(text.to_string()))
}

/// What stays in the live state of an archived node: enough for a node waiting on it to know
/// how it ended, which workspace it belongs to (links never cross workspaces), and the
/// generation it was archived at (an unarchive restores exactly that node, never an older
/// copy). The node itself lives in the archive.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArchivedStub {
    pub status: Status,
    /// 0 only in stubs read from a snapshot of format 1, until they are completed from the
    /// archive (see `store::embedded::snapshot`).
    #[serde(default)]
    pub generation: u64,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub workspace: String,
    /// The output of a `done` node: its dependents still receive it as an input.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
}

impl ArchivedStub {
    pub fn of(node: &Node) -> ArchivedStub {
        ArchivedStub {
            status: node.status,
            generation: node.generation,
            workspace: node.workspace.clone(),
            output: match node.status {
                Status::Done => node.output.clone(),
                _ => None,
            },
        }
    }
}

/// What a successful write changes: the full new value of every node it touched (new nodes
/// in creation order), the nodes it archived (their last value, which moves to the archive
/// file), new settings, and the history it records.
/// This is also what one journal record holds.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Change {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<Node>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub archived: Vec<Node>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settings: Option<Settings>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<Event>,
}

impl Change {
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
            && self.archived.is_empty()
            && self.settings.is_none()
            && self.events.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A node, an event and an archived stub as stores wrote them before checkpoints,
    /// cancel requests and outputs: they read with those fields null, and a node without
    /// them is written byte for byte as before.
    #[test]
    fn old_records_read_with_the_conversation_fields_null() {
        let old = r#"{"id":"00000000000000000000000000000001","summary":"s","status":"claimed","generation":2,"holder":"00000000000000000000000000000007","attempts":1,"created_at":1,"updated_at":2}"#;
        let n: Node = serde_json::from_str(old).unwrap();
        assert_eq!(
            (&n.progress, n.progress_at, &n.cancel_requested, &n.output),
            (&None, None, &None, &None)
        );
        // Nor containers, deadlines or budgets: all absent.
        assert_eq!(
            (n.children, n.deadline, n.overdue_at, n.budget),
            (None, None, None, None)
        );
        assert!(n.spent.is_zero() && n.claim_spent.is_zero() && !n.is_overdue(u64::MAX));
        let s: Settings =
            serde_json::from_str(r#"{"default_ttl_ms":900000,"max_held":1,"max_attempts":null}"#)
                .unwrap();
        assert!(!s.deadline_cancel);
        let again = serde_json::to_string(&n).unwrap();
        assert_eq!(again.replace(",\"kind\":\"task\"", ""), old);
        let e: Event =
            serde_json::from_str(r#"{"at":1,"verb":"complete","detail":"done"}"#).unwrap();
        assert_eq!(e.output, None);
        let h: HistoryLine =
            serde_json::from_str(r#"{"seq":3,"at":1,"verb":"complete","detail":"done"}"#).unwrap();
        assert_eq!(h.event.output, None);
        let stub: ArchivedStub =
            serde_json::from_str(r#"{"status":"done","generation":3}"#).unwrap();
        assert_eq!(stub.output, None);
    }

    /// A history line gives its output back as the JSON value, and reads it back as the
    /// same compact text.
    #[test]
    fn a_history_output_is_a_value_in_json() {
        let h = HistoryLine::new(
            1,
            0,
            Event {
                at: 5,
                verb: "complete".into(),
                node: None,
                actor: None,
                generation: Some(2),
                detail: Some("done".into()),
                output: Some(r#"{"b":1,"a":[true,null]}"#.into()),
                by: None,
                door: None,
            },
        );
        let text = serde_json::to_string(&h).unwrap();
        assert!(
            text.ends_with(r#""output":{"b":1,"a":[true,null]}}"#),
            "{text}"
        );
        let back: HistoryLine = serde_json::from_str(&text).unwrap();
        assert_eq!(back, h);
    }
}
