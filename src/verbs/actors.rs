//! The actors' names the store keeps: `actor add` and `actor list`.

use super::{About, Ctx, Door, Reply, Verb};
use crate::error::Result;
use crate::model::ActorName;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::fmt::Write;

/// Keep a name for its actor, with a note: every door then shows the name where it shows
/// the actor. (A `name:NAME` actor keeps its name at its first use anyway.)
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ActorAdd {
    /// 1-64 characters of `[A-Za-z0-9._@-]` (or `name:NAME`).
    pub name: String,
    /// What the actor is (replaces the note kept, if any).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "cli", arg(long, value_name = "TEXT"))]
    pub note: Option<String>,
}

impl Verb for ActorAdd {
    const ABOUT: About = About {
        verb: "actor_add",
        command: "actor add",
        about: "Keep a name (and a note) for its actor, so that every door shows it.",
        read_only: false,
        destructive: false,
        idempotent: true,
        doors: &[Door::Mcp, Door::Http],
        summary: "Keep NAME for its actor, with a note; prints the actor and its name",
        help: "Example:\n  claimdag actor add codex-1 --note \"the parser agent, pane 3\"\n  claimdag actor list\n\nThe actor is the one name:NAME stands for; its id does not change. A name is\nkept anyway the first time name:NAME is used; add gives it a note too.",
        aliases: &[],
    };
    type Reply = Actors;
    fn run(&self, cx: &Ctx<'_>) -> Result<Actors> {
        Ok(Actors(vec![cx
            .store
            .add_actor(&self.name, self.note.as_deref())?]))
    }
}

/// Every name the store keeps, with its actor and note.
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ActorList {}

impl Verb for ActorList {
    const ABOUT: About = About {
        verb: "actor_list",
        command: "actor list",
        about: "List the actors the store keeps names for: id, name, note.",
        read_only: true,
        destructive: false,
        idempotent: true,
        doors: &[Door::Mcp, Door::Http],
        summary: "List the actors the store keeps names for",
        help: "Example:\n  claimdag actor list\n  claimdag actor list --json\n\nOne line an actor, in the order their names were first kept:\n\"<32 hex>  name:<NAME>  <note>\".",
        aliases: &[],
    };
    type Reply = Actors;
    fn run(&self, cx: &Ctx<'_>) -> Result<Actors> {
        Ok(Actors(cx.store.actor_names()?))
    }
}

/// Actors and the names kept for them (`actor add`, `actor list`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(transparent)]
pub struct Actors(pub Vec<ActorName>);

impl Reply for Actors {
    fn text(&self) -> String {
        let mut out = String::new();
        for a in &self.0 {
            let _ = write!(out, "{}  name:{}", a.id.hex(), a.name);
            if let Some(n) = &a.note {
                let _ = write!(out, "  {}", super::text::one_line(n));
            }
            out.push('\n');
        }
        out
    }
    fn object_key() -> Option<&'static str> {
        Some("actors")
    }
}
