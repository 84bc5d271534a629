//! A verb's declaration: what it is for and its hints (read-only, destructive, idempotent),
//! the doors that offer it, and its command line's help. The MCP tools and their profiles,
//! the HTTP API's operations and OpenAPI, and the CLI's subcommands are made from these.

/// One verb as it is declared once, beside its request (`Verb::ABOUT`).
#[derive(Debug, Clone, Copy)]
pub struct About {
    /// The verb's name, as JSON callers spell it (`claim_next`).
    pub verb: &'static str,
    /// Its subcommand, as typed: `claim-next`, or `actor add` for one under another verb's
    /// subcommand (`actor`).
    pub command: &'static str,
    /// What it is for, in one or two sentences, to an agent or a client.
    pub about: &'static str,
    /// It changes nothing.
    pub read_only: bool,
    /// It may end or remove something (a claim, a link, a node).
    pub destructive: bool,
    /// Repeating it changes nothing more.
    pub idempotent: bool,
    /// The doors that offer it to a client beside the command line (none: the CLI only).
    pub doors: &'static [Door],
    /// The subcommand's one line in `claimdag --help`.
    pub summary: &'static str,
    /// What `claimdag VERB --help` adds after the options: examples, and what to know.
    pub help: &'static str,
    /// Other names the subcommand answers to.
    pub aliases: &'static [&'static str],
}

/// A door that offers a verb to clients.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Door {
    /// An MCP tool of every profile (`claimdag mcp --tools all`).
    Mcp,
    /// An MCP tool of the worker profile too (and of `all`).
    Worker,
    /// An MCP tool of the planner profile too (and of `all`).
    Planner,
    /// An operation of the HTTP API (`claimdag serve`).
    Http,
}

impl About {
    /// Whether `door` offers the verb: an MCP profile's tool is a tool of `all` too.
    pub fn offered_by(&self, door: Door) -> bool {
        let mcp = |d: &Door| matches!(d, Door::Mcp | Door::Worker | Door::Planner);
        match door {
            Door::Mcp => self.doors.iter().any(mcp),
            d => self.doors.contains(&d),
        }
    }

    /// Whether a token or MCP server of `profile` offers the verb (its MCP profiles say).
    pub fn in_profile(&self, profile: crate::store::tokens::Profile) -> bool {
        use crate::store::tokens::Profile;
        self.offered_by(match profile {
            Profile::Worker => Door::Worker,
            Profile::Planner => Door::Planner,
            Profile::All => Door::Mcp,
        })
    }

    /// The subcommand's name, and the subcommand it is under (if any).
    pub fn command_path(&self) -> (Option<&'static str>, &'static str) {
        match self.command.split_once(' ') {
            Some((parent, name)) => (Some(parent), name),
            None => (None, self.command),
        }
    }
}
