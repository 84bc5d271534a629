//! The disk after a power cut, built from a trace of the calls a store made (shim.c).
//!
//! The model is ext4's with `data=ordered` (docs/reliability.md, "The disk a power cut
//! leaves"):
//! - Changes to names and sizes (create, truncate, rename, unlink, mkdir, and a write that
//!   grows a file) are journaled in the order they were made: a cut keeps a prefix of them.
//!   The data a growing write brings is flushed before the size that shows it, so it comes
//!   with its place in that prefix, whole.
//! - An fsync or fdatasync of a file whose name or size changed since the journal's last
//!   commit, or of a directory whose entries did, commits the journal: everything of that kind
//!   made before it is kept. A sync of a file with only writes over its bytes commits nothing
//!   but them.
//! - A write over bytes a file already has is kept or lost on its own, per 512-byte sector,
//!   in any order, until the file it went to is synced.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The sector a disk writes whole.
pub const SECTOR: u64 = 512;

/// One recorded call; paths are relative to the traced directory ("" is the directory).
#[derive(Debug, Clone)]
pub enum Call {
    Open {
        path: String,
        trunc: bool,
    },
    Write {
        path: String,
        at: u64,
        data: Vec<u8>,
    },
    Truncate {
        path: String,
        len: u64,
    },
    Allocate {
        path: String,
        end: u64,
    },
    Rename {
        from: String,
        to: String,
    },
    Unlink {
        path: String,
    },
    Mkdir {
        path: String,
    },
    Sync {
        path: String,
    },
    /// The harness's mark: the call with this number returned.
    Ack(usize),
}

/// Parses a trace: the shim's records, and the harness's `K <n>` marks.
pub fn parse(trace: &[u8], root: &Path) -> Vec<Call> {
    let root = root.to_str().expect("utf-8 root").to_string();
    let rel = |p: &str| -> String {
        if p == "-" {
            return "\u{0}outside".to_string();
        }
        let r = p.strip_prefix(&root).expect("a traced path");
        r.trim_start_matches('/').to_string()
    };
    let mut calls = Vec::new();
    let mut i = 0;
    while i < trace.len() {
        let end = i + trace[i..]
            .iter()
            .position(|&b| b == b'\n')
            .expect("a record line");
        let line = std::str::from_utf8(&trace[i..end]).expect("utf-8 record");
        i = end + 1;
        let f: Vec<&str> = line.split(' ').collect();
        let num = |k: usize| -> u64 { f[k].parse().expect("a number") };
        calls.push(match f[0] {
            "O" => Call::Open {
                path: rel(f[1]),
                trunc: num(2) & libc::O_TRUNC as u64 != 0,
            },
            "W" => {
                let len = num(3) as usize;
                let data = trace[i..i + len].to_vec();
                i += len;
                Call::Write {
                    path: rel(f[1]),
                    at: num(2),
                    data,
                }
            }
            "T" => Call::Truncate {
                path: rel(f[1]),
                len: num(2),
            },
            "A" => Call::Allocate {
                path: rel(f[1]),
                end: if f[4] == "0" { num(2) + num(3) } else { 0 },
            },
            "R" => Call::Rename {
                from: rel(f[1]),
                to: rel(f[2]),
            },
            "U" => Call::Unlink { path: rel(f[1]) },
            "M" => Call::Mkdir { path: rel(f[1]) },
            "S" => Call::Sync { path: rel(f[1]) },
            "K" => Call::Ack(num(1) as usize),
            other => panic!("unknown trace record {other:?}"),
        });
    }
    calls
}

/// A change to names or sizes, on file numbers (inodes) rather than names.
#[derive(Debug, Clone)]
enum Meta {
    Create {
        name: String,
        ino: usize,
    },
    Truncate {
        ino: usize,
        len: u64,
    },
    /// Bytes that grow the file: from `at` (its size then) on.
    Grow {
        ino: usize,
        at: u64,
        data: Vec<u8>,
    },
    Rename {
        from: String,
        to: String,
    },
    Unlink {
        name: String,
    },
    Mkdir {
        name: String,
    },
}

/// A write over bytes the file had.
#[derive(Debug, Clone)]
struct Over {
    ino: usize,
    at: u64,
    data: Vec<u8>,
    /// How many metadata changes came before it.
    after_meta: usize,
}

/// The calls up to one cut, sorted into what a power cut keeps or may drop.
pub struct Cut {
    meta: Vec<Meta>,
    overs: Vec<Over>,
    /// Metadata changes a cut must keep (those before the last sync).
    pub must_meta: usize,
    /// For each write over: kept for certain (its file was synced after it).
    must_over: Vec<bool>,
    /// The calls that returned before the cut.
    pub acked: usize,
}

/// What the files looked like just before the cut, file numbers and sizes included.
#[derive(Default)]
struct Live {
    names: BTreeMap<String, usize>,
    sizes: Vec<u64>,
}

impl Live {
    fn ino(&mut self, name: &str) -> usize {
        if let Some(&i) = self.names.get(name) {
            return i;
        }
        // A file the trace never saw made (outside the traced directory): a new number.
        self.sizes.push(0);
        let i = self.sizes.len() - 1;
        self.names.insert(name.to_string(), i);
        i
    }
}

/// Sorts `calls[..cut]`.
pub fn cut(calls: &[Call], cut: usize) -> Cut {
    let mut live = Live::default();
    let mut meta = Vec::new();
    let mut overs: Vec<Over> = Vec::new();
    let mut must_meta = 0;
    let mut synced_at: BTreeMap<usize, usize> = BTreeMap::new(); // ino -> overs.len() at sync
    let mut acked = 0;
    // The metadata changes each file number, and the directory, last had (count after it).
    let mut touched: BTreeMap<usize, usize> = BTreeMap::new();
    let mut entries = 0;
    for c in &calls[..cut] {
        let before = meta.len();
        match c {
            Call::Open { path, trunc } => {
                if !live.names.contains_key(path) {
                    live.sizes.push(0);
                    let ino = live.sizes.len() - 1;
                    live.names.insert(path.clone(), ino);
                    meta.push(Meta::Create {
                        name: path.clone(),
                        ino,
                    });
                } else if *trunc {
                    let ino = live.ino(path);
                    live.sizes[ino] = 0;
                    meta.push(Meta::Truncate { ino, len: 0 });
                }
            }
            Call::Write { path, at, data } => {
                let ino = live.ino(path);
                let size = live.sizes[ino];
                let end = at + data.len() as u64;
                let split = size.clamp(*at, end);
                if split > *at {
                    overs.push(Over {
                        ino,
                        at: *at,
                        data: data[..(split - at) as usize].to_vec(),
                        after_meta: meta.len(),
                    });
                }
                if end > split {
                    let mut grow = vec![0u8; (split - size.min(split)) as usize];
                    grow.extend_from_slice(&data[(split - at) as usize..]);
                    meta.push(Meta::Grow {
                        ino,
                        at: size.min(split),
                        data: grow,
                    });
                    live.sizes[ino] = end;
                }
            }
            Call::Truncate { path, len } => {
                let ino = live.ino(path);
                live.sizes[ino] = *len;
                meta.push(Meta::Truncate { ino, len: *len });
            }
            Call::Allocate { path, end } => {
                let ino = live.ino(path);
                if *end > live.sizes[ino] {
                    let at = live.sizes[ino];
                    meta.push(Meta::Grow {
                        ino,
                        at,
                        data: vec![0; (end - at) as usize],
                    });
                    live.sizes[ino] = *end;
                }
            }
            Call::Rename { from, to } => {
                if let Some(ino) = live.names.remove(from) {
                    live.names.insert(to.clone(), ino);
                }
                meta.push(Meta::Rename {
                    from: from.clone(),
                    to: to.clone(),
                });
            }
            Call::Unlink { path } => {
                live.names.remove(path);
                meta.push(Meta::Unlink { name: path.clone() });
            }
            Call::Mkdir { path } => meta.push(Meta::Mkdir { name: path.clone() }),
            Call::Sync { path } => {
                let ino = live.names.get(path).copied();
                let dirty = match ino {
                    Some(i) => touched.get(&i).is_some_and(|&t| t > must_meta),
                    None => entries > must_meta,
                };
                if dirty {
                    must_meta = meta.len();
                }
                if let Some(i) = ino {
                    synced_at.insert(i, overs.len());
                }
            }
            Call::Ack(n) => acked = n + 1,
        }
        for m in &meta[before..] {
            let at = before + 1;
            match m {
                Meta::Create { ino, .. } => {
                    touched.insert(*ino, at);
                    entries = at;
                }
                Meta::Truncate { ino, .. } | Meta::Grow { ino, .. } => {
                    touched.insert(*ino, at);
                }
                Meta::Rename { .. } | Meta::Unlink { .. } | Meta::Mkdir { .. } => entries = at,
            }
        }
    }
    let must_over = overs
        .iter()
        .enumerate()
        .map(|(i, o)| synced_at.get(&o.ino).is_some_and(|&s| i < s))
        .collect();
    Cut {
        meta,
        overs,
        must_meta,
        must_over,
        acked,
    }
}

/// One way a cut may leave the disk: how many metadata changes are kept, and which sectors
/// of each write over are.
pub struct Choice {
    pub meta: usize,
    /// Per write over: the sectors (relative to its first) kept, or `None` for all of it.
    pub overs: Vec<Option<BTreeSet<u64>>>,
}

impl Cut {
    /// The directory-entry cases `choice` makes: (a rename it drops, a new file's entry it
    /// drops).
    pub fn drops_entries(&self, choice: &Choice) -> (bool, bool) {
        let dropped = &self.meta[choice.meta.min(self.meta.len())..];
        (
            dropped.iter().any(|m| matches!(m, Meta::Rename { .. })),
            dropped.iter().any(|m| matches!(m, Meta::Create { .. })),
        )
    }

    pub fn meta_len(&self) -> usize {
        self.meta.len()
    }

    pub fn over_len(&self) -> usize {
        self.overs.len()
    }

    /// Writes over that are journal records (a record starts with `#`): records written
    /// into space the journal reserved.
    pub fn records_over(&self) -> usize {
        self.overs
            .iter()
            .filter(|o| o.data.first() == Some(&b'#'))
            .count()
    }

    /// Whether write over `i` must be kept.
    pub fn must_over(&self, i: usize) -> bool {
        self.must_over[i]
    }

    /// The sectors write over `i` touches.
    pub fn sectors(&self, i: usize) -> u64 {
        let o = &self.overs[i];
        let first = o.at / SECTOR;
        let last = (o.at + o.data.len() as u64 - 1) / SECTOR;
        last - first + 1
    }

    /// The files and directories `choice` leaves: relative path -> contents (`None` for a
    /// directory). An empty map when even the traced directory is not there.
    pub fn files(&self, choice: &Choice) -> BTreeMap<String, Option<Vec<u8>>> {
        let mut names: BTreeMap<String, usize> = BTreeMap::new();
        let mut dirs: BTreeSet<String> = BTreeSet::new();
        let mut data: BTreeMap<usize, Vec<u8>> = BTreeMap::new();
        let mut next_over = 0;
        let apply_overs = |upto: usize, next: &mut usize, data: &mut BTreeMap<usize, Vec<u8>>| {
            while *next < self.overs.len() && self.overs[*next].after_meta <= upto {
                let o = &self.overs[*next];
                let keep = if self.must_over[*next] {
                    None
                } else {
                    choice.overs[*next].clone()
                };
                if keep.as_ref().is_none_or(|s| !s.is_empty()) {
                    if let Some(d) = data.get_mut(&o.ino) {
                        write_over(d, o, keep.as_ref());
                    }
                }
                *next += 1;
            }
        };
        for (k, m) in self.meta.iter().take(choice.meta).enumerate() {
            apply_overs(k, &mut next_over, &mut data);
            match m {
                Meta::Create { name, ino } => {
                    names.insert(name.clone(), *ino);
                    data.entry(*ino).or_default().clear();
                }
                Meta::Truncate { ino, len } => {
                    if let Some(d) = data.get_mut(ino) {
                        d.resize(*len as usize, 0);
                    }
                }
                Meta::Grow {
                    ino,
                    at,
                    data: bytes,
                } => {
                    if let Some(d) = data.get_mut(ino) {
                        d.resize(*at as usize, 0);
                        d.extend_from_slice(bytes);
                    }
                }
                Meta::Rename { from, to } => {
                    if let Some(ino) = names.remove(from) {
                        names.insert(to.clone(), ino);
                    }
                }
                Meta::Unlink { name } => {
                    names.remove(name);
                }
                Meta::Mkdir { name } => {
                    dirs.insert(name.clone());
                }
            }
        }
        // The writes over made after the last kept metadata change (on the files that exist).
        apply_overs(usize::MAX, &mut next_over, &mut data);
        if !dirs.contains("") {
            return BTreeMap::new();
        }
        let mut out: BTreeMap<String, Option<Vec<u8>>> =
            dirs.into_iter().map(|d| (d, None)).collect();
        for (name, ino) in names {
            out.insert(name, Some(data.get(&ino).cloned().unwrap_or_default()));
        }
        out
    }
}

/// Puts write over `o` into `d`, only `keep`'s sectors when given, never past `d`'s end.
fn write_over(d: &mut [u8], o: &Over, keep: Option<&BTreeSet<u64>>) {
    let first = o.at / SECTOR;
    for (i, b) in o.data.iter().enumerate() {
        let at = o.at + i as u64;
        if at as usize >= d.len() {
            break;
        }
        if keep.is_none_or(|s| s.contains(&(at / SECTOR - first))) {
            d[at as usize] = *b;
        }
    }
}
