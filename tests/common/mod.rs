//! Helpers shared by the integration tests: run the real `claimdag` binary on a store in a
//! temporary directory, capture what it prints and how it exits, read the store's files.
//! Every run of the binary has a time limit (a hung verb fails its test instead of hanging
//! the suite), plans go in on stdin or from a file, and a store's journal can be folded into
//! its snapshot so that a test can hand-edit the whole state in one file.
//!
//! Each test target declares this module once in its `main.rs`
//! (`#[path = "../common/mod.rs"] mod common;`); its files `use crate::common::...`.

// Not every test target uses every helper, nor every re-export below.
#![allow(dead_code, unused_imports)]

pub mod checker;
mod files;
pub mod fleet;
mod journal;
mod library;
mod output;
mod refusals;
mod rng;
mod run;
mod store;

pub use files::{assert_files_eq, copy_dir, files_of, is_root, mkfifo, refused_io};
pub use journal::{fold_journal, journal_records, journal_used, journal_used_len, JOURNAL_HEADER};
pub use library::{actor_id, flat_plan, handle, segmented, unsynced, unsynced_backend};
pub use output::{actor, id_of, is_id, parse_gen, parse_import, short};
pub use rng::Rng;
pub use run::{bin, command, run_bounded, run_limited, Run, LIMIT, LONG_LIMIT, STORE_ENV};
pub use store::Store;
