//! Damaged store files through the real binary: a malformed snapshot, or one with a bit
//! flipped in a page read when the store is opened, is refused with exit 6 on reads and
//! writes and left as it was; a garbled journal record followed by a good one is corrupt; a
//! torn journal tail is dropped and everything committed before it is kept.

use crate::common::{self, actor, assert_files_eq, Store};
use std::path::Path;

/// A store with three nodes, one of them claimed, written through the journal.
fn three_nodes() -> (Store, Vec<String>) {
    let s = Store::new();
    let ids: Vec<String> = ["first", "second", "third"]
        .iter()
        .map(|t| s.upsert(t, &[]))
        .collect();
    s.claim(&ids[1], &actor(7), &[]);
    (s, ids)
}

/// Commands that read, and commands that write, run against a damaged store.
fn reads_and_writes(ids: &[String]) -> Vec<Vec<String>> {
    let me = actor(9);
    [
        vec!["list"],
        vec!["list", "--all"],
        vec!["show", &ids[0]],
        vec!["next"],
        vec!["ready"],
        vec!["log"],
        vec!["check"],
        vec!["config"],
        vec!["upsert", "--summary", "one more"],
        vec!["claim", &ids[0], "--assignee", &me],
        vec!["claim-next", "--assignee", &me],
        vec!["reclaim", "--lease", "0"],
        vec!["config", "max_held", "3"],
        vec!["complete", &ids[2], "--status", "cancelled", "--gen", "1"],
    ]
    .iter()
    .map(|v| v.iter().map(|s| s.to_string()).collect())
    .collect()
}

/// Every read and write exits 6 with `corrupt` (and the file's name), the files unchanged.
fn all_refused_as_corrupt(s: &Store, ids: &[String], file: &str) {
    let before = s.files();
    for args in reads_and_writes(ids) {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let r = s.run(&args);
        r.refused(6, "corrupt");
        assert!(r.stderr.contains(file), "{args:?}: {}", r.stderr);
        assert_eq!(r.stdout, "", "{args:?} printed on stdout");
        let mut j = vec!["--json"];
        j.extend_from_slice(&args);
        let r = s.run(&j);
        assert_eq!(r.code, Some(6), "--json {args:?}: {}", r.stderr);
        assert_eq!(r.error_json()["code"], "corrupt");
        assert_files_eq(&before, &s.files(), &format!("{args:?} on a corrupt store"));
    }
}

/// One way to damage a file.
type Damage = fn(&Path);

fn overwrite_at(path: &Path, at: usize, bytes: &[u8]) {
    let mut data = std::fs::read(path).expect("read");
    assert!(
        at + bytes.len() <= data.len(),
        "{} is too short",
        path.display()
    );
    data[at..at + bytes.len()].copy_from_slice(bytes);
    std::fs::write(path, data).expect("write");
}

/// A store whose journal was compacted into `snapshot.json`, so that the snapshot holds
/// every node: four upserts with about 280 KiB of labels each pass the 1 MiB threshold.
fn compacted() -> (Store, Vec<String>) {
    let s = Store::new();
    let label = "l".repeat(240);
    let mut ids = Vec::new();
    for n in 0..5 {
        let labels: Vec<String> = (0..1100).map(|i| format!("{n}-{i}-{label}")).collect();
        let mut args = vec!["upsert".to_string(), "--summary".into(), format!("big {n}")];
        for l in &labels {
            args.push("--label".into());
            args.push(l.clone());
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        ids.push(s.ok(&args).trim().to_string());
    }
    s.claim(&ids[1], &actor(7), &[]);
    let snap = std::fs::metadata(s.dir.join("snapshot.json"))
        .expect("snapshot")
        .len();
    assert!(
        snap > 1 << 20,
        "the journal was compacted into the snapshot ({snap} bytes)"
    );
    (s, ids)
}

#[test]
fn a_snapshot_with_garbage_is_refused_and_left_as_it_was() {
    let garbage: [(&str, Damage); 5] = [
        ("whole file replaced", |p| {
            std::fs::write(p, b"\x89PNG\r\n\x1a\n garbage \xff\xfe").expect("write")
        }),
        ("garbage at the start", |p| {
            overwrite_at(p, 0, b"\xff\xff\xff")
        }),
        ("garbage in the middle", |p| {
            let len = std::fs::metadata(p).expect("meta").len() as usize;
            overwrite_at(p, len / 2, b"\x00\xff\x00\xff")
        }),
        ("cut in half", |p| {
            let data = std::fs::read(p).expect("read");
            std::fs::write(p, &data[..data.len() / 2]).expect("write")
        }),
        ("empty", |p| std::fs::write(p, b"").expect("write")),
    ];
    for ((what, damage), compact) in garbage.iter().flat_map(|g| [(g, false), (g, true)]) {
        let (s, ids) = if compact { compacted() } else { three_nodes() };
        let snap = s.dir.join("snapshot.json");
        damage(&snap);
        let damaged = std::fs::read(&snap).expect("read");
        eprintln!("snapshot: {what} (compacted: {compact})");
        all_refused_as_corrupt(&s, &ids, "snapshot.json");
        assert_eq!(std::fs::read(&snap).expect("read"), damaged, "{what}");
    }
}

#[test]
fn a_snapshot_of_a_newer_format_is_refused() {
    let (s, ids) = three_nodes();
    let snap = s.dir.join("snapshot.json");
    let text = String::from_utf8(std::fs::read(&snap).expect("read")).expect("utf-8");
    let newer = text.replacen("{\"format\":2", "{\"format\":99", 1);
    assert_ne!(text, newer);
    std::fs::write(&snap, &newer).expect("write");
    all_refused_as_corrupt(&s, &ids, "snapshot.json");
    assert_eq!(std::fs::read_to_string(&snap).expect("read"), newer);
}

/// Byte offsets where each journal record starts (after the header line).
fn record_starts(journal: &[u8]) -> Vec<usize> {
    let mut starts = Vec::new();
    for (i, w) in journal.windows(2).enumerate() {
        if w == b"\n#" {
            starts.push(i + 1);
        }
    }
    starts
}

#[test]
fn a_garbled_journal_record_followed_by_a_good_one_is_corrupt() {
    for which in [0usize, 1, 2] {
        let (s, ids) = three_nodes();
        let jpath = s.dir.join("journal");
        let journal = std::fs::read(&jpath).expect("journal");
        let starts = record_starts(&journal);
        assert_eq!(starts.len(), 4, "four committed writes, four records");
        // Flip one byte inside the JSON of record `which` (not the last one).
        let at = starts[which] + 40;
        let flipped = if journal[at] == b'x' { b'y' } else { b'x' };
        overwrite_at(&jpath, at, &[flipped]);
        eprintln!("garbled record {which}");
        all_refused_as_corrupt(&s, &ids, "journal");
    }
}

#[test]
fn a_garbled_frame_in_the_middle_is_corrupt() {
    let (s, ids) = three_nodes();
    let jpath = s.dir.join("journal");
    let journal = std::fs::read(&jpath).expect("journal");
    let starts = record_starts(&journal);
    // Break the length field of the second record.
    overwrite_at(&jpath, starts[1] + 1, b"zz");
    all_refused_as_corrupt(&s, &ids, "journal");
}

#[test]
fn a_torn_journal_tail_is_dropped_and_the_next_write_succeeds() {
    let (s, ids) = three_nodes();
    let committed = s.all();
    let jpath = s.dir.join("journal");
    // A fourth write that a crash tore: only part of its record reached the file.
    let full = common::journal_used(&std::fs::read(&jpath).expect("journal")).to_vec();
    let torn_write = s.upsert("this write was torn", &[]);
    let reserved = std::fs::read(&jpath).expect("journal");
    let with_fourth = common::journal_used(&reserved).to_vec();
    assert!(with_fourth.len() > full.len());
    assert!(
        reserved.len() > with_fourth.len(),
        "the journal has space reserved after its records"
    );
    // Torn at the end of the file (a journal that grows as written), and torn before the
    // zeros of its reserve.
    let cuts = [
        1,
        10,
        19,
        (with_fourth.len() - full.len()) / 2,
        with_fourth.len() - full.len() - 1,
    ];
    for (cut, reserve) in cuts.iter().flat_map(|&c| [(c, false), (c, true)]) {
        let t = Store::new();
        common::copy_dir(&s.dir, &t.dir);
        let mut torn = with_fourth[..full.len() + cut].to_vec();
        if reserve {
            torn.resize(reserved.len(), 0);
        }
        std::fs::write(t.dir.join("journal"), &torn).expect("write");
        let cut = format!("{cut} bytes{}", if reserve { ", then zeros" } else { "" });
        // Reads drop the torn record and keep every committed write.
        assert_eq!(t.all(), committed, "torn after {cut}");
        assert!(t.ok(&["check"]).starts_with("ok"), "check with a torn tail");
        assert!(!t.ok(&["list"]).contains(&torn_write[..8]));
        assert_eq!(t.json(&["log"]).as_array().map(Vec::len), Some(4));
        // The next write succeeds and lands after the committed records.
        let d = t.upsert("after the tear", &[]);
        let after = t.all();
        assert_eq!(after.len(), 4);
        for id in &ids {
            assert_eq!(after[id], committed[id], "committed node {id} changed");
        }
        assert!(after.contains_key(&d));
        assert!(!after.contains_key(&torn_write));
        assert!(t.ok(&["check"]).starts_with("ok"));
        assert_eq!(t.json(&["log"]).as_array().map(Vec::len), Some(5));
        // A second write after that (the tail really is gone, not hidden).
        let g = t.claim(&ids[0], &actor(8), &[]);
        assert_eq!(g, 2);
        assert_eq!(t.all()[&ids[0]]["status"], "claimed");
    }
}

#[test]
fn a_torn_header_of_a_fresh_journal_reads_as_an_empty_store() {
    let s = Store::new();
    s.upsert("first", &[]);
    // A store whose snapshot was never written: a crash right after the journal header.
    let t = Store::new();
    std::fs::create_dir_all(&t.dir).expect("mkdir");
    std::fs::write(t.dir.join("journal"), b"claimdag-jour").expect("write");
    assert_eq!(t.ok(&["list"]), "");
    let id = t.upsert("first", &[]);
    assert_eq!(t.all().len(), 1);
    assert!(t.all().contains_key(&id));
    assert!(t.ok(&["check"]).starts_with("ok"));
}

#[test]
fn a_journal_that_is_not_a_journal_is_corrupt() {
    let (s, ids) = three_nodes();
    std::fs::write(s.dir.join("journal"), b"hello, this is not a journal\n").expect("write");
    all_refused_as_corrupt(&s, &ids, "journal");
}

/// A store of 1,000 imported nodes, node 0 brought to generation 9 by four claim/release
/// rounds, then compacted again: the snapshot holds node 0 at generation 9 in its first page.
/// Returns the store and node 0's id.
fn thousand_nodes_node_0_at_generation_9() -> (Store, String) {
    let s = Store::new();
    let plan = serde_json::to_value(common::flat_plan(1000, |i| format!("node number {i}")))
        .expect("plan");
    let ids = s.import_ok(&plan);
    let (id, key) = &ids[0];
    assert_eq!(key, "k0");
    let me = actor(5);
    for _ in 0..4 {
        let g = s.claim(id, &me, &[]).to_string();
        s.ok(&["release", id, "--actor", &me, "--gen", &g]);
    }
    // A write that pushes the journal past a quarter of the snapshot: it compacts, so that
    // node 0's generation 9 is in the snapshot.
    let snap = std::fs::metadata(s.dir.join("snapshot.json"))
        .expect("snapshot")
        .len();
    let label = "l".repeat(240);
    let mut args = vec!["upsert".to_string(), "--summary".into(), "compacts".into()];
    for i in 0..snap / 4 / 240 + 20 {
        args.extend(["--label".to_string(), format!("{i}-{label}")]);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    s.run_env(&args, &[("CLAIMDAG_COMPACT_MIN_BYTES", "1")])
        .ok();
    let journal = std::fs::metadata(s.dir.join("journal"))
        .expect("journal")
        .len();
    assert!(
        journal < 1024,
        "the store did not compact: journal of {journal} bytes"
    );
    (s, id.clone())
}

/// Where `needle` is in `bytes`, found exactly once.
fn only(bytes: &[u8], needle: &[u8]) -> usize {
    let at: Vec<usize> = bytes
        .windows(needle.len())
        .enumerate()
        .filter(|(_, w)| *w == needle)
        .map(|(i, _)| i)
        .collect();
    assert_eq!(
        at.len(),
        1,
        "{:?} found {} times",
        String::from_utf8_lossy(needle),
        at.len()
    );
    at[0]
}

/// One bit flipped in a page that opening the store reads (the head's, where the nodes'
/// list ends, where the index ends), the file still JSON: the page fails its checksum, so
/// `show`, `claim` and `check` are `corrupt` (exit 6) and no file changes. Before, such a
/// file was read whole as if edited by hand: `"generation":9` flipped to `"generation":1`
/// was shown as generation 1 and `claim` granted generation 2 a second time.
#[test]
fn a_bit_flipped_in_a_page_read_at_open_is_corrupt_and_nothing_is_granted() {
    let (template, id) = thousand_nodes_node_0_at_generation_9();
    let bytes = std::fs::read(template.dir.join("snapshot.json")).expect("snapshot");
    const PAGE: usize = 64 << 10;
    assert!(
        bytes.len() > 3 * PAGE,
        "{} bytes: not several pages",
        bytes.len()
    );
    let t = crate::layered::trailer(&String::from_utf8_lossy(&bytes));
    let field = |k: &str| t[k].as_u64().expect("trailer field") as usize;
    let nodes_end = field("nodes_at") + field("nodes_len");
    let index_end = field("index_at") + field("index_len");
    // The head's page: node 0 is the first node.
    let head = only(&bytes, b"\"generation\":9") + b"\"generation\":".len();
    assert!(head < PAGE, "node 0's generation at byte {head}");
    // The nodes' list's last page: a digit of the last node's summary.
    let last = only(&bytes, b"\"node number 999\"") + b"\"node number 99".len();
    assert_eq!(
        last / PAGE,
        (nodes_end - 1) / PAGE,
        "node 999 ends the list"
    );
    // The index's last page: the last hex digit of its last entry.
    let index = index_end - 2;
    assert!(bytes[index].is_ascii_hexdigit());
    assert!(head / PAGE != index / PAGE && last / PAGE != 0);
    let me = actor(6);
    for (what, at, bit) in [
        ("generation 9 made 1", head, 0x08),
        ("the nodes' list's last page", last, 0x01),
        ("the index's last page", index, 0x01),
    ] {
        eprintln!("one bit flipped: {what}");
        let s = Store::new();
        common::copy_dir(&template.dir, &s.dir);
        let mut flipped = bytes.clone();
        flipped[at] ^= bit;
        assert!(serde_json::from_slice::<serde_json::Value>(&flipped).is_ok());
        std::fs::write(s.dir.join("snapshot.json"), &flipped).expect("write");
        s.refused(&["show", &id], 6, "corrupt", "corrupt");
        s.refused(&["claim", &id, "--assignee", &me], 6, "corrupt", "corrupt");
        let e = s.refused_text(&["check"], 6, "corrupt", "corrupt");
        assert!(
            e.contains("snapshot.json") && e.contains("checksum"),
            "{what}: {e}"
        );
        assert_eq!(
            std::fs::read(s.dir.join("snapshot.json")).expect("read"),
            flipped
        );
    }
}
