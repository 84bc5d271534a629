//! The terminal the live pane runs in: raw mode and the alternate screen, and the terminal
//! put back however the pane ends. Quitting restores it (`ratatui::restore`), a panic too
//! (ratatui's hook), and so does every signal that ends the pane (TERM, HUP, INT, QUIT): its
//! handler puts back the settings the terminal had before the pane started and leaves the
//! alternate screen, then the signal ends the process as it would have (the shell sees
//! 128 + N). The handler does only what a signal handler may (`write`, `tcsetattr`,
//! `raise`), so it works wherever the pane was when the signal came, even inside a store
//! call that waits.

use crate::error::{Error, Result};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::OnceLock;

/// The signals that end the pane.
const ENDING: [libc::c_int; 4] = [libc::SIGTERM, libc::SIGHUP, libc::SIGINT, libc::SIGQUIT];

/// The terminal's settings before the pane changed them, and a descriptor of it.
static SAVED: OnceLock<libc::termios> = OnceLock::new();
static TTY: AtomicI32 = AtomicI32::new(-1);

/// Leaves the alternate screen and shows the cursor.
const LEAVE: &[u8] = b"\x1b[?1049l\x1b[?25h";

/// The ending signals caught while the pane runs; dropping it (after `ratatui::restore`)
/// puts their previous handlers back.
pub struct Signals {
    previous: Vec<(libc::c_int, libc::sigaction)>,
    opened: Option<libc::c_int>,
}

/// Raw mode and the alternate screen, with the ending signals caught first.
pub fn enter() -> Result<(ratatui::DefaultTerminal, Signals)> {
    let signals = Signals {
        opened: save_settings(),
        previous: catch_ending_signals(),
    };
    let term = ratatui::try_init().map_err(|e| Error::io(std::path::Path::new("<tty>"), &e))?;
    Ok((term, signals))
}

impl Drop for Signals {
    fn drop(&mut self) {
        for (sig, old) in &self.previous {
            // SAFETY: `old` is what sigaction returned for `sig`.
            unsafe { libc::sigaction(*sig, old, std::ptr::null_mut()) };
        }
        if let Some(fd) = self.opened.take() {
            TTY.store(-1, Ordering::SeqCst);
            // SAFETY: `fd` was opened by `save_settings` and is closed once, here.
            unsafe { libc::close(fd) };
        }
    }
}

/// Saves the terminal's settings, read where crossterm changes them: standard input when
/// it is a terminal, else `/dev/tty` (opened here; returned to be closed).
fn save_settings() -> Option<libc::c_int> {
    // SAFETY: isatty, open and tcgetattr only read their arguments; `t` is written by
    // tcgetattr before it is used.
    unsafe {
        let (fd, opened) = if libc::isatty(0) == 1 {
            (0, None)
        } else {
            let fd = libc::open(c"/dev/tty".as_ptr(), libc::O_RDWR | libc::O_CLOEXEC);
            if fd < 0 {
                return None;
            }
            (fd, Some(fd))
        };
        let mut t: libc::termios = std::mem::zeroed();
        if libc::tcgetattr(fd, &mut t) == 0 {
            // A second pane in one process keeps the first settings: those of the shell.
            let _ = SAVED.set(t);
            TTY.store(fd, Ordering::SeqCst);
        }
        opened
    }
}

/// Installs [`on_signal`] for each ending signal that is not ignored (a pane started under
/// `nohup` keeps ignoring HUP); returns the handlers it replaced.
fn catch_ending_signals() -> Vec<(libc::c_int, libc::sigaction)> {
    let mut previous = Vec::new();
    for sig in ENDING {
        // SAFETY: the handler only makes async-signal-safe calls (see `on_signal`); both
        // sigaction structures are fully initialised before use.
        unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(sig, std::ptr::null(), &mut old) != 0
                || old.sa_sigaction == libc::SIG_IGN
            {
                continue;
            }
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_signal as *const () as usize;
            sa.sa_flags = libc::SA_RESETHAND;
            libc::sigemptyset(&mut sa.sa_mask);
            if libc::sigaction(sig, &sa, &mut old) == 0 {
                previous.push((sig, old));
            }
        }
    }
    previous
}

/// Puts the terminal back, then lets the signal end the process: `SA_RESETHAND` restored
/// the default action, and the signal raised again is delivered when this returns.
extern "C" fn on_signal(sig: libc::c_int) {
    // SAFETY: write, tcsetattr and raise are async-signal-safe; SAVED is only read here
    // (set before the handler was installed) and TTY is an atomic.
    unsafe {
        libc::write(1, LEAVE.as_ptr().cast(), LEAVE.len());
        let fd = TTY.load(Ordering::SeqCst);
        if let (Some(t), true) = (SAVED.get(), fd >= 0) {
            libc::tcsetattr(fd, libc::TCSANOW, t);
        }
        libc::raise(sig);
    }
}
