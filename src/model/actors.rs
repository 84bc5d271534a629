//! The actors as the store keeps them: their names, and their tokens (the hash of each
//! secret, never the secret) with which tokens a revoke selects. Tokens are made, revoked
//! and checked by `store::tokens`.

use crate::error::Result;
use crate::id::Actor;
use crate::model::Millis;
use serde::{Deserialize, Serialize};

/// A name the store keeps for an actor (whose id is the name's, `Actor::from_name`): kept
/// when the actor is first used as `name:NAME`, or added with `actor add`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ActorName {
    pub id: Actor,
    pub name: String,
    /// What the lead wrote about it (`actor add --note`).
    #[serde(default)]
    pub note: Option<String>,
    /// When the name was first kept (ms since the epoch).
    pub added_at: Millis,
}

/// The hex digits of a token's id.
pub const ID_HEX: usize = 16;

/// Which verbs a token (or an MCP server) offers: the MCP profiles.
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Profile {
    /// What a worker agent needs: find work, hold it, finish it.
    #[default]
    Worker,
    /// What a planning agent needs: shape the DAG and look at it.
    Planner,
    /// Every verb.
    All,
}

impl Profile {
    pub fn as_str(self) -> &'static str {
        match self {
            Profile::Worker => "worker",
            Profile::Planner => "planner",
            Profile::All => "all",
        }
    }
}

/// A token as the store keeps it: who it acts as, where, within what, until when; and the
/// hash of its secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActorToken {
    /// 16 hex: names the token (it is not secret).
    pub id: String,
    pub actor: Actor,
    /// The actor's name.
    pub name: String,
    pub workspace: String,
    pub profile: Profile,
    pub created_at: Millis,
    #[serde(default)]
    pub expires_at: Option<Millis>,
    #[serde(default)]
    pub revoked_at: Option<Millis>,
    /// SHA-256 of the secret, in hex.
    pub hash: String,
}

impl ActorToken {
    /// The token acts at `now`: not revoked, not expired.
    pub fn live(&self, now: Millis) -> bool {
        self.refused(now).is_none()
    }

    /// Why the token does not act at `now` (revoked, or expired), if it does not.
    pub fn refused(&self, now: Millis) -> Option<Refused> {
        match (self.revoked_at, self.expires_at) {
            (Some(_), _) => Some(Refused::Revoked),
            (None, Some(e)) if now >= e => Some(Refused::Expired),
            _ => None,
        }
    }
}

/// Why a bearer token was not taken (`/metrics` counts each).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// Not a token of this store (or not a token at all).
    Unknown,
    Revoked,
    Expired,
}

impl Refused {
    pub fn as_str(self) -> &'static str {
        match self {
            Refused::Unknown => "unknown",
            Refused::Revoked => "revoked",
            Refused::Expired => "expired",
        }
    }
}

/// Which tokens `actor revoke` ends: one by its id, or every one of an actor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenSelect {
    Id(String),
    Actor(Actor),
}

impl TokenSelect {
    pub fn matches(&self, t: &ActorToken) -> bool {
        match self {
            TokenSelect::Id(id) => t.id == *id,
            TokenSelect::Actor(a) => t.actor == *a,
        }
    }

    /// `NAME`, `name:NAME`, a 32-hex actor, or a token's 16-hex id.
    pub fn parse(text: &str) -> Result<TokenSelect> {
        let t = text.trim();
        if t.len() == ID_HEX && t.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Ok(TokenSelect::Id(t.to_ascii_lowercase()));
        }
        if t.len() == 32 && t.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Ok(TokenSelect::Actor(Actor::parse_actor(t, "actor")?));
        }
        Ok(TokenSelect::Actor(Actor::from_name_arg(t)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_selection_is_a_token_id_or_an_actor() {
        assert_eq!(
            TokenSelect::parse("0123456789ABCDEF").unwrap(),
            TokenSelect::Id("0123456789abcdef".into())
        );
        let a = Actor::from_name_arg("codex-1").unwrap();
        assert_eq!(
            TokenSelect::parse("name:codex-1").unwrap(),
            TokenSelect::Actor(a)
        );
        assert_eq!(TokenSelect::parse(&a.hex()).unwrap(), TokenSelect::Actor(a));
        assert!(TokenSelect::parse("no spaces here").is_err());
    }
}
