//! The dashboard's routes: `GET /` (the page), `GET /rows` (its rows, for a live update),
//! `GET /dashboard.js` and `/dashboard.css`. The page carries the token (so that its script
//! can write); a page from another site cannot read it. Beyond loopback the page needs the
//! token too: opened once as `/?token=TOKEN`, it sets a cookie (HttpOnly, SameSite=Strict)
//! that later reads carry; writes need the bearer header whatever the cookie says.

use super::http::{refusal, reply, Body, Shared};
use super::page;
use crate::error::Code;
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
    match path {
        "/dashboard.js" => {
            return Some(reply(
                Full::new(Bytes::from_static(page::SCRIPT.as_bytes())).boxed(),
                "text/javascript; charset=utf-8",
            ))
        }
        "/dashboard.css" => {
            return Some(reply(
                Full::new(Bytes::from_static(page::STYLE.as_bytes())).boxed(),
                "text/css; charset=utf-8",
            ))
        }
        "/" | "/rows" => {}
        _ => return None,
    }
    let query = req.uri().query().unwrap_or("");
    let given = param(query, "token");
    let by_link = given.as_deref().is_some_and(|t| shared.is_token(t));
    if !by_link && !shared.may_read(req) {
        return Some(refusal(
            StatusCode::UNAUTHORIZED,
            Code::InvalidInput,
            "the dashboard needs the token here: open /?token=TOKEN once (the token is in the \
             file `claimdag serve` printed when it started)",
        ));
    }
    let workspace = param(query, "workspace").unwrap_or_else(|| shared.workspace.clone());
    let whole = path == "/";
    let shared2 = shared.clone();
    let rendered = tokio::task::spawn_blocking(move || {
        let s = page::read(&shared2.store, &workspace)?;
        Ok::<_, crate::Error>(if whole {
            page::page(&s, &shared2.store.location(), &workspace, &shared2.token)
        } else {
            page::rows(&s)
        })
    })
    .await;
    let html = match rendered {
        Ok(Ok(h)) => h,
        Ok(Err(e)) => return Some(super::http::error(&e)),
        Err(_) => {
            return Some(super::http::error(&crate::Error::Internal(
                "the page panicked".into(),
            )))
        }
    };
    let mut r = reply(
        Full::new(Bytes::from(html)).boxed(),
        "text/html; charset=utf-8",
    );
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
    if by_link {
        let cookie = format!(
            "claimdag_token={}; Path=/; HttpOnly; SameSite=Strict",
            shared.token
        );
        if let Ok(v) = HeaderValue::from_str(&cookie) {
            h.insert(header::SET_COOKIE, v);
        }
    }
    Some(r)
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
