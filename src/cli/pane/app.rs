//! The pane's state and what each key does, apart from drawing: tests drive it key by key
//! without a terminal. Every action is a request of the verb layer, made with the node's
//! generation as the pane shows it and the pane's actor; a refusal becomes the message line.

use super::board::{rows, Board, Filters, Row};
use crate::error::{Error, Result};
use crate::id::{Actor, Id};
use crate::model::HistoryLine;
use crate::verbs::{self, Ctx, Verb};
use crate::{DisplayWord, ListFilter, NodeView, Status};

/// A key, as the pane reads it (terminal events are turned into these).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    Char(char),
    Up,
    Down,
    PageUp,
    PageDown,
    Home,
    End,
    Enter,
    Esc,
    Backspace,
    /// Ctrl-C: quit from anywhere.
    Interrupt,
}

/// What a key asks of the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    ClaimNext,
    Claim,
    Renew,
    Release,
    Done,
    Failed,
    Cancel,
    /// Ask the holder of a claimed node to stop (a todo node is cancelled), with a reason.
    RequestCancel,
    Reopen,
    Archive,
    Reclaim,
    /// Decide a gate: done, or failed.
    Approve,
    Reject,
    /// Give a parked node fresh attempts.
    Retry,
}

impl Action {
    /// Every action with its key and what the footer calls it.
    pub const KEYS: [(char, Action, &'static str); 14] = [
        ('n', Action::ClaimNext, "claim next"),
        ('y', Action::Approve, "approve"),
        ('N', Action::Reject, "reject"),
        ('T', Action::Retry, "retry"),
        ('c', Action::Claim, "claim"),
        ('r', Action::Renew, "renew"),
        ('l', Action::Release, "release"),
        ('d', Action::Done, "done"),
        ('f', Action::Failed, "failed"),
        ('x', Action::Cancel, "cancel"),
        ('X', Action::RequestCancel, "ask to cancel"),
        ('o', Action::Reopen, "reopen"),
        ('a', Action::Archive, "archive"),
        ('R', Action::Reclaim, "reclaim expired"),
    ];

    /// Whether the action can do something to `v` (the selected node; `None`: none), as
    /// the footer offers it.
    pub fn applies(self, v: Option<&NodeView>) -> bool {
        use crate::model::{is_container, GATE};
        let Some(v) = v else {
            return matches!(self, Action::ClaimNext | Action::Reclaim);
        };
        let (n, d) = (&v.node, v.display);
        let gate = n.kind == GATE;
        match self {
            Action::ClaimNext | Action::Reclaim => true,
            Action::Claim => matches!(d, DisplayWord::Ready | DisplayWord::Expired) && !gate,
            Action::Renew | Action::Release | Action::Done | Action::Failed => {
                n.status == Status::Claimed
            }
            Action::RequestCancel => n.status == Status::Claimed,
            Action::Cancel => !n.status.is_terminal() && !is_container(&n.kind),
            Action::Reopen => n.status.is_terminal() && !is_container(&n.kind),
            Action::Archive => n.status.is_terminal(),
            Action::Approve | Action::Reject => v.awaits_decision(),
            Action::Retry => d == DisplayWord::Parked,
        }
    }

    /// Actions that end or hand back work ask first.
    pub fn asks_first(self) -> bool {
        !matches!(
            self,
            Action::ClaimNext | Action::Claim | Action::Renew | Action::RequestCancel
        )
    }

    fn of(c: char) -> Option<Action> {
        Action::KEYS
            .iter()
            .find(|(k, _, _)| *k == c)
            .map(|(_, a, _)| *a)
    }
}

/// What the keys do right now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Normal,
    /// Typing a search: characters go into it.
    Search,
    /// An action waits for `y` (anything else cancels it), on this node at this generation.
    Confirm(Action, Option<Id>, u64),
    /// Typing the reason of a cancel request of this node at this generation: characters go
    /// into [`App::reason`]; Enter asks, Esc drops it.
    Reason(Id, u64),
    Help,
}

/// The message line: what the last action did, or why it was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    pub text: String,
    pub error: bool,
}

/// The pane: a board read from the store, the filters, the selection and the mode.
pub struct App<'a> {
    pub cx: Ctx<'a>,
    pub filters: Filters,
    pub snap: Board,
    pub rows: Vec<Row>,
    /// The selected row; the selection follows its node across reloads.
    pub selected: usize,
    selected_id: Option<Id>,
    pub mode: Mode,
    /// The reason of a cancel request being typed ([`Mode::Reason`]).
    pub reason: String,
    pub message: Option<Message>,
    /// The selected node's history (newest last), and for which node and version.
    pub history: Vec<HistoryLine>,
    history_of: Option<(Id, u64)>,
    /// Rows a page up or down moves (the drawing sets it from the terminal's height).
    pub page: std::cell::Cell<usize>,
    pub quit: bool,
}

impl<'a> App<'a> {
    pub fn new(cx: Ctx<'a>, filters: Filters) -> Result<App<'a>> {
        let snap = Board::load(cx.store, &filters)?;
        let mut app = App {
            cx,
            filters,
            snap,
            rows: Vec::new(),
            selected: 0,
            selected_id: None,
            mode: Mode::Normal,
            reason: String::new(),
            message: None,
            history: Vec::new(),
            history_of: None,
            page: std::cell::Cell::new(10),
            quit: false,
        };
        app.refilter();
        Ok(app)
    }

    /// Selects `id` if it is shown.
    pub fn select(&mut self, id: Id) {
        self.selected_id = Some(id);
        self.refilter();
    }

    pub fn selected_node(&self) -> Option<&NodeView> {
        self.rows
            .get(self.selected)
            .map(|r| &self.snap.nodes[r.node])
    }

    /// Reloads when any process wrote since the last read (a cheap version check), or a
    /// scheduled node's time came (its details and reasons change too), keeping the
    /// selection. Returns whether it reloaded.
    pub fn poll(&mut self) -> bool {
        match self.cx.store.version() {
            Ok(v) if v == self.snap.version && !self.snap.time_came() => false,
            Ok(_) => self.reload(),
            Err(e) => {
                self.say_err(&e);
                false
            }
        }
    }

    /// Reads the store again.
    pub fn reload(&mut self) -> bool {
        match Board::load(self.cx.store, &self.filters) {
            Ok(s) => {
                self.snap = s;
                self.refilter();
                true
            }
            Err(e) => {
                self.say_err(&e);
                false
            }
        }
    }

    /// Recomputes the rows after a reload or a filter change, keeping the selected node.
    fn refilter(&mut self) {
        self.rows = rows(&self.snap, &self.filters);
        let keep = self.selected_id.and_then(|id| {
            self.rows
                .iter()
                .position(|r| self.snap.nodes[r.node].node.id == id)
        });
        self.selected = keep.unwrap_or(self.selected.min(self.rows.len().saturating_sub(1)));
        self.selected_id = self.selected_node().map(|v| v.node.id);
        self.load_history();
    }

    /// Reads the selected node's history when the node or the store changed.
    fn load_history(&mut self) {
        let Some(id) = self.selected_id else {
            self.history.clear();
            return;
        };
        if self.history_of == Some((id, self.snap.version)) {
            return;
        }
        match self.cx.store.history(Some(id)) {
            Ok(mut h) => {
                // Actors by the names kept for them, as `log` prints them.
                h.iter_mut().for_each(|l| self.snap.names.name_line(l));
                self.history = h;
            }
            Err(e) => self.say_err(&e),
        }
        self.history_of = Some((id, self.snap.version));
    }

    fn say(&mut self, text: String) {
        self.message = Some(Message { text, error: false });
    }

    fn say_err(&mut self, e: &Error) {
        self.message = Some(Message {
            text: e.to_string(),
            error: true,
        });
    }

    fn move_to(&mut self, row: usize) {
        self.selected = row.min(self.rows.len().saturating_sub(1));
        self.selected_id = self.selected_node().map(|v| v.node.id);
        self.load_history();
    }

    /// Handles one key.
    pub fn key(&mut self, key: Key) {
        if key == Key::Interrupt {
            self.quit = true;
            return;
        }
        match self.mode {
            Mode::Search => self.search_key(key),
            Mode::Reason(id, gen) => self.reason_key(key, id, gen),
            Mode::Confirm(action, id, gen) => {
                self.mode = Mode::Normal;
                if key == Key::Char('y') {
                    self.run(action, id, gen);
                } else {
                    self.say("cancelled".into());
                }
            }
            Mode::Help => self.mode = Mode::Normal,
            Mode::Normal => self.normal_key(key),
        }
    }

    fn search_key(&mut self, key: Key) {
        match key {
            Key::Enter => self.mode = Mode::Normal,
            Key::Esc => {
                self.mode = Mode::Normal;
                self.filters.search.clear();
            }
            Key::Backspace => {
                self.filters.search.pop();
            }
            Key::Char(c) => self.filters.search.push(c),
            _ => return,
        }
        self.refilter();
    }

    /// A key while the reason of a cancel request is typed: Enter asks (with no reason
    /// when none was typed), Esc drops the request.
    fn reason_key(&mut self, key: Key, id: Id, gen: u64) {
        match key {
            Key::Enter => {
                self.mode = Mode::Normal;
                self.run(Action::RequestCancel, Some(id), gen);
                self.reason.clear();
            }
            Key::Esc => {
                self.mode = Mode::Normal;
                self.reason.clear();
                self.say("no cancel requested".into());
            }
            Key::Backspace => {
                self.reason.pop();
            }
            Key::Char(c) => self.reason.push(c),
            _ => {}
        }
    }

    fn normal_key(&mut self, key: Key) {
        let last = self.rows.len().saturating_sub(1);
        match key {
            Key::Up | Key::Char('k') => self.move_to(self.selected.saturating_sub(1)),
            Key::Down | Key::Char('j') => self.move_to(self.selected + 1),
            Key::PageUp => self.move_to(self.selected.saturating_sub(self.page.get())),
            Key::PageDown => self.move_to(self.selected + self.page.get()),
            Key::Home | Key::Char('g') => self.move_to(0),
            Key::End | Key::Char('G') => self.move_to(last),
            Key::Esc => {
                self.message = None;
                if !self.filters.search.is_empty() {
                    self.filters.search.clear();
                    self.refilter();
                }
            }
            Key::Char('q') => self.quit = true,
            Key::Char('?') => self.mode = Mode::Help,
            Key::Char('/') => self.mode = Mode::Search,
            Key::Char(c @ ('t' | 'A' | 'm' | 'p' | 'h' | 'w')) => self.filter_key(c),
            Key::Char(c) => match Action::of(c) {
                Some(a) => self.ask(a),
                None => self.say(format!("{c:?} does nothing: ? lists the keys")),
            },
            _ => {}
        }
    }

    /// The filter keys: `t` finished, `A` archived, `m` mine, `p` role, `h` holder, `w`
    /// workspace (each of the last three steps through the values present).
    fn filter_key(&mut self, c: char) {
        let f = &mut self.filters;
        let mut reload = false;
        match c {
            't' => f.finished = !f.finished,
            'A' => {
                f.archived = !f.archived;
                reload = true;
            }
            'm' => match self.cx.actor {
                Some(me) if f.holder != Some(me) => f.holder = Some(me),
                Some(_) => f.holder = None,
                None => return self.say_err(&no_actor()),
            },
            'p' => {
                let roles =
                    self.present(|v| (!v.node.role.is_empty()).then(|| v.node.role.clone()));
                self.filters.role = step(&roles, &self.filters.role);
            }
            'h' => {
                let holders = self.present(|v| v.node.holder);
                self.filters.holder = step(&holders, &self.filters.holder);
            }
            _ => match self.workspaces() {
                Ok(ws) => {
                    let at = ws.iter().position(|w| *w == self.filters.workspace);
                    let next = at.map_or(0, |i| (i + 1) % ws.len());
                    self.filters.workspace = ws.get(next).cloned().unwrap_or_default();
                    self.cx.workspace = self.filters.workspace.clone();
                    reload = true;
                }
                Err(e) => return self.say_err(&e),
            },
        }
        if reload {
            self.reload();
        } else {
            self.refilter();
        }
        self.say(self.describe_filters());
    }

    /// The distinct values `f` finds among the board's nodes, sorted.
    fn present<T: Ord + Clone>(&self, f: impl Fn(&NodeView) -> Option<T>) -> Vec<T> {
        let mut v: Vec<T> = self.snap.nodes.iter().filter_map(f).collect();
        v.sort();
        v.dedup();
        v
    }

    /// Every workspace of the store ("" included), sorted.
    fn workspaces(&self) -> Result<Vec<String>> {
        let all = self.cx.store.list(&ListFilter {
            terminal: true,
            ..ListFilter::default()
        })?;
        let mut ws: Vec<String> = all.into_iter().map(|v| v.node.workspace).collect();
        ws.push(self.filters.workspace.clone());
        ws.sort();
        ws.dedup();
        Ok(ws)
    }

    pub fn describe_filters(&self) -> String {
        let f = &self.filters;
        let mut parts = vec![format!("workspace {:?}", f.workspace)];
        if let Some(r) = &f.role {
            parts.push(format!("role {r}"));
        }
        if let Some(h) = f.holder {
            parts.push(format!("holder {}", h.short()));
        }
        parts.push(
            if f.finished {
                "finished shown"
            } else {
                "finished hidden"
            }
            .into(),
        );
        if f.archived {
            parts.push("archived shown".into());
        }
        if !f.search.is_empty() {
            parts.push(format!("search {:?}", f.search));
        }
        format!("showing {}: {}", self.rows.len(), parts.join(", "))
    }

    /// Asks before an action that ends or hands back work; runs the others at once.
    fn ask(&mut self, action: Action) {
        let node = self.selected_node().map(|v| (v.node.id, v.node.generation));
        if node.is_none() && !matches!(action, Action::ClaimNext | Action::Reclaim) {
            return self.say_err(&Error::invalid("no node selected"));
        }
        let (id, gen) = (node.map(|n| n.0), node.map_or(0, |n| n.1));
        if let (Action::RequestCancel, Some(id)) = (action, id) {
            self.reason.clear();
            self.mode = Mode::Reason(id, gen);
        } else if action.asks_first() {
            self.mode = Mode::Confirm(action, id, gen);
        } else {
            self.run(action, id, gen);
        }
    }

    /// The question the footer shows while an action waits for `y`.
    pub fn question(&self) -> Option<String> {
        let Mode::Confirm(action, id, gen) = self.mode else {
            return None;
        };
        let what = Action::KEYS
            .iter()
            .find(|k| k.1 == action)
            .map_or("", |k| k.2);
        let node = id
            .map(|i| format!(" {} at gen {gen}", i.short()))
            .unwrap_or_default();
        Some(format!(
            "{what}{node}? y to confirm, any other key to cancel"
        ))
    }

    /// Runs an action through the verb layer and reloads; a refusal is the message.
    fn run(&mut self, action: Action, id: Option<Id>, gen: u64) {
        let needs_actor = !matches!(
            action,
            Action::Reopen
                | Action::Archive
                | Action::Reclaim
                | Action::RequestCancel
                | Action::Approve
                | Action::Reject
                | Action::Retry
        );
        if needs_actor && self.cx.actor.is_none() {
            return self.say_err(&no_actor());
        }
        match self.call(action, id, gen) {
            Ok((text, follow)) => {
                self.say(text);
                self.reload();
                if let Some(id) = follow {
                    self.select(id);
                }
            }
            Err(e) => {
                self.say_err(&e);
                self.reload();
            }
        }
    }

    /// Claims the next node as the pane's actor (with the role filter); selects it after.
    fn claim_next(&self) -> Result<(String, Option<Id>)> {
        let req = verbs::ClaimNext {
            role: self.filters.role.clone(),
            ..verbs::ClaimNext::default()
        };
        Ok(match req.run(&self.cx)?.into_first() {
            Some(c) => (
                format!("claimed {} at gen {}", c.id.short(), c.generation),
                Some(c.id),
            ),
            None => ("nothing is ready to claim".into(), None),
        })
    }

    /// What the action did, in words, and the node to select after it (claim-next's).
    fn call(&self, action: Action, id: Option<Id>, gen: u64) -> Result<(String, Option<Id>)> {
        let cx = &self.cx;
        let node = id.map(|i| i.hex()).unwrap_or_default();
        let short = id.map(|i| i.short()).unwrap_or_default();
        let text = match action {
            Action::ClaimNext => return self.claim_next(),
            Action::Claim => {
                let req = verbs::Claim {
                    node,
                    assignee: None,
                    gen: Some(gen),
                    ttl: None,
                };
                format!("claimed {short} at gen {}", req.run(cx)?.generation)
            }
            Action::Renew => {
                let req = verbs::Renew {
                    node,
                    actor: None,
                    gen: Some(gen),
                    ttl: None,
                    progress: None,
                    usage: None,
                };
                req.run(cx)?;
                format!("renewed {short} at gen {gen}")
            }
            Action::Release => {
                let req = verbs::Release {
                    node,
                    actor: None,
                    gen,
                    retry_in: None,
                };
                format!("released {short}: now gen {}", req.run(cx)?.generation)
            }
            Action::Done => self.finish(node, Status::Done, gen, &short)?,
            Action::Failed => self.finish(node, Status::Failed, gen, &short)?,
            Action::Cancel => self.finish(node, Status::Cancelled, gen, &short)?,
            Action::RequestCancel => {
                let req = verbs::Cancel {
                    node,
                    reason: Some(self.reason.clone()).filter(|r| !r.is_empty()),
                    actor: None,
                    gen: Some(gen),
                };
                match req.run(cx)?.requested {
                    true => format!("asked the holder of {short} to stop: cancel requested"),
                    false => format!("{short} cancelled at gen {gen}"),
                }
            }
            Action::Reopen => {
                let req = verbs::Reopen {
                    node,
                    gen: Some(gen),
                };
                format!("reopened {short}: now gen {}", req.run(cx)?.generation)
            }
            Action::Archive => {
                let req = verbs::Archive {
                    nodes: vec![node],
                    ..verbs::Archive::default()
                };
                req.run(cx)?;
                format!("archived {short}")
            }
            Action::Reclaim => {
                let req = verbs::Reclaim {
                    lease: None,
                    workspace: None,
                };
                let n = req.run(cx)?.0.len();
                format!("handed back {n} expired claim(s)")
            }
            Action::Approve | Action::Reject | Action::Retry => self.decide(action, node, gen)?,
        };
        Ok((text, None))
    }

    /// A person's decision at `gen`: approve or reject a gate, retry a parked node.
    fn decide(&self, action: Action, node: String, gen: u64) -> Result<String> {
        let cx = &self.cx;
        let short = node.get(..8).unwrap_or_default().to_string();
        let actor = cx.actor.map(|a| a.hex());
        Ok(match action {
            Action::Approve | Action::Reject => {
                let approve = action == Action::Approve;
                let status = if approve {
                    let req = verbs::Approve {
                        node,
                        gen,
                        note: None,
                        actor,
                    };
                    req.run(cx)?.status
                } else {
                    let req = verbs::Reject {
                        node,
                        gen,
                        note: None,
                        actor,
                    };
                    req.run(cx)?.status
                };
                format!("{short}... {status} at gen {gen}")
            }
            _ => {
                let req = verbs::Retry { node, gen };
                format!("retried {short}...: now gen {}", req.run(cx)?.generation)
            }
        })
    }

    /// Completes `node` (shown as `short`) with `status` at `gen`, as the pane's actor.
    fn finish(&self, node: String, status: Status, gen: u64, short: &str) -> Result<String> {
        let req = verbs::Complete {
            node,
            status: status.as_str().into(),
            gen,
            actor: None,
            note: None,
            output: None,
        };
        req.run(&self.cx)?;
        Ok(format!("{short} {status} at gen {gen}"))
    }
}

fn no_actor() -> Error {
    Error::invalid("the pane has no actor: start it with --actor name:NAME or set $CLAIMDAG_ACTOR")
}

/// The value after `current` in `values`, then none again.
fn step<T: PartialEq + Clone>(values: &[T], current: &Option<T>) -> Option<T> {
    match current {
        None => values.first().cloned(),
        Some(c) => {
            let i = values.iter().position(|v| v == c)?;
            values.get(i + 1).cloned()
        }
    }
}

/// The actor the pane acts as, for the header.
pub fn actor_label(actor: Option<Actor>, names: &crate::view::Names) -> String {
    match actor {
        None => "none (read-only: --actor)".into(),
        Some(a) => names
            .get(&a)
            .map_or_else(|| a.short(), |n| format!("name:{n}")),
    }
}
