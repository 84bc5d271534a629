//! The replies of the verbs: one JSON shape (their `Serialize`) and one text form each.

use super::text;
use super::Reply;
use crate::id::{Actor, Id};
use crate::model::{json_value, CancelRequest, HistoryLine, Millis, Settings, Status};
use crate::rules::Grant;
use crate::schedule::Pick;
use crate::view::NodeView;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The id of the node created or found (`upsert`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Upserted {
    pub id: Id,
}

impl Reply for Upserted {
    fn text(&self) -> String {
        format!("{}\n", self.id)
    }
}

/// Done, nothing to report (`link`, `unlink`, `renew`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Done {
    pub ok: bool,
}

impl Done {
    pub const OK: Done = Done { ok: true };
}

impl Reply for Done {
    fn text(&self) -> String {
        String::new()
    }
}

/// A node and its new generation, the fencing token (`claim`, `release`, `reopen`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Granted {
    pub id: Id,
    pub generation: u64,
}

impl Reply for Granted {
    fn text(&self) -> String {
        format!("gen={}\n", self.generation)
    }
}

/// What `claim-next` claimed (or, with `resume`, the claim the actor already held): the
/// claim, or `null` when no node is ready (exit 1); with `count`, the list of claims (`[]`
/// when none), the text one line each.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Claimed {
    /// With `count`: every claim of the batch, in pick order.
    Many(Vec<ClaimedNode>),
    /// The claim, or null when nothing is ready.
    One(Option<ClaimedNode>),
}

impl Claimed {
    /// The first claim answered (the only one without `count`), if any.
    pub fn first(&self) -> Option<&ClaimedNode> {
        match self {
            Claimed::Many(all) => all.first(),
            Claimed::One(one) => one.as_ref(),
        }
    }

    /// The first claim answered, taken.
    pub fn into_first(self) -> Option<ClaimedNode> {
        match self {
            Claimed::Many(all) => all.into_iter().next(),
            Claimed::One(one) => one,
        }
    }

    /// Every claim answered, in pick order.
    pub fn all(&self) -> Vec<ClaimedNode> {
        match self {
            Claimed::Many(all) => all.clone(),
            Claimed::One(one) => one.iter().cloned().collect(),
        }
    }
}

/// A claim granted (`claim`, and each node `claim-next` answers): the fencing token, and
/// what the node hands its new holder.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ClaimedNode {
    pub id: Id,
    pub generation: u64,
    /// True when this is the claim the actor already held (`resume`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub resumed: bool,
    /// The last checkpoint an earlier holder left (`renew --progress`), or null.
    #[serde(default)]
    pub progress: Option<String>,
    /// When that checkpoint was left (ms since the epoch), or null.
    #[serde(default)]
    pub progress_at: Option<Millis>,
    /// The output of every prerequisite that is done, by id (null for one that gave none).
    #[serde(default)]
    pub inputs: serde_json::Map<String, serde_json::Value>,
}

impl From<Grant> for ClaimedNode {
    fn from(g: Grant) -> ClaimedNode {
        ClaimedNode {
            id: g.id,
            generation: g.generation,
            resumed: g.resumed,
            progress: g.progress,
            progress_at: g.progress_at,
            inputs: g
                .inputs
                .into_iter()
                .map(|(id, o)| {
                    let v = o.as_deref().map(json_value);
                    (id.hex(), v.unwrap_or(serde_json::Value::Null))
                })
                .collect(),
        }
    }
}

impl Reply for ClaimedNode {
    fn text(&self) -> String {
        format!("gen={}\n", self.generation)
    }
}

/// A renewal (`renew`): the lease starts again; `cancel_requested` is set when the holder
/// was asked to stop.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Renewed {
    pub ok: bool,
    pub id: Id,
    /// Who asked this holder to stop, why and when; null when nobody did. The holder should
    /// stop and complete the node cancelled (or finish it).
    pub cancel_requested: Option<CancelRequest>,
}

impl Reply for Renewed {
    fn text(&self) -> String {
        match &self.cancel_requested {
            None => String::new(),
            Some(c) => text::cancel_request(self.id, c),
        }
    }
}

/// What `cancel` did: the node was cancelled, or its holder was asked to stop.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CancelReply {
    pub id: Id,
    /// `cancelled`, or `claimed` when the holder was asked to stop.
    pub status: Status,
    /// True when the node is claimed and its holder was asked to stop.
    pub requested: bool,
}

impl Reply for CancelReply {
    fn text(&self) -> String {
        match self.requested {
            true => format!("{}  cancel requested\n", self.id.short()),
            false => format!("{}  {}\n", self.id.short(), self.status),
        }
    }
}

/// Every node `complete_many` finished, in request order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(transparent)]
pub struct CompletedMany(pub Vec<Completed>);

impl Reply for CompletedMany {
    fn text(&self) -> String {
        self.0.iter().map(Reply::text).collect()
    }
    fn object_key() -> Option<&'static str> {
        Some("completed")
    }
}

impl Reply for Claimed {
    fn text(&self) -> String {
        self.all()
            .iter()
            .map(|c| format!("{}  gen={}\n", c.id, c.generation))
            .collect()
    }
    fn exit(&self) -> i32 {
        i32::from(self.first().is_none())
    }
    fn object_key() -> Option<&'static str> {
        Some("claimed")
    }
}

/// Nodes handed back and their new generations (`reclaim`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(transparent)]
pub struct HandedBack(pub Vec<Granted>);

impl Reply for HandedBack {
    fn text(&self) -> String {
        self.0
            .iter()
            .map(|g| format!("{}  todo  gen={}\n", g.id.short(), g.generation))
            .collect()
    }
    fn object_key() -> Option<&'static str> {
        Some("handed_back")
    }
}

/// A node and the status it reached (`complete`) or is back with (`unarchive`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Completed {
    pub id: Id,
    pub status: Status,
}

impl Reply for Completed {
    fn text(&self) -> String {
        format!("{}  {}\n", self.id.short(), self.status)
    }
}

/// Nodes with every field and their derived words (`list`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(transparent)]
pub struct Nodes(pub Vec<NodeView>);

impl Reply for Nodes {
    fn text(&self) -> String {
        text::list(&self.0)
    }
    fn object_key() -> Option<&'static str> {
        Some("nodes")
    }
}

impl Reply for NodeView {
    fn text(&self) -> String {
        text::show(self)
    }
}

/// The node `next` would pick, or nothing (exit 1, `null` in JSON).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(transparent)]
pub struct NextNode(pub Option<Upserted>);

impl Reply for NextNode {
    fn text(&self) -> String {
        self.0.as_ref().map(|n| n.text()).unwrap_or_default()
    }
    fn exit(&self) -> i32 {
        i32::from(self.0.is_none())
    }
    fn object_key() -> Option<&'static str> {
        Some("next")
    }
}

/// Whether work is left for a role (`pending`): how many nodes are ready now, and the
/// nodes whose ending may still make more ready (claims, and scheduled nodes, gates and
/// epics that will move on). `finished`: neither, so a worker may stop.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PendingNodes {
    pub ready: usize,
    pub pending: Vec<PendingNode>,
    pub finished: bool,
}

/// One node `pending` names.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PendingNode {
    pub id: Id,
    /// Its display word: claimed, scheduled, ready (a gate, or a node whose resource is
    /// held), todo (an epic).
    pub display: crate::model::DisplayWord,
    pub summary: String,
}

impl Reply for PendingNodes {
    fn text(&self) -> String {
        if self.finished {
            return "finished: nothing is ready and nothing pending can make a node ready\n".into();
        }
        let mut out = format!("{} ready now\n", self.ready);
        for n in &self.pending {
            out.push_str(&format!(
                "pending  {}  {}  {}\n",
                n.id.short(),
                n.display.as_str(),
                text::one_line(&n.summary)
            ));
        }
        out
    }
}

/// Ready nodes in the order `next` picks them, with their critical paths (`ready`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(transparent)]
pub struct Picks(pub Vec<Pick>);

impl Reply for Picks {
    fn text(&self) -> String {
        text::ready(&self.0)
    }
    fn object_key() -> Option<&'static str> {
        Some("ready")
    }
}

/// Transitions, oldest first (`log`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(transparent)]
pub struct History(pub Vec<HistoryLine>);

impl Reply for History {
    fn text(&self) -> String {
        text::log(&self.0)
    }
    fn object_key() -> Option<&'static str> {
        Some("events")
    }
}

/// One node of an imported plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ImportedNode {
    pub id: Id,
    pub key: String,
}

/// Every node of a plan, in plan order, with its key (`import`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(transparent)]
pub struct Imported(pub Vec<ImportedNode>);

impl Reply for Imported {
    fn text(&self) -> String {
        let mut out = String::with_capacity(self.0.len() * 48);
        for n in &self.0 {
            out.push_str(&format!("{}  {}\n", n.id, text::one_line(&n.key)));
        }
        out
    }
    fn object_key() -> Option<&'static str> {
        Some("nodes")
    }
}

/// How many nodes moved to the archive (`archive`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Archived {
    pub archived: usize,
}

impl Reply for Archived {
    fn text(&self) -> String {
        format!("archived {}\n", self.archived)
    }
}

/// The DAG drawn in a format (`graph`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Graphed {
    pub format: String,
    pub graph: String,
}

impl Reply for Graphed {
    fn text(&self) -> String {
        self.graph.clone()
    }
}

/// The settings (`config`); the text form shows one when one was asked for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SettingsReply {
    pub default_ttl_ms: u64,
    pub max_held: u64,
    pub max_attempts: Option<u32>,
    /// The first backoff of a handed-back node, doubled with each attempt (0: none).
    #[serde(default)]
    pub retry_delay_ms: u64,
    /// The longest backoff.
    #[serde(default = "default_retry_delay_max")]
    pub retry_delay_max_ms: u64,
    /// How much of the history stays live: `"all"`, a duration (`"7d"`) or a number of
    /// events (`"1000000"`).
    #[serde(default)]
    pub history_keep: crate::model::HistoryKeep,
    /// The pools' sizes and the rates' windows (`pool set`, `rate set`).
    #[serde(default, skip_serializing_if = "crate::model::Limits::is_empty")]
    pub limits: crate::model::Limits,
    /// `"cancel"`: the holder of a claim past its node's deadline is asked to stop;
    /// `"none"`: the node is only marked overdue.
    #[serde(default = "no_action")]
    pub deadline_action: String,
    /// The one setting the text form shows.
    #[serde(skip)]
    pub key: Option<String>,
}

fn no_action() -> String {
    "none".into()
}

fn default_retry_delay_max() -> u64 {
    crate::model::DEFAULT_RETRY_DELAY_MAX_MS
}

impl SettingsReply {
    pub fn of(s: &Settings, key: Option<&str>) -> SettingsReply {
        SettingsReply {
            default_ttl_ms: s.default_ttl_ms,
            max_held: s.max_held,
            max_attempts: s.max_attempts,
            retry_delay_ms: s.retry_delay_ms,
            retry_delay_max_ms: s.retry_delay_max_ms,
            history_keep: s.history_keep,
            limits: s.limits.clone(),
            deadline_action: if s.deadline_cancel { "cancel" } else { "none" }.into(),
            key: key.map(str::to_string),
        }
    }

    fn settings(&self) -> Settings {
        Settings {
            default_ttl_ms: self.default_ttl_ms,
            max_held: self.max_held,
            max_attempts: self.max_attempts,
            retry_delay_ms: self.retry_delay_ms,
            retry_delay_max_ms: self.retry_delay_max_ms,
            history_keep: self.history_keep,
            limits: self.limits.clone(),
            deadline_cancel: self.deadline_action == "cancel",
        }
    }
}

impl Reply for SettingsReply {
    fn text(&self) -> String {
        let s = self.settings();
        match &self.key {
            Some(k) => format!("{}\n", s.get(k).unwrap_or_default()),
            None => s
                .entries()
                .iter()
                .map(|(k, v)| format!("{k} {v}\n"))
                .collect(),
        }
    }
}

/// What `check` found (exit 6 when a problem was found).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CheckReport {
    pub ok: bool,
    pub nodes: usize,
    pub archived: usize,
    pub events: usize,
    pub problems: Vec<String>,
    pub notes: Vec<String>,
    /// What was read back whole (the text form says it).
    #[serde(skip)]
    pub intact: String,
}

impl From<crate::store::Report> for CheckReport {
    fn from(r: crate::store::Report) -> CheckReport {
        CheckReport {
            ok: r.problems.is_empty(),
            nodes: r.nodes,
            archived: r.archived,
            events: r.events,
            problems: r.problems,
            notes: r.notes,
            intact: r.intact.to_string(),
        }
    }
}

impl Reply for CheckReport {
    fn text(&self) -> String {
        let mut out = String::new();
        for p in &self.problems {
            out.push_str(&format!("problem: {p}\n"));
        }
        out.push_str(&format!(
            "{}: {} live nodes, {} archived, {} history events, {} intact\n",
            if self.ok { "ok" } else { "problems found" },
            self.nodes,
            self.archived,
            self.events,
            if self.intact.is_empty() {
                "store"
            } else {
                &self.intact
            }
        ));
        for n in &self.notes {
            out.push_str(&format!("note: {n}\n"));
        }
        out
    }
    fn exit(&self) -> i32 {
        if self.ok {
            0
        } else {
            6
        }
    }
}

/// The actor a name stands for (`actor NAME`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ActorId {
    pub actor: Actor,
}

impl Reply for ActorId {
    fn text(&self) -> String {
        format!("{}\n", self.actor)
    }
}

/// What `copy` moved from one store to another.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Copied {
    pub from: String,
    pub to: String,
    pub nodes: usize,
    pub archived: usize,
    pub events: usize,
    /// The number of the last write, the same in both stores.
    pub seq: u64,
}

impl Reply for Copied {
    fn text(&self) -> String {
        format!(
            "copied {} live nodes, {} archived, {} history events (write {}) from {} to {}\n",
            self.nodes, self.archived, self.events, self.seq, self.from, self.to
        )
    }
}

/// The store in use (`where`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Located {
    /// The directory, or the database URL without its password.
    pub store: String,
    /// `directory` or `postgres`.
    pub backend: String,
    /// `--dir`, `CLAIMDAG_DIR`, or `default` (neither given).
    pub chosen_by: String,
    /// False for a directory store not written yet (its first write makes it).
    pub exists: bool,
}

impl Reply for Located {
    fn text(&self) -> String {
        let why = match self.chosen_by.as_str() {
            "default" => "the default: no --dir and no CLAIMDAG_DIR",
            "CLAIMDAG_DIR" => "CLAIMDAG_DIR",
            _ => "--dir",
        };
        let made = if self.exists {
            ""
        } else {
            " (not written yet)"
        };
        format!(
            "{}{made}
{} store, chosen by {why}
",
            self.store, self.backend
        )
    }
}

/// How a node `claimdag work` ran ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The command exited 0 and the node was completed `done`.
    Done,
    /// The command failed and the node was completed `failed`.
    Failed,
    /// The command failed and the claim was handed back for another attempt
    /// (`--on-failure release`).
    Released,
    /// The lease was lost while the command ran: the command was stopped and the node,
    /// someone else's now, was left alone.
    Lost,
    /// The worker was told to stop: the command was stopped and the claim handed back.
    Interrupted,
    /// A cancel was requested of the holder: the command was stopped and the node
    /// completed `cancelled`.
    Cancelled,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Done => "done",
            Outcome::Failed => "failed",
            Outcome::Released => "released",
            Outcome::Lost => "lost",
            Outcome::Interrupted => "interrupted",
            Outcome::Cancelled => "cancelled",
        }
    }
}

/// One node `claimdag work` ran a command for, and how it ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Worked {
    pub id: Id,
    /// The generation the claim was granted: the command ran under it.
    pub generation: u64,
    pub summary: String,
    pub outcome: Outcome,
    /// The command's exit status, when it exited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// The signal that ended the command, when one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    /// From the claim to the outcome.
    pub duration_ms: u64,
}

impl Reply for Worked {
    /// `092dca29...  done            1.2s  parse the manifest header`, then `(exit 3)` or
    /// `(signal 9)` when the command did not exit 0.
    fn text(&self) -> String {
        let how = match (self.exit_code, self.signal) {
            (_, Some(s)) => format!("  (signal {s})"),
            (Some(c), None) if c != 0 => format!("  (exit {c})"),
            _ => String::new(),
        };
        let secs = self.duration_ms as f64 / 1000.0;
        format!(
            "{}  {:<11} {secs:>6.1}s  {}{how}\n",
            self.id.short(),
            self.outcome.as_str(),
            text::one_line(&self.summary)
        )
    }
}

/// A live claim and the resources it covers (`diff-check`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ClaimCover {
    pub id: Id,
    pub resources: Vec<String>,
}

/// A file git reports changed, and the claims that cover it (`diff-check`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ChangedFile {
    /// added, modified, deleted, renamed, copied, type_changed, unmerged or untracked.
    pub change: String,
    /// Relative to the top of the work tree.
    pub path: String,
    /// The path a renamed file had: it must be covered too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// The claims whose resources cover `path`.
    pub covered_by: Vec<Id>,
    /// True when `path` (and `from`) are covered.
    pub covered: bool,
}

/// What `diff-check` found: every changed file, and the paths no live claim of the actor
/// covers (exit 1 when there are some).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Coverage {
    pub actor: Actor,
    /// The commit the changes are counted from.
    pub base: String,
    /// The ref they are counted up to; none for the work tree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub head: Option<String>,
    pub files: Vec<ChangedFile>,
    /// Changed paths (a renamed file's old path included) that no live claim covers.
    pub uncovered: Vec<String>,
    /// The actor's live claims in the workspace and their resources.
    pub claims: Vec<ClaimCover>,
}

impl Reply for Coverage {
    fn text(&self) -> String {
        if self.uncovered.is_empty() {
            return format!(
                "{} changed file(s), all covered by {} live claim(s) of {}\n",
                self.files.len(),
                self.claims.len(),
                self.actor
            );
        }
        let mut out = format!(
            "{} changed path(s) not covered by a live claim of {}:\n",
            self.uncovered.len(),
            self.actor
        );
        for f in self.files.iter().filter(|f| !f.covered) {
            let path = match &f.from {
                Some(from) => format!("{} -> {}", text::one_line(from), text::one_line(&f.path)),
                None => text::one_line(&f.path),
            };
            out.push_str(&format!("  {:<9} {path}\n", f.change));
        }
        if self.claims.is_empty() {
            out.push_str("(the actor holds no live claim in this workspace)\n");
        }
        out
    }
    fn exit(&self) -> i32 {
        i32::from(!self.uncovered.is_empty())
    }
}
