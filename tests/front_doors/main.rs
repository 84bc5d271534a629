//! The front doors: the command line (node arguments, `list` filters, `--json`,
//! `--help`), every error code with its exit code and message, bad input of every kind,
//! the example workers, and the MCP server held to its workspace.

#[path = "../common/mod.rs"]
mod common;

mod bad_input;
mod cli_surface;
mod errors;
mod examples;
mod generated;
mod mcp_bounds;
mod store_choice;
