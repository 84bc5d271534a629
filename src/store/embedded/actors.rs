//! `actors.json`: the names the store keeps for its actors (docs/files.md). A name is kept
//! once and never changes meaning (an actor's id is its name's), so the file only grows; a
//! write is a whole new file renamed over the old one under `actors.lock`, and a reader
//! reads whichever whole file is there.

use super::fsutil::{self, Mode};
use crate::error::{Error, Result};
use crate::model::ActorName;
use serde::{Deserialize, Serialize};
use std::path::Path;

pub const ACTORS: &str = "actors.json";
pub const ACTORS_LOCK: &str = "actors.lock";

#[derive(Serialize, Deserialize)]
struct File {
    format: u32,
    actors: Vec<ActorName>,
}

/// The names kept, in the order first kept (none when the file is not there).
pub fn read(dir: &Path) -> Result<Vec<ActorName>> {
    Ok(read_kept::<File>(dir, ACTORS, "the actors file")?.map_or_else(Vec::new, |f| f.actors))
}

/// A file of format 1 kept beside the journal (`actors.json`, `tokens.json`), if it is
/// there; `what` it is, for the error of one that does not read.
pub fn read_kept<T: Versioned>(dir: &Path, name: &str, what: &str) -> Result<Option<T>> {
    let path = dir.join(name);
    let Some(f) = fsutil::open_existing(&path)? else {
        return Ok(None);
    };
    let bytes = fsutil::read_all(f, &path)?;
    let file: T = serde_json::from_slice(&bytes)
        .map_err(|e| Error::corrupt(&path, format!("not {what}: {e}")))?;
    if file.format() != 1 {
        return Err(Error::corrupt(
            &path,
            format!("format {} is not one this claimdag reads (1)", file.format()),
        ));
    }
    Ok(Some(file))
}

/// A kept file's content, with its format number.
pub trait Versioned: serde::de::DeserializeOwned {
    fn format(&self) -> u32;
}

impl Versioned for File {
    fn format(&self) -> u32 {
        self.format
    }
}

/// Keeps `names`: one not kept yet is added; one kept already keeps its name and first
/// time, and takes the note given (if any). Nothing is written when nothing changes.
pub fn keep(dir: &Path, names: &[ActorName]) -> Result<()> {
    // Most calls name actors kept already: the whole file read (it is only ever replaced
    // whole) says so without taking the lock or writing anything.
    if !merge(&mut read(dir)?, names) {
        return Ok(());
    }
    fsutil::ensure_dir(dir)?;
    let lock_path = dir.join(ACTORS_LOCK);
    let lock = fsutil::open(&lock_path, Mode::ReadWriteCreate)?;
    lock.lock().map_err(|e| fsutil::describe(&lock_path, &e))?;
    let result = (|| {
        let mut all = read(dir)?;
        if !merge(&mut all, names) {
            return Ok(());
        }
        let file = File {
            format: 1,
            actors: all,
        };
        let bytes = serde_json::to_vec(&file).map_err(|e| Error::Internal(e.to_string()))?;
        fsutil::replace_atomically(dir, ACTORS, &mut |w| w.write_all(&bytes))
    })();
    let _ = lock.unlock();
    result
}

/// `names` merged into `all`; whether anything changed.
fn merge(all: &mut Vec<ActorName>, names: &[ActorName]) -> bool {
    let mut changed = false;
    for n in names {
        match all.iter_mut().find(|a| a.id == n.id) {
            Some(a) if n.note.is_some() && a.note != n.note => {
                a.note = n.note.clone();
                changed = true;
            }
            Some(_) => {}
            None => {
                all.push(n.clone());
                changed = true;
            }
        }
    }
    changed
}
