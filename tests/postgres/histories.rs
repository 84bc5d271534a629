//! The history checker (tests/common/checker.rs) over a fleet of worker processes on one
//! PostgreSQL store, under SIGKILL, SIGSTOP past the lease, connections killed on the
//! server (`pg_terminate_backend`) and a server restarted as after a crash. Every call's
//! outcome and the store's history afterwards must show no anomaly. `CLAIMDAG_SOAK=1`: minutes.

use crate::common::fleet::{self, Plan};
use crate::common::Rng;
use crate::pg;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

fn soak() -> bool {
    std::env::var_os("CLAIMDAG_SOAK").is_some()
}

#[test]
fn a_fleet_under_kills_stops_lost_connections_and_a_restart_leaves_a_clean_history() {
    let (url, _, _turn) = pg::fresh_own();
    let run_for = Duration::from_secs(if soak() { 240 } else { 12 });
    let plan = Plan {
        dir: url,
        workers: 4,
        nodes: 16,
        run_for,
        ttl_ms: 800,
        fault_env: None,
        seed: Rng::from_env("fleet (PostgreSQL)").next(),
    };
    // Every 0.9 s the server kills the fleet's connections; every tenth time (once in a
    // short run) it is restarted instead, as after a crash.
    let server_faults = |stop: &AtomicBool| {
        let (mut tick, mut restarts) = (0, 0);
        while !stop.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(900));
            tick += 1;
            if stop.load(Ordering::SeqCst) {
                break;
            }
            if tick % 10 == 6 {
                pg::restart_own();
                restarts += 1;
            } else {
                pg::kill_own_connections();
            }
        }
        eprintln!(
            "fleet (PostgreSQL): {restarts} server restarts, {} ticks",
            tick
        );
    };
    fleet::run_and_check(&plan, &server_faults, "fleet (PostgreSQL)");
}
