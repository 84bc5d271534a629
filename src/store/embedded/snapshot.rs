//! `snapshot.json`: the whole state as of journal record `seq`.
//!
//! ```json
//! {"format": 2, "seq": 42, "settings": {...},
//!  "archived": {"<id>": {"status": "done", "generation": 3, "workspace": "a"}}, "nodes": [...]}
//! ```
//!
//! Format 1 kept only the status of an archived node; such stubs are read with generation 0
//! and completed from the archive when the store is loaded. Format 2 is written.

use crate::error::{Error, Result};
use crate::id::IdMap;
use crate::model::{ArchivedStub, Node, Settings, State};
use serde::{Deserialize, Serialize};
use std::path::Path;

pub const FORMAT: u64 = 2;
/// The oldest format this version reads (and migrates).
pub const OLDEST_FORMAT: u64 = 1;

#[derive(Serialize)]
struct Out<'a> {
    format: u64,
    seq: u64,
    settings: &'a Settings,
    archived: &'a IdMap<ArchivedStub>,
    nodes: &'a [Node],
}

#[derive(Deserialize)]
struct In {
    format: u64,
    seq: u64,
    #[serde(default)]
    settings: Settings,
    #[serde(default)]
    archived: IdMap<ArchivedStub>,
    nodes: Vec<Node>,
}

#[derive(Deserialize)]
struct FormatOnly {
    format: u64,
}

/// Writes the state as of record `seq`.
pub fn write(w: &mut dyn std::io::Write, state: &State, seq: u64) -> std::io::Result<()> {
    let out = Out {
        format: FORMAT,
        seq,
        settings: &state.settings,
        archived: state.archived(),
        nodes: state.nodes(),
    };
    serde_json::to_writer(&mut *w, &out)?;
    w.write_all(b"\n")
}

/// Reads a snapshot; anything malformed is `corrupt`.
pub fn read(bytes: &[u8], path: &Path) -> Result<(State, u64)> {
    // One UTF-8 check of the whole file is much cheaper than serde_json's check per string.
    let text = std::str::from_utf8(bytes)
        .map_err(|e| Error::corrupt(path, format!("not a claimdag snapshot: not UTF-8 ({e})")))?;
    match serde_json::from_str::<In>(text) {
        Ok(s) if (OLDEST_FORMAT..=FORMAT).contains(&s.format) => {
            let count = s.nodes.len();
            let state = State::from_parts(s.settings, s.nodes, s.archived);
            if state.len() != count {
                return Err(Error::corrupt(path, "duplicate node ids"));
            }
            Ok((state, s.seq))
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

fn newer(path: &Path, format: u64) -> Error {
    Error::corrupt(
        path,
        format!(
            "snapshot format {format} is not supported by this claimdag (it reads formats {OLDEST_FORMAT} to {FORMAT})"
        ),
    )
}
