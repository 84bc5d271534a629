//! The named queries every front door asks, pure functions of one consistent [`Reading`]: a
//! node, a filtered list, a page of a workspace, the ready nodes with their critical paths,
//! the claims an actor holds, and resolving a node argument.

use super::backend::Reading;
use crate::error::{Error, Result};
use crate::id::{Actor, Id};
use crate::model::{DisplayWord, Millis, Node};
use crate::rules;
use crate::schedule::{self, Pick};
use crate::view::NodeView;

/// The words `list --status` takes: stored statuses and display words, and `overdue`
/// (the unfinished nodes past their deadline, whatever their word).
pub const STATUS_WORDS: [&str; 11] = [
    "todo",
    "ready",
    "scheduled",
    "blocked",
    "parked",
    "claimed",
    "expired",
    "done",
    "failed",
    "cancelled",
    "overdue",
];

/// Which nodes `list` shows.
#[derive(Debug, Clone, Default)]
pub struct ListFilter {
    /// Only this workspace; `None` for every workspace.
    pub workspace: Option<String>,
    /// A stored status or a display word (`ready`, `blocked`, `expired`, ...).
    pub status: Option<String>,
    pub holder: Option<Actor>,
    /// Include finished nodes.
    pub terminal: bool,
    /// Include archived nodes.
    pub archived: bool,
    /// Show archived nodes only.
    pub only_archived: bool,
    /// Only ready (`Some(true)`) or only not ready (`Some(false)`) nodes.
    pub ready: Option<bool>,
}

impl ListFilter {
    /// Refuses a status word `list` does not know.
    pub fn check(&self) -> Result<()> {
        if let Some(w) = &self.workspace {
            rules::validate_workspace(w)?;
        }
        match &self.status {
            Some(st) if !STATUS_WORDS.contains(&st.as_str()) => Err(Error::invalid(format!(
                "unknown status {st:?}: use one of {}",
                STATUS_WORDS.join(", ")
            ))),
            _ => Ok(()),
        }
    }
}

/// A live or archived node with its derived words.
pub(super) fn node_view(v: &Reading<'_>, id: &Id) -> Option<NodeView> {
    v.state
        .get(id)
        .or_else(|| v.archived.iter().find(|n| n.id == *id))
        .map(|n| NodeView::of(v.state, n, v.now))
}

pub(super) fn list(v: &Reading<'_>, filter: &ListFilter) -> Vec<NodeView> {
    // Only a node stored as `claimed` shows as `claimed` or `expired`: walk the claims, not
    // the whole DAG.
    let claims_only = matches!(filter.status.as_deref(), Some("claimed" | "expired"));
    let live: Box<dyn Iterator<Item = &Node>> = match (filter.only_archived, claims_only) {
        (true, _) => Box::new(std::iter::empty()),
        (false, true) => Box::new(v.state.claimed_nodes().into_iter()),
        (false, false) => Box::new(v.state.nodes().iter()),
    };
    live.chain(v.archived.iter())
        .filter(|n| filter.workspace.as_deref().is_none_or(|w| n.workspace == w))
        .filter(|n| filter.holder.is_none_or(|h| n.holder == Some(h)))
        .map(|n| NodeView::of(v.state, n, v.now))
        .filter(|nv| match &filter.status {
            Some(st) => {
                nv.node.status.as_str() == st
                    || nv.display.as_str() == st
                    || (st == "overdue" && nv.overdue)
            }
            None => nv.node.archived || filter.terminal || !nv.node.status.is_terminal(),
        })
        .filter(|nv| filter.ready.is_none_or(|r| nv.ready == r))
        .collect()
}

/// The orders a page may ask for: most recently changed first, highest priority first,
/// the soonest deadline first (none last), by display word.
pub const SORTS: [&str; 4] = ["updated", "priority", "deadline", "status"];

/// Which nodes of one workspace a page shows (the dashboard of `serve`): the live nodes,
/// finished ones included, that every filter given lets through, in creation order, `limit`
/// of them from the `offset`-th on.
#[derive(Debug, Clone, Default)]
pub struct PageFilter {
    pub workspace: String,
    /// A display word (`ready`, `blocked`, `expired`, ...): the nodes that show it.
    pub status: Option<String>,
    /// The nodes of this role.
    pub role: Option<String>,
    /// The nodes that carry this label.
    pub label: Option<String>,
    /// The nodes whose holder's id starts with these hex characters, or whose holder is
    /// `name:NAME`.
    pub holder: Option<String>,
    /// The nodes with this text in their id, summary or a label, in any case.
    pub text: Option<String>,
    /// The order of the rows (one of [`SORTS`]; none: creation order). Gates waiting for
    /// a person come first whatever the order.
    pub sort: Option<String>,
    pub offset: usize,
    pub limit: usize,
}

impl PageFilter {
    /// Refuses a workspace, a display word or a holder's name that cannot be.
    pub fn check(&self) -> Result<()> {
        rules::validate_workspace(&self.workspace)?;
        if let Some(h) = self.holder.as_deref().filter(|h| h.starts_with("name:")) {
            Actor::parse_actor(h, "holder")?;
        }
        if let Some(o) = self.sort.as_deref().filter(|o| !SORTS.contains(o)) {
            return Err(Error::invalid(format!(
                "unknown order {o:?}: use one of {}",
                SORTS.join(", ")
            )));
        }
        match &self.status {
            Some(st) if !STATUS_WORDS.contains(&st.as_str()) => Err(Error::invalid(format!(
                "unknown display word {st:?}: use one of {}",
                STATUS_WORDS.join(", ")
            ))),
            _ => Ok(()),
        }
    }
}

/// One page of a workspace: its rows, and what the page says about the whole workspace.
#[derive(Debug, Clone, Default)]
pub struct Page {
    pub rows: Vec<NodeView>,
    /// The rows on the workspace's critical path.
    pub critical: Vec<Id>,
    /// How many nodes the filters let through (the pages cover them all).
    pub matched: usize,
    /// The row the page starts at: the offset asked for, moved back to the last page's
    /// first row when it is past the nodes matched.
    pub offset: usize,
    /// Every live node of the workspace (filters aside) by display word, in the order of
    /// [`DisplayWord`], the words no node shows left out.
    pub counts: Vec<(DisplayWord, usize)>,
    /// The workspaces that have live nodes, and the one asked for, sorted.
    pub workspaces: Vec<String>,
    /// The lease clock's time of the reading.
    pub now: Millis,
    /// The summary and display word of each prerequisite of the rows (live ones; an
    /// archived one is left out), for the page to name them.
    pub prerequisites: std::collections::HashMap<Id, (String, DisplayWord)>,
}

/// `nodes` (in creation order) in the order `sort` names, ties kept in creation order.
fn order(v: &Reading<'_>, sort: Option<&str>, nodes: &mut [&Node]) {
    match sort {
        Some("updated") => nodes.sort_by_key(|n| std::cmp::Reverse(n.updated_at)),
        Some("priority") => nodes.sort_by_key(|n| std::cmp::Reverse(n.priority)),
        Some("deadline") => nodes.sort_by_key(|n| n.deadline.unwrap_or(Millis::MAX)),
        Some("status") => nodes.sort_by_key(|n| rules::display(v.state, n, v.now) as u8),
        _ => {}
    }
}

/// A gate whose prerequisites are done: a person's decision is all it waits for.
fn waits_for_a_person(v: &Reading<'_>, n: &Node) -> bool {
    crate::model::decisions::awaits_decision(&n.kind, rules::display(v.state, n, v.now))
}

/// A page of `filter.workspace`: it walks the live nodes without copying them and copies
/// only the rows it returns.
pub(super) fn page(v: &Reading<'_>, filter: &PageFilter) -> Page {
    let wanted = Wanted {
        filter,
        text: filter.text.as_deref().map(str::to_lowercase),
        holder: filter
            .holder
            .as_deref()
            .map(|h| match Actor::parse_actor(h, "holder") {
                Ok(a) if h.starts_with("name:") => a.hex(),
                _ => h.to_ascii_lowercase(),
            }),
    };
    let mut counts: Vec<(DisplayWord, usize)> = Vec::new();
    let mut workspaces: std::collections::BTreeSet<&str> = [filter.workspace.as_str()].into();
    let mut matched: Vec<&Node> = Vec::new();
    for n in v.state.nodes() {
        workspaces.insert(&n.workspace);
        if n.workspace != filter.workspace {
            continue;
        }
        let word = rules::display(v.state, n, v.now);
        match counts.iter_mut().find(|(w, _)| *w == word) {
            Some((_, k)) => *k += 1,
            None => counts.push((word, 1)),
        }
        let shown = |s: &str| s == word.as_str() || (s == "overdue" && n.is_overdue(v.now));
        if filter.status.as_deref().is_none_or(shown) && wanted.shows(n) {
            matched.push(n);
        }
    }
    counts.sort_by_key(|(w, _)| *w as u8);
    order(v, filter.sort.as_deref(), &mut matched);
    // Gates waiting for a person come first: the lead's decisions are the page's top.
    matched.sort_by_key(|n| !waits_for_a_person(v, n));
    let limit = filter.limit.max(1);
    let last = matched.len().saturating_sub(1) / limit * limit;
    let offset = filter.offset.min(last);
    let rows: Vec<NodeView> = matched
        .iter()
        .skip(offset)
        .take(limit)
        .map(|n| NodeView::of(v.state, n, v.now))
        .collect();
    let path: std::collections::HashSet<Id> =
        critical_path(v, &filter.workspace).into_iter().collect();
    let prerequisites = rows
        .iter()
        .flat_map(|r| r.node.prerequisites())
        .filter_map(|(d, _)| {
            let n = v.state.get(&d)?;
            Some((d, (n.summary.clone(), rules::display(v.state, n, v.now))))
        })
        .collect();
    Page {
        prerequisites,
        critical: rows
            .iter()
            .map(|r| r.node.id)
            .filter(|id| path.contains(id))
            .collect(),
        rows,
        matched: matched.len(),
        offset,
        counts,
        workspaces: workspaces.into_iter().map(str::to_string).collect(),
        now: v.now,
    }
}

/// A page's filters, the text and the holder in lower case.
struct Wanted<'a> {
    filter: &'a PageFilter,
    text: Option<String>,
    holder: Option<String>,
}

impl Wanted<'_> {
    /// Whether `n` passes every filter but the display word.
    fn shows(&self, n: &Node) -> bool {
        let f = self.filter;
        f.role.as_deref().is_none_or(|r| n.role == r)
            && f.label
                .as_deref()
                .is_none_or(|l| n.labels.iter().any(|x| x == l))
            && self
                .holder
                .as_deref()
                .is_none_or(|h| n.holder.is_some_and(|a| a.starts_with_hex(h)))
            && self.text.as_deref().is_none_or(|t| {
                folded_contains(&n.summary, t)
                    || n.labels.iter().any(|l| folded_contains(l, t))
                    || is_hex_part(t) && n.id.hex().contains(t.trim_end_matches('.'))
            })
    }
}

/// Text that can be part of an id as `list` prints it (`092dca29...`).
fn is_hex_part(t: &str) -> bool {
    let t = t.trim_end_matches('.');
    !t.is_empty() && t.bytes().all(|c| c.is_ascii_hexdigit())
}

/// `needle` (lower case) in `hay`, in any case; without a copy of `hay` when `needle` is
/// ASCII.
fn folded_contains(hay: &str, needle: &str) -> bool {
    if needle.is_ascii() {
        let (h, n) = (hay.as_bytes(), needle.as_bytes());
        n.is_empty() || h.windows(n.len()).any(|w| w.eq_ignore_ascii_case(n))
    } else {
        hay.to_lowercase().contains(needle)
    }
}

/// The workspace and role of `next` and `ready`, checked as `claim-next` checks them.
pub(super) fn check_pick_args(workspace: &str, role: Option<&str>) -> Result<()> {
    rules::validate_workspace(workspace)?;
    if let Some(r) = role {
        rules::validate_word("role", r, 0)?;
    }
    Ok(())
}

pub(super) fn ready(v: &Reading<'_>, workspace: &str, role: Option<&str>) -> Vec<Pick> {
    schedule::order(
        &rules::read_at(v.state, v.now),
        workspace,
        role.unwrap_or(""),
    )
}

pub(super) fn next(v: &Reading<'_>, workspace: &str, role: Option<&str>) -> Option<Pick> {
    rules::next_grantable(v.state, v.now, workspace, role.unwrap_or(""))
}

/// The live claims whose ending may still make work ready for `role` ([`schedule::pending`]).
/// `(attempts, cap)` when the live node `id` has used every attempt its cap allows.
pub(super) fn out_of_attempts(v: &Reading<'_>, id: &Id) -> Option<(u32, u32)> {
    schedule::ready::out_of_attempts(&v.state.settings, v.state.get(id)?)
}

pub(super) fn pending(v: &Reading<'_>, workspace: &str, role: Option<&str>) -> Vec<Id> {
    schedule::pending(
        &rules::read_at(v.state, v.now),
        workspace,
        role.unwrap_or(""),
    )
}

/// The longest critical path of `workspace`'s unfinished nodes, first node first.
pub(super) fn critical_path(v: &Reading<'_>, workspace: &str) -> Vec<Id> {
    schedule::critical(&rules::read_at(v.state, v.now), workspace).longest()
}

/// `actor`'s live claims in `workspace`, oldest claim first.
pub(super) fn held_by(v: &Reading<'_>, workspace: &str, actor: Actor) -> Vec<NodeView> {
    let mut held: Vec<&Node> = v
        .state
        .claimed_ids()
        .iter()
        .filter_map(|id| v.state.get(id))
        .filter(|n| n.workspace == workspace && n.holder == Some(actor) && n.is_live_claim(v.now))
        .collect();
    held.sort_by_key(|n| (n.claimed_at, n.id));
    held.into_iter()
        .map(|n| NodeView::of(v.state, n, v.now))
        .collect()
}

/// A node argument, checked before the store is read.
pub(super) enum Prefix {
    Full(Id),
    Part(String),
}

pub(super) fn prefix(text: &str) -> Result<Prefix> {
    let t = text.trim().trim_end_matches("...").to_ascii_lowercase();
    if t.len() == 32 {
        return Ok(Prefix::Full(Id::parse(&t, "node id")?));
    }
    if t.len() < 8 || t.len() > 32 || !t.bytes().all(|c| c.is_ascii_hexdigit()) {
        return Err(Error::invalid(format!(
            "node must be a 32-hex id or a prefix of at least 8 hex characters, got {text:?}"
        )));
    }
    Ok(Prefix::Part(t))
}

/// The one live or archived node whose id starts with `prefix`.
pub(super) fn resolve(v: &Reading<'_>, prefix: &str) -> Result<Id> {
    let mut m: Vec<Id> = v.state.ids_with_prefix(prefix, 2);
    m.extend(
        v.state
            .archived()
            .keys()
            .copied()
            .filter(|id| id.starts_with_hex(prefix))
            .take(2),
    );
    the_one(m, prefix)
}

/// The one live or archived node of `workspace` the argument names: a node of another
/// workspace is not there, and answers as a node that does not exist.
pub(super) fn resolve_in(v: &Reading<'_>, arg: &Prefix, workspace: &str) -> Result<Id> {
    let here = |id: &Id| v.state.workspace_of(id) == Some(workspace);
    match arg {
        Prefix::Full(id) if here(id) => Ok(*id),
        Prefix::Full(id) => Err(Error::node_not_found(*id)),
        Prefix::Part(prefix) => {
            let archived = v.state.archived().keys().copied();
            let m: Vec<Id> = v
                .state
                .ids_with_prefix(prefix, usize::MAX)
                .into_iter()
                .chain(archived.filter(|id| id.starts_with_hex(prefix)))
                .filter(here)
                .take(2)
                .collect();
            the_one(m, prefix)
        }
    }
}

/// The one id of `m` (the nodes found for `prefix`, at most two needed).
fn the_one(mut m: Vec<Id>, prefix: &str) -> Result<Id> {
    m.truncate(2);
    m.dedup();
    match m.as_slice() {
        [one] => Ok(*one),
        [] => Err(Error::NotFound {
            what: format!("node {prefix}..."),
            node: None,
        }),
        _ => Err(Error::invalid(format!(
            "node prefix {prefix} is ambiguous: give more characters"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Status;
    use crate::store::Store;

    /// 450 nodes in the default workspace (every fifth starts a chain of five), 3 in another.
    fn store() -> (tempfile::TempDir, Store, Vec<Id>) {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::open(Some(&tmp.path().join("s"))).unwrap();
        let plan = |n: usize, what: &str| {
            let nodes: Vec<serde_json::Value> = (0..n)
                .map(|i| {
                    let deps: Vec<String> = (i % 5 != 0)
                        .then(|| format!("k{}", i - 1))
                        .into_iter()
                        .collect();
                    serde_json::json!({"key": format!("k{i}"), "summary": format!("{what} {i}"),
                        "labels": [format!("group-{}", i % 3)], "deps": deps})
                })
                .collect();
            serde_json::from_value(serde_json::json!({ "nodes": nodes })).unwrap()
        };
        let ids = store.import("", plan(450, "Node number")).unwrap();
        store.import("other", plan(3, "elsewhere")).unwrap();
        (tmp, store, ids.into_iter().map(|(id, _)| id).collect())
    }

    fn filter(offset: usize) -> PageFilter {
        PageFilter {
            offset,
            limit: 200,
            ..PageFilter::default()
        }
    }

    #[test]
    fn a_page_is_a_slice_of_the_workspace_and_the_counts_are_all_of_it() {
        let (_tmp, store, ids) = store();
        let me = Actor::from_name("worker").unwrap();
        let gen = store.claim(ids[0], me, None, None).unwrap();
        store
            .complete(ids[0], Status::Failed, gen, Some(me), None)
            .unwrap();
        store.claim(ids[5], me, None, None).unwrap();
        let first = store.page(&filter(0)).unwrap();
        assert_eq!(first.rows.len(), 200);
        assert_eq!(first.matched, 450);
        let ids_of = |p: &Page| p.rows.iter().map(|r| r.node.id).collect::<Vec<_>>();
        assert_eq!(ids_of(&first), ids[..200]);
        let words: Vec<(&str, usize)> =
            first.counts.iter().map(|(w, n)| (w.as_str(), *n)).collect();
        assert_eq!(
            words,
            [
                ("ready", 88),
                ("blocked", 1),
                ("todo", 359),
                ("claimed", 1),
                ("failed", 1)
            ]
        );
        assert_eq!(first.workspaces, ["", "other"]);
        let last = store.page(&filter(400)).unwrap();
        assert_eq!(ids_of(&last), ids[400..]);
        // Past the end: the last page.
        let past = store.page(&filter(9_999)).unwrap();
        assert_eq!((past.offset, ids_of(&past)), (400, ids[400..].to_vec()));
        // The critical path (one of the chains of five) marks the rows on it.
        let path = store.critical_path("").unwrap();
        let marked: Vec<Id> = first
            .rows
            .iter()
            .map(|r| r.node.id)
            .filter(|id| path.contains(id))
            .collect();
        assert_eq!(first.critical, marked);
        assert!(!first.critical.is_empty());
    }

    #[test]
    fn the_filters_and_the_search_read_the_whole_workspace() {
        let (_tmp, store, ids) = store();
        let bad = PageFilter {
            sort: Some("size".into()),
            ..PageFilter::default()
        };
        let e = bad.check().unwrap_err();
        assert!(e.to_string().contains("unknown order \"size\""), "{e}");
        let me = Actor::from_name("worker").unwrap();
        store.claim(ids[300], me, None, None).unwrap();
        let find = |f: PageFilter| -> Vec<Id> {
            let p = store.page(&PageFilter { limit: 200, ..f }).unwrap();
            p.rows.iter().map(|r| r.node.id).collect()
        };
        let text = |t: &str| {
            find(PageFilter {
                text: Some(t.into()),
                ..PageFilter::default()
            })
        };
        assert_eq!(text("NODE NUMBER 449"), [ids[449]]);
        assert_eq!(text(&ids[420].hex()[..10]), [ids[420]]);
        assert_eq!(text(&ids[420].short()), [ids[420]]);
        assert_eq!(
            text("elsewhere"),
            Vec::<Id>::new(),
            "another workspace's nodes"
        );
        let claimed = find(PageFilter {
            status: Some("claimed".into()),
            ..PageFilter::default()
        });
        assert_eq!(claimed, [ids[300]]);
        for holder in ["name:worker", &me.hex()[..6]] {
            let held = find(PageFilter {
                holder: Some(holder.into()),
                ..PageFilter::default()
            });
            assert_eq!(held, [ids[300]], "{holder}");
        }
        let label = PageFilter {
            label: Some("group-2".into()),
            offset: 140,
            ..PageFilter::default()
        };
        let p = store.page(&PageFilter { limit: 10, ..label }).unwrap();
        assert_eq!((p.matched, p.offset, p.rows.len()), (150, 140, 10));
        assert!(p.rows.iter().all(|r| r.node.labels == ["group-2"]));
        let bad = PageFilter {
            status: Some("asleep".into()),
            ..PageFilter::default()
        };
        assert_eq!(
            store.page(&bad).unwrap_err().code(),
            crate::error::Code::InvalidInput
        );
    }
}
