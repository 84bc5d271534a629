//! `claimdag pane` as a user meets it: `--dump` frames through the binary, and the live
//! pane in a real terminal (tmux), driven by keys while another process writes.

#[path = "../common/mod.rs"]
mod common;
#[path = "../common/pg.rs"]
mod pg;

mod dump;
mod tmux;
mod tmux_postgres;
