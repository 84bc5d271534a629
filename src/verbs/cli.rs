//! The verbs as subcommands of the command line: each verb's request is its own arguments
//! (`clap::Args`), or a form the command line reads it from ([`Form`]: a file, or JSON as
//! text); its declaration ([`About`]) gives the subcommand's name, line and help.

use super::{run_printed, About, Ctx, Printed, Verb};
use crate::error::Result;
use std::borrow::Cow;

/// What the command line reads a verb's request from.
pub trait Form<V: Verb + Clone>: clap::Args + std::fmt::Debug {
    /// The request, as the verb layer takes it.
    fn request(&self) -> Result<Cow<'_, V>>;
}

/// A request that is its own command-line form.
impl<V: Verb + Clone + clap::Args + std::fmt::Debug> Form<V> for V {
    fn request(&self) -> Result<Cow<'_, V>> {
        Ok(Cow::Borrowed(self))
    }
}

/// The form of `$verb` on the command line: `$form` when given, else the request itself.
macro_rules! form {
    ($ty:ty) => {
        $ty
    };
    ($ty:ty, $form:ty) => {
        $form
    };
}
pub(super) use form;

/// Runs the request read from `form`, `$CLAIMDAG_ACTOR` standing for the actor it leaves
/// out where the verb takes it: the variable is only the default, so a bad value cannot
/// break a command that names its actor.
pub(super) fn run_form<V: Verb + Clone, F: Form<V>>(
    cx: &Ctx<'_>,
    form: &F,
    json: bool,
) -> Result<Printed> {
    let req = form.request()?;
    match req.takes_env_actor() {
        true => run_printed(&cx.clone().with_env_actor()?, &*req, json),
        false => run_printed(cx, &*req, json),
    }
}

/// `cmd` with the subcommand of verb `V`, whose arguments are `F`'s, added only when it is
/// the one run (or its help is asked for): building every verb's arguments for each
/// process would cost more than a `show` does. A verb under another (`actor add`) goes
/// under that one's subcommand, which then takes either its own arguments or one of its
/// subcommands.
pub(super) fn subcommand<V: Verb, F: clap::Args>(cmd: clap::Command) -> clap::Command {
    let a: About = V::ABOUT;
    let (parent, name) = a.command_path();
    let sub = clap::Command::new(name)
        .about(a.summary)
        .after_help(a.help)
        .aliases(a.aliases)
        .defer(keep_about::<F>);
    match parent {
        None => cmd.subcommand(sub),
        // A group of verbs that is no verb itself (`pool set`, `pool list`).
        Some(p) if cmd.find_subcommand(p).is_none() => cmd.subcommand(
            clap::Command::new(p)
                .about(group_about(p).0)
                .after_help(group_about(p).1)
                .subcommand_required(true)
                .subcommand(sub),
        ),
        Some(p) => cmd.mut_subcommand(p, |c| {
            c.args_conflicts_with_subcommands(true)
                .subcommand_negates_reqs(true)
                .subcommand(sub)
        }),
    }
}

/// The one line of `claimdag --help` for a group of verbs that is no verb itself, and
/// what its `--help` adds.
fn group_about(group: &str) -> (&'static str, &'static str) {
    match group {
        "pool" => (
            "Pools of slots that claims hold: pool set, pool list",
            "Examples:\n  claimdag pool set gpu 2\n  claimdag upsert --summary train --resource pool:gpu\n  claimdag pool list",
        ),
        "rate" => (
            "Rate limits on grants per window: rate set, rate list",
            "Examples:\n  claimdag rate set llm 60 1m\n  claimdag upsert --summary ask --resource rate:llm\n  claimdag rate list",
        ),
        "hook" => (
            "Git hooks that keep the fence in a repository: hook install",
            "Examples:\n  claimdag hook install --repo ~/src/app",
        ),
        _ => ("", ""),
    }
}

/// The subcommand as typed (`actor add` for one under another) and its matches.
pub(super) fn verb_matches(
    m: &mut clap::ArgMatches,
) -> std::result::Result<(String, clap::ArgMatches), clap::Error> {
    let (name, mut sub) = m
        .remove_subcommand()
        .ok_or_else(|| clap::Error::raw(clap::error::ErrorKind::MissingSubcommand, "no verb\n"))?;
    Ok(match sub.remove_subcommand() {
        Some((child, m)) => (format!("{name} {child}"), m),
        None => (name, sub),
    })
}

pub(super) fn unknown(name: &str) -> clap::Error {
    clap::Error::raw(
        clap::error::ErrorKind::InvalidSubcommand,
        format!("unknown verb {name:?}\n"),
    )
}

/// `F`'s arguments added to `cmd`, with `cmd`'s about and long about as they were: the
/// arguments' own documentation (written for the verb layer and the MCP tools) would
/// otherwise replace it.
pub fn keep_about<F: clap::Args>(cmd: clap::Command) -> clap::Command {
    use clap::builder::Resettable;
    let kept = |s: Option<&clap::builder::StyledStr>| {
        s.cloned().map_or(Resettable::Reset, Resettable::Value)
    };
    let (about, long) = (kept(cmd.get_about()), kept(cmd.get_long_about()));
    F::augment_args(cmd).about(about).long_about(long)
}

/// A front door's arguments under the description its subcommand gives (see
/// `keep_about`), for the subcommands that are not verbs (`mcp`, `serve`, `work`, ...).
#[derive(Debug)]
pub struct Described<T>(pub T);

impl<T: clap::FromArgMatches> clap::FromArgMatches for Described<T> {
    fn from_arg_matches(m: &clap::ArgMatches) -> std::result::Result<Self, clap::Error> {
        T::from_arg_matches(m).map(Described)
    }

    fn update_from_arg_matches(
        &mut self,
        m: &clap::ArgMatches,
    ) -> std::result::Result<(), clap::Error> {
        self.0.update_from_arg_matches(m)
    }
}

impl<T: clap::Args> clap::Args for Described<T> {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        keep_about::<T>(cmd)
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        keep_about::<T>(cmd)
    }
}

/// `complete`'s command-line form: the request, with `--output` kept as the text given
/// until the verb runs, so that text that is not JSON is `invalid_input` like any other bad
/// argument (the JSON error body under `--json`), not a usage error of the parser's.
#[derive(clap::Args, Debug)]
pub struct CompleteArgs {
    #[command(flatten)]
    pub request: super::Complete,
    /// What the node produced: any JSON value (at most 64 KiB serialised). Its dependents
    /// receive it as an input when they are claimed.
    #[arg(long, value_name = "JSON")]
    pub output: Option<String>,
}

impl Form<super::Complete> for CompleteArgs {
    fn request(&self) -> Result<Cow<'_, super::Complete>> {
        let mut r = self.request.clone();
        r.output = self
            .output
            .as_deref()
            .map(super::parse_json_arg)
            .transpose()?;
        Ok(Cow::Owned(r))
    }
}

/// The bytes of a file (a plan, completions), or of standard input for `-`.
pub fn read_file(file: &str) -> Result<Vec<u8>> {
    use crate::error::Error;
    if file == "-" {
        let mut b = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin(), &mut b)
            .map_err(|e| Error::io(std::path::Path::new("<stdin>"), &e))?;
        return Ok(b);
    }
    std::fs::read(file).map_err(|e| Error::io(std::path::Path::new(file), &e))
}
