//! A state read from a snapshot with an index keeps the nodes as bytes and decodes them one
//! at a time (the paged snapshot reader). Property: whatever changes follow, it answers every
//! question exactly as the same state held whole does, before and after something asks for
//! all of its nodes at once; and a snapshot whose bytes were changed in any way is
//! `corrupt`, never read through a stale index or as changed.

use claimdag::model::{ArchivedStub, Change, Node, Status};
use claimdag::state::State;
use claimdag::store::embedded::snapshot;
use claimdag::{Id, Settings};
use proptest::prelude::*;
use std::path::Path;

fn node(k: u8, status: Status, deps: Vec<u8>) -> Node {
    let summary = format!("node {k}");
    let id = Id::mint("", "task", None, &summary);
    let claimed = status == Status::Claimed;
    Node {
        workspace: if k.is_multiple_of(5) {
            "w".into()
        } else {
            String::new()
        },
        deps: deps
            .into_iter()
            .filter(|d| *d != k)
            .map(|d| Id::mint("", "task", None, &format!("node {d}")))
            .collect(),
        status,
        generation: k as u64 + 1,
        holder: claimed.then_some(Id([k; 16])),
        claimed_at: claimed.then_some(10),
        renewed_at: claimed.then_some(10),
        ttl_ms: claimed.then_some(60_000),
        priority: k as i64 % 3,
        ..Node::todo(id, "task".into(), summary, k as u64)
    }
}

fn status(s: u8) -> Status {
    [
        Status::Todo,
        Status::Claimed,
        Status::Done,
        Status::Failed,
        Status::Cancelled,
    ][s as usize % 5]
}

/// One change: put node `k` with a status (new, replaced, or back from the archive), or
/// archive node `k` if it is live and finished.
#[derive(Debug, Clone)]
enum Step {
    Put(u8, u8, Vec<u8>),
    Archive(u8),
    /// Ask for every node (a pick, a `list`): the next change settles the state.
    All,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => (0u8..40, 0u8..5, proptest::collection::vec(0u8..40, 0..3))
            .prop_map(|(k, s, d)| Step::Put(k, s, d)),
        2 => (0u8..40).prop_map(Step::Archive),
        1 => Just(Step::All),
    ]
}

fn same(whole: &State, layered: &State, why: &str) {
    assert_eq!(whole.len(), layered.len(), "{why}: len");
    assert_eq!(whole.claimed_ids(), layered.claimed_ids(), "{why}: claimed");
    let a: Vec<Id> = whole.claimed_nodes().iter().map(|n| n.id).collect();
    let b: Vec<Id> = layered.claimed_nodes().iter().map(|n| n.id).collect();
    assert_eq!(a, b, "{why}: claimed nodes in creation order");
    for k in 0..45u8 {
        let id = Id::mint("", "task", None, &format!("node {k}"));
        assert_eq!(whole.get(&id), layered.get(&id), "{why}: node {k}");
        assert_eq!(whole.status_of(&id), layered.status_of(&id), "{why}: {k}");
        assert_eq!(whole.workspace_of(&id), layered.workspace_of(&id), "{why}");
        let prefix = &id.hex()[..1];
        let mut x = whole.ids_with_prefix(prefix, 100);
        let mut y = layered.ids_with_prefix(prefix, 100);
        x.sort();
        y.sort();
        assert_eq!(x, y, "{why}: ids starting with {prefix}");
    }
}

fn apply(s: &mut State, step: &Step) {
    match step {
        Step::Put(k, st, deps) => s.apply(&Change {
            nodes: vec![node(*k, status(*st), deps.clone())],
            ..Change::default()
        }),
        Step::Archive(k) => {
            let id = Id::mint("", "task", None, &format!("node {k}"));
            if let Some(n) = s.get(&id).filter(|n| n.status.is_terminal()).cloned() {
                s.apply(&Change {
                    archived: vec![n],
                    ..Change::default()
                });
            }
        }
        Step::All => {
            let _ = s.nodes();
        }
    }
}

fn round_trip(state: &State) -> State {
    let mut bytes = Vec::new();
    snapshot::write(&mut bytes, state, 9).unwrap();
    let (read, seq) = snapshot::read(&bytes, Path::new("snapshot.json")).unwrap();
    assert_eq!(seq, 9);
    read
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn a_layered_state_answers_as_the_whole_one(
        first in proptest::collection::vec((0u8..5, proptest::collection::vec(0u8..40, 0..3)), 0..30),
        steps in proptest::collection::vec(step(), 0..40),
    ) {
        let nodes: Vec<Node> = first
            .iter()
            .enumerate()
            .map(|(k, (s, d))| node(k as u8, status(*s), d.clone()))
            .collect();
        let mut archived = claimdag::id::IdMap::default();
        let gone = node(44, Status::Done, vec![]);
        archived.insert(gone.id, ArchivedStub::of(&gone));
        let mut whole = State::from_parts(Settings::default(), nodes, archived);
        let mut layered = round_trip(&whole);
        prop_assert!(layered.is_layered());
        same(&whole, &layered, "as read");
        prop_assert!(layered.is_layered(), "answering by id decoded everything");
        for (i, st) in steps.iter().enumerate() {
            apply(&mut whole, st);
            apply(&mut layered, st);
            same(&whole, &layered, &format!("after step {i} {st:?}"));
        }
        // In creation order, every field, once all of them are asked for.
        prop_assert_eq!(whole.nodes(), layered.nodes());
        prop_assert_eq!(&whole, &layered);
        // And what it writes reads back the same.
        prop_assert_eq!(&round_trip(&layered), &whole);
    }
}

/// Any change to the bytes of a snapshot with an index makes it `corrupt`, wherever it is
/// (here a one-page snapshot: every page is one that opening it reads): a page that fails
/// its checksum, or a trailer that is no longer where the file's last bytes point. Never the
/// index's old view, and never the change read as the truth. The same changes to a snapshot
/// without the trailer (as an older claimdag wrote it) are read whole, as changed.
#[test]
fn a_snapshot_changed_anywhere_is_corrupt_and_one_without_a_trailer_is_read_whole() {
    let nodes: Vec<Node> = (0..20).map(|k| node(k, Status::Todo, vec![])).collect();
    let state = State::from_parts(Settings::default(), nodes, Default::default());
    let mut bytes = Vec::new();
    snapshot::write(&mut bytes, &state, 3).unwrap();
    let text = String::from_utf8(bytes).unwrap();
    assert!(text.len() < 64 << 10, "one page");
    let path = Path::new("snapshot.json");
    let corrupt = |t: &str, phrase: &str, what: &str| {
        let e = snapshot::read(t.as_bytes(), path).unwrap_err().to_string();
        assert!(e.contains("corrupt") && e.contains(phrase), "{what}: {e}");
    };
    let seven = Id::mint("", "task", None, "node 7");
    // A summary edited in place, same length; a checksum of the trailer itself.
    let summary = text.replacen("\"node 7\"", "\"node X\"", 1);
    let pages_at = text.rfind("\"pages\":\"").unwrap() + 9;
    let mut checksum = text.clone().into_bytes();
    checksum[pages_at] = if checksum[pages_at] == b'0' {
        b'1'
    } else {
        b'0'
    };
    let checksum = String::from_utf8(checksum).unwrap();
    for (t, what) in [(&summary, "summary"), (&checksum, "crc")] {
        assert_ne!(t, &text);
        corrupt(t, "the page at byte 0 fails its checksum", what);
    }
    // A summary one byte longer; a status, so that the head's claimed list disagrees: the
    // trailer is no longer where the last bytes point.
    let longer = text.replacen("\"node 7\"", "\"node 77\"", 1);
    let claimed = text.replacen("\"status\":\"todo\"", "\"status\":\"claimed\"", 1);
    corrupt(&longer, "trailer", "longer");
    corrupt(&claimed, "trailer", "status");
    // A garbled node; the file cut short anywhere.
    corrupt(
        &text.replacen("\"node 3\"", "\"node 3\u{1}", 1),
        "",
        "garbled",
    );
    for cut in [text.len() / 3, text.len() - 40, text.len() - 2] {
        let e = snapshot::read(&text.as_bytes()[..cut], path).unwrap_err();
        assert!(e.to_string().contains("corrupt"), "cut at {cut}: {e}");
    }
    // Without the index, the pick order and the trailer: read whole, as changed.
    let bare = |t: &str| format!("{}}}\n", &t[..t.rfind(",\"index\":").unwrap()]);
    let (read, _) = snapshot::read(bare(&summary).as_bytes(), path).unwrap();
    assert!(!read.is_layered());
    assert_eq!(read.get(&seven).map(|n| n.summary.as_str()), Some("node X"));
    let (read, _) = snapshot::read(bare(&claimed).as_bytes(), path).unwrap();
    assert_eq!(read.claimed_ids().len(), 1);
    let (read, _) = snapshot::read(bare(&longer).as_bytes(), path).unwrap();
    let summary = read.get(&seven).map(|n| n.summary.clone());
    assert_eq!(summary.as_deref(), Some("node 77"));
}

/// A snapshot made to match its checksum whose node does not decode: the store finds it
/// when that node is first read, and every command that reads it is `corrupt` (exit 6,
/// naming `snapshot.json`) and changes nothing; `check`, which reads every node, says so.
#[test]
fn a_node_that_does_not_decode_behind_a_matching_checksum_is_corrupt_when_read() {
    use crate::common::{actor, assert_files_eq};
    let (s, a, b) = three_compacted();
    let path = s.dir.join("snapshot.json");
    let text = String::from_utf8(std::fs::read(&path).unwrap()).unwrap();
    // Same length, no longer JSON: the closing quote of bravo's summary becomes a control
    // character. Then the pages' checksums are made to match.
    let forged = forge(&text, |body| body.replacen("\"bravo\"", "\"bravo\u{1}", 1));
    std::fs::write(&path, &forged).unwrap();
    let before = s.files();
    let me = actor(3);
    all_corrupt(
        &s,
        &[
            &["show", &b],
            &["claim", &b, "--assignee", &me],
            &["list"],
            &["check"],
        ],
        "snapshot.json",
    );
    // A node whose bytes are intact still reads: the damage is found where it is.
    assert!(s.ok(&["show", &a]).contains("alpha"));
    assert_files_eq(&before, &s.files(), "commands on a damaged snapshot");
    // A pick reads the stored pick order and the node it hands out: alpha (the oldest) is
    // granted; the next pick is bravo, which does not decode.
    let first = s.ok(&["claim-next", "--assignee", me.as_str()]);
    assert!(first.starts_with(&a), "{first}");
    let r = s.run(&["claim-next", "--assignee", me.as_str()]);
    assert_eq!(r.code, Some(6), "{}", r.stderr);
    assert!(r.stderr.contains("corrupt"), "{}", r.stderr);
}

/// Each of `commands` exits 6 (`corrupt`) with `naming` in its error.
fn all_corrupt(s: &crate::common::Store, commands: &[&[&str]], naming: &str) {
    for args in commands {
        let r = s.run(args);
        assert_eq!(r.code, Some(6), "{args:?}: {}", r.stderr);
        assert!(
            r.stderr.contains("corrupt") && r.stderr.contains(naming),
            "{args:?}: {}",
            r.stderr
        );
    }
}

/// `text` (a snapshot with an index) with `edit` applied to what its trailer covers and the
/// trailer's page checksums made to match the edit (which must keep the length).
fn forge(text: &str, edit: impl Fn(&str) -> String) -> String {
    let at = text.rfind(",\"lazy\":").expect("a trailer");
    let body = edit(&text[..at]);
    assert_eq!(body.len(), at, "the edit keeps the length");
    let pages: String = body
        .as_bytes()
        .chunks(64 << 10)
        .map(|p| format!("{:08x}", crc32fast::hash(p)))
        .collect();
    let mut trailer = trailer(text);
    assert_eq!(trailer["pages"].as_str().map(str::len), Some(pages.len()));
    trailer["pages"] = pages.into();
    let trailer = serde_json::to_string(&trailer).unwrap();
    format!("{body},\"lazy\":{trailer}}}\n")
}

/// The trailer of `text` (a snapshot with an index): where its parts are, its pages'
/// checksums.
pub(crate) fn trailer(text: &str) -> serde_json::Value {
    let at = text.rfind(",\"lazy\":").expect("a trailer");
    serde_json::from_str(text[at + 8..].trim_end().strip_suffix('}').unwrap()).unwrap()
}

/// A store of `n` nodes imported in one plan, keys `k0`, `k1`, ..., summaries `summary(i)`,
/// then compacted (so that its snapshot holds them all, with an index).
fn imported(
    n: usize,
    summary: impl Fn(usize) -> String,
) -> (crate::common::Store, Vec<(String, String)>) {
    let s = crate::common::Store::new();
    let plan = serde_json::to_value(crate::common::flat_plan(n, summary)).unwrap();
    let ids = s.import_ok(&plan);
    upsert_compacting(&s, "one more");
    (s, ids)
}

/// A byte changed in place in a later page of a large snapshot (no checksum forged): the
/// command that reads that page is `corrupt`, one that does not still answers, and `check`,
/// which reads every page, finds it.
#[test]
fn a_page_that_fails_its_checksum_is_corrupt_when_read_and_check_finds_it() {
    use crate::common::assert_files_eq;
    let (s, ids) = imported(900, |i| format!("node number {i}"));
    let path = s.dir.join("snapshot.json");
    let mut bytes = std::fs::read(&path).unwrap();
    assert!(
        bytes.len() > 3 * (64 << 10),
        "{} bytes: not several pages",
        bytes.len()
    );
    // Node 450's summary sits in the second page, which opening the store does not read
    // (it reads the head's page and those where the nodes' list and the index end): one
    // digit changed, still JSON. (A change in a page the open reads makes the file
    // `corrupt` at once: tests/store_files/corruption.rs.)
    let (id, key) = &ids[450];
    assert_eq!(key, "k450");
    let at = bytes
        .windows(b"node number 450".len())
        .position(|w| w == b"node number 450")
        .unwrap();
    let trailer = trailer(&String::from_utf8_lossy(&bytes));
    let nodes_end = trailer["nodes_at"].as_u64().unwrap() + trailer["nodes_len"].as_u64().unwrap();
    let page = |b: u64| b / (64 << 10);
    assert_eq!(page(at as u64), 1, "node 450 at byte {at}");
    assert!(
        page(nodes_end) > 1,
        "the list ends in page {}",
        page(nodes_end)
    );
    bytes[at + 12] = b'9';
    std::fs::write(&path, &bytes).unwrap();
    let before = s.files();
    for args in [vec!["show", id.as_str()], vec!["check"], vec!["list"]] {
        let r = s.run(&args);
        assert_eq!(r.code, Some(6), "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains("checksum"), "{args:?}: {}", r.stderr);
    }
    // Node 3 lives in the first page, which is intact.
    assert!(s.ok(&["show", &ids[3].0]).contains("node number 3"));
    assert_files_eq(
        &before,
        &s.files(),
        "commands on a snapshot with a bad page",
    );
}

/// Threads of one handle write while one of them keeps claiming a node in a page that fails
/// its checksum. Writes that share a batch with a damaged read are refused as `corrupt` too
/// (the batch's state is not trusted); every write that returned is in the store and no node
/// is lost: a writer that met the damage inside a batch must not make the batch's later
/// writers decide on an empty store, or write one.
#[test]
fn writers_sharing_a_batch_with_a_damaged_read_lose_nothing() {
    use crate::common::{flat_plan, unsynced};
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    let open = |compact_min_bytes| unsynced(&dir, compact_min_bytes);
    let plan = flat_plan(900, |i| format!("node number {i}"));
    let imported = open(1).import("", plan).unwrap();
    let ids: Vec<Id> = imported.into_iter().map(|(id, _)| id).collect();
    damage_the_second_page(&dir);
    let store = open(1 << 40);
    let bad = ids[450];
    // (nodes done, nodes left claimed) by each writer.
    let results: Vec<(Vec<Id>, Vec<Id>)> = std::thread::scope(|s| {
        let writers: Vec<_> = (0..3u8)
            .map(|w| {
                let (store, ids) = (&store, &ids);
                s.spawn(move || claim_and_finish(store, ids, w))
            })
            .collect();
        let store = &store;
        s.spawn(move || {
            for _ in 0..120 {
                assert_corrupt(store.claim(bad, Id([9; 16]), None, None).unwrap_err());
            }
        });
        writers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    let done: Vec<Id> = results.iter().flat_map(|r| r.0.clone()).collect();
    let held: Vec<Id> = results.iter().flat_map(|r| r.1.clone()).collect();
    assert!(!done.is_empty(), "no write landed");
    // A fresh handle: every node is there, each in the status its writer was told (the
    // first 300 sit in the first page; the second page, with node 450, cannot be read).
    let fresh = open(1 << 40);
    fresh
        .inspect(|s, _| {
            assert_eq!(s.len(), 900);
            for id in &ids[..300] {
                let status = s.get(id).map(|n| n.status);
                let want = if done.contains(id) {
                    Status::Done
                } else if held.contains(id) {
                    Status::Claimed
                } else {
                    status.unwrap_or(Status::Todo)
                };
                assert_eq!(status, Some(want), "node {}", id.hex());
            }
        })
        .unwrap();
    eprintln!(
        "{} writes landed, {} claims left held",
        done.len(),
        held.len()
    );
}

/// Breaks the checksum of the snapshot's second page in `dir`, where node 450 sits.
fn damage_the_second_page(dir: &Path) {
    let path = dir.join("snapshot.json");
    let mut bytes = std::fs::read(&path).unwrap();
    let at = bytes
        .windows(b"node number 450".len())
        .position(|w| w == b"node number 450")
        .unwrap();
    assert_eq!(at / (64 << 10), 1, "node 450 sits in the second page");
    bytes[at + 12] = b'9';
    std::fs::write(&path, &bytes).unwrap();
}

fn assert_corrupt(e: claimdag::Error) {
    assert_eq!(e.code(), claimdag::Code::Corrupt, "{e}");
}

/// Writer `w` claims and completes nodes `100 w` on, up to 40 of them, until one stays
/// claimed (a completion refused as `corrupt`: one claim per actor). Every refusal is
/// `corrupt`. Returns the nodes done and the node left claimed.
fn claim_and_finish(store: &claimdag::Store, ids: &[Id], w: u8) -> (Vec<Id>, Vec<Id>) {
    let me = Id([w + 1; 16]);
    let (mut done, mut held) = (Vec::new(), Vec::new());
    for k in 0..40 {
        let id = ids[w as usize * 100 + k];
        if let Some(h) = held.pop() {
            held.push(h);
            break; // one claim per actor: it stays claimed
        }
        match store.claim(id, me, None, None) {
            Ok(g) => match store.complete(id, Status::Done, g, Some(me), None) {
                Ok(()) => done.push(id),
                Err(e) => {
                    assert_corrupt(e);
                    held.push(id);
                }
            },
            Err(e) => assert_corrupt(e),
        }
    }
    (done, held)
}

/// A small snapshot (one page, read whole when the store is opened) edited in place is
/// `corrupt` for every command, `check` included, and left as it is: an edit is never taken
/// as the store's state.
#[test]
fn a_small_snapshot_edited_in_place_is_corrupt_and_left_as_it_was() {
    use crate::common::{actor, assert_files_eq, Store};
    let s = Store::new();
    let a = s.upsert("alpha", &[]);
    upsert_compacting(&s, "bravo");
    let check = s.run(&["check"]);
    assert_eq!(check.code, Some(0), "{}", check.stderr);
    let path = s.dir.join("snapshot.json");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replacen("\"alpha\"", "\"alphx\"", 1)).unwrap();
    let before = s.files();
    let me = actor(4);
    all_corrupt(
        &s,
        &[
            &["show", &a],
            &["list"],
            &["claim", &a, "--assignee", &me],
            &["upsert", "--summary", "charlie"],
            &["check"],
        ],
        "fails its checksum",
    );
    assert_files_eq(&before, &s.files(), "commands on an edited snapshot");
}

/// A snapshot whose list of claimed ids disagrees with its nodes (a forged checksum, a writer
/// bug) is reported by `check`.
#[test]
fn check_reports_claimed_ids_that_disagree_with_the_nodes() {
    use crate::common::{actor, Store};
    let s = Store::new();
    let a = s.upsert("alpha", &[]);
    s.claim(&a, &actor(1), &[]);
    upsert_compacting(&s, "bravo");
    let path = s.dir.join("snapshot.json");
    let text = std::fs::read_to_string(&path).unwrap();
    let listed = format!("\"claimed\":[\"{a}\"]");
    assert!(text.contains(&listed), "{text}");
    let blank = format!("\"claimed\":[{}]", " ".repeat(a.len() + 2));
    std::fs::write(&path, forge(&text, |t| t.replacen(&listed, &blank, 1))).unwrap();
    let check = s.run(&["check"]);
    assert_eq!(check.code, Some(6), "{}\n{}", check.stdout, check.stderr);
    assert!(
        check
            .stdout
            .contains("the snapshot lists 0 claimed nodes where 1 nodes are claimed"),
        "{}",
        check.stdout
    );
}

/// A store whose snapshot has none of the index's fields (written before them) is read
/// whole, answers the same, and the next compaction writes the index and the stored pick
/// order: the store is then read by the page, and `check` finds it sound.
#[test]
fn a_snapshot_without_an_index_is_read_whole_and_gets_one_at_the_next_compaction() {
    use crate::common::Store;
    let s = Store::new();
    let a = s.upsert("alpha", &[]);
    upsert_compacting(&s, "bravo");
    let shown = s.ok(&["show", &a]);
    let mut old = s.snapshot();
    let fields = old.as_object_mut().unwrap();
    for key in ["count", "claimed", "index", "pick", "lazy"] {
        assert!(fields.remove(key).is_some(), "{key}");
    }
    s.write_snapshot(&old);
    let text = std::fs::read_to_string(s.dir.join("snapshot.json")).unwrap();
    assert!(!text.contains("\"lazy\""));
    assert_eq!(s.ok(&["show", &a]), shown);
    upsert_compacting(&s, "charlie");
    let text = std::fs::read_to_string(s.dir.join("snapshot.json")).unwrap();
    assert!(
        text.contains("\"index\":") && text.contains("\"pick\":{") && text.contains("\"lazy\":"),
        "{text}"
    );
    assert_eq!(s.ok(&["show", &a]), shown);
    // A pick from the stored order: the oldest node.
    assert!(s.ok(&["next"]).starts_with(&a));
    let check = s.run(&["check"]);
    assert_eq!(check.code, Some(0), "{}", check.stderr);
    assert!(check.stdout.contains("3 live nodes"), "{}", check.stdout);
}

/// A store of alpha, bravo and charlie, compacted (the snapshot has its index, stored pick
/// order and trailer); with alpha's and bravo's ids.
fn three_compacted() -> (crate::common::Store, String, String) {
    let s = crate::common::Store::new();
    let a = s.upsert("alpha", &[]);
    let b = s.upsert("bravo", &[]);
    upsert_compacting(&s, "charlie");
    (s, a, b)
}

/// An upsert that compacts the store: the snapshot then has the index and the trailer.
fn upsert_compacting(s: &crate::common::Store, summary: &str) {
    let r = s.run_env(
        &["upsert", "--summary", summary],
        &[("CLAIMDAG_COMPACT_MIN_BYTES", "1")],
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
}

/// `text` with the stored pick order's first node record changed by `edit` (same length),
/// the pages' checksums made to match.
fn forge_pick(text: &str, edit: impl Fn(&str) -> String) -> String {
    forge(text, |body| {
        let at = body.find(",\"pick\":{").expect("a stored pick order");
        let nodes = at + body[at..].find("\"nodes\":\"").expect("its nodes") + 9;
        let record = &body[nodes..nodes + 41];
        format!("{}{}{}", &body[..nodes], edit(record), &body[nodes + 41..])
    })
}

/// A stored pick order that does not read (behind matching checksums) is `corrupt` for the
/// commands that pick, and for `check`; a command that does not pick still answers, and
/// nothing is written.
#[test]
fn a_stored_pick_order_that_does_not_read_is_corrupt_for_a_pick() {
    use crate::common::{actor, assert_files_eq};
    let (s, a, _) = three_compacted();
    let path = s.dir.join("snapshot.json");
    let text = String::from_utf8(std::fs::read(&path).unwrap()).unwrap();
    std::fs::write(&path, forge_pick(&text, |r| format!("z{}", &r[1..]))).unwrap();
    let before = s.files();
    let me = actor(3);
    all_corrupt(
        &s,
        &[
            &["claim-next", "--assignee", &me],
            &["next"],
            &["ready"],
            &["check"],
        ],
        "pick order",
    );
    assert!(s.ok(&["show", &a]).contains("alpha"));
    assert_files_eq(&before, &s.files(), "commands on a bad stored pick order");
}

/// A stored pick order that reads but is not the one the nodes give (a critical path length
/// changed, checksums forged to match) is found by `check`.
#[test]
fn check_reports_a_stored_pick_order_that_disagrees_with_the_nodes() {
    let (s, _, _) = three_compacted();
    s.ok(&["check"]);
    let path = s.dir.join("snapshot.json");
    let text = String::from_utf8(std::fs::read(&path).unwrap()).unwrap();
    let forged = forge_pick(&text, |r| {
        assert_eq!(&r[..1], "3", "a ready node with a critical path: {r}");
        format!("{}9{}", &r[..16], &r[17..])
    });
    std::fs::write(&path, forged).unwrap();
    let r = s.run(&["check"]);
    assert_eq!(r.code, Some(6), "{}{}", r.stdout, r.stderr);
    assert!(
        (r.stdout.clone() + &r.stderr).contains(
            "the pick order the snapshot stores does not match its nodes (critical, ready)"
        ),
        "{}{}",
        r.stdout,
        r.stderr
    );
}

/// A compaction copies the nodes nothing changed since the last snapshot as they are there
/// (not decoded and encoded again) and writes the changed ones anew; when the index does not
/// match the nodes' list (behind forged checksums) it copies nothing through it and writes
/// every node from the list, as a compaction did before it copied: the new snapshot is
/// sound.
#[test]
fn a_compaction_copies_unchanged_nodes_and_never_through_a_bad_index() {
    let (s, a, b) = three_compacted();
    let path = s.dir.join("snapshot.json");
    let node_json = |text: &str, id: &str| -> String {
        let at = text.find(&format!("{{\"id\":\"{id}\"")).expect("the node");
        let end = at
            + text[at..]
                .find("},{")
                .or_else(|| text[at..].find("}]"))
                .unwrap();
        text[at..=end].to_string()
    };
    let old = std::fs::read_to_string(&path).unwrap();
    s.finish(&b, "done");
    upsert_compacting(&s, "delta");
    let new = std::fs::read_to_string(&path).unwrap();
    assert_eq!(
        node_json(&old, &a),
        node_json(&new, &a),
        "alpha copied as it was"
    );
    assert!(
        node_json(&new, &b).contains("\"status\":\"done\""),
        "bravo written anew"
    );
    assert!(s.ok(&["show", &b]).contains("done"));
    assert_eq!(s.run(&["check"]).code, Some(0));
    // Swap where the index says the first two nodes (by id) are: each entry now points at
    // the other node's bytes. (No node is claimed: nothing the next write reads is one of
    // them, so only the compaction meets the bad entries.) Copying through it would write
    // each node under the other's id.
    let forged = forge(&new, |body| {
        let at = body.find(",\"index\":\"").unwrap() + 10;
        let (e0, e1) = (&body[at..at + 56], &body[at + 56..at + 112]);
        let swapped = format!("{}{}{}{}", &e0[..32], &e1[32..], &e1[..32], &e0[32..]);
        format!("{}{swapped}{}", &body[..at], &body[at + 112..])
    });
    std::fs::write(&path, &forged).unwrap();
    // A record longer than a quarter of this small snapshot: the write asks to compact.
    let echo = format!("echo {}", "e".repeat(2000));
    upsert_compacting(&s, &echo);
    assert_ne!(std::fs::read_to_string(&path).unwrap(), forged, "compacted");
    let r = s.run(&["check"]);
    assert_eq!(r.code, Some(0), "{}{}", r.stdout, r.stderr);
    assert!(s.ok(&["show", &a]).contains("alpha"));
    assert!(s.ok(&["show", &b]).contains("bravo"));
    assert!(s.ok(&["list"]).contains("echo e"));
    // An entry that says its node is a byte shorter than it is (it still starts with its
    // id): the same.
    let (t, _, _) = three_compacted();
    let path = t.dir.join("snapshot.json");
    let text = std::fs::read_to_string(&path).unwrap();
    let forged = forge(&text, |body| {
        let at = body.find(",\"index\":\"").unwrap() + 10;
        let len = u64::from_str_radix(&body[at + 44..at + 56], 16).unwrap();
        format!("{}{:012x}{}", &body[..at + 44], len - 1, &body[at + 56..])
    });
    std::fs::write(&path, &forged).unwrap();
    upsert_compacting(&t, &echo);
    assert_ne!(std::fs::read_to_string(&path).unwrap(), forged, "compacted");
    let r = t.run(&["check"]);
    assert_eq!(r.code, Some(0), "a short entry: {}{}", r.stdout, r.stderr);
    assert!(t.ok(&["list"]).contains("alpha"));
}

/// The index of a store of 1,500 nodes spans pages, and its entries are read page by page:
/// a pick reads them all, and `ready` lists every node by its id. An entry that straddles a
/// page boundary, made not hex on the far side of it (checksums forged to match), makes a
/// pick and `check` `corrupt`, and changes nothing.
#[test]
fn an_index_entry_across_a_page_boundary_is_read_whole_and_its_damage_found() {
    use crate::common::{actor, assert_files_eq};
    let (s, ids) = imported(1500, |i| format!("node {i}"));
    let ready: std::collections::BTreeSet<String> = s
        .json(&["ready"])
        .as_array()
        .expect("ready as a list")
        .iter()
        .map(|n| n["id"].as_str().expect("an id").to_string())
        .collect();
    assert_eq!(ready.len(), 1501, "every node ready");
    assert!(
        ids.iter().all(|(id, _)| ready.contains(id)),
        "ready names every imported node"
    );
    s.ok(&["check"]);
    let path = s.dir.join("snapshot.json");
    let text = String::from_utf8(std::fs::read(&path).unwrap()).unwrap();
    let trailer = trailer(&text);
    // The entries start after the index's opening quote and are 56 characters each.
    let start = trailer["index_at"].as_u64().unwrap() as usize + 1;
    let end = start + trailer["index_len"].as_u64().unwrap() as usize - 2;
    let page = 64 << 10;
    let boundary = (start / page + 1) * page;
    assert!(
        boundary < end && !(boundary - start).is_multiple_of(56),
        "no entry across the page boundary at {boundary} (index {start}..{end})"
    );
    let entry = (boundary - start) / 56;
    let forged = forge(&text, |body| {
        let mut b = body.to_string();
        b.replace_range(boundary..boundary + 1, "z");
        b
    });
    std::fs::write(&path, &forged).unwrap();
    let before = s.files();
    let me = actor(3);
    all_corrupt(
        &s,
        &[&["claim-next", "--assignee", &me], &["check"]],
        "snapshot.json",
    );
    let r = s.run(&["claim-next", "--assignee", &me]);
    assert!(
        r.stderr.contains(&format!("index entry {entry} ")),
        "{}",
        r.stderr
    );
    // A node whose lookup does not pass that entry still reads.
    assert!(s.ok(&["show", &ids[0].0]).contains("node 0"));
    assert_files_eq(&before, &s.files(), "commands on a damaged index");
}
