//! `claimdag mcp`: the store served to agents over the Model Context Protocol (stdio), with
//! the official Rust SDK (rmcp). The tools are the verbs of the verb layer: their input
//! schemas are the requests' JSON Schemas and their output schemas name the replies' fields
//! (`schema.rs` keeps both small), their structured results the replies' JSON (a list
//! goes under a key, as MCP wants an object), and every call is one `verbs::call` run off
//! the async executor. A refusal is a tool result with `isError` whose structured content is
//! the error body (docs/reference.md, "Exit codes and errors") and whose text is that body serialised (`{"error":
//! {...}}`), so the agent reads why whichever its client shows; only a malformed request
//! (an unknown tool, params that are not a call) is a protocol error.
//!
//! The server holds an agent to what it was started with ([`verbs::Bounds`]): its actor and
//! its workspace (an argument naming another is `invalid_input`; a node of another
//! workspace answers `not_found`, as one that does not exist), with the worker profile
//! the claims it holds (it cannot cancel a node it does not hold), and `diff_check` to git
//! work trees under the directory it was started in (and those the operator allows).

mod schema;
mod stdio;

pub use super::args::Profile;
use crate::error::Result;
use crate::id::Actor;
use crate::store::Store;
use crate::verbs::{self, Bounds, Ctx};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, CustomRequest,
    CustomResult, ErrorCode, GetPromptRequestParams, GetPromptResponse, GetPromptResult,
    Implementation, ListPromptsResult, ListResourcesResult, ListToolsResult,
    PaginatedRequestParams, ProgressNotificationParam, ProgressToken, Prompt, PromptArgument,
    PromptMessage, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource,
    ResourceContents, Role, ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use serde_json::{json, Value};
use std::sync::Arc;

/// The MCP server over one store.
#[derive(Clone)]
pub struct Server {
    store: Store,
    /// Who the calls act as: fixed at start (stdio), or `None`: each request's own, from
    /// the HTTP request that carried it (`claimdag serve`'s `/mcp`, `http.rs`).
    fixed: Option<Binding>,
    /// The tools of the fixed profile, or over HTTP every tool served (each request's
    /// profile takes its own).
    tools: Arc<Vec<Tool>>,
}

/// What a call acts as: an actor (or any), a workspace, the verbs of a profile, the bounds
/// of the door.
#[derive(Debug, Clone)]
pub struct Binding {
    pub workspace: String,
    pub actor: Option<Actor>,
    pub profile: Profile,
    pub bounds: Bounds,
    /// Over HTTP: only the verbs served over HTTP (not those that reach the server's files).
    pub http: bool,
}

impl Binding {
    /// Whether the binding offers `verb` as a tool.
    pub fn offers(&self, verb: &str) -> bool {
        verbs::CATALOG.iter().any(|a| {
            a.verb == verb
                && a.in_profile(self.profile)
                && (!self.http || a.offered_by(verbs::Door::Http))
        })
    }

    /// The context a call of this binding runs in.
    pub fn context<'a>(&self, store: &'a Store) -> Result<Ctx<'a>> {
        let mut cx = Ctx::new(store, &self.workspace)?;
        cx.actor = self.actor;
        cx.bounds = self.bounds.clone();
        Ok(cx)
    }
}

/// What the operator started the server with.
#[derive(Debug, Clone)]
pub struct Setup {
    pub workspace: String,
    pub actor: Option<Actor>,
    pub profile: Profile,
    /// Directories beside the working directory that `diff_check` may run git in.
    pub allow_repos: Vec<std::path::PathBuf>,
    /// The longest `claim_next` wait an agent may ask for (`--max-wait`), in ms.
    pub max_wait_ms: u64,
}

/// How often a waiting `claim_next` tells a client that asked for progress (a
/// `progressToken` in the request's `_meta`) that it is still waiting; the first comes
/// after [`FIRST_PROGRESS`], so that a call answered at once sends none.
const PROGRESS_EVERY: std::time::Duration = std::time::Duration::from_secs(2);
const FIRST_PROGRESS: std::time::Duration = std::time::Duration::from_secs(1);

impl Setup {
    /// The bounds the server holds agents to: the working directory (and the allowed ones)
    /// canonical, so that a path of the agent's is compared with what it really names.
    fn bounds(&self) -> Result<Bounds> {
        let cwd =
            std::env::current_dir().map_err(|e| crate::Error::io(std::path::Path::new("."), &e))?;
        let mut repos = vec![cwd];
        repos.extend(self.allow_repos.iter().cloned());
        let repos = repos
            .iter()
            .map(|d| {
                d.canonicalize().map_err(|e| {
                    crate::Error::invalid(format!("--allow-repo {}: {e}", d.display()))
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Bounds {
            bound: true,
            holder_only: self.profile == Profile::Worker,
            repos: Some(repos),
            max_wait_ms: Some(self.max_wait_ms),
        })
    }
}

impl Server {
    /// The stdio server: every call bound to what the operator started it with.
    pub fn new(store: Store, setup: Setup) -> Result<Server> {
        let binding = Binding {
            bounds: setup.bounds()?,
            workspace: setup.workspace,
            actor: setup.actor,
            profile: setup.profile,
            http: false,
        };
        let tools = tools(&binding, setup.max_wait_ms);
        Ok(Server {
            store,
            fixed: Some(binding),
            tools: Arc::new(tools),
        })
    }

    /// The server of `claimdag serve`'s `/mcp`: each call acts as its request's
    /// [`Binding`] (put in the HTTP request's extensions by the server).
    pub fn over_http(store: Store, max_wait_ms: u64) -> Server {
        let every = Binding {
            workspace: String::new(),
            actor: None,
            profile: Profile::All,
            bounds: Bounds::default(),
            http: true,
        };
        Server {
            store,
            fixed: None,
            tools: Arc::new(tools(&every, max_wait_ms)),
        }
    }

    /// What the call of `context` acts as.
    fn binding(
        &self,
        context: &RequestContext<RoleServer>,
    ) -> std::result::Result<Binding, McpError> {
        if let Some(b) = &self.fixed {
            return Ok(b.clone());
        }
        context
            .extensions
            .get::<hyper::http::request::Parts>()
            .and_then(|p| p.extensions.get::<Binding>())
            .cloned()
            .ok_or_else(|| McpError::internal_error("the request carries no credentials", None))
    }
}

/// The tools `binding` offers, described.
fn tools(binding: &Binding, max_wait: u64) -> Vec<Tool> {
    verbs::CATALOG
        .iter()
        .filter(|t| binding.offers(t.verb))
        .filter_map(|t| {
            let (input, output) = verbs::schemas(t.verb)?;
            let key = verbs::object_key(t.verb);
            let mut input = schema::input(input);
            if binding.bounds.bound {
                schema::without_bound(&mut input, binding.actor.is_some());
            }
            let about = match t.verb {
                "claim_next" => format!(
                    "{} (at most {}).",
                    t.about,
                    crate::duration::format_ms(max_wait)
                ),
                _ => t.about.to_string(),
            };
            let tool = Tool::new(t.verb, about, Arc::new(input))
                .with_raw_output_schema(Arc::new(schema::output(&output, key)))
                .with_annotations(
                    ToolAnnotations::new()
                        .read_only(t.read_only)
                        .destructive(t.destructive)
                        .idempotent(t.idempotent)
                        .open_world(false),
                );
            Some(tool)
        })
        .collect()
}

impl Server {
    /// Runs one verb with JSON arguments off the async executor; a refusal becomes an error
    /// result carrying the error body.
    async fn run(&self, b: &Binding, verb: String, args: Value) -> CallToolResult {
        self.run_until(b, verb, args, None).await
    }

    /// [`Server::run`], a wait of the verb ending once `cancelled` is (the client cancelled
    /// the request or went away): no look for work starts after, so the blocking thread
    /// and, but for a look already running, any node are let go.
    async fn run_until(
        &self,
        b: &Binding,
        verb: String,
        args: Value,
        cancelled: Option<Box<dyn Fn() -> bool + Send + Sync>>,
    ) -> CallToolResult {
        let (store, b) = (self.store.clone(), b.clone());
        let verb_name = verb.clone();
        let outcome = tokio::task::spawn_blocking(move || -> Result<verbs::Answer> {
            let mut cx = b.context(&store)?;
            let stop = move || cancelled.as_ref().is_some_and(|c| c());
            cx.stop = Some(crate::store::Stop(&stop));
            let role = args.get("role").cloned();
            let mut answer = verbs::call(&cx, &verb, args)?;
            with_leases(&store, &verb, &mut answer);
            if verb == "claim_next" && answer.json.is_null() {
                answer.text = nothing_ready(&cx, role);
            }
            Ok(answer)
        })
        .await;
        match outcome {
            Ok(Ok(answer)) => {
                let text = match (answer.text.trim_end(), &answer.json) {
                    ("", Value::Null) => "nothing: no node is ready".to_string(),
                    ("", Value::Array(a)) if a.is_empty() => match verb_name.as_str() {
                        "ready" => "nothing: no node is ready".to_string(),
                        v => format!("nothing: {v} found none"),
                    },
                    ("", _) => "ok".to_string(),
                    (t, _) => t.to_string(),
                };
                let text = stop_text(&verb_name, &answer.json)
                    .or_else(|| lease_text(&verb_name, &answer.json))
                    .unwrap_or(text);
                let mut r = CallToolResult::structured(answer.object());
                r.content = vec![ContentBlock::text(text)];
                r
            }
            Ok(Err(e)) => refusal(&e),
            Err(join) => refusal(&crate::Error::Internal(format!(
                "the tool call panicked: {join}"
            ))),
        }
    }
}

impl Server {
    /// A waiting `claim_next` whose client cancelled the request (or timed it out) while
    /// the store's wait ran: a node it claimed meanwhile would be held by nobody who knows,
    /// until its lease ran out; it is handed back at once, ready again without a delay.
    async fn unless_cancelled(
        &self,
        b: &Binding,
        r: CallToolResult,
        context: &RequestContext<RoleServer>,
    ) -> CallToolResult {
        if !context.ct.is_cancelled() {
            return r;
        }
        // One claim, or with `count` a list of them.
        let claimed = match r.structured_content.as_ref().and_then(|v| v.get("claimed")) {
            Some(Value::Array(all)) => all.clone(),
            Some(c) if !c.is_null() => vec![c.clone()],
            _ => Vec::new(),
        };
        for c in claimed {
            if c.get("resumed") == Some(&Value::Bool(true)) {
                continue;
            }
            let args = json!({"node": c["id"], "gen": c["generation"], "retry_in": 0});
            let _ = self.run(b, "release".into(), args).await;
        }
        r
    }
}

/// Awaits `ran` (a `claim_next` that may wait for work), telling the client every
/// [`PROGRESS_EVERY`] that it is still waiting, under the `progressToken` it gave: a
/// client that shows progress (or resets its request timeout on it) then knows the call
/// is alive. The call itself runs off the executor (see [`Server::run`]), so the server
/// answers other requests meanwhile, and the store's wait holds no lock.
async fn with_progress(
    ran: impl std::future::Future<Output = CallToolResult>,
    peer: &rmcp::Peer<RoleServer>,
    token: ProgressToken,
) -> CallToolResult {
    let began = tokio::time::Instant::now();
    let mut ticks = tokio::time::interval_at(began + FIRST_PROGRESS, PROGRESS_EVERY);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    tokio::pin!(ran);
    loop {
        tokio::select! {
            r = &mut ran => return r,
            _ = ticks.tick() => {
                let waited = began.elapsed().as_secs_f64().floor();
                let note = ProgressNotificationParam::new(token.clone(), waited)
                    .with_message(format!("waiting for ready work ({waited:.0} s)"));
                // A client that went away gets its answer (or not) all the same.
                let _ = peer.notify_progress(note).await;
            }
        }
    }
}

/// The text of a `renew` result that carries a cancel request, in words a model acts on
/// (the structured content carries `cancel_requested` as the reply has it); `None` for
/// every other result.
/// A claim's reply with its lease (`ttl_ms`, the node's as the claim left it), which the
/// agent renews about every third of: each node `claim` or `claim_next` answers.
fn with_leases(store: &Store, verb: &str, answer: &mut verbs::Answer) {
    if verb != "claim" && verb != "claim_next" {
        return;
    }
    let add = |c: &mut Value| {
        let ttl = c["id"]
            .as_str()
            .and_then(|id| crate::id::Id::parse(id, "id").ok())
            .and_then(|id| store.get(id).ok())
            .and_then(|v| v.node.ttl_ms);
        if let (Some(o), Some(t)) = (c.as_object_mut(), ttl) {
            o.insert("ttl_ms".into(), json!(t));
        }
    };
    match &mut answer.json {
        Value::Array(all) => all.iter_mut().for_each(add),
        c @ Value::Object(_) => add(c),
        _ => {}
    }
}

/// Why `claim_next` found nothing, in words: finished (stop), or waiting on others (the
/// claims and scheduled nodes `pending` names).
fn nothing_ready(cx: &Ctx<'_>, role: Option<Value>) -> String {
    let args = json!({ "role": role });
    let pending = verbs::call(cx, "pending", args).ok();
    match pending.as_ref().map(|p| &p.json) {
        Some(p) if p["finished"] == json!(true) => "nothing: no node is ready, and nothing \
            pending can make one ready: the work is finished, stop."
            .to_string(),
        Some(p) => format!(
            "nothing ready now: {} node(s) held by others or scheduled may still make work \
             ready; call claim_next again with wait to wait for it.",
            p["pending"].as_array().map_or(0, Vec::len)
        ),
        None => "nothing: no node is ready".to_string(),
    }
}

/// What a claim tells the agent in words: the node, the generation to keep, and how often
/// to renew.
fn lease_text(verb: &str, reply: &Value) -> Option<String> {
    if verb != "claim" && verb != "claim_next" {
        return None;
    }
    let lines: Vec<String> = match reply {
        Value::Array(all) => all.iter().filter_map(one_lease).collect(),
        c => one_lease(c).into_iter().collect(),
    };
    (!lines.is_empty()).then(|| lines.join("\n"))
}

fn one_lease(c: &Value) -> Option<String> {
    let (id, generation, ttl) = (
        c["id"].as_str()?,
        c["generation"].as_u64()?,
        c["ttl_ms"].as_u64()?,
    );
    Some(format!(
        "Claimed node {id} at generation {generation} (keep it for renew and complete). Its \
         lease is {}: renew about every {} while you work.",
        crate::duration::format_ms(ttl),
        crate::duration::format_ms((ttl / 3).max(1))
    ))
}

fn stop_text(verb: &str, reply: &Value) -> Option<String> {
    if verb != "renew" {
        return None;
    }
    let renewed = serde_json::from_value::<verbs::Renewed>(reply.clone()).ok()?;
    let c = renewed.cancel_requested?;
    let by =
        c.by.map_or_else(|| "someone who gave no actor".into(), |a| a.hex());
    let why = c.reason.as_deref().map_or_else(
        || "no reason given".into(),
        |r| verbs::text::one_line(r.trim_end_matches('.')),
    );
    Some(format!(
        "Cancel requested by {by} at {}: {why}. Stop working on node {} now and call \
         complete with status cancelled (or finish it if it is already done).",
        verbs::text::iso_time(c.at),
        renewed.id
    ))
}

/// A refused call's result: the error body as structured content, and serialised as the
/// text (`{"error": {"code", "message", ...}}`, as the CLI writes it with `--json`), for the
/// clients that give their model only the text.
fn refusal(e: &crate::Error) -> CallToolResult {
    let mut r = CallToolResult::structured_error(verbs::error_body(e));
    r.content = vec![ContentBlock::text(verbs::error_json(e).to_string())];
    r
}

/// The methods of MCP a client calls with params: a request of one of them that rmcp could
/// not read is a malformed call (-32602), not an unknown method.
const METHODS_WITH_PARAMS: &[&str] = &[
    "initialize",
    "tools/call",
    "tools/list",
    "prompts/get",
    "prompts/list",
    "resources/read",
    "resources/list",
    "resources/templates/list",
    "resources/subscribe",
    "resources/unsubscribe",
    "completion/complete",
    "logging/setLevel",
];

/// What the server tells a planner: how to shape the work and decide it.
const PLANNER: &str = "claimdag: a shared DAG of work that many agents claim as leases. \
To plan: upsert nodes (the same summary, kind and parent is the same node), link a node to \
those it waits on, import a whole plan at once; give a node kind gate for a person's \
sign-off (approve or reject it with its generation), kind epic to group nodes under it \
(parent), a deadline and a budget where they matter. Read with list, show, ready and log; \
cancel or reopen what changed; retry a parked node. Your actor and workspace are bound by \
the server: leave actor, assignee and workspace out.";

/// What the server tells a worker (and the `all` profile).
const INSTRUCTIONS: &str = "claimdag: a shared DAG of work that many agents claim as leases. \
To work: claim_next (keep the generation it returns; its progress is where an earlier holder \
stopped, its inputs the outputs of the nodes this one waits on), renew while you work (with \
progress to leave a checkpoint), complete with status done or failed, that generation and \
your output. When renew says a cancel was requested, stop and complete with status \
cancelled. A stale_generation error means your lease ran out \
and the node is someone else's now: drop your result. Your actor and workspace are bound by \
the server: leave actor, assignee and workspace out (a call naming others is refused).";

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_prompts()
                .enable_resources()
                .build(),
        )
        .with_server_info(Implementation::new("claimdag", env!("CARGO_PKG_VERSION")))
        .with_instructions(match self.fixed.as_ref().map(|b| b.profile) {
            Some(Profile::Planner) => PLANNER,
            _ => INSTRUCTIONS,
        })
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> std::result::Result<ListToolsResult, McpError> {
        let b = self.binding(&context)?;
        let tools = self.tools.iter().filter(|t| b.offers(&t.name));
        Ok(ListToolsResult::with_all_items(tools.cloned().collect()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> std::result::Result<CallToolResponse, McpError> {
        let name = request.name.to_string();
        let b = self.binding(&context)?;
        if !b.offers(&name) {
            return Err(McpError::invalid_params(
                format!("unknown tool {name:?}: tools/list names the tools this server offers"),
                None,
            ));
        }
        let args = request.arguments.map(Value::Object).unwrap_or(Value::Null);
        if name != "claim_next" || args.get("wait").is_none_or(Value::is_null) {
            return Ok(self.run(&b, name, args).await.into());
        }
        let ct = context.ct.clone();
        let ran = self.run_until(&b, name, args, Some(Box::new(move || ct.is_cancelled())));
        let r = match context.meta.get_progress_token() {
            Some(token) => with_progress(ran, &context.peer, token).await,
            None => ran.await,
        };
        Ok(self.unless_cancelled(&b, r, &context).await.into())
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> std::result::Result<CustomResult, McpError> {
        let method = request.method.as_str();
        if !METHODS_WITH_PARAMS.contains(&method) {
            return Err(McpError::new(
                ErrorCode::METHOD_NOT_FOUND,
                method.to_string(),
                None,
            ));
        }
        let why = match method {
            "tools/call" => {
                let params = request.params.unwrap_or(Value::Null);
                match serde_json::from_value::<CallToolRequestParams>(params) {
                    Err(e) => format!(
                        "tools/call: malformed params ({e}): they are {{\"name\": TOOL, \
                         \"arguments\": {{...}}}}, the arguments an object"
                    ),
                    Ok(_) => "tools/call: malformed params".to_string(),
                }
            }
            m => format!("{m}: malformed params"),
        };
        Err(McpError::invalid_params(why, None))
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> std::result::Result<ListPromptsResult, McpError> {
        let role = PromptArgument::new("role")
            .with_description("Take only nodes of this role (and of none)")
            .with_required(false);
        Ok(ListPromptsResult::with_all_items(vec![
            Prompt::new(
                "work-next",
                Some("Take the next node of work and do it, holding the claim as a lease"),
                Some(vec![role]),
            ),
            Prompt::new(
                "sweep-stale",
                Some("Find claims whose lease ran out or that went quiet, and hand them back"),
                None::<Vec<PromptArgument>>,
            ),
        ]))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> std::result::Result<GetPromptResponse, McpError> {
        let role = request
            .arguments
            .as_ref()
            .and_then(|a| a.get("role"))
            .and_then(Value::as_str)
            .map(|r| format!(" with role {r:?}"))
            .unwrap_or_default();
        let text = match request.name.as_str() {
            "work-next" => format!(
                "Call claim_next{role} (with resume=true if you may already hold a claim). If it \
                 returns nothing, there is no ready work: stop. Otherwise note the id and the \
                 generation, read the node with show, and do the work its summary describes. \
                 Its progress (if any) is where an earlier holder stopped, its inputs what \
                 the nodes it waits on produced. While you work, call renew with that \
                 generation about every third of the lease, with progress saying where you \
                 are. If renew says a cancel was requested, stop and call complete with status \
                 cancelled. When done, call complete with status done (or failed), the same \
                 generation and your result as output. \
                 If any call answers stale_generation, your lease was lost: stop, drop your \
                 result, and do not retry the completion."
            ),
            "sweep-stale" => "Call list with status expired to see claims whose lease ran out, \
                 and list with status claimed to see live ones with their renewed_at. Call reclaim \
                 to hand back every expired claim; call reclaim with a lease (say \"30m\") only if \
                 you know workers renew more often than that. Report which nodes were handed back \
                 and their new generations."
                .to_string(),
            other => {
                return Err(McpError::invalid_params(
                    format!("unknown prompt {other:?}: the prompts are work-next and sweep-stale"),
                    None,
                ))
            }
        };
        Ok(GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)]).into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> std::result::Result<ListResourcesResult, McpError> {
        Ok(ListResourcesResult::with_all_items(vec![Resource::new(
            "claimdag://graph",
            "graph",
        )
        .with_description("The DAG of the workspace in Mermaid, critical path in red")
        .with_mime_type("text/vnd.mermaid")]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> std::result::Result<ReadResourceResponse, McpError> {
        let b = self.binding(&context)?;
        if request.uri != "claimdag://graph" {
            return Err(McpError::invalid_params(
                format!(
                    "unknown resource {:?}: the resource is claimdag://graph",
                    request.uri
                ),
                None,
            ));
        }
        let r = self
            .run(
                &b,
                "graph".into(),
                json!({"format": "mermaid", "all": true}),
            )
            .await;
        let text = r
            .structured_content
            .as_ref()
            .and_then(|v| v.get("graph").or(v.get("message")))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        Ok(ReadResourceResult::new(vec![
            ResourceContents::text(text, request.uri).with_mime_type("text/vnd.mermaid")
        ])
        .into())
    }
}

/// Serves the store on stdin/stdout until the client closes stdin.
/// Serves the MCP tools over stdio until the client closes it; `started` runs once the
/// server is set up (a refused setup changes nothing).
pub fn serve(store: Store, setup: Setup, started: impl FnOnce()) -> Result<()> {
    let server = Server::new(store, setup)?;
    started();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| crate::Error::Internal(format!("cannot start the MCP runtime: {e}")))?;
    rt.block_on(async move {
        let running = server
            .serve(stdio::Stdio::new())
            .await
            .map_err(|e| crate::Error::Internal(format!("MCP: {e}")))?;
        let _ = running.waiting().await;
        Ok(())
    })
}
