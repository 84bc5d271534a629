//! The verbs of a holder and the rest talking: `cancel`, and `complete_many` (several
//! completions in one write). A checkpoint rides on `renew`, an output on `complete`.

use super::replies::{CancelReply, Completed, CompletedMany};
use super::{Complete, Ctx, Verb};
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
    const NAME: &'static str = "cancel";
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

impl Verb for CompleteMany {
    const NAME: &'static str = "complete_many";
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
