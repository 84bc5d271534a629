//! `claimdag pane`: a live terminal view of the DAG that acts with the current generation.
//!
//! The state and the keys ([`app`]) are apart from the drawing ([`draw`]) and from the
//! terminal (this module): tests press keys on an [`app::App`] and read frames drawn on
//! ratatui's `TestBackend`. The view is redrawn every quarter second (the countdowns move:
//! a claim's lease left, a scheduled node's time till it is ready) and read again only when
//! the store's version moved or a scheduled node's time came: a write by any process shows
//! within a second, and an idle store costs one version check per tick.

pub mod app;
pub mod board;
pub mod draw;
mod term;
#[cfg(test)]
mod tests;

use crate::error::{Error, Result};
use crate::verbs::Ctx;
use app::{App, Key};
use board::Filters;
use ratatui::crossterm::event::{self, Event, KeyCode, KeyEventKind, KeyModifiers};
use std::time::Duration;

/// `claimdag pane` options.
#[derive(clap::Args, Debug)]
pub struct PaneArgs {
    /// The actor the keys act as (32 hex or name:NAME) [default: $CLAIMDAG_ACTOR]; without
    /// one the pane only shows
    #[arg(long, value_name = "ACTOR")]
    pub actor: Option<String>,
    /// Show only nodes of this role (claim-next takes it too)
    #[arg(long, value_name = "R")]
    pub role: Option<String>,
    /// Show only nodes this actor holds
    #[arg(long, value_name = "ACTOR")]
    pub holder: Option<String>,
    /// Show finished nodes too
    #[arg(long)]
    pub all: bool,
    /// Show archived nodes too
    #[arg(long)]
    pub archived: bool,
    /// Show only nodes whose summary contains TEXT (or whose id starts with it)
    #[arg(long, value_name = "TEXT")]
    pub search: Option<String>,
    /// Select this node at start
    #[arg(long, value_name = "NODE")]
    pub select: Option<String>,
    /// Print one frame as plain text and exit, instead of running in the terminal
    #[arg(long)]
    pub dump: bool,
    /// The frame's width for --dump
    #[arg(long, value_name = "N", default_value_t = 100, requires = "dump")]
    pub width: u16,
    /// The frame's height for --dump [default: room for every node and the details]
    #[arg(long, value_name = "N", requires = "dump")]
    pub height: Option<u16>,
}

/// The filters the options ask for.
fn filters(cx: &Ctx<'_>, a: &PaneArgs) -> Result<Filters> {
    if let Some(r) = &a.role {
        crate::verbs::check_role(r)?;
    }
    Ok(Filters {
        workspace: cx.workspace.clone(),
        role: a.role.clone(),
        holder: a
            .holder
            .as_deref()
            .map(|h| crate::Actor::parse_actor(h, "--holder"))
            .transpose()?,
        finished: a.all,
        archived: a.archived,
        search: a.search.clone().unwrap_or_default(),
    })
}

/// Runs the pane (or prints one frame with `--dump`); returns the exit status.
pub fn run(cx: Ctx<'_>, a: &PaneArgs) -> Result<i32> {
    let f = filters(&cx, a)?;
    let select = a.select.as_deref().map(|n| cx.node(n)).transpose()?;
    let mut app = App::new(cx, f)?;
    if let Some(id) = select {
        app.select(id);
    }
    if a.dump {
        app.cx.keep_names();
        print!("{}", draw::dump(&app, a.width, a.height));
        return Ok(0);
    }
    if !std::io::IsTerminal::is_terminal(&std::io::stdout()) {
        return Err(Error::invalid(
            "the pane needs a terminal on stdout: use --dump to print one frame",
        ));
    }
    // Started: the actor's name (`--actor name:NAME`) is kept.
    app.cx.keep_names();
    // Raw mode and the alternate screen; a panic hook and the handler of every signal that
    // ends the pane restore the terminal first.
    let (mut term, signals) = term::enter()?;
    let result = drive(&mut term, &mut app);
    ratatui::restore();
    drop(signals);
    result.map(|()| 0)
}

fn drive(term: &mut ratatui::DefaultTerminal, app: &mut App<'_>) -> Result<()> {
    let tty = |e: std::io::Error| Error::io(std::path::Path::new("<tty>"), &e);
    while !app.quit {
        term.draw(|f| draw::draw(f, app)).map_err(tty)?;
        // A test hook (never in a shipped build): the terminal must be restored on a panic.
        #[cfg(feature = "testing")]
        if std::env::var_os("CLAIMDAG_PANE_PANIC").is_some() {
            panic!("CLAIMDAG_PANE_PANIC is set: a panic after the first frame");
        }
        if event::poll(Duration::from_millis(250)).map_err(tty)? {
            if let Event::Key(k) = event::read().map_err(tty)? {
                if k.kind != KeyEventKind::Release {
                    if let Some(key) = key_of(k.code, k.modifiers) {
                        app.key(key);
                    }
                }
            }
            // A resize redraws at the next turn.
        }
        app.poll();
    }
    Ok(())
}

fn key_of(code: KeyCode, mods: KeyModifiers) -> Option<Key> {
    Some(match code {
        KeyCode::Char('c') if mods.contains(KeyModifiers::CONTROL) => Key::Interrupt,
        KeyCode::Char(c) => Key::Char(c),
        KeyCode::Up => Key::Up,
        KeyCode::Down => Key::Down,
        KeyCode::PageUp => Key::PageUp,
        KeyCode::PageDown => Key::PageDown,
        KeyCode::Home => Key::Home,
        KeyCode::End => Key::End,
        KeyCode::Enter => Key::Enter,
        KeyCode::Esc => Key::Esc,
        KeyCode::Backspace => Key::Backspace,
        _ => return None,
    })
}
