//! How a resource is spelled (SPEC 13, "Resources"), and the pools and rate limits the
//! settings keep. What a resource claims and when two may not be held together is
//! `rules::resource`; this is only the spelling, which the state's index reads too.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What a resource names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// A plain name: equal, or under another's trailing `/`.
    Plain,
    /// `path:GLOB`.
    Path,
    /// `pool:NAME` or `pool:NAME*K`: K (1) of the pool's slots.
    Pool,
    /// `rate:NAME`: one grant of the rate's window.
    Rate,
}

/// A resource's text taken apart: `read:` (shared) or not, its kind, and what follows the
/// kind's prefix (the whole text of a plain one, after any `read:`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spelled<'a> {
    pub write: bool,
    pub kind: Kind,
    pub body: &'a str,
}

impl<'a> Spelled<'a> {
    pub fn of(text: &'a str) -> Spelled<'a> {
        let (write, rest) = match text.strip_prefix("read:") {
            Some(r) => (false, r),
            None => (true, text),
        };
        for (prefix, kind) in [
            ("path:", Kind::Path),
            ("pool:", Kind::Pool),
            ("rate:", Kind::Rate),
        ] {
            if let Some(body) = rest.strip_prefix(prefix) {
                return Spelled { write, kind, body };
            }
        }
        Spelled {
            write,
            kind: Kind::Plain,
            body: rest,
        }
    }

    /// The pool or rate named (`gpu` of `pool:gpu*2`), or the plain name or glob.
    pub fn name(&self) -> &'a str {
        match self.kind {
            Kind::Pool => self.body.split_once('*').map_or(self.body, |(n, _)| n),
            _ => self.body,
        }
    }

    /// What every path or name the resource claims starts with: a plain name itself; a
    /// glob's text up to its first wildcard (`[`, `*`, `?` or `\`), cut back after the last
    /// `/` before it (`src/` for `src/**/*.rs`, the whole text for `docs/a.md`).
    pub fn literal(&self) -> &'a str {
        match self.kind {
            Kind::Path => match self.body.find(['*', '?', '[', '\\']) {
                Some(i) => &self.body[..self.body[..i].rfind('/').map_or(0, |j| j + 1)],
                None => self.body,
            },
            _ => self.name(),
        }
    }
}

/// The longest name of a pool or a rate, in bytes.
pub const MAX_LIMIT_NAME: usize = 64;
/// The most slots a pool may have (and take at once).
pub const MAX_POOL_SLOTS: u64 = 1_000_000;
/// The most grants a rate may allow in its window.
pub const MAX_RATE: u64 = 1_000_000;
/// The longest window of a rate: a year.
pub const MAX_RATE_WINDOW_MS: u64 = 366 * 24 * 3600 * 1000;

/// A rate limit: at most `limit` grants in any `per_ms` milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Rate {
    pub limit: u64,
    pub per_ms: u64,
}

impl std::fmt::Display for Rate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} per {}",
            self.limit,
            crate::duration::format_ms(self.per_ms)
        )
    }
}

/// The pools and rates of a store, as the settings keep them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Limits {
    /// Each pool's slots (in each workspace).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub pools: BTreeMap<String, u64>,
    /// Each rate's grants per window (in each workspace).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub rates: BTreeMap<String, Rate>,
}

impl Limits {
    pub fn is_empty(&self) -> bool {
        self.pools.is_empty() && self.rates.is_empty()
    }

    /// Every name, size and window is one `set` would take (settings given whole, as
    /// `Configure` takes them, are checked here).
    pub fn check(&self) -> crate::Result<()> {
        for (name, &n) in &self.pools {
            check_limit_name("pool", name)?;
            parse_count(
                &format!("pool {name}'s size"),
                &n.to_string(),
                MAX_POOL_SLOTS,
            )?;
        }
        for (name, r) in &self.rates {
            check_limit_name("rate", name)?;
            parse_count(
                &format!("rate {name}'s grants"),
                &r.limit.to_string(),
                MAX_RATE,
            )?;
            if r.per_ms == 0 || r.per_ms > MAX_RATE_WINDOW_MS {
                return Err(crate::Error::invalid(format!(
                    "rate {name}'s window must be from 1ms to 366d, got {}ms",
                    r.per_ms
                )));
            }
        }
        Ok(())
    }

    /// `pool.NAME` and `rate.NAME` are settings (`config pool.gpu 2`); one with a bad name
    /// is refused naming it.
    pub fn is_key(key: &str) -> crate::Result<bool> {
        for (prefix, what) in [("pool.", "pool"), ("rate.", "rate")] {
            if let Some(name) = key.strip_prefix(prefix) {
                check_limit_name(what, name)?;
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Sets `pool.NAME` (`N`, or `none` to remove it) or `rate.NAME` (`N/PER`, `N per PER`
    /// or `none`); false for any other key. A changed size only affects later grants.
    pub fn set(&mut self, key: &str, value: &str) -> crate::Result<bool> {
        if let Some(name) = key.strip_prefix("pool.") {
            check_limit_name("pool", name)?;
            match value {
                "none" => self.pools.remove(name),
                v => self.pools.insert(
                    name.into(),
                    parse_count(&format!("pool {name}'s size"), v, MAX_POOL_SLOTS)?,
                ),
            };
            return Ok(true);
        }
        if let Some(name) = key.strip_prefix("rate.") {
            check_limit_name("rate", name)?;
            if value == "none" {
                self.rates.remove(name);
                return Ok(true);
            }
            let (n, per) = value
                .split_once('/')
                .or_else(|| value.split_once(" per "))
                .ok_or_else(|| {
                    crate::Error::invalid(format!(
                        "rate {name} must be N/PER (60/1m) or none, got {value:?}"
                    ))
                })?;
            let rate = Rate {
                limit: parse_count(&format!("rate {name}'s grants"), n, MAX_RATE)?,
                per_ms: parse_window(&format!("rate {name}'s window"), per.trim())?,
            };
            self.rates.insert(name.into(), rate);
            return Ok(true);
        }
        Ok(false)
    }
}

/// A pool or a rate and how much of it one workspace uses now (`pool list`, `rate list`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LimitUse {
    /// `pool` or `rate`.
    pub kind: String,
    pub name: String,
    /// A pool's slots, or a rate's grants per window.
    pub size: u64,
    /// A rate's window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_ms: Option<u64>,
    /// The slots live claims hold, or the grants made in the window that ends now.
    pub used: u64,
    /// The nodes holding the slots, or granted in the window.
    pub nodes: Vec<crate::id::Id>,
}

/// A pool's or rate's name: 1-64 characters of `[A-Za-z0-9._-]`.
pub fn check_limit_name(what: &str, name: &str) -> crate::Result<()> {
    let ok = !name.is_empty()
        && name.len() <= MAX_LIMIT_NAME
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    if ok {
        Ok(())
    } else {
        Err(crate::Error::invalid(format!(
            "{what} name {name:?} must be 1-{MAX_LIMIT_NAME} characters of [A-Za-z0-9._-]"
        )))
    }
}

/// A count of slots or grants, `1..=most`: 0, a negative number or one past `most` (2^64
/// included) is refused naming `what`.
pub fn parse_count(what: &str, text: &str, most: u64) -> crate::Result<u64> {
    match text.trim().parse::<u64>() {
        Ok(n) if (1..=most).contains(&n) => Ok(n),
        _ => Err(crate::Error::invalid(format!(
            "{what} must be a whole number from 1 to {most}, got {text:?}"
        ))),
    }
}

/// A rate's window: a duration from 1ms to a year.
pub fn parse_window(what: &str, text: &str) -> crate::Result<u64> {
    let ms = crate::duration::parse_ms(text).map_err(|e| match e {
        crate::Error::InvalidInput(m) => crate::Error::InvalidInput(format!("{what}: {m}")),
        e => e,
    })?;
    if ms == 0 || ms > MAX_RATE_WINDOW_MS {
        return Err(crate::Error::invalid(format!(
            "{what} must be from 1ms to 366d, got {text:?}"
        )));
    }
    Ok(ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_resource_is_taken_apart_by_its_prefixes() {
        let s = Spelled::of("read:path:src/**/*.rs");
        assert_eq!(
            (s.write, s.kind, s.body),
            (false, Kind::Path, "src/**/*.rs")
        );
        assert_eq!(s.literal(), "src/");
        assert_eq!(Spelled::of("path:docs/a.md").literal(), "docs/a.md");
        assert_eq!(Spelled::of("path:*.md").literal(), "");
        assert_eq!(Spelled::of("path:a/b?/c").literal(), "a/");
        let p = Spelled::of("pool:gpu*2");
        assert_eq!((p.kind, p.name(), p.literal()), (Kind::Pool, "gpu", "gpu"));
        assert_eq!(Spelled::of("rate:llm").kind, Kind::Rate);
        assert_eq!(Spelled::of("db").kind, Kind::Plain);
        assert_eq!(Spelled::of("src/").literal(), "src/");
    }

    #[test]
    fn counts_and_windows_are_bounded() {
        assert!(parse_count("pool gpu", "0", MAX_POOL_SLOTS).is_err());
        assert!(parse_count("pool gpu", "18446744073709551616", MAX_POOL_SLOTS).is_err());
        assert_eq!(parse_count("pool gpu", "3", MAX_POOL_SLOTS).unwrap(), 3);
        assert!(parse_window("rate llm", "0s").is_err());
        assert_eq!(parse_window("rate llm", "1m").unwrap(), 60_000);
        assert!(check_limit_name("pool", "a b").is_err());
    }
}
