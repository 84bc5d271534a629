//! `graph [--format dot|mermaid] [--all]`: the output has the format's basic shape, hard
//! links solid and soft ones dashed, nodes filled by display word, the longest critical path
//! in red, finished nodes only with `--all`; any other format is `invalid_input`.

use crate::common::{actor, Store};
use std::collections::{BTreeMap, BTreeSet};

const RED: &str = "#d62728";

/// The nodes of one store, by role in the picture.
struct Dag {
    s: Store,
    /// The longest chain: a -> b -> c, estimates 3 each.
    a: String,
    b: String,
    c: String,
    /// d -> e (hard), d -.-> f (soft).
    d: String,
    e: String,
    f: String,
    /// g is done, h waits on it.
    g: String,
    h: String,
    /// k is claimed.
    k: String,
}

fn dag() -> Dag {
    let s = Store::new();
    let a = s.upsert("chain head", &["--estimate", "3"]);
    let b = s.upsert("chain middle", &["--estimate", "3"]);
    let c = s.upsert("chain end", &["--estimate", "3"]);
    let d = s.upsert("short head", &[]);
    let e = s.upsert("hard follower", &[]);
    let f = s.upsert("soft follower", &[]);
    let g = s.upsert("finished \"quoted\" work", &[]);
    let h = s.upsert("after the finished work", &[]);
    let k = s.upsert("being worked on", &[]);
    s.ok(&["link", &a, &b]);
    s.ok(&["link", &b, &c]);
    s.ok(&["link", &d, &e]);
    s.ok(&["link", "--soft", &d, &f]);
    s.ok(&["link", &g, &h]);
    s.finish(&g, "done");
    s.claim(&k, &actor(2), &[]);
    Dag {
        s,
        a,
        b,
        c,
        d,
        e,
        f,
        g,
        h,
        k,
    }
}

/// The text of a quoted attribute `key="..."` in a dot attribute list.
fn attr(attrs: &str, key: &str) -> Option<String> {
    let start = attrs.find(&format!("{key}=\""))? + key.len() + 2;
    let mut out = String::new();
    let mut chars = attrs[start..].chars();
    while let Some(ch) = chars.next() {
        match ch {
            '\\' => {
                out.push(ch);
                out.push(chars.next()?);
            }
            '"' => return Some(out),
            _ => out.push(ch),
        }
    }
    None
}

/// A parsed dot graph: node name -> (label, fill), and edges (from, to, attributes).
struct Dot {
    nodes: BTreeMap<String, (String, String)>,
    edges: Vec<(String, String, String)>,
}

fn parse_dot(text: &str) -> Dot {
    assert!(text.starts_with("digraph"), "not a dot digraph: {text}");
    assert_eq!(
        text.trim_end().lines().last(),
        Some("}"),
        "unclosed: {text}"
    );
    let mut nodes = BTreeMap::new();
    let mut edges = Vec::new();
    for line in text.lines().skip(1) {
        let l = line.trim();
        if l == "}" || l.is_empty() {
            continue;
        }
        assert!(l.ends_with(';'), "a dot statement ends in ';': {l}");
        let body = &l[..l.len() - 1];
        let (head, attrs) = match body.find(" [") {
            Some(i) => (&body[..i], &body[i + 2..body.len() - 1]),
            None => (body, ""),
        };
        if let Some((from, to)) = head.split_once(" -> ") {
            edges.push((from.to_string(), to.to_string(), attrs.to_string()));
        } else if head == "node" || head.contains('=') {
            continue; // defaults and graph attributes
        } else {
            let label = attr(attrs, "label").unwrap_or_else(|| panic!("no label: {l}"));
            let fill = attr(attrs, "fillcolor").unwrap_or_else(|| panic!("no fill: {l}"));
            nodes.insert(head.to_string(), (label, fill));
        }
    }
    Dot { nodes, edges }
}

impl Dot {
    /// The name of the node whose label starts with the id's first 8 characters.
    fn name(&self, id: &str) -> &str {
        let found: Vec<&String> = self
            .nodes
            .iter()
            .filter(|(_, (label, _))| label.starts_with(&id[..8]))
            .map(|(n, _)| n)
            .collect();
        assert_eq!(found.len(), 1, "node {id} drawn {} times", found.len());
        found[0]
    }

    fn has(&self, id: &str) -> bool {
        self.nodes.values().any(|(l, _)| l.starts_with(&id[..8]))
    }

    fn fill(&self, id: &str) -> &str {
        &self.nodes[self.name(id)].1
    }

    fn edge(&self, from: &str, to: &str) -> &str {
        let (f, t) = (self.name(from), self.name(to));
        let found: Vec<&(String, String, String)> = self
            .edges
            .iter()
            .filter(|(a, b, _)| a == f && b == t)
            .collect();
        assert_eq!(
            found.len(),
            1,
            "edge {from} -> {to} drawn {} times",
            found.len()
        );
        &found[0].2
    }
}

#[test]
fn dot_draws_links_colours_and_the_critical_path() {
    let g = dag();
    let s = &g.s;
    let text = s.ok(&["graph"]);
    assert_eq!(
        s.ok(&["graph", "--format", "dot"]),
        text,
        "dot is the default"
    );
    let dot = parse_dot(&text);
    // Unfinished nodes only: g is done and left out, and so is its link to h.
    for id in [&g.a, &g.b, &g.c, &g.d, &g.e, &g.f, &g.h, &g.k] {
        assert!(dot.has(id), "{id} missing: {text}");
    }
    assert!(!dot.has(&g.g), "a finished node without --all: {text}");
    assert_eq!(dot.nodes.len(), 8);
    assert_eq!(dot.edges.len(), 4, "{text}");
    // Labels: id prefix, summary, display word and generation.
    let (label, _) = &dot.nodes[dot.name(&g.k)];
    assert!(
        label.contains("being worked on") && label.contains("claimed") && label.contains("gen=2"),
        "{label}"
    );
    // Soft links dashed, hard ones not.
    assert!(dot.edge(&g.d, &g.f).contains("style=dashed"), "{text}");
    assert!(!dot.edge(&g.d, &g.e).contains("dashed"), "{text}");
    assert!(!dot.edge(&g.a, &g.b).contains("dashed"), "{text}");
    // The critical path a -> b -> c is red; nothing else is.
    let red: BTreeSet<(&str, &str)> = dot
        .edges
        .iter()
        .filter(|(_, _, attrs)| attrs.contains(RED))
        .map(|(f, t, _)| (f.as_str(), t.as_str()))
        .collect();
    let want: BTreeSet<(&str, &str)> = [
        (dot.name(&g.a), dot.name(&g.b)),
        (dot.name(&g.b), dot.name(&g.c)),
    ]
    .into_iter()
    .collect();
    assert_eq!(red, want, "{text}");
    // Fills follow the display word: equal words, equal fills; different words differ.
    assert_eq!(s.display(&g.a), "ready");
    assert_eq!(s.display(&g.h), "ready");
    assert_eq!(dot.fill(&g.a), dot.fill(&g.h));
    assert_eq!(dot.fill(&g.a), dot.fill(&g.d));
    assert_eq!(dot.fill(&g.b), dot.fill(&g.e), "todo nodes share a fill");
    let fills: BTreeSet<&str> = [dot.fill(&g.a), dot.fill(&g.b), dot.fill(&g.k)]
        .into_iter()
        .collect();
    assert_eq!(
        fills.len(),
        3,
        "ready, todo and claimed share a fill: {text}"
    );

    // --all adds the finished node and its link, filled differently from a ready one.
    let all_text = s.ok(&["graph", "--all"]);
    let all = parse_dot(&all_text);
    assert!(all.has(&g.g), "{all_text}");
    assert_eq!(all.nodes.len(), 9);
    assert_eq!(all.edges.len(), 5);
    assert!(!all.edge(&g.g, &g.h).contains("dashed"));
    assert_ne!(
        all.fill(&g.g),
        all.fill(&g.h),
        "done and ready share a fill"
    );
    let (label, _) = &all.nodes[all.name(&g.g)];
    assert!(label.contains("done"), "{label}");
    // --json wraps the same text.
    let j = s.json(&["graph", "--all"]);
    assert_eq!(j["format"], "dot");
    assert_eq!(j["graph"], all_text.as_str());
}

#[test]
fn mermaid_draws_links_colours_and_the_critical_path() {
    let g = dag();
    let s = &g.s;
    let text = s.ok(&["graph", "--format", "mermaid", "--all"]);
    let mut lines = text.lines();
    assert!(
        lines.next().unwrap_or_default().starts_with("flowchart"),
        "{text}"
    );
    let mut class_of: BTreeMap<String, String> = BTreeMap::new(); // node name -> class
    let mut name_of: BTreeMap<String, String> = BTreeMap::new(); // id prefix -> node name
    let mut edges: Vec<(String, String, bool)> = Vec::new();
    let mut fills: BTreeMap<String, String> = BTreeMap::new();
    let mut red: Vec<usize> = Vec::new();
    for line in lines {
        let l = line.trim();
        if let Some(rest) = l.strip_prefix("classDef ") {
            let (class, style) = rest.split_once(' ').expect("classDef style");
            let fill = style
                .split(',')
                .find_map(|p| p.strip_prefix("fill:"))
                .expect("a fill");
            fills.insert(class.to_string(), fill.to_string());
        } else if let Some(rest) = l.strip_prefix("linkStyle ") {
            let (idx, style) = rest.split_once(' ').expect("linkStyle style");
            if style.contains(RED) {
                red.extend(idx.split(',').map(|i| i.parse::<usize>().expect("index")));
            }
        } else if let Some((from, to)) = l.split_once(" -.-> ") {
            edges.push((from.to_string(), to.to_string(), true));
        } else if let Some((from, to)) = l.split_once(" --> ") {
            edges.push((from.to_string(), to.to_string(), false));
        } else {
            let (name, rest) = l
                .split_once("[\"")
                .unwrap_or_else(|| panic!("odd line {l}"));
            let (label, class) = rest.split_once("\"]:::").expect("a class");
            name_of.insert(label[..8].to_string(), name.to_string());
            class_of.insert(name.to_string(), class.to_string());
        }
    }
    let name = |id: &str| name_of[&id[..8]].clone();
    assert_eq!(name_of.len(), 9, "{text}");
    assert_eq!(edges.len(), 5, "{text}");
    let edge = |from: &str, to: &str| {
        edges
            .iter()
            .position(|(f, t, _)| *f == name(from) && *t == name(to))
            .unwrap_or_else(|| panic!("no edge {from} -> {to}: {text}"))
    };
    assert!(
        edges[edge(&g.d, &g.f)].2,
        "a soft link is drawn -.->: {text}"
    );
    assert!(!edges[edge(&g.d, &g.e)].2);
    assert!(!edges[edge(&g.g, &g.h)].2);
    let mut want = vec![edge(&g.a, &g.b), edge(&g.b, &g.c)];
    want.sort();
    red.sort();
    assert_eq!(red, want, "the red links are the critical path: {text}");
    // Classes follow the display word; done and ready are filled differently.
    assert_eq!(class_of[&name(&g.a)], "ready");
    assert_eq!(class_of[&name(&g.g)], "done");
    assert_eq!(class_of[&name(&g.k)], "claimed");
    assert_eq!(class_of[&name(&g.b)], "todo");
    assert_ne!(fills["ready"], fills["done"]);
    assert_ne!(fills["ready"], fills["todo"]);
    // Without --all the finished node and its link are left out.
    let live = s.ok(&["graph", "--format", "mermaid"]);
    assert!(!live.contains(&name(&g.g)), "{live}");
    assert!(live.contains(&name(&g.h)));
    assert!(live.starts_with("flowchart"));
}

#[test]
fn a_blocked_node_and_an_empty_store_are_drawn() {
    let s = Store::new();
    let empty = s.ok(&["graph"]);
    let dot = parse_dot(&empty);
    assert!(dot.nodes.is_empty() && dot.edges.is_empty(), "{empty}");
    assert!(s
        .ok(&["graph", "--format", "mermaid"])
        .starts_with("flowchart"));
    assert!(!s.dir().exists(), "graph created the store");
    let p = s.upsert("will fail", &[]);
    let c = s.upsert("blocked by it", &[]);
    let r = s.upsert("ready beside it", &[]);
    s.ok(&["link", &p, &c]);
    s.finish(&p, "failed");
    let text = s.ok(&["graph", "--all"]);
    let dot = parse_dot(&text);
    assert_eq!(s.display(&c), "blocked");
    let fills: BTreeSet<&str> = [dot.fill(&p), dot.fill(&c), dot.fill(&r)]
        .into_iter()
        .collect();
    assert_eq!(
        fills.len(),
        3,
        "failed, blocked and ready share a fill: {text}"
    );
}

#[test]
fn any_other_format_is_invalid_input() {
    let g = dag();
    g.s.refused(&["graph", "--format", "png"], 2, "png", "invalid_input");
    let fresh = Store::new();
    fresh.refused(&["graph", "--format", "svg"], 2, "svg", "invalid_input");
    assert!(!fresh.dir().exists());
}
