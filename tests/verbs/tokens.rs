//! Actors' tokens (SPEC 13, "Credentials"): `actor token` prints a token once and the store
//! keeps only its hash; `actor revoke` ends tokens at once; `actor list` shows them without
//! a secret; bad input is refused naming what was wrong, and changes nothing. What a token
//! may do at `serve` is tests/python/test_serve_tokens.py's.

use crate::common::Store;
use std::collections::BTreeMap;

fn files_text(s: &Store) -> String {
    let files: BTreeMap<String, Vec<u8>> = s.files();
    files
        .values()
        .map(|b| String::from_utf8_lossy(b).into_owned())
        .collect()
}

#[test]
fn a_token_is_printed_once_and_kept_as_a_hash() {
    let s = Store::new();
    let token = s.ok_ws("app", &["actor", "token", "codex-1", "--expires", "30d"]);
    let token = token.trim();
    let (id, secret) = token
        .strip_prefix("cdt_")
        .and_then(|t| t.split_once('_'))
        .unwrap_or_else(|| panic!("not a token: {token:?}"));
    assert_eq!((id.len(), secret.len()), (16, 64));
    let kept = files_text(&s);
    assert!(kept.contains(id), "the store keeps the token's id");
    assert!(!kept.contains(secret), "the store never keeps the secret");
    let listed = s.ok(&["actor", "list"]);
    assert!(
        listed.starts_with("552f6ade14af3feeda57b7b50edcc109  name:codex-1\n"),
        "{listed}"
    );
    assert!(
        listed.contains(&format!(
            "  token {id}  workspace=\"app\"  profile=worker  live  expires="
        )),
        "{listed}"
    );
    let json = s.json(&["actor", "list"]);
    let t = &json[0]["tokens"][0];
    assert_eq!((&t["id"], &t["state"]), (&id.into(), &"live".into()));
    assert!(!json.to_string().contains(secret));
    assert!(!s.ok(&["log"]).contains(secret));
}

#[test]
fn revoke_ends_one_token_or_every_token_of_an_actor() {
    let s = Store::new();
    let first = s.json(&["actor", "token", "codex-1"]);
    s.ok(&["actor", "token", "codex-1", "--profile", "all"]);
    s.ok(&["actor", "token", "claude-2"]);
    let id = first["id"].as_str().unwrap().to_string();
    let ended = s.json(&["actor", "revoke", &id]);
    assert_eq!(ended[0]["id"], first["id"]);
    assert_eq!(ended[0]["state"], "revoked");
    let ended = s.json(&["actor", "revoke", "name:codex-1"]);
    assert_eq!(
        ended.as_array().map(Vec::len),
        Some(1),
        "the one still live"
    );
    let states: Vec<String> = s
        .json(&["actor", "list"])
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|a| a["tokens"].as_array().cloned().unwrap_or_default())
        .map(|t| {
            format!(
                "{}:{}",
                t["name"].as_str().unwrap(),
                t["state"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        states,
        ["codex-1:revoked", "codex-1:revoked", "claude-2:live"]
    );
    let before = s.files();
    s.refused(
        &["actor", "revoke", "codex-1"],
        3,
        "live token of actor 552f6ade14af3feeda57b7b50edcc109 not found",
        "not_found",
    );
    assert_eq!(s.files(), before, "a refused revoke changes nothing");
}

#[test]
fn bad_input_is_refused_naming_what_was_wrong() {
    let s = Store::new();
    s.ok(&["actor", "token", "codex-1"]);
    let before = s.files();
    for (args, says) in [
        (&["actor", "token", "two words"][..], "1-64 characters"),
        (
            &["actor", "token", "codex-1", "--expires", "0s"],
            "must act for some time",
        ),
        (&["actor", "token", "codex-1", "--expires", "soon"], "soon"),
        (&["actor", "revoke", "two words"], "1-64 characters"),
        (
            &["actor", "token", "fresh-name", "--expires", "0s"],
            "must act for some time",
        ),
    ] {
        s.refused(args, 2, says, "invalid_input");
    }
    let r = s.run(&["actor", "token", "codex-1", "--profile", "boss"]);
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(r.stderr.contains("boss"), "{}", r.stderr);
    assert_eq!(s.files(), before, "a refused call changes nothing");
}

#[test]
fn copy_carries_the_tokens() {
    let s = Store::new();
    s.ok(&["actor", "token", "codex-1"]);
    s.upsert("parse the manifest header", &[]);
    let copied = crate::actor_names::listed_in_a_copy(&s);
    assert!(copied.contains("  token "), "{copied}");
    assert_eq!(copied, s.ok(&["actor", "list"]));
}
