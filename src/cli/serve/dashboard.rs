//! The dashboard's routes: `GET /` (the page), `GET /rows` (its rows, for a live update),
//! both one page of rows at a time (the filters, the search and the page in the query:
//! [`filter`]), `GET /activity` (the charts' counts, `activity.rs`), `GET /dashboard.js`,
//! `/dashboard-views.js` (the graph and the charts) and `/dashboard.css`. No page carries a credential. The
//! dashboard is opened once through the link `claimdag serve` printed, `/?token=TOKEN`:
//! that starts a session (`session.rs`: an HttpOnly, SameSite=Strict cookie) and sends the
//! browser on to `/`; pages served to a session carry its CSRF secret, which the
//! dashboard's writes send back with the cookie. On loopback a page asked for without a
//! session is shown read-only; beyond loopback every route here needs the session (or the
//! bearer token).

use super::http::{refusal, reply, Body, Shared};
use super::page;
use crate::error::Code;
use crate::store::PageFilter;
use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::header::{self, HeaderValue};
use hyper::{Request, Response, StatusCode};
use std::sync::Arc;

const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
                   connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; \
                   frame-ancestors 'none'";

/// A `GET` of the dashboard, or `None` for another path.
pub async fn route(shared: &Arc<Shared>, req: &Request<Incoming>) -> Option<Response<Body>> {
    let path = req.uri().path();
    let query = req.uri().query().unwrap_or("");
    let given = param(query, "token");
    if path == "/" && given.is_some() {
        return Some(open_session(shared, given.as_deref(), query));
    }
    let routes = [
        "/",
        "/rows",
        "/activity",
        "/dashboard.js",
        "/dashboard-views.js",
        "/dashboard.css",
    ];
    if routes.contains(&path) && !shared.may_read(req) {
        return Some(refusal(
            StatusCode::UNAUTHORIZED,
            Code::InvalidInput,
            "the dashboard needs the token here: open the link `claimdag serve` printed \
             (/?token=TOKEN, the token in the file it named) once",
        ));
    }
    match path {
        "/activity" => return Some(activity(shared, query).await),
        "/" | "/rows" => {}
        _ => return asset(path),
    }
    let csrf = shared.sessions.csrf_of(req).unwrap_or_default();
    let filter = match filter(shared, query) {
        Ok(f) => f,
        Err(e) => return Some(super::http::error(&e)),
    };
    let whole = path == "/";
    // The rows carry no secret: every dashboard asking for the same ones shares a read.
    let key = if whole {
        format!("/ {filter:?} {csrf}")
    } else {
        format!("/rows {filter:?}")
    };
    // The last write the page was told of: a read that began after it shows it.
    let seen = param(query, "seen").and_then(|s| s.parse::<u64>().ok());
    let shared2 = shared.clone();
    let rendered = shared
        .pages
        .page(key, seen, move || {
            let mut p = shared2.store.page(&filter)?;
            let names = shared2.store.names()?;
            p.rows.iter_mut().for_each(|v| names.name_view(v));
            Ok(Bytes::from(if whole {
                page::page(&p, &filter, &shared2.store.location(), &csrf)
            } else {
                page::rows(&p, filter.limit)
            }))
        })
        .await;
    let html = match rendered {
        Ok(h) => h,
        Err(e) => return Some(super::http::error(&e)),
    };
    let mut r = reply(Full::new(html).boxed(), "text/html; charset=utf-8");
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    Some(r)
}

/// The script and the style the page loads, or `None` for another path.
fn asset(path: &str) -> Option<Response<Body>> {
    let (text, kind) = match path {
        "/dashboard.js" => (page::SCRIPT, "text/javascript; charset=utf-8"),
        "/dashboard-views.js" => (page::VIEWS, "text/javascript; charset=utf-8"),
        "/dashboard.css" => (page::STYLE, "text/css; charset=utf-8"),
        _ => return None,
    };
    Some(reply(
        Full::new(Bytes::from_static(text.as_bytes())).boxed(),
        kind,
    ))
}

/// `GET /activity?workspace=W`: the last hour of `W` (else the server's workspace), minute
/// by minute.
async fn activity(shared: &Arc<Shared>, query: &str) -> Response<Body> {
    let workspace = param(query, "workspace").unwrap_or_else(|| shared.workspace.clone());
    let store = shared.store.clone();
    let now = match tokio::task::spawn_blocking(move || store.now()).await {
        Ok(Ok(now)) => now,
        Ok(Err(e)) => return super::http::error(&e),
        Err(e) => return super::http::error(&crate::Error::Internal(e.to_string())),
    };
    let body = shared.metrics.activity.render(&workspace, now);
    super::http::json(StatusCode::OK, &body)
}

/// The page a request asks for: `workspace` (else the server's), `status` (a display
/// word), `role`, `label`, `holder` (an id prefix or `name:NAME`), `q` (text in the id,
/// summary or labels), `sort` (`updated`, `priority`, `deadline`, `status`; none: creation
/// order), `offset` (the first row, from 0) and `limit` (rows a page, 200 unless
/// given, at most 1,000). Empty values count as not given. (`seen`, the number of the last
/// write the page was told of, lets its request share a read that shows that write.)
fn filter(shared: &Shared, query: &str) -> crate::error::Result<PageFilter> {
    let given = |k: &str| {
        param(query, k)
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
    };
    let number = |k: &str, default: usize| match given(k) {
        None => Ok(default),
        Some(v) => v
            .parse::<usize>()
            .map_err(|_| crate::Error::invalid(format!("{k} {v:?}: a number of rows, from 0"))),
    };
    Ok(PageFilter {
        workspace: param(query, "workspace").unwrap_or_else(|| shared.workspace.clone()),
        status: given("status"),
        role: given("role"),
        label: given("label"),
        holder: given("holder"),
        text: given("q"),
        sort: given("sort"),
        offset: number("offset", 0)?,
        limit: number("limit", page::LIMIT)?.clamp(1, page::MOST_ROWS),
    })
}

/// `GET /?token=TOKEN`: a new session, and the browser sent on to the page without the
/// token in its address (or history); a wrong token is refused.
fn open_session(shared: &Shared, given: Option<&str>, query: &str) -> Response<Body> {
    if !given.is_some_and(|t| shared.is_token(t)) {
        return refusal(
            StatusCode::UNAUTHORIZED,
            Code::InvalidInput,
            "the dashboard's link carries a token that is not this server's: use the link \
             `claimdag serve` printed, or the token in the file it named",
        );
    }
    let cookie = match shared.sessions.open() {
        Ok(c) => c,
        Err(e) => return super::http::error(&e),
    };
    let to = match param(query, "workspace") {
        Some(w) => format!("/?workspace={}", encode(&w)),
        None => "/".to_string(),
    };
    let mut r = reply(Full::new(Bytes::new()).boxed(), "text/plain; charset=utf-8");
    *r.status_mut() = StatusCode::SEE_OTHER;
    let h = r.headers_mut();
    if let (Ok(c), Ok(to)) = (HeaderValue::from_str(&cookie), HeaderValue::from_str(&to)) {
        h.insert(header::SET_COOKIE, c);
        h.insert(header::LOCATION, to);
    }
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    r
}

/// A query value, percent-encoded but for the unreserved characters.
fn encode(v: &str) -> String {
    v.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            b => format!("%{b:02X}"),
        })
        .collect()
}

/// A query parameter, percent-decoded.
fn param(query: &str, name: &str) -> Option<String> {
    query.split('&').find_map(|kv| {
        let (k, v) = kv.split_once('=')?;
        (k == name).then(|| decode(v))
    })
}

fn decode(v: &str) -> String {
    let b = v.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        match b[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < b.len() => match (hex(b[i + 1]), hex(b[i + 2])) {
                (Some(h), Some(l)) => {
                    out.push((h * 16 + l) as u8);
                    i += 2;
                }
                _ => out.push(b'%'),
            },
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}
