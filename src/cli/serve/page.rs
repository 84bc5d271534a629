//! The dashboard (`GET /`): one server-rendered page of a workspace's live nodes, with a
//! little plain JavaScript (`dashboard.js`, served beside it, no CDN) that keeps it live from
//! the watch stream and acts through the API with the generation each row shows. Every
//! text a node carries goes through [`html`]; the page's Content-Security-Policy allows no
//! inline script besides.

use crate::error::Result;
use crate::model::{DisplayWord, Millis, Status};
use crate::store::{ListFilter, Store};
use crate::view::NodeView;
use std::collections::{BTreeMap, HashSet};
use std::fmt::Write;

pub const SCRIPT: &str = include_str!("dashboard.js");
pub const STYLE: &str = include_str!("dashboard.css");

/// Text made safe inside an element or a quoted attribute.
pub fn html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if crate::escape::is_escaped(c) && c != '\n' => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

/// The live nodes of `workspace` (finished ones included), the critical path, and the
/// store's time.
pub struct Snapshot {
    pub nodes: Vec<NodeView>,
    pub critical: HashSet<crate::id::Id>,
    pub now: Millis,
    pub workspaces: Vec<String>,
}

pub fn read(store: &Store, workspace: &str) -> Result<Snapshot> {
    let all = store.list(&ListFilter {
        terminal: true,
        ..ListFilter::default()
    })?;
    let mut workspaces: Vec<String> = all.iter().map(|v| v.node.workspace.clone()).collect();
    workspaces.push(workspace.to_string());
    workspaces.sort();
    workspaces.dedup();
    let nodes = all
        .into_iter()
        .filter(|v| v.node.workspace == workspace)
        .collect();
    Ok(Snapshot {
        nodes,
        critical: store.critical_path(workspace)?.into_iter().collect(),
        now: store.now()?,
        workspaces,
    })
}

/// The whole page. `csrf` is the session's secret for the dashboard's writes (empty for a
/// page served without a session: it shows, and cannot act). The page carries no
/// credential: the session's cookie is HttpOnly.
pub fn page(s: &Snapshot, location: &str, workspace: &str, csrf: &str) -> String {
    let mut out = String::with_capacity(256 * s.nodes.len() + 4096);
    let _ = write!(
        out,
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>claimdag: {loc}</title>\
         <meta name=\"claimdag-csrf\" content=\"{csrf}\">\
         <meta name=\"claimdag-workspace\" content=\"{ws}\">\
         <link rel=\"stylesheet\" href=\"/dashboard.css\"></head><body>\
         <header><h1>claimdag</h1><span class=\"store\">{loc}</span>\
         <span id=\"live\" class=\"off\">connecting</span></header>",
        loc = html(location),
        csrf = html(csrf),
        ws = html(workspace),
    );
    out.push_str(&summary(s));
    out.push_str(&controls(s, workspace));
    out.push_str(
        "<div id=\"message\" role=\"status\" aria-live=\"polite\"></div>\
         <table id=\"nodes\"><thead><tr><th>node</th><th>summary</th><th>status</th>\
         <th>holder</th><th>lease</th><th>why, progress, note</th><th>actions</th></tr></thead>\
         <tbody id=\"rows\">",
    );
    out.push_str(&rows(s));
    out.push_str(
        "</tbody></table><aside id=\"detail\" hidden></aside>\
         <script src=\"/dashboard.js\"></script></body></html>\n",
    );
    out
}

/// The counts by display word, then the rows: what a live update replaces.
pub fn rows(s: &Snapshot) -> String {
    let mut out = String::new();
    let _ = write!(out, "<tr hidden id=\"now\" data-now=\"{}\"></tr>", s.now);
    for v in &s.nodes {
        row(&mut out, v, s.critical.contains(&v.node.id), s.now);
    }
    out
}

fn row(out: &mut String, v: &NodeView, critical: bool, now: Millis) {
    let n = &v.node;
    let word = v.display.as_str();
    let holder = n.holder.map(|h| h.to_string()).unwrap_or_default();
    let _ = write!(
        out,
        "<tr data-id=\"{id}\" data-gen=\"{gen}\" data-status=\"{word}\" data-role=\"{role}\" \
         data-labels=\"{labels}\" data-holder=\"{holder}\" class=\"{word}{crit}\">\
         <td class=\"id\"><button type=\"button\" class=\"link show\">{short}</button></td>\
         <td class=\"summary\">{summary}{labelled}</td>\
         <td class=\"status\"><span class=\"word\">{word}</span>{star} <span class=\"gen\">gen {gen}</span></td>\
         <td class=\"holder\">{holder_short}</td><td class=\"lease\">{lease}</td>\
         <td class=\"why\">{why}</td><td class=\"actions\">{actions}</td></tr>",
        id = n.id,
        gen = n.generation,
        role = html(&n.role),
        labels = html(&n.labels.join(" ")),
        holder = holder,
        crit = if critical { " critical" } else { "" },
        short = n.id.short(),
        summary = html(&n.summary),
        labelled = n
            .labels
            .iter()
            .map(|l| format!(" <span class=\"label\">{}</span>", html(l)))
            .chain(after(v))
            .collect::<String>(),
        star = if critical {
            " <span class=\"crit\" title=\"on the critical path\">critical</span>"
        } else {
            ""
        },
        holder_short = n.holder.map(|h| h.short()).unwrap_or_default(),
        lease = lease(v, now),
        why = why(v),
        actions = actions(v),
    );
}

/// The DAG's edges into a node: what it waits on (`after a1b2c3d4...`, soft ones marked).
fn after(v: &NodeView) -> Option<String> {
    let n = &v.node;
    let hard = n.deps.iter().map(|d| d.short());
    let soft = n.soft_deps.iter().map(|d| format!("{} (soft)", d.short()));
    let all: Vec<String> = hard.chain(soft).collect();
    (!all.is_empty()).then(|| format!("<br><span class=\"deps\">after {}</span>", all.join(", ")))
}

/// A live claim's countdown (the script ticks it), or nothing.
fn lease(v: &NodeView, now: Millis) -> String {
    let n = &v.node;
    let (Some(from), Some(ttl)) = (n.renewed_at.or(n.claimed_at), n.ttl_ms) else {
        return String::new();
    };
    if n.status != Status::Claimed {
        return String::new();
    }
    let ends = from.saturating_add(ttl);
    format!(
        "<span class=\"countdown\" data-ends=\"{ends}\">{}</span>",
        countdown(ends.saturating_sub(now) as i64 - now.saturating_sub(ends) as i64)
    )
}

/// `4m 05s left`, or `expired 12s ago`.
fn countdown(ms: i64) -> String {
    let s = ms.abs() / 1000;
    let text = if s >= 3600 {
        format!("{}h {:02}m", s / 3600, (s % 3600) / 60)
    } else {
        format!("{}m {:02}s", s / 60, s % 60)
    };
    if ms >= 0 {
        format!("{text} left")
    } else {
        format!("expired {text} ago")
    }
}

/// Why a node waits, its progress, its note, a cancel asked for: escaped.
fn why(v: &NodeView) -> String {
    let n = &v.node;
    let mut parts = Vec::new();
    if let Some(w) = &v.why {
        parts.push(format!("<span class=\"waits\">{}</span>", html(w)));
    }
    if let Some(p) = &n.progress {
        parts.push(format!(
            "<span class=\"progress\">progress: {}</span>",
            html(p)
        ));
    }
    if let Some(c) = &n.cancel_requested {
        let reason = c.reason.as_deref().unwrap_or("no reason given");
        parts.push(format!(
            "<span class=\"cancel\">cancel asked: {}</span>",
            html(reason)
        ));
    }
    if let Some(note) = &n.note {
        parts.push(format!("<span class=\"note\">{}</span>", html(note)));
    }
    parts.join("<br>")
}

/// The buttons a row's state allows; each acts with the row's generation.
fn actions(v: &NodeView) -> String {
    let b = |verb: &str, label: &str| {
        format!("<button type=\"button\" class=\"act\" data-verb=\"{verb}\">{label}</button>")
    };
    match v.display {
        DisplayWord::Ready | DisplayWord::Expired => {
            [b("claim", "claim"), b("cancel", "cancel")].concat()
        }
        DisplayWord::Claimed => [
            b("complete", "done"),
            b("fail", "failed"),
            b("release", "release"),
            b("cancel", "cancel"),
        ]
        .concat(),
        DisplayWord::Done | DisplayWord::Failed | DisplayWord::Cancelled => b("reopen", "reopen"),
        DisplayWord::Blocked | DisplayWord::Scheduled | DisplayWord::Todo => b("cancel", "cancel"),
    }
}

fn summary(s: &Snapshot) -> String {
    let mut by: BTreeMap<&str, usize> = BTreeMap::new();
    for v in &s.nodes {
        *by.entry(v.display.as_str()).or_default() += 1;
    }
    let mut out = String::from("<section id=\"counts\">");
    for (word, n) in by {
        let _ = write!(out, "<span class=\"count {word}\">{n} {word}</span>");
    }
    out.push_str("</section>");
    out
}

/// The filters, the actor the page acts as, the workspace and the bulk actions.
fn controls(s: &Snapshot, workspace: &str) -> String {
    let mut ws = String::new();
    for w in &s.workspaces {
        let shown = if w.is_empty() {
            "(default)"
        } else {
            w.as_str()
        };
        let _ = write!(
            ws,
            "<option value=\"{}\"{}>{}</option>",
            html(w),
            if w == workspace { " selected" } else { "" },
            html(shown)
        );
    }
    let words = [
        "",
        "ready",
        "scheduled",
        "blocked",
        "todo",
        "claimed",
        "expired",
        "done",
        "failed",
        "cancelled",
    ];
    let status: String = words
        .iter()
        .map(|w| {
            let shown = if w.is_empty() { "any status" } else { w };
            format!("<option value=\"{w}\">{shown}</option>")
        })
        .collect();
    format!(
        "<form id=\"filters\" autocomplete=\"off\">\
         <label>workspace <select name=\"workspace\">{ws}</select></label>\
         <label>status <select name=\"status\">{status}</select></label>\
         <label>role <input name=\"role\" size=\"8\"></label>\
         <label>label <input name=\"label\" size=\"8\"></label>\
         <label>holder <input name=\"holder\" size=\"10\" placeholder=\"id prefix\"></label>\
         <label>act as <input name=\"actor\" size=\"14\" placeholder=\"name:you\"></label>\
         <button type=\"button\" id=\"bulk-reopen\">reopen shown</button>\
         <button type=\"button\" id=\"bulk-cancel\">cancel shown</button></form>"
    )
}
