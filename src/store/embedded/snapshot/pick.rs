//! The pick order as a snapshot stores it, so that a process that picks once (a
//! `claimdag claim-next`) reads it instead of decoding every node to compute it.
//!
//! It is written after the snapshot's index of nodes by id and follows that index entry by
//! entry, so it names no node itself:
//!
//! ```text
//! {"max_attempts":null,"groups":[["workspace","role"],...],
//!  "nodes":"<41 hex per index entry>","waiters":"<links>"}
//! ```
//!
//! A node's 41 hex characters: flags (1: bit 0, it is unfinished and has a critical path
//! length; bit 1, it is ready), its critical path length (16), its group (8, a place in
//! `groups`) and its priority (16, two's complement), the last two 0 unless it is ready.
//! `waiters` holds, for each node that live nodes wait on, that node (`e` and its index
//! entry, 8 hex, when it is a node of the snapshot; `i` and its id, 32 hex, otherwise), the
//! number of its waiters (8 hex) and each waiter's index entry (8 hex). A node's place in
//! creation order is where its JSON starts in the nodes' list. `max_attempts` is the setting
//! the readiness of the nodes was decided under: a store whose setting changed since builds
//! the order from the nodes instead.
//!
//! The stored order is derived data, checked by `claimdag check` against a fresh build.

use crate::id::{lower_hex_u64 as hex, Id};
use crate::schedule::pick_order::{Parts, PickOrder, ReadyKey};
use std::cmp::Reverse;
use std::collections::BTreeSet;

const NODE: usize = 41;
const CRITICAL: u8 = 1;
const READY: u8 = 2;

#[derive(serde::Serialize, serde::Deserialize)]
struct Stored<'a> {
    max_attempts: Option<u32>,
    groups: Vec<(String, String)>,
    #[serde(borrow)]
    nodes: &'a str,
    #[serde(borrow)]
    waiters: &'a str,
    /// The nodes that would be ready but for their `not_before`: per node, its index entry
    /// (8 hex) and that time (16 hex). Absent when there are none (and in older writers').
    #[serde(borrow, default, skip_serializing_if = "str::is_empty")]
    scheduled: &'a str,
}

/// The stored form of `index` for a snapshot whose index entries are `sorted` (ids in
/// order); `None` when a node the index knows is not among them (then the snapshot is
/// written without a stored order and readers build it from the nodes).
pub fn encode(index: &PickOrder, sorted: &[Id], max_attempts: Option<u32>) -> Option<Vec<u8>> {
    let ix = index.parts();
    let entry = |id: &Id| sorted.binary_search(id).ok();
    // The same nodes: as many, and each of the (distinct) sorted ids is one of them.
    if ix.order.len() != sorted.len() || !sorted.iter().all(|id| ix.order.contains_key(id)) {
        return None;
    }
    let mut nodes = Vec::with_capacity(sorted.len() * NODE);
    for id in sorted {
        let critical = ix.critical.get(id);
        let keyed = ix.keyed.get(id);
        let flags = critical.map_or(0, |_| CRITICAL) | keyed.map_or(0, |_| READY);
        let (group, priority) = keyed.map_or((0, 0), |(g, k)| (*g, k.priority.0));
        put_hex(&mut nodes, flags as u64, 1);
        put_hex(&mut nodes, critical.copied().unwrap_or(0), 16);
        put_hex(&mut nodes, u32::try_from(group).ok()? as u64, 8);
        put_hex(&mut nodes, priority as u64, 16);
    }
    let mut links: Vec<(&Id, &Vec<Id>)> =
        ix.waiters.iter().filter(|(_, w)| !w.is_empty()).collect();
    links.sort_unstable_by_key(|(p, _)| **p);
    let mut waiters = Vec::new();
    for (p, ws) in links {
        match entry(p) {
            Some(e) => {
                waiters.push(b'e');
                put_hex(&mut waiters, u32::try_from(e).ok()? as u64, 8);
            }
            None => {
                waiters.push(b'i');
                waiters.extend_from_slice(p.hex().as_bytes());
            }
        }
        put_hex(&mut waiters, u32::try_from(ws.len()).ok()? as u64, 8);
        for w in ws {
            put_hex(&mut waiters, u32::try_from(entry(w)?).ok()? as u64, 8);
        }
    }
    let mut groups = vec![(String::new(), String::new()); ix.ready.len()];
    for (key, &g) in &ix.groups {
        *groups.get_mut(g)? = key.clone();
    }
    let mut scheduled = Vec::new();
    for (t, id) in &ix.scheduled {
        put_hex(&mut scheduled, u32::try_from(entry(id)?).ok()? as u64, 8);
        put_hex(&mut scheduled, *t, 16);
    }
    let stored = Stored {
        max_attempts,
        groups,
        nodes: std::str::from_utf8(&nodes).ok()?,
        waiters: std::str::from_utf8(&waiters).ok()?,
        scheduled: std::str::from_utf8(&scheduled).ok()?,
    };
    serde_json::to_vec(&stored).ok()
}

/// Reads a stored order back, parsing it once: `None` when it was decided under another
/// `max_attempts` than `max_attempts` (the caller builds it from the nodes then) or when
/// `entries` gives nothing. `entries` gives the snapshot's index entries (id and where
/// the node starts in the nodes' list, in the index's order), asked for only when the
/// setting matches; `creation_end` is past every such place (the next node's creation
/// number).
pub fn decode(
    text: &[u8],
    max_attempts: Option<u32>,
    entries: impl FnOnce() -> Option<Vec<(Id, u64)>>,
    creation_end: u64,
) -> Result<Option<PickOrder>, String> {
    let stored: Stored<'_> =
        serde_json::from_slice(text).map_err(|e| format!("the stored pick order: {e}"))?;
    if stored.max_attempts != max_attempts {
        return Ok(None);
    }
    let Some(entries) = entries() else {
        return Ok(None);
    };
    let nodes = stored.nodes.as_bytes();
    if nodes.len() != entries.len() * NODE {
        return Err(format!(
            "{} characters of nodes for {} index entries",
            nodes.len(),
            entries.len()
        ));
    }
    let mut ix = Parts {
        seq: creation_end,
        ..Parts::default()
    };
    for (g, key) in stored.groups.into_iter().enumerate() {
        if ix.groups.insert(key, g).is_some() {
            return Err(format!("group {g} is named twice"));
        }
    }
    read_nodes(&mut ix, &entries, nodes)?;
    read_waiters(&mut ix, &entries, stored.waiters.as_bytes())?;
    read_scheduled(&mut ix, &entries, stored.scheduled.as_bytes())?;
    Ok(Some(PickOrder::from_parts(ix)))
}

/// Reads the nodes' records (one per index entry) into `ix`: creation order, critical
/// path lengths, and the ready nodes of each group.
fn read_nodes(ix: &mut Parts, entries: &[(Id, u64)], nodes: &[u8]) -> Result<(), String> {
    // Each group's ready keys, gathered and then built into their sets in one go.
    let mut ready: Vec<Vec<ReadyKey>> = vec![Vec::new(); ix.groups.len()];
    ix.order.reserve(entries.len());
    ix.critical.reserve(entries.len());
    let ready_flag = b'0' + (CRITICAL | READY);
    ix.keyed
        .reserve(nodes.chunks(NODE).filter(|r| r[0] == ready_flag).count());
    for (k, (&(id, order), rec)) in entries.iter().zip(nodes.chunks(NODE)).enumerate() {
        let bad = || format!("node {k} is not hex");
        let flags = hex(&rec[..1]).ok_or_else(bad)? as u8;
        let critical = hex(&rec[1..17]).ok_or_else(bad)?;
        let group = hex(&rec[17..25]).ok_or_else(bad)? as usize;
        let priority = hex(&rec[25..41]).ok_or_else(bad)? as i64;
        if flags & !(CRITICAL | READY) != 0 || flags == READY {
            return Err(format!("node {k} has flags {flags}"));
        }
        ix.order.insert(id, order);
        if flags & CRITICAL != 0 {
            ix.critical.insert(id, critical);
        }
        if flags & READY != 0 {
            let key = ReadyKey {
                critical: Reverse(critical),
                priority: Reverse(priority),
                order,
                id,
            };
            ready
                .get_mut(group)
                .ok_or_else(|| format!("node {k} is in group {group}, which is not there"))?
                .push(key);
            ix.keyed.insert(id, (group, key));
        }
    }
    // Sorted in place first: the set's own (stable) sort then finds one run, and the
    // scratch buffer it allocates, as large as the keys, is never written.
    ix.ready = ready
        .into_iter()
        .map(|mut keys| {
            keys.sort_unstable();
            BTreeSet::from_iter(keys)
        })
        .collect();
    Ok(())
}

/// Reads the waiters (see the module documentation) into `ix`.
fn read_waiters(ix: &mut Parts, entries: &[(Id, u64)], mut w: &[u8]) -> Result<(), String> {
    let take = |w: &mut &[u8], n: usize| -> Result<u64, String> {
        let (head, rest) = w.split_at_checked(n).ok_or("the waiters are cut short")?;
        *w = rest;
        hex(head).ok_or_else(|| "the waiters are not hex".to_string())
    };
    let live = |e: u64| -> Result<Id, String> {
        usize::try_from(e)
            .ok()
            .and_then(|e| entries.get(e))
            .map(|&(id, _)| id)
            .ok_or_else(|| format!("the waiters name index entry {e}, which is not there"))
    };
    while let Some((&tag, rest)) = w.split_first() {
        w = rest;
        let p = match tag {
            b'e' => live(take(&mut w, 8)?)?,
            b'i' => {
                let (head, rest) = w.split_at_checked(32).ok_or("the waiters are cut short")?;
                w = rest;
                Id::from_hex(head).ok_or("the waiters name an id that is not hex")?
            }
            _ => return Err(format!("the waiters hold {:?}", tag as char)),
        };
        let count = take(&mut w, 8)?;
        if count == 0 || count as usize > entries.len() {
            return Err(format!("{count} waiters of one node"));
        }
        let mut list = Vec::with_capacity(count as usize);
        for _ in 0..count {
            list.push(live(take(&mut w, 8)?)?);
        }
        if ix.waiters.insert(p, list).is_some() {
            return Err(format!("the waiters of {} are given twice", p.hex()));
        }
    }
    Ok(())
}

/// Reads the scheduled nodes (see [`Stored::scheduled`]) into `ix`.
fn read_scheduled(ix: &mut Parts, entries: &[(Id, u64)], s: &[u8]) -> Result<(), String> {
    if !s.len().is_multiple_of(24) {
        return Err(format!("{} characters of scheduled nodes", s.len()));
    }
    for rec in s.chunks(24) {
        let bad = || "the scheduled nodes are not hex".to_string();
        let e = hex(&rec[..8]).ok_or_else(bad)?;
        let t = hex(&rec[8..]).ok_or_else(bad)?;
        let id = usize::try_from(e)
            .ok()
            .and_then(|e| entries.get(e))
            .map(|&(id, _)| id)
            .ok_or_else(|| format!("the scheduled nodes name index entry {e}, which is not there"))?;
        if !ix.critical.contains_key(&id) || ix.keyed.contains_key(&id) {
            return Err(format!("scheduled node {} is finished or ready", id.hex()));
        }
        if ix.scheduled_at.insert(id, t).is_some() {
            return Err(format!("scheduled node {} is given twice", id.hex()));
        }
        ix.scheduled.insert((t, id));
    }
    Ok(())
}

/// Appends the low `digits` hex digits of `v`, lowercase.
fn put_hex(out: &mut Vec<u8>, v: u64, digits: u32) {
    for k in (0..digits).rev() {
        out.push(b"0123456789abcdef"[(v >> (4 * k) & 15) as usize]);
    }
}
