//! A real PostgreSQL server for the tests: `$CLAIMDAG_TEST_PG` when set (make test starts
//! one with scripts/pg.sh and exports it), else one this test binary starts itself with
//! scripts/pg.sh, in a temporary directory, stopped when the binary exits. Each store gets
//! a schema of its own.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

struct Server {
    url: String,
    /// The directory of a server this binary started (stopped at exit).
    dir: Option<PathBuf>,
}

static SERVER: OnceLock<Server> = OnceLock::new();
static OWN: OnceLock<Server> = OnceLock::new();
static NEXT: AtomicU64 = AtomicU64::new(0);

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/pg.sh")
}

extern "C" fn stop_at_exit() {
    for server in [SERVER.get(), OWN.get()].into_iter().flatten() {
        if let Some(d) = &server.dir {
            let _ = std::process::Command::new("bash")
                .arg(script())
                .arg("stop")
                .arg(d)
                .status();
        }
    }
}

fn server() -> &'static Server {
    SERVER.get_or_init(|| {
        if let Some(url) = std::env::var("CLAIMDAG_TEST_PG")
            .ok()
            .filter(|u| !u.is_empty())
        {
            return Server { url, dir: None };
        }
        start()
    })
}

/// A server this binary started itself (for tests that restart it or read its files).
fn own() -> &'static Server {
    OWN.get_or_init(start)
}

fn start() -> Server {
    {
        let dir = std::env::temp_dir().join(format!(
            "claimdag-test-pg-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0)
        ));
        let out = std::process::Command::new("bash")
            .arg(script())
            .arg("start")
            .arg(&dir)
            .output()
            .expect("run scripts/pg.sh start");
        assert!(
            out.status.success(),
            "scripts/pg.sh start failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        // SAFETY: registering a plain extern "C" function with atexit has no preconditions.
        unsafe {
            libc::atexit(stop_at_exit);
        }
        Server {
            url: String::from_utf8_lossy(&out.stdout).trim().to_string(),
            dir: Some(dir),
        }
    }
}

/// The URL of a fresh, empty store (a schema nobody used yet) on the test server.
pub fn fresh_url() -> String {
    fresh_on(server())
}

/// A fresh store on the server this binary started, that server's directory (with its
/// `port`, its certificates in `data/`, for `scripts/pg.sh restart`), and a guard: the tests
/// on that server restart it and kill its connections, so they run one at a time.
pub fn fresh_own() -> (String, &'static Path, std::sync::MutexGuard<'static, ()>) {
    static TURN: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let turn = TURN.lock().unwrap_or_else(|p| p.into_inner());
    let s = own();
    (
        fresh_on(s),
        s.dir.as_deref().expect("a server of our own"),
        turn,
    )
}

fn fresh_on(s: &Server) -> String {
    let n = NEXT.fetch_add(1, Ordering::SeqCst);
    let sep = if s.url.contains('?') { '&' } else { '?' };
    format!(
        "{}{sep}schema=t{}_{n}_{}",
        s.url,
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0)
    )
}

/// The test server's URL (no schema).
pub fn url() -> &'static str {
    &server().url
}

/// The URL of the server this binary started (no schema).
pub fn own_url() -> &'static str {
    &own().url
}

/// Restarts the server this binary started as after a crash (`pg_ctl restart -m
/// immediate`).
pub fn restart_own() {
    let d = own().dir.as_deref().expect("a server of our own");
    let ok = std::process::Command::new("bash")
        .arg(script())
        .arg("restart")
        .arg(d)
        .status()
        .expect("run scripts/pg.sh restart");
    assert!(ok.success(), "scripts/pg.sh restart failed");
}

/// Ends every claimdag connection to the server this binary started
/// (`pg_terminate_backend`), and waits until each is gone.
pub fn kill_own_connections() {
    let out = std::process::Command::new("psql")
        .arg(own_url())
        .args(["-X", "-q", "-t", "-A", "-c"])
        .arg(
            "SELECT count(pg_terminate_backend(pid, 10000)) FROM pg_stat_activity \
             WHERE application_name = 'claimdag' AND pid <> pg_backend_pid()",
        )
        .output()
        .expect("run psql");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
