//! The live pane on a PostgreSQL store goes on after the server killed its connections and
//! after the server restarted: it shows writes made afterwards, and its keys act.

use super::tmux::{start_in, Tmux};
use crate::common::fleet::ok as cli;
use crate::pg;

#[test]
fn the_pane_on_postgres_goes_on_after_killed_connections_and_a_restart() {
    let (url, _, _turn) = pg::fresh_own();
    let scratch = tempfile::tempdir().expect("tempdir");
    let a = cli(&url, &["upsert", "--summary", "the first node"]);
    let tmux = Tmux::new(scratch.path());
    start_in(&tmux, scratch.path(), &url, "CLAIMDAG_ACTOR=name:lead", "");
    tmux.wait_for("the first node");
    for (fault, what) in [
        (pg::kill_own_connections as fn(), "kill"),
        (pg::restart_own as fn(), "restart"),
    ] {
        fault();
        cli(&url, &["upsert", "--summary", &format!("after the {what}")]);
        let took = tmux.wait_for(&format!("after the {what}"));
        eprintln!(
            "the pane showed a write made after the {what} in {} ms",
            took.as_millis()
        );
    }
    // A key acts on the store through the pane's handle.
    tmux.run(&["send-keys", "-t", "t", "n"]);
    tmux.wait_for(&format!("claimed {}...", &a[..8]));
    assert!(cli(&url, &["list", "--holder", "name:lead"]).contains(&a[..8]));
    tmux.run(&["send-keys", "-t", "t", "q"]);
    tmux.wait_for("PANE-EXITED-0");
}
