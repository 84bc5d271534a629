//! The dashboard's sessions. The page never carries a credential: the person who started the
//! server opens the dashboard once through the link it printed (`/?token=TOKEN`, as Jupyter
//! does); the server answers with a session cookie (HttpOnly, SameSite=Strict, so no script
//! and no other site can read or send it) and sends the browser on to `/` without the token.
//! Each session has its own CSRF secret, put in the pages served to that session only; the
//! dashboard's writes carry both the cookie and the secret (`X-Claimdag-Csrf`). A process of
//! the same machine that asks for `/` without the cookie gets a page with neither, and
//! nothing it can write with.

use crate::error::Result;
use crate::store::tokens::{random_hex, same_secret};
use hyper::body::Incoming;
use hyper::header;
use hyper::Request;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Instant;

/// The header the dashboard's writes carry the session's CSRF secret in.
pub const CSRF_HEADER: &str = "x-claimdag-csrf";
/// Sessions kept at once; opening one more forgets the oldest.
const MOST: usize = 256;

/// The live sessions of one server, in memory: a restart ends them all.
pub struct Sessions {
    /// The cookie's name: the server's own, so that two servers on one host (cookies do not
    /// tell ports apart) never take each other's.
    pub cookie: String,
    open: Mutex<HashMap<String, Session>>,
}

struct Session {
    csrf: String,
    opened: Instant,
}

impl Sessions {
    pub fn new() -> Result<Sessions> {
        Ok(Sessions {
            cookie: format!("claimdag_session_{}", random_hex::<4>()?),
            open: Mutex::new(HashMap::new()),
        })
    }

    /// A new session: the `Set-Cookie` value that carries it.
    pub fn open(&self) -> Result<String> {
        let (id, csrf) = (random_hex::<32>()?, random_hex::<32>()?);
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        if open.len() >= MOST {
            if let Some(oldest) = open
                .iter()
                .min_by_key(|(_, s)| s.opened)
                .map(|(k, _)| k.clone())
            {
                open.remove(&oldest);
            }
        }
        open.insert(
            id.clone(),
            Session {
                csrf,
                opened: Instant::now(),
            },
        );
        Ok(format!(
            "{}={id}; Path=/; HttpOnly; SameSite=Strict",
            self.cookie
        ))
    }

    /// The CSRF secret of the session the request's cookie names, if it names a live one.
    pub fn csrf_of(&self, req: &Request<Incoming>) -> Option<String> {
        let open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        cookies(req, &self.cookie).find_map(|given| {
            open.iter()
                .find(|(id, _)| same_secret(given, id))
                .map(|(_, s)| s.csrf.clone())
        })
    }

    /// The request belongs to a live session (a read).
    pub fn reads(&self, req: &Request<Incoming>) -> bool {
        self.csrf_of(req).is_some()
    }

    /// The request belongs to a live session and carries that session's CSRF secret (a
    /// write from the dashboard).
    pub fn writes(&self, req: &Request<Incoming>) -> bool {
        let Some(csrf) = self.csrf_of(req) else {
            return false;
        };
        req.headers()
            .get(CSRF_HEADER)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|given| same_secret(given.trim(), &csrf))
    }
}

/// The values of the cookies named `name` a request carries.
fn cookies<'a>(req: &'a Request<Incoming>, name: &'a str) -> impl Iterator<Item = &'a str> {
    req.headers()
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(move |kv| {
            let (k, v) = kv.trim().split_once('=')?;
            (k == name).then_some(v.trim())
        })
}
