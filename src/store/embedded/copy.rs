//! Loading a whole store ([`Dump`]) into an empty directory, for `claimdag copy`: the side
//! files first, then the journal header and the snapshot, whose rename is the moment the
//! store exists. A crash before it leaves a directory that still reads as empty.

use super::fsutil::{self, Mode};
use super::logs::ArchiveLine;
use super::{journal, snapshot, ARCHIVE, HISTORY, JOURNAL, LOCK, SNAPSHOT};
use crate::error::{Error, Result};
use crate::model::ArchivedStub;
use crate::state::State;
use crate::store::backend::Dump;
use std::path::Path;

pub(super) fn load(dir: &Path, dump: &Dump) -> Result<()> {
    fsutil::ensure_dir(dir)?;
    let lock = fsutil::open(&dir.join(LOCK), Mode::ReadWriteCreate)?;
    lock.lock()
        .map_err(|e| fsutil::describe(&dir.join(LOCK), &e))?;
    let result = (|| {
        // A store exists once its first write made the snapshot.
        if fsutil::open_existing(&dir.join(SNAPSHOT))?.is_some() {
            return Err(Error::invalid(format!(
                "{} is not an empty store: copy writes only into a new one",
                dir.display()
            )));
        }
        write_lines(dir, HISTORY, dump.history.iter().map(serde_json::to_vec))?;
        write_lines(
            dir,
            ARCHIVE,
            dump.archived.iter().map(|n| {
                serde_json::to_vec(&ArchiveLine {
                    seq: dump.seq,
                    node: n.clone(),
                })
            }),
        )?;
        if !dump.actors.is_empty() {
            super::actors::keep(dir, &dump.actors)?;
        }
        if !dump.tokens.is_empty() {
            super::tokens::add(dir, &dump.tokens)?;
        }
        fsutil::replace_atomically(dir, JOURNAL, &mut |w| w.write_all(journal::HEADER))?;
        let stubs = dump
            .archived
            .iter()
            .map(|n| (n.id, ArchivedStub::of(n)))
            .collect();
        let state = State::from_parts(dump.settings.clone(), dump.nodes.clone(), stubs);
        fsutil::replace_atomically(dir, SNAPSHOT, &mut |w| snapshot::write(w, &state, dump.seq))
    })();
    let _ = lock.unlock();
    result
}

fn write_lines<I>(dir: &Path, name: &str, lines: I) -> Result<()>
where
    I: Iterator<Item = serde_json::Result<Vec<u8>>>,
{
    let mut all = Vec::new();
    for l in lines {
        all.extend(l.map_err(|e| Error::Internal(e.to_string()))?);
        all.push(b'\n');
    }
    fsutil::replace_atomically(dir, name, &mut |w| w.write_all(&all))
}
