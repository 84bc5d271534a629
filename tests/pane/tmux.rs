//! The live pane in a real terminal: tmux runs it; another process writes; keys claim and
//! quit; the terminal is restored on quitting and on a panic. tmux comes from the Debian
//! packages (`scripts/need.sh tmux`, run by `make test`).

use crate::common::{self, Store};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// A tmux server of its own (its socket in the test's directory), killed on drop.
struct Tmux {
    sock: PathBuf,
}

impl Tmux {
    fn new(dir: &Path) -> Tmux {
        let found = Command::new("tmux").arg("-V").output();
        assert!(
            found.is_ok_and(|o| o.status.success()),
            "tmux is missing: scripts/need.sh tmux installs it (make test runs it)"
        );
        Tmux {
            sock: dir.join("tmux.sock"),
        }
    }

    fn run(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .arg("-S")
            .arg(&self.sock)
            .args(["-f", "/dev/null"])
            .args(args)
            .output()
            .expect("run tmux");
        assert!(
            out.status.success(),
            "tmux {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn screen(&self) -> String {
        self.run(&["capture-pane", "-p", "-t", "t"])
    }

    /// Waits until the screen shows `text` (at most 20 s); returns how long it took.
    fn wait_for(&self, text: &str) -> Duration {
        let t = Instant::now();
        loop {
            let s = self.screen();
            if s.contains(text) {
                return t.elapsed();
            }
            assert!(
                t.elapsed() < Duration::from_secs(20),
                "never saw {text:?} on\n{s}"
            );
            std::thread::sleep(Duration::from_millis(25));
        }
    }

    fn alternate_screen(&self) -> bool {
        self.run(&["display-message", "-p", "-t", "t", "#{alternate_on}"])
            .trim()
            == "1"
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .arg("-S")
            .arg(&self.sock)
            .arg("kill-server")
            .output();
    }
}

/// Starts `claimdag pane EXTRA...` in a 120x40 tmux window; the shell around it saves the
/// terminal settings before and after, and prints how the pane exited.
fn start(tmux: &Tmux, s: &Store, env: &str, extra: &str) {
    let dir = s.scratch().display().to_string();
    let cmd = format!(
        "cd '{dir}'; stty -g > before; env {env} '{}' --dir '{}' pane {extra}; echo PANE-EXITED-$?; stty -g > after; sleep 60",
        common::bin(),
        s.dir().display()
    );
    tmux.run(&[
        "new-session",
        "-d",
        "-s",
        "t",
        "-x",
        "120",
        "-y",
        "40",
        "sh",
        "-c",
        &cmd,
    ]);
}

#[test]
fn the_live_pane_follows_writes_claims_with_a_key_and_restores_the_terminal() {
    let s = Store::new();
    let a = s.upsert("the first node", &["--estimate", "5"]);
    let tmux = Tmux::new(s.scratch());
    start(&tmux, &s, "CLAIMDAG_ACTOR=name:lead", "");
    tmux.wait_for("the first node");
    assert!(
        tmux.alternate_screen(),
        "the pane draws on the alternate screen"
    );
    // Another process writes: the pane shows it without a key pressed.
    s.upsert("written elsewhere", &[]);
    let took = tmux.wait_for("written elsewhere");
    eprintln!(
        "a write by another process showed after {} ms",
        took.as_millis()
    );
    // n claims the next node as the pane's actor.
    tmux.run(&["send-keys", "-t", "t", "n"]);
    tmux.wait_for(&format!("claimed {}...", &a[..8]));
    let held = s.ok(&["list", "--holder", "name:lead"]);
    assert!(held.contains(&a[..8]), "{held}");
    // q quits; the terminal is as it was.
    tmux.run(&["send-keys", "-t", "t", "q"]);
    tmux.wait_for("PANE-EXITED-0");
    assert!(!tmux.alternate_screen(), "back on the main screen");
    let (before, after) = (s.scratch().join("before"), s.scratch().join("after"));
    assert_eq!(
        std::fs::read(before).unwrap(),
        std::fs::read(after).unwrap(),
        "stty settings restored"
    );
}

#[test]
fn a_panic_in_the_pane_still_restores_the_terminal() {
    let s = Store::new();
    s.upsert("a node", &[]);
    let tmux = Tmux::new(s.scratch());
    start(&tmux, &s, "CLAIMDAG_PANE_PANIC=1", "");
    tmux.wait_for("PANE-EXITED-");
    let screen = tmux.screen();
    assert!(
        !screen.contains("PANE-EXITED-0"),
        "a panic is not a clean exit:\n{screen}"
    );
    assert!(
        screen.contains("CLAIMDAG_PANE_PANIC"),
        "the panic message shows:\n{screen}"
    );
    assert!(!tmux.alternate_screen());
    let (before, after) = (s.scratch().join("before"), s.scratch().join("after"));
    assert_eq!(
        std::fs::read(before).unwrap(),
        std::fs::read(after).unwrap(),
        "stty settings restored"
    );
}
