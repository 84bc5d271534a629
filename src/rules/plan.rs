//! Import of a plan: many nodes and their links as one atomic, idempotent write. The plan is
//! validated whole; any bad node, unknown reference or cycle refuses all of it, with a message
//! naming the offending key.

use super::{Output, Tx, Upsert};
use crate::error::{Error, Result};
use crate::id::Id;
use crate::model::Status;
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};

/// A plan: `{"nodes": [...]}`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Plan {
    pub nodes: Vec<PlanNode>,
}

/// One node of a plan. `parent`, `deps` and `soft_deps` name a key of the plan or an
/// existing node (full id or unique prefix of at least 8 hex characters); `not_before` and
/// `deadline` are RFC 3339 or +DUR, `budget` tokens=N[,cost=X].
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PlanNode {
    pub key: String,
    pub summary: String,
    #[serde(default)]
    pub kind: Option<String>,
    #[serde(default)]
    pub parent: Option<String>,
    #[serde(default)]
    pub deps: Vec<String>,
    #[serde(default)]
    pub soft_deps: Vec<String>,
    #[serde(default)]
    pub role: Option<String>,
    #[serde(default)]
    pub priority: Option<i64>,
    #[serde(default)]
    pub estimate: Option<u64>,
    #[serde(default)]
    pub labels: Option<Vec<String>>,
    #[serde(default)]
    pub resources: Option<Vec<String>>,
    #[serde(default, rename = "ref")]
    pub ref_: Option<String>,
    #[serde(default)]
    pub max_attempts: Option<u32>,
    // As `upsert` takes them (the struct's doc says how: tool schemas carry it once).
    #[serde(default)]
    pub not_before: Option<String>,
    #[serde(default)]
    pub deadline: Option<String>,
    #[serde(default)]
    pub budget: Option<String>,
}

impl Plan {
    /// The plan with each reference to an existing node (a parent, dep or soft dep that is
    /// not a key of the plan) replaced by what `f(key, reference)` answers, `key` being the
    /// plan node's.
    pub fn with_refs(&self, mut f: impl FnMut(&str, &str) -> Result<String>) -> Result<Plan> {
        let keys: HashSet<&str> =
            self.nodes.iter().map(|n| n.key.as_str()).collect();
        let mut plan = self.clone();
        for n in &mut plan.nodes {
            let key = n.key.clone();
            let refs = n.parent.iter_mut().chain(&mut n.deps).chain(&mut n.soft_deps);
            for r in refs.filter(|r| !keys.contains(r.as_str())) {
                *r = f(&key, r)?;
            }
        }
        Ok(plan)
    }

    /// Parses plan JSON; a malformed node is refused naming its key (or its position).
    pub fn parse(bytes: &[u8]) -> Result<Plan> {
        let v: serde_json::Value = serde_json::from_slice(bytes)
            .map_err(|e| Error::invalid(format!("plan is not valid JSON: {e}")))?;
        let obj = v
            .as_object()
            .ok_or_else(|| Error::invalid("plan must be a JSON object {\"nodes\": [...]}"))?;
        if let Some(k) = obj.keys().find(|k| k.as_str() != "nodes") {
            return Err(Error::invalid(format!(
                "plan has an unknown field {k:?}: only \"nodes\" is allowed"
            )));
        }
        let list = obj
            .get("nodes")
            .and_then(|n| n.as_array())
            .ok_or_else(|| Error::invalid("plan must have a \"nodes\" array"))?;
        let mut nodes = Vec::with_capacity(list.len());
        for (i, item) in list.iter().enumerate() {
            let name = match item.get("key").and_then(|k| k.as_str()) {
                Some(k) => format!("plan node {k:?}"),
                None => format!("plan node #{}", i + 1),
            };
            let node: PlanNode = crate::error::from_json_value(item)
                .map_err(|(_, e)| Error::invalid(format!("{name}: {e}")))?;
            nodes.push(node);
        }
        Ok(Plan { nodes })
    }
}

/// A plan reference that names neither a key of the plan nor an existing node.
fn no_such_ref(text: &str) -> Error {
    Error::NotFound {
        what: format!("reference {text:?} (neither a key of the plan nor an existing node)"),
        node: None,
    }
}

/// The refusal of plan node `key`'s reference `text` to no node, as `import` words it.
pub fn unknown_reference(key: &str, text: &str) -> Error {
    named(key, no_such_ref(text))
}

fn named(key: &str, e: Error) -> Error {
    let label = format!("plan node {key:?}");
    match e {
        Error::InvalidInput(m) => Error::InvalidInput(format!("{label}: {m}")),
        Error::NotFound { what, node } => Error::NotFound {
            what: format!("{label}: {what}"),
            node,
        },
        Error::Cycle { node, detail } => Error::Cycle {
            node,
            detail: format!("{label}: {detail}"),
        },
        other => other,
    }
}

impl Tx<'_> {
    /// Resolves a plan reference: a key of the plan, else an existing node.
    fn plan_ref(&self, keys: &HashMap<&str, usize>, ids: &[Option<Id>], text: &str) -> Result<Ref> {
        if let Some(&i) = keys.get(text) {
            return Ok(match ids.get(i).copied().flatten() {
                Some(id) => Ref::Id(id),
                None => Ref::Key(i),
            });
        }
        let t = text.trim_end_matches("...").to_ascii_lowercase();
        if t.len() == 32 {
            let id = Id::parse(&t, "reference")?;
            if self.status_of(&id).is_some() {
                return Ok(Ref::Id(id));
            }
        } else if t.len() >= 8 && t.bytes().all(|c| c.is_ascii_hexdigit()) {
            let mut found = self
                .nodes()
                .map(|n| n.id)
                .chain(self.state.archived().keys().copied())
                .filter(|id| id.starts_with_hex(&t));
            if let (Some(id), None) = (found.next(), found.next()) {
                return Ok(Ref::Id(id));
            }
        }
        Err(no_such_ref(text))
    }

    pub(super) fn import(&mut self, workspace: &str, plan: &Plan) -> Result<Output> {
        super::validate_workspace(workspace)?;
        let keys = plan_keys(plan)?;
        let (ids, created) = self.create_plan_nodes(workspace, plan, &keys)?;
        // Links: every dep a node of the plan names, added when missing.
        for (i, n) in plan.nodes.iter().enumerate() {
            let wanted = self.wanted_links(workspace, n, &keys, &ids, ids[i])?;
            self.add_links(n, ids[i], created[i], wanted)?;
        }
        if let Some(id) = self.find_cycle(workspace) {
            let key = ids
                .iter()
                .position(|x| *x == id)
                .map(|i| plan.nodes[i].key.as_str())
                .unwrap_or("?");
            return Err(named(
                key,
                Error::Cycle {
                    node: id,
                    detail: format!("its prerequisites lead back to it (node {id})"),
                },
            ));
        }
        Ok(Output::Imported(
            ids.into_iter()
                .zip(plan.nodes.iter().map(|n| n.key.clone()))
                .collect(),
        ))
    }

    /// Creates (or finds) every node of the plan; returns their ids in plan order and
    /// whether each was created. Ids depend on parent ids, so parents go first (iteratively,
    /// so deep chains work).
    fn create_plan_nodes(
        &mut self,
        workspace: &str,
        plan: &Plan,
        keys: &HashMap<&str, usize>,
    ) -> Result<(Vec<Id>, Vec<bool>)> {
        let mut ids: Vec<Option<Id>> = vec![None; plan.nodes.len()];
        let mut created: Vec<bool> = vec![false; plan.nodes.len()];
        for start in 0..plan.nodes.len() {
            let mut stack = vec![start];
            while let Some(&i) = stack.last() {
                if ids[i].is_some() {
                    stack.pop();
                    continue;
                }
                let n = &plan.nodes[i];
                let parent = match &n.parent {
                    None => None,
                    Some(p) => match self.plan_ref(keys, &ids, p).map_err(|e| named(&n.key, e))? {
                        Ref::Id(id) => Some(id),
                        Ref::Key(j) => {
                            if stack.contains(&j) {
                                return Err(Error::invalid(format!(
                                    "plan node {:?}: its parents form a loop",
                                    n.key
                                )));
                            }
                            stack.push(j);
                            continue;
                        }
                    },
                };
                let existed = self
                    .status_of(&Id::mint(
                        workspace,
                        n.kind.as_deref().unwrap_or("task"),
                        parent,
                        &n.summary,
                    ))
                    .is_some();
                let u = plan_upsert(workspace, n, parent, self.now, existed)
                    .map_err(|e| named(&n.key, e))?;
                if let Output::Upserted { id, .. } =
                    self.upsert(&u).map_err(|e| named(&n.key, e))?
                {
                    ids[i] = Some(id);
                    created[i] = !existed;
                }
                stack.pop();
            }
        }
        Ok((
            ids.into_iter().map(|i| i.unwrap_or_default()).collect(),
            created,
        ))
    }

    /// The prerequisites plan node `n` (whose id is `me`) names, each with its kind.
    fn wanted_links(
        &self,
        workspace: &str,
        n: &PlanNode,
        keys: &HashMap<&str, usize>,
        ids: &[Id],
        me: Id,
    ) -> Result<Vec<(Id, bool)>> {
        let mut wanted: Vec<(Id, bool)> = Vec::new();
        for (list, soft) in [(&n.deps, false), (&n.soft_deps, true)] {
            for d in list {
                let dep = match self.plan_ref(keys, &[], d).map_err(|e| named(&n.key, e))? {
                    Ref::Id(id) => {
                        self.same_workspace(&id, workspace)
                            .map_err(|e| named(&n.key, e))?;
                        id
                    }
                    Ref::Key(j) => ids[j],
                };
                if dep == me {
                    return Err(named(&n.key, Error::cycle_link(dep, dep)));
                }
                wanted.push((dep, soft));
            }
        }
        // One prerequisite named twice (a key and its id, say) must be one kind of link.
        if let Some((d, _)) = wanted
            .iter()
            .find(|(d, soft)| wanted.iter().any(|(e, s)| e == d && s != soft))
        {
            return Err(Error::invalid(format!(
                "plan node {:?}: {d} is both a hard and a soft prerequisite; a link is either hard or soft",
                n.key
            )));
        }
        wanted.sort();
        wanted.dedup();
        Ok(wanted)
    }

    /// Adds the links node `id` lacks. A finished node keeps the prerequisites it finished
    /// with; a claimed one cannot gain one.
    fn add_links(
        &mut self,
        n: &PlanNode,
        id: Id,
        created: bool,
        wanted: Vec<(Id, bool)>,
    ) -> Result<()> {
        let Some(node) = self.get(&id) else {
            return Ok(()); // an archived node of an earlier import: left as it ended
        };
        let missing: Vec<(Id, bool)> = wanted
            .into_iter()
            .filter(|(d, soft)| {
                let have = if *soft { &node.soft_deps } else { &node.deps };
                !have.contains(d)
            })
            .collect();
        if missing.is_empty() || node.status.is_terminal() {
            return Ok(());
        }
        if node.status == Status::Claimed {
            return Err(named(
                &n.key,
                Error::AlreadyClaimed {
                    node: node.id,
                    holder: node.holder.unwrap_or_default(),
                    holder_name: None,
                    generation: node.generation,
                },
            ));
        }
        let mut node = node.clone();
        for (d, soft) in missing {
            node.deps.retain(|x| *x != d);
            node.soft_deps.retain(|x| *x != d);
            if soft {
                node.soft_deps.push(d);
            } else {
                node.deps.push(d);
            }
            if !created {
                let detail = format!("{} {d}", if soft { "soft" } else { "hard" });
                self.event("link", Some(&node), None, Some(detail));
            }
        }
        node.updated_at = node.updated_at.max(self.now);
        self.put(node);
        Ok(())
    }

    /// A node on a cycle of prerequisites among the workspace's live nodes (Kahn's algorithm).
    fn find_cycle(&self, workspace: &str) -> Option<Id> {
        let nodes: Vec<_> = self.nodes().filter(|n| n.workspace == workspace).collect();
        let index: HashMap<Id, usize> = nodes.iter().enumerate().map(|(i, n)| (n.id, i)).collect();
        let mut waiting = vec![0usize; nodes.len()];
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
        for (i, n) in nodes.iter().enumerate() {
            for (d, _) in n.prerequisites() {
                if let Some(&j) = index.get(&d) {
                    children[j].push(i);
                    waiting[i] += 1;
                }
            }
        }
        let mut queue: Vec<usize> = (0..nodes.len()).filter(|&i| waiting[i] == 0).collect();
        let mut done = 0;
        while let Some(i) = queue.pop() {
            done += 1;
            for &c in &children[i] {
                waiting[c] -= 1;
                if waiting[c] == 0 {
                    queue.push(c);
                }
            }
        }
        if done == nodes.len() {
            return None;
        }
        // Every node left waits on another node left: walking them must come back round.
        let mut at = (0..nodes.len()).find(|&i| waiting[i] > 0)?;
        let mut seen = vec![false; nodes.len()];
        while !seen[at] {
            seen[at] = true;
            at = nodes[at]
                .prerequisites()
                .filter_map(|(d, _)| index.get(&d).copied())
                .find(|&j| waiting[j] > 0)?;
        }
        Some(nodes[at].id)
    }
}

/// Every key of the plan and its position; an empty or repeated key, or a dep in both
/// lists, refuses the plan.
fn plan_keys(plan: &Plan) -> Result<HashMap<&str, usize>> {
    let mut keys: HashMap<&str, usize> = HashMap::with_capacity(plan.nodes.len());
    for (i, n) in plan.nodes.iter().enumerate() {
        if n.key.trim().is_empty() {
            return Err(Error::invalid(format!(
                "plan node #{} has an empty key",
                i + 1
            )));
        }
        if keys.insert(n.key.as_str(), i).is_some() {
            return Err(Error::invalid(format!(
                "plan key {:?} appears twice",
                n.key
            )));
        }
        if let Some(d) = n.deps.iter().find(|d| n.soft_deps.contains(d)) {
            return Err(Error::invalid(format!(
                "plan node {:?}: {d:?} is in both deps and soft_deps; a link is either hard or soft",
                n.key
            )));
        }
    }
    Ok(keys)
}

/// The upsert a plan node stands for.
/// The upsert of plan node `n`. A relative time (`+DUR`) counts from the import that
/// creates the node: importing the plan again keeps the time it set (an import is
/// idempotent), where an absolute one is merged like any field.
fn plan_upsert(
    workspace: &str,
    n: &PlanNode,
    parent: Option<Id>,
    now: crate::model::Millis,
    existed: bool,
) -> Result<Upsert> {
    let when = |w: &Option<String>, what: &str| {
        w.as_deref()
            .filter(|t| !(existed && t.trim_start().starts_with('+')))
            .map(|t| crate::duration::parse_time_of(what, t, now))
            .transpose()
    };
    Ok(Upsert {
        workspace: workspace.to_string(),
        kind: n.kind.clone(),
        summary: n.summary.clone(),
        parent,
        role: n.role.clone(),
        priority: n.priority,
        estimate: n.estimate,
        labels: n.labels.clone(),
        resources: n.resources.clone(),
        ref_: n.ref_.clone(),
        max_attempts: n.max_attempts,
        not_before: when(&n.not_before, "not_before")?,
        deadline: when(&n.deadline, "deadline")?,
        budget: n
            .budget
            .as_deref()
            .map(|b| crate::model::Budget::parse("budget", b))
            .transpose()?,
    })
}

enum Ref {
    Id(Id),
    Key(usize),
}
