//! A store's files on disk: read them all, compare them, copy them; and the checks for a
//! clean `io` refusal.

use super::Run;
use std::collections::BTreeMap;
use std::path::Path;

/// Every regular file in `dir` and its subdirectories (the history's segments), by its
/// path below `dir`, and its bytes (empty when `dir` is missing).
pub fn files_of(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    files_below(dir, "", &mut out);
    out
}

fn files_below(dir: &Path, prefix: &str, out: &mut BTreeMap<String, Vec<u8>>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries {
        let e = e.expect("dir entry");
        let name = format!("{prefix}{}", e.file_name().to_string_lossy());
        if e.file_type().expect("file type").is_dir() {
            files_below(&e.path(), &format!("{name}/"), out);
            continue;
        }
        let bytes = std::fs::read(e.path()).expect("read store file");
        out.insert(name, bytes);
    }
}

/// Asserts two file maps are equal, naming the first file that differs.
pub fn assert_files_eq(
    before: &BTreeMap<String, Vec<u8>>,
    after: &BTreeMap<String, Vec<u8>>,
    what: &str,
) {
    let names_before: Vec<_> = before.keys().collect();
    let names_after: Vec<_> = after.keys().collect();
    assert_eq!(
        names_before, names_after,
        "{what}: the store's files changed"
    );
    for (name, bytes) in before {
        assert!(
            after[name] == *bytes,
            "{what}: {name} changed ({} bytes before, {} after)",
            bytes.len(),
            after[name].len()
        );
    }
}

/// Copies the regular files of `from` into a new directory `to`.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create copy");
    for (name, bytes) in files_of(from) {
        let to = to.join(name);
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent).expect("create copy");
        }
        std::fs::write(to, bytes).expect("write copy");
    }
}

/// True when the tests run as root (permission bits do not stop root; only root mounts).
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// Asserts a clean `io` refusal: exit 7, `error: ` with `phrase` and the path in it.
pub fn refused_io(r: &Run, path: &Path, phrase: &str, what: &str) {
    assert_eq!(
        r.code,
        Some(7),
        "{what}: expected exit 7\nstdout: {}\nstderr: {}",
        r.stdout,
        r.stderr
    );
    assert!(r.stderr.starts_with("error: "), "{what}: {}", r.stderr);
    let shown = path.to_string_lossy();
    assert!(
        r.stderr.contains(shown.as_ref()),
        "{what}: the message does not name {shown}: {}",
        r.stderr
    );
    assert!(
        r.stderr.contains(phrase),
        "{what}: the message lacks {phrase:?}: {}",
        r.stderr
    );
    assert_eq!(r.stdout, "", "{what}: printed on stdout");
}

/// Makes a FIFO at `p`.
pub fn mkfifo(p: &Path) {
    let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).expect("path");
    // SAFETY: `c` is a valid NUL-terminated path for the duration of the call.
    let r = unsafe { libc::mkfifo(c.as_ptr(), 0o600) };
    assert_eq!(r, 0, "mkfifo: {}", std::io::Error::last_os_error());
}
