//! The text forms of replies, as the CLI prints them: `list` lines, `show` fields, `ready`
//! and `log` lines, and the helpers they share.

use crate::model::HistoryLine;
use crate::schedule::Pick;
use crate::view::NodeView;
use std::fmt::Write;

pub use crate::escape::one_line;

/// `<id8>...  <status>  <kind>  gen=<g>  <summary>`, the status column padded.
pub fn list(views: &[NodeView]) -> String {
    let word = |v: &NodeView| match v.overdue {
        true => format!("{} overdue", v.display.as_str()),
        false => v.display.as_str().to_string(),
    };
    let width = views.iter().map(|v| word(v).len()).max().unwrap_or(0);
    let mut out = String::new();
    for v in views {
        let n = &v.node;
        let holder = match (n.status, n.holder) {
            (crate::model::Status::Claimed, Some(h)) => {
                format!("holder={}  ", actor(&h, &v.names.holder))
            }
            _ => String::new(),
        };
        let children = match n.children {
            Some(c) => format!("children={}/{}  ", c.total - c.open(), c.total),
            None => String::new(),
        };
        let _ = writeln!(
            out,
            "{}  {:<width$}  {}  gen={}  {holder}{children}{}",
            n.id.short(),
            word(v),
            n.kind,
            n.generation,
            one_line(&n.summary)
        );
    }
    out
}

/// An actor as text shows it: `name:NAME` when the store keeps a name for it (what a
/// command takes back), else its 32 hex characters.
fn actor(a: &crate::id::Actor, name: &Option<String>) -> String {
    match name {
        Some(n) => format!("name:{n}"),
        None => a.hex(),
    }
}

/// An actor as `show` prints it: its id, and the name kept for it.
fn actor_in_full(a: Option<crate::id::Actor>, name: &Option<String>) -> String {
    match (a, name) {
        (Some(a), Some(n)) => format!("{} (name:{n})", a.hex()),
        (Some(a), None) => a.hex(),
        (None, _) => "-".into(),
    }
}

/// The fields of a holder and the rest talking: checkpoint, cancel request, output.
fn talk_fields(v: &NodeView) -> Vec<(&'static str, String)> {
    let n = &v.node;
    let opt = |o: Option<String>| o.unwrap_or_else(|| "-".to_string());
    let cancel = n.cancel_requested.as_ref().map(|c| {
        let by =
            c.by.map(|a| actor(&a, &v.names.cancel_by))
                .unwrap_or_else(|| "-".into());
        let why = c.reason.as_deref().unwrap_or("-");
        format!("requested at {} by {by}: {why}", iso_time(c.at))
    });
    let children = n.children.map(|c| {
        format!(
            "{} of {} finished ({} done, {} failed, {} cancelled)",
            c.total - c.open(),
            c.total,
            c.done,
            c.failed,
            c.cancelled
        )
    });
    let deadline = n.deadline.map(|d| match n.overdue_at {
        Some(at) if v.overdue => format!("{} (overdue, recorded {})", iso_time(d), iso_time(at)),
        _ if v.overdue => format!("{} (overdue)", iso_time(d)),
        _ => iso_time(d),
    });
    let spent = (n.budget.is_some() || !n.spent.is_zero()).then(|| {
        let over = n.is_over_budget();
        format!(
            "{} (this claim: {}){}",
            n.spent,
            n.claim_spent,
            if over { ", over budget" } else { "" }
        )
    });
    vec![
        ("progress", opt(n.progress.clone())),
        ("progress_at", opt(n.progress_at.map(iso_time))),
        ("cancel", opt(cancel)),
        ("output", opt(n.output.clone())),
        ("children", opt(children)),
        ("deadline", opt(deadline)),
        ("overdue", v.overdue.to_string()),
        ("budget", opt(n.budget.map(|b| b.to_string()))),
        ("spent", opt(spent)),
    ]
}

pub fn show(v: &NodeView) -> String {
    let n = &v.node;
    let opt = |o: Option<String>| o.unwrap_or_else(|| "-".to_string());
    let time = |t: Option<u64>| t.map(iso_time).unwrap_or_else(|| "-".to_string());
    let ids = |v: &[crate::id::Id]| {
        if v.is_empty() {
            "-".to_string()
        } else {
            v.iter().map(|i| i.hex()).collect::<Vec<_>>().join(" ")
        }
    };
    let list = |v: &[String]| {
        if v.is_empty() {
            "-".to_string()
        } else {
            v.join(", ")
        }
    };
    let fields: Vec<(&str, String)> = vec![
        ("id", n.id.hex()),
        ("summary", n.summary.clone()),
        ("status", n.status.to_string()),
        ("display", v.display.as_str().to_string()),
        ("ready", v.ready.to_string()),
        ("why", opt(v.why.clone())),
        ("generation", n.generation.to_string()),
        ("holder", actor_in_full(n.holder, &v.names.holder)),
        ("attempts", n.attempts.to_string()),
        ("max_attempts", opt(n.max_attempts.map(|m| m.to_string()))),
        ("claimed_at", time(n.claimed_at)),
        ("renewed_at", time(n.renewed_at)),
        ("ttl", opt(n.ttl_ms.map(crate::duration::format_ms))),
        ("lease_end", time(n.lease_end())),
        (
            "workspace",
            if n.workspace.is_empty() {
                "-".into()
            } else {
                n.workspace.clone()
            },
        ),
        ("kind", n.kind.clone()),
        ("parent", opt(n.parent.map(|p| p.hex()))),
        ("deps", ids(&n.deps)),
        ("soft_deps", ids(&n.soft_deps)),
        (
            "role",
            if n.role.is_empty() {
                "-".into()
            } else {
                n.role.clone()
            },
        ),
        ("priority", n.priority.to_string()),
        ("estimate", n.estimate.to_string()),
        ("labels", list(&n.labels)),
        ("resources", list(&n.resources)),
        ("ref", opt(n.ref_.clone())),
        ("note", opt(n.note.clone())),
        (
            "completed_by",
            actor_in_full(n.completed_by, &v.names.completed_by),
        ),
        ("not_before", time(n.not_before)),
        ("created_at", iso_time(n.created_at)),
        ("updated_at", iso_time(n.updated_at)),
        ("archived", n.archived.to_string()),
    ];
    // Every value on its line, whatever text a field holds.
    let mut out = String::new();
    for (k, val) in fields.into_iter().chain(talk_fields(v)) {
        let _ = writeln!(out, "{k:<13}{}", one_line(&val));
    }
    out
}

/// What `renew` prints when the holder was asked to stop.
pub fn cancel_request(id: crate::id::Id, c: &crate::model::CancelRequest) -> String {
    let by = c.by.map(|a| a.hex()).unwrap_or_else(|| "-".into());
    let why = c
        .reason
        .as_deref()
        .map(one_line)
        .unwrap_or_else(|| "-".into());
    format!(
        "cancel requested  {}  at={}  by={by}  reason: {why}\nstop the work and complete the node cancelled (or finish it)\n",
        id.short(),
        iso_time(c.at)
    )
}

pub fn ready(picks: &[Pick]) -> String {
    let mut out = String::new();
    for p in picks {
        let s = &p.summary;
        let path: Vec<String> = p.path.iter().map(|i| i.short()).collect();
        let _ = writeln!(
            out,
            "{}  critical={}  {}  (path: {})",
            p.id.short(),
            p.critical,
            one_line(s),
            path.join(" > ")
        );
    }
    out
}

pub fn log(lines: &[HistoryLine]) -> String {
    let mut out = String::new();
    for h in lines {
        let e = &h.event;
        let _ = write!(out, "{}  {:<9}", iso_time(e.at), e.verb);
        if let Some(n) = e.node {
            let _ = write!(out, "  {}", n.short());
        }
        if let Some(g) = e.generation {
            let _ = write!(out, "  gen={g}");
        }
        if let Some(a) = e.actor {
            let _ = write!(out, "  actor={}", actor(&a, &h.actor_name));
        }
        if let Some(b) = e.by {
            let _ = write!(out, "  by={}", actor(&b, &h.by_name));
        }
        if let Some(d) = &e.detail {
            let _ = write!(out, "  {}", one_line(d));
        }
        if let Some(o) = &e.output {
            let _ = write!(out, "  output={}", one_line(o));
        }
        if let Some(d) = &e.door {
            let _ = write!(out, "  via={}", one_line(d));
        }
        out.push('\n');
    }
    out
}

/// Milliseconds since the epoch as `YYYY-MM-DDTHH:MM:SS.mmmZ`.
pub fn iso_time(ms: u64) -> String {
    crate::duration::format_time(ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_time_is_utc() {
        assert_eq!(iso_time(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso_time(1_795_000_000_123), "2026-11-18T11:06:40.123Z");
    }
}
