//! Credentials bound to an actor (`actor token`, `actor revoke`): a token acts as one actor,
//! in one workspace, within one profile of verbs, until it expires or is revoked. The store
//! keeps a token's hash only (SHA-256 of its secret); the token itself is printed once,
//! when it is made. A token reads `cdt_<id>_<secret>`: the id (16 hex) names it in `actor
//! list` and `actor revoke`, the secret is 256 random bits. The types are the model's
//! (`model::actors`); what needs a clock, a hash or randomness is here.

use super::Store;
use crate::error::{Error, Result};
pub use crate::model::actors::{ActorToken, Profile, Refused, TokenSelect, ID_HEX};
use sha2::{Digest, Sha256};

const PREFIX: &str = "cdt_";

/// The hash kept of a secret.
fn hash(secret: &str) -> String {
    Sha256::digest(secret.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The id and secret of a token's text, if it has the shape of one.
fn split(token: &str) -> Option<(&str, &str)> {
    let (id, secret) = token.strip_prefix(PREFIX)?.split_once('_')?;
    let hex = |s: &str| {
        s.bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
    };
    (id.len() == ID_HEX && hex(id) && secret.len() == 64 && hex(secret)).then_some((id, secret))
}

/// `a` is `b`, compared in time that does not depend on where they differ.
pub fn same_secret(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |d, (x, y)| d | (x ^ y)) == 0
}

/// `N` random bytes from the kernel, in lower-case hex.
pub fn random_hex<const N: usize>() -> Result<String> {
    let mut raw = [0u8; N];
    let mut filled = 0;
    while filled < N {
        // SAFETY: getrandom writes at most `N - filled` bytes from `raw[filled..]`.
        let n = unsafe { libc::getrandom(raw[filled..].as_mut_ptr().cast(), N - filled, 0) };
        if n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
            continue;
        }
        if n <= 0 {
            return Err(Error::Internal(
                "the kernel gave no random bytes for a secret".into(),
            ));
        }
        filled += n as usize;
    }
    Ok(raw.iter().map(|b| format!("{b:02x}")).collect())
}

/// What `actor token` asks for.
#[derive(Debug, Clone)]
pub struct TokenRequest<'a> {
    /// `NAME` or `name:NAME`.
    pub name: &'a str,
    pub workspace: &'a str,
    pub profile: Profile,
    /// How long it acts, from now; `None`: until revoked.
    pub expires_in_ms: Option<u64>,
}

impl Store {
    /// Makes a token for an actor (its name kept): the token as kept, and its text (shown
    /// once: the store keeps only its hash).
    pub fn make_token(&self, req: &TokenRequest<'_>) -> Result<(ActorToken, String)> {
        crate::rules::validate_workspace(req.workspace)?;
        crate::id::Actor::from_name_arg(req.name)?;
        let now = self.now()?;
        let expires_at = match req.expires_in_ms {
            Some(0) => return Err(Error::invalid("--expires: a token must act for some time")),
            Some(ms) => Some(now.checked_add(ms).ok_or_else(|| {
                Error::invalid(format!("--expires: {ms} ms from now is past the year 9999"))
            })?),
            None => None,
        };
        let (id, secret) = (random_hex::<8>()?, random_hex::<32>()?);
        // Its name is kept once nothing more can refuse it.
        let actor = self.named_actor(req.name)?;
        let token = ActorToken {
            id: id.clone(),
            actor,
            name: req.name.strip_prefix("name:").unwrap_or(req.name).into(),
            workspace: req.workspace.to_string(),
            profile: req.profile,
            created_at: now,
            expires_at,
            revoked_at: None,
            hash: hash(&secret),
        };
        self.backend.add_token(&token)?;
        Ok((token, format!("{PREFIX}{id}_{secret}")))
    }

    /// Ends the live tokens `which` selects at once; answers them. None live: `not_found`.
    pub fn revoke_tokens(&self, which: &TokenSelect) -> Result<Vec<ActorToken>> {
        let ended = self.backend.revoke_tokens(which, self.now()?)?;
        if ended.is_empty() {
            return Err(Error::NotFound {
                what: match which {
                    TokenSelect::Id(id) => format!("live token {id}"),
                    TokenSelect::Actor(a) => format!("live token of actor {}", a.hex()),
                },
                node: None,
            });
        }
        Ok(ended)
    }

    /// Every token the store keeps, revoked and expired ones too, in the order made.
    pub fn tokens(&self) -> Result<Vec<ActorToken>> {
        self.backend.tokens()
    }

    /// The live token `given` is, or why it is not one. Its secret is compared by hash, in
    /// constant time; a token is looked up by its id, so a revoke acts on the next request.
    pub fn authenticate(&self, given: &str) -> Result<std::result::Result<ActorToken, Refused>> {
        let Some((id, secret)) = split(given) else {
            return Ok(Err(Refused::Unknown));
        };
        let Some(t) = self.backend.tokens()?.into_iter().find(|t| t.id == id) else {
            return Ok(Err(Refused::Unknown));
        };
        if !same_secret(&hash(secret), &t.hash) {
            return Ok(Err(Refused::Unknown));
        }
        Ok(match t.refused(self.now()?) {
            Some(why) => Err(why),
            None => Ok(t),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_has_one_shape() {
        let id = "0123456789abcdef";
        let secret = "a".repeat(64);
        assert_eq!(split(&format!("cdt_{id}_{secret}")), Some((id, &*secret)));
        assert_eq!(split(&format!("cdt_{id}_{}", &secret[1..])), None);
        assert_eq!(split(&format!("cdt_{}_{secret}", id.to_uppercase())), None);
        assert_eq!(split(&format!("cdx_{id}_{secret}")), None);
        assert_eq!(split(""), None);
    }
}
