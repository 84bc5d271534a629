//! Pools and rate limits: `pool set`, `pool list`, `rate set`, `rate list` (SPEC 13,
//! "Resources"). They are settings (`config pool.NAME N`, `config rate.NAME N/PER`); these
//! verbs set them by name and show how much of each a workspace uses.

use super::{About, Ctx, Door, Reply, Verb};
use crate::error::Result;
use crate::model::limits::LimitUse;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::fmt::Write;

/// Give a pool its number of slots (or remove it).
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PoolSet {
    /// The pool: 1-64 characters of `[A-Za-z0-9._-]`.
    pub name: String,
    /// Its slots, 1 to 1000000, or `none` to remove the pool.
    pub size: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "cli", arg(skip))]
    pub workspace: Option<String>,
}

impl Verb for PoolSet {
    const ABOUT: About = About {
        verb: "pool_set",
        command: "pool set",
        about: "Give a pool its number of slots: a node needing pool:NAME (pool:NAME*K) is granted only while one (K) is free.",
        read_only: false,
        destructive: false,
        idempotent: true,
        // MCP clients set it with the config tool (pool.NAME), one tool fewer to list.
        doors: &[Door::Http],
        summary: "Give pool NAME N slots (none: remove it); prints the pools",
        help: "Example:\n  claimdag pool set gpu 2\n  claimdag upsert --summary \"train\" --resource pool:gpu\n  claimdag upsert --summary \"big train\" --resource 'pool:gpu*2'\n  claimdag pool list\n\nA claim holds its slots until it is handed back (complete, release, reclaim,\nexpiry): a stale holder never keeps one. Changing N never takes a slot from a\nlive claim; it only decides later grants. Each workspace has N slots of its own.\nA pool with no size limits nothing. The same setting: config pool.gpu 2.",
        aliases: &[],
    };
    type Reply = Limits;
    fn run(&self, cx: &Ctx<'_>) -> Result<Limits> {
        let ws = cx.workspace(self.workspace.as_deref())?;
        cx.store
            .set_setting(&format!("pool.{}", self.name), self.size.trim())?;
        Limits::of(cx, &ws, "pool")
    }
}

/// The pools, and how many of their slots the workspace's live claims hold.
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PoolList {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "cli", arg(skip))]
    pub workspace: Option<String>,
}

impl Verb for PoolList {
    const ABOUT: About = About {
        verb: "pool_list",
        command: "pool list",
        about: "List the pools: each one's slots, how many the workspace's live claims hold, and by which nodes.",
        read_only: true,
        destructive: false,
        idempotent: true,
        doors: &[Door::Mcp, Door::Http],
        summary: "List the pools, their slots and who holds them",
        help: "Example:\n  claimdag pool list\n  claimdag pool list --json\n\nOne line a pool: \"pool <NAME>  <held> of <N> slots held  <node>...\".",
        aliases: &[],
    };
    type Reply = Limits;
    fn run(&self, cx: &Ctx<'_>) -> Result<Limits> {
        let ws = cx.workspace(self.workspace.as_deref())?;
        Limits::of(cx, &ws, "pool")
    }
}

/// Give a rate its number of grants per window (or remove it).
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RateSet {
    /// The rate: 1-64 characters of `[A-Za-z0-9._-]`.
    pub name: String,
    /// Grants per window, 1 to 1000000, or `none` to remove the rate.
    pub limit: String,
    /// The window (`1m`, `1h`; a bare number is seconds), 1ms to 366d.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "cli", arg(skip))]
    pub workspace: Option<String>,
}

impl Verb for RateSet {
    const ABOUT: About = About {
        verb: "rate_set",
        command: "rate set",
        about: "Let a rate grant at most LIMIT claims per window: a node needing rate:NAME is granted only while the window has room.",
        read_only: false,
        destructive: false,
        idempotent: true,
        // MCP clients set it with the config tool (rate.NAME), one tool fewer to list.
        doors: &[Door::Http],
        summary: "Let rate NAME grant LIMIT claims per window PER (none: remove it)",
        help: "Example:\n  claimdag rate set llm 60 1m\n  claimdag upsert --summary \"summarize\" --resource rate:llm\n  claimdag claim-next --assignee a --wait 5m   # wakes when the window has room\n  claimdag rate list\n\nEvery grant of a node needing rate:NAME takes one of the window's LIMIT\ngrants for PER from that moment, whatever becomes of the claim; claim-next passes\nover such a node while the window is full, and --wait wakes when a grant leaves\nthe window. Each workspace has a window of its own. A rate with no window set\nlimits nothing. The same setting: config rate.llm 60/1m.",
        aliases: &[],
    };
    type Reply = Limits;
    fn run(&self, cx: &Ctx<'_>) -> Result<Limits> {
        let ws = cx.workspace(self.workspace.as_deref())?;
        let value = match (self.limit.trim(), &self.per) {
            ("none", None) => "none".to_string(),
            (n, Some(per)) => format!("{n}/{}", per.trim()),
            (n, None) => {
                return Err(crate::Error::invalid(format!(
                    "rate {}: {n:?} needs its window (rate set {} {n} 1m), or give none",
                    self.name, self.name
                )))
            }
        };
        cx.store
            .set_setting(&format!("rate.{}", self.name), &value)?;
        Limits::of(cx, &ws, "rate")
    }
}

/// The rates, and how many grants the workspace made in each one's window.
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RateList {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "cli", arg(skip))]
    pub workspace: Option<String>,
}

impl Verb for RateList {
    const ABOUT: About = About {
        verb: "rate_list",
        command: "rate list",
        about: "List the rates: each one's grants per window and how many the workspace made in the window that ends now.",
        read_only: true,
        destructive: false,
        idempotent: true,
        doors: &[Door::Mcp, Door::Http],
        summary: "List the rates and the grants in their windows",
        help: "Example:\n  claimdag rate list\n\nOne line a rate: \"rate <NAME>  <used> of <LIMIT> per <PER> granted  <node>...\".",
        aliases: &[],
    };
    type Reply = Limits;
    fn run(&self, cx: &Ctx<'_>) -> Result<Limits> {
        let ws = cx.workspace(self.workspace.as_deref())?;
        Limits::of(cx, &ws, "rate")
    }
}

/// Pools or rates, with what a workspace uses of each.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(transparent)]
pub struct Limits(pub Vec<LimitUse>);

impl Limits {
    fn of(cx: &Ctx<'_>, ws: &str, kind: &str) -> Result<Limits> {
        let all = cx.store.limits(ws)?;
        Ok(Limits(all.into_iter().filter(|l| l.kind == kind).collect()))
    }
}

impl Reply for Limits {
    fn text(&self) -> String {
        let mut out = String::new();
        for l in &self.0 {
            let _ = match l.per_ms {
                None => write!(out, "pool {}  {} of {} slots held", l.name, l.used, l.size),
                Some(per) => write!(
                    out,
                    "rate {}  {} of {} per {} granted",
                    l.name,
                    l.used,
                    l.size,
                    crate::duration::format_ms(per)
                ),
            };
            for n in &l.nodes {
                let _ = write!(out, "  {}", n.short());
            }
            out.push('\n');
        }
        out
    }
    fn object_key() -> Option<&'static str> {
        Some("limits")
    }
}
