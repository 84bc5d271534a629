//! Drawing one frame of the pane from its state: a header with the store and the counts by
//! status, the forest of nodes, the selected node's details and history, and a footer with
//! the message line and the keys. Nothing here reads the store or changes the state. Text
//! from the store (summaries, fields, the store's name, messages) is drawn through
//! `text::one_line`, as every text form prints it: one line, control and bidi characters
//! escaped.

use super::app::{actor_label, Action, App, Mode};
use super::board::Board;
use crate::verbs::text;
use crate::{DisplayWord, NodeView};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph};
use ratatui::Frame;

/// The smallest terminal the pane draws in.
pub const MIN_WIDTH: u16 = 60;
pub const MIN_HEIGHT: u16 = 12;

/// The width from which details go beside the forest instead of under it.
const SIDE_BY_SIDE: u16 = 120;

/// The colour of a display word: the fills of `claimdag graph`.
pub fn colour(d: DisplayWord) -> Color {
    let hex = crate::graph::colour(d).trim_start_matches('#');
    let byte = |i: usize| u8::from_str_radix(&hex[i..i + 2], 16).unwrap_or(0);
    Color::Rgb(byte(0), byte(2), byte(4))
}

/// The critical path's colour, as `graph` draws it.
const CRITICAL: Color = Color::Rgb(0xd6, 0x27, 0x28);

/// The part of the body one frame of a dump shows: `rows` rows of the forest from row `top`
/// (and, side by side, the details' lines from `top`).
#[derive(Debug, Clone, Copy)]
struct Window {
    top: usize,
    rows: usize,
}

/// The most forest rows one frame of a dump holds: a longer forest is drawn in frames of
/// this many rows, joined into one (a frame has at most 65,535 rows).
const DUMP_ROWS: usize = 4096;

/// Draws the whole pane.
pub fn draw(f: &mut Frame<'_>, app: &App<'_>) {
    frame(f, app, None);
}

/// Draws the pane, the forest scrolled to the selection, or to `window` for a dump.
fn frame(f: &mut Frame<'_>, app: &App<'_>, window: Option<Window>) {
    let area = f.area();
    if area.width < MIN_WIDTH || area.height < MIN_HEIGHT {
        let msg = format!(
            "terminal too small: {}x{}; the pane needs at least {MIN_WIDTH}x{MIN_HEIGHT} (q quits)",
            area.width, area.height
        );
        f.render_widget(
            Paragraph::new(msg).wrap(ratatui::widgets::Wrap { trim: true }),
            area,
        );
        return;
    }
    let mut details = details(app, detail_width(area.width));
    let shown = window.map_or(app.rows.len(), |w| w.rows);
    let footer = footer(app, usize::from(area.width));
    let head_lines = header(app, usize::from(area.width));
    let [head, body, foot] = Layout::vertical([
        Constraint::Length(lines_u16(head_lines.len())),
        Constraint::Min(4),
        Constraint::Length(lines_u16(footer.len())),
    ])
    .areas(area);
    f.render_widget(Paragraph::new(head_lines), head);
    let (tree_area, detail_area) = if area.width >= SIDE_BY_SIDE {
        let [t, d] = Layout::horizontal([Constraint::Percentage(62), Constraint::Percentage(38)])
            .areas(body);
        if let Some(w) = window {
            details.drain(..w.top.min(details.len()));
        }
        (t, d)
    } else {
        // The forest takes what its rows need when the details still fit under it; else
        // the details get at most half.
        let (rows, info) = (lines_u16(shown + 2), lines_u16(details.len() + 2));
        let cut = if rows.saturating_add(info) <= body.height {
            Constraint::Length(rows.max(3))
        } else {
            Constraint::Min(body.height.saturating_sub(info.min(body.height / 2)))
        };
        let [t, d] = Layout::vertical([cut, Constraint::Min(3)]).areas(body);
        (t, d)
    };
    tree(f, app, tree_area, window.map(|w| w.top));
    let title = app
        .selected_node()
        .map(|v| format!(" {} ", v.node.id.short()))
        .unwrap_or_default();
    f.render_widget(
        Paragraph::new(details).block(Block::bordered().title(title)),
        detail_area,
    );
    f.render_widget(Paragraph::new(footer), foot);
    if app.mode == Mode::Help {
        help(f, area);
    }
}

/// The store line, then the counts by display word and the critical path's length,
/// wrapped at `width` columns.
fn header(app: &App<'_>, width: usize) -> Vec<Line<'static>> {
    let s = &app.snap;
    let first = format!(
        "claimdag pane  {}  workspace {:?}  actor {}  write {}",
        s.location,
        app.filters.workspace,
        actor_label(app.cx.actor, &s.names),
        s.version
    );
    let mut items: Vec<Span<'static>> = s
        .counts()
        .into_iter()
        .map(|(d, n)| Span::styled(format!("{} {n}", d.as_str()), Style::new().fg(colour(d))))
        .collect();
    items.push(Span::styled(
        format!("* critical path {}", s.critical.len()),
        Style::new().fg(CRITICAL),
    ));
    let mut out = vec![Line::from(text::one_line(&first))];
    let mut line: Vec<Span<'static>> = Vec::new();
    let mut used = 0;
    for item in items {
        let w = item.content.chars().count();
        if !line.is_empty() && used + 2 + w > width {
            out.push(Line::from(std::mem::take(&mut line)));
            used = 0;
        }
        if !line.is_empty() {
            line.push(Span::raw("  "));
            used += 2;
        }
        used += w;
        line.push(item);
    }
    out.push(Line::from(line));
    out
}

/// `4m05s`, `59s`, `expired 12s ago`.
fn countdown(ms: i64) -> String {
    if ms <= 0 {
        return "expired".into();
    }
    let s = (ms + 999) / 1000;
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
    }
}

/// One forest line: selection and critical-path marks, status, id, generation, holder,
/// lease, summary and prerequisites.
fn row(app: &App<'_>, v: &NodeView, depth: u16, selected: bool) -> Line<'static> {
    let s = &app.snap;
    let n = &v.node;
    let d = s.display(v);
    let critical = s.on_critical_path(&n.id);
    // The holder's name (its first 8 characters), else its id's.
    let holder = match (n.holder, &v.names.holder) {
        (Some(h), _) if Some(h) == app.cx.actor => "me".to_string(),
        (Some(_), Some(name)) => name.chars().take(8).collect(),
        (Some(h), None) => h.hex()[..8].to_string(),
        (None, _) => "-".into(),
    };
    // The lease's countdown, or a scheduled node's till it is ready.
    let lease = s
        .lease_left(v)
        .or_else(|| s.scheduled_left(v))
        .map(countdown)
        .unwrap_or_default();
    let word = if n.archived {
        format!("{}/arch", d.as_str())
    } else {
        d.as_str().to_string()
    };
    let indent = "  ".repeat(depth.min(12) as usize);
    let mut spans = vec![
        Span::raw(if selected { ">" } else { " " }),
        Span::styled(if critical { "*" } else { " " }, Style::new().fg(CRITICAL)),
        Span::raw(format!(" {indent}")),
        Span::styled(format!("{word:<9}"), Style::new().fg(colour(d))),
        Span::styled(format!(" {}", &n.id.hex()[..8]), id_style(critical)),
        Span::raw(format!("  g{:<3} {holder:<8} ", n.generation)),
        Span::styled(format!("{lease:>7}"), lease_style(d)),
        Span::raw("  "),
    ];
    if n.cancel_requested.is_some() {
        spans.push(Span::styled("[cancel?] ", CANCEL));
    }
    if v.overdue {
        spans.push(Span::styled("[overdue] ", CANCEL));
    }
    if let Some(c) = n.children {
        spans.push(Span::styled(
            format!("[{}/{}] ", c.total - c.open(), c.total),
            Style::new().fg(Color::Cyan),
        ));
    }
    spans.push(Span::raw(text::one_line(&n.summary)));
    if let Some(p) = n.progress.as_deref() {
        spans.push(Span::styled(
            format!("  ~ {}", short_progress(p)),
            Style::new().fg(Color::Cyan),
        ));
    }
    let deps = prerequisites(s, v);
    if !deps.is_empty() {
        spans.push(Span::styled(
            format!("  <- {deps}"),
            Style::new().fg(Color::DarkGray),
        ));
    }
    let mut line = Line::from(spans);
    if selected {
        line = line.style(Style::new().add_modifier(Modifier::REVERSED));
    }
    line
}

/// A cancel request stands out.
const CANCEL: Style = Style::new().fg(Color::Red).add_modifier(Modifier::BOLD);

/// The most characters of a checkpoint a row shows.
const PROGRESS_CHARS: usize = 24;

/// A checkpoint's short form for a row: its last line that has text, escaped, at most
/// [`PROGRESS_CHARS`] characters (`...` when cut).
fn short_progress(p: &str) -> String {
    let line = p.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("");
    let line = text::one_line(line.trim());
    match line.char_indices().nth(PROGRESS_CHARS) {
        Some((cut, _)) => format!("{}...", &line[..cut]),
        None => line,
    }
}

/// An expired lease stands out.
fn lease_style(d: DisplayWord) -> Style {
    match d {
        DisplayWord::Expired => Style::new().fg(colour(d)).add_modifier(Modifier::BOLD),
        _ => Style::new(),
    }
}

fn id_style(critical: bool) -> Style {
    if critical {
        Style::new().fg(CRITICAL).add_modifier(Modifier::BOLD)
    } else {
        Style::new()
    }
}

/// `1ba96a7c:done 55c39d6f~todo` (`~` for a soft link).
fn prerequisites(s: &Board, v: &NodeView) -> String {
    v.node
        .prerequisites()
        .map(|(dep, soft)| {
            let word = s.get(&dep).map_or("archived", |d| s.display(d).as_str());
            format!("{}{}{word}", &dep.hex()[..8], if soft { "~" } else { ":" })
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The forest from row `top`, else scrolled to keep the selected row in view.
fn tree(f: &mut Frame<'_>, app: &App<'_>, area: Rect, top: Option<usize>) {
    let inner = area.height.saturating_sub(2) as usize;
    app.page.set(inner.max(1));
    let top = top.unwrap_or((app.selected + 1).saturating_sub(inner));
    let lines: Vec<Line<'static>> = app
        .rows
        .iter()
        .enumerate()
        .skip(top)
        .take(inner)
        .map(|(i, r)| row(app, &app.snap.nodes[r.node], r.depth, i == app.selected))
        .collect();
    let title = format!(" nodes {}/{} ", app.rows.len(), app.snap.nodes.len());
    let body = if app.rows.is_empty() {
        vec![Line::from(
            "  nothing to show: t shows finished nodes, Esc clears the search",
        )]
    } else {
        lines
    };
    f.render_widget(
        Paragraph::new(body).block(Block::bordered().title(title)),
        area,
    );
}

/// About how many columns the details have inside their box in a frame `width` wide (a
/// column or two fewer than the layout gives, never more).
fn detail_width(width: u16) -> usize {
    let outer = match width >= SIDE_BY_SIDE {
        true => u32::from(width) * 38 / 100,
        false => u32::from(width),
    };
    (outer as usize).saturating_sub(3).max(20)
}

/// `text` escaped and cut into lines of at most `width` characters, each after `indent`.
fn wrapped(text: &str, indent: &str, width: usize, style: Style) -> Vec<Line<'static>> {
    let chars: Vec<char> = text::one_line(text).chars().collect();
    let room = width.saturating_sub(indent.len()).max(8);
    let mut out: Vec<Line<'static>> = chars
        .chunks(room)
        .map(|c| Line::styled(format!("{indent}{}", c.iter().collect::<String>()), style))
        .collect();
    if out.is_empty() {
        out.push(Line::styled(indent.to_string(), style));
    }
    out
}

/// The selected node's fields, prerequisites and history; the checkpoint and a cancel
/// request whole, wrapped at `width` columns.
pub fn details(app: &App<'_>, width: usize) -> Vec<Line<'static>> {
    let Some(v) = app.selected_node() else {
        return vec![Line::from("no node selected")];
    };
    let s = &app.snap;
    // Every field that is set, as `show` prints it.
    // The checkpoint and a cancel request come whole, wrapped, below the one-line fields.
    let mut out: Vec<Line<'static>> = Vec::new();
    for l in text::show(v).lines().filter(|l| !l.ends_with(" -")) {
        match (l.starts_with("progress "), l.strip_prefix("cancel ")) {
            (true, _) => {}
            (_, Some(rest)) => {
                out.push(Line::styled("cancel:", CANCEL));
                out.extend(wrapped(rest.trim_start(), "  ", width, CANCEL));
            }
            _ => out.push(Line::from(l.to_string())),
        }
    }
    if let Some(p) = v.node.progress.as_deref() {
        out.push(Line::from("progress:"));
        for l in p.lines() {
            out.extend(wrapped(l, "  ", width, Style::new()));
        }
    }
    if let Some(left) = s.lease_left(v) {
        out.push(Line::from(format!("lease left   {}", countdown(left))));
    }
    if let Some(left) = s.scheduled_left(v) {
        out.push(Line::from(format!("ready in     {}", countdown(left))));
    }
    let deps: Vec<_> = v.node.prerequisites().collect();
    if !deps.is_empty() {
        out.push(Line::from("prerequisites:"));
        for (dep, soft) in deps {
            let (word, summary) = match s.get(&dep) {
                Some(d) => (s.display(d), text::one_line(&d.node.summary)),
                None => (DisplayWord::Done, "(archived)".into()),
            };
            out.push(Line::from(vec![
                Span::raw(format!("  {}  ", dep.short())),
                Span::styled(
                    format!("{:<9}", word.as_str()),
                    Style::new().fg(colour(word)),
                ),
                Span::raw(format!(" {}{summary}", if soft { "soft  " } else { "" })),
            ]));
        }
    }
    if !app.history.is_empty() {
        out.push(Line::from("history:"));
        let shown = app.history.len().saturating_sub(8);
        for l in text::log(&app.history[shown..]).lines() {
            out.push(Line::from(format!("  {l}")));
        }
    }
    out
}

/// The message line, then the keys that do something to the selected node, wrapped at
/// `width` columns.
fn footer(app: &App<'_>, width: usize) -> Vec<Line<'static>> {
    let first = if let Some(q) = app.question() {
        Line::styled(
            q,
            Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD),
        )
    } else if let Mode::Reason(id, gen) = app.mode {
        Line::styled(
            format!(
                "cancel reason for {} at gen {gen}: {}_   (Enter asks, Esc drops)",
                id.short(),
                text::one_line(&app.reason)
            ),
            Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD),
        )
    } else if app.mode == Mode::Search {
        Line::from(format!(
            "/{}_   (Enter keeps it, Esc clears it)",
            text::one_line(&app.filters.search)
        ))
    } else if let Some(m) = &app.message {
        let style = if m.error {
            Style::new().fg(Color::Red)
        } else {
            Style::new().fg(Color::Green)
        };
        Line::styled(text::one_line(&m.text), style)
    } else {
        Line::from(text::one_line(&app.describe_filters()))
    };
    let selected = app.selected_node();
    let keys: Vec<String> = ["? help", "q quit"]
        .map(String::from)
        .into_iter()
        .chain(
            Action::KEYS
                .iter()
                .filter(|(_, a, _)| a.applies(selected))
                .map(|(k, _, what)| format!("{k} {what}")),
        )
        .chain(["/ search", "t finished"].map(String::from))
        .collect();
    let mut out = vec![first];
    let mut line = String::new();
    for k in keys {
        if !line.is_empty() && line.len() + 2 + k.len() > width {
            out.push(Line::styled(std::mem::take(&mut line), KEYS));
        }
        if !line.is_empty() {
            line.push_str("  ");
        }
        line.push_str(&k);
    }
    out.push(Line::styled(line, KEYS));
    out
}

/// The keys' line.
const KEYS: Style = Style::new().fg(Color::DarkGray);

fn help(f: &mut Frame<'_>, area: Rect) {
    let mut lines = Vec::new();
    for (k, a, what) in Action::KEYS {
        let ask = match a {
            Action::RequestCancel => "  (asks the reason: Enter sends it, Esc drops it)",
            _ if a.asks_first() => "  (asks y first)",
            _ => "",
        };
        lines.push(Line::from(format!("  {k}  {what}{ask}")));
    }
    for l in [
        "Moving: Up/Down or j/k, PgUp/PgDn, Home/End or g/G",
        "Filters: / search summaries, ids and words (/scheduled), t finished,",
        "         A archived, m mine, p role, h holder, w workspace (each steps)",
        "Countdowns: a claim's lease left; a scheduled node's time till ready",
        "Esc clears the search and the message; q or Ctrl-C quits.",
        "Any key closes this.",
    ] {
        lines.push(Line::from(l));
    }
    // The whole frame, so that it fits an 80x24 terminal; lines wrap rather than being cut.
    let w = area.width.min(76);
    let inner = usize::from(w.saturating_sub(2)).max(1);
    let wrapped: usize = lines.iter().map(|l| l.width().max(1).div_ceil(inner)).sum();
    let h = area.height.min(lines_u16(wrapped + 2));
    let popup = Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    );
    f.render_widget(Clear, popup);
    f.render_widget(
        Paragraph::new(lines)
            .wrap(ratatui::widgets::Wrap { trim: false })
            .block(Block::bordered().title(" keys: as the pane's actor, at the generation shown ")),
        popup,
    );
}

/// One frame as plain text (`--dump`): `width` columns, and enough rows for every node and
/// the details unless `height` is given. A forest longer than `DUMP_ROWS` is drawn in
/// frames of that many rows whose lines are joined: the same text as one tall frame.
pub fn dump(app: &App<'_>, width: u16, height: Option<u16>) -> String {
    let width = width.max(MIN_WIDTH);
    if let Some(h) = height {
        return frame_lines(app, width, h.max(MIN_HEIGHT), None).concat();
    }
    let info = details(app, detail_width(width)).len();
    let foot = footer(app, usize::from(width)).len();
    let head = header(app, usize::from(width)).len();
    let side = width >= SIDE_BY_SIDE;
    // The lines of the body that pieces share: side by side the forest's and the details',
    // else the forest's (the details come under it, in the last piece).
    let body = if side {
        app.rows.len().max(info)
    } else {
        app.rows.len()
    };
    let mut out = String::new();
    let mut top = 0;
    loop {
        let rows = (body - top).min(DUMP_ROWS);
        let (first, last) = (top == 0, top + rows == body);
        let tall = if side {
            rows + head + 2 + foot
        } else {
            rows + info + head + 4 + foot
        };
        let window = Window { top, rows };
        let lines = frame_lines(app, width, lines_u16(tall).max(MIN_HEIGHT), Some(window));
        // The header and the top border come from the first piece, the bottom border, the
        // details under the forest and the footer from the last.
        let from = if first { 0 } else { head + 1 };
        let to = if last { lines.len() } else { head + 1 + rows };
        out.extend(
            lines[from.min(lines.len())..to.min(lines.len())]
                .iter()
                .cloned(),
        );
        if last {
            return out;
        }
        top += rows;
    }
}

/// A count of lines as a frame's height (at most 65,535).
fn lines_u16(n: usize) -> u16 {
    u16::try_from(n).unwrap_or(u16::MAX)
}

/// One frame of `width` x `height` drawn on a test backend, as lines of text.
fn frame_lines(app: &App<'_>, width: u16, height: u16, window: Option<Window>) -> Vec<String> {
    let backend = ratatui::backend::TestBackend::new(width, height);
    let Ok(mut term) = ratatui::Terminal::new(backend);
    let Ok(_) = term.draw(|f| frame(f, app, window));
    buffer_text(term.backend().buffer())
        .split_inclusive('\n')
        .map(str::to_string)
        .collect()
}

/// A buffer's cells as lines of text, trailing blanks trimmed.
pub fn buffer_text(buf: &ratatui::buffer::Buffer) -> String {
    let mut out = String::new();
    for y in 0..buf.area.height {
        let mut line = String::new();
        for x in 0..buf.area.width {
            line.push_str(buf[(x, y)].symbol());
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}
