//! `claimdag serve`: one store over HTTP/1.1 (hyper on tokio). `POST /v1/VERB` is the verb
//! layer over HTTP: the request body is the JSON the MCP tool of that verb takes, the reply
//! is the verb's JSON, a refusal is the error body of docs/reference.md ("Exit codes and
//! errors") with a status that fits (`api.rs`). Every call runs on tokio's blocking pool, so
//! a slow or vanished client holds a connection, never the store's lock: the lock is taken
//! and released inside the call, before the reply is written. Watch streams (`events.rs`)
//! and waiting `claim_next` calls (`wait.rs`) are tasks fed by one history follower
//! (`hub.rs`), bounded in number (`limits.rs`).
//!
//! Writes need `Authorization: Bearer TOKEN` (or the dashboard's session, `session.rs`);
//! reads need it too when the server listens beyond loopback, which it refuses to do
//! without a token file given (`token.rs`).

mod activity;
mod api;
mod auth;
mod dashboard;
mod events;
mod http;
mod hub;
mod limits;
mod mcp;
mod metrics;
mod openapi;
mod page;
mod pages;
mod session;
mod token;
mod wait;

use crate::error::{Error, Result};
use crate::store::Store;
use http::Shared;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::signal::unix::{signal, SignalKind};

/// What `claimdag serve` was started with.
#[derive(Debug, Clone)]
pub struct Setup {
    pub listen: SocketAddr,
    /// The file holding the token; `None`: one is made beside the store.
    pub token_file: Option<PathBuf>,
    /// The workspace of requests that name none.
    pub workspace: String,
    /// The longest a `claim_next` may wait for work.
    pub max_wait_ms: u64,
    /// The largest request body taken, in bytes.
    pub max_body: usize,
    /// The most watch streams and waits held open at once.
    pub max_streams: usize,
}

/// How long a client may take to send a request's headers.
const HEADER_TIMEOUT: Duration = Duration::from_secs(30);

/// Serves until SIGINT or SIGTERM.
pub fn serve(store: Store, setup: Setup) -> Result<()> {
    if !setup.listen.ip().is_loopback() && setup.token_file.is_none() {
        return Err(Error::invalid(format!(
            "--listen {}: listening beyond loopback needs --token-file FILE (a secret that \
             every client sends as Authorization: Bearer TOKEN)",
            setup.listen
        )));
    }
    let (token, token_path) = token::load_or_make(&store, setup.token_file.as_deref())?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::Internal(format!("cannot start the HTTP runtime: {e}")))?;
    let metrics = Arc::new(metrics::Metrics::default());
    let hub = hub::Hub::start(store.clone(), metrics.clone());
    let store_for_mcp = store.clone();
    let head = hub.clone();
    let shared = Arc::new(Shared {
        openapi: openapi::document(),
        hub,
        store,
        token,
        open_reads: setup.listen.ip().is_loopback(),
        workspace: setup.workspace.clone(),
        max_wait_ms: setup.max_wait_ms,
        max_body: setup.max_body,
        metrics,
        sessions: session::Sessions::new()?,
        pages: pages::Pages::start(Arc::new(move || head.head()))?,
        streams: limits::Streams::new(setup.max_streams),
        readers: tokio::sync::Semaphore::new(2),
        stop: tokio::sync::watch::channel(false).0,
        mcp: mcp::service(&store_for_mcp, &setup),
    });
    let ran = rt.block_on(run(shared.clone(), setup.listen, token_path));
    // Calls still running on the blocking pool are single writes that end by themselves;
    // nothing that waits is left (every wait answered when the stop was given).
    rt.shutdown_timeout(STOP_GRACE);
    ran
}

/// How long a stopping server lets the requests it is answering finish.
const STOP_GRACE: Duration = Duration::from_secs(5);

async fn run(shared: Arc<Shared>, listen: SocketAddr, token_path: PathBuf) -> Result<()> {
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .map_err(|e| Error::Io {
            path: PathBuf::from(listen.to_string()),
            message: format!("cannot listen: {e}"),
            errno: e.raw_os_error(),
        })?;
    let addr = listener.local_addr().unwrap_or(listen);
    // Both signals are watched before the server says where it listens: a client that
    // stops it as soon as it reads that line finds it ready to stop cleanly.
    let watch = |kind: SignalKind, name: &str| {
        signal(kind).map_err(|e| Error::Internal(format!("cannot watch {name}: {e}")))
    };
    let mut term = watch(SignalKind::terminate(), "SIGTERM")?;
    let mut int = watch(SignalKind::interrupt(), "SIGINT")?;
    eprintln!(
        "claimdag serve: {} on http://{addr}/ (API under /v1/, described at /v1/openapi.json)",
        shared.store.location()
    );
    eprintln!(
        "claimdag serve: writes need Authorization: Bearer TOKEN, the token in {}",
        token_path.display()
    );
    eprintln!(
        "claimdag serve: the dashboard: http://{addr}/?token={} (this link acts as the \
         store's owner: keep it to yourself)",
        shared.token
    );
    let live = Arc::new(Live::default());
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((tcp, peer)) => {
                    let (shared, live) = (shared.clone(), live.clone());
                    tokio::spawn(async move { connection(shared, live, tcp, peer.ip()).await });
                }
                // Out of descriptors, or a connection reset before it was taken: the
                // listener goes on.
                Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
            },
            _ = int.recv() => break,
            _ = term.recv() => break,
        }
    }
    // Waits answer at once and grant nothing more, streams end; requests being answered
    // finish (each is one call of the store), for STOP_GRACE at most.
    shared.stop.send_replace(true);
    shared.mcp.config.cancellation_token.cancel();
    shared.hub.stop();
    drop(listener);
    let _ = tokio::time::timeout(STOP_GRACE, live.idle()).await;
    eprintln!("claimdag serve: stopped");
    Ok(())
}

/// The requests being answered, so that a stopping server lets them finish.
#[derive(Default)]
struct Live {
    requests: std::sync::atomic::AtomicUsize,
    ended: tokio::sync::Notify,
}

impl Live {
    async fn idle(&self) {
        use std::sync::atomic::Ordering;
        loop {
            let ended = self.ended.notified();
            if self.requests.load(Ordering::SeqCst) == 0 {
                return;
            }
            ended.await;
        }
    }
}

/// One request being answered.
struct Answering(Arc<Live>);

impl Answering {
    fn new(live: &Arc<Live>) -> Answering {
        live.requests
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Answering(live.clone())
    }
}

impl Drop for Answering {
    fn drop(&mut self) {
        self.0
            .requests
            .fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
        self.0.ended.notify_waiters();
    }
}

/// One client's connection, kept alive between requests.
async fn connection(
    shared: Arc<Shared>,
    live: Arc<Live>,
    tcp: tokio::net::TcpStream,
    client: std::net::IpAddr,
) {
    let _ = tcp.set_nodelay(true);
    let service = service_fn(move |req| {
        let (shared, answering) = (shared.clone(), Answering::new(&live));
        async move {
            let answer = api::handle(shared, client, req).await;
            drop(answering);
            answer
        }
    });
    let _ = http1::Builder::new()
        .keep_alive(true)
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_TIMEOUT)
        .serve_connection(TokioIo::new(tcp), service)
        .await;
}
