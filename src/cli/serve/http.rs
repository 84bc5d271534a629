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
    pub metrics: super::metrics::Metrics,
}

/// Verbs that need a store path or a work tree of the server's machine: not served.
pub const NOT_SERVED: &[&str] = &["copy", "diff_check"];

/// 401, naming what the request lacks.
pub fn unauthorized(verb: &str, writes: bool) -> Response<Body> {
    let mut r = refusal(
        StatusCode::UNAUTHORIZED,
        Code::InvalidInput,
        &format!(
            "{verb}: {} needs Authorization: Bearer TOKEN (the token is in the file \
             `claimdag serve` printed when it started)",
            if writes {
                "a request that writes"
            } else {
                "a request here"
            }
        ),
    );
    r.headers_mut()
        .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    r
}

/// The request's bearer token is the server's.
pub fn authorized(shared: &Shared, req: &Request<Incoming>) -> bool {
    req.headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .is_some_and(|t| shared.is_token(t.trim()))
}

impl Shared {
    /// `given` is the token (compared in constant time).
    pub fn is_token(&self, given: &str) -> bool {
        let (a, b) = (given.as_bytes(), self.token.as_bytes());
        a.len() == b.len() && a.iter().zip(b).fold(0u8, |d, (x, y)| d | (x ^ y)) == 0
    }

    /// A read is allowed: on loopback always; beyond it with the bearer token, or the
    /// dashboard's cookie (which a browser sends only from this server's own pages).
    pub fn may_read(&self, req: &Request<Incoming>) -> bool {
        self.open_reads
            || authorized(self, req)
            || req
                .headers()
                .get_all(header::COOKIE)
                .iter()
                .filter_map(|v| v.to_str().ok())
                .flat_map(|v| v.split(';'))
                .filter_map(|kv| kv.trim().strip_prefix("claimdag_token="))
                .any(|t| self.is_token(t))
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

pub fn error(e: &Error) -> Response<Body> {
    json(status_of(e.code()), &verbs::error_body(e))
}

/// An error body made here (routing, authorization, the body), not by a verb.
pub fn refusal(status: StatusCode, code: Code, message: &str) -> Response<Body> {
    json(
        status,
        &serde_json::json!({"code": code.as_str(), "message": message}),
    )
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
