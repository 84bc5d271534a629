//! The one error type of the core. Every front door maps it in exactly one place, through
//! [`Error::code`] (the stable codes of docs/reference.md, "Exit codes and errors").

use crate::id::{Id, IdError};
use std::path::{Path, PathBuf};

/// The table of the stable error codes (docs/reference.md, "Exit codes and errors"), written once: one row a code, as
/// `Variant = value, snake_name, exit status, "meaning";`. It builds [`Code`] here, and the
/// C ABI's `claimdag_code` and its header, the Python exception classes and the checks of
/// the docs' tables are made from it. A callback macro receives the rows, so other crates of
/// the workspace can build their own items from them: `claimdag::with_codes!(my_macro)`.
///
/// The values are the C ABI values and are never renumbered; names and exit statuses never
/// change.
#[doc(hidden)]
#[macro_export]
macro_rules! with_codes {
    ($callback:ident) => {
        $callback! {
            NotFound = 1, not_found, exit 3,
                "The node, link or id prefix does not exist (also: nothing is ready to pick).";
            AlreadyClaimed = 2, already_claimed, exit 4,
                "The node is claimed already (by anyone, the holder included).";
            AssigneeBusy = 3, assignee_busy, exit 4,
                "The actor already holds `max_held` live claims in this workspace.";
            NotReady = 4, not_ready, exit 4,
                "The node waits on prerequisites that are not done (or it is blocked).";
            AttemptsExhausted = 5, attempts_exhausted, exit 4,
                "The node used up its attempts.";
            ResourceConflict = 6, resource_conflict, exit 4,
                "A live claim holds a resource that overlaps one of the node's.";
            NotClaimed = 7, not_claimed, exit 4,
                "The node is not claimed.";
            Terminal = 8, terminal, exit 4,
                "The node is finished (done, failed or cancelled).";
            StaleGeneration = 9, stale_generation, exit 5,
                "The generation given is not the node's current one: the claim was handed back.";
            NotHolder = 10, not_holder, exit 5,
                "The actor is not the holder of the claim.";
            Cycle = 11, cycle, exit 2,
                "The link would close a cycle (or links a node to itself).";
            InvalidInput = 12, invalid_input, exit 2,
                "An argument was missing, malformed or not acceptable; the message says which.";
            Corrupt = 13, corrupt, exit 6,
                "A file of the store is damaged; the message names it.";
            Io = 14, io, exit 7,
                "The OS refused an operation; the message has its error and the path.";
            Internal = 15, internal, exit 1,
                "A bug in claimdag: a panic was caught at the boundary. The store is unchanged.";
        }
    };
}

/// Builds [`Code`] and its tables from the rows of [`with_codes!`].
macro_rules! code_enum {
    ($($variant:ident = $value:literal, $name:ident, exit $exit:literal, $meaning:literal;)+) => {
        /// The stable error codes. The numeric values are the C ABI values and are never
        /// renumbered.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[repr(u32)]
        pub enum Code {
            $(#[doc = $meaning] $variant = $value,)+
        }

        impl Code {
            /// Every code, in numeric order.
            pub const ALL: [Code; [$($value),+].len()] = [$(Code::$variant),+];

            /// The snake_case name used in JSON output (`"code": "not_found"`).
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Code::$variant => stringify!($name),)+
                }
            }

            /// The CLI exit status for this code (docs/reference.md, "Exit codes and errors").
            pub fn exit_code(self) -> i32 {
                match self {
                    $(Code::$variant => $exit,)+
                }
            }

            /// What the code means, in one sentence (the docs and the C header say it so).
            pub fn meaning(self) -> &'static str {
                match self {
                    $(Code::$variant => $meaning,)+
                }
            }

            /// The name of the variant (`"NotFound"`), from which the front doors name their
            /// own spelling of the code.
            pub fn variant_name(self) -> &'static str {
                match self {
                    $(Code::$variant => stringify!($variant),)+
                }
            }

            /// The code of a C ABI value; `None` for 0 (success) and unknown values.
            pub fn from_value(value: u32) -> Option<Code> {
                match value {
                    $($value => Some(Code::$variant),)+
                    _ => None,
                }
            }
        }
    };
}

with_codes!(code_enum);

/// Everything that can go wrong in claimdag. A refused call never changed anything.
#[derive(Debug, Clone, PartialEq, thiserror::Error, serde::Serialize, serde::Deserialize)]
pub enum Error {
    #[error("{what} not found")]
    NotFound { what: String, node: Option<Id> },
    #[error(
        "node {node} is already claimed by {holder}{} at gen={generation}",
        named(holder_name)
    )]
    AlreadyClaimed {
        node: Id,
        holder: Id,
        /// The name the store keeps for the holder (filled in by the verb layer).
        #[serde(default)]
        holder_name: Option<Box<str>>,
        generation: u64,
    },
    #[error("actor {actor}{} already holds {} live claim(s) in this workspace (max_held={max_held}): {}; cannot claim node {node}", named(actor_name), held.len(), id_list(held))]
    AssigneeBusy {
        node: Id,
        actor: Id,
        /// The name the store keeps for the actor (filled in by the verb layer).
        #[serde(default)]
        actor_name: Option<Box<str>>,
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
    #[error("node {node}: resource {resource:?} overlaps {held:?}, held by {holder}{} on node {other} at gen={generation}", named(holder_name))]
    ResourceConflict {
        node: Id,
        resource: Box<str>,
        held: Box<str>,
        other: Id,
        holder: Id,
        #[serde(default)]
        holder_name: Option<Box<str>>,
        generation: u64,
    },
    /// A pool with no slot left for the node, or a rate with no grant left in its window:
    /// the same code as an overlap (`resource_conflict`).
    #[error("node {node}: resource {resource:?} is busy: {why}")]
    ResourceBusy {
        node: Id,
        resource: Box<str>,
        why: String,
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
    #[error(
        "{actor} is not the holder of node {node} (held by {holder}{} at gen={generation})",
        named(holder_name)
    )]
    NotHolder {
        node: Id,
        actor: Id,
        holder: Id,
        #[serde(default)]
        holder_name: Option<Box<str>>,
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
/// " (name:NAME)" after an actor the store keeps a name for.
fn named(name: &Option<Box<str>>) -> String {
    name.as_deref()
        .map(|n| format!(" (name:{n})"))
        .unwrap_or_default()
}

fn given_text(given: u64) -> String {
    match given {
        0 => "this actor's claim was handed back".to_string(),
        g => format!("given gen={g}"),
    }
}

/// A refused id or actor argument is `invalid_input`, with its message as it was.
impl From<IdError> for Error {
    fn from(IdError(message): IdError) -> Error {
        Error::InvalidInput(message)
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
            Error::ResourceConflict { .. } | Error::ResourceBusy { .. } => Code::ResourceConflict,
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
            | Error::ResourceBusy { node, .. }
            | Error::NotClaimed { node, .. }
            | Error::Terminal { node, .. }
            | Error::StaleGeneration { node, .. }
            | Error::NotHolder { node, .. } => Some(*node),
            Error::Cycle { node, .. } => Some(*node),
            _ => None,
        }
    }

    /// The name kept for the holder the error names, once the verb layer filled it in.
    pub fn holder_name(&self) -> Option<&str> {
        match self {
            Error::AlreadyClaimed { holder_name, .. }
            | Error::ResourceConflict { holder_name, .. }
            | Error::NotHolder { holder_name, .. } => holder_name.as_deref(),
            _ => None,
        }
    }

    /// The same error with the name kept for the actor it names (its holder, or the busy
    /// assignee), if any.
    pub fn with_holder_name(mut self, name: Option<&str>) -> Error {
        if let Error::AlreadyClaimed { holder_name, .. }
        | Error::ResourceConflict { holder_name, .. }
        | Error::NotHolder { holder_name, .. }
        | Error::AssigneeBusy {
            actor_name: holder_name,
            ..
        } = &mut self
        {
            *holder_name = name.map(Box::from);
        }
        self
    }

    /// The actor the error names (its holder, or the busy assignee), for its name.
    pub fn named_actor(&self) -> Option<Id> {
        match self {
            Error::AssigneeBusy { actor, .. } => Some(*actor),
            e => e.holder(),
        }
    }

    /// The busy assignee of `assignee_busy`, and the name kept for it.
    pub fn busy_actor(&self) -> Option<(Id, Option<&str>)> {
        match self {
            Error::AssigneeBusy {
                actor, actor_name, ..
            } => Some((*actor, actor_name.as_deref())),
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

/// Reads a `T` from a JSON value by way of its text, as a request's JSON is read: with
/// serde_json's `arbitrary_precision` a value hands a number over as its text, so read from
/// the value itself a `-0` would become `0` and a mistyped number would say only "invalid
/// number". The message has no position (the text is not the user's).
pub fn from_json_value<T: serde::de::DeserializeOwned>(
    value: &serde_json::Value,
) -> std::result::Result<T, (String, String)> {
    let text = value.to_string();
    let mut de = serde_json::Deserializer::from_str(&text);
    serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let inner = e.inner();
        let message = inner.to_string();
        let at = format!(" at line {} column {}", inner.line(), inner.column());
        let message = message.strip_suffix(&at).unwrap_or(&message).to_string();
        (e.path().to_string(), message)
    })
}

#[cfg(test)]
mod tests {
    use super::Code;

    /// The rows of the first Markdown table in `doc` after the line `header`, as cells with
    /// their backticks removed.
    fn table(doc: &str, header: &str) -> Vec<Vec<String>> {
        let path = format!("{}/docs/{doc}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let mut lines = text.lines().skip_while(|l| l.trim() != header);
        assert!(lines.next().is_some(), "{doc}: no table headed {header:?}");
        lines
            .skip(1)
            .take_while(|l| l.starts_with('|'))
            .map(|l| {
                l.trim_matches('|')
                    .split('|')
                    .map(|c| c.trim().replace('`', ""))
                    .collect()
            })
            .collect()
    }

    #[test]
    fn the_reference_table_matches_the_codes() {
        let rows = table(
            "reference.md",
            "| code | C value | message contains | exit |",
        );
        let got: Vec<(String, String, String)> = rows
            .into_iter()
            .map(|r| (r[0].clone(), r[1].clone(), r[3].clone()))
            .collect();
        let want: Vec<(String, String, String)> = Code::ALL
            .iter()
            .map(|&c| {
                let value = (c as u32).to_string();
                (c.as_str().to_string(), value, c.exit_code().to_string())
            })
            .collect();
        assert_eq!(got, want, "docs/reference.md: the table of codes drifted");
    }

    #[test]
    fn the_c_api_table_matches_the_codes() {
        let rows = table("c-api.md", "| value | code | value | code |");
        let mut got: Vec<(u32, String)> = rows
            .iter()
            .flat_map(|r| r.chunks(2))
            .filter(|pair| !pair[0].is_empty())
            .map(|pair| (pair[0].parse().expect("a value"), pair[1].clone()))
            .collect();
        got.sort();
        let want: Vec<(u32, String)> = Code::ALL
            .iter()
            .map(|&c| (c as u32, format!("CLAIMDAG_{}", c.as_str().to_uppercase())))
            .collect();
        assert_eq!(got, want, "docs/c-api.md: the table of codes drifted");
    }

    #[test]
    fn the_table_builds_every_code_once() {
        for (i, &code) in Code::ALL.iter().enumerate() {
            assert_eq!(code as u32, i as u32 + 1);
            assert_eq!(Code::from_value(code as u32), Some(code));
            assert!(code.meaning().ends_with('.'));
        }
        assert_eq!(Code::from_value(0), None);
        assert_eq!(Code::from_value(16), None);
    }
}
