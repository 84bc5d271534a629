//! Whether a `todo` node is ready: its prerequisites and its attempt cap (docs/reference.md,
//! "Display words").

use crate::id::Id;
use crate::model::{Millis, Node, Settings, Status};

/// Why a `todo` node is or is not ready.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Readiness {
    Ready,
    /// Hard prerequisites that ended `failed` or `cancelled`.
    Blocked(Vec<Id>),
    /// Prerequisites still open (or unknown).
    Waiting(Vec<Id>),
    OutOfAttempts {
        attempts: u32,
        max_attempts: u32,
    },
    /// Ready but for its `not_before`, still to come: not granted before this time.
    Scheduled(Millis),
    /// A gate (kind `gate`) whose prerequisites are done: a person approves or rejects it;
    /// it is never offered or claimed.
    Gate,
    /// A container (kind `epic`): never offered or claimed; it finishes when its children
    /// have, `open` of `total` still unfinished.
    Container { open: u64, total: u64 },
}

impl Readiness {
    /// A sentence for `show` and for `not_ready` errors.
    pub fn explain(&self) -> String {
        let ids = |v: &[Id]| v.iter().map(|i| i.hex()).collect::<Vec<_>>().join(", ");
        match self {
            Readiness::Ready => "ready".to_string(),
            Readiness::Blocked(v) => format!(
                "blocked: prerequisite(s) ended failed or cancelled: {}",
                ids(v)
            ),
            Readiness::Waiting(v) => format!("waiting on open prerequisite(s): {}", ids(v)),
            Readiness::OutOfAttempts {
                attempts,
                max_attempts,
            } => format!("out of attempts ({attempts} of {max_attempts})"),
            Readiness::Scheduled(t) => format!(
                "scheduled: not before {}",
                crate::duration::format_time(*t)
            ),
            Readiness::Gate => {
                "a gate, waiting for a person: approve or reject it, never claim it".to_string()
            }
            Readiness::Container { open, total } => format!(
                "a container: it finishes when its children have ({open} of {total} open), never claimed"
            ),
        }
    }
}

/// The attempt cap of a node: its own, else the store's.
pub fn attempt_cap(settings: &Settings, node: &Node) -> Option<u32> {
    node.max_attempts.or(settings.max_attempts)
}

/// `(attempts, cap)` when `node` has used every attempt its cap allows: it is not granted
/// again.
pub fn out_of_attempts(settings: &Settings, node: &Node) -> Option<(u32, u32)> {
    attempt_cap(settings, node)
        .filter(|cap| node.attempts >= *cap)
        .map(|cap| (node.attempts, cap))
}

/// Readiness of a `todo` node, given how to look up a prerequisite's status.
pub fn readiness(
    status_of: &dyn Fn(&Id) -> Option<Status>,
    settings: &Settings,
    node: &Node,
) -> Readiness {
    if crate::model::is_container(&node.kind) {
        let c = node.children.unwrap_or_default();
        return Readiness::Container {
            open: c.open(),
            total: c.total,
        };
    }
    let mut blocked = Vec::new();
    let mut waiting = Vec::new();
    for (dep, soft) in node.prerequisites() {
        match status_of(&dep) {
            Some(Status::Done) => {}
            Some(s) if soft && s.is_terminal() => {}
            Some(Status::Failed | Status::Cancelled) => blocked.push(dep),
            _ => waiting.push(dep),
        }
    }
    if !blocked.is_empty() {
        return Readiness::Blocked(blocked);
    }
    if !waiting.is_empty() {
        return Readiness::Waiting(waiting);
    }
    if node.kind == GATE {
        return Readiness::Gate;
    }
    if let Some((attempts, max_attempts)) = out_of_attempts(settings, node) {
        return Readiness::OutOfAttempts {
            attempts,
            max_attempts,
        };
    }
    Readiness::Ready
}

pub use crate::model::GATE;

/// [`readiness`] at time `now`: a node ready but for a `not_before` still to come is
/// [`Readiness::Scheduled`].
pub fn readiness_at(
    status_of: &dyn Fn(&Id) -> Option<Status>,
    settings: &Settings,
    node: &Node,
    now: Millis,
) -> Readiness {
    match readiness(status_of, settings, node) {
        Readiness::Ready => match node.scheduled_after(now) {
            Some(t) => Readiness::Scheduled(t),
            None => Readiness::Ready,
        },
        r => r,
    }
}
