//! The store argument of a PostgreSQL store: a libpq URL (`postgres://user@host/db`,
//! `postgresql://...`, a Unix socket as `?host=/run/postgresql`), or libpq `key=value` words
//! after `postgres:` (`postgres:host=/run/postgresql dbname=claims`). claimdag's own
//! parameter `schema` names the store inside the database (default `claimdag`), so several
//! stores share one database. The password is never shown: [`Target::location`] leaves it
//! out, and so does every error.

use crate::error::{Error, Result};

/// How TLS is asked for (libpq's `sslmode`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tls {
    /// `disable`: never.
    Disable,
    /// `prefer` (the default) and `require`: encrypted (required or when the server offers
    /// it), the server's certificate not checked, as libpq does.
    Encrypt { required: bool },
    /// `verify-ca` / `verify-full`: encrypted, the certificate checked against `sslrootcert`.
    Verify { root_cert: String },
}

/// Where a PostgreSQL store is.
pub struct Target {
    pub config: postgres::Config,
    pub schema: String,
    pub tls: Tls,
    location: String,
}

impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the config: it holds the password.
        f.debug_struct("Target")
            .field("location", &self.location)
            .finish()
    }
}

impl Target {
    /// Where the store is, for messages and headers: user, hosts, ports, database and
    /// schema, never the password.
    pub fn location(&self) -> &str {
        &self.location
    }

    pub fn parse(arg: &str) -> Result<Target> {
        let (words, schema, tls) = claimdag_params(arg)?;
        let config: postgres::Config = words.parse().map_err(|e: postgres::Error| {
            let why = std::error::Error::source(&e)
                .map(|s| format!(": {s}"))
                .unwrap_or_default();
            invalid(arg, format!("not a PostgreSQL connection string{why}"))
        })?;
        let mut config = config;
        config.ssl_mode(match tls {
            Tls::Disable => postgres::config::SslMode::Disable,
            Tls::Encrypt { required: false } => postgres::config::SslMode::Prefer,
            _ => postgres::config::SslMode::Require,
        });
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(std::time::Duration::from_secs(10));
        }
        config.application_name("claimdag");
        let location = describe(&config, &schema);
        Ok(Target {
            config,
            schema,
            tls,
            location,
        })
    }
}

/// Takes claimdag's parameters (`schema`, and `sslmode`/`sslrootcert`, which the client
/// library does not read the way libpq does) out of the argument; returns the rest as
/// libpq `key=value` words.
fn claimdag_params(arg: &str) -> Result<(String, String, Tls)> {
    let mut words: Vec<(String, String)> = Vec::new();
    if let Some(rest) = arg
        .strip_prefix("postgresql://")
        .or_else(|| arg.strip_prefix("postgres://"))
    {
        let (base, query) = rest.split_once('?').unwrap_or((rest, ""));
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            words.push((decode(k, arg)?, decode(v, arg)?));
        }
        words.insert(0, ("__url".into(), format!("postgresql://{base}")));
    } else if let Some(rest) = arg.strip_prefix("postgres:") {
        for w in rest.split_whitespace() {
            let (k, v) = w
                .split_once('=')
                .ok_or_else(|| invalid(arg, format!("{w:?} is not key=value")))?;
            words.push((k.to_string(), v.trim_matches('\'').to_string()));
        }
    }
    let take = |words: &mut Vec<(String, String)>, key: &str| {
        let v = words
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone());
        words.retain(|(k, _)| k != key);
        v
    };
    let schema = take(&mut words, "schema").unwrap_or_else(|| "claimdag".into());
    check_schema(&schema, arg)?;
    let root = take(&mut words, "sslrootcert");
    let tls = match take(&mut words, "sslmode").as_deref() {
        None | Some("prefer") | Some("allow") => Tls::Encrypt { required: false },
        Some("disable") => Tls::Disable,
        Some("require") => Tls::Encrypt { required: true },
        Some("verify-ca") | Some("verify-full") => Tls::Verify {
            root_cert: root.ok_or_else(|| {
                invalid(
                    arg,
                    "sslmode=verify-ca and verify-full need sslrootcert=FILE",
                )
            })?,
        },
        Some(other) => return Err(invalid(arg, format!("unknown sslmode {other:?}"))),
    };
    // Back to one string the client library parses: the URL with its remaining query, or
    // key=value words.
    let text = match words.first() {
        Some((k, url)) if k == "__url" => {
            let rest: Vec<String> = words[1..]
                .iter()
                .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
                .collect();
            if rest.is_empty() {
                url.clone()
            } else {
                format!("{url}?{}", rest.join("&"))
            }
        }
        _ => words
            .iter()
            .map(|(k, v)| format!("{k}='{}'", v.replace('\\', "\\\\").replace('\'', "\\'")))
            .collect::<Vec<_>>()
            .join(" "),
    };
    Ok((text, schema, tls))
}

/// A schema name claimdag accepts: `[a-z_][a-z0-9_]*`, at most 63 bytes, so it needs no
/// quoting anywhere.
fn check_schema(schema: &str, arg: &str) -> Result<()> {
    let ok = !schema.is_empty()
        && schema.len() <= 63
        && schema
            .bytes()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'_')
        && !schema.as_bytes()[0].is_ascii_digit();
    if ok {
        Ok(())
    } else {
        Err(invalid(
            arg,
            format!("schema must be 1-63 characters of [a-z0-9_], not starting with a digit, got {schema:?}"),
        ))
    }
}

fn decode(text: &str, arg: &str) -> Result<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let hex = text
                    .get(i + 1..i + 3)
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
                    .ok_or_else(|| invalid(arg, "a malformed %-escape"))?;
                out.push(hex);
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8(out).map_err(|_| invalid(arg, "a %-escape that is not UTF-8"))
}

fn encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~' | b'/') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// `postgres://user@host:port/db?schema=s`, without the password.
fn describe(config: &postgres::Config, schema: &str) -> String {
    use postgres::config::Host;
    let hosts: Vec<String> = config
        .get_hosts()
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let port = config.get_ports().get(i).or(config.get_ports().first());
            let host = match h {
                Host::Tcp(t) => t.clone(),
                Host::Unix(p) => p.display().to_string(),
            };
            match port {
                Some(p) => format!("{host}:{p}"),
                None => host,
            }
        })
        .collect();
    let user = config
        .get_user()
        .map(|u| format!("{u}@"))
        .unwrap_or_default();
    let db = config.get_dbname().unwrap_or("");
    format!(
        "postgres://{user}{}/{db}?schema={schema}",
        if hosts.is_empty() {
            "localhost".to_string()
        } else {
            hosts.join(",")
        }
    )
}

/// An `invalid_input` about a store argument, which may hold a password: only its scheme
/// is quoted.
fn invalid(_arg: &str, what: impl std::fmt::Display) -> Error {
    Error::invalid(format!("PostgreSQL store: {what}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_and_words_parse_and_the_password_never_shows() {
        let t = Target::parse("postgres://ann:s3cret@db.example:6543/work?schema=team_a").unwrap();
        assert_eq!(t.schema, "team_a");
        assert_eq!(
            t.location(),
            "postgres://ann@db.example:6543/work?schema=team_a"
        );
        assert!(!format!("{t:?}").contains("s3cret"));
        let t = Target::parse("postgresql:///claims?host=/run/postgresql&user=ann").unwrap();
        assert_eq!(
            t.location(),
            "postgres://ann@/run/postgresql/claims?schema=claimdag"
        );
        let t = Target::parse("postgres:host=/tmp dbname=x user=u password=pw sslmode=disable")
            .unwrap();
        assert_eq!((t.schema.as_str(), &t.tls), ("claimdag", &Tls::Disable));
        assert!(!t.location().contains("pw"));
        assert_eq!(
            Target::parse("postgres://h/d?sslmode=require").unwrap().tls,
            Tls::Encrypt { required: true }
        );
        for bad in [
            "postgres://h/d?schema=Bad-Name",
            "postgres://h/d?sslmode=verify-full",
            "postgres://h/d?sslmode=sometimes",
            "postgres:host",
            "postgres://u:pw@h/d?bogus_option=1",
        ] {
            let e = Target::parse(bad).err().unwrap().to_string();
            assert!(!e.contains("pw"), "{e}");
        }
    }
}
