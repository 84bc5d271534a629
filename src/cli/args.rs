//! The command line: global options and one subcommand per verb, each with an example.
//!
//! The doc comments below are the command's `--help` text (clap reads them), written for a
//! terminal: `<id>` there is a placeholder, not HTML.
#![allow(rustdoc::invalid_html_tags)]

use crate::verbs::{self, Described};
use clap::{Parser, Subcommand};
use std::path::PathBuf;

const ABOUT: &str =
    "A shared DAG of work nodes that workers claim as leases, fenced by generations.";

const EXAMPLES: &str = "\
Examples:
  export CLAIMDAG_DIR=/tmp/demo-claims
  a=$(claimdag upsert --summary \"parse the manifest header\")
  b=$(claimdag upsert --summary \"reject a manifest with no header\" --parent $a)
  claimdag link $a $b
  claimdag list
  claimdag claim $a --assignee $(printf '%032x' 7)
  claimdag complete $a --status done --gen 2

Exit codes: 0 ok, 1 nothing to pick (next, claim-next) or internal error, 2 bad input or
usage, 3 not found, 4 refused by the node's state, 5 stale generation or not the holder,
6 corrupt store, 7 I/O error.";

#[derive(Parser, Debug)]
#[command(name = "claimdag", version, about = ABOUT, after_help = EXAMPLES)]
pub struct Cli {
    /// Store directory [default: $CLAIMDAG_DIR, else $XDG_STATE_HOME/claimdag, else
    /// ~/.local/state/claimdag]
    #[arg(long, global = true, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Workspace: a namespace inside the store [default: $CLAIMDAG_WORKSPACE, else ""]
    #[arg(long, global = true, value_name = "W")]
    pub workspace: Option<String>,
    /// Print JSON on stdout (and errors as JSON on stderr)
    #[arg(long, global = true)]
    pub json: bool,
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands: every verb (each added only when it is the one run, or its help is
/// asked for: building every verb's arguments for each process would cost more than a
/// `show` does), then the front doors that are not one verb.
#[derive(Subcommand, Debug)]
#[command(defer = true)]
pub enum Command {
    #[command(flatten)]
    Verb(verbs::Command),
    /// Follow the history: print every write's events as it is committed, until interrupted
    #[command(
        after_help = "Example:\n  claimdag watch\n  claimdag watch --json | jq -c 'select(.verb == \"complete\")'\n  claimdag watch --since 0   # the whole history first, then what comes\n\nLines are those of claimdag log (JSON lines with --json), printed as each write\nof any process commits. It ends quietly when its reader goes away."
    )]
    Watch(Described<verbs::Watch>),
    /// Serve the store to agents over the Model Context Protocol (stdio)
    #[command(
        after_help = "Example, in an MCP client's configuration:\n  {\"mcpServers\": {\"claimdag\": {\"command\": \"claimdag\",\n     \"args\": [\"mcp\", \"--tools\", \"worker\", \"--actor\", \"name:codex-1\"],\n     \"env\": {\"CLAIMDAG_DIR\": \"/srv/claims\"}}}}\n\nThe tools are the verbs, with their JSON schemas; a refusal is a tool result\nwith isError and the error body (code, message, holder, generation), also as its\ntext. The server acts as the actor given here (else $CLAIMDAG_ACTOR) and in its\nworkspace only: a call naming another is refused, and a node of another\nworkspace answers not_found; the worker profile ends only\nthe claims it holds. diff_check runs git under the working directory only\n(and --allow-repo DIRs). The server ends when the client closes stdin.\n\nclaim_next with wait=N waits up to N seconds for work (a write of anyone, a\nclaim running out, a scheduled time passing) instead of answering none, at most\n--max-wait (default 30s):\n  claimdag mcp --tools worker --max-wait 2m\nWhile it waits the server answers other calls, and a client that sent a\nprogressToken gets a progress notification every few seconds."
    )]
    Mcp(Described<McpArgs>),
    /// Serve the store over HTTP: the verbs as a JSON API (POST /v1/VERB)
    #[command(after_help = SERVE_HELP)]
    Serve(Described<ServeArgs>),
    /// Run a command under a claim, node after node: the lease renews itself, the node is
    /// completed with the generation granted, a lost lease stops the command
    #[command(after_help = super::work::HELP)]
    Work(Described<super::work::WorkArgs>),
    /// A live terminal view of the DAG: who holds what, leases running out, what is
    /// blocked and why; keys claim, renew, release and complete with the current generation
    #[command(after_help = PANE_HELP)]
    Pane(Described<PaneArgs>),
}

#[cfg(feature = "pane")]
pub use super::pane::PaneArgs;

/// `claimdag pane` options, in a build without the pane.
#[cfg(not(feature = "pane"))]
#[derive(clap::Args, Debug)]
pub struct PaneArgs {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
    pub rest: Vec<String>,
}

const PANE_HELP: &str = "\
Examples:
  claimdag pane --actor name:lead
  claimdag pane --role reviewer --all
  claimdag pane --dump --width 120        # one frame as text, for scripts

Keys: n claim next, c claim, r renew, l release, d done, f failed, x cancel,
X ask the holder to stop (with a reason), o reopen, a archive, R reclaim expired
(the ones that end or hand back work ask y first); / search, t finished,
A archived, m mine, p role, h holder,
w workspace; ? help, q quit. Every action goes with the generation shown and
as the pane's actor (--actor, else $CLAIMDAG_ACTOR); a refusal is shown on the
message line. The view follows writes by any process within a second.";

/// Which tools an MCP server offers (`--tools`): fewer tools, fewer tokens of descriptions.
pub use crate::store::tokens::Profile;

const SERVE_HELP: &str = "\
Examples:
  claimdag serve                      # http://127.0.0.1:7878/, a token made beside the store
  claimdag serve --listen 0.0.0.0:7878 --token-file /etc/claimdag/token
  tok=$(cat ~/.local/state/claimdag.serve-token)
  curl -s -X POST localhost:7878/v1/upsert -H \"Authorization: Bearer $tok\" \\
       -d '{\"summary\": \"parse the manifest header\"}'
  curl -s -X POST localhost:7878/v1/list -d '{\"status\": \"ready\"}'

POST /v1/VERB takes the JSON the MCP tool of that verb takes and answers the verb's
JSON; a refusal is the error body ({\"error\": {\"code\", \"message\", ...}}) with status 404
(not_found), 409 (refused by the node's state, a stale generation, not the holder),
400 (invalid_input, cycle), 503 (io, corrupt) or 500 (internal). GET
/v1/openapi.json describes every verb. Requests that write need Authorization:
Bearer TOKEN: without --token-file a token is made (mode 0600) beside the store and
its path printed. An agent's own token (claimdag actor token NAME) acts as NAME only, in
its workspace, with its profile's verbs. /mcp serves the MCP tools over Streamable HTTP
with the same tokens. The dashboard is opened through the link the server prints
(/?token=TOKEN: it starts a session; no page carries the token). Listening beyond
loopback needs --token-file, and then reads need the token too. Watch streams and
waiting claim_next calls are bounded by --max-streams (503 past it). copy and
diff_check are not served. The server stops on SIGINT or SIGTERM: waits are answered
at once and grant nothing.";

/// `claimdag serve` options.
#[derive(clap::Args, Debug)]
pub struct ServeArgs {
    /// The address to listen on (beyond loopback only with --token-file)
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:7878")]
    pub listen: std::net::SocketAddr,
    /// The file holding the bearer token (one line, mode 0600) [default: made beside the
    /// store: DIR.serve-token]
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<PathBuf>,
    /// The longest a claim_next call may wait for work (its wait argument is cut to this)
    #[arg(long, value_name = "DUR", default_value = "30s")]
    pub max_wait: verbs::Dur,
    /// The largest request body taken, in bytes
    #[arg(long, value_name = "BYTES", default_value_t = 1 << 20)]
    pub max_body: usize,
    /// The most watch streams and waiting claim_next calls held open at once (a quarter of
    /// them for one client address); past it a new one is answered 503 at once
    #[arg(long, value_name = "N", default_value_t = 1024,
          value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub max_streams: u32,
}

/// `claimdag mcp` options.
#[derive(clap::Args, Debug)]
pub struct McpArgs {
    /// The agent's actor (32 hex or name:NAME) [default: $CLAIMDAG_ACTOR]
    #[arg(long, value_name = "ACTOR")]
    pub actor: Option<String>,
    /// Which tools to offer: worker (ready, claim_next, show, renew, complete, release,
    /// log, diff_check), planner (upsert, link, unlink, import, list, graph, show, ready, archive,
    /// check, cancel), or all (every verb, complete_many included)
    #[arg(long, value_enum, default_value = "all")]
    pub tools: Profile,
    /// A directory (and what is below it) the diff_check tool may also run git in, beside
    /// the working directory the server was started in (repeatable). git runs the commands
    /// a repository's configuration names (core.fsmonitor): allow only trusted ones.
    #[arg(long, value_name = "DIR")]
    pub allow_repo: Vec<std::path::PathBuf>,
    /// The longest a claim_next call may wait for work (its wait argument is cut to this;
    /// 0: never wait). Clients time a request out: keep it under their timeout
    #[arg(long, value_name = "DUR", default_value = "30s")]
    pub max_wait: verbs::Dur,
}

#[cfg(test)]
mod tests {
    /// clap's own checks of every verb's arguments (each process builds only the verb it
    /// runs, so only this test sees them all).
    #[test]
    fn every_verb_passes_clap_checks() {
        <super::Cli as clap::CommandFactory>::command().debug_assert();
    }
}
