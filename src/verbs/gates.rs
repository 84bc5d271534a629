//! `approve` and `reject`: a person resolves a gate (SPEC 13, "What people decide").

use super::replies::Completed;
use super::{About, Ctx, Door, Verb};
use crate::error::Result;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Approve a gate: it is done, and the nodes waiting on it go on.
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Approve {
    /// The gate.
    pub node: String,
    /// Its generation, as shown.
    #[cfg_attr(feature = "cli", arg(long, value_name = "G"))]
    pub gen: u64,
    /// Why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "cli", arg(long, value_name = "TEXT"))]
    pub note: Option<String>,
    /// Who decides.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "cli", arg(long, value_name = "ACTOR"))]
    pub actor: Option<String>,
}

impl Verb for Approve {
    const ABOUT: About = About {
        verb: "approve",
        command: "approve",
        about: "Approve a gate (kind gate) at its generation: done.",
        read_only: false,
        destructive: false,
        idempotent: false,
        doors: &[Door::Planner, Door::Http],
        summary: "Approve a gate at the generation shown (it is done)",
        help: "Example:\n  gate=$(claimdag upsert --kind gate --summary \"review the schema change\")\n  claimdag link $gate 092dca29          # the migration waits for the review\n  claimdag approve $gate --gen 1 --note \"looks right\" --actor name:ada\n\nA gate is never offered to a worker or claimed; once its prerequisites are\ndone it shows ready and waits for approve or reject. Both are fenced like a\ncompletion: a generation that is not the gate's (a page shown before the gate\nwas reopened) is stale_generation, a gate already resolved is terminal.",
        aliases: &[],
    };
    type Reply = Completed;
    fn run(&self, cx: &Ctx<'_>) -> Result<Completed> {
        resolve(
            cx,
            &self.node,
            self.gen,
            true,
            self.note.as_deref(),
            self.actor.as_deref(),
        )
    }
}

/// Reject a gate: it failed, and the nodes waiting on it are blocked.
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Reject {
    /// The gate.
    pub node: String,
    /// Its generation, as shown.
    #[cfg_attr(feature = "cli", arg(long, value_name = "G"))]
    pub gen: u64,
    /// Why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "cli", arg(long, value_name = "TEXT"))]
    pub note: Option<String>,
    /// Who decides.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "cli", arg(long, value_name = "ACTOR"))]
    pub actor: Option<String>,
}

impl Verb for Reject {
    const ABOUT: About = About {
        verb: "reject",
        command: "reject",
        about: "Reject a gate (kind gate) at its generation: failed.",
        read_only: false,
        destructive: true,
        idempotent: false,
        doors: &[Door::Planner, Door::Http],
        summary: "Reject a gate at the generation shown (it failed)",
        help: "Example:\n  claimdag reject 5be1c0de --gen 1 --note \"drop the column first\" --actor name:ada\n  claimdag reopen 5be1c0de              # ask again later: a new generation\n\nThe gate ends failed: the nodes that depend on it are blocked until it is\nreopened. Fenced like approve.",
        aliases: &[],
    };
    type Reply = Completed;
    fn run(&self, cx: &Ctx<'_>) -> Result<Completed> {
        resolve(
            cx,
            &self.node,
            self.gen,
            false,
            self.note.as_deref(),
            self.actor.as_deref(),
        )
    }
}

/// Give a parked node (out of attempts) fresh attempts; its generation moves on.
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Retry {
    /// The parked node.
    pub node: String,
    /// Its generation, as shown.
    #[cfg_attr(feature = "cli", arg(long, value_name = "G"))]
    pub gen: u64,
}

impl Verb for Retry {
    const ABOUT: About = About {
        verb: "retry",
        command: "retry",
        about: "Give a parked node (out of attempts) fresh attempts at its generation.",
        read_only: false,
        destructive: false,
        idempotent: false,
        doors: &[Door::Planner, Door::Http],
        summary: "Give a parked node fresh attempts (prints its new generation)",
        help: "Example:\n  claimdag list --status parked\n  claimdag show 092dca29               # its note says what failed last\n  claimdag retry 092dca29 --gen 4\n\nA node that used every attempt its cap allows (max_attempts) shows parked and\nis never offered again. retry starts its attempts from 0 and moves its\ngeneration on, so it is ready again; a generation that is not the node's is\nstale_generation, a node that is not parked invalid_input.",
        aliases: &[],
    };
    type Reply = super::replies::Granted;
    fn run(&self, cx: &Ctx<'_>) -> Result<super::replies::Granted> {
        let id = cx.node(&self.node)?;
        let generation = cx.store.retry(id, self.gen)?;
        Ok(super::replies::Granted { id, generation })
    }
}

fn resolve(
    cx: &Ctx<'_>,
    node: &str,
    gen: u64,
    approve: bool,
    note: Option<&str>,
    actor: Option<&str>,
) -> Result<Completed> {
    let id = cx.node(node)?;
    let actor = cx.opt_actor(actor, "actor")?;
    let status = cx.store.decide_gate(id, gen, approve, actor, note)?;
    Ok(Completed { id, status })
}
