//! Tests only root can run: each mounts a small tmpfs and fills it. A full file system is a
//! clean `io` error that loses no committed write; a compaction that runs out of space keeps
//! the write that triggered it and leaves no temporary behind, so the store writes again once
//! there is room; and a fleet of workers on a disk that fills again and again leaves a history
//! the checker (tests/common/checker.rs) finds clean. Ignored in a normal run; `make
//! test-rust` runs them as root.

#[path = "../common/mod.rs"]
mod common;

use common::{is_root, refused_io, run_bounded, Run};
use std::path::{Path, PathBuf};
use std::process::Command;

/// A tmpfs mounted for one test, unmounted on drop.
struct Tmpfs(PathBuf);

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

/// Mounts a tmpfs of `size` at `at`; `Err` says why it could not.
fn tmpfs(at: &Path, size: &str) -> Result<Tmpfs, String> {
    if !is_root() {
        return Err("mounting a tmpfs needs root".into());
    }
    std::fs::create_dir_all(at).map_err(|e| e.to_string())?;
    let out = Command::new("mount")
        .args([
            "-t",
            "tmpfs",
            "-o",
            &format!("size={size},mode=0700"),
            "tmpfs",
        ])
        .arg(at)
        .output()
        .map_err(|e| format!("cannot run mount: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "mount -t tmpfs failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(Tmpfs(at.to_path_buf()))
}

/// Fills the file system holding `dir` until less than `leave` bytes are free.
fn fill(dir: &Path, leave: u64) -> PathBuf {
    let filler = dir.join("filler");
    // SAFETY: statvfs writes into the zeroed struct it is given.
    let free = {
        let c = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()).expect("path");
        let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
        let r = unsafe { libc::statvfs(c.as_ptr(), &mut st) };
        assert_eq!(r, 0, "statvfs");
        st.f_bavail * st.f_frsize
    };
    let size = free.saturating_sub(leave) as usize;
    match std::fs::write(&filler, vec![b'f'; size]) {
        Ok(()) => {}
        // Others wrote meanwhile, and the disk filled before the filler did: full, as wanted
        // (what was written stays in the filler).
        Err(e) if e.kind() == std::io::ErrorKind::StorageFull => {}
        Err(e) => panic!("write filler: {e}"),
    }
    filler
}

#[test]
#[ignore = "needs root: it mounts a small tmpfs and fills it"]
fn a_full_file_system_is_a_clean_io_error_and_loses_no_committed_write() {
    let scratch = tempfile::tempdir().expect("tempdir");
    let mnt = scratch.path().join("mnt");
    let _fs = tmpfs(&mnt, "4m")
        .unwrap_or_else(|why| panic!("a full disk is simulated with a small tmpfs, and {why}"));
    let dir = mnt.join("store");
    let run = |args: &[&str]| {
        let mut c = common::command();
        c.arg("--dir").arg(&dir).args(args);
        run_bounded(c, &format!("{args:?}"))
    };
    let mut ids = Vec::new();
    for k in 0..5 {
        let r = run(&[
            "upsert",
            "--summary",
            &format!("before the disk filled {k}"),
        ]);
        assert_eq!(r.code, Some(0), "{}", r.stderr);
        ids.push(r.stdout.trim().to_string());
    }
    let filler = fill(&mnt, 8 * 1024);
    // Writes with 1 KiB summaries until the disk is full (the journal's reserve, written
    // before the disk filled, takes the first ones).
    let mut refused = None;
    for k in 0..512 {
        let summary = format!("{k} {}", "z".repeat(1000));
        let r = run(&["upsert", "--summary", &summary]);
        match r.code {
            Some(0) => ids.push(r.stdout.trim().to_string()),
            _ => {
                refused = Some(r);
                break;
            }
        }
    }
    let r = refused.expect("the disk never filled");
    refused_io(
        &r,
        &dir.join("journal"),
        "No space left",
        "a write on a full disk",
    );
    // Reads need no space: the store is whole, with every write that succeeded.
    let r = run(&["--json", "list"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let listed: Vec<String> = r
        .json()
        .as_array()
        .expect("array")
        .iter()
        .map(|n| n["id"].as_str().expect("id").to_string())
        .collect();
    assert_eq!(listed, ids, "after the disk filled");
    let r = run(&["check"]);
    assert_eq!(
        r.code,
        Some(0),
        "check on a full disk: {}{}",
        r.stdout,
        r.stderr
    );
    // Room again: the next write works.
    std::fs::remove_file(&filler).expect("remove filler");
    let r = run(&["upsert", "--summary", "after the disk emptied"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let r = run(&["check"]);
    assert_eq!(r.code, Some(0), "{}{}", r.stdout, r.stderr);
}

#[test]
#[ignore = "needs root: it mounts a small tmpfs and fills it"]
fn a_compaction_that_runs_out_of_space_keeps_the_committed_write() {
    let scratch = tempfile::tempdir().expect("tempdir");
    let mnt = scratch.path().join("mnt");
    let _fs = tmpfs(&mnt, "6m")
        .unwrap_or_else(|why| panic!("a full disk is simulated with a small tmpfs, and {why}"));
    let dir = mnt.join("store");
    let run = |args: &[&str]| {
        let mut c = common::command();
        c.arg("--dir").arg(&dir).args(args);
        run_bounded(c, &format!("{args:?}"))
    };
    let label = "l".repeat(240);
    let mut ids = journal_just_under_the_threshold(&run, &dir, &label);
    // Room for the next record and a little more, not for a new snapshot.
    let filler = fill(&mnt, 400 * 1024);
    let labels: Vec<String> = (0..1000).map(|i| format!("x-{i}-{label}")).collect();
    let mut args = vec!["upsert", "--summary", "the write that compacts"];
    for l in &labels {
        args.extend(["--label", l.as_str()]);
    }
    let r = run(&args);
    assert_eq!(
        r.code,
        Some(0),
        "the write is committed before compaction: {}",
        r.stderr
    );
    ids.push(r.stdout.trim().to_string());
    assert!(
        common::journal_used_len(&dir) > 1 << 20,
        "the compaction did not fail: the test needs a fuller disk"
    );
    let r = run(&["check"]);
    assert_eq!(r.code, Some(0), "{}{}", r.stdout, r.stderr);
    let all = run(&["--json", "list"]);
    assert_eq!(ids_of(&all), ids);
    with_room_again_the_next_write_compacts(&run, &dir, &filler, ids.len());
}

/// A compaction that runs out of space removes its temporary snapshot: the store does not
/// stay full of it, so once there is room again (a file beside the store removed) writes
/// succeed and the compaction runs. Before, the first compaction that ran out of space left
/// `snapshot.json.tmp` (about 40% of the disk) behind, and every later write failed with
/// `No space left on device` for good, compaction running only after a write that succeeds.
#[test]
#[ignore = "needs root: it mounts a small tmpfs and fills it"]
fn a_compaction_that_runs_out_of_space_leaves_no_temporary_and_the_store_recovers() {
    let scratch = tempfile::tempdir().expect("tempdir");
    let mnt = scratch.path().join("mnt");
    let _fs = tmpfs(&mnt, "2m")
        .unwrap_or_else(|why| panic!("a full disk is simulated with a small tmpfs, and {why}"));
    let dir = mnt.join("store");
    // The shipped compaction threshold (the tests pin 1 MiB).
    let run = |args: &[&str]| {
        let mut c = common::command();
        c.env("CLAIMDAG_COMPACT_MIN_BYTES", (16 << 10).to_string());
        c.arg("--dir").arg(&dir).args(args);
        run_bounded(c, &format!("{args:?}"))
    };
    // A file beside the store takes all but 768 KiB, to be removed later.
    let filler = fill(&mnt, 768 * 1024);
    let mut ids = Vec::new();
    let refused = upsert_until_the_disk_fills(&run, &mut ids);
    refused_io(
        &refused,
        &dir.join("journal"),
        "No space left",
        "a write on a full disk",
    );
    assert!(
        ids.len() > 100,
        "only {} writes before the disk filled",
        ids.len()
    );
    assert!(
        !dir.join("snapshot.json.tmp").exists(),
        "a compaction that ran out of space left its temporary snapshot ({} bytes) after {} writes",
        std::fs::metadata(dir.join("snapshot.json.tmp")).map_or(0, |m| m.len()),
        ids.len()
    );
    let listed = |r: common::Run| -> Vec<String> {
        assert_eq!(r.code, Some(0), "{}", r.stderr);
        ids_of(&r)
    };
    assert_eq!(listed(run(&["--json", "list"])), ids, "on a full disk");
    // Room again: writes succeed, the journal is compacted, nothing is lost.
    std::fs::remove_file(&filler).expect("remove filler");
    for k in 0..3 {
        let r = run(&[
            "upsert",
            "--summary",
            &format!("after the disk emptied {k}"),
        ]);
        assert_eq!(r.code, Some(0), "{}", r.stderr);
        ids.push(r.stdout.trim().to_string());
    }
    let journal = common::journal_used_len(&dir);
    assert!(
        journal < 64 * 1024,
        "not compacted: journal of {journal} bytes"
    );
    assert!(
        !dir.join("snapshot.json.tmp").exists(),
        "a temporary was left"
    );
    assert_eq!(listed(run(&["--json", "list"])), ids, "once there was room");
    let r = run(&["check"]);
    assert_eq!(r.code, Some(0), "{}{}", r.stdout, r.stderr);
}

/// How a test runs the binary on its store.
type Runs<'a> = &'a dyn Fn(&[&str]) -> Run;

/// The ids `list --json` printed, in its order.
fn ids_of(r: &Run) -> Vec<String> {
    r.json()
        .as_array()
        .expect("array")
        .iter()
        .map(|n| n["id"].as_str().expect("id").to_string())
        .collect()
}

/// A journal just under the compaction threshold in `dir`, of a state about as large: three
/// nodes with 1300 labels each (made of `label`). Returns their ids.
fn journal_just_under_the_threshold(run: Runs, dir: &Path, label: &str) -> Vec<String> {
    let mut ids = Vec::new();
    for n in 0..3 {
        let labels: Vec<String> = (0..1300).map(|i| format!("{n}-{i}-{label}")).collect();
        let summary = format!("big {n}");
        let mut args = vec!["upsert", "--summary", summary.as_str()];
        for l in &labels {
            args.extend(["--label", l.as_str()]);
        }
        let r = run(&args);
        assert_eq!(r.code, Some(0), "{}", r.stderr);
        ids.push(r.stdout.trim().to_string());
    }
    let journal = common::journal_used_len(dir);
    assert!(
        (900_000..1 << 20).contains(&journal),
        "journal of {journal} bytes"
    );
    ids
}

/// With room again (`filler` removed) the next write compacts the journal of `dir`, and
/// everything is still there: the history holds the `writes` before it and this one.
fn with_room_again_the_next_write_compacts(run: Runs, dir: &Path, filler: &Path, writes: usize) {
    std::fs::remove_file(filler).expect("remove filler");
    let r = run(&["upsert", "--summary", "after the disk emptied"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(
        common::journal_used_len(dir) < 64 * 1024,
        "the journal was not compacted once there was room"
    );
    assert!(dir.join("history.jsonl").exists());
    assert!(
        !dir.join("snapshot.json.tmp").exists(),
        "a temporary was left"
    );
    let r = run(&["check"]);
    assert_eq!(r.code, Some(0), "{}{}", r.stdout, r.stderr);
    let r = run(&["--json", "log"]);
    assert_eq!(r.json().as_array().map(Vec::len), Some(writes + 1));
}

/// Upserts with 400-byte summaries until one fails, adding the ids of those that did not to
/// `ids`; returns the one that failed.
fn upsert_until_the_disk_fills(run: Runs, ids: &mut Vec<String>) -> Run {
    (0..20_000)
        .find_map(|k| {
            let summary = format!("{k:05} {}", "s".repeat(394));
            let r = run(&["upsert", "--summary", &summary]);
            match r.code {
                Some(0) => {
                    ids.push(r.stdout.trim().to_string());
                    None
                }
                _ => Some(r),
            }
        })
        .expect("the disk never filled")
}

#[test]
#[ignore = "needs root: it mounts a small tmpfs and fills it"]
fn a_fleet_on_a_disk_that_keeps_filling_leaves_a_clean_history() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let scratch = tempfile::tempdir().expect("tempdir");
    let mnt = scratch.path().join("mnt");
    let _fs = tmpfs(&mnt, "16m")
        .unwrap_or_else(|why| panic!("a full disk is simulated with a small tmpfs, and {why}"));
    let plan = common::fleet::Plan {
        dir: mnt.join("store").to_str().expect("utf-8").to_string(),
        workers: 4,
        nodes: 16,
        run_for: std::time::Duration::from_secs(10),
        ttl_ms: 800,
        fault_env: None,
        seed: common::Rng::from_env("fleet (full disk)").next(),
    };
    // The disk is full (4 KiB left) for 300 ms of every second.
    let fills = std::sync::atomic::AtomicUsize::new(0);
    let filling = |stop: &AtomicBool| {
        while !stop.load(Ordering::SeqCst) {
            std::thread::sleep(std::time::Duration::from_millis(700));
            let filler = fill(&mnt, 4 * 1024);
            fills.fetch_add(1, Ordering::SeqCst);
            std::thread::sleep(std::time::Duration::from_millis(300));
            std::fs::remove_file(&filler).expect("remove the filler");
        }
    };
    common::fleet::run_and_check(&plan, &filling, "fleet (full disk)");
    assert!(fills.into_inner() >= 5, "the disk filled too rarely");
}
