//! The guard of each command `claimdag work` runs: a small process between the worker and
//! the command, which exits only once nothing the command started is left.
//!
//! The worker forks the guard (inside `Command::spawn`, before the exec); the guard forks the
//! command, which runs in a process group of its own. On Linux the guard is a child subreaper
//! (`PR_SET_CHILD_SUBREAPER`): whatever the command starts stays below the guard even when
//! its own parent exits, in the command's group or out of it (`setsid`, a double fork), so
//! the guard can find it. The guard
//!
//! - forwards the signals the worker asks for to the command's group, and sends KILL to all
//!   of it after the grace;
//! - when the command exits, sends TERM to whatever it left running, and KILL after the grace;
//! - when the worker is gone (its end of the channel closed: a SIGKILL, a crash), sends KILL
//!   to all of it at once;
//! - exits only once no process of the command is left, with the command's own exit status
//!   (or by its signal), so that the worker waiting for its child waits for all of it.
//!
//! The command gets KILL if the guard itself dies (`PR_SET_PDEATHSIG`). Elsewhere than on
//! Linux there is no subreaper: the guard follows the command's process group only.
//!
//! The guard runs in the child of a fork of a process with threads: it calls only
//! async-signal-safe functions (system calls, no allocation, no locks) and never returns
//! into Rust code that could.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::time::Duration;

/// A byte from the worker: KILL everything now (any other byte is a signal to forward).
const KILL_NOW: u8 = 0;
/// A byte from the guard: the command exited and left processes running, which were stopped.
const LEFT_BEHIND: u8 = b'L';

/// The worker's end of the channel to a command's guard.
pub struct Guard {
    ours: OwnedFd,
    /// The guard's end, until the command was spawned.
    theirs: Option<OwnedFd>,
}

impl Guard {
    /// Makes `cmd` run under a guard that gives it `grace` between TERM and KILL. Call
    /// [`Guard::spawned`] once `cmd` was spawned (or failed to).
    pub fn install(cmd: &mut Command, grace: Duration) -> io::Result<Guard> {
        let mut fds = [-1 as RawFd; 2];
        // SAFETY: socketpair writes two descriptors into the array it is given.
        let r = unsafe {
            libc::socketpair(
                libc::AF_UNIX,
                libc::SOCK_STREAM | libc::SOCK_CLOEXEC,
                0,
                fds.as_mut_ptr(),
            )
        };
        if r != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: both descriptors were just created and belong to nothing else.
        let (ours, theirs) =
            unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        let (sock, grace_ms) = (
            theirs.as_raw_fd(),
            grace.as_millis().min(i64::MAX as u128) as i64,
        );
        // SAFETY: `become_guard` calls only async-signal-safe functions, as pre_exec requires.
        unsafe {
            cmd.pre_exec(move || become_guard(sock, grace_ms));
        }
        Ok(Guard {
            ours,
            theirs: Some(theirs),
        })
    }

    /// The command was spawned: the guard's end of the channel is the guard's alone.
    pub fn spawned(&mut self) {
        self.theirs = None;
    }

    /// Forwards `sig` to the command's process group (and starts the grace before KILL).
    pub fn signal(&self, sig: i32) {
        self.send(u8::try_from(sig).unwrap_or(libc::SIGTERM as u8));
    }

    /// KILL to every process of the command, now.
    pub fn kill_now(&self) {
        self.send(KILL_NOW);
    }

    /// True when the command exited leaving processes running (which the guard stopped).
    /// Read once the guard exited.
    pub fn left_behind(&self) -> bool {
        let mut buf = [0u8; 16];
        // SAFETY: recv writes at most buf.len() bytes into buf.
        let n = unsafe {
            libc::recv(
                self.ours.as_raw_fd(),
                buf.as_mut_ptr().cast(),
                buf.len(),
                libc::MSG_DONTWAIT,
            )
        };
        n > 0 && buf[..n as usize].contains(&LEFT_BEHIND)
    }

    fn send(&self, byte: u8) {
        // SAFETY: send reads one byte from a live buffer; a guard that is gone is no error.
        unsafe {
            libc::send(
                self.ours.as_raw_fd(),
                (&byte as *const u8).cast(),
                1,
                libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL,
            );
        }
    }
}

/// Runs in the child of the worker's fork: forks the command (which returns, for std to
/// exec it) and becomes its guard (which never returns).
fn become_guard(sock: RawFd, grace_ms: i64) -> io::Result<()> {
    // SAFETY: every call below is a system call on values of this process.
    unsafe {
        let mut none: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut none);
        libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
        #[cfg(target_os = "linux")]
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1);
        // The guard lets the signals meant for the worker or the command pass it by.
        for s in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT] {
            set_handler(s, libc::SIG_IGN);
        }
        // A handler only so that SIGCHLD interrupts the guard's poll.
        set_handler(libc::SIGCHLD, on_child as *const () as usize);
        let guard = libc::getpid();
        let command = libc::fork();
        if command < 0 {
            return Err(io::Error::last_os_error());
        }
        if command == 0 {
            // The command: the dispositions a command expects, a group of its own, and KILL
            // when its guard dies.
            for s in [
                libc::SIGINT,
                libc::SIGTERM,
                libc::SIGHUP,
                libc::SIGQUIT,
                libc::SIGCHLD,
                libc::SIGXFSZ,
            ] {
                set_handler(s, libc::SIG_DFL);
            }
            libc::setpgid(0, 0);
            #[cfg(target_os = "linux")]
            {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                if libc::getppid() != guard {
                    libc::_exit(1);
                }
            }
            let _ = guard;
            return Ok(());
        }
        // Nothing of the worker's stays open here: not its stdio (a reader of its output
        // sees the end when the worker and the command end), not the channels of other
        // commands, not std's pipe that reports a failed exec.
        close_from(0, sock);
        close_from(sock + 1, libc::c_int::MAX);
        #[cfg(target_os = "linux")]
        libc::prctl(libc::PR_SET_NAME, c"claimdag-guard".as_ptr());
        let end = Supervise::new(command, sock, grace_ms).run();
        exit_as(end)
    }
}

extern "C" fn on_child(_: libc::c_int) {}

/// Sets the disposition of `sig` (a handler address, `SIG_IGN` or `SIG_DFL`).
unsafe fn set_handler(sig: libc::c_int, handler: libc::sighandler_t) {
    // SAFETY: the struct is zeroed, then filled in before the call.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = handler;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(sig, &sa, std::ptr::null_mut());
    }
}

/// Closes the descriptors from `first` up to but not including `end`.
unsafe fn close_from(first: libc::c_int, end: libc::c_int) {
    if first >= end {
        return;
    }
    #[cfg(target_os = "linux")]
    // SAFETY: close_range only closes descriptors.
    unsafe {
        if libc::syscall(
            libc::SYS_close_range,
            first as libc::c_uint,
            (end - 1) as libc::c_uint,
            0,
        ) == 0
        {
            return;
        }
    }
    // SAFETY: getrlimit writes into the struct it is given; close only closes.
    unsafe {
        let mut lim: libc::rlimit = std::mem::zeroed();
        let max = match libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) {
            0 => lim.rlim_cur.min(1 << 20) as libc::c_int,
            _ => 1 << 16,
        };
        for fd in first..end.min(max) {
            libc::close(fd);
        }
    }
}

/// Ends the guard the way the command ended: its exit code, or its signal.
fn exit_as(end: Ended) -> ! {
    // SAFETY: system calls on this process only.
    unsafe {
        if let Ended::Signal(s) = end {
            let none = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            libc::setrlimit(libc::RLIMIT_CORE, &none);
            set_handler(s, libc::SIG_DFL);
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, s);
            libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
            libc::kill(libc::getpid(), s);
        }
        libc::_exit(match end {
            Ended::Code(c) => c,
            Ended::Signal(s) => 128 + s,
        })
    }
}

/// How the command ended.
#[derive(Clone, Copy)]
enum Ended {
    Code(i32),
    Signal(i32),
}

impl Ended {
    fn of_wait_status(st: libc::c_int) -> Ended {
        if libc::WIFSIGNALED(st) {
            Ended::Signal(libc::WTERMSIG(st))
        } else {
            Ended::Code(libc::WEXITSTATUS(st))
        }
    }
}

/// How the child `command` ended, if it did, leaving it waitable (Linux).
#[cfg(target_os = "linux")]
fn ended_unreaped(command: libc::pid_t) -> Option<Ended> {
    // SAFETY: waitid writes into the siginfo it is given.
    unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        let r = libc::waitid(
            libc::P_PID,
            command as libc::id_t,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        );
        (r == 0 && info.si_pid() == command).then(|| match info.si_code {
            libc::CLD_EXITED => Ended::Code(info.si_status()),
            _ => Ended::Signal(info.si_status()),
        })
    }
}

#[cfg(not(target_os = "linux"))]
fn ended_unreaped(_: libc::pid_t) -> Option<Ended> {
    None
}

/// The milliseconds of the monotonic clock.
fn now_ms() -> i64 {
    // SAFETY: clock_gettime writes into the struct it is given.
    unsafe {
        let mut t: libc::timespec = std::mem::zeroed();
        libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t);
        t.tv_sec as i64 * 1000 + t.tv_nsec as i64 / 1_000_000
    }
}

/// The guard's state.
struct Supervise {
    /// The command's pid, and its process group.
    command: libc::pid_t,
    /// The channel to the worker; -1 once the worker is gone.
    sock: RawFd,
    grace_ms: i64,
    /// Linux: the guard's children can be listed, so the command stays unreaped (its pid,
    /// and so its group's, cannot be reused) until nothing else is left.
    listed: bool,
    ended: Option<Ended>,
    /// The command was reaped (only without a list of children).
    reaped: bool,
    /// When TERM went out (the grace runs from there).
    term_at: Option<i64>,
    killing: bool,
    left_behind: bool,
}

impl Supervise {
    fn new(command: libc::pid_t, sock: RawFd, grace_ms: i64) -> Supervise {
        let mut s = Supervise {
            command,
            sock,
            grace_ms,
            listed: false,
            ended: None,
            reaped: false,
            term_at: None,
            killing: false,
            left_behind: false,
        };
        s.listed = s.each_child(|_| {});
        s
    }

    fn run(mut self) -> Ended {
        loop {
            self.listen();
            self.watch_command();
            if self.term_at.is_some_and(|t| now_ms() - t >= self.grace_ms) {
                self.killing = true;
            }
            if self.killing {
                self.signal_all(libc::SIGKILL);
            }
            if let Some(end) = self.ended {
                if !self.others_left() {
                    if !self.reaped {
                        // Its pid (and so its group's) is free from here on.
                        // SAFETY: reaps the command, which ended.
                        unsafe { libc::waitpid(self.command, std::ptr::null_mut(), 0) };
                    }
                    if self.left_behind && self.sock >= 0 {
                        let b = LEFT_BEHIND;
                        // SAFETY: send reads one byte from a live buffer.
                        unsafe {
                            libc::send(
                                self.sock,
                                (&b as *const u8).cast(),
                                1,
                                libc::MSG_NOSIGNAL | libc::MSG_DONTWAIT,
                            );
                        }
                    }
                    return end;
                }
            }
        }
    }

    /// Waits a little for a word from the worker (or for a child to end), and acts on it.
    fn listen(&mut self) {
        let timeout = match (self.killing, self.term_at) {
            (true, _) => 10,
            (false, Some(_)) => 20,
            (false, None) => 250,
        };
        let mut p = libc::pollfd {
            fd: self.sock,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: poll reads and writes the one pollfd it is given (fd -1 is ignored).
        let ready = unsafe { libc::poll(&mut p, 1, timeout) };
        if ready <= 0 || self.sock < 0 {
            return;
        }
        let mut buf = [0u8; 64];
        // SAFETY: read writes at most buf.len() bytes into buf.
        let n = unsafe { libc::read(self.sock, buf.as_mut_ptr().cast(), buf.len()) };
        if n == 0 || (n < 0 && p.revents & (libc::POLLHUP | libc::POLLERR) != 0) {
            // The worker is gone: nobody renews the claim any more, the command must go now.
            // SAFETY: closing the guard's own descriptor.
            unsafe { libc::close(self.sock) };
            self.sock = -1;
            self.killing = true;
            return;
        }
        for &b in &buf[..n.max(0) as usize] {
            match b {
                KILL_NOW => self.killing = true,
                sig => {
                    self.signal_all(libc::c_int::from(sig));
                    self.term_at.get_or_insert_with(now_ms);
                }
            }
        }
    }

    /// Notes the command's end (without reaping it when the children can be listed), reaps
    /// the other children that ended, and sends TERM to what the command left running.
    fn watch_command(&mut self) {
        let command = self.command;
        if self.listed {
            if self.ended.is_none() {
                self.ended = ended_unreaped(command);
            }
            self.each_child(|c| {
                if c != command {
                    // SAFETY: reaps the child c if it ended; nothing otherwise.
                    unsafe { libc::waitpid(c, std::ptr::null_mut(), libc::WNOHANG) };
                }
            });
        } else {
            loop {
                let mut st = 0;
                // SAFETY: waitpid writes the status into st.
                let pid = unsafe { libc::waitpid(-1, &mut st, libc::WNOHANG) };
                if pid <= 0 {
                    break;
                }
                if pid == command {
                    self.ended = Some(Ended::of_wait_status(st));
                    self.reaped = true;
                }
            }
        }
        if self.ended.is_some() && self.term_at.is_none() {
            self.term_at = Some(now_ms());
            if self.others_left() {
                self.left_behind = true;
                self.signal_all(libc::SIGTERM);
            }
        }
    }

    /// Sends `sig` to the command's group and (Linux) to every process of it that surfaced
    /// below the guard out of that group; CONT after it, for stopped ones.
    fn signal_all(&mut self, sig: libc::c_int) {
        let command = self.command;
        // With the command reaped its group's id may be reused once the group is empty:
        // signal it only while it has members.
        // SAFETY: kill has no memory-safety preconditions.
        unsafe {
            if !self.reaped || libc::kill(-command, 0) == 0 {
                libc::kill(-command, sig);
                if sig != libc::SIGKILL {
                    libc::kill(-command, libc::SIGCONT);
                }
            }
        }
        self.each_child(|c| {
            if c != command {
                // SAFETY: kill has no memory-safety preconditions.
                unsafe {
                    libc::kill(c, sig);
                    if sig != libc::SIGKILL {
                        libc::kill(c, libc::SIGCONT);
                    }
                }
            }
        });
    }

    /// True while a process of the command is left besides the command itself.
    fn others_left(&self) -> bool {
        let command = self.command;
        if self.listed {
            // Twice: a listing read while the list changes may miss a child.
            (0..2).any(|_| {
                let mut others = false;
                !self.each_child(|c| others |= c != command) || others
            })
        } else {
            // SAFETY: kill with signal 0 only asks whether the group has members.
            !self.reaped || unsafe { libc::kill(-command, 0) } == 0
        }
    }

    /// Calls `f` with each child of the guard (Linux: /proc/thread-self/children); false
    /// when they cannot be listed.
    fn each_child(&self, mut f: impl FnMut(libc::pid_t)) -> bool {
        if !cfg!(target_os = "linux") {
            return false;
        }
        // SAFETY: open/read/close on a buffer of this frame.
        unsafe {
            let fd = libc::open(
                c"/proc/thread-self/children".as_ptr(),
                libc::O_RDONLY | libc::O_CLOEXEC,
            );
            if fd < 0 {
                return false;
            }
            let mut buf = [0u8; 4096];
            let mut pid: libc::pid_t = 0;
            let mut digits = false;
            loop {
                let n = libc::read(fd, buf.as_mut_ptr().cast(), buf.len());
                if n < 0 {
                    libc::close(fd);
                    return false;
                }
                if n == 0 {
                    break;
                }
                for &b in &buf[..n as usize] {
                    if b.is_ascii_digit() {
                        pid = pid
                            .saturating_mul(10)
                            .saturating_add(libc::pid_t::from(b - b'0'));
                        digits = true;
                    } else if digits {
                        f(pid);
                        (pid, digits) = (0, false);
                    }
                }
            }
            if digits {
                f(pid);
            }
            libc::close(fd);
            true
        }
    }
}
