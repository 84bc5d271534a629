//! The shape of the code, as docs/architecture.md draws it, held by a test: the files of
//! each crate import one another without a circle, each layer of the core imports only the
//! layers below it, a backend never imports another backend or the store's facade, no file
//! is over 800 lines and no function over 80.
//!
//! An import is a path that starts with `crate::` or `super::` naming an item of another
//! file, in code (comments are not read). A child module naming its own parent with
//! `super::` is not counted: that is how a module's parts share its private items (a
//! backend naming the store's facade above it is counted).

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

/// The paths that continue `prefix` at the start of `rest`.
fn segments(rest: &str, mut prefix: Vec<String>) -> Vec<Vec<String>> {
    let mut rest = rest;
    loop {
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            return group[..end]
                .split(',')
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

/// The module a path names: the longest prefix that is a file of the crate.
fn target(path: &[String], here: &Module, modules: &BTreeSet<Module>) -> Option<(Module, bool)> {
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
    let modules: BTreeSet<Module> = files.iter().map(|f| module_of(src, f)).collect();
    let mut graph = BTreeMap::new();
    for f in &files {
        let here = module_of(src, f);
        let text = std::fs::read_to_string(f).unwrap();
        let mut to = BTreeSet::new();
        for p in paths(&code(&text)) {
            let Some((t, up)) = target(&p, &here, &modules) else {
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

/// Imports that point up the layers, or from a backend to anything of the store but the
/// seam (and itself).
fn back_arrows(graph: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<String> {
    let mut out = Vec::new();
    for (m, to) in graph {
        for t in to {
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
