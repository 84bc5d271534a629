//! The shape of the code, as docs/architecture.md draws it, held by a test: the files of
//! each crate import one another without a circle, each layer of the core imports only the
//! layers below it, a backend never imports another backend or the store's facade, a front
//! door names only the store's facade, the verbs and the data below them (never a backend,
//! the rules, the state or the scheduler), no file is over 800 lines and no function over
//! 80.
//!
//! An import is a path that starts with `crate::` or `super::` naming an item of another
//! file, in code (comments are not read); every member of a `use` group counts, groups
//! nested in groups included, and an item the crate's root re-exports (`crate::Store`,
//! `crate::Request`) counts as the module it comes from. A child module naming its own
//! parent with `super::` is not counted: that is how a module's parts share its private
//! items (a backend naming the store's facade above it is counted).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers of the core, lowest first: a file imports only from its own layer or below.
/// The crate's root (lib.rs, main.rs) may name anything.
const LAYERS: &[&[&str]] = &[
    &["error", "id", "duration", "escape"],
    &["model"],
    &["schedule"],
    &["state"],
    &["rules"],
    &["view", "graph", "verify"],
    &["store"],
    &["verbs"],
    &["cli"],
];

/// The backends: each imports, of the rest of the store, only the Backend seam.
const BACKENDS: &[&str] = &["store::embedded", "store::postgres"];
const SEAM: &str = "store::backend";

/// The front doors (src/cli) go through the store's facade and the verb layer: of the
/// layers below them they name only these, each with what is below it (the backends and
/// the Backend seam excepted, see [`DOOR_MAY_NOT`]): the foundation, the model's data,
/// the read models that present it (a node as users see it, the graph's drawing), the
/// store's facade (`Store`, `Lease`, `ListFilter`, ...) and the verbs. Never the rules,
/// the state, the scheduler or `check`'s invariants: what a door needs of those it asks
/// the verbs or the store.
const DOOR: &str = "cli";
const DOOR_MAY_NAME: &[&str] = &[
    "error", "id", "duration", "escape", "model", "view", "graph", "store", "verbs", "cli",
];
/// Parts of the allowed layers a door still never names: the backends and their seam.
const DOOR_MAY_NOT: &[&str] = &["store::embedded", "store::postgres", SEAM];

const MAX_FILE_LINES: usize = 800;
const MAX_FN_LINES: usize = 80;

type Module = Vec<String>;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// The module a file holds: `src/store/embedded/mod.rs` is `store::embedded`.
fn module_of(src: &Path, file: &Path) -> Module {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut m: Module = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if m.last().is_some_and(|l| l == "mod") {
        m.pop();
    }
    m
}

/// The code of a file without its comments (line comments and doc comments).
fn code(text: &str) -> String {
    text.lines()
        .map(|l| match l.find("//") {
            Some(i) if !l[..i].contains('"') => &l[..i],
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn is_word(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Every path that starts with `crate::` or `super::`, as its segments (with the `super`s
/// kept); a group `crate::{a, b::c}` gives one path per member.
fn paths(code: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let bytes = code.as_bytes();
    for start in ["crate::", "super::"] {
        let mut from = 0;
        while let Some(i) = code[from..].find(start).map(|i| i + from) {
            from = i + start.len();
            if i > 0 && (is_word(bytes[i - 1] as char) || bytes[i - 1] == b':') {
                continue;
            }
            let head = start.trim_end_matches(':').to_string();
            out.extend(segments(&code[from..], vec![head]));
        }
    }
    out
}

/// The members of the group that `text` opens (after its `{`), up to the `}` that closes
/// it: split at the commas outside the groups nested in it.
fn members(text: &str) -> Vec<&str> {
    let (mut out, mut depth, mut start) = (Vec::new(), 0usize, 0);
    for (i, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                out.push(&text[start..i]);
                return out;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&text[start..]);
    out
}

/// The paths that continue `prefix` at the start of `rest`; a group gives one path per
/// member, groups nested in it included.
fn segments(rest: &str, mut prefix: Vec<String>) -> Vec<Vec<String>> {
    let mut rest = rest;
    loop {
        if let Some(group) = rest.strip_prefix('{') {
            return members(group)
                .into_iter()
                .map(str::trim)
                .filter(|m| !m.is_empty())
                .flat_map(|m| segments(m, prefix.clone()))
                .collect();
        }
        let word: String = rest.chars().take_while(|&c| is_word(c)).collect();
        if word.is_empty() {
            return vec![prefix];
        }
        rest = &rest[word.len()..];
        prefix.push(word);
        match rest.strip_prefix("::") {
            Some(r) => rest = r,
            None => return vec![prefix],
        }
    }
}

/// What the crate's root re-exports (`pub use store::{ListFilter, Store};` in lib.rs): each
/// name with the path it stands for.
type Reexports = BTreeMap<String, Vec<String>>;

fn reexports(root: &str) -> Reexports {
    let code = code(root);
    let mut out = Reexports::new();
    for (i, _) in code.match_indices("pub use ") {
        let item = &code[i + "pub use ".len()..];
        let item = &item[..item.find(';').unwrap_or(item.len())];
        for p in segments(item.trim(), Vec::new()) {
            if let Some(name) = p.last().filter(|n| n.as_str() != "self") {
                out.insert(name.clone(), p.clone());
            }
        }
    }
    out
}

/// The module a path names: the longest prefix that is a file of the crate, an item the
/// root re-exports (`crate::Store`) standing for the path it re-exports.
fn target(
    path: &[String],
    here: &Module,
    modules: &BTreeSet<Module>,
    roots: &Reexports,
) -> Option<(Module, bool)> {
    let mut base: Module = Vec::new();
    let mut rest = path;
    let mut up = false;
    if path[0] == "super" {
        base = here.clone();
        while rest.first().is_some_and(|s| s == "super") {
            base.pop();
            rest = &rest[1..];
            up = true;
        }
    } else {
        rest = &rest[1..];
        let first = rest
            .first()
            .filter(|f| !modules.contains(&vec![f.to_string()]));
        if let Some(via) = first.and_then(|f| roots.get(f)) {
            base = via.clone();
            rest = &rest[1..];
        }
    }
    let full: Module = base.iter().chain(rest).cloned().collect();
    (1..=full.len())
        .rev()
        .map(|k| full[..k].to_vec())
        .find(|m| modules.contains(m))
        .map(|m| (m, up))
}

/// The files of a crate and what each imports.
fn imports(src: &Path) -> BTreeMap<Module, BTreeSet<Module>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let files: Vec<(Module, String)> = files
        .iter()
        .map(|f| (module_of(src, f), std::fs::read_to_string(f).unwrap()))
        .collect();
    imports_of(&files)
}

/// What each file of a crate imports, the files given as their module and text.
fn imports_of(files: &[(Module, String)]) -> BTreeMap<Module, BTreeSet<Module>> {
    let modules: BTreeSet<Module> = files.iter().map(|(m, _)| m.clone()).collect();
    let root = files.iter().find(|(m, _)| m == &["lib"]);
    let roots = root.map(|(_, t)| reexports(t)).unwrap_or_default();
    let mut graph = BTreeMap::new();
    for (here, text) in files {
        let here = here.clone();
        let mut to = BTreeSet::new();
        for p in paths(&code(text)) {
            let Some((t, up)) = target(&p, &here, &modules, &roots) else {
                continue;
            };
            // A child naming its own parent with `super::` shares the parent's items; but
            // a backend never names the store's facade above it.
            let ancestor = t.len() < here.len() && here.starts_with(&t);
            let leaves_backend = BACKENDS.iter().any(|b| under(&here, b) && !under(&t, b));
            if t != here && !(up && ancestor && !leaves_backend) {
                to.insert(t);
            }
        }
        graph.insert(here, to);
    }
    graph
}

fn name(m: &Module) -> String {
    m.join("::")
}

/// The circles of the graph (its strongly connected components of more than one file).
fn circles(graph: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<Vec<String>> {
    // Reachability by a walk from each file: small graphs, simple code.
    let reach = |from: &Module| {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from.clone()];
        while let Some(m) = stack.pop() {
            for t in graph.get(&m).into_iter().flatten() {
                if seen.insert(t.clone()) {
                    stack.push(t.clone());
                }
            }
        }
        seen
    };
    let reaches: BTreeMap<&Module, BTreeSet<Module>> =
        graph.keys().map(|m| (m, reach(m))).collect();
    let mut out: BTreeSet<Vec<String>> = BTreeSet::new();
    for (m, r) in &reaches {
        if !r.contains(*m) {
            continue;
        }
        let mut circle: Vec<String> = r
            .iter()
            .filter(|t| reaches.get(t).is_some_and(|back| back.contains(*m)))
            .map(name)
            .collect();
        circle.sort();
        out.insert(circle);
    }
    out.into_iter().collect()
}

fn layer(m: &Module) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&m[0].as_str()))
}

fn under(m: &Module, prefix: &str) -> bool {
    let p: Vec<&str> = prefix.split("::").collect();
    m.len() >= p.len() && m.iter().zip(&p).all(|(a, b)| a == b)
}

/// Why a door may not name `t`, if it may not ([`DOOR_MAY_NAME`], [`DOOR_MAY_NOT`]).
fn door_may_not(t: &Module) -> Option<&'static str> {
    if DOOR_MAY_NOT.iter().any(|b| under(t, b)) {
        return Some("a door names a backend: doors go through the store's facade");
    }
    if !DOOR_MAY_NAME.contains(&t[0].as_str()) {
        return Some("a door names an inner layer: doors go through the verbs and the store");
    }
    None
}

/// Imports that point up the layers, from a backend to anything of the store but the seam
/// (and itself), or from a door to what it may not name.
fn back_arrows(graph: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<String> {
    let mut out = Vec::new();
    for (m, to) in graph {
        for t in to {
            if let Some(why) = door_may_not(t).filter(|_| under(m, DOOR)) {
                out.push(format!("{} -> {} ({why})", name(m), name(t)));
            }
            if let (Some(a), Some(b)) = (layer(m), layer(t)) {
                if b > a {
                    out.push(format!("{} -> {} (up the layers)", name(m), name(t)));
                }
            }
            if let Some(own) = BACKENDS.iter().find(|b| under(m, b)) {
                if under(t, "store") && !under(t, own) && !under(t, SEAM) {
                    out.push(format!(
                        "{} -> {} (a backend reaches past the Backend seam)",
                        name(m),
                        name(t)
                    ));
                }
            }
        }
    }
    out
}

const CRATES: &[&str] = &["src", "bindings/c/src", "bindings/python/src"];

#[test]
fn no_file_imports_in_a_circle() {
    let mut found = Vec::new();
    for dir in CRATES {
        for c in circles(&imports(&root().join(dir))) {
            found.push(format!("{dir}: {}", c.join(" <-> ")));
        }
    }
    assert!(found.is_empty(), "import circles:\n{}", found.join("\n"));
}

#[test]
fn imports_point_down_the_layers() {
    let found = back_arrows(&imports(&root().join("src")));
    assert!(
        found.is_empty(),
        "imports that point up:\n{}",
        found.join("\n")
    );
}

/// Every file of the core is in a layer, so a new one cannot escape the check.
#[test]
fn every_module_of_the_core_has_a_layer() {
    let graph = imports(&root().join("src"));
    let loose: Vec<String> = graph
        .keys()
        .filter(|m| !matches!(m[0].as_str(), "lib" | "main") && layer(m).is_none())
        .map(name)
        .collect();
    assert!(loose.is_empty(), "modules in no layer: {loose:?}");
}

/// Functions (`fn` to the brace that closes it at the same indentation) longer than `max`.
fn long_functions(file: &Path, max: usize) -> Vec<String> {
    let text = std::fs::read_to_string(file).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let t = l.trim_start();
        let indent = l.len() - t.len();
        let words: Vec<&str> = t.split_whitespace().collect();
        let Some(k) = words.iter().position(|w| *w == "fn") else {
            continue;
        };
        let qualifiers = [
            "pub",
            "pub(crate)",
            "pub(super)",
            "async",
            "unsafe",
            "const",
        ];
        let is_fn = words[..k]
            .iter()
            .all(|w| qualifiers.contains(w) || w.starts_with("extern") || w.starts_with('"'));
        let one_line = t.contains('{') && t.matches('{').count() == t.matches('}').count();
        if !is_fn || t.ends_with(';') || one_line {
            continue;
        }
        let close = format!("{}}}", " ".repeat(indent));
        if let Some(end) = lines[i..]
            .iter()
            .position(|e| e.starts_with(&close) && e.trim() == "}")
        {
            if end + 1 > max {
                let fname = words.get(k + 1).unwrap_or(&"?");
                out.push(format!(
                    "{}:{}: fn {} is {} lines",
                    file.strip_prefix(root()).unwrap_or(file).display(),
                    i + 1,
                    fname,
                    end + 1
                ));
            }
        }
    }
    out
}

/// Where functions are held to [`MAX_FN_LINES`]: the code, and the tests' shared helpers
/// and long-running checks. Files anywhere are held to [`MAX_FILE_LINES`].
const SHORT_FUNCTIONS: &[&str] = &[
    "src",
    "bindings",
    "tests/common",
    "tests/store_files/torture",
];

#[test]
fn no_file_over_800_lines_and_no_function_over_80() {
    let mut files = Vec::new();
    for dir in ["src", "bindings", "tests"] {
        rust_files(&root().join(dir), &mut files);
    }
    let mut found = Vec::new();
    for f in &files {
        let lines = std::fs::read_to_string(f).unwrap().lines().count();
        let rel = f.strip_prefix(root()).unwrap();
        if lines > MAX_FILE_LINES {
            found.push(format!("{}: {lines} lines", rel.display()));
        }
        if SHORT_FUNCTIONS
            .iter()
            .any(|d| rel.starts_with(d) || rel.to_string_lossy().starts_with(d))
        {
            found.extend(long_functions(f, MAX_FN_LINES));
        }
    }
    assert!(found.is_empty(), "too long:\n{}", found.join("\n"));
}

/// The checks themselves: a planted back-arrow and a planted circle are found.
#[test]
fn the_checks_find_what_they_look_for() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    std::fs::create_dir_all(src.join("store")).unwrap();
    std::fs::write(src.join("model.rs"), "use crate::rules::Tx;\n").unwrap();
    std::fs::write(src.join("rules.rs"), "use crate::{model::Node, id::Id};\n").unwrap();
    std::fs::write(src.join("id.rs"), "// crate::model::Node in a comment\n").unwrap();
    std::fs::write(src.join("store/mod.rs"), "mod embedded;\n").unwrap();
    std::fs::write(src.join("store/query.rs"), "").unwrap();
    std::fs::write(
        src.join("store/embedded.rs"),
        "use super::query::f;\nuse super::Store;\n",
    )
    .unwrap();
    let graph = imports(src);
    assert_eq!(
        circles(&graph),
        vec![vec!["model".to_string(), "rules".to_string()]]
    );
    let arrows = back_arrows(&graph);
    assert!(
        arrows.iter().any(|a| a.starts_with("model -> rules")),
        "{arrows:?}"
    );
    assert!(
        arrows
            .iter()
            .any(|a| a.starts_with("store::embedded -> store::query")),
        "{arrows:?}"
    );
    assert!(
        arrows
            .iter()
            .any(|a| a == "store::embedded -> store (a backend reaches past the Backend seam)"),
        "{arrows:?}"
    );
    assert!(!arrows.iter().any(|a| a.starts_with("id ->")), "{arrows:?}");
    assert_eq!(arrows.len(), 3, "{arrows:?}");
}

/// The import graph of a crate given as fixed text: `(module, source)` pairs, the crate's
/// root being `lib`.
fn graph_of(files: &[(&str, &str)]) -> BTreeMap<Module, BTreeSet<Module>> {
    let files: Vec<(Module, String)> = files
        .iter()
        .map(|(m, t)| (m.split("::").map(String::from).collect(), t.to_string()))
        .collect();
    imports_of(&files)
}

/// The layers' modules, each empty, and a crate root that re-exports items of the inner
/// layers as lib.rs does: the synthetic crate the planted cases below go into.
const CRATE: &[(&str, &str)] = &[
    (
        "lib",
        "pub use error::{Code, Error, Result};\npub use id::{Actor, Id};\n\
         pub use rules::{Finish, Request, Upsert};\npub use schedule::Pick;\n\
         pub use store::lease::Lease;\npub use store::{ListFilter, Store};\n\
         pub use view::NodeView;\n",
    ),
    ("error", ""),
    ("id", ""),
    ("duration", ""),
    ("model", ""),
    ("schedule", ""),
    ("state", ""),
    ("rules", ""),
    ("view", ""),
    ("graph", ""),
    ("verify", ""),
    ("store", ""),
    ("store::lease", ""),
    ("store::backend", ""),
    ("store::embedded", ""),
    ("store::postgres", ""),
    ("verbs", ""),
    ("cli", ""),
];

/// The arrows `back_arrows` finds in [`CRATE`] with the file `module` (its text `text`)
/// added or put in place, each as `from -> to`, sorted.
fn planted(module: &str, text: &str) -> Vec<String> {
    let mut files: Vec<(&str, &str)> = CRATE
        .iter()
        .filter(|(m, _)| *m != module)
        .copied()
        .collect();
    files.push((module, text));
    let mut found: Vec<String> = back_arrows(&graph_of(&files))
        .into_iter()
        .map(|a| a.split(" (").next().unwrap().to_string())
        .collect();
    found.sort();
    found
}

/// Each planted case `(module, text, the arrows it must give)` checked, every miss listed.
#[track_caller]
fn each_found(cases: &[(&str, &str, &[&str])]) {
    let missed: Vec<String> = cases
        .iter()
        .filter_map(|(module, text, want)| {
            let got = planted(module, text);
            (got != *want).then(|| format!("{module}: {text:?}: found {got:?}, want {want:?}"))
        })
        .collect();
    assert!(
        missed.is_empty(),
        "planted cases the checks get wrong:\n{}",
        missed.join("\n")
    );
}

/// A lower layer naming a higher layer's item through the crate root's `pub use` is an
/// import of that layer: `crate::Store` in the model, `crate::Request` in the scheduler.
#[test]
fn a_root_re_export_counts_as_its_module() {
    each_found(&[
        ("model", "use crate::Store;\n", &["model -> store"]),
        (
            "schedule",
            "fn f(r: &crate::Request) -> crate::Result<()> {}\n",
            &["schedule -> rules"],
        ),
        (
            "model",
            "use crate::{Id, Pick, Lease};\n",
            &["model -> schedule", "model -> store::lease"],
        ),
        // Down the layers through the root is fine.
        ("rules", "use crate::{Error, Id};\n", &[]),
    ]);
}

/// A group inside a group is read whole: every member of `crate::{a::{b, c}, d::e}`.
#[test]
fn nested_use_groups_are_read_whole() {
    each_found(&[
        (
            "schedule",
            "use crate::{model::{Node, Status}, rules::{Tx, apply}};\n",
            &["schedule -> rules"],
        ),
        (
            "model",
            "use crate::{\n    error::{Error, Result},\n    id::Id,\n    verbs::{self, Ctx},\n};\n",
            &["model -> verbs"],
        ),
        (
            "state",
            "use crate::{error::{Error, Result}, model::{Node, Status}};\n",
            &[],
        ),
    ]);
}

/// A door (src/cli) names only the store's facade, the verbs and the data below them; not
/// the rules, the state, the scheduler, `check`'s invariants, a backend or the Backend
/// seam, even through the crate root.
#[test]
fn a_door_names_no_backend_and_no_inner_layer() {
    let fine = "use crate::store::{ListFilter, Store};\nuse crate::store::lease::Lease;\n\
                use crate::verbs::{self, Ctx};\nuse crate::view::NodeView;\n\
                use crate::graph::colour;\nuse crate::model::Status;\n\
                use crate::error::{Error, Result};\nuse crate::id::Actor;\n\
                use crate::duration::format_ms;\nuse crate::{Lease, NodeView, Store};\n";
    each_found(&[
        (
            "cli::work",
            "crate::store::postgres::Target::without_password(d)",
            &["cli::work -> store::postgres"],
        ),
        (
            "cli::work",
            "use crate::store::embedded::EmbeddedStore;",
            &["cli::work -> store::embedded"],
        ),
        (
            "cli::work",
            "use crate::store::backend::Backend;",
            &["cli::work -> store::backend"],
        ),
        (
            "cli::pane",
            "crate::rules::validate_word(\"role\", r, 0)?;",
            &["cli::pane -> rules"],
        ),
        (
            "cli::pane",
            "use crate::{Store, Upsert};",
            &["cli::pane -> rules"],
        ),
        (
            "cli::mcp",
            "use crate::state::State;",
            &["cli::mcp -> state"],
        ),
        (
            "cli::mcp",
            "use crate::schedule::{self, Pick};",
            &["cli::mcp -> schedule"],
        ),
        (
            "cli::mcp",
            "use crate::verify::check;",
            &["cli::mcp -> verify"],
        ),
        ("cli", fine, &[]),
    ]);
}
