//! Waiting for another process's commit without polling: on Linux, an inotify watch on
//! the store directory (a commit appends to the journal; a compaction renames a snapshot
//! into place), so a waiter sleeps in `poll` until a file there changes. Elsewhere, or
//! when inotify cannot be had (the per-user limit of instances), the store's version is
//! read again every [`FALLBACK`]. Either way a wake-up only makes the caller look again:
//! what it then does is decided under the store's lock.

use std::path::Path;
use std::time::{Duration, Instant};

/// How often a waiter without inotify looks at the store's version.
const FALLBACK: Duration = Duration::from_millis(25);

/// Waits until `changed` says yes or `until` passes; returns whether it changed.
/// `changed` is asked first after the watch is in place, so a commit between the caller's
/// last look and the watch is never missed.
pub fn wait(
    dir: &Path,
    until: Instant,
    changed: &mut dyn FnMut() -> crate::Result<bool>,
) -> crate::Result<bool> {
    #[cfg(target_os = "linux")]
    if let Some(r) = linux::wait(dir, until, changed) {
        return r;
    }
    let _ = dir;
    look_and_nap(until, changed, &mut |left| std::thread::sleep(left.min(FALLBACK)))
}

/// Asks `changed` until it says yes or `until` passes, calling `nap` with the time left
/// between two looks.
fn look_and_nap(
    until: Instant,
    changed: &mut dyn FnMut() -> crate::Result<bool>,
    nap: &mut dyn FnMut(std::time::Duration),
) -> crate::Result<bool> {
    loop {
        if changed()? {
            return Ok(true);
        }
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(false);
        }
        nap(left);
    }
}

#[cfg(target_os = "linux")]
mod linux {
    use std::cell::RefCell;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::os::unix::ffi::OsStrExt;
    use std::path::{Path, PathBuf};
    use std::time::Instant;

    thread_local! {
        /// The thread's watch, kept from one wait to the next: closing an inotify instance
        /// waits for the kernel to retire it (milliseconds), which would sit between a
        /// wake-up and the claim it is for. It is closed when the thread ends, or when the
        /// thread waits on another directory.
        static WATCH: RefCell<Option<(PathBuf, Watch)>> = const { RefCell::new(None) };
    }

    /// Waits with the thread's watch on `dir` (made on first use); `None` when inotify
    /// cannot be had (the caller falls back).
    pub fn wait(
        dir: &Path,
        until: Instant,
        changed: &mut dyn FnMut() -> crate::Result<bool>,
    ) -> Option<crate::Result<bool>> {
        WATCH.with(|cell| {
            let mut slot = cell.try_borrow_mut().ok()?;
            if slot.as_ref().is_none_or(|(d, _)| d != dir) {
                *slot = None;
                *slot = Some((dir.to_path_buf(), Watch::new(dir)?));
            }
            let (_, w) = slot.as_ref()?;
            // Events queued since the last wait (this thread's own writes, say) are old
            // news: the look below is made after them.
            w.drain();
            Some(w.wait(until, changed))
        })
    }

    /// One inotify instance watching one directory.
    pub struct Watch {
        fd: OwnedFd,
    }

    impl Watch {
        pub fn new(dir: &Path) -> Option<Watch> {
            let path = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
            // SAFETY: plain system calls; the descriptor is owned from here on.
            let raw = unsafe { libc::inotify_init1(libc::IN_CLOEXEC | libc::IN_NONBLOCK) };
            if raw < 0 {
                return None;
            }
            let fd = unsafe { OwnedFd::from_raw_fd(raw) };
            let mask = libc::IN_MODIFY
                | libc::IN_CLOSE_WRITE
                | libc::IN_CREATE
                | libc::IN_MOVED_TO
                | libc::IN_DELETE_SELF
                | libc::IN_MOVE_SELF;
            let wd = unsafe { libc::inotify_add_watch(fd.as_raw_fd(), path.as_ptr(), mask) };
            (wd >= 0).then_some(Watch { fd })
        }

        pub fn wait(
            &self,
            until: Instant,
            changed: &mut dyn FnMut() -> crate::Result<bool>,
        ) -> crate::Result<bool> {
            super::look_and_nap(until, changed, &mut |left| {
                // Whole milliseconds, rounded up so that a wait never ends early.
                let ms = left.as_micros().div_ceil(1000).min(i32::MAX as u128) as i32;
                let mut p = libc::pollfd {
                    fd: self.fd.as_raw_fd(),
                    events: libc::POLLIN,
                    revents: 0,
                };
                // SAFETY: one valid pollfd.
                let n = unsafe { libc::poll(&mut p, 1, ms) };
                if n > 0 {
                    self.drain();
                }
            })
        }

        /// Reads every queued event (their content does not matter: any of them is a
        /// reason to look again).
        fn drain(&self) {
            let mut buf = [0u8; 4096];
            loop {
                // SAFETY: reads into a buffer of the given length.
                let n = unsafe {
                    libc::read(self.fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len())
                };
                if n <= 0 {
                    return;
                }
            }
        }
    }
}
