//! The actors' names the store keeps and their tokens: `actor add`, `actor list`, `actor
//! token`, `actor revoke`.

use super::{About, Ctx, Door, Dur, Reply, Verb};
use crate::error::Result;
use crate::id::Actor;
use crate::model::{ActorName, Millis};
use crate::store::tokens::{ActorToken as KeptToken, Profile, TokenRequest, TokenSelect};
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
        let kept = cx.store.add_actor(&self.name, self.note.as_deref())?;
        Ok(Actors(vec![ActorEntry {
            actor: kept,
            tokens: Vec::new(),
        }]))
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
        about: "List the actors the store keeps names for (id, name, note) and their tokens (never a secret).",
        read_only: true,
        destructive: false,
        idempotent: true,
        doors: &[Door::Mcp, Door::Http],
        summary: "List the actors the store keeps names for",
        help: "Example:\n  claimdag actor list\n  claimdag actor list --json\n\nOne line an actor, in the order their names were first kept:\n\"<32 hex>  name:<NAME>  <note>\"; under it one a token of the actor, in the order\nmade: \"  token <id>  workspace=\\\"<W>\\\"  profile=<P>  live|revoked|expired[  expires=<time>]\"\n(never the token itself).",
        aliases: &[],
    };
    type Reply = Actors;
    fn run(&self, cx: &Ctx<'_>) -> Result<Actors> {
        let now = cx.store.now()?;
        let mut all: Vec<ActorEntry> = (cx.store.actor_names()?.into_iter())
            .map(|actor| ActorEntry {
                actor,
                tokens: Vec::new(),
            })
            .collect();
        // A token's actor has its name kept (the token kept it); one of a store copied
        // without names still shows, under the name the token keeps.
        for t in cx.store.tokens()? {
            let at = match all.iter().position(|e| e.actor.id == t.actor) {
                Some(i) => i,
                None => {
                    all.push(ActorEntry {
                        actor: ActorName {
                            id: t.actor,
                            name: t.name.clone(),
                            note: None,
                            added_at: t.created_at,
                        },
                        tokens: Vec::new(),
                    });
                    all.len() - 1
                }
            };
            all[at].tokens.push(TokenInfo::of(&t, now));
        }
        Ok(Actors(all))
    }
}

/// Actors, the names kept for them and their tokens (`actor add`, `actor list`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(transparent)]
pub struct Actors(pub Vec<ActorEntry>);

/// An actor with its name, and the tokens made for it (never their secrets).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ActorEntry {
    #[serde(flatten)]
    pub actor: ActorName,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tokens: Vec<TokenInfo>,
}

impl Reply for Actors {
    fn text(&self) -> String {
        let mut out = String::new();
        for e in &self.0 {
            let a = &e.actor;
            let _ = write!(out, "{}  name:{}", a.id.hex(), a.name);
            if let Some(n) = &a.note {
                let _ = write!(out, "  {}", super::text::one_line(n));
            }
            out.push('\n');
            for t in &e.tokens {
                out.push_str("  ");
                out.push_str(&t.line());
            }
        }
        out
    }
    fn object_key() -> Option<&'static str> {
        Some("actors")
    }
}

/// Make a token that acts as one actor, in one workspace, within one profile.
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ActorToken {
    /// The actor: 1-64 characters of `[A-Za-z0-9._@-]` (or `name:NAME`).
    pub name: String,
    /// The verbs it may call: those of this MCP profile.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long, value_enum, default_value_t))]
    pub profile: Profile,
    /// How long it acts (`30d`, `12h`); unset: until revoked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "cli", arg(long, value_name = "DUR"))]
    pub expires: Option<Dur>,
    /// The workspace it acts in [default: the request's].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "cli", arg(skip))]
    pub workspace: Option<String>,
}

impl Verb for ActorToken {
    const ABOUT: About = About {
        verb: "actor_token",
        command: "actor token",
        about: "Make a token that acts as one actor, in one workspace, within one profile.",
        read_only: false,
        destructive: false,
        idempotent: false,
        doors: &[],
        summary: "Make a token for NAME (printed once: the store keeps its hash only)",
        help: "Example:\n  tok=$(claimdag actor token codex-1 --workspace app --profile worker --expires 30d)\n  curl -s -X POST localhost:7878/v1/claim_next -H \"Authorization: Bearer $tok\" -d '{}'\n  claimdag actor list               # its id, never the token\n  claimdag actor revoke codex-1     # every token of codex-1, at once\n\n`claimdag serve` (its JSON API and MCP at /mcp) takes the token as\nAuthorization: Bearer TOKEN: the request acts as NAME only, in the workspace\nonly (the command's --workspace), with the verbs of the profile only (worker:\nfind, hold and finish work; planner: shape the DAG; all). The token is printed\nonce, on stdout; lose it and make another.",
        aliases: &[],
    };
    type Reply = TokenMade;
    fn run(&self, cx: &Ctx<'_>) -> Result<TokenMade> {
        let ws = cx.workspace(self.workspace.as_deref())?;
        let expires_in_ms = self.expires.as_ref().map(Dur::ms).transpose()?;
        let (kept, token) = cx.store.make_token(&TokenRequest {
            name: &self.name,
            workspace: &ws,
            profile: self.profile,
            expires_in_ms,
        })?;
        Ok(TokenMade {
            token,
            info: TokenInfo::of(&kept, kept.created_at),
        })
    }
}

/// End tokens at once: every live one of an actor, or one by its id.
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ActorRevoke {
    /// `NAME` (or `name:NAME`, or the 32-hex actor): all its live tokens; or a token's
    /// 16-hex id (`actor list`).
    pub which: String,
}

impl Verb for ActorRevoke {
    const ABOUT: About = About {
        verb: "actor_revoke",
        command: "actor revoke",
        about: "End an actor's tokens, or one token by its id, at once.",
        read_only: false,
        destructive: true,
        idempotent: false,
        doors: &[],
        summary: "End every live token of NAME, or the token of ID, at once",
        help: "Example:\n  claimdag actor revoke codex-1\n  claimdag actor revoke 3f2a9c0d41b7e655\n\nThe next request with a revoked token is refused (401). Prints the tokens ended;\nnone live: not_found (exit 3).",
        aliases: &[],
    };
    type Reply = Tokens;
    fn run(&self, cx: &Ctx<'_>) -> Result<Tokens> {
        let ended = cx.store.revoke_tokens(&TokenSelect::parse(&self.which)?)?;
        let now = cx.store.now()?;
        Ok(Tokens(
            ended.iter().map(|t| TokenInfo::of(t, now)).collect(),
        ))
    }
}

/// A token as the doors show it: never its secret nor its hash.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TokenInfo {
    /// 16 hex: names the token in `actor revoke`.
    pub id: String,
    pub actor: Actor,
    pub name: String,
    pub workspace: String,
    pub profile: Profile,
    /// `live`, `revoked` or `expired`.
    pub state: String,
    pub created_at: Millis,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<Millis>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revoked_at: Option<Millis>,
}

impl TokenInfo {
    fn of(t: &KeptToken, now: Millis) -> TokenInfo {
        let state = t.refused(now).map_or("live", |why| why.as_str());
        TokenInfo {
            id: t.id.clone(),
            actor: t.actor,
            name: t.name.clone(),
            workspace: t.workspace.clone(),
            profile: t.profile,
            state: state.into(),
            created_at: t.created_at,
            expires_at: t.expires_at,
            revoked_at: t.revoked_at,
        }
    }

    /// `token <id>  workspace="<W>"  profile=<P>  <state>[  expires=<time>]`.
    fn line(&self) -> String {
        let mut s = format!(
            "token {}  workspace={:?}  profile={}  {}",
            self.id,
            self.workspace,
            self.profile.as_str(),
            self.state
        );
        if let Some(e) = self.expires_at {
            let _ = write!(s, "  expires={}", super::text::iso_time(e));
        }
        s.push('\n');
        s
    }
}

/// A token just made: its text (shown this once) and what it acts as.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TokenMade {
    /// The bearer token. The store keeps only its hash: it is not shown again.
    pub token: String,
    #[serde(flatten)]
    pub info: TokenInfo,
}

impl Reply for TokenMade {
    fn text(&self) -> String {
        format!("{}\n", self.token)
    }
}

/// Tokens (`actor revoke`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(transparent)]
pub struct Tokens(pub Vec<TokenInfo>);

impl Reply for Tokens {
    fn text(&self) -> String {
        self.0.iter().map(TokenInfo::line).collect()
    }
    fn object_key() -> Option<&'static str> {
        Some("tokens")
    }
}
