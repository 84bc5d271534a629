//! The `claimdag` command: clap parsing into the verb layer's requests, and printing its
//! replies (text, or JSON with `--json`) and errors (docs/reference.md, "Exit codes and errors") in one place
//! (`report`). It uses only the public [`Store`] and [`crate::verbs`] API, like any other
//! front door.

mod args;
mod guard;
#[cfg(feature = "mcp")]
pub mod mcp;
#[cfg(feature = "pane")]
pub mod pane;
#[cfg(feature = "serve")]
pub mod serve;
mod watch;
pub mod work;

use crate::error::{Error, Result};
use crate::verbs::{self, Ctx, Printed};
use crate::Store;
use args::{Cli, Command};
use clap::Parser;
use std::ffi::OsString;
use std::io::Write;
use verbs::Described;

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
        Ok(Ran::Exited(code)) => code,
        Ok(Ran::Print(Printed { out: bytes, exit })) => {
            let mut out = std::io::stdout().lock();
            match out.write_all(&bytes).and_then(|_| out.flush()) {
                Ok(()) => exit,
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => exit,
                Err(e) => report(&Error::io(std::path::Path::new("<stdout>"), &e), json),
            }
        }
        Err(e) => report(&e, json),
    }
}

/// Prints an error as docs/reference.md says ("Exit codes and errors") and returns its exit code.
fn report(e: &Error, json: bool) -> i32 {
    let mut err = std::io::stderr().lock();
    if json {
        let _ = writeln!(err, "{}", verbs::error_json(e));
    } else {
        let _ = writeln!(err, "error: {e}");
    }
    e.code().exit_code()
}

/// What a command did.
enum Ran {
    /// A verb's reply as it is printed, to print.
    Print(Printed),
    /// A front door that reports on its own (`work`, `mcp`) ended with this exit status.
    Exited(i32),
}

fn execute(cli: Cli) -> Result<Ran> {
    // The process ends right after one verb: freeing the loaded state node by node would
    // only cost time, so the store is left for the OS to reclaim.
    // The door every write records: the MCP server's, the HTTP server's (whose requests say
    // more: `serve`'s dashboard, its `/mcp`), else the command line's.
    let door = match &cli.command {
        Command::Mcp(_) => "mcp",
        Command::Serve(_) => "http",
        _ => "cli",
    };
    let store: &Store = Box::leak(Box::new(Store::open(cli.dir.as_deref())?.through(door)));
    let cx = Ctx::from_env(store, cli.workspace.as_deref())?;
    let answer = match &cli.command {
        Command::Verb(v) => {
            let fresh = default_store_unmade(&cli, store);
            let printed = v.run_printed(&cx, cli.json);
            if fresh && store.dir().is_some_and(|d| d.exists()) {
                say_default_store(store);
            }
            printed
        }
        Command::Watch(Described(a)) => return watch::run(store, a, cli.json).map(Ran::Exited),
        Command::Work(Described(a)) => {
            let cx = cx.with_actor(a.actor.as_deref())?.with_env_actor()?;
            let dir = store_text(&cli, store);
            let started = || cx.keep_names();
            let exit = work::run(store, &cx.workspace, a, cx.actor, dir, cli.json, &started)?;
            return Ok(Ran::Exited(exit));
        }
        #[cfg(feature = "pane")]
        Command::Pane(Described(a)) => {
            let cx = cx.with_actor(a.actor.as_deref())?.with_env_actor()?;
            return pane::run(cx, a).map(Ran::Exited);
        }
        #[cfg(not(feature = "pane"))]
        Command::Pane(Described(_)) => Err(without("its terminal pane", "pane")),
        #[cfg(not(feature = "serve"))]
        Command::Serve(Described(_)) => Err(without("its HTTP server", "serve")),
        #[cfg(feature = "serve")]
        Command::Serve(Described(a)) => {
            let setup = serve::Setup {
                listen: a.listen,
                token_file: a.token_file.clone(),
                workspace: cx.workspace.clone(),
                max_wait_ms: a.max_wait.ms()?,
                max_body: a.max_body,
                max_streams: a.max_streams as usize,
            };
            serve::serve(store.clone(), setup)?;
            return Ok(Ran::Exited(0));
        }
        #[cfg(not(feature = "mcp"))]
        Command::Mcp(Described(_)) => Err(without("its MCP server", "mcp")),
        #[cfg(feature = "mcp")]
        Command::Mcp(Described(a)) => {
            let cx = cx.with_actor(a.actor.as_deref())?.with_env_actor()?;
            let setup = mcp::Setup {
                workspace: cx.workspace.clone(),
                actor: cx.actor,
                profile: a.tools,
                allow_repos: a.allow_repo.clone(),
                max_wait_ms: a.max_wait.ms()?,
            };
            mcp::serve(store.clone(), setup, || cx.keep_names())?;
            return Ok(Ran::Exited(0));
        }
    };
    answer.map(Ran::Print)
}

/// The store is the default one (no `--dir`, no `$CLAIMDAG_DIR`) and not made yet.
fn default_store_unmade(cli: &Cli, store: &Store) -> bool {
    cli.dir.is_none()
        && std::env::var_os("CLAIMDAG_DIR").is_none_or(|d| d.is_empty())
        && store.dir().is_some_and(|d| !d.exists())
}

/// What the write that made the default store says, once: where the store is.
fn say_default_store(store: &Store) {
    eprintln!(
        "claimdag: made the default store {} (no --dir and no CLAIMDAG_DIR were given; \
         claimdag where shows the store in use)",
        store.location()
    );
}

/// The refusal of a front door this build was made without.
#[allow(dead_code)]
fn without(what: &str, feature: &str) -> Error {
    Error::invalid(format!(
        "this claimdag was built without {what} (the {feature} feature): the command \
         cargo install claimdag builds has it"
    ))
}

/// The store as it was given (`--dir`, else `$CLAIMDAG_DIR`, else the default directory),
/// for a child process to open the same one: a database URL keeps its password.
fn store_text(cli: &Cli, store: &Store) -> OsString {
    match (
        &cli.dir,
        std::env::var_os("CLAIMDAG_DIR").filter(|d| !d.is_empty()),
    ) {
        (Some(d), _) => d.clone().into_os_string(),
        (None, Some(d)) => d,
        (None, None) => store.location().into(),
    }
}
