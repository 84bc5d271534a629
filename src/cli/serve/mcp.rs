//! `/mcp`: the MCP server of `claimdag mcp` over Streamable HTTP (rmcp's transport), with
//! the tokens of the JSON API. A request needs a bearer token, on loopback too: the lead's
//! acts as any actor with every tool; an actor's acts as that actor, in its workspace,
//! with its profile's tools, bound as a stdio server started with `--actor` is. The caller
//! rides in the request's extensions, which rmcp hands to each call.

use super::Setup;
use crate::cli::mcp::Server;
use crate::store::Store;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use std::sync::Arc;

pub type Service = StreamableHttpService<Server, LocalSessionManager>;

/// The service, one for the server's life. The Host header is checked by the server
/// itself (`api.rs`: loopback names only while reads are open), so rmcp's check is off.
pub fn service(store: &Store, setup: &Setup) -> Service {
    let (store, max_wait) = (store.through("mcp"), setup.max_wait_ms);
    let mut config = StreamableHttpServerConfig::default().disable_allowed_hosts();
    config.max_request_body_bytes = setup.max_body;
    StreamableHttpService::new(
        move || Ok(Server::over_http(store.clone(), max_wait)),
        Arc::new(LocalSessionManager::default()),
        config,
    )
}
