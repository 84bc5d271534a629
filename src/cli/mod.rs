//! The `claimdag` command. It uses only the public [`Store`] API, like any other front door,
//! and maps errors to messages and exit codes in one place ([`report`]).

mod args;
mod print;

use crate::duration::parse_ms;
use crate::error::{Error, Result};
use crate::id::Id;
use crate::model::Status;
use crate::rules::Upsert;
use crate::store::{ListFilter, Store};
use args::{Cli, Verb};
use clap::Parser;
use serde_json::{json, Value};
use std::ffi::OsString;
use std::io::Write;

type Render = Box<dyn FnOnce() -> String>;

/// What a verb prints (text, or JSON with `--json`), and its exit status. Each form is built
/// only when printed, so a large listing is rendered once.
struct Done {
    text: Render,
    json: Render,
    exit: i32,
}

impl Done {
    fn new(text: impl Into<String>, json: Value) -> Done {
        let text = text.into();
        Done::lazy(move || text, move || json.to_string())
    }

    fn lazy(
        text: impl FnOnce() -> String + 'static,
        json: impl FnOnce() -> String + 'static,
    ) -> Done {
        Done {
            text: Box::new(text),
            json: Box::new(json),
            exit: 0,
        }
    }

    /// Nothing to print; exit 1 (`next`, `claim-next` with nothing ready).
    fn none() -> Done {
        Done {
            exit: 1,
            ..Done::new("", Value::Null)
        }
    }
}

/// Runs the CLI with the process's arguments; returns the exit status.
pub fn main() -> i32 {
    // Past RLIMIT_FSIZE a write should fail with EFBIG (a clean `io` error naming the file),
    // not kill the process with SIGXFSZ halfway through a write.
    // SAFETY: setting a signal's disposition to ignore has no memory-safety preconditions.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
    run(std::env::args_os())
}

/// Parses `args` as the CLI would, without running anything: `Ok` when they form a valid
/// command, else clap's message (for fuzzing and for front doors that validate early).
pub fn parse_args<I, T>(args: I) -> std::result::Result<(), String>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    Cli::try_parse_from(args)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// Runs the CLI with `args` (the first is the program name); returns the exit status.
pub fn run<I, T>(args: I) -> i32
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { 2 } else { 0 };
        }
    };
    let json = cli.json;
    match execute(cli) {
        Ok(done) => {
            let mut out = std::io::stdout().lock();
            let r = if json {
                writeln!(out, "{}", (done.json)())
            } else {
                out.write_all((done.text)().as_bytes())
            };
            match r.and_then(|_| out.flush()) {
                Ok(()) => done.exit,
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => done.exit,
                Err(e) => report(&Error::io(std::path::Path::new("<stdout>"), &e), json),
            }
        }
        Err(e) => report(&e, json),
    }
}

/// Prints an error the SPEC section 4 way and returns its exit code.
fn report(e: &Error, json: bool) -> i32 {
    let code = e.code();
    let mut err = std::io::stderr().lock();
    if json {
        let mut body = json!({"code": code.as_str(), "message": e.to_string()});
        if let Some(n) = e.node() {
            body["node"] = json!(n);
        }
        if let Some(h) = e.holder() {
            body["holder"] = json!(h);
        }
        if let Some(g) = e.generation() {
            body["generation"] = json!(g);
        }
        if let Some(h) = e.held() {
            body["held"] = json!(h);
        }
        if let Some(p) = e.path() {
            body["path"] = json!(p.display().to_string());
        }
        let _ = writeln!(err, "{}", json!({ "error": body }));
    } else {
        let _ = writeln!(err, "error: {e}");
    }
    code.exit_code()
}

fn actor(text: &str, what: &str) -> Result<Id> {
    Id::parse(text.trim(), what)
}

fn dur(text: Option<&str>) -> Result<Option<u64>> {
    text.map(parse_ms).transpose()
}

fn workspace(cli: &Cli) -> Result<String> {
    match &cli.workspace {
        Some(w) => {
            crate::rules::validate_workspace(w)?;
            Ok(w.clone())
        }
        None => crate::store::default_workspace(),
    }
}

fn execute(cli: Cli) -> Result<Done> {
    // The process ends right after one verb: freeing the loaded state node by node would
    // only cost time, so the store is left for the OS to reclaim.
    let store: &Store = Box::leak(Box::new(Store::open(cli.dir.as_deref())?));
    let ws = workspace(&cli)?;
    let node = |text: &str| store.resolve(text);
    Ok(match &cli.verb {
        Verb::Upsert(a) => {
            let parent = a.parent.as_deref().map(node).transpose()?;
            let id = store.upsert(Upsert {
                workspace: ws,
                kind: a.kind.clone(),
                summary: a.summary.clone(),
                parent,
                role: a.role.clone(),
                priority: a.priority,
                estimate: a.estimate,
                labels: (!a.labels.is_empty()).then(|| a.labels.clone()),
                resources: (!a.resources.is_empty()).then(|| a.resources.clone()),
                ref_: a.ref_.clone(),
                max_attempts: a.max_attempts,
            })?;
            Done::new(format!("{id}\n"), json!({ "id": id }))
        }
        Verb::Link {
            soft,
            parent,
            child,
        } => {
            store.link(node(parent)?, node(child)?, *soft)?;
            Done::new("", json!({"ok": true}))
        }
        Verb::Unlink { parent, child } => {
            store.unlink(node(parent)?, node(child)?)?;
            Done::new("", json!({"ok": true}))
        }
        Verb::List(a) => {
            let filter = ListFilter {
                workspace: Some(ws),
                status: a.status.clone(),
                holder: a
                    .holder
                    .as_deref()
                    .map(|h| actor(h, "holder"))
                    .transpose()?,
                terminal: a.terminal || a.all,
                archived: a.archived || a.all,
                only_archived: a.archived && !a.all,
            };
            let views = std::rc::Rc::new(store.list(&filter)?);
            let v2 = views.clone();
            Done::lazy(
                move || print::list(&views),
                move || serde_json::to_string(&*v2).unwrap_or_default(),
            )
        }
        Verb::Show { node: n } => {
            let v = store.get(node(n)?)?;
            Done::new(print::show(&v), v.to_json())
        }
        Verb::Claim {
            node: n,
            assignee,
            gen,
            ttl,
        } => {
            let id = node(n)?;
            let g = store.claim(id, actor(assignee, "assignee")?, *gen, dur(ttl.as_deref())?)?;
            Done::new(format!("gen={g}\n"), json!({"id": id, "generation": g}))
        }
        Verb::Renew {
            node: n,
            actor: a,
            gen,
            ttl,
        } => {
            let id = node(n)?;
            store.renew(id, actor(a, "actor")?, *gen, dur(ttl.as_deref())?)?;
            Done::new("", json!({"ok": true}))
        }
        Verb::Release {
            node: n,
            actor: a,
            gen,
        } => {
            let id = node(n)?;
            let g = store.release(id, actor(a, "actor")?, *gen)?;
            Done::new(format!("gen={g}\n"), json!({"id": id, "generation": g}))
        }
        Verb::Reclaim { lease } => {
            let handed = store.reclaim(&ws, dur(lease.as_deref())?)?;
            let text: String = handed
                .iter()
                .map(|(id, g)| format!("{}  todo  gen={g}\n", id.short()))
                .collect();
            let j: Vec<Value> = handed
                .iter()
                .map(|(id, g)| json!({"id": id, "generation": g}))
                .collect();
            Done::new(text, Value::Array(j))
        }
        Verb::Complete {
            node: n,
            status,
            gen,
            actor: a,
            note,
        } => {
            let st = match Status::parse(status) {
                Some(s) if s.is_terminal() => s,
                _ => {
                    return Err(Error::invalid(format!(
                        "--status must be done, failed or cancelled, got {status:?}"
                    )))
                }
            };
            let id = node(n)?;
            let a = a.as_deref().map(|a| actor(a, "actor")).transpose()?;
            store.complete(id, st, *gen, a, note.as_deref())?;
            Done::new(
                format!("{}  {st}\n", id.short()),
                json!({"id": id, "status": st}),
            )
        }
        Verb::Reopen { node: n, gen } => {
            let id = node(n)?;
            let g = store.reopen(id, *gen)?;
            Done::new(format!("gen={g}\n"), json!({"id": id, "generation": g}))
        }
        Verb::Next(a) => match store.next(&ws, a.role.as_deref())? {
            Some(p) => Done::new(format!("{}\n", p.id), json!({"id": p.id})),
            None => Done::none(),
        },
        Verb::Ready(a) => {
            let picks = store.ready(&ws, a.role.as_deref())?;
            let summaries = store.read(|s, _| {
                picks
                    .iter()
                    .map(|p| s.get(&p.id).map(|n| n.summary.clone()).unwrap_or_default())
                    .collect::<Vec<_>>()
            })?;
            Done::new(
                print::ready(&picks, &summaries),
                Value::Array(
                    picks
                        .iter()
                        .zip(&summaries)
                        .map(|(p, s)| {
                            json!({"id": p.id, "critical": p.critical, "path": p.path, "summary": s})
                        })
                        .collect(),
                ),
            )
        }
        Verb::ClaimNext {
            assignee,
            role,
            ttl,
        } => {
            let a = actor(assignee, "assignee")?;
            match store.claim_next(&ws, a, role.as_deref(), dur(ttl.as_deref())?)? {
                Some((id, g)) => Done::new(
                    format!("{id}  gen={g}\n"),
                    json!({"id": id, "generation": g}),
                ),
                None => Done::none(),
            }
        }
        Verb::Log { node: n } => {
            let id = n.as_deref().map(node).transpose()?;
            let lines = std::rc::Rc::new(store.history(id)?);
            let l2 = lines.clone();
            Done::lazy(
                move || print::log(&lines),
                move || serde_json::to_string(&*l2).unwrap_or_default(),
            )
        }
        Verb::Import { file } => {
            let bytes = if file == "-" {
                let mut b = Vec::new();
                std::io::Read::read_to_end(&mut std::io::stdin(), &mut b)
                    .map_err(|e| Error::io(std::path::Path::new("<stdin>"), &e))?;
                b
            } else {
                std::fs::read(file).map_err(|e| Error::io(std::path::Path::new(file), &e))?
            };
            let plan = crate::rules::Plan::parse(&bytes)?;
            let ids = std::rc::Rc::new(store.import(&ws, plan)?);
            let i2 = ids.clone();
            Done::lazy(
                move || {
                    let mut text = String::with_capacity(ids.len() * 48);
                    for (id, key) in ids.iter() {
                        text.push_str(&format!("{id}  {}\n", print::one_line(key)));
                    }
                    text
                },
                move || {
                    let j: Vec<Value> = i2
                        .iter()
                        .map(|(id, key)| json!({"id": id, "key": key}))
                        .collect();
                    Value::Array(j).to_string()
                },
            )
        }
        Verb::Archive { nodes, older_than } => {
            let ids = nodes.iter().map(|n| node(n)).collect::<Result<Vec<_>>>()?;
            let n = store.archive(&ws, &ids, dur(older_than.as_deref())?)?;
            Done::new(format!("archived {n}\n"), json!({"archived": n}))
        }
        Verb::Unarchive { node: n } => {
            let id = node(n)?;
            let st = store.unarchive(id)?;
            Done::new(
                format!("{}  {st}\n", id.short()),
                json!({"id": id, "status": st}),
            )
        }
        Verb::Graph { format, all } => {
            let f = crate::graph::Format::parse(format).ok_or_else(|| {
                Error::invalid(format!("--format must be dot or mermaid, got {format:?}"))
            })?;
            let text = store.read(|s, now| crate::graph::render(s, &ws, *all, f, now))?;
            let j = json!({"format": format, "graph": text});
            Done::new(text, j)
        }
        Verb::Config { key, value } => config(store, key.as_deref(), value.as_deref())?,
        Verb::Check => {
            let r = store.check()?;
            let ok = r.problems.is_empty();
            let mut text = String::new();
            for p in &r.problems {
                text.push_str(&format!("problem: {p}\n"));
            }
            text.push_str(&format!(
                "{}: {} live nodes, {} archived, {} history events, files and checksums intact\n",
                if ok { "ok" } else { "problems found" },
                r.nodes,
                r.archived,
                r.events
            ));
            for n in &r.notes {
                text.push_str(&format!("note: {n}\n"));
            }
            Done {
                exit: if ok { 0 } else { 6 },
                ..Done::new(
                    text,
                    json!({"ok": ok, "nodes": r.nodes, "archived": r.archived,
                           "events": r.events, "problems": r.problems, "notes": r.notes}),
                )
            }
        }
    })
}

fn config(store: &Store, key: Option<&str>, value: Option<&str>) -> Result<Done> {
    if let Some(k) = key {
        crate::Settings::default().get(k)?;
    }
    let s = match (key, value) {
        (Some(k), Some(v)) => store.set_setting(k, v)?,
        _ => store.settings()?,
    };
    let text: String = match key {
        Some(k) => format!("{}\n", s.get(k)?),
        None => s
            .entries()
            .iter()
            .map(|(k, v)| format!("{k} {v}\n"))
            .collect(),
    };
    let j = json!({"default_ttl_ms": s.default_ttl_ms, "max_held": s.max_held,
                   "max_attempts": s.max_attempts});
    Ok(Done::new(text, j))
}
