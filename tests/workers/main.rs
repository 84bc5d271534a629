//! Work run under a claim, with real child processes and signals: `claimdag work` draining
//! plans, losing leases, failing, being stopped; the Rust lease object; and `diff-check` in
//! real git repositories.

#[path = "../common/mod.rs"]
mod common;

mod diff_check;
mod hooks;
mod lease_objects;
mod work;
mod work_stops;
mod work_talk;
mod work_waits;
