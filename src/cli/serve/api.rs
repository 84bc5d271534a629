//! The routes of `claimdag serve`, and the verb layer over HTTP: `POST /v1/VERB` runs
//! `verbs::call` with the body's JSON and answers its reply, or its error body with the
//! status of its code (`http.rs`).

use super::auth::{self, Access, Caller};
use super::http::{busy, error, json, not_allowed, refusal, reply, served, Body, Shared};
use crate::error::{Code, Error};
use crate::id::Actor;
use crate::store::Store;
use crate::verbs;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::header;
use hyper::{Method, Request, Response, StatusCode};
use serde_json::Value;
use std::convert::Infallible;
use std::net::IpAddr;
use std::sync::Arc;

/// Answers one request.
pub async fn handle(
    shared: Arc<Shared>,
    client: IpAddr,
    req: Request<Incoming>,
) -> std::result::Result<Response<Body>, Infallible> {
    let path = req.uri().path().to_string();
    if shared.open_reads && !loopback_host(&req) {
        // A name that resolves to loopback but is not (DNS rebinding): a page of another
        // site must not read the dashboard (and its token) as if it were its own.
        return Ok(refusal(
            StatusCode::FORBIDDEN,
            Code::InvalidInput,
            "this server answers requests addressed to a loopback name (localhost, \
             127.0.0.1, [::1]) only",
        ));
    }
    if req.method() == Method::GET {
        if let Some(r) = super::dashboard::route(&shared, &req).await {
            return Ok(r);
        }
    }
    let reply = match (req.method(), path.as_str()) {
        (&Method::GET, "/v1/openapi.json") => match auth::caller(&shared, &req, "openapi.json", false).await {
            Ok(_) => json(StatusCode::OK, &shared.openapi),
            Err(refused) => refused,
        },
        (&Method::GET, "/v1/watch") => watch(&shared, client, &req).await,
        (&Method::GET, "/metrics") => metrics(shared.clone(), &req).await,
        (_, "/mcp") => mcp(&shared, req).await,
        (_, "/v1/watch") | (_, "/metrics") => not_allowed("GET"),
        (&Method::POST, p) if p.starts_with("/v1/") => {
            let verb = p["/v1/".len()..].replace('-', "_");
            call(&shared, client, verb, req).await
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
async fn call(
    shared: &Arc<Shared>,
    client: IpAddr,
    verb: String,
    req: Request<Incoming>,
) -> Response<Body> {
    let Some(about) = served().find(|a| a.verb == verb) else {
        return unknown_verb(&verb);
    };
    let caller = match auth::caller(shared, &req, &verb, !about.read_only).await {
        Ok(c) => c,
        Err(refused) => return refused,
    };
    if let Some(refused) = caller.refuses(about) {
        return refused;
    }
    // Who acts, when the request says (the dashboard's "act as"): the history records it
    // beside the actor the request names. An agent's token acts as its actor only.
    let (store, by_name) = match acting(&req) {
        Ok(Some((by, _))) if caller.actor().is_some_and(|a| a != by) => {
            return auth::forbidden(&format!(
                "{verb}: X-Claimdag-Actor names another actor than the token's"
            ))
        }
        Ok(Some((by, name))) => (shared.store.acting_as(by), name),
        Ok(None) => (shared.store.clone(), None),
        Err(why) => return refusal(StatusCode::BAD_REQUEST, Code::InvalidInput, &why),
    };
    let store = match caller {
        Caller::Dashboard => store.through("dashboard"),
        _ => store,
    };
    let args = match body_json(shared.max_body, req).await {
        Ok(v) => v,
        Err(r) => return r,
    };
    if shared.stopping() {
        return busy(&format!("{verb}: the server is stopping; nothing was done"));
    }
    if let Some(wait_ms) = super::wait::asks_to_wait(&verb, &args, shared.max_wait_ms) {
        return long_poll(shared, store, caller, client, &verb, args, wait_ms).await;
    }
    let started = std::time::Instant::now();
    let name = verb.clone();
    let on = shared.clone();
    let ran = tokio::task::spawn_blocking(move || {
        let cx = caller.context(&store, &on, on.max_wait_ms)?;
        let answer = verbs::call(&cx, &name, args)?;
        // The name of who acted is kept as an actor's is: once its call succeeded.
        if let Some(n) = by_name {
            let _ = store.named_actor(&n);
        }
        Ok(answer)
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

/// A `claim_next` that waits for work: a task holding one of the server's stream places.
async fn long_poll(
    shared: &Arc<Shared>,
    store: Store,
    caller: Caller,
    client: IpAddr,
    verb: &str,
    args: Value,
    wait_ms: u64,
) -> Response<Body> {
    let slot = match shared.streams.take(client) {
        Ok(slot) => slot,
        Err(why) => return busy(&format!("{verb}: {why}")),
    };
    let started = std::time::Instant::now();
    let ran = super::wait::claim_next(shared.clone(), store, caller, args, wait_ms).await;
    drop(slot);
    let outcome = ran.as_ref().map(|_| ()).map_err(|e| match e {
        super::wait::Ended::Refused(e) => e.code(),
        super::wait::Ended::Stopping => Code::Io,
    });
    shared.metrics.request(verb, outcome, started.elapsed());
    match ran {
        Ok(answer) => json(StatusCode::OK, &answer.json),
        Err(super::wait::Ended::Refused(e)) => error(&e),
        Err(super::wait::Ended::Stopping) => busy(&format!(
            "{verb}: the server is stopping; nothing was granted"
        )),
    }
}

/// 404 for a verb that is not served here, naming those that are.
fn unknown_verb(verb: &str) -> Response<Body> {
    let served: Vec<&str> = served().map(|a| a.verb).collect();
    refusal(
        StatusCode::NOT_FOUND,
        Code::NotFound,
        &format!(
            "no verb {verb:?} here: the verbs served are {}",
            served.join(", ")
        ),
    )
}

/// The actor of the request's `X-Claimdag-Actor` header (32 hex or `name:NAME`, with its
/// name), if it has one; what is wrong with it when it is not an actor.
fn acting(req: &Request<Incoming>) -> std::result::Result<Option<(Actor, Option<String>)>, String> {
    let Some(v) = req.headers().get(ACTING_HEADER) else {
        return Ok(None);
    };
    let text = v.to_str().unwrap_or_default().trim();
    let name = text.strip_prefix("name:").map(str::to_string);
    Actor::parse_actor(text, "X-Claimdag-Actor")
        .map(|a| Some((a, name)))
        .map_err(|e| e.to_string())
}

/// The header a request names the actor acting in (the dashboard's "act as").
const ACTING_HEADER: &str = "x-claimdag-actor";

/// `GET /v1/watch`: a read (the token only beyond loopback).
async fn watch(shared: &Arc<Shared>, client: IpAddr, req: &Request<Incoming>) -> Response<Body> {
    if let Err(refused) = auth::lead(shared, req, "watch").await {
        return refused;
    }
    if shared.stopping() {
        return busy("watch: the server is stopping");
    }
    let last = req.headers().get("last-event-id");
    match super::events::since(req.uri().query(), last) {
        Ok(since) => match shared.streams.take(client) {
            Ok(slot) => super::events::stream(shared.clone(), since, slot),
            Err(why) => busy(&format!("watch: {why}")),
        },
        Err(why) => refusal(
            StatusCode::BAD_REQUEST,
            Code::InvalidInput,
            &format!("watch: {why}"),
        ),
    }
}

/// `GET /metrics`, in Prometheus's text format (a read: the token only beyond loopback).
async fn metrics(shared: Arc<Shared>, req: &Request<Incoming>) -> Response<Body> {
    if let Err(refused) = auth::lead(&shared, req, "metrics").await {
        return refused;
    }
    let text = tokio::task::spawn_blocking(move || shared.metrics.render(&shared.store))
        .await
        .unwrap_or_default();
    reply(
        Full::new(Bytes::from(text)).boxed(),
        "text/plain; version=0.0.4; charset=utf-8",
    )
}

/// The request is addressed to a loopback name.
fn loopback_host(req: &Request<Incoming>) -> bool {
    let Some(host) = req
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
    else {
        return false;
    };
    let name = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => host.rsplit_once(':').map_or(host, |(n, _)| n),
    };
    let name = name.to_ascii_lowercase();
    name == "localhost"
        || name.ends_with(".localhost")
        || name
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
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

/// One request to `/mcp`: refused without a good token, else handed to rmcp with its
/// caller's binding.
async fn mcp(shared: &Arc<Shared>, mut req: Request<Incoming>) -> Response<Body> {
    let caller = match auth::access(shared, &req).await {
        Access::Caller(c) => c,
        Access::Anonymous => return auth::unauthorized("mcp", true),
        Access::Refused(why) => return auth::bad_token("mcp", why),
    };
    if shared.stopping() {
        return busy("mcp: the server is stopping; nothing was done");
    }
    let ends_session = req.method() == hyper::Method::DELETE;
    let binding = caller.binding(shared, shared.max_wait_ms);
    req.extensions_mut().insert(binding);
    let mut r = shared.mcp.handle(req).await;
    // A session ended: 200, which every client takes (the official Python SDK warns of
    // rmcp's 202).
    if ends_session && r.status() == hyper::StatusCode::ACCEPTED {
        *r.status_mut() = hyper::StatusCode::OK;
    }
    r
}
