//! The command line: global options and one subcommand per verb, each with an example.
//!
//! The doc comments below are the command's `--help` text (clap reads them), written for a
//! terminal: `<id>` there is a placeholder, not HTML.
#![allow(rustdoc::invalid_html_tags)]

use crate::verbs;
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
    pub verb: Verb,
}

/// The verbs. Each subcommand's arguments are added only when it is the one run (or its
/// help is asked for): building every verb's arguments for each process would cost more
/// than a `show` does.
#[derive(Subcommand, Debug)]
#[command(defer = true)]
pub enum Verb {
    /// Create a node, or merge fields into the node with the same identity; prints its id
    #[command(
        after_help = "Example:\n  claimdag upsert --summary \"parse the manifest header\" --priority 2 --label parser\n  claimdag upsert --summary \"nightly rebuild\" --not-before 2026-12-04T02:00:00Z\n  claimdag upsert --summary \"retry the upload\" --not-before +10m\n\nThe id is minted from workspace, kind, parent and summary: upserting the same\nfields again returns the same id and merges role, priority, estimate, labels,\nresources, ref, max-attempts and not-before (unless the node is finished).\nA node with a not-before still to come shows as scheduled and is not granted."
    )]
    Upsert(Described<verbs::Upsert>),
    /// Make CHILD wait on PARENT (hard: PARENT must be done; --soft: PARENT must finish)
    #[command(
        after_help = "Example:\n  claimdag link 092dca29 71368334\n  claimdag link --soft 092dca29... 71368334...\n\nLinking twice is a no-op."
    )]
    Link(Described<verbs::Link>),
    /// Remove the link that makes CHILD wait on PARENT (a link that is not there: no-op)
    #[command(after_help = "Example:\n  claimdag unlink 092dca29 71368334")]
    Unlink(Described<verbs::Unlink>),
    /// List live unfinished nodes in creation order
    #[command(
        after_help = "Example:\n  claimdag list --status ready\n  claimdag list --terminal\n  claimdag list --holder name:codex-1\n\nColumns: id prefix, display status, kind, generation, summary."
    )]
    List(Described<verbs::List>),
    /// Show every field of a node, and why it is not ready
    #[command(alias = "get", after_help = "Example:\n  claimdag show 092dca29")]
    Show(Described<verbs::Show>),
    /// Claim a ready node for ASSIGNEE; prints the new generation (the fencing token)
    #[command(
        after_help = "Example:\n  claimdag claim 092dca29 --assignee $(printf '%032x' 7) --ttl 10m\n  claimdag claim 092dca29 --assignee name:codex-1"
    )]
    Claim(Described<verbs::Claim>),
    /// Keep a live claim alive (its lease restarts now)
    #[command(
        after_help = "Example:\n  claimdag renew 092dca29 --actor $(printf '%032x' 7) --gen 2\n  claimdag renew 092dca29 --actor name:w1 --gen 2 --progress \"3 of 7 files ported\"\n\nWith --progress, the text is kept as the node's checkpoint: if this holder stops,\nthe next one receives it in its claim. When a cancel was requested, renew prints\n\"cancel requested ...\": stop and complete the node cancelled (or finish it)."
    )]
    Renew(Described<verbs::Renew>),
    /// Hand a live claim back; prints the new generation
    #[command(
        after_help = "Example:\n  claimdag release 092dca29 --actor $(printf '%032x' 7) --gen 2\n  claimdag release 092dca29 --actor name:w1 --gen 2 --retry-in 5m\n\nThe node is ready again at once, or after the store's backoff (config\nretry_delay), or with --retry-in after that long."
    )]
    Release(Described<verbs::Release>),
    /// Hand back expired claims, and with --lease claims quiet that long; prints each
    #[command(
        after_help = "Example:\n  claimdag reclaim\n  claimdag reclaim --lease 60     # also claims not renewed for 60 s\n  claimdag reclaim --lease 0      # every claim"
    )]
    Reclaim(Described<verbs::Reclaim>),
    /// Finish a claimed node at the generation you were granted
    #[command(
        after_help = "Example:\n  claimdag complete 092dca29 --status done --gen 2 --note \"merged\"\n  claimdag complete 092dca29 --status done --gen 2 --output '{\"tables\": 12}'\n\nA todo node may be cancelled at its current generation without a claim.\nWith --output, the JSON value is stored and handed to the nodes that depend on\nthis one, as inputs in their claims."
    )]
    Complete(Described<CompleteArgs>),
    /// Finish several claims in one write: all of them, or none
    #[command(
        name = "complete-many",
        after_help = "Example:\n  claimdag complete-many done.json\n  echo '[{\"node\": \"092dca29\", \"status\": \"done\", \"gen\": 2},\n        {\"node\": \"71368334\", \"status\": \"failed\", \"gen\": 4, \"note\": \"timeout\"}]' |\n    claimdag complete-many -\n\nThe file is a JSON list of completions as complete takes them (node, status,\ngen, and optionally actor, note, output), or {\"completions\": [...]}. One\nrefusal (a stale generation, a node not held) refuses the whole write and\nnothing changes. Prints \"<8 chars>...  <status>\" per node, in order."
    )]
    CompleteMany {
        /// The completions file, or - for standard input
        file: String,
    },
    /// Cancel a node: a todo node now; a claimed one's holder is asked to stop
    #[command(
        after_help = "Example:\n  claimdag cancel 092dca29 --reason \"wrong approach: the parser is being replaced\"\n  claimdag cancel 092dca29 --actor name:lead --gen 3\n\nA todo node becomes cancelled. For a claimed node, the holder is asked to stop:\nit learns it at its next renew (claimdag work stops its command and completes\nthe node cancelled). A finished node is refused (terminal). Prints\n\"<8 chars>...  cancelled\" or \"<8 chars>...  cancel requested\"."
    )]
    Cancel(Described<verbs::Cancel>),
    /// Put a finished node back to todo; prints the new generation
    #[command(after_help = "Example:\n  claimdag reopen 092dca29 --gen 2")]
    Reopen(Described<verbs::Reopen>),
    /// Print the id of the ready node to work on next (exit 1 when none)
    #[command(
        after_help = "Example:\n  claimdag next --role reviewer\n\nPicks the longest critical path, then higher priority, then the exact role,\nthen the older node. Without --role only nodes with no role are offered."
    )]
    Next(Described<verbs::Next>),
    /// List ready nodes in the order next picks them, with their critical paths
    #[command(after_help = "Example:\n  claimdag ready --role reviewer")]
    Ready(Described<verbs::Ready>),
    /// Pick and claim the next ready node in one step; prints "<id>  gen=<g>" (exit 1 when none)
    #[command(
        name = "claim-next",
        after_help = "Example:\n  claimdag claim-next --assignee $(printf '%032x' 7) --ttl 5m\n  CLAIMDAG_ACTOR=name:codex-1 claimdag claim-next --resume\n\nThe assignee defaults to $CLAIMDAG_ACTOR. With --resume, an actor that already\nholds a live claim in the workspace gets that claim back (id and generation)\ninstead of a second one or assignee_busy.\n\nWith --wait DUR, when nothing is ready it waits up to DUR for a node to become\nready (another process's write, a lease running out, a scheduled time passing)\nand claims it; nothing by then exits 1. A waiting process uses no CPU:\n  claimdag claim-next --assignee name:w1 --wait 10m\n\nWith --count N, up to N ready nodes are claimed in one write, in pick order, one\nline each (max_held counts each claim):\n  claimdag config max_held 0 && claimdag claim-next --assignee name:w1 --count 10"
    )]
    ClaimNext(Described<verbs::ClaimNext>),
    /// Print the history, oldest first
    #[command(
        after_help = "Example:\n  claimdag log\n  claimdag log 092dca29\n  claimdag log --since 42   # only the writes after write 42\n  claimdag log --all        # the archived history too (config history_keep)"
    )]
    Log(Described<verbs::Log>),
    /// Follow the history: print every write's events as it is committed, until interrupted
    #[command(
        after_help = "Example:\n  claimdag watch\n  claimdag watch --json | jq -c 'select(.verb == \"complete\")'\n  claimdag watch --since 0   # the whole history first, then what comes\n\nLines are those of claimdag log (JSON lines with --json), printed as each write\nof any process commits. It ends quietly when its reader goes away."
    )]
    Watch(Described<verbs::Watch>),
    /// Show or change settings: default_ttl, max_held, max_attempts, retry_delay,
    /// retry_delay_max, history_keep
    #[command(
        after_help = "Example:\n  claimdag config\n  claimdag config default_ttl 10m\n  claimdag config max_held 0        # no limit\n  claimdag config max_attempts none\n  claimdag config retry_delay 30s   # a handed-back node waits 30s, 1m, 2m, ...\n  claimdag config retry_delay_max 1h\n  claimdag config history_keep 7d   # older history moves to the archive (log --all)"
    )]
    Config(Described<verbs::Config>),
    /// Create or merge every node of a JSON plan, with its links, as one atomic write
    #[command(
        after_help = "Example:\n  claimdag import plan.json\n  cat plan.json | claimdag import -\n\nThe plan: {\"nodes\": [{\"key\": \"parse\", \"summary\": \"parse the header\"},\n                     {\"key\": \"reject\", \"summary\": \"reject bad input\", \"deps\": [\"parse\"]}]}\nEach node may also give kind, parent, soft_deps, role, priority, estimate, labels,\nresources, ref and max_attempts. parent and deps name a key of the plan or an\nexisting id. Importing the same plan again changes nothing. Prints \"<id>  <key>\"\nper node in plan order."
    )]
    Import {
        /// The plan file, or - for standard input
        file: String,
    },
    /// Move finished nodes out of the live state into the archive
    #[command(
        after_help = "Example:\n  claimdag archive 092dca29\n  claimdag archive --older-than 7d\n  claimdag archive                  # every finished node of the workspace\n\nA node waiting on an archived node sees how it ended. list --archived, show and\nlog still find archived nodes; unarchive brings one back."
    )]
    Archive(Described<verbs::Archive>),
    /// Bring an archived node back into the live state
    #[command(after_help = "Example:\n  claimdag unarchive 092dca29")]
    Unarchive(Described<verbs::Unarchive>),
    /// Draw the DAG (Graphviz dot or Mermaid), coloured by status, critical path in red
    #[command(
        after_help = "Example:\n  claimdag graph | dot -Tpng -o dag.png\n  claimdag graph --format mermaid --all\n\nHard links are solid, soft links dashed. Finished nodes are left out unless --all."
    )]
    Graph(Described<verbs::Graph>),
    /// Verify the store's files, checksums and DAG invariants (exit 6 on a problem)
    #[command(after_help = "Example:\n  claimdag check")]
    Check(Described<verbs::Check>),
    /// Print the actor a name stands for (name:NAME is taken wherever an actor is)
    #[command(
        after_help = "Example:\n  claimdag actor codex-1\n  claimdag claim 092dca29 --assignee name:codex-1   # the same actor\n\nThe actor is the first 16 bytes of SHA-256 over \"claimdag-actor-v1\" and NAME,\neach written as its byte length (8 bytes, big endian) and its bytes."
    )]
    Actor(Described<verbs::ActorOf>),
    /// Copy a whole store (history and archive included) into a new one, between backends
    #[command(
        after_help = "Example:\n  claimdag copy --from ~/.local/state/claimdag --to postgres://ci@db/claims\n  claimdag copy --from 'postgres://ci@db/claims?schema=team_a' --to /tmp/backup\n\nThe destination must be a new store (never written). Generations, history, the\narchive and the settings move as they are; run claimdag check on the copy."
    )]
    Copy(Described<verbs::Copy>),
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
    /// List files changed in git that no live claim of the actor covers (exit 1 when some)
    #[command(
        name = "diff-check",
        after_help = "Examples:\n  claimdag diff-check --actor name:codex-1                 # the work tree against HEAD\n  claimdag diff-check --base origin/main --head HEAD --json  # a branch, in CI\n\nA claim covers a path through its resources: a resource equal to the path, or\nending in / and a prefix of it (src/parser/ covers src/parser/x.rs). A submodule\nor an untracked nested repository is its directory (vendor/lib/), covered only\nby a resource covering all of it. A renamed file needs its old and new paths\ncovered; an expired claim covers nothing. Without --head the work tree counts:\nstaged, unstaged and untracked (not ignored) files. The actor defaults to\n$CLAIMDAG_ACTOR. Exit 0 when every change is covered, 1 with the uncovered paths\nlisted."
    )]
    DiffCheck(Described<verbs::DiffCheck>),
    /// A live terminal view of the DAG: who holds what, leases running out, what is
    /// blocked and why; keys claim, renew, release and complete with the current generation
    #[command(after_help = PANE_HELP)]
    Pane(Described<PaneArgs>),
}

/// `complete`'s arguments: the request, with `--output` kept as the text given until the
/// verb runs, so that text that is not JSON is `invalid_input` like any other bad argument
/// (the JSON error body under `--json`), not a usage error of the parser's.
#[derive(clap::Args, Debug)]
pub struct CompleteArgs {
    #[command(flatten)]
    pub request: verbs::Complete,
    /// What the node produced: any JSON value (at most 64 KiB serialised). Its dependents
    /// receive it as an input when they are claimed.
    #[arg(long, value_name = "JSON")]
    pub output: Option<String>,
}

impl CompleteArgs {
    /// The request, its output read.
    pub fn request(&self) -> crate::Result<verbs::Complete> {
        let mut r = self.request.clone();
        r.output = self
            .output
            .as_deref()
            .map(verbs::parse_json_arg)
            .transpose()?;
        Ok(r)
    }
}

/// A verb's arguments under the description its variant gives: the arguments' own
/// documentation (written for the verb layer and the MCP tools) would otherwise replace it
/// when they are added, which with `defer` is after the variant's attributes.
#[derive(Debug)]
pub struct Described<T>(pub T);

impl<T: clap::FromArgMatches> clap::FromArgMatches for Described<T> {
    fn from_arg_matches(m: &clap::ArgMatches) -> Result<Self, clap::Error> {
        T::from_arg_matches(m).map(Described)
    }

    fn update_from_arg_matches(&mut self, m: &clap::ArgMatches) -> Result<(), clap::Error> {
        self.0.update_from_arg_matches(m)
    }
}

impl<T: clap::Args> clap::Args for Described<T> {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        keep_about(cmd, T::augment_args)
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        keep_about(cmd, T::augment_args_for_update)
    }
}

/// `add` applied to `cmd`, with `cmd`'s about and long about as they were.
fn keep_about(cmd: clap::Command, add: fn(clap::Command) -> clap::Command) -> clap::Command {
    use clap::builder::Resettable;
    let kept = |s: Option<&clap::builder::StyledStr>| {
        s.cloned().map_or(Resettable::Reset, Resettable::Value)
    };
    let (about, long) = (kept(cmd.get_about()), kept(cmd.get_long_about()));
    add(cmd).about(about).long_about(long)
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Profile {
    /// What a worker agent needs: find work, hold it, finish it.
    Worker,
    /// What a planning agent needs: shape the DAG and look at it.
    Planner,
    /// Every verb.
    All,
}

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
its path printed. The dashboard is opened through the link the server prints
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
