//! The live state of a store, storage-agnostic: the settings, the live nodes (held, or
//! read from a frozen set with the changes since on top), the claims, the archive's stubs,
//! and the pick order, kept up to date by every change once it is built.

pub mod frozen;
pub mod holdings;
pub mod layered;

use crate::id::{Id, IdMap};
use crate::model::{ArchivedStub, Change, Millis, Node, Settings, Status};
use crate::schedule::pick_order::{Lazy, Lookup, PickOrder};
use frozen::{Damage, Frozen};
use layered::Layered;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

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
    slots: IdMap<usize>,
    claimed: BTreeSet<Id>,
    /// The `todo` nodes with a `not_before`, and its value.
    scheduled: BTreeMap<Id, Millis>,
    archived: IdMap<ArchivedStub>,
    /// The live nodes granted under a rate (`rate:NAME`), with their last grant.
    rated: BTreeMap<Id, Millis>,
    /// The unfinished nodes with a deadline not yet recorded as passed, and the deadline.
    due: Due,
    /// What claims hold, by what it names: built when first asked for, then kept up to
    /// date by every change.
    holdings: std::sync::OnceLock<holdings::Holdings>,
    /// The pick order, built when first asked for, then kept up to date by every change.
    order: Lazy,
    /// The live nodes, when they are a snapshot's plus the changes since.
    layered: Option<Layered>,
    /// Every live node of a layered state, once asked for.
    merged: std::sync::OnceLock<Vec<Node>>,
    /// Where each id is in `merged`, once a node is looked up after that: lookups read the
    /// nodes decoded there instead of decoding a second copy of each from the snapshot.
    merged_at: std::sync::OnceLock<IdMap<usize>>,
    /// The damage of the layered state this one settled from (see [`State::damage`]).
    damaged: Option<Damage>,
}

/// Two states are equal when they hold the same nodes, claims, archive and settings, however
/// they hold them.
impl PartialEq for State {
    fn eq(&self, other: &State) -> bool {
        self.settings == other.settings
            && self.claimed == other.claimed
            && self.scheduled == other.scheduled
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
        let mut slots = IdMap::with_capacity_and_hasher(nodes.len(), Default::default());
        let mut claimed = BTreeSet::new();
        let mut scheduled = BTreeMap::new();
        let mut rated = BTreeMap::new();
        let mut due = Due::default();
        let mut duplicates = false;
        for (i, n) in nodes.iter().enumerate() {
            due.put(n);
            if n.status == Status::Claimed {
                claimed.insert(n.id);
            }
            match n.rate_grants.last() {
                Some(&t) => rated.insert(n.id, t),
                None => rated.remove(&n.id),
            };
            if let Some(t) = scheduled_at(n) {
                scheduled.insert(n.id, t);
            } else {
                scheduled.remove(&n.id);
            }
            duplicates |= slots.insert(n.id, i).is_some();
        }
        if duplicates {
            // A later copy of an id replaces the earlier one; callers compare the counts.
            let mut seen = IdMap::with_capacity_and_hasher(slots.len(), Default::default());
            let mut i = nodes.len();
            while i > 0 {
                i -= 1;
                if seen.insert(nodes[i].id, ()).is_some() {
                    nodes.remove(i);
                }
            }
            slots = nodes.iter().enumerate().map(|(i, n)| (n.id, i)).collect();
        }
        State {
            settings,
            nodes,
            slots,
            claimed,
            scheduled,
            archived,
            rated,
            due,
            ..State::default()
        }
    }

    /// A state over a frozen set of nodes (a snapshot's), decoded when asked for.
    pub fn layered(
        settings: Settings,
        frozen: Arc<dyn Frozen>,
        claimed: BTreeSet<Id>,
        scheduled: BTreeMap<Id, Millis>,
        rated: BTreeMap<Id, Millis>,
        due: BTreeMap<Id, Millis>,
        archived: IdMap<ArchivedStub>,
    ) -> State {
        State {
            settings,
            claimed,
            scheduled,
            rated,
            due: Due::of(due),
            archived,
            layered: Some(Layered::new(frozen)),
            ..State::default()
        }
    }

    /// Why the snapshot this state reads its nodes from could not give one, if it could not
    /// (a page that fails its checksum or cannot be read, a node that does not decode):
    /// whatever was read or decided on this state is wrong. The
    /// store checks it after every read and decision on a state it loaded.
    pub fn damage(&self) -> Option<&Damage> {
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
    pub fn has_stored_order(&self) -> bool {
        self.layered.as_ref().is_some_and(|l| l.has_stored_order())
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
            self.slots = match self.merged_at.take() {
                Some(at) => at,
                None => index(&all),
            };
            self.nodes = all;
            self.layered = None;
        }
    }

    /// The pick order kept up to date as the state changes (built on the first call).
    pub fn pick_order(&self) -> &PickOrder {
        self.order.get(|| self.build_pick_order())
    }

    /// The pick order if it is built, or built now when this is the second time a pick
    /// asks for it ([`Lazy::warm`]) or the snapshot stores it; `None`: compute this pick
    /// from the nodes.
    pub fn pick_order_if_warm(&self) -> Option<&PickOrder> {
        if self.has_stored_order() {
            return Some(self.pick_order());
        }
        self.order.warm(|| self.build_pick_order())
    }

    /// The pick order to store in a snapshot of this state: the one kept up to date if it is
    /// built, else one built for the write alone (so that writing a snapshot does not make
    /// every later change of this state keep an index up to date).
    pub fn pick_order_to_store(&self) -> std::borrow::Cow<'_, PickOrder> {
        match self.order.peek() {
            Some(ix) => std::borrow::Cow::Borrowed(ix),
            None => std::borrow::Cow::Owned(self.build_pick_order()),
        }
    }

    /// The pick order the snapshot stores, brought up to date, or else one built from the
    /// nodes.
    fn build_pick_order(&self) -> PickOrder {
        match self.layered.as_ref().and_then(|l| l.stored_order(self)) {
            Some(ix) => ix,
            None => PickOrder::build(self.nodes(), self),
        }
    }

    /// Live nodes in creation order.
    pub fn nodes(&self) -> &[Node] {
        match &self.layered {
            Some(l) => self.merged.get_or_init(|| l.all()),
            None => &self.nodes,
        }
    }

    /// The frozen nodes with the changes since, while this state reads its nodes through
    /// them and has not decoded them all (a snapshot writer then copies the bytes of the
    /// unchanged ones).
    pub fn frozen_layer(&self) -> Option<&Layered> {
        match (&self.layered, self.merged.get()) {
            (Some(l), None) => Some(l),
            _ => None,
        }
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
        match (&self.layered, self.merged.get()) {
            (Some(_), Some(all)) => self
                .merged_at
                .get_or_init(|| index(all))
                .get(id)
                .map(|&i| &all[i]),
            (Some(l), None) => l.get(id),
            (None, _) => self.slots.get(id).map(|&i| &self.nodes[i]),
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

    /// The `todo` nodes that have a `not_before` (passed or still to come), with it.
    pub fn scheduled(&self) -> &BTreeMap<Id, Millis> {
        &self.scheduled
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
                    None => (0, *self.slots.get(id)? as u64),
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

    /// The live nodes granted under a rate, with their last grant.
    pub fn rated(&self) -> &BTreeMap<Id, Millis> {
        &self.rated
    }

    /// The unfinished nodes with a deadline not yet recorded as passed, with it.
    pub fn due(&self) -> &BTreeMap<Id, Millis> {
        &self.due.by_id
    }

    /// The nodes of [`State::due`] whose deadline is `now` or earlier, earliest first.
    pub fn due_by(&self, now: Millis) -> impl Iterator<Item = Id> + '_ {
        self.due.by_time.range(..=(now, Id([u8::MAX; 16]))).map(|(_, id)| *id)
    }

    /// What the claims hold and the rates granted, by what they name (built at the first
    /// call from the claimed and rated nodes alone).
    pub fn holdings(&self) -> &holdings::Holdings {
        self.holdings.get_or_init(|| {
            let mut h = holdings::Holdings::default();
            for id in self.claimed.iter().chain(self.rated.keys()) {
                if let Some(n) = self.get(id) {
                    h.update(n);
                }
            }
            h
        })
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
        let old = self.replace(node, self.order.peek().is_some());
        if let Some(mut ix) = self.order.take() {
            if let Some(new) = self.get(&id) {
                ix.update(self, old.as_ref(), new);
            }
            self.order.put(ix);
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
        match scheduled_at(&node) {
            Some(t) => self.scheduled.insert(node.id, t),
            None => self.scheduled.remove(&node.id),
        };
        match node.rate_grants.last() {
            Some(&t) => self.rated.insert(node.id, t),
            None => self.rated.remove(&node.id),
        };
        self.due.put(&node);
        if let Some(h) = self.holdings.get_mut() {
            h.update(&node);
        }
        self.archived.remove(&node.id);
        if let Some(l) = self.layered.as_mut() {
            return l.replace(node, old);
        }
        match self.slots.get(&node.id) {
            Some(&i) => Some(std::mem::replace(&mut self.nodes[i], node)),
            None => {
                self.slots.insert(node.id, self.nodes.len());
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
            self.scheduled.remove(&n.id);
            self.rated.remove(&n.id);
            self.due.remove(&n.id);
            if let Some(h) = self.holdings.get_mut() {
                h.remove(&n.id);
            }
            if let Some(ix) = self.order.get_mut() {
                ix.remove(n);
            }
        }
        if let Some(l) = self.layered.as_mut() {
            l.remove(nodes.iter().map(|n| &n.id));
            return;
        }
        self.nodes.retain(|n| !self.archived.contains_key(&n.id));
        self.slots.clear();
        for (i, n) in self.nodes.iter().enumerate() {
            self.slots.insert(n.id, i);
        }
    }

    /// Applies a committed change.
    pub fn apply(&mut self, change: &Change) {
        if change.nodes.len() > BATCH {
            // Many nodes at once (an import): the pick order is brought up to date once,
            // after all of them are in.
            let order = self.order.take();
            let want = order.is_some();
            let olds: Vec<(Option<Node>, Id)> = change
                .nodes
                .iter()
                .map(|n| (self.replace(n.clone(), want), n.id))
                .collect();
            if let Some(mut ix) = order {
                ix.update_batch(self, &olds);
                self.order.put(ix);
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
                if let Some(mut ix) = self.order.take() {
                    ix.settings_changed(self, self.nodes());
                    self.order.put(ix);
                }
            }
        }
    }
}

/// Where each node is in `nodes`.
fn index(nodes: &[Node]) -> IdMap<usize> {
    nodes.iter().enumerate().map(|(i, n)| (n.id, i)).collect()
}

/// A `todo` node's `not_before`, which [`State::scheduled`] keeps.
fn scheduled_at(n: &Node) -> Option<Millis> {
    match n.status {
        Status::Todo => n.not_before,
        _ => None,
    }
}

/// The nodes still to be recorded overdue, by id and by deadline.
#[derive(Debug, Clone, Default)]
struct Due {
    by_id: BTreeMap<Id, Millis>,
    by_time: BTreeSet<(Millis, Id)>,
}

impl Due {
    fn of(by_id: BTreeMap<Id, Millis>) -> Due {
        let by_time = by_id.iter().map(|(id, t)| (*t, *id)).collect();
        Due { by_id, by_time }
    }

    fn put(&mut self, n: &Node) {
        self.remove(&n.id);
        if let (Some(t), None, false) = (n.deadline, n.overdue_at, n.status.is_terminal()) {
            self.by_id.insert(n.id, t);
            self.by_time.insert((t, n.id));
        }
    }

    fn remove(&mut self, id: &Id) {
        if let Some(t) = self.by_id.remove(id) {
            self.by_time.remove(&(t, *id));
        }
    }
}
