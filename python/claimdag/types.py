"""The types of claimdag's replies and arguments, for annotations: the closed sets of words
(``Status``, ``DisplayWord``, ``Finished``, ``ErrorCode``, ...) as ``Literal`` types, and the
dicts (``NodeDict`` from ``Node.to_dict()``, ``Plan`` for ``Store.import_plan``,
``CompletionDict`` for ``Store.complete_many``, ...) as ``TypedDict`` classes.

    from claimdag.types import Plan, Status

    plan: Plan = {"nodes": [{"key": "a", "summary": "parse the manifest"}]}
    wanted: Status = "done"

They cost nothing at runtime: plain ``typing`` constructs, no checks.
"""

from datetime import datetime, timedelta
from typing import Any, Literal, Optional, TypedDict, Union

__all__ = [
    "Status",
    "Finished",
    "DisplayWord",
    "ListStatus",
    "EventVerb",
    "ErrorCode",
    "ErrorName",
    "GraphFormat",
    "OnError",
    "Verb",
    "Duration",
    "When",
    "Json",
    "Strs",
    "PlanNode",
    "Plan",
    "CompletionDict",
    "Completion",
    "CancelRequestDict",
    "NodeDict",
    "ChildrenDict",
    "AmountsDict",
    "EventDict",
    "PickDict",
    "ReportDict",
    "SettingsDict",
    "GrantDict",
]

# -- Closed sets of words ------------------------------------------------------------------

#: The stored status of a node (docs/reference.md, "Nodes").
Status = Literal["todo", "claimed", "done", "failed", "cancelled"]

#: The statuses a node finishes with: what ``complete`` takes, ``complete_many`` and
#: ``unarchive`` return (the terminal statuses).
Finished = Literal["done", "failed", "cancelled"]

#: The derived display word of a node (docs/reference.md, "Display words"). Every stored
#: status is one too.
DisplayWord = Literal[
    "ready", "scheduled", "blocked", "parked", "todo", "claimed", "expired", "done", "failed", "cancelled"
]

#: The words ``Store.list(status=...)`` takes: every display word (and so every stored
#: status), and ``overdue``, the unfinished nodes past their deadline.
ListStatus = Literal[
    "ready",
    "scheduled",
    "blocked",
    "parked",
    "todo",
    "claimed",
    "expired",
    "done",
    "failed",
    "cancelled",
    "overdue",
]

#: The verb of a history event (docs/reference.md, "history.jsonl").
EventVerb = Literal[
    "create",
    "update",
    "link",
    "unlink",
    "claim",
    "renew",
    "release",
    "expire",
    "reclaim",
    "complete",
    "cancel",
    "cancel_request",
    "reopen",
    "retry",
    "approve",
    "reject",
    "settle",
    "overdue",
    "over_budget",
    "archive",
    "unarchive",
    "config",
]

#: The stable error codes, in numeric order (docs/reference.md, "Exit codes and errors").
ErrorCode = Literal[
    "not_found",
    "already_claimed",
    "assignee_busy",
    "not_ready",
    "attempts_exhausted",
    "resource_conflict",
    "not_claimed",
    "terminal",
    "stale_generation",
    "not_holder",
    "cycle",
    "invalid_input",
    "corrupt",
    "io",
    "internal",
]

#: The core's name of each error code, in the same order.
ErrorName = Literal[
    "NotFound",
    "AlreadyClaimed",
    "AssigneeBusy",
    "NotReady",
    "AttemptsExhausted",
    "ResourceConflict",
    "NotClaimed",
    "Terminal",
    "StaleGeneration",
    "NotHolder",
    "Cycle",
    "InvalidInput",
    "Corrupt",
    "Io",
    "Internal",
]

#: The formats ``Store.graph`` draws in.
GraphFormat = Literal["dot", "mermaid", "json"]

#: What a lease does with its node when the ``with`` block raises.
OnError = Literal["failed", "release"]

#: The verbs ``Store.call`` runs: the CLI's, with ``_`` for ``-`` (either is accepted).
#: Written by ``make generate`` from the verbs' declarations.
Verb = Literal[
    "upsert",
    "link",
    "unlink",
    "list",
    "show",
    "claim",
    "renew",
    "release",
    "reclaim",
    "complete",
    "complete_many",
    "complete-many",
    "cancel",
    "reopen",
    "next",
    "ready",
    "claim_next",
    "claim-next",
    "log",
    "import",
    "archive",
    "unarchive",
    "graph",
    "config",
    "check",
    "actor",
    "actor_add",
    "actor-add",
    "actor_list",
    "actor-list",
    "actor_token",
    "actor-token",
    "actor_revoke",
    "actor-revoke",
    "copy",
    "diff_check",
    "diff-check",
    "fence_check",
    "fence-check",
    "pool_set",
    "pool-set",
    "pool_list",
    "pool-list",
    "rate_set",
    "rate-set",
    "rate_list",
    "rate-list",
    "hook_install",
    "hook-install",
    "approve",
    "reject",
    "retry",
    "where",
    "pending",
]

# -- Values in -----------------------------------------------------------------------------

#: A duration: seconds (int or float) or a timedelta.
Duration = Union[float, timedelta]

#: A point in time: an aware datetime, or a str (RFC 3339, or "+DUR" from now: "+90s").
When = Union[datetime, str]

#: A JSON value: what json.loads gives, and what json.dumps takes (an output, an input).
Json = Any

#: A list of strings as a JSON array: a list or a tuple.
Strs = Union[list[str], tuple[str, ...]]

class _PlanNodeRequired(TypedDict):
    key: str
    summary: str

class PlanNode(_PlanNodeRequired, total=False):
    """One node of a plan. ``parent``, ``deps`` and ``soft_deps`` name a key of the plan or
    an existing node (id or prefix of at least 8 hex characters); ``not_before`` and
    ``deadline`` are RFC 3339 or ``+DUR`` from the import, ``budget`` ``tokens=N[,cost=X]``."""

    kind: Optional[str]
    parent: Optional[str]
    deps: Strs
    soft_deps: Strs
    role: Optional[str]
    priority: Optional[int]
    estimate: Optional[int]
    labels: Optional[Strs]
    resources: Optional[Strs]
    ref: Optional[str]
    max_attempts: Optional[int]
    not_before: Optional[str]
    deadline: Optional[str]
    budget: Optional[str]

class Plan(TypedDict):
    """A plan for ``Store.import_plan``: ``{"nodes": [...]}``, nothing else."""

    nodes: Union[list[PlanNode], tuple[PlanNode, ...]]

class _CompletionRequired(TypedDict):
    node: str
    gen: int

class CompletionDict(_CompletionRequired, total=False):
    """One completion of ``Store.complete_many`` as a dict: ``complete``'s arguments."""

    status: Optional[Finished]
    actor: Optional[str]
    note: Optional[str]
    output: Json

#: One completion of ``Store.complete_many``: a dict of ``complete``'s arguments, or a tuple
#: (node, gen), (node, gen, status) or (node, gen, status, output).
Completion = Union[
    CompletionDict,
    tuple[str, int],
    tuple[str, int, Finished],
    tuple[str, int, Finished, Json],
]

# -- Dicts out (``to_dict()``: the keys of the CLI's ``--json``) ---------------------------

class CancelRequestDict(TypedDict):
    """``CancelRequest.to_dict()``."""

    by: Optional[str]
    reason: Optional[str]
    at: int

class NodeCancelRequestDict(CancelRequestDict):
    """A node's ``cancel_requested`` in ``Node.to_dict()``: with the name kept for ``by``."""

    by_name: Optional[str]

class ChildrenDict(TypedDict, total=False):
    """A container's ``children`` in ``Node.to_dict()``: zero counts are left out."""

    total: int
    done: int
    failed: int
    cancelled: int

class AmountsDict(TypedDict, total=False):
    """A ``budget``, ``spent`` or ``claim_spent`` in ``Node.to_dict()``: tokens, and cost in
    millionths (``cost_micros``, every digit kept); unset (or, for spend, zero) ones are
    left out."""

    tokens: int
    cost_micros: int

class NodeDict(TypedDict):
    """``Node.to_dict()``: every field, ``None`` for unset ones, as ``claimdag show --json``."""

    id: str
    workspace: str
    kind: str
    summary: str
    parent: Optional[str]
    deps: list[str]
    soft_deps: list[str]
    status: Status
    display: DisplayWord
    ready: bool
    why: Optional[str]
    generation: int
    holder: Optional[str]
    holder_name: Optional[str]
    attempts: int
    max_attempts: Optional[int]
    claimed_at: Optional[int]
    renewed_at: Optional[int]
    ttl_ms: Optional[int]
    role: str
    priority: int
    estimate: int
    labels: list[str]
    resources: list[str]
    ref: Optional[str]
    note: Optional[str]
    completed_by: Optional[str]
    completed_by_name: Optional[str]
    not_before: Optional[int]
    last_holder: Optional[str]
    last_holder_name: Optional[str]
    progress: Optional[str]
    progress_at: Optional[int]
    cancel_requested: Optional[NodeCancelRequestDict]
    output: Json
    children: Optional[ChildrenDict]
    deadline: Optional[int]
    overdue: bool
    overdue_at: Optional[int]
    budget: Optional[AmountsDict]
    spent: AmountsDict
    claim_spent: AmountsDict
    created_at: int
    updated_at: int
    archived: bool

class _EventDictRequired(TypedDict):
    seq: int
    i: int
    at: int
    verb: EventVerb

class EventDict(_EventDictRequired, total=False):
    """``Event.to_dict()``, as ``claimdag log --json``: absent fields are left out."""

    node: str
    actor: str
    actor_name: str
    generation: int
    detail: str
    output: Json
    by: str
    by_name: str
    door: str

class PickDict(TypedDict):
    """``Pick.to_dict()``, as ``claimdag ready --json`` gives each node."""

    id: str
    critical: int
    path: list[str]
    summary: str

class ReportDict(TypedDict):
    """``Report.to_dict()``, as ``claimdag check --json``."""

    ok: bool
    nodes: int
    archived: int
    events: int
    problems: list[str]
    notes: list[str]

class SettingsDict(TypedDict):
    """``Settings.to_dict()``, as ``claimdag config --json``."""

    default_ttl_ms: int
    max_held: int
    max_attempts: Optional[int]
    retry_delay_ms: int
    retry_delay_max_ms: int
    history_keep: str
    deadline_action: Literal["none", "cancel"]

class _GrantDictRequired(TypedDict):
    id: str
    generation: int
    progress: Optional[str]
    progress_at: Optional[int]
    inputs: dict[str, Json]

class GrantDict(_GrantDictRequired, total=False):
    """``Grant.to_dict()``, as ``claimdag claim --json``: ``resumed`` only when true."""

    resumed: Literal[True]
