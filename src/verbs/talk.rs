//! The verbs of a holder and the rest talking: `cancel`, and `complete_many` (several
//! completions in one write). A checkpoint rides on `renew`, an output on `complete`.

use super::replies::{CancelReply, Completed, CompletedMany};
use super::{About, Complete, Ctx, Door, Verb};
use crate::error::{Error, Result};
use crate::model::Status;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Cancel a node, by anyone: a todo node is cancelled at once; the holder of a claimed
/// node is asked to stop (it learns it at its next renew, and then completes the node
/// cancelled or finishes it); a finished node is refused as terminal.
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Cancel {
    /// A full id, a unique prefix of at least 8 hex characters, or `xxxxxxxx...`.
    pub node: String,
    /// Why, in words the holder (often a model) acts on; at most 4096 bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "cli", arg(long, value_name = "TEXT"))]
    pub reason: Option<String>,
    /// Who asks: 32 hex or name:NAME (default: the caller's actor, if any).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "cli", arg(long, value_name = "ACTOR"))]
    pub actor: Option<String>,
    /// Only if the node is at this generation (the one the asker saw).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "cli", arg(long, value_name = "G"))]
    pub gen: Option<u64>,
}

impl Verb for Cancel {
    const ABOUT: About = About {
        verb: "cancel",
        command: "cancel",
        about: "Cancel a node: a todo node is cancelled at once; the holder of a claimed one is asked to stop (it learns it at its next renew), with your reason.",
        read_only: false,
        destructive: true,
        idempotent: false,
        doors: &[Door::Planner, Door::Http],
        summary: "Cancel a node: a todo node now; a claimed one's holder is asked to stop",
        help: "Example:\n  claimdag cancel 092dca29 --reason \"wrong approach: the parser is being replaced\"\n  claimdag cancel 092dca29 --actor name:lead --gen 3\n\nA todo node becomes cancelled. For a claimed node, the holder is asked to stop:\nit learns it at its next renew (claimdag work stops its command and completes\nthe node cancelled). A finished node is refused (terminal). Prints\n\"<8 chars>...  cancelled\" or \"<8 chars>...  cancel requested\".",
        aliases: &[],
    };
    type Reply = CancelReply;
    fn run(&self, cx: &Ctx<'_>) -> Result<CancelReply> {
        if cx.bounds.holder_only {
            return Err(Error::invalid(
                "cancel: cancelling work is a lead's act, and this door ends only the claims \
                 its actor holds (complete with status cancelled)",
            ));
        }
        let id = cx.node(&self.node)?;
        let by = cx.opt_actor(self.actor.as_deref(), "actor")?;
        let requested = cx.store.cancel(id, by, self.reason.as_deref(), self.gen)?;
        Ok(CancelReply {
            id,
            status: if requested {
                Status::Claimed
            } else {
                Status::Cancelled
            },
            requested,
        })
    }
}

/// Finish several claims in one write: all of them, or none when one is refused (the
/// error names that one, and nothing changes).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CompleteMany {
    /// Each completion as `complete` takes it: node, status, gen, and optionally actor,
    /// note and output.
    pub completions: Vec<Complete>,
}

impl CompleteMany {
    /// A request from JSON text: `[{"node", "status", "gen", ...}, ...]` or
    /// `{"completions": [...]}`.
    pub fn from_bytes(bytes: &[u8]) -> Result<CompleteMany> {
        let v: serde_json::Value = serde_json::from_slice(bytes)
            .map_err(|e| Error::invalid(format!("complete_many: not valid JSON: {e}")))?;
        let v = match v {
            serde_json::Value::Array(_) => serde_json::json!({ "completions": v }),
            v => v,
        };
        super::parse(v)
    }
}

/// `complete-many`'s command-line form: the completions' file.
#[cfg(feature = "cli")]
#[derive(clap::Args, Debug)]
pub struct CompletionsFile {
    /// The completions file, or - for standard input
    file: String,
}

#[cfg(feature = "cli")]
impl super::Form<CompleteMany> for CompletionsFile {
    fn request(&self) -> Result<std::borrow::Cow<'_, CompleteMany>> {
        CompleteMany::from_bytes(&super::cli::read_file(&self.file)?).map(std::borrow::Cow::Owned)
    }
}

impl Verb for CompleteMany {
    const ABOUT: About = About {
        verb: "complete_many",
        command: "complete-many",
        about: "Finish several of your claimed nodes in one write: all of them, or none when one is refused.",
        read_only: false,
        destructive: true,
        idempotent: false,
        doors: &[Door::Mcp, Door::Http],
        summary: "Finish several claims in one write: all of them, or none",
        help: "Example:\n  claimdag complete-many done.json\n  echo '[{\"node\": \"092dca29\", \"status\": \"done\", \"gen\": 2},\n        {\"node\": \"71368334\", \"status\": \"failed\", \"gen\": 4, \"note\": \"timeout\"}]' |\n    claimdag complete-many -\n\nThe file is a JSON list of completions as complete takes them (node, status,\ngen, and optionally actor, note, output), or {\"completions\": [...]}. One\nrefusal (a stale generation, a node not held) refuses the whole write and\nnothing changes. Prints \"<8 chars>...  <status>\" per node, in order.",
        aliases: &[],
    };
    type Reply = CompletedMany;
    fn run(&self, cx: &Ctx<'_>) -> Result<CompletedMany> {
        let all = self
            .completions
            .iter()
            .map(|c| c.finish(cx))
            .collect::<Result<Vec<_>>>()?;
        let done = cx.store.complete_many(all)?;
        Ok(CompletedMany(
            done.into_iter()
                .map(|(id, status)| Completed { id, status })
                .collect(),
        ))
    }
}
