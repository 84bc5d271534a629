//! The routes of `claimdag serve` and the verb layer over HTTP: `POST /v1/VERB` runs
//! `verbs::call` with the body's JSON; a refusal is the error body with the status of its
//! code (404 not_found; 409 the refusals of exit 4 and 5; 400 invalid_input and cycle; 500
//! internal; 503 io and corrupt).

use crate::error::{Code, Error};
use crate::store::Store;
use crate::verbs::{self, Bounds, Ctx};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::header::{self, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
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
    pub metrics: super::metrics::Metrics,
}

/// Verbs that need a store path or a work tree of the server's machine: not served.
pub const NOT_SERVED: &[&str] = &["copy", "diff_check"];

/// Answers one request.
pub async fn handle(
    shared: Arc<Shared>,
    req: Request<Incoming>,
) -> std::result::Result<Response<Body>, Infallible> {
    let path = req.uri().path().to_string();
    let reply = match (req.method(), path.as_str()) {
        (&Method::GET, "/v1/openapi.json") => json(StatusCode::OK, &shared.openapi),
        (&Method::GET, "/v1/watch") => watch(&shared, &req),
        (&Method::GET, "/metrics") if !shared.open_reads && !authorized(&shared, &req) => {
            unauthorized("metrics", false)
        }
        (&Method::GET, "/metrics") => metrics(shared.clone()).await,
        (_, "/v1/watch") | (_, "/metrics") => not_allowed("GET"),
        (&Method::POST, p) if p.starts_with("/v1/") => {
            let verb = p["/v1/".len()..].replace('-', "_");
            call(&shared, verb, req).await
        }
        (_, "/v1/openapi.json") => not_allowed("GET"),
        (_, p) if p.starts_with("/v1/") => not_allowed("POST"),
        (m, p) => refusal(
            StatusCode::NOT_FOUND,
            Code::NotFound,
            &format!("no such route: {m} {p} (the API is POST /v1/VERB; GET /v1/openapi.json describes it)"),
        ),
    };
    Ok(reply)
}

/// `POST /v1/VERB`.
async fn call(shared: &Shared, verb: String, req: Request<Incoming>) -> Response<Body> {
    let Some(about) = verbs::CATALOG
        .iter()
        .find(|a| a.verb == verb && !NOT_SERVED.contains(&a.verb))
    else {
        let served: Vec<&str> = verbs::CATALOG
            .iter()
            .map(|a| a.verb)
            .filter(|v| !NOT_SERVED.contains(v))
            .collect();
        return refusal(
            StatusCode::NOT_FOUND,
            Code::NotFound,
            &format!(
                "no verb {verb:?} here: the verbs served are {}",
                served.join(", ")
            ),
        );
    };
    let writes = !about.read_only;
    if (writes || !shared.open_reads) && !authorized(shared, &req) {
        return unauthorized(&verb, writes);
    }
    let args = match body_json(shared.max_body, req).await {
        Ok(v) => v,
        Err(r) => return r,
    };
    let store = shared.store.clone();
    let workspace = shared.workspace.clone();
    let max_wait_ms = shared.max_wait_ms;
    let started = std::time::Instant::now();
    let name = verb.clone();
    let ran = tokio::task::spawn_blocking(move || {
        let mut cx = Ctx::new(&store, &workspace)?;
        cx.bounds = Bounds {
            max_wait_ms: Some(max_wait_ms),
            ..Bounds::default()
        };
        verbs::call(&cx, &name, args)
    })
    .await
    .unwrap_or_else(|_| {
        Err(Error::Internal(
            "the call panicked; the store is unchanged".into(),
        ))
    });
    let outcome = ran.as_ref().map(|_| ()).map_err(Error::code);
    shared.metrics.request(&verb, outcome, started.elapsed());
    match ran {
        Ok(answer) => json(StatusCode::OK, &answer.json),
        Err(e) => error(&e),
    }
}

/// `GET /v1/watch`: a read (the token only beyond loopback).
fn watch(shared: &Shared, req: &Request<Incoming>) -> Response<Body> {
    if !shared.open_reads && !authorized(shared, req) {
        return unauthorized("watch", false);
    }
    let last = req.headers().get("last-event-id");
    match super::events::since(req.uri().query(), last) {
        Ok(since) => super::events::stream(shared.store.clone(), since),
        Err(why) => refusal(
            StatusCode::BAD_REQUEST,
            Code::InvalidInput,
            &format!("watch: {why}"),
        ),
    }
}

/// `GET /metrics`, in Prometheus's text format (a read: the token only beyond loopback).
async fn metrics(shared: Arc<Shared>) -> Response<Body> {
    let text = tokio::task::spawn_blocking(move || shared.metrics.render(&shared.store))
        .await
        .unwrap_or_default();
    let mut r = Response::new(Full::new(Bytes::from(text)).boxed());
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
    );
    r
}

/// 401, naming what the request lacks.
fn unauthorized(verb: &str, writes: bool) -> Response<Body> {
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

/// The request's bearer token is the server's (compared in constant time).
fn authorized(shared: &Shared, req: &Request<Incoming>) -> bool {
    let Some(given) = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
    else {
        return false;
    };
    let (a, b) = (given.trim().as_bytes(), shared.token.as_bytes());
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |d, (x, y)| d | (x ^ y)) == 0
}

/// The request body as JSON (an empty body is `{}`), at most `max` bytes.
async fn body_json(
    max: usize,
    req: Request<Incoming>,
) -> std::result::Result<Value, Response<Body>> {
    let too_large = || {
        refusal(
            StatusCode::PAYLOAD_TOO_LARGE,
            Code::InvalidInput,
            &format!("the request body is over {max} bytes (claimdag serve --max-body)"),
        )
    };
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > max as u64) {
        return Err(too_large());
    }
    let bytes = match Limited::new(req.into_body(), max).collect().await {
        Ok(b) => b.to_bytes(),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => return Err(too_large()),
        Err(e) => {
            return Err(refusal(
                StatusCode::BAD_REQUEST,
                Code::InvalidInput,
                &format!("the request body could not be read: {e}"),
            ))
        }
    };
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(Value::Object(Default::default()));
    }
    serde_json::from_slice(&bytes).map_err(|e| {
        refusal(
            StatusCode::BAD_REQUEST,
            Code::InvalidInput,
            &format!("the request body is not JSON: {e}"),
        )
    })
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

fn error(e: &Error) -> Response<Body> {
    json(status_of(e.code()), &verbs::error_body(e))
}

/// An error body made here (routing, authorization, the body), not by a verb.
fn refusal(status: StatusCode, code: Code, message: &str) -> Response<Body> {
    json(
        status,
        &serde_json::json!({"code": code.as_str(), "message": message}),
    )
}

fn not_allowed(allow: &'static str) -> Response<Body> {
    let mut r = refusal(
        StatusCode::METHOD_NOT_ALLOWED,
        Code::InvalidInput,
        &format!("use {allow} here"),
    );
    r.headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static(allow));
    r
}

/// A JSON reply, never cached.
pub fn json(status: StatusCode, value: &Value) -> Response<Body> {
    let mut body = serde_json::to_vec(value).unwrap_or_else(|_| b"null".to_vec());
    body.push(b'\n');
    let mut r = Response::new(Full::new(Bytes::from(body)).boxed());
    *r.status_mut() = status;
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    r
}
