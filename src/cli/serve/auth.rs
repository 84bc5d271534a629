//! Who a request of `claimdag serve` acts as. The store-wide token (or the dashboard's
//! session, or a read on a loopback server) is the lead's: any actor, the server's
//! workspace, every verb served. An actor's token (`actor token`) acts as that actor only,
//! in its workspace only, with the verbs of its profile only: the request runs bound as a
//! bound MCP server's calls do (`verbs::Bounds`), so naming another actor or workspace is
//! refused and a node of another workspace answers `not_found`. A token is looked up on
//! every request, so a revoke acts on the next one.

use super::http::{refusal, Body, Shared};
use crate::cli::mcp::Binding;
use crate::error::{Code, Result};
use crate::store::tokens::{ActorToken, Profile, Refused};
use crate::store::Store;
use crate::verbs::{About, Bounds, Ctx};
use hyper::body::Incoming;
use hyper::header::{self, HeaderValue};
use hyper::{Request, Response, StatusCode};
use std::sync::Arc;

/// Who a request acts as.
#[derive(Debug, Clone)]
pub enum Caller {
    Lead,
    /// The lead, from the dashboard (its session): its writes record the `dashboard` door.
    Dashboard,
    Agent(Arc<ActorToken>),
}

/// What a request's `Authorization` says.
pub enum Access {
    Caller(Caller),
    /// No bearer token.
    Anonymous,
    /// A bearer token that is not one (or no longer one).
    Refused(Refused),
}

/// The bearer token of `req`, if it has one (the scheme's name in any case, RFC 9110 section
/// 11.1).
fn bearer(req: &Request<Incoming>) -> Option<&str> {
    req.headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim_start().split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, t)| t.trim())
}

/// Who `req`'s bearer token acts as. An actor's token is read from the store (off the
/// executor); a failure to read it refuses the request as an unknown token would.
pub async fn access(shared: &Arc<Shared>, req: &Request<Incoming>) -> Access {
    let Some(given) = bearer(req) else {
        return Access::Anonymous;
    };
    if shared.is_token(given) {
        return Access::Caller(Caller::Lead);
    }
    let (store, given) = (shared.store.clone(), given.to_string());
    let found = tokio::task::spawn_blocking(move || store.authenticate(&given)).await;
    let access = match found {
        Ok(Ok(Ok(t))) => Access::Caller(Caller::Agent(Arc::new(t))),
        Ok(Ok(Err(why))) => Access::Refused(why),
        _ => Access::Refused(Refused::Unknown),
    };
    if let Access::Refused(why) = &access {
        shared.metrics.auth_failed(why.as_str());
    }
    access
}

/// The caller of a request for `what` that only the lead may make, or the refusal.
pub async fn lead(
    shared: &Arc<Shared>,
    req: &Request<Incoming>,
    what: &str,
) -> std::result::Result<Caller, Response<Body>> {
    let c = caller(shared, req, what, false).await?;
    match c.not_lead(what) {
        Some(refused) => Err(refused),
        None => Ok(c),
    }
}

/// The caller of a request for `what` that reads (`writes` false) or writes, or the refusal
/// to answer: a bad token is 401; no token is the lead's on a loopback read or from the
/// dashboard, else 401.
pub async fn caller(
    shared: &Arc<Shared>,
    req: &Request<Incoming>,
    what: &str,
    writes: bool,
) -> std::result::Result<Caller, Response<Body>> {
    match access(shared, req).await {
        Access::Caller(c) => Ok(c),
        Access::Refused(why) => Err(bad_token(what, why)),
        Access::Anonymous => {
            if writes && shared.sessions.writes(req) || !writes && shared.sessions.reads(req) {
                return Ok(Caller::Dashboard);
            }
            (!writes && shared.open_reads)
                .then_some(Caller::Lead)
                .ok_or_else(|| unauthorized(what, writes))
        }
    }
}

impl Caller {
    /// The refusal (403) of a verb outside an agent's profile, if it is.
    pub fn refuses(&self, about: &About) -> Option<Response<Body>> {
        match self {
            Caller::Agent(t) if !about.in_profile(t.profile) => Some(forbidden(&format!(
                "{}: the token of {} has the {} profile, which does not offer it",
                about.verb,
                t.name,
                t.profile.as_str()
            ))),
            _ => None,
        }
    }

    /// The refusal (403) of what only the lead may do (`/v1/watch` and `/metrics` read
    /// every workspace), for an agent.
    pub fn not_lead(&self, what: &str) -> Option<Response<Body>> {
        match self {
            Caller::Agent(t) => Some(forbidden(&format!(
                "{what}: reads every workspace, so it needs the store's token; the token of \
                 {} reads its workspace through the verbs",
                t.name
            ))),
            Caller::Lead | Caller::Dashboard => None,
        }
    }

    /// What a request of this caller acts as: the lead any actor, in the server's
    /// workspace, with every verb; an agent its actor, in its workspace, with its profile,
    /// bound (a worker to the claims it holds).
    pub fn binding(&self, shared: &Shared, max_wait_ms: u64) -> Binding {
        let bounds = Bounds {
            max_wait_ms: Some(max_wait_ms),
            ..Bounds::default()
        };
        match self {
            Caller::Lead | Caller::Dashboard => Binding {
                workspace: shared.workspace.clone(),
                actor: None,
                profile: Profile::All,
                bounds,
                http: true,
            },
            Caller::Agent(t) => Binding {
                workspace: t.workspace.clone(),
                actor: Some(t.actor),
                profile: t.profile,
                bounds: Bounds {
                    bound: true,
                    holder_only: t.profile == Profile::Worker,
                    ..bounds
                },
                http: true,
            },
        }
    }

    /// The context a request of this caller runs in ([`Caller::binding`]).
    pub fn context<'a>(
        &self,
        store: &'a Store,
        shared: &Shared,
        max_wait_ms: u64,
    ) -> Result<Ctx<'a>> {
        self.binding(shared, max_wait_ms).context(store)
    }

    /// The actor an agent's token binds (the lead acts as any).
    pub fn actor(&self) -> Option<crate::id::Actor> {
        match self {
            Caller::Agent(t) => Some(t.actor),
            Caller::Lead | Caller::Dashboard => None,
        }
    }
}

/// 401, naming what the request lacks.
pub fn unauthorized(what: &str, writes: bool) -> Response<Body> {
    challenge(refusal(
        StatusCode::UNAUTHORIZED,
        Code::InvalidInput,
        &format!(
            "{what}: {} needs Authorization: Bearer TOKEN (the store's token, in the file \
             `claimdag serve` printed when it started, or an actor's from `claimdag actor \
             token`)",
            if writes {
                "a request that writes"
            } else {
                "a request here"
            }
        ),
    ))
}

/// 401 for a bearer token that is not one: never the token itself in the reply.
pub fn bad_token(what: &str, why: Refused) -> Response<Body> {
    let message = match why {
        Refused::Unknown => "the bearer token is not one of this store's",
        Refused::Revoked => "the bearer token was revoked (claimdag actor revoke)",
        Refused::Expired => "the bearer token has expired",
    };
    challenge(refusal(
        StatusCode::UNAUTHORIZED,
        Code::InvalidInput,
        &format!(
            "{what}: {message}; nothing was done (Authorization: Bearer TOKEN takes the \
             store's token or an actor's from `claimdag actor token`)"
        ),
    ))
}

/// 403: the token is good, the request is beyond what it may do.
pub fn forbidden(message: &str) -> Response<Body> {
    refusal(
        StatusCode::FORBIDDEN,
        Code::InvalidInput,
        &format!("{message}; nothing was done"),
    )
}

fn challenge(mut r: Response<Body>) -> Response<Body> {
    r.headers_mut()
        .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    r
}
