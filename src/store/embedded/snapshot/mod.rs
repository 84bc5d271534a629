//! `snapshot.json`: the whole state as of journal record `seq`.
//!
//! ```json
//! {"format": 2, "seq": 42, "settings": {...},
//!  "archived": {"<id>": {"status": "done", "generation": 3, "workspace": "a"}},
//!  "count": 1000, "nodes": [...]}
//! ```
//!
//! Format 1 kept only the status of an archived node; such stubs are read with generation 0
//! and completed from the archive when the store is loaded. Format 2 is written. `count`,
//! the number of nodes, only sizes the reader's list before the nodes are parsed (a
//! snapshot without it, or with a wrong one, reads the same). `claimed` (before the nodes)
//! lists the claimed nodes (and `rated`, when there are any, the nodes granted under a
//! rate with their last grant, and `due`, the unfinished nodes whose deadline is still to
//! be recorded as passed); after the nodes come an index of them by id and a trailer of
//! page checksums, so that a reader reads and decodes only the nodes it is asked for (see
//! `paged.rs`). A snapshot without them (an older writer) is read whole; one whose
//! trailer is there but does not describe it is read whole only if every page still matches
//! its checksum, and is `corrupt` otherwise. Readers of format 2 that know none of these
//! fields ignore them.

mod paged;
mod pick;
mod pieces;

use crate::error::{Error, Result};
use crate::id::{Id, IdMap};
use crate::model::{ArchivedStub, Node, Settings};
use crate::state::State;
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::Path;

pub const FORMAT: u64 = 2;
/// The oldest format this version reads (and migrates).
pub const OLDEST_FORMAT: u64 = 1;

/// What comes before the nodes.
#[derive(Serialize)]
struct Head<'a> {
    format: u64,
    seq: u64,
    settings: &'a Settings,
    archived: &'a IdMap<ArchivedStub>,
    count: usize,
    claimed: &'a BTreeSet<Id>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    scheduled: &'a BTreeMap<Id, crate::model::Millis>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    rated: &'a BTreeMap<Id, crate::model::Millis>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    due: &'a BTreeMap<Id, crate::model::Millis>,
}

struct In {
    format: u64,
    seq: u64,
    settings: Settings,
    archived: IdMap<ArchivedStub>,
    count: Option<u64>,
    claimed: Option<BTreeSet<Id>>,
    /// The `todo` nodes with a `not_before` (absent: none, as an older writer had).
    scheduled: BTreeMap<Id, crate::model::Millis>,
    /// The nodes granted under a rate, with their last grant (absent: none).
    rated: BTreeMap<Id, crate::model::Millis>,
    /// The unfinished nodes with a deadline not yet recorded as passed (absent: none).
    due: BTreeMap<Id, crate::model::Millis>,
    nodes: Vec<Node>,
    /// The trailer is there (its fields are not read here).
    lazy: bool,
}

/// The smallest node a snapshot can hold takes more bytes than this (its id alone is 41).
const MIN_NODE_BYTES: usize = 64;

#[derive(Deserialize)]
struct FormatOnly {
    format: u64,
}

/// A writer that counts what goes through it and checksums it page by page.
struct Counted<'a> {
    w: &'a mut dyn Write,
    at: u64,
    page: crc32fast::Hasher,
    pages: Vec<u32>,
}

impl Write for Counted<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        // Up to the end of the current page at most, so that a page's bytes are one hash.
        let room = (paged::PAGE - self.at % paged::PAGE) as usize;
        let n = self.w.write(&buf[..buf.len().min(room)])?;
        self.page.update(&buf[..n]);
        self.at += n as u64;
        if self.at.is_multiple_of(paged::PAGE) && n > 0 {
            let done = std::mem::take(&mut self.page);
            self.pages.push(done.finalize());
        }
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.w.flush()
    }
}

/// Writes the state as of record `seq`: the head, the nodes, their index, the stored pick
/// order, the trailer.
pub fn write(w: &mut dyn Write, state: &State, seq: u64) -> std::io::Result<()> {
    write_with(w, state, seq, true)
}

/// [`write()`], storing the pick order or not as `pick` says (a snapshot without it, as an
/// older claimdag wrote, computes the order from the nodes).
pub fn write_with(w: &mut dyn Write, state: &State, seq: u64, pick: bool) -> std::io::Result<()> {
    let head = Head {
        format: FORMAT,
        seq,
        settings: &state.settings,
        archived: state.archived(),
        count: state.len(),
        claimed: state.claimed_ids(),
        scheduled: state.scheduled(),
        rated: state.rated(),
        due: state.due(),
    };
    let mut head = serde_json::to_vec(&head)?;
    head.pop(); // the closing brace: the nodes come next
    let mut out = Counted {
        w,
        at: 0,
        page: crc32fast::Hasher::new(),
        pages: Vec::new(),
    };
    out.write_all(&head)?;
    out.write_all(b",\"nodes\":")?;
    let nodes_at = out.at;
    let mut index = write_nodes(&mut out, state)?;
    let nodes_len = out.at - nodes_at;
    out.write_all(b",\"index\":")?;
    let index_at = out.at;
    index.sort_unstable_by_key(|e| e.0);
    write_index(&mut out, &index)?;
    let index_len = out.at - index_at;
    let pick_at = match pick {
        true => write_pick(&mut out, state, &index)?,
        false => None,
    };
    let covered = out.at;
    let mut pages = std::mem::take(&mut out.pages);
    if !covered.is_multiple_of(paged::PAGE) {
        pages.push(std::mem::take(&mut out.page).finalize());
    }
    let layout = paged::Layout {
        nodes_at,
        nodes_len,
        index_at,
        index_len,
        page: paged::PAGE,
        pages: pages.iter().map(|c| format!("{c:08x}")).collect(),
        from: format!("{covered:016x}"),
        pick_len: pick_at.map(|at| covered - at),
        pick_at,
    };
    let w = out.w;
    w.write_all(b",\"lazy\":")?;
    serde_json::to_writer(&mut *w, &layout)?;
    w.write_all(b"}\n")
}

/// Writes the nodes' list; returns each node's id, where its bytes start in the list and
/// how many they are, in list order.
fn write_nodes(out: &mut Counted<'_>, state: &State) -> std::io::Result<Vec<(Id, u64, u64)>> {
    let nodes_at = out.at;
    let mut index: Vec<(Id, u64, u64)> = Vec::with_capacity(state.len());
    out.write_all(b"[")?;
    // A node read through the last snapshot's index and not changed since is copied as it
    // is there, not decoded and encoded again.
    each_piece(state, &mut |piece| {
        if !index.is_empty() {
            out.write_all(b",")?;
        }
        let start = out.at;
        let id = match piece {
            pieces::Piece::Bytes { id, json } => {
                out.write_all(json)?;
                id
            }
            pieces::Piece::Node(n) => {
                serde_json::to_writer(&mut *out, n)?;
                n.id
            }
        };
        index.push((id, start - nodes_at, out.at - start));
        Ok(())
    })?;
    out.write_all(b"]")?;
    if let Some(d) = state.damage() {
        // A state whose snapshot could not be read is not the store's state: never write it.
        return Err(std::io::Error::other(format!(
            "the state is damaged: {}",
            d.why
        )));
    }
    Ok(index)
}

/// Writes the index of the nodes by id (`sorted` by id): one entry of [`paged::ENTRY`] hex
/// characters each.
fn write_index(out: &mut Counted<'_>, sorted: &[(Id, u64, u64)]) -> std::io::Result<()> {
    let mut text = Vec::with_capacity(sorted.len() * paged::ENTRY + 2);
    text.push(b'"');
    for (id, at, len) in sorted {
        write!(text, "{}{at:012x}{len:012x}", id.hex())?;
    }
    text.push(b'"');
    out.write_all(&text)
}

/// Writes the stored pick order, following the index entries (`sorted` by id); returns
/// where it starts, or `None` when the order names a node the snapshot lacks (then readers
/// build it from the nodes).
fn write_pick(
    out: &mut Counted<'_>,
    state: &State,
    sorted: &[(Id, u64, u64)],
) -> std::io::Result<Option<u64>> {
    let ids: Vec<Id> = sorted.iter().map(|e| e.0).collect();
    let order = state.pick_order_to_store();
    let Some(bytes) = pick::encode(&order, &ids, state.settings.max_attempts) else {
        return Ok(None);
    };
    out.write_all(b",\"pick\":")?;
    let at = out.at;
    out.write_all(&bytes)?;
    Ok(Some(at))
}

/// Every live node of `state` in creation order: one read through this store's last
/// snapshot and not changed since comes as its bytes there when those read as they should
/// ([`pieces::pieces`]); the others as values. When the snapshot's nodes cannot be read the
/// state is damaged and `f` may not have seen every node.
fn each_piece(
    state: &State,
    f: &mut dyn FnMut(pieces::Piece<'_>) -> std::io::Result<()>,
) -> std::io::Result<()> {
    if let Some(l) = state.frozen_layer() {
        if let Some(p) = l.frozen().as_any().downcast_ref::<paged::Paged>() {
            if pieces::pieces(p, l, f)? {
                return Ok(());
            }
        }
    }
    for n in state.nodes() {
        f(pieces::Piece::Node(n))?;
    }
    Ok(())
}

/// Reads a snapshot; anything malformed is `corrupt`.
#[cfg(feature = "internals")]
pub fn read(bytes: &[u8], path: &Path) -> Result<(State, u64)> {
    match layered(paged::Source::Bytes(bytes.to_vec())) {
        Ok(read) => Ok(read),
        Err(src) => read_unlayered(&src, bytes, path),
    }
}

/// Reads the snapshot file `f`: through its index when it has one that matches (reading
/// only its trailer and head now, the pages of the nodes asked for later), whole otherwise.
pub fn read_file(f: std::fs::File, path: &Path) -> Result<(State, u64)> {
    let src = match layered(paged::Source::File(f)) {
        Ok(read) => return Ok(read),
        Err(src) => src,
    };
    let len = src.size().map_err(|e| super::fsutil::describe(path, &e))?;
    let mut bytes = vec![0; usize::try_from(len).unwrap_or(0)];
    src.read_at(&mut bytes, 0)
        .map_err(|e| super::fsutil::describe(path, &e))?;
    read_unlayered(&src, &bytes, path)
}

/// Reads whole a snapshot that could not be read through its index, if it is as a writer
/// made it: a page that fails its trailer's checksum, or a trailer that is no longer where
/// the file's last bytes point, means the file changed after it was written (damage, or an
/// edit): `corrupt`, never read as it now is. A snapshot without a trailer (an older
/// writer) is read whole.
fn read_unlayered(src: &paged::Source, bytes: &[u8], path: &Path) -> Result<(State, u64)> {
    let pages = paged::Paged::pages(src).map_err(|e| super::fsutil::describe(path, &e))?;
    if let paged::Pages::Fail(at) = pages {
        return Err(Error::corrupt(
            path,
            format!(
                "the page at byte {at} fails its checksum: the file was changed after it was written"
            ),
        ));
    }
    let (read, trailer) = read_whole(bytes, path)?;
    if trailer && pages == paged::Pages::NoTrailer {
        return Err(Error::corrupt(
            path,
            "its trailer (\"lazy\") is not where the file's last bytes point: the file was \
             changed after it was written",
        ));
    }
    Ok(read)
}

/// A state over the snapshot's nodes, read as they are asked for, when its trailer says it
/// is as a writer made it; the source back otherwise.
fn layered(src: paged::Source) -> std::result::Result<(State, u64), paged::Source> {
    let (head, b) = paged::Paged::open(src)?;
    let parsed = std::str::from_utf8(&head).ok().and_then(|t| parse(t).ok());
    match parsed {
        Some(In {
            format,
            seq,
            settings,
            archived,
            count: Some(count),
            claimed: Some(claimed),
            scheduled,
            rated,
            due,
            ..
        }) if (OLDEST_FORMAT..=FORMAT).contains(&format) && count == b.len() as u64 => Ok((
            State::layered(
                settings,
                std::sync::Arc::new(b),
                claimed,
                scheduled,
                rated,
                due,
                archived,
            ),
            seq,
        )),
        _ => Err(b.into_source()),
    }
}

/// Reads a snapshot by parsing all of it; true when it has a trailer (`lazy`).
fn read_whole(bytes: &[u8], path: &Path) -> Result<((State, u64), bool)> {
    // One UTF-8 check of the whole file is much cheaper than serde_json's check per string.
    let text = std::str::from_utf8(bytes)
        .map_err(|e| Error::corrupt(path, format!("not a claimdag snapshot: not UTF-8 ({e})")))?;
    match parse(text) {
        Ok(s) if (OLDEST_FORMAT..=FORMAT).contains(&s.format) => {
            let count = s.nodes.len();
            let state = State::from_parts(s.settings, s.nodes, s.archived);
            if state.len() != count {
                return Err(Error::corrupt(path, "duplicate node ids"));
            }
            Ok(((state, s.seq), s.lazy))
        }
        Ok(s) => Err(newer(path, s.format)),
        Err(e) => match serde_json::from_str::<FormatOnly>(text) {
            Ok(f) if !(OLDEST_FORMAT..=FORMAT).contains(&f.format) => Err(newer(path, f.format)),
            _ => Err(Error::corrupt(
                path,
                format!("not a claimdag snapshot: {e}"),
            )),
        },
    }
}

/// Parses the whole text as one snapshot object (nothing but whitespace after it).
fn parse(text: &str) -> serde_json::Result<In> {
    let mut de = serde_json::Deserializer::from_str(text);
    let most = text.len() / MIN_NODE_BYTES;
    let s = (&mut de).deserialize_map(InVisitor { most })?;
    de.end()?;
    Ok(s)
}

fn newer(path: &Path, format: u64) -> Error {
    Error::corrupt(
        path,
        format!(
            "snapshot format {format} is not supported by this claimdag (it reads formats {OLDEST_FORMAT} to {FORMAT})"
        ),
    )
}

/// The top-level fields of a snapshot.
#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "lowercase")]
enum Field {
    Format,
    Seq,
    Settings,
    Archived,
    Count,
    Claimed,
    Scheduled,
    Rated,
    Due,
    Nodes,
    Lazy,
    #[serde(other)]
    Other,
}

/// Reads a snapshot's object as `#[derive(Deserialize)]` would (unknown fields ignored, a
/// field given twice refused), except that the nodes' list is made at its full size up
/// front when `count` comes first: growing it node by node copies it again and again.
struct InVisitor {
    /// The most nodes the file can hold: a larger `count` is not trusted.
    most: usize,
}

impl<'de> Visitor<'de> for InVisitor {
    type Value = In;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a claimdag snapshot object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> std::result::Result<In, A::Error> {
        // A field given twice is refused at its key, before its value is parsed.
        fn fresh<T, E: de::Error>(slot: &Option<T>, name: &'static str) -> Result<(), E> {
            match slot {
                Some(_) => Err(E::duplicate_field(name)),
                None => Ok(()),
            }
        }
        fn once<'de, T: Deserialize<'de>, A: MapAccess<'de>>(
            m: &mut A,
            slot: &mut Option<T>,
            name: &'static str,
        ) -> Result<(), A::Error> {
            fresh(slot, name)?;
            *slot = Some(m.next_value()?);
            Ok(())
        }
        let (mut format, mut seq, mut settings, mut archived) = (None, None, None, None);
        let (mut count, mut claimed, mut nodes) = (None, None, None::<Vec<Node>>);
        let mut scheduled = None;
        let mut rated = None;
        let mut due = None;
        let mut lazy = false;
        while let Some(key) = m.next_key::<Field>()? {
            match key {
                Field::Format => once(&mut m, &mut format, "format")?,
                Field::Seq => once(&mut m, &mut seq, "seq")?,
                Field::Settings => once(&mut m, &mut settings, "settings")?,
                Field::Archived => once(&mut m, &mut archived, "archived")?,
                Field::Count => once::<u64, _>(&mut m, &mut count, "count")?,
                Field::Claimed => once(&mut m, &mut claimed, "claimed")?,
                Field::Scheduled => once(&mut m, &mut scheduled, "scheduled")?,
                Field::Rated => once(&mut m, &mut rated, "rated")?,
                Field::Due => once(&mut m, &mut due, "due")?,
                Field::Nodes => {
                    fresh(&nodes, "nodes")?;
                    let capacity = count.unwrap_or(0).min(self.most as u64) as usize;
                    nodes = Some(m.next_value_seed(Nodes { capacity })?);
                }
                Field::Lazy => {
                    m.next_value::<IgnoredAny>()?;
                    lazy = true;
                }
                Field::Other => {
                    m.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(In {
            format: format.ok_or_else(|| de::Error::missing_field("format"))?,
            seq: seq.ok_or_else(|| de::Error::missing_field("seq"))?,
            settings: settings.unwrap_or_default(),
            archived: archived.unwrap_or_default(),
            count,
            claimed,
            scheduled: scheduled.unwrap_or_default(),
            rated: rated.unwrap_or_default(),
            due: due.unwrap_or_default(),
            nodes: nodes.ok_or_else(|| de::Error::missing_field("nodes"))?,
            lazy,
        })
    }
}

/// Parses a list of nodes made with room for `capacity` of them.
pub fn nodes_with_capacity<'de, D: Deserializer<'de>>(
    d: D,
    capacity: usize,
) -> std::result::Result<Vec<Node>, D::Error> {
    Nodes { capacity }.deserialize(d)
}

/// The nodes' list, made with room for `capacity` nodes.
struct Nodes {
    capacity: usize,
}

impl<'de> DeserializeSeed<'de> for Nodes {
    type Value = Vec<Node>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<Vec<Node>, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Nodes {
    type Value = Vec<Node>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a list of nodes")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<Vec<Node>, A::Error> {
        let mut nodes = Vec::new();
        // Room the allocator cannot give (a count that lies within the cap of a huge file)
        // only means the list grows as it is parsed.
        let _ = nodes.try_reserve_exact(self.capacity);
        while let Some(n) = seq.next_element()? {
            nodes.push(n);
        }
        Ok(nodes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(i: u8) -> Node {
        Node::todo(crate::Id([i; 16]), "task".into(), format!("node {i}"), 5)
    }

    fn written() -> (State, String) {
        let state = State::from_parts(Settings::default(), (1..=3).map(node).collect(), {
            let mut a = IdMap::default();
            a.insert(crate::Id([9; 16]), ArchivedStub::of(&node(9)));
            a
        });
        let mut out = Vec::new();
        write(&mut out, &state, 7).unwrap();
        // Without its trailer, as an older writer left it: these tests edit the text, and an
        // edited file with a trailer is corrupt (its checksums no longer match).
        let text = String::from_utf8(out).unwrap();
        let at = text.rfind(r#","lazy":"#).expect("a trailer");
        (state, format!("{}}}\n", &text[..at]))
    }

    fn read_text(text: &str) -> Result<(State, u64)> {
        read(text.as_bytes(), Path::new("snapshot.json"))
    }

    #[test]
    fn the_count_only_sizes_the_list_and_a_wrong_or_missing_one_reads_the_same() {
        let (state, text) = written();
        assert!(
            text.contains(r#""count":3,"claimed":[],"nodes":["#),
            "{text}"
        );
        assert_eq!(read_text(&text).unwrap(), (state.clone(), 7));
        for other in [
            r#""count":0,"#,
            r#""count":1,"#,
            r#""count":1000000000000,"#,
            "",
        ] {
            let t = text.replace(r#""count":3,"#, other);
            assert_eq!(read_text(&t).unwrap(), (state.clone(), 7), "{other}");
        }
        // After the nodes, or as the only field out of place, it changes nothing either.
        let t = text
            .replace(r#""count":3,"#, "")
            .replace(r#""seq":7,"#, r#""seq":7,"count":2,"#);
        assert_eq!(read_text(&t).unwrap(), (state, 7));
    }

    #[test]
    fn a_snapshot_object_is_read_as_strictly_as_before() {
        let (_, text) = written();
        let refused = |t: &str, phrase: &str| {
            let e = read_text(t).expect_err(t).to_string();
            assert!(e.contains("corrupt") || e.contains("snapshot"), "{e}");
            assert!(e.contains(phrase), "{t}: {e}");
        };
        refused(&text.replace(r#""seq":7,"#, ""), "missing field `seq`");
        refused(
            &text.replace(r#""format":2,"#, ""),
            "missing field `format`",
        );
        let no_nodes = text.replace(r#""count":3,"#, "");
        let at = no_nodes.find(r#","nodes""#).unwrap();
        refused(&format!("{}}}", &no_nodes[..at]), "missing field `nodes`");
        refused(
            &text.replace(r#""seq":7,"#, r#""seq":7,"seq":8,"#),
            "duplicate field `seq`",
        );
        refused(
            &text.replace(r#""count":3,"#, r#""count":3,"count":3,"#),
            "duplicate field `count`",
        );
        refused(
            &text.replace(r#""seq":7,"#, r#""seq":7,"seq":"x","#),
            "duplicate field `seq`",
        );
        refused(&format!("{}x", text.trim_end()), "trailing characters");
        refused(
            &text.replace(r#""count":3"#, r#""count":-1"#),
            "expected u64",
        );
        refused("[2, 7, {}, {}, []]", "snapshot");
        // Unknown fields are ignored, as they always were.
        let t = text.replace(r#""seq":7,"#, r#""seq":7,"later":{"x":[1]},"#);
        assert!(read_text(&t).is_ok());
    }
}
