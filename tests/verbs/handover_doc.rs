//! How-to guides that run as written: the shell block of docs/how-to/handover.md, of
//! docs/how-to/separate-files.md and of docs/how-to/decisions.md, each on a fresh store,
//! prints what its `# ->` lines say, in order.

use crate::common::Store;

#[test]
fn the_handover_walkthrough_prints_what_it_says() {
    runs_as_written("docs/how-to/handover.md");
}

#[test]
fn the_separate_files_walkthrough_prints_what_it_says() {
    runs_as_written("docs/how-to/separate-files.md");
}

#[test]
fn the_decisions_walkthrough_prints_what_it_says() {
    runs_as_written("docs/how-to/decisions.md");
}

fn runs_as_written(path: &str) {
    let doc = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(path))
        .expect("read the how-to");
    let start = doc.find("```sh\n").expect("a shell block") + 6;
    let script = &doc[start..start + doc[start..].find("```").expect("its end")];
    let expected: Vec<&str> = script
        .lines()
        .filter_map(|l| l.strip_prefix("# -> "))
        .collect();
    assert!(expected.len() >= 5, "{script}");
    let s = Store::new();
    let bin = std::path::Path::new(env!("CARGO_BIN_EXE_claimdag"));
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = std::process::Command::new("bash")
        .args(["-euo", "pipefail", "-c", script])
        .env("PATH", path)
        .env("CLAIMDAG_DIR", s.dir())
        .env_remove("CLAIMDAG_WORKSPACE")
        .env_remove("CLAIMDAG_ACTOR")
        .env_remove("CLAIMDAG_NODE")
        .env_remove("CLAIMDAG_GEN")
        .env("TMPDIR", s.scratch())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", s.scratch())
        .output()
        .expect("run bash");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(stdout.lines().collect::<Vec<_>>(), expected);
}
