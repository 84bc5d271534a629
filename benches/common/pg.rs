//! A PostgreSQL server for a bench: the one `--url` names, or a throwaway one started with
//! scripts/pg.sh and stopped when the bench ends.

use std::path::{Path, PathBuf};
use std::process::Command;

pub struct Server {
    pub url: String,
    /// The throwaway server's directory, when this bench started one.
    pub dir: Option<PathBuf>,
}

fn pg_sh() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/pg.sh")
}

/// The server at `url`, else a throwaway one; `None` when none could be started.
pub fn server(url: Option<String>, name: &str) -> Option<Server> {
    if let Some(url) = url {
        return Some(Server { url, dir: None });
    }
    let dir = std::env::temp_dir().join(format!("claimdag-bench-{name}-pg-{}", std::process::id()));
    let out = Command::new("bash")
        .arg(pg_sh())
        .arg("start")
        .arg(&dir)
        .output()
        .ok()?;
    out.status.success().then(|| Server {
        url: String::from_utf8_lossy(&out.stdout).trim().to_string(),
        dir: Some(dir),
    })
}

/// A store URL in a schema of its own on the server at `url`.
pub fn schema(url: &str, name: &str) -> String {
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}schema={name}_{}", std::process::id())
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(d) = &self.dir {
            let _ = Command::new("bash")
                .arg(pg_sh())
                .arg("stop")
                .arg(d)
                .status();
        }
    }
}
