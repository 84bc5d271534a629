//! The walkthrough, JSON output and errors through the CLI on a PostgreSQL store, the schema
//! and its migrations, and what a bad store argument says.

use super::{cli, pg, psql, schema_of};
use crate::common::actor;

#[test]
fn the_walkthrough_runs_on_postgres_as_on_a_directory() {
    let url = pg::fresh_url();
    // Reading a store that does not exist yet shows an empty DAG and creates nothing.
    assert_eq!(cli(&url, &["list"]).ok(), "");
    let schema = schema_of(&url);
    assert_eq!(
        psql(&format!(
            "SELECT count(*) FROM pg_namespace WHERE nspname = '{schema}'"
        )),
        "0"
    );
    let a = cli(&url, &["upsert", "--summary", "parse the manifest header"])
        .ok()
        .trim()
        .to_string();
    let b = cli(
        &url,
        &[
            "upsert",
            "--summary",
            "reject a manifest with no header",
            "--parent",
            &a,
        ],
    )
    .ok()
    .trim()
    .to_string();
    cli(&url, &["link", &a, &b]).ok();
    let me = actor(7);
    assert_eq!(cli(&url, &["claim", &a, "--assignee", &me]).ok(), "gen=2\n");
    let r = cli(&url, &["claim", &a, "--assignee", &actor(8)]);
    r.refused(4, "already claimed");
    cli(&url, &["renew", &a, "--actor", &me]).ok();
    cli(&url, &["reclaim", "--lease", "60"]).ok();
    assert_eq!(
        cli(&url, &["complete", &a, "--status", "done", "--gen", "2"]).ok(),
        format!("{}...  done\n", &a[..8])
    );
    let listed = cli(&url, &["list"]).ok().to_string();
    assert!(
        listed.starts_with(&b[..8]) && listed.contains("ready"),
        "{listed}"
    );
    a_stalled_worker_is_fenced_off(&url, &b, &me);
    let check = cli(&url, &["check"]);
    assert!(
        check.ok().starts_with("ok: 2 live nodes"),
        "{}",
        check.stdout
    );
    nodes_and_events_are_rows(&url, &schema, &a);
}

/// A stalled worker is fenced off: exit 5, nothing changes. (`me` claims `b` with a short
/// lease that expires and is handed back.)
fn a_stalled_worker_is_fenced_off(url: &str, b: &str, me: &str) {
    cli(url, &["claim", b, "--assignee", me, "--ttl", "1s"]).ok();
    std::thread::sleep(std::time::Duration::from_millis(1200));
    cli(url, &["reclaim"]).ok();
    let before = cli(url, &["--json", "show", b]).json();
    cli(url, &["complete", b, "--status", "done", "--gen", "2"]).refused(5, "stale generation");
    assert_eq!(cli(url, &["--json", "show", b]).json(), before);
    let e = cli(
        url,
        &["--json", "complete", b, "--status", "done", "--gen", "2"],
    )
    .error_json();
    assert_eq!(e["code"], "stale_generation");
}

/// A node a row, history a row an event, readable with SQL: node `a` of the store at `url`
/// (schema `schema`) is done at generation 2.
fn nodes_and_events_are_rows(url: &str, schema: &str, a: &str) {
    assert_eq!(
        psql(&format!(
            "SELECT status || ' ' || generation FROM {schema}.nodes WHERE id = '{a}'"
        )),
        "done 2"
    );
    let events: i64 = psql(&format!("SELECT count(*) FROM {schema}.history"))
        .parse()
        .unwrap();
    assert_eq!(
        events as usize,
        cli(url, &["--json", "log"])
            .json()
            .as_array()
            .unwrap()
            .len()
    );
}

#[test]
fn a_newer_schema_is_refused_as_corrupt_and_never_written() {
    let url = pg::fresh_url();
    cli(&url, &["upsert", "--summary", "x"]).ok();
    let schema = schema_of(&url);
    psql(&format!("UPDATE {schema}.store SET version = 99"));
    for args in [
        vec!["list"],
        vec!["upsert", "--summary", "y"],
        vec!["check"],
    ] {
        let r = cli(&url, &args);
        r.refused(6, "corrupt");
        assert!(r.stderr.contains("version 99"), "{}", r.stderr);
    }
    assert_eq!(psql(&format!("SELECT count(*) FROM {schema}.nodes")), "1");
}

#[test]
fn two_stores_share_one_database() {
    let (one, two) = (pg::fresh_url(), pg::fresh_url());
    let a = cli(&one, &["upsert", "--summary", "same"]).ok().to_string();
    let b = cli(&two, &["upsert", "--summary", "same"]).ok().to_string();
    assert_eq!(a, b, "the same id in each store");
    cli(&one, &["claim", a.trim(), "--assignee", &actor(1)]).ok();
    assert!(
        cli(&two, &["list"]).ok().contains("ready"),
        "store two is untouched"
    );
}

#[test]
fn bad_urls_and_passwords_are_clear_errors_that_never_show_the_password() {
    let (_, dir, _turn) = pg::fresh_own();
    let port = std::fs::read_to_string(dir.join("port"))
        .ok()
        .map(|p| p.trim().to_string());
    let mut cases: Vec<(String, i32, &str)> = vec![
        (
            "postgres://u:hunter2@127.0.0.1:1/db".into(),
            7,
            "127.0.0.1:1",
        ),
        (
            "postgres://u:hunter2@no-such-host.invalid/db".into(),
            7,
            "no-such-host.invalid",
        ),
        (
            "postgres://u:hunter2@h/db?schema=Bad-Name".into(),
            2,
            "schema",
        ),
        (
            "postgres://u:hunter2@h/db?sslmode=sometimes".into(),
            2,
            "sslmode",
        ),
        (
            "postgres://u:hunter2@h/db?nonsense_option=1".into(),
            2,
            "nonsense_option",
        ),
    ];
    if let Some(p) = &port {
        cases.push((
            format!("postgres://claimdag:hunter2@127.0.0.1:{p}/claimdag"),
            7,
            "password",
        ));
    }
    for (url, exit, phrase) in &cases {
        for args in [vec!["list"], vec!["upsert", "--summary", "x"]] {
            let r = cli(url, &args);
            r.refused(*exit, phrase);
            assert!(!r.stderr.contains("hunter2"), "{url}: {}", r.stderr);
            let j = cli(url, &[&["--json"][..], &args].concat());
            assert!(!j.stderr.contains("hunter2"), "{}", j.stderr);
        }
    }
    // The right password gets in over TCP.
    if let Some(p) = port {
        let ok = format!(
            "postgres://claimdag:claimdag-test@127.0.0.1:{p}/claimdag?schema=tcp_{}",
            std::process::id()
        );
        cli(&ok, &["upsert", "--summary", "over tcp"]).ok();
    }
}

#[test]
fn tls_when_asked() {
    let (_, d, _turn) = pg::fresh_own();
    let port = std::fs::read_to_string(d.join("port")).unwrap();
    let port = port.trim();
    let base = format!("postgres://claimdag:claimdag-test@localhost:{port}/claimdag");
    let schema = format!("tls_{}", std::process::id());
    for (mode, extra) in [
        ("require", String::new()),
        (
            "verify-full",
            format!("&sslrootcert={}", d.join("ca.crt").display()),
        ),
    ] {
        let url = format!("{base}?sslmode={mode}&schema={schema}{extra}");
        cli(&url, &["upsert", "--summary", &format!("over {mode}")]).ok();
    }
    // A certificate that does not match is refused under verify-full.
    let wrong = format!(
        "{base}?sslmode=verify-full&sslrootcert={}&schema={schema}",
        d.join("other.crt").display()
    );
    let r = cli(&wrong, &["list"]);
    assert_ne!(r.code, Some(0), "{}", r.stdout);
    assert!(!r.stderr.contains("claimdag-test"));
}

#[test]
fn an_older_schema_is_migrated_by_the_library() {
    let url = pg::fresh_url();
    let schema = schema_of(&url);
    // A store of schema version 1, as the first release of this backend made it.
    let v1 = include_str!("older/0001_init.sql").replace("{schema}", &schema);
    psql(&v1);
    psql(&format!(
        "SELECT * FROM {schema}.commit(0, '{{\"nodes\": [{{\"id\": \"{}\", \"summary\": \"from v1\", \
         \"status\": \"todo\", \"generation\": 1, \"created_at\": 1, \"updated_at\": 1}}], \
         \"events\": [{{\"at\": 1, \"verb\": \"create\", \"node\": \"{}\", \"generation\": 1}}]}}')",
        "0".repeat(31) + "1",
        "0".repeat(31) + "1"
    ));
    assert_eq!(psql(&format!("SELECT version FROM {schema}.store")), "1");
    let listed = cli(&url, &["list"]).ok().to_string();
    assert!(listed.contains("from v1"), "{listed}");
    assert_eq!(
        psql(&format!("SELECT version FROM {schema}.store")),
        super::spaces::latest()
    );
    // Written before the time rules: no not_before, the backoff settings at their defaults;
    // before the conversation: no progress, cancel request or output, in the node or the log.
    let old = cli(&url, &["--json", "show", &("0".repeat(31) + "1")])
        .ok()
        .to_string();
    let old: serde_json::Value = serde_json::from_str(&old).unwrap();
    for field in [
        "not_before",
        "progress",
        "progress_at",
        "cancel_requested",
        "output",
    ] {
        assert_eq!(old[field], serde_json::Value::Null, "{field}: {old}");
    }
    assert_eq!(old["display"], "ready", "{old}");
    let log = cli(&url, &["--json", "log"]).ok().to_string();
    let log: serde_json::Value = serde_json::from_str(&log).unwrap();
    assert_eq!(log[0]["verb"], "create", "{log}");
    assert!(log[0].get("output").is_none(), "{log}");
    let cfg = cli(&url, &["--json", "config"]).ok().to_string();
    let cfg: serde_json::Value = serde_json::from_str(&cfg).unwrap();
    assert_eq!(
        (
            cfg["retry_delay_ms"].as_u64(),
            cfg["retry_delay_max_ms"].as_u64()
        ),
        (Some(0), Some(3_600_000))
    );
    cli(&url, &["upsert", "--summary", "after the migration"]).ok();
    // The old node takes an output, which the migrated history records.
    let id = "0".repeat(31) + "1";
    let g = cli(&url, &["claim", &id, "--assignee", "name:w"])
        .ok()
        .to_string();
    let g = g.trim().trim_start_matches("gen=").to_string();
    let out = r#"{"z":1,"a":2}"#;
    let args = [
        "complete", &id, "--status", "done", "--gen", &g, "--output", out,
    ];
    cli(&url, &args).ok();
    let log = cli(&url, &["log", &id]).ok().to_string();
    assert!(log.contains(r#"output={"z":1,"a":2}"#), "{log}");
    assert!(cli(&url, &["check"]).ok().starts_with("ok: 2 live nodes"));
}

#[test]
fn the_pane_and_work_run_on_postgres() {
    let url = pg::fresh_url();
    let a = cli(&url, &["upsert", "--summary", "on the database"])
        .ok()
        .trim()
        .to_string();
    cli(
        &url,
        &["claim", &a, "--assignee", "name:lead", "--ttl", "10m"],
    )
    .ok();
    let frame = cli(&url, &["pane", "--dump", "--actor", "name:lead"])
        .ok()
        .to_string();
    let row = frame
        .lines()
        .find(|l| l.contains(&a[..8]) && l.contains(" g2"))
        .unwrap_or_else(|| panic!("{frame}"));
    assert!(
        row.contains("claimed") && row.contains(" me ") && row.contains("m"),
        "{row}"
    );
    // A worker on the database: the command sees the store as it was given.
    let b = cli(&url, &["upsert", "--summary", "worked on the database"])
        .ok()
        .trim()
        .to_string();
    let script = r#"test "$CLAIMDAG_DIR" = "$WANT" && exec claimdag_bin --dir "$CLAIMDAG_DIR" show "$CLAIMDAG_NODE" >/dev/null"#;
    let script = script.replace("claimdag_bin", crate::common::bin());
    let mut c = crate::common::command();
    c.arg("--dir").arg(&url).args([
        "work",
        "--actor",
        "name:w",
        "--no-wait",
        "--",
        "sh",
        "-c",
        &script,
    ]);
    c.env("WANT", &url);
    let r = crate::common::run_bounded(c, "work on postgres");
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(cli(&url, &["--json", "show", &b]).json()["status"], "done");
}

#[test]
fn reserved_words_serve_as_schema_names() {
    for word in ["user", "order", "end", "default", "table"] {
        let url = format!("{}&schema={word}", pg::url());
        let url = if pg::url().contains('?') {
            url
        } else {
            url.replacen('&', "?", 1)
        };
        let a = cli(&url, &["upsert", "--summary", &format!("in schema {word}")])
            .ok()
            .trim()
            .to_string();
        cli(&url, &["claim", &a, "--assignee", &actor(1)]).ok();
        assert!(cli(&url, &["list"]).ok().contains("claimed"));
        assert!(
            cli(&url, &["--json", "log"])
                .json()
                .as_array()
                .unwrap()
                .len()
                == 2
        );
        assert!(cli(&url, &["check"]).ok().starts_with("ok: 1 live nodes"));
        assert_eq!(psql(&format!("SELECT count(*) FROM \"{word}\".nodes")), "1");
        psql(&format!("DROP SCHEMA \"{word}\" CASCADE"));
    }
}
