//! The dashboard (`GET /`): one server-rendered page of a workspace's live nodes, a page of
//! rows at a time ([`Store::page`]: the filters and the search are the server's, and only
//! the rows shown are read out of the store), with a little plain JavaScript
//! (`dashboard.js`, served beside it, no CDN) that keeps it live from the watch stream by
//! fetching the rows it shows again, and acts through the API with the generation each row
//! shows. Every text a node carries goes through [`html`]; the page's
//! Content-Security-Policy allows no inline script besides.
//!
//! [`Store::page`]: crate::store::Store::page

use crate::model::{DisplayWord, Millis, Status};
use crate::store::{Page, PageFilter};
use crate::view::NodeView;
use std::fmt::Write;

pub const SCRIPT: &str = include_str!("dashboard.js");
pub const VIEWS: &str = include_str!("dashboard-views.js");
pub const STYLE: &str = include_str!("dashboard.css");

/// The rows of a page when the request does not say, and the most it may ask for.
pub const LIMIT: usize = 200;
pub const MOST_ROWS: usize = 1000;

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

/// The whole page: the counts, the filters, the pager and one page of rows. `csrf` is the
/// session's secret for the dashboard's writes (empty for a page served without a session:
/// it shows, and cannot act). The page carries no credential: the session's cookie is
/// HttpOnly.
pub fn page(p: &Page, f: &PageFilter, location: &str, csrf: &str) -> String {
    let mut out = String::with_capacity(1024 * p.rows.len() + 8192);
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
        ws = html(&f.workspace),
    );
    out.push_str(&counts(p));
    out.push_str(&controls(p, f));
    out.push_str("<div id=\"message\" role=\"status\" aria-live=\"polite\"></div>");
    out.push_str(
        "<nav id=\"views\" aria-label=\"views\">\
         <button type=\"button\" data-view=\"table\" class=\"on\">rows</button>\
         <button type=\"button\" data-view=\"graph\">graph</button>\
         <button type=\"button\" data-view=\"activity\">activity</button></nav>\
         <section id=\"view-graph\" hidden><p id=\"graph-info\" class=\"hint\"></p>\
         <div id=\"graph-box\"></div></section>\
         <section id=\"view-activity\" hidden><p id=\"activity-info\" class=\"hint\"></p>\
         <div id=\"charts\"></div></section><section id=\"view-table\">",
    );
    out.push_str(&pager(p, f.limit));
    out.push_str(
        "<table id=\"nodes\"><thead><tr><th>node</th><th>summary</th><th>status</th>\
         <th>holder</th><th>lease</th><th>why, progress, note</th><th>actions</th></tr></thead>\
         <tbody id=\"rows\">",
    );
    out.push_str(&rows(p, f.limit));
    out.push_str(
        "</tbody></table></section><aside id=\"detail\" hidden></aside>\
         <script src=\"/dashboard.js\"></script>\
         <script src=\"/dashboard-views.js\"></script></body></html>\n",
    );
    out
}

/// What a live update replaces: the store's time, the paging and the counts (a hidden row
/// the script reads), then the page's rows.
pub fn rows(p: &Page, limit: usize) -> String {
    let mut out = String::with_capacity(1024 * p.rows.len() + 512);
    let _ = write!(
        out,
        "<tr hidden id=\"now\" data-now=\"{}\"></tr>\
         <tr hidden id=\"paging\" data-offset=\"{}\" data-limit=\"{limit}\" \
         data-matched=\"{}\" data-counts=\"{}\"></tr>",
        p.now,
        p.offset,
        p.matched,
        p.counts
            .iter()
            .map(|(w, n)| format!("{} {n}", w.as_str()))
            .collect::<Vec<_>>()
            .join(" "),
    );
    if p.rows.is_empty() {
        out.push_str(
            "<tr class=\"none\"><td colspan=\"7\">no node here matches the filters</td></tr>",
        );
    }
    for v in &p.rows {
        row(&mut out, v, p, p.now);
    }
    out
}

/// `rows 201-400 of 12345`, as the script writes it too.
fn shown(p: &Page) -> String {
    if p.matched == 0 {
        return "no rows".into();
    }
    format!(
        "rows {}-{} of {}",
        p.offset + 1,
        p.offset + p.rows.len(),
        p.matched
    )
}

/// The pager: the first, previous, next and last pages of the rows the filters let through.
fn pager(p: &Page, limit: usize) -> String {
    let at_start = p.offset == 0;
    let at_end = p.offset + limit >= p.matched;
    let b = |id: &str, label: &str, off: bool| {
        format!(
            "<button type=\"button\" id=\"{id}\"{}>{label}</button>",
            if off { " disabled" } else { "" }
        )
    };
    format!(
        "<nav id=\"pager\" aria-label=\"pages\">{}{}<span id=\"page-info\">{}</span>{}{}</nav>",
        b("page-first", "first", at_start),
        b("page-prev", "previous", at_start),
        shown(p),
        b("page-next", "next", at_end),
        b("page-last", "last", at_end),
    )
}

fn row(out: &mut String, v: &NodeView, p: &Page, now: Millis) {
    let n = &v.node;
    let critical = p.critical.contains(&n.id);
    let word = v.display.as_str();
    let holder = n.holder.map(|h| h.to_string()).unwrap_or_default();
    let _ = write!(
        out,
        "<tr data-id=\"{id}\" data-gen=\"{gen}\" data-status=\"{word}\" data-role=\"{role}\" \
         data-labels=\"{labels}\" data-holder=\"{holder}\" class=\"{word}{crit}\">\
         <td class=\"id\"><button type=\"button\" class=\"link show\">{short}</button></td>\
         <td class=\"summary\">{summary}{labelled}</td>\
         <td class=\"status\"><span class=\"word\">{word}</span>{flags}{star} <span class=\"gen\">gen {gen}</span>\
         <br><time class=\"ago\" data-at=\"{updated}\" title=\"changed {stamp}\">{ago}</time></td>\
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
            .chain(after(v, p))
            .collect::<String>(),
        flags = flags(v),
        star = if critical {
            " <span class=\"crit\" title=\"on the critical path\">critical</span>"
        } else {
            ""
        },
        holder_short = match (&v.names.holder, n.holder) {
            (Some(name), _) => html(name),
            (None, h) => h.map(|h| h.short()).unwrap_or_default(),
        },
        updated = n.updated_at,
        stamp = crate::duration::format_time(n.updated_at),
        ago = ago(now, n.updated_at),
        lease = lease(v, now),
        why = why(v),
        actions = actions(v),
    );
}

/// The DAG's edges into a node: what it waits on, by summary and how it stands (`after
/// parse the header (done)`; soft ones marked; an archived one by its id), each a link to
/// its detail.
fn after(v: &NodeView, p: &Page) -> Option<String> {
    let n = &v.node;
    let named = |d: &crate::id::Id, soft: bool| {
        let soft = if soft { ", soft" } else { "" };
        let (text, word) = match p.prerequisites.get(d) {
            Some((summary, word)) => (html(summary), word.as_str()),
            None => (d.short(), "archived"),
        };
        format!(
            "<a class=\"dep\" href=\"#node={d}\" title=\"{}\">{text}</a> ({word}{soft})",
            d.hex()
        )
    };
    let all: Vec<String> = n.prerequisites().map(|(d, soft)| named(&d, soft)).collect();
    (!all.is_empty()).then(|| format!("<br><span class=\"deps\">after {}</span>", all.join(", ")))
}

/// Beside the word: `overdue` past the deadline, a container's children finished of all.
fn flags(v: &NodeView) -> String {
    let mut out = String::new();
    if v.overdue {
        out.push_str(" <span class=\"overdue\" title=\"past its deadline\">overdue</span>");
    }
    if let Some(c) = v.node.children {
        let _ = write!(
            out,
            " <span class=\"children\" title=\"children finished of all\">{}/{}</span>",
            c.total - c.open(),
            c.total
        );
    }
    out
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

/// `changed 3m ago`: how long since `at`, in its largest unit (the script keeps it current).
fn ago(now: Millis, at: Millis) -> String {
    let s = now.saturating_sub(at) / 1000;
    let span = match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m", s / 60),
        3600..86400 => format!("{}h", s / 3600),
        _ => format!("{}d", s / 86400),
    };
    format!("changed {span} ago")
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
    if let Some(d) = n.deadline {
        parts.push(format!(
            "<span class=\"deadline\">due {}</span>",
            crate::format_time(d)
        ));
    }
    if n.budget.is_some() || !n.spent.is_zero() {
        let of = n.budget.map(|b| format!(" of {b}")).unwrap_or_default();
        let over = if n.is_over_budget() {
            " (over budget)"
        } else {
            ""
        };
        parts.push(format!(
            "<span class=\"spend\">spent {}{of}{over}</span>",
            n.spent
        ));
    }
    parts.join("<br>")
}

/// The buttons a row's state allows; each acts with the row's generation.
fn actions(v: &NodeView) -> String {
    let b = |verb: &str, label: &str| {
        format!("<button type=\"button\" class=\"act\" data-verb=\"{verb}\">{label}</button>")
    };
    if crate::model::is_container(&v.node.kind) {
        // Its status follows its children: nothing to do to it by hand.
        return String::new();
    }
    if v.awaits_decision() {
        return [
            b("approve", "approve"),
            b("reject", "reject"),
            b("cancel", "cancel"),
        ]
        .concat();
    }
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
        DisplayWord::Parked => [b("retry", "retry"), b("cancel", "cancel")].concat(),
        DisplayWord::Blocked | DisplayWord::Scheduled | DisplayWord::Todo => b("cancel", "cancel"),
    }
}

/// The counts by display word of the whole workspace (whatever the filters).
fn counts(p: &Page) -> String {
    let mut out = String::from("<section id=\"counts\">");
    for (word, n) in &p.counts {
        let word = word.as_str();
        let _ = write!(out, "<span class=\"count {word}\">{n} {word}</span>");
    }
    out.push_str("</section>");
    out
}

/// The filters (as the request gave them), the search, the actor the page acts as, the
/// workspace and the bulk actions.
fn controls(p: &Page, f: &PageFilter) -> String {
    let mut ws = String::new();
    for w in &p.workspaces {
        let shown = if w.is_empty() {
            "(default)"
        } else {
            w.as_str()
        };
        let _ = write!(
            ws,
            "<option value=\"{}\"{}>{}</option>",
            html(w),
            if *w == f.workspace { " selected" } else { "" },
            html(shown)
        );
    }
    let status: String = std::iter::once("")
        .chain(WORDS.iter().map(|w| w.as_str()))
        .map(|w| {
            let shown = if w.is_empty() { "any status" } else { w };
            let on = f.status.as_deref().unwrap_or("") == w;
            format!(
                "<option value=\"{w}\"{}>{shown}</option>",
                if on { " selected" } else { "" }
            )
        })
        .collect();
    let sort: String = std::iter::once("")
        .chain(crate::store::SORTS)
        .map(|o| {
            let shown = if o.is_empty() { "created" } else { o };
            let on = f.sort.as_deref().unwrap_or("") == o;
            format!(
                "<option value=\"{o}\"{}>{shown}</option>",
                if on { " selected" } else { "" }
            )
        })
        .collect();
    let value = |v: &Option<String>| html(v.as_deref().unwrap_or(""));
    format!(
        "<form id=\"filters\" autocomplete=\"off\">\
         <label>search <input type=\"search\" name=\"q\" size=\"18\" value=\"{q}\" \
         placeholder=\"id, summary, label\"></label>\
         <label>workspace <select name=\"workspace\">{ws}</select></label>\
         <label>status <select name=\"status\">{status}</select></label>\
         <label>sort <select name=\"sort\">{sort}</select></label>\
         <label>role <input name=\"role\" size=\"8\" value=\"{role}\"></label>\
         <label>label <input name=\"label\" size=\"8\" value=\"{label}\"></label>\
         <label>holder <input name=\"holder\" size=\"10\" value=\"{holder}\" \
         placeholder=\"id prefix\"></label>\
         <label>act as <input name=\"actor\" size=\"14\" placeholder=\"name:you\"></label>\
         <button type=\"button\" id=\"bulk-reopen\">reopen shown</button>\
         <button type=\"button\" id=\"bulk-cancel\">cancel shown</button></form>",
        q = value(&f.text),
        role = value(&f.role),
        label = value(&f.label),
        holder = value(&f.holder),
    )
}

/// The display words, in the order the status filter offers them.
const WORDS: [DisplayWord; 10] = [
    DisplayWord::Ready,
    DisplayWord::Scheduled,
    DisplayWord::Blocked,
    DisplayWord::Parked,
    DisplayWord::Todo,
    DisplayWord::Claimed,
    DisplayWord::Expired,
    DisplayWord::Done,
    DisplayWord::Failed,
    DisplayWord::Cancelled,
];
