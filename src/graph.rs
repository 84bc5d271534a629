//! The DAG as Graphviz dot, Mermaid or JSON: nodes coloured by display status, hard links
//! solid, soft links dashed, the longest critical path drawn thick and red (in JSON, each
//! node and link says whether it is on that path; the dashboard draws it).

use crate::id::Id;
use crate::model::{DisplayWord, Millis, Node};
use crate::rules;
use crate::schedule;
use crate::state::State;
use std::collections::HashSet;
use std::fmt::Write;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Dot,
    Mermaid,
    Json,
}

impl Format {
    pub fn parse(text: &str) -> Option<Format> {
        match text {
            "dot" => Some(Format::Dot),
            "mermaid" => Some(Format::Mermaid),
            "json" => Some(Format::Json),
            _ => None,
        }
    }
}

/// Fill colour of each display word.
pub fn colour(d: DisplayWord) -> &'static str {
    match d {
        DisplayWord::Ready => "#b7e1a1",
        DisplayWord::Scheduled => "#d7c4ec",
        DisplayWord::Blocked => "#f4a6a6",
        DisplayWord::Parked => "#c9a27e",
        DisplayWord::Todo => "#e6e6e6",
        DisplayWord::Claimed => "#9ec9f0",
        DisplayWord::Expired => "#f7c56b",
        DisplayWord::Done => "#6fbf73",
        DisplayWord::Failed => "#e57373",
        DisplayWord::Cancelled => "#bdbdbd",
    }
}

const DISPLAYS: [DisplayWord; 9] = [
    DisplayWord::Ready,
    DisplayWord::Blocked,
    DisplayWord::Parked,
    DisplayWord::Todo,
    DisplayWord::Claimed,
    DisplayWord::Expired,
    DisplayWord::Done,
    DisplayWord::Failed,
    DisplayWord::Cancelled,
];

fn label(n: &Node, d: DisplayWord) -> String {
    let mut s: String = n.summary.chars().take(48).collect();
    if n.summary.chars().count() > 48 {
        s.push_str("...");
    }
    // Line ends as spaces; every other control or bidi character as an escape.
    let s = crate::escape::one_line(&s.replace(['\n', '\r', '\t'], " "));
    format!(
        "{} {}|{} gen={}",
        &n.id.hex()[..8],
        s,
        d.as_str(),
        n.generation
    )
}

/// What a drawing shows: the nodes, their links, and the longest critical path.
struct Drawing<'a> {
    state: &'a State,
    now: Millis,
    nodes: Vec<&'a Node>,
    /// (prerequisite, waiting node, soft) between shown nodes.
    edges: Vec<(Id, Id, bool)>,
    on_path: HashSet<(Id, Id)>,
    on_path_node: HashSet<Id>,
}

impl Drawing<'_> {
    fn display(&self, n: &Node) -> DisplayWord {
        rules::display(self.state, n, self.now)
    }

    fn edge_on_path(&self, p: &Id, c: &Id) -> bool {
        self.on_path.contains(&(*c, *p)) || self.on_path.contains(&(*p, *c))
    }
}

fn short(id: &Id) -> String {
    format!("n{}", &id.hex()[..12])
}

/// Renders `workspace`'s live nodes: unfinished ones, plus finished ones when `all`.
pub fn render(state: &State, workspace: &str, all: bool, format: Format, now: Millis) -> String {
    let tx = rules::read_at(state, now);
    let nodes: Vec<&Node> = state
        .nodes()
        .iter()
        .filter(|n| n.workspace == workspace && (all || !n.status.is_terminal()))
        .collect();
    let shown: HashSet<Id> = nodes.iter().map(|n| n.id).collect();
    let path = schedule::critical(&tx, workspace).longest();
    let edges = nodes
        .iter()
        .flat_map(|n| n.prerequisites().map(move |(dep, soft)| (dep, n.id, soft)))
        .filter(|(dep, _, _)| shown.contains(dep))
        .collect();
    let drawing = Drawing {
        state,
        now,
        nodes,
        edges,
        on_path: path.windows(2).map(|w| (w[0], w[1])).collect(),
        on_path_node: path.iter().copied().collect(),
    };
    match format {
        Format::Dot => dot(&drawing),
        Format::Mermaid => mermaid(&drawing),
        Format::Json => json(&drawing),
    }
}

fn dot(g: &Drawing<'_>) -> String {
    let mut out = String::from("digraph claimdag {\n  rankdir=LR;\n  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\"];\n");
    for n in &g.nodes {
        let d = g.display(n);
        let l = label(n, d)
            .replace('\\', "\\\\")
            .replace('"', "\\\"")
            .replace('|', "\\n");
        let pen = if g.on_path_node.contains(&n.id) {
            ", penwidth=3, color=\"#d62728\""
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "  {} [label=\"{}\", fillcolor=\"{}\"{}];",
            short(&n.id),
            l,
            colour(d),
            pen
        );
    }
    for (p, c, soft) in &g.edges {
        let mut attrs = Vec::new();
        if *soft {
            attrs.push("style=dashed".to_string());
        }
        if g.edge_on_path(p, c) {
            attrs.push("color=\"#d62728\", penwidth=3".to_string());
        }
        let a = if attrs.is_empty() {
            String::new()
        } else {
            format!(" [{}]", attrs.join(", "))
        };
        let _ = writeln!(out, "  {} -> {}{};", short(p), short(c), a);
    }
    out.push_str("}\n");
    out
}

fn mermaid(g: &Drawing<'_>) -> String {
    let mut out = String::from("flowchart LR\n");
    for n in &g.nodes {
        let d = g.display(n);
        let l = label(n, d).replace('"', "#quot;").replace('|', "<br/>");
        let _ = writeln!(out, "  {}[\"{}\"]:::{}", short(&n.id), l, d.as_str());
    }
    let mut critical_links = Vec::new();
    for (k, (p, c, soft)) in g.edges.iter().enumerate() {
        let arrow = if *soft { "-.->" } else { "-->" };
        let _ = writeln!(out, "  {} {} {}", short(p), arrow, short(c));
        if g.edge_on_path(p, c) {
            critical_links.push(k.to_string());
        }
    }
    for d in DISPLAYS {
        let _ = writeln!(
            out,
            "  classDef {} fill:{},stroke:#555",
            d.as_str(),
            colour(d)
        );
    }
    if !critical_links.is_empty() {
        let _ = writeln!(
            out,
            "  linkStyle {} stroke:#d62728,stroke-width:3px",
            critical_links.join(",")
        );
    }
    out
}

/// `{"nodes": [{"id", "summary", "status", "generation", "critical"}], "edges": [{"from",
/// "to", "soft", "critical"}]}`: nodes in creation order, `status` the display word, `from`
/// the prerequisite.
fn json(g: &Drawing<'_>) -> String {
    let nodes: Vec<serde_json::Value> = g
        .nodes
        .iter()
        .map(|n| {
            serde_json::json!({
                "id": n.id.hex(),
                "summary": n.summary,
                "status": g.display(n).as_str(),
                "generation": n.generation,
                "critical": g.on_path_node.contains(&n.id),
            })
        })
        .collect();
    let edges: Vec<serde_json::Value> = g
        .edges
        .iter()
        .map(|(p, c, soft)| {
            serde_json::json!({
                "from": p.hex(),
                "to": c.hex(),
                "soft": soft,
                "critical": g.edge_on_path(p, c),
            })
        })
        .collect();
    serde_json::json!({"nodes": nodes, "edges": edges}).to_string()
}
