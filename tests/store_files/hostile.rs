//! Hostile files and hostile surroundings, through the real binary:
//!
//! - a symbolic link in place of `lock`, `snapshot.json`, `journal`, `history.jsonl` or
//!   `archive.jsonl` is refused (`io`, exit 7, the message naming the path) and its target is
//!   left untouched, bytes and modification time; a dangling link is never created through;
//!   one in place of `compact.lock` only stops compactions (the writes still commit);
//! - a FIFO in place of a store file is refused at once, without hanging;
//! - damage corruption.rs does not cover (a newer journal format, a snapshot of format
//!   2, a gap in the journal's records, a record that is not a record under a good checksum,
//!   garbled side files, duplicate nodes) is `corrupt` (exit 6) and every file is left byte
//!   for byte as it was;
//! - an unreadable store directory, a read-only store, and a write past `RLIMIT_FSIZE` give
//!   a clean `io` error (exit 7) naming the path, and the store stays readable with every
//!   earlier write (a full file system: tests/root_only).

use crate::common::{
    self, actor, assert_files_eq, copy_dir, is_root, mkfifo, refused_io, run_bounded, Run, Store,
};
use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime};

/// The modification time every link target gets, so that a write through the link shows.
const OLD: Duration = Duration::from_secs(1_000_000_000);

fn run_args(s: &Store, args: &[&str]) -> Run {
    run_bounded(s.command(args), &format!("{args:?}"))
}

/// A file's bytes and modification time.
fn fingerprint(p: &Path) -> (Vec<u8>, SystemTime) {
    let bytes = std::fs::read(p).expect("read target");
    let mtime = std::fs::metadata(p)
        .and_then(|m| m.modified())
        .expect("mtime");
    (bytes, mtime)
}

fn set_old_mtime(p: &Path) {
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(p)
        .expect("open target");
    f.set_modified(SystemTime::UNIX_EPOCH + OLD)
        .expect("set mtime");
}

/// A store with every file: a compacted journal (history.jsonl and archive.jsonl written,
/// snapshot.json holding about 1.4 MiB), an archived node, a claimed one, and records in
/// the journal after the compaction. Returns it and (archived, claimed, todo) ids.
fn full_store() -> (Store, [String; 3]) {
    let s = Store::new();
    let gone = s.upsert("finished and archived", &[]);
    s.claim(&gone, &actor(3), &[]);
    s.ok(&["complete", &gone, "--status", "done", "--gen", "2"]);
    s.ok(&["archive", &gone]);
    let label = "l".repeat(240);
    for n in 0..5 {
        let labels: Vec<String> = (0..1100).map(|i| format!("{n}-{i}-{label}")).collect();
        let summary = format!("big {n}");
        let mut args = vec!["upsert", "--summary", summary.as_str()];
        for l in &labels {
            args.extend(["--label", l.as_str()]);
        }
        s.ok(&args);
    }
    let held = s.upsert("claimed after the compaction", &[]);
    s.claim(&held, &actor(7), &[]);
    let todo = s.upsert("todo after the compaction", &[]);
    for f in [
        "history.jsonl",
        "archive.jsonl",
        "snapshot.json",
        "journal",
        "lock",
    ] {
        assert!(s.dir.join(f).exists(), "{f} was not written");
    }
    assert!(
        std::fs::metadata(s.dir.join("snapshot.json"))
            .expect("snapshot")
            .len()
            > 1 << 20,
        "the journal was compacted"
    );
    (s, [gone, held, todo])
}

/// Commands that read and commands that write, each needing every file of the store.
fn every_kind_of_command(ids: &[String; 3]) -> Vec<Vec<String>> {
    let me = actor(9);
    [
        vec!["list"],
        vec!["show", &ids[2]],
        vec!["log"],
        vec!["check"],
        vec!["upsert", "--summary", "one more"],
        vec!["claim", &ids[2], "--assignee", &me],
        vec!["claim-next", "--assignee", &me],
        vec!["reclaim", "--lease", "0"],
    ]
    .iter()
    .map(|v| v.iter().map(|s| s.to_string()).collect())
    .collect()
}

/// An upsert of about 1.1 MiB: the journal then outgrows the compaction threshold.
fn compacting_write() -> Vec<&'static str> {
    let label = "c".repeat(240);
    let mut args = vec!["upsert", "--summary", "compacts"];
    for i in 0..4400 {
        args.extend(["--label", String::leak(format!("{i}-{label}"))]);
    }
    args
}

/// The store read through the binary: every node, and the history.
fn contents(s: &Store) -> (serde_json::Value, serde_json::Value) {
    (s.json(&["list", "--all"]), s.json(&["log"]))
}

#[test]
fn a_symlink_in_place_of_a_store_file_is_refused_and_its_target_left_untouched() {
    let (template, ids) = full_store();
    let reference = contents(&template);
    for name in [
        "lock",
        "snapshot.json",
        "journal",
        "history.jsonl",
        "archive.jsonl",
        "compact.lock",
    ] {
        symlink_in_place_of(name, &template, &ids, &reference);
    }
}

/// A copy of `template` with its file `name` moved out and a symbolic link to it in its
/// place: every command that needs the file refuses the link and none touches its target;
/// with the file put back, the store reads as `reference` (the side files aside).
fn symlink_in_place_of(
    name: &str,
    template: &Store,
    ids: &[String; 3],
    reference: &(serde_json::Value, serde_json::Value),
) {
    let s = Store::new();
    copy_dir(&template.dir, &s.dir);
    let link = s.dir.join(name);
    let target = s.scratch().join(format!("target-{name}"));
    std::fs::rename(&link, &target).expect("move the file out");
    set_old_mtime(&target);
    std::os::unix::fs::symlink(&target, &link).expect("symlink");
    let before = fingerprint(&target);
    // The side files are read by check (history.jsonl by log, archive.jsonl by show, list
    // and unarchive of archived nodes); a write does not need them until it compacts.
    // compact.lock is only opened by a compaction.
    let side = matches!(name, "history.jsonl" | "archive.jsonl" | "compact.lock");
    for args in every_kind_of_command(ids) {
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let r = run_args(&s, &a);
        let needs = !side || reads_side_file(name, a[0]);
        if needs {
            refused_io(&r, &link, "symbolic link", &format!("{name}: {a:?}"));
        } else if r.code != Some(0) {
            assert_eq!(r.code, Some(4), "{name}: {a:?}: {}", r.stderr);
        }
        assert_eq!(
            fingerprint(&target),
            before,
            "{name}: {a:?} touched the target"
        );
    }
    if name == "archive.jsonl" {
        archived_reads_refuse_the_link(&s, ids, &link);
    }
    if side {
        a_compacting_write_commits_past_the_link(&s, name, &target, &before);
    }
    // Put the file back: the store reads as it did.
    std::fs::remove_file(&link).expect("remove link");
    std::fs::rename(&target, &link).expect("move back");
    let r = s.run(&["check"]);
    assert_eq!(
        r.code,
        Some(0),
        "{name}: check after: {}{}",
        r.stdout,
        r.stderr
    );
    if !side {
        assert_eq!(&contents(&s), reference, "{name}: the store changed");
    }
}

/// Archived nodes are read from archive.jsonl: with a link in its place, `show` of one and
/// `list --archived` are refused.
fn archived_reads_refuse_the_link(s: &Store, ids: &[String; 3], link: &Path) {
    let name = "archive.jsonl";
    let r = run_args(s, &["show", &ids[0]]);
    refused_io(&r, link, "symbolic link", &format!("{name}: show archived"));
    let r = run_args(s, &["list", "--archived"]);
    refused_io(
        &r,
        link,
        "symbolic link",
        &format!("{name}: list --archived"),
    );
}

/// A write that compacts the journal still commits: the compaction fails on the link to
/// `target` (side file `name`), leaves the target as it was (`before`) and is retried by a
/// later write. (An archived node in the journal makes the compaction append to
/// archive.jsonl too.)
fn a_compacting_write_commits_past_the_link(
    s: &Store,
    name: &str,
    target: &Path,
    before: &(Vec<u8>, SystemTime),
) {
    let extra = s.upsert("archived before the compaction", &[]);
    s.ok(&["complete", &extra, "--status", "cancelled", "--gen", "1"]);
    s.ok(&["archive", &extra]);
    let r = run_args(s, &compacting_write());
    assert_eq!(r.code, Some(0), "{name}: a compacting write: {}", r.stderr);
    assert_eq!(
        &fingerprint(target),
        before,
        "{name}: compaction touched the target"
    );
    assert!(
        std::fs::metadata(s.dir.join("journal"))
            .expect("journal")
            .len()
            > 1 << 20,
        "{name}: the journal was compacted through a link"
    );
}

#[test]
fn a_dangling_symlink_is_never_created_through() {
    for name in [
        "lock",
        "snapshot.json",
        "journal",
        "history.jsonl",
        "archive.jsonl",
        "compact.lock",
        "snapshot.json.tmp",
    ] {
        let s = Store::new();
        std::fs::create_dir(&s.dir).expect("mkdir");
        std::fs::set_permissions(&s.dir, std::fs::Permissions::from_mode(0o700)).expect("chmod");
        let link = s.dir.join(name);
        let target = s.scratch().join(format!("nothing-here-{name}"));
        std::os::unix::fs::symlink(&target, &link).expect("symlink");
        let r = run_args(&s, &["upsert", "--summary", "first"]);
        match name {
            "lock" | "snapshot.json" | "journal" => {
                refused_io(&r, &link, "symbolic link", name);
                let r = run_args(&s, &["list"]);
                refused_io(&r, &link, "symbolic link", &format!("{name}: list"));
            }
            "snapshot.json.tmp" => {
                // A leftover temporary is removed, never followed.
                assert_eq!(r.code, Some(0), "{name}: {}", r.stderr);
                assert!(
                    std::fs::symlink_metadata(&link).is_err(),
                    "the link is still there"
                );
            }
            "compact.lock" => {
                // Only a compaction opens it: the write commits, a compacting one too, and
                // the compaction gives up on the link.
                assert_eq!(r.code, Some(0), "{name}: {}", r.stderr);
                let r = run_args(&s, &compacting_write());
                assert_eq!(r.code, Some(0), "{name}: a compacting write: {}", r.stderr);
                assert!(!s.dir.join("history.jsonl").exists(), "{name}: compacted");
            }
            _ => {
                // Side files are only read by log (the history) and check (written at
                // compaction).
                assert_eq!(r.code, Some(0), "{name}: {}", r.stderr);
                let reader = if name == "history.jsonl" {
                    "log"
                } else {
                    "check"
                };
                let r = run_args(&s, &[reader]);
                refused_io(&r, &link, "symbolic link", &format!("{name}: {reader}"));
            }
        }
        assert!(
            std::fs::symlink_metadata(&target).is_err(),
            "{name}: the link's target was created"
        );
    }
}

/// Whether the command `verb` of `every_kind_of_command` reads the side file `name`.
fn reads_side_file(name: &str, verb: &str) -> bool {
    name != "compact.lock" && (verb == "check" || (name == "history.jsonl" && verb == "log"))
}

#[test]
fn a_fifo_in_place_of_a_store_file_is_refused_without_hanging() {
    let (template, ids) = full_store();
    for name in [
        "lock",
        "snapshot.json",
        "journal",
        "history.jsonl",
        "archive.jsonl",
        "compact.lock",
    ] {
        let s = Store::new();
        copy_dir(&template.dir, &s.dir);
        let path = s.dir.join(name);
        std::fs::remove_file(&path).expect("remove");
        mkfifo(&path);
        let side = matches!(name, "history.jsonl" | "archive.jsonl" | "compact.lock");
        for args in every_kind_of_command(&ids) {
            let a: Vec<&str> = args.iter().map(String::as_str).collect();
            let r = run_args(&s, &a);
            if !side || reads_side_file(name, a[0]) {
                refused_io(&r, &path, "not a regular file", &format!("{name}: {a:?}"));
            }
        }
        if side {
            // A compacting write commits; its compaction gives up on the FIFO at once.
            let r = run_args(&s, &compacting_write());
            assert_eq!(r.code, Some(0), "{name}: a compacting write: {}", r.stderr);
        }
        let meta = std::fs::symlink_metadata(&path).expect("still there");
        assert!(
            std::os::unix::fs::FileTypeExt::is_fifo(&meta.file_type()),
            "{name}: the FIFO was replaced"
        );
    }
}

/// Every read and write exits 6 naming `file`; every file stays byte for byte as it was.
fn corrupt_everywhere(s: &Store, ids: &[String; 3], file: &str, what: &str) {
    let before = s.files();
    for args in every_kind_of_command(ids) {
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let r = s.run(&a);
        assert_eq!(r.code, Some(6), "{what}: {a:?}: {}{}", r.stdout, r.stderr);
        assert!(r.stderr.starts_with("error: "), "{what}: {}", r.stderr);
        assert!(r.stderr.contains("corrupt"), "{what}: {a:?}: {}", r.stderr);
        assert!(r.stderr.contains(file), "{what}: {a:?}: {}", r.stderr);
        assert_eq!(r.stdout, "", "{what}: {a:?} printed");
        assert_files_eq(&before, &s.files(), &format!("{what}: {a:?}"));
    }
}

/// A small store: three nodes, one claimed, written through the journal (no compaction).
fn small_store() -> (Store, [String; 3]) {
    let s = Store::new();
    let a = s.upsert("first", &[]);
    let b = s.upsert("second", &[]);
    let c = s.upsert("third", &[]);
    s.claim(&b, &actor(7), &[]);
    (s, [a, b, c])
}

/// Byte offsets where each journal record starts.
fn record_starts(journal: &[u8]) -> Vec<usize> {
    journal
        .windows(2)
        .enumerate()
        .filter(|(_, w)| *w == b"\n#")
        .map(|(i, _)| i + 1)
        .collect()
}

#[test]
fn damage_the_corruption_tests_do_not_cover_is_corrupt_and_left_as_it_was() {
    // A snapshot of a newer format (3), however little it holds.
    for text in [
        "{\"format\": 3}".to_string(),
        "{\"format\": 3, \"seq\": 0, \"nodes\": []}\n".to_string(),
        "{\"format\": 3, \"seq\": 0, \"nodes\": [], \"what\": \"a field from the future\"}"
            .to_string(),
    ] {
        let (s, ids) = small_store();
        std::fs::write(s.dir.join("snapshot.json"), &text).expect("write");
        corrupt_everywhere(&s, &ids, "snapshot.json", &text);
        let r = s.run(&["list"]);
        assert!(r.stderr.contains("format 3"), "{}", r.stderr);
    }

    // A journal of a newer format: its header says so.
    let (s, ids) = small_store();
    let jpath = s.dir.join("journal");
    let mut j = std::fs::read(&jpath).expect("journal");
    assert!(j.starts_with(b"claimdag-journal 1\n"));
    j[17] = b'2';
    std::fs::write(&jpath, &j).expect("write");
    corrupt_everywhere(&s, &ids, "journal", "journal format 2");
    assert!(s.run(&["list"]).stderr.contains('2'));

    // A record missing from the middle: the sequence has a gap.
    let (s, ids) = small_store();
    let j = std::fs::read(jpath_of(&s)).expect("journal");
    let starts = record_starts(&j);
    let mut cut = j[..starts[1]].to_vec();
    cut.extend_from_slice(&j[starts[2]..]);
    std::fs::write(jpath_of(&s), &cut).expect("write");
    corrupt_everywhere(&s, &ids, "journal", "a gap in the records");

    // A record whose checksum is good but which is not a record, before a good one.
    let (s, ids) = small_store();
    let j = std::fs::read(jpath_of(&s)).expect("journal");
    let starts = record_starts(&j);
    let json = b"{\"not\": \"a record\"}";
    let mut forged = j[..starts[1]].to_vec();
    forged.extend_from_slice(
        format!("#{:08x} {:08x} ", json.len(), crc32fast::hash(json)).as_bytes(),
    );
    forged.extend_from_slice(json);
    forged.push(b'\n');
    forged.extend_from_slice(&j[starts[1]..]);
    std::fs::write(jpath_of(&s), &forged).expect("write");
    corrupt_everywhere(&s, &ids, "journal", "a forged record");

    // A snapshot that names one node twice.
    let (s, ids) = small_store();
    let snap = s.dir.join("snapshot.json");
    let twice = format!(
        "{{\"format\": 1, \"seq\": 0, \"nodes\": [{n}, {n}]}}",
        n = format_args!(
            "{{\"id\": \"{}\", \"summary\": \"twice\", \"created_at\": 1, \"updated_at\": 1}}",
            ids[0]
        )
    );
    std::fs::write(&snap, &twice).expect("write");
    std::fs::write(jpath_of(&s), b"claimdag-journal 1\n").expect("write");
    let r = s.run(&["list"]);
    if r.code == Some(0) {
        panic!("a snapshot naming a node twice was read: {}", r.stdout);
    }
    corrupt_everywhere(&s, &ids, "snapshot.json", "a node twice");
}

fn jpath_of(s: &Store) -> PathBuf {
    s.dir.join("journal")
}

#[test]
fn garbled_side_files_are_corrupt_for_the_commands_that_read_them() {
    let (template, ids) = full_store();
    for (name, readers) in [
        ("history.jsonl", vec![vec!["log"], vec!["check"]]),
        (
            "archive.jsonl",
            vec![
                vec!["check"],
                vec!["list", "--archived"],
                vec!["show", ids[0].as_str()],
            ],
        ),
    ] {
        let s = Store::new();
        copy_dir(&template.dir, &s.dir);
        let path = s.dir.join(name);
        let text = std::fs::read(&path).expect("side file");
        // Garble the first line, keeping its newline: a complete line that is not JSON.
        let first_nl = text.iter().position(|&c| c == b'\n').expect("a line");
        let mut garbled = text.clone();
        garbled[first_nl / 2] = b'\xff';
        garbled[1] = b'#';
        std::fs::write(&path, &garbled).expect("write");
        let before = s.files();
        for args in readers {
            let r = s.run(&args);
            assert_eq!(r.code, Some(6), "{name}: {args:?}: {}", r.stderr);
            assert!(r.stderr.contains(name), "{name}: {args:?}: {}", r.stderr);
            assert!(r.stderr.contains("corrupt"), "{name}: {}", r.stderr);
        }
        // A command that does not read the side file still works on the live state.
        assert!(s.ok(&["list"]).contains(&ids[2][..8]));
        assert_files_eq(&before, &s.files(), name);
    }
}

/// A command that runs the binary as `uid` (when root): permission bits then apply.
fn as_user(mut cmd: Command, uid: u32) -> Command {
    // SAFETY: only async-signal-safe calls (setgroups, setgid, setuid) between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            if libc::setgroups(0, std::ptr::null()) != 0
                || libc::setgid(uid) != 0
                || libc::setuid(uid) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    cmd
}

fn chown_tree(p: &Path, uid: u32) {
    let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).expect("path");
    // SAFETY: `c` is a valid NUL-terminated path for the duration of the call.
    let r = unsafe { libc::lchown(c.as_ptr(), uid, uid) };
    assert_eq!(
        r,
        0,
        "chown {}: {}",
        p.display(),
        std::io::Error::last_os_error()
    );
    if std::fs::symlink_metadata(p).expect("meta").is_dir() {
        for e in std::fs::read_dir(p).expect("read_dir") {
            chown_tree(&e.expect("entry").path(), uid);
        }
    }
}

fn chmod(p: &Path, mode: u32) {
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

/// The uid the permission tests run the binary as: this process's own, or when root an
/// unprivileged one that owns the store (root is not stopped by permission bits).
const NOBODY: u32 = 65534;

#[test]
fn an_unreadable_or_read_only_store_is_a_clean_io_error_and_stays_readable() {
    let (s, ids) = small_store();
    let reference = contents(&s);
    let root = is_root();
    if root {
        root_is_not_stopped_by_permission_bits(&s, &ids);
    }
    // The unprivileged user runs a copy of the binary beside the store, so that the path
    // to the build directory need not be open to it.
    let copy = s.scratch().join("claimdag");
    if root {
        std::fs::copy(common::bin(), &copy).expect("copy the binary");
        chmod(&copy, 0o755);
        chown_tree(s.scratch(), NOBODY);
    }
    let cmd = |args: &[&str]| {
        if root {
            let mut c = as_user(Command::new(&copy), NOBODY);
            for k in common::STORE_ENV {
                c.env_remove(k);
            }
            c.arg("--dir").arg(&s.dir).args(args);
            c
        } else {
            s.command(args)
        }
    };
    let me = actor(9);
    let reads: [&[&str]; 3] = [&["list"], &["show", &ids[0]], &["check"]];
    let writes: [&[&str]; 2] = [
        &["upsert", "--summary", "new"],
        &["claim", &ids[0], "--assignee", &me],
    ];
    let before = s.files();
    an_unsearchable_store_is_refused(&s, &cmd, &reads, &writes, &before);
    an_unreadable_snapshot_is_refused(&s, &cmd, &reads, &writes);
    a_read_only_store_reads_and_refuses_writes(&s, &cmd, &reads, &writes, &before);

    // Every earlier write is there, and the next one works.
    let r = run_bounded(cmd(&["--json", "list", "--all"]), "list");
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(r.json(), reference.0);
    let r = run_bounded(cmd(&["upsert", "--summary", "after"]), "upsert");
    assert_eq!(r.code, Some(0), "{}", r.stderr);
}

/// How a permission test runs the binary with its arguments.
type Runs<'a> = &'a dyn Fn(&[&str]) -> Command;

/// Root passes permission checks whatever the bits say: a store chmod 000 is read and
/// written as usual. (The test then runs the binary as an unprivileged owner of the store,
/// whom the bits do stop.)
fn root_is_not_stopped_by_permission_bits(s: &Store, ids: &[String; 3]) {
    chmod(&s.dir, 0o000);
    let r = s.run(&["list"]);
    assert_eq!(
        r.code,
        Some(0),
        "root reads a chmod 000 store: {}",
        r.stderr
    );
    assert!(r.stdout.contains(&ids[0][..8]));
    chmod(&s.dir, 0o700);
}

/// The store directory unreadable and unsearchable: every command is refused, and the
/// files are as they were (`before`).
fn an_unsearchable_store_is_refused(
    s: &Store,
    cmd: Runs,
    reads: &[&[&str]],
    writes: &[&[&str]],
    before: &BTreeMap<String, Vec<u8>>,
) {
    chmod(&s.dir, 0o000);
    for args in reads.iter().chain(writes.iter()) {
        let r = run_bounded(cmd(args), &format!("{args:?}"));
        refused_io(
            &r,
            &s.dir,
            "ermission denied",
            &format!("chmod 000: {args:?}"),
        );
    }
    chmod(&s.dir, 0o700);
    assert_files_eq(before, &s.files(), "chmod 000");
}

/// snapshot.json unreadable: every command is refused naming it.
fn an_unreadable_snapshot_is_refused(s: &Store, cmd: Runs, reads: &[&[&str]], writes: &[&[&str]]) {
    chmod(&s.dir.join("snapshot.json"), 0o000);
    for args in reads.iter().chain(writes.iter()) {
        let r = run_bounded(cmd(args), &format!("{args:?}"));
        refused_io(
            &r,
            &s.dir.join("snapshot.json"),
            "ermission denied",
            &format!("snapshot.json chmod 000: {args:?}"),
        );
    }
    chmod(&s.dir.join("snapshot.json"), 0o600);
}

/// A read-only store: readers read (a shared lock needs no write permission), writers
/// are refused naming the file they could not open, and nothing changes (`before`).
fn a_read_only_store_reads_and_refuses_writes(
    s: &Store,
    cmd: Runs,
    reads: &[&[&str]],
    writes: &[&[&str]],
    before: &BTreeMap<String, Vec<u8>>,
) {
    for f in ["lock", "snapshot.json", "journal"] {
        chmod(&s.dir.join(f), 0o400);
    }
    chmod(&s.dir, 0o500);
    for args in reads {
        let r = run_bounded(cmd(args), &format!("{args:?}"));
        assert_eq!(r.code, Some(0), "read-only store: {args:?}: {}", r.stderr);
    }
    for args in writes {
        let r = run_bounded(cmd(args), &format!("{args:?}"));
        refused_io(
            &r,
            &s.dir,
            "ermission denied",
            &format!("read-only: {args:?}"),
        );
    }
    chmod(&s.dir, 0o700);
    for f in ["lock", "snapshot.json", "journal"] {
        chmod(&s.dir.join(f), 0o600);
    }
    assert_files_eq(before, &s.files(), "read-only store");
}

/// A command whose files may not grow past `bytes` (the CLI ignores SIGXFSZ, so a write past
/// the limit fails with EFBIG).
fn with_fsize(mut cmd: Command, bytes: u64) -> Command {
    // SAFETY: setrlimit is async-signal-safe; the struct lives in the closure.
    unsafe {
        cmd.pre_exec(move || {
            let lim = libc::rlimit {
                rlim_cur: bytes as libc::rlim_t,
                rlim_max: bytes as libc::rlim_t,
            };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    cmd
}

#[test]
fn a_write_past_the_file_size_limit_is_a_clean_io_error() {
    let (s, ids) = small_store();
    let reference = contents(&s);
    let journal = s.dir.join("journal");
    // Records are written into space the file has reserved: the limit is counted from
    // where they end.
    let len = common::journal_used(&std::fs::read(&journal).expect("journal")).len() as u64;
    // Room for nothing, then for half a record: the partial record is taken back.
    for room in [0, 40, 150] {
        let before = s.files();
        for args in [
            vec!["upsert", "--summary", "past the limit"],
            vec!["claim", &ids[0], "--assignee", &actor(8)],
        ] {
            let r = run_bounded(with_fsize(s.command(&args), len + room), "fsize");
            refused_io(
                &r,
                &journal,
                "too large",
                &format!("{args:?} with {room} bytes of room"),
            );
            assert_files_eq(&before, &s.files(), &format!("{args:?} past the limit"));
        }
        assert_eq!(contents(&s), reference, "the store changed");
        assert!(s.ok(&["check"]).starts_with("ok"));
    }
    // The first write of a new store, whose journal header does not fit.
    let t = Store::new();
    let r = run_bounded(
        with_fsize(t.command(&["upsert", "--summary", "x"]), 10),
        "new store",
    );
    refused_io(&r, &t.dir.join("journal"), "too large", "the first write");
    assert_eq!(t.ok(&["list"]), "", "a failed first write left a node");
    let id = t.upsert("x", &[]);
    assert!(t.ok(&["list"]).contains(&id[..8]));
    assert!(t.ok(&["check"]).starts_with("ok"));
    // Without the limit the store takes the write.
    let id = s.upsert("past the limit", &[]);
    assert!(s.all().contains_key(&id));
    for old in &ids {
        assert!(s.all().contains_key(old));
    }
}

#[test]
fn a_store_directory_another_user_owns_is_refused() {
    let s = Store::new();
    let other = if is_root() {
        // Root could use anything: give the directory to another user.
        s.upsert("made by its owner", &[]);
        chown_tree(&s.dir, NOBODY);
        s.dir.clone()
    } else {
        // Not root: a directory root owns is another user's.
        PathBuf::from("/")
    };
    let before = is_root().then(|| common::files_of(&other));
    for args in [
        vec!["list"],
        vec!["check"],
        vec!["upsert", "--summary", "not here"],
    ] {
        let mut c = common::command();
        c.arg("--dir").arg(&other).args(&args);
        let r = run_bounded(c, &format!("{args:?}"));
        refused_io(&r, &other, "owned by another user", &format!("{args:?}"));
    }
    if let Some(before) = before {
        assert_files_eq(&before, &common::files_of(&other), "another user's store");
    }
}

/// A compaction that cannot write its new snapshot (here a directory stands where its
/// temporary file goes) leaves every write committed, and `check` says the store could not
/// be compacted, and why; once the obstacle is gone, the next write compacts and the note
/// goes away.
#[test]
fn a_compaction_that_keeps_failing_is_reported_by_check() {
    let s = Store::new();
    let small = [("CLAIMDAG_COMPACT_MIN_BYTES", "1")];
    s.run_env(&["upsert", "--summary", "first"], &small).ok();
    let blocker = s.dir.join("snapshot.json.tmp");
    std::fs::create_dir(&blocker).expect("mkdir");
    std::fs::write(blocker.join("inside"), b"x").expect("write");
    for i in 0..5 {
        let summary = format!("node {i}");
        s.run_env(&["upsert", "--summary", &summary], &small).ok();
    }
    assert_eq!(s.ok(&["list"]).lines().count(), 6, "every write committed");
    let r = s.run_env(&["check"], &small);
    let out = r.ok();
    assert!(
        out.contains("note: ") && out.contains("could not be compacted"),
        "{out}"
    );
    assert!(
        out.contains("snapshot.json.tmp"),
        "the note says why: {out}"
    );
    let j = s.run_env(&["--json", "check"], &small).json();
    assert_eq!(j["ok"], true);
    assert_eq!(j["notes"].as_array().map(Vec::len), Some(1), "{j}");
    std::fs::remove_dir_all(&blocker).expect("rmdir");
    s.run_env(&["upsert", "--summary", "after"], &small).ok();
    let j = s.run_env(&["--json", "check"], &small).json();
    assert_eq!(j["notes"], serde_json::json!([]), "{j}");
}
