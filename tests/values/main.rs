//! Values given back as they were given, and refusals that name what was given: an output's
//! numbers kept digit for digit through the command line, the verb layer and the history on
//! both backends; `--output` that is not JSON refused as a JSON error under `--json`; a
//! duration too large in a JSON request refused naming its field.

#[path = "../common/mod.rs"]
mod common;
#[path = "../common/pg.rs"]
mod pg;
#[path = "../common/target.rs"]
mod target;

mod arguments;
mod outputs;

pub use target::{both, Target};
