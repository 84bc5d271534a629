//! What a claim's resources let it hold beside the other claims of its workspace (SPEC 13,
//! "Resources"): no overlap that their modes forbid, no more of a pool's slots than it has,
//! no more of a rate's grants than its window allows. Each resource looks only at the claims
//! the state's index says it may meet (`state::holdings`), never at every claim.

use super::{Resource, Scope, Target, Tx};
use crate::error::{Error, Result};
use crate::id::Id;
use crate::model::limits::{Kind, LimitUse, Spelled};
use crate::model::{Millis, Node, Rate, Status};
use crate::state::State;

impl Tx<'_> {
    /// The live claims of workspace `ws` the index files under `ids`, as this transaction
    /// sees them, and the claims this transaction made or changed there.
    fn claims_among(&self, ws: &str, ids: impl IntoIterator<Item = Id>) -> Vec<&Node> {
        let stored = ids
            .into_iter()
            .filter(|id| !self.pos.contains_key(id))
            .filter_map(|id| self.state.get(&id))
            .filter(|n| n.status == Status::Claimed);
        let mine = self
            .changed
            .iter()
            .filter(|n| n.status == Status::Claimed && n.workspace == ws);
        stored.chain(mine).collect()
    }

    /// Refuses `n`'s resources when one overlaps a resource of another live claim of its
    /// workspace in a way their modes forbid (`resource_conflict`), or wants more of a pool
    /// than is free, or (`granting`: a new claim) a rate's grant its window has no room for
    /// (`ResourceBusy`, the same code).
    pub(super) fn check_resources(&self, n: &Node, granting: bool) -> Result<()> {
        for text in &n.resources {
            let mine = Resource::held(text);
            match mine.target {
                Target::Plain(_) | Target::Path(_) => self.check_overlaps(n, text, &mine)?,
                Target::Pool { name, slots } => self.check_pool(n, text, name, slots)?,
                Target::Rate(name) if granting => self.check_rate(n, text, name)?,
                Target::Rate(_) => {}
            }
        }
        Ok(())
    }

    fn check_overlaps(&self, n: &Node, text: &str, mine: &Resource<'_>) -> Result<()> {
        let s = Spelled::of(text);
        let ids = self.state.holdings().meeting(&n.workspace, s.kind, s.literal());
        for other in self.claims_among(&n.workspace, ids) {
            if other.id == n.id {
                continue;
            }
            // Only resources of the same kind can meet: a glob is compiled for a glob alone.
            let held = (other.resources.iter())
                .filter(|h| Spelled::of(h).kind == s.kind)
                .find(|h| mine.conflicts(&Resource::held(h)));
            if let Some(theirs) = held {
                return Err(Error::ResourceConflict {
                    node: n.id,
                    resource: text.into(),
                    held: theirs.as_str().into(),
                    other: other.id,
                    holder: other.holder.unwrap_or_default(),
                    holder_name: None,
                    generation: other.generation,
                });
            }
        }
        Ok(())
    }

    fn check_pool(&self, n: &Node, text: &str, name: &str, slots: u64) -> Result<()> {
        let Some(&size) = self.settings().limits.pools.get(name) else {
            // A pool with no size set limits nothing (`pool set` gives it one).
            return Ok(());
        };
        let ids = self.state.holdings().under(&n.workspace, Kind::Pool, name, 0);
        let holders: Vec<&Node> = (self.claims_among(&n.workspace, ids).into_iter())
            .filter(|o| o.id != n.id)
            .collect();
        let held: u64 = holders.iter().map(|o| pool_slots(o, name)).sum();
        if held.saturating_add(slots) <= size {
            return Ok(());
        }
        let by: Vec<String> = (holders.iter())
            .filter(|o| pool_slots(o, name) > 0)
            .map(|o| o.id.short())
            .collect();
        Err(Error::ResourceBusy {
            node: n.id,
            resource: text.into(),
            why: format!(
                "pool {name} has {size} slot(s), {held} held (by {}), {slots} wanted",
                if by.is_empty() { "none".into() } else { by.join(", ") }
            ),
        })
    }

    fn check_rate(&self, n: &Node, text: &str, name: &str) -> Result<()> {
        let Some(&rate) = self.settings().limits.rates.get(name) else {
            // A rate with no window set limits nothing (`rate set` gives it one).
            return Ok(());
        };
        let grants = self.rate_grants(&n.workspace, name, rate);
        if (grants.len() as u64) < rate.limit {
            return Ok(());
        }
        let room = grants[grants.len() - rate.limit as usize] + rate.per_ms;
        Err(Error::ResourceBusy {
            node: n.id,
            resource: text.into(),
            why: format!(
                "rate {name} allows {rate}: {} granted in the window, room again at {}",
                grants.len(),
                crate::duration::format_time(room)
            ),
        })
    }

    /// The grants of rate `name` in workspace `ws` still in its window, oldest first.
    fn rate_grants(&self, ws: &str, name: &str, rate: Rate) -> Vec<Millis> {
        let after = self.now.saturating_sub(rate.per_ms);
        let ids = self.state.holdings().under(ws, Kind::Rate, name, after + 1);
        let stored = ids
            .into_iter()
            .filter(|id| !self.pos.contains_key(id))
            .filter_map(|id| self.state.get(&id));
        let mine = self.changed.iter().filter(|n| n.workspace == ws);
        let mut grants: Vec<Millis> = stored
            .chain(mine)
            .filter(|n| under_rate(n, name))
            .flat_map(|n| n.rate_grants.iter().copied())
            .filter(|&t| t > after)
            .collect();
        grants.sort_unstable();
        grants
    }

    /// Records a grant of `n` now for its rates, keeping the grants still inside the
    /// longest window of its rates.
    pub(super) fn note_rate_grant(&self, n: &mut Node) {
        let rates = &self.settings().limits.rates;
        let longest = (n.resources.iter())
            .map(|r| Spelled::of(r))
            .filter(|s| s.kind == Kind::Rate)
            .map(|s| rates.get(s.body).map_or(0, |r| r.per_ms))
            .max();
        let Some(longest) = longest else { return };
        let after = self.now.saturating_sub(longest);
        n.rate_grants.retain(|&t| t > after);
        n.rate_grants.push(self.now);
    }
}

/// The node `claim_next` would grant next in `workspace` for `role` at `now` (`next`): the
/// best ready one whose resources are free, passing over those a claim, a pool or a rate
/// holds, as `claim_next` does.
pub fn next_grantable(
    state: &State,
    now: Millis,
    workspace: &str,
    role: &str,
) -> Option<crate::schedule::Pick> {
    let tx = Tx::begin(state, now, None);
    let free = |id: &Id| tx.get(id).is_some_and(|n| tx.check_resources(n, true).is_ok());
    let best = crate::schedule::best(&tx, workspace, role)?;
    if free(&best.id) {
        return Some(best);
    }
    crate::schedule::order(&tx, workspace, role)
        .into_iter()
        .find(|p| free(&p.id))
}

/// The pools and rates of the settings, and how much of each workspace `ws` uses at `now`.
pub fn limits_in(state: &State, now: Millis, ws: &str) -> Vec<LimitUse> {
    let tx = Tx::begin(state, now, Some(&Scope::Workspace(ws.into())));
    let limits = &tx.settings().limits;
    let mut out = Vec::new();
    for (name, &size) in &limits.pools {
        let ids = state.holdings().under(ws, Kind::Pool, name, 0);
        let holders: Vec<&Node> = (tx.claims_among(ws, ids).into_iter())
            .filter(|n| pool_slots(n, name) > 0)
            .collect();
        out.push(LimitUse {
            kind: "pool".into(),
            name: name.clone(),
            size,
            per_ms: None,
            used: holders.iter().map(|n| pool_slots(n, name)).sum(),
            nodes: holders.iter().map(|n| n.id).collect(),
        });
    }
    for (name, &rate) in &limits.rates {
        let after = now.saturating_sub(rate.per_ms);
        let ids = state.holdings().under(ws, Kind::Rate, name, after + 1);
        let mut nodes: Vec<Id> = ids
            .into_iter()
            .filter_map(|id| tx.get(&id))
            .filter(|n| under_rate(n, name) && n.rate_grants.iter().any(|&t| t > after))
            .map(|n| n.id)
            .collect();
        nodes.sort();
        out.push(LimitUse {
            kind: "rate".into(),
            name: name.clone(),
            size: rate.limit,
            per_ms: Some(rate.per_ms),
            used: tx.rate_grants(ws, name, rate).len() as u64,
            nodes,
        });
    }
    out
}

/// The pools whose live claims hold more slots than the pool has, by workspace: a grant
/// never goes past a pool's size, so only a size lowered below what was held (which takes
/// no slot back) leaves one so, until those claims end. `check` says it as a note.
pub fn pools_over(state: &State, now: Millis) -> Vec<String> {
    let pools = &state.settings.limits.pools;
    let mut held: std::collections::BTreeMap<(&str, &str), u64> = Default::default();
    for n in state.claimed_nodes() {
        if !n.is_live_claim(now) {
            continue;
        }
        for name in pools.keys() {
            let k = pool_slots(n, name);
            if k > 0 {
                *held.entry((n.workspace.as_str(), name.as_str())).or_default() += k;
            }
        }
    }
    (held.into_iter())
        .filter(|((_, name), k)| *k > pools[*name])
        .map(|((ws, name), k)| {
            format!(
                "pool {name} in workspace {ws:?}: live claims hold {k} of its {} slots (its size \
                 was lowered; no new grant until they end)",
                pools[name]
            )
        })
        .collect()
}

/// The slots of pool `name` node `n` takes.
fn pool_slots(n: &Node, name: &str) -> u64 {
    (n.resources.iter())
        .filter(|r| {
            let s = Spelled::of(r);
            s.kind == Kind::Pool && s.name() == name
        })
        .filter_map(|r| match Resource::parse(r).ok()?.target {
            Target::Pool { name: p, slots } if p == name => Some(slots),
            _ => None,
        })
        .sum()
}

fn under_rate(n: &Node, name: &str) -> bool {
    (n.resources.iter())
        .map(|r| Spelled::of(r))
        .any(|s| s.kind == Kind::Rate && s.body == name)
}

/// When the next grant of a full window leaves it, after `now`, among the nodes `inside`
/// keeps: a change by time alone, as a lease running out is (`valid_until`).
pub(super) fn next_rate_room(
    state: &State,
    now: Millis,
    inside: &dyn Fn(&Id) -> bool,
) -> Option<Millis> {
    let rates = &state.settings.limits.rates;
    let longest = rates.values().map(|r| r.per_ms).max()?;
    (state.rated().iter())
        .filter(|(id, &last)| last.saturating_add(longest) > now && inside(id))
        .filter_map(|(id, _)| state.get(id))
        .flat_map(|n| {
            (n.resources.iter()).filter_map(move |r| {
                let s = Spelled::of(r);
                let rate = rates.get(s.body).filter(|_| s.kind == Kind::Rate)?;
                Some(n.rate_grants.iter().map(move |t| t.saturating_add(rate.per_ms)))
            })
        })
        .flatten()
        .filter(|&t| t > now)
        .min()
}
