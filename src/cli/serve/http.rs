//! What the routes of `claimdag serve` share: the server's state, who may read and write,
//! and the JSON replies and refusals (the error body of docs/reference.md with the status of
//! its code: 404 not_found; 409 the refusals of exit 4 and 5; 400 invalid_input and cycle;
//! 500 internal; 503 io and corrupt).

use crate::error::{Code, Error};
use crate::store::Store;
use crate::verbs;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::header::{self, HeaderValue};
use hyper::{Request, Response, StatusCode};
use serde_json::Value;
use std::convert::Infallible;
use std::sync::Arc;

pub type Body = BoxBody<Bytes, Infallible>;

/// What every request of one server shares.
pub struct Shared {
    pub store: Store,
    pub token: String,
    /// Reads need no token (the server listens on loopback only).
    pub open_reads: bool,
    pub workspace: String,
    pub max_wait_ms: u64,
    pub max_body: usize,
    /// `GET /v1/openapi.json`, made once.
    pub openapi: Value,
    pub metrics: Arc<super::metrics::Metrics>,
    /// The dashboard's sessions.
    pub sessions: super::session::Sessions,
    /// The thread the dashboard's pages are read and rendered on.
    pub pages: super::pages::Pages,
    /// The history follower every stream and wait takes its writes from.
    pub hub: Arc<super::hub::Hub>,
    /// The streams and waits held open.
    pub streams: Arc<super::limits::Streams>,
    /// Turns at reading the history's past from the store (a few at once, whatever the
    /// number of streams catching up).
    pub readers: tokio::sync::Semaphore,
    /// True once the server is stopping: streams end, waits answer at once, nothing more is
    /// granted.
    pub stop: tokio::sync::watch::Sender<bool>,
    /// `/mcp`: the MCP tools over Streamable HTTP, each call bound to its request's caller.
    pub mcp: super::mcp::Service,
}

/// The declarations of the verbs served (`Door::Http`): not those that need a store path
/// or a work tree of the server's machine (`copy`, `diff_check`).
pub fn served() -> impl Iterator<Item = &'static verbs::About> {
    verbs::CATALOG
        .iter()
        .filter(|a| a.offered_by(verbs::Door::Http))
}

/// The request's bearer token is the store's (the lead's) (the scheme's name in any case, RFC 9110
/// section 11.1).
pub fn authorized(shared: &Shared, req: &Request<Incoming>) -> bool {
    req.headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim_start().split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .is_some_and(|(_, t)| shared.is_token(t.trim()))
}

impl Shared {
    /// `given` is the token (compared in constant time).
    pub fn is_token(&self, given: &str) -> bool {
        crate::store::tokens::same_secret(given, &self.token)
    }

    /// A read of the dashboard is allowed: on loopback always; beyond it with the store's
    /// token, or the dashboard's session cookie (which a browser sends only from this
    /// server's own pages). The verbs' reads take actors' tokens too (`auth.rs`).
    pub fn may_read(&self, req: &Request<Incoming>) -> bool {
        self.open_reads || authorized(self, req) || self.sessions.reads(req)
    }

    /// The server is stopping.
    pub fn stopping(&self) -> bool {
        *self.stop.borrow()
    }

    /// Ends once the server is stopping.
    pub async fn stopped(&self) {
        let mut stop = self.stop.subscribe();
        loop {
            if *stop.borrow_and_update() {
                return;
            }
            if stop.changed().await.is_err() {
                return std::future::pending().await;
            }
        }
    }
}

/// The HTTP status of an error code.
pub fn status_of(code: Code) -> StatusCode {
    match code {
        Code::NotFound => StatusCode::NOT_FOUND,
        Code::InvalidInput | Code::Cycle => StatusCode::BAD_REQUEST,
        Code::Corrupt | Code::Io => StatusCode::SERVICE_UNAVAILABLE,
        Code::Internal => StatusCode::INTERNAL_SERVER_ERROR,
        // The refusals of exit 4 (the node's state) and 5 (stale generation, not the holder).
        _ => StatusCode::CONFLICT,
    }
}

/// A verb's refusal: the one error body of every door, `{"error": {"code", "message",
/// ...}}`.
pub fn error(e: &Error) -> Response<Body> {
    json(status_of(e.code()), &verbs::error_json(e))
}

/// An error body made here (routing, authorization, the body), not by a verb: the same
/// shape.
pub fn refusal(status: StatusCode, code: Code, message: &str) -> Response<Body> {
    json(
        status,
        &serde_json::json!({"error": {"code": code.as_str(), "message": message}}),
    )
}

/// 503 for a stream or wait past the server's bounds, or one the stopping server will not
/// start: try again later.
pub fn busy(message: &str) -> Response<Body> {
    let mut r = refusal(StatusCode::SERVICE_UNAVAILABLE, Code::Io, message);
    r.headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    r
}

pub fn not_allowed(allow: &'static str) -> Response<Body> {
    let mut r = refusal(
        StatusCode::METHOD_NOT_ALLOWED,
        Code::InvalidInput,
        &format!("use {allow} here"),
    );
    r.headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static(allow));
    r
}

/// A reply of `kind` (its content type), never cached and never sniffed as another type.
pub fn reply(body: Body, kind: &'static str) -> Response<Body> {
    let mut r = Response::new(body);
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(kind));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    r
}

/// A JSON reply.
pub fn json(status: StatusCode, value: &Value) -> Response<Body> {
    let mut body = serde_json::to_vec(value).unwrap_or_else(|_| b"null".to_vec());
    body.push(b'\n');
    let mut r = reply(Full::new(Bytes::from(body)).boxed(), "application/json");
    *r.status_mut() = status;
    r
}
