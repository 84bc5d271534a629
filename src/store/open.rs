//! The one place that names the backends: which one a location opens.

use super::embedded::EmbeddedStore;
use super::{default_dir, Store};
use crate::error::Result;
use std::path::Path;
use std::sync::Arc;

impl Store {
    /// Opens the store at `dir`, or at the default directory when `None`. Nothing is
    /// created until the first write.
    ///
    /// A location that starts with `postgres://`, `postgresql://` or `postgres:` (here or in
    /// `$CLAIMDAG_DIR`) is a PostgreSQL store (docs/postgres.md); anything else a directory.
    pub fn open(dir: Option<&Path>) -> Result<Store> {
        let dir = match dir {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => default_dir()?,
        };
        if let Some(url) = dir.to_str().filter(|s| is_database(s)) {
            return open_database(url);
        }
        // Made absolute once: a location handed to another process (a `work` command, a
        // git hook) names the same store whatever its working directory.
        let dir = std::path::absolute(&dir).map_err(|e| crate::error::Error::io(&dir, &e))?;
        Ok(Store::from_backend(Arc::new(EmbeddedStore::open(dir))))
    }

    /// Opens a store directory with explicit tuning and clock.
    #[cfg(feature = "internals")]
    pub fn with(
        dir: std::path::PathBuf,
        tuning: super::embedded::Tuning,
        clock: Arc<dyn super::backend::Clock>,
    ) -> Store {
        Store::from_backend(Arc::new(EmbeddedStore::new(dir, tuning, clock)))
    }
}

/// True when a store location names a database rather than a directory.
pub fn is_database(location: &str) -> bool {
    location.starts_with("postgres://")
        || location.starts_with("postgresql://")
        || location.starts_with("postgres:")
}

/// A store location as it may be handed on to another process (the `CLAIMDAG_DIR` of the
/// command `work` runs, whose environment others can see): a database's connection string
/// without its password (the process finds it where this one did when the string had none:
/// `PGPASSWORD` or a password file, inherited), anything else as it is.
pub fn without_password(location: &str) -> Result<String> {
    if !is_database(location) {
        return Ok(location.to_string());
    }
    database_without_password(location)
}

#[cfg(feature = "postgres")]
fn database_without_password(url: &str) -> Result<String> {
    super::postgres::Target::without_password(url)
}

#[cfg(not(feature = "postgres"))]
fn database_without_password(url: &str) -> Result<String> {
    Ok(url.to_string())
}

#[cfg(feature = "postgres")]
fn open_database(url: &str) -> Result<Store> {
    Ok(Store::from_backend(Arc::new(
        super::postgres::PgStore::open(url)?,
    )))
}

#[cfg(not(feature = "postgres"))]
fn open_database(_url: &str) -> Result<Store> {
    Err(crate::error::Error::invalid(
        "this claimdag was built without PostgreSQL support (the postgres feature)",
    ))
}
