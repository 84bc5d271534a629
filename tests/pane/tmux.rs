//! The live pane in a real terminal: tmux runs it; another process writes; keys claim and
//! quit; the terminal is restored on quitting and on a panic. tmux comes from the Debian
//! packages (`scripts/need.sh tmux`, run by `make test`).

use crate::common::{self, Store};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// A tmux server of its own (its socket in the test's directory), killed on drop.
pub(crate) struct Tmux {
    sock: PathBuf,
}

impl Tmux {
    pub(crate) fn new(dir: &Path) -> Tmux {
        let found = Command::new("tmux").arg("-V").output();
        assert!(
            found.is_ok_and(|o| o.status.success()),
            "tmux is missing: scripts/need.sh tmux installs it (make test runs it)"
        );
        Tmux {
            sock: dir.join("tmux.sock"),
        }
    }

    pub(crate) fn run(&self, args: &[&str]) -> String {
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
    pub(crate) fn wait_for(&self, text: &str) -> Duration {
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
/// terminal settings before and after (`stty -a` in `after-a`), and then prints how the pane
/// exited: once `PANE-EXITED-` shows, both files are written. The pane's process id is in
/// `pane.pid`.
fn start(tmux: &Tmux, s: &Store, env: &str, extra: &str) {
    start_in(
        tmux,
        s.scratch(),
        &s.dir().display().to_string(),
        env,
        extra,
    );
}

/// [`start`] on the store `store` (a directory or a URL), with its files in `scratch`.
pub(crate) fn start_in(tmux: &Tmux, scratch: &Path, store: &str, env: &str, extra: &str) {
    let dir = scratch.display().to_string();
    let cmd = format!(
        "cd '{dir}'; ulimit -c 0; stty -g > before; sh -c 'echo $$ > pane.pid; exec \"$@\"' sh env {env} '{}' --dir '{store}' pane {extra}; code=$?; stty -g > after; stty -a > after-a; echo PANE-EXITED-$code; sleep 60",
        common::bin(),
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

/// The terminal is as it was before the pane: the same `stty` settings (cooked: `icanon`,
/// `echo`) and the main screen.
fn assert_restored(tmux: &Tmux, s: &Store, what: &str) {
    assert!(
        !tmux.alternate_screen(),
        "{what}: back on the main screen:\n{}",
        tmux.screen()
    );
    let (before, after) = (s.scratch().join("before"), s.scratch().join("after"));
    assert_eq!(
        std::fs::read_to_string(before).unwrap(),
        std::fs::read_to_string(after).unwrap(),
        "{what}: stty settings restored"
    );
    let settings = std::fs::read_to_string(s.scratch().join("after-a")).unwrap();
    let words: Vec<&str> = settings.split([' ', ';', '\n']).collect();
    for w in ["icanon", "echo", "isig"] {
        assert!(words.contains(&w), "{what}: {w} is off:\n{settings}");
    }
}

/// The pane's process id, once it wrote it.
fn pane_pid(s: &Store) -> String {
    let f = s.scratch().join("pane.pid");
    let t = Instant::now();
    loop {
        if let Ok(p) = std::fs::read_to_string(&f) {
            if !p.trim().is_empty() {
                return p.trim().to_string();
            }
        }
        assert!(t.elapsed() < Duration::from_secs(20), "no pane.pid");
        std::thread::sleep(Duration::from_millis(25));
    }
}

#[test]
fn every_signal_that_ends_the_pane_restores_the_terminal() {
    for (name, number) in [("TERM", 15), ("HUP", 1), ("INT", 2), ("QUIT", 3)] {
        let s = Store::new();
        s.upsert("a node", &[]);
        let tmux = Tmux::new(s.scratch());
        start(&tmux, &s, "CLAIMDAG_ACTOR=name:lead", "");
        tmux.wait_for("a node");
        assert!(tmux.alternate_screen());
        let pid = pane_pid(&s);
        let kill = Command::new("kill")
            .args([&format!("-{name}"), &pid])
            .status()
            .unwrap();
        assert!(kill.success(), "kill -{name} {pid}");
        // It ends as the signal ends a process (the shell sees 128 + N) ...
        tmux.wait_for(&format!("PANE-EXITED-{}", 128 + number));
        // ... and the shell's terminal is back.
        assert_restored(&tmux, &s, &format!("SIG{name}"));
    }
}

#[test]
fn c_claims_an_expired_node_at_the_generation_the_pane_shows() {
    let s = Store::new();
    let a = s.upsert("an expired claim", &[]);
    s.claim(&a, "name:gone", &["--ttl", "300ms"]);
    let t = Instant::now();
    while s.display(&a) != "expired" {
        assert!(t.elapsed() < Duration::from_secs(20), "never expired");
        std::thread::sleep(Duration::from_millis(50));
    }
    let tmux = Tmux::new(s.scratch());
    start(
        &tmux,
        &s,
        "CLAIMDAG_ACTOR=name:lead",
        &format!("--select {}", &a[..8]),
    );
    tmux.wait_for("expired");
    // Nothing wrote since: the pane shows the expired claim at generation 2.
    assert!(
        tmux.screen().contains(&format!("{}  g2 ", &a[..8])),
        "{}",
        tmux.screen()
    );
    tmux.run(&["send-keys", "-t", "t", "c"]);
    tmux.wait_for(&format!("claimed {}... at gen 4", &a[..8]));
    let n = s.node(&a);
    assert_eq!(n["generation"], 4, "{n}");
    assert_eq!(n["holder"], s.ok(&["actor", "lead"]).trim(), "{n}");
    tmux.run(&["send-keys", "-t", "t", "q"]);
    tmux.wait_for("PANE-EXITED-0");
}

#[test]
fn scheduled_nodes_count_down_and_turn_ready_when_their_time_comes() {
    let s = Store::new();
    let soon = s.upsert("due in a moment", &["--not-before", "+5s"]);
    let later = s.upsert("tomorrow's report", &["--not-before", "+1h"]);
    let tmux = Tmux::new(s.scratch());
    start(&tmux, &s, "CLAIMDAG_ACTOR=name:lead", "");
    tmux.wait_for("scheduled 2");
    let line_of = |id: &str| {
        let screen = tmux.screen();
        let row = format!("{}  g1 ", &id[..8]);
        let line = screen
            .lines()
            .find(|l| l.contains(&row))
            .map(str::to_string);
        line.unwrap_or_else(|| panic!("no row of {id} on\n{screen}"))
    };
    let far = line_of(&later);
    assert!(
        far.contains("scheduled") && (far.contains("1h00m") || far.contains("59m")),
        "the word and the time till ready: {far}"
    );
    let near = line_of(&soon);
    assert!(near.contains("scheduled"), "{near}");
    // Nothing writes: the countdown runs out and the node shows ready.
    tmux.wait_for("ready 1");
    assert!(tmux.screen().contains("scheduled 1"), "{}", tmux.screen());
    let near = line_of(&soon);
    assert!(
        near.contains("ready") && !near.contains("scheduled"),
        "{near}"
    );
    // The search knows the word: /scheduled leaves the scheduled node only.
    tmux.run(&["send-keys", "-t", "t", "/", "scheduled", "Enter"]);
    tmux.wait_for("nodes 1/2");
    assert!(tmux.screen().contains(&later[..8]), "{}", tmux.screen());
    tmux.run(&["send-keys", "-t", "t", "q"]);
    tmux.wait_for("PANE-EXITED-0");
}

#[test]
fn capital_x_asks_for_a_reason_and_requests_a_cancel() {
    let s = Store::new();
    let a = s.upsert("a node someone works on", &[]);
    s.claim(&a, "name:w", &[]);
    let tmux = Tmux::new(s.scratch());
    start(
        &tmux,
        &s,
        "CLAIMDAG_ACTOR=name:lead",
        &format!("--select {}", &a[..8]),
    );
    tmux.wait_for("a node someone works on");
    tmux.run(&["send-keys", "-t", "t", "X"]);
    tmux.wait_for("cancel reason for");
    tmux.run(&["send-keys", "-t", "t", "-l", "not needed"]);
    tmux.wait_for("not needed_");
    tmux.run(&["send-keys", "-t", "t", "Enter"]);
    tmux.wait_for("cancel requested");
    tmux.wait_for("[cancel?] a node");
    let n = s.node(&a);
    assert_eq!(n["cancel_requested"]["reason"], "not needed", "{n}");
    assert_eq!(
        n["cancel_requested"]["by"],
        s.ok(&["actor", "lead"]).trim(),
        "{n}"
    );
    assert_eq!(
        (n["status"].as_str(), n["generation"].as_u64()),
        (Some("claimed"), Some(2))
    );
    tmux.run(&["send-keys", "-t", "t", "q"]);
    tmux.wait_for("PANE-EXITED-0");
}
