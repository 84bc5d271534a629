//! Connection strings read as libpq reads them, on a real server: a `?host=` that overrides
//! the URL's host, a `+` kept in a parameter, quoted key=value values, the password taken
//! from `PGPASSWORD` or a password file, the other `PG*` variables, and `work` handing its
//! command the store without the password.

use crate::common::{self, run_limited, Run};
use crate::{pg, psql, schema_of};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The password of the test server's user `claimdag` over TCP.
const PASSWORD: &str = "claimdag-test";

/// The variables that choose a PostgreSQL connection: none of the machine's count here.
const PG_VARS: &[&str] = &[
    "PGHOST",
    "PGHOSTADDR",
    "PGPORT",
    "PGDATABASE",
    "PGUSER",
    "PGPASSWORD",
    "PGPASSFILE",
    "PGSERVICE",
    "PGSERVICEFILE",
    "PGOPTIONS",
    "PGAPPNAME",
    "PGSSLMODE",
    "PGSSLROOTCERT",
    "PGCONNECT_TIMEOUT",
    "PGTARGETSESSIONATTRS",
    "PGCHANNELBINDING",
];

/// `claimdag --dir URL args...` with `HOME` at `home` (so no real `~/.pgpass` counts), no
/// `PG*` variable from the machine, and `env` set.
fn cli_in(home: &Path, url: &str, args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut c = common::command();
    for k in PG_VARS {
        c.env_remove(k);
    }
    c.env("HOME", home);
    c.envs(env.iter().copied());
    c.arg("--dir").arg(url).args(args);
    let mut all = vec!["--dir", url];
    all.extend_from_slice(args);
    run_limited(c, &all, None, Duration::from_secs(120))
}

/// The socket directory and the port of the shared test server, from its URL
/// (`postgresql:///claimdag?host=DIR&port=PORT&user=claimdag`).
fn shared() -> (String, String) {
    let url = pg::url();
    let param = |k: &str| {
        url.split(['?', '&'])
            .find_map(|p| p.strip_prefix(&format!("{k}=")))
            .unwrap_or_else(|| panic!("no {k} in the test server's URL {url}"))
            .to_string()
    };
    (param("host"), param("port"))
}

/// A schema name nobody used yet.
fn fresh_schema() -> String {
    schema_of(&pg::fresh_url())
}

fn home() -> tempfile::TempDir {
    tempfile::tempdir().expect("a temporary HOME")
}

/// The summaries of the live nodes of `schema` on the shared server, read with psql.
fn summaries(schema: &str) -> String {
    psql(&format!(
        "SELECT coalesce(string_agg(summary, ','), '') FROM {schema}.nodes"
    ))
}

#[test]
fn a_host_in_the_query_wins_over_the_host_of_the_url() {
    // Two servers: the URL's own host part names the second one over TCP (reachable, the
    // right password), its ?host= and ?port= the shared one's socket. libpq connects to the
    // socket only; the store must land there and nowhere else.
    let (dir, port) = shared();
    let (_, own_dir, _turn) = pg::fresh_own();
    let own_port = std::fs::read_to_string(own_dir.join("port")).unwrap();
    let schema = fresh_schema();
    let url = format!(
        "postgres://claimdag:{PASSWORD}@127.0.0.1:{}/claimdag?host={dir}&port={port}&schema={schema}",
        own_port.trim()
    );
    let h = home();
    cli_in(
        h.path(),
        &url,
        &["upsert", "--summary", "on the socket"],
        &[],
    )
    .ok();
    assert_eq!(summaries(&schema), "on the socket");
    let on_own = cli_in(
        h.path(),
        &format!("{}&schema={schema}", pg::own_url()),
        &["list"],
        &[],
    );
    assert_eq!(on_own.ok(), "", "the other server got the write");
    // The URL's host part may also be one that does not answer at all.
    let closed =
        format!("postgres://claimdag@127.0.0.1:1/claimdag?host={dir}&port={port}&schema={schema}");
    let listed = cli_in(h.path(), &closed, &["list"], &[]);
    assert!(listed.ok().contains("on the socket"), "{}", listed.stdout);
}

#[test]
fn a_plus_in_a_url_parameter_is_a_plus() {
    let (dir, port) = shared();
    let role = format!("ci+bot{}", std::process::id());
    psql(&format!(
        "DO $$ BEGIN CREATE ROLE \"{role}\" LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$"
    ));
    psql(&format!("GRANT CREATE ON DATABASE claimdag TO \"{role}\""));
    let schema = fresh_schema();
    let url = format!("postgresql:///claimdag?host={dir}&port={port}&user={role}&schema={schema}");
    let h = home();
    cli_in(h.path(), &url, &["upsert", "--summary", "as ci+bot"], &[]).ok();
    assert_eq!(
        psql(&format!(
            "SELECT pg_get_userbyid(nspowner) FROM pg_namespace WHERE nspname = '{schema}'"
        )),
        role
    );
}

#[test]
fn quoted_key_value_words_keep_their_spaces_and_never_show_the_password() {
    let (dir, port) = shared();
    let role = format!("spaced{}", std::process::id());
    psql(&format!(
        "DO $$ BEGIN CREATE ROLE {role} LOGIN SUPERUSER PASSWORD 'pass word \\ ''x'; \
         EXCEPTION WHEN duplicate_object THEN NULL; END $$"
    ));
    let schema = fresh_schema();
    let h = home();
    // The password `pass word \ 'x`, quoted with libpq's backslash escapes, over TCP.
    let words =
        format!("postgres:host=127.0.0.1 port={port} dbname=claimdag user={role} schema={schema}");
    let right = format!(r"{words} password='pass word \\ \'x'");
    cli_in(h.path(), &right, &["upsert", "--summary", "quoted"], &[]).ok();
    assert_eq!(summaries(&schema), "quoted");
    // A wrong one is refused by the server, and no part of it is shown.
    for wrong in [
        format!("{words} password='hunter2 xyzzy'"),
        format!("{words} password=hunter2 xyzzy"),
    ] {
        for args in [&["list"][..], &["--json", "list"][..]] {
            let r = cli_in(h.path(), &wrong, args, &[]);
            assert_ne!(r.code, Some(0), "{}", r.stdout);
            for part in ["hunter2", "xyzzy"] {
                assert!(!r.stderr.contains(part), "{wrong}: {}", r.stderr);
            }
        }
    }
    cli_in(
        h.path(),
        &format!("{words} password='hunter2 xyzzy'"),
        &["list"],
        &[],
    )
    .refused(7, "password authentication failed");
    // A database name with a space is read whole: the server names it.
    let db = format!("postgres:host={dir} port={port} user=claimdag dbname='two words'");
    cli_in(h.path(), &db, &["list"], &[]).refused(7, "\"two words\" does not exist");
}

#[test]
fn the_password_comes_from_pgpassword_or_a_password_file() {
    let (_, port) = shared();
    let schema = fresh_schema();
    let url = format!("postgres://claimdag@127.0.0.1:{port}/claimdag?schema={schema}");
    let h = home();
    // Without a password anywhere the server refuses.
    cli_in(h.path(), &url, &["list"], &[]).refused(7, "password");
    cli_in(
        h.path(),
        &url,
        &["upsert", "--summary", "PGPASSWORD"],
        &[("PGPASSWORD", PASSWORD)],
    )
    .ok();
    // ~/.pgpass, mode 0600: the first line that matches host, port, database and user.
    let pgpass = h.path().join(".pgpass");
    write_mode(
        &pgpass,
        &format!(
            "# host:port:database:user:password\n\
             127.0.0.1:{port}:claimdag:someone-else:wrong\n\
             127.0.0.1:{port}:claimdag:claimdag:{PASSWORD}\n\
             *:*:*:*:wrong\n"
        ),
        0o600,
    );
    cli_in(h.path(), &url, &["upsert", "--summary", "pgpass"], &[]).ok();
    // The same file readable by others is not read, as libpq does.
    write_mode(&pgpass, &std::fs::read_to_string(&pgpass).unwrap(), 0o644);
    cli_in(h.path(), &url, &["list"], &[]).refused(7, "password");
    // passfile= and PGPASSFILE name another file (here a line with wildcards).
    let other = h.path().join("other-pass");
    write_mode(&other, &format!("*:{port}:*:claimdag:{PASSWORD}\n"), 0o600);
    let with_file = format!("{url}&passfile={}", other.display());
    cli_in(
        h.path(),
        &with_file,
        &["upsert", "--summary", "passfile"],
        &[],
    )
    .ok();
    let by_var = [("PGPASSFILE", other.to_str().unwrap())];
    cli_in(
        h.path(),
        &url,
        &["upsert", "--summary", "PGPASSFILE"],
        &by_var,
    )
    .ok();
    let mut got: Vec<String> = summaries(&schema).split(',').map(String::from).collect();
    got.sort();
    assert_eq!(got, ["PGPASSFILE", "PGPASSWORD", "passfile", "pgpass"]);
}

#[test]
fn the_other_pg_variables_fill_what_the_string_leaves_out() {
    let (dir, port) = shared();
    let schema = fresh_schema();
    let h = home();
    // PGSSLMODE=require, as set for a remote server, does not stop a socket connection:
    // libpq never asks for TLS over a Unix socket.
    let env = [
        ("PGHOST", dir.as_str()),
        ("PGPORT", port.as_str()),
        ("PGUSER", "claimdag"),
        ("PGDATABASE", "claimdag"),
        ("PGSSLMODE", "require"),
    ];
    let url = format!("postgresql://?schema={schema}");
    cli_in(h.path(), &url, &["upsert", "--summary", "from PG*"], &env).ok();
    assert_eq!(summaries(&schema), "from PG*");
    // A value in the string wins over the variable.
    let r = cli_in(
        h.path(),
        &format!("postgresql:///no_such_db?schema={schema}"),
        &["list"],
        &env,
    );
    r.refused(7, "\"no_such_db\" does not exist");
}

#[test]
fn work_hands_its_command_the_store_without_the_password() {
    let (_, port) = shared();
    let schema = fresh_schema();
    let h = home();
    let url = format!("postgres://claimdag:{PASSWORD}@127.0.0.1:{port}/claimdag?schema={schema}");
    let words = format!(
        "postgres:host=127.0.0.1 port={port} password='{PASSWORD}' dbname=claimdag user=claimdag schema={schema}"
    );
    let cases = [
        (
            url.clone(),
            format!("postgres://claimdag@127.0.0.1:{port}/claimdag?schema={schema}"),
        ),
        (
            words,
            format!(
                "postgres:host=127.0.0.1 port={port} dbname=claimdag user=claimdag schema={schema}"
            ),
        ),
    ];
    for (n, (given, handed)) in cases.into_iter().enumerate() {
        let summary = format!("work {n}");
        let id = cli_in(h.path(), &url, &["upsert", "--summary", &summary], &[])
            .ok()
            .trim()
            .to_string();
        let seen = h.path().join("seen");
        // The command reads the store as it was handed: the password comes from PGPASSWORD,
        // which it inherits.
        let script = format!(
            r#"printf %s "$CLAIMDAG_DIR" >"{}" && exec "{}" --dir "$CLAIMDAG_DIR" show "$CLAIMDAG_NODE" >/dev/null"#,
            seen.display(),
            common::bin()
        );
        let r = cli_in(
            h.path(),
            &given,
            &[
                "work",
                "--actor",
                "name:w",
                "--no-wait",
                "--",
                "sh",
                "-c",
                &script,
            ],
            &[("PGPASSWORD", PASSWORD)],
        );
        assert_eq!(r.code, Some(0), "{}", r.stderr);
        let dir = std::fs::read_to_string(&seen).unwrap();
        assert_eq!(dir, handed);
        assert!(!dir.contains(PASSWORD));
        let shown = cli_in(h.path(), &url, &["--json", "show", &id], &[]).json();
        assert_eq!(shown["status"], "done");
    }
}

fn write_mode(path: &PathBuf, text: &str, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}
