//! The pane without a terminal: frames drawn on ratatui's `TestBackend` for a known store,
//! and every key pressed on the state, checked against what the store then holds.

use super::app::{App, Key, Mode};
use super::board::Filters;
use super::draw;
use crate::verbs::{Ctx, Upsert, Verb};
use crate::{Actor, Id, Status, Store};

struct Fixture {
    _tmp: tempfile::TempDir,
    store: Store,
    me: Actor,
    other: Actor,
}

fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let store = Store::open(Some(&tmp.path().join("claims"))).unwrap();
    store.set_setting("max_held", "0").unwrap();
    Fixture {
        _tmp: tmp,
        store,
        me: Actor::from_name("lead").unwrap(),
        other: Actor::from_name("other").unwrap(),
    }
}

/// A node made as a door makes one: through the verb layer.
fn upsert(s: &Store, u: Upsert) -> Id {
    u.run(&Ctx::new(s, "").unwrap()).unwrap().id
}

fn node(s: &Store, summary: &str, estimate: u64, parent: Option<Id>) -> Id {
    upsert(
        s,
        Upsert {
            summary: summary.into(),
            estimate: Some(estimate),
            parent: parent.map(|p| p.to_string()),
            ..Upsert::default()
        },
    )
}

fn app<'a>(fx: &'a Fixture) -> App<'a> {
    let mut cx = Ctx::new(&fx.store, "").unwrap();
    cx.actor = Some(fx.me);
    App::new(cx, Filters::default()).unwrap()
}

fn frame(app: &App<'_>, width: u16, height: u16) -> String {
    draw::dump(app, width, Some(height))
}

/// The frame's line that shows `id`'s row.
fn row_of(frame: &str, id: Id) -> String {
    let short = &id.hex()[..8];
    frame
        .lines()
        .find(|l| l.contains(short) && l.contains(" g"))
        .unwrap_or_else(|| panic!("no row for {short} in\n{frame}"))
        .to_string()
}

fn keys(app: &mut App<'_>, keys: &str) {
    for c in keys.chars() {
        app.key(Key::Char(c));
    }
}

fn select(app: &mut App<'_>, id: Id) {
    app.select(id);
    assert_eq!(app.selected_node().map(|v| v.node.id), Some(id));
}

fn status(fx: &Fixture, id: Id) -> (Status, u64, Option<Actor>) {
    let v = fx.store.get(id).unwrap();
    (v.node.status, v.node.generation, v.node.holder)
}

#[test]
fn a_frame_shows_statuses_holders_generations_countdowns_and_the_critical_path() {
    let fx = fixture();
    let s = &fx.store;
    let spec = node(s, "write the spec", 3, None);
    let lex = node(s, "tokenize manifests", 3, Some(spec));
    s.link(spec, lex, false).unwrap();
    let ci = node(s, "set up CI", 1, None);
    let quick = node(s, "a quick claim", 1, None);
    s.claim(spec, fx.me, None, Some(600_000)).unwrap();
    s.claim(ci, fx.other, None, Some(600_000)).unwrap();
    s.claim(quick, fx.other, None, Some(1)).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(5));
    let app = app(&fx);
    let f = frame(&app, 110, 40);
    assert!(f.contains("claimdag pane"), "{f}");
    assert!(
        f.contains("claimed 2") && f.contains("expired 1") && f.contains("todo 1"),
        "{f}"
    );
    let spec_row = row_of(&f, spec);
    assert!(
        spec_row.contains("claimed") && spec_row.contains("g2") && spec_row.contains(" me "),
        "{spec_row}"
    );
    assert!(
        spec_row.contains("9m5") || spec_row.contains("10m00s"),
        "countdown: {spec_row}"
    );
    assert!(
        spec_row.starts_with("│>*"),
        "selected and on the critical path: {spec_row}"
    );
    let lex_row = row_of(&f, lex);
    assert!(
        lex_row.starts_with("│ *") && lex_row.contains("  tokenize"),
        "{lex_row}"
    );
    assert!(
        lex_row.contains(&format!("<- {}:claimed", &spec.hex()[..8])),
        "{lex_row}"
    );
    // The child sits one level under its parent.
    assert!(lex_row.contains("   todo"), "indented: {lex_row}");
    let ci_row = row_of(&f, ci);
    assert!(
        ci_row.starts_with("│  ") && ci_row.contains(&fx.other.hex()[..8]),
        "{ci_row}"
    );
    assert!(row_of(&f, quick).contains("expired"), "{f}");
}

#[test]
fn the_details_show_every_set_field_why_not_ready_prerequisites_and_history() {
    let fx = fixture();
    let s = &fx.store;
    let a = node(s, "parse the header", 1, None);
    let b = node(s, "reject a bad header", 1, None);
    s.link(a, b, false).unwrap();
    s.claim(a, fx.other, None, None).unwrap();
    let mut app = app(&fx);
    select(&mut app, b);
    let f = frame(&app, 100, 60);
    assert!(
        f.contains(&format!(
            "why          waiting on open prerequisite(s): {}",
            a.hex()
        )),
        "{f}"
    );
    assert!(f.contains("prerequisites:"), "{f}");
    let pre = f
        .lines()
        .find(|l| l.contains(&a.short()) && l.contains("parse the header"))
        .unwrap();
    assert!(pre.contains("claimed"), "{pre}");
    assert!(
        f.contains("history:")
            && f.contains("create")
            && f.contains(&format!("link       {}", b.short())),
        "{f}"
    );
    assert!(!f.contains("holder       -"), "unset fields are left out");
}

#[test]
fn filters_search_and_toggles() {
    let fx = fixture();
    let s = &fx.store;
    let a = node(s, "parse the header", 1, None);
    let b = upsert(
        s,
        Upsert {
            summary: "review the parser".into(),
            role: Some("reviewer".into()),
            ..Upsert::default()
        },
    );
    let done = node(s, "already finished", 1, None);
    let g = s.claim(done, fx.other, None, None).unwrap();
    s.complete(done, Status::Done, g, None, None).unwrap();
    let mine = node(s, "held by me", 1, None);
    s.claim(mine, fx.me, None, None).unwrap();
    let mut app = app(&fx);
    assert_eq!(app.rows.len(), 3, "finished nodes are hidden");
    app.key(Key::Char('t'));
    assert_eq!(app.rows.len(), 4);
    assert!(app
        .message
        .as_ref()
        .unwrap()
        .text
        .contains("finished shown"));
    app.key(Key::Char('t'));
    app.key(Key::Char('/'));
    assert_eq!(app.mode, Mode::Search);
    keys(&mut app, "PARSE");
    let shown: Vec<Id> = app
        .rows
        .iter()
        .map(|r| app.snap.nodes[r.node].node.id)
        .collect();
    assert_eq!(shown.len(), 2, "parse the header, review the parser");
    assert!(shown.contains(&a) && shown.contains(&b));
    assert!(frame(&app, 100, 30).contains("/PARSE_"));
    app.key(Key::Enter);
    app.key(Key::Esc);
    assert_eq!(app.rows.len(), 3, "Esc clears the search");
    app.key(Key::Char('m'));
    assert_eq!(app.rows.len(), 1);
    assert_eq!(app.selected_node().unwrap().node.id, mine);
    app.key(Key::Char('m'));
    app.key(Key::Char('p'));
    assert_eq!(app.filters.role.as_deref(), Some("reviewer"));
    assert_eq!(app.rows.len(), 1);
    assert_eq!(app.selected_node().unwrap().node.id, b);
    app.key(Key::Char('p'));
    assert_eq!((app.filters.role.clone(), app.rows.len()), (None, 3));
    // Archived nodes come back with A.
    s.archive("", &[done], None).unwrap();
    app.key(Key::Char('A'));
    assert!(app
        .rows
        .iter()
        .any(|r| app.snap.nodes[r.node].node.id == done));
    assert!(row_of(&frame(&app, 100, 30), done).contains("done/arch"));
}

#[test]
fn every_key_acts_through_the_store_with_the_generation_shown() {
    let fx = fixture();
    let s = &fx.store;
    let a = node(s, "first", 5, None);
    let b = node(s, "second", 1, None);
    let mut app = app(&fx);
    // n: claim next (the longest critical path) as the pane's actor, and follow it.
    app.key(Key::Char('n'));
    assert_eq!(status(&fx, a), (Status::Claimed, 2, Some(fx.me)));
    assert_eq!(app.selected_node().unwrap().node.id, a);
    // r: renew at gen 2.
    app.key(Key::Char('r'));
    assert!(s
        .history(Some(a))
        .unwrap()
        .iter()
        .any(|l| l.event.verb == "renew"));
    // l asks first; y releases at gen 2.
    app.key(Key::Char('l'));
    assert!(matches!(app.mode, Mode::Confirm(..)));
    assert!(frame(&app, 100, 30).contains("y to confirm"));
    assert_eq!(status(&fx, a).0, Status::Claimed, "nothing before y");
    app.key(Key::Char('y'));
    assert_eq!(status(&fx, a), (Status::Todo, 3, None));
    // c: claim the selected node at the generation shown.
    app.key(Key::Char('c'));
    assert_eq!(status(&fx, a), (Status::Claimed, 4, Some(fx.me)));
    // d, then anything but y: cancelled, nothing changes.
    keys(&mut app, "dn");
    assert_eq!(status(&fx, a).0, Status::Claimed);
    assert_eq!(app.message.as_ref().unwrap().text, "cancelled");
    keys(&mut app, "dy");
    assert_eq!(status(&fx, a), (Status::Done, 4, None));
    // t shows it again; o reopens, a archives after it is finished again.
    app.key(Key::Char('t'));
    select(&mut app, a);
    keys(&mut app, "oy");
    assert_eq!(status(&fx, a), (Status::Todo, 5, None));
    keys(&mut app, "cfy");
    assert_eq!(status(&fx, a), (Status::Failed, 6, None));
    keys(&mut app, "ay");
    assert!(fx.store.get(a).unwrap().node.archived);
    // x cancels a todo node.
    select(&mut app, b);
    keys(&mut app, "xy");
    assert_eq!(status(&fx, b), (Status::Cancelled, 1, None));
    // R hands back expired claims.
    let c = node(s, "stalled", 1, None);
    s.claim(c, fx.other, None, Some(1)).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(5));
    keys(&mut app, "Ry");
    assert_eq!(status(&fx, c), (Status::Todo, 3, None));
    assert!(app.message.as_ref().unwrap().text.contains("handed back 1"));
}

#[test]
fn a_refused_action_is_the_message_and_changes_nothing() {
    let fx = fixture();
    let s = &fx.store;
    let a = node(s, "someone else's", 1, None);
    s.claim(a, fx.other, None, None).unwrap();
    let mut app = app(&fx);
    select(&mut app, a);
    keys(&mut app, "dy");
    let m = app.message.clone().unwrap();
    assert!(m.error && m.text.contains("not the holder"), "{m:?}");
    assert_eq!(status(&fx, a), (Status::Claimed, 2, Some(fx.other)));
    assert!(frame(&app, 100, 30).contains("not the holder"));
    // Handed to someone else after the pane read it: the generation shown is stale.
    let b = node(s, "moves on meanwhile", 1, None);
    app.reload();
    select(&mut app, b);
    let g = s.claim(b, fx.other, None, None).unwrap();
    s.release(b, fx.other, g).unwrap();
    app.key(Key::Char('c'));
    let m = app.message.clone().unwrap();
    assert!(m.error && m.text.contains("stale generation"), "{m:?}");
    assert_eq!(status(&fx, b), (Status::Todo, 3, None));
}

#[test]
fn writes_by_another_process_show_at_the_next_poll_and_the_selection_stays() {
    let fx = fixture();
    let a = node(&fx.store, "first", 1, None);
    let mut app = app(&fx);
    select(&mut app, a);
    assert!(!app.poll(), "nothing changed: no reload");
    let other = Store::open(fx.store.dir()).unwrap();
    let b = node(&other, "written elsewhere", 9, None);
    assert!(app.poll());
    assert!(app.rows.iter().any(|r| app.snap.nodes[r.node].node.id == b));
    assert_eq!(
        app.selected_node().unwrap().node.id,
        a,
        "the selection follows its node"
    );
}

#[test]
fn a_small_terminal_says_so_and_no_actor_means_read_only() {
    let fx = fixture();
    node(&fx.store, "first", 1, None);
    let cx = Ctx::new(&fx.store, "").unwrap();
    let mut app = App::new(cx, Filters::default()).unwrap();
    let f = frame_exact(&app, 40, 8);
    assert!(f.contains("terminal too small: 40x8"), "{f}");
    app.key(Key::Char('n'));
    let m = app.message.clone().unwrap();
    assert!(m.error && m.text.contains("no actor"), "{m:?}");
    assert!(fx.store.list(&Default::default()).unwrap()[0]
        .node
        .holder
        .is_none());
    app.key(Key::Char('?'));
    assert!(frame(&app, 100, 30).contains("asks y first"));
    app.key(Key::Char('z'));
    assert_eq!(app.mode, Mode::Normal);
    app.key(Key::Char('q'));
    assert!(app.quit);
}

/// A frame at exactly this size (`dump` never goes below the minimum).
fn frame_exact(app: &App<'_>, width: u16, height: u16) -> String {
    let mut term =
        ratatui::Terminal::new(ratatui::backend::TestBackend::new(width, height)).unwrap();
    term.draw(|f| draw::draw(f, app)).unwrap();
    draw::buffer_text(term.backend().buffer())
}

#[test]
fn a_checkpoint_shows_short_in_its_row_and_whole_in_the_details() {
    let fx = fixture();
    let s = &fx.store;
    let a = node(s, "fetch", 1, None);
    let g = s.claim(a, fx.other, None, None).unwrap();
    let long = "fetched 3 of 10 pages; page 4 is slow to come back from the server";
    s.renew_with(
        a,
        fx.other,
        Some(g),
        None,
        Some(&format!("started\n{long}")),
    )
    .unwrap();
    let mut app = app(&fx);
    select(&mut app, a);
    let f = frame(&app, 100, 40);
    let row = row_of(&f, a);
    assert!(row.contains("~ fetched 3 of 10 pages; p..."), "{row}");
    assert!(!row.contains("[cancel?]"), "{row}");
    assert!(f.contains("progress:"), "{f}");
    let all: String = f
        .lines()
        .map(|l| l.trim_matches('│').trim())
        .collect::<Vec<_>>()
        .join(" ");
    assert!(all.contains("started"), "{f}");
    assert!(
        all.contains("page 4 is slow to"),
        "the whole checkpoint, wrapped:\n{f}"
    );
    assert!(all.contains("come back from the server"), "{f}");
}

#[test]
fn capital_x_asks_the_holder_to_stop_with_a_reason_typed_in_the_footer() {
    let fx = fixture();
    let s = &fx.store;
    let a = node(s, "held by another", 1, None);
    let b = node(s, "nobody holds this", 1, None);
    let g = s.claim(a, fx.other, None, None).unwrap();
    let mut app = app(&fx);
    select(&mut app, a);
    app.key(Key::Char('X'));
    assert_eq!(app.mode, Mode::Reason(a, g));
    keys(&mut app, "spec changedd");
    app.key(Key::Backspace);
    let f = frame(&app, 100, 30);
    assert!(
        f.contains(&format!(
            "cancel reason for {} at gen {g}: spec changed_",
            a.short()
        )),
        "{f}"
    );
    assert!(
        s.get(a).unwrap().node.cancel_requested.is_none(),
        "nothing before Enter"
    );
    app.key(Key::Enter);
    assert_eq!(app.mode, Mode::Normal);
    let c = s.get(a).unwrap().node.cancel_requested.expect("requested");
    assert_eq!(
        (c.by, c.reason.as_deref()),
        (Some(fx.me), Some("spec changed"))
    );
    assert_eq!(status(&fx, a), (Status::Claimed, g, Some(fx.other)));
    let m = app.message.clone().unwrap();
    assert!(!m.error && m.text.contains("cancel requested"), "{m:?}");
    let f = frame(&app, 100, 40);
    assert!(row_of(&f, a).contains("[cancel?] held by another"), "{f}");
    assert!(f.contains("cancel:") && f.contains("spec changed"), "{f}");
    // Esc drops a request; on a todo node the request cancels it.
    select(&mut app, b);
    keys(&mut app, "Xno");
    app.key(Key::Esc);
    assert_eq!(status(&fx, b), (Status::Todo, 1, None));
    assert_eq!(app.message.clone().unwrap().text, "no cancel requested");
    app.key(Key::Char('X'));
    app.key(Key::Enter);
    assert_eq!(status(&fx, b).0, Status::Cancelled);
}

/// A waiting gate is the first row, `y` approves it and `N` rejects one (both asked first,
/// at the generation shown); `T` retries a parked node; an epic's row shows its children
/// finished of all, an overdue node says so; and the keys offered fit 80 columns whatever
/// is selected (only those that act on the selection are offered).
#[test]
fn gates_come_first_and_are_decided_by_key_and_the_footer_fits_80_columns() {
    let fx = fixture();
    let s = &fx.store;
    let epic = upsert(
        s,
        Upsert {
            summary: "release".into(),
            kind: Some("epic".into()),
            ..Upsert::default()
        },
    );
    let work = node(s, "work", 1, Some(epic));
    let gate = |summary: &str| {
        upsert(
            s,
            Upsert {
                summary: summary.into(),
                kind: Some("gate".into()),
                ..Upsert::default()
            },
        )
    };
    let (ship, hold) = (gate("ship it"), gate("hold it"));
    decide_and_retry(&fx, epic, work, ship, hold);
}

/// The second half of the test above: the keys, and the footer at 80 columns.
fn decide_and_retry(fx: &Fixture, epic: Id, work: Id, ship: Id, hold: Id) {
    let s = &fx.store;
    let late = upsert(
        s,
        Upsert {
            summary: "late".into(),
            deadline: Some("2020-01-01T00:00:00Z".into()),
            max_attempts: Some(1),
            ..Upsert::default()
        },
    );
    let mut a = app(fx);
    let f = frame(&a, 100, 30);
    let rows: Vec<&str> = f.lines().filter(|l| l.contains(" g")).collect();
    assert!(
        rows[0].contains("ship it") && rows[1].contains("hold it"),
        "{f}"
    );
    assert!(row_of(&f, epic).contains("[0/1]"), "{f}");
    assert!(row_of(&f, late).contains("[overdue]"), "{f}");
    select(&mut a, ship);
    keys(&mut a, "yy");
    assert_eq!(status(fx, ship).0, Status::Done);
    select(&mut a, hold);
    keys(&mut a, "Ny");
    assert_eq!(status(fx, hold).0, Status::Failed);
    let g = s.claim(late, fx.other, None, None).unwrap();
    s.release(late, fx.other, g).unwrap();
    a.reload();
    select(&mut a, late);
    assert_eq!(
        a.selected_node().unwrap().display,
        crate::DisplayWord::Parked
    );
    keys(&mut a, "Ty");
    assert_eq!(
        a.selected_node().unwrap().display,
        crate::DisplayWord::Ready
    );
    let g = s.claim(work, fx.me, None, None).unwrap();
    s.complete(work, Status::Done, g, Some(fx.me), None)
        .unwrap();
    keys(&mut a, "t");
    a.reload();
    for id in [epic, work, ship, hold, late] {
        select(&mut a, id);
        let f = frame(&a, 80, 30);
        // Every key offered shows whole in the footer's lines (a frame cuts what is wider).
        let footer: String = f.lines().rev().take(3).collect::<Vec<_>>().join("  ");
        let offered = super::app::Action::KEYS
            .iter()
            .filter(|(_, act, _)| act.applies(a.selected_node()));
        for (k, _, what) in offered {
            assert!(
                footer.contains(&format!("{k} {what}")),
                "{k} {what} in\n{f}"
            );
        }
        assert!(footer.contains("t finished"), "{f}");
    }
    assert!(row_of(&frame(&a, 100, 30), epic).contains("[1/1]"));
}

#[test]
fn the_counts_wrap_at_80_columns_and_the_history_names_its_actors() {
    let fx = fixture();
    let a = node(&fx.store, "tokenize manifests", 2, None);
    fx.store.add_actor("other", None).unwrap();
    fx.store.add_actor("lead", None).unwrap();
    let gen = fx.store.claim(a, fx.other, None, None).unwrap();
    let mut app = app(&fx);
    select(&mut app, a);
    for width in [80, 100] {
        let f = frame(&app, width, 40);
        assert!(
            f.contains("cancelled 0"),
            "the last count is cut at {width}:\n{f}"
        );
        assert!(f.contains("* critical path 1"), "{f}");
    }
    let f = frame(&app, 100, 40);
    assert!(
        f.contains("actor name:lead  write"),
        "the pane's actor by name:\n{f}"
    );
    assert!(
        f.contains(&format!(
            "claim      {}  gen={gen}  actor=name:other",
            a.short()
        )),
        "the history names the actor as `log` does:\n{f}"
    );
}

#[test]
fn the_help_fits_80_columns_whole() {
    let fx = fixture();
    node(&fx.store, "a node", 1, None);
    let mut app = app(&fx);
    keys(&mut app, "?");
    assert_eq!(app.mode, Mode::Help);
    for height in [40, 24] {
        let f = frame(&app, 80, height);
        let flat = f
            .lines()
            .map(|l| l.trim_matches(|c: char| c == '│' || c == ' '))
            .collect::<Vec<_>>()
            .join(" ");
        for whole in [
            "q or Ctrl-C quits.",
            "Any key closes this.",
            "(asks the reason: Enter sends it, Esc drops it)",
            "A archived, m mine, p role, h holder, w workspace (each steps)",
            "n  claim next",
            "R  reclaim expired",
        ] {
            assert!(
                flat.contains(whole),
                "{whole:?} is cut at 80x{height}:\n{f}"
            );
        }
    }
}
