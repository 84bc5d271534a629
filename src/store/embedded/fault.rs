//! Crash points for tests: `CLAIMDAG_CRASH_AT=<point>[:<n>]` makes the process kill itself
//! with SIGKILL the `n`th time (default 1st) it reaches `<point>` on the write path. Unset,
//! a crash point costs one branch on a cached value. Compiled in only with the `testing`
//! feature (the tests turn it on); in every shipped build a crash point is nothing at all
//! and the variable is ignored.
//!
//! `CLAIMDAG_SYNC_FAIL_AFTER=<n>` makes every journal `fdatasync` of the process after its
//! first `n` fail with EIO (a disk that went away under a running worker); also testing
//! builds only.
//!
//! Points, in write order: `before-append`, `mid-append` (half a record written),
//! `after-append` (before the sync), `after-sync` (committed, before the call returns),
//! `compact-after-history`, `compact-before-rename`, `compact-after-rename`,
//! `compact-before-truncate`; then, when the history file is sealed into a segment,
//! `roll-after-index` and `roll-after-rename`, and when a segment moves to the archive,
//! `archive-after-rename`.

#[cfg(feature = "testing")]
use std::sync::atomic::{AtomicU64, Ordering};
#[cfg(feature = "testing")]
use std::sync::OnceLock;

#[cfg(feature = "internals")]
pub const POINTS: [&str; 11] = [
    "before-append",
    "mid-append",
    "after-append",
    "after-sync",
    "compact-after-history",
    "compact-before-rename",
    "compact-after-rename",
    "compact-before-truncate",
    "roll-after-index",
    "roll-after-rename",
    "archive-after-rename",
];

#[cfg(feature = "testing")]
static TARGET: OnceLock<Option<(String, u64)>> = OnceLock::new();
#[cfg(feature = "testing")]
static HITS: AtomicU64 = AtomicU64::new(0);

#[cfg(not(feature = "testing"))]
fn target() -> &'static Option<(String, u64)> {
    &None
}

#[cfg(feature = "testing")]
fn target() -> &'static Option<(String, u64)> {
    TARGET.get_or_init(|| {
        let v = std::env::var("CLAIMDAG_CRASH_AT").ok()?;
        let (name, n) = match v.split_once(':') {
            Some((name, n)) => (name.to_string(), n.parse().unwrap_or(1)),
            None => (v, 1),
        };
        Some((name, n.max(1)))
    })
}

/// True when `point` is the configured crash point (its count not yet reached or not).
pub fn armed(point: &str) -> bool {
    matches!(target(), Some((name, _)) if name == point)
}

/// Dies here if this is the configured point and its count is reached.
#[cfg(not(feature = "testing"))]
#[inline(always)]
pub fn crash(_point: &str) {}

/// Dies here if this is the configured point and its count is reached.
#[cfg(feature = "testing")]
pub fn crash(point: &str) {
    if let Some((name, n)) = target() {
        if name == point && HITS.fetch_add(1, Ordering::SeqCst) + 1 == *n {
            // SAFETY: raising a signal at ourselves has no memory-safety preconditions.
            unsafe {
                libc::kill(libc::getpid(), libc::SIGKILL);
            }
        }
    }
}

/// Faults of the journal's `fdatasync` for one store directory, for tests: each sync first
/// waits `delay`; after the first `after` syncs, the next `fail` ones fail with EIO;
/// `syncs` counts them all.
#[cfg(feature = "testing")]
#[derive(Debug, Clone, Default)]
pub struct SyncFault {
    pub delay: std::time::Duration,
    pub after: u64,
    pub fail: u32,
    pub syncs: u64,
}

#[cfg(feature = "testing")]
static SYNC_FAULTS: std::sync::Mutex<Vec<(std::path::PathBuf, SyncFault)>> =
    std::sync::Mutex::new(Vec::new());

/// Sets the sync faults of the store at `dir` (testing builds only).
#[cfg(feature = "testing")]
pub fn set_sync_fault(dir: &std::path::Path, fault: SyncFault) {
    let mut all = SYNC_FAULTS.lock().unwrap_or_else(|p| p.into_inner());
    all.retain(|(d, _)| d != dir);
    all.push((dir.to_path_buf(), fault));
}

/// The journal syncs of the store at `dir` since its faults were set (testing builds only).
#[cfg(feature = "testing")]
pub fn syncs(dir: &std::path::Path) -> u64 {
    let all = SYNC_FAULTS.lock().unwrap_or_else(|p| p.into_inner());
    all.iter()
        .find(|(d, _)| d == dir)
        .map_or(0, |(_, f)| f.syncs)
}

/// Runs before each journal sync: the faults set for `dir`, and `$CLAIMDAG_SYNC_FAIL_AFTER`.
#[cfg(feature = "testing")]
pub fn before_sync(dir: &std::path::Path) -> std::io::Result<()> {
    static AFTER: OnceLock<Option<u64>> = OnceLock::new();
    static SEEN: AtomicU64 = AtomicU64::new(0);
    let after = AFTER.get_or_init(|| {
        let v = std::env::var("CLAIMDAG_SYNC_FAIL_AFTER").ok()?;
        v.trim().parse().ok()
    });
    if let Some(n) = after {
        if SEEN.fetch_add(1, Ordering::SeqCst) >= *n {
            return Err(std::io::Error::from_raw_os_error(libc::EIO));
        }
    }
    let (delay, fail) = {
        let mut all = SYNC_FAULTS.lock().unwrap_or_else(|p| p.into_inner());
        let Some((_, f)) = all.iter_mut().find(|(d, _)| d == dir) else {
            return Ok(());
        };
        f.syncs += 1;
        let fail = f.syncs > f.after && f.fail > 0;
        if fail {
            f.fail -= 1;
        }
        (f.delay, fail)
    };
    std::thread::sleep(delay);
    if fail {
        return Err(std::io::Error::from_raw_os_error(libc::EIO));
    }
    Ok(())
}

/// Runs before each journal sync (nothing in shipped builds).
#[cfg(not(feature = "testing"))]
#[inline(always)]
pub fn before_sync(_dir: &std::path::Path) -> std::io::Result<()> {
    Ok(())
}
