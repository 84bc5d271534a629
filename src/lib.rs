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
//! - [`rules`]: the rules (docs/reference.md, "Verbs"), pure (state, request, now) -> change or error.
//! - [`schedule`]: critical paths and the order `next` picks ready nodes in.
//! - [`store`]: the [`Store`] every front door uses, over a backend (the embedded store on
//!   disk is one).
//! - [`verbs`]: every verb as a typed request and reply, with one JSON shape and one text
//!   form; the CLI, C, Python and MCP front doors all go through it.

pub mod duration;
pub mod error;
mod escape;
pub mod graph;
pub mod id;

pub mod model;
pub mod rules;
pub mod schedule;
pub mod state;
pub mod store;
pub mod verbs;
pub mod verify;
pub mod view;

#[cfg(feature = "cli")]
pub mod cli;

pub use error::{Code, Error, Result};
pub use id::{Actor, Id};
pub use model::{DisplayWord, Node, Settings, Status};
pub use rules::{Output, Request, Upsert};
pub use schedule::Pick;
pub use state::State;
pub use store::lease::Lease;
pub use store::{ListFilter, Store};
pub use view::NodeView;
