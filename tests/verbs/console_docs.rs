//! Pages written as console sessions run as written: the README's tour, docs/tutorial.md and
//! the how-to guides in that form, each from an empty store: every `$ ` command of a page's
//! indented blocks in one shell, in order, each printing what the page shows under it
//! (a command the page shows no output for is run, not compared). A fenced block whose info
//! string names a file (```` ```json file=plan.json ````) is written to that file first.
//! A command runs on as long as the shell would wait for more (a loop over several lines).
//! Times are compared as `<time>`, durations (`0.3s`, `"duration_ms":304`) as `<dur>`; a
//! `...` line stands for any lines. The directories a page names for its store (`/tmp/tut`,
//! `/tmp/demo-claims`, `/srv/claims`) are temporary ones, with `docs/examples/` of the
//! checkout in the one the session runs in. Steps inside an HTML comment (`<!-- -->`, not
//! shown on the page) set the scene: a page's section may begin where a story left off.

use std::fmt::Write as _;
use std::path::Path;

/// One command of a page and what the page shows it printing.
struct Step {
    command: String,
    expected: Vec<String>,
}

/// The files and the steps of a page, in order: `Err` a file to write, `Ok` a step.
fn parse(doc: &str) -> Vec<Result<Step, (String, String)>> {
    let mut out = Vec::new();
    let mut lines = doc.lines().peekable();
    while let Some(line) = lines.next() {
        if let Some(info) = line.strip_prefix("```") {
            let mut body = String::new();
            for l in lines.by_ref() {
                if l.starts_with("```") {
                    break;
                }
                let _ = writeln!(body, "{l}");
            }
            if let Some(name) = info
                .split_whitespace()
                .find_map(|w| w.strip_prefix("file="))
            {
                out.push(Err((name.to_string(), body)));
            }
            continue;
        }
        if let Some(cmd) = line.strip_prefix("    $ ") {
            let mut command = cmd.to_string();
            while !complete(&command) {
                let more = lines.peek().and_then(|l| l.strip_prefix("    "));
                let more = more.unwrap_or_else(|| panic!("a command left open:\n{command}"));
                command = format!("{command}\n{more}");
                lines.next();
            }
            let mut expected = Vec::new();
            while let Some(next) = lines.peek() {
                match next.strip_prefix("    ") {
                    Some(l) if !l.starts_with("$ ") => {
                        expected.push(l.to_string());
                        lines.next();
                    }
                    _ => break,
                }
            }
            out.push(Ok(Step { command, expected }));
        }
    }
    out
}

/// Whether bash reads `command` as a whole (not a loop, a quote or a `\` line end left
/// open).
pub fn complete(command: &str) -> bool {
    if command.ends_with('\\') {
        return false;
    }
    std::process::Command::new("bash")
        .args(["-n", "-c", command])
        .stderr(std::process::Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(true)
}

/// Times as `<time>` and durations as `<dur>`: the line a page's and a run's must share.
fn times(text: &str) -> String {
    durations(&stamps(text)).0
}

/// Whether a run's line is the page's: the same once times and durations are set aside,
/// and each duration within 10% (at least 2 s) of the one the page shows.
fn same(expected: &str, got: &str) -> bool {
    let (te, ve) = durations(&stamps(expected));
    let (tg, vg) = durations(&stamps(got));
    te.trim_end() == tg.trim_end()
        && ve.len() == vg.len()
        && ve
            .iter()
            .zip(&vg)
            .all(|(e, g)| (e - g).abs() <= (e * 0.1).max(2.0))
}

/// `0.3s`, `12.5s` (a number with a fraction, then `s`, as a word), `9m46s` and
/// `"duration_ms":304` as `<dur>`, with their values in seconds.
fn durations(text: &str) -> (String, Vec<f64>) {
    let mut values = Vec::new();
    let text = {
        let mut out = String::new();
        let mut rest = text;
        while let Some(k) = rest.find("\"duration_ms\":") {
            let (head, tail) = rest.split_at(k + 14);
            out.push_str(head);
            let digits = tail.len() - tail.trim_start_matches(|c: char| c.is_ascii_digit()).len();
            values.push(tail[..digits].parse::<f64>().unwrap_or(0.0) / 1000.0);
            rest = &tail[digits..];
            out.push_str("<dur>");
        }
        out + rest
    };
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        let word_start = i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'.');
        if word_start && b[i].is_ascii_digit() {
            let mut j = i;
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
            // `9m46s`, a lease left: its column is right-aligned, so the spaces before go
            // with it.
            let clock = j + 3 < b.len()
                && b[j] == b'm'
                && b[j + 1].is_ascii_digit()
                && b[j + 2].is_ascii_digit()
                && b[j + 3] == b's'
                && (j + 4 >= b.len() || !b[j + 4].is_ascii_alphanumeric());
            if clock {
                let minutes: f64 = text[i..j].parse().unwrap_or(0.0);
                let seconds: f64 = text[j + 1..j + 3].parse().unwrap_or(0.0);
                values.push(minutes * 60.0 + seconds);
                let kept = out.trim_end_matches(' ').len();
                let spaced = kept < out.len();
                out.truncate(kept);
                out.push_str(if spaced { " <dur>" } else { "<dur>" });
                i = j + 4;
                continue;
            }
            let frac = j + 1 < b.len() && b[j] == b'.' && b[j + 1].is_ascii_digit();
            if frac {
                let mut k = j + 1;
                while k < b.len() && b[k].is_ascii_digit() {
                    k += 1;
                }
                let ends = k + 1 >= b.len() || !b[k + 1].is_ascii_alphanumeric();
                if k < b.len() && b[k] == b's' && ends {
                    values.push(text[i..k].parse().unwrap_or(0.0));
                    out.push_str("<dur>");
                    i = k + 1;
                    continue;
                }
            }
        }
        let c = text[i..].chars().next().unwrap_or(' ');
        out.push(c);
        i += c.len_utf8();
    }
    (out, values)
}

/// Times as `<time>`.
fn stamps(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        let t = &b[i..];
        let stamp = t.len() >= 24
            && t[..4].iter().all(u8::is_ascii_digit)
            && t[4] == b'-'
            && t[10] == b'T'
            && t[19] == b'.'
            && t[23] == b'Z';
        if stamp {
            out.push_str("<time>");
            i += 24;
        } else {
            let c = text[i..].chars().next().unwrap_or(' ');
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// Whether `got` is what the page shows: line for line, a `...` line standing for any.
fn fits(expected: &[String], got: &[String]) -> bool {
    match expected.split_first() {
        None => got.is_empty(),
        Some((e, rest)) if e.trim() == "..." => (0..=got.len()).any(|k| fits(rest, &got[k..])),
        Some((e, rest)) => got.first().is_some_and(|g| same(e, g)) && fits(rest, &got[1..]),
    }
}

/// Runs `page`'s session in a fresh directory; each step must print what the page shows.
fn runs_as_written(page: &str) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join(page)).expect("read the page");
    let tmp = tempfile::tempdir().expect("tempdir");
    let tut = tmp.path().join("tut");
    std::fs::create_dir_all(tut.join("docs/examples")).expect("mkdir");
    for f in std::fs::read_dir(root.join("docs/examples")).expect("docs/examples") {
        let f = f.expect("an example");
        std::fs::copy(f.path(), tut.join("docs/examples").join(f.file_name())).expect("copy");
    }
    let here = |s: &str| {
        let mut s = s.replace("/tmp/tut", &tut.to_string_lossy());
        for (named, dir) in [("/tmp/demo-claims", "demo"), ("/srv/claims", "srv")] {
            s = s.replace(named, &tmp.path().join(dir).to_string_lossy());
        }
        s
    };
    let mut script = String::from("set +e\n");
    let mut steps = Vec::new();
    for item in parse(&doc) {
        match item {
            Err((name, body)) => {
                std::fs::write(tut.join(name), body).expect("write the page's file");
            }
            Ok(step) => {
                // The marker carries the last step's exit status, and `$?` is still that
                // status in the next step (`echo $?`).
                let _ = writeln!(
                    script,
                    "__status=$?; echo \"@@step {} $__status\"; (exit $__status)",
                    steps.len()
                );
                // On a line of its own, so that a comment ending the command stays one.
                let _ = writeln!(script, "{{ {}\n}} 2>&1", here(&step.command));
                steps.push(step);
            }
        }
    }
    let _ = writeln!(script, "echo \"@@step {} $?\"", steps.len());
    assert!(steps.len() >= 4, "{page}: {} steps", steps.len());
    let bin = Path::new(env!("CARGO_BIN_EXE_claimdag"));
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = std::process::Command::new("bash")
        .args(["-c", &script])
        .current_dir(&tut)
        .env_clear()
        .env("PATH", path)
        .env("HOME", tmp.path())
        .env("TMPDIR", tmp.path())
        .output()
        .expect("run bash");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut printed: Vec<Vec<String>> = vec![Vec::new(); steps.len() + 1];
    // The exit status of each step, from the marker after it.
    let mut status: Vec<Option<i32>> = vec![None; steps.len()];
    let mut at = None;
    for line in stdout.lines() {
        if let Some(marker) = line.strip_prefix("@@step ") {
            let (n, s) = marker.split_once(' ').unwrap_or((marker, ""));
            at = n.parse::<usize>().ok();
            if let Some(k) = at.and_then(|k| k.checked_sub(1)) {
                status[k] = s.parse().ok();
            }
        } else if let Some(k) = at {
            printed[k].push(here_back(line, tmp.path()));
        }
    }
    assert_eq!(
        at,
        Some(steps.len()),
        "{page}: the session stopped early:\n{stdout}"
    );
    let compared = steps.iter().filter(|s| !s.expected.is_empty()).count();
    assert!(compared >= 1, "{page}: no step shows what it prints");
    for (k, step) in steps.iter().enumerate() {
        // A step the page shows no output for must at least succeed.
        if step.expected.is_empty() {
            assert_eq!(
                status[k],
                Some(0),
                "{page}: `{}` failed:\n{}",
                step.command,
                printed[k].join("\n")
            );
            continue;
        }
        assert!(
            fits(&step.expected, &printed[k]),
            "{page}: `{}` printed\n{}\nbut the page shows\n{}",
            step.command,
            printed[k].join("\n"),
            step.expected.join("\n")
        );
    }
}

/// A line of the run with the temporary directories written as the page writes them.
fn here_back(line: &str, tmp: &Path) -> String {
    let mut line = line.to_string();
    for (dir, named) in [
        ("tut", "/tmp/tut"),
        ("demo", "/tmp/demo-claims"),
        ("srv", "/srv/claims"),
    ] {
        line = line.replace(&*tmp.join(dir).to_string_lossy(), named);
    }
    line
}

#[test]
fn the_tutorial_runs_as_written() {
    runs_as_written("docs/tutorial.md");
}

#[test]
fn the_readme_tour_runs_as_written() {
    runs_as_written("README.md");
}

#[test]
fn the_console_how_tos_run_as_written() {
    for page in [
        "docs/how-to/workspaces.md",
        "docs/how-to/archive.md",
        "docs/how-to/pick-next.md",
        "docs/how-to/stalled-worker.md",
        "docs/how-to/workers.md",
        "docs/how-to/diff-check.md",
        "docs/how-to/pane.md",
    ] {
        runs_as_written(page);
    }
}

#[test]
fn the_runner_reads_steps_files_and_elisions() {
    let doc = "x\n```json file=a.json\n{}\n```\n    $ one\n    out 1\n    ...\n    $ two\n";
    let parsed = parse(doc);
    assert!(matches!(&parsed[0], Err((n, b)) if n == "a.json" && b == "{}\n"));
    let one = parsed[1].as_ref().ok().unwrap();
    assert_eq!((one.command.as_str(), one.expected.len()), ("one", 2));
    let got = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert!(fits(&one.expected, &got(&["out 1", "a", "b"])));
    assert!(!fits(&one.expected, &got(&["out 2"])));
    assert_eq!(times("at 2026-12-01T09:54:16.298Z ok"), "at <time> ok");
    assert_eq!(
        times("done   0.3s  x; v1.2s 3s 12.25s: {\"duration_ms\":304}"),
        "done   <dur>  x; v1.2s 3s <dur>: {\"duration_ms\":<dur>}"
    );
    assert_eq!(times("w1   9m46s  x"), times("w1  10m00s  x"));
    assert_eq!(times("left 4m05s"), "left <dur>");
    // Within 10% (at least 2 s) of what the page shows, not any value.
    assert!(same("w1  15m00s  x", "w1  14m59s  x"));
    assert!(!same("w1   4m00s  x", "w1  15m00s  x"));
    assert!(same("{\"duration_ms\":304}", "{\"duration_ms\":1200}"));
    assert!(!same("{\"duration_ms\":304}", "{\"duration_ms\":9000}"));
    assert!(same("done   0.3s  x", "done   1.1s  x") && !same("a 0.3s", "a 30.0s"));
    let looped = parse("    $ for w in 1 2; do\n        echo $w\n      done\n    1\n    2\n");
    let step = looped[0].as_ref().ok().unwrap();
    assert_eq!(step.command.lines().count(), 3);
    assert_eq!(step.expected, ["1", "2"]);
}
