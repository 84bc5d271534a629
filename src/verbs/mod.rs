//! The verb layer: every verb as one typed request, written the way a user writes it (node
//! names as a full id, a prefix or `xxxxxxxx...`; actors as 32 hex or `name:NAME`;
//! durations as `30s` or seconds; status words), and one typed reply with one JSON shape and
//! one text form. Every front door (the CLI, the C ABI, the Python module, the MCP server,
//! the worker loop, the pane) turns its own input into a request and a reply into its own
//! output; none parses an actor, a status, a duration or a workspace itself, or builds a
//! reply's JSON by hand. Errors have one JSON body too ([`error_body`]).
//!
//! ```
//! use claimdag::verbs::{self, Ctx};
//! # let tmp = tempfile::tempdir().unwrap();
//! let store = claimdag::Store::open(Some(&tmp.path().join("claims")))?;
//! let cx = Ctx::new(&store, "")?;
//! let made = verbs::call(&cx, "upsert", serde_json::json!({"summary": "parse the header"}))?;
//! let id = made.json["id"].as_str().unwrap().to_string();
//! let got = verbs::call(&cx, "claim", serde_json::json!({"node": &id[..8], "assignee": "name:w1"}))?;
//! assert_eq!(got.text, "gen=2\n");
//! assert_eq!(got.json["generation"], 2);
//! # Ok::<(), claimdag::Error>(())
//! ```

mod actors;
mod args;
mod catalog;
mod claims;
#[cfg(feature = "cli")]
mod cli;
mod diff;
mod edit;
mod error;
mod gates;
mod hook;
mod limits;
mod reads;
mod replies;
mod talk;
pub mod text;

pub use actors::{
    ActorAdd, ActorEntry, ActorList, ActorRevoke, ActorToken, Actors, TokenInfo, TokenMade, Tokens,
};
pub use args::{check_role, parse_finish_status, parse_json_arg, Dur};
pub use catalog::{About, Door};
pub use claims::{Claim, ClaimNext, Complete, FenceCheck, Reclaim, Release, Renew, Reopen};
#[cfg(feature = "cli")]
pub use cli::{CompleteArgs, Described, Form};
pub use diff::DiffCheck;
pub use edit::{Archive, Config, Import, Link, Unarchive, Unlink, Upsert};
pub use error::{error_body, error_json};
pub use gates::{Approve, Reject, Retry};
pub use hook::{HookInstall, HookInstalled, HooksInstalled};
pub use limits::{Limits, PoolList, PoolSet, RateList, RateSet};
pub use reads::{ActorOf, Check, Copy, Graph, List, Log, Next, Pending, Ready, Show, Watch, Where};
pub use replies::{
    ActorId, Archived, CancelReply, ChangedFile, CheckReport, ClaimCover, Claimed, ClaimedNode,
    Completed, CompletedMany, Coverage, Done, Granted, Graphed, HandedBack, History, Imported,
    ImportedNode, NextNode, Nodes, Outcome, Picks, Renewed, SettingsReply, Upserted, Worked,
};
pub use talk::{Cancel, CompleteMany};

use crate::error::{Error, Result};
use crate::id::{Actor, Id};
use crate::store::Store;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

/// What a verb runs against: the store, and the defaults a request may leave out.
#[derive(Debug, Clone)]
pub struct Ctx<'a> {
    pub store: &'a Store,
    /// The workspace of requests that name none.
    pub workspace: String,
    /// The actor of requests that name none (`claim-next` takes `$CLAIMDAG_ACTOR`; the MCP
    /// server, the worker loop and the pane bind one at start). `None`: an actor must be
    /// given.
    pub actor: Option<Actor>,
    /// What a door that serves an agent holds its requests to (nothing by default).
    pub bounds: Bounds,
    /// What ends a waiting call sooner: the client of a door went away, a signal came.
    pub stop: Option<crate::store::Stop<'a>>,
    /// The `name:NAME` actors the call named, to keep once it succeeds.
    names: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

/// What a door holds its requests to, beyond the rules of the store: the MCP server binds
/// an agent to its actor and workspace, and a worker to the claims it holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Bounds {
    /// Requests act as the context's actor (when it has one) and in its workspace only: an
    /// argument naming another is `invalid_input`; naming the same one is fine. A node of
    /// another workspace is not there: named by any verb, in any form, it answers
    /// `not_found` as a node that does not exist; `log` reads the workspace's events only.
    pub bound: bool,
    /// `complete` ends only a live claim of the actor: cancelling a `todo` node (a planner's
    /// act) is refused as for `done`.
    pub holder_only: bool,
    /// The directories (canonical) `diff_check` may run git in, each with what is below it;
    /// `None`: anywhere.
    pub repos: Option<Vec<std::path::PathBuf>>,
    /// The longest `claim_next` wait a request may ask for (a server's bound, so that one
    /// client cannot hold a call open forever); `None`: as long as asked.
    pub max_wait_ms: Option<u64>,
}

impl<'a> Ctx<'a> {
    /// A context with `workspace` (checked) and no default actor.
    pub fn new(store: &'a Store, workspace: &str) -> Result<Ctx<'a>> {
        crate::rules::validate_workspace(workspace)?;
        Ok(Ctx {
            store,
            workspace: workspace.to_string(),
            actor: None,
            bounds: Bounds::default(),
            stop: None,
            names: Default::default(),
        })
    }

    /// A context with the workspace given, else `$CLAIMDAG_WORKSPACE`, else "".
    pub fn from_env(store: &'a Store, workspace: Option<&str>) -> Result<Ctx<'a>> {
        match workspace {
            Some(w) => Ctx::new(store, w),
            None => Ctx::new(store, &crate::store::default_workspace()?),
        }
    }

    /// The same context with a default actor (32 hex or `name:NAME`, whose name the store
    /// keeps at the first call that succeeds, or when the door says it started:
    /// [`Ctx::keep_names`]).
    pub fn with_actor(mut self, actor: Option<&str>) -> Result<Ctx<'a>> {
        self.actor = actor.map(|a| self.parse_actor(a, "actor")).transpose()?;
        Ok(self)
    }

    /// An actor as a user writes it; the name of `name:NAME` is kept in the store once the
    /// call succeeds ([`Ctx::keep_names`]): a refused call leaves the store as it was.
    fn parse_actor(&self, text: &str, what: &str) -> Result<Actor> {
        let a = Actor::parse_actor(text, what)?;
        if let Some(name) = text.strip_prefix("name:") {
            if let Ok(mut n) = self.names.lock() {
                n.push(name.to_string());
            }
        }
        Ok(a)
    }

    /// `e` with the name kept for the holder it names, if any: a refusal says who holds
    /// the node the way every door shows an actor.
    pub fn named_error(&self, e: Error) -> Error {
        let Some(h) = e.named_actor() else {
            return e;
        };
        match self.store.names() {
            Ok(names) => e.with_holder_name(names.get(&h)),
            Err(_) => e,
        }
    }

    /// Keeps the names of the `name:NAME` actors the call named, after it succeeded (its
    /// first use of a name). A name that cannot be kept now (the disk full) is kept at its
    /// next use: the call itself is done, and a name is only what the doors show.
    pub fn keep_names(&self) {
        let names = match self.names.lock() {
            Ok(mut n) => std::mem::take(&mut *n),
            Err(_) => return,
        };
        for name in names {
            let _ = self.store.named_actor(&name);
        }
    }

    /// The default actor from `$CLAIMDAG_ACTOR` (empty counts as unset), if no actor is
    /// bound yet.
    pub fn with_env_actor(self) -> Result<Ctx<'a>> {
        if self.actor.is_some() {
            return Ok(self);
        }
        match std::env::var("CLAIMDAG_ACTOR")
            .ok()
            .filter(|v| !v.is_empty())
        {
            Some(a) => self.with_actor(Some(&a)).map_err(|e| match e {
                Error::InvalidInput(m) => Error::InvalidInput(format!("$CLAIMDAG_ACTOR: {m}")),
                e => e,
            }),
            None => Ok(self),
        }
    }

    /// The workspace a request names, checked, or the context's.
    pub fn workspace(&self, given: Option<&str>) -> Result<String> {
        match given {
            Some(w) if self.bounds.bound && w != self.workspace => Err(Error::invalid(format!(
                "workspace {w:?}: requests here act in workspace {:?} only (leave workspace out)",
                self.workspace
            ))),
            Some(w) => {
                crate::rules::validate_workspace(w)?;
                Ok(w.to_string())
            }
            None => Ok(self.workspace.clone()),
        }
    }

    /// A node argument resolved to its id; when the context is bound, among the nodes of
    /// its workspace only. Every verb resolves its node arguments here.
    pub fn node(&self, text: &str) -> Result<Id> {
        if self.bounds.bound {
            return self.store.resolve_in(text, &self.workspace);
        }
        self.store.resolve(text)
    }

    /// An actor argument (`what` names it), or the context's actor when none is given.
    pub fn actor(&self, given: Option<&str>, what: &str) -> Result<Actor> {
        match given {
            Some(a) => self.given_actor(a, what),
            None => self.actor.ok_or_else(|| {
                Error::invalid(format!(
                    "{what} is required: 32 hex characters or name:NAME (or set $CLAIMDAG_ACTOR where it applies)"
                ))
            }),
        }
    }

    /// An optional actor argument: the given one, else the context's, else none.
    pub fn opt_actor(&self, given: Option<&str>, what: &str) -> Result<Option<Actor>> {
        match given {
            Some(a) => self.given_actor(a, what).map(Some),
            None => Ok(self.actor),
        }
    }

    /// An actor a request names: parsed, and when the context is bound, its own actor only.
    fn given_actor(&self, text: &str, what: &str) -> Result<Actor> {
        let a = self.parse_actor(text, what)?;
        match self.actor {
            Some(me) if self.bounds.bound && a != me => Err(Error::invalid(format!(
                "{what} {text}: requests here act as {me} only (leave {what} out)"
            ))),
            _ => Ok(a),
        }
    }

    /// The directory `diff_check` runs git in: the one a request names (else the current
    /// one), which must be one of [`Bounds::repos`] or below them when the door sets them.
    pub fn repo(&self, given: Option<&str>) -> Result<std::path::PathBuf> {
        let dir = std::path::PathBuf::from(given.unwrap_or("."));
        let Some(roots) = &self.bounds.repos else {
            return Ok(dir);
        };
        let real = dir
            .canonicalize()
            .map_err(|e| Error::invalid(format!("diff_check: repo {}: {e}", dir.display())))?;
        if roots.iter().any(|r| real.starts_with(r)) {
            return Ok(real);
        }
        let roots: Vec<String> = roots.iter().map(|r| r.display().to_string()).collect();
        Err(Error::invalid(format!(
            "diff_check: repo {} is outside the directories git may run in here ({}, and below); \
             the operator allows more with `claimdag mcp --allow-repo DIR`",
            dir.display(),
            roots.join(", ")
        )))
    }
}

/// A verb: a request as a user writes it, how it runs, and how the doors offer it. Its
/// name in `every_verb!` below is all the rest a door needs (docs/architecture.md,
/// "Where to add things").
pub trait Verb: DeserializeOwned + Serialize + JsonSchema {
    /// The verb's declaration: its name, what it is for, its hints, its doors, its help.
    const ABOUT: About;
    /// The verb's name, as the CLI spells it with `-` and JSON callers with `_`.
    const NAME: &'static str = Self::ABOUT.verb;
    type Reply: Reply;
    fn run(&self, cx: &Ctx<'_>) -> Result<Self::Reply>;
    /// On the command line, whether `$CLAIMDAG_ACTOR` stands for the actor this request
    /// leaves out (docs/reference.md, "Environment").
    fn takes_env_actor(&self) -> bool {
        false
    }
}

/// A verb's reply: its JSON shape is its `Serialize`; this adds the text form.
pub trait Reply: Serialize + DeserializeOwned + JsonSchema {
    /// What the CLI prints without `--json`.
    fn text(&self) -> String;
    /// The CLI's exit status for this reply: 0, or 1 when nothing was there to pick, 6 when
    /// `check` found a problem.
    fn exit(&self) -> i32 {
        0
    }
    /// For a reply that is not a JSON object (a list, or a value that may be `null`): the
    /// key it goes under where an object is needed (MCP structured content).
    fn object_key() -> Option<&'static str> {
        None
    }
}

/// A reply in every form: its JSON, its text and the CLI's exit status.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub json: Value,
    pub text: String,
    pub exit: i32,
    /// Where a reply that is not an object goes in one (see [`Reply::object_key`]).
    pub object_key: Option<&'static str>,
}

impl Answer {
    pub fn of<R: Reply>(reply: &R) -> Answer {
        Answer {
            json: serde_json::to_value(reply).unwrap_or(Value::Null),
            text: reply.text(),
            exit: reply.exit(),
            object_key: R::object_key(),
        }
    }

    /// The JSON as an object: a reply that is not always one (a list, or a value that may
    /// be `null`) goes under its key, whatever it is this time.
    pub fn object(&self) -> Value {
        match (&self.json, self.object_key) {
            (v, Some(k)) => serde_json::json!({ k: v }),
            (Value::Object(_), None) => self.json.clone(),
            (v, None) => serde_json::json!({ "value": v }),
        }
    }
}

/// Runs one typed request and answers its typed reply, the names it used kept
/// ([`Ctx::keep_names`]): what a door that converts the reply itself calls.
pub fn reply<V: Verb>(cx: &Ctx<'_>, req: &V) -> Result<V::Reply> {
    let reply = req.run(cx).map_err(|e| cx.named_error(e))?;
    cx.keep_names();
    Ok(reply)
}

/// Runs one typed request.
pub fn run<V: Verb>(cx: &Ctx<'_>, req: &V) -> Result<Answer> {
    let reply = req.run(cx).map_err(|e| cx.named_error(e))?;
    cx.keep_names();
    Ok(Answer::of(&reply))
}

/// A reply in the one form a caller prints, and the exit status: its text, or its JSON
/// ([`Answer::json`], written straight from the reply) and a newline.
#[derive(Debug, Clone, PartialEq)]
pub struct Printed {
    pub out: Vec<u8>,
    pub exit: i32,
}

/// Runs one typed request and makes only the form of its reply that is printed (`--json`
/// or not): a `Value` of a 100,000-node `list`, made for nothing, was most of its work.
pub fn run_printed<V: Verb>(cx: &Ctx<'_>, req: &V, json: bool) -> Result<Printed> {
    let reply = req.run(cx).map_err(|e| cx.named_error(e))?;
    cx.keep_names();
    let out = if json {
        // As `Answer::of`: a reply that does not serialise is `null`.
        let mut out = serde_json::to_vec(&reply).unwrap_or_else(|_| b"null".to_vec());
        out.push(b'\n');
        out
    } else {
        reply.text().into_bytes()
    };
    Ok(Printed {
        out,
        exit: reply.exit(),
    })
}

/// Parses a verb's arguments from JSON: unknown or mistyped fields are `invalid_input`
/// naming them and what they should be (``renew: gen: invalid value: integer `-1`,
/// expected a whole number from 0 up``).
pub fn parse<V: Verb>(args: Value) -> Result<V> {
    let args = match args {
        Value::Null => Value::Object(Default::default()),
        a => a,
    };
    crate::error::from_json_value(&args).map_err(|(path, message)| {
        let what = args::plain_expectation(&message);
        match path.as_str() {
            "." | "" => Error::invalid(format!("{}: {what}", V::NAME)),
            field => Error::invalid(format!("{}: {field}: {what}", V::NAME)),
        }
    })
}

/// How the requests' and replies' JSON Schemas are made, so that the strict converters of
/// agent frameworks take them: every definition inline (no `$ref` into `$defs`),
/// `properties` on every object, and no non-standard integer `format` (`uint64`) where the
/// `minimum` already says it.
fn schema_of<T: JsonSchema>() -> Value {
    let generator = schemars::generate::SchemaSettings::draft2020_12()
        .with(|s| s.inline_subschemas = true)
        .with_transform(PlainSchema)
        .into_generator();
    serde_json::to_value(generator.into_root_schema_for::<T>()).unwrap_or_default()
}

/// The transform of [`schema_of`], applied to every subschema.
#[derive(Debug, Clone, Copy)]
struct PlainSchema;

impl schemars::transform::Transform for PlainSchema {
    fn transform(&mut self, schema: &mut schemars::Schema) {
        if let Some(o) = schema.as_object_mut() {
            let unsigned = o
                .get("format")
                .and_then(Value::as_str)
                .is_some_and(|f| f.starts_with("uint"));
            if unsigned {
                o.remove("format");
            }
            let object = match o.get("type") {
                Some(Value::String(t)) => t == "object",
                Some(Value::Array(ts)) => ts.iter().any(|t| t == "object"),
                _ => false,
            };
            if object && !o.contains_key("properties") {
                o.insert("properties".into(), Value::Object(Default::default()));
            }
        }
        schemars::transform::transform_subschemas(self, schema);
    }
}

macro_rules! every_verb {
    ($($ty:ident $(as $form:ty)?),* $(,)?) => {
        /// Every verb's name, in the order the reference lists them.
        pub const NAMES: &[&str] = &[$(<$ty as Verb>::NAME),*];

        /// Every verb's declaration, in the same order.
        pub const CATALOG: &[About] = &[$(<$ty as Verb>::ABOUT),*];

        /// Runs the verb named `verb` (`claim_next` or `claim-next`) with JSON arguments.
        pub fn call(cx: &Ctx<'_>, verb: &str, args: Value) -> Result<Answer> {
            let name = verb.replace('-', "_");
            $(
                if name == <$ty as Verb>::NAME {
                    return run(cx, &parse::<$ty>(args)?);
                }
            )*
            Err(Error::invalid(format!(
                "unknown verb {verb:?}: the verbs are {}",
                NAMES.join(", ")
            )))
        }

        /// The JSON Schema of the verb's arguments and of its reply (`None` for an unknown
        /// verb).
        pub fn schemas(verb: &str) -> Option<(Value, Value)> {
            let name = verb.replace('-', "_");
            $(
                if name == <$ty as Verb>::NAME {
                    return Some((schema_of::<$ty>(), schema_of::<<$ty as Verb>::Reply>()));
                }
            )*
            None
        }

        /// Where the verb's reply goes in an object, when it is not one (a list, or a
        /// value that may be `null`).
        pub fn object_key(verb: &str) -> Option<&'static str> {
            let name = verb.replace('-', "_");
            $(
                if name == <$ty as Verb>::NAME {
                    return <<$ty as Verb>::Reply as Reply>::object_key();
                }
            )*
            None
        }

        /// Every verb as a subcommand of the command line, in its form there: the request
        /// itself, or what the command line reads it from (`Verb as Form`).
        #[cfg(feature = "cli")]
        #[derive(Debug)]
        pub enum Command {
            $($ty(cli::form!($ty $(, $form)?)),)*
        }

        #[cfg(feature = "cli")]
        impl Command {
            /// Runs the request and makes the form of its reply that is printed.
            pub fn run_printed(&self, cx: &Ctx<'_>, json: bool) -> Result<Printed> {
                match self {
                    $(Command::$ty(f) => cli::run_form::<$ty, _>(cx, f, json),)*
                }
            }
        }

        #[cfg(feature = "cli")]
        impl clap::FromArgMatches for Command {
            fn from_arg_matches(m: &clap::ArgMatches) -> std::result::Result<Self, clap::Error> {
                Self::from_arg_matches_mut(&mut m.clone())
            }

            fn from_arg_matches_mut(
                m: &mut clap::ArgMatches,
            ) -> std::result::Result<Self, clap::Error> {
                let (name, mut sub) = cli::verb_matches(m)?;
                $(
                    if <$ty as Verb>::ABOUT.command == name {
                        return clap::FromArgMatches::from_arg_matches_mut(&mut sub)
                            .map(Command::$ty);
                    }
                )*
                Err(cli::unknown(&name))
            }

            fn update_from_arg_matches(
                &mut self,
                m: &clap::ArgMatches,
            ) -> std::result::Result<(), clap::Error> {
                *self = Self::from_arg_matches(m)?;
                Ok(())
            }
        }

        #[cfg(feature = "cli")]
        impl clap::Subcommand for Command {
            fn augment_subcommands(cmd: clap::Command) -> clap::Command {
                let cmd = cmd;
                $(let cmd = cli::subcommand::<$ty, cli::form!($ty $(, $form)?)>(cmd);)*
                cmd
            }

            fn augment_subcommands_for_update(cmd: clap::Command) -> clap::Command {
                Self::augment_subcommands(cmd)
            }

            fn has_subcommand(name: &str) -> bool {
                CATALOG.iter().any(|a| {
                    a.command == name
                        || a.aliases.contains(&name)
                        || a.command_path().0 == Some(name)
                })
            }
        }
    };
}

every_verb!(
    Upsert,
    Link,
    Unlink,
    List,
    Show,
    Claim,
    Renew,
    Release,
    Reclaim,
    Complete as CompleteArgs,
    CompleteMany as talk::CompletionsFile,
    Cancel,
    Reopen,
    Next,
    Ready,
    ClaimNext,
    Log,
    Import as edit::PlanFile,
    Archive,
    Unarchive,
    Graph,
    Config,
    Check,
    ActorOf,
    ActorAdd,
    ActorList,
    ActorToken,
    ActorRevoke,
    Copy,
    DiffCheck,
    FenceCheck,
    PoolSet,
    PoolList,
    RateSet,
    RateList,
    HookInstall,
    Approve,
    Reject,
    Retry,
    Where,
    Pending,
);
