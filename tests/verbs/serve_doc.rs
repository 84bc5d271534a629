//! docs/how-to/serve.md runs as written against a real `claimdag serve` on a fresh store:
//! every `sh` block of the page (those inside an HTML comment too: they set the scene, unseen
//! on the page), in order, in one shell, with the server's port for 7878; the `# ` lines
//! that follow a command are what it prints, a `...` in them standing for any text and a
//! line that starts `#  ` continuing the one before. A block whose info string says `norun`
//! (the server's own start, a stream that never ends, a machine's /etc) is not run.

use super::console_docs::complete;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

struct Step {
    command: String,
    expected: Vec<String>,
}

/// The steps of the page's `sh` blocks, in order.
fn steps(doc: &str) -> Vec<Step> {
    let mut out: Vec<Step> = Vec::new();
    let mut lines = doc.lines();
    while let Some(line) = lines.next() {
        let fence = line.trim_start();
        let Some(info) = fence.strip_prefix("```") else {
            continue;
        };
        let indent = line.len() - fence.len();
        let block: Vec<String> = lines
            .by_ref()
            .take_while(|l| !l.trim_start().starts_with("```"))
            .map(|l| l.get(indent..).unwrap_or("").to_string())
            .collect();
        let words: Vec<&str> = info.split_whitespace().collect();
        if words.first() != Some(&"sh") || words.contains(&"norun") {
            continue;
        }
        let mut k = 0;
        while k < block.len() {
            let line = &block[k];
            k += 1;
            if line.starts_with('#') || line.trim().is_empty() {
                continue;
            }
            let mut command = line.clone();
            while !complete(&command) {
                let more = block.get(k);
                let more = more.unwrap_or_else(|| panic!("a command left open:\n{command}"));
                command = format!("{command}\n{more}");
                k += 1;
            }
            let mut expected: Vec<String> = Vec::new();
            while let Some(l) = block.get(k).and_then(|l| l.strip_prefix('#')) {
                match (l.strip_prefix("  "), expected.last_mut()) {
                    (Some(more), Some(last)) => *last = format!("{last} {more}"),
                    _ => expected.push(l.strip_prefix(' ').unwrap_or(l).to_string()),
                }
                k += 1;
            }
            out.push(Step { command, expected });
        }
    }
    out
}

/// Whether `got` is `expected` with each `...` standing for any text.
fn fits(expected: &str, got: &str) -> bool {
    let mut parts = expected.split("...");
    let first = parts.next().unwrap_or("");
    let Some(mut rest) = got.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    for (i, p) in parts.iter().enumerate() {
        if i + 1 == parts.len() {
            return rest.ends_with(p);
        }
        match rest.find(p) {
            Some(at) => rest = &rest[at + p.len()..],
            None => return false,
        }
    }
    rest.is_empty()
}

/// The server, stopped however the test ends.
struct Stopped(std::process::Child);

impl Drop for Stopped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn serve_md_runs_as_written() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join("docs/how-to/serve.md")).expect("read");
    let steps = steps(&doc);
    assert!(steps.len() >= 8, "{} steps", steps.len());
    let tmp = tempfile::tempdir().expect("tempdir");
    let store = tmp.path().join("claims");
    let bin = Path::new(env!("CARGO_BIN_EXE_claimdag"));
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let mut server = Stopped(
        Command::new(bin)
            .args(["--dir", &store.to_string_lossy(), "serve", "--listen"])
            .arg(format!("127.0.0.1:{port}"))
            .env_remove("CLAIMDAG_WORKSPACE")
            .env_remove("CLAIMDAG_ACTOR")
            .stderr(Stdio::piped())
            .spawn()
            .expect("start claimdag serve"),
    );
    let mut said = BufReader::new(server.0.stderr.take().expect("stderr"));
    let mut line = String::new();
    while said.read_line(&mut line).expect("its stderr") > 0 && !line.contains("dashboard") {}
    assert!(line.contains(&format!("127.0.0.1:{port}")), "{line}");
    std::thread::spawn(move || std::io::copy(&mut said, &mut std::io::sink()));
    let mut script = String::from("set +e\n");
    for (k, s) in steps.iter().enumerate() {
        let command = s.command.replace("7878", &port.to_string());
        // The marker carries the last step's exit status.
        script.push_str(&format!("echo \"@@step {k} $?\"\n{{ {command}\n}} 2>&1\n"));
    }
    script.push_str(&format!("echo \"@@step {} $?\"\n", steps.len()));
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new("bash")
        .args(["-c", &script])
        .current_dir(tmp.path())
        .env_clear()
        .env("PATH", path)
        .env("HOME", tmp.path())
        .env("CLAIMDAG_DIR", &store)
        .output()
        .expect("run bash");
    drop(server);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let mut printed: Vec<Vec<&str>> = vec![Vec::new(); steps.len() + 1];
    let mut status: Vec<Option<i32>> = vec![None; steps.len()];
    let mut at = None;
    for l in stdout.lines() {
        match l.strip_prefix("@@step ") {
            Some(marker) => {
                let (n, s) = marker.split_once(' ').unwrap_or((marker, ""));
                at = n.parse::<usize>().ok();
                if let Some(k) = at.and_then(|k| k.checked_sub(1)) {
                    status[k] = s.parse().ok();
                }
            }
            None => {
                if let Some(k) = at {
                    printed[k].push(l);
                }
            }
        }
    }
    assert_eq!(at, Some(steps.len()), "serve.md stopped early:\n{stdout}");
    for (k, s) in steps.iter().enumerate() {
        // Every step succeeds (curl does for a refused call too: it prints the body).
        assert_eq!(
            status[k],
            Some(0),
            "serve.md: `{}` failed:\n{}",
            s.command,
            printed[k].join("\n")
        );
    }
    for (k, s) in steps
        .iter()
        .enumerate()
        .filter(|(_, s)| !s.expected.is_empty())
    {
        let ok = s.expected.len() == printed[k].len()
            && s.expected.iter().zip(&printed[k]).all(|(e, g)| fits(e, g));
        assert!(
            ok,
            "serve.md: `{}` printed\n{}\nbut the page shows\n{}",
            s.command,
            printed[k].join("\n"),
            s.expected.join("\n")
        );
    }
}

#[test]
fn the_runner_reads_commands_their_output_and_elisions() {
    let doc = "```sh norun\nx\n```\ntext\n  ```sh\n  a=1 # set\n  for i in 1; do\n    echo $i\n  done\n  # 1\n  curl x\n  # {\"a\":\n  #  1} 409\n  ```\n";
    let s = steps(doc);
    assert_eq!(s.len(), 3);
    assert_eq!(s[1].command.lines().count(), 3);
    assert_eq!(s[1].expected, ["1"]);
    assert_eq!(s[2].expected, ["{\"a\": 1} 409"]);
    assert!(fits(
        "{\"id\":\"a84a4bf2...\",\"g\":2}",
        "{\"id\":\"a84a4bf2abc\",\"g\":2}"
    ));
    assert!(!fits(
        "{\"id\":\"a84a4bf2...\",\"g\":2}",
        "{\"id\":\"a84a4bf2abc\",\"g\":3}"
    ));
    assert!(fits("a", "a") && !fits("a", "ab") && fits("a ... z", "a b c z"));
}
