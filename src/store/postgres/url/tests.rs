//! The rules of reading a connection string, each against what libpq does with the same
//! string and environment.

use super::*;
use postgres::config::Host;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// An environment with `vars`, HOME at `home`, running as `ann`, sockets in
/// /var/run/postgresql by default.
fn env(vars: &[(&str, &str)], home: Option<&Path>) -> Env {
    Env {
        vars: vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        home: home.map(Path::to_path_buf),
        user: Some("ann".into()),
        socket_dir: "/var/run/postgresql".into(),
    }
}

fn parse(arg: &str) -> Target {
    parse_with(arg, &[], None)
}

fn parse_with(arg: &str, vars: &[(&str, &str)], home: Option<&Path>) -> Target {
    Target::parse_in(arg, &env(vars, home)).unwrap_or_else(|e| panic!("{arg}: {e}"))
}

fn refused(arg: &str) -> String {
    match Target::parse_in(arg, &env(&[], None)) {
        Ok(t) => panic!("{arg} was read as {}", t.location()),
        Err(e) => e.to_string(),
    }
}

fn password(t: &Target) -> Option<String> {
    t.config
        .get_password()
        .map(|p| String::from_utf8_lossy(p).into_owned())
}

fn hosts(t: &Target) -> Vec<String> {
    t.config
        .get_hosts()
        .iter()
        .map(|h| match h {
            Host::Tcp(name) => format!("tcp:{name}"),
            Host::Unix(dir) => format!("unix:{}", dir.display()),
        })
        .collect()
}

#[test]
fn urls_and_words_parse_and_the_password_never_shows() {
    let t = parse("postgres://ann:s3cret@db.example:6543/work?schema=team_a");
    assert_eq!(t.schema, "team_a");
    assert_eq!(
        t.location(),
        "postgres://ann@db.example:6543/work?schema=team_a"
    );
    assert!(!format!("{t:?}").contains("s3cret"));
    let t = parse("postgresql:///claims?host=/run/postgresql&user=bob");
    assert_eq!(
        t.location(),
        "postgres://bob@/run/postgresql/claims?schema=claimdag"
    );
    let t = parse("postgres:host=/tmp dbname=x user=u password=pw sslmode=disable");
    assert_eq!((t.schema.as_str(), &t.tls), ("claimdag", &Tls::Disable));
    assert!(!t.location().contains("pw"));
    assert_eq!(
        parse("postgres://h/d?sslmode=require").tls,
        Tls::Encrypt { required: true }
    );
    for bad in [
        "postgres://h/d?schema=Bad-Name",
        "postgres://h/d?sslmode=verify-full",
        "postgres://h/d?sslmode=sometimes",
        "postgres:host",
        "postgres://u:pw@h/d?bogus_option=1",
        "postgres://u:pw@h/d?service=x",
        "postgres://u:pw@h/d?port=x",
        "postgres://u:pw@h:1,h:2,h:3/d?port=1,2",
    ] {
        assert!(!refused(bad).contains("pw"), "{bad}");
    }
    assert!(refused("postgres://h/d?bogus_option=1").contains("\"bogus_option\""));
    assert!(refused("postgres://h/d?sslcert=x").contains("does not support"));
}

#[test]
fn a_query_parameter_overrides_the_part_of_the_url_it_names() {
    // libpq: postgres://u@localhost:5433/db?host=/sock is the socket /sock/.s.PGSQL.5433.
    let t = parse("postgres://u@localhost:5433/db?host=/sock");
    assert_eq!(hosts(&t), ["unix:/sock"]);
    assert_eq!(t.config.get_ports(), [5433]);
    let t = parse("postgres://u:one@h:1/db1?port=2&dbname=db2&user=v&password=two");
    assert_eq!(hosts(&t), ["tcp:h"]);
    assert_eq!(t.config.get_ports(), [2]);
    assert_eq!(t.config.get_dbname(), Some("db2"));
    assert_eq!(t.config.get_user(), Some("v"));
    assert_eq!(password(&t).as_deref(), Some("two"));
    // Several hosts, each with its port or the default one; IPv6 in brackets.
    let t = parse("postgresql://a:1,[::1],b:3/db");
    assert_eq!(hosts(&t), ["tcp:a", "tcp:::1", "tcp:b"]);
    assert_eq!(t.config.get_ports(), [1, 5432, 3]);
    // A socket directory %-encoded in the host part.
    assert_eq!(hosts(&parse("postgres://%2Frun%2Fpg/db")), ["unix:/run/pg"]);
    // No TLS over a Unix socket, whatever sslmode says (as libpq).
    for mode in ["require", "verify-full"] {
        let t = parse(&format!("postgresql:///db?host=/run/pg&sslmode={mode}"));
        assert_eq!(t.tls, Tls::Disable);
        assert_eq!(t.config.get_ssl_mode(), postgres::config::SslMode::Disable);
    }
}

#[test]
fn a_plus_is_a_plus_and_percent_escapes_are_decoded() {
    let t = parse("postgres://h/d?user=ci+bot&application_name=a%20b&options=-c%20x%3Dy");
    assert_eq!(t.config.get_user(), Some("ci+bot"));
    assert_eq!(t.config.get_application_name(), Some("a b"));
    assert_eq!(t.config.get_options(), Some("-c x=y"));
    let t = parse("postgres://ci+bot:p+w%40rd@h/d");
    assert_eq!(t.config.get_user(), Some("ci+bot"));
    assert_eq!(password(&t).as_deref(), Some("p+w@rd"));
    for bad in [
        "postgres://h/d?user=%zz",
        "postgres://h/d?user=a%00",
        "postgres://h/d?a",
    ] {
        refused(bad);
    }
    // A password cut at & or carrying a second = is refused without showing any part.
    for bad in [
        "postgres://h/d?password=hunter2&xyzzy",
        "postgres://h/d?password=hunter2&xyzzy=1",
        "postgres://h/d?password=hunter2=xyzzy",
        "postgres://u:hunter2%zzxyzzy@h/d",
    ] {
        let e = refused(bad);
        assert!(!e.contains("hunter2") && !e.contains("xyzzy"), "{bad}: {e}");
    }
}

#[test]
fn key_value_words_are_read_as_libpq_reads_them() {
    let t = parse(
        r"postgres:host=h  port = 6000 dbname='two words' user=ann password='a b \'c\' \\d' options=-c\ x=1",
    );
    assert_eq!(t.config.get_dbname(), Some("two words"));
    assert_eq!(t.config.get_ports(), [6000]);
    assert_eq!(password(&t).as_deref(), Some(r"a b 'c' \d"));
    assert_eq!(t.config.get_options(), Some("-c x=1"));
    assert!(!t.location().contains("a b"));
    assert!(!format!("{t:?}").contains("a b"));
    // The last of a repeated keyword wins; an empty quoted value is a value.
    let t = parse("postgres:user=a user=b dbname=''");
    assert_eq!(t.config.get_user(), Some("b"));
    assert_eq!(t.config.get_dbname(), Some("b"));
    // An unquoted password with a space, an unterminated quote: refused, nothing shown.
    for bad in [
        "postgres:host=h password=hunter2 xyzzy",
        "postgres:host=h password=hunter2 xyzzy=1",
        "postgres:host=h password='hunter2 xyzzy",
        "postgres:password=hunter2 xyzzy dbname=d",
    ] {
        let e = refused(bad);
        assert!(!e.contains("hunter2") && !e.contains("xyzzy"), "{bad}: {e}");
        assert!(e.contains("password"), "{bad}: {e}");
    }
    assert!(refused("postgres:host h").contains("\"host\" is not key=value"));
}

#[test]
fn the_pg_variables_fill_what_the_string_leaves_out() {
    let vars = [
        ("PGHOST", "/pg/sock"),
        ("PGPORT", "6001"),
        ("PGUSER", "bob"),
        ("PGDATABASE", "claims"),
        ("PGAPPNAME", "fleet"),
        ("PGOPTIONS", "-c statement_timeout=5000"),
        ("PGCONNECT_TIMEOUT", "3"),
        ("PGSSLMODE", "disable"),
        ("PGPASSWORD", "from-env"),
    ];
    let t = parse_with("postgresql://", &vars, None);
    assert_eq!(
        t.location(),
        "postgres://bob@/pg/sock:6001/claims?schema=claimdag"
    );
    assert_eq!(t.config.get_application_name(), Some("fleet"));
    assert_eq!(t.config.get_options(), Some("-c statement_timeout=5000"));
    assert_eq!(
        t.config.get_connect_timeout(),
        Some(&Duration::from_secs(3))
    );
    assert_eq!(t.tls, Tls::Disable);
    assert_eq!(password(&t).as_deref(), Some("from-env"));
    assert!(!t.location().contains("from-env") && !format!("{t:?}").contains("from-env"));
    // A value in the string wins over the variable.
    let t = parse_with(
        "postgres:host=h port=7 user=u dbname=d password=p sslmode=require connect_timeout=0",
        &vars,
        None,
    );
    assert_eq!(t.location(), "postgres://u@h:7/d?schema=claimdag");
    assert_eq!(password(&t).as_deref(), Some("p"));
    assert_eq!(t.tls, Tls::Encrypt { required: true });
    assert_eq!(t.config.get_connect_timeout(), None);
    // Without host and user anywhere: libpq's defaults, the default socket directory and
    // the user this process runs as (who is also the database).
    let t = parse("postgresql://");
    assert_eq!(hosts(&t), ["unix:/var/run/postgresql"]);
    assert_eq!(t.config.get_user(), Some("ann"));
    assert_eq!(t.config.get_dbname(), Some("ann"));
    assert_eq!(t.config.get_application_name(), Some("claimdag"));
    assert_eq!(
        t.config.get_connect_timeout(),
        Some(&Duration::from_secs(10))
    );
    // Service files are not read: a set PGSERVICE is refused rather than ignored.
    let e = Target::parse_in("postgresql://h/d", &env(&[("PGSERVICE", "x")], None))
        .err()
        .unwrap();
    assert!(e.to_string().contains("PGSERVICE"), "{e}");
}

fn file(dir: &Path, name: &str, text: &str, mode: u32) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
    path.display().to_string()
}

#[test]
fn the_password_file_is_read_as_libpq_reads_it() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    file(
        h,
        ".pgpass",
        "# hostname:port:database:username:password\n\
         db:5432:d:other:no\n\
         db:5432:d:ann:first\\:one\\\\\r\n\
         db:*:*:ann:second\n\
         localhost:5432:ann:ann:local\n\
         /run/pg:6000:*:*:socket\n\
         *:*:*:*:any\n",
        0o600,
    );
    let pw = |arg: &str, vars: &[(&str, &str)]| password(&parse_with(arg, vars, Some(h)));
    // The first line that matches host, port, database and user; escapes removed.
    assert_eq!(
        pw("postgres://ann@db/d", &[]).as_deref(),
        Some(r"first:one\")
    );
    assert_eq!(pw("postgres://ann@db:99/x", &[]).as_deref(), Some("second"));
    // The default socket directory is localhost (and the database defaults to the user).
    assert_eq!(pw("postgresql://", &[]).as_deref(), Some("local"));
    // Another socket directory is matched as itself.
    let socket = "postgres:host=/run/pg port=6000 dbname=q";
    assert_eq!(pw(socket, &[]).as_deref(), Some("socket"));
    assert_eq!(
        pw("postgres://zed@elsewhere/d", &[]).as_deref(),
        Some("any")
    );
    // The string's password, then PGPASSWORD, then the file.
    assert_eq!(
        pw("postgres://ann:given@db/d", &[("PGPASSWORD", "env")]).as_deref(),
        Some("given")
    );
    assert_eq!(
        pw("postgres://ann@db/d", &[("PGPASSWORD", "env")]).as_deref(),
        Some("env")
    );
    // passfile=, else PGPASSFILE, else ~/.pgpass.
    let other = file(h, "other", "*:*:*:*:other-file\n", 0o600);
    let third = file(h, "third", "*:*:*:*:third-file\n", 0o600);
    let by_var = [("PGPASSFILE", third.as_str())];
    let named = format!("postgres://ann@db/d?passfile={other}");
    assert_eq!(pw(&named, &by_var).as_deref(), Some("other-file"));
    assert_eq!(
        pw("postgres://ann@db/d", &by_var).as_deref(),
        Some("third-file")
    );
    // A file others may read is not read; nor is one that is not a plain file.
    file(h, "open", "*:*:*:*:open\n", 0o640);
    let open = format!("postgres://ann@db/d?passfile={}/open", h.display());
    assert_eq!(pw(&open, &[]), None);
    let dir = format!("postgres://ann@db/d?passfile={}", h.display());
    assert_eq!(pw(&dir, &[]), None);
    // The password from the file never shows either.
    let t = parse_with("postgres://ann@db/d", &[], Some(h));
    assert!(!t.location().contains("first") && !format!("{t:?}").contains("first"));
}

#[test]
fn the_store_handed_on_has_no_password() {
    for (given, handed) in [
        (
            "postgres://ann:s3cret@db:5/claims?schema=a",
            "postgres://ann@db:5/claims?schema=a",
        ),
        (
            "postgresql://ann@db/claims?password=s3cret&schema=a",
            "postgresql://ann@db/claims?schema=a",
        ),
        (
            "postgres://:s3cret@db/c?password=s3cret",
            "postgres://@db/c",
        ),
        (
            "postgres:host=db password='s3 cret' dbname=claims",
            "postgres:host=db dbname=claims",
        ),
        (
            "postgres:password=s3cret host=/run/pg",
            "postgres:host=/run/pg",
        ),
        (
            "postgresql:///claims?host=/run/pg&passfile=/p",
            "postgresql:///claims?host=/run/pg&passfile=/p",
        ),
    ] {
        let out = Target::without_password(given).unwrap();
        assert_eq!(out, handed, "{given}");
        // What is handed on reads as the same store.
        let (a, b) = (parse(given), parse(&out));
        assert_eq!((a.location(), &a.schema), (b.location(), &b.schema));
        assert_eq!(password(&b), None);
    }
}
