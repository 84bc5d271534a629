//! A snapshot's nodes read and decoded one at a time when asked for: a process that
//! touches a few nodes of a large store reads and decodes a few pages of it.
//!
//! The snapshot writer (`super`, snapshot/mod.rs) lays out, after the nodes' list, an index of
//! them sorted by id and a trailer with a checksum of every page of what comes before it:
//!
//! ```text
//! {"format":2, ..., "nodes":[{...},{...}],"index":"<entries>","lazy":{"nodes_at":A,
//!  "nodes_len":L,"index_at":B,"index_len":M,"page":65536,"pages":"<crc32 of each page>",
//!  "from":"<where the trailer starts: 16 hex>"}}
//! ```
//!
//! An index entry is 56 hex characters: the node's id (32), where its JSON starts in the
//! nodes' list (12) and how long it is (12). A page is 64 KiB of the file; every page is
//! read at most once and checked against its CRC-32 (IEEE) before anything in it is used.
//! A file without a trailer (an older writer) is read whole, as before; so is one whose
//! trailer does not describe it, once [`Paged::pages`] finds every page as it was written
//! (a page that fails, the head's and those where the nodes' list and the index end
//! included, makes the snapshot `corrupt`). A page read later that fails its checksum, or a
//! node that does not decode, damages the state ([`Paged::damage`]): the store then reports
//! the snapshot `corrupt` and throws away what was read or decided on it.

use crate::id::{lower_hex_u64 as hex, Id};
use crate::model::Node;
use crate::schedule::pick_order::PickOrder;
use crate::state::frozen::{Damage, Frozen};
use std::borrow::Cow;
use std::ops::Range;
use std::os::unix::fs::FileExt;
use std::sync::OnceLock;

/// An index entry's id, and where its node's bytes start in the nodes' list and how many
/// they are.
pub(super) type Span = (Id, u64, u64);

/// Hex characters of one index entry: the id (32), the offset (12) and the length (12).
pub const ENTRY: usize = 56;
/// Bytes of one checksummed page.
pub const PAGE: u64 = 64 << 10;
/// The end of a trailer: `"from":"<16 hex>"}}` and a newline.
pub const TAIL: usize = 28;

/// The trailer of a snapshot with an index.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Layout {
    pub nodes_at: u64,
    pub nodes_len: u64,
    pub index_at: u64,
    pub index_len: u64,
    pub page: u64,
    /// The CRC-32 of each page of the bytes before the trailer, 8 hex characters each.
    pub pages: String,
    /// Where the stored pick order ([`super::pick`]) starts and its length, when
    /// the snapshot has one (after the index).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pick_at: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pick_len: Option<u64>,
    /// Where the trailer (`,"lazy":`) starts, as 16 hex characters: always last.
    pub from: String,
}

/// Where a snapshot's bytes are read from.
pub enum Source {
    File(std::fs::File),
    /// Bytes in memory (the tests and the fuzz targets read snapshots so).
    #[cfg_attr(not(feature = "internals"), allow(dead_code))]
    Bytes(Vec<u8>),
}

impl Source {
    pub fn read_at(&self, buf: &mut [u8], at: u64) -> std::io::Result<()> {
        match self {
            Source::File(f) => f.read_exact_at(buf, at),
            Source::Bytes(b) => {
                let start = usize::try_from(at).unwrap_or(usize::MAX);
                match b.get(start..start.saturating_add(buf.len())) {
                    Some(from) => {
                        buf.copy_from_slice(from);
                        Ok(())
                    }
                    None => Err(std::io::ErrorKind::UnexpectedEof.into()),
                }
            }
        }
    }

    /// The number of bytes of the source.
    pub fn size(&self) -> std::io::Result<u64> {
        match self {
            Source::File(f) => Ok(f.metadata()?.len()),
            Source::Bytes(b) => Ok(b.len() as u64),
        }
    }

    fn read(&self, r: Range<u64>) -> std::io::Result<Vec<u8>> {
        let mut buf = vec![0; usize::try_from(r.end - r.start).unwrap_or(0)];
        self.read_at(&mut buf, r.start)?;
        Ok(buf)
    }
}

/// Bytes read whole from the source with the pages they touch checked: `bytes[from..]` is
/// what was asked for (the part of the first page before it was read for its checksum, and
/// is not moved out of the way).
pub(super) struct Checked {
    bytes: Vec<u8>,
    from: usize,
}

impl std::ops::Deref for Checked {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        &self.bytes[self.from..]
    }
}

/// What a snapshot's trailer says of its pages ([`Paged::pages`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pages {
    /// No trailer where the file's last bytes point (an older writer, or none at all).
    NoTrailer,
    /// Every page matches its checksum.
    Match,
    /// The page that starts at this byte fails its checksum.
    Fail(u64),
}

/// The nodes of a snapshot, read and decoded on demand.
pub struct Paged {
    src: Source,
    /// The bytes before the trailer: what the pages cover.
    covered: u64,
    crcs: Vec<u32>,
    pages: Vec<OnceLock<Box<[u8]>>>,
    nodes: Range<u64>,
    /// The index's entries, without the quotes around them.
    index: Range<u64>,
    /// The stored pick order, if there is one.
    pick: Option<Range<u64>>,
    /// One slot per index entry: the node, once decoded.
    decoded: Slots,
    damage: OnceLock<Damage>,
}

impl std::fmt::Debug for Paged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Paged").field("count", &self.len()).finish()
    }
}

/// Where a base keeps the nodes it decoded: one slot per index entry, made a chunk of
/// [`Slots::CHUNK`] at a time when a node in it is first decoded, so that opening a large
/// snapshot to read a few nodes does not write a slot for each of them (16 MB at a million
/// nodes, every page of it touched). A chunk is 4 KiB of slots.
struct Slots {
    len: usize,
    chunks: Vec<OnceLock<Box<[Slot]>>>,
}

/// A node of the base, once decoded.
type Slot = OnceLock<Box<Node>>;

impl Slots {
    const CHUNK: usize = 256;

    fn new(len: usize) -> Slots {
        let mut chunks = Vec::new();
        chunks.resize_with(len.div_ceil(Slots::CHUNK), OnceLock::new);
        Slots { len, chunks }
    }

    /// The node of slot `i`, if it was decoded (`i` past the slots is a caller's bug, as an
    /// index past a slice is).
    fn get(&self, i: usize) -> Option<&Node> {
        assert!(i < self.len, "slot {i} of {}", self.len);
        let chunk = self.chunks[i / Slots::CHUNK].get()?;
        chunk[i % Slots::CHUNK].get().map(|n| &**n)
    }

    /// Slot `i` (its chunk made if it is not yet).
    fn slot(&self, i: usize) -> &Slot {
        assert!(i < self.len, "slot {i} of {}", self.len);
        let first = i / Slots::CHUNK * Slots::CHUNK;
        let chunk = self.chunks[i / Slots::CHUNK].get_or_init(|| {
            let n = Slots::CHUNK.min(self.len - first);
            (0..n).map(|_| OnceLock::new()).collect()
        });
        &chunk[i - first]
    }
}

/// The head of a snapshot with an index (everything before its nodes, then `[]}`) and its
/// base; the source back when it has no index that matches.
pub type Opened = Result<(Vec<u8>, Paged), Source>;

impl Paged {
    /// Reads the trailer and the head of `src`. `Err(src)`: read the file whole.
    pub fn open(src: Source) -> Opened {
        match Paged::layout(&src) {
            Some((layout, covered)) => Paged::with(src, &layout, covered),
            None => Err(src),
        }
    }

    fn layout(src: &Source) -> Option<(Layout, u64)> {
        let len = src.size().ok()?;
        let mut tail = [0u8; TAIL];
        src.read_at(&mut tail, len.checked_sub(TAIL as u64)?).ok()?;
        let at = tail.strip_prefix(b"\"from\":\"")?.strip_suffix(b"\"}}\n")?;
        let covered = u64::from_str_radix(std::str::from_utf8(at).ok()?, 16).ok()?;
        // The trailer holds 8 hex characters a page: a sane size, whatever it claims.
        let pages = covered.div_ceil(PAGE);
        let most = 256 + 8 * pages;
        if covered >= len || len - covered > most {
            return None;
        }
        let trailer = src.read(covered..len).ok()?;
        let body = trailer.strip_prefix(b",\"lazy\":")?.strip_suffix(b"}\n")?;
        let layout: Layout = serde_json::from_slice(body).ok()?;
        let ok = layout.page == PAGE
            && layout.pages.len() as u64 == 8 * pages
            && layout.from == format!("{covered:016x}");
        ok.then_some((layout, covered))
    }

    /// Every page of `src` checked against its trailer, for a file that is not read through
    /// its index: a snapshot whose trailer is there is read only as it was written.
    pub fn pages(src: &Source) -> std::io::Result<Pages> {
        let Some((layout, covered)) = Paged::layout(src) else {
            return Ok(Pages::NoTrailer);
        };
        let bytes = src.read(0..covered)?;
        let want = layout.pages.as_bytes().chunks(8);
        for (k, (page, want)) in bytes.chunks(PAGE as usize).zip(want).enumerate() {
            if hex(want) != Some(crc32fast::hash(page).into()) {
                return Ok(Pages::Fail(k as u64 * PAGE));
            }
        }
        Ok(Pages::Match)
    }

    fn with(src: Source, layout: &Layout, covered: u64) -> Opened {
        let crcs: Option<Vec<u32>> = layout
            .pages
            .as_bytes()
            .chunks(8)
            .map(|c| u32::try_from(hex(c)?).ok())
            .collect();
        let end = |at: u64, len: u64| at.checked_add(len).filter(|&e| e <= covered);
        let (Some(crcs), Some(nodes_end), Some(index_end)) = (
            crcs,
            end(layout.nodes_at, layout.nodes_len),
            end(layout.index_at, layout.index_len),
        ) else {
            return Err(src);
        };
        let index_start = layout.index_at + 1;
        let entries = layout.index_len.saturating_sub(2);
        let pick = match (layout.pick_at, layout.pick_len) {
            (None, None) => None,
            (Some(at), Some(len)) => match end(at, len) {
                Some(e) if at == index_end + b",\"pick\":".len() as u64 && len >= 2 => Some(at..e),
                _ => return Err(src),
            },
            _ => return Err(src),
        };
        let fits = nodes_end + b",\"index\":".len() as u64 == layout.index_at
            && pick.as_ref().map_or(index_end, |p| p.end) == covered
            && layout.nodes_len >= 2
            && layout.index_len >= 2
            && entries.is_multiple_of(ENTRY as u64);
        if !fits {
            return Err(src);
        }
        let mut pages = Vec::new();
        pages.resize_with(crcs.len(), OnceLock::new);
        let decoded = Slots::new((entries / ENTRY as u64) as usize);
        let base = Paged {
            src,
            covered,
            crcs,
            pages,
            nodes: layout.nodes_at..nodes_end,
            index: index_start..index_end - 1,
            pick: pick.clone(),
            decoded,
            damage: OnceLock::new(),
        };
        // The head, and the bytes around the nodes and the index, as the writer puts them.
        let head = base.bytes(0..layout.nodes_at).map(Cow::into_owned);
        let edge =
            |at: u64, want: &[u8]| base.bytes(at..at + want.len() as u64).as_deref() == Some(want);
        let framed = edge(layout.nodes_at, b"[")
            && edge(nodes_end - 1, b"]")
            && edge(nodes_end, b",\"index\":\"")
            && edge(index_end - 1, b"\"")
            && (pick.is_none() || edge(index_end, b",\"pick\":{"));
        match head {
            Some(mut h) if framed && base.damage.get().is_none() && h.ends_with(b",\"nodes\":") => {
                h.extend_from_slice(b"[]}");
                Ok((h, base))
            }
            _ => Err(base.src),
        }
    }

    pub fn len(&self) -> usize {
        self.decoded.len
    }

    /// The source back, to read it whole.
    pub fn into_source(self) -> Source {
        self.src
    }

    /// Why something asked of this base could not be given, if anything could not.
    pub fn damage(&self) -> Option<&Damage> {
        self.damage.get()
    }

    fn damaged(&self, why: String, io: bool) {
        let _ = self.damage.set(Damage { why, io });
    }

    /// Page `p`, read and checked the first time it is asked for.
    fn page(&self, p: usize) -> Option<&[u8]> {
        if let Some(b) = self.pages[p].get() {
            return Some(b);
        }
        let start = p as u64 * PAGE;
        let end = (start + PAGE).min(self.covered);
        let buf = match self.src.read(start..end) {
            Ok(b) => b,
            Err(e) => {
                self.damaged(format!("reading bytes {start} to {end}: {e}"), true);
                return None;
            }
        };
        if crc32fast::hash(&buf) != self.crcs[p] {
            self.damaged(
                format!("the page at byte {start} fails its checksum"),
                false,
            );
            return None;
        }
        Some(self.pages[p].get_or_init(|| buf.into_boxed_slice()))
    }

    /// Whether the pages hold the bytes `r` (the base damaged when they do not).
    fn covers(&self, r: &Range<u64>) -> bool {
        let ok = r.start < r.end && r.end <= self.covered;
        if !ok {
            self.damaged(
                format!("bytes {} to {} are past the pages", r.start, r.end),
                false,
            );
        }
        ok
    }

    /// `f` of the bytes `r` in order, a page's part at a time, from the pages themselves
    /// (`None` when a page cannot be read, or `f` says so).
    fn each_piece(&self, r: Range<u64>, mut f: impl FnMut(&[u8]) -> Option<()>) -> Option<()> {
        if !self.covers(&r) {
            return None;
        }
        let (first, last) = ((r.start / PAGE) as usize, ((r.end - 1) / PAGE) as usize);
        for p in first..=last {
            let page = self.page(p)?;
            let start = p as u64 * PAGE;
            let lo = (r.start.max(start) - start) as usize;
            let hi = (r.end.min(start + PAGE) - start) as usize;
            f(&page[lo..hi])?;
        }
        Some(())
    }

    /// The bytes `r`, from the pages that hold them.
    fn bytes(&self, r: Range<u64>) -> Option<Cow<'_, [u8]>> {
        if !self.covers(&r) {
            return None;
        }
        let (first, last) = ((r.start / PAGE) as usize, ((r.end - 1) / PAGE) as usize);
        let from = (r.start - first as u64 * PAGE) as usize;
        if first == last {
            let p = self.page(first)?;
            return Some(Cow::Borrowed(&p[from..from + (r.end - r.start) as usize]));
        }
        // Only the part of each page that `r` covers is copied (an index entry across two
        // pages is 56 bytes, not two pages).
        let mut out = Vec::with_capacity((r.end - r.start) as usize);
        self.each_piece(r, |piece| {
            out.extend_from_slice(piece);
            Some(())
        })?;
        Some(Cow::Owned(out))
    }

    /// The bytes `r` read in one go, every page they touch checked, none kept.
    fn read_checked(&self, r: Range<u64>) -> Option<Checked> {
        let (first, last) = (r.start / PAGE, r.end.saturating_sub(1) / PAGE);
        let span = first * PAGE..((last + 1) * PAGE).min(self.covered);
        let mut buf = match self.src.read(span.clone()) {
            Ok(b) => b,
            Err(e) => {
                let why = format!("reading bytes {} to {}: {e}", span.start, span.end);
                self.damaged(why, true);
                return None;
            }
        };
        for (k, page) in buf.chunks(PAGE as usize).enumerate() {
            let p = first as usize + k;
            if crc32fast::hash(page) != self.crcs[p] {
                let why = format!("the page at byte {} fails its checksum", p as u64 * PAGE);
                self.damaged(why, false);
                return None;
            }
        }
        buf.truncate((r.end - span.start) as usize);
        Some(Checked {
            bytes: buf,
            from: (r.start - span.start) as usize,
        })
    }

    fn entry(&self, i: usize) -> Option<Cow<'_, [u8]>> {
        let at = self.index.start + (i * ENTRY) as u64;
        self.bytes(at..at + ENTRY as u64)
    }

    /// Where entry `i`'s node starts in the nodes' list (its place in creation order).
    pub fn offset(&self, i: usize) -> Option<u64> {
        self.entry(i).and_then(|e| hex(&e[32..44]))
    }

    /// The entry of `id`, found by bisecting the sorted index.
    pub fn find(&self, id: &Id) -> Option<usize> {
        let want = id.hex();
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = (lo + hi) / 2;
            match self.entry(mid)?[..32].cmp(want.as_bytes()) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Some(mid),
            }
        }
        None
    }

    /// PickOrder entry `i` and where its node's bytes start and end (the base damaged, and
    /// `None`, when the entry does not say).
    fn span(&self, i: usize) -> Option<(Cow<'_, [u8]>, u64, u64)> {
        let e = self.entry(i)?;
        let (Some(at), Some(len)) = (hex(&e[32..44]), hex(&e[44..56])) else {
            self.damaged(format!("index entry {i} is not hex"), false);
            return None;
        };
        let start = self.nodes.start.saturating_add(at);
        let Some(end) = start.checked_add(len).filter(|&end| end <= self.nodes.end) else {
            self.damaged(format!("index entry {i} points outside the nodes"), false);
            return None;
        };
        Some((e, start, end))
    }

    /// Checks the pages that node `i`'s bytes sit in without decoding it, for a node that a
    /// change replaces whole (the base damaged when they fail their checksums).
    pub fn check_pages_of(&self, i: usize) {
        if let Some((_, start, end)) = self.span(i) {
            let _ = self.bytes(start..end);
        }
    }

    /// The node of entry `i`, decoded the first time it is asked for; `None` (and the base
    /// damaged) when it cannot be.
    pub fn node(&self, i: usize) -> Option<&Node> {
        if let Some(n) = self.decoded.get(i) {
            return Some(n);
        }
        let (e, start, end) = self.span(i)?;
        let json = self.bytes(start..end)?;
        match serde_json::from_slice::<Node>(&json) {
            Ok(node) if node.id.hex().as_bytes() == &e[..32] => {
                Some(self.decoded.slot(i).get_or_init(|| Box::new(node)))
            }
            Ok(_) => {
                self.damaged(
                    format!("index entry {i} names another node than it points at"),
                    false,
                );
                None
            }
            Err(err) => {
                self.damaged(
                    format!("the node at byte {start} does not decode: {err}"),
                    false,
                );
                None
            }
        }
    }

    /// Every node in creation order, decoded in one pass over the list (the base damaged,
    /// and none returned, when they do not decode as the index says).
    pub fn all(&self) -> Vec<Node> {
        let Some(list) = self.read_checked(self.nodes.clone()) else {
            return Vec::new();
        };
        let mut de = serde_json::Deserializer::from_slice(&list);
        match super::nodes_with_capacity(&mut de, self.len()) {
            Ok(nodes) if nodes.len() == self.len() => nodes,
            Ok(nodes) => {
                let why = format!(
                    "{} nodes in the list, {} in the index",
                    nodes.len(),
                    self.len()
                );
                self.damaged(why, false);
                Vec::new()
            }
            Err(e) => {
                self.damaged(format!("the nodes do not decode: {e}"), false);
                Vec::new()
            }
        }
    }

    /// Reads every page and checks the index against the nodes' list (what `check` does):
    /// the base is damaged if anything does not match.
    pub fn verify(&self) {
        if self.read_checked(0..self.covered).is_none() {
            return;
        }
        for i in 1..self.len() {
            let (Some(a), Some(b)) = (self.entry(i - 1), self.entry(i)) else {
                return;
            };
            if a[..32] >= b[..32] {
                self.damaged(
                    format!("index entries {} and {i} are out of order", i - 1),
                    false,
                );
                return;
            }
        }
        for n in self.all() {
            if self.find(&n.id).and_then(|e| self.node(e)) != Some(&n) {
                self.damaged(
                    format!("node {} is not where the index says", n.id.hex()),
                    false,
                );
                return;
            }
        }
    }

    /// Whether the snapshot stores its pick order.
    pub fn has_pick(&self) -> bool {
        self.pick.is_some()
    }

    /// `f` of the stored pick order's bytes (`None`, and the base damaged, when they cannot
    /// be read): from its page when it sits in one, else read whole into one buffer (41
    /// bytes a node) with its pages checked, not kept as pages and copied out of them.
    pub fn with_pick<T>(&self, f: impl FnOnce(&[u8]) -> T) -> Option<T> {
        let r = self.pick.clone()?;
        if r.start / PAGE == (r.end - 1) / PAGE {
            return self.bytes(r).map(|b| f(&b));
        }
        self.read_checked(r).map(|b| f(&b))
    }

    /// Every index entry's id and where its node starts in the nodes' list, in the index's
    /// order (`None`, and the base damaged, when they cannot be read).
    pub fn entries(&self) -> Option<Vec<(Id, u64)>> {
        self.each_entry(|id, at, _| (id, at))
    }

    /// `f` of every index entry's id, where its node starts in the nodes' list and how many
    /// bytes it is, in the index's order (`None`, and the base damaged, when an entry
    /// cannot be read).
    fn each_entry<T>(&self, f: impl Fn(Id, u64, u64) -> T) -> Option<Vec<T>> {
        let mut out = Vec::with_capacity(self.len());
        if self.index.is_empty() {
            return Some(out);
        }
        let entry =
            |e: &[u8], i: usize| match (Id::from_hex(&e[..32]), hex(&e[32..44]), hex(&e[44..56])) {
                (Some(id), Some(at), Some(len)) => Some(f(id, at, len)),
                _ => {
                    self.damaged(format!("index entry {i} is not hex"), false);
                    None
                }
            };
        // Page by page from the pages themselves: an entry across two pages is put
        // together in `held`, the index is never copied whole.
        let (mut held, mut n) = ([0u8; ENTRY], 0);
        self.each_piece(self.index.clone(), |mut piece| {
            if n > 0 {
                let take = (ENTRY - n).min(piece.len());
                held[n..n + take].copy_from_slice(&piece[..take]);
                (n, piece) = (n + take, &piece[take..]);
                if n < ENTRY {
                    return Some(());
                }
                out.push(entry(&held, out.len())?);
                n = 0;
            }
            let mut whole = piece.chunks_exact(ENTRY);
            for e in &mut whole {
                out.push(entry(e, out.len())?);
            }
            let rest = whole.remainder();
            held[..rest.len()].copy_from_slice(rest);
            n = rest.len();
            Some(())
        })?;
        if n != 0 {
            self.damaged("the index ends inside an entry".into(), false);
            return None;
        }
        Some(out)
    }

    /// Every index entry's id, where its node's bytes start in the nodes' list and how many
    /// they are, in the list's (creation) order; with the list itself, every page it
    /// touches checked. `None`, and the base damaged, when they cannot be read.
    pub(super) fn list_and_spans(&self) -> Option<(Checked, Vec<Span>)> {
        let list = self.read_checked(self.nodes.clone())?;
        let mut spans = self.each_entry(|id, at, len| (id, at, len))?;
        spans.sort_unstable_by_key(|s| s.1);
        Some((list, spans))
    }

    /// Past where every node starts in the nodes' list.
    pub fn nodes_len(&self) -> u64 {
        self.nodes.end - self.nodes.start
    }

    /// The id of entry `i`.
    fn id(&self, i: usize) -> Option<Id> {
        let e = self.entry(i)?;
        let text = std::str::from_utf8(&e[..32]).ok()?;
        Id::parse(text, "index entry").ok()
    }

    /// The first entry whose id is not below `prefix` (hex) in the sorted index.
    fn first_at_or_after(&self, prefix: &str) -> usize {
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = (lo + hi) / 2;
            match self.entry(mid) {
                Some(e) if &e[..32] < prefix.as_bytes() => lo = mid + 1,
                Some(_) => hi = mid,
                None => return self.len(),
            }
        }
        lo
    }

    /// True when entry `i`'s id starts with `prefix`.
    fn entry_starts_with(&self, i: usize, prefix: &str) -> bool {
        self.entry(i)
            .is_some_and(|e| e.starts_with(prefix.as_bytes()))
    }
}

impl Frozen for Paged {
    fn len(&self) -> usize {
        Paged::len(self)
    }
    fn find(&self, id: &Id) -> Option<usize> {
        Paged::find(self, id)
    }
    fn node(&self, e: usize) -> Option<&Node> {
        Paged::node(self, e)
    }
    fn id(&self, e: usize) -> Option<Id> {
        Paged::id(self, e)
    }
    fn check_entry(&self, e: usize) {
        self.check_pages_of(e)
    }
    fn position(&self, e: usize) -> Option<u64> {
        self.offset(e)
    }
    fn all(&self) -> Vec<Node> {
        Paged::all(self)
    }
    fn first_at_or_after(&self, prefix: &str) -> usize {
        Paged::first_at_or_after(self, prefix)
    }
    fn entry_starts_with(&self, e: usize, prefix: &str) -> bool {
        Paged::entry_starts_with(self, e, prefix)
    }
    fn damage(&self) -> Option<&Damage> {
        Paged::damage(self)
    }
    fn verify(&self) {
        Paged::verify(self)
    }
    fn has_stored_order(&self) -> bool {
        self.has_pick()
    }
    fn stored_order(&self, max_attempts: Option<u32>) -> Option<PickOrder> {
        // Entries that cannot be read damage the snapshot themselves.
        let entries = || self.entries();
        let end = self.nodes_len();
        let decoded =
            self.with_pick(|text| super::pick::decode(text, max_attempts, entries, end))?;
        match decoded {
            Ok(ix) => ix,
            Err(why) => {
                self.damaged(format!("the stored pick order does not read: {why}"), false);
                None
            }
        }
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
