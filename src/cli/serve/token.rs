//! The bearer token of `claimdag serve`: read from `--token-file`, else from (or made in) a
//! file beside the store, mode 0600: `DIR.serve-token` next to a store directory, and
//! `claimdag-serve.token` in the state directory for a database store.

use crate::error::{Error, Result};
use crate::store::tokens::random_hex;
use crate::store::Store;
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// The token and the file it is in.
pub fn load_or_make(store: &Store, given: Option<&Path>) -> Result<(String, PathBuf)> {
    if let Some(path) = given {
        return Ok((read(path)?, path.to_path_buf()));
    }
    let path = beside(store)?;
    match std::fs::symlink_metadata(&path) {
        Ok(_) => Ok((read(&path)?, path)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok((make(&path)?, path)),
        Err(e) => Err(Error::io(&path, &e)),
    }
}

/// Where a token made for `store` goes.
fn beside(store: &Store) -> Result<PathBuf> {
    match store.dir() {
        Some(dir) => {
            let name = dir.file_name().ok_or_else(|| {
                Error::invalid("the store directory has no name to put a token beside")
            })?;
            let mut file = name.to_os_string();
            file.push(".serve-token");
            made_parent(dir.with_file_name(file))
        }
        // The state directory the default store would be in.
        None => made_parent(crate::store::default_dir()?.with_file_name("claimdag-serve.token")),
    }
}

/// `path`, its directory made (0700) if missing: a store not written yet has none.
fn made_parent(path: PathBuf) -> Result<PathBuf> {
    if let Some(parent) = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty() && !p.exists())
    {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(parent)
            .map_err(|e| Error::io(parent, &e))?;
    }
    Ok(path)
}

/// A token file's content: a regular file of ours that only we can read, not empty.
fn read(path: &Path) -> Result<String> {
    let meta = std::fs::symlink_metadata(path).map_err(|e| Error::io(path, &e))?;
    let refuse = |why: &str| Error::Io {
        path: path.to_path_buf(),
        message: format!("not used as the token: {why}"),
        errno: None,
    };
    if !meta.file_type().is_file() {
        return Err(refuse("it is not a regular file"));
    }
    // SAFETY: geteuid has no preconditions and cannot fail.
    if meta.uid() != unsafe { libc::geteuid() } {
        return Err(refuse("another user owns it"));
    }
    if meta.mode() & 0o077 != 0 {
        return Err(refuse(&format!(
            "others may read it (mode {:o}; chmod 600 it)",
            meta.mode() & 0o777
        )));
    }
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, &e))?;
    let token = text.trim();
    if token.is_empty() || token.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(refuse("it must hold one token: printable, no spaces"));
    }
    Ok(token.to_string())
}

/// A new token of 32 random bytes, written in hex to a new file (mode 0600).
fn make(path: &Path) -> Result<String> {
    let token = random_hex::<32>()?;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| Error::io(path, &e))?;
    f.write_all(format!("{token}\n").as_bytes())
        .and_then(|()| f.sync_all())
        .map_err(|e| Error::io(path, &e))?;
    Ok(token)
}
