//! Files written from the verbs' declarations, compared with what is checked in: the
//! Python `Verb` literal (`python/claimdag/types.py`). With `CLAIMDAG_BLESS=1` (`make
//! generate`) the test rewrites them instead.

use std::path::Path;

const BEGIN: &str = "\nVerb = Literal[\n";

/// The `Verb` literal's body: each verb, and its CLI spelling when that differs.
fn verb_literal() -> String {
    let mut out = String::new();
    for name in claimdag::verbs::NAMES {
        out.push_str(&format!("    \"{name}\",\n"));
        if name.contains('_') {
            out.push_str(&format!("    \"{}\",\n", name.replace('_', "-")));
        }
    }
    out
}

#[test]
fn the_python_verb_literal_is_the_verbs_declared() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("python/claimdag/types.py");
    let text = std::fs::read_to_string(&path).unwrap();
    let start = text.find(BEGIN).expect("types.py has a Verb literal") + BEGIN.len();
    let end = start + text[start..].find("]\n").expect("the literal ends");
    let want = verb_literal();
    if text[start..end] == want {
        return;
    }
    if std::env::var("CLAIMDAG_BLESS").is_ok_and(|v| v == "1") {
        let new = format!("{}{want}{}", &text[..start], &text[end..]);
        std::fs::write(&path, new).unwrap();
        return;
    }
    panic!(
        "python/claimdag/types.py's Verb literal is not the verbs declared:\n--- in the file\n{}\
         --- declared\n{want}\nRegenerate it with: make generate",
        &text[start..end]
    );
}
