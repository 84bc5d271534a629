//! `claimdag.Store`: one method a verb (docs/python.md). Each method turns its arguments
//! into owned Rust values while it holds the GIL, then runs the core call with the GIL
//! released ([`detach`]). Node arguments take a full id or a unique prefix of at least 8 hex
//! characters ([`claimdag::Store::resolve`]).

use crate::completions::{completion_list, json_text, opt_output};
use crate::convert::{
    int, millis, not_before as not_before_arg, opt_int, opt_millis, plan_bytes, py_to_json,
    setting_changes, spend_arg, time_arg,
};
use crate::error::{detach, detach_waiting, to_py_err};
use crate::json::json_to_py;
use crate::lease::{claim_next_request, Lease, LeaseNext, OnError};
use crate::types::{Event, Grant, Node, Pick, Report, Settings};
use crate::watch::Watch;
use claimdag::verbs::{self, Ctx, Dur, Verb};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use std::path::PathBuf;

pub use crate::convert::Given;

/// A claimdag store: the directory `path` (None: `$CLAIMDAG_DIR`, else
/// `$XDG_STATE_HOME/claimdag`, else `~/.local/state/claimdag`) and the workspace methods use
/// when they are given none (None: `$CLAIMDAG_WORKSPACE`, else ""). Nothing is created until
/// the first write. One Store may be shared by many threads; many processes may open the
/// same directory.
#[pyclass(frozen, module = "claimdag._claimdag")]
pub struct Store {
    workspace: String,
    core: claimdag::Store,
}

pub(crate) fn dur(ms: Option<u64>) -> Option<Dur> {
    ms.map(Dur::Ms)
}

impl Store {
    /// Runs one verb-layer request with the GIL released, in the store's workspace unless
    /// the request names another.
    pub(crate) fn run<V: Verb + Send + Sync>(&self, py: Python<'_>, req: V) -> PyResult<V::Reply>
    where
        V::Reply: Send,
    {
        let (core, ws) = (&self.core, &self.workspace);
        detach(py, move || verbs::reply(&Ctx::new(core, ws)?, &req))
    }
}

#[pymethods]
impl Store {
    #[new]
    #[pyo3(signature = (path=None, workspace=None))]
    fn new(py: Python<'_>, path: Option<PathBuf>, workspace: Option<String>) -> PyResult<Self> {
        let store = claimdag::Store::open(path.as_deref())
            .map_err(|e| to_py_err(py, e))?
            .through("python");
        let workspace = Ctx::from_env(&store, workspace.as_deref())
            .map_err(|e| to_py_err(py, e))?
            .workspace;
        Ok(Store {
            workspace,
            core: store,
        })
    }

    /// Where the store is: its directory (or its database, never with a password).
    #[getter]
    fn path(&self) -> String {
        self.core.location()
    }

    /// The workspace methods use when they are given none.
    #[getter]
    fn workspace(&self) -> &str {
        &self.workspace
    }

    /// The same store, where `actor` does every write: the history records it (`by`) beside
    /// the actor of each event it makes for another, as a lead releasing or completing a
    /// worker's claim. The rules stay the named actor's.
    fn acting_as(&self, py: Python<'_>, actor: &str) -> PyResult<Store> {
        let by = claimdag::Actor::parse_actor(actor, "actor")
            .map_err(|e| to_py_err(py, claimdag::Error::from(e)))?;
        Ok(Store {
            workspace: self.workspace.clone(),
            core: self.core.acting_as(by),
        })
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let path = self.path().into_pyobject(py)?.repr()?.to_string();
        let ws = self
            .workspace
            .as_str()
            .into_pyobject(py)?
            .repr()?
            .to_string();
        Ok(format!("Store({path}, workspace={ws})"))
    }

    /// Pickles as its directory and workspace, so a Store can be handed to another process.
    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyTuple>)> {
        let py = slf.py();
        let me = slf.get();
        let args = PyTuple::new(py, [me.path(), me.workspace.clone()])?;
        Ok((slf.get_type().into_any(), args))
    }

    /// Creates a node, or merges fields into the node with the same identity (workspace,
    /// kind, parent, summary); returns its 32-hex id. A field left at None keeps its value on
    /// an existing node and its default on a new one. `not_before`: not granted before
    /// this time (an aware `datetime`, or a str: RFC 3339, or `"+90s"` from now); until
    /// then the node displays `scheduled`. A naive datetime is refused (InvalidInput).
    /// `deadline` (as `not_before`): past it an unfinished node is overdue. `budget`
    /// (`"tokens=N,cost=X"` or a dict): past it the holder is asked to stop.
    #[pyo3(signature = (summary, kind="task", parent=None, role=None, priority=None,
                        estimate=None, labels=None, resources=None, r#ref=None,
                        max_attempts=None, workspace=None, not_before=None, deadline=None,
                        budget=None))]
    #[allow(clippy::too_many_arguments)]
    fn upsert(
        &self,
        py: Python<'_>,
        summary: String,
        kind: &str,
        parent: Option<String>,
        role: Option<String>,
        priority: Option<&Bound<'_, PyAny>>,
        estimate: Option<&Bound<'_, PyAny>>,
        labels: Option<Vec<String>>,
        resources: Option<Vec<String>>,
        r#ref: Option<String>,
        max_attempts: Option<&Bound<'_, PyAny>>,
        workspace: Option<String>,
        not_before: Option<&Bound<'_, PyAny>>,
        deadline: Option<&Bound<'_, PyAny>>,
        budget: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<String> {
        let req = verbs::Upsert {
            summary,
            kind: Some(kind.to_string()),
            parent,
            role,
            priority: opt_int("priority", priority, i64::MIN.into())?,
            estimate: opt_int("estimate", estimate, 1)?,
            labels,
            resources,
            ref_: r#ref,
            max_attempts: opt_int("max_attempts", max_attempts, 1)?,
            not_before: not_before_arg(not_before)?,
            deadline: time_arg("deadline", deadline)?,
            budget: spend_arg("budget", budget)?,
            workspace,
        };
        Ok(self.run(py, req)?.id.hex())
    }

    /// Makes `child` wait on `parent`: a hard link is satisfied when `parent` is done, a soft
    /// one when it finished in any status. Linking twice is a no-op.
    #[pyo3(signature = (parent, child, soft=false))]
    fn link(&self, py: Python<'_>, parent: String, child: String, soft: bool) -> PyResult<()> {
        self.run(
            py,
            verbs::Link {
                parent,
                child,
                soft,
            },
        )
        .map(|_| ())
    }

    /// Removes the link that makes `child` wait on `parent`.
    fn unlink(&self, py: Python<'_>, parent: String, child: String) -> PyResult<()> {
        self.run(py, verbs::Unlink { parent, child }).map(|_| ())
    }

    /// Claims a ready node for `assignee` (32 hex characters) and returns the new generation:
    /// the fencing token to renew, release and complete with. `gen`: claim only at this
    /// generation. `ttl`: the lease, in seconds or as a timedelta (default: the store's).
    /// `details=True` returns the whole `Grant` instead: the generation, the last
    /// checkpoint an earlier holder left, and the outputs of the prerequisites (`inputs`).
    #[pyo3(signature = (node, assignee, gen=None, ttl=None, details=false))]
    fn claim(
        &self,
        py: Python<'_>,
        node: String,
        assignee: String,
        gen: Option<&Bound<'_, PyAny>>,
        ttl: Option<&Bound<'_, PyAny>>,
        details: bool,
    ) -> PyResult<Py<PyAny>> {
        let req = verbs::Claim {
            node,
            assignee: Some(assignee),
            gen: opt_int("gen", gen, 0)?,
            ttl: dur(opt_millis("ttl", ttl)?),
        };
        let granted = self.run(py, req)?;
        match details {
            true => Ok(Py::new(py, Grant(granted))?.into_any()),
            false => Ok(granted.generation.into_pyobject(py)?.into_any().unbind()),
        }
    }

    /// Hands `actor`'s claim at `gen` back; returns the node's new generation. `retry_in`
    /// (seconds or a timedelta): the node is not granted again for that long (it displays
    /// `scheduled`), in place of the store's `retry_delay` backoff.
    #[pyo3(signature = (node, actor, gen, retry_in=None))]
    fn release(
        &self,
        py: Python<'_>,
        node: String,
        actor: String,
        gen: &Bound<'_, PyAny>,
        retry_in: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<u64> {
        let req = verbs::Release {
            node,
            actor: Some(actor),
            gen: int("gen", gen, 0)?,
            retry_in: dur(opt_millis("retry_in", retry_in)?),
        };
        Ok(self.run(py, req)?.generation)
    }

    /// Hands back expired claims, and with `lease` (seconds or a timedelta) also claims
    /// quiet for that long; `lease=0` hands back every claim. Returns `[(id, new_generation)]`.
    #[pyo3(signature = (lease=None, workspace=None))]
    fn reclaim(
        &self,
        py: Python<'_>,
        lease: Option<&Bound<'_, PyAny>>,
        workspace: Option<String>,
    ) -> PyResult<Vec<(String, u64)>> {
        let req = verbs::Reclaim {
            lease: dur(opt_millis("lease", lease)?),
            workspace,
        };
        let handed = self.run(py, req)?.0;
        Ok(handed
            .into_iter()
            .map(|g| (g.id.hex(), g.generation))
            .collect())
    }

    /// Finishes the live claim at `gen` with `status` ("done", "failed" or "cancelled"; a
    /// todo node may be cancelled at its current generation). With `actor`, only if it is
    /// the holder. `output`: what the node produced, any value `json.dumps` takes (at most
    /// 64 KiB as JSON); its dependents receive it as an input when they are claimed.
    #[pyo3(signature = (node, gen, status="done", actor=None, note=None, output=None))]
    #[allow(clippy::too_many_arguments)]
    fn complete(
        &self,
        py: Python<'_>,
        node: String,
        gen: &Bound<'_, PyAny>,
        status: &str,
        actor: Option<String>,
        note: Option<String>,
        output: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let req = verbs::Complete {
            node,
            status: status.to_string(),
            gen: int("gen", gen, 0)?,
            actor,
            note,
            output: opt_output(output)?,
        };
        self.run(py, req).map(|_| ())
    }

    /// Finishes several claims in one write: all of them, or none when one is refused (the
    /// exception is that one's, and nothing changes). `completions`: a list of dicts with
    /// the arguments of `complete` (`node`, `gen`, and optionally `status` (default
    /// "done"), `actor`, `note`, `output`), or of tuples `(node, gen)`, `(node, gen,
    /// status)` or `(node, gen, status, output)`; or the JSON text of such a list of dicts
    /// (str or bytes). Returns `[(id, status), ...]` in request order.
    fn complete_many(
        &self,
        py: Python<'_>,
        completions: &Bound<'_, PyAny>,
    ) -> PyResult<Vec<(String, &'static str)>> {
        let req = match json_text(completions)? {
            Some(bytes) => verbs::CompleteMany::from_bytes(&bytes).map_err(|e| to_py_err(py, e))?,
            None => verbs::CompleteMany {
                completions: completion_list(completions)?,
            },
        };
        let done = self.run(py, req)?.0;
        Ok(done
            .into_iter()
            .map(|c| (c.id.hex(), c.status.as_str()))
            .collect())
    }

    /// Cancels a node, by anyone: a todo node becomes `cancelled` at once (returns False);
    /// the holder of a claimed node is asked to stop (returns True): it learns it at its
    /// next renewal, then completes the node `cancelled` or finishes it. A finished node is
    /// `Terminal`. `reason`: why, in words the holder acts on; `actor`: who asks; `gen`:
    /// only if the node is at this generation (else `StaleGeneration`).
    #[pyo3(signature = (node, reason=None, actor=None, gen=None))]
    fn cancel(
        &self,
        py: Python<'_>,
        node: String,
        reason: Option<String>,
        actor: Option<String>,
        gen: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<bool> {
        let req = verbs::Cancel {
            node,
            reason,
            actor,
            gen: opt_int("gen", gen, 0)?,
        };
        Ok(self.run(py, req)?.requested)
    }

    /// Puts a finished node back to todo (at `gen`, if given); returns the new generation.
    #[pyo3(signature = (node, gen=None))]
    fn reopen(
        &self,
        py: Python<'_>,
        node: String,
        gen: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<u64> {
        let req = verbs::Reopen {
            node,
            gen: opt_int("gen", gen, 0)?,
        };
        Ok(self.run(py, req)?.generation)
    }

    /// One node, with its derived display word and readiness.
    fn get(&self, py: Python<'_>, node: String) -> PyResult<Node> {
        self.run(py, verbs::Show { node }).map(Node)
    }

    /// Nodes of the workspace in creation order: unfinished ones, or those whose stored
    /// status or display word is `status`; `ready` keeps only ready (True) or not ready
    /// (False) ones; `holder` only those it holds; `terminal` adds finished ones;
    /// `archived` lists archived nodes instead of live ones.
    #[pyo3(signature = (status=None, ready=None, holder=None, archived=false, terminal=false,
                        workspace=None))]
    #[allow(clippy::too_many_arguments)]
    fn list(
        &self,
        py: Python<'_>,
        status: Option<String>,
        ready: Option<bool>,
        holder: Option<String>,
        archived: bool,
        terminal: bool,
        workspace: Option<String>,
    ) -> PyResult<Vec<Node>> {
        let req = verbs::List {
            status,
            holder,
            terminal,
            archived,
            ready,
            workspace,
            ..verbs::List::default()
        };
        Ok(self.run(py, req)?.0.into_iter().map(Node).collect())
    }

    /// The id of the ready node to work on next (longest critical path first), or None.
    #[pyo3(signature = (role=None, workspace=None))]
    fn next(
        &self,
        py: Python<'_>,
        role: Option<String>,
        workspace: Option<String>,
    ) -> PyResult<Option<String>> {
        let next = self.run(py, verbs::Next { role, workspace })?;
        Ok(next.0.map(|n| n.id.hex()))
    }

    /// The ready nodes in the order `next` would pick them, each with its critical path.
    #[pyo3(signature = (role=None, workspace=None))]
    fn ready(
        &self,
        py: Python<'_>,
        role: Option<String>,
        workspace: Option<String>,
    ) -> PyResult<Vec<Pick>> {
        let picks = self.run(py, verbs::Ready { role, workspace })?;
        Ok(picks.0.into_iter().map(Pick).collect())
    }

    /// Picks the next ready node and claims it for `assignee` in one locked step; returns
    /// `(id, generation)` (with `details=True` the whole `Grant`: checkpoint and inputs
    /// too), or None when nothing is ready. `wait` (seconds or a timedelta):
    /// when nothing is ready, wait up to that long for a node to become ready (a write of
    /// any process, a claim running out, a `not_before` passing) and claim it; None when
    /// the wait ran out. The GIL is released while waiting, and Ctrl-C interrupts it.
    #[pyo3(signature = (assignee, role=None, ttl=None, workspace=None, resume=false,
                        wait=None, details=false))]
    #[allow(clippy::too_many_arguments)]
    fn claim_next(
        &self,
        py: Python<'_>,
        assignee: String,
        role: Option<String>,
        ttl: Option<&Bound<'_, PyAny>>,
        workspace: Option<String>,
        resume: bool,
        wait: Option<&Bound<'_, PyAny>>,
        details: bool,
    ) -> PyResult<Option<Py<PyAny>>> {
        let mut req = verbs::ClaimNext {
            assignee: Some(assignee),
            role,
            ttl: dur(opt_millis("ttl", ttl)?),
            resume,
            wait: None,
            count: None,
            workspace,
        };
        let wait_ms = opt_millis("wait", wait)?.unwrap_or(0);
        let (core, ws) = (&self.core, &self.workspace);
        req.wait = dur(Some(wait_ms).filter(|w| *w > 0));
        let got = detach_waiting(py, wait_ms, move |wait| {
            let mut cx = Ctx::new(core, ws)?;
            cx.stop = wait.stop;
            Ok(verbs::reply(&cx, &req)?.into_first())
        })?;
        got.map(|c| match details {
            true => Ok(Py::new(py, Grant(c))?.into_any()),
            false => Ok((c.id.hex(), c.generation)
                .into_pyobject(py)?
                .into_any()
                .unbind()),
        })
        .transpose()
    }

    /// Claims up to `count` ready nodes (1 to 1000) for `assignee` in one write, in pick
    /// order, under the rules of one claim at a time (`max_held` counts each; a node whose
    /// resources overlap a live claim is passed over); returns their `Grant`s, each with its
    /// own generation, or `[]` when nothing is ready. `wait` as in `claim_next`.
    #[pyo3(signature = (assignee, count, role=None, ttl=None, workspace=None, wait=None))]
    #[allow(clippy::too_many_arguments)]
    fn claim_next_many(
        &self,
        py: Python<'_>,
        assignee: String,
        count: &Bound<'_, PyAny>,
        role: Option<String>,
        ttl: Option<&Bound<'_, PyAny>>,
        workspace: Option<String>,
        wait: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Vec<Grant>> {
        let mut req = verbs::ClaimNext {
            assignee: Some(assignee),
            role,
            ttl: dur(opt_millis("ttl", ttl)?),
            resume: false,
            wait: None,
            count: Some(int("count", count, 1)?),
            workspace,
        };
        let wait_ms = opt_millis("wait", wait)?.unwrap_or(0);
        let (core, ws) = (&self.core, &self.workspace);
        req.wait = dur(Some(wait_ms).filter(|w| *w > 0));
        let got = detach_waiting(py, wait_ms, move |wait| {
            let mut cx = Ctx::new(core, ws)?;
            cx.stop = wait.stop;
            let all = verbs::reply(&cx, &req)?.all();
            Ok((!all.is_empty()).then_some(all))
        })?;
        Ok(got.unwrap_or_default().into_iter().map(Grant).collect())
    }

    /// Follows the history as it is written, by any process: an iterator of `Event`s (as
    /// `log` gives them) that blocks, with the GIL released, until the next write is
    /// committed. `since`: replay the events after that event number first (default: only
    /// what is written from now on). `timeout` (seconds or a timedelta): the iterator ends
    /// when nothing is written for that long (default: it never ends by itself).
    #[pyo3(signature = (since=None, timeout=None))]
    fn watch(
        &self,
        py: Python<'_>,
        since: Option<&Bound<'_, PyAny>>,
        timeout: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Watch> {
        let timeout_ms = opt_millis("timeout", timeout)?;
        let core = self.core.clone();
        let at = match opt_int("since", since, 0)? {
            Some(s) => s,
            None => detach(py, || core.version())?,
        };
        Ok(Watch::new(core, at, timeout_ms))
    }

    /// The history, oldest first; only `node`'s transitions when given; with `all`, the
    /// archived history (`history_keep`) too.
    #[pyo3(signature = (node=None, since=None, all=false))]
    fn log(
        &self,
        py: Python<'_>,
        node: Option<String>,
        since: Option<&Bound<'_, PyAny>>,
        all: bool,
    ) -> PyResult<Vec<Event>> {
        let since = opt_int("since", since, 0)?;
        let lines = self.run(py, verbs::Log { node, since, all })?;
        Ok(lines.0.into_iter().map(Event).collect())
    }

    /// The store's settings, after changing those given: `default_ttl` (seconds or a
    /// timedelta), `max_held` (0: no limit), `max_attempts` (None: no cap), `retry_delay`
    /// (seconds or a timedelta: the first backoff of a handed-back node, doubled with each
    /// attempt; 0: none), `retry_delay_max` (the longest backoff) and `history_keep`
    /// ("all", a duration such as "7d", or a number of events: how much history stays
    /// live), `deadline_action` ("none" or "cancel": ask the holder of a node past its
    /// deadline to stop). Each change is one locked write, so concurrent changes of other
    /// settings are kept.
    #[pyo3(signature = (*, default_ttl=Given::No, max_held=None, max_attempts=Given::No,
                        retry_delay=None, retry_delay_max=None, history_keep=None,
                        deadline_action=None))]
    #[allow(clippy::too_many_arguments)] // one keyword argument per setting
    fn config(
        &self,
        py: Python<'_>,
        default_ttl: Given<'_>,
        max_held: Option<&Bound<'_, PyAny>>,
        max_attempts: Given<'_>,
        retry_delay: Option<&Bound<'_, PyAny>>,
        retry_delay_max: Option<&Bound<'_, PyAny>>,
        history_keep: Option<&Bound<'_, PyAny>>,
        deadline_action: Option<String>,
    ) -> PyResult<Settings> {
        // Every argument is converted first; then every change is one write, checked by
        // the core as a whole, so a refused call changes nothing.
        let changes = setting_changes(
            py,
            default_ttl,
            max_held,
            max_attempts,
            retry_delay,
            retry_delay_max,
            history_keep,
            deadline_action,
        )?;
        let core = &self.core;
        detach(py, move || {
            let pairs: Vec<(&str, &str)> = changes.iter().map(|(k, v)| (*k, v.as_str())).collect();
            let settings = match pairs.is_empty() {
                true => core.settings()?,
                false => core.set_settings(&pairs)?,
            };
            Ok(verbs::SettingsReply::of(&settings, None))
        })
        .map(Settings)
    }

    /// Moves finished nodes out of the live state; returns how many moved. `nodes`: ids or
    /// prefixes of finished nodes; `older_than` (seconds or a timedelta): also every node
    /// of the workspace finished at least that long ago; with neither, every finished node
    /// of the workspace. A named node that is not finished is InvalidInput.
    #[pyo3(signature = (*nodes, older_than=None, workspace=None))]
    fn archive(
        &self,
        py: Python<'_>,
        nodes: Vec<String>,
        older_than: Option<&Bound<'_, PyAny>>,
        workspace: Option<String>,
    ) -> PyResult<usize> {
        let req = verbs::Archive {
            nodes,
            older_than: dur(opt_millis("older_than", older_than)?),
            workspace,
        };
        Ok(self.run(py, req)?.archived)
    }

    /// Brings an archived node back into the live state unchanged; returns its status.
    fn unarchive(&self, py: Python<'_>, node: String) -> PyResult<&'static str> {
        Ok(self.run(py, verbs::Unarchive { node })?.status.as_str())
    }

    /// Creates or merges every node of `plan` with its links as one atomic write, like
    /// `claimdag import`; returns `[(id, key), ...]` in plan order. `plan` is a dict
    /// `{"nodes": [...]}` or its JSON text (str or bytes). Importing the same plan again
    /// returns the same ids and writes nothing; a plan that is refused writes nothing.
    #[pyo3(signature = (plan, workspace=None))]
    fn import_plan(
        &self,
        py: Python<'_>,
        plan: &Bound<'_, PyAny>,
        workspace: Option<String>,
    ) -> PyResult<Vec<(String, String)>> {
        let bytes = plan_bytes(plan)?;
        let (core, ws) = (&self.core, &self.workspace);
        let nodes = detach(py, move || {
            verbs::Import::from_bytes(&bytes, workspace)?.run(&Ctx::new(core, ws)?)
        })?;
        Ok(nodes.0.into_iter().map(|n| (n.id.hex(), n.key)).collect())
    }

    /// The workspace's DAG as Graphviz dot (`format="dot"`), Mermaid (`"mermaid"`) or JSON
    /// text (`"json"`: nodes and links, each marked when on the critical path):
    /// unfinished nodes, and finished ones too with `all`.
    #[pyo3(signature = (format="dot", all=false, workspace=None))]
    fn graph(
        &self,
        py: Python<'_>,
        format: &str,
        all: bool,
        workspace: Option<String>,
    ) -> PyResult<String> {
        let req = verbs::Graph {
            format: Some(format.to_string()),
            all,
            workspace,
        };
        Ok(self.run(py, req)?.graph)
    }

    /// Reads every file of the store afresh and verifies the DAG's invariants. Damaged
    /// files raise CorruptStore; broken invariants are listed in the report's `problems`.
    fn check(&self, py: Python<'_>) -> PyResult<Report> {
        self.run(py, verbs::Check {}).map(Report)
    }

    /// Runs any verb by name with its arguments (keywords, or a dict), and returns its reply
    /// exactly as the CLI's `--json` prints it (`json.loads` of it: a dict, a list, or None
    /// when `next`/`claim_next` found nothing). `store.call("reclaim", lease=0)`,
    /// `store.call("claim_next", assignee="name:w1", resume=True)`. Arguments are named as
    /// the CLI's long options with `_` for `-`; an unknown verb or argument is InvalidInput.
    #[pyo3(signature = (verb, args=None, **kwargs))]
    fn call<'py>(
        &self,
        py: Python<'py>,
        verb: String,
        args: Option<&Bound<'py, PyDict>>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let mut merged = serde_json::Map::new();
        for d in [args, kwargs].into_iter().flatten() {
            if let serde_json::Value::Object(m) = py_to_json(d.as_any(), 0)? {
                merged.extend(m);
            }
        }
        let (core, ws) = (&self.core, &self.workspace);
        let answer = detach(py, move || {
            verbs::call(
                &Ctx::new(core, ws)?,
                &verb,
                serde_json::Value::Object(merged),
            )
        })?;
        json_to_py(py, &answer.json)
    }

    /// Claims the next ready node for `assignee` and holds it as a `Lease` that renews
    /// itself (about every third of `ttl`; default: the store's default_ttl), for
    /// `with store.lease_next(me, ttl=60) as lease:` (None when nothing is ready). Leaving
    /// the block completes the node `done`; an exception completes it `failed`, or releases
    /// it with `on_error="release"`. `on_lost(exc)` is called (on the renewal thread) when
    /// the store refuses a renew: the node is someone else's now. `wait`: as `claim_next`'s
    /// (seconds or a timedelta; the GIL is released while waiting). `on_cancel(request)` is
    /// called (on the renewal thread) when a renewal learns that someone asked the holder
    /// to stop (`cancel`); `lease.cancel_requested` tells it too.
    #[pyo3(signature = (assignee, ttl=None, role=None, workspace=None, on_error="failed",
                        on_lost=None, wait=None, on_cancel=None))]
    #[allow(clippy::too_many_arguments)]
    fn lease_next(
        &self,
        py: Python<'_>,
        assignee: String,
        ttl: Option<&Bound<'_, PyAny>>,
        role: Option<String>,
        workspace: Option<String>,
        on_error: &str,
        on_lost: Option<Py<PyAny>>,
        wait: Option<&Bound<'_, PyAny>>,
        on_cancel: Option<Py<PyAny>>,
    ) -> PyResult<LeaseNext> {
        let on_error = OnError::parse(py, on_error)?;
        let wait_ms = opt_millis("wait", wait)?.unwrap_or(0);
        let ttl_ms = match opt_millis("ttl", ttl)? {
            Some(ms) => ms,
            None => self.run(py, verbs::Config::default())?.default_ttl_ms,
        };
        let (for_role, for_ws) = (role.clone(), workspace.clone());
        let req = claim_next_request(assignee, role, ttl_ms, workspace);
        let lease = Lease::next(
            py,
            &self.core,
            &self.workspace,
            req,
            ttl_ms,
            wait_ms,
            on_error,
            on_lost,
            on_cancel,
        )?;
        let finished = match lease {
            Some(_) => false,
            None => self.finished(py, for_role, for_ws)?,
        };
        Ok(LeaseNext {
            lease: lease.map(|l| Py::new(py, l)).transpose()?,
            finished,
        })
    }

    /// `claim_next` for asyncio: `await store.aclaim_next(me, wait=60)`. With `wait`, the
    /// waiting holds no thread of its own: one thread per store follows its writes for every
    /// waiting task (`claimdag.aio`), and each look runs briefly in a worker thread.
    #[pyo3(signature = (*args, **kwargs))]
    fn aclaim_next<'py>(
        slf: &Bound<'py, Self>,
        args: &Bound<'py, PyTuple>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let aio = slf.py().import("claimdag.aio")?;
        aio.getattr("aclaim_next")?.call1((slf, args, kwargs))
    }

    /// `claim_next_many` for asyncio: `await store.aclaim_next_many(me, 10, wait=60)`,
    /// waiting as `aclaim_next` does.
    #[pyo3(signature = (*args, **kwargs))]
    fn aclaim_next_many<'py>(
        slf: &Bound<'py, Self>,
        args: &Bound<'py, PyTuple>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let aio = slf.py().import("claimdag.aio")?;
        aio.getattr("aclaim_next_many")?.call1((slf, args, kwargs))
    }

    /// A `wait` argument in milliseconds, refused as `claim_next` refuses it (for
    /// `claimdag.aio`).
    fn _wait_ms(&self, wait: &Bound<'_, PyAny>) -> PyResult<u64> {
        millis("wait", wait)
    }

    /// The store's version: the number of the last committed write (for `claimdag.aio`).
    fn _version(&self, py: Python<'_>) -> PyResult<u64> {
        let core = &self.core;
        detach(py, || core.version())
    }

    /// Waits, with the GIL released, until a write after version `seen` is committed or
    /// `timeout` seconds (at most half a second) pass; returns the version then.
    fn _wait_change(&self, py: Python<'_>, seen: u64, timeout: &Bound<'_, PyAny>) -> PyResult<u64> {
        let ms = millis("timeout", timeout)?.min(500);
        let core = &self.core;
        detach(py, || {
            core.wait_change(seen, std::time::Duration::from_millis(ms))
        })
    }

    /// Seconds until the store changes by time alone (a claim running out, a `not_before`
    /// passing), or None (for `claimdag.aio`).
    fn _next_change_in(&self, py: Python<'_>) -> PyResult<Option<f64>> {
        let core = &self.core;
        Ok(detach(py, || core.next_change_in())?.map(|d| d.as_secs_f64()))
    }

    /// `lease_next` for asyncio: `async with store.alease_next(me, ttl=60) as lease:`, with
    /// awaitable `lease.complete()` and `lease.release()`; nothing blocks the event loop
    /// (the claim and the finish run in a worker thread, the renewal on its own).
    #[pyo3(signature = (*args, **kwargs))]
    fn alease_next<'py>(
        slf: &Bound<'py, Self>,
        args: &Bound<'py, PyTuple>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let aio = slf.py().import("claimdag.aio")?;
        aio.getattr("AsyncLeaseNext")?.call1((slf, args, kwargs))
    }
}
