//! The seam between the state and a store's own format: a set of nodes frozen at a point
//! (a snapshot), which the state reads one node at a time and overlays with the changes
//! since (`Layered`). The directory store's paged snapshot reader is the
//! one implementation.

use crate::id::Id;
use crate::model::Node;
use crate::schedule::pick_order::PickOrder;

/// Why a frozen set of nodes could not give what it was asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Damage {
    pub why: String,
    /// An I/O error (not corruption).
    pub io: bool,
}

/// Nodes frozen at a point, sorted by id into entries, read and decoded when asked for.
/// A node that cannot be read or decoded is `None` and damages the set ([`Frozen::damage`]):
/// whatever was read or decided on it is then wrong, and the store says so.
pub trait Frozen: std::fmt::Debug + Send + Sync {
    /// How many nodes (entries).
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The entry of `id`.
    fn find(&self, id: &Id) -> Option<usize>;
    /// The node of entry `e`, decoded once.
    fn node(&self, e: usize) -> Option<&Node>;
    /// The id of entry `e`.
    fn id(&self, e: usize) -> Option<Id>;
    /// Checks that entry `e`'s bytes read soundly, without decoding it.
    fn check_entry(&self, e: usize);
    /// Where entry `e` stands in creation order.
    fn position(&self, e: usize) -> Option<u64>;
    /// Every node, in creation order.
    fn all(&self) -> Vec<Node>;
    /// The first entry whose id is not below `prefix` (lowercase hex).
    fn first_at_or_after(&self, prefix: &str) -> usize;
    /// True when entry `e`'s id starts with `prefix`.
    fn entry_starts_with(&self, e: usize, prefix: &str) -> bool;
    /// Why something asked for could not be given, if it could not.
    fn damage(&self) -> Option<&Damage>;
    /// Reads everything and checks it (`check`); what does not match shows in `damage`.
    fn verify(&self);
    /// True when the set carries its pick order.
    fn has_stored_order(&self) -> bool;
    /// The pick order it carries, as of when it was frozen: `None` when it has none, or it
    /// was decided under another `max_attempts` (one that does not read damages the set).
    fn stored_order(&self, max_attempts: Option<u32>) -> Option<PickOrder>;
    /// The concrete set, for the store that made it (to copy its bytes through).
    fn as_any(&self) -> &dyn std::any::Any;
}
