//! The verbs that shape the DAG and the store: upsert, link, unlink, import, archive,
//! unarchive, config.

use super::replies::{Archived, Completed, Done, Imported, ImportedNode, SettingsReply, Upserted};
use super::{Ctx, Dur, Verb};
use crate::error::Result;
use crate::rules::Plan;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Create a node, or merge fields into the node with the same identity (workspace, kind,
/// parent, summary). Fields left out keep their value on an existing node.
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Upsert {
    /// What the work is; part of the node's identity.
    #[cfg_attr(feature = "cli", arg(long, value_name = "S"))]
    pub summary: String,
    /// 1-32 characters of `[a-z0-9_-]` (default "task"); part of the identity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "cli", arg(long, value_name = "K"))]
    pub kind: Option<String>,
    /// The parent node (hierarchy only, never a dependency); part of the identity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "cli", arg(long, value_name = "ID"))]
    pub parent: Option<String>,
    /// Only workers asking for this role get the node ("" = any worker).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "cli", arg(long, value_name = "R"))]
    pub role: Option<String>,
    /// Higher first when critical paths tie.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        feature = "cli",
        arg(long, value_name = "N", allow_hyphen_values = true)
    )]
    pub priority: Option<i64>,
    /// A positive size used for critical paths (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "cli", arg(long, value_name = "N"))]
    pub estimate: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "cli", arg(long = "label", value_name = "L"))]
    pub labels: Option<Vec<String>>,
    /// What the node touches (`src/parser/`, `db:users`): overlapping live claims exclude
    /// each other.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "cli", arg(long = "resource", value_name = "R"))]
    pub resources: Option<Vec<String>>,
    /// An external ticket reference.
    #[serde(default, rename = "ref", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "cli", arg(long = "ref", value_name = "REF"))]
    pub ref_: Option<String>,
    /// How many claims the node allows (default: the store's max_attempts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "cli", arg(long, value_name = "N"))]
    pub max_attempts: Option<u32>,
    /// Not granted before this time: RFC 3339 (2026-12-03T07:05:00Z), or +DUR from now
    /// (+90s, +2h). Until then the node shows as `scheduled`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "cli", arg(long, value_name = "WHEN"))]
    pub not_before: Option<String>,
    /// The workspace (default: the caller's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "cli", arg(skip))]
    pub workspace: Option<String>,
}

impl Verb for Upsert {
    const NAME: &'static str = "upsert";
    type Reply = Upserted;
    fn run(&self, cx: &Ctx<'_>) -> Result<Upserted> {
        let parent = self.parent.as_deref().map(|p| cx.node(p)).transpose()?;
        let not_before = match &self.not_before {
            Some(w) => Some(crate::duration::parse_time(w, cx.store.now()?)?),
            None => None,
        };
        let id = cx.store.upsert(crate::rules::Upsert {
            workspace: cx.workspace(self.workspace.as_deref())?,
            kind: self.kind.clone(),
            summary: self.summary.clone(),
            parent,
            role: self.role.clone(),
            priority: self.priority,
            estimate: self.estimate,
            labels: self.labels.clone(),
            resources: self.resources.clone(),
            ref_: self.ref_.clone(),
            max_attempts: self.max_attempts,
            not_before,
        })?;
        Ok(Upserted { id })
    }
}

/// Make `child` wait on `parent`: a hard link is satisfied when the parent is done, a soft
/// one when it finished in any status. Linking twice is a no-op.
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Link {
    /// The prerequisite.
    pub parent: String,
    /// The node that waits.
    pub child: String,
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long))]
    pub soft: bool,
}

impl Verb for Link {
    const NAME: &'static str = "link";
    type Reply = Done;
    fn run(&self, cx: &Ctx<'_>) -> Result<Done> {
        cx.store
            .link(cx.node(&self.parent)?, cx.node(&self.child)?, self.soft)?;
        Ok(Done::OK)
    }
}

/// Remove the link that makes `child` wait on `parent` (a link that is not there: no-op).
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Unlink {
    pub parent: String,
    pub child: String,
}

impl Verb for Unlink {
    const NAME: &'static str = "unlink";
    type Reply = Done;
    fn run(&self, cx: &Ctx<'_>) -> Result<Done> {
        cx.store
            .unlink(cx.node(&self.parent)?, cx.node(&self.child)?)?;
        Ok(Done::OK)
    }
}

/// Create or merge every node of a plan, with its links, as one atomic, idempotent write.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Import {
    /// `{"nodes": [{"key", "summary", "deps": [keys or ids], ...}]}`.
    pub plan: Plan,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
}

impl Import {
    /// A request for the plan in `bytes` (JSON), each node checked as `import` checks it.
    pub fn from_bytes(bytes: &[u8], workspace: Option<String>) -> Result<Import> {
        Ok(Import {
            plan: Plan::parse(bytes)?,
            workspace,
        })
    }
}

impl Verb for Import {
    const NAME: &'static str = "import";
    type Reply = Imported;
    fn run(&self, cx: &Ctx<'_>) -> Result<Imported> {
        let ws = cx.workspace(self.workspace.as_deref())?;
        let plan = match cx.bounds.bound {
            true => self.plan.with_refs(|key, text| bound_ref(cx, key, text))?,
            false => self.plan.clone(),
        };
        let ids = cx.store.import(&ws, plan)?;
        Ok(Imported(
            ids.into_iter()
                .map(|(id, key)| ImportedNode { id, key })
                .collect(),
        ))
    }
}

/// A plan's reference to an existing node, for a bound context: the full id of the node of
/// the context's workspace it names. A node id (or prefix) that names none there, a node of
/// another workspace included, is refused as the rules refuse a reference to no node; any
/// other text is left to the rules.
fn bound_ref(cx: &Ctx<'_>, key: &str, text: &str) -> Result<String> {
    match cx.node(text) {
        Ok(id) => Ok(id.to_string()),
        Err(e) if e.code() == crate::error::Code::NotFound => {
            Err(crate::rules::unknown_reference(key, text))
        }
        Err(_) => Ok(text.to_string()),
    }
}

/// Move finished nodes out of the live state: the given ones, and/or those finished at
/// least `older_than` ago; with neither, every finished node of the workspace.
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Archive {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "cli", arg(long, value_name = "DUR"))]
    pub older_than: Option<Dur>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "cli", arg(skip))]
    pub workspace: Option<String>,
}

impl Verb for Archive {
    const NAME: &'static str = "archive";
    type Reply = Archived;
    fn run(&self, cx: &Ctx<'_>) -> Result<Archived> {
        let ws = cx.workspace(self.workspace.as_deref())?;
        let ids = self
            .nodes
            .iter()
            .map(|n| cx.node(n))
            .collect::<Result<Vec<_>>>()?;
        let archived = cx
            .store
            .archive(&ws, &ids, Dur::opt_ms(&self.older_than)?)?;
        Ok(Archived { archived })
    }
}

/// Bring an archived node back into the live state, exactly as it was archived.
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Unarchive {
    pub node: String,
}

impl Verb for Unarchive {
    const NAME: &'static str = "unarchive";
    type Reply = Completed;
    fn run(&self, cx: &Ctx<'_>) -> Result<Completed> {
        let id = cx.node(&self.node)?;
        let status = cx.store.unarchive(id)?;
        Ok(Completed { id, status })
    }
}

/// Show the settings, or change one: `default_ttl` (a duration), `max_held` (0 = no
/// limit), `max_attempts` (a number or "none").
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Config {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
}

impl Verb for Config {
    const NAME: &'static str = "config";
    type Reply = SettingsReply;
    fn run(&self, cx: &Ctx<'_>) -> Result<SettingsReply> {
        if let Some(k) = &self.key {
            crate::Settings::default().get(k)?;
        }
        let s = match (&self.key, &self.value) {
            (Some(k), Some(v)) => cx.store.set_setting(k, v)?,
            (None, Some(_)) => {
                return Err(crate::Error::invalid("config: a value needs a key"));
            }
            _ => cx.store.settings()?,
        };
        Ok(SettingsReply::of(&s, self.key.as_deref()))
    }
}
