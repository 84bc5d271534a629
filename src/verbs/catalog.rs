//! The verbs as a door offers them to a client: what each is for and its hints (read-only,
//! destructive, idempotent). The MCP server's tools and the HTTP API's operations are these.

/// One verb as a front door offers it: when to use it, and its hints.
#[derive(Debug, Clone, Copy)]
pub struct About {
    pub verb: &'static str,
    /// What it is for, in one or two sentences, to an agent or a client.
    pub about: &'static str,
    /// It changes nothing.
    pub read_only: bool,
    /// It may end or remove something (a claim, a link, a node).
    pub destructive: bool,
    /// Repeating it changes nothing more.
    pub idempotent: bool,
}

const fn spec(
    verb: &'static str,
    about: &'static str,
    read_only: bool,
    destructive: bool,
    idempotent: bool,
) -> About {
    About {
        verb,
        about,
        read_only,
        destructive,
        idempotent,
    }
}

/// Every verb a door offers a client (the MCP tools, the HTTP API), in the order they are
/// listed: everything but `copy`.
pub const CATALOG: &[About] = &[
    spec("claim_next", "Take the ready node with the longest critical path (returns id and generation: keep the generation). resume=true after a restart gets back a claim you hold. wait=N: wait up to N seconds for work instead of calling again", false, false, false),
    spec("ready", "See which nodes are ready, in the order claim_next would take them.", true, false, true),
    spec("show", "Read every field of one node, and why it is not ready.", true, false, true),
    spec("renew", "Keep your claim alive while you work (about every third of its ttl), with your generation; progress leaves a checkpoint for whoever takes the node next. If it says a cancel was requested, stop.", false, false, true),
    spec("complete", "Finish your claimed node: status done or failed, with the generation your claim returned; output (any JSON) goes to the nodes that depend on it.", false, true, false),
    spec("release", "Hand your claim back so another worker can try, with your generation; retry_in (say \"5m\") keeps it from being taken again before then.", false, true, false),
    spec("log", "Read the history of a node (or of the store): every claim, hand-back and completion.", true, false, true),
    spec("upsert", "Create a node of work (or update the one with the same summary, kind and parent); returns its id. not_before (RFC 3339, or \"+2h\") schedules it for later.", false, false, true),
    spec("link", "Make child wait on parent (hard: parent must be done; soft: parent must finish).", false, false, true),
    spec("unlink", "Remove the link that makes child wait on parent.", false, true, true),
    spec("import", "Create a whole plan of nodes and links in one atomic write; safe to repeat.", false, false, true),
    spec("list", "List nodes by status (ready, claimed, expired, done, ...), holder, or everything.", true, false, true),
    spec("graph", "Draw the DAG in Mermaid or dot, critical path in red.", true, false, true),
    spec("archive", "Move finished nodes out of the live DAG.", false, true, true),
    spec("unarchive", "Bring an archived node back.", false, false, false),
    spec("check", "Verify the store's invariants.", true, false, true),
    spec("claim", "Claim one named node (use claim_next to let the store pick).", false, false, false),
    spec("cancel", "Cancel a node: a todo node is cancelled at once; the holder of a claimed one is asked to stop (it learns it at its next renew), with your reason.", false, true, false),
    spec("complete_many", "Finish several of your claimed nodes in one write: all of them, or none when one is refused.", false, true, false),
    spec("next", "Which node claim_next would take, without claiming it.", true, false, true),
    spec("reclaim", "Hand back expired claims, or (with lease) claims quiet that long: frees work of stalled workers.", false, true, false),
    spec("reopen", "Put a finished node back to todo.", false, true, false),
    spec("config", "Read the store's settings (default_ttl, max_held, max_attempts), or change one.", false, true, true),
    spec("diff_check", "Before you commit: list the files changed in git (the server's work tree, or repo) that none of your live claims covers through its resources.", true, false, true),
    spec("actor", "The actor id a name stands for (name:NAME is accepted wherever an actor is).", true, false, true),
];
