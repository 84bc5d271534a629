//! `tokens.json`: the actors' tokens (docs/files.md), hashes only. A write is a whole new
//! file renamed over the old one under `actors.lock`; a reader reads whichever whole file
//! is there, so a revoke acts on the next request that reads it.

use super::actors::{read_kept, Versioned};
use super::fsutil::{self, Mode};
use crate::error::{Error, Result};
use crate::model::Millis;
use crate::model::actors::{ActorToken, TokenSelect};
use serde::{Deserialize, Serialize};
use std::path::Path;

pub const TOKENS: &str = "tokens.json";

#[derive(Serialize, Deserialize)]
struct File {
    format: u32,
    tokens: Vec<ActorToken>,
}

/// Every token kept, in the order made (none when the file is not there).
pub fn read(dir: &Path) -> Result<Vec<ActorToken>> {
    Ok(read_kept::<File>(dir, TOKENS, "the tokens file")?.map_or_else(Vec::new, |f| f.tokens))
}

impl Versioned for File {
    fn format(&self) -> u32 {
        self.format
    }
}

/// Adds `tokens`, in one write.
pub fn add(dir: &Path, tokens: &[ActorToken]) -> Result<()> {
    update(dir, |all| {
        all.extend_from_slice(tokens);
        tokens.to_vec()
    })
    .map(drop)
}

/// Marks the live tokens `which` selects revoked at `at`; answers them.
pub fn revoke(dir: &Path, which: &TokenSelect, at: Millis) -> Result<Vec<ActorToken>> {
    update(dir, |all| {
        let mut ended = Vec::new();
        for t in all.iter_mut().filter(|t| which.matches(t) && t.live(at)) {
            t.revoked_at = Some(at);
            ended.push(t.clone());
        }
        ended
    })
}

/// Runs `change` on every token under the lock and writes the result, unless it changed
/// nothing (answered nothing).
fn update(
    dir: &Path,
    mut change: impl FnMut(&mut Vec<ActorToken>) -> Vec<ActorToken>,
) -> Result<Vec<ActorToken>> {
    fsutil::ensure_dir(dir)?;
    let lock_path = dir.join(super::actors::ACTORS_LOCK);
    let lock = fsutil::open(&lock_path, Mode::ReadWriteCreate)?;
    lock.lock().map_err(|e| fsutil::describe(&lock_path, &e))?;
    let result = (|| {
        let mut all = read(dir)?;
        let changed = change(&mut all);
        if changed.is_empty() {
            return Ok(changed);
        }
        let bytes = serde_json::to_vec(&File {
            format: 1,
            tokens: all,
        })
        .map_err(|e| Error::Internal(e.to_string()))?;
        fsutil::replace_atomically(dir, TOKENS, &mut |w| w.write_all(&bytes))?;
        Ok(changed)
    })();
    let _ = lock.unlock();
    result
}
