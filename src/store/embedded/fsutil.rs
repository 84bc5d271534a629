//! File-system helpers of the embedded store: opening without following symbolic links,
//! fsync of a directory, atomic replacement, and file identities.

use crate::error::{Error, Result};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;

/// How to open a store file.
#[derive(Clone, Copy)]
pub enum Mode {
    Read,
    /// Read and write an existing file.
    ReadWrite,
    /// Read and write, created (0600) when missing.
    ReadWriteCreate,
    /// Write, created or truncated (0600).
    Replace,
}

/// Opens `path` without following a symbolic link at its last component.
pub fn open(path: &Path, mode: Mode) -> Result<File> {
    let mut o = OpenOptions::new();
    match mode {
        Mode::Read => o.read(true),
        Mode::ReadWrite => o.read(true).write(true),
        Mode::ReadWriteCreate => o.read(true).write(true).create(true),
        Mode::Replace => o.write(true).create(true).truncate(true),
    };
    // O_NONBLOCK: a FIFO planted in a store must not hang the open; it is refused below.
    o.mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK);
    let f = o.open(path).map_err(|e| describe(path, &e))?;
    let meta = f.metadata().map_err(|e| describe(path, &e))?;
    if !meta.is_file() {
        return Err(Error::Io {
            path: path.to_path_buf(),
            message: "is not a regular file".to_string(),
            errno: None,
        });
    }
    Ok(f)
}

/// Opens `path` for reading, or `None` when it does not exist.
pub fn open_existing(path: &Path) -> Result<Option<File>> {
    open_existing_as(path, Mode::Read)
}

/// Opens an existing `path` for reading and writing, for reading only when this process may
/// not write it, or `None` when it does not exist.
pub fn open_existing_rw(path: &Path) -> Result<Option<File>> {
    match open_existing_as(path, Mode::ReadWrite) {
        Err(Error::Io {
            errno: Some(libc::EACCES | libc::EROFS),
            ..
        }) => open_existing(path),
        r => r,
    }
}

fn open_existing_as(path: &Path, mode: Mode) -> Result<Option<File>> {
    match open(path, mode) {
        Ok(f) => Ok(Some(f)),
        Err(Error::Io {
            errno: Some(libc::ENOENT),
            ..
        }) => Ok(None),
        Err(e) => Err(e),
    }
}

/// An I/O error naming the path, with a plain word for a refused symbolic link.
pub fn describe(path: &Path, e: &std::io::Error) -> Error {
    if e.raw_os_error() == Some(libc::ELOOP) {
        return Error::Io {
            path: path.to_path_buf(),
            message: "is a symbolic link; claimdag does not follow links in a store".to_string(),
            errno: Some(libc::ELOOP),
        };
    }
    Error::io(path, e)
}

/// Flushes a directory's entries (new, renamed and removed files) to disk.
pub fn fsync_dir(dir: &Path) -> Result<()> {
    let d = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_CLOEXEC)
        .open(dir)
        .map_err(|e| describe(dir, &e))?;
    d.sync_all().map_err(|e| describe(dir, &e))
}

/// Writes `dir/name.tmp` afresh and syncs it; returns its path, for the caller to rename
/// over `dir/name` (then fsync the directory). A leftover temporary, or a link planted in
/// its place, is removed, never followed. A write that fails (a full disk) removes what it
/// wrote: a temporary left behind would hold the room the next write needs.
pub fn write_synced(
    dir: &Path,
    name: &str,
    write: &mut dyn FnMut(&mut dyn Write) -> std::io::Result<()>,
) -> Result<std::path::PathBuf> {
    let tmp = dir.join(format!("{name}.tmp"));
    match std::fs::remove_file(&tmp) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(describe(&tmp, &e)),
    }
    let f = open(&tmp, Mode::Replace)?;
    let written = (|| {
        let mut w = std::io::BufWriter::with_capacity(1 << 20, f);
        write(&mut w)?;
        let f = w
            .into_inner()
            .map_err(std::io::IntoInnerError::into_error)?;
        f.sync_all()
    })();
    match written {
        Ok(()) => Ok(tmp),
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(describe(&tmp, &e))
        }
    }
}

/// Replaces `dir/name` atomically: write `dir/name.tmp`, fsync it, rename it over `name`,
/// fsync the directory.
pub fn replace_atomically(
    dir: &Path,
    name: &str,
    write: &mut dyn FnMut(&mut dyn Write) -> std::io::Result<()>,
) -> Result<()> {
    let tmp = write_synced(dir, name, write)?;
    let dst = dir.join(name);
    std::fs::rename(&tmp, &dst).map_err(|e| describe(&dst, &e))?;
    fsync_dir(dir)
}

/// Identifies one version of a file: replaced files get a new identity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileId {
    dev: u64,
    ino: u64,
    size: u64,
    mtime_ns: i64,
}

impl FileId {
    pub fn of(meta: &std::fs::Metadata) -> FileId {
        FileId {
            dev: meta.dev(),
            ino: meta.ino(),
            size: meta.size(),
            mtime_ns: meta.mtime() * 1_000_000_000 + meta.mtime_nsec(),
        }
    }
}

/// Creates the store directory (mode 0700) when missing, and refuses one that is not a
/// directory or that another user owns.
pub fn ensure_dir(dir: &Path) -> Result<()> {
    match std::fs::metadata(dir) {
        Ok(m) => check_dir(dir, &m),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
                std::fs::create_dir_all(parent).map_err(|e| describe(parent, &e))?;
            }
            use std::os::unix::fs::DirBuilderExt;
            match std::fs::DirBuilder::new().mode(0o700).create(dir) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(describe(dir, &e)),
            }
            if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
                fsync_dir(parent)?;
            }
            let m = std::fs::metadata(dir).map_err(|e| describe(dir, &e))?;
            check_dir(dir, &m)
        }
        Err(e) => Err(describe(dir, &e)),
    }
}

/// Refuses a store path that is not a directory or that another user owns.
pub fn check_dir(dir: &Path, m: &std::fs::Metadata) -> Result<()> {
    if !m.is_dir() {
        return Err(Error::Io {
            path: dir.to_path_buf(),
            message: "is not a directory".to_string(),
            errno: Some(libc::ENOTDIR),
        });
    }
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    if m.uid() != me {
        return Err(Error::Io {
            path: dir.to_path_buf(),
            message: format!(
                "is owned by another user (uid {}, this process runs as uid {me}); refusing to use it",
                m.uid()
            ),
            errno: Some(libc::EPERM),
        });
    }
    Ok(())
}

/// Where a file is and how long: its device, inode and length, asked for without its
/// times. Asking for a file's times (as `stat` does) makes the kernel give the next write
/// to it a finer timestamp, and the `fdatasync` after that write then writes the inode as
/// well as the data: about a third more per commit on ext4. The journal is looked at this
/// way only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placed {
    dev: (u32, u32),
    ino: u64,
    pub len: u64,
}

impl Placed {
    /// The same file (device and inode), whatever its length.
    pub fn same_file(&self, other: &Placed) -> bool {
        (self.dev, self.ino) == (other.dev, other.ino)
    }
}

/// [`Placed`] of the file at `path` (a symbolic link there is the link itself).
pub fn placed_at(path: &Path) -> std::io::Result<Placed> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))?;
    statx(&c, libc::AT_SYMLINK_NOFOLLOW, None)
}

/// [`Placed`] of an open file.
pub fn placed(f: &File) -> std::io::Result<Placed> {
    statx(c"", libc::AT_EMPTY_PATH, Some(f))
}

fn statx(path: &std::ffi::CStr, flags: i32, f: Option<&File>) -> std::io::Result<Placed> {
    use std::os::fd::AsRawFd;
    let dirfd = f.map_or(libc::AT_FDCWD, |f| f.as_raw_fd());
    let mask = libc::STATX_TYPE | libc::STATX_INO | libc::STATX_SIZE;
    // SAFETY: a zeroed statx is a valid out-buffer; `path` is NUL-terminated and `dirfd`
    // is open (or AT_FDCWD) for the duration of the call.
    let mut st: libc::statx = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::statx(dirfd, path.as_ptr(), flags, mask, &mut st) };
    if r != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(Placed {
        dev: (st.stx_dev_major, st.stx_dev_minor),
        ino: st.stx_ino,
        len: st.stx_size,
    })
}

/// This process's id without a system call each time: cached, and forgotten in the child of
/// a `fork` (by an atfork handler), which is what the store checks it for.
pub fn pid() -> u32 {
    use std::sync::atomic::{AtomicU32, Ordering::Relaxed};
    static PID: AtomicU32 = AtomicU32::new(0);
    static HOOK: std::sync::Once = std::sync::Once::new();
    extern "C" fn forget() {
        PID.store(0, Relaxed);
    }
    HOOK.call_once(|| {
        // SAFETY: registers a handler that only stores to an atomic, which is
        // async-signal-safe as a fork child handler must be.
        unsafe { libc::pthread_atfork(None, None, Some(forget)) };
    });
    match PID.load(Relaxed) {
        0 => {
            let p = std::process::id();
            PID.store(p, Relaxed);
            p
        }
        p => p,
    }
}

/// A held OS lock on a file (`lock`, `compact.lock`); released on drop (and by the kernel on
/// a crash).
pub struct Held<'a>(pub &'a File);

impl Drop for Held<'_> {
    fn drop(&mut self) {
        let _ = self.0.unlock();
    }
}

/// The whole of a file already opened, its path named in an error.
pub fn read_all(mut f: impl std::io::Read, path: &Path) -> Result<Vec<u8>> {
    let mut buf = Vec::new();
    f.read_to_end(&mut buf).map_err(|e| describe(path, &e))?;
    Ok(buf)
}
