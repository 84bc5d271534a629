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
use args::{Cli, Described, Verb};
use clap::Parser;
use std::ffi::OsString;
use std::io::Write;

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

/// `cx` with `$CLAIMDAG_ACTOR` as its actor when the request names none (`given`): the
/// variable is only the default, so a bad value cannot break a command that names its actor.
fn env_actor<'a>(cx: Ctx<'a>, given: &Option<String>) -> Result<Ctx<'a>> {
    match given {
        Some(_) => Ok(cx),
        None => cx.with_env_actor(),
    }
}

/// `match $verb { ... }` with one arm per verb named in `printed: [...]`, each
/// `Verb::Name(Described(request))` run as it is through one generic call of the verb layer
/// and printed as it replies, then the other arms as written.
macro_rules! match_verb {
    (
        $verb:expr, $cx:expr, $json:expr;
        printed: [$($name:ident),* $(,)?];
        $($(#[$attr:meta])* $pat:pat => $arm:expr,)*
    ) => {
        match $verb {
            $(Verb::$name(Described(r)) => verbs::run_printed($cx, r, $json),)*
            $($(#[$attr])* $pat => $arm,)*
        }
    };
}

fn execute(cli: Cli) -> Result<Ran> {
    // The process ends right after one verb: freeing the loaded state node by node would
    // only cost time, so the store is left for the OS to reclaim.
    let store: &Store = Box::leak(Box::new(Store::open(cli.dir.as_deref())?));
    let cx = Ctx::from_env(store, cli.workspace.as_deref())?;
    let answer = match_verb!(&cli.verb, &cx, cli.json;
        printed: [
            Upsert, Link, Unlink, List, Show, Claim, Renew, Release, Reclaim, Cancel, Reopen,
            Next, Ready, Log, Archive, Unarchive, Graph, Config, Check, Actor, Copy,
        ];
        Verb::Complete(Described(a)) => verbs::run_printed(&cx, &a.request()?, cli.json),
        // docs/reference.md ("Environment"): $CLAIMDAG_ACTOR is claim-next's default actor.
        Verb::ClaimNext(Described(r)) => {
            verbs::run_printed(&env_actor(cx, &r.assignee)?, r, cli.json)
        },
        Verb::DiffCheck(Described(r)) => verbs::run_printed(&env_actor(cx, &r.actor)?, r, cli.json),
        Verb::Watch(Described(a)) => return watch::run(store, a, cli.json).map(Ran::Exited),
        Verb::CompleteMany { file } => verbs::run_printed(
            &cx,
            &verbs::CompleteMany::from_bytes(&read_plan(file)?)?,
            cli.json,
        ),
        Verb::Import { file } => verbs::run_printed(
            &cx,
            &verbs::Import::from_bytes(&read_plan(file)?, None)?,
            cli.json,
        ),
        Verb::Work(Described(a)) => {
            let cx = cx.with_actor(a.actor.as_deref())?.with_env_actor()?;
            let dir = store_text(&cli, store);
            let exit = work::run(store, &cx.workspace, a, cx.actor, dir, cli.json)?;
            return Ok(Ran::Exited(exit));
        },
        #[cfg(feature = "pane")]
        Verb::Pane(Described(a)) => {
            let cx = cx.with_actor(a.actor.as_deref())?.with_env_actor()?;
            return pane::run(cx, a).map(Ran::Exited);
        },
        #[cfg(not(feature = "pane"))]
        Verb::Pane(Described(_)) => Err(without("its terminal pane", "pane")),
        #[cfg(not(feature = "serve"))]
        Verb::Serve(Described(_)) => Err(without("its HTTP server", "serve")),
        #[cfg(feature = "serve")]
        Verb::Serve(Described(a)) => {
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
        },
        #[cfg(not(feature = "mcp"))]
        Verb::Mcp(Described(_)) => Err(without("its MCP server", "mcp")),
        #[cfg(feature = "mcp")]
        Verb::Mcp(Described(a)) => {
            let cx = cx.with_actor(a.actor.as_deref())?.with_env_actor()?;
            let setup = mcp::Setup {
                workspace: cx.workspace.clone(),
                actor: cx.actor,
                profile: a.tools,
                allow_repos: a.allow_repo.clone(),
                max_wait_ms: a.max_wait.ms()?,
            };
            mcp::serve(store.clone(), setup)?;
            return Ok(Ran::Exited(0));
        },
    );
    answer.map(Ran::Print)
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

/// The bytes of a file (a plan, completions), or of standard input for `-`.
fn read_plan(file: &str) -> Result<Vec<u8>> {
    if file == "-" {
        let mut b = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin(), &mut b)
            .map_err(|e| Error::io(std::path::Path::new("<stdin>"), &e))?;
        return Ok(b);
    }
    std::fs::read(file).map_err(|e| Error::io(std::path::Path::new(file), &e))
}
