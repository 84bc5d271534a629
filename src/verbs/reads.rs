//! The verbs that only read: list, show, next, ready, log, graph, check, and `actor NAME`.

use super::replies::{ActorId, CheckReport, Graphed, History, NextNode, Nodes, Picks, Upserted};
use super::{About, Ctx, Door, Verb};
use crate::error::{Error, Result};
use crate::graph::Format;
use crate::id::Actor;
use crate::store::ListFilter;
use crate::view::NodeView;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// List nodes in creation order: live unfinished ones, or those with a status or display
/// word; `terminal` adds finished ones, `archived` shows archived ones instead, `all` shows
/// everything.
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct List {
    /// todo, ready, blocked, claimed, expired, done, failed or cancelled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "cli", arg(long, value_name = "S"))]
    pub status: Option<String>,
    /// Only the claims of this actor (32 hex or name:NAME).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "cli", arg(long, value_name = "ACTOR"))]
    pub holder: Option<String>,
    /// Include finished live nodes.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long))]
    pub terminal: bool,
    /// Show archived nodes only.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long))]
    pub archived: bool,
    /// Everything: live, finished and archived.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long))]
    pub all: bool,
    /// Archived nodes too, after the live ones.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(skip))]
    pub with_archived: bool,
    /// Only ready (true) or only not ready (false) nodes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "cli", arg(skip))]
    pub ready: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "cli", arg(skip))]
    pub workspace: Option<String>,
}

impl Verb for List {
    const ABOUT: About = About {
        verb: "list",
        command: "list",
        about: "List nodes by status (ready, claimed, expired, done, ...), holder, or everything.",
        read_only: true,
        destructive: false,
        idempotent: true,
        doors: &[Door::Planner, Door::Http],
        summary: "List live unfinished nodes in creation order",
        help: "Example:\n  claimdag list --status ready\n  claimdag list --terminal\n  claimdag list --holder name:codex-1\n\nColumns: id prefix, display status, kind, generation, summary.",
        aliases: &[],
    };
    type Reply = Nodes;
    fn run(&self, cx: &Ctx<'_>) -> Result<Nodes> {
        let holder = self
            .holder
            .as_deref()
            .map(|h| Actor::parse_actor(h, "holder"))
            .transpose()?;
        let filter = ListFilter {
            workspace: Some(cx.workspace(self.workspace.as_deref())?),
            status: self.status.clone(),
            holder,
            terminal: self.terminal || self.all,
            archived: self.archived || self.all || self.with_archived,
            only_archived: self.archived && !self.all,
            ready: self.ready,
        };
        let mut views = cx.store.list(&filter)?;
        let names = cx.store.names()?;
        views.iter_mut().for_each(|v| names.name_view(v));
        Ok(Nodes(views))
    }
}

/// Every field of one node (live or archived) and why it is not ready.
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Show {
    pub node: String,
}

impl Verb for Show {
    const ABOUT: About = About {
        verb: "show",
        command: "show",
        about: "Read every field of one node, and why it is not ready.",
        read_only: true,
        destructive: false,
        idempotent: true,
        doors: &[Door::Worker, Door::Planner, Door::Http],
        summary: "Show every field of a node, and why it is not ready",
        help: "Example:\n  claimdag show 092dca29",
        aliases: &["get"],
    };
    type Reply = NodeView;
    fn run(&self, cx: &Ctx<'_>) -> Result<NodeView> {
        let mut view = cx.store.get(cx.node(&self.node)?)?;
        cx.store.names()?.name_view(&mut view);
        Ok(view)
    }
}

/// The ready node to work on next (longest critical path, then priority, exact role, age).
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Next {
    /// Consider nodes of this role or of none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "cli", arg(long, value_name = "R"))]
    pub role: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "cli", arg(skip))]
    pub workspace: Option<String>,
}

impl Verb for Next {
    const ABOUT: About = About {
        verb: "next",
        command: "next",
        about: "Which node claim_next would take, without claiming it.",
        read_only: true,
        destructive: false,
        idempotent: true,
        doors: &[Door::Mcp, Door::Http],
        summary: "Print the id of the ready node to work on next (exit 1 when none)",
        help: "Example:\n  claimdag next --role reviewer\n\nPicks the longest critical path, then higher priority, then the exact role,\nthen the older node. Without --role only nodes with no role are offered.",
        aliases: &[],
    };
    type Reply = NextNode;
    fn run(&self, cx: &Ctx<'_>) -> Result<NextNode> {
        let ws = cx.workspace(self.workspace.as_deref())?;
        let pick = cx.store.next(&ws, self.role.as_deref())?;
        Ok(NextNode(pick.map(|p| Upserted { id: p.id })))
    }
}

/// What may still make a node ready for a role: the live claims, scheduled nodes, gates
/// and epics whose ending would. Empty when nothing is left: a worker that finds nothing
/// ready may stop (it is what `claimdag work` waits on).
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Pending {
    /// Work for this role (or for none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "cli", arg(long, value_name = "R"))]
    pub role: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "cli", arg(skip))]
    pub workspace: Option<String>,
}

impl Verb for Pending {
    const ABOUT: About = About {
        verb: "pending",
        command: "pending",
        about: "Whether work is left: nodes ready now, and those whose ending may make more ready; finished: none.",
        read_only: true,
        destructive: false,
        idempotent: true,
        doors: &[Door::Mcp, Door::Http],
        summary: "Print the nodes whose ending may still make work ready (none: nothing is left)",
        help: "Example:\n  claimdag claim-next --assignee name:w1 || claimdag pending\n\nTells waiting from finished: how many nodes are ready now for the role, then the\nlive claims, scheduled nodes, gates and epics whose ending may still make one\nready (one line each); \"finished\" when there are none of either: a worker may\nstop. --json: {\"ready\", \"pending\": [{\"id\", \"display\", \"summary\"}], \"finished\"}.",
        aliases: &[],
    };
    type Reply = super::replies::PendingNodes;
    fn run(&self, cx: &Ctx<'_>) -> Result<super::replies::PendingNodes> {
        let ws = cx.workspace(self.workspace.as_deref())?;
        let ready = cx.store.ready(&ws, self.role.as_deref())?.len();
        let ids = cx.store.pending(&ws, self.role.as_deref())?;
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            if let Ok(v) = cx.store.get(id) {
                out.push(super::replies::PendingNode {
                    id,
                    display: v.display,
                    summary: v.node.summary.clone(),
                });
            }
        }
        Ok(super::replies::PendingNodes {
            finished: ready == 0 && out.is_empty(),
            ready,
            pending: out,
        })
    }
}

/// The ready nodes in the order `next` picks them, each with its critical path.
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Ready {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "cli", arg(long, value_name = "R"))]
    pub role: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "cli", arg(skip))]
    pub workspace: Option<String>,
}

impl Verb for Ready {
    const ABOUT: About = About {
        verb: "ready",
        command: "ready",
        about: "See which nodes are ready, in the order claim_next would take them.",
        read_only: true,
        destructive: false,
        idempotent: true,
        doors: &[Door::Worker, Door::Planner, Door::Http],
        summary: "List ready nodes in the order next picks them, with their critical paths",
        help: "Example:\n  claimdag ready --role reviewer",
        aliases: &[],
    };
    type Reply = Picks;
    fn run(&self, cx: &Ctx<'_>) -> Result<Picks> {
        let ws = cx.workspace(self.workspace.as_deref())?;
        Ok(Picks(cx.store.ready(&ws, self.role.as_deref())?))
    }
}

/// The history, oldest first: every transition, or one node's.
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Log {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// Only the writes after this one (a `seq` seen before).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "cli", arg(long, value_name = "SEQ"))]
    pub since: Option<u64>,
    /// The archived history too (older than `history_keep`, `config`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    #[cfg_attr(feature = "cli", arg(long))]
    pub all: bool,
}

impl Verb for Log {
    const ABOUT: About = About {
        verb: "log",
        command: "log",
        about: "Read the history of a node (or of the store): every claim, hand-back and completion.",
        read_only: true,
        destructive: false,
        idempotent: true,
        doors: &[Door::Worker, Door::Http],
        summary: "Print the history, oldest first",
        help: "Example:\n  claimdag log\n  claimdag log 092dca29\n  claimdag log --since 42   # only the writes after write 42\n  claimdag log --all        # the archived history too (config history_keep)",
        aliases: &[],
    };
    type Reply = History;
    fn run(&self, cx: &Ctx<'_>) -> Result<History> {
        let id = self.node.as_deref().map(|n| cx.node(n)).transpose()?;
        let since = self.since.unwrap_or(0);
        let mut lines = match id {
            None if cx.bounds.bound => cx.store.history_in(since, &cx.workspace, self.all)?,
            id if self.all => cx.store.history_archived(since, id)?,
            id => cx.store.history_since(since, id)?,
        };
        let names = cx.store.names()?;
        lines.iter_mut().for_each(|l| names.name_line(l));
        Ok(History(lines))
    }
}

/// Follow the history: print every write's events as it is committed, by any process or
/// host, until interrupted (or until the reader goes away).
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Watch {
    /// First replay the writes after this one (a `seq` seen before; 0: the whole history).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "cli", arg(long, value_name = "SEQ"))]
    pub since: Option<u64>,
}

/// The DAG as Graphviz dot, Mermaid or JSON, coloured by status, the critical path in red.
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Graph {
    /// dot (default), mermaid or json.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "cli", arg(long, value_name = "FORMAT"))]
    pub format: Option<String>,
    /// Include finished nodes.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long))]
    pub all: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "cli", arg(skip))]
    pub workspace: Option<String>,
}

impl Verb for Graph {
    const ABOUT: About = About {
        verb: "graph",
        command: "graph",
        about: "Draw the DAG in Mermaid or dot, critical path in red.",
        read_only: true,
        destructive: false,
        idempotent: true,
        doors: &[Door::Planner, Door::Http],
        summary: "Draw the DAG (Graphviz dot, Mermaid or JSON), coloured by status, critical path in red",
        help: "Example:\n  claimdag graph | dot -Tpng -o dag.png\n  claimdag graph --format mermaid --all\n  claimdag graph --format json | jq '.nodes | length'\n\nHard links are solid, soft links dashed. Finished nodes are left out unless --all.",
        aliases: &[],
    };
    type Reply = Graphed;
    fn run(&self, cx: &Ctx<'_>) -> Result<Graphed> {
        let format = self.format.as_deref().unwrap_or("dot");
        let f = Format::parse(format).ok_or_else(|| {
            Error::invalid(format!(
                "format must be dot, mermaid or json, got {format:?}"
            ))
        })?;
        let ws = cx.workspace(self.workspace.as_deref())?;
        Ok(Graphed {
            format: format.to_string(),
            graph: cx.store.graph(&ws, self.all, f)?,
        })
    }
}

/// Verify the store: files, checksums and the DAG's invariants.
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Check {}

impl Verb for Check {
    const ABOUT: About = About {
        verb: "check",
        command: "check",
        about: "Verify the store's invariants.",
        read_only: true,
        destructive: false,
        idempotent: true,
        doors: &[Door::Planner, Door::Http],
        summary: "Verify the store's files, checksums and DAG invariants (exit 6 on a problem)",
        help: "Example:\n  claimdag check",
        aliases: &[],
    };
    type Reply = CheckReport;
    fn run(&self, cx: &Ctx<'_>) -> Result<CheckReport> {
        Ok(cx.store.check()?.into())
    }
}

/// The actor a name stands for (`name:NAME` wherever an actor is taken).
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ActorOf {
    /// 1-64 characters of `[A-Za-z0-9._@-]`.
    pub name: String,
}

impl Verb for ActorOf {
    const ABOUT: About = About {
        verb: "actor",
        command: "actor",
        about: "The actor id a name stands for (name:NAME is accepted wherever an actor is).",
        read_only: true,
        destructive: false,
        idempotent: true,
        doors: &[Door::Mcp, Door::Http],
        summary: "Print the actor a name stands for (name:NAME is taken wherever an actor is)",
        help: "Example:\n  claimdag actor codex-1\n  claimdag claim 092dca29 --assignee name:codex-1   # the same actor\n\nThe actor is the first 16 bytes of SHA-256 over \"claimdag-actor-v1\" and NAME,\neach written as its byte length (8 bytes, big endian) and its bytes.",
        aliases: &[],
    };
    type Reply = ActorId;
    fn run(&self, _: &Ctx<'_>) -> Result<ActorId> {
        Ok(ActorId {
            actor: Actor::from_name_arg(&self.name)?,
        })
    }
}

/// Copy a whole store, history and archive included, into a new one: a directory to a
/// PostgreSQL database or back (`--from DIR --to postgres://...`).
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Copy {
    /// The store to copy (a directory or a postgres:// URL).
    #[cfg_attr(feature = "cli", arg(long, value_name = "STORE"))]
    pub from: String,
    /// The new store to write (it must not have been written yet).
    #[cfg_attr(feature = "cli", arg(long, value_name = "STORE"))]
    pub to: String,
}

impl Verb for Copy {
    const ABOUT: About = About {
        verb: "copy",
        command: "copy",
        about: "",
        read_only: false,
        destructive: false,
        idempotent: true,
        doors: &[],
        summary: "Copy a whole store (history and archive included) into a new one, between backends",
        help: "Example:\n  claimdag copy --from ~/.local/state/claimdag --to postgres://ci@db/claims\n  claimdag copy --from 'postgres://ci@db/claims?schema=team_a' --to /tmp/backup\n\nThe destination must be a new store (never written). Generations, history, the\narchive and the settings move as they are; run claimdag check on the copy.",
        aliases: &[],
    };
    type Reply = super::replies::Copied;
    fn run(&self, _: &Ctx<'_>) -> Result<super::replies::Copied> {
        let open = |s: &str| crate::store::Store::open(Some(std::path::Path::new(s)));
        let (from, to) = (open(&self.from)?, open(&self.to)?);
        let dump = from.copy_to(&to)?;
        Ok(super::replies::Copied {
            from: from.location(),
            to: to.location(),
            nodes: dump.nodes.len(),
            archived: dump.archived.len(),
            events: dump.history.len(),
            seq: dump.seq,
        })
    }
}

/// Where the store in use is, and what chose it (`--dir`, `$CLAIMDAG_DIR`, or the default
/// directory when neither is given).
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Where {}

impl Verb for Where {
    const ABOUT: About = About {
        verb: "where",
        command: "where",
        about: "",
        read_only: true,
        destructive: false,
        idempotent: true,
        doors: &[],
        summary: "Print the store in use and what chose it (--dir, CLAIMDAG_DIR or the default)",
        help: "Example:\n  claimdag where\n  CLAIMDAG_DIR=/srv/claims claimdag where --json\n\nThe store is --dir, else $CLAIMDAG_DIR (an absolute path or a postgres:// URL: a\nrelative one is refused, as each process would read it from its own directory),\nelse $XDG_STATE_HOME/claimdag, else ~/.local/state/claimdag. A directory store is\nmade by its first write, which says so on stderr when it is the default one.",
        aliases: &[],
    };
    type Reply = super::replies::Located;
    fn run(&self, cx: &Ctx<'_>) -> Result<super::replies::Located> {
        let store = cx.store;
        let location = store.location();
        let env = std::env::var("CLAIMDAG_DIR").ok().filter(|d| !d.is_empty());
        let defaulted = crate::store::default_dir().ok();
        let chosen_by = match env {
            Some(e)
                if crate::store::without_password(&e).ok().as_deref() == Some(&location)
                    || std::path::Path::new(&e) == std::path::Path::new(&location) =>
            {
                "CLAIMDAG_DIR"
            }
            None if defaulted.as_deref() == store.dir() => "default",
            _ => "--dir",
        };
        Ok(super::replies::Located {
            backend: if store.dir().is_some() {
                "directory"
            } else {
                "postgres"
            }
            .into(),
            exists: store.dir().is_none_or(|d| d.exists()),
            store: location,
            chosen_by: chosen_by.into(),
        })
    }
}
