//! The one error type of the core. Every front door maps it in exactly one place, through
//! [`Error::code`] (the stable codes of SPEC section 4).

use crate::id::Id;
use std::path::{Path, PathBuf};

/// The stable error codes. The numeric values are the C ABI values and are never renumbered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum Code {
    NotFound = 1,
    AlreadyClaimed = 2,
    AssigneeBusy = 3,
    NotReady = 4,
    AttemptsExhausted = 5,
    ResourceConflict = 6,
    NotClaimed = 7,
    Terminal = 8,
    StaleGeneration = 9,
    NotHolder = 10,
    Cycle = 11,
    InvalidInput = 12,
    Corrupt = 13,
    Io = 14,
    Internal = 15,
}

impl Code {
    /// Every code, in numeric order.
    pub const ALL: [Code; 15] = [
        Code::NotFound,
        Code::AlreadyClaimed,
        Code::AssigneeBusy,
        Code::NotReady,
        Code::AttemptsExhausted,
        Code::ResourceConflict,
        Code::NotClaimed,
        Code::Terminal,
        Code::StaleGeneration,
        Code::NotHolder,
        Code::Cycle,
        Code::InvalidInput,
        Code::Corrupt,
        Code::Io,
        Code::Internal,
    ];

    /// The snake_case name used in JSON output (`"code": "not_found"`).
    pub fn as_str(self) -> &'static str {
        match self {
            Code::NotFound => "not_found",
            Code::AlreadyClaimed => "already_claimed",
            Code::AssigneeBusy => "assignee_busy",
            Code::NotReady => "not_ready",
            Code::AttemptsExhausted => "attempts_exhausted",
            Code::ResourceConflict => "resource_conflict",
            Code::NotClaimed => "not_claimed",
            Code::Terminal => "terminal",
            Code::StaleGeneration => "stale_generation",
            Code::NotHolder => "not_holder",
            Code::Cycle => "cycle",
            Code::InvalidInput => "invalid_input",
            Code::Corrupt => "corrupt",
            Code::Io => "io",
            Code::Internal => "internal",
        }
    }

    /// The CLI exit status for this code (SPEC section 4).
    pub fn exit_code(self) -> i32 {
        match self {
            Code::NotFound => 3,
            Code::AlreadyClaimed
            | Code::AssigneeBusy
            | Code::NotReady
            | Code::AttemptsExhausted
            | Code::ResourceConflict
            | Code::NotClaimed
            | Code::Terminal => 4,
            Code::StaleGeneration | Code::NotHolder => 5,
            Code::Cycle | Code::InvalidInput => 2,
            Code::Corrupt => 6,
            Code::Io => 7,
            Code::Internal => 1,
        }
    }
}

/// Everything that can go wrong in claimdag. A refused call never changed anything.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Error {
    #[error("{what} not found")]
    NotFound { what: String, node: Option<Id> },
    #[error("node {node} is already claimed by {holder} at gen={generation}")]
    AlreadyClaimed {
        node: Id,
        holder: Id,
        generation: u64,
    },
    #[error("actor {actor} already holds {} live claim(s) in this workspace (max_held={max_held}): {}; cannot claim node {node}", held.len(), id_list(held))]
    AssigneeBusy {
        node: Id,
        actor: Id,
        /// The nodes the actor holds, oldest claim first.
        held: Vec<Id>,
        max_held: u64,
    },
    #[error("node {node} is not ready: {why}")]
    NotReady { node: Id, why: String },
    #[error("node {node}: attempts exhausted ({attempts} of {max_attempts})")]
    AttemptsExhausted {
        node: Id,
        attempts: u32,
        max_attempts: u32,
    },
    #[error("node {node}: resource {resource:?} overlaps {held:?}, held by {holder} on node {other} at gen={generation}")]
    ResourceConflict {
        node: Id,
        resource: String,
        held: String,
        other: Id,
        holder: Id,
        generation: u64,
    },
    #[error("node {node} is not claimed (status {status})")]
    NotClaimed { node: Id, status: String },
    #[error("node {node} is terminal ({status})")]
    Terminal { node: Id, status: String },
    #[error("stale generation for node {node}: {}, current gen={generation}", given_text(*given))]
    StaleGeneration {
        node: Id,
        given: u64,
        generation: u64,
    },
    #[error("{actor} is not the holder of node {node} (held by {holder} at gen={generation})")]
    NotHolder {
        node: Id,
        actor: Id,
        holder: Id,
        generation: u64,
    },
    #[error("cycle: {detail}")]
    Cycle { node: Id, detail: String },
    #[error("{0}")]
    InvalidInput(String),
    #[error("store is corrupt: {}: {detail}", path.display())]
    Corrupt { path: PathBuf, detail: String },
    #[error("{}: {message}", path.display())]
    Io {
        path: PathBuf,
        message: String,
        errno: Option<i32>,
    },
    #[error("internal error: {0}")]
    Internal(String),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

fn id_list(ids: &[Id]) -> String {
    ids.iter().map(|i| i.hex()).collect::<Vec<_>>().join(", ")
}

/// `given` of a stale generation: 0 when the caller gave none (its claim was handed back).
fn given_text(given: u64) -> String {
    match given {
        0 => "this actor's claim was handed back".to_string(),
        g => format!("given gen={g}"),
    }
}

impl Error {
    pub fn code(&self) -> Code {
        match self {
            Error::NotFound { .. } => Code::NotFound,
            Error::AlreadyClaimed { .. } => Code::AlreadyClaimed,
            Error::AssigneeBusy { .. } => Code::AssigneeBusy,
            Error::NotReady { .. } => Code::NotReady,
            Error::AttemptsExhausted { .. } => Code::AttemptsExhausted,
            Error::ResourceConflict { .. } => Code::ResourceConflict,
            Error::NotClaimed { .. } => Code::NotClaimed,
            Error::Terminal { .. } => Code::Terminal,
            Error::StaleGeneration { .. } => Code::StaleGeneration,
            Error::NotHolder { .. } => Code::NotHolder,
            Error::Cycle { .. } => Code::Cycle,
            Error::InvalidInput(_) => Code::InvalidInput,
            Error::Corrupt { .. } => Code::Corrupt,
            Error::Io { .. } => Code::Io,
            Error::Internal(_) => Code::Internal,
        }
    }

    pub fn invalid(msg: impl Into<String>) -> Error {
        Error::InvalidInput(msg.into())
    }

    /// A link `parent -> child` that would close a cycle.
    pub fn cycle_link(parent: Id, child: Id) -> Error {
        Error::Cycle {
            node: child,
            detail: format!("linking {parent} -> {child} would close a cycle"),
        }
    }

    pub fn node_not_found(id: Id) -> Error {
        Error::NotFound {
            what: format!("node {id}"),
            node: Some(id),
        }
    }

    pub fn io(path: &Path, err: &std::io::Error) -> Error {
        Error::Io {
            path: path.to_path_buf(),
            message: err.to_string(),
            errno: err.raw_os_error(),
        }
    }

    pub fn corrupt(path: &Path, detail: impl Into<String>) -> Error {
        Error::Corrupt {
            path: path.to_path_buf(),
            detail: detail.into(),
        }
    }

    /// The node the error is about, when there is one.
    pub fn node(&self) -> Option<Id> {
        match self {
            Error::NotFound { node, .. } => *node,
            Error::AlreadyClaimed { node, .. }
            | Error::AssigneeBusy { node, .. }
            | Error::NotReady { node, .. }
            | Error::AttemptsExhausted { node, .. }
            | Error::ResourceConflict { node, .. }
            | Error::NotClaimed { node, .. }
            | Error::Terminal { node, .. }
            | Error::StaleGeneration { node, .. }
            | Error::NotHolder { node, .. } => Some(*node),
            Error::Cycle { node, .. } => Some(*node),
            _ => None,
        }
    }

    /// The current holder named by the error, when there is one.
    pub fn holder(&self) -> Option<Id> {
        match self {
            Error::AlreadyClaimed { holder, .. }
            | Error::ResourceConflict { holder, .. }
            | Error::NotHolder { holder, .. } => Some(*holder),
            _ => None,
        }
    }

    /// The node's current generation named by the error, when there is one.
    pub fn generation(&self) -> Option<u64> {
        match self {
            Error::AlreadyClaimed { generation, .. }
            | Error::ResourceConflict { generation, .. }
            | Error::StaleGeneration { generation, .. }
            | Error::NotHolder { generation, .. } => Some(*generation),
            _ => None,
        }
    }

    /// The nodes an actor already holds (`assignee_busy`).
    pub fn held(&self) -> Option<&[Id]> {
        match self {
            Error::AssigneeBusy { held, .. } => Some(held),
            _ => None,
        }
    }

    /// The path named by a `corrupt` or `io` error.
    pub fn path(&self) -> Option<&Path> {
        match self {
            Error::Corrupt { path, .. } | Error::Io { path, .. } => Some(path),
            _ => None,
        }
    }
}
