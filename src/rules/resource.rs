//! What a resource claims (SPEC 13, "Resources"): a plain name (equal, or a trailing-`/`
//! prefix, as before) or `path:GLOB` (the paths a glob claims, `glob.rs`), either of them
//! written (exclusive: the default) or `read:` (shared: any number of readers together, or
//! one writer; never both); or a pool's slots (`pool:NAME*K`) or a rate's grant
//! (`rate:NAME`), which are counted (`claims.rs`), never overlap anything.

use super::Glob;
use crate::error::{Error, Result};
use crate::model::limits::{self, Kind, Spelled};

/// What a resource names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target<'a> {
    /// A plain resource: equal, or a trailing-`/` prefix of the other.
    Plain(&'a str),
    /// `path:GLOB`.
    Path(Glob),
    /// `pool:NAME*K`: K of the pool's slots (`pool:NAME`: one).
    Pool { name: &'a str, slots: u64 },
    /// `rate:NAME`: one grant of the rate's window.
    Rate(&'a str),
}

/// A resource as a claim holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resource<'a> {
    /// Exclusive (the default), or shared with other readers (`read:`).
    pub write: bool,
    pub target: Target<'a>,
}

impl<'a> Resource<'a> {
    /// Reads `text`; a malformed glob or an empty name is `invalid_input` naming it.
    pub fn parse(text: &'a str) -> Result<Resource<'a>> {
        let s = Spelled::of(text);
        let target = match s.kind {
            Kind::Plain => Target::Plain(s.body),
            Kind::Path => Target::Path(Glob::parse(s.body)?),
            Kind::Pool => {
                let name = s.name();
                let slots = match s.body.split_once('*') {
                    Some((_, k)) => limits::parse_count(
                        &format!("the slots of resource {text:?}"),
                        k,
                        limits::MAX_POOL_SLOTS,
                    )?,
                    None => 1,
                };
                limits::check_limit_name("pool", name).map_err(|e| of_resource(text, e))?;
                Target::Pool { name, slots }
            }
            Kind::Rate => {
                limits::check_limit_name("rate", s.body).map_err(|e| of_resource(text, e))?;
                Target::Rate(s.body)
            }
        };
        if target == Target::Plain("") {
            return Err(Error::invalid(format!("resource {text:?} names nothing")));
        }
        if !s.write && matches!(target, Target::Pool { .. } | Target::Rate(_)) {
            return Err(Error::invalid(format!(
                "resource {text:?}: a pool's slot or a rate's grant is taken whole, never read:"
            )));
        }
        Ok(Resource {
            write: s.write,
            target,
        })
    }

    /// The two claim something in common: the same plain resource (or one under the
    /// other's trailing `/`), or a path both globs claim.
    pub fn overlaps(&self, other: &Resource<'_>) -> bool {
        match (&self.target, &other.target) {
            (Target::Plain(a), Target::Plain(b)) => plain_covers(a, b) || plain_covers(b, a),
            (Target::Path(a), Target::Path(b)) => a.overlaps(b),
            _ => false,
        }
    }
}

/// `e` about resource `text`, saying so.
fn of_resource(text: &str, e: Error) -> Error {
    match e {
        Error::InvalidInput(m) => Error::invalid(format!("resource {text:?}: {m}")),
        e => e,
    }
}

/// Two resources of two live claims may not be held together: they overlap, and one of
/// them writes.
pub fn resources_conflict(a: &str, b: &str) -> bool {
    Resource::held(a).conflicts(&Resource::held(b))
}

impl<'a> Resource<'a> {
    /// A resource a node holds: one that does not parse (kept before this check existed)
    /// counts as the plain name it is.
    pub fn held(text: &'a str) -> Resource<'a> {
        Resource::parse(text).unwrap_or(Resource {
            write: true,
            target: Target::Plain(text),
        })
    }

    /// The two may not be held together: they overlap, and one of them writes.
    pub fn conflicts(&self, other: &Resource<'_>) -> bool {
        (self.write || other.write) && self.overlaps(other)
    }
}

/// A plain resource covers a name when equal to it, or when it ends in `/` and the name
/// starts with it: `src/` covers `src/a.rs` and `src/x/`, while `src/a.rs` covers no more
/// than itself (not the directory `src/` it is in).
fn plain_covers(resource: &str, name: &str) -> bool {
    resource == name || (resource.ends_with('/') && name.starts_with(resource))
}

/// A claim's resource lets its holder change the file at `path` (`diff-check`): a write
/// resource that names it (plain) or claims it (a glob). A `read:` one never does.
pub fn resource_covers(resource: &str, path: &str) -> bool {
    match Resource::parse(resource) {
        Ok(Resource { write: false, .. }) => false,
        Ok(Resource {
            target: Target::Path(g),
            ..
        }) => g.covers(path),
        _ => plain_covers(resource, path),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readers_share_and_a_writer_excludes_everyone() {
        assert!(!resources_conflict("read:db", "read:db"));
        assert!(resources_conflict("read:db", "db"));
        assert!(resources_conflict("db", "db"));
        assert!(!resources_conflict("read:path:src/**", "read:path:src/a.rs"));
        assert!(resources_conflict("path:src/**", "read:path:src/a.rs"));
        assert!(!resources_conflict("path:src/*.rs", "path:docs/**"));
        // Plain names and paths are apart: `src/` is not the path glob `src`.
        assert!(!resources_conflict("src/", "path:src/**"));
        assert!(resources_conflict("src/", "src/a.rs"));
    }

    #[test]
    fn diff_check_counts_write_claims_only() {
        assert!(resource_covers("path:src/**/*.rs", "src/a/b.rs"));
        assert!(!resource_covers("read:path:src/**", "src/a.rs"));
        assert!(!resource_covers("read:src/", "src/a.rs"));
        assert!(resource_covers("src/", "src/a.rs"));
    }

    #[test]
    fn a_resource_that_names_nothing_is_refused() {
        assert!(Resource::parse("read:").is_err());
        assert!(Resource::parse("path:").is_err());
        assert!(Resource::parse("read:path:/abs").is_err());
        assert!(Resource::parse("pool:gpu*0").is_err());
        assert!(Resource::parse("pool:gpu*18446744073709551616").is_err());
        assert!(Resource::parse("pool:").is_err());
        assert!(Resource::parse("rate:a b").is_err());
        assert!(Resource::parse("read:pool:gpu").is_err());
        assert_eq!(
            Resource::parse("pool:gpu*2").unwrap().target,
            Target::Pool {
                name: "gpu",
                slots: 2
            }
        );
    }

    #[test]
    fn pools_and_rates_are_counted_never_overlapped() {
        assert!(!resources_conflict("pool:gpu", "pool:gpu"));
        assert!(!resources_conflict("rate:llm", "rate:llm"));
        assert!(!resources_conflict("pool:gpu", "gpu"));
    }
}
