//! The verbs of claims and their ends: claim, claim-next, renew, release, reclaim,
//! complete, reopen.

use super::args::parse_finish_status;
use super::replies::{Claimed, ClaimedNode, Completed, Granted, HandedBack, Renewed};
use super::{About, Ctx, Door, Dur, Verb};
use crate::error::Result;
use crate::rules::Finish;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Claim a ready node; the reply's generation is the fencing token to renew, release and
/// complete with.
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Claim {
    /// A full id, a unique prefix of at least 8 hex characters, or `xxxxxxxx...`.
    pub node: String,
    /// The claiming actor: 32 hex or name:NAME (default: the caller's actor).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "cli", arg(long, value_name = "ACTOR", required = true))]
    pub assignee: Option<String>,
    /// Claim only if the node is at this generation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "cli", arg(long, value_name = "G"))]
    pub gen: Option<u64>,
    /// The lease (default: the store's default_ttl).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "cli", arg(long, value_name = "DUR"))]
    pub ttl: Option<Dur>,
}

impl Verb for Claim {
    const ABOUT: About = About {
        verb: "claim",
        command: "claim",
        about: "Claim one named node (use claim_next to let the store pick).",
        read_only: false,
        destructive: false,
        idempotent: false,
        doors: &[Door::Mcp, Door::Http],
        summary: "Claim a ready node for ASSIGNEE; prints the new generation (the fencing token)",
        help: "Example:\n  claimdag claim 092dca29 --assignee $(printf '%032x' 7) --ttl 10m\n  claimdag claim 092dca29 --assignee name:codex-1",
        aliases: &[],
    };
    type Reply = ClaimedNode;
    fn run(&self, cx: &Ctx<'_>) -> Result<ClaimedNode> {
        let id = cx.node(&self.node)?;
        let who = cx.actor(self.assignee.as_deref(), "assignee")?;
        let grant = cx
            .store
            .claim_grant(id, who, self.gen, Dur::opt_ms(&self.ttl)?)?;
        Ok(ClaimedNode::from(grant))
    }
}

/// Pick the ready node with the longest critical path and claim it, in one step. With
/// `resume`, an actor that already holds a live claim gets that claim back instead.
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClaimNext {
    /// The claiming actor (default: the caller's actor, e.g. `$CLAIMDAG_ACTOR`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "cli", arg(long, value_name = "ACTOR"))]
    pub assignee: Option<String>,
    /// Consider nodes of this role or of none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "cli", arg(long, value_name = "R"))]
    pub role: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "cli", arg(long, value_name = "DUR"))]
    pub ttl: Option<Dur>,
    /// Answer the actor's live claim in the workspace, if it holds one.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long))]
    pub resume: bool,
    /// When nothing is ready, wait up to this long for a node to become ready (a write of
    /// anyone, a claim running out, a scheduled time passing) instead of answering none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "cli", arg(long, value_name = "DUR"))]
    pub wait: Option<Dur>,
    /// Claim up to this many ready nodes (1 to 1000) in one write, in pick order; the reply
    /// is then the list of claims (one line each).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "cli", arg(long, value_name = "N"))]
    pub count: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "cli", arg(skip))]
    pub workspace: Option<String>,
}

impl Verb for ClaimNext {
    const ABOUT: About = About {
        verb: "claim_next",
        command: "claim-next",
        about: "Take the ready node with the longest critical path (returns id and generation: keep the generation). resume=true after a restart gets back a claim you hold. wait=N: wait up to N seconds for work instead of calling again",
        read_only: false,
        destructive: false,
        idempotent: false,
        doors: &[Door::Worker, Door::Http],
        summary: "Pick and claim the next ready node in one step; prints \"<id>  gen=<g>\" (exit 1 when none)",
        help: "Example:\n  claimdag claim-next --assignee $(printf '%032x' 7) --ttl 5m\n  CLAIMDAG_ACTOR=name:codex-1 claimdag claim-next --resume\n\nThe assignee defaults to $CLAIMDAG_ACTOR. With --resume, an actor that already\nholds a live claim in the workspace gets that claim back (id and generation)\ninstead of a second one or assignee_busy.\n\nWith --wait DUR, when nothing is ready it waits up to DUR for a node to become\nready (another process's write, a lease running out, a scheduled time passing)\nand claims it; nothing by then exits 1. A waiting process uses no CPU:\n  claimdag claim-next --assignee name:w1 --wait 10m\n\nWith --count N, up to N ready nodes are claimed in one write, in pick order, one\nline each (max_held counts each claim):\n  claimdag config max_held 0 && claimdag claim-next --assignee name:w1 --count 10",
        aliases: &[],
    };
    type Reply = Claimed;
    fn takes_env_actor(&self) -> bool {
        self.assignee.is_none()
    }
    fn run(&self, cx: &Ctx<'_>) -> Result<Claimed> {
        let ws = cx.workspace(self.workspace.as_deref())?;
        let who = cx.actor(self.assignee.as_deref(), "assignee")?;
        let (role, ttl) = (self.role.as_deref(), Dur::opt_ms(&self.ttl)?);
        let mut wait = Dur::opt_ms(&self.wait)?.unwrap_or(0);
        if let Some(most) = cx.bounds.max_wait_ms {
            wait = wait.min(most);
        }
        let wait = crate::store::Wait {
            up_to: std::time::Duration::from_millis(wait),
            stop: cx.stop,
        };
        let pick = crate::store::ClaimNextOptions {
            role,
            ttl_ms: ttl,
            resume: self.resume,
            count: self.count,
            wait,
        };
        let got = cx.store.claim_next_with(&ws, who, pick)?;
        let mut all = got.into_iter().map(ClaimedNode::from);
        Ok(match self.count {
            None => Claimed::One(all.next()),
            Some(_) => Claimed::Many(all.collect()),
        })
    }
}

/// Keep a live claim alive: its lease starts again now (with `ttl` if given).
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Renew {
    pub node: String,
    /// The holder (default: the caller's actor).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "cli", arg(long, value_name = "ACTOR", required = true))]
    pub actor: Option<String>,
    /// Renew only at this generation (the one the claim was granted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "cli", arg(long, value_name = "G"))]
    pub gen: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "cli", arg(long, value_name = "DUR"))]
    pub ttl: Option<Dur>,
    /// A checkpoint to leave (at most 64 KiB): the next holder receives it if this one
    /// stops. It replaces the last one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "cli", arg(long, value_name = "TEXT"))]
    pub progress: Option<String>,
    /// This claim's spend so far: tokens=N[,cost=X].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "cli", arg(long, value_name = "SPEND"))]
    pub usage: Option<String>,
}

impl Verb for Renew {
    const ABOUT: About = About {
        verb: "renew",
        command: "renew",
        about: "Keep your claim alive while you work (about every third of its ttl), with your generation; progress leaves a checkpoint for whoever takes the node next. If it says a cancel was requested, stop.",
        read_only: false,
        destructive: false,
        idempotent: true,
        doors: &[Door::Worker, Door::Http],
        summary: "Keep a live claim alive (its lease restarts now)",
        help: "Example:\n  claimdag renew 092dca29 --actor $(printf '%032x' 7) --gen 2\n  claimdag renew 092dca29 --actor name:w1 --gen 2 --progress \"3 of 7 files ported\"\n\nWith --progress, the text is kept as the node's checkpoint: if this holder stops,\nthe next one receives it in its claim. When a cancel was requested, renew prints\n\"cancel requested ...\": stop and complete the node cancelled (or finish it).\nWith --usage tokens=N[,cost=X], the claim reports what it has spent so far (its\ntotal, so a repeated report counts once); past the node's budget, the cancel\nrequest comes back in the same answer.\n  claimdag renew 092dca29 --actor name:w1 --gen 2 --usage tokens=12000,cost=0.42",
        aliases: &[],
    };
    type Reply = Renewed;
    fn run(&self, cx: &Ctx<'_>) -> Result<Renewed> {
        let id = cx.node(&self.node)?;
        let who = cx.actor(self.actor.as_deref(), "actor")?;
        let ttl = Dur::opt_ms(&self.ttl)?;
        let usage = self
            .usage
            .as_deref()
            .map(|u| crate::model::Usage::parse("usage", u))
            .transpose()?;
        let asked =
            cx.store
                .renew_spending(id, who, self.gen, ttl, self.progress.as_deref(), usage)?;
        Ok(Renewed {
            ok: true,
            id,
            cancel_requested: asked,
        })
    }
}

/// Hand a live claim back for another attempt; the generation moves on.
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Release {
    pub node: String,
    /// The holder (default: the caller's actor).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "cli", arg(long, value_name = "ACTOR", required = true))]
    pub actor: Option<String>,
    /// The generation the claim was granted.
    #[cfg_attr(feature = "cli", arg(long, value_name = "G"))]
    pub gen: u64,
    /// Not granted again for this long (instead of the store's retry_delay backoff).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "cli", arg(long, value_name = "DUR"))]
    pub retry_in: Option<Dur>,
}

impl Verb for Release {
    const ABOUT: About = About {
        verb: "release",
        command: "release",
        about: "Hand your claim back so another worker can try, with your generation; retry_in (say \"5m\") keeps it from being taken again before then.",
        read_only: false,
        destructive: true,
        idempotent: false,
        doors: &[Door::Worker, Door::Http],
        summary: "Hand a live claim back; prints the new generation",
        help: "Example:\n  claimdag release 092dca29 --actor $(printf '%032x' 7) --gen 2\n  claimdag release 092dca29 --actor name:w1 --gen 2 --retry-in 5m\n\nThe node is ready again at once, or after the store's backoff (config\nretry_delay), or with --retry-in after that long.",
        aliases: &[],
    };
    type Reply = Granted;
    fn run(&self, cx: &Ctx<'_>) -> Result<Granted> {
        let id = cx.node(&self.node)?;
        let who = cx.actor(self.actor.as_deref(), "actor")?;
        let generation = match Dur::opt_ms(&self.retry_in)? {
            Some(ms) => cx.store.release_retry_in(id, who, self.gen, ms)?,
            None => cx.store.release(id, who, self.gen)?,
        };
        Ok(Granted { id, generation })
    }
}

/// Hand back expired claims, and with `lease` also claims quiet that long (0: every claim).
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Reclaim {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "cli", arg(long, value_name = "DUR"))]
    pub lease: Option<Dur>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "cli", arg(skip))]
    pub workspace: Option<String>,
}

impl Verb for Reclaim {
    const ABOUT: About = About {
        verb: "reclaim",
        command: "reclaim",
        about: "Hand back expired claims, or (with lease) claims quiet that long: frees work of stalled workers.",
        read_only: false,
        destructive: true,
        idempotent: false,
        doors: &[Door::Mcp, Door::Http],
        summary: "Hand back expired claims, and with --lease claims quiet that long; prints each",
        help: "Example:\n  claimdag reclaim\n  claimdag reclaim --lease 60     # also claims not renewed for 60 s\n  claimdag reclaim --lease 0      # every claim",
        aliases: &[],
    };
    type Reply = HandedBack;
    fn run(&self, cx: &Ctx<'_>) -> Result<HandedBack> {
        let ws = cx.workspace(self.workspace.as_deref())?;
        let handed = cx.store.reclaim(&ws, Dur::opt_ms(&self.lease)?)?;
        Ok(HandedBack(
            handed
                .into_iter()
                .map(|(id, generation)| Granted { id, generation })
                .collect(),
        ))
    }
}

/// Finish a claimed node at the generation its claim was granted (a todo node may be
/// cancelled at its current generation).
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Complete {
    pub node: String,
    /// done, failed or cancelled.
    #[cfg_attr(feature = "cli", arg(long, value_name = "STATUS"))]
    #[schemars(extend("enum" = ["done", "failed", "cancelled"]))]
    pub status: String,
    /// The generation the claim was granted.
    #[cfg_attr(feature = "cli", arg(long, value_name = "G"))]
    pub gen: u64,
    /// Refuse unless this actor is the holder (default: the caller's actor, if any).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "cli", arg(long, value_name = "ACTOR"))]
    pub actor: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "cli", arg(long, value_name = "TEXT"))]
    pub note: Option<String>,
    /// What the node produced: any JSON value (at most 64 KiB serialised). Its dependents
    /// receive it as an input when they are claimed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    // The command line reads it as text when the verb runs (`cli::args::CompleteArgs`).
    #[cfg_attr(feature = "cli", arg(skip))]
    pub output: Option<serde_json::Value>,
}

impl Complete {
    /// The completion this request asks for, as the context allows it.
    pub(super) fn finish(&self, cx: &Ctx<'_>) -> Result<Finish> {
        let status = parse_finish_status(&self.status)?;
        let node = cx.node(&self.node)?;
        let (actor, held) = if cx.bounds.holder_only {
            (Some(cx.actor(self.actor.as_deref(), "actor")?), true)
        } else {
            (cx.opt_actor(self.actor.as_deref(), "actor")?, false)
        };
        Ok(Finish {
            node,
            status,
            gen: self.gen,
            actor,
            note: self.note.clone(),
            output: self.output.clone(),
            held,
        })
    }
}

impl Verb for Complete {
    const ABOUT: About = About {
        verb: "complete",
        command: "complete",
        about: "Finish your claimed node: status done or failed, with the generation your claim returned; output (any JSON) goes to the nodes that depend on it.",
        read_only: false,
        destructive: true,
        idempotent: false,
        doors: &[Door::Worker, Door::Http],
        summary: "Finish a claimed node at the generation you were granted",
        help: "Example:\n  claimdag complete 092dca29 --status done --gen 2 --note \"merged\"\n  claimdag complete 092dca29 --status done --gen 2 --output '{\"tables\": 12}'\n\nA todo node may be cancelled at its current generation without a claim.\nWith --output, the JSON value is stored and handed to the nodes that depend on\nthis one, as inputs in their claims.",
        aliases: &[],
    };
    type Reply = Completed;
    fn run(&self, cx: &Ctx<'_>) -> Result<Completed> {
        let f = self.finish(cx)?;
        let (id, status) = (f.node, f.status);
        cx.store.complete_with(f)?;
        Ok(Completed { id, status })
    }
}

/// Put a finished node back to todo; the generation moves on.
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Reopen {
    pub node: String,
    /// Reopen only at this generation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "cli", arg(long, value_name = "G"))]
    pub gen: Option<u64>,
}

impl Verb for Reopen {
    const ABOUT: About = About {
        verb: "reopen",
        command: "reopen",
        about: "Put a finished node back to todo.",
        read_only: false,
        destructive: true,
        idempotent: false,
        doors: &[Door::Mcp, Door::Http],
        summary: "Put a finished node back to todo; prints the new generation",
        help: "Example:\n  claimdag reopen 092dca29 --gen 2",
        aliases: &[],
    };
    type Reply = Granted;
    fn run(&self, cx: &Ctx<'_>) -> Result<Granted> {
        let id = cx.node(&self.node)?;
        let generation = cx.store.reopen(id, self.gen)?;
        Ok(Granted { id, generation })
    }
}

/// Whether a generation is still the node's live claim: what a merge queue or a CI job asks
/// before it takes work done under that claim.
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FenceCheck {
    pub node: String,
    /// The generation the work was done under (a commit's `Claimdag-Generation:`).
    pub gen: u64,
}

impl Verb for FenceCheck {
    const ABOUT: About = About {
        verb: "fence_check",
        command: "fence-check",
        about: "Whether gen is still the node's live claim: refused stale_generation when the claim was handed back or ran out.",
        read_only: true,
        destructive: false,
        idempotent: true,
        doors: &[Door::Mcp, Door::Http],
        summary: "Exit 0 when GEN is the node's live claim, else 5 with the stale generation",
        help: "Example:\n  claimdag fence-check 092dca29 3 && git merge --ff-only agent-branch\n\nPrints \"gen=<g>\" when GEN is the node's claim and its lease is running; a\nclaim handed back, finished or run out is refused stale_generation (exit 5)\nwith the node's current generation.",
        aliases: &[],
    };
    type Reply = Granted;
    fn run(&self, cx: &Ctx<'_>) -> Result<Granted> {
        let id = cx.node(&self.node)?;
        let v = cx.store.get(id)?;
        crate::rules::fence_check(&v.node, v.display, self.gen)?;
        Ok(Granted {
            id,
            generation: self.gen,
        })
    }
}
