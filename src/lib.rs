//! claimdag: a shared DAG of work nodes that many workers claim as leases, fenced by a
//! generation number so a stalled worker cannot finish work that is now someone else's.
//!
//! - [`rules`]: the rules of SPEC section 3, pure (state, request, now) -> change or error.
//! - [`schedule`]: critical paths and the order `next` picks ready nodes in.
//! - [`store`]: the [`Store`] every front door uses, over a backend (the embedded store on
//!   disk is one).
//! - [`verbs`]: every verb as a typed request and reply, with one JSON shape and one text
//!   form; the CLI, C, Python and MCP front doors all go through it.

pub mod duration;
pub mod error;
pub mod graph;
pub mod id;
pub mod lease;
pub mod model;
pub mod rules;
pub mod schedule;
pub mod store;
pub mod verbs;
pub mod verify;
pub mod view;

#[cfg(feature = "cli")]
pub mod cli;

pub use error::{Code, Error, Result};
pub use id::{Actor, Id};
pub use lease::Lease;
pub use model::{Display, Node, Settings, State, Status};
pub use rules::{Output, Request, Upsert};
pub use schedule::Pick;
pub use store::{ListFilter, Store};
pub use view::NodeView;
