//! The command line as a front door: its surface (node arguments, `list` filters, `--json`,
//! `--help`), every error code with its exit code and message, and bad input of every kind.

#[path = "../common/mod.rs"]
mod common;

mod bad_input;
mod cli_surface;
mod errors;
