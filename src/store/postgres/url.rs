//! The store argument of a PostgreSQL store, read as libpq reads a connection string: a URL
//! (`postgres://user@host/db`, `postgresql://...`, a Unix socket as `?host=/run/postgresql`)
//! or libpq `key=value` words after `postgres:` (`postgres:host=/run/postgresql
//! dbname=claims`). What the string leaves out comes from the `PG*` environment variables
//! and then libpq's defaults; the password from the string, else `PGPASSWORD`, else the
//! password file. claimdag's own parameter `schema` names the store inside the database
//! (default `claimdag`), so several stores share one database.
//!
//! [`syntax`] reads the two forms, [`passfile`] the password file; this module settles what
//! they give into a [`postgres::Config`]. The password is never shown: [`Target::location`]
//! leaves it out, and so does every error and `Debug`.

mod passfile;
mod syntax;

use crate::error::{Error, Result};
use postgres::config::{ChannelBinding, LoadBalanceHosts, TargetSessionAttrs};
use std::collections::HashMap;
use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

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

/// The keywords read, each with the environment variable that stands in when the string
/// does not give it (libpq's).
const KEYWORDS: &[(&str, Option<&str>)] = &[
    ("host", Some("PGHOST")),
    ("hostaddr", Some("PGHOSTADDR")),
    ("port", Some("PGPORT")),
    ("dbname", Some("PGDATABASE")),
    ("user", Some("PGUSER")),
    ("password", Some("PGPASSWORD")),
    ("passfile", Some("PGPASSFILE")),
    ("options", Some("PGOPTIONS")),
    ("application_name", Some("PGAPPNAME")),
    ("fallback_application_name", None),
    ("connect_timeout", Some("PGCONNECT_TIMEOUT")),
    ("sslmode", Some("PGSSLMODE")),
    ("sslrootcert", Some("PGSSLROOTCERT")),
    ("sslnegotiation", Some("PGSSLNEGOTIATION")),
    ("gssencmode", Some("PGGSSENCMODE")),
    ("channel_binding", Some("PGCHANNELBINDING")),
    ("target_session_attrs", Some("PGTARGETSESSIONATTRS")),
    ("load_balance_hosts", Some("PGLOADBALANCEHOSTS")),
    ("keepalives", None),
    ("keepalives_idle", None),
    ("keepalives_interval", None),
    ("keepalives_count", None),
    ("tcp_user_timeout", None),
    ("client_encoding", None),
    ("schema", None),
];

/// libpq keywords claimdag does not support: refused by name rather than ignored.
const UNSUPPORTED: &[&str] = &[
    "service",
    "sslcert",
    "sslkey",
    "sslpassword",
    "sslcertmode",
    "sslcrl",
    "sslcrldir",
    "sslsni",
    "sslcompression",
    "ssl_min_protocol_version",
    "ssl_max_protocol_version",
    "min_protocol_version",
    "max_protocol_version",
    "requirepeer",
    "require_auth",
    "krbsrvname",
    "gsslib",
    "gssdelegation",
    "replication",
    "requiressl",
];

/// What a connection string is read with besides itself: the environment's `PG*`
/// variables, the home directory (for `~/.pgpass`), the name of the user this process runs
/// as, and the socket directory used when no host is given.
pub struct Env {
    vars: HashMap<String, String>,
    home: Option<PathBuf>,
    user: Option<String>,
    socket_dir: String,
}

impl Env {
    /// This process's: `$HOME` (else the home directory of the effective user, as libpq),
    /// that user's name, and `/var/run/postgresql` when that directory exists, else `/tmp`.
    pub fn of_process() -> Env {
        let vars = std::env::vars_os()
            .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
            .filter(|(k, _)| k.starts_with("PG"))
            .collect();
        let account = account();
        let home = std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from)
            .or_else(|| account.as_ref().map(|(_, home)| home.clone()));
        let socket_dir = if std::path::Path::new("/var/run/postgresql").is_dir() {
            "/var/run/postgresql"
        } else {
            "/tmp"
        };
        Env {
            vars,
            home,
            user: account.map(|(name, _)| name),
            socket_dir: socket_dir.to_string(),
        }
    }

    fn var(&self, name: &str) -> Option<&str> {
        self.vars.get(name).map(String::as_str)
    }
}

/// The name and home directory of the effective user (libpq's `pg_fe_getusername`).
fn account() -> Option<(String, PathBuf)> {
    use std::os::unix::ffi::OsStrExt;
    let mut buf = vec![0u8; 16 * 1024];
    // SAFETY: passwd is plain data that getpwuid_r fills; buf outlives every pointer read
    // from it below, and those are read only when getpwuid_r reported a result.
    unsafe {
        let mut pw: libc::passwd = std::mem::zeroed();
        let mut found: *mut libc::passwd = std::ptr::null_mut();
        let rc = libc::getpwuid_r(
            libc::geteuid(),
            &mut pw,
            buf.as_mut_ptr().cast(),
            buf.len(),
            &mut found,
        );
        if rc != 0 || found.is_null() || pw.pw_name.is_null() || pw.pw_dir.is_null() {
            return None;
        }
        let name = std::ffi::CStr::from_ptr(pw.pw_name)
            .to_str()
            .ok()?
            .to_string();
        let dir = std::ffi::OsStr::from_bytes(std::ffi::CStr::from_ptr(pw.pw_dir).to_bytes());
        Some((name, PathBuf::from(dir)))
    }
}

/// The settings after the string and the environment: the last value of each keyword.
type Given = HashMap<&'static str, String>;

impl Target {
    /// Where the store is, for messages and headers: user, hosts, ports, database and
    /// schema, never the password.
    pub fn location(&self) -> &str {
        &self.location
    }

    /// The store argument `arg`, read with this process's environment.
    pub fn parse(arg: &str) -> Result<Target> {
        Target::parse_in(arg, &Env::of_process())
    }

    /// The store argument `arg`, read with `env`.
    pub fn parse_in(arg: &str, env: &Env) -> Result<Target> {
        let read = syntax::read(arg).map_err(invalid)?;
        let mut given = given(&read.settings)?;
        if env.var("PGSERVICE").is_some() {
            return Err(invalid(
                "PGSERVICE is set, but claimdag does not read service files: unset it and give \
                 the settings in the connection string or the other PG* variables",
            ));
        }
        for (key, var) in KEYWORDS {
            if let Some(value) = var.and_then(|v| env.var(v)) {
                given.entry(key).or_insert_with(|| value.to_string());
            }
        }
        let schema = given.remove("schema").unwrap_or_else(|| "claimdag".into());
        check_schema(&schema)?;
        let mut config = postgres::Config::new();
        let servers = servers(&given, env, &mut config)?;
        // libpq never asks for TLS over a Unix socket, whatever sslmode says.
        let sockets_only = config
            .get_hosts()
            .iter()
            .all(|h| matches!(h, postgres::config::Host::Unix(_)));
        let tls = match sockets_only && config.get_hostaddrs().is_empty() {
            true => Tls::Disable,
            false => tls(&given, env)?,
        };
        credentials(&given, env, &servers, &mut config)?;
        tune(&given, &tls, &mut config)?;
        let location = describe(&config, &schema);
        Ok(Target {
            config,
            schema,
            tls,
            location,
        })
    }

    /// The store argument `arg` without its password, to hand to another process (the
    /// `CLAIMDAG_DIR` of a `claimdag work` command): the password in front of a URL's `@`
    /// and every `password=` parameter or word go, everything else stays as written. That
    /// process finds the password as this one did when it was not in the string:
    /// `PGPASSWORD` or a password file.
    pub fn without_password(arg: &str) -> Result<String> {
        let read = syntax::read(arg).map_err(invalid)?;
        Ok(syntax::without_password(arg, &read))
    }
}

/// The string's settings by keyword (a later one replacing an earlier one); an unknown or
/// unsupported keyword is refused.
fn given(settings: &[syntax::Setting]) -> Result<Given> {
    let mut given = Given::new();
    for (i, s) in settings.iter().enumerate() {
        if let Some((key, _)) = KEYWORDS.iter().find(|(k, _)| *k == s.key) {
            given.insert(key, s.value.clone());
            continue;
        }
        let previous = i.checked_sub(1).map(|j| settings[j].key.as_str());
        let (word, hint) = syntax::name_word(&s.key, previous);
        return Err(invalid(if UNSUPPORTED.contains(&s.key.as_str()) {
            format!("claimdag does not support libpq's {word}{hint}")
        } else {
            format!("{word} is not a parameter claimdag knows{hint}")
        }));
    }
    Ok(given)
}

/// A setting given and not empty (libpq treats an empty value as not given in most places).
fn set<'a>(given: &'a Given, key: &str) -> Option<&'a str> {
    given.get(key).map(String::as_str).filter(|v| !v.is_empty())
}

/// How each server is named in the password file: its host (or address) and port.
struct Servers {
    keys: Vec<(String, String)>,
}

/// The hosts, addresses and ports into `config`, as libpq pairs them: `host` and `hostaddr`
/// are comma lists of the same length, `port` one port for all or one for each (an empty
/// one is 5432); a host that starts with `/` is a socket directory, and no host at all is
/// the default socket directory.
fn servers(given: &Given, env: &Env, config: &mut postgres::Config) -> Result<Servers> {
    let list = |key| set(given, key).map(|v| v.split(',').collect::<Vec<&str>>());
    let (hosts, addrs) = (list("host"), list("hostaddr"));
    let n = match (&hosts, &addrs) {
        (Some(h), Some(a)) if h.len() != a.len() => {
            return Err(invalid(format!(
                "{} hosts but {} hostaddr addresses: give as many of each",
                h.len(),
                a.len()
            )))
        }
        (Some(h), _) => h.len(),
        (None, Some(a)) => a.len(),
        (None, None) => 1,
    };
    let ports = match list("port") {
        None => Vec::new(),
        Some(p) if p.len() != 1 && p.len() != n => {
            return Err(invalid(format!(
                "{} port numbers for {n} hosts: give one for all or one for each",
                p.len()
            )))
        }
        Some(p) => p.iter().map(|p| port(p)).collect::<Result<Vec<u16>>>()?,
    };
    let mut keys = Vec::with_capacity(n);
    for i in 0..n {
        let host = hosts.as_ref().map_or("", |h| h[i]);
        let addr = addrs.as_ref().map_or("", |a| a[i]);
        if addrs.is_some() {
            let ip: IpAddr = addr
                .trim()
                .parse()
                .map_err(|_| invalid(format!("hostaddr {addr:?} is not an IP address")))?;
            config.hostaddr(ip);
        }
        let name = [host, addr]
            .into_iter()
            .find(|h| !h.is_empty())
            .unwrap_or(env.socket_dir.as_str());
        config.host(name);
        // libpq's password file calls the default socket directory localhost.
        let key = if name == env.socket_dir {
            "localhost"
        } else {
            name
        };
        let port = ports.get(i).or(ports.first()).copied().unwrap_or(5432);
        keys.push((key.to_string(), port.to_string()));
    }
    for p in ports {
        config.port(p);
    }
    Ok(Servers { keys })
}

fn port(text: &str) -> Result<u16> {
    if text.is_empty() {
        return Ok(5432);
    }
    text.trim()
        .parse::<u16>()
        .ok()
        .filter(|p| *p != 0)
        .ok_or_else(|| invalid(format!("port {text:?} is not a port number")))
}

/// User, database and password into `config`: the user defaults to this process's user,
/// the database to the user; the password is the string's (or `PGPASSWORD`), else the
/// password file's line for the first server that has one (`passfile`, `PGPASSFILE`, else
/// `~/.pgpass`).
fn credentials(
    given: &Given,
    env: &Env,
    servers: &Servers,
    config: &mut postgres::Config,
) -> Result<()> {
    let user = set(given, "user")
        .or(env.user.as_deref())
        .ok_or_else(|| invalid("no user name: give user=NAME or set PGUSER"))?;
    let dbname = set(given, "dbname").unwrap_or(user);
    config.user(user).dbname(dbname);
    if let Some(password) = set(given, "password") {
        config.password(password);
        return Ok(());
    }
    let file = match set(given, "passfile") {
        Some(f) => Some(PathBuf::from(f)),
        None => env.home.as_ref().map(|h| h.join(".pgpass")),
    };
    let found = file.and_then(|file| {
        servers.keys.iter().find_map(|(host, port)| {
            let key = passfile::Key {
                host,
                port,
                dbname,
                user,
            };
            passfile::lookup(&file, &key)
        })
    });
    if let Some(password) = found {
        config.password(password);
    }
    Ok(())
}

/// libpq's `sslmode`; `verify-ca` and `verify-full` check the server against `sslrootcert`
/// (default `~/.postgresql/root.crt`).
fn tls(given: &Given, env: &Env) -> Result<Tls> {
    Ok(match set(given, "sslmode") {
        None | Some("prefer") | Some("allow") => Tls::Encrypt { required: false },
        Some("disable") => Tls::Disable,
        Some("require") => Tls::Encrypt { required: true },
        Some("verify-ca") | Some("verify-full") => Tls::Verify {
            root_cert: set(given, "sslrootcert")
                .map(String::from)
                .or_else(|| {
                    let home = env.home.as_ref()?;
                    Some(home.join(".postgresql/root.crt").display().to_string())
                })
                .ok_or_else(|| {
                    invalid("sslmode=verify-ca and verify-full need sslrootcert=FILE")
                })?,
        },
        Some(other) => return Err(invalid(format!("unknown sslmode {other:?}"))),
    })
}

/// The other settings into `config`: TLS mode, timeouts, keepalives, session attributes.
fn tune(given: &Given, tls: &Tls, config: &mut postgres::Config) -> Result<()> {
    use postgres::config::SslMode;
    config.ssl_mode(match tls {
        Tls::Disable => SslMode::Disable,
        Tls::Encrypt { required: false } => SslMode::Prefer,
        _ => SslMode::Require,
    });
    // libpq: 0 or less waits for ever, 1 means 2; claimdag's default is 10 seconds.
    match int(given, "connect_timeout")? {
        None => config.connect_timeout(Duration::from_secs(10)),
        Some(s) if s > 0 => config.connect_timeout(Duration::from_secs(s.max(2) as u64)),
        Some(_) => config,
    };
    if let Some(options) = set(given, "options") {
        config.options(options);
    }
    let name = set(given, "application_name")
        .or(set(given, "fallback_application_name"))
        .unwrap_or("claimdag");
    config.application_name(name);
    if let Some(on) = int(given, "keepalives")? {
        config.keepalives(on != 0);
    }
    if let Some(s) = int(given, "keepalives_idle")?.filter(|s| *s > 0) {
        config.keepalives_idle(Duration::from_secs(s as u64));
    }
    if let Some(s) = int(given, "keepalives_interval")?.filter(|s| *s > 0) {
        config.keepalives_interval(Duration::from_secs(s as u64));
    }
    if let Some(n) = int(given, "keepalives_count")?.filter(|n| *n > 0) {
        config.keepalives_retries(u32::try_from(n).unwrap_or(u32::MAX));
    }
    if let Some(ms) = int(given, "tcp_user_timeout")?.filter(|ms| *ms > 0) {
        config.tcp_user_timeout(Duration::from_millis(ms as u64));
    }
    choices(given, config)
}

/// The settings that are one word of a few.
fn choices(given: &Given, config: &mut postgres::Config) -> Result<()> {
    let bad = |key: &str, value: &str, ok: &str| {
        invalid(format!(
            "{key}={value} is not supported: claimdag takes {ok}"
        ))
    };
    match set(given, "target_session_attrs") {
        None | Some("any") => {}
        Some("read-write") => {
            config.target_session_attrs(TargetSessionAttrs::ReadWrite);
        }
        Some("read-only") => {
            config.target_session_attrs(TargetSessionAttrs::ReadOnly);
        }
        Some(v) => {
            return Err(bad(
                "target_session_attrs",
                v,
                "any, read-write or read-only",
            ))
        }
    }
    config.channel_binding(match set(given, "channel_binding") {
        None | Some("prefer") => ChannelBinding::Prefer,
        Some("disable") => ChannelBinding::Disable,
        Some("require") => ChannelBinding::Require,
        Some(v) => return Err(bad("channel_binding", v, "disable, prefer or require")),
    });
    config.load_balance_hosts(match set(given, "load_balance_hosts") {
        None | Some("disable") => LoadBalanceHosts::Disable,
        Some("random") => LoadBalanceHosts::Random,
        Some(v) => return Err(bad("load_balance_hosts", v, "disable or random")),
    });
    // Without GSSAPI, as a libpq built without it: prefer is disable.
    if let Some(v) = set(given, "gssencmode").filter(|v| !matches!(*v, "disable" | "prefer")) {
        return Err(bad("gssencmode", v, "disable or prefer (no GSSAPI)"));
    }
    if let Some(v) = set(given, "sslnegotiation").filter(|v| *v != "postgres") {
        return Err(bad("sslnegotiation", v, "postgres"));
    }
    let utf8 = |v: &str| ["utf8", "utf-8", "unicode", "auto"].contains(&v.to_lowercase().as_str());
    if let Some(v) = set(given, "client_encoding").filter(|v| !utf8(v)) {
        return Err(bad("client_encoding", v, "UTF8"));
    }
    Ok(())
}

/// An integer setting, as libpq reads one (white space around it allowed).
fn int(given: &Given, key: &str) -> Result<Option<i64>> {
    match set(given, key) {
        None => Ok(None),
        Some(v) => v
            .trim()
            .parse::<i64>()
            .map(Some)
            .map_err(|_| invalid(format!("{key} {v:?} is not an integer"))),
    }
}

/// A schema name claimdag accepts: `[a-z_][a-z0-9_]*`, at most 63 bytes, so it needs no
/// quoting anywhere.
fn check_schema(schema: &str) -> Result<()> {
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
            format!("schema must be 1-63 characters of [a-z0-9_], not starting with a digit, got {schema:?}"),
        ))
    }
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
    format!("postgres://{user}{}/{db}?schema={schema}", hosts.join(","))
}

/// An `invalid_input` about a store argument. Callers never put a value of the argument in
/// `what` that could be (part of) a password.
fn invalid(what: impl std::fmt::Display) -> Error {
    Error::invalid(format!("PostgreSQL store: {what}"))
}

#[cfg(test)]
mod tests;
