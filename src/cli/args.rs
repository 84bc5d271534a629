//! The command line: global options and one subcommand per verb, each with an example.

use clap::{Args, Parser, Subcommand};
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

#[derive(Subcommand, Debug)]
pub enum Verb {
    /// Create a node, or merge fields into the node with the same identity; prints its id
    #[command(
        after_help = "Example:\n  claimdag upsert --summary \"parse the manifest header\" --priority 2 --label parser\n\nThe id is minted from workspace, kind, parent and summary: upserting the same\nfields again returns the same id and merges role, priority, estimate, labels,\nresources, ref and max-attempts (unless the node is finished)."
    )]
    Upsert(UpsertArgs),
    /// Make CHILD wait on PARENT (hard: PARENT must be done; --soft: PARENT must finish)
    #[command(
        after_help = "Example:\n  claimdag link 092dca29 71368334\n  claimdag link --soft 092dca29... 71368334..."
    )]
    Link {
        /// Satisfied when PARENT ends in any status, not only done
        #[arg(long)]
        soft: bool,
        parent: String,
        child: String,
    },
    /// Remove the link that makes CHILD wait on PARENT
    #[command(after_help = "Example:\n  claimdag unlink 092dca29 71368334")]
    Unlink { parent: String, child: String },
    /// List live unfinished nodes in creation order
    #[command(
        after_help = "Example:\n  claimdag list --status ready\n  claimdag list --terminal\n\nColumns: id prefix, display status, kind, generation, summary."
    )]
    List(ListArgs),
    /// Show every field of a node, and why it is not ready
    #[command(alias = "get", after_help = "Example:\n  claimdag show 092dca29")]
    Show { node: String },
    /// Claim a ready node for ASSIGNEE; prints the new generation (the fencing token)
    #[command(
        after_help = "Example:\n  claimdag claim 092dca29 --assignee $(printf '%032x' 7) --ttl 10m"
    )]
    Claim {
        node: String,
        /// The claiming actor: 32 hex characters
        #[arg(long, value_name = "ACTOR")]
        assignee: String,
        /// Claim only if the node is at this generation
        #[arg(long, value_name = "G")]
        gen: Option<u64>,
        /// Lease length (ms, s, m, h, d; bare number = seconds) [default: the store's default_ttl]
        #[arg(long, value_name = "DUR")]
        ttl: Option<String>,
    },
    /// Keep a live claim alive (its lease restarts now)
    #[command(
        after_help = "Example:\n  claimdag renew 092dca29 --actor $(printf '%032x' 7) --gen 2"
    )]
    Renew {
        node: String,
        #[arg(long, value_name = "ACTOR")]
        actor: String,
        /// Renew only at this generation
        #[arg(long, value_name = "G")]
        gen: Option<u64>,
        /// Replace the lease length
        #[arg(long, value_name = "DUR")]
        ttl: Option<String>,
    },
    /// Hand a live claim back; prints the new generation
    #[command(
        after_help = "Example:\n  claimdag release 092dca29 --actor $(printf '%032x' 7) --gen 2"
    )]
    Release {
        node: String,
        #[arg(long, value_name = "ACTOR")]
        actor: String,
        #[arg(long, value_name = "G")]
        gen: u64,
    },
    /// Hand back expired claims, and with --lease claims quiet that long; prints each
    #[command(
        after_help = "Example:\n  claimdag reclaim\n  claimdag reclaim --lease 60     # also claims not renewed for 60 s\n  claimdag reclaim --lease 0      # every claim"
    )]
    Reclaim {
        /// Also hand back claims not renewed for this long
        #[arg(long, value_name = "DUR")]
        lease: Option<String>,
    },
    /// Finish a claimed node at the generation you were granted
    #[command(
        after_help = "Example:\n  claimdag complete 092dca29 --status done --gen 2 --note \"merged\"\n\nA todo node may be cancelled at its current generation without a claim."
    )]
    Complete {
        node: String,
        /// done, failed or cancelled
        #[arg(long, value_name = "STATUS")]
        status: String,
        /// The generation your claim was granted
        #[arg(long, value_name = "G")]
        gen: u64,
        /// Refuse unless this actor is the holder
        #[arg(long, value_name = "ACTOR")]
        actor: Option<String>,
        #[arg(long, value_name = "TEXT")]
        note: Option<String>,
    },
    /// Put a finished node back to todo; prints the new generation
    #[command(after_help = "Example:\n  claimdag reopen 092dca29 --gen 2")]
    Reopen {
        node: String,
        #[arg(long, value_name = "G")]
        gen: Option<u64>,
    },
    /// Print the id of the ready node to work on next (exit 1 when none)
    #[command(
        after_help = "Example:\n  claimdag next --role reviewer\n\nPicks the longest critical path, then higher priority, then the exact role,\nthen the older node. Without --role only nodes with no role are offered."
    )]
    Next(PickArgs),
    /// List ready nodes in the order next picks them, with their critical paths
    #[command(after_help = "Example:\n  claimdag ready --role reviewer")]
    Ready(PickArgs),
    /// Pick and claim the next ready node in one step; prints "<id>  gen=<g>" (exit 1 when none)
    #[command(
        name = "claim-next",
        after_help = "Example:\n  claimdag claim-next --assignee $(printf '%032x' 7) --ttl 5m"
    )]
    ClaimNext {
        #[arg(long, value_name = "ACTOR")]
        assignee: String,
        #[arg(long, value_name = "R")]
        role: Option<String>,
        #[arg(long, value_name = "DUR")]
        ttl: Option<String>,
    },
    /// Print the history, oldest first
    #[command(after_help = "Example:\n  claimdag log\n  claimdag log 092dca29")]
    Log { node: Option<String> },
    /// Show or change settings: default_ttl, max_held, max_attempts
    #[command(
        after_help = "Example:\n  claimdag config\n  claimdag config default_ttl 10m\n  claimdag config max_held 0        # no limit\n  claimdag config max_attempts none"
    )]
    Config {
        key: Option<String>,
        value: Option<String>,
    },
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
    Archive {
        nodes: Vec<String>,
        /// Archive finished nodes last updated at least this long ago
        #[arg(long, value_name = "DUR")]
        older_than: Option<String>,
    },
    /// Bring an archived node back into the live state
    #[command(after_help = "Example:\n  claimdag unarchive 092dca29")]
    Unarchive { node: String },
    /// Draw the DAG (Graphviz dot or Mermaid), coloured by status, critical path in red
    #[command(
        after_help = "Example:\n  claimdag graph | dot -Tpng -o dag.png\n  claimdag graph --format mermaid --all\n\nHard links are solid, soft links dashed. Finished nodes are left out unless --all."
    )]
    Graph {
        /// dot or mermaid
        #[arg(long, default_value = "dot", value_name = "FORMAT")]
        format: String,
        /// Include finished nodes
        #[arg(long)]
        all: bool,
    },
    /// Verify the store's files, checksums and DAG invariants (exit 6 on a problem)
    #[command(after_help = "Example:\n  claimdag check")]
    Check,
}

#[derive(Args, Debug)]
pub struct UpsertArgs {
    #[arg(long, value_name = "S")]
    pub summary: String,
    /// 1-32 characters of [a-z0-9_-] [default: task]
    #[arg(long, value_name = "K")]
    pub kind: Option<String>,
    /// Hierarchy only, never a dependency
    #[arg(long, value_name = "ID")]
    pub parent: Option<String>,
    /// Only workers asking for this role get the node
    #[arg(long, value_name = "R")]
    pub role: Option<String>,
    /// Higher first on ties
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub priority: Option<i64>,
    /// Positive size used for critical paths [default: 1]
    #[arg(long, value_name = "N")]
    pub estimate: Option<u64>,
    #[arg(long = "label", value_name = "L")]
    pub labels: Vec<String>,
    /// Something the node touches; overlapping live claims exclude each other
    #[arg(long = "resource", value_name = "R")]
    pub resources: Vec<String>,
    /// An external ticket reference
    #[arg(long = "ref", value_name = "REF")]
    pub ref_: Option<String>,
    #[arg(long, value_name = "N")]
    pub max_attempts: Option<u32>,
}

#[derive(Args, Debug)]
pub struct ListArgs {
    /// A status or display word: todo, ready, blocked, claimed, expired, done, failed, cancelled
    #[arg(long, value_name = "S")]
    pub status: Option<String>,
    /// Only nodes held by this actor
    #[arg(long, value_name = "ACTOR")]
    pub holder: Option<String>,
    /// Include finished nodes
    #[arg(long)]
    pub terminal: bool,
    /// Show archived nodes (instead of live ones)
    #[arg(long)]
    pub archived: bool,
    /// Everything: live, finished and archived
    #[arg(long)]
    pub all: bool,
}

#[derive(Args, Debug)]
pub struct PickArgs {
    /// Consider nodes of this role or of no role
    #[arg(long, value_name = "R")]
    pub role: Option<String>,
}
