//! claimdag: a shared DAG of work nodes that many workers claim as leases, fenced by a
//! generation number so a stalled worker cannot finish work that is now someone else's.
//!
//! ```
//! use claimdag::{Actor, Code, Status, Store, Upsert};
//! # let tmp = tempfile::tempdir().unwrap();
//! let store = Store::open(Some(&tmp.path().join("claims")))?;
//! let parse = store.upsert(Upsert { summary: "parse the manifest header".into(), ..Upsert::default() })?;
//! let reject = store.upsert(Upsert { summary: "reject a manifest with no header".into(), ..Upsert::default() })?;
//! store.link(parse, reject, false)?;                    // reject waits on parse
//!
//! let (me, you) = (Actor::from_name("me")?, Actor::from_name("you")?);
//! let (id, gen) = store.claim_next("", me, None, Some(60_000))?.expect("parse is ready");
//! assert_eq!((id, gen), (parse, 2));
//!
//! // The lease is handed back (it ran out, or a harness reclaimed it) and taken by another:
//! store.reclaim("", Some(0))?;
//! let theirs = store.claim(parse, you, None, None)?;
//! // The stalled worker wakes up: its generation is stale, and nothing changes.
//! let late = store.complete(parse, Status::Done, gen, Some(me), None).unwrap_err();
//! assert_eq!(late.code(), Code::StaleGeneration);
//! store.complete(parse, Status::Done, theirs, Some(you), None)?;
//! assert!(store.get(reject)?.ready);
//! # Ok::<(), claimdag::Error>(())
//! ```
//!
//! - [`Store`]: the one API every front door uses, over a directory or a PostgreSQL
//!   database; [`Lease`] is a claim that renews itself.
//! - [`verbs`]: every verb as a typed request and reply, with one JSON shape and one text
//!   form; the CLI, C, Python and MCP front doors all go through it.
//! - [`model`]: the data the replies carry ([`Node`], [`Status`], [`Settings`], history).
//! - [`Error`] and its stable [`Code`]s.
//!
//! The layers under these (the rules, the scheduler, the state, the store's files) are
//! private to the crate; docs/architecture.md draws them.

/// Declares the crate's inner modules: public with the `internals` feature (the project's
/// own tests, benches and fuzz targets turn it on), private to the crate otherwise.
macro_rules! inner {
    ($($(#[$attr:meta])* $name:ident;)*) => {$(
        $(#[$attr])*
        #[cfg(feature = "internals")]
        #[doc(hidden)]
        pub mod $name;
        $(#[$attr])*
        #[cfg(not(feature = "internals"))]
        pub(crate) mod $name;
    )*};
}

/// An item of the crate's inner layers: public with the `internals` feature, private to the
/// crate otherwise (see [`inner!`]).
macro_rules! inner_item {
    ($(#[$attr:meta])* $kind:ident $($rest:tt)*) => {
        $(#[$attr])*
        #[cfg(feature = "internals")]
        #[doc(hidden)]
        pub $kind $($rest)*
        $(#[$attr])*
        #[cfg(not(feature = "internals"))]
        pub(crate) $kind $($rest)*
    };
}

pub mod error;
mod escape;
pub mod id;
pub mod model;
pub mod store;
pub mod verbs;

inner! {
    duration;
    graph;
    rules;
    schedule;
    state;
    verify;
    view;
}

/// The `claimdag` command's doors (the CLI, MCP, `work`, the pane): not API; public for the
/// command's own binary.
#[cfg(feature = "cli")]
#[doc(hidden)]
pub mod cli;

/// A time in milliseconds since the Unix epoch as RFC 3339 in UTC with milliseconds
/// (`2026-12-03T07:05:00.000Z`): how every front door prints and reads times.
pub use duration::format_time;
pub use error::{Code, Error, Result};
pub use graph::Format;
pub use id::{Actor, Id};
pub use model::CancelRequest;
pub use model::{DisplayWord, Node, Settings, Status};
pub use rules::{Finish, Grant, Output, Plan, PlanNode, Request, Upsert};
pub use schedule::Pick;
#[cfg(feature = "internals")]
#[doc(hidden)]
pub use state::State;
pub use store::lease::Lease;
pub use store::{ClaimNextOptions, ListFilter, Stop, Store, Wait, STOP_EVERY};
pub use view::{Names, NodeNames, NodeView};
