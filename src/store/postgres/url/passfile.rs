//! libpq's password file (`~/.pgpass`, or the file `passfile=` or `PGPASSFILE` names): lines
//! `hostname:port:database:username:password`, the first line whose four fields match the
//! connection giving the password. A field `*` matches anything; `\` escapes a `:` or a
//! `\`; a line starting with `#` is a comment. On Unix a file that its group or others may
//! access, or that is not a plain file, is not read at all, as libpq does.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// What a line is matched against, as libpq matches it.
pub struct Key<'a> {
    /// The host name, a socket directory, or `localhost` for libpq's default socket
    /// directory.
    pub host: &'a str,
    pub port: &'a str,
    pub dbname: &'a str,
    pub user: &'a str,
}

/// The password of the first line of the file at `path` that matches `key`; `None` when
/// the file is missing, unreadable, open to the group or others, or has no such line.
pub fn lookup(path: &Path, key: &Key<'_>) -> Option<Vec<u8>> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() || meta.permissions().mode() & 0o077 != 0 {
        return None;
    }
    let text = std::fs::read(path).ok()?;
    find(&text, key)
}

/// The password of the first line of `text` that matches `key`.
pub fn find(text: &[u8], key: &Key<'_>) -> Option<Vec<u8>> {
    text.split(|&c| c == b'\n').find_map(|line| {
        let mut end = line.len();
        while end > 0 && matches!(line[end - 1], b'\r' | b'\n') {
            end -= 1;
        }
        let line = &line[..end];
        if line.is_empty() || line[0] == b'#' {
            return None;
        }
        let rest = field(line, key.host)?;
        let rest = field(rest, key.port)?;
        let rest = field(rest, key.dbname)?;
        let rest = field(rest, key.user)?;
        Some(password(rest))
    })
}

/// The rest of the line after a field that matches `token` (libpq's `pwdfMatchesString`):
/// `*:` matches anything; otherwise every character, `\` taking the next one literally, up
/// to an unescaped `:`.
fn field<'a>(line: &'a [u8], token: &str) -> Option<&'a [u8]> {
    if let Some(rest) = line.strip_prefix(b"*:") {
        return Some(rest);
    }
    let token = token.as_bytes();
    let (mut i, mut t) = (0, 0);
    while i < line.len() {
        let escaped = line[i] == b'\\';
        if escaped {
            i += 1;
            if i == line.len() {
                return None;
            }
        }
        let c = line[i];
        if c == b':' && !escaped && t == token.len() {
            return Some(&line[i + 1..]);
        }
        if t == token.len() || c != token[t] {
            return None;
        }
        i += 1;
        t += 1;
    }
    None
}

/// The password field: up to an unescaped `:` or the end, escapes removed.
fn password(rest: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(rest.len());
    let mut i = 0;
    while i < rest.len() && rest[i] != b':' {
        if rest[i] == b'\\' && i + 1 < rest.len() {
            i += 1;
        }
        out.push(rest[i]);
        i += 1;
    }
    out
}
