//! The data: nodes, statuses, settings, history events and the in-memory state of a store.
//! Nothing here decides what is allowed; that is `rules`.

use crate::id::{Actor, Id, IdMap};
use crate::schedule::index::{Index, Lazy, Lookup};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// Milliseconds since the Unix epoch.
pub type Millis = u64;

/// Default lease: 15 minutes.
pub const DEFAULT_TTL_MS: u64 = 15 * 60 * 1000;
/// Longest summary, in bytes, after trimming.
pub const MAX_SUMMARY_BYTES: usize = 4096;

/// The stored status of a node (SPEC section 2).
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

/// The derived display word (SPEC section 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Display {
    Ready,
    Blocked,
    Todo,
    Claimed,
    Expired,
    Done,
    Failed,
    Cancelled,
}

impl Display {
    pub fn as_str(self) -> &'static str {
        match self {
            Display::Ready => "ready",
            Display::Blocked => "blocked",
            Display::Todo => "todo",
            Display::Claimed => "claimed",
            Display::Expired => "expired",
            Display::Done => "done",
            Display::Failed => "failed",
            Display::Cancelled => "cancelled",
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
    #[serde(default, rename = "ref", skip_serializing_if = "Option::is_none")]
    pub ref_: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_by: Option<Actor>,
    /// The holder whose claim was last handed back (released, expired or reclaimed): its
    /// renew, release and complete are `stale_generation`, with or without a generation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_holder: Option<Actor>,
    pub created_at: Millis,
    pub updated_at: Millis,
    #[serde(default, skip_serializing_if = "is_false")]
    pub archived: bool,
}

impl Node {
    /// A new node: `todo`, generation 1, no attempts, every other field at its default.
    pub fn todo(id: Id, kind: String, summary: String, now: Millis) -> Node {
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
            ref_: None,
            note: None,
            completed_by: None,
            last_holder: None,
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

    /// Every prerequisite, hard ones first, with `true` for soft ones.
    pub fn prerequisites(&self) -> impl Iterator<Item = (Id, bool)> + '_ {
        self.deps
            .iter()
            .map(|d| (*d, false))
            .chain(self.soft_deps.iter().map(|d| (*d, true)))
    }
}

/// Store settings (SPEC section 1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Settings {
    pub default_ttl_ms: u64,
    /// Live claims one actor may hold in a workspace; 0 = no limit.
    pub max_held: u64,
    pub max_attempts: Option<u32>,
}

impl Settings {
    /// The settings' names, as `config` shows them.
    pub const KEYS: [&'static str; 3] = ["default_ttl", "max_held", "max_attempts"];

    /// Every setting as `config` shows it: `default_ttl 15m`, `max_held 1`, `max_attempts none`.
    pub fn entries(&self) -> Vec<(&'static str, String)> {
        let max_attempts = self
            .max_attempts
            .map(|m| m.to_string())
            .unwrap_or_else(|| "none".into());
        vec![
            (
                "default_ttl",
                crate::duration::format_ms(self.default_ttl_ms),
            ),
            ("max_held", self.max_held.to_string()),
            ("max_attempts", max_attempts),
        ]
    }

    /// One setting as `config KEY` shows it.
    pub fn get(&self, key: &str) -> crate::Result<String> {
        Settings::check_key(key)?;
        Ok(self
            .entries()
            .into_iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v)
            .unwrap_or_default())
    }

    /// Sets one setting from its text form (`config KEY VALUE`); the rules validate the
    /// result when it is committed.
    pub fn set(&mut self, key: &str, value: &str) -> crate::Result<()> {
        Settings::check_key(key)?;
        let v = value.trim();
        let whole =
            |what: &str| crate::Error::invalid(format!("{key} must be {what}, got {value:?}"));
        match key {
            "default_ttl" => self.default_ttl_ms = crate::duration::parse_ms(v)?,
            "max_held" => {
                self.max_held = v
                    .parse()
                    .map_err(|_| whole("a whole number (0 = no limit)"))?
            }
            _ => {
                self.max_attempts = match v {
                    "none" => None,
                    _ => Some(v.parse().map_err(|_| whole("a whole number or none"))?),
                }
            }
        }
        Ok(())
    }

    fn check_key(key: &str) -> crate::Result<()> {
        if Settings::KEYS.contains(&key) {
            Ok(())
        } else {
            Err(crate::Error::invalid(format!(
                "unknown setting {key:?}: the settings are {}",
                Settings::KEYS.join(", ")
            )))
        }
    }
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            default_ttl_ms: DEFAULT_TTL_MS,
            max_held: 1,
            max_attempts: None,
        }
    }
}

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
    #[serde(default)]
    generation: Option<u64>,
    #[serde(default)]
    detail: Option<String>,
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
            event: Event {
                at: w.at,
                verb: w.verb,
                node: w.node,
                actor: w.actor,
                generation: w.generation,
                detail: w.detail,
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
        if let Some(g) = &e.generation {
            m.serialize_entry("generation", g)?;
        }
        if let Some(d) = &e.detail {
            m.serialize_entry("detail", d)?;
        }
        m.end()
    }
}

/// What stays in the live state of an archived node: enough for a node waiting on it to know
/// how it ended, which workspace it belongs to (links never cross workspaces), and the
/// generation it was archived at (an unarchive restores exactly that node, never an older
/// copy). The node itself lives in the archive.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArchivedStub {
    pub status: Status,
    /// 0 only in stubs read from a snapshot of format 1, until they are completed from the
    /// archive (see `store::snapshot`).
    #[serde(default)]
    pub generation: u64,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub workspace: String,
}

impl ArchivedStub {
    pub fn of(node: &Node) -> ArchivedStub {
        ArchivedStub {
            status: node.status,
            generation: node.generation,
            workspace: node.workspace.clone(),
        }
    }
}

/// A change of more nodes than this updates the pick order in one pass.
const BATCH: usize = 8;

/// The whole live state of a store, as the rules see it.
///
/// A state read from a snapshot that carries an index keeps the snapshot's nodes as bytes
/// and decodes one when it is first asked for (`layered`); the first call that needs every
/// node at once ([`State::nodes`]) decodes them all, and the next change makes the state an
/// ordinary one holding every node.
#[derive(Debug, Clone, Default)]
pub struct State {
    pub settings: Settings,
    /// Every live node, in creation order (unless `layered`).
    nodes: Vec<Node>,
    index: IdMap<usize>,
    claimed: BTreeSet<Id>,
    archived: IdMap<ArchivedStub>,
    /// The pick order, built when first asked for, then kept up to date by every change.
    sched: Lazy,
    /// The live nodes, when they are a snapshot's plus the changes since.
    layered: Option<crate::base::Layered>,
    /// Every live node of a layered state, once asked for.
    merged: std::sync::OnceLock<Vec<Node>>,
    /// The damage of the layered state this one settled from (see [`State::damage`]).
    damaged: Option<crate::base::Damage>,
}

/// Two states are equal when they hold the same nodes, claims, archive and settings, however
/// they hold them.
impl PartialEq for State {
    fn eq(&self, other: &State) -> bool {
        self.settings == other.settings
            && self.claimed == other.claimed
            && self.archived == other.archived
            && self.nodes() == other.nodes()
    }
}

impl Eq for State {}

impl Lookup for State {
    fn node(&self, id: &Id) -> Option<&Node> {
        self.get(id)
    }
    fn status(&self, id: &Id) -> Option<Status> {
        self.status_of(id)
    }
    fn settings(&self) -> &Settings {
        &self.settings
    }
}

impl State {
    pub fn new(settings: Settings) -> State {
        State {
            settings,
            ..State::default()
        }
    }

    /// Builds a state from stored parts (a snapshot).
    pub fn from_parts(
        settings: Settings,
        mut nodes: Vec<Node>,
        archived: IdMap<ArchivedStub>,
    ) -> State {
        let mut index = IdMap::with_capacity_and_hasher(nodes.len(), Default::default());
        let mut claimed = BTreeSet::new();
        let mut duplicates = false;
        for (i, n) in nodes.iter().enumerate() {
            if n.status == Status::Claimed {
                claimed.insert(n.id);
            }
            duplicates |= index.insert(n.id, i).is_some();
        }
        if duplicates {
            // A later copy of an id replaces the earlier one; callers compare the counts.
            let mut seen = IdMap::with_capacity_and_hasher(index.len(), Default::default());
            let mut i = nodes.len();
            while i > 0 {
                i -= 1;
                if seen.insert(nodes[i].id, ()).is_some() {
                    nodes.remove(i);
                }
            }
            index = nodes.iter().enumerate().map(|(i, n)| (n.id, i)).collect();
        }
        State {
            settings,
            nodes,
            index,
            claimed,
            archived,
            ..State::default()
        }
    }

    /// A state over a snapshot's nodes, decoded when asked for (see [`crate::base`]).
    pub fn layered(
        settings: Settings,
        base: crate::base::Base,
        claimed: BTreeSet<Id>,
        archived: IdMap<ArchivedStub>,
    ) -> State {
        State {
            settings,
            claimed,
            archived,
            layered: Some(crate::base::Layered::new(base)),
            ..State::default()
        }
    }

    /// Why the snapshot this state reads its nodes from could not give one, if it could not
    /// (a page that fails its checksum or cannot be read, a node that does not decode):
    /// whatever was read or decided on this state is wrong. The
    /// store checks it after every read and decision on a state it loaded.
    pub fn damage(&self) -> Option<&crate::base::Damage> {
        match &self.layered {
            Some(l) => l.damage(),
            None => self.damaged.as_ref(),
        }
    }

    /// Reads every page of the snapshot this state reads its nodes from and checks its index
    /// (`check`); what does not match shows in [`State::damage`].
    pub fn verify_snapshot(&self) {
        if let Some(l) = &self.layered {
            l.verify();
        }
    }

    /// True while the state reads its nodes from a snapshot that stores its pick order.
    pub fn has_stored_pick(&self) -> bool {
        self.layered.as_ref().is_some_and(|l| l.has_stored_pick())
    }

    /// True while the state decodes its nodes from a snapshot's bytes as they are asked for.
    pub fn is_layered(&self) -> bool {
        self.layered.is_some()
    }

    /// Makes a layered state whose nodes were all decoded an ordinary one (before a change).
    fn settle(&mut self) {
        if self.layered.is_none() {
            return;
        }
        if let Some(all) = self.merged.take() {
            self.damaged = self.damage().cloned();
            self.index = all.iter().enumerate().map(|(i, n)| (n.id, i)).collect();
            self.nodes = all;
            self.layered = None;
        }
    }

    /// The pick order kept up to date as the state changes (built on the first call).
    pub fn schedule(&self) -> &Index {
        self.sched.get(|| self.build_schedule())
    }

    /// The pick order if it is built, or built now when this is the second time a pick
    /// asks for it ([`Lazy::warm`]) or the snapshot stores it; `None`: compute this pick
    /// from the nodes.
    pub fn schedule_if_warm(&self) -> Option<&Index> {
        if self.has_stored_pick() {
            return Some(self.schedule());
        }
        self.sched.warm(|| self.build_schedule())
    }

    /// The pick order to store in a snapshot of this state: the one kept up to date if it is
    /// built, else one built for the write alone (so that writing a snapshot does not make
    /// every later change of this state keep an index up to date).
    pub fn schedule_to_store(&self) -> std::borrow::Cow<'_, Index> {
        match self.sched.peek() {
            Some(ix) => std::borrow::Cow::Borrowed(ix),
            None => std::borrow::Cow::Owned(self.build_schedule()),
        }
    }

    /// The pick order the snapshot stores, brought up to date, or else one built from the
    /// nodes.
    fn build_schedule(&self) -> Index {
        match self.layered.as_ref().and_then(|l| l.stored_pick(self)) {
            Some(ix) => ix,
            None => Index::build(self.nodes(), self),
        }
    }

    /// Live nodes in creation order.
    pub fn nodes(&self) -> &[Node] {
        match &self.layered {
            Some(l) => self.merged.get_or_init(|| l.all()),
            None => &self.nodes,
        }
    }

    /// Every live node in creation order, for a snapshot writer: one read through a
    /// snapshot's index and not changed since comes as its bytes in that snapshot when
    /// those read as they should ([`crate::base::Layered::pieces`]); the others as values.
    /// When the snapshot's nodes cannot be read the state is damaged and `f` may not have
    /// seen every node.
    pub fn pieces(
        &self,
        f: &mut dyn FnMut(crate::base::Piece<'_>) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        if let (Some(l), None) = (&self.layered, self.merged.get()) {
            if l.pieces(f)? {
                return Ok(());
            }
        }
        for n in self.nodes() {
            f(crate::base::Piece::Node(n))?;
        }
        Ok(())
    }

    pub fn len(&self) -> usize {
        match &self.layered {
            Some(l) => l.len(),
            None => self.nodes.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn get(&self, id: &Id) -> Option<&Node> {
        match &self.layered {
            Some(l) => l.get(id),
            None => self.index.get(id).map(|&i| &self.nodes[i]),
        }
    }

    /// The ids of live nodes that start with `prefix` (lowercase hex), at most `most`.
    pub fn ids_with_prefix(&self, prefix: &str, most: usize) -> Vec<Id> {
        match &self.layered {
            Some(l) => l.with_prefix(prefix, most),
            None => self
                .nodes
                .iter()
                .map(|n| n.id)
                .filter(|id| id.starts_with_hex(prefix))
                .take(most)
                .collect(),
        }
    }

    /// Ids of nodes whose stored status is `claimed` (live or expired).
    pub fn claimed_ids(&self) -> &BTreeSet<Id> {
        &self.claimed
    }

    /// The nodes whose stored status is `claimed` (live or expired), in creation order: what
    /// `list --status claimed` walks instead of every node.
    pub fn claimed_nodes(&self) -> Vec<&Node> {
        let mut at: Vec<((u8, u64), &Node)> = self
            .claimed
            .iter()
            .filter_map(|id| {
                let n = self.get(id)?;
                let place = match &self.layered {
                    Some(l) => l.position(id)?,
                    None => (0, *self.index.get(id)? as u64),
                };
                Some((place, n))
            })
            .collect();
        at.sort_unstable_by_key(|(place, _)| *place);
        at.into_iter().map(|(_, n)| n).collect()
    }

    pub fn archived(&self) -> &IdMap<ArchivedStub> {
        &self.archived
    }

    /// How a prerequisite stands: its status when live or archived, `None` when unknown.
    pub fn status_of(&self, id: &Id) -> Option<Status> {
        self.get(id)
            .map(|n| n.status)
            .or_else(|| self.archived.get(id).map(|a| a.status))
    }

    /// The workspace of a live or archived node, `None` when unknown.
    pub fn workspace_of(&self, id: &Id) -> Option<&str> {
        self.get(id)
            .map(|n| n.workspace.as_str())
            .or_else(|| self.archived.get(id).map(|a| a.workspace.as_str()))
    }

    /// Completes stubs read from an older snapshot with the archived nodes' own values.
    pub fn complete_stubs(&mut self, archive: &dyn Fn(&Id) -> Option<Node>) {
        for (id, stub) in self.archived.iter_mut() {
            if stub.generation == 0 {
                if let Some(n) = archive(id) {
                    *stub = ArchivedStub::of(&n);
                }
            }
        }
    }

    /// True when some archived stub still lacks its generation (an older snapshot).
    pub fn has_incomplete_stubs(&self) -> bool {
        self.archived.values().any(|s| s.generation == 0)
    }

    /// Inserts or replaces a node, keeping creation order for new ones.
    pub fn put(&mut self, node: Node) {
        let id = node.id;
        let old = self.replace(node, self.sched.peek().is_some());
        if let Some(mut ix) = self.sched.take() {
            if let Some(new) = self.get(&id) {
                ix.update(self, old.as_ref(), new);
            }
            self.sched.put(ix);
        }
    }

    /// Puts `node` in place of its live value (or after the others, and out of the
    /// archive); returns the value it replaced, which a state read through a snapshot's
    /// index decodes only when `old` (a built pick order needs it). The pick order is the
    /// caller's to update.
    fn replace(&mut self, node: Node, old: bool) -> Option<Node> {
        self.settle();
        if node.status == Status::Claimed {
            self.claimed.insert(node.id);
        } else {
            self.claimed.remove(&node.id);
        }
        self.archived.remove(&node.id);
        if let Some(l) = self.layered.as_mut() {
            return l.replace(node, old);
        }
        match self.index.get(&node.id) {
            Some(&i) => Some(std::mem::replace(&mut self.nodes[i], node)),
            None => {
                self.index.insert(node.id, self.nodes.len());
                self.nodes.push(node);
                None
            }
        }
    }

    /// Moves nodes out of the live state, keeping a stub of each.
    pub fn archive(&mut self, nodes: &[Node]) {
        if nodes.is_empty() {
            return;
        }
        self.settle();
        for n in nodes {
            self.archived.insert(n.id, ArchivedStub::of(n));
            self.claimed.remove(&n.id);
            if let Some(ix) = self.sched.get_mut() {
                ix.remove(n);
            }
        }
        if let Some(l) = self.layered.as_mut() {
            l.remove(nodes.iter().map(|n| &n.id));
            return;
        }
        self.nodes.retain(|n| !self.archived.contains_key(&n.id));
        self.index.clear();
        for (i, n) in self.nodes.iter().enumerate() {
            self.index.insert(n.id, i);
        }
    }

    /// Applies a committed change.
    pub fn apply(&mut self, change: &Change) {
        if change.nodes.len() > BATCH {
            // Many nodes at once (an import): the pick order is brought up to date once,
            // after all of them are in.
            let sched = self.sched.take();
            let want = sched.is_some();
            let olds: Vec<(Option<Node>, Id)> = change
                .nodes
                .iter()
                .map(|n| (self.replace(n.clone(), want), n.id))
                .collect();
            if let Some(mut ix) = sched {
                ix.update_batch(self, &olds);
                self.sched.put(ix);
            }
        } else {
            for n in &change.nodes {
                self.put(n.clone());
            }
        }
        self.archive(&change.archived);
        if let Some(s) = &change.settings {
            let cap_moved = s.max_attempts != self.settings.max_attempts;
            self.settings = s.clone();
            if cap_moved {
                if let Some(mut ix) = self.sched.take() {
                    ix.settings_changed(self, self.nodes());
                    self.sched.put(ix);
                }
            }
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
