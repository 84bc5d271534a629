//! The verbs that shape the DAG and the store: upsert, link, unlink, import, archive,
//! unarchive, config.

use super::replies::{Archived, Completed, Done, Imported, ImportedNode, SettingsReply, Upserted};
use super::{About, Ctx, Door, Dur, Verb};
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
    /// Overdue past this time (RFC 3339, or +DUR).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "cli", arg(long, value_name = "WHEN"))]
    pub deadline: Option<String>,
    /// Most it may spend: tokens=N[,cost=X].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "cli", arg(long, value_name = "SPEND"))]
    pub budget: Option<String>,
    /// The workspace (default: the caller's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "cli", arg(skip))]
    pub workspace: Option<String>,
}

impl Verb for Upsert {
    const ABOUT: About = About {
        verb: "upsert",
        command: "upsert",
        about: "Create a node of work (or update the one with the same summary, kind and parent); returns its id. not_before (RFC 3339, or \"+2h\") schedules it for later.",
        read_only: false,
        destructive: false,
        idempotent: true,
        doors: &[Door::Planner, Door::Http],
        summary: "Create a node, or merge fields into the node with the same identity; prints its id",
        help: "Example:\n  claimdag upsert --summary \"parse the manifest header\" --priority 2 --label parser\n  claimdag upsert --summary \"nightly rebuild\" --not-before 2026-12-04T02:00:00Z\n  claimdag upsert --summary \"retry the upload\" --not-before +10m\n  claimdag upsert --summary \"port the parser\" --deadline +4h --budget tokens=200000,cost=3\n  claimdag upsert --kind epic --summary \"release 2.0\"\n\nThe id is minted from workspace, kind, parent and summary: upserting the same\nfields again returns the same id and merges role, priority, estimate, labels,\nresources, ref, max-attempts and not-before (unless the node is finished).\nA node with a not-before still to come shows as scheduled and is not granted.\nPast its --deadline an unfinished node is overdue; past its --budget (what its\nclaims report with renew --usage) its holder is asked to stop. A node of kind\nepic is a container: never claimed, it finishes when its children (--parent) do.",
        aliases: &[],
    };
    type Reply = Upserted;
    fn run(&self, cx: &Ctx<'_>) -> Result<Upserted> {
        let parent = self.parent.as_deref().map(|p| cx.node(p)).transpose()?;
        let when = |w: &Option<String>, what: &str| -> Result<Option<u64>> {
            match w {
                Some(w) => crate::duration::parse_time_of(what, w, cx.store.now()?).map(Some),
                None => Ok(None),
            }
        };
        let not_before = when(&self.not_before, "not_before")?;
        let deadline = when(&self.deadline, "deadline")?;
        let budget = self
            .budget
            .as_deref()
            .map(|b| crate::model::Budget::parse("budget", b))
            .transpose()?;
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
            deadline,
            budget,
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
    const ABOUT: About = About {
        verb: "link",
        command: "link",
        about: "Make child wait on parent (hard: parent must be done; soft: parent must finish).",
        read_only: false,
        destructive: false,
        idempotent: true,
        doors: &[Door::Planner, Door::Http],
        summary: "Make CHILD wait on PARENT (hard: PARENT must be done; --soft: PARENT must finish)",
        help: "Example:\n  claimdag link 092dca29 71368334\n  claimdag link --soft 092dca29... 71368334...\n\nLinking twice is a no-op.",
        aliases: &[],
    };
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
    const ABOUT: About = About {
        verb: "unlink",
        command: "unlink",
        about: "Remove the link that makes child wait on parent.",
        read_only: false,
        destructive: true,
        idempotent: true,
        doors: &[Door::Planner, Door::Http],
        summary:
            "Remove the link that makes CHILD wait on PARENT (a link that is not there: no-op)",
        help: "Example:\n  claimdag unlink 092dca29 71368334",
        aliases: &[],
    };
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

/// `import`'s command-line form: the plan's file.
#[cfg(feature = "cli")]
#[derive(clap::Args, Debug)]
pub struct PlanFile {
    /// The plan file, or - for standard input
    file: String,
}

#[cfg(feature = "cli")]
impl super::Form<Import> for PlanFile {
    fn request(&self) -> Result<std::borrow::Cow<'_, Import>> {
        Import::from_bytes(&super::cli::read_file(&self.file)?, None).map(std::borrow::Cow::Owned)
    }
}

impl Verb for Import {
    const ABOUT: About = About {
        verb: "import",
        command: "import",
        about: "Create a whole plan of nodes and links in one atomic write; safe to repeat.",
        read_only: false,
        destructive: false,
        idempotent: true,
        doors: &[Door::Planner, Door::Http],
        summary: "Create or merge every node of a JSON plan, with its links, as one atomic write",
        help: "Example:\n  claimdag import plan.json\n  cat plan.json | claimdag import -\n\nThe plan: {\"nodes\": [{\"key\": \"parse\", \"summary\": \"parse the header\"},\n                     {\"key\": \"reject\", \"summary\": \"reject bad input\", \"deps\": [\"parse\"]}]}\nEach node may also give kind, parent, soft_deps, role, priority, estimate, labels,\nresources, ref and max_attempts. parent and deps name a key of the plan or an\nexisting id. Importing the same plan again changes nothing. Prints \"<id>  <key>\"\nper node in plan order.",
        aliases: &[],
    };
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
    const ABOUT: About = About {
        verb: "archive",
        command: "archive",
        about: "Move finished nodes out of the live DAG.",
        read_only: false,
        destructive: true,
        idempotent: true,
        doors: &[Door::Planner, Door::Http],
        summary: "Move finished nodes out of the live state into the archive",
        help: "Example:\n  claimdag archive 092dca29\n  claimdag archive --older-than 7d\n  claimdag archive                  # every finished node of the workspace\n\nA node waiting on an archived node sees how it ended. list --archived, show and\nlog still find archived nodes; unarchive brings one back.",
        aliases: &[],
    };
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
    const ABOUT: About = About {
        verb: "unarchive",
        command: "unarchive",
        about: "Bring an archived node back.",
        read_only: false,
        destructive: false,
        idempotent: false,
        doors: &[Door::Mcp, Door::Http],
        summary: "Bring an archived node back into the live state",
        help: "Example:\n  claimdag unarchive 092dca29",
        aliases: &[],
    };
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
    const ABOUT: About = About {
        verb: "config",
        command: "config",
        about: "Read the store's settings (default_ttl, max_held, max_attempts, pool.NAME slots, rate.NAME N/PER), or change one.",
        read_only: false,
        destructive: true,
        idempotent: true,
        doors: &[Door::Mcp, Door::Http],
        summary: "Show or change settings: default_ttl, max_held, max_attempts, retry_delay, retry_delay_max, history_keep",
        help: "Example:\n  claimdag config\n  claimdag config default_ttl 10m\n  claimdag config max_held 0        # no limit\n  claimdag config max_attempts none\n  claimdag config retry_delay 30s   # a handed-back node waits 30s, 1m, 2m, ...\n  claimdag config retry_delay_max 1h\n  claimdag config history_keep 7d   # older history moves to the archive (log --all)\n  claimdag config pool.gpu 2        # pool set gpu 2\n  claimdag config rate.llm 60/1m    # rate set llm 60 1m",
        aliases: &[],
    };
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
