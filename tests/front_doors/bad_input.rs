//! Bad input through the real binary, beyond what errors.rs covers: summaries at and
//! past the 4096-byte limit in multi-byte text, Unicode whitespace, NUL and newlines (through
//! `import`, since argv cannot carry NUL), invalid UTF-8 in argv, ids and actors of the wrong
//! length or alphabet, generations of 0, 2^64-1 and beyond, lease lengths that overflow or
//! are absurd, and plans with 10,000-deep chains and 100,000 nodes. Each gets the exit code
//! and error code of SPEC section 4, and a refused call leaves every store file byte for
//! byte as it was.

use crate::common::{self, actor, assert_files_eq, Run, Store};
use serde_json::{json, Value};
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

const MAX: &str = "18446744073709551615";
const BEYOND: &str = "18446744073709551616";

/// A store with a todo node, a claimed node (gen 2, held by actor 7) and a done node (gen 2).
fn store() -> (Store, [String; 3]) {
    let s = Store::new();
    let todo = s.upsert("todo node", &[]);
    let held = s.upsert("claimed node", &[]);
    s.claim(&held, &actor(7), &[]);
    let done = s.upsert("done node", &[]);
    s.claim(&done, &actor(8), &[]);
    s.ok(&["complete", &done, "--status", "done", "--gen", "2"]);
    (s, [todo, held, done])
}

/// Runs with raw (possibly non-UTF-8) arguments and asserts a usage error: exit 2, a clap
/// message, no panic, nothing on stdout, the files unchanged.
fn usage_error(s: &Store, args: &[&[u8]], what: &str) {
    let before = s.files();
    for json in [false, true] {
        let mut c = s.command(&[]);
        if json {
            c.arg("--json");
        }
        c.args(args.iter().map(|a| OsStr::from_bytes(a)));
        let r = Run::from_output(vec![what.to_string()], c.output().expect("run"));
        assert_eq!(r.code, Some(2), "{what}: {}", r.stderr);
        assert!(r.stderr.starts_with("error: "), "{what}: {}", r.stderr);
        assert!(!r.stderr.contains("panicked"), "{what}: {}", r.stderr);
        assert_eq!(r.stdout, "", "{what}");
    }
    assert_files_eq(&before, &s.files(), what);
}

/// Writes `plan` to a file beside the store and returns its path.
fn plan_file(s: &Store, name: &str, plan: &Value) -> String {
    let p = s.scratch().join(name);
    std::fs::write(&p, serde_json::to_vec(plan).expect("json")).expect("write plan");
    p.to_string_lossy().into_owned()
}

#[test]
fn summaries_at_and_past_the_limit_in_multi_byte_text() {
    let (s, _) = store();
    // 2048 two-byte characters and one more byte: 4097 bytes, 2049 characters.
    let over = format!("{}x", "é".repeat(2048));
    assert_eq!(over.len(), 4097);
    s.refused(
        &["upsert", "--summary", &over],
        2,
        "4097 bytes",
        "invalid_input",
    );
    // A four-byte character that would cross the limit.
    let crossing = format!("{}😀", "x".repeat(4093));
    assert_eq!(crossing.len(), 4097);
    s.refused(
        &["upsert", "--summary", &crossing],
        2,
        "summary",
        "invalid_input",
    );
    // Exactly 4096 bytes of multi-byte text is accepted and stored whole.
    let exact = "é".repeat(2048);
    let id = s.upsert(&exact, &[]);
    assert_eq!(s.node(&id)["summary"], exact.as_str());
    // Surrounding whitespace does not count: it is trimmed before the limit applies.
    let padded = format!(" \t\n{}\n\u{3000} ", "y".repeat(4096));
    let id = s.upsert(&padded, &[]);
    assert_eq!(s.node(&id)["summary"], "y".repeat(4096).as_str());
    // Only Unicode whitespace is empty.
    for blank in ["\u{a0}", "\u{2003}\u{3000}", "\u{85}\u{2028}\u{2029}"] {
        s.refused(&["upsert", "--summary", blank], 2, "empty", "invalid_input");
    }
}

#[test]
fn nul_empty_long_and_blank_summaries_in_a_plan_refuse_the_whole_plan() {
    let (s, [todo, ..]) = store();
    let good = json!({"key": "good", "summary": "a good node"});
    for (bad, phrase) in [
        (
            json!({"key": "nul", "summary": "before\u{0000}after"}),
            "NUL",
        ),
        (json!({"key": "empty", "summary": ""}), "empty"),
        (
            json!({"key": "blank", "summary": " \n\t\u{3000} "}),
            "empty",
        ),
        (json!({"key": "long", "summary": "z".repeat(4097)}), "4097"),
        (
            json!({"key": "label", "summary": "s", "labels": ["a\u{0000}b"]}),
            "NUL",
        ),
        (
            json!({"key": "ref", "summary": "s", "ref": "T-1\u{0000}"}),
            "NUL",
        ),
        (json!({"key": "", "summary": "no key"}), "key"),
        (
            json!({"key": "dep", "summary": "s", "deps": ["nowhere"]}),
            "nowhere",
        ),
    ] {
        let key = bad["key"].as_str().unwrap_or_default().to_string();
        let plan = json!({"nodes": [good.clone(), bad]});
        let file = plan_file(&s, "bad.json", &plan);
        let code = if phrase == "nowhere" {
            (3, "not_found")
        } else {
            (2, "invalid_input")
        };
        let e = s.refused(&["import", &file], code.0, phrase, code.1);
        if !key.is_empty() {
            assert!(
                e["message"].as_str().unwrap_or_default().contains(&key),
                "the message names the key {key:?}: {e}"
            );
        }
        assert!(
            !s.ok(&["list"]).contains("a good node"),
            "a refused plan left its good node"
        );
    }
    // A node with a newline in its summary is accepted and lists on one line.
    let plan = json!({"nodes": [{"key": "nl", "summary": "line one\nline two\r\nline three", "deps": [todo]}]});
    let file = plan_file(&s, "newline.json", &plan);
    let out = s.ok(&["import", &file]);
    let id = out.split_whitespace().next().expect("id").to_string();
    assert_eq!(
        s.node(&id)["summary"],
        "line one\nline two\r\nline three",
        "the newlines are kept"
    );
    let list = s.ok(&["list"]);
    let lines: Vec<&str> = list.lines().filter(|l| l.starts_with(&id[..8])).collect();
    assert_eq!(lines.len(), 1, "{list:?}");
    assert_eq!(list.lines().count(), 3, "{list:?}");
}

#[test]
fn invalid_utf8_in_argv_is_a_usage_error() {
    let (s, [todo, ..]) = store();
    let me = actor(7);
    let bad: &[u8] = b"caf\xe9 \xff\xfe";
    let cases: Vec<(&str, Vec<&[u8]>)> = vec![
        ("verb", vec![bad]),
        ("summary", vec![b"upsert", b"--summary", bad]),
        ("kind", vec![b"upsert", b"--summary", b"s", b"--kind", bad]),
        (
            "label",
            vec![b"upsert", b"--summary", b"s", b"--label", bad],
        ),
        ("node", vec![b"show", bad]),
        (
            "assignee",
            vec![b"claim", todo.as_bytes(), b"--assignee", bad],
        ),
        (
            "ttl",
            vec![
                b"claim",
                todo.as_bytes(),
                b"--assignee",
                me.as_bytes(),
                b"--ttl",
                bad,
            ],
        ),
        ("workspace", vec![b"--workspace", bad, b"list"]),
        (
            "status",
            vec![
                b"complete",
                todo.as_bytes(),
                b"--status",
                bad,
                b"--gen",
                b"1",
            ],
        ),
        ("config", vec![b"config", b"max_held", bad]),
        ("plan file", vec![b"import", bad]),
    ];
    for (what, args) in cases {
        usage_error(&s, &args, what);
    }
}

#[test]
fn a_store_path_that_is_not_utf8_is_a_path_like_any_other() {
    let s = Store::new();
    let dir = s.scratch().join(OsStr::from_bytes(b"store-\xff\xfe"));
    let run = |args: &[&str]| {
        let mut c = common::command();
        c.arg("--dir").arg(&dir).args(args);
        Run::from_output(
            args.iter().map(|a| a.to_string()).collect(),
            c.output().expect("run"),
        )
    };
    let r = run(&["upsert", "--summary", "in a non-UTF-8 directory"]);
    let id = r.ok().trim().to_string();
    assert!(run(&["list"]).ok().contains(&id[..8]));
    assert!(run(&["check"]).ok().starts_with("ok"));
    // An error naming the path shows it (lossily) and is still a clean io error.
    std::fs::remove_dir_all(&dir).expect("remove");
    std::fs::write(&dir, b"a file").expect("write");
    let r = run(&["list"]);
    assert_eq!(r.code, Some(7), "{}", r.stderr);
    assert!(r.stderr.contains("store-"), "{}", r.stderr);
    let r = run(&["--json", "list"]);
    assert_eq!(r.code, Some(7), "{}", r.stderr);
    assert_eq!(r.error_json()["code"], "io");
}

#[test]
fn ids_and_actors_of_the_wrong_length_or_alphabet_are_invalid_input() {
    let (s, [todo, held, _]) = store();
    let me = actor(9);
    let sixteen_e = "é".repeat(16); // 32 bytes, 16 characters
    let bad_ids: Vec<String> = vec![
        todo[..7].to_string(),
        format!("{todo}0"),
        format!("{}g", &todo[..31]),
        format!("0x{}", &todo[..30]),
        sixteen_e.clone(),
        format!("{} ", &todo[..16]) + &todo[17..],
        "...".to_string(),
        String::new(),
        "_".repeat(32),
    ];
    for bad in &bad_ids {
        s.refused(&["show", bad], 2, "node", "invalid_input");
        s.refused(
            &["claim", bad, "--assignee", &me],
            2,
            "node",
            "invalid_input",
        );
        s.refused(&["link", &todo, bad], 2, "node", "invalid_input");
        s.refused(
            &["upsert", "--summary", "child", "--parent", bad],
            2,
            "node",
            "invalid_input",
        );
    }
    let bad_actors: Vec<String> = vec![
        me[..31].to_string(),
        format!("{me}0"),
        format!("{}G", &me[..31]),
        sixteen_e,
        format!("{} {}", &me[..16], &me[17..]),
        String::new(),
    ];
    for bad in &bad_actors {
        s.refused(
            &["claim", &todo, "--assignee", bad],
            2,
            "assignee",
            "invalid_input",
        );
        s.refused(
            &["renew", &held, "--actor", bad],
            2,
            "actor",
            "invalid_input",
        );
        s.refused(
            &["release", &held, "--actor", bad, "--gen", "2"],
            2,
            "actor",
            "invalid_input",
        );
        s.refused(&["list", "--holder", bad], 2, "holder", "invalid_input");
    }
    // A prefix that matches nothing is not found; upper case ids and actors are accepted and
    // stored lower case.
    s.refused(&["show", "abcdef0123"], 3, "not found", "not_found");
    let upper_actor = actor(0xabc).to_uppercase();
    let g = s.claim(&todo.to_uppercase(), &upper_actor, &[]);
    assert_eq!(g, 2);
    assert_eq!(s.node(&todo)["holder"], actor(0xabc).as_str());
}

#[test]
fn generations_of_zero_are_invalid_and_of_u64_max_are_stale() {
    let (s, [todo, held, done]) = store();
    let me = actor(7);
    generation_zero_is_invalid(&s, [&todo, &held, &done], &me);
    generation_u64_max_is_stale(&s, [&todo, &held, &done], &me);
    generations_past_u64_are_usage_errors(&s, &held, &me);
    // Nothing moved.
    assert_eq!(s.node(&held)["generation"], 2);
    assert_eq!(s.node(&held)["status"], "claimed");
    assert_eq!(s.node(&todo)["generation"], 1);
}

/// Generation 0 does not exist: every fenced verb refuses it as `invalid_input`, on the
/// todo, held and done nodes of [`store`].
fn generation_zero_is_invalid(s: &Store, [todo, held, done]: [&str; 3], me: &str) {
    for args in [
        vec!["claim", todo, "--assignee", me, "--gen", "0"],
        vec!["renew", held, "--actor", me, "--gen", "0"],
        vec!["release", held, "--actor", me, "--gen", "0"],
        vec!["complete", held, "--status", "done", "--gen", "0"],
        vec!["complete", todo, "--status", "cancelled", "--gen", "0"],
        vec!["reopen", done, "--gen", "0"],
    ] {
        s.refused(&args, 2, "generation 0", "invalid_input");
    }
}

/// 2^64-1 is a number: a generation nobody holds, so it is not the node's current one,
/// which is stale_generation before any other refusal (claimed, todo or finished).
fn generation_u64_max_is_stale(s: &Store, [todo, held, done]: [&str; 3], me: &str) {
    for args in [
        vec!["claim", todo, "--assignee", me, "--gen", MAX],
        vec!["renew", held, "--actor", me, "--gen", MAX],
        vec!["release", held, "--actor", me, "--gen", MAX],
        vec!["complete", held, "--status", "done", "--gen", MAX],
        vec!["renew", todo, "--actor", me, "--gen", MAX],
        vec!["release", todo, "--actor", me, "--gen", MAX],
        vec!["complete", todo, "--status", "done", "--gen", MAX],
        vec!["complete", todo, "--status", "cancelled", "--gen", MAX],
        vec!["reopen", done, "--gen", MAX],
    ] {
        let e = s.refused(&args, 5, "stale generation", "stale_generation");
        assert!(
            e["message"].as_str().unwrap_or_default().contains(MAX),
            "{e}"
        );
    }
}

/// Beyond 2^64-1, and negative, is not a number the command line takes.
fn generations_past_u64_are_usage_errors(s: &Store, held: &str, me: &str) {
    for gen in [BEYOND, "99999999999999999999999", "-1", "1.0", "0x2", ""] {
        let g = format!("--gen={gen}");
        usage_error(
            s,
            &[
                b"release",
                held.as_bytes(),
                b"--actor",
                me.as_bytes(),
                g.as_bytes(),
            ],
            &format!("--gen {gen}"),
        );
        usage_error(
            s,
            &[
                b"complete",
                held.as_bytes(),
                b"--status",
                b"done",
                g.as_bytes(),
            ],
            &format!("complete --gen {gen}"),
        );
    }
}

#[test]
fn lease_lengths_that_overflow_or_are_absurd_are_refused() {
    let (s, [todo, held, done]) = store();
    let me = actor(7);
    leases_past_the_clock_are_refused(&s, &todo, &held, &me);
    malformed_leases_are_refused(&s, &todo, &me);
    the_longest_leases_move_nothing(&s);
    assert_eq!(s.node(&held)["status"], "claimed");
    assert_eq!(s.node(&done)["archived"], false);
}

/// Leases whose end does not fit in 64 bits of milliseconds: `overflows` once the clock is
/// added, `too large` on their own.
fn leases_past_the_clock_are_refused(s: &Store, todo: &str, held: &str, me: &str) {
    // now + ttl overflows: 213503982334 days is 18446744073657600000 ms, less than 2^64 but
    // not once the clock is added. One unit more does not fit in 64 bits at all.
    let overflow = ["213503982334d", "18446744073709551615ms", "5124095576030h"];
    let too_long = ["213503982335d", "5124095576031h", "307445734561826m"];
    for ttl in overflow {
        for args in [
            vec!["claim", todo, "--assignee", me, "--ttl", ttl],
            vec!["claim-next", "--assignee", me, "--ttl", ttl],
            vec!["renew", held, "--actor", me, "--ttl", ttl],
            vec!["config", "default_ttl", ttl],
        ] {
            s.refused(&args, 2, "overflows", "invalid_input");
        }
    }
    for ttl in too_long {
        for args in [
            vec!["claim", todo, "--assignee", me, "--ttl", ttl],
            vec!["renew", held, "--actor", me, "--ttl", ttl],
            vec!["reclaim", "--lease", ttl],
            vec!["archive", "--older-than", ttl],
            vec!["config", "default_ttl", ttl],
        ] {
            s.refused(&args, 2, "too large", "invalid_input");
        }
    }
}

/// Durations that are not lease lengths: zero, malformed, or a number too large for the
/// clock; and a negative one, which the command line takes for an option.
fn malformed_leases_are_refused(s: &Store, todo: &str, me: &str) {
    for ttl in [
        "0",
        "0ms",
        "0d",
        "5 s",
        "+5s",
        "1e3",
        "1.5m",
        "١٢s",
        "5sec",
        "s",
        "18446744073709551616ms",
        "99999999999999999999999d",
        "99999999999999999999",
        "5S",
        "",
    ] {
        let arg = format!("--ttl={ttl}");
        let message = s.refused(
            &["claim", todo, "--assignee", me, &arg],
            2,
            if ttl.starts_with('0') {
                "longer than 0"
            } else {
                "duration"
            },
            "invalid_input",
        );
        // A number too large for the clock is "too large", not a malformed duration.
        if ttl.starts_with("999") || ttl.starts_with("1844") {
            let m = message["message"].as_str().unwrap_or_default();
            assert!(
                m.contains("too large") && !m.contains("bad duration"),
                "{ttl}: {m}"
            );
        }
    }
    // A negative number is an option the command line does not know.
    usage_error(
        s,
        &[
            b"claim",
            todo.as_bytes(),
            b"--assignee",
            me.as_bytes(),
            b"--ttl",
            b"-5s",
        ],
        "--ttl -5s",
    );
}

/// The longest lease a quiet claim can be held to: nothing is that quiet, nothing moves.
fn the_longest_leases_move_nothing(s: &Store) {
    let before = s.files();
    let r = s.run(&["reclaim", "--lease", "213503982334d"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(r.stdout, "");
    let r = s.run(&["archive", "--older-than", "213503982334d"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(r.stdout, "archived 0\n");
    assert_files_eq(
        &before,
        &s.files(),
        "reclaim and archive with the longest durations",
    );
}

/// A plan of `n` nodes, node i naming node i-1 through `link` ("deps" or "parent").
fn chain(n: usize, link: &str, tag: &str) -> Value {
    let nodes: Vec<Value> = (0..n)
        .map(|i| {
            let mut v = json!({"key": format!("k{i}"), "summary": format!("{tag} {i}")});
            if i > 0 {
                v[link] = if link == "deps" {
                    json!([format!("k{}", i - 1)])
                } else {
                    json!(format!("k{}", i - 1))
                };
            }
            v
        })
        .collect();
    json!({ "nodes": nodes })
}

/// Imports `plan`, then imports it again and asserts the second import changed no file.
fn import_twice(s: &Store, file: &str, n: usize) -> Vec<String> {
    let out = s.ok(&["import", file]);
    let ids: Vec<String> = out
        .lines()
        .map(|l| l.split_whitespace().next().expect("id").to_string())
        .collect();
    assert_eq!(ids.len(), n, "one line a node");
    let report = s.ok(&["check"]);
    assert!(report.starts_with("ok"), "{report}");
    assert!(report.contains(&format!("{n} live nodes")), "{report}");
    let before = s.files();
    assert_eq!(
        s.ok(&["import", file]),
        out,
        "a second import prints the same"
    );
    assert_files_eq(&before, &s.files(), "a second import of the same plan");
    ids
}

#[test]
fn plans_with_10000_deep_chains_of_deps_and_of_parents() {
    const DEEP: usize = 10_000;
    // Dependencies: only the head is ready, and its critical path is the whole chain.
    let s = Store::new();
    let file = plan_file(&s, "deps.json", &chain(DEEP, "deps", "dep"));
    let ids = import_twice(&s, &file, DEEP);
    let ready = s.json(&["ready"]);
    let ready = ready.as_array().expect("ready array");
    assert_eq!(ready.len(), 1, "only the head of the chain is ready");
    assert_eq!(ready[0]["id"], ids[0].as_str());
    assert_eq!(ready[0]["critical"], DEEP as u64);
    assert_eq!(s.node(&ids[DEEP - 1])["display"], "todo");
    // Closing the chain into a cycle refuses the whole plan and leaves every file as it was.
    let mut cyclic = chain(DEEP, "deps", "dep");
    cyclic["nodes"][0]["deps"] = json!([format!("k{}", DEEP - 1)]);
    let file = plan_file(&s, "cycle.json", &cyclic);
    s.refused(&["import", &file], 2, "cycle", "cycle");

    // Parents: ids depend on the parent's id, so a 10,000-deep hierarchy is minted in order,
    // whichever order the plan lists it in.
    let s = Store::new();
    let file = plan_file(&s, "parents.json", &chain(DEEP, "parent", "part"));
    let ids = import_twice(&s, &file, DEEP);
    assert_eq!(s.node(&ids[DEEP - 1])["parent"], ids[DEEP - 2].as_str());
    let mut reversed = chain(DEEP, "parent", "part");
    reversed["nodes"].as_array_mut().expect("nodes").reverse();
    let file = plan_file(&s, "reversed.json", &reversed);
    let before = s.files();
    let out = s.ok(&["import", &file]);
    assert_files_eq(&before, &s.files(), "the same hierarchy listed backwards");
    assert_eq!(
        out.lines().last().and_then(|l| l.split_whitespace().next()),
        Some(ids[0].as_str())
    );
    // Parents that loop are refused whole.
    let mut looped = chain(DEEP, "parent", "loop");
    looped["nodes"][0]["parent"] = json!(format!("k{}", DEEP - 1));
    let file = plan_file(&s, "loop.json", &looped);
    s.refused(&["import", &file], 2, "loop", "invalid_input");
}

#[test]
fn plans_of_100000_nodes_are_taken_whole_or_refused_whole() {
    const MANY: usize = 100_000;
    let plan = |bad_last: bool| {
        let mut nodes: Vec<Value> = (0..MANY)
            .map(|i| json!({"key": format!("n{i}"), "summary": format!("node {i}")}))
            .collect();
        if bad_last {
            nodes[MANY - 1]["kind"] = json!("Not A Kind");
        }
        json!({ "nodes": nodes })
    };
    let (s, _) = store();
    // One bad node at the very end refuses all of them.
    let file = plan_file(&s, "bad.json", &plan(true));
    let e = s.refused(&["import", &file], 2, "kind", "invalid_input");
    assert!(
        e["message"].as_str().unwrap_or_default().contains("n99999"),
        "{e}"
    );
    // A good one is one write; importing it again writes nothing.
    let t = Store::new();
    let file = plan_file(&t, "good.json", &plan(false));
    import_twice(&t, &file, MANY);
}

#[test]
fn claimdag_actor_is_only_the_default_and_an_actor_is_taken_exactly_everywhere() {
    let s = Store::new();
    let a = s.upsert("for a worker that names itself", &[]);
    let b = s.upsert("for the refusals", &[]);
    let bad_env = [("CLAIMDAG_ACTOR", "not an actor")];
    // A command that names its actor does not read the variable.
    let r = s.run_env(&["--json", "claim-next", "--assignee", "name:ok"], &bad_env);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(r.json()["id"], a.as_str());
    let repo = s.scratch().join("repo");
    let git = std::process::Command::new("git")
        .args(["init", "-q"])
        .arg(&repo)
        .status()
        .expect("git");
    assert!(git.success());
    let repo = repo.to_str().unwrap();
    let r = s.run_env(
        &["diff-check", "--actor", "name:ok", "--repo", repo],
        &bad_env,
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    // One that names none takes it, and says what is wrong with it.
    s.refused_full(
        &["claim-next"],
        &bad_env,
        None,
        2,
        "$CLAIMDAG_ACTOR",
        "invalid_input",
    );
    // An actor is exactly 32 hex or name:NAME: nothing around it is trimmed, wherever it is
    // taken, as `claimdag actor` takes a name.
    let spaced = format!(" {}", actor(7));
    for bad in [
        "name:tab\t",
        " name:ok",
        "name:ok\n",
        "name:name:ok",
        &spaced,
    ] {
        s.refused(&["claim", &b, "--assignee", bad], 2, "", "invalid_input");
        s.refused_full(
            &["claim-next"],
            &[("CLAIMDAG_ACTOR", bad)],
            None,
            2,
            "",
            "invalid_input",
        );
    }
    for bad in [
        "name:tab\t",
        "tab\t",
        " name:ok",
        " ok",
        "ok\n",
        "name:name:ok",
    ] {
        s.refused(&["actor", bad], 2, "actor name", "invalid_input");
    }
    assert_eq!(s.node(&b)["status"], "todo");
}
