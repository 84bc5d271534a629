//! The two forms of a libpq connection string, read as libpq reads them:
//!
//! - a URL, `postgresql://[user[:password]@][host[:port][,...]][/dbname][?key=value&...]`
//!   (or `postgres://`), its parts and parameters %-decoded (a `+` stays a `+`);
//! - `key=value` words (after claimdag's `postgres:`), separated by white space, a value
//!   quoted with `'...'` when it holds spaces, `\` escaping the next character.
//!
//! Both give their settings in order; a later one replaces an earlier one of the same key,
//! so a URL's query parameters override its parts, as in libpq. Each setting remembers where
//! it was written, so that the string can be handed on without its password. No message
//! here quotes a value: any of them may be a password.

use std::ops::Range;

/// One setting as written.
pub struct Setting {
    pub key: String,
    pub value: String,
    /// Where it is in the string: a URL's part, a query parameter, or a whole word.
    pub span: Range<usize>,
}

/// A connection string read. (`query` and `words_at` serve `without_password`, which only
/// the command's `work` uses.)
#[cfg_attr(not(feature = "cli"), allow(dead_code))]
pub struct Read {
    pub settings: Vec<Setting>,
    /// Where the query of a URL starts (at its `?`); `None` for key=value words.
    pub query: Option<usize>,
    /// For key=value words, the length of claimdag's `postgres:` in front of them.
    pub words_at: Option<usize>,
}

/// A message for a syntax error (never quoting a value).
pub type Refusal = String;

/// Reads `arg`, a URL or `postgres:` followed by key=value words.
pub fn read(arg: &str) -> Result<Read, Refusal> {
    for prefix in ["postgresql://", "postgres://"] {
        if arg.starts_with(prefix) {
            return url(arg, prefix.len());
        }
    }
    match arg.strip_prefix("postgres:") {
        Some(_) => words(arg, "postgres:".len()),
        None => {
            Err("a PostgreSQL store starts with postgres://, postgresql:// or postgres:".into())
        }
    }
}

/// The key of the last setting read, to say where an error is without quoting a word that
/// may be the rest of a password.
fn after(settings: &[Setting]) -> Option<&str> {
    settings.last().map(|s| s.key.as_str())
}

/// How to name a word that is wrong: quoted, unless it follows a password (it may be the
/// rest of one), with a hint in that case.
pub fn name_word(word: &str, previous: Option<&str>) -> (String, &'static str) {
    if previous == Some("password") {
        (
            "the word after password=".to_string(),
            " (quote a password that holds a space: password='...'; in a URL write a & or = \
             in it as %26 or %3D)",
        )
    } else {
        (format!("{word:?}"), "")
    }
}

fn url(arg: &str, start: usize) -> Result<Read, Refusal> {
    let b = arg.as_bytes();
    let mut settings = Vec::new();
    let mut p = start;
    // user[:password]@ : up to the first @ before any /.
    if let Some(at) = (p..b.len()).find(|&i| b[i] == b'@' || b[i] == b'/') {
        if b[at] == b'@' {
            let colon = (p..at).find(|&i| b[i] == b':').unwrap_or(at);
            push_decoded(&mut settings, arg, "user", p..colon, "the user name")?;
            if colon < at {
                push_decoded(
                    &mut settings,
                    arg,
                    "password",
                    colon + 1..at,
                    "the password",
                )?;
                if let Some(s) = settings.last_mut().filter(|s| s.key == "password") {
                    s.span = colon..at;
                }
            }
            p = at + 1;
        }
    }
    let hosts_at = p;
    let (hosts, ports, end) = netlocs(arg, &mut p)?;
    let parts = hosts_at..p;
    if !hosts.is_empty() {
        let value = decode(&hosts).map_err(|e| format!("{e} in the URL's host"))?;
        settings.push(setting("host", value, parts.clone()));
    }
    if !ports.is_empty() {
        let value = decode(&ports).map_err(|e| format!("{e} in the URL's port"))?;
        settings.push(setting("port", value, parts));
    }
    let mut query = None;
    if end == Some(b'/') {
        let stop = (p + 1..b.len()).find(|&i| b[i] == b'?').unwrap_or(b.len());
        push_decoded(
            &mut settings,
            arg,
            "dbname",
            p + 1..stop,
            "the database name",
        )?;
        p = stop;
        if p < b.len() {
            query = Some(p);
        }
    } else if end == Some(b'?') {
        query = Some(p);
    }
    if let Some(q) = query {
        params(arg, q + 1, &mut settings)?;
    }
    Ok(Read {
        settings,
        query,
        words_at: None,
    })
}

/// `host[:port][,host[:port]...]` from byte `*p`, each host possibly an `[IPv6]` address:
/// the hosts and the ports as comma lists (a port left out is an empty entry, as in libpq),
/// and the byte that ended them (`/`, `?` or none), with `*p` at it.
fn netlocs(arg: &str, p: &mut usize) -> Result<(String, String, Option<u8>), Refusal> {
    let b = arg.as_bytes();
    let (mut hosts, mut ports) = (String::new(), String::new());
    loop {
        let host;
        if b.get(*p) == Some(&b'[') {
            let close = (*p + 1..b.len())
                .find(|&i| b[i] == b']')
                .ok_or("an IPv6 address in the URL lacks its closing ]")?;
            if close == *p + 1 {
                return Err("an empty IPv6 address [] in the URL".into());
            }
            host = &arg[*p + 1..close];
            *p = close + 1;
            if *p < b.len() && !matches!(b[*p], b':' | b'/' | b'?' | b',') {
                return Err("a URL's [IPv6] host must be followed by :, /, ? or ,".into());
            }
        } else {
            let stop = (*p..b.len())
                .find(|&i| matches!(b[i], b':' | b'/' | b'?' | b','))
                .unwrap_or(b.len());
            host = &arg[*p..stop];
            *p = stop;
        }
        hosts.push_str(host);
        if b.get(*p) == Some(&b':') {
            let stop = (*p + 1..b.len())
                .find(|&i| matches!(b[i], b'/' | b'?' | b','))
                .unwrap_or(b.len());
            ports.push_str(&arg[*p + 1..stop]);
            *p = stop;
        }
        if b.get(*p) != Some(&b',') {
            return Ok((hosts, ports, b.get(*p).copied()));
        }
        *p += 1;
        hosts.push(',');
        ports.push(',');
    }
}

/// A URL part, %-decoded, unless it is empty (libpq then leaves the setting unset).
fn push_decoded(
    settings: &mut Vec<Setting>,
    arg: &str,
    key: &str,
    span: Range<usize>,
    what: &str,
) -> Result<(), Refusal> {
    if span.is_empty() {
        return Ok(());
    }
    let value = decode(&arg[span.clone()]).map_err(|e| format!("{e} in {what}"))?;
    settings.push(setting(key, value, span));
    Ok(())
}

fn setting(key: &str, value: String, span: Range<usize>) -> Setting {
    Setting {
        key: key.to_string(),
        value,
        span,
    }
}

/// The `key=value&...` query of a URL, from byte `p`.
fn params(arg: &str, mut p: usize, settings: &mut Vec<Setting>) -> Result<(), Refusal> {
    let b = arg.as_bytes();
    while p < b.len() {
        let stop = (p..b.len()).find(|&i| b[i] == b'&').unwrap_or(b.len());
        let pair = &arg[p..stop];
        let previous = after(settings);
        let (key, value) = match pair.split_once('=') {
            Some((k, v)) if !v.contains('=') => (k, v),
            Some((k, _)) => {
                let (k, hint) = name_word(k, previous);
                let hint = if hint.is_empty() {
                    " (write a = in a value as %3D)"
                } else {
                    hint
                };
                return Err(format!("the URL parameter {k} has a second \"=\"{hint}"));
            }
            None => {
                let (word, hint) = name_word(pair, previous);
                return Err(format!("{word} in the URL's query has no \"=\"{hint}"));
            }
        };
        let key = decode(key).map_err(|e| format!("{e} in a URL parameter's name"))?;
        let value = decode(value).map_err(|e| format!("{e} in the value of {key}"))?;
        // libpq's one special case, for JDBC's spelling.
        let (key, value) = if key == "ssl" && value == "true" {
            ("sslmode".to_string(), "require".to_string())
        } else {
            (key, value)
        };
        settings.push(Setting {
            key,
            value,
            span: p..stop,
        });
        p = if stop < b.len() { stop + 1 } else { stop };
    }
    Ok(())
}

/// %XX escapes decoded (two hex digits each, never %00); every other byte as it is, `+`
/// included.
fn decode(text: &str) -> Result<String, &'static str> {
    let b = text.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let byte = text
                .get(i + 1..i + 3)
                .filter(|h| h.bytes().all(|c| c.is_ascii_hexdigit()))
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or("a %-escape that is not % and two hex digits")?;
            if byte == 0 {
                return Err("a %00, which libpq forbids,");
            }
            out.push(byte);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| "%-escapes that are not UTF-8")
}

/// C's isspace, as libpq splits words with it.
fn space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r' | b'\x0b' | b'\x0c')
}

/// `key=value` words from byte `start`.
fn words(arg: &str, start: usize) -> Result<Read, Refusal> {
    let b = arg.as_bytes();
    let mut settings: Vec<Setting> = Vec::new();
    let mut p = start;
    loop {
        while p < b.len() && space(b[p]) {
            p += 1;
        }
        if p == b.len() {
            break;
        }
        let word_at = p;
        while p < b.len() && b[p] != b'=' && !space(b[p]) {
            p += 1;
        }
        let key = &arg[word_at..p];
        while p < b.len() && space(b[p]) {
            p += 1;
        }
        if b.get(p) != Some(&b'=') {
            let (word, hint) = name_word(key, after(&settings));
            return Err(format!("{word} is not key=value{hint}"));
        }
        p += 1;
        while p < b.len() && space(b[p]) {
            p += 1;
        }
        let mut value = Vec::new();
        if b.get(p) == Some(&b'\'') {
            p += 1;
            loop {
                match b.get(p) {
                    None => return Err(format!("the quoted value of {key} has no closing '")),
                    Some(b'\\') => {
                        if let Some(&c) = b.get(p + 1) {
                            value.push(c);
                        }
                        p += 2;
                    }
                    Some(b'\'') => {
                        p += 1;
                        break;
                    }
                    Some(&c) => {
                        value.push(c);
                        p += 1;
                    }
                }
            }
        } else {
            while p < b.len() && !space(b[p]) {
                if b[p] == b'\\' {
                    p += 1;
                    if p == b.len() {
                        break;
                    }
                }
                value.push(b[p]);
                p += 1;
            }
        }
        let value =
            String::from_utf8(value).map_err(|_| format!("the value of {key} is not UTF-8"))?;
        settings.push(Setting {
            key: key.to_string(),
            value,
            span: word_at..p.min(b.len()),
        });
    }
    Ok(Read {
        settings,
        query: None,
        words_at: Some(start),
    })
}

/// `arg` without its password: the URL without `:password` in front of its `@` and
/// without `password=` parameters, or the key=value words without `password=...`. Every
/// other byte stays as it was written (the words are joined by one space).
pub fn without_password(arg: &str, read: &Read) -> String {
    let kept = read.settings.iter().filter(|s| s.key != "password");
    if let Some(at) = read.words_at {
        let words: Vec<&str> = kept.map(|s| &arg[s.span.clone()]).collect();
        return format!("{}{}", &arg[..at], words.join(" "));
    }
    let query = read.query.unwrap_or(arg.len());
    let mut head = arg[..query].to_string();
    if let Some(pw) = read
        .settings
        .iter()
        .find(|s| s.key == "password" && s.span.end <= query)
    {
        head.replace_range(pw.span.clone(), "");
    }
    let params: Vec<&str> = kept
        .filter(|s| s.span.start > query)
        .map(|s| &arg[s.span.clone()])
        .collect();
    if params.is_empty() {
        head
    } else {
        format!("{head}?{}", params.join("&"))
    }
}
