//! The files a command of `claimdag work` talks through, in a directory of its own that
//! only this user may enter, removed when the command's node is finished:
//!
//! - `CLAIMDAG_INPUTS`: a JSON object, the output of each prerequisite that was `done`
//!   when the claim was granted, by id (`null` for one that gave none), as `claim-next`
//!   answers it;
//! - `CLAIMDAG_PROGRESS_FILE`: what the command writes there is its checkpoint, sent with
//!   the next renewal when it changed (its first 64 KiB, as text);
//! - `CLAIMDAG_OUTPUT_FILE`: JSON the command writes there is stored as the node's output
//!   when it is completed;
//! - `CLAIMDAG_USAGE_FILE`: `tokens=N[,cost=X]`, what the command has spent so far (its
//!   total), sent with the next renewal when it changed; past the node's budget the worker
//!   is asked to stop it.

use crate::error::{Error, Result};
use crate::id::Id;
use crate::model::MAX_PROGRESS_BYTES;
use serde_json::Value;
use std::io::Read;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// The most of an output file read: JSON written with spaces may be longer than the
/// compact text it is stored as (at most 64 KiB).
const MAX_OUTPUT_FILE: u64 = 16 << 20;

/// The longest between two looks at the progress file (a lease of a short ttl looks more
/// often: every third of it, as it renews).
const LOOK_EVERY: Duration = Duration::from_millis(500);

/// The directory of one command's files, and what was last sent of its progress file.
pub(super) struct JobFiles {
    dir: PathBuf,
    sent: Option<String>,
    /// The usage file's text last taken, and a report read since and not yet taken.
    usage_seen: Option<String>,
    usage_new: Option<crate::model::Usage>,
    look_every: Duration,
    next_look: Instant,
}

impl JobFiles {
    /// Makes the directory (mode 0700, under `$TMPDIR` or /tmp) and writes the inputs file.
    pub(super) fn create(
        node: Id,
        inputs: serde_json::Map<String, Value>,
        ttl_ms: u64,
    ) -> Result<JobFiles> {
        let dir = private_dir(node)?;
        let files = JobFiles {
            dir,
            sent: None,
            usage_seen: None,
            usage_new: None,
            look_every: LOOK_EVERY.min(Duration::from_millis((ttl_ms / 3).max(1))),
            next_look: Instant::now(),
        };
        let text = serde_json::to_vec(&Value::Object(inputs))
            .map_err(|e| Error::Internal(format!("the inputs as JSON: {e}")))?;
        let path = files.inputs();
        let written = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
            .and_then(|mut f| std::io::Write::write_all(&mut f, &text));
        written.map_err(|e| Error::io(&path, &e))?;
        Ok(files)
    }

    fn inputs(&self) -> PathBuf {
        self.dir.join("inputs.json")
    }

    fn progress_file(&self) -> PathBuf {
        self.dir.join("progress")
    }

    fn output_file(&self) -> PathBuf {
        self.dir.join("output.json")
    }

    fn usage_file(&self) -> PathBuf {
        self.dir.join("usage")
    }

    /// The spend the usage file reported since it was last taken, if it changed and reads
    /// as `tokens=N[,cost=X]` (a file that does not is left until it does).
    pub(super) fn take_usage(&mut self) -> Option<crate::model::Usage> {
        self.usage_new.take()
    }

    fn look_at_usage(&mut self) {
        let Some(text) = read_progress(&self.usage_file()) else {
            return;
        };
        let text = text.trim().to_string();
        if self.usage_seen.as_deref() == Some(text.as_str()) {
            return;
        }
        if let Ok(u) = crate::model::Usage::parse("usage", &text) {
            self.usage_new = Some(u);
            self.usage_seen = Some(text);
        }
    }

    /// Puts the four paths in the command's environment.
    pub(super) fn env(&self, cmd: &mut Command) {
        cmd.env("CLAIMDAG_INPUTS", self.inputs())
            .env("CLAIMDAG_PROGRESS_FILE", self.progress_file())
            .env("CLAIMDAG_OUTPUT_FILE", self.output_file())
            .env("CLAIMDAG_USAGE_FILE", self.usage_file());
    }

    /// The progress file's text when it is time to look again and it changed since it was
    /// last taken; the text is then taken as sent. `last`: the command ended, the text is
    /// taken whatever was taken before (what was handed to the lease for its next renewal
    /// may not have been sent yet).
    pub(super) fn progress(&mut self, last: bool) -> Option<String> {
        if !last && Instant::now() < self.next_look {
            return None;
        }
        self.next_look = Instant::now() + self.look_every;
        self.look_at_usage();
        let text = read_progress(&self.progress_file())?;
        if !last && self.sent.as_deref() == Some(text.as_str()) {
            return None;
        }
        self.sent = Some(text.clone());
        Some(text)
    }

    /// What the command left in the output file: `Ok(None)` when it wrote nothing (no
    /// file, or only white space), `Err(why)` when the file is not JSON or too long.
    pub(super) fn output(&self) -> std::result::Result<Option<Value>, String> {
        let path = self.output_file();
        let mut bytes = Vec::new();
        match std::fs::File::open(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(format!("cannot be read: {e}")),
            Ok(f) => f
                .take(MAX_OUTPUT_FILE + 1)
                .read_to_end(&mut bytes)
                .map_err(|e| format!("cannot be read: {e}"))?,
        };
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(None);
        }
        if bytes.len() as u64 > MAX_OUTPUT_FILE {
            return Err(format!("is longer than {MAX_OUTPUT_FILE} bytes"));
        }
        // Its size as stored is the rules' to check, when the node is completed with it.
        serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| format!("is not valid JSON ({e})"))
    }
}

impl Drop for JobFiles {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A new directory only this user may enter: `claimdag-work-<node>-<pid>-<n>` under the
/// temporary directory, made afresh (never one that was there).
fn private_dir(node: Id) -> Result<PathBuf> {
    static MADE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let base = std::env::temp_dir();
    let mut last = None;
    for _ in 0..16 {
        let n = MADE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let name = format!(
            "claimdag-work-{}-{}-{n}-{nanos:x}",
            &node.hex()[..8],
            std::process::id()
        );
        let path = base.join(name);
        match std::fs::DirBuilder::new().mode(0o700).create(&path) {
            Ok(()) => return Ok(path),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(Error::io(&path, &e)),
        }
    }
    let e = last.unwrap_or_else(|| std::io::Error::other("no free name"));
    Err(Error::io(&base, &e))
}

/// The progress file as a checkpoint the store takes: its first 64 KiB as text (a broken
/// character replaced, NUL characters dropped, the line ends at its end too, cut at a
/// character); `None` when there is no file (or it cannot be read).
fn read_progress(path: &Path) -> Option<String> {
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .take(MAX_PROGRESS_BYTES as u64)
        .read_to_end(&mut bytes)
        .ok()?;
    let mut text: String = String::from_utf8_lossy(&bytes).replace('\0', "");
    // `echo step 3 > "$CLAIMDAG_PROGRESS_FILE"`: the line end is not part of the checkpoint.
    text.truncate(text.trim_end_matches(['\n', '\r']).len());
    if text.len() > MAX_PROGRESS_BYTES {
        let mut cut = MAX_PROGRESS_BYTES;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
    }
    Some(text)
}
