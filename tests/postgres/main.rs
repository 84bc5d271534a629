//! The PostgreSQL backend through its front doors and under faults, on a real server
//! (tests/common/pg.rs starts one): the walkthrough through the CLI, eight processes racing
//! `claim-next`, a server restarted and connections killed mid-run, statement timeouts,
//! bad URLs and passwords, a newer schema, TLS, `copy` between backends, and the history
//! kept live by `history_keep` (the rest moved to the archive). The rules
//! themselves are checked on PostgreSQL by tests/conformance.

#[path = "../common/mod.rs"]
mod common;
#[path = "../common/pg.rs"]
mod pg;

mod catalog;
mod combined;
mod copy;
mod cost;
mod doors;
mod faults;
mod fence_time;
mod front_door;
mod histories;
mod keep;
mod listen;
mod proxy;
mod race;
mod spaces;
mod tamper;
mod urls;

use common::{run_limited, Run};
use std::time::Duration;

/// `claimdag --dir URL args...`, time-limited.
pub fn cli(url: &str, args: &[&str]) -> Run {
    let mut c = common::command();
    c.arg("--dir").arg(url).args(args);
    let mut all = vec!["--dir", url];
    all.extend_from_slice(args);
    run_limited(c, &all, None, Duration::from_secs(120))
}

/// A psql command on the test server's database (as its superuser).
pub fn psql(sql: &str) -> String {
    psql_at(pg::url(), sql)
}

/// A psql command on the database at `url`.
pub fn psql_at(url: &str, sql: &str) -> String {
    let out = std::process::Command::new("psql")
        .arg(url)
        .args(["-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1", "-c", sql])
        .output()
        .expect("run psql");
    assert!(
        out.status.success(),
        "psql {sql}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// A psql session on the test server running `sql` in the background (to hold a lock
/// while the test goes on); wait for it to end.
pub fn psql_meanwhile(sql: &str) -> std::process::Child {
    std::process::Command::new("psql")
        .arg(pg::url())
        .args(["-X", "-q", "-c", sql])
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("run psql")
}

/// The schema of a store URL made by `pg::fresh_url`.
pub fn schema_of(url: &str) -> String {
    url.rsplit("schema=").next().unwrap_or_default().to_string()
}

/// The test server's TCP port (its clients on 127.0.0.1 need the password of `claimdag`).
pub fn server_port() -> u16 {
    let url = pg::url();
    let at = url
        .find("port=")
        .expect("the test server's URL names its port")
        + 5;
    url[at..]
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .unwrap()
        .parse()
        .unwrap()
}
